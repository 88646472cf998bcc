// make_valid => TRUE for WKT / WKB / GeoJSON polygons: a ring that is not
// closed is closed, repeated vertices are dropped, and a ring that crosses
// itself is cut at each crossing into simple loops, each of which becomes a
// polygon (holes go to the loop that covers them). Each loop starts where S2's
// builder starts it: at the first whole input edge (pieces after a cut rank
// after every whole edge), so the documented
// POLYGON((0 -1, 2 1, 2 -1, 0 1)) comes out as
// MULTIPOLYGON(((0 -1, 1 0, 0 1, 0 -1)), ((1 0, 2 -1, 2 1, 1 0))).
import { fromS2, loopOf, makePoly, makeRing, s2p, sameLL, type LngLat, type Poly, type Ring } from './model.js';
import { findCrossing, segmentIntersection } from './sphere.js';

/** A loop vertex and the rank of the edge that leaves it. */
interface RV {
  v: LngLat;
  rank: number;
}

/** Cuts a closed vertex cycle at its first self-crossing, recursively; returns simple cycles. */
function splitLoop(loop: RV[], n: number, depth = 0): RV[][] {
  if (loop.length < 3 || depth > 64) return [loop];
  const pts = loop.map((x) => s2p(x.v));
  const m = loop.length;
  const edges = pts.map((p, i) => [p, pts[(i + 1) % m]!] as const);
  const hit = findCrossing(edges, null, (i, j) => j === i + 1 || (i === 0 && j === m - 1));
  if (!hit) return [loop];
  const [i, j] = hit;
  const x = fromS2(segmentIntersection(pts[i]!, pts[(i + 1) % m]!, pts[j]!, pts[(j + 1) % m]!));
  // Loop 1 follows edge i to the crossing and leaves along the rest of edge j;
  // loop 2 follows the rest of edge i round to edge j and back to the crossing.
  const one: RV[] = [...loop.slice(0, i + 1), { v: x, rank: n + loop[j]!.rank }, ...loop.slice(j + 1)];
  const two: RV[] = [{ v: x, rank: n + loop[i]!.rank }, ...loop.slice(i + 1, j + 1)];
  return [...splitLoop(one, n, depth + 1), ...splitLoop(two, n, depth + 1)];
}

/** Simple loops of one input ring, each rotated to start at its lowest-ranked edge. */
function ringLoops(vs: readonly LngLat[]): Ring[] {
  let d = vs.filter((v, i) => i === 0 || !sameLL(v, vs[i - 1]!));
  if (d.length > 1 && sameLL(d[0]!, d[d.length - 1]!)) d = d.slice(0, -1);
  if (d.length < 3) return [];
  const loops = splitLoop(
    d.map((v, rank) => ({ v, rank })),
    d.length,
  );
  const out: Ring[] = [];
  for (const l of loops) {
    const uniq = l.filter((x, k) => k === 0 || !sameLL(x.v, l[k - 1]!.v));
    if (uniq.length < 3) continue;
    let at = 0;
    uniq.forEach((x, k) => {
      if (x.rank < uniq[at]!.rank) at = k;
    });
    const rotated = [...uniq.slice(at), ...uniq.slice(0, at)].map((x) => x.v);
    try {
      out.push(makeRing([...rotated, rotated[0]!]));
    } catch {
      // A piece that is still not a valid loop (e.g. zero area) is dropped.
    }
  }
  return out;
}

/** The polygons a possibly invalid polygon (shell first) repairs to. */
export function repairPolygon(rings: readonly LngLat[][]): Poly[] {
  if (!rings.length) return [];
  const shells = ringLoops(rings[0]!).map((r) => ({ ring: r, loop: loopOf(makePoly([r], false)[0]!), holes: [] as Ring[] }));
  for (const h of rings.slice(1)) {
    for (const hole of ringLoops(h)) {
      const owner = shells.find((s) => s.loop.containsPoint(s2p(hole[0]!)));
      if (owner) owner.holes.push(hole);
    }
  }
  return shells.map((s) => makePoly([s.ring, ...s.holes], false));
}
