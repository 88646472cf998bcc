// Table names (spec §1.6.1-1.6.2): backtick paths split on dots; bare names
// against the default dataset; views expanded by analyzing their SQL with
// the view's dataset as default; CTEs; wildcard tables; row access policies.
// INFORMATION_SCHEMA views and the __TABLES__ meta-tables: information-schema.ts.
import type * as A from '../../grammar/ast.js';
import { ROW_POSITION, type TableId, type TableInfo } from '../storage/api.js';
import { callScalar } from './calls.js';
import { T, typeToSql, type SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { asOfMicros } from './as-of.js';
import type { Analyzer } from './context.js';
import { notFound, sqlError } from './errors.js';
import type { QueryError } from '../types/errors.js';
import { coerce, literal } from './coercion.js';
import { resolveExpr } from './expr.js';
import { resolveQuery } from './query.js';
import { pipeInputs } from './pipe.js';
import type { Rel, ScanRel } from './resolved.js';
import type { SampleTarget } from './sample.js';
import { Scope } from './scope.js';
import { informationSchemaRef, tablesMetaRef } from './information-schema.js';
import { policiesOf, policyApplies } from './row-access.js';
import { noteThresholdView } from './privacy.js';

export interface TableRefOut {
  readonly rel: Rel;
  readonly names: readonly string[];
  readonly alias: string;
  readonly isValueTable: boolean;
  /** The last columns, this many, are pseudo-columns (_TABLE_SUFFIX, _PARTITIONTIME, _PARTITIONDATE) that `*` skips. */
  readonly hidden?: number;
  /** What the name is, for TABLESAMPLE (only a table can be sampled). */
  readonly target: SampleTarget;
}

/** Splits raw path parts (a quoted part may hold dots) into identifiers. */
export function splitPath(path: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of path) for (const s of p.split('.')) out.push(s);
  return out;
}

/**
 * A dataset.table name in the body of a view or routine made in another project than the one running its DDL
 * (data-definition-language.md, Default project in view body; user-defined-functions.md, Default project in SQL
 * expressions): the body has no default project.
 */
export function projectUnqualified(parts: readonly string[], loc?: A.Loc): QueryError {
  return sqlError(`Table "${parts.join('.')}" must be qualified with a project (e.g. project.dataset.table): the body is made in another project than the one running the statement`, loc);
}

/** A bare table name where there is no default dataset (a view or persistent routine body, a request without one). */
export function datasetUnqualified(name: string, loc?: A.Loc): QueryError {
  return sqlError(`Table "${name}" must be qualified with a dataset (e.g. dataset.table).`, loc);
}

/**
 * The table name of a `_SESSION.name` path: multi-statement-queries.md (Qualify temporary tables with _SESSION) makes
 * `_SESSION` name the query's or session's temporary tables, and only them.
 */
export function sessionTableName(parts: readonly string[]): string | undefined {
  return parts.length === 2 && parts[0]!.toUpperCase() === '_SESSION' ? parts[1]! : undefined;
}

/**
 * project.dataset.table | dataset.table | table (default dataset / temp tables). `skipTemp`: CREATE TABLE without
 * TEMP names a dataset table even where a temporary table has the name.
 */
export function tableIdOf(an: Analyzer, path: readonly string[], loc?: A.Loc, opts: { skipTemp?: boolean } = {}): TableId {
  const parts = splitPath(path);
  const session = sessionTableName(parts);
  if (session !== undefined) {
    // A missing temporary table is an error even when the default dataset has a table of the name.
    const temp = an.env.tempTables.get(session);
    if (!temp) throw notFound(`Not found: Table ${an.env.projectId}:_SESSION.${session} was not found in location ${locationOf(an)}`);
    return temp;
  }
  if (parts.length === 1) {
    const temp = opts.skipTemp ? undefined : (an.env.tempTables.get(parts[0]!) ?? an.env.externalTables?.get(parts[0]!));
    if (temp) return temp;
    const d = an.env.defaultDataset;
    if (!d) throw datasetUnqualified(parts[0]!);
    return storedSpelling(an, { projectId: d.projectId, datasetId: d.datasetId, tableId: parts[0]! });
  }
  if (parts.length === 2) {
    if (an.env.noDefaultProject) throw projectUnqualified(parts, loc);
    return storedSpelling(an, { projectId: an.env.projectId, datasetId: parts[0]!, tableId: parts[1]! });
  }
  if (parts.length === 3) return storedSpelling(an, { projectId: parts[0]!, datasetId: parts[1]!, tableId: parts[2]! });
  throw sqlError(`Invalid table name: ${path.join('.')}`, loc);
}

/**
 * A dataset made with is_case_insensitive = TRUE answers to its own name and its tables' names in any case
 * (CREATE SCHEMA options), so every statement (reads, DML, DDL) works on the names as stored. An exact match wins;
 * a name no object has yet (CREATE) keeps the spelling given.
 */
function storedSpelling(an: Analyzer, id: TableId): TableId {
  const cat = an.env.catalog;
  if (cat.getTable(id)) return id;
  let ds = cat.getDataset(id.projectId, id.datasetId);
  let datasetId = id.datasetId;
  if (!ds) {
    const l = id.datasetId.toLowerCase();
    const match = cat.listDatasets(id.projectId).find((d) => d.toLowerCase() === l && cat.getDataset(id.projectId, d)?.resource.isCaseInsensitive === true);
    if (!match) return id;
    datasetId = match;
    ds = cat.getDataset(id.projectId, match);
  }
  if (ds?.resource.isCaseInsensitive !== true) return id;
  const l = id.tableId.toLowerCase();
  const table = cat.listTables(id.projectId, datasetId).find((t) => t.id.tableId.toLowerCase() === l);
  return { projectId: id.projectId, datasetId, tableId: table?.id.tableId ?? id.tableId };
}

export function locationOf(an: Analyzer): string {
  return an.env.location?.value ?? 'US';
}

export function tableNotFound(an: Analyzer, id: TableId): Error {
  if (!an.env.catalog.getDataset(id.projectId, id.datasetId)) {
    return notFound(`Not found: Dataset ${id.projectId}:${id.datasetId} was not found in location ${locationOf(an)}`);
  }
  return notFound(`Not found: Table ${id.projectId}:${id.datasetId}.${id.tableId} was not found in location ${locationOf(an)}`);
}

export function resolveTableRef(an: Analyzer, item: A.TableRef, outer: Scope | undefined): TableRefOut {
  const pipe = pipeInputs.get(item);
  if (pipe) return { rel: pipe.rel, names: pipe.names, alias: item.alias ?? '', isValueTable: pipe.isValueTable, target: { kind: 'not a table', what: 'a query result' } };

  if (item.path.length === 1) {
    const cte = an.findCte(item.path[0]!);
    if (cte) {
      const columns = cte.columns.map((c) => an.newColumn(c.name, c.type));
      return {
        rel: { kind: 'cte_ref', cteId: cte.id, cteColumns: cte.columns, columns },
        names: cte.columns.map((c) => c.name),
        alias: item.alias ?? item.path[0]!,
        isValueTable: cte.isValueTable,
        target: { kind: 'not a table', what: `WITH query ${item.path[0]!}` },
      };
    }
  }
  const parts = splitPath(item.path);
  const isIdx = parts.findIndex((p) => p.toUpperCase() === 'INFORMATION_SCHEMA');
  // export-statements.md: EXPORT DATA's query can't reference metatables (INFORMATION_SCHEMA views, system tables)
  // or wildcard tables.
  if (an.env.exportQuery) {
    const last = parts[parts.length - 1]!;
    const what = isIdx >= 0 ? 'INFORMATION_SCHEMA views' : last.endsWith('*') ? 'wildcard tables' : last === '__TABLES__' || last === '__TABLES_SUMMARY__' ? 'metatables' : undefined;
    if (what) throw sqlError(`EXPORT DATA cannot query ${what}: ${parts.join('.')}`, item.loc);
  }
  if (isIdx >= 0 && isIdx === parts.length - 2) return informationSchemaRef(an, parts.slice(0, isIdx), parts[isIdx + 1]!, item);
  const id = tableIdOf(an, item.path, item.loc);
  // A materialized view reads neither wildcard tables nor other materialized views (materialized-views-intro.md, Limitations).
  if (an.env.materializedViewQuery && id.tableId.endsWith('*')) throw sqlError(`Materialized views cannot query wildcard tables: ${id.tableId}`, item.loc);
  if (id.tableId.endsWith('*')) return wildcardTable(an, id, item);
  const info = an.getTable(id);
  if (!info && (id.tableId === '__TABLES__' || id.tableId === '__TABLES_SUMMARY__')) return tablesMetaRef(an, id, item.alias ?? id.tableId);
  if (!info) throw tableNotFound(an, id);
  const alias = item.alias ?? parts[parts.length - 1]!;
  const key = `${info.id.projectId}.${info.id.datasetId}.${info.id.tableId}`;
  if (info.kind === 'VIEW' && info.viewQuery !== undefined) {
    noteThresholdView(an, info, alias, item.loc);
    return expandView(an, info, alias, item.loc);
  }
  // A materialized view answers with its base tables' current data (the real service merges the
  // stored part with the base tables' changes): expanded like a view, never read stale.
  if (info.kind === 'MATERIALIZED_VIEW' && an.env.materializedViewQuery) {
    throw sqlError(`Materialized views cannot be nested over other materialized views: ${info.id.datasetId}.${info.id.tableId}`, item.loc);
  }
  // materialized-views-intro.md, Limitations: nor external tables, nor snapshots.
  if (an.env.materializedViewQuery && (info.kind === 'EXTERNAL' || info.resource.type === 'SNAPSHOT')) {
    throw sqlError(`Materialized views cannot query ${info.kind === 'EXTERNAL' ? 'external tables' : 'table snapshots'}: ${info.id.datasetId}.${info.id.tableId}`, item.loc);
  }
  if (info.kind === 'MATERIALIZED_VIEW' && info.viewQuery && !item.systemTime) return expandView(an, info, alias, item.loc);
  let asOfMs: number | undefined;
  // Time travel reads BigQuery storage's history; an external table has none (its rows are its files').
  if (item.systemTime && info.kind === 'EXTERNAL') {
    throw sqlError(`FOR SYSTEM_TIME AS OF is not supported for external table ${info.id.projectId}:${info.id.datasetId}.${info.id.tableId}`, item.systemTime.loc);
  }
  // time-travel.md, Limitations: temporary (multi-statement and session) tables keep no history.
  if (item.systemTime && [...an.env.tempTables.values()].some((t) => t.projectId === info.id.projectId && t.datasetId === info.id.datasetId && t.tableId === info.id.tableId)) {
    throw sqlError(`FOR SYSTEM_TIME AS OF is not supported for temporary table ${info.id.tableId}`, item.systemTime.loc);
  }
  if (item.systemTime) {
    // Fractions of a millisecond kept: commits are stamped to the microsecond (storage/commit-clock.ts).
    asOfMs = Number(asOfMicros(an, item.systemTime)) / 1000;
    an.env.onClock?.();
    const now = an.env.nowMs ?? Date.now();
    const fqn = `${info.id.projectId}:${info.id.datasetId}.${info.id.tableId}`;
    if (asOfMs < now - TIME_TRAVEL_MS) {
      throw sqlError(`Invalid snapshot time ${Math.floor(asOfMs)} for table ${fqn}. Cannot read before ${now - TIME_TRAVEL_MS}`, item.systemTime.loc);
    }
    if (asOfMs > now + 60_000) throw sqlError(`Invalid snapshot time ${Math.floor(asOfMs)} for table ${fqn}. Cannot read in the future`, item.systemTime.loc);
  }
  void outer;
  const columns = info.columns.map((c) => an.newColumn(c.name, c.type));
  const tableColumns = info.columns.map((_, i) => i);
  // An ingestion-time partitioned table's rows carry their partition time after its columns (storage/ingestion.ts).
  if (info.partitionUnit) {
    columns.push(an.newColumn('_PARTITIONTIME', T.TIMESTAMP));
    tableColumns.push(info.columns.length);
  }
  const scan: ScanRel = { kind: 'scan', table: info.id, tableColumns, ...(asOfMs !== undefined ? { asOfMs } : {}), columns };
  let rel: Rel = info.kind === 'EXTERNAL' ? withFileName(an, info, scan) : scan;
  const filtered = rowAccessFilter(an, info, rel);
  const target: SampleTarget = { kind: 'table', key, rowAccess: filtered !== rel };
  rel = filtered;
  const names = info.columns.map((c) => c.name);
  if (info.kind === 'EXTERNAL') return { rel, names: [...names, '_FILE_NAME'], alias, isValueTable: false, hidden: 1, target };
  if (!info.partitionUnit) return { rel, names, alias, isValueTable: false, target };
  // The pseudo-column _PARTITIONTIME, and for daily partitions _PARTITIONDATE (its UTC date, whatever @@time_zone says), which `*` does not show.
  if (info.partitionUnit !== 'DAY') return { rel, names: [...names, '_PARTITIONTIME'], alias, isValueTable: false, hidden: 1, target };
  const time = columns[columns.length - 1]!;
  const exprs = [...columns.map((c) => colRefOf(c)), { kind: 'cast', type: T.DATE, arg: colRefOf(time), safe: false, timeZone: literal(T.STRING, 'UTC') } as const];
  const out = [...columns.map((c) => an.newColumn(c.name, c.type)), an.newColumn('_PARTITIONDATE', T.DATE)];
  return { rel: { kind: 'project', input: rel, exprs, columns: out }, names: [...names, '_PARTITIONTIME', '_PARTITIONDATE'], alias, isValueTable: false, hidden: 2, target };
}

/**
 * An external table's pseudo-column _FILE_NAME (query-cloud-storage-data.md): the URI of the file each row came
 * from, which `*` does not show. The table's rows are its files' rows read in order when it was made; `fileRows`
 * (a hidden resource field) holds each file's URI and row count, so a row's position names its file.
 */
function withFileName(an: Analyzer, info: TableInfo, scan: ScanRel): Rel {
  const kept: unknown = info.resource['fileRows'];
  const files = Array.isArray(kept) ? kept.filter((e): e is [string, number] => Array.isArray(e) && typeof e[0] === 'string' && Number.isSafeInteger(e[1])) : [];
  const pos = an.newColumn('$pos', T.INT64);
  const positioned: Rel = { ...scan, tableColumns: [...scan.tableColumns, ROW_POSITION], columns: [...scan.columns, pos] };
  const whens: import('./resolved.js').Expr[] = [];
  const thens: import('./resolved.js').Expr[] = [];
  let end = 0;
  for (const [uri, rows] of files) {
    end += rows;
    whens.push(callScalar('$less', [colRefOf(pos), literal(T.INT64, BigInt(end))], undefined));
    thens.push(literal(T.STRING, uri));
  }
  const file: import('./resolved.js').Expr = whens.length ? { kind: 'conditional', type: T.STRING, op: 'case', whens, thens, else: literal(T.STRING, null) } : literal(T.STRING, null);
  const out = [...scan.columns.map((c) => an.newColumn(c.name, c.type)), an.newColumn('_FILE_NAME', T.STRING)];
  return { kind: 'project', input: positioned, exprs: [...scan.columns.map((c) => colRefOf(c)), file], columns: out };
}

/** The time-travel window: seven days. */
const TIME_TRAVEL_MS = 7 * 24 * 3600 * 1000;

/**
 * Row-access policies: when a table has any, a reader sees only the rows some
 * policy granted to them (or to everyone) admits; with none applicable (a policy without
 * grantees applies to no one), no rows.
 */
export function rowAccessFilter(an: Analyzer, info: TableInfo, scan: Rel): Rel {
  const policies = policiesOf(an.env.catalog, info.id);
  if (policies.length === 0) return scan;
  const user = an.env.sessionUser ?? '';
  const scope = new Scope();
  scope.addRangeVar({ name: info.id.tableId, lname: info.id.tableId.toLowerCase(), columns: scan.columns.map((c, i) => ({ ...c, name: info.columns[i]?.name ?? c.name })) });
  const preds: import('./resolved.js').Expr[] = [];
  for (const p of policies) {
    if (!policyApplies(p, user) || typeof p.filterPredicate !== 'string') continue;
    const stmt = an.env.parse(`SELECT ${p.filterPredicate}`).statements[0];
    const body = stmt?.kind === 'QueryStatement' ? stmt.query.body : undefined;
    const item = body?.kind === 'Select' ? body.items[0] : undefined;
    if (!item || item.kind !== 'SelectExpr') continue;
    preds.push(resolveExpr(an, item.expr, { scope, clause: 'row access policy' }));
  }
  const predicate: import('./resolved.js').Expr =
    preds.length === 0 ? literal(T.BOOL, false) : preds.length === 1 ? preds[0]! : { kind: 'logical', type: T.BOOL, op: 'or', args: preds };
  return { kind: 'filter', input: scan, predicate, columns: scan.columns };
}

/**
 * `dataset.prefix*`: UNION ALL of the matching tables (schema of the most
 * recently created one; missing columns read NULL) plus the pseudo-column
 * _TABLE_SUFFIX, which `SELECT *` does not show.
 */
function wildcardTable(an: Analyzer, id: TableId, item: A.TableRef): TableRefOut {
  const prefix = id.tableId.slice(0, -1);
  const tables = an.env.catalog
    .listTables(id.projectId, id.datasetId)
    .filter((t) => t.id.tableId.startsWith(prefix))
    .sort((a, b) => (a.id.tableId < b.id.tableId ? -1 : 1));
  if (tables.length === 0) throw tableNotFound(an, id);
  // Wildcard tables read built-in storage only: a match that is a view or an external table fails the query, whatever
  // filter on _TABLE_SUFFIX would leave it out (wildcard-tables limitations).
  const first = (kinds: readonly string[]) => tables.find((t) => kinds.includes(t.kind));
  const view = first(['VIEW', 'MATERIALIZED_VIEW']);
  if (view) throw sqlError(`Views cannot be queried through prefix. First view ${view.id.projectId}:${view.id.datasetId}.${view.id.tableId}.`, item.loc);
  const external = first(['EXTERNAL']);
  if (external) throw sqlError(`External tables cannot be queried through prefix. First external table ${external.id.projectId}:${external.id.datasetId}.${external.id.tableId}.`, item.loc);
  // data-definition-language.md, ALTER TABLE DROP COLUMN / RENAME COLUMN Details: a table with columns dropped or
  // renamed (and not renamed back) is not read as a wildcard table.
  const altered = tables.find((t) => {
    const h = t.resource.columnHistory as { dropped?: boolean; renamed?: Record<string, string> } | undefined;
    return h?.dropped === true || Object.keys(h?.renamed ?? {}).length > 0;
  });
  if (altered) throw sqlError(`Cannot query table ${altered.id.projectId}:${altered.id.datasetId}.${altered.id.tableId} through a wildcard: it has dropped or renamed columns`, item.loc);
  // row-level-security-intro.md, Limitations: wildcard queries are not supported over tables with row access policies.
  const guarded = tables.find((t) => policiesOf(an.env.catalog, t.id).length > 0);
  if (guarded) throw sqlError(`Wildcard tables are not supported over tables with row access policies. First such table ${guarded.id.projectId}:${guarded.id.datasetId}.${guarded.id.tableId}.`, item.loc);
  // querying-wildcard-tables.md, Limitations: no mix of partitioned and non-partitioned tables, nor of partitionings,
  // and identical clustering.
  const [head, ...rest] = tables;
  const mixedPart = rest.find((t) => partitioningOf(t) !== partitioningOf(head!));
  if (mixedPart) throw sqlError(`Wildcard tables cannot mix tables of different partitioning: ${head!.id.tableId} and ${mixedPart.id.tableId}`, item.loc);
  const mixedClust = rest.find((t) => clusteringOf(t) !== clusteringOf(head!));
  if (mixedClust) throw sqlError(`Wildcard tables cannot mix tables of different clustering: ${head!.id.tableId} and ${mixedClust.id.tableId}`, item.loc);
  const newest = tables.reduce((a, b) => (Number(b.resource.creationTime ?? 0) >= Number(a.resource.creationTime ?? 0) ? b : a));
  const cols = newest.columns;
  const branches: Rel[] = tables.map((t) => {
    const scanCols = t.columns.map((c) => an.newColumn(c.name, c.type));
    const scan: ScanRel = { kind: 'scan', table: t.id, tableColumns: t.columns.map((_, i) => i), columns: scanCols };
    const exprs = cols.map((c) => {
      const i = t.columns.findIndex((x) => x.name.toLowerCase() === c.name.toLowerCase());
      if (i < 0) return literal(c.type, null);
      // A column of the same name and another type in any matching table fails the query (wildcard-tables page);
      // records are left to coerce, which reads an older record's fields into the newest one's.
      const own = t.columns[i]!.type;
      if (own.kind !== 'STRUCT' && c.type.kind !== 'STRUCT' && typeToSql(own) !== typeToSql(c.type)) {
        throw sqlError(`Cannot read field of type ${typeToSql(own)} as ${typeToSql(c.type)} Field: ${c.name}`, item.loc);
      }
      return coerce(colRefOf(scanCols[i]!), c.type);
    });
    exprs.push(literal(T.STRING, t.id.tableId.slice(prefix.length)));
    return { kind: 'project', input: scan, exprs, columns: [...cols.map((c) => an.newColumn(c.name, c.type)), an.newColumn('_TABLE_SUFFIX', T.STRING)] };
  });
  const columns = [...cols.map((c) => an.newColumn(c.name, c.type)), an.newColumn('_TABLE_SUFFIX', T.STRING)];
  const rel: Rel = branches.length === 1 ? branches[0]! : { kind: 'setop', op: 'union', all: true, inputs: branches, columns };
  const target: SampleTarget = { kind: 'table', key: `${id.projectId}.${id.datasetId}.${id.tableId}`, rowAccess: false };
  return { rel, names: [...cols.map((c) => c.name), '_TABLE_SUFFIX'], alias: item.alias ?? id.tableId, isValueTable: false, hidden: 1, target };
}

/** A table's partitioning as a comparable key: the type and column of time partitioning, or the column and range of integer ranges (expiration and filter options aside). */
function partitioningOf(t: TableInfo): string {
  const tp = t.resource.timePartitioning as { type?: string; field?: string } | undefined;
  const rp = t.resource.rangePartitioning as { field?: string; range?: unknown } | undefined;
  return JSON.stringify([tp ? [tp.type ?? 'DAY', tp.field?.toLowerCase() ?? null] : null, rp ? [rp.field?.toLowerCase() ?? null, rp.range ?? null] : null]);
}

/** A table's clustering columns, in order, as a comparable key. */
function clusteringOf(t: TableInfo): string {
  const c = t.resource.clustering as { fields?: string[] } | undefined;
  return (c?.fields ?? []).map((f) => f.toLowerCase()).join(',');
}

function colRefOf(c: { id: number; type: SqlType }): import('./resolved.js').ColumnRefExpr {
  return { kind: 'column', type: c.type, columnId: c.id };
}

/** Constant value of an analyzed expression (literal, or folded by the planner's folder); `timeZone`: the default zone to fold in, when not the statement's. */
let folder: ((e: import('./resolved.js').Expr, timeZone?: string) => Value | undefined) | undefined;
export function setConstantFolder(f: (e: import('./resolved.js').Expr, timeZone?: string) => Value | undefined): void {
  folder = f;
}
export function constantValue(e: import('./resolved.js').Expr, timeZone?: string): Value | undefined {
  if (e.kind === 'literal') return e.value;
  return folder?.(e, timeZone);
}

function expandView(an: Analyzer, info: TableInfo, alias: string, loc: A.Loc): TableRefOut {
  const key = `${info.id.projectId}.${info.id.datasetId}.${info.id.tableId}`;
  const expanding = an.env.expanding ?? new Set<string>();
  if (expanding.has(key)) throw sqlError(`View ${key} references itself`, loc);
  const script = an.env.parse(info.viewQuery!);
  const stmt = script.statements[0];
  if (!stmt || stmt.kind !== 'QueryStatement') throw sqlError(`View ${key} has an invalid definition`, loc);
  // The view body has no default dataset (views-intro.md, Limitations: its references are qualified with a dataset;
  // a view stored with a bare name fails here, as the service fails it when queried). Its default project is the
  // view's own (data-definition-language.md, Default project in view body). It sees no CTEs, query-time tables,
  // temporary tables or temporary functions of the caller (a view names permanent objects only).
  const saved = { env: an.env, ctes: an.ctes.splice(0), depth: an.queryDepth };
  // The view's query is a query of its own (WITH RECURSIVE may be its top level).
  an.queryDepth = 0;
  expanding.add(key);
  (an as { env: Analyzer['env'] }).env = {
    ...an.env,
    projectId: info.id.projectId,
    defaultDataset: undefined,
    storedBody: true,
    externalTables: undefined,
    tempTables: new Map(),
    tempFunctions: new Map(),
    expanding,
  };
  try {
    const out = resolveQuery(an, stmt.query, undefined);
    // A view's stored schema carries its column list (CREATE VIEW v (a, b) AS ...).
    const names = info.columns.length === out.rel.columns.length ? info.columns.map((c) => c.name) : out.names;
    // table-sampling.md (Limitations): views are not sampled; a materialized view is taken as one too.
    return { rel: out.rel, names, alias, isValueTable: out.isValueTable, target: { kind: 'not a table', what: `view ${key}` } };
  } finally {
    expanding.delete(key);
    (an as { env: Analyzer['env'] }).env = saved.env;
    an.ctes.push(...saved.ctes);
    an.queryDepth = saved.depth;
  }
}
