// Slot mode of the fused grouped sums (src/executor/operators/aggregate-fused.ts):
// GROUP BY one numeric key with only COUNT / SUM / AVG of one FLOAT64 argument
// sums by key slot. Each query runs as is and with a MAX(v) added (which
// turns slot mode off: not every call is fused) and must give the same rows
// in the same order (groups in first-appearance order, sums added in the
// same order, so equal to the last bit), also when slot mode ends midway:
// keys widening the range (rising, falling, below keys
// within the room made above), leaving it, fractions, NULL keys or values,
// non-finite values and overflow. Counters show slot mode ran and ended.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slotCounters } from '../../src/executor/operators/aggregate-fused.js';
import { errorMessage, openHarness, run, simplify, wireRows, type Harness } from './harness.js';

const P = 'slots';
let h: Harness;
const q = (sql: string) => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });

async function answer(sql: string): Promise<unknown> {
  try {
    return simplify(wireRows(await q(sql)));
  } catch (e) {
    return { error: errorMessage(e) };
  }
}

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  // 30,000 rows: several 4,096-row batches. Values are not exact in every order (x / 7), so any change of order shows.
  await q(`CREATE TABLE d.t AS
    SELECT x AS id,
      MOD(x * 7919, 1000) AS k_mod,
      DIV(40000 - x, 4) AS k_down,
      IF(x <= 5000, 100 + MOD(x, 100), IF(x <= 9000, 1000, 50 - MOD(x, 10))) AS k_jump,
      IF(x > 20000, x * 10, MOD(x, 300)) AS k_wide,
      IF(x = 12345, 0.5, MOD(x, 50) * 1.0) AS k_frac,
      IF(MOD(x, 9000) = 0, NULL, MOD(x, 40)) AS k_null,
      IF(MOD(x, 3) = 0, -0.0, MOD(x, 5) * 1.0) AS k_zero,
      (x - 15000) / 7 AS v,
      IF(x = 7777, NULL, x / 7) AS v_null,
      IF(x = 20000, CAST('inf' AS FLOAT64), IF(x = 25000, CAST('nan' AS FLOAT64), x / 7)) AS v_inf,
      IF(x IN (10000, 11000), 1.7e308, IF(x = 12000, -1.7e308, x / 7)) AS v_big,
      IF(MOD(x, 2) = 0, -0.0, 0.0) AS v_zero
    FROM UNNEST(GENERATE_ARRAY(1, 30000)) AS x`);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

const CASES: [key: string, value: string, ends: boolean][] = [
  ['k_mod', 'v', false],
  ['k_down', 'v', false],
  ['k_jump', 'v', false],
  ['k_wide', 'v', true],
  ['k_frac', 'v', true],
  ['k_null', 'v', true],
  ['k_zero', 'v_zero', false],
  ['k_mod', 'v_null', true],
  ['k_mod', 'v_inf', true],
  ['k_mod', 'v_big', true],
  ['k_mod', 'v_zero', false],
];

describe('grouped sums by key slot', () => {
  for (const [k, v, ends] of CASES) {
    it(`GROUP BY ${k} over ${v}`, async () => {
      const calls = `COUNT(*) AS n, SUM(${v}) AS s, AVG(${v}) AS a, COUNT(${v}) AS c`;
      const before = { ...slotCounters };
      const slotted = await answer(`SELECT ${k}, ${calls} FROM d.t GROUP BY ${k}`);
      expect(slotCounters.batches).toBeGreaterThan(before.batches);
      expect(slotCounters.left > before.left).toBe(ends);
      const mid = { ...slotCounters };
      const usual = await answer(`SELECT ${k}, ${calls}, MAX(${v}) AS m FROM d.t GROUP BY ${k}`);
      expect(slotCounters).toEqual(mid);
      const dropLast = (a: unknown): unknown => (Array.isArray(a) ? a.map((r: unknown[]) => r.slice(0, -1)) : a);
      expect(slotted).toEqual(dropLast(usual));
    });
  }
});
