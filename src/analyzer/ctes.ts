// WITH [RECURSIVE]: each CTE's plan, the order its references need, and the
// checks on a recursive term (only the recursive reference's position and
// shapes the reference allows).

import type * as A from '../../grammar/ast.js';
import { typeEquals, typeToSql } from '../types/types.js';
import type { Analyzer } from './context.js';
import { lookupFunction } from '../functions/registry.js';
import { sqlError } from './errors.js';
import type { Rel } from './resolved.js';
import { Scope } from './scope.js';
import { Origin, canCoerce } from './types.js';
import { hasOver, someCall, someNode } from './ast-search.js';
import { mentionsTable } from '../../grammar/ast-walk.js';
import { resolveQuery, resolveQueryExpr } from './query.js';
import { castTo, correspondingInputs, literalOrigin, literalValue } from './set-operations.js';

export function resolveCte(an: Analyzer, c: A.Cte, recursive: boolean, enclosing: Scope | undefined): { id: number; name: string; plan: Rel } {
  // A WITH query stands alone: no names of an enclosing query (a SQL function's parameters stay visible).
  const outer = enclosing && !c.seesOuter ? Object.assign(new Scope(enclosing), { opaque: true }) : enclosing;
  const map = an.ctes[an.ctes.length - 1]!;
  const lname = c.name.toLowerCase();
  if (map.has(lname)) throw sqlError(`Duplicate alias ${c.name} for WITH subquery`, c.loc);
  const id = an.newId();
  const selfRef = recursive && mentionsTable(c.query, lname);
  if (selfRef && c.query.pipes.length === 1 && c.query.pipes[0]!.kind === 'PipeSetOp' && c.query.pipes[0].queries.length === 1 && !c.query.orderBy && !c.query.limit) {
    // `base |> UNION ... (recursive term)` is the recursive UNION.
    const p = c.query.pipes[0];
    const { kind: _k, queries, loc, ...mods } = p;
    void _k;
    const left: A.QueryExpr = c.query.body;
    c = { ...c, query: { ...c.query, pipes: [], body: { kind: 'SetOperation', loc, ...mods, left, right: queries[0]! } } };
  }
  const body = c.query.body;
  if (selfRef && body.kind === 'SetOperation' && body.op === 'UNION' && !c.query.orderBy && !c.query.limit && !c.query.pipes.length) {
    // A WITH inside the recursive CTE's own query is visible to both terms.
    const innerCtes: { id: number; name: string; plan: Rel }[] = [];
    if (c.query.with) {
      an.ctes.push(new Map());
      try {
        for (const ic of c.query.with.recursive ? dependencyOrder(c.query.with.ctes) : c.query.with.ctes) innerCtes.push(resolveCte(an, ic, c.query.with.recursive, outer));
      } catch (e) {
        an.ctes.pop();
        throw e;
      }
    }
    let r: { id: number; name: string; plan: Rel };
    try {
      r = resolveRecursiveCte(an, c, body, id, outer);
    } finally {
      if (c.query.with) an.ctes.pop();
    }
    map.set(lname, { id, name: c.name, columns: r.plan.columns, isValueTable: false });
    return innerCtes.length ? { ...r, plan: { kind: 'with', ctes: innerCtes, body: r.plan, columns: r.plan.columns } } : r;
  }
  if (selfRef) {
    if (c.query.orderBy) throw sqlError('A recursive query may not use ORDER BY', c.loc);
    if (c.query.limit) throw sqlError('A recursive query may not use LIMIT', c.loc);
    throw sqlError('Recursive query does not have the form <non-recursive-term> UNION [ALL|DISTINCT] <recursive-term>', c.loc);
  }
  const out = resolveQuery(an, c.query, outer);
  const cols = out.rel.columns.map((col, i) => ({ ...col, name: out.names[i] ?? '' }));
  map.set(lname, { id, name: c.name, columns: cols, isValueTable: out.isValueTable });
  return { id, name: c.name, plan: out.rel };
}

/**
 * WITH RECURSIVE: every CTE sees every other, so resolve referenced ones first. Two or more CTEs that read
 * each other in a ring are refused (query-syntax.md, CTE visibility: cycles aren't allowed; the reference's wording).
 */
export function dependencyOrder(ctes: readonly A.Cte[]): A.Cte[] {
  const out: A.Cte[] = [];
  const state = new Map<A.Cte, number>();
  const path: A.Cte[] = [];
  const visit = (c: A.Cte): void => {
    if (state.get(c)) return;
    state.set(c, 1);
    path.push(c);
    for (const d of ctes) {
      if (d === c || !mentionsTable(c.query, d.name.toLowerCase())) continue;
      if (state.get(d) === 1) {
        const ring = [...path.slice(path.indexOf(d)), d].map((x) => x.name);
        throw sqlError(`Unsupported WITH entry dependency cycle: ${ring.join(' => ')}`, c.loc);
      }
      visit(d);
    }
    path.pop();
    state.set(c, 2);
    out.push(c);
  };
  for (const c of ctes) visit(c);
  return out;
}

/** `base UNION ALL recursive-term` of a self-referencing CTE (the name is bound in the innermost CTE level). */
function resolveRecursiveCte(an: Analyzer, c: A.Cte, body: A.SetOperation, id: number, outer: Scope | undefined): { id: number; name: string; plan: Rel } {
  const map = an.ctes[an.ctes.length - 1]!;
  const lname = c.name.toLowerCase();
  {
    // The last UNION input is the recursive term; the ones before it are the base.
    if (mentionsTable(body.left, lname)) throw sqlError('Recursive reference is not allowed in non-recursive UNION term', body.loc);
    checkRecursiveTerm(body.right, c.name, body.loc);
    const base = resolveQueryExpr(an, body.left, outer);
    const cols = base.rel.columns.map((col, i) => an.newColumn(base.names[i] ?? '', col.type));
    map.set(lname, { id, name: c.name, columns: cols, isValueTable: false });
    let rec = resolveQueryExpr(an, body.right, outer);
    if (body.corresponding || body.byName) rec = correspondingInputs(an, body, [base, rec], `${body.op} ${body.quantifier}`)[1]!;
    if (rec.rel.columns.length !== cols.length) {
      throw sqlError(`Queries in UNION ALL have mismatched column count; query 1 has ${cols.length} columns, query 2 has ${rec.rel.columns.length} columns`, body.loc);
    }
    // The recursive term's columns take the base's types: they must coerce to them (the reference's check and wording).
    rec.rel.columns.forEach((rc, i) => {
      const origin = literalOrigin(rec.rel, i);
      if (!typeEquals(rc.type, cols[i]!.type) && !canCoerce(rc.type, cols[i]!.type, origin, origin !== Origin.Column ? literalValue(rec.rel, i) : undefined)) {
        throw sqlError(`Cannot coerce column ${i + 1} of recursive term (${typeToSql(rc.type)}) to column type in non-recursive term (${typeToSql(cols[i]!.type)})`, body.right.loc);
      }
    });
    rec = castTo(an, rec, cols.map((x) => x.type), body.loc, 'UNION ALL');
    const plan: Rel = { kind: 'recursive_cte', cteId: id, base: base.rel, recursive: rec.rel, columns: cols };
    return { id, name: c.name, plan };
  }
}

/**
 * The reference's limits on the recursive term of WITH RECURSIVE: one reference to the
 * CTE, never inside an expression subquery, not under DISTINCT, GROUP BY, an aggregate or an
 * analytic function, not on the outer-joined side of a join.
 */
function checkRecursiveTerm(term: A.QueryExpr, name: string, loc: A.Loc): void {
  const lname = name.toLowerCase();
  let refs = 0;
  const inExprs = (...es: unknown[]): void => {
    if (es.some((e) => mentionsTable(e, lname))) throw sqlError('A recursive reference from inside an expression subquery is not allowed', loc);
  };
  const query = (q: A.QueryExpr): void => {
    switch (q.kind) {
      case 'Query':
        for (const c of q.with?.ctes ?? []) query(c.query);
        query(q.body);
        inExprs(q.orderBy, q.limit, q.offset, q.pipes);
        // The recursion is evaluated a step at a time: a whole-result ORDER BY or LIMIT over it has no meaning (the reference's words).
        if (q.limit && mentionsTable(q.body, lname)) throw sqlError('A query containing a recursive reference may not use a LIMIT clause', loc);
        if (q.orderBy && mentionsTable(q.body, lname)) throw sqlError('A subquery containing a recursive reference may not contain an ORDER BY clause', loc);
        return;
      case 'SetOperation':
        query(q.left);
        query(q.right);
        return;
      case 'FromQuery':
        from(q.from);
        return;
      case 'Select':
        if (q.from) {
          from(q.from);
          const aggregate = (e: unknown) => someCall(e, (c) => !c.over && lookupFunction(c.name!.join('.'))?.kind === 'aggregate');
          if (mentionsTable(q.from, lname) && (q.distinct || q.groupBy || q.items.some((i) => i.kind === 'SelectExpr' && aggregate(i.expr)) || aggregate(q.having))) {
            throw sqlError('A subquery containing a recursive reference may not use DISTINCT, GROUP BY, or any aggregate function', loc);
          }
          // A window over one iteration's rows has no meaning for the whole recursion (recursive CTE rules).
          if (mentionsTable(q.from, lname) && (q.items.some((i) => i.kind === 'SelectExpr' && hasOver(i.expr)) || hasOver(q.qualify))) {
            throw sqlError('A subquery containing a recursive reference may not use an analytic function', loc);
          }
          // query-syntax.md, Recursive term rules: [NOT] IN and [NOT] EXISTS subqueries aren't allowed in the SELECT
          // clause, and NOT IN isn't allowed in the WHERE clause.
          if (mentionsTable(q.from, lname)) {
            if (someNode(q.items, (o) => o.kind === 'ExistsExpr' || (o.kind === 'InExpr' && !!(o as A.InExpr).query))) {
              throw sqlError('IN and EXISTS subqueries are not allowed in the SELECT list of a recursive term', loc);
            }
            if (someNode(q.where, (o) => o.kind === 'InExpr' && (o as A.InExpr).not && !!(o as A.InExpr).query)) {
              throw sqlError('A NOT IN subquery is not allowed in the WHERE clause of a recursive term', loc);
            }
          }
        }
        inExprs(q.items, q.where, q.groupBy, q.having, q.qualify, q.window);
        return;
    }
  };
  const from = (f: A.FromItem): void => {
    switch (f.kind) {
      case 'TableRef':
        if (f.path.length === 1 && f.path[0]!.toLowerCase() === lname && ++refs > 1) throw sqlError(`Multiple recursive references to table '${name}' are not allowed`, loc);
        return;
      case 'SubqueryRef':
        query(f.query);
        return;
      case 'JoinRef': {
        from(f.left);
        from(f.right);
        const l = mentionsTable(f.left, lname), r = mentionsTable(f.right, lname);
        if (f.joinType === 'FULL' && (l || r)) throw sqlError('A query containing a recursive reference may not be used as an operand of a FULL OUTER JOIN', loc);
        if (f.joinType === 'LEFT' && r) throw sqlError('A query containing a recursive reference may not be used as the right operand of a LEFT JOIN', loc);
        if (f.joinType === 'RIGHT' && l) throw sqlError('A query containing a recursive reference may not be used as the left operand of a RIGHT JOIN', loc);
        inExprs(f.on);
        return;
      }
      case 'PivotRef':
      case 'UnpivotRef':
        from(f.input);
        return;
      default:
        inExprs(f);
    }
  };
  query(term);
}

