// Running a query as a job (jobs.insert with a job id chosen here, so the job
// can be cancelled while jobs.insert still waits), waiting for it with
// getQueryResults long-polls, and reading result pages by row index.
import { api, enc, type Job, type QueryResults } from './api.js';

export interface QueryParam { name: string; type: string; value: string }

export const PARAM_TYPES = ['STRING', 'INT64', 'FLOAT64', 'NUMERIC', 'BIGNUMERIC', 'BOOL', 'DATE', 'DATETIME', 'TIME', 'TIMESTAMP', 'JSON', 'BYTES', 'ARRAY<STRING>', 'ARRAY<INT64>', 'ARRAY<FLOAT64>'];

export function newJobId(): string {
  return 'console_' + crypto.randomUUID().replace(/-/g, '_');
}

/** Named parameters in the REST form; ARRAY<T> values are written as a JSON list. */
export function queryParameters(params: readonly QueryParam[]): unknown[] {
  return params
    .filter((p) => p.name.trim() !== '')
    .map((p) => {
      const arr = /^ARRAY<(\w+)>$/.exec(p.type);
      if (arr) {
        let items: unknown[] = [];
        try {
          const parsed: unknown = JSON.parse(p.value || '[]');
          items = Array.isArray(parsed) ? parsed : [parsed];
        } catch {
          items = p.value.split(',').map((s) => s.trim());
        }
        return { name: p.name.trim(), parameterType: { type: 'ARRAY', arrayType: { type: arr[1] } }, parameterValue: { arrayValues: items.map((v) => ({ value: v === null ? null : String(v) })) } };
      }
      return { name: p.name.trim(), parameterType: { type: p.type }, parameterValue: { value: p.value } };
    });
}

function configuration(query: string, params: readonly QueryParam[], dryRun: boolean): unknown {
  const qp = queryParameters(params);
  return {
    query: { query, useLegacySql: false, ...(qp.length ? { parameterMode: 'NAMED', queryParameters: qp } : {}) },
    ...(dryRun ? { dryRun: true } : {}),
  };
}

/** jobs.insert; answers once the job is done or after the gateway's short grace, RUNNING. */
export function insertQueryJob(project: string, jobId: string, query: string, params: readonly QueryParam[]): Promise<Job> {
  return api<Job>('POST', `/projects/${enc(project)}/jobs`, { body: { jobReference: { projectId: project, jobId }, configuration: configuration(query, params, false) } });
}

/** A dry run: validated and estimated, never kept; throws the service's error (with its [line:col]). */
export function dryRunQuery(project: string, query: string, params: readonly QueryParam[], signal?: AbortSignal): Promise<Job> {
  return api<Job>('POST', `/projects/${enc(project)}/jobs`, { body: { configuration: configuration(query, params, true) }, signal });
}

export function resultsPage(project: string, jobId: string, location: string | undefined, startIndex: number, maxResults: number, timeoutMs = 0): Promise<QueryResults> {
  return api<QueryResults>('GET', `/projects/${enc(project)}/queries/${enc(jobId)}`, {
    query: { location, startIndex, maxResults, timeoutMs, 'formatOptions.useInt64Timestamp': true },
  });
}

/** Long-polls getQueryResults until the job is done; its first page comes with the answer. */
export async function waitForResults(project: string, jobId: string, location: string | undefined, pageSize: number): Promise<QueryResults> {
  for (;;) {
    const r = await resultsPage(project, jobId, location, 0, pageSize, 1000);
    if (r.jobComplete) return r;
  }
}

export function getJob(project: string, jobId: string, location?: string): Promise<Job> {
  return api<Job>('GET', `/projects/${enc(project)}/jobs/${enc(jobId)}`, { query: { location } });
}

export function cancelJob(project: string, jobId: string, location?: string): Promise<{ job: Job }> {
  return api<{ job: Job }>('POST', `/projects/${enc(project)}/jobs/${enc(jobId)}/cancel`, { query: { location } });
}
