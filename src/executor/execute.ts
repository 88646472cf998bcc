// Entry points: run a resolved plan (Rel) as a stream of batches. Each Rel
// kind has its operator in operators/<kind>.ts; operators are async
// generators that pull from their inputs (Volcano-style, one batch at a time).
import type { Rel } from '../analyzer/resolved.js';
import type { Batch } from '../types/vector.js';
import { checkpoint, sharedState, type ExecContext } from './context.js';
import { aggregateOp } from './operators/aggregate.js';
import { spillingAggregate } from './operators/aggregate-spill.js';
import { arrayScanOp } from './operators/array-scan.js';
import { cteRefOp, withOp, recursiveCteOp } from './operators/cte.js';
import { filterOp } from './operators/filter.js';
import { joinOp } from './operators/join.js';
import { limitOp } from './operators/limit.js';
import { projectOp } from './operators/project.js';
import { sampleOp } from './operators/sample.js';
import { filteredScan, scanOp, scanPick } from './operators/scan.js';
import { setOpOp } from './operators/setop.js';
import { sortOp } from './operators/sort.js';
import { unnestOp } from './operators/unnest.js';
import { valuesOp } from './operators/values.js';
import { windowOp } from './operators/window.js';
import { parallelAggregate, parallelTopN } from './parallel/run.js';
import { batchBytes, concatBatches } from './vectors.js';
import type { Reservation } from '../storage/memory-budget.js';

export type { ExecContext } from './context.js';
export { makeExecContext } from './context.js';

/**
 * `transient`: the caller is done with each batch (keeps no reference to it or
 * to its vectors) before it pulls the next one, so the operator may write the
 * next batch into the same memory. A property of this edge of the plan, never
 * of the node: only the consumer knows. Today only the hash join uses it
 * (fed to an aggregate that copies what it keeps): its gathered output
 * columns go into reused memory.
 */
export function executeRel(rel: Rel, ctx: ExecContext, transient = false): AsyncIterable<Batch> {
  switch (rel.kind) {
    case 'scan':
      return scanOp(rel, ctx);
    case 'values':
      return valuesOp(rel, ctx);
    case 'filter':
      // A filter over a scan runs in the scan: the predicate reads only its columns, the rest are copied for the rows kept.
      return rel.input.kind === 'scan' ? scanOp(rel.input, ctx, null, rel.predicate) : filterOp(rel, ctx);
    case 'project': {
      // Column references over a (filtered) scan: the scan picks the columns (one generator layer less).
      const pick = scanPick(rel);
      const src = pick === null ? null : filteredScan(rel.input);
      return src !== null ? scanOp(src.scan, ctx, pick, src.predicate) : projectOp(rel, ctx);
    }
    case 'aggregate':
      return parallelAggregate(rel, ctx) ?? spillingAggregate(rel, ctx) ?? aggregateOp(rel, ctx);
    case 'join':
      return joinOp(rel, ctx, transient);
    case 'sort':
      return parallelTopN(rel, ctx) ?? sortOp(rel, ctx);
    case 'limit':
      return limitOp(rel, ctx);
    case 'window':
      return windowOp(rel, ctx);
    case 'setop':
      return setOpOp(rel, ctx);
    case 'unnest':
      return unnestOp(rel, ctx);
    case 'array_scan':
      return arrayScanOp(rel, ctx);
    case 'with':
      return withOp(rel, ctx);
    case 'cte_ref':
      return cteRefOp(rel, ctx);
    case 'recursive_cte':
      return recursiveCteOp(rel, ctx);
    case 'sample':
      return sampleOp(rel, ctx);
  }
}

/**
 * Runs a plan to completion: every batch of its output (empty batches
 * dropped). This is the statement entry point: subquery caches start empty,
 * so a context reused across statements (scripts) never sees stale results.
 */
export async function collect(rel: Rel, ctx: ExecContext): Promise<Batch[]> {
  return collectRows(rel, statementScope(ctx));
}

/** The output as it is made, batch by batch (empty batches left out): a consumer that writes as it reads holds no whole result. */
export async function* stream(rel: Rel, ctx: ExecContext): AsyncGenerator<Batch> {
  for await (const b of executeRel(rel, statementScope(ctx))) if (b.length > 0) yield b;
}

/** collect() for operators: same statement scope as the caller. */
export async function collectRows(rel: Rel, ctx: ExecContext): Promise<Batch[]> {
  const out: Batch[] = [];
  for await (const b of executeRel(rel, ctx)) if (b.length > 0) out.push(b);
  return out;
}

/** A context with fresh statement-level caches (subquery results). */
export function statementScope(ctx: ExecContext): ExecContext {
  return { ...ctx, shared: sharedState(ctx.query, ctx.shared.lastYield) };
}

/**
 * The whole output as one batch (build sides, sort and window inputs).
 * `held`: the caller's reservation, kept at what the rows take as they
 * arrive (the engine's chunk caches give way to them).
 */
export async function materialize(rel: Rel, ctx: ExecContext, held?: Reservation): Promise<Batch> {
  const parts: Batch[] = [];
  let bytes = 0;
  for await (const b of executeRel(rel, ctx)) {
    // Every materialization checks memory as it grows: its input may come from operators that yield without checking.
    await checkpoint(ctx);
    if (b.length === 0) continue;
    parts.push(b);
    if (held) held.set((bytes += batchBytes(b)));
  }
  // The parts and their concatenation live side by side for a moment.
  held?.set(2 * bytes);
  const all = concatBatches(rel.columns.map((c) => c.type), parts);
  held?.set(bytes);
  return all;
}
