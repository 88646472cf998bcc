// PIVOT and UNPIVOT, rewritten to aggregates over the input and to a UNION ALL
// of one projection per unpivoted column set.

import type * as A from '../../grammar/ast.js';
import { T, typeEquals, typeToSql, ungroupablePart, type SqlType } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { AggCollector, resolveExpr, type ExprCtx } from './expr.js';
import { coerce, literal, originOf } from './coercion.js';
import { isVolatileExpr, rewriteExpr } from './rewrite.js';
import type { AggregateRel, Expr, Rel } from './resolved.js';
import { Scope, colRef } from './scope.js';
import { Origin, supertype } from './types.js';
import { formatDate } from '../types/json-values.js';
import { constantValue } from './names.js';
import type { Decimal } from '../types/values.js';
import { callScalar } from './calls.js';
import { not } from './predicates.js';
import { type Leaf, rangeOver, resolveFrom } from './from.js';
import { filter, project } from './query.js';

const LITERAL_KINDS = new Set(['IntLiteral', 'FloatLiteral', 'StringLiteral', 'BytesLiteral', 'BoolLiteral', 'NullLiteral', 'TypedLiteral', 'RangeLiteral', 'NamedParam']);
// A literal, a negated one, or a CAST of one (CAST(2 AS INT64) is named `_2`, as the reference names it).
const isLiteralAst = (e: A.Expr): boolean =>
  LITERAL_KINDS.has(e.kind) || (e.kind === 'UnaryExpr' && e.op === '-' && LITERAL_KINDS.has(e.operand.kind)) || (e.kind === 'CastExpr' && !e.format && isLiteralAst(e.expr));
const signed = (s: string): string => (s.startsWith('-') ? `minus_${s.slice(1)}` : s);

/**
 * The name a PIVOT value without an alias gives its column, from the value after coercion to the FOR
 * expression's type (the reference's rules): a string is itself, an integer `1` / `minus_1`, a NUMERIC
 * `1_point_5`, a DATE `2020_01_02`, a BOOL `true`, NULL `NULL`; other types, and values that are not literals,
 * need an alias.
 */
function implicitValueName(e: A.Expr, val: Expr): string {
  const value = !isLiteralAst(e) ? undefined : val.kind === 'literal' ? val.value : constantValue(val);
  if (value === undefined) throw sqlError('Generating an implicit alias for this PIVOT value is not supported; please provide an explicit alias', e.loc);
  if (value === null) return 'NULL';
  switch (val.type.kind) {
    case 'STRING':
      return value as string;
    case 'BOOL':
      return value ? 'true' : 'false';
    case 'INT64':
      return signed(String(value));
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return signed((value as Decimal).toFixed()).replace('.', '_point_');
    case 'DATE':
      return formatDate(value as number).replace(/-/g, '_');
    default:
      throw sqlError(`PIVOT values of type ${typeToSql(val.type)} must specify an alias`, e.loc);
  }
}

/** A FROM item whose rows are one value (a value table: UNNEST of structs, SELECT AS VALUE, a value-table pipe input). */
const isValueInput = (scope: Scope): boolean => scope.rangeVars[0]?.value !== undefined;

/** Whether an aggregate call keeps NULL inputs (the aggregates' pages). */
function keepsNulls(name: string, ignoreNulls: boolean | undefined): boolean {
  if (name === 'ARRAY_AGG') return ignoreNulls !== true;
  if (name === 'APPROX_QUANTILES') return ignoreNulls === false;
  return name === 'APPROX_TOP_COUNT';
}

export function resolvePivot(an: Analyzer, p: A.PivotRef, outer: Scope | undefined): Leaf {
  if (p.input.kind === 'UnnestRef') throw sqlError('PIVOT is not allowed with array scans', p.loc);
  const inner = new Scope(outer);
  const input = resolveFrom(an, p.input, inner, outer);
  // A value table has no columns to group by or to pivot (only its row value):
  // the reference refuses it rather than pivot over nothing.
  if (isValueInput(inner)) throw sqlError('PIVOT is not allowed on value tables', p.loc);
  const aggs = new AggCollector(inner);
  const ctx: ExprCtx = { scope: inner, clause: 'PIVOT clause', aggs };
  let forExpr = resolveExpr(an, p.forExpr, { scope: inner, clause: 'PIVOT clause' });
  const aggExprs = p.aggregates.map((a) => {
    const before = aggs.calls.length;
    const e = resolveExpr(an, a.expr, ctx);
    if (aggs.calls.length !== before + 1 || e.kind !== 'column') throw sqlError('PIVOT expression must be an aggregate function call', a.expr.loc);
    const call = aggs.calls[before]!;
    // query-syntax.md, Rules for aggregate_function_call: only an aggregate function that takes one argument (its
    // constant options, as STRING_AGG's delimiter, aside).
    const inputs = call.args.filter((x) => constantValue(x) === undefined);
    if (inputs.length > 1) throw sqlError(`PIVOT aggregate function ${call.name} must take one argument; it has ${inputs.length}`, a.expr.loc);
    // Ibid.: except for COUNT, only aggregate functions that ignore NULL inputs (PIVOT feeds each one NULL for the
    // rows of the other values). Those that keep NULLs, by their pages: ARRAY_AGG unless IGNORE NULLS, APPROX_QUANTILES
    // with RESPECT NULLS (aggregate_functions.md, approximate_aggregate_functions.md), APPROX_TOP_COUNT always.
    if (keepsNulls(call.name, call.ignoreNulls)) throw sqlError(`PIVOT aggregate function ${call.name} must ignore NULL inputs${call.name === 'APPROX_TOP_COUNT' ? '' : ' (use IGNORE NULLS)'}`, a.expr.loc);
    return call;
  });
  // Columns referenced by aggregates or FOR are consumed; the rest group the output.
  const used = new Set<number>();
  const note = (e: Expr) =>
    rewriteExpr(e, (x) => {
      if (x.kind === 'column') used.add(x.columnId);
      return undefined;
    });
  note(forExpr);
  for (const a of aggExprs) {
    a.args.forEach(note);
    a.orderBy.forEach((k) => note(k.expr));
    if (a.having) note(a.having.expr);
    if (a.filter) note(a.filter);
  }
  const groupCols = (inner.starList ?? []).filter((c) => !used.has(c.id));
  // The columns left over group the output, so each must be groupable (resolver_query.cc, ResolvePivotClause).
  for (const c of groupCols) {
    const bad = ungroupablePart(c.type);
    // An anonymous column is named by its 1-based position, as the reference's ColumnAliasOrPosition does.
    const name = c.name && !c.name.startsWith('$') ? c.name : String(inner.starList!.indexOf(c) + 1);
    if (bad) throw sqlError(`Column ${name} of type ${typeToSql(bad)} cannot be used as an implicit grouping column of a PIVOT clause`, p.loc);
  }
  const keyCols = groupCols.map((c) => an.newColumn(c.name, c.type));
  // A volatile aggregate argument (SUM(RAND())) is computed once per input row and
  // shared by every pivot column, as the reference does: project it below the aggregate.
  let aggInput = input;
  const volatileArgs = aggExprs.flatMap((a) => a.args.filter((x) => isVolatileExpr(x)));
  if (volatileArgs.length) {
    const proj = project(an, input, [...input.columns.map((c) => colRef(c)), ...volatileArgs], [...input.columns.map((c) => c.name), ...volatileArgs.map(() => '$pivot_arg')]);
    const idMap = new Map(input.columns.map((c, i) => [c.id, proj.columns[i]!]));
    const argCol = new Map(volatileArgs.map((x, i) => [x, proj.columns[input.columns.length + i]!]));
    const remap = (e: Expr): Expr =>
      rewriteExpr(e, (x) => {
        const ac = argCol.get(x);
        if (ac) return colRef(ac);
        if (x.kind === 'column' && !x.correlated && idMap.has(x.columnId)) return colRef(idMap.get(x.columnId)!);
        return undefined;
      });
    aggInput = proj;
    forExpr = remap(forExpr);
    for (let i = 0; i < aggExprs.length; i++) {
      const a = aggExprs[i]!;
      aggExprs[i] = {
        ...a,
        args: a.args.map(remap),
        orderBy: a.orderBy.map((k) => ({ ...k, expr: remap(k.expr) })),
        ...(a.having ? { having: { ...a.having, expr: remap(a.having.expr) } } : {}),
        ...(a.filter ? { filter: remap(a.filter) } : {}),
      };
    }
    groupCols.splice(0, groupCols.length, ...groupCols.map((c) => { const m = idMap.get(c.id); return m ? { ...m, name: c.name } : c; }));
  }
  const calls = [];
  const outNames: string[] = [];
  for (const v of p.inValues) {
    const val = resolveExpr(an, v.expr, { scope: new Scope(), clause: 'PIVOT IN list' });
    const st = supertype([
      { type: forExpr.type, origin: Origin.Column },
      { type: val.type, origin: originOf(val) },
    ]);
    if (!st) throw sqlError(`PIVOT IN list item must be type ${typeToSql(forExpr.type)} to match the PIVOT FOR expression; found ${typeToSql(val.type)}`, v.expr.loc);
    const cval = coerce(val, st);
    const cond = callScalar('$is_not_distinct_from', [coerce(forExpr, st), cval], v.expr.loc);
    const vname = v.alias ?? implicitValueName(v.expr, cval);
    for (const [ai, a] of aggExprs.entries()) {
      const aAlias = p.aggregates[ai]!.alias;
      // Two unaliased aggregates would name their columns alike: the reference refuses any unaliased one when there
      // are several (resolver_query.cc, CreatePivotColumn; checked per value, so an IN-list error comes first).
      if (!aAlias && aggExprs.length > 1) throw sqlError('PIVOT expression must specify an alias unless it is the only pivot expression in the PIVOT clause', p.aggregates[ai]!.expr.loc);
      // `alias_value`, or the bare value for the only, unaliased aggregate; names may not start with a digit.
      const raw = aAlias ? `${aAlias}_${vname}` : vname;
      const name = /^[0-9]/.test(raw) ? `_${raw}` : raw;
      const column = an.newColumn(name, a.column.type);
      calls.push({ ...a, column, filter: a.filter ? { kind: 'logical' as const, type: T.BOOL, op: 'and' as const, args: [a.filter, cond] } : cond });
      outNames.push(name);
    }
  }
  const rel: AggregateRel = {
    kind: 'aggregate',
    input: aggInput,
    groupBy: groupCols.map((c, i) => ({ column: keyCols[i]!, expr: colRef(c) })),
    aggregates: calls,
    columns: [...keyCols, ...calls.map((c) => c.column)],
  };
  const alias = p.alias ?? '';
  const rv = rangeOver(alias, rel, [...groupCols.map((c) => c.name), ...outNames]);
  return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
}

export function resolveUnpivot(an: Analyzer, u: A.UnpivotRef, outer: Scope | undefined): Leaf {
  if (u.input.kind === 'UnnestRef') throw sqlError('UNPIVOT is not allowed with array scans', u.loc);
  const inner = new Scope(outer);
  const input = resolveFrom(an, u.input, inner, outer);
  if (isValueInput(inner)) throw sqlError('UNPIVOT is not allowed on value tables', u.loc);
  const all = inner.starList ?? [];
  // query-syntax.md, Rules for unpivot_operator: qualified names aren't permitted (the reference takes `t.a`).
  const qualified = u.inColumns.flatMap((s) => s.columns).find((n) => n.includes('.'));
  if (qualified) throw sqlError(`Qualified names are not allowed in the UNPIVOT IN clause: ${qualified}`, u.loc);
  const byName = (n: string) => {
    const hits = all.filter((x) => x.name.toLowerCase() === n.toLowerCase());
    if (!hits.length) throw sqlError(`Unrecognized name: ${n}`, u.loc);
    // Rules for unpivot from_item: duplicate columns in the from_item can't be referenced.
    if (hits.length > 1) throw sqlError(`Column name ${n} is ambiguous`, u.loc);
    return hits[0]!;
  };
  const inNames = u.inColumns.flatMap((s) => s.columns.map((n) => n.toLowerCase()));
  if (new Set(inNames).size < inNames.length) throw sqlError('Column names in UNPIVOT IN clause cannot be repeated', u.loc);
  // query-syntax.md, Rules for values_column / name_column: neither takes the other's name or an IN column's (an
  // input column's name is allowed: the result then repeats it).
  if (u.valueColumns.some((v) => v.toLowerCase() === u.nameColumn.toLowerCase())) {
    throw sqlError(`UNPIVOT name column ${u.nameColumn} has the name of a value column`, u.loc);
  }
  const clash = [...u.valueColumns, u.nameColumn].find((n) => inNames.includes(n.toLowerCase()));
  if (clash) throw sqlError(`UNPIVOT output column ${clash} has the name of a column in the IN clause`, u.loc);
  const consumed = new Set(u.inColumns.flatMap((s) => s.columns.map((n) => byName(n).id)));
  const keep = all.filter((c) => !consumed.has(c.id));
  const nv = u.valueColumns.length;
  // Group sizes are checked before any column is read by position (a short group has no k-th column).
  const width = u.inColumns[0]!.columns.length;
  if (u.inColumns.some((s) => s.columns.length !== width)) throw sqlError('All column groups in UNPIVOT IN clause must have the same number of columns', u.loc);
  if (width !== nv) throw sqlError('The number of new columns introduced as value columns must be the same as the number of columns in the column groups of UNPIVOT IN clause', u.loc);
  const valueTypes: SqlType[] = [];
  // The IN clause's columns must all have the first one's type (no coercion).
  for (let k = 0; k < nv; k++) {
    const first = byName(u.inColumns[0]!.columns[k]!).type;
    for (const s of u.inColumns) {
      const t = byName(s.columns[k]!).type;
      if (!typeEquals(t, first)) throw sqlError(`The datatype of column does not match with other datatypes in the IN clause. Expected ${typeToSql(first)}, Found ${typeToSql(t)}`, u.loc);
    }
    valueTypes.push(first);
  }
  const labels = u.inColumns.map((s) => (s.alias ? resolveExpr(an, s.alias, { scope: new Scope(), clause: 'UNPIVOT' }) : literal(T.STRING, s.columns.join('_'))));
  // Labels are INT64 or STRING literals, unnamed groups STRING: all of one type, no supertype taken.
  const labelType = labels[0]!.type;
  if (labels.some((l) => !typeEquals(l.type, labelType))) throw sqlError('All UNPIVOT labels must be the same type; when non-string labels are present then all labels must be explicitly provided', u.loc);
  const names = [...keep.map((c) => c.name), ...u.valueColumns, u.nameColumn];
  const branches = u.inColumns.map((s, i) => {
    const exprs: Expr[] = [...keep.map((c) => colRef(c)), ...s.columns.map((n, k) => coerce(colRef(byName(n)), valueTypes[k]!)), coerce(labels[i]!, labelType)];
    let r: Rel = project(an, input, exprs, names);
    if (u.nulls !== 'INCLUDE') {
      const vcols = r.columns.slice(keep.length, keep.length + nv);
      const conds = vcols.map((c) => not(callScalar('$is_null', [colRef(c)], u.loc)));
      r = filter(r, conds.length === 1 ? conds[0]! : { kind: 'logical', type: T.BOOL, op: 'or', args: conds });
    }
    return r;
  });
  const cols = branches[0]!.columns.map((c, i) => an.newColumn(names[i]!, c.type));
  const rel: Rel = branches.length === 1 ? branches[0]! : { kind: 'setop', op: 'union', all: true, inputs: branches, columns: cols };
  const rv = rangeOver(u.alias ?? '', rel, names);
  return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
}
