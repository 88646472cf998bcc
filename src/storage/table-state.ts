// What a snapshot of a table is, and how it is read. A state is a list of
// segments, each a window of a fragment file's rows or a batch held in memory
// (rows appended since the last fold), and how many rows of them belong to
// the state (a time-travel prefix ends inside a segment). Reading a state
// touches only the row groups and columns the reader wants: a file segment's
// row groups are decoded on demand through the chunk cache (a row group whose
// statistics rule out the scan's filters is skipped), and come out as
// BATCH_SIZE batches whose fixed-width columns are views of the cached
// chunks. A state may also name deleted rows (row-level DML): positions in
// its sequence of rows that scans leave out.
import { ROW_POSITION, type ScanFilter } from './api.js';
import type { Column } from '../types/schema.js';
import { T } from '../types/types.js';
import { BATCH_SIZE, sliceVector, takeVector, type Batch, type Vector } from '../types/vector.js';
import { chunkCache, newScanPass } from './chunk-cache.js';
import { chunkVector, nullVectorOf } from './column-chunk.js';
import type { FragmentFile } from './fragment-file.js';
import { vectorBytes } from '../types/logical-bytes.js';
import { bestBlocksFirst, liveKey, rowGroupTest, sameType, zonesRuleOut, type RowGroupTest, type ZoneCheck } from './pruning.js';
import { rowGroupBytes, rowGroupIndex, type RowGroupIndex } from './row-group-index.js';

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
  /** Positions (0-based, among `rows`) of rows deleted by row-level DML, ascending; scans leave them out. */
  readonly deleted: Uint32Array;
  /** The storage stem of the table incarnation whose state this is (absent: a state made for reading only). */
  readonly stem?: string;
}

/** No deleted rows. */
export const NONE_DELETED = new Uint32Array(0);

/** The rows a state's readers see (its rows less the deleted ones). */
export const liveRows = (s: TableState): number => s.rows - s.deleted.length;

/** A state of segments with every row live (rewrites and merges read files whole). */
export function plainState(columns: readonly Column[], segments: readonly Segment[], rows = segments.reduce((n, g) => n + segmentRows(g), 0)): TableState {
  return { generation: 0, columns, segments, count: segments.length, rows, csn: 0, deleted: NONE_DELETED };
}

/** How many of the ascending `positions` are below `p`. */
export function countBelow(positions: Uint32Array, p: number): number {
  let lo = 0, hi = positions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (positions[mid]! < p) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The position among all rows of the `i`-th live row (deleted rows skipped). */
export function physicalIndex(deleted: Uint32Array, i: number): number {
  let p = i;
  // Each deleted position at or below p pushes the live row one further.
  for (let k = countBelow(deleted, p + 1), seen = 0; k > seen; k = countBelow(deleted, p + 1)) {
    p += k - seen;
    seen = k;
  }
  return p;
}

/** Row groups read and skipped by statistics, and batches of the row groups read skipped by their block zones (tests assert on them: pruning is counted, never timed). */
export interface ScanStats {
  rowGroupsRead: number;
  rowGroupsSkipped: number;
  blocksSkipped: number;
}

/** Every scan's counts in this process. */
export const scanCounters: ScanStats = { rowGroupsRead: 0, rowGroupsSkipped: 0, blocksSkipped: 0 };

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
  deleted: Uint32Array = NONE_DELETED,
  /** The position of `segs`' first row among the state's rows. */
  firstRow = 0,
): AsyncGenerator<Batch> {
  let off = firstRow;
  // A live filter (a top-N's threshold) may rule out more by the time a row group's turn comes.
  const bound = filters.find((f) => f.live);
  const pass = newScanPass();
  const later: ListedFile[] = [];
  for (const seg of segs) {
    const segStart = off;
    off += segmentRows(seg);
    if (seg.kind === 'mem') {
      const out = live(seg.batch.length, (c) => seg.batch.columns[c]!, cols, segStart, deleted);
      if (out.length > 0) yield out;
      continue;
    }
    const file = await chunkCache.file(seg.path);
    const test = filters.length > 0 ? rowGroupTest(file, columns, filters) : null;
    if (bound) later.push({ seg, segStart, file, test });
    else for (const p of fileParts(seg, file, test, segStart, stats, deleted)) yield* readPart(p, columns, cols, pass, filters, stats);
  }
  if (!bound) return;
  // Row groups whose statistics promise the best values first (memory rows, which have none, went
  // first): the threshold tightens soonest and rules out the most. Rows equal on every sort key may
  // then come out other than in table order; the service's ORDER BY .. LIMIT does not order them either.
  const name = columns[bound.column]!.name;
  const down = bound.op === '>=' || bound.op === '>';
  // Candidates as numbers (file, row group, key), not objects: a 100M-row table lists ~1,500 of which a top-N reads ~100.
  const fileOf: number[] = [];
  const rgOf: number[] = [];
  const keys: number[] = [];
  for (let i = 0; i < later.length; i++) {
    const { seg, file, test } = later[i]!;
    eachCandidate(seg, file, test, stats, (rg) => {
      fileOf.push(i);
      rgOf.push(rg);
      keys.push(liveKey(file, rg, name, bound));
    });
  }
  const order = Int32Array.from(keys, (_, k) => k);
  // Stable: equal bounds keep table order.
  order.sort(down ? (a, b) => keys[b]! - keys[a]! || a - b : (a, b) => keys[a]! - keys[b]! || a - b);
  for (const k of order) {
    const x = later[fileOf[k]!]!;
    const rg = rgOf[k]!;
    if (x.test === null || x.test(rg)) yield* readPart(rowGroupPart(x.seg, x.file, rg, x.segStart, deleted), columns, cols, pass, filters, stats);
    else {
      stats.rowGroupsRead--;
      stats.rowGroupsSkipped++;
    }
  }
}

/** A file segment a scan with a live filter reads, with the filters' test there. */
interface ListedFile {
  readonly seg: FileSegment;
  readonly segStart: number;
  readonly file: FragmentFile;
  readonly test: RowGroupTest | null;
}

/**
 * A unit of a scan that can be read on its own (a morsel of parallel
 * execution): rows [start, end) of one row group of a fragment file, or a
 * batch held in memory (every column, table order). `first`: the position of
 * its first row among the state's rows; `deleted`: positions (ascending) of
 * its rows that readers leave out.
 */
export type ScanPart =
  | { readonly kind: 'rowGroup'; readonly path: string; readonly rowGroup: number; readonly start: number; readonly end: number; readonly first: number; readonly deleted: Uint32Array }
  | { readonly kind: 'mem'; readonly batch: Batch; readonly first: number; readonly deleted: Uint32Array };

/** The parts scanState would read, in its order: row groups `filters` rule out are skipped (and counted in `stats`). */
export async function stateParts(s: TableState, filters: readonly ScanFilter[] = [], stats: ScanStats = scanCounters): Promise<ScanPart[]> {
  const out: ScanPart[] = [];
  let off = 0;
  let segs = stateSegments(s);
  // The leading files' candidate row groups from the table's index, when it narrows them.
  const pix = filters.length > 0 && !filters.some((f) => f.live) ? rowGroupIndex(s.segments, segs) : null;
  const ix = pix && (await pix);
  const ids = ix && ix.candidates(s.columns, filters);
  if (ix && ids) {
    stats.rowGroupsSkipped += ix.count - ids.length;
    const tests = new IndexTests(ix, s.columns, filters);
    for (const e of ids) {
      if (!tests.mayMatch(e)) stats.rowGroupsSkipped++;
      else {
        stats.rowGroupsRead++;
        out.push(indexPart(ix, e, s.deleted));
      }
    }
    segs = segs.slice(ix.segs.length);
    off = ix.rows;
  }
  for (const seg of segs) {
    const segStart = off;
    off += segmentRows(seg);
    if (seg.kind === 'file') {
      const file = await chunkCache.file(seg.path);
      out.push(...fileParts(seg, file, filters.length > 0 ? rowGroupTest(file, s.columns, filters) : null, segStart, stats, s.deleted));
    } else if (seg.batch.length > 0) out.push({ kind: 'mem', batch: seg.batch, first: segStart, deleted: deletedWithin(s.deleted, segStart, seg.batch.length) });
  }
  return out;
}

/** Batches held in memory as parts (positions from `first`, as scanBatches gives them). */
export function memParts(batches: readonly Batch[], first = 0): ScanPart[] {
  const out: ScanPart[] = [];
  let off = first;
  for (const b of batches) {
    if (b.length > 0) out.push({ kind: 'mem', batch: b, first: off, deleted: NONE_DELETED });
    off += b.length;
  }
  return out;
}

/** The positions of `deleted` in [first, first + n) (a copy: a part may be sent to another thread). */
function deletedWithin(deleted: Uint32Array, first: number, n: number): Uint32Array {
  if (deleted.length === 0) return NONE_DELETED;
  return deleted.slice(countBelow(deleted, first), countBelow(deleted, first + n));
}

/** The row groups of `file` that hold rows of the segment's window: [first, end). */
function rowGroupRange(seg: FileSegment, file: FragmentFile): [number, number] {
  const starts = file.rowStarts;
  const n = starts.length;
  let first = 0;
  while (first < n && starts[first]! + file.rowGroups[first]!.rows <= seg.skip) first++;
  let end = first;
  while (end < n && seg.rows > 0 && starts[end]! < seg.skip + seg.rows) end++;
  return [first, end];
}

/** Row group `rg` of a file segment (its first row at position `segStart`) as a part, cut to the segment's window. */
function rowGroupPart(seg: FileSegment, file: FragmentFile, rg: number, segStart: number, deleted: Uint32Array): ScanPart & { kind: 'rowGroup' } {
  const base = file.rowStarts[rg]!;
  const a = Math.max(seg.skip, base);
  const b = Math.min(seg.skip + seg.rows, base + file.rowGroups[rg]!.rows);
  const first = segStart + a - seg.skip;
  return { kind: 'rowGroup', path: seg.path, rowGroup: rg, start: a - base, end: b - base, first, deleted: deletedWithin(deleted, first, b - a) };
}

/** `visit` for each row group of a file segment that may hold rows meeting the filters (`test`); read and skipped ones counted in `stats`. */
function eachCandidate(seg: FileSegment, file: FragmentFile, test: RowGroupTest | null, stats: ScanStats, visit: (rg: number) => void): void {
  const [from, end] = rowGroupRange(seg, file);
  for (let rg = from; rg < end; rg++) {
    if (file.rowGroups[rg]!.rows === 0) continue;
    if (test !== null && !test(rg)) {
      stats.rowGroupsSkipped++;
      continue;
    }
    stats.rowGroupsRead++;
    visit(rg);
  }
}

/** The row groups of a file segment that may hold rows meeting the filters (`test`), as parts. */
function fileParts(seg: FileSegment, file: FragmentFile, test: RowGroupTest | null, segStart: number, stats: ScanStats, deleted: Uint32Array): ScanPart[] {
  const out: ScanPart[] = [];
  eachCandidate(seg, file, test, stats, (rg) => void out.push(rowGroupPart(seg, file, rg, segStart, deleted)));
  return out;
}

/** The last file a part test was made for, and its filters (parts come file by file). */
const lastTest = new WeakMap<readonly ScanFilter[], { file: FragmentFile; columns: readonly Column[]; test: RowGroupTest | null }>();

/**
 * Whether a listed part may hold rows meeting `filters` (more than it was
 * listed with: a hash join's build key range, known only once the build side
 * is read). A row group they rule out moves from read to skipped in `stats`.
 */
export async function partMayMatch(p: ScanPart, columns: readonly Column[], filters: readonly ScanFilter[], stats: ScanStats = scanCounters): Promise<boolean> {
  if (p.kind === 'mem' || filters.length === 0) return true;
  const file = await chunkCache.file(p.path);
  let t = lastTest.get(filters);
  if (t === undefined || t.file !== file || t.columns !== columns) lastTest.set(filters, (t = { file, columns, test: rowGroupTest(file, columns, filters) }));
  if (t.test === null || t.test(p.rowGroup)) return true;
  stats.rowGroupsRead--;
  stats.rowGroupsSkipped++;
  return false;
}

/**
 * The logical bytes (types/logical-bytes.ts) of columns `cols` (indexes into
 * `columns`) over `parts`, less their deleted rows, and the parts' live rows.
 * A row group's stored total counts in proportion to the part's live rows (a
 * part cut from it, or with deleted rows); a file written before totals were
 * kept counts a nominal width per non-NULL value; memory rows are measured.
 */
export async function partsLogicalBytes(
  parts: readonly ScanPart[],
  columns: readonly Column[],
  cols: readonly number[],
  /** Sums so far (of the parts before these, unrounded). */
  from: { rows: number; bytes: readonly number[] } = { rows: 0, bytes: cols.map(() => 0) },
): Promise<{ rows: number; bytes: number[] }> {
  const bytes = [...from.bytes];
  let rows = from.rows;
  let path = '';
  let file: FragmentFile | undefined;
  for (const p of parts) {
    if (p.kind === 'mem') {
      const skip = p.deleted.length === 0 ? [] : Array.from(p.deleted, (d) => d - p.first);
      rows += p.batch.length - skip.length;
      cols.forEach((c, k) => (bytes[k]! += vectorBytes(p.batch.columns[c]!, 0, p.batch.length, skip)));
      continue;
    }
    // Parts come file by file: one footer lookup per file.
    if (p.path !== path) [path, file] = [p.path, await chunkCache.file(p.path)];
    const g = file!.rowGroups[p.rowGroup]!;
    const live = p.end - p.start - p.deleted.length;
    rows += live;
    cols.forEach((c, k) => (bytes[k]! += (rowGroupBytes(g, columns[c]!) * live) / g.rows));
  }
  return { rows, bytes: bytes.map(Math.round) };
}

/**
 * partsLogicalBytes over stateParts(s, filters), the same sums; without
 * filters or deleted rows the indexed files' share comes from the table's
 * row-group index (kept per table version), not from listing every row
 * group as a part on every query.
 */
export async function stateLogicalBytes(s: TableState, cols: readonly number[], filters: readonly ScanFilter[] = []): Promise<{ rows: number; bytes: number[] }> {
  const segs = stateSegments(s);
  const pix = filters.length === 0 && s.deleted.length === 0 ? rowGroupIndex(s.segments, segs) : null;
  if (pix === null) return partsLogicalBytes(await stateParts(s, filters), s.columns, cols);
  const ix = await pix;
  // The segments past the index (rows appended since the last fold) as parts, after the indexed ones.
  const rest: ScanPart[] = [];
  let off = ix.rows;
  for (const seg of segs.slice(ix.segs.length)) {
    const segStart = off;
    off += segmentRows(seg);
    if (seg.kind === 'file') rest.push(...fileParts(seg, await chunkCache.file(seg.path), null, segStart, { rowGroupsRead: 0, rowGroupsSkipped: 0, blocksSkipped: 0 }, NONE_DELETED));
    else if (seg.batch.length > 0) rest.push({ kind: 'mem', batch: seg.batch, first: segStart, deleted: NONE_DELETED });
  }
  return partsLogicalBytes(rest, s.columns, cols, { rows: ix.rows, bytes: cols.map((c) => ix.logicalBytes(s.columns[c]!)) });
}

/**
 * The range of numeric column `column` over listed parts, and their rows:
 * from the row groups' statistics (memory parts by a pass over their
 * values), so an operator can size itself before reading (a GROUP BY of
 * more groups than memory holds partitions by key range from the first
 * row). Deleted rows still count: a bound, not an exact range. Null when
 * some part has no statistics for it (a file without the column, another
 * type, NULLs only) or the column is not numeric.
 */
export async function partsRange(parts: readonly ScanPart[], columns: readonly Column[], column: number): Promise<{ min: number; max: number; rows: number } | null> {
  const col = columns[column];
  if (!col) return null;
  let min = Infinity;
  let max = -Infinity;
  let rows = 0;
  for (const p of parts) {
    if (p.kind === 'mem') {
      const d = p.batch.columns[column]?.data;
      if (!(d instanceof Float64Array)) return null;
      for (let i = 0; i < p.batch.length; i++) {
        const x = d[i]!;
        if (x < min) min = x;
        if (x > max) max = x;
      }
      rows += p.batch.length;
      continue;
    }
    const file = await chunkCache.file(p.path);
    if (!file.columnNames.has(col.name) || !sameType(file, col)) return null;
    const st = file.rowGroups[p.rowGroup]!.columns.get(col.name)?.stats;
    const lo = st?.min;
    const hi = st?.max;
    if ((typeof lo !== 'number' && typeof lo !== 'bigint') || (typeof hi !== 'number' && typeof hi !== 'bigint')) return null;
    if (Number(lo) < min) min = Number(lo);
    if (Number(hi) > max) max = Number(hi);
    rows += p.end - p.start;
  }
  return min <= max ? { min, max, rows } : null;
}

/**
 * A part's rows, columns `cols` of table schema `columns` (ROW_POSITION:
 * each row's position), in BATCH_SIZE batches, deleted rows left out. Row
 * groups are read through this thread's chunk cache (a worker thread reads
 * files by path with its own), for scan pass `pass` (chunk-cache.ts newScanPass).
 */
export async function* readPart(p: ScanPart, columns: readonly Column[], cols: readonly number[], pass = 0, filters: readonly ScanFilter[] = [], stats: ScanStats = scanCounters): AsyncGenerator<Batch> {
  if (p.kind === 'mem') {
    const out = live(p.batch.length, (c) => p.batch.columns[c]!, cols, p.first, p.deleted);
    if (out.length > 0) yield out;
    return;
  }
  const file = await chunkCache.file(p.path);
  const rg = p.rowGroup;
  const chunks = await Promise.all(
    cols.map((c) => {
      if (c === ROW_POSITION) return null;
      const col = columns[c]!;
      // A column the file lacks or has with another type (ALTER) reads as NULL.
      if (!file.columnNames.has(col.name) || !sameType(file, col)) return null;
      const shared = col.type.kind === 'STRING' ? chunkCache.dictionary(p.path, col.name) : null;
      return chunkCache.chunk(p.path, rg, col.name, () => file.readChunk(rg, col.name, col.type, shared), pass);
    }),
  );
  // The filters on columns read here: batches whose block zones rule them out are skipped.
  let checks: ZoneCheck[] | null = null;
  for (const f of filters) {
    const chunk = chunks[cols.indexOf(f.column)];
    if (chunk) (checks ??= []).push({ filter: f, chunk });
  }
  // A top-N's live filter: its best batches first.
  const bound = checks?.find((c) => c.filter.live);
  const starts = bound ? bestBlocksFirst(bound, p.start, p.end, BATCH_SIZE) : null;
  const batches = Math.ceil((p.end - p.start) / BATCH_SIZE);
  for (let k = 0; k < batches; k++) {
    const s = starts ? starts[k]! : p.start + k * BATCH_SIZE;
    const e = Math.min(p.end, s + BATCH_SIZE);
    if (checks !== null && zonesRuleOut(checks, s, e)) {
      stats.blocksSkipped++;
      continue;
    }
    const out = live(
      e - s,
      (c, i) => {
        const ch = chunks[i];
        return ch ? chunkVector(columns[c]!.type, ch, s, e) : nullVectorOf(columns[c]!.type, e - s);
      },
      cols,
      p.first + s - p.start,
      p.deleted,
    );
    if (out.length > 0) yield out;
  }
}

/**
 * The batch of `n` rows starting at position `first`, columns `cols` made by
 * `column` (ROW_POSITION: the rows' positions), less the rows `deleted` names.
 */
function live(n: number, column: (c: number, i: number) => Vector, cols: readonly number[], first: number, deleted: Uint32Array): Batch {
  let keep: Int32Array | null = null;
  let kept = n;
  const from = deleted.length > 0 ? countBelow(deleted, first) : 0;
  if (from < deleted.length && deleted[from]! < first + n) {
    keep = new Int32Array(n);
    kept = 0;
    let d = from;
    for (let i = 0; i < n; i++) {
      if (d < deleted.length && deleted[d] === first + i) d++;
      else keep[kept++] = i;
    }
  }
  const columns = cols.map((c, i) => {
    if (c === ROW_POSITION) {
      const pos = new Float64Array(kept);
      for (let k = 0; k < kept; k++) pos[k] = first + (keep ? keep[k]! : k);
      return { type: T.INT64, length: kept, data: pos, nulls: null };
    }
    const v = column(c, i);
    return keep ? takeVector(v, keep, kept) : v;
  });
  return { length: kept, columns };
}

/** The rows of a state that readers see, columns `cols` (ROW_POSITION: each row's position), row groups `filters` rule out skipped. */
export function scanState(s: TableState, cols: readonly number[], filters: readonly ScanFilter[] = [], stats: ScanStats = scanCounters): AsyncGenerator<Batch> {
  const segs = stateSegments(s);
  const ix = filters.length > 0 ? rowGroupIndex(s.segments, segs) : null;
  if (ix === null) return scanSegments(segs, s.columns, cols, filters, stats, s.deleted);
  return scanIndexed(ix, segs, s, cols, filters, stats);
}

/**
 * scanState through the table's row-group index (row-group-index.ts): the
 * leading files' candidate row groups, or for a top-N's live filter their
 * row groups best first until one loses against it; then the segments past
 * the index (rows appended since) as scanSegments reads them.
 */
async function* scanIndexed(pix: Promise<RowGroupIndex>, segs: readonly Segment[], s: TableState, cols: readonly number[], filters: readonly ScanFilter[], stats: ScanStats): AsyncGenerator<Batch> {
  const ix = await pix;
  const rest = segs.slice(ix.segs.length);
  const bound = filters.find((f) => f.live);
  if (bound) {
    const down = bound.op === '>=' || bound.op === '>';
    // Files past the index would need merging into its order: read as before (a fold puts them back in).
    const order = rest.some((g) => g.kind === 'file') ? null : ix.bestFirst(s.columns[bound.column]!, down);
    if (order === null) {
      yield* scanSegments(segs, s.columns, cols, filters, stats, s.deleted);
      return;
    }
    // Rows in memory first (they have no statistics), as scanSegments gives them.
    yield* scanSegments(rest, s.columns, cols, filters, stats, s.deleted, ix.rows);
    const c = ix.column(s.columns[bound.column]!)!;
    const pass = newScanPass();
    const tests = new IndexTests(ix, s.columns, filters);
    for (let k = 0; k < order.length; k++) {
      const e = order[k]!;
      const v = bound.values[0];
      // In this order, once a row group with statistics loses against the bound, every later one does.
      if (typeof v === 'number' && !c.unknown[e] && c.min[e] === c.min[e] && !(down ? (bound.op === '>' ? c.max[e]! > v : c.max[e]! >= v) : bound.op === '<' ? c.min[e]! < v : c.min[e]! <= v)) {
        stats.rowGroupsSkipped += order.length - k;
        break;
      }
      if (!tests.mayMatch(e)) {
        stats.rowGroupsSkipped++;
        continue;
      }
      stats.rowGroupsRead++;
      yield* readPart(indexPart(ix, e, s.deleted), s.columns, cols, pass, filters, stats);
    }
    return;
  }
  const ids = ix.candidates(s.columns, filters);
  if (ids === null) {
    yield* scanSegments(segs, s.columns, cols, filters, stats, s.deleted);
    return;
  }
  stats.rowGroupsSkipped += ix.count - ids.length;
  const pass = newScanPass();
  const tests = new IndexTests(ix, s.columns, filters);
  for (const e of ids) {
    if (!tests.mayMatch(e)) {
      stats.rowGroupsSkipped++;
      continue;
    }
    stats.rowGroupsRead++;
    yield* readPart(indexPart(ix, e, s.deleted), s.columns, cols, pass, filters, stats);
  }
  yield* scanSegments(rest, s.columns, cols, filters, stats, s.deleted, ix.rows);
}

/** The filters' row-group tests (pruning.ts rowGroupTest) for the index's entries, prepared only for the files of the entries asked about. */
class IndexTests {
  private readonly tests = new Map<number, RowGroupTest | null>();
  constructor(
    private readonly ix: RowGroupIndex,
    private readonly columns: readonly Column[],
    private readonly filters: readonly ScanFilter[],
  ) {}

  mayMatch(e: number): boolean {
    const i = this.ix.seg[e]!;
    let t = this.tests.get(i);
    if (t === undefined) this.tests.set(i, (t = rowGroupTest(this.ix.files[i]!, this.columns, this.filters)));
    return t === null || t(this.ix.rg[e]!);
  }
}

/** Entry `e` of the index as a part. */
function indexPart(ix: RowGroupIndex, e: number, deleted: Uint32Array): ScanPart {
  const i = ix.seg[e]!;
  return rowGroupPart(ix.segs[i]!, ix.files[i]!, ix.rg[e]!, ix.segStart[i]!, deleted);
}

/** All rows of a state readers see (every column): for rewrites and small reads. */
export async function stateBatches(s: TableState): Promise<Batch[]> {
  const out: Batch[] = [];
  for await (const b of scanState(s, s.columns.map((_, i) => i))) out.push(b);
  return out;
}

/** The state's live rows [start, end) (deleted rows not counted), columns `cols`. */
export async function readState(s: TableState, cols: readonly number[], start: number, end: number): Promise<Batch[]> {
  const out: Batch[] = [];
  if (end <= start) return out;
  const from = physicalIndex(s.deleted, start);
  const to = physicalIndex(s.deleted, end - 1) + 1;
  for await (const b of scanSegments(sliceSegments(stateSegments(s), from, to), s.columns, cols, [], scanCounters, s.deleted, from)) out.push(b);
  return out;
}

/** A stream's or a list's batches, in a list (for rows held in memory). */
export async function collectBatches(rows: readonly Batch[] | AsyncIterable<Batch>): Promise<Batch[]> {
  if (Array.isArray(rows)) return [...(rows as readonly Batch[])];
  const out: Batch[] = [];
  for await (const b of rows) out.push(b);
  return out;
}

/** Batches held in memory as a scan gives them: columns `cols` (ROW_POSITION: each row's index among them all, from `first`). */
export function* scanBatches(batches: readonly Batch[], cols: readonly number[], first = 0): Generator<Batch> {
  let off = first;
  for (const b of batches) {
    const out = live(b.length, (c) => b.columns[c]!, cols, off, NONE_DELETED);
    off += b.length;
    if (out.length > 0) yield out;
  }
}

/** A row-level change applied to rows held in memory (positions as scanBatches gives them): the rows kept, then the added ones. */
export function changedBatches(batches: readonly Batch[], deleted: readonly number[], added: readonly Batch[]): Batch[] {
  const gone = Uint32Array.from(new Set(deleted)).sort();
  const out: Batch[] = [];
  let off = 0;
  for (const b of batches) {
    const kept = live(b.length, (c) => b.columns[c]!, b.columns.map((_, i) => i), off, gone);
    off += b.length;
    if (kept.length > 0) out.push(kept);
  }
  return [...out, ...added.filter((b) => b.length > 0)];
}
