// The documented limits of a materialized view's definition and options that CREATE / ALTER MATERIALIZED VIEW
// enforce (materialized-views-intro.md, Limitations; materialized-views-create.md, Partitioned materialized views,
// Cluster materialized views, non-incremental materialized views).
import type * as A from '../../grammar/ast.js';
import { someNode } from '../../grammar/ast-walk.js';
import { sqlError } from '../analyzer/errors.js';
import { visitExpr } from '../analyzer/rewrite.js';
import type { Expr, Rel } from '../analyzer/resolved.js';
import type { QueryCatalog, TableId } from '../storage/api.js';
import type { Interval } from '../types/values.js';
import type { Session } from './session.js';

const MINUTE_US = 60_000_000;
const DAY_US = 24 * 60 * MINUTE_US;

/** What CREATE MATERIALIZED VIEW checks before the view's options and partitioning are made. */
export function checkMvDefinition(st: A.CreateViewStmt): void {
  // data-definition-language.md's CREATE MATERIALIZED VIEW has no column list, and materialized-views-intro.md's
  // Limitations: descriptions go on the materialized view, not on its columns.
  if (st.columns) throw sqlError('CREATE MATERIALIZED VIEW does not take a column list: the query names the columns, and a materialized view has no column descriptions', st.loc);
}

/**
 * materialized-views-intro.md and views-intro.md, Limitations: neither kind of view defines parameterized data types
 * (STRING(n)); they are for base table columns and script variables.
 */
export function refuseParameterizedTypes(st: A.CreateViewStmt): void {
  let typed: A.ScalarTypeNode | undefined;
  someNode(st.query, (n) => {
    if (n.kind === 'ScalarType' && (n as A.ScalarTypeNode).params.length > 0) typed = n as A.ScalarTypeNode;
    return typed !== undefined;
  });
  if (typed) throw sqlError(`${st.materialized ? 'Materialized views' : 'Views'} cannot define parameterized data types such as ${typed.name}(${typed.params.join(', ')}); parameterized types are for base table columns and script variables`, typed.loc);
}

/** The tables a plan reads (its scans, subquery plans included). */
function scannedTables(plan: Rel): TableId[] {
  const out: TableId[] = [];
  someNode(plan, (n) => {
    if (n.kind === 'scan') out.push((n as unknown as { table: TableId }).table);
    return false;
  });
  return out;
}

type Partitioning = { timePartitioning?: { type?: string; field?: string }; rangePartitioning?: { field?: string; range?: Record<string, unknown> } };

function spec(r: Partitioning): string | undefined {
  if (r.timePartitioning) return `time unit ${(r.timePartitioning.type ?? 'DAY').toUpperCase()}`;
  if (r.rangePartitioning) {
    const g = r.rangePartitioning.range ?? {};
    return `integer range (${String(g.start)}, ${String(g.end)}, ${String(g.interval)})`;
  }
  return undefined;
}

/**
 * materialized-views-create.md, Partitioned materialized views: a materialized view is partitioned only over a
 * partitioned base table, with the same time granularity or exactly the same integer range.
 */
export function checkMvPartitioning(catalog: QueryCatalog, plan: Rel, mv: Partitioning, names: readonly string[], loc: A.Loc): void {
  const want = spec(mv);
  if (!want) return;
  const bases = scannedTables(plan).map((id) => catalog.getTable(id)).filter((t) => t !== undefined);
  const partitioned = bases.find((t) => spec(t.resource as Partitioning) !== undefined);
  if (!partitioned) throw sqlError('Cannot partition a materialized view over a base table that is not partitioned', loc);
  const base = spec(partitioned.resource as Partitioning)!;
  if (base !== want) throw sqlError(`A materialized view must be partitioned as its base table ${partitioned.id.datasetId}.${partitioned.id.tableId} is (${base}), not by ${want}`, loc);
  checkMvPartitionColumn(catalog, plan, mv, names, loc);
}

/** Time units from finest to coarsest, as *_TRUNC names them (WEEK(<day>) is a WEEK). */
const UNITS = ['MICROSECOND', 'MILLISECOND', 'SECOND', 'MINUTE', 'HOUR', 'DAY', 'WEEK', 'ISOWEEK', 'MONTH', 'QUARTER', 'YEAR', 'ISOYEAR'];
const unitRank = (u: string): number => UNITS.indexOf(u.toUpperCase().replace(/\(.*$/, ''));
const TRUNCS = new Set(['TIMESTAMP_TRUNC', 'DATE_TRUNC', 'DATETIME_TRUNC']);

/**
 * materialized-views-create.md, Partitioned materialized views: the view is partitioned on its base table's
 * partitioning column (an ingestion-time base's _PARTITIONTIME / _PARTITIONDATE), taken as it is, converted, or
 * truncated by TIMESTAMP_TRUNC / DATE_TRUNC / DATETIME_TRUNC to a unit no coarser than the base's partitions (Example
 * 3). The view column is traced through the plan's projections and GROUP BY keys to a table column; a column whose
 * origin the trace cannot follow (a set operation's) is left to the granularity check above.
 */
function checkMvPartitionColumn(catalog: QueryCatalog, plan: Rel, mv: Partitioning, names: readonly string[], loc: A.Loc): void {
  const field = mv.timePartitioning?.field ?? mv.rangePartitioning?.field;
  const i = field === undefined ? -1 : names.findIndex((n) => n.toLowerCase() === field.toLowerCase());
  if (i < 0) return;
  const defs = new Map<number, Expr | 'aggregate' | { table: TableId; column: number }>();
  someNode(plan, (n) => {
    const r = n as unknown as Rel;
    if (r.kind === 'project') r.columns.forEach((c, k) => defs.set(c.id, r.exprs[k]!));
    else if (r.kind === 'aggregate') {
      for (const g of r.groupBy) defs.set(g.column.id, g.expr);
      for (const a of r.aggregates) defs.set(a.column.id, 'aggregate');
    } else if (r.kind === 'scan') r.columns.forEach((c, k) => defs.set(c.id, { table: r.table, column: r.tableColumns[k]! }));
    return false;
  });
  const refuse = (why: string): never => {
    throw sqlError(`The partitioning column ${names[i]} of a materialized view must be its base table's partitioning column, as it is or truncated by TIMESTAMP_TRUNC, DATE_TRUNC or DATETIME_TRUNC to a unit no coarser than the base table's partitions; ${why}`, loc);
  };
  /** Follows column `id` to a table column; `finest`: the coarsest truncation met on the way (a unit rank). */
  const follow = (id: number, coarsest: number): void => {
    const d = defs.get(id);
    if (d === undefined) return;
    if (d === 'aggregate') return refuse('it is an aggregate');
    if ('table' in d) return atTable(d.table, d.column, coarsest);
    followExpr(d, coarsest);
  };
  const followExpr = (e: Expr, coarsest: number): void => {
    if (e.kind === 'column') return follow(e.columnId, coarsest);
    if (e.kind === 'cast') return followExpr(e.arg, Math.max(coarsest, e.type.kind === 'DATE' ? unitRank('DAY') : -1));
    if (e.kind === 'call' && TRUNCS.has(e.name.toUpperCase()) && e.args[0]) {
      const part = e.args[1];
      const unit = part?.kind === 'literal' && typeof part.value === 'string' ? unitRank(part.value) : -1;
      return followExpr(e.args[0], Math.max(coarsest, unit));
    }
    if (e.kind === 'call' && ['DATE', 'TIMESTAMP', 'DATETIME'].includes(e.name.toUpperCase()) && e.args.length === 1) {
      return followExpr(e.args[0]!, Math.max(coarsest, e.type.kind === 'DATE' ? unitRank('DAY') : -1));
    }
    refuse(`it is computed by ${e.kind === 'call' ? e.name.toUpperCase() : 'an expression'}`);
  };
  const atTable = (id: TableId, column: number, coarsest: number): void => {
    const t = catalog.getTable(id);
    if (!t) return;
    const r = t.resource as Partitioning;
    const own = r.timePartitioning?.field ?? r.rangePartitioning?.field;
    // An ingestion-time partitioned table's partition time is read after its columns (analyzer/names.ts).
    const isPartitionColumn = own === undefined ? r.timePartitioning !== undefined && column === t.columns.length : t.columns[column]?.name.toLowerCase() === own.toLowerCase();
    if (!isPartitionColumn) refuse(`it comes from ${t.columns[column]?.name ?? 'a column'} of ${id.datasetId}.${id.tableId}, which is not partitioned by it`);
    const baseUnit = unitRank(r.timePartitioning?.type ?? 'DAY');
    if (r.timePartitioning && coarsest > baseUnit) refuse(`its truncation is coarser than the ${r.timePartitioning.type ?? 'DAY'} partitions of ${id.datasetId}.${id.tableId}`);
  };
  follow(plan.columns[i]!.id, -1);
}

/** materialized-views-create.md, Cluster materialized views: aggregate output columns cannot be clustering columns. */
export function checkMvClustering(plan: Rel, names: readonly string[], clusterBy: readonly A.Expr[] | undefined): void {
  if (!clusterBy?.length) return;
  const aggregated = new Set<number>();
  someNode(plan, (n) => {
    if (n.kind === 'aggregate') for (const a of (n as unknown as { aggregates: { column: { id: number } }[] }).aggregates) aggregated.add(a.column.id);
    return false;
  });
  const fromAggregate = (i: number): boolean => {
    const col = plan.columns[i]!;
    if (aggregated.has(col.id)) return true;
    if (plan.kind !== 'project') return false;
    let hit = false;
    visitExpr(plan.exprs[i]!, (e) => {
      if (e.kind === 'column' && aggregated.has(e.columnId)) hit = true;
    });
    return hit;
  };
  for (const e of clusterBy) {
    const name = e.kind === 'PathExpr' && e.parts.length === 1 ? e.parts[0]!.toLowerCase() : undefined;
    const i = name === undefined ? -1 : names.findIndex((n) => n.toLowerCase() === name);
    if (i >= 0 && fromAggregate(i)) throw sqlError(`Aggregate output column ${names[i]} cannot be a clustering column of a materialized view`, e.loc);
  }
}

/** collation-concepts.md, Limitations: an aggregate function of a materialized view cannot sort by a collated key. */
export function checkMvCollatedSortKeys(plan: Rel, loc: A.Loc): void {
  someNode(plan, (n) => {
    if (n.kind !== 'aggregate') return false;
    for (const a of (n as unknown as { aggregates: { name: string; orderBy: { collation?: string }[] }[] }).aggregates) {
      if (a.orderBy.some((k) => k.collation)) throw sqlError(`Sort key with collation in aggregate function ${a.name.toLowerCase()} isn't supported in materialized view`, loc);
    }
    return false;
  });
}

/**
 * A materialized view's OPTIONS (CREATE and ALTER): max_staleness from 30 minutes to 3 days inclusive
 * (materialized-views-intro.md, Limitations); allow_non_incremental_definition comes with max_staleness and is never
 * changed after creation (materialized-views-create.md, non-incremental materialized views).
 */
export async function checkMvOptions(s: Session, options: readonly A.OptionEntry[] | undefined, alter: boolean, hasStaleness: boolean): Promise<void> {
  let staleness = hasStaleness;
  let nonIncremental: A.OptionEntry | undefined;
  for (const o of options ?? []) {
    const name = o.name.toLowerCase();
    if (name === 'allow_non_incremental_definition') nonIncremental = o;
    if (name !== 'max_staleness') continue;
    const v = (await s.evalScalar(o.value)).value as Interval | null;
    staleness = v !== null;
    if (v === null) continue;
    const us = (v.months * 30 + v.days) * DAY_US + Number(v.micros);
    if (us < 30 * MINUTE_US || us > 3 * DAY_US) throw sqlError('The max_staleness of a materialized view must be between 30 minutes and 3 days, inclusive', o.value.loc);
  }
  if (nonIncremental && alter) throw sqlError('allow_non_incremental_definition cannot be changed after the materialized view is created', nonIncremental.value.loc);
  if (nonIncremental && !staleness && (await s.evalScalar(nonIncremental.value)).value === true) {
    throw sqlError('allow_non_incremental_definition requires the max_staleness option', nonIncremental.value.loc);
  }
}
