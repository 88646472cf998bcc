// Spherical edge primitives on unit vectors. s2js keeps its edge predicates
// (crossing sign, distance to an edge, edge centroid) internal, so these are
// written here from their definitions.
import { r3, s2 } from 's2js';

export type Vec = r3.Vector;


export const angleBetween = (a: Vec, b: Vec): number => Math.atan2(a.cross(b).norm(), a.dot(b));
/** Orientation of the triangle (a, b, c): +1 counter-clockwise, -1 clockwise, 0 collinear (within rounding). */
export function orient(a: Vec, b: Vec, c: Vec): number {
  const det = a.cross(b).dot(c);
  return Math.abs(det) < 1e-15 ? 0 : det > 0 ? 1 : -1;
}
export const CROSS = 1;
export const TOUCH = 0;
export const APART = -1;
/**
 * Whether edges ab and cd cross at a point interior to both (CROSS), share a
 * vertex or touch collinearly (TOUCH, callers decide with on-edge tests), or not.
 */
export function crossing(a: s2.Point, b: s2.Point, c: s2.Point, d: s2.Point): number {
  if (a.equals(c) || a.equals(d) || b.equals(c) || b.equals(d)) return TOUCH;
  if (a.equals(b) || c.equals(d)) return APART;
  const [av, bv, cv, dv] = [a.vector, b.vector, c.vector, d.vector];
  const acb = -orient(av, bv, cv);
  const bda = orient(av, bv, dv);
  if (acb === 0 || bda === 0) return TOUCH;
  if (acb !== bda) return APART;
  const cbd = -orient(cv, dv, bv);
  if (cbd === 0) return TOUCH;
  if (cbd !== acb) return APART;
  const dac = orient(cv, dv, av);
  if (dac === 0) return TOUCH;
  return dac === acb ? CROSS : APART;
}

/** Angular distance from x to the geodesic segment ab. */
export function segmentDistance(x: s2.Point, a: s2.Point, b: s2.Point): number {
  const [xv, av, bv] = [x.vector, a.vector, b.vector];
  const n = av.cross(bv);
  if (n.norm() > 0) {
    // x projects inside the arc when it is on the inner side of both end planes.
    if (n.cross(av).dot(xv) > 0 && bv.cross(n).dot(xv) > 0) {
      const nn = n.normalize();
      return Math.abs(Math.asin(Math.max(-1, Math.min(1, xv.dot(nn)))));
    }
  }
  return Math.min(angleBetween(xv, av), angleBetween(xv, bv));
}

/** Integral of the position vector along the arc ab: direction of its midpoint, length 2 sin(theta/2). */
export const arcCentroid = (a: Vec, b: Vec): Vec => {
  const s = a.add(b);
  return s.norm() === 0 ? s : s.normalize().mul(a.sub(b).norm());
};


/** x lies on the geodesic segment ab (within rounding). */
export const onSegment = (x: s2.Point, a: s2.Point, b: s2.Point): boolean => segmentDistance(x, a, b) < ON_EDGE;

/** Points closer than this (radians, ~0.06 µm on the Earth) to an edge lie on it: exact in S2, rounding noise here. */
export const ON_EDGE = 1e-14;

/**
 * How far the arc between two unit vectors `chord` apart can stray from
 * their chord (1 - cos(angle / 2)), plus a margin for rounding: a box around
 * the endpoints grown by it on every axis holds the whole arc.
 */
export function arcBulge(chord: number): number {
  return 1 - Math.cos(Math.asin(Math.min(1, chord / 2))) + 1e-12;
}

/** The point where two crossing segments ab and cd meet. */
export function segmentIntersection(a: s2.Point, b: s2.Point, c: s2.Point, d: s2.Point): s2.Point {
  let x = a.vector.cross(b.vector).cross(c.vector.cross(d.vector)).normalize();
  if (x.dot(a.vector.add(b.vector)) < 0) x = x.mul(-1);
  return s2.Point.fromVector(x);
}

/** The point at fraction t of the geodesic a-b. */
export function geodesicAt(a: s2.Point, b: s2.Point, t: number): s2.Point {
  const [av, bv] = [a.vector, b.vector];
  const angle = Math.atan2(av.cross(bv).norm(), av.dot(bv));
  const dir = av.cross(bv).cross(av);
  if (dir.norm() === 0) return a;
  const d = dir.normalize();
  return s2.Point.fromVector(av.mul(Math.cos(t * angle)).add(d.mul(Math.sin(t * angle))).normalize());
}

interface Boxed {
  e: readonly [s2.Point, s2.Point];
  set: 0 | 1;
  idx: number;
  lo: [number, number, number];
  hi: [number, number, number];
}

const boxCache = new WeakMap<object, [[number, number, number], [number, number, number]]>();
/** Axis-aligned xyz box of a geodesic arc: its endpoints' box grown by the sagitta 1 - cos(theta / 2) (cached per edge). */
function box(e: readonly [s2.Point, s2.Point], set: 0 | 1, idx: number): Boxed {
  let lh = boxCache.get(e);
  if (!lh) {
    const [a, b] = [e[0].vector, e[1].vector];
    const s = 1 - Math.cos(angleBetween(a, b) / 2) + 1e-15;
    lh = [
      [Math.min(a.x, b.x) - s, Math.min(a.y, b.y) - s, Math.min(a.z, b.z) - s],
      [Math.max(a.x, b.x) + s, Math.max(a.y, b.y) + s, Math.max(a.z, b.z) + s],
    ];
    boxCache.set(e, lh);
  }
  return { e, set, idx, lo: lh[0], hi: lh[1] };
}

/**
 * Finds a pair of edges that cross at a point interior to both (sweep and
 * prune on xyz boxes, so large rings are not compared pairwise). With `b`, only
 * pairs with one edge from each list count; without, pairs within `a` that
 * `skip` does not exclude (adjacent edges of a ring).
 */
export function findCrossing(
  a: readonly (readonly [s2.Point, s2.Point])[],
  b: readonly (readonly [s2.Point, s2.Point])[] | null,
  skip: (i: number, j: number) => boolean = () => false,
): [number, number] | null {
  const all = [...a.map((e, i) => box(e, 0, i)), ...(b ?? []).map((e, i) => box(e, 1, i))];
  all.sort((p, q) => p.lo[0] - q.lo[0]);
  for (let i = 0; i < all.length; i++) {
    const p = all[i]!;
    for (let j = i + 1; j < all.length; j++) {
      const q = all[j]!;
      if (q.lo[0] > p.hi[0]) break;
      if (b ? p.set === q.set : skip(Math.min(p.idx, q.idx), Math.max(p.idx, q.idx))) continue;
      if (q.lo[1] > p.hi[1] || p.lo[1] > q.hi[1] || q.lo[2] > p.hi[2] || p.lo[2] > q.hi[2]) continue;
      if (crossing(p.e[0], p.e[1], q.e[0], q.e[1]) !== CROSS) continue;
      if (!b) return [Math.min(p.idx, q.idx), Math.max(p.idx, q.idx)];
      return p.set === 0 ? [p.idx, q.idx] : [q.idx, p.idx];
    }
  }
  return null;
}
