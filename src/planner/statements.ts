// DDL and DML statements. Each returns the QueryResult fields the REST job
// reports: statementType, ddlOperationPerformed, ddlTargetTable,
// numDmlAffectedRows (as the service does).
import type * as A from '../../grammar/ast.js';
import { parseStatement } from '../../grammar/index.js';
import { coerce, literal, originOf } from '../analyzer/expr.js';
import { resolveExpr } from '../analyzer/expr.js';
import { outputNames } from '../analyzer/index.js';
import { constantValue, tableIdOf, tableNotFound, splitPath } from '../analyzer/names.js';
import { project } from '../analyzer/query.js';
import { checkDeclaredTable } from '../analyzer/table-functions.js';
import type { Rel } from '../analyzer/resolved.js';
import { Scope, colRef } from '../analyzer/scope.js';
import { canCoerce, typeFromNode } from '../analyzer/types.js';
import { checkResultArrays } from '../executor/result-check.js';
import type { TableId } from '../storage/api.js';
import { columnToRestField, hasTypeParams, restParamsText, restTypeParams, tableRestField, type Column, type RestField } from '../types/schema.js';
import { collationNameError, withDefaultCollation } from '../functions/collation.js';
import { T, arrayOf, structOf, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import { Decimal, Interval, type Value } from '../types/values.js';
import { formatInterval } from '../types/json-values.js';
import type { Batch } from '../types/vector.js';
import { QueryError, type QueryResult } from './api.js';
import type { Session } from './session.js';
import { sqlError } from '../analyzer/errors.js';
import { checkPartitionFilters } from './partition-filter.js';
import { checkSqlFunctionReturn, UNQUALIFIED_ROUTINES } from '../analyzer/expr.js';
import { lookupFunction } from '../functions/registry.js';
import { checked, coerceForWrite, scanAll, writeTarget } from './dml.js';
import { fq, statementResult } from './statement-type.js';
import { checkExternalFunction, languageOf, stringListOption, stringOption } from '../udf/index.js';
import { dropSearchIndex } from './search-index.js';
import { createExternalTable } from './data-statements.js';
import { reservedColumnName } from '../storage/resources.js';
import { legacyRole, memberToAccess, sameGrant, type AccessEntry } from '../storage/dataset-access.js';

const result = statementResult;

function already(what: string, id: string): QueryError {
  return new QueryError(`Already Exists: ${what} ${id}`, 'duplicate', 409);
}

// ---------------------------------------------------------------- OPTIONS

/** An option's value as the resource keeps it: JSON (INT64 and NUMERIC as text, INTERVAL in its canonical text). */
function optionJson(t: SqlType, v: Value): unknown {
  if (v === null) return null;
  if (typeof v === 'bigint' || v instanceof Decimal) return v.toString();
  if (v instanceof Interval) return formatInterval(v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map((x, i) => optionJson(t.kind === 'ARRAY' ? t.element : t.kind === 'STRUCT' ? t.fields[i]!.type : t, x));
  return v;
}

/**
 * The type of each documented option of tables, views, materialized views and schemas (data-definition-language:
 * table_option_list, view_option_list, materialized_view_option_list, schema_option_list).
 */
const OPTION_TYPES: ReadonlyMap<string, SqlType> = new Map<string, SqlType>([
  ['description', T.STRING], ['friendly_name', T.STRING], ['kms_key_name', T.STRING], ['default_kms_key_name', T.STRING],
  ['location', T.STRING], ['default_rounding_mode', T.STRING], ['storage_billing_model', T.STRING],
  ['expiration_timestamp', T.TIMESTAMP],
  ['partition_expiration_days', T.FLOAT64], ['default_table_expiration_days', T.FLOAT64], ['default_partition_expiration_days', T.FLOAT64],
  ['refresh_interval_minutes', T.FLOAT64],
  ['require_partition_filter', T.BOOL], ['is_case_insensitive', T.BOOL], ['enable_refresh', T.BOOL], ['enable_change_history', T.BOOL],
  ['allow_non_incremental_definition', T.BOOL],
  ['max_time_travel_hours', T.INT64], ['max_staleness', T.INTERVAL],
  ['labels', arrayOf(structOf([{ name: '', type: T.STRING }, { name: '', type: T.STRING }]))],
]);

/** labels take any ARRAY of two-STRING STRUCTs, whatever the field names. */
function labelsShaped(t: SqlType): boolean {
  return t.kind === 'ARRAY' && t.element.kind === 'STRUCT' && t.element.fields.length === 2 && t.element.fields.every((f) => f.type.kind === 'STRING');
}

/** An option's value, coerced to the option's documented type; a value that cannot coerce is refused as ZetaSQL refuses it. */
async function optionValue(s: Session, o: A.OptionEntry): Promise<{ type: SqlType; value: Value }> {
  const want = OPTION_TYPES.get(o.name.toLowerCase());
  const tv = await s.evalScalar(o.value, s.analyzer(), want);
  if (want && tv.value !== null && !typeEquals(tv.type, want) && !(o.name.toLowerCase() === 'labels' && labelsShaped(tv.type))) {
    throw sqlError(`Option ${o.name} value has type ${typeToSql(tv.type)} which cannot be coerced to expected type ${typeToSql(want)}`, o.value.loc);
  }
  return tv;
}

async function optionsToResource(s: Session, opts: readonly A.OptionEntry[] | undefined): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const o of opts ?? []) {
    const tv = await optionValue(s, o);
    const v = tv.value;
    const name = o.name.toLowerCase();
    switch (name) {
      case 'description':
        out.description = v;
        break;
      case 'friendly_name':
        out.friendlyName = v;
        break;
      case 'is_case_insensitive':
        out.isCaseInsensitive = v === true;
        break;
      case 'labels': {
        const labels: Record<string, string> = {};
        for (const kv of (v as Value[][] | null) ?? []) {
          checkLabel(String(kv[0]), kv[1] === null ? '' : String(kv[1]), o.value.loc);
          labels[String(kv[0])] = String(kv[1]);
        }
        out.labels = labels;
        break;
      }
      case 'default_rounding_mode':
        out.defaultRoundingMode = v === null ? undefined : roundingMode(v, o.value.loc);
        break;
      case 'expiration_timestamp':
        out.expirationTime = v === null ? undefined : String((v as bigint) / 1000n);
        break;
      case 'default_table_expiration_days': {
        const ms = v === null ? undefined : Math.round(Number(v instanceof Decimal ? v.toNumber() : (v as number | bigint)) * 86400000);
        // datasets: defaultTableExpirationMs, "the minimum lifetime value is 3600000 milliseconds (one hour)".
        if (ms !== undefined && ms < 3_600_000) throw sqlError(`Invalid value for option default_table_expiration_days: ${String(v)}; the minimum is one hour (${1 / 24} days)`, o.value.loc);
        out.defaultTableExpirationMs = ms === undefined ? undefined : String(ms);
        break;
      }
      case 'max_time_travel_hours':
        // datasets: maxTimeTravelHours, "from 48 to 168 hours (2 to 7 days)", a multiple of 24 (time-travel page).
        if (v !== null && ((v as bigint) < 48n || (v as bigint) > 168n || (v as bigint) % 24n !== 0n)) {
          throw sqlError(`Invalid value for option max_time_travel_hours: ${String(v)}; it must be a multiple of 24 from 48 to 168`, o.value.loc);
        }
        out.maxTimeTravelHours = v === null ? undefined : String(v);
        break;
      case 'storage_billing_model':
        // datasets: storageBillingModel, LOGICAL or PHYSICAL.
        if (v !== null && v !== 'LOGICAL' && v !== 'PHYSICAL') throw sqlError(`Invalid value for option storage_billing_model: ${JSON.stringify(v)}; expected "LOGICAL" or "PHYSICAL"`, o.value.loc);
        out.storageBillingModel = v === null ? undefined : v;
        break;
      case 'max_staleness':
        // tables and materialized views: maxStaleness, the INTERVAL's canonical text.
        out.maxStaleness = v === null ? undefined : formatInterval(v as Interval);
        break;
      case 'refresh_interval_minutes':
        // materialized views: "a refresh frequency cap ... between 1 minute and 7 days" (materialized-views-manage).
        if (v !== null && (Number(v) < 1 || Number(v) > 10_080)) throw sqlError(`Invalid value for option refresh_interval_minutes: ${String(v)}; it must be between 1 and 10080 minutes (7 days)`, o.value.loc);
        (out.options ??= {} as Record<string, unknown>);
        (out.options as Record<string, unknown>)[name] = optionJson(tv.type, v);
        break;
      case 'default_partition_expiration_days':
        out.defaultPartitionExpirationMs = v === null ? undefined : String(Math.round(Number(v) * 86400000));
        break;
      case 'location':
        out.location = v;
        break;
      case 'kms_key_name':
        out.encryptionConfiguration = v === null ? undefined : { kmsKeyName: v };
        break;
      case 'default_kms_key_name':
        out.defaultEncryptionConfiguration = v === null ? undefined : { kmsKeyName: v };
        break;
      case 'require_partition_filter':
        // the REST field (timePartitioning.requirePartitionFilter is its deprecated twin)
        out.requirePartitionFilter = v === true;
        break;
      default:
        (out.options ??= {} as Record<string, unknown>);
        (out.options as Record<string, unknown>)[name] = optionJson(tv.type, v);
    }
  }
  return out;
}

/**
 * Label keys and values (labels page): at most 63 characters of lowercase letters, digits, underscores and dashes
 * (international characters allowed); a key is not empty and starts with a lowercase or international letter.
 */
const LABEL_KEY = /^[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]{0,62}$/u;
const LABEL_VALUE = /^[\p{Ll}\p{Lo}\p{N}_-]{0,63}$/u;

function checkLabel(key: string, value: string, loc: A.Loc): void {
  if (!LABEL_KEY.test(key)) throw sqlError(`Invalid label key "${key}": a key starts with a lowercase letter and holds at most 63 lowercase letters, digits, underscores and dashes`, loc);
  if (!LABEL_VALUE.test(value)) throw sqlError(`Invalid label value "${value}" of key "${key}": a value holds at most 63 lowercase letters, digits, underscores and dashes`, loc);
}

/** GoogleSQL names of the REST schema's legacy type names, for messages. */
const REST_TYPE_SQL: Readonly<Record<string, string>> = { INTEGER: 'INT64', FLOAT: 'FLOAT64', BOOLEAN: 'BOOL', RECORD: 'STRUCT' };

/** rounding_mode / default_rounding_mode (data-definition-language: the two rounding modes of NUMERIC writes). */
const ROUNDING_MODES = ['ROUND_HALF_AWAY_FROM_ZERO', 'ROUND_HALF_EVEN'];

function roundingMode(v: unknown, loc: A.Loc): string {
  if (typeof v !== 'string' || !ROUNDING_MODES.includes(v)) throw sqlError(`Invalid rounding mode ${JSON.stringify(v)}: expected ${ROUNDING_MODES.join(' or ')}`, loc);
  return v;
}

/** The options a column or STRUCT field takes (data-definition-language: column_option_list). */
const COLUMN_OPTIONS = new Set(['description', 'rounding_mode', 'data_policies']);

function checkColumnOptions(opts: readonly A.OptionEntry[] | undefined): void {
  for (const o of opts ?? []) if (!COLUMN_OPTIONS.has(o.name.toLowerCase())) throw sqlError(`Unknown option ${o.name} for a column`, o.value.loc);
}

/** The types a clustering column may have (creating-clustered-tables: clustered column types). */
const CLUSTERABLE = new Set(['BIGNUMERIC', 'BOOL', 'DATE', 'DATETIME', 'GEOGRAPHY', 'INT64', 'NUMERIC', 'RANGE', 'STRING', 'TIMESTAMP']);

/**
 * CLUSTER BY's columns, each named by the table (ZetaSQL resolves them over its columns: `Unrecognized name`):
 * at most four, each of a type that clusters (not FLOAT64, BYTES, JSON, ARRAY, STRUCT, ...).
 */
function clustering(exprs: readonly A.Expr[], columns: readonly Column[]): { fields: string[] } {
  if (exprs.length > 4) throw sqlError(`Too many clustering columns: ${exprs.length}; at most 4 are allowed`, exprs[4]!.loc);
  return {
    fields: exprs.map((e) => {
      const name = e.kind === 'PathExpr' ? e.parts.join('.') : '';
      if (e.kind !== 'PathExpr') return name;
      // Clustering columns are top-level columns, each named once (creating-clustered-tables).
      if (e.parts.length > 1) throw sqlError(`CLUSTER BY expression must be a top-level column name, not the field path ${name}`, e.loc);
      if (exprs.some((x, j) => j < exprs.indexOf(e) && x.kind === 'PathExpr' && x.parts.join('.').toLowerCase() === name.toLowerCase())) throw sqlError(`Duplicate clustering column ${name}`, e.loc);
      const c = columns.find((x) => x.name.toLowerCase() === e.parts[0]!.toLowerCase());
      if (!c) throw sqlError(`Unrecognized name: ${e.parts[0]}`, e.loc);
      if (e.parts.length === 1 && !CLUSTERABLE.has(c.type.kind)) throw sqlError(`Clustering is not supported on column ${c.name} of type ${typeToSql(c.type)}`, e.loc);
      return name;
    }),
  };
}

/** The options a table takes (data-definition-language: table_option_list); any other name is an error. */
const TABLE_OPTIONS = new Set([
  'expiration_timestamp', 'partition_expiration_days', 'require_partition_filter', 'kms_key_name', 'friendly_name', 'description', 'labels',
  'default_rounding_mode', 'enable_change_history', 'max_staleness', 'enable_fine_grained_mutations', 'storage_uri', 'file_format', 'table_format', 'tags',
]);

/** The options each kind of object takes (data-definition-language: view_option_list, materialized_view_option_list, CREATE SNAPSHOT TABLE's). */
const VIEW_OPTIONS = new Set(['expiration_timestamp', 'friendly_name', 'description', 'labels', 'privacy_policy', 'tags']);
const MATERIALIZED_VIEW_OPTIONS = new Set([
  'enable_refresh', 'refresh_interval_minutes', 'expiration_timestamp', 'max_staleness', 'allow_non_incremental_definition', 'kms_key_name',
  'friendly_name', 'description', 'labels', 'tags',
]);
const SNAPSHOT_OPTIONS = new Set(['expiration_timestamp', 'friendly_name', 'description', 'labels', 'tags']);

/** Every OPTIONS list names each option once (ZetaSQL: "Duplicate option specified for ..."). */
function checkDistinctOptions(opts: readonly A.OptionEntry[] | undefined): void {
  const seen = new Set<string>();
  for (const o of opts ?? []) {
    const n = o.name.toLowerCase();
    if (seen.has(n)) throw sqlError(`Duplicate option specified for '${o.name}'`, o.value.loc);
    seen.add(n);
  }
}

function checkOptionNames(opts: readonly A.OptionEntry[] | undefined, allowed: ReadonlySet<string>, what: string): void {
  checkDistinctOptions(opts);
  for (const o of opts ?? []) if (!allowed.has(o.name.toLowerCase())) throw sqlError(`Unknown option ${o.name} for ${what}`, o.value.loc);
}

function checkTableOptions(opts: readonly A.OptionEntry[] | undefined, what: string): void {
  checkOptionNames(opts, TABLE_OPTIONS, what);
}

/** The options of a view, materialized view or snapshot, by its kind. */
function checkKindOptions(opts: readonly A.OptionEntry[] | undefined, kind: string, what: string): void {
  if (kind === 'VIEW') checkOptionNames(opts, VIEW_OPTIONS, what);
  else if (kind === 'MATERIALIZED_VIEW') checkOptionNames(opts, MATERIALIZED_VIEW_OPTIONS, what);
  else if (kind === 'SNAPSHOT') checkOptionNames(opts, SNAPSHOT_OPTIONS, what);
  else checkTableOptions(opts, what);
}

/** partition_expiration_days and require_partition_filter apply to partitioned tables only (data-definition-language: table_option_list). */
function checkPartitionOptions(opts: readonly A.OptionEntry[] | undefined, resource: Record<string, unknown>): void {
  if (resource.timePartitioning || resource.rangePartitioning) return;
  for (const o of opts ?? []) {
    const n = o.name.toLowerCase();
    if ((n === 'partition_expiration_days' || n === 'require_partition_filter') && o.value.kind !== 'NullLiteral' && !(o.value.kind === 'BoolLiteral' && !o.value.value)) {
      throw sqlError(`Option ${o.name} is only supported on partitioned tables`, o.value.loc);
    }
  }
}

/** The options a schema takes (data-definition-language: schema_option_list); any other name is an error. */
const SCHEMA_OPTIONS = new Set([
  'default_kms_key_name', 'default_partition_expiration_days', 'default_rounding_mode', 'default_table_expiration_days', 'description', 'failover_reservation',
  'friendly_name', 'is_case_insensitive', 'is_primary', 'labels', 'location', 'max_time_travel_hours', 'primary_replica', 'storage_billing_model', 'tags',
]);

function checkSchemaOptions(opts: readonly A.OptionEntry[] | undefined, what: string): void {
  checkOptionNames(opts, SCHEMA_OPTIONS, what);
  // A dataset's location is set when it is made (datasets.patch cannot move it; ALTER SCHEMA has no location).
  if (what === 'ALTER SCHEMA') for (const o of opts ?? []) if (o.name.toLowerCase() === 'location') throw sqlError(`ALTER SCHEMA cannot change the location of a dataset; location is set by CREATE SCHEMA`, o.value.loc);
}

interface RestTableConstraints {
  primaryKey?: { columns: string[] };
  foreignKeys?: { name?: string; referencedTable: { projectId: string; datasetId: string; tableId: string }; columnReferences: { referencingColumn: string; referencedColumn: string }[] }[];
}

/**
 * PRIMARY KEY / FOREIGN KEY ... NOT ENFORCED, of the columns and of the table, as the REST resource keeps them
 * (tableConstraints), checked as the service checks them (primary-foreign-keys): NOT ENFORCED is required, a table
 * has one primary key, key columns are columns of the table (`columns`, the table being made or altered, `self`),
 * and a foreign key names an existing table's columns, as many as it has.
 */
function tableConstraints(s: Session, defs: readonly A.ColumnDef[], constraints: readonly A.TableConstraint[], loc: A.Loc, columns: readonly Column[], self: TableId): RestTableConstraints | undefined {
  const out: RestTableConstraints = {};
  const has = (cols: readonly Column[], n: string) => cols.some((c) => c.name.toLowerCase() === n.toLowerCase());
  // Key errors in the reference analyzer's wording (resolver_stmt.cc ResolvePrimaryKey / ResolveForeignKeyReference).
  const own = (what: 'primary' | 'foreign') => (n: string) => {
    if (!has(columns, n)) throw sqlError(`Unsupported ${what} key column ${n} either does not exist or is a pseudocolumn`, loc);
  };
  for (const c of [...defs.filter((d) => d.enforced), ...constraints.filter((k) => k.enforced)]) {
    const what = c.kind === 'ColumnDef' ? (c.primaryKey ? 'PRIMARY KEY' : 'FOREIGN KEY') : c.kind === 'PrimaryKey' ? 'PRIMARY KEY' : 'FOREIGN KEY';
    throw sqlError(`ENFORCED ${what} constraints are not supported; declare the key NOT ENFORCED`, c.kind === 'ColumnDef' ? c.loc : loc);
  }
  if (defs.filter((d) => d.primaryKey).length + constraints.filter((k) => k.kind === 'PrimaryKey').length > 1) {
    throw sqlError('Multiple PRIMARY KEY definitions found in CREATE TABLE', loc);
  }
  const foreignKey = (name: string | undefined, cols: readonly string[], ref: { table: A.Path; columns: string[] }) => {
    cols.forEach(own('foreign'));
    if (ref.columns.length !== cols.length) throw sqlError('Number of foreign columns does not match the number of referenced columns', loc);
    const t = targetId(s, ref.table, loc);
    const same = t.projectId === self.projectId && t.datasetId === self.datasetId && t.tableId === self.tableId;
    const refInfo = same ? undefined : s.ctx.catalog.getTable(t);
    const refCols = same ? columns : refInfo?.columns;
    if (!refCols) throw tableNotFound(s.analyzer(), t);
    // A foreign key references a table's primary key (primary-foreign-keys), never a view's columns.
    if (refInfo && refInfo.kind !== 'TABLE') throw sqlError(`FOREIGN KEY cannot reference ${t.projectId}.${t.datasetId}.${t.tableId}, which is a ${refInfo.kind === 'MATERIALIZED_VIEW' ? 'materialized view' : refInfo.kind.toLowerCase()}; it must reference a table`, loc);
    for (const n of ref.columns) if (!has(refCols, n)) throw sqlError(`Column name ${n} not found in ${t.projectId}.${t.datasetId}.${t.tableId}`, loc);
    (out.foreignKeys ??= []).push({
      ...(name ? { name } : {}),
      referencedTable: { projectId: t.projectId, datasetId: t.datasetId, tableId: t.tableId },
      columnReferences: cols.map((c, i) => ({ referencingColumn: c, referencedColumn: ref.columns[i] ?? '' })),
    });
  };
  const pk = defs.filter((d) => d.primaryKey).map((d) => d.name);
  for (const c of constraints) if (c.kind === 'PrimaryKey') pk.push(...c.columns);
  pk.forEach(own('primary'));
  // Key values are compared as scalars: an ARRAY column cannot be a key column.
  for (const n of [...pk, ...defs.filter((d) => d.references).map((d) => d.name), ...constraints.flatMap((c) => (c.kind === 'ForeignKey' ? c.columns : []))]) {
    const c = columns.find((x) => x.name.toLowerCase() === n.toLowerCase());
    if (c?.type.kind === 'ARRAY') throw sqlError(`Key column ${c.name} has type ${typeToSql(c.type)}; a PRIMARY KEY or FOREIGN KEY column cannot be an ARRAY`, loc);
  }
  const seen = new Set<string>();
  for (const n of pk) {
    if (seen.has(n.toLowerCase())) throw sqlError(`Duplicate column ${n} specified in PRIMARY KEY of CREATE TABLE`, loc);
    seen.add(n.toLowerCase());
  }
  if (pk.length) out.primaryKey = { columns: pk };
  for (const d of defs) if (d.references) foreignKey(undefined, [d.name], d.references);
  for (const c of constraints) if (c.kind === 'ForeignKey' && c.references) foreignKey(c.name, c.columns, c.references);
  return out.primaryKey || out.foreignKeys ? out : undefined;
}

function columnsFromDefs(defs: readonly A.ColumnDef[]): Column[] {
  const seen = new Set<string>();
  return defs.map((d) => {
    const l = d.name.toLowerCase();
    if (seen.has(l)) throw sqlError(`Duplicate column name ${d.name} in CREATE TABLE`, d.loc);
    seen.add(l);
    checkColumnName(d.name, d.loc);
    checkColumnOptions(d.options);
    checkFieldOptions(d.type);
    checkColumnCollate(d);
    return { name: d.name, type: typeFromNode(d.type), required: d.notNull };
  });
}

/** A column may not take a name of the service's pseudo-columns (the REST schema's check: storage/resources.ts). */
function checkColumnName(name: string, loc: A.Loc): void {
  const why = reservedColumnName(name);
  if (why) throw sqlError(why, loc);
}

/** OPTIONS of nested STRUCT fields take the column options too. */
function checkFieldOptions(t: A.TypeNode): void {
  const inner = t.kind === 'ArrayType' ? t.element : t;
  if (inner.kind !== 'StructType') return;
  for (const f of inner.fields) {
    checkColumnOptions(f.options);
    checkFieldOptions(f.type);
  }
}

/** COLLATE takes a STRING column only (data-definition-language: column_schema), and a valid collation name. */
function checkColumnCollate(d: A.ColumnDef): void {
  if (d.collate === undefined) return;
  const t = typeFromNode(d.type);
  if (t.kind !== 'STRING') throw sqlError(`COLLATE is not allowed on column ${d.name} of type ${typeToSql(t)}; only STRING columns take a collation`, d.loc);
  const err = collationNameError(d.collate);
  if (err) throw sqlError(err, d.loc);
}

/** A DEFAULT COLLATE name is one the reference takes (language_tag[:ci|cs], binary or ''); true when it is. */
function checkCollationName(name: string | undefined, loc: A.Loc): true {
  const err = name === undefined ? undefined : collationNameError(name);
  if (err) throw sqlError(err, loc);
  return true;
}

/** The path of a NOT NULL field inside a column type (STRUCT fields, at any depth); undefined when it has none. */
function requiredFieldPath(t: A.TypeNode, prefix: string): string | undefined {
  if (t.kind === 'ArrayType') return requiredFieldPath(t.element, prefix);
  if (t.kind !== 'StructType') return undefined;
  for (const f of t.fields) {
    const path = `${prefix}.${f.name ?? ''}`;
    if (f.notNull) return path;
    const inner = requiredFieldPath(f.type, path);
    if (inner) return inner;
  }
  return undefined;
}

/** Source text of an expression starting at `offset` (up to the next top-level `,`, `)` or `;`). */
function exprText(sql: string, offset: number): string {
  let depth = 0;
  let quote: string | undefined;
  for (let i = offset; i < sql.length; i++) {
    const ch = sql[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    else if (ch === '(' || ch === '[') depth++;
    else if (ch === ')' || ch === ']') {
      if (depth === 0) return sql.slice(offset, i).trim();
      depth--;
    } else if ((ch === ',' || ch === ';') && depth === 0) return sql.slice(offset, i).trim();
    // What may follow a column's DEFAULT expression: its OPTIONS, NOT NULL (not an expression's IS NOT NULL).
    else if (depth === 0 && /\s/.test(ch) && /^\s+(OPTIONS\s*\(|NOT\s+NULL\b)/i.test(sql.slice(i, i + 24)) && !/\bIS\s*$/i.test(sql.slice(offset, i))) return sql.slice(offset, i).trim();
  }
  return sql.slice(offset).trim();
}

/**
 * Column extras the REST schema carries (OPTIONS(description=...), DEFAULT
 * expressions): patched into the stored schema after the table exists.
 */
/** Whether a column type has OPTIONS on some nested STRUCT field (`STRUCT<x INT64 OPTIONS(description = '...')>`). */
function hasNestedOptions(t: A.TypeNode): boolean {
  const inner = t.kind === 'ArrayType' ? t.element : t;
  return inner.kind === 'StructType' && inner.fields.some((f) => !!f.options?.length || hasNestedOptions(f.type));
}

/** Descriptions and NOT NULL (mode REQUIRED) of nested STRUCT fields onto the REST field's sub-fields (same order). */
async function nestedFieldExtras(s: Session, t: A.TypeNode, f: RestField): Promise<void> {
  const inner = t.kind === 'ArrayType' ? t.element : t;
  if (inner.kind !== 'StructType' || !f.fields) return;
  for (const [i, sf] of inner.fields.entries()) {
    const rf = f.fields[i];
    if (!rf) continue;
    if (sf.notNull && rf.mode !== 'REPEATED') rf.mode = 'REQUIRED';
    await columnOptionFields(s, sf.options, rf);
    await nestedFieldExtras(s, sf.type, rf);
  }
}

/**
 * A column's (or STRUCT field's) OPTIONS onto its REST field: description, rounding_mode (roundingMode, which
 * writes to a parameterized NUMERIC/BIGNUMERIC use: types/table-values.ts). NULL removes the option.
 */
async function columnOptionFields(s: Session, opts: readonly A.OptionEntry[] | undefined, f: RestField): Promise<void> {
  for (const o of opts ?? []) {
    const key = o.name.toLowerCase();
    if (key !== 'description' && key !== 'rounding_mode') continue;
    const tv = await s.evalScalar(o.value);
    const v = tv.value;
    if (v !== null && tv.type.kind !== 'STRING') throw sqlError(`Option ${o.name} value has type ${typeToSql(tv.type)} which cannot be coerced to expected type STRING`, o.value.loc);
    // rounding_mode applies to values written to a NUMERIC or BIGNUMERIC column or field (data-definition-language: column_option_list).
    if (key === 'rounding_mode' && v !== null && f.type !== 'NUMERIC' && f.type !== 'BIGNUMERIC') throw sqlError(`Option rounding_mode applies to NUMERIC and BIGNUMERIC columns only, not to ${f.name} of type ${REST_TYPE_SQL[f.type] ?? f.type}`, o.value.loc);
    if (key === 'description') {
      if (v === null) delete f.description;
      else f.description = String(v);
    } else if (v === null) delete f.roundingMode;
    else f.roundingMode = roundingMode(v, o.value.loc);
  }
}

/** The table's default rounding mode onto its NUMERIC/BIGNUMERIC fields that set none (applied when the fields are made). */
function defaultRounding(f: RestField, mode: string | undefined): void {
  if (!mode) return;
  if ((f.type === 'NUMERIC' || f.type === 'BIGNUMERIC') && f.roundingMode === undefined) f.roundingMode = mode;
  for (const sf of f.fields ?? []) defaultRounding(sf, mode);
}

/** A column DEFAULT must be assignable to the column's type (the service's analyzer checks it when the column is defined). */
/** The functions a DEFAULT expression may call (default-values: "a literal or one of the following functions"). */
const DEFAULT_FUNCTIONS = new Set(['CURRENT_DATE', 'CURRENT_DATETIME', 'CURRENT_TIME', 'CURRENT_TIMESTAMP', 'GENERATE_UUID', 'RAND', 'SESSION_USER', 'ST_GEOGPOINT']);

/** The first call in `e` of a function a DEFAULT may not call. */
function disallowedDefaultCall(e: unknown): A.FunctionCall | undefined {
  if (!e || typeof e !== 'object') return undefined;
  if (Array.isArray(e)) {
    for (const x of e) {
      const hit = disallowedDefaultCall(x);
      if (hit) return hit;
    }
    return undefined;
  }
  const n = e as { kind?: string };
  if (n.kind === 'FunctionCall' && !DEFAULT_FUNCTIONS.has((n as A.FunctionCall).name.join('.').toUpperCase())) return n as A.FunctionCall;
  for (const [k, v] of Object.entries(e)) {
    if (k === 'loc') continue;
    const hit = disallowedDefaultCall(v);
    if (hit) return hit;
  }
  return undefined;
}

function checkDefault(s: Session, e: A.Expr, t: SqlType): void {
  const x = resolveExpr(s.analyzer(), e, { scope: new Scope(), clause: 'a column default expression', noSubqueries: true });
  const call = disallowedDefaultCall(e);
  if (call) throw sqlError(`Function ${call.name.join('.').toUpperCase()} is not allowed in a column default value; a default value is a literal or one of ${[...DEFAULT_FUNCTIONS].join(', ')}`, call.loc);
  if (!typeEquals(x.type, t) && !canCoerce(x.type, t, originOf(x))) {
    throw sqlError(`Column default expression has type ${typeToSql(x.type)} which cannot be assigned to column type ${typeToSql(t)}`, e.loc);
  }
  // A STRING literal coerces to a date/time column only when its text is such a value (as in INSERT VALUES).
  if (x.kind === 'literal' && typeof x.value === 'string' && !typeEquals(x.type, t) && coerce(x, t).kind !== 'literal') {
    throw sqlError(`Could not cast literal ${JSON.stringify(x.value)} to type ${typeToSql(t)}`, e.loc);
  }
}

/**
 * Whether type parameters `to` take every value `from` allows (SET DATA TYPE widening): a STRING/BYTES length
 * not shorter (none is unbounded), a NUMERIC/BIGNUMERIC with no fewer integer digits and no smaller scale.
 */
function paramsWiden(from: Pick<RestField, 'maxLength' | 'precision' | 'scale'> | undefined, to: Pick<RestField, 'maxLength' | 'precision' | 'scale'>): boolean {
  if (to.maxLength !== undefined) return from?.maxLength !== undefined && Number(to.maxLength) >= Number(from.maxLength);
  if (to.precision !== undefined) {
    if (from?.precision === undefined) return false;
    const [fp, fs, tp, ts] = [Number(from.precision), Number(from.scale ?? 0), Number(to.precision), Number(to.scale ?? 0)];
    return ts >= fs && tp - ts >= fp - fs;
  }
  return true;
}

/**
 * Whether a column of type `from` (its REST field `f`: the parameters) may SET DATA TYPE to `to`: a scalar by an
 * implicit coercion (INT64 -> NUMERIC, ...) or to the same type with parameters no narrower; a STRUCT field by
 * field, the same names in the same order (managing-table-schemas: a nested column's field INT64 -> NUMERIC;
 * data-definition-language: a parameterized type's widening); an ARRAY of scalars by its element's parameters.
 */
function setDataTypeAllowed(from: SqlType, f: RestField | undefined, to: SqlType): boolean {
  if (from.kind === 'ARRAY' || to.kind === 'ARRAY') {
    // An ARRAY's scalar element keeps its type (its parameters may widen); a field within an ARRAY of STRUCTs
    // cannot change (managing-table-schemas: "altering a field within an array of STRUCTs ... isn't supported").
    if (from.kind !== 'ARRAY' || to.kind !== 'ARRAY' || from.element.kind !== to.element.kind) return false;
    if (from.element.kind === 'STRUCT') return typeWithParams(from.element, f) === typeToSql(to.element);
    return setDataTypeAllowed(from.element, f, to.element);
  }
  if (from.kind === 'STRUCT' || to.kind === 'STRUCT') {
    if (from.kind !== 'STRUCT' || to.kind !== 'STRUCT' || from.fields.length !== to.fields.length) return false;
    return from.fields.every((x, k) => {
      const y = to.fields[k]!;
      const sub = f?.fields?.find((g) => g.name.toLowerCase() === x.name.toLowerCase());
      return x.name.toLowerCase() === y.name.toLowerCase() && setDataTypeAllowed(x.type, sub, y.type);
    });
  }
  if (from.kind !== to.kind) return canCoerce(from, to);
  return paramsWiden(f, restTypeParams(to));
}

/** A STRUCT column's new REST fields (`fresh`, from its new type) keeping what the old ones had besides the type (descriptions...). */
function retypedFields(old: readonly RestField[] | undefined, fresh: readonly RestField[]): RestField[] {
  return fresh.map((ff) => {
    const of = old?.find((g) => g.name.toLowerCase() === ff.name.toLowerCase());
    if (!of) return ff;
    const { maxLength: _m, precision: _p, scale: _s, fields: oldSub, ...bare } = of;
    // SET DATA TYPE changes no mode (a field's REQUIRED stays; the new type cannot say NOT NULL).
    return { ...bare, type: ff.type, mode: of.mode ?? ff.mode, ...restParamsOf(ff), ...(ff.fields ? { fields: retypedFields(oldSub, ff.fields) } : {}) };
  });
}

/** A stored column's type as SQL text with the parameters its REST field keeps, at any depth (STRUCT<a STRING(10)>). */
function typeWithParams(t: SqlType, f: RestField | undefined): string {
  if (t.kind === 'ARRAY') return `ARRAY<${typeWithParams(t.element, f)}>`;
  if (t.kind === 'STRUCT') return `STRUCT<${t.fields.map((x) => `${x.name} ${typeWithParams(x.type, f?.fields?.find((g) => g.name.toLowerCase() === x.name.toLowerCase()))}`).join(', ')}>`;
  return typeToSql(t) + restParamsText(f);
}

function restParamsOf(f: RestField): Pick<RestField, 'maxLength' | 'precision' | 'scale'> {
  return { ...(f.maxLength !== undefined ? { maxLength: f.maxLength } : {}), ...(f.precision !== undefined ? { precision: f.precision } : {}), ...(f.scale !== undefined ? { scale: f.scale } : {}) };
}

/** The schema's fields with the column definitions' defaults, descriptions and nested NOT NULL fields; undefined when they have none. */
async function schemaExtras(s: Session, columns: readonly Column[], defs: readonly A.ColumnDef[] | undefined, rounding?: string): Promise<RestField[] | undefined> {
  if (!rounding && !defs?.some((d) => d.default || d.options?.length || hasNestedOptions(d.type) || requiredFieldPath(d.type, d.name) !== undefined) && !columns.some((c) => hasTypeParams(c.type))) return undefined;
  // STRING(10), NUMERIC(10, 2), at any depth: the schema keeps the parameters (maxLength, precision, scale) as tables.get shows them.
  const fields = columns.map((c) => tableRestField(c.name, c.type, c.required));
  for (const d of defs ?? []) {
    const f = fields.find((x) => x.name.toLowerCase() === d.name.toLowerCase());
    if (!f) continue;
    if (d.default) {
      checkDefault(s, d.default, columns.find((c) => c.name.toLowerCase() === d.name.toLowerCase())!.type);
      f.defaultValueExpression = exprText(s.ctx.sql, d.default.loc.offset);
    }
    await columnOptionFields(s, d.options, f);
    await nestedFieldExtras(s, d.type, f);
  }
  for (const f of fields) defaultRounding(f, rounding);
  return fields;
}

async function ensureTempDataset(s: Session): Promise<{ projectId: string; datasetId: string }> {
  const ds = { projectId: s.ctx.projectId, datasetId: '_session' };
  if (!s.ctx.catalog.getDataset(ds.projectId, ds.datasetId)) await s.ctx.catalog.createDataset(ds.projectId, ds.datasetId, { location: 'US' }, true);
  return ds;
}

function targetId(s: Session, path: A.Path, loc: A.Loc): TableId {
  return tableIdOf(s.analyzer(), path, loc);
}

// ---------------------------------------------------------------- CREATE TABLE / VIEW

export async function createTable(s: Session, st: A.CreateTableStmt): Promise<QueryResult> {
  let id: TableId;
  if (st.temp) {
    const parts = splitPath(st.name);
    if (parts.length !== 1) throw sqlError('CREATE TEMP TABLE requires an unqualified table name', st.loc);
    const ds = await ensureTempDataset(s);
    id = { ...ds, tableId: parts[0]! };
  } else id = targetId(s, st.name, st.loc);
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
  let columns: Column[] = [];
  let rows: Batch[] | AsyncIterable<Batch> = [];
  /** LIKE / COPY / CLONE: the source's metadata, which the statement's own clauses override. */
  const inherited: Record<string, unknown> = {};
  /** CLONE ... FOR SYSTEM_TIME AS OF: the source as of that instant (the catalog's table history). */
  let asOfMs: number | undefined;
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
      if (st.clone?.systemTime) {
        const v = constantValue(resolveExpr(s.analyzer(), st.clone.systemTime, { scope: new Scope(), clause: 'FOR SYSTEM_TIME AS OF' }));
        if (typeof v !== 'bigint') throw sqlError('FOR SYSTEM_TIME AS OF expression must be a constant TIMESTAMP', st.clone.systemTime.loc);
        asOfMs = Number(v / 1000n);
      }
      const rel: Rel = { kind: 'scan', table: src, tableColumns: info.columns.map((_, i) => i), columns: info.columns.map((c, i) => ({ id: i + 1, name: c.name, type: c.type })), ...(asOfMs !== undefined ? { asOfMs } : {}) };
      rows = await s.run(rel);
    }
  }
  // LIKE ... AS query: the source's metadata, the query's columns and rows.
  if (st.asQuery && !st.copy && !st.clone) {
    const an = s.analyzer();
    const q = s.analyze(st.asQuery, {}, an);
    checkPartitionFilters(s, q.plan);
    if (q.isValueTable) throw sqlError('CREATE TABLE AS SELECT with a value table is not supported', st.asQuery.loc);
    const names = q.outputNames;
    let rel = q.plan;
    if (st.columns) {
      columns = columnsFromDefs(st.columns);
      if (columns.length !== rel.columns.length) {
        throw sqlError(`The number of columns in the column definition list does not match the number of columns produced by the query`, st.loc);
      }
      const exprs = rel.columns.map((c, i) => coerceForWrite(colRef(c), columns[i]!, st.asQuery!.loc));
      rel = project(an, rel, exprs, columns.map((c) => c.name));
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
      }
      columns = rel.columns.map((c, i) => ({ name: names[i]!, type: c.type, required: false }));
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
  if (defaultCollation) columns = columns.map((c) => ({ ...c, type: withDefaultCollation(c.type, defaultCollation) }));
  if (st.snapshot) checkKindOptions(st.options, 'SNAPSHOT', 'CREATE SNAPSHOT TABLE');
  else checkTableOptions(st.options, 'CREATE TABLE');
  const resource = { ...inherited, ...(await optionsToResource(s, st.options)) };
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
    resource.snapshotDefinition = {
      baseTableReference: { projectId: base.projectId, datasetId: base.datasetId, tableId: base.tableId },
      snapshotTime: new Date(asOfMs ?? Number(s.exec.eval.nowMicros / 1000n)).toISOString(),
    };
  }
  if (st.clusterBy?.length) resource.clustering = clustering(st.clusterBy, columns);
  if (st.partitionBy) Object.assign(resource, await partitioning(s, st.partitionBy, columns, resource));
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
  return result(type, { ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE', ddlTargetTable: id });
}

/**
 * A table's partitioning as the service spells it in the replace error
 * (`interval(type:day,field:d)`, `range(type:integer,field:x,start:0,end:10,interval:1)`,
 * `none`, then ` clustering(a,b)`); `key` compares the partitioning alone.
 */
function partitionSpecText(r: Record<string, unknown>): { key: string; text: string } {
  const tp = r.timePartitioning as { type?: string; field?: string } | undefined;
  const rp = r.rangePartitioning as { field?: string; range?: { start?: string; end?: string; interval?: string } } | undefined;
  let key = 'none';
  if (tp) key = `interval(type:${(tp.type ?? 'DAY').toLowerCase()}${tp.field ? `,field:${tp.field}` : ''})`;
  else if (rp) key = `range(type:integer,field:${rp.field ?? ''},start:${rp.range?.start ?? ''},end:${rp.range?.end ?? ''},interval:${rp.range?.interval ?? ''})`;
  const fields = (r.clustering as { fields?: string[] } | undefined)?.fields;
  return { key, text: fields?.length ? `${key} clustering(${fields.join(',')})` : key };
}

const PARTITION_BY_FORMS =
  'PARTITION BY expression must be DATE(<timestamp_column>), DATE(<datetime_column>), DATETIME_TRUNC(<datetime_column>, DAY/HOUR/MONTH/YEAR), ' +
  'a DATE-type column, TIMESTAMP_TRUNC(<timestamp_column>, DAY/HOUR/MONTH/YEAR), DATE_TRUNC(<date_column>, MONTH/YEAR), ' +
  'or RANGE_BUCKET(<int64_column>, GENERATE_ARRAY(<int64_value>, <int64_value>[, <int64_value>]))';

/**
 * The REST `timePartitioning` / `rangePartitioning` of a CREATE TABLE's PARTITION BY
 * (what tables.get shows, and what dbt compares to decide whether a table is replaceable).
 * `partition_expiration_days` from OPTIONS becomes timePartitioning.expirationMs.
 */
async function partitioning(s: Session, e: A.Expr, columns: readonly Column[], resource: Record<string, unknown>): Promise<Record<string, unknown>> {
  const bad = (): Error => sqlError(PARTITION_BY_FORMS, e.loc);
  const column = (x: A.Expr | undefined): Column | 'ingestion' => {
    if (x?.kind !== 'PathExpr' || x.parts.length !== 1) throw bad();
    const name = x.parts[0]!;
    if (/^_PARTITION(TIME|DATE)$/i.test(name)) return 'ingestion';
    const c = columns.find((k) => k.name.toLowerCase() === name.toLowerCase());
    if (!c) throw sqlError(`Unrecognized name: ${name}`, x.loc);
    return c;
  };
  const unit = (x: A.Expr | undefined, allowed: readonly string[]): string => {
    const u = x?.kind === 'PathExpr' && x.parts.length === 1 ? x.parts[0]!.toUpperCase() : '';
    if (!allowed.includes(u)) throw bad();
    return u;
  };
  const time = (c: Column | 'ingestion', type: string): Record<string, unknown> => {
    const options = resource.options as Record<string, unknown> | undefined;
    const days = options?.['partition_expiration_days'];
    const tp: Record<string, unknown> = { type, ...(c === 'ingestion' ? {} : { field: c.name }) };
    if (days !== undefined && days !== null) tp.expirationMs = String(Math.round(Number(days) * 86_400_000));
    return { timePartitioning: tp };
  };
  const kindOf = (c: Column | 'ingestion'): string => (c === 'ingestion' ? 'TIMESTAMP' : c.type.kind);
  if (e.kind === 'PathExpr') {
    const c = column(e);
    if (c !== 'ingestion' && c.type.kind !== 'DATE') throw bad();
    return time(c, 'DAY');
  }
  if (e.kind !== 'FunctionCall' || e.name.length !== 1) throw bad();
  const fn = e.name[0]!.toUpperCase();
  const [a0, a1] = e.args;
  switch (fn) {
    case 'DATE': {
      const c = column(a0);
      if (e.args.length !== 1 || !['TIMESTAMP', 'DATETIME'].includes(kindOf(c))) throw bad();
      return time(c, 'DAY');
    }
    case 'TIMESTAMP_TRUNC':
    case 'DATETIME_TRUNC':
    case 'DATE_TRUNC': {
      const c = column(a0);
      const want = fn === 'TIMESTAMP_TRUNC' ? 'TIMESTAMP' : fn === 'DATETIME_TRUNC' ? 'DATETIME' : 'DATE';
      if (e.args.length !== 2 || kindOf(c) !== want) throw bad();
      return time(c, unit(a1, fn === 'DATE_TRUNC' ? ['MONTH', 'YEAR'] : ['DAY', 'HOUR', 'MONTH', 'YEAR']));
    }
    case 'RANGE_BUCKET': {
      const c = column(a0);
      if (c === 'ingestion' || c.type.kind !== 'INT64' || a1?.kind !== 'FunctionCall' || a1.name.join('.').toUpperCase() !== 'GENERATE_ARRAY') throw bad();
      if (a1.args.length < 2 || a1.args.length > 3) throw bad();
      const nums: bigint[] = [];
      for (const x of a1.args) {
        const v = (await s.evalScalar(x)).value;
        if (typeof v !== 'bigint') throw bad();
        nums.push(v);
      }
      const [start, end, interval = 1n] = nums as [bigint, bigint, bigint?];
      // GENERATE_ARRAY's own refusal; then at most 10,000 partitions (partitioned-tables: integer range partitioning).
      if (interval === 0n) throw sqlError('Sequence step cannot be 0.', a1.loc);
      if (interval < 0n || end <= start) throw sqlError(`RANGE_BUCKET partitioning needs GENERATE_ARRAY(start, end, interval) with start < end and a positive interval`, a1.loc);
      const count = (end - start + interval - 1n) / interval;
      if (count > 10_000n) throw sqlError(`Too many partitions: RANGE_BUCKET over GENERATE_ARRAY(${start}, ${end}, ${interval}) makes ${count} partitions; a table has at most 10000`, a1.loc);
      return { rangePartitioning: { field: c.name, range: { start: String(start), end: String(end), interval: String(interval) } } };
    }
    default:
      throw bad();
  }
}

/** An MV's `materializedView` with the refresh OPTIONS (enable_refresh, refresh_interval_minutes) applied over `base`. */
function mvRefreshSettings(resource: Record<string, unknown>, base: Record<string, unknown> | undefined): Record<string, unknown> {
  const o = (resource.options ?? {}) as Record<string, unknown>;
  const out = { ...base };
  if (o['enable_refresh'] !== undefined) out.enableRefresh = o['enable_refresh'] !== false;
  if (o['refresh_interval_minutes'] !== undefined && o['refresh_interval_minutes'] !== null) {
    out.refreshIntervalMs = String(Math.round(Number(o['refresh_interval_minutes']) * 60_000));
  }
  return out;
}

export async function createView(s: Session, st: A.CreateViewStmt): Promise<QueryResult> {
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
  // Validate the body as the view will run: bare names against the view's own dataset, and no temporary table or
  // function of this script (the view outlives them; its query names only permanent objects).
  const saved = s.env;
  const q = (() => {
    s.env = { ...saved, defaultDataset: { projectId: id.projectId, datasetId: id.datasetId }, tempTables: new Map(), tempFunctions: new Map() };
    try {
      return s.analyze(st.query);
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
    if (st.clusterBy?.length) resource.clustering = clustering(st.clusterBy, columns);
    if (st.partitionBy) Object.assign(resource, await partitioning(s, st.partitionBy, columns, resource));
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
  if (ot === 'SCHEMA') {
    const parts = splitPath(st.name);
    const projectId = parts.length > 1 ? parts[0]! : s.ctx.projectId;
    const datasetId = parts[parts.length - 1]!;
    const exists = !!cat.getDataset(projectId, datasetId);
    if (!exists && st.ifExists) return result('DROP_SCHEMA', { ddlOperationPerformed: 'SKIP' });
    if (!exists) throw new QueryError(`Not found: Dataset ${projectId}:${datasetId}`, 'notFound', 404);
    if (st.mode !== 'CASCADE' && cat.listTables(projectId, datasetId).length > 0) {
      throw new QueryError(`Dataset ${projectId}:${datasetId} is still in use`, 'invalid', 400);
    }
    await cat.dropDataset(projectId, datasetId, st.mode === 'CASCADE', st.ifExists);
    return result('DROP_SCHEMA', { ddlOperationPerformed: 'DROP' });
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
    let dropped = false;
    for (const pid of ids) dropped = (await cat.deleteChild('rowAccessPolicies', projectId, datasetId, pid, tableId)) || dropped;
    if (!dropped && ot === 'ROW ACCESS POLICY' && !st.ifExists) throw new QueryError(`Not found: Row access policy ${ids[0]}`, 'notFound', 404);
    const done = result('DROP_ROW_ACCESS_POLICY', { ddlOperationPerformed: dropped ? 'DROP' : 'SKIP', ddlTargetTable: info.id });
    // JobStatistics2: DROP ALL ROW ACCESS POLICIES reports DROP_ROW_ACCESS_POLICY ("DROP [ALL] ROW ACCESS
    // POLICY|POLICIES") and, for it only, ddlAffectedRowAccessPolicyCount.
    if (ot === 'ALL ROW ACCESS POLICIES') return { ...done, statistics: { ddlAffectedRowAccessPolicyCount: String(ids.length) } } as QueryResult;
    return done;
  }
  if (ot === 'SEARCH INDEX' || ot === 'VECTOR INDEX') return dropSearchIndex(s, st);
  if (ot === 'ROW ACCESS POLICY' || ot === 'ALL ROW ACCESS POLICIES') return result('DROP_ROW_ACCESS_POLICY', { ddlOperationPerformed: 'DROP' });
  const parts = splitPath(st.name);
  const temp = parts.length === 1 ? s.tempTables.get(parts[0]!) : undefined;
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
  if (temp) s.tempTables.delete(parts[0]!);
  return result(type, { ddlOperationPerformed: 'DROP', ddlTargetTable: id });
}

// ---------------------------------------------------------------- ALTER / SCHEMA / FUNCTION / MODEL

/** A column of the table's PRIMARY KEY or of one of its FOREIGN KEYs is neither dropped nor renamed (data-definition-language). */
function keyColumnStays(keys: RestTableConstraints, name: string, what: 'drop' | 'rename', loc: A.Loc): void {
  const l = name.toLowerCase();
  if (keys.primaryKey?.columns.some((c) => c.toLowerCase() === l)) throw sqlError(`Cannot ${what} column ${name}: it is a key column of the table's PRIMARY KEY`, loc);
  const fk = keys.foreignKeys?.find((k) => k.columnReferences.some((c) => c.referencingColumn.toLowerCase() === l));
  if (fk) throw sqlError(`Cannot ${what} column ${name}: it is a key column of the FOREIGN KEY${fk.name ? ` ${fk.name}` : ''}`, loc);
}

export async function alter(s: Session, st: A.AlterStmt): Promise<QueryResult> {
  const cat = s.ctx.catalog;
  if (st.objectType === 'SCHEMA') {
    const parts = splitPath(st.name);
    const projectId = parts.length > 1 ? parts[0]! : s.ctx.projectId;
    const datasetId = parts[parts.length - 1]!;
    if (!cat.getDataset(projectId, datasetId)) {
      if (st.ifExists) return result('ALTER_SCHEMA', { ddlOperationPerformed: 'SKIP' });
      throw new QueryError(`Not found: Dataset ${projectId}:${datasetId}`, 'notFound', 404);
    }
    // SET OPTIONS and SET DEFAULT COLLATE patch the dataset resource (as datasets.patch does).
    for (const a of st.actions) if (a.kind === 'SetOptions') checkSchemaOptions(a.options, 'ALTER SCHEMA');
    for (const a of st.actions) {
      if (a.kind === 'SetOptions') {
        const patch = await optionsToResource(s, a.options);
        // labels set replace the old ones whole, as ALTER TABLE SET OPTIONS does (data-definition-language: SET OPTIONS).
        const old = (cat.getDataset(projectId, datasetId)?.resource.labels as Record<string, string> | undefined) ?? {};
        if (patch.labels) for (const k of Object.keys(old)) if (!(k in (patch.labels as object))) (patch.labels as Record<string, unknown>)[k] = null;
        await cat.patchDatasetResource(projectId, datasetId, patch);
      }
      else if (a.kind === 'SetDefaultCollate' && checkCollationName(a.collation, a.loc)) await cat.patchDatasetResource(projectId, datasetId, { defaultCollation: a.collation });
    }
    return result('ALTER_SCHEMA', { ddlOperationPerformed: 'ALTER' });
  }
  const id = targetId(s, st.name, st.loc);
  const info = cat.getTable(id);
  const type = st.objectType === 'VIEW' ? 'ALTER_VIEW' : st.objectType === 'MATERIALIZED VIEW' ? 'ALTER_MATERIALIZED_VIEW' : 'ALTER_TABLE';
  if (!info) {
    if (st.ifExists) return result(type, { ddlOperationPerformed: 'SKIP', ddlTargetTable: id });
    throw new QueryError(`Not found: Table ${fq(id)}`, 'notFound', 404);
  }
  // ALTER VIEW / MATERIALIZED VIEW / TABLE each take only their own kind of object.
  const want = st.objectType === 'VIEW' ? 'VIEW' : st.objectType === 'MATERIALIZED VIEW' ? 'MATERIALIZED_VIEW' : 'TABLE';
  if (info.kind !== want) throw sqlError(`${fq(id)} is not a ${st.objectType === 'TABLE' ? 'table' : st.objectType.toLowerCase()}; use ALTER ${info.kind === 'MATERIALIZED_VIEW' ? 'MATERIALIZED VIEW' : info.kind}`, st.loc);
  // ALTER VIEW takes SET OPTIONS and ALTER COLUMN ... SET OPTIONS, ALTER MATERIALIZED VIEW SET OPTIONS only
  // (data-definition-language): any other action is outside their grammar.
  for (const a of st.actions) {
    const ok = a.kind === 'SetOptions' || (st.objectType === 'VIEW' && a.kind === 'AlterColumn' && a.action.kind === 'SetOptions');
    if (st.objectType !== 'TABLE' && !ok) throw sqlError(`Syntax error: ALTER ${st.objectType} takes SET OPTIONS${st.objectType === 'VIEW' ? ' and ALTER COLUMN ... SET OPTIONS' : ''} only`, a.loc);
  }
  // A rewrite of the rows (SET DATA TYPE, DROP COLUMN, ...) waits for the mutations queued before it, as DML does.
  if (info.kind === 'TABLE') await cat.transactions?.lockForMutation(id);
  let cols = info.columns.slice();
  // Source column index of each new column (-1 = added), for data rewrites.
  let origin = cols.map((_, i) => i);
  let rewrite = false;
  // Column defaults set (text) or dropped (null) by the actions: kept in the schema's defaultValueExpression.
  const defaults = new Map<string, string | null>();
  // Descriptions of added columns (ADD COLUMN ... OPTIONS(description = ...)), kept in the schema as well.
  const descriptions = new Map<string, string>();
  // Columns whose type parameters SET DATA TYPE changed or ADD COLUMN gave (at any depth): the schema's maxLength / precision / scale to write.
  const typeParams = new Map<string, Pick<RestField, 'maxLength' | 'precision' | 'scale' | 'fields'>>();
  // Key constraints after ADD/DROP PRIMARY KEY and ADD/DROP CONSTRAINT (undefined: untouched).
  let keys: RestTableConstraints | undefined;
  // SET DEFAULT COLLATE earlier in this statement (undefined: the table's own).
  let tableDefaultCollation: string | undefined;
  const curKeys = (): RestTableConstraints => (keys ??= structuredClone((info.resource.tableConstraints as RestTableConstraints | undefined) ?? {}));
  for (const a of st.actions) {
    switch (a.kind) {
      case 'AddConstraint': {
        const k = curKeys();
        const c = a.constraint;
        if (c.enforced) throw sqlError(`ENFORCED ${c.kind === 'PrimaryKey' ? 'PRIMARY KEY' : 'FOREIGN KEY'} constraints are not supported; declare the key NOT ENFORCED`, a.loc);
        for (const n of c.columns) {
          if (!cols.some((x) => x.name.toLowerCase() === n.toLowerCase())) throw sqlError(`Unsupported ${c.kind === 'PrimaryKey' ? 'primary' : 'foreign'} key column ${n} either does not exist or is a pseudocolumn`, a.loc);
        }
        if (c.name && a.ifNotExists && (k.foreignKeys ?? []).some((f) => f.name?.toLowerCase() === c.name!.toLowerCase())) break;
        if (c.name && (k.foreignKeys ?? []).some((f) => f.name?.toLowerCase() === c.name!.toLowerCase())) throw sqlError(`Constraint ${c.name} already exists in table ${fq(id)}`, a.loc);
        if (c.kind === 'PrimaryKey') {
          if (k.primaryKey?.columns.length) throw sqlError(`Table ${fq(id)} already has a primary key`, a.loc);
          k.primaryKey = { columns: c.columns.slice() };
        } else {
          const fk = tableConstraints(s, [], [c], a.loc, cols, id)!.foreignKeys![0]!;
          (k.foreignKeys ??= []).push(fk);
        }
        break;
      }
      case 'DropConstraint': {
        const k = curKeys();
        if (a.primaryKey) {
          if (!k.primaryKey?.columns.length) {
            if (a.ifExists) break;
            throw sqlError(`Table ${fq(id)} does not have a primary key`, a.loc);
          }
          delete k.primaryKey;
        } else {
          const i = (k.foreignKeys ?? []).findIndex((f) => f.name?.toLowerCase() === a.name.toLowerCase());
          if (i < 0) {
            if (a.ifExists) break;
            throw sqlError(`Constraint ${a.name} not found in table ${fq(id)}`, a.loc);
          }
          k.foreignKeys!.splice(i, 1);
          if (!k.foreignKeys!.length) delete k.foreignKeys;
        }
        break;
      }
      case 'AddColumn': {
        if (cols.some((c) => c.name.toLowerCase() === a.column.name.toLowerCase())) {
          if (a.ifNotExists) break;
          throw sqlError(`Column already exists: ${a.column.name}`, a.loc);
        }
        if (a.column.notNull) throw sqlError(`Cannot add a REQUIRED column ${a.column.name} to an existing table`, a.loc);
        checkColumnName(a.column.name, a.loc);
        checkColumnOptions(a.column.options);
        checkFieldOptions(a.column.type);
        // Nor a REQUIRED field inside a new STRUCT column (managing-table-schemas: added columns are NULLABLE or REPEATED).
        const req = requiredFieldPath(a.column.type, a.column.name);
        if (req) throw sqlError(`Cannot add a REQUIRED field ${req} to an existing table`, a.loc);
        checkColumnCollate(a.column);
        // A STRING column without its own COLLATE takes the table's default collation (SET DEFAULT COLLATE / DEFAULT COLLATE).
        const tableCollation = tableDefaultCollation ?? (info.resource.defaultCollation as string | undefined);
        const addedType = typeFromNode(a.column.type);
        cols.push({ name: a.column.name, type: tableCollation ? withDefaultCollation(addedType, tableCollation) : addedType, required: false });
        origin.push(-1);
        const added = cols[cols.length - 1]!;
        // The REST field's parameters, nested fields' options and rounding modes (the column's, else the table's default).
        const rf = tableRestField(added.name, added.type);
        await nestedFieldExtras(s, a.column.type, rf);
        await columnOptionFields(s, a.column.options, rf);
        defaultRounding(rf, info.resource.defaultRoundingMode as string | undefined);
        if (hasTypeParams(added.type) || hasNestedOptions(a.column.type) || rf.roundingMode !== undefined || JSON.stringify(rf.fields ?? []).includes('roundingMode')) {
          const { maxLength, precision, scale, fields, roundingMode: rm } = rf;
          typeParams.set(added.name.toLowerCase(), { ...(maxLength !== undefined ? { maxLength } : {}), ...(precision !== undefined ? { precision } : {}), ...(scale !== undefined ? { scale } : {}), ...(fields ? { fields } : {}), ...(rm !== undefined ? { roundingMode: rm } : {}) });
        }
        // The default applies to rows written later; existing rows read NULL (data-definition-language: ADD COLUMN).
        if (a.column.default) {
          checkDefault(s, a.column.default, cols[cols.length - 1]!.type);
          defaults.set(a.column.name.toLowerCase(), exprText(s.ctx.sql, a.column.default.loc.offset));
        }
        if (rf.description !== undefined) descriptions.set(a.column.name.toLowerCase(), rf.description);
        break;
      }
      case 'DropColumn': {
        const i = cols.findIndex((c) => c.name.toLowerCase() === a.name.toLowerCase());
        if (i < 0) {
          if (a.ifExists) break;
          throw sqlError(`Column not found: ${a.name}`, a.loc);
        }
        // Partitioning and clustering columns stay (data-definition-language: ALTER TABLE DROP COLUMN).
        const r = info.resource as { timePartitioning?: { field?: string }; rangePartitioning?: { field?: string }; clustering?: { fields?: string[] } };
        const lname = cols[i]!.name.toLowerCase();
        if ([r.timePartitioning?.field, r.rangePartitioning?.field].some((f) => f?.toLowerCase() === lname)) throw sqlError(`Cannot drop partitioning column ${cols[i]!.name}`, a.loc);
        if (r.clustering?.fields?.some((f) => f.toLowerCase() === lname)) throw sqlError(`Cannot drop clustering column ${cols[i]!.name}`, a.loc);
        keyColumnStays(curKeys(), cols[i]!.name, 'drop', a.loc);
        cols = cols.filter((_, k) => k !== i);
        origin = origin.filter((_, k) => k !== i);
        rewrite = true;
        break;
      }
      case 'RenameColumn': {
        const i = cols.findIndex((c) => c.name.toLowerCase() === a.from.toLowerCase());
        if (i < 0) {
          if (a.ifExists) break;
          throw sqlError(`Column not found: ${a.from}`, a.loc);
        }
        if (cols.some((c, k) => k !== i && c.name.toLowerCase() === a.to.toLowerCase())) throw sqlError(`Column already exists: ${a.to}`, a.loc);
        // Partitioning, clustering and key columns keep their names (data-definition-language: RENAME COLUMN).
        const rr = info.resource as { timePartitioning?: { field?: string }; rangePartitioning?: { field?: string }; clustering?: { fields?: string[] } };
        const ln = cols[i]!.name.toLowerCase();
        if ([rr.timePartitioning?.field, rr.rangePartitioning?.field].some((f) => f?.toLowerCase() === ln)) throw sqlError(`Cannot rename partitioning column ${cols[i]!.name}`, a.loc);
        if (rr.clustering?.fields?.some((f) => f.toLowerCase() === ln)) throw sqlError(`Cannot rename clustering column ${cols[i]!.name}`, a.loc);
        keyColumnStays(curKeys(), cols[i]!.name, 'rename', a.loc);
        checkColumnName(a.to, a.loc);
        // The column keeps its description and default under the new name.
        const old = ((info.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? []).find((f) => f.name.toLowerCase() === cols[i]!.name.toLowerCase());
        const desc = descriptions.get(cols[i]!.name.toLowerCase()) ?? old?.description;
        if (desc !== undefined) descriptions.set(a.to.toLowerCase(), desc);
        const dflt = defaults.has(cols[i]!.name.toLowerCase()) ? defaults.get(cols[i]!.name.toLowerCase()) : old?.defaultValueExpression;
        if (dflt !== undefined) defaults.set(a.to.toLowerCase(), dflt);
        cols[i] = { ...cols[i]!, name: a.to };
        // Storage keys data by column name: a rename rewrites the rows.
        rewrite = true;
        break;
      }
      case 'AlterColumn': {
        const i = cols.findIndex((c) => c.name.toLowerCase() === a.name.toLowerCase());
        if (i < 0) {
          if (a.ifExists) break;
          throw sqlError(`Column not found: ${a.name}`, a.loc);
        }
        if (a.action.kind === 'DropNotNull') cols[i] = { ...cols[i]!, required: false };
        else if (a.action.kind === 'SetDefault') {
          checkDefault(s, a.action.expr, cols[i]!.type);
          defaults.set(cols[i]!.name.toLowerCase(), exprText(s.ctx.sql, a.action.expr.loc.offset));
        } else if (a.action.kind === 'DropDefault') defaults.set(cols[i]!.name.toLowerCase(), null);
        else if (a.action.kind === 'SetDataType') {
          const t = typeFromNode(a.action.type);
          const oldField = ((info.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? []).find((f) => f.name.toLowerCase() === cols[i]!.name.toLowerCase());
          const oldText = typeWithParams(cols[i]!.type, oldField);
          if (!setDataTypeAllowed(cols[i]!.type, oldField, t)) {
            throw sqlError(`ALTER TABLE ALTER COLUMN SET DATA TYPE requires that the existing column type (${oldText}) is assignable to the new type (${typeToSql(t)})`, a.loc);
          }
          cols[i] = { ...cols[i]!, type: t };
          // The schema's parameters at every depth from the new type; a STRUCT's fields keep their descriptions.
          const fresh = tableRestField(cols[i]!.name, t, cols[i]!.required);
          typeParams.set(cols[i]!.name.toLowerCase(), { ...restParamsOf(fresh), ...(fresh.fields ? { fields: retypedFields(oldField?.fields, fresh.fields) } : {}) });
          rewrite = true;
        } else if (a.action.kind === 'SetOptions') {
          checkColumnOptions(a.action.options);
          // description and rounding_mode onto the column's REST field (NULL removes one).
          const fields = await Promise.all(
            ((info.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? []).map(async (f) => {
              if (f.name.toLowerCase() !== cols[i]!.name.toLowerCase()) return f;
              const g = { ...f };
              await columnOptionFields(s, a.action.kind === 'SetOptions' ? a.action.options : [], g);
              return g;
            }),
          );
          await cat.patchTableResource(id, { schema: { fields } });
        }
        break;
      }
      case 'SetOptions': {
        checkKindOptions(a.options, info.kind, type.replaceAll('_', ' '));
        if (info.kind === 'TABLE') checkPartitionOptions(a.options, info.resource);
        const patch = await optionsToResource(s, a.options);
        // An option set replaces its old value whole (data-definition-language: SET OPTIONS): labels too, which
        // the resource patch would otherwise merge key by key.
        if (patch.labels) for (const k of Object.keys((info.resource.labels as Record<string, string> | undefined) ?? {})) if (!(k in (patch.labels as object))) (patch.labels as Record<string, unknown>)[k] = null;
        if (info.kind === 'MATERIALIZED_VIEW') patch.materializedView = mvRefreshSettings(patch, info.resource.materializedView as Record<string, unknown> | undefined);
        // partition_expiration_days lives in timePartitioning.expirationMs, as CREATE TABLE puts it (tables.get, TABLE_OPTIONS).
        const days = (patch.options as Record<string, unknown> | undefined)?.['partition_expiration_days'];
        const tp = info.resource.timePartitioning as Record<string, unknown> | undefined;
        if (days !== undefined && tp) {
          const { expirationMs: _old, ...rest } = tp;
          patch.timePartitioning = days === null ? rest : { ...rest, expirationMs: String(Math.round(Number(days) * 86_400_000)) };
        }
        await cat.patchTableResource(id, patch);
        break;
      }
      case 'SetDefaultCollate': {
        // Applies to columns added later only (data-definition-language: ALTER TABLE SET DEFAULT COLLATE).
        checkCollationName(a.collation, a.loc);
        tableDefaultCollation = a.collation;
        await cat.patchTableResource(id, { defaultCollation: a.collation });
        break;
      }
      case 'RenameTo': {
        const to = tableIdOf(s.analyzer(), a.name.length === 1 ? [id.datasetId, a.name[0]!] : a.name, a.loc);
        // A table is renamed within its dataset (data-definition-language: ALTER TABLE RENAME TO).
        if (to.projectId !== id.projectId || to.datasetId !== id.datasetId) throw sqlError(`ALTER TABLE RENAME TO cannot move ${fq(id)} to another dataset (${to.projectId}:${to.datasetId})`, a.loc);
        if (cat.getTable(to)) throw already('Table', fq(to));
        // The table (rows, history, metadata) takes the new name in one commit.
        await cat.renameTable(id, to);
        return result(type, { ddlOperationPerformed: 'ALTER', ddlTargetTable: id });
      }
      default:
        break;
    }
  }
  // A table keeps at least one column.
  if (!cols.length) throw sqlError(`ALTER TABLE cannot drop every column of ${fq(id)}; a table needs at least one column`, st.loc);
  if (rewrite) {
    const an = s.analyzer();
    const scan = scanAll(s, info);
    const exprs = cols.map((c, k) => {
      const i = origin[k]!;
      return i < 0 ? literal(c.type, null) : coerce(colRef(scan.columns[i]!), c.type);
    });
    // Rows keep an ingestion-time partitioned table's partition time (the scan's last column).
    const kept = scan.columns.slice(info.columns.length);
    const rows = await s.run(project(an, scan, [...exprs, ...kept.map((c) => colRef(c))], [...cols.map((c) => c.name), ...kept.map((c) => c.name)]));
    await cat.replaceRows(id, rows, cols);
  } else if (cols.length !== info.columns.length || cols.some((c, i) => c !== info.columns[i])) {
    await cat.alterColumns(id, cols);
  }
  if (defaults.size || descriptions.size || typeParams.size) {
    const now = cat.getTable(id)!;
    const fields = ((now.resource.schema as { fields?: RestField[] } | undefined)?.fields ?? now.columns.map((c) => columnToRestField(c.name, c.type, c.required))).map((f0) => {
      const desc = descriptions.get(f0.name.toLowerCase());
      const tp = typeParams.get(f0.name.toLowerCase());
      const { maxLength: _m, precision: _p, scale: _s, ...bare } = f0;
      const f1 = tp === undefined ? f0 : { ...bare, ...tp };
      const f = desc === undefined ? f1 : { ...f1, description: desc };
      const d = defaults.get(f.name.toLowerCase());
      if (d === undefined) return f;
      const { defaultValueExpression: _, ...rest } = f;
      return d === null ? rest : { ...rest, defaultValueExpression: d };
    });
    await cat.patchTableResource(id, { schema: { fields } });
  }
  // tables.patch: null removes the last key constraint.
  if (keys) await cat.patchTableResource(id, { tableConstraints: keys.primaryKey || keys.foreignKeys ? keys : null });
  return result(type, { ddlOperationPerformed: 'ALTER', ddlTargetTable: id });
}

export async function createSchema(s: Session, st: A.CreateSchemaStmt): Promise<QueryResult> {
  const parts = splitPath(st.name);
  const projectId = parts.length > 1 ? parts[0]! : s.ctx.projectId;
  const datasetId = parts[parts.length - 1]!;
  const cat = s.ctx.catalog;
  if (cat.getDataset(projectId, datasetId)) {
    if (st.ifNotExists) return result('CREATE_SCHEMA', { ddlOperationPerformed: 'SKIP' });
    if (!st.orReplace) throw already('Dataset', `${projectId}:${datasetId}`);
  }
  checkSchemaOptions(st.options, 'CREATE SCHEMA');
  checkCollationName(st.defaultCollate, st.loc);
  const resource = { location: 'US', ...(await optionsToResource(s, st.options)), ...(st.defaultCollate ? { defaultCollation: st.defaultCollate } : {}) };
  await cat.createDataset(projectId, datasetId, resource, st.ifNotExists || st.orReplace);
  return result('CREATE_SCHEMA', { ddlOperationPerformed: 'CREATE' });
}

export async function undropSchema(s: Session, st: A.UndropSchemaStmt): Promise<QueryResult> {
  const parts = splitPath(st.name);
  const projectId = parts.length > 1 ? parts[0]! : s.ctx.projectId;
  await s.ctx.catalog.undropDataset(projectId, parts[parts.length - 1]!, st.ifNotExists);
  return result('UNDROP_SCHEMA', { ddlOperationPerformed: 'UNDROP' });
}

function typeJson(t: SqlType): Record<string, unknown> {
  switch (t.kind) {
    case 'ARRAY':
      return { typeKind: 'ARRAY', arrayElementType: typeJson(t.element) };
    case 'STRUCT':
      return { typeKind: 'STRUCT', structType: { fields: t.fields.map((f) => ({ name: f.name, type: typeJson(f.type) })) } };
    default:
      return { typeKind: t.kind };
  }
}

export async function createFunction(s: Session, st: A.CreateFunctionStmt): Promise<QueryResult> {
  const type = st.tableFunction ? 'CREATE_TABLE_FUNCTION' : 'CREATE_FUNCTION';
  if (st.language && !['js', 'javascript', 'sql', 'python'].includes(st.language.toLowerCase())) {
    throw sqlError(`Language "${st.language}" is unsupported`, st.loc);
  }
  const external = languageOf(st) !== undefined;
  // A string body is code of another language: without LANGUAGE it is neither that nor a SQL body (an expression in parentheses).
  if (st.code !== undefined && !external && !st.remoteConnection) throw sqlError(`Function ${st.name.join('.')} has a string body but no LANGUAGE clause; a SQL function body is an expression in parentheses`, st.loc);
  if (external) {
    // Non-SQL bodies are checked now (types, options); they run at call time (src/udf/).
    const typed = (t: A.TypeNode) => (t.kind === 'AnyType' || t.kind === 'TableType' || t.kind === 'AnyTableType' ? undefined : typeFromNode(t));
    const params = st.params.map((p) => typed(p.type)).filter((t): t is SqlType => t !== undefined);
    try {
      checkExternalFunction(st, params, st.returns ? typed(st.returns) : undefined);
    } catch (e) {
      if (e instanceof QueryError) throw sqlError(e.message, st.loc);
      throw e;
    }
  }
  checkParamNames(st.params, st.loc);
  if (!external && !st.remoteConnection && !st.tableFunction) checkOptionNames(st.options, SQL_FUNCTION_OPTIONS, 'CREATE FUNCTION');
  if (!external && !st.tableFunction && !st.aggregate && st.body) refuseAggregateBody(st);
  if (st.temp && splitPath(st.name).length > 1) throw sqlError(`CREATE TEMP FUNCTION requires an unqualified name, but got ${st.name.join('.')}`, st.loc);
  if (!st.temp) {
    // A persistent function's body sees no temporary function (it outlives them): such a call names no function.
    const called = new Set<string>();
    callNames(st.body ?? st.query, called);
    for (const n of called) if (s.tempFunctions.has(n)) throw sqlError(`Function not found: ${n.toLowerCase()}; the persistent function ${st.name.join('.')} cannot call the temporary function ${n.toLowerCase()}`, st.loc);
  }
  checkDeclaredTable(s.analyzer(), st);
  checkSqlFunctionReturn(s.analyzer(), st);
  if (st.temp) {
    const key = st.name.join('.').toUpperCase();
    if (s.tempFunctions.has(key) && !st.orReplace) {
      if (st.ifNotExists) return result(type, { ddlOperationPerformed: 'SKIP' });
      throw sqlError(`Function ${st.name.join('.')} already exists`, st.loc);
    }
    s.tempFunctions.set(key, st);
    return result(type, { ddlOperationPerformed: 'CREATE' });
  }
  const cat = s.ctx.catalog;
  let id: TableId;
  if (splitPath(st.name).length === 1 && !s.env.defaultDataset) {
    // Unqualified persistent function without a default dataset: kept at project level.
    id = { projectId: s.ctx.projectId, datasetId: UNQUALIFIED_ROUTINES, tableId: splitPath(st.name)[0]! };
    if (!cat.getDataset(id.projectId, id.datasetId)) await cat.createDataset(id.projectId, id.datasetId, { location: 'US' }, true);
  } else id = targetId(s, st.name, st.loc);
  if (!cat.getDataset(id.projectId, id.datasetId)) throw tableNotFound(s.analyzer(), id);
  if (st.tableFunction) refuseSelfCall(s, st, id);
  const existing = cat.getChild('routines', id.projectId, id.datasetId, id.tableId);
  const routine = { projectId: id.projectId, datasetId: id.datasetId, routineId: id.tableId };
  if (existing && st.ifNotExists) return result(type, { ddlOperationPerformed: 'SKIP', ddlTargetRoutine: routine });
  if (existing && !st.orReplace) throw already('Function', `${id.projectId}:${id.datasetId}.${id.tableId}`);
  const now = String(Date.now());
  const resource: Record<string, unknown> = {
    routineReference: routine,
    routineType: st.tableFunction ? 'TABLE_VALUED_FUNCTION' : st.aggregate ? 'AGGREGATE_FUNCTION' : 'SCALAR_FUNCTION',
    language: st.language ? (st.language.toLowerCase() === 'js' ? 'JAVASCRIPT' : st.language.toUpperCase()) : 'SQL',
    definitionBody: st.code ?? st.bodyText ?? '',
    arguments: st.params.map((p) =>
      p.type.kind === 'AnyType' || p.type.kind === 'AnyTableType'
        ? { name: p.name, argumentKind: 'ANY_TYPE' }
        : p.type.kind === 'TableType'
          ? { name: p.name, argumentKind: 'FIXED_TYPE', dataType: { typeKind: 'TABLE' } }
          : { name: p.name, dataType: typeJson(typeFromNode(p.type)) },
    ),
    ...(st.returns && st.returns.kind !== 'TableType' && st.returns.kind !== 'AnyType' ? { returnType: typeJson(typeFromNode(st.returns)) } : {}),
    ...(st.deterministic !== undefined ? { determinismLevel: st.deterministic ? 'DETERMINISTIC' : 'NOT_DETERMINISTIC' } : {}),
    ...(external ? externalRoutineFields(st) : {}),
    ...(await routineOptionFields(s, st.tableFunction ? checkedOptions(st.options, TABLE_FUNCTION_OPTIONS, 'CREATE TABLE FUNCTION') : st.options)),
    ddl: s.ctx.sql.slice(st.start, st.end),
    creationTime: (existing?.creationTime as string) ?? now,
    lastModifiedTime: now,
  };
  await cat.putChild('routines', id.projectId, id.datasetId, id.tableId, resource);
  return result(type, { ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE', ddlTargetRoutine: routine });
}

/**
 * A table function's body may not call the table function itself (routines are not recursive; a scalar function's
 * body fails the same way when it is resolved, before the function exists).
 */
function refuseSelfCall(s: Session, st: A.CreateFunctionStmt, id: TableId): void {
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!n || typeof n !== 'object') return;
    const o = n as { kind?: string; name?: A.Path; loc?: A.Loc };
    if (o.kind === 'TvfRef' && o.name) {
      let ref: TableId | undefined;
      try {
        ref = targetId(s, o.name, o.loc ?? st.loc);
      } catch {
        ref = undefined;
      }
      if (ref && ref.projectId === id.projectId && ref.datasetId === id.datasetId && ref.tableId.toLowerCase() === id.tableId.toLowerCase()) {
        throw sqlError(`Table-valued function ${o.name.join('.')} cannot be called in its own body: recursive table functions are not supported`, o.loc ?? st.loc);
      }
    }
    for (const v of Object.values(n)) if (v && typeof v === 'object') walk(v);
  };
  walk(st.query);
}

/**
 * A scalar (non-AGGREGATE) SQL function's body may not aggregate outside a subquery of its own: refused at CREATE
 * with the reference implementation's words, where the call failed later without naming the function.
 */
function refuseAggregateBody(st: A.CreateFunctionStmt): void {
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!n || typeof n !== 'object') return;
    const o = n as { kind?: string };
    if (o.kind === 'Query') return; // a subquery aggregates its own rows
    if (o.kind === 'FunctionCall') {
      const f = n as A.FunctionCall;
      if (!f.over && f.name.length === 1 && lookupFunction(f.name[0]!)?.kind === 'aggregate') {
        throw sqlError(`Aggregate function ${f.name[0]!.toUpperCase()} not allowed in SQL function body for non-AGGREGATE function`, f.loc);
      }
    }
    for (const v of Object.values(n)) if (v && typeof v === 'object') walk(v);
  };
  walk(st.body);
}

/** A routine's parameters have distinct names (case-insensitive), as ZetaSQL requires. */
function checkParamNames(params: readonly { name: string }[], loc: A.Loc): void {
  const seen = new Set<string>();
  for (const p of params) {
    const l = p.name.toLowerCase();
    if (seen.has(l)) throw sqlError(`Duplicate argument name ${p.name}`, loc);
    seen.add(l);
  }
}

/** The first AST node of one of `kinds` anywhere under `node` (a depth-first walk). */
function findNode(node: unknown, kinds: readonly string[]): { loc: A.Loc } | undefined {
  if (Array.isArray(node)) {
    for (const x of node) {
      const f = findNode(x, kinds);
      if (f) return f;
    }
    return undefined;
  }
  if (!node || typeof node !== 'object') return undefined;
  if (kinds.includes((node as { kind?: string }).kind ?? '')) return node as { loc: A.Loc };
  for (const v of Object.values(node)) {
    const f = findNode(v, kinds);
    if (f) return f;
  }
  return undefined;
}

/** The one-part names called anywhere in an AST (upper-cased, as the temporary functions are keyed). */
function callNames(node: unknown, out: Set<string>): void {
  if (Array.isArray(node)) {
    for (const x of node) callNames(x, out);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const n = node as { kind?: unknown; name?: unknown };
  if (n.kind === 'FunctionCall' && Array.isArray(n.name) && n.name.length === 1) out.add(String(n.name[0]).toUpperCase());
  for (const v of Object.values(node)) callNames(v, out);
}

/**
 * The REST Routine fields of a routine's OPTIONS that INFORMATION_SCHEMA.ROUTINE_OPTIONS lists besides
 * library (importedLibraries): description, data_governance_type.
 */
/** A table function's options (data-definition-language: table_function_options_list). */
const TABLE_FUNCTION_OPTIONS = new Set(['description']);
/** The options of a SQL function (temporary or not; other languages and remote functions take their own). */
const SQL_FUNCTION_OPTIONS = new Set(['description', 'data_governance_type']);
/** The options of a SQL stored procedure. */
const PROCEDURE_OPTIONS = new Set(['description', 'strict_mode']);

function checkedOptions(opts: readonly A.OptionEntry[] | undefined, allowed: ReadonlySet<string>, what: string): readonly A.OptionEntry[] | undefined {
  checkOptionNames(opts, allowed, what);
  return opts;
}

async function routineOptionFields(s: Session, opts: readonly A.OptionEntry[] | undefined): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const o of opts ?? []) {
    const key = o.name.toLowerCase();
    if (key !== 'description' && key !== 'data_governance_type') continue;
    const v = await s.evalScalar(o.value);
    if (v.value === null) continue;
    if (v.type.kind !== 'STRING') throw sqlError(`Invalid value for option ${key}: expected STRING but got ${typeToSql(v.type)}`, o.value.loc);
    if (key === 'description') out.description = v.value;
    // routines: data_governance_type takes one value, DATA_MASKING.
    else if (v.value !== 'DATA_MASKING') throw sqlError(`Invalid value for option data_governance_type: ${JSON.stringify(v.value)}; the supported value is "DATA_MASKING"`, o.value.loc);
    else out.dataGovernanceType = v.value;
  }
  return out;
}

/** REST Routine fields of a JavaScript / Python function (importedLibraries, pythonOptions). */
function externalRoutineFields(st: A.CreateFunctionStmt): Record<string, unknown> {
  if (languageOf(st) === 'js') {
    const libs = stringListOption(st, 'library');
    return libs?.length ? { importedLibraries: libs } : {};
  }
  const packages = stringListOption(st, 'packages');
  return { pythonOptions: { entryPoint: stringOption(st, 'entry_point'), ...(packages?.length ? { packages } : {}) } };
}

export async function createModel(s: Session, st: A.CreateModelStmt): Promise<QueryResult> {
  const id = targetId(s, st.name, st.loc);
  const cat = s.ctx.catalog;
  if (!cat.getDataset(id.projectId, id.datasetId)) throw tableNotFound(s.analyzer(), id);
  // The training query is analysed as the service does: a table it reads that does not exist is notFound.
  const training = st.query ? s.analyze(st.query) : undefined;
  const existing = cat.getChild('models', id.projectId, id.datasetId, id.tableId);
  if (existing && st.ifNotExists) return result('CREATE_MODEL', { ddlOperationPerformed: 'SKIP' });
  if (existing && !st.orReplace) throw already('Model', `${id.projectId}:${id.datasetId}.${id.tableId}`);
  const opts = await optionsToResource(s, st.options);
  const options = (opts.options as Record<string, unknown> | undefined) ?? {};
  const labels = (options.input_label_cols as string[] | undefined) ?? ['label'];
  const isLabel = (name: string): boolean => labels.some((l) => l.toLowerCase() === name.toLowerCase());
  // The training query's columns as StandardSqlFields: the label columns, the others are features
  // (bq show --model prints both; ML.PREDICT's stub names predicted_<label> from the labels).
  const trained = training?.plan.columns.map((c, i) => ({ name: training.outputNames[i] ?? c.name, type: typeJson(c.type) }));
  const labelColumns = trained?.filter((c) => isLabel(c.name));
  const now = String(Date.now());
  await cat.putChild('models', id.projectId, id.datasetId, id.tableId, {
    modelReference: { projectId: id.projectId, datasetId: id.datasetId, modelId: id.tableId },
    modelType: String((options.model_type as string | undefined) ?? 'MODEL_TYPE_UNSPECIFIED').toUpperCase(),
    ...(trained ? { featureColumns: trained.filter((c) => !isLabel(c.name)) } : {}),
    labelColumns: labelColumns?.length ? labelColumns : labels.map((name) => ({ name, type: { typeKind: 'FLOAT64' } })),
    creationTime: now,
    lastModifiedTime: now,
    location: 'US',
  });
  return result('CREATE_MODEL', { ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE' });
}

export { outputNames };

// ---------------------------------------------------------------- procedures and row-access policies

export async function createProcedure(s: Session, st: A.CreateProcedureStmt): Promise<QueryResult> {
  checkParamNames(st.params, st.loc);
  checkOptionNames(st.options, PROCEDURE_OPTIONS, 'CREATE PROCEDURE');
  const strict = st.options?.find((o) => o.name.toLowerCase() === 'strict_mode');
  if (strict) {
    const v = await s.evalScalar(strict.value);
    if (v.type.kind !== 'BOOL' && v.value !== null) throw sqlError(`Invalid value for option strict_mode: expected BOOL but got ${typeToSql(v.type)}`, strict.value.loc);
  }
  const id = targetId(s, st.name, st.loc);
  const cat = s.ctx.catalog;
  if (!cat.getDataset(id.projectId, id.datasetId)) throw tableNotFound(s.analyzer(), id);
  const existing = cat.getChild('routines', id.projectId, id.datasetId, id.tableId);
  const routine = { projectId: id.projectId, datasetId: id.datasetId, routineId: id.tableId };
  if (existing && st.ifNotExists) return result('CREATE_PROCEDURE', { ddlOperationPerformed: 'SKIP', ddlTargetRoutine: routine });
  if (existing && !st.orReplace) throw already('Procedure', `${id.projectId}:${id.datasetId}.${id.tableId}`);
  checkProcedureTables(s, st);
  const now = String(Date.now());
  await cat.putChild('routines', id.projectId, id.datasetId, id.tableId, {
    routineReference: routine,
    routineType: 'PROCEDURE',
    language: 'SQL',
    definitionBody: st.bodyText,
    arguments: st.params.map((p) => ({ name: p.name, mode: p.mode ?? 'IN', dataType: typeJson(typeFromNode(p.type)) })),
    ...(await routineOptionFields(s, st.options)),
    ddl: s.ctx.sql.slice(st.start, st.end),
    creationTime: (existing?.creationTime as string) ?? now,
    lastModifiedTime: now,
  });
  return result('CREATE_PROCEDURE', { ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE', ddlTargetRoutine: routine });
}

/**
 * strict_mode (the default, TRUE): the service checks a procedure body's references when the procedure is made,
 * so a dataset-qualified table that does not exist is an error of the CREATE (procedures: strict_mode). Checked
 * here for the names that are plainly tables: FROM paths of two or three parts whose dataset exists, less the
 * tables the body makes itself; bare names (CTEs, temporary tables, array paths) and dynamic SQL are left to the call.
 */
function checkProcedureTables(s: Session, st: A.CreateProcedureStmt): void {
  const opt = st.options?.find((o) => o.name.toLowerCase() === 'strict_mode');
  if (opt && opt.value.kind === 'BoolLiteral' && !opt.value.value) return;
  const refs: A.TableRef[] = [];
  const made = new Set<string>();
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!n || typeof n !== 'object') return;
    const o = n as { kind?: string; path?: A.Path; name?: A.Path };
    if (o.kind === 'TableRef') refs.push(n as A.TableRef);
    if (o.kind && /^Create/.test(o.kind) && Array.isArray(o.name)) made.add(splitPath(o.name).pop()!.toLowerCase());
    for (const v of Object.values(n)) if (v && typeof v === 'object') walk(v);
  };
  walk(st.body);
  const cat = s.ctx.catalog;
  for (const r of refs) {
    const parts = splitPath(r.path);
    if (parts.length < 2 || parts.length > 3 || parts.some((p) => p.toUpperCase() === 'INFORMATION_SCHEMA') || made.has(parts[parts.length - 1]!.toLowerCase())) continue;
    const projectId = parts.length === 3 ? parts[0]! : s.ctx.projectId;
    const datasetId = parts[parts.length - 2]!;
    if (!cat.getDataset(projectId, datasetId)) continue;
    const id = { projectId, datasetId, tableId: parts[parts.length - 1]! };
    if (!cat.getTable(id)) throw tableNotFound(s.analyzer(), id);
  }
}

export function findProcedure(s: Session, name: A.Path, loc: A.Loc): A.CreateProcedureStmt {
  const id = targetId(s, name, loc);
  const r = s.ctx.catalog.getChild('routines', id.projectId, id.datasetId, id.tableId);
  const ddl = r?.ddl as string | undefined;
  const stmt = ddl ? s.env.parse(ddl).statements[0] : undefined;
  if (!stmt || stmt.kind !== 'CreateProcedure') throw new QueryError(`Not found: Procedure ${id.projectId}:${id.datasetId}.${id.tableId}`, 'notFound', 404);
  return stmt;
}

export async function createRowAccessPolicy(s: Session, st: A.CreateRowAccessPolicyStmt): Promise<QueryResult> {
  const info = writeTarget(s, st.table, st.loc);
  const cat = s.ctx.catalog;
  const { projectId, datasetId, tableId } = info.id;
  const existing = cat.getChild('rowAccessPolicies', projectId, datasetId, st.name, tableId);
  if (existing && st.ifNotExists) return result('CREATE_ROW_ACCESS_POLICY', { ddlOperationPerformed: 'SKIP', ddlTargetTable: info.id });
  if (existing && !st.orReplace) throw already('Row access policy', st.name);
  const grantees: string[] = [];
  for (const g of st.grantTo) {
    const v = (await s.evalScalar(g)).value;
    // Each grantee is a principal with its type (user:, group:, serviceAccount:, domain:) or allUsers / allAuthenticatedUsers.
    if (typeof v !== 'string' || !GRANTEE.test(v)) throw sqlError(`Invalid grantee ${JSON.stringify(v)}: expected user:, group:, serviceAccount: or domain: followed by the principal, allUsers or allAuthenticatedUsers`, g.loc);
    grantees.push(v);
  }
  // The filter's source text, without the closing parenthesis of FILTER USING ( ... ).
  const filterPredicate = s.ctx.sql.slice(st.filter.loc.offset, st.end).trim().replace(/\)\s*$/, '').trim();
  // The filter is analyzed now over the table's columns (an unknown name or a non-BOOL filter is refused at CREATE).
  const probe = parseStatement(`SELECT 1 FROM \`${projectId}.${datasetId}.${tableId}\` WHERE ${filterPredicate}`);
  if (probe.kind === 'QueryStatement') {
    try {
      s.analyze(probe.query);
    } catch (e) {
      if (e instanceof QueryError) throw sqlError(e.message.replace(/ at \[\d+:\d+\]$/, ''), st.filter.loc);
      throw e;
    }
  }
  const now = String(Date.now());
  await cat.putChild('rowAccessPolicies', projectId, datasetId, st.name, {
    rowAccessPolicyReference: { projectId, datasetId, tableId, policyId: st.name },
    filterPredicate,
    ...(grantees.length ? { grantees } : {}),
    creationTime: now,
    lastModifiedTime: now,
  }, tableId);
  return result('CREATE_ROW_ACCESS_POLICY', { ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE', ddlTargetTable: info.id });
}

// ---------------------------------------------------------------- GRANT / REVOKE

/** IAM bindings GRANT/REVOKE keep on a table or view (hidden `iamPolicy` of its resource; INFORMATION_SCHEMA.OBJECT_PRIVILEGES reads them). */
export interface IamBinding {
  role: string;
  members: string[];
}

const GRANTEE = /^(user|group|serviceAccount|domain):.+$|^(allUsers|allAuthenticatedUsers)$|^specialGroup:.+$/;

export async function grant(s: Session, st: A.GrantStmt): Promise<QueryResult> {
  const type = st.revoke ? 'REVOKE' : 'GRANT';
  const members: string[] = [];
  for (const g of st.grantees) {
    const v = (await s.evalScalar(g)).value;
    if (typeof v !== 'string' || !GRANTEE.test(v)) throw sqlError(`Invalid grantee ${JSON.stringify(v)}: expected user:, group:, serviceAccount: or domain: followed by the principal`, g.loc);
    members.push(v);
  }
  if (st.resourceType.toUpperCase() === 'SCHEMA') {
    // Dataset grants live in the dataset's access list (datasets.get `access[]`), as in the real service.
    const parts = splitPath(st.resource);
    const projectId = parts.length > 1 ? parts[0]! : s.ctx.projectId;
    const datasetId = parts[parts.length - 1]!;
    const ds = s.ctx.catalog.getDataset(projectId, datasetId);
    if (!ds) throw new QueryError(`Not found: Dataset ${projectId}:${datasetId}`, 'notFound', 404);
    let access = (Array.isArray(ds.resource.access) ? ds.resource.access : []) as AccessEntry[];
    for (const role of st.roles) {
      for (const m of members) {
        const principal = memberToAccess(m);
        const has = access.some((e) => sameGrant(e, role, principal));
        if (st.revoke) access = access.filter((e) => !sameGrant(e, role, principal));
        else if (!has) access = [...access, { role: legacyRole(role), ...principal }];
      }
    }
    await s.ctx.catalog.patchDatasetResource(projectId, datasetId, { access });
    return result(type, {});
  }
  const id = targetId(s, st.resource, st.loc);
  const info = s.ctx.catalog.getTable(id);
  if (!info) throw tableNotFound(s.analyzer(), id);
  const bindings = (((info.resource.iamPolicy as { bindings?: IamBinding[] } | undefined)?.bindings) ?? []).map((b) => ({ role: b.role, members: b.members.slice() }));
  for (const role of st.roles) {
    let b = bindings.find((x) => x.role === role);
    if (!b) bindings.push((b = { role, members: [] }));
    for (const m of members) {
      if (st.revoke) b.members = b.members.filter((x) => x !== m);
      else if (!b.members.includes(m)) b.members.push(m);
    }
  }
  await s.ctx.catalog.patchTableResource(id, { iamPolicy: { bindings: bindings.filter((b) => b.members.length) } });
  return result(type, {});
}
