// Window functions. The input is materialized once; calls sharing a
// (PARTITION BY, ORDER BY) spec share one sort of an index array. Per spec we
// precompute, for every sorted position, its partition bounds and peer-group
// bounds; each call then fills its result directly in input-row order.
//
// Aggregates over frames: a whole-partition frame feeds the GroupsAccumulator
// once with group = partition (O(n)). COUNT/SUM/AVG/MIN/MAX/COUNTIF over
// numeric typed data use a native running state that extends while the frame
// start stays put (cumulative frames are O(n)) and restarts otherwise. Other
// aggregates over moving frames feed the accumulator with group = row and the
// frame's rows (O(n × frame)).
//
// This module is the operator: memory budget, spilling, stages by PARTITION BY keys. The spec's geometry and
// frames, one call's values, percentiles and frame aggregates are in window/geometry.ts, window/calls.ts,
// window/percentile.ts and window/aggregates.ts.
import type { Expr, Rel, WindowCall, WindowRel } from '../../analyzer/resolved.js';
import { type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate, layoutOf } from '../expr.js';
import { executeRel, materialize } from '../execute.js';
import { memoryBudget, Reservation } from '../../storage/memory-budget.js';
import { SpillPartitions, spillOptions } from '../spill.js';
import { batchBytes, concatBatches, rebatch } from '../vectors.js';
import { topNInput } from './window/topn.js';
import { sortedWindowRun, type SortedRun } from './window/suffix.js';
import { partitionedWindow, tooLargeForWindow } from './window/partitioned.js';
import { exprKey, specKey, needsPeers, geometry } from './window/geometry.js';
import { computeCall } from './window/calls.js';

export async function* windowOp(rel: WindowRel, ctx: ExecContext): AsyncGenerator<Batch> {
  // The input and the per-row state beside it draw on the engine's memory budget.
  const held = new Reservation();
  try {
    yield* windowRows(rel, ctx, held);
  } finally {
    held.release();
  }
}

/** A windowed row's own state beside its columns: sort ranks and permutation, partition and peer bounds, a result (typed arrays). */
const WINDOW_ROW_BYTES = 32;

async function* windowRows(rel: WindowRel, ctx: ExecContext, held: Reservation): AsyncGenerator<Batch> {
  // With partitionLimit only each partition's first rows can pass the filter above: number just those.
  if (rel.partitionLimit !== undefined && rel.calls.length > 0) {
    yield* windowOver(rel, await topNInput(rel, ctx, rel.partitionLimit), ctx, held);
    return;
  }
  if (memoryBudget.limit <= 0) {
    yield* windowOver(rel, await materialize(rel.input, ctx, held), ctx, held);
    return;
  }
  yield* windowStream(rel, executeRel(rel.input, ctx), ctx, held);
}

/** The window over `source` (rows of `rel.input`'s columns) under a memory budget: in memory while they fit its share, else spilled. */
async function* windowStream(rel: WindowRel, source: AsyncIterable<Batch>, ctx: ExecContext, held: Reservation): AsyncGenerator<Batch> {
  const partitionBy = sharedPartitionKeys(rel.calls);
  if (partitionBy.length > 0) {
    yield* keyedWindow(rel, source, partitionBy, ctx, held);
    return;
  }
  const stages = windowStages(rel);
  // No call partitions: one pass over the rows in ORDER BY order where the calls allow it (window/sorted.ts).
  const sorted = stages === null ? sortedWindowRun(rel) : null;
  const types = rel.input.columns.map((c) => c.type);
  const input = source[Symbol.asyncIterator]();
  const parts: Batch[] = [];
  let bytes = 0;
  for (let r = await input.next(); !r.done; r = await input.next()) {
    parts.push(r.value);
    bytes += batchBytes(r.value);
    held.set(bytes);
    // Calls that share no key but fall into groups that do: in memory all at once while the input
    // fits its share, else one group after another, each spilled by its own keys (its output,
    // the input with its results beside it, is the next group's input). No partition at all:
    // past the share, sorted through the sort operator (which spills) and run in one pass.
    if ((stages !== null || sorted !== null) && bytes > spillOptions.share * memoryBudget.limit) {
      held.set(0); // the stages (the sort) reserve what they hold
      if (stages !== null) yield* stagedWindows(rel, stages, resumed(parts, input), ctx);
      else yield* sorted!(resumed(parts, input), ctx);
      return;
    }
  }
  held.set(2 * bytes);
  const all = concatBatches(types, parts);
  parts.length = 0;
  held.set(bytes);
  yield* windowOver(rel, all, ctx, held);
}

/** `first`, then the rest of `rest`. */
async function* resumed(first: Batch[], rest: AsyncIterator<Batch>): AsyncGenerator<Batch> {
  while (first.length > 0) yield first.shift()!;
  for (let r = await rest.next(); !r.done; r = await rest.next()) yield r.value;
}

/** A group of calls that share PARTITION BY keys, windowed together; or the calls without PARTITION BY (`keys` empty), over the sorted stream. */
interface WindowStage {
  readonly calls: WindowCall[];
  readonly keys: Expr[];
}

/**
 * The window's calls in groups that each share some PARTITION BY keys (in
 * call order, each call to the first group it shares a key with), the calls
 * without PARTITION BY a group of their own, first (they read the rows in
 * input order, as in memory; sortedWindowRun); null when there is one group,
 * or the calls without PARTITION BY cannot run over the sorted stream.
 */
function windowStages(rel: WindowRel): WindowStage[] | null {
  const stages: WindowStage[] = [];
  const unpartitioned: WindowCall[] = [];
  for (const c of rel.calls) {
    if (c.partitionBy.length === 0) {
      unpartitioned.push(c);
      continue;
    }
    const st = stages.find((g) => sharedPartitionKeys([...g.calls, c]).length > 0);
    if (st) {
      st.calls.push(c);
      st.keys.splice(0, st.keys.length, ...sharedPartitionKeys(st.calls));
    } else stages.push({ calls: [c], keys: [...c.partitionBy] });
  }
  if (unpartitioned.length > 0) {
    if (sortedWindowRun(stageOf(rel.input, unpartitioned)) === null) return null;
    stages.unshift({ calls: unpartitioned, keys: [] });
  }
  return stages.length > 1 ? stages : null;
}

/** The window of `calls` over `input`: the input's columns, then the calls'. */
function stageOf(input: Rel, calls: WindowCall[]): WindowRel {
  return { kind: 'window', input, calls, columns: [...input.columns, ...calls.map((c) => c.column)] };
}

/** The window's calls stage after stage (each its own reservation), its columns put back in the window's order. */
async function* stagedWindows(rel: WindowRel, stages: readonly WindowStage[], source: AsyncIterable<Batch>, ctx: ExecContext): AsyncGenerator<Batch> {
  const helds: Reservation[] = [];
  try {
    let input = rel.input;
    let rows = source;
    for (const st of stages) {
      const stageRel = stageOf(input, st.calls);
      const held = new Reservation();
      helds.push(held);
      rows = st.keys.length === 0 ? sortedWindowRun(stageRel)!(rows, ctx) : keyedWindow(stageRel, rows, st.keys, ctx, held);
      input = stageRel;
    }
    const at = new Map(input.columns.map((c, i) => [c.id, i]));
    const order = rel.columns.map((c) => at.get(c.id)!);
    for await (const b of rows) yield { length: b.length, columns: order.map((i) => b.columns[i]!) };
  } finally {
    for (const h of helds) h.release();
  }
}

/**
 * The calls over the rows of one partition of `keys` (keys every call
 * partitions by) when that partition alone passes the share: the same calls
 * with those keys taken out of their PARTITION BY, over the sorted stream
 * (none left) or in stages (some left: a superset of `keys`). Null when they
 * cannot run without holding the partition.
 */
function partitionRun(rel: WindowRel, keys: readonly Expr[]): SortedRun | null {
  const drop = new Set(keys.map(exprKey));
  const calls = rel.calls.map((c) => ({ ...c, partitionBy: c.partitionBy.filter((e) => !drop.has(exprKey(e))) }));
  const stripped: WindowRel = { ...rel, calls };
  if (calls.every((c) => c.partitionBy.length === 0)) return sortedWindowRun(stripped);
  const stages = windowStages(stripped);
  return stages === null ? null : (source, ctx) => stagedWindows(stripped, stages, source, ctx);
}

/**
 * The window over `source` (rows of `rel.input`'s columns). Past its share of
 * the memory budget the input goes to spill files by `partitionBy` (keys
 * every call partitions by), and each file is windowed on its own: a
 * partition's rows are in one file, in input order.
 */
async function* keyedWindow(rel: WindowRel, source: AsyncIterable<Batch>, partitionBy: readonly Expr[], ctx: ExecContext, held: Reservation): AsyncGenerator<Batch> {
  const types = rel.input.columns.map((c) => c.type);
  const layout = layoutOf(rel.input.columns);
  const parts: Batch[] = [];
  let bytes = 0;
  let spill: SpillPartitions | null = null;
  const toSpill = async (b: Batch): Promise<void> => {
    const keys: Vector[] = [];
    for (const e of partitionBy) keys.push(await evaluate(e, b, layout, ctx));
    spill!.writeKeyed(b, keys);
    held.set(spill!.bytes());
  };
  try {
    for await (const b of source) {
      if (b.length === 0) continue;
      if (spill) {
        await toSpill(b);
        continue;
      }
      parts.push(b);
      bytes += batchBytes(b);
      held.set(bytes);
      if (bytes > spillOptions.share * memoryBudget.limit) {
        spill = new SpillPartitions(spillOptions.partitions);
        for (const p of parts) await toSpill(p);
        parts.length = 0;
        held.set(spill.bytes());
      }
    }
    if (!spill) {
      held.set(2 * bytes);
      const input = concatBatches(types, parts);
      parts.length = 0;
      held.set(bytes);
      yield* windowOver(rel, input, ctx, held);
      return;
    }
    spill.flush();
    for (const file of spill.files) {
      if (tooLargeForWindow(file.bytes)) {
        yield* partitionedWindow(rel, file, partitionBy, windowOver, partitionRun(rel, partitionBy), ctx, held);
        file.close();
        continue;
      }
      const rows: Batch[] = [];
      let n = 0;
      for (const b of file.read()) {
        rows.push(b);
        n += batchBytes(b);
      }
      file.close();
      if (rows.length === 0) continue;
      // The file's batches and their concatenation are both live until the batches are let go: before the window runs.
      held.set(2 * n);
      const input = concatBatches(types, rows);
      rows.length = 0;
      held.set(n);
      yield* windowOver(rel, input, ctx, held);
    }
  } finally {
    spill?.close();
  }
}

/**
 * The PARTITION BY keys every call has (maybe among others): rows with equal
 * values of them are in one partition of no call apart, so they can be
 * windowed apart from the others. Empty when there are none (then the calls
 * are windowed in groups, windowStages).
 */
function sharedPartitionKeys(calls: readonly WindowCall[]): Expr[] {
  const [first, ...rest] = calls;
  if (!first) return [];
  return first.partitionBy.filter((e) => {
    const k = exprKey(e);
    return rest.every((c) => c.partitionBy.some((f) => exprKey(f) === k));
  });
}

/** Counts for tests: inputs windowed whole in memory though past the budget's share (forms that do not stream). */
export const windowCounters = { pastShare: 0 };

/** The window's calls over `input` (all of its rows, or one spill file's partitions), with the input's columns first. */
async function* windowOver(rel: WindowRel, input: Batch, ctx: ExecContext, held: Reservation): AsyncGenerator<Batch> {
  if (tooLargeForWindow(batchBytes(input))) windowCounters.pastShare++;
  held.set(held.held + input.length * WINDOW_ROW_BYTES * rel.calls.length);
  const layout = layoutOf(rel.input.columns);
  const results: Vector[] = new Array(rel.calls.length);
  const bySpec = new Map<string, number[]>();
  rel.calls.forEach((c, i) => {
    const k = specKey(c);
    const l = bySpec.get(k);
    if (l) l.push(i);
    else bySpec.set(k, [i]);
  });
  for (const callIdxs of bySpec.values()) {
    const g = await geometry(rel.calls[callIdxs[0]!]!, input, layout, ctx, callIdxs.some((ci) => needsPeers(rel.calls[ci]!)));
    for (const ci of callIdxs) {
      results[ci] = await computeCall(rel.calls[ci]!, g, input, layout, ctx);
      await checkpoint(ctx);
    }
  }
  const out: Batch = { length: input.length, columns: [...input.columns, ...results] };
  for (const b of rebatch(out)) {
    yield b;
    await checkpoint(ctx);
  }
}
