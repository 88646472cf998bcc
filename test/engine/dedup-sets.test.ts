// insertId de-duplication in open-addressing id sets over an arena of code
// units: exact answers across their growth (from 512 ids, doubling), for ids
// of any characters and length.
import { describe, expect, it } from 'vitest';
import { IdGenerations } from '../../src/engine/rows.js';

describe('IdGenerations id sets', () => {
  it('finds every stored id and no other, through the sets growing', () => {
    const g = new IdGenerations(0);
    const stored: string[] = [];
    for (let batch = 0; batch < 200; batch++) {
      const ids = Array.from({ length: 500 }, (_, i) => `r${batch * 500 + i}`);
      g.add(ids);
      stored.push(...ids);
      // Ids from this and earlier batches, and ones never stored.
      expect(g.has(ids[0]!)).toBe(true);
      expect(g.has(stored[Math.floor(stored.length / 3)]!)).toBe(true);
      expect(g.has(`r${stored.length + batch}`)).toBe(false);
    }
    expect(stored.every((id) => g.has(id))).toBe(true);
    let found = 0;
    for (let i = 0; i < 50_000; i++) if (g.has(`x${i}`) || g.has(`r${100_000 + i}`)) found++;
    expect(found).toBe(0);
  });

  it('keeps ids of any characters, in both generations', () => {
    const g = new IdGenerations(0);
    const long = 'x'.repeat(70_000); // its length takes both arena units
    const ids = ['', 'é', '😀', '\ud800', 'a\u0000b', '日本語', 'A', 'a', long, long.slice(1) + 'y'];
    g.add(ids);
    g.rotate(5 * 60 * 1000); // into the previous generation
    g.add(['new']);
    for (const id of [...ids, 'new']) expect(g.has(id)).toBe(true);
    for (const id of ['b', 'é ', '\ud801', 'A ', 'aa', long + 'x', long.slice(1), 'x'.repeat(70_000 - 65_536)]) expect(g.has(id)).toBe(false);
  });
});
