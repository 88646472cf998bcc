// Shared parts of the column-layout probes (interval-range.ts, json-text.ts):
// their command line (`<url> <grpc port> --engine-pid=<pid> [--setup]`), the
// engine's RSS, queries over REST timed (medians of repeated runs), and
// whole columns read through Storage Read Arrow sessions with the real client.
import * as grpc from '@grpc/grpc-js';
import { v1 } from '@google-cloud/bigquery-storage';
import * as arrow from 'apache-arrow';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

export const url = process.argv[2]!;
const grpcPort = Number(process.argv[3]);
export const setup = process.argv.includes('--setup');
const enginePid = process.argv.find((a) => a.startsWith('--engine-pid='))?.slice('--engine-pid='.length);
export const rssMb = (): number => (enginePid ? Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${enginePid}/status`, 'utf8'))![1]) / 1024 : 0);
export const loadLine = (): string => `load ${loadavg().map((x) => x.toFixed(2)).join(' ')} rss at start ${rssMb().toFixed(0)} MB`;

export async function q(sql: string): Promise<{ ms: number; rows: unknown }> {
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

export const med = (a: number[]): number => a.slice().sort((x, y) => x - y)[a.length >> 1]!;
const runs = (ms: number[]): string => `${med(ms).toFixed(0)} ms (${ms.map((x) => x.toFixed(0)).join('/')})`;

/** `sql` run n times: the median, every run, the last answer. */
export async function timed(sql: string, n: number): Promise<string> {
  const ms: number[] = [];
  let rows: unknown;
  for (let i = 0; i < n; i++) {
    const r = await q(sql);
    ms.push(r.ms);
    rows = r.rows;
  }
  return `${runs(ms)} ${JSON.stringify(rows)}`;
}

const opts = { apiEndpoint: '127.0.0.1', port: grpcPort, sslCreds: grpc.credentials.createInsecure(), projectId: 'p' } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0];
export const client = new v1.BigQueryReadClient(opts);

/** Table x.`table`'s `column` through a Storage Read Arrow session, 3 times: the median and every run, rows, bytes received, and `measure` summed over the batches. */
export async function readColumn(table: string, column: string, measure: (batch: arrow.RecordBatch) => number = () => 0): Promise<string> {
  const ms: number[] = [];
  let rows = 0;
  let bytes = 0;
  let measured = 0;
  for (let k = 0; k < 3; k++) {
    const t = performance.now();
    const [session] = await client.createReadSession({ parent: 'projects/p', readSession: { table: `projects/p/datasets/x/tables/${table}`, dataFormat: 'ARROW', readOptions: { selectedFields: [column] } }, maxStreamCount: 1 });
    const schema = Buffer.from(session.arrowSchema!.serializedSchema as Uint8Array);
    rows = bytes = measured = 0;
    for (const s of session.streams ?? []) {
      for await (const resp of client.readRows({ readStream: s.name!, offset: 0 })) {
        const body = resp.arrowRecordBatch!.serializedRecordBatch as Uint8Array;
        bytes += body.length;
        for (const batch of arrow.RecordBatchReader.from(Buffer.concat([schema, body])).readAll()) {
          rows += batch.numRows;
          measured += measure(batch);
        }
      }
    }
    ms.push(performance.now() - t);
  }
  return `${runs(ms)} ${rows} rows ${bytes} bytes${measured ? ` ${measured}` : ''}`;
}
