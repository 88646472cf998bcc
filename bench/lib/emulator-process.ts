// Starts a fresh emulator for a bench run: temp data dir, free ports, spawn
// `node dist/gateway.js`, wait for the first 200 of /healthz (that wait is the
// start-to-healthy metric). Keeps the tail of its output for error messages.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { findEnginePid } from '../metrics/rss.js';
import { repoRoot } from './cases.js';

export interface EmulatorHandle {
  url: string;
  projectId: string;
  /** Gateway pid, null when attached to an emulator we did not start (--url). */
  pid: number | null;
  startupMs: number | null;
  /** performance.now() at spawn, null with --url. */
  spawnedAt: number | null;
  alive(): boolean;
  /** How the process ended ('exited with code 3'), null while it runs. */
  exitReason(): string | null;
  logTail(): string;
  /** SIGTERM, then SIGKILL after graceMs; the engine child too if it outlives the gateway. */
  stop(graceMs?: number): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Attaches to an already running emulator (--url); no process control, no RSS. */
export async function attachEmulator(url: string, projectId: string): Promise<EmulatorHandle> {
  const base = url.replace(/\/+$/, '');
  if (!(await healthy(base))) throw new Error(`no healthy emulator at ${base}/healthz`);
  return {
    url: base, projectId, pid: null, startupMs: null, spawnedAt: null,
    alive: () => true, exitReason: () => null, logTail: () => '', stop: async () => {},
  };
}

export interface StartOptions {
  /** Extra node flags before the script, e.g. ['--import', 'tsx'] for a TypeScript stand-in. */
  nodeArgs?: string[];
  startTimeoutMs?: number;
  /** Data directory to use (kept at stop: a restart on it finds the tables); default a fresh temp dir, removed at stop. */
  dataDir?: string;
  /** Extra gateway flags, e.g. ['--memory-limit', '4GB']. */
  args?: string[];
}

export async function startEmulator(gatewayJs: string, projectId: string, opts: StartOptions = {}): Promise<EmulatorHandle> {
  const startTimeoutMs = opts.startTimeoutMs ?? 30_000;
  if (!existsSync(gatewayJs)) throw new Error(`${path.relative(repoRoot, gatewayJs)} not found (run npm run build)`);
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'bench-emu-'));
  const httpPort = await freePort();
  const grpcPort = await freePort();
  let log = '';
  const keep = (chunk: Buffer): void => {
    log = (log + chunk.toString('utf8')).slice(-4000);
  };
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, [
    ...(opts.nodeArgs ?? []), gatewayJs, '--http-port', String(httpPort), '--grpc-port', String(grpcPort),
    '--data-dir', dataDir, '--project-id', projectId, ...(opts.args ?? []),
  ], { stdio: ['ignore', 'pipe', 'pipe'], cwd: repoRoot });
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: string | null = null;
  child.on('exit', (code, signal) => { exited = `exited with ${signal ?? `code ${code}`}`; });
  child.on('error', (e) => { exited = `failed to spawn: ${e.message}`; });

  const handle: EmulatorHandle = {
    url: `http://127.0.0.1:${httpPort}`,
    projectId,
    pid: child.pid ?? null,
    startupMs: null,
    spawnedAt: t0,
    alive: () => exited === null,
    exitReason: () => exited,
    logTail: () => log.trim().split('\n').slice(-15).join('\n'),
    stop: async (graceMs = 5_000) => {
      // The engine is our gateway's child: note it before the gateway goes, so
      // a stray engine can be ended by its id if the gateway did not stop it.
      const engine = child.pid ? findEnginePid(child.pid) : null;
      if (exited === null) {
        child.kill('SIGTERM');
        for (let i = 0; i < graceMs / 100 && exited === null; i++) await sleep(100);
        if (exited === null) child.kill('SIGKILL');
      }
      if (engine !== null) {
        await sleep(200);
        try { process.kill(engine, 0); process.kill(engine, 'SIGKILL'); } catch { /* already gone */ }
      }
      if (opts.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };

  // Fastify may bind only one of localhost's addresses; accept whichever answers.
  const candidates = [`http://127.0.0.1:${httpPort}`, `http://localhost:${httpPort}`];
  const deadline = Date.now() + startTimeoutMs;
  while (Date.now() < deadline) {
    if (exited !== null) {
      await handle.stop();
      const tail = handle.logTail();
      // The last log line usually names the cause; the full tail follows for the JSON.
      throw new Error(`gateway ${exited} before it was healthy: ${tail.split('\n').pop() ?? ''}\n${tail}`);
    }
    for (const url of candidates) {
      if (await healthy(url)) {
        handle.startupMs = Math.round((performance.now() - t0) * 10) / 10;
        handle.url = url;
        return handle;
      }
    }
    await sleep(10);
  }
  await handle.stop();
  throw new Error(`gateway not healthy within ${startTimeoutMs} ms\n${handle.logTail()}`);
}
