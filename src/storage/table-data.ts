// Row storage of one table: parquet fragments + a write-ahead log on disk, the
// rows as column batches in memory once loaded. See README.md "Durability".
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { Column } from '../types/schema.js';
import { concatVectors, sliceVector, type Batch, type Vector } from '../types/vector.js';
import type { Stored } from './codec.js';
import { atomicWrite, fsyncDir } from './fsutil.js';
import { Gate } from './gate.js';
import { rowsToBatch } from './json-rows.js';
import { encodeFragment, readFragment } from './parquet.js';
import { nullVector, storedToVector, vectorToStored } from './vectors.js';
import { encodeRecord, readWalSync, WalWriter } from './wal.js';

interface FragmentInfo {
  readonly file: string;
  readonly rows: number;
  readonly lastLsn: number;
}

interface Sidecar {
  readonly version: 1;
  readonly columns: readonly { name: string; type: string }[];
  readonly fragments: readonly FragmentInfo[];
  /** Every WAL record with lsn <= flushedLsn is already in a fragment. */
  readonly flushedLsn: number;
  readonly modifiedMs: number;
}

const EMPTY_SIDECAR: Sidecar = { version: 1, columns: [], fragments: [], flushedLsn: 0, modifiedMs: 0 };

/** Compaction thresholds: the WAL is folded into a fragment past either bound, or when idle. */
export const COMPACT_WAL_BYTES = Number(process.env.WAREHOUSE_COMPACT_WAL_BYTES) || 32 * 1024 * 1024;
export const COMPACT_IDLE_MS = Number(process.env.WAREHOUSE_COMPACT_IDLE_MS) || 1500;
const MAX_SMALL_FRAGMENTS = 8;
const SMALL_FRAGMENT_ROWS = 100_000;
/** Appends of at least this many rows skip the WAL and become a fragment directly. */
const BULK_ROWS = 20_000;

export class TableData {
  private columns: readonly Column[];
  private sidecar: Sidecar = EMPTY_SIDECAR;
  private chunks: Batch[] = [];
  /** Index of the first chunk not yet in a fragment. */
  private unflushedFrom = 0;
  private rows = 0;
  private nextLsn = 1;
  private wal: WalWriter | null = null;
  private loading: Promise<void> | null = null;
  private readonly gate = new Gate();
  private idleTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Bumps on every change; the etag of tabledata.list. */
  version = 0;
  modifiedMs = 0;
  private countHint: number | null = null;

  constructor(
    private dir: string,
    readonly stem: string,
    columns: readonly Column[],
    private readonly onError: (e: unknown) => void = (e) => console.error('table storage error', e),
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

  /** Every file this table owns (for moving it to the trash). */
  ownFiles(): string[] {
    let names: string[] = [];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return [];
    }
    return names.filter((n) => n === `${this.stem}.meta.json` || n === `${this.stem}.wal` || n.startsWith(`${this.stem}@`)).map((n) => path.join(this.dir, n));
  }

  /** Creates the sidecar of a new, empty table. */
  async create(): Promise<void> {
    const made = await fsp.mkdir(this.dir, { recursive: true });
    if (made !== undefined) {
      // New <project>/<dataset> directories: make their entries durable up to the data dir.
      for (let d = this.dir; d.length >= made.length; d = path.dirname(d)) await fsyncDir(path.dirname(d));
    }
    this.sidecar = { ...EMPTY_SIDECAR, columns: this.columns.map(colInfo), modifiedMs: Date.now() };
    await atomicWrite(this.sidecarFile, JSON.stringify(this.sidecar));
    this.countHint = 0;
  }

  private readSidecarSync(): Sidecar {
    try {
      return JSON.parse(fs.readFileSync(this.sidecarFile, 'utf8')) as Sidecar;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY_SIDECAR;
      throw e;
    }
  }

  /** Row count without loading the rows: fragment counts plus the WAL's record headers. */
  rowCountSync(): number {
    if (this.isLoaded) return this.rows;
    if (this.countHint !== null) return this.countHint;
    const sc = this.readSidecarSync();
    let n = sc.fragments.reduce((s, f) => s + f.rows, 0);
    for (const r of readWalSync(this.walFile, true).records) if (r.lsn > sc.flushedLsn) n += r.rowCount;
    this.countHint = n;
    this.modifiedMs = sc.modifiedMs;
    return n;
  }

  load(): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`table storage ${this.stem} is closed`));
    if (this.isLoaded) return Promise.resolve();
    this.loading ??= this.doLoad().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async doLoad(): Promise<void> {
    await fsp.mkdir(this.dir, { recursive: true });
    const sc = this.readSidecarSync();
    this.sidecar = sc;
    this.modifiedMs = sc.modifiedMs;
    // Orphans: temp files and fragments a crash left before the sidecar listed them.
    const listed = new Set(sc.fragments.map((f) => f.file));
    for (const n of fs.readdirSync(this.dir)) {
      if (n.startsWith(`${this.stem}@`) && !listed.has(n)) await fsp.rm(path.join(this.dir, n), { force: true });
      else if (n.startsWith(`${this.stem}.`) && n.endsWith('.tmp')) await fsp.rm(path.join(this.dir, n), { force: true });
    }
    const chunks: Batch[] = [];
    for (const f of sc.fragments) {
      const { batch } = await readFragment(path.join(this.dir, f.file), this.columns);
      chunks.push(batch);
    }
    const unflushedFrom = chunks.length;
    const scan = readWalSync(this.walFile);
    let maxLsn = sc.flushedLsn;
    for (const r of scan.records) {
      if (r.lsn <= sc.flushedLsn) continue;
      chunks.push(this.decodeRecord(r.body, r.rowCount));
      maxLsn = Math.max(maxLsn, r.lsn);
    }
    const wal = new WalWriter(this.walFile);
    await wal.open(scan.validLength, scan.records.length);
    this.chunks = chunks;
    this.unflushedFrom = unflushedFrom;
    this.rows = chunks.reduce((s, b) => s + b.length, 0);
    this.nextLsn = maxLsn + 1;
    this.wal = wal;
    this.countHint = null;
    if (wal.byteSize > 0) this.scheduleIdleCompaction();
  }

  private decodeRecord(body: Buffer, rowCount: number): Batch {
    const rec = JSON.parse(body.toString('utf8')) as { n: string[]; c?: Stored[][]; r?: { json?: unknown }[] };
    if (rec.r) return rowsToBatch(this.columns, new Set(rec.n.map((n) => n.toLowerCase())), rec.r);
    const byName = new Map<string, number>();
    rec.n.forEach((n, i) => byName.set(n.toLowerCase(), i));
    const columns = this.columns.map((c) => {
      const i = byName.get(c.name.toLowerCase());
      return i === undefined ? nullVector(c.type, rowCount) : storedToVector(c.type, rec.c![i]!);
    });
    return { length: rowCount, columns };
  }

  get schema(): readonly Column[] {
    return this.columns;
  }

  get rowCount(): number {
    return this.isLoaded ? this.rows : this.rowCountSync();
  }

  /** Loaded chunks; callers must `load()` first. The array is replaced, never mutated in place, except by appends. */
  snapshot(): readonly Batch[] {
    return this.chunks.slice();
  }

  /**
   * Appends one batch (columns in schema order) durably. Resolves once the
   * WAL record is on disk. `rawRows`: the insertAll `rows` JSON text the batch
   * was converted from; logged as is (cheaper than re-encoding the columns)
   * and converted again on replay.
   */
  async append(batch: Batch, rawRows?: string): Promise<void> {
    if (batch.length === 0) return;
    await this.load();
    if (batch.length >= BULK_ROWS && rawRows === undefined) {
      // Bulk appends (CTAS, INSERT ... SELECT, loads) go straight to a fragment:
      // logging them first would encode every row twice.
      await this.foldIntoFragment(batch);
      return;
    }
    await this.gate.runShared(async () => {
      const wal = this.wal!;
      const lsn = this.nextLsn++;
      const names = JSON.stringify(this.columns.map((c) => c.name));
      const json = rawRows !== undefined ? `{"n":${names},"r":${rawRows}}` : `{"n":${names},"c":${JSON.stringify(batch.columns.map(vectorToStored))}}`;
      await wal.append(encodeRecord(lsn, batch.length, json));
      this.chunks.push(batch);
      this.rows += batch.length;
      this.version++;
      this.modifiedMs = Date.now();
    });
    const wal = this.wal;
    if (wal && wal.byteSize > COMPACT_WAL_BYTES) this.compactSoon();
    else this.scheduleIdleCompaction();
  }

  private scheduleIdleCompaction(): void {
    if (this.closed) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      this.compactSoon();
    }, COMPACT_IDLE_MS);
    this.idleTimer.unref();
  }

  private compactSoon(): void {
    this.compact().catch(this.onError);
  }

  private fragmentName(lastLsn: number): string {
    return `${this.stem}@${String(lastLsn).padStart(12, '0')}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.parquet`;
  }

  private async writeFragment(batches: readonly Batch[], lastLsn: number): Promise<FragmentInfo> {
    const file = this.fragmentName(lastLsn);
    const rows = batches.reduce((s, b) => s + b.length, 0);
    const img = await encodeFragment(this.columns, batches, { 'warehouse.lastLsn': String(lastLsn), 'warehouse.columns': JSON.stringify(this.columns.map(colInfo)) });
    const tmp = path.join(this.dir, `${this.stem}.${process.pid}.frag.tmp`);
    const h = await fsp.open(tmp, 'w');
    try {
      await h.writeFile(img);
      await h.sync();
    } finally {
      await h.close();
    }
    await fsp.rename(tmp, path.join(this.dir, file));
    await fsyncDir(this.dir);
    return { file, rows, lastLsn };
  }

  private async commitSidecar(fragments: readonly FragmentInfo[], flushedLsn: number): Promise<void> {
    this.sidecar = { version: 1, columns: this.columns.map(colInfo), fragments, flushedLsn, modifiedMs: this.modifiedMs || Date.now() };
    await atomicWrite(this.sidecarFile, JSON.stringify(this.sidecar));
  }

  /** Folds the WAL into a new fragment (and merges small fragments), then empties the WAL. */
  compact(): Promise<void> {
    if (!this.isLoaded || this.closed) return Promise.resolve();
    return this.foldIntoFragment(null);
  }

  /**
   * Writes the unflushed chunks (plus `extra`, appended after them) as one
   * fragment, commits the sidecar, empties the WAL. Durable when it resolves.
   */
  private foldIntoFragment(extra: Batch | null): Promise<void> {
    return this.gate.runExclusive(async () => {
      const wal = this.wal;
      if (!wal || this.closed) {
        if (extra) throw new Error(`table storage ${this.stem} is closed`);
        return;
      }
      await wal.drain();
      const pending = this.chunks.slice(this.unflushedFrom);
      if (extra) {
        pending.push(extra);
        this.nextLsn++;
      }
      if (pending.length === 0) {
        if (wal.byteSize > 0) await wal.truncate();
        return;
      }
      const lastLsn = this.nextLsn - 1;
      const merged = mergeBatches(this.columns, pending);
      const frag = await this.writeFragment([merged], lastLsn);
      let fragments = [...this.sidecar.fragments, frag];
      let chunks = [...this.chunks.slice(0, this.unflushedFrom), merged];
      const obsolete: string[] = [];
      // Small fragments (idle-time WAL folds) are merged once 8 of them trail
      // the list; fragments of SMALL_FRAGMENT_ROWS or more are never rewritten
      // (except by replace), so bulk loads are encoded once.
      let k = fragments.length;
      while (k > 0 && fragments[k - 1]!.rows < SMALL_FRAGMENT_ROWS) k--;
      if (fragments.length - k >= MAX_SMALL_FRAGMENTS) {
        const tail = chunks.slice(k);
        const big = mergeBatches(this.columns, tail);
        const bigFrag = await this.writeFragment([big], lastLsn);
        obsolete.push(...fragments.slice(k).map((f) => f.file));
        fragments = [...fragments.slice(0, k), bigFrag];
        chunks = [...chunks.slice(0, k), big];
      }
      if (extra) this.modifiedMs = Date.now();
      await this.commitSidecar(fragments, lastLsn);
      await wal.truncate();
      for (const f of obsolete) await fsp.rm(path.join(this.dir, f), { force: true });
      this.chunks = chunks;
      this.unflushedFrom = chunks.length;
      if (extra) {
        this.rows += extra.length;
        this.version++;
      }
    });
  }

  /** Replaces every row (DML results, WRITE_TRUNCATE), optionally with a new schema. */
  async replace(batches: readonly Batch[], columns?: readonly Column[]): Promise<void> {
    await this.load();
    await this.gate.runExclusive(async () => {
      const wal = this.wal!;
      await wal.drain();
      if (columns) this.columns = columns;
      const rows = batches.reduce((s, b) => s + b.length, 0);
      const lastLsn = this.nextLsn++;
      const old = this.sidecar.fragments.map((f) => f.file);
      const merged = rows > 0 ? mergeBatches(this.columns, batches) : null;
      const fragments = merged ? [await this.writeFragment([merged], lastLsn)] : [];
      this.modifiedMs = Date.now();
      await this.commitSidecar(fragments, lastLsn);
      await wal.truncate();
      for (const f of old) await fsp.rm(path.join(this.dir, f), { force: true });
      this.chunks = merged ? [merged] : [];
      this.unflushedFrom = this.chunks.length;
      this.rows = rows;
      this.version++;
    });
  }

  /** New schema keeping rows: columns matched by name, new ones NULL. Same-named columns keep their vectors. */
  async alter(columns: readonly Column[]): Promise<void> {
    await this.load();
    await this.gate.runExclusive(async () => {
      const byName = new Map(this.columns.map((c, i) => [c.name.toLowerCase(), i]));
      this.chunks = this.chunks.map((b) => ({
        length: b.length,
        columns: columns.map((c) => {
          const i = byName.get(c.name.toLowerCase());
          return i === undefined ? nullVector(c.type, b.length) : { ...b.columns[i]!, type: c.type };
        }),
      }));
      this.columns = columns;
      this.version++;
      await this.commitSidecar(this.sidecar.fragments, this.sidecar.flushedLsn);
    });
  }

  /** Folds everything into fragments (clean shutdown). */
  async flush(): Promise<void> {
    if (this.isLoaded) await this.compact();
  }

  async close(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.loading) await this.loading.catch(() => undefined);
    await this.gate.runExclusive(async () => {
      this.closed = true;
      const wal = this.wal;
      this.wal = null;
      if (wal) await wal.close();
    });
  }

  /** Points the table at another directory after its files moved (dataset undelete). */
  relocate(dir: string): void {
    this.dir = dir;
  }
}

function colInfo(c: Column): { name: string; type: string } {
  return { name: c.name, type: JSON.stringify(c.type) };
}

/** One batch of all rows, so scans and later merges touch few large vectors. */
export function mergeBatches(columns: readonly Column[], batches: readonly Batch[]): Batch {
  if (batches.length === 1) return batches[0]!;
  const length = batches.reduce((s, b) => s + b.length, 0);
  const cols: Vector[] = columns.map((c, i) => concatVectors(c.type, batches.map((b) => b.columns[i]!)));
  return { length, columns: cols };
}

/** Rows [start, end) of consecutive batches as batches sharing memory. */
export function sliceBatches(batches: readonly Batch[], start: number, end: number): Batch[] {
  const out: Batch[] = [];
  let off = 0;
  for (const b of batches) {
    const bs = off, be = off + b.length;
    off = be;
    if (be <= start || bs >= end) continue;
    const s = Math.max(start, bs) - bs, e = Math.min(end, be) - bs;
    out.push(s === 0 && e === b.length ? b : { length: e - s, columns: b.columns.map((v) => sliceVector(v, s, e)) });
  }
  return out;
}
