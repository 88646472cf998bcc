// Mathematical functions. INT64/FLOAT64 kernels are typed loops where hot;
// NUMERIC/BIGNUMERIC stay exact through decimal.js.
import { T, type SqlType } from '../types/types.js';
import { Decimal, type Value } from '../types/values.js';
import type { Int64Data, Vector } from '../types/vector.js';
import { compareValues } from './compare.js';
import { formatErrNum } from './format-number.js';
import { checkDecimal, fitDecimal, type DecKind } from './numeric.js';
import { decimalBinary, float64Binary, int64Binary } from './operators.js';
import { arithWords, divModWords, extremeWords, onWords, roundWords, unaryWords } from './decimal-kernels.js';
import type { ScalarKernel } from './registry.js';
import { defineScalar, opt, sig, sigf, type ArgSpec, type KernelMaker, type Signature } from './signature.js';
import { I64Out, INT64_MIN, asQueryError, fail, i64At, mergeNulls, perRowKernel, rowKernel, valuesOf } from './vec.js';
import { QueryError } from '../types/errors.js';


/** FLOAT64 -> FLOAT64 kernel as one typed loop. */
function f64Unary(fn: (x: number) => number, check?: (x: number) => void): ScalarKernel {
  return (args, n) => {
    const a = args[0]!;
    const d = a.data as Float64Array;
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      if (a.nulls !== null && a.nulls[i] === 1) continue;
      if (check) check(d[i]!);
      out[i] = fn(d[i]!);
    }
    return { type: T.FLOAT64, length: n, data: out, nulls: a.nulls };
  };
}

/** A NUMERIC/BIGNUMERIC function of one argument; `name` words its overflow as the reference does ("numeric overflow: CEIL(x)"). */
function decUnary(kind: DecKind, fn: (x: Decimal) => Decimal, name?: string): ScalarKernel {
  return rowKernel(T[kind], (v) => {
    const x = v[0] as Decimal;
    return checkDecimal(fn(x), kind, name && `${name}(${x.toFixed()})`);
  });
}

/** Logarithms of NUMERIC/BIGNUMERIC are undefined at or below zero (and for base 1), worded as the reference words them. */
function decLog(kind: DecKind, name: 'LN' | 'LOG10' | 'LOG', x: Decimal, base?: Decimal): Decimal {
  if (name === 'LOG') {
    if (x.lte(0) || base!.lte(0) || base!.eq(1)) fail(`LOG is undefined for zero or negative value, or when base equals 1: LOG(${x.toFixed()}, ${base!.toFixed()})`);
    return checkDecimal(atResultDigits(kind, x, (d) => d.log(base!)), kind);
  }
  if (x.lte(0)) fail(`${name} is undefined for zero or negative value: ${name}(${x.toFixed()})`);
  return checkDecimal(atResultDigits(kind, x, (d) => (name === 'LN' ? d.ln() : d.log(10))), kind);
}

/**
 * Constructors working at the digits a result can hold (NUMERIC 38, BIGNUMERIC 77) plus guard digits, for the
 * transcendental functions: at decimal.js's global 200 digits one LN costs ~3 ms (2,000 rows: 6.5 s).
 */
const RESULT_DIGITS: Record<DecKind, Decimal.Constructor> = { NUMERIC: Decimal.clone({ precision: 60 }), BIGNUMERIC: Decimal.clone({ precision: 100 }) };

/** f over x at the result's working digits, back as a Decimal of the global constructor (the one `instanceof` checks). */
export function atResultDigits(kind: DecKind, x: Decimal, f: (x: Decimal) => Decimal): Decimal {
  return new Decimal(f(new RESULT_DIGITS[kind](x)));
}

/** Rounds x to `digits` decimals, half away from zero (GoogleSQL ROUND). */
export function roundDouble(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  if (digits === 0) return x < 0 ? -Math.round(-x) : Math.round(x);
  if (digits < 0) {
    const f = Math.pow(10, -digits);
    // Past 10^308 every finite double rounds to 0 (not 0 * Infinity).
    if (!Number.isFinite(f)) return 0;
    return (x < 0 ? -Math.round(-x / f) : Math.round(x / f)) * f;
  }
  if (x === 0) return x; // -0.0 stays -0.0 (exactDecimal(-0) is +0)
  // Round the double's exact binary value, as the reference does: ROUND(2.55, 1) is 2.5 (2.5499999...).
  const r = exactDecimal(x).toDecimalPlaces(Math.min(digits, 400), Decimal.ROUND_HALF_UP).toNumber();
  if (!Number.isFinite(r)) fail(`double overflow: ROUND(${formatErrNum(x)}, ${digits})`);
  return r;
}

export function truncDouble(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x;
  if (digits === 0) return Math.trunc(x);
  if (digits < 0) {
    const f = Math.pow(10, -digits);
    if (!Number.isFinite(f)) return 0;
    return Math.trunc(x / f) * f;
  }
  if (x === 0) return x; // -0.0 stays -0.0
  return exactDecimal(x).toDecimalPlaces(Math.min(digits, 400), Decimal.ROUND_DOWN).toNumber();
}

const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

/**
 * roundDouble / truncDouble for 1..22 digits without decimal.js when plain
 * doubles decide it: |x| * 10^d is within |x| * 10^d * 2^-53 of the exact product,
 * so unless it lies that close to a rounding boundary (a half for ROUND, an
 * integer for TRUNC) the exact value rounds to the same integer N < 2^52, and
 * N / 10^d (both exact doubles) is the correctly rounded N * 10^-d that
 * decimal.js's toNumber gives. Anything else (NaN, Inf, near a boundary, big
 * products, other digit counts) takes the exact path.
 */
export function roundDigitsFast(x: number, digits: number, trunc: boolean): number {
  if (digits >= 1 && digits <= 22) {
    if (x === 0) return x; // -0.0 stays -0.0
    const f = POW10[digits]!;
    const y = Math.abs(x) * f;
    if (y < 4503599627370496) {
      const k = Math.floor(y);
      const g = y - k; // exact below 2^52
      const margin = y * 4.440892098500626e-16; // 2^-51: twice the product's rounding error
      if (trunc ? g > margin && 1 - g > margin : Math.abs(g - 0.5) > margin) {
        const r = (trunc || g < 0.5 ? k : k + 1) / f;
        // exactDecimal(-0) is +0, but a negative x that rounds to zero gives -0
        return x < 0 ? -r : r;
      }
    }
  }
  return trunc ? truncDouble(x, digits) : roundDouble(x, digits);
}

/** ROUND/TRUNC(FLOAT64, INT64) as one typed loop (was a boxed row kernel on decimal.js: 10 us a row). */
function roundDigitsKernel(trunc: boolean): ScalarKernel {
  return (args, n) => {
    const x = args[0]!.data as Float64Array;
    const dg = args[1]!.data as Int64Data;
    const nulls = mergeNulls(args, n);
    const out = new Float64Array(n);
    try {
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) continue;
        out[i] = roundDigitsFast(x[i]!, Number(dg[i]!), trunc);
      }
    } catch (e) {
      throw asQueryError(e);
    }
    return { type: T.FLOAT64, length: n, data: out, nulls };
  };
}

/** A double's exact binary value as a decimal (to 100 significant digits, past any rounding position that can change the result). */
function exactDecimal(x: number): Decimal {
  return new Decimal(x.toPrecision(100));
}

function roundDecimal(kind: DecKind, d: Decimal, digits: number, mode: Decimal.Rounding): Decimal {
  const maxScale = kind === 'NUMERIC' ? 9 : 38;
  if (digits >= maxScale) return d;
  // Past the type's 39 integer digits every value rounds to 0 (10^-digits would be Infinity).
  if (digits < -40) return new Decimal(0);
  if (digits < 0) {
    const f = new Decimal(10).pow(-digits);
    return checkDecimal(d.div(f).toDecimalPlaces(0, mode).times(f), kind, `ROUND(${d.toFixed()}, ${digits})`);
  }
  return checkDecimal(d.toDecimalPlaces(digits, mode), kind, `ROUND(${d.toFixed()}, ${digits})`);
}

// CBRT the way the service computes it: the C library's cube root (a polynomial
// first guess refined by one Halley step), which is not correctly rounded -- the
// documented CBRT(27) is 3.0000000000000004 where Math.cbrt gives 3.
const CBRT_FACTOR = [1 / 1.5874010519681994748, 1 / 1.2599210498948731648, 1, 1.2599210498948731648, 1.5874010519681994748];
const F64 = new Float64Array(1);
const F64_BITS = new Uint32Array(F64.buffer);
function cbrtService(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x + x;
  // frexp: |x| = xm * 2^xe with xm in [0.5, 1)
  let a = Math.abs(x);
  let bias = 0;
  if (a < 2.2250738585072014e-308) {
    a *= 2 ** 64;
    bias = -64;
  }
  F64[0] = a;
  const hi = F64_BITS[1]!;
  const xe = ((hi >>> 20) & 0x7ff) - 1022 + bias;
  F64_BITS[1] = (hi & 0x800fffff) | (1022 << 20);
  const xm = F64[0];
  const u = 0.354895765043919860 + ((1.50819193781584896 + ((-2.11499494167371287 + ((2.44693122563534430 +
    ((-1.83469277483613086 + (0.784932344976639262 - 0.145263899385486377 * xm) * xm) * xm)) * xm)) * xm)) * xm);
  const t2 = u * u * u;
  // C's % and / truncate toward zero
  const ym = ((u * (t2 + 2.0 * xm)) / (2.0 * t2 + xm)) * CBRT_FACTOR[2 + (xe % 3)]!;
  const r = ym * 2 ** Math.trunc(xe / 3);
  return x > 0 ? r : -r;
}

// ROUND's rounding_mode is an enum (ROUNDING_MODE) in the reference: a constant STRING coerces to it
// by its exact, case-sensitive name; anything else is a cast error of the literal.
const ROUNDING_MODES = new Map([['ROUND_HALF_AWAY_FROM_ZERO', Decimal.ROUND_HALF_UP], ['ROUND_HALF_EVEN', Decimal.ROUND_HALF_EVEN]] as const);
const roundingModeArg: ArgSpec = { type: 'STRING', constant: true, datePart: false, displayAs: 'ROUNDING_MODE' };
function badRoundingMode(s: string): string {
  const near = [...ROUNDING_MODES.keys()].find((k) => k === s.toUpperCase());
  return `Could not cast literal ${JSON.stringify(s)} to type ROUNDING_MODE${near ? `; Did you mean '${near}'? (Note: ENUM values are case sensitive)` : ''}`;
}
function roundingMode(s: Value): Decimal.Rounding {
  const m = ROUNDING_MODES.get(s as 'ROUND_HALF_EVEN');
  if (m === undefined) fail(badRoundingMode(String(s)));
  return m;
}

// Floating-point domain errors and overflows, worded as the reference words them.
const fpError = (call: string): never => fail(`Floating point error in function: ${call}`);
const fpOverflow = (call: string): never => fail(`Floating point overflow in function: ${call}`);

export function registerMath(): void {
  defineScalar('ABS', [
    sig(['INT64'], 'INT64', (args, n) => {
      const a = args[0]!;
      const out = new I64Out(n);
      const d = a.data;
      for (let i = 0; i < n; i++) {
        if (a.nulls !== null && a.nulls[i] === 1) continue;
        if (d instanceof Float64Array) out.setNum(i, Math.abs(d[i]!));
        else {
          const x = (d as BigInt64Array)[i]!;
          if (x === INT64_MIN) fail(`int64 overflow: -${x}`);
          out.setBig(i, x < 0n ? -x : x);
        }
      }
      return out.vector(T.INT64, a.nulls);
    }),
    sig(['FLOAT64'], 'FLOAT64', f64Unary(Math.abs)),
    sig(['NUMERIC'], 'NUMERIC', onWords((args, n) => unaryWords('abs', T.NUMERIC, args, n), decUnary('NUMERIC', (x) => x.abs()))),
    sig(['BIGNUMERIC'], 'BIGNUMERIC', onWords((args, n) => unaryWords('abs', T.BIGNUMERIC, args, n), decUnary('BIGNUMERIC', (x) => x.abs()))),
  ]);
  defineScalar('SIGN', [
    sig(['INT64'], 'INT64', rowKernel(T.INT64, (v) => {
      const x = v[0] as bigint;
      return x > 0n ? 1n : x < 0n ? -1n : 0n;
    })),
    sig(['FLOAT64'], 'FLOAT64', f64Unary((x) => (Number.isNaN(x) ? NaN : x > 0 ? 1 : x < 0 ? -1 : 0))),
    sig(['NUMERIC'], 'NUMERIC', onWords((args, n) => unaryWords('sign', T.NUMERIC, args, n), decUnary('NUMERIC', (x) => new Decimal(x.isZero() ? 0 : x.isNeg() ? -1 : 1)))),
    sig(['BIGNUMERIC'], 'BIGNUMERIC', onWords((args, n) => unaryWords('sign', T.BIGNUMERIC, args, n), decUnary('BIGNUMERIC', (x) => new Decimal(x.isZero() ? 0 : x.isNeg() ? -1 : 1)))),
  ]);
  defineScalar('IS_INF', [sig(['FLOAT64'], 'BOOL', rowKernel(T.BOOL, (v) => (v[0] as number) === Infinity || (v[0] as number) === -Infinity))]);
  defineScalar('IS_NAN', [sig(['FLOAT64'], 'BOOL', rowKernel(T.BOOL, (v) => Number.isNaN(v[0] as number)))]);
  defineScalar('IEEE_DIVIDE', [sig(['FLOAT64', 'FLOAT64'], 'FLOAT64', (args, n) => {
    const a = args[0]!.data as Float64Array;
    const b = args[1]!.data as Float64Array;
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = a[i]! / b[i]!;
    const nulls = args[0]!.nulls ?? args[1]!.nulls ? mergeN(args, n) : null;
    return { type: T.FLOAT64, length: n, data: out, nulls };
  })]);

  // SAFE_ variants: errors become NULL.
  const safeWrap = (k: ScalarKernel, type: SqlType): ScalarKernel => (args, n, ctx) => {
    try {
      return k(args, n, ctx);
    } catch (e) {
      if (!(e instanceof QueryError)) throw e;
      // Fall back row by row so only failing rows become NULL.
      const cols = args.map((a) => valuesOf(a, n));
      const out = new Array<Value>(n);
      for (let i = 0; i < n; i++) {
        const rowArgs = args.map((a, k2) => ({ type: a.type, length: 1, data: [cols[k2]![i]!], nulls: cols[k2]![i] === null ? new Uint8Array([1]) : null }) as Vector);
        try {
          const r = k(rowArgs.map(toLayout), 1, ctx);
          out[i] = valuesOf(r, 1)[0]!;
        } catch (e2) {
          if (!(e2 instanceof QueryError)) throw e2;
          out[i] = null;
        }
      }
      return vectorOfValues(type, out);
    }
  };
  const safeArith = (name: string, op: 'add' | 'sub' | 'mul' | 'div') => {
    const sigs: Signature<KernelMaker>[] = [];
    // In the reference's order (its "Supported signatures" list): INT64 (not for division), FLOAT64, NUMERIC, BIGNUMERIC.
    if (op !== 'div') sigs.push(sig(['INT64', 'INT64'], 'INT64', safeWrap(int64Binary(op), T.INT64)));
    sigs.push(sig(['FLOAT64', 'FLOAT64'], 'FLOAT64', safeWrap(float64Binary(op), T.FLOAT64)));
    sigs.push(sig(['NUMERIC', 'NUMERIC'], 'NUMERIC', onWords((args, n) => arithWords(op, T.NUMERIC, args, n, true), safeWrap(decimalBinary('NUMERIC', op), T.NUMERIC))));
    sigs.push(sig(['BIGNUMERIC', 'BIGNUMERIC'], 'BIGNUMERIC', onWords((args, n) => arithWords(op, T.BIGNUMERIC, args, n, true), safeWrap(decimalBinary('BIGNUMERIC', op), T.BIGNUMERIC))));
    defineScalar(name, sigs);
  };
  safeArith('SAFE_ADD', 'add');
  safeArith('SAFE_SUBTRACT', 'sub');
  safeArith('SAFE_MULTIPLY', 'mul');
  safeArith('SAFE_DIVIDE', 'div');
  defineScalar('SAFE_NEGATE', [
    sig(['INT64'], 'INT64', rowKernel(T.INT64, (v) => ((v[0] as bigint) === INT64_MIN ? null : -(v[0] as bigint)))),
    sig(['FLOAT64'], 'FLOAT64', f64Unary((x) => -x)),
    sig(['NUMERIC'], 'NUMERIC', rowKernel(T.NUMERIC, (v) => (v[0] as Decimal).neg())),
    // -BIGNUMERIC_MIN is past BIGNUMERIC_MAX: NULL, as for INT64's minimum
    sig(['BIGNUMERIC'], 'BIGNUMERIC', rowKernel(T.BIGNUMERIC, (v) => fitDecimal((v[0] as Decimal).neg(), 'BIGNUMERIC') ?? null)),
  ]);

  defineScalar('DIV', [
    sig(['INT64', 'INT64'], 'INT64', rowKernel(T.INT64, (v) => {
      const x = v[0] as bigint;
      const y = v[1] as bigint;
      if (y === 0n) fail(`division by zero: ${x} / ${y}`);
      if (x === INT64_MIN && y === -1n) fail(`int64 overflow: -${x}`);
      return x / y;
    })),
    sig(['NUMERIC', 'NUMERIC'], 'NUMERIC', onWords((args, n) => divModWords('div', T.NUMERIC, args, n), rowKernel(T.NUMERIC, (v) => {
      const y = v[1] as Decimal;
      if (y.isZero()) fail(`division by zero: DIV(${(v[0] as Decimal).toFixed()}, ${y.toFixed()})`);
      return checkDecimal((v[0] as Decimal).div(y).trunc(), 'NUMERIC', `DIV(${(v[0] as Decimal).toFixed()}, ${y.toFixed()})`);
    }))),
    sig(['BIGNUMERIC', 'BIGNUMERIC'], 'BIGNUMERIC', onWords((args, n) => divModWords('div', T.BIGNUMERIC, args, n), rowKernel(T.BIGNUMERIC, (v) => {
      const y = v[1] as Decimal;
      if (y.isZero()) fail(`division by zero: DIV(${(v[0] as Decimal).toFixed()}, ${y.toFixed()})`);
      return checkDecimal((v[0] as Decimal).div(y).trunc(), 'BIGNUMERIC', `DIV(${(v[0] as Decimal).toFixed()}, ${y.toFixed()})`);
    }))),
  ]);
  defineScalar('MOD', [
    sig(['INT64', 'INT64'], 'INT64', (args, n) => {
      const a = args[0]!.data;
      const b = args[1]!.data;
      const nulls = mergeN(args, n);
      const out = new I64Out(n);
      if (a instanceof Float64Array && b instanceof Float64Array) {
        // Doubles holding exact integers: % is exact, the result never grows.
        const f = out.f!;
        for (let i = 0; i < n; i++) {
          if (nulls !== null && nulls[i] === 1) continue;
          const x = a[i]!;
          const y = b[i]!;
          if (y === 0) fail(`division by zero: MOD(${x}, ${y})`);
          // x - trunc(x / y) * y is exact while |x| + |y| < 2^53 (the quotient cannot round across an
          // integer) and ~10x faster than %, which V8 runs as a call to C's fmod (~40 ns per row).
          const r = x < 2 ** 52 && x > -(2 ** 52) && y < 2 ** 52 && y > -(2 ** 52) ? x - Math.trunc(x / y) * y : x % y;
          f[i] = r === 0 ? 0 : r;
        }
        return out.vector(T.INT64, nulls);
      }
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) continue;
        {
          const x = i64At(a as Float64Array, i);
          const y = i64At(b as Float64Array, i);
          if (y === 0n) fail(`division by zero: MOD(${x}, ${y})`);
          out.setBig(i, y === -1n ? 0n : x % y);
        }
      }
      return out.vector(T.INT64, nulls);
    }),
    sig(['NUMERIC', 'NUMERIC'], 'NUMERIC', onWords((args, n) => divModWords('mod', T.NUMERIC, args, n), rowKernel(T.NUMERIC, (v) => {
      const y = v[1] as Decimal;
      if (y.isZero()) fail(`division by zero: MOD(${(v[0] as Decimal).toFixed()}, ${y.toFixed()})`);
      return (v[0] as Decimal).mod(y);
    }))),
    sig(['BIGNUMERIC', 'BIGNUMERIC'], 'BIGNUMERIC', onWords((args, n) => divModWords('mod', T.BIGNUMERIC, args, n), rowKernel(T.BIGNUMERIC, (v) => {
      const y = v[1] as Decimal;
      if (y.isZero()) fail(`division by zero: MOD(${(v[0] as Decimal).toFixed()}, ${y.toFixed()})`);
      return (v[0] as Decimal).mod(y);
    }))),
  ]);

  // ROUND / TRUNC / CEIL / FLOOR
  const roundSigs = (name: 'ROUND' | 'TRUNC'): Signature<KernelMaker>[] => {
    const fd = name === 'ROUND' ? roundDouble : truncDouble;
    const mode = name === 'ROUND' ? Decimal.ROUND_HALF_UP : Decimal.ROUND_DOWN;
    const wmode = name === 'ROUND' ? 'half' : 'trunc';
    const s: Signature<KernelMaker>[] = [
      sig(['FLOAT64'], 'FLOAT64', f64Unary((x) => fd(x, 0))),
      sig(['NUMERIC'], 'NUMERIC', onWords((args, n) => roundWords(wmode, T.NUMERIC, args, n), decUnary('NUMERIC', (x) => roundDecimal('NUMERIC', x, 0, mode)))),
      sig(['BIGNUMERIC'], 'BIGNUMERIC', onWords((args, n) => roundWords(wmode, T.BIGNUMERIC, args, n), decUnary('BIGNUMERIC', (x) => roundDecimal('BIGNUMERIC', x, 0, mode)))),
      sig(['FLOAT64', 'INT64'], 'FLOAT64', roundDigitsKernel(name === 'TRUNC')),
      sig(['NUMERIC', 'INT64'], 'NUMERIC', onWords((args, n) => roundWords(wmode, T.NUMERIC, args, n), rowKernel(T.NUMERIC, (v) => roundDecimal('NUMERIC', v[0] as Decimal, Number(v[1] as bigint), mode)))),
      sig(['BIGNUMERIC', 'INT64'], 'BIGNUMERIC', onWords((args, n) => roundWords(wmode, T.BIGNUMERIC, args, n), rowKernel(T.BIGNUMERIC, (v) => roundDecimal('BIGNUMERIC', v[0] as Decimal, Number(v[1] as bigint), mode)))),
    ];
    // rounding_mode exists for NUMERIC and BIGNUMERIC only; with a FLOAT64 X the service rejects it
    if (name === 'ROUND') {
      s.push(
        sig(['NUMERIC', 'INT64', roundingModeArg], 'NUMERIC', rowKernel(T.NUMERIC, (v) => roundDecimal('NUMERIC', v[0] as Decimal, Number(v[1] as bigint), roundingMode(v[2]!)))),
        sig(['BIGNUMERIC', 'INT64', roundingModeArg], 'BIGNUMERIC', rowKernel(T.BIGNUMERIC, (v) => roundDecimal('BIGNUMERIC', v[0] as Decimal, Number(v[1] as bigint), roundingMode(v[2]!)))),
      );
    }
    return s;
  };
  defineScalar('ROUND', roundSigs('ROUND'), {
    validate: (args) => {
      const m = args[2]?.constant?.value;
      return typeof m === 'string' && !ROUNDING_MODES.has(m as 'ROUND_HALF_EVEN') ? badRoundingMode(m) : undefined;
    },
  });
  defineScalar('TRUNC', roundSigs('TRUNC'));
  const ceilFloor = (ceil: boolean) => [
    sig(['FLOAT64'], 'FLOAT64', f64Unary(ceil ? Math.ceil : Math.floor)),
    sig(['NUMERIC'], 'NUMERIC', onWords((args, n) => roundWords(ceil ? 'ceil' : 'floor', T.NUMERIC, args, n), decUnary('NUMERIC', (x) => (ceil ? x.ceil() : x.floor()), ceil ? 'CEIL' : 'FLOOR'))),
    sig(['BIGNUMERIC'], 'BIGNUMERIC', onWords((args, n) => roundWords(ceil ? 'ceil' : 'floor', T.BIGNUMERIC, args, n), decUnary('BIGNUMERIC', (x) => (ceil ? x.ceil() : x.floor()), ceil ? 'CEIL' : 'FLOOR'))),
  ];
  defineScalar('CEIL', ceilFloor(true), { aliases: ['CEILING'] });
  defineScalar('FLOOR', ceilFloor(false));

  // Powers and logs
  defineScalar('SQRT', [
    sig(['FLOAT64'], 'FLOAT64', f64Unary(Math.sqrt, (x) => {
      if (x < 0) fail(`Argument to SQRT cannot be negative: ${formatErrNum(x)}`);
    })),
    ...(['NUMERIC', 'BIGNUMERIC'] as const).map((kind) => sig([kind], kind, decUnary(kind, (x) => {
      if (x.isNeg() && !x.isZero()) fail(`SQRT is undefined for negative value: SQRT(${x.toFixed()})`);
      return atResultDigits(kind, x, (d) => d.sqrt());
    }))),
  ]);
  const powF = (x: number, y: number): number => {
    if (x === 0 && y < 0 && y !== -Infinity) fpError(`POW(${formatErrNum(x)}, ${formatErrNum(y)})`);
    // the documented error is for a finite negative X; POW(-inf, 1.5) is +inf
    if (x < 0 && Number.isFinite(x) && !Number.isInteger(y) && Number.isFinite(y)) fpError(`POW(${formatErrNum(x)}, ${formatErrNum(y)})`);
    const r = Math.pow(x, y);
    if (!Number.isFinite(r) && Number.isFinite(x) && Number.isFinite(y)) fpError(`POW(${formatErrNum(x)}, ${formatErrNum(y)})`);
    if (x === 1 || (x === -1 && !Number.isFinite(y))) return 1;
    return r;
  };
  const powD = (kind: DecKind) => (v: Value[]): Value => {
    const x = v[0] as Decimal;
    const y = v[1] as Decimal;
    if (x.isZero() && y.isNeg()) fail(`division by zero: POW(${x.toFixed()}, ${y.toFixed()})`);
    if (x.isNeg() && !y.isInteger()) fail(`Negative ${kind} value cannot be raised to a fractional power: POW(${x.toFixed()}, ${y.toFixed()})`);
    // Integer powers stay exact (up to the global digits); fractional ones go through ln/exp at the result's digits.
    const r = fitDecimal(y.isInteger() ? x.pow(y) : atResultDigits(kind, x, (d) => d.pow(y)), kind);
    if (r === undefined) fail(`${kind === 'NUMERIC' ? 'numeric' : 'BIGNUMERIC'} overflow: POW(${x.toFixed()}, ${y.toFixed()})`);
    return r;
  };
  defineScalar('POW', [
    sig(['FLOAT64', 'FLOAT64'], 'FLOAT64', rowKernel(T.FLOAT64, (v) => powF(v[0] as number, v[1] as number))),
    sig(['NUMERIC', 'NUMERIC'], 'NUMERIC', rowKernel(T.NUMERIC, powD('NUMERIC'))),
    sig(['BIGNUMERIC', 'BIGNUMERIC'], 'BIGNUMERIC', rowKernel(T.BIGNUMERIC, powD('BIGNUMERIC'))),
  ], { aliases: ['POWER'] });
  defineScalar('EXP', [
    // The page says EXP "generates an error if the result overflows" (the condition); the message is the
    // reference's generic one: its EXP checks with CheckFloatingPointError (functions/math.h), unlike SINH/COSH.
    sig(['FLOAT64'], 'FLOAT64', f64Unary((x) => {
      const r = Math.exp(x);
      if (r === Infinity && Number.isFinite(x)) fpError(`EXP(${formatErrNum(x)})`);
      return r;
    })),
    sig(['NUMERIC'], 'NUMERIC', decUnary('NUMERIC', (x) => atResultDigits('NUMERIC', x, (d) => d.exp()), 'EXP')),
    sig(['BIGNUMERIC'], 'BIGNUMERIC', decUnary('BIGNUMERIC', (x) => atResultDigits('BIGNUMERIC', x, (d) => d.exp()), 'EXP')),
  ]);
  // -inf is not an error: the service's tables give LN/LOG/LOG10(-inf) = NaN.
  const logCheck = (name: string) => (x: number) => {
    if (x <= 0 && x !== -Infinity) fpError(`${name}(${formatErrNum(x)})`);
  };
  defineScalar('LN', [
    sig(['FLOAT64'], 'FLOAT64', f64Unary(Math.log, logCheck('LN'))),
    sig(['NUMERIC'], 'NUMERIC', rowKernel(T.NUMERIC, (v) => decLog('NUMERIC', 'LN', v[0] as Decimal))),
    sig(['BIGNUMERIC'], 'BIGNUMERIC', rowKernel(T.BIGNUMERIC, (v) => decLog('BIGNUMERIC', 'LN', v[0] as Decimal))),
  ]);
  defineScalar('LOG10', [
    sig(['FLOAT64'], 'FLOAT64', f64Unary(Math.log10, logCheck('LOG10'))),
    sig(['NUMERIC'], 'NUMERIC', rowKernel(T.NUMERIC, (v) => decLog('NUMERIC', 'LOG10', v[0] as Decimal))),
    sig(['BIGNUMERIC'], 'BIGNUMERIC', rowKernel(T.BIGNUMERIC, (v) => decLog('BIGNUMERIC', 'LOG10', v[0] as Decimal))),
  ]);
  const logB = (x: number, b: number): number => {
    // documented special cases: LOG(-inf, Y) and LOG(X, +inf) are NaN, not errors
    if (x === -Infinity || b === Infinity) return NaN;
    if (x <= 0 || b <= 0 || b === 1) fpError(`LOG(${formatErrNum(x)}, ${formatErrNum(b)})`);
    return Math.log(x) / Math.log(b);
  };
  defineScalar('LOG', [
    // One signature with an optional base, as the reference lists it (LOG(FLOAT64, [FLOAT64])); one-argument LOG
    // is LN, named so in its errors.
    sigf(['FLOAT64', opt('FLOAT64')], 'FLOAT64', (c) =>
      c.argTypes.length > 1 ? rowKernel(T.FLOAT64, (v) => logB(v[0] as number, v[1] as number)) : f64Unary(Math.log, logCheck('LN'))),
    sig(['NUMERIC', opt('NUMERIC')], 'NUMERIC', rowKernel(T.NUMERIC, (v) => decLog('NUMERIC', v.length > 1 ? 'LOG' : 'LN', v[0] as Decimal, v[1] as Decimal))),
    sig(['BIGNUMERIC', opt('BIGNUMERIC')], 'BIGNUMERIC', rowKernel(T.BIGNUMERIC, (v) => decLog('BIGNUMERIC', v.length > 1 ? 'LOG' : 'LN', v[0] as Decimal, v[1] as Decimal))),
  ]);
  defineScalar('CBRT', [sig(['FLOAT64'], 'FLOAT64', f64Unary(cbrtService))]);

  // Trigonometry
  // 1 / f(x) is an error where a finite x gives no finite result: 0, and subnormals whose reciprocal overflows.
  const reciprocal = (name: string, f: (x: number) => number) => (x: number): number => {
    const r = 1 / f(x);
    if (!Number.isFinite(r) && Number.isFinite(x)) fpError(`${name}(${formatErrNum(x)})`);
    return r;
  };
  const trig: [string, (x: number) => number, ((x: number) => void)?][] = [
    ['COS', Math.cos], ['SIN', Math.sin], ['TAN', Math.tan],
    ['ACOS', Math.acos, (x) => { if ((x < -1 || x > 1) && Number.isFinite(x)) fpError(`ACOS(${formatErrNum(x)})`); }],
    ['ASIN', Math.asin, (x) => { if ((x < -1 || x > 1) && Number.isFinite(x)) fpError(`ASIN(${formatErrNum(x)})`); }],
    ['ATAN', Math.atan], ['COSH', (x) => {
      const r = Math.cosh(x);
      if (!Number.isFinite(r) && Number.isFinite(x)) fpOverflow(`COSH(${formatErrNum(x)})`);
      return r;
    }], ['SINH', (x) => {
      const r = Math.sinh(x);
      if (!Number.isFinite(r) && Number.isFinite(x)) fpOverflow(`SINH(${formatErrNum(x)})`);
      return r;
    }], ['TANH', Math.tanh], ['ACOSH', (x) => {
      if (x < 1 && x !== -Infinity) fpError(`ACOSH(${formatErrNum(x)})`);
      return Math.acosh(x);
    }], ['ASINH', Math.asinh], ['ATANH', (x) => {
      if ((x <= -1 || x >= 1) && Number.isFinite(x)) fpError(`ATANH(${formatErrNum(x)})`);
      return Math.atanh(x);
    }],
    ['COT', reciprocal('COT', Math.tan)], ['CSC', reciprocal('CSC', Math.sin)],
    ['SEC', (x) => 1 / Math.cos(x)],
    ['COTH', reciprocal('COTH', Math.tanh)], ['CSCH', reciprocal('CSCH', Math.sinh)],
    ['SECH', (x) => 1 / Math.cosh(x)],
    ['RADIANS', (x) => (x * Math.PI) / 180], ['DEGREES', (x) => (x * 180) / Math.PI],
  ];
  for (const [name, f, check] of trig) defineScalar(name, [sig(['FLOAT64'], 'FLOAT64', f64Unary(f, check))]);
  defineScalar('ATAN2', [sig(['FLOAT64', 'FLOAT64'], 'FLOAT64', rowKernel(T.FLOAT64, (v) => Math.atan2(v[0] as number, v[1] as number)))]);
  defineScalar('PI', [sig([], 'FLOAT64', rowKernel(T.FLOAT64, () => Math.PI))]);
  defineScalar('PI_NUMERIC', [sig([], 'NUMERIC', rowKernel(T.NUMERIC, () => new Decimal('3.141592654')))]);
  defineScalar('PI_BIGNUMERIC', [sig([], 'BIGNUMERIC', rowKernel(T.BIGNUMERIC, () => new Decimal('3.14159265358979323846264338327950288420')))]);

  // GREATEST / LEAST: NULL if any argument is NULL; NaN wins for FLOAT64.
  const gl = (greatest: boolean) =>
    sigf([{ type: 'T1', repeated: true }], 'T1', (c) => glKernel(greatest, c.returnType, rowKernel(c.returnType, (v) => {
      let best: Value = null;
      for (const x of v) {
        if (x === null) return null;
        if (typeof x === 'number' && Number.isNaN(x)) return NaN;
        if (best === null) best = x;
        else {
          const cmp = compareValues(x, best);
          if (greatest ? cmp > 0 : cmp < 0) best = x;
        }
      }
      return best;
    }, false)), (c) => c.args.length > 0 && c.argTypes.every((t) => t.kind !== 'JSON' && t.kind !== 'GEOGRAPHY' && t.kind !== 'STRUCT' && t.kind !== 'ARRAY'));
  /** NUMERIC / BIGNUMERIC arguments compared on their words (no Decimal per row). */
  const glKernel = (greatest: boolean, type: SqlType, rows: ScalarKernel): ScalarKernel =>
    type.kind === 'NUMERIC' || type.kind === 'BIGNUMERIC' ? onWords((args, n) => extremeWords(greatest, type, args, n), rows) : rows;
  defineScalar('GREATEST', [gl(true)]);
  defineScalar('LEAST', [gl(false)]);

  defineScalar('RAND', [sig([], 'FLOAT64', perRowKernel(T.FLOAT64, (ctx) => ctx.random()))], { volatile: true, safeCallable: false });
  defineScalar('RANGE_BUCKET', [
    sigf(['T1', 'ARRAY<T1>'], 'INT64', () => rowKernel(T.INT64, (v) => {
      const x = v[0]!;
      const arr = v[1] as Value[] | null;
      if (x === null || arr === null) return null;
      if (typeof x === 'number' && Number.isNaN(x)) return null;
      for (let i = 0; i < arr.length; i++) {
        // NULL orders first: after a value it breaks the order, else it is refused as NULL.
        if (arr[i] === null && (i === 0 || arr[i - 1] === null)) fail(`Elements in input array to RANGE_BUCKET cannot be null. Null element found at position ${i + 1}`);
        if (i > 0 && (arr[i] === null || compareValues(arr[i]!, arr[i - 1]!) < 0)) fail(`Elements in input array to RANGE_BUCKET must be in ascending order. Nonconforming elements found at position ${i} and ${i + 1}`);
      }
      let k = 0;
      while (k < arr.length && compareValues(arr[k]!, x) <= 0) k++;
      return BigInt(k);
    }, false)),
  ]);
  const vecDist = (cos: boolean) => (v: Value[]): Value => {
    const a = v[0] as Value[];
    const b = v[1] as Value[];
    if (a.length !== b.length) fail(`Array arguments to ${cos ? 'COSINE_DISTANCE' : 'EUCLIDEAN_DISTANCE'} must have equal length. The given arrays have lengths of ${a.length} and ${b.length}`);
    let dot = 0, na = 0, nb = 0, sq = 0;
    for (let i = 0; i < a.length; i++) {
      if (a[i] === null || b[i] === null) fail('Cannot compute distance with NULL array elements');
      const x = Number(a[i]);
      const y = Number(b[i]);
      dot += x * y;
      na += x * x;
      nb += y * y;
      sq += (x - y) * (x - y);
    }
    if (!cos) return Math.sqrt(sq);
    if (na === 0 || nb === 0) fail('Cannot compute cosine distance against zero vector.');
    return 1 - dot / Math.sqrt(na * nb);
  };
  // Sparse vectors: ARRAY<STRUCT<dimension INT64|STRING, magnitude FLOAT64>>; absent dimensions are 0.
  const sparseDist = (cos: boolean) => (v: Value[]): Value => {
    const toMap = (arr: Value[]): Map<string, number> => {
      const m = new Map<string, number>();
      for (const e of arr) {
        const [k, x] = (e ?? [null, null]) as Value[];
        if (e === null || k === null || k === undefined || x === null || x === undefined) fail('Cannot compute distance with NULL array elements');
        const key = String(k);
        if (m.has(key)) fail(`Duplicate index ${key} found in the input array.`);
        m.set(key, Number(x));
      }
      return m;
    };
    const a = toMap(v[0] as Value[]);
    const b = toMap(v[1] as Value[]);
    let dot = 0, na = 0, nb = 0, sq = 0;
    for (const [k, x] of a) {
      const y = b.get(k) ?? 0;
      dot += x * y;
      na += x * x;
      sq += (x - y) * (x - y);
    }
    for (const [k, y] of b) {
      nb += y * y;
      if (!a.has(k)) sq += y * y;
    }
    if (!cos) return Math.sqrt(sq);
    if (na === 0 || nb === 0) fail('Cannot compute cosine distance against zero vector.');
    return 1 - dot / Math.sqrt(na * nb);
  };
  const sparseShape = (c: { argTypes: readonly SqlType[] }): boolean => {
    const kinds = c.argTypes.map((t) => (t.kind === 'ARRAY' && t.element.kind === 'STRUCT' && t.element.fields.length === 2 ? t.element.fields.map((f) => f.type.kind) : []));
    const k0 = kinds[0]![0];
    return kinds.every((k) => (k[0] === 'INT64' || k[0] === 'STRING') && k[0] === k0 && (k[1] === 'FLOAT64' || k[1] === 'INT64'));
  };
  for (const [name, cos] of [['COSINE_DISTANCE', true], ['EUCLIDEAN_DISTANCE', false]] as const)
    defineScalar(name, [
      sig(['ARRAY<FLOAT64>', 'ARRAY<FLOAT64>'], 'FLOAT64', rowKernel(T.FLOAT64, vecDist(cos))),
      sig(['ARRAY<INT64>', 'ARRAY<INT64>'], 'FLOAT64', rowKernel(T.FLOAT64, vecDist(cos))),
      sig(['ARRAY<STRUCT>', 'ARRAY<STRUCT>'], 'FLOAT64', rowKernel(T.FLOAT64, sparseDist(cos)), sparseShape),
    ]);
  const parseNum = (kind: DecKind) => rowKernel(T[kind], (v) => {
    const s = (v[0] as string).trim();
    // PARSE_NUMERIC allows a sign before or after the number, spaces after a leading sign,
    // and comma digit-group separators in the integer part.
    const m = /^([+-]?)\s*([0-9][0-9,]*)?(\.[0-9]*)?([eE][+-]?[0-9]+)?\s*([+-]?)$/.exec(s);
    const intPart = (m?.[2] ?? '').replace(/,/g, '');
    const frac = m?.[3] ?? '';
    const invalid = `Invalid input to PARSE_${kind}: "${v[0] as string}"`;
    if (!m || (intPart === '' && frac.length <= 1) || (m[1] && m[5]) || (m[2] ?? '').startsWith(',')) fail(invalid);
    const d = new Decimal((m[1] || m[5] || '') + (intPart || '0') + frac + (m[4] ?? ''));
    const r = fitDecimal(d, kind);
    if (r === undefined) fail(invalid);
    return r;
  });
  defineScalar('PARSE_NUMERIC', [sig(['STRING'], 'NUMERIC', parseNum('NUMERIC'))]);
  defineScalar('PARSE_BIGNUMERIC', [sig(['STRING'], 'BIGNUMERIC', parseNum('BIGNUMERIC'))]);
}

import { mergeNulls as mergeN } from './vec.js';
import { vectorFromValues as vectorOfValues } from '../types/vector.js';

/** Re-lays out a 1-row values vector into the type's physical layout. */
function toLayout(v: Vector): Vector {
  return vectorOfValues(v.type, v.data as Value[]);
}
