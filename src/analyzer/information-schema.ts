// INFORMATION_SCHEMA views (information-schema-*.md) and the legacy __TABLES__
// meta-tables, built as literal rows from the catalog; PARTITIONS and
// TABLE_STORAGE add rows counted from table data; JOBS reads the job registry
// the engine materializes (spec §1.6.5).
import type { RestField } from '../types/schema.js';
import type * as A from '../../grammar/ast.js';
import type { TableId, TableInfo } from '../storage/api.js';
import { accessBindings } from '../storage/dataset-access.js';
import { T, arrayOf, structOf, typeToSql, type SqlType, type StructType } from '../types/types.js';
import type { Value } from '../types/values.js';
import type { Analyzer, ObjectFilter, VirtualTable } from './context.js';
import { notFound, sqlError } from './errors.js';
import { literal } from './coercion.js';
import { callScalar } from './calls.js';
import { resolveQuery } from './query.js';
import { graphMetadata } from './graph-schema.js';
import type { ScanRel } from './resolved.js';
import type { SampleTarget } from './sample.js';
import { indexColumnRows, indexPopulated, searchIndexesOf, vectorIndexesOf } from './search-index.js';
import { locationOf, tableNotFound, type TableRefOut } from './names.js';
import { JOBS_COLUMNS, JOBS_TIMELINE_COLUMNS, jobsTableOf } from './information-schema-jobs.js';
import { timelineTable, timelineView } from './information-schema-timelines.js';
import { datasetOptions, ddlOf, externalOptions, externalReadOptions, float64Text, optionValueSql, paramType, schemaDdl } from './information-schema-ddl.js';
import { ddlOfRoutine } from '../udf/routine-ddl.js';

/** INFORMATION_SCHEMA views and the __TABLES__ meta-tables: views, for TABLESAMPLE. */
const SYSTEM_VIEW: SampleTarget = { kind: 'not a table', what: 'a system view' };

/** `qualifier.INFORMATION_SCHEMA.viewName` as a relation. */
export function informationSchemaRef(an: Analyzer, qualifier: readonly string[], viewName: string, item: A.TableRef): TableRefOut {
  const alias = item.alias ?? viewName;
  // TABLE_STORAGE_BY_PROJECT is TABLE_STORAGE's synonym (information-schema-table-storage).
  const named = viewName.toUpperCase();
  const view = named === 'TABLE_STORAGE_BY_PROJECT' ? 'TABLE_STORAGE' : named;
  const registry = jobsTableOf(view);
  if (registry && qualifier.length > 0 && !/^region-/i.test(qualifier[qualifier.length - 1]!)) {
    // information-schema-jobs.md / -jobs-timeline.md, Scope and syntax: `[PROJECT_ID.]region-REGION` only.
    const named = [...qualifier, 'INFORMATION_SCHEMA', view].join('.');
    throw sqlError(`Table "${named}" must be qualified with a region (e.g. region-us.INFORMATION_SCHEMA.${view}).`, item.loc);
  }
  if (registry && !an.env.jobs) {
    // Spec §1.6.5: the engine materializes the job registry as `_bqemu_jobs.JOBS` (and JOBS_TIMELINE) before execution.
    const projectId = qualifier.length === 2 ? qualifier[0]! : an.env.projectId;
    const info = an.getTable({ projectId, datasetId: '_bqemu_jobs', tableId: registry });
    if (info) {
      const columns = info.columns.map((c) => an.newColumn(c.name, c.type));
      const rel: ScanRel = { kind: 'scan', table: info.id, tableColumns: info.columns.map((_, i) => i), columns };
      return byUser(an, view, { rel, names: info.columns.map((c) => c.name), alias, isValueTable: false, target: SYSTEM_VIEW });
    }
  }
  if (registry) return byUser(an, view, virtualRel(an, informationSchema(an, qualifier, view, item.loc), alias));
  const timeline = timelineView(view);
  if (timeline) return virtualRel(an, timelineOf(an, qualifier, view, timeline, item.loc), alias);
  const rel = virtualRel(an, informationSchema(an, qualifier, view, item.loc), alias);
  if (view === 'TABLE_STORAGE') return countedStorage(an, qualifier, rel, item.loc);
  return view === 'PARTITIONS' ? countedPartitions(an, qualifier, rel, item.loc) : rel;
}

/**
 * JOBS_BY_USER and JOBS_TIMELINE_BY_USER: the jobs "submitted by the current user" (information-schema-jobs-by-user.md),
 * the rows whose user_email is the session's user, SESSION_USER() (spec §5.3: the principal every request gets; jobs
 * record it as user_email). The other JOBS views keep every user's jobs of the project.
 */
function byUser(an: Analyzer, view: string, out: TableRefOut): TableRefOut {
  if (!view.endsWith('_BY_USER')) return out;
  const k = out.names.findIndex((n) => n.toLowerCase() === 'user_email');
  const c = out.rel.columns[k];
  if (!c) return out;
  const predicate = callScalar('$equal', [{ kind: 'column', type: c.type, columnId: c.id }, literal(T.STRING, an.env.sessionUser ?? '')], undefined);
  return { ...out, rel: { kind: 'filter', input: out.rel, predicate, columns: out.rel.columns } };
}

/** A STREAMING_TIMELINE / WRITE_API_TIMELINE view (information-schema-timelines.ts): `[PROJECT_ID.]region-REGION` only. */
function timelineOf(an: Analyzer, qualifier: readonly string[], view: string, timeline: NonNullable<ReturnType<typeof timelineView>>, loc: A.Loc): VirtualTable {
  const last = qualifier[qualifier.length - 1];
  if (last === undefined || !/^region-/i.test(last)) {
    // The pages' Scope and syntax: "Queries against this view must include a region qualifier."
    throw sqlError(`Table "${[...qualifier, 'INFORMATION_SCHEMA', view].join('.')}" must be qualified with a region (e.g. region-us.INFORMATION_SCHEMA.${view}).`, loc);
  }
  const region = regionName(last).toLowerCase();
  const cat = an.env.catalog;
  const inRegion = (p: string, d: string): boolean => {
    const ds = cat.getDataset(p, d);
    const where = ds?.resource.location;
    return !ds || (typeof where === 'string' && where ? where : 'US').toLowerCase() === region;
  };
  return timelineTable(timeline, cat.ingestionTimeline?.(timeline.kind) ?? [], qualifier.length === 2 ? qualifier[0]! : an.env.projectId, inRegion);
}

/** `dataset.__TABLES__` / `dataset.__TABLES_SUMMARY__` as a relation. */
export function tablesMetaRef(an: Analyzer, id: TableId, alias: string): TableRefOut {
  return virtualRel(an, tablesMeta(an, id), alias);
}

/** `partition_id` of an ingestion-time partition by unit (rows still in the streaming buffer have none: `__STREAMING_UNPARTITIONED__`). */
const PARTITION_ID_FORMAT = { HOUR: '%Y%m%d%H', DAY: '%Y%m%d', MONTH: '%Y%m', YEAR: '%Y' } as const;

/**
 * INFORMATION_SCHEMA.PARTITIONS with a row per partition of each partitioned
 * table in scope, counted from its rows: `rel` (the unpartitioned tables'
 * rows) UNION ALL one aggregate per partitioned table. Partition ids as the
 * partitioned-tables page documents them: YYYYMMDD[HH] / YYYYMM / YYYY by the
 * time unit, a range's start for integer ranges; __NULL__ for NULL values,
 * __UNPARTITIONED__ for values out of the partitionable range.
 */
function countedPartitions(an: Analyzer, qualifier: readonly string[], rel: TableRefOut, loc: A.Loc): TableRefOut {
  const { projectId, datasets } = schemaScope(an, qualifier, 'PARTITIONS', loc);
  const tables = datasets.flatMap((d) => an.env.catalog.listTables(projectId, d)).filter((t) => countedPartitionId(t) && !t.id.tableId.startsWith('_'));
  if (tables.length === 0) return rel;
  const str = (v: string): string => `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const selects = tables.map((t) => {
    const { projectId: p, datasetId: d, tableId: name } = t.id;
    const { id, column } = countedPartitionId(t)!;
    const modified = Number(t.resource.lastModifiedTime ?? 0);
    // Every partition is read, as the service's view reads them whatever require_partition_filter says: the
    // predicate names the partitioning column in both branches of its OR so that the requirement
    // (src/planner/partition-filter.ts) is met.
    return `SELECT ${str(p)}, ${str(d)}, ${str(name)}, ${id} AS partition_id, COUNT(*), CAST(NULL AS INT64), CAST(NULL AS INT64), TIMESTAMP_MILLIS(${modified}), 'ACTIVE' FROM \`${p}.${d}.${name}\` WHERE ${column} IS NULL OR ${column} IS NOT NULL GROUP BY partition_id`;
  });
  return withCountedRows(an, rel, selects, 'PARTITIONS', loc);
}

/** The view's rows followed by those the SELECTs count from the tables' data (one row per SELECT). */
function withCountedRows(an: Analyzer, rel: TableRefOut, selects: readonly string[], view: string, loc: A.Loc): TableRefOut {
  const stmt = an.env.parse(selects.join(' UNION ALL ')).statements[0];
  if (!stmt || stmt.kind !== 'QueryStatement') throw sqlError(`INFORMATION_SCHEMA.${view} could not be built`, loc);
  const counted = resolveQuery(an, stmt.query, undefined).rel;
  const columns = rel.rel.columns.map((c) => an.newColumn(c.name, c.type));
  return { ...rel, rel: { kind: 'setop', op: 'union', all: true, inputs: [rel.rel, counted], columns } };
}

/** The tables TABLE_STORAGE lists: those with storage (no views). */
function storageTables(ts: readonly TableInfo[]): TableInfo[] {
  return ts.filter((t) => t.kind === 'TABLE' || t.kind === 'MATERIALIZED_VIEW' || t.kind === 'SNAPSHOT' || t.kind === 'EXTERNAL');
}

function storageRow(t: TableInfo, partitions: bigint | null): Value[] {
  return [
    t.id.projectId, null, t.id.projectId, t.id.datasetId, t.id.tableId, msToMicros(t.resource.creationTime), BigInt(t.rowCount),
    partitions, ...STORAGE_BYTES.map(() => 0n), msToMicros(t.resource.lastModifiedTime), false, tableType(t), 0n, null,
  ];
}

/** A TABLE_STORAGE value as a typed SQL literal (STRING, INT64, BOOL, TIMESTAMP in micros). */
function storageLiteral(v: Value, type: SqlType): string {
  if (v === null) return `CAST(NULL AS ${typeToSql(type)})`;
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  return type.kind === 'TIMESTAMP' ? `TIMESTAMP_MICROS(${String(v)})` : `CAST(${String(v)} AS INT64)`;
}

/**
 * INFORMATION_SCHEMA.TABLE_STORAGE with total_partitions of each partitioned table in scope: the number of
 * partitions present, counted from its rows with the partition ids PARTITIONS lists (countedPartitionId).
 */
function countedStorage(an: Analyzer, qualifier: readonly string[], rel: TableRefOut, loc: A.Loc): TableRefOut {
  const { projectId, datasets } = schemaScope(an, qualifier, 'TABLE_STORAGE', loc);
  const tables = storageTables(datasets.flatMap((d) => an.env.catalog.listTables(projectId, d))).filter((t) => countedPartitionId(t) && !t.id.tableId.startsWith('_'));
  if (tables.length === 0) return rel;
  const selects = tables.map((t) => {
    const { id, column } = countedPartitionId(t)!;
    const { projectId: p, datasetId: d, tableId: name } = t.id;
    // Every partition is read whatever require_partition_filter says (as in countedPartitions).
    const count = `(SELECT COUNT(DISTINCT ${id}) FROM \`${p}.${d}.${name}\` WHERE ${column} IS NULL OR ${column} IS NOT NULL)`;
    const items = storageRow(t, null).map((v, i) => (i === STORAGE_PARTITIONS ? count : storageLiteral(v, STORAGE_COLUMNS[i]!.type)));
    return `SELECT ${items.join(', ')}`;
  });
  return withCountedRows(an, rel, selects, 'TABLE_STORAGE', loc);
}

/** The partition id of a row of a partitioned table, as SQL over its columns, and the column it reads. */
function countedPartitionId(t: TableInfo): { id: string; column: string } | undefined {
  if (t.partitionUnit) {
    return { id: `IF(_PARTITIONTIME IS NULL, '__STREAMING_UNPARTITIONED__', FORMAT_TIMESTAMP('${PARTITION_ID_FORMAT[t.partitionUnit]}', _PARTITIONTIME))`, column: '_PARTITIONTIME' };
  }
  const tp = t.resource.timePartitioning as { type?: keyof typeof PARTITION_ID_FORMAT; field?: string } | undefined;
  if (tp?.field) {
    const c = `\`${tp.field}\``;
    // Time-unit partitions span 1960-01-01 to 2159-12-31; other values are unpartitioned.
    const ts = `TIMESTAMP(${c})`;
    return {
      id: `CASE WHEN ${c} IS NULL THEN '__NULL__' WHEN ${ts} < TIMESTAMP '1960-01-01' OR ${ts} >= TIMESTAMP '2160-01-01' THEN '__UNPARTITIONED__' ELSE FORMAT_TIMESTAMP('${PARTITION_ID_FORMAT[tp.type ?? 'DAY']}', ${ts}) END`,
      column: c,
    };
  }
  const rp = t.resource.rangePartitioning as { field?: string; range?: { start?: string; end?: string; interval?: string } } | undefined;
  if (rp?.field && rp.range) {
    const c = `\`${rp.field}\``;
    const [start, end, step] = [BigInt(rp.range.start ?? 0), BigInt(rp.range.end ?? 0), BigInt(rp.range.interval ?? 1)];
    return {
      id: `CASE WHEN ${c} IS NULL THEN '__NULL__' WHEN ${c} < ${start} OR ${c} >= ${end} THEN '__UNPARTITIONED__' ELSE CAST(${start} + DIV(${c} - ${start}, ${step}) * ${step} AS STRING) END`,
      column: c,
    };
  }
  return undefined;
}

function virtualRel(an: Analyzer, vt: VirtualTable, alias: string): TableRefOut {
  const columns = vt.columns.map((c) => an.newColumn(c.name, c.type));
  const rows = vt.rows.map((r) => r.map((v, i) => literal(vt.columns[i]!.type, v)));
  return { rel: { kind: 'values', rows, columns }, names: vt.columns.map((c) => c.name), alias, isValueTable: false, target: SYSTEM_VIEW };
}

// ---------------------------------------------------------------- INFORMATION_SCHEMA

/**
 * The legacy meta-tables `dataset.__TABLES__` and `dataset.__TABLES_SUMMARY__`
 * (dbt's catalog query reads the former): one row per table, times in epoch
 * ms, type 1 = table, 2 = view, 3 = external.
 */
function tablesMeta(an: Analyzer, id: TableId): VirtualTable {
  const cat = an.env.catalog;
  if (!cat.getDataset(id.projectId, id.datasetId)) throw tableNotFound(an, id);
  const I = T.INT64;
  const ms = (v: unknown): bigint | null => (v === undefined || v === null || v === '' ? null : BigInt(Math.trunc(Number(v))));
  const type = (t: TableInfo): bigint => (t.kind === 'VIEW' ? 2n : t.kind === 'EXTERNAL' ? 3n : 1n);
  const tables = cat.listTables(id.projectId, id.datasetId).filter((t) => !t.id.tableId.startsWith('_'));
  if (id.tableId === '__TABLES_SUMMARY__') {
    return {
      columns: [col('project_id'), col('dataset_id'), col('table_id'), col('creation_time', I), col('type', I)],
      rows: tables.map((t) => [t.id.projectId, t.id.datasetId, t.id.tableId, ms(t.resource.creationTime), type(t)]),
    };
  }
  return {
    columns: [col('project_id'), col('dataset_id'), col('table_id'), col('creation_time', I), col('last_modified_time', I), col('row_count', I), col('size_bytes', I), col('type', I)],
    rows: tables.map((t) => [
      t.id.projectId, t.id.datasetId, t.id.tableId, ms(t.resource.creationTime), ms(t.resource.lastModifiedTime),
      t.kind === 'VIEW' ? 0n : BigInt(t.rowCount), 0n, type(t),
    ]),
  };
}

/** The partitioning column of a table resource (time- or range-partitioned), if any. */
function partitionField(r: Record<string, unknown>): string | undefined {
  const tp = r.timePartitioning as { field?: string } | undefined;
  const rp = r.rangePartitioning as { field?: string } | undefined;
  return tp?.field ?? rp?.field;
}

/** Column descriptions by field path (`a`, `a.b`) from the resource's REST schema. */
function fieldDescriptions(r: Record<string, unknown>, key: 'description' | 'roundingMode' = 'description'): Map<string, string> {
  const out = new Map<string, string>();
  type F = { name?: string; description?: string; roundingMode?: string; fields?: F[] };
  const walk = (fields: F[] | undefined, prefix: string): void => {
    for (const f of fields ?? []) {
      const path = prefix + (f.name ?? '');
      if (typeof f[key] === 'string') out.set(path.toLowerCase(), f[key]);
      walk(f.fields, `${path}.`);
    }
  };
  walk((r.schema as { fields?: F[] } | undefined)?.fields, '');
  return out;
}

const S = T.STRING;
const col = (name: string, type: SqlType = S) => ({ name, type });

/** The service's error shape (ErrorProto), as INFORMATION_SCHEMA's STRUCT columns carry it. */
const errorProtoType = structOf([{ name: 'reason', type: S }, { name: 'location', type: S }, { name: 'debug_info', type: S }, { name: 'message', type: S }]);
/** COLUMNS.async_generation_status: a generated embedding column's blocking error (autonomous-embedding-generation
 * shows async_generation_status.blocking_error.message); NULL here, as no column is generated. */
const asyncGenerationType = structOf([{ name: 'blocking_error', type: errorProtoType }]);
/** COLUMNS / COLUMN_FIELD_PATHS.data_policies: the list of data policies attached to a column (the page lists data_policies.name). */
const dataPoliciesType = arrayOf(structOf([{ name: 'name', type: S }]));
/** SEARCH_INDEXES / VECTOR_INDEXES.last_index_alteration_info: the last ALTER ... INDEX REBUILD (none here, so NULL). */
const indexAlterationType = structOf([
  { name: 'status', type: S }, { name: 'message', type: errorProtoType }, { name: 'new_coverage_percentage', type: T.INT64 },
  { name: 'start_time', type: T.TIMESTAMP }, { name: 'end_time', type: T.TIMESTAMP }, { name: 'ddl', type: S },
]);

/** data_policies and policy_tags of each field path (`a`, `a.b`), from the REST schema's dataPolicies and policyTags. */
function fieldGovernance(r: Record<string, unknown>): Map<string, [Value[], Value[]]> {
  const out = new Map<string, [Value[], Value[]]>();
  type F = { name?: string; dataPolicies?: { name?: string }[]; policyTags?: { names?: string[] }; fields?: F[] };
  const walk = (fields: F[] | undefined, prefix: string): void => {
    for (const f of fields ?? []) {
      const path = prefix + (f.name ?? '');
      const policies = (f.dataPolicies ?? []).map((d): Value[] => [d.name ?? null]);
      out.set(path.toLowerCase(), [policies, [...(f.policyTags?.names ?? [])]]);
      walk(f.fields, `${path}.`);
    }
  };
  walk((r.schema as { fields?: F[] } | undefined)?.fields, '');
  return out;
}

/** TABLE_STORAGE byte counters: zero as on the table resource (spec §8). */
const STORAGE_BYTES = ['total_logical_bytes', 'active_logical_bytes', 'long_term_logical_bytes', 'current_physical_bytes', 'total_physical_bytes', 'active_physical_bytes', 'long_term_physical_bytes', 'time_travel_physical_bytes'];
const STORAGE_COLUMNS = [
  col('project_id'), col('project_number', T.INT64), col('table_catalog'), col('table_schema'), col('table_name'), col('creation_time', T.TIMESTAMP),
  col('total_rows', T.INT64), col('total_partitions', T.INT64), ...STORAGE_BYTES.map((b) => col(b, T.INT64)), col('storage_last_modified_time', T.TIMESTAMP),
  col('deleted', T.BOOL), col('table_type'), col('fail_safe_physical_bytes', T.INT64), col('last_metadata_index_refresh_time', T.TIMESTAMP),
];
const STORAGE_PARTITIONS = STORAGE_COLUMNS.findIndex((c) => c.name === 'total_partitions');

function msToMicros(v: unknown): bigint | null {
  if (v === undefined || v === null || v === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? BigInt(Math.trunc(n)) * 1000n : null;
}

const TABLE_TYPE: Record<string, string> = {
  TABLE: 'BASE TABLE',
  VIEW: 'VIEW',
  MATERIALIZED_VIEW: 'MATERIALIZED VIEW',
  EXTERNAL: 'EXTERNAL',
  SNAPSHOT: 'SNAPSHOT',
};

/** A table OPTIONS value kept with no REST field of its own (the resource's hidden `options`). */
function tableOption(t: TableInfo, name: string): unknown {
  return (t.resource.options as Record<string, unknown> | undefined)?.[name];
}

/** INFORMATION_SCHEMA table_type: a table clone (CREATE TABLE ... CLONE, a CLONE copy job) is CLONE. */
function tableType(t: { kind: string; resource: Record<string, unknown> }): string {
  return t.kind === 'TABLE' && t.resource.cloneDefinition ? 'CLONE' : (TABLE_TYPE[t.kind] ?? 'BASE TABLE');
}

function fieldPaths(prefix: string, t: SqlType, out: { path: string; type: SqlType }[]): void {
  out.push({ path: prefix, type: t });
  const inner = t.kind === 'ARRAY' ? t.element : t;
  if (inner.kind === 'STRUCT') for (const f of (inner as StructType).fields) fieldPaths(`${prefix}.${f.name}`, f.type, out);
}



/** Views whose pages give only a project (or region) scope: `[PROJECT_ID.]INFORMATION_SCHEMA.X`. */
const PROJECT_LEVEL_VIEWS = new Set(['SCHEMATA', 'SCHEMATA_OPTIONS']);
/** Views whose pages give only a dataset scope: a region qualifier is refused. */
const DATASET_LEVEL_VIEWS = new Set([
  'PARTITIONS', 'TABLE_CONSTRAINTS', 'KEY_COLUMN_USAGE', 'CONSTRAINT_COLUMN_USAGE',
  // information-schema-intro lists the search index views among those without region qualifiers; the vector index
  // views' pages likewise give only `DATASET_ID.INFORMATION_SCHEMA.X` ("must have a dataset qualifier").
  'SEARCH_INDEXES', 'SEARCH_INDEX_COLUMNS', 'SEARCH_INDEX_COLUMN_OPTIONS', 'SEARCH_INDEX_OPTIONS', 'VECTOR_INDEXES', 'VECTOR_INDEX_COLUMNS', 'VECTOR_INDEX_OPTIONS',
]);
/** Views whose pages give only a region scope (`[PROJECT_ID.]region-REGION.INFORMATION_SCHEMA.X`): a dataset qualifier is refused. */
// information-schema-object-privileges, Scope and syntax: "must include a region qualifier" (project level only).
const REGION_LEVEL_VIEWS = new Set(['TABLE_STORAGE', 'OBJECT_PRIVILEGES']);

/** The project and datasets an INFORMATION_SCHEMA view's qualifier selects (`ds.`, `p.ds.`, `region-us.`, `p.region-us.`). */
function schemaScope(an: Analyzer, qualifier: readonly string[], view: string, loc: A.Loc): { projectId: string; datasets: string[]; datasetQualified: boolean } {
  const cat = an.env.catalog;
  // region-us / region-* qualifiers select the whole project.
  const region = qualifier.length > 0 && /^region-/i.test(qualifier[qualifier.length - 1]!);
  const projectLevel = PROJECT_LEVEL_VIEWS.has(view);
  // `p.INFORMATION_SCHEMA.SCHEMATA`: the scope pages write project-level views `[PROJECT_ID.]INFORMATION_SCHEMA.X`, so
  // a lone qualifier that is not a dataset of the default project names a project (earlier sets read `ds.` as a dataset).
  const loneProject = projectLevel && !region && qualifier.length === 1 && !cat.getDataset(an.env.projectId, qualifier[0]!);
  const projectId = qualifier.length === 2 ? qualifier[0]! : loneProject ? qualifier[0]! : an.env.projectId;
  if (!region && REGION_LEVEL_VIEWS.has(view)) {
    // information-schema-table-storage: "Queries against this view must include a region qualifier."
    const named = [...qualifier, 'INFORMATION_SCHEMA', view].join('.');
    throw sqlError(`Table "${named}" must be qualified with a region (e.g. region-us.INFORMATION_SCHEMA.${view}).`, loc);
  }
  if (region && DATASET_LEVEL_VIEWS.has(view)) {
    // PARTITIONS and the key-constraint views "must include a dataset qualifier" (their pages' scope sections).
    throw sqlError(`Table "${qualifier.join('.')}.INFORMATION_SCHEMA.${view}" must be qualified with a dataset (e.g. dataset.INFORMATION_SCHEMA.${view}).`, loc);
  }
  let datasets: string[];
  if (loneProject) datasets = inRegion(an, projectId, 'US');
  else if (region || qualifier.length === 0) {
    if (qualifier.length === 0 && view !== 'SCHEMATA' && view !== 'SCHEMATA_OPTIONS' && !view.startsWith('JOBS')) {
      throw sqlError(`Table "INFORMATION_SCHEMA.${view}" must be qualified with a dataset (e.g. dataset.table).`, loc);
    }
    // `region-eu` reads the datasets of that location only, and the job runs there (a job that named no location
    // takes it; one already in another location finds no such "dataset", in its location's words, as it finds no
    // dataset of another location); without one, the US region (the scope pages).
    const where = region ? regionName(qualifier[qualifier.length - 1]!) : 'US';
    if (region && an.env.location?.admits && !an.env.location.admits(where)) {
      throw notFound(`Not found: Dataset ${projectId}:${qualifier[qualifier.length - 1]!} was not found in location ${locationOf(an)}`);
    }
    datasets = inRegion(an, projectId, where);
  } else {
    const ds = qualifier[qualifier.length - 1]!;
    if (!cat.getDataset(projectId, ds)) throw notFound(`Not found: Dataset ${projectId}:${ds} was not found in location ${locationOf(an)}`);
    datasets = [ds];
  }
  return { projectId, datasets, datasetQualified: !region && !loneProject && qualifier.length > 0 };
}

/** The location a `region-…` qualifier names, spelt as the service reports it: multi-regions upper case (US, EU), regions lower. */
function regionName(qualifier: string): string {
  const r = qualifier.slice('region-'.length);
  return /^(us|eu)$/i.test(r) ? r.toUpperCase() : r.toLowerCase();
}

/** The project's visible datasets in one location (a dataset made without one is in the default, US). */
function inRegion(an: Analyzer, projectId: string, region: string): string[] {
  const cat = an.env.catalog;
  // Hidden datasets (a name starting with _) "don't appear in any INFORMATION_SCHEMA views" (datasets.md); nor do
  // the emulator's own (_bqemu_*). A dataset qualifier may still name one.
  return cat.listDatasets(projectId).filter((d) => {
    if (d.startsWith('_')) return false;
    const where = cat.getDataset(projectId, d)?.resource.location;
    return (typeof where === 'string' && where ? where : 'US').toLowerCase() === region.toLowerCase();
  });
}

/** An index's last_refresh_time, coverage_percentage and unindexed_row_count: whole once populated, else nothing yet. */
function indexProgress(t: TableInfo, kind: 'SEARCH' | 'VECTOR', createdAt: Value): [Value, bigint, bigint] {
  return indexPopulated(t.resource, kind) ? [createdAt, 100n, 0n] : [null, 0n, BigInt(t.rowCount)];
}

export function informationSchema(an: Analyzer, qualifier: readonly string[], view: string, loc: A.Loc): VirtualTable {
  const cat = an.env.catalog;
  const { projectId, datasets, datasetQualified } = schemaScope(an, qualifier, view, loc);
  const tables = () => datasets.flatMap((d) => cat.listTables(projectId, d).filter((t) => !t.id.tableId.startsWith('_')));
  switch (view) {
    case 'SCHEMATA': {
      // A dataset qualifier (which the page does not give for SCHEMATA) reads the whole project, as earlier sets expect.
      const rows = (datasetQualified ? cat.listDatasets(projectId) : datasets).filter((d) => !d.startsWith('_')).map((d): Value[] => {
        const r = cat.getDataset(projectId, d)!.resource as Record<string, unknown>;
        return [projectId, d, null, msToMicros(r.creationTime), msToMicros(r.lastModifiedTime), (r.location as string) ?? 'US', schemaDdl(`${projectId}.${d}`, r), (r.defaultCollation as string | undefined) ?? null, null];
      });
      return {
        columns: [col('catalog_name'), col('schema_name'), col('schema_owner'), col('creation_time', T.TIMESTAMP), col('last_modified_time', T.TIMESTAMP), col('location'), col('ddl'), col('default_collation_name'),
          // sync_status: cross-region replication's state, NULL for a dataset without replicas (information-schema-datasets-schemata).
          col('sync_status', T.JSON)],
        rows,
      };
    }
    case 'TABLES':
      return {
        // information-schema-tables: base_table_* and snapshot_time_ms name a clone's or snapshot's base table and time.
        columns: [
          col('table_catalog'), col('table_schema'), col('table_name'), col('table_type'), col('managed_table_type'), col('is_insertable_into'),
          col('is_fine_grained_mutations_enabled'), col('is_typed'), col('is_change_history_enabled'), col('creation_time', T.TIMESTAMP),
          col('base_table_catalog'), col('base_table_schema'), col('base_table_name'), col('snapshot_time_ms', T.TIMESTAMP),
          // Materialized view replicas and cross-region replication: features the emulator does not have, so NULL.
          col('replica_source_catalog'), col('replica_source_schema'), col('replica_source_name'), col('replication_status'), col('replication_error'),
          col('ddl'), col('default_collation_name'), col('sync_status', T.JSON), col('upsert_stream_apply_watermark', T.TIMESTAMP),
        ],
        rows: tables().map((t) => {
          const def = (t.resource.snapshotDefinition ?? t.resource.cloneDefinition) as { baseTableReference?: Record<string, string>; snapshotTime?: string; cloneTime?: string } | undefined;
          const base = def?.baseTableReference ?? {};
          const at = def?.snapshotTime ?? def?.cloneTime;
          return [
            t.id.projectId,
            t.id.datasetId,
            t.id.tableId,
            tableType(t),
            // NATIVE for a standard table, BIGLAKE for a managed Iceberg table (the page names no value for other kinds).
            t.kind === 'TABLE' ? (t.resource.biglakeConfiguration ? 'BIGLAKE' : 'NATIVE') : null,
            t.kind === 'TABLE' ? 'YES' : 'NO',
            // YES or NO as the table options enable_fine_grained_mutations / enable_change_history are set (information-schema-tables).
            tableOption(t, 'enable_fine_grained_mutations') === true ? 'YES' : 'NO',
            'NO',
            tableOption(t, 'enable_change_history') === true ? 'YES' : 'NO',
            msToMicros(t.resource.creationTime),
            base.projectId ?? null,
            base.datasetId ?? null,
            base.tableId ?? null,
            at ? BigInt(Date.parse(at)) * 1000n : def ? msToMicros(t.resource.creationTime) : null,
            null, null, null, null, null,
            ddlOf(t),
            (t.resource.defaultCollation as string | undefined) ?? null,
            null,
            // change-data-capture.md, Monitor table upsert operation progress: when CDC rows were last applied.
            t.upsertWatermarkMs !== undefined ? BigInt(t.upsertWatermarkMs) * 1000n : null,
          ];
        }),
      };
    case 'COLUMNS':
      return {
        columns: [
          col('table_catalog'), col('table_schema'), col('table_name'), col('column_name'), col('ordinal_position', T.INT64), col('is_nullable'), col('data_type'),
          col('is_generated'), col('generation_expression'), col('is_stored'), col('async_generation_status', asyncGenerationType), col('is_hidden'), col('is_updatable'),
          col('is_system_defined'), col('is_partitioning_column'), col('clustering_ordinal_position', T.INT64), col('collation_name'), col('column_default'), col('rounding_mode'),
          col('data_policies', dataPoliciesType), col('policy_tags', arrayOf(S)),
        ],
        rows: tables().flatMap((t) => {
          const part = partitionField(t.resource)?.toLowerCase();
          const clustering = ((t.resource.clustering as { fields?: string[] } | undefined)?.fields ?? []).map((f) => f.toLowerCase());
          // column_default: the default's expression text, else the text NULL (information-schema-columns; clients of the
          // service such as duckdb-bigquery compare column_default with the string "NULL" to mean no default).
          const restFields = (t.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? [];
          const defaults = new Map(restFields.map((f) => [f.name.toLowerCase(), f.defaultValueExpression]));
          const rounding = new Map(restFields.map((f) => [f.name.toLowerCase(), f.roundingMode]));
          const governance = fieldGovernance(t.resource);
          const rows = t.columns.map((c, i): Value[] => {
            const ci = clustering.indexOf(c.name.toLowerCase());
            return [
              t.id.projectId, t.id.datasetId, t.id.tableId, c.name, BigInt(i + 1), c.required ? 'NO' : 'YES', typeToSql(paramType(restFields, c)),
              'NEVER', null, null, null, 'NO', null, 'NO', part === c.name.toLowerCase() ? 'YES' : 'NO', ci >= 0 ? BigInt(ci + 1) : null, collationName(c.type), defaults.get(c.name.toLowerCase()) ?? 'NULL',
              rounding.get(c.name.toLowerCase()) ?? null, ...(governance.get(c.name.toLowerCase()) ?? [[], []]),
            ];
          });
          // An ingestion-time partitioned table's pseudo-columns (the same ones its queries see): no ordinal
          // position, hidden, system-defined (information-schema-columns). Both count as partitioning
          // columns, since a filter on either prunes partitions *(emulator: the page does not say)*.
          if (t.partitionUnit) {
            const pseudo: [string, string][] = [['_PARTITIONTIME', 'TIMESTAMP'], ...(t.partitionUnit === 'DAY' ? [['_PARTITIONDATE', 'DATE'] as [string, string]] : [])];
            for (const [name, type] of pseudo) rows.push([t.id.projectId, t.id.datasetId, t.id.tableId, name, null, 'YES', type, 'NEVER', null, null, null, 'YES', null, 'YES', 'YES', null, null, 'NULL', null, [], []]);
          }
          return rows;
        }),
      };
    case 'COLUMN_FIELD_PATHS':
      return {
        columns: [col('table_catalog'), col('table_schema'), col('table_name'), col('column_name'), col('field_path'), col('data_type'), col('description'), col('collation_name'), col('rounding_mode'),
          col('data_policies', dataPoliciesType), col('policy_tags', arrayOf(S))],
        rows: tables().flatMap((t) => {
          const desc = fieldDescriptions(t.resource);
          const rounding = fieldDescriptions(t.resource, 'roundingMode');
          const governance = fieldGovernance(t.resource);
          const restFields = (t.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? [];
          return t.columns.flatMap((c) => {
            const paths: { path: string; type: SqlType }[] = [];
            fieldPaths(c.name, paramType(restFields, c), paths);
            return paths.map((p): Value[] => [t.id.projectId, t.id.datasetId, t.id.tableId, c.name, p.path, typeToSql(p.type), desc.get(p.path.toLowerCase()) ?? null, collationName(p.type), rounding.get(p.path.toLowerCase()) ?? null, ...(governance.get(p.path.toLowerCase()) ?? [[], []])]);
          });
        }),
      };
    case 'VIEWS':
      return {
        columns: [col('table_catalog'), col('table_schema'), col('table_name'), col('view_definition'), col('check_option'), col('use_standard_sql')],
        rows: tables()
          .filter((t) => t.kind === 'VIEW' || t.kind === 'MATERIALIZED_VIEW')
          .map((t) => [t.id.projectId, t.id.datasetId, t.id.tableId, t.viewQuery ?? null, null, 'YES']),
      };
    case 'TABLE_OPTIONS': {
      const rows: Value[][] = [];
      for (const t of tables()) {
        const r = t.resource;
        const optSql = (name: string, type: string, sql: string) => rows.push([t.id.projectId, t.id.datasetId, t.id.tableId, name, type, sql]);
        const opt = (name: string, type: string, v: unknown) => {
          if (v !== undefined && v !== null) optSql(name, type, optionValueSql(v));
        };
        opt('description', 'STRING', r.description);
        opt('friendly_name', 'STRING', r.friendlyName);
        // As the TABLE_OPTIONS page shows it: TIMESTAMP "2020-01-16T21:12:28.000Z".
        if (r.expirationTime) optSql('expiration_timestamp', 'TIMESTAMP', `TIMESTAMP "${new Date(Number(r.expirationTime)).toISOString()}"`);
        if (r.labels && Object.keys(r.labels as object).length) opt('labels', 'ARRAY<STRUCT<STRING, STRING>>', r.labels);
        const tp = r.timePartitioning as { expirationMs?: string } | undefined;
        if (tp?.expirationMs) optSql('partition_expiration_days', 'FLOAT64', float64Text(Number(tp.expirationMs) / 86_400_000));
        if (r.requirePartitionFilter === true) opt('require_partition_filter', 'BOOL', true);
        // kms_key_name lives in the REST encryptionConfiguration (the TABLE_OPTIONS page lists it as a STRING option).
        opt('kms_key_name', 'STRING', (r.encryptionConfiguration as { kmsKeyName?: string } | undefined)?.kmsKeyName);
        opt('default_rounding_mode', 'STRING', r.defaultRoundingMode);
        // max_staleness as an INTERVAL literal of its canonical text (tables and materialized views: maxStaleness).
        if (typeof r.maxStaleness === 'string') optSql('max_staleness', 'INTERVAL', `INTERVAL "${r.maxStaleness}" YEAR TO SECOND`);
        // A materialized view's refresh OPTIONS, where set (CREATE or ALTER MATERIALIZED VIEW ... OPTIONS).
        const mv = r.materializedView as { enableRefresh?: boolean; refreshIntervalMs?: string } | undefined;
        if (mv?.enableRefresh !== undefined) opt('enable_refresh', 'BOOL', mv.enableRefresh);
        if (mv?.refreshIntervalMs !== undefined) optSql('refresh_interval_minutes', 'FLOAT64', float64Text(Number(mv.refreshIntervalMs) / 60_000));
        // An external table's format and files (CREATE EXTERNAL TABLE ... OPTIONS (format, uris)).
        const ext = externalOptions(r);
        if (ext.format) opt('format', 'STRING', ext.format);
        if (ext.uris.length) opt('uris', 'ARRAY<STRING>', ext.uris);
        if (t.kind === 'EXTERNAL') for (const [name, type, value] of externalReadOptions(r)) optSql(name, type, value);
      }
      return { columns: [col('table_catalog'), col('table_schema'), col('table_name'), col('option_name'), col('option_type'), col('option_value')], rows };
    }
    case 'ROUTINES': {
      const rows: Value[][] = [];
      for (const d of datasets) {
        for (const r of cat.listChildren('routines', projectId, d)) {
          const ref = (r.routineReference ?? {}) as Record<string, string>;
          const name = ref.routineId ?? (r.id as string) ?? '';
          rows.push([
            projectId, d, name, projectId, d, name,
            ROUTINE_TYPE[(r.routineType as string) ?? 'SCALAR_FUNCTION'] ?? 'FUNCTION', routineDataType(r),
            (r.language as string) === 'SQL' || !r.language ? 'SQL' : 'EXTERNAL', (r.definitionBody as string) ?? null,
            (r.language as string) && r.language !== 'SQL' ? (r.language as string) : null,
            // YES / NO as the CREATE declared it (DETERMINISTIC / NOT DETERMINISTIC), NULL when unknown.
            r.determinismLevel === 'DETERMINISTIC' ? 'YES' : r.determinismLevel === 'NOT_DETERMINISTIC' ? 'NO' : null,
            // security_type: "always NULL" (information-schema-routines); connection: a remote function's REST remoteFunctionOptions.connection.
            null, msToMicros(r.creationTime), msToMicros(r.lastModifiedTime), ddlOfRoutine(r) ?? null,
            ((r.remoteFunctionOptions as { connection?: string } | undefined)?.connection ?? (r.sparkOptions as { connection?: string } | undefined)?.connection) ?? null,
          ]);
        }
      }
      return {
        columns: [
          col('specific_catalog'), col('specific_schema'), col('specific_name'), col('routine_catalog'), col('routine_schema'), col('routine_name'),
          col('routine_type'), col('data_type'), col('routine_body'), col('routine_definition'), col('external_language'), col('is_deterministic'),
          col('security_type'), col('created', T.TIMESTAMP), col('last_altered', T.TIMESTAMP), col('ddl'), col('connection'),
        ],
        rows,
      };
    }
    case 'PROPERTY_GRAPHS': {
      // information-schema-property-graphs: one row per property graph, its definition as JSON and its DDL.
      const rows: Value[][] = [];
      for (const d of datasets) {
        for (const r of cat.listChildren('propertyGraphs', projectId, d)) {
          const name = ((r.propertyGraphReference ?? {}) as Record<string, string>).propertyGraphId ?? '';
          rows.push([projectId, d, name, JSON.stringify(graphMetadata(an, { projectId, datasetId: d, tableId: name }, r)), (r.ddl as string) ?? null]);
        }
      }
      return { columns: [col('property_graph_catalog'), col('property_graph_schema'), col('property_graph_name'), col('property_graph_metadata_json'), col('ddl')], rows };
    }
    case 'ROUTINE_OPTIONS': {
      // information-schema-routine-options: description, library (JavaScript), data_governance_type, where set.
      const rows: Value[][] = [];
      for (const d of datasets) {
        for (const r of cat.listChildren('routines', projectId, d)) {
          const name = ((r.routineReference ?? {}) as Record<string, string>).routineId ?? '';
          const opt = (option: string, type: string, v: unknown) => {
            if (v !== undefined && v !== null) rows.push([projectId, d, name, option, type, optionValueSql(v)]);
          };
          opt('description', 'STRING', r.description);
          if (Array.isArray(r.importedLibraries) && r.importedLibraries.length) opt('library', 'ARRAY<STRING>', r.importedLibraries);
          opt('data_governance_type', 'DataGovernanceType', r.dataGovernanceType);
        }
      }
      return { columns: [col('specific_catalog'), col('specific_schema'), col('specific_name'), col('option_name'), col('option_type'), col('option_value')], rows };
    }
    case 'SEARCH_INDEXES':
      return {
        // information-schema-indexes. ACTIVE; an index not populated (indexPopulated: every emulator table is below
        // 10 GB) has coverage 0, no refresh yet and every row unindexed (Example: a small table's coverage_percentage
        // is 0); byte counts are zero as on the table resource (spec §8). (index_status_details is a column of
        // SEARCH_INDEXES_BY_ORGANIZATION only, a view the emulator does not have.)
        columns: [
          col('index_catalog'), col('index_schema'), col('table_name'), col('index_name'), col('index_status'), col('creation_time', T.TIMESTAMP),
          col('last_modification_time', T.TIMESTAMP), col('last_refresh_time', T.TIMESTAMP), col('disable_time', T.TIMESTAMP), col('disable_reason'), col('ddl'),
          col('coverage_percentage', T.INT64), col('unindexed_row_count', T.INT64), col('total_logical_bytes', T.INT64), col('total_storage_bytes', T.INT64), col('analyzer'),
          col('last_index_alteration_info', indexAlterationType),
        ],
        rows: tables().flatMap((t) =>
          searchIndexesOf(t.resource).map((ix): Value[] => {
            const at = msToMicros(ix.creationTime);
            const [refreshed, coverage, unindexed] = indexProgress(t, 'SEARCH', at);
            return [t.id.projectId, t.id.datasetId, t.id.tableId, ix.name, 'ACTIVE', at, at, refreshed, null, null, ix.ddl, coverage, unindexed, 0n, 0n, ix.analyzer, null];
          }),
        ),
      };
    case 'SEARCH_INDEX_COLUMNS':
      return {
        columns: [col('index_catalog'), col('index_schema'), col('table_name'), col('index_name'), col('index_column_name'), col('index_field_path')],
        rows: tables().flatMap((t) =>
          searchIndexesOf(t.resource).flatMap((ix) => indexColumnRows(ix, t.columns).map((r): Value[] => [t.id.projectId, t.id.datasetId, t.id.tableId, ix.name, r.column, r.path])),
        ),
      };
    case 'SEARCH_INDEX_COLUMN_OPTIONS':
      // information-schema-index-column-options: one row per option set on an indexed column; a column left to the
      // index's default granularity has none.
      return {
        columns: [
          col('index_catalog'), col('index_schema'), col('table_name'), col('index_name'), col('index_column_name'), col('option_name'), col('option_type'),
          col('option_value'),
        ],
        rows: tables().flatMap((t) =>
          searchIndexesOf(t.resource).flatMap((ix) =>
            (ix.columnOptions ?? []).flatMap((c) => c.options.map((o): Value[] => [t.id.projectId, t.id.datasetId, t.id.tableId, ix.name, c.column, o.name, o.type, o.value])),
          ),
        ),
      };
    case 'SEARCH_INDEX_OPTIONS':
      return {
        columns: [col('index_catalog'), col('index_schema'), col('table_name'), col('index_name'), col('option_name'), col('option_type'), col('option_value')],
        rows: tables().flatMap((t) =>
          searchIndexesOf(t.resource).flatMap((ix) => {
            // analyzer and data_types are always listed, with their defaults when not given (information-schema-search-index-options).
            const shown: [string, string, string][] = Object.entries(ix.options).map(([k, o]) => [k, o.type, o.value]);
            if (!ix.options.analyzer) shown.push(['analyzer', 'STRING', ix.analyzer]);
            if (!ix.options.data_types) shown.push(['data_types', 'ARRAY<STRING>', `[${ix.dataTypes.map((d) => JSON.stringify(d)).join(', ')}]`]);
            return shown.map(([k, type, v]): Value[] => [t.id.projectId, t.id.datasetId, t.id.tableId, ix.name, k, type, v]);
          }),
        ),
      };
    case 'VECTOR_INDEXES': {
      // information-schema-vector-indexes: as SEARCH_INDEXES (under 10 MB an index is not populated: coverage 0); no
      // alteration (ALTER VECTOR INDEX REBUILD) and no model build to report.
      return {
        columns: [
          col('index_catalog'), col('index_schema'), col('table_name'), col('index_name'), col('index_status'), col('creation_time', T.TIMESTAMP),
          col('last_modification_time', T.TIMESTAMP), col('last_refresh_time', T.TIMESTAMP), col('disable_time', T.TIMESTAMP), col('disable_reason'), col('ddl'),
          col('coverage_percentage', T.INT64), col('unindexed_row_count', T.INT64), col('total_logical_bytes', T.INT64), col('total_storage_bytes', T.INT64),
          col('last_index_alteration_info', indexAlterationType), col('last_model_build_time', T.TIMESTAMP),
        ],
        rows: tables().flatMap((t) =>
          vectorIndexesOf(t.resource).map((ix): Value[] => {
            const at = msToMicros(ix.creationTime);
            const [refreshed, coverage, unindexed] = indexProgress(t, 'VECTOR', at);
            return [t.id.projectId, t.id.datasetId, t.id.tableId, ix.name, 'ACTIVE', at, at, refreshed, null, null, ix.ddl, coverage, unindexed, 0n, 0n, null, null];
          }),
        ),
      };
    }
    case 'VECTOR_INDEX_COLUMNS':
      // The embedding column itself: it is an ARRAY<FLOAT64> (or the result STRUCT), not expanded further.
      return {
        columns: [col('index_catalog'), col('index_schema'), col('table_name'), col('index_name'), col('index_column_name'), col('index_field_path')],
        rows: tables().flatMap((t) =>
          vectorIndexesOf(t.resource).map((ix): Value[] => {
            const c = t.columns.find((x) => x.name.toLowerCase() === ix.column.toLowerCase())?.name ?? ix.column;
            return [t.id.projectId, t.id.datasetId, t.id.tableId, ix.name, c, c];
          }),
        ),
      };
    case 'VECTOR_INDEX_OPTIONS':
      return {
        columns: [col('index_catalog'), col('index_schema'), col('table_name'), col('index_name'), col('option_name'), col('option_type'), col('option_value')],
        rows: tables().flatMap((t) =>
          vectorIndexesOf(t.resource).flatMap((ix) => ix.options.map((o): Value[] => [t.id.projectId, t.id.datasetId, t.id.tableId, ix.name, o.name, o.type, o.value])),
        ),
      };
    case 'TABLE_STORAGE':
      // Unpartitioned tables count 0 partitions (information-schema-table-storage); partitioned ones are counted from
      // their rows by countedStorage, as PARTITIONS counts them.
      return { columns: STORAGE_COLUMNS, rows: storageTables(tables()).filter((t) => !countedPartitionId(t)).map((t) => storageRow(t, 0n)) };
    case 'TABLE_SNAPSHOTS':
      return {
        columns: [col('table_catalog'), col('table_schema'), col('table_name'), col('base_table_catalog'), col('base_table_schema'), col('base_table_name'), col('snapshot_time', T.TIMESTAMP)],
        rows: tables()
          .filter((t) => t.kind === 'SNAPSHOT')
          .map((t) => {
            const def = (t.resource.snapshotDefinition ?? {}) as { baseTableReference?: Record<string, string>; snapshotTime?: string };
            const base = def.baseTableReference ?? {};
            const at = def.snapshotTime ? BigInt(Date.parse(def.snapshotTime)) * 1000n : msToMicros(t.resource.creationTime);
            return [t.id.projectId, t.id.datasetId, t.id.tableId, base.projectId ?? null, base.datasetId ?? null, base.tableId ?? null, at];
          }),
      };
    case 'SCHEMATA_OPTIONS': {
      const rows: Value[][] = [];
      for (const d of datasets.filter((x) => !x.startsWith('_'))) {
        for (const o of datasetOptions(cat.getDataset(projectId, d)!.resource as Record<string, unknown>)) {
          rows.push([projectId, d, o.name, o.type, o.type === 'FLOAT64' ? float64Text(o.value as number) : optionValueSql(o.value)]);
        }
      }
      return { columns: [col('catalog_name'), col('schema_name'), col('option_name'), col('option_type'), col('option_value')], rows };
    }
    case 'PARTITIONS':
      return {
        columns: [col('table_catalog'), col('table_schema'), col('table_name'), col('partition_id'), col('total_rows', T.INT64), col('total_logical_bytes', T.INT64), col('total_billable_bytes', T.INT64), col('last_modified_time', T.TIMESTAMP), col('storage_tier')],
        // Partitioned tables have a row per partition, counted from their rows (countedPartitions).
        rows: tables()
          .filter((t) => (t.kind === 'TABLE' || t.kind === 'MATERIALIZED_VIEW') && !countedPartitionId(t))
          .map((t) => [t.id.projectId, t.id.datasetId, t.id.tableId, null, BigInt(t.rowCount), null, null, msToMicros(t.resource.lastModifiedTime), 'ACTIVE']),
      };
    case 'OBJECT_PRIVILEGES': {
      // What GRANT/REVOKE keep on tables and views (one row per role and grantee), and datasets' access lists.
      // information-schema-object-privileges, Limitations: the WHERE clause names one dataset (object_name) or one
      // table or view (object_schema and object_name); a filter on object_name alone reads datasets only.
      const scope = objectScope(an.objectFilter, loc);
      const rows: Value[][] = [];
      for (const d of datasets.filter((x) => !x.startsWith('_'))) {
        const access = cat.getDataset(projectId, d)?.resource.access;
        for (const b of accessBindings(access, projectId)) for (const m of b.members) rows.push([projectId, null, d, 'SCHEMA', b.role, m]);
      }
      for (const t of scope.schema ? tables() : []) {
        const bindings = (t.resource.iamPolicy as { bindings?: { role: string; members: string[] }[] } | undefined)?.bindings ?? [];
        // object_type: SCHEMA, TABLE, VIEW or EXTERNAL (the page's Schema).
        const objectType = t.kind === 'VIEW' || t.kind === 'MATERIALIZED_VIEW' ? 'VIEW' : t.kind === 'EXTERNAL' ? 'EXTERNAL' : 'TABLE';
        for (const b of bindings) for (const m of b.members) rows.push([projectId, t.id.datasetId, t.id.tableId, objectType, b.role, m]);
      }
      return { columns: [col('object_catalog'), col('object_schema'), col('object_name'), col('object_type'), col('privilege_type'), col('grantee')], rows };
    }
    case 'ROW_ACCESS_POLICIES':
      // One row per row access policy of the tables in scope, its filter as written (information-schema-row-access-policies).
      return {
        columns: [col('table_catalog'), col('table_schema'), col('table_name'), col('row_access_policy_name'), col('filter_predicate'), col('creation_time', T.TIMESTAMP), col('last_modified_time', T.TIMESTAMP)],
        rows: tables()
          .filter((t) => t.kind === 'TABLE' || t.kind === 'SNAPSHOT')
          .flatMap((t) =>
            cat.listChildren('rowAccessPolicies', t.id.projectId, t.id.datasetId, t.id.tableId).map((r): Value[] => {
              const ref = r.rowAccessPolicyReference as { policyId?: string } | undefined;
              return [t.id.projectId, t.id.datasetId, t.id.tableId, ref?.policyId ?? null, typeof r.filterPredicate === 'string' ? r.filterPredicate : null, msToMicros(r.creationTime), msToMicros(r.lastModifiedTime)];
            }),
          ),
      };
    case 'MATERIALIZED_VIEWS':
      return {
        columns: [col('table_catalog'), col('table_schema'), col('table_name'), col('last_refresh_time', T.TIMESTAMP), col('refresh_watermark', T.TIMESTAMP), col('last_refresh_status', errorResultType)],
        rows: tables()
          .filter((t) => t.kind === 'MATERIALIZED_VIEW')
          .map((t) => {
            // Queries read the base tables as they are now: the MV counts as refreshed when it was created.
            const refreshed = (t.resource.materializedView as { lastRefreshTime?: unknown } | undefined)?.lastRefreshTime ?? t.resource.lastModifiedTime;
            return [t.id.projectId, t.id.datasetId, t.id.tableId, msToMicros(refreshed), msToMicros(refreshed), null];
          }),
      };
    case 'KEY_COLUMN_USAGE':
      return {
        columns: [col('constraint_catalog'), col('constraint_schema'), col('constraint_name'), col('table_catalog'), col('table_schema'), col('table_name'), col('column_name'), col('ordinal_position', T.INT64), col('position_in_unique_constraint', T.INT64)],
        rows: tables().flatMap((t) =>
          keyConstraints(t).flatMap((k) => {
            // A foreign key column's position_in_unique_constraint: where the column it references stands in the
            // referenced table's primary key (not in the foreign key's own list); NULL for a primary key's columns.
            const pk = k.referenced ? primaryKeyOf(cat.getTable(k.referenced)) : undefined;
            const inKey = (i: number): Value => {
              if (!k.referenced) return null;
              const at = pk?.findIndex((c) => c.toLowerCase() === k.referenced!.columns[i]!.toLowerCase()) ?? -1;
              return at >= 0 ? BigInt(at + 1) : null;
            };
            return k.columns.map((c, i): Value[] => [t.id.projectId, t.id.datasetId, k.name, t.id.projectId, t.id.datasetId, t.id.tableId, c, BigInt(i + 1), inKey(i)]);
          }),
        ),
      };
    case 'CONSTRAINT_COLUMN_USAGE':
      // The columns each constraint uses: a primary key's own columns, a foreign key's referenced columns
      // (information-schema-constraint-column-usage).
      return {
        columns: [col('table_catalog'), col('table_schema'), col('table_name'), col('column_name'), col('constraint_catalog'), col('constraint_schema'), col('constraint_name')],
        rows: tables().flatMap((t) =>
          keyConstraints(t).flatMap((k) => {
            const on = k.referenced ?? { projectId: t.id.projectId, datasetId: t.id.datasetId, tableId: t.id.tableId, columns: k.columns };
            return on.columns.map((c): Value[] => [on.projectId, on.datasetId, on.tableId, c, t.id.projectId, t.id.datasetId, k.name]);
          }),
        ),
      };
    case 'TABLE_CONSTRAINTS':
      return {
        columns: [col('constraint_catalog'), col('constraint_schema'), col('constraint_name'), col('table_catalog'), col('table_schema'), col('table_name'), col('constraint_type'), col('is_deferrable'), col('initially_deferred'), col('enforced')],
        rows: tables().flatMap((t) => keyConstraints(t).map((k): Value[] => [t.id.projectId, t.id.datasetId, k.name, t.id.projectId, t.id.datasetId, t.id.tableId, k.type, 'NO', 'NO', 'NO'])),
      };
    case 'PARAMETERS': {
      // One row per argument (1-based), and a row 0 for a function's declared return type.
      const rows: Value[][] = [];
      for (const d of datasets) {
        for (const r of cat.listChildren('routines', projectId, d)) {
          const name = ((r.routineReference ?? {}) as Record<string, string>).routineId ?? '';
          if (r.returnType) rows.push([projectId, d, name, 0n, null, 'YES', null, standardSqlTypeText(r.returnType), null, null]);
          ((r.arguments ?? []) as Record<string, unknown>[]).forEach((a, i) => {
            const type = a.argumentKind === 'ANY_TYPE' ? 'ANY TYPE' : a.dataType ? standardSqlTypeText(a.dataType) : null;
            rows.push([projectId, d, name, BigInt(i + 1), (a.mode as string | undefined) ?? null, 'NO', (a.name as string | undefined) ?? null, type, null, null]);
          });
        }
      }
      return {
        columns: [col('specific_catalog'), col('specific_schema'), col('specific_name'), col('ordinal_position', T.INT64), col('parameter_mode'), col('is_result'), col('parameter_name'), col('data_type'), col('parameter_default'), col('is_aggregate')],
        rows,
      };
    }
    case 'JOBS':
    case 'JOBS_BY_PROJECT':
    case 'JOBS_BY_USER':
    case 'JOBS_TIMELINE':
    case 'JOBS_TIMELINE_BY_PROJECT':
    case 'JOBS_TIMELINE_BY_USER':
      return jobsTable(an, jobsTableOf(view)!);
    default:
      throw notFound(`Not found: Table ${projectId}:${qualifier.join('.')}.INFORMATION_SCHEMA.${view} was not found in location ${locationOf(an)}`);
  }
}

/** OBJECT_PRIVILEGES' filter: object_name is required, object_schema as well for tables and views. */
function objectScope(f: ObjectFilter | undefined, loc: A.Loc): ObjectFilter {
  if (!f?.name) {
    throw sqlError(
      'INFORMATION_SCHEMA.OBJECT_PRIVILEGES requires a WHERE clause with object_name = a dataset, or object_schema = a dataset and object_name = a table or view',
      loc,
    );
  }
  return f;
}

/**
 * A table's key constraints (its resource's tableConstraints; never enforced), named as the
 * INFORMATION_SCHEMA pages show them: `table.pk$`, a foreign key by its name qualified with its table
 * (information-schema-key-column-usage.md, Example 2: CONSTRAINT composite_fk on table composite_fk is listed as
 * `composite_fk.composite_fk`), an unnamed one `table.fk$<n>` (this emulator's).
 */
interface KeyConstraint {
  name: string;
  type: 'PRIMARY KEY' | 'FOREIGN KEY';
  columns: string[];
  /** A foreign key's referenced table and columns. */
  referenced?: { projectId: string; datasetId: string; tableId: string; columns: string[] };
}

/** A table's primary key columns, in key order (undefined without one, or for a table that is gone). */
function primaryKeyOf(t: TableInfo | undefined): string[] | undefined {
  return (t?.resource.tableConstraints as { primaryKey?: { columns?: string[] } } | undefined)?.primaryKey?.columns;
}

function keyConstraints(t: TableInfo): KeyConstraint[] {
  const tc = t.resource.tableConstraints as
    | { primaryKey?: { columns?: string[] }; foreignKeys?: { name?: string; referencedTable?: { projectId: string; datasetId: string; tableId: string }; columnReferences?: { referencingColumn: string; referencedColumn: string }[] }[] }
    | undefined;
  const out: KeyConstraint[] = [];
  if (tc?.primaryKey?.columns?.length) out.push({ name: `${t.id.tableId}.pk$`, type: 'PRIMARY KEY', columns: tc.primaryKey.columns });
  (tc?.foreignKeys ?? []).forEach((fk, i) => {
    const refs = fk.columnReferences ?? [];
    out.push({
      name: `${t.id.tableId}.${fk.name ?? `fk$${i + 1}`}`,
      type: 'FOREIGN KEY',
      columns: refs.map((r) => r.referencingColumn),
      ...(fk.referencedTable ? { referenced: { ...fk.referencedTable, columns: refs.map((r) => r.referencedColumn) } } : {}),
    });
  });
  return out;
}

/** A routine resource's StandardSqlDataType as SQL type text (ARRAY<STRUCT<a INT64>>). */
function standardSqlTypeText(j: unknown): string {
  const t = j as { typeKind?: string; arrayElementType?: unknown; structType?: { fields?: { name?: string; type?: unknown }[] }; rangeElementType?: unknown };
  if (t.typeKind === 'ARRAY') return `ARRAY<${standardSqlTypeText(t.arrayElementType)}>`;
  if (t.typeKind === 'STRUCT') return `STRUCT<${(t.structType?.fields ?? []).map((f) => `${f.name ? `${f.name} ` : ''}${standardSqlTypeText(f.type)}`).join(', ')}>`;
  if (t.typeKind === 'RANGE') return `RANGE<${standardSqlTypeText(t.rangeElementType)}>`;
  return t.typeKind ?? '';
}

/** ROUTINES.data_type: the declared return type; a table function's RETURNS TABLE<...> as TABLE<name type, ...>; else NULL. */
function routineDataType(r: Record<string, unknown>): string | null {
  if (r.returnType) return standardSqlTypeText(r.returnType);
  const table = r.returnTableType as { columns?: { name?: string; type?: unknown }[] } | undefined;
  return table ? `TABLE<${(table.columns ?? []).map((c) => `${c.name} ${standardSqlTypeText(c.type)}`).join(', ')}>` : null;
}

const ROUTINE_TYPE: Record<string, string> = {
  SCALAR_FUNCTION: 'FUNCTION',
  AGGREGATE_FUNCTION: 'AGGREGATE FUNCTION',
  TABLE_VALUED_FUNCTION: 'TABLE FUNCTION',
  PROCEDURE: 'PROCEDURE',
};

const errorResultType: SqlType = { kind: 'STRUCT', fields: [{ name: 'reason', type: S }, { name: 'location', type: S }, { name: 'message', type: S }] };

function jobsTable(an: Analyzer, view: 'JOBS' | 'JOBS_TIMELINE'): VirtualTable {
  if (an.env.jobs && view === 'JOBS') return an.env.jobs();
  // Spec §1.6.5: the engine fills `_bqemu_jobs.JOBS` / `JOBS_TIMELINE` from the job registry before execution.
  return { columns: view === 'JOBS' ? JOBS_COLUMNS : JOBS_TIMELINE_COLUMNS, rows: [] };
}

/** INFORMATION_SCHEMA collation_name: a STRING's (or ARRAY<STRING>'s) collation, else the text NULL. */
function collationName(t: SqlType): string {
  const el = t.kind === 'ARRAY' ? t.element : t;
  return el.kind === 'STRING' && el.collation ? el.collation : 'NULL';
}

/** Which of object_name and object_schema a WHERE clause's top-level AND terms set equal to a constant (OBJECT_PRIVILEGES). */
export function objectFilterOf(where: A.Expr | undefined): ObjectFilter {
  const pinned = new Set<string>();
  const constant = (e: A.Expr): boolean => /Literal$/.test(e.kind) || e.kind === 'NamedParam' || e.kind === 'PositionalParam';
  const column = (e: A.Expr): string | undefined => (e.kind === 'PathExpr' ? e.parts[e.parts.length - 1]!.toLowerCase() : undefined);
  const visit = (e: A.Expr): void => {
    if (e.kind !== 'BinaryExpr') return;
    if (e.op === 'AND') {
      visit(e.left);
      visit(e.right);
    } else if (e.op === '=') {
      const c = constant(e.right) ? column(e.left) : constant(e.left) ? column(e.right) : undefined;
      if (c) pinned.add(c);
    }
  };
  if (where) visit(where);
  return { name: pinned.has('object_name'), schema: pinned.has('object_schema') };
}
