// Hash aggregation past the memory budget, Grace-style. A GROUP BY whose
// calls split into partial and merge calls (parallel/split.ts: COUNT, SUM,
// AVG as SUM and COUNT, MIN, MAX, ...) runs as its partial aggregate; when
// the group table and accumulators pass half their share of the engine's
// memory limit (the partial rows take as much again while written), the
// groups so far are written out as partial rows, spread over
// spillOptions.partitions files by key (one numeric key: by ranges of its
// values, so each file's keys are dense; otherwise by hash), and the table
// starts empty again. When that table held more than half as many groups as
// rows (nearly unique keys), grouping does not pay while reading: the rest
// of the input goes to the files as it is, by the same key ranges or hashes.
// At the end each file is merged on its own: its input rows grouped into
// partial rows, merged with its partial rows by the merge plan's calls (its
// keys are no other file's, so each output group comes from one file,
// holding 1/partitions of the groups at a time). An aggregation that never
// passes its share is finished in place, as aggregateOp would: no file, no
// merge.
import type { AggregateRel } from '../../analyzer/resolved.js';
import { memoryBudget, Reservation } from '../../storage/memory-budget.js';
import { BATCH_SIZE, sliceVector, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluateSync, layoutOf } from '../expr.js';
import { executeRel } from '../execute.js';
import { finishAggregate, splitAggregate, type SplitAggregate } from '../parallel/split.js';
import { SpillPartitions, spillCounters, spillOptions } from '../spill.js';
import { vectorBytes } from '../vectors.js';
import { Aggregation, keepsNoInput } from './aggregate.js';

const splits = new WeakMap<AggregateRel, SplitAggregate | null>();

/**
 * The aggregate as a spilling one, or null when it need not or cannot be:
 * no memory limit, no GROUP BY, or calls that do not split.
 */
export function spillingAggregate(rel: AggregateRel, ctx: ExecContext): AsyncGenerator<Batch> | null {
  if (memoryBudget.limit <= 0 || rel.groupBy.length === 0) return null;
  let split = splits.get(rel);
  if (split === undefined) {
    split = splitAggregate(rel, true);
    splits.set(rel, split);
  }
  return split === null ? null : aggregateSpilling(rel, split, ctx);
}

async function* aggregateSpilling(rel: AggregateRel, split: SplitAggregate, ctx: ExecContext): AsyncGenerator<Batch> {
  // Partial rows' keys: the GROUP BY keys (and the grouping set's index, with grouping sets).
  const keys = rel.groupBy.length + (split.sets ? 1 : 0);
  const keyCols = Array.from({ length: keys }, (_, i) => i);
  const layout = layoutOf(rel.input.columns);
  const held = new Reservation();
  let st = new Aggregation(split.partial, ctx);
  /** Partial rows of the tables spilled so far. */
  let spill: SpillPartitions | null = null;
  /** Input rows as they come (their columns), once grouping does not reduce. */
  let raw: SpillPartitions | null = null;
  const toRaw = (b: Batch): void => {
    const keyVecs: Vector[] = [];
    for (const g of rel.groupBy) keyVecs.push(evaluateSync(g.expr, b, layout, ctx));
    raw!.writeKeyed(b, keyVecs);
    spillCounters.rawRows += b.length;
    held.set(spill!.bytes() + raw!.bytes());
  };
  try {
    const transient = st.sync && keepsNoInput(split.partial);
    /** Rows folded into `st` since the last spill. */
    let rows = 0;
    for await (const b of executeRel(rel.input, ctx, transient)) {
      await checkpoint(ctx);
      if (raw) {
        toRaw(b);
        continue;
      }
      const bytes = st.bytes() + (spill ? spill.bytes() : 0);
      held.set(bytes);
      // Half the share: the groups' partial rows take about as much again while they are written.
      if (bytes > (spillOptions.share / 2) * memoryBudget.limit) {
        // The groups as partial rows (room made first: the caches give way); the table and
        // accumulators behind them are let go (and collected) before the rows are written.
        held.set(2 * bytes);
        const out = st.finish(true);
        const groups = st.table.size;
        if (spill === null) {
          const range = keys === 1 ? valueRange(out[0]!, groups) : null;
          spill = new SpillPartitions(range ? range.files : spillOptions.partitions, 0, range);
        }
        // A table that held more than half as many groups as the rows it took (nearly
        // unique keys) saves little: the rest of the input goes to files by key as it
        // is (no hashing per row now), and each file's rows are grouped at the end.
        // (Not with grouping sets: an input row's groups, one per set, would belong in different files.)
        const reducing = groups <= rows / 2 || !st.sync || split.sets !== undefined;
        st = new Aggregation(split.partial, ctx, reducing ? groups : 1024);
        rows = 0;
        held.set(st.bytes() + out.reduce((n, c) => n + vectorBytes(c), 0));
        await yieldTurn();
        spill.writeColumns(out, groups, keyCols);
        held.set(st.bytes() + spill.bytes());
        if (!reducing) {
          raw = new SpillPartitions(spill.n, 0, spill.range);
          toRaw(b);
          continue;
        }
      }
      rows += b.length;
      if (st.sync) st.consume(b);
      else await st.consumeAsync(b);
    }
    if (spill === null) {
      yield* finished(st, split, held, ctx);
      return;
    }
    if (st.table.size > 0) spill.writeColumns(st.finish(true), st.table.size, keyCols);
    spill.flush();
    raw?.flush();
    // Let the last table go (the merges below hold one file's groups at a time).
    st = new Aggregation(split.partial, ctx);
    held.set(0);
    await yieldTurn();
    for (let p = 0; p < spill.n; p++) {
      // The file's partial rows, and its input rows grouped into partial rows, merged by the merge plan.
      const merge = new Aggregation(split.merge, ctx);
      for (const b of spill.files[p]!.read(true)) {
        merge.consume(b);
        await checkpoint(ctx);
      }
      spill.files[p]!.close();
      const rawFile = raw?.files[p];
      if (rawFile) {
        const part = new Aggregation(split.partial, ctx);
        for (const b of rawFile.read(true)) {
          part.consume(b);
          await checkpoint(ctx);
        }
        rawFile.close();
        held.set(Math.max(held.held, merge.bytes() + part.bytes()));
        const out = part.finish(true);
        const n = part.table.size;
        for (let s = 0; s < n; s += BATCH_SIZE) merge.consume({ length: Math.min(n, s + BATCH_SIZE) - s, columns: out.map((c) => sliceVector(c, s, Math.min(n, s + BATCH_SIZE))) });
      }
      yield* finished(merge, split, held, ctx);
    }
  } finally {
    held.release();
    spill?.close();
    raw?.close();
  }
}

/** The output rows of a finished aggregation (`st`: the partial aggregate held whole, or one file's merge). */
async function* finished(st: Aggregation, split: SplitAggregate, held: Reservation, ctx: ExecContext): AsyncGenerator<Batch> {
  const out = st.finish(true);
  // Kept at the most any file's merge held: the caches need not refill between files.
  held.set(Math.max(held.held, st.bytes() + out.reduce((n, c) => n + vectorBytes(c), 0)));
  const numGroups = st.table.size;
  const keys = split.partial.groupBy.length;
  const sets = split.sets;
  for (let s = 0; s < numGroups; s += BATCH_SIZE) {
    const e = Math.min(numGroups, s + BATCH_SIZE);
    yield finishAggregate({ length: e - s, columns: out.map((c) => sliceVector(c, s, e)) }, keys, split.steps, sets);
    await checkpoint(ctx);
  }
}

/**
 * Files by ranges of one numeric key's values, from the first spilled
 * table's keys (later keys outside go to the first or last file): each file's
 * keys are then a dense range, grouped by direct indexing from the first row
 * when the range is at most DENSE_FILE_RANGE (GroupTable's smallest dense
 * index): so as many files as that takes, spillOptions.partitions at least.
 * Null when the key is not numeric or holds a single value.
 */
function valueRange(v: Vector, n: number): { lo: number; width: number; files: number } | null {
  const d = v.data;
  if (!(d instanceof Float64Array)) return null;
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < n; i++) {
    const x = d[i]!;
    if (x < lo && x > -Infinity) lo = x;
    if (x > hi && x < Infinity) hi = x;
  }
  if (!(hi > lo)) return null;
  const files = Math.min(MAX_RANGE_FILES, Math.max(spillOptions.partitions, Math.ceil((hi - lo + 1) / DENSE_FILE_RANGE)));
  return { lo, width: (hi - lo) / files, files };
}

/** GroupTable's smallest dense index (keys of this range are direct-indexed from the first batch). */
const DENSE_FILE_RANGE = 1 << 20;
/** Open files per spill at most (a partial-rows and an input-rows set are open together). */
const MAX_RANGE_FILES = 256;

/** One turn of the event loop (a collection the released state asked for runs there). */
function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
