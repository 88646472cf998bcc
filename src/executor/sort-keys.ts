// Row comparators over precomputed key vectors: the sort, top-N, window and
// aggregate ORDER BY all sort an index array with these. One closure per key
// (chosen by physical layout), never one per row.
import type { Value } from '../types/values.js';
import type { Vector } from '../types/vector.js';
import { collatorFor } from '../functions/collation.js';
import { compareFloats, compareValues } from './values-compare.js';

export interface KeySpec {
  readonly descending: boolean;
  readonly nullsFirst: boolean;
  /** COLLATE specification, e.g. 'und:ci' (STRING keys). */
  readonly collation?: string;
}

export type RowComparator = (a: number, b: number) => number;

/** Comparator of one key: NULL placement by `nullsFirst` (independent of direction), then value order. */
export function keyComparator(v: Vector, spec: KeySpec): RowComparator {
  const nulls = v.nulls;
  const sign = spec.descending ? -1 : 1;
  const nullA = spec.nullsFirst ? -1 : 1;
  const d = v.data;
  let cmp: RowComparator;
  if (d instanceof Float64Array) {
    cmp = (a, b) => {
      const x = d[a]!;
      const y = d[b]!;
      return x < y ? -sign : x > y ? sign : x === y ? 0 : sign * compareFloats(x, y);
    };
  } else if (d instanceof Int32Array || d instanceof Uint8Array) {
    cmp = (a, b) => {
      const x = d[a]!;
      const y = d[b]!;
      return x < y ? -sign : x > y ? sign : 0;
    };
  } else if (d instanceof BigInt64Array) {
    cmp = (a, b) => {
      const x = d[a]!;
      const y = d[b]!;
      return x < y ? -sign : x > y ? sign : 0;
    };
  } else {
    const vals = d as Value[];
    const t = v.type;
    const coll = spec.collation && t.kind === 'STRING' ? collatorFor(spec.collation) : null;
    if (coll) cmp = (a, b) => sign * coll.compare(vals[a] as string, vals[b] as string);
    else cmp = (a, b) => sign * compareValues(vals[a]!, vals[b]!, t);
  }
  if (nulls === null) return cmp;
  return (a, b) => {
    const na = nulls[a] === 1;
    const nb = nulls[b] === 1;
    if (na || nb) return na === nb ? 0 : na ? nullA : -nullA;
    return cmp(a, b);
  };
}

/** Lexicographic comparator over several keys, with row index as the final tie-break (stable). */
export function rowsComparator(keys: readonly Vector[], specs: readonly KeySpec[]): RowComparator {
  const cs = keys.map((k, i) => keyComparator(k, specs[i]!));
  if (cs.length === 1) {
    const c0 = cs[0]!;
    return (a, b) => c0(a, b) || a - b;
  }
  return (a, b) => {
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i]!(a, b);
      if (c !== 0) return c;
    }
    return a - b;
  };
}

/** Same as rowsComparator without the stability tie-break: 0 means peers. */
export function peersComparator(keys: readonly Vector[], specs: readonly KeySpec[]): RowComparator {
  const cs = keys.map((k, i) => keyComparator(k, specs[i]!));
  return (a, b) => {
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i]!(a, b);
      if (c !== 0) return c;
    }
    return 0;
  };
}

/** Sorts row indexes 0..n-1 (stable). */
export function sortIndexes(n: number, cmp: RowComparator): Int32Array {
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  idx.sort(cmp);
  return idx;
}

/**
 * Stable sort of rows 0..n-1 by `keys`. Typed-array keys take a fast path:
 * each key becomes a dense rank (NULL/NaN/direction folded in; integer keys
 * of modest range rank as x - min without sorting), then stable counting
 * sorts by rank, last key first (LSD radix) — no JS comparator calls. Other
 * layouts use the comparator sort.
 */
export function sortRows(keys: readonly Vector[], specs: readonly KeySpec[], n: number): Int32Array {
  const fast = rankSort(keys, specs, n);
  return fast?.idx ?? sortIndexes(n, rowsComparator(keys, specs));
}

/**
 * sortRows that also returns each key's dense ranks when the fast path ran
 * (equal rank ⇔ peers), so callers can find group boundaries without comparators.
 */
export function sortRowsWithRanks(
  keys: readonly Vector[],
  specs: readonly KeySpec[],
  n: number,
  /** Keys whose ranks the caller reads (default all); others may come back empty. */
  need: readonly boolean[] | null = null,
): { idx: Int32Array; ranks: Int32Array[] | null } {
  const fast = rankSort(keys, specs, n, need ?? keys.map(() => true));
  return fast ?? { idx: sortIndexes(n, rowsComparator(keys, specs)), ranks: null };
}

function rankSort(keys: readonly Vector[], specs: readonly KeySpec[], n: number, need: readonly boolean[] | null = null): { idx: Int32Array; ranks: Int32Array[] } | null {
  if (n < 64 || keys.length === 0) return null;
  for (const k of keys) {
    const d = k.data;
    if (!(d instanceof Float64Array || d instanceof Int32Array || d instanceof Uint8Array)) return null;
  }
  // LSD: a stable counting sort by each key's rank, last key first. Ranks are
  // small integers (radix <= 4n + 1026), so each pass is O(n + radix).
  let idx = new Int32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  let out = new Int32Array(n);
  const all: Int32Array[] = new Array(keys.length);
  let identity = true;
  for (let k = keys.length - 1; k >= 0; k--) {
    // Input rows already in this key's order (ids in scan order): no ranks needed for the pass.
    if (identity && !(need?.[k] ?? false) && rawInOrder(keys[k]!, specs[k]!, n)) {
      all[k] = new Int32Array(0);
      continue;
    }
    identity = false;
    const { ranks, radix } = denseRanks(keys[k]!, specs[k]!, n);
    all[k] = ranks;
    // Rows already in this key's order (scan order of ids, a pre-sorted input): the pass would be the identity.
    if (inRankOrder(idx, ranks, n)) continue;
    countingPass(idx, out, ranks, radix, n);
    const t = idx;
    idx = out;
    out = t;
  }
  return { idx, ranks: all };
}

/** Whether rows 0..n-1 already follow the key's order (typed, no NULLs, no NaN). */
function rawInOrder(v: Vector, spec: KeySpec, n: number): boolean {
  const d = v.data;
  if (v.nulls !== null || !(d instanceof Float64Array || d instanceof Int32Array || d instanceof Uint8Array)) return false;
  if (n === 0) return true;
  let prev = d[0]!;
  if (prev !== prev) return false;
  if (spec.descending) {
    for (let i = 1; i < n; i++) {
      const x = d[i]!;
      if (!(x <= prev)) return false; // NaN fails too
      prev = x;
    }
  } else {
    for (let i = 1; i < n; i++) {
      const x = d[i]!;
      if (!(x >= prev)) return false;
      prev = x;
    }
  }
  return true;
}

function inRankOrder(idx: Int32Array, ranks: Int32Array, n: number): boolean {
  let prev = -Infinity;
  for (let i = 0; i < n; i++) {
    const r = ranks[idx[i]!]!;
    if (r < prev) return false;
    prev = r;
  }
  return true;
}

function countingPass(idx: Int32Array, out: Int32Array, ranks: Int32Array, radix: number, n: number): void {
  const count = new Int32Array(radix + 1);
  for (let i = 0; i < n; i++) count[ranks[i]! + 1]!++;
  for (let r = 0; r < radix; r++) count[r + 1]! += count[r]!;
  for (let i = 0; i < n; i++) {
    const row = idx[i]!;
    out[count[ranks[row]!]!++] = row;
  }
}

/** Rank of every row's key in the final order of that key alone (ties share a rank). */
function denseRanks(v: Vector, spec: KeySpec, n: number): { ranks: Int32Array; radix: number } {
  const d = v.data as Float64Array | Int32Array | Uint8Array;
  const nulls = v.nulls;
  const direct = integralRanks(d, nulls, spec, n);
  if (direct) return direct;
  const vals = new Float64Array(n);
  let m = 0;
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const x = d[i]!;
    if (x === x) vals[m++] = x === 0 ? 0 : x; // -0 ranks with +0
  }
  const sorted = vals.subarray(0, m).sort();
  let u = 0;
  for (let i = 0; i < m; i++) if (i === 0 || sorted[i] !== sorted[u - 1]) sorted[u++] = sorted[i]!;
  const uniq = sorted.subarray(0, u);
  // Layout of ranks: [NULL?] [NaN / values in direction order] [NULL?]
  const nullRank = spec.nullsFirst ? 0 : u + 1;
  const base = spec.nullsFirst ? 1 : 0;
  const nanRank = spec.descending ? base + u : base;
  const valBase = spec.descending ? base : base + 1;
  const ranks = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) {
      ranks[i] = nullRank;
      continue;
    }
    const x = d[i]!;
    if (x !== x) {
      ranks[i] = nanRank;
      continue;
    }
    let lo = 0;
    let hi = u - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (uniq[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    ranks[i] = valBase + (spec.descending ? u - 1 - lo : lo);
  }
  return { ranks, radix: u + 2 };
}

/** Integer keys over a modest range rank as `x - min` directly (no sort needed). */
function integralRanks(d: Float64Array | Int32Array | Uint8Array, nulls: Uint8Array | null, spec: KeySpec, n: number): { ranks: Int32Array; radix: number } | null {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const x = d[i]!;
    if (x !== Math.floor(x)) return null; // fractional or NaN
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const u = min === Infinity ? 0 : max - min + 1;
  if (u > 4 * n + 1024) return null;
  const nullRank = spec.nullsFirst ? 0 : u;
  const base = spec.nullsFirst ? 1 : 0;
  const ranks = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) ranks[i] = nullRank;
    else ranks[i] = base + (spec.descending ? max - d[i]! : d[i]! - min);
  }
  return { ranks, radix: u + 1 };
}
