// The scale set's load (bench/scale/dataset.ts: an 8-column CTAS from two
// GENERATE_ARRAY ranges) timed alone, with tables.get probed back to back
// while it runs (issue 19: CTAS >= 1M rows/s; metadata calls keep answering
// promptly during it). Prints each run's rows/s and the probes' p50/max.
//   npm run build && node --import tsx bench/explore/ctas-probe.ts [--rows 2m] [--runs 3] [--port 9410] [--no-probe] [--check] [--dist dir]
// --dist: another build's dist/ (a copy of the build before a change, for A/B runs on a loaded machine).
// Engine CPU profile: WAREHOUSE_ENGINE_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof".
import { loadavg } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';
import { summarize } from '../lib/stats.js';
import { findEnginePid } from '../metrics/rss.js';
import { emulatorSetup, parseRows } from '../scale/dataset.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const ROWS = parseRows(arg('rows', '2m'));
const RUNS = Number(arg('runs', '3'));
const PORT = Number(arg('port', '9410'));
const PROBE = !process.argv.includes('--no-probe');
const SLOW = Number(arg('slow', '50'));
const P = 'cp';
const DIST = path.resolve(arg('dist', path.join(import.meta.dirname, '../../dist')));
const { startEmulator } = (await import(pathToFileURL(path.join(DIST, 'index.js')).href)) as typeof import('../../src/api/index.js');
const emu = await startEmulator({ projectId: P, httpPort: PORT, grpcPort: PORT + 1, log: process.env.EP_LOG ? 'inherit' : undefined });

// The engine's CPU seconds (all its threads), from /proc: on a loaded machine the measure to compare builds by.
const enginePid = findEnginePid(emu.pid);
// Its main thread's alone (the task whose id is the pid): what bounds a CTAS when its workers have cores of their own.
function engineCpuMs(main = false): number {
  if (enginePid === null) return Number.NaN;
  const f = readFileSync(main ? `/proc/${enginePid}/task/${enginePid}/stat` : `/proc/${enginePid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

async function query(sql: string): Promise<string> {
  const r = await fetch(`${emu.url}/bigquery/v2/projects/${P}/queries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: sql, useLegacySql: false, timeoutMs: 600_000 }),
  });
  const text = await r.text();
  if (!r.ok || text.includes('"errorResult"')) throw new Error(`${sql.slice(0, 80)}: ${r.status} ${text.slice(0, 300)}`);
  return text;
}

/** A digest of the table's values (--check): compare it between builds. */
const CHECK = `SELECT COUNT(*) AS n, SUM(id) AS id, SUM(k1000) AS k, SUM(hk) AS hk, SUM(v) AS v, COUNT(DISTINCT s) AS ds, MIN(s) AS mins, MAX(s) AS maxs,
  SUM(LENGTH(s)) AS ls, SUM(UNIX_DATE(d)) AS d, SUM(UNIX_SECONDS(ts)) AS ts, COUNTIF(b) AS b,
  SUM(IF(MOD(id, 7) = 3, UNIX_SECONDS(ts) * MOD(id, 13), 0)) AS mix, STRING_AGG(IF(MOD(id, 999983) = 1, s, NULL), ',' ORDER BY id) AS sample FROM`;

async function probe(): Promise<void> {
  const r = await fetch(`${emu.url}/bigquery/v2/projects/${P}/datasets/d0/tables/small`);
  const text = await r.text();
  if (!r.ok) throw new Error(`probe: ${r.status} ${text.slice(0, 300)}`);
}

try {
  await query('CREATE SCHEMA d0');
  await query('CREATE TABLE d0.small AS SELECT 1 AS x');
  const rates: number[] = [];
  const all: number[] = [];
  const cpus: number[] = [];
  const mains: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const ds = `d${run + 1}`;
    await query(`CREATE SCHEMA ${ds}`);
    const { fact } = emulatorSetup(ds, ROWS);
    let done = false;
    const c0 = engineCpuMs();
    const m0 = engineCpuMs(true);
    const t0 = performance.now();
    let end = 0;
    const q = query(fact).then(() => {
      end = performance.now() - t0;
      done = true;
    });
    const samples: { at: number; ms: number }[] = [];
    while (PROBE && !done) {
      const s = performance.now();
      await probe();
      samples.push({ at: s - t0, ms: performance.now() - s });
      await new Promise((r) => setTimeout(r, 5));
    }
    await q;
    const cpu = engineCpuMs() - c0;
    const mainCpu = engineCpuMs(true) - m0;
    cpus.push(cpu);
    mains.push(mainCpu);
    rates.push(ROWS / (end / 1000));
    all.push(...samples.map((x) => x.ms));
    const lat = summarize(samples.map((x) => x.ms));
    console.log(`run ${run}: CTAS ${ROWS} rows ${end.toFixed(0)} ms = ${Math.round(ROWS / (end / 1000)).toLocaleString('en')} rows/s, engine CPU ${cpu.toFixed(0)} ms (main thread ${mainCpu.toFixed(0)} ms)` +
      (PROBE ? `; ${samples.length} probes, p50 ${lat.p50} max ${lat.max} ms` : '') + `; load ${loadavg()[0]!.toFixed(2)}`);
    if (process.argv.includes('--check')) console.log(`  check: ${JSON.stringify(JSON.parse(await query(`${CHECK} ${ds}.f`)).rows)}`);
    for (const x of samples) if (x.ms > SLOW) console.log(`  slow probe ${x.ms.toFixed(0)} ms at ${x.at.toFixed(0)} ms`);
    await query(`DROP SCHEMA ${ds} CASCADE`);
  }
  const r = summarize(rates);
  const lat = summarize(all);
  console.log(`all: CTAS p50 ${Math.round(r.p50).toLocaleString('en')} rows/s (max ${Math.round(r.max).toLocaleString('en')}), engine CPU p50 ${summarize(cpus).p50} ms (main thread ${summarize(mains).p50} ms)` +
    (PROBE ? `; ${all.length} probes (tables.get), p50 ${lat.p50} p95 ${lat.p95} max ${lat.max} ms` : ''));
} finally {
  await emu.stop();
}
