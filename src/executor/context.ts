// Execution context shared by every operator of one statement, plus the
// cooperative-scheduling helper. The engine is single-threaded and must keep
// answering gRPC calls while a query runs, so every operator loop calls
// `checkpoint(ctx)`: it throws when the job was cancelled and yields to the
// event loop when ~10 ms passed since the last yield.
import type { EvalContext } from '../functions/registry.js';
import { QueryError, type QueryContext } from '../planner/api.js';
import type { Value } from '../types/values.js';
import type { Batch, DictCodes, Vector } from '../types/vector.js';
import type { ScanRel, SortRel, SubqueryExpr } from '../analyzer/resolved.js';
import type { ScanFilter, ScanOptions } from '../storage/api.js';

/** What a finished subquery evaluation leaves behind (see expr.ts). */
export type SubqueryResult = unknown;

/** State shared by all contexts derived from one statement's root context. */
export interface SharedExecState {
  lastYield: number;
  /** The statement's signal as a plain flag (see cancelFlag). */
  readonly cancel: CancelFlag;
  /** Uncorrelated subqueries: evaluated once per statement. */
  readonly uncorrelated: Map<SubqueryExpr, Promise<SubqueryResult>>;
  /** Correlated subqueries: one result per distinct binding of their correlated columns. */
  readonly correlated: Map<SubqueryExpr, Map<string, SubqueryResult>>;
  /** Pure calls over one STRING argument: results per distinct value (expr.ts), per call. */
  readonly memos: WeakMap<object, ValueMemo>;
  /** A call's results per dictionary (expr.ts dictCall), by the dictionary's values array. */
  readonly dictResults: WeakMap<DictCodes['values'], Map<object, Vector | null>>;
}

/** A pure call's results by argument value, for one statement; `off` once values proved too distinct to pay. */
export interface ValueMemo {
  readonly results: Map<Value, Value>;
  rows: number;
  off: boolean;
}

export interface OuterRows {
  readonly rowColumn: number;
  readonly columns: ReadonlyMap<number, Vector>;
}

export interface ExecContext {
  readonly query: QueryContext;
  readonly eval: EvalContext;
  /** Values of enclosing-query columns (correlated references), by column id. */
  readonly outer: ReadonlyMap<number, Value>;
  /**
   * A lifted subquery run (subquery-batch.ts): correlated columns of the
   * outer batch, read at each row's `rowColumn` value (the outer row).
   */
  readonly outerRows?: OuterRows;
  /** Materialized CTEs by id; a WithRel scope copies the map so nested scopes stay independent. */
  readonly ctes: Map<number, Promise<Batch[]>>;
  readonly shared: SharedExecState;
  /**
   * Scans that read given rows instead of asking the catalog (parallel
   * execution: a worker's morsel, or the parts a scan listed already), by
   * the plan's ScanRel; `opts.columns` are the columns to read.
   */
  readonly scanSources?: ReadonlyMap<ScanRel, (opts: ScanOptions) => AsyncIterable<Batch>>;
  /** Statistics filters a scan adds to its own (a hash join's build key range, operators/join-filter.ts), by ScanRel. */
  readonly runtimeFilters?: ReadonlyMap<ScanRel, readonly ScanFilter[]>;
  /** Where a top-N starts (parallel execution: from other morsels' results), by SortRel. */
  readonly topNSeeds?: ReadonlyMap<SortRel, TopNSeed>;
}

/**
 * Sort keys (one row) a top-N's rows must beat from the start: the n-th best
 * row of another morsel. `strict`: that morsel comes first, so a row equal to
 * it loses the tie and is dropped too; else rows equal to it are kept.
 */
export interface TopNSeed {
  readonly keys: Vector[];
  readonly strict: boolean;
}

/** Milliseconds of work between two yields to the event loop. */
export const YIELD_INTERVAL_MS = 10;

/** Set when the statement's signal aborts. */
export interface CancelFlag {
  aborted: boolean;
}

const cancelFlags = new WeakMap<AbortSignal, CancelFlag>();

/**
 * `signal.aborted` as a plain object's field, set by the signal's abort
 * event (dispatched within abort(), so the two never disagree). Every
 * AbortSignal has a map of its own (Node sets each one's prototype after
 * creating it), so reading `signal.aborted` in checkpoint() deoptimized
 * every operator that inlined it on each new statement; TurboFan then
 * recompiled scanOp, aggregateSpilling, ... per query (10M-row GROUP BY:
 * ~45 ms of compiler-thread CPU per query on this 2-core machine).
 */
function cancelFlag(signal: AbortSignal): CancelFlag {
  let f = cancelFlags.get(signal);
  if (f === undefined) {
    const flag: CancelFlag = { aborted: signal.aborted };
    if (!flag.aborted) signal.addEventListener('abort', () => (flag.aborted = true), { once: true });
    cancelFlags.set(signal, (f = flag));
  }
  return f;
}

/** Fresh statement-level state (subquery results, memos) for a statement of `query`. */
export function sharedState(query: QueryContext, lastYield = performance.now()): SharedExecState {
  return { lastYield, cancel: cancelFlag(query.signal), uncorrelated: new Map(), correlated: new Map(), memos: new WeakMap(), dictResults: new WeakMap() };
}

export function makeExecContext(query: QueryContext, evalCtx?: Partial<EvalContext>): ExecContext {
  const ev: EvalContext = {
    nowMicros: evalCtx?.nowMicros ?? query.nowMicros,
    timeZone: evalCtx?.timeZone ?? 'UTC',
    sessionUser: evalCtx?.sessionUser ?? query.sessionUser,
    random: evalCtx?.random ?? Math.random,
  };
  return {
    query,
    eval: ev,
    outer: new Map(),
    ctes: new Map(),
    shared: sharedState(query),
  };
}

export function withOuter(ctx: ExecContext, outer: ReadonlyMap<number, Value>): ExecContext {
  return { ...ctx, outer };
}

export function throwIfCancelled(ctx: ExecContext): void {
  if (ctx.shared.cancel.aborted) {
    const s = ctx.query.signal;
    // The service's wording for jobs.cancel; a caller may pass its own reason string or Error.
    const r: unknown = s.reason;
    const why = typeof r === 'string' ? r : r instanceof Error && r.name !== 'AbortError' ? r.message : 'User requested cancellation';
    throw new QueryError(`Job execution was cancelled: ${why}`, 'stopped');
  }
}

const yieldNow = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Whether memory is past what a running statement may take: the engine
 * installs its check (engine/memory-guard.ts); a statement that yields while
 * it is true fails with the service's "resources exceeded" error instead of
 * growing the engine into an out-of-memory abort nothing can catch.
 */
let memoryExhausted: () => boolean = () => false;

export function setMemoryCheck(check: () => boolean): void {
  memoryExhausted = check;
}

/**
 * Call once per batch (or per few thousand rows) in every operator loop.
 * Cheap when no yield is due: one clock read.
 */
export async function checkpoint(ctx: ExecContext): Promise<void> {
  throwIfCancelled(ctx);
  const now = performance.now();
  if (now - ctx.shared.lastYield >= YIELD_INTERVAL_MS) {
    if (memoryExhausted()) throw new QueryError('Resources exceeded during query execution: The query could not be executed in the allotted memory.', 'resourcesExceeded');
    await yieldNow();
    ctx.shared.lastYield = performance.now();
    throwIfCancelled(ctx);
  }
}

