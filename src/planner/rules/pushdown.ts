// Predicate pushdown: WHERE conjuncts move below joins (to the side whose
// columns they read; inner/cross joins absorb two-sided conjuncts as join
// conditions) and through column-renaming projections (and _PARTITIONDATE's
// cast), ending in Filters
// right above scans. Outer joins only accept conjuncts on their preserved side.
import type { Expr, Rel } from '../../analyzer/resolved.js';
import { rewriteExpr } from '../../analyzer/rewrite.js';
import { columnsOf, conjoin, conjuncts } from './util.js';

function within(cols: ReadonlySet<number>, rel: Rel): boolean {
  const ids = new Set(rel.columns.map((c) => c.id));
  for (const c of cols) if (!ids.has(c)) return false;
  return true;
}

function addFilter(rel: Rel, preds: readonly Expr[]): Rel {
  const p = conjoin(preds);
  if (!p) return rel;
  return pushInto({ kind: 'filter', input: rel, predicate: p, columns: rel.columns });
}

/** Pushes the predicate of a Filter node as deep as it can go. */
function pushInto(f: Rel & { kind: 'filter' }): Rel {
  const input = f.input;
  const preds = conjuncts(f.predicate);
  if (input.kind === 'join' && !input.lateral && input.joinType !== 'semi' && input.joinType !== 'anti') {
    const toLeft: Expr[] = [];
    const toRight: Expr[] = [];
    const toJoin: Expr[] = [];
    const stay: Expr[] = [];
    const jt = input.joinType;
    for (const p of preds) {
      const cols = columnsOf(p);
      if (!cols || cols.size === 0) stay.push(p);
      else if (within(cols, input.left) && (jt === 'inner' || jt === 'cross' || jt === 'left')) toLeft.push(p);
      else if (within(cols, input.right) && (jt === 'inner' || jt === 'cross' || jt === 'right')) toRight.push(p);
      else if (jt === 'inner' || jt === 'cross') toJoin.push(p);
      else stay.push(p);
    }
    if (!toLeft.length && !toRight.length && !toJoin.length) return f;
    const cond = conjoin([...(input.condition ? conjuncts(input.condition) : []), ...toJoin]);
    const join: Rel = {
      ...input,
      joinType: input.joinType === 'cross' && cond ? 'inner' : input.joinType,
      left: addFilter(input.left, toLeft),
      right: addFilter(input.right, toRight),
      ...(cond ? { condition: cond } : {}),
    };
    const rest = conjoin(stay);
    return rest ? { ...f, input: join, predicate: rest } : join;
  }
  if (input.kind === 'filter') {
    return pushInto({ ...f, input: input.input, predicate: conjoin([...conjuncts(input.predicate), ...preds])!, columns: input.input.columns });
  }
  if (input.kind === 'project') {
    // Substitute through projections whose referenced outputs are plain columns or literals.
    const byId = new Map<number, Expr>();
    input.columns.forEach((c, i) => byId.set(c.id, input.exprs[i]!));
    const movable: Expr[] = [];
    const stay: Expr[] = [];
    for (const p of preds) {
      const cols = columnsOf(p);
      const ok = cols && [...cols].every((id) => {
        const e = byId.get(id);
        return e !== undefined && (e.kind === 'column' ? !e.correlated : e.kind === 'literal' || isDateOfColumn(e));
      });
      if (ok && cols!.size) movable.push(rewriteExpr(p, (x) => (x.kind === 'column' && byId.has(x.columnId) ? byId.get(x.columnId)! : undefined)));
      else stay.push(p);
    }
    if (!movable.length) return f;
    const proj: Rel = { ...input, input: addFilter(input.input, movable) };
    const rest = conjoin(stay);
    return rest ? { ...f, input: proj, predicate: rest } : proj;
  }
  return f;
}

/**
 * A TIMESTAMP column's date (an ingestion-time partitioned table's
 * _PARTITIONDATE): a cast that cannot fail, so a filter on it may move below
 * the projection, where the scan can skip row groups by it.
 */
function isDateOfColumn(e: Expr): boolean {
  return e.kind === 'cast' && e.type.kind === 'DATE' && e.arg.kind === 'column' && !e.arg.correlated && e.arg.type.kind === 'TIMESTAMP' && e.format === undefined && (e.timeZone === undefined || e.timeZone.kind === 'literal');
}

export function pushdownPredicates(rel: Rel): Rel {
  return rel.kind === 'filter' ? pushInto(rel) : rel;
}
