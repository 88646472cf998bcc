// A table's versioned history (time travel): the versions of its current
// generation, the past generations a replace superseded, how a read at an
// instant finds its version, and what of the history is kept (the 7-day
// window, thinning, the past-generations cap). See README.md "Time travel".
import type { Column } from '../types/schema.js';
import { sortedDeletes, type DeleteFile } from './deletion-log.js';
import type { FragmentInfo } from './fragment-writes.js';
import type { Segment, TableState } from './table-state.js';

/**
 * A committed version of the table: at `ms` (epoch) the table held `rows`
 * rows, of which the first `deletes` entries of the generation's deletion
 * log were deleted. Appends only add rows at the end, compaction keeps row
 * order and row-level DML deletes by position and appends, so within one
 * generation every older version is a prefix of the current rows and of
 * the deletion log.
 */
export type Version = readonly [ms: number, rows: number, deletes?: number];

/**
 * The rows a replace (DML, WRITE_TRUNCATE) superseded, kept for time travel:
 * readable from versions[0] until endMs, deleted once endMs is past the window.
 */
export interface PastGeneration {
  /** The schema then (a replace may change it); rows are read with it and matched to today's by name. */
  readonly columns: readonly { name: string; type: string }[];
  readonly fragments: readonly FragmentInfo[];
  readonly versions: readonly Version[];
  readonly endMs: number;
  /** Its deletion log (row-level DML), in commit order: these entries, with `deleteFiles`' spliced in. */
  readonly deletes?: readonly number[];
  readonly deleteFiles?: readonly DeleteFile[];
  /** Why its rows came and went (APPENDS, CHANGES); absent: written before the record was kept. */
  readonly changes?: ChangeRecord;
}

/**
 * Why a generation's rows came and went, beside its versions (which say
 * when): APPENDS and CHANGES read it (change-history.ts). Row ranges are
 * positions of the generation, log ranges entries of its deletion log; each
 * a flat list of [start, end) pairs, ascending (rows and log entries only
 * grow within a generation, so each commit adds at the end). What no range
 * names was inserted (rows) or deleted outright (log entries): a generation
 * written before the record was kept reads so, every appended row an
 * insert, since the storage did not tell then.
 */
export interface ChangeRecord {
  /** Rows that are an UPDATE's (or a MERGE's update arm's) new rows, not inserts. */
  readonly updated?: readonly number[];
  /** Rows carried over from the previous generation by a replace that changed no data (a purge, a column rewrite). */
  readonly carried?: readonly number[];
  /** Log entries that are the old rows of an update (kept for tables with enable_change_history only). */
  readonly forUpdate?: readonly number[];
  /** Commit times of multi-statement transactions that changed the generation (CHANGES refuses a window holding one). */
  readonly txn?: readonly number[];
  /** Past generations only: its rows [0, truncatedRows) still live at its end were deleted by the replace (TRUNCATE, WRITE_TRUNCATE). */
  readonly truncatedRows?: number;
}

/** `r` with the range [start, end) added to its list `key` (merged with the last range when they touch). */
export function withRange(r: ChangeRecord, key: 'updated' | 'carried' | 'forUpdate', start: number, end: number): ChangeRecord {
  if (end <= start) return r;
  const list = r[key] ?? [];
  if (list.length > 0 && list[list.length - 1] === start) return { ...r, [key]: [...list.slice(0, -1), end] };
  return { ...r, [key]: [...list, start, end] };
}

/** Whether `p` is in one of the ranges of `list` (flat [start, end) pairs, ascending). */
export function inRanges(list: readonly number[] | undefined, p: number): boolean {
  if (!list) return false;
  let lo = 0, hi = (list.length >> 1) - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (p < list[2 * mid]!) hi = mid - 1;
    else if (p >= list[2 * mid + 1]!) lo = mid + 1;
    else return true;
  }
  return false;
}

/** The record's ranges up to `rows` rows and `deletes` log entries (what a sidecar holds; later ones come back from the WAL). */
export function recordUpTo(r: ChangeRecord, rows: number, deletes: number): ChangeRecord {
  const cut = (list: readonly number[] | undefined, n: number): readonly number[] | undefined => {
    if (!list) return undefined;
    const out: number[] = [];
    for (let i = 0; i < list.length; i += 2) if (list[i + 1]! <= n) out.push(list[i]!, list[i + 1]!);
    return out.length > 0 ? out : undefined;
  };
  const out: { -readonly [K in keyof ChangeRecord]: ChangeRecord[K] } = {};
  const updated = cut(r.updated, rows), carried = cut(r.carried, rows), forUpdate = cut(r.forUpdate, deletes);
  if (updated) out.updated = updated;
  if (carried) out.carried = carried;
  if (forUpdate) out.forUpdate = forUpdate;
  if (r.txn?.length) out.txn = r.txn;
  if (r.truncatedRows !== undefined) out.truncatedRows = r.truncatedRows;
  return out;
}

/** Time travel window (FOR SYSTEM_TIME AS OF, `table@ms`): BigQuery's 7 days. */
export const TIME_TRAVEL_MS = 7 * 24 * 3600 * 1000;

/**
 * The time travel window of the tables of a dataset (`resource`, its
 * REST form): its maxTimeTravelHours, 48 to 168 (time-travel.md, Configure
 * the time travel window), else 7 days. Storage keeps 7 days whatever it
 * is; reads (time travel, APPENDS, CHANGES) go back only this far.
 */
export function timeTravelMs(resource: { readonly maxTimeTravelHours?: unknown } | undefined): number {
  const hours = Number(resource?.maxTimeTravelHours ?? NaN);
  return Number.isFinite(hours) && hours > 0 ? Math.min(hours * 3600 * 1000, TIME_TRAVEL_MS) : TIME_TRAVEL_MS;
}
/**
 * Past generations kept per table, by count and by rows: a loop of UPDATEs
 * over a big table would otherwise keep a copy per statement for 7 days. The
 * oldest go first; reads before them get "Cannot read before".
 */
const MAX_PAST_GENERATIONS = 64;
const MAX_PAST_ROWS = 20_000_000;
/**
 * History granularity, bounding its size under a steady insert stream: every
 * version for the last minute, then the last one per second up to an hour,
 * then the last one per minute (a read falls on the version kept before it).
 */
const EXACT_HISTORY_MS = 60 * 1000;
const SECOND_HISTORY_MS = 3600 * 1000;

/** The last version at or before `ms`; undefined when `ms` precedes them all. */
export function versionAt(versions: readonly Version[], ms: number): Version | undefined {
  let lo = 0, hi = versions.length - 1;
  let found: Version | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (versions[mid]![0] <= ms) {
      found = versions[mid]!;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** A state of `segments` as of version `v` of a generation whose deletion log is `log`. */
export function stateAtVersion(columns: readonly Column[], segments: readonly Segment[], v: Version | undefined, log: readonly number[]): TableState {
  return { generation: -1, columns, segments, count: segments.length, rows: v ? v[1] : 0, csn: 0, deleted: sortedDeletes(log, v?.[2] ?? 0) };
}

/**
 * The versions worth keeping at `now`: nothing older than the window except
 * the one live at its start, and past the exact minute only the last version
 * of each second (of each minute, past the hour).
 */
export function pruneVersions(versions: readonly Version[], now: number, retentionMs: number): Version[] {
  const cutoff = now - retentionMs;
  const out: Version[] = [];
  for (let i = 0; i < versions.length; i++) {
    const v = versions[i]!;
    const next = versions[i + 1];
    if (next) {
      if (next[0] <= cutoff) continue; // superseded before the window opened
      const age = now - v[0];
      const bucket = age > SECOND_HISTORY_MS ? 60_000 : age > EXACT_HISTORY_MS ? 1000 : 0;
      if (bucket > 0 && Math.floor(next[0] / bucket) === Math.floor(v[0] / bucket)) continue;
    }
    out.push(v);
  }
  return out;
}

/**
 * The history worth keeping at `now`: versions thinned (pruneVersions), past
 * generations that left the window dropped, and the oldest ones past the cap
 * (MAX_PAST_GENERATIONS, MAX_PAST_ROWS) too, reads before them failing from
 * then on (`historyFromMs`). `expired`: the generations dropped.
 */
export function keptHistory(
  versions: readonly Version[],
  past: readonly PastGeneration[],
  historyFromMs: number,
  now: number,
  retention: number,
): { versions: Version[]; past: PastGeneration[]; expired: PastGeneration[]; historyFromMs: number } {
  const keptVersions = pruneVersions(versions, now, retention);
  const expired = past.filter((g) => g.endMs <= now - retention);
  let kept = past.filter((g) => g.endMs > now - retention).map((g) => ({ ...g, versions: pruneVersions(g.versions, now, retention) }));
  const pastRows = (): number => kept.reduce((n, g) => n + g.fragments.reduce((m, f) => m + f.rows, 0), 0);
  while (kept.length > MAX_PAST_GENERATIONS || (kept.length > 0 && pastRows() > MAX_PAST_ROWS)) {
    const g = kept[0]!;
    kept = kept.slice(1);
    expired.push(g);
    historyFromMs = Math.max(historyFromMs, g.endMs);
  }
  return { versions: keptVersions, past: kept, expired, historyFromMs };
}
