// Typed-array fast paths of scalar kernels (src/functions) must give exactly
// what the general path they skip gives, value by value over edge values:
// Object.is, so +0 and -0 are told apart, and NaN equals NaN.
import { describe, expect, it } from 'vitest';
import '../../src/functions/index.js';
import { roundDigitsFast, roundDouble, truncDouble } from '../../src/functions/math.js';

/** Doubles near every kind of boundary: ties in decimal, exact binary fractions, huge, tiny, signed zeros, non-finite. */
function edgeDoubles(): number[] {
  const xs = [0, -0, NaN, Infinity, -Infinity, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 52, 2 ** 53, 2 ** 52 - 0.5, 4503599627370495.5, 1e15 + 0.3, 1e21, 1e300];
  for (const t of ['0.5', '1.5', '2.5', '2.55', '2.675', '1.005', '0.125', '0.375', '1.0000000000000002', '0.285', '1.45', '8.345', '123.4565', '0.045', '5e-23', '4.5e-22', '5.5e-22', '0.1', '0.7', '999999.995', '12345678.125'])
    xs.push(Number(t));
  // near decimal ties at several digit counts, one ulp either side
  for (let d = 1; d <= 22; d++) {
    for (const m of [1, 5, 15, 25, 125, 12345, 99995]) {
      const t = (m + 0.5) / 10 ** d;
      xs.push(t, nextUp(t), nextDown(t));
    }
  }
  // a pseudo-random spread of magnitudes
  let seed = 12345;
  for (let i = 0; i < 2000; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const m = seed / 2147483648;
    const e = (i % 40) - 20;
    xs.push(m * 10 ** e, Math.round(m * 1e6) / 1e3, (Math.round(m * 2000) + 0.5) / 1000);
  }
  return [...xs, ...xs.map((x) => -x)];
}

function nextUp(x: number): number {
  const b = new Float64Array([x]);
  const u = new BigInt64Array(b.buffer);
  u[0] = u[0]! + (x >= 0 ? 1n : -1n);
  return b[0]!;
}
function nextDown(x: number): number {
  const b = new Float64Array([x]);
  const u = new BigInt64Array(b.buffer);
  u[0] = u[0]! + (x > 0 ? -1n : 1n);
  return b[0]!;
}

describe('ROUND / TRUNC (FLOAT64, digits) fast path', () => {
  const xs = edgeDoubles();
  for (const trunc of [false, true]) {
    it(`${trunc ? 'TRUNC' : 'ROUND'}: equals the decimal.js path for every edge value and digit count`, () => {
      const general = trunc ? truncDouble : roundDouble;
      const bad: string[] = [];
      for (const d of [-400, -3, -1, 0, 1, 2, 3, 5, 9, 15, 16, 17, 22, 23, 30, 400]) {
        for (const x of xs) {
          let want: number | string;
          let got: number | string;
          try {
            want = general(x, d);
          } catch (e) {
            want = String(e);
          }
          try {
            got = roundDigitsFast(x, d, trunc);
          } catch (e) {
            got = String(e);
          }
          if (!Object.is(got, want) && bad.length < 10) bad.push(`${x} ${d}: ${String(got)} vs ${String(want)}`);
        }
      }
      expect(bad).toEqual([]);
    });
  }
});
