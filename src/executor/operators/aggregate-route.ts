// A GROUP BY whose calls do not split into partial and merge calls
// (parallel/split.ts: ORDER BY or LIMIT inside a call, DISTINCT, ARRAY_AGG,
// STRING_AGG, ANY_VALUE, NUMERIC sums, APPROX_* ...) past the memory budget:
// its accumulators' states cannot be written out and merged, so its input
// rows are (hybrid hash aggregation). Until the group table and accumulators
// pass their share of the engine's memory limit it runs as aggregateOp does.
// From then on the table takes no new group: a row whose group it holds is
// folded there, any other row goes to a spill file by the hash of its keys,
// so each group's rows are all in the table or all in one file. The table's
// groups are finished first; then each file is aggregated on its own, the
// same way (a file past the share splits again by other hash bits).
// DISTINCT tables past the share go to files of their own first
// (Aggregation.spillDistinct), as in aggregateOp.
// Grouping sets (ROLLUP, CUBE, GROUPING SETS) route by set: an input row
// belongs to one group per set, so each set has files of its own, keyed by
// that set's keys; a row is folded into the sets whose group the table holds
// and written to the files of the others. Each set's files are then
// aggregated as a GROUP BY of that one set (GROUPING() bits and absent keys
// as the set gives them).
import type { AggregateRel } from '../../analyzer/resolved.js';
import { memoryBudget, Reservation } from '../../storage/memory-budget.js';
import { takeVector, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate, evaluateSync, layoutOf } from '../expr.js';
import { executeRel } from '../execute.js';
import { SpillPartitions, spillCounters, spillOptions } from '../spill.js';
import { Aggregation, finishedGroups, keepsNoInput } from './aggregate.js';

/** Levels of files within files: a file that still does not fit after this many splits is aggregated in memory (the memory guard's). */
const MAX_LEVEL = 4;

/**
 * The aggregate routing its input rows to files past the budget, or null
 * when it need not or cannot: no memory limit, no GROUP BY.
 */
export function routingAggregate(rel: AggregateRel, ctx: ExecContext): AsyncGenerator<Batch> | null {
  if (memoryBudget.limit <= 0 || rel.groupBy.length === 0) return null;
  const st = new Aggregation(rel, ctx);
  return aggregateRouting(rel, ctx, executeRel(rel.input, ctx, st.sync && keepsNoInput(rel)), 0, st);
}

async function* aggregateRouting(
  rel: AggregateRel,
  ctx: ExecContext,
  input: AsyncIterable<Batch> | Iterable<Batch>,
  level: number,
  st: Aggregation | null,
): AsyncGenerator<Batch> {
  const rest = yield* foldAndFinish(st ?? new Aggregation(rel, ctx), input, level);
  // Let the table go while the files are aggregated.
  st = null;
  if (rest === null) return;
  try {
    for (let si = 0; si < rest.length; si++) {
      const files = rest[si];
      if (!files) continue;
      // A grouping set's files: a GROUP BY of that set alone (the same output columns).
      const fileRel = rel.groupingSets !== undefined && rel.groupingSets.length > 1 ? { ...rel, groupingSets: [rel.groupingSets[si]!] } : rel;
      for (const file of files.files) {
        if (file.rows === 0) continue;
        yield* aggregateRouting(fileRel, ctx, file.read(), level + 1, null);
        file.close();
      }
    }
  } finally {
    for (const files of rest) files?.close();
  }
}

/** Per grouping set (one when there are none), the files of the rows whose groups the table does not hold; null for an empty set (its one group is always held). */
type Routed = (SpillPartitions | null)[];

/** Folds the input into `st` (routing rows of new groups to files past the share), yields its groups; returns the files, flushed. */
async function* foldAndFinish(st: Aggregation, input: AsyncIterable<Batch> | Iterable<Batch>, level: number): AsyncGenerator<Batch, Routed | null> {
  const { rel, ctx } = st;
  const layout = layoutOf(rel.input.columns);
  const share = spillOptions.share * memoryBudget.limit;
  const held = new Reservation();
  const sets = st.multi ? st.sets : null;
  /** Rows of groups the table does not hold, once it takes no new group. */
  let rest: Routed | null = null;
  let ids = new Int32Array(0);
  const restBytes = (): number => rest!.reduce((n, f) => n + (f?.bytes() ?? 0), 0);
  try {
    for await (const b of input) {
      await checkpoint(ctx);
      if (rest === null) {
        if (st.sync) st.consume(b);
        else await st.consumeAsync(b);
        if (held.set(st.bytes()) <= share || (st.spillDistinct() && held.set(st.bytes()) <= share) || level >= MAX_LEVEL) continue;
        // Grouping sets share the files' write buffers (each set's files fewer, each split again if it does not fit).
        const parts = sets === null ? spillOptions.partitions : Math.max(2, Math.ceil(spillOptions.partitions / sets.length));
        rest = sets === null ? [new SpillPartitions(parts, level)] : sets.map((set) => (set.length === 0 ? null : new SpillPartitions(parts, level)));
        continue;
      }
      const n = b.length;
      const keyVecs: Vector[] = [];
      for (const g of rel.groupBy) keyVecs.push(st.sync ? evaluateSync(g.expr, b, layout, ctx) : await evaluate(g.expr, b, layout, ctx));
      if (ids.length < n) ids = new Int32Array(n);
      for (let si = 0; si < rest.length; si++) {
        const files = rest[si]!;
        // An empty grouping set's one group is always held: every row folds into it.
        const keys = sets === null ? keyVecs : st.keyColumns(keyVecs, si, n);
        if (files === null) ids.fill(0, 0, n);
        else st.table.lookup(keys, n, ids);
        const known: number[] = [];
        const other: number[] = [];
        for (let i = 0; i < n; i++) (ids[i]! >= 0 ? known : other).push(i);
        if (other.length > 0) {
          const all = other.length === n;
          files!.writeKeyed(all ? b : takeBatch(b, other), all ? keys : keys.map((v) => takeVector(v, other)));
          spillCounters.rawRows += other.length;
        }
        if (known.length > 0) {
          const rows = known.length === n ? b : takeBatch(b, known);
          const only = sets === null ? -1 : si;
          if (st.sync) st.consume(rows, only);
          else await st.consumeAsync(rows, only);
        }
      }
      held.set(st.bytes() + restBytes());
    }
    // The table's groups are whole (no file holds their keys).
    yield* finishedGroups(st, held, ctx);
    if (rest) for (const f of rest) f?.flush();
    return rest;
  } catch (e) {
    if (rest) for (const f of rest) f?.close();
    throw e;
  } finally {
    held.release();
  }
}

function takeBatch(b: Batch, sel: readonly number[]): Batch {
  return { length: sel.length, columns: b.columns.map((c) => takeVector(c, sel)) };
}
