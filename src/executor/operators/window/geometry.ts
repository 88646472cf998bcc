// The sorted-position geometry of one (PARTITION BY, ORDER BY) spec (the sort, partition and peer-group bounds)
// and each call's frame [start, end) over it (ROWS, RANGE).
import type { Expr, FrameBound, SortKey, WindowCall } from '../../../analyzer/resolved.js';
import { QueryError } from '../../../types/errors.js';
import { T } from '../../../types/types.js';
import { Decimal, type Value } from '../../../types/values.js';
import { getValue, takeVector, type Batch, type Vector } from '../../../types/vector.js';
import { checkpoint, type ExecContext } from '../../context.js';
import { evaluate } from '../../expr.js';
import { peersComparator, sortRowsWithRanks, type KeySpec, type RowComparator } from '../../sort-keys.js';
import { rowsBound } from './rows-bound.js';
import { rangeBoundAt, rangeKeys, rangeOffset, type RangeKeys, type RangeOffset } from './range-keys.js';

export type Layout = ReadonlyMap<number, number>;

/** Sorted-position geometry of one (partition, order) spec. */
export interface Geometry {
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

export function specKey(c: WindowCall): string {
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
export const needsPeers = (c: WindowCall): boolean => c.aggregate !== undefined && c.aggregate !== null ? true : !PEERLESS.has(c.name.toUpperCase());

export async function geometry(call: WindowCall, input: Batch, layout: Layout, ctx: ExecContext, needPeers = true): Promise<Geometry> {
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

export async function constantArg(e: Expr | undefined, input: Batch, layout: Layout, ctx: ExecContext): Promise<Value> {
  if (!e || input.length === 0) return null;
  const v = await evaluate(e, { length: 1, columns: input.columns.map((c) => takeVector(c, Int32Array.of(0), 1)) }, layout, ctx);
  return getValue(v, 0);
}

export const toNum = (v: Value): number => (typeof v === 'bigint' ? Number(v) : (v as number));

/** Frame [start, end) per sorted position. */
export async function frames(call: WindowCall, g: Geometry, input: Batch, layout: Layout, ctx: ExecContext): Promise<{ fs: Int32Array; fe: Int32Array }> {
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

export function int64Vector(d: Float64Array, nulls: Uint8Array | null = null): Vector {
  return { type: T.INT64, length: d.length, data: d, nulls };
}
