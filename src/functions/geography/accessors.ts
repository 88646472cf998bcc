// Accessors and point measures: geometry type, parts, rings, endpoints,
// azimuth/angle, line location. Semantics follow the GoogleSQL geography
// reference (e.g. interior rings come back counter-clockwise, as S2 stores them).
import { s2 } from 's2js';
import { distanceRad } from './measure.js';
import { fromS2, geoFail, s2p, sameLL, type Geo, type LngLat } from './model.js';
import { angleBetween, crossing, CROSS, segmentDistance } from './sphere.js';

const point = (p: LngLat): Geo => ({ points: [p], lines: [], polys: [] });
const line = (l: LngLat[]): Geo => ({ points: [], lines: [l], polys: [] });
const closed = (r: readonly LngLat[]): LngLat[] => [...r, r[0]!];

export function geometryType(g: Geo): string {
  const kinds = (g.points.length ? 1 : 0) + (g.lines.length ? 1 : 0) + (g.polys.length ? 1 : 0);
  if (kinds !== 1) return 'ST_GeometryCollection';
  if (g.points.length) return g.points.length === 1 ? 'ST_Point' : 'ST_MultiPoint';
  if (g.lines.length) return g.lines.length === 1 ? 'ST_LineString' : 'ST_MultiLineString';
  return g.polys.length === 1 ? 'ST_Polygon' : 'ST_MultiPolygon';
}

export const numGeometries = (g: Geo): number => g.points.length + g.lines.length + g.polys.length;

/** Every element has an empty boundary: points, closed lines, and polygons only when full. */
export function isClosed(g: Geo): boolean {
  if (numGeometries(g) === 0 || g.polys.some((p) => p.length > 0)) return false;
  return g.lines.every((l) => sameLL(l[0]!, l[l.length - 1]!));
}

/** A single closed linestring that does not pass through a point twice. */
export function isRing(g: Geo): boolean {
  if (g.lines.length !== 1 || g.points.length || g.polys.length || !isClosed(g)) return false;
  const l = g.lines[0]!;
  const inner = l.slice(0, -1);
  for (let i = 0; i < inner.length; i++) for (let j = i + 1; j < inner.length; j++) if (sameLL(inner[i]!, inner[j]!)) return false;
  const pts = l.map(s2p);
  const n = pts.length - 1;
  for (let i = 0; i < n; i++) {
    for (let j = i + 2; j < n; j++) {
      if (i === 0 && j === n - 1) continue;
      if (crossing(pts[i]!, pts[i + 1]!, pts[j]!, pts[j + 1]!) === CROSS) return false;
    }
  }
  return true;
}

function singleLine(g: Geo): LngLat[] {
  if (g.lines.length !== 1 || g.points.length || g.polys.length) geoFail('the input must be a single linestring');
  return g.lines[0]!;
}

export const startPoint = (g: Geo): Geo => point(singleLine(g)[0]!);
export const endPoint = (g: Geo): Geo => {
  const l = singleLine(g);
  return point(l[l.length - 1]!);
};
/** 1-based; negative counts from the end (-1 is the last vertex). */
export function pointN(g: Geo, n: number): Geo {
  const l = singleLine(g);
  const i = n > 0 ? n - 1 : l.length + n;
  if (n === 0 || i < 0 || i >= l.length) geoFail(`index ${n} is out of bounds for a linestring of ${l.length} points`);
  return point(l[i]!);
}

function singlePolygon(g: Geo) {
  if (g.polys.length !== 1 || g.points.length || g.lines.length) geoFail('the input must be a single polygon');
  return g.polys[0]!;
}
/** The full globe has no rings: its exterior ring is the empty value. */
export const exteriorRing = (g: Geo): Geo => {
  const p = singlePolygon(g);
  return p.length ? line(closed(p[0]!)) : { points: [], lines: [], polys: [] };
};
/** Holes are held clockwise; S2 (and so the service) hands them out counter-clockwise. */
export const interiorRings = (g: Geo): Geo[] => singlePolygon(g).slice(1).map((h) => line(closed([...h].reverse())));

/** Simple parts in printing order (points, lines, polygons), optionally of one dimension. */
export function dump(g: Geo, dim = -1): Geo[] {
  const out: Geo[] = [];
  if (dim === -1 || dim === 0) out.push(...g.points.map(point));
  if (dim === -1 || dim === 1) out.push(...g.lines.map(line));
  if (dim === -1 || dim === 2) out.push(...g.polys.map((p) => ({ points: [], lines: [], polys: [p] })));
  return out;
}

export function dumpPoints(g: Geo): Geo[] {
  return [...g.points, ...g.lines.flat(), ...g.polys.flatMap((p) => p.flatMap(closed))].map(point);
}

function singlePoint(g: Geo, fn: string): LngLat {
  if (g.points.length !== 1 || g.lines.length || g.polys.length) geoFail(`${fn} requires single point geographies`);
  return g.points[0]!;
}

/** Initial bearing from a to b, clockwise from true north, in [0, 2 pi); null for equal or antipodal points. */
function bearing(a: s2.Point, b: s2.Point): number | null {
  if (a.equals(b) || a.vector.add(b.vector).norm() === 0) return null;
  const ll1 = s2.LatLng.fromPoint(a);
  const ll2 = s2.LatLng.fromPoint(b);
  const dl = ll2.lng - ll1.lng;
  const y = Math.sin(dl) * Math.cos(ll2.lat);
  const x = Math.cos(ll1.lat) * Math.sin(ll2.lat) - Math.sin(ll1.lat) * Math.cos(ll2.lat) * Math.cos(dl);
  const t = Math.atan2(y, x);
  return t < 0 ? t + 2 * Math.PI : t;
}

export function azimuth(g1: Geo, g2: Geo): number | null {
  return bearing(s2p(singlePoint(g1, 'ST_AZIMUTH')), s2p(singlePoint(g2, 'ST_AZIMUTH')));
}

/** Angle at p2 from the line p2-p1 clockwise to the line p2-p3, in [0, 2 pi). */
export function angle(g1: Geo, g2: Geo, g3: Geo): number | null {
  const [p1, p2, p3] = [g1, g2, g3].map((g) => s2p(singlePoint(g, 'ST_ANGLE'))) as [s2.Point, s2.Point, s2.Point];
  const b1 = bearing(p2, p1);
  const b3 = bearing(p2, p3);
  if (b1 === null || b3 === null) return null;
  const d = b3 - b1;
  return d < 0 ? d + 2 * Math.PI : d;
}

/** Largest distance between a vertex of g1 and a vertex of g2, in radians; null when either is empty. */
export function maxDistanceRad(g1: Geo, g2: Geo): number | null {
  const vs = (g: Geo) => [...g.points, ...g.lines.flat(), ...g.polys.flat(2)].map(s2p);
  const a = vs(g1);
  const b = vs(g2);
  if (!a.length || !b.length) return null;
  let best = 0;
  // Chord lengths, turned into an angle once, as S2's furthest-edge query measures.
  for (const x of a) for (const y of b) best = Math.max(best, x.vector.sub(y.vector).norm2());
  return 2 * Math.asin(0.5 * Math.sqrt(Math.min(4, best)));
}

/**
 * Discrete Hausdorff distance in radians: the largest distance from a vertex
 * (or point) of g1 to the nearest point of g2; undirected takes the larger of
 * both directions. Null when either value is empty.
 */
export function hausdorffRad(g1: Geo, g2: Geo, directed: boolean): number | null {
  const one = (a: Geo, b: Geo): number | null => {
    const vs = [...a.points, ...a.lines.flat(), ...a.polys.flat(2)];
    if (!vs.length) return null;
    let worst = 0;
    for (const v of vs) worst = Math.max(worst, distanceRad({ points: [v], lines: [], polys: [] }, b) ?? 0);
    return worst;
  };
  const d = one(g1, g2);
  if (d === null || directed) return d;
  const back = one(g2, g1);
  return back === null ? null : Math.max(d, back);
}

/** Fraction of the line's length before the point of the line closest to p. */
export function lineLocatePoint(gl: Geo, gp: Geo): number {
  const l = singleLine(gl);
  const p = s2p(singlePoint(gp, 'ST_LINELOCATEPOINT'));
  const pts = l.map(s2p);
  const lens = pts.slice(1).map((b, i) => angleBetween(pts[i]!.vector, b.vector));
  const total = lens.reduce((a, x) => a + x, 0);
  if (total === 0) return 0;
  let best = Infinity;
  let at = 0;
  let before = 0;
  for (let i = 0; i < lens.length; i++) {
    const a = pts[i]!;
    const b = pts[i + 1]!;
    const d = segmentDistance(p, a, b);
    if (d < best) {
      best = d;
      // The closest point: the projection onto the great circle, clamped to the segment.
      const n = a.vector.cross(b.vector).normalize();
      const proj = p.vector.sub(n.mul(p.vector.dot(n)));
      const inside = proj.norm() > 0 && n.cross(a.vector).dot(p.vector) > 0 && b.vector.cross(n).dot(p.vector) > 0;
      const along = inside ? angleBetween(a.vector, proj.normalize()) : angleBetween(p.vector, a.vector) <= angleBetween(p.vector, b.vector) ? 0 : lens[i]!;
      at = before + along;
    }
    before += lens[i]!;
  }
  return Math.min(1, Math.max(0, at / total));
}

// ---------------------------------------------------------------- positions along a linestring

/**
 * The point at a fraction of the line's length and the index of the vertex
 * after it, as S2Polyline::Interpolate computes it (the service's digits: the
 * documented ST_LINESUBSTRING point 49.4760661523471 67.2419539103851 comes
 * out of this and not of a slerp by the edge fraction).
 */
function interpolateLine(l: readonly LngLat[], fraction: number): [LngLat, number] {
  if (fraction <= 0) return [l[0]!, 1];
  if (fraction >= 1) return [l[l.length - 1]!, l.length];
  const [p, next] = new s2.Polyline(l.map(s2p)).interpolate(fraction);
  // A point that lands on a vertex keeps the vertex's own coordinates.
  const v = l.find((x) => s2p(x).equals(p));
  return [v ?? fromS2(p), next];
}

function checkFraction(f: number): void {
  if (!(f >= 0 && f <= 1)) geoFail(`fraction must be between 0 and 1, got ${f}`);
}

export function lineInterpolatePoint(g: Geo, fraction: number): Geo {
  checkFraction(fraction);
  return point(interpolateLine(singleLine(g), fraction)[0]);
}

/** The part of the line between two fractions of its length; a point when they meet. */
export function lineSubstring(g: Geo, start: number, end: number): Geo {
  checkFraction(start);
  checkFraction(end);
  if (start > end) geoFail(`start fraction ${start} is greater than end fraction ${end}`);
  const l = singleLine(g);
  const [a, i] = interpolateLine(l, start);
  const [b, j] = interpolateLine(l, end);
  const out: LngLat[] = [a, ...l.slice(i, j), b];
  const d = out.filter((v, k) => k === 0 || !sameLL(v, out[k - 1]!));
  return d.length === 1 ? point(d[0]!) : line(d);
}

/** The S2 cell (as the signed INT64 the service returns) containing a point, at a level 0..30. */
export function cellIdFromPoint(g: Geo, level: number): bigint {
  if (level < 0 || level > 30) geoFail(`level must be between 0 and 30, got ${level}`);
  const p = singlePoint(g, 'S2_CELLIDFROMPOINT');
  const id = s2.cellid.parent(s2.cellid.fromPoint(s2p(p)), level);
  return BigInt.asIntN(64, id);
}

// ---------------------------------------------------------------- S2 coverings

/** An S2 region for each part: points, polylines, polygons (holes as nested loops). */
function regionsOf(g: Geo): s2.Region[] {
  return [
    ...g.points.map((p) => s2p(p) as s2.Region),
    ...g.lines.map((l) => new s2.Polyline(l.map(s2p)) as s2.Region),
    ...g.polys.map((p) => new s2.Polygon(p.map((r, i) => new s2.Loop((i === 0 ? r : [...r].reverse()).map(s2p)))) as s2.Region),
  ];
}

/** Several parts as one region for the coverer (bounds are the whole sphere; cells test against every part). */
function unionRegion(rs: s2.Region[]): s2.Region {
  if (rs.length === 1) return rs[0]!;
  return {
    capBound: () => s2.Cap.fullCap(),
    rectBound: () => s2.Rect.fullRect(),
    containsCell: (c: s2.Cell) => rs.some((r) => r.containsCell(c)),
    intersectsCell: (c: s2.Cell) => rs.some((r) => r.intersectsCell(c)),
    containsPoint: (p: s2.Point) => rs.some((r) => r.containsPoint(p)),
    cellUnionBound: () => rs.flatMap((r) => r.cellUnionBound()),
  } as s2.Region;
}

/**
 * Cells a covering may hold here (min_level comes before max_cells in S2's
 * coverer). s2js's coverer takes time quadratic in the cells: ~2 s for 11k,
 * ~20 s for 45k, minutes and a stack overflow for 180k, the engine held all along.
 */
const MAX_COVERING_CELLS = 10_000;

/** Roughly how many cells of `level` meet the geography: its area and its edges' length in cells of that size, plus its vertices. */
function cellsMeeting(g: Geo, rs: readonly s2.Region[], level: number): number {
  const cellArea = (4 * Math.PI) / (6 * 4 ** level);
  const cellEdge = Math.sqrt(cellArea);
  const crossed = (vs: readonly LngLat[]): number => {
    let len = 0;
    for (let i = 1; i < vs.length; i++) len += angleBetween(s2p(vs[i - 1]!).vector, s2p(vs[i]!).vector);
    return vs.length + (2 * len) / cellEdge;
  };
  let n = g.points.length;
  for (const l of g.lines) n += crossed(l);
  for (const p of g.polys) for (const r of p) n += crossed(r.length ? [...r, r[0]!] : r);
  for (const r of rs) if (r instanceof s2.Polygon) n += r.area() / cellArea;
  return n;
}

/** S2_COVERINGCELLIDS: a covering of at most `maxCells` cells between the levels, as signed INT64 ids. */
export function coveringCellIds(g: Geo, minLevel: number, maxLevel: number, maxCells: number): bigint[] {
  if (minLevel < 0 || maxLevel > 30 || minLevel > maxLevel) geoFail(`levels must satisfy 0 <= min_level <= max_level <= 30`);
  if (maxCells < 1) geoFail('max_cells must be positive');
  const rs = regionsOf(g);
  if (rs.length === 0) return [];
  // A region large for its min_level needs that many cells whatever max_cells says (a 10-degree
  // square at level 30: ~10^17): refused up front, the coverer would run without end.
  const needed = cellsMeeting(g, rs, minLevel);
  if (needed > MAX_COVERING_CELLS) geoFail(`a covering at min_level ${minLevel} would take about ${needed.toPrecision(2)} cells; this emulator makes coverings of at most ${MAX_COVERING_CELLS}`);
  const cov = new s2.RegionCoverer({ minLevel, maxLevel, maxCells }).covering(unionRegion(rs));
  return [...cov].map((id) => BigInt.asIntN(64, id));
}
