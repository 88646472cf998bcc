// The persistent catalog (catalog.store) and the row storage of every table
// under one data dir. REST semantics (what a field means, which error a call
// gets) live in src/engine/; this module keeps state consistent and durable.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { Column } from '../types/schema.js';
import { DeletedTableLog, type DeletedTable } from './deleted-tables.js';
import { alreadyExists, notFound } from './errors.js';
import { commitTemp, durableRename, ensureDir, existsSync, fsyncDir, writeTemp } from './fsutil.js';
import { acquireDirLock, type DirLock } from './lock.js';
import { checkDatasetId, checkProjectId, checkTableId, fileStem } from './names.js';
import { columnsOf, schemaFieldsOf, type Resource } from './resources.js';
import { TableData } from './table-data.js';
import type { WalSyncMode } from './wal.js';
import type { TableKind } from './api.js';

export const UNDELETE_WINDOW_MS = 7 * 24 * 3600 * 1000;

export interface TableEntry {
  resource: Resource;
  kind: TableKind;
  /** Row-access policies by id. */
  policies: Record<string, Resource>;
}

export interface DatasetEntry {
  projectId: string;
  datasetId: string;
  resource: Resource;
  tables: Record<string, TableEntry>;
  routines: Record<string, Resource>;
  models: Record<string, Resource>;
}

export interface Tombstone {
  projectId: string;
  datasetId: string;
  deletedMs: number;
  entry: DatasetEntry;
  /** Relative to the data dir. */
  trashDir: string;
}

export interface CatalogFile {
  format: 'warehouse-emulator-catalog';
  version: 1;
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

const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null;
const isMap = (v: unknown): v is object => isObject(v) && !Array.isArray(v);

function isEmpty(o: object): boolean {
  for (const _ in o) return false;
  return true;
}

/** A member's JSON text, or a writer of it; undefined: left out (what JSON.stringify does with undefined). */
type Member = string | ((w: ChunkWriter) => void) | undefined;

const COMMA = Buffer.from(',');

/** JSON text as UTF-8 pieces: small strings are joined and encoded once; cached pieces are shared, never copied (the file is written with writev). */
class ChunkWriter {
  private readonly chunks: Buffer[] = [];
  private text = '';
  put(s: string): void {
    this.text += s;
  }
  comma(): void {
    if (this.text) this.text += ',';
    else this.chunks.push(COMMA);
  }
  putBytes(b: Buffer): void {
    this.flush();
    this.chunks.push(b);
  }
  putChunks(bs: readonly Buffer[]): void {
    this.flush();
    for (const b of bs) this.chunks.push(b);
  }
  /** The text so far as UTF-8 pieces (in order; cached pieces are shared, not copied). */
  pieces(): Buffer[] {
    this.flush();
    return this.chunks;
  }
  bytes(): Buffer {
    return Buffer.concat(this.pieces());
  }
  private flush(): void {
    if (this.text) {
      this.chunks.push(Buffer.from(this.text));
      this.text = '';
    }
  }
}

function write(w: ChunkWriter, m: string | ((w: ChunkWriter) => void)): void {
  if (typeof m === 'string') w.put(m);
  else m(w);
}

/**
 * An object as JSON.stringify writes it (own enumerable keys in order; a
 * member that is undefined is left out), each member from `member`. Only for
 * plain objects (no toJSON), which the catalog's entries are.
 */
function writeObject(w: ChunkWriter, o: object, member: (key: string, value: unknown) => Member): void {
  w.put('{');
  let first = true;
  for (const k of Object.keys(o)) {
    const m = member(k, (o as Record<string, unknown>)[k]);
    if (m === undefined) continue;
    w.put(`${first ? '' : ','}${JSON.stringify(k)}:`);
    first = false;
    write(w, m);
  }
  w.put('}');
}

/** An array as JSON.stringify writes it (an undefined item is `null`). */
function writeArray(w: ChunkWriter, a: readonly unknown[], item: (v: unknown) => Member): void {
  w.put('[');
  for (let i = 0; i < a.length; i++) {
    if (i > 0) w.comma();
    write(w, item(a[i]) ?? 'null');
  }
  w.put(']');
}

/** What a table entry's cached bytes were made from. */
interface EntryText {
  resource: Resource;
  kind: TableKind;
  policies: Record<string, Resource>;
  bytes: Buffer;
}

/** The entry still holds what its bytes were made from (policies: an empty map; maps with policies are edited in place, so never cached). */
const sameEntry = (c: EntryText, e: TableEntry): boolean => c.resource === e.resource && c.kind === e.kind && c.policies === e.policies && isEmpty(e.policies);
const cacheable = (e: unknown): e is TableEntry => isObject(e) && isMap((e as TableEntry).policies) && isEmpty((e as TableEntry).policies);

/** What a dataset entry's cached bytes were made from; table and child maps as flat [key, value, ...] snapshots. */
interface DatasetText {
  resource: Resource;
  projectId: string;
  datasetId: string;
  tablesMap: object;
  routinesMap: object;
  modelsMap: object;
  /** [id, entry, entry.resource, entry.kind, entry.policies, ...] */
  tables: unknown[];
  /** [id, resource, ...] */
  routines: unknown[];
  models: unknown[];
  bytes: Buffer[];
}

/** The table entries' snapshot, or null when one has policies (edited in place: never cached). */
function snapshotTables(m: Record<string, TableEntry>): unknown[] | null {
  if (!isMap(m)) return null;
  const out: unknown[] = [];
  for (const k in m) {
    const e = m[k];
    if (!cacheable(e)) return null;
    out.push(k, e, e.resource, e.kind, e.policies);
  }
  return out;
}

function sameTables(snap: unknown[], m: Record<string, TableEntry>): boolean {
  let i = 0;
  for (const k in m) {
    const e = m[k]!;
    if (snap[i] !== k || snap[i + 1] !== e || snap[i + 2] !== e.resource || snap[i + 3] !== e.kind || snap[i + 4] !== e.policies || !isEmpty(e.policies)) return false;
    i += 5;
  }
  return i === snap.length;
}

function snapshotChildren(m: Record<string, Resource>): unknown[] {
  const out: unknown[] = [];
  for (const k in m) out.push(k, m[k]);
  return out;
}

function sameChildren(snap: unknown[], m: Record<string, Resource>): boolean {
  let i = 0;
  for (const k in m) {
    if (snap[i] !== k || snap[i + 1] !== m[k]) return false;
    i += 2;
  }
  return i === snap.length;
}

const dsKey = (p: string, d: string): string => `${p}\u0000${d}`;
const tKey = (p: string, d: string, t: string): string => `${p}\u0000${d}\u0000${t}`;

export class Storage {
  private datasets = new Map<string, DatasetEntry>();
  private tombstones: Tombstone[] = [];
  private readonly deletedTables: DeletedTableLog;
  private data = new Map<string, TableData>();
  private trashData = new Map<string, TableData>();
  private columnCache = new WeakMap<TableEntry, Column[]>();
  /** JSON text of stored resources (catalogPieces). */
  private texts = new WeakMap<object, string>();
  /** A table's member bytes in its dataset's `tables` and what they were made from (catalogPieces). */
  private entryTexts = new WeakMap<object, EntryText & { key: string }>();
  /** A dataset entry's bytes and what they were made from (catalogPieces). */
  private datasetTexts = new WeakMap<DatasetEntry, DatasetText>();
  private saving: Promise<void> | null = null;
  /** Deletes whose files are still moving; a create of the same name waits for them. */
  private moving = new Map<string, Promise<void>>();
  private dirty = false;

  private constructor(
    readonly dataDir: string,
    readonly defaultLocation: string,
    private readonly lock: DirLock | null,
    readonly walSync: WalSyncMode,
  ) {
    this.deletedTables = new DeletedTableLog(path.join(dataDir, 'deleted-tables.log'));
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
    try {
      file = JSON.parse(await fsp.readFile(this.catalogFile, 'utf8')) as CatalogFile;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read ${this.catalogFile}: ${(e as Error).message}`);
    }
    // Leftover temp files of an interrupted catalog write.
    for (const n of fs.readdirSync(this.dataDir)) if (n.startsWith('catalog.store.') && n.endsWith('.tmp')) fs.rmSync(path.join(this.dataDir, n), { force: true });
    const logged = await this.deletedTables.open();
    if (!file) {
      await this.save();
      return;
    }
    for (const d of file.datasets) this.datasets.set(dsKey(d.projectId, d.datasetId), d);
    this.tombstones = file.tombstones ?? [];
    // Snapshots of a catalog from before the log join it (once: a crash between the log's rewrite and the catalog's save moved them already).
    const inLog = new Set(logged.map((x) => x.trashDir));
    const moved = (file.deletedTables ?? []).filter((x) => !inLog.has(x.trashDir));
    await this.reconcile([...logged, ...moved], file.deletedTables !== undefined);
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
      const created = t.entry.resource.creationTime;
      if (live && created !== undefined && live.resource.creationTime === created) continue;
      if (ds && !live && !existsSync(trash)) await this.moveTableFiles(this.datasetDir(t.projectId, t.datasetId), fileStem(t.tableId), trash);
      if (now - t.deletedMs < UNDELETE_WINDOW_MS) keepD.push(t);
    }
    const keepT = this.tombstones.filter((t) => now - t.deletedMs < UNDELETE_WINDOW_MS);
    for (const t of [...this.tombstones, ...deleted]) {
      if (now - t.deletedMs >= UNDELETE_WINDOW_MS) await fsp.rm(path.join(this.dataDir, t.trashDir), { recursive: true, force: true });
    }
    if (keepD.length !== deleted.length || catalogChanged) await this.deletedTables.rewrite(keepD);
    if (keepT.length !== this.tombstones.length || catalogChanged) {
      this.tombstones = keepT;
      await this.save();
    }
  }

  /** Writes catalog.store atomically; concurrent callers share one write. */
  async save(): Promise<void> {
    this.dirty = true;
    while (this.saving) await this.saving;
    if (!this.dirty) return;
    this.dirty = false;
    const pieces = this.catalogPieces();
    // No catalog without a dropped table may be durable before its snapshot
    // is: a drop adds the snapshot as it unlinks the table, so every snapshot
    // these pieces need is held now, and this flush writes it. The catalog's
    // temp file is written and synced meanwhile (two fsyncs overlap); only
    // its rename, which makes it the catalog, waits for the flush.
    this.saving = Promise.allSettled([this.deletedTables.flush(), writeTemp(this.catalogFile, pieces)])
      .then(async ([flushed, written]) => {
        if (flushed.status === 'rejected') {
          if (written.status === 'fulfilled') await fsp.rm(written.value, { force: true });
          throw flushed.reason;
        }
        if (written.status === 'rejected') throw written.reason;
        await commitTemp(written.value, this.catalogFile);
      })
      .finally(() => {
        this.saving = null;
      });
    await this.saving;
  }

  /** The catalog as catalog.store holds it (the file is exactly `JSON.stringify` of this). */
  catalogObject(): CatalogFile {
    return {
      format: 'warehouse-emulator-catalog',
      version: 1,
      datasets: [...this.datasets.values()],
      tombstones: this.tombstones,
    };
  }

  /**
   * catalog.store's bytes, in pieces: the UTF-8 of `JSON.stringify(this.catalogObject())`,
   * byte for byte, without re-serialising every resource on every save (a DDL
   * in a catalog of hundreds of tables used to stringify and encode all of
   * them). Resources (datasets', tables', routines', models', policies') are
   * replaced on every change, never edited in place once stored (the plan
   * cache's identity checks rely on the same), so their JSON text is cached by
   * object. Entries and the maps holding them are edited in place
   * (`e.resource = …`, `e.kind = …`, `tables[t] = …`, `policies[id] = …`), so
   * they are checked on every save: a table's whole member (`"id":{entry}`,
   * UTF-8) and a deleted-table snapshot's are reused only while the entry still
   * holds the same resource and kind and no policies, a dataset's pieces only
   * while all of its parts are the same objects (datasetPieces).
   */
  private catalogPieces(): Buffer[] {
    const res = (v: unknown): Member => this.resourceText(v);
    const map = (m: unknown, value: (v: unknown) => Member): Member => (isMap(m) ? (w) => writeObject(w, m, (_, v) => value(v)) : JSON.stringify(m));
    const entry = (e: unknown): Member =>
      isObject(e) ? (w) => writeObject(w, e, (k, v) => (k === 'resource' ? res(v) : k === 'policies' ? map(v, res) : JSON.stringify(v))) : JSON.stringify(e);
    const tables = (m: unknown): Member =>
      isMap(m)
        ? (w) => {
            w.put('{');
            let first = true;
            for (const k of Object.keys(m)) {
              const b = this.tableMember(k, (m as Record<string, unknown>)[k], entry);
              if (b === null) continue;
              if (!first) w.comma();
              first = false;
              w.putBytes(b);
            }
            w.put('}');
          }
        : JSON.stringify(m);
    const datasetMembers = (e: object): Member =>
      (w: ChunkWriter) => writeObject(w, e, (k, v) => (k === 'resource' ? res(v) : k === 'tables' ? tables(v) : k === 'routines' || k === 'models' ? map(v, res) : JSON.stringify(v)));
    const dataset = (e: unknown): Member => (isObject(e) ? (w) => w.putChunks(this.datasetPieces(e as DatasetEntry, datasetMembers)) : JSON.stringify(e));
    const tombstone = (t: unknown): Member => (isObject(t) ? (w) => writeObject(w, t, (k, v) => (k === 'entry' ? dataset(v) : JSON.stringify(v))) : JSON.stringify(t));
    const w = new ChunkWriter();
    writeObject(w, this.catalogObject(), (k, v) => {
      if (!Array.isArray(v)) return JSON.stringify(v);
      if (k === 'datasets') return (w) => writeArray(w, v, dataset);
      if (k === 'tombstones') return (w) => writeArray(w, v, tombstone);
      return JSON.stringify(v);
    });
    return w.pieces();
  }

  /**
   * A dataset entry's bytes (as pieces), reused while it holds the same resource and ids,
   * the same table entries (each with the same resource and kind, no
   * policies) and the same routines and models, in the same order: a save in
   * a catalog of hundreds of datasets copies their bytes instead of walking them.
   */
  private datasetPieces(e: DatasetEntry, members: (e: object) => Member): Buffer[] {
    const c = this.datasetTexts.get(e);
    if (
      c &&
      c.resource === e.resource &&
      c.projectId === e.projectId &&
      c.datasetId === e.datasetId &&
      c.tablesMap === e.tables &&
      c.routinesMap === e.routines &&
      c.modelsMap === e.models &&
      sameTables(c.tables, e.tables) &&
      sameChildren(c.routines, e.routines) &&
      sameChildren(c.models, e.models)
    ) {
      return c.bytes;
    }
    const w = new ChunkWriter();
    write(w, members(e)!);
    const bytes = w.pieces();
    const tables = snapshotTables(e.tables);
    if (tables && isMap(e.routines) && isMap(e.models)) {
      this.datasetTexts.set(e, {
        resource: e.resource,
        projectId: e.projectId,
        datasetId: e.datasetId,
        tablesMap: e.tables,
        routinesMap: e.routines,
        modelsMap: e.models,
        tables,
        routines: snapshotChildren(e.routines),
        models: snapshotChildren(e.models),
        bytes,
      });
    }
    return bytes;
  }

  /** `"id":{entry}` of a dataset's table (null: left out, as JSON.stringify leaves out an undefined member). */
  private tableMember(key: string, e: unknown, entry: (e: unknown) => Member): Buffer | null {
    const c = isObject(e) ? this.entryTexts.get(e) : undefined;
    if (c && c.key === key && sameEntry(c, e as TableEntry)) return c.bytes;
    const m = entry(e);
    if (m === undefined) return null;
    const w = new ChunkWriter();
    w.put(`${JSON.stringify(key)}:`);
    write(w, m);
    const bytes = w.bytes();
    if (cacheable(e)) this.entryTexts.set(e, { key, resource: e.resource, kind: e.kind, policies: e.policies, bytes });
    return bytes;
  }

  /** A stored resource's JSON text, cached by identity (see catalogPieces). */
  private resourceText(r: unknown): string | undefined {
    if (!isObject(r)) return JSON.stringify(r);
    let t = this.texts.get(r);
    if (t === undefined) {
      t = JSON.stringify(r);
      this.texts.set(r, t);
    }
    return t;
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
    await this.settled(dsKey(p, d));
    if (this.datasets.has(dsKey(p, d))) throw alreadyExists(`Dataset ${p}:${d}`);
    const entry: DatasetEntry = { projectId: p, datasetId: d, resource, tables: {}, routines: {}, models: {} };
    this.datasets.set(dsKey(p, d), entry);
    await this.save();
    return entry;
  }

  async setDatasetResource(entry: DatasetEntry, resource: Resource): Promise<void> {
    entry.resource = resource;
    await this.save();
  }

  isDatasetEmpty(e: DatasetEntry): boolean {
    return Object.keys(e.tables).length === 0 && Object.keys(e.routines).length === 0 && Object.keys(e.models).length === 0;
  }

  /** Moves the dataset (with its tables, rows and children) to a tombstone. */
  async deleteDataset(p: string, d: string): Promise<void> {
    const entry = this.requireDataset(p, d);
    // Unlink from the catalog first (synchronously), so no request opens its tables while they close.
    const deletedMs = Date.now();
    const trashDir = path.join('.trash', fileStem(p), `${d}@${deletedMs}`);
    this.datasets.delete(dsKey(p, d));
    this.tombstones.push({ projectId: p, datasetId: d, deletedMs, entry, trashDir });
    await this.track(dsKey(p, d), async () => {
      for (const t of Object.keys(entry.tables)) await this.closeData(p, d, t);
      await this.save();
      const live = this.datasetDir(p, d);
      if (existsSync(live)) await durableRename(live, path.join(this.dataDir, trashDir));
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
    await this.settled(dsKey(p, d));
    if (this.datasets.has(dsKey(p, d))) throw alreadyExists(`Dataset ${p}:${d}`);
    let best: Tombstone | undefined;
    for (const t of this.tombstones) {
      if (t.projectId === p && t.datasetId === d && Date.now() - t.deletedMs < UNDELETE_WINDOW_MS && (!best || t.deletedMs > best.deletedMs)) best = t;
    }
    if (!best) return undefined;
    const trash = path.join(this.dataDir, best.trashDir);
    const live = this.datasetDir(p, d);
    if (existsSync(live)) await fsp.rm(live, { recursive: true, force: true });
    if (existsSync(trash)) await durableRename(trash, live);
    this.tombstones = this.tombstones.filter((t) => t !== best);
    this.datasets.set(dsKey(p, d), best.entry);
    await this.save();
    return best.entry;
  }

  // --- tables ----------------------------------------------------------------

  getTable(p: string, d: string, t: string): TableEntry | undefined {
    return this.datasets.get(dsKey(p, d))?.tables[t];
  }

  requireTable(p: string, d: string, t: string): TableEntry {
    const ds = this.requireDataset(p, d);
    const e = ds.tables[t];
    if (!e) throw notFound(`Table ${p}:${d}.${t}`);
    return e;
  }

  columnsOf(e: TableEntry): Column[] {
    let c = this.columnCache.get(e);
    if (!c) {
      c = columnsOf(schemaFieldsOf(e.resource));
      this.columnCache.set(e, c);
    }
    return c;
  }

  hasRows(kind: TableKind): boolean {
    return kind !== 'VIEW';
  }

  async createTable(p: string, d: string, t: string, kind: TableKind, resource: Resource): Promise<TableEntry> {
    checkTableId(t);
    await this.settled(dsKey(p, d), tKey(p, d, t));
    const ds = this.requireDataset(p, d);
    if (ds.tables[t]) throw alreadyExists(`Table ${p}:${d}.${t}`);
    const entry: TableEntry = { resource, kind, policies: {} };
    let created: Promise<void> | undefined;
    if (this.hasRows(kind)) {
      const dir = this.datasetDir(p, d);
      const stem = fileStem(t);
      // Files a crash left from an earlier table of this name must not leak in.
      this.removeTableFiles(dir, stem);
      const td = this.newTableData(dir, stem, this.columnsOf(entry));
      // The empty sidecar is written while the catalog is saved (their fsyncs
      // overlap): a table whose sidecar a crash lost reads as empty, as it is.
      created = td.create();
      this.data.set(tKey(p, d, t), td);
    }
    ds.tables[t] = entry;
    this.datasetTexts.delete(ds);
    // Both settle before either's failure is thrown: nothing of this create is still being written then.
    const [made, saved] = await Promise.allSettled([created, this.save()]);
    if (made.status === 'rejected') throw made.reason;
    if (saved.status === 'rejected') throw saved.reason;
    return entry;
  }

  /**
   * CREATE OR REPLACE VIEW over a view: the new entry takes the old one's
   * place with one catalog save (neither has row files), so no crash can
   * leave neither, and the DDL pays one durable write instead of a drop's and
   * a create's. The old entry is kept as dropped, as deleteTable keeps it.
   */
  async replaceView(p: string, d: string, t: string, resource: Resource): Promise<TableEntry> {
    await this.settled(dsKey(p, d), tKey(p, d, t));
    const ds = this.requireDataset(p, d);
    const old = ds.tables[t];
    if (!old || old.kind !== 'VIEW') throw new Error(`replaceView: ${p}:${d}.${t} is not a view`);
    const deletedMs = Date.now();
    this.deletedTables.add({ projectId: p, datasetId: d, tableId: t, deletedMs, entry: old, trashDir: this.trashDirOf(p, d, t, deletedMs) });
    const entry: TableEntry = { resource, kind: 'VIEW', policies: {} };
    ds.tables[t] = entry;
    this.datasetTexts.delete(ds);
    await this.save();
    return entry;
  }

  /** Replaces the stored resource; `columnsChanged` re-derives the row schema (adds columns, relaxes modes). */
  async setTableResource(p: string, d: string, t: string, resource: Resource, columnsChanged: boolean): Promise<void> {
    const e = this.requireTable(p, d, t);
    e.resource = resource;
    this.columnCache.delete(e);
    this.datasetTexts.delete(this.requireDataset(p, d));
    if (columnsChanged) {
      if (this.hasRows(e.kind)) await this.tableData(p, d, t).alter(this.columnsOf(e));
    }
    await this.save();
  }

  private newTableData(dir: string, stem: string, columns: readonly Column[]): TableData {
    return new TableData(dir, stem, columns, undefined, this.walSync);
  }

  /** Row storage of a table (lazily opened; rows load on first use). */
  tableData(p: string, d: string, t: string): TableData {
    const key = tKey(p, d, t);
    let td = this.data.get(key);
    if (!td) {
      const e = this.requireTable(p, d, t);
      td = this.newTableData(this.datasetDir(p, d), fileStem(t), this.columnsOf(e));
      this.data.set(key, td);
    }
    return td;
  }

  private async closeData(p: string, d: string, t: string): Promise<void> {
    const key = tKey(p, d, t);
    const td = this.data.get(key);
    if (td) {
      this.data.delete(key);
      await td.close();
    }
  }

  /** A table's files in `dir` (names), null when the directory is missing. Directory work is done in place (see fsutil.ts). */
  private tableFiles(dir: string, stem: string): string[] | null {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return null;
    }
    return names.filter((n) => n === `${stem}.meta.json` || n === `${stem}.wal` || n.startsWith(`${stem}@`));
  }

  private removeTableFiles(dir: string, stem: string): void {
    for (const n of this.tableFiles(dir, stem) ?? []) fs.rmSync(path.join(dir, n), { force: true });
  }

  private async moveTableFiles(dir: string, stem: string, to: string): Promise<void> {
    const names = this.tableFiles(dir, stem);
    if (names === null) return;
    fs.mkdirSync(to, { recursive: true });
    for (const n of names) fs.renameSync(path.join(dir, n), path.join(to, n));
    await Promise.all([fsyncDir(to), fsyncDir(dir)]);
  }

  /** Where a table dropped at `deletedMs` keeps its files (relative to the data dir). */
  private trashDirOf(p: string, d: string, t: string, deletedMs: number): string {
    return path.join(path.relative(this.dataDir, this.datasetDir(p, d)), '.trash', `${fileStem(t)}@${deletedMs}`);
  }

  /** Drops a table, keeping its rows and resource as a snapshot for time-travel restore. */
  async deleteTable(p: string, d: string, t: string): Promise<void> {
    const ds = this.requireDataset(p, d);
    const entry = ds.tables[t];
    if (!entry) throw notFound(`Table ${p}:${d}.${t}`);
    const deletedMs = Date.now();
    const stem = fileStem(t);
    const trashRel = this.trashDirOf(p, d, t, deletedMs);
    // Unlink first (synchronously): requests arriving while the rows close get 404, never a fresh handle.
    delete ds.tables[t];
    this.datasetTexts.delete(ds);
    this.deletedTables.add({ projectId: p, datasetId: d, tableId: t, deletedMs, entry, trashDir: trashRel });
    await this.track(tKey(p, d, t), async () => {
      await this.closeData(p, d, t);
      await this.save();
      if (this.hasRows(entry.kind)) await this.moveTableFiles(this.datasetDir(p, d), stem, path.join(this.dataDir, trashRel));
    });
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
      td = this.newTableData(path.join(this.dataDir, x.trashDir), fileStem(x.tableId), columnsOf(schemaFieldsOf(x.entry.resource)));
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

  async setChildren(): Promise<void> {
    await this.save();
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
    while (this.saving) await this.saving;
    await this.deletedTables.close();
    this.lock?.release();
  }
}
