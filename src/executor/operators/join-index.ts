// The hash join's build-side key index: dense by value when the keys are
// integers in a small range, else hash chains; the probe of a batch against
// it; and the cache that keeps the index of a stored table's key column.
import type { Rel } from '../../analyzer/resolved.js';
import type { Interval, Value } from '../../types/values.js';
import { BATCH_SIZE, getValue, type Vector } from '../../types/vector.js';
import { hashRows } from '../hash.js';
import { mix32, valuesEqual } from '../values-compare.js';
import { growInt32, intervalPartsEqual, keyWords } from '../vectors.js';
import { decimalOfWords, wordsEqual } from '../../types/decimal-words.js';

/** Row i of a NUMERIC / BIGNUMERIC vector: from its words when it has them (one Decimal, no batch boxed). */
function decimalAt(v: Vector, i: number): Value {
  const d = v.decimal;
  return d ? decimalOfWords(d.words, i, d.width) : getValue(v, i);
}

/** Key equality of probe row i and build row j (NULLs equal here: only null-safe keys reach it with NULLs). */
function keysEqual(pk: readonly Vector[], i: number, bk: readonly Vector[], j: number): boolean {
  for (let k = 0; k < pk.length; k++) {
    const a = pk[k]!;
    const b = bk[k]!;
    const an = a.nulls !== null && a.nulls[i] === 1;
    const bn = b.nulls !== null && b.nulls[j] === 1;
    if (an || bn) {
      if (an !== bn) return false;
      continue;
    }
    if (a.decimal || b.decimal) {
      // NUMERIC / BIGNUMERIC words: equal values have equal words. A side of
      // another form is compared by value, the worded row made a Decimal alone:
      // reading a worded vector's `data` would box its whole batch, and a build
      // side's would keep those objects, uncounted, as long as the join runs.
      const aw = keyWords(a);
      const bw = keyWords(b);
      if (aw !== null && bw !== null && aw.width === bw.width) {
        if (!wordsEqual(aw.words, i, bw.words, j, aw.width)) return false;
      } else if (!valuesEqual(decimalAt(a, i), decimalAt(b, j), a.type)) return false;
      continue;
    }
    const ai = a.interval;
    const bi = b.interval;
    if (ai || bi) {
      // INTERVAL parts: equal after normalizing; a side of Interval values is read by its fields (not by boxing the other).
      const x = ai ? null : ((a.data as Value[])[i] as Interval);
      const y = bi ? null : ((b.data as Value[])[j] as Interval);
      const eq = intervalPartsEqual(ai ? ai.months[i]! : x!.months, ai ? ai.days[i]! : x!.days, ai ? ai.micros[i]! : x!.micros, bi ? bi.months[j]! : y!.months, bi ? bi.days[j]! : y!.days, bi ? bi.micros[j]! : y!.micros);
      if (!eq) return false;
      continue;
    }
    const ad = a.data;
    const bd = b.data;
    if (ad instanceof Float64Array && bd instanceof Float64Array) {
      const x = ad[i]!;
      const y = bd[j]!;
      if (x !== y && !(x !== x && y !== y)) return false;
    } else if (ad instanceof Int32Array || ad instanceof Uint8Array) {
      if (ad[i] !== (bd as Int32Array)[j]) return false;
    } else if (Array.isArray(ad)) {
      if (!valuesEqual(ad[i]!, (bd as Value[])[j]!, a.type)) return false;
    } else if (!valuesEqual(getValue(a, i), getValue(b, j), a.type)) return false;
  }
  return true;
}

/** True when row i can't match under `=` (NULL or NaN in a non-null-safe key). */
function unmatchable(keys: readonly Vector[], nullSafe: readonly boolean[], i: number): boolean {
  for (let k = 0; k < keys.length; k++) {
    if (nullSafe[k]) continue;
    const v = keys[k]!;
    if (v.nulls !== null && v.nulls[i] === 1) return true;
    if (v.type.kind !== 'FLOAT64') continue; // (reading `data` of decimal words would box them)
    const d = v.data;
    if (d instanceof Float64Array && d[i] !== d[i]) return true;
  }
  return false;
}

export interface Pairs {
  l: Int32Array;
  r: Int32Array;
  count: number;
  /** Resume point: probe row, and build row to continue its chain from (-1 = chain start). */
  nextRow: number;
  nextBuild: number;
}

/** Pairs gathered per probe call; a many-to-many key stops and resumes here, bounding memory. */
export const PROBE_CHUNK = 16 * BATCH_SIZE;

/**
 * Probes rows [from, n) of one batch against the build side's hash chains and
 * returns (probe row, build row) key matches in probe order, stopping once
 * PROBE_CHUNK pairs are gathered (`nextRow < n` then). A plain function, not
 * part of the async generator, so V8 optimizes the hot loop.
 */
export function probe(
  pk: readonly Vector[],
  ph: Int32Array,
  n: number,
  bk: readonly Vector[],
  bh: Int32Array,
  head: Int32Array,
  next: Int32Array,
  mask: number,
  nullSafe: readonly boolean[],
  firstOnly: boolean,
  leftMatched: Uint8Array,
  buf: Pairs,
  from: number,
  fromBuild: number,
): Pairs {
  let l = buf.l;
  let r = buf.r;
  let c = 0;
  // Single FLOAT64-layout key without NULLs on the probe side: compare inline.
  // (Decimal words are not read through `data`, which would box them.)
  const p0 = pk.length === 1 && !pk[0]!.decimal && !pk[0]!.interval && pk[0]!.data instanceof Float64Array && pk[0]!.nulls === null && !nullSafe[0] ? (pk[0]!.data as Float64Array) : null;
  const b0 = p0 !== null && !bk[0]!.decimal && !bk[0]!.interval && bk[0]!.data instanceof Float64Array ? (bk[0]!.data as Float64Array) : null;
  const checkNulls = p0 === null || b0 === null;
  for (let i = from; i < n; i++) {
    if (checkNulls && unmatchable(pk, nullSafe, i)) continue;
    const h = ph[i]!;
    let j = i === from && fromBuild >= 0 ? fromBuild : head[mix32(h) & mask]!;
    for (; j >= 0; j = next[j]!) {
      if (bh[j] !== h) continue;
      if (b0 !== null) {
        if (p0![i] !== b0[j]) continue;
      } else if (!keysEqual(pk, i, bk, j)) continue;
      if (firstOnly) {
        leftMatched[i] = 1;
        break;
      }
      if (c === PROBE_CHUNK) return { l, r, count: c, nextRow: i, nextBuild: j };
      if (c === l.length) {
        l = growInt32(l, c * 2);
        r = growInt32(r, c * 2);
      }
      l[c] = i;
      r[c++] = j;
    }
  }
  return { l, r, count: c, nextRow: n, nextBuild: -1 };
}

/** Build rows chained by key value: head[key - min] -> first row, next[row] -> following row. */
export interface DenseIndex {
  readonly min: number;
  readonly max: number;
  readonly head: Int32Array;
  readonly next: Int32Array;
  readonly mask: number;
  /** No key repeats among build rows: a probe row matches at most head[key - min]. */
  readonly unique?: boolean;
}

function denseIndex(bk: readonly Vector[], m: number, nullSafe: readonly boolean[]): DenseIndex | null {
  if (bk.length !== 1 || nullSafe[0] || m === 0) return null;
  const v = bk[0]!;
  const k = v.type.kind;
  if (k !== 'INT64' && k !== 'DATE') return null;
  const d = v.data;
  if (!(d instanceof Float64Array || d instanceof Int32Array)) return null;
  const nulls = v.nulls;
  // Two standalone loops rather than one function: V8 OSRs the first loop of
  // a once-per-query function with no feedback for the second yet, which then
  // deoptimized there ("insufficient type feedback") on early builds.
  keyRange(d, nulls, m);
  const min = KEY_RANGE[0]!;
  const max = KEY_RANGE[1]!;
  if (min === Infinity || max - min + 1 > 2 * m + 1024) return null;
  const head = new Int32Array(max - min + 1).fill(-1);
  const next = new Int32Array(m);
  const unique = chainByValue(d, nulls, m, min, head, next);
  return { min, max, head, next, mask: 0, unique };
}

/** keyRange's answer: [min, max]. */
const KEY_RANGE = new Float64Array(2);

/**
 * [min, max] of the non-NULL keys into KEY_RANGE ([Infinity, -Infinity] when
 * none). Written inside the loop, on each new extreme (the first row always
 * writes, while still interpreted): code after an OSR-compiled loop must need
 * no type feedback, and returning a fresh [min, max] deoptimized this
 * function at its exit on every call.
 */
function keyRange(d: Float64Array | Int32Array, nulls: Uint8Array | null, m: number): void {
  const out = KEY_RANGE;
  let min = Infinity;
  let max = -Infinity;
  out[0] = min;
  out[1] = max;
  for (let j = 0; j < m; j++) {
    if (nulls !== null && nulls[j] === 1) continue;
    const x = d[j]!;
    if (x < min) {
      min = x;
      out[0] = x;
    }
    if (x > max) {
      max = x;
      out[1] = x;
    }
  }
}

/** Chains build rows by `key - min` (from the end, so chains keep input order); true when no key repeats. */
function chainByValue(d: Float64Array | Int32Array, nulls: Uint8Array | null, m: number, min: number, head: Int32Array, next: Int32Array): boolean {
  let unique = true;
  for (let j = m - 1; j >= 0; j--) {
    if (nulls !== null && nulls[j] === 1) {
      next[j] = -1;
      continue;
    }
    const s = d[j]! - min;
    const h = head[s]!;
    if (h >= 0) unique = false;
    next[j] = h;
    head[s] = j;
  }
  return unique;
}

/** Probe keys as numbers; INT64 values beyond ±2^53 become NaN (they can't be in a dense range). */
export function denseProbeKeys(v: Vector): Float64Array | Int32Array {
  const d = v.data;
  if (d instanceof Float64Array || d instanceof Int32Array) return d;
  const out = new Float64Array(v.length);
  if (d instanceof BigInt64Array) for (let i = 0; i < v.length; i++) {
    const x = d[i]!;
    out[i] = x > 9007199254740992n || x < -9007199254740992n ? NaN : Number(x);
  }
  else out.fill(NaN);
  return out;
}

export function markRows(flags: Uint8Array, sel: Int32Array, c: number): void {
  for (let j = 0; j < c; j++) flags[sel[j]!] = 1;
}

export function isIdentity(sel: Int32Array, c: number): boolean {
  for (let j = 0; j < c; j++) if (sel[j] !== j) return false;
  return true;
}

/** probeDense() for a unique build key: each probe row pairs with at most one build row. */
export function probeUnique(pd: Float64Array | Int32Array, pNulls: Uint8Array | null, n: number, idx: DenseIndex, buf: Pairs, from: number): Pairs {
  let l = buf.l;
  let r = buf.r;
  if (l.length < n - from) {
    l = new Int32Array(n - from);
    r = new Int32Array(n - from);
  }
  const c =
    pd instanceof Float64Array
      ? uniqueMatchesF64(pd, pNulls, from, n, idx.min, idx.max, idx.head, l, r)
      : uniqueMatchesI32(pd, pNulls, from, n, idx.min, idx.max, idx.head, l, r);
  return { l, r, count: c, nextRow: n, nextBuild: -1 };
}

// One loop per key layout so each stays monomorphic. Keys in [min, max] are
// integers (INT64/DATE), so `(x - min) | 0` is exact and indexes as an int32.
function uniqueMatchesF64(pd: Float64Array, pNulls: Uint8Array | null, from: number, n: number, min: number, max: number, head: Int32Array, l: Int32Array, r: Int32Array): number {
  let c = 0;
  for (let i = from; i < n; i++) {
    const x = pd[i]!;
    if (!(x >= min && x <= max)) continue; // also drops NaN
    if (pNulls !== null && pNulls[i] === 1) continue;
    const j = head[(x - min) | 0]!;
    if (j < 0) continue;
    l[c] = i;
    r[c++] = j;
  }
  return c;
}

function uniqueMatchesI32(pd: Int32Array, pNulls: Uint8Array | null, from: number, n: number, min: number, max: number, head: Int32Array, l: Int32Array, r: Int32Array): number {
  let c = 0;
  for (let i = from; i < n; i++) {
    const x = pd[i]!;
    if (!(x >= min && x <= max)) continue;
    if (pNulls !== null && pNulls[i] === 1) continue;
    const j = head[(x - min) | 0]!;
    if (j < 0) continue;
    l[c] = i;
    r[c++] = j;
  }
  return c;
}

/** uniqueMatchesF64, writing the matched build rows' values of `src` instead of the row pairs. */
export function uniqueGatherF64(pd: Float64Array, pNulls: Uint8Array | null, n: number, min: number, max: number, head: Int32Array, src: Float64Array, out: Float64Array): number {
  let c = 0;
  for (let i = 0; i < n; i++) {
    const x = pd[i]!;
    if (!(x >= min && x <= max)) continue; // also drops NaN
    if (pNulls !== null && pNulls[i] === 1) continue;
    const j = head[(x - min) | 0]!;
    if (j < 0) continue;
    out[c++] = src[j]!;
  }
  return c;
}

export function uniqueGatherI32(pd: Int32Array, pNulls: Uint8Array | null, n: number, min: number, max: number, head: Int32Array, src: Float64Array, out: Float64Array): number {
  let c = 0;
  for (let i = 0; i < n; i++) {
    const x = pd[i]!;
    if (!(x >= min && x <= max)) continue;
    if (pNulls !== null && pNulls[i] === 1) continue;
    const j = head[(x - min) | 0]!;
    if (j < 0) continue;
    out[c++] = src[j]!;
  }
  return c;
}

/** probe() for a DenseIndex: one array lookup per probe row, no key comparison needed. */
export function probeDense(
  pd: Float64Array | Int32Array,
  pNulls: Uint8Array | null,
  n: number,
  idx: DenseIndex,
  firstOnly: boolean,
  leftMatched: Uint8Array,
  buf: Pairs,
  from: number,
  fromBuild: number,
): Pairs {
  let l = buf.l;
  let r = buf.r;
  let c = 0;
  const { min, max, head, next } = idx;
  for (let i = from; i < n; i++) {
    if (pNulls !== null && pNulls[i] === 1) continue;
    const x = pd[i]!;
    if (!(x >= min && x <= max)) continue; // also drops NaN
    let j = i === from && fromBuild >= 0 ? fromBuild : head[x - min]!;
    for (; j >= 0; j = next[j]!) {
      if (firstOnly) {
        leftMatched[i] = 1;
        break;
      }
      if (c === PROBE_CHUNK) return { l, r, count: c, nextRow: i, nextBuild: j };
      if (c === l.length) {
        l = growInt32(l, c * 2);
        r = growInt32(r, c * 2);
      }
      l[c] = i;
      r[c++] = j;
    }
  }
  return { l, r, count: c, nextRow: n, nextBuild: -1 };
}

/** Hash chains over the build rows: head per bucket, next per row (-1 ends a chain). */
function buildChains(bk: readonly Vector[], bh: Int32Array, m: number, nullSafe: readonly boolean[]): { head: Int32Array; next: Int32Array; mask: number } {
  let cap = 16;
  while (cap < m * 2) cap *= 2;
  const mask = cap - 1;
  const head = new Int32Array(cap).fill(-1);
  const next = new Int32Array(m);
  // Inserted from the end so every chain lists build rows in input order.
  for (let j = m - 1; j >= 0; j--) {
    if (unmatchable(bk, nullSafe, j)) continue;
    const s = mix32(bh[j]!) & mask;
    next[j] = head[s]!;
    head[s] = j;
  }
  return { head, next, mask };
}

/** A build side's key index: dense by value, or hash chains (bh = each build row's hash). */
interface JoinIndex {
  readonly dense: DenseIndex | null;
  readonly bh: Int32Array;
  readonly head: Int32Array;
  readonly next: Int32Array;
  readonly mask: number;
}

function buildJoinIndex(bk: readonly Vector[], m: number, nullSafe: readonly boolean[]): JoinIndex {
  // Dense integer keys (ids, dates) index build rows directly by value: no hashing at all.
  const dense = denseIndex(bk, m, nullSafe);
  if (dense) return { dense, bh: new Int32Array(0), head: dense.head, next: dense.next, mask: 0 };
  const bh = new Int32Array(m);
  hashRows(bk, m, bh);
  const { head, next, mask } = buildChains(bk, bh, m, nullSafe);
  return { dense: null, bh, head, next, mask };
}

/** A cached index and what it was built from (the key column as a view: offset, rows, NULL flags). */
interface CachedIndex {
  /** The key column's array type (views of one buffer could differ in it). */
  readonly kind: unknown;
  readonly offset: number;
  readonly rows: number;
  readonly nulls: Uint8Array | null;
  readonly nullSafe: boolean;
  readonly index: JoinIndex;
}

/**
 * Build-side indexes of stored key columns, by the column's backing store.
 * Stored columns are never written after they are created (appends and DML
 * make new chunks, snapshots share them with running queries), so an index
 * stays valid for as long as its key column's memory lives, and goes with it.
 * Rebuilding it was ~2 ms per query for a 200k-row dimension table.
 */
const INDEX_CACHE = new WeakMap<object, CachedIndex[]>();
/** Larger build sides are indexed per query: the index costs 8-12 bytes per row, kept while the table lives (at most ~12 MB per key column). */
const MAX_CACHED_BUILD_ROWS = 1_000_000;

/**
 * The index for a build side; reused across queries when `stored` (the key
 * column comes straight from a table scan: a view of stored memory).
 */
export function joinIndexFor(bk: readonly Vector[], m: number, nullSafe: readonly boolean[], stored: boolean): JoinIndex {
  if (!stored || bk.length !== 1 || m > MAX_CACHED_BUILD_ROWS) return buildJoinIndex(bk, m, nullSafe);
  const v = bk[0]!;
  // Decimal words are a typed column too (reading `data` would box them).
  const d = v.decimal ? v.decimal.words : v.interval ? v.interval.micros : v.data;
  // Typed columns are keyed by their buffer (a scan hands out views), others by the array itself.
  const owner: object = ArrayBuffer.isView(d) ? d.buffer : d;
  const offset = ArrayBuffer.isView(d) ? d.byteOffset : 0;
  const ns = nullSafe[0]!;
  const list = INDEX_CACHE.get(owner);
  const kind: unknown = d.constructor;
  if (list) for (const e of list) if (e.kind === kind && e.offset === offset && e.rows === m && e.nulls === v.nulls && e.nullSafe === ns) return e.index;
  const index = buildJoinIndex(bk, m, nullSafe);
  const entry: CachedIndex = { kind, offset, rows: m, nulls: v.nulls, nullSafe: ns, index };
  if (list) list.push(entry);
  else INDEX_CACHE.set(owner, [entry]);
  return index;
}

/** Whether a build side's columns are views of stored table memory (a scan, no filters, maybe renamed). */
export function isStoredScan(rel: Rel): boolean {
  if (rel.kind === 'scan') return !rel.pushedFilters?.length && rel.asOfMs === undefined && rel.history === undefined;
  if (rel.kind === 'project') return rel.exprs.every((e) => e.kind === 'column' && !e.correlated) && isStoredScan(rel.input);
  return false;
}
