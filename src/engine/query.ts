// ExecuteQuery: parameters -> runQuery (the SQL pipeline) -> result table
// (anonymous, in memory, or the requested destination) + first page + stats.
import { decoratorPartition, ingestionUnit, withPartitionTime } from '../storage/ingestion.js';
import type { QueryContext, QueryResult, ResultColumn, RunQuery, SessionState } from '../planner/api.js';
import { sourcePosition as position, type ScriptChild, type ScriptChildren, type ScriptFailure } from '../planner/run.js';
import { childJobId, QueryError } from '../planner/api.js';
import { alreadyExists, CatalogError, invalid, notFound } from '../storage/errors.js';
import { nullVector } from '../storage/vectors.js';
import { statementClockMicros } from '../storage/commit-clock.js';
import { vectorFromValues, type Batch } from '../types/vector.js';
import { convertJsonValue } from '../types/json-values.js';
import type { Value } from '../types/values.js';
import type { SqlType } from '../types/types.js';
import { JOBS_COLUMNS, JOBS_TIMELINE_COLUMNS } from '../analyzer/information-schema-jobs.js';
import type { EntryChange, Storage } from '../storage/store.js';
import { columnToRestField, type Column, type RestField } from '../types/schema.js';
import { schemaFieldsOf } from '../storage/resources.js';
import { tableValueRule, withTableValues } from '../types/table-values.js';
import { updateTable } from './tables.js';
import { encodeRowsPageAsync, type RowsPage, type WireOptions } from '../types/wire.js';
import type { EngineCatalog } from './catalog.js';
import { decodeParameters } from './parameters.js';
import { ResultStore } from './results.js';
import { SessionCatalog } from './session-catalog.js';
import type { Sessions } from './sessions.js';
import { DEFAULT_JOB_LOCATION, JobLocation, locatedCatalog, type CatalogView } from './location.js';

export interface TableRefArg {
  readonly projectId: string;
  readonly datasetId: string;
  readonly tableId: string;
}

export interface ExecuteQueryArgs {
  readonly projectId: string;
  readonly jobId: string;
  readonly query: string;
  readonly defaultDataset?: { projectId: string; datasetId: string };
  readonly parametersJson?: string;
  readonly parameterMode?: string;
  readonly dryRun: boolean;
  readonly destination?: TableRefArg;
  readonly writeDisposition?: string;
  readonly createDisposition?: string;
  /** ALLOW_FIELD_ADDITION / ALLOW_FIELD_RELAXATION for a WRITE_APPEND destination. */
  readonly schemaUpdateOptions?: readonly string[];
  readonly maxResults: number;
  readonly wire: WireOptions;
  readonly signal: AbortSignal;
  /** JSON array of the project's jobs (snake_case keys) when the query reads INFORMATION_SCHEMA.JOBS. */
  readonly jobsSnapshotJson?: string;
  /** Default time zone (connection property `time_zone`). */
  readonly timeZone?: string;
  /** The job's maximumBytesBilled (absent: no limit). */
  readonly maximumBytesBilled?: number;
  /** The session the query runs in (connectionProperties session_id), made by this query when `createSession`. */
  readonly sessionId?: string;
  readonly createSession?: boolean;
  /** The job's location as the client named it; empty or absent: inferred from the datasets read. */
  readonly location?: string;
  /** The names of the request's tableDefinitions, which the gateway read into EXTERNAL_TABLES_DATASET. */
  readonly externalTables?: readonly string[];
  /** The query is a view's body (QueryRequest.view_body): no default dataset, analysed as CREATE VIEW does. */
  readonly viewBody?: boolean;
  /** A change of a table's entry the script's COMMIT TRANSACTION commits with its rows (a decorated copy's policies). */
  readonly commitEntry?: EntryChange;
}

/** The dataset the gateway reads a request's tableDefinitions into (spec §1.6.4). */
export const EXTERNAL_TABLES_DATASET = '_bq_external_temp';

export interface ExecuteQueryReply extends Omit<RowsPage, 'rows'> {
  schemaJson: string;
  totalRows: number;
  resultTable: TableRefArg;
  /** proto QueryReply.rows_table: the anonymous copy of a policy-protected destination's result. */
  rowsTable?: TableRefArg;
  nextIndex: number;
  statementType: string;
  numDmlAffectedRows: number;
  ddlOperationPerformed: string;
  ddlTargetTable: TableRefArg;
  ddlTargetRoutineJson: string;
  totalBytesProcessed: number;
  totalBytesBilled: number;
  statisticsJson: string;
  /** Set when a script failed after running statements (proto QueryReply.error_json). */
  errorJson?: string;
  /** The job's location: the requested one, else the one its datasets decided (proto QueryReply.location). */
  location: string;
}

/** The principal every request runs as (spec §5: a fixed emulator address). */
export const SESSION_USER = 'emulator@warehouse-emulator.local';

type RunCached = (ctx: QueryContext, catalog: EngineCatalog, loc: JobLocation, view: CatalogView) => Promise<QueryResult | undefined>;
let runQueryPromise: Promise<RunQuery | null> | null = null;
let runCachedPromise: Promise<RunCached> | null = null;

/** The SQL pipeline's entry point, loaded on first use (its own lazily loaded chunk of the bundle). */
export function loadRunQuery(): Promise<RunQuery | null> {
  runQueryPromise ??= import('../planner/run.js').then(
    (mod) => mod.runQuery,
    (e: unknown) => {
      console.error('engine: the query pipeline failed to load:', e);
      return null;
    },
  );
  return runQueryPromise;
}

/**
 * tables.insert / update / patch: the schema's column defaults get CREATE TABLE ... DEFAULT's checks (planner/
 * rest-defaults.ts), in a session of their own over the catalog.
 */
export async function checkTableDefaults(st: Storage, catalog: EngineCatalog, projectId: string, body: Record<string, unknown>): Promise<void> {
  const fields = (body.schema as { fields?: RestField[] } | undefined)?.fields;
  const hasDefault = (fs: readonly RestField[]): boolean => fs.some((f) => (f.defaultValueExpression !== undefined && f.defaultValueExpression !== null) || hasDefault(f.fields ?? []));
  if (!Array.isArray(fields) || !hasDefault(fields)) return;
  const { checkRestDefaults } = await import('../planner/rest-defaults.js');
  const ctx: QueryContext = {
    sql: '', projectId, params: { named: new Map(), positional: [] }, catalog: new SessionCatalog(catalog, st), jobId: '',
    signal: new AbortController().signal, dryRun: false, nowMicros: statementClockMicros(), sessionUser: SESSION_USER,
  };
  try {
    await checkRestDefaults(ctx, fields);
  } catch (e) {
    if (e instanceof QueryError) throw new CatalogError(e.httpCode, statusWord(e.httpCode), e.reason, e.message);
    throw e;
  }
}

/** The plan cache (plan-cache.ts), loaded with the pipeline; without it every statement takes runQuery. */
function loadRunCached(): Promise<RunCached> {
  runCachedPromise ??= import('./plan-cache.js').then(
    (mod) => mod.runCached,
    (): RunCached => async () => undefined,
  );
  return runCachedPromise;
}

const EMPTY_REF: TableRefArg = { projectId: '', datasetId: '', tableId: '' };

export async function executeQuery(st: Storage, catalog: EngineCatalog, results: ResultStore, a: ExecuteQueryArgs, sessions?: Sessions): Promise<ExecuteQueryReply> {
  const runQuery = await loadRunQuery();
  if (!runQuery) throw new CatalogError(501, 'notImplemented', 'notImplemented', 'Query engine not available');
  const params = decodeParameters(a.parametersJson, a.parameterMode);
  if (a.jobsSnapshotJson) materializeJobs(catalog, a.projectId, a.jobsSnapshotJson);
  const runCached = await loadRunCached();
  const loc = new JobLocation(a.location ?? '', DEFAULT_JOB_LOCATION);
  const locate: CatalogView = (c) => locatedCatalog(c, loc, st.defaultLocation);
  let result: QueryResult;
  // A lone query gets a catalog view of its own (its temporary tables end with it); a session's queries share one.
  const run = async (view: SessionCatalog, session?: SessionState): Promise<QueryResult> => {
    view.dryRun = a.dryRun;
    const ctx: QueryContext = {
      sql: a.query,
      projectId: a.projectId,
      defaultDataset: a.defaultDataset,
      params,
      catalog: locate(view),
      location: loc,
      jobId: a.jobId,
      signal: a.signal,
      dryRun: a.dryRun,
      ...(a.viewBody ? { viewBody: true } : {}),
      nowMicros: statementClockMicros(),
      sessionUser: SESSION_USER,
      ...(a.timeZone ? { timeZone: a.timeZone } : {}),
      ...(a.maximumBytesBilled ? { maximumBytesBilled: a.maximumBytesBilled } : {}),
      hasDestination: !!a.destination?.tableId,
      ...(session ? { session } : {}),
      ...(sessions ? { abortSession: (id: string) => sessions.endIn(id, a.projectId) } : {}),
      ...(a.externalTables?.length
        ? { externalTables: new Map(a.externalTables.map((tableId) => [tableId, { projectId: a.projectId, datasetId: EXTERNAL_TABLES_DATASET, tableId }])) }
        : {}),
    };
    // Cached plans know no session state (temporary tables, variables, an open transaction).
    return (session || a.viewBody ? undefined : await runCached(ctx, catalog, loc, locate)) ?? (await runQuery(ctx));
  };
  try {
    if (a.sessionId && sessions) result = await sessions.run(a.sessionId, a.projectId, a.createSession === true, run);
    else result = await run(new SessionCatalog(catalog, st, a.commitEntry));
  } catch (e) {
    const kids = e instanceof QueryError ? (e as ScriptFailure).scriptChildren : undefined;
    if (e instanceof QueryError && kids?.list.length && !a.signal.aborted) return await failedScript(e, kids, a, results, loc.resolved);
    if (e instanceof QueryError) throw new CatalogError(e.httpCode, statusWord(e.httpCode), e.reason, e.message);
    throw e;
  }
  const reply: ExecuteQueryReply = {
    schemaJson: '',
    totalRows: 0,
    resultTable: EMPTY_REF,
    rowsJson: '',
    nextIndex: -1,
    statementType: result.statementType,
    numDmlAffectedRows: result.numDmlAffectedRows ?? -1,
    ddlOperationPerformed: result.ddlOperationPerformed ?? '',
    ddlTargetTable: result.ddlTargetTable ?? EMPTY_REF,
    ddlTargetRoutineJson: result.ddlTargetRoutine ? JSON.stringify(result.ddlTargetRoutine) : '',
    totalBytesProcessed: result.totalBytesProcessed,
    totalBytesBilled: result.totalBytesBilled ?? 0,
    statisticsJson: await statisticsOf(result, a, results),
    location: loc.resolved,
  };
  if (!result.columns || a.dryRun) {
    if (result.columns) reply.schemaJson = schemaJsonOf(result.columns);
    return reply;
  }
  const columns = result.columns;
  const batches = result.batches;
  const total = batches.reduce((s, b) => s + b.length, 0);
  reply.schemaJson = schemaJsonOf(columns);
  reply.totalRows = total;
  const dest = a.destination && a.destination.tableId ? a.destination : undefined;
  // cached-results.md, "Ensuring use of the cache": CREATE_NEVER without a destination takes the result from the
  // query cache or fails NOT_FOUND; the emulator keeps no query cache (every job reports cacheHit false).
  if (!dest && result.statementType === 'SELECT' && (a.createDisposition ?? '').toUpperCase() === 'CREATE_NEVER') {
    throw notFound('Query results are not in the query cache, and createDisposition CREATE_NEVER allows no new result table');
  }
  if (dest) {
    await writeDestination(st, locate(catalog), loc, dest, columns.map((c) => ({ name: c.name, type: c.type, required: false })), result, a);
    reply.resultTable = dest;
    // getQueryResults answers from the job's result, not the table (tabledata.list of a table with row access
    // policies needs the TRUE filter, and the table may hold other rows): such a job keeps its rows as a result too.
    const entry = st.getTable(dest.projectId, dest.datasetId, dest.tableId);
    if (entry && Object.keys(entry.policies).length > 0) reply.rowsTable = await keepResult(results, a, columns, batches, total);
  } else {
    reply.resultTable = await keepResult(results, a, columns, batches, total);
  }
  if (a.maxResults >= 0) {
    // A slice of rows at a time: a 100k-row first page is ~100 ms of CPU that other calls should not wait for.
    const { rowsJson, rowsUtf8, rows } = await encodeRowsPageAsync(batches, 0, Math.min(a.maxResults, total), a.wire);
    Object.assign(reply, { rowsJson, rowsUtf8 });
    reply.nextIndex = rows < total ? rows : -1;
  }
  return reply;
}

/** The job's rows as its anonymous result table, on disk before the job is reported done (it must survive an engine restart). */
async function keepResult(results: ResultStore, a: { projectId: string; jobId: string }, columns: readonly ResultColumn[], batches: readonly Batch[], total: number): Promise<TableRefArg> {
  const ref = { projectId: a.projectId, datasetId: ResultStore.datasetFor(a.projectId), tableId: 'anon' + a.jobId.replace(/[^A-Za-z0-9_]/g, '_') };
  await results.put({ ...ref, columns, batches, rowCount: total, etag: `"${Date.now().toString(36)}"` });
  return ref;
}

/** `schema_json` by result-columns array: a cached plan (plan-cache.ts) returns the same array every run. */
const schemaJsons = new WeakMap<readonly ResultColumn[], string>();

function schemaJsonOf(columns: readonly ResultColumn[]): string {
  let j = schemaJsons.get(columns);
  if (j === undefined) {
    j = JSON.stringify({ fields: columns.map((c) => columnToRestField(c.name, c.type)) });
    schemaJsons.set(columns, j);
  }
  return j;
}

/** `catalog`: as the job's location sees it (a destination elsewhere is not found). */
async function writeDestination(st: Storage, catalog: EngineCatalog, loc: JobLocation, dest: TableRefArg, columns: Column[], result: QueryResult, a: ExecuteQueryArgs): Promise<void> {
  const { projectId: p, datasetId: d, tableId: t } = dest;
  if (st.getDataset(p, d) && !catalog.getDataset(p, d)) throw notFound(`Dataset ${p}:${d} was not found in location ${loc.value}`);
  const write = (a.writeDisposition || 'WRITE_EMPTY').toUpperCase();
  const create = (a.createDisposition || 'CREATE_IF_NEEDED').toUpperCase();
  if (t.includes('$')) return writePartition(st, catalog, dest, columns, result, write);
  const existing = st.getTable(p, d, t);
  if (!existing) {
    if (create === 'CREATE_NEVER') throw notFound(`Table ${p}:${d}.${t}`);
    st.requireDataset(p, d);
    // The table appears with its rows (one commit).
    await catalog.createTable(dest, columns, { rows: withTableValues(tableValueRule(columns, undefined), result.batches) });
    return;
  }
  if (write === 'WRITE_TRUNCATE') {
    await catalog.replaceRowsQueued(dest, withTableValues(tableValueRule(columns, undefined), result.batches), columns);
    return;
  }
  // WRITE_TRUNCATE_DATA (Job.md, writeDisposition): the rows are replaced, the table's schema and constraints stay,
  // so the result is matched to the table's columns as an append's is.
  const truncateData = write === 'WRITE_TRUNCATE_DATA';
  if (write !== 'WRITE_APPEND' && !truncateData && st.tableData(p, d, t).rowCount > 0) throw alreadyExists(`Table ${p}:${d}.${t}`);
  const options = a.schemaUpdateOptions ?? [];
  if (options.length && write !== 'WRITE_APPEND' && !truncateData) {
    throw invalid('Schema update options should only be specified with WRITE_APPEND disposition, or with WRITE_TRUNCATE disposition on a table partition.');
  }
  const table = options.length ? await evolveDestination(st, dest, columns, options) : existing;
  const rule = tableValueRule(st.columnsOf(table), schemaFieldsOf(table.resource));
  const rows = withTableValues(rule, alignToTable(st.columnsOf(table), columns, result.batches, `${p}:${d}.${t}`));
  if (truncateData) await catalog.replaceRowsQueued(dest, rows);
  else await catalog.appendRows(dest, rows);
}

/**
 * A query's rows into one partition of an ingestion-time partitioned table
 * (`t$20240101`): WRITE_TRUNCATE replaces that partition only, WRITE_EMPTY
 * needs it empty, WRITE_APPEND adds to it.
 */
async function writePartition(st: Storage, catalog: EngineCatalog, dest: TableRefArg, columns: Column[], result: QueryResult, write: string): Promise<void> {
  const { projectId: p, datasetId: d } = dest;
  const [t, decorator] = dest.tableId.split('$', 2) as [string, string];
  const table = st.requireTable(p, d, t);
  const unit = ingestionUnit(table.resource);
  if (!unit) throw invalid(`Partition decorators of query destinations are supported for ingestion-time partitioned tables only (emulator): ${p}:${d}.${dest.tableId}`);
  const partition = decoratorPartition(decorator, unit);
  if (partition === undefined) throw invalid(`Invalid partition decorator $${decorator} for table ${p}:${d}.${t}`);
  const stored = st.storedColumnsOf(table);
  const rule = tableValueRule(st.columnsOf(table), schemaFieldsOf(table.resource));
  const rows = withTableValues(rule, alignToTable(st.columnsOf(table), columns, result.batches, `${p}:${d}.${t}`)).map((b) => withPartitionTime(b, stored, partition));
  await catalog.writePartition({ projectId: p, datasetId: d, tableId: t }, partition, rows, write);
}

/**
 * schemaUpdateOptions of a query appending to a table: ALLOW_FIELD_ADDITION
 * adds the result's new columns (NULLABLE), ALLOW_FIELD_RELAXATION makes the
 * table's REQUIRED fields NULLABLE (a query's result columns are all
 * nullable). The table is patched as tables.patch would be; returns its entry.
 */
async function evolveDestination(st: Storage, dest: TableRefArg, columns: readonly Column[], options: readonly string[]) {
  const { projectId: p, datasetId: d, tableId: t } = dest;
  const current = schemaFieldsOf(st.requireTable(p, d, t).resource);
  const known = new Set(current.map((f) => f.name.toLowerCase()));
  const added = options.includes('ALLOW_FIELD_ADDITION') ? columns.filter((c) => !known.has(c.name.toLowerCase())).map((c) => columnToRestField(c.name, c.type)) : [];
  const relax = (fs: readonly RestField[]): RestField[] =>
    fs.map((f) => ({ ...f, ...(f.mode === 'REQUIRED' ? { mode: 'NULLABLE' } : {}), ...(f.fields ? { fields: relax(f.fields) } : {}) }));
  const kept = options.includes('ALLOW_FIELD_RELAXATION') ? relax(current) : current;
  const fields = [...kept, ...added];
  if (JSON.stringify(fields) !== JSON.stringify(current)) await updateTable(st, p, d, t, { schema: { fields } }, true);
  return st.requireTable(p, d, t);
}

/** Result columns matched to the destination's columns by name; absent ones NULL. */
function alignToTable(table: readonly Column[], result: readonly Column[], batches: readonly Batch[], name: string): Batch[] {
  const idx = new Map(result.map((c, i) => [c.name.toLowerCase(), i]));
  for (const c of result) {
    if (!table.some((t) => t.name.toLowerCase() === c.name.toLowerCase())) {
      throw invalid(`Provided Schema does not match Table ${name}. Cannot add fields (field: ${c.name})`);
    }
  }
  for (const c of table) {
    const i = idx.get(c.name.toLowerCase());
    if (i === undefined && c.required) throw invalid(`Provided Schema does not match Table ${name}. Field ${c.name} is missing in new schema`);
    if (i !== undefined && JSON.stringify(result[i]!.type) !== JSON.stringify(c.type)) {
      throw invalid(`Provided Schema does not match Table ${name}. Field ${c.name} has changed type`);
    }
  }
  return batches.map((b) => ({
    length: b.length,
    columns: table.map((c) => {
      const i = idx.get(c.name.toLowerCase());
      return i === undefined ? nullVector(c.type, b.length) : { ...b.columns[i]!, type: c.type };
    }),
  }));
}

export function statusWord(code: number): string {
  switch (code) {
    case 400:
      return 'invalid';
    case 403:
      return 'accessDenied';
    case 404:
      return 'notFound';
    case 409:
      return 'alreadyExists';
    case 501:
      return 'notImplemented';
    default:
      return code >= 500 ? 'internalError' : 'invalid';
  }
}

/**
 * Spec §1.6.5: `region-*.INFORMATION_SCHEMA.JOBS` reads `_bqemu_jobs.JOBS` of
 * the project, filled from the gateway's job registry before execution.
 */
function materializeJobs(catalog: EngineCatalog, projectId: string, json: string): void {
  let jobs: unknown;
  try {
    jobs = JSON.parse(json);
  } catch {
    return;
  }
  if (!Array.isArray(jobs)) return;
  const rows = (jobs as unknown[]).filter((j): j is Record<string, unknown> => typeof j === 'object' && j !== null);
  virtualRows(catalog, { projectId, datasetId: '_bqemu_jobs', tableId: 'JOBS' }, JOBS_COLUMNS, rows);
  virtualRows(catalog, { projectId, datasetId: '_bqemu_jobs', tableId: 'JOBS_TIMELINE' }, JOBS_TIMELINE_COLUMNS, rows.flatMap((j) => timelineRows(j)));
}

/** JSON rows (keys named as the columns) as a virtual table; a value that does not convert is NULL (an empty array). */
function virtualRows(catalog: EngineCatalog, id: TableRefArg, cols: readonly { name: string; type: SqlType }[], rows: readonly Record<string, unknown>[]): void {
  const columns: Column[] = cols.map((c) => ({ name: c.name, type: c.type, required: false }));
  const values: Value[][] = columns.map(() => []);
  for (const j of rows) {
    columns.forEach((c, i) => {
      let v: Value = null;
      try {
        v = convertJsonValue(c.type, j[c.name]);
      } catch {
        v = c.type.kind === 'ARRAY' ? [] : null;
      }
      values[i]!.push(v);
    });
  }
  const batch: Batch = { length: rows.length, columns: columns.map((c, i) => vectorFromValues(c.type, values[i]!)) };
  catalog.setVirtualTable(id, columns, batch);
}

/**
 * information-schema-jobs-timeline.md: a job's rows, one per whole second from the second its run started in to the
 * one it ended in (a running job: to now). Slot time follows the JOBS rule (one slot while the job runs, gateway
 * README): a period's slot_ms is the part of that second the job ran, so the periods sum to the job's total_slot_ms.
 * `state` is the job's at the end of the period: DONE in the period it ended in, else RUNNING.
 */
function timelineRows(j: Record<string, unknown>): Record<string, unknown>[] {
  const ms = (v: unknown): number | undefined => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : undefined);
  const start = ms(j['start_time']);
  if (start === undefined) return [];
  const ended = ms(j['end_time']);
  const end = ended ?? Date.now();
  const done = ended !== undefined;
  const out: Record<string, unknown>[] = [];
  for (let p = Math.floor(start / 1000) * 1000; p <= end; p += 1000) {
    const last = p + 1000 > end;
    out.push({
      period_start: new Date(p).toISOString(),
      period_slot_ms: Math.max(0, Math.min(end, p + 1000) - Math.max(start, p)),
      project_id: j['project_id'],
      project_number: j['project_number'],
      user_email: j['user_email'],
      principal_subject: j['principal_subject'],
      job_id: j['job_id'],
      job_type: j['job_type'],
      labels: j['labels'],
      statement_type: j['statement_type'],
      priority: j['priority'],
      parent_job_id: j['parent_job_id'],
      job_creation_time: j['creation_time'],
      job_start_time: j['start_time'],
      job_end_time: j['end_time'],
      state: done && last ? 'DONE' : 'RUNNING',
      reservation_id: j['reservation_id'],
      reservation_group_path: j['reservation_group_path'],
      edition: j['edition'],
      // "Only populated for completed jobs".
      total_bytes_billed: done ? j['total_bytes_billed'] : null,
      total_bytes_processed: done ? j['total_bytes_processed'] : null,
      error_result: j['error_result'],
      cache_hit: j['cache_hit'],
      // No shuffle and no queued work here (no reservations, no slot contention).
      period_shuffle_ram_usage_ratio: 0,
      period_estimated_runnable_units: 0,
      transaction_id: j['transaction_id'],
    });
  }
  return out;
}

type WithStatistics = QueryResult & { statistics?: Record<string, unknown> };

/**
 * One statement of a script as a child-job summary for the gateway: its text,
 * statement statistics, `scriptStatistics` (evaluationKind STATEMENT and the
 * stack frame of the statement), and for statements with rows a result table
 * in the result store, so getQueryResults on the child answers like the real service.
 */
function childSummary(c: ScriptChild, index: number, a: ExecuteQueryArgs, results: ResultStore, writes: Promise<void>[]): Record<string, unknown> {
  const jobId = childJobId(a.jobId, index);
  const stackFrames = c.frames.map((f) => {
    const src = f.procedure ? f.procedure.text : a.query;
    const from = position(src, f.start);
    const to = position(src, Math.max(f.start, f.end - 1));
    return { startLine: from.line, startColumn: from.column, endLine: to.line, endColumn: to.column, ...(f.procedure ? { procedureId: f.procedure.id } : {}), text: src.slice(f.start, f.end) };
  });
  const j: Record<string, unknown> = {
    jobId,
    query: stackFrames[0]?.text ?? '',
    scriptStatistics: { evaluationKind: 'STATEMENT', stackFrames },
  };
  if (!c.result) {
    // A statement that failed (inside an EXCEPTION handler's block): the child job carries the error.
    if (c.error) j.error = { code: c.error.httpCode, reason: c.error.reason, message: c.error.message };
    if (c.statementType) j.statementType = c.statementType;
    return j;
  }
  const r = c.result as WithStatistics;
  j.statementType = r.statementType;
  j.totalBytesProcessed = r.totalBytesProcessed;
  j.totalBytesBilled = r.totalBytesBilled ?? 0;
  if (r.numDmlAffectedRows !== undefined) j.numDmlAffectedRows = r.numDmlAffectedRows;
  if (r.ddlOperationPerformed) j.ddlOperationPerformed = r.ddlOperationPerformed;
  if (r.ddlTargetTable) j.ddlTargetTable = r.ddlTargetTable;
  if (r.statistics) j.statistics = r.statistics;
  if (r.columns && c.rowsDropped) j.schema = { fields: r.columns.map((col: ResultColumn) => columnToRestField(col.name, col.type)) };
  else if (r.columns) {
    const total = r.batches.reduce((n, b) => n + b.length, 0);
    const ref = { projectId: a.projectId, datasetId: ResultStore.datasetFor(a.projectId), tableId: 'anon' + jobId.replace(/[^A-Za-z0-9_]/g, '_') };
    writes.push(results.put({ ...ref, columns: r.columns, batches: r.batches, rowCount: total, etag: `"${Date.now().toString(36)}"` }));
    j.schema = { fields: r.columns.map((col: ResultColumn) => columnToRestField(col.name, col.type)) };
    j.totalRows = total;
    j.resultTable = ref;
  }
  return j;
}

/**
 * A script that failed after running statements: the reply carries the job's
 * error and the child jobs of what ran, so the gateway lists them (the real
 * service keeps a failed script's children) while the job itself fails.
 */
async function failedScript(e: QueryError, kids: ScriptChildren, a: ExecuteQueryArgs, results: ResultStore, location: string): Promise<ExecuteQueryReply> {
  return {
    schemaJson: '',
    totalRows: 0,
    resultTable: EMPTY_REF,
    rowsJson: '',
    nextIndex: -1,
    statementType: 'SCRIPT',
    numDmlAffectedRows: -1,
    ddlOperationPerformed: '',
    ddlTargetTable: EMPTY_REF,
    ddlTargetRoutineJson: '',
    totalBytesProcessed: kids.bytes,
    totalBytesBilled: kids.billed,
    statisticsJson: JSON.stringify(await childJobs(kids, a, results)),
    errorJson: JSON.stringify({ code: e.httpCode, status: statusWord(e.httpCode), reason: e.reason, message: e.message }),
    location,
  };
}

/** Child jobs a script reports: the newest; a million-iteration loop must not make a reply of a million summaries. */
const MAX_CHILD_JOBS = 1000;

/** The newest MAX_CHILD_JOBS children as summaries (ids keep their index) and the total count; their result tables are on disk when it resolves. */
async function childJobs(kids: ScriptChildren, a: ExecuteQueryArgs, results: ResultStore): Promise<Record<string, unknown>> {
  const from = Math.max(0, kids.list.length - MAX_CHILD_JOBS);
  const writes: Promise<void>[] = [];
  const childJobs = kids.list.slice(from).map((c, k) => childSummary(c, kids.dropped + from + k, a, results, writes));
  await Promise.all(writes);
  return { numChildJobs: String(kids.dropped + kids.list.length), childJobs };
}

/** `statistics_json`: script child-job summaries and any extra statistics the pipeline attaches. */
async function statisticsOf(result: QueryResult, a: ExecuteQueryArgs, results: ResultStore): Promise<string> {
  const extra = result as WithStatistics & { scriptChildren?: ScriptChildren };
  const out: Record<string, unknown> = { ...(extra.statistics ?? {}) };
  if (extra.scriptChildren) Object.assign(out, await childJobs(extra.scriptChildren, a, results));
  return Object.keys(out).length > 0 ? JSON.stringify(out) : '';
}
