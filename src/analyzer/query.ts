// Query blocks: FROM (tables, views, CTE references, joins, UNNEST,
// subqueries), WHERE, GROUP BY / aggregation, HAVING, windows, QUALIFY, SELECT
// list, DISTINCT, ORDER BY, LIMIT. Set operations, WITH, table functions,
// PIVOT/UNPIVOT and pipe operators have their own modules beside this one.
//
// Plan shape of one SELECT block (see README.md):
//   from -> Filter(WHERE) -> Aggregate -> Filter(HAVING) -> Window
//        -> Filter(QUALIFY) -> Project(items + hidden ORDER BY keys)
//        -> Aggregate(DISTINCT) -> Sort -> Limit -> Project(drop hidden)

import { compileGraphQuery } from './graph-query.js';
import type * as A from '../../grammar/ast.js';
import { T, arrayOf, isGroupable, isOrderable, structOf, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import type { Analyzer } from './context.js';
import { lookupFunction } from '../functions/registry.js';
import { isBinaryCollation } from '../functions/collation.js';
import { sqlError } from './errors.js';
import { AggCollector, WindowCollector, resolveExpr, type ExprCtx } from './expr.js';
import { orderCollation, isPlainLiteral, refuseLiteralOrderKey } from './order-keys.js';
import { coerce, literal, locOf, markLoc, originOf, refNameOf, requireBool } from './coercion.js';
import { collationGrouper, callScalar } from './calls.js';
import { exprEquals } from './expr-equality.js';
import { constantValue, resolveTableRef } from './names.js';
import { isVolatileExpr, mapRelExprs, rewriteExpr } from './rewrite.js';
import { matchRecognizeQuery } from './match-recognize.js';
import { checkPrivacyUnit, withAggregationThreshold, withDifferentialPrivacy } from './privacy.js';
import type { AggregateRel, Expr, LimitRel, ProjectRel, Rel, ResolvedColumn, SortKey, SubqueryExpr, UnnestRel } from './resolved.js';
import { Correlation, Scope, colRef, type RangeVar } from './scope.js';
import { Origin, supertype } from './types.js';
import { resolveTvf } from './table-functions.js';
import { checkSample, insideInSubquery, noteTableRef, sample } from './sample.js';
import { resolveSetOp } from './set-operations.js';
import { mergeWindow } from './window-calls.js';
import { resolvePivot, resolveUnpivot } from './pivot.js';
import { dependencyOrder, resolveCte } from './ctes.js';
import { recursiveWithViolation } from '../../grammar/recursive-with.js';
import { applyPipe, pipeInputs, pipeRangeVars, pipeSampleTarget, withoutPipeVars } from './pipe.js';
import { pathsOf } from './ast-search.js';
import { groupByAllItems } from './group-by-all.js';

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

function oneRow(): Rel {
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

function implicitAlias(e: A.Expr): string {
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
function orderOrdinalError(k: number, loc: A.Loc): Error {
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

function checkOrderable(e: Expr, loc: A.Loc): void {
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

// ---------------------------------------------------------------- SELECT

export interface SelItem {
  name: string;
  expr: Expr;
  loc: A.Loc;
  /** Explicit alias or implicit (path) name: usable by GROUP BY / ORDER BY. */
  aliasable: boolean;
}

function hasColumnIn(e: Expr, ids: ReadonlySet<number>): boolean {
  let found = false;
  rewriteExpr(e, (x) => {
    if (x.kind === 'column' && ids.has(x.columnId)) found = true;
    if (x.kind === 'subquery' && x.correlatedColumns.some((id) => ids.has(id))) found = true;
    return undefined;
  });
  return found;
}

/** A SELECT without FROM has one row and no clause that filters, groups, windows or orders it. */
function checkNoFromClauses(sel: A.Select, orderBy: readonly A.OrderByItem[] | undefined): void {
  const clause = (what: string, loc: A.Loc): never => {
    throw sqlError(`Query without FROM clause cannot ${what}`, loc);
  };
  if (sel.where) clause('have a WHERE clause', sel.where.loc);
  if (sel.groupBy) clause('have a GROUP BY clause', sel.groupBy.loc);
  if (sel.having) clause('have a HAVING clause', sel.having.loc);
  if (sel.qualify) clause('have an QUALIFY clause', sel.qualify.loc);
  if (sel.window?.length) clause('have a WINDOW clause', sel.window[0]!.loc);
  if (sel.distinct) clause('use SELECT DISTINCT', sel.loc);
  if (orderBy?.length) clause('have an ORDER BY clause', orderBy[0]!.loc);
}

/** The pipe operators that resolve as a SELECT with clause names of their own (see resolveSelect). */
export type PipeForm = 'pipe SELECT' | 'pipe EXTEND' | 'pipe WHERE' | 'pipe AGGREGATE';

export function resolveSelect(
  an: Analyzer,
  sel: A.Select,
  outer: Scope | undefined,
  orderBy?: readonly A.OrderByItem[],
  limit?: A.Expr,
  offset?: A.Expr,
  carry?: (scope: Scope) => SelItem[],
  /** The pipe operator this SELECT stands for: `pipe SELECT` / `pipe EXTEND` lists refuse aggregate functions; the
   * others only name their clauses in errors as the reference analyzer does (`pipe WHERE clause`, `AGGREGATE list`). */
  pipeForm?: PipeForm,
): RelOut {
  let dpUnit: A.PathExpr | undefined;
  if (sel.withModifier?.name === 'DIFFERENTIAL_PRIVACY') ({ sel, unit: dpUnit } = withDifferentialPrivacy(an, sel));
  const threshold = sel.withModifier?.name === 'AGGREGATION_THRESHOLD';
  if (!sel.from) checkNoFromClauses(sel, orderBy);
  const scope = new Scope(outer);
  // Views with an aggregation threshold analysis rule are read only by the FROM clause of such a SELECT.
  const savedViews = an.thresholdViews;
  an.thresholdViews = threshold ? [] : undefined;
  let rel: Rel;
  try {
    rel = sel.from ? resolveFrom(an, sel.from, scope, outer) : oneRow();
    if (threshold) sel = withAggregationThreshold(an, sel, an.thresholdViews!);
  } finally {
    an.thresholdViews = savedViews;
  }
  if (dpUnit) checkPrivacyUnit(an, dpUnit, scope);

  if (sel.where) {
    const w = resolveExpr(an, sel.where, { scope, clause: pipeForm === 'pipe WHERE' ? 'pipe WHERE clause' : 'WHERE clause' });
    rel = filter(rel, requireBool(w, sel.where.loc, 'WHERE clause'));
  }

  const named = new Map<string, A.WindowSpec>();
  for (const w of sel.window ?? []) {
    if (named.has(w.name.toLowerCase())) throw sqlError(`Duplicate window alias ${w.name}`, w.spec.loc ?? sel.loc);
    // A named window may build only on one defined before it in the clause (never a later one, or itself), and
    // every definition keeps the inheritance rules, whether or not a call uses it.
    mergeWindow(w.spec, named, w.spec.loc ?? sel.loc);
    named.set(w.name.toLowerCase(), w.spec);
  }
  const aggs = new AggCollector(scope);
  const wins = new WindowCollector(named);
  const listForm = pipeForm === 'pipe SELECT' || pipeForm === 'pipe EXTEND' ? pipeForm : undefined;
  const ctx: ExprCtx = listForm ? { scope, clause: listForm, wins } : { scope, clause: 'SELECT list', aggs, wins };

  // SELECT list (pre-aggregation form; aggregates become column refs).
  const items: SelItem[] = [];
  for (const it of sel.items) {
    if (it.kind === 'SelectStar') items.push(...expandStar(an, it, scope, ctx));
    else {
      const expr = resolveExpr(an, it.expr, ctx);
      const alias = it.alias ?? implicitAlias(it.expr);
      items.push({ name: alias, expr, loc: it.loc, aliasable: !!alias });
    }
  }
  if (carry) items.push(...carry(scope));
  if (!sel.from && aggs.calls.length > 0) throw sqlError('SELECT without FROM clause cannot use aggregation', sel.loc);
  if (!sel.from && wins.calls.length > 0) throw sqlError('SELECT without FROM clause cannot use analytic functions', sel.loc);

  // GROUP BY keys.
  const keys: { expr: Expr; name: string; loc: A.Loc }[] = [];
  let groupingSets: number[][] | undefined;
  if (sel.groupBy) {
    const r = resolveGroupBy(an, sel.groupBy, items, scope, aggs, wins);
    keys.push(...r.keys);
    groupingSets = r.sets;
  }

  // HAVING and QUALIFY may name SELECT-list aliases (they win over FROM columns).
  const selectAliases = new Map<string, Expr>();
  for (const it of items) if (it.aliasable && !selectAliases.has(it.name.toLowerCase())) selectAliases.set(it.name.toLowerCase(), it.expr);
  aggs.selectAliases = selectAliases;
  const groupedBeforeHaving = !!sel.groupBy || aggs.calls.length > 0 || aggs.grouping.length > 0;
  // HAVING takes no analytic function, not even inside an aggregate (QUALIFY is where they filter).
  const having = sel.having ? resolveExpr(an, sel.having, { ...ctx, wins: undefined, clause: 'HAVING clause', selectAliases }) : undefined;
  if (sel.having && !groupedBeforeHaving) {
    // HAVING filters groups: without GROUP BY or SELECT-list aggregation there are none (the service's analyzer).
    if (aggs.calls.length > 0) throw sqlError('The HAVING clause only allows aggregation if GROUP BY or SELECT list aggregation is present', sel.having.loc);
    throw sqlError('The HAVING clause requires GROUP BY or aggregation to be present', sel.having.loc);
  }
  const qualify = sel.qualify ? resolveExpr(an, sel.qualify, { ...ctx, clause: 'QUALIFY clause', selectAliases }) : undefined;

  // ORDER BY keys: select-list ordinals and aliases first, then expressions over the FROM scope.
  const order: { ref?: number; expr?: Expr; item: A.OrderByItem }[] = [];
  for (const o of orderBy ?? []) {
    refuseLiteralOrderKey(o);
    if (o.expr.kind === 'IntLiteral') {
      const k = Number(o.expr.text);
      if (!(k >= 1 && k <= items.length)) throw orderOrdinalError(k, o.expr.loc);
      order.push({ ref: k - 1, item: o });
      continue;
    }
    if (o.expr.kind === 'PathExpr' && o.expr.parts.length === 1) {
      const l = o.expr.parts[0]!.toLowerCase();
      const matches = items.map((s, i) => (s.aliasable && s.name.toLowerCase() === l ? i : -1)).filter((i) => i >= 0);
      if (matches.length > 1 && !matches.every((i) => exprEquals(items[i]!.expr, items[matches[0]!]!.expr))) {
        throw sqlError(`Column name ${o.expr.parts[0]} is ambiguous`, o.expr.loc);
      }
      if (matches.length) {
        order.push({ ref: matches[0]!, item: o });
        continue;
      }
    }
    // Inside expressions too, select-list aliases come before the FROM clause's names (`ORDER BY ABS(alias)`).
    order.push({ expr: resolveExpr(an, o.expr, { ...ctx, clause: 'ORDER BY clause', selectAliases }), item: o });
  }

  const aggregating = !!sel.groupBy || aggs.calls.length > 0 || aggs.grouping.length > 0 || !!having;
  let selectExprs = items.map((i) => i.expr);
  let havingExpr = having;
  let qualifyExpr = qualify;
  let orderExprs = order.map((o) => o.expr);
  const windowCalls = wins.calls;

  if (aggregating) {
    const keyCols = keys.map((k) => an.newColumn(k.name || '$groupbycol', k.expr.type));
    for (const k of keys) {
      if (!isGroupable(k.expr.type)) throw sqlError(`Grouping by expressions of type ${typeToSql(k.expr.type)} is not allowed`, k.loc);
    }
    const fromIds = new Set<number>();
    for (const rv of allRangeColumns(scope)) fromIds.add(rv);
    const groupingCalls = aggs.grouping.map((g) => {
      const i = keys.findIndex((k) => exprEquals(k.expr, g.arg));
      if (i < 0) throw sqlError('GROUPING must have an argument that exists within the group-by expression list', g.loc);
      return { column: g.column, keyIndex: i };
    });
    const agg: AggregateRel = {
      kind: 'aggregate',
      input: rel,
      // Collated keys group under their collation; the reference applies it to
      // plain GROUP BY only (ROLLUP/CUBE/GROUPING SETS keep binary grouping).
      groupBy: keys.map((k, i) => ({ column: keyCols[i]!, expr: (groupingSets ? undefined : collationGrouper(k.expr.type)?.(k.expr)) ?? k.expr })),
      aggregates: aggs.calls,
      ...(groupingSets ? { groupingSets } : {}),
      ...(groupingCalls.length ? { groupingCalls } : {}),
      columns: [...keyCols, ...aggs.calls.map((c) => c.column), ...groupingCalls.map((g) => g.column)],
    };
    rel = agg;
    // A value table's alias (UNNEST(...) AS x) is named a table alias in the refusal, as the service does; its fields are columns.
    const aliasIds = new Map(scope.rangeVars.flatMap((rv) => (rv.value ? [[rv.value.id, rv.lname] as const] : [])));
    const post = (e: Expr, clause: string): Expr => postAggregate(e, keys, keyCols, fromIds, clause, aliasIds);
    const list = pipeForm === 'pipe AGGREGATE' ? 'AGGREGATE list' : 'SELECT list';
    selectExprs = selectExprs.map((e) => post(e, list));
    havingExpr = havingExpr && post(havingExpr, 'HAVING clause');
    qualifyExpr = qualifyExpr && post(qualifyExpr, 'QUALIFY clause');
    orderExprs = orderExprs.map((e) => e && post(e, 'ORDER BY clause'));
    for (let i = 0; i < windowCalls.length; i++) {
      const w = windowCalls[i]!;
      windowCalls[i] = {
        ...w,
        args: w.args.map((a) => post(a, list)),
        partitionBy: w.partitionBy.map((a) => post(a, 'PARTITION BY')),
        orderBy: w.orderBy.map((k) => ({ ...k, expr: post(k.expr, 'Window ORDER BY') })),
      };
    }
  }
  if (havingExpr) rel = filter(rel, requireBool(havingExpr, sel.having!.loc, 'HAVING clause'));
  if (windowCalls.length) {
    rel = { kind: 'window', input: rel, calls: windowCalls, columns: [...rel.columns, ...windowCalls.map((w) => w.column)] };
  }
  if (qualifyExpr) {
    if (!windowCalls.length) throw sqlError('The QUALIFY clause requires analytic function to be present', sel.qualify!.loc);
    rel = filter(rel, requireBool(qualifyExpr, sel.qualify!.loc, 'QUALIFY clause'));
  }

  // Project: select items, then hidden ORDER BY expressions.
  const hidden: Expr[] = [];
  const lateDistinct = new Map<number, Expr>();
  const orderIdx: number[] = order.map((o, i) => {
    if (o.ref !== undefined) return o.ref;
    const e = orderExprs[i]!;
    const same = selectExprs.findIndex((s) => exprEquals(s, e));
    if (same >= 0) return same;
    if (sel.distinct) {
      // Computed after DISTINCT from the select items it is built of (ORDER BY t.f for SELECT DISTINCT t).
      lateDistinct.set(i, e);
      return -1;
    }
    hidden.push(e);
    return items.length + hidden.length - 1;
  });
  const names = items.map((i) => i.name);
  let proj: Rel = project(an, rel, [...selectExprs, ...hidden], [...names, ...hidden.map(() => '$orderby')]);
  rel = proj;

  if (sel.distinct) {
    for (const [i, c] of rel.columns.entries()) {
      if (!isGroupable(c.type)) throw sqlError(`Column ${names[i] || i + 1} of type ${typeToSql(c.type)} cannot be used in SELECT DISTINCT`, items[i]!.loc);
    }
    const cols = rel.columns.map((c) => an.newColumn(c.name, c.type));
    rel = { kind: 'aggregate', input: rel, groupBy: rel.columns.map((c, i) => ({ column: cols[i]!, expr: collationGrouper(c.type)?.(colRef(c)) ?? colRef(c) })), aggregates: [], columns: cols };
  }

  if (order.length) {
    const distinctOut = rel.columns;
    const keysOut: SortKey[] = order.map((o, i) => {
      let expr: Expr;
      const late = lateDistinct.get(i);
      if (late) {
        expr = rewriteExpr(late, (x) => {
          const k = selectExprs.findIndex((se) => exprEquals(se, x));
          return k >= 0 ? colRef(distinctOut[k]!) : undefined;
        });
        const visible = new Set(distinctOut.map((c) => c.id));
        rewriteExpr(expr, (x) => {
          if (x.kind === 'column' && !x.correlated && !visible.has(x.columnId)) {
            // Named by the path that reaches it, as written: `column y` for a lone name (a column or a value
            // table's field), `t.y` for a longer path, `table alias v` for a value table's range variable.
            const rvs = ctx.scope.rangeVars;
            const path = pathsOf(o.item.expr).find((pe) => {
              const h = ctx.scope.peek(pe.parts[0]!);
              if (h?.kind === 'column' || h?.kind === 'field') return h.column.id === x.columnId;
              return h?.kind === 'range' && (h.rv.value?.id === x.columnId || h.rv.columns.some((c) => c.id === x.columnId));
            });
            const column = rvs.flatMap((rv) => rv.columns).find((c) => c.id === x.columnId)?.name;
            const alias = column === undefined ? rvs.find((rv) => rv.value?.id === x.columnId)?.name : undefined;
            const what = path && path.parts.length > 1 ? `${path.parts.join('.')} `
              : path && ctx.scope.peek(path.parts[0]!)?.kind !== 'range' ? `column ${path.parts[0]} `
              : column ? `column ${column} ` : alias ? `table alias ${alias} ` : 'column ';
            throw sqlError(`ORDER BY clause expression references ${what}which is not visible after SELECT DISTINCT`, o.item.expr.loc);
          }
          return undefined;
        });
      } else expr = colRef(rel.columns[orderIdx[i]!]!);
      checkOrderable(expr, o.item.expr.loc);
      const descending = o.item.direction === 'DESC';
      const collation = orderCollation(an, o.item, expr.type);
      return { expr, descending, nullsFirst: o.item.nulls ? o.item.nulls === 'FIRST' : !descending, ...(collation ? { collation } : {}) };
    });
    rel = { kind: 'sort', input: rel, keys: keysOut, columns: rel.columns };
  }
  let out: RelOut = { rel, names, isValueTable: false };
  if (limit || offset) out = applyLimit(an, out, limit, offset);
  rel = out.rel;
  if (hidden.length) {
    const vis = rel.columns.slice(0, items.length);
    rel = project(an, rel, vis.map((c) => colRef(c)), names);
  }

  if (sel.asMode === 'STRUCT') {
    const type = structOf(rel.columns.map((c, i) => ({ name: names[i] ?? '', type: c.type })));
    rel = project(an, rel, [{ kind: 'make_struct', type, fields: rel.columns.map((c) => colRef(c)) }], ['']);
    return { rel, names: [''], isValueTable: true };
  }
  if (sel.asMode === 'VALUE') {
    if (items.length !== 1) throw sqlError('SELECT AS VALUE query must have exactly one column', sel.loc);
    return { rel, names: [''], isValueTable: true };
  }
  void proj;
  return { rel, names, isValueTable: false };
}

function allRangeColumns(scope: Scope): number[] {
  const ids: number[] = [];
  for (const rv of scope.rangeVars) {
    for (const c of rv.columns) ids.push(c.id);
    if (rv.value) ids.push(rv.value.id);
  }
  for (const c of scope.extra.values()) ids.push(c.id);
  return ids;
}

/** The end of the ungrouped-reference error: pipe AGGREGATE has no grouped select items, so its list says only 'not aggregated'. */
function ungrouped(clause: string): string {
  return clause === 'AGGREGATE list' ? 'which is not aggregated' : 'which is neither grouped nor aggregated';
}

/** Rewrites a pre-aggregation expression over the aggregate's output; ungrouped column refs are errors. */
function postAggregate(e: Expr, keys: readonly { expr: Expr; selectRef?: boolean }[], keyCols: readonly ResolvedColumn[], fromIds: ReadonlySet<number>, clause: string, aliasIds: ReadonlyMap<number, string> = new Map()): Expr {
  // A grouped column reference wins over a grouped expression containing it
  // (ZetaSQL: `SELECT a + 1 ... GROUP BY ROLLUP(a, a + 1)` is key(a) + 1).
  const isPath = (x: Expr): boolean => x.kind === 'column' || (x.kind === 'field' && isPath(x.arg));
  const bare = keys.filter((k) => isPath(k.expr)).map((k) => k.expr);
  const containsBare = (x: Expr): boolean => {
    let found = false;
    rewriteExpr(x, (y) => {
      if (!found && isPath(y) && bare.some((b) => exprEquals(b, y))) found = true;
      return undefined;
    });
    return found;
  };
  const each = (x: Expr): Expr | undefined => {
    // (Keys named by a select alias or ordinal are that select item itself.)
    const shadowed = bare.length > 0 && !isPath(x) && containsBare(x);
    const k = keys.findIndex((kk) => exprEquals(kk.expr, x));
    if (k >= 0 && (!shadowed || keys[k]!.selectRef)) return colRef(keyCols[k]!);
    if (k >= 0) {
      // The grouped column inside wins only where that leaves nothing ungrouped: in
      // `GROUP BY b, IF(d > a, b, '')` the select item `IF(d > a, b, '')` is the second key.
      try {
        return rewriteExpr(x, (y) => (y === x ? undefined : each(y)));
      } catch (err) {
        if (err instanceof Error && /which is (neither grouped nor|not) aggregated/.test(err.message)) return colRef(keyCols[k]!);
        throw err;
      }
    }
    if (x.kind === 'field' && isPath(x) && refNameOf(x) === undefined) {
      // A written field path (`t.s.b`, `s.b`) none of whose prefixes is grouped is named whole, as written (ZetaSQL's name scope).
      const names: string[] = [];
      let p: Expr = x;
      let grouped = false;
      for (; p.kind === 'field'; p = p.arg) {
        grouped ||= keys.some((k) => exprEquals(k.expr, p));
        if (refNameOf(p) !== undefined) break;
        names.unshift(p.arg.type.kind === 'STRUCT' ? p.arg.type.fields[p.fieldIndex]!.name : '');
      }
      let root: Expr = p;
      while (root.kind === 'field') root = root.arg;
      grouped ||= keys.some((k) => exprEquals(k.expr, p) || exprEquals(k.expr, root));
      const written = refNameOf(p);
      if (!grouped && written && root.kind === 'column' && !root.correlated && fromIds.has(root.columnId)) {
        throw sqlError(`${clause} expression references ${[written, ...names].join('.')} ${ungrouped(clause)}`, locOf(x));
      }
    }
    if (x.kind === 'column' && !x.correlated && fromIds.has(x.columnId)) {
      const name = refNameOf(x) ?? String(x.columnId);
      // A lone name is a `column` (or a value table's `table alias`); `t.y` is named as written, as the reference does.
      const what = name.includes('.') ? name : `${aliasIds.get(x.columnId) === name.toLowerCase() ? 'table alias' : 'column'} ${name}`;
      throw sqlError(`${clause} expression references ${what} ${ungrouped(clause)}`, locOf(x));
    }
    if (x.kind === 'subquery' && x.correlatedColumns.some((id) => fromIds.has(id))) {
      // Correlated references to this block's columns must be grouping keys: a grouped column,
      // or a grouped field path of one (`g` of `FROM UNNEST([STRUCT(1 AS g)])` is a field of the row).
      const map = new Map<number, number>();
      const viaPaths = new Set<number>();
      for (const id of x.correlatedColumns) {
        if (!fromIds.has(id)) continue;
        const k = keys.findIndex((kk) => kk.expr.kind === 'column' && kk.expr.columnId === id);
        if (k >= 0) map.set(id, keyCols[k]!.id);
        else viaPaths.add(id);
      }
      const refused = (name: string | undefined) => sqlError(`An expression references column ${name ?? ''} which is neither grouped nor aggregated`, locOf(x));
      const pathKeys = new Set<number>();
      const plan = mapRelExprs(x.plan, (y) => {
        if (y.kind === 'field' && viaPaths.size) {
          const root = (z: Expr): Expr => (z.kind === 'field' ? root(z.arg) : z);
          const r = root(y);
          if (r.kind === 'column' && r.correlated && viaPaths.has(r.columnId)) {
            const plain = rewriteExpr(y, (z) => (z.kind === 'column' && z.correlated ? { kind: 'column', type: z.type, columnId: z.columnId } : undefined));
            const k = keys.findIndex((kk) => exprEquals(kk.expr, plain));
            if (k < 0) throw refused(y.arg.type.kind === 'STRUCT' ? y.arg.type.fields[y.fieldIndex]?.name : undefined);
            pathKeys.add(keyCols[k]!.id);
            return colRef(keyCols[k]!, true);
          }
        }
        if (y.kind !== 'column' || !y.correlated) return undefined;
        if (viaPaths.has(y.columnId)) throw refused(refNameOf(y));
        return map.has(y.columnId) ? { ...y, columnId: map.get(y.columnId)! } : undefined;
      });
      const inExpr = x.inExpr ? postAggregate(x.inExpr, keys, keyCols, fromIds, clause, aliasIds) : undefined;
      const correlatedColumns = [...x.correlatedColumns.filter((id) => !viaPaths.has(id)).map((id) => map.get(id) ?? id), ...pathKeys];
      return { ...x, plan, ...(inExpr ? { inExpr } : {}), correlatedColumns };
    }
    return undefined;
  };
  return rewriteExpr(e, each);
}

function resolveGroupBy(
  an: Analyzer,
  g: A.GroupBy,
  items: readonly SelItem[],
  scope: Scope,
  aggs: AggCollector,
  wins: WindowCollector,
): { keys: { expr: Expr; name: string; loc: A.Loc; selectRef?: boolean }[]; sets?: number[][] } {
  const keys: { expr: Expr; name: string; loc: A.Loc; selectRef?: boolean }[] = [];
  const aggIds = () => new Set(aggs.calls.map((c) => c.column.id).concat(wins.calls.map((w) => w.column.id), aggs.grouping.map((x) => x.column.id)));
  const keyIndex = (expr: Expr, name: string, loc: A.Loc, selectRef = false): number => {
    const i = keys.findIndex((k) => exprEquals(k.expr, expr));
    if (i >= 0) {
      if (selectRef) keys[i]!.selectRef = true;
      return i;
    }
    keys.push({ expr, name, loc, ...(selectRef ? { selectRef } : {}) });
    return keys.length - 1;
  };
  const one = (e: A.Expr): number => {
    // An integer is a select-list ordinal; any other plain literal is refused (typed literals group).
    if (isPlainLiteral(e)) throw sqlError('Cannot GROUP BY literal values', e.loc);
    if (e.kind === 'IntLiteral') {
      const k = Number(e.text);
      if (!(k >= 1 && k <= items.length)) throw sqlError(`GROUP BY is out of SELECT column number range: ${k}`, e.loc);
      const it = items[k - 1]!;
      if (hasColumnIn(it.expr, aggIds())) throw sqlError(`Column ${k} contains an aggregation function, which is not allowed in GROUP BY`, e.loc);
      return keyIndex(it.expr, it.name, e.loc, true);
    }
    if (e.kind === 'PathExpr' && e.parts.length === 1) {
      const l = e.parts[0]!.toLowerCase();
      const named = items.filter((s) => s.aliasable && s.name.toLowerCase() === l);
      // query-syntax.md, Ambiguous aliases: a name the SELECT list gives two different expressions is ambiguous.
      if (named.some((s) => !exprEquals(s.expr, named[0]!.expr))) throw sqlError(`Column name ${e.parts[0]} is ambiguous`, e.loc);
      const it = named[0];
      // A select alias wins unless the same name is a FROM column the alias merely repeats.
      if (it && !hasColumnIn(it.expr, aggIds())) {
        const fromHit = scope.peek(e.parts[0]!);
        if (!fromHit || fromHit.kind === 'ambiguous' || it.expr.kind !== 'column' || true) return keyIndex(it.expr, it.name, e.loc, true);
      }
      // An alias of an aggregate (and of no FROM column) cannot be a grouping key.
      if (it && !scope.peek(e.parts[0]!)) throw sqlError(`Column ${e.parts[0]} contains an aggregation function, which is not allowed in GROUP BY`, e.loc);
    }
    const x = resolveExpr(an, e, { scope, clause: 'GROUP BY clause' });
    return keyIndex(x, implicitAlias(e), e.loc);
  };
  if (g.all) {
    const ids = aggIds();
    for (const it of groupByAllItems(items, new Set(allRangeColumns(scope)), (x) => hasColumnIn(x.expr, ids))) keyIndex(it.expr, it.name, it.loc, true);
    return { keys };
  }
  // A parenthesized list inside ROLLUP/CUBE is one multi-column unit.
  const unit = (e: A.Expr): number[] => (e.kind === 'StructExpr' && e.syntax === 'tuple' ? e.fields.map((f) => one(f.expr)) : [one(e)]);
  // Grouping sets: the cross product of each item's sets.
  let sets: number[][] = [[]];
  let plain = true;
  const itemSets = (it: A.GroupingItem): number[][] => {
    switch (it.kind) {
      case 'Rollup': {
        plain = false;
        const ks = it.exprs.map(unit);
        const out: number[][] = [];
        for (let i = ks.length; i >= 0; i--) out.push(ks.slice(0, i).flat());
        return out;
      }
      case 'Cube': {
        plain = false;
        const ks = it.exprs.map(unit);
        const out: number[][] = [];
        for (let m = (1 << ks.length) - 1; m >= 0; m--) out.push(ks.filter((_, i) => m & (1 << (ks.length - 1 - i))).flat());
        return out;
      }
      case 'GroupingSets': {
        plain = false;
        const out: number[][] = [];
        for (const s of it.sets) {
          if (s.kind === 'StructExpr' && s.syntax === 'tuple') out.push(s.fields.map((f) => one(f.expr)));
          else out.push(...itemSets(s));
        }
        return out;
      }
      case 'EmptyGroupingSet':
        plain = false;
        return [[]];
      default:
        return [[one(it)]];
    }
  };
  for (const it of g.items) {
    const s = itemSets(it);
    const next: number[][] = [];
    for (const a of sets) for (const b of s) next.push([...a, ...b.filter((x) => !a.includes(x))]);
    sets = next;
  }
  return plain ? { keys } : { keys, sets };
}

function expandStar(an: Analyzer, it: A.SelectStar, scope: Scope, ctx: ExprCtx): SelItem[] {
  let cols: { name: string; expr: Expr }[];
  if (!it.qualifier) {
    const sc = scope.starColumns();
    if (sc.length === 0 && scope.rangeVars.length === 0) throw sqlError('SELECT * must have a FROM clause', it.loc);
    cols = [];
    for (const c of sc) {
      const valueRv = scope.rangeVars.find((rv) => rv.value?.id === c.id);
      if (valueRv && c.type.kind === 'STRUCT') {
        c.type.fields.forEach((f, i) => cols.push({ name: f.name, expr: { kind: 'field', type: f.type, arg: colRef(c), fieldIndex: i } }));
      } else cols.push({ name: c.name, expr: colRef(c) });
    }
  } else {
    const q = it.qualifier;
    const rv = q.kind === 'PathExpr' && q.parts.length === 1 ? scope.findRangeVar(q.parts[0]!.toLowerCase()) : undefined;
    if (rv && !rv.value) cols = rv.columns.map((c) => ({ name: c.name, expr: colRef(c) }));
    else {
      const base = resolveExpr(an, q, ctx);
      if (base.type.kind !== 'STRUCT') throw sqlError(`Dot-star is not supported for type ${typeToSql(base.type)}`, it.loc);
      cols = base.type.fields.map((f, i) => ({ name: f.name, expr: { kind: 'field' as const, type: f.type, arg: base, fieldIndex: i } }));
    }
  }
  if (it.except) {
    const seen = new Set<string>();
    for (const ex of it.except) {
      if (!cols.some((c) => c.name.toLowerCase() === ex.toLowerCase())) throw sqlError(`Column ${ex} in SELECT * EXCEPT list does not exist`, it.loc);
      if (seen.has(ex.toLowerCase())) throw sqlError(`Duplicate column ${ex} in SELECT * EXCEPT list`, it.loc);
      seen.add(ex.toLowerCase());
    }
    const ex = new Set(it.except.map((x) => x.toLowerCase()));
    cols = cols.filter((c) => !ex.has(c.name.toLowerCase()));
    if (cols.length === 0) throw sqlError('SELECT * expands to zero columns after applying EXCEPT', it.loc);
  }
  if (it.replace) {
    const seen = new Set<string>();
    for (const r of it.replace) {
      const i = cols.findIndex((c) => c.name.toLowerCase() === r.alias.toLowerCase());
      if (i < 0) throw sqlError(`Column ${r.alias} in SELECT * REPLACE list does not exist`, it.loc);
      if (seen.has(r.alias.toLowerCase())) throw sqlError(`Duplicate column ${r.alias} in SELECT * REPLACE list`, it.loc);
      seen.add(r.alias.toLowerCase());
      cols[i] = { name: cols[i]!.name, expr: resolveExpr(an, r.expr, ctx) };
    }
  }
  return cols.map((c) => ({ name: c.name, expr: c.expr, loc: it.loc, aliasable: !!c.name }));
}

// ---------------------------------------------------------------- FROM

/** Range variable over a relation's columns with display names. */
export function rangeOver(name: string, rel: Rel, names: readonly string[]): RangeVar {
  return { name, lname: name.toLowerCase(), columns: rel.columns.map((c, i) => ({ id: c.id, type: c.type, name: names[i] ?? c.name })) };
}

/**
 * Resolves one FROM item into `scope` (adding its range variables) and
 * returns its relation. `outer` is the enclosing query's scope: derived
 * tables see it but not their FROM siblings.
 */
export function resolveFrom(an: Analyzer, item: A.FromItem, scope: Scope, outer: Scope | undefined): Rel {
  if (item.matchRecognize) {
    const { matchRecognize: mr, ...input } = item;
    const inputAlias = 'alias' in input && input.alias ? input.alias : input.kind === 'TableRef' ? input.path[input.path.length - 1] : undefined;
    const q = matchRecognizeQuery(an, input as A.FromItem, inputAlias, mr.spec, mr.loc);
    item = { kind: 'SubqueryRef', loc: mr.loc, query: q, ...(mr.alias ? { alias: mr.alias } : {}) };
  }
  switch (item.kind) {
    case 'JoinRef':
      return resolveJoin(an, item, scope, outer);
    case 'TableRef':
    case 'UnnestRef':
    case 'SubqueryRef':
    case 'TvfRef':
    case 'PivotRef':
    case 'UnpivotRef': {
      const r = resolveLeaf(an, item, scope, outer);
      for (const rv of r.rvs) addFromRangeVar(scope, rv, item.loc, r.arrayScan);
      scope.starList = [...(scope.starList ?? []), ...r.star];
      return r.rel;
    }
    default: {
      const x: { kind: string; loc: A.Loc } = item;
      throw sqlError(`Unsupported FROM item ${x.kind}`, x.loc);
    }
  }
}

/** The range variables holding an UNNEST's aliased WITH OFFSET column: its alias is a name of the FROM clause too. */
const offsetVars = new WeakSet<RangeVar>();

function fromName(rv: RangeVar): string | undefined {
  return rv.lname || (offsetVars.has(rv) ? rv.columns[0]!.name.toLowerCase() : undefined);
}

/**
 * Adds a FROM item's range variable. The names of one FROM clause (explicit or implicit aliases, explicit
 * WITH OFFSET aliases) are unique; the error is worded by the kind of the later item, as the reference words it.
 */
function addFromRangeVar(scope: Scope, rv: RangeVar, loc: A.Loc, arrayScan = false): void {
  const n = fromName(rv);
  if (n && scope.rangeVars.some((o) => fromName(o) === n)) {
    const shown = rv.lname ? rv.name : rv.columns[0]!.name;
    throw sqlError(arrayScan ? `Duplicate alias ${shown} found` : `Duplicate table alias ${shown} in the same FROM clause`, loc);
  }
  scope.addRangeVar(rv);
}

export interface Leaf {
  rel: Rel;
  rvs: RangeVar[];
  star: ResolvedColumn[];
  /** True when the relation reads columns of earlier FROM items or of an enclosing query (correlated). */
  lateral: boolean;
  /** The columns a correlated UNNEST reads from outside itself (earlier FROM items and enclosing queries). */
  correlatedIds?: ReadonlySet<number>;
  /** An UNNEST (explicit or by path): its name clashes are worded as the reference words them. */
  arrayScan?: boolean;
}

function resolveLeaf(an: Analyzer, item: A.FromItem, scope: Scope, outer: Scope | undefined): Leaf {
  switch (item.kind) {
    case 'TableRef': {
      // `FROM t, t.arr` / `FROM t.arr`: a path starting at a visible range variable is an implicit UNNEST.
      const first = item.path[0]!;
      if (item.systemTime && item.path.length === 1 && an.findCte(first)) throw sqlError('FOR SYSTEM_TIME AS OF cannot be used with tables defined in WITH clause', item.systemTime.loc);
      if (item.path.length > 1 || !an.findCte(first)) {
        const hit = first.includes('.') ? undefined : scope.peek(first);
        // A one-name path is always a table (query-syntax.md, field_path: "If a path has only one name, it's
        // interpreted as a table").
        if (hit && hit.kind !== 'ambiguous' && item.path.length > 1) {
          if (item.sample) checkSample(an, item.sample, { kind: 'array' }, item.loc);
          const alias = item.alias ?? item.path[item.path.length - 1]!;
          return unnestLeaf(an, [{ kind: 'PathExpr', loc: item.loc, parts: item.path }], alias, item.withOffset, scope, item.loc, undefined, undefined, true);
        }
      }
      const pipe = pipeInputs.get(item);
      if (pipe && (pipe.pipeVars || pipe.hidden)) {
        // The current table of a pipe: its visible columns unqualified, its table aliases by name.
        const hiddenIds = new Set(pipe.rel.columns.slice(pipe.rel.columns.length - (pipe.hidden ?? 0)).map((c) => c.id));
        const name = item.alias ?? '';
        const rv: RangeVar = pipe.isValueTable
          ? { name, lname: name.toLowerCase(), columns: [], value: { ...pipe.rel.columns[0]!, name } }
          : { ...rangeOver(name, pipe.rel, pipe.names), ...(hiddenIds.size ? { hidden: hiddenIds } : {}) };
        const star = rv.value ? [rv.value] : rv.columns.filter((c) => !hiddenIds.has(c.id));
        return { rel: pipe.rel, rvs: [rv, ...pipeRangeVars(pipe)], star, lateral: false };
      }
      const r = resolveTableRef(an, item, outer);
      noteTableRef(item, r.target);
      const rv = r.isValueTable
        ? { name: r.alias, lname: r.alias.toLowerCase(), columns: [], value: { ...r.rel.columns[0]!, name: r.alias } }
        : rangeOver(r.alias, r.rel, r.names);
      let rel = r.rel;
      if (item.sample) rel = sample(an, rel, item.sample, r.target, item.loc);
      const shown = rv.columns.length - (r.hidden ?? 0);
      const star = rv.value ? [rv.value] : rv.columns.slice(0, shown);
      return { rel, rvs: [r.hidden ? { ...rv, hidden: new Set(rv.columns.slice(shown).map((c) => c.id)) } : rv], star, lateral: false };
    }
    case 'UnnestRef': {
      if (item.systemTime) throw sqlError('FOR SYSTEM_TIME AS OF is not allowed with array scans', item.systemTime.loc);
      if (item.sample) checkSample(an, item.sample, { kind: 'array' }, item.loc);
      return unnestLeaf(an, item.exprs, item.alias, item.withOffset, scope, item.loc, item.exprAliases, item.mode);
    }
    case 'SubqueryRef': {
      const out = resolveQuery(an, item.graph ? compileGraphQuery(an, item.graph, item.graph.topLevel === true) : item.query, outer);
      const alias = item.alias ?? '';
      let rel = out.rel;
      if (item.sample) rel = sample(an, rel, item.sample, { kind: 'not a table', what: 'a subquery' }, item.loc);
      if (out.isValueTable) {
        const v = { ...out.rel.columns[0]!, name: alias };
        return { rel, rvs: [{ name: alias, lname: alias.toLowerCase(), columns: [], value: v }], star: [v], lateral: false };
      }
      const rv = rangeOver(alias, out.rel, out.names);
      return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
    }
    case 'PivotRef':
    case 'UnpivotRef': {
      const leaf = item.kind === 'PivotRef' ? resolvePivot(an, item, outer) : resolveUnpivot(an, item, outer);
      // `FROM t PIVOT(...) TABLESAMPLE ...` would sample the operator's output, a computed table.
      const what = item.kind === 'PivotRef' ? 'a PIVOT result' : 'an UNPIVOT result';
      return item.sample ? { ...leaf, rel: sample(an, leaf.rel, item.sample, { kind: 'not a table', what }, item.loc) } : leaf;
    }
    case 'TvfRef':
      if (item.sample) checkSample(an, item.sample, { kind: 'tvf' }, item.loc);
      return resolveTvf(an, item, scope);
    default:
      throw sqlError(`Unsupported FROM item ${item.kind}`, item.loc);
  }
}


function unnestLeaf(
  an: Analyzer,
  exprs: readonly A.Expr[],
  alias0: string | undefined,
  withOffset: { alias?: string } | undefined,
  scope: Scope,
  loc: A.Loc,
  exprAliases?: readonly (string | undefined)[],
  modeExpr?: A.Expr,
  fieldPath = false,
): Leaf {
  // Several arrays give several columns, each named by its own alias: the UNNEST as a whole takes none.
  if (alias0 && exprs.length > 1) throw sqlError('Table alias in UNNEST in FROM clause is not allowed when UNNEST contains multiple arguments', loc);
  const alias = alias0 ?? (exprs.length === 1 ? exprAliases?.[0] : undefined);
  if (alias && withOffset?.alias && alias.toLowerCase() === withOffset.alias.toLowerCase()) throw sqlError(`Duplicate alias ${withOffset.alias} found`, loc);
  const corr = new Correlation();
  const lat = new Scope(scope, corr);
  const arrays = exprs.map((e) => {
    // An UNNEST argument may be an array path through arrays (implicitly flattened); a FROM field path may not:
    // query-syntax.md, field_path: it must end in an array field and can't contain arrays before its end.
    const x = resolveExpr(an, e, { scope: lat, clause: 'UNNEST', flatten: !fieldPath });
    if (x.type.kind !== 'ARRAY') {
      if (fieldPath) throw sqlError(`Values referenced in FROM clause must be arrays. ${(e as A.PathExpr).parts.join('.')} has type ${typeToSql(x.type)}`, e.loc);
      if (originOf(x) === Origin.Null) return literal(arrayOf(T.INT64), null);
      throw sqlError(`Values referenced in UNNEST must be arrays. UNNEST contains expression of type ${typeToSql(x.type)}`, e.loc);
    }
    return x;
  });
  const elements = arrays.map((a, i) => an.newColumn(i === 0 ? (alias ?? '') : '', (a.type as { element: SqlType }).element));
  const off = withOffset ? an.newColumn(withOffset.alias ?? 'offset', T.INT64) : undefined;
  let mode: UnnestRel['mode'];
  if (modeExpr) {
    const m = resolveExpr(an, modeExpr, { scope: lat, clause: 'UNNEST' });
    const v = m.kind === 'literal' ? m.value : constantValue(m);
    if (v === null) throw sqlError('UNNEST does not allow NULL mode argument', modeExpr.loc);
    const u = typeof v === 'string' ? v.toUpperCase() : '';
    if (u !== 'PAD' && u !== 'TRUNCATE' && u !== 'STRICT') throw sqlError(`Invalid UNNEST mode: ${String(v)}`, modeExpr.loc);
    mode = u;
  }
  const rel: UnnestRel = { kind: 'unnest', arrays, elements, ...(off ? { offset: off } : {}), ...(mode && mode !== 'PAD' ? { mode } : {}), columns: off ? [...elements, off] : elements };
  const rvs: RangeVar[] = [];
  const star: ResolvedColumn[] = [];
  if (arrays.length === 1) {
    const a = alias ?? '';
    rvs.push({ name: a, lname: a.toLowerCase(), columns: [], value: elements[0]! });
    star.push(elements[0]!);
  } else {
    // Multi-array UNNEST: each element is a plain column named by its alias (or the path's last name).
    const cols = elements.map((c, i) => ({ ...c, name: exprAliases?.[i] ?? implicitAlias(exprs[i]!) }));
    rvs.push({ name: '', lname: '', columns: cols });
    star.push(...cols);
  }
  if (off) {
    const orv: RangeVar = { name: '', lname: '', columns: [off] };
    // Only an explicit alias is a name of the FROM clause: two unaliased WITH OFFSET may be joined USING (offset).
    if (withOffset?.alias) offsetVars.add(orv);
    rvs.push(orv);
    star.push(off);
  }
  // A volatile array (UNNEST([RAND()])) is evaluated once per row of the FROM items before it,
  // as a correlated one is: joined laterally even without a reference to them.
  return { rel, rvs, star, lateral: corr.ids.size > 0 || arrays.some(isVolatileExpr), correlatedIds: corr.ids, arrayScan: true };
}

/** The lower-case names a FROM item's columns (value-table fields included) and merged keys answer to unqualified. */
function unqualifiedNames(rvs: readonly RangeVar[], extra: ReadonlyMap<string, ResolvedColumn>): Set<string> {
  const out = new Set(extra.keys());
  for (const rv of rvs) {
    if (rv.qualifiedOnly) continue;
    for (const c of rv.columns) out.add(c.name.toLowerCase());
    if (rv.value?.type.kind === 'STRUCT') for (const f of rv.value.type.fields) out.add(f.name.toLowerCase());
  }
  return out;
}

function isLateralCandidate(item: A.FromItem): boolean {
  return item.kind === 'UnnestRef' || (item.kind === 'TableRef' && !item.path[0]!.includes('.')) || item.kind === 'TvfRef';
}

function resolveJoin(an: Analyzer, j: A.JoinRef, scope: Scope, outer: Scope | undefined): Rel {
  if (j.sample) checkSample(an, j.sample, { kind: 'not a table', what: 'a join' }, j.loc);
  const left = resolveFrom(an, j.left, scope, outer);
  const leftStar = scope.starList ?? [];
  const leftRvs = scope.rangeVars.slice();
  // USING keys merged by the left side's joins: `a JOIN b USING (x) JOIN c USING (x)` finds its left x there.
  const leftExtra = new Map(scope.extra);
  let rightExtra = new Map<string, ResolvedColumn>();
  let right: Rel;
  let lateral = false;
  let correlatedIds: ReadonlySet<number> | undefined;
  let rightRvs: RangeVar[];
  let rightStar: ResolvedColumn[];
  let rightArrayScan = false;
  if (j.right.kind === 'JoinRef') {
    // Parenthesized join on the right: resolved in its own scope (no lateral references).
    const sub = new Scope(outer);
    right = resolveFrom(an, j.right, sub, outer);
    rightRvs = sub.rangeVars;
    rightStar = sub.starList ?? [];
    rightExtra = sub.extra;
    for (const [k, v] of sub.extra) scope.extra.set(k, v);
  } else {
    const leaf = isLateralCandidate(j.right) ? resolveLeaf(an, j.right, scope, outer) : resolveLeaf(an, j.right, new Scope(outer), outer);
    right = leaf.rel;
    lateral = leaf.lateral;
    correlatedIds = leaf.correlatedIds;
    rightRvs = leaf.rvs;
    rightStar = leaf.star;
    rightArrayScan = !!leaf.arrayScan;
  }
  if (lateral && (j.joinType === 'RIGHT' || j.joinType === 'FULL')) {
    // Only a reference to the join's left side is lateral; an UNNEST of an enclosing query's
    // value is a constant here, so the join runs as an ordinary (non-lateral) one.
    const leftIds = new Set<number>();
    for (const rv of leftRvs) {
      for (const c of rv.columns) leftIds.add(c.id);
      if (rv.value) leftIds.add(rv.value.id);
    }
    for (const c of scope.extra.values()) leftIds.add(c.id);
    if (!correlatedIds || [...correlatedIds].some((id) => leftIds.has(id))) {
      throw sqlError(`${j.joinType} JOIN cannot be used with a correlated UNNEST or lateral reference`, j.loc);
    }
    lateral = false;
  }
  for (const rv of rightRvs) addFromRangeVar(scope, rv, j.right.loc, rightArrayScan);
  // A USING key merged on one side names no column of the join when the other side has a column of
  // that name too: `t JOIN u USING (a) JOIN v ON a = v.a` is ambiguous (a USING of `a` here merges it again).
  const leftNames = unqualifiedNames(leftRvs, leftExtra), rightNames = unqualifiedNames(rightRvs, rightExtra);
  for (const [side, other] of [[leftExtra, rightNames], [rightExtra, leftNames]] as const) {
    for (const k of side.keys()) {
      if (!other.has(k)) continue;
      scope.extra.delete(k);
      scope.ambiguous.add(k);
    }
  }
  const joinType = j.joinType === 'COMMA' || j.joinType === 'CROSS' ? 'cross' : j.joinType === 'INNER' ? 'inner' : (j.joinType.toLowerCase() as 'left' | 'right' | 'full');
  let condition: Expr | undefined;
  let star = [...leftStar, ...rightStar];
  let rel: Rel;
  if (j.natural) throw sqlError('Natural join not supported', j.loc);
  // The documented grammar gives CROSS JOIN no join condition (query syntax, CROSS JOIN); the reference's wording
  // for USING (it lets an ON through).
  if (j.joinType === 'CROSS' && (j.on || j.using)) throw sqlError(`${j.on ? 'ON' : 'USING'} clause cannot be used with CROSS JOIN`, (j.on ?? j).loc);
  if (j.using) {
    // A name listed twice is one key (the reference).
    const names = j.using.filter((n, i, all) => all.findIndex((m) => m.toLowerCase() === n.toLowerCase()) === i);
    const lscope = new Scope();
    lscope.rangeVars = leftRvs;
    for (const [k, v] of leftExtra) lscope.extra.set(k, v);
    const rscope = new Scope();
    rscope.rangeVars = rightRvs;
    for (const [k, v] of rightExtra) rscope.extra.set(k, v);
    const conds: Expr[] = [];
    // A key is a column, or a field of a STRUCT value table (`JOIN UNNEST(structs) USING (f)`).
    type Key = { expr: Expr; col?: ResolvedColumn; value?: ResolvedColumn; fieldIndex?: number };
    const keyOf = (h: ReturnType<Scope['lookup']>, side: string): Key => {
      if (h?.kind === 'column') return { expr: colRef(h.column), col: h.column };
      if (h?.kind === 'field') return { expr: { kind: 'field', type: h.type, arg: colRef(h.column), fieldIndex: h.fieldIndex }, value: h.column, fieldIndex: h.fieldIndex };
      throw sqlError(`Column ${names[merged.length]} in USING clause not found on ${side} side of join`, j.loc);
    };
    const merged: { name: string; l: Key; r: Key; type: SqlType }[] = [];
    for (const n of names) {
      const lh = lscope.columnLookup(n);
      const rh = rscope.columnLookup(n);
      if (lh?.kind === 'ambiguous') throw sqlError(`Column ${n} in USING clause is ambiguous on left side of join`, j.loc);
      if (rh?.kind === 'ambiguous') throw sqlError(`Column ${n} in USING clause is ambiguous on right side of join`, j.loc);
      const l = keyOf(lh, 'left');
      const r = keyOf(rh, 'right');
      const st = supertype([
        { type: l.expr.type, origin: Origin.Column },
        { type: r.expr.type, origin: Origin.Column },
      ]);
      // The reference implementation's wording (it quotes the name here, unlike its other USING errors).
      if (!st) throw sqlError(`Column '${n}' in USING has incompatible types that cannot be directly compared using equality on either side of the join: ${typeToSql(l.expr.type)} and ${typeToSql(r.expr.type)}`, j.loc);
      conds.push(callScalar('$equal', [coerce(l.expr, st), coerce(r.expr, st)], j.loc));
      merged.push({ name: n, l, r, type: st });
    }
    condition = conds.length === 0 ? undefined : conds.length === 1 ? conds[0] : { kind: 'logical', type: T.BOOL, op: 'and', args: conds };
    rel = { kind: 'join', joinType: conds.length ? joinType : 'cross', left, right, ...(condition ? { condition } : {}), lateral, columns: [...left.columns, ...right.columns] };
    const keyCols: ResolvedColumn[] = [];
    if (joinType === 'full' || merged.some((m) => !m.l.col || !m.r.col)) {
      // The keys become columns of a projection over the join: FULL takes either side's
      // value; a struct field key is computed, and its value table's other fields stand in
      // for the struct in SELECT * (the key is listed once, first).
      const exprs: Expr[] = rel.columns.map((c) => colRef(c));
      const extraNames = rel.columns.map((c) => c.name);
      for (const m of merged) {
        exprs.push(
          joinType === 'full'
            ? { kind: 'conditional', type: m.type, op: 'coalesce', whens: [], thens: [coerce(m.l.expr, m.type), coerce(m.r.expr, m.type)] }
            : joinType === 'right' ? m.r.expr : m.l.expr,
        );
        extraNames.push(m.name);
      }
      const usedFields = new Map<number, Set<number>>();
      for (const m of merged) for (const k of [m.l, m.r]) if (k.value) (usedFields.get(k.value.id) ?? usedFields.set(k.value.id, new Set()).get(k.value.id)!).add(k.fieldIndex!);
      const expanded = new Map<number, number[]>();
      for (const [id, used] of usedFields) {
        const v = rel.columns.find((c) => c.id === id)!;
        if (v.type.kind !== 'STRUCT') continue;
        const at: number[] = [];
        v.type.fields.forEach((f, i) => {
          if (used.has(i)) return;
          at.push(exprs.length);
          exprs.push({ kind: 'field', type: f.type, arg: colRef(v), fieldIndex: i });
          extraNames.push(f.name);
        });
        expanded.set(id, at);
      }
      const p = project(an, rel, exprs, extraNames);
      // Re-point range variables at the projected copies of the join's columns.
      const idMap = new Map<number, ResolvedColumn>();
      rel.columns.forEach((c, i) => idMap.set(c.id, p.columns[i]!));
      const remap = (rv: RangeVar): RangeVar => ({ ...rv, columns: rv.columns.map((c) => ({ ...idMap.get(c.id)!, name: c.name })), ...(rv.value ? { value: { ...idMap.get(rv.value.id)!, name: rv.value.name } } : {}) });
      scope.rangeVars = scope.rangeVars.map((rv) => (leftRvs.includes(rv) || rightRvs.includes(rv) ? remap(rv) : rv));
      for (const [k, v] of scope.extra) if (idMap.has(v.id)) scope.extra.set(k, idMap.get(v.id)!);
      merged.forEach((m, i) => {
        const col = { ...p.columns[rel.columns.length + i]!, name: m.name };
        keyCols.push(col);
        scope.extra.set(m.name.toLowerCase(), col);
      });
      const drop = new Set(merged.flatMap((m) => [m.l.col?.id, m.r.col?.id]));
      star = [
        ...keyCols,
        ...star.flatMap((c) => (drop.has(c.id) ? [] : expanded.has(c.id) ? expanded.get(c.id)!.map((k) => p.columns[k]!) : [idMap.get(c.id) ?? c])),
      ];
      scope.starList = star;
      return p;
    }
    for (const m of merged) {
      const col = joinType === 'right' ? m.r.col! : m.l.col!;
      keyCols.push({ ...col, name: m.name });
      scope.extra.set(m.name.toLowerCase(), { ...col, name: m.name });
    }
    const drop = new Set(merged.flatMap((m) => [m.l.col!.id, m.r.col!.id]));
    star = [...keyCols, ...star.filter((c) => !drop.has(c.id))];
    scope.starList = star;
    return rel;
  }
  if (j.on) condition = requireBool(resolveExpr(an, j.on, { scope, clause: 'ON clause' }), j.on.loc, 'JOIN ON clause');
  else if (joinType !== 'cross' && !lateral && j.right.kind !== 'UnnestRef') {
    throw sqlError(`${j.joinType} JOIN must have an immediately following ON or USING clause`, j.loc);
  }
  scope.starList = star;
  rel = {
    kind: 'join',
    joinType: condition ? joinType : (lateral || j.right.kind === 'UnnestRef') && joinType !== 'cross' ? joinType : 'cross',
    left,
    right,
    ...(condition ? { condition } : {}),
    lateral,
    columns: [...left.columns, ...right.columns],
  };
  return rel;
}
