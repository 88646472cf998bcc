// A metadata call that reaches the engine (tables.get; `--probe select1` for a
// `SELECT 1` query) probed back to back while a 2M-row GROUP BY of 100k groups
// runs (issue 19: metadata calls stay prompt during a large query). /healthz
// is answered by the gateway alone, so it cannot show the engine's loop.
// Prints each run's probe p50/max and every slow probe's place in the query.
// The answer is not parsed here (that would stall this process's own loop).
//   npm run build && node --import tsx bench/explore/engine-probe.ts [--rows 2000000] [--runs 5] [--port 9432] [--probe select1]
// Engine CPU profile: WAREHOUSE_ENGINE_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof".
import { loadavg } from 'node:os';
import { startEmulator } from '../../src/api/index.js';
import { summarize } from '../lib/stats.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const ROWS = Number(arg('rows', '2000000'));
const RUNS = Number(arg('runs', '5'));
const PORT = Number(arg('port', '9432'));
const SLOW = Number(arg('slow', '50'));
const PROBE = arg('probe', 'tables.get');
const P = 'ep';
const emu = await startEmulator({ projectId: P, httpPort: PORT, grpcPort: PORT + 1, log: process.env.EP_LOG ? 'inherit' : undefined });

async function query(sql: string): Promise<number> {
  const r = await fetch(`${emu.url}/bigquery/v2/projects/${P}/queries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: sql, useLegacySql: false, defaultDataset: { projectId: P, datasetId: 'd' }, timeoutMs: 600_000 }),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${sql}: ${r.status} ${text.slice(0, 300)}`);
  return text.length;
}

async function probe(): Promise<void> {
  const r =
    PROBE === 'select1'
      ? await fetch(`${emu.url}/bigquery/v2/projects/${P}/queries`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'SELECT 1', useLegacySql: false }),
        })
      : await fetch(`${emu.url}/bigquery/v2/projects/${P}/datasets/d/tables/big`);
  const text = await r.text();
  if (!r.ok) throw new Error(`probe: ${r.status} ${text.slice(0, 300)}`);
}

try {
  await query('CREATE SCHEMA d');
  const blocks = Math.ceil(ROWS / 1_000_000);
  await query(`CREATE TABLE d.big AS SELECT id, MOD(id, 100000) AS k, CAST(id AS FLOAT64) / 7 AS v FROM
    (SELECT n + (m - 1) * 1000000 AS id FROM UNNEST(GENERATE_ARRAY(1, 1000000)) AS n CROSS JOIN UNNEST(GENERATE_ARRAY(1, ${blocks})) AS m)`);
  await probe();
  const all: number[] = [];
  const queryMs: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    let done = false;
    const t0 = performance.now();
    let bytes = 0;
    let end = 0;
    const q = query('SELECT k, COUNT(*) AS c, SUM(v) AS s FROM d.big GROUP BY k').then((n) => {
      bytes = n;
      end = performance.now() - t0;
      done = true;
    });
    const samples: { at: number; ms: number }[] = [];
    while (!done) {
      const s = performance.now();
      await probe();
      samples.push({ at: s - t0, ms: performance.now() - s });
      await new Promise((r) => setTimeout(r, 5));
    }
    await q;
    queryMs.push(end);
    const lat = summarize(samples.map((x) => x.ms));
    all.push(...samples.map((x) => x.ms));
    console.log(`run ${run}: query ${end.toFixed(0)} ms (${bytes} bytes), ${samples.length} probes, p50 ${lat.p50} max ${lat.max} ms; load ${loadavg()[0]!.toFixed(2)}`);
    for (const x of samples) if (x.ms > SLOW) console.log(`  slow probe ${x.ms.toFixed(0)} ms at ${x.at.toFixed(0)} ms (query end ${end.toFixed(0)})`);
  }
  const lat = summarize(all);
  const ql = summarize(queryMs);
  console.log(`all: ${all.length} probes (${PROBE}), p50 ${lat.p50} p95 ${lat.p95} max ${lat.max} ms; query p50 ${ql.p50} ms`);
} finally {
  await emu.stop();
}
