// Anonymous query-result tables (`_anon<project>.anon<jobId>`), which
// jobs.getQueryResults and tabledata.list page. The real service keeps them
// 24 h, so with a data dir they are persisted under `<data-dir>/.results/`
// and survive an engine restart:
//
//   .results/log/<ms>-<pid>-<r>.log                    small results (<= 50k cells), one line
//                                                       each: key, then manifest + rows
//   .results/<project>/<dataset>/<table>.json          manifest of a large result: columns,
//                                                       row count, etag, creation time, chunks
//   .results/<project>/<dataset>/<table>@<id>.<i>.chunk  its rows, one file per CHUNK_ROWS rows
//
// Rows are columnar: a small result's columns are JSON arrays in the storage
// codec (`vectorToStored`, the form WAL records use); a chunk file holds the
// raw bytes of typed-array columns and such JSON arrays for the others.
// Parquet was measured at ~1.8 s to encode 1M rows x 3 columns against
// ~0.4 s for all-JSON, and a result must be on disk before the query is
// reported done.
//
// Everything is written before `put` resolves, so a result the engine
// reported survives `kill -9` of the engine (the page cache keeps it); there
// is no fsync, a machine crash may lose results (they are a cache). A small
// result costs its query one append to an open log (~5 us); a large one is
// written chunk by chunk, asynchronously, and leaves memory once written.
// Reads go through a cache of chunks bounded by cells, so a large result is
// read back a chunk at a time as it is paged. Files older than 24 h are
// deleted (at start and hourly) and never served.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { ResultColumn } from '../planner/api.js';
import type { Stored } from '../storage/codec.js';
import { ensureDir, ensureDirSync } from '../storage/fsutil.js';
import { fileStem } from '../storage/names.js';
import { storedToVector, vectorToStored } from '../storage/vectors.js';
import type { Batch, Vector } from '../types/vector.js';

export interface ResultTable {
  readonly projectId: string;
  readonly datasetId: string;
  readonly tableId: string;
  readonly columns: readonly ResultColumn[];
  /**
   * From `get`: the rows of the requested window in batches; batches wholly
   * outside it are placeholders with the right `length` and no columns (the
   * row encoder skips them by length), so positions stay absolute.
   */
  readonly batches: readonly Batch[];
  readonly rowCount: number;
  readonly etag: string;
}

export const ANON_DATASET_PREFIX = '_anon';
/** The real service keeps anonymous result tables for 24 hours. */
export const RESULT_TTL_MS = 24 * 60 * 60 * 1000;
/** Rows per chunk file of a large result (and per read from disk). */
const CHUNK_ROWS = 65_536;
/** Results up to this many cells are written inline in their manifest, synchronously. */
const INLINE_CELLS = 50_000;
/** Cells of result rows kept in memory for reads (recently written small results, recently read chunks). */
const MAX_CACHED_CELLS = 4_000_000;
/**
 * Cached chunks and manifests kept in memory. A one-row result still costs
 * ~1.5 KB of objects, so a count bound keeps thousands of small queries from
 * growing the heap; clients read a result right after its query, and older
 * ones are read back from disk.
 */
const MAX_CACHED_CHUNKS = 1_000;
const MAX_MANIFESTS = 1_000;
const SWEEP_EVERY_MS = 60 * 60 * 1000;

interface ChunkRef {
  readonly rows: number;
  /** File name in the result's directory; absent for rows inline in the manifest. */
  readonly file?: string;
}

interface Manifest {
  readonly projectId: string;
  readonly datasetId: string;
  readonly tableId: string;
  readonly columns: readonly ResultColumn[];
  readonly rowCount: number;
  readonly etag: string;
  readonly createdMs: number;
  /** Unique per put: names the chunk files and keys the cached rows, so a rewritten result never serves old rows. */
  readonly id: string;
  readonly chunks: readonly ChunkRef[];
}

interface ManifestFile extends Manifest {
  /** Inline rows (small results): one stored-form array per column. */
  readonly data?: Stored[][];
}

export interface ResultStoreOptions {
  /** Where results are persisted; without it they live only in the bounded memory cache. */
  readonly dir?: string;
  readonly ttlMs?: number;
  readonly now?: () => number;
}

const keyOf = (p: string, d: string, t: string): string => `${p}\u0000${d}\u0000${t}`;
const cellsOf = (rows: number, columns: number): number => rows * Math.max(1, columns);

export class ResultStore {
  private readonly dir: string | undefined;
  private readonly ttlMs: number;
  private readonly now: () => number;
  /** LRU of manifests by table key. */
  private manifests = new Map<string, Manifest>();
  /** LRU of chunk rows by `<manifest id>/<chunk index>`, bounded by `cells`. */
  private chunks = new Map<string, { batches: readonly Batch[]; cells: number; key: string }>();
  private cells = 0;
  /** Rows of results whose files are still being written (not evictable). */
  private pending = new Map<string, readonly Batch[]>();
  private readonly log: ResultLog | undefined;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(opts: ResultStoreOptions = {}) {
    this.dir = opts.dir;
    this.ttlMs = opts.ttlMs ?? RESULT_TTL_MS;
    this.now = opts.now ?? Date.now;
    if (this.dir) {
      ResultStore.byDir.set(this.dir, this);
      this.log = new ResultLog(path.join(this.dir, 'log'), this.now, this.ttlMs);
      // Not on the start-up path: the first sweep runs a few seconds in.
      this.sweeper = setTimeout(() => this.sweepLoop(), 5_000);
      this.sweeper.unref();
    }
  }

  /** The newest store of each results dir in this process. */
  private static byDir = new Map<string, ResultStore>();

  /**
   * The store the engine keeps a data dir's results in (created by
   * `engineHandlers`), so that the Storage Read API shares its log, index and
   * cache; one is opened if there is none yet.
   */
  static forDataDir(dataDir: string): ResultStore {
    const dir = path.join(dataDir, '.results');
    return ResultStore.byDir.get(dir) ?? new ResultStore({ dir });
  }

  static isAnonDataset(datasetId: string): boolean {
    return datasetId.startsWith(ANON_DATASET_PREFIX);
  }

  static datasetFor(projectId: string): string {
    return `${ANON_DATASET_PREFIX}${projectId.replace(/[^A-Za-z0-9_]/g, '_')}`;
  }

  /** Stops the hourly sweep (tests). */
  close(): void {
    clearTimeout(this.sweeper);
    this.log?.close();
  }

  /**
   * Stores a result; resolves once it is on disk (at once without a dir).
   * A write failure is logged and the result stays in the memory cache: the
   * query itself succeeded.
   */
  async put(t: ResultTable): Promise<void> {
    const key = keyOf(t.projectId, t.datasetId, t.tableId);
    const createdMs = this.now();
    const nc = t.columns.length;
    const columns = t.columns.map((c) => ({ name: c.name, type: c.type }));
    const id = `${createdMs}-${Math.random().toString(36).slice(2, 10)}`;
    const base = { projectId: t.projectId, datasetId: t.datasetId, tableId: t.tableId, columns, rowCount: t.rowCount, etag: t.etag, createdMs, id };
    this.forget(key);
    if (!this.dir || cellsOf(t.rowCount, nc) <= INLINE_CELLS) {
      const m: Manifest = { ...base, chunks: [{ rows: t.rowCount }] };
      this.rememberManifest(key, m);
      this.cacheChunk(key, m, 0, t.batches, cellsOf(t.rowCount, nc));
      if (!this.log) return;
      try {
        const data = t.columns.map((_, c) => t.batches.flatMap((b) => vectorToStored(b.columns[c]!)));
        this.log.append(key, JSON.stringify({ ...m, data } satisfies ManifestFile));
      } catch (e) {
        console.error(`engine: cannot persist result ${t.datasetId}.${t.tableId}: ${(e as Error).message}`);
      }
      return;
    }
    // Large: chunk files first, the manifest (which makes them visible) last.
    const m: Manifest = { ...base, chunks: groupChunks(t.batches).map((g) => ({ rows: g.rows })) };
    this.rememberManifest(key, m);
    this.pending.set(key, t.batches);
    this.log?.drop(key);
    try {
      const file = this.manifestPath(t);
      await ensureDir(path.dirname(file));
      const stem = `${path.basename(file, '.json')}@${id}`;
      const refs: ChunkRef[] = [];
      for (const [i, g] of groupChunks(t.batches).entries()) {
        const name = `${stem}.${i}.chunk`;
        await fsp.writeFile(path.join(path.dirname(file), name), encodeChunk(t.columns, g.batches, g.rows));
        await new Promise((r) => setImmediate(r)); // other calls get a turn between chunks
        refs.push({ rows: g.rows, file: name });
      }
      const written: Manifest = { ...base, chunks: refs };
      await this.writeAsync(file, JSON.stringify(written satisfies ManifestFile));
      this.rememberManifest(key, written);
    } catch (e) {
      console.error(`engine: cannot persist result ${t.datasetId}.${t.tableId}: ${(e as Error).message}`);
      // Kept readable from memory (evictable) instead.
      const mem: Manifest = { ...base, chunks: [{ rows: t.rowCount }] };
      this.rememberManifest(key, mem);
      this.cacheChunk(key, mem, 0, t.batches, cellsOf(t.rowCount, nc));
    } finally {
      this.pending.delete(key);
    }
  }

  /**
   * The result table with the rows of [start, start + count) loaded (see
   * `ResultTable.batches`); undefined when there is none or it expired.
   */
  async get(projectId: string, datasetId: string, tableId: string, start = 0, count = Number.POSITIVE_INFINITY): Promise<ResultTable | undefined> {
    const key = keyOf(projectId, datasetId, tableId);
    const m = this.manifests.get(key) ?? (await this.loadManifest(projectId, datasetId, tableId));
    if (!m) return undefined;
    if (this.now() - m.createdMs >= this.ttlMs) {
      this.forget(key);
      return undefined;
    }
    this.manifests.delete(key);
    this.manifests.set(key, m);
    const out = { projectId, datasetId, tableId, columns: m.columns, rowCount: m.rowCount, etag: m.etag };
    const pending = this.pending.get(key);
    if (pending) return { ...out, batches: pending };
    const batches: Batch[] = [];
    const end = start + Math.max(0, count);
    let off = 0;
    for (const [i, c] of m.chunks.entries()) {
      const inWindow = off < end && off + c.rows > start;
      off += c.rows;
      if (!inWindow) {
        batches.push({ length: c.rows, columns: [] });
        continue;
      }
      const rows = await this.chunk(m, key, i);
      if (!rows) return undefined; // files gone (expired meanwhile, removed by hand)
      batches.push(...rows);
    }
    return { ...out, batches };
  }

  private async chunk(m: Manifest, key: string, i: number): Promise<readonly Batch[] | undefined> {
    const ck = `${m.id}/${i}`;
    const hit = this.chunks.get(ck);
    if (hit) {
      this.chunks.delete(ck);
      this.chunks.set(ck, hit);
      return hit.batches;
    }
    if (!this.dir) return undefined;
    const ref = m.chunks[i]!;
    let batch: Batch;
    try {
      if (ref.file) batch = decodeChunk(m.columns, await fsp.readFile(path.join(path.dirname(this.manifestPath(m)), ref.file)), ref.rows);
      else {
        const data = (await this.log?.read(key))?.data;
        if (!data) return undefined;
        batch = { length: ref.rows, columns: m.columns.map((c, ci) => storedToVector(c.type, data[ci] ?? [])) };
      }
    } catch {
      return undefined;
    }
    this.cacheChunk(key, m, i, [batch], cellsOf(ref.rows, m.columns.length));
    return [batch];
  }

  private async loadManifest(p: string, d: string, t: string): Promise<Manifest | undefined> {
    if (!this.dir || !this.log) return undefined;
    const key = keyOf(p, d, t);
    let f: ManifestFile | undefined;
    try {
      // A small result's record in the log, else a large result's manifest file.
      f = await this.log.read(key);
      f ??= JSON.parse(await fsp.readFile(this.manifestPath({ projectId: p, datasetId: d, tableId: t }), 'utf8')) as ManifestFile;
    } catch {
      return undefined; // none, or torn by a crash: as if never written
    }
    const m: Manifest = { projectId: p, datasetId: d, tableId: t, columns: f.columns, rowCount: f.rowCount, etag: f.etag, createdMs: f.createdMs, id: f.id, chunks: f.chunks };
    this.rememberManifest(key, m);
    // A log record carries the rows too: cached now rather than read again.
    const data = f.data;
    if (data) this.cacheChunk(key, m, 0, [{ length: m.rowCount, columns: m.columns.map((c, ci) => storedToVector(c.type, data[ci] ?? [])) }], cellsOf(m.rowCount, m.columns.length));
    return m;
  }

  private rememberManifest(key: string, m: Manifest): void {
    this.manifests.delete(key);
    this.manifests.set(key, m);
    for (const k of this.manifests.keys()) {
      if (this.manifests.size <= MAX_MANIFESTS) break;
      // Without a dir the manifest is the only way to the rows: they go with it.
      if (!this.dir) this.dropChunks(k);
      this.manifests.delete(k);
    }
  }

  /** Caches rows; evicts least recently used chunks, never the one just added. */
  private cacheChunk(key: string, m: Manifest, i: number, batches: readonly Batch[], cells: number): void {
    const ck = `${m.id}/${i}`;
    const old = this.chunks.get(ck);
    if (old) this.cells -= old.cells;
    this.chunks.delete(ck);
    this.chunks.set(ck, { batches, cells, key });
    this.cells += cells;
    for (const [k, v] of this.chunks) {
      if ((this.cells <= MAX_CACHED_CELLS && this.chunks.size <= MAX_CACHED_CHUNKS) || k === ck) break;
      this.chunks.delete(k);
      this.cells -= v.cells;
      // Without a dir an evicted result is gone: its manifest too.
      if (!this.dir) this.manifests.delete(v.key);
    }
  }

  private dropChunks(key: string): void {
    const m = this.manifests.get(key);
    if (!m) return;
    for (let i = 0; i < m.chunks.length; i++) {
      const ck = `${m.id}/${i}`;
      const v = this.chunks.get(ck);
      if (v) {
        this.cells -= v.cells;
        this.chunks.delete(ck);
      }
    }
  }

  private forget(key: string): void {
    this.dropChunks(key);
    this.manifests.delete(key);
  }

  private manifestPath(t: { projectId: string; datasetId: string; tableId: string }): string {
    return path.join(this.dir!, fileStem(t.projectId), fileStem(t.datasetId), `${fileStem(t.tableId)}.json`);
  }

  private async writeAsync(file: string, text: string): Promise<void> {
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`;
    await fsp.writeFile(tmp, text);
    await fsp.rename(tmp, file);
  }

  private sweepLoop(): void {
    void this.sweep().finally(() => {
      this.sweeper = setTimeout(() => this.sweepLoop(), SWEEP_EVERY_MS);
      this.sweeper.unref();
    });
  }

  /**
   * Deletes result files older than the TTL (files are never rewritten, so
   * mtime is their creation time; chunks of a result that was overwritten or
   * whose write a crash cut short go the same way), and temp files of other
   * processes. Returns how many files were deleted.
   */
  async sweep(): Promise<number> {
    if (!this.dir) return 0;
    const cutoff = this.now() - this.ttlMs;
    let deleted = 0;
    const walk = async (dir: string): Promise<void> => {
      let entries: fs.Dirent[];
      try {
        entries = await fsp.readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) {
          await walk(p);
          continue;
        }
        const st = await fsp.stat(p).catch(() => undefined);
        if (!st) continue;
        const staleTmp = e.name.endsWith('.tmp') && !e.name.includes(`.${process.pid}.`);
        if (st.mtimeMs < cutoff || staleTmp) {
          await fsp.rm(p, { force: true });
          if (e.name.endsWith('.log')) this.log?.forgetFile(e.name);
          deleted++;
        }
      }
    };
    await walk(this.dir);
    for (const [k, m] of this.manifests) if (m.createdMs <= cutoff) this.forget(k);
    return deleted;
  }
}

/** Pages encoded ahead kept at once (each up to the gateway's 10 MB page bound), and for how long. */
const AHEAD_PAGES = 4;
const AHEAD_TTL_MS = 30_000;

/**
 * Pages encoded ahead of their request: a client paging a large result asks
 * for the page after the one it just got, so that page is written while the
 * client still reads the last one (on another core), instead of after it
 * asks. Keyed by everything that shapes a page; a few at once, each kept a
 * short while. `P`: the page as the caller serves it.
 */
export class PagesAhead<P> {
  private readonly pages = new Map<string, { page: Promise<P | undefined>; timer: NodeJS.Timeout }>();

  /** The page encoded ahead under `key` (undefined: none; a promise of undefined: its encoding failed), taken out. */
  take(key: string): Promise<P | undefined> | undefined {
    const e = this.pages.get(key);
    if (!e) return undefined;
    this.pages.delete(key);
    clearTimeout(e.timer);
    return e.page;
  }

  /** Starts encoding the page of `key` (unless it is under way), dropping the oldest page past AHEAD_PAGES. */
  add(key: string, make: () => Promise<P>): void {
    if (this.pages.has(key)) return;
    for (const [k, e] of this.pages) {
      if (this.pages.size < AHEAD_PAGES) break;
      clearTimeout(e.timer);
      this.pages.delete(k);
    }
    const page = make().catch(() => undefined);
    const timer = setTimeout(() => {
      if (this.pages.get(key)?.page === page) this.pages.delete(key);
    }, AHEAD_TTL_MS);
    timer.unref();
    this.pages.set(key, { page, timer });
  }
}

/** Consecutive batches grouped into chunks of about CHUNK_ROWS rows. */
function groupChunks(batches: readonly Batch[]): { rows: number; batches: Batch[] }[] {
  const out: { rows: number; batches: Batch[] }[] = [];
  let cur: { rows: number; batches: Batch[] } | undefined;
  for (const b of batches) {
    if (b.length === 0) continue;
    if (!cur || cur.rows >= CHUNK_ROWS) {
      cur = { rows: 0, batches: [] };
      out.push(cur);
    }
    cur.batches.push(b);
    cur.rows += b.length;
  }
  return out;
}

/** A log rotates after this long or this size; the sweep deletes it once its newest record expired. */
const LOG_ROTATE_MS = 60 * 60 * 1000;
const LOG_MAX_BYTES = 32 * 1024 * 1024;
/** Small results findable in the logs; beyond this many the oldest are forgotten before their 24 h (~110 bytes each). */
const MAX_LOGGED = 200_000;

interface LogRef {
  readonly file: string;
  readonly offset: number;
  readonly length: number;
}

/**
 * Small results as lines `<key as JSON>\t<ManifestFile JSON>\n` appended to
 * one log file at a time (a new one per engine run, hourly, and past 32 MB).
 * An append is one write(2) to an open file, ~5 us; creating a file per
 * result measured 0.03-1.4 ms on a shared disk, on every small query's path.
 * The index (key -> line) is rebuilt at start by scanning the logs, in the
 * background: reads wait for it, writes do not.
 */
class ResultLog {
  private index = new Map<string, LogRef>();
  /** Keys written by this run while the start-up scan runs: the scan must not shadow them with older lines. */
  private written: Set<string> | null = new Set();
  private fd: number | undefined;
  private file = '';
  private size = 0;
  private openedMs = 0;
  readonly ready: Promise<void>;

  constructor(
    private readonly dir: string,
    private readonly now: () => number,
    private readonly ttlMs: number,
  ) {
    this.ready = this.scan().finally(() => (this.written = null));
  }

  append(key: string, record: string): void {
    const now = this.now();
    if (this.fd === undefined || this.size > LOG_MAX_BYTES || now - this.openedMs > LOG_ROTATE_MS) this.rotate(now);
    const line = Buffer.from(`${JSON.stringify(key)}\t${record}\n`);
    for (let off = 0; off < line.length; ) off += fs.writeSync(this.fd!, line, off);
    this.remember(key, { file: this.file, offset: this.size, length: line.length });
    this.written?.add(key);
    this.size += line.length;
  }

  drop(key: string): void {
    this.index.delete(key);
    this.written?.add(key);
  }

  async read(key: string): Promise<ManifestFile | undefined> {
    await this.ready;
    const ref = this.index.get(key);
    if (!ref) return undefined;
    const h = await fsp.open(path.join(this.dir, ref.file), 'r');
    try {
      const buf = Buffer.alloc(ref.length);
      await h.read(buf, 0, ref.length, ref.offset);
      const tab = buf.indexOf(9);
      return JSON.parse(buf.toString('utf8', tab + 1, buf.length - 1)) as ManifestFile;
    } finally {
      await h.close();
    }
  }

  /** A log file the sweep deleted: its lines are gone. */
  forgetFile(name: string): void {
    for (const [k, ref] of this.index) if (ref.file === name) this.index.delete(k);
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private rotate(now: number): void {
    this.close();
    ensureDirSync(this.dir);
    // Never appended to after this run: a line a kill cut short stays the last one.
    this.file = `${now}-${process.pid}-${Math.random().toString(36).slice(2, 8)}.log`;
    this.fd = fs.openSync(path.join(this.dir, this.file), 'a');
    this.size = 0;
    this.openedMs = now;
  }

  private remember(key: string, ref: LogRef): void {
    this.index.delete(key);
    this.index.set(key, ref);
    if (this.index.size > MAX_LOGGED) this.index.delete(this.index.keys().next().value!);
  }

  /** Indexes the lines of earlier runs' logs, oldest first (a later line of a key wins). */
  private async scan(): Promise<void> {
    let names: string[];
    try {
      names = (await fsp.readdir(this.dir)).filter((n) => n.endsWith('.log')).sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
    } catch {
      return; // no logs yet
    }
    const found = new Map<string, LogRef>();
    const cutoff = this.now() - this.ttlMs;
    for (const name of names) {
      if (name === this.file) continue;
      let buf: Buffer;
      try {
        const file = path.join(this.dir, name);
        if ((await fsp.stat(file)).mtimeMs < cutoff) continue; // expired as a whole (the sweep deletes it)
        buf = await fsp.readFile(file);
      } catch {
        continue;
      }
      // A line without its newline is a write a kill cut short: dropped.
      for (let pos = 0; pos < buf.length; ) {
        const nl = buf.indexOf(10, pos);
        if (nl < 0) break;
        const tab = buf.indexOf(9, pos);
        if (tab > pos && tab < nl) {
          try {
            found.set(JSON.parse(buf.toString('utf8', pos, tab)) as string, { file: name, offset: pos, length: nl + 1 - pos });
          } catch {
            // not a line of ours
          }
        }
        pos = nl + 1;
      }
      await new Promise((r) => setImmediate(r));
    }
    // Older lines first, this run's after them (the bound drops the oldest).
    const merged = new Map<string, LogRef>();
    for (const [k, ref] of found) if (!this.written?.has(k)) merged.set(k, ref);
    for (const [k, ref] of this.index) {
      merged.delete(k);
      merged.set(k, ref);
    }
    for (const k of merged.keys()) {
      if (merged.size <= MAX_LOGGED) break;
      merged.delete(k);
    }
    this.index = merged;
  }
}

// ---------------------------------------------------------------- chunk files

type ChunkEncoding = 'f64' | 'i64' | 'i32' | 'u8' | 'json';

interface ChunkColumn {
  readonly enc: ChunkEncoding;
  /** A null flag byte per row precedes the data. */
  readonly nulls: boolean;
  readonly bytes: number;
}

/** The typed-array encoding every vector of a column shares, else JSON. */
function encodingOf(vs: readonly Vector[]): ChunkEncoding {
  const d = vs[0]?.data;
  const enc: ChunkEncoding = d instanceof Float64Array ? 'f64' : d instanceof BigInt64Array ? 'i64' : d instanceof Int32Array ? 'i32' : d instanceof Uint8Array ? 'u8' : 'json';
  const same = enc === 'f64' ? Float64Array : enc === 'i64' ? BigInt64Array : enc === 'i32' ? Int32Array : enc === 'u8' ? Uint8Array : null;
  return same && vs.every((v) => v.data instanceof same) ? enc : 'json';
}

const TYPED = { f64: Float64Array, i64: BigInt64Array, i32: Int32Array, u8: Uint8Array } as const;

/**
 * A large result's chunk file: a JSON header line, then per column its null
 * flags and data. Columns held in typed arrays are written as their bytes
 * (free, and exact: NaN, -0, int64 beyond 2^53); the rest as a storage-codec
 * JSON array (`vectorToStored`).
 */
function encodeChunk(columns: readonly ResultColumn[], batches: readonly Batch[], rows: number): Buffer {
  const header: ChunkColumn[] = [];
  const parts: Buffer[] = [];
  columns.forEach((_, c) => {
    const vs = batches.map((b) => b.columns[c]!);
    const enc = encodingOf(vs);
    let nulls: Uint8Array | null = null;
    if (enc !== 'json' && vs.some((v) => v.nulls)) {
      nulls = new Uint8Array(rows);
      let off = 0;
      for (const v of vs) {
        if (v.nulls) nulls.set(v.nulls.subarray(0, v.length), off);
        off += v.length;
      }
      parts.push(Buffer.from(nulls.buffer, nulls.byteOffset, nulls.byteLength));
    }
    let data: Buffer;
    if (enc === 'json') data = Buffer.from(JSON.stringify(vs.flatMap((v) => vectorToStored(v))));
    else {
      const arr = new TYPED[enc](rows);
      let off = 0;
      for (const v of vs) {
        (arr as Float64Array).set((v.data as Float64Array).subarray(0, v.length), off);
        off += v.length;
      }
      data = Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
    }
    parts.push(data);
    header.push({ enc, nulls: nulls !== null, bytes: data.length });
  });
  return Buffer.concat([Buffer.from(JSON.stringify(header) + '\n'), ...parts]);
}

function decodeChunk(columns: readonly ResultColumn[], buf: Buffer, rows: number): Batch {
  const nl = buf.indexOf(10);
  const header = JSON.parse(buf.toString('utf8', 0, nl)) as ChunkColumn[];
  let off = nl + 1;
  const vectors = columns.map((c, i): Vector => {
    const h = header[i]!;
    let nulls: Uint8Array | null = null;
    if (h.nulls) {
      nulls = new Uint8Array(rows);
      nulls.set(buf.subarray(off, off + rows));
      off += rows;
    }
    const bytes = buf.subarray(off, off + h.bytes);
    off += h.bytes;
    if (h.enc === 'json') return storedToVector(c.type, JSON.parse(bytes.toString('utf8')) as Stored[]);
    // Copied into a buffer of its own: typed arrays need aligned offsets.
    const copy = new Uint8Array(h.bytes);
    copy.set(bytes);
    return { type: c.type, length: rows, data: new TYPED[h.enc](copy.buffer), nulls };
  });
  return { length: rows, columns: vectors };
}
