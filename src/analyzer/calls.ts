// Function calls: registry scalar calls (argument coercion, collation), the operator table, argument lists
// and lambdas, conditional functions (IF/IFNULL/NULLIF/COALESCE), GROUPING; aggregate calls go to
// aggregate-calls.ts, analytic calls to window-calls.ts, SQL UDFs to sql-udfs.ts.
import type * as A from '../../grammar/ast.js';
import type { ScalarFunctionDef } from '../functions/registry.js';
import { allFunctions, lookupFunction, resolveScalar } from '../functions/registry.js';
import { didYouMean } from './suggest.js';
import {
  collateScalar,
  collationAffects,
  collationByKeyArgs,
  isBinaryCollation,
  collationNameError,
  collationOf,
  rejectedCollation,
  collationSensitive,
  mergeCollations,
  mergeStructCollations,
  propagatesCollation,
  withCollation,
} from '../functions/collation.js';
import { T, isEqualityComparable, structOf, typeToSql, type SqlType, type StructType } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { constantValue } from './names.js';
import { refuseUnservedFunction } from './unserved-functions.js';
import type { CallExpr, Expr } from './resolved.js';
import { colRef } from './scope.js';
import { Origin } from './types.js';
import { findUdf, inlineUdf } from './sql-udfs.js';
import { isGraphElementType } from './graph-values.js';
import { resolveWindowCall } from './window-calls.js';
import { type ExprCtx, resolveExpr } from './expr.js';
import { originOf, setLoc, literal, coerce, isErrorCall, argInfo, unify, requireBool } from './coercion.js';
import { resolveAggregate } from './aggregate-calls.js';

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
  const rejected = rejectedCollation(def.name, args.map((a) => a.type));
  if (rejected) throw sqlError(rejected, loc);
  if (def.name === 'COLLATE') {
    const spec = args[1]?.kind === 'literal' && originOf(args[1]) !== Origin.Param ? (args[1].value as string | null) : null;
    if (spec === null) throw sqlError('The second argument of COLLATE() must be a string literal', loc);
    const err = collationNameError(spec);
    if (err) throw sqlError(err, loc);
    // collation-concepts.md, Limitations: 'und:ci' and empty collation only. ('binary', which the page says can't be
    // set explicitly, stays: the pinned GoogleSQL conformance cases use it.)
    if (!['', 'und:ci', 'binary'].includes(spec.toLowerCase())) throw sqlError(`Collation '${spec}' is not supported: COLLATE takes 'und:ci' or an empty collation`, loc);
    type = withCollation(type, spec);
  } else if (STRUCT_KEYED.has(def.name) && args.some((a) => a.type.kind === 'STRUCT')) {
    // collation-concepts.md, Data types: a STRUCT's collated STRING fields compare under their collation with =,
    // != and IN (NULLIF and CASE compare with =): each struct operand becomes its fields' collation keys.
    const m = mergeStructCollations(args.map((a) => a.type));
    if (m.conflict) {
      const [c, other] = m.conflict;
      throw sqlError(`Collation conflict: "${c}" vs. "${other}" in function ${collationDisplay(def.name)}`, loc);
    }
    if (m.spec) {
      const spec = literal(T.STRING, JSON.stringify(m.spec));
      cargs = cargs.map((a) => (a.type.kind === 'STRUCT' ? callScalar('$collation_key_struct', [a, spec], loc) : a));
    }
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

/** The comparisons a STRUCT with collated fields takes (collation-concepts.md, Data types). */
const STRUCT_KEYED = new Set(['$equal', '$not_equal', '$is_distinct_from', '$is_not_distinct_from', '$in']);

const COLLATION_DISPLAY: Record<string, string> = { $in: 'IN', $in_array: 'IN UNNEST', $like: 'LIKE', $between: 'BETWEEN', $is_distinct_from: 'IS DISTINCT FROM', $is_not_distinct_from: 'IS NOT DISTINCT FROM' };
function collationDisplay(name: string): string {
  if (COLLATION_DISPLAY[name]) return COLLATION_DISPLAY[name]!;
  for (const [sym, fn] of Object.entries(BINARY)) if (fn === name) return sym;
  return name;
}

export const BINARY: Record<string, string> = {
  '+': '$add', '-': '$subtract', '*': '$multiply', '/': '$divide', '||': '$concat_op',
  '<<': '$bitwise_left_shift', '>>': '$bitwise_right_shift', '&': '$bitwise_and', '^': '$bitwise_xor', '|': '$bitwise_or',
  '=': '$equal', '!=': '$not_equal', '<': '$less', '>': '$greater', '<=': '$less_or_equal', '>=': '$greater_or_equal',
};

const MEASURES_ONLY = new Set(['MATCH_NUMBER', 'MATCH_ROW_NUMBER', 'CLASSIFIER', 'FIRST', 'LAST']);
const CONDITIONALS = new Set(['IF', 'IFNULL', 'NULLIF', 'COALESCE']);
export const NUMBERING = new Set(['ROW_NUMBER', 'RANK', 'DENSE_RANK', 'PERCENT_RANK', 'CUME_DIST', 'NTILE']);
export const NAVIGATION = new Set(['LAG', 'LEAD', 'FIRST_VALUE', 'LAST_VALUE', 'NTH_VALUE', 'PERCENTILE_CONT', 'PERCENTILE_DISC']);

export function resolveArgs(an: Analyzer, args: readonly A.Expr[], ctx: ExprCtx, fnName?: string): { exprs: Expr[]; names: (string | undefined)[] } {
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

export function resolveCall(an: Analyzer, n: A.FunctionCall, ctx: ExprCtx): Expr {
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
  // navigation_functions.md: PERCENTILE_CONT / PERCENTILE_DISC have only the OVER form, like the other navigation functions.
  if (NUMBERING.has(name) || NAVIGATION.has(name)) {
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
      if (DATE_PART_FUNCTION.test(def.name)) checkDatePart(a, a !== n.args[i]);
      const p = datePartText(a);
      return p === undefined ? a : ({ kind: 'StringLiteral', loc: a.loc, value: p, raw: false } as A.StringLiteral);
    });
    const { exprs, names } = resolveArgs(an, args, ctx);
    return applyScalar(def, exprs, n.loc, { safe: n.safe, names });
  }
  // FLATTEN's argument is an array path (array elements field access).
  const { exprs, names } = resolveArgs(an, n.args, def.name === 'FLATTEN' ? { ...ctx, flatten: true } : ctx, def.name);
  if (def.name === 'TO_JSON' && exprs[0] && isGraphElementType(exprs[0].type)) exprs[0] = graphElementJsonShape(exprs[0]);
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

// The functions whose date part is a name (date_functions.md, datetime_functions.md, time_functions.md,
// timestamp_functions.md): never a string or another expression, as Postgres' DATE_TRUNC('month', d) writes it.
const DATE_PART_FUNCTION = /^(?:DATE|DATETIME|TIME|TIMESTAMP)_(?:ADD|SUB|DIFF|TRUNC)$|^LAST_DAY$/;
const DATE_PART_NAMES = new Set(['YEAR', 'ISOYEAR', 'QUARTER', 'MONTH', 'WEEK', 'ISOWEEK', 'DAY', 'DAYOFWEEK', 'DAYOFYEAR', 'DATE', 'DATETIME', 'TIME', 'HOUR', 'MINUTE', 'SECOND', 'MILLISECOND', 'MICROSECOND', 'NANOSECOND']);
const WEEKDAYS = new Set(['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY']);

/**
 * A date part argument is a date part name (or WEEK(<weekday>)); the messages are the service's. Which parts a
 * function takes is its own check (`DATE_TRUNC does not support the HOUR date part`). `fromInterval`: the part of an
 * `INTERVAL n PART` argument, already a name.
 */
export function checkDatePart(a: A.Expr, fromInterval = false): void {
  const name = fromInterval && a.kind === 'StringLiteral' ? a.value
    : a.kind === 'PathExpr' && a.parts.length === 1 ? a.parts[0]!
    : a.kind === 'FunctionCall' && a.name.length === 1 && a.args.length === 1 ? a.name[0]!
    : undefined;
  if (name === undefined) throw sqlError('A valid date part name is required', a.loc);
  if (!DATE_PART_NAMES.has(name.toUpperCase())) throw sqlError(`A valid date part name is required but found ${name}`, a.loc);
  if (a.kind !== 'FunctionCall') return;
  const w = a.args[0]!;
  const day = w.kind === 'PathExpr' && w.parts.length === 1 ? w.parts[0]! : undefined;
  if (name.toUpperCase() !== 'WEEK') throw sqlError('A valid date part name is required', a.loc);
  if (day === undefined || !WEEKDAYS.has(day.toUpperCase())) throw sqlError(`A valid date part argument for WEEK is required, but found ${day ?? 'an expression'}`, w.loc);
}

/** The name of a date part written as an identifier of EXTRACT (`EXTRACT(DOW FROM d)` is no date part at all). */
export function checkExtractPart(part: string, loc: A.Loc): void {
  if (!DATE_PART_NAMES.has(part.toUpperCase())) throw sqlError(`A valid date part name is required but found ${part}`, loc);
}

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
