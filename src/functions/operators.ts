// Operators as functions, under ZetaSQL's internal names ($add, $equal, ...).
// Arithmetic and comparisons are the hottest kernels: typed-array loops over
// the vector layouts, with BigInt only when an INT64 leaves ±2^53.
import { isEqualityComparable, isGroupable, isOrderable, typeToSql, T, type SqlType } from '../types/types.js';
import { Decimal, Interval, JsonValue, type Value } from '../types/values.js';
import { compareIntervals } from './interval-range-kernels.js';
import { JsonText } from './json-core.js';
import { getValue, listRows, takeElements, vectorFromValues, type Int64Data, type Vector } from '../types/vector.js';
import { formatDate, MAX_DATE, MIN_DATE } from './civil.js';
import { compareStrings, compareValues, groupEquals, sqlEquals } from './compare.js';
import { formatErrNum } from './format-number.js';
import { diffToInterval } from './interval.js';
import { intervalNegKernel, intervalScaleKernel, intervalSumKernel, temporalIntervalKernel } from './interval-arith-kernels.js';
import { MAX_ROW_BYTES, rowTooLarge } from '../types/errors.js';
import { likeMatches } from './like.js';
import { checkDecimal, type DecKind } from './numeric.js';
import { compareWords } from '../types/decimal-words.js';
import { arithWords, distinctWords, onWords, unaryWords, wordsArg } from './decimal-kernels.js';
import type { ScalarKernel } from './registry.js';
import { defineScalar, operatorDisplay, sig, sigf, type Signature, type KernelMaker, type SigContext } from './signature.js';
import { I64Out, INT64_MAX, INT64_MIN, fail, i64At, mergeNulls, rowKernel, valuesOf } from './vec.js';

// ---------------------------------------------------------------- INT64 arithmetic

type IntOp = 'add' | 'sub' | 'mul';
const SYM: Record<IntOp, string> = { add: '+', sub: '-', mul: '*' };

function int64Binary(op: IntOp): ScalarKernel {
  const sym = SYM[op];
  const slow = (out: I64Out, i: number, a: Int64Data, b: Int64Data): void => {
    const x = i64At(a, i);
    const y = i64At(b, i);
    const r = op === 'add' ? x + y : op === 'sub' ? x - y : x * y;
    if (r > INT64_MAX || r < INT64_MIN) fail(`int64 overflow: ${x} ${sym} ${y}`);
    out.setBig(i, r);
  };
  // One monomorphic loop per operator: |r| < 2^53 proves the double result exact;
  // otherwise the row is redone in BigInt (and the output may switch layout).
  const fast =
    op === 'add'
      ? (a: Float64Array, b: Float64Array, out: I64Out, nulls: Uint8Array | null, n: number): number => {
          const f = out.f!;
          for (let i = 0; i < n; i++) {
            const r = a[i]! + b[i]!;
            if (r < 9007199254740992 && r > -9007199254740992) f[i] = r;
            else if (nulls === null || nulls[i] === 0) return i;
          }
          return n;
        }
      : op === 'sub'
        ? (a: Float64Array, b: Float64Array, out: I64Out, nulls: Uint8Array | null, n: number): number => {
            const f = out.f!;
            for (let i = 0; i < n; i++) {
              const r = a[i]! - b[i]!;
              if (r < 9007199254740992 && r > -9007199254740992) f[i] = r;
              else if (nulls === null || nulls[i] === 0) return i;
            }
            return n;
          }
        : (a: Float64Array, b: Float64Array, out: I64Out, nulls: Uint8Array | null, n: number): number => {
            const f = out.f!;
            for (let i = 0; i < n; i++) {
              const r = a[i]! * b[i]!;
              if (r < 9007199254740992 && r > -9007199254740992) f[i] = r === 0 ? 0 : r;
              else if (nulls === null || nulls[i] === 0) return i;
            }
            return n;
          };
  return (args, n) => {
    const nulls = mergeNulls(args, n);
    const a = args[0]!.data as Int64Data;
    const b = args[1]!.data as Int64Data;
    const out = new I64Out(n);
    if (a instanceof Float64Array && b instanceof Float64Array) {
      let i = fast(a, b, out, nulls, n);
      // Rare: a value left ±2^53; finish the batch row by row.
      for (; i < n; i++) if (nulls === null || nulls[i] === 0) slow(out, i, a, b);
    } else {
      for (let i = 0; i < n; i++) if (nulls === null || nulls[i] === 0) slow(out, i, a, b);
    }
    return out.vector(T.INT64, nulls);
  };
}

// ---------------------------------------------------------------- FLOAT64 arithmetic

type FloatOp = 'add' | 'sub' | 'mul' | 'div';
function float64Binary(op: FloatOp): ScalarKernel {
  const sym = op === 'div' ? '/' : SYM[op];
  return (args, n) => {
    const nulls = mergeNulls(args, n);
    const a = args[0]!.data as Float64Array;
    const b = args[1]!.data as Float64Array;
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const x = a[i]!;
      const y = b[i]!;
      let r: number;
      if (op === 'add') r = x + y;
      else if (op === 'sub') r = x - y;
      else if (op === 'mul') r = x * y;
      else {
        if (y === 0) fail(`division by zero: ${formatErrNum(x)} / ${formatErrNum(y)}`);
        r = x / y;
      }
      if (!Number.isFinite(r) && Number.isFinite(x) && Number.isFinite(y)) fail(`double overflow: ${formatErrNum(x)} ${sym} ${formatErrNum(y)}`);
      out[i] = r;
    }
    return { type: T.FLOAT64, length: n, data: out, nulls };
  };
}

// ---------------------------------------------------------------- NUMERIC arithmetic

/** NUMERIC x op y: on the words (decimal-kernels.ts), else per row through decimal.js. */
function decimalBinary(kind: DecKind, op: FloatOp): ScalarKernel {
  const type = T[kind];
  return onWords((args, n) => arithWords(op, type, args, n), boxedDecimalBinary(kind, op));
}

function boxedDecimalBinary(kind: DecKind, op: FloatOp): ScalarKernel {
  const sym = op === 'div' ? '/' : SYM[op];
  const type = T[kind];
  return rowKernel(type, (v) => {
    const x = v[0] as Decimal;
    const y = v[1] as Decimal;
    let r: Decimal;
    if (op === 'add') r = x.plus(y);
    else if (op === 'sub') r = x.minus(y);
    else if (op === 'mul') r = x.times(y);
    else {
      if (y.isZero()) fail(`division by zero: ${x.toFixed()} / ${y.toFixed()}`);
      r = x.div(y);
    }
    return checkDecimal(r, kind, `${x.toFixed()} ${sym} ${y.toFixed()}`);
  });
}

// ---------------------------------------------------------------- date/time arithmetic

function dateAddDays(sign: number, dateFirst: boolean): ScalarKernel {
  return (args, n) => {
    const nulls = mergeNulls(args, n);
    const dv = args[dateFirst ? 0 : 1]!;
    const kv = args[dateFirst ? 1 : 0]!;
    const d = dv.data as Int32Array;
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const k = kv.data instanceof Float64Array ? kv.data[i]! : Number((kv.data as BigInt64Array)[i]!);
      const r = d[i]! + sign * k;
      if (r < MIN_DATE || r > MAX_DATE) fail(`Adding ${sign * k} DAY to date ${formatDate(d[i]!)} causes overflow`);
      out[i] = r;
    }
    return { type: T.DATE, length: n, data: out, nulls };
  };
}

// ---------------------------------------------------------------- arithmetic definitions

const arith = (sym: string) => operatorDisplay(sym);

function registerArithmetic(): void {
  const numSigs = (op: IntOp | 'div'): Signature<KernelMaker>[] => {
    const s: Signature<KernelMaker>[] = [];
    if (op !== 'div') s.push(sig(['INT64', 'INT64'], 'INT64', int64Binary(op)));
    s.push(sig(['NUMERIC', 'NUMERIC'], 'NUMERIC', decimalBinary('NUMERIC', op)));
    s.push(sig(['BIGNUMERIC', 'BIGNUMERIC'], 'BIGNUMERIC', decimalBinary('BIGNUMERIC', op)));
    s.push(sig(['FLOAT64', 'FLOAT64'], 'FLOAT64', float64Binary(op)));
    return s;
  };
  // $divide lists FLOAT64 first: INT64 / INT64 is FLOAT64.
  const div = numSigs('div');
  defineScalar('$divide', [div[2]!, div[0]!, div[1]!, sig(['INTERVAL', 'INT64'], 'INTERVAL', intervalScaleKernel('div'))], { display: arith('/') });

  defineScalar(
    '$add',
    [
      ...numSigs('add'),
      sig(['DATE', 'INT64'], 'DATE', dateAddDays(1, true)),
      sig(['INT64', 'DATE'], 'DATE', dateAddDays(1, false)),
      sig(['TIMESTAMP', 'INTERVAL'], 'TIMESTAMP', temporalIntervalKernel('TIMESTAMP', 1, true)),
      sig(['INTERVAL', 'TIMESTAMP'], 'TIMESTAMP', temporalIntervalKernel('TIMESTAMP', 1, false)),
      sig(['DATETIME', 'INTERVAL'], 'DATETIME', temporalIntervalKernel('DATETIME', 1, true)),
      sig(['INTERVAL', 'DATETIME'], 'DATETIME', temporalIntervalKernel('DATETIME', 1, false)),
      sig(['DATE', 'INTERVAL'], 'DATETIME', temporalIntervalKernel('DATE', 1, true)),
      sig(['INTERVAL', 'DATE'], 'DATETIME', temporalIntervalKernel('DATE', 1, false)),
      sig(['INTERVAL', 'INTERVAL'], 'INTERVAL', intervalSumKernel(1)),
    ],
    { display: arith('+') },
  );
  defineScalar(
    '$subtract',
    [
      ...numSigs('sub'),
      sig(['DATE', 'INT64'], 'DATE', dateAddDays(-1, true)),
      sig(['TIMESTAMP', 'INTERVAL'], 'TIMESTAMP', temporalIntervalKernel('TIMESTAMP', -1, true)),
      sig(['DATETIME', 'INTERVAL'], 'DATETIME', temporalIntervalKernel('DATETIME', -1, true)),
      sig(['DATE', 'INTERVAL'], 'DATETIME', temporalIntervalKernel('DATE', -1, true)),
      sig(['TIMESTAMP', 'TIMESTAMP'], 'INTERVAL', rowKernel(T.INTERVAL, (v) => diffToInterval(v[0] as bigint, v[1] as bigint, false))),
      sig(['DATETIME', 'DATETIME'], 'INTERVAL', rowKernel(T.INTERVAL, (v) => diffToInterval(v[0] as bigint, v[1] as bigint, true))),
      sig(['DATE', 'DATE'], 'INTERVAL', rowKernel(T.INTERVAL, (v) => new Interval(0, (v[0] as number) - (v[1] as number), 0n))),
      sig(['TIME', 'TIME'], 'INTERVAL', rowKernel(T.INTERVAL, (v) => new Interval(0, 0, BigInt((v[0] as number) - (v[1] as number))))),
      sig(['INTERVAL', 'INTERVAL'], 'INTERVAL', intervalSumKernel(-1)),
    ],
    { display: arith('-') },
  );
  defineScalar(
    '$multiply',
    [
      ...numSigs('mul'),
      sig(['INTERVAL', 'INT64'], 'INTERVAL', intervalScaleKernel('mul')),
      sig(['INT64', 'INTERVAL'], 'INTERVAL', intervalScaleKernel('mul', false)),
    ],
    { display: arith('*') },
  );

  const negInt: ScalarKernel = (args, n) => {
    const a = args[0]!;
    const out = new I64Out(n);
    const d = a.data as Int64Data;
    for (let i = 0; i < n; i++) {
      if (a.nulls !== null && a.nulls[i] === 1) continue;
      if (d instanceof Float64Array) out.setNum(i, d[i] === 0 ? 0 : -d[i]!);
      else {
        if (d[i] === INT64_MIN) fail(`int64 overflow: -${d[i]}`);
        out.setBig(i, -d[i]!);
      }
    }
    return out.vector(T.INT64, a.nulls);
  };
  const negFloat: ScalarKernel = (args, n) => {
    const a = args[0]!;
    const d = a.data as Float64Array;
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = -d[i]!;
    return { type: T.FLOAT64, length: n, data: out, nulls: a.nulls };
  };
  defineScalar(
    '$unary_minus',
    [
      sig(['INT64'], 'INT64', negInt),
      sig(['NUMERIC'], 'NUMERIC', onWords((args, n) => unaryWords('neg', T.NUMERIC, args, n), rowKernel(T.NUMERIC, (v) => checkDecimal((v[0] as Decimal).neg(), 'NUMERIC')))),
      sig(['BIGNUMERIC'], 'BIGNUMERIC', onWords((args, n) => unaryWords('neg', T.BIGNUMERIC, args, n), rowKernel(T.BIGNUMERIC, (v) => checkDecimal((v[0] as Decimal).neg(), 'BIGNUMERIC')))),
      sig(['FLOAT64'], 'FLOAT64', negFloat),
      sig(['INTERVAL'], 'INTERVAL', intervalNegKernel),
    ],
    { display: operatorDisplay('-', 'prefix') },
  );
}

// ---------------------------------------------------------------- comparisons

type CmpOp = 'eq' | 'ne' | 'lt' | 'le' | 'gt' | 'ge';

/** Fast numeric comparison over doubles (FLOAT64, INT64-as-double, DATE, TIME, BOOL). */
function cmpF64(op: CmpOp, a: Float64Array, b: Float64Array, n: number, out: Uint8Array): void {
  switch (op) {
    case 'eq':
      for (let i = 0; i < n; i++) out[i] = a[i] === b[i] ? 1 : 0;
      break;
    case 'ne':
      for (let i = 0; i < n; i++) out[i] = a[i] !== b[i] ? 1 : 0;
      break;
    case 'lt':
      for (let i = 0; i < n; i++) out[i] = a[i]! < b[i]! ? 1 : 0;
      break;
    case 'le':
      for (let i = 0; i < n; i++) out[i] = a[i]! <= b[i]! ? 1 : 0;
      break;
    case 'gt':
      for (let i = 0; i < n; i++) out[i] = a[i]! > b[i]! ? 1 : 0;
      break;
    case 'ge':
      for (let i = 0; i < n; i++) out[i] = a[i]! >= b[i]! ? 1 : 0;
      break;
  }
}

function cmpNumericArrays(op: CmpOp, a: ArrayLike<number>, b: ArrayLike<number>, n: number, out: Uint8Array): void {
  if (a instanceof Float64Array && b instanceof Float64Array) return cmpF64(op, a, b, n, out);
  switch (op) {
    case 'eq':
      for (let i = 0; i < n; i++) out[i] = a[i] === b[i] ? 1 : 0;
      break;
    case 'ne':
      for (let i = 0; i < n; i++) out[i] = a[i] !== b[i] ? 1 : 0;
      break;
    case 'lt':
      for (let i = 0; i < n; i++) out[i] = a[i]! < b[i]! ? 1 : 0;
      break;
    case 'le':
      for (let i = 0; i < n; i++) out[i] = a[i]! <= b[i]! ? 1 : 0;
      break;
    case 'gt':
      for (let i = 0; i < n; i++) out[i] = a[i]! > b[i]! ? 1 : 0;
      break;
    case 'ge':
      for (let i = 0; i < n; i++) out[i] = a[i]! >= b[i]! ? 1 : 0;
      break;
  }
}

function cmpResult(op: CmpOp, c: number): boolean {
  switch (op) {
    case 'eq':
      return c === 0;
    case 'ne':
      return c !== 0;
    case 'lt':
      return c < 0;
    case 'le':
      return c <= 0;
    case 'gt':
      return c > 0;
    case 'ge':
      return c >= 0;
  }
}

function isNaNValue(x: Value): boolean {
  return typeof x === 'number' && Number.isNaN(x);
}

/** Ordering comparison of scalar values with NaN unordered (false except for !=). */
export function compareOp(op: CmpOp, x: Value, y: Value): boolean | null {
  if (x === null || y === null) return null;
  if (op === 'eq' || op === 'ne') {
    const e = sqlEquals(x, y);
    if (e === null) return null;
    return op === 'eq' ? e : !e;
  }
  if (isNaNValue(x) || isNaNValue(y)) return false;
  return cmpResult(op, compareValues(x, y));
}

/** A comparison of NUMERIC / BIGNUMERIC rows by their words (decimal-words.ts), when one side is a scan's words and the other words too or one value. */
function compareDecimalWords(op: CmpOp, a: Vector, b: Vector, n: number, nulls: Uint8Array | null): Vector | null {
  if (!a.decimal && !b.decimal) return null;
  const x = wordsArg(a, n);
  const y = x && wordsArg(b, n);
  if (!x || !y) return null;
  const width = a.type.kind === 'NUMERIC' ? 4 : 8;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    out[i] = cmpResult(op, compareWords(x.words, x.step * i, y.words, y.step * i, width)) ? 1 : 0;
  }
  return { type: T.BOOL, length: n, data: out, nulls };
}

function comparisonKernel(op: CmpOp): ScalarKernel {
  return (args, n) => {
    const a = args[0]!;
    const b = args[1]!;
    const nulls = mergeNulls(args, n);
    if (a.type.kind === b.type.kind && (a.decimal || b.decimal)) {
      const r = compareDecimalWords(op, a, b, n, nulls);
      if (r) return r;
    }
    // INTERVAL parts of a stored column: compared by their keys, no Interval per row.
    if (a.interval || b.interval) {
      const r = compareIntervals(op, a, b, n);
      if (r) return r;
    }
    const out = new Uint8Array(n);
    const ad = a.data;
    const bd = b.data;
    const fast =
      (ad instanceof Float64Array || ad instanceof Int32Array || (ad instanceof Uint8Array && a.type.kind === 'BOOL')) &&
      ad.constructor === bd.constructor;
    if (fast) {
      cmpNumericArrays(op, ad as ArrayLike<number>, bd as ArrayLike<number>, n, out);
    } else if (a.type.kind === 'STRING' && Array.isArray(ad) && Array.isArray(bd)) {
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) continue;
        const x = ad[i] as string;
        const y = bd[i] as string;
        if (op === 'eq') out[i] = x === y ? 1 : 0;
        else if (op === 'ne') out[i] = x !== y ? 1 : 0;
        else out[i] = cmpResult(op, compareValues(x, y)) ? 1 : 0;
      }
    } else {
      const av = valuesOf(a, n);
      const bv = valuesOf(b, n);
      let extraNulls: Uint8Array | null = null;
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) continue;
        const r = compareOp(op, av[i]!, bv[i]!);
        if (r === null) {
          extraNulls ??= nulls ?? new Uint8Array(n);
          extraNulls[i] = 1;
        } else out[i] = r ? 1 : 0;
      }
      return { type: T.BOOL, length: n, data: out, nulls: extraNulls ?? nulls };
    }
    return { type: T.BOOL, length: n, data: out, nulls };
  };
}

// ---------------------------------------------------------------- BETWEEN

/** One row of BETWEEN on scalar values: x >= lo AND x <= hi with three-valued AND (NaN is unordered: FALSE). */
function betweenRow(x: Value, lo: Value, hi: Value): boolean | null {
  const a = compareOp('ge', x, lo);
  const b = compareOp('le', x, hi);
  if (a === false || b === false) return false;
  if (a === null || b === null) return null;
  return true;
}

// One loop per layout: a shared loop over ArrayLike<number> goes megamorphic.
function betweenF64(x: Float64Array, lo: Float64Array, hi: Float64Array, n: number, out: Uint8Array): void {
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    out[i] = v >= lo[i]! && v <= hi[i]! ? 1 : 0;
  }
}

function betweenI32(x: Int32Array, lo: Int32Array, hi: Int32Array, n: number, out: Uint8Array): void {
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    out[i] = v >= lo[i]! && v <= hi[i]! ? 1 : 0;
  }
}

function betweenStr(x: Value[], lo: Value[], hi: Value[], n: number, nulls: Uint8Array | null, out: Uint8Array): void {
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const v = x[i] as string;
    out[i] = compareStrings(v, lo[i] as string) >= 0 && compareStrings(v, hi[i] as string) <= 0 ? 1 : 0;
  }
}

/**
 * x BETWEEN lo AND hi. Typed layouts (FLOAT64, INT64 as doubles, DATE,
 * TIME, TIMESTAMP, DATETIME) and STRING run one loop over the batch; rows
 * with a NULL argument are redone as scalars afterwards (a NULL bound still
 * gives FALSE when the other bound fails). Other layouts go row by row.
 */
/**
 * NUMERIC / BIGNUMERIC x BETWEEN lo AND hi on the words (decimal-words.ts),
 * when x is words and the bounds words or one value each; null otherwise. A
 * NULL bound leaves FALSE where the other bound already fails, else NULL.
 */
function betweenDecimalWords(x: Vector, lo: Vector, hi: Vector, n: number): Vector | null {
  if (!x.decimal) return null;
  const a = wordsArg(x, n);
  const l = a && wordsArg(lo, n);
  const h = l && wordsArg(hi, n);
  if (!a || !l || !h) return null;
  const w = x.decimal.width;
  const out = new Uint8Array(n);
  let rn: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    if (x.nulls !== null && x.nulls[i] === 1) {
      (rn ??= new Uint8Array(n))[i] = 1;
      continue;
    }
    const ge = lo.nulls !== null && lo.nulls[i] === 1 ? null : compareWords(a.words, a.step * i, l.words, l.step * i, w) >= 0;
    const le = hi.nulls !== null && hi.nulls[i] === 1 ? null : compareWords(a.words, a.step * i, h.words, h.step * i, w) <= 0;
    if (ge === false || le === false) continue;
    if (ge === null || le === null) (rn ??= new Uint8Array(n))[i] = 1;
    else out[i] = 1;
  }
  return { type: T.BOOL, length: n, data: out, nulls: rn };
}

/** NUMERIC / BIGNUMERIC x IN (...) on the words, when x is words and every item words or one value (a NULL item: one value too); null otherwise. */
function inDecimalWords(args: readonly Vector[], n: number): Vector | null {
  const x = args[0]!;
  if (!x.decimal) return null;
  const a = wordsArg(x, n);
  if (!a) return null;
  const w = x.decimal.width;
  const items: { words: Uint32Array; step: 0 | 1; nulls: Uint8Array | null }[] = [];
  for (let k = 1; k < args.length; k++) {
    const v = args[k]!;
    const allNull = v.nulls !== null && v.nulls.subarray(0, n).every((b) => b === 1);
    const iw = allNull ? { words: new Uint32Array(w), step: 0 as const } : wordsArg(v, n);
    if (!iw) return null;
    items.push({ ...iw, nulls: v.nulls });
  }
  const out = new Uint8Array(n);
  let rn: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    if (x.nulls !== null && x.nulls[i] === 1) {
      (rn ??= new Uint8Array(n))[i] = 1;
      continue;
    }
    let sawNull = false;
    for (const it of items) {
      if (it.nulls !== null && it.nulls[i] === 1) sawNull = true;
      else if (compareWords(a.words, a.step * i, it.words, it.step * i, w) === 0) {
        out[i] = 1;
        break;
      }
    }
    if (out[i] === 0 && sawNull) (rn ??= new Uint8Array(n))[i] = 1;
  }
  return { type: T.BOOL, length: n, data: out, nulls: rn };
}

const betweenKernel: ScalarKernel = (args, n) => {
  const [x, lo, hi] = args as [Vector, Vector, Vector];
  const words = betweenDecimalWords(x, lo, hi, n);
  if (words) return words;
  const xd = x.data;
  const ld = lo.data;
  const hd = hi.data;
  const nulls = mergeNulls(args, n);
  const out = new Uint8Array(n);
  if (xd instanceof Float64Array && ld instanceof Float64Array && hd instanceof Float64Array) betweenF64(xd, ld, hd, n, out);
  else if (xd instanceof Int32Array && ld instanceof Int32Array && hd instanceof Int32Array) betweenI32(xd, ld, hd, n, out);
  else if (x.type.kind === 'STRING' && Array.isArray(xd) && Array.isArray(ld) && Array.isArray(hd)) betweenStr(xd, ld, hd, n, nulls, out);
  else {
    const xs = valuesOf(x, n);
    const ls = valuesOf(lo, n);
    const hs = valuesOf(hi, n);
    const data = new Uint8Array(n);
    let rn: Uint8Array | null = null;
    for (let i = 0; i < n; i++) {
      const r = betweenRow(xs[i]!, ls[i]!, hs[i]!);
      if (r === null) (rn ??= new Uint8Array(n))[i] = 1;
      else data[i] = r ? 1 : 0;
    }
    return { type: T.BOOL, length: n, data, nulls: rn };
  }
  if (nulls === null) return { type: T.BOOL, length: n, data: out, nulls: null };
  let rn: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    if (nulls[i] === 0) continue;
    const r = betweenRow(getValue(x, i), getValue(lo, i), getValue(hi, i));
    out[i] = r === true ? 1 : 0;
    if (r === null) (rn ??= new Uint8Array(n))[i] = 1;
  }
  return { type: T.BOOL, length: n, data: out, nulls: rn };
};

function equalityAccept(c: Omit<SigContext, 'returnType'>): boolean {
  return isGroupable(c.argTypes[0]!);
}
function orderingAccept(c: Omit<SigContext, 'returnType'>): boolean {
  const t = c.argTypes[0]!;
  return t.kind !== 'JSON' && t.kind !== 'GEOGRAPHY';
}

function registerComparisons(): void {
  const defs: [string, CmpOp, string][] = [
    ['$equal', 'eq', '='],
    ['$not_equal', 'ne', '!='],
    ['$less', 'lt', '<'],
    ['$less_or_equal', 'le', '<='],
    ['$greater', 'gt', '>'],
    ['$greater_or_equal', 'ge', '>='],
  ];
  for (const [name, op, sym] of defs) {
    // Every type matches, so that `validate` words the refusal of a type without equality
    // or ordering (ARRAY, STRUCT, JSON, GEOGRAPHY) as the service does ("Equality is not defined ...").
    defineScalar(name, [sig(['T1', 'T1'], 'BOOL', comparisonKernel(op))], {
      display: operatorDisplay(sym),
      validate: (_args, m) => {
        const t = m.argTypes[0]!;
        if (op === 'eq' || op === 'ne') {
          if (!isEqualityComparable(t)) return `${op === 'eq' ? 'Equality' : 'Inequality'} is not defined for arguments of type ${typeToSql(t)}`;
        } else if (!isOrderable(t)) return `${op === 'lt' || op === 'le' ? 'Less than' : 'Greater than'} is not defined for arguments of type ${typeToSql(t)}`;
        return undefined;
      },
    });
  }

  // IS [NOT] DISTINCT FROM: NULL-safe, NaN equals NaN.
  const distinct = (negate: boolean): ScalarKernel => (args, n) => {
    const words = distinctWords(negate, args, n);
    if (words !== null) return words;
    const av = valuesOf(args[0]!, n);
    const bv = valuesOf(args[1]!, n);
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = groupEquals(av[i]!, bv[i]!) !== negate ? 1 : 0;
    return { type: T.BOOL, length: n, data: out, nulls: null };
  };
  defineScalar('$is_distinct_from', [sig(['T1', 'T1'], 'BOOL', distinct(true), equalityAccept)], { display: operatorDisplay('IS DISTINCT FROM') });
  defineScalar('$is_not_distinct_from', [sig(['T1', 'T1'], 'BOOL', distinct(false), equalityAccept)], { display: operatorDisplay('IS NOT DISTINCT FROM') });

  defineScalar('$between', [sig(['T1', 'T1', 'T1'], 'BOOL', betweenKernel, (c) => orderingAccept(c) && c.argTypes[0]!.kind !== 'STRUCT' && c.argTypes[0]!.kind !== 'ARRAY')], { display: operatorDisplay('BETWEEN', 'between') });

  // x IN (a, b, ...). With an all-constant list of a hashable scalar type the list
  // becomes a Set once per batch and each row is one lookup.
  defineScalar(
    '$in',
    [
      sigf(['T1', { type: 'T1', repeated: true }], 'BOOL', (c) => {
        const allConst = c.args.slice(1).every((a) => a.constant !== undefined || a.untypedNull);
        const t = c.argTypes[0]!;
        const hashable = t.kind === 'INT64' || t.kind === 'FLOAT64' || t.kind === 'STRING' || t.kind === 'DATE' || t.kind === 'BOOL';
        const generic: ScalarKernel = (args, n) => {
          const cols = args.map((a) => valuesOf(a, n));
          const out = new Array<Value>(n);
          for (let i = 0; i < n; i++) {
            const x = cols[0]![i]!;
            if (x === null) {
              out[i] = null;
              continue;
            }
            let sawNull = false;
            let found = false;
            for (let k = 1; k < cols.length; k++) {
              const e = sqlEquals(x, cols[k]![i]!);
              if (e === true) {
                found = true;
                break;
              }
              if (e === null) sawNull = true;
            }
            out[i] = found ? true : sawNull ? null : false;
          }
          return vectorFromValues(T.BOOL, out);
        };
        if (t.kind === 'NUMERIC' || t.kind === 'BIGNUMERIC') return (args, n, ctx) => inDecimalWords(args, n) ?? generic(args, n, ctx);
        if (!allConst || !hashable) return generic;
        return (args, n, ctx) => {
          const x = args[0]!;
          if (n === 0 || (!(x.data instanceof Float64Array) && !(x.data instanceof Int32Array) && !Array.isArray(x.data) && !(x.data instanceof Uint8Array))) return generic(args, n, ctx);
          const set = new Set<number | string | boolean>();
          let listHasNull = false;
          for (let k = 1; k < args.length; k++) {
            const v = getValue(args[k]!, 0);
            if (v === null) listHasNull = true;
            else if (typeof v === 'bigint') set.add(Number(v));
            else if (typeof v === 'number' && Number.isNaN(v)) continue;
            else set.add(v as number | string | boolean);
          }
          const out = new Uint8Array(n);
          let nulls: Uint8Array | null = x.nulls ? x.nulls.slice(0, n) : null;
          const d = x.data;
          for (let i = 0; i < n; i++) {
            if (x.nulls !== null && x.nulls[i] === 1) continue;
            const key = d instanceof Uint8Array && !Array.isArray(d) ? d[i] === 1 : (d as ArrayLike<number | string>)[i]!;
            if (set.has(key as number | string | boolean)) out[i] = 1;
            else if (listHasNull) {
              nulls ??= new Uint8Array(n);
              nulls[i] = 1;
            }
          }
          return { type: T.BOOL, length: n, data: out, nulls };
        };
      }, equalityAccept),
    ],
    { display: operatorDisplay('IN', 'in'), validate: (_args, m) => (isEqualityComparable(m.argTypes[0]!) ? undefined : `IN is not defined for arguments of type ${typeToSql(m.argTypes[0]!)}`) },
  );
  // x IN UNNEST(array)
  defineScalar(
    '$in_array',
    [
      sig(['T1', 'ARRAY<T1>'], 'BOOL', (args, n, ctx) => inList(args, n) ?? inArray(args, n, ctx), equalityAccept),
    ],
    { display: operatorDisplay('IN UNNEST', 'custom', (a) => `${a[0]} IN UNNEST(${a[1]})`) },
  );

  defineScalar('$is_null', [sig(['ANY'], 'BOOL', (args, n) => {
    const a = args[0]!;
    const out = new Uint8Array(n);
    if (a.nulls !== null) out.set(a.nulls.subarray(0, n));
    return { type: T.BOOL, length: n, data: out, nulls: null };
  })], { display: operatorDisplay('IS NULL', 'postfix') });
  const isBool = (want: number): ScalarKernel => (args, n) => {
    const a = args[0]!;
    const d = a.data as Uint8Array;
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = (a.nulls === null || a.nulls[i] === 0) && d[i] === want ? 1 : 0;
    return { type: T.BOOL, length: n, data: out, nulls: null };
  };
  defineScalar('$is_true', [sig(['BOOL'], 'BOOL', isBool(1))], { display: operatorDisplay('IS TRUE', 'postfix') });
  defineScalar('$is_false', [sig(['BOOL'], 'BOOL', isBool(0))], { display: operatorDisplay('IS FALSE', 'postfix') });
}

// ---------------------------------------------------------------- LIKE

export function bytesToLatin1(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]!);
  return s;
}

export function likeMatch(x: Value, p: Value, bytes: boolean): boolean | null {
  if (x === null || p === null) return null;
  if (bytes) return likeMatches(bytesToLatin1(p as Uint8Array), bytesToLatin1(x as Uint8Array), true);
  return likeMatches(p as string, x as string, false);
}

function registerLike(): void {
  const likeKernel = (bytes: boolean): ScalarKernel => (args, n) => {
    const xs = valuesOf(args[0]!, n);
    const ps = valuesOf(args[1]!, n);
    const nulls = mergeNulls(args, n);
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      out[i] = likeMatch(xs[i]!, ps[i]!, bytes) ? 1 : 0;
    }
    return { type: T.BOOL, length: n, data: out, nulls };
  };
  defineScalar('$like', [sig(['STRING', 'STRING'], 'BOOL', likeKernel(false)), sig(['BYTES', 'BYTES'], 'BOOL', likeKernel(true))], {
    pure: true,
    display: operatorDisplay('LIKE'),
  });
  // LIKE ANY/ALL; `negate` gives NOT LIKE ANY/ALL, which apply NOT LIKE per pattern
  // (x NOT LIKE ANY (a, b) is true when x fails to match some pattern).
  const quant = (all: boolean, bytes: boolean, negate = false) =>
    rowKernel(T.BOOL, (v) => {
      const x = v[0]!;
      if (v.length === 1) return all ? true : false;
      if (x === null) return null;
      let sawNull = false;
      for (let k = 1; k < v.length; k++) {
        let r = likeMatch(x, v[k]!, bytes);
        if (r !== null && negate) r = !r;
        if (r === null) sawNull = true;
        else if (r !== all) return !all;
      }
      return sawNull ? null : all;
    }, false);
  defineScalar('$like_any', [sig(['STRING', { type: 'STRING', repeated: true }], 'BOOL', quant(false, false)), sig(['BYTES', { type: 'BYTES', repeated: true }], 'BOOL', quant(false, true))], {
    pure: true,
    display: operatorDisplay('LIKE ANY', 'custom', (a) => `${a[0]} LIKE ANY (${a.slice(1).join(', ')})`),
  });
  defineScalar('$like_all', [sig(['STRING', { type: 'STRING', repeated: true }], 'BOOL', quant(true, false)), sig(['BYTES', { type: 'BYTES', repeated: true }], 'BOOL', quant(true, true))], {
    pure: true,
    display: operatorDisplay('LIKE ALL', 'custom', (a) => `${a[0]} LIKE ALL (${a.slice(1).join(', ')})`),
  });
  defineScalar('$not_like_any', [sig(['STRING', { type: 'STRING', repeated: true }], 'BOOL', quant(false, false, true)), sig(['BYTES', { type: 'BYTES', repeated: true }], 'BOOL', quant(false, true, true))], {
    pure: true,
    display: operatorDisplay('NOT LIKE ANY', 'custom', (a) => `${a[0]} NOT LIKE ANY (${a.slice(1).join(', ')})`),
  });
  defineScalar('$not_like_all', [sig(['STRING', { type: 'STRING', repeated: true }], 'BOOL', quant(true, false, true)), sig(['BYTES', { type: 'BYTES', repeated: true }], 'BOOL', quant(true, true, true))], {
    pure: true,
    display: operatorDisplay('NOT LIKE ALL', 'custom', (a) => `${a[0]} NOT LIKE ALL (${a.slice(1).join(', ')})`),
  });
}

// ---------------------------------------------------------------- bitwise

function registerBitwise(): void {
  const bytesOp = (f: (x: number, y: number) => number) =>
    rowKernel(T.BYTES, (v) => {
      const a = v[0] as Uint8Array;
      const b = v[1] as Uint8Array;
      if (a.length !== b.length)
        fail(`Bitwise binary operator for BYTES requires equal length of the inputs. Got ${a.length} bytes on the left hand side and ${b.length} bytes on the right hand side.`);
      const out = new Uint8Array(a.length);
      for (let i = 0; i < a.length; i++) out[i] = f(a[i]!, b[i]!) & 0xff;
      return out;
    });
  const intOp = (f: (x: bigint, y: bigint) => bigint) => rowKernel(T.INT64, (v) => BigInt.asIntN(64, f(v[0] as bigint, v[1] as bigint)));
  const ops: [string, string, (x: bigint, y: bigint) => bigint, (x: number, y: number) => number][] = [
    ['$bitwise_and', '&', (x, y) => x & y, (x, y) => x & y],
    ['$bitwise_or', '|', (x, y) => x | y, (x, y) => x | y],
    ['$bitwise_xor', '^', (x, y) => x ^ y, (x, y) => x ^ y],
  ];
  for (const [name, sym, fi, fb] of ops)
    defineScalar(name, [sig(['INT64', 'INT64'], 'INT64', intOp(fi)), sig(['BYTES', 'BYTES'], 'BYTES', bytesOp(fb))], { display: operatorDisplay(sym) });
  defineScalar(
    '$bitwise_not',
    [
      sig(['INT64'], 'INT64', rowKernel(T.INT64, (v) => ~(v[0] as bigint))),
      sig(['BYTES'], 'BYTES', rowKernel(T.BYTES, (v) => (v[0] as Uint8Array).map((x) => ~x & 0xff))),
    ],
    { display: operatorDisplay('~', 'prefix') },
  );
  const shift = (left: boolean) => [
    sig(['INT64', 'INT64'], 'INT64', rowKernel(T.INT64, (v) => {
      const x = v[0] as bigint;
      const k = v[1] as bigint;
      if (k < 0n) fail('Bitwise shift by negative offset.');
      if (k >= 64n) return 0n;
      // >> is a logical shift in GoogleSQL (no sign extension).
      return left ? BigInt.asIntN(64, x << k) : BigInt.asIntN(64, BigInt.asUintN(64, x) >> k);
    })),
    sig(['BYTES', 'INT64'], 'BYTES', rowKernel(T.BYTES, (v) => {
      const b = v[0] as Uint8Array;
      const k = Number(v[1] as bigint);
      if (k < 0) fail('Bitwise shift by negative offset.');
      const out = new Uint8Array(b.length);
      const nbits = b.length * 8;
      for (let bit = 0; bit < nbits; bit++) {
        const src = left ? bit + k : bit - k;
        if (src < 0 || src >= nbits) continue;
        if (b[src >> 3]! & (0x80 >> (src & 7))) out[bit >> 3]! |= 0x80 >> (bit & 7);
      }
      return out;
    })),
  ];
  defineScalar('$bitwise_left_shift', shift(true), { display: operatorDisplay('<<') });
  defineScalar('$bitwise_right_shift', shift(false), { display: operatorDisplay('>>') });
}

// ---------------------------------------------------------------- concat, array access, subscript

/** A STRING built from its parts, refused past the service's row size (V8 gives out at ~512M characters). */
export function rowSized(s: string): string {
  if (s.length > MAX_ROW_BYTES) throw rowTooLarge();
  return s;
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let len = 0;
  for (const p of parts) len += p.length;
  if (len > MAX_ROW_BYTES) throw rowTooLarge();
  const out = new Uint8Array(len);
  let k = 0;
  for (const p of parts) {
    out.set(p, k);
    k += p.length;
  }
  return out;
}

function arrayIndex(arr: Value[], idx: bigint, ordinal: boolean, safe: boolean): Value {
  const i = Number(idx) - (ordinal ? 1 : 0);
  if (i < 0 || i >= arr.length) {
    if (safe) return null;
    fail(`Array index ${idx} is out of bounds`);
  }
  return arr[i]!;
}

/**
 * array[OFFSET(k)] and the like over arrays in the Arrow layout (a stored
 * column's scan): the elements taken from the child vector, none boxed; null
 * when the array is not in that layout.
 */
function elementsAt(args: readonly Vector[], n: number, ordinal: boolean, safe: boolean): Vector | null {
  const a = args[0]!;
  const l = listRows(a);
  if (!l) return null;
  const { offsets: o, child, rows } = l;
  const sel = new Int32Array(n);
  let nulls: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    const idx = a.nulls !== null && a.nulls[i] === 1 ? null : (getValue(args[1]!, i) as bigint | null);
    if (idx === null) {
      (nulls ??= new Uint8Array(n))[i] = 1;
      continue;
    }
    const k = Number(idx) - (ordinal ? 1 : 0);
    const r = rows === null ? i : rows[i]!;
    if (k < 0 || k >= o[r + 1]! - o[r]!) {
      if (!safe) fail(`Array index ${idx} is out of bounds`);
      (nulls ??= new Uint8Array(n))[i] = 1;
      continue;
    }
    sel[i] = o[r]! + k;
  }
  // NULL rows take element 0 (any valid row), then are marked NULL.
  return takeElements(a.type.kind === 'ARRAY' ? a.type.element : a.type, child, sel, nulls, n);
}

/** x IN UNNEST(array) over boxed arrays: TRUE if found; an empty or NULL array FALSE; else NULL if x or an element is NULL. */
const inArray = rowKernel(T.BOOL, (v) => {
  const arr = v[1] as Value[] | null;
  if (arr === null || arr.length === 0) return false;
  const x = v[0]!;
  if (x === null) return null;
  let sawNull = false;
  for (const e of arr) {
    const r = sqlEquals(x, e);
    if (r === true) return true;
    if (r === null) sawNull = true;
  }
  return sawNull ? null : false;
}, false);

/** inArray over arrays in the Arrow layout (a stored column's scan): the elements read from the child vector, no array boxed. */
function inList(args: readonly Vector[], n: number): Vector | null {
  const a = args[1]!;
  const l = listRows(a);
  if (!l) return null;
  const { offsets: o, child, rows } = l;
  const data = new Uint8Array(n);
  let nulls: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    const r = rows === null ? i : rows[i]!;
    if ((a.nulls !== null && a.nulls[i] === 1) || o[r] === o[r + 1]) continue;
    const x = getValue(args[0]!, i);
    let res: boolean | null = false;
    if (x === null) res = null;
    else {
      for (let e = o[r]!; e < o[r + 1]!; e++) {
        const q = sqlEquals(x, getValue(child, e));
        if (q === true) {
          res = true;
          break;
        }
        if (q === null) res = null;
      }
    }
    if (res === true) data[i] = 1;
    else if (res === null) (nulls ??= new Uint8Array(n))[i] = 1;
  }
  return { type: T.BOOL, length: n, data, nulls };
}

function registerAccess(): void {
  defineScalar(
    '$concat_op',
    [
      sig(['STRING', 'STRING'], 'STRING', (args, n) => {
        const a = valuesOf(args[0]!, n);
        const b = valuesOf(args[1]!, n);
        const nulls = mergeNulls(args, n);
        const out = new Array<Value>(n);
        for (let i = 0; i < n; i++) out[i] = nulls !== null && nulls[i] === 1 ? null : rowSized((a[i] as string) + (b[i] as string));
        return { type: T.STRING, length: n, data: out, nulls };
      }),
      sig(['BYTES', 'BYTES'], 'BYTES', rowKernel(T.BYTES, (v) => concatBytes([v[0] as Uint8Array, v[1] as Uint8Array]))),
      sigf(['ARRAY<T1>', 'ARRAY<T1>'], 'ARRAY<T1>', (c) => rowKernel(c.returnType, (v) => [...(v[0] as Value[]), ...(v[1] as Value[])])),
    ],
    { display: operatorDisplay('||') },
  );
  const access = (name: string, ordinal: boolean, safe: boolean, sym: string) =>
    defineScalar(
      name,
      [
        sigf(['ARRAY<T1>', 'INT64'], 'T1', (c) => {
          const boxed = rowKernel(c.returnType, (v) => arrayIndex(v[0] as Value[], v[1] as bigint, ordinal, safe));
          return (args, n, ctx) => elementsAt(args, n, ordinal, safe) ?? boxed(args, n, ctx);
        }),
      ],
      { display: operatorDisplay(sym, 'custom', (a) => `${a[0]}[${sym}(${a[1]})]`) },
    );
  access('$array_at_offset', false, false, 'OFFSET');
  access('$array_at_ordinal', true, false, 'ORDINAL');
  access('$safe_array_at_offset', false, true, 'SAFE_OFFSET');
  access('$safe_array_at_ordinal', true, true, 'SAFE_ORDINAL');
  defineScalar(
    '$subscript',
    [
      sigf(['ARRAY<T1>', 'INT64'], 'T1', (c) => rowKernel(c.returnType, (v) => arrayIndex(v[0] as Value[], v[1] as bigint, false, false))),
      sig(['JSON', 'STRING'], 'JSON', rowKernel(T.JSON, (v) => {
        // A lazily read text: the member's text, found by scanning (keys Object.prototype has: as below, through the parsed object).
        if (v[0] instanceof JsonText && !((v[1] as string) in Object.prototype) && v[0].scans()) return v[0].member(v[1] as string);
        const node = (v[0] as JsonValue).node;
        if (node === null || typeof node !== 'object' || Array.isArray(node) || typeof node === 'bigint') return null;
        const r = (node as Record<string, import('../types/values.js').JsonNode>)[v[1] as string];
        return r === undefined ? null : new JsonValue(r);
      })),
      sig(['JSON', 'INT64'], 'JSON', rowKernel(T.JSON, (v) => {
        if (v[0] instanceof JsonText && v[0].scans()) return v[0].element(Number(v[1] as bigint));
        const node = (v[0] as JsonValue).node;
        if (!Array.isArray(node)) return null;
        const i = Number(v[1] as bigint);
        return i >= 0 && i < node.length ? new JsonValue(node[i]!) : null;
      })),
    ],
    { display: operatorDisplay('[]', 'custom', (a) => `${a[0]}[${a[1]}]`) },
  );
}

export function registerOperators(): void {
  registerArithmetic();
  registerComparisons();
  registerLike();
  registerBitwise();
  registerAccess();
}

// Re-exported helpers other families use.
export { int64Binary, float64Binary, decimalBinary, boxedDecimalBinary, comparisonKernel };
export type { CmpOp };
export function vectorOf(type: SqlType, values: Value[]): Vector {
  return vectorFromValues(type, values);
}
