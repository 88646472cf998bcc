// Operations that build new values: ST_BOUNDARY and the union behind ST_UNION_AGG.
import { s2 } from 's2js';
import { covers, intersects, locateEdgeMid } from './measure.js';
import { assembleLines } from './polylines.js';
import { fromS2, full, geoFail, isFull, loopOf, s2p, sameLL, type Geo, type LngLat, type Poly, type Ring } from './model.js';
import { angleBetween, arcBulge, crossing, CROSS, onSegment, segmentDistance, segmentIntersection } from './sphere.js';
import { MAX_ROW_BYTES, rowTooLarge } from '../../types/errors.js';

/** Polygon rings become closed linestrings; open polylines contribute endpoints seen an odd number of times. */
export function boundary(g: Geo): Geo {
  const lines = g.polys.flatMap((p) => p.map((r) => [...r, r[0]!]));
  const ends: LngLat[] = [];
  const counts: number[] = [];
  for (const l of g.lines) {
    if (sameLL(l[0]!, l[l.length - 1]!)) continue;
    for (const e of [l[0]!, l[l.length - 1]!]) {
      const k = ends.findIndex((x) => sameLL(x, e));
      if (k < 0) {
        ends.push(e);
        counts.push(1);
      } else counts[k]!++;
    }
  }
  return { points: ends.filter((_, i) => counts[i]! % 2 === 1), lines, polys: [] };
}

// ---------------------------------------------------------------- union

const one = (p: Poly): Geo => ({ points: [], lines: [], polys: [p] });

interface Piece {
  a: LngLat;
  b: LngLat;
  from: 0 | 1;
  /** `${from}:${ring index}`: the input ring the piece comes from. */
  ring: string;
}

/** Splits every ring edge of `p` at the given cut points lying on it (in order along the edge). */
function splitRings(p: Poly, cuts: Map<string, LngLat[]>, from: 0 | 1): Piece[] {
  const out: Piece[] = [];
  p.forEach((r, ri) =>
    r.forEach((v, i) => {
      const w = r[(i + 1) % r.length]!;
      const pts = (cuts.get(`${from}:${ri}:${i}`) ?? []).slice();
      const a = s2p(v).vector;
      pts.sort((x, y) => s2p(x).vector.sub(a).norm() - s2p(y).vector.sub(a).norm());
      let prev = v;
      for (const c of [...pts, w]) {
        if (!sameLL(prev, c)) out.push({ a: prev, b: c, from, ring: `${from}:${ri}` });
        prev = c;
      }
    }),
  );
  return out;
}

type Op = 'union' | 'intersection' | 'difference';

/**
 * Edges with a box around their arc ([minX, minY, minZ, maxX, maxY, maxZ] of
 * the unit vectors, grown by arcBulge), so boxes that do not meet prove the
 * arcs share no point. Sorted by minX, as the sweep in overlayTwo needs.
 */
function boxed<E extends { a: LngLat; b: LngLat }>(es: readonly E[]): (E & { box: readonly number[] })[] {
  return es
    .map((e) => {
      const a = s2p(e.a).vector;
      const b = s2p(e.b).vector;
      const grow = arcBulge(Math.hypot(a.x - b.x, a.y - b.y, a.z - b.z));
      const box = [Math.min(a.x, b.x) - grow, Math.min(a.y, b.y) - grow, Math.min(a.z, b.z) - grow, Math.max(a.x, b.x) + grow, Math.max(a.y, b.y) + grow, Math.max(a.z, b.z) + grow];
      return { ...e, box };
    })
    .sort((x, y) => x.box[0]! - y.box[0]!);
}

/**
 * Overlay of two polygons: split both boundaries where they meet, keep the
 * pieces each operation needs, and chain them back into rings. Union keeps the
 * pieces outside the other polygon, intersection those inside (a shared piece
 * once when both interiors are on the same side), difference p - q keeps p
 * outside q and q inside p reversed (it becomes the new boundary).
 */
function overlayTwo(p: Poly, q: Poly, op: Op): Poly[] {
  const cuts = new Map<string, LngLat[]>();
  const addCut = (k: string, x: LngLat) => {
    const l = cuts.get(k) ?? [];
    if (!l.some((y) => sameLL(x, y))) l.push(x);
    cuts.set(k, l);
  };
  const edges = (poly: Poly) => poly.flatMap((r, ri) => r.map((v, i) => ({ key: `${ri}:${i}`, a: v, b: r[(i + 1) % r.length]! })));
  const pe = boxed(edges(p));
  const qe = boxed(edges(q));
  // Only pairs whose boxes meet can cross or touch: a sweep along x over both lists sorted by minX.
  let from = 0;
  for (const e of pe) {
    while (from < qe.length && qe[from]!.box[3] < e.box[0]) from++;
    for (let j = from; j < qe.length; j++) {
      const f = qe[j]!;
      if (f.box[0] > e.box[3]) break;
      if (f.box[3] < e.box[0] || f.box[4] < e.box[1] || f.box[1] > e.box[4] || f.box[5] < e.box[2] || f.box[2] > e.box[5]) continue;
      const [a, b, c, d] = [s2p(e.a), s2p(e.b), s2p(f.a), s2p(f.b)];
      if (crossing(a, b, c, d) === CROSS) {
        const x = fromS2(segmentIntersection(a, b, c, d));
        addCut(`0:${e.key}`, x);
        addCut(`1:${f.key}`, x);
      }
      // A vertex of one ring lying inside an edge of the other is a cut too.
      for (const [v, edge, key] of [[f.a, e, `0:${e.key}`], [e.a, f, `1:${f.key}`]] as const) {
        const vp = s2p(v);
        if (!sameLL(v, edge.a) && !sameLL(v, edge.b) && onSegment(vp, s2p(edge.a), s2p(edge.b))) addCut(key, v);
      }
    }
  }
  const keep: Piece[] = [];
  let dropped = 0;
  for (const pc of splitRings(p, cuts, 0)) {
    const w = locateEdgeMid(q, s2p(pc.a), s2p(pc.b));
    const k = op === 'union' ? w === 'exterior' || w === 'same' : op === 'intersection' ? w === 'interior' || w === 'same' : w === 'exterior' || w === 'opposite';
    if (k) keep.push(pc);
    else dropped++;
  }
  for (const pc of splitRings(q, cuts, 1)) {
    const w = locateEdgeMid(p, s2p(pc.a), s2p(pc.b));
    if (op === 'union' && w === 'exterior') keep.push(pc);
    else if (op === 'intersection' && w === 'interior') keep.push(pc);
    else if (op === 'difference' && w === 'interior') keep.push({ ...pc, a: pc.b, b: pc.a });
    else dropped++;
  }
  // Polygons that only touch at vertices stay two polygons.
  if (op === 'union' && dropped === 0) return [p, q];
  // An input ring kept whole keeps its vertex order (reversed, as S2 inverts a
  // loop, when it turns into a hole of a difference).
  const whole: Ring[] = [];
  const rest: Piece[] = [];
  for (const [from, poly] of [[0, p], [1, q]] as const) {
    poly.forEach((r, ri) => {
      const tag = `${from}:${ri}`;
      const kept = keep.filter((pc) => pc.ring === tag);
      const uncut = ![...cuts.keys()].some((k) => k.startsWith(`${tag}:`));
      if (uncut && kept.length === r.length) whole.push(kept[0]!.a === r[0] ? r : [...r].reverse());
      else rest.push(...kept);
    });
  }
  return chainRings(rest, whole);
}

/** Chains directed pieces into closed rings; small (counter-clockwise) rings are shells, the others holes. */
function chainRings(pieces: Piece[], whole: Ring[] = []): Poly[] {
  const key = (v: LngLat) => {
    const x = s2p(v);
    return `${x.x},${x.y},${x.z}`;
  };
  const byStart = new Map<string, Piece[]>();
  for (const pc of pieces) {
    const k = key(pc.a);
    byStart.set(k, [...(byStart.get(k) ?? []), pc]);
  }
  const used = new Set<Piece>();
  const rings: Ring[] = [...whole];
  for (const start of pieces) {
    if (used.has(start)) continue;
    const ring: LngLat[] = [];
    let cur: Piece | undefined = start;
    while (cur && !used.has(cur)) {
      used.add(cur);
      ring.push(cur.a);
      cur = (byStart.get(key(cur.b)) ?? []).find((x) => !used.has(x));
    }
    if (ring.length >= 3) rings.push(ring);
  }
  const shells = rings.filter((r) => loopOf(r).area() <= 2 * Math.PI);
  const holes = rings.filter((r) => loopOf(r).area() > 2 * Math.PI);
  const polys: Poly[] = shells.map((s) => [s]);
  for (const h of holes) {
    const inner = s2p(h[0]!);
    const owner = polys.find((p) => loopOf(p[0]!).containsPoint(inner)) ?? polys[0];
    owner?.push(h);
  }
  return polys;
}

/**
 * The union of polygons, merged pairwise in a balanced tree: merging each
 * polygon into one growing result costs the result's size per polygon
 * (quadratic in the output), halves of similar size do not.
 */
function unionPolys(polys: readonly Poly[]): Poly[] {
  if (polys.length <= 8) return unionInto(polys);
  const mid = polys.length >> 1;
  return unionInto([...unionPolys(polys.slice(0, mid)), ...unionPolys(polys.slice(mid))]);
}

function unionInto(polys: readonly Poly[]): Poly[] {
  let acc: Poly[] = [];
  for (const p of polys) {
    let merged: Poly[] = [p];
    const rest: Poly[] = [];
    for (const r of acc) {
      const m = merged[0]!;
      if (merged.length !== 1 || !intersects(one(r), one(m))) rest.push(r);
      else if (covers(one(r), one(m))) merged = [r];
      else if (covers(one(m), one(r))) continue;
      else merged = overlayTwo(r, m, 'union');
    }
    acc = [...rest, ...merged];
  }
  return acc;
}

/** The union of values: polygons merged, lines and points dropped where already covered, duplicates removed. */
export function unionAll(gs: readonly Geo[]): Geo {
  if (gs.some(isFull)) return full();
  const polys = unionPolys(gs.flatMap((g) => g.polys));
  const area: Geo = { points: [], lines: [], polys };
  const lines: LngLat[][] = [];
  for (const l of gs.flatMap((g) => g.lines)) {
    const lg: Geo = { points: [], lines: [l], polys: [] };
    if (covers(area, lg) || covers({ points: [], lines, polys: [] }, lg)) continue;
    // The parts of a line inside the polygons (boundary included) are part of the area.
    if (polys.length) lines.push(...splitLine(l, area, (x, y) => !covers(area, asPoint(midOf(x, y)))));
    else lines.push(l);
  }
  // Lines that meet are joined into the longest paths, as S2's builder does.
  const joined = assembleLines(lines).lines;
  const cover: Geo = { points: [], lines: joined, polys };
  const points: LngLat[] = [];
  const seen = new Set<string>();
  for (const q of gs.flatMap((g) => g.points)) {
    const x = s2p(q);
    const k = `${x.x},${x.y},${x.z}`;
    if (seen.has(k)) continue;
    seen.add(k);
    if ((joined.length || polys.length) && covers(cover, { points: [q], lines: [], polys: [] })) continue;
    points.push(q);
  }
  return { points, lines: joined, polys };
}

// ---------------------------------------------------------------- intersection and difference

/** Cuts each edge of a polyline where it crosses `cutter`'s edges or passes its vertices; classifies the pieces. */
function splitLine(l: readonly LngLat[], cutter: Geo, keepPiece: (a: LngLat, b: LngLat) => boolean): LngLat[][] {
  const cEdges: [LngLat, LngLat][] = [
    ...cutter.lines.flatMap((cl) => cl.slice(1).map((v, i) => [cl[i]!, v] as [LngLat, LngLat])),
    ...cutter.polys.flatMap((p) => p.flatMap((r) => r.map((v, i) => [v, r[(i + 1) % r.length]!] as [LngLat, LngLat]))),
  ];
  const cVerts = [...cutter.points, ...cutter.lines.flat(), ...cutter.polys.flat(2)];
  const out: LngLat[][] = [];
  let cur: LngLat[] = [];
  const flush = () => {
    if (cur.length >= 2) out.push(cur);
    cur = [];
  };
  for (let i = 1; i < l.length; i++) {
    const [a, b] = [l[i - 1]!, l[i]!];
    const [pa, pb] = [s2p(a), s2p(b)];
    const cuts: LngLat[] = [];
    for (const [c, d] of cEdges) if (crossing(pa, pb, s2p(c), s2p(d)) === CROSS) cuts.push(fromS2(segmentIntersection(pa, pb, s2p(c), s2p(d))));
    for (const v of cVerts) if (!sameLL(v, a) && !sameLL(v, b) && onSegment(s2p(v), pa, pb)) cuts.push(v);
    const along = (x: LngLat) => s2p(x).vector.sub(pa.vector).norm();
    const stops = [a, ...cuts.sort((x, y) => along(x) - along(y)), b].filter((v, k, arr) => k === 0 || !sameLL(v, arr[k - 1]!));
    for (let k = 1; k < stops.length; k++) {
      const [x, y] = [stops[k - 1]!, stops[k]!];
      if (keepPiece(x, y)) {
        if (cur.length === 0) cur.push(x);
        cur.push(y);
      } else flush();
    }
  }
  flush();
  return out;
}

const midOf = (a: LngLat, b: LngLat) => fromS2(s2.Point.fromVector(s2p(a).vector.add(s2p(b).vector).normalize()));
const asPoint = (p: LngLat): Geo => ({ points: [p], lines: [], polys: [] });

/** The point set intersection (its closure), lower-dimensional parts kept where not covered. */
export function intersection(a: Geo, b: Geo): Geo {
  if (isFull(a)) return b;
  if (isFull(b)) return a;
  const polys = unionPolys(a.polys.flatMap((p) => b.polys.flatMap((q) => overlayTwo(p, q, 'intersection'))));
  const lines: LngLat[][] = [];
  const inside = (g: Geo) => (x: LngLat, y: LngLat) => covers(g, asPoint(midOf(x, y)));
  for (const l of a.lines) lines.push(...splitLine(l, b, inside(b)));
  const bLinesInA: Geo = { points: [], lines: [], polys: a.polys };
  for (const l of b.lines) lines.push(...splitLine(l, a, inside(bLinesInA)));
  const points: LngLat[] = [...a.points.filter((p) => covers(b, asPoint(p))), ...b.points.filter((p) => covers(a, asPoint(p)))];
  // Lines crossing each other meet in points.
  for (const la of a.lines) {
    for (const lb of b.lines) {
      for (let i = 1; i < la.length; i++) {
        for (let j = 1; j < lb.length; j++) {
          const [p, q, r, t] = [s2p(la[i - 1]!), s2p(la[i]!), s2p(lb[j - 1]!), s2p(lb[j]!)];
          if (crossing(p, q, r, t) === CROSS) points.push(fromS2(segmentIntersection(p, q, r, t)));
        }
      }
    }
  }
  return unionAll([{ points: [], lines: [], polys }, { points: [], lines, polys: [] }, { points, lines: [], polys: [] }]);
}

/**
 * The full globe minus b (only b's polygons take area away): one polygon
 * bounded by every shell of b turned inside out, plus each hole of b as a
 * polygon of its own. This is how a polygon larger than a hemisphere is
 * recovered with ST_DIFFERENCE(ST_GEOGFROMTEXT('fullglobe'), g).
 */
function complement(b: Geo): Geo {
  const polys = unionPolys(b.polys);
  if (!polys.length) return full();
  const outside: Poly = polys.map((p) => [...p[0]!].reverse());
  const holes: Poly[] = polys.flatMap((p) => p.slice(1).map((h) => [[...h].reverse()]));
  return { points: [], lines: [], polys: [outside, ...holes] };
}

/** a minus b: the closure of the points of a not in b (b's lower dimensions remove nothing from areas). */
export function difference(a: Geo, b: Geo): Geo {
  if (isFull(b)) return { points: [], lines: [], polys: [] };
  if (isFull(a)) return complement(b);
  let polys: Poly[] = a.polys;
  for (const q of b.polys) polys = polys.flatMap((p) => (intersects(one(p), one(q)) ? overlayTwo(p, q, 'difference') : [p]));
  const bArea: Geo = { points: [], lines: [], polys: b.polys };
  const bLines: Geo = { points: [], lines: b.lines, polys: [] };
  // Pieces of a's lines inside b (boundary included) are removed; b's points remove no length.
  const keepLine = (x: LngLat, y: LngLat) => {
    const m = asPoint(midOf(x, y));
    return !(b.polys.length && covers(bArea, m)) && !(b.lines.length && covers(bLines, m));
  };
  const lines = a.lines.flatMap((l) => splitLine(l, b, keepLine));
  const points = a.points.filter((p) => !covers(b, asPoint(p)));
  return unionAll([{ points: [], lines: [], polys }, { points: [], lines, polys: [] }, { points, lines: [], polys: [] }]);
}

// ---------------------------------------------------------------- closest point and convex hull

/** The point of `a` nearest to `b` (an intersection point when they meet); null when either is empty. */
export function closestPoint(a: Geo, b: Geo): LngLat | null {
  const aVerts = [...a.points, ...a.lines.flat(), ...a.polys.flat(2)];
  const bVerts = [...b.points, ...b.lines.flat(), ...b.polys.flat(2)];
  if (!aVerts.length || !bVerts.length) return null;
  const aEdges = [...a.lines.flatMap((l) => l.slice(1).map((v, i) => [l[i]!, v] as const)), ...a.polys.flatMap((p) => p.flatMap((r) => r.map((v, i) => [v, r[(i + 1) % r.length]!] as const)))];
  const bEdges = [...b.lines.flatMap((l) => l.slice(1).map((v, i) => [l[i]!, v] as const)), ...b.polys.flatMap((p) => p.flatMap((r) => r.map((v, i) => [v, r[(i + 1) % r.length]!] as const)))];
  // b's parts inside a: the first such vertex is its own closest point.
  for (const y of bVerts) if (covers(a, { points: [y], lines: [], polys: [] })) return y;
  for (const [p, q] of aEdges) {
    for (const [r, t] of bEdges) {
      const [pp, qq, rr, tt] = [s2p(p), s2p(q), s2p(r), s2p(t)];
      if (crossing(pp, qq, rr, tt) === CROSS) return fromS2(segmentIntersection(pp, qq, rr, tt));
    }
  }
  for (const x of aVerts) if (covers(b, { points: [x], lines: [], polys: [] })) return x;
  let best = Infinity;
  let at: LngLat = aVerts[0]!;
  const consider = (d: number, p: LngLat) => {
    if (d < best) {
      best = d;
      at = p;
    }
  };
  const bGeo = b;
  for (const x of aVerts) consider(minDist(s2p(x), bGeo), x);
  // A vertex of b is closest to some interior point of an edge of a: its projection.
  for (const y of bVerts) {
    const yp = s2p(y);
    for (const [p, q] of aEdges) {
      const c = closestOnSegment(yp, s2p(p), s2p(q));
      consider(angleBetween(yp.vector, c.vector), c.equals(s2p(p)) ? p : c.equals(s2p(q)) ? q : fromS2(c));
    }
  }
  return at;
}

function minDist(x: s2.Point, g: Geo): number {
  let best = Infinity;
  for (const q of [...g.points, ...g.lines.flat(), ...g.polys.flat(2)]) best = Math.min(best, angleBetween(x.vector, s2p(q).vector));
  const edges = [...g.lines.flatMap((l) => l.slice(1).map((v, i) => [l[i]!, v] as const)), ...g.polys.flatMap((p) => p.flatMap((r) => r.map((v, i) => [v, r[(i + 1) % r.length]!] as const)))];
  for (const [p, q] of edges) best = Math.min(best, segmentDistance(x, s2p(p), s2p(q)));
  return best;
}

/** The point of the geodesic segment ab closest to x. */
function closestOnSegment(x: s2.Point, a: s2.Point, b: s2.Point): s2.Point {
  const n = a.vector.cross(b.vector);
  if (n.norm() > 0) {
    const nn = n.normalize();
    if (nn.cross(a.vector).dot(x.vector) > 0 && b.vector.cross(nn).dot(x.vector) > 0) {
      const proj = x.vector.sub(nn.mul(x.vector.dot(nn)));
      if (proj.norm() > 0) return s2.Point.fromVector(proj.normalize());
    }
  }
  return angleBetween(x.vector, a.vector) <= angleBetween(x.vector, b.vector) ? a : b;
}

/** S2::Ortho as the C++ library computes it (the Go port that s2js follows picks another axis). */
function orthoS2(a: s2.Point['vector']): s2.Point['vector'] {
  const [ax, ay, az] = [Math.abs(a.x), Math.abs(a.y), Math.abs(a.z)];
  const largest = ax > ay ? (ax > az ? 0 : 2) : ay > az ? 1 : 2;
  const k = largest === 0 ? 2 : largest - 1;
  const t: [number, number, number] = [0.012, 0.0053, 0.00457];
  t[k] = 1;
  return a.cross(s2.Point.fromCoords(t[0], t[1], t[2]).vector).normalize();
}

/**
 * The hull of one point: S2ConvexHullQuery makes it a tiny triangle (the point
 * moved 1e-15 along two tangent directions) and the service keeps the vertex
 * that comes first in S2 order (cell id, then x, y, z), which is why the
 * documented hull of POINT(1 1) is POINT(0.999999999999943 1).
 */
function singlePointHull(p: s2.Point): LngLat {
  const v = p.vector;
  const d0 = orthoS2(v);
  const d1 = v.cross(d0);
  const tri = [v, v.add(d0.mul(1e-15)).normalize(), v.add(d1.mul(1e-15)).normalize()].map((x) => s2.Point.fromVector(x));
  const key = (x: s2.Point) => s2.cellid.fromPoint(x);
  tri.sort((x, y) => {
    const [kx, ky] = [key(x), key(y)];
    if (kx !== ky) return kx < ky ? -1 : 1;
    return x.x - y.x || x.y - y.y || x.z - y.z;
  });
  return fromS2(tri[0]!);
}

/**
 * The hull of two points: S2ConvexHullQuery's loop through both points and
 * their geodesic midpoint, ordered counter-clockwise around a point
 * orthogonal to their bounding cap's centre; the service returns it as the
 * line from the second point through the midpoint to the first (documented:
 * LINESTRING(1 1, 2 2) has the hull LINESTRING(2 2, 1.49988573656168
 * 1.5000570914792, 1 1)).
 */
function singleEdgeHull(u: LngLat, v: LngLat): Geo {
  const [pu, pv] = [s2p(u), s2p(v)];
  if (pu.vector.add(pv.vector).norm() === 0) geoFail('the convex hull of input spanning a hemisphere or more (the full globe) is not supported');
  const rect = s2.Rect.fromLatLng(s2.LatLng.fromPoint(pu)).addPoint(s2.LatLng.fromPoint(pv));
  const origin = orthoS2(rect.capBound().center.vector);
  const [a, b] = origin.dot(pu.vector.cross(pv.vector)) > 0 ? [u, v] : [v, u];
  const [mid] = new s2.Polyline([s2p(a), s2p(b)]).interpolate(0.5);
  return { points: [], lines: [[b, fromS2(mid), a]], polys: [] };
}

/**
 * Convex hull of all vertices. Within a hemisphere the gnomonic projection maps
 * geodesics to straight lines, so the planar hull of the projected vertices is
 * the spherical hull. Null for empty input.
 */
export function convexHull(g: Geo): Geo | null {
  const vs = [...g.points, ...g.lines.flat(), ...g.polys.flat(2)].filter((v, i, arr) => arr.findIndex((w) => sameLL(v, w)) === i);
  if (vs.length === 0) return null;
  if (vs.length === 1) return { points: [singlePointHull(s2p(vs[0]!))], lines: [], polys: [] };
  if (vs.length === 2) return singleEdgeHull(vs[0]!, vs[1]!);
  let c = vs.reduce((acc, v) => acc.add(s2p(v).vector), new s2.Point(0, 0, 0).vector);
  // The hull of input spanning a hemisphere is the full globe, which this model cannot hold.
  if (c.norm() === 0 || vs.some((v) => s2p(v).vector.dot(c) <= 1e-12 * c.norm())) geoFail('the convex hull of input spanning a hemisphere or more (the full globe) is not supported');
  c = c.normalize();
  // Tangent-plane basis at c.
  const u = (Math.abs(c.z) < 0.9 ? new s2.Point(0, 0, 1).vector : new s2.Point(1, 0, 0).vector).cross(c).normalize();
  const w = c.cross(u);
  const pts = vs.map((v) => {
    const p = s2p(v).vector;
    const k = p.dot(c);
    return { v, x: p.dot(u) / k, y: p.dot(w) / k };
  });
  pts.sort((p, q) => p.x - q.x || p.y - q.y);
  const cross = (o: (typeof pts)[0], a: (typeof pts)[0], b: (typeof pts)[0]) => (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
  const half = (list: typeof pts) => {
    const h: typeof pts = [];
    for (const p of list) {
      while (h.length >= 2 && cross(h[h.length - 2]!, h[h.length - 1]!, p) <= 1e-15) h.pop();
      h.push(p);
    }
    return h;
  };
  const lower = half(pts);
  const upper = half([...pts].reverse());
  const hull = [...lower.slice(0, -1), ...upper.slice(0, -1)].map((p) => p.v);
  if (hull.length < 3) {
    // Collinear: the segment between the two extreme vertices.
    return { points: [], lines: [[pts[0]!.v, pts[pts.length - 1]!.v]], polys: [] };
  }
  // Counter-clockwise in the tangent plane seen from outside the sphere is the S2 orientation.
  const ring = loopOf(hull).area() <= 2 * Math.PI ? hull : [...hull].reverse();
  // Start at the vertex first in S2 cell order, as the points of a value print.
  let first = 0;
  for (let i = 1; i < ring.length; i++) if (s2.cellid.fromPoint(s2p(ring[i]!)) < s2.cellid.fromPoint(s2p(ring[first]!))) first = i;
  return { points: [], lines: [], polys: [[[...ring.slice(first), ...ring.slice(0, first)]]] };
}

// ---------------------------------------------------------------- simplify

/** Douglas-Peucker on the sphere: keeps the vertices farther than `tol` (radians) from the simplified chain. */
function simplifyChain(vs: readonly LngLat[], tol: number): LngLat[] {
  if (vs.length <= 2) return [...vs];
  const keep = new Array<boolean>(vs.length).fill(false);
  keep[0] = keep[vs.length - 1] = true;
  const stack: [number, number][] = [[0, vs.length - 1]];
  while (stack.length) {
    const [i, j] = stack.pop()!;
    let worst = -1;
    let at = -1;
    for (let k = i + 1; k < j; k++) {
      const d = segmentDistance(s2p(vs[k]!), s2p(vs[i]!), s2p(vs[j]!));
      if (d > worst) {
        worst = d;
        at = k;
      }
    }
    if (at >= 0 && worst > tol) {
      keep[at] = true;
      stack.push([i, at], [at, j]);
    }
  }
  return vs.filter((_, k) => keep[k]);
}

const within = (vs: readonly LngLat[], tol: number): boolean => vs.every((v) => angleBetween(s2p(v).vector, s2p(vs[0]!).vector) <= tol);

/**
 * ST_SIMPLIFY: chains of edges replaced by single edges while no removed vertex
 * is farther than the tolerance; a ring or line that fits within the tolerance
 * collapses to a line or a point. (Not topology-preserving across parts.)
 */
export function simplify(g: Geo, tol: number): Geo {
  const points: LngLat[] = [...g.points];
  const lines: LngLat[][] = [];
  const polys: Poly[] = [];
  for (const l of g.lines) {
    if (within(l, tol)) points.push(l[0]!);
    else lines.push(simplifyChain(l, tol));
  }
  for (const p of g.polys) {
    const rings: Ring[] = [];
    p.forEach((r, ri) => {
      // Holes only matter while the shell is still a ring.
      if (ri > 0 && rings.length === 0) return;
      if (within(r, tol)) {
        if (ri === 0) points.push(r[0]!);
        return;
      }
      // Split the ring at its first vertex and the vertex farthest from it.
      let far = 1;
      for (let k = 2; k < r.length; k++) if (angleBetween(s2p(r[k]!).vector, s2p(r[0]!).vector) > angleBetween(s2p(r[far]!).vector, s2p(r[0]!).vector)) far = k;
      const s = [...simplifyChain(r.slice(0, far + 1), tol), ...simplifyChain([...r.slice(far), r[0]!], tol).slice(1, -1)];
      if (s.length >= 3) rings.push(s);
      else if (ri === 0) lines.push(s);
    });
    if (rings.length) polys.push(rings);
  }
  return unionAll([{ points: [], lines: [], polys }, { points: [], lines, polys: [] }, { points, lines: [], polys: [] }]);
}

// ---------------------------------------------------------------- buffers of points

/**
 * The buffer of a point: a regular polygon of `sides` vertices on the circle
 * of angular radius `d` (counter-clockwise, starting due north). Buffers of
 * lines and polygons need a full buffer operation and are rejected.
 */
export function bufferPoints(g: Geo, d: number, sides: number): Geo {
  if (g.lines.length || g.polys.length) geoFail('only point geographies can be buffered by this emulator');
  if (d <= 0 || g.points.length === 0) return { points: [], lines: [], polys: [] };
  // Refused before it is built (16 bytes a vertex): 10^8 sides held the engine for minutes, then exhausted its heap.
  if (sides * g.points.length * 16 > MAX_ROW_BYTES) throw rowTooLarge();
  const polys: Poly[] = g.points.map((p) => {
    const [lng, lat] = [(p[0] * Math.PI) / 180, (p[1] * Math.PI) / 180];
    const ring: LngLat[] = [];
    for (let k = 0; k < sides; k++) {
      const az = (-2 * Math.PI * k) / sides;
      const lat2 = Math.asin(Math.sin(lat) * Math.cos(d) + Math.cos(lat) * Math.sin(d) * Math.cos(az));
      const lng2 = lng + Math.atan2(Math.sin(az) * Math.sin(d) * Math.cos(lat), Math.cos(d) - Math.sin(lat) * Math.sin(lat2));
      ring.push(fromS2(s2.Point.fromLatLng(new s2.LatLng(lat2, lng2))));
    }
    return [ring];
  });
  return unionAll([{ points: [], lines: [], polys }]);
}

/** Sides of a regular polygon whose edges stay within `tol` of a circle of radius `r` (same units): r (1 - cos(pi / n)) <= tol. */
export function sidesForTolerance(r: number, tol: number): number {
  if (tol >= r) return 3;
  return Math.max(3, Math.ceil(Math.PI / Math.acos(1 - tol / r)));
}

// ---------------------------------------------------------------- snap to grid

/**
 * Vertices rounded to a grid of 10^n degrees (the grid size is rounded to such
 * a power, -10 < n < 0); repeated vertices merge and parts that collapse
 * become lines or points.
 */
export function snapToGrid(g: Geo, gridSize: number): Geo {
  if (!(gridSize > 0)) geoFail(`grid size must be positive, got ${gridSize}`);
  const n = Math.min(-1, Math.max(-9, Math.round(Math.log10(gridSize))));
  const snap = (x: number) => {
    const y = Number((Math.round(x * 10 ** -n) / 10 ** -n).toFixed(-n));
    return y === 0 ? 0 : y;
  };
  const sv = (v: LngLat): LngLat => [snap(v[0]), snap(v[1])];
  const dedupe = (vs: LngLat[]) => vs.filter((v, i) => i === 0 || !sameLL(v, vs[i - 1]!));
  const points = g.points.map(sv);
  const lines: LngLat[][] = [];
  for (const l of g.lines) {
    const d = dedupe(l.map(sv));
    if (d.length === 1) points.push(d[0]!);
    else lines.push(d);
  }
  const polys: Poly[] = [];
  for (const p of g.polys) {
    const rings: Ring[] = [];
    p.forEach((r, ri) => {
      if (ri > 0 && rings.length === 0) return;
      let d = dedupe(r.map(sv));
      if (d.length > 1 && sameLL(d[0]!, d[d.length - 1]!)) d = d.slice(0, -1);
      if (d.length >= 3) rings.push(d);
      else if (ri === 0 && d.length === 2) lines.push(d);
      else if (ri === 0 && d.length === 1) points.push(d[0]!);
    });
    if (rings.length) polys.push(rings);
  }
  return unionAll([{ points: [], lines: [], polys }, { points: [], lines, polys: [] }, { points, lines: [], polys: [] }]);
}
