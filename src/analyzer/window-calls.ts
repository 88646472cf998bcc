// Analytic calls (`f(...) OVER (...)`): named windows merged, frames and their
// offsets checked as the reference checks them, the call moved into the
// enclosing query's window collector and replaced by a column reference.
import type * as A from '../../grammar/ast.js';
import { lookupFunction, resolveAggregate } from '../functions/registry.js';
import { T, isOrderable, typeToSql, type SqlType } from '../types/types.js';
import { Decimal } from '../types/values.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { constantValue } from './names.js';
import { TF_IDF_TYPE } from '../functions/search.js';
import { rewriteExpr } from './rewrite.js';
import type { Expr, FrameBound, WindowCall, WindowFrame } from './resolved.js';
import { Scope, colRef } from './scope.js';
import { Origin, canCoerce } from './types.js';
import { originOf, coerce, argInfo, unify } from './coercion.js';
import { type ExprCtx, resolveExpr } from './expr.js';
import { collationGrouper, functionHint, NUMBERING, NAVIGATION } from './calls.js';
import { orderKeys } from './order-keys.js';
import { safePrefixRefused } from './aggregate-calls.js';

/** The analytic functions that take IGNORE / RESPECT NULLS: aggregate-calls.ts's aggregates that do, and the navigation functions. */
const NULL_HANDLING_ANALYTIC = new Set(['ARRAY_AGG', 'APPROX_QUANTILES', 'PERCENTILE_CONT', 'PERCENTILE_DISC', 'FIRST_VALUE', 'LAST_VALUE', 'NTH_VALUE']);

/** A window spec with its named base folded in; the documented inheritance rules are checked on the way. */
export function mergeWindow(spec: A.WindowSpec, named: ReadonlyMap<string, A.WindowSpec>, loc: A.Loc): A.WindowSpec {
  if (!spec.baseName) return spec;
  const base = named.get(spec.baseName.toLowerCase());
  if (!base) throw sqlError(`Unrecognized window alias ${spec.baseName}`, loc);
  const b = mergeWindow(base, named, loc);
  // The documented named-window rules: a referencing window may only extend what the named one leaves open.
  if (spec.partitionBy.length) throw sqlError('If a window has a PARTITION BY, it cannot reference a named window', spec.loc);
  if (spec.orderBy.length && b.orderBy.length) throw sqlError('If a window inherits an ORDER BY from its referenced window, it cannot have an inline ORDER BY', spec.loc);
  if (b.frame && (spec.orderBy.length || spec.frame)) throw sqlError('If a window has an inline ORDER BY or window frame clause, it cannot reference another window that contains or inherits a window frame clause', spec.loc);
  return {
    kind: 'WindowSpec',
    loc: spec.loc,
    partitionBy: b.partitionBy.length ? b.partitionBy : spec.partitionBy,
    orderBy: spec.orderBy.length ? spec.orderBy : b.orderBy,
    ...(spec.frame ?? b.frame ? { frame: spec.frame ?? b.frame } : {}),
  };
}

/**
 * Window partition keys: no floating point, JSON or GEOGRAPHY (window-function-calls: PARTITION BY), and no ARRAY or
 * STRUCT: data-types.md (Grouping with arrays / structs) makes them groupable only in GROUP BY and SELECT DISTINCT.
 */
function partitionable(t: SqlType): boolean {
  return t.kind !== 'FLOAT64' && t.kind !== 'JSON' && t.kind !== 'GEOGRAPHY' && t.kind !== 'ARRAY' && t.kind !== 'STRUCT';
}

/** A frame must not end before it starts (the window-function-calls page's frame rules, in the service's words). */
function checkFrameOrder(f: A.WindowFrame, loc: A.Loc): void {
  const word = (t: A.FrameBound['type']) => (t === 'PRECEDING' ? 'OFFSET PRECEDING' : t === 'FOLLOWING' ? 'OFFSET FOLLOWING' : t);
  const start = f.start.type;
  if (start === 'UNBOUNDED FOLLOWING') throw sqlError('Starting window framing expression cannot be UNBOUNDED FOLLOWING', loc);
  if (!f.end) {
    if (start === 'FOLLOWING') throw sqlError('Starting window framing expression cannot be OFFSET FOLLOWING because the implicit ending window framing expression is CURRENT ROW', loc);
    return;
  }
  const end = f.end.type;
  if (end === 'UNBOUNDED PRECEDING') throw sqlError('Ending window framing expression cannot be UNBOUNDED PRECEDING', loc);
  if (start === 'CURRENT ROW' && end === 'PRECEDING') throw sqlError('Starting window framing expression cannot be CURRENT ROW when the ending window framing expression is OFFSET PRECEDING', loc);
  if (start === 'FOLLOWING' && (end === 'CURRENT ROW' || end === 'PRECEDING')) throw sqlError(`Ending window framing expression cannot be ${word(end)} when the starting window framing expression is OFFSET FOLLOWING`, loc);
}

/**
 * A RANGE frame without ORDER BY holds every row of the partition: only
 * BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING is accepted, the others
 * refused as ZetaSQL's analytic function resolver words it.
 */
function rangeWithoutOrder(f: A.WindowFrame, loc: A.Loc): void {
  if (f.start.type === 'UNBOUNDED PRECEDING' && f.end?.type === 'UNBOUNDED FOLLOWING') return;
  if (!f.end) throw sqlError('A RANGE-based window without ORDER BY includes all rows in the window frame so only RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING syntax is supported', loc);
  if ([f.start.type, f.end.type].some((t) => t === 'PRECEDING' || t === 'FOLLOWING')) {
    throw sqlError('A RANGE-based window including an OFFSET PRECEDING or OFFSET FOLLOWING window frame boundary requires an ORDER BY', loc);
  }
  throw sqlError(
    'A RANGE-based window without ORDER BY cannot include a CURRENT ROW window frame boundary since all rows are included in the window frame. Remove the RANGE clause or use RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING',
    loc,
  );
}

function frameBound(an: Analyzer, b: A.FrameBound, ctx: ExprCtx): FrameBound {
  switch (b.type) {
    case 'UNBOUNDED PRECEDING':
      return { type: 'unbounded_preceding' };
    case 'UNBOUNDED FOLLOWING':
      return { type: 'unbounded_following' };
    case 'CURRENT ROW':
      return { type: 'current_row' };
    case 'PRECEDING':
      return { type: 'preceding', offset: frameOffset(an, b.offset!, ctx) };
    default:
      return { type: 'following', offset: frameOffset(an, b.offset!, ctx) };
  }
}

const FRAME_OFFSET_ERROR = 'Window framing expression must be a literal or parameter';

/**
 * A frame offset is a literal or a query parameter (a CAST or sign of one allowed), as the reference
 * analyzer rules: `1 + 1`, a subquery or a column is refused. A name the query's scope knows (a column)
 * gets that refusal rather than "Unrecognized name"; a script variable or UDF argument resolves
 * without the scope and stands for a parameter.
 */
function frameOffset(an: Analyzer, e: A.Expr, ctx: ExprCtx): Expr {
  let x: Expr;
  try {
    x = resolveExpr(an, e, { scope: new Scope(), clause: 'window frame', udfArgs: ctx.udfArgs });
  } catch (err) {
    try {
      resolveExpr(an, e, { scope: ctx.scope, clause: 'window frame', udfArgs: ctx.udfArgs });
    } catch {
      throw err;
    }
    throw sqlError(FRAME_OFFSET_ERROR, e.loc);
  }
  if (!literalOrParam(e)) throw sqlError(FRAME_OFFSET_ERROR, e.loc);
  if (constantOnly(e)) {
    // A literal bound (a CAST or sign of one folds to a literal) is checked when the query is analyzed, as the
    // reference analyzer's window-frame resolver does; a parameter's value is checked when the window runs.
    const v = constantValue(x);
    if (v === null) throw sqlError('Window framing expression cannot be NULL', e.loc);
    if (v !== undefined && (v instanceof Decimal ? v.toNumber() : Number(v)) < 0) throw sqlError('Window framing expression cannot evaluate to a negative value', e.loc);
  }
  return x;
}

/** An offset built from literals only (no parameter, system variable or script variable). */
function constantOnly(e: A.Expr): boolean {
  if (e.kind === 'UnaryExpr') return constantOnly(e.operand);
  if (e.kind === 'CastExpr') return constantOnly(e.expr);
  return e.kind !== 'NamedParam' && e.kind !== 'PositionalParam' && e.kind !== 'SystemVariable' && e.kind !== 'PathExpr';
}

function literalOrParam(e: A.Expr): boolean {
  switch (e.kind) {
    case 'UnaryExpr':
      return (e.op === '-' || e.op === '+') && literalOrParam(e.operand);
    case 'CastExpr':
      return literalOrParam(e.expr);
    case 'IntLiteral':
    case 'FloatLiteral':
    case 'StringLiteral':
    case 'BoolLiteral':
    case 'NullLiteral':
    case 'TypedLiteral':
    case 'NamedParam':
    case 'PositionalParam':
    case 'SystemVariable':
    // Resolved without the query's scope: a script variable or a UDF argument.
    case 'PathExpr':
      return true;
    default:
      return false;
  }
}

/** A literal, a parameter, or a CAST of one (a sign only directly on a number: `-1`, not `-CAST(1 AS INT64)`). */
function castOfLiteral(e: A.Expr): boolean {
  if (e.kind === 'CastExpr') return castOfLiteral(e.expr);
  if (e.kind === 'UnaryExpr') return e.op === '-' && (e.operand.kind === 'IntLiteral' || e.operand.kind === 'FloatLiteral');
  return e.kind !== 'PathExpr' && literalOrParam(e);
}

/**
 * The analytic functions' constant arguments (the reference analyzer's rules): the offset of LAG/LEAD,
 * N of NTH_VALUE and the percentile of PERCENTILE_* are literals or query parameters (parameters
 * resolve to literals here); PERCENTILE_* take no window ORDER BY. A literal out of its signature's
 * range, or NULL, fails here; a parameter's value is checked when the function runs, in the runtime's words.
 */
function checkAnalyticConstants(name: string, args: readonly Expr[], ordered: boolean, n: A.FunctionCall): void {
  const pct = name === 'PERCENTILE_CONT' || name === 'PERCENTILE_DISC';
  if (pct && ordered) throw sqlError(`Window ORDER BY is not allowed for analytic function ${n.name.join('.').toLowerCase()}`, n.over!.loc);
  const i = name === 'NTILE' ? 0 : 1;
  const e = args[i];
  if (!e) return;
  // A CAST or sign of a literal counts as one (CAST('0.5' AS FLOAT64)), as the reference folds it.
  const ast = n.args[i]!;
  if (e.kind !== 'literal' && !castOfLiteral(ast)) {
    if (name === 'NTILE') throw sqlError('The argument to NTILE must be a literal or query parameter', ast.loc);
    if (pct || name === 'LAG' || name === 'LEAD' || name === 'NTH_VALUE') throw sqlError(`Argument 2 to ${name} must be a literal or query parameter`, ast.loc);
  }
  if (originOf(e) === Origin.Param) return;
  const value = constantValue(e);
  // A parameter under a CAST: its value is checked when the function runs.
  if (value === undefined) return;
  if (value === null) {
    if (name === 'NTILE') throw sqlError('The argument to NTILE must be non-NULL', ast.loc);
    if (pct || name === 'LAG' || name === 'LEAD' || name === 'NTH_VALUE') throw sqlError(`Argument 2 to ${name} must be non-NULL`, ast.loc);
    return;
  }
  const v = value instanceof Decimal ? value.toNumber() : Number(value);
  if (name === 'NTILE' && v < 1) throw sqlError('The argument to NTILE must be at least 1', n.args[0]!.loc);
  if (name === 'NTH_VALUE' && v < 1) throw sqlError('Argument 2 to NTH_VALUE must be at least 1', n.args[1]!.loc);
  if (pct && !(v >= 0 && v <= 1)) throw sqlError(`Argument 2 to ${name} must be between 0 and 1`, n.args[1]!.loc);
}

/** The reference's signatures of the numbering and navigation functions, where an argument has a fixed type. */
const ANALYTIC_SIGNATURES: Record<string, { text: string; ok: (args: readonly Expr[]) => boolean }> = {
  NTILE: { text: 'NTILE(INT64)', ok: (a) => a.length === 1 && int64(a[0]!) },
  LAG: { text: 'LAG(ANY, [INT64], [ANY])', ok: (a) => a.length >= 1 && a.length <= 3 && (!a[1] || int64(a[1])) },
  LEAD: { text: 'LEAD(ANY, [INT64], [ANY])', ok: (a) => a.length >= 1 && a.length <= 3 && (!a[1] || int64(a[1])) },
  NTH_VALUE: { text: 'NTH_VALUE(ANY, INT64)', ok: (a) => a.length === 2 && int64(a[1]!) },
  PERCENTILE_CONT: {
    text: 'PERCENTILE_CONT(FLOAT64, FLOAT64); PERCENTILE_CONT(NUMERIC, NUMERIC); PERCENTILE_CONT(BIGNUMERIC, BIGNUMERIC)',
    ok: (a) => a.length === 2 && a.every((x) => canCoerce(x.type, T.BIGNUMERIC, originOf(x)) || canCoerce(x.type, T.FLOAT64, originOf(x))),
  },
};
function int64(e: Expr): boolean {
  return canCoerce(e.type, T.INT64, originOf(e));
}
function checkAnalyticSignature(name: string, args: readonly Expr[], n: A.FunctionCall): void {
  const sig = ANALYTIC_SIGNATURES[name];
  if (!sig || sig.ok(args)) return;
  const plural = sig.text.includes(';') ? 'signatures' : 'signature';
  throw sqlError(`No matching signature for analytic function ${name} for argument types: ${args.map((a) => typeToSql(a.type)).join(', ')}. Supported ${plural}: ${sig.text}`, n.loc);
}

export function resolveWindowCall(an: Analyzer, n: A.FunctionCall, name: string, ctx: ExprCtx): Expr {
  if (!ctx.wins) throw sqlError(ctx.analyticRefusal ?? `Analytic function not allowed in ${ctx.clause}`, n.loc);
  // No SAFE. on window functions (an aggregate's refusal waits for its lookup below, so an unknown name says so first).
  if (n.safe && (NUMBERING.has(name) || NAVIGATION.has(name))) throw safePrefixRefused(name, n.loc);
  if (n.orderBy?.length) throw sqlError('ORDER BY in arguments is not supported on analytic functions', n.orderBy[0]!.loc);
  if (n.limit) throw sqlError('LIMIT in arguments is not supported on analytic functions', n.limit.loc);
  if (n.having) throw sqlError('HAVING modifier is not supported on analytic functions', n.having.expr.loc);
  if (n.nullHandling !== undefined && !NULL_HANDLING_ANALYTIC.has(name))
    throw sqlError(`IGNORE NULLS and RESPECT NULLS are not allowed for analytic function ${name}`, n.loc);
  const wins = ctx.wins;
  const spec = mergeWindow(n.over!, wins.named, n.loc);
  // Arguments, PARTITION BY and ORDER BY see the post-aggregation row (aggregates allowed).
  const ectx: ExprCtx = { ...ctx, wins: undefined, clause: 'analytic function', analyticRefusal: 'Analytic function cannot be an argument of another analytic function' };
  // Partitions of collated strings follow the collation, as GROUP BY does (collation concepts: WINDOW).
  const partitionBy = spec.partitionBy.map((p) => {
    const e = resolveExpr(an, p, { ...ectx, analyticRefusal: 'Analytic function not allowed in PARTITION BY' });
    if (!partitionable(e.type)) throw sqlError(`Partitioning by expressions of type ${typeToSql(e.type)} is not allowed`, p.loc);
    return collationGrouper(e.type)?.(e) ?? e;
  });
  const orderBy = orderKeys(an, spec.orderBy, { ...ectx, analyticRefusal: 'Analytic function not allowed in Window ORDER BY' });
  orderBy.forEach((k, i) => {
    if (!isOrderable(k.expr.type)) throw sqlError(`Ordering by expressions of type ${k.expr.type.kind} is not allowed`, spec.orderBy[i]!.loc);
  });
  let frame: WindowFrame | undefined;
  if (spec.frame) {
    checkFrameOrder(spec.frame, n.over!.loc);
    frame = {
      unit: spec.frame.unit,
      start: frameBound(an, spec.frame.start, ctx),
      end: spec.frame.end ? frameBound(an, spec.frame.end, ctx) : { type: 'current_row' },
    };
  }
  if (spec.frame && (NUMBERING.has(name) || name === 'LAG' || name === 'LEAD' || name === 'PERCENTILE_CONT' || name === 'PERCENTILE_DISC')) {
    throw sqlError(`Window framing clause is not allowed for analytic function ${n.name.join('.').toLowerCase()}`, n.over!.loc);
  }
  if (frame && frame.unit === 'RANGE' && orderBy.length === 0) rangeWithoutOrder(spec.frame!, n.over!.loc);
  // window-function-calls.md, window specification: with a frame clause ORDER BY is required except for fully
  // unbounded windows (the reference runs a ROWS frame over the unordered partition).
  if (frame && frame.unit === 'ROWS' && orderBy.length === 0 && !(spec.frame!.start.type === 'UNBOUNDED PRECEDING' && spec.frame!.end?.type === 'UNBOUNDED FOLLOWING')) {
    throw sqlError('A ROWS-based window frame requires an ORDER BY unless it is ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING', n.over!.loc);
  }
  if (frame && frame.unit === 'RANGE' && [frame.start, frame.end].some((b) => b.type === 'preceding' || b.type === 'following')) {
    if (orderBy.length !== 1) throw sqlError('A RANGE-based window with OFFSET PRECEDING or OFFSET FOLLOWING boundaries must have exactly one ORDER BY key', n.over!.loc);
    const kt = orderBy[0]!.expr.type;
    if (!(kt.kind === 'INT64' || kt.kind === 'FLOAT64' || kt.kind === 'NUMERIC' || kt.kind === 'BIGNUMERIC')) {
      throw sqlError(`ORDER BY key must be numeric in a RANGE-based window with OFFSET PRECEDING or OFFSET FOLLOWING boundaries, but has type ${typeToSql(kt)}`, spec.orderBy[0]!.loc);
    }
    for (const b of [frame.start, frame.end]) {
      if ((b.type === 'preceding' || b.type === 'following') && !canCoerce(b.offset.type, kt, originOf(b.offset))) {
        throw sqlError(`Window framing expression has type ${typeToSql(b.offset.type)} that cannot coerce to the type of the ORDER BY expression, which is ${typeToSql(kt)}`, n.over!.loc);
      }
    }
  }
  const star = n.args[0]?.kind === 'StarArg';
  let args = star ? [] : n.args.map((a) => resolveExpr(an, a, ectx));
  checkAnalyticSignature(name, args, n);
  checkAnalyticConstants(name, args, orderBy.length > 0, n);
  let type: SqlType;
  let aggregate: WindowCall['aggregate'];
  let fname = name;
  if (NUMBERING.has(name)) {
    if (orderBy.length === 0 && name !== 'ROW_NUMBER') throw sqlError(`Window ORDER BY is required for analytic function ${name}`, n.loc);
    type = name === 'PERCENT_RANK' || name === 'CUME_DIST' ? T.FLOAT64 : T.INT64;
    if (name === 'NTILE') args = args.map((a) => coerce(a, T.INT64));
  } else if (NAVIGATION.has(name)) {
    if (args.length === 0) throw sqlError(`Number of arguments does not match for function ${name}`, n.loc);
    type = args[0]!.type;
    if (name === 'PERCENTILE_CONT') {
      // navigation_functions.md, PERCENTILE_CONT's return type table: FLOAT64 if either argument is FLOAT64
      // (an INT64 one, literal or not, is read as FLOAT64, as the reference implementation does), else BIGNUMERIC
      // if either is, else NUMERIC; both arguments take that type.
      const kinds = args.slice(0, 2).map((a) => (a.type.kind === 'NUMERIC' || a.type.kind === 'BIGNUMERIC' ? a.type.kind : 'FLOAT64'));
      type = kinds.includes('FLOAT64') ? T.FLOAT64 : kinds.includes('BIGNUMERIC') ? T.BIGNUMERIC : T.NUMERIC;
      args = args.map((a) => coerce(a, type));
    } else if ((name === 'LAG' || name === 'LEAD') && args.length === 3) {
      let reads = false;
      rewriteExpr(args[2]!, (x) => {
        if (x.kind === 'column' && !x.correlated) reads = true;
        return undefined;
      });
      if (reads) throw sqlError(`The third argument (the default expression) to ${name} must be constant`, n.args[2]!.loc);
      const u = unify([args[0]!, args[2]!], n.loc, `analytic function ${name}`, { args, signature: `${name}(ANY, [INT64], [ANY])` });
      type = u.type;
      args = [u.exprs[0]!, coerce(args[1]!, T.INT64), u.exprs[1]!];
    } else if (name === 'NTH_VALUE' || name === 'LAG' || name === 'LEAD') {
      args = args.map((a, i) => (i === 1 ? coerce(a, T.INT64) : a));
    }
    // Every navigation function but PERCENTILE_* needs the window ORDER BY (the navigation functions' window_specification).
    if (name !== 'PERCENTILE_CONT' && name !== 'PERCENTILE_DISC' && orderBy.length === 0) {
      throw sqlError(`Window ORDER BY is required for analytic function ${name}`, n.loc);
    }
  } else if (name === 'TF_IDF') {
    // Per-document weights over the whole partition (text-analysis-functions; functions/search.ts tfIdf).
    if (args.length < 1 || args.length > 3) throw sqlError(`Number of arguments does not match for function ${name}`, n.loc);
    const t0 = args[0]!.type;
    if (!(t0.kind === 'ARRAY' && t0.element.kind === 'STRING')) throw sqlError(`No matching signature for analytic function TF_IDF for argument types: ${typeToSql(t0)}. Supported signature: TF_IDF(ARRAY<STRING>, [INT64], [INT64])`, n.loc);
    args.slice(1).forEach((a, i) => {
      if (!canCoerce(a.type, T.INT64, originOf(a))) throw sqlError(`TF_IDF argument ${i + 2} must be INT64, got ${typeToSql(a.type)}`, n.args[i + 1]!.loc);
      const v = constantValue(a);
      if (v === undefined) throw sqlError(`TF_IDF argument ${i + 2} must be a constant`, n.args[i + 1]!.loc);
    });
    args = args.map((a, i) => (i === 0 ? a : coerce(a, T.INT64)));
    if (spec.frame || orderBy.length) throw sqlError('TF_IDF takes only PARTITION BY in its OVER clause', n.over!.loc);
    type = TF_IDF_TYPE;
  } else if (name === 'ST_CLUSTERDBSCAN') {
    // Per-row cluster numbers over the partition (GEOGRAPHY library: clusterDbscan).
    if (args.length !== 3) throw sqlError(`Number of arguments does not match for function ${name}`, n.loc);
    args = [coerce(args[0]!, T.GEOGRAPHY), coerce(args[1]!, T.FLOAT64), coerce(args[2]!, T.INT64)];
    type = T.INT64;
  } else {
    const def = lookupFunction(name === 'COUNT' && star ? '$count_star' : name);
    if (!def) throw sqlError(`Function not found: ${n.name.join('.')}${functionHint(n.name.join('.'))}`, n.loc);
    if (def.kind !== 'aggregate') throw sqlError(`Function ${name} does not support an OVER clause`, n.loc);
    if (n.safe) throw safePrefixRefused(name, n.loc);
    if (n.distinct && orderBy.length > 0) throw sqlError('Window ORDER BY is not allowed if DISTINCT is specified', n.over!.loc);
    const opts = { distinct: n.distinct, ignoreNulls: n.nullHandling === undefined ? undefined : n.nullHandling === 'IGNORE', hasOrderBy: false };
    const r = resolveAggregate(def, args.map((e) => argInfo(e)), opts);
    if (!r.ok) throw sqlError(r.message, n.loc);
    args = args.map((e, i) => (r.resolved.argTypes[i] ? coerce(e, r.resolved.argTypes[i]!) : e));
    type = r.resolved.returnType;
    aggregate = r.resolved;
    fname = def.name;
  }
  const column = an.newColumn('$analytic', type);
  wins.calls.push({
    column,
    name: fname,
    args,
    ...(aggregate ? { aggregate } : {}),
    distinct: n.distinct,
    ignoreNulls: n.nullHandling === undefined ? undefined : n.nullHandling === 'IGNORE',
    partitionBy,
    orderBy,
    ...(frame ? { frame } : {}),
  });
  return colRef(column);
}
