// ORDER BY: materializes the input, evaluates the key vectors once, sorts an
// index array with typed comparators (stable), and emits rows in BATCH_SIZE
// slices. With `limit` (top-N) it keeps only the best rows (see topN).
import type { SortKey, SortRel } from '../../analyzer/resolved.js';
import type { SqlType } from '../../types/types.js';
import { BATCH_SIZE, concatVectors, sliceVector, takeVector, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext, type TopNSeed } from '../context.js';
import { evaluate, evaluateSync, hasSubquery, layoutOf } from '../expr.js';
import { executeRel } from '../execute.js';
import { memoryBudget, Reservation } from '../../storage/memory-budget.js';
import { SpillFile, spillOptions } from '../spill.js';
import { sortRows, thresholdComparator, type ValueComparator } from '../sort-keys.js';
import { batchBytes, concatBatches, sliceBatch, takeBatch } from '../vectors.js';
import { withTopNFilter, type TopNFilter } from './topn-filter.js';

export async function sortKeyVectors(keys: readonly SortKey[], b: Batch, layout: ReadonlyMap<number, number>, ctx: ExecContext): Promise<Vector[]> {
  const out: Vector[] = [];
  for (const k of keys) out.push(await evaluate(k.expr, b, layout, ctx));
  return out;
}

/** The permutation that orders `b` by `keys`. */
export async function sortPermutation(keys: readonly SortKey[], b: Batch, layout: ReadonlyMap<number, number>, ctx: ExecContext): Promise<Int32Array> {
  const vecs = await sortKeyVectors(keys, b, layout, ctx);
  return sortRows(vecs, keys, b.length);
}

/** `source`: rel.input's rows when the caller has them already (a window that found its input too large). */
export async function* sortOp(rel: SortRel, ctx: ExecContext, source?: AsyncIterable<Batch>): AsyncGenerator<Batch> {
  if (rel.limit !== undefined) {
    yield* topN(rel, rel.limit, ctx);
    return;
  }
  const layout = layoutOf(rel.input.columns);
  const types = rel.input.columns.map((c) => c.type);
  // The input, its keys and the permutation draw on the engine's memory budget;
  // past half its share the rows so far become a sorted run in a spill file.
  const held = new Reservation();
  const runs: SpillFile[] = [];
  try {
    let parts: Batch[] = [];
    let bytes = 0;
    let rows = 0;
    for await (const b of source ?? executeRel(rel.input, ctx)) {
      await checkpoint(ctx);
      if (b.length === 0) continue;
      parts.push(b);
      bytes += batchBytes(b);
      rows += b.length;
      // Half the share: the run's concatenation and sort arrays take about as much again.
      if (held.set(bytes + rows * SORT_ROW_BYTES) > (spillOptions.share / 2) * memoryBudget.limit && memoryBudget.limit > 0) {
        held.set(2 * bytes + rows * SORT_ROW_BYTES);
        const input = concatBatches(types, parts);
        parts = [];
        runs.push(await writeRun(rel, input, ctx));
        bytes = 0;
        rows = 0;
        held.set(0);
      }
    }
    if (runs.length > 0) {
      if (parts.length > 0) runs.push(await writeRun(rel, concatBatches(types, parts), ctx));
      parts = [];
      held.set(0);
      yield* mergeRuns(rel, runs, ctx, held);
      return;
    }
    held.set(2 * bytes + rows * SORT_ROW_BYTES);
    const all = concatBatches(types, parts);
    parts = [];
    held.set(bytes + rows * SORT_ROW_BYTES);
    if (all.length === 0) return;
    const perm = await sortPermutation(rel.keys, all, layout, ctx);
    await checkpoint(ctx);
    for (let s = 0; s < all.length; s += BATCH_SIZE) {
      const e = Math.min(all.length, s + BATCH_SIZE);
      yield takeBatch(all, perm.subarray(s, e), e - s);
      await checkpoint(ctx);
    }
  } finally {
    held.release();
    for (const r of runs) r.close();
  }
}

/** A sorted row's own state beside its columns: key ranks and the permutation (Int32Arrays). */
const SORT_ROW_BYTES = 16;

/**
 * ORDER BY ... LIMIT n: keeps the best n rows seen so far. Once n rows are
 * kept, the worst of them is a threshold: incoming rows that don't sort
 * strictly before it are dropped right away (ties keep the earlier row, as a
 * stable sort would), so on typical data almost nothing is buffered and the
 * occasional compaction sorts only n + BATCH_SIZE rows.
 */
/**
 * Rows strictly before the threshold row (`ties`: or equal to it), for
 * numeric keys without NULLs or NaNs (typed compare, no per-batch concat).
 * -1 when it does not apply.
 */
function numericBelow(t: readonly Vector[], keys: readonly Vector[], specs: readonly SortKey[], n: number, sel: Int32Array, ties: boolean): number {
  const nk = keys.length;
  const tv = new Float64Array(nk);
  const data: (Float64Array | Int32Array)[] = [];
  for (let k = 0; k < nk; k++) {
    // Decimal words and interval parts are compared by the comparators (reading `data` would box them).
    if (keys[k]!.decimal || t[k]!.decimal || keys[k]!.interval || t[k]!.interval) return -1;
    const d = keys[k]!.data;
    const td = t[k]!.data;
    if (!(d instanceof Float64Array || d instanceof Int32Array) || keys[k]!.nulls !== null) return -1;
    if (!(td instanceof Float64Array || td instanceof Int32Array) || (t[k]!.nulls !== null && t[k]!.nulls![0] === 1)) return -1;
    const x = td[0]!;
    if (x !== x) return -1;
    tv[k] = x;
    data.push(d);
  }
  // The first key decides almost every row: compare it alone, inline, and
  // look at later keys only on a tie with the threshold.
  const d0 = data[0]!;
  const x0 = tv[0]!;
  const desc0 = specs[0]!.descending;
  let c = 0;
  for (let j = 0; j < n; j++) {
    const a = d0[j]!;
    if (a === x0) {
      let better = ties;
      for (let k = 1; k < nk; k++) {
        const b = data[k]![j]!;
        const x = tv[k]!;
        if (b === x) continue;
        if (b !== b) return -1;
        better = specs[k]!.descending ? b > x : b < x;
        break;
      }
      if (better) sel[c++] = j;
    } else if (desc0 ? a > x0 : a < x0) sel[c++] = j;
    else if (a !== a) return -1;
  }
  return c;
}

/** Rows strictly before the threshold (`ties`: or equal to it) by per-key comparators (the first key decides most rows). */
function below(cmps: readonly ValueComparator[], n: number, sel: Int32Array, ties: boolean): number {
  const c0 = cmps[0]!;
  const bound = ties ? 1 : 0;
  let c = 0;
  for (let j = 0; j < n; j++) {
    let r = c0(j);
    for (let k = 1; r === 0 && k < cmps.length; k++) r = cmps[k]!(j);
    if (r < bound) sel[c++] = j;
  }
  return c;
}

/**
 * Top-N state. The per-batch work is in these methods, the topN generator only
 * loops: large async generator bodies are slow for V8 to optimize, and the
 * first runs of a query paid for that on every batch.
 */
class TopN {
  readonly layout: Map<number, number>;
  readonly types: SqlType[];
  readonly keyTypes: SqlType[];
  /** Sort keys hold no subquery: evaluated synchronously. */
  readonly sync: boolean;
  private kept: Batch | null = null; // sorted, at most `limit` rows
  private keptKeys: Vector[] = [];
  private threshold: Vector[] | null = null; // keys of kept's last row once kept is full
  private pending: Batch[] = [];
  private pendingKeys: Vector[][] = [];
  private pendingRows = 0;
  private selBuf = new Int32Array(BATCH_SIZE);

  constructor(
    readonly rel: SortRel,
    readonly limit: number,
    readonly ctx: ExecContext,
    /** Keys a row must beat to be kept at all (ExecContext.topNSeeds). */
    private readonly seed: TopNSeed | null = null,
    /** Told each new threshold (the scan's live filter, topn-filter.ts). */
    private readonly filter: TopNFilter | null = null,
  ) {
    this.layout = layoutOf(rel.input.columns);
    this.types = rel.input.columns.map((c) => c.type);
    this.keyTypes = rel.keys.map((k) => k.expr.type);
    this.sync = !rel.keys.some((k) => hasSubquery(k.expr));
    this.threshold = seed?.keys ?? null;
    filter?.update(this.threshold);
  }

  keysSync(b: Batch): Vector[] {
    return this.rel.keys.map((k) => evaluateSync(k.expr, b, this.layout, this.ctx));
  }

  /** Keeps the rows of `b` that can still be among the best `limit`. */
  consume(b: Batch, keys: Vector[]): void {
    const rel = this.rel;
    let batch = b;
    if (this.threshold) {
      const t: Vector[] = this.threshold;
      // Scratch: takeBatch/takeVector copy the selected rows out of it.
      if (this.selBuf.length < b.length) this.selBuf = new Int32Array(Math.max(b.length, BATCH_SIZE));
      const sel = this.selBuf;
      // A seed from a later morsel loses ties: rows equal to it are kept.
      const ties = t === this.seed?.keys && !this.seed.strict;
      let c = numericBelow(t, keys, rel.keys, b.length, sel, ties);
      if (c < 0) c = below(keys.map((v, k) => thresholdComparator(v, t[k]!, rel.keys[k]!)), b.length, sel, ties);
      if (c === 0) return;
      if (c < b.length) {
        batch = takeBatch(b, sel, c);
        keys = keys.map((v) => takeVector(v, sel, c));
      }
    }
    this.pending.push(batch);
    this.pendingKeys.push(keys);
    this.pendingRows += batch.length;
    // A scan pruning by the threshold (live filter) gets it fresh: an eighth of the limit pending is
    // enough to sort again (the sort costs about the limit's rows, so at most ~8 sorted rows per row kept).
    if (this.pendingRows >= (this.filter && this.kept ? Math.max(1, this.limit >> 3) : Math.max(this.limit, BATCH_SIZE))) this.compact();
  }

  private compact(): void {
    const { kept, limit } = this;
    const batches = kept ? [kept, ...this.pending] : this.pending;
    const keySets = kept ? [this.keptKeys, ...this.pendingKeys] : this.pendingKeys;
    const all = concatBatches(this.types, batches);
    const allKeys = this.keyTypes.map((t, k) => concatVectors(t, keySets.map((ks) => ks[k]!)));
    const perm = sortRows(allKeys, this.rel.keys, all.length);
    const keep = Math.min(limit, all.length);
    const sel = perm.subarray(0, keep);
    this.kept = takeBatch(all, sel, keep);
    this.keptKeys = allKeys.map((v) => takeVector(v, sel, keep));
    this.threshold = keep === limit ? this.keptKeys.map((v) => takeVector(v, Int32Array.of(keep - 1), 1)) : (this.seed?.keys ?? null);
    this.filter?.update(this.threshold);
    this.pending = [];
    this.pendingKeys = [];
    this.pendingRows = 0;
  }

  /** The best rows, sorted (null: no input). */
  result(): Batch | null {
    if (this.pendingRows > 0) this.compact();
    return this.kept;
  }
}

async function* topN(rel: SortRel, limit: number, ctx: ExecContext): AsyncGenerator<Batch> {
  if (limit <= 0) return;
  const filter = withTopNFilter(rel, ctx);
  const st = new TopN(rel, limit, ctx, ctx.topNSeeds?.get(rel) ?? null, filter);
  for await (const b of executeRel(rel.input, filter?.ctx ?? ctx)) {
    await checkpoint(ctx);
    if (b.length === 0) continue;
    st.consume(b, st.sync ? st.keysSync(b) : await sortKeyVectors(rel.keys, b, st.layout, ctx));
  }
  const out = st.result();
  if (!out) return;
  for (let s = 0; s < out.length; s += BATCH_SIZE) {
    const e = Math.min(out.length, s + BATCH_SIZE);
    yield sliceBatch(out, s, e);
  }
}

// ---------------------------------------------------------------- external sort
//
// ORDER BY past the memory budget: an external merge sort. The input is cut
// into runs of what fits (sorted in memory, written to a spill file each,
// in input order), then merged a step at a time. Each step takes the run
// whose current batch ends lowest (ties: the earliest run) as the bound;
// every row that sorts before the bound row, plus that run's whole batch and
// the rows equal to the bound of earlier runs, can go out now: no later row
// of any run sorts before them, and equal rows keep run order (input order),
// as the stable in-memory sort would. Those rows are sorted (stably, in run
// order) and emitted; the bound run moves to its next batch, so every step
// progresses. A step holds one batch per run.

/** Rows per frame of a run (fewer, larger frames than BATCH_SIZE). */
const RUN_BATCH = 64 * 1024;

/** Sorts `input` (one run's rows) and writes it to a new spill file. */
async function writeRun(rel: SortRel, input: Batch, ctx: ExecContext): Promise<SpillFile> {
  const perm = await sortPermutation(rel.keys, input, layoutOf(rel.input.columns), ctx);
  const file = new SpillFile();
  for (let s = 0; s < input.length; s += RUN_BATCH) {
    const e = Math.min(input.length, s + RUN_BATCH);
    file.write(takeBatch(input, perm.subarray(s, e), e - s));
    await checkpoint(ctx);
  }
  return file;
}

interface RunCursor {
  readonly rows: Iterator<Batch>;
  batch: Batch | null;
  keys: Vector[];
  pos: number;
}

/** The runs' rows in ORDER BY order. */
async function* mergeRuns(rel: SortRel, runs: readonly SpillFile[], ctx: ExecContext, held: Reservation): AsyncGenerator<Batch> {
  const layout = layoutOf(rel.input.columns);
  const types = rel.input.columns.map((c) => c.type);
  const cursors: RunCursor[] = runs.map((f) => ({ rows: f.read(), batch: null, keys: [], pos: 0 }));
  const advance = async (c: RunCursor): Promise<void> => {
    const next = c.rows.next();
    c.batch = next.done ? null : next.value;
    c.pos = 0;
    c.keys = c.batch ? await sortKeyVectors(rel.keys, c.batch, layout, ctx) : [];
  };
  for (const c of cursors) await advance(c);
  for (;;) {
    let m = -1;
    for (let r = 0; r < cursors.length; r++) {
      const c = cursors[r]!;
      if (c.batch === null) continue;
      if (m < 0 || endsBefore(c, cursors[m]!, rel)) m = r;
    }
    if (m < 0) return;
    const bound = cursors[m]!;
    const last = bound.batch!.length - 1;
    const boundKeys = bound.keys.map((k) => sliceVector(k, last, last + 1));
    const parts: Batch[] = [];
    let bytes = 0;
    for (let r = 0; r < cursors.length; r++) {
      const c = cursors[r]!;
      if (c.batch === null) continue;
      // Rows before the bound (runs after the bound's: strictly before; earlier runs and the bound run: ties too).
      const end = r === m ? c.batch.length : prefixBefore(c, boundKeys, rel, r < m);
      if (end > c.pos) {
        const part = sliceBatch(c.batch, c.pos, end);
        parts.push(part);
        bytes += batchBytes(part);
        c.pos = end;
      }
    }
    held.set(2 * bytes);
    const step = concatBatches(types, parts);
    const perm = await sortPermutation(rel.keys, step, layout, ctx);
    for (let s = 0; s < step.length; s += BATCH_SIZE) {
      const e = Math.min(step.length, s + BATCH_SIZE);
      yield takeBatch(step, perm.subarray(s, e), e - s);
      await checkpoint(ctx);
    }
    for (const c of cursors) if (c.batch !== null && c.pos >= c.batch.length) await advance(c);
  }
}

/** Whether run a's current batch ends strictly before run b's. */
function endsBefore(a: RunCursor, b: RunCursor, rel: SortRel): boolean {
  const i = a.batch!.length - 1;
  const j = b.batch!.length - 1;
  for (let k = 0; k < rel.keys.length; k++) {
    const c = thresholdComparator(sliceVector(a.keys[k]!, i, i + 1), sliceVector(b.keys[k]!, j, j + 1), rel.keys[k]!)(0);
    if (c !== 0) return c < 0;
  }
  return false;
}

/** The end of the run's rows from its position that sort before the bound row (`ties`: or equal to it); a run's batch is sorted. */
function prefixBefore(c: RunCursor, bound: readonly Vector[], rel: SortRel, ties: boolean): number {
  const cmps = rel.keys.map((k, i) => thresholdComparator(c.keys[i]!, bound[i]!, k));
  const n = c.batch!.length;
  let p = c.pos;
  for (; p < n; p++) {
    let r = 0;
    for (let k = 0; r === 0 && k < cmps.length; k++) r = cmps[k]!(p);
    if (r > 0 || (r === 0 && !ties)) break;
  }
  return p;
}
