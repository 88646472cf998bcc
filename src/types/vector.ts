// Column vectors and batches: the unit the executor works on.
//
// Fixed-width types live in typed arrays so that hot loops never allocate:
//   FLOAT64                   Float64Array
//   INT64, TIMESTAMP,         Float64Array while every value is an exact integer within ±2^53
//   DATETIME                  (the fast path), else BigInt64Array (exact, slower)
//   TIME                      Float64Array (microseconds of the day always fit)
//   DATE                      Int32Array  (days since epoch)
//   BOOL                      Uint8Array  (0/1)
// Everything else holds scalar values (see values.ts) in a plain array.
// `nulls` is one byte per row, 1 = NULL; `null` when the vector has no NULLs.
import type { SqlType } from './types.js';
import { Interval, RangeValue, type Value } from './values.js';
import { decimalOfWords, type DecimalWidth } from './decimal-words.js';

export const BATCH_SIZE = 4096;
export const MAX_SAFE = 2 ** 53;

export type Int64Data = Float64Array | BigInt64Array;
export type VectorData = Float64Array | BigInt64Array | Int32Array | Uint8Array | Value[];

export interface Vector {
  readonly type: SqlType;
  readonly length: number;
  readonly data: VectorData;
  readonly nulls: Uint8Array | null;
  /**
   * STRING rows that are codes into a dictionary (a dictionary-encoded
   * chunk's, or a call's results over one): `data[i]` is `dict.values[dict.codes[i]]`
   * for every non-NULL row. `data` stays filled, so kernels may ignore it; a
   * call of one such argument and literals runs once per dictionary value
   * (expr.ts). Vectors made from another (take, slice, concat) drop it.
   */
  readonly dict?: DictCodes;
  /**
   * ARRAY and STRUCT rows in the Arrow layout (a scan of a stored nested
   * column): `data` is then made from it when first read (nestedVector), so
   * kernels that know the layout (UNNEST, field access, ARRAY_LENGTH,
   * subscripts) never box the rows.
   */
  readonly nested?: NestedView;
  /**
   * NUMERIC / BIGNUMERIC rows as Arrow's decimal128(38, 9) / decimal256(76, 38)
   * words (a scan of a stored column, decimal-words.ts): `data` is then made
   * from them when first read (decimalVector), so the Storage Read writer and
   * kernels that know the words never make Decimals.
   */
  readonly decimal?: DecimalView;
  /**
   * INTERVAL rows as Arrow's month-day-nano parts, microseconds for nanos (a
   * scan of a stored column): `data` is then made from them when first read
   * (intervalVector), so the Storage Read writer and kernels that know the
   * parts never make Interval objects.
   */
  readonly interval?: IntervalView;
  /**
   * RANGE rows as two vectors of the element type, a struct<start, end> in
   * Arrow terms (a scan of a stored column): an unbounded side is a NULL row
   * of its vector (any value under a NULL range). `data` is made from them
   * when first read (rangeVector).
   */
  readonly range?: RangeView;
}

export interface IntervalView {
  /** Row i is months[i], days[i], micros[i] (any values in NULL rows). */
  readonly months: Int32Array;
  readonly days: Int32Array;
  readonly micros: BigInt64Array;
}

export interface RangeView {
  readonly start: Vector;
  readonly end: Vector;
}

/** A vector of INTERVAL rows given by their parts, the Intervals made on first read of `data` (once). */
export function intervalVector(type: SqlType, length: number, nulls: Uint8Array | null, view: IntervalView): Vector {
  let boxed: Value[] | null = null;
  return {
    type,
    length,
    nulls,
    interval: view,
    get data(): Value[] {
      if (boxed === null) {
        layoutBoxing.interval += length;
        const { months, days, micros } = view;
        const out = new Array<Value>(length);
        for (let i = 0; i < length; i++) out[i] = nulls !== null && nulls[i] === 1 ? null : new Interval(months[i]!, days[i]!, micros[i]!);
        boxed = out;
      }
      return boxed;
    },
  };
}

/** A vector of RANGE rows given by their sides, the RangeValues made on first read of `data` (once). */
export function rangeVector(type: SqlType, length: number, nulls: Uint8Array | null, view: RangeView): Vector {
  let boxed: Value[] | null = null;
  return {
    type,
    length,
    nulls,
    range: view,
    get data(): Value[] {
      if (boxed === null) {
        layoutBoxing.range += length;
        const out = new Array<Value>(length);
        for (let i = 0; i < length; i++) out[i] = nulls !== null && nulls[i] === 1 ? null : new RangeValue(getValue(view.start, i), getValue(view.end, i));
        boxed = out;
      }
      return boxed;
    },
  };
}

/** Rows of interval and range views boxed so far (tests assert that a path keeps the layout). */
export const layoutBoxing = { interval: 0, range: 0 };

function takeInterval(view: IntervalView, sel: ArrayLike<number>, count: number): IntervalView {
  const months = new Int32Array(count);
  const days = new Int32Array(count);
  const micros = new BigInt64Array(count);
  for (let i = 0; i < count; i++) {
    const r = sel[i]!;
    months[i] = view.months[r]!;
    days[i] = view.days[r]!;
    micros[i] = view.micros[r]!;
  }
  return { months, days, micros };
}

/** NULL bytes of rows `sel` (null when none is NULL). */
function takeNulls(nulls: Uint8Array | null, sel: ArrayLike<number>, count: number): Uint8Array | null {
  let out: Uint8Array | null = null;
  if (nulls) for (let i = 0; i < count; i++) if (nulls[sel[i]!] === 1) (out ??= new Uint8Array(count))[i] = 1;
  return out;
}

export interface DecimalView {
  /** Row i's value is words[i * width, (i + 1) * width) (any bits in NULL rows). */
  readonly words: Uint32Array;
  readonly width: DecimalWidth;
}

/** A vector of NUMERIC or BIGNUMERIC rows given by their words, the Decimals made on first read of `data` (once). */
export function decimalVector(type: SqlType, length: number, nulls: Uint8Array | null, view: DecimalView): Vector {
  let boxed: Value[] | null = null;
  return {
    type,
    length,
    nulls,
    decimal: view,
    get data(): Value[] {
      if (boxed === null) {
        decimalBoxing.rows += length;
        const out = new Array<Value>(length);
        for (let i = 0; i < length; i++) out[i] = nulls !== null && nulls[i] === 1 ? null : decimalOfWords(view.words, i, view.width);
        boxed = out;
      }
      return boxed;
    },
  };
}

/** Rows of decimal views boxed so far (tests assert that a path keeps the words). */
export const decimalBoxing = { rows: 0 };

/** Rows `sel` of a decimal view's words, NULL rows' words zero. */
function takeWords(view: DecimalView, sel: ArrayLike<number>, count: number, nulls: Uint8Array | null): DecimalView {
  const w = view.width;
  const out = new Uint32Array(count * w);
  for (let i = 0; i < count; i++) if (nulls === null || nulls[i] !== 1) out.set(view.words.subarray(sel[i]! * w, sel[i]! * w + w), i * w);
  return { words: out, width: w };
}

export interface NestedView {
  /** ARRAY: row i's elements are rows [offsets[i], offsets[i + 1]) of `child` (a NULL or empty row: equal offsets). */
  readonly offsets?: Int32Array;
  readonly child?: Vector;
  /** STRUCT: each field's rows (NULL where the struct is NULL). */
  readonly fields?: readonly Vector[];
  /** Rows of another nested vector, row i its row at[i] (rows taken more than once: a lateral join's owners). */
  readonly source?: Vector;
  readonly at?: Int32Array;
  /** Several nested vectors' rows one after another (of views that do not concatenate as views). */
  readonly parts?: readonly Vector[];
}

/**
 * A vector of ARRAY or STRUCT rows given by `view`, its boxed rows made on
 * first read of `data` (once). A NULL array row boxes as NULL where `nulls`
 * says so, else as [] (arrays nested in structs have no NULL).
 */
export function nestedVector(type: SqlType, length: number, nulls: Uint8Array | null, view: NestedView): Vector {
  let boxed: Value[] | null = null;
  return {
    type,
    length,
    nulls,
    nested: view,
    get data(): Value[] {
      if (boxed === null) {
        nestedBoxing.rows += length;
        boxed = boxNested(length, nulls, view);
      }
      return boxed;
    },
  };
}

/** Rows of nested views boxed so far, at every level (tests assert that a path keeps the layout). */
export const nestedBoxing = { rows: 0 };

function boxNested(n: number, nulls: Uint8Array | null, view: NestedView): Value[] {
  const out = new Array<Value>(n);
  if (view.parts) {
    let k = 0;
    for (const p of view.parts) {
      const d = p.data as Value[];
      for (let i = 0; i < p.length; i++, k++) out[k] = nulls !== null && nulls[k] === 1 ? null : d[i]!;
    }
    return out;
  }
  if (view.source && view.at) {
    const src = view.source.data as Value[];
    for (let i = 0; i < n; i++) out[i] = nulls !== null && nulls[i] === 1 ? null : src[view.at[i]!]!;
    return out;
  }
  if (view.offsets && view.child) {
    const { offsets, child } = view;
    const elems = valuesOfVector(child);
    for (let i = 0; i < n; i++) out[i] = nulls !== null && nulls[i] === 1 ? null : elems.slice(offsets[i]!, offsets[i + 1]!);
    return out;
  }
  const fields = (view.fields ?? []).map(valuesOfVector);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) {
      out[i] = null;
      continue;
    }
    const row = new Array<Value>(fields.length);
    for (let j = 0; j < fields.length; j++) row[j] = fields[j]![i]!;
    out[i] = row;
  }
  return out;
}

/** Every row's scalar form. */
function valuesOfVector(v: Vector): Value[] {
  const d = v.data;
  if (Array.isArray(d) && v.nulls === null) return d;
  const out = new Array<Value>(v.length);
  for (let i = 0; i < v.length; i++) out[i] = getValue(v, i);
  return out;
}

export interface DictCodes {
  readonly codes: Int32Array;
  /** Shared by every batch of the chunk: the identity caches results per dictionary. NULL entries: no row's value. */
  readonly values: readonly (string | null)[];
}

export interface Batch {
  readonly length: number;
  readonly columns: readonly Vector[];
}

/** Which physical layout a type uses. */
export type Layout = 'f64' | 'i64' | 'i32' | 'bool' | 'values';

export function layoutOf(t: SqlType): Layout {
  switch (t.kind) {
    case 'FLOAT64':
    case 'TIME':
      return 'f64';
    case 'INT64':
    case 'TIMESTAMP':
    case 'DATETIME':
      return 'i64';
    case 'DATE':
      return 'i32';
    case 'BOOL':
      return 'bool';
    default:
      return 'values';
  }
}

export function isNull(v: Vector, i: number): boolean {
  return v.nulls !== null && v.nulls[i] === 1;
}

/** The scalar form (values.ts) of row i. */
export function getValue(v: Vector, i: number): Value {
  if (v.nulls !== null && v.nulls[i] === 1) return null;
  const d = v.data;
  switch (layoutOf(v.type)) {
    case 'f64':
      return (d as Float64Array)[i]!;
    case 'i64':
      return d instanceof BigInt64Array ? d[i]! : BigInt((d as Float64Array)[i]!);
    case 'i32':
      return (d as Int32Array)[i]!;
    case 'bool':
      return (d as Uint8Array)[i] === 1;
    default:
      return (d as Value[])[i]!;
  }
}

/** Builds a vector from scalar values, choosing the fast INT64 layout when it is exact. */
export class VectorBuilder {
  private values: Value[] = [];
  constructor(readonly type: SqlType) {}

  push(v: Value): void {
    this.values.push(v);
  }

  get length(): number {
    return this.values.length;
  }

  finish(): Vector {
    return vectorFromValues(this.type, this.values);
  }
}

export function vectorFromValues(type: SqlType, values: readonly Value[]): Vector {
  const n = values.length;
  let nulls: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    if (values[i] === null) {
      nulls ??= new Uint8Array(n);
      nulls[i] = 1;
    }
  }
  switch (layoutOf(type)) {
    case 'f64': {
      const d = new Float64Array(n);
      for (let i = 0; i < n; i++) if (values[i] !== null) d[i] = values[i] as number;
      return { type, length: n, data: d, nulls };
    }
    case 'i64': {
      let exact = true;
      for (let i = 0; i < n && exact; i++) {
        const x = values[i];
        if (x !== null && ((x as bigint) > 9007199254740992n || (x as bigint) < -9007199254740992n)) exact = false;
      }
      if (exact) {
        const d = new Float64Array(n);
        for (let i = 0; i < n; i++) if (values[i] !== null) d[i] = Number(values[i] as bigint);
        return { type, length: n, data: d, nulls };
      }
      const d = new BigInt64Array(n);
      for (let i = 0; i < n; i++) if (values[i] !== null) d[i] = values[i] as bigint;
      return { type, length: n, data: d, nulls };
    }
    case 'i32': {
      const d = new Int32Array(n);
      for (let i = 0; i < n; i++) if (values[i] !== null) d[i] = values[i] as number;
      return { type, length: n, data: d, nulls };
    }
    case 'bool': {
      const d = new Uint8Array(n);
      for (let i = 0; i < n; i++) if (values[i] === true) d[i] = 1;
      return { type, length: n, data: d, nulls };
    }
    default:
      return { type, length: n, data: values.slice(), nulls };
  }
}

export function constantVector(type: SqlType, value: Value, length: number): Vector {
  return vectorFromValues(type, new Array<Value>(length).fill(value));
}

/** Rows [start, end) of a vector, sharing memory where the layout allows. */
export function sliceVector(v: Vector, start: number, end: number): Vector {
  if (v.nested?.parts) return takeLater(v, Int32Array.from({ length: end - start }, (_, i) => start + i), end - start);
  if (v.nested) return nestedVector(v.type, end - start, v.nulls ? v.nulls.subarray(start, end) : null, sliceView(v.nested, start, end));
  if (v.decimal) {
    const w = v.decimal.width;
    return decimalVector(v.type, end - start, v.nulls ? v.nulls.subarray(start, end) : null, { words: v.decimal.words.subarray(start * w, end * w), width: w });
  }
  if (v.interval) {
    const { months, days, micros } = v.interval;
    return intervalVector(v.type, end - start, v.nulls ? v.nulls.subarray(start, end) : null, { months: months.subarray(start, end), days: days.subarray(start, end), micros: micros.subarray(start, end) });
  }
  if (v.range) return rangeVector(v.type, end - start, v.nulls ? v.nulls.subarray(start, end) : null, { start: sliceVector(v.range.start, start, end), end: sliceVector(v.range.end, start, end) });
  const d = v.data;
  const data = Array.isArray(d) ? d.slice(start, end) : d.subarray(start, end);
  return { type: v.type, length: end - start, data, nulls: v.nulls ? v.nulls.subarray(start, end) : null };
}

/** The rows named by `sel`, in that order (filter, join and sort output). */
export function takeVector(v: Vector, sel: ArrayLike<number>, count = sel.length): Vector {
  return takeInto(v, sel, count, null);
}

/**
 * Output memory a producer reuses for one column from batch to batch, where
 * its consumer is done with each batch before it asks for the next
 * (executeRel's `transient`): typed arrays of at least BATCH_SIZE, made on
 * first use and again when the column's layout changes.
 */
export class TakeBuffer {
  data: Float64Array | Int32Array | Uint8Array | BigInt64Array | null = null;
  nulls: Uint8Array | null = null;
}

/** takeVector written into `buf` (the vector returned is overwritten by the next take into it); value layouts get fresh arrays. */
export function takeVectorInto(v: Vector, sel: ArrayLike<number>, count: number, buf: TakeBuffer): Vector {
  return takeInto(v, sel, count, buf);
}

type Typed = Float64Array | Int32Array | Uint8Array | BigInt64Array;

/** `buf`'s typed array of `src`'s kind with room for count values (replaced when too small or of another kind). */
function reused<A extends Typed>(src: A, count: number, buf: TakeBuffer): A {
  const Ctor = src.constructor as new (n: number) => A;
  let d = buf.data;
  if (d === null || d.constructor !== Ctor || d.length < count) buf.data = d = new Ctor(Math.max(count, BATCH_SIZE));
  return (d.length === count ? d : d.subarray(0, count)) as A;
}

function takeInto(v: Vector, sel: ArrayLike<number>, count: number, buf: TakeBuffer | null): Vector {
  if (v.nested) return takeNested(v, v.nested, sel, count) ?? takeLater(v, sel, count);
  if (v.decimal) {
    let nulls: Uint8Array | null = null;
    if (v.nulls) for (let i = 0; i < count; i++) if (v.nulls[sel[i]!] === 1) (nulls ??= new Uint8Array(count))[i] = 1;
    return decimalVector(v.type, count, nulls, takeWords(v.decimal, sel, count, nulls));
  }
  if (v.interval) return intervalVector(v.type, count, takeNulls(v.nulls, sel, count), takeInterval(v.interval, sel, count));
  if (v.range) return rangeVector(v.type, count, takeNulls(v.nulls, sel, count), { start: takeVector(v.range.start, sel, count), end: takeVector(v.range.end, sel, count) });
  const src = v.data;
  let data: VectorData;
  if (Array.isArray(src)) {
    const out = new Array<Value>(count);
    for (let i = 0; i < count; i++) out[i] = src[sel[i]!]!;
    data = out;
  } else if (src instanceof Float64Array) data = gatherF64(src, sel, count, buf === null ? new Float64Array(count) : reused(src, count, buf));
  else if (src instanceof Int32Array) data = gatherI32(src, sel, count, buf === null ? new Int32Array(count) : reused(src, count, buf));
  else if (src instanceof Uint8Array) data = gatherU8(src, sel, count, buf === null ? new Uint8Array(count) : reused(src, count, buf));
  else {
    const out = buf === null ? new BigInt64Array(count) : reused(src, count, buf);
    for (let i = 0; i < count; i++) out[i] = src[sel[i]!]!;
    data = out;
  }
  let nulls: Uint8Array | null = null;
  if (v.nulls) {
    if (buf !== null && (buf.nulls === null || buf.nulls.length < count)) buf.nulls = new Uint8Array(Math.max(count, BATCH_SIZE));
    nulls = buf === null ? new Uint8Array(count) : buf.nulls!.length === count ? buf.nulls! : buf.nulls!.subarray(0, count);
    let any = false;
    for (let i = 0; i < count; i++) {
      const b = v.nulls[sel[i]!]!;
      nulls[i] = b;
      if (b) any = true;
    }
    if (!any) nulls = null;
  }
  return { type: v.type, length: count, data, nulls };
}

// One gather loop per array type: a single loop shared by every typed-array
// kind goes megamorphic on element access (joins, filters and sorts gather a lot).
function gatherF64(src: Float64Array, sel: ArrayLike<number>, count: number, out: Float64Array): Float64Array {
  for (let i = 0; i < count; i++) out[i] = src[sel[i]!]!;
  return out;
}

function gatherI32(src: Int32Array, sel: ArrayLike<number>, count: number, out: Int32Array): Int32Array {
  for (let i = 0; i < count; i++) out[i] = src[sel[i]!]!;
  return out;
}

function gatherU8(src: Uint8Array, sel: ArrayLike<number>, count: number, out: Uint8Array): Uint8Array {
  for (let i = 0; i < count; i++) out[i] = src[sel[i]!]!;
  return out;
}

/** Concatenates vectors of one type (sort and materialization). */
export function concatVectors(type: SqlType, parts: readonly Vector[]): Vector {
  const total = parts.reduce((n, p) => n + p.length, 0);
  if (parts.length > 0 && parts.every((p) => p.nested)) {
    let nulls: Uint8Array | null = null;
    let k = 0;
    for (const p of parts) {
      if (p.nulls) (nulls ??= new Uint8Array(total)).set(p.nulls, k);
      k += p.length;
    }
    return nestedVector(type, total, nulls, concatViews(type, parts.map((p) => p.nested!)) ?? concatTaken(type, parts) ?? { parts });
  }
  const w = parts[0]?.decimal?.width;
  if (w !== undefined && parts.every((p) => p.decimal?.width === w)) {
    const words = new Uint32Array(total * w);
    let nulls: Uint8Array | null = null;
    let at = 0;
    for (const p of parts) {
      words.set(p.decimal!.words.subarray(0, p.length * w), at * w);
      if (p.nulls) (nulls ??= new Uint8Array(total)).set(p.nulls, at);
      at += p.length;
    }
    return decimalVector(type, total, nulls, { words, width: w });
  }
  if (parts.length > 0 && (parts.every((p) => p.interval) || parts.every((p) => p.range))) {
    let nulls: Uint8Array | null = null;
    let at = 0;
    for (const p of parts) {
      if (p.nulls) (nulls ??= new Uint8Array(total)).set(p.nulls, at);
      at += p.length;
    }
    if (parts[0]!.range) {
      const side = (pick: (r: RangeView) => Vector): Vector => concatVectors(pick(parts[0]!.range!).type, parts.map((p) => pick(p.range!)));
      return rangeVector(type, total, nulls, { start: side((r) => r.start), end: side((r) => r.end) });
    }
    const months = new Int32Array(total);
    const days = new Int32Array(total);
    const micros = new BigInt64Array(total);
    at = 0;
    for (const p of parts) {
      const iv = p.interval!;
      months.set(iv.months.subarray(0, p.length), at);
      days.set(iv.days.subarray(0, p.length), at);
      micros.set(iv.micros.subarray(0, p.length), at);
      at += p.length;
    }
    return intervalVector(type, total, nulls, { months, days, micros });
  }
  let k = 0;
  const needsValues = parts.some((p) => p.data instanceof BigInt64Array) || layoutOf(type) === 'values';
  if (needsValues) {
    const values: Value[] = new Array(total);
    for (const p of parts) for (let i = 0; i < p.length; i++) values[k++] = getValue(p, i);
    return vectorFromValues(type, values);
  }
  const first = parts[0]?.data;
  const Ctor = (first?.constructor ?? Float64Array) as new (n: number) => Float64Array;
  const data = new Ctor(total);
  let nulls: Uint8Array | null = null;
  for (const p of parts) {
    data.set(p.data as Float64Array, k);
    if (p.nulls) {
      nulls ??= new Uint8Array(total);
      nulls.set(p.nulls, k);
    }
    k += p.length;
  }
  return { type, length: total, data, nulls };
}

/** Rows [start, end) of consecutive batches as batches sharing memory. */
export function sliceBatches(batches: readonly Batch[], start: number, end: number): Batch[] {
  const out: Batch[] = [];
  let off = 0;
  for (const b of batches) {
    const bs = off, be = off + b.length;
    off = be;
    if (be <= start || bs >= end) continue;
    const s = Math.max(start, bs) - bs, e = Math.min(end, be) - bs;
    out.push(s === 0 && e === b.length ? b : { length: e - s, columns: b.columns.map((v) => sliceVector(v, s, e)) });
  }
  return out;
}

/**
 * takeVector of nested rows that are taken more than once (a lateral join's
 * owner rows): boxed, sharing the rows, only when `data` is first read (an
 * UNNEST's array column is often carried along and never read).
 */
function takeLater(v: Vector, sel: ArrayLike<number>, count: number): Vector {
  const from = v.nested?.at;
  const at = new Int32Array(count);
  for (let i = 0; i < count; i++) at[i] = from ? from[sel[i]!]! : sel[i]!;
  let nulls: Uint8Array | null = null;
  if (v.nulls) for (let i = 0; i < count; i++) if (v.nulls[sel[i]!] === 1) (nulls ??= new Uint8Array(count))[i] = 1;
  return nestedVector(v.type, count, nulls, { source: v.nested?.source ?? v, at });
}

/** `v` with NULL rows `nulls` (which include v's own): the layout kept, value rows set to null as vectorFromValues makes them. */
export function withNullRows(v: Vector, nulls: Uint8Array): Vector {
  if (v.nested) return nestedVector(v.type, v.length, nulls, v.nested);
  if (v.decimal) return decimalVector(v.type, v.length, nulls, v.decimal);
  if (v.interval) return intervalVector(v.type, v.length, nulls, v.interval);
  if (v.range) return rangeVector(v.type, v.length, nulls, v.range);
  const d = v.data;
  if (!Array.isArray(d)) return { type: v.type, length: v.length, data: d, nulls };
  const data = d.slice();
  for (let i = 0; i < v.length; i++) if (nulls[i] === 1) data[i] = null;
  return { type: v.type, length: v.length, data, nulls };
}

/**
 * Row i of the result is element `sel[i]` of an array view's `child` (one
 * element per row: subscripts, ARRAY_FIRST/LAST), or NULL where `nulls`
 * marks it (those rows' `sel` is ignored).
 */
export function takeElements(elementType: SqlType, child: Vector, sel: Int32Array, nulls: Uint8Array | null, n: number): Vector {
  // Every row NULL: nothing to take from.
  if (child.length === 0) return vectorFromValues(elementType, new Array<Value>(n).fill(null));
  const taken = takeVector(child, sel, n);
  if (nulls === null) return taken;
  const merged = taken.nulls ? taken.nulls.slice() : new Uint8Array(n);
  for (let i = 0; i < n; i++) if (nulls[i] === 1) merged[i] = 1;
  return withNullRows(taken, merged);
}

/**
 * An ARRAY view's rows in the list layout, nothing boxed: row i's elements
 * are rows [offsets[r], offsets[r + 1]) of `child`, r = rows[i] (rows taken
 * more than once, takeLater) or i; a row `v.nulls` marks has none, whatever
 * its range (a field of a NULL struct, a subscript's NULL row). Null when `v`
 * is not such a view.
 */
export interface ListRows {
  readonly offsets: Int32Array;
  readonly child: Vector;
  readonly rows: Int32Array | null;
}

export function listRows(v: Vector): ListRows | null {
  const view = v.nested;
  if (view?.offsets && view.child) return { offsets: view.offsets, child: view.child, rows: null };
  const src = view?.source?.nested;
  if (view?.at && src?.offsets && src.child) return { offsets: src.offsets, child: src.child, rows: view.at };
  return null;
}

/**
 * Rows [0, n) of an ARRAY view as offsets over their elements one after
 * another (NULL rows empty): shared as they are for a scanned column, else
 * the elements taken once. Null when `v` is not a list view.
 */
export function packedList(v: Vector, n: number): { offsets: Int32Array; child: Vector } | null {
  const l = listRows(v);
  if (!l) return null;
  const { offsets: o, child, rows } = l;
  const nulls = v.nulls;
  let contiguous = rows === null;
  if (contiguous && nulls !== null) {
    for (let i = 0; i < n; i++) {
      if (nulls[i] === 1 && o[i + 1] !== o[i]) {
        contiguous = false;
        break;
      }
    }
  }
  if (contiguous) {
    const base = o[0]!;
    if (base === 0 && o[n] === child.length) return { offsets: o.length === n + 1 ? o : o.subarray(0, n + 1), child };
    const offsets = new Int32Array(n + 1);
    for (let i = 0; i <= n; i++) offsets[i] = o[i]! - base;
    return { offsets, child: sliceVector(child, base, o[n]!) };
  }
  const offsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    const r = rows === null ? i : rows[i]!;
    offsets[i + 1] = offsets[i]! + (nulls !== null && nulls[i] === 1 ? 0 : o[r + 1]! - o[r]!);
  }
  const sel = new Int32Array(offsets[n]!);
  for (let i = 0, k = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const r = rows === null ? i : rows[i]!;
    for (let e = o[r]!; e < o[r + 1]!; e++) sel[k++] = e;
  }
  return { offsets, child: takeVector(child, sel) };
}

/** Field `j` of a STRUCT view's rows (NULL where the struct's field is; the struct's own NULLs not applied), null when `v` is not a struct view. */
export function structField(v: Vector, j: number): Vector | null {
  const view = v.nested;
  const f = view?.fields?.[j];
  if (f) return f;
  const sf = view?.source?.nested?.fields?.[j];
  return view?.at && sf ? takeVector(sf, view.at, v.length) : null;
}

/** Rows [start, end) of a nested view. */
function sliceView(view: NestedView, start: number, end: number): NestedView {
  if (view.source && view.at) return { source: view.source, at: view.at.subarray(start, end) };
  if (view.offsets && view.child) {
    const base = view.offsets[start]!;
    const offsets = new Int32Array(end - start + 1);
    for (let i = 0; i <= end - start; i++) offsets[i] = view.offsets[start + i]! - base;
    return { offsets, child: sliceVector(view.child, base, view.offsets[end]!) };
  }
  return { fields: (view.fields ?? []).map((f) => sliceVector(f, start, end)) };
}

/** takeVector of a nested vector: its view's rows taken (a list's elements in the new order), nothing boxed. */
function takeNested(v: Vector, view: NestedView, sel: ArrayLike<number>, count: number): Vector | null {
  if (view.source || view.parts) return null;
  let nulls: Uint8Array | null = null;
  if (v.nulls) {
    for (let i = 0; i < count; i++) if (v.nulls[sel[i]!] === 1) (nulls ??= new Uint8Array(count))[i] = 1;
  }
  if (view.offsets && view.child) {
    const src = view.offsets;
    const offsets = new Int32Array(count + 1);
    for (let i = 0; i < count; i++) offsets[i + 1] = offsets[i]! + src[sel[i]! + 1]! - src[sel[i]!]!;
    // Rows taken more than once (a join's owners) would copy their elements each time: boxed rows share them instead.
    if (offsets[count]! > view.child.length) return null;
    const elems = new Int32Array(offsets[count]!);
    for (let i = 0, k = 0; i < count; i++) for (let e = src[sel[i]!]!; e < src[sel[i]! + 1]!; e++) elems[k++] = e;
    return nestedVector(v.type, count, nulls, { offsets, child: takeVector(view.child, elems) });
  }
  return nestedVector(v.type, count, nulls, { fields: (view.fields ?? []).map((f) => takeVector(f, sel, count)) });
}

/**
 * Nested vectors one after another where some are rows taken from others
 * (takeLater: a lateral join's owners, batch by batch): one take over their
 * distinct sources concatenated, so the rows stay shared, never boxed (a sort
 * gathers such batches). Null when a part is itself several parts.
 */
function concatTaken(type: SqlType, parts: readonly Vector[]): NestedView | null {
  if (parts.some((p) => p.nested!.parts || (p.nested!.source && p.nested!.source.nested?.parts))) return null;
  const bases = new Map<Vector, number>();
  const sources: Vector[] = [];
  let size = 0;
  for (const p of parts) {
    const src = p.nested!.source ?? p;
    if (bases.has(src)) continue;
    bases.set(src, size);
    sources.push(src);
    size += src.length;
  }
  const at = new Int32Array(parts.reduce((n, p) => n + p.length, 0));
  let k = 0;
  for (const p of parts) {
    const rows = p.nested!.at;
    const base = bases.get(p.nested!.source ?? p)!;
    for (let i = 0; i < p.length; i++) at[k++] = base + (rows ? rows[i]! : i);
  }
  return { source: concatVectors(type, sources), at };
}

/** Nested views one after another (null when they are not all of one shape). */
function concatViews(type: SqlType, views: readonly NestedView[]): NestedView | null {
  const source = views[0]!.source;
  if (source && views.every((v) => v.source === source && v.at)) {
    const at = new Int32Array(views.reduce((n, v) => n + v.at!.length, 0));
    let k = 0;
    for (const v of views) {
      at.set(v.at!, k);
      k += v.at!.length;
    }
    return { source, at };
  }
  if (type.kind === 'ARRAY' && views.every((v) => v.offsets && v.child)) {
    const total = views.reduce((n, v) => n + v.offsets!.length - 1, 0);
    const offsets = new Int32Array(total + 1);
    let k = 0;
    let base = 0;
    for (const v of views) {
      const o = v.offsets!;
      for (let i = 1; i < o.length; i++) offsets[++k] = base + o[i]!;
      base += o[o.length - 1]!;
    }
    return { offsets, child: concatVectors(type.element, views.map((v) => v.child!)) };
  }
  if (type.kind === 'STRUCT' && views.every((v) => v.fields?.length === type.fields.length)) {
    return { fields: type.fields.map((f, j) => concatVectors(f.type, views.map((v) => v.fields![j]!))) };
  }
  return null;
}
