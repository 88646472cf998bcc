// Hash aggregation past the memory budget, Grace-style. A GROUP BY whose
// calls split into partial and merge calls (parallel/split.ts: COUNT, SUM,
// AVG as SUM and COUNT, MIN, MAX, ...) runs as its partial aggregate; when
// the group table and accumulators pass half their share of the engine's
// memory limit (the partial rows take as much again while written), the
// groups so far are written out as partial rows, spread over
// spillOptions.partitions files by the hash of their keys, and the table
// starts empty again (nearly unique keys: a small table per 64k input rows).
// At the end the last groups go out too, and each file is merged
// on its own (the merge plan over its partial rows: its keys are no other
// file's, so each output group comes from one file, holding 1/partitions
// of the groups at a time). An aggregation that never passes its share is
// finished in place, as aggregateOp would: no file, no merge.
import type { AggregateRel } from '../../analyzer/resolved.js';
import { memoryBudget, Reservation } from '../../storage/memory-budget.js';
import { BATCH_SIZE, sliceVector, type Batch } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { collectRows, executeRel } from '../execute.js';
import { withScanSource } from '../parallel/parts.js';
import { finishAggregate, splitAggregate, type SplitAggregate } from '../parallel/split.js';
import { SpillPartitions, spillOptions } from '../spill.js';
import { vectorBytes } from '../vectors.js';
import { Aggregation, keepsNoInput } from './aggregate.js';

const splits = new WeakMap<AggregateRel, SplitAggregate | null>();
/** The merge plans this module runs over spill files: never spilled again (their groups are one file's). */
const merges = new WeakSet<AggregateRel>();

/**
 * The aggregate as a spilling one, or null when it need not or cannot be:
 * no memory limit, no GROUP BY, calls that do not split, or the merge of a
 * spill file (its groups are that file's share already).
 */
export function spillingAggregate(rel: AggregateRel, ctx: ExecContext): AsyncGenerator<Batch> | null {
  if (memoryBudget.limit <= 0 || rel.groupBy.length === 0 || merges.has(rel)) return null;
  let split = splits.get(rel);
  if (split === undefined) {
    split = splitAggregate(rel, true);
    splits.set(rel, split);
    if (split) merges.add(split.merge);
  }
  return split === null ? null : aggregateSpilling(rel, split, ctx);
}

async function* aggregateSpilling(rel: AggregateRel, split: SplitAggregate, ctx: ExecContext): AsyncGenerator<Batch> {
  const keys = rel.groupBy.length;
  const keyCols = Array.from({ length: keys }, (_, i) => i);
  const held = new Reservation();
  let st = new Aggregation(split.partial, ctx);
  let spill: SpillPartitions | null = null;
  try {
    const transient = st.sync && keepsNoInput(split.partial);
    /** Rows folded into `st`; once a spilled table held more than half as many groups, grouping does not reduce. */
    let rows = 0;
    let reducing = true;
    for await (const b of executeRel(rel.input, ctx, transient)) {
      const bytes = st.bytes();
      held.set(bytes);
      // Half the share: the groups' partial rows take about as much again while they are written.
      // Not reducing (nearly unique keys): each PASS_ROWS of input goes out as its own small table's partial rows,
      // rather than re-growing a large hashed table between spills.
      if (bytes > (spillOptions.share / 2) * memoryBudget.limit || (!reducing && rows >= PASS_ROWS)) {
        spill ??= new SpillPartitions(spillOptions.partitions);
        // The groups as partial rows (room made first: the caches give way); the table and
        // accumulators behind them are let go (and collected) before the rows are written.
        held.set(2 * bytes);
        const out = st.finish();
        const groups = st.table.size;
        if (groups > rows / 2) reducing = false;
        st = new Aggregation(split.partial, ctx, reducing ? groups : PASS_ROWS);
        rows = 0;
        held.set(st.bytes() + out.reduce((n, c) => n + vectorBytes(c), 0));
        if (reducing) await yieldTurn();
        spill.writeColumns(out, groups, keyCols);
        held.set(st.bytes());
      }
      await checkpoint(ctx);
      rows += b.length;
      if (st.sync) st.consume(b);
      else await st.consumeAsync(b);
    }
    if (spill === null) {
      const out = st.finish();
      held.set(st.bytes() + out.reduce((n, c) => n + vectorBytes(c), 0));
      const numGroups = st.table.size;
      for (let s = 0; s < numGroups; s += BATCH_SIZE) {
        const e = Math.min(numGroups, s + BATCH_SIZE);
        yield finishAggregate({ length: e - s, columns: out.map((c) => sliceVector(c, s, e)) }, keys, split.steps);
        await checkpoint(ctx);
      }
      return;
    }
    spill.writeColumns(st.finish(), st.table.size, keyCols);
    // Let the last table go (the merges below hold one file's groups at a time).
    st = new Aggregation(split.partial, ctx);
    held.release();
    await yieldTurn();
    for (const file of spill.files) {
      const source = async function* (): AsyncGenerator<Batch> {
        yield* file.read();
      };
      const merged = await collectRows(split.merge, withScanSource(ctx, split.mergeScan, source));
      file.close();
      for (const b of merged) {
        yield finishAggregate(b, keys, split.steps);
        await checkpoint(ctx);
      }
    }
  } finally {
    held.release();
    spill?.close();
  }
}

/** Input rows per small table once grouping does not reduce (a table that stays in the CPU caches). */
const PASS_ROWS = 64 * 1024;

/** One turn of the event loop (a collection the released state asked for runs there). */
function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
