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
// merge. One nearly unique numeric key whose range the table's statistics
// give is planned before the first row is grouped (planByRange): a table
// direct-indexed over the range when it fits, else over the lowest key
// ranges that fit, the other rows going to their range's file as they come.
import type { AggregateRel } from '../../analyzer/resolved.js';
import { memoryBudget, Reservation } from '../../storage/memory-budget.js';
import { partsRange } from '../../storage/table-state.js';
import { BATCH_SIZE, sliceVector, TakeBuffer, takeVectorInto, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluateSync, layoutOf } from '../expr.js';
import { executeRel } from '../execute.js';
import { finishAggregate, splitAggregate, type SplitAggregate } from '../parallel/split.js';
import { SpillPartitions, spillCounters, spillOptions } from '../spill.js';
import { vectorBytes } from '../vectors.js';
import { Aggregation, keepsNoInput } from './aggregate.js';
import { routingAggregate } from './aggregate-route.js';

const splits = new WeakMap<AggregateRel, SplitAggregate | null>();

/**
 * The aggregate as a spilling one, or null when it need not or cannot be:
 * no memory limit or no GROUP BY. Calls that do not split spill their input
 * rows instead (aggregate-route.ts).
 */
export function spillingAggregate(rel: AggregateRel, ctx: ExecContext): AsyncGenerator<Batch> | null {
  if (memoryBudget.limit <= 0 || rel.groupBy.length === 0) return null;
  let split = splits.get(rel);
  if (split === undefined) {
    split = splitAggregate(rel, true);
    splits.set(rel, split);
  }
  return split === null ? routingAggregate(rel, ctx) : aggregateSpilling(rel, split, ctx);
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
  /** Input rows as they come (their columns), once grouping does not reduce (or, by key range, from the first row: see planByRange). */
  let raw: SpillPartitions | null = null;
  /** Writes `b`'s rows to `raw`; returns how many it kept for the table (rows of its resident files, listed by raw.kept()). */
  const toRaw = (b: Batch): number => {
    const keyVecs: Vector[] = [];
    for (const g of rel.groupBy) keyVecs.push(evaluateSync(g.expr, b, layout, ctx));
    const kept = raw!.writeKeyed(b, keyVecs);
    spillCounters.rawRows += b.length - kept;
    held.set(st.bytes() + spill!.bytes() + raw!.bytes());
    return kept;
  };
  try {
    const transient = st.sync && keepsNoInput(split.partial);
    /** Rows folded into `st` since the last spill. */
    let rows = 0;
    let planned = split.sets !== undefined || !st.sync || !keepsNoInput(split.partial);
    const takeBufs: TakeBuffer[] = [];
    /** Key ranges planned before reading (planByRange). */
    let plan: RangePlan | null = null;
    // Half the share: the groups' partial rows take about as much again while they are written.
    let spillAt = (spillOptions.share / 2) * memoryBudget.limit;
    for await (let b of executeRel(rel.input, ctx, transient)) {
      await checkpoint(ctx);
      if (!planned) {
        planned = true;
        const p = await planByRange(rel, st, b, layout, ctx);
        if (p !== null && 'files' in p) {
          plan = p;
          spill = new SpillPartitions(plan.files, 0, plan);
          raw = new SpillPartitions(plan.files, 0, plan);
          raw.resident = plan.resident;
          spillCounters.rangePlans++;
        } else if (p !== null) {
          // The whole key range in one table sized up front: it spills only if keys beyond the
          // statistics crowd it past what leaves room for its output at the end.
          spillAt = Math.max(spillAt, spillOptions.share * memoryBudget.limit - p.outBytes);
          spillCounters.wholePlans++;
        }
      }
      if (raw) {
        const kept = toRaw(b);
        if (kept === 0) continue;
        // The rows of the in-memory key ranges, into reused memory (the table copies its keys,
        // the accumulators what they keep, before the next batch).
        if (kept < b.length) {
          const sel = raw.kept();
          while (takeBufs.length < b.columns.length) takeBufs.push(new TakeBuffer());
          b = { length: kept, columns: b.columns.map((c, i) => takeVectorInto(c, sel, kept, takeBufs[i]!)) };
        }
      }
      const bytes = st.bytes() + (spill ? spill.bytes() : 0) + (raw ? raw.bytes() : 0);
      held.set(bytes);
      if (bytes > spillAt) {
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
        // is (no hashing per row now), and each file's rows are grouped at the end;
        // so does a table of key ranges planned to fit that did not.
        // (Not with grouping sets: an input row's groups, one per set, would belong in different files.)
        const reducing = raw === null && (groups <= rows / 2 || !st.sync || split.sets !== undefined);
        st = new Aggregation(split.partial, ctx, reducing ? groups : 1024);
        rows = 0;
        held.set(st.bytes() + out.reduce((n, c) => n + vectorBytes(c), 0));
        await yieldTurn();
        spill.writeColumns(out, groups, keyCols);
        held.set(st.bytes() + spill.bytes());
        if (!reducing) {
          if (raw) raw.resident = 0;
          else raw = new SpillPartitions(spill.n, 0, spill.range);
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
    // The in-memory key ranges' groups are whole (no file holds their keys): out first, then let go.
    if (raw !== null && raw.resident > 0) {
      yield* finished(st, split, held, ctx);
      st = new Aggregation(split.partial, ctx);
    }
    if (st.table.size > 0) spill.writeColumns(st.finish(true), st.table.size, keyCols);
    spill.flush();
    raw?.flush();
    // Let the last table go (the merges below hold one file's groups at a time).
    st = new Aggregation(split.partial, ctx);
    held.set(0);
    await yieldTurn();
    for (let p = 0; p < spill.n; p++) {
      const spilled = spill.files[p]!;
      const rawFile = raw?.files[p];
      // The file's input rows grouped into partial rows.
      let part: Aggregation | null = null;
      if (rawFile && rawFile.rows > 0) {
        part = new Aggregation(split.partial, ctx);
        // Planned key ranges: the file's keys are a range known now (the first and last file may hold
        // keys beyond it; the index grows for them), its groups at most its rows.
        if (plan) {
          const lo = plan.lo + p * plan.width;
          const groups = Math.min(plan.width, rawFile.rows);
          if (part.table.presetDense(lo, lo + plan.width - 1, groups)) part.reserveGroups(groups);
        }
        for (const b of rawFile.read(true)) {
          part.consume(b);
          await checkpoint(ctx);
        }
        rawFile.close();
      }
      if (spilled.rows === 0) {
        // No partial rows: the input rows' groups are the file's output as they are.
        if (part) yield* finished(part, split, held, ctx);
        continue;
      }
      // The file's partial rows, and its input rows' groups, merged by the merge plan.
      const merge = new Aggregation(split.merge, ctx);
      for (const b of spilled.read(true)) {
        merge.consume(b);
        await checkpoint(ctx);
      }
      spilled.close();
      if (part) {
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

/** The whole key range in memory, beyond half the share: `outBytes`, what its output at the end holds besides the table. */
interface WholePlan {
  readonly outBytes: number;
}

/** Files by ranges of one numeric key: file p holds [lo + p × width, lo + (p + 1) × width); files below `resident` stay in memory. */
interface RangePlan {
  readonly lo: number;
  readonly width: number;
  readonly files: number;
  readonly resident: number;
}

/**
 * Key ranges decided before the first row is grouped, for one numeric key of
 * nearly unique values (over half of the first batch's keys distinct) that is
 * a column of a table scan: its range and the rows come from the row groups'
 * statistics (storage partsRange). When the groups those allow (at most one
 * per key value and per row) would pass the aggregate's share, the range is
 * cut into files (as valueRange does) and the lowest files' keys, as many as
 * fit, stay in memory in a table direct-indexed over their range (no hashing,
 * no re-index); every other row goes to its file as it comes (hybrid hash
 * aggregation), and those files are grouped at the end. When they fit, the
 * table is direct-indexed over the whole range from the first row. Null:
 * no plan (the table grows and spills as it must).
 */
async function planByRange(
  rel: AggregateRel,
  st: Aggregation,
  first: Batch,
  layout: ReadonlyMap<number, number>,
  ctx: ExecContext,
): Promise<RangePlan | WholePlan | null> {
  if (rel.groupBy.length !== 1) return null;
  const key = rel.groupBy[0]!.expr;
  const scan = rel.input;
  const catalog = ctx.query.catalog;
  if (key.kind !== 'column' || scan.kind !== 'scan' || !catalog.scanParts || first.length < 1024) return null;
  const v = evaluateSync(key, first, layout, ctx);
  if (!(v.data instanceof Float64Array) || !nearlyUnique(v.data, first.length)) return null;
  const at = scan.columns.findIndex((c) => c.id === key.columnId);
  if (at < 0) return null;
  const listed = await catalog.scanParts(scan.table, { columns: scan.tableColumns, asOfMs: scan.asOfMs, history: scan.history, filters: [] });
  if (listed === null) return null;
  const r = await partsRange(listed.parts, listed.columns, scan.tableColumns[at]!);
  if (r === null || !Number.isInteger(r.min) || !Number.isInteger(r.max)) return null;
  const span = r.max - r.min + 1;
  // Too spread for a direct index (ids times a stride): no plan.
  if (span > 4 * r.rows || span > DENSE_MAX) return null;
  const limit = memoryBudget.limit;
  const groups = Math.min(span, r.rows);
  const perGroup = st.bytesPerGroup();
  // What the table may hold: half the share (as above), less the files' write buffers (spill.ts: ~1/16 of the limit).
  const room = (spillOptions.share / 2) * limit - limit / 16;
  // The direct index: 4 bytes per key value.
  const need = groups * perGroup + 4 * span;
  if (need <= 0.9 * room) {
    if (st.table.presetDense(r.min, r.max, groups)) st.reserveGroups(groups);
    return null;
  }
  // A table sized for the whole range never spills partial rows (unless keys beyond the
  // statistics crowd it), so half the share need not be kept for them: it fits when the
  // table and its output at the end fit the share. The output's keys and counts are views
  // of the table (finished); other results are new columns. At 100M rows of ~N/2 keys
  // under 4 GB this keeps the GROUP BY in memory, which the split into files made ~2x
  // dearer (executor README).
  const outBytes = groups * st.outputBytesPerGroup();
  if (need + outBytes <= 0.9 * spillOptions.share * limit && st.table.presetDense(r.min, r.max, groups)) {
    st.reserveGroups(groups);
    return { outBytes };
  }
  const files = Math.min(MAX_RANGE_FILES, Math.max(spillOptions.partitions, Math.ceil(span / DENSE_FILE_RANGE)));
  const width = Math.ceil(span / files);
  // As many of the lowest files as fit, each of their key values possibly a group (as many as the rows at most):
  // room is made for exactly those, so the table never grows past its plan (keys beyond the statistics aside).
  const residentGroups = (k: number): number => Math.min(k * width, r.rows);
  let resident = files - 1;
  while (resident > 0 && residentGroups(resident) * perGroup + 4 * resident * width > 0.9 * room) resident--;
  if (resident > 0 && st.table.presetDense(r.min, r.min + resident * width - 1, residentGroups(resident))) st.reserveGroups(residentGroups(resident));
  return { lo: r.min, width, files, resident };
}

/** Whether over half of the first n keys are distinct (sorted copy). */
function nearlyUnique(d: Float64Array, n: number): boolean {
  const s = d.slice(0, n).sort();
  let distinct = 1;
  for (let i = 1; i < n; i++) if (s[i] !== s[i - 1]) distinct++;
  return distinct > n / 2;
}

/** The output rows of a finished aggregation (`st`: the partial aggregate held whole, or one file's merge). */
async function* finished(st: Aggregation, split: SplitAggregate, held: Reservation, ctx: ExecContext): AsyncGenerator<Batch> {
  // `st` is used no more: its number keys and row counts go out as views of its buffers, not copies.
  const views: Vector[] = [];
  const out = st.finish(true, views);
  // Kept at the most any file's merge held: the caches need not refill between files.
  held.set(Math.max(held.held, st.bytes() + out.reduce((n, c) => n + (views.includes(c) ? 0 : vectorBytes(c)), 0)));
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

/** GroupTable's largest dense index (DENSE_MAX there). */
const DENSE_MAX = 1 << 27;
/** GroupTable's smallest dense index (keys of this range are direct-indexed from the first batch). */
const DENSE_FILE_RANGE = 1 << 20;
/** Open files per spill at most (a partial-rows and an input-rows set are open together). */
const MAX_RANGE_FILES = 256;

/** One turn of the event loop (a collection the released state asked for runs there). */
function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
