// Hash aggregation. Group keys are hashed per column with typed loops into an
// open-addressing GroupTable (no string keys); every aggregate is a
// GroupsAccumulator fed (args, group ids) per batch. Grouping sets run over
// the same table with an extra "set index" key, keys absent from a set being
// NULL. Aggregates with DISTINCT / ORDER BY / LIMIT / HAVING MAX|MIN buffer
// their (group, args) rows as columns and apply those modifiers at the end,
// before the rows reach the accumulator.
import type { AggregateCall, AggregateRel, Expr } from '../../analyzer/resolved.js';
import type { GroupsAccumulator } from '../../functions/registry.js';
import { T, type SqlType } from '../../types/types.js';
import { BATCH_SIZE, sliceVector, takeVector, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate, evaluateSync, hasSubquery, layoutOf } from '../expr.js';
import { executeRel } from '../execute.js';
import { GroupTable } from '../hash.js';
import { FusedSums } from './aggregate-fused.js';
import { TopOne } from './aggregate-top.js';
import { rowsComparator } from '../sort-keys.js';
import { compareValues } from '../values-compare.js';
import { ColumnBuffer, growInt32, nullVector, Phys, physOf, selectTrue, sliceBatch, vectorBytes } from '../vectors.js';
import { memoryBudget, Reservation } from '../../storage/memory-budget.js';
import { SpillPartitions, spillOptions } from '../spill.js';

type Layout = ReadonlyMap<number, number>;

/** One batch's rows that reach an aggregate call (after FILTER / IGNORE NULLS / DISTINCT). */
interface SelectedRows {
  readonly args: Vector[];
  readonly groups: Int32Array;
  readonly count: number;
  /** Batch rows of the selection (null = rows 0..count-1). */
  readonly sel: Int32Array | null;
}

/** One aggregate call's state. */
class AggState {
  readonly acc: GroupsAccumulator;
  readonly buffered: boolean;
  // Buffered path: rows kept as columns until finish().
  private bGroups: Int32Array = new Int32Array(1024);
  private bCount = 0;
  private bArgs: ColumnBuffer[] = [];
  private bOrder: ColumnBuffer[] = [];
  private bHaving: ColumnBuffer | null = null;
  private seen: GroupTable | null = null;
  /** ORDER BY .. LIMIT 1 without DISTINCT or HAVING: only each group's best row is kept (aggregate-top.ts). */
  private top: TopOne | null = null;
  /**
   * DISTINCT past the memory budget (spillDistinct): the tuples seen so far
   * (accumulated already) and every later selected tuple (not yet), in files
   * by the tuple's hash; finish() dedupes and accumulates file by file.
   */
  private spilled: { readonly seen: SpillPartitions; readonly rest: SpillPartitions; readonly keys: readonly number[] } | null = null;

  /** The DISTINCT table is keyed by the arguments alone (a global aggregate: every row is group 0). */
  private readonly seenByArgs: boolean;

  constructor(
    readonly call: AggregateCall,
    ctx: ExecContext,
    /** No GROUP BY: every row is in group 0. */
    private readonly globalOnly = false,
  ) {
    this.acc = call.fn.create(ctx.eval, {
      distinct: call.distinct,
      ignoreNulls: call.ignoreNulls,
      hasOrderBy: call.orderBy.length > 0,
      limit: call.limit,
    });
    const needsAllRows = call.orderBy.length > 0 || call.limit !== undefined || call.having !== undefined;
    this.buffered = needsAllRows;
    // Plain DISTINCT dedupes (group, args) as rows stream by: only first occurrences reach the accumulator.
    // Without GROUP BY the group key adds nothing: keyed by the arguments alone, a
    // single integer argument gets the table's direct-indexed mode (COUNT(DISTINCT id)).
    this.seenByArgs = globalOnly && call.args.length > 0;
    if (call.distinct && !needsAllRows) this.seen = new GroupTable(this.seenByArgs ? call.args.map((a) => a.type) : [T.INT64, ...call.args.map((a) => a.type)], 1024);
    if (this.buffered && call.limit === 1 && call.orderBy.length > 0 && !call.distinct && !call.having) this.top = new TopOne(call);
    else if (this.buffered) {
      this.bArgs = call.args.map((a) => new ColumnBuffer(a.type));
      this.bOrder = call.orderBy.map((k) => new ColumnBuffer(k.expr.type));
      if (call.having) this.bHaving = new ColumnBuffer(call.having.expr.type);
    }
  }

  /** Bytes this call holds for `numGroups` groups: its DISTINCT table, buffered rows, and the accumulator's state (estimated: ACC_BYTES a group). */
  bytes(numGroups: number): number {
    let n = numGroups * ACC_BYTES + (this.seen ? this.seen.bytes() : 0);
    if (this.spilled) n += this.spilled.seen.bytes() + this.spilled.rest.bytes();
    if (this.top) n += this.top.bytes();
    if (this.buffered) {
      n += this.bGroups.byteLength;
      for (const b of this.bArgs) n += b.bytes();
      for (const b of this.bOrder) n += b.bytes();
      if (this.bHaving) n += this.bHaving.bytes();
    }
    return n;
  }

  /** Folds one batch (already mapped to group ids); the call's expressions hold no subquery. */
  updateSync(b: Batch, layout: Layout, groups: Int32Array, numGroups: number, ctx: ExecContext): void {
    const call = this.call;
    const args: Vector[] = [];
    for (const a of call.args) args.push(evaluateSync(a, b, layout, ctx));
    const rows = this.select(args, call.filter ? evaluateSync(call.filter, b, layout, ctx) : null, b.length, groups);
    if (rows === null) return;
    if (!this.buffered) return this.accumulate(rows, numGroups);
    const order: Vector[] = [];
    for (const k of call.orderBy) order.push(evaluateSync(k.expr, b, layout, ctx));
    this.buffer(rows, order, call.having ? evaluateSync(call.having.expr, b, layout, ctx) : null, numGroups);
  }

  /** updateSync for calls whose expressions may hold subqueries. */
  async update(b: Batch, layout: Layout, groups: Int32Array, numGroups: number, ctx: ExecContext): Promise<void> {
    const call = this.call;
    const args: Vector[] = [];
    for (const a of call.args) args.push(await evaluate(a, b, layout, ctx));
    const rows = this.select(args, call.filter ? await evaluate(call.filter, b, layout, ctx) : null, b.length, groups);
    if (rows === null) return;
    if (!this.buffered) return this.accumulate(rows, numGroups);
    const order: Vector[] = [];
    for (const k of call.orderBy) order.push(await evaluate(k.expr, b, layout, ctx));
    this.buffer(rows, order, call.having ? await evaluate(call.having.expr, b, layout, ctx) : null, numGroups);
  }

  /**
   * The rows that take part: FILTER predicate TRUE, (IGNORE NULLS) a non-NULL
   * first argument, (DISTINCT) first occurrences of (group, args). Null when none.
   */
  private select(args: Vector[], filter: Vector | null, n: number, groups: Int32Array): SelectedRows | null {
    const call = this.call;
    let sel: Int32Array | null = null;
    let count = n;
    if (filter) {
      const r = selectTrue(filter, n);
      sel = r.sel;
      count = r.count;
    }
    if (call.ignoreNulls === true && args.length > 0 && args[0]!.nulls) {
      const an = args[0]!.nulls;
      const s2 = new Int32Array(count);
      let c2 = 0;
      for (let j = 0; j < count; j++) {
        const r = sel ? sel[j]! : j;
        if (an[r] === 0) s2[c2++] = r;
      }
      sel = s2;
      count = c2;
    }
    if (count === 0) return null;
    let g = groups;
    let a = args;
    if (sel) {
      g = new Int32Array(count);
      for (let j = 0; j < count; j++) g[j] = groups[sel[j]!]!;
      a = args.map((v) => takeVector(v, sel!, count));
    }
    if (this.spilled) {
      this.spilled.rest.write({ length: count, columns: this.seenByArgs ? a : [groupVector(g, count), ...a] }, this.spilled.keys);
      return null;
    }
    if (this.seen) {
      const keep = new Int32Array(count);
      const c = this.seen.insertFresh(this.seenByArgs ? a : [groupVector(g, count), ...a], count, new Int32Array(count), keep);
      if (c === 0) return null;
      if (c < count) {
        a = a.map((v) => takeVector(v, keep, c));
        const g2 = new Int32Array(c);
        for (let j = 0; j < c; j++) g2[j] = g[keep[j]!]!;
        g = g2;
        count = c;
      }
    }
    return { args: a, groups: g, count, sel };
  }

  private accumulate(rows: SelectedRows, numGroups: number): void {
    this.acc.resize(numGroups);
    // A global aggregate's rows are all group 0: accumulators that can skip reading group ids do.
    if (this.globalOnly && this.acc.updateGroup) this.acc.updateGroup(rows.args, 0, rows.count);
    else this.acc.update(rows.args, rows.groups, rows.count);
  }

  /** Buffered calls: keeps (group, args, order keys, HAVING value) of the selected rows for finish(). */
  private buffer(rows: SelectedRows, order: readonly Vector[], having: Vector | null, numGroups: number): void {
    const { args: a, groups: g, count, sel } = rows;
    if (this.top) {
      this.top.add(a, sel ? order.map((v) => takeVector(v, sel, count)) : order, g, count, numGroups);
      return;
    }
    if (this.bCount + count > this.bGroups.length) this.bGroups = growInt32(this.bGroups, Math.max(this.bGroups.length * 2, this.bCount + count));
    this.bGroups.set(g.subarray(0, count), this.bCount);
    this.bCount += count;
    for (let k = 0; k < a.length; k++) this.bArgs[k]!.appendVector(a[k]!);
    for (let k = 0; k < order.length; k++) this.bOrder[k]!.appendVector(sel ? takeVector(order[k]!, sel, count) : order[k]!);
    if (having) this.bHaving!.appendVector(sel ? takeVector(having, sel, count) : having);
  }

  /** Moves the DISTINCT table to spill files (see `spilled`); false when there is none to move. */
  spillDistinct(): boolean {
    const seen = this.seen;
    if (seen === null || this.spilled !== null || seen.size === 0) return false;
    const keys = seen.keyTypes.map((_, i) => i);
    this.spilled = { seen: new SpillPartitions(spillOptions.partitions), rest: new SpillPartitions(spillOptions.partitions), keys };
    this.spilled.seen.writeColumns(seen.keyVectors(), seen.size, keys);
    this.seen = null;
    return true;
  }

  /** The call's output column (`view`: as a view of the accumulator's state where it has one, see `viewed`). */
  finish(numGroups: number, ctx: ExecContext, view = false): Vector {
    this.acc.resize(numGroups);
    if (this.spilled) this.accumulateSpilled(numGroups);
    if (this.top) this.feed(this.top.finish(numGroups));
    else if (this.buffered) this.flushBuffered(numGroups, ctx);
    return view && this.acc.finishView ? this.acc.finishView(numGroups) : this.acc.finish(numGroups);
  }

  /** Whether finish's `view` gives a view (no new column). */
  get viewed(): boolean {
    return this.acc.finishView !== undefined;
  }

  /** Spilled DISTINCT: per file, the tuples accumulated before the spill, then the first occurrences of the others, accumulated. */
  private accumulateSpilled(numGroups: number): void {
    const { seen, rest } = this.spilled!;
    this.spilled = null;
    seen.flush();
    rest.flush();
    try {
      for (let p = 0; p < seen.files.length; p++) {
        const argTypes = this.call.args.map((a) => a.type);
        const table = new GroupTable(this.seenByArgs ? argTypes : [T.INT64, ...argTypes], 1024);
        let ids = new Int32Array(0);
        for (const b of seen.files[p]!.read(true)) {
          if (ids.length < b.length) ids = new Int32Array(b.length);
          table.findOrInsert(b.columns, b.length, ids);
        }
        seen.files[p]!.close();
        for (const b of rest.files[p]!.read()) {
          const n = b.length;
          if (ids.length < n) ids = new Int32Array(n);
          const keep = new Int32Array(n);
          const c = table.insertFresh(b.columns, n, ids, keep);
          if (c === 0) continue;
          const cols = c < n ? b.columns.map((v) => takeVector(v, keep, c)) : [...b.columns];
          const args = this.seenByArgs ? cols : cols.slice(1);
          const groups = new Int32Array(c);
          if (!this.seenByArgs) {
            const gd = cols[0]!.data as Float64Array;
            for (let j = 0; j < c; j++) groups[j] = gd[j]!;
          }
          this.accumulate({ args, groups, count: c, sel: null }, numGroups);
        }
        rest.files[p]!.close();
      }
    } finally {
      seen.close();
      rest.close();
    }
  }

  /** Applies HAVING MAX/MIN, DISTINCT, ORDER BY and LIMIT, then feeds the accumulator. */
  private flushBuffered(numGroups: number, ctx: ExecContext): void {
    const call = this.call;
    const n = this.bCount;
    const groups = this.bGroups;
    let rows = new Int32Array(n);
    for (let i = 0; i < n; i++) rows[i] = i;
    let count = n;
    if (call.having && this.bHaving) {
      const hv = this.bHaving;
      const t = call.having.expr.type;
      const best: (unknown | undefined)[] = new Array(numGroups);
      const want = call.having.max ? 1 : -1;
      const isNaN_ = (x: unknown) => typeof x === 'number' && Number.isNaN(x);
      // A group with a NaN has MAX/MIN NaN (as MAX/MIN return), which no row equals: it aggregates no rows.
      const hasNaN = new Uint8Array(numGroups);
      for (let i = 0; i < n; i++) {
        const v = hv.get(i);
        if (v === null) continue;
        const g = groups[i]!;
        const cur = best[g];
        if (isNaN_(v)) {
          hasNaN[g] = 1;
          continue;
        }
        if (cur === undefined || compareValues(v, cur as never, t) * want > 0) best[g] = v;
      }
      let c = 0;
      for (let i = 0; i < n; i++) {
        const g = groups[i]!;
        const b = best[g];
        const v = hv.get(i);
        // Rows whose HAVING expression is NULL never qualify (a group of only NULLs aggregates no rows).
        if (b !== undefined && hasNaN[g] === 0 && v !== null && !isNaN_(v) && compareValues(v, b as never, t) === 0) rows[c++] = i;
      }
      count = c;
    }
    const argVecs = this.bArgs.map((b) => b.toVector());
    if (call.distinct) {
      const gv: Vector = { type: T.INT64, length: n, data: Float64Array.from(groups.subarray(0, n)), nulls: null };
      const keyTypes: SqlType[] = [T.INT64, ...argVecs.map((v) => v.type)];
      const table = new GroupTable(keyTypes, 1024);
      const cols = [gv, ...argVecs].map((v) => takeVector(v, rows, count));
      const ids = new Int32Array(count);
      table.findOrInsert(cols, count, ids);
      // A row is kept when it created its (group, args) entry.
      const seen = new Uint8Array(table.size);
      let c = 0;
      for (let j = 0; j < count; j++) {
        if (seen[ids[j]!] === 0) {
          seen[ids[j]!] = 1;
          rows[c++] = rows[j]!;
        }
      }
      count = c;
    }
    if (call.limit === 1 && call.orderBy.length > 0) {
      // Each group's first value in ORDER BY order (the dedup idiom ARRAY_AGG(x ORDER BY t DESC LIMIT 1)):
      // one pass keeping the best row per group instead of sorting every row. A tie keeps the
      // earlier row, as the stable sort below does; values the aggregate drops (see there) never count.
      const byOrder = rowsComparator(
        this.bOrder.map((b) => b.toVector()),
        call.orderBy,
      );
      const first = argVecs[0];
      const skipNulls = first?.nulls && (call.name !== 'ARRAY_AGG' || call.ignoreNulls) ? first.nulls : null;
      const best = new Int32Array(numGroups).fill(-1);
      for (let j = 0; j < count; j++) {
        const r = rows[j]!;
        if (skipNulls && skipNulls[r] === 1) continue;
        const g = groups[r]!;
        const b = best[g]!;
        if (b < 0 || byOrder(r, b) < 0) best[g] = r;
      }
      let c = 0;
      for (let g = 0; g < numGroups; g++) if (best[g]! >= 0) rows[c++] = best[g]!;
      count = c;
    } else if (call.orderBy.length > 0 || call.limit !== undefined) {
      const orderVecs = this.bOrder.map((b) => b.toVector());
      const byOrder = call.orderBy.length ? rowsComparator(orderVecs, call.orderBy) : (a: number, b: number) => a - b;
      const sub = Array.from(rows.subarray(0, count));
      sub.sort((a, b) => groups[a]! - groups[b]! || byOrder(a, b));
      rows = Int32Array.from(sub);
      if (call.limit !== undefined) {
        const lim = call.limit;
        // LIMIT counts the values the aggregate keeps: STRING_AGG, ARRAY_CONCAT_AGG and
        // ARRAY_AGG ... IGNORE NULLS drop NULL inputs before the limit applies.
        const first = argVecs[0];
        const skipNulls = first?.nulls && (call.name !== 'ARRAY_AGG' || call.ignoreNulls) ? first.nulls : null;
        let c = 0;
        let run = 0;
        let prevGroup = -1;
        for (let j = 0; j < count; j++) {
          const r = rows[j]!;
          if (skipNulls && skipNulls[r] === 1) continue;
          run = groups[r] === prevGroup ? run + 1 : 0;
          prevGroup = groups[r]!;
          if (run < lim) rows[c++] = r;
        }
        count = c;
      }
    }
    void ctx;
    const g = new Int32Array(count);
    for (let j = 0; j < count; j++) g[j] = groups[rows[j]!]!;
    this.feed({ args: argVecs, rows, groups: g, count });
  }

  /** Feeds the accumulator rows `rows` of `args` (group `groups[j]` for rows[j]), a batch at a time. */
  private feed({ args, rows, groups, count }: { args: readonly Vector[]; rows: Int32Array; groups: Int32Array; count: number }): void {
    for (let s = 0; s < count; s += BATCH_SIZE) {
      const e = Math.min(count, s + BATCH_SIZE);
      const sel = rows.subarray(s, e);
      this.acc.update(
        args.map((v) => takeVector(v, sel, e - s)),
        groups.subarray(s, e),
        e - s,
      );
    }
  }
}

/**
 * The aggregate's state across batches. Per-batch work lives in these methods
 * rather than in the operator's async generator: a large generator body took
 * V8 hundreds of ms to optimize (and went back to unoptimized code whenever a
 * plan object's shape differed), which the first runs of a heavy query paid
 * batch after batch; plain methods optimize quickly and independently.
 */
export class Aggregation {
  readonly layout: Layout;
  readonly keyTypes: SqlType[];
  readonly sets: readonly (readonly number[])[];
  readonly multi: boolean;
  readonly table: GroupTable;
  readonly globalOnly: boolean;
  /** Per rel.aggregates entry: its accumulator state, or null when `counted` or fused. */
  readonly aggs: (AggState | null)[];
  /** Which of rel.aggregates are a global COUNT(*): the number of input rows. */
  readonly counted: boolean[];
  /** Grouped COUNT / SUM / AVG of FLOAT64 in one loop per argument (aggregate-fused.ts). */
  readonly fused: FusedSums | null;
  /** No expression holds a subquery: batches are evaluated synchronously. */
  readonly sync: boolean;
  groups = new Int32Array(BATCH_SIZE);
  /** Input rows (COUNT(*) of a global aggregate). */
  inputRows = 0;

  constructor(
    readonly rel: AggregateRel,
    readonly ctx: ExecContext,
    /** Groups to make room for up front (a spilling aggregation's next table: as many as the last one held). */
    capacity = 1024,
  ) {
    this.layout = layoutOf(rel.input.columns);
    this.keyTypes = rel.groupBy.map((g) => g.column.type);
    const allKeys = rel.groupBy.map((_, i) => i);
    this.sets = rel.groupingSets ?? [allKeys];
    this.multi = rel.groupingSets !== undefined;
    this.table = new GroupTable(this.multi ? [...this.keyTypes, T.INT64] : this.keyTypes, capacity);
    this.globalOnly = !this.multi && this.keyTypes.length === 0;
    // A global COUNT(*) without modifiers is the number of input rows: no
    // accumulator checking every batch's group ids. (Grouped ones keep the
    // accumulator: counting inside the dense group-id loop measured slower.)
    this.counted = rel.aggregates.map(
      (a) => this.globalOnly && a.name === '$count_star' && a.args.length === 0 && !a.distinct && !a.filter && a.orderBy.length === 0 && a.limit === undefined && !a.having,
    );
    // A global aggregate's accumulators sum each batch in a register (updateGroup): not fused.
    this.fused = this.globalOnly ? null : FusedSums.plan(rel.aggregates, this.counted, ctx);
    this.aggs = rel.aggregates.map((a, i) => (this.counted[i] || this.fused?.outputs[i] ? null : new AggState(a, ctx, this.globalOnly)));
    const exprs: Expr[] = rel.groupBy.map((g) => g.expr);
    for (const a of rel.aggregates) {
      exprs.push(...a.args, ...a.orderBy.map((k) => k.expr));
      if (a.filter) exprs.push(a.filter);
      if (a.having) exprs.push(a.having.expr);
    }
    this.sync = !exprs.some(hasSubquery);
    // One numeric key, every call fused: sums by key slot, no group ids (aggregate-fused.ts).
    if (this.fused && this.sync && !this.multi && this.keyTypes.length === 1 && [Phys.F64, Phys.I64F].includes(physOf(this.keyTypes[0]!))) this.fused.useSlots(this.table);
    // Empty grouping sets (global aggregate, ROLLUP's grand total) produce a row even over empty input.
    this.sets.forEach((set, si) => {
      if (set.length === 0) this.table.findOrInsert(this.keyColumns([], si, 1), 1, this.groups);
    });
  }

  keyColumns(keyVecs: readonly Vector[], setIndex: number, n: number): Vector[] {
    const set = this.sets[setIndex]!;
    const cols = this.keyTypes.map((t, k) => (set.includes(k) ? keyVecs[k]! : nullVector(t, n)));
    if (this.multi) cols.push({ type: T.INT64, length: n, data: new Float64Array(n).fill(setIndex), nulls: null });
    return cols;
  }

  private groupsFor(n: number): Int32Array {
    if (this.groups.length < n) {
      this.groups = new Int32Array(n);
      if (this.globalOnly) this.groups.fill(0);
    }
    return this.groups;
  }

  /** Groups room was made for up front (reserveGroups). */
  private reserved = 0;

  /**
   * Room for `n` groups in the accumulators up front (a table sized before
   * reading, GroupTable.presetDense: its keys' room is made there), so they
   * do not grow by doubling copies, each a large allocation V8 counts toward
   * its next full collection. Counted in bytes() from now on.
   */
  reserveGroups(n: number): void {
    this.reserved = Math.max(this.reserved, n);
    this.fused?.resize(n);
    for (const a of this.aggs) a?.acc.resize(n);
  }

  /** Bytes the aggregation holds: what it reserves from the engine's memory budget. */
  bytes(): number {
    const groups = Math.max(this.table.size, this.reserved);
    let n = this.table.bytes();
    for (const a of this.aggs) if (a) n += a.bytes(groups);
    if (this.fused) n += this.fused.bytes();
    return n;
  }

  /**
   * Bytes per group finish(_, views) makes beyond the table's own (bytes()):
   * results that are not views of it (number keys and row counts are).
   */
  outputBytesPerGroup(): number {
    let n = 0;
    for (const k of this.table.keys) if (k.phys !== Phys.F64 && k.phys !== Phys.I64F) n += 8;
    this.rel.aggregates.forEach((_, i) => {
      const a = this.aggs[i];
      if (this.counted[i]) n += 8;
      else if (a ? !a.viewed : !this.fused!.isRows(i)) n += ACC_BYTES;
    });
    return n;
  }

  /**
   * Bytes one more group adds (stored keys, accumulators; not the table's
   * index), as bytes() counts them: for sizing before reading. Keys as 8
   * bytes each (a value-layout key takes more).
   */
  bytesPerGroup(): number {
    let n = 8 * this.table.keyTypes.length;
    for (const a of this.aggs) if (a) n += ACC_BYTES;
    // Fused sums: a row count, and per argument a sum and (once a NULL comes) a NULL count: planned with room for them.
    if (this.fused) n += 8 + 16 * this.fused.args.length;
    return n;
  }

  /** Moves DISTINCT tables to spill files (past the memory budget); false when there was none. */
  spillDistinct(): boolean {
    let any = false;
    for (const a of this.aggs) if (a?.spillDistinct()) any = true;
    return any;
  }

  /** Folds one batch (sync: no subqueries); `only`: into that grouping set's groups alone (a routed grouping-sets aggregate). */
  consume(b: Batch, only = -1): void {
    let n = b.length;
    if (n === 0) return;
    this.inputRows += n;
    let keyVecs: Vector[] = [];
    for (const g of this.rel.groupBy) keyVecs.push(evaluateSync(g.expr, b, this.layout, this.ctx));
    if (this.fused?.slotted) {
      const from = this.fused.updateSlots(keyVecs[0]!, evaluateSync(this.fused.args[0]!.expr, b, this.layout, this.ctx), n);
      if (from === n) return;
      // Slot mode is over: the rest of the batch goes the usual way.
      b = sliceBatch(b, from, n);
      keyVecs = keyVecs.map((v) => sliceVector(v, from, n));
      n -= from;
    }
    const groups = this.groupsFor(n);
    for (let si = only < 0 ? 0 : only; si < (only < 0 ? this.sets.length : only + 1); si++) {
      // Global aggregate: every row is in group 0 (inserted above; `groups` stays all
      // zeros, nothing else writes it), no hashing.
      if (!this.globalOnly) this.table.findOrInsert(this.keyColumns(keyVecs, si, n), n, groups);
      if (this.fused) {
        const vecs: Vector[] = [];
        for (const a of this.fused.args) vecs.push(evaluateSync(a.expr, b, this.layout, this.ctx));
        this.fused.update(vecs, groups, n, this.table.size);
      }
      for (const a of this.aggs) a?.updateSync(b, this.layout, groups, this.table.size, this.ctx);
    }
  }

  /** consume() for expressions with subqueries. */
  async consumeAsync(b: Batch, only = -1): Promise<void> {
    const n = b.length;
    if (n === 0) return;
    this.inputRows += n;
    const groups = this.groupsFor(n);
    const keyVecs: Vector[] = [];
    for (const g of this.rel.groupBy) keyVecs.push(await evaluate(g.expr, b, this.layout, this.ctx));
    for (let si = only < 0 ? 0 : only; si < (only < 0 ? this.sets.length : only + 1); si++) {
      if (!this.globalOnly) this.table.findOrInsert(this.keyColumns(keyVecs, si, n), n, groups);
      if (this.fused) {
        const vecs: Vector[] = [];
        for (const a of this.fused.args) vecs.push(await evaluate(a.expr, b, this.layout, this.ctx));
        this.fused.update(vecs, groups, n, this.table.size);
      }
      for (const a of this.aggs) await a?.update(b, this.layout, groups, this.table.size, this.ctx);
    }
  }

  /**
   * Output columns: keys (`withSetIndex`: then the grouping set's index, for grouping sets), aggregates, GROUPING() bits.
   * `views`: for an aggregation used no more, number keys and plain row counts are views of its
   * buffers (no copy of what bytes() already counts), each also pushed to `views`.
   */
  finish(withSetIndex = false, views: Vector[] | null = null): Vector[] {
    const { table, rel, sets, keyTypes } = this;
    const numGroups = table.size;
    const view = views !== null;
    const keys = table.keyVectors(view);
    if (views) for (const k of keys) if (k.data instanceof Float64Array) views.push(k);
    const results = rel.aggregates.map((_, i): Vector => {
      if (this.counted[i]) return { type: T.INT64, length: numGroups, data: new Float64Array(numGroups).fill(this.inputRows), nulls: null };
      const a = this.aggs[i];
      const v = a ? a.finish(numGroups, this.ctx, view) : this.fused!.finish(i, numGroups, view);
      if (views && (a ? a.viewed : this.fused!.isRows(i))) views.push(v);
      return v;
    });
    const grouping: Vector[] = [];
    if (rel.groupingCalls?.length) {
      const setOf = keys[keyTypes.length];
      for (const gc of rel.groupingCalls) {
        const d = new Float64Array(numGroups);
        for (let g = 0; g < numGroups; g++) {
          const si = setOf ? (setOf.data as Float64Array)[g]! : 0;
          d[g] = sets[si]!.includes(gc.keyIndex) ? 0 : 1;
        }
        grouping.push({ type: T.INT64, length: numGroups, data: d, nulls: null });
      }
    }
    return [...keys.slice(0, keyTypes.length + (withSetIndex && this.multi ? 1 : 0)), ...results, ...grouping];
  }
}

/**
 * Built-in aggregates whose accumulators copy what they keep out of each
 * batch (numbers into their own arrays, values one by one): an aggregate made
 * only of these, without DISTINCT / ORDER BY / LIMIT / HAVING (buffered as
 * columns), takes its input as transient batches (executeRel).
 */
const COPYING_AGGREGATES = new Set(['$count_star', 'COUNT', 'COUNTIF', 'SUM', 'AVG', 'MIN', 'MAX', 'LOGICAL_AND', 'LOGICAL_OR', 'BIT_AND', 'BIT_OR', 'BIT_XOR']);

/** Whether the aggregate keeps no reference to an input batch once it has folded it (see COPYING_AGGREGATES). */
export function keepsNoInput(rel: AggregateRel): boolean {
  return rel.aggregates.every((a) => COPYING_AGGREGATES.has(a.name) && !a.distinct && a.orderBy.length === 0 && a.limit === undefined && !a.having);
}

/**
 * COUNT(*) alone over a whole stored table: the rows storage lists for the
 * scan (row groups and rows held in memory, less deleted rows), so nothing
 * is read or sliced (10M rows: ~4 ms of empty batches). Null when storage
 * cannot list them (time travel, virtual tables) or rows are filtered: scan.
 */
async function storedRowCount(st: Aggregation, ctx: ExecContext): Promise<number | null> {
  const scan = st.rel.input;
  const catalog = ctx.query.catalog;
  if (!st.globalOnly || !st.counted.every(Boolean) || scan.kind !== 'scan' || scan.pushedFilters?.length || ctx.scanSources?.has(scan) || !catalog.scanParts) return null;
  const listed = await catalog.scanParts(scan.table, { columns: scan.tableColumns, asOfMs: scan.asOfMs, history: scan.history, filters: [] });
  if (listed === null) return null;
  let n = 0;
  for (const p of listed.parts) n += (p.kind === 'mem' ? p.batch.length : p.end - p.start) - p.deleted.length;
  return n;
}

export async function* aggregateOp(rel: AggregateRel, ctx: ExecContext): AsyncGenerator<Batch> {
  const st = new Aggregation(rel, ctx);
  // The group table and accumulators draw on the engine's memory budget: the chunk caches give way as they grow.
  const held = new Reservation();
  try {
    const stored = await storedRowCount(st, ctx);
    if (stored !== null) st.inputRows = stored;
    else {
      // Group keys are copied into the group table; sync evaluation finishes a batch before the next is pulled.
      for await (const b of executeRel(rel.input, ctx, st.sync && keepsNoInput(rel))) {
        // DISTINCT tables past the budget go to spill files (a GROUP BY's own groups spill in aggregate-spill.ts).
        if (held.set(st.bytes()) > spillOptions.share * memoryBudget.limit && memoryBudget.limit > 0 && st.spillDistinct()) held.set(st.bytes());
        await checkpoint(ctx);
        if (st.sync) st.consume(b);
        else await st.consumeAsync(b);
      }
    }
    yield* finishedGroups(st, held, ctx);
  } finally {
    held.release();
  }
}

/** A finished aggregation's rows, a batch at a time (its output held in `held` meanwhile). */
export async function* finishedGroups(st: Aggregation, held: Reservation, ctx: ExecContext): AsyncGenerator<Batch> {
  const outCols = st.finish();
  held.set(st.bytes() + outCols.reduce((n, c) => n + vectorBytes(c), 0));
  const numGroups = st.table.size;
  for (let s = 0; s < numGroups; s += BATCH_SIZE) {
    const e = Math.min(numGroups, s + BATCH_SIZE);
    yield { length: e - s, columns: outCols.map((c) => sliceVector(c, s, e)) };
    await checkpoint(ctx);
  }
}

/** Group ids as the INT64 key column of a DISTINCT table keyed by (group, args). */
function groupVector(g: Int32Array, n: number): Vector {
  return { type: T.INT64, length: n, data: Float64Array.from(g.subarray(0, n)), nulls: null };
}

/** An accumulator's state per group, as reserved (a sum and a count, or a value and a flag). */
const ACC_BYTES = 16;
