// MOD, DIV, GREATEST / LEAST, IS [NOT] DISTINCT FROM and CAST(FLOAT64 AS ...)
// over stored NUMERIC / BIGNUMERIC columns (decimal words) answer what the
// same query answers over the same values as literals (boxed Decimals, the
// decimal.js kernels), and the stored run boxes no row where no row fails.
// Values from pools with both types' extremes, the smallest steps, zeros,
// amounts and random values, NULLs; SAFE. forms over zero divisors and
// overflowing quotients; the errors' wording.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decimalBoxing } from '../../src/types/vector.js';
import { BIGNUMERIC_MAX, NUMERIC_MAX, randomDecimalText, rng } from '../helpers/random-values.js';
import { openHarness, rowsOf, run, setupDataset, type Harness } from './harness.js';

const P = 'p';
let h: Harness;
let literal = '';
const q = (sql: string) => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });

function pool(r: () => number, width: 4 | 8): string[] {
  const max = width === 4 ? NUMERIC_MAX : BIGNUMERIC_MAX;
  const tiny = width === 4 ? '0.000000001' : '0.00000000000000000000000000000000000001';
  const out = ['0', '1', '-1', '2.5', '-2.5', '3', '-0.5', max, '-' + max, tiny, '-' + tiny, '7', '100'];
  for (let k = 0; k < 30; k++) out.push((Math.floor((r() - 0.4) * 1e7) / 100).toFixed(2));
  for (let k = 0; k < 20; k++) out.push(randomDecimalText(r, width));
  return out;
}

function rows(r: () => number, n: number): string {
  const np = pool(r, 4);
  const bp = pool(r, 8);
  const pick = (xs: string[]) => xs[Math.floor(r() * xs.length)]!;
  const val = (kind: string, xs: string[]) => (r() < 0.08 ? 'NULL' : `${kind} '${pick(xs)}'`);
  const out: string[] = [];
  for (let id = 0; id < n; id++) out.push(`STRUCT(${id} AS id, ${val('NUMERIC', np)} AS p, ${val('NUMERIC', np)} AS p2, ${val('BIGNUMERIC', bp)} AS b, ${val('BIGNUMERIC', bp)} AS b2)`);
  return out.join(',\n');
}

beforeAll(async () => {
  h = await openHarness();
  await setupDataset(h, P, 'd');
  literal = rows(rng(2719), 3000);
  await q(`CREATE TABLE t AS SELECT * FROM UNNEST([${literal}])`);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

/** [sql, whether the stored run must box no row]: SAFE. forms with failing rows retry those batches on the values. */
const QUERIES: [string, boolean][] = [
  ['SELECT id, MOD(p, p2), MOD(b, b2), MOD(p, 7), MOD(-p, NUMERIC \'0.3\'), MOD(b, 2) FROM {T} WHERE p2 <> 0 AND b2 <> 0 ORDER BY id', true],
  ['SELECT id, DIV(p, p2), DIV(b, b2), DIV(p, 3), DIV(b, -7) FROM {T} WHERE ABS(p2) >= 1 AND ABS(b2) >= 1 ORDER BY id', true],
  ['SELECT id, SAFE.DIV(p, p2), SAFE.MOD(p, p2), SAFE.DIV(b, b2), SAFE.MOD(b, b2) FROM {T} ORDER BY id', false],
  ['SELECT id, GREATEST(p, p2), LEAST(p, p2), GREATEST(p, p2, 1.5), LEAST(b, b2, 0), GREATEST(b, b2) FROM {T} ORDER BY id', true],
  ['SELECT id, p IS DISTINCT FROM p2, p IS NOT DISTINCT FROM p2, b IS DISTINCT FROM b2, p IS DISTINCT FROM 2.5, b IS NOT DISTINCT FROM 0 FROM {T} ORDER BY id', true],
  ['SELECT SUM(MOD(p, 7)), SUM(DIV(p, 7)), MAX(GREATEST(p, p2)), MIN(LEAST(b, b2)), COUNTIF(p IS DISTINCT FROM p2) FROM {T} WHERE ABS(p) < 1e20', true],
  ['SELECT id, CAST(CAST(p AS FLOAT64) AS NUMERIC), SAFE_CAST(CAST(b AS FLOAT64) AS NUMERIC), CAST(CAST(b AS FLOAT64) / 3 AS BIGNUMERIC) FROM {T} WHERE b IS NULL OR ABS(b) < 1e38 ORDER BY id', true],
];

describe('MOD / DIV / GREATEST / LEAST / IS DISTINCT FROM / CAST over stored words', () => {
  for (const [k, [sql, none]] of QUERIES.entries()) {
    it(`query ${k + 1}: the literal values' answer${none ? ', no row boxed' : ''}`, async () => {
      const want = rowsOf(await q(`WITH t0 AS (SELECT * FROM UNNEST([${literal}])) ${sql.replaceAll('{T}', 't0')}`));
      const before = decimalBoxing.rows;
      const got = await q(sql.replaceAll('{T}', 'd.t'));
      const boxed = decimalBoxing.rows - before;
      expect(rowsOf(got)).toEqual(want);
      if (none) expect(boxed).toBe(0);
    });
  }

  it('division by zero and overflow: the errors of the value-by-value kernels', async () => {
    await q("CREATE TABLE e AS SELECT * FROM UNNEST([STRUCT(1 AS id, NUMERIC '5.5' AS p, NUMERIC '0' AS z, BIGNUMERIC '-3' AS b, BIGNUMERIC '0' AS bz)])");
    await expect(q('SELECT MOD(p, z) FROM e')).rejects.toThrow('division by zero: MOD(5.5, 0)');
    await expect(q('SELECT DIV(p, z) FROM e')).rejects.toThrow('division by zero: DIV(5.5, 0)');
    await expect(q('SELECT DIV(b, bz) FROM e')).rejects.toThrow('division by zero: DIV(-3, 0)');
    await expect(q("SELECT DIV(p, NUMERIC '0.000000001') * 0 + DIV(NUMERIC '99999999999999999999999999999', NUMERIC '0.1') FROM e")).rejects.toThrow('numeric overflow');
    await expect(q('SELECT CAST(CAST(p AS FLOAT64) * 1e30 AS NUMERIC) FROM e')).rejects.toThrow('numeric out of range: 5.5e+30');
  });
});
