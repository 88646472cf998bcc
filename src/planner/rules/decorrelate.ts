// Subqueries in WHERE become joins: `x IN (SELECT y ...)` (uncorrelated) is a
// semi join on x = y; `[NOT] EXISTS (SELECT ... WHERE inner.k = outer.k AND ...)`
// whose outer references sit only in the top filter's conjuncts is a semi
// (anti) join on those conjuncts. The executor then hashes the subquery once
// instead of re-running it per outer row. NOT IN keeps its NULL semantics by
// staying a subquery. Correlated scalar aggregate subqueries in SELECT or
// WHERE become LEFT JOINs with the aggregate grouped by the correlation keys
// (scalarSubqueriesToJoins).
import type { Expr, Rel, ResolvedColumn, SubqueryExpr } from '../../analyzer/resolved.js';
import { callScalar } from '../../analyzer/calls.js';
import { lookupFunction } from '../../functions/registry.js';
import { rewriteExpr, visitRelExprs } from '../../analyzer/rewrite.js';
import { conjoin, conjuncts } from './util.js';

function readsAny(e: Expr, ids: ReadonlySet<number>): boolean {
  let hit = false;
  rewriteExpr(e, (x) => {
    if (x.kind === 'column' && x.correlated && ids.has(x.columnId)) hit = true;
    if (x.kind === 'subquery' && x.correlatedColumns.some((id) => ids.has(id))) hit = true;
    return undefined;
  });
  return hit;
}

function planReadsAny(rel: Rel, ids: ReadonlySet<number>): boolean {
  let hit = false;
  visitRelExprs(rel, (x) => {
    if (x.kind === 'column' && x.correlated && ids.has(x.columnId)) hit = true;
    if (x.kind === 'subquery' && x.correlatedColumns.some((id) => ids.has(id))) hit = true;
  });
  return hit;
}

/** References to the outer (left) row become plain column references of the join. */
function uncorrelate(e: Expr, ids: ReadonlySet<number>): Expr {
  return rewriteExpr(e, (x) => (x.kind === 'column' && x.correlated && ids.has(x.columnId) ? { kind: 'column', type: x.type, columnId: x.columnId } : undefined));
}

function toJoin(left: Rel, sq: SubqueryExpr, negated: boolean): Rel | undefined {
  const leftIds = new Set(left.columns.map((c) => c.id));
  if (!sq.correlatedColumns.every((id) => leftIds.has(id))) return undefined;
  if (sq.mode === 'in') {
    if (negated || sq.correlatedColumns.length || !sq.inExpr) return undefined;
    const right = sq.plan;
    const cond = callScalar('$equal', [sq.inExpr, { kind: 'column', type: right.columns[0]!.type, columnId: right.columns[0]!.id }], undefined);
    return { kind: 'join', joinType: 'semi', left, right, condition: cond, lateral: false, columns: left.columns };
  }
  if (sq.mode !== 'exists' || sq.correlatedColumns.length === 0) return undefined;
  let plan = sq.plan;
  while (plan.kind === 'project') plan = plan.input;
  if (plan.kind !== 'filter') return undefined;
  const ids = new Set(sq.correlatedColumns);
  const outer: Expr[] = [];
  const inner: Expr[] = [];
  for (const c of conjuncts(plan.predicate)) (readsAny(c, ids) ? outer : inner).push(c);
  if (planReadsAny(plan.input, ids) || inner.some((c) => readsAny(c, ids))) return undefined;
  const innerPred = conjoin(inner);
  const right: Rel = innerPred ? { kind: 'filter', input: plan.input, predicate: innerPred, columns: plan.input.columns } : plan.input;
  const cond = conjoin(outer.map((c) => uncorrelate(c, ids)));
  return { kind: 'join', joinType: negated ? 'anti' : 'semi', left, right, ...(cond ? { condition: cond } : {}), lateral: false, columns: left.columns };
}

export function subqueriesToJoins(rel: Rel): Rel {
  if (rel.kind !== 'filter') return rel;
  let input = rel.input;
  const keep: Expr[] = [];
  for (const c of conjuncts(rel.predicate)) {
    const negated = c.kind === 'logical' && c.op === 'not' && c.args.length === 1 ? c.args[0]! : undefined;
    const sq = negated ?? c;
    if (sq.kind === 'subquery') {
      const j = toJoin(input, sq, !!negated);
      if (j) {
        input = j;
        continue;
      }
    }
    keep.push(c);
  }
  if (input === rel.input) return rel;
  const p = conjoin(keep);
  return p ? { ...rel, input, predicate: p, columns: input.columns } : input;
}

// ---------------------------------------------------------------- scalar aggregates

/**
 * Aggregates whose value over no rows is NULL, or 0 for the counting ones
 * (COALESCE(x, 0) after a LEFT JOIN gives both).
 */
const NULL_WHEN_EMPTY = new Set(['SUM', 'AVG', 'MIN', 'MAX', 'ANY_VALUE', 'ARRAY_AGG', 'STRING_AGG', 'LOGICAL_AND', 'LOGICAL_OR']);
const ZERO_WHEN_EMPTY = new Set(['$count_star', 'COUNT', 'COUNTIF']);

/** Whether `e` reads correlated columns only, all of them in `ids` (no subqueries, lambdas or volatile calls). */
function outerOnly(e: Expr, ids: ReadonlySet<number>): boolean {
  let ok = true;
  let any = false;
  rewriteExpr(e, (x) => {
    if (x.kind === 'column') {
      if (x.correlated && ids.has(x.columnId)) any = true;
      else ok = false;
    } else if (x.kind === 'subquery' || x.kind === 'lambda' || (x.kind === 'call' && (lookupFunction(x.name) as { volatile?: boolean } | undefined)?.volatile)) ok = false;
    return undefined;
  });
  return ok && any;
}

/**
 * A scalar subquery `(SELECT agg(...) FROM r WHERE r.k = outer.x AND <r only>)`
 * correlated to `input`'s columns by equalities on plain columns of r: as a
 * LEFT JOIN of `input` with r grouped by those columns, and the expression
 * that reads the aggregate from the joined row. The subquery otherwise runs
 * once per distinct outer binding, each run a scan of r; joined, r is read
 * and grouped once. Undefined when the subquery is not of this shape.
 */
function scalarAggregateJoin(input: Rel, sq: SubqueryExpr): { join: Rel; value: Expr } | undefined {
  if (sq.mode !== 'scalar' || sq.correlatedColumns.length === 0) return undefined;
  const inputIds = new Set(input.columns.map((c) => c.id));
  if (!sq.correlatedColumns.every((id) => inputIds.has(id))) return undefined;
  // SELECT agg: projections of one column over a global aggregate.
  let plan = sq.plan;
  let out = plan.columns[0]!.id;
  while (plan.kind === 'project') {
    const e = plan.exprs[plan.columns.findIndex((c) => c.id === out)];
    if (!e || e.kind !== 'column' || e.correlated) return undefined;
    out = e.columnId;
    plan = plan.input;
  }
  if (plan.kind !== 'aggregate' || plan.groupBy.length || plan.groupingSets || plan.groupingCalls?.length) return undefined;
  const agg = plan;
  const call = agg.aggregates.find((c) => c.column.id === out);
  if (!call || !(NULL_WHEN_EMPTY.has(call.name) || ZERO_WHEN_EMPTY.has(call.name))) return undefined;
  if (agg.input.kind !== 'filter') return undefined;
  const ids = new Set(sq.correlatedColumns);
  const below = agg.input.input;
  if (planReadsAny(below, ids) || agg.aggregates.some((c) => [...c.args, ...c.orderBy.map((k) => k.expr), ...(c.filter ? [c.filter] : []), ...(c.having ? [c.having.expr] : [])].some((x) => readsAny(x, ids)))) return undefined;
  const belowIds = new Set(below.columns.map((c) => c.id));
  const keys: { inner: ResolvedColumn; outer: Expr }[] = [];
  const inner: Expr[] = [];
  for (const c of conjuncts(agg.input.predicate)) {
    if (!readsAny(c, ids)) {
      inner.push(c);
      continue;
    }
    if (c.kind !== 'call' || c.name !== '$equal' || c.args.length !== 2) return undefined;
    const [a, b] = c.args as [Expr, Expr];
    const [col, other] = a.kind === 'column' && !a.correlated && belowIds.has(a.columnId) ? [a, b] : b.kind === 'column' && !b.correlated && belowIds.has(b.columnId) ? [b, a] : [undefined, undefined];
    if (!col || col.kind !== 'column' || !outerOnly(other, ids) || keys.some((k) => k.inner.id === col.columnId)) return undefined;
    keys.push({ inner: below.columns.find((x) => x.id === col.columnId)!, outer: uncorrelate(other, ids) });
  }
  if (keys.length === 0) return undefined;
  const innerPred = conjoin(inner);
  const grouped: Rel = {
    kind: 'aggregate',
    input: innerPred ? { kind: 'filter', input: below, predicate: innerPred, columns: below.columns } : below,
    // The key columns keep their ids: nothing above the join reads the subquery's columns.
    groupBy: keys.map((k) => ({ column: k.inner, expr: { kind: 'column', type: k.inner.type, columnId: k.inner.id } })),
    aggregates: agg.aggregates,
    columns: [...keys.map((k) => k.inner), ...agg.aggregates.map((c) => c.column)],
  };
  const cond = conjoin(keys.map((k) => callScalar('$equal', [k.outer, { kind: 'column', type: k.inner.type, columnId: k.inner.id }], undefined)));
  const join: Rel = { kind: 'join', joinType: 'left', left: input, right: grouped, condition: cond!, lateral: false, columns: [...input.columns, ...grouped.columns] };
  const ref: Expr = { kind: 'column', type: call.column.type, columnId: call.column.id };
  const value: Expr = ZERO_WHEN_EMPTY.has(call.name) ? { kind: 'conditional', type: call.column.type, op: 'coalesce', whens: [], thens: [ref, { kind: 'literal', type: call.column.type, value: 0n }] } : ref;
  return { join, value };
}

/** `e` with its decorrelatable scalar subqueries read from joins added to `input` (not inside lambdas). */
function joinScalarSubqueries(e: Expr, input: { rel: Rel }): Expr {
  return rewriteExpr(e, (x) => {
    if (x.kind === 'lambda') return x;
    if (x.kind !== 'subquery') return undefined;
    const j = scalarAggregateJoin(input.rel, x);
    if (!j) return x;
    input.rel = j.join;
    return j.value;
  });
}

/**
 * Correlated scalar aggregate subqueries in a SELECT list, a WHERE clause,
 * GROUP BY keys or aggregate arguments become LEFT JOINs with the aggregate grouped by the correlation keys
 * (scalarAggregateJoin). A filter keeps its columns: a projection over it
 * drops the joined ones.
 */
export function scalarSubqueriesToJoins(rel: Rel): Rel {
  if (rel.kind !== 'project' && rel.kind !== 'filter' && rel.kind !== 'aggregate') return rel;
  const input = { rel: rel.input };
  if (rel.kind === 'project') {
    const exprs = rel.exprs.map((e) => joinScalarSubqueries(e, input));
    return input.rel === rel.input ? rel : { ...rel, input: input.rel, exprs };
  }
  if (rel.kind === 'aggregate') {
    // Arguments and keys read the joined row (SUM((SELECT COUNT(*) ... WHERE o.k = t.k))).
    const groupBy = rel.groupBy.map((g) => ({ ...g, expr: joinScalarSubqueries(g.expr, input) }));
    const aggregates = rel.aggregates.map((c) => ({ ...c, args: c.args.map((a) => joinScalarSubqueries(a, input)) }));
    return input.rel === rel.input ? rel : { ...rel, input: input.rel, groupBy, aggregates };
  }
  const predicate = joinScalarSubqueries(rel.predicate, input);
  if (input.rel === rel.input) return rel;
  const filtered: Rel = { kind: 'filter', input: input.rel, predicate, columns: input.rel.columns };
  return { kind: 'project', input: filtered, exprs: rel.columns.map((c): Expr => ({ kind: 'column', type: c.type, columnId: c.id })), columns: rel.columns };
}
