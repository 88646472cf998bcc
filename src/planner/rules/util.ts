// Helpers shared by the planner rules.
import type { Expr } from '../../analyzer/resolved.js';
import { T } from '../../types/types.js';
import { rewriteExpr } from '../../analyzer/rewrite.js';

export function conjuncts(e: Expr): Expr[] {
  return e.kind === 'logical' && e.op === 'and' ? e.args.flatMap(conjuncts) : [e];
}

export function conjoin(es: readonly Expr[]): Expr | undefined {
  if (es.length === 0) return undefined;
  if (es.length === 1) return es[0];
  return { kind: 'logical', type: T.BOOL, op: 'and', args: es };
}

/**
 * Non-correlated column ids an expression reads, or undefined when it cannot
 * be moved (subqueries, lambdas, correlated references, volatile calls).
 */
export function columnsOf(e: Expr): Set<number> | undefined {
  const out = new Set<number>();
  let movable = true;
  rewriteExpr(e, (x) => {
    if (x.kind === 'column') {
      if (x.correlated) movable = false;
      else out.add(x.columnId);
    } else if (x.kind === 'subquery' || x.kind === 'lambda') movable = false;
    return undefined;
  });
  return movable ? out : undefined;
}
