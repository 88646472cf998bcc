// The GEOGRAPHY value model: a normalized set of points, polylines and
// polygons on the unit sphere, as BigQuery (S2) holds it. Vertices keep the
// input degrees for printing; geometry is computed on S2 points (s2js), so
// every edge is a geodesic (a line along a parallel bulges toward the pole).
import { s2 } from 's2js';
import { Geography, type Value } from '../../types/values.js';
import { fail } from '../vec.js';
import { findCrossing } from './sphere.js';

/**
 * The Earth radius the service multiplies by: S2Earth's 6371.01 km. Its
 * answers pin it down: ST_DISTANCE between (139.7454316 35.658584) and
 * (139.8108103 35.7100069) is 8219.632821167155 and ST_AREA of
 * POLYGON((-179 26, -179 48, -10 48, -10 26, -100 -10.1, -179 26)) is
 * 9.564128913265508E13 (both as a real project returns them), and the
 * documented ST_HAUSDORFFDISTANCE answers are these radians times 6371010.
 */
export const R = 6371010;

export type LngLat = readonly [number, number];
/** A polygon ring without its closing vertex, oriented with the interior on its left (shell CCW, holes CW). */
export type Ring = LngLat[];
export type Poly = Ring[];

export interface Geo {
  readonly points: LngLat[];
  readonly lines: LngLat[][];
  readonly polys: Poly[];
}

/**
 * The full sphere (WKT FULLGLOBE, S2's full loop) is a polygon with no rings:
 * every point is inside it and it has no boundary. A value holding it holds
 * nothing else.
 */
export const isFull = (g: Geo): boolean => g.polys.some((p) => p.length === 0);
export const full = (): Geo => ({ points: [], lines: [], polys: [[]] });

export const EMPTY: Geo = { points: [], lines: [], polys: [] };
export const isEmpty = (g: Geo): boolean => g.points.length === 0 && g.lines.length === 0 && g.polys.length === 0;

/** Thrown by parsers and constructors; the caller prefixes the function name. */
export class GeoError extends Error {}
export const geoFail = (msg: string): never => {
  throw new GeoError(msg);
};

/** Runs `f`, turning a GeoError into the service's "<FN> failed: <reason>" query error. */
export function withName<X>(fn: string, f: () => X): X {
  try {
    return f();
  } catch (e) {
    if (e instanceof GeoError) fail(`${fn} failed: ${e.message}`);
    throw e;
  }
}

// ---------------------------------------------------------------- S2 conversions (cached per vertex array)

const pointCache = new WeakMap<LngLat, s2.Point>();
export function s2p(v: LngLat): s2.Point {
  let p = pointCache.get(v);
  if (!p) {
    p = s2.Point.fromLatLng(s2.LatLng.fromDegrees(v[1], v[0]));
    pointCache.set(v, p);
  }
  return p;
}

/** Computed vertices print with 15 significant digits: the last bits of an xyz -> degrees round trip are noise. */
/** Also snaps rounding residue around 0 (below 1e-12 degrees, ~0.1 µm) to 0. */
const round15 = (x: number): number => (Math.abs(x) < 1e-12 ? 0 : Number(x.toPrecision(15)));
export function fromS2(p: s2.Point): LngLat {
  const ll = s2.LatLng.fromPoint(p);
  const lat = round15((ll.lat * 180) / Math.PI);
  const lng = Math.abs(lat) === 90 ? 0 : round15((ll.lng * 180) / Math.PI);
  return [lng === 0 ? 0 : lng, lat === 0 ? 0 : lat];
}

const loopCache = new WeakMap<Ring, s2.Loop>();
export function loopOf(r: Ring): s2.Loop {
  let l = loopCache.get(r);
  if (!l) {
    l = new s2.Loop(r.map(s2p));
    loopCache.set(r, l);
  }
  return l;
}

export const sameLL = (a: LngLat, b: LngLat): boolean => s2p(a).equals(s2p(b));

// ---------------------------------------------------------------- coordinates

/** Latitude must be in range; longitude wraps into [-180, 180] (the service takes it modulo 360). */
export function checkLL(lng: number, lat: number): LngLat {
  if (!Number.isFinite(lng) || !Number.isFinite(lat)) geoFail('Coordinates must be finite numbers');
  if (lat < -90 || lat > 90) geoFail(`Latitude must be between -90 and 90 degrees.`);
  if (lng > 180 || lng < -180) {
    lng = ((lng % 360) + 360) % 360;
    if (lng > 180) lng -= 360;
  }
  return [lng === 0 ? 0 : lng, lat === 0 ? 0 : lat];
}

// ---------------------------------------------------------------- building normalized values

const dedupe = (vs: LngLat[]): LngLat[] => vs.filter((v, i) => i === 0 || !sameLL(v, vs[i - 1]!));

/** A polyline drops repeated consecutive vertices; one left over makes it a point. */
export function addLine(acc: { points: LngLat[]; lines: LngLat[][] }, vs: LngLat[]): void {
  const d = dedupe(vs);
  if (d.length === 0) return;
  if (d.length === 1) acc.points.push(d[0]!);
  else acc.lines.push(d);
}

/** Loop area (steradians) for the ring as oriented (interior on its left). */
export const ringArea = (r: Ring): number => loopOf(r).area();

/**
 * Turns a closed (or, with `autoClose`, open) vertex list into a ring: drops the
 * closing and repeated vertices, checks that the loop is valid (3 distinct
 * vertices, no crossing edges).
 */
export function makeRing(vs: LngLat[], autoClose = false): Ring {
  if (vs.length > 0 && !sameLL(vs[0]!, vs[vs.length - 1]!)) {
    if (!autoClose) geoFail('Invalid polygon loop: the first and last vertices must be the same');
    vs = [...vs, vs[0]!];
  }
  let d = dedupe(vs);
  if (d.length > 1) d = d.slice(0, -1);
  const keys = d.map((v) => `${s2p(v).x},${s2p(v).y},${s2p(v).z}`);
  const distinct = new Set(keys).size;
  if (distinct < 3) geoFail(`Invalid polygon loop: Polygon loop should have at least 3 unique vertices, but only had ${distinct}`);
  const pts = d.map(s2p);
  const n = pts.length;
  // A vertex met twice (not consecutively: those were dropped) is S2's duplicate-vertex error, named by the two
  // edges ending there (geospatial-data.md, Handling improperly formatted spatial data).
  const seen = new Map<string, number>();
  for (let j = 0; j < n; j++) {
    const i = seen.get(keys[j]!);
    if (i !== undefined) {
      const [a, b] = [(i + n - 1) % n, j - 1].sort((x, y) => x - y);
      geoFail(`Invalid polygon loop: Edge ${a} has duplicate vertex with edge ${b}`);
    }
    seen.set(keys[j]!, j);
  }
  const edges = pts.map((p, i) => [p, pts[(i + 1) % n]!] as const);
  // Adjacent edges share a vertex and do not count.
  const hit = findCrossing(edges, null, (i, j) => j === i + 1 || (i === 0 && j === n - 1));
  if (hit) geoFail(`Invalid polygon loop: Edge ${hit[0]} crosses edge ${hit[1]}`);
  for (let i = 0; i < n; i++) {
    const a = pts[i]!;
    const b = pts[(i + 1) % n]!;
    if (a.vector.dot(b.vector) < -1 + 1e-15) geoFail(`Invalid polygon loop: Edge ${i} has antipodal vertices`);
  }
  return d;
}

const reversed = (r: Ring): Ring => [...r].reverse();

/**
 * A polygon from rings (shell first). Unoriented (the default of the
 * constructors): each ring bounds the smaller of its two sides, so the shell
 * is made counter-clockwise and holes clockwise. Oriented: the rings are used
 * as given (interior on the left of every ring).
 */
export function makePoly(rings: Ring[], oriented: boolean): Poly {
  if (oriented) return rings;
  return rings.map((r, i) => {
    const big = ringArea(r) > 2 * Math.PI;
    return (i === 0 ? big : !big) ? reversed(r) : r;
  });
}

// ---------------------------------------------------------------- SQL values

/**
 * The stored form: points sorted by S2 cell id and deduplicated, as the
 * service's S2 point vectors come out (MULTIPOINT(1 1, 2 2, 4 4, 5 2) prints
 * as MULTIPOINT(1 1, 2 2, 5 2, 4 4)).
 */
export function normalize(g: Geo): Geo {
  if (g.points.length < 2) return g;
  const keyed = g.points.map((p) => ({ p, id: s2.cellid.fromPoint(s2p(p)) }));
  keyed.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const points = keyed.filter((k, i) => i === 0 || !sameLL(k.p, keyed[i - 1]!.p)).map((k) => k.p);
  return { ...g, points };
}

export function geoValue(g: Geo, print: (g: Geo) => string): Geography {
  const n = normalize(g);
  return new Geography(n, print(n));
}

// Values read back from storage or JSON carry only their text; parsed once, the shape kept on the value
// (not in a WeakMap: a million kept values' ephemerons made each full GC several times slower).
export function geoOf(v: Value, parse: (wkt: string) => Geo): Geo {
  const gv = v as Geography;
  if (gv.shape) return gv.shape as Geo;
  const g = withName('ST_GeogFromText', () => parse(gv.wkt));
  gv.shape = g;
  return g;
}

/** All vertices: points, polyline vertices, ring vertices. */
export function vertices(g: Geo): LngLat[] {
  return [...g.points, ...g.lines.flat(), ...g.polys.flat(2)];
}

export function dimension(g: Geo): number {
  return g.polys.length ? 2 : g.lines.length ? 1 : g.points.length ? 0 : -1;
}
