#!/usr/bin/env node
// Pack-and-install smoke check: the package as a user gets it.
//  1. `npm pack` in a staging copy of the sources (prepack builds dist/ there,
//     so the working tree's dist/ and any emulator running from it are untouched);
//  2. the tarball holds only what runs (bundles, declarations, protos);
//  3. `npm install <tarball>` into an empty directory (timed): no dev-only
//     package comes along, nothing is built after install;
//  4. `npx warehouse-emulator` from there answers the spec §1.4.5 smoke check
//     (scripts/smoke.mjs); `import { startEmulator } from 'warehouse-emulator'` works.
// Prints one JSON line of measurements; exits 1 on the first failure.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = ['package.json', 'package-lock.json', 'README.md', 'tsconfig.json', 'scripts', 'src', 'grammar', 'proto', 'console'];
const DEV_ONLY = ['typescript', 'esbuild', 'vitest', 'tsx', 'chevrotain', '@duckdb/node-api', '@google-cloud/bigquery'];
const work = mkdtempSync(join(tmpdir(), 'pack-smoke-'));
const keep = process.argv.includes('--keep');

function fail(msg) {
  console.error(`pack-smoke: ${msg}`);
  if (!keep) rmSync(work, { recursive: true, force: true });
  process.exit(1);
}

const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

// 1. pack from a staging copy
const stage = join(work, 'stage');
mkdirSync(stage);
for (const s of SOURCES) cpSync(join(ROOT, s), join(stage, s), { recursive: true });
symlinkSync(join(ROOT, 'node_modules'), join(stage, 'node_modules'));
const [packed] = JSON.parse(npm(['pack', '--json', '--silent', '--pack-destination', work], stage).replace(/^[^[]*/s, ''));
const tarball = join(work, packed.filename);

// 2. contents
const files = packed.files.map((f) => f.path);
for (const need of ['dist/gateway.js', 'dist/engine.js', 'dist/index.js', 'dist/index.d.ts', 'dist/console/index.html', 'dist/console/app.js', 'proto/engine.proto', 'package.json']) {
  if (!files.includes(need)) fail(`${need} is missing from the tarball`);
}
const stray = files.filter((f) => !/^(dist\/[^/]+\.(js|d\.ts)|dist\/console\/[^/]+|proto\/.+\.proto|package\.json|README\.md)$/.test(f));
if (stray.length) fail(`the tarball holds files that do not run: ${stray.slice(0, 10).join(', ')}`);
if (!readFileSync(join(stage, 'dist', 'gateway.js'), 'utf8').startsWith('#!/usr/bin/env node')) fail('dist/gateway.js has no shebang');

// 3. install into an empty directory
const app = join(work, 'app');
mkdirSync(app);
writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'pack-smoke-app', private: true, type: 'module' }));
let t = performance.now();
npm(['install', '--no-audit', '--no-fund', '--loglevel=error', tarball], app);
const installMs = Math.round(performance.now() - t);
const devHere = DEV_ONLY.filter((p) => existsSync(join(app, 'node_modules', p)));
if (devHere.length) fail(`dev-only packages were installed: ${devHere.join(', ')}`);
const installedBytes = Number(execFileSync('du', ['-sb', join(app, 'node_modules')], { encoding: 'utf8' }).split('\t')[0]);

// 4a. npx warehouse-emulator + the smoke check
const data = join(work, 'data');
t = performance.now();
// Own process group: npx does not pass SIGTERM on to the command it runs, so the group is signalled (as a terminal's Ctrl-C does).
const emu = spawn('npx', ['--no-install', 'warehouse-emulator', '--http-port=0', '--grpc-port=0', `--data-dir=${data}`], { cwd: app, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
let log = '';
const url = await new Promise((res) => {
  const timer = setTimeout(() => res(undefined), 60_000);
  emu.stderr.setEncoding('utf8').on('data', (s) => {
    log += s;
    const m = /listening on http:\/\/[^:]+:(\d+)/.exec(log);
    if (m) {
      clearTimeout(timer);
      res(`http://127.0.0.1:${m[1]}`);
    }
  });
  emu.once('exit', () => res(undefined));
});
const npxStartMs = Math.round(performance.now() - t);
const stopEmu = async () => {
  if (emu.stderr.closed) return;
  const closed = new Promise((r) => emu.stderr.once('close', r)); // every process of the group has let go of the pipe
  try {
    process.kill(-emu.pid, 'SIGTERM');
  } catch {
    // the group is gone already
  }
  await closed;
};
if (!url) {
  await stopEmu();
  fail(`npx warehouse-emulator did not start:\n${log}`);
}
try {
  const smoke = execFileSync(process.execPath, [join(ROOT, 'scripts', 'smoke.mjs'), url], { encoding: 'utf8' }).trim();
  console.error(smoke);
} catch (e) {
  await stopEmu();
  fail(`smoke check failed: ${e.stderr ?? e.message}`);
}
await stopEmu();

// 4b. the programmatic entry, as a test suite's global setup would use it
const probe = join(app, 'probe.mjs');
writeFileSync(
  probe,
  [
    "import { startEmulator } from 'warehouse-emulator';",
    'const t = performance.now();',
    'const emu = await startEmulator();',
    'const startMs = Math.round(performance.now() - t);',
    "const r = await fetch(`${emu.url}/bigquery/v2/projects/${emu.projectId}/queries`, { method: 'POST', body: JSON.stringify({ query: 'SELECT 2 AS two', useLegacySql: false }) });",
    'const v = (await r.json()).rows?.[0]?.f?.[0]?.v;',
    'await emu.stop();',
    "if (v !== '2') { console.error('unexpected answer', v); process.exit(1); }",
    'console.log(JSON.stringify({ startMs }));',
  ].join('\n'),
);
let apiStartMs;
try {
  apiStartMs = JSON.parse(execFileSync(process.execPath, [probe], { cwd: app, encoding: 'utf8' }).trim()).startMs;
} catch (e) {
  fail(`the programmatic start failed: ${e.stderr ?? e.message}`);
}

console.log(
  JSON.stringify({
    tarball: packed.filename,
    tarballBytes: packed.size,
    unpackedBytes: packed.unpackedSize,
    files: files.length,
    installMs,
    installedBytes,
    npxStartMs,
    apiStartMs,
  }),
);
if (!keep) rmSync(work, { recursive: true, force: true });
