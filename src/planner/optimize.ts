// The optimizer: a fixed sequence of small rewrite rules over the resolved
// plan (each rule is one module under rules/). Rules must preserve each
// node's output columns (ids, order, types) except pruning, which only drops
// columns nobody reads.
import type { EvalContext } from '../functions/registry.js';
import type { Rel } from '../analyzer/resolved.js';
import { mapOwnExprs, rewriteExpr } from '../analyzer/rewrite.js';
import { scalarSubqueriesToJoins, subqueriesToJoins } from './rules/decorrelate.js';
import { extractEquiKeys } from './rules/equikeys.js';
import { foldConstants } from './rules/fold.js';
import { pruneColumns } from './rules/prune.js';
import { pushdownPredicates } from './rules/pushdown.js';
import { topN } from './rules/topn.js';
import { windowTopN } from './rules/window-topn.js';

/** `r` with `g` applied to each of its direct child relations. */
function mapChildren(r: Rel, g: (child: Rel) => Rel): Rel {
  switch (r.kind) {
    case 'filter':
    case 'project':
    case 'aggregate':
    case 'sort':
    case 'limit':
    case 'window':
    case 'sample':
      return { ...r, input: g(r.input) } as Rel;
    case 'join':
      return { ...r, left: g(r.left), right: g(r.right) };
    case 'setop':
      return { ...r, inputs: r.inputs.map(g) };
    case 'with':
      return { ...r, ctes: r.ctes.map((c) => ({ ...c, plan: g(c.plan) })), body: g(r.body) };
    case 'recursive_cte':
      return { ...r, base: g(r.base), recursive: g(r.recursive) };
    default:
      return r;
  }
}

/** Applies `f` to every node bottom-up (children first), including plans of subqueries. */
export function transformUp(rel: Rel, f: (r: Rel) => Rel): Rel {
  const k = mapChildren(rel, (c) => transformUp(c, f));
  // Subquery plans inside expressions get the same treatment.
  const withSubs = hasSubqueries(k) ? mapOwnExprs(k, (x) => rewriteExpr(x, (e) => (e.kind === 'subquery' ? { ...e, plan: transformUp(e.plan, f) } : undefined))) : k;
  return f(withSubs);
}

let subqueryFlag = false;
function hasSubqueries(rel: Rel): boolean {
  subqueryFlag = false;
  mapOwnExprs(rel, (e) => {
    if (!subqueryFlag) rewriteExpr(e, (x) => (x.kind === 'subquery' ? ((subqueryFlag = true), x) : undefined));
    return e;
  });
  return subqueryFlag;
}

/** Applies `f` top-down (parents first), re-entering the rewritten node's children. */
export function transformDown(rel: Rel, f: (r: Rel) => Rel): Rel {
  return mapChildren(f(rel), (c) => transformDown(c, f));
}

export interface OptimizeOptions {
  readonly eval: EvalContext;
}

export function optimize(rel: Rel, opts: OptimizeOptions): Rel {
  let r = foldConstants(rel, opts.eval);
  r = transformUp(r, subqueriesToJoins);
  r = transformUp(r, scalarSubqueriesToJoins);
  r = transformDown(r, pushdownPredicates);
  r = transformUp(r, extractEquiKeys);
  r = transformUp(r, topN);
  r = transformUp(r, windowTopN);
  r = pruneColumns(r);
  return r;
}
