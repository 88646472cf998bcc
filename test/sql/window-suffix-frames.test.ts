// Frames that end at the partition's end (`… AND UNBOUNDED FOLLOWING`) run as
// cumulative frames over the partition read backwards (window.ts
// mirroredSuffix), O(n) instead of a restart of the running state at every
// row. The answer must be the one of the same frame written the other way
// round: ORDER BY … DESC with `UNBOUNDED PRECEDING AND …`, a cumulative frame
// the engine already ran, which adds the same rows in the same order (so even
// FLOAT64 sums agree to the bit). Random data with NULLs, partitions of
// different sizes (and one of a single row), INT64 sums past 2^53 (the exact
// accumulator path) and empty frames.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, rowsOf, run, type Harness } from './harness.js';

const P = 'wsf';
let h: Harness;
const q = async (sql: string): Promise<unknown[]> => rowsOf(await run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } }));

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  // id unique; k: 7 partitions of uneven size plus a one-row partition (k = 99) and NULL keys.
  await q(`CREATE TABLE d.t AS
    SELECT id,
      IF(id = 500, 99, IF(MOD(id * 13, 17) = 0, NULL, MOD(id * 7919, 7))) AS k,
      IF(MOD(id, 11) = 0, NULL, CAST(MOD(id * 104729, 100003) AS FLOAT64) / 7.3) AS f,
      IF(MOD(id, 13) = 0, NULL, MOD(id * 31, 1000) - 500) AS i,
      IF(MOD(id, 5) = 0, 9007199254740993 + id, id) AS big,
      MOD(id, 3) = 0 AS b
    FROM UNNEST(GENERATE_ARRAY(1, 3000)) AS id`);
}, 60_000);

afterAll(async () => {
  await h?.close();
});

const calls = (frame: string): string =>
  [
    `COUNT(*) OVER (w ${frame})`,
    `COUNT(f) OVER (w ${frame})`,
    `COUNTIF(b) OVER (w ${frame})`,
    `SUM(f) OVER (w ${frame})`,
    `AVG(f) OVER (w ${frame})`,
    `SUM(i) OVER (w ${frame})`,
    `SUM(big) OVER (w ${frame})`,
    `MIN(f) OVER (w ${frame})`,
    `MAX(i) OVER (w ${frame})`,
    `LOGICAL_OR(b) OVER (w ${frame})`,
    `BIT_XOR(i) OVER (w ${frame})`,
  ].join(', ');

// [suffix frame over ORDER BY id, the same frame over ORDER BY id DESC]
const pairs: [string, string, string][] = [
  ['CURRENT ROW .. UNBOUNDED FOLLOWING', 'ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING', 'ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW'],
  ['3 PRECEDING .. UNBOUNDED FOLLOWING', 'ROWS BETWEEN 3 PRECEDING AND UNBOUNDED FOLLOWING', 'ROWS BETWEEN UNBOUNDED PRECEDING AND 3 FOLLOWING'],
  ['2 FOLLOWING .. UNBOUNDED FOLLOWING (empty at the end)', 'ROWS BETWEEN 2 FOLLOWING AND UNBOUNDED FOLLOWING', 'ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING'],
];

describe('frames ending at UNBOUNDED FOLLOWING', () => {
  for (const [label, suffix, prefix] of pairs) {
    for (const part of ['', 'PARTITION BY k']) {
      it(`${label} ${part || 'without PARTITION BY'} equals the cumulative frame read the other way`, async () => {
        const a = await q(`SELECT id, ${calls('')} FROM d.t WINDOW w AS (${part} ORDER BY id ${suffix}) ORDER BY id`);
        const b = await q(`SELECT id, ${calls('')} FROM d.t WINDOW w AS (${part} ORDER BY id DESC ${prefix}) ORDER BY id`);
        expect(a.length).toBe(3000);
        expect(a).toEqual(b);
      });
    }
  }

  it('RANGE CURRENT ROW .. UNBOUNDED FOLLOWING over tied keys takes whole peer groups', async () => {
    const exact = ['COUNT(*)', 'COUNT(f)', 'SUM(i)', 'MIN(f)', 'MAX(i)', 'BIT_XOR(i)'];
    const sel = (order: string, frame: string) => exact.map((c) => `${c} OVER (PARTITION BY k ORDER BY ${order} ${frame})`).join(', ');
    const a = await q(`SELECT id, ${sel('MOD(id, 10)', 'RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING')} FROM d.t ORDER BY id`);
    const b = await q(`SELECT id, ${sel('MOD(id, 10) DESC', 'RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW')} FROM d.t ORDER BY id`);
    expect(a).toEqual(b);
  });

  it('gives the documented values on a small case', async () => {
    const rows = await q(`SELECT x, SUM(x) OVER (ORDER BY x ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS rest,
        COUNT(*) OVER (ORDER BY x ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS after,
        MIN(x) OVER (ORDER BY x DESC ROWS BETWEEN 1 PRECEDING AND UNBOUNDED FOLLOWING) AS lo
      FROM UNNEST([1, 2, 3, 4]) AS x ORDER BY x`);
    expect(rows).toEqual([
      ['1', '10', '3', '1'],
      ['2', '9', '2', '1'],
      ['3', '7', '1', '1'],
      ['4', '4', '0', '1'],
    ]);
  });
});
