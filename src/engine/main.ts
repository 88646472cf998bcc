// Engine process entry: `node dist/engine.js --grpc-port N --data-dir DIR
// [--host H] [--default-location L] [--project-id P] [--dataset D] [--sync-writes]
// [--enable-python-udfs] [--memory-limit SIZE] [--local-files DIRS | --no-local-files]
// [--grpc-socket PATH] [--local-socket PATH]`.
// Locks the data dir, opens the catalog (rows load lazily), serves gRPC and
// prints `engine serving on <port>`; SIGTERM/SIGINT fold WALs and exit.
import { rmSync } from 'node:fs';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { DataDirLockedError } from '../storage/lock.js';
import { Storage } from '../storage/store.js';
import { chunkCache } from '../storage/chunk-cache.js';
import { budgetOf, defaultMemoryLimit, memoryBudget, parseMemorySize } from '../storage/memory-budget.js';
import { enablePythonUdfs, pythonUdfsEnvEnabled } from '../udf/python.js';
import { envDirs, policyFor, setLocalFilesPolicy, splitDirs } from '../io/local-access.js';
import { engineHandlers, findProto, loadEngineService, toServiceError, tuneServer } from './service.js';
import { ResultStore } from './results.js';
import { RowService } from './rows.js';
import { EngineCatalog } from './catalog.js';
import { executeQuery } from './query.js';
import { serveLocal } from './local-rpc.js';
import { allowYoungGenerationGrowth, privateGc, YoungGenerationTrimmer } from './young-gen.js';
import { memoryCheck } from './memory-guard.js';
import { refuseUndecodable, tolerantDecoding } from './grpc-guard.js';
import { setMemoryCheck } from '../executor/context.js';
import { setSpillDir } from '../executor/spill.js';
import { poolSize } from '../executor/parallel/pool.js';

interface Flags {
  grpcPort: number;
  host: string;
  dataDir: string;
  defaultLocation: string;
  projectId: string;
  dataset: string;
  /** Also serve on this Unix socket (the gateway's own engine: cheaper than loopback TCP). */
  grpcSocket: string;
  /** Also answer unary Engine calls on this Unix socket without gRPC (local-rpc.ts; the gateway's own engine). */
  localSocket: string;
  /** fdatasync each insert's WAL record before acknowledging it (power-loss durability; default: sync in the background). */
  syncWrites: boolean;
  /** Run LANGUAGE python UDFs (their code runs on this host). */
  enablePythonUdfs: boolean;
  /** Budget of decoded table data in bytes (the chunk cache); 0: its default. */
  memoryLimit: number;
  /** --local-files directories (undefined: none given, the environment's or the default for the host); [] after --no-local-files. */
  localFiles: string[] | undefined;
}

function parseFlags(argv: readonly string[]): Flags {
  const f: Flags = {
    grpcPort: 9060,
    host: '127.0.0.1',
    dataDir: process.env.WAREHOUSE_EMULATOR_DATA_DIR || process.env.BIGQUERY_EMULATOR_DATA_DIR || path.resolve('warehouse-data'),
    defaultLocation: 'US',
    projectId: '',
    dataset: '',
    grpcSocket: '',
    localSocket: '',
    syncWrites: /^(1|true|yes|on)$/i.test(process.env.WAREHOUSE_EMULATOR_SYNC_WRITES || process.env.BIGQUERY_EMULATOR_SYNC_WRITES || ''),
    enablePythonUdfs: pythonUdfsEnvEnabled(),
    memoryLimit: 0,
    localFiles: undefined,
  };
  const envLimit = process.env.WAREHOUSE_EMULATOR_MEMORY_LIMIT || process.env.BIGQUERY_EMULATOR_MEMORY_LIMIT;
  if (envLimit) f.memoryLimit = parseMemorySize(envLimit);
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i]!;
    let v: string | undefined;
    const eq = a.indexOf('=');
    if (eq > 0) {
      v = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    const name = a.replace(/^--?/, '').replace(/_/g, '-');
    const take = (): string => {
      if (v !== undefined) return v;
      const n = argv[++i];
      if (n === undefined) throw new Error(`flag --${name} needs a value`);
      return n;
    };
    switch (name) {
      case 'grpc-port':
      case 'port':
        f.grpcPort = parseInt(take(), 10);
        break;
      case 'host':
      case 'listen-host':
        f.host = take();
        break;
      case 'data-dir':
        f.dataDir = take();
        break;
      case 'default-location':
      case 'default-dataset-location':
        f.defaultLocation = take() || 'US';
        break;
      case 'project-id':
      case 'project':
        f.projectId = take();
        break;
      case 'dataset':
      case 'dataset-id':
        f.dataset = take();
        break;
      case 'grpc-socket':
        f.grpcSocket = take();
        break;
      case 'local-socket':
        f.localSocket = take();
        break;
      case 'sync-writes':
        // A bare flag, or --sync-writes=true|false.
        f.syncWrites = v === undefined || /^(1|true|yes|on)$/i.test(v);
        break;
      case 'enable-python-udfs':
        f.enablePythonUdfs = v === undefined || /^(1|true|yes|on)$/i.test(v);
        break;
      case 'memory-limit':
        f.memoryLimit = parseMemorySize(take());
        break;
      case 'local-files':
        f.localFiles = [...(f.localFiles ?? []), ...splitDirs([take()])];
        break;
      case 'no-local-files':
        f.localFiles = [];
        break;
      default:
        throw new Error(`unknown flag ${argv[i]}`);
    }
  }
  if (!Number.isInteger(f.grpcPort) || f.grpcPort < 0 || f.grpcPort > 65535) throw new Error('invalid --grpc-port');
  return f;
}

type Services = Record<string, grpc.ServiceDefinition>;

/**
 * The Storage Read/Write API definitions (method paths and message codecs),
 * from the same proto files and loader options as `storage-read/service.ts`
 * and `storage-write/service.ts` use; cheap next to their implementations.
 */
function storageServiceDefinitions(): Services {
  const protoDir = path.dirname(findProto());
  const load = (file: string): grpc.GrpcObject =>
    grpc.loadPackageDefinition(
      protoLoader.loadSync(path.join(protoDir, file), { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true, includeDirs: [protoDir] }),
    );
  type Pkg = Record<string, Record<string, grpc.ServiceClientConstructor>>;
  const read = load('warehouse_storage_read.proto') as unknown as { google: { cloud: { bigquery: { storage: { v1: Pkg[string] } } } }; warehouse_emulator: { v1: Pkg[string] } };
  const write = load('storage_write.proto') as unknown as { google: { cloud: { bigquery: { storage: { v1: Pkg[string] } } } } };
  return {
    BigQueryRead: tolerantDecoding(read.google.cloud.bigquery.storage.v1['BigQueryRead']!.service),
    StorageRead: tolerantDecoding(read.warehouse_emulator.v1['StorageRead']!.service),
    BigQueryWrite: tolerantDecoding(write.google.cloud.bigquery.storage.v1['BigQueryWrite']!.service),
  };
}

type AnyCall =
  | grpc.ServerUnaryCall<unknown, unknown>
  | grpc.ServerReadableStream<unknown, unknown>
  | grpc.ServerWritableStream<unknown, unknown>
  | grpc.ServerDuplexStream<unknown, unknown>;
type AnyHandler = (call: AnyCall, callback?: grpc.sendUnaryData<unknown>) => void;

/**
 * Handlers that import their implementation on the first call. The Storage
 * Read API pulls in apache-arrow (~17 MB resident): an engine that never
 * serves it should not carry it. Requests that arrive while the module loads
 * wait in the call's stream buffer.
 */
function lazyHandlers(def: grpc.ServiceDefinition, load: () => Promise<grpc.UntypedServiceImplementation>): grpc.UntypedServiceImplementation {
  const out: grpc.UntypedServiceImplementation = {};
  for (const name of Object.keys(def)) {
    const handler: AnyHandler = (call, callback) => {
      load().then(
        (impl) => (impl[name] as unknown as AnyHandler)(call, callback),
        (e: unknown) => {
          const err = toServiceError(e);
          if (callback) callback(err);
          else call.emit('error', err);
        },
      );
    };
    out[name] = handler as unknown as grpc.UntypedHandleCall;
  }
  return out;
}

function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= f());
}

/**
 * Counts calls in flight for the young-generation trimmer: a unary call ends
 * with its callback, a streaming one when grpc-js emits 'cancelled' (it does
 * when any call closes, finished ones included). Health is left out: it is
 * answered at once, and a caller polling it must not keep the engine "busy".
 */
function trackCalls(handlers: grpc.UntypedServiceImplementation, trimmer: YoungGenerationTrimmer): grpc.UntypedServiceImplementation {
  const out: grpc.UntypedServiceImplementation = {};
  for (const [name, h] of Object.entries(handlers)) {
    if (name === 'Health') {
      out[name] = h;
      continue;
    }
    const inner = h as unknown as AnyHandler;
    const tracked: AnyHandler = (call, callback) => {
      trimmer.begin();
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        trimmer.end();
      };
      try {
        if (callback) {
          inner(call, (err, value, trailer, flags) => {
            end();
            callback(err, value, trailer, flags);
          });
        } else {
          (call as NodeJS.EventEmitter).once('cancelled', end);
          inner(call);
        }
      } catch (e) {
        end();
        throw e;
      }
    };
    out[name] = tracked as unknown as grpc.UntypedHandleCall;
  }
  return out;
}

function addStorageServices(server: grpc.Server, storage: Storage, trimmer: YoungGenerationTrimmer | undefined): void {
  const defs = storageServiceDefinitions();
  // One implementation behind both read service names (sessions are shared), as before.
  const read = once(async () => new (await import('./storage-read/service.js')).StorageReadService(storage, toServiceError).handlers());
  const write = once(async () =>
    new (await import('./storage-write/service.js')).StorageWriteService(storage, new RowService(storage, new ResultStore()), toServiceError).handlers(),
  );
  const track = (h: grpc.UntypedServiceImplementation): grpc.UntypedServiceImplementation => (trimmer ? trackCalls(h, trimmer) : h);
  for (const [name, impl] of [['BigQueryRead', read], ['StorageRead', read], ['BigQueryWrite', write]] as const) {
    const def = defs[name]!;
    server.addService(def, track(refuseUndecodable(def, lazyHandlers(def, impl))));
  }
}

/**
 * Binds the gRPC server on a Unix socket as well (a stale file from a killed
 * engine is removed first). A unary call costs ~25 us less CPU here and ~40 us
 * less in the gateway than over loopback TCP. Failure only means TCP: ''.
 */
async function bindSocket(server: grpc.Server, socketPath: string): Promise<string> {
  try {
    rmSync(socketPath, { force: true });
    await new Promise<number>((resolve, reject) =>
      server.bindAsync(`unix:${socketPath}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    return socketPath;
  } catch (e) {
    console.error(`engine: cannot listen on unix:${socketPath} (${(e as Error).message}); TCP only`);
    return '';
  }
}

/** Run once at start, in process: loads the SQL pipeline and compiles its common path. */
const WARM_UP_QUERY = 'SELECT 1';
const WARM_UP_ROUNDS = 5;
/** Warm-up start: this long after the first Health answer, or after start when no Health call comes. */
const WARM_UP_AFTER_PROBE_MS = 50;
const WARM_UP_UNPROBED_MS = 2_000;

/**
 * The first query of a fresh engine used to pay for loading the SQL pipeline
 * (0.3-2 s on a busy 2-core machine). A tiny query run right after start
 * moves that cost out of the first client query; it goes through
 * executeQuery with a private catalog view and result store, so nothing is
 * stored and no job exists. (Larger warm-up shapes were measured: each
 * operator they compile stays resident, ~5 MB for a GROUP BY.)
 */
async function warmUp(storage: Storage): Promise<void> {
  try {
    const catalog = new EngineCatalog(storage);
    const results = new ResultStore();
    const signal = new AbortController().signal;
    for (let i = 0; i < WARM_UP_ROUNDS; i++) {
      await executeQuery(storage, catalog, results, {
        projectId: '_warm_up', jobId: `warm_up_${i}`, query: WARM_UP_QUERY, dryRun: false, maxResults: 100,
        wire: { timestampFormat: 'RFC3339', stringScalars: true }, signal,
      });
      // Client calls that arrive meanwhile go first.
      await new Promise((r) => setImmediate(r));
    }
  } catch (e) {
    console.error('engine: warm-up query failed (queries still work):', e);
  }
}

/**
 * Last resort for errors no handler caught. Every RPC answers its own errors
 * (service.ts unary, local-rpc.ts), so these mean a bug, never a client's input.
 * A rejected promise nobody awaited has already unwound its work like any
 * caught error (storage never relies on a crash: a failed WAL sync is handled
 * where it happens): it is logged and the engine goes on. A synchronous throw
 * out of an event callback may have stopped halfway through changing in-memory
 * state, so the engine exits and the supervisor restarts it from the data on
 * disk, which is always consistent.
 */
function guardProcess(): void {
  process.on('unhandledRejection', (e) => console.error('engine: unhandled promise rejection (the engine goes on):', e));
  process.on('uncaughtException', (e) => {
    console.error('engine: uncaught exception, exiting so that the engine restarts from its data on disk:', e);
    process.exit(70);
  });
}

async function main(): Promise<void> {
  guardProcess();
  let flags: Flags;
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (e) {
    console.error(`engine: ${(e as Error).message}`);
    process.exit(2);
  }
  enablePythonUdfs(flags.enablePythonUdfs);
  const dirs = flags.localFiles ?? envDirs();
  // --no-local-files refuses every path, whatever the host.
  setLocalFilesPolicy(dirs?.length === 0 && flags.localFiles ? { mode: 'none' } : policyFor(dirs, flags.host), [path.join(path.resolve(flags.dataDir), '.uploads')]);
  let storage: Storage;
  try {
    // The caches and operators share the limit less the processes' own overhead (memory-budget.ts budgetOf).
    chunkCache.budget = budgetOf(flags.memoryLimit > 0 ? flags.memoryLimit : defaultMemoryLimit(), poolSize());
    memoryBudget.limit = chunkCache.budget;
    // Operators' spill files live beside the data (the temp directory may be a small tmpfs); a crash's leftovers go now.
    setSpillDir(path.join(path.resolve(flags.dataDir), '.spill'));
    storage = await Storage.open(flags.dataDir, { defaultLocation: flags.defaultLocation, syncWrites: flags.syncWrites });
  } catch (e) {
    console.error(`engine: ${e instanceof DataDirLockedError ? e.message : (e as Error).stack}`);
    process.exit(e instanceof DataDirLockedError ? 3 : 1);
  }
  const server = new grpc.Server({
    'grpc.max_receive_message_length': 512 * 1024 * 1024,
    'grpc.max_send_message_length': 512 * 1024 * 1024,
    // No channelz bookkeeping (per-call counters and traces nobody reads).
    'grpc.enable_channelz': 0,
  });
  tuneServer(server);
  const handlers = engineHandlers(storage, { defaultDataset: flags.dataset || undefined, defaultProject: flags.projectId || undefined });
  // Loading the pipeline blocks the event loop for a few hundred ms: start the
  // warm-up only once the gateway's readiness probe (Health) has its answer,
  // so start to healthy does not wait for it (or after a while when nobody probes).
  let warm: NodeJS.Timeout | undefined = setTimeout(() => startWarmUp(), WARM_UP_UNPROBED_MS);
  const startWarmUp = (): void => {
    if (!warm) return;
    clearTimeout(warm);
    warm = undefined;
    // Start-up ran with new-space growth off (see allowYoungGenerationGrowth).
    void warmUp(storage).finally(allowYoungGenerationGrowth);
  };
  const health = handlers['Health'] as grpc.handleUnaryCall<unknown, unknown>;
  handlers['Health'] = ((call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
    health(call, callback);
    if (warm) setTimeout(startWarmUp, WARM_UP_AFTER_PROBE_MS);
  }) as grpc.handleUnaryCall<unknown, unknown>;
  // Young generation: grows under load, trimmed back when idle (young-gen.ts).
  const gc = privateGc();
  // A full GC is `gc()` without arguments.
  setMemoryCheck(memoryCheck(gc && (() => gc()), () => chunkCache.bytesUsed));
  // Dead chunks and operator state outside V8's heap are collected once enough piled up (memory-budget.ts).
  if (gc) memoryBudget.collect = () => gc();
  const trimmer = gc ? new YoungGenerationTrimmer(gc) : undefined;
  const engineService = tolerantDecoding(loadEngineService());
  const guarded = refuseUndecodable(engineService, handlers);
  const served = trimmer ? trackCalls(guarded, trimmer) : guarded;
  server.addService(engineService, served);
  addStorageServices(server, storage, trimmer);
  const host = flags.host.includes(':') && !flags.host.startsWith('[') ? `[${flags.host}]` : flags.host;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${flags.grpcPort}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  ).catch((e: unknown) => {
    storage.close().catch(() => undefined);
    console.error(`engine: cannot listen on ${host}:${flags.grpcPort}: ${(e as Error).message}`);
    process.exit(4);
  });
  const socket = flags.grpcSocket ? await bindSocket(server, flags.grpcSocket) : '';
  const local = flags.localSocket ? await serveLocal(flags.localSocket, engineService, served) : { path: '' };
  // The gateway reads this line; ` socket <path>` tells it the gRPC Unix socket is up, ` local <path>` the local one.
  console.log(`engine serving on ${port}${socket ? ` socket ${socket}` : ''}${local.path ? ` local ${local.path}` : ''}`);

  let stopping = false;
  if (socket) process.on('exit', () => rmSync(socket, { force: true }));
  if (local.path) process.on('exit', () => rmSync(local.path, { force: true }));
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    trimmer?.stop();
    const hard = setTimeout(() => process.exit(0), 10_000);
    hard.unref();
    server.tryShutdown(() => undefined);
    local.server?.close();
    storage
      .close()
      .catch((e: unknown) => console.error(`engine: flush on ${signal} failed`, e))
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Spawned by the gateway with a stdin pipe: EOF means the gateway is gone (even kill -9), so no orphan keeps the lock.
  if (process.env.WAREHOUSE_ENGINE_PARENT_PIPE === '1' && !process.stdin.isTTY) {
    process.stdin.on('error', () => undefined);
    process.stdin.on('end', () => stop('parent exit'));
    process.stdin.resume();
  }
}

void main();
