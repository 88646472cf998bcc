// Projection pruning: scans read only the columns some expression (anywhere
// in the statement, including subqueries and lateral sides) or the output
// needs; unused projection outputs are dropped. Positional consumers (set
// operations, CTE plans) keep all their columns. A join's output drops the
// columns only its own condition reads (`a JOIN b USING (k)` feeding an
// aggregate of b.v need not gather b.k for every pair).
import type { JoinRel, Rel, ValuesRel } from '../../analyzer/resolved.js';
import { relInputs, visitExpr, visitRelExprs } from '../../analyzer/rewrite.js';

/** Column id -> number of references (positional uses count too). */
type RefCounts = Map<number, number>;

const bump = (m: RefCounts, id: number, by = 1): void => {
  m.set(id, (m.get(id) ?? 0) + by);
};

function collectUsed(rel: Rel, used: RefCounts): void {
  visitRelExprs(rel, (e) => {
    if (e.kind === 'column') bump(used, e.columnId);
  });
  const walk = (r: Rel): void => {
    if (r.kind === 'setop') for (const i of r.inputs) for (const c of i.columns) bump(used, c.id);
    if (r.kind === 'with') for (const c of r.ctes) for (const col of c.plan.columns) bump(used, col.id);
    if (r.kind === 'recursive_cte') for (const x of [r.base, r.recursive]) for (const c of x.columns) bump(used, c.id);
    if (r.kind === 'cte_ref') for (const c of r.cteColumns) bump(used, c.id);
    for (const i of relInputs(r)) walk(i);
  };
  walk(rel);
}

const NO_ROWS: ValuesRel = { kind: 'values', rows: [], columns: [] };

/** References made by the join's own condition and keys (its inputs' expressions excluded). */
function ownRefs(rel: JoinRel): RefCounts {
  const own: RefCounts = new Map();
  visitRelExprs({ ...rel, left: NO_ROWS, right: NO_ROWS }, (e) => {
    if (e.kind === 'column') bump(own, e.columnId);
  });
  return own;
}

function rebuild(rel: Rel, used: RefCounts): Rel {
  const isUsed = (id: number): boolean => (used.get(id) ?? 0) > 0;
  switch (rel.kind) {
    case 'scan': {
      const keep = rel.columns.map((c, i) => (isUsed(c.id) ? i : -1)).filter((i) => i >= 0);
      if (keep.length === rel.columns.length) return rel;
      // A scan must still yield row counts (COUNT(*)): keep one column.
      const k = keep.length ? keep : [0];
      if (rel.columns.length === 0) return rel;
      return { ...rel, columns: k.map((i) => rel.columns[i]!), tableColumns: k.map((i) => rel.tableColumns[i]!) };
    }
    case 'project': {
      const keep = rel.columns.map((c, i) => (isUsed(c.id) ? i : -1)).filter((i) => i >= 0);
      const k = keep.length ? keep : rel.columns.length ? [0] : [];
      // A dropped output's references go with it (a projection passing every scan column through,
      // as an ingestion-time partitioned table's pseudo-columns are added, then leaves the scan
      // only the columns something reads).
      const kept = new Set(k);
      rel.exprs.forEach((e, i) => {
        if (!kept.has(i)) visitExpr(e, (x) => x.kind === 'column' && bump(used, x.columnId, -1));
      });
      const input = rebuild(rel.input, used);
      return { ...rel, input, columns: k.map((i) => rel.columns[i]!), exprs: k.map((i) => rel.exprs[i]!) };
    }
    case 'filter':
    case 'sort':
    case 'limit':
    case 'sample': {
      const input = rebuild(rel.input, used);
      return { ...rel, input, columns: input.columns } as Rel;
    }
    case 'window': {
      const input = rebuild(rel.input, used);
      return { ...rel, input, columns: [...input.columns, ...rel.calls.map((c) => c.column)] };
    }
    case 'aggregate':
      return { ...rel, input: rebuild(rel.input, used) };
    case 'join': {
      const left = rebuild(rel.left, used);
      const right = rebuild(rel.right, used);
      const all = rel.joinType === 'semi' || rel.joinType === 'anti' ? left.columns : [...left.columns, ...right.columns];
      // Lateral right sides run per left row with the left row bound: keep their shape.
      if (rel.lateral) return { ...rel, left, right, columns: all };
      // Needed above = referenced by something other than this join's own condition.
      // References from below (inputs) count too, which only keeps more than needed.
      const own = ownRefs(rel);
      const out = all.filter((c) => (used.get(c.id) ?? 0) > (own.get(c.id) ?? 0));
      // The executor needs at least one column to carry row counts (COUNT(*) over a join).
      return { ...rel, left, right, columns: out.length > 0 || all.length === 0 ? out : [all[0]!] };
    }
    case 'setop':
      return { ...rel, inputs: rel.inputs.map((i) => rebuild(i, used)) };
    case 'with': {
      const body = rebuild(rel.body, used);
      return { ...rel, ctes: rel.ctes.map((c) => ({ ...c, plan: rebuild(c.plan, used) })), body, columns: body.columns };
    }
    case 'recursive_cte':
      return { ...rel, base: rebuild(rel.base, used), recursive: rebuild(rel.recursive, used) };
    default:
      return rel;
  }
}

export function pruneColumns(root: Rel): Rel {
  return rebuild(root, usedColumns(root));
}

/** Column ids the plan's output or some expression or positional consumer reads (what pruning keeps). */
export function usedColumns(root: Rel): RefCounts {
  const used: RefCounts = new Map();
  for (const c of root.columns) bump(used, c.id);
  collectUsed(root, used);
  return used;
}
