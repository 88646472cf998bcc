// Dataset semantics behind InsertDataset/GetDataset/ListDatasets/UpdateDataset/
// DeleteDataset/UndeleteDataset (spec 2.1, 3.2, 4.2).
import { CatalogError, alreadyExists, invalid, notFound, notImplemented } from '../storage/errors.js';
import { newEtag, nowMsString, type Resource } from '../storage/resources.js';
import type { DatasetEntry, Storage } from '../storage/store.js';
import { legacyRole } from '../storage/dataset-access.js';
import { labelsProblem } from '../types/labels.js';
import { dropNulls, mergePatch, obj, paginate, str, type Page } from './util.js';

/** Fields the service assigns; client values for them are ignored. */
const MANAGED = ['kind', 'id', 'selfLink', 'etag', 'creationTime', 'lastModifiedTime', 'datasetReference'];

function defaultAccess(): Resource[] {
  return [
    { role: 'WRITER', specialGroup: 'projectWriters' },
    { role: 'OWNER', specialGroup: 'projectOwners' },
    { role: 'READER', specialGroup: 'projectReaders' },
  ];
}

/** roles/bigquery.dataOwner/dataEditor/dataViewer are accepted but stored and returned as OWNER/WRITER/READER. */
function legacyAccess(access: unknown[]): unknown[] {
  return access.map((e) => {
    const o = obj(e);
    return o && typeof o.role === 'string' ? { ...o, role: legacyRole(o.role) } : e;
  });
}

function rejectExternal(body: Resource): void {
  if (body.externalDatasetReference !== undefined && body.externalDatasetReference !== null) {
    throw notImplemented('externalDatasetReference is not supported by the emulator');
  }
}

/** labels-intro.md, Requirements for labels: the resource's labels as they would be kept. */
export function checkLabels(res: Resource): void {
  const problem = labelsProblem(res.labels);
  if (problem) throw invalid(problem);
}

function restOnly(body: Resource): Resource {
  const out = dropNulls(body);
  for (const k of MANAGED) delete out[k];
  return out;
}

/**
 * Another dataset whose name differs from `d` only in case, when either is case-insensitive (datasets.md, Name
 * datasets: mydataset and MyDataset coexist unless one of them has case-sensitivity turned off).
 */
export function caseClash(st: Storage, p: string, d: string, insensitive: boolean): string | undefined {
  const l = d.toLowerCase();
  return st.listDatasets(p).find((e) => e.datasetId !== d && e.datasetId.toLowerCase() === l && (insensitive || e.resource.isCaseInsensitive === true))?.datasetId;
}

export async function insertDataset(st: Storage, urlProject: string, urlDataset: string, body: Resource): Promise<Resource> {
  rejectExternal(body);
  const ref = obj(body.datasetReference) ?? {};
  const p = str(ref.projectId) ?? urlProject;
  const d = str(ref.datasetId) ?? urlDataset;
  if (!d) throw invalid('Required parameter is missing: datasetReference.datasetId');
  if (!p) throw invalid('Required parameter is missing: projectId');
  const clash = caseClash(st, p, d, body.isCaseInsensitive === true);
  if (clash) throw alreadyExists(`Dataset ${p}:${clash}`);
  const now = nowMsString();
  const res: Resource = {
    ...restOnly(body),
    id: `${p}:${d}`,
    datasetReference: { datasetId: d, projectId: p },
    location: str(body.location) ?? st.defaultLocation,
    type: str(body.type) ?? 'DEFAULT',
    creationTime: now,
    lastModifiedTime: now,
    etag: newEtag(),
  };
  res.access = Array.isArray(res.access) ? legacyAccess(res.access) : defaultAccess();
  checkLabels(res);
  await st.createDataset(p, d, res);
  return res;
}

export function getDataset(st: Storage, p: string, d: string): Resource {
  return st.requireDataset(p, d).resource;
}

/**
 * A datasets.list filter (filtering-labels.md, Limitations on filter specifications): `labels.key[:value]` terms
 * joined by spaces or AND (no other operator), each key once, at most ten.
 */
function labelFilter(filter: string): { key: string; value?: string }[] {
  const terms = filter.split(/\s+(?:AND\s+)?/i).filter(Boolean).map((term) => {
    const m = /^labels\.([^:]+)(?::(.*))?$/.exec(term);
    if (!m) throw invalid(`Invalid filter: ${filter}`);
    return { key: m[1]!, ...(m[2] !== undefined ? { value: m[2] } : {}) };
  });
  if (terms.length > 10) throw invalid(`Invalid filter: ${filter}; a filter holds at most 10 expressions`);
  const keys = terms.map((t) => t.key);
  const twice = keys.find((k, i) => keys.indexOf(k) !== i);
  if (twice !== undefined) throw invalid(`Invalid filter: ${filter}; the key ${twice} is used more than once`);
  return terms;
}

function matchesFilter(e: DatasetEntry, terms: readonly { key: string; value?: string }[]): boolean {
  const labels = (obj(e.resource.labels) ?? {}) as Record<string, unknown>;
  return terms.every((t) => labels[t.key] !== undefined && (t.value === undefined || String(labels[t.key]) === t.value));
}

export function listDatasets(st: Storage, p: string, pageToken: string, maxResults: number, filter: string, all: boolean): Page<Resource> {
  const terms = filter ? labelFilter(filter) : [];
  const entries = st.listDatasets(p).filter((e) => (all || !e.datasetId.startsWith('_')) && matchesFilter(e, terms));
  const page = paginate(entries, pageToken, maxResults);
  return {
    ...page,
    items: page.items.map((e) => {
      const r = e.resource;
      const item: Resource = { id: r.id, datasetReference: r.datasetReference, location: r.location };
      if (r.labels) item.labels = r.labels;
      if (r.friendlyName) item.friendlyName = r.friendlyName;
      if (r.type) item.type = r.type;
      return item;
    }),
  };
}

export async function updateDataset(st: Storage, p: string, d: string, body: Resource, patch: boolean): Promise<Resource> {
  rejectExternal(body);
  const e = st.requireDataset(p, d);
  const old = e.resource;
  const keep = {
    id: old.id,
    datasetReference: old.datasetReference,
    location: old.location,
    creationTime: old.creationTime,
    type: old.type,
  };
  let next: Resource;
  if (patch) next = mergePatch(old, Object.fromEntries(Object.entries(body).filter(([k]) => !MANAGED.includes(k))));
  else {
    next = restOnly(body);
    if (!Array.isArray(next.access)) next.access = old.access;
  }
  const res: Resource = { ...next, ...keep, lastModifiedTime: nextModified(old.lastModifiedTime), etag: newEtag() };
  if (Array.isArray(res.access)) res.access = legacyAccess(res.access);
  checkLabels(res);
  await st.setDatasetResource(e, res);
  return res;
}

/** Strictly later than the previous value, even within one millisecond. */
export function nextModified(prev: unknown): string {
  const now = Date.now();
  const p = typeof prev === 'string' ? parseInt(prev, 10) : 0;
  return String(now > p ? now : p + 1);
}

export async function deleteDataset(st: Storage, p: string, d: string, deleteContents: boolean): Promise<void> {
  const e = st.requireDataset(p, d);
  if (!deleteContents && !st.isDatasetEmpty(e)) {
    throw new CatalogError(400, 'failedPrecondition', 'resourceInUse', `Dataset ${p}:${d} is still in use`);
  }
  await st.deleteDataset(p, d);
}

export async function undeleteDataset(st: Storage, p: string, d: string): Promise<Resource> {
  const e = await st.undeleteDataset(p, d);
  if (!e) throw notFound(`Dataset ${p}:${d}`);
  await st.setDatasetResource(e, { ...e.resource, lastModifiedTime: nextModified(e.resource.lastModifiedTime), etag: newEtag() });
  return e.resource;
}
