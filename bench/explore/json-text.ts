// Exploratory, not timed in CI: a 1M-row table with a JSON column of five
// fields and one with GEOGRAPHY points, read right after an engine start:
// the cold first query (JSON_VALUE SUM/COUNT), the engine's RSS after it, the
// same query warm, a WHERE on a JSON field, INT64 of a field, and Storage
// Read Arrow sessions of the JSON and GEOGRAPHY columns through the real
// client; GEOGRAPHY ST_X and ST_DISTANCE sums warm. Run it against builds alternately on one data dir (restarting the
// emulator between runs) to compare them under the same load.
//   node --import tsx bench/explore/json-text.ts http://127.0.0.1:9410 9411 --engine-pid=<pid> [--setup]
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
  await q(`CREATE OR REPLACE TABLE x.jt AS SELECT id, TO_JSON(STRUCT(id AS a, CONCAT('s', CAST(MOD(id, 1000) AS STRING)) AS s, MOD(id, 7) AS k, id * 0.25 AS f, MOD(id, 2) = 0 AS b)) AS j FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS id`);
  await q(`CREATE OR REPLACE TABLE x.geo AS SELECT id, ST_GEOGPOINT(MOD(id, 359) - 179 + 0.5, MOD(id, 169) - 84 + 0.25) AS g FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS id`);
  console.log('setup done');
  process.exit(0);
}

const opts = { apiEndpoint: '127.0.0.1', port: grpcPort, sslCreds: grpc.credentials.createInsecure(), projectId: 'p' } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0];
const client = new v1.BigQueryReadClient(opts);

/** A whole column through a Storage Read Arrow session; a checksum of its texts' lengths. */
async function readColumn(table: string, column: string): Promise<{ ms: number; rows: number; chars: number }> {
  const t = performance.now();
  const [session] = await client.createReadSession({ parent: 'projects/p', readSession: { table: `projects/p/datasets/x/tables/${table}`, dataFormat: 'ARROW', readOptions: { selectedFields: [column] } }, maxStreamCount: 1 });
  const schema = Buffer.from(session.arrowSchema!.serializedSchema as Uint8Array);
  let rows = 0;
  let chars = 0;
  for (const s of session.streams ?? []) {
    for await (const resp of client.readRows({ readStream: s.name!, offset: 0 })) {
      for (const batch of arrow.RecordBatchReader.from(Buffer.concat([schema, resp.arrowRecordBatch!.serializedRecordBatch as Uint8Array])).readAll()) {
        rows += batch.numRows;
        const d = batch.getChildAt(0)!.data[0]!;
        chars += d.valueOffsets[d.length]! - d.valueOffsets[0]!;
      }
    }
  }
  return { ms: performance.now() - t, rows, chars };
}

const med = (a: number[]): number => a.slice().sort((x, y) => x - y)[a.length >> 1]!;
async function timed(sql: string, n = 5): Promise<string> {
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
const agg = "SELECT SUM(CAST(JSON_VALUE(j, '$.a') AS INT64)), COUNT(JSON_VALUE(j, '$.s')) FROM x.jt";
const cold = await q(agg);
console.log('cold first query (JSON_VALUE SUM/COUNT)', cold.ms.toFixed(0), 'ms', JSON.stringify(cold.rows), '; engine RSS after it', rssMb().toFixed(0), 'MB');
console.log('JSON_VALUE SUM/COUNT warm', await timed(agg));
console.log("WHERE JSON_VALUE(j, '$.s') = 's7'", await timed("SELECT COUNT(*) FROM x.jt WHERE JSON_VALUE(j, '$.s') = 's7'"));
console.log('SUM(INT64(j.k))', await timed('SELECT SUM(INT64(j.k)) FROM x.jt'));
const sr: number[] = [];
let last = { rows: 0, chars: 0 };
for (let i = 0; i < 3; i++) {
  const r = await readColumn('jt', 'j');
  sr.push(r.ms);
  last = r;
}
console.log('Storage Read of j', med(sr).toFixed(0), 'ms', `(${sr.map((x) => x.toFixed(0)).join('/')})`, last.rows, 'rows', last.chars, 'chars');
console.log('engine RSS after the JSON reads', rssMb().toFixed(0), 'MB');
const gcold = await q('SELECT COUNT(*), SUM(ST_X(g)) FROM x.geo');
console.log('GEOGRAPHY first query (ST_X SUM)', gcold.ms.toFixed(0), 'ms', JSON.stringify(gcold.rows), '; engine RSS after it', rssMb().toFixed(0), 'MB');
console.log('GEOGRAPHY ST_X SUM warm', await timed('SELECT COUNT(*), SUM(ST_X(g)) FROM x.geo'));
console.log('GEOGRAPHY ST_DISTANCE SUM warm', await timed('SELECT ROUND(SUM(ST_DISTANCE(g, ST_GEOGPOINT(1, 2))), 0) FROM x.geo'));
const gs: number[] = [];
for (let i = 0; i < 3; i++) {
  const r = await readColumn('geo', 'g');
  gs.push(r.ms);
  last = r;
}
console.log('Storage Read of g', med(gs).toFixed(0), 'ms', `(${gs.map((x) => x.toFixed(0)).join('/')})`, last.rows, 'rows', last.chars, 'chars');
console.log('engine RSS at the end', rssMb().toFixed(0), 'MB');
await client.close();
