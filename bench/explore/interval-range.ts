// Exploratory, not timed in CI: a 1M-row table with an INTERVAL and a
// RANGE<DATE> column, read right after an engine start: the cold first query,
// the engine's RSS after it, warm filters / aggregates over each column, and
// Storage Read Arrow sessions of each column through the real client. Run it
// against builds alternately on one data dir (restarting the emulator
// between runs) to compare them under the same load.
//   node --import tsx bench/explore/interval-range.ts http://127.0.0.1:9460 9461 --engine-pid=<pid> [--setup]
import * as grpc from '@grpc/grpc-js';
import { v1 } from '@google-cloud/bigquery-storage';
import * as arrow from 'apache-arrow';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

const url = process.argv[2]!;
const grpcPort = Number(process.argv[3]);
const setup = process.argv.includes('--setup');
const N = 1_000_000;
const enginePid = process.argv.find((a) => a.startsWith('--engine-pid='))?.slice('--engine-pid='.length);
const rssMb = (): number => (enginePid ? Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${enginePid}/status`, 'utf8'))![1]) / 1024 : 0);

async function q(sql: string): Promise<{ ms: number; rows: unknown }> {
  const t = performance.now();
  let r = await fetch(`${url}/bigquery/v2/projects/p/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: sql, useLegacySql: false, timeoutMs: 600000 }) });
  let j = (await r.json()) as { jobComplete?: boolean; jobReference?: { jobId: string }; error?: unknown; rows?: { f: { v: unknown }[] }[] };
  while (j.jobComplete === false) {
    r = await fetch(`${url}/bigquery/v2/projects/p/queries/${j.jobReference?.jobId}?timeoutMs=600000`);
    j = (await r.json()) as typeof j;
  }
  if (j.error) throw new Error(`${sql}: ${JSON.stringify(j.error)}`);
  return { ms: performance.now() - t, rows: j.rows?.map((x) => x.f.map((c) => c.v)) };
}

if (setup) {
  await q('CREATE SCHEMA IF NOT EXISTS x');
  // 10% NULL intervals, 10% NULL ranges, 10% unbounded ends.
  await q(`CREATE OR REPLACE TABLE x.ir AS SELECT id,
    IF(MOD(id, 10) = 0, NULL, MAKE_INTERVAL(0, MOD(id, 25) - 12, MOD(id, 61) - 30, MOD(id, 49), MOD(id, 59), MOD(id * 7, 3600))) AS i,
    IF(MOD(id, 10) = 1, NULL, RANGE(DATE_ADD(DATE '2000-01-01', INTERVAL MOD(id, 9000) DAY), IF(MOD(id, 10) = 2, NULL, DATE_ADD(DATE '2000-01-01', INTERVAL MOD(id, 9000) + 1 + MOD(id, 400) DAY)))) AS rd
    FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS id`);
  console.log('setup done');
  process.exit(0);
}

const opts = { apiEndpoint: '127.0.0.1', port: grpcPort, sslCreds: grpc.credentials.createInsecure(), projectId: 'p' } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0];
const client = new v1.BigQueryReadClient(opts);

/** A whole column through a Storage Read Arrow session: rows and the bytes of its buffers received. */
async function readColumn(column: string): Promise<{ ms: number; rows: number; bytes: number }> {
  const t = performance.now();
  const [session] = await client.createReadSession({ parent: 'projects/p', readSession: { table: 'projects/p/datasets/x/tables/ir', dataFormat: 'ARROW', readOptions: { selectedFields: [column] } }, maxStreamCount: 1 });
  const schema = Buffer.from(session.arrowSchema!.serializedSchema as Uint8Array);
  let rows = 0;
  let bytes = 0;
  for (const s of session.streams ?? []) {
    for await (const resp of client.readRows({ readStream: s.name!, offset: 0 })) {
      const body = resp.arrowRecordBatch!.serializedRecordBatch as Uint8Array;
      bytes += body.length;
      for (const batch of arrow.RecordBatchReader.from(Buffer.concat([schema, body])).readAll()) rows += batch.numRows;
    }
  }
  return { ms: performance.now() - t, rows, bytes };
}

const med = (a: number[]): number => a.slice().sort((x, y) => x - y)[a.length >> 1]!;
async function timed(sql: string, n = 3): Promise<string> {
  const ms: number[] = [];
  let rows: unknown;
  for (let i = 0; i < n; i++) {
    const r = await q(sql);
    ms.push(r.ms);
    rows = r.rows;
  }
  return `${med(ms).toFixed(0)} ms (${ms.map((x) => x.toFixed(0)).join('/')}) ${JSON.stringify(rows)}`;
}

console.log('load', loadavg().map((x) => x.toFixed(2)).join(' '), 'rss at start', rssMb().toFixed(0), 'MB');
const first = 'SELECT COUNT(i), COUNT(rd) FROM x.ir';
const cold = await q(first);
console.log('cold first query (COUNT of both)', cold.ms.toFixed(0), 'ms', JSON.stringify(cold.rows), '; engine RSS after it', rssMb().toFixed(0), 'MB');
console.log("INTERVAL filter: COUNTIF(i > INTERVAL 1 DAY)", await timed('SELECT COUNTIF(i > INTERVAL 1 DAY) FROM x.ir'));
console.log('INTERVAL ORDER BY i DESC LIMIT 5', await timed('SELECT i FROM x.ir ORDER BY i DESC LIMIT 5'));
console.log('INTERVAL MAX/MIN', await timed('SELECT MAX(i), MIN(i) FROM x.ir'));
console.log("RANGE filter: COUNTIF(RANGE_CONTAINS(rd, DATE '2010-06-01'))", await timed("SELECT COUNTIF(RANGE_CONTAINS(rd, DATE '2010-06-01')) FROM x.ir"));
console.log('RANGE aggregate: MIN(RANGE_START(rd)), MAX(RANGE_END(rd))', await timed('SELECT MIN(RANGE_START(rd)), MAX(RANGE_END(rd)) FROM x.ir'));
console.log('engine RSS after the queries', rssMb().toFixed(0), 'MB');
for (const c of ['i', 'rd']) {
  const sr: number[] = [];
  let last = { rows: 0, bytes: 0 };
  for (let k = 0; k < 3; k++) {
    const r = await readColumn(c);
    sr.push(r.ms);
    last = r;
  }
  console.log(`Storage Read of ${c}`, med(sr).toFixed(0), 'ms', `(${sr.map((x) => x.toFixed(0)).join('/')})`, last.rows, 'rows', last.bytes, 'bytes');
}
console.log('engine RSS at the end', rssMb().toFixed(0), 'MB');
await client.close();
