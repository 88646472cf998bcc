// Windows without PARTITION BY over more rows than the memory budget's share:
// when every call can be computed in one pass over the rows in ORDER BY order
// (ROW_NUMBER, RANK, DENSE_RANK; COUNT / SUM / AVG / MIN / MAX over the
// default frame or UNBOUNDED PRECEDING .. CURRENT ROW), the input goes
// through the sort operator (sorted runs in spill files, merged stably: the
// order the in-memory window's stable sort gives) and the calls run over the
// sorted stream with a running state, holding back only the last peer group
// of each batch (RANGE frames and RANK need a group's end). The running
// state adds the same values in the same order as the in-memory pass
// (window.ts nativeAggregate), so results are equal to the last bit; where
// that pass would hand a frame to the accumulator instead (an INT64 sum past
// ±2^53, a FLOAT64 sum overflowing from finite values) the query is refused
// as the memory guard refused it before. Rows come out in ORDER BY order.
import type { SortKey, SortRel, WindowCall, WindowRel } from '../../../analyzer/resolved.js';
import { QueryError } from '../../../planner/api.js';
import { T } from '../../../types/types.js';
import { MAX_SAFE, sliceVector, type Batch, type Vector } from '../../../types/vector.js';
import { checkpoint, type ExecContext } from '../../context.js';
import { evaluate, layoutOf } from '../../expr.js';
import { peersComparator } from '../../sort-keys.js';
import { concatBatches } from '../../vectors.js';
import { sortOp } from '../sort.js';

const NUMBERING = new Set(['ROW_NUMBER', 'RANK', 'DENSE_RANK']);
const RUNNING = new Set(['COUNT', '$COUNT_STAR', 'SUM', 'AVG', 'MIN', 'MAX']);

/** Counts for tests: windows that went through the sort this way. */
export const sortedWindowCounters = { windows: 0 };

/** The ORDER BY keys when every call of `rel` can run over its rows in that order in one pass (see above), else null. */
export function sortedWindowKeys(rel: WindowRel): readonly SortKey[] | null {
  const first = rel.calls[0];
  if (!first || first.orderBy.length === 0) return null;
  const key = orderKey(first);
  for (const c of rel.calls) {
    if (c.partitionBy.length > 0 || orderKey(c) !== key) return null;
    if (NUMBERING.has(c.name.toUpperCase()) && !c.aggregate) continue;
    if (!c.aggregate || !RUNNING.has(c.name.toUpperCase()) || c.distinct || c.ignoreNulls === true || c.safe || c.args.length > 1) return null;
    const f = c.frame;
    if (f && (f.start.type !== 'unbounded_preceding' || f.end.type !== 'current_row')) return null;
    if (!runsNatively(c)) return null;
  }
  return first.orderBy;
}

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

/** Only plain column references compare reliably by identity here (the same spec as far as this path knows). */
function orderKey(c: WindowCall): string {
  return c.orderBy
    .map((k) => (k.expr.kind === 'column' ? `c${k.expr.columnId}:${k.descending}:${k.nullsFirst}:${k.collation ?? ''}` : `x${Math.random()}`))
    .join(',');
}

/** The window over `source` (rows of rel.input), sorted by `keys` through the sort operator (which spills). */
export async function* sortedWindow(rel: WindowRel, keys: readonly SortKey[], source: AsyncIterable<Batch>, ctx: ExecContext): AsyncGenerator<Batch> {
  sortedWindowCounters.windows++;
  const sortRel: SortRel = { kind: 'sort', input: rel.input, keys, columns: rel.input.columns };
  const layout = layoutOf(rel.input.columns);
  const types = rel.input.columns.map((c) => c.type);
  const states = rel.calls.map((c) => new Running(c));
  let pending: Batch | null = null;
  for await (const b of sortOp(sortRel, ctx, source)) {
    if (b.length === 0) continue;
    const chunk: Batch = pending === null ? b : concatBatches(types, [pending, b]);
    const kv: Vector[] = [];
    for (const k of keys) kv.push(await evaluate(k.expr, chunk, layout, ctx));
    const peerEnd = peerEnds(kv, keys, chunk.length);
    // Rows of the last peer group may have peers in the next batch: held back.
    const cut = lastGroupStart(peerEnd, chunk.length);
    pending = cut < chunk.length ? sliceBatch(chunk, cut, chunk.length) : null;
    if (cut > 0) yield await emit(rel, states, sliceBatch(chunk, 0, cut), peerEnd, layout, ctx);
    await checkpoint(ctx);
  }
  if (pending !== null) {
    const kv: Vector[] = [];
    for (const k of keys) kv.push(await evaluate(k.expr, pending, layout, ctx));
    yield await emit(rel, states, pending, peerEnds(kv, keys, pending.length), layout, ctx);
  }
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

/** The rows of `b` (whole peer groups, following those emitted before) with every call's value beside them. */
async function emit(rel: WindowRel, states: readonly Running[], b: Batch, peerEnd: Int32Array, layout: ReadonlyMap<number, number>, ctx: ExecContext): Promise<Batch> {
  const results: Vector[] = [];
  for (const st of states) {
    const arg = st.call.args[0] ? await evaluate(st.call.args[0], b, layout, ctx) : null;
    results.push(st.run(b.length, peerEnd, arg));
  }
  return { length: b.length, columns: [...b.columns, ...results] };
}

/** One call's state across the sorted rows. */
class Running {
  private rows = 0;
  private dense = 0;
  private cnt = 0;
  private sum = 0;
  private mn = Infinity;
  private mx = -Infinity;
  private nan = false;
  private nonFinite = false;
  private readonly name: string;
  /** ROWS frame: a row's frame ends at the row; RANGE (and the default): at its peer group's end. */
  private readonly rowsFrame: boolean;

  constructor(readonly call: WindowCall) {
    // COUNT(*) is COUNT without an argument.
    this.name = call.name.toUpperCase() === '$COUNT_STAR' ? 'COUNT' : call.name.toUpperCase();
    this.rowsFrame = call.frame?.unit === 'ROWS';
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
      for (; done < e; done++) this.add(data, nulls, done);
      let val: number;
      let isNull = false;
      switch (name) {
        case 'COUNT':
          val = this.cnt;
          break;
        case 'SUM':
          if (rt === 'INT64' && (this.sum > MAX_SAFE || this.sum < -MAX_SAFE)) refuse();
          if (this.sum - this.sum !== 0 && !this.nonFinite) refuse();
          val = this.sum;
          isNull = this.cnt === 0;
          break;
        case 'AVG':
          if (this.sum - this.sum !== 0 && !this.nonFinite) refuse();
          val = this.sum / this.cnt;
          isNull = this.cnt === 0;
          break;
        case 'MIN':
          val = this.nan ? NaN : this.mn;
          isNull = this.cnt === 0;
          break;
        default:
          val = this.nan ? NaN : this.mx;
          isNull = this.cnt === 0;
      }
      if (isNull) (outNulls ??= new Uint8Array(n))[i] = 1;
      else out[i] = val;
    }
    this.rows += n;
    const d = data instanceof Int32Array && name !== 'COUNT' ? Int32Array.from(out) : out;
    return { type: this.call.column.type, length: n, data: d, nulls: outNulls };
  }

  private add(data: Vector['data'] | null, nulls: Uint8Array | null, r: number): void {
    if (data === null) {
      this.cnt++;
      return;
    }
    if (nulls !== null && nulls[r] === 1) return;
    if (this.name === 'COUNT') {
      this.cnt++;
      return;
    }
    const x = (data as Float64Array | Int32Array)[r]!;
    this.cnt++;
    this.sum += x;
    if (x - x !== 0) this.nonFinite = true;
    if (x !== x) this.nan = true;
    else {
      if (x < this.mn) this.mn = x;
      if (x > this.mx) this.mx = x;
    }
  }
}

/** What the in-memory pass would hand to the accumulator: refused as the memory guard refused the whole window before. */
function refuse(): never {
  throw new QueryError('Resources exceeded during query execution: The query could not be executed in the allotted memory.', 'resourcesExceeded');
}

