// FIRST_VALUE / LAST_VALUE / NTH_VALUE (with and without IGNORE NULLS) and
// ANY_VALUE over long frames pick their row in O(1) a frame (window.ts
// valuePicks: the qualifying positions and a count of them before each), where
// they scanned every NULL of the frame (O(n^2) over suffix and whole frames)
// or, for ANY_VALUE, collected every row of every frame. The values must be
// the ones a plain reading of the frame gives: the test computes each row's
// frame from the rows themselves and picks from it. Mostly-NULL data, uneven
// partitions (one of a single row, NULL keys) and empty frames.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, rowsOf, run, type Harness } from './harness.js';

const P = 'wvf';
let h: Harness;
const q = async (sql: string): Promise<unknown[]> => rowsOf(await run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } }));
const M = 1500;

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  // x is NULL on ~3 rows in 4, and on every row of partition k = 3 from id 700 on.
  await q(`CREATE TABLE d.t AS
    SELECT id, IF(id = 500, 99, IF(MOD(id * 13, 17) = 0, NULL, MOD(id * 7919, 5))) AS k,
      IF(MOD(id * 37, 4) = 0 AND NOT (MOD(id * 7919, 5) = 3 AND id >= 700), CONCAT('x', CAST(id AS STRING)), NULL) AS x
    FROM UNNEST(GENERATE_ARRAY(1, ${M})) AS id`);
}, 60_000);

afterAll(async () => {
  await h?.close();
});

type Row = { id: number; k: string | null; x: string | null };

/** Each row's frame [s, e) over its partition's rows (positions in ORDER BY id order). */
const frames: [string, (p: number, n: number) => [number, number]][] = [
  ['ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING', (p, n) => [p, n]],
  ['ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING', (_p, n) => [0, n]],
  ['ROWS BETWEEN 4 PRECEDING AND 2 PRECEDING', (p) => [Math.max(0, p - 4), Math.max(0, p - 1)]],
  ['ROWS BETWEEN 3 FOLLOWING AND UNBOUNDED FOLLOWING', (p, n) => [Math.min(n, p + 3), n]],
  ['ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW', (p) => [0, p + 1]],
];

describe('value functions and ANY_VALUE over long frames', () => {
  for (const [frame, bounds] of frames) {
    for (const part of ['', 'PARTITION BY k']) {
      it(`${frame} ${part || 'without PARTITION BY'} picks the frame's row`, async () => {
        const w = `(${part} ORDER BY id ${frame})`;
        const got = await q(`SELECT id, k, x,
            FIRST_VALUE(x) OVER ${w}, FIRST_VALUE(x IGNORE NULLS) OVER ${w},
            LAST_VALUE(x) OVER ${w}, LAST_VALUE(x IGNORE NULLS) OVER ${w},
            NTH_VALUE(x, 2) OVER ${w}, NTH_VALUE(x, 3 IGNORE NULLS) OVER ${w},
            ANY_VALUE(x) OVER ${w}
          FROM d.t ORDER BY id`);
        expect(got.length).toBe(M);
        const rows = (got as unknown[][]).map((r) => ({ id: Number(r[0]), k: r[1] as string | null, x: r[2] as string | null }));
        const byPart = new Map<string, Row[]>();
        for (const r of rows) {
          const key = part === '' ? '' : String(r.k);
          if (!byPart.has(key)) byPart.set(key, []);
          byPart.get(key)!.push(r);
        }
        const want = new Map<number, (string | null)[]>();
        for (const list of byPart.values()) {
          list.forEach((r, p) => {
            const [s, e] = bounds(p, list.length);
            const xs = list.slice(s, Math.max(s, e)).map((f) => f.x);
            const nn = xs.filter((x) => x !== null);
            want.set(r.id, [xs[0] ?? null, nn[0] ?? null, xs.at(-1) ?? null, nn.at(-1) ?? null, xs[1] ?? null, nn[2] ?? null, nn[0] ?? null]);
          });
        }
        for (const r of got as unknown[][]) expect(r.slice(3)).toEqual(want.get(Number(r[0])));
      });
    }
  }
});
