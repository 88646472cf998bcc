// WITH RECURSIVE placement, as the service has it: syntactic rules over a
// parsed query, shared by the analyzer (which refuses) and the conformance
// harness (which skips the reference's cases that break them).
import type * as A from './ast.js';
import { mentionsTable, someNode } from './ast-walk.js';

/**
 * The service's placement rules for WITH RECURSIVE (query-syntax.md, "CTE rules and constraints"; the reference
 * implementation has none of them): it is only allowed at the top level of a query, no WITH may appear inside it,
 * and its recursive union is UNION ALL (UNION DISTINCT isn't allowed; also the "Recursive CTEs" grammar). The first
 * rule `root` breaks, or undefined. The wording paraphrases the page.
 */
export function recursiveWithViolation(root: A.Query): { message: string; loc: A.Loc } | undefined {
  let found: { message: string; loc: A.Loc } | undefined;
  const clauses = (q: A.Query): { recursive: boolean; ctes: A.Cte[]; loc: A.Loc }[] => [
    ...(q.with ? [{ recursive: q.with.recursive, ctes: q.with.ctes, loc: q.with.loc }] : []),
    ...q.pipes.flatMap((p) => (p.kind === 'PipeWith' ? [{ recursive: p.recursive, ctes: p.ctes, loc: p.loc }] : [])),
  ];
  const check = (q: A.Query, top: boolean): void => {
    for (const w of clauses(q)) {
      if (!w.recursive) continue;
      if (!top) found ??= { message: 'WITH RECURSIVE is only allowed at the top level of a query, not in a subquery', loc: w.loc };
      for (const c of w.ctes) {
        if (someNode(c.query, (o) => o.kind === 'Query' && clauses(o as A.Query).length > 0)) found ??= { message: 'WITH is not allowed inside WITH RECURSIVE', loc: c.loc };
        const b = c.query.body;
        const pipe = c.query.pipes[0];
        const distinct = (b.kind === 'SetOperation' && b.op === 'UNION' && b.quantifier === 'DISTINCT') || (pipe?.kind === 'PipeSetOp' && pipe.op === 'UNION' && pipe.quantifier === 'DISTINCT');
        if (distinct && mentionsTable(c.query, c.name.toLowerCase())) found ??= { message: 'UNION DISTINCT is not allowed in WITH RECURSIVE: a recursive CTE unions with UNION ALL', loc: c.loc };
      }
    }
  };
  check(root, true);
  someNode(root, (o) => {
    if (o !== root && o.kind === 'Query') check(o as A.Query, false);
    return found !== undefined;
  });
  return found;
}

/** True when a query under `root` has a WITH RECURSIVE clause (the page: not allowed in functions or materialized views). */
export function hasRecursiveWith(root: unknown): boolean {
  return someNode(root, (o) => (o.kind === 'WithClause' || o.kind === 'PipeWith') && (o as { recursive?: boolean }).recursive === true);
}
