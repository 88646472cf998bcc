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
import type { Expr, FrameBound, Rel, SortKey, WindowCall, WindowRel } from '../../analyzer/resolved.js';
import { clusterDbscan } from '../../functions/geography.js';
import { tfIdf } from '../../functions/search.js';
import { QueryError } from '../../types/errors.js';
import { T, type SqlType } from '../../types/types.js';
import { Decimal, type Value } from '../../types/values.js';
import { BATCH_SIZE, MAX_SAFE, decimalVector, getValue, takeVector, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate, layoutOf } from '../expr.js';
import { executeRel, materialize } from '../execute.js';
import { memoryBudget, Reservation } from '../../storage/memory-budget.js';
import { SpillPartitions, spillOptions } from '../spill.js';
import { GroupTable } from '../hash.js';
import { keyComparator, peersComparator, sortRowsWithRanks, type KeySpec, type RowComparator } from '../sort-keys.js';
import { batchBytes, concatBatches, nullVector, rebatch, takeOrNull } from '../vectors.js';
import { topNInput } from './window/topn.js';
import { RowsFeed } from './window/accumulated.js';
import { rowsBound } from './window/rows-bound.js';
import { rangeBoundAt, rangeKeys, rangeOffset, type RangeKeys, type RangeOffset } from './window/range-keys.js';
import { sortedWindowRun, type SortedRun } from './window/suffix.js';
import { DecimalFrameSum, wordsOf } from './window/decimal-frame-sum.js';
import { partitionedWindow, tooLargeForWindow } from './window/partitioned.js';

type Layout = ReadonlyMap<number, number>;

/** Sorted-position geometry of one (partition, order) spec. */
interface Geometry {
  readonly n: number;
  /** Input row at each sorted position. */
  readonly idx: Int32Array;
  readonly partStart: Int32Array;
  readonly partEnd: Int32Array;
  readonly partIndex: Int32Array;
  readonly numParts: number;
  readonly peerStart: Int32Array;
  readonly peerEnd: Int32Array;
  readonly orderVecs: readonly Vector[];
  readonly orderBy: readonly SortKey[];
}

/** An expression's identity for sharing work between calls (a call: its name and arguments'). */
export function exprKey(e: Expr): string {
  switch (e.kind) {
    case 'column':
      return `c${e.columnId}`;
    case 'literal':
      return `l${String(e.value)}`;
    case 'call':
      return `f${e.name}(${e.args.map(exprKey).join(',')})`;
    case 'cast':
      return `cast(${exprKey(e.arg)} as ${JSON.stringify(e.type)})`;
    default:
      // Anything else: treat as unique (no sharing), which is always correct.
      return `u${Math.random()}`;
  }
}

function specKey(c: WindowCall): string {
  return `${c.partitionBy.map(exprKey).join(',')}|${c.orderBy.map((k) => `${exprKey(k.expr)}:${k.descending}:${k.nullsFirst}`).join(',')}`;
}

/**
 * Partition and peer-group bounds of every sorted position. Plain functions:
 * V8 optimizes their loops far better than loops inside async functions.
 */
function boundaries(idx: Int32Array, n: number, pc: RowComparator | null, oc: RowComparator | null) {
  const pFlags = changeFlags(idx, n, pc);
  const oFlags = changeFlags(idx, n, oc);
  const partStart = new Int32Array(n);
  const partEnd = new Int32Array(n);
  const partIndex = new Int32Array(n);
  let numParts = n > 0 ? 1 : 0;
  if (pFlags === null) partEnd.fill(n);
  else numParts = spans(pFlags, null, n, partStart, partEnd, partIndex);
  // Without ORDER BY (or when no call reads peers) every row of a partition is a peer of the others: share the arrays.
  let peerStart = partStart;
  let peerEnd = partEnd;
  if (oFlags !== null) {
    peerStart = new Int32Array(n);
    peerEnd = new Int32Array(n);
    spans(oFlags, pFlags, n, peerStart, peerEnd, null);
  }
  return { partStart, partEnd, partIndex, peerStart, peerEnd, numParts };
}

/**
 * Runs of sorted positions split where `flags` (or `more`) is set: each
 * position's run start, run end and (when `index` is given) run number.
 * Returns the number of runs.
 */
function spans(flags: Uint8Array, more: Uint8Array | null, n: number, start: Int32Array, end: Int32Array, index: Int32Array | null): number {
  let s = 0;
  let k = 0;
  for (let p = 0; p < n; p++) {
    if (flags[p] === 1 || (more !== null && more[p] === 1)) {
      s = p;
      k++;
    }
    start[p] = s;
    if (index !== null) index[p] = k;
  }
  let e = n;
  for (let p = n - 1; p >= 0; p--) {
    end[p] = e;
    if (start[p] === p) e = p;
  }
  return n > 0 ? k + 1 : 0;
}

/** flags[p] = 1 when sorted position p differs from p - 1 under `cmp` (rank comparators take the typed loop). */
function changeFlags(idx: Int32Array, n: number, cmp: RowComparator | null): Uint8Array | null {
  if (cmp === null) return null;
  const flags = new Uint8Array(n);
  const rs = rankArraysOf.get(cmp);
  if (rs !== undefined) {
    for (const r of rs) {
      let prev = n > 0 ? r[idx[0]!]! : 0;
      for (let p = 1; p < n; p++) {
        const x = r[idx[p]!]!;
        if (x !== prev) flags[p] = 1;
        prev = x;
      }
    }
    return flags;
  }
  for (let p = 1; p < n; p++) if (cmp(idx[p - 1]!, idx[p]!) !== 0) flags[p] = 1;
  return flags;
}

/** The rank arrays behind a sameRanks comparator. */
const rankArraysOf = new WeakMap<RowComparator, Int32Array[]>();

const PART_SPEC: KeySpec = { descending: false, nullsFirst: true };

/** Calls that read only partition bounds and positions, never peer groups. */
const PEERLESS = new Set(['ROW_NUMBER', 'NTILE', 'LAG', 'LEAD']);
const needsPeers = (c: WindowCall): boolean => c.aggregate !== undefined && c.aggregate !== null ? true : !PEERLESS.has(c.name.toUpperCase());

async function geometry(call: WindowCall, input: Batch, layout: Layout, ctx: ExecContext, needPeers = true): Promise<Geometry> {
  const n = input.length;
  const pVecs: Vector[] = [];
  for (const e of call.partitionBy) pVecs.push(await evaluate(e, input, layout, ctx));
  const oVecs: Vector[] = [];
  for (const k of call.orderBy) oVecs.push(await evaluate(k.expr, input, layout, ctx));
  const pSpecs = pVecs.map(() => PART_SPEC);
  let idx: Int32Array;
  let ranks: Int32Array[] | null = null;
  if (pVecs.length + oVecs.length === 0) {
    idx = new Int32Array(n);
    for (let i = 0; i < n; i++) idx[i] = i;
  } else {
    const sorted = sortRowsWithRanks([...pVecs, ...oVecs], [...pSpecs, ...call.orderBy], n, [...pVecs.map(() => true), ...oVecs.map(() => needPeers)]);
    idx = sorted.idx;
    ranks = sorted.ranks;
  }
  await checkpoint(ctx);
  // Equal dense ranks mean peers: compare rank arrays instead of values when the rank sort ran.
  const sameRanks = (rs: Int32Array[]): RowComparator => {
    const cmp: RowComparator = (a, b) => {
      for (let k = 0; k < rs.length; k++) if (rs[k]![a] !== rs[k]![b]) return 1;
      return 0;
    };
    rankArraysOf.set(cmp, rs);
    return cmp;
  };
  const np = pVecs.length;
  const pc = np === 0 ? null : ranks ? sameRanks(ranks.slice(0, np)) : peersComparator(pVecs, pSpecs);
  const oc = oVecs.length === 0 || !needPeers ? null : ranks ? sameRanks(ranks.slice(np)) : peersComparator(oVecs, call.orderBy);
  const b = boundaries(idx, n, pc, oc);
  const { partStart, partEnd, partIndex, peerStart, peerEnd, numParts } = b;
  return { n, idx, partStart, partEnd, partIndex, numParts, peerStart, peerEnd, orderVecs: oVecs, orderBy: call.orderBy };
}

async function constantArg(e: Expr | undefined, input: Batch, layout: Layout, ctx: ExecContext): Promise<Value> {
  if (!e || input.length === 0) return null;
  const v = await evaluate(e, { length: 1, columns: input.columns.map((c) => takeVector(c, Int32Array.of(0), 1)) }, layout, ctx);
  return getValue(v, 0);
}

const toNum = (v: Value): number => (typeof v === 'bigint' ? Number(v) : (v as number));

/** Frame [start, end) per sorted position. */
async function frames(call: WindowCall, g: Geometry, input: Batch, layout: Layout, ctx: ExecContext): Promise<{ fs: Int32Array; fe: Int32Array }> {
  const n = g.n;
  const fs = new Int32Array(n);
  const fe = new Int32Array(n);
  const f = call.frame;
  // No rows: no frames, and no row to evaluate the offsets over (not NULL offsets).
  if (n === 0) return { fs, fe };
  if (!f) {
    for (let p = 0; p < n; p++) {
      fs[p] = g.partStart[p]!;
      fe[p] = g.orderBy.length > 0 ? g.peerEnd[p]! : g.partEnd[p]!;
    }
    return { fs, fe };
  }
  // Offsets stay in their exact form (bigint, Decimal, number) for RANGE arithmetic.
  const offsetOf = async (b: FrameBound): Promise<Value> => {
    if (b.type !== 'preceding' && b.type !== 'following') return 0;
    const v = await constantArg(b.offset, input, layout, ctx);
    if (v === null) throw new QueryError('The boundary offset value cannot be null');
    const x = v instanceof Decimal ? v.toNumber() : toNum(v);
    if (!(x >= 0)) throw new QueryError(`Window frame offset for PRECEDING or FOLLOWING must be non-negative, but was ${Number.isNaN(x) ? 'nan' : String(v)}`);
    return v;
  };
  const offsets = { start: await offsetOf(f.start), end: await offsetOf(f.end) };
  const so = offsets.start instanceof Decimal ? offsets.start.toNumber() : toNum(offsets.start);
  const eo = offsets.end instanceof Decimal ? offsets.end.toNumber() : toNum(offsets.end);
  if (f.unit === 'ROWS') {
    for (let p = 0; p < n; p++) {
      const ps = g.partStart[p]!;
      const pe = g.partEnd[p]!;
      fs[p] = rowsBound(f.start, so, p, ps, pe, true);
      fe[p] = rowsBound(f.end, eo, p, ps, pe, false);
      if (fe[p]! < fs[p]!) fe[p] = fs[p]!;
    }
    return { fs, fe };
  }
  // RANGE: offsets need one numeric ORDER BY key; CURRENT ROW means the peer group.
  const key = g.orderVecs[0];
  const needsKey = f.start.type === 'preceding' || f.start.type === 'following' || f.end.type === 'preceding' || f.end.type === 'following';
  if (needsKey && (!key || g.orderVecs.length !== 1)) throw new QueryError('RANGE window frame with an offset requires exactly one numeric ORDER BY expression');
  const keys = needsKey ? rangeKeys(key!, g.orderBy[0]!.expr.type.kind, g.orderBy[0]!.descending, n, (p) => g.idx[p]!) : null;
  const offStart = keys !== null && (f.start.type === 'preceding' || f.start.type === 'following') ? rangeOffset(offsets.start, keys.scale) : null;
  const offEnd = keys !== null && (f.end.type === 'preceding' || f.end.type === 'following') ? rangeOffset(offsets.end, keys.scale) : null;
  // The ordered (non-NULL, non-NaN) keys occupy one contiguous run [lo, hi) of each partition.
  let lo = 0;
  let hi = 0;
  for (let p = 0; p < n; p++) {
    const ps = g.partStart[p]!;
    const pe = g.partEnd[p]!;
    if (keys !== null && p === ps) {
      lo = ps;
      hi = pe;
      while (lo < hi && keys.skip[lo] === 1) lo++;
      while (hi > lo && keys.skip[hi - 1] === 1) hi--;
    }
    fs[p] = rangeBound(f.start, keys, offStart, g, p, ps, pe, lo, hi, true);
    fe[p] = rangeBound(f.end, keys, offEnd, g, p, ps, pe, lo, hi, false);
    if (fe[p]! < fs[p]!) fe[p] = fs[p]!;
  }
  return { fs, fe };
}

function rangeBound(b: FrameBound, keys: RangeKeys | null, off: RangeOffset | null, g: Geometry, p: number, ps: number, pe: number, runLo: number, runHi: number, isStart: boolean): number {
  switch (b.type) {
    case 'unbounded_preceding':
      return ps;
    case 'unbounded_following':
      return pe;
    case 'current_row':
      return isStart ? g.peerStart[p]! : g.peerEnd[p]!;
  }
  // NULL/NaN keys: the bound is their own peer group.
  if (keys!.skip[p] === 1) return isStart ? g.peerStart[p]! : g.peerEnd[p]!;
  return rangeBoundAt(keys!, b.type === 'preceding', off!, p, runLo, runHi, isStart);
}

function int64Vector(d: Float64Array, nulls: Uint8Array | null = null): Vector {
  return { type: T.INT64, length: d.length, data: d, nulls };
}

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

/** ROW_NUMBER / RANK / DENSE_RANK in a plain function (tight loops; computeCall is async). */
function numbering(name: string, g: Geometry, idx: Int32Array, n: number): Float64Array {
  const d = new Float64Array(n);
  const partStart = g.partStart;
  if (name === 'ROW_NUMBER') {
    for (let p = 0; p < n; p++) d[idx[p]!] = p - partStart[p]! + 1;
    return d;
  }
  const peerStart = g.peerStart;
  let dense = 0;
  for (let p = 0; p < n; p++) {
    const ps = partStart[p]!;
    if (p === ps) dense = 0;
    if (p === peerStart[p]) dense++;
    d[idx[p]!] = name === 'RANK' ? peerStart[p]! - ps + 1 : dense;
  }
  return d;
}

async function computeCall(call: WindowCall, g: Geometry, input: Batch, layout: Layout, ctx: ExecContext): Promise<Vector> {
  const n = g.n;
  const idx = g.idx;
  const name = call.name.toUpperCase();
  // No rows: nothing to compute, and no row to read a constant argument (NTILE's N, LAG's offset...) from.
  if (n === 0) return nullVector(call.column.type, 0);
  if (call.aggregate) return aggregateCall(call, g, input, layout, ctx);
  const arg = async (k: number): Promise<Vector> => evaluate(call.args[k]!, input, layout, ctx);
  switch (name) {
    case 'ROW_NUMBER':
    case 'RANK':
    case 'DENSE_RANK': {
      return int64Vector(numbering(name, g, idx, n));
    }
    case 'PERCENT_RANK':
    case 'CUME_DIST': {
      const d = new Float64Array(n);
      for (let p = 0; p < n; p++) {
        const ps = g.partStart[p]!;
        const cnt = g.partEnd[p]! - ps;
        d[idx[p]!] = name === 'CUME_DIST' ? (g.peerEnd[p]! - ps) / cnt : cnt === 1 ? 0 : (g.peerStart[p]! - ps) / (cnt - 1);
      }
      return { type: T.FLOAT64, length: n, data: d, nulls: null };
    }
    case 'NTILE': {
      const kv = await constantArg(call.args[0], input, layout, ctx);
      if (kv === null) throw new QueryError('The N value of NTILE cannot be NULL');
      const k = toNum(kv);
      if (k <= 0) throw new QueryError('The N value (number of buckets) for the NTILE function must be positive');
      const d = new Float64Array(n);
      for (let p = 0; p < n; p++) {
        const ps = g.partStart[p]!;
        const cnt = g.partEnd[p]! - ps;
        const r = p - ps;
        const q = Math.floor(cnt / k);
        const rem = cnt % k;
        const big = rem * (q + 1);
        d[idx[p]!] = r < big ? Math.floor(r / (q + 1)) + 1 : rem + Math.floor((r - big) / q) + 1;
      }
      return int64Vector(d);
    }
    case 'LAG':
    case 'LEAD': {
      const v = await arg(0);
      const offV = call.args.length > 1 ? await constantArg(call.args[1], input, layout, ctx) : 1n;
      if (offV === null) throw new QueryError(`The offset to ${name} must not be NULL`);
      const off = toNum(offV);
      if (off < 0) throw new QueryError(`The offset to the function ${name} must not be negative`);
      const def = call.args.length > 2 ? await arg(2) : null;
      const pick = new Int32Array(n);
      const useDefault = new Uint8Array(n);
      for (let p = 0; p < n; p++) {
        const q = name === 'LAG' ? p - off : p + off;
        const r = idx[p]!;
        if (q >= g.partStart[p]! && q < g.partEnd[p]!) pick[r] = idx[q]!;
        else {
          pick[r] = -1;
          useDefault[r] = 1;
        }
      }
      const res = takeOrNull(v, pick);
      if (!def) return res;
      // Rows outside the partition take the default expression's value of the current row.
      const vals: Value[] = new Array(n);
      for (let r = 0; r < n; r++) vals[r] = useDefault[r] === 1 ? getValue(def, r) : getValue(res, r);
      return vectorFromValuesOf(call.column.type, vals);
    }
    case 'FIRST_VALUE':
    case 'LAST_VALUE':
    case 'NTH_VALUE': {
      const v = await arg(0);
      const { fs, fe } = await frames(call, g, input, layout, ctx);
      let nth = 1;
      if (name === 'NTH_VALUE') {
        const nv = await constantArg(call.args[1], input, layout, ctx);
        if (nv === null) throw new QueryError('The N value for the NthValue function must not be NULL');
        if (toNum(nv) <= 0) throw new QueryError('The N value for the NthValue function must be positive');
        nth = toNum(nv);
      }
      const pick = valuePicks(name === 'LAST_VALUE', nth, call.ignoreNulls === true ? v.nulls : null, idx, fs, fe);
      return takeOrNull(v, pick);
    }
    case 'PERCENTILE_CONT':
    case 'PERCENTILE_DISC':
      return percentile(call, name === 'PERCENTILE_CONT', g, input, layout, ctx);
    case 'TF_IDF': {
      // One dictionary per partition; document order does not matter.
      const v = await arg(0);
      const limit = async (i: number, dflt: number, max: number, what: string): Promise<number> => {
        if (call.args.length <= i) return dflt;
        const x = await constantArg(call.args[i], input, layout, ctx);
        if (x === null) throw new QueryError(`TF_IDF ${what} must not be NULL`);
        const k = toNum(x);
        if (k < 0 || k > max) throw new QueryError(`TF_IDF ${what} must be between 0 and ${max}, got ${k}`);
        return k;
      };
      const maxDistinct = await limit(1, 32000, 1048576, 'max_distinct_tokens');
      const threshold = await limit(2, 5, Number.MAX_SAFE_INTEGER, 'frequency_threshold');
      const vals: Value[] = new Array<Value>(n).fill(null);
      for (let p = 0; p < n; p = g.partEnd[p]!) {
        const rows = Array.from({ length: g.partEnd[p]! - p }, (_, k) => idx[p + k]!);
        tfIdf(rows.map((r) => getValue(v, r)), maxDistinct, threshold).forEach((w, k) => (vals[rows[k]!] = w));
      }
      return vectorFromValuesOf(call.column.type, vals);
    }
    case 'ST_CLUSTERDBSCAN': {
      // One DBSCAN run per partition, rows in window order (the GEOGRAPHY library clusters).
      const v = await arg(0);
      const [eps, minPts] = [await constantArg(call.args[1], input, layout, ctx), await constantArg(call.args[2], input, layout, ctx)];
      const vals: Value[] = new Array<Value>(n).fill(null);
      for (let p = 0; p < n; p = g.partEnd[p]!) {
        const rows = Array.from({ length: g.partEnd[p]! - p }, (_, k) => idx[p + k]!);
        clusterDbscan(rows.map((r) => getValue(v, r)), eps, minPts).forEach((c, k) => (vals[rows[k]!] = c));
      }
      return vectorFromValuesOf(T.INT64, vals);
    }
    default:
      throw new QueryError(`Analytic function ${call.name} is not supported`, 'notImplemented', 501);
  }
}

/**
 * FIRST_VALUE / NTH_VALUE (the nth qualifying row of each frame) and
 * LAST_VALUE (the last): the input row picked for each input row, -1 for
 * none. Under IGNORE NULLS (`nulls`) through the qualifying positions and a
 * count of them before each position, so a frame costs O(1) whatever NULLs
 * it holds (scanning them was O(n) a frame: O(n^2) over long frames).
 */
export function valuePicks(last: boolean, nth: number, nulls: Uint8Array | null, idx: Int32Array, fs: Int32Array, fe: Int32Array): Int32Array {
  const n = idx.length;
  const pick = new Int32Array(n);
  if (nulls === null) {
    for (let p = 0; p < n; p++) {
      const q = last ? fe[p]! - 1 : fs[p]! + nth - 1;
      pick[idx[p]!] = q >= fs[p]! && q < fe[p]! ? idx[q]! : -1;
    }
    return pick;
  }
  // before[q]: qualifying positions before q; at[k]: the k-th qualifying position.
  const before = new Int32Array(n + 1);
  const at = new Int32Array(n);
  let k = 0;
  for (let q = 0; q < n; q++) {
    before[q] = k;
    if (nulls[idx[q]!] !== 1) at[k++] = q;
  }
  before[n] = k;
  for (let p = 0; p < n; p++) {
    const s = fs[p]!;
    const e = fe[p]!;
    const j = last ? before[e]! - 1 : before[s]! + nth - 1;
    const q = j >= 0 && j < k ? at[j]! : -1;
    pick[idx[p]!] = q >= s && q < e ? idx[q]! : -1;
  }
  return pick;
}

/** The rows that are NULL (a value layout may hold a NULL without the bitmap saying so); null: none. */
function nullMask(v: Vector): Uint8Array | null {
  const d = v.data;
  if (!Array.isArray(d)) return v.nulls;
  let m: Uint8Array | null = null;
  for (let i = 0; i < v.length; i++) {
    if (d[i] !== null || (v.nulls !== null && v.nulls[i] === 1)) continue;
    m ??= v.nulls === null ? new Uint8Array(v.length) : Uint8Array.from(v.nulls);
    m[i] = 1;
  }
  return m ?? v.nulls;
}

function vectorFromValuesOf(type: SqlType, vals: Value[]): Vector {
  // Local import avoidance: VectorBuilder semantics via vectorFromValues.
  return vfv(type, vals);
}
import { vectorFromValues as vfv } from '../../types/vector.js';

/**
 * PERCENTILE_CONT / PERCENTILE_DISC over each whole partition, as the
 * reference evaluator does: values ascend with NaN first; under RESPECT NULLS
 * the NULLs count as the smallest values. The position max_index × percentile
 * is exact (a double percentile is split into mantissa and exponent), its
 * fraction is the right weight. CONT interpolates left·(1 − w) + right·w
 * (exactly for NUMERIC/BIGNUMERIC, rounded to the type's scale).
 */
async function percentile(call: WindowCall, cont: boolean, g: Geometry, input: Batch, layout: Layout, ctx: ExecContext): Promise<Vector> {
  const n = g.n;
  const v = await evaluate(call.args[0]!, input, layout, ctx);
  const pct = percentileArg(call, await constantArg(call.args[1], input, layout, ctx));
  const out: Value[] = new Array(n);
  const cmp = keyComparator(v, { descending: false, nullsFirst: true });
  // Rows of one partition are contiguous in sorted positions; sort each partition's values once.
  for (let ps = 0; ps < n; ps = g.partEnd[ps]!) {
    const pe = g.partEnd[ps]!;
    const rows: number[] = [];
    let nulls = 0;
    for (let p = ps; p < pe; p++) {
      const r = g.idx[p]!;
      if (v.nulls !== null && v.nulls[r] === 1) nulls++;
      else rows.push(r);
    }
    rows.sort(cmp);
    const pick = percentilePick(call, cont, pct, rows.length, nulls);
    const res = pick === null ? null : percentileValue(call, pick, (i) => getValue(v, rows[i]!));
    for (let p = ps; p < pe; p++) out[g.idx[p]!] = res;
  }
  return vfv(call.column.type, out);
}

/** The percentile argument (a constant), checked. */
export function percentileArg(call: WindowCall, pv: Value): Decimal | number {
  if (pv === null) throw new QueryError(`${call.name} percentile cannot be NULL`);
  const pctNum = pv instanceof Decimal ? pv.toNumber() : toNum(pv as number | bigint);
  if (!(pctNum >= 0 && pctNum <= 1)) throw new QueryError(`Percentile argument must be in [0, 1]; got ${pv instanceof Decimal ? pv.toString() : pctNum}`);
  return pv instanceof Decimal ? pv : pctNum;
}

/**
 * Which of a partition's `m` non-NULL values (ascending, NaN first) make its
 * percentile, `nulls` NULLs beside them: `left` (and `right` with weight `w`,
 * CONT interpolating); null: the result is NULL.
 */
export interface PercentilePick {
  readonly left: number;
  readonly right: number | null;
  readonly w: Weight | null;
}

export function percentilePick(call: WindowCall, cont: boolean, pct: Decimal | number, m: number, nullCount: number): PercentilePick | null {
  // Under RESPECT NULLS the NULLs count as the smallest values.
  const nulls = call.ignoreNulls === false ? nullCount : 0;
  if (m === 0) return null;
  if (cont) {
    const { index, right } = percentileIndex(pct, m - 1 + nulls);
    if (index >= nulls) {
      const i = index - nulls;
      return isZero(right) ? { left: i, right: null, w: null } : { left: i, right: i + 1, w: right };
    }
    // Between the last NULL and the smallest value: the value itself.
    if (index === nulls - 1 && !isZero(right)) return { left: 0, right: null, w: null };
    return null;
  }
  const w = percentileIndex(pct, m + nulls);
  const index = w.index > 0 && isZero(w.right) ? w.index - 1 : w.index;
  return index >= nulls ? { left: index - nulls, right: null, w: null } : null;
}

/** The percentile from the picked values (`at(i)`: the i-th smallest non-NULL value). */
export function percentileValue(call: WindowCall, pick: PercentilePick, at: (i: number) => Value): Value {
  const rt = call.column.type.kind;
  const scale = rt === 'NUMERIC' ? 9 : rt === 'BIGNUMERIC' ? 38 : -1;
  const left = at(pick.left);
  return pick.right === null ? left : interpolate(left, at(pick.right), pick.w!, scale);
}

/** A weight: an exact fraction num / 2^bits (double percentiles) or a Decimal. */
type Weight = { readonly num: bigint; readonly bits: bigint } | Decimal;

const isZero = (w: Weight): boolean => (w instanceof Decimal ? w.isZero() : w.num === 0n);

/** floor(maxIndex × pct) and the fraction above it, both exact. */
function percentileIndex(pct: Decimal | number, maxIndex: number): { index: number; right: Weight } {
  if (pct instanceof Decimal) {
    const x = pct.times(maxIndex);
    const index = x.floor();
    return { index: index.toNumber(), right: x.minus(index) };
  }
  // pct = mant / 2^bits exactly (pct in [0, 1]).
  let mant = pct;
  let bits = 0n;
  while (mant !== Math.floor(mant)) {
    mant *= 2;
    bits++;
  }
  const prod = BigInt(maxIndex) * BigInt(mant);
  const index = prod >> bits;
  return { index: Number(index), right: { num: prod - (index << bits), bits } };
}

/** num / 2^bits as a double (bits past the double range shift out first). */
function ratio(num: bigint, bits: bigint): number {
  if (bits > 1000n) {
    num >>= bits - 1000n;
    bits = 1000n;
  }
  return Number(num) / 2 ** Number(bits);
}

function interpolate(left: Value, right: Value, w: Weight, scale: number): Value {
  if (left instanceof Decimal && right instanceof Decimal) {
    const rw = w instanceof Decimal ? w : new Decimal(w.num.toString()).div(new Decimal(2).pow(Number(w.bits)));
    return left.times(new Decimal(1).minus(rw)).plus(right.times(rw)).toDecimalPlaces(scale, Decimal.ROUND_HALF_UP);
  }
  const x = toNum(left as number);
  const y = toNum(right as number);
  if (w instanceof Decimal) return x * new Decimal(1).minus(w).toNumber() + y * w.toNumber();
  // The reference sums left·(1 − w) + right·w in long double, so the products
  // do not round to double before the sum (31 and 32 at 0.3 give 31.3, not
  // 31.300000000000004): the exact sum, rounded once, matches it.
  if (Number.isFinite(x) && Number.isFinite(y)) return exactWeightedSum(x, y, w.num, w.bits);
  // Both weights from the exact fraction, so neither loses relative precision near 0.
  return x * ratio((1n << w.bits) - w.num, w.bits) + y * ratio(w.num, w.bits);
}

/** A finite double as m·2^e exactly. */
function exactParts(d: number): { m: bigint; e: number } {
  if (d === 0) return { m: 0n, e: 0 };
  let e = 0;
  while (!Number.isInteger(d)) {
    d *= 2;
    e--;
  }
  return { m: BigInt(d), e };
}

/** x·(2^bits − num)/2^bits + y·num/2^bits, rounded once to the nearest double. */
function exactWeightedSum(x: number, y: number, num: bigint, bits: bigint): number {
  const a = exactParts(x);
  const b = exactParts(y);
  const e = Math.min(a.e, b.e);
  let m = (a.m << BigInt(a.e - e)) * ((1n << bits) - num) + (b.m << BigInt(b.e - e)) * num;
  let exp = e - Number(bits);
  if (m === 0n) return 0;
  const neg = m < 0n;
  if (neg) m = -m;
  // Keep 55 significant bits plus a sticky bit, so Number() rounds once, correctly.
  const len = m.toString(2).length;
  if (len > 55) {
    const k = BigInt(len - 55);
    const sticky = (m & ((1n << k) - 1n)) !== 0n ? 1n : 0n;
    m = (m >> k) | sticky;
    exp += len - 55;
  }
  const r = Number(m) * 2 ** Math.max(exp, -1000) * 2 ** (exp - Math.max(exp, -1000));
  return neg ? -r : r;
}

// ---------------------------------------------------------------- aggregates

const NATIVE = new Set(['COUNT', 'SUM', 'AVG', 'MIN', 'MAX', 'COUNTIF']);

async function aggregateCall(call: WindowCall, g: Geometry, input: Batch, layout: Layout, ctx: ExecContext): Promise<Vector> {
  const n = g.n;
  const args: Vector[] = [];
  for (const a of call.args) args.push(await evaluate(a, input, layout, ctx));
  const { fs, fe } = await frames(call, g, input, layout, ctx);
  let whole = true;
  for (let p = 0; p < n && whole; p++) if (fs[p] !== g.partStart[p] || fe[p] !== g.partEnd[p]) whole = false;
  const name = call.name.toUpperCase();
  // ANY_VALUE's accumulator takes the first non-NULL row fed, rows fed in frame order: FIRST_VALUE IGNORE
  // NULLS, O(1) a frame (fed through the accumulator, a suffix frame collected O(n) rows a row).
  if (name === 'ANY_VALUE' && !call.distinct && args.length === 1) return takeOrNull(args[0]!, valuePicks(false, 1, nullMask(args[0]!), g.idx, fs, fe));
  if (!whole && !call.distinct && (name === 'SUM' || name === 'AVG')) {
    const r = decimalFrames(call, args[0]!, g, fs, fe);
    if (r) return r;
  }
  // Frames that end at the partition's end (… AND UNBOUNDED FOLLOWING): run
  // backwards they are cumulative frames, so an order-free aggregate costs
  // O(n) instead of restarting its state at every row (O(n²)).
  const suffix = !whole && !call.distinct && ORDER_FREE.has(name) ? mirroredSuffix(g, fs, fe) : null;
  if (suffix) {
    const r = NATIVE.has(name) ? nativeAggregate(name, call, args, suffix.g, suffix.fs, suffix.fe) : null;
    return r ?? cumulativeAggregate(call, args, suffix.g, suffix.fe, ctx);
  }
  if (!whole && !call.distinct && NATIVE.has(name)) {
    const r = nativeAggregate(name, call, args, g, fs, fe);
    if (r) return r;
  }
  if (!whole && !call.distinct && isCumulative(g, fs, fe)) return cumulativeAggregate(call, args, g, fe, ctx);
  const numGroups = whole ? g.numParts : n;
  const feed = new RowsFeed(call, args, numGroups, ctx);
  if (whole) {
    for (let p = 0; p < n; p++) feed.push(g.partIndex[p]!, g.idx[p]!);
  } else {
    for (let p = 0; p < n; p++) {
      for (let q = fs[p]!; q < fe[p]!; q++) feed.push(p, g.idx[q]!);
      if ((p & 1023) === 0) await checkpoint(ctx);
    }
  }
  const res = feed.finish();
  const map = new Int32Array(n);
  for (let p = 0; p < n; p++) map[g.idx[p]!] = whole ? g.partIndex[p]! : p;
  return takeVector(res, map);
}

/**
 * Aggregates whose value does not depend on the order rows are added in (a
 * FLOAT64 SUM/AVG only rounds differently, as any order the service may use).
 */
const ORDER_FREE = new Set(['COUNT', '$COUNT_STAR', 'COUNTIF', 'SUM', 'AVG', 'MIN', 'MAX', 'LOGICAL_AND', 'LOGICAL_OR', 'BIT_AND', 'BIT_OR', 'BIT_XOR']);

/**
 * When every frame ends at its partition's end and frame starts never move
 * backwards: the geometry with each partition's positions reversed, in which
 * those frames are cumulative ([partStart, partStart + partEnd - start)).
 */
function mirroredSuffix(g: Geometry, fs: Int32Array, fe: Int32Array): { g: Geometry; fs: Int32Array; fe: Int32Array } | null {
  for (let p = 0; p < g.n; p++) {
    if (fe[p] !== g.partEnd[p]) return null;
    if (p > g.partStart[p]! && fs[p]! < fs[p - 1]!) return null;
  }
  const idx = new Int32Array(g.n);
  const mfs = new Int32Array(g.n);
  const mfe = new Int32Array(g.n);
  for (let p = 0; p < g.n; p++) {
    const ps = g.partStart[p]!;
    const pe = g.partEnd[p]!;
    const m = ps + pe - 1 - p;
    idx[m] = g.idx[p]!;
    mfs[m] = ps;
    mfe[m] = ps + pe - Math.min(fs[p]!, pe);
  }
  return { g: { ...g, idx }, fs: mfs, fe: mfe };
}

/** Every frame starts at its partition's start and frame ends never move backwards. */
function isCumulative(g: Geometry, fs: Int32Array, fe: Int32Array): boolean {
  for (let p = 0; p < g.n; p++) {
    if (fs[p] !== g.partStart[p]) return false;
    if (p > g.partStart[p]! && fe[p]! < fe[p - 1]!) return false;
  }
  return true;
}

/**
 * Cumulative frames (the default ORDER BY frame) with any accumulator: one
 * single-group accumulator per partition, fed row by row as the frame end
 * advances and read with finish(1) once per distinct frame end. O(n) updates;
 * relies on finish() leaving the state usable (true of src/functions' accumulators).
 */
async function cumulativeAggregate(call: WindowCall, args: readonly Vector[], g: Geometry, fe: Int32Array, ctx: ExecContext): Promise<Vector> {
  const n = g.n;
  const idx = g.idx;
  const out: Value[] = new Array(n);
  const zeros = new Int32Array(BATCH_SIZE);
  const rows = new Int32Array(BATCH_SIZE);
  const a0 = args[0];
  const ignoreNulls = call.ignoreNulls === true && a0 !== undefined;
  let parts = 0;
  for (let ps = 0; ps < n; ps = g.partEnd[ps]!) {
    const pe = g.partEnd[ps]!;
    const acc = call.aggregate!.create(ctx.eval, { distinct: false, ignoreNulls: call.ignoreNulls, hasOrderBy: false });
    acc.resize(1);
    let curE = ps;
    let lastE = -1;
    let last: Value = null;
    for (let p = ps; p < pe; p++) {
      const e = fe[p]!;
      if (e !== lastE) {
        let c = 0;
        for (let q = curE; q < e; q++) {
          const r = idx[q]!;
          if (ignoreNulls && a0!.nulls !== null && a0!.nulls[r] === 1) continue;
          rows[c++] = r;
          if (c === BATCH_SIZE) {
            acc.update(args.map((v) => takeVector(v, rows, c)), zeros, c);
            c = 0;
          }
        }
        if (c > 0) acc.update(args.map((v) => takeVector(v, rows, c)), zeros, c);
        curE = Math.max(curE, e);
        last = getValue(acc.finish(1), 0);
        lastE = e;
      }
      out[idx[p]!] = last;
    }
    if ((++parts & 255) === 0) await checkpoint(ctx);
  }
  return vfv(call.column.type, out);
}

/**
 * COUNT/SUM/AVG/MIN/MAX/COUNTIF over Float64Array data with a running state.
 * Returns null (caller falls back to the accumulator) when the data or the
 * result type doesn't fit, or an INT64 sum leaves the exact double range.
 */
function nativeAggregate(name: string, call: WindowCall, args: readonly Vector[], g: Geometry, fs: Int32Array, fe: Int32Array): Vector | null {
  const n = g.n;
  const rt = call.column.type.kind;
  const a = args[0];
  if (name === 'COUNTIF') {
    if (!a || !(a.data instanceof Uint8Array)) return null;
  } else if (name !== 'COUNT' && a && !(a.data instanceof Float64Array) && !((name === 'MIN' || name === 'MAX') && a.data instanceof Int32Array)) return null;
  if (name === 'SUM') {
    if (!a || (rt !== 'INT64' && rt !== 'FLOAT64')) return null;
  }
  if (name === 'MIN' || name === 'MAX') {
    // Same physical layout in and out: FLOAT64/INT64/TIME/TIMESTAMP/DATETIME doubles, DATE int32.
    if (!a || (rt !== 'INT64' && rt !== 'FLOAT64' && rt !== 'DATE' && rt !== 'TIME' && rt !== 'TIMESTAMP' && rt !== 'DATETIME')) return null;
  }
  if (name === 'AVG' && (!a || rt !== 'FLOAT64')) return null;
  if ((name === 'COUNT' || name === 'COUNTIF') && rt !== 'INT64') return null;
  const data = a ? a.data : null;
  const nulls = a ? a.nulls : null;
  const out = new Float64Array(n);
  let outNulls: Uint8Array | null = null;
  const idx = g.idx;
  let curS = -1;
  let curE = -1;
  let cnt = 0;
  let sum = 0;
  // A finite frame whose double sum overflows: the accumulator decides (wider range, or "double overflow").
  let nonFinite = false;
  // Counts and INT64 sums slide: rows leaving the frame are subtracted (O(n)
  // for moving frames). Exact while every partial sum stays within 2^53
  // (`unsafe`: one did not; the accumulator's exact sum decides). FLOAT64
  // sums restart at every frame start: subtracting would round differently.
  const slides = name === 'COUNT' || name === 'COUNTIF' || ((name === 'SUM' || name === 'AVG') && call.args[0]?.type.kind === 'INT64');
  let unsafe = false;
  // MIN / MAX slide too, over a monotonic queue of frame positions (values
  // rising for MIN, falling for MAX; among equal values the earliest first,
  // as a scan of the frame keeps the first it meets) and a count of NaNs.
  const mm = name === 'MIN' || name === 'MAX';
  const queue = mm ? new Int32Array(n) : null;
  let qHead = 0;
  let qTail = 0;
  let nans = 0;
  for (let p = 0; p < n; p++) {
    const s = fs[p]!;
    const e = fe[p]!;
    if (mm && s > curS && s < curE && e >= curE) {
      for (let q = curS; q < s; q++) {
        const r = idx[q]!;
        if (nulls !== null && nulls[r] === 1) continue;
        cnt--;
        const x = (data as Float64Array)[r]!;
        if (x !== x) nans--;
      }
      while (qHead < qTail && queue![qHead]! < s) qHead++;
      curS = s;
    }
    if (slides && s > curS && s < curE && e >= curE) {
      for (let q = curS; q < s; q++) {
        const r = idx[q]!;
        if (data === null) cnt--;
        else if (nulls !== null && nulls[r] === 1) continue;
        else if (name === 'COUNT') cnt--;
        else if (name === 'COUNTIF') {
          if ((data as Uint8Array)[r] === 1) cnt--;
        } else {
          cnt--;
          sum -= (data as Float64Array)[r]!;
          if (sum > MAX_SAFE || sum < -MAX_SAFE) unsafe = true;
        }
      }
      curS = s;
    }
    if (s !== curS || e < curE) {
      curS = s;
      curE = s;
      cnt = 0;
      sum = 0;
      nonFinite = false;
      unsafe = false;
      qHead = qTail = 0;
      nans = 0;
    }
    for (let q = curE; q < e; q++) {
      const r = idx[q]!;
      if (data === null) {
        cnt++;
        continue;
      }
      if (nulls !== null && nulls[r] === 1) continue;
      if (name === 'COUNT') {
        cnt++; // COUNT(x) of any type: only NULLs matter
        continue;
      }
      if (name === 'COUNTIF') {
        if ((data as Uint8Array)[r] === 1) cnt++;
        continue;
      }
      const x = (data as Float64Array)[r]!;
      cnt++;
      sum += x;
      if (slides && (sum > MAX_SAFE || sum < -MAX_SAFE)) unsafe = true;
      if (x - x !== 0) nonFinite = true;
      if (!mm) continue;
      if (x !== x) nans++;
      else {
        const fd = data as Float64Array;
        if (name === 'MIN') while (qTail > qHead && fd[idx[queue![qTail - 1]!]!]! > x) qTail--;
        else while (qTail > qHead && fd[idx[queue![qTail - 1]!]!]! < x) qTail--;
        queue![qTail++] = q;
      }
    }
    curE = e;
    const r0 = idx[p]!;
    let val: number;
    let isNull = false;
    switch (name) {
      case 'COUNT':
      case 'COUNTIF':
        val = cnt;
        break;
      case 'SUM':
        if (unsafe || (rt === 'INT64' && (sum > MAX_SAFE || sum < -MAX_SAFE))) return null;
        if (sum - sum !== 0 && !nonFinite) return null;
        val = sum;
        isNull = cnt === 0;
        break;
      case 'AVG':
        if (unsafe || (sum - sum !== 0 && !nonFinite)) return null;
        val = sum / cnt;
        isNull = cnt === 0;
        break;
      default: // MIN, MAX: the queue's head (NULL when the frame holds no value)
        val = nans > 0 ? NaN : qHead < qTail ? (data as Float64Array)[idx[queue![qHead]!]!]! : NaN;
        isNull = cnt === 0;
    }
    if (isNull) {
      outNulls ??= new Uint8Array(n);
      outNulls[r0] = 1;
    } else out[r0] = val;
  }
  const data32 = a && a.data instanceof Int32Array ? Int32Array.from(out) : out;
  return { type: call.column.type, length: n, data: data32, nulls: outNulls };
}


/**
 * SUM / AVG of NUMERIC / BIGNUMERIC over moving frames with an exact running
 * sum (window/decimal-frame-sum.ts): rows added as a frame's end passes them,
 * subtracted as its start does, restarted where a frame moves backwards (a
 * new partition). O(n) for frames that slide forward. Null: not this case.
 */
function decimalFrames(call: WindowCall, a: Vector, g: Geometry, fs: Int32Array, fe: Int32Array): Vector | null {
  const rt = call.column.type.kind;
  if ((rt !== 'NUMERIC' && rt !== 'BIGNUMERIC') || a.type.kind !== rt) return null;
  const width = rt === 'NUMERIC' ? 4 : 8;
  const words = wordsOf(a, width);
  if (words === null) return null;
  const n = g.n;
  const idx = g.idx;
  const nulls = a.nulls;
  const acc = new DecimalFrameSum(width, call.name.toUpperCase() === 'AVG');
  const out = new Uint32Array(n * width);
  let outNulls: Uint8Array | null = null;
  let curS = 0;
  let curE = 0;
  for (let p = 0; p < n; p++) {
    const s = fs[p]!;
    const e = fe[p]!;
    if (s < curS || e < curE || s >= curE) {
      acc.reset();
      curS = curE = s;
    }
    for (; curS < s; curS++) acc.move(words, nulls, idx[curS]!, -1);
    for (; curE < e; curE++) acc.move(words, nulls, idx[curE]!, 1);
    const r = idx[p]!;
    if (!acc.write(out, r)) (outNulls ??= new Uint8Array(n))[r] = 1;
  }
  return decimalVector(call.column.type, n, outNulls, { words: out, width });
}
