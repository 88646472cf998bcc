// Query jobs: building the engine request from a REST query configuration,
// running it under the registry's state machine, and rendering the job and
// query-result resources of the real service.
import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import type { Family, GatewayContext } from '../context.js';
import { kind } from '../context.js';
import type { ListRowsReply, QueryReply, QueryRequest, TableRef, TimestampFormat } from '../engine-client.js';
import { invalid, RestError, statusForCode, type ErrorInfo } from '../errors.js';
import { boolish, checkDatasetId, checkProjectId, checkTableId, isObj, num, str, type Json } from '../validate.js';
import { etagOf } from '../plugins/common.js';
import { PAGE_BYTES, rowsOf, type RowsBody } from '../rows-body.js';
import { prepareQueryText } from './legacy-sql.js';
import { applyQueryDestinationSpec, materializeTableDefinitions } from './data-jobs.js';
import { JobCancel, slimFinishedJob, type JobRecord } from './registry.js';
export { DEFAULT_LOCATION } from './location.js';

export const QUERY_TIMEOUT_DEFAULT_MS = 10_000;
/** Longest a single request waits for a job (long-poll cap), whatever timeoutMs says. */
export const QUERY_TIMEOUT_CAP_MS = 60_000;

const CANCELLED: ErrorInfo = { code: 400, status: 'cancelled', reason: 'stopped', message: 'Job execution was cancelled: User requested cancellation' };

function timedOutError(limitMs: number): ErrorInfo {
  return { code: 400, status: 'invalid', reason: 'timeout', message: `Job execution was stopped: the job timed out after ${limitMs} ms (jobTimeoutMs)` };
}

function tableRefIn(v: unknown, projectId: string, what: string): TableRef | undefined {
  if (!isObj(v)) return undefined;
  const p = str(v['projectId']) || projectId;
  const d = str(v['datasetId']);
  const t = str(v['tableId']);
  if (!d || !t) throw invalid(`${what} must name a dataset and a table`);
  // A partition decorator (`t$20240101`) is checked on the table's name; the engine writes that partition.
  const dollar = t.indexOf('$');
  const table = dollar >= 0 ? checkTableId(t.slice(0, dollar)) + t.slice(dollar) : checkTableId(t);
  return { project_id: checkProjectId(p), dataset_id: checkDatasetId(d), table_id: table };
}

export function tableRefOut(r: TableRef | null | undefined): Json | undefined {
  if (!r || !r.table_id) return undefined;
  return { projectId: r.project_id, datasetId: r.dataset_id, tableId: r.table_id };
}

/** The server-level --dataset as a reference ("ds", "p.ds" or "p:ds"). */
function serverDefaultDataset(ctx: GatewayContext, projectId: string): TableRef | undefined {
  const ds = ctx.config.dataset;
  if (!ds) return undefined;
  const m = /^(?:(.+)[.:])?([^.:]+)$/.exec(ds);
  if (!m) return undefined;
  return { project_id: m[1] || projectId, dataset_id: m[2]!, table_id: '' };
}

function newSessionId(): string {
  return 'session_' + randomBytes(18).toString('base64url');
}

export interface QueryShape {
  projectId: string;
  jobId: string;
  location: string;
  /** A REST query configuration (jobs.insert) or query request (jobs.query): same field names. */
  cfg: Json;
  dryRun: boolean;
  maxResults: number;
  timestampFormat: TimestampFormat;
  family: Family;
  jobsSnapshot: () => string;
}

export function buildQueryRequest(ctx: GatewayContext, s: QueryShape): QueryRequest {
  const cfg = s.cfg;
  const sql = str(cfg['query']);
  if (sql === undefined || sql.trim() === '') throw invalid('Required parameter is missing: query');
  const text = prepareQueryText(sql, boolish(cfg['useLegacySql']));
  checkQueryOptions(cfg);
  let defaultDataset: TableRef | undefined;
  if (isObj(cfg['defaultDataset']) && str(cfg['defaultDataset']['datasetId'])) {
    const dd = cfg['defaultDataset'];
    defaultDataset = {
      project_id: checkProjectId(str(dd['projectId']) || s.projectId),
      dataset_id: checkDatasetId(str(dd['datasetId'])!),
      table_id: '',
    };
  } else if (isObj(cfg['tableDefinitions']) && Object.keys(cfg['tableDefinitions']).length) {
    // Spec §1.6.4: definitions live in `_bq_external_temp`, forwarded as the default dataset.
    defaultDataset = { project_id: s.projectId, dataset_id: '_bq_external_temp', table_id: '' };
  } else {
    defaultDataset = serverDefaultDataset(ctx, s.projectId);
  }
  const params = Array.isArray(cfg['queryParameters']) ? cfg['queryParameters'] : [];
  let mode = (str(cfg['parameterMode']) ?? '').toUpperCase();
  if (params.length && !mode) mode = params.some((p) => isObj(p) && str(p['name'])) ? 'NAMED' : 'POSITIONAL';
  const connectionProperty = (key: string): Json | undefined =>
    Array.isArray(cfg['connectionProperties'])
      ? cfg['connectionProperties'].find((p): p is Json => isObj(p) && p['key'] === key)
      : undefined;
  const session = connectionProperty('session_id');
  const timeZone = connectionProperty('time_zone');
  return {
    project_id: s.projectId,
    job_id: s.jobId,
    query: text,
    ...(defaultDataset ? { default_dataset: defaultDataset } : {}),
    ...(params.length ? { parameters: { parameters_json: JSON.stringify(params), parameter_mode: mode } } : {}),
    dry_run: s.dryRun,
    ...(tableRefIn(cfg['destinationTable'], s.projectId, 'destinationTable') ? { destination: tableRefIn(cfg['destinationTable'], s.projectId, 'destinationTable')! } : {}),
    write_disposition: oneWord(cfg['writeDisposition']) ?? '',
    create_disposition: oneWord(cfg['createDisposition']) ?? '',
    schema_update_options: Array.isArray(cfg['schemaUpdateOptions']) ? cfg['schemaUpdateOptions'].map(String) : [],
    table_definitions_json: isObj(cfg['tableDefinitions']) ? JSON.stringify(cfg['tableDefinitions']) : '',
    // A text check, not SQL parsing: only queries naming the view pay for the snapshot.
    jobs_snapshot_json: /INFORMATION_SCHEMA\s*`?\s*\.\s*`?\s*JOBS/i.test(text) ? s.jobsSnapshot() : '',
    location: s.location,
    // createSession: the gateway mints the id; the engine keeps the session's temp state under it.
    session_id: session ? String(session['value'] ?? '') : boolish(cfg['createSession']) ? newSessionId() : '',
    create_session: !session && boolish(cfg['createSession']),
    time_zone: timeZone ? String(timeZone['value'] ?? '') : '',
    maximum_bytes_billed: num(cfg['maximumBytesBilled']) ?? 0,
    max_results: s.maxResults,
    timestamp_format: s.timestampFormat,
    string_scalars: s.family === 'bigquery',
    want_rows_utf8: true,
    max_bytes: PAGE_BYTES,
  };
}

const WRITE_DISPOSITIONS = ['WRITE_TRUNCATE', 'WRITE_TRUNCATE_DATA', 'WRITE_APPEND', 'WRITE_EMPTY'];
const CREATE_DISPOSITIONS = ['CREATE_IF_NEEDED', 'CREATE_NEVER'];
const PRIORITIES = ['INTERACTIVE', 'BATCH'];

/**
 * The query configuration's own rules (Job.md, JobConfigurationQuery; parameterized-queries.md), checked before
 * anything runs: the enum fields take their listed values; legacy SQL takes no query parameters, needs a
 * destinationTable for allowLargeResults and allowLargeResults for flattenResults=false (GoogleSQL ignores both);
 * a destination is partitioned by time or by range, not both.
 */
function checkQueryOptions(cfg: Json): void {
  const oneOf = (field: string, allowed: readonly string[]): void => {
    const v = cfg[field];
    if (v === undefined || v === null) return;
    const w = oneWord(v);
    if (w === undefined || !allowed.includes(w.toUpperCase())) throw invalid(`Invalid value for ${field}: ${JSON.stringify(v)}; expected one of ${allowed.join(', ')}`);
  };
  oneOf('writeDisposition', WRITE_DISPOSITIONS);
  oneOf('createDisposition', CREATE_DISPOSITIONS);
  oneOf('priority', PRIORITIES);
  if (boolish(cfg['useLegacySql']) === true) {
    if (Array.isArray(cfg['queryParameters']) && cfg['queryParameters'].length) throw invalid('Query parameters are only supported in GoogleSQL: set useLegacySql to false');
    const large = boolish(cfg['allowLargeResults']) === true;
    if (large && !isObj(cfg['destinationTable'])) throw invalid('allowLargeResults requires a destinationTable');
    if (boolish(cfg['flattenResults']) === false && !large) throw invalid('flattenResults=false requires allowLargeResults=true');
  }
  if (isObj(cfg['timePartitioning']) && isObj(cfg['rangePartitioning'])) throw invalid('Only one of timePartitioning and rangePartitioning can be specified');
}

/** The anonymous table the engine keeps a query's rows in (ANON_DATASET_PREFIX and the `anon<jobId>` name of src/engine/results.ts). */
export function anonResultRef(projectId: string, jobId: string): TableRef {
  return { project_id: projectId, dataset_id: '_anon' + projectId.replace(/[^A-Za-z0-9_]/g, '_'), table_id: 'anon' + jobId.replace(/[^A-Za-z0-9_]/g, '_') };
}

/** An enum field; the service also takes it as a one-element array (the samples send `writeDisposition: ['WRITE_APPEND']`). */
function oneWord(v: unknown): string | undefined {
  return str(v) ?? (Array.isArray(v) && v.length === 1 ? str(v[0]) : undefined);
}

/**
 * Starts the job: query-time tables are materialized, then with `analyze` a
 * dry run checks the statement and settles the job's location (jobs.insert:
 * the service answers analysis errors, such as a table not found in the
 * job's location, on the insert as a DONE job, and a location it inferred),
 * then the engine call runs; the job is RUNNING until it settles, then DONE.
 * Resolves once the job is RUNNING (or DONE, when it failed before running).
 */
export function startJob(ctx: GatewayContext, job: JobRecord, analyze = false): Promise<void> {
  job.startMs = Date.now();
  const req = job.request!;
  const prepare = req.table_definitions_json
    ? materializeTableDefinitions(ctx, req.project_id, JSON.parse(req.table_definitions_json) as Json)
    : Promise.resolve();
  let running!: () => void;
  const started = new Promise<void>((r) => (running = r));
  const call = { deadlineMs: 0, signal: job.abort.signal };
  // jobTimeoutMs (Job.md JobConfiguration; jobs/query.md): past it the job is stopped, as a cancel would, with reason
  // `timeout` (error-messages.md); a job that finishes first is not affected.
  const limit = num(job.configuration['jobTimeoutMs']);
  let timedOut = false;
  const timer = limit !== undefined && limit > 0 ? setTimeout(() => ((timedOut = true), job.abort.abort()), limit) : undefined;
  job.done = prepare
    .then(async () => {
      if (analyze && !req.dry_run) {
        const dry = await ctx.call('ExecuteQuery', { ...req, dry_run: true, max_results: -1, jobs_snapshot_json: '' }, call);
        if (dry.location) req.location = job.location = dry.location;
        // The service names a query's destination on the insert (clients such as Go's read it from there).
        if (dry.statement_type === 'SELECT' && !req.destination) job.resultTable = anonResultRef(job.projectId, job.jobId);
      }
      job.state = 'RUNNING';
      running();
      // The view shows the querying job itself as RUNNING, as the real one does: re-snapshot now it is.
      if (req.jobs_snapshot_json) req.jobs_snapshot_json = jobsSnapshot(ctx.jobs.list(req.project_id));
      return ctx.call('ExecuteQuery', req, call);
    })
    .then(
      (reply) => {
        job.reply = reply;
        if (reply.location && !job.locationShown) job.location = reply.location;
        registerChildJobs(ctx, job, reply);
        // A script that failed after running statements: the call succeeded to carry its child jobs; the job fails.
        const failed = parseObj((reply as QueryReply & { error_json?: string }).error_json ?? '');
        if (failed) {
          job.error = {
            code: num(failed['code']) ?? 400,
            status: str(failed['status']) ?? 'invalid',
            reason: str(failed['reason']) ?? 'invalidQuery',
            message: str(failed['message']) ?? '',
          };
        }
        // --destination_table with --time_partitioning_field / --clustering_fields: the table gets the job's spec.
        const q = job.configuration['query'];
        if (failed || req.dry_run || !isObj(q)) return undefined;
        return applyQueryDestinationSpec(ctx, job.projectId, q).catch((e: unknown) => {
          job.error = e instanceof RestError ? e.toInfo() : { code: 500, status: 'internal', reason: 'internalError', message: String(e) };
        });
      },
      (e: unknown) => {
        if (job.abort.signal.aborted) job.error = timedOut ? timedOutError(limit!) : CANCELLED;
        else if (e instanceof RestError) job.error = e.toInfo();
        else job.error = { code: 500, status: 'internal', reason: 'internalError', message: String(e) };
      },
    )
    .finally(() => {
      clearTimeout(timer);
      job.state = 'DONE';
      job.endMs = Date.now();
      // The registry keeps up to MAX_JOBS jobs: drop the request's bulky inputs
      // (a JOBS snapshot is O(jobs) per job) and per-job machinery once done.
      slimFinishedJob(job);
      running();
    });
  return started;
}

/**
 * Scripts: the engine's statistics carry `childJobs`, one summary per
 * statement the script ran (jobId, query, statementType, numDmlAffectedRows,
 * ddlOperationPerformed, ddlTargetTable {projectId,datasetId,tableId}, schema,
 * totalRows, resultTable, totalBytesProcessed, scriptStatistics, statistics;
 * a statement that failed inside an EXCEPTION block carries error {code, reason, message}).
 * Each becomes a DONE job with `parentJobId`, so jobs.list?parentJobId=,
 * jobs.get, getQueryResults and INFORMATION_SCHEMA.JOBS see them like the
 * real service's script child jobs.
 */
function registerChildJobs(ctx: GatewayContext, parent: JobRecord, reply: QueryReply): void {
  const extra = parseObj(reply.statistics_json);
  const children = extra && Array.isArray(extra['childJobs']) ? (extra['childJobs'] as unknown[]).filter(isObj) : [];
  const ref = (v: unknown): TableRef | null =>
    isObj(v) ? { project_id: str(v['projectId']) ?? '', dataset_id: str(v['datasetId']) ?? '', table_id: str(v['tableId']) ?? '' } : null;
  const end = Date.now();
  const t0 = parent.startMs ?? parent.createdMs;
  children.forEach((c, i) => {
    const err = isObj(c['error']) ? c['error'] : undefined;
    const stats: Json = {};
    if (isObj(c['scriptStatistics'])) stats['scriptStatistics'] = c['scriptStatistics'];
    if (isObj(c['statistics'])) Object.assign(stats, c['statistics']);
    const child: JobRecord = {
      projectId: parent.projectId,
      jobId: str(c['jobId']) ?? `script_job_${parent.jobId}_${i}`,
      location: parent.location,
      jobType: 'QUERY',
      state: 'DONE',
      // A millisecond apart in statement order: bq sorts a script's children by creationTime to print them.
      createdMs: t0 + i,
      startMs: t0 + i,
      endMs: Math.max(end, t0 + i),
      configuration: { query: { query: str(c['query']) ?? '', useLegacySql: false } },
      userEmail: parent.userEmail,
      parentJobId: parent.jobId,
      // Rendering reads the request's paging and format fields: the parent's.
      ...(parent.request ? { request: { ...parent.request, job_id: str(c['jobId']) ?? '', query: str(c['query']) ?? '', jobs_snapshot_json: '', table_definitions_json: '' } } : {}),
      reply: {
        schema_json: isObj(c['schema']) ? JSON.stringify(c['schema']) : '',
        total_rows: num(c['totalRows']) ?? 0,
        result_table: ref(c['resultTable']),
        rows_json: '',
        next_index: -1,
        statement_type: str(c['statementType']) ?? '',
        num_dml_affected_rows: num(c['numDmlAffectedRows']) ?? -1,
        ddl_operation_performed: str(c['ddlOperationPerformed']) ?? '',
        ddl_target_table: ref(c['ddlTargetTable']),
        ddl_target_routine_json: '',
        total_bytes_processed: num(c['totalBytesProcessed']) ?? 0,
        total_bytes_billed: num(c['totalBytesBilled']) ?? 0,
        statistics_json: Object.keys(stats).length ? JSON.stringify(stats) : '',
      },
      ...(err ? { error: { code: num(err['code']) ?? 400, status: statusForCode(num(err['code']) ?? 400), reason: str(err['reason']) ?? 'invalidQuery', message: str(err['message']) ?? '' } } : {}),
      abort: new JobCancel(),
      done: Promise.resolve(),
    };
    slimFinishedJob(child);
    ctx.jobs.add(child);
  });
}

/** Resolves true when the job is DONE within `ms`. */
export async function waitDone(job: JobRecord, ms: number, reply?: FastifyReply): Promise<boolean> {
  if (job.state === 'DONE') return true;
  if (ms <= 0) return false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  // One promise settled by whichever comes first (cheaper than Promise.race over three).
  await new Promise<void>((r, fail) => {
    wake = r;
    timer = setTimeout(r, Math.min(ms, QUERY_TIMEOUT_CAP_MS));
    // A client that goes away stops the long poll (the job keeps running).
    // (the response's 'close' fires only if the connection drops: the answer is not sent yet)
    reply?.raw.once('close', r);
    void job.done.then(r, fail);
  });
  clearTimeout(timer);
  if (reply) reply.raw.off('close', wake!);
  return (job.state as string) === 'DONE';
}

export function errorResultOf(e: ErrorInfo): Json {
  return { reason: e.reason, ...(e.reason === 'invalidQuery' ? { location: 'query' } : {}), message: e.message };
}

function parseObj(text: string): Json | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return isObj(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

const TOP_LEVEL_STATS = new Set(['numChildJobs', 'parentJobId', 'scriptStatistics', 'sessionInfo', 'transactionInfo', 'reservation_id', 'finalExecutionDurationMs']);

/** dmlStats from the engine's statistics, else derived from the statement type and affected rows. */
export function dmlStatsOf(r: QueryReply): Json | undefined {
  const extra = parseObj(r.statistics_json);
  if (extra && isObj(extra['dmlStats'])) return extra['dmlStats'];
  if (r.num_dml_affected_rows < 0) return undefined;
  const n = String(r.num_dml_affected_rows);
  switch (r.statement_type) {
    case 'INSERT': return { insertedRowCount: n };
    case 'UPDATE': return { updatedRowCount: n };
    case 'DELETE':
    case 'TRUNCATE_TABLE': return { deletedRowCount: n };
    default: return undefined;
  }
}

/**
 * Slot time (Job.md totalSlotMs; information-schema-jobs total_slot_ms): the emulator runs a job's work on one slot,
 * so a job that ran used one slot for as long as it ran: endTime - startTime (while it runs: so far). A dry run and a
 * job that never started used none. The rule is written down in src/gateway/README.md (Job statistics).
 */
export function slotMsOf(job: JobRecord): number | undefined {
  if (job.request?.dry_run || job.startMs === undefined) return undefined;
  return Math.max(0, (job.endMs ?? Date.now()) - job.startMs);
}

/**
 * Job.md QueryTimelineSample: one sample, taken when the job finished (the engine reports no progress while it runs):
 * the whole run elapsed, its slot time, its one unit of work completed and nothing pending or active.
 */
function timelineOf(job: JobRecord, slotMs: number): Json[] {
  const elapsed = String(Math.max(0, job.endMs! - job.startMs!));
  return [{ elapsedMs: elapsed, totalSlotMs: String(slotMs), pendingUnits: '0', completedUnits: '1', activeUnits: '0', estimatedRunnableUnits: '0' }];
}

export function jobStatistics(job: JobRecord, dryRun: boolean): Json {
  const st: Json = { creationTime: String(job.createdMs) };
  if (job.request?.session_id) st['sessionInfo'] = { sessionId: job.request.session_id };
  if (job.startMs !== undefined && !dryRun) st['startTime'] = String(job.startMs);
  if (job.endMs !== undefined && !dryRun) st['endTime'] = String(job.endMs);
  if (job.parentJobId) st['parentJobId'] = job.parentJobId;
  const slotMs = job.state === 'DONE' && !dryRun ? slotMsOf(job) : undefined;
  if (slotMs !== undefined) st['totalSlotMs'] = String(slotMs);
  const r = job.reply;
  if (job.jobType === 'QUERY') {
    const q: Json = {};
    if (slotMs !== undefined) {
      q['totalSlotMs'] = String(slotMs);
      q['timeline'] = timelineOf(job, slotMs);
    }
    if (r) {
      const bytes = String(r.total_bytes_processed ?? 0);
      st['totalBytesProcessed'] = bytes;
      q['totalBytesProcessed'] = bytes;
      q['totalBytesBilled'] = dryRun ? '0' : String(r.total_bytes_billed ?? 0);
      q['cacheHit'] = false;
      // Job.md billingTier: on-demand queries within the limit (100) bill at the standard rate; nothing here bills more.
      if (!dryRun) q['billingTier'] = 1;
      if (dryRun) q['totalBytesProcessedAccuracy'] = 'PRECISE';
      if (r.statement_type) q['statementType'] = r.statement_type;
      if (r.num_dml_affected_rows >= 0 && r.statement_type !== 'SELECT') q['numDmlAffectedRows'] = String(r.num_dml_affected_rows);
      if (r.ddl_operation_performed) q['ddlOperationPerformed'] = r.ddl_operation_performed;
      const ddlTable = tableRefOut(r.ddl_target_table);
      if (ddlTable) q['ddlTargetTable'] = ddlTable;
      const routine = parseObj(r.ddl_target_routine_json);
      if (routine) q['ddlTargetRoutine'] = routine;
      const schema = parseObj(r.schema_json);
      if (schema) q['schema'] = schema;
      const dml = dmlStatsOf(r);
      if (dml) q['dmlStats'] = dml;
      const extra = parseObj(r.statistics_json);
      if (extra) {
        for (const [k, v] of Object.entries(extra)) {
          if (TOP_LEVEL_STATS.has(k)) st[k] = v;
          else if (k === 'query' && isObj(v)) Object.assign(q, v);
          else if (k !== 'childJobs') q[k] = v;
        }
        if (Array.isArray(extra['childJobs']) && st['numChildJobs'] === undefined) st['numChildJobs'] = String(extra['childJobs'].length);
      }
    } else if (job.state === 'DONE') {
      q['cacheHit'] = false;
      q['totalBytesProcessed'] = '0';
    }
    if (Object.keys(q).length) st['query'] = q;
  }
  if (job.extraStatistics) Object.assign(st, job.extraStatistics);
  return st;
}

/**
 * A parameter value as the service keeps it: a QueryParameterValue with nothing set (no value, no array element,
 * no struct member, no range) is a NULL, which a struct's structValues does not list, at any depth; the Go
 * client's integration tests read a job's configuration back that way (a nil struct pointer or an empty slice
 * member comes back absent). An explicit `value: ""` is a value.
 */
function keptParamValue(v: unknown): unknown {
  if (!isObj(v)) return v;
  const out: Json = { ...v };
  if (Array.isArray(v['arrayValues'])) out['arrayValues'] = v['arrayValues'].map(keptParamValue);
  if (isObj(v['structValues'])) {
    const members: Json = {};
    for (const [k, m] of Object.entries(v['structValues'])) if (!isNullParamValue(m)) members[k] = keptParamValue(m);
    out['structValues'] = members;
  }
  return out;
}

function isNullParamValue(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (!isObj(v)) return false;
  const arr = v['arrayValues'];
  const st = v['structValues'];
  return (v['value'] === undefined || v['value'] === null) && (!Array.isArray(arr) || arr.length === 0) && !isObj(st) && (v['rangeValue'] === undefined || v['rangeValue'] === null);
}

export function renderJob(job: JobRecord, family: Family, projection: 'full' | 'minimal' = 'full', listItem = false): Json {
  const dryRun = job.request?.dry_run ?? false;
  if (job.state !== 'DONE') job.locationShown = true;
  const configuration: Json = { ...job.configuration };
  if (job.jobType === 'QUERY' && isObj(configuration['query'])) {
    const q: Json = { ...configuration['query'] };
    // A CREATE TABLE ... AS SELECT job names the table it made as its destination, as the service's do (the
    // Go client reads a CTAS job's rows from it).
    const ctas = job.reply?.statement_type === 'CREATE_TABLE_AS_SELECT' ? tableRefOut(job.reply.ddl_target_table) : undefined;
    const dest = tableRefOut(job.reply?.result_table ?? job.resultTable) ?? (isObj(q['destinationTable']) ? q['destinationTable'] : ctas);
    if (dest) q['destinationTable'] = dest;
    if (q['priority'] === undefined) q['priority'] = 'INTERACTIVE';
    if (Array.isArray(q['queryParameters'])) q['queryParameters'] = q['queryParameters'].map((p) => (isObj(p) && isObj(p['parameterValue']) ? { ...p, parameterValue: keptParamValue(p['parameterValue']) } : p));
    configuration['query'] = q;
  }
  configuration['jobType'] = job.jobType;
  const status: Json = { state: job.state };
  if (job.error) {
    status['errorResult'] = errorResultOf(job.error);
    status['errors'] = job.errors?.length ? job.errors : [errorResultOf(job.error)];
  }
  const ref = { projectId: job.projectId, jobId: job.jobId, location: job.location };
  const out: Json = {
    kind: kind(family, 'job'),
    ...(listItem ? {} : { etag: etagOf(`${job.jobId}/${job.state}/${job.endMs ?? ''}`) }),
    id: `${job.projectId}:${job.location}.${job.jobId}`,
    ...(listItem ? {} : { selfLink: `/${family}/v2/projects/${job.projectId}/jobs/${job.jobId}?location=${job.location}` }),
    user_email: job.userEmail,
    principal_subject: `user:${job.userEmail}`,
    jobReference: ref,
    // JobCreationReason.md: a job jobs.insert made is REQUESTED; jobs.query makes one here only when asked as well
    // (no JOB_CREATION_OPTIONAL short cut), so every job was requested.
    jobCreationReason: { code: 'REQUESTED' },
    ...(listItem ? { state: job.state } : {}),
    ...(listItem && job.error ? { errorResult: errorResultOf(job.error) } : {}),
  };
  if (projection === 'full') out['configuration'] = configuration;
  out['status'] = status;
  out['statistics'] = jobStatistics(job, dryRun);
  return out;
}

/** JSON rows for INFORMATION_SCHEMA.JOBS (spec §1.6.5): one object per job, snake_case like the view. */
/**
 * INFORMATION_SCHEMA.JOBS columns read from a job's statistics and configuration (information-schema-jobs):
 * dml_statistics, session_info, transaction_id, query_dialect (query jobs only; a request that names no dialect ran
 * as GoogleSQL here, spec §1.3, so DEFAULT_GOOGLE_SQL) and continuous.
 */
function jobsExtraColumns(j: JobRecord): Json {
  const query = j.jobType === 'QUERY';
  const q = isObj(j.configuration['query']) ? j.configuration['query'] : {};
  const dml = j.reply ? dmlStatsOf(j.reply) : undefined;
  const extra = j.reply ? parseObj(j.reply.statistics_json) : undefined;
  const tx = extra && isObj(extra['transactionInfo']) ? str(extra['transactionInfo']['transactionId']) : undefined;
  const legacy = q['useLegacySql'];
  return {
    ...statisticsColumns(j, extra),
    dml_statistics: dml ? { inserted_row_count: dml['insertedRowCount'] ?? null, deleted_row_count: dml['deletedRowCount'] ?? null, updated_row_count: dml['updatedRowCount'] ?? null } : null,
    session_info: j.request?.session_id ? { session_id: j.request.session_id } : null,
    transaction_id: tx ?? null,
    query_dialect: !query ? null : legacy === true || legacy === 'true' ? 'LEGACY_SQL' : legacy === false || legacy === 'false' ? 'GOOGLE_SQL' : 'DEFAULT_GOOGLE_SQL',
    continuous: query ? q['continuous'] === true : null,
  };
}

/**
 * The JOBS columns of the job's statistics records (information-schema-jobs): referenced_tables (query jobs that ran),
 * timeline (as jobs.get's), principal_subject (as the Job resource's), job_creation_reason (REQUESTED, as the Job
 * resource's). job_stages is empty: the engine reports no per-stage plan (Job.md queryPlan is left out too). The
 * records of features the emulator has none of (BI Engine, materialized-view rewriting, metadata caching, external
 * services, Omni) are NULL, and so are search_statistics and total_modified_partitions, which nothing here measures.
 */
function statisticsColumns(j: JobRecord, extra: Json | undefined): Json {
  const tables = extra && Array.isArray(extra['referencedTables']) ? (extra['referencedTables'] as unknown[]).filter(isObj) : [];
  const slotMs = j.state === 'DONE' ? slotMsOf(j) : undefined;
  return {
    principal_subject: `user:${j.userEmail}`,
    referenced_tables: tables.map((t) => ({ project_id: t['projectId'], dataset_id: t['datasetId'], table_id: t['tableId'] })),
    job_stages: [],
    timeline: j.jobType === 'QUERY' && slotMs !== undefined ? timelineOf(j, slotMs).map((s) => ({ elapsed_ms: s['elapsedMs'], total_slot_ms: s['totalSlotMs'], pending_units: s['pendingUnits'], completed_units: s['completedUnits'], active_units: s['activeUnits'], estimated_runnable_units: s['estimatedRunnableUnits'] })) : [],
    job_creation_reason: { code: 'REQUESTED' },
    external_service_costs: [],
  };
}

export function jobsSnapshot(jobs: readonly JobRecord[]): string {
  const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());
  return JSON.stringify(
    jobs.map((j) => {
      const q = isObj(j.configuration['query']) ? j.configuration['query'] : {};
      const r = j.reply;
      return {
        creation_time: iso(j.createdMs),
        project_id: j.projectId,
        user_email: j.userEmail,
        job_id: j.jobId,
        job_type: j.jobType,
        statement_type: r?.statement_type || null,
        priority: 'INTERACTIVE',
        start_time: iso(j.startMs),
        end_time: iso(j.endMs),
        query: str(q['query']) ?? null,
        state: j.state,
        total_bytes_processed: r ? r.total_bytes_processed : null,
        total_bytes_billed: r ? (r.total_bytes_billed ?? 0) : null,
        total_slot_ms: slotMsOf(j) ?? null,
        error_result: j.error ? { reason: j.error.reason, location: j.error.reason === 'invalidQuery' ? 'query' : null, message: j.error.message } : null,
        // information-schema-jobs: a multi-statement parent's cache_hit is NULL.
        cache_hit: r?.statement_type === 'SCRIPT' ? null : false,
        destination_table: r?.result_table?.table_id
          ? { project_id: r.result_table.project_id, dataset_id: r.result_table.dataset_id, table_id: r.result_table.table_id }
          : null,
        // information-schema-jobs: the job's labels as key/value pairs (configuration.labels).
        labels: Object.entries(isObj(j.configuration['labels']) ? j.configuration['labels'] : {}).map(([key, value]) => ({ key, value })),
        parent_job_id: j.parentJobId ?? null,
        ...jobsExtraColumns(j),
        location: j.location,
      };
    }),
  );
}

export interface ResultWindow {
  start: number;
  max: number;
}

/**
 * The body of a query response (jobs.query) or getQueryResults, as JSON text
 * around the pre-encoded rows (sent with sendRowsBody). `firstPage` uses the rows the engine
 * encoded with the result; otherwise pages come from ListRows on the result table.
 */
export async function resultBody(
  ctx: GatewayContext,
  job: JobRecord,
  family: Family,
  kindWord: 'queryResponse' | 'getQueryResultsResponse',
  win: ResultWindow,
  ts: TimestampFormat,
  firstPage: boolean,
  extra: Json = {},
): Promise<RowsBody> {
  const r = job.reply as QueryReply;
  // The engine's schema text is spliced in as it is (it is JSON.stringify of {fields}); parsing it only to re-stringify cost a parse per query.
  const schema = r.schema_json.startsWith('{') ? r.schema_json : '';
  let rows: Buffer | string | undefined;
  let total = r.total_rows ?? 0;
  let next = -1;
  // A destination with row access policies: its job's own rows (rows_table), which its user reads as the job made them.
  const table = r.rows_table?.table_id ? r.rows_table : r.result_table?.table_id ? r.result_table : undefined;
  if (schema && win.max > 0) {
    if (firstPage && win.start === 0 && hasRows(r)) {
      rows = rowsOf(r);
      next = r.next_index;
    } else if (table) {
      const page: ListRowsReply = await ctx.call('ListRows', {
        table,
        start_index: win.start,
        max_results: win.max,
        selected_fields: '',
        timestamp_format: ts,
        string_scalars: family === 'bigquery',
        want_rows_utf8: true,
        max_bytes: PAGE_BYTES,
      });
      rows = rowsOf(page);
      next = page.next_index;
      total = page.total_rows;
    } else if (win.start === 0 && hasRows(r)) {
      rows = rowsOf(r);
      next = r.next_index;
    }
  }
  const parts: string[] = [`"kind":${JSON.stringify(kind(family, kindWord))}`];
  if (kindWord === 'getQueryResultsResponse') parts.push(`"etag":${JSON.stringify(etagOf(`${job.jobId}/${win.start}/${win.max}`))}`);
  if (schema) parts.push(`"schema":${schema}`);
  parts.push(`"jobReference":${JSON.stringify({ projectId: job.projectId, jobId: job.jobId, location: job.location })}`);
  parts.push(`"totalRows":"${total}"`);
  if (next >= 0 && next < total && win.max > 0) parts.push(`"pageToken":"${next}"`);
  const head = `{${parts.join(',')}`;
  parts.length = 0;
  parts.push(`"totalBytesProcessed":"${r.total_bytes_processed ?? 0}"`);
  parts.push('"jobComplete":true', '"cacheHit":false');
  if (r.num_dml_affected_rows >= 0 && r.statement_type && r.statement_type !== 'SELECT') {
    parts.push(`"numDmlAffectedRows":"${r.num_dml_affected_rows}"`);
  }
  const dml = dmlStatsOf(r);
  if (dml) parts.push(`"dmlStats":${JSON.stringify(dml)}`);
  if (job.request?.session_id) parts.push(`"sessionInfo":${JSON.stringify({ sessionId: job.request.session_id })}`);
  for (const [k, v] of Object.entries(extra)) parts.push(`${JSON.stringify(k)}:${JSON.stringify(v)}`);
  return { head, rows, tail: `,${parts.join(',')}}` };
}

/** Whether the reply carries a pre-encoded page (possibly `[]`), as a non-empty rows_json did. */
function hasRows(r: QueryReply): boolean {
  return r.rows_json !== '' || (r.rows_utf8 !== undefined && r.rows_utf8.length > 0);
}

export function incompleteBody(job: JobRecord, family: Family, kindWord: 'queryResponse' | 'getQueryResultsResponse', extra: Json = {}): Json {
  job.locationShown = true;
  return {
    kind: kind(family, kindWord),
    jobReference: { projectId: job.projectId, jobId: job.jobId, location: job.location },
    jobComplete: false,
    ...extra,
  };
}

export function timeoutOf(v: unknown): number {
  const n = num(v);
  if (n === undefined) return QUERY_TIMEOUT_DEFAULT_MS;
  if (n < 0) throw invalid(`Invalid value for timeoutMs: ${String(v)}`);
  return n;
}
