// Aggregate calls: their modifiers (DISTINCT, ORDER BY, LIMIT, HAVING MAX/MIN, WHERE) and the call moved
// into the query block's AggCollector, replaced by a column reference.
import type * as A from '../../grammar/ast.js';
import type { AggregateFunctionDef } from '../functions/registry.js';
import { resolveAggregate as resolveAggregateFn } from '../functions/registry.js';
import {
  collateAggregate,
  collationAffects,
  isBinaryCollation,
  collationOf,
  mergeCollations,
  rejectedCollation,
  propagatesCollation,
  withCollation,
} from '../functions/collation.js';
import { T, isOrderable, typeToSql } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { QueryError } from '../types/errors.js';
import { constantValue } from './names.js';
import type { AggregateCall, Expr } from './resolved.js';
import { Scope, colRef } from './scope.js';
import { type ExprCtx, resolveExpr } from './expr.js';
import { literal, coerce, argInfo, requireBool } from './coercion.js';
import { callScalar, resolveArgs } from './calls.js';
import { refuseLiteralOrderKey, orderKeys } from './order-keys.js';
import { exprEquals } from './expr-equality.js';

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
  const rejected = rejectedCollation(def.name, exprs.map((e) => e.type));
  if (rejected) throw sqlError(rejected, n.loc);
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
