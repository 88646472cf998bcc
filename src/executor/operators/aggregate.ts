// Hash aggregation. Group keys are hashed per column with typed loops into an
// open-addressing GroupTable (no string keys); every aggregate is a
// GroupsAccumulator fed (args, group ids) per batch. Grouping sets run over
// the same table with an extra "set index" key, keys absent from a set being
// NULL. Aggregates with DISTINCT / ORDER BY / LIMIT / HAVING MAX|MIN buffer
// their (group, args) rows as columns and apply those modifiers at the end,
// before the rows reach the accumulator.
import type { AggregateCall, AggregateRel } from '../../analyzer/resolved.js';
import type { GroupsAccumulator } from '../../functions/registry.js';
import { T, type SqlType } from '../../types/types.js';
import { BATCH_SIZE, sliceVector, takeVector, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate, layoutOf } from '../expr.js';
import { executeRel } from '../execute.js';
import { GroupTable } from '../hash.js';
import { rowsComparator } from '../sort-keys.js';
import { compareValues } from '../values-compare.js';
import { ColumnBuffer, growInt32, nullVector, selectTrue } from '../vectors.js';

type Layout = ReadonlyMap<number, number>;

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

  /** The DISTINCT table is keyed by the arguments alone (a global aggregate: every row is group 0). */
  private readonly seenByArgs: boolean;

  constructor(
    readonly call: AggregateCall,
    ctx: ExecContext,
    globalOnly = false,
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
    if (this.buffered) {
      this.bArgs = call.args.map((a) => new ColumnBuffer(a.type));
      this.bOrder = call.orderBy.map((k) => new ColumnBuffer(k.expr.type));
      if (call.having) this.bHaving = new ColumnBuffer(call.having.expr.type);
    }
  }

  /** Folds one batch (already mapped to group ids). */
  async update(b: Batch, layout: Layout, groups: Int32Array, numGroups: number, ctx: ExecContext): Promise<void> {
    const call = this.call;
    const n = b.length;
    const args: Vector[] = [];
    for (const a of call.args) args.push(await evaluate(a, b, layout, ctx));
    // Rows that take part: FILTER predicate TRUE, and (IGNORE NULLS) a non-NULL first argument.
    let sel: Int32Array | null = null;
    let count = n;
    if (call.filter) {
      const r = selectTrue(await evaluate(call.filter, b, layout, ctx), n);
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
    if (count === 0) return;
    let g = groups;
    let a = args;
    if (sel) {
      g = new Int32Array(count);
      for (let j = 0; j < count; j++) g[j] = groups[sel[j]!]!;
      a = args.map((v) => takeVector(v, sel!, count));
    }
    if (this.seen) {
      const ids = new Int32Array(count);
      const before = this.seen.size;
      if (this.seenByArgs) this.seen.findOrInsert(a, count, ids);
      else {
        const gv: Vector = { type: T.INT64, length: count, data: Float64Array.from(g.subarray(0, count)), nulls: null };
        this.seen.findOrInsert([gv, ...a], count, ids);
      }
      const keep = new Int32Array(count);
      let c = 0;
      let next = before;
      for (let j = 0; j < count; j++) if (ids[j] === next) {
        keep[c++] = j;
        next++;
      }
      if (c === 0) return;
      if (c < count) {
        a = a.map((v) => takeVector(v, keep, c));
        const g2 = new Int32Array(c);
        for (let j = 0; j < c; j++) g2[j] = g[keep[j]!]!;
        g = g2;
        count = c;
      }
    }
    if (!this.buffered) {
      this.acc.resize(numGroups);
      this.acc.update(a, g, count);
      return;
    }
    const order: Vector[] = [];
    for (const k of call.orderBy) order.push(await evaluate(k.expr, b, layout, ctx));
    const having = call.having ? await evaluate(call.having.expr, b, layout, ctx) : null;
    if (this.bCount + count > this.bGroups.length) this.bGroups = growInt32(this.bGroups, Math.max(this.bGroups.length * 2, this.bCount + count));
    this.bGroups.set(g.subarray(0, count), this.bCount);
    this.bCount += count;
    for (let k = 0; k < a.length; k++) this.bArgs[k]!.appendVector(a[k]!);
    for (let k = 0; k < order.length; k++) this.bOrder[k]!.appendVector(sel ? takeVector(order[k]!, sel, count) : order[k]!);
    if (having) this.bHaving!.appendVector(sel ? takeVector(having, sel, count) : having);
  }

  finish(numGroups: number, ctx: ExecContext): Vector {
    this.acc.resize(numGroups);
    if (this.buffered) this.flushBuffered(numGroups, ctx);
    return this.acc.finish(numGroups);
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
    if (call.orderBy.length > 0 || call.limit !== undefined) {
      const orderVecs = this.bOrder.map((b) => b.toVector());
      const byOrder = call.orderBy.length ? rowsComparator(orderVecs, call.orderBy) : (a: number, b: number) => a - b;
      const sub = Array.from(rows.subarray(0, count));
      sub.sort((a, b) => groups[a]! - groups[b]! || byOrder(a, b));
      rows = Int32Array.from(sub);
      if (call.limit !== undefined) {
        const lim = call.limit;
        let c = 0;
        let run = 0;
        for (let j = 0; j < count; j++) {
          run = j > 0 && groups[rows[j]!] === groups[rows[j - 1]!] ? run + 1 : 0;
          if (run < lim) rows[c++] = rows[j]!;
        }
        count = c;
      }
    }
    void ctx;
    for (let s = 0; s < count; s += BATCH_SIZE) {
      const e = Math.min(count, s + BATCH_SIZE);
      const sel = rows.subarray(s, e);
      const g = new Int32Array(e - s);
      for (let j = 0; j < g.length; j++) g[j] = groups[sel[j]!]!;
      this.acc.update(
        argVecs.map((v) => takeVector(v, sel, e - s)),
        g,
        e - s,
      );
    }
  }
}

export async function* aggregateOp(rel: AggregateRel, ctx: ExecContext): AsyncGenerator<Batch> {
  const layout = layoutOf(rel.input.columns);
  const keyTypes = rel.groupBy.map((g) => g.column.type);
  const allKeys = rel.groupBy.map((_, i) => i);
  const sets = rel.groupingSets ?? [allKeys];
  const multi = rel.groupingSets !== undefined;
  const table = new GroupTable(multi ? [...keyTypes, T.INT64] : keyTypes, 1024);
  const globalOnly = !multi && keyTypes.length === 0;
  // COUNT(*) without modifiers reads the table's own row counts (kept in the
  // group-id pass) instead of a second pass over the ids. Global aggregates
  // never run the table per batch; their COUNT(*) adds n per batch anyway.
  const rowCount = (a: AggregateCall): boolean =>
    !globalOnly && a.name === '$count_star' && a.args.length === 0 && !a.distinct && !a.filter && a.orderBy.length === 0 && a.limit === undefined && !a.having;
  const aggs = rel.aggregates.filter((a) => !rowCount(a)).map((a) => new AggState(a, ctx, globalOnly));
  let groups = new Int32Array(BATCH_SIZE);

  const keyColumns = (keyVecs: readonly Vector[], setIndex: number, n: number): Vector[] => {
    const set = sets[setIndex]!;
    const cols = keyTypes.map((t, k) => (set.includes(k) ? keyVecs[k]! : nullVector(t, n)));
    if (multi) cols.push({ type: T.INT64, length: n, data: new Float64Array(n).fill(setIndex), nulls: null });
    return cols;
  };

  // Empty grouping sets (global aggregate, ROLLUP's grand total) produce a row even over empty input.
  sets.forEach((set, si) => {
    if (set.length === 0) table.findOrInsert(keyColumns([], si, 1), 1, groups);
  });
  // After the empty sets' entries: those start at zero rows.
  if (rel.aggregates.some(rowCount)) table.countRows();

  for await (const b of executeRel(rel.input, ctx)) {
    await checkpoint(ctx);
    const n = b.length;
    if (n === 0) continue;
    if (groups.length < n) {
      groups = new Int32Array(n);
      if (globalOnly) groups.fill(0);
    }
    const keyVecs: Vector[] = [];
    for (const g of rel.groupBy) keyVecs.push(await evaluate(g.expr, b, layout, ctx));
    for (let si = 0; si < sets.length; si++) {
      // Global aggregate: every row is in group 0 (inserted above; `groups` stays all
      // zeros, nothing else writes it), no hashing.
      if (!globalOnly) table.findOrInsert(keyColumns(keyVecs, si, n), n, groups);
      for (const a of aggs) await a.update(b, layout, groups, table.size, ctx);
    }
  }

  const numGroups = table.size;
  const keys = table.keyVectors();
  let next = 0;
  const results = rel.aggregates.map((a) => (rowCount(a) ? table.rowCountVector(numGroups) : aggs[next++]!.finish(numGroups, ctx)));
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
  const outCols = [...keys.slice(0, keyTypes.length), ...results, ...grouping];
  for (let s = 0; s < numGroups; s += BATCH_SIZE) {
    const e = Math.min(numGroups, s + BATCH_SIZE);
    yield { length: e - s, columns: outCols.map((c) => sliceVector(c, s, e)) };
    await checkpoint(ctx);
  }
}
