// The container recipe of spec §1.4 without a Docker engine (none runs on
// this machine; scripts/container-smoke.sh builds and runs the image where
// one does): the entrypoint's flag injection, the Dockerfile lint, the tag
// scheme, the compose recipe, and the bundled seed file in the real emulator.
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, ROOT, startEmulator } from '../helpers/emulator.js';

const ENTRYPOINT = join(ROOT, 'docker', 'entrypoint.sh');
const SEED = join(ROOT, 'docker', 'seed', 'public.yaml');
const DEFAULT_DIR = '/var/lib/warehouse-emulator';

describe('docker/entrypoint.sh', () => {
  const work = mkdtempSync(join(tmpdir(), 'entrypoint-'));
  const bin = join(work, 'bin');
  const seed = join(work, 'public.yaml');
  beforeAll(() => {
    // Stands in for the installed gateway command: prints the arguments it was given.
    mkdirSync(bin);
    writeFileSync(join(bin, 'warehouse-emulator'), '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n', { mode: 0o755 });
    writeFileSync(seed, 'datasets: []\n');
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** The gateway's argv when the container is run with `args` (through /bin/sh, as in the image). */
  const argv = (args: string[], env: Record<string, string> = {}): string[] =>
    execFileSync('/bin/sh', [ENTRYPOINT, ...args], {
      encoding: 'utf8',
      env: { PATH: `${bin}:/usr/bin:/bin`, WAREHOUSE_EMULATOR_BUNDLED_SEED: seed, ...env },
    })
      .split('\n')
      .filter(Boolean);
  const host = '--hostname=0.0.0.0';
  const dir = `--data-dir=${DEFAULT_DIR}`;
  const seedFlag = `--seed-data-file=${seed}`;
  const files = '--local-files=/data';

  it('adds the four defaults in front of the caller flags', () => {
    expect(argv([])).toEqual([host, dir, seedFlag, files]);
    expect(argv(['--project-id=p', '--debug'])).toEqual([host, dir, seedFlag, files, '--project-id=p', '--debug']);
  });

  it.each([
    ['--hostname=127.0.0.1'], ['--hostname', '::'], ['--listen-host=x'], ['--listen-host', 'x'], ['--listen_host=x'], ['--listen_host', 'x'],
  ])('a host flag (%s) drops only the host default', (...flag) => {
    expect(argv(flag)).toEqual([dir, seedFlag, files, ...flag]);
  });

  it.each([
    ['--seed-data-file=/s.yaml'], ['--seed-data-file', '/s.yaml'], ['--seed_data_file=/s.yaml'], ['--seed-yaml=/s.yaml'],
    ['--seed_yaml', '/s.yaml'], ['--data-from-yaml=/s.yaml'], ['--data_from_yaml', '/s.yaml'],
  ])('a seed flag (%s) drops only the bundled seed', (...flag) => {
    expect(argv(flag)).toEqual([host, dir, files, ...flag]);
  });

  it.each([['--data-dir=/d'], ['--data-dir', '/d'], ['--data_dir=/d'], ['--data_dir', '/d'], ['--database=/d/old.db'], ['--database', '/d/old.db']])(
    'a data dir flag (%s) drops only the data dir default',
    (...flag) => {
      expect(argv(flag)).toEqual([host, seedFlag, files, ...flag]);
    },
  );

  it('the data dir environment fallbacks count as passed', () => {
    expect(argv([], { WAREHOUSE_EMULATOR_DATA_DIR: '/e' })).toEqual([host, seedFlag, files]);
    expect(argv([], { BIGQUERY_EMULATOR_DATA_DIR: '/e' })).toEqual([host, seedFlag, files]);
    expect(argv([], { WAREHOUSE_EMULATOR_DATA_DIR: '' })).toEqual([host, dir, seedFlag, files]);
  });

  it.each([['--local-files=/in'], ['--local-files', '/in'], ['--local_files=/in,/out'], ['--local_files', '/in']])(
    'a local files flag (%s) drops only the /data default',
    (...flag) => {
      expect(argv(flag)).toEqual([host, dir, seedFlag, ...flag]);
    },
  );

  it('the local files environment fallbacks count as passed', () => {
    expect(argv([], { WAREHOUSE_EMULATOR_LOCAL_FILES: '/in' })).toEqual([host, dir, seedFlag]);
    expect(argv([], { BIGQUERY_EMULATOR_LOCAL_FILES: '/in' })).toEqual([host, dir, seedFlag]);
  });

  it('leaves the bundled seed out once the data dir in effect holds a catalog (seed rows are appended at every start)', () => {
    const used = join(work, 'used');
    mkdirSync(used, { recursive: true });
    writeFileSync(join(used, 'catalog.store'), '');
    expect(argv(['--data-dir', used])).toEqual([host, files, '--data-dir', used]);
    expect(argv([`--database=${used}/x.db`])).toEqual([host, files, `--database=${used}/x.db`]);
    expect(argv([], { WAREHOUSE_EMULATOR_DATA_DIR: used })).toEqual([host, files]);
    expect(argv(['--data-dir', join(work, 'fresh')])).toEqual([host, seedFlag, files, '--data-dir', join(work, 'fresh')]);
  });

  it('does not read flags after --', () => {
    expect(argv(['--project-id=p', '--', '--data-dir=/x'])).toEqual([host, dir, seedFlag, files, '--project-id=p', '--', '--data-dir=/x']);
  });

  it('without the bundled file, no seed flag is invented', () => {
    expect(argv([], { WAREHOUSE_EMULATOR_BUNDLED_SEED: join(work, 'missing.yaml') })).toEqual([host, dir, files]);
  });
});

describe('Dockerfile', () => {
  const lint = (args: string[]): Promise<{ code: number; out: string }> =>
    new Promise((res) =>
      execFile(process.execPath, [join(ROOT, 'scripts', 'lint-dockerfile.mjs'), ...args], { cwd: ROOT }, (err, stdout, stderr) =>
        res({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
      ),
    );

  it('passes the lint (dockerfile-utils + hadolint rules + shellcheck on the entrypoint)', async () => {
    const r = await lint([]);
    expect(r.out).toMatch(/lint ok/);
    expect(r.code).toBe(0);
  });

  it('the lint finds what it claims to check', async () => {
    const bad = join(mkdtempSync(join(tmpdir(), 'lint-')), 'Dockerfile');
    writeFileSync(bad, 'FROM node:latest\nADD . /app\nRUN cd /app && apt-get install curl | tee log\nEXPOSE 80x\nENTRYPOINT node x\n');
    const r = await lint([bad]);
    expect(r.code).toBe(1);
    for (const rule of ['DL3007', 'DL3020', 'DL3003', 'DL3014', 'DL3015', 'DL3009', 'DL4006', 'DL3025', 'DL3002', 'Invalid containerPort', 'spec-1.4.1']) {
      expect(r.out).toContain(rule);
    }
  });

  it('is linux/amd64, exposes 9050 and 9060, runs the entrypoint, and copies files that exist', () => {
    const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const froms = text.split('\n').filter((l) => l.startsWith('FROM '));
    expect(froms.length).toBeGreaterThan(0);
    for (const f of froms) expect(f).toContain('--platform=linux/amd64');
    expect(text).toMatch(/^EXPOSE 9050 9060$/m);
    expect(text).toMatch(/^ENTRYPOINT \["\/usr\/local\/bin\/warehouse-emulator-entrypoint"\]$/m);
    for (const m of text.matchAll(/^COPY (?!--from)(\S+) /gm)) expect(() => readFileSync(join(ROOT, m[1]!))).not.toThrow(/ENOENT/);
    const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8');
    // An allow-list: local data dirs, dist/ and node_modules stay out of the build context.
    expect(ignore.split('\n').find((l) => l && !l.startsWith('#'))).toBe('*');
  });
});

describe('release tags (spec §1.4.2)', () => {
  const tags = (v: string, released: string): string[] =>
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'release-tags.mjs'), v, '--released', released], { encoding: 'utf8' }).trim().split('\n');

  it('moves vX.Y, vX and latest only to the newest release they cover', () => {
    expect(tags('v1.0.0', '')).toEqual(['v1.0.0', 'v1.0', 'v1', 'latest']);
    expect(tags('v2.1.3', 'v2.1.2 v2.0.9 v1.9.0')).toEqual(['v2.1.3', 'v2.1', 'v2', 'latest']);
    expect(tags('v1.4.2', 'v1.4.1 v2.0.0')).toEqual(['v1.4.2', 'v1.4', 'v1']);
    expect(tags('v1.3.9', 'v1.4.0 v2.0.0')).toEqual(['v1.3.9', 'v1.3']);
  });

  it('a pre-release gets only its exact tag and never holds back a release', () => {
    expect(tags('v3.0.0-rc.1', 'v2.1.0')).toEqual(['v3.0.0-rc.1']);
    expect(tags('v2.2.0', 'v2.1.0 v3.0.0-rc.1')).toEqual(['v2.2.0', 'v2.2', 'v2', 'latest']);
  });
});

describe('compose.yaml and the bundled seed', () => {
  it('runs the image with a named volume on the data dir and a healthcheck that is the smoke check', () => {
    const c = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')) as {
      services: Record<string, { volumes: string[]; ports: string[]; healthcheck: { test: string[] }; platform: string }>;
      volumes: Record<string, unknown>;
    };
    const svc = Object.values(c.services)[0]!;
    const [vol, path] = svc.volumes[0]!.split(':');
    expect(Object.keys(c.volumes)).toContain(vol);
    expect(path).toBe(DEFAULT_DIR);
    expect(svc.ports).toContain('9050:9050');
    expect(svc.platform).toBe('linux/amd64');
    expect(svc.healthcheck.test.join(' ')).toContain('smoke.mjs');
  });

  it('the bundled sample data seeds the real emulator, and the smoke check passes against it', async () => {
    const emu = await startEmulator({ args: [`--seed-data-file=${SEED}`] });
    try {
      const q = await rest(`${emu.url}/bigquery/v2/projects/warehouse-public-data/queries`, {
        method: 'POST',
        json: {
          query: 'SELECT c.name, COUNT(*) AS days, MAX(w.temp_max_c) AS hottest FROM samples.cities c JOIN samples.daily_weather w ON c.city_id = w.city_id GROUP BY c.name ORDER BY days DESC, c.name LIMIT 2',
          useLegacySql: false,
        },
      });
      expect(q.status).toBe(200);
      expect(q.body.rows.map((r: { f: { v: string }[] }) => r.f.map((c) => c.v))).toEqual([
        ['Lisbon', '2', '31.4'],
        ['Oslo', '2', '21.3'],
      ]);
      const smoke = await new Promise<string>((res, rej) =>
        execFile(process.execPath, [join(ROOT, 'scripts', 'smoke.mjs'), emu.url], (err, stdout) => (err ? rej(err) : res(stdout))),
      );
      expect(smoke).toMatch(/smoke ok/);
    } finally {
      await emu.stop();
    }
  });
});
