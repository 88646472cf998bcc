// Pipe syntax: each |> operator applied to the table before it.
//
// Each operator rewrites to the equivalent SELECT over the current table, read
// through a synthetic `$pipe` table reference (pipeInputs). Table aliases
// follow the pipe syntax reference: WHERE, ORDER BY, LIMIT, TABLESAMPLE,
// DISTINCT, EXTEND, WINDOW, SET, DROP, RENAME and JOIN keep the input's
// aliases (JOIN adds the right side's); after SET, DROP and RENAME an alias
// still reads the original values, so those are carried as hidden trailing
// columns; AS replaces every alias with one; the other operators make a new
// table without aliases (CALL, PIVOT and UNPIVOT may name it).

import type * as A from '../../grammar/ast.js';
import type { Analyzer } from './context.js';
import { lookupFunction } from '../functions/registry.js';
import { sqlError } from './errors.js';
import { findUdf } from './sql-udfs.js';
import { matchRecognizeQuery } from './match-recognize.js';
import { Scope, colRef, type RangeVar } from './scope.js';
import { hasOver, someCall } from './ast-search.js';
import { combineSetOp, pipeInputLabel } from './set-operations.js';
import { type PipeForm, type SelItem, resolveSelect } from './select.js';
import { type PipeVar, type RelOut, applyLimit, project, resolveQuery } from './query.js';
import { type SampleTarget, sample, tableRefTarget } from './sample.js';

/** The visible table of `out`: hidden columns projected away, no aliases. */
export function withoutPipeVars(an: Analyzer, out: RelOut): RelOut {
  if (!out.pipeVars && !out.hidden) return out;
  const n = out.rel.columns.length - (out.hidden ?? 0);
  const names = out.names.slice(0, n);
  const rel = out.hidden ? project(an, out.rel, out.rel.columns.slice(0, n).map((c) => colRef(c)), names) : out.rel;
  return { rel, names, isValueTable: out.isValueTable };
}

/** The table aliases' range variables for a `$pipe` reference to `out`. */
export function pipeRangeVars(out: RelOut): RangeVar[] {
  return (out.pipeVars ?? []).map((v) => {
    const cols = out.rel.columns;
    if (v.valueIndex !== undefined) return { name: v.name, lname: v.name.toLowerCase(), columns: [], value: { ...cols[v.valueIndex]!, name: v.name }, qualifiedOnly: true };
    return { name: v.name, lname: v.name.toLowerCase(), columns: v.columns.map((c) => ({ ...cols[c.index]!, name: c.name })), qualifiedOnly: true };
  });
}

/** One alias over every visible column of `out` (`|> AS t`, `|> CALL f() AS t`). */
function aliased(out: RelOut, alias: string | undefined): RelOut {
  if (!alias) return out;
  const v: PipeVar = out.isValueTable
    ? { name: alias, columns: [], valueIndex: 0 }
    : { name: alias, columns: out.names.map((name, index) => ({ name, index })) };
  return { ...out, pipeVars: [v] };
}

const HIDDEN = '$pipe_alias';
/** The alias a value table's rows take inside pipe DISTINCT. */
const DISTINCT_VALUE = '$pipe_value';

/**
 * What `|> TABLESAMPLE` samples: it behaves as the FROM clause's operator (pipe-syntax.md, TABLESAMPLE pipe
 * operator), so only a table read by the query's FROM, with no operator between, is one.
 */
export function pipeSampleTarget(q: A.Query, index: number): SampleTarget {
  const from = index === 0 && q.body.kind === 'FromQuery' ? q.body.from : undefined;
  const t = from?.kind === 'TableRef' && !from.sample && !from.matchRecognize ? tableRefTarget(from) : undefined;
  return t ?? { kind: 'not a table', what: 'a query result' };
}

export function applyPipe(an: Analyzer, out: RelOut, p: A.PipeOp, outer: Scope | undefined, sampled?: SampleTarget): RelOut {
  const pipeRef = (input: RelOut, alias?: string): A.TableRef => {
    const ref: A.TableRef = { kind: 'TableRef', loc: p.loc, path: ['$pipe'], ...(alias ? { alias } : {}) };
    pipeInputs.set(ref, input);
    return ref;
  };
  /** The operator as a SELECT over the current table: `keep` carries the table aliases in scope (and the input's) to the output. */
  const viaSelect = (sel: Omit<A.Select, 'kind' | 'loc' | 'from'>, keep: boolean, orderBy?: A.OrderByItem[], from: A.FromItem = pipeRef(out), pipeForm?: PipeForm): RelOut => {
    let vars: { rv: RangeVar; first: number }[] = [];
    let carried = 0;
    const carry = keep
      ? (scope: Scope): SelItem[] => {
          const items: SelItem[] = [];
          vars = [];
          for (const rv of scope.rangeVars) {
            if (!rv.lname) continue;
            vars.push({ rv, first: items.length });
            for (const c of rv.value ? [rv.value] : rv.columns) items.push({ name: HIDDEN, expr: colRef(c), loc: p.loc, aliasable: false });
          }
          carried = items.length;
          return items;
        }
      : undefined;
    const r = resolveSelect(an, { kind: 'Select', loc: p.loc, from, ...sel }, outer, orderBy, undefined, undefined, carry, pipeForm);
    if (!carried) return r;
    const start = r.names.length - carried;
    const pipeVars = vars.map(({ rv, first }): PipeVar =>
      rv.value ? { name: rv.name, columns: [], valueIndex: start + first } : { name: rv.name, columns: rv.columns.map((c, k) => ({ name: c.name, index: start + first + k })) },
    );
    return { ...r, pipeVars, hidden: carried };
  };
  const star: A.SelectStar = { kind: 'SelectStar', loc: p.loc };
  switch (p.kind) {
    case 'PipeWhere':
      // A window function in |> WHERE filters after windowing, like QUALIFY.
      return hasOver(p.cond)
        ? viaSelect({ distinct: false, items: [star], qualify: p.cond }, true, undefined, undefined, 'pipe WHERE')
        : viaSelect({ distinct: false, items: [star], where: p.cond }, true, undefined, undefined, 'pipe WHERE');
    case 'PipeSelect':
      return viaSelect({ distinct: p.distinct, ...(p.asMode ? { asMode: p.asMode } : {}), items: p.items, ...(p.window ? { window: p.window } : {}) }, false, undefined, undefined, 'pipe SELECT');
    case 'PipeExtend':
      return viaSelect({ distinct: false, items: [star, ...p.items], ...(p.window ? { window: p.window } : {}) }, true, undefined, undefined, 'pipe EXTEND');
    case 'PipeWindow':
      return viaSelect({ distinct: false, items: [star, ...p.items] }, true);
    case 'PipeSet': {
      checkPipeColumns(out, 'SET', p.assignments.map((a) => a.column[a.column.length - 1]!), p.loc);
      const replace = p.assignments.map((a) => ({ expr: a.expr, alias: a.column[a.column.length - 1]! }));
      return viaSelect({ distinct: false, items: [{ ...star, replace }] }, true);
    }
    case 'PipeDrop': {
      const dropped = p.columns.map((c) => c[c.length - 1]!);
      checkPipeColumns(out, 'DROP', dropped, p.loc);
      const gone = new Set(dropped.map((n) => n.toLowerCase()));
      if (!out.isValueTable && visibleNames(out).every((n) => gone.has(n.toLowerCase()))) throw sqlError('Pipe DROP dropped all columns in the input table', p.loc);
      return viaSelect({ distinct: false, items: [{ ...star, except: dropped }] }, true);
    }
    case 'PipeRename': {
      const visible = out.names.length - (out.hidden ?? 0);
      checkPipeColumns(out, 'RENAME', p.renames.map((r) => r.from[r.from.length - 1]!), p.loc);
      const names = out.names.map((n, i) => {
        const r = i < visible ? p.renames.find((x) => x.from[x.from.length - 1]!.toLowerCase() === n.toLowerCase()) : undefined;
        return r ? r.to : n;
      });
      // The aliases keep the old names (pipe syntax reference, RENAME).
      return { ...out, names };
    }
    case 'PipeAs':
      return aliased(withoutPipeVars(an, out), p.alias);
    case 'PipeOrderBy':
      return viaSelect({ distinct: false, items: [star] }, true, p.items);
    case 'PipeLimit':
      return applyLimit(an, out, p.limit, p.offset);
    case 'PipeDistinct': {
      // Distinct over the visible columns; the aliases keep the columns that are visible ones.
      const vis = withoutPipeVars(an, { ...out, pipeVars: undefined });
      // A value table stays one: the rows are distinct values, not the value's fields (pipe syntax reference, DISTINCT).
      const value: A.SelectItem = { kind: 'SelectExpr', loc: p.loc, expr: { kind: 'PathExpr', loc: p.loc, parts: [DISTINCT_VALUE] } };
      const r = vis.isValueTable
        ? viaSelect({ distinct: true, asMode: 'VALUE', items: [value] }, false, undefined, pipeRef(vis, DISTINCT_VALUE))
        : viaSelect({ distinct: true, items: [star] }, false, undefined, pipeRef(vis));
      const n = vis.names.length;
      const pipeVars = (out.pipeVars ?? []).map((v) => ({ ...v, columns: v.columns.filter((c) => c.index < n) })).filter((v) => v.valueIndex === undefined || v.valueIndex < n);
      return pipeVars.length ? { ...r, pipeVars } : r;
    }
    case 'PipeAggregate': {
      const items: A.SelectItem[] = [];
      const groupItems: A.GroupingItem[] = [];
      const order: A.OrderByItem[] = [];
      checkAggregateShape(p);
      for (const g of p.groupBy) {
        items.push({ kind: 'SelectExpr', loc: g.expr.loc, expr: g.expr, ...(g.alias ? { alias: g.alias } : {}) });
        groupItems.push(g.expr);
        if (g.direction || p.groupAndOrder) order.push({ kind: 'OrderByItem', loc: g.expr.loc, expr: g.expr, ...(g.direction ? { direction: g.direction } : {}), ...(g.nulls ? { nulls: g.nulls } : {}) });
      }
      for (const a of p.items) {
        if (hasOver(a.expr)) throw sqlError('Analytic function not allowed in pipe AGGREGATE', a.expr.loc);
        if (!hasAggregateCall(a.expr)) throw sqlError('Pipe AGGREGATE cannot include non-aggregate expressions', a.expr.loc);
        items.push({ kind: 'SelectExpr', loc: a.expr.loc, expr: a.expr, ...(a.alias ? { alias: a.alias } : {}) });
        if (a.direction) order.push({ kind: 'OrderByItem', loc: a.expr.loc, expr: a.expr, direction: a.direction, ...(a.nulls ? { nulls: a.nulls } : {}) });
      }
      if (p.groupingItems) {
        // GROUP BY ROLLUP / CUBE / GROUPING SETS: each expression they group by is an output column, first
        // appearance first, as a plain group item would be (and ordered by under GROUP AND ORDER BY).
        const seen = new Set<string>();
        const keyOf = (e: A.Expr) => JSON.stringify(e, (k, v: unknown) => (k === 'loc' ? undefined : v));
        const add = (e: A.Expr) => {
          const k = keyOf(e);
          if (seen.has(k) || p.groupBy.some((g) => keyOf(g.expr) === k)) return;
          seen.add(k);
          items.splice(seen.size - 1 + p.groupBy.length, 0, { kind: 'SelectExpr', loc: e.loc, expr: e });
          if (p.groupAndOrder) order.push({ kind: 'OrderByItem', loc: e.loc, expr: e });
        };
        const walk = (g: A.GroupingItem): void => {
          if (g.kind === 'Rollup' || g.kind === 'Cube') g.exprs.forEach(add);
          else if (g.kind === 'GroupingSets') g.sets.forEach(walk);
          else if (g.kind === 'EmptyGroupingSet') return;
          else if (g.kind === 'StructExpr' && g.syntax === 'tuple') g.fields.forEach((f) => add(f.expr));
          else add(g);
        };
        p.groupingItems.forEach(walk);
        groupItems.push(...p.groupingItems);
      }
      const groupBy: A.GroupBy | undefined = groupItems.length ? { kind: 'GroupBy', loc: p.loc, all: false, items: groupItems } : undefined;
      return viaSelect({ distinct: false, items, ...(groupBy ? { groupBy } : {}) }, false, order.length ? order : undefined, undefined, 'pipe AGGREGATE');
    }
    case 'PipeJoin': {
      const from: A.JoinRef = { kind: 'JoinRef', loc: p.loc, joinType: p.joinType, natural: p.natural, left: pipeRef(out), right: p.right, ...(p.on ? { on: p.on } : {}), ...(p.using ? { using: p.using } : {}) };
      return viaSelect({ distinct: false, items: [star] }, true, undefined, from);
    }
    case 'PipeSetOp': {
      const others = p.queries.map((q) => resolveQuery(an, q, outer));
      const b: A.SetOperation = {
        kind: 'SetOperation', loc: p.loc, op: p.op, quantifier: p.quantifier,
        ...(p.outerMode ? { outerMode: p.outerMode } : {}), ...(p.corresponding ? { corresponding: p.corresponding } : {}), ...(p.byName ? { byName: p.byName } : {}),
        left: p.queries[0]!.body, right: p.queries[0]!.body,
      };
      return combineSetOp(an, b, [withoutPipeVars(an, out), ...others], [p, ...p.queries], pipeInputLabel);
    }
    case 'PipeTablesample':
      return { ...out, rel: sample(an, out.rel, p.sample, sampled ?? { kind: 'not a table', what: 'a query result' }, p.loc) };
    case 'PipeAssert': {
      // Each row must satisfy the condition; otherwise the query fails with the payload (or the condition's text).
      const msg: A.Expr = p.payload.length
        ? { kind: 'FunctionCall', loc: p.loc, name: ['CONCAT'], safe: false, distinct: false, args: [{ kind: 'StringLiteral', loc: p.loc, value: 'Assertion failed: ', raw: false }, ...p.payload.flatMap((e, i): A.Expr[] => [...(i ? [{ kind: 'StringLiteral' as const, loc: e.loc, value: ' ', raw: false }] : []), { kind: 'CastExpr', loc: e.loc, safe: false, expr: e, type: { kind: 'ScalarType', loc: e.loc, name: 'STRING', params: [] } }])] }
        : { kind: 'StringLiteral', loc: p.loc, value: 'Assertion failed', raw: false };
      const check: A.Expr = {
        kind: 'FunctionCall', loc: p.loc, name: ['IF'], safe: false, distinct: false,
        args: [{ kind: 'IsExpr', loc: p.loc, expr: p.cond, not: false, what: 'TRUE' }, { kind: 'BoolLiteral', loc: p.loc, value: true }, { kind: 'IsExpr', loc: p.loc, not: false, what: 'NULL', expr: { kind: 'FunctionCall', loc: p.loc, name: ['ERROR'], safe: false, distinct: false, args: [msg] } }],
      };
      return viaSelect({ distinct: false, items: [star], where: check }, true);
    }
    case 'PipeCall': {
      // |> CALL tvf(args) [AS alias]: the current rows are the first (TABLE) argument.
      const q: A.Query = { kind: 'Query', loc: p.loc, body: { kind: 'Select', loc: p.loc, distinct: false, items: [star], from: pipeRef(withoutPipeVars(an, out)) }, pipes: [] };
      const at = pipeTableArgIndex(an, p.tvf);
      const from: A.TvfRef = { ...p.tvf, args: [...p.tvf.args.slice(0, at), q, ...p.tvf.args.slice(at)] };
      return aliased(viaSelect({ distinct: false, items: [star] }, false, undefined, from), p.tvf.alias);
    }
    case 'PipePivot':
    case 'PipeUnpivot': {
      const { kind, ...rest } = p;
      const from = { ...rest, kind: kind === 'PipePivot' ? 'PivotRef' : 'UnpivotRef', input: pipeRef(withoutPipeVars(an, out)) } as A.FromItem;
      return aliased(viaSelect({ distinct: false, items: [star] }, false, undefined, from), p.alias);
    }
    case 'PipeMatchRecognize': {
      const vis = withoutPipeVars(an, out);
      const alias = out.pipeVars?.length === 1 ? out.pipeVars[0]!.name : undefined;
      const from = pipeRef(vis, alias);
      const q = matchRecognizeQuery(an, from, alias, p.spec, p.loc);
      return resolveQuery(an, q, outer);
    }
    default:
      throw sqlError(`Pipe operator ${p.kind} is not supported yet`, p.loc);
  }
}

/**
 * The shapes pipe AGGREGATE refuses (pipe syntax reference, AGGREGATE; wording as the reference analyzer's):
 * a GROUP BY ordinal (there is no select list to count in), NULLS FIRST/LAST on a key without ASC/DESC outside
 * GROUP AND ORDER BY (order_suffix is ASC or DESC, then the NULLS order), and GROUP AND ORDER BY over ROLLUP,
 * CUBE, GROUPING SETS or () (it orders by each groupable item, which those are not).
 */
function checkAggregateShape(p: A.PipeAggregate): void {
  for (const g of p.groupBy) {
    if (g.expr.kind === 'IntLiteral') throw sqlError('GROUP BY ordinal not allowed in pipe AGGREGATE', g.expr.loc);
    if (g.nulls && !g.direction && !p.groupAndOrder) {
      throw sqlError('GROUP BY items cannot have NULLS FIRST/LAST without ASC/DESC except when using GROUP AND ORDER BY', g.expr.loc);
    }
  }
  if (!p.groupAndOrder) return;
  const named: Record<string, string> = { Rollup: 'ROLLUP', Cube: 'CUBE', GroupingSets: 'GROUPING SETS', EmptyGroupingSet: 'GROUP BY ()' };
  for (const g of p.groupingItems ?? []) {
    const what = named[g.kind];
    if (what) throw sqlError(`GROUP AND ORDER BY cannot be used with ${what}`, g.loc);
  }
}

/**
 * Where |> CALL puts its input among a SQL table function's arguments: at the first TABLE parameter, the
 * arguments written standing for the ones before it and after it (pipe syntax reference, CALL: the first table
 * argument comes from the input table and is omitted). Built-in table functions take it first.
 */
function pipeTableArgIndex(an: Analyzer, tvf: A.TvfRef): number {
  const def = findUdf(an, tvf.name);
  const at = def?.tableFunction ? def.params.findIndex((q) => q.type.kind === 'TableType' || q.type.kind === 'AnyTableType') : -1;
  if (at <= 0) return 0;
  const n = tvf.args.length;
  if (n < at) {
    const has = n === 0 ? 'no arguments' : n === 1 ? 'only 1 argument' : `only ${n} arguments`;
    throw sqlError(`Table-valued function call in pipe CALL requires at least ${at} positional argument${at === 1 ? '' : 's'} because its first table argument is in position ${at + 1}, but the call has ${has}`, tvf.loc);
  }
  return at;
}

/** The columns a pipe operator sees by name (the trailing hidden ones only feed table aliases). */
function visibleNames(out: RelOut): string[] {
  return out.names.slice(0, out.names.length - (out.hidden ?? 0));
}

/**
 * The name rules of pipe SET, DROP and RENAME (pipe syntax reference): each name is
 * given once and is a column of the input table; RENAME also refuses a name that
 * is a table alias or that more than one column has. Wording as the service's analyzer.
 */
function checkPipeColumns(out: RelOut, op: 'SET' | 'DROP' | 'RENAME', names: readonly string[], loc: A.Loc): void {
  // A value table's fields are checked where the star expansion resolves them.
  if (out.isValueTable) return;
  const visible = visibleNames(out).map((n) => n.toLowerCase());
  const seen = new Set<string>();
  const verb = { SET: 'update', DROP: 'drop', RENAME: 'rename' }[op];
  for (const name of names) {
    const l = name.toLowerCase();
    if (seen.has(l)) throw sqlError(`Duplicate column name in pipe ${op}: ${name}`, loc);
    seen.add(l);
    const count = visible.filter((n) => n === l).length;
    const isAlias = (out.pipeVars ?? []).some((v) => v.name.toLowerCase() === l);
    if (count === 0 || (op === 'RENAME' && isAlias)) {
      if (isAlias) throw sqlError(`Name in pipe ${op} is a table alias; ${op} can only ${verb} columns: ${name}`, loc);
      throw sqlError(`Column name in pipe ${op} not found in input table: ${name}`, loc);
    }
    // SET and RENAME need one column of the name (each says which it means); DROP removes every one.
    if (op !== 'DROP' && count > 1) throw sqlError(`Column name in pipe ${op} exists more than once in input table: ${name}`, loc);
  }
}

/** True when an AST expression calls an aggregate function outside subqueries and windows (a name that is no built-in may be a user aggregate: its resolution decides). */
function hasAggregateCall(e: unknown): boolean {
  return someCall(e, (c) => {
    if (c.over) return false;
    const def = lookupFunction(c.name!.join('.'));
    return !def || def.kind === 'aggregate';
  });
}

/** Pipe inputs are passed to resolveTableRef through this side table keyed by the synthetic TableRef. */
export const pipeInputs = new WeakMap<A.TableRef, RelOut>();

