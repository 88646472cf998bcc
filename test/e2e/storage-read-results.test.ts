// A query job's anonymous destination table read through the Storage Read
// API with the real client (@google-cloud/bigquery-storage), as client
// libraries read large query results: every row over several streams, a row
// restriction, Arrow and Avro, and the same after kill -9 of the engine.
import { execFileSync } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import { BigQuery } from '@google-cloud/bigquery';
import { v1 } from '@google-cloud/bigquery-storage';
import avro from 'avsc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const N = 30_000;

describe('Storage Read API on anonymous query results', () => {
  let emu: Emulator;
  let gapic: v1.BigQueryReadClient;
  let table = '';

  const connect = (): void => {
    const opts = { apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: 'rr' } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0];
    gapic = new v1.BigQueryReadClient(opts);
  };

  async function readAvro(rowRestriction = '', maxStreamCount = 0): Promise<{ streams: number; rows: { x: number; m: number; s: string }[] }> {
    const [session] = await gapic.createReadSession({ parent: 'projects/rr', readSession: { table, dataFormat: 'AVRO', readOptions: { rowRestriction } }, maxStreamCount });
    const type = avro.Type.forSchema(JSON.parse(session.avroSchema!.schema!));
    const rows: { x: number; m: number; s: string }[] = [];
    for (const s of session.streams ?? []) {
      for await (const resp of gapic.readRows({ readStream: s.name!, offset: 0 })) {
        let buf = Buffer.from(resp.avroRows!.serializedBinaryRows as Uint8Array);
        while (buf.length > 0) {
          const { value, offset } = type.decode(buf, 0);
          const r = value as { x: number; m: number; s: string };
          rows.push({ x: Number(r.x), m: Number(r.m), s: r.s });
          buf = buf.subarray(offset);
        }
      }
    }
    return { streams: (session.streams ?? []).length, rows: rows.sort((a, b) => a.x - b.x) };
  }

  const expected = Array.from({ length: N }, (_, i) => ({ x: i + 1, m: (i + 1) % 7, s: `v${i + 1}` }));

  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    emu = await startEmulator({ args: ['--project-id', 'rr'] });
    const bq = new BigQuery({ projectId: 'rr', apiEndpoint: emu.url, authClient: fakeAuth() });
    const [job] = await bq.createQueryJob({ query: `SELECT x, MOD(x, 7) AS m, CONCAT('v', CAST(x AS STRING)) AS s FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS x` });
    await job.getQueryResults({ maxResults: 1 });
    const [meta] = await job.getMetadata();
    const dest = meta.configuration.query.destinationTable as { projectId: string; datasetId: string; tableId: string };
    expect(dest.datasetId.startsWith('_')).toBe(true);
    table = `projects/${dest.projectId}/datasets/${dest.datasetId}/tables/${dest.tableId}`;
    connect();
  }, 120_000);
  afterAll(async () => {
    await gapic?.close();
    await emu?.stop();
  });

  it('reads every row of the result over several streams (Avro)', async () => {
    const all = await readAvro('', 3);
    expect(all.streams).toBe(3);
    expect(all.rows).toEqual(expected);
  });

  it('filters with a row restriction and answers Arrow', async () => {
    const sixes = await readAvro('m = 6');
    expect(sixes.rows).toEqual(expected.filter((r) => r.m === 6));
    const [session] = await gapic.createReadSession({ parent: 'projects/rr', readSession: { table, dataFormat: 'ARROW', readOptions: { rowRestriction: "s = 'v12345'" } } });
    expect(Number(session.estimatedRowCount)).toBe(1);
    const { RecordBatchReader, Table } = await import('apache-arrow');
    const schema = Buffer.from(session.arrowSchema!.serializedSchema as Uint8Array);
    const got: unknown[][] = [];
    for await (const resp of gapic.readRows({ readStream: session.streams![0]!.name!, offset: 0 })) {
      const t = new Table(RecordBatchReader.from(Buffer.concat([schema, Buffer.from(resp.arrowRecordBatch!.serializedRecordBatch as Uint8Array)])).readAll());
      for (let i = 0; i < t.numRows; i++) got.push([Number(t.getChild('x')!.get(i)), Number(t.getChild('m')!.get(i)), t.getChild('s')!.get(i)]);
    }
    expect(got).toEqual([[12345, 12345 % 7, 'v12345']]);
  });

  it('a missing result table is NOT_FOUND; the result reads the same after kill -9 of the engine', async () => {
    await expect(gapic.createReadSession({ parent: 'projects/rr', readSession: { table: table.replace(/tables\/.*/, 'tables/anon_nope'), dataFormat: 'AVRO' } }))
      .rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    const pid = Number(execFileSync('pgrep', ['-P', String(emu.proc.pid)]).toString().trim().split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    await gapic.close();
    for (let t0 = Date.now(); ; ) {
      if ((await rest(`${emu.url}/bigquery/v2/projects/rr/datasets`)).status === 200) break;
      if (Date.now() - t0 > 30_000) throw new Error('engine did not come back');
      await new Promise((r) => setTimeout(r, 100));
    }
    connect();
    expect((await readAvro()).rows).toEqual(expected);
  }, 60_000);
});
