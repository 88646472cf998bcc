import { describe, expect, it } from 'vitest';
import type { Expr, JoinRel, Rel, SortKey, WindowCall } from '../analyzer/resolved.js';
import { T, arrayOf, structOf, type SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { collect, executeRel } from './execute.js';
import { checkResultArrays } from './result-check.js';
import { MemoryCatalog } from './testing/memory-catalog.js';
import {
  AGG,
  TABLE,
  add,
  agg,
  col,
  div,
  eq,
  gt,
  isNullE,
  lit,
  lt,
  ref,
  rowsOf,
  scan,
  testContext,
} from './testing/plan-builder.js';

const cat = new MemoryCatalog();
const tId = col('id', T.INT64);
const tG = col('g', T.STRING);
const tX = col('x', T.FLOAT64);
cat.addRows(
  TABLE('t'),
  [
    { name: 'id', type: T.INT64 },
    { name: 'g', type: T.STRING },
    { name: 'x', type: T.FLOAT64 },
  ],
  [
    [1n, 'a', 1.5],
    [2n, 'b', null],
    [3n, 'a', 0],
    [4n, null, NaN],
    [5n, 'b', -2],
    [6n, null, 3],
  ],
);
const ctx = (): ReturnType<typeof testContext> => testContext(cat);
const run = async (rel: Rel): Promise<Value[][]> => rowsOf(await collect(rel, ctx()));
const tScan = (): Rel => scan('t', [tId, tG, tX]);

describe('scan / filter / project / limit', () => {
  it('scans with projection and pushed filters', async () => {
    const c = col('x', T.FLOAT64);
    const rel: Rel = { ...scan('t', [c], [2]), pushedFilters: [gt(ref(c), lit(0, T.FLOAT64))] };
    expect(await run(rel)).toEqual([[1.5], [3]]);
  });
  it('filters with three-valued logic (NULL drops)', async () => {
    const rel: Rel = { kind: 'filter', input: tScan(), columns: [tId, tG, tX], predicate: eq(ref(tG), lit('a', T.STRING)) };
    expect((await run(rel)).map((r) => r[0])).toEqual([1n, 3n]);
  });
  it('projects expressions', async () => {
    const out = col('y', T.INT64);
    const rel: Rel = { kind: 'project', input: tScan(), columns: [out], exprs: [add(ref(tId), lit(10n, T.INT64))] };
    expect((await run(rel)).map((r) => r[0])).toEqual([11n, 12n, 13n, 14n, 15n, 16n]);
  });
  it('limit and offset', async () => {
    const rel: Rel = { kind: 'limit', input: tScan(), columns: [tId, tG, tX], limit: 2, offset: 3 };
    expect((await run(rel)).map((r) => r[0])).toEqual([4n, 5n]);
  });
  it('values and SELECT without FROM', async () => {
    const a = col('a', T.INT64);
    const rel: Rel = { kind: 'values', columns: [a], rows: [[lit(1n, T.INT64)], [lit(null, T.INT64)]] };
    expect(await run(rel)).toEqual([[1n], [null]]);
    expect((await collect({ kind: 'values', columns: [], rows: [[]] }, ctx()))[0]!.length).toBe(1);
  });
});

describe('lazy conditionals and logic', () => {
  const proj = async (e: Expr): Promise<Value[]> => {
    const o = col('o', e.type);
    return (await run({ kind: 'project', input: tScan(), columns: [o], exprs: [e] })).map((r) => r[0]!);
  };
  it('IF(x = 0, 0, 1 / x) never divides by zero', async () => {
    const e: Expr = {
      kind: 'conditional',
      type: T.FLOAT64,
      op: 'case',
      whens: [eq(ref(tX), lit(0, T.FLOAT64))],
      thens: [lit(0, T.FLOAT64)],
      else: div(lit(1, T.FLOAT64), ref(tX)),
    };
    const r = await proj(e);
    expect(r[2]).toBe(0);
    expect(r[0]).toBeCloseTo(1 / 1.5);
    expect(r[1]).toBeNull();
  });
  it('unguarded division raises, SAFE division yields NULL', async () => {
    await expect(proj(div(lit(1, T.FLOAT64), ref(tX)))).rejects.toThrow(/division by zero/);
    const r = await proj(div(lit(1, T.FLOAT64), ref(tX), true));
    expect(r[2]).toBeNull();
    expect(r[4]).toBe(-0.5);
  });
  it('AND short-circuits: x IS NOT NULL AND 1/x > 0 with x = 0 guarded', async () => {
    const notZero: Expr = { kind: 'logical', type: T.BOOL, op: 'not', args: [eq(ref(tX), lit(0, T.FLOAT64))] };
    const e: Expr = { kind: 'logical', type: T.BOOL, op: 'and', args: [notZero, gt(div(lit(1, T.FLOAT64), ref(tX)), lit(0, T.FLOAT64))] };
    expect(await proj(e)).toEqual([true, null, false, false, false, true]);
  });
  it('OR three-valued', async () => {
    const e: Expr = { kind: 'logical', type: T.BOOL, op: 'or', args: [gt(ref(tX), lit(1, T.FLOAT64)), isNullE(ref(tG))] };
    expect(await proj(e)).toEqual([true, null, false, true, false, true]);
  });
  it('COALESCE evaluates later arguments only where needed', async () => {
    const e: Expr = { kind: 'conditional', type: T.FLOAT64, op: 'coalesce', whens: [], thens: [ref(tX), div(lit(1, T.FLOAT64), lit(0, T.FLOAT64), true), lit(-1, T.FLOAT64)] };
    expect(await proj(e)).toEqual([1.5, -1, 0, NaN, -2, 3]);
  });
  it('struct, array and field access', async () => {
    const st = structOf([
      { name: 'a', type: T.INT64 },
      { name: 'b', type: T.STRING },
    ]);
    const mk: Expr = { kind: 'make_struct', type: st, fields: [ref(tId), ref(tG)] };
    const fa: Expr = { kind: 'field', type: T.STRING, arg: mk, fieldIndex: 1 };
    expect(await proj(fa)).toEqual(['a', 'b', 'a', null, 'b', null]);
    const arr: Expr = { kind: 'make_array', type: arrayOf(T.INT64), elements: [ref(tId), lit(null, T.INT64)] };
    expect((await proj(arr))[0]).toEqual([1n, null]);
  });
});

describe('aggregate', () => {
  const gk = col('g', T.STRING);
  const s = col('s', T.FLOAT64);
  const c = col('c', T.INT64);
  it('groups with NULL keys together and sums', async () => {
    const rel: Rel = {
      kind: 'aggregate',
      input: tScan(),
      columns: [gk, s, c],
      groupBy: [{ column: gk, expr: ref(tG) }],
      aggregates: [agg(s, 'SUM', AGG.sum(T.FLOAT64), [ref(tX)]), agg(c, 'COUNT', AGG.countStar(), [])],
    };
    const rows = await run(rel);
    expect(rows).toEqual([
      ['a', 1.5, 2n],
      ['b', -2, 2n],
      [null, NaN, 2n],
    ]);
  });
  it('global aggregate over empty input returns one row', async () => {
    const empty: Rel = { kind: 'filter', input: tScan(), columns: [tId, tG, tX], predicate: lit(false, T.BOOL) };
    const rel: Rel = { kind: 'aggregate', input: empty, columns: [c], groupBy: [], aggregates: [agg(c, 'COUNT', AGG.countStar(), [])] };
    expect(await run(rel)).toEqual([[0n]]);
  });
  it('floats: NaN groups together, -0 = +0', async () => {
    const v = col('v', T.FLOAT64);
    const k = col('k', T.FLOAT64);
    const vals: Rel = { kind: 'values', columns: [v], rows: [[lit(NaN, T.FLOAT64)], [lit(-0, T.FLOAT64)], [lit(0, T.FLOAT64)], [lit(NaN, T.FLOAT64)]] };
    const rel: Rel = { kind: 'aggregate', input: vals, columns: [k, c], groupBy: [{ column: k, expr: ref(v) }], aggregates: [agg(c, 'COUNT', AGG.countStar(), [])] };
    const rows = await run(rel);
    expect(rows.length).toBe(2);
    expect(rows.map((r) => r[1])).toEqual([2n, 2n]);
  });
  it('DISTINCT, ORDER BY + LIMIT inside ARRAY_AGG, IGNORE NULLS, HAVING MAX', async () => {
    const a1 = col('a1', arrayOf(T.INT64));
    const a2 = col('a2', arrayOf(T.FLOAT64));
    const a3 = col('a3', arrayOf(T.INT64));
    const cd = col('cd', T.INT64);
    const byX: SortKey = { expr: ref(tX), descending: true, nullsFirst: false };
    const rel: Rel = {
      kind: 'aggregate',
      input: tScan(),
      columns: [a1, a2, a3, cd],
      groupBy: [],
      aggregates: [
        agg(a1, 'ARRAY_AGG', AGG.arrayAgg(T.INT64), [ref(tId)], { orderBy: [byX], limit: 3 }),
        agg(a2, 'ARRAY_AGG', AGG.arrayAgg(T.FLOAT64), [ref(tX)], { ignoreNulls: true, orderBy: [{ expr: ref(tX), descending: false, nullsFirst: true }] }),
        agg(a3, 'ARRAY_AGG', AGG.arrayAgg(T.INT64), [ref(tId)], { having: { max: true, expr: ref(tX) } }),
        agg(cd, 'COUNT', AGG.count(), [ref(tG)], { distinct: true }),
      ],
    };
    const [row] = await run(rel);
    expect(row![0]).toEqual([6n, 1n, 3n]); // x DESC: 3, 1.5, 0 (NaN sorts lowest, NULL last)
    expect(row![1]).toEqual([NaN, -2, 0, 1.5, 3]);
    expect(row![2]).toEqual([]); // x has a NaN: HAVING MAX x is NaN, which no row equals
    expect(row![3]).toBe(2n);
  });
  it('GROUP BY FLOAT64 key: direct-indexed batches, then a growing range, then fractions / NaN / -0 switch to hashing', async () => {
    const fk = col('fk', T.FLOAT64);
    // Batch-sized runs: small integers, a jump far above (index grows), then values that force the hash table.
    const vals: number[] = [];
    for (let i = 0; i < 5000; i++) vals.push(i % 50);
    for (let i = 0; i < 5000; i++) vals.push(300_000 + (i % 7));
    for (let i = 0; i < 5000; i++) vals.push(i % 3 === 0 ? 0.5 : i % 3 === 1 ? NaN : -0);
    vals.push(-1, 2 ** 40);
    cat.addRows(TABLE('fkeys'), [{ name: 'fk', type: T.FLOAT64 }], vals.map((v) => [v]));
    const g = col('g', T.FLOAT64);
    const n = col('n', T.INT64);
    const rel: Rel = { kind: 'aggregate', input: scan('fkeys', [fk]), columns: [g, n], groupBy: [{ column: g, expr: ref(fk) }], aggregates: [agg(n, 'COUNT', AGG.countStar(), [])] };
    const got = new Map((await run(rel)).map((r) => [Object.is(r[0], -0) ? 0 : (r[0] as number), r[1]]));
    const want = new Map<number, bigint>();
    for (const v of vals) {
      const k = Object.is(v, -0) ? 0 : v;
      want.set(k, (want.get(k) ?? 0n) + 1n);
    }
    expect(got).toEqual(want);
  });
  it('COUNT(DISTINCT) over several batches: global (keyed by the argument) and grouped', async () => {
    const dk = col('dk', T.INT64);
    const dg = col('dg', T.INT64);
    // 10,000 rows: k = i % 1000 (every 7th NULL), g = i % 3; a late key outside the first range.
    const rows: Value[][] = Array.from({ length: 10_000 }, (_, i) => [i % 7 === 0 ? null : BigInt(i % 1000), BigInt(i % 3)]);
    rows.push([5_000_000n, 0n]);
    cat.addRows(TABLE('dist'), [{ name: 'dk', type: T.INT64 }, { name: 'dg', type: T.INT64 }], rows);
    const cnt = col('cnt', T.INT64);
    const want = (pred: (r: Value[]) => boolean): bigint => BigInt(new Set(rows.filter((r) => r[0] !== null && pred(r)).map((r) => r[0])).size);
    const global: Rel = { kind: 'aggregate', input: scan('dist', [dk, dg]), columns: [cnt], groupBy: [], aggregates: [agg(cnt, 'COUNT', AGG.count(), [ref(dk)], { distinct: true })] };
    expect(await run(global)).toEqual([[want(() => true)]]);
    const g2 = col('g2', T.INT64);
    const grouped: Rel = { kind: 'aggregate', input: scan('dist', [dk, dg]), columns: [g2, cnt], groupBy: [{ column: g2, expr: ref(dg) }], aggregates: [agg(cnt, 'COUNT', AGG.count(), [ref(dk)], { distinct: true })] };
    const got = (await run(grouped)).sort((a, b) => Number((a[0] as bigint) - (b[0] as bigint)));
    expect(got).toEqual([0n, 1n, 2n].map((g) => [g, want((r) => r[1] === g)]));
  });
  it('grouping sets (ROLLUP) with GROUPING()', async () => {
    const gg = col('gg', T.INT64);
    const rel: Rel = {
      kind: 'aggregate',
      input: tScan(),
      columns: [gk, c, gg],
      groupBy: [{ column: gk, expr: ref(tG) }],
      aggregates: [agg(c, 'COUNT', AGG.countStar(), [])],
      groupingSets: [[0], []],
      groupingCalls: [{ column: gg, keyIndex: 0 }],
    };
    const rows = await run(rel);
    expect(rows).toContainEqual([null, 6n, 1n]);
    expect(rows).toContainEqual([null, 2n, 0n]);
    expect(rows).toContainEqual(['a', 2n, 0n]);
    expect(rows.length).toBe(4);
    // COUNT(*) as the analyzer names it ($count_star) agrees, grand total included.
    expect(await run(asCountStar(rel))).toEqual(rows);
  });
  it('$count_star: NULL keys, dense keys turning hashed mid-batch, empty input with a grand total, global counts', async () => {
    const grouped: Rel = {
      kind: 'aggregate',
      input: tScan(),
      columns: [gk, s, c],
      groupBy: [{ column: gk, expr: ref(tG) }],
      aggregates: [agg(s, 'SUM', AGG.sum(T.FLOAT64), [ref(tX)]), agg(c, 'COUNT', AGG.countStar(), [])],
    };
    expect(await run(asCountStar(grouped))).toEqual(await run(grouped));
    const fk = col('fk', T.FLOAT64);
    // Integers, then a fraction inside a batch: rows placed densely before it are counted once.
    const vals: number[] = [];
    for (let i = 0; i < 6000; i++) vals.push(i === 5000 ? 0.25 : i % 10);
    cat.addRows(TABLE('fkeys2'), [{ name: 'fk', type: T.FLOAT64 }], vals.map((v) => [v]));
    const g = col('g', T.FLOAT64);
    const n = col('n', T.INT64);
    const byKey: Rel = { kind: 'aggregate', input: scan('fkeys2', [fk]), columns: [g, n], groupBy: [{ column: g, expr: ref(fk) }], aggregates: [agg(n, '$count_star', AGG.countStar(), [])] };
    const got = new Map((await run(byKey)).map((r) => [r[0] as number, r[1]]));
    expect(got.get(0.25)).toBe(1n);
    expect(got.get(0)).toBe(599n); // rows 0, 10, ..., 5990 except row 5000
    expect(got.get(3)).toBe(600n);
    const empty: Rel = { kind: 'filter', input: tScan(), columns: [tId, tG, tX], predicate: lit(false, T.BOOL) };
    const rollup: Rel = { kind: 'aggregate', input: empty, columns: [gk, c], groupBy: [{ column: gk, expr: ref(tG) }], aggregates: [agg(c, '$count_star', AGG.countStar(), [])], groupingSets: [[0], []] };
    expect(await run(rollup)).toEqual([[null, 0n]]);
    // Global: the number of input rows, over several batches and over none.
    const global: Rel = { kind: 'aggregate', input: scan('fkeys2', [fk]), columns: [n], groupBy: [], aggregates: [agg(n, '$count_star', AGG.countStar(), [])] };
    expect(await run(global)).toEqual([[6000n]]);
    expect(await run({ ...global, input: { kind: 'filter', input: scan('fkeys2', [fk]), columns: [fk], predicate: lit(false, T.BOOL) } })).toEqual([[0n]]);
  });
});

/** The plan with every COUNT(*) named as the analyzer names it (a global one is then the input row count). */
function asCountStar(rel: Rel): Rel {
  if (rel.kind !== 'aggregate') return rel;
  return { ...rel, aggregates: rel.aggregates.map((a) => (a.name === 'COUNT' && a.args.length === 0 ? { ...a, name: '$count_star' } : a)) };
}

describe('sort', () => {
  it('NULLs first ascending, NaN before numbers, stable', async () => {
    const rel: Rel = { kind: 'sort', input: tScan(), columns: [tId, tG, tX], keys: [{ expr: ref(tX), descending: false, nullsFirst: true }] };
    expect((await run(rel)).map((r) => r[0])).toEqual([2n, 4n, 5n, 3n, 1n, 6n]);
  });
  it('descending puts NULLs last; multi-key', async () => {
    const rel: Rel = {
      kind: 'sort',
      input: tScan(),
      columns: [tId, tG, tX],
      keys: [
        { expr: ref(tG), descending: true, nullsFirst: false },
        { expr: ref(tId), descending: true, nullsFirst: false },
      ],
    };
    expect((await run(rel)).map((r) => r[0])).toEqual([5n, 2n, 3n, 1n, 6n, 4n]);
  });
  it('top-N', async () => {
    const rel: Rel = { kind: 'sort', input: tScan(), columns: [tId, tG, tX], keys: [{ expr: ref(tId), descending: true, nullsFirst: false }], limit: 2 };
    expect((await run(rel)).map((r) => r[0])).toEqual([6n, 5n]);
  });
  it('top-N equals a full sort + limit on 20k rows with ties and NULLs', async () => {
    const n = 20000;
    const ka = col('a', T.INT64);
    const kb = col('b', T.FLOAT64);
    const vals: Value[][] = [];
    for (let i = 0; i < n; i++) vals.push([BigInt((i * 7919) % 37), i % 11 === 0 ? null : ((i * 104729) % 1000) / 10]);
    cat.addRows(TABLE('topn'), [{ name: 'a', type: T.INT64 }, { name: 'b', type: T.FLOAT64 }], vals);
    const keys: SortKey[] = [
      { expr: ref(kb), descending: true, nullsFirst: false },
      { expr: ref(ka), descending: false, nullsFirst: true },
    ];
    const base: Rel = { kind: 'sort', input: scan('topn', [ka, kb]), columns: [ka, kb], keys };
    const full = (await run(base)).slice(0, 150);
    expect(await run({ ...base, limit: 150 })).toEqual(full);
  });
  it('STRING by code point', async () => {
    const s = col('s', T.STRING);
    const vals: Rel = { kind: 'values', columns: [s], rows: [['\u{1F600}'], ['\uFFFD'], ['a']].map((r) => [lit(r[0]!, T.STRING)]) };
    const rel: Rel = { kind: 'sort', input: vals, columns: [s], keys: [{ expr: ref(s), descending: false, nullsFirst: true }] };
    expect((await run(rel)).map((r) => r[0])).toEqual(['a', '\uFFFD', '\u{1F600}']);
  });
});

describe('joins', () => {
  const uK = col('k', T.STRING);
  const uV = col('v', T.INT64);
  cat.addRows(
    TABLE('u'),
    [
      { name: 'k', type: T.STRING },
      { name: 'v', type: T.INT64 },
    ],
    [
      ['a', 10n],
      ['a', 11n],
      ['c', 30n],
      [null, 99n],
    ],
  );
  const uScan = (): Rel => scan('u', [uK, uV]);
  const join = (joinType: JoinRel['joinType'], condition?: Expr): JoinRel => ({
    kind: 'join',
    joinType,
    left: tScan(),
    right: uScan(),
    columns: joinType === 'semi' || joinType === 'anti' ? [tId, tG, tX] : [tId, tG, tX, uK, uV],
    condition,
    lateral: false,
  });
  const on = (): Expr => eq(ref(tG), ref(uK));
  it('inner (keys extracted from the condition), NULL keys never match', async () => {
    const rows = await run(join('inner', on()));
    expect(rows.map((r) => [r[0], r[4]])).toEqual([
      [1n, 10n],
      [1n, 11n],
      [3n, 10n],
      [3n, 11n],
    ]);
  });
  it('inner join builds on the smaller (left) side and keeps column order', async () => {
    const rel: JoinRel = { kind: 'join', joinType: 'inner', left: uScan(), right: tScan(), columns: [uK, uV, tId, tG, tX], condition: eq(ref(uK), ref(tG)), lateral: false };
    const rows = (await run(rel)).map((r) => [r[0], r[1], r[2]]);
    expect(rows.sort((a, b) => Number((a[1] as bigint) - (b[1] as bigint)) || Number((a[2] as bigint) - (b[2] as bigint)))).toEqual([
      ['a', 10n, 1n],
      ['a', 10n, 3n],
      ['a', 11n, 1n],
      ['a', 11n, 3n],
    ]);
  });
  it('left / right / full', async () => {
    expect((await run(join('left', on()))).length).toBe(4 + 4);
    const right = await run(join('right', on()));
    expect(right.filter((r) => r[0] === null).map((r) => r[4])).toEqual([30n, 99n]);
    expect((await run(join('full', on()))).length).toBe(4 + 4 + 2);
  });
  it('semi / anti', async () => {
    expect((await run(join('semi', on()))).map((r) => r[0])).toEqual([1n, 3n]);
    expect((await run(join('anti', on()))).map((r) => r[0])).toEqual([2n, 4n, 5n, 6n]);
  });
  it('residual condition and non-equi (nested loop) join', async () => {
    const cond: Expr = { kind: 'logical', type: T.BOOL, op: 'and', args: [on(), gt(ref(uV), lit(10n, T.INT64))] };
    expect((await run(join('left', cond))).map((r) => [r[0], r[4]])).toEqual([
      [1n, 11n],
      [2n, null],
      [3n, 11n],
      [4n, null],
      [5n, null],
      [6n, null],
    ]);
    const nl = await run(join('inner', lt(ref(tId), lit(2n, T.INT64))));
    expect(nl.length).toBe(4);
    expect((await run(join('cross'))).length).toBe(24);
  });
  it('many-to-many keys beyond one probe chunk', async () => {
    const lk = col('lk', T.INT64);
    const rk = col('rk', T.INT64);
    cat.addRows(TABLE('mm_l'), [{ name: 'lk', type: T.INT64 }], Array.from({ length: 5000 }, (_, i) => [BigInt(i % 2)]));
    cat.addRows(TABLE('mm_r'), [{ name: 'rk', type: T.INT64 }], Array.from({ length: 100 }, () => [1n]));
    const c = col('c', T.INT64);
    const j: Rel = { kind: 'join', joinType: 'inner', left: scan('mm_l', [lk]), right: scan('mm_r', [rk]), columns: [lk, rk], lateral: false, equiKeys: [{ left: ref(lk), right: ref(rk), nullSafe: false }] };
    const rel: Rel = { kind: 'aggregate', input: j, columns: [c], groupBy: [], aggregates: [agg(c, 'COUNT', AGG.countStar(), [])] };
    expect(await run(rel)).toEqual([[250000n]]);
    const lj = await collect({ ...j, joinType: 'left' }, ctx());
    expect(lj.reduce((s, b) => s + b.length, 0)).toBe(250000 + 2500);
  });
  it('pruned join outputs (planner dropped columns only the condition reads) equal the full rows projected', async () => {
    // Keep tId and uV: the key columns tG / uK are read only by the condition.
    const cases: [JoinRel['joinType'], Expr | undefined][] = [
      ['inner', on()],
      ['left', on()],
      ['right', on()],
      ['full', on()],
      ['semi', on()],
      ['anti', on()],
      // A residual takes the project-after path.
      ['left', { kind: 'logical', type: T.BOOL, op: 'and', args: [on(), gt(ref(uV), lit(10n, T.INT64))] }],
      ['inner', lt(ref(tId), lit(3n, T.INT64))],
    ];
    for (const [jt, cond] of cases) {
      const full = join(jt, cond);
      const semi = jt === 'semi' || jt === 'anti';
      const pruned: JoinRel = { ...full, columns: semi ? [tId] : [tId, uV] };
      const want = (await run(full)).map((r) => (semi ? [r[0]] : [r[0], r[4]]));
      const got = await run(pruned);
      expect(got, `${jt}`).toEqual(want);
    }
    // Smaller left input: the inner join builds on the left (swapped path), then projects.
    const swapped: JoinRel = { kind: 'join', joinType: 'inner', left: uScan(), right: tScan(), columns: [uK, uV, tId, tG, tX], condition: eq(ref(uK), ref(tG)), lateral: false };
    const wantSw = (await run(swapped)).map((r) => [r[1], r[2]]);
    expect(await run({ ...swapped, columns: [uV, tId] })).toEqual(wantSw);
  });
  it('null-safe equi keys match NULLs', async () => {
    const rel: JoinRel = { ...join('inner'), equiKeys: [{ left: ref(tG), right: ref(uK), nullSafe: true }] };
    expect((await run(rel)).map((r) => r[0])).toEqual([1n, 1n, 3n, 3n, 4n, 6n]);
  });
  it('lateral UNNEST fast path and correlated general path', async () => {
    const a = col('arr', arrayOf(T.INT64));
    const base: Rel = {
      kind: 'values',
      columns: [a],
      rows: [[lit([1n, 2n], arrayOf(T.INT64))], [lit([], arrayOf(T.INT64))], [lit(null, arrayOf(T.INT64))], [lit([3n], arrayOf(T.INT64))]],
    };
    const e = col('e', T.INT64);
    const off = col('off', T.INT64);
    const un: Rel = { kind: 'unnest', columns: [e, off], arrays: [ref(a, true)], elements: [e], offset: off };
    const inner: JoinRel = { kind: 'join', joinType: 'inner', left: base, right: un, columns: [a, e, off], lateral: true };
    expect((await run(inner)).map((r) => [r[1], r[2]])).toEqual([
      [1n, 0n],
      [2n, 1n],
      [3n, 0n],
    ]);
    const left = await run({ ...inner, joinType: 'left' });
    expect(left.map((r) => r[1])).toEqual([1n, 2n, null, null, 3n]);
    // General path: a correlated filter over a scan on the right side.
    const general: JoinRel = {
      kind: 'join',
      joinType: 'inner',
      left: tScan(),
      right: { kind: 'filter', input: uScan(), columns: [uK, uV], predicate: eq(ref(uK), ref(tG, true)) },
      columns: [tId, tG, tX, uK, uV],
      lateral: true,
    };
    expect((await run(general)).map((r) => r[4])).toEqual([10n, 11n, 10n, 11n]);
  });
});

describe('subqueries', () => {
  const uK = col('k2', T.STRING);
  const uV = col('v2', T.INT64);
  const uScan = (): Rel => scan('u', [uK, uV]);
  const proj = async (e: Expr): Promise<Value[]> => {
    const o = col('o', e.type);
    return (await run({ kind: 'project', input: tScan(), columns: [o], exprs: [e] })).map((r) => r[0]!);
  };
  it('correlated scalar subquery (per distinct binding)', async () => {
    const m = col('m', T.INT64);
    const plan: Rel = {
      kind: 'aggregate',
      input: { kind: 'filter', input: uScan(), columns: [uK, uV], predicate: eq(ref(uK), ref(tG, true)) },
      columns: [m],
      groupBy: [],
      aggregates: [agg(m, 'MAX', AGG.max(T.INT64), [ref(uV)])],
    };
    const e: Expr = { kind: 'subquery', type: T.INT64, mode: 'scalar', plan, correlatedColumns: [tG.id] };
    expect(await proj(e)).toEqual([11n, null, 11n, null, null, null]);
  });
  it('scalar subquery with more than one row raises', async () => {
    const e: Expr = { kind: 'subquery', type: T.INT64, mode: 'scalar', plan: uScan(), correlatedColumns: [] };
    await expect(proj(e)).rejects.toThrow('Scalar subquery produced more than one element');
  });
  it('EXISTS, ARRAY and IN with NULL semantics', async () => {
    const ex: Expr = {
      kind: 'subquery',
      type: T.BOOL,
      mode: 'exists',
      plan: { kind: 'filter', input: uScan(), columns: [uK, uV], predicate: eq(ref(uK), ref(tG, true)) },
      correlatedColumns: [tG.id],
    };
    expect(await proj(ex)).toEqual([true, false, true, false, false, false]);
    const kOnly = col('k3', T.STRING);
    const kPlan: Rel = { kind: 'project', input: uScan(), columns: [kOnly], exprs: [ref(uK)] };
    const inE: Expr = { kind: 'subquery', type: T.BOOL, mode: 'in', plan: kPlan, inExpr: ref(tG), correlatedColumns: [] };
    // 'a' found; 'b' not found but the set holds NULL -> NULL; NULL lhs -> NULL.
    expect(await proj(inE)).toEqual([true, null, true, null, null, null]);
    const arr: Expr = { kind: 'subquery', type: arrayOf(T.INT64), mode: 'array', plan: { kind: 'project', input: uScan(), columns: [col('v', T.INT64)], exprs: [ref(uV)] }, correlatedColumns: [] };
    expect((await proj(arr))[0]).toEqual([10n, 11n, 30n, 99n]);
  });
});

describe('window', () => {
  const w = (name: string, extra: Partial<WindowCall> = {}, type: SqlType = T.INT64): WindowCall => ({
    column: col(name.toLowerCase(), type),
    name,
    args: [],
    distinct: false,
    ignoreNulls: undefined,
    partitionBy: [ref(tG)],
    orderBy: [{ expr: ref(tId), descending: false, nullsFirst: true }],
    ...extra,
  });
  it('numbering, navigation and aggregates', async () => {
    const calls: WindowCall[] = [
      w('ROW_NUMBER'),
      w('LAG', { args: [ref(tId)] }),
      w('SUM', { args: [ref(tId)], aggregate: AGG.sum(T.INT64) }),
      w('COUNT', { args: [], aggregate: AGG.countStar(), orderBy: [] }),
      w('FIRST_VALUE', { args: [ref(tX)], ignoreNulls: true }, T.FLOAT64),
      w('ARRAY_AGG', { args: [ref(tId)], aggregate: AGG.arrayAgg(T.INT64), frame: { unit: 'ROWS', start: { type: 'preceding', offset: lit(1n, T.INT64) }, end: { type: 'current_row' } } }, arrayOf(T.INT64)),
    ];
    const rel: Rel = { kind: 'window', input: tScan(), columns: [tId, tG, tX, ...calls.map((c) => c.column)], calls };
    const rows = await run(rel);
    const byId = new Map(rows.map((r) => [r[0], r.slice(3)]));
    expect(byId.get(1n)).toEqual([1n, null, 1n, 2n, 1.5, [1n]]);
    expect(byId.get(3n)).toEqual([2n, 1n, 4n, 2n, 1.5, [1n, 3n]]);
    expect(byId.get(2n)).toEqual([1n, null, 2n, 2n, null, [2n]]);
    expect(byId.get(6n)).toEqual([2n, 4n, 10n, 2n, NaN, [4n, 6n]]);
  });
  it('RANK / DENSE_RANK / NTILE / PERCENTILE_CONT over the whole input', async () => {
    const calls: WindowCall[] = [
      w('RANK', { partitionBy: [], orderBy: [{ expr: ref(tG), descending: false, nullsFirst: true }] }),
      w('DENSE_RANK', { partitionBy: [], orderBy: [{ expr: ref(tG), descending: false, nullsFirst: true }] }),
      w('NTILE', { partitionBy: [], args: [lit(4n, T.INT64)] }),
      w('PERCENTILE_CONT', { partitionBy: [], orderBy: [], args: [ref(tId), lit(0.5, T.FLOAT64)] }, T.FLOAT64),
    ];
    const rel: Rel = { kind: 'window', input: tScan(), columns: [tId, tG, tX, ...calls.map((c) => c.column)], calls };
    const rows = await run(rel);
    expect(rows.map((r) => r[3])).toEqual([3n, 5n, 3n, 1n, 5n, 1n]);
    expect(rows.map((r) => r[4])).toEqual([2n, 3n, 2n, 1n, 3n, 1n]);
    expect(rows.map((r) => r[5])).toEqual([1n, 1n, 2n, 2n, 3n, 4n]);
    expect(rows.every((r) => r[6] === 3.5)).toBe(true);
  });
  it('RANGE frame with offsets', async () => {
    const c = w('SUM', {
      partitionBy: [],
      args: [ref(tId)],
      aggregate: AGG.sum(T.INT64),
      frame: { unit: 'RANGE', start: { type: 'preceding', offset: lit(1n, T.INT64) }, end: { type: 'following', offset: lit(1n, T.INT64) } },
    });
    const rows = await run({ kind: 'window', input: tScan(), columns: [tId, tG, tX, c.column], calls: [c] });
    expect(rows.map((r) => r[3])).toEqual([3n, 6n, 9n, 12n, 15n, 11n]);
  });
});

describe('set operations, unnest, CTEs, sample', () => {
  const a = col('a', T.INT64);
  const vals = (xs: (bigint | null)[]): Rel => ({ kind: 'values', columns: [a], rows: xs.map((x) => [lit(x, T.INT64)]) });
  const setop = (op: 'union' | 'intersect' | 'except', all: boolean): Rel => ({
    kind: 'setop',
    op,
    all,
    columns: [a],
    inputs: [vals([1n, 1n, 2n, null, null]), vals([1n, null, 3n])],
  });
  const sorted = async (r: Rel): Promise<Value[]> => (await run(r)).map((x) => x[0]!).sort((x, y) => (x === null ? -1 : y === null ? 1 : Number(x) - Number(y)));
  it('UNION / INTERSECT / EXCEPT with ALL multiplicities', async () => {
    expect(await sorted(setop('union', true))).toEqual([null, null, null, 1n, 1n, 1n, 2n, 3n]);
    expect(await sorted(setop('union', false))).toEqual([null, 1n, 2n, 3n]);
    expect(await sorted(setop('intersect', true))).toEqual([null, 1n]);
    expect(await sorted(setop('intersect', false))).toEqual([null, 1n]);
    expect(await sorted(setop('except', true))).toEqual([null, 1n, 2n]);
    expect(await sorted(setop('except', false))).toEqual([2n]);
  });
  it('multi-array UNNEST zips with NULL padding', async () => {
    const e1 = col('e1', T.INT64);
    const e2 = col('e2', T.STRING);
    const rel: Rel = {
      kind: 'unnest',
      columns: [e1, e2],
      arrays: [lit([1n, 2n, 3n], arrayOf(T.INT64)), lit(['x'], arrayOf(T.STRING))],
      elements: [e1, e2],
    };
    expect(await run(rel)).toEqual([
      [1n, 'x'],
      [2n, null],
      [3n, null],
    ]);
  });
  it('WITH materializes once; recursive CTE iterates; guard raises', async () => {
    const n = col('n', T.INT64);
    const ref1 = col('n', T.INT64);
    const step: Rel = {
      kind: 'project',
      input: { kind: 'filter', input: { kind: 'cte_ref', cteId: 7, columns: [ref1], cteColumns: [n] }, columns: [ref1], predicate: lt(ref(ref1), lit(5n, T.INT64)) },
      columns: [n],
      exprs: [add(ref(ref1), lit(1n, T.INT64))],
    };
    const rec: Rel = { kind: 'recursive_cte', cteId: 7, base: { kind: 'values', columns: [n], rows: [[lit(1n, T.INT64)]] }, recursive: step, columns: [n] };
    const outRef = col('n', T.INT64);
    const w: Rel = { kind: 'with', ctes: [{ id: 7, name: 'r', plan: rec }], body: { kind: 'cte_ref', cteId: 7, columns: [outRef], cteColumns: [n] }, columns: [outRef] };
    expect((await run(w)).map((r) => r[0])).toEqual([1n, 2n, 3n, 4n, 5n]);
    const forever: Rel = { ...rec, recursive: { kind: 'project', input: { kind: 'cte_ref', cteId: 7, columns: [ref1], cteColumns: [n] }, columns: [n], exprs: [add(ref(ref1), lit(1n, T.INT64))] } };
    await expect(run(forever)).rejects.toThrow(/maximum number of iterations/);
  });
  it('sample keeps all at 100% and none at 0%', async () => {
    expect((await run({ kind: 'sample', input: tScan(), columns: [tId, tG, tX], percent: 100 })).length).toBe(6);
    expect((await run({ kind: 'sample', input: tScan(), columns: [tId, tG, tX], percent: 0 })).length).toBe(0);
  });
});

describe('scheduling and results', () => {
  it('cancellation raises the stopped error', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(collect(tScan(), testContext(cat, ac.signal))).rejects.toThrow(/Job execution was cancelled/);
  });
  it('cancellation between batches stops the statement at the next batch, with the reason', async () => {
    const big = new MemoryCatalog();
    const n = col('n', T.INT64);
    big.addTable(TABLE('big'), [{ name: 'n', type: T.INT64 }], [{ type: T.INT64, length: 3 * 4096, data: new Float64Array(3 * 4096), nulls: null }]);
    const ac = new AbortController();
    const it = executeRel(scan('big', [n]), testContext(big, ac.signal))[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    ac.abort('stopped by the test');
    await expect(it.next()).rejects.toThrow('Job execution was cancelled: stopped by the test');
  });
  it('arrays with NULL elements are rejected in results', () => {
    const t = arrayOf(T.INT64);
    const b = { length: 1, columns: [{ type: t, length: 1, data: [[1n, null]], nulls: null }] };
    expect(() => checkResultArrays([{ name: 'nullable_ints', type: t }], [b])).toThrow('Array cannot have a null element; error in writing field nullable_ints');
  });
});

describe('more edge cases', () => {
  it('dense integer join keys: NULLs, out-of-range and exact-INT64 (BigInt) probe values', async () => {
    const a = col('a', T.INT64);
    const b = col('b', T.INT64);
    const left: Rel = { kind: 'values', columns: [a], rows: [[lit(1n, T.INT64)], [lit(null, T.INT64)], [lit(2n ** 60n, T.INT64)], [lit(3n, T.INT64)], [lit(-5n, T.INT64)]] };
    const right: Rel = { kind: 'values', columns: [b], rows: [[lit(3n, T.INT64)], [lit(1n, T.INT64)], [lit(null, T.INT64)], [lit(1n, T.INT64)]] };
    const j: Rel = { kind: 'join', joinType: 'left', left, right, columns: [a, b], lateral: false, equiKeys: [{ left: ref(a), right: ref(b), nullSafe: false }] };
    expect(await run(j)).toEqual([
      [1n, 1n],
      [1n, 1n],
      [null, null],
      [2n ** 60n, null],
      [3n, 3n],
      [-5n, null],
    ]);
  });
  it('unique dense build keys: a leading run of matches, then misses and matches (inner and left)', async () => {
    const a = col('a', T.INT64);
    const b = col('b', T.INT64);
    const v = col('v', T.INT64);
    const keys = [1n, 2n, 3n, 100n, 2n, 0n, 3n, 7n];
    const left: Rel = { kind: 'values', columns: [a], rows: keys.map((k) => [lit(k, T.INT64)]) };
    const right: Rel = { kind: 'values', columns: [b, v], rows: [1n, 2n, 3n, 7n].map((k) => [lit(k, T.INT64), lit(k * 10n, T.INT64)]) };
    const inner: Rel = { kind: 'join', joinType: 'inner', left, right, columns: [a, b, v], lateral: false, equiKeys: [{ left: ref(a), right: ref(b), nullSafe: false }] };
    const want = keys.flatMap((k) => (k === 100n || k === 0n ? [] : [[k, k, k * 10n]]));
    expect(await run(inner)).toEqual(want);
    const outer: Rel = { ...inner, joinType: 'left' };
    expect(await run(outer)).toEqual(keys.map((k) => (k === 100n || k === 0n ? [k, null, null] : [k, k, k * 10n])));
  });
  it('GROUP BY STRUCT and ARRAY keys', async () => {
    const s = col('s', arrayOf(T.INT64));
    const k = col('k', arrayOf(T.INT64));
    const c = col('c', T.INT64);
    const vals: Rel = { kind: 'values', columns: [s], rows: [[lit([1n, 2n], arrayOf(T.INT64))], [lit([1n, 2n], arrayOf(T.INT64))], [lit([2n, 1n], arrayOf(T.INT64))], [lit(null, arrayOf(T.INT64))]] };
    const rel: Rel = { kind: 'aggregate', input: vals, columns: [k, c], groupBy: [{ column: k, expr: ref(s) }], aggregates: [agg(c, 'COUNT', AGG.countStar(), [])] };
    expect(await run(rel)).toEqual([
      [[1n, 2n], 2n],
      [[2n, 1n], 1n],
      [null, 1n],
    ]);
  });
  it('window RANGE frame over a DESC key', async () => {
    const c: WindowCall = {
      column: col('s', T.INT64),
      name: 'SUM',
      args: [ref(tId)],
      aggregate: AGG.sum(T.INT64),
      distinct: false,
      ignoreNulls: undefined,
      partitionBy: [],
      orderBy: [{ expr: ref(tId), descending: true, nullsFirst: false }],
      frame: { unit: 'RANGE', start: { type: 'preceding', offset: lit(1n, T.INT64) }, end: { type: 'current_row' } },
    };
    const rows = await run({ kind: 'window', input: tScan(), columns: [tId, tG, tX, c.column], calls: [c] });
    // DESC: "1 PRECEDING" of id is id + 1.
    expect(rows.map((r) => [r[0], r[3]])).toEqual([
      [1n, 3n],
      [2n, 5n],
      [3n, 7n],
      [4n, 9n],
      [5n, 11n],
      [6n, 6n],
    ]);
  });
  it('subquery inside a CASE branch and a correlated subquery on a lateral right side', async () => {
    const uK = col('k4', T.STRING);
    const uV = col('v4', T.INT64);
    const m = col('m', T.INT64);
    const maxV: Rel = {
      kind: 'aggregate',
      input: { kind: 'filter', input: scan('u', [uK, uV]), columns: [uK, uV], predicate: eq(ref(uK), ref(tG, true)) },
      columns: [m],
      groupBy: [],
      aggregates: [agg(m, 'MAX', AGG.max(T.INT64), [ref(uV)])],
    };
    const sub: Expr = { kind: 'subquery', type: T.INT64, mode: 'scalar', plan: maxV, correlatedColumns: [tG.id] };
    const e: Expr = { kind: 'conditional', type: T.INT64, op: 'case', whens: [gt(ref(tId), lit(2n, T.INT64))], thens: [sub], else: lit(-1n, T.INT64) };
    const o = col('o', T.INT64);
    expect((await run({ kind: 'project', input: tScan(), columns: [o], exprs: [e] })).map((r) => r[0])).toEqual([-1n, -1n, 11n, null, null, null]);
  });
  it('lambda handles evaluate bodies that read the enclosing row', async () => {
    const { evaluateLambda } = await import('./expr.js');
    const p = col('e', T.INT64);
    const lam: Expr = { kind: 'lambda', type: T.INT64, params: [p], body: add(ref(p), lit(1n, T.INT64)) };
    const out = evaluateLambda(lam as Extract<Expr, { kind: 'lambda' }>, [{ type: T.INT64, length: 2, data: Float64Array.of(1, 2), nulls: null }], ctx());
    expect(Array.from(out.data as Float64Array)).toEqual([2, 3]);
  });
});

describe('CTE sharing, ARRAY scans and seeded samples', () => {
  it('a CTE referenced twice is computed once', async () => {
    const c1 = col('id', T.INT64);
    const r1 = col('id', T.INT64);
    const r2 = col('id', T.INT64);
    cat.addRows(TABLE('once'), [{ name: 'id', type: T.INT64 }], [[1n], [2n]]);
    const before = cat.scans.get('once') ?? 0;
    const body: Rel = {
      kind: 'setop',
      op: 'union',
      all: true,
      columns: [r1],
      inputs: [
        { kind: 'cte_ref', cteId: 42, columns: [r1], cteColumns: [c1] },
        { kind: 'cte_ref', cteId: 42, columns: [r2], cteColumns: [c1] },
      ],
    };
    const w: Rel = { kind: 'with', ctes: [{ id: 42, name: 'c', plan: scan('once', [c1]) }], body, columns: [r1] };
    expect((await run(w)).map((r) => r[0])).toEqual([1n, 2n, 1n, 2n]);
    expect(cat.scans.get('once')! - before).toBe(1);
  });
  it('array_scan spreads STRUCT fields over columns', async () => {
    const st = structOf([
      { name: 'a', type: T.INT64 },
      { name: 'b', type: T.STRING },
    ]);
    const a = col('a', T.INT64);
    const b = col('b', T.STRING);
    const rel: Rel = { kind: 'array_scan', columns: [a, b], array: lit([[1n, 'x'], [2n, null], null], arrayOf(st)) };
    expect(await run(rel)).toEqual([
      [1n, 'x'],
      [2n, null],
      [null, null],
    ]);
  });
  it('REPEATABLE samples are deterministic', async () => {
    const s1 = await run({ kind: 'sample', input: tScan(), columns: [tId, tG, tX], percent: 50, seed: 7 });
    const s2 = await run({ kind: 'sample', input: tScan(), columns: [tId, tG, tX], percent: 50, seed: 7 });
    expect(s1).toEqual(s2);
  });
});

describe('lazy subqueries', () => {
  it('a subquery in a CASE branch runs only for the rows that take the branch', async () => {
    const uK = col('k5', T.STRING);
    const uV = col('v5', T.INT64);
    const vOnly = col('v', T.INT64);
    const plan: Rel = {
      kind: 'project',
      input: { kind: 'filter', input: scan('u', [uK, uV]), columns: [uK, uV], predicate: eq(ref(uK), ref(tG, true)) },
      columns: [vOnly],
      exprs: [ref(uV)],
    };
    // For g = 'a' the subquery yields two rows (an error if it ran); only g = 'b' rows reach it.
    const sub: Expr = { kind: 'subquery', type: T.INT64, mode: 'scalar', plan, correlatedColumns: [tG.id] };
    const e: Expr = { kind: 'conditional', type: T.INT64, op: 'case', whens: [eq(ref(tG), lit('b', T.STRING))], thens: [sub], else: lit(-1n, T.INT64) };
    const o = col('o', T.INT64);
    expect((await run({ kind: 'project', input: tScan(), columns: [o], exprs: [e] })).map((r) => r[0])).toEqual([-1n, null, -1n, -1n, null, -1n]);
    const never: Expr = { kind: 'logical', type: T.BOOL, op: 'and', args: [lit(false, T.BOOL), { kind: 'subquery', type: T.BOOL, mode: 'scalar', plan: { ...plan, columns: [col('b', T.BOOL)], exprs: [lit(true, T.BOOL)] }, correlatedColumns: [tG.id] }] };
    const ob = col('ob', T.BOOL);
    expect((await run({ kind: 'project', input: tScan(), columns: [ob], exprs: [never] })).every((r) => r[0] === false)).toBe(true);
  });
});
