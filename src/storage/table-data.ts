// Row storage of one table: fragment files + a write-ahead log on disk. A
// table's state is a list of segments (table-state.ts): windows of fragment
// files, read a row group and a column at a time through the chunk cache,
// and the rows appended since the last fold, held in memory (made from the
// log's bytes when first read). See README.md "Durability".
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { Column } from '../types/schema.js';
import type { SqlType } from '../types/types.js';
import { sliceBatches, type Batch } from '../types/vector.js';
import type { Stored } from './codec.js';
import { CommitClock } from './clock.js';
import { distinctSorted, inlineDeletes, mergeSorted, readDeleteLog, recordDeletes, sortedDeletes, spillInline, WAL_DELETES_MAX, writeDeleteFile, type DeleteFile, type DeleteFileWritten } from './deletion-log.js';
import { COMPACT_IDLE_MS, COMPACT_WAL_BYTES, IDLE_BUSY_MS, idleFoldWaits, makeHeld, mergeSmallFragments, noteAppend, otherAppendAt } from './fold.js';
import { colInfo, fragmentName, StagedRows, writeFragments, type FragmentInfo } from './fragment-writes.js';
import { ensureDirDurable, atomicWrite, UnsealedFiles } from './fsutil.js';
import { Gate } from './gate.js';
import { Graveyard } from './graveyard.js';
import { DeferredBatch, rowsToBatch } from './json-rows.js';
import { conformTail, mergeBatches, rewrittenRows } from './row-batches.js';
import { EMPTY_SIDECAR, readSidecarSync, sidecarChange, type Sidecar, type SidecarChange } from './sidecar.js';
import { commitClockMs } from './commit-clock.js';
import { pruneVersions, stateAtVersion, TIME_TRAVEL_MS, versionAt, withRange, type ChangeRecord, type PastGeneration, type Version } from './table-history.js';
import { NONE_DELETED, plainState, sliceSegments, stateBatches, type FileSegment, type Segment, type TableState } from './table-state.js';
import { nullVector, storedToVector, vectorToStored } from './vectors.js';
import { encodeRecord, readWalSync, RECORD_JSON_OFFSET, WalWriter, type WalSyncMode } from './wal.js';

export type { TableState } from './table-state.js';
export { stateBatches } from './table-state.js';

/** The table's storage was replaced or dropped: a write retries on the table that now has the name (Storage.writeRows). */
export class TableClosedError extends Error {}

/** A commit whose base was replaced meanwhile (a transaction raced a DML statement or another transaction). */
export class TableConflictError extends Error {}

/**
 * New rows for a table (TableData.prepare): batches, a stream of them
 * (written as it comes), or rows already staged to files (StagedRows).
 */
export type NewRows = readonly Batch[] | AsyncIterable<Batch> | StagedRows;

/** A writer's [key, value] kept with the rows of one append (TableData.append). */
export type Mark = readonly [string, number];

/** Rows written ahead of their commit (TableData.prepare). */
export interface PreparedRows {
  readonly td: TableData;
  /** null: appended at the end; a state: replacing its rows; 'all': replacing whatever rows the commit meets. */
  readonly base: TableState | 'all' | null;
  readonly columns: readonly Column[];
  /** The rows come with a schema of their own (replace with columns). */
  readonly schemaChange: boolean;
  readonly rows: number;
  /** The files the rows were written to, in order (each at most FILE_ROWS rows). */
  readonly fragments: readonly FragmentInfo[];
  /** Rows of `deletes.base` deleted with the append (a large row-level change; base null only). */
  readonly deletes?: { readonly base: TableState; readonly positions: Uint32Array; readonly file: DeleteFileWritten };
  /** Commit only while no snapshot is open (a purge; refused with TableConflictError otherwise). */
  readonly unread?: boolean;
  /** A replace that changes no data (a purge, a column rewrite): its rows are carried over, not inserted (ChangeRecord). */
  readonly carried?: boolean;
  /** A multi-statement transaction's commit (ChangeRecord.txn): a row-level change, or a replace that took base's rows away (a TRUNCATE in it). */
  readonly txn?: boolean;
  /** The first `updated` rows are an update's new rows, not inserts (an append only). */
  readonly updated?: number;
  /** Ranges of `deletes.positions` (flat [start, end) pairs) that are the old rows of an update. */
  readonly forUpdate?: readonly number[];
}

/** How a row-level change's rows relate (TableData.change): what CHANGES and APPENDS tell apart. */
export interface ChangeKinds {
  /** The first `updated` added rows are new rows of updated ones (the rest inserted). */
  readonly updated?: number;
  /** The first `updatedDeletes` deleted positions are updated rows' old ones (the rest deleted). */
  readonly updatedDeletes?: number;
}

/** What a commit of prepared rows writes and changes (TableData.withCommitPlan). */
export interface CommitPlan {
  readonly sidecar: Sidecar;
  readonly obsolete: readonly string[];
  /** Switches memory to the committed state; call once the sidecar (or a record that redoes it) is durable. */
  apply: () => void;
}

/** Marks kept per table (the most recent ones; see TableData.append). */
const MAX_MARKS = 1000;

/** Appends of at least this many rows skip the WAL and become a fragment directly. */
export const BULK_ROWS = 20_000;
/**
 * Deleted rows kept in place past which (at least this many, and more than
 * a quarter of the table's rows) an idle fold rewrites the table without
 * them (TableData.purge): scans pay for every deleted row they skip.
 */
const PURGE_MIN_DELETES = 20_000;
const PURGE_FRACTION = 0.25;

/** A generation of a table's history as APPENDS and CHANGES read it (TableData.changeGenerations). */
export interface HistoryGeneration {
  readonly columns: readonly Column[];
  /** Its rows, deleted ones included, in position order. */
  readonly segments: readonly Segment[];
  readonly versions: readonly Version[];
  /** Its deletion log (positions, in commit order). */
  readonly log: readonly number[];
  readonly record: ChangeRecord;
  /** When a replace superseded it (past generations only). */
  readonly endMs?: number;
}

/** Where an append's rows went: positions [start, end) of the table's generation (the streaming buffer tracks insertAll's). */
export interface AppendedRows {
  readonly generation: number;
  readonly start: number;
  readonly end: number;
}

/** A row-level change's parts (TableData.changeParts). */
interface ChangeParts {
  readonly rows: readonly Batch[];
  readonly addedRows: number;
  readonly positions: Uint32Array;
  readonly updated: number;
  readonly forUpdate: readonly number[] | undefined;
}

export class TableData {
  private columns: readonly Column[];
  private sidecar: Sidecar = EMPTY_SIDECAR;
  /** Writers' marks by key, most recent last, with the WAL record that set each (see append). */
  private marks = new Map<string, { value: number; lsn: number }>();
  /** The table's rows: file segments (the sidecar's fragments, in order), then memory segments (the WAL's records). */
  private segments: Segment[] = [];
  /** Index of the first segment not yet in a fragment (all before it are file segments). */
  private unflushedFrom = 0;
  private rows = 0;
  private nextLsn = 1;
  private wal: WalWriter | null = null;
  private loading: Promise<void> | null = null;
  /** Appends run shared; a change of all rows (a fold's start and end, replace, alter, close) exclusive. */
  private readonly gate = new Gate();
  /** One fold, replace, alter or close at a time (used exclusively only): a fold encodes outside `gate`. */
  private readonly upkeep = new Gate();
  /** A size- or idle-triggered fold is under way or queued (appends meanwhile do not queue more). */
  private folding = false;
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Versions of the current generation (all committed rows, WAL included), oldest first. */
  private versions: Version[] = [];
  /** The generation's deletion log: positions of rows row-level DML deleted, in commit order. */
  private deletes: number[] = [];
  /** The log's entries by commit: [previous end, end) were deleted by WAL record `lsn` (0: in the sidecar); lsns ascending. */
  private deleteRuns: { end: number; lsn: number }[] = [];
  /** The entries of `deletes` kept in deletion vector files (all in the sidecar), in log order. */
  private deleteFiles: DeleteFile[] = [];
  /** `deletes`, ascending (the current state's `deleted`). */
  private deleted: Uint32Array = NONE_DELETED;
  /** One row-level change at a time (their statements hold the mutation lock; this keeps the check and the write together regardless). */
  private readonly changes = new Gate();
  /** Bumps when all rows are replaced or the schema changes (TableState.generation). */
  private generation = 0;
  /** The commit that made the current state (clock.ts); 0 for a state from before this process. */
  private csn = 0;
  /** States replaced while an open snapshot may still read them, oldest first. */
  private history: { state: TableState; until: number }[] = [];
  private stateCache: TableState | null = null;
  /** Replaced or dropped: writes fail with TableClosedError (and go to the new table), reads of held snapshots go on. */
  private retired = false;
  private past: PastGeneration[] = [];
  private historyFromMs = 0;
  /** Why the current generation's rows came and went (APPENDS, CHANGES). */
  private record: ChangeRecord = {};
  /**
   * enable_change_history (Storage sets it from the resource): row-level
   * changes then also keep which deletions were for an update (CHANGES'
   * _CHANGE_IS_FOR_UPDATE); other tables pay nothing for it.
   */
  changeHistory = false;
  /** The time-travel window; tests shorten it to see old versions collected. */
  static retentionMs = TIME_TRAVEL_MS;
  /**
   * Columns (names) rows written by `prepare` are ordered by within each
   * file: the partitioning column, then the clustering ones (Storage sets
   * them from the table's resource), so that their filters skip row groups.
   */
  layoutBy: readonly string[] = [];
  /**
   * Takes the table's mutation lock (Storage sets it from the table's name):
   * a purge rewrites every position, so it runs between mutating statements,
   * never between one's read and its commit.
   */
  mutationLock: (() => Promise<() => void>) | null = null;
  /** Bumps on every change; the etag of tabledata.list. */
  version = 0;
  modifiedMs = 0;
  private countHint: number | null = null;
  /**
   * A new incarnation no catalog record names yet (Storage.prepareTable):
   * nothing of it is on disk to recover, and its files are written in place
   * and synced together by `seal`, before the record that publishes it.
   */
  private unsealed: UnsealedFiles | null = null;

  constructor(
    private dir: string,
    readonly stem: string,
    columns: readonly Column[],
    private readonly onError: (e: unknown) => void = (e) => console.error('table storage error', e),
    /** When an append is acknowledged: after its WAL write ('background' fdatasync follows) or after its fdatasync ('always'). */
    readonly walSync: WalSyncMode = 'background',
    private readonly clock: CommitClock = new CommitClock(),
    /** Where fragment files no state names go until no reader can need them (a table on its own: deleted at once). */
    private readonly graveyard: Graveyard = new Graveyard(clock, 0),
  ) {
    this.columns = columns;
  }

  get sidecarFile(): string {
    return path.join(this.dir, `${this.stem}.meta.json`);
  }
  get walFile(): string {
    return path.join(this.dir, `${this.stem}.wal`);
  }
  get isLoaded(): boolean {
    return this.wal !== null;
  }

  /** Marks a table storage that nothing names yet and nothing of which is on disk (see `unsealed`). */
  markNew(): void {
    if (this.isLoaded || this.loading) throw new Error(`table storage ${this.stem} is already open`);
    this.unsealed = new UnsealedFiles();
  }

  /**
   * A new table's unsealed files, handed over (Storage.publishTable makes
   * them durable before or with the record that names the table); from then
   * on every write of this table is durable by itself.
   */
  takeUnsealed(): UnsealedFiles | null {
    const u = this.unsealed;
    this.unsealed = null;
    return u;
  }

  /**
   * The sidecar as it is, marked as written by catalog record `seq` and
   * written so in place (not synced: the record carries the text, and
   * start-up writes it again when the file is older; see Sidecar.seq).
   */
  stampSeq(seq: number): string {
    this.sidecar = { ...this.sidecar, seq };
    const text = JSON.stringify(this.sidecar);
    fs.writeFileSync(this.sidecarFile, text);
    return text;
  }

  /** A metadata file written whole: temp + sync + rename, or for a new table in place until its seal. */
  private writeWhole(file: string, text: string): Promise<void> {
    return this.unsealed ? this.unsealed.write(file, text) : atomicWrite(file, text);
  }

  /** Row count without loading the rows: fragment counts plus the WAL's record headers. */
  rowCountSync(): number {
    if (this.isLoaded) return this.rows;
    if (this.countHint !== null) return this.countHint;
    const sc = readSidecarSync(this.sidecarFile);
    let n = sc.fragments.reduce((s, f) => s + f.rows, 0) - (sc.deletes?.length ?? 0) - (sc.deleteFiles ?? []).reduce((s, f) => s + f.count, 0);
    for (const r of readWalSync(this.walFile).records) if (r.lsn > sc.flushedLsn) n += r.rowCount - recordDeletes(r.body).length;
    this.countHint = n;
    this.modifiedMs = sc.modifiedMs;
    return n;
  }

  load(): Promise<void> {
    if (this.closed) return Promise.reject(new TableClosedError(`table storage ${this.stem} is closed`));
    if (this.isLoaded) return Promise.resolve();
    this.loading ??= this.doLoad().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private fileSegment(f: FragmentInfo): FileSegment {
    return { kind: 'file', path: path.join(this.dir, f.file), skip: f.skip ?? 0, rows: f.rows };
  }

  /** Opens the table: the sidecar's fragments become file segments (nothing is read from them), the WAL's records memory segments. */
  private async doLoad(): Promise<void> {
    // New <project>/<dataset> directories: their entries durable up to the data dir.
    await ensureDirDurable(this.dir);
    const fresh = this.unsealed !== null;
    const sc = fresh ? EMPTY_SIDECAR : readSidecarSync(this.sidecarFile);
    this.sidecar = sc;
    this.modifiedMs = sc.modifiedMs;
    // Orphans: temp files and fragments a crash left before the sidecar listed them.
    const listed = new Set(
      [...sc.fragments, ...(sc.deleteFiles ?? []), ...(sc.past ?? []).flatMap((g) => [...g.fragments, ...(g.deleteFiles ?? [])])].map((f) => f.file),
    );
    for (const n of fresh ? [] : fs.readdirSync(this.dir)) {
      if (n.startsWith(`${this.stem}@`) && !listed.has(n)) await fsp.rm(path.join(this.dir, n), { force: true });
      else if (n.startsWith(`${this.stem}.`) && n.endsWith('.tmp')) await fsp.rm(path.join(this.dir, n), { force: true });
    }
    const segments: Segment[] = sc.fragments.map((f) => this.fileSegment(f));
    const unflushedFrom = segments.length;
    const fragmentRows = sc.fragments.reduce((s, f) => s + f.rows, 0);
    // Sidecars from before versioned history: the stored rows count as always there (as time travel read them before).
    const versions: Version[] = sc.versions ? sc.versions.map((v) => [...v] as const) : [[0, fragmentRows]];
    const deletes = readDeleteLog(this.dir, sc.deletes ?? [], sc.deleteFiles ?? []);
    const deleteRuns = deletes.length > 0 ? [{ end: deletes.length, lsn: 0 }] : [];
    let record: ChangeRecord = sc.changes ?? {};
    this.marks = new Map();
    for (const [k, v] of Object.entries(sc.marks ?? {})) this.setMark(k, v, 0);
    const scan = fresh ? { records: [], validLength: 0 } : readWalSync(this.walFile);
    let maxLsn = sc.flushedLsn;
    let rows = fragmentRows;
    for (const r of scan.records) {
      if (r.lsn <= sc.flushedLsn) continue;
      const { batch, ms, mark, kinds } = this.decodeRecord(r.body, r.rowCount);
      if (batch.length > 0) segments.push({ kind: 'mem', batch });
      if (mark) this.setMark(mark[0], mark[1], r.lsn);
      if (kinds) record = recordChange(record, rows, deletes.length, kinds.u ?? 0, kinds.f);
      const gone = recordDeletes(r.body);
      for (const d of gone) deletes.push(d);
      if (gone.length > 0) deleteRuns.push({ end: deletes.length, lsn: r.lsn });
      rows += batch.length;
      maxLsn = Math.max(maxLsn, r.lsn);
      const last = versions[versions.length - 1];
      const at = Math.max(ms ?? sc.modifiedMs, last ? last[0] : 0);
      if (last && last[0] === at) versions[versions.length - 1] = [at, rows, deletes.length];
      else versions.push([at, rows, deletes.length]);
    }
    this.versions = versions;
    this.deletes = deletes;
    this.deleteRuns = deleteRuns;
    this.deleteFiles = [...(sc.deleteFiles ?? [])];
    this.deleted = sortedDeletes(deletes, deletes.length);
    this.past = [...(sc.past ?? [])];
    this.historyFromMs = sc.historyFromMs ?? 0;
    this.record = record;
    const wal = new WalWriter(this.walFile, this.walSync, this.onError);
    await wal.open(scan.validLength, this.unsealed);
    this.segments = segments;
    this.unflushedFrom = unflushedFrom;
    this.rows = rows;
    this.nextLsn = maxLsn + 1;
    this.wal = wal;
    this.countHint = null;
    this.stateCache = null;
    // Generations that left the time-travel window while the table was idle.
    if (this.past.some((g) => g.endMs <= Date.now() - TableData.retentionMs)) await this.commitSidecar(sc.fragments, sc.flushedLsn);
    if (wal.byteSize > 0) this.scheduleIdleCompaction();
  }

  /** A WAL record's rows and commit time (`t`, absent in records from before versioned history). */
  private decodeRecord(body: Buffer, rowCount: number): { batch: Batch; ms: number | undefined; mark: Mark | undefined; kinds: { u?: number; f?: number[] } | undefined } {
    const rec = JSON.parse(body.toString('utf8')) as { n: string[]; t?: number; m?: Mark; c?: Stored[][]; r?: { json?: unknown }[]; u?: number; f?: number[] };
    const kinds = rec.u !== undefined || rec.f !== undefined ? { ...(rec.u !== undefined ? { u: rec.u } : {}), ...(rec.f ? { f: rec.f } : {}) } : undefined;
    if (rowCount === 0) return { batch: { length: 0, columns: [] }, ms: rec.t, mark: rec.m, kinds };
    if (rec.r) return { batch: rowsToBatch(this.columns, new Set(rec.n.map((n) => n.toLowerCase())), rec.r), ms: rec.t, mark: rec.m, kinds };
    const byName = new Map<string, number>();
    rec.n.forEach((n, i) => byName.set(n.toLowerCase(), i));
    const columns = this.columns.map((c) => {
      const i = byName.get(c.name.toLowerCase());
      return i === undefined ? nullVector(c.type, rowCount) : storedToVector(c.type, rec.c![i]!);
    });
    return { batch: { length: rowCount, columns }, ms: rec.t, mark: rec.m, kinds };
  }

  /** Records that the table holds `rows` rows from now on; returns the version's time (never before the previous one). */
  private noteVersion(rows: number, ms: number): number {
    const last = this.versions[this.versions.length - 1];
    const at = last ? Math.max(ms, last[0]) : ms;
    if (last && last[0] === at) this.versions[this.versions.length - 1] = [at, rows, this.deletes.length];
    else this.versions.push([at, rows, this.deletes.length]);
    // Thinned here too, not only at sidecar writes: a stream of small inserts may go long without one.
    if (this.versions.length % 4096 === 0) this.versions = pruneVersions(this.versions, at, TableData.retentionMs);
    return at;
  }

  /** The commit time the next append will carry (monotonic per table). */
  private nextVersionMs(): number {
    const last = this.versions[this.versions.length - 1];
    const ms = commitClockMs();
    return last ? Math.max(ms, last[0]) : ms;
  }

  /** The earliest instant time travel can read (the oldest retained version), or undefined before any history. */
  historyStartMs(): number | undefined {
    return this.past[0]?.versions[0]?.[0] ?? this.versions[0]?.[0];
  }

  /** Reads before this instant fail: that history was dropped by the past-generations cap (0: none was). Valid once loaded. */
  get truncatedBeforeMs(): number {
    return this.historyFromMs;
  }

  /**
   * The rows as of `ms` (epoch), as a state to read: a prefix of the current
   * rows when `ms` is in the current generation, else the rows of the
   * replaced generation live then, in that generation's schema (its
   * `columns`). null when `ms` precedes the retained history.
   */
  async rowsAsOf(ms: number): Promise<TableState | null> {
    await this.load();
    const cur = this.versions;
    if (cur.length > 0 && ms >= cur[0]![0]) {
      const v = versionAt(cur, ms);
      return { ...stateAtVersion(this.columns, this.segments, v, this.deletes), generation: this.generation };
    }
    for (let i = this.past.length - 1; i >= 0; i--) {
      const g = this.past[i]!;
      if (g.versions.length === 0 || ms < g.versions[0]![0] || ms >= g.endMs) continue;
      const then: Column[] = g.columns.map((c) => ({ name: c.name, type: JSON.parse(c.type) as SqlType, required: false }));
      const segments = g.fragments.map((f) => this.fileSegment(f));
      return stateAtVersion(then, segments, versionAt(g.versions, ms), readDeleteLog(this.dir, g.deletes ?? [], g.deleteFiles ?? []));
    }
    return null;
  }

  /**
   * The retained generations, oldest first, each with its rows (deleted
   * ones included), versions, deletion log and change record: what APPENDS
   * and CHANGES read (change-history.ts).
   */
  async changeGenerations(): Promise<HistoryGeneration[]> {
    await this.load();
    const past = this.past.map((g): HistoryGeneration => ({
      columns: g.columns.map((c) => ({ name: c.name, type: JSON.parse(c.type) as SqlType, required: false })),
      segments: g.fragments.map((f) => this.fileSegment(f)),
      versions: g.versions,
      log: readDeleteLog(this.dir, g.deletes ?? [], g.deleteFiles ?? []),
      record: g.changes ?? {},
      endMs: g.endMs,
    }));
    // Copies: appends push onto these arrays in place.
    return [...past, { columns: this.columns, segments: [...this.segments], versions: [...this.versions], log: [...this.deletes], record: this.record }];
  }

  get schema(): readonly Column[] {
    return this.columns;
  }

  /** The rows readers see (deleted ones not counted). */
  get rowCount(): number {
    return this.isLoaded ? this.rows - this.deleted.length : this.rowCountSync();
  }

  /** The current state; callers must `load()` first. */
  state(): TableState {
    this.stateCache ??= { generation: this.generation, columns: this.columns, segments: this.segments, count: this.segments.length, rows: this.rows, csn: this.csn, deleted: this.deleted, stem: this.stem };
    return this.stateCache;
  }

  /**
   * The state an open snapshot `s` (clock.ts) reads: the current one, or
   * the one current at `s` (kept while open snapshots need it), or none
   * for a table made after `s`.
   */
  stateAt(s: number): TableState {
    if (s >= this.csn) return this.state();
    for (let i = this.history.length - 1; i >= 0; i--) {
      const h = this.history[i]!;
      if (h.state.csn <= s && s < h.until) return h.state;
    }
    return { generation: -1, columns: this.columns, segments: [], count: 0, rows: 0, csn: 0, deleted: NONE_DELETED };
  }

  /**
   * Called in the synchronous step that changes the rows, before the change:
   * the state it replaces is kept while an open snapshot reads it, and the
   * new state gets the next commit number.
   */
  private changing(): void {
    const csn = this.clock.tick();
    if (this.clock.readers > 0) {
      const cur = this.state();
      if (this.clock.needed(cur.csn, csn)) this.history.push({ state: cur, until: csn });
      this.history = this.history.filter((h) => this.clock.needed(h.state.csn, h.until));
    } else if (this.history.length > 0) this.history = [];
    this.csn = csn;
    this.stateCache = null;
  }

  /** Whether `s` still describes this table's rows, appends since aside (no replace, schema change or row-level change since). */
  private isCurrent(s: TableState): boolean {
    return s.stem === this.stem && s.generation === this.generation && s.deleted.length === this.deleted.length;
  }

  /** The table was replaced or dropped: later writes fail with TableClosedError (Storage.writeRows retries them on the new table). */
  retire(): void {
    this.retired = true;
  }

  private checkWritable(): void {
    if (this.retired || this.closed) throw new TableClosedError(`table storage ${this.stem} is closed`);
  }

  /** Runs `fn` with no write, fold or other change of the rows under way (a replace of the whole table in the catalog). */
  whileNoWrites<T>(fn: () => Promise<T>): Promise<T> {
    return this.exclusively(fn);
  }

  /**
   * Appends one batch (columns in schema order) durably. Resolves once the
   * WAL record is written (and synced, in 'always' mode; see wal.ts).
   * `rawRows`: the insertAll `rows` JSON text the batch was converted from;
   * logged as is (cheaper than re-encoding the columns) and converted again
   * on replay. `mark`: a writer's [key, value] recorded in the same WAL
   * record, so that what it says survives exactly when the rows do (the
   * Storage Write API's offsets: markOf).
   */
  async append(batch: Batch, rawRows?: string, mark?: Mark): Promise<AppendedRows | undefined> {
    if (batch.length === 0) return undefined;
    this.checkWritable();
    await this.load();
    if (batch.length >= BULK_ROWS && rawRows === undefined && !mark) {
      // Bulk appends (CTAS, INSERT ... SELECT, loads) go straight to fragments:
      // logging them first would encode every row twice.
      await this.commit(await this.prepare(null, [batch]));
      return undefined;
    }
    return this.logged(batch.length, rawRows ?? batch, () => batch, mark);
  }

  /** The value of the last mark with `key` (see append; kept across a truncation of the rows); undefined when none. */
  markOf(key: string): number | undefined {
    return this.marks.get(key)?.value;
  }

  private setMark(key: string, value: number, lsn: number): void {
    this.marks.delete(key); // most recent last
    this.marks.set(key, { value, lsn });
    if (this.marks.size > MAX_MARKS) this.marks.delete(this.marks.keys().next().value!);
  }

  /**
   * Appends insertAll rows kept as sent, `rows` (their JSON as UTF-8 bytes):
   * logged as they are, and made into columns by `make` from the logged
   * bytes, read back from the WAL, when something first reads them (a
   * query, a fold, a schema change). Meanwhile the heap holds nothing of
   * them: held in memory (as values, or even as one string per request),
   * streamed rows survived every young-generation collection, and copying
   * them there cost an insert stream a third of the engine's CPU.
   */
  async appendRequestRows(rows: Uint8Array, n: number, make: (rows: Buffer) => Batch, mark?: Mark): Promise<AppendedRows | undefined> {
    if (n === 0) return undefined;
    this.checkWritable();
    await this.load();
    return this.logged(n, rows, (wal, at) => heldInLog(wal, at, rows.length, n, make), mark);
  }

  /**
   * Writes one WAL record of `n` rows, `content` (columns, or rows JSON as
   * text or bytes), then adds the batch `chunk` gives for it (`at`: where the
   * content's JSON starts in the log).
   */
  private async logged(n: number, content: Batch | string | Uint8Array, chunk: (wal: WalWriter, at: number) => Batch, mark?: Mark): Promise<AppendedRows> {
    const placed = await this.gate.runShared(async (): Promise<AppendedRows> => {
      // Retired while this waited for the gate: the rows go to the table that has the name now.
      this.checkWritable();
      const wal = this.wal!;
      const lsn = this.nextLsn++;
      const names = JSON.stringify(this.columns.map((c) => c.name));
      // `t`: the commit time, so that time travel survives a restart before compaction.
      const t = this.nextVersionMs();
      const head = `{"n":${names},"t":${t},${mark ? `"m":${JSON.stringify(mark)},` : ''}"${isRows(content) ? 'r' : 'c'}":`;
      const json = isRows(content) ? [head, content, '}'] : [head, JSON.stringify(content.columns.map(vectorToStored)), '}'];
      const at = await wal.append(encodeRecord(lsn, n, json));
      this.changing();
      if (mark) this.setMark(mark[0], mark[1], lsn);
      this.segments.push({ kind: 'mem', batch: chunk(wal, at + RECORD_JSON_OFFSET + Buffer.byteLength(head)) });
      this.rows += n;
      this.noteVersion(this.rows, t);
      this.version++;
      this.modifiedMs = Date.now();
      noteAppend(this, this.modifiedMs);
      return { generation: this.generation, start: this.rows - n, end: this.rows };
    });
    const wal = this.wal;
    if (wal && wal.byteSize > COMPACT_WAL_BYTES) this.compactSoon();
    else this.scheduleIdleCompaction();
    return placed;
  }

  /**
   * Folds the WAL once the table has been idle for COMPACT_IDLE_MS. "Idle"
   * means the process too: while another table takes a stream of inserts,
   * encoding this one's rows would slow that stream down, so the fold waits
   * for a pause, bounded by IDLE_DEFER_MAX_MS after this table's last append.
   * The size bound (COMPACT_WAL_BYTES) never waits.
   */
  private scheduleIdleCompaction(delayMs = COMPACT_IDLE_MS): void {
    if (this.closed) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      if (idleFoldWaits(Date.now(), otherAppendAt(this), this.modifiedMs)) this.scheduleIdleCompaction(IDLE_BUSY_MS);
      else this.compactSoon();
    }, delayMs);
    this.idleTimer.unref();
  }

  private compactSoon(): void {
    if (this.folding) return;
    this.folding = true;
    this.compact()
      .then(() => this.purge())
      .catch(this.onError)
      .finally(() => {
        this.folding = false;
        // Appends made while it ran stay in the log: they fold when idle, or at the size bound.
        if (this.wal && this.wal.byteSize > 0) this.scheduleIdleCompaction();
      });
  }

  /** Writes rows as fragment files of at most FILE_ROWS rows each, in the given schema. */
  private writeFragments(batches: readonly Batch[], lastLsn: number, columns: readonly Column[] = this.columns): Promise<FragmentInfo[]> {
    return writeFragments(this.dir, this.stem, columns, batches, lastLsn, this.unsealed);
  }

  /**
   * The sidecar listing `fragments` (and the history as of now) and what
   * writing it changes: history is pruned here, versions thinned and
   * generations that left the time-travel window dropped (their fragment
   * files are deleted once no sidecar names them). Nothing changes until
   * `apply` runs; `versions` and `past` are the ones to keep.
   */
  private sidecarFor(
    fragments: readonly FragmentInfo[],
    flushedLsn: number,
    versions: readonly Version[],
    past: readonly PastGeneration[],
    columns: readonly Column[],
    /** The log, its entries in files, and how many of its first entries the sidecar holds (those of records up to flushedLsn). */
    deletes: { readonly log: readonly number[]; readonly files: readonly DeleteFile[]; readonly flushed: number },
    record: ChangeRecord = this.record,
  ): SidecarChange {
    return sidecarChange({
      record,
      current: this.sidecar,
      fragments,
      flushedLsn,
      versions,
      past,
      columns,
      deletes,
      historyFromMs: this.historyFromMs,
      modifiedMs: this.modifiedMs,
      marks: this.marks,
      retentionMs: TableData.retentionMs,
    });
  }

  /** How many of the deletion log's first entries come from records up to `flushedLsn` (or the sidecar). */
  private flushedDeletes(flushedLsn: number): number {
    for (let i = this.deleteRuns.length - 1; i >= 0; i--) if (this.deleteRuns[i]!.lsn <= flushedLsn) return this.deleteRuns[i]!.end;
    return 0;
  }

  /** Takes a written sidecar's history as the table's own. */
  private adoptSidecar(c: SidecarChange): void {
    this.sidecar = c.sidecar;
    this.versions = c.versions;
    this.past = c.past;
    this.historyFromMs = c.historyFromMs;
  }

  /** Rewrites the sidecar listing `fragments` (see sidecarFor), then lets go of what it made obsolete. */
  private async commitSidecar(fragments: readonly FragmentInfo[], flushedLsn: number): Promise<void> {
    const flushed = this.flushedDeletes(flushedLsn);
    const files = await this.spilledDeletes(flushed);
    const c = this.sidecarFor(fragments, flushedLsn, this.versions, this.past, this.columns, { log: this.deletes, files, flushed });
    await this.writeWhole(this.sidecarFile, JSON.stringify(c.sidecar));
    this.deleteFiles = files;
    this.adoptSidecar(c);
    await this.bury(c.obsolete);
  }

  /**
   * The deletion vector files of the log's first `n` entries for the next
   * sidecar: the current ones, or, once more than INLINE_DELETES_MAX of
   * those entries are in no file, files holding them (written and synced
   * now; see spillInline), so that many small changes do not grow every
   * later sidecar write. Call with the table's changes held off (gate or
   * a commit plan).
   */
  private async spilledDeletes(n: number): Promise<DeleteFile[]> {
    return (await spillInline(this.dir, this.stem, this.nextLsn, this.deletes, this.deleteFiles, n, this.unsealed)) ?? this.deleteFiles;
  }

  /** Files no state of this table will name again: deleted once no reader can need them (graveyard.ts). */
  private bury(files: readonly string[]): Promise<void> {
    return this.graveyard.bury(files.map((f) => path.join(this.dir, f)));
  }

  /** Folds the WAL into a new fragment (and merges small fragments), then empties the WAL. */
  compact(): Promise<void> {
    if (!this.isLoaded || this.closed) return Promise.resolve();
    return this.upkeep.runExclusive(() => this.foldLog());
  }

  /**
   * Folds the WAL's rows while appends go on: the rows pending when it starts
   * are made and encoded outside the gate (hundreds of milliseconds for a
   * 32 MB log, which stalled a stream of inserts every few hundred requests),
   * and the records appended meanwhile stay in the log (WalWriter.dropBefore).
   */
  private async foldLog(): Promise<void> {
    const start = await this.gate.runExclusive(async () => {
      const wal = this.wal;
      if (!wal || this.closed) return null;
      await wal.drain();
      if (this.unflushedFrom === this.segments.length) {
        if (wal.byteSize > 0) {
          // Only deletions (row-level DML) in the log: the sidecar takes them before the log is emptied.
          const flushed = this.sidecar.flushedLsn;
          if (this.deleteRuns.some((r) => r.lsn > flushed)) await this.commitSidecar(this.sidecar.fragments, this.nextLsn - 1);
          await wal.truncate();
        }
        return null;
      }
      return { wal, from: this.unflushedFrom, to: this.segments.length, lastLsn: this.nextLsn - 1, cut: wal.end };
    });
    if (!start) return;
    const { wal, from, to, lastLsn, cut } = start;
    // Nothing but appends changes the segments or the sidecar meanwhile (upkeep).
    await makeHeld(this.segments, from, to);
    const pending = this.segments.slice(from, to).map((s) => (s as { batch: Batch }).batch);
    const { fragments, obsolete } = await this.withFragments(await this.writeFragments(pending, lastLsn), lastLsn);
    await this.gate.runExclusive(async () => {
      await this.commitSidecar(fragments, lastLsn);
      // The same rows in fewer segments: no new state for snapshots (theirs keep the old array).
      this.segments = [...fragments.map((f) => this.fileSegment(f)), ...this.segments.slice(to)];
      this.unflushedFrom = fragments.length;
      this.stateCache = null;
    });
    // The rows are in the committed fragment now, whatever befalls the log:
    // its folded records are skipped on recovery (lsn <= flushedLsn).
    await wal.dropBefore(cut, (fn) => this.gate.runExclusive(fn));
    await this.bury(obsolete);
  }

  /** Whether deleted rows are many enough for a purge (see PURGE_MIN_DELETES). */
  private wantsPurge(): boolean {
    return this.deleted.length >= PURGE_MIN_DELETES && this.deleted.length > this.rows * PURGE_FRACTION;
  }

  /**
   * Rewrites the table without its deleted rows (a replace of the state now:
   * the rows before stay readable by time travel, as a past generation), in
   * the background after a fold, under the mutation lock. An open snapshot
   * (a transaction's may go on to write the table, and a replace meanwhile
   * would abort it) defers it to the next idle fold.
   */
  async purge(): Promise<void> {
    if (!this.wantsPurge() || this.closed || this.retired) return;
    const release = this.mutationLock ? await this.mutationLock() : () => undefined;
    try {
      if (!this.wantsPurge() || this.closed || this.retired) return;
      if (this.clock.readers > 0) return void this.scheduleIdleCompaction();
      const base = this.state();
      const p = await this.prepare(base, rewrittenRows(base, []));
      try {
        await this.commit({ ...p, unread: true, carried: true });
      } catch (e) {
        // A snapshot opened meanwhile (tried again when idle), or the table closed: the files are no one's.
        if (!(e instanceof TableConflictError || e instanceof TableClosedError)) throw e;
        await Promise.all(p.fragments.map((f) => fsp.rm(path.join(this.dir, f.file), { force: true })));
        if (e instanceof TableConflictError) this.scheduleIdleCompaction();
      }
    } finally {
      release();
    }
  }

  /**
   * The fragment list after `added` (new files) go after the current ones;
   * small fragments (idle-time WAL folds) are merged once 8 of them trail the
   * list. Fragments of SMALL_FRAGMENT_ROWS or more are never rewritten
   * (except by a replace), so bulk loads are encoded once. Returns the list to
   * commit and the files it makes obsolete.
   */
  private withFragments(added: readonly FragmentInfo[], lastLsn: number): Promise<{ fragments: FragmentInfo[]; obsolete: string[] }> {
    return mergeSmallFragments([...this.sidecar.fragments, ...added], this.columns, (f) => this.fileSegment(f), (rows) => this.writeFragments(rows, lastLsn));
  }

  /**
   * Replaces every row (DML results, WRITE_TRUNCATE), optionally with a new
   * schema. `base`: the state the new rows were computed from; rows appended
   * since (insertAll, Storage Write, INSERT) are kept after the new ones,
   * and a replace of `base` meanwhile is a TableConflictError. Without it,
   * the rows at the commit are replaced, whatever they are.
   */
  async replace(batches: NewRows, columns?: readonly Column[], base?: TableState, carried = false): Promise<void> {
    await this.load();
    const p = await this.prepare(base ?? 'all', batches, columns);
    await this.commit(carried ? { ...p, carried } : p);
  }

  /**
   * A row-level change (UPDATE, DELETE, MERGE): the rows at `deleted`
   * (positions in `base`, the state the statement read under its mutation
   * lock) go and `added` come, in one commit. A small change is one WAL
   * record (the positions and the new rows): it costs what it changes, not
   * the table's size. A large one (past WAL_DELETES_MAX positions, or
   * BULK_ROWS new rows) writes its new rows as fragment files and its
   * positions as a deletion vector file, outside any gate, and commits both
   * with one sidecar write (appendPlan): it too costs what it changes.
   * Rows appended since `base` stay.
   */
  async change(base: TableState | null, deleted: readonly number[], added: readonly Batch[], kinds: ChangeKinds = {}): Promise<void> {
    await this.load();
    const from = base ?? this.state();
    const parts = this.changeParts(from, deleted, added, kinds);
    const { rows, addedRows, positions, updated, forUpdate } = parts;
    if (positions.length === 0 && addedRows === 0) return;
    if (addedRows >= BULK_ROWS || positions.length > WAL_DELETES_MAX) {
      await this.commitChange(await this.preparedChange(from, parts));
      return;
    }
    await this.changes.runExclusive(() =>
      this.gate.runShared(async () => {
        this.checkWritable();
        if (!this.isCurrent(from)) throw new TableConflictError(`table storage ${this.stem}: rows changed since the snapshot`);
        const wal = this.wal!;
        const lsn = this.nextLsn++;
        const t = this.nextVersionMs();
        const batch = addedRows > 0 ? mergeBatches(this.columns, rows) : null;
        const kindsJson = `${updated > 0 ? `"u":${updated},` : ''}${forUpdate ? `"f":${JSON.stringify(forUpdate)},` : ''}`;
        const head = `{"d":${JSON.stringify(Array.from(positions))},"n":${JSON.stringify(this.columns.map((c) => c.name))},"t":${t},${kindsJson}"c":`;
        await wal.append(encodeRecord(lsn, addedRows, [head, JSON.stringify(batch ? batch.columns.map(vectorToStored) : []), '}']));
        this.changing();
        this.record = recordChange(this.record, this.rows, this.deletes.length, updated, forUpdate);
        for (const p of positions) this.deletes.push(p);
        this.deleteRuns.push({ end: this.deletes.length, lsn });
        this.deleted = mergeSorted(this.deleted, positions);
        if (batch) {
          this.segments.push({ kind: 'mem', batch });
          this.rows += addedRows;
        }
        this.noteVersion(this.rows, t);
        this.version++;
        this.modifiedMs = Date.now();
      }),
    );
    if (this.wal && this.wal.byteSize > COMPACT_WAL_BYTES) this.compactSoon();
    else this.scheduleIdleCompaction();
  }

  /**
   * The rows of `base` at `deleted` deleted and `rows` (a stream, or a load
   * job's staged files) added, in one commit, written as a large row-level
   * change is: a decorated WRITE_TRUNCATE replaces one partition's rows so,
   * and change history (APPENDS, CHANGES) sees those rows deleted and the
   * new ones inserted, the other partitions untouched.
   */
  async changeWith(base: TableState, deleted: readonly number[], rows: NewRows): Promise<void> {
    await this.load();
    const positions = distinctSorted(deleted);
    this.checkPositions(base, positions);
    await this.commitChange(await this.withDeletes(base, positions, await this.prepare(null, rows), 0, undefined));
  }

  /**
   * A row-level change (see change) prepared for a commit, outside any
   * gate: its new rows in fragment files (an update's first), its positions
   * in a deletion vector file. A large change commits it alone
   * (commitChange), a multi-statement transaction with its other tables'
   * (Storage.commitRows), so that change history sees its inserts, updates
   * and deletes as such.
   */
  async prepareChange(base: TableState, deleted: readonly number[], added: readonly Batch[], kinds: ChangeKinds = {}): Promise<PreparedRows> {
    await this.load();
    return this.preparedChange(base, this.changeParts(base, deleted, added, kinds));
  }

  /** A row-level change's parts, checked against `base`: its non-empty batches, its distinct positions, its kinds. */
  private changeParts(base: TableState, deleted: readonly number[], added: readonly Batch[], kinds: ChangeKinds): ChangeParts {
    const rows = added.filter((b) => b.length > 0);
    const addedRows = rows.reduce((n, b) => n + b.length, 0);
    const positions = distinctSorted(deleted);
    this.checkPositions(base, positions);
    const updated = Math.min(kinds.updated ?? 0, addedRows);
    // Which deletions were an update's: kept only where CHANGES can ask (enable_change_history).
    const forUpdate = this.changeHistory ? forUpdateRanges(positions, deleted, kinds.updatedDeletes ?? 0) : undefined;
    return { rows, addedRows, positions, updated, forUpdate };
  }

  private async preparedChange(base: TableState, c: ChangeParts): Promise<PreparedRows> {
    return this.withDeletes(base, c.positions, await this.prepareUpdatedFirst(c.rows, c.updated), c.updated, c.forUpdate);
  }

  private checkPositions(base: TableState, positions: Uint32Array): void {
    if (positions.some((p) => p >= base.rows)) throw new Error(`row-level change of ${this.stem}: a position past the rows it read`);
  }

  /** Prepared rows `p` with the deletion of `positions` of `base` (a deletion vector file written now) and what kind of change they are. */
  private async withDeletes(base: TableState, positions: Uint32Array, p: PreparedRows, updated: number, forUpdate: readonly number[] | undefined): Promise<PreparedRows> {
    const kinds = { ...(updated > 0 ? { updated } : {}), ...(forUpdate ? { forUpdate } : {}) };
    if (positions.length === 0) return { ...p, ...kinds };
    try {
      const file = await writeDeleteFile(this.dir, this.stem, this.nextLsn, positions, this.unsealed);
      return { ...p, ...kinds, deletes: { base, positions, file } };
    } catch (e) {
      await this.discard(p);
      throw e;
    }
  }

  /** Commits a prepared row-level change of this table alone; refused (a conflict), its files are no one's. */
  private async commitChange(p: PreparedRows): Promise<void> {
    try {
      await this.commit(p);
    } catch (e) {
      if (e instanceof TableConflictError) await this.discard(p);
      throw e;
    }
    if (this.wantsPurge()) this.scheduleIdleCompaction();
  }

  /** Removes the files of prepared rows no commit named (refused, or never committed). */
  async discard(p: PreparedRows): Promise<void> {
    await Promise.all([...p.fragments, ...(p.deletes ? [p.deletes.file] : [])].map((f) => fsp.rm(path.join(this.dir, f.file), { force: true })));
  }

  /**
   * A change's new rows prepared with its first `updated` rows (an update's)
   * in files before the inserted ones: a file's rows are reordered by the
   * table's layout, which would mix the two.
   */
  private async prepareUpdatedFirst(rows: readonly Batch[], updated: number): Promise<PreparedRows> {
    const total = rows.reduce((n, b) => n + b.length, 0);
    if (updated === 0 || updated >= total || this.layoutBy.length === 0) return this.prepare(null, rows);
    const first = await this.prepare(null, sliceBatches(rows, 0, updated));
    const rest = await this.prepare(null, sliceBatches(rows, updated, total));
    return { ...first, rows: first.rows + rest.rows, fragments: [...first.fragments, ...rest.fragments] };
  }

  /**
   * New rows written to fragment files ahead of their commit, outside any
   * gate (encoding a big result must not stall the table's appends): to be
   * added at the end (`base` null) or to replace the rows of `base` ('all':
   * of whatever state the commit meets). Nothing names the files until a
   * commit does; a crash before leaves orphans that the next load removes.
   * The rows are not kept: readers read them from the files. A stream is
   * written a file at a time (never more held); staged rows (a load job's)
   * are already in files beside this table's, which are linked under the
   * table's names, not rewritten.
   */
  async prepare(base: TableState | 'all' | null, rows: NewRows, columns?: readonly Column[]): Promise<PreparedRows> {
    await this.load();
    const cols = columns ?? this.columns;
    const lastLsn = this.nextLsn - 1;
    const prepared = (count: number, fragments: readonly FragmentInfo[]): PreparedRows => ({ td: this, base, columns: cols, schemaChange: columns !== undefined, rows: count, fragments });
    if (rows instanceof StagedRows) {
      if (rows.dir !== this.dir) throw new Error(`staged rows in ${rows.dir} cannot be committed to a table in ${this.dir}`);
      return prepared(rows.rows, await rows.linkInto(this.dir, () => fragmentName(this.stem, lastLsn), this.unsealed));
    }
    // Written a file (FILE_ROWS rows) at a time, in the table's layout order: never more than that is held.
    const staged = new StagedRows(this.dir, this.stem, cols, lastLsn, this.layoutBy, this.unsealed);
    try {
      for await (const b of rows) await staged.add(b);
      return prepared(staged.rows, await staged.finish());
    } catch (e) {
      // The stream failed (its query did): the files written so far are no one's.
      await staged.discard();
      throw e;
    }
  }

  /** Commits prepared rows of this table alone: one sidecar write. */
  async commit(p: PreparedRows): Promise<void> {
    await this.withCommitPlan(p, async (plan) => {
      await this.writeWhole(this.sidecarFile, JSON.stringify(plan.sidecar));
      plan.apply();
    });
  }

  /**
   * Runs `fn` with the plan of committing `p` under the table's exclusive
   * gate (no append or fold meanwhile): the sidecar to write and the
   * in-memory switch to run once it is durable. A transaction over several
   * tables nests these (Storage.commitRows). The WAL is emptied after `fn`.
   */
  async withCommitPlan<T>(p: PreparedRows, fn: (plan: CommitPlan) => Promise<T>): Promise<T> {
    return this.exclusively(async () => {
      this.checkWritable();
      const wal = this.wal!;
      await wal.drain();
      const plan = p.base === null ? await this.appendPlan(p) : await this.replacePlan(p);
      const out = await fn(plan);
      await wal.truncate();
      await this.bury(plan.obsolete);
      return out;
    });
  }

  /** The rows still only in the WAL written to a fragment (their records then fold with the commit). */
  private async pendingFragments(lastLsn: number): Promise<FragmentInfo[]> {
    const pending = this.segments.slice(this.unflushedFrom).map((s) => (s as { batch: Batch }).batch);
    return pending.length > 0 ? this.writeFragments(pending, lastLsn) : [];
  }

  /** The plan of appending `p`'s rows after the rows now (WAL rows first: every older version stays a prefix). */
  private async appendPlan(p: PreparedRows): Promise<CommitPlan> {
    const lastLsn = this.nextLsn;
    // A large row-level change: its deletions join the log, named by their file.
    // Every entry of the log is flushed by this commit; the new ones are pushed only by apply (the file holds them).
    let logLength = this.deletes.length;
    let files = await this.spilledDeletes(logLength);
    let deleted = this.deleted;
    if (p.deletes) {
      const { base, positions, file } = p.deletes;
      if (!this.isCurrent(base)) throw new TableConflictError(`table storage ${this.stem}: rows changed since the snapshot`);
      files = [...files, { file: file.file, count: file.count, at: logLength }];
      logLength += positions.length;
      deleted = mergeSorted(deleted, positions);
    }
    const pending = await this.pendingFragments(lastLsn);
    const { fragments, obsolete } = await this.withFragments([...pending, ...p.fragments], lastLsn);
    const rows = this.rows + p.rows;
    const at = this.nextVersionMs();
    const versions = [...this.versions, [at, rows, logLength] as const];
    let record = recordChange(this.record, this.rows, this.deletes.length, p.updated ?? 0, p.forUpdate);
    if (p.txn) record = { ...record, txn: [...(record.txn ?? []), at] };
    const c = this.sidecarFor(fragments, lastLsn, versions, this.past, this.columns, { log: this.deletes, files, flushed: logLength }, record);
    return {
      sidecar: c.sidecar,
      obsolete: [...c.obsolete, ...obsolete],
      apply: () => {
        this.changing();
        this.nextLsn = Math.max(this.nextLsn, lastLsn + 1);
        if (p.deletes) {
          const positions = p.deletes.positions;
          for (let i = 0; i < positions.length; i++) this.deletes.push(positions[i]!);
          this.deleteRuns.push({ end: this.deletes.length, lsn: lastLsn });
        }
        this.deleteFiles = files;
        this.deleted = deleted;
        this.adoptSidecar(c);
        this.record = record;
        this.segments = fragments.map((f) => this.fileSegment(f));
        this.unflushedFrom = this.segments.length;
        this.rows = rows;
        this.version++;
        this.modifiedMs = Date.now();
      },
    };
  }

  /** The plan of replacing `p.base`'s rows by `p`'s, keeping rows appended since base. */
  private async replacePlan(p: PreparedRows): Promise<CommitPlan> {
    const base = p.base === 'all' ? this.state() : p.base!;
    if (!this.isCurrent(base)) throw new TableConflictError(`table storage ${this.stem}: rows replaced since the snapshot`);
    if (p.unread && this.clock.readers > 0) throw new TableConflictError(`table storage ${this.stem}: a snapshot is open`);
    const lastLsn = this.nextLsn;
    // The superseded rows stay readable by time travel: rows still only in
    // the WAL are written to a fragment first, then the old fragments become
    // a past generation (deleted when they leave the window).
    const oldFragments = [...this.sidecar.fragments, ...(await this.pendingFragments(lastLsn))];
    // Rows appended since the base, kept after the new rows: windows of the
    // files they are in (memory rows are in `oldFragments`' last file now).
    const oldSegments = oldFragments.map((f) => this.fileSegment(f));
    let tail: FragmentInfo[] = sliceSegments(oldSegments, base.rows, this.rows).map((s) => {
      const seg = s as FileSegment;
      const f = oldFragments.find((x) => path.join(this.dir, x.file) === seg.path)!;
      return { file: f.file, rows: seg.rows, lastLsn: f.lastLsn, skip: seg.skip };
    });
    if (p.schemaChange && tail.length > 0) {
      // Rows of the old schema under the new one (read by position for a rename, else by name), in a file of their own.
      const tailSegs = tail.map((f) => this.fileSegment(f));
      const old = await stateBatches(plainState(this.columns, tailSegs));
      tail = await this.writeFragments(conformTail(this.columns, p.columns, old), lastLsn, p.columns);
    }
    const now = this.nextVersionMs();
    // Every entry of the log is flushed by this commit (lastLsn): inline ones and files.
    const oldFiles = this.deletes.length > 0 && this.versions.length > 0 ? await this.spilledDeletes(this.deletes.length) : this.deleteFiles;
    const gone = this.deletes.length > 0 ? { deletes: inlineDeletes(this.deletes, oldFiles, this.deletes.length), deleteFiles: oldFiles } : {};
    // The rows the replace takes away (TRUNCATE, WRITE_TRUNCATE): base's; a replace that changes no data carries them over instead.
    const carried = p.carried === true;
    const oldRecord: ChangeRecord = carried ? this.record : { ...this.record, truncatedRows: base.rows };
    const past = this.versions.length > 0 ? [...this.past, { columns: this.columns.map(colInfo), fragments: oldFragments, versions: this.versions, endMs: now, ...gone, changes: oldRecord }] : this.past;
    const fragments = [...p.fragments, ...tail];
    const rows = p.rows + tail.reduce((n, f) => n + f.rows, 0);
    // Rows appended since the base (the tail) were inserted in the old generation: carried over here.
    let record = withRange({}, 'carried', carried ? 0 : p.rows, rows);
    if (p.txn) record = { ...record, txn: [now] };
    const c = this.sidecarFor(fragments, lastLsn, [[now, rows, 0]], past, p.columns, { log: [], files: [], flushed: 0 }, record);
    return {
      sidecar: c.sidecar,
      obsolete: c.obsolete,
      apply: () => {
        this.changing();
        this.nextLsn = Math.max(this.nextLsn, lastLsn + 1);
        this.columns = p.columns;
        this.adoptSidecar(c);
        this.segments = fragments.map((f) => this.fileSegment(f));
        this.unflushedFrom = this.segments.length;
        this.rows = rows;
        this.deletes = [];
        this.deleteRuns = [];
        this.deleteFiles = [];
        this.deleted = NONE_DELETED;
        this.record = record;
        this.generation++;
        this.version++;
        this.modifiedMs = Date.now();
      },
    };
  }

  /** Marks this table's sidecar as written by the catalog record `seq` (a multi-table commit; see Sidecar.seq). */
  withSeq(plan: CommitPlan, seq: number): string {
    const sidecar = { ...plan.sidecar, seq };
    const apply = plan.apply;
    plan.apply = () => {
      apply();
      this.sidecar = sidecar;
    };
    return JSON.stringify(sidecar);
  }

  /** The sidecar's path from the data dir's root `root`. */
  sidecarPathFrom(root: string): string {
    return path.relative(root, this.sidecarFile);
  }

  /** New schema keeping rows: columns matched by name, new ones NULL. Fragment files are read by name, so only rows in memory change. */
  async alter(columns: readonly Column[]): Promise<void> {
    await this.load();
    await this.exclusively(async () => {
      const byName = new Map(this.columns.map((c, i) => [c.name.toLowerCase(), i]));
      this.changing();
      this.generation++;
      this.segments = this.segments.map((s) =>
        s.kind === 'file'
          ? s
          : {
              kind: 'mem',
              batch: {
                length: s.batch.length,
                columns: columns.map((c) => {
                  const i = byName.get(c.name.toLowerCase());
                  return i === undefined ? nullVector(c.type, s.batch.length) : { ...s.batch.columns[i]!, type: c.type };
                }),
              },
            },
      );
      this.columns = columns;
      this.version++;
      await this.commitSidecar(this.sidecar.fragments, this.sidecar.flushedLsn);
    });
  }

  /** Runs `fn` with no append, fold or other change of all rows under way. */
  private exclusively<T>(fn: () => Promise<T>): Promise<T> {
    return this.upkeep.runExclusive(() => this.gate.runExclusive(fn));
  }

  /** Folds everything into fragments (clean shutdown). */
  async flush(): Promise<void> {
    if (this.isLoaded) await this.compact();
  }

  async close(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.loading) await this.loading.catch(() => undefined);
    await this.exclusively(async () => {
      this.closed = true;
      // Rows still only in the log are made now: a query may still hold them
      // (a dropped table). One that cannot be read says so when it is read.
      for (let i = this.unflushedFrom; i < this.segments.length; i++) {
        try {
          const s = this.segments[i]!;
          if (s.kind === 'mem') void s.batch.columns;
        } catch {
          // reported to its reader
        }
      }
      const wal = this.wal;
      this.wal = null;
      if (wal) await wal.close();
    });
  }
}

function isRows(content: Batch | string | Uint8Array): content is string | Uint8Array {
  return typeof content === 'string' || content instanceof Uint8Array;
}

/**
 * A batch of `n` rows made by `make` from `len` bytes at `at` of the log,
 * read back when first read (see appendRequestRows). A function of its own: the
 * closure must hold no request data (closures share their scope's context).
 */
function heldInLog(wal: WalWriter, at: number, len: number, n: number, make: (rows: Buffer) => Batch): Batch {
  return new DeferredBatch(n, () => make(wal.read(at, len)));
}


/**
 * `r` after a row-level change that appended after `rows` rows and logged
 * after `logLength` entries: its first `updated` rows an update's, and
 * `forUpdate` (ranges of its own deletions) an update's old rows.
 */
function recordChange(r: ChangeRecord, rows: number, logLength: number, updated: number, forUpdate: readonly number[] | undefined): ChangeRecord {
  let out = withRange(r, 'updated', rows, rows + updated);
  if (forUpdate) for (let i = 0; i < forUpdate.length; i += 2) out = withRange(out, 'forUpdate', logLength + forUpdate[i]!, logLength + forUpdate[i + 1]!);
  return out;
}

/**
 * Ranges (flat [start, end) pairs) of the sorted `positions` that are an
 * update's old rows: the first `k` of `deleted` (as a statement gave them).
 * Undefined when none are.
 */
function forUpdateRanges(positions: Uint32Array, deleted: readonly number[], k: number): number[] | undefined {
  if (k <= 0) return undefined;
  if (k >= deleted.length) return [0, positions.length];
  const mine = new Set(deleted.slice(0, k));
  const out: number[] = [];
  for (let i = 0; i < positions.length; i++) {
    if (!mine.has(positions[i]!)) continue;
    if (out.length > 0 && out[out.length - 1] === i) out[out.length - 1] = i + 1;
    else out.push(i, i + 1);
  }
  return out.length > 0 ? out : undefined;
}
