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
// of the statement references the partitioning column (in every branch of an
// OR: one branch without it keeps every partition), directly or through
// the pass-through columns (or casts) of projections, CTEs, set operations
// and views. An ingestion-time partitioned table is filtered on its
// pseudo-columns _PARTITIONTIME or _PARTITIONDATE.
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

/**
 * Keys whose values never hold a plan, a predicate or a column reference:
 * types, resolved functions (kernels, accumulator factories), literal values,
 * output column lists. Skipping them keeps the walks to the plan's own nodes.
 */
const OPAQUE = new Set(['type', 'fn', 'aggregate', 'value', 'columns', 'cteColumns', 'table', 'tableColumns']);

/** Column ids referenced anywhere inside an expression (subqueries included). */
function referenced(e: unknown, out: Set<number>): void {
  if (Array.isArray(e)) {
    for (const x of e) referenced(x, out);
    return;
  }
  if (!isNode(e)) return;
  if (e['kind'] === 'column' && typeof e['columnId'] === 'number') out.add(e['columnId']);
  for (const k in e) {
    if (OPAQUE.has(k)) continue;
    const v = e[k];
    if (typeof v === 'object' && v !== null) referenced(v, out);
  }
}

/**
 * The columns a predicate filters on: those it references, except that an OR filters only on the columns each of its
 * branches filters on (a branch that does not constrain the partitioning column keeps every partition, so
 * `d = x OR a = 1` is no partition filter while `d = x OR d = y` is).
 */
function filteredBy(e: unknown, out: Set<number>): void {
  if (Array.isArray(e)) {
    for (const x of e) filteredBy(x, out);
    return;
  }
  if (isNode(e) && e['kind'] === 'logical' && (e['op'] === 'and' || e['op'] === 'or')) {
    const args = e['args'] as readonly unknown[];
    if (e['op'] === 'and') return filteredBy(args, out);
    let common: Set<number> | undefined;
    for (const a of args) {
      const cols = new Set<number>();
      filteredBy(a, cols);
      common = common ? new Set([...common].filter((c) => cols.has(c))) : cols;
    }
    for (const c of common ?? []) out.add(c);
    return;
  }
  referenced(e, out);
}

/** The pseudo-column an ingestion-time partitioned table is partitioned by (stored after its columns; _PARTITIONDATE is its date). */
const PARTITION_TIME = '_PARTITIONTIME';

/** The partitioning column of a table that requires a partition filter (undefined: no requirement); _PARTITIONTIME for ingestion-time partitioning. */
function requiredField(info: TableInfo): string | undefined {
  // One read: the catalog builds the presented resource on each access.
  const r = info.resource;
  if (r['requirePartitionFilter'] !== true) return undefined;
  if (info.partitionUnit) return PARTITION_TIME;
  const tp = r['timePartitioning'] as { field?: string } | undefined;
  const rp = r['rangePartitioning'] as { field?: string } | undefined;
  return tp?.field ?? rp?.field;
}

function noFilter(t: TableId, field: string): QueryError {
  // An ingestion-time partitioned table names its pseudo-columns, as the service does.
  const cols = field === PARTITION_TIME ? "'_PARTITION_LOAD_TIME', '_PARTITIONDATE', '_PARTITIONTIME'" : `'${field}'`;
  return new QueryError(`Cannot query over table '${t.projectId}.${t.datasetId}.${t.tableId}' without a filter over column(s) ${cols} that can be used for partition elimination`, 'invalidQuery');
}

/**
 * A DML target: `targetColumns` are its columns as the conditions see them,
 * in table order (for an ingestion-time partitioned table _PARTITIONTIME
 * last, and `date` its _PARTITIONDATE).
 */
export function checkTargetFilter(info: TableInfo, targetColumns: readonly { id: number }[], conditions: readonly Expr[], date?: { id: number }): void {
  const field = requiredField(info);
  if (!field) return;
  const idx = info.columns.findIndex((c) => c.name.toLowerCase() === field.toLowerCase());
  const id = targetColumns[idx]?.id;
  const refs = new Set<number>();
  filteredBy(conditions, refs);
  if ((id === undefined || !refs.has(id)) && !(date && refs.has(date.id))) throw noFilter(info.id, field);
}

type ScanNode = Extract<Rel, { kind: 'scan' }>;

/** Every scan of the plan (subqueries, CTEs and views included) and the nodes that carry predicates or pass columns through. */
function collect(plan: Rel): { scans: ScanNode[]; others: Rel[] } {
  const scans: ScanNode[] = [];
  const others: Rel[] = [];
  const seen = new Set<object>();
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    if (!isNode(v) || seen.has(v)) return;
    seen.add(v);
    const kind = v['kind'];
    if (kind === 'scan') scans.push(v as unknown as ScanNode);
    else if (kind === 'filter' || kind === 'join' || kind === 'project' || kind === 'aggregate' || kind === 'setop' || kind === 'with' || kind === 'recursive_cte' || kind === 'cte_ref') others.push(v as unknown as Rel);
    for (const k in v) {
      if (OPAQUE.has(k)) continue;
      const x = v[k];
      if (typeof x === 'object' && x !== null) visit(x);
    }
  };
  visit(plan);
  return { scans, others };
}

export function checkPartitionFilters(s: Session, plan: Rel): void {
  const { scans, others } = collect(plan);
  // Most statements read no table that requires a partition filter: nothing more to do.
  const required: { scan: ScanNode; info: TableInfo; field: string }[] = [];
  for (const scan of scans) {
    const info = s.ctx.catalog.getTable(scan.table);
    const field = info ? requiredField(info) : undefined;
    if (info && field) required.push({ scan, info, field });
  }
  if (required.length === 0) return;
  const lineage = new Lineage();
  const predicateCols = new Set<number>();
  const cteOutputs = new Map<number, readonly { id: number }[]>();
  const cteRefs: Extract<Rel, { kind: 'cte_ref' }>[] = [];
  for (const r of others) {
    switch (r.kind) {
      case 'filter':
        filteredBy(r.predicate, predicateCols);
        break;
      case 'join':
        if (r.condition) filteredBy(r.condition, predicateCols);
        break;
      case 'project':
        r.exprs.forEach((e: Expr, i) => {
          if (e.kind === 'column') lineage.join(r.columns[i]!.id, e.columnId);
          // A cast of a column (_PARTITIONDATE, the date of _PARTITIONTIME) filters as the column does.
          else if (e.kind === 'cast' && e.arg.kind === 'column') lineage.join(r.columns[i]!.id, e.arg.columnId);
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
  }
  for (const ref of cteRefs) {
    ref.columns.forEach((c, i) => {
      const own = ref.cteColumns[i];
      if (own) lineage.join(c.id, own.id);
      const out = cteOutputs.get(ref.cteId)?.[i];
      if (out) lineage.join(c.id, out.id);
    });
  }
  const filtered = new Set([...predicateCols].map((id) => lineage.find(id)));
  for (const { scan, info, field } of required) {
    // An ingestion-time partitioned table's _PARTITIONTIME is scanned as the column after its own.
    const idx = field === PARTITION_TIME && info.partitionUnit ? info.columns.length : info.columns.findIndex((c) => c.name.toLowerCase() === field.toLowerCase());
    const pos = scan.tableColumns.indexOf(idx);
    const col = pos >= 0 ? scan.columns[pos] : undefined;
    if (col && filtered.has(lineage.find(col.id))) continue;
    throw noFilter(scan.table, field);
  }
}
