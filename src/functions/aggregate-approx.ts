// Approximate aggregates (APPROX_COUNT_DISTINCT, APPROX_QUANTILES, APPROX_TOP_*:
// exact answers) and KLL_QUANTILES sketches (exact-value sketches: made,
// merged and read by the KLL_QUANTILES.* functions).
import { T, arrayOf, isGroupable, structOf, typeToSql } from '../types/types.js';
import { Decimal, type Value } from '../types/values.js';
import { compareValues, valueKey } from './compare.js';
import { fitDecimal } from './numeric.js';
import type { ArgInfo, EvalContext } from './registry.js';
import { asig, defineAggregate, named, type SigContext } from './signature.js';
import { fail } from './vec.js';
import { DistinctCountAcc, collect, toNum } from './aggregate-collect.js';

// ---------------------------------------------------------------- approximate (exact answers)

/** A literal count below 1 is refused when the query is analyzed, as the reference does (a parameter fails when it runs). */
const atLeastOne = (fn: string, pos: number) => (args: readonly ArgInfo[]): string | undefined => {
  const a = args[pos - 1];
  return a?.isLiteral && typeof a.constant?.value === 'bigint' && a.constant.value < 1n ? `Argument ${pos} to ${fn} must be at least 1` : undefined;
};

/** The first argument's type must support grouping (the signature's must_support_grouping), in the reference's words. */
export const groupable = (fn: string, single: boolean) => (args: readonly ArgInfo[]): string | undefined => {
  const t = args[0]?.type;
  return t && !isGroupable(t) ? `${single ? 'The argument' : 'Argument 1'} to ${fn} must support grouping; Type ${typeToSql(t)} does not` : undefined;
};

export function registerApprox(): void {
  defineAggregate('APPROX_COUNT_DISTINCT', [
    asig(['ANY'], 'INT64', (c) => () => new DistinctCountAcc(c.argTypes[0]!)),
  ], { validate: groupable('APPROX_COUNT_DISTINCT', true) });
  defineAggregate('APPROX_QUANTILES', [
    asig(['ANY', 'INT64'], (c) => arrayOf(c.argTypes[0]!), collect((rows, _c, o) => {
      if (rows.length === 0) return null;
      const nq = rows[0]![1];
      if (nq === null || nq === undefined) fail('The second argument to APPROX_QUANTILES function must not be NULL');
      const k = Number(nq as bigint);
      if (k <= 0) fail('The second argument to APPROX_QUANTILES function must be positive');
      if (k > 100000) fail('The second argument to APPROX_QUANTILES function cannot be greater than 100000');
      let vals = rows.map((r) => r[0]!);
      if (o.ignoreNulls !== false) vals = vals.filter((x) => x !== null);
      if (vals.length === 0) return null;
      vals.sort(compareValues);
      const out: Value[] = [];
      const n = vals.length;
      for (let i = 0; i <= k; i++) {
        // Exact quantile ranks: ceil(i*n/k)-1 clamped, matching the reference's exact mode.
        let idx = Math.ceil((i * n) / k) - 1;
        if (idx < 0) idx = 0;
        if (idx >= n) idx = n - 1;
        out.push(vals[idx]!);
      }
      return out;
    })),
  ], {
    // approximate_aggregate_functions (APPROX_QUANTILES): any type except ARRAY, STRUCT and INTERVAL.
    validate: (args) => {
      const t = args[0]?.type;
      if (t && (t.kind === 'ARRAY' || t.kind === 'STRUCT' || t.kind === 'INTERVAL')) return `APPROX_QUANTILES does not support arguments of type ${typeToSql(t)}`;
      return atLeastOne('APPROX_QUANTILES', 2)(args);
    },
  });
  const topType = (c: Omit<SigContext, 'returnType'>, second: string) =>
    arrayOf(structOf([{ name: 'value', type: c.argTypes[0]! }, { name: second, type: second === 'count' ? T.INT64 : c.argTypes[1]! }]));
  const topN = (rows: Value[][], fn: string): number => {
    const nv = rows[0]![rows[0]!.length - 1];
    if (nv === null || nv === undefined) fail(`The second argument to ${fn} function must not be NULL`);
    const k = Number(nv as bigint);
    if (k <= 0) fail(`The second argument to ${fn} function must be positive`);
    if (k > 100000) fail(`The second argument to ${fn} function cannot be greater than 100000`);
    return k;
  };
  defineAggregate('APPROX_TOP_COUNT', [
    asig(['ANY', 'INT64'], (c) => topType(c, 'count'), collect((rows) => {
      if (rows.length === 0) return null;
      const k = topN(rows, 'APPROX_TOP_COUNT');
      const m = new Map<string, { v: Value; n: number; first: number }>();
      rows.forEach((r, i) => {
        const key = valueKey(r[0]!);
        const e = m.get(key);
        if (e) e.n++;
        else m.set(key, { v: r[0]!, n: 1, first: i });
      });
      return [...m.values()].sort((a, b) => b.n - a.n || a.first - b.first).slice(0, k).map((e) => [e.v, BigInt(e.n)]);
    })),
  ], { validate: (a) => groupable('APPROX_TOP_COUNT', false)(a) ?? atLeastOne('APPROX_TOP_COUNT', 2)(a) });
  // The weights' sums overflow as SUM does.
  const checkedInt64 = (x: bigint): bigint => (x > 9223372036854775807n || x < -9223372036854775808n ? fail('int64 overflow') : x);
  const checkedDecimal = (x: Decimal, t: string): Decimal => fitDecimal(x, t === 'NUMERIC' ? 'NUMERIC' : 'BIGNUMERIC') ?? fail(`${t === 'NUMERIC' ? 'numeric' : 'BIGNUMERIC'} overflow: APPROX_TOP_SUM`);
  const topSum = (t: string) =>
    asig(['ANY', t, 'INT64'], (c) => topType(c, 'sum'), collect((rows) => {
      if (rows.length === 0) return null;
      const k = topN(rows, 'APPROX_TOP_SUM');
      const m = new Map<string, { v: Value; s: Value; first: number }>();
      rows.forEach((r, i) => {
        const w = r[1]!;
        if (w !== null && (toNum(w) < 0 || Number.isNaN(toNum(w)))) fail(`APPROX_TOP_SUM does not support negative or NaN weights in the second argument; got ${String(w)}`);
        const key = valueKey(r[0]!);
        const e = m.get(key);
        const add = (a: Value, b: Value): Value => (b === null ? a : a === null ? b : typeof a === 'bigint' ? checkedInt64(a + (b as bigint)) : a instanceof Decimal ? checkedDecimal(a.plus(b as Decimal), t) : (a as number) + (b as number));
        if (e) e.s = add(e.s, w);
        else m.set(key, { v: r[0]!, s: w, first: i });
      });
      return [...m.values()]
        .sort((a, b) => {
          const x = a.s === null ? -Infinity : toNum(a.s);
          const y = b.s === null ? -Infinity : toNum(b.s);
          return y - x || a.first - b.first;
        })
        .slice(0, k)
        .map((e) => [e.v, e.s]);
    }));
  defineAggregate('APPROX_TOP_SUM', [topSum('INT64'), topSum('NUMERIC'), topSum('BIGNUMERIC'), topSum('FLOAT64')], { validate: (a) => groupable('APPROX_TOP_SUM', false)(a) ?? atLeastOne('APPROX_TOP_SUM', 3)(a) });

}

export type { EvalContext };

// ---------------------------------------------------------------- KLL_QUANTILES.* (exact-value sketches)

/**
 * A sketch keeps every value with its weight (INIT's weight =>), so its quantiles are exact ranks. The bytes are
 * 'KLLX1:' + JSON [kind, ...entries]: an entry is a value of weight 1, or [value, weight]. INT64 values are written
 * as decimal strings (exact past 2^53; older sketches hold numbers), FLOAT64 NaN and infinities as strings.
 */
const KLL_MAGIC = 'KLLX1:';
export type KllValue = bigint | number;
export interface KllSketch {
  kind: string;
  /** [value, weight] pairs, in no order. */
  entries: [KllValue, number][];
}
const kllText = (v: KllValue): string | number => (typeof v === 'bigint' ? String(v) : Number.isFinite(v) ? v : String(v));
function kllEncode(sk: KllSketch): Uint8Array {
  const out: unknown[] = [sk.kind];
  for (const [v, w] of sk.entries) out.push(w === 1 ? kllText(v) : [kllText(v), w]);
  return new TextEncoder().encode(KLL_MAGIC + JSON.stringify(out));
}
/**
 * A sketch's underlying type and entries. kll_functions: a sketch whose underlying type differs from the one the
 * function reads (`want`: EXTRACT_INT64 of a FLOAT64 sketch, MERGE_FLOAT64 of an INT64 one) is an error.
 */
export function kllDecode(b: Uint8Array, fn: string, want?: string): KllSketch {
  const s = new TextDecoder().decode(b);
  if (!s.startsWith(KLL_MAGIC)) fail(`Invalid or incompatible sketch in ${fn}`);
  let arr: unknown;
  try {
    arr = JSON.parse(s.slice(KLL_MAGIC.length));
  } catch {
    fail(`Invalid or incompatible sketch in ${fn}`);
  }
  if (!Array.isArray(arr) || (arr[0] !== 'INT64' && arr[0] !== 'FLOAT64')) fail(`Invalid or incompatible sketch in ${fn}`);
  const kind = arr[0] as string;
  if (want !== undefined && kind !== want) fail(`Invalid or incompatible sketch in ${fn}: the sketch holds ${kind} values, not ${want}`);
  const value = (x: unknown): KllValue => {
    if (kind === 'INT64' && (typeof x === 'string' || typeof x === 'number')) return BigInt(x);
    if (kind === 'FLOAT64' && (typeof x === 'number' || typeof x === 'string')) return Number(x);
    return fail(`Invalid or incompatible sketch in ${fn}`);
  };
  const entries = arr.slice(1).map((e): [KllValue, number] => (Array.isArray(e) ? [value(e[0]), Number(e[1])] : [value(e), 1]));
  return { kind, entries };
}
/** The floating point sort order (kll_functions): NaN before -inf. */
function kllCompare(a: KllValue, b: KllValue): number {
  if (typeof a === 'bigint' || typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : -1;
  if (Number.isNaN(b)) return 1;
  return a - b;
}
/** The value at 1-based weighted rank `rank` of sorted entries. */
function kllAtRank(sorted: readonly [KllValue, number][], rank: number): KllValue {
  let seen = 0;
  for (const [v, w] of sorted) {
    seen += w;
    if (seen >= rank) return v;
  }
  return sorted[sorted.length - 1]![0];
}
const kllTotal = (sorted: readonly [KllValue, number][]): number => sorted.reduce((n, e) => n + e[1], 0);
export function kllSort(entries: [KllValue, number][]): [KllValue, number][] {
  return entries.slice().sort((a, b) => kllCompare(a[0], b[0]));
}
/** n+1 quantile boundaries of sorted entries (exact weighted ranks, as APPROX_QUANTILES). */
export function kllQuantiles(sorted: readonly [KllValue, number][], n: number): KllValue[] {
  // Checked here for EXTRACT_* and MERGE_* alike (0 quantiles would divide by zero below).
  if (!(n > 0)) fail('The number of quantiles must be positive');
  const W = kllTotal(sorted);
  const out: KllValue[] = [];
  for (let i = 0; i <= n; i++) out.push(kllAtRank(sorted, Math.min(W, Math.max(1, Math.ceil((i * W) / n)))));
  return out;
}
export function kllPoint(sorted: readonly [KllValue, number][], phi: number): KllValue {
  if (!(phi >= 0 && phi <= 1)) fail('The phi argument must be between 0 and 1');
  const W = kllTotal(sorted);
  return kllAtRank(sorted, Math.min(W, Math.max(1, Math.ceil(phi * W))));
}

/** The sketches' entries, sorted; every sketch of one underlying type, and of `want` where the function names one (MERGE_INT64 ...). */
function kllMerged(rows: Value[][], fn: string, want?: string): { kind: string | null; sorted: [KllValue, number][] } {
  let kind: string | null = null;
  const entries: [KllValue, number][] = [];
  for (const r of rows) {
    if (r[0] === null) continue;
    const sk = kllDecode(r[0] as Uint8Array, fn, want);
    if (kind !== null && sk.kind !== kind) fail(`Invalid or incompatible sketch in ${fn}`);
    kind = sk.kind;
    for (const e of sk.entries) entries.push(e);
  }
  return { kind, sorted: kllSort(entries) };
}

const KLL_MAX_WEIGHT = 2147483647;
export function registerKll(): void {
  // kll_functions: INIT_*(input [, precision [, weight => input_weight]]); precision 1..100,000, weight 1..2,147,483,647.
  const init = (t: 'INT64' | 'FLOAT64') =>
    asig([t, { type: 'INT64', optional: true }, named('weight', 'INT64')], 'BYTES', collect((rows, c) => {
      const wAt = c.assign.indexOf(2);
      const pAt = c.assign.indexOf(1);
      const entries: [KllValue, number][] = [];
      for (const r of rows) {
        if (pAt >= 0) {
          const p = r[pAt];
          if (p !== null && (p as bigint < 1n || (p as bigint) > 100000n)) fail(`The precision of KLL_QUANTILES.INIT_${t} must be between 1 and 100000, but got ${p}`);
        }
        let w = 1;
        if (wAt >= 0) {
          const wv = r[wAt];
          if (wv === null || (wv as bigint) < 1n || (wv as bigint) > BigInt(KLL_MAX_WEIGHT)) fail(`The weight of KLL_QUANTILES.INIT_${t} must be between 1 and ${KLL_MAX_WEIGHT}, but got ${wv === null ? 'NULL' : wv}`);
          w = Number(wv as bigint);
        }
        const x = r[0];
        if (x === null) continue;
        entries.push([t === 'INT64' ? (x as bigint) : (x as number), w]);
      }
      return entries.length === 0 ? null : kllEncode({ kind: t, entries });
    }));
  defineAggregate('KLL_QUANTILES.INIT_INT64', [init('INT64')]);
  defineAggregate('KLL_QUANTILES.INIT_FLOAT64', [init('FLOAT64')], { aliases: ['KLL_QUANTILES.INIT_DOUBLE'] });
  defineAggregate('KLL_QUANTILES.MERGE_PARTIAL', [
    asig(['BYTES'], 'BYTES', collect((rows) => {
      const m = kllMerged(rows, 'KLL_QUANTILES.MERGE_PARTIAL');
      return m.kind === null ? null : kllEncode({ kind: m.kind, entries: m.sorted });
    })),
  ]);
  const merge = (t: 'INT64' | 'FLOAT64') =>
    asig(['BYTES', 'INT64'], `ARRAY<${t}>`, collect((rows) => {
      const m = kllMerged(rows, `KLL_QUANTILES.MERGE_${t}`, t);
      if (m.kind === null || m.sorted.length === 0) return null;
      return kllQuantiles(m.sorted, Number(rows[0]![1] as bigint));
    }));
  defineAggregate('KLL_QUANTILES.MERGE_INT64', [merge('INT64')]);
  defineAggregate('KLL_QUANTILES.MERGE_FLOAT64', [merge('FLOAT64')], { aliases: ['KLL_QUANTILES.MERGE_DOUBLE'] });
  const mergePoint = (t: 'INT64' | 'FLOAT64') =>
    asig(['BYTES', 'FLOAT64'], t, collect((rows) => {
      const m = kllMerged(rows, `KLL_QUANTILES.MERGE_POINT_${t}`, t);
      if (m.kind === null || m.sorted.length === 0) return null;
      return kllPoint(m.sorted, rows[0]![1] as number);
    }));
  defineAggregate('KLL_QUANTILES.MERGE_POINT_INT64', [mergePoint('INT64')]);
  defineAggregate('KLL_QUANTILES.MERGE_POINT_FLOAT64', [mergePoint('FLOAT64')], { aliases: ['KLL_QUANTILES.MERGE_POINT_DOUBLE'] });
}
