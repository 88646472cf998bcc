// Gateway entry: parse the command line, prepare the data dir, start (or find)
// the engine, apply seeds, and only then accept public HTTP traffic.
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
//
// Start-up order is tuned for time to healthy: only light modules are loaded
// statically (CLI, data dir, supervisor); the engine is spawned before the engine client,
// protobuf and Fastify are imported (dynamically, below), so the engine boots
// while the gateway loads and builds its HTTP app.
import { ensureDirSync } from '../storage/fsutil.js';
import { describePolicy, policyFor, setLocalFilesPolicy } from '../io/local-access.js';
import { CliExit, parseCli, type GatewayConfig } from './cli.js';
import { applyInitialDataDir, applySeedFiles, strayDbWarning } from './seed.js';
import type { EngineConnection } from './engine-local.js';
import type { buildServer as BuildServer } from './server.js';
import { EngineSupervisor } from './supervisor.js';

const EXTERNAL_ENGINE_WAIT_MS = 2_000;

function logger(prefix: string) {
  return (msg: string): void => {
    process.stderr.write(`${new Date().toISOString()} ${prefix} ${msg}\n`);
  };
}

/** Engine bind address: loopback unless the gateway itself is public (container: --hostname=0.0.0.0). */
function engineHost(listenHost: string): string {
  return listenHost === '0.0.0.0' || listenHost === '::' ? listenHost : '127.0.0.1';
}

async function run(config: GatewayConfig): Promise<void> {
  const log = logger('[gateway]');
  const debug = config.debug ? logger('[gateway:debug]') : (): void => undefined;
  for (const w of config.warnings) log(`warning: ${w}`);

  const dataDir = resolve(config.dataDir);
  try {
    ensureDirSync(dataDir);
  } catch (e) {
    log(`error: cannot create the data dir ${dataDir}: ${(e as Error).message}`);
    process.exit(1);
  }
  debug(`data dir ${dataDir} (from ${config.dataDirSource})`);
  applyInitialDataDir(config.initialDataDir, dataDir, log);
  const stray = strayDbWarning(dataDir);
  if (stray) log(`warning: ${stray}`);

  // Spec §1.1: a named engine binary that is not there is a start-up error, not a gateway waiting for it.
  if (config.engineBinary?.includes('/') && !existsSync(config.engineBinary)) {
    log(`error: --engine-binary ${config.engineBinary}: no such file`);
    process.exit(1);
  }
  // Both processes read and write the local paths clients name: one policy for both (io/local-access.ts).
  const localFiles = policyFor(config.localFiles, config.listenHost);
  setLocalFilesPolicy(localFiles, [join(dataDir, '.uploads')]);
  log(describePolicy(localFiles));
  const started = Date.now();
  const supervisor = new EngineSupervisor(
    {
      binary: config.engineBinary,
      grpcPort: config.grpcPort,
      engineHost: engineHost(config.listenHost),
      dataDir,
      defaultLocation: config.defaultDatasetLocation,
      projectId: config.projectId,
      copyStdout: config.copyEngineStdout,
      copyStderr: config.copyEngineStderr,
      syncWrites: config.syncWrites,
      enablePythonUdfs: config.enablePythonUdfs,
      memoryLimit: config.memoryLimit,
      localFiles,
      log,
      debug,
    },
  );
  let client: EngineConnection | undefined;

  let closing = false;
  let app: Awaited<ReturnType<typeof BuildServer>> | undefined;
  const shutdown = async (signal: string): Promise<void> => {
    if (closing) {
      process.exit(1);
    }
    closing = true;
    debug(`${signal}: shutting down`);
    try {
      await app?.close();
    } catch {
      // closing anyway
    }
    await supervisor.stop();
    client?.close();
    // A temporary data dir of startEmulator() whose caller is gone: nobody else will remove it.
    if (signal === 'parent gone' && process.env['WAREHOUSE_EMULATOR_TEMP_DATA_DIR'] === dataDir) rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
  // Started by startEmulator() (src/api/): its process going away, even by
  // SIGKILL, closes the IPC channel, and the emulator goes with it.
  if (process.send) process.on('disconnect', () => void shutdown('parent gone'));

  supervisor.spawnEarly();
  const [{ EngineConnection: Client }, { GatewayContext }, { JobRegistry }, { buildServer }] = await Promise.all([
    import('./engine-local.js'),
    import('./context.js'),
    import('./jobs/registry.js'),
    import('./server.js'),
  ]);
  client = new Client(`127.0.0.1:${config.grpcPort}`);
  supervisor.attachClient(client);
  const ctx = new GatewayContext({ ...config, dataDir }, client, supervisor, new JobRegistry(dataDir), log, debug);

  // Build the HTTP app while the engine boots: route registration is not free.
  const appReady = buildServer(ctx).then(async (a) => {
    await a.ready();
    return a;
  });
  try {
    if (supervisor.external && config.seedDataFiles.length === 0) {
      // An external engine may come later: serve 503s meanwhile rather than never listening.
      await Promise.race([
        supervisor.start(),
        new Promise((_r, rej) => setTimeout(() => rej(new Error('not serving yet')), EXTERNAL_ENGINE_WAIT_MS).unref()),
      ]).catch((e: Error) => log(`warning: external engine on port ${config.grpcPort}: ${e.message}; answering 503 until it serves`));
    } else {
      await supervisor.start();
    }
  } catch (e) {
    log(`error: engine did not start: ${(e as Error).message}`);
    await supervisor.stop();
    process.exit(1);
  }
  debug(`engine ready after ${Date.now() - started} ms`);

  try {
    await applySeedFiles(ctx);
  } catch (e) {
    log(`error: seeding failed: ${(e as Error).message}`);
    await supervisor.stop();
    process.exit(1);
  }

  app = await appReady;
  try {
    await app.listen({ host: config.listenHost, port: config.httpPort });
  } catch (e) {
    log(`error: cannot listen on ${config.listenHost}:${config.httpPort}: ${(e as Error).message}`);
    await supervisor.stop();
    process.exit(1);
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.httpPort;
  log(`listening on http://${config.listenHost}:${port} (engine gRPC ${supervisor.grpcPort}, data dir ${dataDir}, ready in ${Date.now() - started} ms)`);
  process.send?.({ type: 'ready', httpPort: port, grpcPort: supervisor.grpcPort, dataDir } satisfies ReadyMessage);
}

/** What a gateway with an IPC channel (startEmulator) sends its parent once it serves. */
interface ReadyMessage {
  type: 'ready';
  httpPort: number;
  grpcPort: number;
  dataDir: string;
}

function main(): void {
  // Keep the young generation at its initial 2 x 1 MB: module loading at
  // start-up would grow it to 2 x 8 MB, and it stays resident (~14 MB of the
  // idle gateway). The gateway's live set is small and insertAll rows pass
  // through unparsed, so the small young generation costs it nothing measurable.
  // (A run-time flag: `node dist/gateway.js` takes no V8 options.)
  setFlagsFromString('--semi-space-growth-factor=1');
  // A full GC once the old generation is 1.5x what the last one kept, instead
  // of V8's adaptive factor (up to 4x for a small, fast-to-collect heap): with
  // the small young generation, each request's short-lived objects partly
  // reach the old generation, and over 5,000 SELECT 1 the gateway's RSS grew
  // ~13 MB (mostly such garbage) without one full GC; with 1.5x it grew
  // ~5-9 MB, for one more full GC (~30 ms) in those 5,000 queries.
  setFlagsFromString('--heap-growing-percent=50');
  // Free dead young ArrayBuffers (request bodies, socket reads) during the
  // scavenge itself rather than on a helper thread: with concurrent sweeping
  // their memory stayed counted as live external memory, which V8 adds to the
  // old generation's size, so with the 1.5x limit above an insertAll burst
  // (~200 KB of buffers per 500-row request) ran a full GC every ~30
  // requests; with this, ~1 per 300 (measured with --trace-gc). Gateway CPU per
  // request ~1.3 -> ~1.0 ms.
  setFlagsFromString('--no-concurrent-array-buffer-sweeping');
  let config: GatewayConfig;
  try {
    config = parseCli(process.argv.slice(2));
  } catch (e) {
    if (e instanceof CliExit) {
      (e.toStderr ? process.stderr : process.stdout).write(e.output);
      process.exit(e.exitCode);
    }
    throw e;
  }
  run(config).catch((e: Error) => {
    process.stderr.write(`fatal: ${e.stack ?? e.message}\n`);
    process.exit(1);
  });
}

main();
