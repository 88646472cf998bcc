// The nested-loop join (joins without an equality key, src/executor/operators/join.ts)
// pairs rows in blocks: a small right side tiled against runs of repeated
// left rows, a large one taken in runs of 4,096 rows. Each query here runs as
// a nested loop and again with an added equality on a constant column, which
// sends it through the hash join's pair path with the same condition as its
// residual: the rows must be the same, for every join type, right sides of 1
// row to more than a batch, left sides of several batches, NULLs and STRING
// columns. A count over the pairs is also checked against arithmetic.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, run, simplify, wireRows, type Harness } from './harness.js';

const P = 'nl';
let h: Harness;
const q = async (sql: string): Promise<unknown[]> =>
  simplify(wireRows(await run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } }))) as unknown[];
const sorted = (rows: unknown[]): string[] => rows.map((r) => JSON.stringify(r)).sort();

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  // l: 5,000 rows (two scan batches); x with NULLs, s a STRING with NULLs.
  await q(`CREATE TABLE d.l AS SELECT id, 1 AS one, IF(MOD(id, 97) = 0, NULL, MOD(id * 37, 2000)) AS x,
    IF(MOD(id, 89) = 0, NULL, CONCAT('s', CAST(MOD(id, 50) AS STRING))) AS s FROM UNNEST(GENERATE_ARRAY(1, 5000)) AS id`);
  for (const n of [1, 7, 600, 4100]) {
    await q(`CREATE TABLE d.r${n} AS SELECT id AS rid, 1 AS one, IF(MOD(id, 13) = 0, NULL, MOD(id * 53, 2000)) AS y,
      IF(MOD(id, 11) = 0, NULL, CONCAT('s', CAST(MOD(id, 40) AS STRING))) AS t FROM UNNEST(GENERATE_ARRAY(1, ${n})) AS id`);
  }
}, 120_000);

afterAll(async () => {
  await h?.close();
});

// [right size, left filter] (the 4,100-row side against fewer left rows keeps the test short)
const SIDES: [number, string][] = [
  [1, 'TRUE'],
  [7, 'TRUE'],
  [600, 'id <= 2000'],
  [4100, 'id <= 300'],
];
const CONDS = ['l.x < r.y AND r.y - l.x < 3', 'l.x + r.y = 1999', 'l.s < r.t AND l.x > r.y + 1000', 'l.x IS NULL OR r.y IS NULL'];

describe('nested-loop join in blocks', () => {
  for (const [n, lf] of SIDES) {
    for (const cond of CONDS) {
      for (const jt of ['INNER', 'LEFT', 'RIGHT', 'FULL']) {
        it(`${jt} JOIN r${n} ON ${cond}`, async () => {
          const sel = `SELECT l.id, l.s, r.rid, r.t FROM (SELECT * FROM d.l WHERE ${lf}) l ${jt} JOIN d.r${n} r`;
          const nested = await q(`${sel} ON ${cond}`);
          const hashed = await q(`${sel} ON l.one = r.one AND (${cond})`);
          expect(sorted(nested)).toEqual(sorted(hashed));
          if (jt === 'INNER') expect(nested.length).toBeGreaterThan(0);
        });
      }
      // (a per-row subquery on one side: kept to the smaller right sides)
      if (n <= 600) it(`EXISTS / NOT EXISTS over r${n} WHERE ${cond}`, async () => {
        for (const not of ['', 'NOT ']) {
          const sel = `SELECT l.id FROM d.l WHERE ${lf} AND ${not}EXISTS (SELECT 1 FROM d.r${n} r WHERE `;
          expect(sorted(await q(`${sel}${cond})`))).toEqual(sorted(await q(`${sel}l.one = r.one AND (${cond}))`)));
        }
      });
    }
  }

  it('a cross join with no condition pairs every row, left-major', async () => {
    const rows = await q('SELECT l.id, r.rid FROM (SELECT * FROM d.l WHERE id <= 9) l CROSS JOIN d.r600 r');
    expect(rows.length).toBe(5400);
    const want: unknown[] = [];
    for (let i = 1; i <= 9; i++) for (let j = 1; j <= 600; j++) want.push([String(i), String(j)]);
    expect(rows).toEqual(want);
    // Counting: pairs of 1..5000 and 1..4100 whose sum is 5000.
    const [[c]] = (await q('SELECT COUNT(*) FROM d.l CROSS JOIN d.r4100 r WHERE l.id + r.rid = 5000')) as string[][];
    let want2 = 0;
    for (let i = 1; i <= 5000; i++) if (5000 - i >= 1 && 5000 - i <= 4100) want2++;
    expect(Number(c)).toBe(want2);
  });
});
