// Joins. Equi-joins are hash joins: the build side is materialized as column
// vectors and indexed by key (join-index.ts), and the probe side streams
// batch by batch. Candidate pairs are collected as (probe row, build row)
// selections and emitted through join-pairs.ts, which applies the residual
// condition and tracks matches for LEFT/RIGHT/FULL padding and SEMI/ANTI
// output. A build side past the memory budget is partitioned to disk
// (join-spill.ts). Non-equi conditions and CROSS JOIN use a nested loop
// (join-nested-loop.ts); lateral joins run per left row (join-lateral.ts).
import type { Expr, JoinRel, Rel, ResolvedColumn, LogicalExpr } from '../../analyzer/resolved.js';
import { T } from '../../types/types.js';
import { BATCH_SIZE, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { columnRefsOf, evaluate, evaluateSync, hasSubquery, layoutOf } from '../expr.js';
import { executeRel } from '../execute.js';
import { hashRows } from '../hash.js';
import { withRuntimeFilter } from './join-filter.js';
import { buildFile, partitionProbeSide, readBuildSide, type BuildSide } from './join-spill.js';
import { Reservation } from '../../storage/memory-budget.js';
import type { SpillPartitions } from '../spill.js';
import { BatchCoalescer } from '../vectors.js';
import { Pairs, probe, DenseIndex, denseProbeKeys, probeUnique, uniqueGatherF64, uniqueGatherI32, probeDense, joinIndexFor, isStoredScan } from './join-index.js';
import { PairEmitter, condLayoutOf } from './join-pairs.js';
import { lateralJoin } from './join-lateral.js';
import { nestedLoopJoin } from './join-nested-loop.js';

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
