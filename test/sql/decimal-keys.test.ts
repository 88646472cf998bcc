// NUMERIC / BIGNUMERIC as GROUP BY / DISTINCT / COUNT(DISTINCT) / JOIN /
// PARTITION BY keys: over a stored table (keys held as decimal words, hashed
// and compared as words) the answer is the one the same query gives over the
// same values as literals (boxed Decimals), the stored run boxes no key, and
// keys of both kinds meet in one table (UNION ALL of stored and literal rows,
// joins of a stored side with a literal side). Values come from small pools
// so that keys repeat, in several textual forms of one value ('1.50', '1.5';
// '-0', '0.000'), with both types' extremes, BIGNUMERIC's minimum (which has
// no words: a column holding it is kept as values) and NULLs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decimalBoxing } from '../../src/types/vector.js';
import { BIGNUMERIC_MAX, NUMERIC_MAX, randomDecimalText, rng } from '../helpers/random-values.js';
import { openHarness, rowsOf, run, setupDataset, type Harness } from './harness.js';

const P = 'p';
let h: Harness;
let literal = '';
let literal2 = '';
const q = (sql: string) => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });

const BIG_MIN = '-578960446186580977117854925043439539266.34992332820282019728792003956564819968';

/** A pool of NUMERIC texts: equal values in different forms, extremes, random amounts and random values. */
function numericPool(r: () => number): string[] {
  const pool = ['1.50', '1.5', '1.500000000', '-0', '0', '0.000', '-0.0', NUMERIC_MAX, '-' + NUMERIC_MAX, '0.000000001', '-0.000000001', '100', '100.0', '1e2'];
  for (let k = 0; k < 30; k++) pool.push((Math.floor((r() - 0.3) * 1e6) / 100).toFixed(2));
  for (let k = 0; k < 10; k++) pool.push(randomDecimalText(r, 4));
  return pool;
}

function bigPool(r: () => number): string[] {
  const pool = ['2.5', '2.50', '-0', '0', BIGNUMERIC_MAX, '-' + BIGNUMERIC_MAX, '1e-38', '-1e-38', '12345678901234567890.123456789'];
  for (let k = 0; k < 20; k++) pool.push(randomDecimalText(r, 8));
  return pool;
}

function rows(r: () => number, n: number, withMin: boolean): string {
  const np = numericPool(r);
  const bp = bigPool(r);
  const pick = (xs: string[]) => xs[Math.floor(r() * xs.length)]!;
  const out: string[] = [];
  for (let id = 0; id < n; id++) {
    const p = r() < 0.08 ? 'NULL' : `NUMERIC '${pick(np)}'`;
    const b = r() < 0.08 ? 'NULL' : `BIGNUMERIC '${pick(bp)}'`;
    // m: like b, but one row holds BIGNUMERIC's minimum, which has no words.
    const m = withMin && id === 7 ? `BIGNUMERIC '${BIG_MIN}'` : r() < 0.08 ? 'NULL' : `BIGNUMERIC '${pick(bp)}'`;
    out.push(`STRUCT(${id} AS id, ${p} AS p, ${b} AS b, ${m} AS m, ${Math.floor(r() * 4)} AS g)`);
  }
  return out.join(',\n');
}

beforeAll(async () => {
  h = await openHarness();
  await setupDataset(h, P, 'd');
  const r = rng(4242);
  literal = rows(r, 3000, true);
  literal2 = rows(r, 400, false);
  await q(`CREATE TABLE t AS SELECT * FROM UNNEST([${literal}])`);
  await q(`CREATE TABLE u AS SELECT * FROM UNNEST([${literal2}])`);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

/** {T} and {U}: the stored tables or the same rows as literals; `words`: the stored run boxes no key. */
const QUERIES: { sql: string; words: boolean }[] = [
  { sql: 'SELECT p, COUNT(*), SUM(g) FROM {T} GROUP BY p ORDER BY p', words: true },
  { sql: 'SELECT b, COUNT(*) FROM {T} GROUP BY b ORDER BY b', words: true },
  { sql: 'SELECT p, b, g, COUNT(*) FROM {T} GROUP BY p, b, g ORDER BY p, b, g', words: true },
  { sql: 'SELECT COUNT(DISTINCT p), COUNT(DISTINCT b), COUNT(DISTINCT m) FROM {T}', words: false },
  { sql: 'SELECT COUNT(DISTINCT p), COUNT(DISTINCT b) FROM {T}', words: true },
  { sql: 'SELECT g, COUNT(DISTINCT p), COUNT(DISTINCT b) FROM {T} GROUP BY g ORDER BY g', words: true },
  { sql: 'SELECT DISTINCT p FROM {T} ORDER BY p', words: true },
  { sql: 'SELECT m, COUNT(*) FROM {T} GROUP BY m ORDER BY m', words: false },
  { sql: 'SELECT COUNT(*), SUM(t.id), SUM(u.id) FROM {T} t JOIN {U} u ON t.p = u.p', words: true },
  { sql: 'SELECT COUNT(*), SUM(t.id), SUM(u.id) FROM {T} t JOIN {U} u USING (b)', words: true },
  { sql: 'SELECT COUNT(*), COUNT(u.id) FROM {T} t LEFT JOIN {U} u ON t.p = u.p AND t.b = u.b', words: true },
  { sql: 'SELECT COUNT(*), SUM(id) FROM {T} t WHERE p IN (SELECT p FROM {U})', words: true },
  { sql: 'SELECT COUNT(*), SUM(t.id) FROM {T} t JOIN {U} u ON t.m = u.b', words: false },
  { sql: 'SELECT p, COUNT(*) FROM (SELECT p FROM {T} INTERSECT DISTINCT SELECT p FROM {U}) GROUP BY p ORDER BY p', words: true },
  { sql: 'SELECT SUM(rn * id), SUM(c) FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY p ORDER BY id) rn, COUNT(*) OVER (PARTITION BY b) c FROM {T})', words: true },
];

describe('NUMERIC / BIGNUMERIC keys over stored words', () => {
  for (const [k, { sql, words }] of QUERIES.entries()) {
    it(`query ${k + 1}: the literal values' answer${words ? ', no key boxed' : ''}`, async () => {
      const lit = `WITH t0 AS (SELECT * FROM UNNEST([${literal}])), u0 AS (SELECT * FROM UNNEST([${literal2}])) `;
      const want = rowsOf(await q(lit + sql.replaceAll('{T}', 't0').replaceAll('{U}', 'u0')));
      const before = decimalBoxing.rows;
      const got = await q(sql.replaceAll('{T}', 'd.t').replaceAll('{U}', 'd.u'));
      const boxed = decimalBoxing.rows - before;
      expect(rowsOf(got)).toEqual(want);
      if (words) expect(boxed).toBe(0);
    });
  }

  it('stored (words) and literal (boxed) keys of one value group together', async () => {
    const lit = `WITH t0 AS (SELECT * FROM UNNEST([${literal}])) `;
    const mixed = rowsOf(await q(lit + 'SELECT p, b, COUNT(*) FROM (SELECT p, b FROM d.t UNION ALL SELECT p, b FROM t0) GROUP BY p, b ORDER BY p, b'));
    const single = rowsOf(await q('SELECT p, b, 2 * COUNT(*) FROM d.t GROUP BY p, b ORDER BY p, b'));
    expect(mixed).toEqual(single);
    const joined = rowsOf(await q(lit + 'SELECT COUNT(*) FROM d.t t JOIN t0 USING (id) WHERE t.p = t0.p OR (t.p IS NULL AND t0.p IS NULL)'));
    expect(joined).toEqual([['3000']]);
    const both = rowsOf(await q(lit + 'SELECT COUNT(*) FROM d.t t JOIN t0 ON t.p = t0.p'));
    const self = rowsOf(await q('SELECT COUNT(*) FROM d.t t JOIN d.t t2 ON t.p = t2.p'));
    expect(both).toEqual(self);
  });
});
