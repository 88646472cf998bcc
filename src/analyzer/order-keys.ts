// ORDER BY keys of queries and aggregates: the literal-key refusal, direction, NULLS order and collation.
import type * as A from '../../grammar/ast.js';
import { collationNameError } from '../functions/collation.js';
import { typeToSql, type SqlType } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import type { SortKey } from './resolved.js';
import { Scope } from './scope.js';
import { Origin } from './types.js';
import { type ExprCtx, resolveExpr } from './expr.js';
import { originOf } from './coercion.js';

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
