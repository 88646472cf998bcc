// NUMERIC / BIGNUMERIC kernels on the Arrow words (decimal-words.ts): + - * /,
// unary minus, ABS, SIGN, ROUND / TRUNC / CEIL / FLOOR and CASTs to and from
// INT64, FLOAT64 and STRING, computed on the unscaled integers (value x 10^9,
// x 10^38) without making a Decimal per row. A NUMERIC whose unscaled value
// is below 2^53 (the usual amounts) is computed in doubles, exactly (every
// intermediate is an integer checked to stay below 2^53); anything else in
// BigInt. Results are words again (`decimalVector`), so SUM, comparisons,
// sorts and the Storage Read writer downstream keep them.
//
// Each kernel returns null when it cannot answer a batch on the words (an
// argument given as boxed values, an overflow, a division by zero, a value
// out of the target's range): the caller then runs the decimal.js kernel on
// the whole batch, which raises the service's error with its wording (and
// whose `safe` retry NULLs only the failing rows).
import { T, type SqlType } from '../types/types.js';
import { Decimal, type Value } from '../types/values.js';
import { decimalVector, type Vector } from '../types/vector.js';
import { bigAt, compareWords, decimalScale, setBigAt, smallAt, textOfWords, wordsEqual, wordsOfDecimal, wordsOfText, type DecimalWidth } from '../types/decimal-words.js';
import { mergeNulls } from './vec.js';
import type { ScalarKernel } from './registry.js';

const TWO32 = 4294967296;
const TWO53 = 9007199254740992;
const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];
const NUMERIC_LIMIT = 10n ** 38n - 1n;
const BIGNUMERIC_HI = 2n ** 255n - 1n;
const BIGNUMERIC_LO = -(2n ** 255n);

const widthOf = (t: SqlType): DecimalWidth => (t.kind === 'NUMERIC' ? 4 : 8);

/** Rows of a NUMERIC / BIGNUMERIC argument as words; `step` 0: one value for every row (a literal's). */
interface Words {
  readonly words: Uint32Array;
  readonly step: 0 | 1;
}

/** The words of an argument: a decimal view's as they are, a vector of one Decimal made into words once; null otherwise (boxed rows). */
export function wordsArg(v: Vector, n: number): Words | null {
  if (v.decimal) return v.decimal.width === widthOf(v.type) ? { words: v.decimal.words, step: 1 } : null;
  if (v.type.kind !== 'NUMERIC' && v.type.kind !== 'BIGNUMERIC') return null;
  if (n === 0) return null;
  const d = v.data as Value[];
  const x = d[0];
  if (x === null || !(x instanceof Decimal) || (v.nulls !== null && v.nulls[0] === 1)) return null;
  for (let i = 1; i < n; i++) if (d[i] !== x) return null;
  const words = wordsOfDecimal(x, widthOf(v.type));
  return words && { words, step: 0 };
}

/** Writes the integer x (|x| < 2^63, exact) as words at w[b]. */
function setSmall(w: Uint32Array, b: number, width: DecimalWidth, x: number): void {
  let lo = x % TWO32;
  if (lo < 0) lo += TWO32;
  const hi = (x - lo) / TWO32;
  w[b] = lo;
  w[b + 1] = hi >>> 0;
  const ext = hi < 0 ? 0xffffffff : 0;
  for (let k = 2; k < width; k++) w[b + k] = ext;
}

const inRange = (v: bigint, width: DecimalWidth): boolean => (width === 4 ? v <= NUMERIC_LIMIT && v >= -NUMERIC_LIMIT : v <= BIGNUMERIC_HI && v >= BIGNUMERIC_LO);

/** How a quotient is rounded to an integer: half away from zero (ROUND, arithmetic), toward zero (TRUNC), up (CEIL), down (FLOOR). */
export type Rounding = 'half' | 'trunc' | 'ceil' | 'floor';

/** a / d rounded, for integer doubles |a| < 2^53, 0 < d < 2^53 (the remainder and the quotient are then exact). */
function divNum(a: number, d: number, mode: Rounding): number {
  const r = a % d;
  let q = (a - r) / d;
  if (r !== 0) {
    if (mode === 'half') {
      if (2 * Math.abs(r) >= d) q += a < 0 ? -1 : 1;
    } else if (mode === 'ceil') {
      if (r > 0) q += 1;
    } else if (mode === 'floor') {
      if (r < 0) q -= 1;
    }
  }
  return q === 0 ? 0 : q;
}

/** a / d rounded (d non-zero, either sign). */
function divBig(a: bigint, d: bigint, mode: Rounding): bigint {
  const q = a / d;
  const r = a % d;
  if (r === 0n) return q;
  const positive = a < 0n === d < 0n;
  if (mode === 'half') {
    const r2 = 2n * (r < 0n ? -r : r);
    return r2 >= (d < 0n ? -d : d) ? q + (positive ? 1n : -1n) : q;
  }
  if (mode === 'ceil') return positive ? q + 1n : q;
  if (mode === 'floor') return positive ? q : q - 1n;
  return q;
}

/** Trailing decimal zeros of a non-zero integer double, at most 9. */
function zeros(x: number): number {
  let k = 0;
  while (k < 9 && x % POW10[k + 1]! === 0) k++;
  return k;
}

export type ArithOp = 'add' | 'sub' | 'mul' | 'div';

/**
 * NUMERIC x op y on unscaled doubles below 2^53, NaN when that is not exact
 * (then BigInt). Products and quotients first strip the operands' trailing
 * decimal zeros, so an amount times a whole number or a short factor (1.2)
 * stays below 2^53.
 */
function smallArith(op: ArithOp, x: number, y: number): number {
  if (op === 'add' || op === 'sub') {
    const r = op === 'add' ? x + y : x - y;
    return r < TWO53 && r > -TWO53 ? r : NaN;
  }
  if (op === 'mul') {
    if (x === 0 || y === 0) return 0;
    const kx = zeros(x);
    const ky = zeros(y);
    const p = (x / POW10[kx]!) * (y / POW10[ky]!);
    if (!(p < TWO53 && p > -TWO53)) return NaN;
    const k = kx + ky;
    if (k >= 9) {
      const r = p * POW10[k - 9]!;
      return r < TWO53 && r > -TWO53 ? r : NaN;
    }
    return divNum(p, POW10[9 - k]!, 'half');
  }
  // x * 10^9 / y, rounded half away from zero.
  if (y === 0) return NaN;
  if (x === 0) return 0;
  const ky = zeros(y);
  const num = x * POW10[9 - ky]!;
  if (!(num < TWO53 && num > -TWO53)) return NaN;
  const d = y / POW10[ky]!;
  return d > 0 ? divNum(num, d, 'half') : divNum(-num, -d, 'half');
}

const POW10N: bigint[] = [];
const pow10n = (k: number): bigint => (POW10N[k] ??= 10n ** BigInt(k));

/** x op y on unscaled BigInts at the scale of `width`; null on division by zero. */
function bigArith(op: ArithOp, x: bigint, y: bigint, width: DecimalWidth): bigint | null {
  if (op === 'add') return x + y;
  if (op === 'sub') return x - y;
  const s = pow10n(decimalScale(width));
  if (op === 'mul') return divBig(x * y, s, 'half');
  if (y === 0n) return null;
  return divBig(x * s, y, 'half');
}

/** The words of x op y for every row, or null (see the file's comment); `safe` (SAFE_ADD ...): a row that fails is NULL instead. */
export function arithWords(op: ArithOp, type: SqlType, args: readonly Vector[], n: number, safe = false): Vector | null {
  const a = wordsArg(args[0]!, n);
  const b = a && wordsArg(args[1]!, n);
  if (!a || !b) return null;
  const width = widthOf(type);
  let nulls = mergeNulls(args, n);
  const out = new Uint32Array(n * width);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const ab = a.step * i * width;
    const bb = b.step * i * width;
    if (width === 4) {
      const x = smallAt(a.words, ab);
      const y = smallAt(b.words, bb);
      if (x === x && y === y) {
        const r = smallArith(op, x, y);
        if (r === r) {
          setSmall(out, i * 4, 4, r);
          continue;
        }
      }
    }
    const r = bigArith(op, bigAt(a.words, ab, width), bigAt(b.words, bb, width), width);
    if (r === null || !inRange(r, width)) {
      if (!safe) return null;
      (nulls ??= new Uint8Array(n))[i] = 1;
      continue;
    }
    setBigAt(out, i * width, width, r);
  }
  return decimalVector(type, n, nulls, { words: out, width });
}

/** A kernel computing on the words where it can and with `boxed` (decimal.js per row) for the rest. */
export function onWords(words: (args: readonly Vector[], n: number) => Vector | null, boxed: ScalarKernel): ScalarKernel {
  return (args, n, ctx) => words(args, n) ?? boxed(args, n, ctx);
}

export type UnaryOp = 'neg' | 'abs' | 'sign';

/** -x, ABS(x), SIGN(x) on the words. */
export function unaryWords(op: UnaryOp, type: SqlType, args: readonly Vector[], n: number): Vector | null {
  const v = args[0]!;
  const a = wordsArg(v, n);
  if (!a) return null;
  const width = widthOf(type);
  const one = pow10n(decimalScale(width));
  const nulls = v.nulls;
  const out = new Uint32Array(n * width);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const ab = a.step * i * width;
    if (width === 4) {
      const x = smallAt(a.words, ab);
      if (x === x) {
        setSmall(out, i * 4, 4, op === 'neg' ? (x === 0 ? 0 : -x) : op === 'abs' ? Math.abs(x) : x > 0 ? 1e9 : x < 0 ? -1e9 : 0);
        continue;
      }
    }
    const x = bigAt(a.words, ab, width);
    const r = op === 'neg' ? -x : op === 'abs' ? (x < 0n ? -x : x) : x > 0n ? one : x < 0n ? -one : 0n;
    if (!inRange(r, width)) return null;
    setBigAt(out, i * width, width, r);
  }
  return decimalVector(type, n, nulls, { words: out, width });
}

/** The digits argument of ROUND / TRUNC at row i (INT64 as doubles or BigInts), NaN when NULL or past any use. */
function digitsAt(v: Vector | undefined, i: number): number {
  if (v === undefined) return 0;
  const d = v.data;
  const x = d instanceof Float64Array ? d[i]! : d instanceof BigInt64Array ? Number(d[i]!) : NaN;
  return x > -200 && x < 200 ? x : NaN;
}

/**
 * ROUND / TRUNC (to `digits` fraction digits, default 0) and CEIL / FLOOR on
 * the words: the unscaled value rounded to a multiple of 10^(scale - digits).
 */
export function roundWords(mode: Rounding, type: SqlType, args: readonly Vector[], n: number): Vector | null {
  const v = args[0]!;
  const a = wordsArg(v, n);
  if (!a) return null;
  const dv = args[1];
  if (dv && !(dv.data instanceof Float64Array || dv.data instanceof BigInt64Array)) return null;
  const width = widthOf(type);
  const scale = decimalScale(width);
  const nulls = dv ? mergeNulls(args, n) : v.nulls;
  const out = new Uint32Array(n * width);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const ab = a.step * i * width;
    const digits = digitsAt(dv, i);
    if (digits !== digits) return null;
    const shift = scale - digits;
    if (shift <= 0) {
      out.set(a.words.subarray(ab, ab + width), i * width);
      continue;
    }
    if (width === 4 && shift <= 15) {
      const x = smallAt(a.words, ab);
      if (x === x) {
        const d = POW10[shift]!;
        const r = divNum(x, d, mode) * d;
        if (r < TWO53 && r > -TWO53) {
          setSmall(out, i * 4, 4, r === 0 ? 0 : r);
          continue;
        }
      }
    }
    const d = pow10n(shift);
    const r = divBig(bigAt(a.words, ab, width), d, mode) * d;
    if (!inRange(r, width)) return null;
    setBigAt(out, i * width, width, r);
  }
  return decimalVector(type, n, nulls, { words: out, width });
}

/**
 * CAST between NUMERIC / BIGNUMERIC and INT64, FLOAT64, STRING (and each
 * other) on the words, or null: the caller casts value by value.
 */
export function castWords(v: Vector, to: SqlType, n: number, safe = false): Vector | null {
  const from = v.type;
  const fromDec = from.kind === 'NUMERIC' || from.kind === 'BIGNUMERIC';
  const toDec = to.kind === 'NUMERIC' || to.kind === 'BIGNUMERIC';
  let nulls = v.nulls;
  /** A row out of the target's range: NULL for SAFE_CAST (false), else the batch is given up (true). */
  const fails = (i: number): boolean => {
    if (!safe) return true;
    if (nulls === v.nulls) nulls = nulls ? nulls.slice(0, n) : new Uint8Array(n);
    nulls![i] = 1;
    return false;
  };
  if (fromDec) {
    const a = wordsArg(v, n);
    if (!a) return null;
    const width = widthOf(from);
    const scale = decimalScale(width);
    if (to.kind === 'STRING') {
      const out = new Array<Value>(n);
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) {
          out[i] = null;
          continue;
        }
        out[i] = textOfWords(a.words, a.step * i, width);
      }
      return { type: to, length: n, data: out, nulls };
    }
    if (to.kind === 'FLOAT64') {
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) continue;
        const b = a.step * i * width;
        const x = width === 4 ? smallAt(a.words, b) : NaN;
        // x / 1e9 of two exact doubles is the correctly rounded quotient; past 2^53 the text is (Number rounds correctly).
        out[i] = x === x ? x / 1e9 : Number(textOfWords(a.words, a.step * i, width));
      }
      return { type: to, length: n, data: out, nulls };
    }
    if (to.kind === 'INT64') {
      const out = new Float64Array(n);
      let big: BigInt64Array | null = null;
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) continue;
        const b = a.step * i * width;
        const x = width === 4 ? smallAt(a.words, b) : NaN;
        if (x === x && big === null) {
          out[i] = divNum(x, 1e9, 'half');
          continue;
        }
        const r = divBig(bigAt(a.words, b, width), pow10n(scale), 'half');
        if (r > 9223372036854775807n || r < -9223372036854775808n) {
          if (fails(i)) return null;
          continue;
        }
        if (big === null && r <= 9007199254740992n && r >= -9007199254740992n) {
          out[i] = Number(r);
          continue;
        }
        if (big === null) {
          big = new BigInt64Array(n);
          for (let k = 0; k < i; k++) big[k] = BigInt(out[k]!);
        }
        big[i] = r;
      }
      return { type: to, length: n, data: big ?? out, nulls };
    }
    if (toDec && to.kind !== from.kind) {
      const tw = widthOf(to);
      const shift = decimalScale(tw) - scale;
      const out = new Uint32Array(n * tw);
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) continue;
        const x = bigAt(a.words, a.step * i * width, width);
        const r = shift > 0 ? x * pow10n(shift) : divBig(x, pow10n(-shift), 'half');
        if (!inRange(r, tw)) {
          if (fails(i)) return null;
          continue;
        }
        setBigAt(out, i * tw, tw, r);
      }
      return decimalVector(to, n, nulls, { words: out, width: tw });
    }
    return null;
  }
  if (toDec && from.kind === 'STRING' && Array.isArray(v.data)) {
    // Plain decimal text ('-12.5', '.5'; at most the scale's fraction digits) parsed straight into words; any other text (spaces, '+', exponents, more digits) is cast value by value.
    const tw = widthOf(to);
    const out = new Uint32Array(n * tw);
    const d = v.data as (string | null)[];
    let buf = Buffer.allocUnsafe(96);
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const t = d[i]!;
      if (t.length > buf.length) buf = Buffer.allocUnsafe(t.length);
      const len = buf.write(t, 0, 'latin1');
      if (len !== t.length || !wordsOfText(buf, 0, len, tw, out, i)) return null;
    }
    return decimalVector(to, n, nulls, { words: out, width: tw });
  }
  if (toDec && from.kind === 'FLOAT64' && v.data instanceof Float64Array) {
    // The double's exact value rounded at the scale, half away from zero (as fitDecimal(exactDecimalFromDouble(f))).
    const tw = widthOf(to);
    const out = new Uint32Array(n * tw);
    const d = v.data;
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const f = d[i]!;
      const r = Number.isFinite(f) ? scaledOfDouble(f, tw) : null;
      if (typeof r === 'number') setSmall(out, i * tw, tw, r);
      else if (r !== null && inRange(r, tw)) setBigAt(out, i * tw, tw, r);
      else if (fails(i)) return null;
    }
    return decimalVector(to, n, nulls, { words: out, width: tw });
  }
  if (toDec && from.kind === 'INT64') {
    const tw = widthOf(to);
    const s = pow10n(decimalScale(tw));
    const out = new Uint32Array(n * tw);
    const d = v.data;
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      if (d instanceof Float64Array) {
        const x = d[i]! * 1e9;
        if (tw === 4 && x < TWO53 && x > -TWO53) {
          setSmall(out, i * 4, 4, x === 0 ? 0 : x);
          continue;
        }
        setBigAt(out, i * tw, tw, BigInt(d[i]!) * s);
      } else if (d instanceof BigInt64Array) setBigAt(out, i * tw, tw, d[i]! * s);
      else return null;
    }
    return decimalVector(to, n, nulls, { words: out, width: tw });
  }
  return null;
}

/**
 * DIV(x, y) (the quotient truncated toward zero) and MOD(x, y) (the remainder
 * with the dividend's sign, as decimal.js's mod) on the words: both operands
 * share the type's scale, so the integer quotient of the values is that of
 * the unscaled integers and the remainder is their remainder. Null on a zero
 * divisor or an overflowing quotient (the decimal.js kernel raises the
 * service's error).
 */
export function divModWords(op: 'div' | 'mod', type: SqlType, args: readonly Vector[], n: number): Vector | null {
  const a = wordsArg(args[0]!, n);
  const b = a && wordsArg(args[1]!, n);
  if (!a || !b) return null;
  const width = widthOf(type);
  const one = pow10n(decimalScale(width));
  const nulls = mergeNulls(args, n);
  const out = new Uint32Array(n * width);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const ab = a.step * i * width;
    const bb = b.step * i * width;
    if (width === 4) {
      const x = smallAt(a.words, ab);
      const y = smallAt(b.words, bb);
      if (x === x && y === y && y !== 0) {
        // % of integer doubles is exact, and so is (x - r) / y: an integer below 2^53.
        const r = x % y;
        if (op === 'mod') {
          setSmall(out, i * 4, 4, r === 0 ? 0 : r);
          continue;
        }
        const q = (x - r) / y;
        const s = q * 1e9;
        if (s < TWO53 && s > -TWO53) {
          setSmall(out, i * 4, 4, s === 0 ? 0 : s);
          continue;
        }
      }
    }
    const x = bigAt(a.words, ab, width);
    const y = bigAt(b.words, bb, width);
    if (y === 0n) return null;
    const r = op === 'mod' ? x % y : (x / y) * one;
    if (!inRange(r, width)) return null;
    setBigAt(out, i * width, width, r);
  }
  return decimalVector(type, n, nulls, { words: out, width });
}

/** GREATEST / LEAST of NUMERIC or BIGNUMERIC arguments on the words: NULL when any argument is. */
export function extremeWords(greatest: boolean, type: SqlType, args: readonly Vector[], n: number): Vector | null {
  const ws: Words[] = [];
  for (const v of args) {
    const w = wordsArg(v, n);
    if (!w) return null;
    ws.push(w);
  }
  const width = widthOf(type);
  const nulls = mergeNulls(args, n);
  const out = new Uint32Array(n * width);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    let best = ws[0]!;
    let bi = best.step * i;
    for (let k = 1; k < ws.length; k++) {
      const w = ws[k]!;
      const c = compareWords(w.words, w.step * i, best.words, bi, width);
      if (greatest ? c > 0 : c < 0) {
        best = w;
        bi = w.step * i;
      }
    }
    out.set(best.words.subarray(bi * width, bi * width + width), i * width);
  }
  return decimalVector(type, n, nulls, { words: out, width });
}

/** x IS [NOT] DISTINCT FROM y over NUMERIC / BIGNUMERIC words (equal values have equal words); null when either side is boxed. */
export function distinctWords(negate: boolean, args: readonly Vector[], n: number): Vector | null {
  const t = args[0]!.type;
  if ((t.kind !== 'NUMERIC' && t.kind !== 'BIGNUMERIC') || args[1]!.type.kind !== t.kind) return null;
  const a = wordsArg(args[0]!, n);
  const b = a && wordsArg(args[1]!, n);
  if (!a || !b) return null;
  const width = widthOf(t);
  const an = args[0]!.nulls;
  const bn = args[1]!.nulls;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const xn = an !== null && an[i] === 1;
    const yn = bn !== null && bn[i] === 1;
    const same = xn || yn ? xn === yn : wordsEqual(a.words, a.step * i, b.words, b.step * i, width);
    out[i] = same !== negate ? 1 : 0;
  }
  return { type: T.BOOL, length: n, data: out, nulls: null };
}

/** Scratch view of one double's bits (little-endian words, as the rest of the engine assumes). */
const F64 = new Float64Array(1);
const F64W = new Uint32Array(F64.buffer);

/**
 * round(f * 10^scale) half away from zero, exact: f is m * 2^e for the
 * integer m of its 53 bits. Doubles when that cannot be wrong (the product
 * in doubles, off from the exact one by at most |p| 2^-53, stays clear of the
 * half-way points), else in BigInt.
 */
function scaledOfDouble(f: number, width: DecimalWidth): bigint | number {
  if (width === 4) {
    const p = f * 1e9;
    const a = Math.abs(p);
    if (a < 2 ** 52) {
      const fl = Math.floor(a);
      const frac = a - fl;
      if (Math.abs(frac - 0.5) > a * 2.3e-16 + 1e-300) {
        const r = frac > 0.5 ? fl + 1 : fl;
        return p < 0 && r !== 0 ? -r : r;
      }
    }
  }
  F64[0] = f;
  const hi = F64W[1]!;
  const lo = F64W[0]!;
  const exp = (hi >>> 20) & 0x7ff;
  let m = (hi & 0xfffff) * TWO32 + lo;
  let e: number;
  if (exp === 0) e = -1074;
  else {
    m += 2 ** 52;
    e = exp - 1075;
  }
  const neg = hi >>> 31 === 1;
  const s = pow10n(decimalScale(width));
  let r: bigint;
  if (e >= 0) r = (BigInt(m) << BigInt(e)) * s;
  else {
    const num = BigInt(m) * s;
    const k = BigInt(-e);
    r = num >> k;
    const rem = num - (r << k);
    // Half away from zero on the magnitude.
    if (rem << 1n >= 1n << k) r += 1n;
  }
  return neg ? -r : r;
}
