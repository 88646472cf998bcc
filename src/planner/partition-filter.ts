// require_partition_filter: a query reading such a table must filter on its
// partitioning column, else the real service refuses it with "Cannot query
// over table 'p.d.t' without a filter over column(s) 'c' that can be used for
// partition elimination". Checked on the analyzed plan of SELECT, CTAS and
// INSERT ... SELECT queries, and on a MERGE target (its ON or WHEN conditions
// must reference the column, as dbt's insert_overwrite `when not matched by
// source and DBT_INTERNAL_DEST.d in unnest(...)` does) and on UPDATE / DELETE
// targets (their WHERE).
//
// Lenient on purpose: a filter counts when some WHERE / ON / HAVING predicate
// of the statement references the partitioning column, directly or through
// the pass-through columns of projections, CTEs, set operations and views.
// The service's own rule (a predicate usable for partition elimination) is
// narrower; this refuses only queries that have no such predicate at all.
import type { Expr, Rel } from '../analyzer/resolved.js';
import type { TableId, TableInfo } from '../storage/api.js';
import { QueryError } from './api.js';
import type { Session } from './session.js';

/** Union-find over column ids: columns that carry the same values. */
class Lineage {
  private readonly parent = new Map<number, number>();
  find(x: number): number {
    let r = x;
    while (this.parent.has(r) && this.parent.get(r) !== r) r = this.parent.get(r)!;
    this.parent.set(x, r);
    return r;
  }
  join(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(ra, rb);
  }
}

type Node = Record<string, unknown>;
/** Plan and expression objects (not byte or typed-array literal values, which are not walked). */
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !ArrayBuffer.isView(v);

/** Column ids referenced anywhere inside an expression (subqueries included). */
function referenced(e: unknown, out: Set<number>): void {
  if (Array.isArray(e)) {
    for (const x of e) referenced(x, out);
    return;
  }
  if (!isNode(e)) return;
  if (e['kind'] === 'column' && typeof e['columnId'] === 'number') out.add(e['columnId']);
  for (const v of Object.values(e)) if (typeof v === 'object') referenced(v, out);
}

/** The partitioning column of a table that requires a partition filter (undefined: no requirement, or ingestion-time). */
function requiredField(info: TableInfo): string | undefined {
  if (info.resource['requirePartitionFilter'] !== true) return undefined;
  const tp = info.resource['timePartitioning'] as { field?: string } | undefined;
  const rp = info.resource['rangePartitioning'] as { field?: string } | undefined;
  return tp?.field ?? rp?.field;
}

function noFilter(t: TableId, field: string): QueryError {
  return new QueryError(`Cannot query over table '${t.projectId}.${t.datasetId}.${t.tableId}' without a filter over column(s) '${field}' that can be used for partition elimination`, 'invalidQuery');
}

/** A DML target: `targetColumns` are its columns as the conditions see them, in table order. */
export function checkTargetFilter(info: TableInfo, targetColumns: readonly { id: number }[], conditions: readonly Expr[]): void {
  const field = requiredField(info);
  if (!field) return;
  const idx = info.columns.findIndex((c) => c.name.toLowerCase() === field.toLowerCase());
  const id = targetColumns[idx]?.id;
  const refs = new Set<number>();
  referenced(conditions, refs);
  if (id === undefined || !refs.has(id)) throw noFilter(info.id, field);
}

export function checkPartitionFilters(s: Session, plan: Rel): void {
  const lineage = new Lineage();
  const predicateCols = new Set<number>();
  const scans: Extract<Rel, { kind: 'scan' }>[] = [];
  const cteOutputs = new Map<number, readonly { id: number }[]>();
  const cteRefs: Extract<Rel, { kind: 'cte_ref' }>[] = [];
  const seen = new Set<object>();
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    if (!isNode(v) || seen.has(v)) return;
    seen.add(v);
    const r = v as unknown as Rel;
    switch (r.kind) {
      case 'scan':
        scans.push(r);
        break;
      case 'filter':
        referenced(r.predicate, predicateCols);
        break;
      case 'join':
        if (r.condition) referenced(r.condition, predicateCols);
        break;
      case 'project':
        r.exprs.forEach((e: Expr, i) => {
          if (e.kind === 'column') lineage.join(r.columns[i]!.id, e.columnId);
        });
        break;
      case 'aggregate':
        for (const g of r.groupBy) if (g.expr.kind === 'column') lineage.join(g.column.id, g.expr.columnId);
        break;
      case 'setop':
        for (const input of r.inputs) input.columns.forEach((c, i) => r.columns[i] && lineage.join(r.columns[i]!.id, c.id));
        break;
      case 'with':
        for (const c of r.ctes) cteOutputs.set(c.id, c.plan.columns);
        break;
      case 'recursive_cte':
        cteOutputs.set(r.cteId, r.base.columns);
        break;
      case 'cte_ref':
        cteRefs.push(r);
        break;
      default:
        break;
    }
    for (const x of Object.values(v)) if (typeof x === 'object') visit(x);
  };
  visit(plan);
  for (const ref of cteRefs) {
    ref.columns.forEach((c, i) => {
      const own = ref.cteColumns[i];
      if (own) lineage.join(c.id, own.id);
      const out = cteOutputs.get(ref.cteId)?.[i];
      if (out) lineage.join(c.id, out.id);
    });
  }
  const filtered = new Set([...predicateCols].map((id) => lineage.find(id)));
  for (const scan of scans) {
    const info = s.ctx.catalog.getTable(scan.table);
    const field = info ? requiredField(info) : undefined;
    if (!info || !field) continue; // ingestion-time partitioning: its pseudo-columns are not modelled
    const idx = info.columns.findIndex((c) => c.name.toLowerCase() === field.toLowerCase());
    const pos = scan.tableColumns.indexOf(idx);
    const col = pos >= 0 ? scan.columns[pos] : undefined;
    if (col && filtered.has(lineage.find(col.id))) continue;
    throw noFilter(scan.table, field);
  }
}
