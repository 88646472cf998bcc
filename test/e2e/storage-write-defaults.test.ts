// default-values.md, Use the Storage Write API (gRPC), through the real managed writer (@google-cloud/bigquery-storage
// JSONWriter): a defaulted column the writer schema lacks takes its default on every row; a field of the writer schema
// a row leaves unset is NULL, unless default_missing_value_interpretation (the connection's, from the request that
// sets it on) or missing_value_interpretations (per column, per request, and winning) says DEFAULT_VALUE. Defaults
// are evaluated per row (GENERATE_UUID) and stored as made: the rows read the same after the engine restarts.
import * as grpc from '@grpc/grpc-js';
import { BigQuery } from '@google-cloud/bigquery';
import { adapt, managedwriter } from '@google-cloud/bigquery-storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, killEngine, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe.skipIf(!hasRealEngine())('Storage Write API column defaults', () => {
  let emu: Emulator;
  let bq: BigQuery;
  let writer: managedwriter.WriterClient;
  let n = 0;

  const rows = async (t: string): Promise<Record<string, unknown>[]> => {
    const [r] = await bq.query({ query: `SELECT a, b, c, u FROM ds.${t} ORDER BY a` });
    return r.map((x: Record<string, unknown>) => JSON.parse(JSON.stringify(x)));
  };
  /** A table as the page's example has it, and a per-row default (u). */
  const table = async (): Promise<string> => {
    const t = `t${++n}`;
    await bq.query({ query: `CREATE TABLE ds.${t} (a STRING, b STRING DEFAULT 'default_b', c STRING DEFAULT 'default_c', u STRING DEFAULT GENERATE_UUID())` });
    return t;
  };
  /** A JSONWriter on `stream` whose writer schema has only the table's fields in `keep`. */
  const jsonWriter = async (stream: string, keep: readonly string[]): Promise<managedwriter.JSONWriter> => {
    const ws = await writer.getWriteStream({ streamId: stream, view: 'FULL' as never });
    const schema = { ...ws.tableSchema!, fields: ws.tableSchema!.fields!.filter((f) => keep.includes(f.name!)) };
    const connection = await writer.createStreamConnection({ streamId: stream });
    return new managedwriter.JSONWriter({ connection, protoDescriptor: adapt.convertStorageSchemaToProto2Descriptor(schema, 'root') });
  };
  const path = (t: string) => `projects/swd/datasets/ds/tables/${t}`;
  const append = async (w: managedwriter.JSONWriter, data: Parameters<managedwriter.JSONWriter['appendRows']>[0], offset?: number): Promise<void> => {
    const r = await w.appendRows(data, offset).getResult();
    expect(r.error ?? null).toBeNull();
    expect(r.rowErrors ?? []).toEqual([]);
  };
  const saved: Record<string, Record<string, unknown>[]> = {};

  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    emu = await startEmulator({ args: ['--project-id', 'swd'] });
    bq = new BigQuery({ projectId: 'swd', apiEndpoint: emu.url, authClient: fakeAuth() });
    await bq.createDataset('ds');
    writer = new managedwriter.WriterClient({
      apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: 'swd',
    } as unknown as ConstructorParameters<typeof managedwriter.WriterClient>[0]);
  }, 120_000);
  afterAll(async () => {
    writer?.close();
    await emu?.stop();
  });

  it('a column the writer schema lacks takes its default on every row; an unset field of the schema is NULL', async () => {
    const t = await table();
    const w = await jsonWriter(`${path(t)}/streams/_default`, ['a', 'b']);
    await append(w, [{ a: 'val_a', b: 'val_b' }, { a: 'val_a2' }]);
    w.close();
    const got = await rows(t);
    expect(got.map(({ a, b, c }) => [a, b, c])).toEqual([['val_a', 'val_b', 'default_c'], ['val_a2', null, 'default_c']]);
    for (const r of got) expect(r['u']).toMatch(UUID);
    expect(got[0]!['u']).not.toBe(got[1]!['u']);
    saved[t] = got;
  });

  it('a writer schema with every column: no defaults, set or not', async () => {
    const t = await table();
    const w = await jsonWriter(`${path(t)}/streams/_default`, ['a', 'b', 'c', 'u']);
    await append(w, [{ a: 'val_a', b: 'val_b' }, { a: 'val_a2' }]);
    w.close();
    expect(await rows(t)).toEqual([{ a: 'val_a', b: 'val_b', c: null, u: null }, { a: 'val_a2', b: null, c: null, u: null }]);
  });

  it('default_missing_value_interpretation DEFAULT_VALUE fills unset fields from then on; missing_value_interpretations wins per column', async () => {
    const t = await table();
    const w = await jsonWriter(`${path(t)}/streams/_default`, ['a', 'b', 'c', 'u']);
    w.setDefaultMissingValueInterpretation('DEFAULT_VALUE');
    await append(w, [{ a: 'r1', b: 'own' }, { a: 'r2', c: null }]);
    // Per request, per column: c's unset values are NULL, b's take the connection's DEFAULT_VALUE.
    w.setMissingValueInterpretations({ c: 'NULL_VALUE' });
    await append(w, [{ a: 'r3' }]);
    // Per column DEFAULT_VALUE under a NULL_VALUE connection default.
    w.setDefaultMissingValueInterpretation('NULL_VALUE');
    w.setMissingValueInterpretations({ b: 'DEFAULT_VALUE' });
    await append(w, [{ a: 'r4' }]);
    w.close();
    const got = await rows(t);
    expect(got.map(({ a, b, c }) => [a, b, c])).toEqual([
      ['r1', 'own', 'default_c'],
      // The writer encodes a null as an unset field (a proto message has no null): c is unset, so DEFAULT_VALUE.
      ['r2', 'default_b', 'default_c'],
      ['r3', 'default_b', null],
      ['r4', 'default_b', null],
    ]);
    expect(got.slice(0, 3).every((r) => UUID.test(String(r['u'])))).toBe(true);
    expect(new Set(got.slice(0, 3).map((r) => r['u'])).size).toBe(3);
    expect(got[3]!['u']).toBeNull();
    saved[t] = got;
  });

  it('refuses a field path as a missing_value_interpretations key', async () => {
    const t = await table();
    const w = await jsonWriter(`${path(t)}/streams/_default`, ['a']);
    w.setMissingValueInterpretations({ 'a.x': 'DEFAULT_VALUE' });
    const r = await w.appendRows([{ a: 'x' }]).getResult().catch((e: unknown) => e);
    expect(JSON.stringify(r)).toMatch(/top-level column/);
    w.close();
    expect(await rows(t)).toEqual([]);
  });

  it('a PENDING stream holds its rows with their defaults, as made; they commit and read the same after a restart', async () => {
    const t = await table();
    const stream = await writer.createWriteStream({ streamType: managedwriter.PendingStream, destinationTable: path(t) });
    const w = await jsonWriter(stream, ['a']);
    await append(w, [{ a: 'p1' }, { a: 'p2' }], 0);
    w.close();
    await writer.finalizeWriteStream({ name: stream });
    expect((await writer.batchCommitWriteStream({ parent: path(t), writeStreams: [stream] })).streamErrors ?? []).toEqual([]);
    const got = await rows(t);
    expect(got.map(({ a, b, c }) => [a, b, c])).toEqual([['p1', 'default_b', 'default_c'], ['p2', 'default_b', 'default_c']]);
    expect(new Set(got.map((r) => r['u'])).size).toBe(2);
    saved[t] = got;
    await killEngine(emu, 'swd');
    for (const [tt, want] of Object.entries(saved)) expect(await rows(tt)).toEqual(want);
  });
});
