// Exploratory, not timed in CI: a Storage Read Arrow session over 1M rows of
// ARRAY<STRUCT<a INT64, b STRING>> (0, 1 or 2 elements a row: 1M structs),
// read whole through the real client (@google-cloud/bigquery-storage) on the
// engine's gRPC port; the messages are decoded by apache-arrow to count rows
// and elements. Prints the first read (after `--setup`, or after a restart)
// and the median of the next reads; with the engine's pid, also the engine's
// CPU time per read (wall time is load-dependent on a shared machine).
//   node --import tsx bench/explore/storage-read-nested.ts http://127.0.0.1:9401 9402 [--setup] [--engine-pid=<pid>]
import * as grpc from '@grpc/grpc-js';
import { v1 } from '@google-cloud/bigquery-storage';
import * as arrow from 'apache-arrow';
import { readFileSync } from 'node:fs';

const url = process.argv[2]!;
const grpcPort = Number(process.argv[3]);
const setup = process.argv.includes('--setup');
const N = 1_000_000;
const enginePid = process.argv.find((a) => a.startsWith('--engine-pid='))?.slice('--engine-pid='.length);
/** The engine's user + system CPU milliseconds so far (/proc, clock ticks of 10 ms). */
const engineCpu = (): number => {
  if (!enginePid) return 0;
  const f = readFileSync(`/proc/${enginePid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};

async function q(sql: string): Promise<void> {
  let r = await fetch(`${url}/bigquery/v2/projects/p/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: sql, useLegacySql: false, timeoutMs: 600000 }) });
  let j = (await r.json()) as { jobComplete?: boolean; jobReference?: { jobId: string }; error?: unknown };
  while (j.jobComplete === false) {
    r = await fetch(`${url}/bigquery/v2/projects/p/queries/${j.jobReference?.jobId}?timeoutMs=600000`);
    j = (await r.json()) as typeof j;
  }
  if (j.error) throw new Error(`${sql}: ${JSON.stringify(j.error)}`);
}

if (setup) {
  await q('CREATE SCHEMA IF NOT EXISTS x');
  const el = (j: number): string => `STRUCT(id * 10 + ${j} AS a, CONCAT('s', CAST(MOD(id * 13 + ${j}, 5000) AS STRING)) AS b)`;
  await q(`CREATE OR REPLACE TABLE x.sr AS SELECT id, CASE MOD(id, 3) WHEN 0 THEN [] WHEN 1 THEN [${el(0)}] ELSE [${el(0)}, ${el(1)}] END AS items FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS id`);
}

const opts = { apiEndpoint: '127.0.0.1', port: grpcPort, sslCreds: grpc.credentials.createInsecure(), projectId: 'p' } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0];
const client = new v1.BigQueryReadClient(opts);

async function readAll(): Promise<{ ms: number; cpu: number; rows: number; elems: number; bytes: number }> {
  const t = performance.now();
  const c = engineCpu();
  const [session] = await client.createReadSession({ parent: 'projects/p', readSession: { table: 'projects/p/datasets/x/tables/sr', dataFormat: 'ARROW', readOptions: { selectedFields: ['items'] } }, maxStreamCount: 1 });
  const schema = Buffer.from(session.arrowSchema!.serializedSchema as Uint8Array);
  let rows = 0, elems = 0, bytes = 0;
  for (const s of session.streams ?? []) {
    for await (const resp of client.readRows({ readStream: s.name!, offset: 0 })) {
      const b = resp.arrowRecordBatch!.serializedRecordBatch as Uint8Array;
      bytes += b.length;
      for (const batch of arrow.RecordBatchReader.from(Buffer.concat([schema, b])).readAll()) {
        rows += batch.numRows;
        const items = batch.getChildAt(0)!.data[0]!;
        elems += items.valueOffsets[items.length]! - items.valueOffsets[0]!;
      }
    }
  }
  return { ms: performance.now() - t, cpu: engineCpu() - c, rows, elems, bytes };
}

console.log('load', (await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' '));
const first = await readAll();
console.log('first read', first.ms.toFixed(0), 'ms', 'engine cpu', first.cpu, 'ms', first.rows, 'rows', first.elems, 'elements', (first.bytes / 1e6).toFixed(1), 'MB');
const next: number[] = [];
const cpu: number[] = [];
for (let i = 0; i < 5; i++) {
  const r = await readAll();
  next.push(r.ms);
  cpu.push(r.cpu);
}
const med = (a: number[]): number => a.slice().sort((x, y) => x - y)[2]!;
console.log('next reads median', med(next).toFixed(0), 'ms', 'min', Math.min(...next).toFixed(0), 'max', Math.max(...next).toFixed(0), '; engine cpu median', med(cpu), 'ms');
await client.close();
