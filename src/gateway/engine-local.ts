// The gateway's way to the engine. `EngineConnection` sends each call over
// the engine's local socket (src/engine/local-rpc.ts) when connected: the
// same unary Engine calls as EngineClient, with the same protobuf messages and
// the same RestError results, over one plain Unix-socket connection instead
// of gRPC's HTTP/2. The gateway's own engine says where that socket is in its
// serving line; an external engine, or the gap before a restarted engine
// serves, uses gRPC (EngineClient), which is loaded only then: a gateway
// whose engine serves locally never loads grpc-js.
import { connect, type Socket } from 'node:net';
import { engineProto } from './engine-proto.js';
import { FrameKind, FrameReader, frame, outOfLineFields, splitOutOfLine, writeFrame, type MessageTypeDescriptor, type OutOfLineField } from '../engine/local-rpc.js';
import type { CallOpts, CancelSignal, EngineClient, EngineMethod, EngineRpcs } from './engine-client.js';
import { RestError, unavailable, type ErrorInfo } from './errors.js';

/** What the transport needs of a method: its protobuf codecs and request fields (proto-loader's and grpc-js's definitions both fit). */
export type MethodCodecs = Readonly<Record<string, {
  requestSerialize(v: unknown): Buffer;
  responseDeserialize(b: Buffer): unknown;
  readonly requestType?: MessageTypeDescriptor;
} | undefined>>;

const DEFAULT_DEADLINE_MS = 60_000;
/** The socket's one read buffer (see LocalEngineTransport.use). */
const READ_BUFFER_BYTES = 64 * 1024;
/** gRPC status codes the local socket's errors carry (the subset toRestError maps without an error body). */
const CANCELLED = 1;
const DEADLINE_EXCEEDED = 4;
const UNAVAILABLE = 14;

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: RestError) => void;
  decode: (b: Buffer) => unknown;
  timer: NodeJS.Timeout | undefined;
  signal: CancelSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** The error of an ERROR frame, as EngineClient's toRestError makes it from the same gRPC error. */
function errorOf(body: Buffer): RestError {
  let parsed: { code?: number; details?: string; error?: string } = {};
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch {
    // an unreadable error is an internal error below
  }
  if (parsed.error !== undefined) {
    try {
      const info = JSON.parse(parsed.error) as Partial<ErrorInfo>;
      if (typeof info.code === 'number' && typeof info.message === 'string') {
        return new RestError(info.code, info.reason ?? 'invalid', info.message, info.status);
      }
    } catch {
      // fall through to the status mapping
    }
  }
  const detail = parsed.details ?? '';
  if (parsed.code === UNAVAILABLE) return unavailable();
  if (parsed.code === 12) return new RestError(501, 'notImplemented', detail || 'Not implemented by the engine');
  return new RestError(500, 'internalError', detail || 'An internal error occurred and the request could not be completed.');
}

export class LocalEngineTransport {
  private sock: Socket | undefined;
  private connected = false;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly bytesFields = new Map<string, readonly OutOfLineField[]>();

  /** `service`: the Engine service's method codecs. */
  constructor(private readonly service: MethodCodecs) {}

  /** Whether calls can go over the socket now. */
  get ready(): boolean {
    return this.connected;
  }

  /** Connects to a (new) engine's socket; `undefined` disconnects. Resolves once connected or failed. */
  use(path: string | undefined): Promise<void> {
    this.drop(unavailable());
    if (!path) return Promise.resolve();
    // Replies are read into one reused buffer and copied out frame by frame
    // (FrameReader's borrowed mode): a megabyte page of rows is then one
    // allocation, not ~20 64 KB socket reads plus their join, all external
    // memory that V8 counts towards its next full GC.
    const reader = new FrameReader((id, kind, body) => this.onFrame(id, kind, body), true);
    const sock = connect({
      path,
      onread: {
        buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
        callback: (n: number, buf: Uint8Array) => {
          reader.push(Buffer.from(buf.buffer, buf.byteOffset, n));
          return true;
        },
      },
    });
    this.sock = sock;
    sock.setNoDelay(true);
    return new Promise((resolve) => {
      sock.on('connect', () => {
        if (this.sock === sock) this.connected = true;
        resolve();
      });
      sock.on('error', () => resolve());
      sock.on('close', () => {
        if (this.sock === sock) this.drop(unavailable());
        resolve();
      });
    });
  }

  /** Ends the connection; pending calls fail with `err` (the engine went away: 503). */
  private drop(err: RestError): void {
    const sock = this.sock;
    this.sock = undefined;
    this.connected = false;
    sock?.destroy();
    for (const [id, p] of this.pending) this.settle(id, p)?.reject(err);
  }

  close(): void {
    this.drop(unavailable());
  }

  private settle(id: number, p: Pending): Pending | undefined {
    if (!this.pending.delete(id)) return undefined;
    clearTimeout(p.timer);
    if (p.onAbort) p.signal?.removeEventListener('abort', p.onAbort);
    return p;
  }

  private onFrame(id: number, kind: FrameKind, body: Buffer): void {
    const p = this.pending.get(id);
    if (!p || !this.settle(id, p)) return;
    if (kind === FrameKind.Reply) {
      let value: unknown;
      try {
        value = p.decode(body);
      } catch (e) {
        p.reject(new RestError(500, 'internalError', `Cannot decode the engine's reply: ${(e as Error).message}`));
        return;
      }
      p.resolve(value);
    } else p.reject(errorOf(body));
  }

  /** Same contract as EngineClient.call: resolves with the decoded reply, rejects with a RestError. */
  call<M extends EngineMethod>(method: M, req: EngineRpcs[M][0], opts: CallOpts = {}): Promise<EngineRpcs[M][1]> {
    const m = this.service[method];
    const sock = this.sock;
    if (!m || !sock || !this.connected) return Promise.reject(unavailable());
    return new Promise((resolve, reject) => {
      const signal = opts.signal;
      if (signal?.aborted) {
        reject(new RestError(400, 'stopped', 'Job execution was cancelled: User requested cancellation'));
        return;
      }
      let fields = this.bytesFields.get(method);
      if (!fields) this.bytesFields.set(method, (fields = outOfLineFields(m.requestType)));
      // Large bytes values: left out of the encoded message, written after it (see OutOfLineField).
      const { msg, tail, tailLen } = splitOutOfLine(req, fields);
      let payload: Buffer;
      try {
        payload = m.requestSerialize(msg);
      } catch (e) {
        reject(new RestError(500, 'internalError', `Cannot encode the ${method} request: ${(e as Error).message}`));
        return;
      }
      const id = this.nextId;
      this.nextId = this.nextId >= 0x7fffffff ? 1 : this.nextId + 1;
      const p: Pending = { resolve: resolve as (v: unknown) => void, reject, decode: (b) => m.responseDeserialize(b), timer: undefined, signal, onAbort: undefined };
      // Giving up (deadline, cancel) tells the engine, which cancels the handler as gRPC would.
      const giveUp = (code: number, detail: string): void => {
        if (!this.settle(id, p)) return;
        if (!sock.destroyed) sock.write(frame(id, FrameKind.Cancel));
        p.reject(code === DEADLINE_EXCEEDED
          ? new RestError(503, 'backendError', 'The engine did not answer in time: ' + detail, 'deadlineExceeded')
          : new RestError(400, 'stopped', 'Job execution was cancelled: ' + detail, 'cancelled'));
      };
      const deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
      if (deadlineMs > 0) p.timer = setTimeout(() => giveUp(DEADLINE_EXCEEDED, 'Deadline exceeded'), deadlineMs);
      if (signal) {
        p.onAbort = () => giveUp(CANCELLED, 'Cancelled on client');
        signal.addEventListener('abort', p.onAbort, { once: true });
      }
      this.pending.set(id, p);
      // One writev for the head and the out-of-line values.
      writeFrame(sock, id, FrameKind.Request, payload, method, tail, tailLen);
    });
  }
}

/**
 * Engine calls for the gateway: over the local socket when connected, else
 * over gRPC (EngineClient, created on first need; the Unix socket the engine
 * named for gRPC is remembered for it).
 */
export class EngineConnection {
  private readonly local: LocalEngineTransport;
  private grpcSocket: string | undefined;
  private grpcClient: EngineClient | undefined;
  private grpcLoading: Promise<EngineClient> | undefined;

  constructor(public address: string) {
    this.local = new LocalEngineTransport(engineProto()['warehouse_emulator.engine.v1.Engine'] as unknown as MethodCodecs);
  }

  /** The engine's TCP address once known (an engine spawned with --grpc-port 0 names its port when it serves). */
  useAddress(address: string): void {
    if (address === this.address) return;
    this.address = address;
    this.grpcClient?.close();
    this.grpcClient = undefined;
    this.grpcLoading = undefined;
  }

  /** Whether calls go over the local socket now. */
  get localReady(): boolean {
    return this.local.ready;
  }

  /** The engine's local socket (`undefined`: none); resolves once connected or failed. */
  useLocal(path: string | undefined): Promise<void> {
    return this.local.use(path);
  }

  /** The Unix socket of the engine's gRPC server (`undefined`: back to the TCP address). */
  useSocket(path: string | undefined): void {
    this.grpcSocket = path;
    this.grpcClient?.useSocket(path);
  }

  call<M extends EngineMethod>(method: M, req: EngineRpcs[M][0], opts?: CallOpts): Promise<EngineRpcs[M][1]> {
    if (this.local.ready) return this.local.call(method, req, opts);
    if (this.grpcClient) return this.grpcClient.call(method, req, opts);
    return this.grpc().then((c) => c.call(method, req, opts));
  }

  private grpc(): Promise<EngineClient> {
    this.grpcLoading ??= import('./engine-client.js').then(({ EngineClient: Client }) => {
      const c = new Client(this.address);
      c.useSocket(this.grpcSocket);
      this.grpcClient = c;
      return c;
    });
    return this.grpcLoading;
  }

  close(): void {
    this.local.close();
    this.grpcClient?.close();
  }
}
