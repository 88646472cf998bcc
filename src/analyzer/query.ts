// Queries: the driver (WITH, set operations, ORDER BY / LIMIT on a finished query), expression subqueries and
// the small plan builders. One SELECT block resolves in select.ts (GROUP BY and the aggregation checks in
// group-by.ts), its FROM clause in from.ts and joins.ts; set operations, WITH, table functions, PIVOT/UNPIVOT
// and pipe operators have their own modules beside this one.
//
// Plan shape of one SELECT block (see README.md):
//   from -> Filter(WHERE) -> Aggregate -> Filter(HAVING) -> Window
//        -> Filter(QUALIFY) -> Project(items + hidden ORDER BY keys)
//        -> Aggregate(DISTINCT) -> Sort -> Limit -> Project(drop hidden)
import type * as A from '../../grammar/ast.js';
import { T, arrayOf, isOrderable, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import type { Analyzer } from './context.js';
import { isBinaryCollation } from '../functions/collation.js';
import { sqlError } from './errors.js';
import { resolveExpr, type ExprCtx } from './expr.js';
import { orderCollation, refuseLiteralOrderKey } from './order-keys.js';
import { coerce, literal, markLoc, originOf } from './coercion.js';
import { callScalar } from './calls.js';
import { constantValue } from './names.js';
import type { Expr, LimitRel, ProjectRel, Rel, SortKey, SubqueryExpr } from './resolved.js';
import { Correlation, Scope, colRef } from './scope.js';
import { Origin, supertype } from './types.js';
import { insideInSubquery } from './sample.js';
import { resolveSetOp } from './set-operations.js';
import { dependencyOrder, resolveCte } from './ctes.js';
import { recursiveWithViolation } from '../../grammar/recursive-with.js';
import { applyPipe, pipeSampleTarget, withoutPipeVars } from './pipe.js';
import { resolveSelect } from './select.js';
import { resolveFrom } from './from.js';

/** A resolved query: its plan plus the output names (parallel to plan.columns). */
export interface RelOut {
  readonly rel: Rel;
  readonly names: readonly string[];
  readonly isValueTable: boolean;
  /** Table aliases the next pipe operator sees (pipe syntax: "a pipe operator can see every alias that exists in the table preceding the pipe"). */
  readonly pipeVars?: readonly PipeVar[];
  /** How many trailing columns only `pipeVars` read (values an alias keeps after `|> SET`/`DROP`); never output. */
  readonly hidden?: number;
}

/** A pipe table alias: its columns by position in the table's columns. */
export interface PipeVar {
  readonly name: string;
  readonly columns: readonly { readonly name: string; readonly index: number }[];
  /** A value table's alias: the row value is this column. */
  readonly valueIndex?: number;
}

// ---------------------------------------------------------------- small builders

export function project(an: Analyzer, input: Rel, exprs: readonly Expr[], names: readonly string[]): ProjectRel {
  const columns = exprs.map((e, i) => (e.kind === 'column' && !e.correlated && input.columns.some((c) => c.id === e.columnId) && false ? input.columns[0]! : an.newColumn(names[i] ?? '', e.type)));
  return { kind: 'project', input, exprs, columns };
}

export function filter(input: Rel, predicate: Expr): Rel {
  return { kind: 'filter', input, predicate, columns: input.columns };
}

export function oneRow(): Rel {
  return { kind: 'values', rows: [[]], columns: [] };
}

function constIntExpr(an: Analyzer, e: A.Expr, what: string): number {
  const x = resolveExpr(an, e, { scope: new Scope(), clause: what });
  // Constant expressions (MOD(@p, 2), 1 + 1) fold to a literal here.
  const v = x.kind === 'literal' ? x.value : constantValue(x);
  if ((x.type.kind !== 'INT64' && originOf(x) !== Origin.Null) || v === undefined) {
    throw sqlError(`${what} expects an integer literal or parameter`, e.loc);
  }
  // A NULL or negative LIMIT/OFFSET that is not a written literal fails as the service's evaluation does.
  const limit = what === 'LIMIT' || what === 'OFFSET';
  const written = e.kind === 'IntLiteral' || (e.kind === 'UnaryExpr' && e.operand.kind === 'IntLiteral');
  if (v === null) throw sqlError(limit ? 'Limit requires non-null count and offset' : `${what} must not be null`, e.loc);
  const n = Number(v as bigint);
  if (n < 0) throw sqlError(limit && !written ? 'Limit requires non-negative count and offset' : `${what} expects a non-negative integer literal or parameter`, e.loc);
  return n;
}

export function implicitAlias(e: A.Expr): string {
  if (e.kind === 'PathExpr') return e.parts[e.parts.length - 1]!;
  if (e.kind === 'FieldAccess') return e.field;
  return '';
}

// ---------------------------------------------------------------- subqueries (expressions)

export function resolveSubquery(an: Analyzer, q: A.Query, ctx: ExprCtx, mode: SubqueryExpr['mode'], loc: A.Loc, inExpr?: Expr): Expr {
  // The reference analyzer's wording for a column DEFAULT, the one clause that sets noSubqueries.
  if (ctx.noSubqueries) throw sqlError(`${ctx.clause.charAt(0).toUpperCase()}${ctx.clause.slice(1)} must not include a subquery`, loc);
  const corr = new Correlation();
  // In HAVING/QUALIFY, select-list aliases of aggregates stay visible inside subqueries
  // (HAVING EXISTS (SELECT * FROM UNNEST(agg_alias))).
  let parent = ctx.scope;
  if (ctx.selectAliases?.size) {
    const aliasScope = new Scope(ctx.scope);
    for (const [name, e] of ctx.selectAliases) {
      if (e.kind === 'column' && !e.correlated && ctx.aggs?.calls.some((c) => c.column.id === e.columnId)) {
        const c = ctx.aggs.calls.find((x) => x.column.id === e.columnId)!.column;
        aliasScope.extra.set(name, { ...c, name });
      }
    }
    if (aliasScope.extra.size) parent = aliasScope;
  }
  const boundary = new Scope(parent, corr);
  const out = mode === 'in' ? insideInSubquery(an, () => resolveQuery(an, q, boundary)) : resolveQuery(an, q, boundary);
  let plan = out.rel;
  const cols = plan.columns;
  let type: SqlType;
  if (mode === 'exists') type = T.BOOL;
  else {
    if (cols.length !== 1 && mode === 'in') throw sqlError('Subquery of type IN must have only one output column', loc);
    if (cols.length !== 1) {
      const what = mode === 'array' ? 'ARRAY subquery' : 'Scalar subquery';
      throw sqlError(`${what} cannot have more than one column unless using SELECT AS STRUCT to build STRUCT values`, loc);
    }
    type = cols[0]!.type;
    if (mode === 'array') {
      if (type.kind === 'ARRAY') throw sqlError('Cannot use array subquery with column of type ' + typeToSql(type) + ' because nested arrays are not supported', loc);
      type = arrayOf(type);
    }
    if (mode === 'in') {
      const st = supertype([
        { type: inExpr!.type, origin: originOf(inExpr!) },
        { type: cols[0]!.type, origin: Origin.Column },
      ]);
      if (!st) throw sqlError(`Cannot execute IN subquery with uncomparable types ${typeToSql(inExpr!.type)} and ${typeToSql(cols[0]!.type)}`, loc);
      inExpr = coerce(inExpr!, st);
      if (st.kind === 'STRING' && !isBinaryCollation(st.collation)) {
        // IN under a collation: both sides compare as collation keys.
        const spec = literal(T.STRING, st.collation!);
        inExpr = callScalar('$collation_key', [inExpr, spec], loc);
        plan = project(an, plan, [callScalar('$collation_key', [coerce(colRef(cols[0]!), st), spec], loc)], [cols[0]!.name]);
      } else if (!typeEquals(cols[0]!.type, st)) plan = project(an, plan, [coerce(colRef(cols[0]!), st)], [cols[0]!.name]);
      type = T.BOOL;
    }
  }
  const e: SubqueryExpr = { kind: 'subquery', type, mode, plan, ...(inExpr ? { inExpr } : {}), correlatedColumns: [...corr.ids] };
  return markLoc(e, loc);
}

// ---------------------------------------------------------------- queries

/** Resolves a full query (WITH, body, ORDER BY, LIMIT, pipes). `outer` is the enclosing scope for correlation. */
export function resolveQuery(an: Analyzer, q: A.Query, outer: Scope | undefined): RelOut {
  // The placement rules of WITH RECURSIVE look at the whole query, once, from its top.
  if (an.queryDepth === 0) {
    const v = recursiveWithViolation(q);
    if (v) throw sqlError(v.message, v.loc);
  }
  an.queryDepth++;
  try {
    return resolveQueryBody(an, q, outer);
  } finally {
    an.queryDepth--;
  }
}

function resolveQueryBody(an: Analyzer, q: A.Query, outer: Scope | undefined): RelOut {
  const ctes: { id: number; name: string; plan: Rel }[] = [];
  if (q.with) {
    an.ctes.push(new Map());
    for (const c of q.with.recursive ? dependencyOrder(q.with.ctes) : q.with.ctes) ctes.push(resolveCte(an, c, q.with.recursive, outer));
  }
  try {
    let out: RelOut;
    if (q.body.kind === 'Select') {
      out = resolveSelect(an, q.body, outer, q.orderBy, q.limit, q.offset);
    } else {
      out = resolveQueryExpr(an, q.body, outer);
      if (q.orderBy?.length) out = orderByOutput(an, out, q.orderBy, outer);
      if (q.limit || q.offset) out = applyLimit(an, out, q.limit, q.offset);
    }
    let pipeCteLevels = 0;
    try {
      for (const [i, p] of q.pipes.entries()) {
        if (p.kind === 'PipeWith') {
          // |> WITH: CTEs visible to the remaining pipe operators of this query.
          an.ctes.push(new Map());
          pipeCteLevels++;
          for (const c of p.recursive ? dependencyOrder(p.ctes) : p.ctes) ctes.push(resolveCte(an, c, p.recursive, outer));
          continue;
        }
        out = applyPipe(an, out, p, outer, p.kind === 'PipeTablesample' ? pipeSampleTarget(q, i) : undefined);
      }
    } finally {
      for (let i = 0; i < pipeCteLevels; i++) an.ctes.pop();
    }
    // A query's table aliases end with it.
    out = withoutPipeVars(an, out);
    if (ctes.length) {
      out = { ...out, rel: { kind: 'with', ctes, body: out.rel, columns: out.rel.columns } };
    }
    return out;
  } finally {
    if (q.with) an.ctes.pop();
  }
}

export function resolveQueryExpr(an: Analyzer, b: A.QueryExpr, outer: Scope | undefined): RelOut {
  switch (b.kind) {
    case 'Select':
      return resolveSelect(an, b, outer);
    case 'Query':
      return resolveQuery(an, b, outer);
    case 'SetOperation':
      return resolveSetOp(an, b, outer);
    case 'FromQuery': {
      const scope = new Scope(outer);
      const rel = resolveFrom(an, b.from, scope, outer);
      const cols = scope.starColumns();
      const exprs = cols.map((c) => colRef(c));
      const names = cols.map((c) => c.name);
      // `FROM UNNEST(array_of_structs)` alone is a value table (its fields resolve by name in later pipes).
      const only = scope.rangeVars.length === 1 ? scope.rangeVars[0]! : undefined;
      const valueTable = !!only?.value && only.value.type.kind === 'STRUCT' && cols.length === 1 && cols[0]!.id === only.value.id;
      const proj = project(an, rel, exprs, valueTable ? [''] : names);
      if (valueTable) return { rel: proj, names: [''], isValueTable: true, ...(only.name ? { pipeVars: [{ name: only.name, columns: [], valueIndex: 0 }] } : {}) };
      // `FROM t AS a JOIN u |> WHERE a.x = u.y`: the FROM clause's table aliases stay nameable in the following pipe operators
      // (not UNNEST ... AS x, where the alias names the element, a column itself; nor an alias that a column's name hides).
      const pos = new Map(cols.map((c, i) => [c.id, i]));
      const pipeVars = scope.rangeVars
        .filter((rv) => rv.name && !rv.value && !names.some((n) => n.toLowerCase() === rv.lname))
        .map((rv) => ({ name: rv.name, columns: rv.columns.filter((c) => pos.has(c.id)).map((c) => ({ name: c.name, index: pos.get(c.id)! })) }));
      return { rel: proj, names, isValueTable: false, ...(pipeVars.length ? { pipeVars } : {}) };
    }
  }
}

// ---------------------------------------------------------------- ORDER BY / LIMIT on a finished query

/** An ORDER BY ordinal past the select list, or below one (the reference's two wordings). */
export function orderOrdinalError(k: number, loc: A.Loc): Error {
  if (k < 1) return sqlError(`ORDER BY column number item is out of range. Column numbers must be greater than or equal to one. Found : ${k}`, loc);
  return sqlError(`ORDER BY is out of SELECT column number range: ${k}`, loc);
}

function orderByOutput(an: Analyzer, out: RelOut, items: readonly A.OrderByItem[], outer: Scope | undefined): RelOut {
  const scope = new Scope(outer);
  scope.addRangeVar({ name: '', lname: '', columns: out.rel.columns.map((c, i) => ({ ...c, name: out.names[i] ?? '' })) });
  const keys: SortKey[] = items.map((o) => {
    let expr: Expr;
    refuseLiteralOrderKey(o);
    if (o.expr.kind === 'IntLiteral') {
      const k = Number(o.expr.text);
      if (!(k >= 1 && k <= out.rel.columns.length)) throw orderOrdinalError(k, o.expr.loc);
      expr = colRef(out.rel.columns[k - 1]!);
    } else {
      expr = resolveExpr(an, o.expr, { scope, clause: 'ORDER BY clause' });
    }
    checkOrderable(expr, o.expr.loc);
    const descending = o.direction === 'DESC';
    const collation = orderCollation(an, o, expr.type);
    return { expr, descending, nullsFirst: o.nulls ? o.nulls === 'FIRST' : !descending, ...(collation ? { collation } : {}) };
  });
  return { ...out, rel: { kind: 'sort', input: out.rel, keys, columns: out.rel.columns } };
}

export function checkOrderable(e: Expr, loc: A.Loc): void {
  if (!isOrderable(e.type)) throw sqlError(`ORDER BY does not support expressions of type ${typeToSql(e.type)}`, loc);
}

export function applyLimit(an: Analyzer, out: RelOut, limit: A.Expr | undefined, offset: A.Expr | undefined): RelOut {
  const rel: LimitRel = {
    kind: 'limit',
    input: out.rel,
    limit: limit ? constIntExpr(an, limit, 'LIMIT') : null,
    offset: offset ? constIntExpr(an, offset, 'OFFSET') : 0,
    columns: out.rel.columns,
  };
  return { ...out, rel };
}
