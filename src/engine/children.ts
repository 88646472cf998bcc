// Routines, models and row-access policies: JSON resources kept in the catalog
// (PutChild/GetChild/ListChildren/DeleteChild).
import { refuseLastPolicyDrop } from '../analyzer/row-access.js';
import { alreadyExists, invalid, notFound } from '../storage/errors.js';
import { checkChildId } from '../storage/names.js';
import { newEtag, nowMsString, type Resource } from '../storage/resources.js';
import type { Storage } from '../storage/store.js';
import { nextModified } from './datasets.js';
import { dropNulls, obj, paginate, str, type Page } from './util.js';

export type ChildKind = 'routines' | 'models' | 'rowAccessPolicies' | 'propertyGraphs';

interface KindInfo {
  readonly refField: string;
  readonly idField: string;
  readonly label: string;
}

const KINDS: Record<ChildKind, KindInfo> = {
  routines: { refField: 'routineReference', idField: 'routineId', label: 'Routine' },
  models: { refField: 'modelReference', idField: 'modelId', label: 'Model' },
  rowAccessPolicies: { refField: 'rowAccessPolicyReference', idField: 'policyId', label: 'Row access policy' },
  propertyGraphs: { refField: 'propertyGraphReference', idField: 'propertyGraphId', label: 'Property graph' },
};

function kindInfo(kind: string): [ChildKind, KindInfo] {
  const k = kind as ChildKind;
  const info = KINDS[k];
  if (!info) throw invalid(`Unknown child collection: ${kind}`);
  return [k, info];
}

function describe(info: KindInfo, p: string, d: string, t: string, id: string): string {
  return info.label === 'Row access policy' ? `Row access policy ${id} on table ${p}:${d}.${t}` : `${info.label} ${p}:${d}.${id}`;
}

/** The map holding a collection (dataset-level, or the table's for policies). */
export function collection(st: Storage, kind: string, p: string, d: string, t: string): Readonly<Record<string, Resource>> {
  const [k] = kindInfo(kind);
  if (k === 'rowAccessPolicies') return st.requireTable(p, d, t).policies;
  const ds = st.requireDataset(p, d);
  return k === 'routines' ? ds.routines : k === 'models' ? ds.models : (ds.propertyGraphs ?? {});
}

export async function putChild(st: Storage, kind: string, p: string, d: string, t: string, childId: string, body: Resource, createOnly: boolean): Promise<Resource> {
  const [k, info] = kindInfo(kind);
  const ref = obj(body[info.refField]) ?? {};
  const id = childId || str(ref[info.idField]);
  if (!id) throw invalid(`Required parameter is missing: ${info.refField}.${info.idField}`);
  checkChildId(info.label, id);
  const coll = collection(st, k, p, d, t);
  const old = coll[id];
  if (old && createOnly) throw alreadyExists(describe(info, p, d, t, id));
  const now = nowMsString();
  const reference: Resource = { projectId: p, datasetId: d };
  if (k === 'rowAccessPolicies') reference.tableId = t;
  reference[info.idField] = id;
  const res: Resource = {
    ...dropNulls(body),
    [info.refField]: reference,
    creationTime: old ? old.creationTime : now,
    lastModifiedTime: old ? nextModified(old.lastModifiedTime) : now,
    etag: newEtag(),
  };
  delete res.kind;
  await setIn(st, k, p, d, t, id, res);
  return res;
}

export function getChild(st: Storage, kind: string, p: string, d: string, t: string, id: string): Resource {
  const [k, info] = kindInfo(kind);
  const r = collection(st, k, p, d, t)[id];
  if (!r) throw notFound(describe(info, p, d, t, id));
  return r;
}

export function listChildren(st: Storage, kind: string, p: string, d: string, t: string, pageToken: string, maxResults: number, routineType?: string): Page<Resource> {
  const coll = collection(st, kind, p, d, t);
  // routines.list filter routineType:{RoutineType}: applied before the pages are cut.
  const ids = Object.keys(coll).sort().filter((id) => routineType === undefined || coll[id]!.routineType === routineType);
  const page = paginate(ids, pageToken, maxResults, 1000);
  return { ...page, items: page.items.map((id) => coll[id]!) };
}

export async function deleteChild(st: Storage, kind: string, p: string, d: string, t: string, id: string): Promise<boolean> {
  const [k, info] = kindInfo(kind);
  const coll = collection(st, k, p, d, t);
  if (!coll[id]) throw notFound(describe(info, p, d, t, id));
  await setIn(st, k, p, d, t, id, null);
  return true;
}

/**
 * rowAccessPolicies.delete / batchDelete: every named policy must exist; without `force` the table's last policy
 * stays (the one rule DROP ROW ACCESS POLICY goes by too: analyzer/row-access.ts).
 */
export async function deletePolicies(st: Storage, p: string, d: string, t: string, ids: readonly string[], force: boolean): Promise<void> {
  const info = KINDS.rowAccessPolicies;
  const coll = collection(st, 'rowAccessPolicies', p, d, t);
  for (const id of ids) if (!coll[id]) throw notFound(describe(info, p, d, t, id));
  if (!force) refuseLastPolicyDrop(Object.values(coll), ids, { projectId: p, datasetId: d, tableId: t }, 'rest');
  for (const id of new Set(ids)) await setIn(st, 'rowAccessPolicies', p, d, t, id, null);
}

function setIn(st: Storage, k: ChildKind, p: string, d: string, t: string, id: string, res: Resource | null): Promise<void> {
  return k === 'rowAccessPolicies' ? st.setPolicy(p, d, t, id, res) : st.setChild(p, d, k, id, res);
}
