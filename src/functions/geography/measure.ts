// Measures and predicates on the sphere, with S2 primitives (s2js): geodesic
// edges, exact crossing tests, S2 loop areas and centroids. Predicates use the
// closed model of the service: a polygon covers its boundary, a polyline
// covers its vertices.
import { s2 } from 's2js';
import { angleBetween, arcCentroid, findCrossing, ON_EDGE, segmentDistance } from './sphere.js';
import { fromS2, isEmpty, isFull, loopOf, R, s2p, sameLL, type Geo, type LngLat, type Poly } from './model.js';


type Edge = readonly [s2.Point, s2.Point];
const lineEdgeCache = new WeakMap<readonly LngLat[], Edge[]>();
function lineEdges(l: readonly LngLat[]): Edge[] {
  let es = lineEdgeCache.get(l);
  if (!es) {
    es = l.slice(1).map((v, i) => [s2p(l[i]!), s2p(v)] as const);
    lineEdgeCache.set(l, es);
  }
  return es;
}
const ringEdges = (r: readonly LngLat[]): Edge[] => r.map((v, i) => [s2p(v), s2p(r[(i + 1) % r.length]!)] as const);
const polyEdgeCache = new WeakMap<Poly, Edge[]>();
function polyEdges(p: Poly): Edge[] {
  let es = polyEdgeCache.get(p);
  if (!es) {
    es = p.flatMap(ringEdges);
    polyEdgeCache.set(p, es);
  }
  return es;
}
const allEdges = (g: Geo): Edge[] => [...g.lines.flatMap(lineEdges), ...g.polys.flatMap(polyEdges)];

const distToEdge = (p: s2.Point, e: Edge): number => segmentDistance(p, e[0], e[1]);
/** Per edge: the unit midpoint and the cosine of a cap radius (half length + tolerance) that holds the whole edge. */
const capCache = new WeakMap<Edge, [number, number, number, number]>();
function edgeCap(e: Edge): [number, number, number, number] {
  let c = capCache.get(e);
  if (!c) {
    const m = e[0].vector.add(e[1].vector);
    const n = m.norm();
    const half = angleBetween(e[0].vector, e[1].vector) / 2;
    c = n === 0 ? [0, 0, 0, -2] : [m.x / n, m.y / n, m.z / n, Math.cos(Math.min(Math.PI, half + 1e-9))];
    capCache.set(e, c);
  }
  return c;
}
/** On the edge (within ON_EDGE); points outside the edge's cap are rejected with one dot product. */
function onEdge(p: s2.Point, e: Edge): boolean {
  const c = edgeCap(e);
  if (p.x * c[0] + p.y * c[1] + p.z * c[2] < c[3]) return false;
  return distToEdge(p, e) < ON_EDGE;
}

// ---------------------------------------------------------------- lengths and areas

const edgeLen = (e: Edge): number => angleBetween(e[0].vector, e[1].vector);
export const lengthMeters = (g: Geo): number => g.lines.flatMap(lineEdges).reduce((a, e) => a + edgeLen(e), 0) * R;
export const perimeterMeters = (g: Geo): number => g.polys.flatMap(polyEdges).reduce((a, e) => a + edgeLen(e), 0) * R;

/** Shell area minus holes; a hole ring (clockwise) is a loop around everything but the hole. */
const polyArea = (p: Poly): number => (p.length === 0 ? 4 * Math.PI : 0) + p.reduce((a, r, i) => (i === 0 ? loopOf(r).area() : a - (4 * Math.PI - loopOf(r).area())), 0);
export const areaMeters = (g: Geo): number => g.polys.reduce((a, p) => a + polyArea(p), 0) * R * R;

// ---------------------------------------------------------------- point location

/** Semi-open S2 containment of the polygon interior (every ring contains p on its left). */
const polyContains = (p: Poly, x: s2.Point): boolean => p.every((r) => loopOf(r).containsPoint(x));
const onPolyBoundary = (p: Poly, x: s2.Point): boolean => polyEdges(p).some((e) => onEdge(x, e));

/** Where a point lies relative to a value: 'interior', 'boundary' or 'exterior'. */
function locate(g: Geo, x: s2.Point): 'interior' | 'boundary' | 'exterior' {
  for (const p of g.polys) {
    if (onPolyBoundary(p, x)) return 'boundary';
    if (polyContains(p, x)) return 'interior';
  }
  let boundary = false;
  for (const l of g.lines) {
    const open = !sameLL(l[0]!, l[l.length - 1]!);
    const isEnd = open && (x.equals(s2p(l[0]!)) || x.equals(s2p(l[l.length - 1]!)));
    if (lineEdges(l).some((e) => onEdge(x, e))) {
      if (!isEnd) return 'interior';
      boundary = true;
    }
  }
  if (boundary) return 'boundary';
  if (g.points.some((q) => s2p(q).equals(x))) return 'interior';
  return 'exterior';
}
const covered = (g: Geo, x: s2.Point): boolean => locate(g, x) !== 'exterior';

/**
 * Where the segment ab (part of a ring of another polygon) lies relative to
 * polygon p, judged at its midpoint: inside, outside, or along p's boundary in
 * the same or the opposite direction.
 */
export function locateEdgeMid(p: Poly, a: s2.Point, b: s2.Point): 'interior' | 'exterior' | 'same' | 'opposite' {
  const m = midpoint([a, b]);
  const e = polyEdges(p).find((f) => onEdge(m, f));
  if (e) return b.vector.sub(a.vector).dot(e[1].vector.sub(e[0].vector)) > 0 ? 'same' : 'opposite';
  return polyContains(p, m) ? 'interior' : 'exterior';
}

/** A point 1e-9 rad (~6 mm) to the left of the edge's midpoint: inside the polygon the edge bounds. */
function insideOf(e: Edge): s2.Point {
  const n = e[0].vector.cross(e[1].vector).normalize();
  return s2.Point.fromVector(midpoint(e).vector.add(n.mul(1e-9)).normalize());
}

const midpoint = (e: Edge): s2.Point => s2.Point.fromVector(e[0].vector.add(e[1].vector).normalize());

// ---------------------------------------------------------------- predicates

const edgesCrossProperly = (a: Edge[], b: Edge[]): boolean => a.length > 0 && b.length > 0 && findCrossing(a, b) !== null;

const vertexPoints = (g: Geo): s2.Point[] => [...g.points, ...g.lines.flat(), ...g.polys.flat(2)].map(s2p);

export function intersects(a: Geo, b: Geo): boolean {
  if ((isFull(a) && !isEmpty(b)) || (isFull(b) && !isEmpty(a))) return true;
  if (vertexPoints(a).some((x) => covered(b, x))) return true;
  if (vertexPoints(b).some((x) => covered(a, x))) return true;
  // Otherwise they meet only where edges cross at points interior to both.
  return edgesCrossProperly(allEdges(a), allEdges(b));
}

/** No point of b lies outside a (false when b is empty). */
export function covers(a: Geo, b: Geo): boolean {
  if (isFull(a)) return !isEmpty(b);
  if (isFull(b)) return false;
  const bv = vertexPoints(b);
  if (bv.length === 0 || !bv.every((x) => covered(a, x))) return false;
  const aEdges = a.polys.flatMap(polyEdges);
  // Every edge of b must stay inside a: it may not cross a polygon boundary, and
  // its midpoint must be covered too (an edge may leave and re-enter through vertices).
  const bEdges = [...b.lines.flatMap(lineEdges), ...b.polys.flatMap(polyEdges)];
  if (edgesCrossProperly(bEdges, aEdges)) return false;
  // Vertices of a lying on an edge of b cut it into pieces that must each be
  // covered (a line of a may stop and restart along the edge).
  const aVerts = vertexPoints(a);
  for (const e of bEdges) {
    const cuts = aVerts.filter((x) => !x.equals(e[0]) && !x.equals(e[1]) && onEdge(x, e));
    const along = (x: s2.Point) => angleBetween(e[0].vector, x.vector);
    const stops = [e[0], ...cuts.sort((x, y) => along(x) - along(y)), e[1]];
    for (let i = 1; i < stops.length; i++) if (!covered(a, midpoint([stops[i - 1]!, stops[i]!]))) return false;
  }
  // A hole of a inside a polygon of b leaves part of b uncovered.
  for (const p of a.polys) for (const hole of p.slice(1)) for (const bp of b.polys) if (polyContains(bp, s2p(hole[0]!)) && !onPolyBoundary(bp, s2p(hole[0]!))) return false;
  // With all boundaries touching (a polygon filling a hole of a), only b's
  // interior tells: probe just inside each edge of b (interior on its left).
  for (const e of b.polys.flatMap(polyEdges)) if (!covered(a, insideOf(e))) return false;
  return true;
}

/** b is covered by a and their interiors meet (a point on a's boundary only is not contained). */
export function contains(a: Geo, b: Geo): boolean {
  if (!covers(a, b)) return false;
  if (b.polys.length) return true;
  const probes = [...b.points.map(s2p), ...b.lines.flatMap(lineEdges).flatMap((e) => [e[0], midpoint(e)])];
  return probes.some((x) => locate(a, x) === 'interior');
}

// ---------------------------------------------------------------- distance

/** Minimum geodesic distance in meters; null when either value is empty. */
export function distanceMeters(a: Geo, b: Geo): number | null {
  const d = distanceRad(a, b);
  return d === null ? null : d * R;
}

/**
 * Angle between two points through their chord, as S2's closest-edge queries
 * measure it (S1ChordAngle): the service's distances carry these digits
 * (8219.632821167155 where atan2 gives 8219.632821166997).
 */
const chordDistance = (a: s2.Point, b: s2.Point): number => 2 * Math.asin(0.5 * Math.sqrt(Math.min(4, a.vector.sub(b.vector).norm2())));

/**
 * Distance from x to the geodesic segment ab the way S2's
 * UpdateMinDistance measures it: the squared chord to the nearer vertex, or
 * to the foot of x on the edge's great circle when that foot lies inside the
 * edge, turned into an angle once.
 */
function chordEdgeDistance(x: s2.Point, a: s2.Point, b: s2.Point): number {
  const [xv, av, bv] = [x.vector, a.vector, b.vector];
  const xa2 = xv.sub(av).norm2();
  const xb2 = xv.sub(bv).norm2();
  let d2 = Math.min(xa2, xb2);
  if (Math.max(xa2, xb2) < d2 + av.sub(bv).norm2()) {
    const c = av.cross(bv);
    const c2 = c.norm2();
    if (c2 > 0) {
      const cx = c.cross(xv);
      if (av.sub(xv).dot(cx) < 0 && bv.sub(xv).dot(cx) > 0) {
        const xc = xv.dot(c);
        const qr = 1 - Math.sqrt(cx.norm2() / c2);
        d2 = Math.min(d2, (xc * xc) / c2 + qr * qr);
      }
    }
  }
  return 2 * Math.asin(0.5 * Math.sqrt(Math.min(4, d2)));
}

/** Minimum geodesic distance in radians; null when either value is empty. */
export function distanceRad(a: Geo, b: Geo): number | null {
  const av = vertexPoints(a);
  const bv = vertexPoints(b);
  if (isEmpty(a) || isEmpty(b)) return null;
  if (intersects(a, b)) return 0;
  // Disjoint: the closest pair involves a vertex of one side.
  const side = (xs: s2.Point[], g: Geo): number => {
    const edges = allEdges(g);
    const pts = g.points.map(s2p);
    let best = Infinity;
    for (const x of xs) {
      for (const q of pts) best = Math.min(best, chordDistance(x, q));
      for (const e of edges) best = Math.min(best, chordEdgeDistance(x, e[0], e[1]));
    }
    return best;
  };
  return Math.min(side(av, b), side(bv, a));
}

// ---------------------------------------------------------------- centroid

/** S2 centroid of the highest-dimension parts: area-, length- or count-weighted. */
export function centroid(g: Geo): LngLat | null {
  let v = new s2.Point(0, 0, 0).vector;
  if (g.polys.length) {
    for (const p of g.polys) for (const r of p) v = v.add(loopOf(r).centroid().vector);
  } else if (g.lines.length) {
    for (const e of g.lines.flatMap(lineEdges)) v = v.add(arcCentroid(e[0].vector, e[1].vector));
  } else {
    for (const q of g.points) v = v.add(s2p(q).vector);
  }
  if (v.norm() === 0) return null;
  return fromS2(s2.Point.fromVector(v.normalize()));
}


/** They meet, but their interiors do not: no proper crossing of edges, no interior sample of one inside the other's interior. */
export function touches(a: Geo, b: Geo): boolean {
  if (!intersects(a, b)) return false;
  if (edgesCrossProperly(allEdges(a), allEdges(b))) return false;
  const probes = (g: Geo): s2.Point[] => [
    ...g.points.map(s2p),
    ...g.lines.flatMap((l) => [...lineEdges(l).map(midpoint), ...l.slice(1, -1).map(s2p)]),
    ...g.polys.flatMap(polyEdges).map(insideOf),
  ];
  const overlaps = (x: Geo, y: Geo) => probes(x).some((p) => locate(x, p) === 'interior' && locate(y, p) === 'interior');
  return !overlaps(a, b) && !overlaps(b, a);
}
