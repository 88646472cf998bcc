// Longitude/latitude bounding boxes (ST_BOUNDINGBOX, ST_EXTENT): latitude
// extremes include the poleward bulge of geodesic edges; the longitude range
// is the shortest arc of the circle covering every vertex and edge, so a box
// across the antimeridian has xmax beyond 180 (xmin 172, xmax 230).
import type { s2 } from 's2js';
import { loopOf, s2p, type Geo, type LngLat } from './model.js';

export interface Box {
  xmin: number;
  ymin: number;
  xmax: number;
  ymax: number;
}

/** Longitude intervals [start, start + span] (degrees, span in [0, 360]) and a latitude range. */
export interface Extent {
  lng: [number, number][];
  lat: [number, number];
}

const deg = (r: number) => (r * 180) / Math.PI;

/** Highest and lowest latitude reached inside the geodesic a-b, when not at an endpoint. */
function edgeLatExtremes(a: s2.Point, b: s2.Point): number[] {
  const n = a.vector.cross(b.vector);
  if (n.norm() === 0) return [];
  const nn = n.normalize();
  const out: number[] = [];
  for (const sign of [1, -1]) {
    // The point of the great circle closest to the pole: the pole's direction minus its normal component.
    const zx = -nn.z * nn.x;
    const zy = -nn.z * nn.y;
    const zz = 1 - nn.z * nn.z;
    const len = Math.hypot(zx, zy, zz);
    if (len === 0) continue;
    const [vx, vy, vz] = [(sign * zx) / len, (sign * zy) / len, (sign * zz) / len];
    // Inside the arc when it is on the inner side of both end planes.
    const ca = nn.cross(a.vector);
    const cb = b.vector.cross(nn);
    if (ca.x * vx + ca.y * vy + ca.z * vz > 0 && cb.x * vx + cb.y * vy + cb.z * vz > 0) out.push(deg(Math.asin(Math.max(-1, Math.min(1, vz)))));
  }
  return out;
}

export function extentOf(g: Geo): Extent | null {
  const lng: [number, number][] = [];
  let lo = Infinity;
  let hi = -Infinity;
  const vertex = (v: LngLat) => {
    lo = Math.min(lo, v[1]);
    hi = Math.max(hi, v[1]);
    lng.push([v[0], 0]);
  };
  const edge = (a: LngLat, b: LngLat) => {
    for (const y of edgeLatExtremes(s2p(a), s2p(b))) {
      lo = Math.min(lo, y);
      hi = Math.max(hi, y);
    }
    let d = b[0] - a[0];
    if (d > 180) d -= 360;
    if (d < -180) d += 360;
    lng.push(d >= 0 ? [a[0], d] : [b[0], -d]);
  };
  g.points.forEach(vertex);
  for (const l of g.lines) {
    l.forEach(vertex);
    for (let i = 1; i < l.length; i++) edge(l[i - 1]!, l[i]!);
  }
  for (const p of g.polys) {
    if (p.length === 0) return { lng: [[-180, 360]], lat: [-90, 90] };
    for (const r of p) {
      r.forEach(vertex);
      r.forEach((v, i) => edge(v, r[(i + 1) % r.length]!));
    }
    // A polygon around a pole spans every longitude up to that pole.
    const north = s2p([0, 90]);
    const south = s2p([0, -90]);
    if (p.every((r) => loopOf(r).containsPoint(north))) {
      hi = 90;
      lng.push([-180, 360]);
    }
    if (p.every((r) => loopOf(r).containsPoint(south))) {
      lo = -90;
      lng.push([-180, 360]);
    }
  }
  if (lng.length === 0) return null;
  return { lng, lat: [lo, hi] };
}

/** The shortest longitude arc covering all intervals: the complement of the widest gap between them. */
export function toBox(e: Extent, fullAt180 = false): Box {
  const norm = (x: number) => ((((x + 180) % 360) + 360) % 360) - 180;
  const iv = e.lng.map(([s, span]) => [norm(s), norm(s) + span] as [number, number]).sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [s, t] of iv) {
    const last = merged[merged.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], t);
    else merged.push([s, t]);
  }
  // Intervals running past +180 may swallow the first ones (which start near -180).
  while (merged.length > 1 && merged[merged.length - 1]![1] >= merged[0]![0] + 360) {
    const first = merged.shift()!;
    const last = merged[merged.length - 1]!;
    last[1] = Math.max(last[1], first[1] + 360);
  }
  const box = (xmin: number, xmax: number): Box => {
    if (xmax - xmin >= 360 || (fullAt180 && xmax - xmin >= 180)) return { xmin: -180, ymin: e.lat[0], xmax: 180, ymax: e.lat[1] };
    return { xmin, ymin: e.lat[0], xmax, ymax: e.lat[1] };
  };
  if (merged.length === 1) return box(merged[0]![0], merged[0]![1]);
  // Widest gap: between consecutive intervals, or the wrap from the last back to the first.
  let best = merged[0]![0] + 360 - merged[merged.length - 1]![1];
  let arc: [number, number] = [merged[0]![0], merged[merged.length - 1]![1]];
  for (let i = 0; i + 1 < merged.length; i++) {
    const gap = merged[i + 1]![0] - merged[i]![1];
    if (gap > best) {
      best = gap;
      arc = [merged[i + 1]![0], merged[i]![1] + 360];
    }
  }
  return box(arc[0], arc[1]);
}
