// The engine's pool of execution worker threads (worker.ts). Started on the
// first query that runs in parallel, let go after a minute without work (each
// worker is a V8 heap of tens of MB). A morsel goes to the worker its row
// group maps to, so that each worker's chunk cache holds its own share of a
// table; a busier worker's morsel goes to another only until it ran where it
// belongs (then its chunks are cached there), and is read there without
// being kept (WorkerPool.run). The decoded-data budget
// (--memory-limit, the main thread's chunk cache) is split while the pool
// runs: half stays with the main thread, the other half is shared by the
// workers' caches. Every cache also gives way to operator reservations on any
// thread (storage/memory-budget.ts: the counters are shared with the workers;
// idle workers are told to shrink when the reservations move).
import * as os from 'node:os';
import { getHeapStatistics } from 'node:v8';
import { isMainThread, Worker } from 'node:worker_threads';
import { chunkCache } from '../../storage/chunk-cache.js';
import { defaultMemoryLimit, memoryBudget, workerHeapLimitMb } from '../../storage/memory-budget.js';
import type { ScanPart } from '../../storage/table-state.js';
import type { Column } from '../../types/schema.js';
import type { Encoded, EncodedBatch } from './codec.js';

export type RowGroupPart = ScanPart & { kind: 'rowGroup' };

export interface WorkerInit {
  readonly cacheBudget: number;
  /** The engine's memory budget counters (memory-budget.ts), shared. */
  readonly budget: SharedArrayBuffer;
  /** The TypeScript entry when started from sources (dev-worker.mjs). */
  readonly entry?: string;
}

/** A TopNSeed (context.ts) with its keys as a one-row batch. */
export interface EncodedSeed {
  readonly keys: EncodedBatch;
  readonly strict: boolean;
}

/** A part of a join's build side as a worker receives it: a row group read by path, or rows held in the main thread's memory. */
export type EncodedPart = RowGroupPart | (Omit<ScanPart & { kind: 'mem' }, 'batch'> & { readonly batch: EncodedBatch });

/**
 * A plan as a worker receives it. Scans are named by their place in
 * scansOf(rel): the morsel scan (its parts come with each task, read in table
 * schema `columns`), and build sides read whole.
 */
export interface EncodedPlan {
  readonly rel: Encoded;
  readonly morselScan: number;
  readonly columns: readonly Column[];
  readonly broadcast: readonly { readonly scan: number; readonly columns: readonly Column[]; readonly parts: readonly EncodedPart[] }[];
  /** Row counts of the scanned tables by tableKey (a join picks its build side by them, join.ts). */
  readonly rowCounts: Readonly<Record<string, number>>;
  readonly eval: { readonly nowMicros: string; readonly timeZone: string; readonly sessionUser: string };
}

/** A task: plan `planId` over `parts` (a morsel: consecutive row groups of one file). */
export type ToWorker =
  /** `keep`: the worker caches the chunks it reads (false: the morsel is another worker's, taken over while that one was busy). */
  | { type: 'task'; id: number; planId: number; plan?: EncodedPlan; parts: RowGroupPart[]; seed: EncodedSeed | null; keep: boolean }
  | { type: 'drop'; planId: number }
  /** Reservations moved: evict down to the cache's allowance now (an idle worker's cache would wait for its next task). */
  | { type: 'trim' };
export type FromWorker = { type: 'done'; id: number; batches: EncodedBatch[] } | { type: 'failed'; id: number; message: string };

/** Worker threads: WAREHOUSE_EMULATOR_EXEC_THREADS, else one per core (none on one core: nothing to gain; none in a worker). */
function defaultSize(): number {
  if (!isMainThread) return 0;
  const env = process.env.WAREHOUSE_EMULATOR_EXEC_THREADS ?? process.env.BIGQUERY_EMULATOR_EXEC_THREADS;
  if (env !== undefined && /^\d+$/.test(env)) return Number(env);
  const n = os.availableParallelism();
  return n > 1 ? n : 0;
}

const IDLE_MS = 60_000;

/** Morsels remembered as run by their own worker (ran); past this many the oldest are forgotten. */
const MAX_RAN = 65_536;

interface Pending {
  resolve(b: EncodedBatch[]): void;
  reject(e: Error): void;
}

class Member {
  inFlight = 0;
  answered = false;
  dead = false;
  readonly plans = new Set<number>();
  readonly pending = new Map<number, Pending>();
  constructor(readonly w: Worker) {}
}

export class WorkerPool {
  private readonly members: Member[] = [];
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | null = null;
  /** A worker failed to start or died before answering anything: parallel execution is off in this process. */
  broken = false;
  /** The main thread's chunk-cache budget before the split. */
  private readonly total: number;

  /**
   * Morsels (by `run`'s key) last run by the worker their affinity names,
   * which cached their chunks then: not handed to another worker again.
   */
  private readonly ran = new Set<string>();

  /** The reservations the workers last shrank to, and the listener that tells them. */
  private trimmedAt = memoryBudget.reserved;
  private readonly unlisten: () => void;

  constructor(readonly size: number) {
    this.total = chunkCache.budget;
    chunkCache.budget = Math.floor(this.total / 2);
    for (let i = 0; i < size; i++) this.members.push(this.spawn());
    this.unlisten = memoryBudget.onChange(() => this.trimWorkers());
  }

  /** Tells the workers to shrink their caches once reservations grew by a 32nd of the limit since the last time. */
  private trimWorkers(): void {
    const r = memoryBudget.reserved;
    if (r < this.trimmedAt) this.trimmedAt = r;
    if (r - this.trimmedAt < memoryBudget.limit / 32) return;
    this.trimmedAt = r;
    for (const m of this.members) if (!m.dead) m.w.postMessage({ type: 'trim' } satisfies ToWorker);
  }

  private spawn(): Member {
    const here = import.meta.url;
    const fromSources = here.endsWith('.ts');
    const init: WorkerInit = { cacheBudget: Math.floor(this.total / 2 / this.size), budget: memoryBudget.shared, ...(fromSources ? { entry: new URL('./worker.ts', here).href } : {}) };
    // No inherited execArgv: the engine's preloads (the gateway's parent-pipe watchdog) are for the main thread only;
    // Its heap bounded from the memory budget (a worker past it ends alone, reported as a failed morsel; the query then runs serially).
    const maxOldGenerationSizeMb = workerHeapLimitMb(memoryBudget.limit || defaultMemoryLimit(), this.size, getHeapStatistics().heap_size_limit / 1024 / 1024);
    // --cpu-prof* flags are passed on, so profiling the engine (WAREHOUSE_ENGINE_NODE_FLAGS) covers its workers.
    const execArgv = process.execArgv.filter((a) => a.startsWith('--cpu-prof'));
    const w = new Worker(new URL(fromSources ? './dev-worker.mjs' : './exec-worker.js', here), { workerData: init, execArgv, resourceLimits: { maxOldGenerationSizeMb } });
    w.unref();
    const m = new Member(w);
    w.on('message', (msg: FromWorker) => {
      const p = m.pending.get(msg.id);
      if (!p) return;
      m.pending.delete(msg.id);
      m.answered = true;
      this.settled(m);
      if (msg.type === 'done') p.resolve(msg.batches);
      else p.reject(new Error(msg.message));
    });
    const fail = (e: Error): void => {
      if (m.dead) return;
      m.dead = true;
      if (!m.answered && !this.broken) {
        this.broken = true;
        console.error(`execution worker failed before its first answer (${e.message}): queries run on one thread from now on`);
      }
      for (const p of m.pending.values()) p.reject(e);
      m.pending.clear();
      m.inFlight = 0;
      const i = this.members.indexOf(m);
      if (i >= 0 && !this.broken) this.members[i] = this.spawn();
      void w.terminate();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`execution worker exited (${code})`)));
    return m;
  }

  private settled(m: Member): void {
    if (--m.inFlight === 0) m.w.unref();
    if (this.members.every((x) => x.inFlight === 0)) {
      if (this.idleTimer) clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => this.close(), IDLE_MS);
      this.idleTimer.unref();
    }
  }

  /**
   * Runs plan `planId` over one morsel on a worker: `affinity` names the
   * worker it goes to, whose cache keeps the morsel's chunks. While that one
   * has more work queued than another, the other takes it, reading without
   * keeping (its cache holds its own share, not copies of this one's), unless
   * the morsel (`key`: its file and row groups) ran on its own worker before:
   * reading its chunks again elsewhere costs more than waiting for them
   * (decoding is several times the aggregation's work). At 100M rows under a
   * 4 GB limit a worker's half of sum_avg_by_key1000's two columns is ~760
   * of its cache's 900 MB; the one or two morsels taken over per query were
   * kept as copies (816 -> 870 MB over 8 runs, 16-32 more misses a run on
   * each worker), on the way to evicting its own share. Now no miss after
   * the first two runs. `plan` is called (encoded) only for a worker that
   * has not seen it; `seed`: a top-N plan's ExecContext.topNSeeds entry.
   */
  run(planId: number, plan: () => EncodedPlan, parts: RowGroupPart[], affinity: number, seed: EncodedSeed | null = null, key?: string): Promise<EncodedBatch[]> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const own = this.members[affinity % this.size]!;
    let m = own;
    if (key === undefined || !this.ran.has(key)) for (const x of this.members) if (x.inFlight + 1 < m.inFlight) m = x;
    if (key !== undefined && m === own) {
      this.ran.delete(key);
      this.ran.add(key);
      if (this.ran.size > MAX_RAN) this.ran.delete(this.ran.values().next().value!);
    }
    if (m.inFlight++ === 0) m.w.ref();
    const id = this.nextId++;
    const msg: ToWorker = { type: 'task', id, planId, parts, seed, keep: m === own, ...(m.plans.has(planId) ? {} : { plan: plan() }) };
    m.plans.add(planId);
    return new Promise<EncodedBatch[]>((resolve, reject) => {
      m.pending.set(id, { resolve, reject });
      m.w.postMessage(msg);
    });
  }

  /** The query of `planId` is done: workers forget its plan. */
  release(planId: number): void {
    for (const m of this.members) if (m.plans.delete(planId) && !m.dead) m.w.postMessage({ type: 'drop', planId } satisfies ToWorker);
  }

  close(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (pool === this) pool = null;
    this.unlisten();
    chunkCache.budget = this.total;
    for (const m of this.members) {
      m.dead = true;
      for (const p of m.pending.values()) p.reject(new Error('execution pool closed'));
      void m.w.terminate();
    }
  }
}

let pool: WorkerPool | null = null;
let size = defaultSize();
let disabled = false;

/** The number of worker threads a pool has (0: serial). */
export function poolSize(): number {
  return size;
}

/** Whether queries may run in parallel (the pool may be started). */
export function parallelEnabled(): boolean {
  return !disabled && size > 0 && !pool?.broken;
}

/** The pool (started on first use), or null when parallel execution is off. */
export function workerPool(): WorkerPool | null {
  if (disabled || size === 0) return null;
  if (pool?.broken) {
    // Could not start or keep a worker (e.g. no built worker file): stay serial.
    disabled = true;
    pool.close();
    return null;
  }
  return (pool ??= new WorkerPool(size));
}

/** Sets the number of worker threads (0: serial); tests and the bench. Closes a running pool. */
export function setPoolSize(n: number): void {
  pool?.close();
  size = n;
  disabled = false;
}
