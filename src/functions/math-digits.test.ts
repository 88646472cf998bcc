// LN / LOG10 / LOG / EXP / SQRT / fractional POW of NUMERIC and BIGNUMERIC run at the digits their result can
// hold plus guard digits (math.ts atResultDigits). Oracle: the same function at decimal.js's global 200 digits,
// both fitted to the type (scale 9 / 38, half away from zero); every random operand must give the same value.
import { describe, expect, it } from 'vitest';
import { Decimal } from '../types/values.js';
import { fitDecimal, type DecKind } from './numeric.js';
import { atResultDigits } from './math.js';

let seed = 7;
const rand = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const digits = (n: number): string => Array.from({ length: n }, () => Math.floor(rand() * 10)).join('') || '0';

/** A positive value with up to `int` integer and `frac` fraction digits, spread over magnitudes. */
function positive(int: number, frac: number): Decimal {
  const d = new Decimal(`${digits(Math.floor(rand() * (int + 1)))}.${digits(1 + Math.floor(rand() * frac))}`);
  return d.isZero() ? new Decimal(`0.${'0'.repeat(frac - 1)}1`) : d;
}

const KINDS: readonly [DecKind, number, number][] = [['NUMERIC', 29, 9], ['BIGNUMERIC', 38, 38]];
const same = (kind: DecKind, fast: Decimal, slow: Decimal): [string | undefined, string | undefined] => [fitDecimal(fast, kind)?.toFixed(), fitDecimal(slow, kind)?.toFixed()];

describe('NUMERIC transcendental functions at the result digits', () => {
  for (const [kind, int, frac] of KINDS) {
    it(`${kind}: LN, LOG10, LOG, SQRT equal the 200-digit results`, () => {
      for (let i = 0; i < 400; i++) {
        const x = positive(int, frac);
        const base = positive(3, 4).plus(1.5);
        const [a1, b1] = same(kind, atResultDigits(kind, x, (d) => d.ln()), x.ln());
        expect(a1, `LN(${x.toFixed()})`).toBe(b1);
        const [a2, b2] = same(kind, atResultDigits(kind, x, (d) => d.log(10)), x.log(10));
        expect(a2, `LOG10(${x.toFixed()})`).toBe(b2);
        const [a3, b3] = same(kind, atResultDigits(kind, x, (d) => d.log(base)), x.log(base));
        expect(a3, `LOG(${x.toFixed()}, ${base.toFixed()})`).toBe(b3);
        const [a4, b4] = same(kind, atResultDigits(kind, x, (d) => d.sqrt()), x.sqrt());
        expect(a4, `SQRT(${x.toFixed()})`).toBe(b4);
      }
    });
    it(`${kind}: EXP and fractional POW equal the 200-digit results, overflow included`, () => {
      for (let i = 0; i < 400; i++) {
        const e = new Decimal(`${rand() < 0.5 ? '-' : ''}${Math.floor(rand() * 95)}.${digits(9)}`);
        const [a1, b1] = same(kind, atResultDigits(kind, e, (d) => d.exp()), e.exp());
        expect(a1, `EXP(${e.toFixed()})`).toBe(b1);
        const x = positive(int, frac);
        const y = new Decimal(`${rand() < 0.5 ? '-' : ''}${Math.floor(rand() * 4)}.${digits(1 + Math.floor(rand() * 9))}`);
        const [a2, b2] = same(kind, atResultDigits(kind, x, (d) => d.pow(y)), x.pow(y));
        expect(a2, `POW(${x.toFixed()}, ${y.toFixed()})`).toBe(b2);
      }
    });
  }
  it('exact results stay exact: perfect squares, powers of the base, LN(1), EXP(0)', () => {
    for (const [kind] of KINDS) {
      expect(atResultDigits(kind, new Decimal('152399025'), (d) => d.sqrt()).toFixed()).toBe('12345');
      expect(fitDecimal(atResultDigits(kind, new Decimal('1000000'), (d) => d.log(10)), kind)!.toFixed()).toBe('6');
      expect(fitDecimal(atResultDigits(kind, new Decimal('1024'), (d) => d.log(2)), kind)!.toFixed()).toBe('10');
      expect(atResultDigits(kind, new Decimal(1), (d) => d.ln()).toFixed()).toBe('0');
      expect(atResultDigits(kind, new Decimal(0), (d) => d.exp()).toFixed()).toBe('1');
      expect(fitDecimal(atResultDigits(kind, new Decimal(4), (d) => d.pow(new Decimal('0.5'))), kind)!.toFixed()).toBe('2');
    }
  });
});
