// Expression resolution: AST expressions -> resolved Expr over column ids.
// Operators are calls of the registry's internal names ($add, $equal, ...);
// IF/IFNULL/NULLIF/COALESCE/CASE become ConditionalExpr (lazy branches);
// AND/OR/NOT become LogicalExpr. Aggregate and analytic calls are pulled out
// into the enclosing query's collectors and replaced by column references.
import type * as A from '../../grammar/ast.js';
import type { ArgInfo, AggregateFunctionDef, ScalarFunctionDef } from '../functions/registry.js';
import { allFunctions, lookupFunction, resolveAggregate as resolveAggregateFn, resolveScalar } from '../functions/registry.js';
import { didYouMean } from './suggest.js';
import { ARRAY_PATH, pathItemType, type PathStep } from '../functions/array-path.js';
import { intervalFromPart } from '../functions/interval.js';
import { collateAggregate, collateScalar, collationAffects, collationByKeyArgs, isBinaryCollation, collationNameError, collationOf, collationSensitive, mergeCollations, propagatesCollation, withCollation } from '../functions/collation.js';
import { T, arrayOf, isEqualityComparable, isOrderable, structOf, typeEquals, typeToSql, type SqlType, type StructType } from '../types/types.js';
import { Decimal, type Value } from '../types/values.js';
import { BIGNUMERIC_MAX, BIGNUMERIC_MIN } from '../types/json-values.js';
import { microsToPicos } from '../types/picos.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { QueryError } from '../types/errors.js';
import { constantValue } from './names.js';
import { refuseUnservedFunction } from './unserved-functions.js';
import { rewriteExpr } from './rewrite.js';
import { resolveSubquery } from './query.js';
import type {
  AggregateCall,
  CallExpr,
  ColumnRefExpr,
  Expr,
  LiteralExpr,
  ResolvedColumn,
  SortKey,
  WindowCall,
} from './resolved.js';
import { Correlation, Scope, colRef } from './scope.js';
import {
  Origin,
  canCast,
  canCoerce,
  parseDateValue,
  parseDatetimeValue,
  parseIntLiteral,
  parseTimeValue,
  parseTimestampPicosValue,
  parseTimestampValue,
  rangeLiteral,
  supertype,
  typeFromNode,
  typedLiteral,
} from './types.js';
import { findUdf, inlineUdf } from './sql-udfs.js';
import { isGraphElementType } from './graph-values.js';
import { resolveWindowCall } from './window-calls.js';

// Analysis-only facts ride on the IR objects under symbol keys: invisible to
// the executor and to JSON, copied by object spread, and much cheaper than
// WeakMap side tables on this hot path.
const ORIGIN = Symbol('origin');
const LOC = Symbol('loc');
const REFNAME = Symbol('refName');
/** The source text of a floating-point literal: it coerces to NUMERIC/BIGNUMERIC exactly. */
const FLOATTEXT = Symbol('floatText');
interface Tagged {
  [ORIGIN]?: Origin;
  [LOC]?: A.Loc;
  [REFNAME]?: string;
  [FLOATTEXT]?: string;
}
const tag = (e: Expr): Tagged => e as unknown as Tagged;

export function originOf(e: Expr): Origin {
  return tag(e)[ORIGIN] ?? Origin.Column;
}
function setOrigin(e: Expr, o: Origin): void {
  tag(e)[ORIGIN] = o;
}
export function locOf(e: Expr): A.Loc | undefined {
  return tag(e)[LOC];
}
function setLoc(e: Expr, loc: A.Loc): void {
  tag(e)[LOC] = loc;
}
export function refNameOf(e: Expr): string | undefined {
  return tag(e)[REFNAME];
}
function setRefName(e: Expr, n: string): void {
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

// ---------------------------------------------------------------- collectors

/** Aggregates of one query block; their arguments resolve in `scope` (the FROM scope). */
export class AggCollector {
  readonly calls: AggregateCall[] = [];
  /** GROUPING(x) calls: filled once group keys are known. */
  readonly grouping: { column: ResolvedColumn; arg: Expr; loc: A.Loc }[] = [];
  /** SELECT-list aliases, once known: GROUPING(alias) names a grouped select item. */
  selectAliases?: ReadonlyMap<string, Expr>;
  constructor(readonly scope: Scope) {}
}

export class WindowCollector {
  readonly calls: WindowCall[] = [];
  constructor(readonly named: ReadonlyMap<string, A.WindowSpec>) {}
}

export interface ExprCtx {
  readonly scope: Scope;
  /** For error messages: "WHERE clause", "GROUP BY clause", ... */
  readonly clause: string;
  readonly aggs?: AggCollector;
  readonly wins?: WindowCollector;
  /** Inside an aggregate's arguments (nested aggregates are errors). */
  readonly inAggregate?: boolean;
  /** SQL UDF parameters being inlined (and the variables of WITH expressions). */
  readonly udfArgs?: ReadonlyMap<string, Expr>;
  /** Variables of enclosing WITH expressions, which an aggregate's arguments can't use (operators.md: WITH expression). */
  readonly withVars?: ReadonlySet<string>;
  readonly lambdaParams?: ReadonlyMap<string, ResolvedColumn>;
  /** HAVING/QUALIFY: SELECT-list aliases (lower-cased) resolve to their expressions first. */
  readonly selectAliases?: ReadonlyMap<string, Expr>;
  /**
   * Inside FLATTEN(...) or UNNEST(...): a field access on an ARRAY is the array elements
   * field access operator. Holds only along the path itself (names, fields, subscripts).
   */
  readonly flatten?: boolean;
  /** A column DEFAULT: subqueries are errors there (data-definition-language: default values). */
  readonly noSubqueries?: boolean;
  /**
   * Why an analytic function is refused here, where the clause itself would take one: inside an
   * aggregate's arguments, another analytic function's arguments, PARTITION BY or window ORDER BY
   * (the reference implementation's reasons).
   */
  readonly analyticRefusal?: string;
}

/**
 * For a STRING type with a non-binary collation: wraps values in
 * `$collation_canonical` (one table for every use of the returned function),
 * so that grouping, DISTINCT and set operations see strings equal under the
 * collation as one value. Undefined when the type needs nothing.
 */
export function collationGrouper(t: SqlType): ((e: Expr) => Expr) | undefined {
  if (t.kind !== 'STRING' || isBinaryCollation(t.collation)) return undefined;
  const base = callScalar('$collation_canonical', [literal(T.STRING, ''), literal(T.STRING, t.collation!)], undefined);
  return (e) => ({ ...base, type: t, args: [e, base.args[1]!] });
}

// ---------------------------------------------------------------- coercion

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

// ---------------------------------------------------------------- calls

/** `; Did you mean f?` with the closest built-in function, in lower case as the service writes it. */
export function functionHint(typed: string): string {
  return didYouMean(typed, [...allFunctions()].map(([n]) => n.toLowerCase()));
}

/** Resolves a registry scalar function over resolved arguments (casts inserted per its argTypes). */
export function callScalar(name: string, args: Expr[], loc: A.Loc | undefined, opts: { safe?: boolean; display?: string; names?: (string | undefined)[]; collation?: string } = {}): CallExpr {
  const def = lookupFunction(name);
  if (!def || def.kind !== 'scalar') throw sqlError(`Function not found: ${opts.display ?? name}${def ? '' : functionHint(opts.display ?? name)}`, loc);
  return applyScalar(def, args, loc, opts);
}

function applyScalar(def: ScalarFunctionDef, args: Expr[], loc: A.Loc | undefined, opts: { safe?: boolean; names?: (string | undefined)[]; collation?: string }): CallExpr {
  // ERROR(...) never returns: as an argument it matches any parameter type, as an untyped NULL does, and takes
  // that type (the reference analyzer's SUBSTR(ERROR('x'), 1) is a STRING call that raises 'x').
  const infos = args.map((a, i) => (isErrorCall(a) ? { ...argInfo(a, opts.names?.[i]), untypedNull: true } : argInfo(a, opts.names?.[i])));
  const r = resolveScalar(def, infos);
  if (!r.ok) throw sqlError(r.message, loc);
  let fn = r.resolved;
  let cargs = args.map((a, i) => (fn.argTypes[i] ? coerce(a, fn.argTypes[i]!) : a));
  let type = fn.returnType;
  // string_functions.md, CONTAINS_SUBSTR: the search value must be a STRING literal or constant expression.
  if (def.name === 'CONTAINS_SUBSTR' && args[1] && originOf(args[1]) !== Origin.Param && args[1].kind !== 'literal' && constantValue(args[1]) === undefined) {
    throw sqlError('The second argument of CONTAINS_SUBSTR must be a STRING literal or a constant expression', loc);
  }
  if (def.name === 'COLLATE') {
    const spec = args[1]?.kind === 'literal' && originOf(args[1]) !== Origin.Param ? (args[1].value as string | null) : null;
    if (spec === null) throw sqlError('The second argument of COLLATE() must be a string literal', loc);
    const err = collationNameError(spec);
    if (err) throw sqlError(err, loc);
    // collation-concepts.md, Limitations: 'und:ci' and empty collation only. ('binary', which the page says can't be
    // set explicitly, stays: the pinned GoogleSQL conformance cases use it.)
    if (!['', 'und:ci', 'binary'].includes(spec.toLowerCase())) throw sqlError(`Collation '${spec}' is not supported: COLLATE takes 'und:ci' or an empty collation`, loc);
    type = withCollation(type, spec);
  } else if (collationAffects(def.name)) {
    // Collation: one common collation over the string arguments (conflicts are
    // errors); comparisons run under it and propagating functions carry it on.
    const m = opts.collation !== undefined ? { collation: opts.collation } : mergeCollations(args.map((a) => collationOf(a.type)));
    if (m.conflict) {
      const [c, other, i] = m.conflict;
      throw sqlError(`Collation conflict: "${c}" vs. "${other}". Collation on argument ${i + 1} ("${c}") in function ${collationDisplay(def.name)} is not compatible with other arguments`, loc);
    }
    if (m.collation && !isBinaryCollation(m.collation) && collationByKeyArgs(def.name)) {
      // a = b under a collation is key(a) = key(b): still an equi-join key for the planner.
      const spec = literal(T.STRING, m.collation);
      cargs = cargs.map((a) => (a.type.kind === 'STRING' ? callScalar('$collation_key', [a, spec], loc) : a));
    } else if (m.collation) {
      if (collationSensitive(def.name)) fn = collateScalar(def.name, fn, m.collation);
      if (propagatesCollation(def.name)) type = withCollation(type, m.collation);
    }
  }
  const call: CallExpr = { kind: 'call', type, name: def.name, args: cargs, fn, safe: !!opts.safe };
  if (loc) setLoc(call, loc);
  return call;
}

const COLLATION_DISPLAY: Record<string, string> = { $in: 'IN', $in_array: 'IN UNNEST', $like: 'LIKE', $between: 'BETWEEN', $is_distinct_from: 'IS DISTINCT FROM', $is_not_distinct_from: 'IS NOT DISTINCT FROM' };
function collationDisplay(name: string): string {
  if (COLLATION_DISPLAY[name]) return COLLATION_DISPLAY[name]!;
  for (const [sym, fn] of Object.entries(BINARY)) if (fn === name) return sym;
  return name;
}

const BINARY: Record<string, string> = {
  '+': '$add', '-': '$subtract', '*': '$multiply', '/': '$divide', '||': '$concat_op',
  '<<': '$bitwise_left_shift', '>>': '$bitwise_right_shift', '&': '$bitwise_and', '^': '$bitwise_xor', '|': '$bitwise_or',
  '=': '$equal', '!=': '$not_equal', '<': '$less', '>': '$greater', '<=': '$less_or_equal', '>=': '$greater_or_equal',
};

function logical(op: 'and' | 'or' | 'not', args: Expr[], loc: A.Loc, opName: string): Expr {
  const out: Expr[] = [];
  for (const a of args) {
    if (a.type.kind !== 'BOOL') {
      if (isErrorCall(a)) {
        out.push(errorAs(a, T.BOOL));
        continue;
      }
      if (originOf(a) === Origin.Null) {
        out.push(literal(T.BOOL, null));
        continue;
      }
      const types = args.map((x) => (originOf(x) === Origin.Null ? 'NULL' : typeToSql(x.type))).join(', ');
      const sigs = op === 'not' ? 'NOT BOOL' : `BOOL ${opName} BOOL`;
      throw sqlError(`No matching signature for operator ${opName} for argument types: ${types}. Supported signature: ${sigs}`, loc);
    }
    // Flatten nested AND/OR so the executor sees one n-ary node.
    if (op !== 'not' && a.kind === 'logical' && a.op === op) out.push(...a.args);
    else out.push(a);
  }
  return { kind: 'logical', type: T.BOOL, op, args: out };
}

export function not(e: Expr): Expr {
  return { kind: 'logical', type: T.BOOL, op: 'not', args: [e] };
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

// ---------------------------------------------------------------- main entry

export function resolveExpr(an: Analyzer, n: A.Expr, ctx: ExprCtx): Expr {
  if (ctx.flatten && n.kind !== 'PathExpr' && n.kind !== 'FieldAccess' && n.kind !== 'Subscript') ctx = { ...ctx, flatten: false };
  const e = resolveInner(an, n, ctx);
  if (!tag(e)[LOC]) setLoc(e, n.loc);
  return e;
}

/** A float literal's text as a NUMERIC/BIGNUMERIC literal when it fits (else the ordinary FLOAT64 cast reports the error). */
function exactDecimalLiteral(text: string, to: SqlType): LiteralExpr | undefined {
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

/** The refusal of an integer literal beyond INT64, named as the reference names hex ones. */
function invalidIntLiteral(text: string): string {
  return /^0x/i.test(text) ? 'Invalid hex integer literal' : 'Invalid integer literal';
}

function resolveInner(an: Analyzer, n: A.Expr, ctx: ExprCtx): Expr {
  switch (n.kind) {
    case 'IntLiteral': {
      const v = parseIntLiteral(n.text);
      if (v === undefined) throw sqlError(`${invalidIntLiteral(n.text)}: ${n.text}`, n.loc);
      return literal(T.INT64, v);
    }
    case 'FloatLiteral': {
      const e = literal(T.FLOAT64, Number(n.text));
      tag(e)[FLOATTEXT] = n.text;
      return e;
    }
    case 'StringLiteral':
      return literal(T.STRING, n.value);
    case 'BytesLiteral':
      return literal(T.BYTES, n.value);
    case 'BoolLiteral':
      return literal(T.BOOL, n.value);
    case 'NullLiteral':
      return literal(T.INT64, null);
    case 'TypedLiteral': {
      const { type, value } = typedLiteral(n.typeName, n.value, n.loc);
      // An explicitly typed literal (NUMERIC '1.5', DATE '...') keeps its type in
      // supertypes like a column does; only untyped literals coerce freely (ZetaSQL).
      return literal(type, value, Origin.Column);
    }
    case 'RangeLiteral': {
      const t = typeFromNode({ kind: 'RangeType', loc: n.loc, element: n.elementType });
      return literal(t, rangeLiteral(t, n.value, n.loc));
    }
    case 'IntervalExpr':
      return resolveInterval(an, n, ctx);
    case 'PathExpr':
      return resolvePath(an, n, ctx);
    case 'FieldAccess':
      return fieldAccess(resolveExpr(an, n.expr, ctx), n.field, n.loc, ctx.flatten);
    case 'Subscript':
      return resolveSubscript(an, n, ctx);
    case 'NamedParam': {
      const p = an.env.params.named.get(n.name.toLowerCase());
      if (!p) throw sqlError(`Query parameter '${n.name}' not found`, n.loc);
      return literal(p.type, p.value, Origin.Param);
    }
    case 'PositionalParam': {
      const p = an.env.params.positional[n.index];
      if (!p) throw sqlError(`Query parameter number ${n.index + 1} is not defined`, n.loc);
      return literal(p.type, p.value, Origin.Param);
    }
    case 'SystemVariable':
      return systemVariable(an, n);
    case 'UnaryExpr': {
      if (n.op === '-' && (n.operand.kind === 'IntLiteral' || n.operand.kind === 'FloatLiteral')) {
        if (n.operand.kind === 'FloatLiteral') {
          const e = literal(T.FLOAT64, -Number(n.operand.text));
          tag(e)[FLOATTEXT] = `-${n.operand.text}`;
          return e;
        }
        const v = parseIntLiteral(n.operand.text, true);
        if (v === undefined) throw sqlError(`${invalidIntLiteral(n.operand.text)}: -${n.operand.text}`, n.loc);
        return literal(T.INT64, v);
      }
      const x = resolveExpr(an, n.operand, ctx);
      // NOT, unary minus, unary plus and ~ refuse an untyped NULL literal operand, as the binary operators do.
      if (originOf(x) === Origin.Null && x.kind === 'literal' && x.type.kind === 'INT64') {
        throw sqlError(`Operands of ${n.op} cannot be literal NULL`, n.operand.loc);
      }
      if (n.op === 'NOT') return logical('not', [x], n.loc, 'NOT');
      if (n.op === '+') return x;
      return callScalar(n.op === '-' ? '$unary_minus' : '$bitwise_not', [x], n.loc);
    }
    case 'BinaryExpr': {
      if (n.op === 'AND' || n.op === 'OR') {
        return logical(n.op === 'AND' ? 'and' : 'or', [resolveExpr(an, n.left, ctx), resolveExpr(an, n.right, ctx)], n.loc, n.op);
      }
      const l = resolveExpr(an, n.left, ctx);
      const r = resolveExpr(an, n.right, ctx);
      // The service rejects an untyped NULL literal as an arithmetic, comparison, bitwise or || operand;
      // the shifts take it (their amount is always INT64, so NULL << 1 and 1 >> NULL are NULL).
      if (n.op !== '<<' && n.op !== '>>') {
        for (const node of [n.left, n.right]) {
          if (node.kind === 'NullLiteral') throw sqlError(`Operands of ${n.op} cannot be literal NULL`, node.loc);
        }
      }
      return callScalar(BINARY[n.op]!, [l, r], n.loc);
    }
    case 'LikeExpr':
      return resolveLike(an, n, ctx);
    case 'BetweenExpr': {
      const c = callScalar('$between', [resolveExpr(an, n.expr, ctx), resolveExpr(an, n.low, ctx), resolveExpr(an, n.high, ctx)], n.loc);
      return n.not ? not(c) : c;
    }
    case 'InExpr':
      return resolveIn(an, n, ctx);
    case 'IsExpr': {
      const x = resolveExpr(an, n.expr, ctx);
      const fn = n.what === 'NULL' ? '$is_null' : n.what === 'TRUE' ? '$is_true' : n.what === 'FALSE' ? '$is_false' : '$is_null';
      if (n.what === 'UNKNOWN' && x.type.kind !== 'BOOL' && originOf(x) !== Origin.Null) {
        throw sqlError(`No matching signature for operator IS UNKNOWN for argument types: ${typeToSql(x.type)}`, n.loc);
      }
      const c = callScalar(fn, [x], n.loc);
      return n.not ? not(c) : c;
    }
    case 'IsDistinctFromExpr':
      return callScalar(n.not ? '$is_not_distinct_from' : '$is_distinct_from', [resolveExpr(an, n.left, ctx), resolveExpr(an, n.right, ctx)], n.loc);
    case 'CaseExpr':
      return resolveCase(an, n, ctx);
    case 'CastExpr': {
      const to = typeFromNode(n.type);
      // A floating-point literal cast to NUMERIC/BIGNUMERIC converts its exact text, not the nearest double.
      const floatText = n.expr.kind === 'FloatLiteral' ? n.expr.text : n.expr.kind === 'UnaryExpr' && n.expr.op === '-' && n.expr.operand.kind === 'FloatLiteral' ? `-${n.expr.operand.text}` : undefined;
      const exact = floatText !== undefined && !n.format ? exactDecimalLiteral(floatText, to) : undefined;
      const x = exact ?? resolveExpr(an, n.expr, ctx);
      if (originOf(x) !== Origin.Null && !canCast(x.type, to) && !typeEquals(x.type, to)) {
        const arrays = x.type.kind === 'ARRAY' && to.kind === 'ARRAY' ? 'Casting between arrays with incompatible element types is not supported: ' : '';
        throw sqlError(`${arrays}Invalid cast from ${typeToSql(x.type)} to ${typeToSql(to)}`, n.expr.loc);
      }
      // CAST(NULL AS T) is a typed NULL: it keeps T in supertypes, as a typed literal does.
      // CAST([] AS ARRAY<T>) stays an empty array (the untyped [] shares NULL's free coercion).
      if (originOf(x) === Origin.Null) return literal(to, x.kind === 'literal' && Array.isArray(x.value) ? [] : null, Origin.Column);
      const c: Expr = {
        kind: 'cast',
        type: to,
        arg: x,
        safe: n.safe,
        ...(n.format ? { format: resolveExpr(an, n.format, ctx) } : {}),
        ...(n.timeZone ? { timeZone: resolveExpr(an, n.timeZone, ctx) } : {}),
      };
      return c;
    }
    case 'ExtractExpr': {
      const part = n.weekday ? `${n.part}(${n.weekday})` : n.part;
      const args = [literal(T.STRING, part), resolveExpr(an, n.expr, ctx)];
      // A STRING literal is not coerced to a date/time here, as the service's analyzer refuses it.
      if (args[1]!.type.kind === 'STRING' && originOf(args[1]!) === Origin.Literal) throw sqlError('EXTRACT does not support literal STRING arguments', n.expr.loc);
      if (n.timeZone) args.push(resolveExpr(an, n.timeZone, ctx));
      return callScalar('$extract', args, n.loc);
    }
    case 'FunctionCall':
      return resolveCall(an, n, ctx);
    case 'ArrayExpr':
      return resolveArray(an, n, ctx);
    case 'ArraySubquery':
      return resolveSubquery(an, n.query, ctx, 'array', n.loc);
    case 'ScalarSubquery':
      return resolveSubquery(an, n.query, ctx, 'scalar', n.loc);
    case 'ExistsExpr':
      return resolveSubquery(an, n.query, ctx, 'exists', n.loc);
    case 'StructExpr':
      return resolveStruct(an, n, ctx);
    case 'CollateExpr':
      return callScalar('COLLATE', [resolveExpr(an, n.expr, ctx), literal(T.STRING, n.collation)], n.loc);
    case 'LambdaExpr':
      throw sqlError('Lambda expressions are only allowed as function arguments', n.loc);
    case 'NamedArgument':
      throw sqlError(`Named argument ${n.name} is not allowed here`, n.loc);
    case 'StarArg':
      throw sqlError('Argument * is only allowed in COUNT(*)', n.loc);
    case 'DefaultExpr':
      throw sqlError('DEFAULT is not allowed here', n.loc);
    case 'ReplaceFieldsExpr': {
      let base = resolveExpr(an, n.expr, ctx);
      for (const f of n.fields) base = replaceStructField(base, f.path, resolveExpr(an, f.value, ctx), f.value.loc);
      return base;
    }
    case 'WithExpr': {
      // WITH(a AS e1, b AS e2, body): names bind left to right, like UDF parameters; each is assigned once.
      const m = new Map(ctx.udfArgs ?? []);
      const vars = new Set(ctx.withVars ?? []);
      const own = new Set<string>();
      for (const v of n.vars) {
        const name = v.name.toLowerCase();
        if (own.has(name)) throw sqlError(`Duplicate alias ${v.name} in WITH expression`, v.expr.loc);
        m.set(name, resolveExpr(an, v.expr, { ...ctx, udfArgs: m, withVars: vars }));
        own.add(name);
        // Inside an aggregate's arguments a WITH of its own is usable there.
        if (ctx.inAggregate) vars.delete(name);
        else vars.add(name);
      }
      return resolveExpr(an, n.body, { ...ctx, udfArgs: m, withVars: vars });
    }
    case 'GraphIsLabeled':
    case 'GraphIsEndpoint':
    case 'GraphSubquery':
      // graph-operators.md, graph-subqueries.md: graph predicates and subqueries belong to graph queries.
      throw sqlError(`${n.kind === 'GraphIsLabeled' ? 'IS LABELED' : n.kind === 'GraphSubquery' ? `A graph subquery (${n.mode} { ... })` : 'IS SOURCE / IS DESTINATION'} is only allowed in a graph query`, n.loc);
    default: {
      const x: { kind: string; loc: A.Loc } = n;
      throw sqlError(`Unsupported expression ${x.kind}`, x.loc);
    }
  }
}

/** `base` with the field at `path` replaced by `value` (REPLACE_FIELDS, nested UPDATE of struct elements). */
function replaceStructField(base: Expr, path: readonly string[], value: Expr, loc: A.Loc): Expr {
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

function systemVariable(an: Analyzer, n: A.SystemVariable): Expr {
  const name = n.parts.join('.').toLowerCase();
  if (an.env.materializedViewQuery) throw sqlError(`Materialized views do not support system variables: @@${name}`, n.loc);
  switch (name) {
    case 'project_id':
      return literal(T.STRING, an.env.projectId, Origin.Param);
    case 'dataset_id':
      return literal(T.STRING, an.env.defaultDataset?.datasetId ?? null, Origin.Param);
    case 'dataset_project_id':
      return literal(T.STRING, an.env.defaultDataset?.projectId ?? (an.env.variables.get('@@dataset_project_id')?.value as string | undefined) ?? null, Origin.Param);
    case 'time_zone':
      return literal(T.STRING, an.env.timeZone ?? 'UTC', Origin.Param);
    case 'location':
      return literal(T.STRING, 'US', Origin.Param);
    // Read-and-write variables that are NULL until SET, and the session's id (NULL outside a session).
    case 'query_label':
    case 'reservation':
    case 'session_id': {
      const v = an.env.variables.get('@@' + name);
      return literal(T.STRING, v ? (v.value as string | null) : null, Origin.Param);
    }
    case 'current_job_id':
      // Differs per job: like the clock, it keeps the plan out of the plan cache.
      an.env.onClock?.();
      return literal(T.STRING, an.env.jobId ?? null, Origin.Param);
    default: {
      const v = an.env.variables.get('@@' + name);
      if (v) return literal(v.type, v.value, Origin.Param);
      throw sqlError(`Unrecognized system variable: @@${n.parts.join('.')}`, n.loc);
    }
  }
}

// ---------------------------------------------------------------- names

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

function resolvePath(an: Analyzer, n: A.PathExpr, ctx: ExprCtx): Expr {
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

function resolveSubscript(an: Analyzer, n: A.Subscript, ctx: ExprCtx): Expr {
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

const INTERVAL_PARTS = new Set(['YEAR', 'QUARTER', 'MONTH', 'WEEK', 'DAY', 'HOUR', 'MINUTE', 'SECOND', 'MILLISECOND', 'MICROSECOND']);

function resolveInterval(an: Analyzer, n: A.IntervalExpr, ctx: ExprCtx): Expr {
  const v = resolveExpr(an, n.value, ctx);
  if (!n.toPart && v.kind === 'literal' && v.type.kind === 'INT64' && v.value !== null) {
    // Folded here with the range checks of the runtime constructor.
    if (INTERVAL_PARTS.has(n.part)) return literal(T.INTERVAL, intervalFromPart(v.value as bigint, n.part));
  }
  const args = [v, literal(T.STRING, n.part)];
  if (n.toPart) args.push(literal(T.STRING, n.toPart));
  return callScalar('$make_interval_literal', args, n.loc);
}

// ---------------------------------------------------------------- predicates

function resolveLike(an: Analyzer, n: A.LikeExpr, ctx: ExprCtx): Expr {
  const x = resolveExpr(an, n.expr, ctx);
  let out: Expr;
  if (!n.quantifier) {
    // As with the binary operators: an untyped NULL literal operand of [NOT] LIKE is refused (quantified LIKE takes it).
    for (const node of [n.expr, n.pattern!]) {
      if (node.kind === 'NullLiteral') throw sqlError(`Operands of ${n.not ? 'NOT LIKE' : 'LIKE'} cannot be literal NULL`, node.loc);
    }
    out = callScalar('$like', [x, resolveExpr(an, n.pattern!, ctx)], n.loc);
  } else {
    if (n.patterns) {
      // `x NOT LIKE ANY (a, b)` is "x NOT LIKE a OR x NOT LIKE b", not NOT(x LIKE ANY ...).
      const fn = n.not ? (n.quantifier === 'ALL' ? '$not_like_all' : '$not_like_any') : n.quantifier === 'ALL' ? '$like_all' : '$like_any';
      return callScalar(fn, [x, ...n.patterns.map((p) => resolveExpr(an, p, ctx))], n.loc);
    } else if (n.unnest) {
      // As with lists, NOT LIKE ANY/ALL UNNEST applies NOT LIKE per pattern.
      const arrFn = (n.not ? '$not_' : '$') + (n.quantifier === 'ALL' ? 'like_all_array' : 'like_any_array');
      return callScalar(arrFn, [x, resolveExpr(an, n.unnest, ctx)], n.loc);
    } else {
      // The subquery's rows are the patterns; only an empty subquery answers differently from UNNEST (operators reference).
      const arr = resolveSubquery(an, n.query!, ctx, 'array', n.loc);
      const fn = (n.not ? '$not_' : '$') + (n.quantifier === 'ALL' ? 'like_all_subquery' : 'like_any_subquery');
      return callScalar(fn, [x, arr], n.loc);
    }
  }
  return n.not ? not(out) : out;
}

function resolveIn(an: Analyzer, n: A.InExpr, ctx: ExprCtx): Expr {
  const x = resolveExpr(an, n.expr, ctx);
  let out: Expr;
  if (n.list) {
    out = callScalar('$in', [x, ...n.list.map((e) => resolveExpr(an, e, ctx))], n.loc);
  } else if (n.unnest) {
    out = callScalar('$in_array', [x, resolveExpr(an, n.unnest, { ...ctx, flatten: true })], n.loc);
  } else {
    out = resolveSubquery(an, n.query!, ctx, 'in', n.loc, x);
  }
  return n.not ? not(out) : out;
}

/**
 * A searched CASE whose WHENs are not all BOOL or whose results have no common type is
 * refused as the service's analyzer words it: what is wrong, then every argument's type.
 */
function checkSearchedCase(whens: readonly Expr[], results: readonly Expr[], n: A.CaseExpr): void {
  const shown = (e: Expr) => (originOf(e) === Origin.Null ? 'NULL' : typeToSql(e.type));
  const sorted = (xs: string[]) => [...new Set(xs)].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
  const nonBool = sorted(whens.filter((w) => w.type.kind !== 'BOOL' && originOf(w) !== Origin.Null && !isErrorCall(w)).map(shown));
  // ERROR(...) never returns, so it takes the other results' type (as in unify).
  const returning = results.filter((e) => !isErrorCall(e));
  const noSupertype = returning.length > 0 && !supertype(returning.map(typedOf));
  if (!nonBool.length && !noSupertype) return;
  let msg = 'No matching signature for operator CASE';
  if (nonBool.length) msg += `; all WHEN argument types must be BOOL but found: ${nonBool.join(', ')}`;
  const typed = sorted(results.filter((e) => originOf(e) !== Origin.Null).map(shown));
  if (typed.length > 1) msg += `; all THEN/ELSE arguments must be coercible to a common type but found: ${typed.join(', ')}`;
  const pairs = whens.map((w, i) => ` (${shown(w)} ${shown(results[i]!)})`).join('');
  msg += `; actual argument types (WHEN THEN) ELSE:${pairs} ${n.else ? shown(results[results.length - 1]!) : 'NULL'}`;
  throw sqlError(msg, n.loc);
}

function resolveCase(an: Analyzer, n: A.CaseExpr, ctx: ExprCtx): Expr {
  const operand = n.operand ? resolveExpr(an, n.operand, ctx) : undefined;
  const whens: Expr[] = [];
  if (operand) {
    // Simple CASE: compare with a common type (WHEN values and operand unify).
    const ws = n.whens.map((w) => resolveExpr(an, w.when, ctx));
    const u = unify([operand, ...ws], n.loc, 'operator CASE');
    if (!isEqualityComparable(u.type)) throw sqlError(`CASE (with value comparison) is not defined for arguments of type ${typeToSql(u.type)}`, n.loc);
    // The operand and every WHEN value compare under their one common collation.
    const collation = collationOf(u.type) ?? '';
    for (let i = 0; i < ws.length; i++) whens.push(callScalar('$equal', [u.exprs[0]!, u.exprs[i + 1]!], n.whens[i]!.when.loc, { collation }));
  } else {
    for (const w of n.whens) whens.push(resolveExpr(an, w.when, ctx));
  }
  const thens = n.whens.map((w) => resolveExpr(an, w.then, ctx));
  const all = n.else ? [...thens, resolveExpr(an, n.else, ctx)] : thens;
  if (!operand) {
    checkSearchedCase(whens, all, n);
    for (let i = 0; i < whens.length; i++) whens[i] = requireBool(whens[i]!, n.whens[i]!.when.loc, 'WHEN clause');
  }
  const u = unify(all, n.loc, 'operator CASE');
  return {
    kind: 'conditional',
    type: u.type,
    op: 'case',
    whens,
    thens: u.exprs.slice(0, thens.length),
    ...(n.else ? { else: u.exprs[thens.length]! } : {}),
  };
}

function resolveArray(an: Analyzer, n: A.ArrayExpr, ctx: ExprCtx): Expr {
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

function resolveStruct(an: Analyzer, n: A.StructExpr, ctx: ExprCtx): Expr {
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
  const type = structOf(fields);
  if (exprs.every((e) => e.kind === 'literal')) {
    return literal(type, exprs.map((e) => (e as LiteralExpr).value), exprs.some((e) => originOf(e) === Origin.Param) ? Origin.Param : Origin.Literal);
  }
  return { kind: 'make_struct', type, fields: exprs };
}

// ---------------------------------------------------------------- function calls

const MEASURES_ONLY = new Set(['MATCH_NUMBER', 'MATCH_ROW_NUMBER', 'CLASSIFIER', 'FIRST', 'LAST']);
const CONDITIONALS = new Set(['IF', 'IFNULL', 'NULLIF', 'COALESCE']);
export const NUMBERING = new Set(['ROW_NUMBER', 'RANK', 'DENSE_RANK', 'PERCENT_RANK', 'CUME_DIST', 'NTILE']);
export const NAVIGATION = new Set(['LAG', 'LEAD', 'FIRST_VALUE', 'LAST_VALUE', 'NTH_VALUE', 'PERCENTILE_CONT', 'PERCENTILE_DISC']);

function resolveArgs(an: Analyzer, args: readonly A.Expr[], ctx: ExprCtx, fnName?: string): { exprs: Expr[]; names: (string | undefined)[] } {
  const exprs: Expr[] = [];
  const names: (string | undefined)[] = [];
  for (const a of args) {
    if (a.kind === 'NamedArgument') {
      exprs.push(resolveExpr(an, a.value, ctx));
      names.push(a.name);
    } else if (a.kind === 'LambdaExpr') {
      // APPLY(value, x -> ...) binds x to the value itself; the ARRAY_* lambdas to an element.
      exprs.push(resolveLambda(an, a, ctx, exprs[0], fnName === 'APPLY'));
      names.push(undefined);
    } else {
      exprs.push(resolveExpr(an, a, ctx));
      names.push(undefined);
    }
  }
  return { exprs, names };
}

function resolveLambda(an: Analyzer, n: A.LambdaExpr, ctx: ExprCtx, arrayArg: Expr | undefined, wholeValue = false): Expr {
  const elType = wholeValue && arrayArg ? arrayArg.type : arrayArg?.type.kind === 'ARRAY' ? arrayArg.type.element : T.INT64;
  const params = n.params.map((p, i) => an.newColumn(p, i === 0 ? elType : T.INT64));
  const m = new Map(ctx.lambdaParams ?? []);
  for (const p of params) m.set(p.name.toLowerCase(), p);
  const body = resolveExpr(an, n.body, { ...ctx, lambdaParams: m, aggs: undefined, wins: undefined });
  return { kind: 'lambda', type: body.type, params, body };
}

function resolveCall(an: Analyzer, n: A.FunctionCall, ctx: ExprCtx): Expr {
  const name = n.name.join('.').toUpperCase();
  if (n.args[0]?.kind === 'StarArg' && n.distinct) {
    throw sqlError(name === 'COUNT' ? 'COUNT(*) cannot be used with DISTINCT' : 'Argument * can only be used in COUNT(*)', n.loc);
  }
  if (n.args[0]?.kind === 'StarArg' && n.args.length > 1) {
    // `*` with more arguments is only the differentially private COUNT(*, contribution_bounds_per_group => ...),
    // an aggregate (resolveAggregate refuses the bounds by name); anything else is the reference's error.
    const dpCount = name === 'COUNT' && !n.over && n.args.slice(1).every((a) => a.kind === 'NamedArgument' && a.name.toLowerCase() === 'contribution_bounds_per_group');
    if (!dpCount) throw sqlError('Argument * can only be used in COUNT(*)', n.loc);
  }
  if (n.over) return resolveWindowCall(an, n, name, ctx);
  if (n.name.length === 1 && CONDITIONALS.has(name)) return resolveConditional(an, n, name, ctx);
  if (name === 'GROUPING') return resolveGrouping(an, n, ctx);
  if (NUMBERING.has(name) || (NAVIGATION.has(name) && name !== 'PERCENTILE_CONT' && name !== 'PERCENTILE_DISC')) {
    throw sqlError(`Analytic function ${name} cannot be called without an OVER clause`, n.loc);
  }
  // Temporary and persistent SQL UDFs are inlined.
  const udf = findUdf(an, n.name);
  if (udf) return inlineUdf(an, udf, n, ctx);
  const def = lookupFunction(name === 'COUNT' && n.args[0]?.kind === 'StarArg' ? '$count_star' : name);
  if (!def) {
    refuseUnservedFunction(n.name, n.args, n.loc);
    // MATCH_RECOGNIZE rewrites these away inside its MEASURES clause (query-syntax.md, MEASURES clause functions).
    if (n.name.length === 1 && MEASURES_ONLY.has(name)) throw sqlError(`${name === 'FIRST' || name === 'LAST' ? 'aggregate function' : 'function'} ${name} can only be used inside a MATCH_RECOGNIZE's MEASURES clause`, n.loc);
    throw sqlError(`Function not found: ${n.name.join('.')}${functionHint(n.name.join('.'))}`, n.loc);
  }
  if (def.kind === 'aggregate') return resolveAggregate(an, n, def, ctx);
  if (n.distinct) throw sqlError(`Non-aggregate function ${name} cannot be called with DISTINCT`, n.loc);
  if (n.safe && def.safeCallable === false) throw sqlError(`Function ${name} does not support SAFE error mode`, n.loc);
  const intervalAt = INTERVAL_SYNTAX_ARGUMENT.get(def.name);
  const iv = intervalAt === undefined ? undefined : n.args[intervalAt];
  if (iv && iv.kind !== 'IntervalExpr') throw sqlError('Expected INTERVAL expression', iv.loc);
  if (iv?.kind === 'IntervalExpr' && iv.toPart) throw sqlError('INTERVAL argument only support single date part field.', iv.loc);
  // *_ADD(x, INTERVAL n PART) is resolved as the reference resolves it, the count and the part as two arguments
  // (the x, INT64, PART signatures), so its checks and errors name the part written.
  const callArgs = iv?.kind === 'IntervalExpr' && intervalAt === 1 && iv.value.kind !== 'StringLiteral'
    ? [n.args[0]!, iv.value, { kind: 'StringLiteral', loc: iv.loc, value: iv.part, raw: false } as A.StringLiteral]
    : n.args;
  const parts = def.datePartArgs;
  if (parts?.length) {
    // Date-part keywords (DAY, WEEK(MONDAY)) are passed as constant upper-case strings.
    const args = callArgs.map((a, i) => {
      if (!parts.includes(i)) return a;
      const p = datePartText(a);
      return p === undefined ? a : ({ kind: 'StringLiteral', loc: a.loc, value: p, raw: false } as A.StringLiteral);
    });
    const { exprs, names } = resolveArgs(an, args, ctx);
    return applyScalar(def, exprs, n.loc, { safe: n.safe, names });
  }
  // FLATTEN's argument is an array path (array elements field access).
  const { exprs, names } = resolveArgs(an, n.args, def.name === 'FLATTEN' ? { ...ctx, flatten: true } : ctx, def.name);
  if (def.name === 'TO_JSON' && an.graphs && exprs[0] && isGraphElementType(exprs[0].type)) exprs[0] = graphElementJsonShape(exprs[0]);
  return applyScalar(def, exprs, n.loc, { safe: n.safe, names });
}

/**
 * TO_JSON of a graph element that is not a pattern variable (NODES(p)[OFFSET(0)], a LET alias, an element returned
 * by GRAPH_TABLE): the shape graph-sql-queries.md shows (identifier, kind, labels, properties, an edge's endpoints),
 * never the compiled STRUCT's hidden fields. Its properties are every property of the graph's nodes (edges), the
 * fields the compiled STRUCT carries: what TO_JSON of an unlabeled pattern variable gives.
 */
function graphElementJsonShape(x: Expr): Expr {
  const t = x.type as StructType;
  const at = (name: string): Expr => {
    const i = t.fields.findIndex((f) => f.name === name);
    return { kind: 'field', type: t.fields[i]!.type, arg: x, fieldIndex: i };
  };
  const edge = t.fields.some((f) => f.name === '__src');
  const props = t.fields.filter((f) => !f.name.startsWith('__'));
  const propStruct: Expr = { kind: 'make_struct', type: structOf(props), fields: props.map((f) => at(f.name)) };
  const parts: [string, Expr][] = [['identifier', at('__id')], ['kind', literal(T.STRING, edge ? 'edge' : 'node')], ['labels', at('__labels')], ['properties', propStruct]];
  if (edge) parts.push(['source_node_identifier', at('__src')], ['destination_node_identifier', at('__dst')]);
  const shape: Expr = { kind: 'make_struct', type: structOf(parts.map(([name, e]) => ({ name, type: e.type }))), fields: parts.map(([, e]) => e) };
  return { kind: 'conditional', type: shape.type, op: 'case', whens: [callScalar('$is_null', [x], undefined)], thens: [literal(shape.type, null)], else: shape };
}

// Functions whose argument at this position must be written `INTERVAL n PART` with one part, not any INTERVAL
// value (the reference resolves it as a special INTERVAL argument: resolver_expr.cc ResolveIntervalArgument).
const INTERVAL_SYNTAX_ARGUMENT = new Map<string, number>([
  ...['DATE', 'DATETIME', 'TIME', 'TIMESTAMP'].flatMap((t) => [[`${t}_ADD`, 1], [`${t}_SUB`, 1]] as [string, number][]),
  ['GENERATE_DATE_ARRAY', 2],
  ['GENERATE_TIMESTAMP_ARRAY', 2],
]);

function datePartText(a: A.Expr): string | undefined {
  if (a.kind === 'PathExpr' && a.parts.length === 1) return a.parts[0]!.toUpperCase();
  if (a.kind === 'FunctionCall' && a.name.length === 1 && a.args.length === 1 && a.args[0]!.kind === 'PathExpr' && a.args[0].parts.length === 1) {
    return `${a.name[0]!.toUpperCase()}(${a.args[0].parts[0]!.toUpperCase()})`;
  }
  return undefined;
}

function resolveConditional(an: Analyzer, n: A.FunctionCall, name: string, ctx: ExprCtx): Expr {
  const args = n.args.map((a) => resolveExpr(an, a, ctx));
  const arity = (k: number) => {
    if (args.length !== k) throw sqlError(`Number of arguments does not match for function ${name}. Supported signature: ${name}(${name === 'IF' ? 'BOOL, ANY, ANY' : 'ANY, ANY'})`, n.loc);
  };
  switch (name) {
    case 'IF': {
      arity(3);
      if (args[0]!.type.kind !== 'BOOL' && originOf(args[0]!) !== Origin.Null && !isErrorCall(args[0]!)) {
        throw sqlError(`No matching signature for function IF for argument types: ${args.map((a) => typeToSql(a.type)).join(', ')}. Supported signature: IF(BOOL, ANY, ANY)`, n.loc);
      }
      const c = requireBool(args[0]!, n.args[0]!.loc, 'IF condition');
      const u = unify([args[1]!, args[2]!], n.loc, 'function IF', { args, signature: 'IF(BOOL, ANY, ANY)' });
      return { kind: 'conditional', type: u.type, op: 'case', whens: [c], thens: [u.exprs[0]!], else: u.exprs[1]! };
    }
    case 'IFNULL': {
      arity(2);
      const u = unify(args, n.loc, 'function IFNULL', { args, signature: 'IFNULL(ANY, ANY)' });
      return { kind: 'conditional', type: u.type, op: 'coalesce', whens: [], thens: u.exprs };
    }
    case 'NULLIF': {
      arity(2);
      const u = unify(args, n.loc, 'function NULLIF', { args, signature: 'NULLIF(ANY, ANY)' });
      if (!isEqualityComparable(u.type)) throw sqlError(`NULLIF is not defined for arguments of type ${typeToSql(u.type)}`, n.loc);
      const eq = callScalar('$equal', [u.exprs[0]!, u.exprs[1]!], n.loc, { collation: collationOf(u.type) ?? '' });
      return { kind: 'conditional', type: u.type, op: 'case', whens: [eq], thens: [literal(u.type, null)], else: u.exprs[0]! };
    }
    default: {
      if (args.length === 0) throw sqlError('No matching signature for function COALESCE with no arguments. Supported signature: COALESCE([ANY, ...])', n.loc);
      const u = unify(args, n.loc, 'function COALESCE', { args, signature: 'COALESCE([ANY, ...])' });
      return { kind: 'conditional', type: u.type, op: 'coalesce', whens: [], thens: u.exprs };
    }
  }
}

function resolveGrouping(an: Analyzer, n: A.FunctionCall, ctx: ExprCtx): Expr {
  if (!ctx.aggs || ctx.inAggregate) throw sqlError(`GROUPING function not allowed in ${ctx.clause}`, n.loc);
  if (n.args.length !== 1) throw sqlError('GROUPING takes exactly one argument', n.loc);
  const arg = resolveExpr(an, n.args[0]!, { scope: ctx.aggs.scope, clause: 'GROUPING', inAggregate: true, udfArgs: ctx.udfArgs, selectAliases: ctx.aggs.selectAliases });
  const column = an.newColumn('$grouping', T.INT64);
  ctx.aggs.grouping.push({ column, arg, loc: n.args[0]!.loc });
  return colRef(column);
}

/** A plain literal other than an integer (an ordinal): no GROUP BY or ORDER BY key, where typed literals are. */
export function isPlainLiteral(e: A.Expr): boolean {
  return e.kind === 'FloatLiteral' || e.kind === 'StringLiteral' || e.kind === 'BytesLiteral' || e.kind === 'BoolLiteral' || e.kind === 'NullLiteral';
}

/** A query's or an aggregate's ORDER BY item that is a plain literal is refused (a window's is not: the reference). */
export function refuseLiteralOrderKey(o: A.OrderByItem): void {
  if (isPlainLiteral(o.expr)) throw sqlError('Cannot ORDER BY literal values', o.expr.loc);
}

export function orderKeys(an: Analyzer, items: readonly A.OrderByItem[] | undefined, ctx: ExprCtx): SortKey[] {
  return (items ?? []).map((o) => {
    const expr = resolveExpr(an, o.expr, ctx);
    const descending = o.direction === 'DESC';
    const collation = orderCollation(an, o, expr.type);
    return { expr, descending, nullsFirst: o.nulls ? o.nulls === 'FIRST' : !descending, ...(collation ? { collation } : {}) };
  });
}

/** The validated collation name of an ORDER BY item (`COLLATE 'und:ci'` or `COLLATE @param`). */
export function orderCollation(an: Analyzer, o: A.OrderByItem, keyType?: SqlType): string | undefined {
  let name = o.collate;
  if (name === undefined && o.collateExpr) {
    const v = resolveExpr(an, o.collateExpr, { scope: new Scope(), clause: 'COLLATE' });
    if (v.kind !== 'literal' || (v.type.kind !== 'STRING' && originOf(v) !== Origin.Null)) throw sqlError('COLLATE must be a string literal or query parameter', o.collateExpr.loc);
    if (v.value === null) throw sqlError('COLLATE requires non-NULL collation name', o.collateExpr.loc);
    name = v.value as string;
  }
  // Without COLLATE the key sorts under the collation its type carries (column collation).
  if (name === undefined) return keyType?.kind === 'STRING' ? keyType.collation : undefined;
  if (keyType && keyType.kind !== 'STRING') throw sqlError(`COLLATE can only be applied to expressions of type STRING, but was applied to ${typeToSql(keyType)}`, o.loc);
  const err = collationNameError(name);
  if (err) throw sqlError(err, o.loc);
  return name;
}

function constInt(an: Analyzer, e: A.Expr, ctx: ExprCtx, what: string): number {
  const x = resolveExpr(an, e, { scope: new Scope(), clause: what, udfArgs: ctx.udfArgs });
  // Constant expressions (MOD(1, 2)) fold to a value here.
  const v = x.kind === 'literal' ? x.value : constantValue(x);
  if (x.type.kind !== 'INT64' || v === undefined) throw sqlError(`${what} expects an integer literal or parameter`, e.loc);
  if (v === null) throw sqlError(`${what} must not be null`, e.loc);
  // A constant expression is allowed (LIMIT_OFFSET_EXPRESSIONS, a pinned GoogleSQL case); a negative count is not.
  if ((v as bigint) < 0n) throw sqlError(`${what} expects a non-negative integer literal or parameter`, e.loc);
  return Number(v as bigint);
}

// The aggregate-argument modifiers the reference lets each function take (its FunctionOptions
// supports_order_by / supports_limit / supports_null_handling_modifier); every other aggregate refuses them.
const ORDERED_AGGREGATES = new Set(['ARRAY_AGG', 'STRING_AGG', 'ARRAY_CONCAT_AGG']);
const NULL_HANDLING_AGGREGATES = new Set(['ARRAY_AGG', 'APPROX_QUANTILES', 'PERCENTILE_CONT', 'PERCENTILE_DISC']);

function aggregateModifierError(n: A.FunctionCall, name: string, disp: string): QueryError | undefined {
  if (n.orderBy?.length && !ORDERED_AGGREGATES.has(name)) return sqlError(`Aggregate function ${disp} does not support ORDER BY in arguments`, n.orderBy[0]!.loc);
  if (n.limit && !ORDERED_AGGREGATES.has(name)) return sqlError(`Aggregate function ${disp} does not support LIMIT in arguments`, n.limit.loc);
  if (n.nullHandling !== undefined && !NULL_HANDLING_AGGREGATES.has(name)) return sqlError(`IGNORE NULLS and RESPECT NULLS are not allowed for aggregate function ${name.toLowerCase()}`, n.loc);
  return undefined;
}

/** The HAVING MAX / MIN key of an aggregate: a type that orders. */
function havingExpr(an: Analyzer, e: A.Expr, ctx: ExprCtx): Expr {
  const x = resolveExpr(an, e, ctx);
  if (!isOrderable(x.type)) throw sqlError(`HAVING modifier does not support expressions of type ${typeToSql(x.type)}`, e.loc);
  return x;
}

/** The service refuses the SAFE. prefix on aggregate, window and user-defined functions (functions-reference.md). */
export function safePrefixRefused(name: string, loc: A.Loc): QueryError {
  return sqlError(`SAFE is not supported for function ${name}`, loc);
}

export function resolveAggregate(an: Analyzer, n: A.FunctionCall, def: AggregateFunctionDef, ctx: ExprCtx): Expr {
  const disp = n.name.join('.').toUpperCase();
  if (n.safe) throw safePrefixRefused(disp, n.loc);
  if (ctx.inAggregate) throw sqlError('Aggregations of aggregations are not allowed', n.loc);
  if (!ctx.aggs) {
    // The reference resolves the arguments and the signature before it refuses the aggregate here, so an
    // unknown name, an analytic function or a bad argument type inside is what it reports.
    if (n.args[0]?.kind !== 'StarArg') {
      const { exprs, names } = resolveArgs(an, n.args, ctx);
      const ignoreNulls = n.nullHandling === undefined ? undefined : n.nullHandling === 'IGNORE';
      const r = resolveAggregateFn(def, exprs.map((e, i) => argInfo(e, names[i])), { distinct: n.distinct, ignoreNulls, hasOrderBy: false });
      if (!r.ok) throw sqlError(r.message, n.loc);
    }
    throw sqlError(`Aggregate function ${disp}${n.args.length === 1 && n.args[0]!.kind === 'StarArg' ? '(*)' : ''} not allowed in ${ctx.clause}`, n.loc);
  }
  const modifierError = aggregateModifierError(n, def.name, disp);
  if (modifierError) throw modifierError;
  const actx: ExprCtx = {
    scope: ctx.aggs.scope, clause: ctx.clause, inAggregate: true, udfArgs: ctx.udfArgs, withVars: ctx.withVars, lambdaParams: ctx.lambdaParams,
    ...(ctx.wins ? { analyticRefusal: 'Analytic functions cannot be arguments to aggregate functions' } : {}),
  };
  const star = n.args[0]?.kind === 'StarArg';
  const bounds = n.args.find((a) => a.kind === 'NamedArgument' && a.name.toLowerCase() === 'contribution_bounds_per_group');
  if (bounds) {
    // The differentially private forms of AVG, COUNT, SUM and PERCENTILE_CONT clamp each privacy unit's
    // contribution; SELECT WITH DIFFERENTIAL_PRIVACY here runs its aggregates exactly, so the bounds are refused by name.
    throw sqlError(`${disp} with contribution_bounds_per_group is not supported by this emulator: it does not bound contributions or add the noise of differentially private aggregate functions (https://cloud.google.com/bigquery/docs/reference/standard-sql/aggregate-dp-functions)`, bounds.loc);
  }
  const { exprs, names } = star ? { exprs: [] as Expr[], names: [] as (string | undefined)[] } : resolveArgs(an, n.args, actx);
  for (const o of n.orderBy ?? []) {
    if (o.expr.kind === 'IntLiteral') throw sqlError('Aggregate functions do not allow ORDER BY by index in arguments', o.expr.loc);
    refuseLiteralOrderKey(o);
  }
  const orderBy = orderKeys(an, n.orderBy, actx);
  const limit = n.limit ? constInt(an, n.limit, ctx, 'LIMIT') : undefined;
  const opts = { distinct: n.distinct, ignoreNulls: n.nullHandling === undefined ? undefined : n.nullHandling === 'IGNORE', hasOrderBy: orderBy.length > 0, ...(limit !== undefined ? { limit } : {}) };
  const r = resolveAggregateFn(def, exprs.map((e, i) => argInfo(e, names[i])), opts);
  if (!r.ok) throw sqlError(r.message, n.loc);
  if (n.distinct && orderBy.some((k) => !exprs.some((e) => exprEquals(e, k.expr)))) {
    throw sqlError('An aggregate function that has both DISTINCT and ORDER BY arguments can only ORDER BY expressions that are arguments to the function', n.orderBy![0]!.loc);
  }
  let args = exprs.map((e, i) => (r.resolved.argTypes[i] ? coerce(e, r.resolved.argTypes[i]!) : e));
  // DISTINCT over collated strings: one value per class equal under the collation.
  if (n.distinct) {
    args = args.map((a) => {
      const c = a.type.kind === 'STRING' ? a.type.collation : undefined;
      if (isBinaryCollation(c)) return a;
      const canon = callScalar('$collation_canonical', [a, literal(T.STRING, c!)], n.loc);
      return { ...canon, type: a.type };
    });
  }
  // Collation: MIN/MAX compare under it; ARRAY_AGG, STRING_AGG, ANY_VALUE ... carry it on.
  const coll = collationAffects(def.name) ? mergeCollations(exprs.map((e) => collationOf(e.type))).collation : undefined;
  const fn = coll ? collateAggregate(def.name, r.resolved, coll) : r.resolved;
  const column = an.newColumn('$agg', coll && propagatesCollation(def.name) ? withCollation(fn.returnType, coll) : fn.returnType);
  const call: AggregateCall = {
    column,
    name: def.name,
    fn,
    args,
    distinct: n.distinct,
    ignoreNulls: opts.ignoreNulls,
    orderBy,
    ...(limit !== undefined ? { limit } : {}),
    ...(n.having ? { having: { max: n.having.kind === 'MAX', expr: havingExpr(an, n.having.expr, actx) } } : {}),
    ...(n.where ? { filter: requireBool(resolveExpr(an, n.where, actx), n.where.loc, 'Aggregate filter') } : {}),
  };
  ctx.aggs.calls.push(call);
  const ref = colRef(column);
  return ref;
}

// ---------------------------------------------------------------- structural equality

/** Structural equality of resolved expressions (GROUP BY matching). */
export function typeOf(n: A.TypeNode): SqlType {
  return typeFromNode(n);
}

export function exprEquals(a: Expr, b: Expr): boolean {
  if (a === b) return true;
  if (a.kind !== b.kind || !typeEquals(a.type, b.type)) return false;
  switch (a.kind) {
    case 'literal': {
      const bv = (b as LiteralExpr).value;
      return valueEquals(a.value, bv);
    }
    case 'column':
      return a.columnId === (b as ColumnRefExpr).columnId;
    case 'call': {
      const c = b as CallExpr;
      return a.name === c.name && a.safe === c.safe && listEquals(a.args, c.args);
    }
    case 'cast': {
      const c = b as typeof a;
      return a.safe === c.safe && exprEquals(a.arg, c.arg) && !a.format && !c.format;
    }
    case 'field': {
      const c = b as typeof a;
      return a.fieldIndex === c.fieldIndex && exprEquals(a.arg, c.arg);
    }
    case 'logical': {
      const c = b as typeof a;
      return a.op === c.op && listEquals(a.args, c.args);
    }
    case 'conditional': {
      const c = b as typeof a;
      return a.op === c.op && listEquals(a.whens, c.whens) && listEquals(a.thens, c.thens) && (a.else && c.else ? exprEquals(a.else, c.else) : a.else === c.else);
    }
    case 'make_struct':
      return listEquals(a.fields, (b as typeof a).fields);
    case 'make_array':
      return listEquals(a.elements, (b as typeof a).elements);
    default:
      return false;
  }
}

function listEquals(a: readonly Expr[], b: readonly Expr[]): boolean {
  return a.length === b.length && a.every((x, i) => exprEquals(x, b[i]!));
}

function valueEquals(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  if (typeof a === 'bigint' || typeof a === 'number' || typeof a === 'string' || typeof a === 'boolean') return a === b;
  if (a instanceof Decimal && b instanceof Decimal) return a.eq(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => valueEquals(x, b[i]!));
  return false;
}
