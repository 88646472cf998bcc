// The programmatic start (src/api/index.ts, dist/index.js): ephemeral ports,
// a temporary data dir, options for the flags, and a stop() that leaves no
// process, socket or temp dir behind, also when its caller is SIGKILLed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/api/index.js';
import { ensureBuilt, rest, ROOT } from '../helpers/emulator.js';

/** Child processes of `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sockets = (gatewayPid: number): string[] => readdirSync(tmpdir()).filter((n) => n.startsWith(`warehouse-engine-${gatewayPid}-`));

beforeAll(() => ensureBuilt(), 180_000);

describe('startEmulator', () => {
  const seed = join(tmpdir(), `api-seed-${process.pid}.yaml`);
  beforeAll(() => {
    writeFileSync(
      seed,
      'datasets:\n  - id: shop\n    tables:\n      - id: items\n        schema: [{name: id, type: INT64}, {name: name, type: STRING}]\n        rows: [{id: 1, name: apple}, {id: 2, name: pear}]\n',
    );
  });

  afterAll(() => rmSync(seed, { force: true }));

  it('serves on ephemeral ports with a temporary data dir, applies the flag options, and stops without leftovers', async () => {
    const lines: string[] = [];
    const emu = await startEmulator({ projectId: 'proj-a', seedDataFiles: [seed], dataset: 'shop', localFiles: [tmpdir()], log: (l) => lines.push(l) });
    const engine = childrenOf(emu.pid);
    try {
      expect(emu.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(emu.grpcAddress).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(emu.grpcAddress.split(':')[1]).not.toBe('9060');
      expect(existsSync(join(emu.dataDir, 'catalog.lock'))).toBe(true);
      expect(emu.env['BIGQUERY_EMULATOR_HOST']).toBe(emu.url);
      expect((await rest(`${emu.url}/healthz`)).body.status).toBe('ok');
      // The seed file went to --project-id, and --dataset resolves the bare name.
      const q = await rest(`${emu.url}/bigquery/v2/projects/proj-a/queries`, { method: 'POST', json: { query: 'SELECT name FROM items ORDER BY id', useLegacySql: false } });
      expect(q.status).toBe(200);
      expect(q.body.rows.map((r: { f: { v: string }[] }) => r.f[0]!.v)).toEqual(['apple', 'pear']);
      expect(engine.length).toBe(1);
      expect(sockets(emu.pid).length).toBeGreaterThan(0);
      expect(lines.join('\n')).toContain(`local files: under ${realpathSync(tmpdir())}`);
    } finally {
      await emu.stop();
    }
    expect(alive(emu.pid)).toBe(false);
    await until('the engine to exit', () => !alive(engine[0]!));
    expect(sockets(emu.pid)).toEqual([]);
    expect(existsSync(emu.dataDir)).toBe(false);
  });

  it('two emulators side by side, each with its own ports and data dir', async () => {
    const [a, b] = await Promise.all([startEmulator(), startEmulator()]);
    try {
      expect(a.url).not.toBe(b.url);
      expect(a.grpcAddress).not.toBe(b.grpcAddress);
      expect(a.dataDir).not.toBe(b.dataDir);
      await rest(`${a.url}/bigquery/v2/projects/test/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'only_a' } } });
      expect((await rest(`${a.url}/bigquery/v2/projects/test/datasets/only_a`)).status).toBe(200);
      expect((await rest(`${b.url}/bigquery/v2/projects/test/datasets/only_a`)).status).toBe(404);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('rejects with the emulator output when it cannot start', async () => {
    await expect(startEmulator({ args: ['--no-such-flag'] })).rejects.toThrow(/no-such-flag/);
  });

  it('stops the emulator when the process that started it is SIGKILLed', async () => {
    const script = join(ROOT, '.tmp', `api-parent-${process.pid}.mjs`);
    writeFileSync(
      script,
      `import { startEmulator } from ${JSON.stringify(join(ROOT, 'dist', 'index.js'))};\n` +
        'const emu = await startEmulator();\nprocess.stdout.write(JSON.stringify({ pid: emu.pid, dataDir: emu.dataDir }) + "\\n");\nsetInterval(() => {}, 1000);\n',
    );
    const parent = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((res) => parent.stdout!.once('data', (b: Buffer) => res(b.toString())));
    const { pid, dataDir } = JSON.parse(line) as { pid: number; dataDir: string };
    expect(existsSync(dataDir)).toBe(true);
    const engine = childrenOf(pid);
    expect(engine.length).toBe(1);
    parent.kill('SIGKILL');
    await until('the gateway to exit', () => !alive(pid));
    await until('the engine to exit', () => !alive(engine[0]!));
    await until('its sockets to go', () => sockets(pid).length === 0);
    await until('its temporary data dir to go', () => !existsSync(dataDir));
  });

  it('removes sockets that a SIGKILLed emulator left in the temp dir', async () => {
    // A pid that is certainly gone: a process that has exited.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    const stale = [`warehouse-engine-${dead}-9060.sock`, `warehouse-engine-${dead}-9060.sock.local`].map((n) => join(tmpdir(), n));
    for (const f of stale) writeFileSync(f, '');
    const emu = await startEmulator();
    await emu.stop();
    for (const f of stale) expect(existsSync(f)).toBe(false);
  });
});
