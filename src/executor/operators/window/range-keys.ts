// RANGE frame offsets over one numeric ORDER BY key, shared by the in-memory
// window (window.ts) and the spilled sorted stream (sorted.ts) so both frame
// rows alike. Exact types (INT64, NUMERIC, BIGNUMERIC) compare as
// unscaled integers (value x 10^scale): doubles while every key is below 2^53
// in magnitude (the common case, and no allocation per comparison; NUMERIC
// keys Decimals compared with decimal.js took seconds for 200k rows), else
// BigInts. FLOAT64 keys are doubles with FLOAT64 arithmetic.
import { QueryError } from '../../../types/errors.js';
import { bigAt, smallAt } from '../../../types/decimal-words.js';
import { Decimal, type Value } from '../../../types/values.js';
import { getValue, type Vector } from '../../../types/vector.js';
import { lowerBound } from './rows-bound.js';

/**
 * Keys in the order asked for, negated under DESC so that they ascend within
 * a partition; `skip`: NULL and NaN keys (their own peer groups, at the
 * partition's ends). `scale`: null for FLOAT64, else the unscaled integers'
 * scale.
 */
export type RangeKeys =
  | { readonly kind: 'num'; readonly k: Float64Array; readonly skip: Uint8Array; readonly scale: number | null }
  | { readonly kind: 'big'; readonly k: bigint[]; readonly skip: Uint8Array; readonly scale: number };

/** Below this magnitude unscaled keys and key ± offset (offsets clamped to 2^54) compare exactly as doubles. */
const EXACT = 2 ** 53;
const HALF = 2n ** 53n;
const CLAMP = 2n ** 54n;

/** The keys of rows at(0 .. n-1) of `key`, whose type (the analyzer allows these four) is `type`. */
export function rangeKeys(key: Vector, type: string, descending: boolean, n: number, at: (p: number) => number): RangeKeys {
  const skip = new Uint8Array(n);
  const nulls = key.nulls;
  const isNull = (r: number): boolean => nulls !== null && nulls[r] === 1;
  if (type === 'FLOAT64') {
    const src = key.data as Float64Array;
    const k = new Float64Array(n);
    for (let p = 0; p < n; p++) {
      const r = at(p);
      const x = src[r]!;
      if (isNull(r) || x !== x) skip[p] = 1;
      else k[p] = descending ? -x : x;
    }
    return { kind: 'num', k, skip, scale: null };
  }
  if (type === 'INT64') {
    const d = key.data;
    if (d instanceof Float64Array) {
      const k = new Float64Array(n);
      let small = true;
      for (let p = 0; p < n; p++) {
        const r = at(p);
        if (isNull(r)) skip[p] = 1;
        else {
          const x = d[r]!;
          k[p] = descending ? -x : x;
          if (!(x < EXACT && x > -EXACT)) small = false;
        }
      }
      if (small) return { kind: 'num', k, skip, scale: 0 };
      const b: bigint[] = new Array(n);
      for (let p = 0; p < n; p++) b[p] = skip[p] === 1 ? 0n : BigInt(k[p]!);
      return { kind: 'big', k: b, skip, scale: 0 };
    }
    const src = d as BigInt64Array;
    const b: bigint[] = new Array(n);
    for (let p = 0; p < n; p++) {
      const r = at(p);
      if (isNull(r)) {
        skip[p] = 1;
        b[p] = 0n;
      } else b[p] = descending ? -src[r]! : src[r]!;
    }
    return narrowed(b, skip, 0);
  }
  if (type !== 'NUMERIC' && type !== 'BIGNUMERIC') throw new QueryError('RANGE window frame with an offset requires a numeric ORDER BY expression');
  const scale = type === 'NUMERIC' ? 9 : 38;
  // Words, not `data`: reading it would box every key as a Decimal.
  const view = key.decimal;
  if (view !== undefined && view.width === 4) {
    // decimal128 words: most keys read as doubles straight from their words.
    const k = new Float64Array(n);
    let small = true;
    for (let p = 0; p < n && small; p++) {
      const r = at(p);
      if (isNull(r)) skip[p] = 1;
      else {
        const x = smallAt(view.words, r * 4);
        if (!(x < EXACT && x > -EXACT)) small = false;
        else k[p] = descending ? -x : x;
      }
    }
    if (small) return { kind: 'num', k, skip, scale };
  }
  const b: bigint[] = new Array(n);
  for (let p = 0; p < n; p++) {
    const r = at(p);
    if (isNull(r)) {
      skip[p] = 1;
      b[p] = 0n;
      continue;
    }
    const x = view !== undefined ? bigAt(view.words, r * view.width, view.width) : unscaled(getValue(key, r) as Decimal, scale);
    b[p] = descending ? -x : x;
  }
  return narrowed(b, skip, scale);
}

/** value x 10^scale of a Decimal with at most `scale` fraction digits. */
function unscaled(v: Decimal, scale: number): bigint {
  return BigInt(v.toFixed(scale).replace('.', ''));
}

/** BigInt keys as doubles when all are small (exact). */
function narrowed(b: bigint[], skip: Uint8Array, scale: number): RangeKeys {
  const lim = BigInt(EXACT);
  for (let p = 0; p < b.length; p++) if (skip[p] === 0 && (b[p]! >= lim || b[p]! <= -lim)) return { kind: 'big', k: b, skip, scale };
  const k = new Float64Array(b.length);
  for (let p = 0; p < b.length; p++) k[p] = Number(b[p]!);
  return { kind: 'num', k, skip, scale };
}

/**
 * A PRECEDING / FOLLOWING offset in key units: `f` as a double (FLOAT64 keys),
 * `floor` / `ceil` of offset x 10^scale (exact keys; an infinite offset
 * reaches past every key).
 */
export interface RangeOffset {
  readonly f: number;
  readonly floor: bigint;
  readonly ceil: bigint;
}

/** Past every key difference of any exact type (BIGNUMERIC unscaled keys are below 2^255). */
const FAR = 2n ** 300n;

export function rangeOffset(o: Value, scale: number | null): RangeOffset {
  const dec = o instanceof Decimal ? o : typeof o === 'bigint' ? new Decimal(o.toString()) : new Decimal(String(o as number));
  const f = o instanceof Decimal ? o.toNumber() : Number(o as number | bigint);
  if (scale === null || !dec.isFinite()) return { f, floor: FAR, ceil: FAR };
  const s = dec.times(new Decimal(10).pow(scale));
  return { f, floor: BigInt(s.floor().toFixed(0)), ceil: BigInt(s.ceil().toFixed(0)) };
}

/**
 * First position in [lo, hi) whose key is inside row p's bound (`back`:
 * PRECEDING): a start's first key >= key(p) ∓ offset, an end's first key > it. With unscaled
 * integer keys and an offset that is not a whole number of units, the
 * bound rounds inwards: a start after key - offset takes the ceiling
 * (key - floor(offset)), an end before it the floor (key - ceil(offset)).
 */
export function rangeBoundAt(ks: RangeKeys, back: boolean, off: RangeOffset, p: number, lo: number, hi: number, isStart: boolean): number {
  const o = back === isStart ? off.floor : off.ceil;
  if (ks.kind === 'big') return lowerBound(ks.k, back ? ks.k[p]! - o : ks.k[p]! + o, lo, hi, !isStart);
  if (ks.scale === null) return lowerBound(ks.k, back ? ks.k[p]! - off.f : ks.k[p]! + off.f, lo, hi, !isStart);
  // Exact integer keys below 2^53: an offset up to 2^53 is exact and so is key ± offset up to 2^53 (a
  // sum past that, rounded or not, lies past every key); one of 2^54 or more reaches past every key.
  if (o <= HALF || o >= CLAMP) {
    const od = Number(o >= CLAMP ? CLAMP : o);
    return lowerBound(ks.k, back ? ks.k[p]! - od : ks.k[p]! + od, lo, hi, !isStart);
  }
  // In between, the offset itself may not be a double: compare as BigInts.
  const x = back ? BigInt(ks.k[p]!) - o : BigInt(ks.k[p]!) + o;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = BigInt(ks.k[mid]!);
    if (isStart ? v < x : v <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The unscaled integers' scale of a RANGE key type (null: FLOAT64, doubles). */
export function keyScale(type: string): number | null {
  return type === 'FLOAT64' ? null : type === 'NUMERIC' ? 9 : type === 'BIGNUMERIC' ? 38 : 0;
}

/** No reach beyond a row's own key. */
export const NO_REACH: RangeOffset = { f: 0, floor: 0n, ceil: 0n };

/**
 * The farther of two reaches, rounded outwards (floor taken as ceil): what
 * the sorted stream holds by, where holding a row more only costs memory.
 */
export function reachOf(a: RangeOffset | null, b: RangeOffset | null): RangeOffset | null {
  if (a === null || b === null) return a ?? b;
  const c = a.ceil > b.ceil ? a.ceil : b.ceil;
  return { f: Math.max(a.f, b.f), floor: c, ceil: c };
}

/**
 * How far `off` reaches from row p within [lo, hi): ahead, the first
 * position whose key is past key(p) + off (a frame ending there needs the
 * rows before it); behind, the first whose key is at least key(p) - off.
 */
export function rangeReach(ks: RangeKeys, off: RangeOffset, p: number, lo: number, hi: number, ahead: boolean): number {
  return rangeBoundAt(ks, !ahead, off, p, lo, hi, !ahead);
}
