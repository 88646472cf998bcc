// jobs.* and the queries endpoints (spec §4.5, §4.6).
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { labelsProblem } from '../../types/labels.js';
import type { Family, GatewayContext } from '../context.js';
import { kind, timestampFormat } from '../context.js';
import { envelope, invalid, jobNotFound, notImplemented, RestError } from '../errors.js';
import type { TimestampFormat } from '../engine-client.js';
import { JobCancel, newJobId, type JobRecord } from '../jobs/registry.js';
import {
  buildQueryRequest,
  DEFAULT_LOCATION,
  incompleteBody,
  jobsSnapshot,
  renderJob,
  resultBody,
  startJob,
  timeoutOf,
  waitDone,
} from '../jobs/run.js';
import { bodyObject, boolish, checkJobId, checkProjectId, isObj, num, qBool, qInt, qList, qPageToken, qStr, str, type Json, type Query } from '../validate.js';
import { etagOf, type ProjectParams } from './common.js';
import { pageWindow, ROWS_CAP } from './tabledata.js';
import { sendRowsBody } from '../rows-body.js';
import { checkDataJob, runCopy, runExtract, runLoad, tableRef, refOut, type UploadedData } from '../jobs/data-jobs.js';
import { dataJobLocation, jobInLocation } from '../jobs/location.js';

interface JobParams extends ProjectParams { jobId: string }

const JOBS_LIST_DEFAULT = 50;

function sendError(reply: FastifyReply, e: { code: number; status: string; reason: string; message: string }): FastifyReply {
  return reply.code(e.code).type('application/json; charset=UTF-8').send(envelope(e));
}

export function registerJobs(app: FastifyInstance, ctx: GatewayContext, family: Family): void {
  const jobsBase = '/projects/:projectId/jobs';

  const lookup = (p: string, jobId: string, location?: string): JobRecord => {
    const job = ctx.jobs.get(p, jobId);
    if (!job || !jobInLocation(job.location, location)) throw jobNotFound(p, jobId, location);
    return job;
  };

  /** `location`: as the client named it, empty when it did not (the engine infers it from the datasets). */
  const newQueryJob = (p: string, jobId: string, location: string, configuration: Json, cfgQuery: Json, opts: {
    dryRun: boolean; maxResults: number; useInt64: unknown; userEmail: string; ts?: TimestampFormat;
  }): JobRecord => {
    const request = buildQueryRequest(ctx, {
      projectId: p,
      jobId,
      location,
      cfg: cfgQuery,
      dryRun: opts.dryRun,
      maxResults: opts.maxResults,
      timestampFormat: opts.ts ?? timestampFormat(family, opts.useInt64),
      family,
      jobsSnapshot: () => jobsSnapshot(ctx.jobs.list(p)),
    });
    return {
      projectId: p,
      jobId,
      location: location || DEFAULT_LOCATION,
      jobType: 'QUERY',
      state: 'PENDING',
      createdMs: Date.now(),
      configuration,
      userEmail: opts.userEmail,
      request,
      abort: new JobCancel(),
      done: Promise.resolve(),
    };
  };

  // jobs.insert
  app.post<{ Params: ProjectParams; Querystring: Query }>(jobsBase, async (req, reply) => {
    const p = checkProjectId(req.params.projectId);
    const body = bodyObject(req.body);
    const ref = isObj(body['jobReference']) ? body['jobReference'] : {};
    if (str(ref['projectId']) && ref['projectId'] !== p) {
      throw invalid(`Project ID in the job reference (${String(ref['projectId'])}) doesn't match the project ID in the request (${p}).`);
    }
    const configuration = isObj(body['configuration']) ? { ...body['configuration'] } : undefined;
    if (!configuration) throw invalid('Required parameter is missing: configuration');
    checkJobLabels(configuration['labels']);
    for (const other of ['load', 'copy', 'extract'] as const) {
      if (!isObj(configuration[other])) continue;
      const jobId = str(ref['jobId']) ? checkJobId(str(ref['jobId'])!) : newJobId();
      const location = str(ref['location']) || qStr(req.query, 'location') || '';
      const job = await runDataJob(ctx, { projectId: p, jobId, location, configuration, which: other, userEmail: req.principal.email });
      return renderJob(job, family);
    }
    const q = configuration['query'];
    if (!isObj(q)) throw invalid('Required parameter is missing: configuration.query');
    const jobId = str(ref['jobId']) ? checkJobId(str(ref['jobId'])!) : newJobId();
    const location = str(ref['location']) || qStr(req.query, 'location') || '';
    const dryRun = boolish(configuration['dryRun']) ?? false;
    if (!dryRun && ctx.jobs.has(p, jobId)) throw new RestError(409, 'duplicate', `Already Exists: Job ${p}:${location || DEFAULT_LOCATION}.${jobId}`);
    const job = newQueryJob(p, jobId, location, configuration, q, {
      dryRun,
      maxResults: -1,
      useInt64: false,
      userEmail: req.principal.email,
    });
    if (dryRun) {
      // Dry runs are not kept: validate and estimate, answer DONE (or the error) at once.
      void startJob(ctx, job);
      await job.done;
      if (job.error) return sendError(reply, job.error);
      return renderJob(job, family);
    }
    // As the service: the answer comes once the statement is analysed (an
    // analysis error makes it DONE with the error), with the job RUNNING;
    // clients poll jobs.get / getQueryResults.
    ctx.jobs.add(job);
    await startJob(ctx, job, true);
    return renderJob(job, family);
  });

  // jobs.list
  app.get<{ Params: ProjectParams; Querystring: Query }>(jobsBase, async (req) => {
    const p = checkProjectId(req.params.projectId);
    const q = req.query;
    if (qBool(q, 'allUsers')) throw notImplemented('allUsers=true is not supported by the emulator: every job belongs to the emulator principal');
    const states = new Set(qList(q, 'stateFilter').map((s) => s.toUpperCase()));
    for (const s of states) if (!['PENDING', 'RUNNING', 'DONE'].includes(s)) throw invalid(`Invalid value for stateFilter: ${s.toLowerCase()}`);
    const minT = qInt(q, 'minCreationTime');
    const maxT = qInt(q, 'maxCreationTime');
    const parent = qStr(q, 'parentJobId');
    const projection = qStr(q, 'projection') === 'minimal' ? 'minimal' : 'full';
    const max = Math.max(1, Math.min(qInt(q, 'maxResults') ?? JOBS_LIST_DEFAULT, 1000));
    const start = qPageToken(q);
    // Filters read the registry's entries; only the page's jobs are loaded (older ones live in its spill file).
    const all = ctx.jobs.entries(p).filter((j) =>
      (states.size === 0 || states.has(j.state)) &&
      (minT === undefined || j.createdMs >= minT) &&
      (maxT === undefined || j.createdMs <= maxT) &&
      (parent ? j.parentJobId === parent : j.parentJobId === undefined));
    const page = all.slice(start, start + max).map((e) => e.load());
    const out: Json = {
      kind: kind(family, 'jobList'),
      etag: etagOf(page.map((j) => `${j.jobId}/${j.state}`).join(',')),
      jobs: page.map((j) => renderJob(j, family, projection, true)),
    };
    if (start + max < all.length) out['nextPageToken'] = String(start + max);
    return out;
  });

  // jobs.get
  app.get<{ Params: JobParams; Querystring: Query }>(`${jobsBase}/:jobId`, async (req) => {
    const p = checkProjectId(req.params.projectId);
    return renderJob(lookup(p, req.params.jobId, qStr(req.query, 'location')), family);
  });

  // jobs.cancel: the engine call is cancelled; the job reports DONE with reason `stopped`.
  app.post<{ Params: JobParams; Querystring: Query }>(`${jobsBase}/:jobId/cancel`, async (req) => {
    const p = checkProjectId(req.params.projectId);
    const job = lookup(p, req.params.jobId, qStr(req.query, 'location'));
    if (job.state !== 'DONE') {
      job.abort.abort();
      await waitDone(job, 1000);
    }
    return { kind: kind(family, 'jobCancelResponse'), job: renderJob(job, family) };
  });

  // jobs.delete: the literal /delete suffix is the contract.
  app.delete<{ Params: JobParams; Querystring: Query }>(`${jobsBase}/:jobId/delete`, async (req, reply) => {
    const p = checkProjectId(req.params.projectId);
    const job = lookup(p, req.params.jobId, qStr(req.query, 'location'));
    // managing-jobs.md, "Delete job metadata": only parent or top-level jobs are deleted; a child goes with its parent.
    if (job.parentJobId !== undefined) {
      throw invalid(`Job ${p}:${job.location}.${job.jobId} is a child job of ${job.parentJobId}; only parent or top-level jobs can be deleted.`);
    }
    if (job.state !== 'DONE') {
      throw invalid(`Job ${p}:${job.location}.${job.jobId} is still running; cancel it before deleting its metadata.`);
    }
    ctx.jobs.delete(p, job.jobId);
    // As the real jobs.delete: a script's child jobs go with it.
    for (const child of ctx.jobs.entries(p)) if (child.parentJobId === job.jobId) ctx.jobs.delete(p, child.jobId);
    // The service answers 200 with an empty JSON object (the Node client resolves to `{}`).
    return {};
  });

  // jobs.query
  app.post<{ Params: ProjectParams; Querystring: Query }>('/projects/:projectId/queries', async (req, reply) => {
    const p = checkProjectId(req.params.projectId);
    const body = bodyObject(req.body);
    const requestId = str(body['requestId']);
    // jobs/query.md, requestId: case-sensitive, at most 36 ASCII characters.
    if (requestId !== undefined && !/^[\x00-\x7f]{1,36}$/.test(requestId)) throw invalid(`Invalid requestId "${requestId}": at most 36 ASCII characters`);
    checkJobLabels(body['labels']);
    const fmt = isObj(body['formatOptions']) ? body['formatOptions']['useInt64Timestamp'] : undefined;
    const outFmt = isObj(body['formatOptions']) ? body['formatOptions']['timestampOutputFormat'] : undefined;
    const ts = timestampFormat(family, fmt, outFmt);
    const maxRaw = num(body['maxResults']);
    if (maxRaw !== undefined && maxRaw < 0) throw invalid(`Invalid value for maxResults: ${maxRaw}`);
    const max = maxRaw === undefined ? ROWS_CAP : Math.min(maxRaw, ROWS_CAP);
    const timeout = timeoutOf(body['timeoutMs']);
    const dryRun = boolish(body['dryRun']) ?? false;

    const location = str(body['location']) || '';
    const cfgQuery: Json = {};
    for (const k of ['query', 'useLegacySql', 'defaultDataset', 'queryParameters', 'parameterMode', 'tableDefinitions', 'connectionProperties', 'useQueryCache', 'createSession', 'maximumBytesBilled', 'continuous']) {
      if (body[k] !== undefined && body[k] !== null) cfgQuery[k] = body[k];
    }
    // A request repeats an earlier one only with the same requestId and the same fields that shape the result
    // (jobs/query.md, requestId 3): another query under a used requestId is a new request. Dry runs never repeat.
    const requestKey = requestId && !dryRun ? `${requestId}\u0000${requestFingerprint(cfgQuery, location)}` : undefined;
    let job = requestKey ? ctx.jobs.byRequestId(p, requestKey) : undefined;
    if (!job) {
      const configuration: Json = {
        query: cfgQuery,
        ...(dryRun ? { dryRun: true } : {}),
        ...(isObj(body['labels']) ? { labels: body['labels'] } : {}),
        ...(num(body['jobTimeoutMs']) !== undefined ? { jobTimeoutMs: String(num(body['jobTimeoutMs'])) } : {}),
      };
      job = newQueryJob(p, newJobId(), location, configuration, cfgQuery, {
        dryRun,
        maxResults: max,
        useInt64: fmt,
        ts,
        userEmail: req.principal.email,
      });
      if (!dryRun) {
        ctx.jobs.add(job);
        if (requestKey) ctx.jobs.rememberRequestId(p, requestKey, job);
      }
      void startJob(ctx, job);
    }
    // The service names every jobs.query answer's query (`queryId`), with or without JOB_CREATION_OPTIONAL.
    const extra: Json = { queryId: job.jobId };
    const complete = dryRun ? (await job.done, true) : await waitDone(job, timeout, reply);
    if (!complete) return incompleteBody(job, family, 'queryResponse', extra);
    if (job.error) return sendError(reply, job.error);
    if (dryRun) {
      const r = job.reply!;
      const schema = r.schema_json ? (JSON.parse(r.schema_json) as Json) : undefined;
      return {
        kind: kind(family, 'queryResponse'),
        ...(schema ? { schema } : {}),
        jobReference: { projectId: p, location: job.location },
        totalBytesProcessed: String(r.total_bytes_processed ?? 0),
        jobComplete: true,
        cacheHit: false,
      };
    }
    // A reused requestId job may have been encoded differently: page it from the table then.
    const firstPage = job.request?.max_results === max && job.request?.timestamp_format === ts && job.request?.string_scalars === (family === 'bigquery');
    const out = await resultBody(ctx, job, family, 'queryResponse', { start: 0, max }, ts, firstPage, extra);
    releaseFirstPage(job);
    return sendRowsBody(reply, out);
  });

  // jobs.getQueryResults: long-polls up to timeoutMs while the job runs.
  app.get<{ Params: JobParams; Querystring: Query }>('/projects/:projectId/queries/:jobId', async (req, reply) => {
    const p = checkProjectId(req.params.projectId);
    const q = req.query;
    const job = lookup(p, req.params.jobId, qStr(q, 'location'));
    const win = pageWindow(q, ROWS_CAP);
    const ts = timestampFormat(family, qStr(q, 'formatOptions.useInt64Timestamp'), qStr(q, 'formatOptions.timestampOutputFormat'));
    const complete = await waitDone(job, timeoutOf(qInt(q, 'timeoutMs')), reply);
    if (!complete) return incompleteBody(job, family, 'getQueryResultsResponse', { etag: etagOf(job.jobId) });
    if (job.error) return sendError(reply, job.error);
    const body = await resultBody(ctx, job, family, 'getQueryResultsResponse', win, ts, false);
    releaseFirstPage(job);
    return sendRowsBody(reply, body);
  });
}

/** Job labels (jobs/query.md `labels`; JobConfiguration.labels): the label rule of datasets and tables. */
function checkJobLabels(labels: unknown): void {
  if (labels === undefined || labels === null) return;
  if (!isObj(labels)) throw invalid('Invalid value for labels: expected a map of keys to values');
  // labels-intro.md, Requirements for labels: at most 64, each key and value as the rule says.
  const why = labelsProblem(labels);
  if (why) throw invalid(why);
}

/** What of a jobs.query request shapes its result, as a short key (the query text may be long). */
function requestFingerprint(cfgQuery: Json, location: string): string {
  return createHash('sha256').update(JSON.stringify([cfgQuery, location])).digest('base64url');
}

/**
 * The registry keeps many jobs: once a result has been served, drop the
 * pre-encoded first page when the rows can be paged from the result table.
 */
function releaseFirstPage(job: JobRecord): void {
  const r = job.reply;
  if (!r?.result_table?.table_id) return;
  if (r.rows_json) r.rows_json = '';
  if (r.rows_utf8 && r.rows_utf8.length > 0) r.rows_utf8 = undefined;
}

export interface DataJobSpec {
  projectId: string;
  jobId: string;
  /** As the client named it; empty: the location of the job's datasets. */
  location: string;
  configuration: Json;
  which: 'load' | 'copy' | 'extract';
  userEmail: string;
  /** A load's uploaded data, spooled to disk (plugins/uploads.ts). */
  uploaded?: UploadedData;
}

/** Runs a load/copy/extract job to completion (they are synchronous) and registers it. */
export async function runDataJob(ctx: GatewayContext, spec: DataJobSpec): Promise<JobRecord> {
  const { projectId: p, jobId } = spec;
  if (ctx.jobs.has(p, jobId)) throw new RestError(409, 'duplicate', `Already Exists: Job ${p}:${spec.location || DEFAULT_LOCATION}.${jobId}`);
  const cfg = { ...(spec.configuration[spec.which] as Json) };
  checkDataJob(spec.which, cfg);
  const location = await dataJobLocation(ctx, p, spec.which, cfg, spec.location);
  // Echo references with the project filled in, as the real service does.
  for (const k of ['destinationTable', 'sourceTable']) {
    if (isObj(cfg[k])) cfg[k] = refOut(tableRef(cfg[k], p, k, k === 'sourceTable'));
  }
  const now = Date.now();
  const job: JobRecord = {
    projectId: p,
    jobId,
    location,
    jobType: spec.which.toUpperCase() as JobRecord['jobType'],
    state: 'RUNNING',
    createdMs: now,
    startMs: now,
    configuration: { ...spec.configuration, [spec.which]: cfg },
    userEmail: spec.userEmail,
    abort: new JobCancel(),
    done: Promise.resolve(),
  };
  ctx.jobs.add(job);
  // Statistics so far are shown by jobs.get while the job runs.
  const progress = (statistics: Json): void => {
    job.extraStatistics = statistics;
  };
  const run = spec.which === 'load' ? runLoad(ctx, p, cfg, spec.uploaded, progress) : spec.which === 'copy' ? runCopy(ctx, p, cfg) : runExtract(ctx, p, cfg, progress);
  job.done = run.then((r) => {
    job.error = r.error;
    job.errors = r.errors;
    job.extraStatistics = r.statistics;
    job.state = 'DONE';
    job.endMs = Date.now();
  });
  await job.done;
  return job;
}
