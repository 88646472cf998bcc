// Test helpers: an Engine gRPC client, an in-process engine and a spawned one.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { Storage } from '../../src/storage/store.js';
import { engineHandlers, loadEngineService, tuneServer, type ServiceOptions } from '../../src/engine/service.js';

export interface WarehouseError {
  code: number;
  status: string;
  reason: string;
  message: string;
}

export class RpcError extends Error {
  constructor(
    readonly grpcCode: number,
    readonly body: WarehouseError | null,
  ) {
    super(body?.message ?? `grpc ${grpcCode}`);
  }
}

type Json = Record<string, unknown>;

export class EngineClient {
  private readonly client: grpc.Client & Record<string, (req: Json, cb: (e: grpc.ServiceError | null, r: Json) => void) => void>;

  constructor(address: string) {
    const Ctor = grpc.makeGenericClientConstructor(loadEngineService(), 'Engine');
    this.client = new Ctor(address, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': -1, 'grpc.max_send_message_length': -1, 'grpc-node.flow_control_window': 16 * 1024 * 1024 }) as never;
  }

  call<T = Json>(method: string, req: Json): Promise<T> {
    return new Promise((resolve, reject) => {
      this.client[method]!(req, (e, r) => {
        if (e) {
          const raw = e.metadata?.get('x-warehouse-error')?.[0];
          reject(new RpcError(e.code, raw ? (JSON.parse(String(raw)) as WarehouseError) : null));
        } else resolve(r as T);
      });
    });
  }

  /** Calls and parses `resourceJson`. */
  async resource(method: string, req: Json): Promise<Json> {
    const r = await this.call<{ resourceJson: string }>(method, req);
    return JSON.parse(r.resourceJson) as Json;
  }

  async error(method: string, req: Json): Promise<WarehouseError> {
    try {
      await this.call(method, req);
    } catch (e) {
      if (e instanceof RpcError && e.body) return e.body;
      throw e;
    }
    throw new Error(`${method} succeeded, expected an error`);
  }

  close(): void {
    this.client.close();
  }
}

export function tempDir(prefix = 'wh-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface InProcessEngine {
  readonly client: EngineClient;
  readonly storage: Storage;
  readonly dataDir: string;
  close(): Promise<void>;
}

/** `opts`: the engine's server-level options (its standalone --dataset / --project-id). */
export async function startInProcess(dataDir = tempDir(), opts: ServiceOptions = {}): Promise<InProcessEngine> {
  const storage = await Storage.open(dataDir, { defaultLocation: 'US' });
  const server = new grpc.Server();
  tuneServer(server);
  server.addService(loadEngineService(), engineHandlers(storage, opts));
  const port = await new Promise<number>((res, rej) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))));
  const client = new EngineClient(`127.0.0.1:${port}`);
  return {
    client,
    storage,
    dataDir,
    async close() {
      client.close();
      await new Promise<void>((r) => server.tryShutdown(() => r()));
      await storage.close();
    },
  };
}

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

export interface SpawnedEngine {
  readonly proc: ChildProcess;
  readonly port: number;
  readonly client: EngineClient;
  readonly startMs: number;
}

/** Spawns `src/engine/main.ts` under tsx (ENGINE_FROM_DIST=1: the bundle) and waits for the serving line. */
export async function spawnEngine(dataDir: string, extra: string[] = [], env: Record<string, string> = {}): Promise<SpawnedEngine> {
  const t0 = performance.now();
  const useDist = process.env.ENGINE_FROM_DIST === '1' && fs.existsSync(path.join(ROOT, 'dist/engine.js'));
  const args = useDist ? [path.join(ROOT, 'dist/engine.js')] : ['--import', 'tsx', path.join(ROOT, 'src/engine/main.ts')];
  const proc = spawn(process.execPath, [...args, '--grpc-port', '0', '--data-dir', dataDir, ...extra], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /engine serving on (\d+)/.exec(out);
      if (m) resolve(parseInt(m[1]!, 10));
    });
    proc.on('exit', (code) => reject(new Error(`engine exited ${code}: ${err}`)));
  });
  return { proc, port, client: new EngineClient(`127.0.0.1:${port}`), startMs: performance.now() - t0 };
}
