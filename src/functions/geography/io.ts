// GEOGRAPHY text and binary forms: WKT, GeoJSON and WKB, parsed into the
// normalized model and printed the way the service prints them (shells
// counter-clockwise, holes clockwise, rings closed; a mixed value prints as a
// GEOMETRYCOLLECTION of points, then lines, then polygons).
import { repairPolygon } from './repair.js';
import { formatG } from '../format-number.js';
import { planarToGeodesic, geodesicToPlanar } from './tessellate.js';
import { addLine, checkLL, full, geoFail, isFull, makePoly, makeRing, normalize, type Geo, type LngLat, type Poly } from './model.js';

export type Node =
  | { t: 'Point'; v: LngLat | null }
  | { t: 'LineString'; v: LngLat[] }
  | { t: 'Polygon'; v: LngLat[][] }
  | { t: 'MultiPoint'; v: LngLat[] }
  | { t: 'MultiLineString'; v: LngLat[][] }
  | { t: 'MultiPolygon'; v: LngLat[][][] }
  | { t: 'GeometryCollection'; v: Node[] }
  | { t: 'FullGlobe' };

/**
 * Normalizes a parsed tree into one value. `planar`: the input's edges are
 * straight in degrees (GeoJSON, planar => TRUE) and get densified into geodesics.
 */
export function nodeToGeo(n: Node, oriented: boolean, planar = false, makeValid = false): Geo {
  const g = { points: [] as LngLat[], lines: [] as LngLat[][], polys: [] as Poly[] };
  const edges = (vs: LngLat[]): LngLat[] => (planar ? planarToGeodesic(vs) : vs);
  const poly = (rings: LngLat[][]) => {
    if (!rings.length) return;
    if (makeValid) g.polys.push(...repairPolygon(rings.map(edges)));
    else g.polys.push(makePoly(rings.map((r) => makeRing(edges(r))), oriented));
  };
  const walk = (x: Node): void => {
    switch (x.t) {
      case 'Point':
        if (x.v) g.points.push(x.v);
        return;
      case 'MultiPoint':
        g.points.push(...x.v);
        return;
      case 'LineString':
        if (x.v.length === 1) geoFail('Invalid linestring: a linestring needs at least 2 vertices');
        addLine(g, edges(x.v));
        return;
      case 'MultiLineString':
        x.v.forEach((l) => walk({ t: 'LineString', v: l }));
        return;
      case 'Polygon':
        poly(x.v);
        return;
      case 'MultiPolygon':
        x.v.forEach(poly);
        return;
      case 'GeometryCollection':
        x.v.forEach(walk);
        return;
      case 'FullGlobe':
        g.polys.push([]);
    }
  };
  walk(n);
  // Everything else lies inside the full globe.
  if (isFull(g)) return full();
  return normalize(g);
}

// ---------------------------------------------------------------- WKT

export function parseWktNode(text: string): Node {
  const s = text;
  let i = 0;
  const bad = (what: string): never => geoFail(`Invalid WKT: ${what} at position ${i}`);
  const ws = () => {
    while (i < s.length && /\s/.test(s[i]!)) i++;
  };
  const peekWord = (): string => {
    ws();
    const m = /^[A-Za-z]+/.exec(s.slice(i));
    return m ? m[0].toUpperCase() : '';
  };
  const word = (): string => {
    const w = peekWord();
    if (!w) bad('expected a geometry type');
    i += w.length;
    return w;
  };
  const expect = (c: string) => {
    ws();
    if (s[i] !== c) bad(`expected '${c}'`);
    i++;
  };
  const peek = (): string => {
    ws();
    return s[i] ?? '';
  };
  const num = (): number => {
    ws();
    const m = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.exec(s.slice(i));
    if (!m) bad('expected a number');
    i += m![0].length;
    return Number(m![0]);
  };
  const point = (): LngLat => {
    const x = num();
    const y = num();
    if (/[-+\d.]/.test(peek())) bad('only 2D coordinates are supported');
    return checkLL(x, y);
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
    if (peekWord() === 'EMPTY') {
      i += 5;
      return true;
    }
    return false;
  };
  const geom = (): Node => {
    const w = word();
    switch (w) {
      case 'POINT':
        return { t: 'Point', v: empty() ? null : list(point)[0]! };
      case 'LINESTRING':
        return { t: 'LineString', v: empty() ? [] : list(point) };
      case 'POLYGON':
        return { t: 'Polygon', v: empty() ? [] : list(() => list(point)) };
      case 'MULTIPOINT':
        return { t: 'MultiPoint', v: empty() ? [] : list(() => (peek() === '(' ? list(point)[0]! : point())) };
      case 'MULTILINESTRING':
        return { t: 'MultiLineString', v: empty() ? [] : list(() => list(point)) };
      case 'MULTIPOLYGON':
        return { t: 'MultiPolygon', v: empty() ? [] : list(() => list(() => list(point))) };
      case 'GEOMETRYCOLLECTION':
        return { t: 'GeometryCollection', v: empty() ? [] : list(geom) };
      case 'FULLGLOBE':
        return { t: 'FullGlobe' };
    }
    return bad(`unknown geometry type ${w}`);
  };
  const g = geom();
  ws();
  if (i !== s.length) bad('unexpected trailing characters');
  return g;
}

export const parseWkt = (text: string, oriented = false): Geo => nodeToGeo(parseWktNode(text), oriented);

/**
 * GEOGRAPHY text as loads, streaming and storage hold it: GeoJSON (planar edges, orientation unambiguous), hex WKB,
 * else WKT. WKT and WKB rings are read with the interior on their left (geospatial-data.md, Polygon orientation:
 * loaded and streamed WKT/WKB follow the left-hand rule, the rule toWkt prints by), so a polygon larger than a
 * hemisphere survives a load, a stored column and an export unflipped.
 */
export function parseStoredGeography(text: string): Geo {
  const s = text.trim();
  if (s.startsWith('{')) return nodeToGeo(parseGeoJsonNode(s), false, true);
  if (/^([0-9a-fA-F]{2})+$/.test(s)) return nodeToGeo(parseWkbNode(Uint8Array.from(Buffer.from(s, 'hex'))), true);
  return parseWkt(s, true);
}

/** Coordinates print with 15 significant digits (%.15g), hiding the noise of the S2 xyz round trip. */
const num = (x: number): string => formatG(x, 15);
const ptW = (p: LngLat): string => `${num(p[0])} ${num(p[1])}`;
const closed = (r: readonly LngLat[]): LngLat[] => [...r, r[0]!];
const lineW = (l: readonly LngLat[]): string => `(${l.map(ptW).join(', ')})`;
const polyW = (p: Poly): string => `(${p.map((r) => lineW(closed(r))).join(', ')})`;

/** One text per dimension present: points, then lines, then polygons (as the service groups a collection). */
function wktParts(g: Geo): string[] {
  const { points, lines, polys } = g;
  const out: string[] = [];
  if (points.length) out.push(points.length === 1 ? `POINT(${ptW(points[0]!)})` : `MULTIPOINT(${points.map(ptW).join(', ')})`);
  if (lines.length) out.push(lines.length === 1 ? `LINESTRING${lineW(lines[0]!)}` : `MULTILINESTRING(${lines.map(lineW).join(', ')})`);
  if (polys.length) out.push(polys.length === 1 ? `POLYGON${polyW(polys[0]!)}` : `MULTIPOLYGON(${polys.map(polyW).join(', ')})`);
  return out;
}

export function toWkt(g: Geo): string {
  // The keyword the WKT parser takes for it (the service's own printed form is not documented).
  if (isFull(g)) return 'FULLGLOBE';
  const parts = wktParts(g);
  if (parts.length === 0) return 'GEOMETRYCOLLECTION EMPTY';
  return parts.length === 1 ? parts[0]! : `GEOMETRYCOLLECTION(${parts.join(', ')})`;
}

// ---------------------------------------------------------------- GeoJSON

interface GeoJsonObj {
  type?: unknown;
  coordinates?: unknown;
  geometries?: unknown;
}

export function parseGeoJsonNode(text: string): Node {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    geoFail('Invalid GeoJSON: the input is not valid JSON');
  }
  const pos = (x: unknown): LngLat => {
    if (!Array.isArray(x) || x.length !== 2 || !x.every((c) => typeof c === 'number')) geoFail('Invalid GeoJSON: a position must be an array of 2 numbers');
    return checkLL((x as number[])[0]!, (x as number[])[1]!);
  };
  const arr = <X>(x: unknown, f: (y: unknown) => X): X[] => {
    if (!Array.isArray(x)) geoFail('Invalid GeoJSON: coordinates must be an array');
    return (x as unknown[]).map(f);
  };
  const conv = (g: unknown): Node => {
    if (typeof g !== 'object' || g === null || Array.isArray(g)) geoFail('Invalid GeoJSON: a geometry must be a JSON object');
    const x = g as GeoJsonObj;
    if (x.type === 'GeometryCollection') return { t: 'GeometryCollection', v: arr(x.geometries, conv) };
    if (x.coordinates === undefined) geoFail(`Invalid GeoJSON: member "coordinates" is missing`);
    const c = x.coordinates;
    switch (x.type) {
      case 'Point':
        return { t: 'Point', v: Array.isArray(c) && c.length === 0 ? null : pos(c) };
      case 'LineString':
        return { t: 'LineString', v: arr(c, pos) };
      case 'Polygon':
        return { t: 'Polygon', v: arr(c, (r) => arr(r, pos)) };
      case 'MultiPoint':
        return { t: 'MultiPoint', v: arr(c, pos) };
      case 'MultiLineString':
        return { t: 'MultiLineString', v: arr(c, (l) => arr(l, pos)) };
      case 'MultiPolygon':
        return { t: 'MultiPolygon', v: arr(c, (p) => arr(p, (r) => arr(r, pos))) };
    }
    return geoFail(`Invalid GeoJSON: unsupported geometry type ${JSON.stringify(x.type)}`);
  };
  return conv(o);
}

// GeoJSON edges are planar: geodesic edges are densified to stay within 10 m.
const ptJ = (p: LngLat): string => `[${num(p[0])}, ${num(p[1])}]`;
const listJ = (xs: string[]): string => `[ ${xs.join(', ')} ]`;
const lineJ = (l: readonly LngLat[]): string => listJ(geodesicToPlanar(l).map(ptJ));
const polyJ = (p: Poly): string => listJ(p.map((r) => lineJ(closed(r))));

export function toGeoJson(g: Geo): string {
  if (isFull(g)) geoFail('the full globe has no GeoJSON representation');
  const { points, lines, polys } = g;
  const obj = (type: string, coords: string) => `{ "type": "${type}", "coordinates": ${coords} }`;
  const parts: string[] = [];
  if (points.length) parts.push(points.length === 1 ? obj('Point', ptJ(points[0]!)) : obj('MultiPoint', listJ(points.map(ptJ))));
  if (lines.length) parts.push(lines.length === 1 ? obj('LineString', lineJ(lines[0]!)) : obj('MultiLineString', listJ(lines.map(lineJ))));
  if (polys.length) parts.push(polys.length === 1 ? obj('Polygon', polyJ(polys[0]!)) : obj('MultiPolygon', listJ(polys.map(polyJ))));
  if (parts.length === 1) return parts[0]!;
  return `{ "type": "GeometryCollection", "geometries": ${parts.length ? listJ(parts) : '[]'} }`;
}

// ---------------------------------------------------------------- WKB

export function parseWkbNode(b: Uint8Array): Node {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let i = 0;
  const bad = (): never => geoFail('Invalid WKB: unexpected end of input or unknown geometry type');
  const geom = (): Node => {
    if (i + 5 > b.length) bad();
    if (b[i] !== 0 && b[i] !== 1) bad();
    const le = b[i] === 1;
    i++;
    const type = dv.getUint32(i, le);
    i += 4;
    if (type > 7 || type === 0) bad();
    const u32 = () => {
      if (i + 4 > b.length) bad();
      const x = dv.getUint32(i, le);
      i += 4;
      return x;
    };
    const raw = (): [number, number] => {
      if (i + 16 > b.length) bad();
      const x = dv.getFloat64(i, le);
      const y = dv.getFloat64(i + 8, le);
      i += 16;
      return [x, y];
    };
    const pts = (): LngLat[] => Array.from({ length: u32() }, () => checkLL(...raw()));
    const sub = <K extends Node['t']>(t: K): Extract<Node, { t: K }> => {
      const n = geom();
      if (n.t !== t) bad();
      return n as Extract<Node, { t: K }>;
    };
    switch (type) {
      case 1: {
        const [x, y] = raw();
        return { t: 'Point', v: Number.isNaN(x) && Number.isNaN(y) ? null : checkLL(x, y) };
      }
      case 2:
        return { t: 'LineString', v: pts() };
      case 3:
        return { t: 'Polygon', v: Array.from({ length: u32() }, pts) };
      case 4:
        return { t: 'MultiPoint', v: Array.from({ length: u32() }, () => sub('Point').v).filter((p): p is LngLat => p !== null) };
      case 5:
        return { t: 'MultiLineString', v: Array.from({ length: u32() }, () => sub('LineString').v) };
      case 6:
        return { t: 'MultiPolygon', v: Array.from({ length: u32() }, () => sub('Polygon').v) };
      default:
        return { t: 'GeometryCollection', v: Array.from({ length: u32() }, geom) };
    }
  };
  const n = geom();
  if (i !== b.length) bad();
  return n;
}

export function toWkb(g: Geo): Uint8Array {
  if (isFull(g)) geoFail('the full globe has no WKB representation');
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
  const head = (type: number) => {
    out.push(1);
    u32(type);
  };
  const pt = (p: LngLat) => {
    f64(p[0]);
    f64(p[1]);
  };
  const point = (p: LngLat) => {
    head(1);
    pt(p);
  };
  const line = (l: readonly LngLat[]) => {
    head(2);
    u32(l.length);
    l.forEach(pt);
  };
  const poly = (p: Poly) => {
    head(3);
    u32(p.length);
    for (const r of p) {
      u32(r.length + 1);
      closed(r).forEach(pt);
    }
  };
  const { points, lines, polys } = g;
  const multi = (type: number, n: number, each: () => void) => {
    head(type);
    u32(n);
    each();
  };
  const parts: (() => void)[] = [];
  if (points.length) parts.push(() => (points.length === 1 ? point(points[0]!) : multi(4, points.length, () => points.forEach(point))));
  if (lines.length) parts.push(() => (lines.length === 1 ? line(lines[0]!) : multi(5, lines.length, () => lines.forEach(line))));
  if (polys.length) parts.push(() => (polys.length === 1 ? poly(polys[0]!) : multi(6, polys.length, () => polys.forEach(poly))));
  if (parts.length === 1) parts[0]!();
  else multi(7, parts.length, () => parts.forEach((p) => p()));
  return Uint8Array.from(out);
}

// ---------------------------------------------------------------- KML

/** KML coordinates: "lng,lat" with the shortest round-trip digits, space separated. */
const kmlCoords = (vs: readonly LngLat[]): string => `<coordinates>${vs.map((v) => `${String(v[0])},${String(v[1])}`).join(' ')}</coordinates>`;
const kmlPoint = (p: LngLat) => `<Point>${kmlCoords([p])}</Point>`;
const kmlLine = (l: readonly LngLat[]) => `<LineString>${kmlCoords(l)}</LineString>`;
const kmlPoly = (p: Poly) =>
  `<Polygon><outerBoundaryIs><LinearRing>${kmlCoords(closed(p[0]!))}</LinearRing></outerBoundaryIs>${p
    .slice(1)
    .map((h) => `<innerBoundaryIs><LinearRing>${kmlCoords(closed(h))}</LinearRing></innerBoundaryIs>`)
    .join('')}</Polygon>`;

export function toKml(g: Geo): string {
  if (isFull(g)) geoFail('the full globe has no KML representation');
  const parts = [...g.points.map(kmlPoint), ...g.lines.map(kmlLine), ...g.polys.map(kmlPoly)];
  return parts.length === 1 ? parts[0]! : `<MultiGeometry>${parts.join('')}</MultiGeometry>`;
}

/** KML geometry: Point, LineString, Polygon (boundaries only) and MultiGeometry. */
export function parseKmlNode(text: string): Node {
  let s = text.trim();
  const bad = (what: string): never => geoFail(`Invalid KML: ${what}`);
  const open = (tag: string): boolean => {
    const m = new RegExp(`^<${tag}(\\s[^>]*)?>`).exec(s);
    if (!m) return false;
    s = s.slice(m[0].length).trimStart();
    return true;
  };
  const close = (tag: string) => {
    if (!s.startsWith(`</${tag}>`)) bad(`expected </${tag}>`);
    s = s.slice(tag.length + 3).trimStart();
  };
  const coords = (): LngLat[] => {
    if (!open('coordinates')) bad('expected <coordinates>');
    const end = s.indexOf('</coordinates>');
    if (end < 0) bad('unterminated <coordinates>');
    const body = s.slice(0, end).trim();
    s = s.slice(end).trimStart();
    close('coordinates');
    return body ? body.split(/\s+/).map((t) => {
      const [x, y] = t.split(',').map(Number);
      if (x === undefined || y === undefined || Number.isNaN(x) || Number.isNaN(y)) bad(`bad coordinate ${t}`);
      return checkLL(x!, y!);
    }) : [];
  };
  const ring = (boundary: string): LngLat[] => {
    if (!open(boundary)) bad(`expected <${boundary}>`);
    if (!open('LinearRing')) bad('expected <LinearRing>');
    const r = coords();
    close('LinearRing');
    close(boundary);
    return r;
  };
  const geom = (): Node => {
    if (open('Point')) {
      const c = coords();
      close('Point');
      return { t: 'Point', v: c[0] ?? null };
    }
    if (open('LineString')) {
      const c = coords();
      close('LineString');
      return { t: 'LineString', v: c };
    }
    if (open('Polygon')) {
      const rings = [ring('outerBoundaryIs')];
      while (s.startsWith('<innerBoundaryIs')) rings.push(ring('innerBoundaryIs'));
      close('Polygon');
      return { t: 'Polygon', v: rings };
    }
    if (open('MultiGeometry')) {
      const parts: Node[] = [];
      while (!s.startsWith('</MultiGeometry>')) parts.push(geom());
      close('MultiGeometry');
      return { t: 'GeometryCollection', v: parts };
    }
    return bad('expected Point, LineString, Polygon or MultiGeometry');
  };
  const n = geom();
  if (s.length) bad('unexpected trailing content');
  return n;
}
