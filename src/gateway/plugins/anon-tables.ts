// tables.get of a query job's anonymous destination table. The engine keeps
// query results as `_anon<project>.anon<jobId>` (src/engine/results.ts) and
// serves their rows through ListRows, but they are no catalog tables, so
// GetTable answers 404. The real service returns their metadata: schema,
// numRows, creationTime, expirationTime 24 h later, type TABLE, location.
// Schema and row count come from the result itself (ListRows of no rows);
// times and location from the job that wrote it.
import type { Family, GatewayContext } from '../context.js';
import { kind } from '../context.js';
import { RestError } from '../errors.js';
import type { JobRecord } from '../jobs/registry.js';
import type { Json } from '../validate.js';
import { etagOf } from './common.js';

/** The engine's anonymous result datasets (ANON_DATASET_PREFIX in src/engine/results.ts). */
const ANON_PREFIX = '_anon';
/** The real service keeps anonymous result tables for 24 hours (RESULT_TTL_MS there). */
const RESULT_TTL_MS = 24 * 60 * 60 * 1000;

export function isAnonDataset(datasetId: string): boolean {
  return datasetId.startsWith(ANON_PREFIX);
}

/** The job whose result is this table: the engine names it `anon` + the job id with [^A-Za-z0-9_] as `_`. */
function writerOf(ctx: GatewayContext, p: string, d: string, t: string): JobRecord | undefined {
  if (!t.startsWith('anon')) return undefined;
  for (const e of ctx.jobs.entries(p)) {
    if ('anon' + e.jobId.replace(/[^A-Za-z0-9_]/g, '_') !== t) continue;
    const job = e.load();
    const r = job.reply?.rows_table?.table_id ? job.reply.rows_table : job.reply?.result_table;
    if (r && r.project_id === p && r.dataset_id === d && r.table_id === t) return job;
  }
  return undefined;
}

/**
 * The table resource of an anonymous result, or undefined when there is no
 * such result (expired, never written): the caller then answers as for any table.
 */
export async function anonymousTable(ctx: GatewayContext, family: Family, p: string, d: string, t: string): Promise<Json | undefined> {
  let rows;
  try {
    rows = await ctx.call('ListRows', { table: { project_id: p, dataset_id: d, table_id: t }, start_index: 0, max_results: 0, selected_fields: '', timestamp_format: 'TIMESTAMP_RFC3339', string_scalars: family === 'bigquery' });
  } catch (e) {
    if (e instanceof RestError && e.code === 404) return undefined;
    throw e;
  }
  const job = writerOf(ctx, p, d, t);
  const created = job ? (job.endMs ?? job.startMs ?? job.createdMs) : undefined;
  const out: Json = {
    kind: kind(family, 'table'),
    etag: etagOf(`${p}.${d}.${t}:${rows.etag}`),
    id: `${p}:${d}.${t}`,
    selfLink: `/${family}/v2/projects/${p}/datasets/${d}/tables/${t}`,
    tableReference: { projectId: p, datasetId: d, tableId: t },
    schema: JSON.parse(rows.schema_json || '{"fields":[]}') as Json,
    numBytes: '0',
    numLongTermBytes: '0',
    numRows: String(rows.total_rows),
    type: 'TABLE',
  };
  // Without the job (gateway restarted, job evicted) the times are unknown: left out rather than invented.
  if (created !== undefined) {
    out['creationTime'] = String(created);
    out['expirationTime'] = String(created + RESULT_TTL_MS);
    out['lastModifiedTime'] = String(created);
  }
  out['location'] = job?.location ?? 'US';
  return out;
}
