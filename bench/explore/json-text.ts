// Exploratory, not timed in CI: a 1M-row table with a JSON column of five
// fields and one with GEOGRAPHY points, read right after an engine start:
// the cold first query (JSON_VALUE SUM/COUNT), the engine's RSS after it, the
// same query warm, a WHERE on a JSON field, INT64 of a field, and Storage
// Read Arrow sessions of the JSON and GEOGRAPHY columns through the real
// client; GEOGRAPHY ST_X and ST_DISTANCE sums warm. Run it against builds alternately on one data dir (restarting the
// emulator between runs) to compare them under the same load.
//   node --import tsx bench/explore/json-text.ts http://127.0.0.1:9410 9411 --engine-pid=<pid> [--setup]
import type { RecordBatch } from 'apache-arrow';
import { client, loadLine, q, readColumn, rssMb, setup, timed } from './column-probe.js';

const N = 1_000_000;

if (setup) {
  await q('CREATE SCHEMA IF NOT EXISTS x');
  await q(`CREATE OR REPLACE TABLE x.jt AS SELECT id, TO_JSON(STRUCT(id AS a, CONCAT('s', CAST(MOD(id, 1000) AS STRING)) AS s, MOD(id, 7) AS k, id * 0.25 AS f, MOD(id, 2) = 0 AS b)) AS j FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS id`);
  await q(`CREATE OR REPLACE TABLE x.geo AS SELECT id, ST_GEOGPOINT(MOD(id, 359) - 179 + 0.5, MOD(id, 169) - 84 + 0.25) AS g FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS id`);
  console.log('setup done');
  process.exit(0);
}

/** The characters of a batch's text column (offsets of its first child). */
const chars = (batch: RecordBatch): number => {
  const d = batch.getChildAt(0)!.data[0]!;
  return d.valueOffsets[d.length]! - d.valueOffsets[0]!;
};

console.log(loadLine());
const agg = "SELECT SUM(CAST(JSON_VALUE(j, '$.a') AS INT64)), COUNT(JSON_VALUE(j, '$.s')) FROM x.jt";
const cold = await q(agg);
console.log('cold first query (JSON_VALUE SUM/COUNT)', cold.ms.toFixed(0), 'ms', JSON.stringify(cold.rows), '; engine RSS after it', rssMb().toFixed(0), 'MB');
console.log('JSON_VALUE SUM/COUNT warm', await timed(agg, 5));
console.log("WHERE JSON_VALUE(j, '$.s') = 's7'", await timed("SELECT COUNT(*) FROM x.jt WHERE JSON_VALUE(j, '$.s') = 's7'", 5));
console.log('SUM(INT64(j.k))', await timed('SELECT SUM(INT64(j.k)) FROM x.jt', 5));
console.log('Storage Read of j (chars last)', await readColumn('jt', 'j', chars));
console.log('engine RSS after the JSON reads', rssMb().toFixed(0), 'MB');
const gcold = await q('SELECT COUNT(*), SUM(ST_X(g)) FROM x.geo');
console.log('GEOGRAPHY first query (ST_X SUM)', gcold.ms.toFixed(0), 'ms', JSON.stringify(gcold.rows), '; engine RSS after it', rssMb().toFixed(0), 'MB');
console.log('GEOGRAPHY ST_X SUM warm', await timed('SELECT COUNT(*), SUM(ST_X(g)) FROM x.geo', 5));
console.log('GEOGRAPHY ST_DISTANCE SUM warm', await timed('SELECT ROUND(SUM(ST_DISTANCE(g, ST_GEOGPOINT(1, 2))), 0) FROM x.geo', 5));
console.log('Storage Read of g (chars last)', await readColumn('geo', 'g', chars));
console.log('engine RSS at the end', rssMb().toFixed(0), 'MB');
await client.close();
