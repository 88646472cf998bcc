// Correlated subqueries over the outer row's arrays run once per outer batch
// (src/executor/subquery-batch.ts). Every query must answer value for value
// (or fail with the same message) as the per-row path, over the stored table
// (arrays as Arrow views) and over the same rows given as a literal (boxed
// arrays). Random data: empty arrays, NULL arrays and elements (made in the
// query: a table holds neither), NULL fields. The counters show the lifted runs ran no
// per-row subquery and boxed no stored row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subqueryCounters } from '../../src/executor/expr.js';
import { batchedCounters, batchedOptions } from '../../src/executor/subquery-batch.js';
import { nestedBoxing } from '../../src/types/vector.js';
import { errorMessage, openHarness, run, wireRows, type Harness } from './harness.js';
import { rng } from '../helpers/random-values.js';

const P = 'cu';
let h: Harness;
const q = (sql: string) => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });

async function answer(sql: string): Promise<unknown> {
  try {
    return wireRows(await q(sql));
  } catch (e) {
    return { error: errorMessage(e) };
  }
}


const E = 'STRUCT<y INT64, z ARRAY<INT64>, w STRING>';

function randomRow(r: () => number, k: number): string {
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(r() * xs.length)]!;
  const len = () => pick([0, 0, 1, 2, 3, 4, 6]);
  const int = () => pick(['0', '-3', '1', '2', '3', '7', '3', String(Math.floor(r() * 100))]);
  const maybe = (s: string, type: string) => (r() < 0.15 ? `CAST(NULL AS ${type})` : s);
  const list = (f: () => string) => Array.from({ length: len() }, f).join(', ');
  const z = () => `ARRAY<INT64>[${list(int)}]`;
  const str = () => pick(["''", "'s0'", "'s1'", "'s2'", "'é✓'"]);
  const e = () => `${E}(${maybe(int(), 'INT64')}, ${z()}, ${maybe(str(), 'STRING')})`;
  return `STRUCT(${k} AS k, ${int()} AS g, ${z()} AS a, ARRAY<STRING>[${list(str)}] AS b, ARRAY<${E}>[${list(e)}] AS c)`;
}

const ROWS = 400;
const REPEAT = 15; // 6,000 rows: more than one outer batch
let literal = '';
const source = (from: string) => `SELECT r.k * 100 + rep AS k, r.g, r.a, r.b, r.c FROM ${from} AS r, UNNEST(GENERATE_ARRAY(1, ${REPEAT})) AS rep`;
const stored = (sql: string) => sql.replaceAll('{T}', 'd.t');
const boxed = (sql: string) => `WITH t0 AS (${source(`UNNEST([${literal}])`)}) ${sql.replaceAll('{T}', 't0')}`;

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  const r = rng(23);
  literal = Array.from({ length: ROWS }, (_, k) => randomRow(r, k)).join(',\n');
  await q(`CREATE TABLE d.lit AS SELECT * FROM UNNEST([${literal}])`);
  await q(`CREATE TABLE d.t AS ${source('d.lit')} ORDER BY k`);
}, 120_000);

afterAll(async () => {
  batchedOptions.enabled = true;
  await h?.close();
});

const ARR = '(IF(MOD(k, 7) = 0, NULL, a))'; // NULL arrays beside empty ones

/** Lifted shapes: one run per outer batch, no per-row run. */
const LIFTED = [
  'SELECT k, (SELECT SUM(x) FROM UNNEST(a) AS x), (SELECT COUNT(*) FROM UNNEST(a)), (SELECT COUNT(x) FROM UNNEST(a) x) FROM {T} AS t ORDER BY k',
  `SELECT k, (SELECT SUM(x) FROM UNNEST${ARR} x), (SELECT COUNT(*) FROM UNNEST${ARR} x), (SELECT AVG(x) FROM UNNEST${ARR} x WITH OFFSET o WHERE o > 0) FROM {T} AS t ORDER BY k`,
  'SELECT k, (SELECT COUNT(*) FROM UNNEST(t.c) e WHERE e.y > 2), (SELECT MAX(e.w) FROM UNNEST(c) e WHERE e.y IS NOT NULL) FROM {T} AS t ORDER BY k',
  "SELECT k, EXISTS(SELECT 1 FROM UNNEST(b) s WHERE s = 's1'), NOT EXISTS(SELECT * FROM UNNEST(a) x WHERE x > t.g) FROM {T} AS t ORDER BY k",
  `SELECT k, ARRAY(SELECT x * 2 FROM UNNEST${ARR} x ORDER BY x DESC), ARRAY(SELECT x FROM UNNEST(a) x WITH OFFSET o WHERE MOD(o, 2) = 0) FROM {T} AS t ORDER BY k`,
  'SELECT k, (SELECT AS STRUCT MIN(x) AS mn, MAX(x) AS mx, COUNT(x) AS n FROM UNNEST(a) x) FROM {T} AS t ORDER BY k',
  "SELECT k, (SELECT STRING_AGG(s, ',' ORDER BY s) FROM UNNEST(b) s), (SELECT STRING_AGG(e.w, '|') FROM UNNEST(c) AS e) FROM {T} AS t ORDER BY k",
  'SELECT k, (SELECT x FROM UNNEST(a) x WITH OFFSET o ORDER BY x DESC, o LIMIT 1), (SELECT o FROM UNNEST(a) x WITH OFFSET o ORDER BY x, o DESC LIMIT 1 OFFSET 1) FROM {T} AS t ORDER BY k',
  'SELECT k, ARRAY(SELECT AS STRUCT e.y, o FROM UNNEST(c) e WITH OFFSET o WHERE e.y IS NOT NULL ORDER BY o DESC LIMIT 2 OFFSET 1) FROM {T} AS t ORDER BY k',
  'SELECT k, (SELECT SUM(z) FROM UNNEST(c) e, UNNEST(e.z) z WHERE z > t.g), (SELECT COUNT(*) FROM UNNEST(c) e LEFT JOIN UNNEST(e.z) z) FROM {T} AS t ORDER BY k',
  'SELECT k, (SELECT COUNT(*) FROM UNNEST(c) e LEFT JOIN UNNEST(e.z) z ON z > t.g), (SELECT SUM(IF(o > 0, a[OFFSET(o)], t.g)) FROM UNNEST(a) WITH OFFSET o) FROM {T} AS t ORDER BY k',
  'SELECT k, (SELECT ARRAY_LENGTH(ARRAY_FILTER(e.z, v -> v > t.g + o)) FROM UNNEST(c) e WITH OFFSET o ORDER BY o LIMIT 1), (SELECT COUNT(x) FROM UNNEST(ARRAY_CONCAT(a, [NULL])) x) FROM {T} AS t ORDER BY k',
  'SELECT k, (SELECT SUM((SELECT SUM(z) + t.g FROM UNNEST(e.z) z)) FROM UNNEST(c) e) FROM {T} AS t ORDER BY k',
  'SELECT k, (SELECT COUNT(DISTINCT x) FROM UNNEST(ARRAY_CONCAT(a, a)) x), (SELECT ARRAY_AGG(x ORDER BY x LIMIT 2) FROM UNNEST(a) x WHERE x > 0) FROM {T} AS t ORDER BY k',
  'SELECT k, (SELECT x FROM UNNEST(a) x GROUP BY x ORDER BY COUNT(*) DESC, x LIMIT 1), (SELECT COUNT(*) FROM (SELECT x FROM UNNEST(a) x GROUP BY x HAVING COUNT(*) > 1)) FROM {T} AS t ORDER BY k',
  'SELECT k FROM {T} AS t WHERE EXISTS(SELECT 1 FROM UNNEST(a) x WHERE x > 50) AND (SELECT COUNT(*) FROM UNNEST(b)) >= 2 ORDER BY k',
  'SELECT k, CASE WHEN MOD(k, 2) = 0 THEN (SELECT SUM(x) FROM UNNEST(a) x) ELSE (SELECT MIN(e.y) FROM UNNEST(c) e) END FROM {T} AS t ORDER BY k',
  'SELECT g, SUM((SELECT SUM(x) FROM UNNEST(a) x)), COUNTIF(EXISTS(SELECT 1 FROM UNNEST(c) e WHERE e.w IS NULL)) FROM {T} AS t GROUP BY g ORDER BY g',
  'SELECT k, (SELECT SUM(x * y) FROM UNNEST(a) x WITH OFFSET o JOIN UNNEST(a) y WITH OFFSET p ON o = p) FROM {T} AS t ORDER BY k LIMIT 3',
  'SELECT k, (SELECT e.y FROM UNNEST(c) e WHERE e.w = \'s0\' LIMIT 1), (SELECT 1 + t.g) FROM {T} AS t ORDER BY k',
];

/** Shapes that fail (the same message either way) or keep the per-row path. */
const OTHERS = [
  'SELECT k, (SELECT x FROM UNNEST(a) x) FROM {T} AS t ORDER BY k',
  'SELECT k, ARRAY(SELECT e.y FROM UNNEST(c) e) FROM {T} AS t ORDER BY k',
  'SELECT k, (SELECT MAX(rn) FROM (SELECT ROW_NUMBER() OVER () AS rn FROM UNNEST(a))) FROM {T} AS t ORDER BY k',
  'SELECT k, (SELECT SUM(x) FROM (SELECT x FROM UNNEST(a) x UNION ALL SELECT x FROM UNNEST(a) x)) FROM {T} AS t ORDER BY k',
  'SELECT k, 3 IN (SELECT x FROM UNNEST(a) x) FROM {T} AS t ORDER BY k',
];

async function perRow(sql: string): Promise<unknown> {
  batchedOptions.enabled = false;
  try {
    return await answer(sql);
  } finally {
    batchedOptions.enabled = true;
  }
}

describe('correlated UNNEST subqueries run once per outer batch', () => {
  it('has its data', async () => {
    expect(await answer('SELECT COUNT(*) FROM d.t')).toEqual([{ f: [{ v: String(ROWS * REPEAT) }] }]);
  });

  it.each(LIFTED)('%s', async (sql) => {
    const want = await perRow(stored(sql));
    expect(want, 'the per-row answers').not.toHaveProperty('error');
    const runs = subqueryCounters.runs;
    const lifted = batchedCounters.runs;
    const boxing = nestedBoxing.rows;
    const got = await answer(stored(sql));
    const perRowRuns = subqueryCounters.runs - runs;
    const boxedRows = nestedBoxing.rows - boxing;
    expect(got).toEqual(want);
    expect(batchedCounters.runs - lifted).toBeGreaterThan(0);
    // `(SELECT 1 + t.g)` reads no array: it keeps the per-row path (one run per value of g).
    if (!sql.includes('(SELECT 1 + t.g)')) expect(perRowRuns).toBe(0);
    // Results that are arrays are boxed for the REST rows; nothing else is.
    // (So do kernels that know no layout: IF(.., NULL, a) scatters rows of values, ARRAY_FILTER, concatenation with a literal.)
    if (!/ARRAY\(|IF\(|ARRAY_FILTER|\[NULL\]/.test(sql)) expect(boxedRows).toBe(0);
    expect(await answer(boxed(sql))).toEqual(want);
  });

  it.each(OTHERS)('%s', async (sql) => {
    const want = await perRow(stored(sql));
    expect(await answer(stored(sql))).toEqual(want);
    expect(await answer(boxed(sql))).toEqual(want);
  });

  it('the errors are the per-row path\'s', async () => {
    expect(await answer(stored(OTHERS[0]!))).toEqual({ error: expect.stringMatching(/Scalar subquery produced more than one element/) });
    expect(await answer(stored(OTHERS[1]!))).toEqual({ error: expect.stringMatching(/Array cannot have a null element/) });
  });
});

/** Array functions over the stored layout answer as the boxed kernels do over the literal's rows, boxing nothing. */
const ARRAY_FNS = [
  'SELECT k, ARRAY_LENGTH(ARRAY_SLICE(a, 1, 3)), ARRAY_SLICE(a, -2, -1)[SAFE_OFFSET(0)], ARRAY_TO_STRING(ARRAY_SLICE(b, 0, 0), ","), ARRAY_LENGTH(ARRAY_SLICE(c, 2, 1)), ARRAY_SLICE(c, -9, 9)[SAFE_OFFSET(1)].w, ARRAY_LENGTH(ARRAY_SLICE(a, 9223372036854775807, -1)) FROM {T} AS t ORDER BY k',
  'SELECT k, ARRAY_TO_STRING(ARRAY_FIRST_N(b, 2), "|"), ARRAY_LAST_N(a, 1)[SAFE_OFFSET(0)], ARRAY_LENGTH(ARRAY_REMOVE_FIRST_N(a, 1)), ARRAY_REMOVE_LAST_N(c, 2)[SAFE_OFFSET(0)].y, ARRAY_LENGTH(ARRAY_FIRST_N(a, 100)) FROM {T} AS t ORDER BY k',
  "SELECT k, ARRAY_INCLUDES(a, 3), ARRAY_INCLUDES(b, 's1'), ARRAY_INCLUDES(a, t.g), ARRAY_INCLUDES(a, IF(MOD(k, 5) = 0, NULL, 7)), ARRAY_INCLUDES(a, 9007199254740993) FROM {T} AS t ORDER BY k",
  "SELECT k, ARRAY_INCLUDES_ANY(b, ['s0', 'x']), ARRAY_INCLUDES_ALL(a, [3, 7]), ARRAY_INCLUDES_ANY(a, [CAST(NULL AS INT64)]), ARRAY_INCLUDES_ALL(a, ARRAY_SLICE(a, 0, 1)), ARRAY_INCLUDES_ALL(b, ARRAY<STRING>[]) FROM {T} AS t ORDER BY k",
  'SELECT k, x, ARRAY_INCLUDES(a, x + 1), ARRAY_LENGTH(ARRAY_SLICE(b, 0, x)), ARRAY_INCLUDES_ANY(a, ARRAY_LAST_N(a, x)) FROM {T} AS t, UNNEST(a) AS x WHERE x BETWEEN 0 AND 5 ORDER BY k, x',
];
const ARRAY_FN_OTHERS = [
  'SELECT k, ARRAY_SLICE(a, 1, -1), ARRAY_FIRST_N(b, 1), ARRAY_REMOVE_LAST_N(c, 1) FROM {T} AS t ORDER BY k',
  `SELECT k, ARRAY_INCLUDES${ARR.slice(0, -1)}, 3), ARRAY_INCLUDES_ANY${ARR.slice(0, -1)}, [1, 2]), ARRAY_SLICE${ARR.slice(0, -1)}, 0, 1) FROM {T} AS t ORDER BY k`,
  'SELECT k, ARRAY_FIRST_N(a, IF(k > 500, -1, 1)) FROM {T} AS t ORDER BY k',
];

describe('ARRAY_SLICE, ARRAY_FIRST_N & co. and ARRAY_INCLUDES* on the layout', () => {
  it.each(ARRAY_FNS)('%s (no row boxed)', async (sql) => {
    const before = nestedBoxing.rows;
    const got = await answer(stored(sql));
    const boxedRows = nestedBoxing.rows - before;
    const want = await answer(boxed(sql));
    expect(want, 'the boxed answers').not.toHaveProperty('error');
    expect(got).toEqual(want);
    expect(boxedRows).toBe(0);
  });

  it.each(ARRAY_FN_OTHERS)('%s', async (sql) => {
    expect(await answer(stored(sql))).toEqual(await answer(boxed(sql)));
  });

  it('a negative n fails as in the boxed kernel', async () => {
    expect(await answer(stored(ARRAY_FN_OTHERS[2]!))).toEqual({ error: expect.stringMatching(/must not be negative/) });
  });
});
