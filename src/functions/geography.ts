// GEOGRAPHY: a compact spherical implementation of the common ST_ functions.
// Shapes are GeoJSON-like coordinate trees ([lng, lat] in degrees); distances,
// lengths and areas are computed on a sphere of radius 6371008.8 m, as the
// service does. Predicates on polygons use point-in-polygon in lng/lat space.
import { T } from '../types/types.js';
import { Geography, type Value } from '../types/values.js';
import { formatDouble } from './format-number.js';
import { defineScalar, opt, sig } from './signature.js';
import { fail, rowKernel } from './vec.js';
import { asig, defineAggregate } from './signature.js';
import type { GroupsAccumulator } from './registry.js';
import { vectorFromValues } from '../types/vector.js';
import { valuesOf } from './vec.js';

const R = 6371008.8;
type Pt = [number, number];
export type Shape =
  | { type: 'Point'; c: Pt | null }
  | { type: 'LineString'; c: Pt[] }
  | { type: 'Polygon'; c: Pt[][] }
  | { type: 'MultiPoint'; c: Pt[] }
  | { type: 'MultiLineString'; c: Pt[][] }
  | { type: 'MultiPolygon'; c: Pt[][][] }
  | { type: 'GeometryCollection'; c: Shape[] };

const num = (x: number): string => formatDouble(x);
const ptStr = (p: Pt): string => `${num(p[0])} ${num(p[1])}`;

export function toWkt(s: Shape): string {
  switch (s.type) {
    case 'Point':
      return s.c ? `POINT(${ptStr(s.c)})` : 'POINT EMPTY';
    case 'LineString':
      return s.c.length ? `LINESTRING(${s.c.map(ptStr).join(', ')})` : 'LINESTRING EMPTY';
    case 'Polygon':
      return s.c.length ? `POLYGON(${s.c.map((r) => `(${r.map(ptStr).join(', ')})`).join(', ')})` : 'POLYGON EMPTY';
    case 'MultiPoint':
      return `MULTIPOINT(${s.c.map(ptStr).join(', ')})`;
    case 'MultiLineString':
      return `MULTILINESTRING(${s.c.map((l) => `(${l.map(ptStr).join(', ')})`).join(', ')})`;
    case 'MultiPolygon':
      return `MULTIPOLYGON(${s.c.map((p) => `(${p.map((r) => `(${r.map(ptStr).join(', ')})`).join(', ')})`).join(', ')})`;
    case 'GeometryCollection':
      return s.c.length ? `GEOMETRYCOLLECTION(${s.c.map(toWkt).join(', ')})` : 'GEOMETRYCOLLECTION EMPTY';
  }
}

export function geo(s: Shape): Geography {
  return new Geography(s, toWkt(s));
}
const shapeOf = (v: Value): Shape => (v as Geography).shape as Shape;

function checkPt(p: Pt): Pt {
  if (!(p[1] >= -90 && p[1] <= 90) || !Number.isFinite(p[0])) fail(`Latitude must be between -90 and 90 degrees.`);
  let lng = p[0];
  if (lng > 180 || lng < -180) lng = ((((lng + 180) % 360) + 360) % 360) - 180;
  return [lng, p[1]];
}

// ---------------------------------------------------------------- WKT / GeoJSON / WKB parsing

export function parseWkt(text: string): Shape {
  const s = text.trim();
  let i = 0;
  const bad = (): never => fail(`ST_GeogFromText failed: Invalid WKT: ${text}`);
  const ws = () => {
    while (i < s.length && /\s/.test(s[i]!)) i++;
  };
  const word = (): string => {
    ws();
    const m = /^[A-Za-z]+/.exec(s.slice(i));
    if (!m) bad();
    i += m![0].length;
    return m![0].toUpperCase();
  };
  const expect = (c: string) => {
    ws();
    if (s[i] !== c) bad();
    i++;
  };
  const peek = (): string => {
    ws();
    return s[i] ?? '';
  };
  const point = (): Pt => {
    ws();
    const m = /^([-+]?[\d.eE+-]+)\s+([-+]?[\d.eE+-]+)/.exec(s.slice(i));
    if (!m) bad();
    i += m![0].length;
    return checkPt([Number(m![1]), Number(m![2])]);
  };
  const list = <X>(item: () => X): X[] => {
    expect('(');
    const out = [item()];
    while (peek() === ',') {
      i++;
      out.push(item());
    }
    expect(')');
    return out;
  };
  const empty = (): boolean => {
    ws();
    if (s.slice(i, i + 5).toUpperCase() === 'EMPTY') {
      i += 5;
      return true;
    }
    return false;
  };
  const geom = (): Shape => {
    const w = word();
    switch (w) {
      case 'POINT':
        return empty() ? { type: 'Point', c: null } : { type: 'Point', c: list(point)[0]! };
      case 'LINESTRING':
        return { type: 'LineString', c: empty() ? [] : list(point) };
      case 'POLYGON':
        return { type: 'Polygon', c: empty() ? [] : list(() => list(point)) };
      case 'MULTIPOINT':
        return { type: 'MultiPoint', c: empty() ? [] : list(() => (peek() === '(' ? list(point)[0]! : point())) };
      case 'MULTILINESTRING':
        return { type: 'MultiLineString', c: empty() ? [] : list(() => list(point)) };
      case 'MULTIPOLYGON':
        return { type: 'MultiPolygon', c: empty() ? [] : list(() => list(() => list(point))) };
      case 'GEOMETRYCOLLECTION':
        return { type: 'GeometryCollection', c: empty() ? [] : list(geom) };
    }
    return bad();
  };
  const g = geom();
  ws();
  if (i !== s.length) bad();
  return g;
}

function parseGeoJson(text: string): Shape {
  let o: { type: string; coordinates?: unknown; geometries?: unknown[] };
  try {
    o = JSON.parse(text);
  } catch {
    fail(`ST_GeogFromGeoJSON failed: Invalid GeoJSON: ${text}`);
  }
  const conv = (g: { type: string; coordinates?: unknown; geometries?: unknown[] }): Shape => {
    const c = g.coordinates as never;
    const p = (x: number[]): Pt => checkPt([x[0]!, x[1]!]);
    switch (g.type) {
      case 'Point':
        return { type: 'Point', c: c && (c as number[]).length ? p(c) : null };
      case 'LineString':
        return { type: 'LineString', c: (c as number[][]).map(p) };
      case 'Polygon':
        return { type: 'Polygon', c: (c as number[][][]).map((r) => r.map(p)) };
      case 'MultiPoint':
        return { type: 'MultiPoint', c: (c as number[][]).map(p) };
      case 'MultiLineString':
        return { type: 'MultiLineString', c: (c as number[][][]).map((l) => l.map(p)) };
      case 'MultiPolygon':
        return { type: 'MultiPolygon', c: (c as number[][][][]).map((q) => q.map((r) => r.map(p))) };
      case 'GeometryCollection':
        return { type: 'GeometryCollection', c: (g.geometries ?? []).map((x) => conv(x as typeof g)) };
    }
    fail(`ST_GeogFromGeoJSON failed: unknown type ${g.type}`);
  };
  return conv(o);
}

function parseWkb(b: Uint8Array): Shape {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let i = 0;
  const bad = (): never => fail('ST_GeogFromWkb failed: Invalid WKB');
  const geom = (): Shape => {
    if (i + 5 > b.length) bad();
    const le = b[i] === 1;
    i++;
    const t = dv.getUint32(i, le) % 1000;
    i += 4;
    const u32 = () => {
      const x = dv.getUint32(i, le);
      i += 4;
      return x;
    };
    const pt = (): Pt => {
      if (i + 16 > b.length) bad();
      const x = dv.getFloat64(i, le);
      const y = dv.getFloat64(i + 8, le);
      i += 16;
      return checkPt([x, y]);
    };
    const pts = (): Pt[] => Array.from({ length: u32() }, pt);
    switch (t) {
      case 1: {
        const p = pt();
        return { type: 'Point', c: Number.isNaN(p[0]) ? null : p };
      }
      case 2:
        return { type: 'LineString', c: pts() };
      case 3:
        return { type: 'Polygon', c: Array.from({ length: u32() }, pts) };
      case 4:
        return { type: 'MultiPoint', c: Array.from({ length: u32() }, () => (geom() as { c: Pt }).c) };
      case 5:
        return { type: 'MultiLineString', c: Array.from({ length: u32() }, () => (geom() as { c: Pt[] }).c) };
      case 6:
        return { type: 'MultiPolygon', c: Array.from({ length: u32() }, () => (geom() as { c: Pt[][] }).c) };
      case 7:
        return { type: 'GeometryCollection', c: Array.from({ length: u32() }, geom) };
    }
    return bad();
  };
  return geom();
}

function toWkb(s: Shape): Uint8Array {
  const out: number[] = [];
  const u32 = (x: number) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, x, true);
    out.push(...b);
  };
  const f64 = (x: number) => {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, x, true);
    out.push(...b);
  };
  const pts = (p: Pt[]) => {
    u32(p.length);
    for (const q of p) {
      f64(q[0]);
      f64(q[1]);
    }
  };
  const w = (g: Shape) => {
    out.push(1);
    switch (g.type) {
      case 'Point':
        u32(1);
        f64(g.c ? g.c[0] : NaN);
        f64(g.c ? g.c[1] : NaN);
        break;
      case 'LineString':
        u32(2);
        pts(g.c);
        break;
      case 'Polygon':
        u32(3);
        u32(g.c.length);
        g.c.forEach(pts);
        break;
      case 'MultiPoint':
        u32(4);
        u32(g.c.length);
        g.c.forEach((p) => w({ type: 'Point', c: p }));
        break;
      case 'MultiLineString':
        u32(5);
        u32(g.c.length);
        g.c.forEach((l) => w({ type: 'LineString', c: l }));
        break;
      case 'MultiPolygon':
        u32(6);
        u32(g.c.length);
        g.c.forEach((p) => w({ type: 'Polygon', c: p }));
        break;
      case 'GeometryCollection':
        u32(7);
        u32(g.c.length);
        g.c.forEach(w);
    }
  };
  w(s);
  return Uint8Array.from(out);
}

function toGeoJson(s: Shape): string {
  const p = (q: Pt) => `[${num(q[0])}, ${num(q[1])}]`;
  switch (s.type) {
    case 'Point':
      return s.c ? `{ "type": "Point", "coordinates": ${p(s.c)} }` : `{ "type": "GeometryCollection", "geometries": [] }`;
    case 'LineString':
    case 'MultiPoint':
      return `{ "type": "${s.type}", "coordinates": [${s.c.map(p).join(', ')}] }`;
    case 'Polygon':
    case 'MultiLineString':
      return `{ "type": "${s.type}", "coordinates": [${s.c.map((r) => `[${r.map(p).join(', ')}]`).join(', ')}] }`;
    case 'MultiPolygon':
      return `{ "type": "MultiPolygon", "coordinates": [${s.c.map((q) => `[${q.map((r) => `[${r.map(p).join(', ')}]`).join(', ')}]`).join(', ')}] }`;
    case 'GeometryCollection':
      return `{ "type": "GeometryCollection", "geometries": [${s.c.map(toGeoJson).join(', ')}] }`;
  }
}

// ---------------------------------------------------------------- measures

const rad = (d: number) => (d * Math.PI) / 180;
function hav(a: Pt, b: Pt): number {
  const dLat = rad(b[1] - a[1]);
  const dLng = rad(b[0] - a[0]);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a[1])) * Math.cos(rad(b[1])) * Math.sin(dLng / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(h)));
}
function points(s: Shape): Pt[] {
  switch (s.type) {
    case 'Point':
      return s.c ? [s.c] : [];
    case 'LineString':
    case 'MultiPoint':
      return s.c;
    case 'Polygon':
    case 'MultiLineString':
      return s.c.flat();
    case 'MultiPolygon':
      return s.c.flat(2);
    case 'GeometryCollection':
      return s.c.flatMap(points);
  }
}
function lines(s: Shape): Pt[][] {
  switch (s.type) {
    case 'LineString':
      return [s.c];
    case 'MultiLineString':
      return s.c;
    case 'GeometryCollection':
      return s.c.flatMap(lines);
    default:
      return [];
  }
}
function polygons(s: Shape): Pt[][][] {
  switch (s.type) {
    case 'Polygon':
      return s.c.length ? [s.c] : [];
    case 'MultiPolygon':
      return s.c;
    case 'GeometryCollection':
      return s.c.flatMap(polygons);
    default:
      return [];
  }
}
const pathLength = (l: Pt[]): number => {
  let d = 0;
  for (let i = 1; i < l.length; i++) d += hav(l[i - 1]!, l[i]!);
  return d;
};
/** Spherical ring area (signed-free) by the excess formula. */
function ringArea(r: Pt[]): number {
  let total = 0;
  for (let i = 0; i + 1 < r.length; i++) {
    const [l1, p1] = [rad(r[i]![0]), rad(r[i]![1])];
    const [l2, p2] = [rad(r[i + 1]![0]), rad(r[i + 1]![1])];
    total += (l2 - l1) * (2 + Math.sin(p1) + Math.sin(p2));
  }
  return Math.abs((total * R * R) / 2);
}
function area(s: Shape): number {
  let a = 0;
  for (const p of polygons(s)) {
    a += ringArea(p[0]!);
    for (const h of p.slice(1)) a -= ringArea(h);
  }
  return a;
}
function inRing(p: Pt, r: Pt[]): boolean {
  let inside = false;
  for (let i = 0, j = r.length - 1; i < r.length; j = i++) {
    const [xi, yi] = r[i]!;
    const [xj, yj] = r[j]!;
    if (yi > p[1] !== yj > p[1] && p[0] < ((xj - xi) * (p[1] - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}
function pointInShape(p: Pt, s: Shape): boolean {
  for (const poly of polygons(s)) if (inRing(p, poly[0]!) && !poly.slice(1).some((h) => inRing(p, h))) return true;
  return points(s).some((q) => q[0] === p[0] && q[1] === p[1]);
}
/** Distance point -> segment on the sphere, approximated by sampling the great-circle-ish segment in lng/lat space. */
function pointSegDist(p: Pt, a: Pt, b: Pt): number {
  let best = Math.min(hav(p, a), hav(p, b));
  let lo = 0, hi = 1;
  for (let it = 0; it < 40; it++) {
    const m1 = lo + (hi - lo) / 3;
    const m2 = hi - (hi - lo) / 3;
    const q1: Pt = [a[0] + (b[0] - a[0]) * m1, a[1] + (b[1] - a[1]) * m1];
    const q2: Pt = [a[0] + (b[0] - a[0]) * m2, a[1] + (b[1] - a[1]) * m2];
    const d1 = hav(p, q1);
    const d2 = hav(p, q2);
    best = Math.min(best, d1, d2);
    if (d1 < d2) hi = m2;
    else lo = m1;
  }
  return best;
}
function segments(s: Shape): [Pt, Pt][] {
  const out: [Pt, Pt][] = [];
  const add = (l: Pt[]) => {
    for (let i = 1; i < l.length; i++) out.push([l[i - 1]!, l[i]!]);
  };
  lines(s).forEach(add);
  polygons(s).forEach((p) => p.forEach(add));
  return out;
}
function distance(a: Shape, b: Shape): number | null {
  const pa = points(a);
  const pb = points(b);
  if (pa.length === 0 || pb.length === 0) return null;
  if (pa.some((p) => pointInShape(p, b)) || pb.some((p) => pointInShape(p, a))) return 0;
  let best = Infinity;
  for (const p of pa) for (const q of pb) best = Math.min(best, hav(p, q));
  for (const p of pa) for (const [x, y] of segments(b)) best = Math.min(best, pointSegDist(p, x, y));
  for (const p of pb) for (const [x, y] of segments(a)) best = Math.min(best, pointSegDist(p, x, y));
  return best;
}
function dimension(s: Shape): number {
  switch (s.type) {
    case 'Point':
    case 'MultiPoint':
      return points(s).length ? 0 : -1;
    case 'LineString':
    case 'MultiLineString':
      return 1;
    case 'Polygon':
    case 'MultiPolygon':
      return 2;
    case 'GeometryCollection':
      return s.c.length ? Math.max(...s.c.map(dimension)) : -1;
  }
}

const B32 = '0123456789bcdefghjkmnpqrstuvwxyz';
function geohash(p: Pt, len: number): string {
  let [lngLo, lngHi, latLo, latHi] = [-180, 180, -90, 90];
  let out = '';
  let bit = 0, ch = 0, even = true;
  while (out.length < len) {
    if (even) {
      const mid = (lngLo + lngHi) / 2;
      if (p[0] >= mid) {
        ch = (ch << 1) | 1;
        lngLo = mid;
      } else {
        ch <<= 1;
        lngHi = mid;
      }
    } else {
      const mid = (latLo + latHi) / 2;
      if (p[1] >= mid) {
        ch = (ch << 1) | 1;
        latLo = mid;
      } else {
        ch <<= 1;
        latHi = mid;
      }
    }
    even = !even;
    if (++bit === 5) {
      out += B32[ch];
      bit = 0;
      ch = 0;
    }
  }
  return out;
}

// ---------------------------------------------------------------- registration

export function registerGeography(): void {
  const G = T.GEOGRAPHY;
  defineScalar('ST_GEOGPOINT', [sig(['FLOAT64', 'FLOAT64'], 'GEOGRAPHY', rowKernel(G, (v) => geo({ type: 'Point', c: checkPt([v[0] as number, v[1] as number]) })))]);
  defineScalar('ST_GEOGFROMTEXT', [sig(['STRING', opt('BOOL')], 'GEOGRAPHY', rowKernel(G, (v) => geo(parseWkt(v[0] as string))))], { aliases: ['ST_GEOGFROM', 'ST_GEOMETRYFROMTEXT'] });
  defineScalar('ST_GEOGFROMGEOJSON', [sig(['STRING', opt('BOOL')], 'GEOGRAPHY', rowKernel(G, (v) => geo(parseGeoJson(v[0] as string))))]);
  defineScalar('ST_GEOGFROMWKB', [
    sig(['BYTES', opt('BOOL')], 'GEOGRAPHY', rowKernel(G, (v) => geo(parseWkb(v[0] as Uint8Array)))),
    sig(['STRING', opt('BOOL')], 'GEOGRAPHY', rowKernel(G, (v) => geo(parseWkb(Uint8Array.from(Buffer.from(v[0] as string, 'hex')))))),
  ]);
  defineScalar('ST_ASTEXT', [sig(['GEOGRAPHY'], 'STRING', rowKernel(T.STRING, (v) => (v[0] as Geography).wkt))]);
  defineScalar('ST_ASGEOJSON', [sig(['GEOGRAPHY'], 'STRING', rowKernel(T.STRING, (v) => toGeoJson(shapeOf(v[0]!))))]);
  defineScalar('ST_ASBINARY', [sig(['GEOGRAPHY'], 'BYTES', rowKernel(T.BYTES, (v) => toWkb(shapeOf(v[0]!))))]);
  const coord = (k: 0 | 1, name: string) =>
    sig(['GEOGRAPHY'], 'FLOAT64', rowKernel(T.FLOAT64, (v) => {
      const s = shapeOf(v[0]!);
      if (s.type !== 'Point') fail(`${name} expects a point`);
      return s.c ? s.c[k] : null;
    }));
  defineScalar('ST_X', [coord(0, 'ST_X')]);
  defineScalar('ST_Y', [coord(1, 'ST_Y')]);
  defineScalar('ST_DISTANCE', [sig(['GEOGRAPHY', 'GEOGRAPHY', opt('BOOL')], 'FLOAT64', rowKernel(T.FLOAT64, (v) => distance(shapeOf(v[0]!), shapeOf(v[1]!))))]);
  defineScalar('ST_DWITHIN', [sig(['GEOGRAPHY', 'GEOGRAPHY', 'FLOAT64', opt('BOOL')], 'BOOL', rowKernel(T.BOOL, (v) => {
    const d = distance(shapeOf(v[0]!), shapeOf(v[1]!));
    return d === null ? false : d <= (v[2] as number);
  }))]);
  defineScalar('ST_LENGTH', [sig(['GEOGRAPHY', opt('BOOL')], 'FLOAT64', rowKernel(T.FLOAT64, (v) => lines(shapeOf(v[0]!)).reduce((a, l) => a + pathLength(l), 0)))]);
  defineScalar('ST_PERIMETER', [sig(['GEOGRAPHY', opt('BOOL')], 'FLOAT64', rowKernel(T.FLOAT64, (v) => polygons(shapeOf(v[0]!)).flat().reduce((a, r) => a + pathLength(r), 0)))]);
  defineScalar('ST_AREA', [sig(['GEOGRAPHY', opt('BOOL')], 'FLOAT64', rowKernel(T.FLOAT64, (v) => area(shapeOf(v[0]!))))]);
  defineScalar('ST_NUMPOINTS', [sig(['GEOGRAPHY'], 'INT64', rowKernel(T.INT64, (v) => BigInt(points(shapeOf(v[0]!)).length)))], { aliases: ['ST_NPOINTS'] });
  defineScalar('ST_DIMENSION', [sig(['GEOGRAPHY'], 'INT64', rowKernel(T.INT64, (v) => BigInt(dimension(shapeOf(v[0]!)))))]);
  defineScalar('ST_ISEMPTY', [sig(['GEOGRAPHY'], 'BOOL', rowKernel(T.BOOL, (v) => points(shapeOf(v[0]!)).length === 0))]);
  defineScalar('ST_GEOHASH', [sig(['GEOGRAPHY', opt('INT64')], 'STRING', rowKernel(T.STRING, (v) => {
    const s = shapeOf(v[0]!);
    if (s.type !== 'Point' || !s.c) return null;
    return geohash(s.c, v.length > 1 ? Number(v[1] as bigint) : 20);
  }))]);
  defineScalar('ST_MAKELINE', [
    sig(['GEOGRAPHY', 'GEOGRAPHY'], 'GEOGRAPHY', rowKernel(G, (v) => geo({ type: 'LineString', c: [...points(shapeOf(v[0]!)), ...points(shapeOf(v[1]!))] }))),
    sig(['ARRAY<GEOGRAPHY>'], 'GEOGRAPHY', rowKernel(G, (v) => geo({ type: 'LineString', c: (v[0] as Value[]).flatMap((g) => (g === null ? [] : points(shapeOf(g)))) }))),
  ]);
  defineScalar('ST_MAKEPOLYGON', [sig(['GEOGRAPHY', { type: 'ARRAY<GEOGRAPHY>', optional: true }], 'GEOGRAPHY', rowKernel(G, (v) => {
    const close = (r: Pt[]): Pt[] => (r.length && (r[0]![0] !== r[r.length - 1]![0] || r[0]![1] !== r[r.length - 1]![1]) ? [...r, r[0]!] : r);
    const shell = close(points(shapeOf(v[0]!)));
    const holes = v.length > 1 ? (v[1] as Value[]).map((h) => close(points(shapeOf(h!)))) : [];
    return geo({ type: 'Polygon', c: [shell, ...holes] });
  }))]);
  defineScalar('ST_CENTROID', [sig(['GEOGRAPHY'], 'GEOGRAPHY', rowKernel(G, (v) => {
    const pts = points(shapeOf(v[0]!));
    if (pts.length === 0) return geo({ type: 'GeometryCollection', c: [] });
    const n = pts.length;
    return geo({ type: 'Point', c: [pts.reduce((a, p) => a + p[0], 0) / n, pts.reduce((a, p) => a + p[1], 0) / n] });
  }))]);
  defineScalar('ST_BOUNDARY', [sig(['GEOGRAPHY'], 'GEOGRAPHY', rowKernel(G, (v) => {
    const s = shapeOf(v[0]!);
    const rings = polygons(s).flat();
    if (rings.length) return geo(rings.length === 1 ? { type: 'LineString', c: rings[0]! } : { type: 'MultiLineString', c: rings });
    const ends = lines(s).flatMap((l) => (l.length > 1 && (l[0]![0] !== l[l.length - 1]![0] || l[0]![1] !== l[l.length - 1]![1]) ? [l[0]!, l[l.length - 1]!] : []));
    return geo(ends.length === 0 ? { type: 'GeometryCollection', c: [] } : ends.length === 1 ? { type: 'Point', c: ends[0]! } : { type: 'MultiPoint', c: ends });
  }))]);
  const pred = (f: (a: Shape, b: Shape) => boolean) => [sig(['GEOGRAPHY', 'GEOGRAPHY'], 'BOOL', rowKernel(T.BOOL, (v) => f(shapeOf(v[0]!), shapeOf(v[1]!))))];
  const covers = (a: Shape, b: Shape) => points(b).length > 0 && points(b).every((p) => pointInShape(p, a));
  defineScalar('ST_CONTAINS', pred(covers));
  defineScalar('ST_COVERS', pred(covers));
  defineScalar('ST_WITHIN', pred((a, b) => covers(b, a)));
  defineScalar('ST_COVEREDBY', pred((a, b) => covers(b, a)));
  defineScalar('ST_INTERSECTS', pred((a, b) => distance(a, b) === 0));
  defineScalar('ST_DISJOINT', pred((a, b) => distance(a, b) !== 0));
  defineScalar('ST_EQUALS', pred((a, b) => toWkt(a) === toWkt(b)));
  defineScalar('ST_GEOGPOINTFROMGEOHASH', [sig(['STRING'], 'GEOGRAPHY', rowKernel(G, (v) => {
    let [lngLo, lngHi, latLo, latHi] = [-180, 180, -90, 90];
    let even = true;
    for (const c of (v[0] as string).toLowerCase()) {
      const d = B32.indexOf(c);
      if (d < 0) fail(`Invalid geohash: ${v[0] as string}`);
      for (let b = 4; b >= 0; b--) {
        const bit = (d >> b) & 1;
        if (even) {
          const mid = (lngLo + lngHi) / 2;
          if (bit) lngLo = mid;
          else lngHi = mid;
        } else {
          const mid = (latLo + latHi) / 2;
          if (bit) latLo = mid;
          else latHi = mid;
        }
        even = !even;
      }
    }
    return geo({ type: 'Point', c: [(lngLo + lngHi) / 2, (latLo + latHi) / 2] });
  }))]);
  // ST_UNION_AGG: a collection of the distinct inputs (no polygon dissolve).
  defineAggregate('ST_UNION_AGG', [
    asig(['GEOGRAPHY'], 'GEOGRAPHY', () => () => {
      const groups: Shape[][] = [];
      const acc: GroupsAccumulator = {
        resize(n) {
          while (groups.length < n) groups.push([]);
        },
        update(args, g, n) {
          const vals = valuesOf(args[0]!, n);
          for (let i = 0; i < n; i++) if (vals[i] !== null) groups[g[i]!]!.push(shapeOf(vals[i]!));
        },
        finish(n) {
          const out: Value[] = [];
          for (let i = 0; i < n; i++) {
            const sh = groups[i] ?? [];
            const uniq = [...new Map(sh.map((s) => [toWkt(s), s])).values()];
            out.push(uniq.length === 0 ? null : uniq.length === 1 ? geo(uniq[0]!) : geo({ type: 'GeometryCollection', c: uniq }));
          }
          return vectorFromValues(T.GEOGRAPHY, out);
        },
      };
      return acc;
    }),
  ]);
}
