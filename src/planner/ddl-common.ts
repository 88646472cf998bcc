// What the DDL statements share: OPTIONS lists checked against what each kind of
// object takes and turned into resource fields; the "already exists" error; the
// target table of a statement.
import type * as A from '../../grammar/ast.js';
import { tableIdOf } from '../analyzer/names.js';
import { findNode } from '../analyzer/ast-search.js';
import type { TableId } from '../storage/api.js';
import type { Column } from '../types/schema.js';
import { T, arrayOf, structOf, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import { Decimal, Interval, type Value } from '../types/values.js';
import { formatInterval } from '../types/json-values.js';
import { labelError, tooManyLabels } from '../types/labels.js';
import { QueryError } from './api.js';
import type { Session } from './session.js';
import { sqlError } from '../analyzer/errors.js';

export function already(what: string, id: string): QueryError {
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
export const OPTION_TYPES: ReadonlyMap<string, SqlType> = new Map<string, SqlType>([
  ['description', T.STRING], ['friendly_name', T.STRING], ['kms_key_name', T.STRING], ['default_kms_key_name', T.STRING],
  ['location', T.STRING], ['default_rounding_mode', T.STRING], ['storage_billing_model', T.STRING],
  ['expiration_timestamp', T.TIMESTAMP],
  ['partition_expiration_days', T.FLOAT64], ['default_table_expiration_days', T.FLOAT64], ['default_partition_expiration_days', T.FLOAT64],
  ['refresh_interval_minutes', T.FLOAT64],
  ['require_partition_filter', T.BOOL], ['is_case_insensitive', T.BOOL], ['enable_refresh', T.BOOL], ['enable_change_history', T.BOOL],
  ['allow_non_incremental_definition', T.BOOL], ['enable_fine_grained_mutations', T.BOOL],
  ['storage_uri', T.STRING], ['file_format', T.STRING], ['table_format', T.STRING],
  ['max_time_travel_hours', T.INT64], ['max_staleness', T.INTERVAL],
  ['labels', arrayOf(structOf([{ name: '', type: T.STRING }, { name: '', type: T.STRING }]))],
]);

/** labels take any ARRAY of two-STRING STRUCTs, whatever the field names. */
function labelsShaped(t: SqlType): boolean {
  return t.kind === 'ARRAY' && t.element.kind === 'STRUCT' && t.element.fields.length === 2 && t.element.fields.every((f) => f.type.kind === 'STRING');
}

/**
 * The value of any OPTIONS entry (of a table, schema, column, routine or index). data-definition-language: an
 * option's value is a constant expression of literals, query parameters and scalar functions; a query (scalar,
 * ARRAY or EXISTS subquery) is none.
 */
export function evalOption(s: Session, o: A.OptionEntry, target?: SqlType): Promise<{ type: SqlType; value: Value }> {
  const sub = findNode(o.value, ['ScalarSubquery', 'ArraySubquery', 'ExistsExpr', 'Query']);
  if (sub) throw sqlError(`The value of option ${o.name} must be a constant expression; it cannot contain a subquery`, sub.loc);
  return s.inOptionsTimeZone(() => s.evalScalar(o.value, s.analyzer(), target));
}

/** An option's value, coerced to the option's documented type; a value that cannot coerce is refused as ZetaSQL refuses it. */
async function optionValue(s: Session, o: A.OptionEntry): Promise<{ type: SqlType; value: Value }> {
  const want = OPTION_TYPES.get(o.name.toLowerCase());
  const tv = await evalOption(s, o, want);
  if (want && tv.value !== null && !typeEquals(tv.type, want) && !(o.name.toLowerCase() === 'labels' && labelsShaped(tv.type))) {
    throw sqlError(`Option ${o.name} value has type ${typeToSql(tv.type)} which cannot be coerced to expected type ${typeToSql(want)}`, o.value.loc);
  }
  return tv;
}

export async function optionsToResource(s: Session, opts: readonly A.OptionEntry[] | undefined): Promise<Record<string, unknown>> {
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
        const pairs = (v as Value[][] | null) ?? [];
        // labels-intro (Requirements for labels): at most 64 labels, each key once per resource.
        const many = tooManyLabels(pairs.length);
        if (many) throw sqlError(many, o.value.loc);
        for (const kv of pairs) {
          const key = String(kv[0]);
          checkLabel(key, kv[1] === null ? '' : String(kv[1]), o.value.loc);
          if (Object.hasOwn(labels, key)) throw sqlError(`Duplicate label key "${key}": a label key is unique within a resource`, o.value.loc);
          labels[key] = String(kv[1]);
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
      case 'storage_uri':
      case 'file_format':
      case 'table_format': {
        // data-definition-language (table_option_list): "Only PARQUET is supported" / "Only ICEBERG is supported".
        const only = name === 'file_format' ? 'PARQUET' : name === 'table_format' ? 'ICEBERG' : undefined;
        if (only && v !== null && String(v).toUpperCase() !== only) throw sqlError(`Invalid value for option ${name}: ${JSON.stringify(v)}; only ${only} is supported`, o.value.loc);
        // The REST table resource keeps them in biglakeConfiguration (storageUri, fileFormat, tableFormat), which
        // storage refuses with 501 notImplemented (spec §4.3.1) rather than the table dropping them.
        const field = name === 'storage_uri' ? 'storageUri' : name === 'file_format' ? 'fileFormat' : 'tableFormat';
        const big = (out.biglakeConfiguration ??= {} as Record<string, unknown>) as Record<string, unknown>;
        big[field] = v === null ? undefined : only ?? v;
        break;
      }
      default:
        (out.options ??= {} as Record<string, unknown>);
        (out.options as Record<string, unknown>)[name] = optionJson(tv.type, v);
    }
  }
  return out;
}

function checkLabel(key: string, value: string, loc: A.Loc): void {
  const why = labelError(key, value);
  if (why) throw sqlError(why, loc);
}

/** GoogleSQL names of the REST schema's legacy type names, for messages. */
export const REST_TYPE_SQL: Readonly<Record<string, string>> = { INTEGER: 'INT64', FLOAT: 'FLOAT64', BOOLEAN: 'BOOL', RECORD: 'STRUCT' };

/** rounding_mode / default_rounding_mode (data-definition-language: the two rounding modes of NUMERIC writes). */
export const ROUNDING_MODES = ['ROUND_HALF_AWAY_FROM_ZERO', 'ROUND_HALF_EVEN'];

export function roundingMode(v: unknown, loc: A.Loc): string {
  if (typeof v !== 'string' || !ROUNDING_MODES.includes(v)) throw sqlError(`Invalid rounding mode ${JSON.stringify(v)}: expected ${ROUNDING_MODES.join(' or ')}`, loc);
  return v;
}

/** The options a column or STRUCT field takes (data-definition-language: column_option_list). */
const COLUMN_OPTIONS = new Set(['description', 'rounding_mode', 'data_policies']);

export function checkColumnOptions(opts: readonly A.OptionEntry[] | undefined): void {
  for (const o of opts ?? []) if (!COLUMN_OPTIONS.has(o.name.toLowerCase())) throw sqlError(`Unknown option ${o.name} for a column`, o.value.loc);
}

/** The types a clustering column may have (creating-clustered-tables: clustered column types). */
const CLUSTERABLE = new Set(['BIGNUMERIC', 'BOOL', 'DATE', 'DATETIME', 'GEOGRAPHY', 'INT64', 'NUMERIC', 'RANGE', 'STRING', 'TIMESTAMP']);
export const clusterable = (t: SqlType): boolean => CLUSTERABLE.has(t.kind);

/** A clustering column list holds at most four columns (CREATE TABLE and LOAD DATA alike). */
export function checkClusteringCount(exprs: readonly A.Expr[]): void {
  if (exprs.length > 4) throw sqlError(`Too many clustering columns: ${exprs.length}; at most 4 are allowed`, exprs[4]!.loc);
}

/**
 * CLUSTER BY's columns, each named by the table (ZetaSQL resolves them over its columns: `Unrecognized name`):
 * at most four, each of a type that clusters (not FLOAT64, BYTES, JSON, ARRAY, STRUCT, ...).
 */
export function clustering(exprs: readonly A.Expr[], columns: readonly Column[]): { fields: string[] } {
  checkClusteringCount(exprs);
  return {
    fields: exprs.map((e) => {
      // data-definition-language: clustering_column_list is a list of column names, never an expression.
      if (e.kind !== 'PathExpr') throw sqlError('Entries in the CLUSTER BY clause must be column names', e.loc);
      const name = e.parts.join('.');
      // Clustering columns are top-level columns, each named once (creating-clustered-tables).
      if (e.parts.length > 1) throw sqlError(`CLUSTER BY expression must be a top-level column name, not the field path ${name}`, e.loc);
      if (exprs.some((x, j) => j < exprs.indexOf(e) && x.kind === 'PathExpr' && x.parts.join('.').toLowerCase() === name.toLowerCase())) throw sqlError(`Duplicate clustering column ${name}`, e.loc);
      const c = columns.find((x) => x.name.toLowerCase() === e.parts[0]!.toLowerCase());
      if (!c) throw sqlError(`Unrecognized name: ${e.parts[0]}`, e.loc);
      if (e.parts.length === 1 && !clusterable(c.type)) throw sqlError(`Clustering is not supported on column ${c.name} of type ${typeToSql(c.type)}`, e.loc);
      // collation-concepts (Limitations): no non-empty collation on a clustering column, its own or the table's default.
      if (c.type.kind === 'STRING' && c.type.collation) throw sqlError(`CLUSTER BY STRING column ${c.name} with collation ${c.type.collation} isn't supported`, e.loc);
      return name;
    }),
  };
}

/** The options a table takes (data-definition-language: table_option_list); any other name is an error. */
export const TABLE_OPTIONS = new Set([
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

export function checkOptionNames(opts: readonly A.OptionEntry[] | undefined, allowed: ReadonlySet<string>, what: string): void {
  checkDistinctOptions(opts);
  for (const o of opts ?? []) if (!allowed.has(o.name.toLowerCase())) throw sqlError(`Unknown option ${o.name} for ${what}`, o.value.loc);
}

export function checkTableOptions(opts: readonly A.OptionEntry[] | undefined, what: string): void {
  checkOptionNames(opts, TABLE_OPTIONS, what);
}

/** The options of a view, materialized view or snapshot, by its kind. */
export function checkKindOptions(opts: readonly A.OptionEntry[] | undefined, kind: string, what: string): void {
  if (kind === 'VIEW') checkOptionNames(opts, VIEW_OPTIONS, what);
  else if (kind === 'MATERIALIZED_VIEW') checkOptionNames(opts, MATERIALIZED_VIEW_OPTIONS, what);
  else if (kind === 'SNAPSHOT') checkOptionNames(opts, SNAPSHOT_OPTIONS, what);
  else checkTableOptions(opts, what);
}

/** partition_expiration_days and require_partition_filter apply to partitioned tables only (data-definition-language: table_option_list). */
export function checkPartitionOptions(opts: readonly A.OptionEntry[] | undefined, resource: Record<string, unknown>): void {
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

export function checkSchemaOptions(opts: readonly A.OptionEntry[] | undefined, what: string): void {
  checkOptionNames(opts, SCHEMA_OPTIONS, what);
  // A dataset's location is set when it is made (datasets.patch cannot move it; ALTER SCHEMA has no location).
  if (what === 'ALTER SCHEMA') for (const o of opts ?? []) if (o.name.toLowerCase() === 'location') throw sqlError(`ALTER SCHEMA cannot change the location of a dataset; location is set by CREATE SCHEMA`, o.value.loc);
}

/** An MV's `materializedView` with the refresh OPTIONS (enable_refresh, refresh_interval_minutes) applied over `base`. */
export function mvRefreshSettings(resource: Record<string, unknown>, base: Record<string, unknown> | undefined): Record<string, unknown> {
  const o = (resource.options ?? {}) as Record<string, unknown>;
  const out = { ...base };
  if (o['enable_refresh'] !== undefined) out.enableRefresh = o['enable_refresh'] !== false;
  if (o['refresh_interval_minutes'] !== undefined && o['refresh_interval_minutes'] !== null) {
    out.refreshIntervalMs = String(Math.round(Number(o['refresh_interval_minutes']) * 60_000));
  }
  return out;
}

/** data-manipulation-language.md (Fine-grained DML, Limitations): it can't be enabled on a temporary table. */
export function checkFineGrainedTemp(resource: Record<string, unknown>, temp: boolean, loc: A.Loc): void {
  if (temp && (resource.options as Record<string, unknown> | undefined)?.['enable_fine_grained_mutations'] === true) {
    throw sqlError('enable_fine_grained_mutations cannot be set on a temporary table', loc);
  }
}

export async function ensureTempDataset(s: Session): Promise<{ projectId: string; datasetId: string }> {
  const ds = { projectId: s.ctx.projectId, datasetId: '_session' };
  if (!s.ctx.catalog.getDataset(ds.projectId, ds.datasetId)) await s.ctx.catalog.createDataset(ds.projectId, ds.datasetId, { location: 'US' }, true);
  return ds;
}

export function targetId(s: Session, path: A.Path, loc: A.Loc): TableId {
  return tableIdOf(s.analyzer(), path, loc);
}
