// Value constructors: INTERVAL n PART, ARRAY [...] and STRUCT(...) / tuples (literal folding, element coercion).
import type * as A from '../../grammar/ast.js';
import { intervalFromPart } from '../functions/interval.js';
import { T, arrayOf, structOf, typeEquals, typeToSql, type SqlType, type StructType } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import type { Expr, LiteralExpr } from './resolved.js';
import { Origin, canCoerce, supertype, typeFromNode } from './types.js';
import { type ExprCtx, resolveExpr } from './expr.js';
import { originOf, setOrigin, literal, coerce, isErrorCall, errorAs, typedOf } from './coercion.js';
import { callScalar } from './calls.js';

const INTERVAL_PARTS = new Set(['YEAR', 'QUARTER', 'MONTH', 'WEEK', 'DAY', 'HOUR', 'MINUTE', 'SECOND', 'MILLISECOND', 'MICROSECOND']);

export function resolveInterval(an: Analyzer, n: A.IntervalExpr, ctx: ExprCtx): Expr {
  const v = resolveExpr(an, n.value, ctx);
  if (!n.toPart && v.kind === 'literal' && v.type.kind === 'INT64' && v.value !== null) {
    // Folded here with the range checks of the runtime constructor.
    if (INTERVAL_PARTS.has(n.part)) return literal(T.INTERVAL, intervalFromPart(v.value as bigint, n.part));
  }
  const args = [v, literal(T.STRING, n.part)];
  if (n.toPart) args.push(literal(T.STRING, n.toPart));
  return callScalar('$make_interval_literal', args, n.loc);
}

export function resolveArray(an: Analyzer, n: A.ArrayExpr, ctx: ExprCtx): Expr {
  const els = n.elements.map((e) => resolveExpr(an, e, ctx));
  let elType: SqlType;
  if (n.elementType) {
    elType = typeFromNode(n.elementType);
    // The written type ARRAY<ARRAY<...>> is itself invalid, as in a CAST (the reference's wording).
    if (elType.kind === 'ARRAY') throw sqlError('Arrays of arrays are not supported', n.elementType.loc);
  } else if (els.length === 0) {
    const e = literal(arrayOf(T.INT64), []);
    setOrigin(e, Origin.Null); // untyped empty array
    return e;
  } else {
    // An array element refuses the literal before any supertype is sought, naming the first such element's type
    // ([[1], [2.5]], [1, [2]]: the reference).
    const nested = els.find((e) => e.type.kind === 'ARRAY');
    if (nested) throw sqlError(`Cannot construct array with element type ${typeToSql(nested.type)} because nested arrays are not supported`, n.loc);
    // ERROR(...) takes the other elements' type (as in unify).
    const typed = els.some((e) => !isErrorCall(e)) ? els.filter((e) => !isErrorCall(e)) : els;
    const t = supertype(typed.map(typedOf));
    if (!t) throw sqlError(`Array elements of types {${[...new Set(els.map((e) => typeToSql(e.type)))].join(', ')}} do not have a common supertype`, n.loc);
    elType = t;
  }
  if (elType.kind === 'ARRAY') throw sqlError(`Cannot construct array with element type ${typeToSql(elType)} because nested arrays are not supported`, n.loc);
  const coerced = els.map((e, i) => {
    if (isErrorCall(e)) return errorAs(e, elType);
    const fieldwise = coerceStructFields(e, elType, n.elements[i]!.loc);
    if (fieldwise) return fieldwise;
    if (!canCoerce(e.type, elType, originOf(e), e.kind === 'literal' ? e.value : undefined) && !typeEquals(e.type, elType)) {
      throw sqlError(`Array element type ${typeToSql(e.type)} does not coerce to ${typeToSql(elType)}`, n.elements[i]!.loc);
    }
    return coerce(e, elType, n.elements[i]!.loc);
  });
  const type = arrayOf(elType);
  if (coerced.every((e) => e.kind === 'literal')) {
    const allLit = coerced.every((e) => originOf(e) !== Origin.Param);
    return literal(type, coerced.map((e) => (e as LiteralExpr).value), allLit ? Origin.Literal : Origin.Param);
  }
  return { kind: 'make_array', type, elements: coerced };
}

/**
 * A tuple that is not all literals (`(1, NULL, CAST(x AS FLOAT64))`) coerces field by field, each field
 * with its own origin, as the reference coerces a struct constructor: its NULL field then takes the
 * element type's field type instead of the struct's INT64.
 */
function coerceStructFields(e: Expr, to: SqlType, loc: A.Loc): Expr | undefined {
  if (e.kind !== 'make_struct' || to.kind !== 'STRUCT' || e.type.kind !== 'STRUCT' || to.fields.length !== e.fields.length) return undefined;
  if (typeEquals(e.type, to)) return undefined;
  const ok = e.fields.every((f, i) => typeEquals(f.type, to.fields[i]!.type) || canCoerce(f.type, to.fields[i]!.type, originOf(f), f.kind === 'literal' ? f.value : undefined));
  if (!ok) return undefined;
  return { kind: 'make_struct', type: to, fields: e.fields.map((f, i) => coerceStructFields(f, to.fields[i]!.type, loc) ?? coerce(f, to.fields[i]!.type, loc)) };
}

function implicitAlias(e: A.Expr): string {
  if (e.kind === 'PathExpr') return e.parts[e.parts.length - 1]!;
  if (e.kind === 'FieldAccess') return e.field;
  return '';
}

export function resolveStruct(an: Analyzer, n: A.StructExpr, ctx: ExprCtx): Expr {
  const vals = n.fields.map((f) => resolveExpr(an, f.expr, ctx));
  let fields: { name: string; type: SqlType }[];
  let exprs = vals;
  if (n.type) {
    // data-types.md, Typed struct syntax: AS alias isn't allowed on the input expressions.
    const named = n.fields.find((f) => f.alias !== undefined);
    if (named) throw sqlError('STRUCT constructors cannot specify both an explicit type and field names with AS', named.expr.loc);
    const st = typeFromNode(n.type);
    if (st.kind !== 'STRUCT' || st.fields.length !== vals.length) {
      throw sqlError(`STRUCT type has ${st.kind === 'STRUCT' ? st.fields.length : 0} fields but constructor call has ${vals.length} fields`, n.loc);
    }
    fields = st.fields.map((f) => ({ name: f.name, type: f.type }));
    exprs = vals.map((v, i) => {
      const to = fields[i]!.type;
      if (!typeEquals(v.type, to) && !canCoerce(v.type, to, originOf(v)) && !isErrorCall(v)) {
        throw sqlError(`STRUCT field ${i + 1} type ${typeToSql(v.type)} does not coerce to ${typeToSql(to)}`, n.fields[i]!.expr.loc);
      }
      return coerce(v, to, n.fields[i]!.expr.loc);
    });
  } else {
    fields = n.fields.map((f, i) => ({ name: f.alias ?? (n.syntax === 'struct' ? implicitAlias(f.expr) : ''), type: vals[i]!.type }));
  }
  const type: StructType = n.graphElement ? { ...structOf(fields), graphElement: true } : structOf(fields);
  if (exprs.every((e) => e.kind === 'literal')) {
    return literal(type, exprs.map((e) => (e as LiteralExpr).value), exprs.some((e) => originOf(e) === Origin.Param) ? Origin.Param : Origin.Literal);
  }
  return { kind: 'make_struct', type, fields: exprs };
}
