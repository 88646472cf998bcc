// Differential check of executor semantics through the whole pipeline
// (parser, analyzer, planner, storage, executor) against DuckDB on queries
// whose meaning is the same in both dialects: aggregates, window frames,
// navigation, joins with residuals, subqueries, set operations.
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, run, rowsOf, setupDataset, type Harness } from '../../test/sql/harness.js';

const o = { projectId: 'p', defaultDataset: { projectId: 'p', datasetId: 'd' } };
let h: Harness;
let duck: Awaited<ReturnType<DuckDBInstance['connect']>>;
beforeAll(async () => {
  h = await openHarness();
  await setupDataset(h, 'p', 'd');
  await run(h, 'CREATE TABLE d.t AS SELECT x, MOD(x, 5) AS g, IF(MOD(x, 7) = 0, NULL, MOD(x * 37, 101)) AS v FROM UNNEST(GENERATE_ARRAY(1, 300)) x', o);
  const db = await DuckDBInstance.create(':memory:');
  duck = await db.connect();
  await duck.run('CREATE TABLE t AS SELECT x, x % 5 AS g, CASE WHEN x % 7 = 0 THEN NULL ELSE (x * 37) % 101 END AS v FROM range(1, 301) r(x)');
});
afterAll(async () => {
  await h?.close();
});

const qs: [string, string][] = [
  ['SELECT g, SUM(v), COUNT(v), COUNT(*), MIN(v), MAX(v), COUNT(DISTINCT v) FROM d.t GROUP BY g ORDER BY g', 'SELECT g, SUM(v), COUNT(v), COUNT(*), MIN(v), MAX(v), COUNT(DISTINCT v) FROM t GROUP BY g ORDER BY g'],
  ['SELECT x, SUM(v) OVER (PARTITION BY g ORDER BY x ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) FROM d.t ORDER BY x', 'SELECT x, SUM(v) OVER (PARTITION BY g ORDER BY x ROWS BETWEEN 2 PRECEDING AND 1 FOLLOWING) FROM t ORDER BY x'],
  ['SELECT x, SUM(x) OVER (PARTITION BY g ORDER BY v RANGE BETWEEN 10 PRECEDING AND 5 FOLLOWING) FROM d.t ORDER BY x', 'SELECT x, SUM(x) OVER (PARTITION BY g ORDER BY v NULLS FIRST RANGE BETWEEN 10 PRECEDING AND 5 FOLLOWING) FROM t ORDER BY x'],
  ['SELECT x, AVG(v) OVER (PARTITION BY g ORDER BY v), COUNT(*) OVER (PARTITION BY g ORDER BY v DESC) FROM d.t ORDER BY x', 'SELECT x, AVG(v) OVER (PARTITION BY g ORDER BY v NULLS FIRST), COUNT(*) OVER (PARTITION BY g ORDER BY v DESC NULLS LAST) FROM t ORDER BY x'],
  ['SELECT x, LAG(v, 2) OVER (PARTITION BY g ORDER BY x), LEAD(v, 1, -1) OVER (ORDER BY x), NTH_VALUE(v, 3) OVER (PARTITION BY g ORDER BY x ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM d.t ORDER BY x', 'SELECT x, LAG(v, 2) OVER (PARTITION BY g ORDER BY x), LEAD(v, 1, -1) OVER (ORDER BY x), NTH_VALUE(v, 3) OVER (PARTITION BY g ORDER BY x ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM t ORDER BY x'],
  ['SELECT x, NTILE(7) OVER (PARTITION BY g ORDER BY x), CUME_DIST() OVER (PARTITION BY g ORDER BY v) FROM d.t ORDER BY x', 'SELECT x, NTILE(7) OVER (PARTITION BY g ORDER BY x), CUME_DIST() OVER (PARTITION BY g ORDER BY v NULLS FIRST) FROM t ORDER BY x'],
  ['SELECT a.x AS ax, b.x AS bx FROM d.t a JOIN d.t b ON a.v = b.g AND a.x < b.x ORDER BY 1, 2', 'SELECT a.x, b.x FROM t a JOIN t b ON a.v = b.g AND a.x < b.x ORDER BY 1, 2'],
  ['SELECT a.x AS ax, b.x AS bx FROM d.t a LEFT JOIN d.t b ON a.v = b.x + 200 ORDER BY 1, 2', 'SELECT a.x, b.x FROM t a LEFT JOIN t b ON a.v = b.x + 200 ORDER BY 1 NULLS FIRST, 2 NULLS FIRST'],
  ['SELECT COUNT(*) FROM d.t a JOIN d.t b ON a.g = b.g', 'SELECT COUNT(*) FROM t a JOIN t b ON a.g = b.g'],
  ['SELECT v FROM d.t ORDER BY v DESC, x LIMIT 7', 'SELECT v FROM t ORDER BY v DESC NULLS LAST, x LIMIT 7'],
  ['SELECT x FROM d.t WHERE v IN (SELECT g FROM d.t) ORDER BY x', 'SELECT x FROM t WHERE v IN (SELECT g FROM t) ORDER BY x'],
  ['SELECT x FROM d.t a WHERE EXISTS (SELECT 1 FROM d.t b WHERE b.v = a.x + 1) ORDER BY x', 'SELECT x FROM t a WHERE EXISTS (SELECT 1 FROM t b WHERE b.v = a.x + 1) ORDER BY x'],
  ['SELECT x, (SELECT MAX(b.x) FROM d.t b WHERE b.g = a.g AND b.x < a.x) FROM d.t a ORDER BY x', 'SELECT x, (SELECT MAX(b.x) FROM t b WHERE b.g = a.g AND b.x < a.x) FROM t a ORDER BY x'],
  ['SELECT g, v FROM d.t INTERSECT DISTINCT SELECT g, v FROM d.t WHERE x > 100 ORDER BY 1, 2', 'SELECT g, v FROM t INTERSECT SELECT g, v FROM t WHERE x > 100 ORDER BY 1 NULLS FIRST, 2 NULLS FIRST'],
  ['SELECT g, COUNT(*) FROM (SELECT g, v FROM d.t EXCEPT DISTINCT SELECT g, v FROM d.t WHERE x > 100) GROUP BY g ORDER BY g', 'SELECT g, COUNT(*) FROM (SELECT g, v FROM t EXCEPT SELECT g, v FROM t WHERE x > 100) GROUP BY g ORDER BY g'],
  ['SELECT g, PERCENTILE_CONT(v, 0.3) OVER (PARTITION BY g) p FROM d.t QUALIFY ROW_NUMBER() OVER (PARTITION BY g ORDER BY x) = 1 ORDER BY g', 'SELECT g, quantile_cont(v, 0.3) OVER (PARTITION BY g) p FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY g ORDER BY x) = 1 ORDER BY g'],
  ['SELECT a.x AS ax, b.x AS bx FROM d.t a FULL JOIN d.t b ON a.v = b.x + 250 ORDER BY 1, 2', 'SELECT a.x AS ax, b.x AS bx FROM t a FULL JOIN t b ON a.v = b.x + 250 ORDER BY 1 NULLS FIRST, 2 NULLS FIRST'],
  ['SELECT a.x AS ax, b.x AS bx FROM d.t a RIGHT JOIN d.t b ON a.v = b.x AND a.g > 2 ORDER BY 2, 1', 'SELECT a.x AS ax, b.x AS bx FROM t a RIGHT JOIN t b ON a.v = b.x AND a.g > 2 ORDER BY 2 NULLS FIRST, 1 NULLS FIRST'],
  ['SELECT x FROM d.t a WHERE NOT EXISTS (SELECT 1 FROM d.t b WHERE b.v = a.x) ORDER BY x', 'SELECT x FROM t a WHERE NOT EXISTS (SELECT 1 FROM t b WHERE b.v = a.x) ORDER BY x'],
  ['SELECT COUNT(*) FROM d.t WHERE x NOT IN (SELECT v FROM d.t)', 'SELECT COUNT(*) FROM t WHERE x NOT IN (SELECT v FROM t)'],
  ['SELECT COUNT(*) FROM d.t WHERE x NOT IN (SELECT v FROM d.t WHERE v IS NOT NULL)', 'SELECT COUNT(*) FROM t WHERE x NOT IN (SELECT v FROM t WHERE v IS NOT NULL)'],
  ['SELECT g, v FROM d.t WHERE x < 20 UNION DISTINCT SELECT g, v FROM d.t WHERE x > 280 ORDER BY 1, 2', 'SELECT g, v FROM t WHERE x < 20 UNION SELECT g, v FROM t WHERE x > 280 ORDER BY 1 NULLS FIRST, 2 NULLS FIRST'],
  ['SELECT g, MOD(x, 2) AS h, SUM(v) FROM d.t GROUP BY ROLLUP(g, h) ORDER BY 1, 2', 'SELECT g, x % 2 AS h, SUM(v) FROM t GROUP BY ROLLUP(g, h) ORDER BY 1 NULLS FIRST, 2 NULLS FIRST'],
  ['SELECT x, FIRST_VALUE(v IGNORE NULLS) OVER (ORDER BY x DESC ROWS BETWEEN 3 PRECEDING AND CURRENT ROW), MIN(v) OVER (PARTITION BY g ORDER BY x ROWS BETWEEN 1 FOLLOWING AND 4 FOLLOWING) FROM d.t ORDER BY x', 'SELECT x, FIRST_VALUE(v IGNORE NULLS) OVER (ORDER BY x DESC ROWS BETWEEN 3 PRECEDING AND CURRENT ROW), MIN(v) OVER (PARTITION BY g ORDER BY x ROWS BETWEEN 1 FOLLOWING AND 4 FOLLOWING) FROM t ORDER BY x'],
  ['SELECT g, STRING_AGG(CAST(v AS STRING), ",") FROM (SELECT g, v FROM d.t WHERE x < 40 ORDER BY x) GROUP BY g ORDER BY g', 'SELECT g, STRING_AGG(CAST(v AS VARCHAR), \',\' ORDER BY x) FROM t WHERE x < 40 GROUP BY g ORDER BY g'],
  ['SELECT g, ARRAY_TO_STRING(ARRAY_AGG(CAST(x AS STRING) ORDER BY v DESC, x LIMIT 3), "-") FROM d.t WHERE v IS NOT NULL GROUP BY g ORDER BY g', 'SELECT g, array_to_string(list(CAST(x AS VARCHAR) ORDER BY v DESC, x)[1:3], \'-\') FROM t WHERE v IS NOT NULL GROUP BY g ORDER BY g'],
  ['SELECT x, SUM(v) OVER (ORDER BY g RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) FROM d.t ORDER BY x', 'SELECT x, SUM(v) OVER (ORDER BY g RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) FROM t ORDER BY x'],
  // A DISTINCT window aggregate takes no window ORDER BY (hence no frame) in GoogleSQL.
  ['SELECT x, COUNT(DISTINCT v) OVER (PARTITION BY g) FROM d.t ORDER BY x', 'SELECT x, COUNT(DISTINCT v) OVER (PARTITION BY g) FROM t ORDER BY x'],
  ['SELECT x, STRING_AGG(CAST(x AS STRING), ",") OVER (PARTITION BY g ORDER BY v) FROM d.t WHERE x < 60 ORDER BY x', 'SELECT x, STRING_AGG(CAST(x AS VARCHAR), \',\') OVER (PARTITION BY g ORDER BY v NULLS FIRST) FROM t WHERE x < 60 ORDER BY x'],
  ['SELECT x, SUM(CAST(v AS NUMERIC)) OVER (PARTITION BY g ORDER BY x) FROM d.t ORDER BY x', 'SELECT x, SUM(CAST(v AS DECIMAL(38, 9))) OVER (PARTITION BY g ORDER BY x) FROM t ORDER BY x'],
];
const norm = (v: unknown): string => (v === null || v === undefined ? 'null' : typeof v === 'number' ? String(Math.round(v * 1e9) / 1e9) : String(v).replace(/\.0+$/, '').replace(/^(-?\d+\.\d*?)0+$/, '$1'));

describe('executor vs DuckDB', () => {
  for (const [bq, dk] of qs) {
    it(bq, async () => {
      const ours = (rowsOf(await run(h, bq, o)) as unknown[][]).map((r) => r.map((x) => norm(x === null ? null : Number.isNaN(Number(x)) ? x : Number(x))).join('|'));
      const theirs = (await duck.runAndReadAll(dk)).getRows().map((r) => r.map((x) => norm(x === null ? null : typeof x === "string" ? x : Number(x))).join('|'));
      expect(ours).toEqual(theirs);
    });
  }
});
