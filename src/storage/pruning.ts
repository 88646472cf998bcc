// Which row groups, and which blocks of a row group, a scan's filters rule
// out by statistics (ScanFilter: comparisons, IN, IS NULL on table columns).
//
// Per query this must cost what is read, not what the table holds: a 100M-row
// table has ~1,500 row groups, and a 1,000-row id range reads one of them. So
// a file's statistics are turned once (per file, per column; kept with its
// footer in the chunk cache) into typed arrays of min / max / NULL count per
// row group (`numericStats`), and a scan prepares its filters once per file
// (`rowGroupTest`: the column's type check and the literal values resolved
// there), then tests each row group with a few number comparisons. Columns
// whose statistics are not plain numbers (strings, integers past 2^53) take
// the same decision from the footer's objects.
//
// Within a row group that is read, a chunk of a filter's column gets block
// zones once (min / max of every ZONE_ROWS rows, computed when first asked
// and kept with the chunk), so that the scan skips the batches of rows none
// of which can match (`zonesRuleOut`): the live filter of ORDER BY .. LIMIT
// over a random column leaves about one block in sixteen of the row groups it
// reads, an id range one block of its one row group.
import type { ScanFilter, ScanValue } from './api.js';
import type { Column } from '../types/schema.js';
import type { SqlType } from '../types/types.js';
import type { ColumnChunk } from './column-chunk.js';
import type { ColumnStats, FragmentFile } from './fragment-file.js';

/** A column's statistics over a file's row groups, one slot per row group, as numbers. */
export interface NumericStats {
  /** NaN: no value (every row NULL). */
  readonly min: Float64Array;
  readonly max: Float64Array;
  /** -1: the row group has no statistics for the column. */
  readonly nulls: Float64Array;
}

const MAX_EXACT = 2 ** 53;

/** A statistic as an exact number, or undefined when it is none (a string, a boolean, an integer past 2^53, NaN). */
function exact(v: ColumnStats['min']): number | undefined {
  if (typeof v === 'number') return v === v ? v : undefined;
  if (typeof v === 'bigint' && v <= MAX_EXACT && v >= -MAX_EXACT) return Number(v);
  return undefined;
}

const numericByFile = new WeakMap<FragmentFile, Map<string, NumericStats | null>>();

/** The column's statistics as typed arrays (built once per file and column), or null when some are not exact numbers. */
export function numericStats(file: FragmentFile, name: string): NumericStats | null {
  let byName = numericByFile.get(file);
  if (!byName) numericByFile.set(file, (byName = new Map()));
  let s = byName.get(name);
  if (s !== undefined) return s;
  const n = file.rowGroups.length;
  const min = new Float64Array(n);
  const max = new Float64Array(n);
  const nulls = new Float64Array(n);
  s = { min, max, nulls };
  for (let rg = 0; rg < n; rg++) {
    const st = file.rowGroups[rg]!.columns.get(name)?.stats;
    if (st === undefined) {
      nulls[rg] = -1;
      continue;
    }
    nulls[rg] = st.nulls;
    if (st.min === undefined || st.max === undefined) {
      min[rg] = max[rg] = NaN;
      continue;
    }
    const lo = exact(st.min);
    const hi = exact(st.max);
    if (lo === undefined || hi === undefined) {
      s = null;
      break;
    }
    min[rg] = lo;
    max[rg] = hi;
  }
  byName.set(name, s);
  return s;
}

/** The types a file's columns were written with (`warehouse.columns`), by name; null for files without that key. */
const typesByFile = new WeakMap<FragmentFile, Map<string, string> | null>();
export function fileTypes(f: FragmentFile): Map<string, string> | null {
  let t = typesByFile.get(f);
  if (t === undefined) {
    const raw = f.meta['warehouse.columns'];
    t = raw ? new Map((JSON.parse(raw) as { name: string; type: string }[]).map((c) => [c.name, c.type])) : null;
    typesByFile.set(f, t);
  }
  return t;
}

/** Whether the file holds column `col` with the table's type (a column added or retyped since reads as NULL). */
export function sameType(file: FragmentFile, col: Column): boolean {
  const types = fileTypes(file);
  return types === null || types.get(col.name) === JSON.stringify(col.type);
}

/** Files whose statistics scans prepared their filters for (rowGroupTest): tests assert that a selective scan of a many-file table consults only its candidates' (row-group-index.ts). */
export const pruningCounters = { filesTested: 0 };

/** Whether row group `rg` of the file the test was made for may hold a row meeting the filters. */
export type RowGroupTest = (rg: number) => boolean;

/**
 * The test of `filters` (on table columns `columns`) against one file's row
 * groups, or null when they rule none out. A live filter's value is read at
 * each call (it tightens while the scan runs).
 */
export function rowGroupTest(file: FragmentFile, columns: readonly Column[], filters: readonly ScanFilter[]): RowGroupTest | null {
  pruningCounters.filesTested++;
  const tests: RowGroupTest[] = [];
  for (const f of filters) {
    const col = columns[f.column]!;
    // Statistics of a column of another type, or of a type whose order is not the executor's, say nothing.
    if (!comparable(col.type) || !sameType(file, col)) continue;
    const t = filterTest(file, col.name, f);
    if (t) tests.push(t);
  }
  if (tests.length === 0) return null;
  if (tests.length === 1) return tests[0]!;
  return (rg) => {
    for (const t of tests) if (!t(rg)) return false;
    return true;
  };
}

function filterTest(file: FragmentFile, name: string, f: ScanFilter): RowGroupTest | null {
  const s = numericStats(file, name);
  const values = f.live ? null : numbersOf(f.values);
  if (s === null || (!f.live && values === null)) {
    if (!f.live && !f.values.every(safe)) return null;
    return (rg) => mayMatch(f, file.rowGroups[rg]!.columns.get(name)?.stats);
  }
  const { min, max, nulls } = s;
  switch (f.op) {
    case 'isNull':
      return (rg) => nulls[rg] !== 0;
    case 'notNull':
      return (rg) => nulls[rg]! < 0 || min[rg] === min[rg] || nulls[rg] === 0;
  }
  const op = f.op;
  return (rg) => {
    // A live filter without a value yet rules nothing out (NULLs may still be among the best).
    const vs = values ?? (typeof f.values[0] === 'number' ? (f.values as readonly number[]) : null);
    if (vs === null || nulls[rg]! < 0) return true;
    const lo = min[rg]!;
    // Every row NULL: no comparison holds (unless the row group is empty).
    if (lo !== lo) return nulls[rg] === 0;
    return rangeMayMatch(op, vs, lo, max[rg]!);
  };
}

/** The values as numbers when each is exactly one, else null. */
export function numbersOf(values: readonly ScanValue[]): number[] | null {
  const out: number[] = [];
  for (const v of values) {
    const x = typeof v === 'number' || typeof v === 'bigint' ? exact(v) : undefined;
    if (x === undefined) return null;
    out.push(x);
  }
  return out;
}

/** Whether some value in [lo, hi] may meet `op values` (comparisons and IN; NULL tests are never asked here). */
function rangeMayMatch(op: ScanFilter['op'], values: readonly number[], lo: number, hi: number): boolean {
  const v = values[0]!;
  switch (op) {
    case '=':
      return !(v < lo || v > hi);
    case '<':
      return lo < v;
    case '<=':
      return lo <= v;
    case '>':
      return hi > v;
    case '>=':
      return hi >= v;
    case 'in':
      for (const x of values) if (!(x < lo || x > hi)) return true;
      return false;
    default:
      return true;
  }
}

/** Whether a row group with these statistics may hold a row meeting `f` (true when unsure): the footer's objects, for statistics that are not exact numbers. */
function mayMatch(f: ScanFilter, st: ColumnStats | undefined): boolean {
  if (st === undefined || (f.live && f.values.length === 0)) return true;
  switch (f.op) {
    case 'isNull':
      return st.nulls > 0;
    case 'notNull':
      return st.min !== undefined || st.max !== undefined || st.nulls === 0;
  }
  const { min, max } = st;
  if (min === undefined || max === undefined) return st.nulls === 0;
  if (!safe(min) || !safe(max) || (f.live && !f.values.every(safe))) return true;
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
export function comparable(t: SqlType): boolean {
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

/**
 * The live filter's sort key of a row group: its max for `>=` / `>` (best
 * first is largest first), its min for `<=` / `<`; unknown ranks first.
 */
export function liveKey(file: FragmentFile, rg: number, name: string, f: ScanFilter): number {
  const down = f.op === '>=' || f.op === '>';
  const s = numericStats(file, name);
  const v = s === null || s.nulls[rg]! < 0 ? NaN : down ? s.max[rg]! : s.min[rg]!;
  return v === v ? v : down ? Infinity : -Infinity;
}

// ---------------------------------------------------------------- block zones

/** Rows per block zone (a batch of the scan is at most this many rows: BATCH_SIZE). */
export const ZONE_ROWS = 4096;

/** Min and max of the valid, non-NaN values of each block ([min0, max0, min1, max1, ...]; +Inf/-Inf for a block without any). */
const zonesOf = new WeakMap<ColumnChunk, Float64Array>();

function zones(c: ColumnChunk & { kind: 'fixed' }, values: Float64Array | Int32Array): Float64Array {
  let z = zonesOf.get(c);
  if (z) return z;
  const blocks = Math.ceil(c.length / ZONE_ROWS);
  z = new Float64Array(2 * blocks);
  const validity = c.validity;
  for (let b = 0; b < blocks; b++) {
    let lo = Infinity;
    let hi = -Infinity;
    const end = Math.min(c.length, (b + 1) * ZONE_ROWS);
    for (let i = b * ZONE_ROWS; i < end; i++) {
      if (validity !== null && (validity[i >> 3]! & (1 << (i & 7))) === 0) continue;
      const x = values[i]!;
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
    z[2 * b] = lo;
    z[2 * b + 1] = hi;
  }
  zonesOf.set(c, z);
  return z;
}

/** One filter's column chunk in a row group being read, for `zonesRuleOut`. */
export interface ZoneCheck {
  readonly filter: ScanFilter;
  readonly chunk: ColumnChunk;
}

/** The block zones of a chunk whose values are numbers, or null. */
function numericZones(c: ColumnChunk): Float64Array | null {
  if (c.kind !== 'fixed' || !(c.values instanceof Float64Array || c.values instanceof Int32Array)) return null;
  return zones(c, c.values);
}

/** Min and max over the blocks of rows [s, e) (written to `out`). */
function spanOf(z: Float64Array, s: number, e: number, out: Float64Array): void {
  let lo = Infinity;
  let hi = -Infinity;
  for (let b = Math.floor(s / ZONE_ROWS), last = Math.floor((e - 1) / ZONE_ROWS); b <= last; b++) {
    if (z[2 * b]! < lo) lo = z[2 * b]!;
    if (z[2 * b + 1]! > hi) hi = z[2 * b + 1]!;
  }
  out[0] = lo;
  out[1] = hi;
}

const span = new Float64Array(2);

/**
 * The starts of rows [start, end) in slices of `step` rows, best first for
 * live filter check `live` (largest max first for `>=`, smallest min first
 * for `<=`), as the scan orders row groups: a top-N's threshold then passes
 * the rest of the row group's blocks at once (a column that rises along the
 * row group would otherwise move it one batch at a time). Null: table order.
 */
export function bestBlocksFirst(live: ZoneCheck, start: number, end: number, step: number): number[] | null {
  const z = numericZones(live.chunk);
  if (z === null || end - start <= step) return null;
  const down = live.filter.op === '>=' || live.filter.op === '>';
  const starts: number[] = [];
  const keys: number[] = [];
  for (let s = start; s < end; s += step) {
    spanOf(z, s, Math.min(end, s + step), span);
    starts.push(s);
    keys.push(down ? span[1]! : span[0]!);
  }
  const order = starts.map((_, i) => i);
  // Stable: equal keys keep table order.
  order.sort(down ? (a, b) => keys[b]! - keys[a]! || a - b : (a, b) => keys[a]! - keys[b]! || a - b);
  return order.map((i) => starts[i]!);
}

/**
 * Whether the filters rule out every row of rows [s, e) of the row group
 * (each check names a filter and its column's chunk there), by the chunks'
 * block zones: comparisons and IN on numeric values only (NULLs and NaN
 * meet no comparison; NULL tests are never ruled out here).
 */
export function zonesRuleOut(checks: readonly ZoneCheck[], s: number, e: number): boolean {
  for (const { filter: f, chunk: c } of checks) {
    if (f.op === 'isNull' || f.op === 'notNull') continue;
    const nums = numbersOf(f.values);
    const z = nums === null || nums.length === 0 ? null : numericZones(c);
    if (z === null) continue;
    spanOf(z, s, e, span);
    if (span[0]! > span[1]! || !rangeMayMatch(f.op, nums!, span[0]!, span[1]!)) return true;
  }
  return false;
}
