// When a table's WAL folds into a fragment file (past COMPACT_WAL_BYTES, or
// once idle, waiting while another table takes a stream of appends), and the
// steps of a fold that need nothing of the table but its segments: held rows
// made in slices, trailing small fragments merged. TableData.foldLog runs
// the fold. See README.md "Durability protocol" (2. Compaction).
import type { Column } from '../types/schema.js';
import type { Batch } from '../types/vector.js';
import type { FragmentInfo } from './fragment-writes.js';
import { plainState, stateBatches, type FileSegment, type Segment } from './table-state.js';

/** Compaction thresholds: the WAL is folded into a fragment past either bound, or when idle. */
export const COMPACT_WAL_BYTES = Number(process.env.WAREHOUSE_COMPACT_WAL_BYTES) || 32 * 1024 * 1024;
export const COMPACT_IDLE_MS = Number(process.env.WAREHOUSE_COMPACT_IDLE_MS) || 1500;
/**
 * An idle table's compaction waits while another table is taking appends
 * (one within this long), checking again after it; but never longer than
 * IDLE_DEFER_MAX_MS after the table's own last append.
 */
export const IDLE_BUSY_MS = Math.min(250, COMPACT_IDLE_MS);
const IDLE_DEFER_MAX_MS = 10 * COMPACT_IDLE_MS;
/** The latest WAL append of this process, and its table (see TableData.scheduleIdleCompaction). */
let lastAppend: { at: number; by: object | null } = { at: 0, by: null };

/** Table `by` appended to its WAL at `at` (epoch ms). */
export function noteAppend(by: object, at: number): void {
  lastAppend = { at, by };
}

/** When another table than `table` last appended (null: `table` made the process's latest append). */
export function otherAppendAt(table: object): number | null {
  return lastAppend.by !== table ? lastAppend.at : null;
}

/** Whether an idle table's fold waits: another table appended just now, and the table's own last change is recent enough. */
export function idleFoldWaits(now: number, otherAppendAt: number | null, ownChangeAt: number): boolean {
  return otherAppendAt !== null && now - otherAppendAt < IDLE_BUSY_MS && now - ownChangeAt < IDLE_DEFER_MAX_MS;
}
const MAX_SMALL_FRAGMENTS = 8;
/** A fold makes held rows in slices of about this long between turns of the event loop (see makeHeld). */
const MAKE_SLICE_MS = 4;
const SMALL_FRAGMENT_ROWS = 100_000;

/**
 * Makes the rows held as request bytes in segments [from, to) a few at a
 * time, letting appends and queries run in between: a 32 MB log holds
 * ~170k rows, ~0.3 s of work that would otherwise stall the event loop.
 */
export async function makeHeld(segments: readonly Segment[], from: number, to: number): Promise<void> {
  let slice = performance.now();
  for (let i = from; i < to; i++) {
    const s = segments[i]!;
    if (s.kind === 'mem') void s.batch.columns;
    if (performance.now() - slice >= MAKE_SLICE_MS) {
      await new Promise<void>((r) => setImmediate(r));
      slice = performance.now();
    }
  }
}

/**
 * The fragment list `listed` (the current ones, then new files) with its
 * small fragments (idle-time WAL folds) merged once 8 of them trail the
 * list. Fragments of SMALL_FRAGMENT_ROWS or more are never rewritten
 * (except by a replace), so bulk loads are encoded once. Returns the list to
 * commit and the files it makes obsolete; `write` writes the merged rows
 * (every row, in `columns`), `segmentOf` names a file's rows.
 */
export async function mergeSmallFragments(
  listed: readonly FragmentInfo[],
  columns: readonly Column[],
  segmentOf: (f: FragmentInfo) => FileSegment,
  write: (rows: readonly Batch[]) => Promise<FragmentInfo[]>,
): Promise<{ fragments: FragmentInfo[]; obsolete: string[] }> {
  let fragments = [...listed];
  let k = fragments.length;
  while (k > 0 && fragments[k - 1]!.rows < SMALL_FRAGMENT_ROWS) k--;
  if (fragments.length - k < MAX_SMALL_FRAGMENTS) return { fragments, obsolete: [] };
  const small = fragments.slice(k);
  const segs = small.map(segmentOf);
  // Every row, deleted ones too: positions (the deletion log's) stay as they were.
  const rows = await stateBatches(plainState(columns, segs));
  const merged = await write(rows);
  fragments = [...fragments.slice(0, k), ...merged];
  return { fragments, obsolete: small.map((f) => f.file) };
}
