// Equi-join key extraction: conjuncts `l = r` (or IS NOT DISTINCT FROM) with
// one side over the left input and the other over the right become hash keys;
// the remaining conjuncts stay in `condition` as the residual.
import type { Expr, JoinRel, Rel } from '../../analyzer/resolved.js';
import { conjuncts, columnsOf, conjoin } from './util.js';

export function extractEquiKeys(rel: Rel): Rel {
  if (rel.kind !== 'join' || rel.lateral || !rel.condition || rel.equiKeys || rel.joinType === 'cross') return rel;
  const left = new Set(rel.left.columns.map((c) => c.id));
  const right = new Set(rel.right.columns.map((c) => c.id));
  const keys: NonNullable<JoinRel['equiKeys']>[number][] = [];
  const residual: Expr[] = [];
  for (const c of conjuncts(rel.condition)) {
    if (c.kind === 'call' && (c.name === '$equal' || c.name === '$is_not_distinct_from') && c.args.length === 2) {
      const [a, b] = c.args as [Expr, Expr];
      const ca = columnsOf(a);
      const cb = columnsOf(b);
      const nullSafe = c.name === '$is_not_distinct_from';
      if (ca && cb && ca.size && cb.size) {
        if (subset(ca, left) && subset(cb, right)) {
          keys.push({ left: a, right: b, nullSafe });
          continue;
        }
        if (subset(ca, right) && subset(cb, left)) {
          keys.push({ left: b, right: a, nullSafe });
          continue;
        }
      }
    }
    residual.push(c);
  }
  if (!keys.length) return rel;
  const cond = conjoin(residual);
  const { condition: _old, ...restRel } = rel;
  void _old;
  return { ...restRel, ...(cond ? { condition: cond } : {}), equiKeys: keys };
}

function subset(a: ReadonlySet<number>, b: ReadonlySet<number>): boolean {
  for (const x of a) if (!b.has(x)) return false;
  return true;
}
