// Minimal BigQuery v2 REST client over Node's fetch (undici keeps connections
// alive, as a real client library would). Every call has a timeout so a hung
// emulator turns into an error for that case instead of stalling the run.
import type { RestField, RestCell } from './compare.js';

export class RestError extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

export interface QueryAnswer {
  fields: RestField[];
  rows: { f: RestCell[] }[];
  totalRows: number;
  pages: number;
}

interface QueryResponse {
  jobComplete?: boolean;
  schema?: { fields?: RestField[] };
  rows?: { f: RestCell[] }[];
  totalRows?: string | number;
  pageToken?: string;
  jobReference?: { jobId?: string; location?: string };
}

export interface InsertAllResponse {
  insertErrors?: { index: number; errors: { message?: string }[] }[];
}

export class RestClient {
  constructor(
    readonly baseUrl: string,
    readonly projectId: string,
    /** Upper bound on any one call (quick runs stay bounded against a hung emulator). */
    readonly capMs: number = Number.POSITIVE_INFINITY,
  ) {}

  private get base(): string {
    return `${this.baseUrl}/bigquery/v2/projects/${encodeURIComponent(this.projectId)}`;
  }

  async request<T>(method: string, url: string, body: unknown, timeoutMs: number): Promise<T> {
    timeoutMs = Math.min(timeoutMs, this.capMs);
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      const name = e instanceof Error ? e.name : '';
      if (name === 'TimeoutError' || name === 'AbortError') throw new Error(`${method} ${url}: no answer within ${timeoutMs} ms`);
      throw new Error(`${method} ${url}: ${e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e)}`);
    }
    const text = await res.text();
    let json: unknown = undefined;
    try {
      json = text === '' ? {} : JSON.parse(text);
    } catch {
      // Non-JSON body: report it as is below.
    }
    if (!res.ok) {
      const msg = (json as { error?: { message?: string } } | undefined)?.error?.message ?? text.slice(0, 300);
      throw new RestError(`HTTP ${res.status}: ${msg}`, res.status);
    }
    if (json === undefined) throw new Error(`${method} ${url}: response is not JSON: ${text.slice(0, 200)}`);
    return json as T;
  }

  async healthz(timeoutMs = 2000): Promise<void> {
    await this.request<unknown>('GET', `${this.baseUrl}/healthz`, undefined, timeoutMs);
  }

  async createDataset(datasetId: string): Promise<void> {
    await this.request('POST', `${this.base}/datasets`, {
      datasetReference: { projectId: this.projectId, datasetId },
    }, 30_000);
  }

  async deleteDataset(datasetId: string): Promise<void> {
    await this.request('DELETE', `${this.base}/datasets/${datasetId}?deleteContents=true`, undefined, 60_000);
  }

  async createTable(datasetId: string, tableId: string, fields: RestField[]): Promise<void> {
    await this.request('POST', `${this.base}/datasets/${datasetId}/tables`, {
      tableReference: { projectId: this.projectId, datasetId, tableId },
      schema: { fields },
    }, 30_000);
  }

  /** Throws when the service reports per-row insert errors. */
  async insertAll(datasetId: string, tableId: string, body: string, timeoutMs = 60_000): Promise<void> {
    timeoutMs = Math.min(timeoutMs, this.capMs);
    // The body is pre-serialised by the caller so JSON.stringify is not timed.
    let res: Response;
    try {
      res = await fetch(`${this.base}/datasets/${datasetId}/tables/${tableId}/insertAll`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      throw new Error(`insertAll: ${e instanceof Error ? e.message : String(e)}`);
    }
    const text = await res.text();
    if (!res.ok) throw new RestError(`insertAll HTTP ${res.status}: ${text.slice(0, 300)}`, res.status);
    const json = JSON.parse(text || '{}') as InsertAllResponse;
    if (json.insertErrors && json.insertErrors.length > 0) {
      const first = json.insertErrors[0]!;
      throw new Error(`insertAll: ${json.insertErrors.length} rows rejected, first: ${first.errors[0]?.message ?? 'unknown'}`);
    }
  }

  /**
   * jobs.query as a client sees it: POST, poll while jobComplete is false,
   * then follow pageToken until the whole answer is in.
   */
  async query(sql: string, timeoutMs: number): Promise<QueryAnswer> {
    timeoutMs = Math.min(timeoutMs, this.capMs);
    const deadline = Date.now() + timeoutMs;
    const remaining = (): number => {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`query did not finish within ${timeoutMs} ms`);
      return left;
    };
    let r = await this.request<QueryResponse>('POST', `${this.base}/queries`, {
      query: sql,
      useLegacySql: false,
      formatOptions: { useInt64Timestamp: true },
      timeoutMs,
    }, remaining() + 1000);
    const jobId = r.jobReference?.jobId;
    const loc = r.jobReference?.location ? `&location=${encodeURIComponent(r.jobReference.location)}` : '';
    const results = (extra: string): string => {
      if (!jobId) throw new Error('query response has no jobReference.jobId to poll or page with');
      const wait = Math.min(remaining(), 10_000);
      return `${this.base}/queries/${encodeURIComponent(jobId)}?timeoutMs=${wait}${loc}${extra}`;
    };
    while (r.jobComplete === false) {
      r = await this.request<QueryResponse>('GET', results(''), undefined, remaining() + 1000);
    }
    const fields = r.schema?.fields ?? [];
    const rows = [...(r.rows ?? [])];
    const totalRows = Number(r.totalRows ?? rows.length);
    let pages = 1;
    while (r.pageToken) {
      r = await this.request<QueryResponse>('GET', results(`&pageToken=${encodeURIComponent(r.pageToken)}`), undefined, remaining() + 1000);
      rows.push(...(r.rows ?? []));
      pages++;
    }
    return { fields, rows, totalRows, pages };
  }
}
