// GEOGRAPHY functions (ST_*). The value model, parsers and printers, and the
// spherical measures live in ./geography/: values are normalized S2-style
// collections of points, geodesic polylines and polygons; lengths, distances
// and areas are on the sphere of radius 6371010 m (S2Earth), as the service computes them.
import { T, arrayOf, structOf, type SqlType } from '../types/types.js';
import type { Geography, Value } from '../types/values.js';
import { vectorFromValues } from '../types/vector.js';
import type { GroupsAccumulator } from './registry.js';
import { asig, defineAggregate, defineScalar, named, opt, sig, sigf, type SigContext } from './signature.js';
import { fail, rowKernel, valuesOf } from './vec.js';
import { nodeToGeo, type Node, parseGeoJsonNode, parseKmlNode, parseStoredGeography, parseWkbNode, parseWktNode, toGeoJson, toKml, toWkb, toWkt } from './geography/io.js';
import { areaMeters, centroid, contains, covers, distanceMeters, intersects, lengthMeters, perimeterMeters, touches } from './geography/measure.js';
import { planarToGeodesic } from './geography/tessellate.js';
import { assembleLines } from './geography/polylines.js';
import { checkLL, dimension, EMPTY, full, geoFail, geoOf, geoValue, isEmpty, makePoly, makeRing, R, ringArea, s2p, sameLL, vertices, withName, type Geo, type LngLat } from './geography/model.js';
import { boundary, bufferPoints, closestPoint, convexHull, difference, intersection, sidesForTolerance, simplify, snapToGrid, unionAll } from './geography/ops.js';
import * as acc from './geography/accessors.js';
import { extentOf, toBox, type Box, type Extent } from './geography/bounds.js';

const geo = (g: Geo): Geography => geoValue(g, toWkt);
/** Text stored in a GEOGRAPHY column (loaded or streamed) may be WKT, GeoJSON or hex WKB, as loads accept. */
const G = (v: Value): Geo => geoOf(v, parseStoredGeography);

/** The value of an optional argument bound to signature slot `slot`, or undefined. */
function argAt(c: SigContext, v: readonly Value[], slot: number): Value | undefined {
  const i = c.assign.indexOf(slot);
  return i < 0 ? undefined : v[i];
}


// ---------------------------------------------------------------- ST_GEOHASH

const B32 = '0123456789bcdefghjkmnpqrstuvwxyz';
function geohash(p: LngLat, len: number): string {
  let [lngLo, lngHi, latLo, latHi] = [-180, 180, -90, 90];
  let out = '';
  let bit = 0;
  let ch = 0;
  let even = true;
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

function pointFromGeohash(h: string): LngLat {
  let [lngLo, lngHi, latLo, latHi] = [-180, 180, -90, 90];
  let even = true;
  for (const c of h.toLowerCase()) {
    const d = B32.indexOf(c);
    if (d < 0) fail(`Invalid geohash string: ${h}`);
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
  return [(lngLo + lngHi) / 2, (latLo + latHi) / 2];
}

// ---------------------------------------------------------------- constructors from values

/** Vertices of point and linestring inputs, in order (ST_MAKELINE). */
function lineVertices(gs: readonly Geo[]): LngLat[] {
  const out: LngLat[] = [];
  for (const g of gs) {
    if (g.polys.length || g.points.length + g.lines.length > 1) geoFail('Only point or linestring geographies are allowed as input');
    out.push(...g.points, ...(g.lines[0] ?? []));
  }
  return out;
}

/**
 * The vertices joined in order, then built as the service's S2 polyline layer
 * builds them: a single repeated point stays a point, an edge doubling back
 * over an earlier one is merged and the line splits there (the documented
 * MULTILINESTRING((1 0, 5 0, 10 0), (5 0, 5 4)) for 1 0 -> 10 0 -> 5 0 -> 5 4).
 */
function makeLine(gs: readonly Geo[]): Geo {
  const vs = lineVertices(gs).filter((v, i, a) => i === 0 || !sameLL(v, a[i - 1]!));
  if (vs.length === 0) geoFail('A linestring requires at least two distinct vertices');
  if (vs.length === 1) return { points: [vs[0]!], lines: [], polys: [] };
  return { points: [], lines: assembleLines([vs]).lines, polys: [] };
}

function ringFromLine(g: Geo): LngLat[] {
  if (g.lines.length !== 1 || g.points.length || g.polys.length) geoFail('Polygon rings must be linestrings');
  return g.lines[0]!;
}

/**
 * An empty geography stands for an empty ring, the full loop (documented for
 * both constructors): an empty shell makes the full globe, minus any holes.
 */
function makePolygon(shell: Geo, holes: readonly Geo[], oriented: boolean): Geo {
  const hs = holes.filter((h) => !isEmpty(h)).map((g) => makeRing(ringFromLine(g), true));
  if (isEmpty(shell)) {
    if (!hs.length) return full();
    // Without a shell every ring is a hole: clockwise unless oriented says otherwise.
    const rings = oriented ? hs : hs.map((r) => (ringArea(r) > 2 * Math.PI ? r : [...r].reverse()));
    return { points: [], lines: [], polys: [rings] };
  }
  const rings = [makeRing(ringFromLine(shell), true), ...hs];
  return { points: [], lines: [], polys: [makePoly(rings, oriented)] };
}

// ---------------------------------------------------------------- registration

export function registerGeography(): void {
  const GT = T.GEOGRAPHY;
  defineScalar('ST_GEOGPOINT', [
    sig(['FLOAT64', 'FLOAT64'], 'GEOGRAPHY', rowKernel(GT, (v) => withName('ST_GeogPoint', () => geo({ points: [checkLL(v[0] as number, v[1] as number)], lines: [], polys: [] })))),
  ]);

  // Parsers with the optional oriented / planar / make_valid flags (WKT and WKB).
  const parser = (fn: string, argType: string, toNode: (v: Value) => Node) =>
    sigf([argType, opt('BOOL', 'oriented'), opt('BOOL', 'planar'), opt('BOOL', 'make_valid')], 'GEOGRAPHY', (c) =>
      rowKernel(GT, (v) => {
        const oriented = argAt(c, v, 1) === true;
        const planar = argAt(c, v, 2) === true;
        if (oriented && planar) fail(`${fn}: 'oriented' and 'planar' cannot both be TRUE`);
        if (oriented && argAt(c, v, 3) === true) fail(`${fn}: 'oriented' and 'make_valid' cannot both be TRUE`);
        return withName(fn, () => geo(nodeToGeo(toNode(v[0]!), oriented, planar, argAt(c, v, 3) === true)));
      }),
    );
  const hexBytes = (v: Value): Uint8Array => {
    const s = v as string;
    if (!/^([0-9a-fA-F]{2})*$/.test(s)) geoFail('Invalid WKB: the input is not a hex string');
    return Uint8Array.from(Buffer.from(s, 'hex'));
  };
  defineScalar('ST_GEOGFROMTEXT', [parser('ST_GeogFromText', 'STRING', (v) => parseWktNode(v as string))], { aliases: ['ST_GEOMETRYFROMTEXT'] });
  defineScalar('ST_GEOGFROMGEOJSON', [
    sigf(['STRING', opt('BOOL', 'make_valid')], 'GEOGRAPHY', (c) => rowKernel(GT, (v) => withName('ST_GeogFromGeoJson', () => geo(nodeToGeo(parseGeoJsonNode(v[0] as string), false, true, argAt(c, v, 1) === true))))),
  ]);
  defineScalar('ST_GEOGFROMWKB', [
    parser('ST_GeogFromWkb', 'BYTES', (v) => parseWkbNode(v as Uint8Array)),
    parser('ST_GeogFromWkb', 'STRING', (v) => parseWkbNode(hexBytes(v))),
  ]);
  // ST_GEOGFROM: WKT, WKB hex or GeoJSON text by its first character; WKB bytes.
  defineScalar('ST_GEOGFROM', [
    sig(['STRING'], 'GEOGRAPHY', rowKernel(GT, (v) => {
      const s = (v[0] as string).trim();
      if (s.startsWith('{')) return withName('ST_GeogFrom', () => geo(nodeToGeo(parseGeoJsonNode(s), false, true)));
      if (/^[0-9a-fA-F]+$/.test(s)) return withName('ST_GeogFrom', () => geo(nodeToGeo(parseWkbNode(hexBytes(s)), false)));
      return withName('ST_GeogFrom', () => geo(nodeToGeo(parseWktNode(s), false)));
    })),
    sig(['BYTES'], 'GEOGRAPHY', rowKernel(GT, (v) => withName('ST_GeogFrom', () => geo(nodeToGeo(parseWkbNode(v[0] as Uint8Array), false))))),
  ]);
  defineScalar('ST_GEOGPOINTFROMGEOHASH', [sig(['STRING'], 'GEOGRAPHY', rowKernel(GT, (v) => geo({ points: [pointFromGeohash(v[0] as string)], lines: [], polys: [] })))]);

  defineScalar('ST_ASKML', [sig(['GEOGRAPHY'], 'STRING', rowKernel(T.STRING, (v) => toKml(G(v[0]!))))]);
  defineScalar('ST_GEOGFROMKML', [sig(['STRING'], 'GEOGRAPHY', rowKernel(GT, (v) => withName('ST_GeogFromKml', () => geo(nodeToGeo(parseKmlNode(v[0] as string), false)))))]);
  defineScalar('ST_ASTEXT', [sig(['GEOGRAPHY'], 'STRING', rowKernel(T.STRING, (v) => toWkt(G(v[0]!))))]);
  defineScalar('ST_ASGEOJSON', [sig(['GEOGRAPHY'], 'STRING', rowKernel(T.STRING, (v) => toGeoJson(G(v[0]!))))]);
  defineScalar('ST_ASBINARY', [sig(['GEOGRAPHY'], 'BYTES', rowKernel(T.BYTES, (v) => toWkb(G(v[0]!))))]);

  const coord = (k: 0 | 1, name: string) =>
    sig(['GEOGRAPHY'], 'FLOAT64', rowKernel(T.FLOAT64, (v) => {
      const g = G(v[0]!);
      if (g.points.length !== 1 || g.lines.length || g.polys.length) fail(`${name} failed: Input geography must be a point, but got ${toWkt(g).replace(/\(.*$/, '')}`);
      return g.points[0]![k];
    }));
  defineScalar('ST_X', [coord(0, 'ST_X')]);
  defineScalar('ST_Y', [coord(1, 'ST_Y')]);

  const useSpheroid = (fn: string, x: Value | undefined) => {
    if (x === true) fail(`${fn}: use_spheroid => TRUE is not supported; only the spherical model is`);
  };
  defineScalar('ST_DISTANCE', [
    sig(['GEOGRAPHY', 'GEOGRAPHY', opt('BOOL', 'use_spheroid')], 'FLOAT64', rowKernel(T.FLOAT64, (v) => {
      useSpheroid('ST_DISTANCE', v[2]);
      return distanceMeters(G(v[0]!), G(v[1]!));
    })),
  ]);
  defineScalar('ST_DWITHIN', [
    sig(['GEOGRAPHY', 'GEOGRAPHY', 'FLOAT64', opt('BOOL', 'use_spheroid')], 'BOOL', rowKernel(T.BOOL, (v) => {
      useSpheroid('ST_DWITHIN', v[3]);
      const d = distanceMeters(G(v[0]!), G(v[1]!));
      return d !== null && d <= (v[2] as number);
    })),
  ]);
  const measure = (fn: string, f: (g: Geo) => number) =>
    sig(['GEOGRAPHY', opt('BOOL', 'use_spheroid')], 'FLOAT64', rowKernel(T.FLOAT64, (v) => {
      useSpheroid(fn, v[1]);
      return f(G(v[0]!));
    }));
  defineScalar('ST_LENGTH', [measure('ST_LENGTH', lengthMeters)]);
  defineScalar('ST_PERIMETER', [measure('ST_PERIMETER', perimeterMeters)]);
  defineScalar('ST_AREA', [measure('ST_AREA', areaMeters)]);

  // Polygon rings count their closing vertex (as the service documents).
  const numPoints = (g: Geo) => BigInt(vertices(g).length + g.polys.reduce((a, p) => a + p.length, 0));
  defineScalar('ST_NUMPOINTS', [sig(['GEOGRAPHY'], 'INT64', rowKernel(T.INT64, (v) => numPoints(G(v[0]!))))], { aliases: ['ST_NPOINTS'] });
  defineScalar('ST_DIMENSION', [sig(['GEOGRAPHY'], 'INT64', rowKernel(T.INT64, (v) => BigInt(dimension(G(v[0]!)))))]);
  defineScalar('ST_ISEMPTY', [sig(['GEOGRAPHY'], 'BOOL', rowKernel(T.BOOL, (v) => isEmpty(G(v[0]!))))]);
  defineScalar('ST_GEOHASH', [
    sig(['GEOGRAPHY', opt('INT64')], 'STRING', rowKernel(T.STRING, (v) => {
      const g = G(v[0]!);
      if (isEmpty(g)) return null;
      if (g.points.length !== 1 || g.lines.length || g.polys.length) fail('ST_GeoHash only supports point geographies');
      // maxchars outside 1..20 counts as unspecified (20), as documented.
      const len = v.length > 1 ? Number(v[1] as bigint) : 20;
      return geohash(g.points[0]!, len >= 1 && len <= 20 ? len : 20);
    })),
  ]);

  defineScalar('ST_MAKELINE', [
    sig(['GEOGRAPHY', 'GEOGRAPHY'], 'GEOGRAPHY', rowKernel(GT, (v) => withName('ST_MakeLine', () => geo(makeLine([G(v[0]!), G(v[1]!)]))))),
    sig(['ARRAY<GEOGRAPHY>'], 'GEOGRAPHY', rowKernel(GT, (v) => {
      const xs = v[0] as Value[];
      if (xs.some((x) => x === null)) return null;
      return withName('ST_MakeLine', () => geo(makeLine(xs.map(G))));
    })),
  ]);
  // A NULL element in the rings array makes the result NULL (documented).
  defineScalar('ST_MAKEPOLYGON', [
    sig(['GEOGRAPHY', opt('ARRAY<GEOGRAPHY>')], 'GEOGRAPHY', rowKernel(GT, (v) => {
      const holes = (v[1] as Value[] | undefined) ?? [];
      if (holes.some((h) => h === null)) return null;
      return withName('ST_MakePolygon', () => geo(makePolygon(G(v[0]!), holes.map(G), false)));
    })),
  ]);
  defineScalar('ST_MAKEPOLYGONORIENTED', [
    sig(['ARRAY<GEOGRAPHY>'], 'GEOGRAPHY', rowKernel(GT, (v) => {
      const xs = v[0] as Value[];
      if (xs.some((h) => h === null)) return null;
      if (xs.length === 0) return geo(EMPTY);
      const rings = xs.map(G);
      return withName('ST_MakePolygonOriented', () => geo(makePolygon(rings[0]!, rings.slice(1), true)));
    })),
  ]);
  defineScalar('ST_CENTROID', [
    sig(['GEOGRAPHY'], 'GEOGRAPHY', rowKernel(GT, (v) => {
      const c = centroid(G(v[0]!));
      return geo(c ? { points: [c], lines: [], polys: [] } : EMPTY);
    })),
  ]);
  defineScalar('ST_BOUNDARY', [sig(['GEOGRAPHY'], 'GEOGRAPHY', rowKernel(GT, (v) => geo(boundary(G(v[0]!)))))]);

  const pred = (f: (a: Geo, b: Geo) => boolean) => [sig(['GEOGRAPHY', 'GEOGRAPHY'], 'BOOL', rowKernel(T.BOOL, (v) => f(G(v[0]!), G(v[1]!))))];
  defineScalar('ST_CONTAINS', pred(contains));
  defineScalar('ST_COVERS', pred(covers));
  defineScalar('ST_WITHIN', pred((a, b) => contains(b, a)));
  defineScalar('ST_COVEREDBY', pred((a, b) => covers(b, a)));
  defineScalar('ST_INTERSECTS', pred(intersects));
  defineScalar('ST_DISJOINT', pred((a, b) => !intersects(a, b)));
  defineScalar('ST_TOUCHES', pred(touches));
  // ST_INTERSECTSBOX: the box's sides follow parallels and meridians, i.e. planar
  // edges in degrees, densified into geodesics (within 10 m) like GeoJSON input.
  defineScalar('ST_INTERSECTSBOX', [
    sig(['GEOGRAPHY', 'FLOAT64', 'FLOAT64', 'FLOAT64', 'FLOAT64'], 'BOOL', rowKernel(T.BOOL, (v) => {
      const [lng1, lat1, lng2, lat2] = v.slice(1) as number[];
      if (!(lat1! >= -90 && lat2! <= 90 && lat1! <= lat2!)) fail('ST_INTERSECTSBOX: latitudes must be in [-90, 90] with lat1 <= lat2');
      let east = lng2!;
      while (east < lng1!) east += 360;
      const corners: LngLat[] = [[lng1!, lat1!], [east, lat1!], [east, lat2!], [lng1!, lat2!], [lng1!, lat1!]];
      const ring = planarToGeodesic(corners).slice(0, -1).map((c) => checkLL(c[0], c[1]));
      const box = withName('ST_INTERSECTSBOX', () => ({ points: [], lines: [], polys: [makePoly([makeRing([...ring, ring[0]!])], true)] }));
      return intersects(G(v[0]!), box);
    })),
  ]);
  defineScalar('ST_EQUALS', pred((a, b) => (isEmpty(a) && isEmpty(b)) || (covers(a, b) && covers(b, a))));

  // ---------------------------------------------------------------- accessors and point measures
  const GA = arrayOf(GT);
  const one = (fn: string, f: (g: Geo) => Value, ret: string, type: SqlType = GT) =>
    defineScalar(fn, [sig(['GEOGRAPHY'], ret, rowKernel(type, (v) => withName(fn, () => f(G(v[0]!)))))]);
  one('ST_GEOMETRYTYPE', acc.geometryType, 'STRING', T.STRING);
  one('ST_NUMGEOMETRIES', (g) => BigInt(acc.numGeometries(g)), 'INT64', T.INT64);
  one('ST_ISCOLLECTION', (g) => acc.numGeometries(g) > 1, 'BOOL', T.BOOL);
  one('ST_ISCLOSED', acc.isClosed, 'BOOL', T.BOOL);
  one('ST_ISRING', acc.isRing, 'BOOL', T.BOOL);
  one('ST_STARTPOINT', (g) => geo(acc.startPoint(g)), 'GEOGRAPHY');
  one('ST_ENDPOINT', (g) => geo(acc.endPoint(g)), 'GEOGRAPHY');
  one('ST_EXTERIORRING', (g) => geo(acc.exteriorRing(g)), 'GEOGRAPHY');
  one('ST_INTERIORRINGS', (g) => acc.interiorRings(g).map(geo), 'ARRAY<GEOGRAPHY>', GA);
  one('ST_DUMPPOINTS', (g) => acc.dumpPoints(g).map(geo), 'ARRAY<GEOGRAPHY>', GA);
  defineScalar('ST_POINTN', [sig(['GEOGRAPHY', 'INT64'], 'GEOGRAPHY', rowKernel(GT, (v) => withName('ST_POINTN', () => geo(acc.pointN(G(v[0]!), Number(v[1] as bigint))))))]);
  defineScalar('ST_DUMP', [
    sig(['GEOGRAPHY', opt('INT64')], 'ARRAY<GEOGRAPHY>', rowKernel(GA, (v) => {
      const dim = v.length > 1 ? Number(v[1] as bigint) : -1;
      if (dim < -1 || dim > 2) fail(`ST_DUMP: dimension must be -1, 0, 1 or 2, got ${dim}`);
      return acc.dump(G(v[0]!), dim).map(geo);
    })),
  ]);
  defineScalar('ST_AZIMUTH', [sig(['GEOGRAPHY', 'GEOGRAPHY'], 'FLOAT64', rowKernel(T.FLOAT64, (v) => withName('ST_AZIMUTH', () => acc.azimuth(G(v[0]!), G(v[1]!)))))]);
  defineScalar('ST_ANGLE', [sig(['GEOGRAPHY', 'GEOGRAPHY', 'GEOGRAPHY'], 'FLOAT64', rowKernel(T.FLOAT64, (v) => withName('ST_ANGLE', () => acc.angle(G(v[0]!), G(v[1]!), G(v[2]!)))))]);
  defineScalar('ST_MAXDISTANCE', [
    sig(['GEOGRAPHY', 'GEOGRAPHY', opt('BOOL', 'use_spheroid')], 'FLOAT64', rowKernel(T.FLOAT64, (v) => {
      useSpheroid('ST_MAXDISTANCE', v[2]);
      const d = acc.maxDistanceRad(G(v[0]!), G(v[1]!));
      return d === null ? null : d * R;
    })),
  ]);
  const directedArg = (c: SigContext, v: readonly Value[], slot: number): boolean => argAt(c, v, slot) === true;
  defineScalar('ST_HAUSDORFFDISTANCE', [
    sigf(['GEOGRAPHY', 'GEOGRAPHY', named('directed', 'BOOL')], 'FLOAT64', (c) =>
      rowKernel(T.FLOAT64, (v) => {
        const d = acc.hausdorffRad(G(v[0]!), G(v[1]!), directedArg(c, v, 2));
        return d === null ? null : d * R;
      }),
    ),
  ]);
  defineScalar('ST_HAUSDORFFDWITHIN', [
    sigf(['GEOGRAPHY', 'GEOGRAPHY', 'FLOAT64', named('directed', 'BOOL')], 'BOOL', (c) =>
      rowKernel(T.BOOL, (v) => {
        const d = acc.hausdorffRad(G(v[0]!), G(v[1]!), directedArg(c, v, 3));
        return d !== null && d * R <= (v[2] as number);
      }),
    ),
  ]);
  defineScalar('ST_LINELOCATEPOINT', [sig(['GEOGRAPHY', 'GEOGRAPHY'], 'FLOAT64', rowKernel(T.FLOAT64, (v) => withName('ST_LINELOCATEPOINT', () => acc.lineLocatePoint(G(v[0]!), G(v[1]!)))))]);
  defineScalar('ST_LINEINTERPOLATEPOINT', [
    sig(['GEOGRAPHY', 'FLOAT64'], 'GEOGRAPHY', rowKernel(GT, (v) => withName('ST_LINEINTERPOLATEPOINT', () => geo(acc.lineInterpolatePoint(G(v[0]!), v[1] as number))))),
  ]);
  defineScalar('ST_LINESUBSTRING', [
    sig(['GEOGRAPHY', 'FLOAT64', 'FLOAT64'], 'GEOGRAPHY', rowKernel(GT, (v) => withName('ST_LINESUBSTRING', () => geo(acc.lineSubstring(G(v[0]!), v[1] as number, v[2] as number))))),
  ]);
  defineScalar('S2_CELLIDFROMPOINT', [
    sig(['GEOGRAPHY', opt('INT64', 'level')], 'INT64', rowKernel(T.INT64, (v) => {
      const g = G(v[0]!);
      if (isEmpty(g)) return null;
      return withName('S2_CELLIDFROMPOINT', () => acc.cellIdFromPoint(g, v.length > 1 ? Number(v[1] as bigint) : 30));
    })),
  ]);
  defineScalar('ST_CLOSESTPOINT', [
    sig(['GEOGRAPHY', 'GEOGRAPHY', opt('BOOL', 'use_spheroid')], 'GEOGRAPHY', rowKernel(GT, (v) => {
      useSpheroid('ST_CLOSESTPOINT', v[2]);
      const p = closestPoint(G(v[0]!), G(v[1]!));
      return p ? geo({ points: [p], lines: [], polys: [] }) : null;
    })),
  ]);
  defineScalar('ST_CONVEXHULL', [
    sig(['GEOGRAPHY'], 'GEOGRAPHY', rowKernel(GT, (v) => {
      const h = withName('ST_CONVEXHULL', () => convexHull(G(v[0]!)));
      return h ? geo(h) : null;
    })),
  ]);
  defineScalar('ST_SIMPLIFY', [
    sig(['GEOGRAPHY', 'FLOAT64'], 'GEOGRAPHY', rowKernel(GT, (v) => {
      const tol = v[1] as number;
      if (!(tol >= 0)) fail(`ST_SIMPLIFY: tolerance must be non-negative, got ${tol}`);
      if (tol > 7800000) fail(`ST_SIMPLIFY: tolerance must be at most about 7800 km, got ${tol}`);
      return geo(simplify(G(v[0]!), tol / R));
    })),
  ]);
  // ST_BUFFER / ST_BUFFERWITHTOLERANCE of points: regular polygons on the circle
  // (4 x num_seg_quarter_circle sides; or as many as the tolerance needs).
  const bufferOpts = (fn: string, c: SigContext, v: readonly Value[], from: number) => {
    useSpheroid(fn, argAt(c, v, from));
    const endcap = argAt(c, v, from + 1);
    const side = argAt(c, v, from + 2);
    if (endcap !== undefined && endcap !== null && !['ROUND', 'FLAT'].includes(String(endcap).toUpperCase())) fail(`${fn}: endcap must be ROUND or FLAT`);
    if (side !== undefined && side !== null && !['BOTH', 'LEFT', 'RIGHT'].includes(String(side).toUpperCase())) fail(`${fn}: side must be BOTH, LEFT or RIGHT`);
  };
  defineScalar('ST_BUFFER', [
    sigf(['GEOGRAPHY', 'FLOAT64', opt('FLOAT64', 'num_seg_quarter_circle'), opt('BOOL', 'use_spheroid'), opt('STRING', 'endcap'), opt('STRING', 'side')], 'GEOGRAPHY', (c) =>
      rowKernel(GT, (v) => {
        bufferOpts('ST_BUFFER', c, v, 3);
        const q = (argAt(c, v, 2) as number | undefined) ?? 8;
        if (!(q >= 1)) fail('ST_BUFFER: num_seg_quarter_circle must be at least 1');
        return withName('ST_BUFFER', () => geo(bufferPoints(G(v[0]!), (v[1] as number) / R, Math.round(4 * q))));
      }),
    ),
  ]);
  defineScalar('ST_BUFFERWITHTOLERANCE', [
    sigf(['GEOGRAPHY', 'FLOAT64', named('tolerance_meters', 'FLOAT64', false), opt('BOOL', 'use_spheroid'), opt('STRING', 'endcap'), opt('STRING', 'side')], 'GEOGRAPHY', (c) =>
      rowKernel(GT, (v) => {
        bufferOpts('ST_BUFFERWITHTOLERANCE', c, v, 3);
        const [r, tol] = [v[1] as number, argAt(c, v, 2) as number];
        if (!(tol > 0)) fail('ST_BUFFERWITHTOLERANCE: tolerance_meters must be positive');
        return withName('ST_BUFFERWITHTOLERANCE', () => geo(bufferPoints(G(v[0]!), r / R, sidesForTolerance(Math.abs(r), tol))));
      }),
    ),
  ]);
  defineScalar('ST_SNAPTOGRID', [sig(['GEOGRAPHY', 'FLOAT64'], 'GEOGRAPHY', rowKernel(GT, (v) => withName('ST_SNAPTOGRID', () => geo(snapToGrid(G(v[0]!), v[1] as number)))))]);
  defineScalar('ST_INTERSECTION', [sig(['GEOGRAPHY', 'GEOGRAPHY'], 'GEOGRAPHY', rowKernel(GT, (v) => geo(intersection(G(v[0]!), G(v[1]!)))))]);
  defineScalar('ST_DIFFERENCE', [sig(['GEOGRAPHY', 'GEOGRAPHY'], 'GEOGRAPHY', rowKernel(GT, (v) => geo(difference(G(v[0]!), G(v[1]!)))))]);
  defineScalar('S2_COVERINGCELLIDS', [
    sigf(['GEOGRAPHY', opt('INT64', 'min_level'), opt('INT64', 'max_level'), opt('INT64', 'max_cells'), opt('FLOAT64', 'buffer')], 'ARRAY<INT64>', (c) =>
      rowKernel(arrayOf(T.INT64), (v) => {
        const num = (slot: number, dflt: number) => {
          const x = argAt(c, v, slot);
          return x === undefined || x === null ? dflt : Number(x as bigint | number);
        };
        if (num(4, 0) !== 0) fail('S2_COVERINGCELLIDS: a non-zero buffer is not supported by this emulator');
        return withName('S2_COVERINGCELLIDS', () => acc.coveringCellIds(G(v[0]!), num(1, 0), num(2, 30), num(3, 8)));
      }),
    ),
  ]);
  // ST_UNION: NULL arguments give NULL; NULL array elements are ignored (documented).
  defineScalar('ST_UNION', [
    sig(['GEOGRAPHY', 'GEOGRAPHY'], 'GEOGRAPHY', rowKernel(GT, (v) => geo(unionAll([G(v[0]!), G(v[1]!)])))),
    sig(['ARRAY<GEOGRAPHY>'], 'GEOGRAPHY', rowKernel(GT, (v) => geo(unionAll((v[0] as Value[]).filter((x) => x !== null).map(G))))),
  ]);

  const BOX = structOf(['xmin', 'ymin', 'xmax', 'ymax'].map((name) => ({ name, type: T.FLOAT64 })));
  const boxValue = (b: Box): Value[] => [b.xmin, b.ymin, b.xmax, b.ymax];
  defineScalar('ST_BOUNDINGBOX', [
    sig(['GEOGRAPHY'], () => BOX, rowKernel(BOX, (v) => {
      const e = extentOf(G(v[0]!));
      return e ? boxValue(toBox(e)) : null;
    })),
  ]);
  // ST_EXTENT: the box of all inputs; a longitude span of 180 degrees or more becomes [-180, 180] (documented).
  defineAggregate('ST_EXTENT', [
    asig(['GEOGRAPHY'], () => BOX, () => () => {
      const groups: Extent[][] = [];
      const accum: GroupsAccumulator = {
        resize(n) {
          while (groups.length < n) groups.push([]);
        },
        update(args, g, n) {
          const vals = valuesOf(args[0]!, n);
          for (let i = 0; i < n; i++) {
            if (vals[i] === null) continue;
            const e = extentOf(G(vals[i]!));
            if (e) groups[g[i]!]!.push(e);
          }
        },
        finish(n) {
          const out: Value[] = [];
          for (let i = 0; i < n; i++) {
            const es = groups[i] ?? [];
            if (es.length === 0) {
              out.push(null);
              continue;
            }
            const all: Extent = { lng: es.flatMap((e) => e.lng), lat: [Math.min(...es.map((e) => e.lat[0])), Math.max(...es.map((e) => e.lat[1]))] };
            out.push(boxValue(toBox(all, true)));
          }
          return vectorFromValues(BOX, out);
        },
      };
      return accum;
    }),
  ]);

  // ST_CENTROID_AGG: the centroid of all inputs taken together (highest dimension wins).
  defineAggregate('ST_CENTROID_AGG', [
    asig(['GEOGRAPHY'], 'GEOGRAPHY', () => () => collectGeographies((gs) => {
      const all: Geo = { points: gs.flatMap((x) => x.points), lines: gs.flatMap((x) => x.lines), polys: gs.flatMap((x) => x.polys) };
      const c = centroid(all);
      return c ? geo({ points: [c], lines: [], polys: [] }) : null;
    })),
  ]);

  defineAggregate('ST_UNION_AGG', [
    asig(['GEOGRAPHY'], 'GEOGRAPHY', () => () => collectGeographies((gs) => (gs.length === 0 ? null : geo(unionAll(gs))))),
  ]);
}

/** An aggregate over the non-NULL GEOGRAPHY inputs of each group, computed at the end from all of them. */
function collectGeographies(finishGroup: (gs: Geo[]) => Value): GroupsAccumulator {
  const groups: Geo[][] = [];
  return {
    resize(n) {
      while (groups.length < n) groups.push([]);
    },
    update(args, g, n) {
      const vals = valuesOf(args[0]!, n);
      for (let i = 0; i < n; i++) if (vals[i] !== null) groups[g[i]!]!.push(G(vals[i]!));
    },
    finish(n) {
      const out: Value[] = [];
      for (let i = 0; i < n; i++) out.push(finishGroup(groups[i] ?? []));
      return vectorFromValues(T.GEOGRAPHY, out);
    },
  };
}

// ---------------------------------------------------------------- ST_CLUSTERDBSCAN

/**
 * When every value is one point: for each value, the indexes (ascending) of
 * the values that can lie within `eps` meters, from a grid over the points'
 * unit vectors with cells as wide as that distance's chord (a small margin
 * keeps rounding on the safe side; the caller still measures each pair). A
 * grid cell's 27 neighbours hold every such point, so the pairs measured
 * are the near ones, not all n^2. Undefined otherwise (lines and polygons
 * reach beyond their vertices).
 */
function pointCandidates(gs: readonly (Geo | null)[], eps: number): ((i: number) => number[]) | undefined {
  const pts: (ReturnType<typeof s2p> | null)[] = [];
  for (const g of gs) {
    if (g === null || isEmpty(g)) pts.push(null);
    else if (g.points.length === 1 && g.lines.length === 0 && g.polys.length === 0) pts.push(s2p(g.points[0]!));
    else return undefined;
  }
  const angle = eps / R;
  if (!(angle < Math.PI / 2)) return undefined;
  const cell = 2 * Math.sin(angle / 2) * (1 + 1e-9) + 1e-12;
  const keyOf = (x: number, y: number, z: number) => `${x},${y},${z}`;
  const cells = new Map<string, number[]>();
  const at = pts.map((p, i) => {
    if (!p) return null;
    const c = [Math.floor(p.vector.x / cell), Math.floor(p.vector.y / cell), Math.floor(p.vector.z / cell)] as const;
    const k = keyOf(...c);
    const list = cells.get(k);
    if (list) list.push(i);
    else cells.set(k, [i]);
    return c;
  });
  return (i) => {
    const c = at[i];
    if (!c) return [];
    const out: number[] = [];
    for (let dx = -1; dx <= 1; dx++) for (let dy = -1; dy <= 1; dy++) for (let dz = -1; dz <= 1; dz++) out.push(...(cells.get(keyOf(c[0] + dx, c[1] + dy, c[2] + dz)) ?? []));
    return out.sort((a, b) => a - b);
  };
}

/**
 * ST_CLUSTERDBSCAN over one window partition, rows in window order (the
 * executor's window operator calls this). A value is a core value when at least
 * `minPts` values, itself included, lie within `eps` meters; clusters are
 * numbered from 0 in the order of their first core value, border values join
 * the first cluster that reaches them, and noise and empty values get NULL.
 */
export function clusterDbscan(values: readonly Value[], eps: Value, minPts: Value): (bigint | null)[] {
  if (eps === null || minPts === null) fail('ST_CLUSTERDBSCAN: epsilon and minimum_geographies must not be NULL');
  const e = Number(eps);
  const m = Number(minPts);
  if (!(e >= 0)) fail('ST_CLUSTERDBSCAN: epsilon must be non-negative');
  if (!(m >= 0)) fail('ST_CLUSTERDBSCAN: minimum_geographies must be non-negative');
  const gs = values.map((v) => (v === null ? null : G(v)));
  const within = (a: Geo | null, b: Geo | null): boolean => {
    if (a === null || b === null) return false;
    const d = distanceMeters(a, b);
    return d !== null && d <= e;
  };
  const candidates = pointCandidates(gs, e);
  const near = gs.map((a, i) => (candidates ? candidates(i) : gs.map((_, j) => j)).filter((j) => within(a, gs[j]!)));
  const core = near.map((ns) => ns.length > 0 && ns.length >= m);
  const out: (bigint | null)[] = values.map(() => null);
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
