// Starts the real emulator processes for end-to-end tests: builds dist/ once
// when stale, runs `node dist/gateway.js` on free ports with a temp data dir,
// waits for /healthz and stops everything (gateway and engine) afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const GATEWAY_JS = join(ROOT, 'dist', 'gateway.js');
export const ENGINE_JS = join(ROOT, 'dist', 'engine.js');
export const FAKE_ENGINE = join(ROOT, 'test', 'gateway', 'fixtures', 'fake-engine.mjs');

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.unref();
    s.on('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => res(port));
    });
  });
}

function newestMtime(dir: string): number {
  let newest = 0;
  if (!existsSync(dir)) return 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((res, rej) => {
    const p = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    p.on('exit', (code) => (code === 0 ? res() : rej(new Error(`${cmd} ${args.join(' ')} exited with ${code}`))));
    p.on('error', rej);
  });
}

let built: Promise<void> | undefined;

/**
 * Builds dist/ when a source file is newer than the bundle. Test files run in
 * parallel processes, so a lock directory serialises the build.
 */
export function ensureBuilt(): Promise<void> {
  built ??= (async () => {
    const lock = join(ROOT, '.tmp', 'build.lock');
    mkdirSync(join(ROOT, '.tmp'), { recursive: true });
    const started = Date.now();
    for (;;) {
      try {
        mkdirSync(lock);
        break;
      } catch {
        // stale lock (a crashed build) after 3 minutes
        if (Date.now() - started > 180_000) rmSync(lock, { recursive: true, force: true });
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    try {
      const src = newestMtime(join(ROOT, 'src'));
      const hasEngine = existsSync(join(ROOT, 'src', 'engine', 'main.ts'));
      const stale = (f: string): boolean => !existsSync(f) || statSync(f).mtimeMs < src;
      if (stale(GATEWAY_JS) || (hasEngine && stale(ENGINE_JS))) {
        if (hasEngine) {
          try {
            await run('npm', ['run', '--silent', 'build']);
          } catch (e) {
            // A teammate's half-written file should not take every process test down: keep the last good bundle.
            if (!existsSync(GATEWAY_JS) || !existsSync(ENGINE_JS)) throw e;
            process.stderr.write(`warning: build failed, testing the previous dist/: ${(e as Error).message}\n`);
          }
        } else {
          // Engine entry not there yet: bundle the gateway alone.
          const { build } = await import('esbuild');
          await build({
            entryPoints: [join(ROOT, 'src', 'gateway', 'main.ts')], bundle: true, platform: 'node', target: 'node20', format: 'esm',
            packages: 'external', sourcemap: true, logLevel: 'warning', outfile: GATEWAY_JS,
          });
        }
      }
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  })();
  return built;
}

export interface StartOptions {
  /** Extra gateway flags. */
  args?: string[];
  /** undefined = the real engine (dist/engine.js); '' = none; a path = that binary. */
  engineBinary?: string;
  dataDir?: string;
  env?: Record<string, string>;
  /** Wait for /healthz (default true). */
  waitHealthy?: boolean;
  timeoutMs?: number;
}

export interface Emulator {
  url: string;
  httpPort: number;
  grpcPort: number;
  dataDir: string;
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

export function hasRealEngine(): boolean {
  return existsSync(join(ROOT, 'src', 'engine', 'main.ts'));
}

/** The gateway could not bind a port freePort chose (another process took it meanwhile). */
class PortTakenError extends Error {}

/** Starts gateway + engine; a port taken between freePort and the bind is retried with new ports. */
export async function startEmulator(opts: StartOptions = {}): Promise<Emulator> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (e) {
      if (!(e instanceof PortTakenError) || attempt >= 3) throw e;
    }
  }
}

async function startOnce(opts: StartOptions): Promise<Emulator> {
  await ensureBuilt();
  const httpPort = await freePort();
  const grpcPort = await freePort();
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'wh-emu-'));
  const args = [GATEWAY_JS, '--http-port', String(httpPort), '--grpc-port', String(grpcPort), '--data-dir', dataDir, '--listen-host', '127.0.0.1'];
  if (opts.engineBinary !== undefined) args.push('--engine-binary', opts.engineBinary);
  args.push(...(opts.args ?? []));
  // Own process group so stop() can take the engine down even if the gateway misbehaves.
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  proc.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  proc.stderr?.on('data', (b: Buffer) => (out += b.toString()));
  const url = `http://127.0.0.1:${httpPort}`;
  const emu: Emulator = {
    url,
    httpPort,
    grpcPort,
    dataDir,
    proc,
    output: () => out,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise<void>((r) => proc.once('exit', () => r()));
        proc.kill('SIGTERM');
        const t = setTimeout(() => {
          try {
            process.kill(-proc.pid!, 'SIGKILL');
          } catch {
            // already gone
          }
        }, 5000);
        await exited;
        clearTimeout(t);
      }
      try {
        process.kill(-proc.pid!, 'SIGKILL'); // stragglers in the group (an engine that ignored SIGTERM)
      } catch {
        // group already empty
      }
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  if (opts.waitHealthy === false) return emu;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    if (proc.exitCode !== null) {
      if (/EADDRINUSE/.test(out)) {
        if (ownDir) rmSync(dataDir, { recursive: true, force: true });
        throw new PortTakenError(out);
      }
      throw new Error(`gateway exited with ${proc.exitCode} before serving:\n${out}`);
    }
    try {
      const r = await fetch(`${url}/healthz`);
      // Without an engine of its own (engineBinary ''), the gateway listens and says 503 until one serves.
      if (r.ok || (r.status === 503 && opts.engineBinary === '')) return emu;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await emu.stop();
      throw new Error(`gateway not healthy within ${opts.timeoutMs ?? 60_000} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pid of the engine the gateway spawned (its only child process; Linux /proc). */
export function enginePid(emu: Emulator): number {
  const pid = emu.proc.pid!;
  const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  return Number(kids[0]);
}

/** Runs the gateway to completion (for --help, --version, bad flags). */
export async function runGateway(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  await ensureBuilt();
  return new Promise((res) => {
    const p = spawn(process.execPath, [GATEWAY_JS, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout?.on('data', (b: Buffer) => (stdout += b.toString()));
    p.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
    const t = setTimeout(() => p.kill('SIGKILL'), 20_000);
    p.on('exit', (code) => {
      clearTimeout(t);
      res({ code, stdout, stderr });
    });
  });
}

/** fetch + JSON with the status, for terse assertions. */
export async function rest(url: string, init: RequestInit & { json?: unknown } = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const { json, ...rest } = init;
  const r = await fetch(url, {
    ...rest,
    ...(json !== undefined ? { body: JSON.stringify(json), headers: { 'content-type': 'application/json', ...(rest.headers ?? {}) } } : {}),
  });
  const text = await r.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: r.status, body, headers: r.headers };
}

type PageRows = { rows?: { f: { v: unknown }[] }[]; pageToken?: string; jobComplete?: boolean };

/**
 * Every row of a query's result (jobs.query, then getQueryResults pages of `pageSize`), as the cells' wire values.
 * Waits for the job however long it runs (each call waits up to `timeoutMs`), so large e2e queries need no wrapper.
 */
export async function queryRows(emu: Emulator, project: string, sql: string, opts: { pageSize?: number; timeoutMs?: number } = {}): Promise<unknown[][]> {
  const { pageSize = 700, timeoutMs = 120_000 } = opts;
  const api = `${emu.url}/bigquery/v2/projects/${project}`;
  const first = await rest(`${api}/queries`, { method: 'POST', json: { query: sql, useLegacySql: false, maxResults: pageSize, timeoutMs } });
  if (first.status !== 200) throw new Error(`query failed (${first.status}): ${JSON.stringify(first.body)}`);
  const { jobReference } = first.body as { jobReference: { jobId: string; location?: string } };
  const results = `${api}/queries/${jobReference.jobId}?maxResults=${pageSize}&timeoutMs=${timeoutMs}${jobReference.location ? `&location=${jobReference.location}` : ''}`;
  let page = first.body as PageRows;
  while (page.jobComplete === false) {
    const res = await rest(results);
    if (res.status !== 200) throw new Error(`getQueryResults failed (${res.status}): ${JSON.stringify(res.body)}`);
    page = res.body as PageRows;
  }
  const out = (page.rows ?? []).map((x) => x.f.map((c) => c.v));
  while (page.pageToken) {
    const res = await rest(`${results}&pageToken=${encodeURIComponent(page.pageToken)}`);
    if (res.status !== 200) throw new Error(`getQueryResults failed (${res.status}): ${JSON.stringify(res.body)}`);
    page = res.body as PageRows;
    for (const x of page.rows ?? []) out.push(x.f.map((c) => c.v));
  }
  return out;
}

/** The job resource once `jobs.get` says DONE (polled every 50 ms, up to 30 s). */
export async function jobDone(emu: Emulator, project: string, jobId: string): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const job = (await rest(`${emu.url}/bigquery/v2/projects/${project}/jobs/${jobId}`)).body;
    if (job.status?.state === 'DONE') return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${jobId} not done`);
}

/** Every row of a table through tabledata.list pages of `pageSize`, as the cells' wire values, in the order listed. */
export async function tabledataRows(emu: Emulator, project: string, dataset: string, table: string, pageSize = 600): Promise<unknown[][]> {
  const out: unknown[][] = [];
  let token: string | undefined;
  do {
    const res = await rest(`${emu.url}/bigquery/v2/projects/${project}/datasets/${dataset}/tables/${table}/data?maxResults=${pageSize}${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`);
    if (res.status !== 200) throw new Error(`tabledata.list failed (${res.status}): ${JSON.stringify(res.body)}`);
    const body = res.body as PageRows;
    for (const x of body.rows ?? []) out.push(x.f.map((c) => c.v));
    token = body.pageToken;
  } while (token);
  return out;
}

/** kill -9 of the engine, then waits until the gateway's restarted engine lists `project`'s datasets again. */
/** kill -9 of the emulator's process group (gateway and engine); resolves once it exited. */
export function killGroup(e: Emulator): Promise<void> {
  const exited = new Promise<void>((r) => (e.proc.exitCode !== null || e.proc.signalCode !== null ? r() : e.proc.once('exit', () => r())));
  try {
    process.kill(-e.proc.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
  return exited;
}

export async function killEngine(emu: Emulator, project: string): Promise<void> {
  process.kill(enginePid(emu), 'SIGKILL');
  for (let t0 = Date.now(); ; ) {
    if ((await rest(`${emu.url}/bigquery/v2/projects/${project}/datasets`).catch(() => ({ status: 0 }))).status === 200) return;
    if (Date.now() - t0 > 30_000) throw new Error('engine did not come back');
    await new Promise((res) => setTimeout(res, 100));
  }
}
