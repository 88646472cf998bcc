// In-process SQL test harness: a real Storage + EngineCatalog in a temp dir,
// runQuery from src/planner/run.ts, results encoded as the REST API does.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { SessionCatalog } from '../../src/engine/session-catalog.js';
import { decodeParameters } from '../../src/engine/parameters.js';
import { QueryError, type QueryParameters, type QueryResult } from '../../src/planner/api.js';
import { runQuery } from '../../src/planner/run.js';
import { Storage } from '../../src/storage/store.js';
import { columnToRestField, restFieldToColumn, type RestField } from '../../src/types/schema.js';
import { convertJsonValue } from '../../src/types/json-values.js';
import { vectorFromValues } from '../../src/types/vector.js';
import { encodeRows } from '../../src/types/wire.js';
import { statementClockMicros } from '../../src/storage/commit-clock.js';

export interface Harness {
  catalog: EngineCatalog;
  storage: Storage;
  close(): Promise<void>;
}

export async function openHarness(): Promise<Harness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqltest-'));
  const storage = await Storage.open(dir, { noLock: true });
  const catalog = new EngineCatalog(storage);
  return {
    catalog,
    storage,
    async close() {
      await storage.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RunOpts {
  projectId: string;
  defaultDataset?: { projectId: string; datasetId: string };
  params?: QueryParameters;
  dryRun?: boolean;
}

const NO_PARAMS: QueryParameters = { named: new Map(), positional: [] };

export function run(h: Harness, sql: string, o: RunOpts): Promise<QueryResult> {
  return runQuery({
    sql,
    projectId: o.projectId,
    ...(o.defaultDataset ? { defaultDataset: o.defaultDataset } : {}),
    params: o.params ?? NO_PARAMS,
    // As the engine runs a lone query: through a catalog view of its own (statement snapshots, transactions, temporary tables).
    catalog: new SessionCatalog(h.catalog, h.storage),
    jobId: 'job_test',
    signal: new AbortController().signal,
    dryRun: o.dryRun ?? false,
    nowMicros: statementClockMicros(),
    sessionUser: 'tester@example.com',
  });
}

/** REST schema fields of a result. */
export function schemaOf(r: QueryResult): RestField[] {
  return (r.columns ?? []).map((c) => columnToRestField(c.name, c.type));
}

export function schemaText(fields: readonly RestField[]): string {
  const one = (f: RestField): string =>
    `${f.name} ${f.type}${f.timestampPrecision === '12' ? '(12)' : ''}${f.fields ? `(${f.fields.map(one).join(', ')})` : ''}${f.mode === 'REPEATED' ? ' REPEATED' : f.mode === 'REQUIRED' ? ' REQUIRED' : ''}`;
  return fields.map(one).join(', ');
}

/** The REST `rows` (f/v) of a result, as the real service encodes them (strings, INT64 micros timestamps). */
export function wireRows(r: QueryResult): unknown[] {
  const n = r.batches.reduce((k, b) => k + b.length, 0);
  return JSON.parse(encodeRows(r.batches, 0, n, { timestampFormat: 'INT64_MICROS', stringScalars: true })) as unknown[];
}

/** f/v cells -> plain nested arrays (records as arrays, repeated as arrays). */
export function simplify(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(simplify);
  const o = v as Record<string, unknown>;
  if ('f' in o) return (o.f as unknown[]).map(simplify);
  if ('v' in o) return simplify(o.v);
  return o;
}

export function rowsOf(r: QueryResult): unknown[] {
  return wireRows(r).map(simplify);
}

// ---------------------------------------------------------------- REST-style setup steps

export async function setupDataset(h: Harness, projectId: string, datasetId: string): Promise<void> {
  await h.catalog.createDataset(projectId, datasetId, { location: 'US' }, true);
}

export async function setupTable(h: Harness, projectId: string, datasetId: string, tableId: string, fields: RestField[], view?: string): Promise<void> {
  const columns = fields.map(restFieldToColumn);
  await h.catalog.createTable({ projectId, datasetId, tableId }, columns, view ? { kind: 'VIEW', viewQuery: view } : {});
}

export async function insertRows(h: Harness, projectId: string, datasetId: string, tableId: string, rows: Record<string, unknown>[]): Promise<void> {
  const id = { projectId, datasetId, tableId };
  const info = h.catalog.getTable(id);
  if (!info) throw new Error(`no table ${tableId}`);
  const columns = info.columns.map((c) => vectorFromValues(c.type, rows.map((r) => (r[c.name] === undefined ? null : convertJsonValue(c.type, r[c.name])))));
  await h.catalog.appendRows(id, [{ length: rows.length, columns }]);
}

/** Conformance-style query_parameters -> the REST JSON the engine decodes. */
export function restParams(list: unknown[] | undefined): QueryParameters {
  if (!list?.length) return NO_PARAMS;
  const rest = list.map((p0) => {
    const p = p0 as Record<string, unknown>;
    if (p.type === 'ARRAY') {
      return {
        name: p.name,
        parameterType: { type: 'ARRAY', arrayType: { type: p.array_element_type } },
        // array_values null: a NULL array, sent as the service reads one (no arrayValues).
        parameterValue: p.array_values == null ? {} : { arrayValues: (p.array_values as unknown[]).map((v) => ({ value: v })) },
      };
    }
    if (p.type === 'STRUCT') {
      const fields = p.struct_fields as { name: string; type: string }[];
      const vals = p.struct_values as Record<string, unknown>;
      return {
        name: p.name,
        parameterType: { type: 'STRUCT', structTypes: fields.map((f) => ({ name: f.name, type: { type: f.type } })) },
        parameterValue: { structValues: Object.fromEntries(fields.map((f) => [f.name, { value: vals[f.name] }])) },
      };
    }
    return { name: p.name, parameterType: { type: p.type }, parameterValue: { value: p.value } };
  });
  return decodeParameters(JSON.stringify(rest), undefined);
}

export function errorMessage(e: unknown): string {
  if (e instanceof QueryError) return e.message;
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}
