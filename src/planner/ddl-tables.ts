// CREATE TABLE / VIEW / MATERIALIZED VIEW / SNAPSHOT, DROP of every kind, and CREATE /
// UNDROP SCHEMA. Each returns the QueryResult fields the REST job reports:
// statementType, ddlOperationPerformed, ddlTargetTable (as the service does).
import type * as A from '../../grammar/ast.js';
import { hasRecursiveWith } from '../../grammar/recursive-with.js';
import { asOfMicros } from '../analyzer/as-of.js';
import { sessionTableName, tableIdOf, tableNotFound, splitPath } from '../analyzer/names.js';
import { policiesOf, refuseLastPolicyDrop, requireFullRowAccess } from '../analyzer/row-access.js';
import { checkIncrementalMv } from './mv-incremental.js';
import { checkMvClustering, checkMvCollatedSortKeys, checkMvDefinition, checkMvOptions, checkMvPartitioning, refuseParameterizedTypes } from './mv-rules.js';
import { findUdf } from '../analyzer/sql-udfs.js';
import { project } from '../analyzer/query.js';
import type { Rel } from '../analyzer/resolved.js';
import { checkResultArrays } from '../executor/result-check.js';
import type { TableId } from '../storage/api.js';
import { tableRestField, type Column } from '../types/schema.js';
import type { Batch } from '../types/vector.js';
import { QueryError, type QueryResult } from './api.js';
import type { Session } from './session.js';
import { sqlError } from '../analyzer/errors.js';
import { checkPartitionFilters } from './partition-filter.js';
import { checked, coerceForWrite, queryColumn, writeTarget } from './dml.js';
import { fq, statementResult } from './statement-type.js';
import { dropSearchIndex } from './search-index.js';
import { dropPropertyGraph } from './ddl-graph.js';
import { createExternalTable } from './data-statements.js';
import { partitioning, partitionSpecText } from './partition-spec.js';
import { already, checkFineGrainedTemp, optionsToResource, clustering, checkTableOptions, checkKindOptions, checkPartitionOptions, checkSchemaOptions, ensureTempDataset, targetId, mvRefreshSettings } from './ddl-common.js';
import { tableConstraints, columnsFromDefs, checkColumnName, checkTypeFieldNames, checkCollationName, defaultCollated, columnOptionFields, schemaExtras } from './ddl-columns.js';
import { findNode, someNode } from '../analyzer/ast-search.js';

const result = statementResult;

// ---------------------------------------------------------------- CREATE TABLE / VIEW

/**
 * The clauses each CREATE TABLE form takes (data-definition-language): CREATE TABLE COPY, CREATE TABLE CLONE and
 * CREATE SNAPSHOT TABLE ... CLONE take OPTIONS only (the new table's shape, partitioning and clustering are the
 * source's); CREATE EXTERNAL TABLE takes a column list, WITH CONNECTION, WITH PARTITION COLUMNS and OPTIONS.
 */
function checkFormClauses(st: A.CreateTableStmt): void {
  const form = st.external ? 'CREATE EXTERNAL TABLE' : st.snapshot ? 'CREATE SNAPSHOT TABLE' : st.clone ? 'CREATE TABLE CLONE' : st.copy ? 'CREATE TABLE COPY' : undefined;
  if (!form) return;
  const clauses: [unknown, string][] = [
    [st.external ? undefined : st.columns, 'a column list'],
    [st.external ? (st.like ?? st.copy ?? st.clone) : undefined, st.like ? 'LIKE' : st.copy ? 'COPY' : 'CLONE'],
    [st.defaultCollate, 'DEFAULT COLLATE'],
    [st.partitionBy, 'PARTITION BY'],
    [st.clusterBy, 'CLUSTER BY'],
    [st.external ? undefined : st.withConnection, 'WITH CONNECTION'],
    [st.asQuery, 'AS query'],
  ];
  const found = clauses.find(([v]) => v !== undefined);
  const takes = st.external ? 'a column list, WITH CONNECTION, WITH PARTITION COLUMNS and OPTIONS' : 'OPTIONS';
  if (found) throw sqlError(`${form} cannot have ${found[1]}; it takes only ${takes}`, st.loc);
}

export async function createTable(s: Session, st: A.CreateTableStmt): Promise<QueryResult> {
  checkFormClauses(st);
  let id: TableId;
  const parts = splitPath(st.name);
  if (st.temp) {
    const name = parts.length === 1 ? parts[0]! : sessionTableName(parts);
    if (name === undefined) throw sqlError('CREATE TEMP TABLE requires an unqualified table name', st.loc);
    const ds = await ensureTempDataset(s);
    id = { ...ds, tableId: name };
  } else {
    // multi-statement-queries.md: CREATE TABLE's target is temporary if and only if TEMP is written.
    if (sessionTableName(parts) !== undefined) throw sqlError('CREATE TABLE with the _SESSION qualifier requires TEMP: _SESSION names only temporary tables', st.loc);
    id = tableIdOf(s.analyzer(), st.name, st.loc, { skipTemp: true });
  }
  const cat = s.ctx.catalog;
  if (!cat.getDataset(id.projectId, id.datasetId)) throw tableNotFound(s.analyzer(), id);
  const type = st.snapshot ? 'CREATE_SNAPSHOT_TABLE' : st.asQuery ? 'CREATE_TABLE_AS_SELECT' : 'CREATE_TABLE';
  const existing = cat.getTable(id);
  if (existing && st.ifNotExists) return result(type, { ddlOperationPerformed: 'SKIP', ddlTargetTable: id });
  if (existing && !st.orReplace) throw already('Table', fq(id));
  if (st.external) {
    if (st.temp) throw sqlError('CREATE TEMP EXTERNAL TABLE is not supported', st.loc);
    return createExternalTable(s, st, id, existing !== undefined);
  }
  // Hive partition keys come from the paths of an external table's files; a stored table has none.
  if (st.withPartitionColumns) throw sqlError('WITH PARTITION COLUMNS is only valid in CREATE EXTERNAL TABLE', st.loc);
  let columns: Column[] = [];
  let rows: Batch[] | AsyncIterable<Batch> = [];
  /** LIKE / COPY / CLONE: the source's metadata, which the statement's own clauses override. */
  const inherited: Record<string, unknown> = {};
  /** CLONE ... FOR SYSTEM_TIME AS OF: the source as of that instant (the catalog's table history). */
  let asOfMs: number | undefined;
  /** COPY / CLONE / SNAPSHOT: the source's row access policies, which the new table gets. */
  let copiedPolicies: readonly Record<string, unknown>[] = [];
  // LIKE copies the source's columns: a column list of its own is refused (data-definition-language: CREATE TABLE LIKE).
  if (st.like && st.columns) throw sqlError('CREATE TABLE LIKE cannot have a column list; the columns come from the source table', st.loc);
  if (st.like || st.copy || st.clone) {
    const src = targetId(s, (st.like ?? st.copy ?? st.clone!.source)!, st.loc);
    const info = cat.getTable(src);
    if (!info) throw tableNotFound(s.analyzer(), src);
    // Snapshots, clones and copies are of tables (table-snapshots-intro, table-clones-intro: not of views or materialized views).
    if ((st.copy || st.clone) && info.kind !== 'TABLE' && info.kind !== 'SNAPSHOT') {
      throw sqlError(`${fq(src)} is a ${info.kind === 'MATERIALIZED_VIEW' ? 'materialized view' : info.kind.toLowerCase()}; ${st.snapshot ? 'CREATE SNAPSHOT TABLE' : st.clone ? 'CREATE TABLE CLONE' : 'CREATE TABLE COPY'} takes a table`, st.loc);
    }
    columns = info.columns.slice();
    // The source's columns come with their descriptions and defaults (the REST schema keeps them).
    if (!st.asQuery && !st.columns && !st.defaultCollate && info.resource.schema !== undefined) inherited.schema = info.resource.schema;
    for (const k of ['description', 'friendlyName', 'labels', 'timePartitioning', 'rangePartitioning', 'clustering', 'requirePartitionFilter']) {
      if (info.resource[k] !== undefined) inherited[k] = info.resource[k];
    }
    if (st.copy || st.clone) {
      // using-row-level-security-with-features.md, copy jobs and table snapshots: a copy of a table with row access
      // policies needs the TRUE filter on it, and takes its policies along (below, once the table exists).
      requireFullRowAccess(cat, src, s.ctx.sessionUser, st.loc);
      copiedPolicies = policiesOf(cat, src);
      // information-schema-table-constraints: a copy, clone or snapshot takes the source's table constraints.
      if (info.resource.tableConstraints !== undefined) inherited.tableConstraints = info.resource.tableConstraints;
      if (st.clone?.systemTime) {
        // CREATE SNAPSHOT TABLE: FOR SYSTEM_TIME AS OF is for a snapshot of a table or clone, not a copy of a snapshot.
        if (st.snapshot && info.kind === 'SNAPSHOT') throw sqlError(`FOR SYSTEM_TIME AS OF cannot be used when copying the table snapshot ${fq(src)}`, st.clone.systemTime.loc);
        asOfMs = Number(asOfMicros(s.analyzer(), st.clone.systemTime)) / 1000;
      }
      const rel: Rel = { kind: 'scan', table: src, tableColumns: info.columns.map((_, i) => i), columns: info.columns.map((c, i) => ({ id: i + 1, name: c.name, type: c.type })), ...(asOfMs !== undefined ? { asOfMs } : {}) };
      rows = await s.run(rel);
    }
  }
  // LIKE ... AS query: the source's metadata and columns, the query's rows.
  const likeColumns = st.like ? columns : undefined;
  if (st.asQuery && !st.copy && !st.clone) {
    const an = s.analyzer();
    const q = s.analyze(st.asQuery, {}, an);
    checkPartitionFilters(s, q.plan);
    // query-syntax.md "Create a table with a value table": not as the top-level query (a subquery of one is fine).
    if (q.isValueTable) throw sqlError('CREATE TABLE AS SELECT with a value table is not supported', st.asQuery.loc);
    const names = q.outputNames;
    let rel = q.plan;
    if (st.columns) {
      columns = columnsFromDefs(st.columns);
      if (columns.length !== rel.columns.length) {
        throw sqlError(`The number of columns in the column definition list does not match the number of columns produced by the query`, st.loc);
      }
      const exprs = rel.columns.map((_, i) => coerceForWrite(queryColumn(rel, i), columns[i]!, st.asQuery!.loc));
      rel = project(an, rel, exprs, columns.map((c) => c.name));
    } else if (likeColumns) {
      // CREATE TABLE Details: with LIKE and AS query_statement, the query's columns match the LIKE table's (by name, in order).
      const like = likeColumns;
      if (like.length !== names.length || like.some((c, i) => c.name.toLowerCase() !== (names[i] ?? '').toLowerCase())) {
        throw sqlError(`The columns of the query (${names.join(', ')}) do not match the columns of the LIKE table (${like.map((c) => c.name).join(', ')})`, st.asQuery.loc);
      }
      columns = like;
      const exprs = rel.columns.map((_, i) => coerceForWrite(queryColumn(rel, i), like[i]!, st.asQuery!.loc));
      rel = project(an, rel, exprs, like.map((c) => c.name));
    } else {
      q.plan.columns.forEach((c, i) => {
        if (!(q.outputNames as string[])[i] || /^f\d+_$/.test(names[i]!) && !c.name) {
          throw sqlError(`CREATE TABLE columns must be named, but column ${i + 1} has no name`, st.asQuery!.loc);
        }
      });
      const lower = new Set<string>();
      for (const n of names) {
        if (lower.has(n.toLowerCase())) throw sqlError(`CREATE TABLE has columns with duplicate name ${n}`, st.asQuery.loc);
        lower.add(n.toLowerCase());
        // The query's names become column names, with their rules (schemas.md: Column names, Flexible column names).
        checkColumnName(n, st.asQuery.loc);
      }
      columns = rel.columns.map((c, i) => ({ name: names[i]!, type: c.type, required: false }));
      for (const c of columns) checkTypeFieldNames(c.type, st.asQuery.loc);
    }
    // Written as the query makes them (a large result is never held whole), each batch checked on its way.
    rows = checked(s.streamCharged(rel), (b) => {
      checkResultArrays(columns, [b]);
      // NOT NULL columns of the column list take no NULL (as INSERT's REQUIRED check).
      columns.forEach((c, i) => {
        const v = c.required ? b.columns[i]!.nulls : undefined;
        if (v) for (let r = 0; r < b.length; r++) if (v[r]) throw new QueryError(`Required field ${c.name} cannot be null`, 'invalidQuery');
      });
    });
  } else if (st.columns) {
    columns = columnsFromDefs(st.columns);
  } else if (!st.like && !st.copy && !st.clone) throw sqlError('CREATE TABLE requires a column list or AS SELECT', st.loc);
  // DEFAULT COLLATE (else the dataset's defaultCollation) for STRING columns without their own.
  checkCollationName(st.defaultCollate, st.loc);
  const defaultCollation = st.defaultCollate ?? (cat.getDataset(id.projectId, id.datasetId)?.resource.defaultCollation as string | undefined);
  if (defaultCollation) columns = columns.map((c) => ({ ...c, type: defaultCollated(c.type, st.columns?.find((d) => d.name.toLowerCase() === c.name.toLowerCase()), defaultCollation) }));
  if (st.snapshot) checkKindOptions(st.options, 'SNAPSHOT', 'CREATE SNAPSHOT TABLE');
  else checkTableOptions(st.options, 'CREATE TABLE');
  const resource = { ...inherited, ...(await optionsToResource(s, st.options)) };
  checkFineGrainedTemp(resource, st.temp, st.loc);
  // A new table takes its dataset's default rounding mode when it sets none (datasets: defaultRoundingMode).
  const dsRounding = cat.getDataset(id.projectId, id.datasetId)?.resource.defaultRoundingMode;
  if (resource.defaultRoundingMode === undefined && dsRounding && !st.snapshot && !st.clone && !st.copy) resource.defaultRoundingMode = dsRounding;
  if (st.partitionBy) {
    delete resource.timePartitioning;
    delete resource.rangePartitioning;
  }
  if (st.defaultCollate) resource.defaultCollation = st.defaultCollate;
  if (st.clone && !st.snapshot) {
    // A clone records its base, as a CLONE copy job does (tables.get cloneDefinition, INFORMATION_SCHEMA table_type CLONE).
    const base = targetId(s, st.clone.source, st.loc);
    resource.cloneDefinition = {
      baseTableReference: { projectId: base.projectId, datasetId: base.datasetId, tableId: base.tableId },
      cloneTime: new Date(asOfMs ?? Number(s.exec.eval.nowMicros / 1000n)).toISOString(),
    };
  }
  if (st.snapshot && st.clone) {
    // CREATE SNAPSHOT TABLE: a SNAPSHOT of its base table at that instant (INFORMATION_SCHEMA.TABLE_SNAPSHOTS, tables.get).
    const base = targetId(s, st.clone.source, st.loc);
    resource.type = 'SNAPSHOT';
    // table-snapshots-intro.md, Limitations: a snapshot keeps no partition expiration of its base.
    if (resource.timePartitioning) {
      const { expirationMs: _dropped, ...tp } = resource.timePartitioning as Record<string, unknown>;
      resource.timePartitioning = tp;
    }
    resource.snapshotDefinition = {
      baseTableReference: { projectId: base.projectId, datasetId: base.datasetId, tableId: base.tableId },
      snapshotTime: new Date(asOfMs ?? Number(s.exec.eval.nowMicros / 1000n)).toISOString(),
    };
  }
  if (st.clusterBy?.length) resource.clustering = clustering(st.clusterBy, columns);
  if (st.partitionBy) Object.assign(resource, await partitioning(s, st.partitionBy, columns, resource));
  if (st.asQuery) notIngestionTime(resource, st.partitionBy?.loc ?? st.loc);
  // A managed (BigLake) table's connection: biglakeConfiguration.connectionId beside its storage_uri / formats.
  if (st.withConnection && !st.external) resource.biglakeConfiguration = { ...(resource.biglakeConfiguration as object | undefined), connectionId: st.withConnection.join('.') };
  checkPartitionOptions(st.options, resource);
  if (existing && existing.kind === 'TABLE') {
    const was = partitionSpecText(existing.resource);
    const now = partitionSpecText(resource);
    if (was.key !== now.key) {
      throw sqlError(`Cannot replace a table with a different partitioning spec. Instead, DROP the table, and then recreate it. New partitioning spec is ${now.text} and existing spec is ${was.text}`, st.loc);
    }
  }
  const constraints = tableConstraints(s, st.columns ?? [], st.constraints ?? [], st.loc, columns, id);
  if (constraints) resource.tableConstraints = constraints;
  const fields = await schemaExtras(s, columns, st.columns, resource.defaultRoundingMode as string | undefined);
  if (fields) resource.schema = { fields };
  // One commit: the table appears with its rows, in place of the one it replaces (readers see one or the other).
  await cat.createTable(id, columns, { resource, orReplace: existing !== undefined, temporary: st.temp, rows });
  if (st.temp) s.tempTables.set(id.tableId, id);
  for (const p of copiedPolicies) {
    const ref = p.rowAccessPolicyReference as { policyId: string };
    await cat.putChild('rowAccessPolicies', id.projectId, id.datasetId, ref.policyId, { ...p, rowAccessPolicyReference: { ...id, policyId: ref.policyId } }, id.tableId);
  }
  return result(type, { ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE', ddlTargetTable: id });
}

/**
 * CREATE TABLE Limitations (and partition_expression): an ingestion-time partitioned table is never made from a
 * query's result, by its own PARTITION BY _PARTITIONDATE / _PARTITIONTIME or one a LIKE table passes on.
 */
function notIngestionTime(resource: Record<string, unknown>, loc: A.Loc): void {
  const tp = resource.timePartitioning as { field?: string } | undefined;
  if (tp && !tp.field) throw sqlError('An ingestion-time partitioned table (_PARTITIONTIME / _PARTITIONDATE) cannot be created from the result of a query; create it, then INSERT', loc);
}

/** Functions whose value changes from one run to the next, which an incremental materialized view cannot keep. */
const NONDETERMINISTIC = new Set(['CURRENT_DATE', 'CURRENT_DATETIME', 'CURRENT_TIME', 'CURRENT_TIMESTAMP', 'RAND', 'GENERATE_UUID', 'SESSION_USER']);

/**
 * A materialized view's query may not call a non-deterministic function (materialized-views-create: they are not
 * supported in incremental materialized views), unless allow_non_incremental_definition makes it a non-incremental one.
 */
function refuseNondeterministicMv(st: A.CreateViewStmt, resource: Record<string, unknown>): void {
  if ((resource.options as Record<string, unknown> | undefined)?.allow_non_incremental_definition === true) return;
  let hit: A.FunctionCall | undefined;
  someNode(st.query, (n) => {
    const f = n as A.FunctionCall;
    if (n.kind === 'FunctionCall' && f.name.length === 1 && NONDETERMINISTIC.has(f.name[0]!.toUpperCase())) hit = f;
    return hit !== undefined;
  });
  if (hit) throw sqlError(`Materialized view query cannot use the non-deterministic function ${hit.name[0]!.toUpperCase()}; only a view with allow_non_incremental_definition = true may`, hit.loc);
}

/** The value of a materialized view's allow_non_incremental_definition option (false when absent). */
async function nonIncrementalOption(s: Session, options: readonly A.OptionEntry[] | undefined): Promise<boolean> {
  const o = options?.find((e) => e.name.toLowerCase() === 'allow_non_incremental_definition');
  return o !== undefined && (await s.evalScalar(o.value)).value === true;
}

export async function createView(s: Session, st: A.CreateViewStmt): Promise<QueryResult> {
  // PARTITION BY and CLUSTER BY are a materialized view's clauses (data-definition-language: CREATE VIEW takes a
  // column list, OPTIONS and AS query).
  if (!st.materialized && (st.partitionBy || st.clusterBy)) throw sqlError(`CREATE VIEW cannot have ${st.partitionBy ? 'PARTITION BY' : 'CLUSTER BY'}; only a materialized view is partitioned or clustered`, st.loc);
  // query-syntax.md, CTE rules and constraints: WITH RECURSIVE isn't allowed in materialized views.
  if (st.materialized && hasRecursiveWith(st.query)) throw sqlError('WITH RECURSIVE is not allowed in a materialized view', st.loc);
  if (st.materialized) checkMvDefinition(st);
  refuseParameterizedTypes(st);
  const id = targetId(s, st.name, st.loc);
  const cat = s.ctx.catalog;
  if (!cat.getDataset(id.projectId, id.datasetId)) throw tableNotFound(s.analyzer(), id);
  const type = st.materialized ? 'CREATE_MATERIALIZED_VIEW' : 'CREATE_VIEW';
  const existing = cat.getTable(id);
  if (existing && st.ifNotExists) return result(type, { ddlOperationPerformed: 'SKIP', ddlTargetTable: id });
  if (existing && !st.orReplace) throw already('Table', fq(id));
  // A view's query is stored and rerun later: it may not take the request's query parameters.
  const param = findNode(st.query, ['NamedParam', 'PositionalParam']);
  if (param) throw sqlError(`Query parameters cannot be used in the query of a view`, param.loc);
  // Validate the body as the view will run: no default dataset (views-intro.md, Limitations: a reference in a view is
  // qualified with a dataset; the project running the DDL stays the default project when the view is in it, and a
  // view made in another project has none, data-definition-language.md, Default project in view body),
  // and no temporary table or function of this script (the view outlives them; its query names only permanent objects).
  const saved = s.env;
  const incremental = st.materialized && !(await nonIncrementalOption(s, st.options));
  const q = (() => {
    const otherProject = id.projectId !== saved.projectId ? { noDefaultProject: true } : {};
    s.env = { ...saved, defaultDataset: undefined, storedBody: true, tempTables: new Map(), tempFunctions: new Map(), ...otherProject, ...(st.materialized ? { materializedViewQuery: true } : {}) };
    try {
      const analyzed = s.analyze(st.query);
      if (incremental) {
        const an = s.analyzer();
        checkIncrementalMv(st.query, analyzed.plan, (n) => findUdf(an, n.name) !== undefined, st.loc);
      }
      return analyzed;
    } finally {
      s.env = saved;
    }
  })();
  const what = st.materialized ? 'CREATE MATERIALIZED VIEW' : 'CREATE VIEW';
  if (st.columns && st.columns.length !== q.plan.columns.length) {
    // The reference analyzer's wording (resolver_stmt.cc, a view's explicit column list).
    throw sqlError(`The number of view column names (${st.columns.length}) must be equal to the number of columns from the view query (${q.plan.columns.length})`, st.loc);
  }
  // As CREATE TABLE AS SELECT: every column needs a name (anonymous ones get `f<n>_` internally).
  if (!st.columns) {
    q.plan.columns.forEach((c, i) => {
      const n = (q.outputNames as (string | undefined)[])[i];
      if (!n || (/^f\d+_$/.test(n) && !c.name)) throw sqlError(`${what} columns must be named, but column ${i + 1} has no name`, st.query.loc);
    });
  }
  const names = st.columns ? st.columns.map((c) => c.name) : q.outputNames;
  const columns: Column[] = q.plan.columns.map((c, i) => ({ name: names[i] ?? `f${i}_`, type: c.type, required: false }));
  checkKindOptions(st.options, st.materialized ? 'MATERIALIZED_VIEW' : 'VIEW', what);
  const resource = await optionsToResource(s, st.options);
  // A view column list's OPTIONS: a description only (data-definition-language: view_column_option_list), kept on the schema's field.
  if (st.columns?.some((c) => c.options?.length)) {
    const fields = columns.map((c) => tableRestField(c.name, c.type, c.required));
    for (const [i, c] of st.columns.entries()) {
      for (const o of c.options ?? []) if (o.name.toLowerCase() !== 'description') throw sqlError(`Unknown option ${o.name} for a view column`, o.value.loc);
      await columnOptionFields(s, c.options, fields[i]!);
    }
    resource.schema = { fields };
  }
  if (st.materialized) {
    refuseNondeterministicMv(st, resource);
    if (st.clusterBy?.length) resource.clustering = clustering(st.clusterBy, columns);
    if (st.partitionBy) Object.assign(resource, await partitioning(s, st.partitionBy, columns, resource));
    notIngestionTime(resource, st.partitionBy?.loc ?? st.loc);
    if (st.partitionBy) checkMvPartitioning(cat, q.plan, resource, names, st.partitionBy.loc);
    checkMvClustering(q.plan, names, st.clusterBy);
    checkMvCollatedSortKeys(q.plan, st.loc);
    await checkMvOptions(s, st.options, false, false);
  }
  // The refresh settings tables.get shows (defaults, filled at creation: enabled, every 30 minutes); dbt compares them to its config.
  if (st.materialized) resource.materializedView = mvRefreshSettings(resource, { query: st.queryText });
  const rows = st.materialized ? await s.run(q.plan) : [];
  // An existing object here means OR REPLACE: the new one takes its place, with its rows, in one commit.
  await cat.createTable(id, columns, { kind: st.materialized ? 'MATERIALIZED_VIEW' : 'VIEW', viewQuery: st.queryText, resource, orReplace: st.orReplace, rows });
  return result(type, { ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE', ddlTargetTable: id });
}

// ---------------------------------------------------------------- DROP

export async function drop(s: Session, st: A.DropStmt): Promise<QueryResult> {
  const cat = s.ctx.catalog;
  const ot = st.objectType;
  if (ot === 'PROPERTY GRAPH') return dropPropertyGraph(s, st);
  if (ot === 'SCHEMA') {
    const parts = splitPath(st.name);
    const projectId = parts.length > 1 ? parts[0]! : s.env.projectId;
    const datasetId = parts[parts.length - 1]!;
    const exists = !!cat.getDataset(projectId, datasetId);
    const ddlTargetDataset = { projectId, datasetId };
    if (!exists && st.ifExists) return result('DROP_SCHEMA', { ddlOperationPerformed: 'SKIP', statistics: { ddlTargetDataset } });
    if (!exists) throw new QueryError(`Not found: Dataset ${projectId}:${datasetId}`, 'notFound', 404);
    // Without CASCADE a dataset that holds anything (tables, routines, models, property graphs) is refused by the
    // catalog (engine/datasets.ts: resourceInUse, error-messages.md), the one place that rule lives.
    await cat.dropDataset(projectId, datasetId, st.mode === 'CASCADE', st.ifExists);
    return result('DROP_SCHEMA', { ddlOperationPerformed: 'DROP', statistics: { ddlTargetDataset } });
  }
  if (ot === 'FUNCTION' || ot === 'TABLE FUNCTION' || ot === 'AGGREGATE FUNCTION' || ot === 'PROCEDURE' || ot === 'MODEL') {
    const kind = ot === 'MODEL' ? 'models' : 'routines';
    const stmtType = ot === 'MODEL' ? 'DROP_MODEL' : ot === 'PROCEDURE' ? 'DROP_PROCEDURE' : ot === 'TABLE FUNCTION' ? 'DROP_TABLE_FUNCTION' : 'DROP_FUNCTION';
    const parts = splitPath(st.name);
    if (parts.length === 1 && kind === 'routines' && s.tempFunctions.delete(parts[0]!.toUpperCase())) {
      return result(stmtType, { ddlOperationPerformed: 'DROP' });
    }
    const id = targetId(s, st.name, st.loc);
    // Each DROP names its kind of routine (data-definition-language: DROP FUNCTION / TABLE FUNCTION / PROCEDURE).
    const rt = kind === 'routines' ? (cat.getChild('routines', id.projectId, id.datasetId, id.tableId)?.routineType as string | undefined) : undefined;
    const fits: Record<string, readonly string[]> = { FUNCTION: ['SCALAR_FUNCTION', 'AGGREGATE_FUNCTION'], 'AGGREGATE FUNCTION': ['AGGREGATE_FUNCTION'], 'TABLE FUNCTION': ['TABLE_VALUED_FUNCTION'], PROCEDURE: ['PROCEDURE'] };
    if (rt && !fits[ot]!.includes(rt)) {
      const is = rt === 'TABLE_VALUED_FUNCTION' ? 'a table function' : rt === 'PROCEDURE' ? 'a procedure' : rt === 'AGGREGATE_FUNCTION' ? 'an aggregate function' : 'a function';
      throw sqlError(`${id.projectId}:${id.datasetId}.${id.tableId} is ${is}, not ${ot === 'PROCEDURE' ? 'a procedure' : ot === 'TABLE FUNCTION' ? 'a table function' : ot === 'AGGREGATE FUNCTION' ? 'an aggregate function' : 'a function'}`, st.loc);
    }
    const ok = await cat.deleteChild(kind, id.projectId, id.datasetId, id.tableId);
    if (!ok && !st.ifExists) {
      throw new QueryError(`Not found: ${ot === 'MODEL' ? 'Model' : 'Function'} ${id.projectId}:${id.datasetId}.${id.tableId}`, 'notFound', 404);
    }
    const routine = { projectId: id.projectId, datasetId: id.datasetId, routineId: id.tableId };
    return result(stmtType, { ddlOperationPerformed: ok ? 'DROP' : 'SKIP', ...(kind === 'routines' ? { ddlTargetRoutine: routine } : {}) });
  }
  if ((ot === 'ROW ACCESS POLICY' || ot === 'ALL ROW ACCESS POLICIES') && st.on) {
    const info = writeTarget(s, st.on, st.loc);
    const { projectId, datasetId, tableId } = info.id;
    const ids = ot === 'ROW ACCESS POLICY' ? [splitPath(st.name).pop()!] : cat.listChildren('rowAccessPolicies', projectId, datasetId, tableId).map((p) => ((p.rowAccessPolicyReference as { policyId?: string } | undefined)?.policyId ?? ''));
    if (ot === 'ROW ACCESS POLICY') {
      refuseLastPolicyDrop(policiesOf(cat, info.id), ids, info.id, 'sql', st.loc);
    }
    let dropped = false;
    for (const pid of ids) dropped = (await cat.deleteChild('rowAccessPolicies', projectId, datasetId, pid, tableId)) || dropped;
    if (!dropped && ot === 'ROW ACCESS POLICY' && !st.ifExists) throw new QueryError(`Not found: Row access policy ${ids[0]}`, 'notFound', 404);
    // Job.md, JobStatistics2.ddlTargetRowAccessPolicy: the policy a DROP ROW ACCESS POLICY names.
    const target = ot === 'ROW ACCESS POLICY' ? { statistics: { ddlTargetRowAccessPolicy: { projectId, datasetId, tableId, policyId: ids[0]! } } } : {};
    const done = result('DROP_ROW_ACCESS_POLICY', { ddlOperationPerformed: dropped ? 'DROP' : 'SKIP', ddlTargetTable: info.id, ...target });
    // JobStatistics2: DROP ALL ROW ACCESS POLICIES reports DROP_ROW_ACCESS_POLICY ("DROP [ALL] ROW ACCESS
    // POLICY|POLICIES") and, for it only, ddlAffectedRowAccessPolicyCount.
    if (ot === 'ALL ROW ACCESS POLICIES') return { ...done, statistics: { ddlAffectedRowAccessPolicyCount: String(ids.length) } } as QueryResult;
    return done;
  }
  if (ot === 'SEARCH INDEX' || ot === 'VECTOR INDEX') return dropSearchIndex(s, st);
  if (ot === 'ROW ACCESS POLICY' || ot === 'ALL ROW ACCESS POLICIES') return result('DROP_ROW_ACCESS_POLICY', { ddlOperationPerformed: 'DROP' });
  const parts = splitPath(st.name);
  const tempName = parts.length === 1 ? parts[0]! : sessionTableName(parts);
  const temp = tempName === undefined ? undefined : s.tempTables.get(tempName);
  if (!temp && tempName !== undefined && parts.length === 2 && st.ifExists) return result('DROP_TABLE', { ddlOperationPerformed: 'SKIP' });
  const id = temp ?? targetId(s, st.name, st.loc);
  const type = ot === 'VIEW' ? 'DROP_VIEW' : ot === 'MATERIALIZED VIEW' ? 'DROP_MATERIALIZED_VIEW' : ot === 'EXTERNAL TABLE' ? 'DROP_EXTERNAL_TABLE' : ot === 'SNAPSHOT TABLE' ? 'DROP_SNAPSHOT_TABLE' : 'DROP_TABLE';
  const info = cat.getTable(id);
  if (!info) {
    if (st.ifExists) return result(type, { ddlOperationPerformed: 'SKIP', ddlTargetTable: id });
    throw new QueryError(`Not found: ${ot === 'VIEW' ? 'View' : 'Table'} ${fq(id)}`, 'notFound', 404);
  }
  if (ot === 'VIEW' && info.kind !== 'VIEW') throw sqlError(`${fq(id)} is not a view`, st.loc);
  if (ot === 'TABLE' && info.kind === 'VIEW') throw sqlError(`${fq(id)} is a view, not a table; use DROP VIEW`, st.loc);
  if (ot === 'MATERIALIZED VIEW' && info.kind !== 'MATERIALIZED_VIEW') throw sqlError(`${fq(id)} is not a materialized view`, st.loc);
  if (ot === 'SNAPSHOT TABLE' && info.resource.type !== 'SNAPSHOT') throw sqlError(`${fq(id)} is not a table snapshot`, st.loc);
  // data-definition-language: DROP EXTERNAL TABLE of a table that is not external.
  if (ot === 'EXTERNAL TABLE' && info.kind !== 'EXTERNAL') throw sqlError(`Cannot drop ${fq(id)} which has type ${info.kind}. An external table was expected.`, st.loc);
  await cat.dropTable(id);
  if (temp) s.tempTables.delete(tempName!);
  return result(type, { ddlOperationPerformed: 'DROP', ddlTargetTable: id });
}

// ---------------------------------------------------------------- SCHEMA

export async function createSchema(s: Session, st: A.CreateSchemaStmt): Promise<QueryResult> {
  const parts = splitPath(st.name);
  const projectId = parts.length > 1 ? parts[0]! : s.env.projectId;
  const datasetId = parts[parts.length - 1]!;
  const cat = s.ctx.catalog;
  if (cat.getDataset(projectId, datasetId)) {
    if (st.ifNotExists) return result('CREATE_SCHEMA', { ddlOperationPerformed: 'SKIP', statistics: { ddlTargetDataset: { projectId, datasetId } } });
    if (!st.orReplace) throw already('Dataset', `${projectId}:${datasetId}`);
  }
  checkSchemaOptions(st.options, 'CREATE SCHEMA');
  checkCollationName(st.defaultCollate, st.loc);
  const resource = { location: 'US', ...(await optionsToResource(s, st.options)), ...(st.defaultCollate ? { defaultCollation: st.defaultCollate } : {}) };
  await cat.createDataset(projectId, datasetId, resource, st.ifNotExists || st.orReplace);
  return result('CREATE_SCHEMA', { ddlOperationPerformed: 'CREATE', statistics: { ddlTargetDataset: { projectId, datasetId } } });
}

export async function undropSchema(s: Session, st: A.UndropSchemaStmt): Promise<QueryResult> {
  const parts = splitPath(st.name);
  const projectId = parts.length > 1 ? parts[0]! : s.env.projectId;
  await s.ctx.catalog.undropDataset(projectId, parts[parts.length - 1]!, st.ifNotExists);
  return result('UNDROP_SCHEMA', { ddlOperationPerformed: 'UNDROP' });
}
