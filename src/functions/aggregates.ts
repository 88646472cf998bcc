// Aggregate functions as GroupsAccumulators. COUNT, SUM, AVG, MIN, MAX,
// COUNTIF, LOGICAL_*, BIT_* run here as typed-array loops over group ids; the
// long tail (ARRAY_AGG, STRING_AGG: aggregate-collect.ts; statistics:
// aggregate-stats.ts; approximations and KLL: aggregate-approx.ts) collects
// values per group through a generic adapter and finalizes each group once.
// registerAggregates registers them all.
import { registerDp } from './aggregate-dp.js';
import { T, arrayOf, isOrderable, typeToSql, type SqlType } from '../types/types.js';
import { Decimal, Interval, type Value } from '../types/values.js';
import { compareWords, decimalOfWords, decimalScale, type DecimalWidth } from '../types/decimal-words.js';
import { getValue, vectorFromValues, type Int64Data, type IntervalView, type Vector } from '../types/vector.js';
import { compareValues } from './compare.js';
import { fitDecimal } from './numeric.js';
import { makeInterval } from './interval.js';
import type { GroupsAccumulator } from './registry.js';
import { asig, defineAggregate, type AccumulatorMaker, type MatchResult } from './signature.js';
import { MAX_ROW_BYTES, rowTooLarge } from '../types/errors.js';
import { approxBytes, fail } from './vec.js';
import { registerApprox, registerKll } from './aggregate-approx.js';
import { registerStats } from './aggregate-stats.js';
import { stringAggCollect, StringAggAcc, ArrayAggAcc, collect } from './aggregate-collect.js';
import { intervalKeys } from './interval-range-kernels.js';

function growF64(a: Float64Array<ArrayBuffer>, n: number, fill = 0): Float64Array<ArrayBuffer> {
  if (a.length >= n) return a;
  const b = new Float64Array(Math.max(n, a.length * 2));
  b.set(a);
  if (fill !== 0) b.fill(fill, a.length);
  return b;
}
function growU8(a: Uint8Array<ArrayBuffer>, n: number): Uint8Array<ArrayBuffer> {
  if (a.length >= n) return a;
  const b = new Uint8Array(Math.max(n, a.length * 2));
  b.set(a);
  return b;
}

const notNull = (v: Vector, i: number): boolean => v.nulls === null || v.nulls[i] === 0;

// ---------------------------------------------------------------- COUNT

/** The group id shared by all n rows, or -1 when they differ (or n = 0). */
function singleGroup(groups: Int32Array, n: number): number {
  if (n === 0) return -1;
  const g0 = groups[0]!;
  for (let i = 1; i < n; i++) if (groups[i] !== g0) return -1;
  return g0;
}

/** At least n group ids all `g` (updateGroup's fallback to update(), which reads the first n; never written). */
let sameGroups = new Int32Array(0);
function groupsOf(g: number, n: number): Int32Array {
  if (sameGroups.length < n || (n > 0 && sameGroups[0] !== g)) sameGroups = new Int32Array(Math.max(n, 4096)).fill(g);
  return sameGroups;
}

class CountAcc implements GroupsAccumulator {
  counts = new Float64Array(16);
  constructor(private readonly star: boolean) {}
  resize(n: number): void {
    this.counts = growF64(this.counts, n);
  }
  update(args: readonly Vector[], groups: Int32Array, n: number): void {
    const c = this.counts;
    const nulls = this.star || args.length === 0 ? null : args[0]!.nulls;
    if (nulls === null) {
      // One group for the whole batch (global aggregates): no per-row read-modify-write.
      const g0 = singleGroup(groups, n);
      if (g0 >= 0) {
        c[g0]! += n;
        return;
      }
    }
    if (this.star || args.length === 0) {
      for (let i = 0; i < n; i++) c[groups[i]!]!++;
      return;
    }
    if (nulls === null) for (let i = 0; i < n; i++) c[groups[i]!]!++;
    else for (let i = 0; i < n; i++) if (nulls[i] === 0) c[groups[i]!]!++;
  }
  updateGroup(args: readonly Vector[], group: number, n: number): void {
    const nulls = this.star || args.length === 0 ? null : args[0]!.nulls;
    let k = n;
    if (nulls !== null) for (let i = 0; i < n; i++) k -= nulls[i]!;
    this.counts[group]! += k;
  }
  finish(numGroups: number): Vector {
    return { type: T.INT64, length: numGroups, data: this.counts.slice(0, numGroups), nulls: null };
  }
  finishView(numGroups: number): Vector {
    this.resize(numGroups);
    return { type: T.INT64, length: numGroups, data: this.counts.subarray(0, numGroups), nulls: null };
  }
}

class CountIfAcc implements GroupsAccumulator {
  counts = new Float64Array(16);
  resize(n: number): void {
    this.counts = growF64(this.counts, n);
  }
  update(args: readonly Vector[], groups: Int32Array, n: number): void {
    const v = args[0]!;
    const d = v.data as Uint8Array;
    const c = this.counts;
    for (let i = 0; i < n; i++) if (d[i] === 1 && notNull(v, i)) c[groups[i]!]!++;
  }
  finish(numGroups: number): Vector {
    return { type: T.INT64, length: numGroups, data: this.counts.slice(0, numGroups), nulls: null };
  }
}

// ---------------------------------------------------------------- SUM / AVG

class SumInt64Acc implements GroupsAccumulator {
  sums = new Float64Array(16);
  seen = new Uint8Array(16);
  /** Groups whose running sum left ±2^53 keep it in `big` (flagged in isBig: no sparse-array reads on the hot path). */
  isBig = new Uint8Array(16);
  big = new Map<number, bigint>();
  constructor(private readonly avg: boolean) {}
  counts = new Float64Array(16);
  resize(n: number): void {
    this.sums = growF64(this.sums, n);
    this.seen = growU8(this.seen, n);
    this.isBig = growU8(this.isBig, n);
    this.counts = growF64(this.counts, n);
  }
  private addBig(g: number, x: bigint): void {
    const cur = this.isBig[g] ? this.big.get(g)! : BigInt(this.sums[g]!);
    this.big.set(g, cur + x);
    this.isBig[g] = 1;
    this.sums[g] = 0;
  }
  update(args: readonly Vector[], groups: Int32Array, n: number): void {
    const v = args[0]!;
    const d = v.data as Int64Data;
    const s = this.sums;
    const seen = this.seen;
    const counts = this.counts;
    const isBig = this.isBig;
    const nulls = v.nulls;
    if (d instanceof Float64Array) {
      const g0 = nulls === null && n > 0 ? singleGroup(groups, n) : -1;
      if (g0 >= 0 && this.foldOne(d, g0, n)) return;
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) continue;
        const g = groups[i]!;
        seen[g] = 1;
        counts[g]!++;
        if (isBig[g] === 0) {
          const r = s[g]! + d[i]!;
          // Stay on doubles while the running sum is provably exact.
          if (r < 9007199254740992 && r > -9007199254740992) {
            s[g] = r;
            continue;
          }
        }
        this.addBig(g, BigInt(d[i]!));
      }
      return;
    }
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const g = groups[i]!;
      seen[g] = 1;
      counts[g]!++;
      this.addBig(g, d[i]!);
    }
  }
  /**
   * One group for the whole (NULL-free) batch: the running sum kept in a
   * register. False (nothing folded) when it would leave ±2^53.
   */
  private foldOne(d: Float64Array, g: number, n: number): boolean {
    if (this.isBig[g] !== 0) return false;
    let r = this.sums[g]!;
    let i = 0;
    for (; i < n; i++) {
      r += d[i]!;
      if (!(r < 9007199254740992 && r > -9007199254740992)) break;
    }
    if (i < n) return false;
    this.sums[g] = r;
    this.seen[g] = 1;
    this.counts[g]! += n;
    return true;
  }
  updateGroup(args: readonly Vector[], group: number, n: number): void {
    const v = args[0]!;
    if (n > 0 && v.nulls === null && v.data instanceof Float64Array && this.foldOne(v.data, group, n)) return;
    this.update(args, groupsOf(group, n), n);
  }
  finish(numGroups: number): Vector {
    const out = new Array<Value>(numGroups);
    for (let g = 0; g < numGroups; g++) {
      if (!this.seen[g]) {
        out[g] = null;
        continue;
      }
      const b = this.isBig[g] ? this.big.get(g) : undefined;
      if (this.avg) {
        out[g] = (b !== undefined ? Number(b) : this.sums[g]!) / this.counts[g]!;
        continue;
      }
      if (b !== undefined) {
        if (b > 9223372036854775807n || b < -9223372036854775808n) fail('int64 overflow');
        out[g] = b;
      } else out[g] = BigInt(this.sums[g]!);
    }
    return vectorFromValues(this.avg ? T.FLOAT64 : T.INT64, out);
  }
}

/** Neumaier summation: st = [sum, compensation]; the long double reference loses less than plain doubles. */
function addCompensated(st: [number, number], x: number): void {
  const t = st[0] + x;
  st[1] += Math.abs(st[0]) >= Math.abs(x) ? st[0] - t + x : x - t + st[0];
  st[0] = t;
}

/**
 * SumFloatAcc's NULL-free SUM loop: no per-row count (see SumFloatAcc.counts).
 * Returns the first row whose sum is not finite (n when none), left undone.
 */
function sumDense(s: Float64Array, zeroSeen: Uint8Array, d: Float64Array, groups: Int32Array, n: number): number {
  for (let i = 0; i < n; i++) {
    const g = groups[i]!;
    const r = s[g]! + d[i]!;
    if (r - r !== 0) return i;
    if (r === 0) zeroSeen[g] = 1;
    s[g] = r;
  }
  return n;
}

/** sumDense for rows all in group g: the running sum in a register; returns as sumDense. */
function sumOne(s: Float64Array, d: Float64Array, g: number, n: number): number {
  let r = s[g]!;
  let i = 0;
  for (; i < n; i++) {
    const x = r + d[i]!;
    if (x - x !== 0) break;
    r = x;
  }
  s[g] = r;
  return i;
}

/** SumFloatAcc's loop counting values per group (AVG, or NULLs present); returns as sumDense. */
function sumCounted(s: Float64Array, c: Float64Array, d: Float64Array, nulls: Uint8Array | null, groups: Int32Array, n: number): number {
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const g = groups[i]!;
    const r = s[g]! + d[i]!;
    if (r - r !== 0) return i;
    s[g] = r;
    c[g]!++;
  }
  return n;
}

/** 2^-128: overflowed FLOAT64 sums continue scaled by this (see SumFloatAcc.scaled). */
const SUM_SCALE = 2 ** -128;

class SumFloatAcc implements GroupsAccumulator {
  /**
   * Running sums, starting at -0 (the additive identity: -0 + x is x for every
   * x, +0 included, so sums match a +0 start once finish() maps -0 to +0).
   */
  sums = new Float64Array(16).fill(-0);
  /**
   * Values added per group. SUM's NULL-free loop skips it (a per-row
   * read-modify-write): a group then has values iff its sum left -0 or
   * `zeroSeen` (a running sum of exactly ±0, which -0 cannot tell apart) is set.
   */
  counts = new Float64Array(16);
  zeroSeen = new Uint8Array(16);
  nonFinite = new Uint8Array(16);
  /**
   * Groups whose running sum of finite values left the double range: the
   * reference sums in long double, so an intermediate overflow that later
   * cancels is no error. Such a group continues as a scaled sum; only a final
   * value beyond the double range is "double overflow".
   */
  scaled: Map<number, [number, number]> | null = null;
  /** Whether any value or partial sum was folded in (finishPartial needs none). */
  private folded = false;
  constructor(private readonly avg: boolean) {}
  resize(n: number): void {
    if (this.sums.length < n) {
      const b = new Float64Array(Math.max(n, this.sums.length * 2)).fill(-0);
      b.set(this.sums);
      this.sums = b;
    }
    this.counts = growF64(this.counts, n);
    this.zeroSeen = growU8(this.zeroSeen, n);
    this.nonFinite = growU8(this.nonFinite, n);
  }
  update(args: readonly Vector[], groups: Int32Array, n: number): void {
    const v = args[0]!;
    const d = v.data as Float64Array;
    if (n > 0) this.folded = true;
    // Hot paths while every sum is finite: plain adds; the first non-finite
    // result (a NaN/inf input or an overflow) hands the rest to the full loop.
    if (this.scaled === null) {
      const stop = v.nulls === null && !this.avg ? sumDense(this.sums, this.zeroSeen, d, groups, n) : sumCounted(this.sums, this.counts, d, v.nulls, groups, n);
      if (stop < n) this.updateFrom(v, d, groups, stop, n);
      return;
    }
    this.updateFrom(v, d, groups, 0, n);
  }
  updateGroup(args: readonly Vector[], group: number, n: number): void {
    const v = args[0]!;
    if (n > 0) this.folded = true;
    if (this.scaled === null && v.nulls === null && !this.avg) {
      const d = v.data as Float64Array;
      const stop = sumOne(this.sums, d, group, n);
      // A group with values is flagged as for a zero running sum: finish() reads -0 with the flag as a sum.
      if (stop > 0) this.zeroSeen[group] = 1;
      if (stop < n) this.updateFrom(v, d, groupsOf(group, n), stop, n);
      return;
    }
    this.update(args, groupsOf(group, n), n);
  }
  /** Rows [from, n) with non-finite values and overflow tracking. */
  private updateFrom(v: Vector, d: Float64Array, groups: Int32Array, from: number, n: number): void {
    for (let i = from; i < n; i++) if (notNull(v, i)) this.add(groups[i]!, d[i]!, 1);
  }
  /**
   * Folds per-group partial sums of finite values (the executor's fused
   * COUNT/SUM/AVG loop, operators/aggregate-fused.ts): `sums[g]` over `counts[g]`
   * values, as if those values had been added one by one.
   */
  mergePartial(sums: Float64Array, counts: Float64Array, numGroups: number): void {
    this.resize(numGroups);
    if (numGroups > 0) this.folded = true;
    for (let g = 0; g < numGroups; g++) if (counts[g] !== 0) this.add(g, sums[g]!, counts[g]!);
  }
  /**
   * mergePartial + finish of an accumulator nothing was folded into: each
   * group's finite partial sum is its sum (from -0, as add() would leave it;
   * no values: NULL), without this accumulator's own per-group arrays (at
   * 100M rows a spilled GROUP BY's table of ~25M groups made ~450 MB of them
   * at finish, only to copy the sums through).
   */
  finishPartial(sums: Float64Array, counts: Float64Array, numGroups: number): Vector | null {
    if (this.folded) return null;
    const out = new Float64Array(numGroups);
    let nulls: Uint8Array | null = null;
    for (let g = 0; g < numGroups; g++) {
      const c = counts[g]!;
      if (c === 0) {
        nulls ??= new Uint8Array(numGroups);
        nulls[g] = 1;
        continue;
      }
      // `+ 0`: a sum of only zeros is +0, as in finish().
      const s = sums[g]! + 0;
      if (!Number.isFinite(s)) return null;
      out[g] = this.avg ? s / c : s;
    }
    return { type: T.FLOAT64, length: numGroups, data: out, nulls };
  }
  /** Adds x (`count` values' sum) to group g, tracking non-finite values and overflow. */
  private add(g: number, x: number, count: number): void {
    const s = this.sums;
    if (!Number.isFinite(x)) this.nonFinite[g] = 1;
    const cur = s[g]!;
    const r = cur + x;
    this.counts[g]! += count;
    const sc = this.scaled?.get(g);
    if (sc !== undefined) addCompensated(sc, x * SUM_SCALE);
    else if (r - r !== 0 && cur - cur === 0 && x - x === 0) {
      const st: [number, number] = [cur * SUM_SCALE, 0];
      addCompensated(st, x * SUM_SCALE);
      (this.scaled ??= new Map()).set(g, st);
    }
    s[g] = r;
  }
  finish(numGroups: number): Vector {
    const out = new Float64Array(numGroups);
    let nulls: Uint8Array | null = null;
    for (let g = 0; g < numGroups; g++) {
      const sum = this.sums[g]!;
      if (this.counts[g] === 0 && this.zeroSeen[g] === 0 && Object.is(sum, -0)) {
        nulls ??= new Uint8Array(numGroups);
        nulls[g] = 1;
        continue;
      }
      const sc = this.scaled?.get(g);
      // `+ 0`: a sum of only zeros is +0, as when sums started at +0.
      const s = sc !== undefined && !this.nonFinite[g] ? (sc[0] + sc[1]) / SUM_SCALE : sum + 0;
      if (!Number.isFinite(s) && !this.nonFinite[g]) fail('double overflow');
      out[g] = this.avg ? s / this.counts[g]! : s;
    }
    return { type: T.FLOAT64, length: numGroups, data: out, nulls };
  }
}

/**
 * Exact per-group sums of NUMERIC / BIGNUMERIC decimal words (vector.ts
 * `decimal`): each value's 16-bit halves (of its two's complement) added
 * into per-group number accumulators, carries left for the end, and its
 * negative values counted (each stands for its halves less 2^(32 width));
 * a sum is made once, as a BigInt, when asked for. A half sum stays exact
 * for 2^37 values; SUM never sees that many rows in one accumulator.
 */
class DecimalWordSums {
  private halves = new Float64Array(0);
  private negs = new Float64Array(0);
  private seen = new Uint8Array(0);
  private groups = 0;
  private readonly h: number;
  constructor(private readonly width: DecimalWidth) {
    this.h = 2 * width;
  }
  resize(n: number): void {
    if (n <= this.groups) return;
    const cap = Math.max(n, this.groups * 2, 1);
    const halves = new Float64Array(cap * this.h);
    halves.set(this.halves);
    const negs = new Float64Array(cap);
    negs.set(this.negs);
    const seen = new Uint8Array(cap);
    seen.set(this.seen);
    this.halves = halves;
    this.negs = negs;
    this.seen = seen;
    this.groups = cap;
  }
  add(words: Uint32Array, nulls: Uint8Array | null, groups: Int32Array, n: number, counts: number[]): void {
    const { width, h, halves, negs, seen } = this;
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const g = groups[i]!;
      const at = g * h;
      const base = i * width;
      for (let w = 0; w < width; w++) {
        const x = words[base + w]!;
        halves[at + 2 * w]! += x & 0xffff;
        halves[at + 2 * w + 1]! += x >>> 16;
      }
      if (words[base + width - 1]! >= 0x80000000) negs[g]!++;
      seen[g] = 1;
      counts[g]!++;
    }
  }
  /** Group g's sum (null: no value added). */
  sum(g: number): Decimal | null {
    if (g >= this.groups || this.seen[g] === 0) return null;
    let x = 0n;
    for (let k = this.h - 1; k >= 0; k--) x = (x << 16n) + BigInt(this.halves[g * this.h + k]!);
    x -= BigInt(this.negs[g]!) << BigInt(32 * this.width);
    const scale = decimalScale(this.width);
    const neg = x < 0n;
    const digits = (neg ? -x : x).toString().padStart(scale + 1, '0');
    return new Decimal(`${neg ? '-' : ''}${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`);
  }
}

class SumDecimalAcc implements GroupsAccumulator {
  sums: (Decimal | null)[] = [];
  counts: number[] = [];
  constructor(
    private readonly kind: 'NUMERIC' | 'BIGNUMERIC',
    private readonly avg: boolean,
  ) {}
  resize(n: number): void {
    while (this.sums.length < n) {
      this.sums.push(null);
      this.counts.push(0);
    }
  }
  /** A scan's decimal words summed exactly without Decimals (null until the first such batch). */
  private words: DecimalWordSums | null = null;
  update(args: readonly Vector[], groups: Int32Array, n: number): void {
    const v = args[0]!;
    if (v.decimal) {
      const w = (this.words ??= new DecimalWordSums(v.decimal.width));
      w.resize(this.sums.length);
      w.add(v.decimal.words, v.nulls, groups, n, this.counts);
      return;
    }
    const d = v.data as Value[];
    for (let i = 0; i < n; i++) {
      const x = d[i];
      if (x === null || !notNull(v, i)) continue;
      const g = groups[i]!;
      const cur = this.sums[g];
      this.sums[g] = cur === null || cur === undefined ? (x as Decimal) : cur.plus(x as Decimal);
      this.counts[g]!++;
    }
  }
  finish(numGroups: number): Vector {
    if (this.words) {
      for (let g = 0; g < numGroups; g++) {
        const x = this.words.sum(g);
        if (x === null) continue;
        const cur = this.sums[g];
        this.sums[g] = cur === null || cur === undefined ? x : cur.plus(x);
      }
      this.words = null;
    }
    const out = new Array<Value>(numGroups);
    for (let g = 0; g < numGroups; g++) {
      const s = this.sums[g];
      if (s === null || s === undefined) {
        out[g] = null;
        continue;
      }
      const v = this.avg ? s.div(this.counts[g]!) : s;
      const r = fitDecimal(v, this.kind);
      if (r === undefined) fail(`${this.kind === 'NUMERIC' ? 'numeric' : 'BIGNUMERIC'} overflow: ${this.avg ? 'AVG' : 'SUM'}`);
      out[g] = r;
    }
    return vectorFromValues(T[this.kind], out);
  }
}

// ---------------------------------------------------------------- MIN / MAX

class MinMaxF64Acc implements GroupsAccumulator {
  vals = new Float64Array(16);
  seen = new Uint8Array(16);
  nan = new Uint8Array(16);
  constructor(
    private readonly max: boolean,
    private readonly type: SqlType,
  ) {}
  resize(n: number): void {
    this.vals = growF64(this.vals, n);
    this.seen = growU8(this.seen, n);
    this.nan = growU8(this.nan, n);
  }
  update(args: readonly Vector[], groups: Int32Array, n: number): void {
    const v = args[0]!;
    const d = v.data as ArrayLike<number>;
    const vals = this.vals;
    const seen = this.seen;
    const max = this.max;
    for (let i = 0; i < n; i++) {
      if (v.nulls !== null && v.nulls[i] === 1) continue;
      const g = groups[i]!;
      const x = d[i]!;
      if (x !== x) {
        this.nan[g] = 1;
        continue;
      }
      if (!seen[g]) {
        seen[g] = 1;
        vals[g] = x;
      } else if (max ? x > vals[g]! : x < vals[g]!) vals[g] = x;
    }
  }
  finish(numGroups: number): Vector {
    const out = this.vals.slice(0, numGroups);
    let nulls: Uint8Array | null = null;
    for (let g = 0; g < numGroups; g++) {
      if (this.nan[g]) out[g] = NaN; // any NaN input makes MIN/MAX NaN
      else if (!this.seen[g]) {
        nulls ??= new Uint8Array(numGroups);
        nulls[g] = 1;
      }
    }
    const t = this.type;
    if (t.kind === 'DATE') return { type: t, length: numGroups, data: Int32Array.from(out), nulls };
    if (t.kind === 'BOOL') return { type: t, length: numGroups, data: Uint8Array.from(out), nulls };
    return { type: t, length: numGroups, data: out, nulls };
  }
}

class MinMaxValueAcc implements GroupsAccumulator {
  vals: Value[] = [];
  constructor(
    private readonly max: boolean,
    private readonly type: SqlType,
  ) {}
  resize(n: number): void {
    while (this.vals.length < n) this.vals.push(null);
  }
  /** Per group, the batch's best row so far (-1: none); decimal words batches only. */
  private best = new Int32Array(0);
  update(args: readonly Vector[], groups: Int32Array, n: number): void {
    const v = args[0]!;
    if (v.decimal) return this.updateWords(v, v.decimal.words, v.decimal.width, groups, n);
    if (v.interval) return this.updateIntervals(v, v.interval, groups, n);
    for (let i = 0; i < n; i++) {
      const x = getValue(v, i);
      if (x === null) continue;
      const g = groups[i]!;
      const cur = this.vals[g]!;
      if (cur === null) this.vals[g] = x;
      else {
        const c = compareValues(x, cur);
        if (this.max ? c > 0 : c < 0) this.vals[g] = x;
      }
    }
  }
  /** A scan's decimal words: each group's best row of the batch found on the words, then only that row made a Decimal. */
  private updateWords(v: Vector, words: Uint32Array, width: DecimalWidth, groups: Int32Array, n: number): void {
    this.updateBest(v, groups, n, (i, b) => compareWords(words, i, words, b, width), (r) => decimalOfWords(words, r, width));
  }
  /** A scan's interval parts: each group's best row of the batch found by their keys, then only that row made an Interval. */
  private updateIntervals(v: Vector, iv: IntervalView, groups: Int32Array, n: number): void {
    const keys = intervalKeys(v, n);
    this.updateBest(v, groups, n, (i, b) => (keys[i]! > keys[b]! ? 1 : keys[i]! < keys[b]! ? -1 : 0), (r) => new Interval(iv.months[r]!, iv.days[r]!, iv.micros[r]!));
  }
  /** Each group's best row of the batch by `cmp` (rows of one batch, sign only), then only those rows made values and merged. */
  private updateBest(v: Vector, groups: Int32Array, n: number, cmp: (i: number, b: number) => number, valueAt: (row: number) => Value): void {
    if (this.best.length < this.vals.length) this.best = new Int32Array(this.vals.length).fill(-1);
    const best = this.best;
    const touched: number[] = [];
    const nulls = v.nulls;
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const g = groups[i]!;
      const b = best[g]!;
      if (b < 0) {
        best[g] = i;
        touched.push(g);
      } else {
        const c = cmp(i, b);
        if (this.max ? c > 0 : c < 0) best[g] = i;
      }
    }
    for (const g of touched) {
      const x = valueAt(best[g]!);
      best[g] = -1;
      const cur = this.vals[g]!;
      const c = cur === null ? 0 : compareValues(x, cur);
      if (cur === null || (this.max ? c > 0 : c < 0)) this.vals[g] = x;
    }
  }
  finish(numGroups: number): Vector {
    return vectorFromValues(this.type, this.vals.slice(0, numGroups));
  }
}

// ---------------------------------------------------------------- BOOL / BIT

class LogicalAcc implements GroupsAccumulator {
  state = new Uint8Array(16); // 0 = no input, 1 = false, 2 = true
  constructor(private readonly and: boolean) {}
  resize(n: number): void {
    this.state = growU8(this.state, n);
  }
  update(args: readonly Vector[], groups: Int32Array, n: number): void {
    const v = args[0]!;
    const d = v.data as Uint8Array;
    const s = this.state;
    for (let i = 0; i < n; i++) {
      if (!notNull(v, i)) continue;
      const g = groups[i]!;
      const b = d[i] === 1;
      if (s[g] === 0) s[g] = b ? 2 : 1;
      else if (this.and) {
        if (!b) s[g] = 1;
      } else if (b) s[g] = 2;
    }
  }
  finish(numGroups: number): Vector {
    const out = new Uint8Array(numGroups);
    let nulls: Uint8Array | null = null;
    for (let g = 0; g < numGroups; g++) {
      if (this.state[g] === 0) {
        nulls ??= new Uint8Array(numGroups);
        nulls[g] = 1;
      } else out[g] = this.state[g] === 2 ? 1 : 0;
    }
    return { type: T.BOOL, length: numGroups, data: out, nulls };
  }
}

class BitAcc implements GroupsAccumulator {
  vals: (bigint | null)[] = [];
  constructor(private readonly op: 'and' | 'or' | 'xor') {}
  resize(n: number): void {
    while (this.vals.length < n) this.vals.push(null);
  }
  update(args: readonly Vector[], groups: Int32Array, n: number): void {
    const v = args[0]!;
    for (let i = 0; i < n; i++) {
      const x = getValue(v, i) as bigint | null;
      if (x === null) continue;
      const g = groups[i]!;
      const cur = this.vals[g]!;
      this.vals[g] = cur === null ? x : this.op === 'and' ? cur & x : this.op === 'or' ? cur | x : cur ^ x;
    }
  }
  finish(numGroups: number): Vector {
    return vectorFromValues(T.INT64, this.vals.slice(0, numGroups));
  }
}

// ---------------------------------------------------------------- registration

const ORDERABLE_TYPES = ['INT64', 'FLOAT64', 'NUMERIC', 'BIGNUMERIC', 'BOOL', 'STRING', 'BYTES', 'DATE', 'TIME', 'DATETIME', 'TIMESTAMP', 'TIMESTAMP_PICOS', 'INTERVAL'];

/** MIN/MAX of INT64/TIMESTAMP/DATETIME: doubles while the batches are exact, BigInt per group otherwise. */
class MinMaxI64Acc implements GroupsAccumulator {
  vals = new Float64Array(16);
  seen = new Uint8Array(16);
  big = new Map<number, bigint>();
  constructor(
    private readonly max: boolean,
    private readonly type: SqlType,
  ) {}
  resize(n: number): void {
    this.vals = growF64(this.vals, n);
    this.seen = growU8(this.seen, n);
  }
  private cur(g: number): bigint {
    return this.big.get(g) ?? BigInt(this.vals[g]!);
  }
  update(args: readonly Vector[], groups: Int32Array, n: number): void {
    const v = args[0]!;
    const d = v.data;
    const nulls = v.nulls;
    const vals = this.vals;
    const seen = this.seen;
    const max = this.max;
    if (d instanceof Float64Array && this.big.size === 0) {
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) continue;
        const g = groups[i]!;
        const x = d[i]!;
        if (!seen[g]) {
          seen[g] = 1;
          vals[g] = x;
        } else if (max ? x > vals[g]! : x < vals[g]!) vals[g] = x;
      }
      return;
    }
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const g = groups[i]!;
      const x = d instanceof Float64Array ? BigInt(d[i]!) : (d as BigInt64Array)[i]!;
      if (!seen[g]) {
        seen[g] = 1;
        this.big.set(g, x);
      } else {
        const c = this.cur(g);
        if (max ? x > c : x < c) this.big.set(g, x);
        else if (!this.big.has(g)) this.big.set(g, c);
      }
    }
  }
  finish(numGroups: number): Vector {
    const out = new Array<Value>(numGroups);
    for (let g = 0; g < numGroups; g++) out[g] = this.seen[g] ? this.cur(g) : null;
    return vectorFromValues(this.type, out);
  }
}

function minMaxMaker(max: boolean): AccumulatorMaker {
  return (c) => (_ctx, _o) => {
    const t = c.argTypes[0]!;
    if (t.kind === 'FLOAT64' || t.kind === 'DATE' || t.kind === 'TIME' || t.kind === 'BOOL') return new MinMaxF64Acc(max, t);
    if (t.kind === 'INT64' || t.kind === 'TIMESTAMP' || t.kind === 'DATETIME') return new MinMaxI64Acc(max, t);
    return new MinMaxValueAcc(max, t);
  };
}

export function registerAggregates(): void {
  defineAggregate('$count_star', [asig([], 'INT64', () => () => new CountAcc(true))]);
  defineAggregate('COUNT', [asig(['ANY'], 'INT64', () => () => new CountAcc(false))]);
  defineAggregate('COUNTIF', [asig(['BOOL'], 'INT64', () => () => new CountIfAcc())]);
  defineAggregate('SUM', [
    asig(['INT64'], 'INT64', () => () => new SumInt64Acc(false)),
    asig(['FLOAT64'], 'FLOAT64', () => () => new SumFloatAcc(false)),
    asig(['NUMERIC'], 'NUMERIC', () => () => new SumDecimalAcc('NUMERIC', false)),
    asig(['BIGNUMERIC'], 'BIGNUMERIC', () => () => new SumDecimalAcc('BIGNUMERIC', false)),
    asig(['INTERVAL'], 'INTERVAL', collect((rows) => {
      // Exact sums of each part; a total outside the INTERVAL range is an error.
      let m = 0, d = 0, us = 0n, any = false;
      for (const r of rows) {
        const x = r[0] as Interval | null;
        if (x === null) continue;
        m += x.months;
        d += x.days;
        us += x.micros;
        any = true;
      }
      return any ? makeInterval(m, d, us, 'nanoseconds') : null;
    })),
  ]);
  defineAggregate('AVG', [
    asig(['INT64'], 'FLOAT64', () => () => new SumInt64Acc(true)),
    asig(['FLOAT64'], 'FLOAT64', () => () => new SumFloatAcc(true)),
    asig(['NUMERIC'], 'NUMERIC', () => () => new SumDecimalAcc('NUMERIC', true)),
    asig(['BIGNUMERIC'], 'BIGNUMERIC', () => () => new SumDecimalAcc('BIGNUMERIC', true)),
    asig(['INTERVAL'], 'INTERVAL', collect((rows) => {
      // Sum exactly, then divide each part; remainders cascade months -> days -> micros.
      let m = 0n, d = 0n, us = 0n, n = 0n;
      for (const r of rows) {
        const x = r[0] as Interval | null;
        if (x === null) continue;
        m += BigInt(x.months);
        d += BigInt(x.days);
        us += x.micros;
        n++;
      }
      if (n === 0n) return null;
      const mq = m / n;
      const dTot = d + (m - mq * n) * 30n;
      const dq = dTot / n;
      const usTot = us + (dTot - dq * n) * 86400000000n;
      return new Interval(Number(mq), Number(dq), usTot / n);
    })),
  ]);
  // Every type matches (ANY, last), so that a type without ordering is refused in the
  // service's words: 'MAX is not defined for arguments of type ARRAY<INT64>'.
  const mm = (max: boolean) => [
    ...ORDERABLE_TYPES.map((t) => asig([t], t, minMaxMaker(max))),
    asig(['RANGE'], (c) => c.argTypes[0]!, minMaxMaker(max)),
    asig(['ANY'], (c) => c.argTypes[0]!, minMaxMaker(max)),
  ];
  const orderedOnly = (name: string) => (_args: unknown, m: MatchResult<AccumulatorMaker>): string | undefined => {
    const t = m.argTypes[0]!;
    return isOrderable(t) || t.kind === 'RANGE' ? undefined : `${name} is not defined for arguments of type ${typeToSql(t)}`;
  };
  defineAggregate('MIN', mm(false), { validate: orderedOnly('MIN') });
  defineAggregate('MAX', mm(true), { validate: orderedOnly('MAX') });
  defineAggregate('LOGICAL_AND', [asig(['BOOL'], 'BOOL', () => () => new LogicalAcc(true))]);
  defineAggregate('LOGICAL_OR', [asig(['BOOL'], 'BOOL', () => () => new LogicalAcc(false))]);
  defineAggregate('BIT_AND', [asig(['INT64'], 'INT64', () => () => new BitAcc('and'))]);
  defineAggregate('BIT_OR', [asig(['INT64'], 'INT64', () => () => new BitAcc('or'))]);
  defineAggregate('BIT_XOR', [asig(['INT64'], 'INT64', () => () => new BitAcc('xor'))]);
  defineAggregate('ANY_VALUE', [
    asig(['ANY'], (c) => c.argTypes[0]!, collect((rows) => {
      for (const r of rows) if (r[0] !== null) return r[0]!;
      return null;
    })),
  ]);
  defineAggregate('ARRAY_AGG', [
    asig(['ANY'], (c) => arrayOf(c.argTypes[0]!), (c) => (_ctx, o) => new ArrayAggAcc(c.returnType, o.ignoreNulls === true, o.limit)),
  ], {
    validate: (args, m) => (m.argTypes[0]!.kind === 'ARRAY' ? `The argument to ARRAY_AGG must not be an array type but was ${typeToSql(m.argTypes[0]!)}` : (void args, undefined)),
  });
  defineAggregate('ARRAY_CONCAT_AGG', [
    asig(['ARRAY'], (c) => c.argTypes[0]!, collect((rows, _c, o) => {
      let arrs = rows.map((r) => r[0] as Value[] | null).filter((x) => x !== null) as Value[][];
      if (o.limit !== undefined) arrs = arrs.slice(0, o.limit);
      if (arrs.length === 0) return null;
      // Element by element: a spread of a million arrays overflows the call stack.
      const out: Value[] = [];
      let bytes = 0;
      for (const a of arrs) {
        for (const v of a) {
          if ((bytes += approxBytes(v)) > MAX_ROW_BYTES) throw rowTooLarge();
          out.push(v);
        }
      }
      return out;
    })),
  ]);
  defineAggregate('STRING_AGG', [
    asig(['STRING'], 'STRING', (c) => (_ctx, o) => new StringAggAcc(c.args.length > 1, o.limit)),
    asig(['STRING', 'STRING'], 'STRING', (c) => (_ctx, o) => new StringAggAcc(c.args.length > 1, o.limit)),
    asig(['BYTES'], 'BYTES', stringAggCollect(true)),
    asig(['BYTES', 'BYTES'], 'BYTES', stringAggCollect(true)),
  ], {
    validate: (args) => (args.length > 1 && args[1]!.untypedNull ? 'Argument 2 to STRING_AGG must be non-NULL' : undefined),
  });
  const by = (max: boolean) =>
    collect((rows) => {
      let best: Value[] | null = null;
      for (const r of rows) {
        if (r[1] === null) continue;
        if (best === null) best = r;
        else {
          const c = compareValues(r[1]!, best[1]!);
          if (max ? c > 0 : c < 0) best = r;
        }
      }
      return best === null ? null : best[0]!;
    });
  defineAggregate('MAX_BY', [asig(['ANY', 'ANY'], (c) => c.argTypes[0]!, by(true))], { aliases: ['ARG_MAX'] });
  defineAggregate('MIN_BY', [asig(['ANY', 'ANY'], (c) => c.argTypes[0]!, by(false))], { aliases: ['ARG_MIN'] });
  registerStats();
  registerApprox();
  registerKll();
  registerDp();
}
