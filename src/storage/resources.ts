// REST resource stamping shared by the gRPC handlers and the SQL catalog:
// ids, timestamps, etags, schema echo.
import { randomBytes } from 'node:crypto';
import { MAX_SCHEMA_NESTING, nestedTooDeeply, restFieldToColumn, type Column, type RestField } from '../types/schema.js';
import { invalid } from './errors.js';

export type Resource = Record<string, unknown>;

export const nowMsString = (): string => String(Date.now());
export const newEtag = (): string => randomBytes(12).toString('base64');

/** The real service echoes legacy type names and fills mode NULLABLE. */
const ECHO_TYPE: Record<string, string> = {
  INT64: 'INTEGER',
  INTEGER: 'INTEGER',
  FLOAT64: 'FLOAT',
  FLOAT: 'FLOAT',
  BOOL: 'BOOLEAN',
  BOOLEAN: 'BOOLEAN',
  STRUCT: 'RECORD',
  RECORD: 'RECORD',
  DECIMAL: 'NUMERIC',
  BIGDECIMAL: 'BIGNUMERIC',
};

/** Prefixes of the service's pseudo-columns and system columns, which no column of a table may take (checked case-insensitively; schemas.md, Column names). */
const RESERVED_PREFIXES = /^(_PARTITION|_TABLE_|_FILE_|_ROW_TIMESTAMP|__ROOT__|_COLIDENTIFIER)/i;
/** The change-history columns' prefixes (APPENDS / CHANGES), reserved as well. */
const CHANGE_PREFIXES = /^(_CHANGE_SEQUENCE_NUMBER|_CHANGE_TYPE|_CHANGE_TIMESTAMP)/i;

/**
 * The characters a (flexible) column name may hold: letters, numbers, connector punctuation, dashes and marks of any
 * script, whitespace and & % = + : ' < > # | (schemas.md, Flexible column names); `$ . , ( ) * / ; ? @ [ \ ] ^ ` { } ~ ! "`
 * and anything else are refused.
 */
const FLEXIBLE_NAME = /^[\p{L}\p{N}\p{Pc}\p{Pd}\p{M}\s&%=+:'<>#|]*$/u;

/** Why a field name at any level is refused: a character flexible column names do not take, or over 300 characters (schemas.md: Column names). */
export function fieldNameError(name: string): string | undefined {
  return !FLEXIBLE_NAME.test(name) || [...name].length > 300
    ? `Invalid field name "${name}". Fields must contain the allowed characters, and be at most 300 characters long. For allowed characters, please refer to https://cloud.google.com/bigquery/docs/schemas#column_names`
    : undefined;
}

/** Why a column's description is refused: over 1,024 characters (schemas.md, Column descriptions). */
export function descriptionError(field: string, description: string): string | undefined {
  const n = [...description].length;
  return n > 1024 ? `The description of field ${field} is too long: ${n} characters; at most 1024 are allowed` : undefined;
}

/** Why a top-level column name is refused (a reserved prefix), else undefined. */
export function reservedColumnName(name: string): string | undefined {
  if (RESERVED_PREFIXES.test(name)) {
    return `Invalid field name "${name}". Field names are not allowed to start with the (case-insensitive) prefixes _PARTITION, _TABLE_, _FILE_, _ROW_TIMESTAMP, __ROOT__ and _COLIDENTIFIER`;
  }
  return CHANGE_PREFIXES.test(name)
    ? `Invalid field name "${name}". Field names are not allowed to start with the (case-insensitive) prefixes _CHANGE_SEQUENCE_NUMBER, _CHANGE_TYPE and _CHANGE_TIMESTAMP`
    : undefined;
}

export function normalizeFields(fields: readonly RestField[], where = '', parents: readonly string[] = []): RestField[] {
  const seen = new Set<string>();
  return fields.map((f) => {
    if (typeof f?.name !== 'string' || f.name === '') throw invalid(`Empty field name${where ? ' in ' + where : ''}`);
    const reserved = parents.length === 0 ? reservedColumnName(f.name) : undefined;
    if (reserved) throw invalid(reserved);
    // (an ingestion-time partitioned table's hidden column has a `$`: storage/ingestion.ts)
    const bad = fieldNameError(f.name) ?? (typeof f.description === 'string' ? descriptionError(f.name, f.description) : undefined);
    if (bad) throw invalid(bad);
    const key = f.name.toLowerCase();
    if (seen.has(key)) throw invalid(`Field ${f.name} already exists in schema`);
    seen.add(key);
    if (typeof f.type !== 'string') throw invalid(`Field ${f.name}: type is required`);
    const up = f.type.toUpperCase();
    const type = ECHO_TYPE[up] ?? up;
    const given = typeof f.mode === 'string' && f.mode !== '';
    const mode = (given ? f.mode! : 'NULLABLE').toUpperCase();
    if (mode !== 'NULLABLE' && mode !== 'REQUIRED' && mode !== 'REPEATED') throw invalid(`Invalid value for mode: ${f.mode} is not a valid value`);
    // A field sent without a mode is echoed without one, as the service does (NULLABLE is its meaning).
    const out: RestField = { ...f, name: f.name, type, ...(given ? { mode } : {}) };
    if (!given) delete out.mode;
    for (const k of Object.keys(out)) if (out[k] === null) delete out[k];
    if (type === 'RECORD') {
      if (!Array.isArray(f.fields) || f.fields.length === 0) throw invalid(`Field ${f.name} is type RECORD but has no schema`);
      const path = [...parents, f.name];
      if (path.length >= MAX_SCHEMA_NESTING) throw invalid(nestedTooDeeply(path));
      out.fields = normalizeFields(f.fields, f.name, path);
    } else delete out.fields;
    if (type === 'RANGE' && f.rangeElementType) out.rangeElementType = { type: String(f.rangeElementType.type).toUpperCase() };
    try {
      restFieldToColumn(out);
    } catch (e) {
      throw invalid((e as Error).message);
    }
    return out;
  });
}

export function columnsOf(fields: readonly RestField[] | undefined): Column[] {
  return (fields ?? []).map((f) => restFieldToColumn(f));
}

export function schemaFieldsOf(resource: Resource): RestField[] {
  const s = resource.schema as { fields?: RestField[] } | undefined;
  return Array.isArray(s?.fields) ? s!.fields : [];
}

/** Byte counters the spec fixes at the string zero. */
export const ZERO_BYTE_FIELDS = [
  'numBytes',
  'numLongTermBytes',
  'numActiveLogicalBytes',
  'numLongTermLogicalBytes',
  'numTotalLogicalBytes',
  'numActivePhysicalBytes',
  'numLongTermPhysicalBytes',
  'numPhysicalBytes',
  'numTotalPhysicalBytes',
  'numTimeTravelPhysicalBytes',
] as const;

const precisionOf = (f: RestField): string => String(f.timestampPrecision ?? '6');
const typeText = (f: RestField): string => (precisionOf(f) === '12' ? `${f.type}(12)` : f.type);

/**
 * The schema a tables.update/patch leaves (managing-table-schemas.md: new
 * columns and nested fields are always added at the end of the table or
 * field; a new order of existing columns has no effect): the existing fields
 * in their order, each with its new definition, then the added ones as given.
 * Call after checkSchemaEvolution (every old field is in the new schema).
 */
export function evolvedFieldOrder(oldFields: readonly RestField[], newFields: readonly RestField[]): RestField[] {
  const byName = new Map(newFields.map((f) => [f.name.toLowerCase(), f]));
  const kept = oldFields.map((o) => {
    const n = byName.get(o.name.toLowerCase())!;
    return o.type === 'RECORD' && n.fields ? { ...n, fields: evolvedFieldOrder(o.fields ?? [], n.fields) } : n;
  });
  const oldNames = new Set(oldFields.map((f) => f.name.toLowerCase()));
  return [...kept, ...newFields.filter((n) => !oldNames.has(n.name.toLowerCase()))];
}

/**
 * Schema evolution rules of tables.update/patch: columns may be added
 * (NULLABLE or REPEATED) and modes relaxed (REQUIRED -> NULLABLE); nothing
 * may be dropped, retyped or tightened.
 */
export function checkSchemaEvolution(tableName: string, oldFields: readonly RestField[], newFields: readonly RestField[], path = ''): void {
  const byName = new Map(newFields.map((f) => [f.name.toLowerCase(), f]));
  const prefix = `Provided Schema does not match Table ${tableName}.`;
  for (const o of oldFields) {
    const n = byName.get(o.name.toLowerCase());
    const full = path + o.name;
    if (!n) throw invalid(`${prefix} Field ${full} is missing in new schema`);
    // TIMESTAMP and TIMESTAMP(12) share the REST type; the precision is part of the type.
    if (n.type !== o.type || precisionOf(n) !== precisionOf(o)) throw invalid(`${prefix} Field ${full} has changed type from ${typeText(o)} to ${typeText(n)}`);
    const om = o.mode ?? 'NULLABLE';
    const nm = n.mode ?? 'NULLABLE';
    if (nm !== om && !(om === 'REQUIRED' && nm === 'NULLABLE')) {
      throw invalid(`${prefix} Field ${full} has changed mode from ${om} to ${nm}`);
    }
    if (o.type === 'RECORD') checkSchemaEvolution(tableName, o.fields ?? [], n.fields ?? [], full + '.');
  }
  const oldNames = new Set(oldFields.map((f) => f.name.toLowerCase()));
  for (const n of newFields) {
    if (!oldNames.has(n.name.toLowerCase()) && n.mode === 'REQUIRED') {
      throw invalid(`${prefix} Cannot add required fields to an existing schema. (field: ${path}${n.name})`);
    }
    // default-values.md, Limitations: no new column with a default value (add it, then set the default).
    if (!oldNames.has(n.name.toLowerCase()) && n.defaultValueExpression !== undefined) {
      throw invalid(`${prefix} Cannot add a field with a default value to an existing schema. (field: ${path}${n.name})`);
    }
  }
}
