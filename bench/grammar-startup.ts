// The grammar's start-up and per-query parse cost (grammar/README.md, Bundling): module import + parser
// construction + first parse of the grammar bundled with chevrotain as scripts/build.mjs bundles it, in a fresh
// node process; then the steady-state parse of a 10-line query. CPU time (user + system) beside wall time: on a
// shared, loaded box the wall clock mostly measures the scheduler. A measurement, not a test (the developers'
// guide keeps timings out of unit tests); the budgets it was written against: start-up < 300 ms CPU, < 1 ms per parse.
//   node --import tsx bench/grammar-startup.ts
// Prints one JSON line and writes bench/results/grammar-startup.json.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { parseScript } from '../grammar/index.js';

const QUERY = `WITH recent AS (
  SELECT user_id, event_ts, amount
  FROM \`my-project.analytics.events\`
  WHERE event_ts >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 7 DAY)
)
SELECT user_id, COUNT(*) AS n, SUM(amount) AS total,
       ARRAY_AGG(amount IGNORE NULLS ORDER BY event_ts DESC LIMIT 3) AS last3
FROM recent
GROUP BY user_id HAVING total > 100
ORDER BY total DESC LIMIT 10`;

const here = path.dirname(fileURLToPath(import.meta.url));
const round = (x: number): number => Math.round(x * 100) / 100;

async function startup(): Promise<Record<string, number>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'grammar-startup-'));
  try {
    await build({ entryPoints: [path.join(here, '..', 'grammar', 'index.ts')], outfile: path.join(dir, 'grammar.mjs'), bundle: true, platform: 'node', target: 'node20', format: 'esm', logLevel: 'warning' });
    const probe = `
      const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
      const c0 = cpu(), t0 = performance.now();
      const g = await import(${JSON.stringify(path.join(dir, 'grammar.mjs'))});
      const c1 = cpu(), t1 = performance.now();
      g.parseScript(${JSON.stringify(QUERY)});
      const c2 = cpu(), t2 = performance.now();
      console.log(JSON.stringify({ importWallMs: t1 - t0, importCpuMs: c1 - c0, firstParseWallMs: t2 - t1, firstParseCpuMs: c2 - c1 }));`;
    return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8' })) as Record<string, number>;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function steadyParse(): { wallUs: number; cpuUs: number } {
  for (let i = 0; i < 300; i++) parseScript(QUERY);
  const n = 2000;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) parseScript(QUERY);
  const wall = (performance.now() - t0) / n;
  const c = process.cpuUsage(c0);
  return { wallUs: wall * 1000, cpuUs: (c.user + c.system) / n };
}

const s = await startup();
const p = steadyParse();
const out = {
  startup: Object.fromEntries(Object.entries(s).map(([k, v]) => [k, round(v)])),
  startupCpuMs: round(s.importCpuMs! + s.firstParseCpuMs!),
  parse10Lines: { wallUs: round(p.wallUs), cpuUs: round(p.cpuUs) },
};
console.log(JSON.stringify(out));
writeFileSync(path.join(here, 'results', 'grammar-startup.json'), JSON.stringify(out, null, 2) + '\n');
