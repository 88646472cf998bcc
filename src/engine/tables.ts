// Table semantics behind InsertTable/GetTable/ListTables/UpdateTable/DeleteTable
// (spec 2.2, 3.3, 4.3).
import type { TableKind } from '../storage/api.js';
import { invalid, notImplemented } from '../storage/errors.js';
import {
  checkSchemaEvolution,
  evolvedFieldOrder,
  newEtag,
  normalizeFields,
  nowMsString,
  schemaFieldsOf,
  ZERO_BYTE_FIELDS,
  type Resource,
} from '../storage/resources.js';
import type { Storage, TableEntry } from '../storage/store.js';
import type { TableData } from '../storage/table-data.js';
import type { RestField } from '../types/schema.js';
import { checkLabels, nextModified } from './datasets.js';
import { streamingBuffer } from './streaming-buffer.js';
import { dropNulls, mergePatch, obj, paginate, str, type Page } from './util.js';

const MANAGED = [
  'kind',
  'id',
  'selfLink',
  'etag',
  'creationTime',
  'lastModifiedTime',
  'tableReference',
  'numRows',
  'location',
  'streamingBuffer',
  ...ZERO_BYTE_FIELDS,
];

function rejectUnsupported(body: Resource): void {
  if (body.biglakeConfiguration != null) throw notImplemented('biglakeConfiguration is not supported by the emulator');
  if (body.objectTableOptions != null) throw notImplemented('objectTableOptions is not supported by the emulator');
  const ext = obj(body.externalDataConfiguration);
  if (ext && String(ext.sourceFormat ?? '').toUpperCase() === 'OBJECT_TABLE') throw notImplemented('Object tables are not supported by the emulator');
}

export function kindOf(body: Resource, fallback: TableKind = 'TABLE'): TableKind {
  if (obj(body.view) && str((body.view as Resource).query)) return 'VIEW';
  if (obj(body.materializedView) && str((body.materializedView as Resource).query)) return 'MATERIALIZED_VIEW';
  const t = str(body.type)?.toUpperCase();
  if (t === 'SNAPSHOT' || obj(body.snapshotDefinition)) return 'SNAPSHOT';
  if (obj(body.externalDataConfiguration)) return 'EXTERNAL';
  if (t === 'VIEW' || t === 'MATERIALIZED_VIEW' || t === 'EXTERNAL' || t === 'TABLE') return t;
  return fallback;
}

/** Normalized schema of a body: `schema.fields`, else the external configuration's schema. */
function bodySchema(body: Resource): RestField[] | undefined {
  const s = obj(body.schema);
  if (s && Array.isArray(s.fields)) return normalizeFields(s.fields as RestField[]);
  const ext = obj(body.externalDataConfiguration);
  const es = ext && obj(ext.schema);
  if (es && Array.isArray(es.fields)) return normalizeFields(es.fields as RestField[]);
  return undefined;
}

function shapeBody(body: Resource, kind: TableKind): Resource {
  const out = dropNulls(body);
  for (const k of MANAGED) delete out[k];
  if (kind === 'VIEW') {
    const v = { ...(out.view as Resource) };
    if (typeof v.useLegacySql !== 'boolean') v.useLegacySql = false;
    out.view = v;
  }
  if (kind === 'MATERIALIZED_VIEW') {
    // The refresh settings the real service reports for a new MV (auto refresh every 30 minutes).
    const mv = { ...(out.materializedView as Resource) };
    if (typeof mv.enableRefresh !== 'boolean') mv.enableRefresh = true;
    if (mv.refreshIntervalMs === undefined) mv.refreshIntervalMs = '1800000';
    out.materializedView = mv;
  }
  out.type = kind;
  return out;
}

/**
 * requirePartitionFilter and its deprecated twin timePartitioning.requirePartitionFilter (tables.md, Table and
 * TimePartitioning): the request's table-level value, else its timePartitioning one, sets the table's; the twin
 * then shows the same value, so either spelling makes queries need a partition filter.
 */
function twinPartitionFilter(res: Resource, body: Resource): void {
  const given = typeof body.requirePartitionFilter === 'boolean' ? body.requirePartitionFilter : obj(body.timePartitioning)?.requirePartitionFilter;
  if (typeof given === 'boolean') res.requirePartitionFilter = given;
  const tp = obj(res.timePartitioning);
  if (tp && typeof res.requirePartitionFilter === 'boolean') res.timePartitioning = { ...tp, requirePartitionFilter: res.requirePartitionFilter };
}

export async function insertTable(
  st: Storage,
  urlProject: string,
  urlDataset: string,
  urlTable: string,
  body: Resource,
  /** CREATE OR REPLACE: an existing table of the name is replaced in the same commit. */
  replace = false,
  /** Writes the new table's rows before it appears (CREATE TABLE ... AS SELECT: it appears with them). */
  fill?: (td: TableData) => Promise<void>,
  /** Row access policies it is made with, in the same commit (a copy job's destination). */
  policies?: Record<string, Resource>,
): Promise<Resource> {
  rejectUnsupported(body);
  const ref = obj(body.tableReference) ?? {};
  const p = str(ref.projectId) ?? urlProject;
  const d = str(ref.datasetId) ?? urlDataset;
  const t = str(ref.tableId) ?? urlTable;
  if (!t) throw invalid('Required parameter is missing: tableReference.tableId');
  checkLabels(body);
  const ds = st.requireDataset(p, d);
  const kind = kindOf(body);
  const fields = bodySchema(body);
  const now = nowMsString();
  const res: Resource = {
    ...shapeBody(body, kind),
    id: `${p}:${d}.${t}`,
    tableReference: { projectId: p, datasetId: d, tableId: t },
    creationTime: now,
    lastModifiedTime: now,
    etag: newEtag(),
    location: ds.resource.location,
  };
  if (fields) res.schema = { fields };
  else delete res.schema;
  twinPartitionFilter(res, body);
  // Queries always see an MV's base tables as they are now: it counts as refreshed at creation.
  if (kind === 'MATERIALIZED_VIEW') (res.materializedView as Resource).lastRefreshTime = now;
  // Dataset defaults (REST datasets resource): a new time-partitioned table takes defaultPartitionExpirationMs as its
  // timePartitioning.expirationMs unless it states one, and then no default table expiration; other new tables take
  // defaultTableExpirationMs. A snapshot, which keeps no partition expiration of its base, takes its dataset's
  // (table-snapshots-intro.md, Limitations; table-snapshots-create.md: the default table expiration otherwise).
  const partExp = Number(ds.resource.defaultPartitionExpirationMs ?? 0);
  const tp = obj(res.timePartitioning);
  const byPartition = tp !== undefined && partExp > 0 && kind !== 'VIEW' && kind !== 'MATERIALIZED_VIEW';
  if (byPartition && tp.expirationMs === undefined) res.timePartitioning = { ...tp, expirationMs: String(partExp) };
  const defExp = Number(ds.resource.defaultTableExpirationMs ?? 0);
  if (res.expirationTime === undefined && defExp > 0 && !byPartition) res.expirationTime = String(Number(now) + defExp);
  const made = st.prepareTable(p, d, t, kind, res);
  const prepared = policies ? { ...made, entry: { ...made.entry, policies } } : made;
  try {
    if (fill && prepared.data) await fill(prepared.data);
    await st.publishTable(p, d, t, prepared, replace);
  } catch (e) {
    await st.discardPrepared(p, d, prepared);
    throw e;
  }
  return presentTable(st, p, d, t, st.requireTable(p, d, t));
}

/**
 * Fields kept with a table's stored resource that the REST resource never shows: GRANT bindings, indexes,
 * `options`, the DDL OPTIONS with no REST field of their own (read by INFORMATION_SCHEMA.TABLE_OPTIONS and TABLES),
 * `columnHistory`, the columns ALTER TABLE dropped or renamed (which keep the table out of wildcard queries), and
 * `fileRows`, the files an external table's rows came from (its _FILE_NAME pseudo-column: analyzer/names.ts).
 */
export const HIDDEN_FIELDS = ['iamPolicy', 'searchIndexes', 'vectorIndexes', 'options', 'columnHistory', 'fileRows'] as const;

/** `r` less the hidden fields. */
export function withoutHidden(r: Resource): Resource {
  const out = { ...r };
  for (const k of HIDDEN_FIELDS) delete out[k];
  return out;
}

/** The stored resource plus the computed fields: numRows, byte counters, data modification time. */
export function presentTable(st: Storage, p: string, d: string, t: string, e: TableEntry): Resource {
  // GRANT/REVOKE bindings (read by INFORMATION_SCHEMA.OBJECT_PRIVILEGES) are IAM, and search indexes
  // (INFORMATION_SCHEMA.SEARCH_INDEXES) objects of their own: neither is part of the table resource.
  const r = withoutHidden(e.resource);
  if (e.kind !== 'VIEW') {
    const td = st.tableData(p, d, t);
    // numRows leaves out the streaming buffer, reported apart (streaming-buffer.ts); a table not loaded has none.
    const buffer = td.isLoaded ? streamingBuffer.stats(td, td.state()) : undefined;
    r.numRows = String(td.rowCount - Number(buffer?.estimatedRows ?? 0));
    if (buffer) r.streamingBuffer = buffer;
    for (const k of ZERO_BYTE_FIELDS) r[k] = '0';
    const lm = parseInt(String(r.lastModifiedTime ?? '0'), 10);
    if (td.modifiedMs > lm) r.lastModifiedTime = String(td.modifiedMs);
  }
  return r;
}

export function getTable(st: Storage, p: string, d: string, t: string): Resource {
  if (!st.getTable(p, d, t) && t.includes('@')) {
    // `table@epoch` of a deleted table: its snapshot (copy jobs restore from it).
    const base = t.slice(0, t.lastIndexOf('@'));
    if (st.getTable(p, d, base)) return presentTable(st, p, d, base, st.requireTable(p, d, base));
    const x = st.resolveDecorated(p, d, t);
    if (x) {
      const td = st.deletedTableData(x);
      return { ...withoutHidden(x.entry.resource), numRows: String(td.rowCount), ...Object.fromEntries(ZERO_BYTE_FIELDS.map((k) => [k, '0'])) };
    }
  }
  return presentTable(st, p, d, t, st.requireTable(p, d, t));
}

export function listTables(st: Storage, p: string, d: string, pageToken: string, maxResults: number): Page<Resource> {
  const ds = st.requireDataset(p, d);
  const ids = st.liveTableIds(ds).sort();
  const page = paginate(ids, pageToken, maxResults);
  return {
    ...page,
    items: page.items.map((id) => {
      const r = ds.tables[id]!.resource;
      const item: Resource = { id: r.id, tableReference: r.tableReference, type: r.type, creationTime: r.creationTime };
      for (const k of ['friendlyName', 'labels', 'expirationTime', 'timePartitioning', 'rangePartitioning', 'clustering']) if (r[k] !== undefined) item[k] = r[k];
      // Spec §4.3.3: views list with their query, materialized views with theirs.
      if (r.view) item.view = { query: (r.view as Resource).query, useLegacySql: (r.view as Resource).useLegacySql ?? false };
      if (r.materializedView) item.materializedView = { query: (r.materializedView as Resource).query };
      return item;
    }),
  };
}

export async function updateTable(st: Storage, p: string, d: string, t: string, body: Resource, patch: boolean): Promise<Resource> {
  rejectUnsupported(body);
  const e = st.requireTable(p, d, t);
  const old = e.resource;
  const clientFields = Object.fromEntries(Object.entries(body).filter(([k]) => !MANAGED.includes(k)));
  const kind = kindOf(patch ? { ...old, ...clientFields } : body, e.kind);
  let next: Resource = patch ? mergePatch(old, clientFields) : shapeBody(body, kind);
  // GRANT/setIamPolicy bindings and search indexes are not resource fields: tables.update keeps them.
  if (!patch) for (const k of HIDDEN_FIELDS) if (old[k] !== undefined) next[k] = old[k];
  next.type = kind;
  if (kind === 'VIEW' && obj(next.view) && typeof (next.view as Resource).useLegacySql !== 'boolean') next.view = { ...(next.view as Resource), useLegacySql: false };
  const oldFields = schemaFieldsOf(old);
  let columnsChanged = false;
  const newFields = obj(body.schema) || obj(body.externalDataConfiguration) ? bodySchema(body) : undefined;
  if (newFields && e.kind !== 'VIEW') {
    checkSchemaEvolution(`${p}:${d}.${t}`, oldFields, newFields);
    const fields = evolvedFieldOrder(oldFields, newFields);
    columnsChanged = JSON.stringify(fields) !== JSON.stringify(oldFields);
    next.schema = { fields };
  } else if (newFields) next.schema = { fields: newFields };
  else if (oldFields.length) next.schema = old.schema;
  twinPartitionFilter(next, body);
  next = {
    ...next,
    id: old.id,
    tableReference: old.tableReference,
    creationTime: old.creationTime,
    location: old.location,
    lastModifiedTime: nextModified(old.lastModifiedTime),
    etag: newEtag(),
  };
  checkLabels(next);
  await st.setTableEntry(p, d, t, { ...e, kind, resource: next }, columnsChanged);
  // An expiration already passed deleted the table at once: the answer is the resource as it was set.
  const after = st.getTable(p, d, t);
  return after ? presentTable(st, p, d, t, after) : next;
}

export async function deleteTable(st: Storage, p: string, d: string, t: string): Promise<void> {
  await st.deleteTable(p, d, t);
}
