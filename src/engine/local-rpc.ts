// The gateway's own engine also answers the Engine service's unary calls on a
// plain Unix socket (`--local-socket`), framed as below. The messages are the
// same protobuf bytes as over gRPC, decoded and answered by the same handlers;
// only the transport is lighter. A SELECT 1 round trip spent about a third of
// the gateway's CPU and a fifth of the engine's in grpc-js and Node's HTTP/2
// (per call: an HTTP/2 stream, header lists, interceptor chains, an
// AsyncResource.bind of ~30 us in Node 20), most of it in code that stays
// cold for the first few hundred queries. gRPC still serves everything on the
// TCP port and the gRPC socket (Health, the Storage APIs, external clients).
//
// Frame: u32 BE length of what follows, u32 BE call id, u8 kind, payload.
//   REQUEST  u8 method-name length, method name (ASCII), request bytes
//            (the gateway may write a large bytes field's key and value after
//            the rest of the message, as separate writes: still one protobuf
//            message, decoded the same, but the value is never copied)
//   CANCEL   (empty)  the client gave up: the handler sees 'cancelled'
//   REPLY    reply bytes (a large bytes field, such as a page of rows, is
//            written after the rest of the message the same way)
//   ERROR    JSON {"code": <gRPC status>, "error": <x-warehouse-error value>}
import { EventEmitter } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { rmSync } from 'node:fs';
import type * as grpc from '@grpc/grpc-js';

export const FrameKind = { Request: 1, Cancel: 2, Reply: 3, Error: 4 } as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

const HEADER = 9;

/**
 * A frame; with `tail`, only its head: the caller writes `tail` more bytes of
 * payload right after it (see LocalEngineTransport's out-of-line fields).
 */
export function frame(id: number, kind: FrameKind, payload?: Buffer, method?: string, tail = 0): Buffer {
  const nameLen = method === undefined ? 0 : 1 + method.length;
  const body = payload?.length ?? 0;
  const out = Buffer.allocUnsafe(HEADER + nameLen + body);
  out.writeUInt32BE(HEADER - 4 + nameLen + body + tail, 0);
  out.writeUInt32BE(id, 4);
  out.writeUInt8(kind, 8);
  if (method !== undefined) {
    out.writeUInt8(method.length, HEADER);
    out.write(method, HEADER + 1, 'latin1');
  }
  if (payload) payload.copy(out, HEADER + nameLen);
  return out;
}

/** A message field as proto-loader describes it (`requestType.type.field`, `responseType.type.field`). */
export interface FieldDescriptor {
  readonly name?: string;
  readonly number?: number;
  readonly type?: string;
  readonly label?: string;
}

/** A message type as proto-loader describes it. */
export interface MessageTypeDescriptor {
  readonly type?: { readonly field?: readonly FieldDescriptor[] };
}

/**
 * A top-level `bytes` field that is written out of line when large (InsertRows'
 * `rows_utf8`: a ~100 KB slice of the insertAll body; ListRows' and
 * ExecuteQuery's `rows_utf8`: a page of rows, up to megabytes). Protobuf
 * fields may come in any order, so the message is encoded without it and its
 * key, length and value follow as separate writes of one writev: no copy into
 * the encoder's buffer, none into the frame. Copies of large buffers are
 * cheap in CPU but count as external memory, which V8 adds to the old
 * generation's growth: they brought a full GC every ~30 insertAll requests.
 */
export interface OutOfLineField {
  readonly name: string;
  /** The field's key: (number << 3) | 2 (length-delimited), as a varint. */
  readonly key: number;
}

/** Below this a bytes field is encoded inline: a copy costs less than an extra write part. */
export const OUT_OF_LINE_MIN = 16 * 1024;

/** The non-repeated bytes fields of a message type. */
export function outOfLineFields(t: MessageTypeDescriptor | undefined): readonly OutOfLineField[] {
  const out: OutOfLineField[] = [];
  for (const f of t?.type?.field ?? []) {
    if (f.type === 'TYPE_BYTES' && f.label !== 'LABEL_REPEATED' && f.name && f.number) out.push({ name: f.name, key: (f.number << 3) | 2 });
  }
  return out;
}

/** Appends `v` as a protobuf varint (v < 2^32). */
function pushVarint(out: number[], v: number): void {
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
}

/** A message with its large bytes values taken out: what to encode, and what to write after it. */
export interface SplitMessage {
  readonly msg: unknown;
  readonly tail: Buffer[] | undefined;
  readonly tailLen: number;
}

export function splitOutOfLine(message: unknown, fields: readonly OutOfLineField[]): SplitMessage {
  let msg = message as Record<string, unknown>;
  let tail: Buffer[] | undefined;
  let tailLen = 0;
  for (const f of fields) {
    const v = msg[f.name];
    if (!(v instanceof Uint8Array) || v.length < OUT_OF_LINE_MIN) continue;
    if (msg === message) msg = { ...msg };
    msg[f.name] = undefined;
    const prefix: number[] = [];
    pushVarint(prefix, f.key);
    pushVarint(prefix, v.length);
    (tail ??= []).push(Buffer.from(prefix), v instanceof Buffer ? v : Buffer.from(v.buffer, v.byteOffset, v.length));
    tailLen += prefix.length + v.length;
  }
  return { msg, tail, tailLen };
}

/** Writes a frame whose payload is `payload` followed by `tail` (one writev). */
export function writeFrame(sock: Socket, id: number, kind: FrameKind, payload: Buffer, method: string | undefined, tail: Buffer[] | undefined, tailLen: number): void {
  if (!tail) {
    sock.write(frame(id, kind, payload, method));
    return;
  }
  sock.cork();
  sock.write(frame(id, kind, payload, method, tailLen));
  for (const b of tail) sock.write(b);
  sock.uncork();
}

/**
 * Splits a byte stream into frames. A frame that arrives whole in one chunk
 * is handed on as a view of it; one that spans chunks is copied into a buffer
 * of its exact size as its bytes arrive (one allocation and one copy, however
 * many reads a megabyte reply takes).
 *
 * `borrowed`: the caller reuses each chunk's memory once push returns (a
 * socket reading into one buffer: `onread`), so every frame is copied out of
 * it, and nothing of a chunk is kept.
 */
export class FrameReader {
  /** The frame being filled (without its length prefix), and how much of it has arrived. */
  private frame: Buffer | undefined;
  private filled = 0;
  /** A length prefix split across chunks. */
  private readonly len = Buffer.alloc(4);
  private lenHave = 0;

  constructor(
    private readonly onFrame: (id: number, kind: FrameKind, body: Buffer) => void,
    private readonly borrowed = false,
  ) {}

  push(chunk: Buffer): void {
    let off = 0;
    while (off < chunk.length) {
      if (this.frame) {
        const n = Math.min(chunk.length - off, this.frame.length - this.filled);
        chunk.copy(this.frame, this.filled, off, off + n);
        this.filled += n;
        off += n;
        if (this.filled === this.frame.length) {
          const f = this.frame;
          this.frame = undefined;
          this.deliver(f);
        }
        continue;
      }
      let size: number;
      if (this.lenHave > 0 || chunk.length - off < 4) {
        while (this.lenHave < 4 && off < chunk.length) this.len[this.lenHave++] = chunk[off++]!;
        if (this.lenHave < 4) return;
        this.lenHave = 0;
        size = this.len.readUInt32BE(0);
      } else {
        size = chunk.readUInt32BE(off);
        off += 4;
      }
      if (chunk.length - off >= size) {
        const f = chunk.subarray(off, off + size);
        off += size;
        this.deliver(this.borrowed ? Buffer.from(f) : f);
        continue;
      }
      this.frame = Buffer.allocUnsafe(size);
      this.filled = 0;
    }
  }

  /** `f`: a frame without its length prefix. */
  private deliver(f: Buffer): void {
    this.onFrame(f.readUInt32BE(0), f.readUInt8(4) as FrameKind, f.subarray(HEADER - 4));
  }
}

/** What a unary handler reads of its call: the request and the 'cancelled' event. */
class LocalCall extends EventEmitter {
  cancelled = false;
  constructor(readonly request: unknown) {
    super();
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.emit('cancelled');
  }
}

type UnaryHandler = (call: LocalCall, callback: (err: grpc.ServiceError | null, res?: unknown) => void) => void;

function errorPayload(err: grpc.ServiceError): Buffer {
  const raw = err.metadata?.get('x-warehouse-error')?.[0];
  const error = raw === undefined ? undefined : typeof raw === 'string' ? raw : raw.toString('utf8');
  return Buffer.from(JSON.stringify({ code: err.code, details: err.details || err.message, ...(error !== undefined ? { error } : {}) }));
}

/** Per method: the reply's bytes fields (see OutOfLineField). */
type ReplyFields = Map<string, readonly OutOfLineField[]>;

function serveConnection(sock: Socket, def: grpc.ServiceDefinition, handlers: grpc.UntypedServiceImplementation, replyFields: ReplyFields): void {
  sock.setNoDelay(true);
  const calls = new Map<number, LocalCall>();
  const send = (b: Buffer): void => {
    if (!sock.destroyed) sock.write(b);
  };
  const reply = (id: number, method: string, m: grpc.MethodDefinition<unknown, unknown>, res: unknown): void => {
    if (sock.destroyed) return;
    let fields = replyFields.get(method);
    if (!fields) replyFields.set(method, (fields = outOfLineFields((m as { responseType?: MessageTypeDescriptor }).responseType)));
    const { msg, tail, tailLen } = fields.length > 0 && res ? splitOutOfLine(res, fields) : { msg: res, tail: undefined, tailLen: 0 };
    let payload: Buffer;
    try {
      payload = m.responseSerialize(msg);
    } catch (e) {
      // A reply protobuf cannot carry is an internal error of this call, not of the engine.
      console.error(`engine: cannot encode the ${method} reply`, e);
      send(frame(id, FrameKind.Error, Buffer.from(JSON.stringify({ code: 13, details: `Cannot encode the ${method} reply: ${(e as Error).message}` }))));
      return;
    }
    writeFrame(sock, id, FrameKind.Reply, payload, undefined, tail, tailLen);
  };
  const onFrame = (id: number, kind: FrameKind, body: Buffer): void => {
    if (kind === FrameKind.Cancel) {
      calls.get(id)?.cancel();
      return;
    }
    if (kind !== FrameKind.Request) return;
    const nameLen = body.readUInt8(0);
    const method = body.toString('latin1', 1, 1 + nameLen);
    const m = def[method];
    const handler = handlers[method] as unknown as UnaryHandler | undefined;
    if (!m || !handler || m.requestStream || m.responseStream) {
      send(frame(id, FrameKind.Error, Buffer.from(JSON.stringify({ code: 12, details: `Method ${method} is not served on the local socket` }))));
      return;
    }
    let call: LocalCall;
    try {
      call = new LocalCall(m.requestDeserialize(body.subarray(1 + nameLen)));
    } catch (e) {
      send(frame(id, FrameKind.Error, Buffer.from(JSON.stringify({ code: 13, details: `Cannot decode the ${method} request: ${(e as Error).message}` }))));
      return;
    }
    calls.set(id, call);
    handler(call, (err, res) => {
      calls.delete(id);
      if (err) send(frame(id, FrameKind.Error, errorPayload(err)));
      else reply(id, method, m, res);
    });
  };
  const reader = new FrameReader(onFrame);
  sock.on('data', (b: Buffer) => {
    try {
      reader.push(b);
    } catch (e) {
      // Bytes that are not frames (or a handler that threw before answering): this connection
      // is beyond repair, the engine is not. The gateway sees the close and reconnects.
      console.error('engine: dropping a local-socket connection', e);
      sock.destroy();
    }
  });
  sock.on('error', () => undefined);
  // The gateway went away: its calls are cancelled, as gRPC does on a dropped stream.
  sock.on('close', () => {
    for (const c of calls.values()) c.cancel();
    calls.clear();
  });
}

/** Serves the unary methods of `def` on a Unix socket (a stale file is removed first); resolves '' when it cannot. */
export async function serveLocal(socketPath: string, def: grpc.ServiceDefinition, handlers: grpc.UntypedServiceImplementation): Promise<{ path: string; server?: Server }> {
  try {
    rmSync(socketPath, { force: true });
    const replyFields: ReplyFields = new Map();
    const server = createServer((sock) => serveConnection(sock, def, handlers, replyFields));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return { path: socketPath, server };
  } catch (e) {
    console.error(`engine: cannot listen on the local socket ${socketPath} (${(e as Error).message}); gRPC only`);
    return { path: '' };
  }
}
