// Sums over moving window frames kept as running totals (rows added as the
// frame end passes them, subtracted as its start does): NUMERIC / BIGNUMERIC
// SUM and AVG (window/decimal-frame-sum.ts), INT64 SUM / AVG, COUNT and
// COUNTIF (window.ts nativeAggregate); MIN / MAX over a monotonic queue. Every row's value is checked against
// its frame summed here with BigInts (MIN / MAX of INT64, FLOAT64 with NaNs
// and DATE: its frame's least and greatest): random ROWS and RANGE frames,
// partitions (a NULL one among them), NULL values, all-NULL frames, ties,
// values near the types' limits; a running total that passes the NUMERIC
// range while each frame's sum fits raises nothing, a frame whose sum does
// not fit raises the per-frame sum's error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHarness, rowsOf, run, type Harness } from './harness.js';

const P = 'wss';
let h: Harness;
const q = async (sql: string): Promise<unknown[][]> =>
  rowsOf(await run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } })) as unknown[][];

let seed = 12345;
const rand = (m: number): number => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed % m;
};
const randBig = (digits: number): bigint => {
  let x = 0n;
  for (let i = 0; i < digits; i++) x = x * 10n + BigInt(rand(10));
  return rand(2) === 0 ? -x : x;
};

/** An unscaled integer as CAST(x AS STRING) writes it at `scale`. */
function text(x: bigint, scale: number): string {
  if (x === 0n) return '0';
  const neg = x < 0n;
  const d = (neg ? -x : x).toString().padStart(scale + 1, '0');
  const frac = d.slice(d.length - scale).replace(/0+$/, '');
  return (neg ? '-' : '') + d.slice(0, d.length - scale) + (frac === '' ? '' : '.' + frac);
}

/** x / c rounded half away from zero. */
function roundDiv(x: bigint, c: bigint): bigint {
  const m = x < 0n ? -x : x;
  const r = (2n * m + c) / (2n * c);
  return x < 0n ? -r : r;
}

interface Row {
  id: number;
  p: number | null;
  k: number;
  n: bigint | null;
  b: bigint | null;
  i: bigint | null;
}

const N = 600;
const rows: Row[] = [];

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  for (let id = 1; id <= N; id++) {
    const p = rand(7) === 0 ? null : rand(3);
    // Runs of NULLs (all-NULL frames), small values, values near the limits (|n| < 10^29 / 7: sums of up to 7 fit).
    const nullRun = id % 50 < 6;
    const wide = rand(4) === 0;
    rows.push({
      id,
      p,
      k: Math.floor(id / 3) + (rand(5) === 0 ? 2 : 0),
      n: nullRun || rand(9) === 0 ? null : wide ? randBig(36) : randBig(12),
      b: nullRun || rand(9) === 0 ? null : wide ? randBig(74) : randBig(40),
      i: nullRun || rand(9) === 0 ? null : wide ? randBig(15) : randBig(6),
    });
  }
  const floatSql = (x: number | null): string => (x === null ? 'CAST(NULL AS FLOAT64)' : x !== x ? "CAST('NaN' AS FLOAT64)" : `CAST(${String(x)} AS FLOAT64)`);
  const lit = (x: bigint | null, t: string, scale: number): string => (x === null ? `CAST(NULL AS ${t})` : `${t} '${text(x, scale)}'`);
  const structs = rows.map((r) => `STRUCT(${r.id} AS id, ${r.p ?? 'CAST(NULL AS INT64)'} AS p, ${r.k} AS k, ${lit(r.n, 'NUMERIC', 9)} AS n, ${lit(r.b, 'BIGNUMERIC', 38)} AS b, ${r.i === null ? 'CAST(NULL AS INT64)' : String(r.i)} AS i, ${floatSql(floatOf(r))} AS f)`);
  await q(`CREATE TABLE d.t AS SELECT * FROM UNNEST([${structs.join(',\n')}])`);
  // A running total past the NUMERIC range (6 x 10^28 twice) while every 3-row frame's sum fits.
  await q(`CREATE TABLE d.o AS SELECT id, IF(MOD(DIV(id, 2), 2) = 0, 1, -1) * NUMERIC '60000000000000000000000000000' AS n FROM UNNEST(GENERATE_ARRAY(0, 98)) AS id`);
}, 120_000);

afterAll(async () => {
  await h?.close();
});

type B = { kind: 'up' } | { kind: 'uf' } | { kind: 'cur' } | { kind: 'pre'; off: number } | { kind: 'fol'; off: number };
const sqlOf = (b: B): string =>
  b.kind === 'up' ? 'UNBOUNDED PRECEDING' : b.kind === 'uf' ? 'UNBOUNDED FOLLOWING' : b.kind === 'cur' ? 'CURRENT ROW' : `${b.off} ${b.kind === 'pre' ? 'PRECEDING' : 'FOLLOWING'}`;
/** A bound as a signed offset from the row (ROWS: positions; RANGE: key units); ±Infinity: unbounded. */
const offOf = (b: B): number => (b.kind === 'up' ? -Infinity : b.kind === 'uf' ? Infinity : b.kind === 'cur' ? 0 : b.kind === 'pre' ? -b.off : b.off);

/** A random frame whose start is not after its end in the bound order (the analyzer refuses the others). */
function randomFrame(): [B, B] {
  const pick = (): B => {
    const r = rand(5);
    return r === 0 ? { kind: 'cur' } : r < 3 ? { kind: 'pre', off: rand(12) } : { kind: 'fol', off: rand(12) };
  };
  const r = rand(6);
  if (r === 0) return [{ kind: 'up' }, pick()];
  if (r === 1) return [pick(), { kind: 'uf' }];
  const rank = (b: B): number => (b.kind === 'pre' ? 0 : b.kind === 'cur' ? 1 : 2);
  for (;;) {
    const s = pick();
    const e = pick();
    if (rank(s) <= rank(e) && offOf(s) <= offOf(e)) return [s, e];
  }
}

/** Each row's frame (ids) under PARTITION BY p ORDER BY id (ROWS) or k (RANGE), computed from the rows. */
function frameIds(unit: 'ROWS' | 'RANGE', s: B, e: B, desc: boolean): Map<number, Row[]> {
  const parts = new Map<string, Row[]>();
  for (const r of rows) {
    const key = String(r.p);
    if (!parts.has(key)) parts.set(key, []);
    parts.get(key)!.push(r);
  }
  const out = new Map<number, Row[]>();
  for (const part of parts.values()) {
    if (unit === 'ROWS') {
      part.sort((a, b) => (desc ? b.id - a.id : a.id - b.id));
      part.forEach((r, at) => {
        const lo = Math.max(0, at + offOf(s));
        const hi = Math.min(part.length - 1, at + offOf(e));
        out.set(r.id, lo <= hi ? part.slice(lo, hi + 1) : []);
      });
    } else {
      // Row x's frame: rows y with offOf(s) <= dir * (k(y) - k(x)) <= offOf(e).
      const dir = desc ? -1 : 1;
      for (const r of part) out.set(r.id, part.filter((y) => dir * (y.k - r.k) >= offOf(s) && dir * (y.k - r.k) <= offOf(e)));
    }
  }
  return out;
}

function expected(name: string, col: 'n' | 'b' | 'i', frame: Row[]): string | null {
  const vals = frame.map((r) => r[col]).filter((x): x is bigint => x !== null);
  if (name === 'COUNT') return String(vals.length);
  if (name === 'COUNTIF') return String(vals.filter((x) => x > 0n).length);
  if (vals.length === 0) return null;
  const sum = vals.reduce((a, x) => a + x, 0n);
  if (col === 'i') return name === 'SUM' ? String(sum) : String(Number(sum) / vals.length);
  const scale = col === 'n' ? 9 : 38;
  return text(name === 'SUM' ? sum : roundDiv(sum, BigInt(vals.length)), scale);
}

async function check(unit: 'ROWS' | 'RANGE', desc: boolean, s: B, e: B): Promise<void> {
  const w = `(PARTITION BY p ORDER BY ${unit === 'ROWS' ? 'id' : 'k'}${desc ? ' DESC' : ''} ${unit} BETWEEN ${sqlOf(s)} AND ${sqlOf(e)})`;
  const calls: [string, 'n' | 'b' | 'i', string][] = [
    ['SUM', 'n', `CAST(SUM(n) OVER ${w} AS STRING)`],
    ['AVG', 'n', `CAST(AVG(n) OVER ${w} AS STRING)`],
    ['SUM', 'b', `CAST(SUM(b) OVER ${w} AS STRING)`],
    ['AVG', 'b', `CAST(AVG(b) OVER ${w} AS STRING)`],
    ['SUM', 'i', `CAST(SUM(i) OVER ${w} AS STRING)`],
    ['AVG', 'i', `AVG(i) OVER ${w}`],
    ['COUNT', 'i', `CAST(COUNT(i) OVER ${w} AS STRING)`],
    ['COUNTIF', 'i', `CAST(COUNTIF(i > 0) OVER ${w} AS STRING)`],
  ];
  const got = await q(`SELECT id, ${calls.map((c) => c[2]).join(', ')} FROM d.t`);
  expect(got.length).toBe(N);
  const frames = frameIds(unit, s, e, desc);
  for (const r of got) {
    const frame = frames.get(Number(r[0]))!;
    calls.forEach(([name, col], j) => {
      const want = expected(name, col, frame);
      const g = name === 'AVG' && col === 'i' && r[j + 1] !== null ? String(Number(r[j + 1])) : r[j + 1];
      if (g !== want) throw new Error(`${w} ${name}(${col}) at id ${String(r[0])}: got ${String(r[j + 1])}, want ${String(want)}`);
    });
  }
  // MIN / MAX: INT64, FLOAT64 (NaN in a frame wins), DATE (int32 days).
  const mm = await q(`SELECT id, CAST(MIN(i) OVER ${w} AS STRING), CAST(MAX(i) OVER ${w} AS STRING), CAST(MIN(f) OVER ${w} AS STRING), CAST(MAX(f) OVER ${w} AS STRING), CAST(MIN(dt) OVER ${w} AS STRING), CAST(MAX(dt) OVER ${w} AS STRING) FROM (SELECT *, DATE_FROM_UNIX_DATE(MOD(i, 100000)) AS dt FROM d.t)`);
  expect(mm.length).toBe(N);
  for (const r of mm) {
    const frame = frames.get(Number(r[0]))!;
    const is = frame.map((x) => x.i).filter((x): x is bigint => x !== null);
    const fs = frame.map(floatOf).filter((x): x is number => x !== null);
    const ds = is.map((x) => Number(x % 100000n));
    const pick = <T,>(xs: T[], less: (a: T, b: T) => boolean): T | null => (xs.length === 0 ? null : xs.reduce((a, x) => (less(x, a) ? x : a)));
    const fl = (x: number | null): string | null => (x === null ? null : fs.some((y) => y !== y) ? 'NaN' : String(x));
    const day = (x: number | null): string | null => (x === null ? null : new Date(x * 86_400_000).toISOString().slice(0, 10));
    const want = [
      pick(is, (a, b) => a < b), pick(is, (a, b) => a > b),
      fl(pick(fs, (a, b) => a < b)), fl(pick(fs, (a, b) => a > b)),
      day(pick(ds, (a, b) => a < b)), day(pick(ds, (a, b) => a > b)),
    ].map((x) => (x === null ? null : String(x)));
    const gotRow = r.slice(1).map((x, j) => (x === null || j < 2 || j > 3 ? x : String(Number(x))));
    if (JSON.stringify(gotRow) !== JSON.stringify(want)) throw new Error(`${w} MIN/MAX at id ${String(r[0])}: got ${JSON.stringify(r.slice(1))}, want ${JSON.stringify(want)}`);
  }
}

/** FLOAT64 column f: i / 8, NaN on every 41st row, NULL where i is. */
const floatOf = (r: Row): number | null => (r.i === null ? null : r.id % 41 === 0 ? NaN : Number(r.i) / 8);

describe('window sums, MIN and MAX over moving frames', () => {
  it('ROWS frames: random offsets, suffix and prefix frames, ASC and DESC', async () => {
    const fixed: [B, B][] = [
      [{ kind: 'pre', off: 3 }, { kind: 'cur' }],
      [{ kind: 'cur' }, { kind: 'uf' }],
      [{ kind: 'fol', off: 2 }, { kind: 'uf' }],
      [{ kind: 'up' }, { kind: 'pre', off: 2 }],
      [{ kind: 'pre', off: 5 }, { kind: 'pre', off: 2 }],
      [{ kind: 'fol', off: 1 }, { kind: 'fol', off: 4 }],
    ];
    for (const [s, e] of fixed) await check('ROWS', false, s, e);
    for (let t = 0; t < 10; t++) {
      const [s, e] = randomFrame();
      await check('ROWS', rand(2) === 1, s, e);
    }
  }, 120_000);

  it('RANGE frames over a key with ties and gaps: random offsets, ASC and DESC', async () => {
    await check('RANGE', false, { kind: 'pre', off: 4 }, { kind: 'fol', off: 2 });
    await check('RANGE', true, { kind: 'cur' }, { kind: 'uf' });
    for (let t = 0; t < 8; t++) {
      const [s, e] = randomFrame();
      await check('RANGE', rand(2) === 1, s, e);
    }
  }, 120_000);

  it('empty input gives no rows', async () => {
    expect(await q('SELECT SUM(n) OVER (ORDER BY id ROWS 2 PRECEDING), AVG(b) OVER (ORDER BY id ROWS 2 PRECEDING) FROM d.t WHERE id < 0')).toEqual([]);
  });

  it('a running total past the NUMERIC range whose frames fit raises nothing; a frame past it raises the per-frame error', async () => {
    // 6e28, 6e28, -6e28, -6e28, ...: every frame of 3 rows (or fewer, at the ends) sums to 0 or ±6e28 (12e28 passed on the way).
    const got = await q('SELECT id, CAST(SUM(n) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING) AS STRING), CAST(SUM(n) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING) AS STRING) FROM d.o ORDER BY id');
    expect(got.length).toBe(99);
    const v = (x: number): bigint => (Math.floor(x / 2) % 2 === 0 ? 6n : -6n) * 10n ** 37n;
    const sum = (from: number, to: number): string | null => {
      let t = 0n;
      for (let x = from; x <= Math.min(to, 98); x++) t += v(x);
      return from > 98 ? null : text(t, 9);
    };
    for (const r of got) {
      const id = Number(r[0]);
      expect([r[1], r[2]]).toEqual([sum(id, id + 2), sum(id + 1, id + 3)]);
    }
    // Two 6e28 rows in one frame: 1.2e29 does not fit.
    await expect(q('SELECT SUM(n) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM d.o')).rejects.toThrow(/numeric overflow: SUM/);
    await expect(q('SELECT AVG(n * 2) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM d.o WHERE id < 4')).rejects.toThrow(/overflow/);
  });
});
