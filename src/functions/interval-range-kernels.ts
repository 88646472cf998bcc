// Kernels over a stored INTERVAL column's parts and a RANGE column's sides
// (Vector.interval / Vector.range, column-chunk.ts) that run without making
// an Interval or a RangeValue per row: comparisons of intervals by their
// normalized key, RANGE_START / RANGE_END (the side itself), RANGE_CONTAINS,
// RANGE_OVERLAPS and RANGE_INTERSECT over the sides (numbers, or the halves of
// 64-bit integers past 2^53). Each returns null when its inputs are not of
// that form (the caller's value kernel then runs, boxing per batch).
import { intervalKey } from './compare.js';
import { mergeNulls } from './vec.js';
import { exactAt, halvesOf, halvesOfDoubles } from './int64-halves.js';
import type { ScalarKernel } from './registry.js';
import { T, type SqlType } from '../types/types.js';
import type { Interval, RangeValue, Value } from '../types/values.js';
import { intervalVector, rangeVector, vectorFromValues, withNullRows, type Vector } from '../types/vector.js';

const DAY_US = 86_400_000_000;

/** A kernel that tries `fast` (null: not its inputs' form) before the row-by-row one. */
export function orRows(fast: (args: readonly Vector[], n: number) => Vector | null, rows: ScalarKernel): ScalarKernel {
  return (args, n, ctx) => fast(args, n) ?? rows(args, n, ctx);
}

/**
 * Intervals' order keys ((months * 30 + days) days + micros, compare.ts's
 * intervalKey) for rows [0, n): doubles when every key is an exact integer
 * there, else BigInts.
 */
export function intervalKeys(v: Vector, n: number): Float64Array | BigInt64Array {
  const iv = v.interval;
  if (!iv) {
    const values = v.data as Value[];
    const keys = new Array<bigint>(n);
    let exact = true;
    // A literal's rows are one object: its key is made once.
    let prev: Value | undefined;
    let key = 0n;
    for (let i = 0; i < n; i++) {
      const x = values[i];
      if (x !== prev) {
        prev = x;
        key = x === null || x === undefined ? 0n : intervalKey(x as Interval);
        if (key > 9007199254740991n || key < -9007199254740991n) exact = false;
      }
      keys[i] = key;
    }
    return exact ? Float64Array.from(keys, Number) : BigInt64Array.from(keys);
  }
  const { months, days, micros } = iv;
  const halves = halvesOf(micros, n);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const us = exactAt(halves, i);
    const d = months[i]! * 30 + days[i]!;
    // Exact while the day part and the micros are below 2^53 and so is their sum.
    if (us !== us || d > 104249 || d < -104249) return bigKeys(iv, n);
    const k = d * DAY_US + us;
    if (k > 9007199254740991 || k < -9007199254740991) return bigKeys(iv, n);
    out[i] = k;
  }
  return out;
}

function bigKeys(iv: NonNullable<Vector['interval']>, n: number): BigInt64Array {
  const out = new BigInt64Array(n);
  for (let i = 0; i < n; i++) out[i] = BigInt(iv.months[i]! * 30 + iv.days[i]!) * 86_400_000_000n + iv.micros[i]!;
  return out;
}

export type CmpOp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';

/** A comparison of INTERVAL rows by their keys, when one side is a stored column's parts; null otherwise. */
export function compareIntervals(op: CmpOp, a: Vector, b: Vector, n: number): Vector | null {
  if (a.type.kind !== 'INTERVAL' || b.type.kind !== 'INTERVAL' || (!a.interval && !b.interval)) return null;
  const nulls = mergeNulls([a, b], n);
  let x: Float64Array | BigInt64Array = intervalKeys(a, n);
  let y: Float64Array | BigInt64Array = intervalKeys(b, n);
  if (x instanceof Float64Array !== y instanceof Float64Array) {
    // One side needs BigInts: both as BigInts.
    if (x instanceof Float64Array) x = BigInt64Array.from(x, BigInt);
    if (y instanceof Float64Array) y = BigInt64Array.from(y, BigInt);
  }
  const out = new Uint8Array(n);
  const cmp = (p: number | bigint, q: number | bigint): boolean => {
    switch (op) {
      case 'eq':
        return p === q;
      case 'ne':
        return p !== q;
      case 'lt':
        return p < q;
      case 'le':
        return p <= q;
      case 'gt':
        return p > q;
      case 'ge':
        return p >= q;
    }
  };
  for (let i = 0; i < n; i++) out[i] = cmp(x[i]!, y[i]!) ? 1 : 0;
  return { type: T.BOOL, length: n, data: out, nulls };
}

/** RANGE_START / RANGE_END of a stored column: its side vector, NULL also where the range is. */
export function rangeSide(args: readonly Vector[], pick: 'start' | 'end'): Vector | null {
  const r = args[0]!.range;
  if (!r) return null;
  const side = r[pick];
  const outer = args[0]!.nulls;
  if (outer === null) return side;
  const nulls = side.nulls ? side.nulls.slice() : new Uint8Array(side.length);
  for (let i = 0; i < nulls.length; i++) if (outer[i] === 1) nulls[i] = 1;
  return withNullRows(side, nulls);
}

interface Sides {
  readonly start: Vector;
  readonly end: Vector;
}

/** A RANGE vector's sides: a stored column's, or made from its values (a literal, a computed range). */
function sidesOf(v: Vector, element: SqlType, n: number): Sides {
  if (v.range) return v.range;
  const values = v.data as Value[];
  const side = (pick: (r: RangeValue) => Value): Vector => vectorFromValues(element, Array.from({ length: n }, (_, i) => (values[i] == null ? null : pick(values[i] as RangeValue))));
  return { start: side((r) => r.start), end: side((r) => r.end) };
}

type Num = Float64Array | Int32Array;
const isNull = (v: Vector, i: number): boolean => v.nulls !== null && v.nulls[i] === 1;

/**
 * The values of a call's side vectors in one comparable form: the numbers
 * themselves when every side is a Float64Array (or every one an Int32Array),
 * else, when a TIMESTAMP / DATETIME side holds BigInts (past 2^53), each side
 * as the 32-bit halves of its 64-bit integers (compared without a BigInt).
 * Null when a side is neither.
 */
type Keys = { readonly num: Num[] } | { readonly halves: Int32Array[] };

function keysOf(sides: readonly Vector[], n: number): Keys | null {
  const datas = sides.map((v) => v.data);
  if (datas.every((d) => d instanceof Float64Array) || datas.every((d) => d instanceof Int32Array)) return { num: datas as Num[] };
  if (!datas.every((d) => d instanceof Float64Array || d instanceof BigInt64Array)) return null;
  return { halves: datas.map((d) => (d instanceof BigInt64Array ? halvesOf(d, n) : halvesOfDoubles(d as Float64Array, n))) };
}

const cmpNum = (x: Num, y: Num, i: number): number => x[i]! - y[i]!;
function cmpHalves(x: Int32Array, y: Int32Array, i: number): number {
  const a = x[2 * i + 1]!;
  const b = y[2 * i + 1]!;
  if (a !== b) return a - b;
  return (x[2 * i]! >>> 0) - (y[2 * i]! >>> 0);
}

/** Row i's comparison (its sign) of side x with side y, in the form the keys took. */
type Cmp = (x: number, y: number, i: number) => number;
function comparer(keys: Keys): Cmp {
  if ('num' in keys) {
    const k = keys.num;
    return (x, y, i) => cmpNum(k[x]!, k[y]!, i);
  }
  const k = keys.halves;
  return (x, y, i) => cmpHalves(k[x]!, k[y]!, i);
}

/**
 * RANGE_CONTAINS(range, point | range) and RANGE_OVERLAPS(range, range)
 * over DATE / DATETIME / TIMESTAMP sides, when the first argument is a
 * stored column; null otherwise.
 */
export function rangeRelation(kind: 'contains' | 'overlaps', args: readonly Vector[], n: number): Vector | null {
  const a = args[0]!;
  const b = args[1]!;
  if (!a.range || a.type.kind !== 'RANGE') return null;
  const as = a.range;
  const nulls = mergeNulls(args, n);
  const out = new Uint8Array(n);
  if (b.type.kind !== 'RANGE') {
    // contains a point: start <= p < end, an unbounded side always passes.
    const keys = keysOf([as.start, as.end, b], n);
    if (!keys) return null;
    const cmp = comparer(keys);
    for (let i = 0; i < n; i++) out[i] = (isNull(as.start, i) || cmp(2, 0, i) >= 0) && (isNull(as.end, i) || cmp(2, 1, i) < 0) ? 1 : 0;
    return { type: T.BOOL, length: n, data: out, nulls };
  }
  const bs = sidesOf(b, a.type.element, n);
  const keys = keysOf([as.start, as.end, bs.start, bs.end], n);
  if (!keys) return null;
  const cmp = comparer(keys);
  for (let i = 0; i < n; i++) {
    const aStart = isNull(as.start, i), aEnd = isNull(as.end, i), bStart = isNull(bs.start, i), bEnd = isNull(bs.end, i);
    if (kind === 'contains') {
      const startOk = aStart || (!bStart && cmp(2, 0, i) >= 0);
      const endOk = aEnd || (!bEnd && cmp(3, 1, i) <= 0);
      out[i] = startOk && endOk ? 1 : 0;
    } else {
      const aBeforeB = !aEnd && !bStart && cmp(1, 2, i) <= 0;
      const bBeforeA = !bEnd && !aStart && cmp(3, 0, i) <= 0;
      out[i] = !aBeforeB && !bBeforeA ? 1 : 0;
    }
  }
  return { type: T.BOOL, length: n, data: out, nulls };
}

/**
 * RANGE_INTERSECT(a, b) when either is a stored column: the later start and
 * the earlier end (an unbounded side gives way to the other), each row's
 * side taken from a or b. Null when the sides are of no known form or a
 * non-NULL row's ranges do not overlap (the row kernel words that error).
 */
export function rangeIntersect(args: readonly Vector[], n: number): Vector | null {
  const a = args[0]!;
  const b = args[1]!;
  if (a.type.kind !== 'RANGE' || (!a.range && !b.range)) return null;
  const element = a.type.element;
  const as = sidesOf(a, element, n);
  const bs = sidesOf(b, element, n);
  const keys = keysOf([as.start, as.end, bs.start, bs.end], n);
  if (!keys) return null;
  const cmp = comparer(keys);
  const nulls = mergeNulls(args, n);
  // Per row: the side each bound comes from, 0 (a), 1 (b) or 2 (unbounded: both are).
  const startFrom = new Uint8Array(n);
  const endFrom = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const aS = isNull(as.start, i), bS = isNull(bs.start, i), aE = isNull(as.end, i), bE = isNull(bs.end, i);
    const s = aS ? (bS ? 2 : 1) : bS || cmp(0, 2, i) >= 0 ? 0 : 1;
    const e = aE ? (bE ? 2 : 1) : bE || cmp(1, 3, i) <= 0 ? 0 : 1;
    if (s !== 2 && e !== 2 && cmp(s === 0 ? 0 : 2, e === 0 ? 1 : 3, i) >= 0) return null;
    startFrom[i] = s;
    endFrom[i] = e;
  }
  const start = pickSide(as.start, bs.start, startFrom, nulls, n);
  const end = pickSide(as.end, bs.end, endFrom, nulls, n);
  return rangeVector(a.type, n, nulls, { start, end });
}

/** Row i of x (from[i] 0) or of y (1), NULL where from[i] is 2 or the row is NULL; in x's layout, BigInts if either holds them. */
function pickSide(x: Vector, y: Vector, from: Uint8Array, rowNulls: Uint8Array | null, n: number): Vector {
  const nulls = new Uint8Array(n);
  let anyNull = false;
  for (let i = 0; i < n; i++) {
    if (from[i] === 2 || (rowNulls !== null && rowNulls[i] === 1)) {
      nulls[i] = 1;
      anyNull = true;
    }
  }
  const xd = x.data;
  const yd = y.data;
  let data: Float64Array | Int32Array | BigInt64Array;
  if (xd instanceof Int32Array && yd instanceof Int32Array) {
    data = new Int32Array(n);
    for (let i = 0; i < n; i++) data[i] = from[i] === 1 ? yd[i]! : from[i] === 0 ? xd[i]! : 0;
  } else if (xd instanceof Float64Array && yd instanceof Float64Array) {
    data = new Float64Array(n);
    for (let i = 0; i < n; i++) data[i] = from[i] === 1 ? yd[i]! : from[i] === 0 ? xd[i]! : 0;
  } else {
    // Copied as 32-bit halves: no BigInt per row.
    data = new BigInt64Array(n);
    const out = halvesOf(data);
    const hx = xd instanceof BigInt64Array ? halvesOf(xd, n) : halvesOfDoubles(xd as Float64Array, n);
    const hy = yd instanceof BigInt64Array ? halvesOf(yd, n) : halvesOfDoubles(yd as Float64Array, n);
    for (let i = 0; i < n; i++) {
      const h = from[i] === 1 ? hy : from[i] === 0 ? hx : null;
      if (h === null) continue;
      out[2 * i] = h[2 * i]!;
      out[2 * i + 1] = h[2 * i + 1]!;
    }
  }
  return { type: x.type, length: n, data, nulls: anyNull ? nulls : null };
}

/** a / d truncated toward zero, exact for integer doubles |a| <= 2^53, d > 0 (the remainder is exact, so is the division of a multiple). */
const quot = (a: number, d: number): number => {
  const q = (a - (a % d)) / d;
  return q === 0 ? 0 : q;
};

/**
 * EXTRACT(part FROM interval) over a stored column's parts (interval.ts
 * extractInterval's arithmetic): INT64 doubles, the micros in doubles while
 * within 2^53, else in BigInt. Null when the input has no parts or the part
 * is not an interval's (the row kernel words the error).
 */
export function extractIntervalParts(part: string, v: Vector, n: number): Vector | null {
  const iv = v.interval;
  if (!iv) return null;
  const parts = ['YEAR', 'MONTH', 'DAY', 'HOUR', 'MINUTE', 'SECOND', 'MILLISECOND', 'MICROSECOND'];
  const p = parts.indexOf(part);
  if (p < 0) return null;
  const { months, days, micros } = iv;
  const nulls = v.nulls;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    let r: number;
    if (p === 0) r = quot(months[i]!, 12);
    else if (p === 1) r = months[i]! % 12;
    else if (p === 2) r = days[i]!;
    else {
      const big = micros[i]!;
      let us = Number(big);
      if (us >= 9007199254740992 || us <= -9007199254740992) {
        // From 2^53 on (Number rounds there): the remainder below an hour is exact in doubles.
        const h = big / 3_600_000_000n;
        if (p === 3) {
          out[i] = Number(h);
          continue;
        }
        us = Number(big - h * 3_600_000_000n);
      }
      r = p === 3 ? quot(us, 3.6e9) : p === 4 ? quot(us % 3.6e9, 6e7) : p === 5 ? quot(us % 6e7, 1e6) : p === 6 ? quot(us % 1e6, 1e3) : us % 1e6;
    }
    out[i] = r === 0 ? 0 : r;
  }
  return { type: T.INT64, length: n, data: out, nulls };
}

/**
 * A function of one INTERVAL to an INTERVAL (JUSTIFY_*) over a stored
 * column's parts: each row read through one scratch object, the results
 * written as parts (no Interval kept per row). Null when the input has no parts.
 */
export function mapIntervalParts(f: (iv: Interval) => Interval, v: Vector, n: number): Vector | null {
  const iv = v.interval;
  if (!iv) return null;
  const scratch = { months: 0, days: 0, micros: 0n };
  const nulls = v.nulls;
  const months = new Int32Array(n);
  const days = new Int32Array(n);
  const micros = new BigInt64Array(n);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    scratch.months = iv.months[i]!;
    scratch.days = iv.days[i]!;
    scratch.micros = iv.micros[i]!;
    const r = f(scratch as Interval);
    months[i] = r.months;
    days[i] = r.days;
    micros[i] = r.micros;
  }
  return intervalVector(v.type, n, nulls, { months, days, micros });
}
