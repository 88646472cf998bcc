// /healthz while a large GROUP BY runs (the bench's healthzUnderLoad, alone
// and repeated): a 2M-row table by CTAS, then `--runs` GROUP BYs of 100k
// groups, each with /healthz probed back to back (5 ms apart) until it
// returns. Prints every slow probe (over `--slow` ms) with when it started
// relative to the query's start and end, so a stall can be placed: during
// the scan, at the aggregate's end, or while the result is sent.
//   npm run build && node --import tsx bench/explore/healthz-probe.ts [--rows 2000000] [--runs 5] [--port 9432]
import { loadavg } from 'node:os';
import { startEmulator } from '../../src/api/index.js';
import { summarize } from '../lib/stats.js';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const ROWS = arg('rows', 2_000_000);
const RUNS = arg('runs', 5);
const PORT = arg('port', 9432);
const SLOW = arg('slow', 20);
const P = 'hz';
/** Parse each answer's JSON in this process's event loop, as the bench's client does (`--parse 1`). */
const PARSE = arg('parse', 0) === 1;
let parseMs = 0;
const emu = await startEmulator({ projectId: P, httpPort: PORT, grpcPort: PORT + 1, log: process.env.HZ_LOG ? 'inherit' : undefined });

async function query(sql: string): Promise<number> {
  const r = await fetch(`${emu.url}/bigquery/v2/projects/${P}/queries`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: sql, useLegacySql: false, defaultDataset: { projectId: P, datasetId: 'd' }, timeoutMs: 600_000 }),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${sql}: ${r.status} ${text.slice(0, 300)}`);
  if (PARSE) {
    // As the bench's client does (bench/lib/rest-client.ts): in this event loop, the probes' too.
    const t0 = performance.now();
    JSON.parse(text);
    parseMs = performance.now() - t0;
  }
  return text.length;
}

try {
  await query('CREATE SCHEMA d');
  const blocks = Math.ceil(ROWS / 1_000_000);
  await query(`CREATE TABLE d.big AS SELECT id, MOD(id, 100000) AS k, CAST(id AS FLOAT64) / 7 AS v FROM
    (SELECT n + (m - 1) * 1000000 AS id FROM UNNEST(GENERATE_ARRAY(1, 1000000)) AS n CROSS JOIN UNNEST(GENERATE_ARRAY(1, ${blocks})) AS m)`);
  const all: number[] = [];
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
      const r = await fetch(`${emu.url}/healthz`);
      await r.text();
      samples.push({ at: s - t0, ms: performance.now() - s });
      await new Promise((r) => setTimeout(r, 5));
    }
    await q;
    const lat = summarize(samples.map((x) => x.ms));
    all.push(...samples.map((x) => x.ms));
    console.log(`run ${run}: query ${end.toFixed(0)} ms (${bytes} bytes${PARSE ? `, parsed in ${parseMs.toFixed(0)} ms` : ''}), ${samples.length} probes, p50 ${lat.p50} max ${lat.max} ms; load ${loadavg()[0]!.toFixed(2)}`);
    for (const x of samples) if (x.ms > SLOW) console.log(`  slow probe ${x.ms.toFixed(0)} ms at ${x.at.toFixed(0)} ms (query end ${end.toFixed(0)}; epoch end ${Math.round(performance.timeOrigin + t0 + x.at + x.ms)})`);
  }
  const lat = summarize(all);
  console.log(`all: ${all.length} probes, p50 ${lat.p50} p95 ${lat.p95} max ${lat.max} ms`);
} finally {
  await emu.stop();
}
