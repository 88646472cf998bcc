// The local-socket transport between the gateway and its own engine
// (src/engine/local-rpc.ts, src/gateway/engine-local.ts): frames split and
// joined across chunks, replies and errors decoded as over gRPC, cancel and
// deadline reaching the handler, and a dropped engine failing calls with 503.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, describe, expect, it } from 'vitest';
import { FrameKind, FrameReader, frame, serveLocal } from '../../src/engine/local-rpc.js';
import { toServiceError } from '../../src/engine/service.js';
import { CatalogError } from '../../src/storage/errors.js';
import { LocalEngineTransport } from '../../src/gateway/engine-local.js';
import { JobCancel } from '../../src/gateway/jobs/registry.js';
import { RestError } from '../../src/gateway/errors.js';

type Pkg = { warehouse_emulator: { engine: { v1: { Engine: grpc.ServiceClientConstructor } } } };
const protoFile = join(import.meta.dirname, '../../proto/engine.proto');
const opts = { longs: Number, enums: String, defaults: true, oneofs: true };
/** The engine's view (camelCase) and the gateway's (snake_case), as main.ts and engine-client.ts load them. */
const serverDef = (grpc.loadPackageDefinition(protoLoader.loadSync(protoFile, { ...opts, keepCase: false })) as unknown as Pkg).warehouse_emulator.engine.v1.Engine.service;
const clientDef = (grpc.loadPackageDefinition(protoLoader.loadSync(protoFile, { ...opts, keepCase: true })) as unknown as Pkg).warehouse_emulator.engine.v1.Engine.service;

const dir = mkdtempSync(join(tmpdir(), 'local-rpc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('frames', () => {
  it('come out intact from a reader whose chunks are one reused buffer (borrowed)', () => {
    const bodies = [Buffer.from('abc'), Buffer.alloc(0), pattern(100_000), pattern(70), pattern(3_000_000)];
    const all = Buffer.concat(bodies.map((b, i) => frame(i + 1, FrameKind.Reply, b)));
    for (const size of [1, 3, 7, 4096, 65_536, all.length]) {
      const got: [number, number, Buffer][] = [];
      const r = new FrameReader((id, kind, body) => got.push([id, kind, body]), true);
      const shared = Buffer.alloc(size);
      for (let i = 0; i < all.length; i += size) {
        const n = all.copy(shared, 0, i, i + size);
        r.push(shared.subarray(0, n));
        shared.fill(0xee); // the socket's next read overwrites it
      }
      expect(got.map(([id, kind]) => [id, kind])).toEqual(bodies.map((_, i) => [i + 1, FrameKind.Reply]));
      for (const [i, [, , body]] of got.entries()) expect(body.equals(bodies[i]!)).toBe(true);
    }
  });

  it('come out whole whatever the chunking', () => {
    const frames = [frame(1, FrameKind.Request, Buffer.from('abc'), 'GetDataset'), frame(2, FrameKind.Cancel), frame(3, FrameKind.Reply, Buffer.alloc(100_000, 7))];
    const all = Buffer.concat(frames);
    for (const size of [1, 3, 5, 9, 4096, all.length]) {
      const got: [number, number, number][] = [];
      const r = new FrameReader((id, kind, body) => got.push([id, kind, body.length]));
      for (let i = 0; i < all.length; i += size) r.push(all.subarray(i, i + size));
      expect(got).toEqual([[1, FrameKind.Request, 1 + 'GetDataset'.length + 3], [2, FrameKind.Cancel, 0], [3, FrameKind.Reply, 100_000]]);
    }
  });
});

/** n bytes of every value, in no simple order. */
function pattern(n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + (i >> 9)) & 0xff;
  return b;
}

describe('engine local socket', () => {
  const seen: { cancelled: string[] } = { cancelled: [] };
  type Call = { request: Record<string, unknown>; on(ev: 'cancelled', f: () => void): void };
  type Cb = (err: grpc.ServiceError | null, res?: unknown) => void;
  const handlers = {
    GetDataset: (call: Call, cb: Cb) => {
      const r = call.request;
      if (r['datasetId'] === 'missing') cb(toServiceError(new CatalogError(404, 'notFound', 'notFound', `Not found: Dataset ${String(r['projectId'])}:missing`)));
      else cb(null, { resourceJson: JSON.stringify({ id: `${String(r['projectId'])}:${String(r['datasetId'])}`, options: r['options'] }) });
    },
    // Never answers on its own: ends when cancelled.
    ExecuteQuery: (call: Call, cb: Cb) => {
      call.on('cancelled', () => {
        seen.cancelled.push(String(call.request['jobId']));
        cb(toServiceError(Object.assign(new Error('aborted'), { name: 'AbortError' })));
      });
    },
    // Echoes what it decoded, to compare a large bytes field written out of line with the inline encoding.
    InsertRows: (call: Call, cb: Cb) => {
      const { rowsUtf8, ...rest } = call.request as { rowsUtf8: Buffer };
      cb(null, { insertErrorsJson: JSON.stringify({ ...rest, rows: rowsUtf8.toString('latin1') }) });
    },
    // selectedFields 'bytes': the page as rowsUtf8 (as the engine sends large pages), else as rowsJson text.
    ListRows: (call: Call, cb: Cb) => cb(null, call.request['selectedFields'] === 'bytes'
      ? { totalRows: 7, rowsJson: '', rowsUtf8: pattern(Number(call.request['maxResults'])), schemaJson: '{"fields":[]}', nextIndex: 3, etag: 'b' }
      : { totalRows: 3_000_000_000, rowsJson: 'x'.repeat(Number(call.request['maxResults'])), schemaJson: '', nextIndex: -1, etag: 'e' }),
  } as unknown as grpc.UntypedServiceImplementation;

  it('answers with the same decoded replies and RestErrors as gRPC would', async () => {
    const srv = await serveLocal(join(dir, 'a.sock'), serverDef, handlers);
    const t = new LocalEngineTransport(clientDef);
    t.use(srv.path);
    await expect.poll(() => t.ready).toBe(true);
    const ok = await t.call('GetDataset', { project_id: 'p', dataset_id: 'd', options: { patch: 'true' } });
    expect(JSON.parse(ok.resource_json)).toEqual({ id: 'p:d', options: { patch: 'true' } });
    const err = await t.call('GetDataset', { project_id: 'p', dataset_id: 'missing' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RestError);
    expect((err as RestError).toInfo()).toMatchObject({ code: 404, reason: 'notFound', message: 'Not found: Dataset p:missing' });
    // Many calls in flight at once, one large reply among them; int64 fields come back as numbers.
    const rows = await Promise.all([10, 2_000_000, 5].map((n) => t.call('ListRows', { table: { project_id: 'p', dataset_id: 'd', table_id: 't' }, start_index: 0, max_results: n, selected_fields: '', timestamp_format: 'TIMESTAMP_RFC3339', string_scalars: false })));
    expect(rows.map((r) => r.rows_json.length)).toEqual([10, 2_000_000, 5]);
    expect(rows[0]!.total_rows).toBe(3_000_000_000);
    // Large bytes fields go after the rest of the message (out of line, not copied): the
    // handler decodes the same request as from the inline encoding, small or large, all byte values intact.
    const big = Buffer.alloc(300_000);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 9)) & 0xff;
    const body = Buffer.concat([Buffer.from('{"rows":'), big, Buffer.from('}')]);
    for (const rowsUtf8 of [body.subarray(8, 8 + big.length), Buffer.from('[1]'), Buffer.from(big.subarray(0, 20_000))]) {
      const req = { table: { project_id: 'p', dataset_id: 'd', table_id: 't' }, rows_json: '', rows_utf8: rowsUtf8, skip_invalid_rows: true, ignore_unknown_values: false, template_suffix: '_x' };
      const echo = JSON.parse((await t.call('InsertRows', req)).insert_errors_json) as Record<string, unknown>;
      const inline = clientDef.InsertRows!.requestSerialize(req);
      const viaGrpcEncoding = JSON.stringify({ ...serverDef.InsertRows!.requestDeserialize(inline) as object, rowsUtf8: undefined, rows: Buffer.from(rowsUtf8).toString('latin1') });
      expect(echo).toEqual(JSON.parse(viaGrpcEncoding));
      expect((echo['rows'] as string).length).toBe(rowsUtf8.length);
      // The caller's request object is left as it was.
      expect(req.rows_utf8).toBe(rowsUtf8);
    }
    // A method the engine does not implement here is a 501, as gRPC's UNIMPLEMENTED.
    const missing = await t.call('GetTable', { project_id: 'p' }).catch((e: unknown) => e);
    expect((missing as RestError).toInfo().code).toBe(501);
    t.close();
    srv.server?.close();
  });

  it('replies with large bytes fields written out of line: the same decoded reply as the inline encoding', async () => {
    const srv = await serveLocal(join(dir, 'c.sock'), serverDef, handlers);
    const t = new LocalEngineTransport(clientDef);
    t.use(srv.path);
    await expect.poll(() => t.ready).toBe(true);
    const req = (n: number) => ({ table: { project_id: 'p', dataset_id: 'd', table_id: 't' }, start_index: 0, max_results: n, selected_fields: 'bytes', timestamp_format: 'TIMESTAMP_RFC3339' as const, string_scalars: false });
    // Small (inline), just over the out-of-line size, and megabytes; all in flight at once, with a text reply among them.
    const sizes = [5, 16 * 1024, 20_000, 3_000_000];
    const [text, ...replies] = await Promise.all([t.call('ListRows', { ...req(10), selected_fields: '' }), ...sizes.map((n) => t.call('ListRows', req(n)))]);
    expect(text!.rows_json).toBe('x'.repeat(10));
    for (const [i, r] of replies.entries()) {
      const n = sizes[i]!;
      const inline = clientDef.ListRows!.responseDeserialize(serverDef.ListRows!.responseSerialize({ totalRows: 7, rowsJson: '', rowsUtf8: pattern(n), schemaJson: '{"fields":[]}', nextIndex: 3, etag: 'b' })) as typeof r;
      expect(r.rows_utf8!.equals(pattern(n))).toBe(true);
      expect({ ...r, rows_utf8: undefined }).toEqual({ ...inline, rows_utf8: undefined });
    }
    t.close();
    srv.server?.close();
  });

  it('cancels the handler on abort and on deadline, and fails pending calls with 503 when the engine goes away', async () => {
    const srv = await serveLocal(join(dir, 'b.sock'), serverDef, handlers);
    const engineSide: import('node:net').Socket[] = [];
    srv.server?.on('connection', (s) => engineSide.push(s));
    const t = new LocalEngineTransport(clientDef);
    t.use(srv.path);
    await expect.poll(() => t.ready).toBe(true);
    const q = (jobId: string) => ({ project_id: 'p', job_id: jobId, query: 'SELECT 1', dry_run: false, write_disposition: '', create_disposition: '', table_definitions_json: '', jobs_snapshot_json: '', location: 'US', session_id: '', max_results: 10, timestamp_format: 'TIMESTAMP_RFC3339' as const, string_scalars: false });

    const ac = new AbortController();
    const cancelled = t.call('ExecuteQuery', q('j1'), { deadlineMs: 0, signal: ac.signal }).catch((e: unknown) => e);
    ac.abort();
    expect((await cancelled as RestError).toInfo()).toMatchObject({ code: 400, reason: 'stopped', status: 'cancelled' });

    // A job's JobCancel works as an AbortSignal does.
    const jc = new JobCancel();
    const cancelledJob = t.call('ExecuteQuery', q('j1b'), { deadlineMs: 0, signal: jc.signal }).catch((e: unknown) => e);
    jc.abort();
    expect((await cancelledJob as RestError).toInfo()).toMatchObject({ code: 400, reason: 'stopped', status: 'cancelled' });

    const late = await t.call('ExecuteQuery', q('j2'), { deadlineMs: 50 }).catch((e: unknown) => e);
    expect((late as RestError).toInfo()).toMatchObject({ code: 503, status: 'deadlineExceeded' });
    await expect.poll(() => seen.cancelled).toEqual(['j1', 'j1b', 'j2']);

    const pending = t.call('ExecuteQuery', q('j3'), { deadlineMs: 0 }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    // The engine dies: its end of the connection closes.
    srv.server?.close();
    for (const s of engineSide) s.destroy();
    expect((await pending as RestError).toInfo().code).toBe(503);
    expect(t.ready).toBe(false);
    await expect(t.call('GetDataset', { project_id: 'p', dataset_id: 'd' })).rejects.toMatchObject({ code: 503 });
    await expect.poll(() => seen.cancelled).toEqual(['j1', 'j1b', 'j2', 'j3']);
  });
});
