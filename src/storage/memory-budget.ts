// One memory budget for the whole engine (--memory-limit). Decoded table data
// (the chunk caches of the main thread and of every execution worker) and
// operator state (group tables, join build sides, sort and window inputs)
// draw on the same bytes: an operator reserves what it holds, and every
// cache's allowance shrinks by the reserved fraction of the limit, so the
// caches give way when operators need room. The counters live in a
// SharedArrayBuffer handed to the workers, so a reservation on any thread
// shrinks every cache.
//
// A reservation is never refused here: operators that can spill ask
// `wouldExceed` first; memory past the limit is the memory guard's to refuse
// (engine/memory-guard.ts). Reserved bytes are what operators hold. What an
// operator released or the cache evicted is garbage until V8 collects it,
// and V8 collects when its heap grows, not when buffers outside it die: a
// scan through the cache left several times the budget of dead chunks
// (measured: 25M rows, 1 GB limit, ~600 MB past the cache). So every thread
// reports what it let go (`dropped`), and once that passes a 32nd of the
// limit (at least 64 MB) a full collection runs at the next turn of its
// event loop (`collect`, installed by the engine and its workers).

import { totalmem } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The `gc` function of V8's gc extension: no argument, a full collection; in V8 11 any argument means a scavenge. */
export type GcFunction = (options?: { type: 'minor' }) => void;

/**
 * V8's `gc` without --expose-gc on the command line: that flag would also put
 * `gc` into every context created later, JavaScript UDFs' included. The flag
 * is on only while one private context is made (~0.5 MB).
 */
export function privateGc(): GcFunction | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    return typeof gc === 'function' ? (gc as GcFunction) : undefined;
  } catch {
    return undefined;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/** The default --memory-limit: a quarter of the machine's memory, at least 256 MB. */
export function defaultMemoryLimit(): number {
  return Math.max(256 * 1024 * 1024, Math.floor(totalmem() / 4));
}

/**
 * The budget the chunk caches and operator reservations share under a
 * `--memory-limit` of `limit` bytes: the limit less what the processes hold
 * outside the budget, so that the resident set of gateway + engine (workers
 * included) stays within the limit. That overhead does not grow with the
 * data: the processes at rest (code, V8 heaps, gRPC: ~140 MB for gateway and
 * engine, measured idle) and each execution worker's (~35 MB), garbage not
 * yet collected (a full collection runs once a 32nd of the budget, at least
 * 64 MB, was let go), and the batches in flight between checkpoints (decoded
 * chunks a scan holds past the cache, a morsel's result being copied: a
 * 32nd of the limit). And a margin of HEADROOM of the limit for what the
 * accounting does not see: with the caches full and operators at their
 * share, gateway + engine peaked at 98% of the limit (100M rows under 4 GB:
 * 4,022 MB in count_distinct_hk; 10M under 1 GB: 999 MB in group_by_hk_top10),
 * i.e. the budget plus ~310-420 MB, so a transient (a group table's doubling,
 * a burst of garbage, allocator slack) had nothing left before the limit.
 * Limits too small for that keep half of themselves: there the processes at
 * rest alone are near the limit, and the resident set is the limit plus
 * their size (src/storage/README.md).
 */
export function budgetOf(limit: number, workers: number): number {
  const overhead = REST_BYTES + WORKER_BYTES * workers + Math.max(MIN_GARBAGE, limit / 32) + limit / 32 + HEADROOM * limit;
  return Math.floor(Math.max(limit / 2, limit - overhead));
}

/** The share of the limit kept free of the budget (peaks aimed at ~90% of the limit; 15% made the 100M join re-decode a tenth of its columns each run, 2.6 vs 1.3 s). */
const HEADROOM = 0.1;

/** Gateway and engine at rest, with margin (the scale bench measured 136-142 MB idle). */
const REST_BYTES = 160 * 1024 * 1024;
/** One execution worker at rest, with margin (~35 MB measured). */
const WORKER_BYTES = 40 * 1024 * 1024;

const LIMIT = 0;
const RESERVED = 1;
/** Highest RESERVED seen since the last `takePeak` (tests, the bench). */
const PEAK = 2;
const CELLS = 3;

export class MemoryBudget {
  private cells: BigInt64Array;
  /** Called on this thread after reservations change (this thread's chunk cache shrinks at once; the pool tells idle workers). */
  private readonly listeners: (() => void)[] = [];
  /** A full garbage collection of this thread's heap (the engine and its workers install one). */
  collect: (() => void) | null = null;
  private garbage = 0;
  private collecting = false;
  /** Full collections run (tests). */
  collections = 0;

  constructor(shared: SharedArrayBuffer = new SharedArrayBuffer(CELLS * 8)) {
    this.cells = new BigInt64Array(shared);
  }

  /** The counters to hand to a worker thread (`attach` there). */
  get shared(): SharedArrayBuffer {
    return this.cells.buffer as SharedArrayBuffer;
  }

  /** Uses another thread's counters (a worker attaches the main thread's). */
  attach(shared: SharedArrayBuffer): void {
    this.cells = new BigInt64Array(shared);
  }

  /** The limit in bytes (0: none set; the caches keep their own budgets whole). */
  get limit(): number {
    return Number(Atomics.load(this.cells, LIMIT));
  }

  set limit(bytes: number) {
    Atomics.store(this.cells, LIMIT, BigInt(Math.max(0, Math.floor(bytes))));
    this.changed();
  }

  /** `fn` runs on this thread whenever the limit or the reservations change. */
  onChange(fn: () => void): () => void {
    this.listeners.push(fn);
    return () => {
      const i = this.listeners.indexOf(fn);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }

  /** Bytes operators hold now, on every thread. */
  get reserved(): number {
    return Number(Atomics.load(this.cells, RESERVED));
  }

  /** What a cache may keep of its own budget: the fraction of the limit operators have not reserved. */
  cacheFraction(): number {
    const limit = this.limit;
    if (limit <= 0) return 1;
    return Math.max(0, 1 - this.reserved / limit);
  }

  /** Whether `more` bytes on top of the reservations would pass `share` of the limit (never, without a limit). */
  wouldExceed(more: number, share = 1): boolean {
    const limit = this.limit;
    return limit > 0 && this.reserved + more > share * limit;
  }

  /** Highest total reservation since the last call (and resets it). */
  takePeak(): number {
    const p = Number(Atomics.exchange(this.cells, PEAK, Atomics.load(this.cells, RESERVED)));
    return p;
  }

  /** @internal Reservation's bookkeeping. */
  add(delta: number): void {
    if (delta === 0) return;
    const now = Atomics.add(this.cells, RESERVED, BigInt(delta)) + BigInt(delta);
    for (;;) {
      const peak = Atomics.load(this.cells, PEAK);
      if (now <= peak || Atomics.compareExchange(this.cells, PEAK, peak, now) === peak) break;
    }
    this.changed();
    if (delta < 0) this.dropped(-delta);
  }

  /** `bytes` outside V8's heap were let go on this thread (an evicted chunk, a released operator's state): collected once enough piled up. */
  dropped(bytes: number): void {
    this.garbage += bytes;
    const collect = this.collect;
    if (collect === null || this.collecting || this.garbage < Math.max(MIN_GARBAGE, this.limit / 32)) return;
    this.collecting = true;
    setImmediate(() => {
      this.collecting = false;
      this.garbage = 0;
      this.collections++;
      collect();
    });
  }
}

const MIN_GARBAGE = 64 * 1024 * 1024;

/** This thread's view of the engine's budget (workers attach the main thread's counters). */
export const memoryBudget = new MemoryBudget();

/**
 * What one operator holds, kept current as it grows (`set`) and given back
 * whole when it is done (`release`, also on errors and cancellation: call it
 * in a finally).
 */
export class Reservation {
  private bytes = 0;
  constructor(private readonly budget: MemoryBudget = memoryBudget) {}

  get held(): number {
    return this.bytes;
  }

  /** The operator now holds `bytes` in all (returned, for a check against the limit). */
  set(bytes: number): number {
    const delta = Math.round(bytes) - this.bytes;
    // Small moves are noise next to any limit: skip the shared write and the caches' check.
    if (delta === 0 || (delta > 0 && delta < SMALL && bytes < SMALL)) return bytes;
    this.bytes += delta;
    this.budget.add(delta);
    return bytes;
  }

  release(): void {
    if (this.bytes === 0) return;
    const b = this.bytes;
    this.bytes = 0;
    this.budget.add(-b);
  }
}

/** Below this, an operator's state is not reserved at all (small queries pay no bookkeeping). */
const SMALL = 1 << 20;

/** Bytes of a size like 2GB, 512MB, 1.5G or 1048576 (powers of 1024). */
export function parseMemorySize(v: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([kmg])?i?b?$/i.exec(v.trim());
  if (!m) throw new Error(`invalid --memory-limit ${v}`);
  const unit = { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(m[2] ?? '').toLowerCase() as 'k' | 'm' | 'g'] ?? 1;
  return Math.floor(Number(m[1]) * unit);
}

/**
 * The V8 old-generation limit (MB) of each execution worker under a memory
 * limit: together they get a quarter of it, never less than the floor, never
 * more than V8's default. A worker past its heap ends alone and its morsel
 * runs again serially. The engine's own heap keeps V8's default: past it V8
 * aborts the whole process, while the memory guard (engine/memory-guard.ts)
 * refuses a statement only at an executor checkpoint, so a heap cut to the
 * budget turned work that allocates between checkpoints (a 20M-row join's
 * build under a 1 GB limit) into an engine exit. The engine's heap is bounded
 * by the guard and the operators' reservations instead.
 */
export function workerHeapLimitMb(limitBytes: number, workers: number, v8DefaultMb: number): number {
  const mb = limitBytes / 1024 / 1024;
  return Math.round(Math.min(v8DefaultMb, Math.max(WORKER_HEAP_FLOOR_MB, mb / 4 / Math.max(1, workers))));
}

const WORKER_HEAP_FLOOR_MB = 256;
