// INTERVAL as GROUP BY / DISTINCT / COUNT(DISTINCT) / JOIN / PARTITION BY /
// set operation keys: over a stored table (keys held as month-day-micro
// parts, hashed by their normalized key and compared by parts) the answer is
// the one the same query gives over the same values as literals (boxed
// Intervals), the stored run boxes no interval, and keys of both kinds meet
// in one table. Values come from a small pool holding equal values in
// several forms (1 month = 30 days = 720 hours; parts of opposite signs), each
// part's extremes, keys past 2^53 microseconds and NULLs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { layoutBoxing } from '../../src/types/vector.js';
import { rng } from '../helpers/random-values.js';
import { openHarness, rowsOf, run, setupDataset, type Harness } from './harness.js';

const P = 'p';
let h: Harness;
let literal = '';
let literal2 = '';
const q = (sql: string) => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });

function pool(r: () => number): string[] {
  const out = [
    'INTERVAL 1 MONTH', 'INTERVAL 30 DAY', 'INTERVAL 720 HOUR', 'MAKE_INTERVAL(0, 1, -30, 720)', 'MAKE_INTERVAL(0, 2, -30, 0)',
    'INTERVAL 1 DAY', 'INTERVAL 24 HOUR', 'INTERVAL 86400 SECOND', 'INTERVAL 0 DAY', 'MAKE_INTERVAL(0, 0, 1, -24)',
    "INTERVAL '10000-0 3660000 87840000:0:0' YEAR TO SECOND", "INTERVAL '-10000-0 -3660000 -87840000:0:0' YEAR TO SECOND",
    "INTERVAL '0-0 0 87839999:59:59.999999' YEAR TO SECOND", "INTERVAL '0-0 0 -87839999:0:0.000001' YEAR TO SECOND",
    "INTERVAL '0-0 0 2501999:47:34.740993' YEAR TO SECOND", "INTERVAL '0-0 0 -2501999:47:34.740993' YEAR TO SECOND", "INTERVAL '0-0 0 2501999:47:34.740991' YEAR TO SECOND",
    'INTERVAL 1 MICROSECOND', 'INTERVAL -1 MICROSECOND', 'INTERVAL 3000 YEAR', 'MAKE_INTERVAL(0, 36000, 0, 0)',
  ];
  for (let k = 0; k < 25; k++) out.push(`MAKE_INTERVAL(${Math.floor(r() * 5) - 2}, ${Math.floor(r() * 25) - 12}, ${Math.floor(r() * 61) - 30}, ${Math.floor(r() * 49) - 24}, ${Math.floor(r() * 3) * 30}, 0)`);
  return out;
}

function rows(r: () => number, n: number): string {
  const ip = pool(r);
  const pick = () => ip[Math.floor(r() * ip.length)]!;
  const out: string[] = [];
  for (let id = 0; id < n; id++) out.push(`STRUCT(${id} AS id, ${r() < 0.08 ? 'CAST(NULL AS INTERVAL)' : pick()} AS i, ${r() < 0.08 ? 'CAST(NULL AS INTERVAL)' : pick()} AS j, ${Math.floor(r() * 4)} AS g)`);
  return out.join(',\n');
}

beforeAll(async () => {
  h = await openHarness();
  await setupDataset(h, P, 'd');
  const r = rng(1907);
  literal = rows(r, 2000);
  literal2 = rows(r, 300);
  await q(`CREATE TABLE t AS SELECT * FROM UNNEST([${literal}])`);
  await q(`CREATE TABLE u AS SELECT * FROM UNNEST([${literal2}])`);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

/** {T} and {U}: the stored tables or the same rows as literals. */
const QUERIES = [
  'SELECT i, COUNT(*), SUM(g) FROM {T} GROUP BY i ORDER BY i',
  'SELECT i, j, g, COUNT(*) FROM {T} GROUP BY i, j, g ORDER BY i, j, g',
  'SELECT COUNT(DISTINCT i), COUNT(DISTINCT j) FROM {T}',
  'SELECT g, COUNT(DISTINCT i) FROM {T} GROUP BY g ORDER BY g',
  'SELECT DISTINCT i FROM {T} ORDER BY i',
  'SELECT COUNT(*), SUM(t.id), SUM(u.id) FROM {T} t JOIN {U} u ON t.i = u.i',
  'SELECT COUNT(*), COUNT(u.id) FROM {T} t LEFT JOIN {U} u ON t.i = u.j AND t.g = u.g',
  'SELECT COUNT(*), SUM(id) FROM {T} t WHERE i IN (SELECT j FROM {U})',
  'SELECT i, COUNT(*) FROM (SELECT i FROM {T} INTERSECT DISTINCT SELECT i FROM {U}) GROUP BY i ORDER BY i',
  'SELECT SUM(rn * id), SUM(c) FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY i ORDER BY id) rn, COUNT(*) OVER (PARTITION BY j) c FROM {T})',
  // Intervals carried through a window's offsets (LAG, NTH_VALUE) and a sort's materialized input.
  'SELECT id, LAG(i) OVER (PARTITION BY g ORDER BY id), NTH_VALUE(j, 2) OVER (ORDER BY id) FROM {T} ORDER BY id',
  'SELECT id, i, j FROM (SELECT 1 AS s, * FROM {T} UNION ALL SELECT 2, * FROM {U}) ORDER BY g DESC, id, s LIMIT 50',
];

describe('INTERVAL keys over stored parts', () => {
  for (const [k, sql] of QUERIES.entries()) {
    it(`query ${k + 1}: the literal values' answer, no interval boxed`, async () => {
      const lit = `WITH t0 AS (SELECT * FROM UNNEST([${literal}])), u0 AS (SELECT * FROM UNNEST([${literal2}])) `;
      const want = rowsOf(await q(lit + sql.replaceAll('{T}', 't0').replaceAll('{U}', 'u0')));
      const before = layoutBoxing.interval;
      const got = await q(sql.replaceAll('{T}', 'd.t').replaceAll('{U}', 'd.u'));
      const boxed = layoutBoxing.interval - before;
      expect(rowsOf(got)).toEqual(want);
      expect(boxed).toBe(0);
    });
  }

  it('stored (parts) and literal (boxed) keys of one value group together', async () => {
    const lit = `WITH t0 AS (SELECT * FROM UNNEST([${literal}])) `;
    // Counts only: a group's key is its first row's form, which the interleaving of the two inputs decides.
    const mixed = rowsOf(await q(lit + 'SELECT c FROM (SELECT i, j, COUNT(*) c FROM (SELECT i, j FROM d.t UNION ALL SELECT i, j FROM t0) GROUP BY i, j) ORDER BY c'));
    const single = rowsOf(await q('SELECT c FROM (SELECT i, j, 2 * COUNT(*) c FROM d.t GROUP BY i, j) ORDER BY c'));
    expect(mixed).toEqual(single);
    const before = layoutBoxing.interval;
    const both = rowsOf(await q(lit + 'SELECT COUNT(*) FROM d.t t JOIN t0 ON t.i = t0.i'));
    const swapped = rowsOf(await q(lit + 'SELECT COUNT(*) FROM t0 JOIN d.t t ON t.i = t0.i'));
    // Stored parts met by Interval values: compared by the values' fields, the stored side (build or probe) never boxed.
    expect(layoutBoxing.interval - before).toBe(0);
    const self = rowsOf(await q('SELECT COUNT(*) FROM d.t t JOIN d.t t2 ON t.i = t2.i'));
    expect(both).toEqual(self);
    expect(swapped).toEqual(self);
    const groups = rowsOf(await q('SELECT COUNT(*) FROM (SELECT DISTINCT i FROM d.t)'));
    // Fewer groups than texts: equal values in several forms met.
    const texts = rowsOf(await q('SELECT COUNT(DISTINCT CAST(i AS STRING)) FROM d.t'));
    expect(Number((groups[0] as unknown[])[0])).toBeLessThan(Number((texts[0] as unknown[])[0]));
  });
});

/** EXTRACT of every part and JUSTIFY_* (on the parts, interval-range-kernels.ts); rows whose justified value would overflow are left out (query 3 checks the error). */
const FUNCTIONS = [
  'SELECT id, EXTRACT(YEAR FROM i), EXTRACT(MONTH FROM i), EXTRACT(DAY FROM i), EXTRACT(HOUR FROM i), EXTRACT(MINUTE FROM i), EXTRACT(SECOND FROM i), EXTRACT(MILLISECOND FROM i), EXTRACT(MICROSECOND FROM i) FROM {T} ORDER BY id',
  'SELECT id, JUSTIFY_HOURS(i), JUSTIFY_DAYS(i), JUSTIFY_INTERVAL(i), JUSTIFY_INTERVAL(j) FROM {T} WHERE (i IS NULL OR (ABS(EXTRACT(YEAR FROM i)) < 5000 AND ABS(EXTRACT(DAY FROM i)) < 100000 AND ABS(EXTRACT(HOUR FROM i)) < 1000000)) AND (j IS NULL OR (ABS(EXTRACT(YEAR FROM j)) < 5000 AND ABS(EXTRACT(DAY FROM j)) < 100000 AND ABS(EXTRACT(HOUR FROM j)) < 1000000)) ORDER BY id',
];

describe('INTERVAL functions over stored parts', () => {
  for (const [k, sql] of FUNCTIONS.entries()) {
    it(`query ${k + 1}: the literal values' answer, no interval boxed`, async () => {
      const want = rowsOf(await q(`WITH t0 AS (SELECT * FROM UNNEST([${literal}])) ${sql.replaceAll('{T}', 't0')}`));
      const before = layoutBoxing.interval;
      const got = await q(sql.replaceAll('{T}', 'd.t'));
      expect(rowsOf(got)).toEqual(want);
      expect(layoutBoxing.interval - before).toBe(0);
    });
  }

  it('query 3: an overflowing JUSTIFY raises the row kernel\'s error', async () => {
    const sql = 'SELECT JUSTIFY_HOURS(i) FROM {T}';
    const err = (p: Promise<unknown>) => p.then(() => 'no error', (e: Error) => e.message);
    const want = await err(q(`WITH t0 AS (SELECT * FROM UNNEST([${literal}])) ${sql.replaceAll('{T}', 't0')}`));
    expect(want).toMatch(/Interval field days '-?\d+' is out of range/);
    expect(await err(q(sql.replaceAll('{T}', 'd.t')))).toBe(want);
  });
});
