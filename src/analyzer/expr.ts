// Expression resolution: AST expressions -> resolved Expr over column ids. This module holds the context
// (ExprCtx, the aggregate and window collectors) and the dispatch (resolveExpr) over the families in
// coercion.ts, paths.ts, constructors.ts, predicates.ts, calls.ts, aggregate-calls.ts and order-keys.ts.
// Operators are calls of the registry's internal names ($add, $equal, ...); aggregate and analytic calls
// are pulled out into the enclosing query's collectors and replaced by column references.
import type * as A from '../../grammar/ast.js';
import { T, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { resolveSubquery } from './query.js';
import type { AggregateCall, Expr, ResolvedColumn, WindowCall } from './resolved.js';
import { Scope, colRef } from './scope.js';
import { Origin, canCast, parseIntLiteral, rangeLiteral, typeFromNode, typedLiteral } from './types.js';
import { LOC, FLOATTEXT, tag, originOf, setLoc, literal, exactDecimalLiteral } from './coercion.js';
import { replaceStructField, fieldAccess, resolvePath, resolveSubscript } from './paths.js';
import { resolveInterval, resolveArray, resolveStruct } from './constructors.js';
import { logical, not, resolveLike, resolveIn, resolveCase } from './predicates.js';
import { callScalar, BINARY, checkExtractPart, resolveCall } from './calls.js';

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

// ---------------------------------------------------------------- main entry

export function resolveExpr(an: Analyzer, n: A.Expr, ctx: ExprCtx): Expr {
  if (ctx.flatten && n.kind !== 'PathExpr' && n.kind !== 'FieldAccess' && n.kind !== 'Subscript') ctx = { ...ctx, flatten: false };
  const e = resolveInner(an, n, ctx);
  if (!tag(e)[LOC]) setLoc(e, n.loc);
  return e;
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
      if (an.env.params.mode === 'POSITIONAL') throw sqlError('Named parameters are not supported', n.loc);
      const p = an.env.params.named.get(n.name.toLowerCase());
      if (!p) throw sqlError(`Query parameter '${n.name}' not found`, n.loc);
      return literal(p.type, p.value, Origin.Param);
    }
    case 'PositionalParam': {
      if (an.env.params.mode === 'NAMED') throw sqlError('Positional parameters are not supported', n.loc);
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
      checkExtractPart(n.part, n.loc);
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
    case 'WithExpr':
      return resolveWithExpr(an, n, ctx);
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


/**
 * operators.md, WITH expression: WITH(a AS e1, b AS e2, body). Names bind left to right, each once, and each
 * variable's expression is evaluated only once per row: a variable is the parameter of a lambda that APPLY hands
 * the value computed once (RAND() stays one value). A literal or a column is the same at each use and is inlined.
 */
function resolveWithExpr(an: Analyzer, n: A.WithExpr, ctx: ExprCtx): Expr {
  const m = new Map(ctx.udfArgs ?? []);
  const vars = new Set(ctx.withVars ?? []);
  const own = new Set<string>();
  const bound: { param: ResolvedColumn; value: Expr; loc: A.Loc }[] = [];
  for (const v of n.vars) {
    const name = v.name.toLowerCase();
    if (own.has(name)) throw sqlError(`Duplicate alias ${v.name} in WITH expression`, v.expr.loc);
    const value = resolveExpr(an, v.expr, { ...ctx, udfArgs: m, withVars: vars });
    if (value.kind === 'literal' || value.kind === 'column') m.set(name, value);
    else {
      const param = an.newColumn(v.name, value.type);
      bound.push({ param, value, loc: v.expr.loc });
      m.set(name, colRef(param));
    }
    own.add(name);
    // Inside an aggregate's arguments a WITH of its own is usable there.
    if (ctx.inAggregate) vars.delete(name);
    else vars.add(name);
  }
  let body = resolveExpr(an, n.body, { ...ctx, udfArgs: m, withVars: vars });
  for (let i = bound.length - 1; i >= 0; i--) {
    const { param, value, loc } = bound[i]!;
    body = callScalar('APPLY', [value, { kind: 'lambda', type: body.type, params: [param], body }], loc);
  }
  return body;
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

export function typeOf(n: A.TypeNode): SqlType {
  return typeFromNode(n);
}
