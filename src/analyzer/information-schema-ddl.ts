// The DDL text INFORMATION_SCHEMA shows: TABLES.ddl (a statement that recreates
// the table, in the layout of the TABLES page's example) and SCHEMATA.ddl.
import type { TableId, TableInfo } from '../storage/api.js';
import { restFieldToParamColumn, type RestField } from '../types/schema.js';
import { typeToSql, type SqlType } from '../types/types.js';

/**
 * The statement that recreates a table (INFORMATION_SCHEMA.TABLES ddl, in the layout of the TABLES page's example):
 * the columns with NOT NULL, DEFAULT and OPTIONS(description), the keys, DEFAULT COLLATE, PARTITION BY, CLUSTER BY
 * and the table's OPTIONS; a view's or materialized view's query; a snapshot's CLONE of its base.
 */
export function ddlOf(t: TableInfo): string {
  const r = t.resource;
  const name = `\`${t.id.projectId}.${t.id.datasetId}.${t.id.tableId}\``;
  const options = ddlOptions(r);
  if (t.kind === 'VIEW') return `CREATE VIEW ${name}${options}\nAS ${t.viewQuery ?? ''};`;
  const parts = [ddlPartitionBy(r), ddlClusterBy(r), options].join('');
  if (t.kind === 'MATERIALIZED_VIEW') return `CREATE MATERIALIZED VIEW ${name}${parts}\nAS ${t.viewQuery ?? ''};`;
  const snap = r.snapshotDefinition as { baseTableReference?: TableId & Record<string, string>; snapshotTime?: string } | undefined;
  if (r.type === 'SNAPSHOT' && snap?.baseTableReference) {
    const b = snap.baseTableReference;
    const at = snap.snapshotTime ? `\nFOR SYSTEM_TIME AS OF TIMESTAMP "${new Date(Date.parse(snap.snapshotTime)).toISOString()}"` : '';
    return `CREATE SNAPSHOT TABLE ${name}\nCLONE \`${b.projectId}.${b.datasetId}.${b.tableId}\`${at}${options};`;
  }
  // Parameterized types as the schema keeps them (STRING(10), STRUCT<a NUMERIC(5, 2)>), as data_type shows them.
  const tableCollation = typeof r.defaultCollation === 'string' && r.defaultCollation ? r.defaultCollation : undefined;
  const restFields = (r.schema as { fields?: RestField[] } | undefined)?.fields ?? [];
  const lines = t.columns.map((c) => {
    const f = restFields.find((x) => x.name.toLowerCase() === c.name.toLowerCase());
    const dflt = f?.defaultValueExpression ? ` DEFAULT ${f.defaultValueExpression}` : '';
    const desc = f?.description !== undefined ? ` OPTIONS(description=${JSON.stringify(f.description)})` : '';
    return `  ${c.name} ${ddlTypeText(paramType(restFields, c), tableCollation)}${c.required ? ' NOT NULL' : ''}${dflt}${desc}`;
  });
  const keys = r.tableConstraints as { primaryKey?: { columns: string[] }; foreignKeys?: { name?: string; referencedTable: TableId; columnReferences: { referencingColumn: string; referencedColumn: string }[] }[] } | undefined;
  if (keys?.primaryKey?.columns.length) lines.push(`  PRIMARY KEY (${keys.primaryKey.columns.join(', ')}) NOT ENFORCED`);
  for (const fk of keys?.foreignKeys ?? []) {
    const ref = fk.referencedTable;
    lines.push(
      `  ${fk.name ? `CONSTRAINT ${fk.name} ` : ''}FOREIGN KEY (${fk.columnReferences.map((x) => x.referencingColumn).join(', ')}) REFERENCES \`${ref.projectId}.${ref.datasetId}.${ref.tableId}\`(${fk.columnReferences.map((x) => x.referencedColumn).join(', ')}) NOT ENFORCED`,
    );
  }
  const collate = typeof r.defaultCollation === 'string' && r.defaultCollation ? `\nDEFAULT COLLATE '${r.defaultCollation}'` : '';
  return `CREATE ${t.kind === 'EXTERNAL' ? 'EXTERNAL ' : ''}TABLE ${name}\n(\n${lines.join(',\n')}\n)${collate}${parts};`;
}

/**
 * A column's type as the DDL writes it: COLLATE after each STRING with a collation of its own (CREATE TABLE's
 * column form, `s STRING COLLATE 'und:ci'`, nested fields too); one the table's DEFAULT COLLATE gives is left to that.
 */
function ddlTypeText(t: SqlType, tableCollation: string | undefined): string {
  if (t.kind === 'ARRAY') return `ARRAY<${ddlTypeText(t.element, tableCollation)}>`;
  if (t.kind === 'STRUCT') return `STRUCT<${t.fields.map((f) => `${f.name ? `${f.name} ` : ''}${ddlTypeText(f.type, tableCollation)}`).join(', ')}>`;
  if (t.kind === 'STRING' && t.collation && t.collation !== tableCollation) return `${typeToSql(t)} COLLATE '${t.collation}'`;
  return typeToSql(t);
}

/** A dataset's options as SCHEMATA_OPTIONS lists them (name, GoogleSQL type, value), in CREATE SCHEMA's option names. */
export function datasetOptions(r: Record<string, unknown>): { name: string; type: string; value: unknown }[] {
  const out: { name: string; type: string; value: unknown }[] = [];
  const opt = (name: string, type: string, v: unknown) => {
    if (v !== undefined && v !== null && v !== '') out.push({ name, type, value: v });
  };
  opt('description', 'STRING', r.description);
  opt('friendly_name', 'STRING', r.friendlyName);
  if (r.defaultTableExpirationMs) opt('default_table_expiration_days', 'FLOAT64', Number(r.defaultTableExpirationMs) / 86_400_000);
  if (r.defaultPartitionExpirationMs) opt('default_partition_expiration_days', 'FLOAT64', Number(r.defaultPartitionExpirationMs) / 86_400_000);
  if (r.labels && Object.keys(r.labels as object).length) opt('labels', 'ARRAY<STRUCT<STRING, STRING>>', r.labels);
  opt('default_collation_name', 'STRING', r.defaultCollation);
  opt('default_kms_key_name', 'STRING', (r.defaultEncryptionConfiguration as { kmsKeyName?: string } | undefined)?.kmsKeyName);
  if (r.maxTimeTravelHours) opt('max_time_travel_hours', 'INT64', Number(r.maxTimeTravelHours));
  if (r.isCaseInsensitive === true) opt('is_case_insensitive', 'BOOL', true);
  opt('storage_billing_model', 'STRING', r.storageBillingModel);
  opt('default_rounding_mode', 'STRING', r.defaultRoundingMode);
  return out;
}

/**
 * SCHEMATA.ddl: "the CREATE SCHEMA DDL statement that can be used to create the dataset", so with its DEFAULT COLLATE
 * and its options (in the layout of TABLES.ddl; labels as the DDL writes them, a list of tuples).
 */
export function schemaDdl(name: string, r: Record<string, unknown>): string {
  const collate = typeof r.defaultCollation === 'string' && r.defaultCollation ? `\nDEFAULT COLLATE '${r.defaultCollation}'` : '';
  const o = datasetOptions(r)
    .filter((x) => x.name !== 'default_collation_name')
    .map((x) => `${x.name}=${x.name === 'labels' ? `[${Object.entries(x.value as Record<string, string>).map(([k, v]) => `(${JSON.stringify(k)}, ${JSON.stringify(v)})`).join(', ')}]` : optionValueSql(x.value)}`);
  return `CREATE SCHEMA \`${name}\`${collate}${o.length ? `\nOPTIONS(\n  ${o.join(',\n  ')}\n)` : ''};`;
}

/** A table's PARTITION BY clause from its REST partitioning (empty when it has none). */
function ddlPartitionBy(r: Record<string, unknown>): string {
  const rp = r.rangePartitioning as { field: string; range: { start: string; end: string; interval: string } } | undefined;
  if (rp) return `\nPARTITION BY RANGE_BUCKET(${rp.field}, GENERATE_ARRAY(${rp.range.start}, ${rp.range.end}, ${rp.range.interval}))`;
  const tp = r.timePartitioning as { type?: string; field?: string } | undefined;
  if (!tp) return '';
  const unit = tp.type ?? 'DAY';
  if (!tp.field) return `\nPARTITION BY ${unit === 'DAY' ? '_PARTITIONDATE' : `TIMESTAMP_TRUNC(_PARTITIONTIME, ${unit})`}`;
  const fields = (r.schema as { fields?: RestField[] } | undefined)?.fields ?? [];
  const type = fields.find((x) => x.name.toLowerCase() === tp.field!.toLowerCase())?.type ?? 'DATE';
  if (type === 'DATE') return `\nPARTITION BY ${unit === 'DAY' ? tp.field : `DATE_TRUNC(${tp.field}, ${unit})`}`;
  const fn = type === 'DATETIME' ? 'DATETIME_TRUNC' : 'TIMESTAMP_TRUNC';
  return `\nPARTITION BY ${unit === 'DAY' ? `DATE(${tp.field})` : `${fn}(${tp.field}, ${unit})`}`;
}

function ddlClusterBy(r: Record<string, unknown>): string {
  const fields = (r.clustering as { fields?: string[] } | undefined)?.fields;
  return fields?.length ? `\nCLUSTER BY ${fields.join(', ')}` : '';
}

/** A table's OPTIONS clause, one `name=value` a line (empty when it sets none). */
/** An external table's source format and URIs (its REST externalDataConfiguration); none for other tables. */
/**
 * An external table's read options as TABLE_OPTIONS lists them, with their option_type (information-schema-table-options,
 * the external tables' options); CREATE EXTERNAL TABLE keeps those set in the resource's hidden `options`.
 */
export const EXTERNAL_READ_OPTIONS: Readonly<Record<string, string>> = {
  allow_jagged_rows: 'BOOL', allow_quoted_newlines: 'BOOL', column_name_character_map: 'STRING', compression: 'STRING',
  decimal_target_types: 'ARRAY<STRING>', enable_list_inference: 'BOOL', enable_logical_types: 'BOOL', encoding: 'STRING',
  field_delimiter: 'STRING', file_set_spec_type: 'STRING', hive_partition_uri_prefix: 'STRING', ignore_unknown_values: 'BOOL',
  json_extension: 'STRING', max_bad_records: 'INT64', metadata_cache_mode: 'STRING', null_marker: 'STRING', null_markers: 'ARRAY<STRING>', object_metadata: 'STRING',
  preserve_ascii_control_characters: 'BOOL', quote: 'STRING', reference_file_schema_uri: 'STRING', require_hive_partition_filter: 'BOOL',
  sheet_range: 'STRING', skip_leading_rows: 'INT64', time_zone: 'STRING', date_format: 'STRING', datetime_format: 'STRING',
  time_format: 'STRING', timestamp_format: 'STRING',
};

/** The read options an external table was made with, in EXTERNAL_READ_OPTIONS order: [name, option_type, option_value]. */
export function externalReadOptions(r: Record<string, unknown>): [string, string, string][] {
  const kept = (r.options ?? {}) as Record<string, unknown>;
  return Object.entries(EXTERNAL_READ_OPTIONS)
    .filter(([name]) => kept[name] !== undefined && kept[name] !== null)
    .map(([name, type]) => [name, type, optionValueSql(kept[name])]);
}

export function externalOptions(r: Record<string, unknown>): { format?: string; uris: readonly string[] } {
  const ext = r.externalDataConfiguration as { sourceFormat?: string; sourceUris?: string[] } | undefined;
  return { ...(ext?.sourceFormat ? { format: ext.sourceFormat } : {}), uris: ext?.sourceUris ?? [] };
}

function ddlOptions(r: Record<string, unknown>): string {
  const o: string[] = [];
  if (r.expirationTime) o.push(`expiration_timestamp=TIMESTAMP "${new Date(Number(r.expirationTime)).toISOString()}"`);
  const tp = r.timePartitioning as { expirationMs?: string } | undefined;
  if (tp?.expirationMs) o.push(`partition_expiration_days=${Number(tp.expirationMs) / 86_400_000}`);
  if (r.requirePartitionFilter === true) o.push('require_partition_filter=true');
  const kms = (r.encryptionConfiguration as { kmsKeyName?: string } | undefined)?.kmsKeyName;
  if (typeof kms === 'string') o.push(`kms_key_name=${JSON.stringify(kms)}`);
  if (typeof r.friendlyName === 'string') o.push(`friendly_name=${JSON.stringify(r.friendlyName)}`);
  if (typeof r.description === 'string') o.push(`description=${JSON.stringify(r.description)}`);
  const labels = Object.entries((r.labels as Record<string, string> | undefined) ?? {});
  if (labels.length) o.push(`labels=[${labels.map(([k, v]) => `(${JSON.stringify(k)}, ${JSON.stringify(v)})`).join(', ')}]`);
  if (typeof r.defaultRoundingMode === 'string') o.push(`default_rounding_mode=${JSON.stringify(r.defaultRoundingMode)}`);
  if (typeof r.maxStaleness === 'string') o.push(`max_staleness=INTERVAL "${r.maxStaleness}" YEAR TO SECOND`);
  const ext = externalOptions(r);
  if (ext.format) o.push(`format=${JSON.stringify(ext.format)}`);
  if (ext.uris.length) o.push(`uris=[${ext.uris.map((u) => JSON.stringify(u)).join(', ')}]`);
  for (const [name, , value] of externalReadOptions(r)) o.push(`${name}=${value}`);
  return o.length ? `\nOPTIONS(\n  ${o.join(',\n  ')}\n)` : '';
}


const fieldHasParams = (f: RestField): boolean => f.maxLength !== undefined || f.precision !== undefined || (f.fields ?? []).some(fieldHasParams);

/** A column's type with the parameters its schema field has at any depth (STRING(10), STRUCT<a NUMERIC(5, 2)>): INFORMATION_SCHEMA's data_type. */
export function paramType(fields: readonly RestField[], c: { name: string; type: SqlType }): SqlType {
  const f = fields.find((x) => x.name.toLowerCase() === c.name.toLowerCase());
  if (!f || !fieldHasParams(f)) return c.type;
  try {
    return restFieldToParamColumn(f).type;
  } catch {
    return c.type;
  }
}

/** A FLOAT64 option's value text: a whole number keeps its `.0` (the SCHEMATA_OPTIONS page shows 90.0 and 0.08333333333333333). */
export function float64Text(v: number): string {
  return Number.isInteger(v) ? `${v}.0` : String(v);
}

export function optionValueSql(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(optionValueSql).join(', ')}]`;
  if (v && typeof v === 'object') {
    return `[${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `STRUCT(${JSON.stringify(k)}, ${optionValueSql(x)})`)
      .join(', ')}]`;
  }
  return String(v);
}
