// Correlated subqueries over the outer row's arrays, run once per outer batch
// instead of once per row: `(SELECT SUM(x) FROM UNNEST(t.arr) x)`,
// `EXISTS(SELECT 1 FROM UNNEST(tags) t WHERE t = 'a')`,
// `ARRAY(SELECT x * 2 FROM UNNEST(arr) x ORDER BY x)`, ...
//
// The plan is "lifted": every relation gets a leading row column R (the
// outer row, 0..n-1, of the batch being evaluated), so one run over all the
// rows' elements answers every row. The lifted leaf is the batch itself (a
// CTE of R and the correlated columns) laterally joined with the UNNEST, so
// the arrays are flattened by the lateral join's whole-batch path, on their
// Arrow layout. Filters and projections keep R; sorts sort by R first; a
// GROUP BY groups by R too; a global aggregate groups by R and also sees one
// marker row per outer row (left out of every call by a FILTER on the
// marker), so an outer row with no elements still gets its one row: COUNT 0,
// SUM NULL, as the per-row run gives. A LIMIT/OFFSET on top (under
// projections) applies per R after the run. Correlated references that are
// not in a relation's columns read the outer column at the batch's R
// (`ExecContext.outerRows`).
//
// Shapes not lifted keep the per-row path (expr.ts): IN subqueries, plans
// without an UNNEST, table scans, windows, set operations, WITH, non-lateral
// joins, lateral joins to anything but UNNEST, a LIMIT below the top, and
// grouping sets.
import type { AggregateCall, Expr, LimitRel, ProjectRel, Rel, ResolvedColumn, SubqueryExpr } from '../analyzer/resolved.js';
import { visitRelExprs } from '../analyzer/rewrite.js';
import { MAX_ROW_BYTES, QueryError } from '../types/errors.js';
import { T, typeEquals, type SqlType } from '../types/types.js';
import { constantVector, getValue, nestedVector, takeVector, vectorFromValues, type Batch, type Vector } from '../types/vector.js';
import type { ExecContext, OuterRows } from './context.js';
import { executeRel } from './execute.js';
import { evaluate, layoutOf, type ColumnLayout } from './expr.js';
import { concatBatches, takeOrNull, vectorBytes } from './vectors.js';

/** A subquery's plan lifted over R, and what is applied per R after the run. */
interface Lifted {
  readonly plan: Rel;
  readonly row: ResolvedColumn;
  readonly domainId: number;
  /** The correlated columns the domain carries (ids and types as the plan reads them). */
  readonly domain: readonly ResolvedColumn[];
  readonly limit: LimitRel | null;
  /** Projections above the LIMIT, innermost first. */
  readonly above: readonly ProjectRel[];
}

// Ids the analyzer never gives (it counts up from 0): one set per subquery expression, made once.
let nextId = -1_000_000;
const fresh = (): number => nextId--;

const lifted = new WeakMap<SubqueryExpr, Lifted | null>();

/** Runs of lifted subqueries (one per outer batch) and the outer rows they answered (tests). */
export const batchedCounters = { runs: 0, rows: 0 };

/** Tests compare lifted runs with the per-row path (`enabled: false`). */
export const batchedOptions = { enabled: true };

function colRef(c: ResolvedColumn): Expr {
  return { kind: 'column', type: c.type, columnId: c.id };
}

function hasUnnest(rel: Rel): boolean {
  if (rel.kind === 'unnest') return true;
  if (rel.kind === 'join') return hasUnnest(rel.left) || hasUnnest(rel.right);
  return 'input' in rel && rel.input !== undefined ? hasUnnest(rel.input as Rel) : false;
}

function liftOf(s: SubqueryExpr): Lifted | null {
  let l = lifted.get(s);
  if (l === undefined) {
    l = makeLifted(s);
    lifted.set(s, l);
  }
  return l;
}

function makeLifted(s: SubqueryExpr): Lifted | null {
  if (s.mode === 'in' || !hasUnnest(s.plan)) return null;
  // Types of the correlated columns, from the references that read them.
  const types = new Map<number, SqlType>();
  const ids = new Set(s.correlatedColumns);
  visitRelExprs(s.plan, (e) => {
    if (e.kind === 'column' && ids.has(e.columnId)) types.set(e.columnId, e.type);
  });
  if (types.size !== ids.size) return null;
  const row: ResolvedColumn = { id: fresh(), name: '$outer_row', type: T.INT64 };
  const domain = s.correlatedColumns.map((id) => ({ id, name: `$outer_${id}`, type: types.get(id)! }));
  const domainId = fresh();
  const domainRef: Rel = { kind: 'cte_ref', cteId: domainId, cteColumns: [row, ...domain], columns: [row, ...domain] };
  // LIMIT on top (under projections): applied per R after the run.
  const above: ProjectRel[] = [];
  let top = s.plan;
  while (top.kind === 'project') {
    above.unshift(top);
    top = top.input;
  }
  let limit: LimitRel | null = null;
  if (top.kind === 'limit') limit = top;
  else {
    top = s.plan;
    above.length = 0;
  }
  const lifter = new Lifter(row, domainRef);
  const plan = lifter.lift(limit ? limit.input : top);
  if (!plan) return null;
  return { plan, row, domainId, domain, limit, above };
}

class Lifter {
  private readonly r: Expr;
  constructor(
    private readonly row: ResolvedColumn,
    private readonly domain: Rel,
  ) {
    this.r = colRef(row);
  }

  /** `rel` with R as its first column, or null when its shape is not handled. */
  lift(rel: Rel): Rel | null {
    const columns = [this.row, ...rel.columns];
    switch (rel.kind) {
      case 'unnest':
        // The batch's rows joined with their own elements (the lateral join's whole-batch UNNEST).
        return { kind: 'join', joinType: 'inner', left: this.domain, right: rel, lateral: true, columns };
      case 'values': {
        if (rel.rows.length !== 1) return null;
        return { kind: 'project', input: this.domain, exprs: [this.r, ...rel.rows[0]!], columns };
      }
      case 'filter': {
        const input = this.lift(rel.input);
        return input && { kind: 'filter', input, predicate: rel.predicate, columns };
      }
      case 'project': {
        const input = this.lift(rel.input);
        return input && { kind: 'project', input, exprs: [this.r, ...rel.exprs], columns };
      }
      case 'sort': {
        const input = this.lift(rel.input);
        // The sort is per R (R first; the sort is stable, so ties keep element order); a top-N bound is not.
        return input && { kind: 'sort', input, keys: [{ expr: this.r, descending: false, nullsFirst: true }, ...rel.keys], columns };
      }
      case 'join': {
        // A lateral UNNEST of the left rows' arrays (two levels deep: `UNNEST(arr) x, UNNEST(x.ys) y`).
        if (!rel.lateral || rel.right.kind !== 'unnest' || !['inner', 'cross', 'left'].includes(rel.joinType) || rel.equiKeys) return null;
        const left = this.lift(rel.left);
        return left && { ...rel, left, columns };
      }
      case 'aggregate':
        return this.liftAggregate(rel);
      default:
        return null;
    }
  }

  private liftAggregate(rel: Extract<Rel, { kind: 'aggregate' }>): Rel | null {
    if (rel.groupingSets || rel.groupingCalls?.length) return null;
    const input = this.lift(rel.input);
    if (!input) return null;
    const key = { column: this.row, expr: this.r };
    const columns = [this.row, ...rel.columns];
    // GROUP BY: an outer row with no elements has no groups, as its own run would.
    if (rel.groupBy.length > 0) return { ...rel, input, groupBy: [key, ...rel.groupBy], columns };
    // Global: one marker row per outer row gives every R its group; the calls skip it.
    const mark: ResolvedColumn = { id: fresh(), name: '$real', type: T.BOOL };
    const real: Rel = {
      kind: 'project',
      input,
      exprs: [...input.columns.map(colRef), { kind: 'literal', type: T.BOOL, value: true }],
      columns: [...input.columns, mark],
    };
    const empty: Rel = {
      kind: 'project',
      input: this.domain,
      exprs: [this.r, ...input.columns.slice(1).map((c): Expr => ({ kind: 'literal', type: c.type, value: null })), { kind: 'literal', type: T.BOOL, value: false }],
      columns: [this.row, ...input.columns.slice(1).map((c) => ({ ...c, id: fresh() })), { ...mark, id: fresh() }],
    };
    const union: Rel = { kind: 'setop', op: 'union', all: true, inputs: [real, empty], columns: real.columns };
    const isReal = colRef(mark);
    // The calls' expressions are computed on the real rows only: on a marker row (its columns NULL)
    // `IF(x IS NULL, ERROR('...'), x)` would raise an error the per-row run never meets. Column
    // references and constants cannot fail and stay as they are.
    const onReal = (e: Expr): Expr =>
      e.kind === 'column' || e.kind === 'literal' ? e : { kind: 'conditional', type: e.type, op: 'case', whens: [isReal], thens: [e] };
    const aggregates: AggregateCall[] = rel.aggregates.map((a) => ({
      ...a,
      args: a.args.map(onReal),
      orderBy: a.orderBy.map((k) => ({ ...k, expr: onReal(k.expr) })),
      ...(a.having ? { having: { ...a.having, expr: onReal(a.having.expr) } } : {}),
      filter: a.filter ? { kind: 'conditional', type: T.BOOL, op: 'case', whens: [isReal], thens: [a.filter], else: { kind: 'literal', type: T.BOOL, value: false } } : isReal,
    }));
    return { ...rel, input: union, groupBy: [key], aggregates, columns };
  }
}

/**
 * The subquery's value for every row of the batch from one lifted run, or
 * null when its shape is not lifted (or an ARRAY result might pass the row
 * size limit: the per-row path checks each row).
 */
export async function batchedSubquery(s: SubqueryExpr, batch: Batch, layout: ColumnLayout, ctx: ExecContext): Promise<Vector | null> {
  const l = batchedOptions.enabled ? liftOf(s) : null;
  if (!l) return null;
  const n = batch.length;
  const rowIds = new Float64Array(n);
  for (let i = 0; i < n; i++) rowIds[i] = i;
  const bound = new Map<number, Vector>();
  const domainCols: Vector[] = [{ type: T.INT64, length: n, data: rowIds, nulls: null }];
  for (const c of l.domain) {
    const v = outerColumn(c.id, batch, layout, ctx) ?? constantVector(c.type, ctx.outer.get(c.id) ?? null, n);
    bound.set(c.id, v);
    domainCols.push(v);
  }
  const ctes = new Map(ctx.ctes);
  ctes.set(l.domainId, Promise.resolve([{ length: n, columns: domainCols }]));
  const outerRows: OuterRows = { rowColumn: l.row.id, columns: bound };
  const sub: ExecContext = { ...ctx, ctes, outerRows };
  batchedCounters.runs++;
  batchedCounters.rows += n;
  const parts: Batch[] = [];
  for await (const b of executeRel(l.plan, sub)) if (b.length > 0) parts.push(b);
  let out = concatBatches(l.plan.columns.map((c) => c.type), parts);
  if (l.limit) out = await applyAbove(l, perRowLimit(out, l.limit, n), sub);
  const rows = rowsOf(out.columns[0]!, out.length);
  switch (s.mode) {
    case 'exists': {
      const data = new Uint8Array(n);
      for (let j = 0; j < rows.length; j++) data[rows[j]!] = 1;
      return { type: s.type, length: n, data, nulls: null };
    }
    case 'scalar': {
      const at = new Int32Array(n).fill(-1);
      for (let j = 0; j < rows.length; j++) {
        const r = rows[j]!;
        if (at[r]! >= 0) throw new QueryError('Scalar subquery produced more than one element');
        at[r] = j;
      }
      const taken = takeOrNull(out.columns[1]!, at, n);
      return typeEquals(taken.type, s.type) ? taken : vectorFromValues(s.type, Array.from({ length: n }, (_, i) => getValue(taken, i)));
    }
    case 'array': {
      const v = out.columns[1]!;
      // A row over the size limit fails as the per-row path says (it measures each row).
      if (vectorBytes(v) > MAX_ROW_BYTES) return null;
      // Elements grouped by row, each row's in output order (a stable counting sort).
      const offsets = new Int32Array(n + 1);
      for (let j = 0; j < rows.length; j++) offsets[rows[j]! + 1]!++;
      for (let i = 0; i < n; i++) offsets[i + 1]! += offsets[i]!;
      const next = offsets.slice(0, n);
      const order = new Int32Array(rows.length);
      for (let j = 0; j < rows.length; j++) order[next[rows[j]!]!++] = j;
      if (s.type.kind !== 'ARRAY') return null;
      return nestedVector(s.type, n, null, { offsets, child: takeVector(v, order) });
    }
    default:
      return null;
  }
}

/** R values as indexes. */
function rowsOf(v: Vector, n: number): ArrayLike<number> {
  if (v.data instanceof Float64Array) return v.length === n ? v.data : v.data.subarray(0, n);
  return Array.from({ length: n }, (_, i) => Number(getValue(v, i)));
}

/** The rows of `out` within each R's [offset, offset + limit), in order. */
function perRowLimit(out: Batch, limit: LimitRel, n: number): Batch {
  const rows = rowsOf(out.columns[0]!, out.length);
  const seen = new Int32Array(n);
  const sel = new Int32Array(out.length);
  let k = 0;
  const end = limit.limit === null ? Infinity : limit.offset + limit.limit;
  for (let j = 0; j < rows.length; j++) {
    const p = seen[rows[j]!]!++;
    if (p >= limit.offset && p < end) sel[k++] = j;
  }
  if (k === out.length) return out;
  return { length: k, columns: out.columns.map((c) => takeVector(c, sel, k)) };
}

/** The projections above the LIMIT over the rows it kept. */
async function applyAbove(l: Lifted, b: Batch, ctx: ExecContext): Promise<Batch> {
  for (const p of l.above) {
    const layout = layoutOf([l.row, ...p.input.columns]);
    const cols: Vector[] = [b.columns[0]!];
    for (const e of p.exprs) cols.push(await evaluate(e, b, layout, ctx));
    b = { length: b.length, columns: cols };
  }
  return b;
}

/**
 * The outer column `id` for the batch's rows when it is a column of the batch
 * or, inside a lifted run, of the outer batch (taken at R); null when it is
 * only a broadcast binding (ctx.outer).
 */
export function outerColumn(id: number, batch: Batch, layout: ColumnLayout, ctx: ExecContext): Vector | null {
  const idx = layout.get(id);
  if (idx !== undefined) return batch.columns[idx]!;
  const rows = ctx.outerRows;
  if (!rows) return null;
  const v = rows.columns.get(id);
  const r = layout.get(rows.rowColumn);
  if (!v || r === undefined) return null;
  return takeVector(v, batch.columns[r]!.data as Float64Array, batch.length);
}
