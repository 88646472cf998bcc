// How a plan runs in two phases: a partial plan over each morsel (a worker
// thread's share) and a merge plan over the partial results, in morsel order,
// on the main thread. Each merge plan reads the partial rows through a
// synthetic scan (`partialScan`), served from the workers' results.
//
// The partial plan is a pipeline: filters, projections and hash joins over
// one table scan, whose parts are cut into morsels. A join's build side (a
// pipeline of filters and projections over another scan) is read whole by
// every worker; its probe side continues the pipeline, so that each morsel's
// rows come out in the order the serial join gives.
//
// Aggregates: COUNT, COUNTIF, SUM, AVG, MIN, MAX, LOGICAL_AND/OR, BIT_AND/OR/XOR
// (no DISTINCT, ORDER BY, LIMIT or HAVING MAX/MIN; SUM/AVG of INT64 or
// FLOAT64) split as partial aggregates by the same keys, merged by SUM of the
// counts and sums, MIN of the minimums and so on; AVG as a SUM and a COUNT
// divided after the merge, as AVG's own finish does. Top-N: each morsel's top
// N rows, then the top N of those.
import type { AggregateCall, AggregateRel, Expr, JoinRel, Rel, ResolvedColumn, ScanRel, SortRel } from '../../analyzer/resolved.js';
import { lookupFunction, resolveAggregate, type AggregateOptions, type ResolvedAggregate } from '../../functions/registry.js';
import { T, type SqlType } from '../../types/types.js';
import type { Batch, Vector } from '../../types/vector.js';
import type { ExecContext } from '../context.js';
import { buildsLeft } from '../operators/join.js';

/** A plan in two phases; the merge plan reads the partial rows from `mergeScan`. */
export interface TwoPhase {
  readonly partial: Rel;
  readonly merge: Rel;
  readonly mergeScan: ScanRel;
}

/** The merge of a partial aggregate's columns into one output column. */
export type MergeStep =
  | { readonly kind: 'same'; readonly from: number }
  /** AVG: merged sum / merged count (NULL when the count is 0). */
  | { readonly kind: 'avg'; readonly sum: number; readonly count: number };

export interface SplitAggregate extends TwoPhase {
  readonly partial: AggregateRel;
  /** Over mergeScan: keys, then one merge call per partial call. */
  readonly merge: AggregateRel;
  /** Per output aggregate (after the keys): which merge columns make it. */
  readonly steps: readonly MergeStep[];
  /**
   * Grouping sets (spilling only): partial and merge rows carry the set index
   * (an INT64 column) after the keys, and the GROUPING() bits of
   * `groupingKeys` (the key index of each call) are made from it at the end.
   */
  readonly sets?: { readonly sets: readonly (readonly number[])[]; readonly groupingKeys: readonly number[] };
}

// ---------------------------------------------------------------- pipelines

/** Joins a pipeline passes through: hash joins whose every output row comes from one probe row (no RIGHT/FULL: unmatched build rows). */
function pipelineJoin(r: JoinRel): boolean {
  return !r.lateral && (r.equiKeys?.length ?? 0) > 0 && (r.joinType === 'inner' || r.joinType === 'left' || r.joinType === 'semi' || r.joinType === 'anti');
}

/** Whether `rel` is filters and projections over one scan. */
function simplePipeline(rel: Rel): boolean {
  let r = rel;
  while (r.kind === 'filter' || r.kind === 'project') r = r.input;
  return r.kind === 'scan';
}

/** Whether `rel` is a pipeline (filters, projections, joins with simple build sides either way round) over scans. */
function isPipeline(rel: Rel): boolean {
  switch (rel.kind) {
    case 'scan':
      return true;
    case 'filter':
    case 'project':
      return isPipeline(rel.input);
    case 'join':
      return pipelineJoin(rel) && ((isPipeline(rel.left) && simplePipeline(rel.right)) || (rel.joinType === 'inner' && simplePipeline(rel.left) && isPipeline(rel.right)));
    default:
      return false;
  }
}

/** A scan and the predicate of a filter right above it (the scan runs it and storage prunes by it: scan.ts). */
export interface ScanInput {
  readonly scan: ScanRel;
  readonly filter: Expr | null;
}

export interface Pipeline {
  /** The scan whose parts are cut into morsels. */
  readonly morsel: ScanInput;
  /** Build sides of the joins on the way, each read whole by every morsel. */
  readonly broadcast: readonly ScanInput[];
}

/**
 * The pipeline of `rel` as this execution runs it: which side of each join
 * probes (join.ts decides by the tables' row counts), null when `rel` is no
 * pipeline of this shape.
 */
export function pipelineOf(rel: Rel, ctx: ExecContext): Pipeline | null {
  const broadcast: ScanInput[] = [];
  let r = rel;
  let filter: Expr | null = null;
  for (;;) {
    if (r.kind === 'scan') return { morsel: { scan: r, filter }, broadcast };
    if (r.kind === 'filter') {
      filter = r.input.kind === 'scan' ? r.predicate : null;
      r = r.input;
    } else if (r.kind === 'project') r = r.input;
    else if (r.kind === 'join' && pipelineJoin(r)) {
      const probeLeft = !buildsLeft(r, ctx);
      const build = probeLeft ? r.right : r.left;
      const b = simpleInput(build);
      if (!b) return null;
      broadcast.push(b);
      r = probeLeft ? r.left : r.right;
    } else return null;
  }
}

function simpleInput(rel: Rel): ScanInput | null {
  let r = rel;
  let filter: Expr | null = null;
  while (r.kind === 'filter' || r.kind === 'project') {
    if (r.kind === 'filter' && r.input.kind === 'scan') filter = r.predicate;
    r = r.input;
  }
  return r.kind === 'scan' ? { scan: r, filter } : null;
}

/** The scans of a plan in a fixed order (depth first, left before right): how the two threads name them. */
export function scansOf(rel: Rel, out: ScanRel[] = []): ScanRel[] {
  switch (rel.kind) {
    case 'scan':
      out.push(rel);
      break;
    case 'join':
      scansOf(rel.left, out);
      scansOf(rel.right, out);
      break;
    case 'filter':
    case 'project':
    case 'aggregate':
    case 'sort':
    case 'limit':
      scansOf(rel.input, out);
      break;
  }
  return out;
}

/** A scan of rows the merge phase is handed (ExecContext.scanSources), with these columns. */
function partialScan(columns: readonly ResolvedColumn[]): ScanRel {
  return { kind: 'scan', table: { projectId: '', datasetId: '', tableId: '$partial' }, tableColumns: columns.map((_, i) => i), columns };
}

// ---------------------------------------------------------------- aggregates

/** The merge function of each splittable aggregate. */
const MERGE: Record<string, string> = {
  $count_star: 'SUM',
  COUNT: 'SUM',
  COUNTIF: 'SUM',
  SUM: 'SUM',
  MIN: 'MIN',
  MAX: 'MAX',
  LOGICAL_AND: 'LOGICAL_AND',
  LOGICAL_OR: 'LOGICAL_OR',
  BIT_AND: 'BIT_AND',
  BIT_OR: 'BIT_OR',
  BIT_XOR: 'BIT_XOR',
};

const PLAIN: AggregateOptions = { distinct: false, ignoreNulls: undefined, hasOrderBy: false };

/** Column ids of the synthetic columns below every id the analyzer hands out (which are >= 0). */
let nextSyntheticId = -1;
const synthetic = (name: string, type: SqlType): ResolvedColumn => ({ id: nextSyntheticId--, name, type });

const ref = (c: ResolvedColumn): Expr => ({ kind: 'column', type: c.type, columnId: c.id });

function resolved(name: string, argTypes: readonly SqlType[], opts: AggregateOptions = PLAIN): ResolvedAggregate | null {
  const def = lookupFunction(name);
  if (!def || def.kind !== 'aggregate') return null;
  const r = resolveAggregate(def, argTypes.map((type) => ({ type })), opts);
  return r.ok ? r.resolved : null;
}

const numeric = (t: SqlType | undefined): boolean => t?.kind === 'INT64' || t?.kind === 'FLOAT64';

/** A call made of `fn` over one column of the partial rows. */
function mergeCall(fnName: string, from: ResolvedColumn, out: ResolvedColumn): AggregateCall | null {
  const fn = resolved(fnName, [from.type]);
  if (!fn || JSON.stringify(fn.returnType) !== JSON.stringify(out.type)) return null;
  return { column: out, name: fnName, fn, args: [ref(from)], distinct: false, ignoreNulls: undefined, orderBy: [] };
}

/** Calls that compute the same thing (SUM(v) and AVG(v)'s SUM(v)) are one partial call. */
function callKey(name: string, c: AggregateCall): string {
  const big = (_k: string, v: unknown): unknown => (typeof v === 'bigint' ? `${v}n` : v);
  return `${name}|${c.ignoreNulls}|${JSON.stringify(c.args, big)}|${JSON.stringify(c.filter ?? null, big)}`;
}

/** `anyInput`: the partial aggregate runs over the input as it is (spilling, aggregate-spill.ts), not per morsel of a pipeline. */
export function splitAggregate(rel: AggregateRel, anyInput = false): SplitAggregate | null {
  const grouped = rel.groupingSets !== undefined;
  if ((!anyInput && !isPipeline(rel.input)) || ((grouped || rel.groupingCalls?.length) && !anyInput)) return null;
  // GROUPING() under a plain GROUP BY has no set index to be made from: not split (it is held in memory).
  if (rel.groupingCalls?.length && !grouped) return null;
  const partialCalls: AggregateCall[] = [];
  const mergeCalls: AggregateCall[] = [];
  const steps: MergeStep[] = [];
  const keys = rel.groupBy.map((g) => g.column);
  /** Merge column index of each distinct partial call. */
  const merged = new Map<string, number>();
  /** The merge column of `call` (made under `name`), adding its partial and merge calls the first time. */
  const share = (name: string, call: AggregateCall, merge: () => AggregateCall | null): number | null => {
    const key = callKey(name, call);
    const at = merged.get(key);
    if (at !== undefined) return at;
    const mc = merge();
    if (!mc) return null;
    partialCalls.push(call);
    merged.set(key, mergeCalls.length);
    mergeCalls.push(mc);
    return mergeCalls.length - 1;
  };
  // Partial rows: keys, then the partial calls' columns; merge calls read them by id.
  for (const c of rel.aggregates) {
    if (c.distinct || c.orderBy.length > 0 || c.limit !== undefined || c.having !== undefined) return null;
    if (c.name === 'AVG') {
      const t = c.args[0]?.type;
      if (!numeric(t) || c.args.length !== 1) return null;
      const opts: AggregateOptions = { ...PLAIN, ignoreNulls: c.ignoreNulls };
      const sumFn = resolved('SUM', [t!], opts);
      const countFn = resolved('COUNT', [t!], opts);
      if (!sumFn || !countFn) return null;
      const base = { args: c.args, distinct: false, ignoreNulls: c.ignoreNulls, orderBy: [], ...(c.filter ? { filter: c.filter } : {}) };
      const sumCall: AggregateCall = { ...base, column: synthetic('$avg_sum', sumFn.returnType), name: 'SUM', fn: sumFn };
      const countCall: AggregateCall = { ...base, column: synthetic('$avg_count', countFn.returnType), name: 'COUNT', fn: countFn };
      const sum = share('SUM', sumCall, () => mergeCall('SUM', sumCall.column, synthetic('$avg_sum', sumFn.returnType)));
      const count = share('COUNT', countCall, () => mergeCall('SUM', countCall.column, synthetic('$avg_count', countFn.returnType)));
      if (sum === null || count === null) return null;
      steps.push({ kind: 'avg', sum, count });
      continue;
    }
    const m = MERGE[c.name];
    if (!m || (c.name === 'SUM' && !numeric(c.args[0]?.type))) return null;
    const from = share(c.name, c, () => mergeCall(m, c.column, c.column));
    if (from === null) return null;
    steps.push({ kind: 'same', from });
  }
  // Grouping sets: the set index is one more key of the partial rows (Aggregation.finish(true)) and of the merge.
  const groupKeys = grouped ? [...keys, synthetic('$grouping_set', T.INT64)] : keys;
  const partial: AggregateRel = { ...rel, aggregates: partialCalls, groupingCalls: undefined, columns: [...groupKeys, ...partialCalls.map((c) => c.column)] };
  const src = partialScan(partial.columns);
  const merge: AggregateRel = {
    kind: 'aggregate',
    input: src,
    groupBy: groupKeys.map((k) => ({ column: k, expr: ref(k) })),
    aggregates: mergeCalls,
    columns: [...groupKeys, ...mergeCalls.map((c) => c.column)],
  };
  const sets = grouped ? { sets: rel.groupingSets!, groupingKeys: (rel.groupingCalls ?? []).map((g) => g.keyIndex) } : undefined;
  return { partial, merge, mergeScan: src, steps, ...(sets ? { sets } : {}) };
}

/**
 * Output columns from the merge's: keys and most aggregates as they are, AVG
 * as merged sum / merged count; with grouping sets, GROUPING() bits from the
 * set index after the keys.
 */
export function finishAggregate(b: Batch, keys: number, steps: readonly MergeStep[], sets?: SplitAggregate['sets']): Batch {
  const out: Vector[] = b.columns.slice(0, keys);
  const at = sets ? keys + 1 : keys;
  for (const s of steps) {
    if (s.kind === 'same') {
      out.push(b.columns[at + s.from]!);
      continue;
    }
    const sum = b.columns[at + s.sum]!;
    const count = b.columns[at + s.count]!;
    const d = new Float64Array(b.length);
    let nulls: Uint8Array | null = null;
    for (let i = 0; i < b.length; i++) {
      const c = Number(count.data[i]);
      if (c === 0) (nulls ??= new Uint8Array(b.length))[i] = 1;
      else d[i] = Number(sum.data[i]) / c;
    }
    out.push({ type: T.FLOAT64, length: b.length, data: d, nulls });
  }
  if (sets) {
    const setOf = b.columns[keys]!.data as Float64Array;
    for (const k of sets.groupingKeys) {
      const d = new Float64Array(b.length);
      for (let i = 0; i < b.length; i++) d[i] = sets.sets[setOf[i]!]!.includes(k) ? 0 : 1;
      out.push({ type: T.INT64, length: b.length, data: d, nulls: null });
    }
  }
  return { length: b.length, columns: out };
}

// ---------------------------------------------------------------- top-N

export interface SplitTopN extends TwoPhase {
  readonly partial: SortRel;
  readonly merge: SortRel;
}

/** ORDER BY ... LIMIT n over a pipeline: each morsel's top n, then the top n of those (the sort is stable: ties keep morsel order). */
export function splitTopN(rel: SortRel): SplitTopN | null {
  if (rel.limit === undefined || !isPipeline(rel.input)) return null;
  const same = rel.columns.length === rel.input.columns.length && rel.columns.every((c, i) => c.id === rel.input.columns[i]!.id);
  if (!same) return null;
  const src = partialScan(rel.columns);
  return { partial: rel, merge: { ...rel, input: src }, mergeScan: src };
}
