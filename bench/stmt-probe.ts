// Probe: times a write statement (ctas / view / query) against a fresh
// emulator, optionally under strace (-f -c) or with the engine's CPU profile.
// node --import tsx bench/stmt-probe.ts [ctas|view|agg|select1] [n] [--strace out]
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startEmulator } from './lib/emulator-process.js';
import { RestClient } from './lib/rest-client.js';
import { findEnginePid } from './metrics/rss.js';
import { repoRoot } from './lib/cases.js';

const kind = process.argv[2] ?? 'ctas';
const n = Number(process.argv[3] ?? 30);
const straceAt = process.argv.indexOf('--strace');
const straceOut = straceAt > 0 ? process.argv[straceAt + 1] : null;
const extraArgs = process.argv.includes('--sync') ? ['--sync-writes'] : [];

const emu = await startEmulator(path.join(repoRoot, 'dist', 'gateway.js'), 'p', { args: extraArgs });
const rest = new RestClient(emu.url, 'p');
try {
  await rest.createDataset('ds');
  await rest.query(`CREATE TABLE ds.src AS SELECT id, MOD(id, 100) AS k, CAST(id AS FLOAT64) / 7 AS v FROM UNNEST(GENERATE_ARRAY(1, 100000)) AS id`, 60_000);
  const sql = {
    ctas: 'CREATE OR REPLACE TABLE ds.dst AS SELECT k, COUNT(*) AS cnt, SUM(v) AS total FROM ds.src GROUP BY k',
    view: 'CREATE OR REPLACE VIEW ds.v_dyn AS SELECT k, COUNT(*) AS cnt FROM ds.src GROUP BY k',
    agg: 'SELECT k, COUNT(*) AS cnt, SUM(v) AS total FROM ds.src GROUP BY k',
    select1: 'SELECT 1',
  }[kind]!;
  for (let i = 0; i < 5; i++) await rest.query(sql, 60_000);
  let tracer: ReturnType<typeof spawn> | null = null;
  if (straceOut) {
    const pid = findEnginePid(emu.pid!);
    tracer = spawn('strace', ['-f', ...(process.env.STRACE_FLAGS ?? '-c -w').split(' '), '-o', straceOut, '-e', 'trace=fsync,fdatasync,rename,renameat,openat,write,pwrite64,writev,unlink,unlinkat,mkdir,read,pread64,close,fstat,newfstatat,statx,getdents64', '-p', String(pid)], { stdio: 'inherit' });
    await new Promise((r) => setTimeout(r, 1000));
  }
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await rest.query(sql, 60_000);
    times.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 10));
  }
  if (tracer) {
    tracer.kill('SIGINT');
    await new Promise((r) => tracer!.on('exit', r));
  }
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!.toFixed(2);
  console.log(`${kind}: n=${n} p10 ${q(0.1)} p50 ${q(0.5)} p90 ${q(0.9)} ms`);
} finally {
  await emu.stop();
}
