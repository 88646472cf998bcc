// Windows without PARTITION BY over more rows than the memory budget's share:
// when every call can be computed in one pass over the rows in ORDER BY order
// (ROW_NUMBER, RANK, DENSE_RANK; COUNT / SUM / AVG / MIN / MAX over the
// default frame or UNBOUNDED PRECEDING .. CURRENT ROW), the input goes
// through the sort operator (sorted runs in spill files, merged stably: the
// order the in-memory window's stable sort gives) and the calls run over the
// sorted stream with a running state, holding back only the last peer group
// of each batch (RANGE frames and RANK need a group's end). The running
// state adds the same values in the same order as the in-memory pass
// (aggregates.ts nativeAggregate), so results are equal to the last bit; where
// that pass would hand a frame to the accumulator instead (an INT64 sum past
// ±2^53, a FLOAT64 sum overflowing from finite values) the query is refused
// as the memory guard refused it before. Rows come out in ORDER BY order.
//
// Calls that look at other rows than the ones before them (`Streamed`) run
// over the same sorted stream with a bounded window of it held: LAG / LEAD
// (the offset's rows behind or ahead), NTILE / PERCENT_RANK / CUME_DIST (the
// row count, known once the sort has read its input, before its first row
// comes out), FIRST_VALUE / LAST_VALUE / NTH_VALUE and COUNT / SUM / AVG /
// MIN / MAX over frames with literal ROWS offsets, peer-group (RANGE
// CURRENT ROW) bounds or RANGE offsets over one numeric key (rows held by
// key: see sortedSteps), not UNBOUNDED FOLLOWING. Each step emits rows up to a
// peer-group start whose frames end within what is held, and keeps the rows
// later frames can still start at; an UNBOUNDED PRECEDING start keeps the
// first qualifying values (FIRST_VALUE / NTH_VALUE) or the last one
// (LAST_VALUE) of the rows let go. Frame aggregates run the in-memory
// nativeAggregate's state machine (restart when the frame start moves, add
// in order), so sums are the same to the last bit. Calls an accumulator
// computes (whole-partition aggregates, PERCENTILE_*, cumulative aggregates
// without a running state): window/accumulated.ts.
import type { Expr, FrameBound, Rel, ResolvedColumn, SortKey, SortRel, WindowCall, WindowRel } from '../../../analyzer/resolved.js';
import { QueryError } from '../../../types/errors.js';
import { T } from '../../../types/types.js';
import { Decimal, type Value } from '../../../types/values.js';
import { BATCH_SIZE, MAX_SAFE, decimalVector, getValue, sliceVector, vectorFromValues, type Batch, type Vector } from '../../../types/vector.js';
import { checkpoint, type ExecContext } from '../../context.js';
import { evaluate, layoutOf } from '../../expr.js';
import { peersComparator } from '../../sort-keys.js';
import { concatBatches, takeOrNull } from '../../vectors.js';
import { sortOp } from '../sort.js';
import { SpillFile } from '../../spill.js';
import { Cumulative, Feed, isCumulative, isWhole, isWholeValue, RowsFeed, Whole, WholePercentile, WholeValue } from './accumulated.js';
import { rowsBound } from './rows-bound.js';
import { DecimalFrameSum, wordsOf } from './decimal-frame-sum.js';
import { keyScale, NO_REACH, rangeBoundAt, rangeKeys, rangeOffset, rangeReach, reachOf, type RangeKeys, type RangeOffset } from './range-keys.js';
import { exprKey } from './geometry.js';

const NUMBERING = new Set(['ROW_NUMBER', 'RANK', 'DENSE_RANK']);
const RUNNING = new Set(['COUNT', '$COUNT_STAR', 'SUM', 'AVG', 'MIN', 'MAX']);

/** The column id of the input ordinal a sort with ties reversed adds (no plan column is negative). */
const ORDINAL_ID = -2;

/** Counts for tests: windows that went through the sort this way. */
export const sortedWindowCounters = { windows: 0 };

/**
 * The ORDER BY keys when every call of `rel` can run over its rows in that
 * order in one pass (see above; calls over all rows, `Whole`, have their value
 * before the first row comes out, whatever their ORDER BY), else null; empty
 * when every call is over all rows (no sort: the rows are read twice).
 */
export function sortedWindowKeys(rel: WindowRel): readonly SortKey[] | null {
  let keys: readonly SortKey[] | null = null;
  let key = '';
  for (const c of rel.calls) {
    if (c.partitionBy.length > 0) return null;
    if (isWhole(c) || isWholeValue(c)) continue;
    if (c.orderBy.length === 0) return null;
    if (keys === null) {
      keys = c.orderBy;
      key = orderKey(c);
    }
    if (orderKey(c) !== key) return null;
    if (!isRunning(c) && streamedNeed(c) === null && !isCumulative(c)) return null;
  }
  return keys ?? [];
}

/** Calls the running state computes from the rows up to each row's peer group's end. */
function isRunning(c: WindowCall): boolean {
  if (NUMBERING.has(c.name.toUpperCase()) && !c.aggregate) return true;
  if (!c.aggregate || !RUNNING.has(c.name.toUpperCase()) || c.distinct || c.ignoreNulls === true || c.args.length > 1) return false;
  const f = c.frame;
  if (f && (f.start.type !== 'unbounded_preceding' || f.end.type !== 'current_row')) return false;
  return runsNatively(c);
}

/** A literal that is a non-negative integer (a frame offset, LAG's offset), else null. */
function literalCount(e: Expr | undefined, dflt: number | null): number | null {
  if (e === undefined) return dflt;
  if (e.kind !== 'literal' || e.value === null || (typeof e.value !== 'number' && typeof e.value !== 'bigint')) return null;
  const x = Number(e.value);
  return Number.isInteger(x) && x >= 0 ? x : null;
}

/**
 * How far a call's frames reach around its row: `behind` / `ahead` rows
 * (ROWS offsets, LAG / LEAD). RANGE offsets reach in ORDER BY key units
 * (Streamed.keyNeed, once the offsets are known).
 */
interface Need {
  readonly behind: number;
  readonly ahead: number;
}

const NONE: Need = { behind: 0, ahead: 0 };

/** What a bound reaches; null when not literal or UNBOUNDED FOLLOWING. */
function boundReach(b: FrameBound, unit: 'ROWS' | 'RANGE'): Need | null {
  switch (b.type) {
    case 'unbounded_preceding':
    case 'current_row':
      return NONE;
    case 'unbounded_following':
      return null;
    case 'preceding':
    case 'following': {
      const back = b.type === 'preceding';
      // RANGE offsets (constants: the analyzer allows literals and parameters) are in key units, known at the first row (Streamed.prepare).
      if (unit === 'RANGE') return NONE;
      const k = literalCount(b.offset, null);
      if (k === null) return null;
      return { ...NONE, behind: back ? k : 0, ahead: back ? 0 : k };
    }
  }
}

/** RANGE offsets are over one numeric ORDER BY key (window/range-keys.ts, as the in-memory window compares them). */
function rangeKeyStreams(c: WindowCall): boolean {
  const t = c.orderBy.length === 1 ? c.orderBy[0]!.expr.type.kind : '';
  return t === 'INT64' || t === 'FLOAT64' || t === 'NUMERIC' || t === 'BIGNUMERIC';
}

/** Rows a Streamed call needs held behind and ahead of the rows it computes, or null when it is not one. */
function streamedNeed(c: WindowCall): Need | null {
  const name = c.name.toUpperCase();
  if (!c.aggregate && (name === 'PERCENT_RANK' || name === 'CUME_DIST')) return NONE;
  if (!c.aggregate && name === 'NTILE') return (literalCount(c.args[0], null) ?? 0) > 0 ? NONE : null;
  if (!c.aggregate && (name === 'LAG' || name === 'LEAD')) {
    const off = literalCount(c.args[1], 1);
    if (off === null) return null;
    return name === 'LAG' ? { ...NONE, behind: off } : { ...NONE, ahead: off };
  }
  const valued = !c.aggregate && (name === 'FIRST_VALUE' || name === 'LAST_VALUE' || name === 'NTH_VALUE');
  if (valued && name === 'NTH_VALUE' && !((literalCount(c.args[1], null) ?? 0) > 0)) return null;
  const framed =
    valued ||
    nativelyFramed(c) || accumulates(c);
  if (!framed) return null;
  const f = c.frame;
  if (!f) return NONE;
  const a = boundReach(f.start, f.unit);
  const b = boundReach(f.end, f.unit);
  if (a === null || b === null) return null;
  const need = {
    behind: Math.max(a.behind, b.behind),
    ahead: Math.max(a.ahead, b.ahead),
  };
  if (f.unit === 'RANGE' && hasOffset(f.start, f.end) && !rangeKeyStreams(c)) return null;
  return need;
}

/** An aggregate Streamed computes with nativeAggregate's running state over each frame. */
function nativelyFramed(c: WindowCall): boolean {
  const name = c.name.toUpperCase();
  return c.aggregate !== undefined && RUNNING.has(name) && !c.distinct && c.ignoreNulls !== true && c.args.length <= 1 && runsNatively(c);
}

/**
 * An aggregate Streamed computes with its accumulator over each frame
 * (STRING_AGG, ARRAY_AGG, COUNT(DISTINCT), STRING MIN, NUMERIC SUM, ... over
 * sliding frames): one group per row, fed the frame's rows in order as
 * aggregates.ts aggregateCall does; from UNBOUNDED PRECEDING, one accumulator fed
 * as the frame end advances, as cumulativeAggregate. Not a FLOAT64 SUM / AVG
 * the in-memory pass adds natively (IGNORE NULLS, SAFE): the accumulator
 * might round otherwise.
 */
function accumulates(c: WindowCall): boolean {
  const f = c.frame;
  if (!c.aggregate || !f || f.end.type === 'unbounded_following' || isCumulative(c)) return false;
  const name = c.name.toUpperCase();
  if (!c.distinct && (name === 'SUM' || name === 'AVG') && c.args[0]?.type.kind === 'FLOAT64') return false;
  return true;
}

const hasOffset = (...bs: FrameBound[]): boolean => bs.some((b) => b.type === 'preceding' || b.type === 'following');

/** The argument and result types the running state handles (as nativeAggregate does); checked before any row is read. */
function runsNatively(c: WindowCall): boolean {
  const name = c.name.toUpperCase();
  if (name === 'COUNT' || name === '$COUNT_STAR') return c.column.type.kind === 'INT64';
  const at = c.args[0]?.type.kind;
  const rt = c.column.type.kind;
  if (name === 'SUM') return (at === 'INT64' || at === 'FLOAT64') && rt === at;
  if (name === 'AVG') return (at === 'INT64' || at === 'FLOAT64') && rt === 'FLOAT64';
  return at !== undefined && at === rt && ['INT64', 'FLOAT64', 'DATE', 'TIME', 'TIMESTAMP', 'DATETIME'].includes(at);
}

/** The call's ORDER BY (expressions by geometry.ts exprKey: what the in-memory window shares a sort over). */
export function orderKey(c: WindowCall): string {
  return c.orderBy.map((k) => `${exprKey(k.expr)}:${k.descending}:${k.nullsFirst}:${k.collation ?? ''}`).join(',');
}

/**
 * The order of rows equal on the ORDER BY keys: as they come (the sort is
 * stable), the reverse (suffix.ts: the exact reverse of the in-memory order),
 * or by an input ordinal column of the input (ascending: input order), for
 * a pass whose rows come in another pass's order.
 */
export type Ties = 'arrival' | 'reversed' | { readonly ordinal: number; readonly descending: boolean };

type CallState = Running | Streamed | Cumulative | Whole | WholePercentile | WholeValue;

/** The window over `source` (rows of rel.input), sorted by `keys` through the sort operator (which spills); no keys: in input order. */
export async function* sortedWindow(
  rel: WindowRel,
  keys: readonly SortKey[],
  source: AsyncIterable<Batch>,
  ctx: ExecContext,
  ties: Ties = 'arrival',
): AsyncGenerator<Batch> {
  sortedWindowCounters.windows++;
  const layout = layoutOf(rel.input.columns);
  const states: CallState[] = rel.calls.map((c) => {
    if (isWhole(c)) return c.aggregate ? new Whole(c, ctx) : new WholePercentile(c);
    if (isWholeValue(c)) return new WholeValue(c);
    if (isRunning(c)) return new Running(c);
    const need = streamedNeed(c);
    return need !== null ? new Streamed(c, need) : new Cumulative(c, ctx);
  });
  const wholes = states.filter((st): st is Whole | WholePercentile | WholeValue => st instanceof Whole || st instanceof WholePercentile || st instanceof WholeValue);
  let reach: Need = NONE;
  let ranged = false;
  for (const st of states) {
    if (st instanceof Streamed) {
      const n = st.need;
      reach = {
        behind: Math.max(reach.behind, n.behind),
        ahead: Math.max(reach.ahead, n.ahead),
      };
      if (st.ranged) ranged = true;
    }
  }
  // The sort reads all of its input before its first row comes out: by then `total` is the row count
  // and the calls over all rows have seen every row (in input order).
  let total = 0;
  const counted = async function* (): AsyncGenerator<Batch> {
    for await (const b of source) {
      total += b.length;
      for (const w of wholes) await w.add(b, layout, ctx);
      yield b;
    }
  };
  let finished = false;
  const finishWholes = async (): Promise<void> => {
    finished = true;
    for (const w of wholes) await w.finish(ctx);
  };
  try {
    if (keys.length === 0) {
      // Every call is over all rows: the rows go to a file as they pass, then come back with the values, in input order.
      const file = new SpillFile();
      try {
        for await (const b of counted()) {
          file.write(b);
          await checkpoint(ctx);
        }
        await finishWholes();
        for (const b of file.read()) {
          yield { length: b.length, columns: [...b.columns, ...wholes.map((w) => w.vector(b.length))] };
          await checkpoint(ctx);
        }
      } finally {
        file.close();
      }
      return;
    }
    yield* sortedSteps(rel, keys, states, reach, ranged, counted(), () => total, async () => {
      if (!finished) await finishWholes();
    }, ctx, ties);
  } finally {
    for (const st of wholes) if (st instanceof WholePercentile) st.close();
  }
}

async function* sortedSteps(
  rel: WindowRel,
  keys: readonly SortKey[],
  states: readonly CallState[],
  reach: Need,
  /** Some call has RANGE offsets: the held rows' keys as doubles (ascending) are needed. */
  ranged: boolean,
  source: AsyncIterable<Batch>,
  totalRows: () => number,
  started: () => Promise<void>,
  ctx: ExecContext,
  ties: Ties,
): AsyncGenerator<Batch> {
  const { behind, ahead } = reach;
  // RANGE offsets: how far behind and ahead of a row, in key units, some call's frame reaches (null: not at all).
  let keyBehind: RangeOffset = NO_REACH;
  let keyAhead: RangeOffset | null = null;
  let sortRel: SortRel = { kind: 'sort', input: rel.input, keys, columns: rel.input.columns };
  let sortSource = source;
  if (typeof ties === 'object') {
    const key: SortKey = { expr: { kind: 'column', type: T.INT64, columnId: ties.ordinal } as Expr, descending: ties.descending, nullsFirst: false };
    sortRel = { ...sortRel, keys: [...keys, key] };
  } else if (ties === 'reversed') {
    // Each row's input ordinal as one more column, the sort's last key (descending); dropped as rows come out.
    const ord: ResolvedColumn = { id: ORDINAL_ID, name: '$ordinal', type: T.INT64 };
    const columns = [...rel.input.columns, ord];
    const key: SortKey = { expr: { kind: 'column', type: T.INT64, columnId: ORDINAL_ID } as Expr, descending: true, nullsFirst: false };
    sortRel = { kind: 'sort', input: { ...rel.input, columns } as Rel, keys: [...keys, key], columns };
    sortSource = (async function* (): AsyncGenerator<Batch> {
      let at = 0;
      for await (const b of source) {
        const o = new Float64Array(b.length);
        for (let i = 0; i < b.length; i++) o[i] = at++;
        yield { length: b.length, columns: [...b.columns, { type: T.INT64, length: b.length, data: o, nulls: null }] };
      }
    })();
  }
  const width = rel.input.columns.length;
  const layout = layoutOf(rel.input.columns);
  const types = rel.input.columns.map((c) => c.type);
  let total = 0;
  /** Sorted rows held: global positions [lo, lo + held.length); `done`: the first not yet emitted. */
  let held: Batch | null = null;
  let lo = 0;
  let done = 0;
  const step = async (final: boolean): Promise<Batch | null> => {
    const chunk = held!;
    const m = chunk.length;
    const kv: Vector[] = [];
    for (const k of keys) kv.push(await evaluate(k.expr, chunk, layout, ctx));
    const peerEnd = peerEnds(kv, keys, m);
    const rk = ranged ? heldKeys(kv[0]!, keys[0]!, m) : null;
    // Emit up to a peer-group start (the last group may have peers still to come) whose rows' frames end within what is held.
    let cut = m;
    if (!final) {
      cut = lastGroupStart(peerEnd, m);
      const reach = m - ahead;
      if (reach < cut) cut = reach <= 0 ? 0 : groupStartAt(peerEnd, reach);
      // RANGE: a row's frame ends before the first key past its own + the offset: that row must be held (or the keys end).
      if (rk !== null && keyAhead !== null && rk.skip[m - 1] === 0) {
        let i = cut;
        while (i > 0 && rk.skip[i - 1] === 0 && rangeReach(rk, keyAhead, i - 1, rk.a, rk.z, true) >= rk.z) i--;
        if (i < cut) cut = i === 0 ? 0 : groupStartAt(peerEnd, i);
      }
    }
    const from = done - lo;
    if (cut <= from) return null;
    const out = sliceBatch(chunk, from, cut);
    const pe = from === 0 && cut === m ? peerEnd : peerEnd.slice(from, cut).map((e) => e - from);
    const results: Vector[] = [];
    for (const st of states) {
      if (st instanceof Running) {
        const arg = st.call.args[0] ? await evaluate(st.call.args[0], out, layout, ctx) : null;
        results.push(st.run(cut - from, pe, arg));
      } else if (st instanceof Streamed) results.push(await st.run({ chunk, lo, from, cut, total, peerEnd, rk }, layout, ctx));
      else if (st instanceof Cumulative) results.push(await st.run(out, pe, layout, ctx));
      else results.push(st.vector(cut - from));
    }
    done = lo + cut;
    // Keep what later rows' frames can still reach back to; the calls note what they need of the rest first.
    let keep = Math.max(0, cut - behind);
    if (rk !== null && cut < m && rk.skip[cut] === 0) {
      // RANGE: later rows' frames reach back to keys from (the last emitted row's key) - offset; not to NULL / NaN keys.
      const ref = cut > 0 && rk.skip[cut - 1] === 0 ? cut - 1 : cut;
      keep = Math.min(keep, cut, rangeReach(rk, keyBehind, ref, rk.a, ref + 1, false));
    }
    // A frame from UNBOUNDED PRECEDING adds rows to its state as its end advances: the rows not added yet stay
    // (a NULL / NaN key's frame at the end reaches every row after the last frame end).
    for (const st of states) if (st instanceof Streamed) keep = Math.min(keep, Math.max(0, st.pendingFrom() - lo));
    for (const st of states) if (st instanceof Streamed) st.letGo(keep);
    held = keep === 0 ? chunk : sliceBatch(chunk, keep, m);
    lo += keep;
    return { length: out.length, columns: [...out.columns, ...results] };
  };
  for await (const sb of sortOp(sortRel, ctx, sortSource)) {
    if (sb.length === 0) continue;
    const b = sb.columns.length === width ? sb : { length: sb.length, columns: sb.columns.slice(0, width) };
    if (held === null) {
      total = totalRows();
      await started();
      for (const st of states) {
        if (st instanceof Streamed && st.ranged) {
          const need = await st.keyNeed(b, layout, ctx);
          keyBehind = reachOf(keyBehind, need.behind)!;
          keyAhead = reachOf(keyAhead, need.ahead);
        }
      }
    }
    held = held === null || held.length === 0 ? b : concatBatches(types, [held, b]);
    const out = await step(false);
    if (out !== null) yield out;
    await checkpoint(ctx);
  }
  if (held !== null && held.length > 0) {
    const out = await step(true);
    if (out !== null) yield out;
  }
}

/** The start of the peer group holding row i (peerEnd: each row's group end). */
function groupStartAt(peerEnd: Int32Array, i: number): number {
  const e = peerEnd[i]!;
  while (i > 0 && peerEnd[i - 1] === e) i--;
  return i;
}

function sliceBatch(b: Batch, s: number, e: number): Batch {
  return s === 0 && e === b.length ? b : { length: e - s, columns: b.columns.map((v) => sliceVector(v, s, e)) };
}

/** For each row, the end of its peer group (rows equal on every key) within the chunk. */
function peerEnds(kv: readonly Vector[], keys: readonly SortKey[], n: number): Int32Array {
  const same = peersComparator(kv, keys);
  const end = new Int32Array(n);
  let e = n;
  for (let i = n - 1; i >= 0; i--) {
    end[i] = e;
    if (i > 0 && same(i - 1, i) !== 0) e = i;
  }
  return end;
}

function lastGroupStart(peerEnd: Int32Array, n: number): number {
  let s = n;
  while (s > 0 && peerEnd[s - 1] === n) s--;
  return s;
}


/** One call's state across the sorted rows. */
class Running {
  private rows = 0;
  private dense = 0;
  private readonly acc: FrameAccumulator;
  private readonly name: string;
  /** ROWS frame: a row's frame ends at the row; RANGE (and the default): at its peer group's end. */
  private readonly rowsFrame: boolean;

  constructor(readonly call: WindowCall) {
    // COUNT(*) is COUNT without an argument.
    this.name = call.name.toUpperCase() === '$COUNT_STAR' ? 'COUNT' : call.name.toUpperCase();
    this.rowsFrame = call.frame?.unit === 'ROWS';
    this.acc = new FrameAccumulator(call);
  }

  /** Values for the next n sorted rows (peerEnd: each row's peer group end, within these rows). */
  run(n: number, peerEnd: Int32Array, arg: Vector | null): Vector {
    const out = new Float64Array(n);
    const name = this.name;
    if (!this.call.aggregate) {
      let gs = 0;
      for (let i = 0; i < n; i++) {
        if (i === 0 || peerEnd[i - 1] !== peerEnd[i]) {
          gs = i;
          this.dense++;
        }
        out[i] = name === 'ROW_NUMBER' ? this.rows + i + 1 : name === 'RANK' ? this.rows + gs + 1 : this.dense;
      }
      this.rows += n;
      return { type: T.INT64, length: n, data: out, nulls: null };
    }
    const rt = this.call.column.type.kind;
    const data = arg ? arg.data : null;
    if (name !== 'COUNT' && !(data instanceof Float64Array) && !((name === 'MIN' || name === 'MAX') && data instanceof Int32Array)) refuse();
    if ((name === 'SUM' && rt !== 'INT64' && rt !== 'FLOAT64') || (name === 'AVG' && rt !== 'FLOAT64')) refuse();
    if ((name === 'MIN' || name === 'MAX') && !['INT64', 'FLOAT64', 'DATE', 'TIME', 'TIMESTAMP', 'DATETIME'].includes(rt)) refuse();
    const nulls = arg ? arg.nulls : null;
    let outNulls: Uint8Array | null = null;
    let done = 0;
    for (let i = 0; i < n; i++) {
      const e = this.rowsFrame ? i + 1 : peerEnd[i]!;
      for (; done < e; done++) this.acc.add(name, data, nulls, done);
      const val = this.acc.value(name, rt);
      if (val === null) (outNulls ??= new Uint8Array(n))[i] = 1;
      else out[i] = val;
    }
    this.rows += n;
    const d = data instanceof Int32Array && name !== 'COUNT' ? Int32Array.from(out) : out;
    return { type: this.call.column.type, length: n, data: d, nulls: outNulls };
  }

}

/** COUNT / SUM / AVG / MIN / MAX over the rows added since the last reset, as nativeAggregate keeps them (same order of additions). */
class FrameAccumulator {
  /** An INT64 argument: sums of integers, exact while every partial sum stays within 2^53. */
  private readonly ints: boolean;
  /** A partial sum passed 2^53 since the last reset (the in-memory pass hands such frames to the accumulator). */
  private unsafe = false;
  /** Rows can be removed again (COUNT, INT64 SUM / AVG; MIN / MAX over frames whose start moves): nativeAggregate slides these frames. */
  readonly slides: boolean;
  /**
   * MIN / MAX over frames whose start moves: a monotonic queue of the frame's
   * rows (global positions, values beside them: rows behind may be let go),
   * values rising for MIN, falling for MAX, among equal values the earliest
   * first, as nativeAggregate keeps it. Null otherwise (a frame from
   * UNBOUNDED PRECEDING keeps its extremes: a queue would grow with it).
   */
  private readonly queue: { pos: number[]; val: number[]; head: number } | null;
  private readonly isMin: boolean;
  constructor(call: WindowCall) {
    const name = call.name.toUpperCase();
    this.ints = call.args[0]?.type.kind === 'INT64';
    this.isMin = name === 'MIN';
    const mm = name === 'MIN' || name === 'MAX';
    const moves = call.frame !== undefined && call.frame.start.type !== 'unbounded_preceding';
    this.queue = mm && moves ? { pos: [], val: [], head: 0 } : null;
    this.slides = name === 'COUNT' || name === '$COUNT_STAR' || ((name === 'SUM' || name === 'AVG') && this.ints) || this.queue !== null;
  }

  private cnt = 0;
  private sum = 0;
  private mn = Infinity;
  private mx = -Infinity;
  private nans = 0;
  private nonFinite = false;

  reset(): void {
    this.cnt = 0;
    this.sum = 0;
    this.mn = Infinity;
    this.mx = -Infinity;
    this.nans = 0;
    this.nonFinite = false;
    this.unsafe = false;
    if (this.queue !== null) {
      this.queue.pos.length = 0;
      this.queue.val.length = 0;
      this.queue.head = 0;
    }
  }

  /** Takes row r back out of the frame (`slides` calls only); then `dropBefore` the new frame start. */
  remove(name: string, data: Vector['data'] | null, nulls: Uint8Array | null, r: number): void {
    if (data !== null && nulls !== null && nulls[r] === 1) return;
    this.cnt--;
    if (data === null || name === 'COUNT') return;
    const x = (data as Float64Array | Int32Array)[r]!;
    if (this.queue !== null) {
      if (x !== x) this.nans--;
      return;
    }
    this.sum -= x;
    if (this.sum > MAX_SAFE || this.sum < -MAX_SAFE) this.unsafe = true;
  }

  /** The frame now starts at global position `s`: the queue lets go of the rows before it. */
  dropBefore(s: number): void {
    const q = this.queue;
    if (q === null) return;
    while (q.head < q.pos.length && q.pos[q.head]! < s) q.head++;
    // Compact now and then: the arrays hold only the frame's rows.
    if (q.head > 4096 && q.head * 2 > q.pos.length) {
      q.pos.splice(0, q.head);
      q.val.splice(0, q.head);
      q.head = 0;
    }
  }

  /** Row r of the argument (data null: COUNT(*)), at global position `at` (for the MIN / MAX queue). */
  add(name: string, data: Vector['data'] | null, nulls: Uint8Array | null, r: number, at = r): void {
    if (data === null) {
      this.cnt++;
      return;
    }
    if (nulls !== null && nulls[r] === 1) return;
    if (name === 'COUNT') {
      this.cnt++;
      return;
    }
    const x = (data as Float64Array | Int32Array)[r]!;
    this.cnt++;
    this.sum += x;
    if (this.ints && (this.sum > MAX_SAFE || this.sum < -MAX_SAFE)) this.unsafe = true;
    if (x - x !== 0) this.nonFinite = true;
    if (x !== x) this.nans++;
    else if (this.queue !== null) {
      const q = this.queue;
      if (this.isMin) while (q.pos.length > q.head && q.val[q.val.length - 1]! > x) q.pos.pop(), q.val.pop();
      else while (q.pos.length > q.head && q.val[q.val.length - 1]! < x) q.pos.pop(), q.val.pop();
      q.pos.push(at);
      q.val.push(x);
    } else {
      if (x < this.mn) this.mn = x;
      if (x > this.mx) this.mx = x;
    }
  }

  /** The call's value over the rows added (null: none counted), refused where the in-memory pass refuses. */
  value(name: string, rt: string): number | null {
    switch (name) {
      case 'COUNT':
        return this.cnt;
      case 'SUM':
        if (this.unsafe || (rt === 'INT64' && (this.sum > MAX_SAFE || this.sum < -MAX_SAFE))) refuse();
        if (this.sum - this.sum !== 0 && !this.nonFinite) refuse();
        return this.cnt === 0 ? null : this.sum;
      case 'AVG':
        if (this.unsafe || (this.sum - this.sum !== 0 && !this.nonFinite)) refuse();
        return this.cnt === 0 ? null : this.sum / this.cnt;
      case 'MIN':
      case 'MAX': {
        if (this.cnt === 0) return null;
        if (this.nans > 0) return NaN;
        const q = this.queue;
        if (q === null) return name === 'MIN' ? this.mn : this.mx;
        return q.head < q.pos.length ? q.val[q.head]! : NaN;
      }
      default:
        return this.cnt === 0 ? null : this.nans > 0 ? NaN : this.mx;
    }
  }
}

/** What the in-memory pass would hand to the accumulator: refused as the memory guard refused the whole window before. */
function refuse(): never {
  throw new QueryError('Resources exceeded during query execution: The query could not be executed in the allotted memory.', 'resourcesExceeded');
}


/** One step of the sorted stream: `chunk` holds global rows [lo, lo + chunk.length); rows [from, cut) of it are computed now. */
interface Step {
  readonly chunk: Batch;
  readonly lo: number;
  readonly from: number;
  readonly cut: number;
  /** Rows in the whole sorted stream. */
  readonly total: number;
  /** Each held row's peer group end (within the chunk). */
  readonly peerEnd: Int32Array;
  /** The held rows' keys for RANGE offsets (when some call has them). */
  readonly rk: HeldKeys | null;
}

/** The held rows' RANGE keys, ascending (window/range-keys.ts); the ordered (not NULL / NaN) keys' rows: [a, z). */
type HeldKeys = RangeKeys & { readonly a: number; readonly z: number };

function heldKeys(v: Vector, key: SortKey, n: number): HeldKeys {
  const ks = rangeKeys(v, key.expr.type.kind, key.descending, n, (i) => i);
  let a = 0;
  let z = n;
  while (a < z && ks.skip[a] === 1) a++;
  while (z > a && ks.skip[z - 1] === 1) z--;
  return { ...ks, a, z };
}

// An invariant, not a user error: each call holds the rows its frames reach
// (streamedNeed sizes them from the frame), so no frame should reach rows let
// go of. Should it, the query is refused (400, as the memory guard refuses
// what does not fit) rather than answered wrong or failed as an internal error.
const lost = (): never => {
  throw new QueryError('Resources exceeded during query execution: a window frame reached rows the streamed window no longer holds.', 'resourcesExceeded');
};

/** A call that reads rows around its own in the sorted stream (see the head of this file), `need` of them held. */
class Streamed {
  private readonly name: string;
  private readonly unboundedStart: boolean;
  private readonly offStart: number;
  private readonly offEnd: number;
  /** RANGE offsets, known at the first rows (keyNeed). */
  private rangeStart: RangeOffset | null = null;
  private rangeEnd: RangeOffset | null = null;
  private readonly nth: number;
  /** The argument over the last step's chunk (for letGo). */
  private v: Vector | null = null;
  /** FIRST_VALUE / NTH_VALUE from UNBOUNDED PRECEDING: the first qualifying values of the rows let go (at most nth). */
  private prefix: Value[] = [];
  /** LAST_VALUE from UNBOUNDED PRECEDING: the last qualifying value of the rows let go (undefined: none). */
  private lastLetGo: Value | undefined = undefined;
  // A frame aggregate's running state, as nativeAggregate keeps it.
  private curS = -1;
  private curE = -1;
  private readonly acc: FrameAccumulator;
  /** NUMERIC / BIGNUMERIC SUM / AVG over sliding frames: an exact running sum instead of the accumulator per frame. */
  private readonly decimal: DecimalFrameSum | null = null;

  /** RANGE frame with an offset. */
  readonly ranged: boolean;
  /** An aggregate its accumulator computes (`accumulates`); `cumulative`: its frames start at the first row. */
  private readonly accumulated: boolean;
  private cumulative: Feed | null = null;
  /** Rows fed to `cumulative` so far (global positions [0, fed)). */
  private fed = 0;

  constructor(
    readonly call: WindowCall,
    readonly need: Need,
  ) {
    this.name = call.name.toUpperCase() === '$COUNT_STAR' ? 'COUNT' : call.name.toUpperCase();
    const f = call.frame;
    this.unboundedStart = !f || f.start.type === 'unbounded_preceding';
    this.ranged = f !== undefined && f.unit === 'RANGE' && hasOffset(f.start, f.end);
    const off = (b: FrameBound | undefined): number =>
      b && (b.type === 'preceding' || b.type === 'following') && f!.unit === 'ROWS' ? literalCount(b.offset, 0)! : 0;
    this.offStart = off(f?.start);
    this.offEnd = off(f?.end);
    this.nth = this.name === 'NTH_VALUE' ? literalCount(call.args[1], 1)! : 1;
    this.accumulated = !nativelyFramed(call) && accumulates(call);
    this.acc = new FrameAccumulator(call);
    const at = call.args[0]?.type.kind;
    if (this.accumulated && !this.unboundedStart && !call.distinct && (this.name === 'SUM' || this.name === 'AVG') && (at === 'NUMERIC' || at === 'BIGNUMERIC') && call.column.type.kind === at) {
      this.decimal = new DecimalFrameSum(at === 'NUMERIC' ? 4 : 8, this.name === 'AVG');
    }
  }

  /** `decimal`'s frames: rows added and subtracted as the frames move, restarted where the rows to subtract are no longer held. */
  private decimalFrames(v: Vector, n: number, lo: number, frameOf: (i: number) => [number, number]): Vector {
    const acc = this.decimal!;
    const width = v.type.kind === 'NUMERIC' ? 4 : 8;
    const words = wordsOf(v, width);
    if (words === null) refuse();
    const out = new Uint32Array(n * width);
    let outNulls: Uint8Array | null = null;
    for (let i = 0; i < n; i++) {
      const [s, e] = frameOf(i);
      if (s < this.curS || e < this.curE || s >= this.curE || this.curS < lo) {
        acc.reset();
        this.curS = this.curE = s;
      }
      for (; this.curS < s; this.curS++) acc.move(words, v.nulls, this.curS - lo, -1);
      for (; this.curE < e; this.curE++) acc.move(words, v.nulls, this.curE - lo, 1);
      if (!acc.write(out, i)) (outNulls ??= new Uint8Array(n))[i] = 1;
    }
    return decimalVector(this.call.column.type, n, outNulls, { words: out, width });
  }

  /** The accumulator over each row's frame (see `accumulates`). */
  private accumulate(args: Vector[], n: number, lo: number, frameOf: (i: number) => [number, number], ctx: ExecContext): Vector {
    if (this.unboundedStart) {
      const feed = (this.cumulative ??= new Feed(this.call, ctx));
      const out: Value[] = new Array(n);
      let lastE = -1;
      let last: Value = null;
      for (let i = 0; i < n; i++) {
        const e = frameOf(i)[1];
        if (e !== lastE) {
          if (e > this.fed) {
            if (this.fed < lo) lost();
            for (let s = this.fed; s < e; s += BATCH_SIZE) feed.add(args, s - lo, Math.min(e, s + BATCH_SIZE) - lo);
            this.fed = e;
          }
          last = feed.value();
          lastE = e;
        }
        out[i] = last;
      }
      return vectorFromValues(this.call.column.type, out);
    }
    const feed = new RowsFeed(this.call, args, n, ctx);
    for (let i = 0; i < n; i++) {
      const [s, e] = frameOf(i);
      if (s < lo && e > s) lost();
      for (let q = s; q < e; q++) feed.push(i, q - lo);
    }
    return feed.finish();
  }

  async run(st: Step, layout: ReadonlyMap<number, number>, ctx: ExecContext): Promise<Vector> {
    const { chunk, lo, from, cut, total, peerEnd } = st;
    const n = cut - from;
    const name = this.name;
    const call = this.call;
    // Peer group starts of the rows computed (`from` starts a group).
    const peerStart = new Int32Array(n);
    let gs = from;
    for (let i = 0; i < n; i++) {
      const r = from + i;
      if (r > from && peerEnd[r - 1] !== peerEnd[r]) gs = r;
      peerStart[i] = gs;
    }
    if (!call.aggregate && (name === 'NTILE' || name === 'PERCENT_RANK' || name === 'CUME_DIST')) {
      const d = new Float64Array(n);
      const k = literalCount(call.args[0], 0)!;
      const q = Math.floor(total / Math.max(k, 1));
      const rem = total % Math.max(k, 1);
      const big = rem * (q + 1);
      for (let i = 0; i < n; i++) {
        const p = lo + from + i;
        if (name === 'NTILE') d[i] = p < big ? Math.floor(p / (q + 1)) + 1 : rem + Math.floor((p - big) / q) + 1;
        else if (name === 'CUME_DIST') d[i] = (lo + peerEnd[from + i]!) / total;
        else d[i] = total === 1 ? 0 : (lo + peerStart[i]!) / (total - 1);
      }
      return { type: name === 'NTILE' ? T.INT64 : T.FLOAT64, length: n, data: d, nulls: null };
    }
    const v = call.args[0] ? await evaluate(call.args[0], chunk, layout, ctx) : null;
    this.v = v;
    const m = chunk.length;
    if (!call.aggregate && (name === 'LAG' || name === 'LEAD')) {
      const off = literalCount(call.args[1], 1)!;
      const def = call.args.length > 2 ? await evaluate(call.args[2]!, chunk, layout, ctx) : null;
      const pick = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const p = lo + from + i;
        const q = name === 'LAG' ? p - off : p + off;
        if (q >= 0 && q < total) {
          if (q < lo || q >= lo + m) lost();
          pick[i] = q - lo;
        } else pick[i] = -1;
      }
      const res = takeOrNull(v!, pick);
      if (!def) return res;
      // Rows past either end take the default expression's value of the current row.
      const vals: Value[] = new Array(n);
      for (let i = 0; i < n; i++) vals[i] = pick[i] === -1 ? getValue(def, from + i) : getValue(res, i);
      return vectorFromValues(call.column.type, vals);
    }
    // Framed calls: each row's frame [s, e) in global positions, as geometry.ts frames() makes it over one partition.
    const f = call.frame;
    const frameOf = (i: number): [number, number] => {
      const p = lo + from + i;
      let s: number;
      let e: number;
      if (!f) {
        s = 0;
        e = lo + peerEnd[from + i]!;
      } else if (f.unit === 'ROWS') {
        s = rowsBound(f.start, this.offStart, p, 0, total, true);
        e = rowsBound(f.end, this.offEnd, p, 0, total, false);
      } else {
        s = this.rangeBound(f.start, this.rangeStart, st, i, peerStart[i]!, true);
        e = this.rangeBound(f.end, this.rangeEnd, st, i, peerStart[i]!, false);
      }
      if (e < s) e = s;
      if ((s < lo && s !== 0) || e > lo + m || (e < lo && e > s)) lost();
      return [s, e];
    };
    if (!call.aggregate) return this.valued(v!, n, lo, frameOf);
    if (this.decimal !== null) return this.decimalFrames(v!, n, lo, frameOf);
    if (this.accumulated) {
      const args: Vector[] = [v!];
      for (const a of call.args.slice(1)) args.push(await evaluate(a, chunk, layout, ctx));
      return this.accumulate(args, n, lo, frameOf, ctx);
    }
    return this.aggregate(v, n, lo, frameOf);
  }

  /**
   * A RANGE frame's offsets, from the first rows (constants), checked as
   * geometry.ts frames() checks them; how far they reach behind and ahead of
   * a row in key units (null: not at all).
   */
  async keyNeed(b: Batch, layout: ReadonlyMap<number, number>, ctx: ExecContext): Promise<{ behind: RangeOffset | null; ahead: RangeOffset | null }> {
    const f = this.call.frame!;
    const one = sliceBatch(b, 0, 1);
    const scale = keyScale(this.call.orderBy[0]!.expr.type.kind);
    const offsetOf = async (fb: FrameBound): Promise<RangeOffset | null> => {
      if (fb.type !== 'preceding' && fb.type !== 'following') return null;
      const v = getValue(await evaluate(fb.offset, one, layout, ctx), 0);
      if (v === null) throw new QueryError('The boundary offset value cannot be null');
      const x = v instanceof Decimal ? v.toNumber() : Number(v as number | bigint);
      if (!(x >= 0)) throw new QueryError(`Window frame offset for PRECEDING or FOLLOWING must be non-negative, but was ${Number.isNaN(x) ? 'nan' : String(v)}`);
      return rangeOffset(v, scale);
    };
    this.rangeStart = await offsetOf(f.start);
    this.rangeEnd = await offsetOf(f.end);
    const reach = (type: 'preceding' | 'following'): RangeOffset | null =>
      reachOf(f.start.type === type ? this.rangeStart : null, f.end.type === type ? this.rangeEnd : null);
    return { behind: reach('preceding'), ahead: reach('following') };
  }

  /** Row `from + i`'s RANGE bound in global positions, as geometry.ts rangeBound over the held rows (`gs`: its peer group start). */
  private rangeBound(b: FrameBound, off: RangeOffset | null, st: Step, i: number, gs: number, isStart: boolean): number {
    const r = st.from + i;
    switch (b.type) {
      case 'unbounded_preceding':
        return 0;
      case 'unbounded_following':
        return lost();
      case 'current_row':
        return st.lo + (isStart ? gs : st.peerEnd[r]!);
    }
    const rk = st.rk!;
    if (rk.skip[r] === 1) return st.lo + (isStart ? gs : st.peerEnd[r]!);
    return st.lo + rangeBoundAt(rk, b.type === 'preceding', off!, r, rk.a, rk.z, isStart);
  }

  /** FIRST_VALUE / LAST_VALUE / NTH_VALUE, scanning each frame as calls.ts computeCall does. */
  private valued(v: Vector, n: number, lo: number, frameOf: (i: number) => [number, number]): Vector {
    const ignore = this.call.ignoreNulls === true;
    const nulls = v.nulls;
    const qualifies = (local: number): boolean => !ignore || nulls === null || nulls[local] !== 1;
    const vals: Value[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const [s, e] = frameOf(i);
      let found: Value | undefined = undefined;
      if (this.name === 'LAST_VALUE') {
        for (let q = e - 1; q >= Math.max(s, lo); q--) {
          if (qualifies(q - lo)) {
            found = getValue(v, q - lo);
            break;
          }
        }
        if (found === undefined && s < lo && e > s) found = this.lastLetGo;
      } else {
        let seen = 0;
        let q = s;
        if (s < lo && e > s) {
          // Rows let go come first (all of them before e).
          for (const x of this.prefix) {
            if (++seen === this.nth) {
              found = x;
              break;
            }
          }
          q = lo;
        }
        for (; found === undefined && q < e; q++) {
          if (!qualifies(q - lo)) continue;
          if (++seen === this.nth) found = getValue(v, q - lo);
        }
      }
      vals[i] = found === undefined ? null : found;
    }
    return vectorFromValues(this.call.column.type, vals);
  }

  /** COUNT / SUM / AVG / MIN / MAX over each frame with nativeAggregate's running state (restarted when the frame start moves). */
  private aggregate(a: Vector | null, n: number, lo: number, frameOf: (i: number) => [number, number]): Vector {
    const name = this.name;
    const rt = this.call.column.type.kind;
    const data = a ? a.data : null;
    if (name !== 'COUNT' && !(data instanceof Float64Array) && !((name === 'MIN' || name === 'MAX') && data instanceof Int32Array)) refuse();
    const nulls = a ? a.nulls : null;
    const out = new Float64Array(n);
    let outNulls: Uint8Array | null = null;
    for (let i = 0; i < n; i++) {
      const [s, e] = frameOf(i);
      // Counts and INT64 sums slide as nativeAggregate slides them, while the rows leaving are held.
      if (this.acc.slides && s > this.curS && s < this.curE && e >= this.curE && this.curS >= lo) {
        for (let q = this.curS; q < s; q++) this.acc.remove(name, data, nulls, q - lo);
        this.acc.dropBefore(s);
        this.curS = s;
      }
      if (s !== this.curS || e < this.curE) {
        this.curS = s;
        this.curE = s;
        this.acc.reset();
      }
      for (let q = this.curE; q < e; q++) {
        const r = q - lo;
        if (r < 0) lost();
        this.acc.add(name, data, nulls, r, q);
      }
      this.curE = e;
      const val = this.acc.value(name, rt);
      if (val === null) (outNulls ??= new Uint8Array(n))[i] = 1;
      else out[i] = val;
    }
    const d = data instanceof Int32Array && name !== 'COUNT' ? Int32Array.from(out) : out;
    return { type: this.call.column.type, length: n, data: d, nulls: outNulls };
  }

  /** The first row (global position) a running state from UNBOUNDED PRECEDING has not added yet; Infinity: none. */
  pendingFrom(): number {
    if (!this.call.aggregate || !this.unboundedStart) return Infinity;
    return this.accumulated ? this.fed : Math.max(this.curE, 0);
  }

  /** Rows [0, keep) of the last step's chunk are let go: an UNBOUNDED PRECEDING frame keeps what it needs of them. */
  letGo(keep: number): void {
    const v = this.v;
    if (keep === 0 || v === null || this.call.aggregate || !this.unboundedStart) return;
    const ignore = this.call.ignoreNulls === true;
    const qualifies = (r: number): boolean => !ignore || v.nulls === null || v.nulls[r] !== 1;
    if (this.name === 'LAST_VALUE') {
      for (let r = keep - 1; r >= 0; r--) {
        if (qualifies(r)) {
          this.lastLetGo = getValue(v, r);
          break;
        }
      }
    } else if (this.name === 'FIRST_VALUE' || this.name === 'NTH_VALUE') {
      for (let r = 0; r < keep && this.prefix.length < this.nth; r++) if (qualifies(r)) this.prefix.push(getValue(v, r));
    }
  }
}
