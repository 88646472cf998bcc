// insertId de-duplication memory: an id is remembered for at least the window
// (and forgotten within two), whatever the spacing of later inserts.
import { describe, expect, it } from 'vitest';
import { DEDUP_WINDOW_MS, IdGenerations } from '../../src/engine/rows.js';

const W = DEDUP_WINDOW_MS;

describe('IdGenerations', () => {
  it('keeps an id for a whole window across rotations', () => {
    const g = new IdGenerations(0);
    g.rotate(W - 1);
    g.add(['late']); // added just before the first rotation
    expect(g.rotate(W)).toBe(false);
    expect(g.has('late')).toBe(true); // rotated into the previous generation
    g.rotate(2 * W - 2);
    expect(g.has('late')).toBe(true); // still within its window
    expect(g.rotate(2 * W)).toBe(true);
    expect(g.has('late')).toBe(false);
  });

  it('forgets everything after two idle windows', () => {
    const g = new IdGenerations(0);
    g.rotate(10);
    g.add(['a', 'b']);
    expect(g.has('a')).toBe(true);
    expect(g.rotate(10 + W - 11)).toBe(false);
    expect(g.has('b')).toBe(true);
    expect(g.rotate(2 * W + 1)).toBe(true);
    expect(g.has('a')).toBe(false);
  });
});
