// NUMERIC / BIGNUMERIC expressions over a stored table (columns held as
// decimal words) answer what the same query answers over the same values
// given as literals (boxed Decimals, the decimal.js kernels), and the stored
// run boxes no rows in between: arithmetic, CASE / IF / COALESCE branches,
// BETWEEN (NULL bounds too), IN lists (with NULL items), ROUND, CASTs,
// RANGE window frames with offsets over NUMERIC / BIGNUMERIC keys.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decimalBoxing } from '../../src/types/vector.js';
import { randomDecimalText, rng } from '../helpers/random-values.js';
import { openHarness, rowsOf, run, setupDataset, type Harness } from './harness.js';

const P = 'p';
let h: Harness;
let literal = '';
const q = (sql: string) => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });

/** A random NUMERIC text (all nine fraction digits) kept below 10^20, so that products with q do not overflow. */
function below1e20(r: () => number): string {
  const t = randomDecimalText(r, 4);
  const neg = t.startsWith('-');
  const [int, frac] = (neg ? t.slice(1) : t).split('.');
  const cut = int!.slice(-20).replace(/^0+(?=\d)/, '');
  return `${neg && (cut !== '0' || frac) ? '-' : ''}${cut}${frac ? '.' + frac : ''}`;
}

/** Random amounts (mostly) and any NUMERIC / BIGNUMERIC text, NULLs among them. */
function row(r: () => number, id: number): string {
  const amount = (): string => (r() < 0.1 ? 'NULL' : r() < 0.7 ? `NUMERIC '${(Math.floor((r() - 0.3) * 1e7) / 100).toFixed(2)}'` : `NUMERIC '${below1e20(r)}'`);
  const big = r() < 0.1 ? 'NULL' : `BIGNUMERIC '${randomDecimalText(r, 8)}'`;
  const lo = r() < 0.1 ? 'NULL' : `NUMERIC '${(Math.floor(r() * 1e5) / 100).toFixed(2)}'`;
  return `STRUCT(${id} AS id, ${amount()} AS p, ${r() < 0.05 ? 'NULL' : Math.floor(r() * 20) - 5} AS q, ${big} AS b, ${lo} AS lo)`;
}

beforeAll(async () => {
  h = await openHarness();
  await setupDataset(h, P, 'd');
  const r = rng(1019);
  literal = Array.from({ length: 3000 }, (_, k) => row(r, k)).join(',\n');
  await q(`CREATE TABLE t AS SELECT * FROM UNNEST([${literal}])`);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

const QUERIES = [
  // Per row (projections): words through to the result.
  'SELECT id, p * q, p + lo, p - lo, SAFE_DIVIDE(p, lo), ROUND(p * 1.2, 2), TRUNC(p, -1), -p, ABS(p), SIGN(p), CAST(p AS STRING), CAST(p AS FLOAT64), SAFE_CAST(p AS INT64) FROM {T} ORDER BY id',
  'SELECT id, CASE WHEN p > 100 THEN p * 2 WHEN p < 0 THEN NULL ELSE p END, IF(q > 5, p, -p), COALESCE(p, lo, 0), IF(q > 0, lo, NULL) FROM {T} ORDER BY id',
  'SELECT id, p BETWEEN 10 AND lo, p BETWEEN lo AND 1000, p BETWEEN -5 AND 5, p IN (1.5, 2.5, 100, lo), p IN (0, NULL), p NOT IN (1, 2) FROM {T} ORDER BY id',
  "SELECT id, b * 2, b / 3, b - b, ROUND(b, 10), CAST(b AS STRING), SAFE_CAST(b AS NUMERIC), b BETWEEN -1 AND 1, IF(q > 3, b, BIGNUMERIC '1') FROM {T} WHERE b IS NULL OR ABS(b) < BIGNUMERIC '1e30' ORDER BY id",
  // Aggregates over the same.
  'SELECT SUM(p * q), SUM(ROUND(p * 1.2, 2)), MAX(CAST(p AS STRING)), COUNTIF(p BETWEEN 10 AND 20), SUM(IF(q > 5, p, -p)), SUM(CASE WHEN p > lo THEN p - lo END), COUNTIF(p IN (1.5, 2.5)) FROM {T}',
  // RANGE frames with offsets over the keys (window/range-keys.ts reads the words; the window's input concatenated as words).
  'SELECT id, COUNT(*) OVER (ORDER BY p RANGE BETWEEN 100 PRECEDING AND 2.5 FOLLOWING), SUM(q) OVER (ORDER BY lo DESC RANGE BETWEEN NUMERIC \'0.5\' PRECEDING AND CURRENT ROW) FROM {T} ORDER BY id',
  "SELECT id, COUNT(*) OVER (ORDER BY b RANGE BETWEEN BIGNUMERIC '1e10' PRECEDING AND BIGNUMERIC '0.001' FOLLOWING) FROM {T} ORDER BY id",
];

describe('NUMERIC expressions over stored words', () => {
  for (const [k, sql] of QUERIES.entries()) {
    it(`query ${k + 1}: the literal values' answer, no row boxed`, async () => {
      const want = rowsOf(await q(`WITH t0 AS (SELECT * FROM UNNEST([${literal}])) ${sql.replaceAll('{T}', 't0')}`));
      const before = decimalBoxing.rows;
      const got = await q(sql.replaceAll('{T}', 'd.t'));
      const boxed = decimalBoxing.rows - before;
      expect(rowsOf(got)).toEqual(want);
      expect(boxed).toBe(0);
    });
  }
});
