// Subqueries in WHERE become joins: `x IN (SELECT y ...)` (uncorrelated) is a
// semi join on x = y; `[NOT] EXISTS (SELECT ... WHERE inner.k = outer.k AND ...)`
// whose outer references sit only in the top filter's conjuncts is a semi
// (anti) join on those conjuncts. The executor then hashes the subquery once
// instead of re-running it per outer row. NOT IN keeps its NULL semantics by
// staying a subquery.
import type { Expr, Rel, SubqueryExpr } from '../../analyzer/resolved.js';
import { callScalar } from '../../analyzer/expr.js';
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
