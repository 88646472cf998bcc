// TIMESTAMP(12) (timestampPrecision 12, picoseconds) end to end through the
// real clients: @google-cloud/bigquery creates the table, streams rows in and
// reads them back under every formatOptions combination (only ISO8601_STRING
// carries the twelve digits, as the client's own system test expects), runs
// queries with BIGQUERY_PICOSECOND_SUPPORT and TIMESTAMP(12) parameters;
// @google-cloud/bigquery-storage reads them as Arrow and Avro at each
// picos_timestamp_precision and writes them through its JSONWriter (its
// adapter makes the field a string); the REST cells are checked over HTTP.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { BigQuery, type Dataset, type Table } from '@google-cloud/bigquery';
import { adapt, managedwriter, reader, v1 } from '@google-cloud/bigquery-storage';
import { RecordBatchReader, Table as ArrowTable } from 'apache-arrow';
import avro from 'avsc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const PICOS = '2023-01-01T12:00:00.123456789123Z';
// What the client makes of the microsecond forms (PreciseDate, nine digits).
const AS_MICROS = '2023-01-01T12:00:00.123456000Z';
const BEFORE_EPOCH = '1969-12-31T23:59:59.999999999999Z';
const TABLE = 'projects/pc/datasets/pc/tables/t';

describe('TIMESTAMP(12) through the real clients', () => {
  let emu: Emulator;
  let bq: BigQuery;
  let ds: Dataset;
  let table: Table;
  let read: v1.BigQueryReadClient;
  let writer: managedwriter.WriterClient;

  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'pc'] });
    bq = new BigQuery({ projectId: 'pc', apiEndpoint: emu.url, authClient: fakeAuth() });
    [ds] = await bq.createDataset('pc');
    [table] = await ds.createTable('t', { schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'ts', type: 'TIMESTAMP', timestampPrecision: 12 as unknown as string }] } });
    await table.insert([{ id: 1, ts: PICOS }, { id: 2, ts: BEFORE_EPOCH }, { id: 3, ts: null }]);
    const opts = { apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: 'pc' };
    read = new v1.BigQueryReadClient(opts as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0]);
    writer = new managedwriter.WriterClient(opts as unknown as ConstructorParameters<typeof managedwriter.WriterClient>[0]);
  }, 120_000);
  afterAll(async () => {
    await read?.close();
    writer?.close();
    await emu?.stop();
  });

  it('tables.insert accepts timestampPrecision 12 and every read of the table echoes it as a string', async () => {
    const [meta] = await table.getMetadata();
    expect(meta.schema.fields[1]).toEqual({ name: 'ts', type: 'TIMESTAMP', timestampPrecision: '12' });
    const [grown] = await ds.createTable('grown', { schema: [{ name: 'a', type: 'STRING' }] });
    await grown.setMetadata({ schema: { fields: [{ name: 'a', type: 'STRING' }, { name: 'p', type: 'TIMESTAMP', timestampPrecision: '12' }] } });
    expect((await grown.getMetadata())[0].schema.fields[1]).toEqual({ name: 'p', type: 'TIMESTAMP', timestampPrecision: '12' });
    // The precision is part of the type: tables.patch cannot change it either way (the rows would not read back).
    await expect(grown.setMetadata({ schema: { fields: [{ name: 'a', type: 'STRING' }, { name: 'p', type: 'TIMESTAMP' }] } })).rejects.toThrow(
      'Provided Schema does not match Table pc:pc.grown. Field p has changed type from TIMESTAMP(12) to TIMESTAMP',
    );
    // 6 and 12 are the precisions there are.
    await expect(ds.createTable('nine', { schema: [{ name: 'ts', type: 'TIMESTAMP', timestampPrecision: '9' }] })).rejects.toThrow(/timestampPrecision of field ts: 9/);
    const [micro] = await ds.createTable('micro', { schema: [{ name: 'ts', type: 'TIMESTAMP' }] });
    await expect(micro.setMetadata({ schema: { fields: [{ name: 'ts', type: 'TIMESTAMP', timestampPrecision: '12' }] } })).rejects.toThrow(/Field ts has changed type from TIMESTAMP to TIMESTAMP\(12\)/);
  });

  // The client's own system test's matrix (system-test/timestamp_output_format.ts of nodejs-bigquery).
  const cases: [string | undefined, boolean | undefined, string][] = [
    ['TIMESTAMP_OUTPUT_FORMAT_UNSPECIFIED', true, AS_MICROS], ['TIMESTAMP_OUTPUT_FORMAT_UNSPECIFIED', false, AS_MICROS], ['TIMESTAMP_OUTPUT_FORMAT_UNSPECIFIED', undefined, AS_MICROS],
    ['FLOAT64', false, AS_MICROS], ['FLOAT64', undefined, AS_MICROS], ['INT64', true, AS_MICROS], ['INT64', false, AS_MICROS], ['INT64', undefined, AS_MICROS],
    ['ISO8601_STRING', false, PICOS], ['ISO8601_STRING', undefined, PICOS], [undefined, true, AS_MICROS], [undefined, false, AS_MICROS],
  ];
  it.each(cases)('tabledata.list with timestampOutputFormat %s and useInt64Timestamp %s', async (format, int64, want) => {
    const options: Record<string, unknown> = {};
    if (format !== undefined) options['formatOptions.timestampOutputFormat'] = format;
    if (int64 !== undefined) options['formatOptions.useInt64Timestamp'] = int64;
    const [rows] = await table.getRows(options);
    expect(rows.find((r) => Number(r.id) === 1)!.ts.value).toBe(want);
  });

  it('REST cells: twelve digits only in ISO8601_STRING, the microsecond (floored) in INT64 and FLOAT64', async () => {
    const cell = async (q: string): Promise<unknown[]> => {
      const r = await rest(`${emu.url}/bigquery/v2/projects/pc/datasets/pc/tables/t/data?${q}`);
      expect(r.status).toBe(200);
      return (r.body.rows as { f: { v: unknown }[] }[]).map((x) => x.f[1]!.v);
    };
    expect(await cell('formatOptions.timestampOutputFormat=ISO8601_STRING')).toEqual([PICOS, BEFORE_EPOCH, null]);
    expect(await cell('formatOptions.useInt64Timestamp=true')).toEqual(['1672574400123456', '-1', null]);
    expect(await cell('formatOptions.timestampOutputFormat=FLOAT64')).toEqual(['1.672574400123456E9', '-1.0E-6', null]);
    const both = await rest(`${emu.url}/bigquery/v2/projects/pc/datasets/pc/tables/t/data?formatOptions.timestampOutputFormat=ISO8601_STRING&formatOptions.useInt64Timestamp=true`);
    expect(both.status).toBe(400);
  });

  it('insertAll takes text with up to twelve digits and epoch seconds; thirteen digits is a row error', async () => {
    const [t] = await ds.createTable('forms', { schema: { fields: [{ name: 'ts', type: 'TIMESTAMP', timestampPrecision: '12' }] } });
    const r = await rest(`${emu.url}/bigquery/v2/projects/pc/datasets/pc/tables/forms/insertAll`, {
      method: 'POST',
      json: { rows: [{ json: { ts: '2023-01-01 12:00:00.000000000001+01:00' } }, { json: { ts: '1672574400.000000000002' } }, { json: { ts: 1672574400.5 } }] },
    });
    expect(r.body.insertErrors).toBeUndefined();
    const [rows] = await t.getRows({ 'formatOptions.timestampOutputFormat': 'ISO8601_STRING' });
    expect(rows.map((x) => x.ts.value).sort()).toEqual(['2023-01-01T11:00:00.000000000001Z', '2023-01-01T12:00:00.000000000002Z', '2023-01-01T12:00:00.500000000000Z']);
    const bad = await rest(`${emu.url}/bigquery/v2/projects/pc/datasets/pc/tables/forms/insertAll`, { method: 'POST', json: { rows: [{ json: { ts: '2023-01-01 12:00:00.0000000000001' } }] } });
    expect(bad.body.insertErrors[0].errors[0].reason).toBe('invalid');
  });

  it('a CSV load keeps twelve digits; CSV extract writes them, Avro extract the microsecond (timestamp-micros)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'picos-'));
    try {
      writeFileSync(join(dir, 'in.csv'), '7,2020-01-01 00:00:00.000000000042\n8,2020-01-01T00:00:00.5Z\n');
      const dest = { projectId: 'pc', datasetId: 'pc', tableId: 'loaded' };
      const schema = { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'ts', type: 'TIMESTAMP', timestampPrecision: '12' }] };
      await bq.createJob({ configuration: { load: { sourceFormat: 'CSV', sourceUris: [join(dir, 'in.csv')], schema, destinationTable: dest } } }).then(([job]) => job.promise());
      const extract = async (destinationFormat: string) => {
        await bq.createJob({ configuration: { extract: { destinationFormat, destinationUris: [join(dir, `out-${destinationFormat}-*`)], sourceTable: dest } } }).then(([job]) => job.promise());
        return readFileSync(join(dir, readdirSync(dir).find((f) => f.startsWith(`out-${destinationFormat}-`))!));
      };
      expect((await extract('CSV')).toString().trim().split('\n').sort()).toEqual(['7,2020-01-01 00:00:00.000000000042 UTC', '8,2020-01-01 00:00:00.500000000000 UTC', 'id,ts']);
      await extract('AVRO');
      const decoded: number[] = [];
      const avroFile = join(dir, readdirSync(dir).find((f) => f.startsWith('out-AVRO-'))!);
      await new Promise<void>((res, rej) => avro.createFileDecoder(avroFile).on('data', (r: { ts: number }) => decoded.push(r.ts)).on('end', res).on('error', rej));
      expect(decoded.sort()).toEqual([1577836800000000, 1577836800500000]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('queries keep the precision: schema, ISO8601_STRING rows (BIGQUERY_PICOSECOND_SUPPORT) and TIMESTAMP(12) parameters', async () => {
    process.env.BIGQUERY_PICOSECOND_SUPPORT = 'true';
    try {
      // The client sends a TIMESTAMP(12) parameter's value from a BigQueryTimestamp (a plain string becomes `parameterValue: {}`).
      const after = (text: string) => ({ query: 'SELECT ts FROM pc.t WHERE ts > @after ORDER BY ts', params: { after: bq.timestamp(text) }, types: { after: 'TIMESTAMP(12)' } });
      // query() resolves [rows, nextQuery, response] (its type declares two).
      const [rows, , resp] = (await bq.query(after('2023-01-01T12:00:00.123456789122Z'))) as unknown as [{ ts: { value: string } }[], unknown, { schema: { fields: unknown[] } }];
      expect(rows.map((r) => r.ts.value)).toEqual([PICOS]);
      expect(resp.schema.fields).toEqual([{ name: 'ts', type: 'TIMESTAMP', mode: 'NULLABLE', timestampPrecision: '12' }]);
      expect((await bq.query(after(PICOS)))[0]).toEqual([]);
    } finally {
      delete process.env.BIGQUERY_PICOSECOND_SUPPORT;
    }
    // Without the variable the client asks for int64 microseconds.
    const [rows] = await bq.query('SELECT ts FROM pc.t WHERE id = 1');
    expect(rows[0].ts.value).toBe(AS_MICROS);
  });

  async function readAll(format: 'ARROW' | 'AVRO', precision?: string): Promise<{ schema: string | Uint8Array; rows: Uint8Array[] }> {
    const options = precision ? { picosTimestampPrecision: precision } : undefined;
    const readOptions = { selectedFields: ['id', 'ts'], ...(format === 'ARROW' ? { arrowSerializationOptions: options } : { avroSerializationOptions: options }) };
    const [session] = await read.createReadSession({ parent: 'projects/pc', readSession: { table: TABLE, dataFormat: format, readOptions: readOptions as never } });
    const rows: Uint8Array[] = [];
    for (const s of session.streams ?? []) {
      for await (const r of read.readRows({ readStream: s.name! })) rows.push((format === 'ARROW' ? r.arrowRecordBatch!.serializedRecordBatch : r.avroRows!.serializedBinaryRows) as Uint8Array);
    }
    return { schema: format === 'ARROW' ? (session.arrowSchema!.serializedSchema as Uint8Array) : session.avroSchema!.schema!, rows };
  }

  async function arrowRead(precision?: string): Promise<{ type: string; values: unknown[] }> {
    const { schema, rows } = await readAll('ARROW', precision);
    const t = new ArrowTable(RecordBatchReader.from(Buffer.concat([schema as Uint8Array, ...rows])).readAll());
    const ids = t.getChild('id')!.toArray() as BigInt64Array;
    const col = t.getChild('ts')!;
    const byId = new Map<bigint, unknown>();
    for (let i = 0; i < t.numRows; i++) byId.set(ids[i]!, col.get(i));
    return { type: String(col.type), values: [1n, 2n, 3n].map((k) => byId.get(k)) };
  }

  it('Storage Read, Arrow: timestamp[us] by default and for MICROS, timestamp[ns] for NANOS, RFC 3339 text for PICOS', async () => {
    // apache-arrow reads timestamps as epoch milliseconds (a double): compare by the unit's integer.
    const micros = await arrowRead();
    expect(micros.type).toBe('Timestamp<MICROSECOND, UTC>');
    expect(micros.values.map((v) => (v === null ? null : Math.round((v as number) * 1000)))).toEqual([1672574400123456, -1, null]);
    expect((await arrowRead('TIMESTAMP_PRECISION_MICROS')).type).toBe('Timestamp<MICROSECOND, UTC>');
    const nanos = await arrowRead('TIMESTAMP_PRECISION_NANOS');
    expect(nanos.type).toBe('Timestamp<NANOSECOND, UTC>');
    expect(nanos.values[1]).toBeCloseTo(-1e-6, 9);
    const picos = await arrowRead('TIMESTAMP_PRECISION_PICOS');
    expect(picos.type).toBe('Utf8');
    expect(picos.values).toEqual([PICOS, BEFORE_EPOCH, null]);
  });

  it("the client's Arrow table reader asks for PICOS and gets the RFC 3339 text", async () => {
    const client = new reader.ReadClient();
    client.setClient(read);
    const arrowReader = new reader.ArrowTableReader(client, { projectId: 'pc', datasetId: 'pc', tableId: 't' });
    // 3 = TIMESTAMP_PRECISION_PICOS, as the client's enum gives it.
    const batches = await arrowReader.getRecordBatchStream({ arrowSerializationOptions: { picosTimestampPrecision: 3 } });
    const got: unknown[] = [];
    for await (const b of batches) for (let i = 0; i < b.numRows; i++) got.push(b.getChild('ts')!.get(i));
    expect(got.sort()).toEqual([BEFORE_EPOCH, PICOS, null].sort());
    arrowReader.close();
  });

  it('Storage Read, Avro: timestamp-micros by default, timestamp-nanos for NANOS (exact), strings for PICOS', async () => {
    // Nanoseconds since the epoch pass 2^53: decode longs as bigints.
    const longs = avro.types.LongType.__with({
      fromBuffer: (b: Buffer) => b.readBigInt64LE(),
      toBuffer: (n: bigint) => {
        const b = Buffer.alloc(8);
        b.writeBigInt64LE(n);
        return b;
      },
      fromJSON: BigInt,
      toJSON: Number,
      isValid: (n: unknown) => typeof n === 'bigint',
      compare: (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0),
    });
    const decode = async (precision?: string): Promise<{ tsType: unknown; values: unknown[] }> => {
      const { schema, rows } = await readAll('AVRO', precision);
      const parsed = JSON.parse(schema as string) as { fields: { name: string; type: unknown }[] };
      // avsc decodes logical longs with its own long type (doubles): read ts as a bare long.
      const plain = { ...parsed, fields: parsed.fields.map((f) => (f.name === 'ts' && Array.isArray(f.type) && typeof f.type[1] === 'object' ? { ...f, type: ['null', 'long'] } : f)) };
      const type = avro.Type.forSchema(plain as avro.Schema, { registry: { long: longs } });
      const out = new Map<bigint, unknown>();
      for (const r of rows) {
        let buf = Buffer.from(r);
        while (buf.length) {
          const { value, offset } = type.decode(buf, 0);
          const o = value as { id: bigint; ts: unknown };
          out.set(o.id, o.ts);
          buf = buf.subarray(offset);
        }
      }
      return { tsType: parsed.fields[1]!.type, values: [1n, 2n, 3n].map((k) => out.get(k)) };
    };
    const micros = await decode();
    expect(micros.tsType).toEqual(['null', { type: 'long', logicalType: 'timestamp-micros' }]);
    expect(micros.values).toEqual([1672574400123456n, -1n, null]);
    const nanos = await decode('TIMESTAMP_PRECISION_NANOS');
    expect(nanos.tsType).toEqual(['null', { type: 'long', logicalType: 'timestamp-nanos' }]);
    expect(nanos.values).toEqual([1672574400123456789n, -1n, null]);
    const picos = await decode('TIMESTAMP_PRECISION_PICOS');
    expect(picos.tsType).toEqual(['null', 'string']);
    expect(picos.values).toEqual([PICOS, BEFORE_EPOCH, null]);
  });

  it('Storage Write: the table schema carries timestamp_precision 12, the client writes text, every digit is kept', async () => {
    await ds.createTable('written', { schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'ts', type: 'TIMESTAMP', timestampPrecision: '12' }] } });
    const streamId = 'projects/pc/datasets/pc/tables/written/streams/_default';
    const ws = await writer.getWriteStream({ streamId, view: 'FULL' as never });
    expect(Number(ws.tableSchema!.fields![1]!.timestampPrecision!.value)).toBe(12);
    const descriptor = adapt.convertStorageSchemaToProto2Descriptor(ws.tableSchema!, 'root');
    expect(descriptor.field![1]!.type).toBe(9); // TYPE_STRING
    const w = new managedwriter.JSONWriter({ connection: await writer.createStreamConnection({ streamId }), protoDescriptor: descriptor });
    const r = await w.appendRows([{ id: 1, ts: '2024-02-29 23:59:59.000000000001' }, { id: 2, ts: PICOS }]).getResult();
    expect(r.error ?? null).toBeNull();
    w.close();
    const [rows] = await bq.query({ query: 'SELECT id, CAST(ts AS STRING) AS s FROM pc.written ORDER BY id' });
    expect(rows).toEqual([{ id: 1, s: '2024-02-29 23:59:59.000000000001+00' }, { id: 2, s: '2023-01-01 12:00:00.123456789123+00' }]);
  });
});
