// CAST(FLOAT64 AS NUMERIC / BIGNUMERIC) on the words (decimal-kernels.ts
// castWords) against the value-by-value cast (the double's exact value,
// exactDecimalFromDouble, rounded half away from zero at the scale by
// fitDecimal): random doubles of every magnitude, exact half-way points
// (odd multiples of 2^-10 .. 2^-60 land on a half at 9 digits or beyond),
// integers past 2^53, subnormals, -0, out-of-range and non-finite values
// (SAFE_CAST: NULL; CAST: the batch is left to the value-by-value cast).
import { describe, expect, it } from 'vitest';
import { T } from '../types/types.js';
import { textOfWords } from '../types/decimal-words.js';
import { exactDecimalFromDouble } from './conversion.js';
import { castWords } from './decimal-kernels.js';
import { fitDecimal } from './numeric.js';

let seed = 19;
const rand = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);

function randomDouble(): number {
  const pick = rand();
  const sign = rand() < 0.5 ? -1 : 1;
  if (pick < 0.25) return sign * (Math.floor(rand() * 2 ** 30) * 2 + 1) / 2 ** (10 + Math.floor(rand() * 50));
  if (pick < 0.45) return sign * Math.round(rand() * 1e9) / 100;
  if (pick < 0.6) return sign * rand() * 10 ** (Math.floor(rand() * 60) - 30);
  if (pick < 0.7) return sign * Math.floor(rand() * 2 ** 53) * 2 ** Math.floor(rand() * 80);
  if (pick < 0.8) return sign * rand() * 5e-10;
  const F = new Float64Array(1);
  const W = new Uint32Array(F.buffer);
  W[0] = Math.floor(rand() * 2 ** 32);
  W[1] = Math.floor(rand() * 2 ** 32);
  return F[0]!;
}

describe('CAST(FLOAT64 AS NUMERIC / BIGNUMERIC) on the words', () => {
  for (const to of [T.NUMERIC, T.BIGNUMERIC]) {
    it(`${to.kind}: the value-by-value cast's value for 20,000 random doubles`, () => {
      const n = 20_000;
      const data = new Float64Array(n);
      for (let i = 0; i < n; i++) data[i] = randomDouble();
      data.set([0, -0, 5e-324, -5e-324, 1 / 1024, -1 / 1024, 3 / 2048, 0.0000000005, 1e28, -1e28, 9.99999999999999e28, 1e29, 5.7e38, 5.8e38, 2 ** 53 + 2, NaN, Infinity, -Infinity]);
      const nulls = new Uint8Array(n);
      nulls[5000] = 1;
      const v = { type: T.FLOAT64, length: n, data, nulls };
      const got = castWords(v, to, n, true);
      expect(got?.decimal).toBeDefined();
      const width = to.kind === 'NUMERIC' ? 4 : 8;
      let inRange = 0;
      for (let i = 0; i < n; i++) {
        const want = i === 5000 || !Number.isFinite(data[i]!) ? undefined : fitDecimal(exactDecimalFromDouble(data[i]!), to.kind as 'NUMERIC')?.toFixed();
        const isNull = got!.nulls !== null && got!.nulls[i] === 1;
        if (want === undefined) expect(isNull, `row ${i}: ${data[i]}`).toBe(true);
        else {
          inRange++;
          expect(isNull, `row ${i}: ${data[i]}`).toBe(false);
          expect(textOfWords(got!.decimal!.words, i, width), `${data[i]}`).toBe(want === '-0' ? '0' : want);
        }
      }
      expect(inRange).toBeGreaterThan(n / 2);
      // Without SAFE an out-of-range row leaves the batch to the value-by-value cast (its error).
      expect(castWords(v, to, n, false)).toBeNull();
      expect(castWords({ ...v, data: data.subarray(0, 5), length: 5 }, to, 5, false)?.decimal).toBeDefined();
    });
  }
});
