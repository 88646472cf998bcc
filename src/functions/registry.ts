// The one function catalog. The analyzer reads signatures and result types
// from it; the executor runs the kernels it hands out. Each family module
// (math.ts, string.ts, datetime.ts, json.ts, ...) registers its functions here,
// signature beside kernel.
import { isGroupable, typeToSql, type SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import type { Vector } from '../types/vector.js';

/** What the evaluation of a kernel may need besides its arguments. */
export interface EvalContext {
  /** Statement start, epoch microseconds: CURRENT_* functions are stable within a statement. */
  readonly nowMicros: bigint;
  /** Default time zone of the statement ("UTC" unless @@time_zone is set). */
  readonly timeZone: string;
  readonly sessionUser: string;
  /** Deterministic RNG per job when a seed is set, Math.random otherwise. */
  readonly random: () => number;
}

/** Vectorized kernel: `n` rows, one vector per argument (already cast to the signature's types). */
export type ScalarKernel = (args: readonly Vector[], n: number, ctx: EvalContext) => Vector;

/** Per-argument facts the resolver may use: its type, and its value when it is a constant. */
export interface ArgInfo {
  readonly type: SqlType;
  /** Present when the argument is a literal or folded constant (e.g. the part of DATE_TRUNC, a FORMAT string). */
  readonly constant?: { readonly value: Value };
  /** True when the argument is an untyped NULL literal or an untyped empty array (coerces to anything). */
  readonly untypedNull?: boolean;
  /** Literal arguments coerce more freely (e.g. a string literal to DATE). */
  readonly isLiteral?: boolean;
  /** A query parameter: coerces as a literal does, but its value is checked when it runs, not when it is analyzed. */
  readonly isParameter?: boolean;
  /** Named argument (`name => value`). */
  readonly name?: string;
  /** A lambda (`x -> expr`); `type` is its body's. */
  readonly lambda?: boolean;
}

export interface ResolvedScalar {
  readonly returnType: SqlType;
  /** The types each argument must be cast to before the kernel sees it (same length as the call's args). */
  readonly argTypes: readonly SqlType[];
  readonly kernel: ScalarKernel;
  /**
   * Each row's result depends only on that row's argument values (and the
   * statement's EvalContext), so the executor may compute it once per distinct
   * value (string columns repeat values: categories, codes, dictionary pages).
   * Set only where the kernel costs more per value than a Map lookup (not on
   * LENGTH or STARTS_WITH).
   */
  readonly pure?: boolean;
}

/**
 * Hash-aggregation state for all groups at once (DataFusion's GroupsAccumulator
 * idea): `update` folds a batch whose rows belong to groups `groups[i]`, so hot
 * aggregates (COUNT, SUM, MIN, MAX, AVG) run as typed-array loops.
 */
export interface GroupsAccumulator {
  /** Make room for group ids < numGroups. */
  resize(numGroups: number): void;
  update(args: readonly Vector[], groups: Int32Array, n: number): void;
  /** Optional: update() of n rows that all belong to `group` (a global aggregate's batches: no group ids to read). */
  updateGroup?(args: readonly Vector[], group: number, n: number): void;
  /**
   * Optional (SUM/AVG of FLOAT64): fold per-group partial sums of finite
   * values, `counts[g]` values summing to `sums[g]` (groups with count 0 skipped).
   */
  mergePartial?(sums: Float64Array, counts: Float64Array, numGroups: number): void;
  /**
   * Optional (with mergePartial): what mergePartial then finish would give,
   * made from the partial sums alone when nothing was folded into this
   * accumulator (no state of its own to merge with); null otherwise, or when a
   * sum is not finite (then mergePartial and finish, as usual).
   */
  finishPartial?(sums: Float64Array, counts: Float64Array, numGroups: number): Vector | null;
  /** One value per group, in group-id order. */
  finish(numGroups: number): Vector;
  /** Optional (COUNT): finish's column as a view of the state, for an accumulator updated no more. */
  finishView?(numGroups: number): Vector;
}

export interface AggregateOptions {
  readonly distinct: boolean;
  readonly ignoreNulls: boolean | undefined;
  readonly hasOrderBy: boolean;
  readonly limit?: number;
}

export interface ResolvedAggregate {
  readonly returnType: SqlType;
  readonly argTypes: readonly SqlType[];
  /** DISTINCT, ORDER BY and HAVING MAX/MIN are applied by the executor before rows reach the accumulator. */
  readonly create: (ctx: EvalContext, opts: AggregateOptions) => GroupsAccumulator;
}

export interface FunctionResolution<R> {
  readonly ok: true;
  readonly resolved: R;
}
export interface FunctionMismatch {
  readonly ok: false;
  /** The real service's message, e.g. "No matching signature for function ABS for argument types: STRING. Supported signature: ABS(INT64); ..." */
  readonly message: string;
}

export interface ScalarFunctionDef {
  readonly kind: 'scalar';
  /** Upper-case canonical name; operators use ZetaSQL's internal names ($add, $equal, $like, ...). */
  readonly name: string;
  /** Can be called as SAFE.NAME(...). */
  readonly safeCallable?: boolean;
  /** Volatile functions (RAND, GENERATE_UUID) are never constant-folded. */
  readonly volatile?: boolean;
  /**
   * Argument positions that take a date part keyword (DATE_DIFF(a, b, DAY),
   * DATE_TRUNC(d, WEEK(MONDAY)), LAST_DAY(d, YEAR)). The analyzer passes such an
   * argument as a constant STRING literal holding the upper-cased part
   * ('DAY', 'WEEK(MONDAY)'), exactly like the first argument of `$extract`.
   */
  readonly datePartArgs?: readonly number[];
  /** Each overload as shown to people ("ABS(INT64) -> INT64"); read by the web console's completion at build time. */
  signatures?(): readonly string[];
  resolve(args: readonly ArgInfo[]): FunctionResolution<ResolvedScalar> | FunctionMismatch;
}

export interface AggregateFunctionDef {
  readonly kind: 'aggregate';
  readonly name: string;
  readonly safeCallable?: boolean;
  /** Usable as an analytic (window) function too. Every aggregate is, unless stated. */
  readonly analytic?: boolean;
  /** As ScalarFunctionDef.signatures. */
  signatures?(): readonly string[];
  resolve(args: readonly ArgInfo[], opts: AggregateOptions): FunctionResolution<ResolvedAggregate> | FunctionMismatch;
}

export type FunctionDef = ScalarFunctionDef | AggregateFunctionDef;

const catalog = new Map<string, FunctionDef>();

export function registerFunction(def: FunctionDef, ...aliases: string[]): void {
  for (const n of [def.name, ...aliases]) catalog.set(n.toUpperCase(), def);
}

/** Names are case-insensitive; qualified names use their dotted form (NET.HOST, HLL_COUNT.MERGE, KEYS.NEW_KEYSET). */
export function lookupFunction(name: string): FunctionDef | undefined {
  return catalog.get(name.toUpperCase());
}

export function allFunctions(): IterableIterator<[string, FunctionDef]> {
  return catalog.entries();
}

/**
 * How a function call was resolved: the definition and the argument facts.
 * Parallel execution ships plans to worker threads, which replay the
 * resolution to get the same kernel or accumulator (closures cannot cross
 * threads). Recorded for resolutions made through resolveScalar /
 * resolveAggregate (the analyzer's); others (UDFs, collated wrappers) have
 * none, and plans holding them stay on the main thread.
 */
export interface Resolution {
  readonly name: string;
  readonly args: readonly ArgInfo[];
  /** Aggregates only. */
  readonly opts?: AggregateOptions;
}

const resolutions = new WeakMap<ResolvedScalar | ResolvedAggregate, Resolution>();

export function resolveScalar(def: ScalarFunctionDef, args: readonly ArgInfo[]): FunctionResolution<ResolvedScalar> | FunctionMismatch {
  const r = def.resolve(args);
  if (r.ok) resolutions.set(r.resolved, { name: def.name, args });
  return r;
}

export function resolveAggregate(def: AggregateFunctionDef, args: readonly ArgInfo[], opts: AggregateOptions): FunctionResolution<ResolvedAggregate> | FunctionMismatch {
  // aggregate_functions (COUNT and the other DISTINCT forms): DISTINCT needs a groupable argument, in the reference's words.
  const ungroupable = opts.distinct ? args.find((a) => !isGroupable(a.type)) : undefined;
  if (ungroupable) return { ok: false, message: `Aggregate functions with DISTINCT cannot be used with arguments of type ${typeToSql(ungroupable.type)}` };
  const r = def.resolve(args, opts);
  if (r.ok) resolutions.set(r.resolved, { name: def.name, args, opts });
  return r;
}

export function resolutionOf(fn: ResolvedScalar | ResolvedAggregate): Resolution | undefined {
  return resolutions.get(fn);
}

/** The resolution made again (in another thread's registry); undefined when it no longer resolves. */
export function replayResolution(r: Resolution): ResolvedScalar | ResolvedAggregate | undefined {
  const def = lookupFunction(r.name);
  if (!def) return undefined;
  const out = def.kind === 'scalar' ? resolveScalar(def, r.args) : r.opts ? resolveAggregate(def, r.args, r.opts) : undefined;
  return out?.ok ? out.resolved : undefined;
}
