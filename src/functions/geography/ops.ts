// Operations that build new values: ST_BOUNDARY and the union behind ST_UNION_AGG.
import { covers, intersects, locateEdgeMid } from './measure.js';
import { fromS2, loopOf, s2p, sameLL, type Geo, type LngLat, type Poly, type Ring } from './model.js';
import { crossing, CROSS, onSegment, segmentIntersection } from './sphere.js';

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
        if (!sameLL(prev, c)) out.push({ a: prev, b: c, from });
        prev = c;
      }
    }),
  );
  return out;
}

/**
 * Union of two intersecting polygons: split both boundaries where they meet,
 * keep the pieces of each that lie outside the other (a shared piece once when
 * both interiors are on the same side), and chain the pieces back into rings.
 */
function unionTwo(p: Poly, q: Poly): Poly[] {
  const cuts = new Map<string, LngLat[]>();
  const addCut = (k: string, x: LngLat) => {
    const l = cuts.get(k) ?? [];
    if (!l.some((y) => sameLL(x, y))) l.push(x);
    cuts.set(k, l);
  };
  const edges = (poly: Poly) => poly.flatMap((r, ri) => r.map((v, i) => ({ key: `${ri}:${i}`, a: v, b: r[(i + 1) % r.length]! })));
  const pe = edges(p);
  const qe = edges(q);
  for (const e of pe) {
    for (const f of qe) {
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
  for (const [pieces, other] of [[splitRings(p, cuts, 0), q], [splitRings(q, cuts, 1), p]] as const) {
    for (const pc of pieces) {
      const where = locateEdgeMid(other, s2p(pc.a), s2p(pc.b));
      if (where === 'exterior' || (where === 'same' && pc.from === 0)) keep.push(pc);
      else dropped++;
    }
  }
  // Polygons that only touch at vertices stay two polygons.
  return dropped === 0 ? [p, q] : chainRings(keep);
}

/** Chains directed pieces into closed rings; small (counter-clockwise) rings are shells, the others holes. */
function chainRings(pieces: Piece[]): Poly[] {
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
  const rings: Ring[] = [];
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

function unionPolys(polys: readonly Poly[]): Poly[] {
  let acc: Poly[] = [];
  for (const p of polys) {
    let merged: Poly[] = [p];
    const rest: Poly[] = [];
    for (const r of acc) {
      const m = merged[0]!;
      if (merged.length !== 1 || !intersects(one(r), one(m))) rest.push(r);
      else if (covers(one(r), one(m))) merged = [r];
      else if (covers(one(m), one(r))) continue;
      else merged = unionTwo(r, m);
    }
    acc = [...rest, ...merged];
  }
  return acc;
}

/** The union of values: polygons merged, lines and points dropped where already covered, duplicates removed. */
export function unionAll(gs: readonly Geo[]): Geo {
  const polys = unionPolys(gs.flatMap((g) => g.polys));
  const area: Geo = { points: [], lines: [], polys };
  const lines: LngLat[][] = [];
  for (const l of gs.flatMap((g) => g.lines)) {
    const lg: Geo = { points: [], lines: [l], polys: [] };
    if (covers(area, lg) || covers({ points: [], lines, polys: [] }, lg)) continue;
    lines.push(l);
  }
  const cover: Geo = { points: [], lines, polys };
  const points: LngLat[] = [];
  const seen = new Set<string>();
  for (const q of gs.flatMap((g) => g.points)) {
    const x = s2p(q);
    const k = `${x.x},${x.y},${x.z}`;
    if (seen.has(k)) continue;
    seen.add(k);
    if ((lines.length || polys.length) && covers(cover, { points: [q], lines: [], polys: [] })) continue;
    points.push(q);
  }
  return { points, lines, polys };
}
