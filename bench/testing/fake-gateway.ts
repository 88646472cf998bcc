// A stand-in gateway for testing the bench runner itself while the real
// emulator is being built: the REST subset the runner uses, answered by
// DuckDB through the runner's own SQL translation. It spawns an idle child
// named "fake-engine" so the RSS code finds a gateway → engine pair.
// Not a reference for anything: only the runner's tests start it.
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { translateToDuckdb, translateType } from '../lib/sql-translate.js';
import { isoMicros, type RestField } from '../lib/compare.js';

const { values } = parseArgs({
  options: {
    'http-port': { type: 'string', default: '9050' },
    'grpc-port': { type: 'string', default: '9060' },
    'data-dir': { type: 'string' },
    'project-id': { type: 'string', default: 'test-project' },
  },
  strict: true,
});

const PAGE_ROWS = 500; // small on purpose, so the runner's paging is exercised
// Failure injection for the runner's robustness tests: a query whose text
// contains the substring makes the gateway exit, or never answer.
const CRASH_ON = process.env['FAKE_GATEWAY_CRASH_ON'] ?? '';
const HANG_ON = process.env['FAKE_GATEWAY_HANG_ON'] ?? '';
// Blocks the whole process (no CPU burnt), like a wedged event loop.
const FREEZE_ON = process.env['FAKE_GATEWAY_FREEZE_ON'] ?? '';

const engine = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)', 'fake-engine'], { stdio: 'ignore' });
const instance = await DuckDBInstance.create(':memory:');
const conn: DuckDBConnection = await instance.connect();

interface Job { fields: RestField[]; rows: { f: { v: unknown }[] }[] }
const jobs = new Map<string, Job>();
let jobSeq = 0;

function restType(duckType: string): { type: string; mode: string } {
  const t = duckType.toUpperCase();
  if (t.endsWith('[]')) return { type: restType(t.slice(0, -2)).type, mode: 'REPEATED' };
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UBIGINT|UINTEGER)$/.test(t)) return { type: 'INTEGER', mode: 'NULLABLE' };
  if (/^(FLOAT|DOUBLE)$/.test(t)) return { type: 'FLOAT', mode: 'NULLABLE' };
  if (t.startsWith('DECIMAL')) return { type: 'NUMERIC', mode: 'NULLABLE' };
  if (t === 'BOOLEAN') return { type: 'BOOLEAN', mode: 'NULLABLE' };
  if (t.startsWith('TIMESTAMP')) return { type: 'TIMESTAMP', mode: 'NULLABLE' };
  if (t === 'DATE') return { type: 'DATE', mode: 'NULLABLE' };
  return { type: 'STRING', mode: 'NULLABLE' };
}

function wire(type: string, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (Array.isArray(v)) return v.map((x) => ({ v: wire(type, x) }));
  if (type === 'TIMESTAMP') return String(isoMicros(String(v)));
  if (type === 'FLOAT' || type === 'BOOLEAN') return v;
  return String(v);
}

async function runQuery(sql: string): Promise<Job> {
  const reader = await conn.runAndReadAll(translateToDuckdb(sql, ''));
  if (/^\s*(CREATE|DROP|INSERT)/i.test(sql)) return { fields: [], rows: [] };
  const fields = reader.columnNames().map((name, i) => ({ name, ...restType(reader.columnTypes()[i]!.toString()) }));
  const rows = reader.getRowsJson().map((r) => ({ f: r.map((v, i) => ({ v: wire(fields[i]!.type, v) })) }));
  return { fields, rows };
}

function page(jobId: string, job: Job, start: number): object {
  const end = Math.min(job.rows.length, start + PAGE_ROWS);
  return {
    kind: 'bigquery#queryResponse', jobComplete: true,
    jobReference: { projectId: values['project-id'], jobId },
    schema: { fields: job.fields }, rows: job.rows.slice(start, end), totalRows: String(job.rows.length),
    ...(end < job.rows.length ? { pageToken: String(end) } : {}),
  };
}

function literal(field: RestField, v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (field.type === 'BOOLEAN' || field.type === 'FLOAT' || field.type === 'INTEGER') return String(v);
  const s = `'${String(v).replaceAll("'", "''")}'`;
  return field.type === 'TIMESTAMP' ? `CAST(${s.replace(/Z'$/, "'").replace('T', ' ')} AS TIMESTAMP)` : s;
}

const tables = new Map<string, RestField[]>();

/** jobs.insert resources by id (query jobs' results page as tables `_anon.<jobId>`). */
const jobResources = new Map<string, object>();
const uploads = mkdtempSync(path.join(tmpdir(), 'fake-gateway-'));

/** A load job: the file read by DuckDB into the destination table. */
async function load(cfg: Record<string, unknown>, file: string): Promise<object> {
  const dest = cfg['destinationTable'] as { datasetId: string; tableId: string };
  const format = String(cfg['sourceFormat'] ?? 'CSV');
  const reader = format === 'PARQUET' ? `read_parquet('${file}')` : format === 'NEWLINE_DELIMITED_JSON' ? `read_json('${file}', format = 'newline_delimited')` : `read_csv('${file}', header = ${Number(cfg['skipLeadingRows'] ?? 0) > 0})`;
  await conn.run(`CREATE OR REPLACE TABLE "${dest.datasetId}"."${dest.tableId}" AS SELECT * FROM ${reader}`);
  const n = (await conn.runAndReadAll(`SELECT COUNT(*) FROM "${dest.datasetId}"."${dest.tableId}"`)).getRowsJson()[0]![0];
  tables.set(`${dest.datasetId}.${dest.tableId}`, []);
  return { statistics: { load: { outputRows: String(n) } } };
}

/** jobs.insert: query and load jobs, DONE when answered. */
async function insertJob(body: Record<string, unknown>, file?: string): Promise<object> {
  const cfg = body['configuration'] as Record<string, Record<string, unknown>>;
  const jobId = `job_${++jobSeq}`;
  let extra: object;
  if (cfg['load']) {
    const uri = String((cfg['load']['sourceUris'] as string[] | undefined)?.[0] ?? '');
    extra = await load(cfg['load'], file ?? uri.replace(/^file:\/\//, ''));
  } else {
    jobs.set(jobId, await runQuery(String(cfg['query']!['query'])));
    extra = { configuration: { query: { ...cfg['query'], destinationTable: { projectId: values['project-id'], datasetId: '_anon', tableId: jobId } } } };
  }
  const job = { jobReference: { projectId: values['project-id'], jobId }, status: { state: 'DONE' }, configuration: cfg, ...extra };
  jobResources.set(jobId, job);
  return job;
}

/** A multipart/related upload: the job JSON part, then the data part (spooled to a file). */
function multipart(raw: Buffer, contentType: string): { config: Record<string, unknown>; data: Buffer } {
  const boundary = `--${/boundary=([^;]+)/.exec(contentType)![1]!}`;
  const parts: Buffer[] = [];
  for (let at = raw.indexOf(boundary); at >= 0; ) {
    const next = raw.indexOf(boundary, at + boundary.length);
    if (next < 0) break;
    const part = raw.subarray(at + boundary.length, next);
    const head = part.indexOf('\r\n\r\n');
    parts.push(part.subarray(head + 4, part.length - 2));
    at = next;
  }
  return { config: JSON.parse(parts[0]!.toString('utf8')) as Record<string, unknown>, data: parts[1]! };
}

async function route(method: string, url: URL, body: Record<string, unknown>, raw: Buffer, contentType: string): Promise<[number, object]> {
  const p = url.pathname.split('/').filter(Boolean);
  if (url.pathname === '/healthz' || url.pathname === '/') return [200, { service: 'fake-gateway', status: 'ok' }];
  if (method === 'POST' && p[0] === 'upload' && p[5] === 'jobs') {
    const { config, data } = multipart(raw, contentType);
    const file = path.join(uploads, `upload_${jobSeq}`);
    writeFileSync(file, data);
    return [200, await insertJob(config, file)];
  }
  // /bigquery/v2/projects/{p}/...
  const rest = p.slice(4);
  if (method === 'POST' && rest.length === 1 && rest[0] === 'datasets') {
    const ref = body['datasetReference'] as { datasetId: string };
    await conn.run(`CREATE SCHEMA "${ref.datasetId}"`);
    return [200, { datasetReference: ref }];
  }
  if (method === 'DELETE' && rest[0] === 'datasets' && rest.length === 2) {
    await conn.run(`DROP SCHEMA IF EXISTS "${rest[1]}" CASCADE`);
    return [204, {}];
  }
  if (method === 'POST' && rest[0] === 'datasets' && rest[2] === 'tables' && rest.length === 3) {
    const fields = (body['schema'] as { fields: RestField[] }).fields;
    const ref = body['tableReference'] as { tableId: string };
    const cols = fields.map((f) => `"${f.name}" ${f.type === 'NUMERIC' ? 'DECIMAL(38, 9)' : translateType(f.type === 'FLOAT' ? 'FLOAT64' : f.type === 'INTEGER' ? 'INT64' : f.type)}`);
    await conn.run(`CREATE TABLE "${rest[1]}"."${ref.tableId}" (${cols.join(', ')})`);
    tables.set(`${rest[1]}.${ref.tableId}`, fields);
    return [200, { tableReference: ref, schema: { fields } }];
  }
  if (method === 'DELETE' && rest[0] === 'datasets' && rest[2] === 'tables' && rest.length === 4) {
    if (!tables.delete(`${rest[1]}.${rest[3]}`)) return [404, { error: { code: 404, message: `Not found: Table ${rest[1]}.${rest[3]}` } }];
    await conn.run(`DROP TABLE "${rest[1]}"."${rest[3]}"`);
    return [204, {}];
  }
  if (method === 'POST' && rest[4] === 'insertAll') {
    const fields = tables.get(`${rest[1]}.${rest[3]}`);
    if (!fields) return [404, { error: { code: 404, message: `Not found: Table ${rest[1]}.${rest[3]}` } }];
    const rows = body['rows'] as { json: Record<string, unknown> }[];
    const tuples = rows.map((r) => `(${fields.map((f) => literal(f, r.json[f.name])).join(', ')})`);
    await conn.run(`INSERT INTO "${rest[1]}"."${rest[3]}" VALUES ${tuples.join(', ')}`);
    return [200, { kind: 'bigquery#tableDataInsertAllResponse' }];
  }
  if (method === 'POST' && rest.length === 1 && rest[0] === 'queries') {
    const sql = String(body['query']);
    if (CRASH_ON && sql.includes(CRASH_ON)) { engine.kill('SIGKILL'); process.exit(3); }
    if (HANG_ON && sql.includes(HANG_ON)) return new Promise(() => {});
    if (FREEZE_ON && sql.includes(FREEZE_ON)) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    const jobId = `job_${++jobSeq}`;
    const job = await runQuery(sql);
    jobs.set(jobId, job);
    // Every other job first answers "not complete", so the runner's polling runs too.
    if (jobSeq % 2 === 0) return [200, { jobComplete: false, jobReference: { projectId: values['project-id'], jobId } }];
    return [200, page(jobId, job, 0)];
  }
  if (method === 'POST' && rest.length === 1 && rest[0] === 'jobs') return [200, await insertJob(body)];
  if (method === 'GET' && rest[0] === 'jobs' && rest.length === 2) {
    const job = jobResources.get(rest[1]!);
    return job ? [200, job] : [404, { error: { code: 404, message: `Not found: Job ${rest[1]}` } }];
  }
  if (method === 'GET' && rest[0] === 'datasets' && rest[1] === '_anon' && rest[4] === 'data') {
    const job = jobs.get(rest[3]!);
    if (!job) return [404, { error: { code: 404, message: `Not found: Table _anon.${rest[3]}` } }];
    const { rows, totalRows, pageToken } = page(rest[3]!, job, Number(url.searchParams.get('pageToken') ?? 0)) as { rows: unknown[]; totalRows: string; pageToken?: string };
    return [200, { kind: 'bigquery#tableDataList', rows, totalRows, ...(pageToken ? { pageToken } : {}) }];
  }
  if (method === 'GET' && rest[0] === 'queries' && rest.length === 2) {
    const job = jobs.get(rest[1]!);
    if (!job) return [404, { error: { code: 404, message: `Not found: Job ${rest[1]}` } }];
    return [200, page(rest[1]!, job, Number(url.searchParams.get('pageToken') ?? 0))];
  }
  return [404, { error: { code: 404, message: `fake gateway: no route ${method} ${url.pathname}` } }];
}

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const raw = Buffer.concat(chunks);
    const contentType = req.headers['content-type'] ?? '';
    const body = (raw.length && !contentType.startsWith('multipart/') ? JSON.parse(raw.toString('utf8')) : {}) as Record<string, unknown>;
    route(req.method ?? 'GET', url, body, raw, contentType)
      .then(([status, obj]) => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(obj)); })
      .catch((e: unknown) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 400, message: e instanceof Error ? e.message : String(e) } }));
      });
  });
});
server.listen(Number(values['http-port']), '127.0.0.1');

const shutdown = (): void => {
  engine.kill('SIGKILL');
  server.close();
  process.exit(0);
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
