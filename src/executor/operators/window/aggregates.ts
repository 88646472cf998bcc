// Aggregate functions over window frames: native running states (COUNT/SUM/AVG/MIN/MAX/COUNTIF), cumulative and
// mirrored-suffix frames, exact NUMERIC/BIGNUMERIC frame sums, and the GroupsAccumulator for the rest.
import type { WindowCall } from '../../../analyzer/resolved.js';
import { type Value } from '../../../types/values.js';
import { BATCH_SIZE, MAX_SAFE, decimalVector, getValue, takeVector, vectorFromValues as vfv, type Batch, type Vector } from '../../../types/vector.js';
import { checkpoint, type ExecContext } from '../../context.js';
import { evaluate } from '../../expr.js';
import { takeOrNull } from '../../vectors.js';
import { RowsFeed } from './accumulated.js';
import { DecimalFrameSum, wordsOf } from './decimal-frame-sum.js';
import { type Layout, type Geometry, frames } from './geometry.js';
import { valuePicks, nullMask } from './calls.js';

const NATIVE = new Set(['COUNT', 'SUM', 'AVG', 'MIN', 'MAX', 'COUNTIF']);

export async function aggregateCall(call: WindowCall, g: Geometry, input: Batch, layout: Layout, ctx: ExecContext): Promise<Vector> {
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
