// Polylines assembled the way the service's S2Builder polyline layer does it
// (undirected edges, duplicates merged, WALK paths), for ST_UNION of lines and
// ST_MAKELINE:
//   - an edge that passes through another input vertex is split there;
//   - an edge given twice (either direction) is kept once;
//   - paths start at odd-degree vertices, first along input edges (in input
//     order and direction), then along the reverse of input edges, taken in
//     S2 cell-id order of their start vertex; a walk goes on through a vertex
//     by the unused edge that comes first in input order;
//   - edges left over form closed loops, walked from their first input edge.
// The documented answers this reproduces: ST_UNION of LINESTRING(-122.12 47.67,
// -122.19 47.69) and LINESTRING(-122.12 47.67, -100.19 47.69) is
// LINESTRING(-100.19 47.69, -122.12 47.67, -122.19 47.69), and ST_MAKELINE over
// 1 0 -> 10 0 -> 5 0 -> 5 4 is MULTILINESTRING((1 0, 5 0, 10 0), (5 0, 5 4)).
import { s2 } from 's2js';
import { geoFail, s2p, type LngLat } from './model.js';
import { angleBetween, arcBulge, onSegment } from './sphere.js';

interface Edge {
  a: number;
  b: number;
  /** Position of the edge in the input (its first occurrence). */
  label: number;
  used: boolean;
}

export interface Assembled {
  lines: LngLat[][];
  /** Vertices left without any edge (a line that collapsed to one point). */
  points: LngLat[];
}

/** Vertex tests the edges of one call may make, per vertex and at least (past it the input is refused, not held for minutes). */
const EDGE_TESTS_PER_VERTEX = 8;
const MIN_EDGE_TESTS = 2_000_000;

/**
 * The vertices that may lie on an edge: those inside the box of its endpoints
 * grown by the arc's bulge (1 - cos(angle / 2) from the chord), found by
 * binary search along whichever axis gives the fewest (was every vertex for
 * every edge: a 20,000-point ST_MAKELINE held the engine for minutes).
 */
class NearEdge {
  private readonly coords: [Float64Array, Float64Array, Float64Array];
  /** Vertex ids sorted by x, y and z. */
  private readonly order: [Int32Array, Int32Array, Int32Array];
  private readonly sorted: [Float64Array, Float64Array, Float64Array];
  private tests = 0;
  private readonly maxTests: number;

  constructor(pts: readonly s2.Point[]) {
    const n = pts.length;
    this.maxTests = Math.max(MIN_EDGE_TESTS, EDGE_TESTS_PER_VERTEX * n);
    this.coords = [new Float64Array(n), new Float64Array(n), new Float64Array(n)];
    pts.forEach((p, i) => {
      this.coords[0][i] = p.x;
      this.coords[1][i] = p.y;
      this.coords[2][i] = p.z;
    });
    const axis = (k: 0 | 1 | 2) => Int32Array.from({ length: n }, (_, i) => i).sort((i, j) => this.coords[k][i]! - this.coords[k][j]!);
    this.order = [axis(0), axis(1), axis(2)];
    this.sorted = [0, 1, 2].map((k) => Float64Array.from(this.order[k as 0]!, (i) => this.coords[k as 0][i]!)) as [Float64Array, Float64Array, Float64Array];
  }

  candidates(a: number, b: number): Int32Array {
    const c = this.coords;
    const grow = arcBulge(Math.hypot(c[0][a]! - c[0][b]!, c[1][a]! - c[1][b]!, c[2][a]! - c[2][b]!));
    let best: Int32Array | undefined;
    for (const k of [0, 1, 2] as const) {
      const lo = lowerBound(this.sorted[k], Math.min(c[k][a]!, c[k][b]!) - grow);
      const hi = lowerBound(this.sorted[k], Math.max(c[k][a]!, c[k][b]!) + grow + Number.EPSILON);
      if (!best || hi - lo < best.length) best = this.order[k].subarray(lo, hi);
    }
    if ((this.tests += best!.length) > this.maxTests) geoFail('the input has too many edges passing near many of its vertices for this emulator');
    return best!;
  }
}

function lowerBound(xs: Float64Array, x: number): number {
  let [lo, hi] = [0, xs.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function assembleLines(input: readonly (readonly LngLat[])[]): Assembled {
  // Vertex table keyed by the exact S2 point.
  const verts: LngLat[] = [];
  const ids = new Map<string, number>();
  const idOf = (v: LngLat): number => {
    const p = s2p(v);
    const k = `${p.x},${p.y},${p.z}`;
    let i = ids.get(k);
    if (i === undefined) {
      i = verts.length;
      verts.push(v);
      ids.set(k, i);
    }
    return i;
  };
  const paths = input.map((l) => l.map(idOf));
  const pts = verts.map(s2p);

  // Split every edge at the input vertices lying inside it.
  const near = new NearEdge(pts);
  const raw: [number, number][] = [];
  for (const path of paths) {
    for (let i = 1; i < path.length; i++) {
      const [a, b] = [path[i - 1]!, path[i]!];
      if (a === b) continue;
      const inside: number[] = [];
      for (const v of near.candidates(a, b)) if (v !== a && v !== b && onSegment(pts[v]!, pts[a]!, pts[b]!)) inside.push(v);
      inside.sort((x, y) => angleBetween(pts[a]!.vector, pts[x]!.vector) - angleBetween(pts[a]!.vector, pts[y]!.vector));
      const chain = [a, ...inside, b];
      for (let k = 1; k < chain.length; k++) raw.push([chain[k - 1]!, chain[k]!]);
    }
  }

  // Undirected edges, duplicates merged (the first occurrence keeps its direction).
  const edges: Edge[] = [];
  const seen = new Set<string>();
  for (const [a, b] of raw) {
    const k = a < b ? `${a},${b}` : `${b},${a}`;
    if (seen.has(k)) continue;
    seen.add(k);
    edges.push({ a, b, label: edges.length, used: false });
  }
  const incident: Edge[][] = verts.map(() => []);
  for (const e of edges) {
    incident[e.a]!.push(e);
    incident[e.b]!.push(e);
  }
  const degree = (v: number): number => incident[v]!.length;
  const other = (e: Edge, v: number): number => (e.a === v ? e.b : e.a);

  const walk = (start: number, first: Edge): LngLat[] => {
    const out = [verts[start]!];
    let v = start;
    let e: Edge | undefined = first;
    while (e) {
      e.used = true;
      v = other(e, v);
      out.push(verts[v]!);
      e = incident[v]!.filter((x) => !x.used).sort((x, y) => x.label - y.label)[0];
    }
    return out;
  };

  const lines: LngLat[][] = [];
  // Starts along input edges, in input order and direction.
  for (const e of edges) if (!e.used && degree(e.a) % 2 === 1) lines.push(walk(e.a, e));
  // Starts along reversed input edges, by the S2 cell id of their start vertex.
  const cell = verts.map((_, i) => s2.cellid.fromPoint(pts[i]!));
  const reversed = [...edges].sort((x, y) => (cell[x.b]! < cell[y.b]! ? -1 : cell[x.b]! > cell[y.b]! ? 1 : x.label - y.label));
  for (const e of reversed) if (!e.used && degree(e.b) % 2 === 1) lines.push(walk(e.b, e));
  // What is left is closed loops.
  for (const e of edges) if (!e.used) lines.push(walk(e.a, e));

  const points = verts.filter((_, i) => degree(i) === 0);
  return { lines, points };
}
