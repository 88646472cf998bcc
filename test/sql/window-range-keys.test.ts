// RANGE frames with offsets over INT64, NUMERIC and BIGNUMERIC keys compare
// exactly (window/range-keys.ts: unscaled integers, as doubles while they are
// small, else BigInts), FLOAT64 keys in FLOAT64 arithmetic. Each row's frame
// is read from the rows themselves with exact rational arithmetic (BigInts
// scaled by 10^40) and checked against COUNT(*) and SUM(id) over it: ties,
// NULL keys (their own peer group), DESC, partitions, fractional offsets,
// keys and offsets past 2^53.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, rowsOf, run, type Harness } from './harness.js';

const P = 'wrk';
let h: Harness;
const q = async (sql: string): Promise<unknown[][]> =>
  rowsOf(await run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } })) as unknown[][];

const S = 40;
/** Decimal text as an integer x 10^S. */
function exact(text: string): bigint {
  const neg = text.startsWith('-');
  const t = neg ? text.slice(1) : text;
  const [i, f = ''] = t.split('.');
  const v = BigInt(i! + f.padEnd(S, '0'));
  return neg ? -v : v;
}

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  // Small NUMERIC keys (quarters, ties, NULLs); keys past 2^53 once unscaled; INT64 keys past 2^53; BIGNUMERIC keys.
  await q(`CREATE TABLE d.t AS
    SELECT id, MOD(id, 3) AS part,
      IF(MOD(id, 11) = 0, NULL, CAST(MOD(id * 37, 41) AS NUMERIC) / 4) AS small,
      IF(MOD(id, 13) = 0, NULL, CAST(MOD(id * 37, 41) AS NUMERIC) * NUMERIC '1000000000.000000001' - NUMERIC '7000000000') AS wide,
      IF(MOD(id, 7) = 0, NULL, 9007199254740000 + MOD(id * 37, 41) * 100 - IF(MOD(id, 5) = 0, 18014398509481000, 0)) AS i64,
      IF(MOD(id, 9) = 0, NULL, CAST(MOD(id * 37, 41) AS BIGNUMERIC) / 3) AS big,
      CAST(MOD(id * 37, 41) AS FLOAT64) / 4 AS f
    FROM UNNEST(GENERATE_ARRAY(1, 300)) AS id`);
  // Keys within 2^53 and an offset just past it (not a double).
  await q(`CREATE TABLE d.e AS SELECT * FROM UNNEST([STRUCT(1 AS id, 9007199254740991 AS k), (2, -1), (3, -2), (4, -3), (5, 0), (6, -9007199254740991)])`);
}, 60_000);

afterAll(async () => {
  await h?.close();
});

type Bound = { type: 'preceding' | 'following' | 'current'; off?: string };
const bound = (b: Bound): string => (b.type === 'current' ? 'CURRENT ROW' : `${b.off} ${b.type.toUpperCase()}`);

async function check(table: string, col: string, part: boolean, desc: boolean, start: Bound, end: Bound, offsetValue: (t: string) => string = (t) => t): Promise<void> {
  const w = `(${part ? 'PARTITION BY part ' : ''}ORDER BY ${col}${desc ? ' DESC' : ''} RANGE BETWEEN ${bound(start)} AND ${bound(end)})`;
  const got = await q(`SELECT id, ${part ? 'part' : '0'}, CAST(${col} AS STRING), COUNT(*) OVER ${w}, SUM(id) OVER ${w} FROM d.${table}`);
  const rows = got.map((r) => ({ id: Number(r[0]), part: String(r[1]), k: r[2] === null ? null : exact(r[2] as string) }));
  const dir = desc ? -1n : 1n;
  const off = (b: Bound): bigint => (b.off === undefined ? 0n : exact(offsetValue(b.off)));
  // Row x's frame holds y when lo <= dir * (y - x) <= hi, in the direction of the ORDER BY.
  const lo = start.type === 'preceding' ? -off(start) : start.type === 'following' ? off(start) : 0n;
  const hi = end.type === 'preceding' ? -off(end) : end.type === 'following' ? off(end) : 0n;
  let checked = 0;
  for (const r of got) {
    const me = rows.find((x) => x.id === Number(r[0]))!;
    const frame = rows.filter((y) => {
      if (y.part !== me.part) return false;
      if (me.k === null || y.k === null) return me.k === null && y.k === null;
      const d = dir * (y.k - me.k);
      return lo <= d && d <= hi;
    });
    const want = [String(frame.length), frame.length === 0 ? null : String(frame.reduce((s, y) => s + y.id, 0))];
    expect([r[3], r[4]], `${w} row ${me.id}`).toEqual(want);
    checked++;
  }
  expect(checked).toBe(got.length);
}

describe('RANGE offsets compare keys exactly', () => {
  const frames: [Bound, Bound][] = [
    [{ type: 'preceding', off: '2.5' }, { type: 'current' }],
    [{ type: 'preceding', off: '1' }, { type: 'following', off: '0.75' }],
    [{ type: 'following', off: '0.25' }, { type: 'following', off: '3' }],
    [{ type: 'preceding', off: '4' }, { type: 'preceding', off: '0.5' }],
    [{ type: 'preceding', off: '0' }, { type: 'following', off: '0' }],
  ];
  for (const [s, e] of frames) {
    for (const desc of [false, true]) {
      it(`small NUMERIC keys ${bound(s)} .. ${bound(e)}${desc ? ' DESC' : ''}`, async () => {
        const n = (b: Bound): Bound => (b.off === undefined ? b : { ...b, off: `NUMERIC '${b.off}'` });
        await check('t', 'small', true, desc, n(s), n(e), (t) => t.replace(/NUMERIC '(.*)'/, '$1'));
      });
      it(`FLOAT64 keys ${bound(s)} .. ${bound(e)}${desc ? ' DESC' : ''}`, async () => {
        await check('t', 'f', false, desc, s, e);
      });
    }
  }
  it('a FLOAT64 offset over NUMERIC keys', async () => {
    await check('t', 'small', false, false, { type: 'preceding', off: '0.3' }, { type: 'following', off: '1.2' });
  });
  for (const desc of [false, true]) {
    it(`NUMERIC keys past 2^53 unscaled${desc ? ' DESC' : ''}`, async () => {
      await check('t', 'wide', true, desc, { type: 'preceding', off: "NUMERIC '3000000000.000000003'" }, { type: 'following', off: "NUMERIC '1000000000.000000001'" }, (t) => t.replace(/NUMERIC '(.*)'/, '$1'));
      await check('t', 'wide', false, desc, { type: 'preceding', off: "NUMERIC '0.000000001'" }, { type: 'following', off: "NUMERIC '2000000000.000000001'" }, (t) => t.replace(/NUMERIC '(.*)'/, '$1'));
    });
    it(`INT64 keys past 2^53${desc ? ' DESC' : ''}`, async () => {
      await check('t', 'i64', true, desc, { type: 'preceding', off: '200' }, { type: 'following', off: '100' });
      await check('t', 'i64', false, desc, { type: 'preceding', off: '18014398509481000' }, { type: 'preceding', off: '1' });
    });
    it(`BIGNUMERIC keys${desc ? ' DESC' : ''}`, async () => {
      await check('t', 'big', true, desc, { type: 'preceding', off: "BIGNUMERIC '2'" }, { type: 'following', off: "BIGNUMERIC '0.3333333333333333333333333333333333333'" }, (t) => t.replace(/BIGNUMERIC '(.*)'/, '$1'));
    });
  }
  it('INT64 keys within 2^53, offsets past it', async () => {
    for (const off of ['9007199254740993', '9007199254740992', '9007199254740994', '18014398509481982', '18014398509481983']) {
      await check('e', 'k', false, false, { type: 'preceding', off }, { type: 'current' });
      await check('e', 'k', false, true, { type: 'current' }, { type: 'following', off });
      await check('e', 'k', false, false, { type: 'preceding', off }, { type: 'preceding', off });
    }
  });
});
