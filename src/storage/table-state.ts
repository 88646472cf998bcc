// What a snapshot of a table is, and how it is read. A state is a list of
// segments, each a window of a fragment file's rows or a batch held in memory
// (rows appended since the last fold), and how many rows of them belong to
// the state (a time-travel prefix ends inside a segment). Reading a state
// touches only the row groups and columns the reader wants: a file segment's
// row groups are decoded on demand through the chunk cache (a row group whose
// statistics rule out the scan's filters is skipped), and come out as
// BATCH_SIZE batches whose fixed-width columns are views of the cached
// chunks.
import type { ScanFilter, ScanValue } from './api.js';
import type { Column } from '../types/schema.js';
import type { SqlType } from '../types/types.js';
import { BATCH_SIZE, sliceVector, type Batch, type Vector } from '../types/vector.js';
import { chunkCache } from './chunk-cache.js';
import { chunkVector, nullVectorOf } from './column-chunk.js';
import type { ColumnStats, FragmentFile } from './fragment-file.js';

/** A window of a fragment file: its rows [skip, skip + rows). */
export interface FileSegment {
  readonly kind: 'file';
  readonly path: string;
  readonly skip: number;
  readonly rows: number;
}

/** Rows held in memory (a WAL record's rows, made when first read), columns in the table's order. */
export interface MemSegment {
  readonly kind: 'mem';
  readonly batch: Batch;
}

export type Segment = FileSegment | MemSegment;

export const segmentRows = (s: Segment): number => (s.kind === 'file' ? s.rows : s.batch.length);

/**
 * A committed state of the table's rows: what a snapshot reads. Immutable:
 * `segments` is only ever appended to past `count`, never changed below it.
 */
export interface TableState {
  /** Bumps when the rows are replaced or the schema changes; appends keep it. */
  readonly generation: number;
  readonly columns: readonly Column[];
  readonly segments: readonly Segment[];
  /** How many of `segments` belong to the state. */
  readonly count: number;
  /** How many rows (of those segments, in order) belong to it. */
  readonly rows: number;
  /** The commit that made this state current (clock.ts). */
  readonly csn: number;
}

/** Row groups read and skipped by statistics (tests assert on them: pruning is counted, never timed). */
export interface ScanStats {
  rowGroupsRead: number;
  rowGroupsSkipped: number;
}

/** Every scan's counts in this process. */
export const scanCounters: ScanStats = { rowGroupsRead: 0, rowGroupsSkipped: 0 };

/** The segments of a state, cut to its rows. */
export function stateSegments(s: TableState): Segment[] {
  const out: Segment[] = [];
  let left = s.rows;
  for (let i = 0; i < s.count && left > 0; i++) {
    const seg = s.segments[i]!;
    const n = segmentRows(seg);
    if (n <= left) out.push(seg);
    else out.push(seg.kind === 'file' ? { ...seg, rows: left } : { kind: 'mem', batch: { length: left, columns: seg.batch.columns.map((v) => sliceVector(v, 0, left)) } });
    left -= Math.min(n, left);
  }
  return out;
}

/** Segments covering rows [start, end) of `segs`, cut to them. */
export function sliceSegments(segs: readonly Segment[], start: number, end: number): Segment[] {
  const out: Segment[] = [];
  let off = 0;
  for (const seg of segs) {
    const n = segmentRows(seg);
    const bs = off;
    off += n;
    if (off <= start || bs >= end) continue;
    const s = Math.max(start, bs) - bs;
    const e = Math.min(end, off) - bs;
    if (s === 0 && e === n) out.push(seg);
    else if (seg.kind === 'file') out.push({ kind: 'file', path: seg.path, skip: seg.skip + s, rows: e - s });
    else out.push({ kind: 'mem', batch: { length: e - s, columns: seg.batch.columns.map((v) => sliceVector(v, s, e)) } });
  }
  return out;
}

/**
 * Rows of `segs` in table schema `columns`, only the columns `cols` (indexes
 * into `columns`), in BATCH_SIZE batches (memory batches as they are).
 * `memColumns`: the schema memory segments' batches have (after an ALTER
 * they are conformed by the table); file columns are matched by name and type.
 */
export async function* scanSegments(
  segs: readonly Segment[],
  columns: readonly Column[],
  cols: readonly number[],
  filters: readonly ScanFilter[] = [],
  stats: ScanStats = scanCounters,
): AsyncGenerator<Batch> {
  for (const seg of segs) {
    if (seg.kind === 'mem') {
      if (seg.batch.length > 0) yield { length: seg.batch.length, columns: cols.map((c) => seg.batch.columns[c]!) };
      continue;
    }
    const file = await chunkCache.file(seg.path);
    const types = fileTypes(file);
    let rgStart = 0;
    for (let rg = 0; rg < file.rowGroups.length; rg++) {
      const g = file.rowGroups[rg]!;
      const a = Math.max(seg.skip, rgStart);
      const b = Math.min(seg.skip + seg.rows, rgStart + g.rows);
      const base = rgStart;
      rgStart += g.rows;
      if (a >= b) continue;
      if (filters.length > 0 && !filters.every((f) => mayMatch(f, columns[f.column]!, g.columns.get(columns[f.column]!.name)?.stats, types))) {
        stats.rowGroupsSkipped++;
        continue;
      }
      stats.rowGroupsRead++;
      const chunks = await Promise.all(
        cols.map((c) => {
          const col = columns[c]!;
          // A column the file lacks or has with another type (ALTER) reads as NULL.
          if (!file.columnNames.has(col.name) || (types && types.get(col.name) !== JSON.stringify(col.type))) return null;
          return chunkCache.chunk(seg.path, rg, col.name, () => file.readChunk(rg, col.name, col.type));
        }),
      );
      for (let s = a; s < b; s += BATCH_SIZE) {
        const e = Math.min(b, s + BATCH_SIZE);
        const vectors: Vector[] = cols.map((c, i) => {
          const ch = chunks[i];
          return ch ? chunkVector(columns[c]!.type, ch, s - base, e - base) : nullVectorOf(columns[c]!.type, e - s);
        });
        yield { length: e - s, columns: vectors };
      }
    }
  }
}

/** The types a file's columns were written with (`warehouse.columns`), by name; null for files without that key. */
const typesOf = new WeakMap<FragmentFile, Map<string, string> | null>();
function fileTypes(f: FragmentFile): Map<string, string> | null {
  let t = typesOf.get(f);
  if (t === undefined) {
    const raw = f.meta['warehouse.columns'];
    t = raw ? new Map((JSON.parse(raw) as { name: string; type: string }[]).map((c) => [c.name, c.type])) : null;
    typesOf.set(f, t);
  }
  return t;
}

/** All rows of a state (every column): for rewrites and small reads. */
export async function stateBatches(s: TableState): Promise<Batch[]> {
  const out: Batch[] = [];
  for await (const b of scanSegments(stateSegments(s), s.columns, s.columns.map((_, i) => i))) out.push(b);
  return out;
}

/** Rows [start, end) of a state, columns `cols`. */
export async function readState(s: TableState, cols: readonly number[], start: number, end: number): Promise<Batch[]> {
  const out: Batch[] = [];
  for await (const b of scanSegments(sliceSegments(stateSegments(s), start, end), s.columns, cols)) out.push(b);
  return out;
}

/** Whether a row group with these statistics may hold a row meeting `f` (true when unsure). */
function mayMatch(f: ScanFilter, col: Column, st: ColumnStats | undefined, types: Map<string, string> | null): boolean {
  if (st === undefined || !comparable(col.type)) return true;
  if (types && types.get(col.name) !== JSON.stringify(col.type)) return true;
  switch (f.op) {
    case 'isNull':
      return st.nulls > 0;
    case 'notNull':
      return st.min !== undefined || st.max !== undefined || st.nulls === 0;
  }
  const { min, max } = st;
  if (min === undefined || max === undefined) return st.nulls === 0;
  if (!f.values.every((v) => safe(v)) || !safe(min) || !safe(max)) return true;
  const v = f.values[0]!;
  switch (f.op) {
    case '=':
      return !(v < min || v > max);
    case '<':
      return min < v;
    case '<=':
      return min <= v;
    case '>':
      return max > v;
    case '>=':
      return max >= v;
    case 'in':
      return f.values.some((x) => !(x < min || x > max));
  }
}

/** Types whose statistics order is the executor's (collated strings are not: they compare otherwise). */
function comparable(t: SqlType): boolean {
  switch (t.kind) {
    case 'INT64':
    case 'FLOAT64':
    case 'DATE':
    case 'TIMESTAMP':
    case 'DATETIME':
    case 'TIME':
      return true;
    case 'STRING':
      return !(t as { collation?: string }).collation;
    default:
      return false;
  }
}

/** Strings compare by UTF-16 units here and by code points in SQL: the same order unless surrogates are involved. */
const safe = (v: ScanValue): boolean => typeof v !== 'string' || !/[\uD800-\uFFFF]/.test(v);
