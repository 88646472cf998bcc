// encodeRows shares one scratch buffer between calls (src/types/wire.ts):
// consecutive pages of any size, and a page after a failed one, come out whole.
import { describe, expect, it } from 'vitest';
import { T } from '../../src/types/types.js';
import { vectorFromValues, type Batch } from '../../src/types/vector.js';
import { encodeRows } from '../../src/types/wire.js';

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
