// encodeRows shares one scratch buffer between calls (src/types/wire.ts):
// consecutive pages of any size, and a page after a failed one, come out whole.
import { describe, expect, it } from 'vitest';
import { T } from '../../src/types/types.js';
import type { Value } from '../../src/types/values.js';
import { vectorFromValues, type Batch } from '../../src/types/vector.js';
import { encodeCell, encodeRows, encodeRowsPage, type WireOptions } from '../../src/types/wire.js';

const opts = { timestampFormat: 'RFC3339' as const, stringScalars: true };

function strings(n: number, prefix: string): Batch {
  return { length: n, columns: [vectorFromValues(T.STRING, Array.from({ length: n }, (_, i) => `${prefix}${i}`))] };
}

const expected = (n: number, prefix: string): string => JSON.stringify(Array.from({ length: n }, (_, i) => ({ f: [{ v: `${prefix}${i}` }] })));

describe('encodeRows pages', () => {
  it('encodes small, large (past the scratch buffer) and small pages in turn', () => {
    expect(encodeRows([strings(3, 'a')], 0, 3, opts)).toBe(expected(3, 'a'));
    expect(encodeRows([strings(20_000, 'long-value-')], 0, 20_000, opts)).toBe(expected(20_000, 'long-value-'));
    expect(encodeRows([strings(2, 'b')], 0, 2, opts)).toBe(expected(2, 'b'));
    expect(encodeRows([strings(1, 'é')], 0, 1, opts)).toBe(expected(1, 'é'));
  });

  it('starts clean after a page whose encoding failed', () => {
    // A TIMESTAMP vector holding a string: the RFC 3339 encoder throws mid-page.
    const bad: Batch = { length: 2, columns: [{ type: T.TIMESTAMP, length: 2, data: [1n, 'not a timestamp'] as unknown as BigInt64Array, nulls: null }] };
    expect(() => encodeRows([strings(5, 'x'), bad], 0, 7, opts)).toThrow();
    expect(encodeRows([strings(2, 'c')], 0, 2, opts)).toBe(expected(2, 'c'));
  });
});

// The page writer writes integers, dates, times, timestamps, booleans and
// plain strings as bytes of its own: every cell must be what the value
// encoder (encodeCell) gives for the same value, in every wire option.
describe('page bytes match the value encoder', () => {
  const pick = <V>(i: number, xs: readonly V[]): V => xs[i % xs.length]!;
  const MAX = 2 ** 53;
  const n = 1000; // pages past ROW_BYTES_MIN, so that rowsAsBytes gives bytes
  const micros = [0, 1, -1, 999_999, 1_000_000, 1_704_067_200_000_000, 1_704_067_200_123_456, -62_135_596_800_000_000, 253_402_300_799_999_999, -1_500_000];
  const values: Record<string, (i: number) => Value> = {
    INT64: (i) => BigInt(pick(i, [0, 1, -1, 9, 10, -10, 99, 100, 123456789, MAX - 1, -(MAX - 1), MAX, -MAX]) as number),
    FLOAT64: (i) => pick(i, [0, -0, 1, 1.5, -2.25, 1e20, 2.5e-5, 1 / 3, 1234567.5, 12345678, NaN, Infinity, -Infinity, 5e-324, Number.MAX_VALUE, 0.001]),
    BOOL: (i) => i % 3 === 0,
    STRING: (i) => pick(i, ['', 'plain', 'with "quote"', 'back\\slash', 'tab\there', 'line\nbreak', 'é', '日本', '🎉', '\u2028', '\u0000', '\ud800 lone', '~\u007f']),
    DATE: (i) => pick(i, [0, -1, 1, 19723, -719162, 2932896, 10957, 59, 60, -25567]),
    TIME: (i) => pick(i, [0, 1, 999_999, 1_000_000, 86_399_999_999, 45_296_000_001, 3_600_000_000]),
    DATETIME: (i) => BigInt(pick(i, micros)),
    TIMESTAMP: (i) => BigInt(pick(i, micros)),
  };
  const opts: WireOptions[] = [
    { timestampFormat: 'RFC3339' },
    { timestampFormat: 'RFC3339', stringScalars: true },
    { timestampFormat: 'FLOAT_SECONDS', stringScalars: true },
    { timestampFormat: 'INT64_MICROS', stringScalars: true },
  ];
  for (const [name, gen] of Object.entries(values)) {
    const type = T[name as keyof typeof T];
    for (const withNulls of [false, true]) {
      const vals = Array.from({ length: n }, (_, i) => (withNulls && i % 5 === 2 ? null : gen(i)));
      it(`${name}${withNulls ? ' with NULLs' : ''}`, () => {
        const vec = vectorFromValues(type, vals);
        // INT64-like columns in both layouts: doubles when exact, BigInt64Array always here.
        const vecs = [vec];
        if (name === 'INT64' || name === 'TIMESTAMP' || name === 'DATETIME') {
          const big = new BigInt64Array(n);
          vals.forEach((v, i) => (big[i] = v === null ? 0n : (v as bigint)));
          vecs.push({ type, length: n, data: big, nulls: vec.nulls });
        }
        for (const o of opts) {
          const expected = vals.map((v) => `{"f":[${encodeCell(type, v, o)}]}`);
          for (const v of vecs) {
            const batches = [{ length: n, columns: [v] }];
            // Row by row, so that a mismatch names its value.
            const rows = (text: string): string[] => (JSON.parse(text) as unknown[]).map((r) => JSON.stringify(r));
            const asJson = expected.map((e) => JSON.stringify(JSON.parse(e)));
            const text = encodeRows(batches, 0, n, o);
            expect(rows(text)).toEqual(asJson);
            expect(text).toBe(`[${expected.join(',')}]`);
            expect(encodeRowsPage(batches, 0, n, { ...o, rowsAsBytes: true }).rowsUtf8?.toString('utf8')).toBe(text);
          }
        }
      });
    }
  }
});
