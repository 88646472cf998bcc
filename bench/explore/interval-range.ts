// Exploratory, not timed in CI: a 1M-row table with an INTERVAL and a
// RANGE<DATE> column, read right after an engine start: the cold first query,
// the engine's RSS after it, warm filters / aggregates over each column, and
// Storage Read Arrow sessions of each column through the real client. Run it
// against builds alternately on one data dir (restarting the emulator
// between runs) to compare them under the same load.
//   node --import tsx bench/explore/interval-range.ts http://127.0.0.1:9460 9461 --engine-pid=<pid> [--setup]
import { client, loadLine, q, readColumn, rssMb, setup, timed } from './column-probe.js';

const N = 1_000_000;

if (setup) {
  await q('CREATE SCHEMA IF NOT EXISTS x');
  // 10% NULL intervals, 10% NULL ranges, 10% unbounded ends.
  await q(`CREATE OR REPLACE TABLE x.ir AS SELECT id,
    IF(MOD(id, 10) = 0, NULL, MAKE_INTERVAL(0, MOD(id, 25) - 12, MOD(id, 61) - 30, MOD(id, 49), MOD(id, 59), MOD(id * 7, 3600))) AS i,
    IF(MOD(id, 10) = 1, NULL, RANGE(DATE_ADD(DATE '2000-01-01', INTERVAL MOD(id, 9000) DAY), IF(MOD(id, 10) = 2, NULL, DATE_ADD(DATE '2000-01-01', INTERVAL MOD(id, 9000) + 1 + MOD(id, 400) DAY)))) AS rd
    FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS id`);
  console.log('setup done');
  process.exit(0);
}

console.log(loadLine());
const first = 'SELECT COUNT(i), COUNT(rd) FROM x.ir';
const cold = await q(first);
console.log('cold first query (COUNT of both)', cold.ms.toFixed(0), 'ms', JSON.stringify(cold.rows), '; engine RSS after it', rssMb().toFixed(0), 'MB');
console.log("INTERVAL filter: COUNTIF(i > INTERVAL 1 DAY)", await timed('SELECT COUNTIF(i > INTERVAL 1 DAY) FROM x.ir', 3));
console.log('INTERVAL ORDER BY i DESC LIMIT 5', await timed('SELECT i FROM x.ir ORDER BY i DESC LIMIT 5', 3));
console.log('INTERVAL MAX/MIN', await timed('SELECT MAX(i), MIN(i) FROM x.ir', 3));
console.log("RANGE filter: COUNTIF(RANGE_CONTAINS(rd, DATE '2010-06-01'))", await timed("SELECT COUNTIF(RANGE_CONTAINS(rd, DATE '2010-06-01')) FROM x.ir", 3));
console.log('RANGE aggregate: MIN(RANGE_START(rd)), MAX(RANGE_END(rd))', await timed('SELECT MIN(RANGE_START(rd)), MAX(RANGE_END(rd)) FROM x.ir', 3));
console.log('engine RSS after the queries', rssMb().toFixed(0), 'MB');
for (const c of ['i', 'rd']) console.log(`Storage Read of ${c}`, await readColumn('ir', c));
console.log('engine RSS at the end', rssMb().toFixed(0), 'MB');
await client.close();
