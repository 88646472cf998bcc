// The bulk row-read interface (spec §4.14) through the real Storage Read client
// library (@google-cloud/bigquery-storage) on the engine's gRPC port: Arrow
// sessions via the library's table reader, Avro sessions via its generated
// client (rows decoded with avsc), the equality row restriction and its
// rejections, stream splitting, the same service under the neutral name, and
// a nested table (ARRAY of STRUCT of ARRAY, NULLs at each level) read after an
// engine restart, from the stored layout.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { BigQuery } from '@google-cloud/bigquery';
import { reader, v1 } from '@google-cloud/bigquery-storage';
import avro from 'avsc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, ROOT, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const TABLE = 'projects/sr/datasets/ds/tables/people';

describe('Storage Read API through the real client library', () => {
  let emu: Emulator;
  let readClient: reader.ReadClient;
  let gapic: v1.BigQueryReadClient;
  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    emu = await startEmulator({ args: ['--project-id', 'sr'] });
    const bq = new BigQuery({ projectId: 'sr', apiEndpoint: emu.url, authClient: fakeAuth() });
    await bq.createDataset('ds');
    await bq.query({
      query: `CREATE TABLE ds.people AS
        SELECT * FROM UNNEST([
          STRUCT(1 AS id, 'ada' AS name, 36.5 AS score, TRUE AS ok, DATE '1815-12-10' AS born,
                 TIMESTAMP '2020-01-02 03:04:05.123456 UTC' AS ts, NUMERIC '-12.345' AS n, [1, 2] AS tags,
                 STRUCT('x' AS a, 7 AS b) AS rec),
          (2, "it's", NULL, FALSE, NULL, NULL, NULL, [], NULL),
          (3, 'grace', 85.0, NULL, DATE '1906-12-09', TIMESTAMP '1970-01-01 00:00:00 UTC', NUMERIC '99999999999999999999999999999.999999999', [3], STRUCT('y', NULL))])`,
    });
    // ~25k more rows so that a session has several streams.
    await bq.query({ query: 'CREATE TABLE ds.big AS SELECT x AS id, MOD(x, 7) AS k FROM UNNEST(GENERATE_ARRAY(1, 25000)) AS x' });
    // Insecure channel to the engine port, as with any emulator; the grpc-js instance is the one google-gax uses.
    const opts = { apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: 'sr' } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0];
    readClient = new reader.ReadClient(opts);
    gapic = new v1.BigQueryReadClient(opts);
  }, 120_000);
  afterAll(async () => {
    readClient?.close();
    await gapic?.close();
    await emu?.stop();
  });

  it('reads every row and type through the Arrow table reader', async () => {
    const tr = await readClient.createTableReader({ table: { projectId: 'sr', datasetId: 'ds', tableId: 'people' } });
    const stream = await tr.getRowStream();
    const rows: Array<{ f: Array<{ v: unknown }> }> = [];
    for await (const r of stream) rows.push(r as { f: Array<{ v: unknown }> });
    rows.sort((a, b) => Number(a.f[0]!.v) - Number(b.f[0]!.v));
    expect(rows).toHaveLength(3);
    const first = rows[0]!.f.map((c) => c.v);
    expect(first[0]).toBe(1n);
    expect(first[1]).toBe('ada');
    expect(first[2]).toBe(36.5);
    expect(first[3]).toBe(true);
    expect(first[7]).toEqual([{ v: 1n }, { v: 2n }]);
    // an apostrophe survives; NULLs stay NULL; an empty array stays empty
    const second = rows[1]!.f.map((c) => c.v);
    expect(second[1]).toBe("it's");
    expect(second[2]).toBeNull();
    expect(second[7]).toEqual([]);
  });

  it('encodes Arrow types the way the real service does', async () => {
    const session = await readClient.createReadSession({ parent: 'projects/sr', table: TABLE, dataFormat: 'ARROW' as never });
    const { RecordBatchReader } = await import('apache-arrow');
    const schema = RecordBatchReader.from(Buffer.from(session.arrowSchema!.serializedSchema as Uint8Array)).open().schema;
    const types = Object.fromEntries(schema.fields.map((f) => [f.name, String(f.type)]));
    expect(types).toMatchObject({
      id: 'Int64', name: 'Utf8', score: 'Float64', ok: 'Bool', born: 'Date32<DAY>',
      ts: 'Timestamp<MICROSECOND, UTC>', tags: 'List<Int64>',
    });
    const n = schema.fields.find((f) => f.name === 'n')!.type as unknown as { precision: number; scale: number; bitWidth: number };
    expect([n.precision, n.scale, n.bitWidth]).toEqual([38, 9, 128]);
    expect(session.streams).toHaveLength(1);
    const tr = await readClient.createArrowTableReader({ table: { projectId: 'sr', datasetId: 'ds', tableId: 'people' } });
    const values: Record<string, string[]> = {};
    for await (const batch of await tr.getRecordBatchStream()) {
      for (const name of ['id', 'n', 'ts', 'born']) {
        const col = batch.getChild(name)!;
        for (let i = 0; i < batch.numRows; i++) (values[name] ??= []).push(String(col.get(i)));
      }
    }
    const order = values['id']!.map(Number);
    const byId = (name: string) => order.map((id, i) => [id, values[name]![i]] as const).sort((a, b) => a[0] - b[0]).map((x) => x[1]);
    // decimal128 words hold the unscaled value; Arrow JS reads timestamp[us] as fractional epoch ms
    expect(byId('n')).toEqual(['-12345000000', 'null', '99999999999999999999999999999999999999']);
    expect(byId('ts')).toEqual([String(1577934245123456 / 1000), 'null', '0']);
  });

  async function readAvro(session: { avroSchema?: { schema?: string | null } | null; streams?: Array<{ name?: string | null }> | null }): Promise<Record<string, unknown>[]> {
    const type = avro.Type.forSchema(JSON.parse(session.avroSchema!.schema!));
    const out: Record<string, unknown>[] = [];
    for (const s of session.streams ?? []) {
      for await (const resp of gapic.readRows({ readStream: s.name!, offset: 0 })) {
        let buf = Buffer.from(resp.avroRows!.serializedBinaryRows as Uint8Array);
        while (buf.length > 0) {
          const { value, offset } = type.decode(buf, 0);
          out.push(value as Record<string, unknown>);
          buf = buf.subarray(offset);
        }
      }
    }
    return out.sort((a, b) => Number(a['id']) - Number(b['id']));
  }

  /** Two's complement big-endian bytes -> bigint. */
  function unscaled(b: Buffer): bigint {
    let n = 0n;
    for (const x of b) n = (n << 8n) | BigInt(x);
    return b.length > 0 && (b[0]! & 0x80) !== 0 ? n - (1n << BigInt(8 * b.length)) : n;
  }

  it('reads Avro sessions with the generated client', async () => {
    const [session] = await gapic.createReadSession({ parent: 'projects/sr', readSession: { table: TABLE, dataFormat: 'AVRO' } });
    const rows = await readAvro(session);
    expect(rows.map((r) => r['name'])).toEqual(['ada', "it's", 'grace']);
    const ada = rows[0]!;
    expect(ada['born']).toBe(Date.UTC(1815, 11, 10) / 86_400_000);
    expect(ada['ts']).toBe(Date.UTC(2020, 0, 2, 3, 4, 5, 123) * 1000 + 456);
    expect(unscaled(ada['n'] as Buffer)).toBe(-12_345_000_000n);
    expect(ada['tags']).toEqual([1, 2]);
    expect(ada['rec']).toEqual({ a: 'x', b: 7 });
    expect(unscaled(rows[2]!['n'] as Buffer)).toBe(99999999999999999999999999999999999999n);
    expect(rows[1]!['score']).toBeNull();
    expect(rows[1]!['tags']).toEqual([]);
  });

  it('filters rows with one equality restriction and rejects anything else', async () => {
    const create = (rowRestriction: string) =>
      gapic.createReadSession({ parent: 'projects/sr', readSession: { table: TABLE, dataFormat: 'AVRO', readOptions: { rowRestriction } } });
    const [byName] = await create("name = 'it''s'");
    expect((await readAvro(byName)).map((r) => r['id'])).toEqual([2]);
    const [byBool] = await create('`ok` = TRUE');
    expect((await readAvro(byBool)).map((r) => r['id'])).toEqual([1]);
    const [none] = await create('id = 42');
    expect(none.streams ?? []).toHaveLength(0);
    for (const bad of ['id > 1', 'id = 1 AND ok = true', 'id IN (1, 2)', 'score = 36.5', 'born = DATE "1815-12-10"', 'name = NULL', 'tags = 1', 'nope = 1']) {
      await expect(create(bad), bad).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    }
  });

  it('spreads a big table over several streams, honours offsets and splits streams', async () => {
    const big = 'projects/sr/datasets/ds/tables/big';
    const [session] = await gapic.createReadSession({ parent: 'projects/sr', readSession: { table: big, dataFormat: 'AVRO' }, maxStreamCount: 2 });
    expect(session.streams).toHaveLength(2);
    expect(Number(session.estimatedRowCount)).toBe(25_000);
    const ids = (await readAvro(session)).map((r) => Number(r['id']));
    expect(ids).toHaveLength(25_000);
    expect(new Set(ids).size).toBe(25_000);
    // resume a stream at an offset
    let resumed = 0;
    for await (const resp of gapic.readRows({ readStream: session.streams![0]!.name!, offset: 12_000 })) resumed += Number(resp.rowCount);
    expect(resumed).toBe(500);
    const [split] = await gapic.splitReadStream({ name: session.streams![1]!.name!, fraction: 0.5 });
    let n = 0;
    for (const s of [split.primaryStream!, split.remainderStream!]) {
      for await (const resp of gapic.readRows({ readStream: s.name!, offset: 0 })) n += Number(resp.rowCount);
    }
    expect(n).toBe(12_500);
  });

  it('answers NOT_FOUND for a missing table and serves the neutral service name', async () => {
    await expect(gapic.createReadSession({ parent: 'projects/sr', readSession: { table: 'projects/sr/datasets/ds/tables/nope', dataFormat: 'ARROW' } }))
      .rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    const def = protoLoader.loadSync(path.join(ROOT, 'proto', 'warehouse_storage_read.proto'), { includeDirs: [path.join(ROOT, 'proto')], longs: Number, enums: String, defaults: true, oneofs: true });
    const pkg = grpc.loadPackageDefinition(def) as unknown as { warehouse_emulator: { v1: { StorageRead: grpc.ServiceClientConstructor } } };
    const client = new pkg.warehouse_emulator.v1.StorageRead(`127.0.0.1:${emu.grpcPort}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      CreateReadSession(req: unknown, cb: (e: grpc.ServiceError | null, r: { streams: Array<{ name: string }> }) => void): void;
      ReadRows(req: unknown): grpc.ClientReadableStream<{ rowCount: number }>;
    };
    const session = await new Promise<{ streams: Array<{ name: string }> }>((res, rej) =>
      client.CreateReadSession({ parent: 'projects/sr', readSession: { table: TABLE, dataFormat: 'ARROW' } }, (e, r) => (e ? rej(e) : res(r))),
    );
    let rows = 0;
    for await (const resp of client.ReadRows({ readStream: session.streams[0]!.name, offset: 0 })) rows += (resp as { rowCount: number }).rowCount;
    expect(rows).toBe(3);
    client.close();
  });
  it('reads a nested table after an engine restart: every value, NULLs and empty arrays at each level', async () => {
    const bq = new BigQuery({ projectId: 'sr', apiEndpoint: emu.url, authClient: fakeAuth() });
    const N = 3000;
    await bq.query({
      query: `CREATE TABLE ds.nested AS SELECT id,
        IF(MOD(id, 5) = 0, NULL, STRUCT(id * 2 AS a, IF(MOD(id, 7) = 0, NULL, CONCAT('é', CAST(id AS STRING))) AS b)) AS rec,
        ARRAY(SELECT AS STRUCT j AS a, IF(MOD(id + j, 6) = 0, NULL, CONCAT('s', CAST(id + j AS STRING))) AS b,
          ARRAY(SELECT AS STRUCT CAST(j * k AS FLOAT64) / 4 AS x, ARRAY(SELECT CAST(m AS STRING) FROM UNNEST(GENERATE_ARRAY(1, MOD(id + k, 3))) AS m) AS ys
                FROM UNNEST(GENERATE_ARRAY(1, MOD(j, 3))) AS k) AS c
          FROM UNNEST(GENERATE_ARRAY(1, MOD(id, 4))) AS j) AS items
        FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS id`,
    });
    const upTo = (n: number): number[] => Array.from({ length: Math.max(0, n) }, (_, i) => i + 1);
    const expected = upTo(N).map((id) => ({
      id: BigInt(id),
      rec: id % 5 === 0 ? null : { a: BigInt(id * 2), b: id % 7 === 0 ? null : `é${id}` },
      items: upTo(id % 4).map((j) => ({ a: BigInt(j), b: (id + j) % 6 === 0 ? null : `s${id + j}`, c: upTo(j % 3).map((k) => ({ x: (j * k) / 4, ys: upTo((id + k) % 3).map(String) })) })),
    }));
    // kill -9 of the engine: the table is read back from its files.
    const pid = Number(execFileSync('pgrep', ['-P', String(emu.proc.pid)]).toString().trim().split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    for (let t0 = Date.now(); ; ) {
      if ((await rest(`${emu.url}/bigquery/v2/projects/sr/datasets`).catch(() => ({ status: 0 }))).status === 200) break;
      if (Date.now() - t0 > 30_000) throw new Error('engine did not come back');
      await new Promise((r) => setTimeout(r, 100));
    }
    const opts = { apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: 'sr' } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0];
    const client = new v1.BigQueryReadClient(opts);
    const [session] = await client.createReadSession({ parent: 'projects/sr', readSession: { table: 'projects/sr/datasets/ds/tables/nested', dataFormat: 'ARROW' } });
    const { RecordBatchReader, Table, Vector } = await import('apache-arrow');
    const schemaBytes = Buffer.from(session.arrowSchema!.serializedSchema as Uint8Array);
    const plain = (v: unknown): unknown =>
      v instanceof Vector ? [...v].map(plain) : v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function' ? Object.fromEntries(Object.entries((v as { toJSON(): object }).toJSON()).map(([k, x]) => [k, plain(x)])) : v;
    const got: unknown[] = [];
    for (const s of session.streams ?? []) {
      for await (const resp of client.readRows({ readStream: s.name!, offset: 0 })) {
        const t = new Table(RecordBatchReader.from(Buffer.concat([schemaBytes, Buffer.from(resp.arrowRecordBatch!.serializedRecordBatch as Uint8Array)])).readAll());
        for (let i = 0; i < t.numRows; i++) got.push(Object.fromEntries(['id', 'rec', 'items'].map((c) => [c, plain(t.getChild(c)!.get(i))])));
      }
    }
    await client.close();
    got.sort((a, b) => Number((a as { id: bigint }).id - (b as { id: bigint }).id));
    expect(got).toHaveLength(N);
    for (let i = 0; i < N; i++) expect(got[i], `row ${i + 1}`).toEqual(expected[i]);
  }, 90_000);
});
