// The change record's cost for ordinary DML (issue 16, APPENDS / CHANGES):
// a table without enable_change_history, N rows by CTAS, then `--count`
// rounds of a one-row INSERT, a one-row UPDATE and a 1,000-row UPDATE over
// REST (jobs.query); prints each statement kind's p50 / p95 in ms. Run it
// from two worktrees in turn (the build before and after) to compare.
//   npm run build && node --import tsx bench/explore/change-record-ab.ts [--rows 200000] [--count 100] [--port 9711] [--label new]
// Measured when the record landed (77f47be vs its parent's tree, 200k rows, 2 cores at load 16-20 from other work):
// over REST, 5 alternating pairs of 100 rounds, median of the runs' p50s before -> after: INSERT 13.1 -> 9.5 ms,
// one-row UPDATE 27.4 -> 19.5, 1,000-row UPDATE 25.7 -> 23.1 (each run's p50 ranged 6-31 ms on either build: the
// same build run twice spread as much, so no difference shows); in-process (planner and storage, no gateway; 150
// rounds, 5 runs alternating) CPU 1.88-2.69 s before vs 1.95-2.06 s after per 450 statements, INSERT p50
// 0.79-0.96 vs 0.77-0.88 ms. An earlier round of 60-round runs had the new build behind in 5 of 5 pairs, also
// for INSERT, whose path does not reach the record: the spread above says that was the load.
import { loadavg } from 'node:os';
import { startEmulator, type RunningEmulator } from '../../src/api/index.js';
import { summarize } from '../lib/stats.js';
import { queryDone } from '../lib/rest-client.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : def;
};
const ROWS = Number(arg('rows', '200000'));
const COUNT = Number(arg('count', '100'));
const PORT = Number(arg('port', '9711'));
const LABEL = arg('label', 'run');
const P = 'ab';

const query = (emu: RunningEmulator, sql: string): Promise<void> => queryDone(emu.url, P, sql);

const emu = await startEmulator({ projectId: P, httpPort: PORT, grpcPort: PORT + 1 });
try {
  await query(emu, 'CREATE SCHEMA d');
  await query(emu, `CREATE TABLE d.t AS SELECT id, MOD(id, 1000) AS k, CONCAT('s', CAST(id AS STRING)) AS s FROM UNNEST(GENERATE_ARRAY(1, ${ROWS})) AS id`);
  const times: Record<string, number[]> = { insert: [], update1: [], update1k: [] };
  const timed = async (kind: string, sql: string): Promise<void> => {
    const t = performance.now();
    await query(emu, sql);
    times[kind]!.push(performance.now() - t);
  };
  for (let i = 0; i < COUNT; i++) {
    await timed('insert', `INSERT d.t VALUES (${ROWS + 1 + i}, 1, 'new')`);
    await timed('update1', `UPDATE d.t SET s = 'u' WHERE id = ${1 + i}`);
    await timed('update1k', `UPDATE d.t SET s = 'v' WHERE id BETWEEN ${10_000 + i * 1000} AND ${10_999 + i * 1000}`);
  }
  const out = Object.fromEntries(Object.entries(times).map(([k, v]) => { const s = summarize(v); return [k, `${s.p50.toFixed(1)} / ${s.p95.toFixed(1)}`]; }));
  console.log(JSON.stringify({ label: LABEL, rows: ROWS, count: COUNT, p50_p95_ms: out, load: loadavg().map((x) => x.toFixed(1)).join(' ') }));
} finally {
  await emu.stop();
}
