// ST_CLUSTERDBSCAN's grid over points (pointCandidates) must find exactly the
// pairs a comparison of every pair finds: checked against the definition
// (every pair measured) on seeded clumps of points, at distances from 0 to
// kilometres, with a line among them (no grid) and NULLs.
import { describe, expect, it } from 'vitest';
import { clusterDbscan } from '../geography.js';
import type { Value } from '../../types/values.js';
import { parseWkt, toWkt } from './io.js';
import { distanceMeters } from './measure.js';
import { geoValue, type Geo } from './model.js';

function rng(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

/** The definition: every pair measured; clusters numbered by first core value, borders join the first cluster to reach them. */
function reference(gs: readonly (Geo | null)[], eps: number, minPts: number): (bigint | null)[] {
  const near = gs.map((a) => gs.flatMap((b, j) => (a && b && (distanceMeters(a, b) ?? Infinity) <= eps ? [j] : [])));
  const core = near.map((ns) => ns.length > 0 && ns.length >= minPts);
  const out: (bigint | null)[] = gs.map(() => null);
  let next = 0n;
  for (let i = 0; i < gs.length; i++) {
    if (!core[i] || out[i] !== null) continue;
    const id = next++;
    out[i] = id;
    const queue = [i];
    while (queue.length) {
      for (const j of near[queue.shift()!]!) {
        if (out[j] !== null) continue;
        out[j] = id;
        if (core[j]) queue.push(j);
      }
    }
  }
  return out;
}

describe('ST_CLUSTERDBSCAN', () => {
  it('the point grid finds the same clusters as measuring every pair', () => {
    const r = rng(5);
    const geos: (Geo | null)[] = [];
    for (let c = 0; c < 12; c++) {
      const [lng, lat] = [r() * 340 - 170, r() * 160 - 80];
      for (let k = 0; k < 25; k++) geos.push(parseWkt(`POINT(${(lng + (r() - 0.5) * 0.05).toFixed(6)} ${(lat + (r() - 0.5) * 0.05).toFixed(6)})`));
    }
    geos.push(null, parseWkt('POINT(0 90)'), parseWkt('POINT(0 89.9999)'));
    const values = (gs: readonly (Geo | null)[]): Value[] => gs.map((g) => (g ? geoValue(g, toWkt) : null));
    for (const eps of [0, 30, 300, 1500, 4000, 20_000]) {
      for (const minPts of [1, 3, 6]) {
        expect([eps, minPts, clusterDbscan(values(geos), eps, BigInt(minPts))]).toEqual([eps, minPts, reference(geos, eps, minPts)]);
      }
    }
    // A line among the points: every pair is measured.
    const mixed = [...geos, parseWkt('LINESTRING(0 0, 1 1)')];
    expect(clusterDbscan(values(mixed), 1500, 3n)).toEqual(reference(mixed, 1500, 3));
  });
});
