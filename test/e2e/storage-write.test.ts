// The Storage Write API through the real client library's managed writer
// (@google-cloud/bigquery-storage: WriterClient + JSONWriter) on the engine's
// gRPC port: the default stream, PENDING streams with offsets, finalize and
// batch commit, BUFFERED streams with flush, row errors, a PENDING stream
// surviving kill -9; every row checked through a query.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { BigQuery } from '@google-cloud/bigquery';
import { adapt, managedwriter } from '@google-cloud/bigquery-storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const TABLE = 'projects/sw/datasets/ds/tables/events';

interface Crashable {
  /** The write client of the emulator running now. */
  readonly writer: managedwriter.WriterClient;
  readonly streamsDir: string;
  /** kill -9 of gateway and engine (one process group), `meanwhile` on the stopped files, then a restart on the same data dir. */
  crash(meanwhile?: () => void): Promise<void>;
  /** `SELECT id FROM ds.t ORDER BY id` as the Node client returns it. */
  ids(): Promise<unknown[]>;
}

/** Runs `body` against an emulator on a data dir of its own holding an empty ds.t (id INT64), which `crash` restarts. */
async function onCrashable(extra: string[], body: (c: Crashable) => Promise<void>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'wh-sw-'));
  const start = () => startEmulator({ args: ['--project-id', 'sw', ...extra], dataDir });
  const writerOf = (e: Emulator) =>
    new managedwriter.WriterClient({ apiEndpoint: '127.0.0.1', port: e.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: 'sw' } as unknown as ConstructorParameters<typeof managedwriter.WriterClient>[0]);
  const bqOf = (e: Emulator) => new BigQuery({ projectId: 'sw', apiEndpoint: e.url, authClient: fakeAuth() });
  let emu = await start();
  let writer = writerOf(emu);
  try {
    await bqOf(emu).createDataset('ds');
    await bqOf(emu).query({ query: 'CREATE TABLE ds.t (id INT64)' });
    await body({
      get writer() {
        return writer;
      },
      streamsDir: join(dataDir, '_write_streams'),
      async crash(meanwhile) {
        writer.close();
        process.kill(-emu.proc.pid!, 'SIGKILL');
        await new Promise((r) => setTimeout(r, 300));
        meanwhile?.();
        emu = await start();
        writer = writerOf(emu);
      },
      async ids() {
        return (await bqOf(emu).query({ query: 'SELECT id FROM ds.t ORDER BY id' }))[0];
      },
    });
  } finally {
    writer.close();
    await emu.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('Storage Write API through the real managed writer', () => {
  let emu: Emulator;
  let bq: BigQuery;
  let writer: managedwriter.WriterClient;

  async function rows(sql: string): Promise<unknown[]> {
    const [r] = await bq.query({ query: sql });
    return r.map((x: Record<string, unknown>) => JSON.parse(JSON.stringify(x)));
  }

  async function jsonWriter(streamId: string): Promise<managedwriter.JSONWriter> {
    const ws = await writer.getWriteStream({ streamId, view: 'FULL' as never });
    const descriptor = adapt.convertStorageSchemaToProto2Descriptor(ws.tableSchema!, 'root');
    const connection = await writer.createStreamConnection({ streamId });
    return new managedwriter.JSONWriter({ connection, protoDescriptor: descriptor });
  }

  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    emu = await startEmulator({ args: ['--project-id', 'sw'] });
    bq = new BigQuery({ projectId: 'sw', apiEndpoint: emu.url, authClient: fakeAuth() });
    await bq.createDataset('ds');
    await bq.query({ query: 'CREATE TABLE ds.events (id INT64 NOT NULL, name STRING, score FLOAT64, ok BOOL, day DATE, ts TIMESTAMP, amount NUMERIC)' });
    writer = new managedwriter.WriterClient({
      apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: 'sw',
    } as unknown as ConstructorParameters<typeof managedwriter.WriterClient>[0]);
  }, 120_000);
  afterAll(async () => {
    writer?.close();
    await emu?.stop();
  });

  it('appends to the default stream; rows are queryable at once', async () => {
    const w = await jsonWriter(`${TABLE}/streams/_default`);
    const r = await w.appendRows([
      { id: 1, name: 'ada', score: 1.5, ok: true, day: new Date('2024-02-29T00:00:00Z'), ts: new Date('2024-01-02T03:04:05.123Z'), amount: '12.5' },
      { id: 2, name: null, score: null, ok: false },
    ]).getResult();
    expect(r.error ?? null).toBeNull();
    w.close();
    expect(await rows('SELECT id, name, score, ok, CAST(day AS STRING) AS day, FORMAT_TIMESTAMP("%FT%H:%M:%E6SZ", ts) AS ts, CAST(amount AS STRING) AS amount FROM ds.events ORDER BY id')).toEqual([
      { id: 1, name: 'ada', score: 1.5, ok: true, day: '2024-02-29', ts: '2024-01-02T03:04:05.123000Z', amount: '12.5' },
      { id: 2, name: null, score: null, ok: false, day: null, ts: null, amount: null },
    ]);
  });

  it('holds PENDING rows until finalize and commit, with exact offsets', async () => {
    const streamId = await writer.createWriteStream({ streamType: managedwriter.PendingStream, destinationTable: TABLE });
    const w = await jsonWriter(streamId);
    const first = await w.appendRows([{ id: 10 }, { id: 11 }], 0).getResult();
    expect(Number(first.appendResult?.offset?.value)).toBe(0);
    const second = await w.appendRows([{ id: 12 }], 2).getResult();
    expect(Number(second.appendResult?.offset?.value)).toBe(2);
    // an offset already written is refused, and nothing is appended
    const dup = await w.appendRows([{ id: 99 }], 1).getResult().catch((e: unknown) => e);
    expect(JSON.stringify(dup)).toMatch(/offset/i);
    expect(await rows('SELECT COUNT(*) AS n FROM ds.events WHERE id >= 10')).toEqual([{ n: 0 }]);
    w.close();
    const fin = await writer.finalizeWriteStream({ name: streamId });
    expect(Number(fin.rowCount)).toBe(3);
    const commit = await writer.batchCommitWriteStream({ parent: TABLE, writeStreams: [streamId] });
    expect(commit.streamErrors ?? []).toEqual([]);
    expect(commit.commitTime).toBeTruthy();
    expect(await rows('SELECT id FROM ds.events WHERE id >= 10 ORDER BY id')).toEqual([{ id: 10 }, { id: 11 }, { id: 12 }]);
  });

  it('reports row errors and writes nothing of a request with a bad row', async () => {
    const w = await jsonWriter(`${TABLE}/streams/_default`);
    const res = await w.appendRows([{ id: 20, amount: 'not a number' }, { id: 21 }]).getResult().catch((e: unknown) => e);
    expect(JSON.stringify(res)).toMatch(/row_?errors|rowErrors|Errors found while processing rows/i);
    w.close();
    expect(await rows('SELECT COUNT(*) AS n FROM ds.events WHERE id IN (20, 21)')).toEqual([{ n: 0 }]);
  });

  // Column parameters are checked on append, as every other write checks them (types/table-values.ts), with the
  // service's row error wording (the Java client's integration test asserts `Field foo: STRING(10) has maximum
  // length 10 but got a value with length 12 on field foo.`).
  it('checks STRING(L), NUMERIC(P, S) and a STRUCT field\'s parameters on append, on every stream type', async () => {
    await bq.query({ query: 'CREATE TABLE ds.params (id INT64, s STRING(5), n NUMERIC(5, 2), r STRUCT<a STRING(2)>)' });
    const t = 'projects/sw/datasets/ds/tables/params';
    const errorsOf = async (w: managedwriter.JSONWriter, rows: Parameters<managedwriter.JSONWriter["appendRows"]>[0], offset?: number) => {
      const res = await w.appendRows(rows, offset).getResult().catch((e: unknown) => e);
      return ((res as { rowErrors?: { index: unknown; code: unknown; message: string }[] }).rowErrors ?? []).map((e) => [Number(e.index), e.code, e.message]);
    };
    const def = await jsonWriter(`${t}/streams/_default`);
    expect(await errorsOf(def, [{ id: 1, s: 'abcdefg' }, { id: 2, s: 'ok' }, { id: 3, n: '1234.5' }, { id: 4, r: { a: 'xyz' } }])).toEqual([
      [0, 'FIELDS_ERROR', 'Field s: STRING(5) has maximum length 5 but got a value with length 7 on field s.'],
      [2, 'FIELDS_ERROR', 'Field n: NUMERIC(5, 2) has precision 5 and scale 2 but got a value that is not in range of [-999.99, 999.99] on field n.'],
      [3, 'FIELDS_ERROR', 'Field r.a: STRING(2) has maximum length 2 but got a value with length 3 on field r.a.'],
    ]);
    // Nothing of a refused request is written; a good one is, NUMERIC(5, 2) rounded half away from zero.
    expect(await errorsOf(def, [{ id: 5, s: 'abcde', n: '1.005', r: { a: 'xy' } }])).toEqual([]);
    def.close();
    const pendingId = await writer.createWriteStream({ streamType: managedwriter.PendingStream, destinationTable: t });
    const pending = await jsonWriter(pendingId);
    // A PENDING stream refuses the row when it is appended, not at commit; the offset stays free.
    expect(await errorsOf(pending, [{ id: 6, s: 'toolong' }], 0)).toEqual([[0, 'FIELDS_ERROR', 'Field s: STRING(5) has maximum length 5 but got a value with length 7 on field s.']]);
    expect(await errorsOf(pending, [{ id: 7, n: '-2.345' }], 0)).toEqual([]);
    pending.close();
    await writer.finalizeWriteStream({ name: pendingId });
    expect((await writer.batchCommitWriteStream({ parent: t, writeStreams: [pendingId] })).streamErrors ?? []).toEqual([]);
    expect(await rows('SELECT id, s, CAST(n AS STRING) AS n, r.a AS a FROM ds.params ORDER BY id')).toEqual([
      { id: 5, s: 'abcde', n: '1.01', a: 'xy' },
      { id: 7, s: null, n: '-2.35', a: null },
    ]);
  });

  it('makes BUFFERED rows visible up to the flushed offset', async () => {
    const streamId = await writer.createWriteStream({ streamType: managedwriter.BufferedStream, destinationTable: TABLE });
    const w = await jsonWriter(streamId);
    await w.appendRows([{ id: 30 }, { id: 31 }, { id: 32 }], 0).getResult();
    expect(await rows('SELECT COUNT(*) AS n FROM ds.events WHERE id >= 30')).toEqual([{ n: 0 }]);
    const flushed = await writer.flushRows({ writeStream: streamId, offset: { value: 1 } });
    expect(Number(flushed.offset)).toBe(1);
    expect(await rows('SELECT id FROM ds.events WHERE id >= 30 ORDER BY id')).toEqual([{ id: 30 }, { id: 31 }]);
    w.close();
  });

  // Both acknowledgement policies: the default (ack once written, background fdatasync) and --sync-writes.
  it.each([[[]], [['--sync-writes']]] as [string[]][])('keeps a PENDING stream and its acknowledged rows across kill -9 of both processes (flags %j)', async (extra) => {
    await onCrashable(extra, async (c) => {
      const streamId = await c.writer.createWriteStream({ streamType: managedwriter.PendingStream, destinationTable: 'projects/sw/datasets/ds/tables/t' });
      const ws = await c.writer.getWriteStream({ streamId, view: 'FULL' as never });
      const conn = await c.writer.createStreamConnection({ streamId });
      const jw = new managedwriter.JSONWriter({ connection: conn, protoDescriptor: adapt.convertStorageSchemaToProto2Descriptor(ws.tableSchema!, 'root') });
      await jw.appendRows([{ id: 1 }, { id: 2 }], 0).getResult();
      jw.close();
      await c.crash();
      expect(Number((await c.writer.finalizeWriteStream({ name: streamId })).rowCount)).toBe(2);
      expect((await c.writer.batchCommitWriteStream({ parent: 'projects/sw/datasets/ds/tables/t', writeStreams: [streamId] })).streamErrors ?? []).toEqual([]);
      expect(await c.ids()).toEqual([{ id: 1 }, { id: 2 }]);
    });
  });

  // A kill -9 between the table commit that takes a stream's rows and the stream's own
  // files catching up (its log removed, its state file written) must not let the rows be
  // committed again: the files are put back as such a crash leaves them, then both calls retried.
  it('commits and flushes a stream exactly once across a crash inside the commit', async () => {
    await onCrashable([], async (c) => {
      const t = 'projects/sw/datasets/ds/tables/t';
      const append = async (type: typeof managedwriter.PendingStream | typeof managedwriter.BufferedStream, ids: number[]): Promise<string> => {
        const streamId = await c.writer.createWriteStream({ streamType: type, destinationTable: t });
        const ws = await c.writer.getWriteStream({ streamId, view: 'FULL' as never });
        const jw = new managedwriter.JSONWriter({ connection: await c.writer.createStreamConnection({ streamId }), protoDescriptor: adapt.convertStorageSchemaToProto2Descriptor(ws.tableSchema!, 'root') });
        await jw.appendRows(ids.map((id) => ({ id })), 0).getResult();
        jw.close();
        return streamId;
      };
      const pending = [await append(managedwriter.PendingStream, [1, 2]), await append(managedwriter.PendingStream, [3])];
      const buffered = await append(managedwriter.BufferedStream, [10, 11, 12]);
      for (const s of pending) await c.writer.finalizeWriteStream({ name: s });
      const logs = new Map(readdirSync(c.streamsDir).map((f) => [f, readFileSync(join(c.streamsDir, f))]));
      expect((await c.writer.batchCommitWriteStream({ parent: t, writeStreams: pending })).streamErrors ?? []).toEqual([]);
      expect(Number((await c.writer.flushRows({ writeStream: buffered, offset: { value: 1 } })).offset)).toBe(1);
      await c.crash(() => {
        // As a crash right after the commit records leaves it: the PENDING logs still there, no state files.
        for (const [f, bytes] of logs) writeFileSync(join(c.streamsDir, f), bytes);
        for (const f of readdirSync(c.streamsDir)) if (f.endsWith('.state')) rmSync(join(c.streamsDir, f));
      });
      const again = await c.writer.batchCommitWriteStream({ parent: t, writeStreams: pending });
      expect(again.streamErrors?.map((e) => e.code)).toEqual(['STREAM_NOT_FOUND', 'STREAM_NOT_FOUND']);
      expect(Number((await c.writer.flushRows({ writeStream: buffered, offset: { value: 1 } })).offset)).toBe(1);
      expect(Number((await c.writer.flushRows({ writeStream: buffered, offset: { value: 2 } })).offset)).toBe(2);
      expect(await c.ids()).toEqual([1, 2, 3, 10, 11, 12].map((id) => ({ id })));
    });
  });

  // A kill -9 after a COMMITTED stream's append reached the table's WAL and before the
  // stream's own log line: the log is cut as such a crash leaves it, and the client's retry
  // of that append (same offset) must find the offset taken, not write the rows again.
  it('keeps a COMMITTED stream\'s offsets exact across a crash between the rows and the stream log', async () => {
    await onCrashable([], async (c) => {
      const streamId = await c.writer.createWriteStream({ streamType: managedwriter.CommittedStream, destinationTable: 'projects/sw/datasets/ds/tables/t' });
      const descriptor = adapt.convertStorageSchemaToProto2Descriptor((await c.writer.getWriteStream({ streamId, view: 'FULL' as never })).tableSchema!, 'root');
      const connect = async () => new managedwriter.JSONWriter({ connection: await c.writer.createStreamConnection({ streamId }), protoDescriptor: descriptor });
      let jw = await connect();
      await jw.appendRows([{ id: 1 }, { id: 2 }], 0).getResult();
      await jw.appendRows([{ id: 3 }], 2).getResult();
      jw.close();
      await c.crash(() => {
        const [log] = readdirSync(c.streamsDir).filter((f) => f.endsWith('.log'));
        const lines = readFileSync(join(c.streamsDir, log!), 'utf8').split('\n').filter(Boolean);
        expect(lines.at(-1)).toBe('{"append":1}');
        writeFileSync(join(c.streamsDir, log!), lines.slice(0, -1).map((l) => l + '\n').join(''));
      });
      jw = await connect();
      const retry = await jw.appendRows([{ id: 3 }], 2).getResult().catch((e: unknown) => e);
      expect(JSON.stringify(retry)).toMatch(/offset is within stream, expected offset 3/);
      jw.close();
      jw = await connect();
      expect(Number((await jw.appendRows([{ id: 4 }], 3).getResult()).appendResult?.offset?.value)).toBe(3);
      jw.close();
      expect(Number((await c.writer.finalizeWriteStream({ name: streamId })).rowCount)).toBe(4);
      expect(await c.ids()).toEqual([1, 2, 3, 4].map((id) => ({ id })));
    });
  });

  it('answers NOT_FOUND for a stream of a missing table', async () => {
    await expect(writer.getWriteStream({ streamId: 'projects/sw/datasets/ds/tables/nope/streams/_default' })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });
});
