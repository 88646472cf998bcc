// Engine process entry: `node dist/engine.js --grpc-port N --data-dir DIR
// [--host H] [--default-location L] [--project-id P] [--dataset D]`.
// Locks the data dir, opens the catalog (rows load lazily), serves gRPC and
// prints `engine serving on <port>`; SIGTERM/SIGINT fold WALs and exit.
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { DataDirLockedError } from '../storage/lock.js';
import { Storage } from '../storage/store.js';
import { engineHandlers, findProto, loadEngineService, toServiceError, tuneServer } from './service.js';
import { loadStorageReadServices, StorageReadService } from './storage-read/service.js';
import { loadStorageWriteService, StorageWriteService } from './storage-write/service.js';
import { ResultStore } from './results.js';
import { RowService } from './rows.js';

interface Flags {
  grpcPort: number;
  host: string;
  dataDir: string;
  defaultLocation: string;
  projectId: string;
  dataset: string;
}

function parseFlags(argv: readonly string[]): Flags {
  const f: Flags = {
    grpcPort: 9060,
    host: '127.0.0.1',
    dataDir: process.env.WAREHOUSE_EMULATOR_DATA_DIR || process.env.BIGQUERY_EMULATOR_DATA_DIR || path.resolve('warehouse-data'),
    defaultLocation: 'US',
    projectId: '',
    dataset: '',
  };
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
      default:
        throw new Error(`unknown flag ${argv[i]}`);
    }
  }
  if (!Number.isInteger(f.grpcPort) || f.grpcPort < 0 || f.grpcPort > 65535) throw new Error('invalid --grpc-port');
  return f;
}

async function main(): Promise<void> {
  let flags: Flags;
  try {
    flags = parseFlags(process.argv.slice(2));
  } catch (e) {
    console.error(`engine: ${(e as Error).message}`);
    process.exit(2);
  }
  let storage: Storage;
  try {
    storage = await Storage.open(flags.dataDir, { defaultLocation: flags.defaultLocation });
  } catch (e) {
    console.error(`engine: ${e instanceof DataDirLockedError ? e.message : (e as Error).stack}`);
    process.exit(e instanceof DataDirLockedError ? 3 : 1);
  }
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 512 * 1024 * 1024, 'grpc.max_send_message_length': 512 * 1024 * 1024 });
  tuneServer(server);
  server.addService(loadEngineService(), engineHandlers(storage, { defaultDataset: flags.dataset || undefined, defaultProject: flags.projectId || undefined }));
  const storageRead = new StorageReadService(storage, toServiceError).handlers();
  for (const def of loadStorageReadServices(path.dirname(findProto()))) server.addService(def, storageRead);
  server.addService(loadStorageWriteService(path.dirname(findProto())), new StorageWriteService(storage, new RowService(storage, new ResultStore()), toServiceError).handlers());
  const host = flags.host.includes(':') && !flags.host.startsWith('[') ? `[${flags.host}]` : flags.host;
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${host}:${flags.grpcPort}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  ).catch((e: unknown) => {
    storage.close().catch(() => undefined);
    console.error(`engine: cannot listen on ${host}:${flags.grpcPort}: ${(e as Error).message}`);
    process.exit(4);
  });
  console.log(`engine serving on ${port}`);

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    const hard = setTimeout(() => process.exit(0), 10_000);
    hard.unref();
    server.tryShutdown(() => undefined);
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
