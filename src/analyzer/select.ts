// One SELECT block: FROM, WHERE, aggregation, HAVING, windows, QUALIFY, the SELECT list (star expansion),
// DISTINCT and ORDER BY; also the pipe operators that resolve as a SELECT (PipeForm).
import type * as A from '../../grammar/ast.js';
import { isGroupable, structOf, typeToSql } from '../types/types.js';
import type { Analyzer } from './context.js';
import { objectFilterOf } from './information-schema.js';
import { sqlError } from './errors.js';
import { AggCollector, WindowCollector, resolveExpr, type ExprCtx } from './expr.js';
import { orderCollation, refuseLiteralOrderKey } from './order-keys.js';
import { requireBool } from './coercion.js';
import { collationGrouper } from './calls.js';
import { exprEquals } from './expr-equality.js';
import { rewriteExpr } from './rewrite.js';
import { checkPrivacyUnit, withAggregationThreshold, withDifferentialPrivacy } from './privacy.js';
import type { AggregateRel, Expr, Rel, SortKey } from './resolved.js';
import { Scope, colRef } from './scope.js';
import { mergeWindow } from './window-calls.js';
import { pathsOf } from './ast-search.js';
import { type RelOut, project, filter, oneRow, implicitAlias, orderOrdinalError, checkOrderable, applyLimit } from './query.js';
import { allRangeColumns, postAggregate, resolveGroupBy } from './group-by.js';
import { resolveFrom } from './from.js';

export interface SelItem {
  name: string;
  expr: Expr;
  loc: A.Loc;
  /** Explicit alias or implicit (path) name: usable by GROUP BY / ORDER BY. */
  aliasable: boolean;
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
  const savedFilter = an.objectFilter;
  an.thresholdViews = threshold ? [] : undefined;
  an.objectFilter = objectFilterOf(sel.where);
  let rel: Rel;
  try {
    rel = sel.from ? resolveFrom(an, sel.from, scope, outer) : oneRow();
    if (threshold) sel = withAggregationThreshold(an, sel, an.thresholdViews!);
  } finally {
    an.thresholdViews = savedViews;
    an.objectFilter = savedFilter;
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

