// A PARTITION BY window's spill file too large to window in memory
// (window.ts keyedWindow): its rows go through the sort operator by the
// partition keys (which spills; stable, so each partition's rows stay in
// input order, the order the in-memory window reads them in) and come out
// one partition after another. Partitions are windowed in memory a group at a
// time, each group under half the share; a partition larger than that alone
// streams as the same calls with these keys taken out of their PARTITION BY
// (window.ts partitionRun: the sorted window, sorted.ts, or stages of it and
// of keyed windows), when its calls allow, else it is windowed in memory as
// before (the memory guard's to refuse).
import type { Expr, SortKey, SortRel, WindowRel } from '../../../analyzer/resolved.js';
import type { SqlType } from '../../../types/types.js';
import { sliceVector, type Batch, type Vector } from '../../../types/vector.js';
import { memoryBudget, type Reservation } from '../../../storage/memory-budget.js';
import { checkpoint, type ExecContext } from '../../context.js';
import { evaluate, layoutOf } from '../../expr.js';
import { peersComparator } from '../../sort-keys.js';
import { spillOptions, type SpillFile } from '../../spill.js';
import { batchBytes, concatBatches } from '../../vectors.js';
import { sortOp } from '../sort.js';
import type { SortedRun } from './suffix.js';

type WindowOver = (rel: WindowRel, input: Batch, ctx: ExecContext, held: Reservation) => AsyncGenerator<Batch>;

/** Whether a spill file of `bytes` is windowed partition by partition rather than whole. */
export function tooLargeForWindow(bytes: number): boolean {
  return memoryBudget.limit > 0 && bytes > spillOptions.share * memoryBudget.limit;
}

/** The window over `file`'s rows (whole partitions of `partitionBy`), a partition or a group of them at a time; `alone`, when given, runs the calls over one partition's rows as a stream. */
export async function* partitionedWindow(
  rel: WindowRel,
  file: SpillFile,
  partitionBy: readonly Expr[],
  windowOver: WindowOver,
  alone: SortedRun | null,
  ctx: ExecContext,
  held: Reservation,
): AsyncGenerator<Batch> {
  const types = rel.input.columns.map((c) => c.type);
  const keys: SortKey[] = partitionBy.map((expr) => ({ expr, descending: false, nullsFirst: true }));
  const sortRel: SortRel = { kind: 'sort', input: rel.input, keys, columns: rel.input.columns };
  const rows = async function* (): AsyncGenerator<Batch> {
    yield* file.read();
  };
  // A partition past this streams (when it can); groups of smaller ones are windowed together up to it.
  const limit = (spillOptions.share * memoryBudget.limit) / 2;
  const pieces = new Pieces(sortOp(sortRel, ctx, rows())[Symbol.asyncIterator](), partitionBy, layoutOf(rel.input.columns), types, ctx);
  let group: Batch[] = [];
  let groupBytes = 0;
  /** Where the current (open) partition starts in `group`, and its bytes. */
  let cur = 0;
  let curBytes = 0;
  const over = async function* (upto: number): AsyncGenerator<Batch> {
    const input = concatBatches(types, group.slice(0, upto));
    group = group.slice(upto);
    held.set(batchBytes(input) + group.reduce((s, b) => s + batchBytes(b), 0));
    yield* windowOver(rel, input, ctx, held);
  };
  for (let p = await pieces.next(); p !== null; p = await pieces.next()) {
    if (p.fresh) {
      // The partitions so far are complete: window them once they make a group.
      if (groupBytes > limit) {
        yield* over(group.length);
        groupBytes = 0;
      }
      cur = group.length;
      curBytes = 0;
    }
    const b = batchBytes(p.rows);
    group.push(p.rows);
    groupBytes += b;
    curBytes += b;
    held.set(groupBytes);
    if (alone !== null && curBytes > limit) {
      if (cur > 0) yield* over(cur);
      const first = group;
      group = [];
      groupBytes = 0;
      cur = 0;
      curBytes = 0;
      held.set(0); // the sort under the sorted window reserves what it holds
      yield* alone(pieces.restOfPartition(first), ctx);
    }
    await checkpoint(ctx);
  }
  if (group.length > 0) yield* over(group.length);
}

/** Rows sorted by partition keys, a piece at a time: each piece within one partition, `fresh` when it starts one. */
class Pieces {
  private batch: Batch | null = null;
  /** Piece bounds within `batch`: [cuts[i], cuts[i + 1]); piece 0 starts a partition when `firstFresh`. */
  private cuts: number[] = [];
  private at = 0;
  private firstFresh = true;
  /** The last row read so far (one-row batch), to compare the next batch's first row with. */
  private prevLast: Batch | null = null;
  private pushedBack: { rows: Batch; fresh: boolean } | null = null;

  constructor(
    private readonly it: AsyncIterator<Batch>,
    private readonly partitionBy: readonly Expr[],
    private readonly layout: ReadonlyMap<number, number>,
    private readonly types: readonly SqlType[],
    private readonly ctx: ExecContext,
  ) {}

  async next(): Promise<{ rows: Batch; fresh: boolean } | null> {
    if (this.pushedBack !== null) {
      const p = this.pushedBack;
      this.pushedBack = null;
      return p;
    }
    while (this.batch === null) {
      const r = await this.it.next();
      if (r.done) return null;
      if (r.value.length > 0) await this.load(r.value);
    }
    const b = this.batch;
    const s = this.cuts[this.at]!;
    const e = this.cuts[this.at + 1]!;
    const fresh = this.at > 0 || this.firstFresh;
    this.at++;
    if (this.at === this.cuts.length - 1) {
      this.prevLast = slice(b, b.length - 1, b.length);
      this.batch = null;
    }
    return { rows: slice(b, s, e), fresh };
  }

  /** `first` (the current partition's pieces so far, let go of as they are passed on), then the rest of that partition. */
  async *restOfPartition(first: Batch[]): AsyncGenerator<Batch> {
    while (first.length > 0) yield first.shift()!;
    for (let p = await this.next(); p !== null; p = await this.next()) {
      if (p.fresh) {
        this.pushedBack = p;
        return;
      }
      yield p.rows;
    }
  }

  private async keysOf(b: Batch): Promise<Vector[]> {
    const kv: Vector[] = [];
    for (const e of this.partitionBy) kv.push(await evaluate(e, b, this.layout, this.ctx));
    return kv;
  }

  private async load(b: Batch): Promise<void> {
    const specs = this.partitionBy.map(() => ({ descending: false, nullsFirst: true }));
    const same = peersComparator(await this.keysOf(b), specs);
    const cuts = [0];
    for (let i = 1; i < b.length; i++) if (same(i - 1, i) !== 0) cuts.push(i);
    cuts.push(b.length);
    let firstFresh = true;
    if (this.prevLast !== null) {
      const two = concatBatches(this.types, [this.prevLast, slice(b, 0, 1)]);
      firstFresh = peersComparator(await this.keysOf(two), specs)(0, 1) !== 0;
    }
    this.batch = b;
    this.cuts = cuts;
    this.at = 0;
    this.firstFresh = firstFresh;
  }
}

function slice(b: Batch, s: number, e: number): Batch {
  return s === 0 && e === b.length ? b : { length: e - s, columns: b.columns.map((v) => sliceVector(v, s, e)) };
}
