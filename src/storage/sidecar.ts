// The sidecar (`<stem>.meta.json`): what a table's rows are on disk (its
// fragment files, how far the WAL is folded, the deletion log's flushed
// entries, writers' marks) and the history kept for time travel. Written
// whole (temp + sync + rename) at every fold and commit. See README.md
// "Durability protocol".
import * as fs from 'node:fs';
import type { Column } from '../types/schema.js';
import { inlineDeletes, type DeleteFile } from './deletion-log.js';
import { colInfo, type FragmentInfo } from './fragment-writes.js';
import { keptHistory, recordUpTo, type ChangeRecord, type PastGeneration, type Version } from './table-history.js';

export interface Sidecar {
  readonly version: 1;
  readonly columns: readonly { name: string; type: string }[];
  readonly fragments: readonly FragmentInfo[];
  /** Every WAL record with lsn <= flushedLsn is already in a fragment. */
  readonly flushedLsn: number;
  /**
   * Positions of rows deleted by row-level DML, in commit order: those of
   * WAL records up to flushedLsn (later ones come from the WAL), less the
   * entries of `deleteFiles`, which are spliced in at their `at`.
   */
  readonly deletes?: readonly number[];
  readonly deleteFiles?: readonly DeleteFile[];
  readonly modifiedMs: number;
  /** Versions of the current generation up to the fragments' rows (later ones come from WAL record times). Absent in old sidecars. */
  readonly versions?: readonly Version[];
  readonly past?: readonly PastGeneration[];
  /** Why the current generation's rows up to the fragments' came and went (later ones: the WAL records' `u` and `f`). Absent in old sidecars. */
  readonly changes?: ChangeRecord;
  /** History before this instant was dropped early (the past-generations cap), not by the window. */
  readonly historyFromMs?: number;
  /** The catalog.log record of the multi-table commit that last wrote this sidecar whole (0: none; see Storage.redoSidecars). */
  readonly seq?: number;
  /** Writers' marks (TableData.append) of WAL records up to flushedLsn, by key. */
  readonly marks?: Readonly<Record<string, number>>;
}

/** What writing a sidecar changes (sidecarChange). */
export interface SidecarChange {
  readonly sidecar: Sidecar;
  readonly versions: Version[];
  readonly past: PastGeneration[];
  readonly historyFromMs: number;
  /** Fragment files no sidecar names once this one is written. */
  readonly obsolete: string[];
}

export const EMPTY_SIDECAR: Sidecar = { version: 1, columns: [], fragments: [], flushedLsn: 0, modifiedMs: 0 };

/** The sidecar at `file`; an empty one when there is none (a table never folded). */
export function readSidecarSync(file: string): Sidecar {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Sidecar;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY_SIDECAR;
    throw e;
  }
}

/** What a new sidecar is made of (TableData.sidecarFor). */
export interface SidecarParts {
  /** The sidecar now: its `seq` is kept, and its files the new one does not name become obsolete. */
  readonly current: Sidecar;
  readonly fragments: readonly FragmentInfo[];
  readonly flushedLsn: number;
  readonly versions: readonly Version[];
  readonly past: readonly PastGeneration[];
  readonly columns: readonly Column[];
  /** The log, its entries in files, and how many of its first entries the sidecar holds (those of records up to flushedLsn). */
  readonly deletes: { readonly log: readonly number[]; readonly files: readonly DeleteFile[]; readonly flushed: number };
  readonly historyFromMs: number;
  readonly modifiedMs: number;
  /** Writers' marks by key, with the WAL record that set each. */
  readonly marks: ReadonlyMap<string, { readonly value: number; readonly lsn: number }>;
  readonly retentionMs: number;
  /** The current generation's change record (ranges past the flushed rows and log entries come back from the WAL). */
  readonly record: ChangeRecord;
}

/**
 * The sidecar listing `fragments` (and the history as of now) and what
 * writing it changes: history is pruned here, versions thinned and
 * generations that left the time-travel window dropped (their fragment
 * files are deleted once no sidecar names them).
 */
export function sidecarChange(p: SidecarParts): SidecarChange {
  const now = Date.now();
  const { fragments, flushedLsn, deletes } = p;
  const { versions: keptVersions, past: kept, expired, historyFromMs } = keptHistory(p.versions, p.past, p.historyFromMs, now, p.retentionMs);
  // Versions of rows (and deletions) still only in the WAL are rebuilt from its records on load.
  const fragmentRows = fragments.reduce((s, f) => s + f.rows, 0);
  const flushedDeletes = deletes.flushed;
  const inline = inlineDeletes(deletes.log, deletes.files, flushedDeletes);
  const sidecar: Sidecar = {
    version: 1,
    columns: p.columns.map(colInfo),
    fragments,
    flushedLsn,
    ...(inline.length > 0 ? { deletes: inline } : {}),
    ...(deletes.files.length > 0 ? { deleteFiles: deletes.files } : {}),
    modifiedMs: p.modifiedMs || now,
    versions: keptVersions.filter((v) => v[1] <= fragmentRows && (v[2] ?? 0) <= flushedDeletes),
    past: kept,
    ...changesOf(recordUpTo(p.record, fragmentRows, flushedDeletes)),
    historyFromMs: historyFromMs || undefined,
    seq: p.current.seq,
    marks: p.marks.size > 0 ? Object.fromEntries([...p.marks].filter(([, m]) => m.lsn <= flushedLsn).map(([k, m]) => [k, m.value])) : undefined,
  };
  const filesOf = (g: { fragments: readonly FragmentInfo[]; deleteFiles?: readonly DeleteFile[] }): string[] => [...g.fragments, ...(g.deleteFiles ?? [])].map((f) => f.file);
  const live = new Set([...filesOf({ fragments, deleteFiles: deletes.files }), ...kept.flatMap(filesOf)]);
  // Files of expired generations, and of the current list that the new one drops (merged small fragments, a replace without history).
  const obsolete = [...new Set([...expired.flatMap(filesOf), ...filesOf(p.current)])].filter((f) => !live.has(f));
  return { sidecar, versions: keptVersions, past: kept, historyFromMs, obsolete };
}

/** The sidecar's `changes` field: absent while the record is empty (most tables: no update, no replace). */
function changesOf(r: ChangeRecord): { changes?: ChangeRecord } {
  return Object.keys(r).length > 0 ? { changes: r } : {};
}
