// Projection pruning: scans read only the columns some expression (anywhere
// in the statement, including subqueries and lateral sides) or the output
// needs; unused projection outputs are dropped. Positional consumers (set
// operations, CTE plans) keep all their columns.
import type { Rel } from '../../analyzer/resolved.js';
import { relInputs, visitRelExprs } from '../../analyzer/rewrite.js';

function collectUsed(rel: Rel, used: Set<number>): void {
  visitRelExprs(rel, (e) => {
    if (e.kind === 'column') used.add(e.columnId);
  });
  const walk = (r: Rel): void => {
    if (r.kind === 'setop') for (const i of r.inputs) for (const c of i.columns) used.add(c.id);
    if (r.kind === 'with') for (const c of r.ctes) for (const col of c.plan.columns) used.add(col.id);
    if (r.kind === 'recursive_cte') for (const x of [r.base, r.recursive]) for (const c of x.columns) used.add(c.id);
    if (r.kind === 'cte_ref') for (const c of r.cteColumns) used.add(c.id);
    for (const i of relInputs(r)) walk(i);
  };
  walk(rel);
}

function rebuild(rel: Rel, used: ReadonlySet<number>): Rel {
  switch (rel.kind) {
    case 'scan': {
      const keep = rel.columns.map((c, i) => (used.has(c.id) ? i : -1)).filter((i) => i >= 0);
      if (keep.length === rel.columns.length) return rel;
      // A scan must still yield row counts (COUNT(*)): keep one column.
      const k = keep.length ? keep : [0];
      if (rel.columns.length === 0) return rel;
      return { ...rel, columns: k.map((i) => rel.columns[i]!), tableColumns: k.map((i) => rel.tableColumns[i]!) };
    }
    case 'project': {
      const input = rebuild(rel.input, used);
      const keep = rel.columns.map((c, i) => (used.has(c.id) ? i : -1)).filter((i) => i >= 0);
      const k = keep.length ? keep : rel.columns.length ? [0] : [];
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
      return { ...rel, left, right, columns: rel.joinType === 'semi' || rel.joinType === 'anti' ? left.columns : [...left.columns, ...right.columns] };
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
  const used = new Set<number>(root.columns.map((c) => c.id));
  collectUsed(root, used);
  return rebuild(root, used);
}
