// Join output: pairs of (left row, right row) gathered per left batch, the
// residual condition applied to them, and the match flags that drive
// LEFT/RIGHT/FULL padding and SEMI/ANTI output. Every join form emits through it.
import type { Expr, JoinRel, ResolvedColumn } from '../../analyzer/resolved.js';
import { BATCH_SIZE, TakeBuffer, takeVector, takeVectorInto, type Batch, type Vector } from '../../types/vector.js';
import { type ExecContext } from '../context.js';
import { evaluate, layoutOf } from '../expr.js';
import { growInt32, nullVector, selectTrue, takeOrNull } from '../vectors.js';
import { PROBE_CHUNK, markRows, isIdentity } from './join-index.js';

/**
 * Collects (left row, right row) pairs for one left batch, applies the
 * residual condition and emits joined batches; tracks which rows matched.
 */
export class PairEmitter {
  readonly lSel = new Int32Array(BATCH_SIZE);
  readonly rSel = new Int32Array(BATCH_SIZE);
  count = 0;
  leftMatched: Uint8Array = new Uint8Array(0);
  private pendL: Int32Array = new Int32Array(BATCH_SIZE);
  private pendR: Int32Array = new Int32Array(BATCH_SIZE);
  private pendCount = 0;
  private emittedUpTo = 0;
  out: Batch[] = [];
  /** Left columns to emit (a pruned join); null = all. Never set with a residual condition. */
  leftKeep: readonly number[] | null = null;
  /** Output memory per emitted column (left, then right) for pairBatch's `reuse`. */
  private readonly bufs: TakeBuffer[] = [];

  constructor(
    private readonly rel: JoinRel,
    private readonly residual: Expr | undefined,
    private readonly condLayout: ReadonlyMap<number, number>,
    /** Right rows (the build side, or the lateral rows of this batch). */
    public right: Batch,
    public rightMatched: Uint8Array | null,
    private readonly ctx: ExecContext,
  ) {}

  startLeft(n: number): void {
    // Inner joins never read the flags (see flushPairs): no per-batch allocation.
    if (this.rel.joinType !== 'inner') this.leftMatched = new Uint8Array(n);
    this.count = 0;
    this.pendCount = 0;
    this.emittedUpTo = 0;
  }

  get full(): boolean {
    return this.count === BATCH_SIZE;
  }

  push(l: number, r: number): void {
    this.lSel[this.count] = l;
    this.rSel[this.count++] = r;
  }

  async flush(left: Batch): Promise<void> {
    const c = this.count;
    if (c === 0) return;
    this.count = 0;
    await this.flushPairs(left, this.lSel.subarray(0, c), this.rSel.subarray(0, c));
  }

  /** Emits (or records) the pairs l[k], r[k] that pass the residual condition. */
  /** `identity`: the caller knows lSel is 0..left.length-1 (each left row paired once, in order). */
  async flushPairs(left: Batch, lSel: Int32Array, rSel: Int32Array, identity = false): Promise<void> {
    let c = lSel.length;
    if (c === 0) return;
    if (!this.residual) return this.emitPairs(left, lSel, rSel, identity, null);
    const jt = this.rel.joinType;
    let joined = this.pairBatch(left, lSel, rSel, c);
    const { sel, count } = selectTrue(await evaluate(this.residual, joined, this.condLayout, this.ctx), c);
    if (count < c) {
      const l2 = new Int32Array(count);
      const r2 = new Int32Array(count);
      for (let j = 0; j < count; j++) {
        l2[j] = lSel[sel[j]!]!;
        r2[j] = rSel[sel[j]!]!;
      }
      if (jt !== 'semi' && jt !== 'anti') joined = { length: count, columns: joined.columns.map((v) => takeVector(v, sel, count)) };
      lSel = l2;
      rSel = r2;
      c = count;
    }
    this.emitPairs(left, lSel, rSel, identity, joined);
  }

  /**
   * The nested loop's block: left rows i0.. each paired with right rows
   * j0..j0+w, left-major, `paired` their columns (with a residual, only the
   * columns it reads need be real). Pairs passing the residual are taken
   * from the inputs, so a selective condition gathers few rows.
   */
  async flushBlock(left: Batch, paired: Batch, i0: number, j0: number, w: number): Promise<void> {
    const c = paired.length;
    if (!this.residual) {
      const lSel = new Int32Array(c);
      const rSel = new Int32Array(c);
      blockPairs(lSel, rSel, null, c, i0, j0, w);
      this.emitPairs(left, lSel, rSel, false, paired);
      return;
    }
    const { sel, count } = selectTrue(await evaluate(this.residual, paired, this.condLayout, this.ctx), c);
    if (count === 0) return;
    const lSel = new Int32Array(count);
    const rSel = new Int32Array(count);
    blockPairs(lSel, rSel, sel, count, i0, j0, w);
    this.emitPairs(left, lSel, rSel, false, null);
  }

  /**
   * flushPairs once the residual condition (if any) has been applied:
   * records matches, emits the joined rows (`joined`: already paired, or null).
   */
  emitPairs(left: Batch, lSel: Int32Array, rSel: Int32Array, identity: boolean, joined: Batch | null, reuse = false): void {
    const c = lSel.length;
    if (c === 0) return;
    const jt = this.rel.joinType;
    const emitPairs = jt !== 'semi' && jt !== 'anti';
    // Inner joins never read the match flags (finishLeft pads only LEFT/FULL, SEMI/ANTI).
    if (jt !== 'inner') markRows(this.leftMatched, lSel, c);
    if (this.rightMatched) markRows(this.rightMatched, rSel, c);
    if (!emitPairs || c === 0) return;
    if (this.padsLeft) {
      // Kept aside so finishLeft can interleave unmatched rows in left order.
      if (this.pendCount + c > this.pendL.length) {
        const cap = Math.max(this.pendL.length * 2, this.pendCount + c);
        this.pendL = growInt32(this.pendL, cap);
        this.pendR = growInt32(this.pendR, cap);
      }
      this.pendL.set(lSel.subarray(0, c), this.pendCount);
      this.pendR.set(rSel.subarray(0, c), this.pendCount);
      this.pendCount += c;
      // Bound the buffer: rows before the last pending row are complete.
      if (this.pendCount >= PROBE_CHUNK) this.drainLeft(left, this.pendL[this.pendCount - 1]!);
      return;
    }
    joined ??= this.pairBatch(left, lSel, rSel, c, identity && c === left.length, reuse);
    this.out.push(joined);
  }

  private get padsLeft(): boolean {
    return this.rel.joinType === 'left' || this.rel.joinType === 'full';
  }

  /** The left columns this join emits. */
  private outLeft(left: Batch): readonly Vector[] {
    const k = this.leftKeep;
    return k === null ? left.columns : k.map((i) => left.columns[i]!);
  }

  /**
   * The paired rows as a batch. `reuse`: its gathered columns are written
   * into this emitter's memory of the last such batch (the caller knows the
   * consumer is done with that one).
   */
  private pairBatch(left: Batch, lSel: Int32Array, rSel: Int32Array, c: number, identity = false, reuse = false): Batch {
    const lcols = this.outLeft(left);
    // Every left row paired once, in order (n-to-1 keys): the left columns as they are.
    const whole = lcols.length === 0 || identity || (c === left.length && isIdentity(lSel, c));
    const nl = lcols.length;
    const columns = new Array<Vector>(nl + this.right.columns.length);
    for (let k = 0; k < nl; k++) columns[k] = whole ? lcols[k]! : this.take(lcols[k]!, lSel, c, reuse, k);
    for (let k = 0; k < this.right.columns.length; k++) columns[nl + k] = this.take(this.right.columns[k]!, rSel, c, reuse, nl + k);
    return { length: c, columns };
  }

  private take(v: Vector, sel: Int32Array, c: number, reuse: boolean, col: number): Vector {
    if (!reuse) return takeVector(v, sel, c);
    return takeVectorInto(v, sel, c, (this.bufs[col] ??= new TakeBuffer()));
  }

  /**
   * LEFT/FULL: emits left rows [emittedUpTo, upTo) — their matched pairs
   * (ascending left row) interleaved with NULL-padded unmatched rows — and
   * drops those pairs from the pending buffer.
   */
  private drainLeft(left: Batch, upTo: number): void {
    const lm = this.leftMatched;
    const pl = this.pendL;
    const pr = this.pendR;
    const pc = this.pendCount;
    let ls = new Int32Array(BATCH_SIZE);
    let rs = new Int32Array(BATCH_SIZE);
    let c = 0;
    const emit = (): void => {
      this.out.push({
        length: c,
        columns: [...this.outLeft(left).map((v) => takeVector(v, ls, c)), ...this.right.columns.map((v) => takeOrNull(v, rs, c))],
      });
      ls = new Int32Array(BATCH_SIZE);
      rs = new Int32Array(BATCH_SIZE);
      c = 0;
    };
    let k = 0;
    for (let i = this.emittedUpTo; i < upTo; i++) {
      while (k < pc && pl[k] === i) {
        ls[c] = i;
        rs[c++] = pr[k++]!;
        if (c === BATCH_SIZE) emit();
      }
      if (lm[i] === 0) {
        ls[c] = i;
        rs[c++] = -1;
        if (c === BATCH_SIZE) emit();
      }
    }
    if (c > 0) emit();
    // Pairs of rows >= upTo stay pending.
    pl.copyWithin(0, k, pc);
    pr.copyWithin(0, k, pc);
    this.pendCount = pc - k;
    this.emittedUpTo = upTo;
  }

  /** After a left batch: LEFT/FULL padding, SEMI/ANTI output. */
  finishLeft(left: Batch): void {
    const jt = this.rel.joinType;
    const lm = this.leftMatched;
    if (jt === 'left' || jt === 'full') {
      this.drainLeft(left, left.length);
      return;
    }
    if (jt === 'semi' || jt === 'anti') {
      const want = jt === 'semi' ? 1 : 0;
      const sel = new Int32Array(left.length);
      let c = 0;
      for (let i = 0; i < left.length; i++) if (lm[i] === want) sel[c++] = i;
      if (c === 0) return;
      const lcols = this.outLeft(left).map((v) => takeVector(v, sel, c));
      if (jt === 'semi' || jt === 'anti') this.out.push({ length: c, columns: lcols });
      else this.out.push({ length: c, columns: [...lcols, ...this.right.columns.map((v) => nullVector(v.type, c))] });
    }
  }

  /** After all left batches: RIGHT/FULL padding of unmatched right rows. */
  unmatchedRight(leftTypes: readonly ResolvedColumn[]): Batch[] {
    const rm = this.rightMatched;
    if (!rm) return [];
    const out: Batch[] = [];
    const sel = new Int32Array(BATCH_SIZE);
    let c = 0;
    const emit = (): void => {
      out.push({
        length: c,
        columns: [...leftTypes.map((col) => nullVector(col.type, c)), ...this.right.columns.map((v) => takeVector(v, sel, c))],
      });
      c = 0;
    };
    for (let j = 0; j < this.right.length; j++) {
      if (rm[j] === 0) {
        sel[c++] = j;
        if (c === BATCH_SIZE) emit();
      }
    }
    if (c > 0) emit();
    return out;
  }
}

/**
 * The (left, right) rows of a block's pairs `sel` (all `count` when null):
 * pair k is left row i0 + k / w, right row j0 + k % w. A plain function:
 * loops in async generators optimize poorly.
 */
function blockPairs(lSel: Int32Array, rSel: Int32Array, sel: Int32Array | null, count: number, i0: number, j0: number, w: number): void {
  for (let k = 0; k < count; k++) {
    const s = sel === null ? k : sel[k]!;
    const q = (s / w) | 0;
    lSel[k] = i0 + q;
    rSel[k] = j0 + s - q * w;
  }
}

/** Where each input column sits in a joined batch (left then right): the residual condition's layout. */
export function condLayoutOf(rel: JoinRel): Map<number, number> {
  return layoutOf([...rel.left.columns, ...rel.right.columns]);
}
