// Programmatic start for test suites: `startEmulator()` runs the emulator
// (gateway + engine, the same processes as the `warehouse-emulator` command)
// on ephemeral ports with a temporary data dir and resolves once it serves.
// Kept free of project imports: it is bundled alone into dist/index.js, and
// its declarations are dist/index.d.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface EmulatorOptions {
  /** Default project (`--project-id`); default `test`. */
  projectId?: string;
  /** Data dir (`--data-dir`); default a new temporary directory, removed by `stop()`. */
  dataDir?: string;
  /** Keep a temporary data dir after `stop()` (default false; a given `dataDir` is always kept). */
  keepDataDir?: boolean;
  /** Template copied into an uninitialized data dir (`--initial-data-dir`). */
  initialDataDir?: string;
  /** YAML seed files, applied in order before the emulator serves (`--seed-data-file`); goccy/bigquery-emulator's format is accepted too. */
  seedDataFiles?: string[];
  /** Server-level default dataset for unqualified table names (`--dataset`). */
  dataset?: string;
  /** Location stamped on datasets created without one (`--default-dataset-location`). */
  defaultDatasetLocation?: string;
  /** Host to listen on; default `127.0.0.1`. */
  host?: string;
  /** REST port; default 0 (an ephemeral port). */
  httpPort?: number;
  /** Engine gRPC port (Storage Read/Write API); default 0 (an ephemeral port). */
  grpcPort?: number;
  /** Acknowledge inserts only after fdatasync (`--sync-writes`). */
  syncWrites?: boolean;
  /** Directories local `file://` and absolute paths in loads, extracts, LOAD DATA, EXPORT DATA, external tables and UDF libraries are confined to (`--local-files`); default: any path on a loopback host, none on another. */
  localFiles?: string[];
  /** Further gateway flags, as on the command line. */
  args?: string[];
  /** Environment of the emulator processes (added to this process's). */
  env?: Record<string, string>;
  /** Where the emulator's log lines go besides a start-up error's message: a callback, `'inherit'` (this process's stderr) or `'ignore'` (default). */
  log?: ((line: string) => void) | 'inherit' | 'ignore';
  /** How long to wait for the emulator to serve; default 60 000 ms. */
  startTimeoutMs?: number;
}

export interface RunningEmulator {
  /** REST base URL, e.g. `http://127.0.0.1:40123` (Node: `apiEndpoint`; `bq --api`). */
  url: string;
  /** `host:port` of the engine's gRPC server (Storage Read/Write API clients). */
  grpcAddress: string;
  projectId: string;
  dataDir: string;
  /** Process id of the gateway (the engine is its child). */
  pid: number;
  /** Environment variables that point client libraries at this emulator (`BIGQUERY_EMULATOR_HOST`, `WAREHOUSE_EMULATOR_HOST`). */
  env: Record<string, string>;
  /** Stops both processes (their sockets are removed) and deletes a temporary data dir. */
  stop(): Promise<void>;
}

interface ReadyMessage {
  type: 'ready';
  httpPort: number;
  grpcPort: number;
  dataDir: string;
}

/** dist/gateway.js beside this bundle (dist/index.js), or from src/api/ under a TypeScript loader. */
function gatewayScript(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const p of [join(here, 'gateway.js'), join(here, '..', '..', 'dist', 'gateway.js')]) if (existsSync(p)) return p;
  throw new Error(`warehouse-emulator: dist/gateway.js not found next to ${here} (run npm run build)`);
}

function flags(o: EmulatorOptions, dataDir: string, projectId: string): string[] {
  const a = [
    `--listen-host=${o.host ?? '127.0.0.1'}`,
    `--http-port=${o.httpPort ?? 0}`,
    `--grpc-port=${o.grpcPort ?? 0}`,
    `--data-dir=${dataDir}`,
    `--project-id=${projectId}`,
  ];
  if (o.initialDataDir) a.push(`--initial-data-dir=${o.initialDataDir}`);
  for (const f of o.seedDataFiles ?? []) a.push(`--seed-data-file=${f}`);
  if (o.dataset) a.push(`--dataset=${o.dataset}`);
  if (o.defaultDatasetLocation) a.push(`--default-dataset-location=${o.defaultDatasetLocation}`);
  if (o.syncWrites) a.push('--sync-writes');
  if (o.localFiles?.length) a.push(`--local-files=${o.localFiles.join(',')}`);
  return [...a, ...(o.args ?? [])];
}

/** Stops the child: SIGTERM (its own shutdown stops the engine), SIGKILL after 5 s. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** Starts an emulator and resolves once it answers REST calls. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const projectId = options.projectId ?? 'test';
  const tempDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'warehouse-emulator-'));
  const removeTemp = (): void => {
    if (tempDir && !options.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  const child = spawn(process.execPath, [gatewayScript(), ...flags(options, dataDir, projectId)], {
    // A temporary data dir is named to the gateway, which removes it if this process dies without stop().
    env: { ...process.env, ...options.env, ...(tempDir && !options.keepDataDir ? { WAREHOUSE_EMULATOR_TEMP_DATA_DIR: dataDir } : {}) },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  // If this process exits without stop(), take the emulator along (the IPC
  // channel's close also makes it stop when this process is SIGKILLed).
  const killOnExit = (): void => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  process.on('exit', killOnExit);
  let output = '';
  const log = options.log;
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    if (output.length < 64 * 1024) output += s; // for a start-up error's message
    if (typeof log === 'function') {
      for (const line of s.split('\n')) if (line) log(line);
    } else if (log === 'inherit') process.stderr.write(s);
  });
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  let ready: ReadyMessage;
  try {
    ready = await new Promise<ReadyMessage>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`warehouse-emulator did not start within ${timeoutMs} ms\n${output}`)), timeoutMs);
      child.on('message', (m: ReadyMessage) => {
        if (m?.type !== 'ready') return;
        clearTimeout(timer);
        resolve(m);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`warehouse-emulator exited (${signal ?? `code ${code}`}) before serving\n${output}`));
      });
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  } catch (e) {
    await stopChild(child);
    process.off('exit', killOnExit);
    removeTemp();
    throw e;
  }
  child.removeAllListeners('message');
  // The channel stays open (it is how the emulator notices this process
  // going away) but must not keep this process alive.
  child.channel?.unref();
  child.unref();
  (child.stderr as unknown as { unref?: () => void }).unref?.();
  const host = !options.host || options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  const url = `http://${host}:${ready.httpPort}`;
  let stopping: Promise<void> | undefined;
  return {
    url,
    grpcAddress: `${host}:${ready.grpcPort}`,
    projectId,
    dataDir,
    pid: child.pid!,
    env: { BIGQUERY_EMULATOR_HOST: url, WAREHOUSE_EMULATOR_HOST: `${host}:${ready.httpPort}` },
    stop: () =>
      (stopping ??= (async () => {
        await stopChild(child);
        process.off('exit', killOnExit);
        removeTemp();
      })()),
  };
}
