// ARRAY functions. Lambdas (ARRAY_FILTER, ARRAY_TRANSFORM, ...) arrive as a
// vector whose data[0] is the executor's LambdaHandle (see src/executor/expr.ts):
// we flatten every row's elements, invoke the body once for all of them, and
// regroup the results.
import { T, arrayOf, type SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { concatVectors, getValue, listRows, nestedVector, packedList, takeElements, takeVector, vectorFromValues, type Vector } from '../types/vector.js';
import { compareValues, sqlEquals, valueKey } from './compare.js';
import type { ScalarKernel } from './registry.js';
import { defineScalar, lambdaArg, opt, rep, sig, sigf } from './signature.js';
import { fail, rowKernel, valuesOf } from './vec.js';
import { concatBytes } from './operators.js';
import { Decimal } from '../types/values.js';
import { checkDecimal } from './numeric.js';

const MAX_ARRAY = 1048576;

interface LambdaHandle {
  readonly lambda?: { readonly params: readonly unknown[] };
  invoke(params: readonly Vector[], rows: Int32Array): Vector;
}
function lambdaOf(v: Vector): LambdaHandle {
  const h = (v.data as unknown[])[0] as (LambdaHandle & { kind?: string }) | undefined;
  if (!h || typeof h.invoke !== 'function') fail('Internal error: expected a lambda argument');
  return h;
}

/** Runs a lambda over every element of every row: returns per-row arrays of results (null for NULL arrays). */
function mapLambda(arrs: Value[], lam: LambdaHandle, elType: SqlType, withIndex: boolean): { results: Value[]; starts: number[] } {
  const flat: Value[] = [];
  const idx: Value[] = [];
  const rows: number[] = [];
  const starts: number[] = [];
  arrs.forEach((a, r) => {
    starts.push(flat.length);
    if (a === null) return;
    (a as Value[]).forEach((e, i) => {
      flat.push(e);
      idx.push(BigInt(i));
      rows.push(r);
    });
  });
  starts.push(flat.length);
  const params = [vectorFromValues(elType, flat)];
  if (withIndex) params.push(vectorFromValues(T.INT64, idx));
  const out = flat.length === 0 ? { length: 0 } as Vector : lam.invoke(params, Int32Array.from(rows));
  const results = new Array<Value>(flat.length);
  for (let i = 0; i < flat.length; i++) results[i] = getValue(out, i);
  return { results, starts };
}

function lambdaKernel(elType: SqlType, retType: SqlType, _withIndex: boolean, finish: (arr: Value[], res: Value[]) => Value): ScalarKernel {
  return (args, n) => {
    const arrs = valuesOf(args[0]!, n);
    const lam = lambdaOf(args[1]!);
    // `(e, i) -> ...` lambdas also receive the element's offset.
    const withIndex = (lam.lambda?.params.length ?? 1) > 1;
    const { results, starts } = mapLambda(arrs, lam, elType, withIndex);
    const out = new Array<Value>(n);
    for (let r = 0; r < n; r++) {
      const a = arrs[r];
      out[r] = a === null ? null : finish(a as Value[], results.slice(starts[r]!, starts[r + 1]!));
    }
    return vectorFromValues(retType, out);
  };
}

function checkLen(n: number, fn: string): void {
  if (n > MAX_ARRAY) fail(`${fn} would produce an array with more than ${MAX_ARRAY} elements`);
}

function generateArray(start: Value, end: Value, step: Value, kind: string): Value {
  if (kind === 'INT64') {
    const s = start as bigint, e = end as bigint, st = step as bigint;
    if (st === 0n) fail('Sequence step cannot be 0.');
    if ((st > 0n && s > e) || (st < 0n && s < e)) return [];
    const count = (e - s) / st + 1n;
    if (count > BigInt(MAX_ARRAY)) fail(`GENERATE_ARRAY(${s}, ${e}, ${st}) produces too many elements`);
    const out: Value[] = [];
    for (let x = s; st > 0n ? x <= e : x >= e; x += st) out.push(x);
    return out;
  }
  if (kind === 'FLOAT64') {
    const s = start as number, e = end as number, st = step as number;
    if (st === 0) fail('Sequence step cannot be 0.');
    if (Number.isNaN(s) || Number.isNaN(e) || Number.isNaN(st)) fail('GENERATE_ARRAY does not allow NaN arguments');
    if (!Number.isFinite(st) || !Number.isFinite(s) || !Number.isFinite(e)) fail('GENERATE_ARRAY does not allow infinite arguments');
    if ((st > 0 && s > e) || (st < 0 && s < e)) return [];
    const count = Math.floor((e - s) / st) + 1;
    if (count > MAX_ARRAY) fail(`GENERATE_ARRAY(${s}, ${e}, ${st}) produces too many elements`);
    const out: Value[] = [];
    for (let k = 0; k < count; k++) out.push(s + k * st);
    return out;
  }
  const s = start as Decimal, e = end as Decimal, st = step as Decimal;
  if (st.isZero()) fail('Sequence step cannot be 0.');
  if ((st.gt(0) && s.gt(e)) || (st.lt(0) && s.lt(e))) return [];
  const count = e.minus(s).div(st).floor().toNumber() + 1;
  if (count > MAX_ARRAY) fail(`GENERATE_ARRAY produces too many elements`);
  const out: Value[] = [];
  for (let k = 0; k < count; k++) out.push(checkDecimal(s.plus(st.times(k)), kind as 'NUMERIC'));
  return out;
}

// Kernels over arrays in the Arrow layout (Vector.nested, a stored column's
// scan): elements taken from the child vector, no row boxed. Each returns
// null when an argument is not in that layout (the boxed kernel then runs).

/** ARRAY_REVERSE: each row's elements taken in reverse order (a NULL array stays NULL). */
function reverseList(type: SqlType, a: Vector, n: number): Vector | null {
  const p = packedList(a, n);
  if (!p) return null;
  const o = p.offsets;
  const sel = new Int32Array(o[n]!);
  for (let i = 0; i < n; i++) for (let k = o[i]!, e = o[i + 1]! - 1; e >= o[i]!; k++, e--) sel[k] = e;
  return nestedVector(type, n, a.nulls, { offsets: o, child: takeVector(p.child, sel) });
}

/** ARRAY_FIRST / ARRAY_LAST: each row's first or last element taken from the child vector (a NULL array NULL, an empty one an error). */
function endElement(type: SqlType, a: Vector, n: number, last: boolean): Vector | null {
  const l = listRows(a);
  if (!l) return null;
  const { offsets: o, child, rows } = l;
  const sel = new Int32Array(n);
  let nulls: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    if (a.nulls !== null && a.nulls[i] === 1) {
      (nulls ??= new Uint8Array(n))[i] = 1;
      continue;
    }
    const r = rows === null ? i : rows[i]!;
    if (o[r] === o[r + 1]) fail(last ? 'ARRAY_LAST cannot get the last element of an empty array' : 'ARRAY_FIRST cannot get the first element of an empty array');
    sel[i] = last ? o[r + 1]! - 1 : o[r]!;
  }
  return takeElements(type, child, sel, nulls, n);
}

/** Row i of an INT64 argument as a number (NULL: null). */
function intAt(v: Vector, i: number): number | null {
  if (v.nulls !== null && v.nulls[i] === 1) return null;
  return v.data instanceof Float64Array ? v.data[i]! : Number(getValue(v, i) as bigint);
}

/**
 * ARRAY_SLICE, ARRAY_FIRST_N, ...: each row's elements [from, to) of its
 * array, where `range(len, ints, out)` sets out[0], out[1] from the row's
 * INT64 arguments (or raises); NULL where any argument is NULL, as the boxed
 * kernel's NULL propagation. Elements are taken from the child vector.
 */
function rangeList(type: SqlType, args: readonly Vector[], n: number, range: (len: number, ints: readonly number[], out: Int32Array) => void): Vector | null {
  const a = args[0]!;
  const l = listRows(a);
  if (!l) return null;
  const { offsets: o, child, rows } = l;
  const offsets = new Int32Array(n + 1);
  const starts = new Int32Array(n);
  const ints: number[] = new Array<number>(args.length - 1);
  const out = new Int32Array(2);
  let nulls: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    let isNull = a.nulls !== null && a.nulls[i] === 1;
    for (let k = 1; k < args.length && !isNull; k++) {
      const x = intAt(args[k]!, i);
      if (x === null) isNull = true;
      else ints[k - 1] = x;
    }
    if (isNull) {
      (nulls ??= new Uint8Array(n))[i] = 1;
      offsets[i + 1] = offsets[i]!;
      continue;
    }
    const r = rows === null ? i : rows[i]!;
    range(o[r + 1]! - o[r]!, ints, out);
    starts[i] = o[r]! + out[0]!;
    offsets[i + 1] = offsets[i]! + Math.max(0, out[1]! - out[0]!);
  }
  const sel = new Int32Array(offsets[n]!);
  for (let i = 0, k = 0; i < n; i++) for (let e = starts[i]!, m = offsets[i + 1]! - offsets[i]!; m > 0; m--, e++) sel[k++] = e;
  return nestedVector(type, n, nulls, { offsets, child: takeVector(child, sel) });
}

/** The element equality test ARRAY_INCLUDES* use (SQL =: NULL and NaN equal nothing) for elements of a scalar child vector; null for layouts left to the boxed kernel. */
function elementMatcher(child: Vector): ((e: number, x: Value) => boolean) | null {
  if (child.nested || child.data instanceof BigInt64Array) return null;
  const nulls = child.nulls;
  const d = child.data;
  if (d instanceof Float64Array || d instanceof Int32Array) {
    return (e, x) => {
      if (nulls !== null && nulls[e] === 1) return false;
      // An INT64 beyond 2^53 equals no element of the exact-double layout.
      const y = typeof x === 'bigint' ? (BigInt(Number(x)) === x ? Number(x) : NaN) : (x as number);
      return d[e] === y;
    };
  }
  if (d instanceof Uint8Array) return (e, x) => (nulls === null || nulls[e] === 0) && d[e] === (x === true ? 1 : 0);
  const vals = d as Value[];
  return (e, x) => (nulls === null || nulls[e] === 0) && sqlEquals(vals[e]!, x) === true;
}

/** ARRAY_INCLUDES(arr, x) and ARRAY_INCLUDES_ANY/ALL(arr, xs) over arrays in the layout: the row's elements scanned in the child vector. */
function includesList(args: readonly Vector[], n: number, mode: 'one' | 'any' | 'all'): Vector | null {
  const a = args[0]!;
  const l = listRows(a);
  if (!l) return null;
  const { offsets: o, child, rows } = l;
  const eq = elementMatcher(child);
  if (!eq) return null;
  const needles = args[1]!;
  const nl = mode === 'one' ? null : listRows(needles);
  if (nl && (nl.child.nested || nl.child.data instanceof BigInt64Array)) return null;
  const data = new Uint8Array(n);
  let nulls: Uint8Array | null = null;
  const has = (r: number, x: Value): boolean => {
    if (x === null) return false; // a NULL search value is never found
    for (let e = o[r]!; e < o[r + 1]!; e++) if (eq(e, x)) return true;
    return false;
  };
  for (let i = 0; i < n; i++) {
    if ((a.nulls !== null && a.nulls[i] === 1) || (needles.nulls !== null && needles.nulls[i] === 1)) {
      (nulls ??= new Uint8Array(n))[i] = 1;
      continue;
    }
    const r = rows === null ? i : rows[i]!;
    let found: boolean;
    if (mode === 'one') found = has(r, getValue(needles, i));
    else {
      // The search values: from the layout too, else the row's value (a literal array).
      let xs: Value[];
      if (nl) {
        const q = nl.rows === null ? i : nl.rows[i]!;
        xs = [];
        for (let e = nl.offsets[q]!; e < nl.offsets[q + 1]!; e++) xs.push(getValue(nl.child, e));
      } else xs = getValue(needles, i) as Value[];
      found = mode === 'all' ? xs.every((x) => has(r, x)) : xs.some((x) => has(r, x));
    }
    if (found) data[i] = 1;
  }
  return { type: T.BOOL, length: n, data, nulls };
}

/** ARRAY_CONCAT: each row's arrays one after another; NULL if any is NULL (as the boxed kernel's NULL propagation). */
function concatLists(type: SqlType, args: readonly Vector[], n: number): Vector | null {
  const ps = args.map((a) => packedList(a, n));
  if (ps.some((p) => p === null) || type.kind !== 'ARRAY') return null;
  const lists = ps as { offsets: Int32Array; child: Vector }[];
  const all = concatVectors(type.element, lists.map((p) => p.child));
  const bases = new Int32Array(lists.length);
  for (let j = 1; j < lists.length; j++) bases[j] = bases[j - 1]! + lists[j - 1]!.child.length;
  let nulls: Uint8Array | null = null;
  for (const a of args) if (a.nulls !== null) for (let i = 0; i < n; i++) if (a.nulls[i] === 1) (nulls ??= new Uint8Array(n))[i] = 1;
  const offsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    let len = 0;
    if (nulls === null || nulls[i] === 0) for (const p of lists) len += p.offsets[i + 1]! - p.offsets[i]!;
    checkLen(len, 'ARRAY_CONCAT');
    offsets[i + 1] = offsets[i]! + len;
  }
  const sel = new Int32Array(offsets[n]!);
  for (let i = 0, k = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    lists.forEach((p, j) => {
      for (let e = p.offsets[i]!; e < p.offsets[i + 1]!; e++) sel[k++] = bases[j]! + e;
    });
  }
  return nestedVector(type, n, nulls, { offsets, child: takeVector(all, sel) });
}

/** ARRAY_TO_STRING of STRING arrays: the elements read one by one from the child vector. */
function joinList(args: readonly Vector[], n: number): Vector | null {
  const a = args[0]!;
  const l = listRows(a);
  if (!l) return null;
  const { offsets: o, child, rows } = l;
  const out = new Array<Value>(n);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const sep = getValue(args[1]!, i) as string | null;
    const nullText = args.length > 2 ? (getValue(args[2]!, i) as string | null) : undefined;
    if ((a.nulls !== null && a.nulls[i] === 1) || sep === null || nullText === null) {
      out[i] = null;
      continue;
    }
    parts.length = 0;
    const r = rows === null ? i : rows[i]!;
    for (let e = o[r]!; e < o[r + 1]!; e++) {
      const x = getValue(child, e) as string | null;
      if (x !== null) parts.push(x);
      else if (nullText !== undefined) parts.push(nullText);
    }
    out[i] = parts.join(sep);
  }
  return vectorFromValues(T.STRING, out);
}

export function registerArrays(): void {
  const arrayLength = rowKernel(T.INT64, (v) => BigInt((v[0] as Value[]).length));
  defineScalar('ARRAY_LENGTH', [
    sig(['ARRAY'], 'INT64', (args, n, ctx) => {
      // Arrays in the Arrow layout (a stored column's scan): lengths from the offsets.
      const l = listRows(args[0]!);
      if (!l) return arrayLength(args, n, ctx);
      const { offsets: o, rows } = l;
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const r = rows === null ? i : rows[i]!;
        out[i] = o[r + 1]! - o[r]!;
      }
      return { type: T.INT64, length: n, data: out, nulls: args[0]!.nulls };
    }),
  ]);
  defineScalar('ARRAY_CONCAT', [
    sigf(['ARRAY<T1>', rep('ARRAY<T1>')], 'ARRAY<T1>', (c) => {
      const boxed = rowKernel(c.returnType, (v) => {
        const out: Value[] = [];
        for (const a of v) for (const e of a as Value[]) out.push(e);
        checkLen(out.length, 'ARRAY_CONCAT');
        return out;
      });
      return (args, n, ctx) => concatLists(c.returnType, args, n) ?? boxed(args, n, ctx);
    }),
  ]);
  defineScalar('ARRAY_REVERSE', [
    sigf(['ARRAY<T1>'], 'ARRAY<T1>', (c) => {
      const boxed = rowKernel(c.returnType, (v) => (v[0] as Value[]).slice().reverse());
      return (args, n, ctx) => reverseList(c.returnType, args[0]!, n) ?? boxed(args, n, ctx);
    }),
  ]);
  const joinStrings = rowKernel(T.STRING, (v) => {
    const arr = v[0] as Value[];
    if (arr === null || v[1] === null || (v.length > 2 && v[2] === null)) return null;
    const parts: string[] = [];
      for (const e of arr) {
        if (e === null) {
          if (v.length > 2) parts.push(v[2] as string);
        } else parts.push(e as string);
      }
      return parts.join(v[1] as string);
    }, false);
  defineScalar('ARRAY_TO_STRING', [
    sigf(['ARRAY<STRING>', 'STRING', opt('STRING')], 'STRING', () => (args, n, ctx) => joinList(args, n) ?? joinStrings(args, n, ctx)),
    sigf(['ARRAY<BYTES>', 'BYTES', opt('BYTES')], 'BYTES', () => rowKernel(T.BYTES, (v) => {
      const arr = v[0] as Value[];
      if (arr === null || v[1] === null || (v.length > 2 && v[2] === null)) return null;
      const parts: Uint8Array[] = [];
      let first = true;
      for (const e of arr) {
        const x = e === null ? (v.length > 2 ? (v[2] as Uint8Array) : null) : (e as Uint8Array);
        if (x === null) continue;
        if (!first) parts.push(v[1] as Uint8Array);
        parts.push(x);
        first = false;
      }
      return concatBytes(parts);
    }, false)),
  ]);
  defineScalar('GENERATE_ARRAY', [
    sig(['INT64', 'INT64', opt('INT64')], 'ARRAY<INT64>', rowKernel(arrayOf(T.INT64), (v) => generateArray(v[0]!, v[1]!, v.length > 2 ? v[2]! : 1n, 'INT64'))),
    sig(['NUMERIC', 'NUMERIC', opt('NUMERIC')], 'ARRAY<NUMERIC>', rowKernel(arrayOf(T.NUMERIC), (v) => generateArray(v[0]!, v[1]!, v.length > 2 ? v[2]! : new Decimal(1), 'NUMERIC'))),
    sig(['BIGNUMERIC', 'BIGNUMERIC', opt('BIGNUMERIC')], 'ARRAY<BIGNUMERIC>', rowKernel(arrayOf(T.BIGNUMERIC), (v) => generateArray(v[0]!, v[1]!, v.length > 2 ? v[2]! : new Decimal(1), 'BIGNUMERIC'))),
    sig(['FLOAT64', 'FLOAT64', opt('FLOAT64')], 'ARRAY<FLOAT64>', rowKernel(arrayOf(T.FLOAT64), (v) => generateArray(v[0]!, v[1]!, v.length > 2 ? v[2]! : 1, 'FLOAT64'))),
  ]);
  // The reference refuses SAFE. on ARRAY_INCLUDES[_ANY|_ALL], ARRAY_FILTER and ARRAY_TRANSFORM ('does not support SAFE
  // error mode'); the documentation lists no SAFE exceptions, so the reference is the evidence.
  const noSafe = { safeCallable: false };
  defineScalar('ARRAY_INCLUDES', [
    sigf(['ARRAY<T1>', 'T1'], 'BOOL', () => {
      const boxed = rowKernel(T.BOOL, (v) => {
        if (v[0] === null || v[1] === null) return null;
        for (const e of v[0] as Value[]) if (sqlEquals(e, v[1]!) === true) return true;
        return false;
      }, false);
      return (args, n, ctx) => includesList(args, n, 'one') ?? boxed(args, n, ctx);
    }),
    sigf(['ARRAY', lambdaArg('BOOL')], 'BOOL', (c) => lambdaKernel((c.argTypes[0] as { element: SqlType }).element, T.BOOL, false, (_a, res) => res.some((x) => x === true))),
  ], noSafe);
  const incl = (all: boolean) =>
    sigf(['ARRAY<T1>', 'ARRAY<T1>'], 'BOOL', () => {
      const boxed = rowKernel(T.BOOL, (v) => {
        if (v[0] === null || v[1] === null) return null;
        const hay = v[0] as Value[];
        const need = v[1] as Value[];
        // A NULL search value equals nothing, so it is never found (the reference's rule): ALL is false, ANY skips it.
        const has = (x: Value) => x !== null && hay.some((e) => sqlEquals(e, x) === true);
        if (all) return need.every(has);
        return need.some(has);
      }, false);
      return (args, n, ctx) => includesList(args, n, all ? 'all' : 'any') ?? boxed(args, n, ctx);
    });
  defineScalar('ARRAY_INCLUDES_ALL', [incl(true)], noSafe);
  defineScalar('ARRAY_INCLUDES_ANY', [incl(false)], noSafe);
  defineScalar('ARRAY_FIRST', [sigf(['ARRAY<T1>'], 'T1', (c) => {
    const boxed = rowKernel(c.returnType, (v) => {
      const a = v[0] as Value[];
      if (a.length === 0) fail('ARRAY_FIRST cannot get the first element of an empty array');
      return a[0]!;
    });
    return (args, n, ctx) => endElement(c.returnType, args[0]!, n, false) ?? boxed(args, n, ctx);
  })]);
  defineScalar('ARRAY_LAST', [sigf(['ARRAY<T1>'], 'T1', (c) => {
    const boxed = rowKernel(c.returnType, (v) => {
      const a = v[0] as Value[];
      if (a.length === 0) fail('ARRAY_LAST cannot get the last element of an empty array');
      return a[a.length - 1]!;
    });
    return (args, n, ctx) => endElement(c.returnType, args[0]!, n, true) ?? boxed(args, n, ctx);
  })]);
  const firstN = (last: boolean) => sigf(['ARRAY<T1>', 'INT64'], 'ARRAY<T1>', (c) => {
    const boxed = rowKernel(c.returnType, (v) => {
      const a = v[0] as Value[];
      const k = Number(v[1] as bigint);
      if (k < 0) fail(`The n argument to ARRAY_${last ? 'LAST' : 'FIRST'}_N must not be negative`);
      return last ? a.slice(Math.max(0, a.length - k)) : a.slice(0, k);
    });
    const range = (len: number, [k]: readonly number[], out: Int32Array): void => {
      if (k! < 0) fail(`The n argument to ARRAY_${last ? 'LAST' : 'FIRST'}_N must not be negative`);
      out[0] = last ? Math.max(0, len - k!) : 0;
      out[1] = last ? len : Math.min(len, k!);
    };
    return (args, n, ctx) => rangeList(c.returnType, args, n, range) ?? boxed(args, n, ctx);
  });
  defineScalar('ARRAY_FIRST_N', [firstN(false)]);
  defineScalar('ARRAY_LAST_N', [firstN(true)]);
  const removeN = (last: boolean) => sigf(['ARRAY<T1>', 'INT64'], 'ARRAY<T1>', (c) => {
    const boxed = rowKernel(c.returnType, (v) => {
      const a = v[0] as Value[];
      const k = Number(v[1] as bigint);
      if (k < 0) fail(`The n argument to ARRAY_REMOVE_${last ? 'LAST' : 'FIRST'}_N must not be negative`);
      return last ? a.slice(0, Math.max(0, a.length - k)) : a.slice(k);
    });
    const range = (len: number, [k]: readonly number[], out: Int32Array): void => {
      if (k! < 0) fail(`The n argument to ARRAY_REMOVE_${last ? 'LAST' : 'FIRST'}_N must not be negative`);
      out[0] = last ? 0 : Math.min(len, k!);
      out[1] = last ? Math.max(0, len - k!) : len;
    };
    return (args, n, ctx) => rangeList(c.returnType, args, n, range) ?? boxed(args, n, ctx);
  });
  defineScalar('ARRAY_REMOVE_FIRST_N', [removeN(false)]);
  defineScalar('ARRAY_REMOVE_LAST_N', [removeN(true)]);
  /** ARRAY_SLICE's inclusive bounds (negative: from the end) as [from, to) within len. */
  const sliceRange = (len: number, [s0, e0]: readonly number[], out: Int32Array): void => {
    const s = Math.max(0, s0! < 0 ? len + s0! : s0!);
    const e = Math.min(len - 1, e0! < 0 ? len + e0! : e0!);
    out[0] = s > e ? 0 : s;
    out[1] = s > e ? 0 : e + 1;
  };
  defineScalar('ARRAY_SLICE', [sigf(['ARRAY<T1>', 'INT64', 'INT64'], 'ARRAY<T1>', (c) => {
    const boxed = rowKernel(c.returnType, (v) => {
      const a = v[0] as Value[];
      const out = new Int32Array(2);
      sliceRange(a.length, [Number(v[1] as bigint), Number(v[2] as bigint)], out);
      return a.slice(out[0], out[1]);
    });
    return (args, n, ctx) => rangeList(c.returnType, args, n, sliceRange) ?? boxed(args, n, ctx);
  })]);
  defineScalar('ARRAY_IS_DISTINCT', [sig(['ARRAY'], 'BOOL', rowKernel(T.BOOL, (v) => {
    const seen = new Set<string>();
    for (const e of v[0] as Value[]) {
      const k = valueKey(e);
      if (seen.has(k)) return false;
      seen.add(k);
    }
    return true;
  }))]);
  defineScalar('ARRAY_FILTER', [
    sigf(['ARRAY', lambdaArg('BOOL')], (c) => c.argTypes[0]!, (c) => lambdaKernel((c.argTypes[0] as { element: SqlType }).element, c.argTypes[0]!, false, (a, res) => a.filter((_e, i) => res[i] === true))),
  ], noSafe);
  defineScalar('ARRAY_TRANSFORM', [
    sigf(['ARRAY', lambdaArg('ANY')], (c) => arrayOf(c.argTypes[1]!), (c) => lambdaKernel((c.argTypes[0] as { element: SqlType }).element, arrayOf(c.argTypes[1]!), false, (_a, res) => res)),
  ], noSafe);
  defineScalar('ARRAY_SUM', [
    sig(['ARRAY<INT64>'], 'INT64', rowKernel(T.INT64, (v) => {
      let s = 0n;
      let any = false;
      for (const e of v[0] as Value[]) if (e !== null) {
        s += e as bigint;
        any = true;
      }
      if (s > 9223372036854775807n || s < -9223372036854775808n) fail('int64 overflow');
      return any ? s : null;
    })),
    sig(['ARRAY<FLOAT64>'], 'FLOAT64', rowKernel(T.FLOAT64, (v) => {
      const els = (v[0] as Value[]).filter((e) => e !== null) as number[];
      return els.length === 0 ? null : els.reduce((a, b) => a + b, 0);
    })),
  ]);
  const minmax = (max: boolean) => sigf(['ARRAY<T1>'], 'T1', (c) => rowKernel(c.returnType, (v) => {
    let best: Value = null;
    for (const e of v[0] as Value[]) {
      if (e === null) continue;
      if (typeof e === 'number' && Number.isNaN(e)) return NaN;
      if (best === null || (max ? compareValues(e, best) > 0 : compareValues(e, best) < 0)) best = e;
    }
    return best;
  }));
  defineScalar('ARRAY_MAX', [minmax(true)]);
  defineScalar('ARRAY_MIN', [minmax(false)]);
  defineScalar('FLATTEN', [sigf(['ARRAY'], (c) => c.argTypes[0]!, (c) => rowKernel(c.returnType, (v) => v[0]!))]);
}

