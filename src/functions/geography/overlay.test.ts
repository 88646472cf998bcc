// Invariants of the polygon overlay (union / intersection / difference) and the
// predicates on seeded random inputs: inclusion-exclusion of areas, and
// agreement between ST_INTERSECTS and a zero ST_DISTANCE.
import { describe, expect, it } from 'vitest';
import { parseWkt, toWkt } from './io.js';
import { areaMeters, contains, covers, distanceMeters, intersects } from './measure.js';
import type { Geo } from './model.js';
import { difference, intersection, unionAll } from './ops.js';

function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

function checkPair(a: Geo, b: Geo): void {
  const [A, B, U, X, D] = [a, b, unionAll([a, b]), intersection(a, b), difference(a, b)].map(areaMeters) as number[];
  const tol = 1e-6 * (A! + B!);
  const where = `${toWkt(a)} / ${toWkt(b)}`;
  expect(Math.abs(A! + B! - U! - X!), `union + intersection = a + b for ${where}`).toBeLessThan(tol);
  expect(Math.abs(A! - D! - X!), `difference + intersection = a for ${where}`).toBeLessThan(tol);
  expect(intersects(a, b), `intersects iff distance 0 for ${where}`).toBe(distanceMeters(a, b) === 0);
  if (contains(a, b)) expect(covers(a, b), `contains implies covers for ${where}`).toBe(true);
}

describe('polygon overlay invariants', () => {
  it('holds for random overlapping quadrilaterals anywhere on the sphere', () => {
    const r = rng(42);
    const quad = (cx: number, cy: number, s: number) => {
      const pts = [0, 1, 2, 3].map((k) => {
        const ang = (k * Math.PI) / 2 + r() * 0.8;
        const rad = s * (0.5 + r());
        return `${(cx + rad * Math.cos(ang)).toFixed(4)} ${(cy + rad * Math.sin(ang)).toFixed(4)}`;
      });
      return parseWkt(`POLYGON((${[...pts, pts[0]].join(', ')}))`);
    };
    for (let i = 0; i < 150; i++) {
      const cx = r() * 300 - 150;
      const cy = r() * 140 - 70;
      checkPair(quad(cx, cy, 1 + r() * 5), quad(cx + r() * 4 - 2, cy + r() * 4 - 2, 1 + r() * 5));
    }
  });

  it('a union of many overlapping polygons does not depend on their order, and covers each', () => {
    // 60 random quadrilaterals in a small region: merged in a balanced tree (unionPolys), in
    // two orders; the edge-box sweep must find every crossing either way.
    const r = rng(11);
    const quads = Array.from({ length: 60 }, () => {
      const cx = r() * 4;
      const cy = r() * 4;
      const pts = [0, 1, 2, 3].map((k) => `${(cx + Math.cos(k * 1.6 + r()) * (0.4 + r())).toFixed(4)} ${(cy + Math.sin(k * 1.6 + r()) * (0.4 + r())).toFixed(4)}`);
      return parseWkt(`POLYGON((${[...pts, pts[0]].join(', ')}))`);
    });
    const u1 = unionAll(quads);
    const u2 = unionAll([...quads].reverse());
    expect(Math.abs(areaMeters(u1)! - areaMeters(u2)!)).toBeLessThan(1e-6 * areaMeters(u1)!);
    for (const q of quads) expect(covers(u1, q)).toBe(true);
    expect(areaMeters(u1)!).toBeLessThanOrEqual(quads.reduce((n, q) => n + areaMeters(q)!, 0));
  });

  it('holds for grid rectangles sharing edges and vertices, and around a hole', () => {
    const r = rng(7);
    const ri = (k: number) => Math.floor(r() * k);
    const rect = (x: number, y: number, w: number, h: number) => parseWkt(`POLYGON((${x} ${y}, ${x + w} ${y}, ${x + w} ${y + h}, ${x} ${y + h}, ${x} ${y}))`);
    const holed = parseWkt('POLYGON((0 0, 6 0, 6 6, 0 6, 0 0), (2 2, 4 2, 4 4, 2 4, 2 2))');
    for (let i = 0; i < 150; i++) {
      checkPair(rect(ri(4), ri(4), 1 + ri(3), 1 + ri(3)), rect(ri(4), ri(4), 1 + ri(3), 1 + ri(3)));
      checkPair(holed, rect(ri(6), ri(6), 1 + ri(4), 1 + ri(4)));
    }
  });
});
