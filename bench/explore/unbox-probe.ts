// Exploratory, not timed in CI: NUMERIC / BIGNUMERIC / INTERVAL expressions
// over a stored table in-process: each query's time and the rows it boxed
// (decimal words made Decimals, interval parts made Intervals, range sides made RangeValues).
//   node --import tsx bench/explore/unbox-probe.ts [rows=300000] [filter] [runs=2]
import { loadavg } from 'node:os';
import { openHarness, rowsOf, run } from '../../test/sql/harness.js';
import { decimalBoxing, layoutBoxing } from '../../src/types/vector.js';

const N = Number(process.argv[2] ?? 300_000);
const filter = process.argv[3] ?? '';
const runs = Number(process.argv[4] ?? 2);
const h = await openHarness();
const P = 'p';
const q = (sql: string) => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });
await q('CREATE SCHEMA d');
await q(`CREATE TABLE t AS SELECT id,
  IF(MOD(id, 17) = 0, NULL, CAST(MOD(id * 7919, 2000003) - 1000000 AS NUMERIC) / 100) AS p,
  CAST(MOD(id, 97) + 1 AS NUMERIC) / 4 AS d,
  IF(MOD(id, 13) = 0, NULL, CAST(MOD(id * 31, 100003) AS BIGNUMERIC) / 1000) AS b,
  MOD(id * 13, 100000) / 7.0 AS f,
  IF(MOD(id, 10) = 0, NULL, MAKE_INTERVAL(0, MOD(id, 25) - 12, MOD(id, 61) - 30, MOD(id, 49), MOD(id, 59), MOD(id * 7, 3600))) AS i,
  DATE_ADD(DATE '2000-01-01', INTERVAL MOD(id, 9000) DAY) AS dt,
  TIMESTAMP_ADD(TIMESTAMP '2000-01-01', INTERVAL MOD(id, 9000) * 3600 SECOND) AS ts,
  IF(MOD(id, 11) = 0, NULL, RANGE(TIMESTAMP_ADD(TIMESTAMP '2300-01-01', INTERVAL MOD(id, 9000) HOUR), IF(MOD(id, 7) = 0, NULL, TIMESTAMP_ADD(TIMESTAMP '2300-01-01', INTERVAL MOD(id, 9000) + 48 HOUR)))) AS rb
  FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS id`);
const QUERIES: [string, string][] = [
  ['mod', 'SELECT SUM(MOD(p, d)) FROM t'],
  ['div', 'SELECT SUM(DIV(p, d)) FROM t'],
  ['castf', 'SELECT SUM(CAST(f AS NUMERIC)) FROM t'],
  ['greatest', 'SELECT SUM(GREATEST(p, d)), SUM(LEAST(p, d)) FROM t'],
  ['cmpf', 'SELECT COUNTIF(p > f) FROM t'],
  ['abs', 'SELECT SUM(ABS(p)), SUM(SIGN(p)), SUM(-p) FROM t'],
  ['distinct', 'SELECT COUNTIF(p IS DISTINCT FROM d) FROM t'],
  ['case', 'SELECT SUM(CASE WHEN p > 0 THEN p ELSE d END), SUM(IF(p > 0, p, d)), SUM(COALESCE(p, d)) FROM t'],
  ['bmod', 'SELECT SUM(MOD(b, 7)) FROM t'],
  ['igroup', 'SELECT COUNT(*) FROM (SELECT i, COUNT(*) FROM t GROUP BY i)'],
  ['idistinct', 'SELECT COUNT(DISTINCT i) FROM t'],
  ['iextract', 'SELECT SUM(EXTRACT(DAY FROM i)), SUM(EXTRACT(HOUR FROM i)) FROM t'],
  ['ijustify', 'SELECT MAX(JUSTIFY_INTERVAL(i)), MAX(JUSTIFY_DAYS(i)), MAX(JUSTIFY_HOURS(i)) FROM t'],
  ['dateplus', 'SELECT MAX(dt + i), MAX(ts + i), MAX(ts - i) FROM t'],
  ['imul', 'SELECT MAX(i * 3), MAX(i + i), MAX(-i) FROM t'],
  // RANGE<TIMESTAMP> sides past 2^53 microseconds (year 2300).
  ['rrelate', "SELECT COUNTIF(RANGE_CONTAINS(rb, TIMESTAMP '2300-06-01')), COUNTIF(RANGE_OVERLAPS(rb, RANGE(TIMESTAMP '2300-03-01', TIMESTAMP '2300-04-01'))) FROM t"],
  ['rintersect', "SELECT COUNT(RANGE_INTERSECT(rb, RANGE(TIMESTAMP '2299-01-01', TIMESTAMP '2302-01-01'))) FROM t"],
];
console.log(`rows ${N}, load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
for (const [name, sql] of QUERIES) {
  if (filter && !name.includes(filter)) continue;
  for (let rep = 0; rep < runs; rep++) {
    const d0 = decimalBoxing.rows;
    const i0 = layoutBoxing.interval;
    const r0 = layoutBoxing.range;
    const t = performance.now();
    const r = await q(sql);
    const ms = performance.now() - t;
    const row = JSON.stringify(rowsOf(r)[0]).slice(0, 100);
    console.log(`${name.padEnd(10)} ${ms.toFixed(0).padStart(7)} ms  decimal boxed ${decimalBoxing.rows - d0}  interval boxed ${layoutBoxing.interval - i0}  range boxed ${layoutBoxing.range - r0}  ${rep ? '' : row}`);
  }
}
await h.close();
