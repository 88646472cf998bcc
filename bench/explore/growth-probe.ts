// The scale set's table (scale/dataset.ts) built once in a kept data dir,
// then queries through REST, each timed with the CPU of every thread of
// gateway + engine (schedstat, ns) and their summed peak RSS (sampled every
// 100 ms): what issue 19's 10M -> 100M growth work was measured with, where a
// bench run would rebuild the table every time. A new --dir is loaded first
// (CTAS; 100M rows: ~4 min at load 10; run those under flock /work/locks/100m.lock).
//   node --import tsx bench/explore/growth-probe.ts --rows 30m --dir /tmp/x-30m --limit 1200MB --port 9430 --runs 4 --sql "SELECT ..." [--sql ...]
// Tables: d.f (and d.dim). `--sql "@2 SELECT ..."` runs that one twice; --alternate
// interleaves the statements run by run; --quiet prints only the medians (runs after
// the first 3). Env: GP_GAP=<ms> pause before each run (separates runs in a
// --cpu-prof profile: WAREHOUSE_ENGINE_NODE_FLAGS="--cpu-prof --cpu-prof-dir=..."),
// GP_SYS=1 the engine's utime/stime/minor faults so far after each run,
// GP_MALLOC / GP_TRIM glibc's mmap / trim thresholds for the engine (the
// supervisor's MALLOC_ENV otherwise), GP_ARGS more gateway flags, GP_LOG=1 its log.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { startEmulator } from '../../src/api/index.js';
import { emulatorSetup, parseRows } from '../scale/dataset.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const rows = parseRows(arg('rows', '30m'));
const dir = arg('dir', '/tmp/growth-30m');
const limit = arg('limit', '');
const port = Number(arg('port', '9430'));
const runs = Number(arg('runs', '3'));
const sqls = process.argv.flatMap((a, i) => (a === '--sql' ? [process.argv[i + 1]!] : []));
const fresh = !existsSync(dir);
const P = 'gp';
const emu = await startEmulator({ projectId: P, httpPort: port, grpcPort: port + 1, dataDir: dir, args: [...(limit ? ['--memory-limit', limit] : []), ...(process.env.GP_ARGS ?? '').split(' ').filter(Boolean)], log: process.env.GP_LOG ? 'inherit' : undefined, env: process.env.GP_MALLOC ? { MALLOC_MMAP_THRESHOLD_: process.env.GP_MALLOC, MALLOC_TRIM_THRESHOLD_: process.env.GP_TRIM ?? process.env.GP_MALLOC } : undefined, startTimeoutMs: 120_000 });

function sysTime(pid: number): string {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return `utime ${Number(st[11]) * 10} stime ${Number(st[12]) * 10} minflt ${st[7]}`;
  } catch { return ''; }
}
function engineStat(): { cpu: number; rss: number; pid: number } {
  const kids = readFileSync(`/proc/${emu.pid}/task/${emu.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  let cpu = 0, rss = 0, pid = 0;
  for (const p of [String(emu.pid), ...kids]) {
    for (const t of readdirSync(`/proc/${p}/task`)) {
      try { cpu += Number(readFileSync(`/proc/${p}/task/${t}/schedstat`, 'utf8').split(' ')[0]) / 1e6; } catch {}
    }
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
    rss += Number(m?.[1] ?? 0) / 1024;
    if (p !== String(emu.pid)) pid = Number(p);
  }
  return { cpu, rss, pid };
}

async function query(sql: string): Promise<string> {
  const r = await fetch(`${emu.url}/bigquery/v2/projects/${P}/queries`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: sql, useLegacySql: false, defaultDataset: { projectId: P, datasetId: 'd' }, timeoutMs: 3_600_000 }),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${sql.slice(0, 80)}: ${r.status} ${text.slice(0, 300)}`);
  let j = JSON.parse(text);
  while (!j.jobComplete) {
    const jobId = j.jobReference.jobId;
    const loc = j.jobReference.location ? `&location=${j.jobReference.location}` : '';
    const r2 = await fetch(`${emu.url}/bigquery/v2/projects/${P}/queries/${jobId}?timeoutMs=60000${loc}`);
    j = JSON.parse(await r2.text());
    if (j.error) throw new Error(JSON.stringify(j.error));
  }
  return JSON.stringify(j.rows ?? []).slice(0, 200);
}

try {
  if (fresh) {
    const t0 = performance.now();
    await query('CREATE SCHEMA d');
    const { fact, dim } = emulatorSetup('d', rows);
    await query(fact);
    await query(dim);
    console.log(`load ${rows}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const alternate = process.argv.includes('--alternate');
  const walls = new Map<string, number[]>();
  const cpus = new Map<string, number[]>();
  const order = alternate ? Array.from({ length: runs }, () => sqls).flat().map((sql, i) => ({ sql, i: Math.floor(i / sqls.length) })) : sqls.flatMap((sql) => Array.from({ length: /^@\d+ /.test(sql) ? Number(/^@(\d+) /.exec(sql)![1]) : runs }, (_, i) => ({ sql, i })));
  for (const { sql, i } of order) {
    {
      if (process.env.GP_GAP) await new Promise((r) => setTimeout(r, Number(process.env.GP_GAP)));
      let peak = 0;
      const timer = setInterval(() => { try { peak = Math.max(peak, engineStat().rss); } catch {} }, 100);
      const s0 = engineStat();
      const t0 = performance.now();
      const out = await query(sql.replace(/^@\d+ /, ''));
      const ms = performance.now() - t0;
      clearInterval(timer);
      const s1 = engineStat();
      if (process.env.GP_SYS) console.log(`  engine ${sysTime(s1.pid)}`);
      if (!walls.has(sql)) { walls.set(sql, []); cpus.set(sql, []); }
      walls.get(sql)!.push(ms); cpus.get(sql)!.push(s1.cpu - s0.cpu);
      if (process.argv.includes('--quiet')) continue;
      console.log(`${sql.slice(0, 60)} | ${ms.toFixed(1)} ms wall, ${(s1.cpu - s0.cpu).toFixed(1)} ms cpu, peak gateway+engine RSS ${peak.toFixed(0)} MB, load ${loadavg()[0].toFixed(2)} | ${i === 0 ? out.slice(0, 100) : ''}`);
    }
  }
  const med = (a: number[]): number => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]!; };
  if (runs > 3) for (const sql of sqls.filter((q) => !q.startsWith('@'))) console.log(`MEDIAN ${sql.slice(0, 70)} | wall ${med(walls.get(sql)!.slice(3)).toFixed(2)} ms, cpu ${med(cpus.get(sql)!.slice(3)).toFixed(2)} ms (of ${runs - 3} after 3)`);
} finally {
  await emu.stop();
}
