// Row comparators over precomputed key vectors: the sort, top-N, window and
// aggregate ORDER BY all sort an index array with these. One closure per key
// (chosen by physical layout), never one per row.
import { T } from '../types/types.js';
import type { Decimal, Value } from '../types/values.js';
import { compareWords, wordsOfDecimal } from '../types/decimal-words.js';
import { getValue, type Vector } from '../types/vector.js';
import { compareStrings } from '../functions/compare.js';
import { intervalKeys } from '../functions/interval-range-kernels.js';
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
  let cmp: RowComparator;
  const dec = v.decimal;
  if (dec) {
    // NUMERIC / BIGNUMERIC words (a scan's): compared as they are, no Decimal made.
    const { words, width } = dec;
    return withNulls((a, b) => sign * compareWords(words, a, words, b, width), nulls, nullA);
  }
  if (v.interval) {
    // INTERVAL parts (a scan's): ordered by their keys, no Interval made.
    const k = intervalKeys(v, v.length);
    return withNulls((a, b) => {
      const x = k[a]!;
      const y = k[b]!;
      return x < y ? -sign : x > y ? sign : 0;
    }, nulls, nullA);
  }
  const d = v.data;
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
    else if (t.kind === 'STRING' && !anyHighUnit(vals, nulls, v.length)) {
      // No UTF-16 unit >= U+D800 anywhere: JS string order is code point order (see thresholdComparator).
      cmp = (a, b) => {
        const x = vals[a] as string;
        const y = vals[b] as string;
        return x < y ? -sign : x > y ? sign : 0;
      };
    } else cmp = (a, b) => sign * compareValues(vals[a]!, vals[b]!, t);
  }
  return withNulls(cmp, nulls, nullA);
}

/** `cmp` with NULL rows placed first (nullA -1) or last (1) whatever the direction. */
function withNulls(cmp: RowComparator, nulls: Vector['nulls'], nullA: number): RowComparator {
  if (nulls === null) return cmp;
  return (a, b) => {
    const na = nulls[a] === 1;
    const nb = nulls[b] === 1;
    if (na || nb) return na === nb ? 0 : na ? nullA : -nullA;
    return cmp(a, b);
  };
}

const HIGH_UNIT = /[\uD800-\uFFFF]/;

/** Whether some non-NULL string of the vector holds a UTF-16 unit >= U+D800 (where JS order and code point order can differ). */
function anyHighUnit(vals: readonly Value[], nulls: Uint8Array | null, n: number): boolean {
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    if (HIGH_UNIT.test(vals[i] as string)) return true;
  }
  return false;
}

/** Compares row j of a key vector with a fixed value: the sign keyComparator would give (row j, that value). */
export type ValueComparator = (j: number) => number;

/**
 * keyComparator of rows of `v` against row 0 of `t` (a top-N threshold),
 * without concatenating the two: one closure per layout.
 */
export function thresholdComparator(v: Vector, t: Vector, spec: KeySpec): ValueComparator {
  const nulls = v.nulls;
  const nullA = spec.nullsFirst ? -1 : 1;
  if (t.nulls !== null && t.nulls[0] === 1) {
    // Against a NULL: NULL rows are peers, others fall on the far side of NULLs.
    return nulls === null ? () => -nullA : (j) => (nulls[j] === 1 ? 0 : -nullA);
  }
  const sign = spec.descending ? -1 : 1;
  const dec = v.decimal;
  const y = dec && (t.decimal ? t.decimal.words.subarray(0, dec.width) : wordsOfDecimal(getValue(t, 0) as Decimal, dec.width));
  if (dec && y) {
    // NUMERIC / BIGNUMERIC words against the threshold's.
    const { words, width } = dec;
    const cmp: ValueComparator = (j) => sign * compareWords(words, j, y, 0, width);
    return nulls === null ? cmp : (j) => (nulls[j] === 1 ? nullA : cmp(j));
  }
  if (v.interval) {
    // INTERVAL parts against the threshold's key (< and > compare a number and a bigint exactly).
    const k = intervalKeys(v, v.length);
    const y = intervalKeys(t, 1)[0]!;
    const cmp: ValueComparator = (j) => {
      const x = k[j]!;
      return x < y ? -sign : x > y ? sign : 0;
    };
    return nulls === null ? cmp : (j) => (nulls[j] === 1 ? nullA : cmp(j));
  }
  const d = v.data;
  const td = t.data;
  let cmp: ValueComparator;
  if (d instanceof Float64Array && td instanceof Float64Array) {
    const y = td[0]!;
    cmp = (j) => {
      const x = d[j]!;
      return x < y ? -sign : x > y ? sign : x === y ? 0 : sign * compareFloats(x, y);
    };
  } else if ((d instanceof Int32Array || d instanceof Uint8Array) && d.constructor === td.constructor) {
    const y = (td as Int32Array | Uint8Array)[0]!;
    cmp = (j) => {
      const x = d[j]!;
      return x < y ? -sign : x > y ? sign : 0;
    };
  } else if (Array.isArray(d) && Array.isArray(td)) {
    const y = td[0]!;
    const t0 = v.type;
    const coll = spec.collation && t0.kind === 'STRING' ? collatorFor(spec.collation) : null;
    if (coll) cmp = (j) => sign * coll.compare(d[j] as string, y as string);
    else if (t0.kind === 'STRING' && !HIGH_UNIT.test(y as string)) {
      // JS compares UTF-16 code units; that is code point order whenever one side has no unit >= U+D800:
      // at the first difference its unit is below U+D800 and the other's unit sorts the same either way.
      const ys = y as string;
      cmp = (j) => {
        const x = d[j] as string;
        return x < ys ? -sign : x > ys ? sign : 0;
      };
    } else if (t0.kind === 'STRING') cmp = (j) => sign * compareStrings(d[j] as string, y as string);
    else cmp = (j) => sign * compareValues(d[j]!, y, t0);
  } else {
    // Mixed INT64 layouts (doubles against BigInt): compare as scalars.
    const y = getValue(t, 0);
    const t0 = v.type;
    cmp = (j) => sign * compareValues(getValue(v, j), y, t0);
  }
  if (nulls === null) return cmp;
  return (j) => (nulls[j] === 1 ? nullA : cmp(j));
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

/** A key's typed array, or null for the other layouts (without boxing a view's rows to find out). */
const typedData = (v: Vector): Vector['data'] | null => (v.decimal || v.interval || v.nested ? null : v.data);

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
  const [rk, rs] = rankStrings(keys, specs, n);
  const fast = rk.length > 1 ? firstKeyThenTies(rk, rs, n) : rankSort(rk, rs, n);
  return fast?.idx ?? sortIndexes(n, rowsComparator(keys, specs));
}

/** Ascending order with no NULLs: what a ranked string key sorts by. */
const RANKED: KeySpec = { descending: false, nullsFirst: false };

/**
 * STRING keys (without collation) as Int32 rank keys for the typed fast path:
 * distinct strings sorted once (code point order; JS order when no unit is
 * >= U+D800), each row's rank with direction and NULL placement folded in, so
 * equal strings share a rank. A 1M-row sort by a 10k-value string column made
 * ~20M comparator calls before.
 */
function rankStrings(keys: readonly Vector[], specs: readonly KeySpec[], n: number): [readonly Vector[], readonly KeySpec[]] {
  if (n < 64 || !keys.some((k, i) => k.type.kind === 'STRING' && !specs[i]!.collation)) return [keys, specs];
  const rk: Vector[] = [];
  const rs: KeySpec[] = [];
  for (let k = 0; k < keys.length; k++) {
    const v = keys[k]!;
    const spec = specs[k]!;
    if (v.type.kind !== 'STRING' || spec.collation) {
      rk.push(v);
      rs.push(spec);
      continue;
    }
    rk.push(stringRankKey(v, spec, n));
    rs.push(RANKED);
  }
  return [rk, rs];
}

function stringRankKey(v: Vector, spec: KeySpec, n: number): Vector {
  const vals = v.data as Value[];
  const nulls = v.nulls;
  const index = new Map<string, number>();
  const distinct: string[] = [];
  const code = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) {
      code[i] = -1;
      continue;
    }
    const s = vals[i] as string;
    let c = index.get(s);
    if (c === undefined) {
      c = distinct.length;
      index.set(s, c);
      distinct.push(s);
    }
    code[i] = c;
  }
  const u = distinct.length;
  const order = new Int32Array(u);
  for (let c = 0; c < u; c++) order[c] = c;
  if (anyHighUnit(distinct, null, u)) order.sort((a, b) => compareStrings(distinct[a]!, distinct[b]!));
  else order.sort((a, b) => (distinct[a]! < distinct[b]! ? -1 : 1)); // distinct: never equal
  const rankOf = new Int32Array(u);
  for (let r = 0; r < u; r++) rankOf[order[r]!] = spec.descending ? u - 1 - r : r;
  const out = new Int32Array(n);
  const nullRank = spec.nullsFirst ? -1 : u;
  for (let i = 0; i < n; i++) {
    const c = code[i]!;
    out[i] = c < 0 ? nullRank : rankOf[c]!;
  }
  // DATE is the type whose layout is Int32Array; the vector only ever feeds the rank sort.
  return { type: T.DATE, length: n, data: out, nulls: null };
}

/** Longest run of equal first-key ranks that firstKeyThenTies orders with the comparator. */
const MAX_TIE_RUN = 32;

/**
 * Several keys whose first one is (nearly) unique, as in ORDER BY k, id: one
 * rank pass over the first key, then each run of ties ordered by the other
 * keys with a stable insertion sort, instead of a rank pass per key. When the
 * first key repeats more than MAX_TIE_RUN times, the full rank sort runs
 * (reusing the first key's ranks).
 */
function firstKeyThenTies(keys: readonly Vector[], specs: readonly KeySpec[], n: number): { idx: Int32Array } | null {
  const d0 = typedData(keys[0]!);
  if (n < 64 || !(d0 instanceof Float64Array || d0 instanceof Int32Array || d0 instanceof Uint8Array)) return rankSort(keys, specs, n);
  const first = denseRanks(keys[0]!, specs[0]!, n);
  // Fewer ranks than n / MAX_TIE_RUN: some run is longer for sure.
  if (first.radix * MAX_TIE_RUN < n) return rankSort(keys, specs, n, null, first);
  const r0 = first.ranks;
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  const byFirst = new Int32Array(n);
  countingPass(idx, byFirst, r0, first.radix, n);
  // Counting sorts are stable and start from row order: a run lists its rows ascending.
  let maxRun = 1;
  for (let s = 0; s < n; ) {
    let e = s + 1;
    const r = r0[byFirst[s]!]!;
    while (e < n && r0[byFirst[e]!] === r) e++;
    if (e - s > maxRun) maxRun = e - s;
    s = e;
  }
  if (maxRun > MAX_TIE_RUN) return rankSort(keys, specs, n, null, first);
  if (maxRun === 1) return { idx: byFirst };
  const rest = rowsComparator(keys.slice(1), specs.slice(1));
  for (let s = 0; s < n; ) {
    let e = s + 1;
    const r = r0[byFirst[s]!]!;
    while (e < n && r0[byFirst[e]!] === r) e++;
    // Insertion sort; rowsComparator breaks full ties by row index (stable).
    for (let i = s + 1; i < e; i++) {
      const row = byFirst[i]!;
      let j = i;
      while (j > s && rest(row, byFirst[j - 1]!) < 0) {
        byFirst[j] = byFirst[j - 1]!;
        j--;
      }
      byFirst[j] = row;
    }
    s = e;
  }
  return { idx: byFirst };
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
  const [rk, rs] = rankStrings(keys, specs, n);
  const fast = rankSort(rk, rs, n, need ?? keys.map(() => true));
  return fast ?? { idx: sortIndexes(n, rowsComparator(keys, specs)), ranks: null };
}

function rankSort(
  keys: readonly Vector[],
  specs: readonly KeySpec[],
  n: number,
  need: readonly boolean[] | null = null,
  /** The first key's ranks when the caller computed them already. */
  firstRanks: { ranks: Int32Array; radix: number } | null = null,
): { idx: Int32Array; ranks: Int32Array[] } | null {
  if (n < 64 || keys.length === 0) return null;
  for (const k of keys) {
    const d = typedData(k);
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
    const { ranks, radix } = k === 0 && firstRanks !== null ? firstRanks : denseRanks(keys[k]!, specs[k]!, n);
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
  // Values (no NULL, no NaN) with their rows; -0 ranks with +0.
  const vals = new Float64Array(n);
  const rows = new Int32Array(n);
  let m = 0;
  let nanRows = 0;
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const x = d[i]!;
    if (x !== x) {
      nanRows++;
      continue;
    }
    vals[m] = x === 0 ? 0 : x;
    rows[m++] = i;
  }
  const asc = radixRanks(vals, rows, m);
  const u = asc.unique;
  // Layout of ranks: [NULL?] [NaN / values in direction order] [NULL?]
  const nullRank = spec.nullsFirst ? 0 : u + 1;
  const base = spec.nullsFirst ? 1 : 0;
  const nanRank = spec.descending ? base + u : base;
  const valBase = spec.descending ? base : base + 1;
  const ranks = asc.ranks; // ascending value rank per row; rows without a value are set below
  if (m < n) {
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) ranks[i] = -1;
      else if (nanRows > 0 && d[i] !== d[i]) ranks[i] = -2;
    }
  }
  for (let i = 0; i < n; i++) {
    const r = ranks[i]!;
    ranks[i] = r === -1 ? nullRank : r === -2 ? nanRank : valBase + (spec.descending ? u - 1 - r : r);
  }
  return { ranks, radix: u + 2 };
}

/**
 * Ascending dense rank of each value (ties share a rank), written at its row:
 * an LSD radix sort of the doubles' bits (mapped so unsigned order is numeric
 * order), bytes on which every value agrees skipped, then one walk over the
 * sorted order. Linear in m, where TypedArray#sort plus a binary search per
 * row were the bulk of large sorts. `rows` is reordered; ranks has length n.
 */
function radixRanks(vals: Float64Array, rows: Int32Array, m: number): { ranks: Int32Array; unique: number } {
  const n = rows.length;
  const ranks = new Int32Array(n);
  if (m === 0) return { ranks, unique: 0 };
  const bits = new Uint32Array(vals.buffer, vals.byteOffset, 2 * m);
  let hi: Uint32Array = new Uint32Array(m);
  let lo: Uint32Array = new Uint32Array(m);
  // Sign set: flip all bits; else set the sign bit. Little-endian: word 2i is the low half.
  for (let i = 0; i < m; i++) {
    const h = bits[2 * i + 1]!;
    const l = bits[2 * i]!;
    if (h >= 0x80000000) {
      hi[i] = ~h >>> 0;
      lo[i] = ~l >>> 0;
    } else {
      hi[i] = (h | 0x80000000) >>> 0;
      lo[i] = l;
    }
  }
  // All eight byte histograms in one pass.
  const counts = new Int32Array(8 * 256);
  for (let i = 0; i < m; i++) {
    const l = lo[i]!;
    const h = hi[i]!;
    counts[l & 255]!++;
    counts[256 + ((l >>> 8) & 255)]!++;
    counts[512 + ((l >>> 16) & 255)]!++;
    counts[768 + (l >>> 24)]!++;
    counts[1024 + (h & 255)]!++;
    counts[1280 + ((h >>> 8) & 255)]!++;
    counts[1536 + ((h >>> 16) & 255)]!++;
    counts[1792 + (h >>> 24)]!++;
  }
  let r: Int32Array = rows;
  let hi2: Uint32Array = new Uint32Array(m);
  let lo2: Uint32Array = new Uint32Array(m);
  let r2: Int32Array = new Int32Array(m);
  for (let pass = 0; pass < 8; pass++) {
    const off = pass * 256;
    let skip = false;
    for (let b = 0; b < 256; b++) {
      const c = counts[off + b]!;
      if (c === m) skip = true;
      if (c !== 0) break;
    }
    if (skip) continue; // every value has the same byte here
    // Exclusive prefix sums become the scatter positions.
    let sum = 0;
    for (let b = 0; b < 256; b++) {
      const c = counts[off + b]!;
      counts[off + b] = sum;
      sum += c;
    }
    const useHi = pass >= 4;
    const shift = (pass & 3) * 8;
    const src = useHi ? hi : lo;
    for (let i = 0; i < m; i++) {
      const dst = counts[off + ((src[i]! >>> shift) & 255)]!++;
      hi2[dst] = hi[i]!;
      lo2[dst] = lo[i]!;
      r2[dst] = r[i]!;
    }
    let t: Uint32Array = hi;
    hi = hi2;
    hi2 = t;
    t = lo;
    lo = lo2;
    lo2 = t;
    const tr = r;
    r = r2;
    r2 = tr;
  }
  let u = 0;
  let ph = hi[0]!;
  let pl = lo[0]!;
  for (let i = 0; i < m; i++) {
    const h = hi[i]!;
    const l = lo[i]!;
    if (h !== ph || l !== pl) {
      u++;
      ph = h;
      pl = l;
    }
    ranks[r[i]!] = u;
  }
  return { ranks, unique: u + 1 };
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
