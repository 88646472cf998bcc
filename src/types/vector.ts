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
import type { Value } from './values.js';

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
