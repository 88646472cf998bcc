// One-row DML at scale (issue 19: "DML costs what it changes"): a table of N
// rows (id, k, v, s) made by CTAS in the emulator and in DuckDB (in-process,
// 2 threads), then one-row UPDATE, DELETE and MERGE statements by id timed
// on each side in turn (emulator: jobs.query over REST, as a client sends
// them), and the same UPDATE after a restart of the emulator (the changes
// replayed from the log). Prints a table and writes bench/results/dml-<size>.json.
//   npm run build && node --import tsx bench/dml.ts [--rows 1000000] [--iterations 30]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startEmulator, type RunningEmulator } from '../src/api/index.js';
import { summarize } from './lib/stats.js';
import { sizeLabel } from './scale/dataset.js';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const ROWS = arg('rows', 1_000_000);
const ITER = arg('iterations', 30);
const P = 'dml';

async function query(emu: RunningEmulator, sql: string): Promise<unknown> {
  const base = `${emu.url}/bigquery/v2/projects/${P}/queries`;
  const r = await fetch(base, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: sql, useLegacySql: false, defaultDataset: { projectId: P, datasetId: 'd' }, timeoutMs: 600_000 }),
  });
  let body = (await r.json()) as { jobComplete?: boolean; error?: unknown; jobReference?: { jobId: string; location?: string } };
  if (!r.ok) throw new Error(`${sql}: ${r.status} ${JSON.stringify(body).slice(0, 300)}`);
  // A long statement (the 100M-row CTAS) outlives the service's wait cap: poll as a client does.
  while (body.jobComplete === false) {
    const ref = body.jobReference!;
    const g = await fetch(`${base}/${ref.jobId}?timeoutMs=10000&location=${ref.location ?? 'US'}`);
    body = (await g.json()) as typeof body;
    if (!g.ok) throw new Error(`${sql}: ${g.status} ${JSON.stringify(body).slice(0, 300)}`);
  }
  return body;
}

const groups = Math.ceil(ROWS / 1000);
const ctas = {
  emulator: `CREATE TABLE d.t AS SELECT a * 1000 + b AS id, MOD(a * 1000 + b, 1000) AS k, (a * 1000 + b) * 0.5 AS v, CONCAT('s', CAST(MOD(a * 1000 + b, 10000) AS STRING)) AS s
    FROM UNNEST(GENERATE_ARRAY(0, ${groups - 1})) AS a, UNNEST(GENERATE_ARRAY(0, 999)) AS b`,
  duckdb: `CREATE TABLE t AS SELECT a * 1000 + b AS id, (a * 1000 + b) % 1000 AS k, (a * 1000 + b) * 0.5 AS v, 's' || CAST((a * 1000 + b) % 10000 AS VARCHAR) AS s
    FROM range(0, ${groups}) r1(a), range(0, 1000) r2(b)`,
};
/** The statements timed, by the id they touch (a different row each time). */
const statements: { name: string; sql: (id: number, table: string) => string }[] = [
  { name: 'update_one_row', sql: (id, t) => `UPDATE ${t} SET v = v + 1 WHERE id = ${id}` },
  { name: 'delete_one_row', sql: (id, t) => `DELETE FROM ${t} WHERE id = ${id}` },
  { name: 'merge_one_row', sql: (id, t) => `MERGE INTO ${t} AS t USING (SELECT ${id} AS id, 1.5 AS v) AS src ON t.id = src.id WHEN MATCHED THEN UPDATE SET v = src.v` },
];

const dataDir = mkdtempSync(join(tmpdir(), 'wh-dml-'));
const duck = await (await DuckDBInstance.create(':memory:', { threads: '2' })).connect();
let emu = await startEmulator({ dataDir, projectId: P });
try {
  await query(emu, 'CREATE SCHEMA d');
  let t0 = performance.now();
  await query(emu, ctas.emulator);
  const loadEmu = performance.now() - t0;
  t0 = performance.now();
  await duck.run(ctas.duckdb);
  const loadDuck = performance.now() - t0;
  const results: Record<string, { emulatorP50Ms: number; duckdbP50Ms: number; ratio: number }> = {};
  let next = 1;
  for (const st of statements) {
    const e: number[] = [];
    const d: number[] = [];
    for (let i = 0; i < ITER; i++) {
      // Spread over the table: each statement touches a row no earlier one did.
      const id = (next++ * 7919) % ROWS;
      let s = performance.now();
      await query(emu, st.sql(id, 'd.t'));
      e.push(performance.now() - s);
      s = performance.now();
      await duck.run(st.sql(id, 't'));
      d.push(performance.now() - s);
    }
    const ep = summarize(e).p50;
    const dp = summarize(d).p50;
    results[st.name] = { emulatorP50Ms: ep, duckdbP50Ms: dp, ratio: ep / dp };
  }
  // After a restart the changes come back from the log; the next change costs the same.
  await emu.stop();
  emu = await startEmulator({ dataDir, projectId: P });
  const afterRestart: number[] = [];
  for (let i = 0; i < ITER; i++) {
    const s = performance.now();
    await query(emu, statements[0]!.sql((next++ * 7919) % ROWS, 'd.t'));
    afterRestart.push(performance.now() - s);
  }
  const out = {
    kind: 'dml',
    rows: ROWS,
    iterations: ITER,
    load: { emulatorMs: Math.round(loadEmu), duckdbMs: Math.round(loadDuck) },
    cases: results,
    updateAfterRestartP50Ms: summarize(afterRestart).p50,
    at: new Date().toISOString(),
    machine: { cores: cpus().length, loadAverage1m: Number(loadavg()[0]!.toFixed(2)) },
  };
  for (const [name, r] of Object.entries(results)) console.log(`${name.padEnd(16)} emulator ${r.emulatorP50Ms.toFixed(1)} ms  duckdb ${r.duckdbP50Ms.toFixed(1)} ms  ratio ${r.ratio.toFixed(2)}`);
  console.log(`update after restart p50 ${out.updateAfterRestartP50Ms.toFixed(1)} ms; load emulator ${out.load.emulatorMs} ms, duckdb ${out.load.duckdbMs} ms`);
  writeFileSync(join(import.meta.dirname, 'results', `dml-${sizeLabel(ROWS)}.json`), `${JSON.stringify(out, null, 2)}\n`);
} finally {
  await emu.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
