// Minimal BigQuery v2 REST client for the harness. Uses the global fetch
// (undici: keep-alive connection pooling). Every request has a timeout, so a
// hung emulator turns into failing cases instead of a hung run.

import type { RestField, RestRow } from './wire.js';

/** A non-2xx answer: the service's error envelope. */
export class RestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly reason: string | undefined,
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** The request did not get an HTTP answer (refused, reset, timeout). */
export class TransportError extends Error {}

export interface QueryParameterType {
  type: string;
  arrayType?: QueryParameterType;
  structTypes?: Array<{ name?: string; type: QueryParameterType }>;
  rangeElementType?: QueryParameterType;
}

export interface QueryParameterValue {
  value?: string | null;
  arrayValues?: QueryParameterValue[];
  structValues?: Record<string, QueryParameterValue>;
  rangeValue?: { start?: QueryParameterValue; end?: QueryParameterValue };
}

export interface QueryParameter {
  name?: string;
  parameterType: QueryParameterType;
  parameterValue: QueryParameterValue;
}

export interface QueryRequest {
  query: string;
  /** e.g. [{key: 'time_zone', value: 'America/Los_Angeles'}]: the query's default time zone */
  connectionProperties?: Array<{ key: string; value: string }>;
  defaultDataset?: { projectId: string; datasetId: string };
  queryParameters?: QueryParameter[];
}

export interface QueryResult {
  fields: RestField[];
  rows: RestRow[];
  totalRows: string | undefined;
  numDmlAffectedRows: string | undefined;
  jobId: string | undefined;
}

interface QueryResponseBody {
  jobComplete?: boolean;
  schema?: { fields?: RestField[] };
  rows?: RestRow[];
  totalRows?: string;
  pageToken?: string;
  numDmlAffectedRows?: string;
  jobReference?: { projectId?: string; jobId?: string; location?: string };
  errors?: Array<{ reason?: string; message?: string }>;
}

export class Client {
  constructor(
    readonly baseUrl: string,
    readonly timeoutMs = 120_000,
  ) {}

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = this.baseUrl.replace(/\/$/, '') + path;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      const err = e as Error & { cause?: { code?: string; message?: string } };
      const detail = err.name === 'TimeoutError' ? `timed out after ${this.timeoutMs} ms` : (err.cause?.code ?? err.cause?.message ?? err.message);
      throw new TransportError(`${method} ${path.split('?')[0]}: ${detail}`);
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        if (res.ok) throw new RestError(res.status, `non-JSON answer: ${text.slice(0, 120)}`, undefined, text);
      }
    }
    if (!res.ok) {
      const env = (parsed as { error?: { message?: string; errors?: Array<{ reason?: string }>; status?: string } } | undefined)?.error;
      const msg = env?.message ?? (text.slice(0, 200) || res.statusText);
      throw new RestError(res.status, msg, env?.errors?.[0]?.reason ?? env?.status, parsed ?? text);
    }
    return parsed as T;
  }

  createDataset(projectId: string, datasetId: string, extra: Record<string, unknown> = {}): Promise<unknown> {
    return this.request('POST', `/bigquery/v2/projects/${enc(projectId)}/datasets`, {
      datasetReference: { projectId, datasetId },
      ...extra,
    });
  }

  /** Creates a dataset; an "already exists" answer counts as success. */
  async ensureDataset(projectId: string, datasetId: string, extra: Record<string, unknown> = {}): Promise<void> {
    try {
      await this.createDataset(projectId, datasetId, extra);
    } catch (e) {
      if (e instanceof RestError && e.status === 409) return;
      throw e;
    }
  }

  createTable(projectId: string, datasetId: string, body: Record<string, unknown>): Promise<unknown> {
    return this.request('POST', `/bigquery/v2/projects/${enc(projectId)}/datasets/${enc(datasetId)}/tables`, body);
  }

  async insertAll(projectId: string, datasetId: string, tableId: string, rows: Array<Record<string, unknown>>): Promise<void> {
    const res = await this.request<{ insertErrors?: Array<{ index?: number; errors?: Array<{ message?: string; reason?: string }> }> }>(
      'POST',
      `/bigquery/v2/projects/${enc(projectId)}/datasets/${enc(datasetId)}/tables/${enc(tableId)}/insertAll`,
      { rows: rows.map((json) => ({ json })) },
    );
    if (res?.insertErrors && res.insertErrors.length > 0) {
      const first = res.insertErrors[0]!;
      throw new RestError(200, `insertAll: ${res.insertErrors.length} row(s) rejected; row ${first.index}: ${first.errors?.[0]?.message ?? first.errors?.[0]?.reason ?? 'error'}`, 'insertErrors', res);
    }
  }

  /** jobs.query, then polls until complete and pages through all rows. */
  async query(projectId: string, req: QueryRequest): Promise<QueryResult> {
    const body: Record<string, unknown> = {
      query: req.query,
      useLegacySql: false,
      timeoutMs: Math.min(this.timeoutMs, 60_000),
      maxResults: 100_000,
      // int64 microseconds: exact, unlike the float-seconds default
      formatOptions: { useInt64Timestamp: true },
    };
    if (req.defaultDataset) body['defaultDataset'] = req.defaultDataset;
    if (req.connectionProperties && req.connectionProperties.length > 0) body['connectionProperties'] = req.connectionProperties;
    if (req.queryParameters && req.queryParameters.length > 0) {
      body['parameterMode'] = req.queryParameters.every((p) => p.name) ? 'NAMED' : 'POSITIONAL';
      body['queryParameters'] = req.queryParameters;
    }
    const base = `/bigquery/v2/projects/${enc(projectId)}/queries`;
    let resp = await this.request<QueryResponseBody>('POST', base, body);
    const deadline = Date.now() + this.timeoutMs;
    const jobId = resp?.jobReference?.jobId;
    const location = resp?.jobReference?.location;
    const getPath = (extra: string) => {
      const qs = new URLSearchParams({ 'formatOptions.useInt64Timestamp': 'true', timeoutMs: '10000' });
      if (location) qs.set('location', location);
      return `${base}/${enc(jobId ?? '')}?${qs.toString()}${extra}`;
    };
    while (resp?.jobComplete === false) {
      if (!jobId) throw new RestError(200, 'jobComplete=false without jobReference.jobId', undefined, resp);
      if (Date.now() > deadline) throw new TransportError(`query job ${jobId} not complete after ${this.timeoutMs} ms`);
      resp = await this.request<QueryResponseBody>('GET', getPath(''));
    }
    if (resp?.errors && resp.errors.length > 0 && !resp.schema) {
      throw new RestError(200, resp.errors[0]?.message ?? 'query error', resp.errors[0]?.reason, resp);
    }
    const fields = resp?.schema?.fields ?? [];
    const rows: RestRow[] = [...(resp?.rows ?? [])];
    let token = resp?.pageToken;
    const seen = new Set<string>();
    while (token) {
      if (seen.has(token) || seen.size > 10_000) throw new RestError(200, `paging loop: pageToken ${token} repeated`, undefined, null);
      seen.add(token);
      if (!jobId) throw new RestError(200, 'pageToken without jobReference.jobId', undefined, resp);
      const page = await this.request<QueryResponseBody>('GET', getPath(`&pageToken=${encodeURIComponent(token)}`));
      rows.push(...(page?.rows ?? []));
      token = page?.pageToken;
    }
    return { fields, rows, totalRows: resp?.totalRows, numDmlAffectedRows: resp?.numDmlAffectedRows, jobId };
  }
}

function enc(s: string): string {
  return encodeURIComponent(s);
}

/** First line of an error, for grouping failure causes. */
export function errorSummary(e: unknown): string {
  if (e instanceof RestError) return `HTTP ${e.status}${e.reason ? ` ${e.reason}` : ''}: ${firstLine(e.message)}`;
  if (e instanceof TransportError) return `transport: ${firstLine(e.message)}`;
  if (e instanceof Error) return `${e.name}: ${firstLine(e.message)}`;
  return String(e);
}

export function firstLine(s: string): string {
  const l = s.split('\n')[0] ?? '';
  return l.length > 300 ? l.slice(0, 300) + '…' : l;
}
