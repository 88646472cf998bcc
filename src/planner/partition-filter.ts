// require_partition_filter: a query reading such a table must filter on its
// partitioning column, else the real service refuses it with "Cannot query
// over table 'p.d.t' without a filter over column(s) 'c' that can be used for
// partition elimination". Checked on the analyzed plan of SELECT, CTAS and
// INSERT ... SELECT queries, and on a MERGE target (its ON or WHEN conditions)
// and on UPDATE / DELETE targets (their WHERE).
//
// querying-partitioned-tables.md (Require a partition filter in queries): at
// least one predicate must reference only a partitioning column: a conjunct of
// a WHERE / ON / HAVING whose every column is the partitioning column, reached
// through the pass-through columns (or casts) of projections, CTEs, set
// operations and views. `d = x AND f = y` counts, `d = x OR f = y` and
// `d = e` do not; `d = x OR d = y` does. An ingestion-time partitioned table is
// filtered on its pseudo-columns _PARTITIONTIME or _PARTITIONDATE.
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
 * The conjuncts of a predicate (AND split; an OR is one conjunct), each as the set of columns it references: a
 * conjunct filters on the partitioning column when that is the only column it references.
 */
function conjuncts(e: unknown, out: Set<number>[]): void {
  if (Array.isArray(e)) {
    for (const x of e) conjuncts(x, out);
    return;
  }
  if (isNode(e) && e['kind'] === 'logical' && e['op'] === 'and') return conjuncts(e['args'], out);
  const cols = new Set<number>();
  referenced(e, cols);
  if (cols.size > 0) out.push(cols);
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

/**
 * The columns a query must filter on: the partitioning column of a table that requires a partition filter, or the
 * hive partition keys of an external table made with require_hive_partition_filter (hive-partitioned-queries.md,
 * Predicate filters on partition keys: one predicate that references only partition keys, any of them).
 */
function requiredFields(info: TableInfo): string[] | undefined {
  if (info.kind === 'EXTERNAL') {
    const hive = (info.resource['externalDataConfiguration'] as { hivePartitioningOptions?: { requirePartitionFilter?: unknown; fields?: unknown } } | undefined)?.hivePartitioningOptions;
    return hive?.requirePartitionFilter === true && Array.isArray(hive.fields) && hive.fields.length ? (hive.fields as string[]) : undefined;
  }
  const field = requiredField(info);
  return field ? [field] : undefined;
}

function noFilter(t: TableId, fields: readonly string[]): QueryError {
  // An ingestion-time partitioned table names its pseudo-columns, as the service does.
  const cols = fields[0] === PARTITION_TIME ? "'_PARTITION_LOAD_TIME', '_PARTITIONDATE', '_PARTITIONTIME'" : fields.map((f) => `'${f}'`).join(', ');
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
  const atoms: Set<number>[] = [];
  conjuncts(conditions, atoms);
  const own = (c: number): boolean => c === id || c === date?.id;
  if (!atoms.some((a) => [...a].every(own))) throw noFilter(info.id, [field]);
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
  const required: { scan: ScanNode; info: TableInfo; fields: string[] }[] = [];
  for (const scan of scans) {
    const info = s.ctx.catalog.getTable(scan.table);
    const fields = info ? requiredFields(info) : undefined;
    if (info && fields) required.push({ scan, info, fields });
  }
  if (required.length === 0) return;
  const lineage = new Lineage();
  const atoms: Set<number>[] = [];
  const cteOutputs = new Map<number, readonly { id: number }[]>();
  const cteRefs: Extract<Rel, { kind: 'cte_ref' }>[] = [];
  for (const r of others) {
    switch (r.kind) {
      case 'filter':
        conjuncts(r.predicate, atoms);
        break;
      case 'join':
        if (r.condition) conjuncts(r.condition, atoms);
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
  // Each conjunct as the lineage classes it references.
  const atomRoots = atoms.map((a) => new Set([...a].map((id) => lineage.find(id))));
  for (const { scan, info, fields } of required) {
    // An ingestion-time partitioned table's _PARTITIONTIME is scanned as the column after its own.
    const roots = new Set<number>();
    for (const field of fields) {
      const idx = field === PARTITION_TIME && info.partitionUnit ? info.columns.length : info.columns.findIndex((c) => c.name.toLowerCase() === field.toLowerCase());
      const pos = scan.tableColumns.indexOf(idx);
      const col = pos >= 0 ? scan.columns[pos] : undefined;
      if (col) roots.add(lineage.find(col.id));
    }
    // Some conjunct that references only the partitioning columns.
    if (atomRoots.some((a) => a.size > 0 && [...a].every((r) => roots.has(r)))) continue;
    throw noFilter(scan.table, fields);
  }
}

/**
 * A query's result may not name a column _PARTITIONTIME, _PARTITIONDATE or _FILE_NAME: the pseudo-columns are
 * selected under an alias (querying-partitioned-tables.md, Query an ingestion-time partitioned table;
 * query-cloud-storage-data.md, _FILE_NAME), as no table's field may start with _PARTITION or _FILE_ (schemas.md).
 */
export function checkResultNames(names: readonly string[]): void {
  const bad = names.find((n) => /^(_PARTITION(TIME|DATE)|_FILE_NAME)$/i.test(n));
  if (bad !== undefined) throw new QueryError(`Invalid field name "${bad}". Field names are not allowed to start with the (case-insensitive) prefixes _PARTITION, _TABLE_, _FILE_, _ROW_TIMESTAMP, __ROOT__ and _COLIDENTIFIER; select the pseudo-column under an alias`, 'invalidQuery');
}
