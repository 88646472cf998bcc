// Per-partition top-N: a filter `rn <= k` (also `rn < k`, `rn = k`, and the
// mirrored `k >= rn`) over a Window whose `rn` is ROW_NUMBER(), RANK() or
// DENSE_RANK() marks the Window with partitionLimit = {fn, k}, so the operator
// keeps only the rows of each partition that can pass instead of numbering
// every row. The filter stays: the pruning only drops rows it would drop.
//
// Only when every call of the Window is ROW_NUMBER/RANK/DENSE_RANK over the
// same PARTITION BY / ORDER BY: those values depend only on a row and the rows
// before it, so they are unchanged on the kept prefix of each partition. Any
// other call (aggregates, LEAD, NTILE, ...) would see the dropped rows.
import type { Expr, Rel, WindowCall } from '../../analyzer/resolved.js';
import { conjuncts } from './util.js';

const NUMBERING = new Set(['ROW_NUMBER', 'RANK', 'DENSE_RANK']);

/** Structural key of a partition/order expression; null for anything but columns and literals (no sharing then). */
function exprKey(e: Expr): string | null {
  if (e.kind === 'column') return e.correlated ? null : `c${e.columnId}`;
  if (e.kind === 'literal') return `l${typeof e.value === 'bigint' || typeof e.value === 'number' || typeof e.value === 'string' || typeof e.value === 'boolean' ? String(e.value) : '?'}`;
  return null;
}

function specKey(c: WindowCall): string | null {
  const parts: string[] = [];
  for (const e of c.partitionBy) {
    const k = exprKey(e);
    if (k === null) return null;
    parts.push(k);
  }
  parts.push('|');
  for (const o of c.orderBy) {
    const k = exprKey(o.expr);
    if (k === null || o.collation !== undefined) return null;
    parts.push(`${k}:${o.descending}:${o.nullsFirst}`);
  }
  return parts.join(',');
}

/** The largest value a conjunct admits when it bounds column `id` from above by an INT64 literal, else null. */
function bound(p: Expr, id: number): number | null {
  if (p.kind !== 'call' || p.args.length !== 2) return null;
  const [a, b] = p.args as [Expr, Expr];
  let name = p.name;
  let lit: Expr;
  if (a.kind === 'column' && a.columnId === id && !a.correlated) lit = b;
  else if (b.kind === 'column' && b.columnId === id && !b.correlated) {
    lit = a;
    // k >= rn is rn <= k.
    const mirror: Record<string, string> = { $greater_or_equal: '$less_or_equal', $greater: '$less', $equal: '$equal' };
    const m = mirror[name];
    if (m === undefined) return null;
    name = m;
  } else return null;
  if (lit.kind !== 'literal' || typeof lit.value !== 'bigint') return null;
  const k = lit.value;
  // Past 2^31 the pruning would keep everything anyway.
  const cap = (x: bigint): number => (x < 0n ? 0 : x > 0x7fffffffn ? 0x7fffffff : Number(x));
  switch (name) {
    case '$less_or_equal':
      return cap(k);
    case '$less':
      return cap(k - 1n);
    case '$equal':
      // rn = 5 needs the rows numbered 1..5 before it.
      return cap(k);
    default:
      return null;
  }
}

type Numbering = 'ROW_NUMBER' | 'RANK' | 'DENSE_RANK';
/** For one bound k, ROW_NUMBER <= k keeps the fewest rows, DENSE_RANK <= k the most. */
const TIGHTNESS: Record<Numbering, number> = { ROW_NUMBER: 0, RANK: 1, DENSE_RANK: 2 };

export function windowTopN(rel: Rel): Rel {
  if (rel.kind !== 'filter' || rel.input.kind !== 'window') return rel;
  const win = rel.input;
  if (win.calls.length === 0 || win.calls.some((c) => !NUMBERING.has(c.name.toUpperCase()) || c.aggregate !== undefined)) return rel;
  // Several calls must share one spec (compared structurally over columns and literals); one call may use any expressions.
  if (win.calls.length > 1) {
    const spec = specKey(win.calls[0]!);
    if (spec === null || win.calls.some((c) => specKey(c) !== spec)) return rel;
  }
  // RANK/DENSE_RANK without ORDER BY are rejected by the analyzer; all rows would be peers anyway.
  let best: { fn: Numbering; limit: number } | null = null;
  for (const p of conjuncts(rel.predicate)) {
    for (const c of win.calls) {
      const fn = c.name.toUpperCase() as Numbering;
      if (fn !== 'ROW_NUMBER' && c.orderBy.length === 0) continue;
      const b = bound(p, c.column.id);
      if (b === null) continue;
      if (best === null || b < best.limit || (b === best.limit && TIGHTNESS[fn] < TIGHTNESS[best.fn])) best = { fn, limit: b };
    }
  }
  if (best === null) return rel;
  const cur = win.partitionLimit;
  if (cur !== undefined && cur.limit <= best.limit && TIGHTNESS[cur.fn] <= TIGHTNESS[best.fn]) return rel;
  return { ...rel, input: { ...win, partitionLimit: best } };
}
