// NUMERIC / BIGNUMERIC kernels on the words (src/functions/decimal-kernels.ts)
// against the decimal.js path, value by value: random operands (amounts
// below 2^53 unscaled, every length of digits, both types' extremes, NULLs),
// each row alone (so an overflow or a division by zero shows as the words
// kernel giving the batch up: null, where decimal.js raises) and the rows that
// answer in one batch, whose result must be words again with nothing boxed.
import { describe, expect, it } from 'vitest';
import '../../src/functions/index.js';
import { castValue } from '../../src/functions/conversion.js';
import { arithWords, castWords, roundWords, unaryWords, type ArithOp, type Rounding, type UnaryOp } from '../../src/functions/decimal-kernels.js';
import { boxedDecimalBinary } from '../../src/functions/operators.js';
import { checkDecimal, fitDecimal } from '../../src/functions/numeric.js';
import type { EvalContext } from '../../src/functions/registry.js';
import { wordsOfText, type DecimalWidth } from '../../src/types/decimal-words.js';
import { T, type SqlType } from '../../src/types/types.js';
import { Decimal, type Value } from '../../src/types/values.js';
import { decimalBoxing, decimalVector, getValue, vectorFromValues, type Vector } from '../../src/types/vector.js';
import { randomDecimalText, rng } from '../helpers/random-values.js';

const ctx = {} as EvalContext;
const bytesOf = (s: string): Uint8Array => new TextEncoder().encode(s);
const typeOf = (width: DecimalWidth): SqlType => (width === 4 ? T.NUMERIC : T.BIGNUMERIC);

/** A decimal view of texts (null: a NULL row). */
function wordsVector(texts: readonly (string | null)[], width: DecimalWidth): Vector {
  const n = texts.length;
  const words = new Uint32Array(n * width);
  let nulls: Uint8Array | null = null;
  texts.forEach((t, i) => {
    if (t === null) (nulls ??= new Uint8Array(n))[i] = 1;
    else if (!wordsOfText(bytesOf(t), 0, t.length, width, words, i)) throw new Error(`no words for ${t}`);
  });
  return decimalVector(typeOf(width), n, nulls, { words, width });
}

/** A random operand: mostly NUMERIC amounts with 0-4 fraction digits (the fast path), else any text of the type. */
function operand(r: () => number, width: DecimalWidth): string | null {
  const p = r();
  if (p < 0.05) return null;
  if (width === 4 && p < 0.5) {
    const int = Math.floor(r() * 10 ** Math.floor(r() * 8));
    const frac = Math.floor(r() * 10 ** Math.floor(r() * 5));
    const t = new Decimal(`${int}.${String(frac).padStart(4, '0')}`).toFixed();
    return r() < 0.3 && t !== '0' ? '-' + t : t;
  }
  return randomDecimalText(r, width);
}

const text = (v: Value): string | null => (v === null ? null : v instanceof Decimal ? v.toFixed() : String(v));

/** Row i of a kernel's result as text, reading words through getValue (decimalOfWords). */
const rowText = (v: Vector, i: number): string | null => text(getValue(v, i));

/** What the decimal.js path answers for one row: its value's text, or the error's message. */
function oracle(fn: () => Value): { value: string | null } | { error: string } {
  try {
    return { value: text(fn()) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

describe('NUMERIC / BIGNUMERIC kernels on words', () => {
  for (const width of [4, 8] as const) {
    const type = typeOf(width);
    for (const op of ['add', 'sub', 'mul', 'div'] as ArithOp[]) {
      it(`${type.kind} ${op} equals decimal.js row by row`, () => {
        const r = rng(width * 10 + op.length + op.charCodeAt(0));
        const boxed = boxedDecimalBinary(type.kind as 'NUMERIC', op);
        const xs: (string | null)[] = [];
        const ys: (string | null)[] = [];
        let fallbacks = 0;
        for (let k = 0; k < 4000; k++) {
          const x = operand(r, width);
          // Divisors and factors: sometimes small whole numbers, short factors (1.2) or zero.
          const q = r();
          const y = q < 0.1 ? String(1 + Math.floor(r() * 20)) : q < 0.15 ? '1.2' : q < 0.18 ? '0' : operand(r, width);
          const xv = wordsVector([x], width);
          const yv = wordsVector([y], width);
          const want = oracle(() => getValue(boxed([vectorFromValues(type, [x && new Decimal(x)]), vectorFromValues(type, [y && new Decimal(y)])], 1, ctx), 0));
          const got = arithWords(op, type, [xv, yv], 1);
          if ('error' in want) {
            expect(got, `${x} ${op} ${y}: ${want.error}`).toBeNull();
            fallbacks++;
            continue;
          }
          // BIGNUMERIC's minimum is the one value a Decimal of it cannot be made back into words for the literal path; never an operand here.
          expect(got, `${x} ${op} ${y}`).not.toBeNull();
          expect(rowText(got!, 0), `${x} ${op} ${y}`).toBe(want.value);
          xs.push(x);
          ys.push(y);
        }
        expect(fallbacks).toBeGreaterThan(0);
        // The rows that answer, in one batch: words out, nothing boxed.
        const before = decimalBoxing.rows;
        const out = arithWords(op, type, [wordsVector(xs, width), wordsVector(ys, width)], xs.length)!;
        expect(decimalBoxing.rows).toBe(before);
        expect(out.decimal?.width).toBe(width);
        const want = boxed([vectorFromValues(type, xs.map((x) => x && new Decimal(x))), vectorFromValues(type, ys.map((y) => y && new Decimal(y)))], xs.length, ctx);
        for (let i = 0; i < xs.length; i++) expect(rowText(out, i)).toBe(text(getValue(want, i)));
      });
    }

    it(`${type.kind} with a literal operand (one Decimal made into words once)`, () => {
      const r = rng(77 + width);
      const xs = Array.from({ length: 500 }, () => operand(r, width)).filter((x) => x === null || new Decimal(x).abs().lt(1e20));
      const lit = vectorFromValues(type, new Array<Value>(xs.length).fill(new Decimal('1.2')));
      const out = arithWords('mul', type, [wordsVector(xs, width), lit], xs.length)!;
      expect(out.decimal).toBeDefined();
      xs.forEach((x, i) => expect(rowText(out, i)).toBe(x === null ? null : checkDecimal(new Decimal(x).times('1.2'), type.kind as 'NUMERIC').toFixed()));
    });

    for (const op of ['neg', 'abs', 'sign'] as UnaryOp[]) {
      it(`${type.kind} ${op}`, () => {
        const r = rng(5 + width + op.length);
        const xs = Array.from({ length: 3000 }, () => operand(r, width));
        const out = unaryWords(op, type, [wordsVector(xs, width)], xs.length)!;
        xs.forEach((x, i) => {
          const d = x === null ? null : new Decimal(x);
          const want = d === null ? null : op === 'neg' ? d.neg() : op === 'abs' ? d.abs() : new Decimal(d.isZero() ? 0 : d.isNeg() ? -1 : 1);
          expect(rowText(out, i), `${op}(${x})`).toBe(want && checkDecimal(want, type.kind as 'NUMERIC').toFixed());
        });
      });
    }

    for (const mode of ['half', 'trunc', 'ceil', 'floor'] as Rounding[]) {
      it(`${type.kind} rounding ${mode} to every digits argument`, () => {
        const r = rng(11 + width + mode.length);
        const dm = mode === 'half' ? Decimal.ROUND_HALF_UP : mode === 'trunc' ? Decimal.ROUND_DOWN : mode === 'ceil' ? Decimal.ROUND_CEIL : Decimal.ROUND_FLOOR;
        const scale = width === 4 ? 9 : 38;
        let fallbacks = 0;
        for (let k = 0; k < 3000; k++) {
          const x = operand(r, width);
          const digits = Math.floor(r() * (scale + 45)) - 40;
          const args = [wordsVector([x], width), vectorFromValues(T.INT64, [BigInt(digits)])];
          const got = roundWords(mode, type, mode === 'ceil' || mode === 'floor' ? args.slice(0, 1) : args, 1);
          const dg = mode === 'ceil' || mode === 'floor' ? 0 : digits;
          if (x === null) {
            expect(got && rowText(got, 0)).toBeNull();
            continue;
          }
          const d = new Decimal(x);
          const f = new Decimal(10).pow(-dg);
          const want = dg >= scale ? d : fitDecimal(d.div(f).toDecimalPlaces(0, dm).times(f), type.kind as 'NUMERIC');
          if (want === undefined) {
            expect(got, `ROUND(${x}, ${dg})`).toBeNull();
            fallbacks++;
          } else expect(got && rowText(got, 0), `${mode}(${x}, ${dg})`).toBe(want.toFixed());
        }
        if (mode !== 'trunc' && mode !== 'floor') expect(fallbacks).toBeGreaterThan(0);
      });
    }

    for (const to of [T.STRING, T.FLOAT64, T.INT64, width === 4 ? T.BIGNUMERIC : T.NUMERIC]) {
      it(`CAST(${type.kind} AS ${to.kind}) equals the value-by-value cast`, () => {
        const r = rng(31 + width + to.kind.length);
        const xs = Array.from({ length: 3000 }, () => operand(r, width));
        let fallbacks = 0;
        const ok: (string | null)[] = [];
        for (const x of xs) {
          const want = oracle(() => (x === null ? null : castValue(new Decimal(x), type, to, { safe: false }, ctx)));
          const got = castWords(wordsVector([x], width), to, 1);
          if ('error' in want) {
            expect(got, `CAST(${x}): ${want.error}`).toBeNull();
            fallbacks++;
            continue;
          }
          const w = x === null ? null : castValue(new Decimal(x), type, to, { safe: false }, ctx);
          expect(got, `CAST(${x})`).not.toBeNull();
          expect(getValue(got!, 0), `CAST(${x} AS ${to.kind})`).toEqual(w);
          ok.push(x);
        }
        if (to.kind === 'INT64' || (to.kind === 'NUMERIC' && width === 8)) expect(fallbacks).toBeGreaterThan(0);
        const before = decimalBoxing.rows;
        const out = castWords(wordsVector(ok, width), to, ok.length)!;
        expect(decimalBoxing.rows).toBe(before);
        ok.forEach((x, i) => expect(getValue(out, i)).toEqual(x === null ? null : castValue(new Decimal(x), type, to, { safe: false }, ctx)));
      });
    }

    it(`CAST(STRING AS ${type.kind}) equals the value-by-value cast; texts it does not parse give the batch up`, () => {
      const r = rng(13 + width);
      const texts: (string | null)[] = [];
      for (let k = 0; k < 3000; k++) {
        const x = operand(r, width);
        const p = r();
        // Plain texts mostly; also forms only the value-by-value cast reads (or rejects).
        texts.push(x === null ? null : p < 0.8 ? x : p < 0.85 ? ` ${x}` : p < 0.9 ? `${x}e1` : p < 0.93 ? `+${x}` : p < 0.96 ? x.replace(/^(-?)0\./, '$1.') : `${x}5`.replace(/^(-?\d+)$/, '$1.0000000000000000000000000000000000000001'));
      }
      let given = 0;
      for (const t of texts) {
        const want = oracle(() => (t === null ? null : castValue(t, T.STRING, type, { safe: false }, ctx)));
        const got = castWords(vectorFromValues(T.STRING, [t]), type, 1);
        if (got === null) {
          given++;
          continue;
        }
        expect(got.decimal?.width, t ?? 'NULL').toBe(width);
        expect(want, `CAST('${t}')`).toEqual({ value: text(getValue(got, 0)) });
      }
      expect(given).toBeGreaterThan(0);
      expect(given).toBeLessThan(texts.length / 2);
    });

    it(`CAST(INT64 AS ${type.kind}) is words`, () => {
      const r = rng(3 + width);
      const xs: (bigint | null)[] = [0n, 1n, -1n, 9223372036854775807n, -9223372036854775808n, 9007199n, 9007200n, null];
      for (let k = 0; k < 2000; k++) xs.push(BigInt(Math.floor((r() - 0.5) * 2 ** Math.floor(r() * 53))));
      for (const v of [vectorFromValues(T.INT64, xs), vectorFromValues(T.INT64, xs.slice(5))]) {
        const out = castWords(v, type, v.length)!;
        expect(out.decimal?.width).toBe(width);
        for (let i = 0; i < v.length; i++) {
          const x = getValue(v, i);
          expect(text(getValue(out, i))).toBe(x === null ? null : text(castValue(x, T.INT64, type, { safe: false }, ctx)));
        }
      }
    });
  }
});
