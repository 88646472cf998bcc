// The persistent catalog and the row storage of every table under one data
// dir. The catalog is catalog.store (a checkpoint) plus catalog.log (each
// committed change since, one record per commit; catalog-log.ts); REST
// semantics (what a field means, which error a call gets) live in
// src/engine/. See README.md "Catalog commits".
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Column } from '../types/schema.js';
import type { TableKind } from './api.js';
import { CatalogLog, type CatalogOp, type CatalogRecord, type TableEntry } from './catalog-log.js';
import { DeletedTableLog, type DeletedTable } from './deleted-tables.js';
import { alreadyExists, notFound } from './errors.js';
import { atomicWrite, durableRename, ensureDir, existsSync, fsyncDir, type UnsealedFiles } from './fsutil.js';
import { Gate, KeyedMutex } from './gate.js';
import { acquireDirLock, type DirLock } from './lock.js';
import { checkDatasetId, checkProjectId, checkTableId, fileStem } from './names.js';
import { columnsOf, schemaFieldsOf, type Resource } from './resources.js';
import { ingestionUnit, PARTITION_TIME_COLUMN, storedColumns } from './ingestion.js';
import { StagedRows } from './fragment-writes.js';
import { TableClosedError, TableConflictError, TableData, type CommitPlan, type NewRows, type PreparedRows, type TableState } from './table-data.js';
import { CommitClock } from './clock.js';
import { MutationLocks } from './transaction.js';
import { Graveyard } from './graveyard.js';
import { chunkCache } from './chunk-cache.js';
import { expiredPositions, expiredRows, partitionExpirationMs } from './partition-expiration.js';
import type { WalSyncMode } from './wal.js';

export type { CatalogOp, TableEntry } from './catalog-log.js';

/** A JSON file written with a commit (Storage.commitRows): `text(seq)` must hold `"seq": seq` at its top level. */
export interface CommitFile {
  /** Absolute path, under the data dir. */
  readonly file: string;
  readonly text: (seq: number) => string;
}

/** A change of one table's catalog entry committed with rows (Storage.commitRowsAndEntry). */
export interface EntryChange {
  readonly p: string;
  readonly d: string;
  readonly t: string;
  readonly change: (e: TableEntry) => TableEntry;
}

export const UNDELETE_WINDOW_MS = 7 * 24 * 3600 * 1000;

/**
 * A table past its expirationTime is deleted, with its data, and can be restored as a dropped one
 * (managing-tables.md, Update a table's expiration time). No lookup finds it from that instant; the catalog
 * drops it (a dropped table's snapshot, for UNDROP / time travel) at the next change to its name.
 */
export function tableExpired(e: TableEntry, nowMs = Date.now()): boolean {
  const x = e.resource.expirationTime;
  if (x === undefined || x === null) return false;
  const ms = Number(x);
  return ms > 0 && ms <= nowMs;
}

export interface DatasetEntry {
  readonly projectId: string;
  readonly datasetId: string;
  resource: Resource;
  readonly tables: Record<string, TableEntry>;
  readonly routines: Record<string, Resource>;
  readonly models: Record<string, Resource>;
  /** Property graphs (CREATE PROPERTY GRAPH); absent in catalogs written before graphs were kept. */
  propertyGraphs?: Record<string, Resource>;
}

export interface Tombstone {
  readonly projectId: string;
  readonly datasetId: string;
  readonly deletedMs: number;
  readonly entry: DatasetEntry;
  /** Relative to the data dir. */
  readonly trashDir: string;
}

export interface CatalogFile {
  format: 'warehouse-emulator-catalog';
  version: 1;
  /** The last catalog.log record this checkpoint holds (absent: none; older catalogs). */
  seq?: number;
  datasets: DatasetEntry[];
  tombstones: Tombstone[];
  /** Catalogs written before deleted-tables.log kept the snapshots here; moved out on load. */
  deletedTables?: DeletedTable[];
}

export interface StorageOptions {
  readonly defaultLocation?: string;
  /** Skip the data-dir lock (tests that open one dir twice on purpose). */
  readonly noLock?: boolean;
  /** Acknowledge row appends only after their WAL fdatasync (survives power loss), not after the write (survives kill -9). */
  readonly syncWrites?: boolean;
}

/** A checkpoint is written once the log holds this many bytes, and at least as many as the last checkpoint had: amortized O(change) per commit. */
const CHECKPOINT_MIN_BYTES = Number(process.env.WAREHOUSE_CATALOG_CHECKPOINT_BYTES) || 1024 * 1024;

const dsKey = (p: string, d: string): string => `${p}\u0000${d}`;
const tKey = (p: string, d: string, t: string): string => `${p}\u0000${d}\u0000${t}`;

/** A new incarnation's file stem: the name's stem, `+` (never in a name's stem), a unique id. */
function newStorageStem(t: string): string {
  return `${fileStem(t)}+${Date.now().toString(36)}${randomBytes(4).toString('hex')}`;
}

/** The file stem a table's row storage uses. */
export function storageStem(t: string, e: TableEntry): string {
  return e.storage ?? fileStem(t);
}

/** The stem of a table file's name (`<stem>.meta.json`, `<stem>.wal`, `<stem>.cdc.json`, `<stem>@…parquet`, temp files), or null. */
function stemOfFile(name: string): string | null {
  const m = /^([^.@]+)(?:\.meta\.json|\.wal|\.cdc\.json|@)/.exec(name);
  return m ? m[1]! : null;
}

export class Storage {
  private datasets = new Map<string, DatasetEntry>();
  private tombstones: Tombstone[] = [];
  private readonly deletedTables: DeletedTableLog;
  /** New tables' files that their catalog records carry, not yet synced (sealNew). */
  private readonly owedSyncs = new Set<UnsealedFiles>();
  private readonly log: CatalogLog;
  /** The last record logged and applied. */
  private seq = 0;
  /** Size of the last checkpoint (see CHECKPOINT_MIN_BYTES). */
  private checkpointBytes = 0;
  /** Commits run shared; a checkpoint exclusive (it captures the catalog with no commit half done). */
  private readonly commits = new Gate();
  private checkpointing: Promise<void> | null = null;
  /** Validate-log-apply of one name (a dataset, a table) at a time. */
  private readonly names = new KeyedMutex();
  private data = new Map<string, TableData>();
  private trashData = new Map<string, TableData>();
  private columnCache = new WeakMap<TableEntry, Column[]>();
  private storedCache = new WeakMap<TableEntry, Column[]>();
  /** Deletes whose files are still moving; an undelete of the same dataset waits for them. */
  private moving = new Map<string, Promise<void>>();
  /** The order of commits, for snapshots (clock.ts). */
  readonly clock = new CommitClock();
  /** Mutating statements and transactions, one at a time per table (transaction.ts). */
  readonly mutations = new MutationLocks();
  /** File removals and moves that wait for readers (graveyard.ts). */
  private readonly graveyard = new Graveyard(this.clock);

  private constructor(
    readonly dataDir: string,
    readonly defaultLocation: string,
    private readonly lock: DirLock | null,
    readonly walSync: WalSyncMode,
  ) {
    this.deletedTables = new DeletedTableLog(path.join(dataDir, 'deleted-tables.log'));
    this.log = new CatalogLog(path.join(dataDir, 'catalog.log'), walSync);
  }

  static async open(dataDir: string, opts: StorageOptions = {}): Promise<Storage> {
    const dir = path.resolve(dataDir);
    await ensureDir(dir);
    const lock = opts.noLock ? null : acquireDirLock(dir);
    try {
      const s = new Storage(dir, opts.defaultLocation || 'US', lock, opts.syncWrites ? 'always' : 'background');
      await s.loadCatalog();
      return s;
    } catch (e) {
      lock?.release();
      throw e;
    }
  }

  get catalogFile(): string {
    return path.join(this.dataDir, 'catalog.store');
  }

  private async loadCatalog(): Promise<void> {
    let file: CatalogFile | null = null;
    let text = '';
    try {
      text = await fsp.readFile(this.catalogFile, 'utf8');
      file = JSON.parse(text) as CatalogFile;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read ${this.catalogFile}: ${(e as Error).message}`);
    }
    // Leftover temp files of an interrupted checkpoint.
    for (const n of fs.readdirSync(this.dataDir)) if (n.startsWith('catalog.store.') && n.endsWith('.tmp')) fs.rmSync(path.join(this.dataDir, n), { force: true });
    const logged = await this.deletedTables.open();
    const records = await this.log.open();
    if (file) {
      for (const d of file.datasets) this.datasets.set(dsKey(d.projectId, d.datasetId), d);
      this.tombstones = file.tombstones ?? [];
      this.seq = file.seq ?? 0;
      this.checkpointBytes = Buffer.byteLength(text);
    }
    const { redo, dropped, files } = this.replay(records);
    // Snapshots of a catalog from before the log join it (once: a crash between the log's rewrite and the catalog's checkpoint moved them already),
    // and those of records whose deleted-tables.log line a crash cut off.
    const inLog = new Set(logged.map((x) => x.trashDir));
    const moved = (file?.deletedTables ?? []).filter((x) => !inLog.has(x.trashDir));
    const missed = dropped.filter((x) => !inLog.has(x.trashDir));
    await this.reconcile([...logged, ...moved, ...missed], file?.deletedTables !== undefined || missed.length > 0);
    await this.redoFiles(files);
    await this.redoSidecars(redo);
    this.sweepOrphans();
    // A new data dir gets its catalog.store now (it marks the dir initialized); a long log is folded in the background.
    if (!file || file.deletedTables !== undefined) await this.checkpoint();
    else if (this.log.byteSize >= Math.max(CHECKPOINT_MIN_BYTES, this.checkpointBytes)) void this.checkpointSoon();
  }

  /** Applies the log's records newer than the checkpoint; returns the sidecar writes they hold (the last per file) and the snapshots of the tables they dropped. */
  private replay(records: readonly CatalogRecord[]): { redo: Map<string, { seq: number; text: string }>; dropped: DeletedTable[]; files: Map<string, string> } {
    const redo = new Map<string, { seq: number; text: string }>();
    const dropped: DeletedTable[] = [];
    const files = new Map<string, string>();
    for (const r of records) {
      if (r.seq <= this.seq) continue;
      for (const op of r.ops) {
        if (op.op === 'sidecar') redo.set(op.file, { seq: r.seq, text: op.text });
        else if (op.op === 'file') files.set(op.file, op.data);
        else if (op.op === 'deletedTable') dropped.push(op.snapshot);
        else this.apply(op);
      }
      this.seq = r.seq;
    }
    return { redo, dropped, files };
  }

  /** Writes the files records carry (sealNew) that a crash lost or cut short; a dead stem's are swept after. */
  private async redoFiles(files: Map<string, string>): Promise<void> {
    for (const [rel, data] of files) {
      const file = path.join(this.dataDir, rel);
      if (!existsSync(path.dirname(file))) continue;
      const want = Buffer.from(data, 'base64');
      let have: Buffer | null = null;
      try {
        have = fs.readFileSync(file);
      } catch {
        // missing: written below
      }
      if (!have || !have.equals(want)) await atomicWrite(file, want);
    }
  }

  /** Writes the sidecars of multi-table commits that a crash cut short (a sidecar older than its record). */
  private async redoSidecars(redo: Map<string, { seq: number; text: string }>): Promise<void> {
    for (const [rel, { seq, text }] of redo) {
      const file = path.join(this.dataDir, rel);
      if (!existsSync(path.dirname(file))) continue;
      let have = 0;
      try {
        have = (JSON.parse(fs.readFileSync(file, 'utf8')) as { seq?: number }).seq ?? 0;
      } catch {
        // missing or unreadable: written below
      }
      if (have < seq) await atomicWrite(file, text);
    }
  }

  /** One catalog change in memory: the same code for a live commit and a replayed record. */
  private apply(op: CatalogOp): void {
    this.expiryCandidates = null;
    switch (op.op) {
      case 'dataset': {
        const e = this.datasets.get(dsKey(op.p, op.d));
        if (e) e.resource = op.resource;
        else this.datasets.set(dsKey(op.p, op.d), { projectId: op.p, datasetId: op.d, resource: op.resource, tables: {}, routines: {}, models: {} });
        return;
      }
      case 'dropDataset': {
        const entry = this.datasets.get(dsKey(op.p, op.d));
        if (!entry) return;
        this.datasets.delete(dsKey(op.p, op.d));
        this.tombstones.push({ projectId: op.p, datasetId: op.d, deletedMs: op.deletedMs, entry, trashDir: op.trashDir });
        return;
      }
      case 'undropDataset': {
        const t = this.tombstones.find((x) => x.projectId === op.p && x.datasetId === op.d && x.deletedMs === op.deletedMs);
        if (!t) return;
        this.tombstones = this.tombstones.filter((x) => x !== t);
        this.datasets.set(dsKey(op.p, op.d), t.entry);
        return;
      }
      case 'purgeTombstones':
        this.tombstones = this.tombstones.filter((t) => t.deletedMs >= op.before);
        return;
      case 'table': {
        const ds = this.datasets.get(dsKey(op.p, op.d));
        if (!ds) return;
        if (op.entry) ds.tables[op.t] = op.entry;
        else delete ds.tables[op.t];
        return;
      }
      case 'child': {
        const ds = this.datasets.get(dsKey(op.p, op.d));
        if (!ds) return;
        const coll = op.kind === 'routines' ? ds.routines : op.kind === 'models' ? ds.models : (ds.propertyGraphs ??= {});
        if (op.resource) coll[op.id] = op.resource;
        else delete coll[op.id];
        return;
      }
      case 'sidecar':
      case 'deletedTable':
      case 'file':
        return;
    }
  }

  /**
   * Commits catalog changes: one log record, then the change in memory.
   * `inMemory` runs in the same synchronous step as the apply (state that
   * must change with the catalog, such as a table's row storage), `durable`
   * after it, still inside the commit (a checkpoint waits for it: the
   * sidecar writes of a multi-table commit).
   */
  async commit(ops: readonly CatalogOp[] | ((seq: number) => readonly CatalogOp[]), inMemory?: () => void, durable?: () => Promise<void>): Promise<void> {
    await this.commits.runShared(async () => {
      const seq = ++this.seq;
      const list = typeof ops === 'function' ? ops(seq) : ops;
      await this.log.append(seq, list);
      for (const op of list) this.apply(op);
      inMemory?.();
      await durable?.();
    });
    if (this.log.byteSize >= Math.max(CHECKPOINT_MIN_BYTES, this.checkpointBytes)) void this.checkpointSoon();
  }

  private checkpointSoon(): Promise<void> {
    this.checkpointing ??= this.checkpoint()
      .catch((e: unknown) => console.error('catalog checkpoint failed:', e))
      .finally(() => (this.checkpointing = null));
    return this.checkpointing;
  }

  /**
   * catalog.store := the catalog now (with the last record's seq), then the
   * log is emptied. A crash between the two replays records the checkpoint
   * already holds: their seq tells, and they are skipped. Snapshots of
   * dropped tables reach deleted-tables.log first (a checkpoint without a
   * table must not be durable before its snapshot).
   */
  private async checkpoint(): Promise<void> {
    await this.commits.runExclusive(async () => {
      await this.deletedTables.flush();
      await this.syncOwed();
      const text = JSON.stringify(this.catalogObject());
      await atomicWrite(this.catalogFile, text);
      this.checkpointBytes = Buffer.byteLength(text);
      await this.log.truncate();
    });
  }

  /** The catalog as catalog.store holds it (the file is exactly `JSON.stringify` of this). */
  catalogObject(): CatalogFile {
    return {
      format: 'warehouse-emulator-catalog',
      version: 1,
      seq: this.seq,
      datasets: [...this.datasets.values()],
      tombstones: this.tombstones,
    };
  }

  /**
   * Finishes moves that a crash interrupted, drops snapshots of drops that
   * never reached the catalog, and purges trash older than the undelete window.
   */
  private async reconcile(deleted: readonly DeletedTable[], catalogChanged: boolean): Promise<void> {
    const now = Date.now();
    for (const t of this.tombstones) {
      const trash = path.join(this.dataDir, t.trashDir);
      const live = this.datasetDir(t.projectId, t.datasetId);
      if (!existsSync(trash) && existsSync(live) && !this.datasets.has(dsKey(t.projectId, t.datasetId))) await durableRename(live, trash);
    }
    const keepD: DeletedTable[] = [];
    for (const t of deleted) {
      const trash = path.join(this.dataDir, t.trashDir);
      const ds = this.datasets.get(dsKey(t.projectId, t.datasetId));
      const live = ds?.tables[t.tableId];
      // The snapshot was logged, then the crash came before the catalog lost the table: it was never dropped.
      if (live && storageStem(t.tableId, live) === storageStem(t.tableId, t.entry) && live.resource.creationTime === t.entry.resource.creationTime) continue;
      if (ds && !existsSync(trash) && (!live || storageStem(t.tableId, live) !== storageStem(t.tableId, t.entry))) {
        await this.moveTableFiles(this.datasetDir(t.projectId, t.datasetId), storageStem(t.tableId, t.entry), trash);
      }
      if (now - t.deletedMs < UNDELETE_WINDOW_MS) keepD.push(t);
    }
    for (const t of [...this.tombstones, ...deleted]) {
      if (now - t.deletedMs >= UNDELETE_WINDOW_MS) await fsp.rm(path.join(this.dataDir, t.trashDir), { recursive: true, force: true });
    }
    if (keepD.length !== deleted.length || catalogChanged) await this.deletedTables.rewrite(keepD);
    if (this.tombstones.some((t) => now - t.deletedMs >= UNDELETE_WINDOW_MS)) await this.commit([{ op: 'purgeTombstones', before: now - UNDELETE_WINDOW_MS }]);
  }

  /**
   * Removes the files of incarnations no catalog entry names: a create or
   * replace that a crash stopped before its catalog record.
   */
  private sweepOrphans(): void {
    for (const ds of this.datasets.values()) {
      const dir = this.datasetDir(ds.projectId, ds.datasetId);
      let names: string[];
      try {
        names = fs.readdirSync(dir);
      } catch {
        continue;
      }
      const live = new Set(Object.entries(ds.tables).map(([t, e]) => storageStem(t, e)));
      for (const n of names) {
        const stem = stemOfFile(n);
        if (stem !== null && stem.includes('+') && !live.has(stem)) fs.rmSync(path.join(dir, n), { force: true });
      }
    }
  }

  projectDir(p: string): string {
    return path.join(this.dataDir, fileStem(p));
  }
  datasetDir(p: string, d: string): string {
    return path.join(this.projectDir(p), d);
  }

  // --- datasets --------------------------------------------------------------

  getDataset(p: string, d: string): DatasetEntry | undefined {
    return this.datasets.get(dsKey(p, d));
  }

  requireDataset(p: string, d: string): DatasetEntry {
    const e = this.getDataset(p, d);
    if (!e) throw notFound(`Dataset ${p}:${d}`);
    return e;
  }

  listDatasets(p: string): DatasetEntry[] {
    return [...this.datasets.values()].filter((d) => d.projectId === p).sort((a, b) => (a.datasetId < b.datasetId ? -1 : a.datasetId > b.datasetId ? 1 : 0));
  }

  allProjects(): string[] {
    return [...new Set([...this.datasets.values()].map((d) => d.projectId))].sort();
  }

  async createDataset(p: string, d: string, resource: Resource): Promise<DatasetEntry> {
    checkProjectId(p);
    checkDatasetId(d);
    return this.names.run(dsKey(p, d), async () => {
      await this.settled(dsKey(p, d));
      if (this.datasets.has(dsKey(p, d))) throw alreadyExists(`Dataset ${p}:${d}`);
      await this.commit([{ op: 'dataset', p, d, resource }]);
      return this.requireDataset(p, d);
    });
  }

  async setDatasetResource(entry: DatasetEntry, resource: Resource): Promise<void> {
    await this.commit([{ op: 'dataset', p: entry.projectId, d: entry.datasetId, resource }]);
  }

  isDatasetEmpty(e: DatasetEntry): boolean {
    return this.liveTableIds(e).length === 0 && Object.keys(e.routines).length === 0 && Object.keys(e.models).length === 0 && Object.keys(e.propertyGraphs ?? {}).length === 0;
  }

  /** Moves the dataset (with its tables, rows and children) to a tombstone. */
  async deleteDataset(p: string, d: string): Promise<void> {
    await this.names.run(dsKey(p, d), async () => {
      const entry = this.requireDataset(p, d);
      const deletedMs = Date.now();
      const trashDir = path.join('.trash', fileStem(p), `${d}@${deletedMs}`);
      await this.commit([{ op: 'dropDataset', p, d, deletedMs, trashDir }]);
      await this.track(dsKey(p, d), async () => {
        for (const t of Object.keys(entry.tables)) await this.closeData(p, d, t);
        const live = this.datasetDir(p, d);
        if (existsSync(live)) await durableRename(live, path.join(this.dataDir, trashDir));
      });
    });
  }

  private async track(key: string, fn: () => Promise<void>): Promise<void> {
    const p = fn();
    const entry = p.catch(() => undefined);
    this.moving.set(key, entry);
    try {
      await p;
    } finally {
      if (this.moving.get(key) === entry) this.moving.delete(key);
    }
  }

  private async settled(...keys: string[]): Promise<void> {
    for (const k of keys) {
      const p = this.moving.get(k);
      if (p) await p;
    }
  }

  hasTombstone(p: string, d: string): boolean {
    return this.tombstones.some((t) => t.projectId === p && t.datasetId === d && Date.now() - t.deletedMs < UNDELETE_WINDOW_MS);
  }

  /** Restores the newest tombstone of p:d within the window; undefined when none. */
  async undeleteDataset(p: string, d: string): Promise<DatasetEntry | undefined> {
    return this.names.run(dsKey(p, d), async () => {
      await this.settled(dsKey(p, d));
      if (this.datasets.has(dsKey(p, d))) throw alreadyExists(`Dataset ${p}:${d}`);
      let best: Tombstone | undefined;
      for (const t of this.tombstones) {
        if (t.projectId === p && t.datasetId === d && Date.now() - t.deletedMs < UNDELETE_WINDOW_MS && (!best || t.deletedMs > best.deletedMs)) best = t;
      }
      if (!best) return undefined;
      // The files move back first: a crash before the record leaves the tombstone, whose files reconcile moves back again.
      const trash = path.join(this.dataDir, best.trashDir);
      const live = this.datasetDir(p, d);
      if (existsSync(live)) await fsp.rm(live, { recursive: true, force: true });
      if (existsSync(trash)) await durableRename(trash, live);
      await this.commit([{ op: 'undropDataset', p, d, deletedMs: best.deletedMs }]);
      return best.entry;
    });
  }

  // --- tables ----------------------------------------------------------------

  getTable(p: string, d: string, t: string): TableEntry | undefined {
    const e = this.storedTable(p, d, t);
    return e && !tableExpired(e) ? e : undefined;
  }

  requireTable(p: string, d: string, t: string): TableEntry {
    const ds = this.requireDataset(p, d);
    const e = ds.tables[t];
    if (!e || tableExpired(e)) throw notFound(`Table ${p}:${d}.${t}`);
    return e;
  }

  /** The tables of a dataset that have not expired, by id. */
  liveTableIds(ds: DatasetEntry): string[] {
    const now = Date.now();
    return Object.keys(ds.tables).filter((t) => !tableExpired(ds.tables[t]!, now));
  }

  /** The catalog's entry for a name, expired or not (storage bookkeeping only). */
  private storedTable(p: string, d: string, t: string): TableEntry | undefined {
    return this.datasets.get(dsKey(p, d))?.tables[t];
  }

  /** Drops an expired table still in the catalog (the caller holds its name), as DROP TABLE would. */
  private async dropIfExpired(p: string, d: string, t: string): Promise<void> {
    const e = this.storedTable(p, d, t);
    // Deleted when it expired (restore-deleted-tables.md: restorable within the time-travel window from then).
    if (e && tableExpired(e)) await this.unlinkTable(p, d, t, e, null, Number(e.resource.expirationTime));
  }

  columnsOf(e: TableEntry): Column[] {
    let c = this.columnCache.get(e);
    if (!c) {
      c = columnsOf(schemaFieldsOf(e.resource));
      this.columnCache.set(e, c);
    }
    return c;
  }

  /**
   * The columns a table's rows are stored in: its schema's, then, for an
   * ingestion-time partitioned table, the hidden partition time (ingestion.ts).
   */
  storedColumnsOf(e: TableEntry): Column[] {
    let c = this.storedCache.get(e);
    if (!c) {
      c = storedColumns(e.kind, e.resource, this.columnsOf(e));
      this.storedCache.set(e, c);
    }
    return c;
  }

  hasRows(kind: TableKind): boolean {
    return kind !== 'VIEW';
  }

  /**
   * A new table's entry and row storage, not yet in the catalog: rows can
   * be written to it (bulk appends go straight to fragments) before
   * `publishTable` makes it the table of its name in one commit.
   */
  prepareTable(p: string, d: string, t: string, kind: TableKind, resource: Resource): { entry: TableEntry; data: TableData | null } {
    checkTableId(t);
    this.requireDataset(p, d);
    const entry: TableEntry = this.hasRows(kind) ? { resource, kind, policies: {}, storage: newStorageStem(t) } : { resource, kind, policies: {} };
    const data = this.hasRows(kind) ? this.newTableData(this.datasetDir(p, d), entry.storage!, this.storedColumnsOf(entry)) : null;
    if (data) {
      data.layoutBy = layoutColumns(resource);
      data.changeHistory = changeHistoryEnabled(resource);
      data.markNew();
    }
    return { entry, data };
  }

  /**
   * Makes a prepared table the table of its name: created, or replacing the
   * existing one (`replace`), atomically: readers see the old table or the
   * new one, never neither, and a crash leaves one of them (the replaced
   * one is kept as a dropped table's snapshot, as deleteTable keeps it).
   */
  async publishTable(p: string, d: string, t: string, prepared: { entry: TableEntry; data: TableData | null }, replace: boolean): Promise<TableEntry> {
    return this.names.run(tKey(p, d, t), async () => {
      const ds = this.requireDataset(p, d);
      await this.dropIfExpired(p, d, t);
      const old = ds.tables[t];
      if (old && !replace) throw alreadyExists(`Table ${p}:${d}.${t}`);
      if (!old) {
        const sealed = await this.sealNew(prepared.data);
        await this.commit((seq) => [{ op: 'table', p, d, t, entry: prepared.entry }, ...sealed.ops(seq)], () => this.setData(p, d, t, prepared.data));
        sealed.after();
        return prepared.entry;
      }
      await this.unlinkTable(p, d, t, old, prepared);
      return prepared.entry;
    });
  }

  /**
   * How a new table's files (TableData.markNew) become durable with the
   * record that publishes it: small ones ride in the record (`file` ops, the
   * sidecar as a `sidecar` op), so it waits for no sync, and are synced in
   * the background (`after`; a checkpoint waits for it); others are synced
   * now, all at once, before the record.
   */
  private async sealNew(data: TableData | null): Promise<{ ops: (seq: number) => CatalogOp[]; after: () => void }> {
    const u = data?.takeUnsealed() ?? null;
    const files = u?.inline() ?? null;
    if (!data || !u || !files) {
      await u?.seal();
      return { ops: () => [], after: () => undefined };
    }
    const rel = (f: string): string => path.relative(this.dataDir, f);
    return {
      ops: (seq) => {
        // Owed from the record on (inside the commit: a checkpoint cannot come between).
        this.owedSyncs.add(u);
        return files.map((f): CatalogOp => (f.file === data.sidecarFile ? { op: 'sidecar', file: rel(f.file), text: data.stampSeq(seq) } : { op: 'file', file: rel(f.file), data: f.data.toString('base64') }));
      },
      after: () => {
        void u.seal().then(
          () => this.owedSyncs.delete(u),
          (e: unknown) => console.error(`a new table's files could not be synced (tried again at the next checkpoint): ${String(e)}`),
        );
      },
    };
  }

  /** Syncs new tables' files whose records carry them (sealNew), before a checkpoint lets the log lose those records. */
  private async syncOwed(): Promise<void> {
    for (const u of [...this.owedSyncs]) {
      await u.seal();
      this.owedSyncs.delete(u);
    }
  }

  /**
   * Rows of a write job into p:d.t (a load, a copy), written to files in
   * the table's dataset directory as they come, under a stem of their own
   * (a crash's are removed at start-up, as a prepared table's), in the
   * layout of the table (else of `resource`, the one the job would make):
   * committed to whichever table has the name then (TableData.prepare), or
   * dropped.
   */
  stageRows(p: string, d: string, t: string, columns: readonly Column[], resource: Resource): StagedRows {
    this.requireDataset(p, d);
    // Linked under the table's names later: not cached under these (writeThrough false).
    return new StagedRows(this.datasetDir(p, d), newStorageStem(t), columns, 0, layoutColumns(this.getTable(p, d, t)?.resource ?? resource), null, false);
  }

  /** Removes the files of a prepared table that was never published (its create failed). */
  async discardPrepared(p: string, d: string, prepared: { entry: TableEntry; data: TableData | null }): Promise<void> {
    if (!prepared.data) return;
    await prepared.data.close().catch(() => undefined);
    const dir = this.datasetDir(p, d);
    for (const n of this.tableFiles(dir, prepared.entry.storage!) ?? []) fs.rmSync(path.join(dir, n), { force: true });
  }

  /** Creates an empty table (tables.insert, CREATE TABLE without rows). */
  async createTable(p: string, d: string, t: string, kind: TableKind, resource: Resource): Promise<TableEntry> {
    return this.publishTable(p, d, t, this.prepareTable(p, d, t, kind, resource), false);
  }

  /** Replaces the stored entry (resource, kind, policies); `columnsChanged` re-derives the row schema (adds columns, relaxes modes). */
  async setTableEntry(p: string, d: string, t: string, entry: TableEntry, columnsChanged: boolean): Promise<void> {
    await this.names.run(tKey(p, d, t), async () => {
      const old = this.requireTable(p, d, t);
      // Partitions expired under the old setting are deleted first: raising the expiration brings none back.
      if (partitionExpirationMs(old.kind, old.resource) !== null) await this.expireTable(p, d, t, old, Date.now());
      const next: TableEntry = old.storage !== undefined ? { ...entry, storage: old.storage } : entry;
      await this.commit([{ op: 'table', p, d, t, entry: next }]);
      // An expiration time already passed deletes the table at once (managing-tables.md, the note under it).
      if (tableExpired(next)) return this.dropIfExpired(p, d, t);
      if (columnsChanged && this.hasRows(next.kind)) await this.tableData(p, d, t).alter(this.storedColumnsOf(next));
    });
  }

  /** Replaces the stored resource (see setTableEntry). */
  async setTableResource(p: string, d: string, t: string, resource: Resource, columnsChanged: boolean): Promise<void> {
    const e = this.requireTable(p, d, t);
    await this.setTableEntry(p, d, t, { ...e, resource }, columnsChanged);
  }

  private newTableData(dir: string, stem: string, columns: readonly Column[]): TableData {
    return new TableData(dir, stem, columns, undefined, this.walSync, this.clock, this.graveyard);
  }

  private setData(p: string, d: string, t: string, td: TableData | null): void {
    if (td) this.data.set(tKey(p, d, t), td);
    else this.data.delete(tKey(p, d, t));
  }

  /**
   * Replaces a table's rows (DML results, WRITE_TRUNCATE): of `base` (rows
   * appended since are kept; see TableData.replace) or of whatever is there.
   * With `resource` (a new schema) the catalog entry changes in the same
   * commit.
   */
  async replaceRows(
    p: string,
    d: string,
    t: string,
    batches: NewRows,
    opts: { resource?: Resource; base?: TableState; carried?: boolean; policies?: Record<string, Resource> } = {},
  ): Promise<void> {
    const { resource, policies } = opts;
    if (!resource && !policies) {
      await this.writeRows(p, d, t, (td) => td.replace(batches, undefined, opts.base, opts.carried));
      return;
    }
    await this.commitRowsWithEntry(
      p,
      d,
      t,
      (e) => ({ ...e, ...(resource ? { resource } : {}), ...(policies ? { policies } : {}) }),
      async (td, entry) => {
        const prepared = await td.prepare(opts.base ?? 'all', batches, this.storedColumnsOf(entry));
        return opts.carried ? { ...prepared, carried: true } : prepared;
      },
    );
  }

  /**
   * Rows `prepare` makes committed with a change of the table's entry (its resource, its row access policies)
   * in one catalog record: no reader, and no restart after a crash, sees one without the other; `files` too.
   */
  async commitRowsWithEntry(
    p: string,
    d: string,
    t: string,
    change: (e: TableEntry) => TableEntry,
    prepare: (td: TableData, entry: TableEntry) => Promise<PreparedRows>,
    files: readonly CommitFile[] = [],
  ): Promise<void> {
    await this.names.run(tKey(p, d, t), () =>
      this.writeRows(p, d, t, async (td) => {
        const entry = change(this.requireTable(p, d, t));
        await this.commitRows([await prepare(td, entry)], [{ op: 'table', p, d, t, entry }], files);
      }),
    );
  }

  /**
   * Prepared rows of several tables (a transaction's COMMIT) committed with a change of one table's entry in the same
   * catalog record (a partition-decorated copy's row access policies), `change` applied to the entry as it is then;
   * without `change`, commitRows. The entry's name is taken as commitRowsWithEntry takes it (after the caller's
   * mutation locks, before the tables' gates), so no concurrent entry change is lost.
   */
  async commitRowsAndEntry(prepared: readonly PreparedRows[], change?: EntryChange): Promise<void> {
    if (!change) return this.commitRows(prepared);
    const { p, d, t } = change;
    await this.names.run(tKey(p, d, t), () => this.commitRows(prepared, [{ op: 'table', p, d, t, entry: change.change(this.requireTable(p, d, t)) }]));
  }

  /**
   * Commits prepared rows of several tables, and catalog changes, as one:
   * one catalog record holds the changes and every table's new sidecar
   * (redone on start-up if a crash cuts the sidecar writes short); one
   * table alone needs only its sidecar write. Tables are locked in one
   * order (their sidecar paths), so concurrent commits cannot deadlock.
   * `files` are written with the commit the same way (redone on start-up
   * like the sidecars): state of the commit's caller that must change with
   * the rows, such as a write stream's committed or flushed mark.
   */
  async commitRows(prepared: readonly PreparedRows[], ops: readonly CatalogOp[] = [], files: readonly CommitFile[] = []): Promise<void> {
    if (prepared.length === 1 && ops.length === 0 && files.length === 0) return prepared[0]!.td.commit(prepared[0]!);
    const sorted = [...prepared].sort((a, b) => (a.td.sidecarFile < b.td.sidecarFile ? -1 : a.td.sidecarFile > b.td.sidecarFile ? 1 : 0));
    const plans: { td: TableData; plan: CommitPlan; text: string }[] = [];
    const lockFrom = async (i: number): Promise<void> => {
      if (i < sorted.length) {
        const p = sorted[i]!;
        return p.td.withCommitPlan(p, async (plan) => {
          plans.push({ td: p.td, plan, text: '' });
          await lockFrom(i + 1);
        });
      }
      const written: { file: string; text: string }[] = [];
      await this.commit(
        (seq) => [
          ...ops,
          ...plans.map((x): CatalogOp => {
            x.text = x.td.withSeq(x.plan, seq);
            return { op: 'sidecar', file: x.td.sidecarPathFrom(this.dataDir), text: x.text };
          }),
          ...files.map((f): CatalogOp => {
            const text = f.text(seq);
            written.push({ file: f.file, text });
            return { op: 'sidecar', file: path.relative(this.dataDir, f.file), text };
          }),
        ],
        () => {
          for (const x of plans) x.plan.apply();
        },
        async () => {
          for (const x of plans) await atomicWrite(x.td.sidecarFile, x.text);
          for (const f of written) await atomicWrite(f.file, f.text);
        },
      );
    };
    await lockFrom(0);
  }

  // --- partition expiration (partition-expiration.ts) ---------------------------

  /** Per table key: the entry and rows version last found with no expired partition, until when that holds. */
  private readonly expiryChecked = new Map<string, { resource: Resource; version: number; untilMs: number }>();
  /** expiringTables()'s answer until the next catalog change. */
  private expiryCandidates: (readonly [string, string, string])[] | null = null;
  /** Sweeps under way, by table key (a second caller waits for the first). */
  private readonly expiring = new Map<string, Promise<void>>();

  /**
   * Deletes the expired partitions of every table with a partition expiration, each with one row-level
   * commit, before a statement or engine call reads (the service deletes them itself; readers never see
   * them). A table whose mutation lock a statement or transaction holds is left for the next call: the
   * holder reads the snapshot it took. Cheap when nothing expired since the last sweep. Expired tables,
   * which no lookup finds already, are dropped here too, as of their expiration, so that a copy of
   * `table@<time>` restores one (restore-deleted-tables.md) without waiting for its name to be reused.
   */
  async expirePartitions(nowMs = Date.now()): Promise<void> {
    for (const [p, d, t] of this.expiringTables()) {
      const e = this.storedTable(p, d, t);
      if (!e) continue;
      const key = tKey(p, d, t);
      if (tableExpired(e, nowMs)) {
        // Never waits on a name in use (its DDL drops it anyway).
        if (!this.names.busy(key)) await this.names.run(key, () => this.dropIfExpired(p, d, t));
        continue;
      }
      if (partitionExpirationMs(e.kind, e.resource) === null) continue;
      const chk = this.expiryChecked.get(key);
      if (chk && chk.resource === e.resource && nowMs < chk.untilMs && chk.version === this.data.get(key)?.version) continue;
      await this.expireTable(p, d, t, e, nowMs);
    }
  }

  /** The tables with an expiration time or a partition expiration (recomputed after a catalog change: statements ask before each). */
  private expiringTables(): readonly (readonly [string, string, string])[] {
    if (this.expiryCandidates) return this.expiryCandidates;
    const out: [string, string, string][] = [];
    for (const ds of this.datasets.values()) {
      for (const [t, e] of Object.entries(ds.tables)) {
        if (e.resource.expirationTime !== undefined || partitionExpirationMs(e.kind, e.resource) !== null) out.push([ds.projectId, ds.datasetId, t]);
      }
    }
    return (this.expiryCandidates = out);
  }

  private expireTable(p: string, d: string, t: string, e: TableEntry, nowMs: number): Promise<void> {
    const key = tKey(p, d, t);
    const running = this.expiring.get(key);
    if (running) return running;
    const run = this.expireNow(p, d, t, e, nowMs).finally(() => this.expiring.delete(key));
    this.expiring.set(key, run);
    return run;
  }

  private async expireNow(p: string, d: string, t: string, e: TableEntry, nowMs: number): Promise<void> {
    const release = this.mutations.tryAcquire({ p, d, t }, { kind: 'statement' });
    if (!release) return;
    try {
      const x = expiredRows(e.kind, e.resource, this.storedColumnsOf(e), nowMs);
      if (!x) return;
      const td = this.tableData(p, d, t);
      await td.load();
      const base = td.state();
      const positions = await expiredPositions(base, x);
      if (positions.length > 0) await td.change(base, positions, []);
      this.expiryChecked.set(tKey(p, d, t), { resource: e.resource, version: td.version, untilMs: x.untilMs });
    } catch (err) {
      // Replaced, dropped or changed meanwhile: the next call looks again.
      if (!(err instanceof TableClosedError || err instanceof TableConflictError)) throw err;
    } finally {
      release();
    }
  }

  /** Row storage of a table (lazily opened; rows load on first use). */
  tableData(p: string, d: string, t: string): TableData {
    const key = tKey(p, d, t);
    let td = this.data.get(key);
    // An expired table's rows are still opened when it is dropped (unlinkTable): no lookup reaches here for one otherwise.
    this.requireDataset(p, d);
    const e = this.storedTable(p, d, t);
    if (!e) throw notFound(`Table ${p}:${d}.${t}`);
    if (!td) {
      td = this.newTableData(this.datasetDir(p, d), storageStem(t, e), this.storedColumnsOf(e));
      this.data.set(key, td);
    }
    td.layoutBy = layoutColumns(e.resource);
    td.changeHistory = changeHistoryEnabled(e.resource);
    td.mutationLock = () => this.mutations.acquire({ p, d, t }, { kind: 'statement' });
    return td;
  }

  /**
   * Runs a write on the table's row storage; when a replace or drop retired
   * that storage meanwhile, on the storage that now has the name (or fails
   * with notFound): an acknowledged write always lands in the live table.
   */
  async writeRows<T>(p: string, d: string, t: string, fn: (td: TableData) => Promise<T>): Promise<T> {
    for (;;) {
      const td = this.tableData(p, d, t);
      try {
        return await fn(td);
      } catch (e) {
        if (!(e instanceof TableClosedError) || this.data.get(tKey(p, d, t)) === td) throw e;
      }
    }
  }

  private async closeData(p: string, d: string, t: string): Promise<void> {
    const key = tKey(p, d, t);
    const td = this.data.get(key);
    if (td) {
      this.data.delete(key);
      await td.close();
    }
  }

  /** A table's files in `dir` (names), null when the directory is missing. */
  private tableFiles(dir: string, stem: string): string[] | null {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return null;
    }
    return names.filter((n) => stemOfFile(n) === stem);
  }

  private async moveTableFiles(dir: string, stem: string, to: string): Promise<void> {
    const names = this.tableFiles(dir, stem);
    if (names === null || names.length === 0) return;
    fs.mkdirSync(to, { recursive: true });
    for (const n of names) fs.renameSync(path.join(dir, n), path.join(to, n));
    await Promise.all([fsyncDir(to), fsyncDir(dir)]);
  }

  /** Where a table dropped at `deletedMs` keeps its files (relative to the data dir). */
  private trashDirOf(p: string, d: string, stem: string, deletedMs: number): string {
    return path.join(path.relative(this.dataDir, this.datasetDir(p, d)), '.trash', `${stem}@${deletedMs}`);
  }

  /** Drops a table, keeping its rows and resource as a snapshot for time-travel restore. */
  async deleteTable(p: string, d: string, t: string): Promise<void> {
    await this.names.run(tKey(p, d, t), async () => {
      const entry = this.requireTable(p, d, t);
      await this.unlinkTable(p, d, t, entry, null);
    });
  }

  /**
   * Takes `old` out of the catalog, in favour of `next` or of nothing, in
   * one commit. Appends in flight to its rows finish first and later ones
   * go to the new table (writeRows): the old storage's gate is held across
   * the commit. Then its files move to the trash, kept as a snapshot.
   */
  private async unlinkTable(p: string, d: string, t: string, old: TableEntry, next: { entry: TableEntry; data: TableData | null } | null, deletedMs = Date.now()): Promise<void> {
    const stem = storageStem(t, old);
    const trashRel = this.trashDirOf(p, d, stem, deletedMs);
    const oldData = this.hasRows(old.kind) ? this.tableData(p, d, t) : null;
    const snapshot: DeletedTable = { projectId: p, datasetId: d, tableId: t, deletedMs, entry: old, trashDir: trashRel };
    const sealed = await this.sealNew(next?.data ?? null);
    // The snapshot rides in the record (no catalog without the table is durable before it);
    // deleted-tables.log gets it next, synced by the next checkpoint (or close), before the log loses the record.
    const commit = (): Promise<void> =>
      this.commit((seq) => [{ op: 'table', p, d, t, entry: next ? next.entry : null }, { op: 'deletedTable', snapshot }, ...sealed.ops(seq)], () => {
        this.deletedTables.add(snapshot);
        this.setData(p, d, t, next ? next.data : null);
        oldData?.retire();
      });
    if (oldData) await oldData.whileNoWrites(commit);
    else await commit();
    sealed.after();
    void this.deletedTables.flush(false).catch((e: unknown) => console.error(`deleted-tables.log write failed (retried at the next checkpoint): ${String(e)}`));
    if (oldData) {
      await oldData.close();
      // Readers of the old table's rows may still be reading its files: they move to the trash once they cannot be.
      const dir = this.datasetDir(p, d);
      void this.graveyard.defer(async () => {
        for (const n of this.tableFiles(dir, stem) ?? []) chunkCache.forget(path.join(dir, n));
        await this.moveTableFiles(dir, stem, path.join(this.dataDir, trashRel));
      });
    }
  }

  /**
   * Gives a table a new name in its dataset, in one commit: its entry moves
   * (naming its storage explicitly, which keeps its files and history), and
   * writes to the old name from then on find no table.
   */
  async renameTable(p: string, d: string, t: string, to: string): Promise<void> {
    checkTableId(to);
    const [first, second] = [tKey(p, d, t), tKey(p, d, to)].sort();
    await this.names.run(first!, () =>
      this.names.run(second!, async () => {
        const e = this.requireTable(p, d, t);
        if (this.getTable(p, d, to)) throw alreadyExists(`Table ${p}:${d}.${to}`);
        await this.dropIfExpired(p, d, to);
        const moved: TableEntry = { ...e, storage: storageStem(t, e), resource: { ...e.resource, id: `${p}:${d}.${to}`, tableReference: { projectId: p, datasetId: d, tableId: to } } };
        const td = this.hasRows(e.kind) ? this.tableData(p, d, t) : null;
        await this.commit(
          [
            { op: 'table', p, d, t: to, entry: moved },
            { op: 'table', p, d, t, entry: null },
          ],
          () => {
            this.setData(p, d, t, null);
            this.setData(p, d, to, td);
          },
        );
      }),
    );
  }

  /** The newest deleted snapshot of a table that existed at `atMs` (or the newest one). */
  findDeletedTable(p: string, d: string, t: string, atMs?: number): DeletedTable | undefined {
    return this.deletedTables.find(p, d, t, atMs);
  }

  /** Row storage of a deleted table snapshot (read-only use: copy restores, `table@epoch` reads). */
  deletedTableData(x: DeletedTable): TableData {
    let td = this.trashData.get(x.trashDir);
    if (td) this.trashData.delete(x.trashDir);
    else {
      // Its files move to the trash once no reader needs them where they were (unlinkTable): until then they are read there.
      const trash = path.join(this.dataDir, x.trashDir);
      const stem = storageStem(x.tableId, x.entry);
      const live = this.datasetDir(x.projectId, x.datasetId);
      const dir = existsSync(trash) || (this.tableFiles(live, stem) ?? []).length === 0 ? trash : live;
      td = this.newTableData(dir, stem, storedColumns(x.entry.kind, x.entry.resource, columnsOf(schemaFieldsOf(x.entry.resource))));
      // A few recent snapshots stay open (a copy job pages through one); older ones are released.
      for (const [k, old] of this.trashData) {
        if (this.trashData.size < 4) break;
        this.trashData.delete(k);
        old.close().catch(() => undefined);
      }
    }
    this.trashData.set(x.trashDir, td);
    return td;
  }

  /**
   * A snapshot-decorated id `table@<epoch ms>` (negative: relative to now; 0:
   * newest) of a deleted table: the snapshot that was live at that instant.
   */
  resolveDecorated(p: string, d: string, t: string): DeletedTable | undefined {
    const m = /^(.+)@(-?\d+)$/.exec(t);
    if (!m) return undefined;
    let at = Number(m[2]);
    if (at < 0) at = Date.now() + at;
    const x = this.findDeletedTable(p, d, m[1]!, at === 0 ? undefined : at);
    if (!x) return undefined;
    if (at !== 0 && Number(x.entry.resource.creationTime ?? 0) > at) return undefined;
    return x;
  }

  // --- routines, models, row-access policies ----------------------------------

  /** Sets (resource) or removes (null) a routine or model. */
  async setChild(p: string, d: string, kind: 'routines' | 'models' | 'propertyGraphs', id: string, resource: Resource | null): Promise<void> {
    this.requireDataset(p, d);
    await this.commit([{ op: 'child', p, d, kind, id, resource }]);
  }

  /** Sets (resource) or removes (null) a table's row-access policy. */
  async setPolicy(p: string, d: string, t: string, id: string, resource: Resource | null): Promise<void> {
    await this.names.run(tKey(p, d, t), async () => {
      const e = this.requireTable(p, d, t);
      const policies = { ...e.policies };
      if (resource) policies[id] = resource;
      else delete policies[id];
      await this.commit([{ op: 'table', p, d, t, entry: { ...e, policies } }]);
    });
  }

  // --- lifecycle -------------------------------------------------------------

  /** Folds every WAL into fragments (SIGTERM); safe to skip, recovery replays WALs. */
  async flushAll(): Promise<void> {
    for (const td of this.data.values()) await td.flush();
  }

  async close(): Promise<void> {
    for (const td of this.data.values()) {
      await td.flush().catch(() => undefined);
      await td.close();
    }
    this.data.clear();
    for (const td of this.trashData.values()) await td.close();
    this.trashData.clear();
    await this.graveyard.flush();
    await this.checkpointing;
    // A clean stop leaves the catalog in one file: the next start replays nothing.
    if (this.log.byteSize > 0) await this.checkpoint();
    await this.deletedTables.close();
    await this.log.close();
    this.lock?.release();
  }
}

/**
 * The columns a table's files are ordered by (TableData.layoutBy): its
 * partitioning column (for ingestion-time partitioning the hidden partition
 * time), then its
 * clustering columns, as the service lays partitioned and clustered tables
 * out so that their filters prune.
 */
/** The table option enable_change_history (time-series-functions.md, CHANGES): TableData.changeHistory. */
function changeHistoryEnabled(resource: Resource): boolean {
  return (resource.options as Record<string, unknown> | undefined)?.enable_change_history === true;
}

function layoutColumns(resource: Resource): string[] {
  const r = resource as { timePartitioning?: { field?: string }; rangePartitioning?: { field?: string }; clustering?: { fields?: string[] } };
  const part = r.timePartitioning?.field ?? r.rangePartitioning?.field ?? (ingestionUnit(resource) ? PARTITION_TIME_COLUMN : undefined);
  return [...(part ? [part] : []), ...(r.clustering?.fields ?? [])];
}
