// Throughput of the edges (issue 19): a large query result paged out
// through REST, and load jobs from local files, each beside DuckDB doing the
// equivalent in-process (reading every row of the result into JS values;
// CREATE TABLE AS SELECT from the same file).
//
// Rows are the scale set's 8 columns: INT64 id, INT64 key with 1,000 values,
// INT64 key with ~N/2 values, FLOAT64, 12-char STRING with 10,000 values,
// DATE, TIMESTAMP, BOOL.
//
// Paging is timed as a client pages: every page's request until its whole
// body is in. The client's JSON.parse of each page is timed apart and left
// out of rows/s (it is the client's cost; reported as `parseMs`). The query
// itself runs before the clock starts (polled with maxResults=0).
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { MetricContext } from './context.js';
import { childPids } from './rss.js';
import type { ExtraMetrics, PagingRun, LoadRun } from '../lib/types.js';

const SOURCE = 'edge_src';

/** The 8-column rows 1..n as GoogleSQL (emulator) and as DuckDB SQL. */
function emulatorRowsSql(n: number): string {
  return `SELECT id, MOD(id, 1000) AS k1, DIV(id, 2) AS k2, id / 7 AS f, FORMAT('s%011d', MOD(id * 7919, 10000)) AS s, ` +
    `DATE_ADD(DATE '2020-01-01', INTERVAL MOD(id, 1500) DAY) AS d, TIMESTAMP_ADD(TIMESTAMP '2020-01-01 00:00:00 UTC', INTERVAL id SECOND) AS ts, ` +
    `MOD(id, 3) = 0 AS b FROM UNNEST(GENERATE_ARRAY(1, ${n})) AS id`;
}

function duckRowsSql(n: number): string {
  return `SELECT i AS id, i % 1000 AS k1, i // 2 AS k2, i / 7 AS f, printf('s%011d', (i * 7919) % 10000) AS s, ` +
    `DATE '2020-01-01' + CAST(i % 1500 AS INTEGER) AS d, CAST(TIMESTAMP '2020-01-01' + to_seconds(i) AS TIMESTAMPTZ) AS ts, ` +
    `i % 3 = 0 AS b FROM range(1, ${n + 1}) t(i)`;
}

const FIELDS = [
  { name: 'id', type: 'INTEGER' }, { name: 'k1', type: 'INTEGER' }, { name: 'k2', type: 'INTEGER' }, { name: 'f', type: 'FLOAT' },
  { name: 's', type: 'STRING' }, { name: 'd', type: 'DATE' }, { name: 'ts', type: 'TIMESTAMP' }, { name: 'b', type: 'BOOLEAN' },
];

interface JobResource {
  jobReference?: { jobId?: string; location?: string };
  status?: { state?: string; errorResult?: { message?: string } };
  configuration?: { query?: { destinationTable?: { datasetId: string; tableId: string } } };
  statistics?: { load?: { outputRows?: string } };
}

const rate = (rows: number, ms: number): number => Math.round(rows / (ms / 1000));

/** CPU ms (user + system) the gateway and its engine have used so far; null without a local emulator. */
function serverCpuMs(ctx: MetricContext): number | null {
  if (ctx.gatewayPid === null) return null;
  let ms = 0;
  for (const pid of [ctx.gatewayPid, ...childPids(ctx.gatewayPid)]) {
    try {
      const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      ms += ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS;
    } catch {
      return null;
    }
  }
  return Math.round(ms);
}
/** USER_HZ: 100 on Linux everywhere this runs. */
const CLOCK_TICKS = 100;

async function waitJob(ctx: MetricContext, job: JobResource): Promise<JobResource> {
  const c = ctx.client;
  const id = job.jobReference?.jobId ?? '';
  const loc = job.jobReference?.location ? `?location=${encodeURIComponent(job.jobReference.location)}` : '';
  const deadline = Date.now() + ctx.heavyTimeoutMs;
  while (job.status?.state !== 'DONE') {
    if (Date.now() > deadline) throw new Error(`job ${id} not DONE within ${ctx.heavyTimeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
    job = await c.request<JobResource>('GET', `${c.projectBase}/jobs/${id}${loc}`, undefined, 30_000);
  }
  if (job.status.errorResult) throw new Error(`job ${id}: ${job.status.errorResult.message ?? 'failed'}`);
  return job;
}

/** Pages `first` and every pageToken after it; the clock runs while requests are in flight. */
async function pageAll(ctx: MetricContext, url: (token: string | undefined) => string, expected: number): Promise<PagingRun> {
  let token: string | undefined;
  let rows = 0;
  let pages = 0;
  let bytes = 0;
  let fetchMs = 0;
  let parseMs = 0;
  const cpu0 = serverCpuMs(ctx);
  do {
    const t0 = performance.now();
    const text = await ctx.client.text('GET', url(token), undefined, ctx.heavyTimeoutMs);
    const t1 = performance.now();
    const page = JSON.parse(text) as { rows?: unknown[]; pageToken?: string };
    parseMs += performance.now() - t1;
    fetchMs += t1 - t0;
    bytes += text.length;
    rows += page.rows?.length ?? 0;
    pages++;
    token = page.pageToken;
  } while (token);
  const cpu1 = serverCpuMs(ctx);
  if (rows !== expected) throw new Error(`paged ${rows} rows, expected ${expected}`);
  return {
    rows, pages, mb: Math.round(bytes / 1e5) / 10, ms: Math.round(fetchMs), parseMs: Math.round(parseMs), rowsPerSec: rate(rows, fetchMs),
    serverCpuMs: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function withDuck<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  const inst = await DuckDBInstance.create(':memory:');
  const conn = await inst.connect();
  try {
    await conn.run("SET threads = 2");
    return await fn(conn);
  } finally {
    conn.closeSync();
    inst.closeSync();
  }
}

export async function measureResultPaging(ctx: MetricContext): Promise<NonNullable<ExtraMetrics['resultPaging']>> {
  const n = ctx.sizes.pagingRows;
  const c = ctx.client;
  await c.query(`CREATE TABLE ${ctx.dataset}.${SOURCE} AS ${emulatorRowsSql(n)}`, ctx.heavyTimeoutMs);
  const inserted = await c.request<JobResource>('POST', `${c.projectBase}/jobs`, {
    configuration: { query: { query: `SELECT * FROM ${ctx.dataset}.${SOURCE}`, useLegacySql: false } },
  }, ctx.heavyTimeoutMs);
  const job = await waitJob(ctx, inserted);
  const id = job.jobReference!.jobId!;
  const loc = job.jobReference?.location ? `&location=${encodeURIComponent(job.jobReference.location)}` : '';
  const dest = job.configuration?.query?.destinationTable;
  if (!dest) throw new Error('the query job names no destinationTable');
  // As the Node client pages a result (no maxResults: the server's page size).
  const results = (max: string) => (token: string | undefined): string =>
    `${c.projectBase}/queries/${id}?formatOptions.useInt64Timestamp=true${loc}${max}${token ? `&pageToken=${token}` : ''}`;
  const runs: PagingRun[] = [];
  for (let i = 0; i < ctx.sizes.pagingRuns; i++) runs.push(await pageAll(ctx, results(''), n));
  const getQueryResults = runs.find((r) => r.rowsPerSec === median(runs.map((x) => x.rowsPerSec)))!;
  // A client that asks for large pages.
  const largePages = await pageAll(ctx, results('&maxResults=100000'), n);
  // tabledata.list of the result table, as `bq head` / the Node client's table.getRows page it.
  const tabledata = await pageAll(ctx, (token) =>
    `${c.projectBase}/datasets/${dest.datasetId}/tables/${dest.tableId}/data?formatOptions.useInt64Timestamp=true${token ? `&pageToken=${token}` : ''}`, n);
  let duckdbRowsPerSec: number | null = null;
  if (ctx.duckdb) {
    duckdbRowsPerSec = await withDuck(async (conn) => {
      await conn.run(`CREATE TABLE t AS ${duckRowsSql(n)}`);
      const t0 = performance.now();
      const rows = (await conn.runAndReadAll('SELECT * FROM t')).getRowsJson();
      if (rows.length !== n) throw new Error(`DuckDB read ${rows.length} rows`);
      return rate(n, performance.now() - t0);
    });
  }
  await c.deleteTable(ctx.dataset, SOURCE).catch(() => undefined);
  return {
    status: 'ok', rows: n, columns: FIELDS.length, getQueryResults, getQueryResultsRuns: runs.map((r) => r.rowsPerSec), largePages, tabledata,
    duckdbRowsPerSec, ratio: duckdbRowsPerSec ? Math.round((duckdbRowsPerSec / getQueryResults.rowsPerSec) * 100) / 100 : null,
  };
}

/** Writes the rows as parquet, CSV (with a header) and newline-delimited JSON into `dir`. */
async function writeFiles(dir: string, n: number): Promise<Record<'PARQUET' | 'CSV' | 'NEWLINE_DELIMITED_JSON', string>> {
  const files = { PARQUET: path.join(dir, 'rows.parquet'), CSV: path.join(dir, 'rows.csv'), NEWLINE_DELIMITED_JSON: path.join(dir, 'rows.json') };
  await withDuck(async (conn) => {
    await conn.run(`CREATE TABLE g AS ${duckRowsSql(n)}`);
    await conn.run(`COPY g TO '${files.PARQUET}' (FORMAT parquet)`);
    const text = "SELECT id, k1, k2, f, s, d, strftime(ts, '%Y-%m-%d %H:%M:%S') AS ts, b FROM g";
    await conn.run(`COPY (${text}) TO '${files.CSV}' (HEADER)`);
    await conn.run(`COPY (${text}) TO '${files.NEWLINE_DELIMITED_JSON}' (FORMAT json)`);
  });
  return files;
}

function loadConfig(ctx: MetricContext, table: string, format: string, uri?: string): Record<string, unknown> {
  return {
    configuration: {
      load: {
        ...(uri ? { sourceUris: [uri] } : {}),
        sourceFormat: format,
        destinationTable: { projectId: ctx.client.projectId, datasetId: ctx.dataset, tableId: table },
        writeDisposition: 'WRITE_TRUNCATE',
        ...(format === 'PARQUET' ? {} : { schema: { fields: FIELDS } }),
        ...(format === 'CSV' ? { skipLeadingRows: 1 } : {}),
      },
    },
  };
}

async function timedLoad(ctx: MetricContext, n: number, bytes: number, start: () => Promise<JobResource>): Promise<LoadRun> {
  const t0 = performance.now();
  const cpu0 = serverCpuMs(ctx);
  const job = await waitJob(ctx, await start());
  const ms = performance.now() - t0;
  const cpu1 = serverCpuMs(ctx);
  const out = Number(job.statistics?.load?.outputRows ?? -1);
  if (out !== n) throw new Error(`load reported ${out} rows, expected ${n}`);
  return { ms: Math.round(ms), mb: Math.round(bytes / 1e5) / 10, rowsPerSec: rate(n, ms), serverCpuMs: cpu0 === null || cpu1 === null ? null : cpu1 - cpu0 };
}

/** A multipart upload (job JSON + file bytes), as the client libraries send a load from a local file. */
async function uploadLoad(ctx: MetricContext, file: string, config: Record<string, unknown>): Promise<JobResource> {
  const { readFileSync } = await import('node:fs');
  const boundary = `edges${Date.now()}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify(config)}\r\n--${boundary}\r\nContent-Type: application/octet-stream\r\n\r\n`),
    readFileSync(file),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const c = ctx.client;
  const url = `${c.baseUrl}/upload/bigquery/v2/projects/${encodeURIComponent(c.projectId)}/jobs?uploadType=multipart`;
  const text = await c.text('POST', url, body, ctx.heavyTimeoutMs, `multipart/related; boundary=${boundary}`);
  return JSON.parse(text) as JobResource;
}

export async function measureLoadJobs(ctx: MetricContext): Promise<NonNullable<ExtraMetrics['loadJobs']>> {
  const n = ctx.sizes.loadJobRows;
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-edges-'));
  try {
    const files = await writeFiles(dir, n);
    const c = ctx.client;
    const formats: Record<string, LoadRun> = {};
    for (const [format, file] of Object.entries(files)) {
      formats[format] = await timedLoad(ctx, n, statSync(file).size, () =>
        c.request<JobResource>('POST', `${c.projectBase}/jobs`, loadConfig(ctx, `load_${format.toLowerCase()}`, format, `file://${file}`), ctx.heavyTimeoutMs));
    }
    const upload = await timedLoad(ctx, n, statSync(files.CSV).size, () => uploadLoad(ctx, files.CSV, loadConfig(ctx, 'load_upload', 'CSV')));
    const duckdb: Record<string, number> = {};
    if (ctx.duckdb) {
      await withDuck(async (conn) => {
        const readers: Record<string, string> = { PARQUET: `read_parquet('${files.PARQUET}')`, CSV: `read_csv('${files.CSV}', header = true)`, NEWLINE_DELIMITED_JSON: `read_json('${files.NEWLINE_DELIMITED_JSON}', format = 'newline_delimited')` };
        for (const [format, reader] of Object.entries(readers)) {
          const t0 = performance.now();
          await conn.run(`CREATE OR REPLACE TABLE t AS SELECT * FROM ${reader}`);
          duckdb[format] = rate(n, performance.now() - t0);
        }
      });
    }
    for (const f of [...Object.keys(files), 'upload']) await c.deleteTable(ctx.dataset, `load_${f.toLowerCase()}`).catch(() => undefined);
    return { status: 'ok', rows: n, columns: FIELDS.length, formats, upload, duckdbRowsPerSec: duckdb };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
