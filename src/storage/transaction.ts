// Transactions: what a statement or a BEGIN ... COMMIT reads and writes.
//
// - Reads: one snapshot (clock.ts) for the whole transaction: every table is
//   read as it was when the transaction began (TableData.stateAt), plus what
//   the transaction itself changed.
// - Mutations (UPDATE, DELETE, MERGE, TRUNCATE, a replace of all rows) of
//   one table are serialized, as the warehouse queues mutating DML: a lock
//   per table, taken before the statement reads its target. A statement
//   outside a transaction waits for it; a transaction that finds the lock
//   held by another transaction, or its table mutated since its snapshot, is
//   aborted ("Transaction is aborted due to concurrent update against table
//   ..."), as the service cancels conflicting transactions.
// - Appends (insertAll, Storage Write, INSERT, loads with WRITE_APPEND) take
//   no lock: they commit on their own, and a mutation keeps every row
//   appended after the state it read (TableData.replace with a base).
// - Writes of a statement outside a transaction commit at once; those of an
//   explicit transaction are staged in memory and committed together by
//   COMMIT (Storage.commitRows: one catalog record for several tables), or
//   dropped by ROLLBACK.
import { QueryError } from '../types/errors.js';
import type { Column } from '../types/schema.js';
import { takeVector, type Batch } from '../types/vector.js';
import type { EntryChange, Storage } from './store.js';
import { ROW_POSITION, type RowChange, type ScanFilter } from './api.js';
import { withoutExpired } from './partition-expiration.js';
import { TableConflictError, type PreparedRows, type TableState } from './table-data.js';
import { collectBatches, liveRows, memParts, scanBatches, partsLogicalBytes, scanState, stateLogicalBytes, stateParts, type ScanPart } from './table-state.js';

export interface TableKey {
  readonly p: string;
  readonly d: string;
  readonly t: string;
}

const keyOf = (k: TableKey): string => `${k.p}\u0000${k.d}\u0000${k.t}`;

/** Who holds a table's mutation lock: a statement outside a transaction, or an explicit transaction (its id). */
type Holder = { readonly kind: 'statement' } | { readonly kind: 'transaction'; readonly id: string };

interface Waiter {
  readonly holder: Holder;
  readonly grant: () => void;
  readonly abort: (e: Error) => void;
}

/** The service's refusal of permanent DDL inside a transaction (its typo included). */
export const DDL_IN_TRANSACTION = 'DDL statements are not supported in a transaction, except for those creating or droping temporary tables or temporary functions.';

const MAX_TRANSACTION_TABLES = 100;

export function concurrentUpdate(k: TableKey, txnId: string, blocking?: string): Error {
  return new QueryError(`Transaction is aborted due to concurrent update against table ${k.p}:${k.d}.${k.t}. Transaction ID: ${txnId}${blocking ? `. Blocking job: ${blocking}` : ''}`, 'invalidQuery', 400);
}

/** Per-table mutation locks, first come first served; a transaction never waits for another one (see header). */
export class MutationLocks {
  private readonly locks = new Map<string, { holder: Holder; queue: Waiter[] }>();

  /** Waits for the lock of `k`; resolves with its release. A transaction meeting another transaction is refused at once. */
  acquire(k: TableKey, holder: Holder): Promise<() => void> {
    const key = keyOf(k);
    const lock = this.locks.get(key);
    const release = (): void => this.release(key);
    if (!lock) {
      this.locks.set(key, { holder, queue: [] });
      return Promise.resolve(release);
    }
    if (holder.kind === 'transaction' && (lock.holder.kind === 'transaction' || lock.queue.some((w) => w.holder.kind === 'transaction'))) {
      const other = lock.holder.kind === 'transaction' ? lock.holder.id : undefined;
      return Promise.reject(concurrentUpdate(k, holder.id, other));
    }
    return new Promise((resolve, reject) => lock.queue.push({ holder, grant: () => resolve(release), abort: reject }));
  }

  /** The lock of `k` if no one holds it (its release), else null: for work that must never wait on a statement. */
  tryAcquire(k: TableKey, holder: Holder): (() => void) | null {
    const key = keyOf(k);
    if (this.locks.has(key)) return null;
    this.locks.set(key, { holder, queue: [] });
    return () => this.release(key);
  }

  private release(key: string): void {
    const lock = this.locks.get(key);
    if (!lock) return;
    const next = lock.queue.shift();
    if (!next) {
      this.locks.delete(key);
      return;
    }
    lock.holder = next.holder;
    next.grant();
  }
}

/** What an explicit transaction changed in one table. */
interface Staged {
  readonly key: TableKey;
  /** The state its changes start from: the transaction's read of the table when it first wrote it. */
  readonly base: TableState;
  /** Rows replacing base's (null: base's rows stay). */
  rows: Batch[] | null;
  /**
   * Where each of `rows` comes from while they are base's rows less some,
   * plus added ones (row-level changes only): its position in base, or
   * INSERTED, UPDATED (an update's new row). Null: `rows` replace base's
   * (a TRUNCATE, LOAD DATA OVERWRITE). COMMIT then commits a row-level
   * change, which change history (APPENDS, CHANGES) reads as such.
   */
  from: number[] | null;
  /** Positions of base's rows deleted (`from` non-null), and those of them that were an update's old rows. */
  deleted: number[];
  forUpdate: Set<number>;
  columns?: readonly Column[];
  /** Rows added after those. */
  appended: Batch[];
}

const INSERTED = -1;
const UPDATED = -2;

let txnCounter = 0;

const count = (bs: readonly Batch[]): number => bs.reduce((n, b) => n + b.length, 0);

export class Transaction {
  /** The clock's snapshot every read of this transaction sees. */
  readonly snapshot: number;
  readonly id: string;
  private readonly pins = new Map<string, TableState>();
  private readonly locks = new Map<string, () => void>();
  private readonly staged = new Map<string, Staged>();
  private ended = false;

  /** When the snapshot was taken (epoch ms). */
  private readonly snapshotMs = Date.now();

  constructor(
    private readonly st: Storage,
    /** BEGIN TRANSACTION ... COMMIT (staged writes); otherwise a single statement's (writes commit at once). */
    readonly explicit: boolean,
    /**
     * No sweep of expired partitions ran before it (a dry run, which writes nothing): its reads leave out the
     * partitions expired at its snapshot themselves (partition-expiration.ts, withoutExpired).
     */
    private readonly unswept = false,
  ) {
    this.snapshot = st.clock.acquire();
    this.id = `${Date.now().toString(36)}_${(++txnCounter).toString(36)}`;
  }

  /**
   * The rows this transaction sees, columns `cols` (indexes into the
   * table's columns, or ROW_POSITION): its snapshot of the table (row groups
   * `filters` rule out skipped), with its own changes. Positions: the
   * state's, then its staged rows' past them.
   */
  async *scan(k: TableKey, cols: readonly number[], filters?: readonly ScanFilter[]): AsyncGenerator<Batch> {
    const s = this.staged.get(keyOf(k));
    const state = s ? s.base : await this.state(k);
    if (s?.rows) yield* scanBatches(s.rows, cols);
    else yield* scanState(state, cols, filters);
    yield* scanBatches(s?.appended ?? [], cols, s?.rows ? count(s.rows) : state.rows);
  }

  /** What `scan` reads, as parts (QueryCatalog.scanParts): staged and appended rows as memory parts. */
  async scanParts(k: TableKey, filters?: readonly ScanFilter[]): Promise<{ columns: readonly Column[]; parts: ScanPart[] }> {
    const s = this.staged.get(keyOf(k));
    const state = s ? s.base : await this.state(k);
    const parts = s?.rows ? memParts(s.rows) : await stateParts(state, filters);
    return { columns: state.columns, parts: [...parts, ...memParts(s?.appended ?? [], s?.rows ? count(s.rows) : state.rows)] };
  }

  /** partsLogicalBytes over what scanParts lists (without listing the committed state's row groups where its index tells). */
  async scanLogicalBytes(k: TableKey, cols: readonly number[], filters?: readonly ScanFilter[]): Promise<{ rows: number; bytes: number[] }> {
    const s = this.staged.get(keyOf(k));
    if (s) {
      const { columns, parts } = await this.scanParts(k, filters);
      return partsLogicalBytes(parts, columns, cols);
    }
    return stateLogicalBytes(await this.state(k), cols, filters);
  }

  /** How many rows `scan` gives, without reading them (undefined: the table was not read yet). */
  rowCount(k: TableKey): number | undefined {
    const s = this.staged.get(keyOf(k));
    if (s) return (s.rows ? count(s.rows) : liveRows(s.base)) + count(s.appended);
    const pinned = this.pins.get(keyOf(k));
    return pinned && liveRows(pinned);
  }

  /** The committed state this transaction reads (pinned on first read). */
  private async state(k: TableKey): Promise<TableState> {
    const key = keyOf(k);
    const pinned = this.pins.get(key);
    if (pinned) return pinned;
    const td = this.st.tableData(k.p, k.d, k.t);
    await td.load();
    let s = td.stateAt(this.snapshot);
    if (this.unswept) {
      const e = this.st.getTable(k.p, k.d, k.t);
      if (e) s = await withoutExpired(e.kind, e.resource, s, this.snapshotMs);
    }
    const again = this.pins.get(key);
    if (again) return again;
    this.pins.set(key, s);
    return s;
  }

  /**
   * Takes the table's mutation lock before a mutating statement reads it.
   * Outside a transaction the statement then reads the table as it is now
   * (every change committed before included); in one, a table mutated
   * since the snapshot is a conflict.
   */
  async lockForMutation(k: TableKey): Promise<void> {
    const key = keyOf(k);
    if (this.locks.has(key)) return;
    const release = await this.st.mutations.acquire(k, this.explicit ? { kind: 'transaction', id: this.id } : { kind: 'statement' });
    this.locks.set(key, release);
    const td = this.st.tableData(k.p, k.d, k.t);
    await td.load();
    if (!this.explicit) {
      this.pins.set(key, td.state());
      return;
    }
    const read = await this.state(k);
    if (read.generation !== td.state().generation) throw concurrentUpdate(k, this.id);
  }

  /** Adds rows at the end of a table (a stream only outside an explicit transaction: staged rows are held). */
  async append(k: TableKey, batches: readonly Batch[] | AsyncIterable<Batch>, appendNow: () => Promise<void>): Promise<void> {
    if (!this.explicit) return appendNow();
    const s = await this.stage(k);
    s.appended.push(...(await collectBatches(batches)));
  }

  /**
   * Replaces the rows this transaction read (lockForMutation first): rows
   * appended by others since are kept. `replaceNow` commits it at once
   * (outside a transaction) from the base state it is given.
   */
  async replace(k: TableKey, batches: readonly Batch[], columns: readonly Column[] | undefined, replaceNow: (base: TableState) => Promise<void>): Promise<void> {
    if (await this.mutatedNow(k, replaceNow)) return;
    const s = await this.stage(k);
    s.rows = [...batches];
    s.from = null;
    s.appended = [];
    if (columns) s.columns = columns;
  }

  /**
   * Deletes and adds rows of a table this transaction locked
   * (lockForMutation), positions from its own scan. `changeNow` commits it
   * at once (outside a transaction) against the state the positions are in.
   * `guard` (explicit transactions) sees the positions of the transaction's
   * base state the change takes away before anything is staged, and may
   * refuse the statement by throwing.
   */
  async change(k: TableKey, change: RowChange, changeNow: (base: TableState) => Promise<void>, guard?: (base: TableState, origins: readonly number[]) => void): Promise<void> {
    if (await this.mutatedNow(k, changeNow)) return;
    // Staged: the rows it sees now, less the deleted ones, then the added ones (and where each came from).
    const s = await this.stage(k);
    const gone = new Set(change.deleted);
    const oldOfUpdate = new Set(change.deleted.slice(0, change.updatedDeletes ?? 0));
    const cols = (s.columns ?? s.base.columns).map((_, i) => i);
    // A position of `scan` to where its row came from (null: untracked, rows replaced).
    const staged = s.rows ? count(s.rows) : s.base.rows;
    const fromOf = (p: number): number | null => (p >= staged ? INSERTED : s.rows === null ? p : s.from ? s.from[p]! : null);
    const tracked = s.rows === null || s.from !== null;
    const kept: Batch[] = [];
    const from: number[] = [];
    // Base positions this change deletes (and which of them for an update), staged once the guard has seen them.
    const goneOrigins: number[] = [];
    const goneForUpdate: number[] = [];
    for await (const b of this.scan(k, [...cols, ROW_POSITION])) {
      const pos = b.columns[cols.length]!.data as Float64Array;
      const keep: number[] = [];
      for (let i = 0; i < b.length; i++) {
        const origin = tracked ? fromOf(pos[i]!) : null;
        if (!gone.has(pos[i]!)) {
          keep.push(i);
          if (origin !== null) from.push(origin);
        } else if (origin !== null && origin >= 0) {
          goneOrigins.push(origin);
          if (oldOfUpdate.has(pos[i]!)) goneForUpdate.push(origin);
        }
      }
      kept.push({ length: keep.length, columns: b.columns.slice(0, cols.length).map((v) => takeVector(v, keep)) });
    }
    guard?.(s.base, goneOrigins);
    s.deleted.push(...goneOrigins);
    for (const o of goneForUpdate) s.forUpdate.add(o);
    const updated = Math.min(change.updated ?? 0, count(change.added));
    s.rows = [...kept, ...change.added];
    s.from = tracked ? [...from, ...new Array<number>(updated).fill(UPDATED), ...new Array<number>(count(change.added) - updated).fill(INSERTED)] : null;
    s.appended = [];
  }

  /**
   * Takes the table's mutation lock; outside an explicit transaction, runs
   * `now` against the state read under it (a conflict becomes the service's
   * error) and says it did; inside one, the caller stages the change.
   */
  private async mutatedNow(k: TableKey, now: (base: TableState) => Promise<void>): Promise<boolean> {
    if (!this.locks.has(keyOf(k))) await this.lockForMutation(k);
    if (this.explicit) return false;
    try {
      await now(this.pins.get(keyOf(k))!);
    } catch (e) {
      if (e instanceof TableConflictError) throw concurrentUpdate(k, this.id);
      throw e;
    }
    return true;
  }

  private async stage(k: TableKey): Promise<Staged> {
    const key = keyOf(k);
    let s = this.staged.get(key);
    if (!s) {
      // transactions.md, Limitations: a transaction can mutate data in at most 100 tables.
      if (this.staged.size >= MAX_TRANSACTION_TABLES) {
        throw new QueryError(`A transaction can mutate data in at most ${MAX_TRANSACTION_TABLES} tables; ${k.p}:${k.d}.${k.t} would be one more`, 'invalidQuery', 400);
      }
      s = { key: k, base: await this.state(k), rows: null, from: null, deleted: [], forUpdate: new Set(), appended: [] };
      this.staged.set(key, s);
    }
    return s;
  }

  /** Whether this transaction changed anything. */
  get hasChanges(): boolean {
    return this.staged.size > 0;
  }

  /**
   * Commits the staged changes of every table as one, then ends the transaction; with `entry`, that change of a
   * table's catalog entry in the same record (Storage.commitRowsAndEntry), staged rows or not.
   */
  async commit(entry?: EntryChange): Promise<void> {
    try {
      const prepared: PreparedRows[] = [];
      for (const s of this.staged.values()) {
        const td = this.st.tableData(s.key.p, s.key.d, s.key.t);
        // Marked as a transaction's (CHANGES refuses a window holding one).
        if (s.rows && s.from) {
          const change = stagedChange(s.rows, s.from, s.deleted, s.forUpdate);
          if (change.deleted.length > 0 || change.added.length > 0 || s.appended.length > 0) {
            prepared.push({ ...(await td.prepareChange(s.base, change.deleted, [...change.added, ...s.appended], change)), txn: true });
          }
        } else if (s.rows) prepared.push({ ...(await td.prepare(s.base, [...s.rows, ...s.appended], s.columns)), txn: true });
        else if (s.appended.length > 0) prepared.push({ ...(await td.prepare(null, s.appended)), txn: true });
      }
      if (prepared.length === 0 && !entry) return;
      try {
        await this.st.commitRowsAndEntry(prepared, entry);
      } catch (e) {
        // Refused: the files written for the commit are no one's.
        await Promise.all(prepared.map((p) => p.td.discard(p)));
        if (e instanceof TableConflictError) {
          const s = [...this.staged.values()].find((x) => x.rows) ?? [...this.staged.values()][0]!;
          throw concurrentUpdate(s.key, this.id);
        }
        throw e;
      }
    } finally {
      this.end();
    }
  }

  /** Drops the staged changes and ends the transaction. */
  rollback(): void {
    this.end();
  }

  /** Releases the snapshot and the locks (idempotent). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.staged.clear();
    this.pins.clear();
    for (const release of this.locks.values()) release();
    this.locks.clear();
    this.st.clock.release(this.snapshot);
  }
}

/**
 * A transaction's row-level changes of one table as one change of its base:
 * the base rows it deleted (the updates' old rows first) and the rows it
 * added, its updates' new rows first (RowChange's order). A row the
 * transaction inserted and then deleted is none; one it inserted and then
 * updated is an update's new row, so APPENDS leaves it out, as the page
 * allows (time-series-functions.md, APPENDS, Limitations).
 */
function stagedChange(rows: readonly Batch[], from: readonly number[], deleted: readonly number[], forUpdate: ReadonlySet<number>): RowChange & { updated: number; updatedDeletes: number } {
  const pick = (kind: number): Batch[] => {
    const out: Batch[] = [];
    let off = 0;
    for (const b of rows) {
      const idx: number[] = [];
      for (let i = 0; i < b.length; i++) if (from[off + i] === kind) idx.push(i);
      if (idx.length > 0) out.push(idx.length === b.length ? b : { length: idx.length, columns: b.columns.map((v) => takeVector(v, idx)) });
      off += b.length;
    }
    return out;
  };
  const updated = pick(UPDATED);
  const olds = deleted.filter((p) => forUpdate.has(p));
  return {
    deleted: [...olds, ...deleted.filter((p) => !forUpdate.has(p))],
    added: [...updated, ...pick(INSERTED)],
    updated: count(updated),
    updatedDeletes: olds.length,
  };
}
