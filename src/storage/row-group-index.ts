// A table-level index of row-group statistics, built once per list of
// segments (a table's states share their segment list until a fold or a
// rewrite replaces it; appends add memory segments past the indexed ones),
// never per query. A scan with filters asks it which row groups can match:
//
// - A comparison, BETWEEN or IN on a numeric column finds its candidate row
//   groups by binary search (row groups sorted by min, with the running max
//   of their maxes: those before the first whose running max reaches the
//   range's low end, and those from the first whose min passes its high end,
//   cannot match), so `id BETWEEN a AND b` over 100M rows (~1,500 row groups
//   in ~100 files) looks at the statistics of one or two row groups, not all.
//   Only candidates are then tested with the scan's filters (pruning.ts,
//   prepared for just the candidates' files); when the range leaves more
//   than half the row groups, the scan tests each as before.
// - A top-N's live filter reads row groups in an order kept here (best max
//   first for DESC, best min first for ASC) and stops at the first one whose
//   statistics lose against the running n-th best: the rest lose as well.
//
// The index holds the files' footers (a few KB each) for as long as its
// segment list lives.
import type { Column } from '../types/schema.js';
import type { ScanFilter } from './api.js';
import { chunkCache } from './chunk-cache.js';
import type { FragmentFile, RowGroupMeta } from './fragment-file.js';
import { nominalBytes } from '../types/logical-bytes.js';
import { comparable, numbersOf, numericStats, sameType } from './pruning.js';
import type { FileSegment, Segment } from './table-state.js';

/** One column's statistics over the index's row groups (entries), as numbers. */
export interface ColumnIndex {
  /** Per entry (NaN: every row NULL, or unknown). */
  readonly min: Float64Array;
  readonly max: Float64Array;
  /** Per entry: 1 when the entry has no usable statistics for the column (another type in its file, none written): it may always match. */
  readonly unknown: Uint8Array;
  /** The entries with a min and max, ascending by min (ties in table order). */
  readonly byMin: Int32Array;
  /** reach[i]: the largest max among byMin[0..i] (non-decreasing). */
  readonly reach: Float64Array;
  /** Entries without usable statistics, ascending. */
  readonly unknowns: Int32Array;
}

export class RowGroupIndex {
  /** Per entry: its segment (index into `segs`) and row group in that segment's file; entries in table order. */
  readonly seg: Int32Array;
  readonly rg: Int32Array;
  private readonly byColumn = new Map<string, ColumnIndex | null>();
  private readonly orders = new Map<string, Int32Array>();
  private readonly bytes = new Map<string, number>();

  constructor(
    /** The leading file segments indexed (whole, as the state holds them). */
    readonly segs: readonly FileSegment[],
    /** Their footers, one per segment. */
    readonly files: readonly FragmentFile[],
    /** The position of each segment's first row among the state's rows. */
    readonly segStart: readonly number[],
    /** Rows the indexed segments hold. */
    readonly rows: number,
    seg: number[],
    rg: number[],
  ) {
    this.seg = Int32Array.from(seg);
    this.rg = Int32Array.from(rg);
  }

  /** Row groups indexed (those holding rows). */
  get count(): number {
    return this.seg.length;
  }

  /** Column `col`'s statistics over the entries (built once), or null when its statistics are not plain numbers or its type's order is not the executor's. */
  column(col: Column): ColumnIndex | null {
    const key = `${col.name}\u0000${JSON.stringify(col.type)}`;
    let c = this.byColumn.get(key);
    if (c === undefined) this.byColumn.set(key, (c = this.build(col)));
    return c;
  }

  private build(col: Column): ColumnIndex | null {
    if (!comparable(col.type)) return null;
    const n = this.count;
    const min = new Float64Array(n);
    const max = new Float64Array(n);
    const unknown = new Uint8Array(n);
    for (let e = 0; e < n; e++) {
      const file = this.files[this.seg[e]!]!;
      // A file of another type for the column reads it as NULL: its statistics say nothing (rowGroupTest leaves the filter out there).
      const s = sameType(file, col) ? numericStats(file, col.name) : undefined;
      if (s === null) return null;
      const rg = this.rg[e]!;
      // No statistics, or no min/max over rows not all NULL: may match anything (as rowGroupTest decides).
      if (s === undefined || s.nulls[rg]! < 0 || (s.min[rg] !== s.min[rg] && s.nulls[rg] === 0)) {
        unknown[e] = 1;
        min[e] = max[e] = NaN;
        continue;
      }
      min[e] = s.min[rg]!;
      max[e] = s.max[rg]!;
    }
    const known: number[] = [];
    const unknowns: number[] = [];
    for (let e = 0; e < n; e++) {
      if (unknown[e]) unknowns.push(e);
      else if (min[e] === min[e]) known.push(e);
    }
    const byMin = Int32Array.from(known).sort((a, b) => min[a]! - min[b]! || a - b);
    const reach = new Float64Array(byMin.length);
    let hi = -Infinity;
    for (let i = 0; i < byMin.length; i++) reach[i] = hi = Math.max(hi, max[byMin[i]!]!);
    return { min, max, unknown, byMin, reach, unknowns: Int32Array.from(unknowns) };
  }

  /**
   * The logical bytes of column `col` over the indexed rows (built once):
   * each row group's stored total in proportion to the rows of it its
   * segment holds, added in table order, so the sum is the one
   * partsLogicalBytes makes over the same row groups listed as parts (job
   * statistics bill it on every query: listing ~1,500 parts of a 100M-row
   * table for it cost ~2 ms a query).
   */
  logicalBytes(col: Column): number {
    const key = `${col.name}\u0000${JSON.stringify(col.type)}`;
    let b = this.bytes.get(key);
    if (b !== undefined) return b;
    b = 0;
    for (let e = 0; e < this.count; e++) {
      const s = this.segs[this.seg[e]!]!;
      const file = this.files[this.seg[e]!]!;
      const g = this.rg[e]!;
      const base = file.rowStarts[g]!;
      const rows = file.rowGroups[g]!.rows;
      const live = Math.min(s.skip + s.rows, base + rows) - Math.max(s.skip, base);
      b += (rowGroupBytes(file.rowGroups[g]!, col) * live) / rows;
    }
    this.bytes.set(key, b);
    return b;
  }

  /**
   * The entries a top-N's live filter on `col` reads, best first: those
   * without statistics (or NULL only) first in table order, then by max
   * descending (`down`) or min ascending, ties in table order. Built once per
   * column and direction. Null when the column has no index.
   */
  bestFirst(col: Column, down: boolean): Int32Array | null {
    const c = this.column(col);
    if (c === null) return null;
    const key = `${down ? '-' : '+'}${col.name}\u0000${JSON.stringify(col.type)}`;
    let o = this.orders.get(key);
    if (o) return o;
    const keyOf = (e: number): number => {
      const v = down ? c.max[e]! : c.min[e]!;
      return v === v ? v : down ? Infinity : -Infinity;
    };
    const keys = Float64Array.from({ length: this.count }, (_, e) => keyOf(e));
    o = Int32Array.from({ length: this.count }, (_, e) => e).sort(down ? (a, b) => keys[b]! - keys[a]! || a - b : (a, b) => keys[a]! - keys[b]! || a - b);
    this.orders.set(key, o);
    return o;
  }

  /**
   * The entries (ascending, i.e. in table order) the filters' ranges leave
   * as candidates, or null when no filter narrows them to at most half
   * (the scan then tests every row group). Candidates still need the
   * filters' row-group test: this only rules out what cannot match.
   */
  candidates(columns: readonly Column[], filters: readonly ScanFilter[]): Int32Array | null {
    // Each column's range [lo, hi] over its comparisons and IN lists.
    const ranges = new Map<number, [number, number]>();
    for (const f of filters) {
      if (f.live || f.op === 'isNull' || f.op === 'notNull') continue;
      const vs = numbersOf(f.values);
      if (vs === null || vs.length === 0) continue;
      let lo = -Infinity;
      let hi = Infinity;
      if (f.op === '=' || f.op === 'in') {
        lo = Math.min(...vs);
        hi = Math.max(...vs);
      } else if (f.op === '<' || f.op === '<=') hi = vs[0]!;
      else lo = vs[0]!;
      const r = ranges.get(f.column);
      ranges.set(f.column, r ? [Math.max(r[0], lo), Math.min(r[1], hi)] : [lo, hi]);
    }
    let best: { c: ColumnIndex; from: number; to: number } | null = null;
    for (const [column, [lo, hi]] of ranges) {
      const col = columns[column];
      const c = col ? this.column(col) : null;
      if (c === null) continue;
      // Before `from` every max is below lo; from `to` on every min is above hi.
      const from = lo > hi ? c.byMin.length : firstAtLeast(c.reach, lo);
      const to = lo > hi ? from : firstAbove(c.byMin, c.min, hi);
      const size = Math.max(0, to - from) + c.unknowns.length;
      if (best === null || size < Math.max(0, best.to - best.from) + best.c.unknowns.length) best = { c, from, to };
    }
    if (best === null) return null;
    const { c, from, to } = best;
    const n = Math.max(0, to - from) + c.unknowns.length;
    if (n > this.count / 2) return null;
    const out = new Int32Array(n);
    if (to > from) out.set(c.byMin.subarray(from, to));
    out.set(c.unknowns, Math.max(0, to - from));
    return out.sort();
  }
}

/** The first i with a[i] >= v (a non-decreasing). */
function firstAtLeast(a: Float64Array, v: number): number {
  let lo = 0, hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first i with key[order[i]] > v (ascending by key). */
function firstAbove(order: Int32Array, key: Float64Array, v: number): number {
  let lo = 0, hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key[order[mid]!]! <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Indexes by segment list, and by how many leading segments they cover (a time-travel state may cover fewer). */
const indexes = new WeakMap<readonly Segment[], Map<number, Promise<RowGroupIndex>>>();

/** Indexes built (tests: once per segment list, not per query). */
export const indexCounters = { built: 0 };

/**
 * The index of the leading whole file segments of a state (`all`: its
 * segment list; `segs`: the segments it reads, stateSegments), or null when
 * the state starts with none. Built on first use and kept with the list.
 */
/** A row group's logical bytes of column `col`: the total stored with it, or a nominal width per non-NULL value (a file written before totals were kept); 0 when the file predates the column (NULLs). */
export function rowGroupBytes(g: RowGroupMeta, col: Column): number {
  const cm = g.columns.get(col.name);
  if (!cm) return 0;
  return cm.bytes ?? (g.rows - (cm.stats?.nulls ?? 0)) * nominalBytes(col.type);
}

export function rowGroupIndex(all: readonly Segment[], segs: readonly Segment[]): Promise<RowGroupIndex> | null {
  let k = 0;
  while (k < segs.length && segs[k]!.kind === 'file' && segs[k] === all[k]) k++;
  if (k === 0) return null;
  let byCount = indexes.get(all);
  if (!byCount) indexes.set(all, (byCount = new Map()));
  let p = byCount.get(k);
  if (!p) {
    p = buildIndex(segs.slice(0, k) as FileSegment[]);
    p.catch(() => byCount!.delete(k));
    byCount.set(k, p);
  }
  return p;
}

async function buildIndex(segs: readonly FileSegment[]): Promise<RowGroupIndex> {
  indexCounters.built++;
  const files = await Promise.all(segs.map((s) => chunkCache.file(s.path)));
  const segStart: number[] = [];
  const seg: number[] = [];
  const rg: number[] = [];
  let off = 0;
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    const file = files[i]!;
    segStart.push(off);
    off += s.rows;
    const starts = file.rowStarts;
    for (let g = 0; g < starts.length; g++) {
      const rows = file.rowGroups[g]!.rows;
      // Row groups holding rows of the segment's window.
      if (rows === 0 || starts[g]! + rows <= s.skip || s.rows === 0 || starts[g]! >= s.skip + s.rows) continue;
      seg.push(i);
      rg.push(g);
    }
  }
  return new RowGroupIndex(segs, files, segStart, off, seg, rg);
}
