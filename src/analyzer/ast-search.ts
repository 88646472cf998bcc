// Searches of the parser's AST that analyzer and planner parts share (calls,
// analytic calls, identifier paths: none entering subqueries; nodes of a kind).
import type * as A from '../../grammar/ast.js';
import { someNode } from '../../grammar/ast-walk.js';

export { someNode };

/** True when a call in an AST expression, outside subqueries, satisfies `pred`. */
export function someCall(e: unknown, pred: (call: { over?: unknown; name?: string[] }) => boolean): boolean {
  return someNode(e, (o) => o.kind === 'FunctionCall' && pred(o as { over?: unknown; name?: string[] }), (o) => o.kind === 'Query');
}

/** True when an AST expression calls an analytic function (outside subqueries). */
export const hasOver = (e: unknown): boolean => someCall(e, (c) => !!c.over);

/** The identifier paths of an expression in source order (not those inside subqueries, which have their own scopes). */
export function pathsOf(n: unknown, out: A.PathExpr[] = []): A.PathExpr[] {
  if (Array.isArray(n)) for (const x of n) pathsOf(x, out);
  else if (n && typeof n === 'object') {
    const k = (n as { kind?: unknown }).kind;
    if (k === 'PathExpr') out.push(n as A.PathExpr);
    else if (k !== 'ScalarSubquery' && k !== 'ArraySubquery' && k !== 'ExistsExpr' && k !== 'Query') for (const v of Object.values(n)) pathsOf(v, out);
  }
  return out;
}

/** The first AST node of one of `kinds` anywhere under `node` (a depth-first walk). */
export function findNode(node: unknown, kinds: readonly string[]): { loc: A.Loc } | undefined {
  if (Array.isArray(node)) {
    for (const x of node) {
      const f = findNode(x, kinds);
      if (f) return f;
    }
    return undefined;
  }
  if (!node || typeof node !== 'object') return undefined;
  if (kinds.includes((node as { kind?: string }).kind ?? '')) return node as { loc: A.Loc };
  for (const v of Object.values(node)) {
    const f = findNode(v, kinds);
    if (f) return f;
  }
  return undefined;
}
