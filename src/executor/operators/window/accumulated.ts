// Window calls the spilled sorted stream (sorted.ts) computes with an
// aggregate's accumulator rather than a running numeric state, fed rows in the
// order the in-memory window (window.ts) feeds them, so the values are the
// same:
// - `Whole`: an aggregate over the whole partition (OVER (), or a frame from
//   UNBOUNDED PRECEDING to UNBOUNDED FOLLOWING), fed while the input passes
//   to the sort, in input order: the in-memory order without ORDER BY; with
//   one, only aggregates whose value does not depend on the order of rows.
//   Its one value is known once the sort has read its input.
// - `WholePercentile`: PERCENTILE_CONT / PERCENTILE_DISC OVER (): the
//   argument's non-NULL values go to a spill file as the input passes, are
//   sorted through the sort operator (which spills) and read up to the
//   picked position.
// - `Cumulative`: any aggregate over the default ORDER BY frame (or
//   UNBOUNDED PRECEDING .. CURRENT ROW) that the running state does not
//   handle (STRING_AGG, ARRAY_AGG, ANY_VALUE, NUMERIC SUM, ...): one accumulator
//   fed row after row as the frame end advances, read once per frame end, as
//   aggregates.ts cumulativeAggregate does (DISTINCT is not allowed with ORDER BY).
import type { SortKey, SortRel, WindowCall } from '../../../analyzer/resolved.js';
import { T } from '../../../types/types.js';
import type { Value } from '../../../types/values.js';
import { BATCH_SIZE, concatVectors, getValue, takeVector, vectorFromValues, type Batch, type Vector } from '../../../types/vector.js';
import type { GroupsAccumulator } from '../../../functions/registry.js';
import type { ExecContext } from '../../context.js';
import { evaluate } from '../../expr.js';
import { GroupTable } from '../../hash.js';
import { peersComparator } from '../../sort-keys.js';
import { SpillFile } from '../../spill.js';
import { percentileArg, percentilePick, percentileValue } from './percentile.js';
import { sortOp } from '../sort.js';

type Layout = ReadonlyMap<number, number>;

/** Aggregates whose value is the same whatever order their rows are added in (INT64 sums are exact). */
const ORDERLESS = new Set(['COUNT', '$COUNT_STAR', 'COUNTIF', 'MIN', 'MAX', 'LOGICAL_AND', 'LOGICAL_OR', 'BIT_AND', 'BIT_OR', 'BIT_XOR']);

/** The call's frame is its whole partition whatever the rows. */
function coversAll(c: WindowCall): boolean {
  const f = c.frame;
  if (!f) return c.orderBy.length === 0;
  return f.start.type === 'unbounded_preceding' && f.end.type === 'unbounded_following';
}

/** A call `Whole` / `WholePercentile` computes (see the head of this file). */
export function isWhole(c: WindowCall): boolean {
  const name = c.name.toUpperCase();
  if (!c.aggregate) return (name === 'PERCENTILE_CONT' || name === 'PERCENTILE_DISC') && c.orderBy.length === 0 && c.args.length === 2;
  if (!coversAll(c)) return false;
  if (c.orderBy.length === 0 || ORDERLESS.has(name)) return true;
  return (name === 'SUM' || name === 'AVG') && c.args[0]?.type.kind === 'INT64';
}

/** A call `Cumulative` computes: an aggregate over the rows up to its own (peer group). */
export function isCumulative(c: WindowCall): boolean {
  if (!c.aggregate || c.orderBy.length === 0) return false;
  const f = c.frame;
  return !f || (f.start.type === 'unbounded_preceding' && f.end.type === 'current_row');
}

/** Rows fed to one accumulator as group 0, with the in-memory window's IGNORE NULLS and DISTINCT. */
export class Feed {
  readonly acc: GroupsAccumulator;
  private readonly dedupe: GroupTable | null;
  private ids = new Int32Array(BATCH_SIZE);
  private zeros = new Int32Array(BATCH_SIZE);

  constructor(
    readonly call: WindowCall,
    ctx: ExecContext,
  ) {
    this.acc = call.aggregate!.create(ctx.eval, { distinct: call.distinct, ignoreNulls: call.ignoreNulls, hasOrderBy: false });
    this.acc.resize(1);
    this.dedupe = call.distinct ? new GroupTable(call.args.map((a) => a.type), 1024) : null;
  }

  /** Adds rows [s, e) of `args` (each of the batch's rows). */
  add(args: readonly Vector[], s: number, e: number): void {
    if (e <= s) return;
    const n = e - s;
    if (this.ids.length < n) {
      this.ids = new Int32Array(n);
      this.zeros = new Int32Array(n);
    }
    const sel = this.ids;
    let k = 0;
    const a0 = args[0];
    const skipNulls = this.call.ignoreNulls === true && a0 !== undefined && a0.nulls !== null;
    for (let r = s; r < e; r++) if (!skipNulls || a0!.nulls![r] !== 1) sel[k++] = r;
    if (k === 0) return;
    let taken = args.map((a) => (k === a.length ? a : takeVector(a, sel, k)));
    if (this.dedupe) {
      // Only values not seen before, in order (first occurrences).
      const fresh = new Int32Array(k);
      const f = this.dedupe.insertFresh(taken, k, new Int32Array(k), fresh);
      if (f === 0) return;
      taken = taken.map((t) => (f === k ? t : takeVector(t, fresh, f)));
      k = f;
    }
    this.acc.update(taken, this.zeros.length >= k ? this.zeros : new Int32Array(k), k);
  }

  value(): Value {
    return getValue(this.acc.finish(1), 0);
  }
}

/**
 * Rows fed to an accumulator by group (aggregates.ts aggregateCall: one group per
 * partition, or one per row over its frame; sorted.ts Streamed: one per row),
 * at most BATCH_SIZE rows per update, with IGNORE NULLS and DISTINCT (each
 * group's first occurrences, in the order pushed).
 */
export class RowsFeed {
  private readonly acc: GroupsAccumulator;
  private readonly dedupe: GroupTable | null;
  private readonly groups = new Int32Array(BATCH_SIZE);
  private readonly rows = new Int32Array(BATCH_SIZE);
  private c = 0;
  private readonly skipNulls: Uint8Array | null;

  constructor(
    call: WindowCall,
    private readonly args: readonly Vector[],
    private readonly numGroups: number,
    ctx: ExecContext,
  ) {
    this.acc = call.aggregate!.create(ctx.eval, { distinct: call.distinct, ignoreNulls: call.ignoreNulls, hasOrderBy: false });
    this.acc.resize(numGroups);
    this.dedupe = call.distinct ? new GroupTable([T.INT64, ...args.map((a) => a.type)], 1024) : null;
    this.skipNulls = call.ignoreNulls === true && args.length > 0 ? args[0]!.nulls : null;
  }

  /** Row `r` of the arguments into group `g`. */
  push(g: number, r: number): void {
    if (this.skipNulls !== null && this.skipNulls[r] === 1) return;
    this.groups[this.c] = g;
    this.rows[this.c++] = r;
    if (this.c === BATCH_SIZE) this.flush();
  }

  /** Each group's value (the accumulator's finish). */
  finish(): Vector {
    this.flush();
    return this.acc.finish(this.numGroups);
  }

  private flush(): void {
    const c = this.c;
    if (c === 0) return;
    this.c = 0;
    let taken = this.args.map((a) => takeVector(a, this.rows, c));
    let gg = this.groups.subarray(0, c);
    let cnt = c;
    if (this.dedupe) {
      const gv: Vector = { type: T.INT64, length: c, data: Float64Array.from(gg), nulls: null };
      const sel = new Int32Array(c);
      const k = this.dedupe.insertFresh([gv, ...taken], c, new Int32Array(c), sel);
      taken = taken.map((t) => takeVector(t, sel, k));
      const g0 = gg;
      gg = Int32Array.from(sel.subarray(0, k), (j) => g0[j]!);
      cnt = k;
    }
    this.acc.update(taken, gg, cnt);
  }
}

async function argsOf(call: WindowCall, b: Batch, layout: Layout, ctx: ExecContext): Promise<Vector[]> {
  const out: Vector[] = [];
  for (const a of call.args) out.push(await evaluate(a, b, layout, ctx));
  return out;
}

/** One value for every row: an aggregate over all rows (see the head of this file). */
export class Whole {
  private readonly feed: Feed;
  private result: Vector | null = null;

  constructor(
    readonly call: WindowCall,
    ctx: ExecContext,
  ) {
    this.feed = new Feed(call, ctx);
  }

  /** The next input rows (in input order). */
  async add(b: Batch, layout: Layout, ctx: ExecContext): Promise<void> {
    this.feed.add(await argsOf(this.call, b, layout, ctx), 0, b.length);
  }

  /** Every row has been added. */
  async finish(): Promise<void> {
    this.result = this.feed.acc.finish(1);
  }

  /** The value for n rows. */
  vector(n: number): Vector {
    return takeVector(this.result!, new Int32Array(n));
  }
}

/** PERCENTILE_CONT / PERCENTILE_DISC over all rows (see the head of this file). */
export class WholePercentile {
  private values: SpillFile | null = new SpillFile();
  private nulls = 0;
  private pct: ReturnType<typeof percentileArg> | null = null;
  private result: Vector | null = null;

  constructor(readonly call: WindowCall) {}

  async add(b: Batch, layout: Layout, ctx: ExecContext): Promise<void> {
    if (b.length === 0) return;
    // The percentile is a constant: taken from the first row (as geometry.ts constantArg does).
    if (this.pct === null) this.pct = percentileArg(this.call, getValue(await evaluate(this.call.args[1]!, b, layout, ctx), 0));
    const v = await evaluate(this.call.args[0]!, b, layout, ctx);
    if (v.nulls === null) {
      this.values!.write({ length: b.length, columns: [v] });
      return;
    }
    const sel = new Int32Array(b.length);
    let k = 0;
    for (let r = 0; r < b.length; r++) if (v.nulls[r] !== 1) sel[k++] = r;
    this.nulls += b.length - k;
    if (k > 0) this.values!.write({ length: k, columns: [takeVector(v, sel, k)] });
  }

  async finish(ctx: ExecContext): Promise<void> {
    const file = this.values!;
    this.values = null;
    try {
      const call = this.call;
      const pick = this.pct === null ? null : percentilePick(call, call.name.toUpperCase() === 'PERCENTILE_CONT', this.pct, file.rows, this.nulls);
      let res: Value = null;
      if (pick !== null) {
        // The picked positions of the values in ascending order (NaN first), ties in input order as percentile.ts's stable sort.
        const id = -1;
        const type = call.args[0]!.type;
        const key: SortKey = { expr: { kind: 'column', type, columnId: id }, descending: false, nullsFirst: true };
        const columns = [{ id, name: 'v', type }];
        const rel = { kind: 'sort', input: { kind: 'values', columns, rows: [] }, keys: [key], columns } as unknown as SortRel;
        const want = pick.right ?? pick.left;
        const found = new Map<number, Value>();
        let at = 0;
        const source = async function* (): AsyncGenerator<Batch> {
          yield* file.read();
        };
        for await (const b of sortOp(rel, ctx, source())) {
          for (const p of [pick.left, pick.right]) if (p !== null && p >= at && p < at + b.length) found.set(p, getValue(b.columns[0]!, p - at));
          at += b.length;
          if (at > want) break;
        }
        res = percentileValue(call, pick, (i) => found.get(i)!);
      }
      this.result = vectorFromValues(call.column.type, [res]);
    } finally {
      file.close();
    }
  }

  vector(n: number): Vector {
    return takeVector(this.result!, new Int32Array(n));
  }

  close(): void {
    this.values?.close();
  }
}

/** An aggregate over each row's cumulative frame with its accumulator (see the head of this file). */
export class Cumulative {
  private readonly feed: Feed;

  constructor(
    readonly call: WindowCall,
    ctx: ExecContext,
  ) {
    this.feed = new Feed(call, ctx);
  }

  /** Values for the next rows `b` of the sorted stream; peerEnd: each row's peer group end within them (whole groups). */
  async run(b: Batch, peerEnd: Int32Array, layout: Layout, ctx: ExecContext): Promise<Vector> {
    const n = b.length;
    const args = await argsOf(this.call, b, layout, ctx);
    const rowsFrame = this.call.frame?.unit === 'ROWS';
    const out: Value[] = new Array(n);
    let done = 0;
    let last: Value = null;
    for (let i = 0; i < n; i++) {
      const e = rowsFrame ? i + 1 : peerEnd[i]!;
      if (e > done) {
        // As cumulativeAggregate: at most BATCH_SIZE rows per update.
        for (let s = done; s < e; s += BATCH_SIZE) this.feed.add(args, s, Math.min(e, s + BATCH_SIZE));
        done = e;
        last = this.feed.value();
      }
      out[i] = last;
    }
    return vectorFromValues(this.call.column.type, out);
  }
}

/** NTH_VALUE over the whole partition keeps its n first rows: past this many it is not streamed. */
const MAX_WHOLE_NTH = 1000;

/**
 * FIRST_VALUE / LAST_VALUE / NTH_VALUE / ANY_VALUE over the whole partition
 * with an ORDER BY (`WholeValue`): the row picked is the first (last) in
 * ORDER BY order, ties in input order as the in-memory stable sort has them;
 * under IGNORE NULLS (ANY_VALUE: always) only rows whose value is not NULL.
 */
export function isWholeValue(c: WindowCall): boolean {
  const name = c.name.toUpperCase();
  if (c.orderBy.length === 0 || c.distinct || !coversAll(c)) return false;
  if (c.aggregate) return name === 'ANY_VALUE' && c.args.length === 1;
  if (name === 'FIRST_VALUE' || name === 'LAST_VALUE') return true;
  return name === 'NTH_VALUE' && wholeNth(c) !== null;
}

function wholeNth(c: WindowCall): number | null {
  const e = c.args[1];
  if (e === undefined || e.kind !== 'literal' || (typeof e.value !== 'number' && typeof e.value !== 'bigint')) return null;
  const x = Number(e.value);
  return Number.isInteger(x) && x >= 1 && x <= MAX_WHOLE_NTH ? x : null;
}

/**
 * One value for every row, from the rows that come first (LAST_VALUE: last)
 * in ORDER BY order: as the input passes (in input order), the best `keep`
 * rows so far (keys, value, input ordinal) are all that is held.
 */
export class WholeValue {
  private readonly last: boolean;
  private readonly keep: number;
  private readonly ignore: boolean;
  /** The rows kept: the ORDER BY keys, the value, the input ordinal, best first. */
  private best: Vector[] | null = null;
  private at = 0;
  private result: Vector | null = null;

  constructor(readonly call: WindowCall) {
    const name = call.name.toUpperCase();
    this.last = name === 'LAST_VALUE';
    this.keep = name === 'NTH_VALUE' ? wholeNth(call)! : 1;
    this.ignore = call.ignoreNulls === true || name === 'ANY_VALUE';
  }

  async add(b: Batch, layout: Layout, ctx: ExecContext): Promise<void> {
    const n = b.length;
    if (n === 0) return;
    const cols: Vector[] = [];
    for (const k of this.call.orderBy) cols.push(await evaluate(k.expr, b, layout, ctx));
    const v = await evaluate(this.call.args[0]!, b, layout, ctx);
    const ord = new Float64Array(n);
    for (let i = 0; i < n; i++) ord[i] = this.at + i;
    this.at += n;
    cols.push(v, { type: T.INT64, length: n, data: ord, nulls: null });
    let rows = cols;
    if (this.ignore) {
      const sel = new Int32Array(n);
      let k = 0;
      for (let i = 0; i < n; i++) if (getValue(v, i) !== null) sel[k++] = i;
      if (k === 0) return;
      if (k < n) rows = cols.map((c) => takeVector(c, sel, k));
    }
    const all = this.best === null ? rows : rows.map((c, j) => concatVectors(c.type, [this.best![j]!, c]));
    const m = all[0]!.length;
    const nk = this.call.orderBy.length;
    const byKeys = peersComparator(all.slice(0, nk), this.call.orderBy);
    const ordinal = all[nk + 1]!.data as Float64Array;
    // Sorted order, ties by input ordinal; LAST_VALUE: its reverse.
    const cmp = (a: number, c: number): number => {
      const r = byKeys(a, c) || ordinal[a]! - ordinal[c]!;
      return this.last ? -r : r;
    };
    let pick: Int32Array;
    if (this.keep === 1) {
      let top = 0;
      for (let i = 1; i < m; i++) if (cmp(i, top) < 0) top = i;
      pick = Int32Array.of(top);
    } else {
      const idx = new Int32Array(m);
      for (let i = 0; i < m; i++) idx[i] = i;
      idx.sort(cmp);
      pick = idx.subarray(0, Math.min(this.keep, m));
    }
    this.best = all.map((c) => takeVector(c, pick, pick.length));
  }

  async finish(): Promise<void> {
    const b = this.best;
    const at = this.keep - 1;
    const v = b === null ? null : b[this.call.orderBy.length]!;
    this.result = vectorFromValues(this.call.column.type, [v !== null && at < v.length ? getValue(v, at) : null]);
  }

  vector(n: number): Vector {
    return takeVector(this.result!, new Int32Array(n));
  }
}
