// Read sessions with `table_modifiers.snapshot_time` through the real Storage
// Read client (@google-cloud/bigquery-storage): a past instant reads the table
// as it was then (after appends, after DML that replaced its rows), across an
// engine restart too; before the table existed or outside the 7-day window is
// INVALID_ARGUMENT with the service's "Invalid snapshot time" message.
import { execFileSync } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import { BigQuery } from '@google-cloud/bigquery';
import { v1 } from '@google-cloud/bigquery-storage';
import avro from 'avsc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const TABLE = 'projects/ss/datasets/ds/tables/t';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const ts = (ms: number): { seconds: number; nanos: number } => ({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 });

describe('Storage Read API: snapshot_time', () => {
  let emu: Emulator;
  let gapic: v1.BigQueryReadClient;
  let bq: BigQuery;
  /** Instants after each change, and the (id, v) rows live then. */
  const marks: { ms: number; rows: [number, string][] }[] = [];
  let createdMs = 0;

  const connect = (): void => {
    const opts = { apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: 'ss' } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0];
    gapic = new v1.BigQueryReadClient(opts);
  };

  async function read(snapshotMs: number | undefined, format: 'AVRO' | 'ARROW' = 'AVRO'): Promise<[number, string][]> {
    const [session] = await gapic.createReadSession({
      parent: 'projects/ss',
      readSession: { table: TABLE, dataFormat: format, ...(snapshotMs !== undefined ? { tableModifiers: { snapshotTime: ts(snapshotMs) } } : {}) },
    });
    const out: [number, string][] = [];
    if (format === 'AVRO') {
      const type = avro.Type.forSchema(JSON.parse(session.avroSchema!.schema!));
      for (const s of session.streams ?? []) {
        for await (const resp of gapic.readRows({ readStream: s.name!, offset: 0 })) {
          let buf = Buffer.from(resp.avroRows!.serializedBinaryRows as Uint8Array);
          while (buf.length > 0) {
            const { value, offset } = type.decode(buf, 0);
            const r = value as { id: number; v: string | null };
            out.push([Number(r.id), String(r.v)]);
            buf = buf.subarray(offset);
          }
        }
      }
    } else {
      const { RecordBatchReader, Table } = await import('apache-arrow');
      const schemaBytes = Buffer.from(session.arrowSchema!.serializedSchema as Uint8Array);
      for (const s of session.streams ?? []) {
        for await (const resp of gapic.readRows({ readStream: s.name!, offset: 0 })) {
          const bytes = Buffer.concat([schemaBytes, Buffer.from(resp.arrowRecordBatch!.serializedRecordBatch as Uint8Array)]);
          const t = new Table(RecordBatchReader.from(bytes).readAll());
          for (let i = 0; i < t.numRows; i++) out.push([Number(t.getChild('id')!.get(i)), String(t.getChild('v')!.get(i))]);
        }
      }
    }
    return out.sort((a, b) => a[0] - b[0]);
  }

  async function mark(): Promise<void> {
    await sleep(20);
    const [rows] = await bq.query({ query: 'SELECT id, v FROM ds.t ORDER BY id' });
    marks.push({ ms: Date.now(), rows: (rows as { id: number; v: string }[]).map((r) => [Number(r.id), String(r.v)]) });
    await sleep(20);
  }

  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    emu = await startEmulator({ args: ['--project-id', 'ss'] });
    bq = new BigQuery({ projectId: 'ss', apiEndpoint: emu.url, authClient: fakeAuth() });
    await bq.createDataset('ds');
    await bq.query({ query: 'CREATE TABLE ds.t (id INT64, v STRING)' });
    createdMs = Number((await rest(`${emu.url}/bigquery/v2/projects/ss/datasets/ds/tables/t`)).body.creationTime);
    await mark(); // empty
    // Rows by DML, not insertAll: streamed rows stay in the streaming buffer, which the UPDATE below may not change.
    await bq.query({ query: "INSERT ds.t VALUES (1, 'a'), (2, 'b')" });
    await mark();
    await bq.query({ query: "INSERT ds.t VALUES (3, 'c')" });
    await mark();
    await bq.query({ query: "UPDATE ds.t SET v = CONCAT(v, '!') WHERE id >= 2" }); // replaces the rows: a new generation
    await mark();
    await bq.query({ query: 'DELETE FROM ds.t WHERE id = 1' });
    await mark();
    connect();
  }, 120_000);
  afterAll(async () => {
    await gapic?.close();
    await emu?.stop();
  });

  it('a past snapshot_time reads the rows live at that instant (Avro and Arrow)', async () => {
    expect(marks.map((m) => m.rows.length)).toEqual([0, 2, 3, 3, 2]);
    for (const m of marks) expect(await read(m.ms)).toEqual(m.rows);
    expect(await read(marks[2]!.ms, 'ARROW')).toEqual([[1, 'a'], [2, 'b'], [3, 'c']]);
    expect(await read(marks[3]!.ms, 'ARROW')).toEqual([[1, 'a'], [2, 'b!'], [3, 'c!']]);
    // No modifier, or an instant not yet reached: the rows now.
    expect(await read(undefined)).toEqual([[2, 'b!'], [3, 'c!']]);
    expect(await read(Date.now() + 60_000)).toEqual([[2, 'b!'], [3, 'c!']]);
  });

  it('the session echoes the modifier; an empty past has no streams', async () => {
    const [session] = await gapic.createReadSession({ parent: 'projects/ss', readSession: { table: TABLE, dataFormat: 'AVRO', tableModifiers: { snapshotTime: ts(marks[0]!.ms) } } });
    expect(Number(session.tableModifiers!.snapshotTime!.seconds)).toBe(Math.floor(marks[0]!.ms / 1000));
    expect(session.streams ?? []).toHaveLength(0);
    expect(Number(session.estimatedRowCount)).toBe(0);
  });

  it('before the table existed or beyond 7 days: INVALID_ARGUMENT "Invalid snapshot time"', async () => {
    for (const ms of [createdMs - 60_000, Date.now() - 8 * 24 * 3600 * 1000]) {
      const err = await read(ms).then(() => undefined, (e: unknown) => e as { code: number; details: string });
      expect(err, String(ms)).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
      expect(err!.details).toContain(`Invalid snapshot time ${ms} for table ss:ds.t`);
      expect(err!.details).toMatch(/Cannot read before \d+/);
    }
  });

  it('the history survives an engine restart', async () => {
    const pid = Number(execFileSync('pgrep', ['-P', String(emu.proc.pid)]).toString().trim().split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    await gapic.close();
    for (let t0 = Date.now(); ; ) {
      if ((await rest(`${emu.url}/bigquery/v2/projects/ss/datasets`)).status === 200) break;
      if (Date.now() - t0 > 30_000) throw new Error('engine did not come back');
      await sleep(100);
    }
    connect();
    for (const m of marks) expect(await read(m.ms)).toEqual(m.rows);
  }, 60_000);
});
