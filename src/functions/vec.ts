// Kernel building blocks: null masks, INT64 output that starts as doubles and
// switches to BigInt64Array only when a value leaves ±2^53, and the generic
// row-wise adapter used by the long tail of functions.
import { QueryError, resourceError } from '../types/errors.js';
import type { SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { getValue, layoutOf, vectorFromValues, type Int64Data, type Vector } from '../types/vector.js';
import type { EvalContext, ScalarKernel } from './registry.js';

export const TWO53 = 9007199254740992;
export const INT64_MAX = 9223372036854775807n;
export const INT64_MIN = -9223372036854775808n;

/** A runtime (evaluation) error as the service reports it: reason invalidQuery. */
export function fail(message: string): never {
  throw new QueryError(message, 'invalidQuery');
}

/** OR of the argument null masks, or null when no argument has NULLs. */
export function mergeNulls(args: readonly Vector[], n: number): Uint8Array | null {
  let out: Uint8Array | null = null;
  for (const a of args) {
    const m = a.nulls;
    if (m === null) continue;
    if (out === null) {
      out = m.length === n ? m.slice() : m.slice(0, n);
      continue;
    }
    for (let i = 0; i < n; i++) out[i] |= m[i]!;
  }
  return out;
}

/** INT64 / TIMESTAMP / DATETIME result builder: doubles while exact, BigInt64Array once needed. */
export class I64Out {
  f: Float64Array | null;
  b: BigInt64Array | null = null;
  constructor(readonly n: number) {
    this.f = new Float64Array(n);
  }
  setNum(i: number, x: number): void {
    if (this.f !== null) this.f[i] = x;
    else this.b![i] = BigInt(x);
  }
  setBig(i: number, x: bigint): void {
    if (this.f !== null) {
      if (x <= 9007199254740992n && x >= -9007199254740992n) {
        this.f[i] = Number(x);
        return;
      }
      const b = new BigInt64Array(this.n);
      const f = this.f;
      for (let k = 0; k < this.n; k++) b[k] = BigInt(f[k]!);
      this.b = b;
      this.f = null;
    }
    this.b![i] = x;
  }
  vector(type: SqlType, nulls: Uint8Array | null): Vector {
    return { type, length: this.n, data: (this.f ?? this.b)!, nulls };
  }
}

export function i64At(d: Int64Data, i: number): bigint {
  return d instanceof BigInt64Array ? d[i]! : BigInt(d[i]!);
}

export function isF64(d: unknown): d is Float64Array {
  return d instanceof Float64Array;
}

export function boolVector(type: SqlType, data: Uint8Array, nulls: Uint8Array | null): Vector {
  return { type, length: data.length, data, nulls };
}

/** Rows as scalar values (values.ts forms). */
export function valuesOf(v: Vector, n: number): Value[] {
  if (layoutOf(v.type) === 'values' && v.nulls === null) {
    const d = v.data as Value[];
    return d.length === n ? d : d.slice(0, n);
  }
  const out = new Array<Value>(n);
  for (let i = 0; i < n; i++) out[i] = getValue(v, i);
  return out;
}

export type RowFn = (vals: Value[], ctx: EvalContext) => Value;

/**
 * Row-wise kernel for the long tail: `fn` sees one row's argument values.
 * With `nullPropagate` (default) a NULL argument makes the result NULL without calling fn.
 */
export function rowKernel(returnType: SqlType, fn: RowFn, nullPropagate = true): ScalarKernel {
  return (args, n, ctx) => {
    const cols = args.map((a) => valuesOf(a, n));
    const out = new Array<Value>(n);
    const vals = new Array<Value>(args.length);
    for (let i = 0; i < n; i++) {
      let hasNull = false;
      for (let k = 0; k < cols.length; k++) {
        const x = cols[k]![i]!;
        vals[k] = x;
        if (x === null) hasNull = true;
      }
      if (nullPropagate && hasNull) {
        out[i] = null;
        continue;
      }
      try {
        out[i] = fn(vals, ctx);
      } catch (e) {
        throw asQueryError(e);
      }
    }
    return vectorFromValues(returnType, out);
  };
}

/** Arithmetic library errors (decimal.js, BigInt RangeError) surface as query errors, not crashes. */
export function asQueryError(e: unknown): unknown {
  if (e instanceof QueryError) return e;
  const exceeded = resourceError(e);
  if (exceeded) return exceeded;
  if (e instanceof RangeError || (e instanceof Error && /DecimalError/.test(e.message))) return new QueryError(e.message.replace(/^\[DecimalError\] /, ''), 'invalidQuery');
  return e;
}

/** A kernel whose result does not depend on the rows (CURRENT_DATE, SESSION_USER ...). */
export function constKernel(returnType: SqlType, fn: (ctx: EvalContext) => Value): ScalarKernel {
  return (_args, n, ctx) => {
    const v = fn(ctx);
    return vectorFromValues(returnType, new Array<Value>(n).fill(v));
  };
}

/** Per-row values of a volatile function (RAND, GENERATE_UUID). */
export function perRowKernel(returnType: SqlType, fn: (ctx: EvalContext) => Value): ScalarKernel {
  return (_args, n, ctx) => {
    const out = new Array<Value>(n);
    for (let i = 0; i < n; i++) out[i] = fn(ctx);
    return vectorFromValues(returnType, out);
  };
}

/**
 * A value's size as the row-size limit counts it, roughly (fixed-width values
 * 8 or 16 bytes, STRING its length, BYTES its bytes, ARRAY and STRUCT their
 * parts): enough to stop a value long before V8's own limits.
 */
export function approxBytes(v: Value): number {
  if (v === null) return 1;
  if (typeof v === 'string') return v.length;
  if (v instanceof Uint8Array) return v.length;
  if (Array.isArray(v)) {
    let n = 0;
    for (const x of v) n += approxBytes(x);
    return n;
  }
  return typeof v === 'object' ? 16 : 8;
}
