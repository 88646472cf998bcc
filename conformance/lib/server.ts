// Starts the emulator (node dist/gateway.js) on free ports with a fresh data
// dir and waits for /healthz; or reports why it could not. The harness never
// builds: run `npm run build` first (npm run conformance does).

import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Emulator {
  url: string;
  /** set when the emulator could not be reached: every case fails with it */
  unavailable: string | null;
  logFile: string | null;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) });
    if (!res.ok) return false;
    const body = (await res.json().catch(() => null)) as { status?: string } | null;
    return body?.status === 'ok' || body === null || body?.status === undefined;
  } catch {
    return false;
  }
}

/** Uses an already running emulator. */
export async function attach(url: string): Promise<Emulator> {
  const ok = await healthy(url);
  return {
    url,
    unavailable: ok ? null : `no healthy emulator at ${url} (GET /healthz failed)`,
    logFile: null,
    stop: async () => {},
  };
}

export async function spawnEmulator(repoRoot: string, startupTimeoutMs = 60_000): Promise<Emulator> {
  const entry = path.join(repoRoot, 'dist', 'gateway.js');
  const none = (why: string, logFile: string | null = null): Emulator => ({ url: '', unavailable: why, logFile, stop: async () => {} });
  if (!existsSync(entry)) return none(`${path.relative(repoRoot, entry)} not found (run npm run build first)`);
  const httpPort = await freePort();
  const grpcPort = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'conformance-data-'));
  const logFile = path.join(dataDir, '..', `${path.basename(dataDir)}.log`);
  const log = createWriteStream(logFile);
  const url = `http://127.0.0.1:${httpPort}`;
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [entry, '--http-port', String(httpPort), '--grpc-port', String(grpcPort), '--data-dir', dataDir, '--project-id', 'conformance'], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      // own process group, so stopping it also stops the engine it spawned
      detached: true,
    });
  } catch (e) {
    return none(`cannot spawn gateway: ${(e as Error).message}`);
  }
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  let exited: string | null = null;
  child.once('exit', (code, signal) => {
    exited = `gateway exited (code ${code}, signal ${signal})`;
  });
  child.once('error', (e) => {
    exited = `gateway failed to start: ${e.message}`;
  });
  // The data dir is scratch for this run: removed once the gateway is down.
  const cleanup = () => rmSync(dataDir, { recursive: true, force: true });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return cleanup();
    const pid = child.pid;
    const kill = (sig: NodeJS.Signals) => {
      try {
        if (pid) process.kill(-pid, sig);
      } catch {
        child.kill(sig);
      }
    };
    kill('SIGTERM');
    const done = new Promise<void>((r) => child.once('exit', () => r()));
    const t = setTimeout(() => kill('SIGKILL'), 5000);
    await done;
    clearTimeout(t);
    cleanup();
  };
  const deadline = Date.now() + startupTimeoutMs;
  while (Date.now() < deadline) {
    if (exited) break;
    if (await healthy(url)) return { url, unavailable: null, logFile, stop };
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  const tail = tailOf(logFile);
  return none(`${exited ?? `gateway not healthy after ${startupTimeoutMs} ms`}${tail ? `; log tail: ${tail}` : ''}`, logFile);
}

function tailOf(file: string): string {
  try {
    const lines = readFileSync(file, 'utf8').trim().split('\n').filter(Boolean);
    return lines.slice(-3).join(' | ').slice(0, 400);
  } catch {
    return '';
  }
}
