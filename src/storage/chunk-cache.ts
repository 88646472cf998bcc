// Decoded column chunks of fragment files (a row group's column each), kept
// under a memory budget and evicted least recently used first. A scan asks
// for the chunks it needs; a miss reads only that column chunk's bytes from
// the file and decodes it (fragment-file.ts). The budget is the engine's
// `--memory-limit` share for table data (default: a quarter of the machine's
// memory, at least 256 MB), less the fraction of the limit operators have
// reserved (memory-budget.ts): the cache gives way to group tables, sort and
// join state. A chunk a running scan still holds stays alive until the scan
// moves on, so the resident set is the budget plus what scans hold right now.
import { getHeapStatistics } from 'node:v8';
import { chunkBytes, chunkHeapBytes, SharedDictionary, textValuesBytes, type ColumnChunk, type TextValues } from './column-chunk.js';
import { FragmentFile } from './fragment-file.js';
import { defaultMemoryLimit, memoryBudget } from './memory-budget.js';

interface Entry {
  readonly chunk: ColumnChunk;
  readonly bytes: number;
  /** Of those, the bytes on V8's heap (value objects, dictionary strings). */
  readonly heap: number;
  /** The scan pass that last used it (newScanPass; 0: none). */
  pass: number;
  /** An entry of values made from a text chunk's text (`VALUES`): dropping it lets them go. */
  readonly kept?: readonly TextValues[];
}

/** A text chunk's kept values are an entry of their own: the chunk's key and this. */
const VALUES = '\u0000values';

let passes = 0;

/**
 * A token for one read of a table by one statement (on this thread): chunks
 * a pass has used are not evicted to make room for more of the same pass.
 * So a scan larger than the cache keeps the chunks it read first and reads
 * the rest without caching them (its next run finds that prefix again),
 * instead of evicting each chunk before the next run gets to it (least
 * recently used order over a cyclic scan: no hit ever).
 */
export function newScanPass(): number {
  return ++passes;
}

/**
 * The pass of a read that uses cached chunks but keeps none it reads: an
 * execution worker running a morsel that is another worker's to cache
 * (parallel/pool.ts), so that this worker's cache keeps its own share
 * rather than copies of the other's.
 */
export const NO_KEEP_PASS = -1;

/**
 * The share of V8's heap limit that chunks living on the heap may take
 * (NUMERIC values, nested values, dictionary strings): the budget may be
 * larger than the heap, and the engine's memory guard refuses statements
 * at 60% of it.
 */
const HEAP_SHARE = 0.25;

export class ChunkCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<ColumnChunk>>();
  private readonly files = new Map<string, Promise<FragmentFile>>();
  /** Shared dictionaries by table (fragment stem) and column; their bytes are in `used` and `heapUsed` (`dictionaryBytes`). */
  private readonly dictionaries = new Map<string, SharedDictionary>();
  private dictionaryBytes = 0;
  private used = 0;
  private heapUsed = 0;
  /** The bound on heap-resident chunks (HEAP_SHARE of the heap limit, or the budget if smaller). */
  heapBudget = HEAP_SHARE * getHeapStatistics().heap_size_limit;
  /** The pass last found to have filled the cache alone (makeRoom), or 0. */
  private refused = 0;
  /** Counters (tests and the bench read them). */
  hits = 0;
  misses = 0;
  evictions = 0;
  /** Chunks read but not cached: the cache held only chunks of the same pass, or the pass keeps none (NO_KEEP_PASS). */
  bypassed = 0;

  constructor(private budgetBytes: number) {}

  get budget(): number {
    return this.budgetBytes;
  }

  /**
   * Lowering the budget evicts at once: the execution pool halves the main
   * thread's share when it starts, and chunks kept under the whole budget
   * (a large write's, write-through) would otherwise stay beside the
   * workers' caches, past the limit (100M rows under 4 GB: 5.5 GB).
   */
  set budget(b: number) {
    const lower = b < this.budgetBytes;
    this.budgetBytes = b;
    if (lower) this.evict();
  }

  get bytesUsed(): number {
    return this.used;
  }

  /** The file's footer (row groups, statistics), read once and kept (a few KB each; at most MAX_FILES). */
  file(path: string): Promise<FragmentFile> {
    let f = this.files.get(path);
    if (f) {
      this.files.delete(path);
      this.files.set(path, f);
      return f;
    }
    f = FragmentFile.open(path);
    f.catch(() => this.files.delete(path));
    this.files.set(path, f);
    for (const k of this.files.keys()) {
      if (this.files.size <= MAX_FILES) break;
      this.files.delete(k);
    }
    return f;
  }

  /** One row group's column, decoded (from the cache or the file); `pass`: the scan pass asking (newScanPass). */
  async chunk(path: string, rg: number, name: string, load: () => Promise<ColumnChunk>, pass = 0): Promise<ColumnChunk> {
    const key = `${path}\u0000${rg}\u0000${name}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.hits++;
      if (pass === NO_KEEP_PASS) return hit.chunk;
      this.entries.delete(key);
      this.entries.set(key, hit);
      // An entry of the pass that found the cache full becomes another's: that pass may evict it now.
      if (hit.pass === this.refused && pass !== this.refused) this.refused = 0;
      hit.pass = pass;
      const v = this.entries.get(key + VALUES);
      if (v) {
        this.entries.delete(key + VALUES);
        this.entries.set(key + VALUES, v);
        v.pass = pass;
      }
      return hit.chunk;
    }
    const pending = this.loading.get(key);
    if (pending) return pending;
    this.misses++;
    const p = load().then(
      (chunk) => {
        this.loading.delete(key);
        if (chunk.kind === 'dict' && chunk.shared) this.countDictionaries();
        const bytes = chunkBytes(chunk);
        const heap = chunkHeapBytes(chunk);
        if (pass === NO_KEEP_PASS || (pass !== 0 && !this.makeRoom(bytes, heap, pass))) {
          this.bypassed++;
          memoryBudget.dropped(bytes - heap);
          return chunk;
        }
        if (pass !== this.refused) this.refused = 0;
        this.entries.set(key, { chunk, bytes, heap, pass });
        this.used += bytes;
        this.heapUsed += heap;
        this.evict();
        this.offerValues(key, chunk);
        return chunk;
      },
      (e: unknown) => {
        this.loading.delete(key);
        throw e;
      },
    );
    this.loading.set(key, p);
    return p;
  }

  /**
   * A chunk of a file this thread just wrote, made from the values written
   * (write-through, fragment-writes.ts): kept as a read by `pass` would keep
   * it, under the same budget; nothing when the key is held or being read.
   */
  put(path: string, rg: number, name: string, chunk: ColumnChunk, pass: number): void {
    const key = `${path}\u0000${rg}\u0000${name}`;
    if (this.entries.has(key) || this.loading.has(key)) return;
    if (chunk.kind === 'dict' && chunk.shared) this.countDictionaries();
    const bytes = chunkBytes(chunk);
    const heap = chunkHeapBytes(chunk);
    // A write fills at most a quarter of the allowance, evicting nothing: a large write's chunks would
    // otherwise push out what reads use and keep the cache full after it (the next statement of a small
    // write is what it is for).
    if (this.used + bytes > this.allowance / 4) return;
    if (!this.makeRoom(bytes, heap, pass)) return;
    if (pass !== this.refused) this.refused = 0;
    this.entries.set(key, { chunk, bytes, heap, pass });
    this.used += bytes;
    this.heapUsed += heap;
    this.evict();
    this.offerValues(key, chunk);
  }

  /**
   * A JSON or GEOGRAPHY text chunk just cached (or such leaves of a nested
   * one) may keep the values its batches are boxed as (column-chunk.ts
   * TextValues): at the first batch, their estimated bytes are charged as an
   * entry beside the chunk (evicted on its own, or with it); not kept when
   * they do not fit or the chunk has gone.
   */
  private offerValues(key: string, chunk: ColumnChunk): void {
    const leaves: TextValues[] = [];
    let bytes = 0;
    textLeaves(chunk, (c, kept) => {
      leaves.push(kept);
      bytes += textValuesBytes(c);
    });
    if (leaves.length === 0) return;
    const keep = (): boolean => {
      const hit = this.entries.get(key);
      if (hit?.chunk !== chunk || this.entries.has(key + VALUES)) return false;
      if (!this.makeRoom(bytes, bytes, hit.pass) || !this.entries.has(key)) return false;
      textLeaves(chunk, (c, t) => (t.values = new Array<undefined>(c.length)));
      this.entries.set(key + VALUES, { chunk, bytes, heap: bytes, pass: hit.pass, kept: leaves });
      this.used += bytes;
      this.heapUsed += bytes;
      return true;
    };
    for (const t of leaves) t.keep = keep;
  }

  /** The dictionary the row groups of this table's column share on this thread (column-chunk.ts). */
  dictionary(path: string, column: string): SharedDictionary {
    const at = path.lastIndexOf('@');
    const key = `${at < 0 ? path : path.slice(0, at)}\u0000${column}`;
    let d = this.dictionaries.get(key);
    if (!d) this.dictionaries.set(key, (d = new SharedDictionary()));
    return d;
  }

  /** Brings the dictionaries' growth into the accounting; past half the heap budget they are let go (chunks holding one keep it alive; new row groups start afresh). */
  private countDictionaries(): void {
    let b = 0;
    for (const d of this.dictionaries.values()) b += d.bytes;
    if (b > Math.min(this.allowance, this.heapBudget) / 2) {
      this.dictionaries.clear();
      b = 0;
    }
    this.used += b - this.dictionaryBytes;
    this.heapUsed += b - this.dictionaryBytes;
    this.dictionaryBytes = b;
  }

  /** The bytes the cache may hold now: its budget less the share operators reserved. */
  get allowance(): number {
    return Math.floor(this.budget * memoryBudget.cacheFraction());
  }

  /** Evicts down to the allowance (operators reserved more). */
  shrink(): void {
    this.evict();
  }

  /**
   * Evicts, least recently used first, chunks other passes used until `bytes`
   * (`heap` of them on the heap) fit; false when only `pass`'s own chunks
   * would have to go (the chunk is then not cached).
   */
  private makeRoom(bytes: number, heap: number, pass: number): boolean {
    const allowance = this.allowance;
    const heapBudget = Math.min(allowance, this.heapBudget);
    const fits = (): boolean => this.used + bytes <= allowance && this.heapUsed + heap <= heapBudget;
    if (fits()) return true;
    // Already found full of this pass's chunks (until another pass touches the cache).
    if (this.refused === pass) return false;
    for (const [k, e] of this.entries) {
      if (fits()) break;
      if (e.pass === pass) continue;
      // A text chunk's kept values before the chunk: the text is the data, the values only spare a parse.
      if (this.dropValues(k, e) && fits()) break;
      if (this.used + bytes <= allowance && e.heap === 0) continue;
      this.drop(k, e);
      this.evictions++;
    }
    if (fits()) return true;
    this.refused = pass;
    return false;
  }

  private evict(): void {
    const allowance = this.allowance;
    for (const [k, e] of this.entries) {
      if (this.used <= allowance) break;
      if (this.dropValues(k, e) && this.used <= allowance) break;
      this.drop(k, e);
      this.evictions++;
    }
    const heapBudget = Math.min(allowance, this.heapBudget);
    if (this.heapUsed <= heapBudget) return;
    for (const [k, e] of this.entries) {
      if (this.heapUsed <= heapBudget) break;
      if (e.heap === 0) continue;
      this.drop(k, e);
      this.evictions++;
    }
  }

  /** Drops the kept values of chunk entry `e` (not the chunk); whether there were any. */
  private dropValues(k: string, e: Entry): boolean {
    if (e.kept) return false;
    const v = this.entries.get(k + VALUES);
    if (!v) return false;
    this.drop(k + VALUES, v);
    this.evictions++;
    return true;
  }

  private drop(k: string, e: Entry): void {
    this.refused = 0;
    this.entries.delete(k);
    this.used -= e.bytes;
    this.heapUsed -= e.heap;
    memoryBudget.dropped(e.bytes - e.heap);
    if (e.kept) for (const t of e.kept) t.values = null;
    else {
      // A chunk's kept values go with it, and it keeps no more (a scan may still hold it; a read of it again makes a new chunk).
      const v = this.entries.get(k + VALUES);
      if (v) this.drop(k + VALUES, v);
      textLeaves(e.chunk, (_, t) => (t.keep = null));
    }
  }

  /** Bytes of cached chunks on V8's heap. */
  get heapBytesUsed(): number {
    return this.heapUsed;
  }

  /** Forgets a file (deleted): its footer and chunks. */
  forget(path: string): void {
    this.files.delete(path);
    const prefix = `${path}\u0000`;
    for (const [k, e] of this.entries) if (k.startsWith(prefix)) this.drop(k, e);
  }

  /** Drops everything (tests). */
  clear(): void {
    for (const e of this.entries.values()) if (e.kept) for (const t of e.kept) t.values = null;
    for (const e of this.entries.values()) textLeaves(e.chunk, (_, t) => (t.keep = null));
    this.entries.clear();
    this.files.clear();
    this.dictionaries.clear();
    this.dictionaryBytes = 0;
    this.used = 0;
    this.heapUsed = 0;
  }
}

const MAX_FILES = 4096;

/** The JSON / GEOGRAPHY text chunks in a chunk (itself, or leaves of a list or struct) with their TextValues. */
function textLeaves(c: ColumnChunk, f: (c: ColumnChunk & { kind: 'utf8' }, kept: TextValues) => void): void {
  if (c.kind === 'utf8' && c.kept) f(c, c.kept);
  else if (c.kind === 'list') textLeaves(c.child, f);
  else if (c.kind === 'struct') for (const ch of c.children) textLeaves(ch, f);
}

/** The engine's cache (its budget set from --memory-limit at start); it gives way at once when this thread's operators reserve memory. */
export const chunkCache = new ChunkCache(defaultMemoryLimit());
memoryBudget.onChange(() => chunkCache.shrink());
