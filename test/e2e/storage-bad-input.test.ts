// Bad input over the Storage Read and Write gRPC APIs, which clients reach on
// the engine's own port (issue 15: nothing a client sends takes the engine
// down or leaves a call unanswered). Every call must end with a client-error
// status (never INTERNAL, UNKNOWN or a deadline: grpc-js sends no status for
// a server stream ended by destroy(), and a message field sent as a varint
// once looped the decoder forever); the engine process stays the same and
// the table's rows stay as written.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, enginePid, rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { Rng } from '../fuzz/gen.js';

const T = 'projects/p/datasets/d/tables/t';
const DEFAULT_STREAM = `${T}/streams/_default`;

type Ctor = new (address: string, creds: grpc.ChannelCredentials) => grpc.Client & Record<string, (...a: unknown[]) => unknown>;

function services(): { Read: Ctor; Write: Ctor } {
  const dir = join(ROOT, 'proto');
  const load = (f: string) =>
    grpc.loadPackageDefinition(protoLoader.loadSync(join(dir, f), { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [dir] })) as any;
  return { Read: load('storage_read.proto').google.cloud.bigquery.storage.v1.BigQueryRead, Write: load('storage_write.proto').google.cloud.bigquery.storage.v1.BigQueryWrite };
}

/** A varint's bytes. */
function varint(n: number): Buffer {
  const out: number[] = [];
  for (; n > 127; n >>>= 7) out.push((n & 127) | 128);
  out.push(n);
  return Buffer.from(out);
}

describe('bad input over the Storage gRPC APIs', () => {
  let emu: Emulator;
  let read: InstanceType<Ctor>;
  let write: InstanceType<Ctor>;
  let addr: string;
  const rows = async () =>
    (await rest(`${emu.url}/bigquery/v2/projects/p/queries`, { method: 'POST', json: { query: 'SELECT id, s FROM d.t ORDER BY id', useLegacySql: false } })).body.rows;

  beforeAll(async () => {
    emu = await startEmulator();
    const q = (query: string) => rest(`${emu.url}/bigquery/v2/projects/p/queries`, { method: 'POST', json: { query, useLegacySql: false } });
    expect((await rest(`${emu.url}/bigquery/v2/projects/p/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
    expect((await q('CREATE TABLE d.t (id INT64, s STRING, r STRUCT<x INT64>)')).status).toBe(200);
    expect((await q('CREATE TABLE d.f (id INT64, s STRING, r STRUCT<x INT64>, a ARRAY<FLOAT64>)')).status).toBe(200);
    expect((await q("INSERT d.t (id, s) VALUES (1, 'a'), (2, 'b')")).status).toBe(200);
    const { Read, Write } = services();
    addr = `127.0.0.1:${emu.grpcPort}`;
    read = new Read(addr, grpc.credentials.createInsecure());
    write = new Write(addr, grpc.credentials.createInsecure());
  }, 60_000);

  afterAll(async () => {
    read?.close();
    write?.close();
    await emu?.stop();
  });

  const deadline = () => ({ deadline: Date.now() + 15_000 });

  function unary(client: InstanceType<Ctor>, method: string, req: unknown): Promise<grpc.ServiceError | null> {
    return new Promise((resolve) => (client[method] as (r: unknown, o: unknown, cb: (e: grpc.ServiceError | null) => void) => void)(req, deadline(), (e) => resolve(e)));
  }

  function readRows(req: unknown): Promise<grpc.ServiceError | null> {
    return new Promise((resolve) => {
      const s = (read['ReadRows'] as (r: unknown, o: unknown) => grpc.ClientReadableStream<unknown>)(req, deadline());
      s.on('data', () => undefined);
      s.on('error', (e: grpc.ServiceError) => resolve(e));
      s.on('end', () => resolve(null));
    });
  }

  /** The answers of one AppendRows connection: its responses' error codes, then the call's status. */
  function append(reqs: unknown[]): Promise<{ errors: number[]; status: grpc.ServiceError | null }> {
    return new Promise((resolve) => {
      const s = (write['AppendRows'] as (o: unknown) => grpc.ClientDuplexStream<unknown, any>)(deadline());
      const errors: number[] = [];
      s.on('data', (d) => errors.push(d.error ? d.error.code : 0));
      s.on('error', (e: grpc.ServiceError) => resolve({ errors, status: e }));
      s.on('end', () => resolve({ errors, status: null }));
      for (const r of reqs) s.write(r);
      s.end();
    });
  }

  it('every call ends with a client error, the engine and the rows unchanged', async () => {
    const pid = enginePid(emu);
    const before = await rows();
    const refused = (what: string, e: grpc.ServiceError | null, code: grpc.status) => expect([what, e?.code]).toEqual([what, code]);

    refused('bad table path', await unary(read, 'CreateReadSession', { parent: 'projects/p', readSession: { table: 'garbage', dataFormat: 'ARROW' } }), grpc.status.INVALID_ARGUMENT);
    refused('missing table', await unary(read, 'CreateReadSession', { parent: 'projects/p', readSession: { table: 'projects/p/datasets/d/tables/nope', dataFormat: 'ARROW' } }), grpc.status.NOT_FOUND);
    refused('restriction', await unary(read, 'CreateReadSession', { parent: 'projects/p', readSession: { table: T, dataFormat: 'AVRO', readOptions: { rowRestriction: `${'('.repeat(20_000)}ERROR('café')` } } }), grpc.status.INVALID_ARGUMENT);
    refused('selected fields', await unary(read, 'CreateReadSession', { parent: 'projects/p', readSession: { table: T, dataFormat: 'AVRO', readOptions: { selectedFields: ['nope'] } } }), grpc.status.INVALID_ARGUMENT);
    refused('read a stream that is not', await readRows({ readStream: 'projects/p/locations/us/sessions/x/streams/y' }), grpc.status.NOT_FOUND);
    const session = await new Promise<any>((resolve) => (read['CreateReadSession'] as any)({ parent: 'projects/p', readSession: { table: T, dataFormat: 'AVRO' } }, (_e: unknown, s: unknown) => resolve(s)));
    refused('offset past the stream', await readRows({ readStream: session.streams[0].name, offset: '1000000000000' }), grpc.status.INVALID_ARGUMENT);

    refused('write stream parent', await unary(write, 'CreateWriteStream', { parent: 'garbage', writeStream: { type: 'PENDING' } }), grpc.status.INVALID_ARGUMENT);
    refused('write stream type', await unary(write, 'CreateWriteStream', { parent: T, writeStream: { type: 'NOPE' } }), grpc.status.INVALID_ARGUMENT);
    refused('finalize nothing', await unary(write, 'FinalizeWriteStream', { name: 'x' }), grpc.status.NOT_FOUND);
    refused('append to nothing', (await append([{ writeStream: 'garbage', protoRows: {} }])).status, grpc.status.NOT_FOUND);

    const schema = (fields: unknown[], nestedType: unknown[] = []) => ({ protoDescriptor: { name: 'R', field: fields, nestedType } });
    const appendRows = (writerSchema: unknown, serializedRows: Buffer[]) => append([{ writeStream: DEFAULT_STREAM, protoRows: { writerSchema, rows: { serializedRows } } }]);
    const rowRefused = async (what: string, r: Promise<{ errors: number[]; status: grpc.ServiceError | null }>) => expect([what, await r]).toEqual([what, { errors: [grpc.status.INVALID_ARGUMENT], status: null }]);
    const id = { name: 'id', number: 1, type: 'TYPE_INT64' };
    await rowRefused('varint past the row', appendRows(schema([id]), [Buffer.from([8, 0xff, 0xff, 0xff])]));
    await rowRefused('string length past the row', appendRows(schema([{ name: 's', number: 2, type: 'TYPE_STRING' }]), [Buffer.from([0x12, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x41])]));
    // A message field sent as a varint (this looped forever), and a type the schema does not have.
    await rowRefused('wire type of another type', appendRows(schema([{ name: 'r', number: 3, type: 'TYPE_MESSAGE', typeName: 'X' }], [{ name: 'X', field: [{ name: 'x', number: 1, type: 'TYPE_INT64' }] }]), [Buffer.from([0x18, 1])]));
    await rowRefused('unknown message type', appendRows(schema([{ name: 'r', number: 3, type: 'TYPE_MESSAGE', typeName: 'Nope' }]), [Buffer.from([0x1a, 0])]));
    // A STRING field whose bytes are not UTF-8, and descriptors protobuf's own builder rejects.
    const text = { name: 's', number: 2, type: 'TYPE_STRING' };
    await rowRefused('string that is not UTF-8', appendRows(schema([id, text]), [Buffer.from([8, 7, 0x12, 2, 0xc3, 0x28])]));
    await rowRefused('field number used twice', appendRows(schema([id, { ...text, number: 1 }]), [Buffer.from([8, 7])]));
    await rowRefused('field name used twice', appendRows(schema([id, { ...id, number: 2 }]), [Buffer.from([8, 7])]));
    // A self-referencing descriptor and a row nested 5,000 levels deep in it.
    let deep = Buffer.from([8, 1]);
    for (let i = 0; i < 5000; i++) deep = Buffer.concat([Buffer.from([0x1a]), varint(deep.length), deep]);
    await rowRefused('rows nested too deep', appendRows(schema([id, { name: 'r', number: 3, type: 'TYPE_MESSAGE', typeName: 'R' }]), [deep]));

    // Bytes that are no request message at all: grpc-js itself would answer INTERNAL.
    const raw = new grpc.Client(addr, grpc.credentials.createInsecure());
    const garbage = await new Promise<grpc.ServiceError | null>((resolve) =>
      raw.makeUnaryRequest('/google.cloud.bigquery.storage.v1.BigQueryRead/CreateReadSession', (b: Buffer) => b, (b: Buffer) => b, Buffer.from([0x12, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x0a, 0x99]), deadline(), (e) => resolve(e)),
    );
    raw.close();
    refused('undecodable request', garbage, grpc.status.INVALID_ARGUMENT);
    expect(garbage?.details).toMatch(/^Invalid request: the request is not a valid CreateReadSession message/);

    expect(enginePid(emu)).toBe(pid);
    expect(await rows()).toEqual(before);
    expect(emu.output()).not.toMatch(/engine: (exited|killed)|internal error|unhandled promise rejection/);
  }, 120_000);

  it('seeded random rows and descriptors: every append answered, the engine unchanged', async () => {
    const SEED = Number(process.env.FUZZ_SEED ?? 15);
    const r = new Rng(SEED);
    const pid = enginePid(emu);
    const types = ['TYPE_INT64', 'TYPE_STRING', 'TYPE_BYTES', 'TYPE_DOUBLE', 'TYPE_FLOAT', 'TYPE_BOOL', 'TYPE_MESSAGE', 'TYPE_SINT64', 'TYPE_FIXED32', 'TYPE_GROUP'];
    const field = (name: string, number: number) => {
      const type = r.pick(types);
      return { name, number, type, label: r.chance(0.3) ? 'LABEL_REPEATED' : 'LABEL_OPTIONAL', ...(type === 'TYPE_MESSAGE' ? { typeName: r.pick(['X', 'R', 'Nope']) } : {}) };
    };
    const bytes = (): Buffer => {
      // Valid-looking tags with random payloads, or plain noise.
      if (r.chance(0.3)) return Buffer.from(Array.from({ length: r.int(40) }, () => r.int(256)));
      const parts: Buffer[] = [];
      for (let k = r.int(6); k > 0; k--) {
        const wt = r.pick([0, 1, 2, 5, 3]);
        parts.push(varint(((1 + r.int(5)) << 3) | wt));
        if (wt === 0) parts.push(varint(r.int(1 << 30)));
        else if (wt === 1) parts.push(Buffer.alloc(8, r.int(256)));
        else if (wt === 5) parts.push(Buffer.alloc(4, r.int(256)));
        else if (wt === 2) {
          const inner = r.chance(0.5) ? Buffer.from([8, r.int(128)]) : Buffer.alloc(r.int(10), 0x41);
          parts.push(varint(r.chance(0.1) ? 1 << 30 : inner.length), inner);
        }
      }
      return Buffer.concat(parts);
    };
    const names = ['id', 's', 'r', 'a', 'x'];
    const answered: number[] = [];
    for (let i = 0; i < 150; i++) {
      const writerSchema = {
        protoDescriptor: {
          name: 'R',
          field: Array.from({ length: 1 + r.int(4) }, (_, k) => field(names[k]!, 1 + k)),
          nestedType: [{ name: 'X', field: [field('x', 1)] }],
        },
      };
      const res = await append([{ writeStream: 'projects/p/datasets/d/tables/f/streams/_default', protoRows: { writerSchema, rows: { serializedRows: Array.from({ length: 1 + r.int(3) }, bytes) } } }]);
      // One response (its own error or a result) and a clean end: never a failed or unanswered call.
      expect([i, res.status?.code ?? null, res.errors.length]).toEqual([i, null, 1]);
      answered.push(res.errors[0]!);
    }
    expect(enginePid(emu)).toBe(pid);
    // Some appends went in, some were refused, by the same seed every run.
    expect(answered.filter((c) => c === 0).length).toBeGreaterThan(0);
    expect(answered.filter((c) => c === grpc.status.INVALID_ARGUMENT).length).toBeGreaterThan(0);
  }, 120_000);
});
