// Expression tags (origin, location, reference name, carried on the IR objects), literals, and implicit
// coercion: literal-cast folding, ERROR() typing, argument info, supertype unification, BOOL conditions.
import type * as A from '../../grammar/ast.js';
import type { ArgInfo } from '../functions/registry.js';
import { T, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import { Decimal, type Value } from '../types/values.js';
import { BIGNUMERIC_MAX, BIGNUMERIC_MIN } from '../types/json-values.js';
import { microsToPicos } from '../types/picos.js';
import { sqlError } from './errors.js';
import type { Expr, LiteralExpr } from './resolved.js';
import { Origin, parseDateValue, parseDatetimeValue, parseTimeValue, parseTimestampPicosValue, parseTimestampValue, supertype } from './types.js';

// Analysis-only facts ride on the IR objects under symbol keys: invisible to
// the executor and to JSON, copied by object spread, and much cheaper than
// WeakMap side tables on this hot path.
const ORIGIN = Symbol('origin');
export const LOC = Symbol('loc');
const REFNAME = Symbol('refName');
/** The source text of a floating-point literal: it coerces to NUMERIC/BIGNUMERIC exactly. */
export const FLOATTEXT = Symbol('floatText');
interface Tagged {
  [ORIGIN]?: Origin;
  [LOC]?: A.Loc;
  [REFNAME]?: string;
  [FLOATTEXT]?: string;
}
export const tag = (e: Expr): Tagged => e as unknown as Tagged;

export function originOf(e: Expr): Origin {
  return tag(e)[ORIGIN] ?? Origin.Column;
}
export function setOrigin(e: Expr, o: Origin): void {
  tag(e)[ORIGIN] = o;
}
export function locOf(e: Expr): A.Loc | undefined {
  return tag(e)[LOC];
}
export function setLoc(e: Expr, loc: A.Loc): void {
  tag(e)[LOC] = loc;
}
export function refNameOf(e: Expr): string | undefined {
  return tag(e)[REFNAME];
}
export function setRefName(e: Expr, n: string): void {
  tag(e)[REFNAME] = n;
}
export function markLoc<E extends Expr>(e: E, loc: A.Loc): E {
  if (!tag(e)[LOC]) setLoc(e, loc);
  return e;
}

export function literal(type: SqlType, value: Value, origin: Origin = Origin.Literal): LiteralExpr {
  const e: LiteralExpr = { kind: 'literal', type, value };
  setOrigin(e, value === null && origin === Origin.Literal ? Origin.Null : origin);
  return e;
}

export const TRUE = (): LiteralExpr => literal(T.BOOL, true);

/** Coerces `e` to `to` (implicitly): literals fold, other values get a CastExpr; `loc` places a literal's failed cast. */
export function coerce(e: Expr, to: SqlType, loc?: A.Loc): Expr {
  if (typeEquals(e.type, to)) return e;
  if (isErrorCall(e)) return errorAs(e, to);
  const text = tag(e)[FLOATTEXT];
  if (text !== undefined && e.kind === 'literal' && e.type.kind === 'FLOAT64') {
    const d = exactDecimalLiteral(text, to);
    if (d) return d;
    // Literal coercion is evaluated at analysis time and fails when the literal does not fit (conversion_rules.md,
    // literal coercion: a FLOAT64 literal to NUMERIC), even where no row would reach it.
    if (to.kind === 'NUMERIC' || to.kind === 'BIGNUMERIC') throw sqlError(`Invalid ${to.kind} value: ${text}`, loc);
  }
  if (e.kind === 'literal') {
    const v = foldLiteralCast(e.value, e.type, to);
    if (v !== undefined) {
      const out = literal(to, v, originOf(e) === Origin.Null ? Origin.Literal : originOf(e));
      setOrigin(out, originOf(e));
      return out;
    }
    // Literal coercion is done at analysis (conversion rules): a STRING literal, alone or inside an ARRAY or STRUCT
    // literal, taken as a date/time type (a CASE/IF/COALESCE branch, an array element, a written column) that does
    // not fold is a text that is no such value, and fails the query even where no row would evaluate it.
    if (originOf(e) === Origin.Literal && holdsString(e.type))
      throw sqlError(`Could not cast literal ${literalText(e.value, e.type)} to type ${typeToSql(to)}`, loc);
  }
  const c: Expr = { kind: 'cast', type: to, arg: e, safe: false };
  if (originOf(e) !== Origin.Column) setOrigin(c, originOf(e));
  return c;
}

const holdsString = (t: SqlType): boolean =>
  t.kind === 'STRING' || (t.kind === 'ARRAY' && holdsString(t.element)) || (t.kind === 'STRUCT' && t.fields.some((f) => holdsString(f.type)));

/** A literal as the reference implementation quotes it in that refusal: "text", [a, b], {a, b}. */
function literalText(v: Value, t: SqlType): string {
  if (v === null) return 'NULL';
  if (t.kind === 'ARRAY') return `[${(v as Value[]).map((x) => literalText(x, t.element)).join(', ')}]`;
  if (t.kind === 'STRUCT') return `{${(v as Value[]).map((x, i) => literalText(x, t.fields[i]!.type)).join(', ')}}`;
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

/** Literal conversions done at analysis time; undefined = leave it to the runtime cast. */
function foldLiteralCast(v: Value, from: SqlType, to: SqlType): Value | undefined {
  if (v === null) return null;
  if (to.kind === 'STRUCT' || to.kind === 'ARRAY') {
    if (from.kind === 'ARRAY' && to.kind === 'ARRAY' && Array.isArray(v)) {
      const out: Value[] = [];
      for (const x of v) {
        const y = foldLiteralCast(x, from.element, to.element);
        if (y === undefined) return undefined;
        out.push(y);
      }
      return out;
    }
    if (from.kind === 'STRUCT' && to.kind === 'STRUCT' && Array.isArray(v)) {
      const out: Value[] = [];
      for (let i = 0; i < v.length; i++) {
        const y = foldLiteralCast(v[i]!, from.fields[i]!.type, to.fields[i]!.type);
        if (y === undefined) return undefined;
        out.push(y);
      }
      return out;
    }
    return undefined;
  }
  if (from.kind === to.kind) return v;
  switch (from.kind) {
    case 'INT64':
      if (to.kind === 'FLOAT64') return Number(v as bigint);
      if (to.kind === 'NUMERIC' || to.kind === 'BIGNUMERIC') return new Decimal((v as bigint).toString());
      return undefined;
    case 'NUMERIC':
    case 'BIGNUMERIC':
      if (to.kind === 'FLOAT64') return (v as Decimal).toNumber();
      if (to.kind === 'BIGNUMERIC' || to.kind === 'NUMERIC') return v;
      return undefined;
    case 'FLOAT64':
      if ((to.kind === 'NUMERIC' || to.kind === 'BIGNUMERIC') && Number.isFinite(v as number)) return new Decimal(v as number);
      return undefined;
    case 'STRING': {
      const s = v as string;
      switch (to.kind) {
        case 'DATE':
          return parseDateValue(s);
        case 'TIME':
          return parseTimeValue(s);
        case 'DATETIME':
          return parseDatetimeValue(s);
        case 'TIMESTAMP':
          return parseTimestampValue(s);
        case 'TIMESTAMP_PICOS':
          return parseTimestampPicosValue(s);
        default:
          return undefined;
      }
    }
    case 'TIMESTAMP':
      // A TIMESTAMP literal widened to TIMESTAMP(12): exact.
      if (to.kind === 'TIMESTAMP_PICOS') return microsToPicos(v as bigint);
      return undefined;
    case 'DATE':
      if (to.kind === 'DATETIME') return BigInt(v as number) * 86400000000n;
      return undefined;
    default:
      return undefined;
  }
}

/**
 * An ERROR(...) call, under SAFE or not: its type is inferred from its context (the debugging functions page),
 * since it never returns a value of its own (SAFE.ERROR returns NULL). The reference analyzer agrees:
 * `x AND ERROR('x')`, `UPPER(SAFE.ERROR('x'))` and `COALESCE('a', SAFE.ERROR('x'))` all resolve.
 */
export function isErrorCall(e: Expr): boolean {
  return e.kind === 'call' && e.name.toUpperCase() === 'ERROR';
}

/** An ERROR call given the type its context asks for (the kernel never yields a value; SAFE rows are NULLs of e.type). */
export function errorAs(e: Expr, t: SqlType): Expr {
  return { ...e, type: t };
}

export function argInfo(e: Expr, name?: string): ArgInfo {
  const o = originOf(e);
  const info: { -readonly [K in keyof ArgInfo]: ArgInfo[K] } = { type: e.type };
  if (e.kind === 'literal') info.constant = { value: e.value };
  if (e.kind === 'lambda') info.lambda = true;
  if (o === Origin.Null) info.untypedNull = true;
  // Always said: an explicitly typed literal (NUMERIC '1.5') holds a constant but coerces as a column does.
  info.isLiteral = o === Origin.Literal || o === Origin.Null;
  if (o === Origin.Param) info.isParameter = true;
  if (name) info.name = name;
  return info;
}

/** The supertype input of an expression (literals bring their value: STRUCT(NULL AS f) fits any field type). */
export function typedOf(e: Expr): { type: SqlType; origin: Origin; value?: unknown } {
  return e.kind === 'literal' ? { type: e.type, origin: originOf(e), value: e.value } : { type: e.type, origin: originOf(e) };
}

/**
 * Unifies branch types (CASE/IF/COALESCE) and coerces every branch to the supertype.
 * `fn` words a conditional function's refusal as the service does: every argument's type, then its signature.
 */
export function unify(exprs: Expr[], loc: A.Loc, what: string, fn?: { args: readonly Expr[]; signature: string }): { type: SqlType; exprs: Expr[] } {
  // ERROR(...) never returns: it takes the type the other branches agree on.
  if (exprs.some(isErrorCall) && !exprs.every(isErrorCall)) {
    const rest = exprs.filter((e) => !isErrorCall(e));
    const u = unify(rest, loc, what, fn);
    let k = 0;
    return { type: u.type, exprs: exprs.map((e) => (isErrorCall(e) ? errorAs(e, u.type) : u.exprs[k++]!)) };
  }
  const t = supertype(exprs.map(typedOf));
  if (!t) {
    const shown = (fn?.args ?? exprs).map((e) => (originOf(e) === Origin.Null ? 'NULL' : typeToSql(e.type))).join(', ');
    throw sqlError(`No matching signature for ${what} for argument types: ${shown}${fn ? `. Supported signature: ${fn.signature}` : ''}`, loc);
  }
  return { type: t, exprs: exprs.map((e) => coerce(e, t, locOf(e) ?? loc)) };
}

/** A condition (WHERE, ON, WHEN, IF...): BOOL, an untyped NULL, or an ERROR call typed BOOL. */
export function requireBool(e: Expr, loc: A.Loc, what: string): Expr {
  if (e.type.kind === 'BOOL') return e;
  if (isErrorCall(e)) return errorAs(e, T.BOOL);
  if (originOf(e) === Origin.Null) return literal(T.BOOL, null);
  throw sqlError(`${what} should return type BOOL, but returns ${typeToSql(e.type)}`, loc);
}

/** A float literal's text as a NUMERIC/BIGNUMERIC literal when it fits (else the ordinary FLOAT64 cast reports the error). */
export function exactDecimalLiteral(text: string, to: SqlType): LiteralExpr | undefined {
  if (to.kind !== 'NUMERIC' && to.kind !== 'BIGNUMERIC') return undefined;
  let d: Decimal;
  try {
    d = new Decimal(text).toDecimalPlaces(to.kind === 'NUMERIC' ? 9 : 38, Decimal.ROUND_HALF_UP);
  } catch {
    return undefined;
  }
  const fits = to.kind === 'NUMERIC' ? d.abs().lt('1e29') : d.gte(BIGNUMERIC_MIN) && d.lte(BIGNUMERIC_MAX);
  return fits ? literal(to.kind === 'NUMERIC' ? T.NUMERIC : T.BIGNUMERIC, d) : undefined;
}
