// Names and field access: paths (columns, range variables, lambda/UDF parameters, script variables), field
// access incl. the array elements field access operator, subscripts, REPLACE_FIELDS.
import type * as A from '../../grammar/ast.js';
import { didYouMean } from './suggest.js';
import { ARRAY_PATH, pathItemType, type PathStep } from '../functions/array-path.js';
import { T, structOf, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import { type Value } from '../types/values.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { rewriteExpr } from './rewrite.js';
import type { CallExpr, Expr } from './resolved.js';
import { Correlation, Scope, colRef } from './scope.js';
import { Origin, canCoerce } from './types.js';
import { type ExprCtx, resolveExpr } from './expr.js';
import { originOf, setLoc, setRefName, literal, coerce } from './coercion.js';
import { callScalar } from './calls.js';

/** `base` with the field at `path` replaced by `value` (REPLACE_FIELDS, nested UPDATE of struct elements). */
export function replaceStructField(base: Expr, path: readonly string[], value: Expr, loc: A.Loc): Expr {
  if (path.length === 0) return coerce(value, base.type);
  const t = base.type;
  if (t.kind !== 'STRUCT') throw sqlError(`Cannot access field ${path[0]} on a value with type ${typeToSql(t)}`, loc);
  const k = t.fields.findIndex((f) => f.name.toLowerCase() === path[0]!.toLowerCase());
  if (k < 0) throw sqlError(`Field name ${path[0]} does not exist in ${typeToSql(t)}`, loc);
  const sub: Expr = { kind: 'field', type: t.fields[k]!.type, arg: base, fieldIndex: k };
  const nv = replaceStructField(sub, path.slice(1), value, loc);
  if (!typeEquals(nv.type, t.fields[k]!.type) && !canCoerce(nv.type, t.fields[k]!.type, originOf(nv))) throw sqlError(`Cannot assign ${typeToSql(nv.type)} to field ${path[0]} of type ${typeToSql(t.fields[k]!.type)}`, loc);
  const fields = t.fields.map((f, i): Expr => (i === k ? coerce(nv, f.type) : { kind: 'field', type: f.type, arg: base, fieldIndex: i }));
  return { kind: 'make_struct', type: t, fields };
}

export function fieldAccess(base: Expr, field: string, loc: A.Loc, flatten = false): Expr {
  const t = base.type;
  if (flatten && t.kind === 'ARRAY') {
    const el = arrayPathItem(base) ?? t.element;
    const item = el.kind === 'ARRAY' ? el.element : el;
    if (item.kind === 'STRUCT') {
      const lf = field.toLowerCase();
      const idx = item.fields.findIndex((f) => f.name.toLowerCase() === lf);
      if (idx < 0) throw sqlError(`Field name ${field} does not exist in ${typeToSql(item)}`, loc);
      if (item.fields.findIndex((f, i) => i > idx && f.name.toLowerCase() === lf) >= 0) throw sqlError(`Struct field name ${field} is ambiguous`, loc);
      return extendArrayPath(base, { f: idx }, [], loc);
    }
    if (item.kind === 'JSON') return extendArrayPath(base, { j: field }, [], loc);
  }
  if (t.kind === 'STRUCT') {
    const lf = field.toLowerCase();
    const idx = t.fields.findIndex((f) => f.name.toLowerCase() === lf);
    if (idx < 0) throw sqlError(`Field name ${field} does not exist in ${typeToSql(t)}`, loc);
    if (t.fields.findIndex((f, i) => i > idx && f.name.toLowerCase() === lf) >= 0) {
      throw sqlError(`Struct field name ${field} is ambiguous`, loc);
    }
    // Field of a literal struct folds (parameters like @s.x stay constant).
    if (base.kind === 'literal') {
      const v = base.value === null ? null : (base.value as Value[])[idx]!;
      return literal(t.fields[idx]!.type, v, originOf(base));
    }
    const fa: Expr = { kind: 'field', type: t.fields[idx]!.type, arg: base, fieldIndex: idx };
    setLoc(fa, loc);
    return fa;
  }
  if (t.kind === 'JSON') {
    // PARSE_JSON(s).f: the text is checked whole but only the field's value is made (functions/json-core.ts JsonText).
    if (base.kind === 'call' && base.name === 'PARSE_JSON' && base.args.length <= 2) base = callScalar('$parse_json_lazy', [...base.args], loc, { safe: base.safe });
    return callScalar('$subscript', [base, literal(T.STRING, field)], loc);
  }
  if (t.kind === 'ARRAY') {
    // The reference analyzer's hint for an array of structs: the path operator lives inside FLATTEN.
    const hint = t.element.kind === 'STRUCT' ? ". You may need an explicit call to FLATTEN, and the flattened argument may only contain 'dot' after the first array" : '';
    throw sqlError(`Cannot access field ${field} on a value with type ${typeToSql(t)}${hint}`, loc);
  }
  throw sqlError(`Cannot access field ${field} on a value with type ${typeToSql(t)}`, loc);
}

/** The item type of an array path call (before its final flattening), else undefined. */
function arrayPathItem(e: Expr): SqlType | undefined {
  if (e.kind !== 'call' || e.name !== ARRAY_PATH) return undefined;
  const t = pathItemType(e.args[1]!.type, JSON.parse((e.args[0] as { value: string }).value) as PathStep[]);
  return typeof t === 'string' ? undefined : t;
}

/** `base` (an array, or an array path call) with one more step. */
function extendArrayPath(base: Expr, step: PathStep, extra: Expr[], loc: A.Loc): Expr {
  const prev = base.kind === 'call' && base.name === ARRAY_PATH ? base : undefined;
  const plan: PathStep[] = prev ? [...(JSON.parse((prev.args[0] as { value: string }).value) as PathStep[]), step] : [step];
  const rest = prev ? prev.args.slice(1) : [base];
  return callScalar(ARRAY_PATH, [literal(T.STRING, JSON.stringify(plan)), ...rest, ...extra], loc);
}

export function resolvePath(an: Analyzer, n: A.PathExpr, ctx: ExprCtx): Expr {
  const first = n.parts[0]!;
  const lfirst = first.toLowerCase();
  let base: Expr | undefined;
  let rest = 1;
  const lam = ctx.lambdaParams?.get(lfirst);
  if (lam) base = colRef(lam);
  else if (ctx.udfArgs?.has(lfirst)) {
    if (ctx.inAggregate && ctx.withVars?.has(lfirst)) {
      throw sqlError(`Column '${first}' is introduced by WITH. Columns introduced by WITH cannot be used in the arguments to aggregate or analytic functions.`, n.loc);
    }
    base = ctx.udfArgs.get(lfirst)!;
  }
  else if (ctx.selectAliases?.has(lfirst)) base = ctx.selectAliases.get(lfirst)!;
  if (!base) {
    let arg: ReturnType<Scope['lookupUdfArg']>;
    const hit = ctx.scope.lookup(first, n.parts[1]);
    if (hit?.kind === 'ambiguous') throw sqlError(`Column name ${first} is ambiguous`, n.loc);
    if (hit?.kind === 'column') {
      base = colRef(hit.column, hit.correlated);
      setRefName(base, first);
    } else if (hit?.kind === 'field') {
      const r = colRef(hit.column, hit.correlated);
      setRefName(r, first);
      setLoc(r, n.loc);
      base = { kind: 'field', type: hit.type, arg: r, fieldIndex: hit.fieldIndex };
      setRefName(base, first);
    } else if (hit?.kind === 'range') {
      const rv = hit.rv;
      if (rv.value) {
        base = colRef(rv.value, hit.correlated);
        setRefName(base, first);
      } else if (n.parts.length > 1) {
        // alias.column
        const lc = n.parts[1]!.toLowerCase();
        const cols = rv.columns.filter((c) => c.name.toLowerCase() === lc);
        if (cols.length === 0) throw sqlError(`Name ${n.parts[1]} not found inside ${first}`, n.loc);
        if (cols.length > 1) throw sqlError(`Name ${n.parts[1]} is ambiguous inside ${first}`, n.loc);
        base = colRef(cols[0]!, hit.correlated);
        setRefName(base, `${first}.${n.parts[1]}`);
        rest = 2;
      } else {
        // The range variable as a value: a STRUCT of its columns (pseudo-columns left out, as `*` leaves them).
        const shown = rv.hidden ? rv.columns.filter((c) => !rv.hidden!.has(c.id)) : rv.columns;
        const fields = shown.map((c) => {
          const r = colRef(c, hit.correlated);
          setRefName(r, first);
          setLoc(r, n.loc);
          return r;
        });
        base = { kind: 'make_struct', type: structOf(shown.map((c) => ({ name: c.name, type: c.type }))), fields };
      }
    } else if ((arg = ctx.scope.lookupUdfArg(first))) {
      base = arg.crossed.length ? correlateArg(arg.expr, arg.crossed) : arg.expr;
    } else {
      const tp = an.tvfParams[an.tvfParams.length - 1]?.get(lfirst);
      const v = tp ? undefined : an.env.variables.get(lfirst);
      if (tp) base = tp;
      else if (v) base = literal(v.type, v.value, Origin.Param);
    }
  }
  if (!base) throw sqlError(`Unrecognized name: ${first}${didYouMean(first, ctx.scope.visibleNames())}`, n.loc);
  setLoc(base, n.loc);
  for (let i = rest; i < n.parts.length; i++) base = fieldAccess(base, n.parts[i]!, n.loc, ctx.flatten);
  return base;
}

/**
 * A SQL function argument used inside a subquery of the function's body: its
 * columns are outer columns there, read through every boundary crossed.
 */
function correlateArg(e: Expr, crossed: readonly Correlation[]): Expr {
  const add = (id: number) => {
    for (const c of crossed) c.ids.add(id);
  };
  return rewriteExpr(e, (x) => {
    if (x.kind === 'subquery') {
      x.correlatedColumns.forEach(add);
      return x;
    }
    if (x.kind !== 'column') return undefined;
    add(x.columnId);
    return x.correlated ? x : { ...x, correlated: true };
  });
}

export function resolveSubscript(an: Analyzer, n: A.Subscript, ctx: ExprCtx): Expr {
  const base = resolveExpr(an, n.expr, ctx);
  const idx = resolveExpr(an, n.index, { ...ctx, flatten: false });
  // Inside an array path, a subscript applies to each element's array.
  if (ctx.flatten && arrayPathItem(base)?.kind === 'ARRAY') {
    const mode = n.mode === 'BARE' ? 'OFFSET' : n.mode;
    return extendArrayPath(base, { s: mode, a: (base as CallExpr).args.length }, [idx], n.loc);
  }
  if (base.type.kind === 'ARRAY') {
    const fn =
      n.mode === 'OFFSET' || n.mode === 'BARE' ? '$array_at_offset' : n.mode === 'ORDINAL' ? '$array_at_ordinal' : n.mode === 'SAFE_OFFSET' ? '$safe_array_at_offset' : '$safe_array_at_ordinal';
    return callScalar(fn, [base, idx], n.loc);
  }
  if (base.type.kind === 'STRUCT' && (n.mode === 'BARE' || n.mode === 'OFFSET' || n.mode === 'ORDINAL')) return structFieldAt(base, idx, n.mode, n.loc);
  if (n.mode !== 'BARE') {
    throw sqlError(`Element access using [${n.mode}()] is not supported on values of type ${typeToSql(base.type)}`, n.loc);
  }
  return callScalar('$subscript', [base, idx], n.loc);
}

/**
 * The struct subscript operator s[i], s[OFFSET(i)], s[ORDINAL(i)] (operators.md): a field chosen by a literal integer
 * position, checked at analysis; the SAFE_ positions aren't supported on structs.
 */
function structFieldAt(base: Expr, idx: Expr, mode: 'BARE' | 'OFFSET' | 'ORDINAL', loc: A.Loc): Expr {
  const t = base.type as Extract<SqlType, { kind: 'STRUCT' }>;
  if (idx.kind !== 'literal' || idx.type.kind !== 'INT64' || idx.value === null) {
    throw sqlError('Field element access is only supported for literal integer positions', loc);
  }
  const pos = Number(idx.value as bigint);
  const k = mode === 'ORDINAL' ? pos - 1 : pos;
  if (k < 0 || k >= t.fields.length) throw sqlError(`Field ${mode === 'ORDINAL' ? 'ordinal' : 'offset'} ${pos} is out of bounds in ${typeToSql(t)}`, loc);
  return { kind: 'field', type: t.fields[k]!.type, arg: base, fieldIndex: k };
}
