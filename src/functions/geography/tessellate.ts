// Conversion between geodesic edges and planar (longitude/latitude) edges, for
// GeoJSON and `planar => TRUE`: GeoJSON edges are straight lines in degrees,
// GEOGRAPHY edges are geodesics, so the service inserts vertices until the two
// stay within 10 meters of each other (the S2 edge tessellator's scheme:
// compare the two curves at two interior fractions of the edge, split at the
// midpoint while the estimate exceeds the scaled tolerance).
import { r3, s2 } from 's2js';
import type { LngLat } from './model.js';
import { geodesicAt as geodesicAtP } from './sphere.js';

const geodesicAt = (a: Vec, b: Vec, t: number): Vec => geodesicAtP(s2.Point.fromVector(a), s2.Point.fromVector(b), t).vector;

type Vec = r3.Vector;
type XY = readonly [number, number];

/** 10 m on the S2 Earth (radius 6371010 m), in radians. */
const TOLERANCE = 10 / 6371010;
/** Fractions where the error of an edge is estimated, and the factor that turns that estimate into a bound. */
const T1 = 0.31215691082030676;
const SCALE = 0.83829992569888509;
const chord2 = (angle: number): number => {
  const c = 2 * Math.sin(angle / 2);
  return c * c;
};
const SCALED_TOLERANCE = chord2(SCALE * TOLERANCE);

/** IEEE remainder: x - y * round-half-even(x / y). */
function remainder(x: number, y: number): number {
  const q = x / y;
  let n = Math.round(q);
  if (Math.abs(q - Math.trunc(q)) === 0.5 && n % 2 !== 0) n -= 1;
  return x - n * y;
}

const toVec = (xy: XY): Vec => s2.Point.fromLatLng(s2.LatLng.fromDegrees(xy[1], remainder(xy[0], 360))).vector;
function toXY(v: Vec): XY {
  return [(Math.atan2(v.y, v.x) * 180) / Math.PI, (Math.atan2(v.z, Math.hypot(v.x, v.y)) * 180) / Math.PI];
}
/** b moved by a multiple of 360 degrees of longitude so that the edge a-b is the short way round. */
function wrap(a: XY, b: XY): XY {
  return Math.abs(b[0] - a[0]) > 180 ? [a[0] + remainder(b[0] - a[0], 360), b[1]] : b;
}
const lerp = (t: number, a: XY, b: XY): XY => [(1 - t) * a[0] + t * b[0], (1 - t) * a[1] + t * b[1]];

/** Squared chord distance between the geodesic and the planar edge, estimated at two fractions. */
function estimateError(pa: XY, a: Vec, pb: XY, b: Vec): number {
  // Edges longer than 90 degrees are always split: the estimate is unreliable there.
  if (a.dot(b) < -1e-14) return Infinity;
  let worst = 0;
  for (const t of [T1, 1 - T1]) {
    const onSphere = geodesicAt(a, b, t);
    const onPlane = toVec(lerp(t, pa, pb));
    worst = Math.max(worst, onSphere.sub(onPlane).norm() ** 2);
  }
  return worst;
}

const asLL = (xy: XY): LngLat => {
  const lng = remainder(xy[0], 360);
  return [lng === -180 && xy[0] > 0 ? 180 : lng, xy[1]];
};

/**
 * Geodesic polyline -> vertices of planar edges within 10 m of it
 * (ST_ASGEOJSON). Inserted vertices lie on the geodesics.
 */
export function geodesicToPlanar(vs: readonly LngLat[]): LngLat[] {
  if (vs.length < 2) return [...vs];
  const out: LngLat[] = [vs[0]!];
  const rec = (pa: XY, a: Vec, pbIn: XY, b: Vec, end: LngLat | null, depth: number): void => {
    const pb = wrap(pa, pbIn);
    if (depth > 30 || estimateError(pa, a, pb, b) <= SCALED_TOLERANCE) {
      out.push(end ?? asLL(pb));
      return;
    }
    const mid = a.add(b).normalize();
    const pm = wrap(pa, toXY(mid));
    rec(pa, a, pm, mid, null, depth + 1);
    rec(pm, mid, pb, b, end, depth + 1);
  };
  for (let i = 1; i < vs.length; i++) {
    const a = vs[i - 1]!;
    const b = vs[i]!;
    rec(a, toVec(a), b, toVec(b), b, 0);
  }
  return out;
}

/**
 * Planar polyline (degrees) -> vertices whose geodesic edges stay within 10 m
 * of it (ST_GEOGFROMGEOJSON, planar => TRUE). Inserted vertices are planar
 * midpoints.
 */
export function planarToGeodesic(vs: readonly LngLat[]): LngLat[] {
  if (vs.length < 2) return [...vs];
  const out: LngLat[] = [vs[0]!];
  const rec = (pa: XY, a: Vec, pbIn: XY, b: Vec, end: LngLat | null, depth: number): void => {
    const pb = wrap(pa, pbIn);
    if (depth > 30 || estimateError(pa, a, pb, b) <= SCALED_TOLERANCE) {
      out.push(end ?? asLL(pb));
      return;
    }
    const pm = lerp(0.5, pa, pb);
    const mid = toVec(pm);
    rec(pa, a, pm, mid, null, depth + 1);
    rec(pm, mid, pb, b, end, depth + 1);
  };
  for (let i = 1; i < vs.length; i++) {
    const a = vs[i - 1]!;
    const b = vs[i]!;
    rec(a, toVec(a), b, toVec(b), b, 0);
  }
  return out;
}
