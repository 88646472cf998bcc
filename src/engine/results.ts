// Anonymous query-result tables (`_anon<project>.anon<jobId>`), which
// jobs.getQueryResults and tabledata.list page. The real service keeps them
// 24 h, so with a data dir they are persisted under `<data-dir>/.results/`
// and survive an engine restart:
//
//   .results/<project>/<dataset>/<table>.json          manifest: columns, row count, etag,
//                                                       creation time, chunk list; small
//                                                       results carry their rows inline
//   .results/<project>/<dataset>/<table>@<ms>-<r>.<i>.chunk  rows of a large result, one
//                                                       file per CHUNK_ROWS rows
//
// Rows are columnar JSON in the storage codec (`vectorToStored`, the form WAL
// records use): one array per column. Parquet was measured at ~1.8 s to
// encode 1M rows x 3 columns against ~0.4 s for this, and a result must be on
// disk before the query is reported done.
//
// Every file is written before `put` resolves, so a result
// the engine reported survives `kill -9` of the engine (the page cache
// keeps it); there is no fsync, a machine crash may lose results (they are a
// cache). A small result is one synchronous write of a few KB (~0.1 ms on
// the query's path); a large one is written chunk by chunk, asynchronously,
// and leaves memory once written. Reads go through a cache of chunks bounded
// by cells, so a large result is read back a chunk at a time as it is paged.
// Files older than 24 h are deleted (at start and hourly) and never served.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { ResultColumn } from '../planner/api.js';
import type { Stored } from '../storage/codec.js';
import { ensureDir, ensureDirSync } from '../storage/fsutil.js';
import { fileStem } from '../storage/names.js';
import { storedToVector, vectorToStored } from '../storage/vectors.js';
import type { Batch } from '../types/vector.js';

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
/** Manifests kept in memory (each a few hundred bytes); the rest are read from disk on use. */
const MAX_MANIFESTS = 10_000;
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
  private madeDirs = new Set<string>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(opts: ResultStoreOptions = {}) {
    this.dir = opts.dir;
    this.ttlMs = opts.ttlMs ?? RESULT_TTL_MS;
    this.now = opts.now ?? Date.now;
    if (this.dir) {
      // Not on the start-up path: the first sweep runs a few seconds in.
      this.sweeper = setTimeout(() => this.sweepLoop(), 5_000);
      this.sweeper.unref();
    }
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
      if (!this.dir) return;
      try {
        const data = t.columns.map((_, c) => t.batches.flatMap((b) => vectorToStored(b.columns[c]!)));
        this.writeSync(this.manifestPath(t), JSON.stringify({ ...m, data } satisfies ManifestFile));
      } catch (e) {
        console.error(`engine: cannot persist result ${t.datasetId}.${t.tableId}: ${(e as Error).message}`);
      }
      return;
    }
    // Large: chunk files first, the manifest (which makes them visible) last.
    const m: Manifest = { ...base, chunks: groupChunks(t.batches).map((g) => ({ rows: g.rows })) };
    this.rememberManifest(key, m);
    this.pending.set(key, t.batches);
    try {
      const file = this.manifestPath(t);
      await ensureDir(path.dirname(file));
      const stem = `${path.basename(file, '.json')}@${id}`;
      const refs: ChunkRef[] = [];
      for (const [i, g] of groupChunks(t.batches).entries()) {
        const name = `${stem}.${i}.chunk`;
        const data = t.columns.map((_, c) => g.batches.flatMap((b) => vectorToStored(b.columns[c]!)));
        await fsp.writeFile(path.join(path.dirname(file), name), JSON.stringify(data));
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
    let data: Stored[][] | undefined;
    try {
      const file = this.manifestPath(m);
      if (ref.file) data = JSON.parse(await fsp.readFile(path.join(path.dirname(file), ref.file), 'utf8')) as Stored[][];
      else data = (JSON.parse(await fsp.readFile(file, 'utf8')) as ManifestFile).data;
    } catch {
      return undefined;
    }
    if (!data) return undefined;
    const batch: Batch = { length: ref.rows, columns: m.columns.map((c, ci) => storedToVector(c.type, data[ci] ?? [])) };
    this.cacheChunk(key, m, i, [batch], cellsOf(ref.rows, m.columns.length));
    return [batch];
  }

  private async loadManifest(p: string, d: string, t: string): Promise<Manifest | undefined> {
    if (!this.dir) return undefined;
    let f: ManifestFile;
    try {
      f = JSON.parse(await fsp.readFile(this.manifestPath({ projectId: p, datasetId: d, tableId: t }), 'utf8')) as ManifestFile;
    } catch {
      return undefined; // none, or torn by a machine crash: as if never written
    }
    const m: Manifest = { projectId: p, datasetId: d, tableId: t, columns: f.columns, rowCount: f.rowCount, etag: f.etag, createdMs: f.createdMs, id: f.id, chunks: f.chunks };
    this.rememberManifest(keyOf(p, d, t), m);
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
      if (this.cells <= MAX_CACHED_CELLS || k === ck) break;
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

  private writeSync(file: string, text: string): void {
    const dir = path.dirname(file);
    if (!this.madeDirs.has(dir)) {
      ensureDirSync(dir);
      this.madeDirs.add(dir);
    }
    // Straight to the final name (a rename costs another ~30-60 us on the
    // query's path): a write cut short by a kill is invalid JSON, read as
    // absent, and was never reported since put had not returned.
    fs.writeFileSync(file, text);
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
          deleted++;
        }
      }
    };
    await walk(this.dir);
    for (const [k, m] of this.manifests) if (m.createdMs <= cutoff) this.forget(k);
    return deleted;
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
