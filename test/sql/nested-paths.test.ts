// ARRAY and STRUCT columns of a stored table reach the executor as views of
// their Arrow layout (Vector.nested). Every path that reads them on the view
// (subscripts, UNNEST chains and their owner columns, IN UNNEST,
// ARRAY_REVERSE / ARRAY_CONCAT / ARRAY_TO_STRING, field access) must answer
// value for value what the general path answers over boxed rows: the same
// data given as a literal (a CTE over UNNEST of an array of STRUCTs, never a
// view). Random data: empty arrays, NULL structs (so NULL arrays under them),
// NULL fields, depth 3. The boxing counter shows the stored runs kept the
// layout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parallelCounters, parallelOptions } from '../../src/executor/parallel/run.js';
import { setPoolSize } from '../../src/executor/parallel/pool.js';
import { nestedBoxing } from '../../src/types/vector.js';
import { errorMessage, openHarness, run, wireRows, type Harness } from './harness.js';
import { rng } from '../helpers/random-values.js';

const P = 'np';
const defaultMinRows = parallelOptions.minRows;
let h: Harness;
const q = (sql: string) => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });

async function answer(sql: string): Promise<unknown> {
  try {
    return wireRows(await q(sql));
  } catch (e) {
    return { error: errorMessage(e) };
  }
}


const Z = 'ARRAY<INT64>';
const YS = `STRUCT<y INT64, z ${Z}>`;
const S = `STRUCT<x INT64, ys ARRAY<${YS}>>`;
const C = `STRUCT<y INT64, z ${Z}, t STRING>`;

/** One random row as a STRUCT literal: arrays never NULL and without NULL elements (as a table holds them), structs and fields NULL at times. */
function randomRow(r: () => number, k: number): string {
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(r() * xs.length)]!;
  const len = () => pick([0, 0, 1, 2, 3, 5]);
  const int = () => pick(['0', '-3', '1', '2', '3', '7', '9007199254740993', String(Math.floor(r() * 1000))]);
  const maybe = (s: string, type: string) => (r() < 0.15 ? `CAST(NULL AS ${type})` : s);
  const list = (f: () => string) => Array.from({ length: len() }, f).join(', ');
  const z = () => `${Z}[${list(int)}]`;
  const str = () => pick(["''", "'s0'", "'s1'", "'s2'", "'é✓'", "'a,b'"]);
  const ys = () => `${YS}(${maybe(int(), 'INT64')}, ${z()})`;
  const s = maybe(`${S}(${maybe(int(), 'INT64')}, ARRAY<${YS}>[${list(ys)}])`, S);
  const c = `ARRAY<${C}>[${list(() => `${C}(${maybe(int(), 'INT64')}, ${z()}, ${maybe(str(), 'STRING')})`)}]`;
  return `STRUCT(${k} AS k, ${z()} AS a, ARRAY<STRING>[${list(str)}] AS b, ${s} AS s, ${c} AS c)`;
}

const ROWS = 300;
const REPEAT = 20; // 6,000 rows: several batches, rows of one literal row repeated apart
let literal = '';
const source = (from: string) => `SELECT r.k * 100 + rep AS k, r.a, r.b, r.s, r.c FROM ${from} AS r, UNNEST(GENERATE_ARRAY(1, ${REPEAT})) AS rep`;

/** The query over the stored table (views) and over the literal (boxed rows). */
const stored = (sql: string) => sql.replaceAll('{T}', 'd.t');
const boxed = (sql: string) => `WITH t0 AS (${source(`UNNEST([${literal}])`)}) ${sql.replaceAll('{T}', 't0')}`;

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  const r = rng(19);
  literal = Array.from({ length: ROWS }, (_, k) => randomRow(r, k)).join(',\n');
  await q(`CREATE TABLE d.lit AS SELECT * FROM UNNEST([${literal}])`);
  await q(`CREATE TABLE d.t AS ${source('d.lit')} ORDER BY k`);
}, 120_000);

afterAll(async () => {
  setPoolSize(0);
  parallelOptions.minRows = defaultMinRows;
  parallelOptions.morselRows = 0;
  await h?.close();
});

/** Queries whose stored run must box no nested row. */
const VIEW_ONLY = [
  // Subscripts, all four forms and bare, on the column and on fields of NULL structs.
  'SELECT k, a[SAFE_OFFSET(0)], a[SAFE_OFFSET(2)], a[SAFE_ORDINAL(1)], a[SAFE_ORDINAL(5)], ARRAY_LENGTH(a), b[SAFE_OFFSET(1)] FROM {T} AS t ORDER BY k',
  'SELECT k, a[0], a[OFFSET(1)], a[ORDINAL(2)] FROM {T} AS t WHERE ARRAY_LENGTH(a) >= 2 ORDER BY k',
  'SELECT k, s.x, ARRAY_LENGTH(s.ys), s.ys[SAFE_OFFSET(0)].y, ARRAY_LENGTH(s.ys[SAFE_OFFSET(0)].z), s.ys[SAFE_OFFSET(1)].z[SAFE_OFFSET(0)] FROM {T} AS t ORDER BY k',
  'SELECT k, c[SAFE_OFFSET(0)].t, c[SAFE_ORDINAL(2)].y, ARRAY_LENGTH(c[SAFE_OFFSET(3)].z) FROM {T} AS t ORDER BY k',
  // UNNEST chains: the owners' nested columns carried as taken rows and read after.
  'SELECT k, x, o, y FROM {T} AS t, UNNEST(a) AS x WITH OFFSET o, UNNEST(b) AS y ORDER BY k, o, y',
  'SELECT k, e.y, e.t, z, oz, s.x, ARRAY_LENGTH(b), a[SAFE_OFFSET(0)], b[SAFE_ORDINAL(2)] FROM {T} AS t, t.c AS e, e.z AS z WITH OFFSET oz ORDER BY k, e.y, e.t, oz',
  'SELECT k, e.y AS ey, z, oz FROM {T} AS t, UNNEST(s.ys) AS e, UNNEST(e.z) AS z WITH OFFSET oz ORDER BY k, ey, oz, z',
  'SELECT COUNT(*), SUM(z) FROM {T} AS t, UNNEST(c[SAFE_OFFSET(1)].z) AS z',
  'SELECT k, x, xx FROM {T} AS t, UNNEST(a) AS x, UNNEST(a) AS xx WHERE x < xx ORDER BY k, x, xx',
  'SELECT k, z FROM {T} AS t LEFT JOIN UNNEST(s.ys) AS y LEFT JOIN UNNEST(y.z) AS z ORDER BY k, z',
  // IN UNNEST, on the column and on carried owner columns; NULL probes.
  "SELECT k, 3 IN UNNEST(a), IF(MOD(k, 7) = 0, NULL, MOD(k, 4)) IN UNNEST(a), 's1' IN UNNEST(b), CAST(NULL AS STRING) IN UNNEST(b) FROM {T} AS t ORDER BY k",
  "SELECT k, x FROM {T} AS t, UNNEST(a) AS x WHERE 's0' IN UNNEST(b) AND x IN UNNEST(s.ys[SAFE_OFFSET(0)].z) ORDER BY k, x",
  // Array functions whose result is read again.
  "SELECT k, ARRAY_TO_STRING(b, ','), ARRAY_TO_STRING(b, '|', 'N'), ARRAY_TO_STRING(b, CAST(NULL AS STRING)), ARRAY_LENGTH(ARRAY_REVERSE(a)), ARRAY_REVERSE(a)[SAFE_OFFSET(0)] FROM {T} AS t ORDER BY k",
  'SELECT k, ARRAY_LENGTH(ARRAY_CONCAT(a, s.ys[SAFE_OFFSET(0)].z, a)), ARRAY_CONCAT(a, c[SAFE_OFFSET(0)].z)[SAFE_OFFSET(2)] FROM {T} AS t ORDER BY k',
  "SELECT k, x, ARRAY_TO_STRING(ARRAY_REVERSE(b), '+') FROM {T} AS t, UNNEST(a) AS x ORDER BY k, x",
  'SELECT k, z FROM {T} AS t, UNNEST(ARRAY_CONCAT(ARRAY_REVERSE(a), c[SAFE_OFFSET(0)].z)) AS z WITH OFFSET o ORDER BY k, o',
  "SELECT k, ARRAY_FIRST(a), ARRAY_LAST(a), ARRAY_LAST(b), ARRAY_FIRST(c).t, ARRAY_LENGTH(ARRAY_LAST(c).z) FROM {T} AS t WHERE ARRAY_LENGTH(a) > 0 AND ARRAY_LENGTH(b) > 0 AND ARRAY_LENGTH(c) > 0 ORDER BY k",
  'SELECT k, x, ARRAY_FIRST(s.ys).y, ARRAY_LAST(ARRAY_LAST(s.ys).z) FROM {T} AS t, UNNEST(a) AS x WHERE ARRAY_LENGTH(s.ys) > 0 AND ARRAY_LENGTH(ARRAY_LAST(s.ys).z) > 0 ORDER BY k, x',
];

/** Queries that give nested values back (boxed at the end, as the REST rows need them) or fail. */
const OTHERS = [
  'SELECT k, a, s, c FROM {T} AS t WHERE MOD(k, 3) = 0 ORDER BY k',
  'SELECT k, x, a, b, s FROM {T} AS t, UNNEST(a) AS x ORDER BY k, x LIMIT 500',
  'SELECT k, ARRAY_REVERSE(a), ARRAY_CONCAT(a, a), ARRAY_REVERSE(c), ARRAY_CONCAT(s.ys, s.ys) FROM {T} AS t ORDER BY k',
  'SELECT k, e, y FROM {T} AS t, t.c AS e, UNNEST(s.ys) AS y ORDER BY k, e.y, e.t, y.y LIMIT 800',
  'SELECT TO_JSON_STRING(s), COUNT(*) FROM {T} AS t GROUP BY 1 ORDER BY 1',
  'SELECT k, a[OFFSET(2)] FROM {T} AS t ORDER BY k',
  'SELECT k, c[ORDINAL(1)].z[OFFSET(0)] FROM {T} AS t ORDER BY k',
  'SELECT k, ARRAY_FIRST(a) FROM {T} AS t ORDER BY k',
  'SELECT k, ARRAY_LAST(s.ys).y FROM {T} AS t WHERE s IS NULL OR ARRAY_LENGTH(s.ys) > 0 ORDER BY k',
];

describe('nested paths over stored columns answer as over boxed rows', () => {
  it('has its data', async () => {
    expect(await answer('SELECT COUNT(*) FROM d.t')).toEqual([{ f: [{ v: String(ROWS * REPEAT) }] }]);
  });

  it.each(VIEW_ONLY)('%s (no row boxed)', async (sql) => {
    const before = nestedBoxing.rows;
    const got = await answer(stored(sql));
    const boxedRows = nestedBoxing.rows - before;
    const want = await answer(boxed(sql));
    expect(want, 'the reference answers').not.toHaveProperty('error');
    expect(got).toEqual(want);
    expect(boxedRows).toBe(0);
  });

  it.each(OTHERS)('%s', async (sql) => {
    expect(await answer(stored(sql))).toEqual(await answer(boxed(sql)));
  });

  it('the out-of-range errors are those of the general path', async () => {
    expect(await answer(stored(OTHERS[5]!))).toEqual({ error: expect.stringMatching(/Array index 2 is out of bounds/) });
  });
});

describe('nested columns in parallel runs', () => {
  const PARALLEL = [
    'SELECT MOD(k, 7) AS g, COUNT(*), SUM(ARRAY_LENGTH(a)), SUM(a[SAFE_OFFSET(0)]), SUM(s.x), SUM(s.ys[SAFE_OFFSET(0)].y), COUNTIF(3 IN UNNEST(a)), MAX(ARRAY_TO_STRING(b, ",")) FROM d.t GROUP BY g ORDER BY g',
    'SELECT k, a, s, c[SAFE_OFFSET(0)] FROM d.t WHERE ARRAY_LENGTH(c) > 1 ORDER BY s.x DESC, k LIMIT 20',
  ];
  it('answer as serial runs', async () => {
    setPoolSize(0);
    const serial = await Promise.all(PARALLEL.map(answer));
    setPoolSize(2);
    parallelOptions.minRows = 0;
    parallelOptions.morselRows = 700;
    for (const [i, sql] of PARALLEL.entries()) {
      const before = { ...parallelCounters };
      expect(await answer(sql), sql).toEqual(serial[i]);
      expect(parallelCounters.runs - before.runs, sql).toBeGreaterThan(0);
      expect(parallelCounters.fallbacks - before.fallbacks, sql).toBe(0);
    }
  });
});
