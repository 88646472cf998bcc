// Owns the engine process: spawn, wait for Health, forward output, restart
// with backoff when it dies, stop it (no orphan) when the gateway stops.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalFilesPolicy } from '../io/local-access.js';
import type { EngineConnection } from './engine-local.js';
import { packageRoot } from './paths.js';

export type EngineState = 'starting' | 'serving' | 'down' | 'stopped';

export interface SupervisorOptions {
  /** undefined = project dist/engine.js; '' = external engine, spawn nothing. */
  binary: string | undefined;
  grpcPort: number;
  engineHost: string;
  dataDir: string;
  defaultLocation: string;
  projectId: string;
  copyStdout: boolean;
  copyStderr: boolean;
  /** Passed on as --sync-writes (fdatasync before acknowledging an insert). */
  syncWrites?: boolean;
  /** Passed on as --memory-limit ('' or absent: the engine's default). */
  memoryLimit?: string;
  /** Passed on as --enable-python-udfs. */
  enablePythonUdfs?: boolean;
  /** Passed on as --local-files=DIRS or --no-local-files (absent, or any path: the engine's default for its host). */
  localFiles?: LocalFilesPolicy;
  log: (msg: string) => void;
  debug: (msg: string) => void;
}

const HEALTH_POLL_MS = 100;
const QUIET_START_MS = 1500;
/**
 * The project's own engine always prints its serving line, and its Health then
 * goes over the local socket: waiting for the line (on a busy machine start-up
 * takes seconds) keeps the gateway from ever loading grpc-js for it.
 */
const QUIET_START_OWN_MS = 10_000;

/**
 * Preloaded into a node engine: when the gateway dies, even by SIGKILL, the
 * engine's stdin pipe reaches EOF and the engine gets SIGTERM (its own
 * graceful shutdown), so no orphan keeps the data dir locked and the port bound.
 */
export const PARENT_WATCHDOG =
  'data:text/javascript,' +
  encodeURIComponent(
    "if (process.env.WAREHOUSE_ENGINE_PARENT_PIPE === '1' && !process.stdin.isTTY) {" +
      "process.stdin.on('error', () => {});" +
      "process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));" +
      'process.stdin.resume();' +
      '}',
  );
/**
 * V8 options of a node engine. The young generation may grow to 2 x 16 MB
 * under load (capped at 2 x 1 MB, engine CPU measured +10% per SELECT 1, +25%
 * per query from 16 clients, +55% for 1M-row CTAS, medians of 8 runs;
 * insertAll the same), and the engine trims it back after ~6 s idle
 * (src/engine/young-gen.ts). Growth is off until the engine has warmed up
 * (the engine turns it on at run time; V8 resets a --semi-space-growth-factor
 * below 2 given on the command line, hence the preload): module loading keeps
 * most of what it allocates, which would grow it to 2 x 8 MB before the first
 * query (~8 MB of idle RSS, measured).
 *
 * --initial-old-space-size is the floor of V8's old-generation limit. V8
 * starts incremental marking once the limit is less than the new space's
 * capacity ahead of the old generation plus the external memory (request
 * Buffers: ~0.3 MB per 500-row insert) allocated since the last full GC.
 * After a full GC of a small old generation (~16 MB) it sets the limit only
 * ~24 MB ahead; with the young generation grown to 2 x 16 MB by heavy
 * queries, scavenges (which free dead Buffers) come every ~70 inserts, so
 * marking restarted every ~40: GC threads took 0.35-0.6 ms of CPU per
 * request, against 0.05-0.15 with this floor (v8.GCProfiler and /proc).
 */
const ENGINE_NODE_OPTIONS = [
  // isolated-vm (JavaScript UDF isolates) requires it on Node 20+: its isolates and one made from
  // Node's startup snapshot in the same process can crash V8 (costs ~45 ms of start-up, ~3 MB).
  '--no-node-snapshot',
  '--max-semi-space-size=16',
  '--initial-old-space-size=64',
  '--import',
  'data:text/javascript,' + encodeURIComponent("import { setFlagsFromString } from 'node:v8'; setFlagsFromString('--semi-space-growth-factor=1');"),
];
/**
 * glibc's allocator for the engine: buffers of 128 KB and more (decoded
 * chunks, group tables, sort arrays) are mapped and unmapped on their own,
 * and freed memory at the top of a heap goes back past 128 KB. By default
 * the mapping threshold rises to the largest buffer freed (up to 32 MB), after
 * which such buffers come from the heaps and stay resident once freed:
 * measured on the scale set (25M rows, --memory-limit 1GB) the engine kept
 * 400-600 MB more than V8 held after a large GROUP BY. The user's own setting wins.
 */
const MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '131072' };
const START_TIMEOUT_MS = 120_000;
const MAX_BACKOFF_MS = 10_000;

export class EngineSupervisor {
  state: EngineState = 'starting';
  private child: ChildProcess | undefined;
  private stopping = false;
  /** Restarts only make sense once the engine has served: a first start that fails is a startup error. */
  private everServed = false;
  private backoffMs = 250;
  private restartTimer: NodeJS.Timeout | undefined;
  private monitorTimer: NodeJS.Timeout | undefined;
  private lastExit = '';
  private readonly killOnExit = (): void => {
    // Synchronous last resort: the process is going away, take the engine with it.
    if (this.child && this.child.exitCode === null) this.child.kill('SIGKILL');
  };

  /** Wakes the Health poll early (the engine printed its serving line). */
  private kick: (() => void) | undefined;
  /** The spawned engine's serving line, once printed. */
  private servingLine: string | undefined;
  /**
   * Whether the spawned engine printed its serving line and the client uses
   * the sockets it names (the local one connected). Until then (for up to
   * QUIET_START_MS, QUIET_START_OWN_MS for the own engine) Health is not
   * called: a refused connection would put the gRPC channel into reconnect
   * backoff and delay the first successful call.
   */
  private sawServing = false;
  private spawnedAt = 0;
  private client!: EngineConnection;

  /**
   * The client may be attached later (`attachClient`): start-up spawns the
   * engine before the client's modules are even loaded, so both boot at the same time.
   */
  constructor(private readonly opts: SupervisorOptions, client?: EngineConnection) {
    if (client) this.client = client;
    process.on('exit', this.killOnExit);
  }

  attachClient(client: EngineConnection): void {
    this.client = client;
    if (this.servingLine !== undefined) this.adoptSockets(this.servingLine);
  }

  /**
   * Points the client at the sockets of the serving line
   * (`engine serving on <port>[ socket <path>][ local <path>]`), then lets
   * the Health poll go (at once, or once the local socket is connected).
   */
  private adoptSockets(line: string): void {
    const child = this.child;
    // --grpc-port 0: the engine chose a port; restarts keep it.
    const port = Number(/serving on (\d+)/.exec(line)?.[1]);
    if (this.opts.grpcPort === 0 && port > 0) {
      this.opts.grpcPort = port;
      this.client.useAddress(`127.0.0.1:${port}`);
    }
    this.client.useSocket(/serving on \S+ socket (\S+)/.exec(line)?.[1]);
    void this.client.useLocal(/serving on .* local (\S+)/.exec(line)?.[1]).then(() => {
      if (this.child !== child) return;
      this.sawServing = true;
      this.kick?.();
    });
  }

  /** Unix socket of the spawned engine: per gateway process and gRPC port, in the temp dir (short enough for sun_path). */
  private socketPath(): string {
    return join(tmpdir(), `warehouse-engine-${process.pid}-${this.opts.grpcPort}.sock`);
  }

  /** The engine's gRPC port: the flag's, or the one the engine chose for --grpc-port 0 once it serves. */
  get grpcPort(): number {
    return this.opts.grpcPort;
  }

  /** Spawns the engine now without waiting for it (start() then adopts it). */
  spawnEarly(): void {
    if (!this.external && !this.child) {
      removeStaleSockets();
      this.spawnEngine();
    }
  }

  get external(): boolean {
    return this.opts.binary === '';
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** A human reason for the 503 message while the engine is not serving. */
  get downReason(): string {
    if (this.external) return `no engine serving on ${this.client.address}`;
    return this.lastExit ? `engine is restarting (${this.lastExit})` : 'engine is starting';
  }

  /** Spawns (unless external) and resolves once Health answers; rejects when it never does. */
  async start(): Promise<void> {
    if (!this.external) {
      // The early spawn already failed or exited: that is the start-up's answer.
      if (!this.child && this.lastExit) throw new Error(`engine ${this.lastExit} before serving`);
      if (!this.child) {
        removeStaleSockets();
        this.spawnEngine();
      }
    } else this.opts.debug(`engine: external, expecting it on ${this.client.address}`);
    await this.waitHealthy(START_TIMEOUT_MS, true);
    this.startMonitor();
  }

  private command(): { file: string; args: string[] } {
    const bin = this.opts.binary ?? join(packageRoot(), 'dist', 'engine.js');
    const args = [
      '--grpc-port', String(this.opts.grpcPort),
      '--data-dir', this.opts.dataDir,
      '--host', this.opts.engineHost,
      '--default-location', this.opts.defaultLocation,
    ];
    if (this.opts.projectId) args.push('--project-id', this.opts.projectId);
    if (this.opts.syncWrites) args.push('--sync-writes');
    if (this.opts.enablePythonUdfs) args.push('--enable-python-udfs');
    if (this.opts.memoryLimit) args.push(`--memory-limit=${this.opts.memoryLimit}`);
    const local = this.opts.localFiles;
    if (local?.mode === 'dirs') args.push(`--local-files=${local.dirs.join(',')}`);
    if (local?.mode === 'none') args.push('--no-local-files');
    // The project's own engine also serves on a Unix socket (cheaper than
    // loopback TCP per call); other engine binaries may not know the flag.
    if (this.opts.binary === undefined) args.push('--grpc-socket', this.socketPath(), '--local-socket', `${this.socketPath()}.local`);
    // A script runs under this very node; anything else is an executable.
    // Node engines get the parent-pipe watchdog preloaded (see PARENT_WATCHDOG).
    // WAREHOUSE_ENGINE_NODE_FLAGS adds node flags for profiling (e.g. `--cpu-prof`,
    // which NODE_OPTIONS refuses).
    const extra = (process.env.WAREHOUSE_ENGINE_NODE_FLAGS ?? '').split(' ').filter(Boolean);
    if (/\.(c|m)?js$/.test(bin)) return { file: process.execPath, args: [...ENGINE_NODE_OPTIONS, ...extra, '--import', PARENT_WATCHDOG, bin, ...args] };
    return { file: bin, args };
  }

  private spawnEngine(): void {
    const { file, args } = this.command();
    this.opts.debug(`engine: spawning ${file} ${args.join(' ')}`);
    this.state = 'starting';
    this.sawServing = false;
    this.servingLine = undefined;
    this.spawnedAt = Date.now();
    // stdin stays a pipe: if the gateway is SIGKILLed the engine sees EOF
    // (WAREHOUSE_ENGINE_PARENT_PIPE tells it to treat that as "parent gone").
    const child = spawn(file, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: false,
      env: { ...MALLOC_ENV, ...process.env, WAREHOUSE_ENGINE_PARENT_PIPE: '1' },
    });
    this.child = child;
    child.stdout?.on('data', (b: Buffer) => {
      if (this.opts.copyStdout) process.stdout.write(b);
      // The engine prints `engine serving on <port>[ socket <path>][ local <path>]` once it listens: probe Health right away.
      if (this.servingLine === undefined && b.includes('serving')) {
        this.servingLine = b.toString('utf8');
        if (this.client) this.adoptSockets(this.servingLine);
      }
    });
    child.stderr?.on('data', (b: Buffer) => {
      if (this.opts.copyStderr) process.stderr.write(b);
    });
    child.stdin?.on('error', () => undefined);
    child.on('error', (e) => {
      if (this.child !== child) return;
      // Not started (EACCES, ENOENT): as an exit, so a first start fails at once instead of waiting for Health.
      this.child = undefined;
      this.lastExit = `spawn failed: ${e.message}`;
      this.opts.log(`engine: ${this.lastExit}`);
      if (this.everServed && !this.stopping) {
        this.state = 'down';
        this.scheduleRestart();
      }
    });
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.lastExit = signal ? `killed by ${signal}` : `exited with code ${code}`;
      if (this.stopping) {
        this.opts.debug(`engine: stopped (${this.lastExit})`);
        return;
      }
      if (!this.everServed) return;
      this.state = 'down';
      this.opts.log(`engine: ${this.lastExit}; restarting in ${this.backoffMs} ms`);
      this.scheduleRestart();
    });
  }

  private scheduleRestart(): void {
    clearTimeout(this.restartTimer);
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    this.restartTimer = setTimeout(() => {
      if (this.stopping) return;
      this.spawnEngine();
      this.waitHealthy(START_TIMEOUT_MS, false).then(
        () => {
          this.opts.log('engine: serving again');
          // Reset the backoff only after a stable period so a crash loop keeps backing off.
          setTimeout(() => {
            if (this.state === 'serving') this.backoffMs = 250;
          }, 30_000).unref();
        },
        (e: Error) => this.opts.log(`engine: not healthy after restart: ${e.message}`),
      );
    }, delay);
    this.restartTimer.unref();
  }

  private async waitHealthy(timeoutMs: number, failOnExit: boolean): Promise<void> {
    const until = Date.now() + timeoutMs;
    const spawned = this.child;
    for (;;) {
      if (this.stopping) throw new Error('stopping');
      if (!this.external && failOnExit && spawned && this.child !== spawned) {
        throw new Error(`engine ${this.lastExit} before serving`);
      }
      const quietMs = this.opts.binary === undefined ? QUIET_START_OWN_MS : QUIET_START_MS;
      const quiet = !this.external && !this.sawServing && this.child !== undefined && Date.now() - this.spawnedAt < quietMs;
      if (!quiet) try {
        const h = await this.client.call('Health', {}, { deadlineMs: 1000 });
        if (h.status === '' || h.status === 'SERVING') {
          this.state = 'serving';
          this.everServed = true;
          this.opts.debug(`engine: serving (pid ${h.pid || this.child?.pid || '?'}, version ${h.version || '?'})`);
          return;
        }
      } catch {
        // not up yet
      }
      if (Date.now() > until) throw new Error(`engine did not answer Health on ${this.client.address} within ${timeoutMs} ms`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, HEALTH_POLL_MS);
        this.kick = () => {
          clearTimeout(t);
          r();
        };
      });
      this.kick = undefined;
    }
  }

  /** For an external engine there is no exit event: poll Health so the state follows reality. */
  private startMonitor(): void {
    if (!this.external) return;
    this.monitorTimer = setInterval(() => {
      this.client.call('Health', {}, { deadlineMs: 1000 }).then(
        () => {
          this.state = 'serving';
        },
        () => {
          if (this.state === 'serving') this.opts.log('engine: external engine stopped answering Health');
          this.state = 'down';
          this.lastExit = 'external engine not answering';
        },
      );
    }, 2000);
    this.monitorTimer.unref();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.state = 'stopped';
    clearTimeout(this.restartTimer);
    clearInterval(this.monitorTimer);
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    process.off('exit', this.killOnExit);
  }
}

const SOCKET_NAME = /^warehouse-engine-(\d+)-\d+\.sock(\.local)?$/;

/**
 * An engine removes its sockets when it exits; one that was SIGKILLed (or
 * died with its gateway in a killed process group) leaves them in the temp
 * dir. Sockets named after a gateway pid that no longer runs are such leftovers.
 */
export function removeStaleSockets(dir = tmpdir()): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(SOCKET_NAME.exec(name)?.[1]);
    if (!pid || pid === process.pid || pidAlive(pid)) continue;
    rmSync(join(dir, name), { force: true });
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
