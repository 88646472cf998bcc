// Copy jobs with partition decorators (`table$20240102`, `table$1` of an
// integer-range table, `$__NULL__`, `$__UNPARTITIONED__`): dbt-bigquery's
// copy_partitions copies each partition of a temp table onto the same
// partition of the target with WRITE_TRUNCATE. A decorated source reads only
// that partition; a decorated destination is written only in that partition
// (WRITE_TRUNCATE replaces it, WRITE_APPEND adds, WRITE_EMPTY needs it empty),
// and every copied row must belong to it. Done with DML through the engine,
// the partition given as a predicate on the table's partitioning column.
import type { GatewayContext } from '../context.js';
import type { CopyPoliciesRequest, QueryRequest, TableRef } from '../engine-client.js';
import { invalid, RestError } from '../errors.js';
import { checkDatasetId, checkProjectId, checkTableId, isObj, str, type Json } from '../validate.js';
import { rowsText } from '../rows-body.js';

interface Decorated {
  readonly ref: TableRef;
  /** The partition id after `$`, if any. */
  readonly partition?: string;
}

/** Whether a copy configuration names a partition anywhere (then copyPartitions runs it). */
export function hasPartitionDecorator(cfg: Json): boolean {
  const refs = [cfg['destinationTable'], cfg['sourceTable'], ...(Array.isArray(cfg['sourceTables']) ? (cfg['sourceTables'] as unknown[]) : [])];
  return refs.some((r) => isObj(r) && (str(r['tableId']) ?? '').includes('$'));
}

function decorated(v: unknown, projectId: string, what: string): Decorated {
  if (!isObj(v)) throw invalid(`Required parameter is missing: ${what}`);
  const d = str(v['datasetId']);
  const t = str(v['tableId']);
  if (!d || !t) throw invalid(`${what} must name a dataset and a table`);
  const at = t.indexOf('$');
  const table = at >= 0 ? t.slice(0, at) : t;
  checkTableId(table);
  const ref = { project_id: checkProjectId(str(v['projectId']) || projectId), dataset_id: checkDatasetId(d), table_id: table };
  return at >= 0 ? { ref, partition: t.slice(at + 1) } : { ref };
}

const q = (r: TableRef): string => `\`${r.project_id}.${r.dataset_id}.${r.table_id}\``;
const ident = (name: string): string => `\`${name.replace(/`/g, '\\`')}\``;
const text = (r: TableRef): string => `${r.project_id}:${r.dataset_id}.${r.table_id}`;

async function tableOf(ctx: GatewayContext, r: TableRef): Promise<Json> {
  const reply = await ctx.call('GetTable', { project_id: r.project_id, dataset_id: r.dataset_id, table_id: r.table_id });
  return JSON.parse(reply.resource_json) as Json;
}

/** The predicate selecting partition `id` of a table, from its timePartitioning / rangePartitioning. */
export function partitionPredicate(table: Json, id: string, name: string): string {
  const badId = (): RestError => invalid(`Invalid partition decorator $${id} for table ${name}`);
  const tp = isObj(table['timePartitioning']) ? table['timePartitioning'] : undefined;
  const rp = isObj(table['rangePartitioning']) ? table['rangePartitioning'] : undefined;
  const field = str(tp?.['field']) ?? str(rp?.['field']);
  if (!tp && !rp) throw invalid(`Cannot read partition information from a table that is not partitioned: ${name}`);
  // Ingestion-time partitioning: the partition is the rows' _PARTITIONTIME (NULL while streamed rows are buffered).
  const col = field ? ident(field) : '_PARTITIONTIME';
  if (id === '__NULL__' || (!field && id === '__UNPARTITIONED__')) return `${col} IS NULL`;
  if (rp) {
    const range = isObj(rp['range']) ? rp['range'] : {};
    const start = BigInt(String(range['start'] ?? '0'));
    const end = BigInt(String(range['end'] ?? '0'));
    const interval = BigInt(String(range['interval'] ?? '1'));
    if (id === '__UNPARTITIONED__') return `(${col} < ${start} OR ${col} >= ${end})`;
    if (!/^-?\d+$/.test(id)) throw badId();
    const lo = BigInt(id);
    if (lo < start || lo >= end || (lo - start) % interval !== 0n) throw badId();
    const hi = lo + interval < end ? lo + interval : end;
    return `(${col} >= ${lo} AND ${col} < ${hi})`;
  }
  if (id === '__UNPARTITIONED__') return 'FALSE';
  const unit = (str(tp!['type']) ?? 'DAY').toUpperCase();
  const digits = { HOUR: 10, DAY: 8, MONTH: 6, YEAR: 4 }[unit];
  if (!digits || !new RegExp(`^\\d{${digits}}$`).test(id)) throw badId();
  const y = id.slice(0, 4);
  const m = id.length >= 6 ? id.slice(4, 6) : '01';
  const d = id.length >= 8 ? id.slice(6, 8) : '01';
  const h = id.length >= 10 ? id.slice(8, 10) : '00';
  if (!field) return `${col} = TIMESTAMP '${y}-${m}-${d} ${h}:00:00'`;
  const fields = Array.isArray((table['schema'] as Json | undefined)?.['fields']) ? ((table['schema'] as Json)['fields'] as Json[]) : [];
  const type = String(fields.find((f) => String(f['name']).toLowerCase() === field.toLowerCase())?.['type'] ?? 'DATE').toUpperCase();
  if (type === 'DATE') return unit === 'DAY' ? `${col} = DATE '${y}-${m}-${d}'` : `DATE_TRUNC(${col}, ${unit}) = DATE '${y}-${m}-${d}'`;
  const fn = type === 'DATETIME' ? 'DATETIME' : 'TIMESTAMP';
  return `${fn}_TRUNC(${col}, ${unit}) = ${fn} '${y}-${m}-${d} ${h}:00:00'`;
}

/** Whether a table is partitioned by ingestion time (timePartitioning without a field). */
function byIngestionTime(table: Json): boolean {
  const tp = table['timePartitioning'];
  return isObj(tp) && !str(tp['field']);
}

function request(projectId: string, query: string, maxResults: number, copyPolicies?: CopyPoliciesRequest): QueryRequest {
  return {
    project_id: projectId, job_id: '', query, dry_run: false, write_disposition: '', create_disposition: '', table_definitions_json: '',
    jobs_snapshot_json: '', location: '', session_id: '', max_results: maxResults, timestamp_format: 'TIMESTAMP_RFC3339', string_scalars: false,
    ...(copyPolicies ? { copy_policies: copyPolicies } : {}),
  };
}

async function run(ctx: GatewayContext, projectId: string, query: string): Promise<number> {
  const reply = await ctx.call('ExecuteQuery', request(projectId, query, 0));
  return Number(reply.num_dml_affected_rows || 0);
}

/** tables.delete of a partition decorator (`t$20240101`, `bq rm 't$20240101'`): that partition's rows are deleted, the table stays. */
export async function deletePartition(ctx: GatewayContext, ref: TableRef, partition: string): Promise<void> {
  const pred = partitionPredicate(await tableOf(ctx, ref), partition, text(ref));
  await run(ctx, ref.project_id, `DELETE FROM ${q(ref)} WHERE ${pred}`);
}

/** Runs a copy job whose source or destination has a partition decorator; returns the rows copied. */
export async function copyPartitions(ctx: GatewayContext, projectId: string, cfg: Json): Promise<number> {
  const sources = Array.isArray(cfg['sourceTables']) && cfg['sourceTables'].length
    ? (cfg['sourceTables'] as unknown[]).map((s) => decorated(s, projectId, 'sourceTables'))
    : [decorated(cfg['sourceTable'], projectId, 'sourceTable')];
  const dest = decorated(cfg['destinationTable'], projectId, 'destinationTable');
  const op = (str(cfg['operationType']) ?? 'COPY').toUpperCase();
  if (op !== 'COPY') throw invalid(`Partition decorators cannot be used with operationType ${op}`);
  let destTable: Json;
  try {
    destTable = await tableOf(ctx, dest.ref);
  } catch (e) {
    // Creating a table through a partition decorator is not possible: it has no partitioning yet.
    if (e instanceof RestError && e.code === 404 && dest.partition !== undefined) throw new RestError(404, 'notFound', `Not found: Table ${text(dest.ref)}`);
    throw e;
  }
  const destFields = ((destTable['schema'] as Json | undefined)?.['fields'] as Json[] | undefined) ?? [];
  const cols = destFields.map((f) => ident(String(f['name']))).join(', ');
  const destPred = dest.partition !== undefined ? partitionPredicate(destTable, dest.partition, text(dest.ref)) : undefined;
  // Into an ingestion-time partitioned table the rows' partition time is written too: the decorator's
  // partition (its predicate is `_PARTITIONTIME = <start>`), else the source's own (an ingestion-time
  // partitioned source), else that of the copy (what INSERT gives rows that name none).
  const destIngestion = byIngestionTime(destTable);
  const destTime = destIngestion && destPred?.startsWith('_PARTITIONTIME = ') ? destPred.slice('_PARTITIONTIME = '.length) : undefined;
  const write = (str(cfg['writeDisposition']) ?? 'WRITE_EMPTY').toUpperCase();
  const where = destPred ? `WHERE ${destPred}` : 'WHERE TRUE';
  // using-row-level-security-with-features.md, Copy jobs: as a whole-table copy, every source needs the TRUE filter
  // (not a read its policies filter) and the destination takes their policies; checked before anything is written.
  const policies = { sources: sources.map((s) => s.ref), destination: dest.ref, write_disposition: write };
  await ctx.call('CopyRowAccessPolicies', { ...policies, check_only: true });
  // The checks run in the script's transaction, on the snapshot it writes over (the destination read unfiltered).
  const name = dest.partition !== undefined ? `${text(dest.ref)}$${dest.partition}` : text(dest.ref);
  const checks = write === 'WRITE_EMPTY' ? [`ASSERT NOT EXISTS (SELECT 1 FROM ${q(dest.ref)} ${where}) AS 'Already Exists: Table ${name}'`] : [];
  const selects: string[] = [];
  for (const src of sources) {
    const srcTable = await tableOf(ctx, src.ref);
    const srcPred = src.partition !== undefined ? partitionPredicate(srcTable, src.partition, text(src.ref)) : 'TRUE';
    if (destPred && !destIngestion) {
      checks.push(`ASSERT NOT EXISTS (SELECT 1 FROM ${q(src.ref)} WHERE (${srcPred}) AND NOT COALESCE(${destPred}, FALSE)) AS 'Some rows belong to different partitions rather than destination partition ${dest.partition}'`);
    }
    const unit = (str((destTable['timePartitioning'] as Json | undefined)?.['type']) ?? 'DAY').toUpperCase();
    const now = `TIMESTAMP_TRUNC(CURRENT_TIMESTAMP(), ${['HOUR', 'MONTH', 'YEAR'].includes(unit) ? unit : 'DAY'})`;
    const time = destTime ?? (byIngestionTime(srcTable) ? '_PARTITIONTIME' : now);
    selects.push(`SELECT ${destIngestion ? `${time}, ` : ''}${cols} FROM ${q(src.ref)} WHERE ${srcPred}`);
  }
  // One script, one transaction: the partition is replaced and refilled together, and its COMMIT commits the
  // destination's policies in the same record (copy_policies), so no reader sees the new rows under the old
  // policies or the other way round. The script's result is the count of rows the INSERT copied.
  const script = [
    'DECLARE copied INT64',
    'BEGIN TRANSACTION',
    ...checks,
    ...(write === 'WRITE_TRUNCATE' ? [`DELETE FROM ${q(dest.ref)} ${where}`] : []),
    `INSERT INTO ${q(dest.ref)} (${destIngestion ? '_PARTITIONTIME, ' : ''}${cols}) ${selects.join(' UNION ALL ')}`,
    'SET copied = @@row_count',
    'COMMIT TRANSACTION',
    'SELECT copied',
  ];
  // WRITE_EMPTY's check failing is the service's duplicate error.
  const copyError = (e: RestError): RestError => (/^Already Exists/.test(e.message) ? new RestError(409, 'duplicate', `Already Exists: Table ${name}`) : e);
  const reply = await ctx.call('ExecuteQuery', request(projectId, `${script.join(';\n')};`, 1, { ...policies, check_only: false })).catch((e: unknown) => {
    throw e instanceof RestError ? copyError(e) : e;
  });
  // A script that failed after running statements comes back as a reply carrying its error: the copy fails with it.
  const failed = (reply as typeof reply & { error_json?: string }).error_json;
  if (failed) {
    const e = JSON.parse(failed) as { code?: number; reason?: string; message?: string; status?: string };
    throw copyError(new RestError(e.code ?? 400, e.reason ?? 'invalid', e.message ?? 'The copy failed', e.status));
  }
  const rows = JSON.parse(rowsText(reply)) as { f: { v: string }[] }[];
  return Number(rows[0]?.f[0]?.v ?? 0);
}
