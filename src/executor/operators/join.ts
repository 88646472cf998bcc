// Joins. Equi-joins are hash joins: the build side is materialized as column
// vectors, its key rows chained by hash in two Int32Arrays (head per bucket,
// next per row), and the probe side streams batch by batch. Candidate pairs
// are collected as (probe row, build row) selections, the residual condition
// is evaluated on the paired batch, and match flags drive LEFT/RIGHT/FULL
// padding and SEMI/ANTI output. Non-equi conditions and CROSS JOIN use a
// nested loop over the materialized right side. Lateral joins run the right
// side per left row (correlated), with a whole-batch fast path for UNNEST.
import { QueryError } from '../../planner/api.js';
import type { Expr, JoinRel, Rel, ResolvedColumn, UnnestRel, LogicalExpr } from '../../analyzer/resolved.js';
import { T, type SqlType } from '../../types/types.js';
import type { Value } from '../../types/values.js';
import { BATCH_SIZE, getValue, packedList, sliceVector, TakeBuffer, takeVector, takeVectorInto, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { columnRefsOf, evaluate, evaluateSync, hasSubquery, layoutOf } from '../expr.js';
import { executeRel, materialize } from '../execute.js';
import { hashRows } from '../hash.js';
import { withRuntimeFilter } from './join-filter.js';
import { buildFile, partitionProbeSide, readBuildSide, type BuildSide } from './join-spill.js';
import { Reservation } from '../../storage/memory-budget.js';
import type { SpillPartitions } from '../spill.js';
import { mix32, valuesEqual } from '../values-compare.js';
import { BatchCoalescer, ColumnBuffer, Phys, concatBatches, growInt32, keyWords, nullVector, physOf, selectTrue, takeOrNull } from '../vectors.js';
import { wordsEqual } from '../../types/decimal-words.js';

interface EquiKey {
  readonly left: Expr;
  readonly right: Expr;
  readonly nullSafe: boolean;
}

const AND_TYPE = T.BOOL;

function conjuncts(e: Expr | undefined): Expr[] {
  if (!e) return [];
  if (e.kind === 'logical' && e.op === 'and') return e.args.flatMap((a) => conjuncts(a));
  return [e];
}

function andOf(parts: Expr[]): Expr | undefined {
  if (parts.length === 0) return undefined;
  if (parts.length === 1) return parts[0];
  const l: LogicalExpr = { kind: 'logical', type: AND_TYPE, op: 'and', args: parts };
  return l;
}

/** Splits `a = b` conjuncts (one side per input) out of a join condition. */
export function extractEquiKeys(cond: Expr | undefined, left: Rel, right: Rel): { keys: EquiKey[]; residual: Expr | undefined } {
  const lids = new Set(left.columns.map((c) => c.id));
  const rids = new Set(right.columns.map((c) => c.id));
  const keys: EquiKey[] = [];
  const rest: Expr[] = [];
  const within = (e: Expr, ids: Set<number>): boolean => {
    const refs = columnRefsOf(e);
    return refs.length > 0 && refs.every((r) => ids.has(r)) && !hasSubquery(e);
  };
  for (const c of conjuncts(cond)) {
    if (c.kind === 'call' && c.args.length === 2 && /^(\$equal|=)$/i.test(c.name)) {
      const [a, b] = c.args as [Expr, Expr];
      if (within(a, lids) && within(b, rids)) {
        keys.push({ left: a, right: b, nullSafe: false });
        continue;
      }
      if (within(b, lids) && within(a, rids)) {
        keys.push({ left: b, right: a, nullSafe: false });
        continue;
      }
    }
    rest.push(c);
  }
  return { keys, residual: andOf(rest) };
}

/** Row-count estimate used to pick the build side (Infinity = unknown). */
function estimateRows(rel: Rel, ctx: ExecContext): number {
  switch (rel.kind) {
    case 'scan':
      return ctx.query.catalog.getTable(rel.table)?.rowCount ?? Infinity;
    case 'values':
      return rel.rows.length;
    case 'filter':
    case 'project':
    case 'sort':
    case 'window':
    case 'sample':
    case 'aggregate':
      return estimateRows(rel.input, ctx);
    case 'limit':
      return Math.min(rel.limit ?? Infinity, estimateRows(rel.input, ctx));
    case 'join':
      return Math.max(estimateRows(rel.left, ctx), estimateRows(rel.right, ctx));
    default:
      return Infinity;
  }
}

/**
 * Collects (left row, right row) pairs for one left batch, applies the
 * residual condition and emits joined batches; tracks which rows matched.
 */
class PairEmitter {
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

/** A pruned join: the columns it emits, its real node, and whether its consumer takes batches as transient (executeRel). */
interface Narrow {
  readonly keep: OutputKeep;
  readonly rel: JoinRel;
  readonly transient: boolean;
}

/** Which input columns a join emits when pruning dropped some (indexes into left / right columns). */
interface OutputKeep {
  readonly left: readonly number[];
  readonly right: readonly number[];
}

/** The columns a join produces before pruning: left then right (left only for SEMI/ANTI). */
function allJoinColumns(rel: JoinRel): readonly ResolvedColumn[] {
  return rel.joinType === 'semi' || rel.joinType === 'anti' ? rel.left.columns : [...rel.left.columns, ...rel.right.columns];
}

/**
 * Null when `rel.columns` is every input column; else the kept ones. Pruning
 * (planner rules/prune.ts) drops columns only the join's own condition reads;
 * the kept ones stay in left-then-right order.
 */
function outputKeep(rel: JoinRel): OutputKeep | null {
  const all = allJoinColumns(rel);
  if (rel.columns.length === all.length && rel.columns.every((c, i) => c.id === all[i]!.id)) return null;
  const want = new Set(rel.columns.map((c) => c.id));
  const pick = (cols: readonly ResolvedColumn[]): number[] => cols.flatMap((c, i) => (want.has(c.id) ? [i] : []));
  return { left: pick(rel.left.columns), right: rel.joinType === 'semi' || rel.joinType === 'anti' ? [] : pick(rel.right.columns) };
}

/**
 * The join's batches. A plain function returning the chosen path's generator
 * (no generator layer of its own: every layer costs a promise round per batch).
 */
export function joinOp(rel: JoinRel, ctx: ExecContext, transient = false): AsyncGenerator<Batch> {
  const keep = outputKeep(rel);
  if (keep === null) return joinAll(rel, ctx, null).batches;
  const full: JoinRel = { ...rel, columns: allJoinColumns(rel) };
  const path = joinAll(full, ctx, { keep, rel, transient });
  if (path.narrow) return path.batches;
  // The other paths emit every column; drop the unread ones per batch.
  const nl = rel.left.columns.length;
  return projectColumns(path.batches, [...keep.left, ...keep.right.map((i) => nl + i)]);
}

async function* projectColumns(input: AsyncGenerator<Batch>, pos: readonly number[]): AsyncGenerator<Batch> {
  for await (const b of input) yield { length: b.length, columns: pos.map((i) => b.columns[i]!) };
}

/**
 * Picks the join's path over `rel` (all columns). `narrow`: the pruned join;
 * a hash join without residual that is not swapped gathers only its columns
 * (`narrow: true` in the answer), the other paths emit all columns.
 */
function joinAll(rel: JoinRel, ctx: ExecContext, narrow: Narrow | null): { batches: AsyncGenerator<Batch>; narrow: boolean } {
  if (rel.lateral) return { batches: lateralJoin(rel, ctx), narrow: false };
  let keys: readonly EquiKey[] | undefined = rel.equiKeys;
  let residual = rel.condition;
  if ((!keys || keys.length === 0) && residual && rel.joinType !== 'cross') {
    const x = extractEquiKeys(residual, rel.left, rel.right);
    if (x.keys.length > 0) {
      keys = x.keys;
      residual = x.residual;
    }
  }
  if (!keys || keys.length === 0) return { batches: nestedLoopJoin(rel, residual, ctx), narrow: false };
  if (buildsLeft(rel, ctx)) return { batches: hashJoinBuildLeft(rel, keys, residual, ctx), narrow: false };
  const n = residual ? null : narrow;
  return { batches: hashJoin(rel, keys, residual, ctx, n), narrow: n !== null };
}

function condLayoutOf(rel: JoinRel): Map<number, number> {
  return layoutOf([...rel.left.columns, ...rel.right.columns]);
}

/** Key equality of probe row i and build row j (NULLs equal here: only null-safe keys reach it with NULLs). */
function keysEqual(pk: readonly Vector[], i: number, bk: readonly Vector[], j: number): boolean {
  for (let k = 0; k < pk.length; k++) {
    const a = pk[k]!;
    const b = bk[k]!;
    const an = a.nulls !== null && a.nulls[i] === 1;
    const bn = b.nulls !== null && b.nulls[j] === 1;
    if (an || bn) {
      if (an !== bn) return false;
      continue;
    }
    const aw = keyWords(a);
    if (aw !== null) {
      // NUMERIC / BIGNUMERIC words: equal values have equal words (a boxed side is compared by its value's words).
      const bw = keyWords(b);
      if (bw !== null && bw.width === aw.width) {
        if (!wordsEqual(aw.words, i, bw.words, j, aw.width)) return false;
      } else if (!valuesEqual(getValue(a, i), getValue(b, j), a.type)) return false;
      continue;
    }
    const ad = a.data;
    const bd = b.data;
    if (ad instanceof Float64Array && bd instanceof Float64Array) {
      const x = ad[i]!;
      const y = bd[j]!;
      if (x !== y && !(x !== x && y !== y)) return false;
    } else if (ad instanceof Int32Array || ad instanceof Uint8Array) {
      if (ad[i] !== (bd as Int32Array)[j]) return false;
    } else if (Array.isArray(ad)) {
      if (!valuesEqual(ad[i]!, (bd as Value[])[j]!, a.type)) return false;
    } else if (!valuesEqual(getValue(a, i), getValue(b, j), a.type)) return false;
  }
  return true;
}

/** True when row i can't match under `=` (NULL or NaN in a non-null-safe key). */
function unmatchable(keys: readonly Vector[], nullSafe: readonly boolean[], i: number): boolean {
  for (let k = 0; k < keys.length; k++) {
    if (nullSafe[k]) continue;
    const v = keys[k]!;
    if (v.nulls !== null && v.nulls[i] === 1) return true;
    if (v.type.kind !== 'FLOAT64') continue; // (reading `data` of decimal words would box them)
    const d = v.data;
    if (d instanceof Float64Array && d[i] !== d[i]) return true;
  }
  return false;
}

interface Pairs {
  l: Int32Array;
  r: Int32Array;
  count: number;
  /** Resume point: probe row, and build row to continue its chain from (-1 = chain start). */
  nextRow: number;
  nextBuild: number;
}

/** Pairs gathered per probe call; a many-to-many key stops and resumes here, bounding memory. */
const PROBE_CHUNK = 16 * BATCH_SIZE;

/**
 * Probes rows [from, n) of one batch against the build side's hash chains and
 * returns (probe row, build row) key matches in probe order, stopping once
 * PROBE_CHUNK pairs are gathered (`nextRow < n` then). A plain function, not
 * part of the async generator, so V8 optimizes the hot loop.
 */
function probe(
  pk: readonly Vector[],
  ph: Int32Array,
  n: number,
  bk: readonly Vector[],
  bh: Int32Array,
  head: Int32Array,
  next: Int32Array,
  mask: number,
  nullSafe: readonly boolean[],
  firstOnly: boolean,
  leftMatched: Uint8Array,
  buf: Pairs,
  from: number,
  fromBuild: number,
): Pairs {
  let l = buf.l;
  let r = buf.r;
  let c = 0;
  // Single FLOAT64-layout key without NULLs on the probe side: compare inline.
  // (Decimal words are not read through `data`, which would box them.)
  const p0 = pk.length === 1 && !pk[0]!.decimal && pk[0]!.data instanceof Float64Array && pk[0]!.nulls === null && !nullSafe[0] ? (pk[0]!.data as Float64Array) : null;
  const b0 = p0 !== null && !bk[0]!.decimal && bk[0]!.data instanceof Float64Array ? (bk[0]!.data as Float64Array) : null;
  const checkNulls = p0 === null || b0 === null;
  for (let i = from; i < n; i++) {
    if (checkNulls && unmatchable(pk, nullSafe, i)) continue;
    const h = ph[i]!;
    let j = i === from && fromBuild >= 0 ? fromBuild : head[mix32(h) & mask]!;
    for (; j >= 0; j = next[j]!) {
      if (bh[j] !== h) continue;
      if (b0 !== null) {
        if (p0![i] !== b0[j]) continue;
      } else if (!keysEqual(pk, i, bk, j)) continue;
      if (firstOnly) {
        leftMatched[i] = 1;
        break;
      }
      if (c === PROBE_CHUNK) return { l, r, count: c, nextRow: i, nextBuild: j };
      if (c === l.length) {
        l = growInt32(l, c * 2);
        r = growInt32(r, c * 2);
      }
      l[c] = i;
      r[c++] = j;
    }
  }
  return { l, r, count: c, nextRow: n, nextBuild: -1 };
}

/** Build rows chained by key value: head[key - min] -> first row, next[row] -> following row. */
interface DenseIndex {
  readonly min: number;
  readonly max: number;
  readonly head: Int32Array;
  readonly next: Int32Array;
  readonly mask: number;
  /** No key repeats among build rows: a probe row matches at most head[key - min]. */
  readonly unique?: boolean;
}

function denseIndex(bk: readonly Vector[], m: number, nullSafe: readonly boolean[]): DenseIndex | null {
  if (bk.length !== 1 || nullSafe[0] || m === 0) return null;
  const v = bk[0]!;
  const k = v.type.kind;
  if (k !== 'INT64' && k !== 'DATE') return null;
  const d = v.data;
  if (!(d instanceof Float64Array || d instanceof Int32Array)) return null;
  const nulls = v.nulls;
  // Two standalone loops rather than one function: V8 OSRs the first loop of
  // a once-per-query function with no feedback for the second yet, which then
  // deoptimized there ("insufficient type feedback") on early builds.
  keyRange(d, nulls, m);
  const min = KEY_RANGE[0]!;
  const max = KEY_RANGE[1]!;
  if (min === Infinity || max - min + 1 > 2 * m + 1024) return null;
  const head = new Int32Array(max - min + 1).fill(-1);
  const next = new Int32Array(m);
  const unique = chainByValue(d, nulls, m, min, head, next);
  return { min, max, head, next, mask: 0, unique };
}

/** keyRange's answer: [min, max]. */
const KEY_RANGE = new Float64Array(2);

/**
 * [min, max] of the non-NULL keys into KEY_RANGE ([Infinity, -Infinity] when
 * none). Written inside the loop, on each new extreme (the first row always
 * writes, while still interpreted): code after an OSR-compiled loop must need
 * no type feedback, and returning a fresh [min, max] deoptimized this
 * function at its exit on every call.
 */
function keyRange(d: Float64Array | Int32Array, nulls: Uint8Array | null, m: number): void {
  const out = KEY_RANGE;
  let min = Infinity;
  let max = -Infinity;
  out[0] = min;
  out[1] = max;
  for (let j = 0; j < m; j++) {
    if (nulls !== null && nulls[j] === 1) continue;
    const x = d[j]!;
    if (x < min) {
      min = x;
      out[0] = x;
    }
    if (x > max) {
      max = x;
      out[1] = x;
    }
  }
}

/** Chains build rows by `key - min` (from the end, so chains keep input order); true when no key repeats. */
function chainByValue(d: Float64Array | Int32Array, nulls: Uint8Array | null, m: number, min: number, head: Int32Array, next: Int32Array): boolean {
  let unique = true;
  for (let j = m - 1; j >= 0; j--) {
    if (nulls !== null && nulls[j] === 1) {
      next[j] = -1;
      continue;
    }
    const s = d[j]! - min;
    const h = head[s]!;
    if (h >= 0) unique = false;
    next[j] = h;
    head[s] = j;
  }
  return unique;
}

/** Probe keys as numbers; INT64 values beyond ±2^53 become NaN (they can't be in a dense range). */
function denseProbeKeys(v: Vector): Float64Array | Int32Array {
  const d = v.data;
  if (d instanceof Float64Array || d instanceof Int32Array) return d;
  const out = new Float64Array(v.length);
  if (d instanceof BigInt64Array) for (let i = 0; i < v.length; i++) {
    const x = d[i]!;
    out[i] = x > 9007199254740992n || x < -9007199254740992n ? NaN : Number(x);
  }
  else out.fill(NaN);
  return out;
}

function markRows(flags: Uint8Array, sel: Int32Array, c: number): void {
  for (let j = 0; j < c; j++) flags[sel[j]!] = 1;
}

function isIdentity(sel: Int32Array, c: number): boolean {
  for (let j = 0; j < c; j++) if (sel[j] !== j) return false;
  return true;
}

/** probeDense() for a unique build key: each probe row pairs with at most one build row. */
function probeUnique(pd: Float64Array | Int32Array, pNulls: Uint8Array | null, n: number, idx: DenseIndex, buf: Pairs, from: number): Pairs {
  let l = buf.l;
  let r = buf.r;
  if (l.length < n - from) {
    l = new Int32Array(n - from);
    r = new Int32Array(n - from);
  }
  const c =
    pd instanceof Float64Array
      ? uniqueMatchesF64(pd, pNulls, from, n, idx.min, idx.max, idx.head, l, r)
      : uniqueMatchesI32(pd, pNulls, from, n, idx.min, idx.max, idx.head, l, r);
  return { l, r, count: c, nextRow: n, nextBuild: -1 };
}

// One loop per key layout so each stays monomorphic. Keys in [min, max] are
// integers (INT64/DATE), so `(x - min) | 0` is exact and indexes as an int32.
function uniqueMatchesF64(pd: Float64Array, pNulls: Uint8Array | null, from: number, n: number, min: number, max: number, head: Int32Array, l: Int32Array, r: Int32Array): number {
  let c = 0;
  for (let i = from; i < n; i++) {
    const x = pd[i]!;
    if (!(x >= min && x <= max)) continue; // also drops NaN
    if (pNulls !== null && pNulls[i] === 1) continue;
    const j = head[(x - min) | 0]!;
    if (j < 0) continue;
    l[c] = i;
    r[c++] = j;
  }
  return c;
}

function uniqueMatchesI32(pd: Int32Array, pNulls: Uint8Array | null, from: number, n: number, min: number, max: number, head: Int32Array, l: Int32Array, r: Int32Array): number {
  let c = 0;
  for (let i = from; i < n; i++) {
    const x = pd[i]!;
    if (!(x >= min && x <= max)) continue;
    if (pNulls !== null && pNulls[i] === 1) continue;
    const j = head[(x - min) | 0]!;
    if (j < 0) continue;
    l[c] = i;
    r[c++] = j;
  }
  return c;
}

/** uniqueMatchesF64, writing the matched build rows' values of `src` instead of the row pairs. */
function uniqueGatherF64(pd: Float64Array, pNulls: Uint8Array | null, n: number, min: number, max: number, head: Int32Array, src: Float64Array, out: Float64Array): number {
  let c = 0;
  for (let i = 0; i < n; i++) {
    const x = pd[i]!;
    if (!(x >= min && x <= max)) continue; // also drops NaN
    if (pNulls !== null && pNulls[i] === 1) continue;
    const j = head[(x - min) | 0]!;
    if (j < 0) continue;
    out[c++] = src[j]!;
  }
  return c;
}

function uniqueGatherI32(pd: Int32Array, pNulls: Uint8Array | null, n: number, min: number, max: number, head: Int32Array, src: Float64Array, out: Float64Array): number {
  let c = 0;
  for (let i = 0; i < n; i++) {
    const x = pd[i]!;
    if (!(x >= min && x <= max)) continue;
    if (pNulls !== null && pNulls[i] === 1) continue;
    const j = head[(x - min) | 0]!;
    if (j < 0) continue;
    out[c++] = src[j]!;
  }
  return c;
}

/** probe() for a DenseIndex: one array lookup per probe row, no key comparison needed. */
function probeDense(
  pd: Float64Array | Int32Array,
  pNulls: Uint8Array | null,
  n: number,
  idx: DenseIndex,
  firstOnly: boolean,
  leftMatched: Uint8Array,
  buf: Pairs,
  from: number,
  fromBuild: number,
): Pairs {
  let l = buf.l;
  let r = buf.r;
  let c = 0;
  const { min, max, head, next } = idx;
  for (let i = from; i < n; i++) {
    if (pNulls !== null && pNulls[i] === 1) continue;
    const x = pd[i]!;
    if (!(x >= min && x <= max)) continue; // also drops NaN
    let j = i === from && fromBuild >= 0 ? fromBuild : head[x - min]!;
    for (; j >= 0; j = next[j]!) {
      if (firstOnly) {
        leftMatched[i] = 1;
        break;
      }
      if (c === PROBE_CHUNK) return { l, r, count: c, nextRow: i, nextBuild: j };
      if (c === l.length) {
        l = growInt32(l, c * 2);
        r = growInt32(r, c * 2);
      }
      l[c] = i;
      r[c++] = j;
    }
  }
  return { l, r, count: c, nextRow: n, nextBuild: -1 };
}

/** Hash chains over the build rows: head per bucket, next per row (-1 ends a chain). */
function buildChains(bk: readonly Vector[], bh: Int32Array, m: number, nullSafe: readonly boolean[]): { head: Int32Array; next: Int32Array; mask: number } {
  let cap = 16;
  while (cap < m * 2) cap *= 2;
  const mask = cap - 1;
  const head = new Int32Array(cap).fill(-1);
  const next = new Int32Array(m);
  // Inserted from the end so every chain lists build rows in input order.
  for (let j = m - 1; j >= 0; j--) {
    if (unmatchable(bk, nullSafe, j)) continue;
    const s = mix32(bh[j]!) & mask;
    next[j] = head[s]!;
    head[s] = j;
  }
  return { head, next, mask };
}

/** A build side's key index: dense by value, or hash chains (bh = each build row's hash). */
interface JoinIndex {
  readonly dense: DenseIndex | null;
  readonly bh: Int32Array;
  readonly head: Int32Array;
  readonly next: Int32Array;
  readonly mask: number;
}

function buildJoinIndex(bk: readonly Vector[], m: number, nullSafe: readonly boolean[]): JoinIndex {
  // Dense integer keys (ids, dates) index build rows directly by value: no hashing at all.
  const dense = denseIndex(bk, m, nullSafe);
  if (dense) return { dense, bh: new Int32Array(0), head: dense.head, next: dense.next, mask: 0 };
  const bh = new Int32Array(m);
  hashRows(bk, m, bh);
  const { head, next, mask } = buildChains(bk, bh, m, nullSafe);
  return { dense: null, bh, head, next, mask };
}

/** A cached index and what it was built from (the key column as a view: offset, rows, NULL flags). */
interface CachedIndex {
  /** The key column's array type (views of one buffer could differ in it). */
  readonly kind: unknown;
  readonly offset: number;
  readonly rows: number;
  readonly nulls: Uint8Array | null;
  readonly nullSafe: boolean;
  readonly index: JoinIndex;
}

/**
 * Build-side indexes of stored key columns, by the column's backing store.
 * Stored columns are never written after they are created (appends and DML
 * make new chunks, snapshots share them with running queries), so an index
 * stays valid for as long as its key column's memory lives, and goes with it.
 * Rebuilding it was ~2 ms per query for a 200k-row dimension table.
 */
const INDEX_CACHE = new WeakMap<object, CachedIndex[]>();
/** Larger build sides are indexed per query: the index costs 8-12 bytes per row, kept while the table lives (at most ~12 MB per key column). */
const MAX_CACHED_BUILD_ROWS = 1_000_000;

/**
 * The index for a build side; reused across queries when `stored` (the key
 * column comes straight from a table scan: a view of stored memory).
 */
function joinIndexFor(bk: readonly Vector[], m: number, nullSafe: readonly boolean[], stored: boolean): JoinIndex {
  if (!stored || bk.length !== 1 || m > MAX_CACHED_BUILD_ROWS) return buildJoinIndex(bk, m, nullSafe);
  const v = bk[0]!;
  // Decimal words are a typed column too (reading `data` would box them).
  const d = v.decimal ? v.decimal.words : v.data;
  // Typed columns are keyed by their buffer (a scan hands out views), others by the array itself.
  const owner: object = ArrayBuffer.isView(d) ? d.buffer : d;
  const offset = ArrayBuffer.isView(d) ? d.byteOffset : 0;
  const ns = nullSafe[0]!;
  const list = INDEX_CACHE.get(owner);
  const kind: unknown = d.constructor;
  if (list) for (const e of list) if (e.kind === kind && e.offset === offset && e.rows === m && e.nulls === v.nulls && e.nullSafe === ns) return e.index;
  const index = buildJoinIndex(bk, m, nullSafe);
  const entry: CachedIndex = { kind, offset, rows: m, nulls: v.nulls, nullSafe: ns, index };
  if (list) list.push(entry);
  else INDEX_CACHE.set(owner, [entry]);
  return index;
}

/** Whether a build side's columns are views of stored table memory (a scan, no filters, maybe renamed). */
function isStoredScan(rel: Rel): boolean {
  if (rel.kind === 'scan') return !rel.pushedFilters?.length && rel.asOfMs === undefined;
  if (rel.kind === 'project') return rel.exprs.every((e) => e.kind === 'column' && !e.correlated) && isStoredScan(rel.input);
  return false;
}

/**
 * A hash join's build side and the probing of left batches against it. The
 * per-batch work lives in these methods and the hashJoin generator only
 * loops and yields: a large async generator took V8 hundreds of ms to
 * optimize (and fell back to unoptimized code when a plan object's shape
 * changed), which the first runs of a heavy query paid on every batch.
 */
class HashJoinState {
  readonly nullSafe: boolean[];
  readonly dense: DenseIndex | null;
  readonly bh: Int32Array;
  readonly head: Int32Array;
  readonly next: Int32Array;
  readonly mask: number;
  readonly firstOnly: boolean;
  readonly uniqueProbe: boolean;
  /**
   * An inner join on a unique dense key that emits one NULL-free FLOAT64-layout
   * build column and nothing of the left side (`SUM(dim.v)` over fact JOIN dim):
   * that column, gathered straight from the probe keys (no row pairs).
   */
  readonly gatherOnly: Vector | null = null;
  readonly em: PairEmitter;
  readonly co: BatchCoalescer;
  readonly lLayout: Map<number, number>;
  /** The left key expressions hold no subquery. */
  readonly syncKeys: boolean;
  private ph = new Int32Array(BATCH_SIZE);
  private pairBuf: Pairs = { l: new Int32Array(BATCH_SIZE), r: new Int32Array(BATCH_SIZE), count: 0, nextRow: 0, nextBuild: -1 };
  // The left batch being probed, its keys and the resume point (from = left.length: done).
  private left: Batch = { length: 0, columns: [] };
  private pk: Vector[] = [];
  private denseKeys: Float64Array | Int32Array | null = null;
  private from = 0;
  private fromBuild = -1;

  constructor(
    readonly rel: JoinRel,
    readonly keys: readonly EquiKey[],
    readonly residual: Expr | undefined,
    readonly ctx: ExecContext,
    readonly bk: readonly Vector[],
    build: Batch,
    /** Emit only these columns (a pruned join without residual); `rel` still lists all of them. */
    readonly narrow: Narrow | null,
    /** `build` is rel.right's stored table as it is (not one spill file's rows): its index may be cached. */
    wholeBuild = true,
  ) {
    const m = build.length;
    const jt = rel.joinType;
    const keep = narrow?.keep ?? null;
    // Pruned output: pairs gather only the kept build columns (and left columns).
    const outRight: Batch = keep ? { length: m, columns: keep.right.map((i) => build.columns[i]!) } : build;
    this.em = new PairEmitter(rel, residual, condLayoutOf(rel), outRight, jt === 'right' || jt === 'full' ? new Uint8Array(m) : null, ctx);
    this.em.leftKeep = keep ? keep.left : null;
    this.co = new BatchCoalescer((narrow ? narrow.rel : rel).columns.map((c) => c.type));
    this.firstOnly = (jt === 'semi' || jt === 'anti') && !residual;
    this.nullSafe = keys.map((k) => k.nullSafe);
    const stored = wholeBuild && isStoredScan(rel.right) && keys.every((k) => k.right.kind === 'column');
    const index = joinIndexFor(bk, m, this.nullSafe, stored);
    this.dense = index.dense;
    this.bh = index.bh;
    this.head = index.head;
    this.next = index.next;
    this.mask = index.mask;
    this.uniqueProbe = this.dense !== null && this.dense.unique === true && !this.firstOnly;
    const only = outRight.columns.length === 1 ? outRight.columns[0]! : null;
    if (this.uniqueProbe && jt === 'inner' && !residual && keep !== null && keep.left.length === 0 && only !== null && only.nulls === null && only.data instanceof Float64Array) {
      this.gatherOnly = only;
    }
    this.lLayout = layoutOf(rel.left.columns);
    this.syncKeys = !keys.some((k) => hasSubquery(k.left));
  }

  get done(): boolean {
    return this.from >= this.left.length;
  }

  /** Starts a left batch (its keys evaluated synchronously when syncKeys). */
  start(left: Batch, pk: Vector[] | null): void {
    const n = left.length;
    this.left = left;
    this.pk = pk ?? this.keys.map((k) => evaluateSync(k.left, left, this.lLayout, this.ctx));
    if (!this.dense) {
      if (this.ph.length < n) this.ph = new Int32Array(n);
      hashRows(this.pk, n, this.ph);
    }
    this.denseKeys = this.dense ? denseProbeKeys(this.pk[0]!) : null;
    this.em.startLeft(n);
    this.from = 0;
    this.fromBuild = -1;
  }

  /** The left keys of a batch whose key expressions hold subqueries. */
  async keysAsync(left: Batch): Promise<Vector[]> {
    const pk: Vector[] = [];
    for (const k of this.keys) pk.push(await evaluate(k.left, left, this.lLayout, this.ctx));
    return pk;
  }

  /** Key matches of the current batch from the resume point, at most PROBE_CHUNK pairs (see probe()). */
  private probeChunk(): Pairs {
    const { dense, pk, em, from } = this;
    const n = this.left.length;
    const pairs = dense
      ? this.uniqueProbe
        ? probeUnique(this.denseKeys!, pk[0]!.nulls, n, dense, this.pairBuf, from)
        : probeDense(this.denseKeys!, pk[0]!.nulls, n, dense, this.firstOnly, em.leftMatched, this.pairBuf, from, this.fromBuild)
      : probe(pk, this.ph, n, this.bk, this.bh, this.head, this.next, this.mask, this.nullSafe, this.firstOnly, em.leftMatched, this.pairBuf, from, this.fromBuild);
    this.pairBuf = pairs;
    return pairs;
  }

  /**
   * Without a residual condition: probes one chunk and emits its pairs; returns
   * the output batches ready so far (all of them once the batch is done).
   */
  step(): Batch[] {
    if (this.gatherOnly !== null) return this.gatherStep(this.gatherOnly);
    const pairs = this.probeChunk();
    const left = this.left;
    // A unique-key probe that matched every row from row 0 paired them in order.
    const identity = this.uniqueProbe && this.from === 0 && pairs.count === left.length;
    // A transient consumer is done with the last batch: one output batch that the coalescer
    // hands on as it is (keeping no reference) is gathered into the memory of the last.
    const reuse = this.narrow !== null && this.narrow.transient && pairs.count <= BATCH_SIZE && this.co.passesThrough(pairs.count);
    for (let s = 0; s < pairs.count; s += BATCH_SIZE) {
      const e = Math.min(pairs.count, s + BATCH_SIZE);
      this.em.emitPairs(left, pairs.l.subarray(s, e), pairs.r.subarray(s, e), identity && s === 0 && e === left.length, null, reuse);
    }
    return this.advance(pairs);
  }

  /** step() for `gatherOnly`: the whole batch in one loop (a unique key pairs each probe row at most once). */
  /** gatherStep's output memory when the consumer takes batches as transient. */
  private gatherBuf = new Float64Array(0);

  private gatherStep(col: Vector): Batch[] {
    const left = this.left;
    const n = left.length;
    const idx = this.dense!;
    const pd = this.denseKeys!;
    // A transient consumer is done with the previous batch before asking for this one.
    const reuse = this.narrow !== null && this.narrow.transient;
    if (reuse && this.gatherBuf.length < n) this.gatherBuf = new Float64Array(Math.max(n, BATCH_SIZE));
    const out = reuse ? this.gatherBuf : new Float64Array(n);
    const src = col.data as Float64Array;
    const pNulls = this.pk[0]!.nulls;
    const c =
      pd instanceof Float64Array
        ? uniqueGatherF64(pd, pNulls, n, idx.min, idx.max, idx.head, src, out)
        : uniqueGatherI32(pd, pNulls, n, idx.min, idx.max, idx.head, src, out);
    this.from = n;
    if (c === 0) return [];
    // The coalescer keeps small batches until it has a full one: those get memory of their own.
    const data = reuse && !this.co.passesThrough(c) ? out.slice(0, c) : c === out.length ? out : out.subarray(0, c);
    return this.co.push({ length: c, columns: [{ type: col.type, length: c, data, nulls: null }] });
  }

  /** step() through the (async) residual condition. */
  async stepAsync(): Promise<Batch[]> {
    const pairs = this.probeChunk();
    const left = this.left;
    const identity = this.uniqueProbe && this.from === 0 && pairs.count === left.length;
    for (let s = 0; s < pairs.count; s += BATCH_SIZE) {
      const e = Math.min(pairs.count, s + BATCH_SIZE);
      await this.em.flushPairs(left, pairs.l.subarray(s, e), pairs.r.subarray(s, e), identity && s === 0 && e === left.length);
    }
    return this.advance(pairs);
  }

  private advance(pairs: Pairs): Batch[] {
    this.from = pairs.nextRow;
    this.fromBuild = pairs.nextBuild;
    // Many-to-many keys hand the joined rows on before probing further.
    if (this.done) this.em.finishLeft(this.left);
    return this.coalesce(this.em.out.splice(0));
  }

  private coalesce(batches: readonly Batch[]): Batch[] {
    const out: Batch[] = [];
    for (const b of batches) out.push(...this.co.push(b));
    return out;
  }

  /** After the last left batch: RIGHT/FULL padding and what the coalescer holds. */
  finish(): Batch[] {
    const keep = this.narrow?.keep ?? null;
    const rel = this.rel;
    const out = this.coalesce(this.em.unmatchedRight(keep ? keep.left.map((i) => rel.left.columns[i]!) : rel.left.columns));
    out.push(...this.co.drain());
    return out;
  }
}

/** Whether an inner join should build on its left input (the estimates say it is the smaller one). */
export function buildsLeft(rel: JoinRel, ctx: ExecContext): boolean {
  if (rel.joinType !== 'inner') return false;
  const le = estimateRows(rel.left, ctx);
  return Number.isFinite(le) && le < estimateRows(rel.right, ctx);
}

async function* hashJoin(
  rel: JoinRel,
  keys: readonly EquiKey[],
  residual: Expr | undefined,
  ctx: ExecContext,
  narrow: Narrow | null = null,
): AsyncGenerator<Batch> {
  // The build side draws on the engine's memory budget; past its share the join is done file by file (join-spill.ts).
  const held = new Reservation();
  let probeFiles: SpillPartitions | null = null;
  let side: BuildSide | null = null;
  try {
    side = await readBuildSide(rel, keys, ctx, held);
    const files = side.kind === 'spilled' ? side.files : null;
    if (files) probeFiles = await partitionProbeSide(rel, keys, ctx, held, files);
    // One build side and the left batches probing it: the whole join, or one pair of files after another.
    for (let p = 0; p < (files ? files.n : 1); p++) {
      let st: HashJoinState;
      let lefts: AsyncIterable<Batch> | Iterable<Batch>;
      if (side.kind === 'memory') {
        st = new HashJoinState(rel, keys, residual, ctx, side.keys, side.build, narrow);
        lefts = executeRel(rel.left, withRuntimeFilter(rel, keys, st.bk, ctx));
      } else {
        const b = await buildFile(rel, keys, ctx, side.files, p, held);
        st = new HashJoinState(rel, keys, residual, ctx, b.keys, b.build, narrow, false);
        lefts = probeFiles!.files[p]!.read();
      }
      await checkpoint(ctx);
      for await (const left of lefts) {
        await checkpoint(ctx);
        if (left.length === 0) continue;
        st.start(left, st.syncKeys ? null : await st.keysAsync(left));
        for (;;) {
          const out = residual ? await st.stepAsync() : st.step();
          for (let i = 0; i < out.length; i++) yield out[i]!;
          if (st.done) break;
          await checkpoint(ctx);
        }
      }
      const rest = st.finish();
      for (let i = 0; i < rest.length; i++) yield rest[i]!;
      files?.files[p]!.close();
      probeFiles?.files[p]!.close();
    }
  } finally {
    held.release();
    if (side?.kind === 'spilled') side.files.close();
    probeFiles?.close();
  }
}

/** Inner hash join with the left input as build side (it is the smaller one). */
async function* hashJoinBuildLeft(rel: JoinRel, keys: readonly EquiKey[], residual: Expr | undefined, ctx: ExecContext): AsyncGenerator<Batch> {
  const swapped: JoinRel = {
    ...rel,
    left: rel.right,
    right: rel.left,
    columns: [...rel.right.columns, ...rel.left.columns],
    equiKeys: keys.map((k) => ({ left: k.right, right: k.left, nullSafe: k.nullSafe })),
    condition: residual,
  };
  const nl = rel.left.columns.length;
  const nr = rel.right.columns.length;
  for await (const b of hashJoin(swapped, swapped.equiKeys!, residual, { ...ctx })) {
    // Swapped output is right..left; restore left..right.
    yield { length: b.length, columns: [...b.columns.slice(nr, nr + nl), ...b.columns.slice(0, nr)] };
  }
}

async function* nestedLoopJoin(rel: JoinRel, residual: Expr | undefined, ctx: ExecContext): AsyncGenerator<Batch> {
  const right = await materialize(rel.right, ctx);
  const jt = rel.joinType;
  const em = new PairEmitter(rel, residual, condLayoutOf(rel), right, jt === 'right' || jt === 'full' ? new Uint8Array(right.length) : null, ctx);
  const co = new BatchCoalescer(rel.columns.map((c) => c.type));
  const m = right.length;
  // Pairs go in blocks of left rows × a run of right rows, left-major (the
  // order a row-by-row loop gives): a small right side is tiled `per` times
  // with its left rows repeated, a large one is taken in runs of BATCH_SIZE
  // as views. The block's columns are fills and copies, not gathers through
  // a selection, and the condition runs once per block.
  const per = m === 0 ? 0 : Math.max(1, Math.floor(BATCH_SIZE / m));
  const run = Math.min(m, BATCH_SIZE);
  // With a residual, the block needs only the columns it reads; the pairs
  // that pass are gathered from the inputs (flushBlock).
  const nl = rel.left.columns.length;
  const reads = new Set(residual ? columnRefsOf(residual) : []);
  const real = [...rel.left.columns, ...rel.right.columns].map((c) => !residual || reads.has(c.id));
  const tiled = per > 1 ? right.columns.map((v, k) => (real[nl + k] ? tileVector(v, per) : v)) : null;
  for await (const left of executeRel(rel.left, ctx)) {
    await checkpoint(ctx);
    if (left.length === 0) continue;
    em.startLeft(left.length);
    for (let i0 = 0; m > 0 && i0 < left.length; i0 += per) {
      const i1 = Math.min(left.length, i0 + per);
      for (let j0 = 0; j0 < m; j0 += run) {
        const j1 = Math.min(m, j0 + run);
        const w = j1 - j0;
        const c = (i1 - i0) * w;
        const lcols = left.columns.map((v, k) => (real[k] ? repeatRows(v, i0, i1, w) : v));
        const rcols = right.columns.map((v, k) => {
          if (!real[nl + k]) return v;
          if (tiled === null) return w === m ? v : sliceVector(v, j0, j1);
          const t = tiled[k]!;
          return c === t.length ? t : sliceVector(t, 0, c);
        });
        await em.flushBlock(left, { length: c, columns: [...lcols, ...rcols] }, i0, j0, w);
        for (const b of em.out.splice(0)) for (const o of co.push(b)) yield o;
        await checkpoint(ctx);
      }
    }
    em.finishLeft(left);
    for (const b of em.out.splice(0)) for (const o of co.push(b)) yield o;
  }
  for (const b of em.unmatchedRight(rel.left.columns)) for (const o of co.push(b)) yield o;
  for (const o of co.drain()) yield o;
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

/** Rows i0..i1 of `v`, each repeated `w` times in a row (fills, one per row). */
function repeatRows(v: Vector, i0: number, i1: number, w: number): Vector {
  const n = (i1 - i0) * w;
  if (v.nested) {
    // Nested views are taken (a lazy take when rows repeat), not boxed to be filled.
    const sel = new Int32Array(n);
    for (let i = i0, k = 0; i < i1; i++, k += w) sel.fill(i, k, k + w);
    return takeVector(v, sel, n);
  }
  const src = v.data;
  const data = (Array.isArray(src) ? new Array<Value>(n) : new (src.constructor as new (n: number) => typeof src)(n)) as typeof src;
  let nulls: Uint8Array | null = null;
  for (let i = i0, k = 0; i < i1; i++, k += w) {
    (data as Value[]).fill((src as Value[])[i]!, k, k + w);
    if (v.nulls !== null && v.nulls[i] === 1) (nulls ??= new Uint8Array(n)).fill(1, k, k + w);
  }
  return { type: v.type, length: n, data, nulls };
}

/** `v` repeated `times` times end to end (copies). */
function tileVector(v: Vector, times: number): Vector {
  const m = v.length;
  const n = m * times;
  const src = v.data;
  let data: typeof src;
  if (Array.isArray(src)) {
    const out = new Array<Value>(n);
    for (let t = 0, k = 0; t < times; t++) for (let j = 0; j < m; j++, k++) out[k] = src[j]!;
    data = out;
  } else {
    const out = new (src.constructor as new (n: number) => typeof src)(n);
    for (let t = 0; t < times; t++) (out as Float64Array).set(src.subarray(0, m) as Float64Array, t * m);
    data = out;
  }
  let nulls: Uint8Array | null = null;
  if (v.nulls !== null) {
    nulls = new Uint8Array(n);
    for (let t = 0; t < times; t++) nulls.set(v.nulls.subarray(0, m), t * m);
  }
  return { type: v.type, length: n, data, nulls };
}

// ---------------------------------------------------------------- lateral

/** The rows UNNEST produces for each row of `b`: right batch + owning row per right row. */
export function unnestRows(
  rel: UnnestRel,
  arrays: readonly Vector[],
  n: number,
): { rows: Batch; owner: Int32Array } {
  const na = arrays.length;
  const packed = na === 1 ? packedList(arrays[0]!, n) : null;
  if (packed) return unnestView(rel, packed.offsets, packed.child, n);
  const vals: (Value[] | null)[][] = arrays.map((a) => {
    const out: (Value[] | null)[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = getValue(a, i) as Value[] | null;
    return out;
  });
  // Zip length per row: the longest array (NULL and empty arrays give no rows).
  const lens = new Int32Array(n);
  let m = 0;
  for (let i = 0; i < n; i++) {
    let len = 0;
    for (let a = 0; a < na; a++) {
      const v = vals[a]![i];
      if (v && v.length > len) len = v.length;
    }
    if (rel.mode && na > 1) {
      // TRUNCATE: the shortest array's length; STRICT: all lengths must agree (NULL = empty).
      let min = len;
      for (let a = 0; a < na; a++) min = Math.min(min, vals[a]![i]?.length ?? 0);
      if (rel.mode === 'STRICT' && min !== len) throw new QueryError('Unnested arrays under STRICT mode must have equal lengths', 'invalidQuery');
      len = min;
    }
    lens[i] = len;
    m += len;
  }
  const owner = new Int32Array(m);
  // WITH OFFSET only: most UNNESTs never read the positions.
  const offsets = rel.offset ? new Float64Array(m) : null;
  for (let i = 0, k = 0; i < n; i++) {
    const len = lens[i]!;
    for (let e = 0; e < len; e++, k++) owner[k] = i;
    if (offsets !== null) for (let e = 0, k2 = k - len; e < len; e++, k2++) offsets[k2] = e;
  }
  const byId = new Map<number, Vector>();
  rel.elements.forEach((c, a) => byId.set(c.id, elementColumn(c.type, vals[a]!, lens, m)));
  if (rel.offset && offsets !== null) byId.set(rel.offset.id, { type: T.INT64, length: m, data: offsets, nulls: null });
  return { rows: { length: m, columns: rel.columns.map((c) => byId.get(c.id)!) }, owner };
}

/** unnestRows of one array given in the Arrow layout: the elements are its child vector, in order (NULL and empty arrays have none). */
function unnestView(rel: UnnestRel, offsets: Int32Array, child: Vector, n: number): { rows: Batch; owner: Int32Array } {
  const m = offsets[n]! - offsets[0]!;
  const owner = new Int32Array(m);
  const positions = rel.offset ? new Float64Array(m) : null;
  const base = offsets[0]!;
  for (let i = 0; i < n; i++) {
    for (let k = offsets[i]! - base, e = 0; k < offsets[i + 1]! - base; k++, e++) {
      owner[k] = i;
      if (positions !== null) positions[k] = e;
    }
  }
  const elements = base === 0 && child.length === m ? child : sliceVector(child, base, base + m);
  const byId = new Map<number, Vector>();
  byId.set(rel.elements[0]!.id, elements);
  if (rel.offset && positions !== null) byId.set(rel.offset.id, { type: T.INT64, length: m, data: positions, nulls: null });
  return { rows: { length: m, columns: rel.columns.map((c) => byId.get(c.id)!) }, owner };
}

/** One element column of an UNNEST: element k of each row's array, NULL past its end. */
function elementColumn(type: SqlType, arrs: readonly (Value[] | null)[], lens: Int32Array, m: number): Vector {
  const layout = physOf(type);
  if (layout === Phys.F64 || layout === Phys.I32 || layout === Phys.I64F) {
    const d = layout === Phys.I32 ? new Int32Array(m) : new Float64Array(m);
    let nulls: Uint8Array | null = null;
    let k = 0;
    for (let i = 0; i < arrs.length; i++) {
      const arr = arrs[i];
      const len = lens[i]!;
      for (let e = 0; e < len; e++, k++) {
        const x = arr && e < arr.length ? arr[e]! : null;
        if (x === null) {
          nulls ??= new Uint8Array(m);
          nulls[k] = 1;
        } else if (typeof x === 'bigint') {
          // INT64-like elements beyond ±2^53 need the exact layout: take the general path.
          // (compared as the double it rounds to: ±2^53 itself goes the general way too, so kept values are exact)
          const f = Number(x);
          if (f >= 9007199254740992 || f <= -9007199254740992) return generalElementColumn(type, arrs, lens, m);
          d[k] = f;
        } else d[k] = x as number;
      }
    }
    return { type, length: m, data: d, nulls };
  }
  return generalElementColumn(type, arrs, lens, m);
}

function generalElementColumn(type: SqlType, arrs: readonly (Value[] | null)[], lens: Int32Array, m: number): Vector {
  if (physOf(type) === Phys.VALUES) return valuesElementColumn(type, arrs, lens, m);
  const buf = new ColumnBuffer(type, m);
  for (let i = 0; i < arrs.length; i++) {
    const arr = arrs[i];
    for (let e = 0; e < lens[i]!; e++) buf.appendValue(arr && e < arr.length ? arr[e]! : null);
  }
  return buf.toVector();
}

/** generalElementColumn for types held as values (STRUCT, STRING, ...): the elements themselves, no buffer per element. */
export function valuesElementColumn(type: SqlType, arrs: readonly (Value[] | null)[], lens: Int32Array, m: number): Vector {
  const out = new Array<Value>(m);
  let nulls: Uint8Array | null = null;
  let k = 0;
  for (let i = 0; i < arrs.length; i++) {
    const arr = arrs[i];
    const len = lens[i]!;
    for (let e = 0; e < len; e++, k++) {
      const x = arr && e < arr.length ? arr[e]! : null;
      if (x === null) (nulls ??= new Uint8Array(m))[k] = 1;
      out[k] = x;
    }
  }
  return { type, length: m, data: out, nulls };
}

/** An inner UNNEST's output batches: rel.columns from the owners' left rows and the element rows. */
function unnestPairs(rel: JoinRel, left: Batch, { rows, owner }: { rows: Batch; owner: Int32Array }): Batch[] {
  const leftAt = new Map(rel.left.columns.map((c, i) => [c.id, i]));
  const rightAt = new Map(rel.right.columns.map((c, i) => [c.id, i]));
  const out: Batch[] = [];
  for (let s = 0; s < rows.length; s += BATCH_SIZE) {
    const e = Math.min(rows.length, s + BATCH_SIZE);
    const sel = owner.subarray(s, e);
    const whole = s === 0 && e === rows.length;
    const columns = rel.columns.map((c) => {
      const l = leftAt.get(c.id);
      if (l !== undefined) return takeVector(left.columns[l]!, sel, e - s);
      const r = rows.columns[rightAt.get(c.id)!]!;
      return whole ? r : sliceVector(r, s, e);
    });
    out.push({ length: e - s, columns });
  }
  return out;
}

async function* lateralJoin(rel: JoinRel, ctx: ExecContext): AsyncGenerator<Batch> {
  const lLayout = layoutOf(rel.left.columns);
  const co = new BatchCoalescer(rel.columns.map((c) => c.type));
  const condLayout = condLayoutOf(rel);
  const residual = rel.condition;
  const em = new PairEmitter(rel, residual, condLayout, { length: 0, columns: [] }, null, ctx);
  for await (const left of executeRel(rel.left, ctx)) {
    await checkpoint(ctx);
    const n = left.length;
    if (n === 0) continue;
    em.startLeft(n);
    if (rel.right.kind === 'unnest' && (rel.joinType === 'inner' || rel.joinType === 'cross') && !residual) {
      // Every element row pairs with its owner, in order: the output is the
      // owners' left columns and the element columns, no pairs to match.
      const arrays: Vector[] = [];
      for (const a of rel.right.arrays) arrays.push(await evaluate(a, left, lLayout, ctx));
      for (const b of unnestPairs(rel, left, unnestRows(rel.right, arrays, n))) for (const o of co.push(b)) yield o;
      continue;
    }
    if (rel.right.kind === 'unnest') {
      // Fast path: unnest the arrays of the whole left batch at once.
      const arrays: Vector[] = [];
      for (const a of rel.right.arrays) arrays.push(await evaluate(a, left, lLayout, ctx));
      const { rows, owner } = unnestRows(rel.right, arrays, n);
      em.right = rows;
      for (let j = 0; j < rows.length; j++) {
        em.push(owner[j]!, j);
        if (em.full) await em.flush(left);
      }
      await em.flush(left);
    } else {
      // General: run the right side once per left row with that row bound as outer values.
      const batches: Batch[] = [];
      const owners: number[] = [];
      for (let i = 0; i < n; i++) {
        const outer = new Map(ctx.outer);
        rel.left.columns.forEach((c, k) => outer.set(c.id, getValue(left.columns[k]!, i)));
        const r = await materialize(rel.right, { ...ctx, outer });
        batches.push(r);
        for (let j = 0; j < r.length; j++) owners.push(i);
        await checkpoint(ctx);
      }
      const rows = concatBatches(
        rel.right.columns.map((c) => c.type),
        batches,
      );
      em.right = rows;
      for (let j = 0; j < rows.length; j++) {
        em.push(owners[j]!, j);
        if (em.full) await em.flush(left);
      }
      await em.flush(left);
    }
    if (em.right.columns.length === 0 && rel.right.columns.length > 0) {
      em.right = { length: 0, columns: rel.right.columns.map((c) => nullVector(c.type, 0)) };
    }
    em.finishLeft(left);
    for (const b of em.out.splice(0)) for (const o of co.push(b)) yield o;
  }
  for (const o of co.drain()) yield o;
}
