// Minimal BigQuery v2 REST client over node:http with a keep-alive agent (as
// the client libraries keep connections). Not fetch: undici's fetch costs
// ~1 ms of client CPU per request on this 2-core machine (measured against a
// sink server: 1.06 ms vs 0.30 ms for node:http), which the sequential
// metrics would charge to the emulator. Every call has a timeout so a hung
// emulator turns into an error for that case instead of stalling the run.
import http from 'node:http';
import type { RestField, RestCell } from './compare.js';

const agent = new http.Agent({ keepAlive: true });

/** One HTTP exchange; resolves with the status and the whole body as text. */
function send(method: string, url: string, body: string | Buffer | undefined, timeoutMs: number, contentType = 'application/json'): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = typeof body === 'string' ? Buffer.from(body) : body;
    const headers: http.OutgoingHttpHeaders = payload === undefined ? {} : { 'content-type': contentType, 'content-length': payload.length };
    const req = http.request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(payload);
  });
}

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
    let res: { status: number; text: string };
    try {
      res = await send(method, url, body === undefined ? undefined : JSON.stringify(body), timeoutMs);
    } catch (e) {
      throw new Error(`${method} ${url}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const text = res.text;
    let json: unknown = undefined;
    try {
      json = text === '' ? {} : JSON.parse(text);
    } catch {
      // Non-JSON body: report it as is below.
    }
    if (res.status < 200 || res.status >= 300) {
      const msg = (json as { error?: { message?: string } } | undefined)?.error?.message ?? text.slice(0, 300);
      throw new RestError(`HTTP ${res.status}: ${msg}`, res.status);
    }
    if (json === undefined) throw new Error(`${method} ${url}: response is not JSON: ${text.slice(0, 200)}`);
    return json as T;
  }

  /** One exchange whose 2xx body is returned as text, unparsed (the paging metric times bytes apart from parsing). */
  async text(method: string, url: string, body: string | Buffer | undefined, timeoutMs: number, contentType?: string): Promise<string> {
    const res = await send(method, url, body, Math.min(timeoutMs, this.capMs), contentType);
    if (res.status < 200 || res.status >= 300) throw new RestError(`${method} ${url}: HTTP ${res.status}: ${res.text.slice(0, 300)}`, res.status);
    return res.text;
  }

  /** The project's REST base, `<url>/bigquery/v2/projects/<project>`. */
  get projectBase(): string {
    return this.base;
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

  async deleteTable(datasetId: string, tableId: string): Promise<void> {
    await this.request('DELETE', `${this.base}/datasets/${datasetId}/tables/${tableId}`, undefined, 30_000);
  }

  /** Throws when the service reports per-row insert errors. */
  async insertAll(datasetId: string, tableId: string, body: string | Buffer, timeoutMs = 60_000): Promise<void> {
    timeoutMs = Math.min(timeoutMs, this.capMs);
    // The body is pre-serialised by the caller so JSON.stringify is not timed.
    let res: { status: number; text: string };
    try {
      res = await send('POST', `${this.base}/datasets/${datasetId}/tables/${tableId}/insertAll`, body, timeoutMs);
    } catch (e) {
      throw new Error(`insertAll: ${e instanceof Error ? e.message : String(e)}`);
    }
    const text = res.text;
    if (res.status < 200 || res.status >= 300) throw new RestError(`insertAll HTTP ${res.status}: ${text.slice(0, 300)}`, res.status);
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

/** One statement over jobs.query with dataset `d` of `project` as the default, failing on an error or an unfinished job (bench/explore scripts). */
export async function queryDone(url: string, project: string, sql: string): Promise<void> {
  const r = await fetch(`${url}/bigquery/v2/projects/${project}/queries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: sql, useLegacySql: false, defaultDataset: { projectId: project, datasetId: 'd' }, timeoutMs: 600_000 }),
  });
  const body = (await r.json()) as { jobComplete?: boolean };
  if (!r.ok || body.jobComplete === false) throw new Error(`${sql}: ${r.status} ${JSON.stringify(body).slice(0, 300)}`);
}
