// Predicates: logical operators (AND/OR/NOT), [NOT] LIKE incl. LIKE ANY/ALL, [NOT] IN and CASE.
// IF/IFNULL/NULLIF/COALESCE are function calls (calls.ts).
import type * as A from '../../grammar/ast.js';
import { collationOf } from '../functions/collation.js';
import { T, isEqualityComparable, typeToSql } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { resolveSubquery } from './query.js';
import type { Expr } from './resolved.js';
import { Origin, supertype } from './types.js';
import { type ExprCtx, resolveExpr } from './expr.js';
import { originOf, literal, isErrorCall, errorAs, typedOf, unify, requireBool } from './coercion.js';
import { callScalar } from './calls.js';

export function logical(op: 'and' | 'or' | 'not', args: Expr[], loc: A.Loc, opName: string): Expr {
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

export function resolveLike(an: Analyzer, n: A.LikeExpr, ctx: ExprCtx): Expr {
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

export function resolveIn(an: Analyzer, n: A.InExpr, ctx: ExprCtx): Expr {
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

export function resolveCase(an: Analyzer, n: A.CaseExpr, ctx: ExprCtx): Expr {
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
