// What the codecs share: parse options, the parsed result, schema inference.
import { isKnownRestType, MAX_SCHEMA_NESTING, nestedTooDeeply, type RestField } from '../types/schema.js';
import { ioInvalid, isObj, type Json } from './errors.js';

export type { RestField };

/** Reader options in the REST load configuration's names (LOAD DATA maps its snake_case options to these). */
export interface ReadOptions {
  /** Already decoded (`\t` for tab); default ','. */
  fieldDelimiter?: string;
  /** Default '"'; '' disables quoting. */
  quote?: string;
  skipLeadingRows?: number;
  nullMarkers?: readonly string[];
  /** AVRO: logical types become DATE/TIME/TIMESTAMP/DATETIME instead of their raw INTEGER. */
  useAvroLogicalTypes?: boolean;
  /** PARQUET (parquetOptions.enableListInference): LIST groups load as REPEATED fields of their element. */
  parquetListInference?: boolean;
  /** CSV: the files' character set (the load job's encoding); default UTF-8. */
  encoding?: string;
  /** CSV: false refuses a record short of the schema's columns (allow_jagged_rows); left unset, short records read NULLs. */
  allowJaggedRows?: boolean;
  /** CSV: ignoreUnknownValues (ignore_unknown_values); false makes a record with extra trailing fields a bad one; unset ignores them. */
  ignoreUnknownValues?: boolean;
  /** CSV: preserveAsciiControlCharacters; without it an ASCII 0 in a field fails the load. */
  preserveAsciiControlCharacters?: boolean;
  /** DATASTORE_BACKUP (projectionFields): only these top-level properties. */
  projectionFields?: readonly string[];
}

/** Rows as insertAll JSON objects (values in REST JSON form) and the schema they follow. */
export interface Parsed {
  fields: RestField[];
  rows: Json[];
}

/** `\t` / `tab` spelled out in a configuration -> the delimiter character. */
export function delimiterOf(v: unknown): string {
  const d = typeof v === 'string' ? v : undefined;
  if (!d) return ',';
  if (d === '\\t' || d.toLowerCase() === 'tab') return '\t';
  return d;
}

const DATETIME_TEXT = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;
/**
 * A date (dashes, or slashes: schema-detect.md, Date and time values, YYYY/MM/DD HH:MM) and time of day with an
 * optional zone: `Z`, `UTC`, `+hh`, `+hh:mm`, `+hhmm`, a space before it or not.
 */
const TIMESTAMP_TEXT = /^\d{4}([-/])\d{1,2}\1\d{1,2}[T ]\d{1,2}:\d{2}(:\d{2}(\.\d{1,9})?)?(\s*(Z|UTC|[+-]\d{1,2}(:?\d{2})?))?$/i;

/** The type autodetect gives a column of CSV strings (and of JSON strings). */
export function inferScalar(values: readonly string[]): string {
  const vals = values.filter((v) => v !== '');
  if (!vals.length) return 'STRING';
  if (vals.every((v) => /^[+-]?\d{1,18}$/.test(v))) return 'INTEGER';
  if (vals.every((v) => /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v))) return 'FLOAT';
  // Every BOOL spelling a load reads but 0 and 1 (loading-data-cloud-storage-csv.md, Data types, Boolean).
  if (vals.every((v) => /^(true|false|t|f|yes|no|y|n)$/i.test(v))) return 'BOOLEAN';
  if (vals.every((v) => /^\d{4}-\d{2}-\d{2}$/.test(v))) return 'DATE';
  if (vals.every((v) => DATETIME_TEXT.test(v))) return 'DATETIME';
  // Any mix of spellings with and without a zone is a TIMESTAMP column (zone-less values are UTC), as the service detects it.
  if (vals.every((v) => TIMESTAMP_TEXT.test(v))) return 'TIMESTAMP';
  if (vals.every((v) => /^\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(v))) return 'TIME';
  return 'STRING';
}

/** The field autodetect gives a JSON key from its sample values. */
export function inferJsonField(name: string, values: readonly unknown[]): RestField {
  const vals = values.filter((v) => v !== null && v !== undefined);
  const repeated = vals.length > 0 && vals.every(Array.isArray);
  const flat = repeated ? vals.flatMap((v) => v as unknown[]) : vals;
  let f: RestField;
  if (flat.length && flat.every(isObj)) {
    const keys = [...new Set(flat.flatMap((o) => Object.keys(o as Json)))];
    f = { name, type: 'RECORD', fields: keys.map((k) => inferJsonField(k, flat.map((o) => (o as Json)[k]))) };
  } else if (flat.length && flat.every((v) => typeof v === 'boolean')) f = { name, type: 'BOOLEAN' };
  else if (flat.length && flat.every((v) => typeof v === 'number' && Number.isInteger(v))) f = { name, type: 'INTEGER' };
  else if (flat.length && flat.every((v) => typeof v === 'number')) f = { name, type: 'FLOAT' };
  else f = { name, type: flat.length && flat.every((v) => typeof v === 'string') ? inferScalar(flat as string[]) : 'STRING' };
  f.mode = repeated ? 'REPEATED' : 'NULLABLE';
  return f;
}

/** Schema of self-describing rows (Parquet) from the first rows' keys and values. */
export function inferFromRows(rows: readonly Json[]): RestField[] {
  const sample = rows.slice(0, 1000);
  const keys = [...new Set(sample.flatMap((r) => Object.keys(r)))];
  return keys.map((k) => inferJsonField(k, sample.map((r) => r[k])));
}

/**
 * A schema a reader is told to use (a load job's, an external table's), as
 * the service checks it: named fields, known types and modes, RECORDs with
 * fields, at most 15 levels. Any JSON may arrive here from a request.
 */
export function checkSchema(fields: unknown, parents: readonly string[] = []): void {
  if (!Array.isArray(fields)) throw ioInvalid('Invalid value for schema.fields: expected a list of fields');
  const seen = new Set<string>();
  for (const f of fields as unknown[]) {
    if (!isObj(f) || typeof f['name'] !== 'string' || f['name'] === '') throw ioInvalid(`Empty field name${parents.length ? ' in ' + parents.join('.') : ''}`);
    const name = f['name'];
    if (seen.has(name.toLowerCase())) throw ioInvalid(`Field ${name} already exists in schema`);
    seen.add(name.toLowerCase());
    const type = f['type'];
    if (typeof type !== 'string' || !isKnownRestType(type)) throw ioInvalid(`Invalid value for type: ${String(type)} is not a valid value`);
    const mode = f['mode'];
    if (mode !== undefined && mode !== null && mode !== '' && !['NULLABLE', 'REQUIRED', 'REPEATED'].includes(String(mode).toUpperCase())) {
      throw ioInvalid(`Invalid value for mode: ${String(mode)} is not a valid value`);
    }
    if (['RECORD', 'STRUCT'].includes(type.toUpperCase())) {
      if (!Array.isArray(f['fields']) || f['fields'].length === 0) throw ioInvalid(`Field ${name} is type RECORD but has no schema`);
      const path = [...parents, name];
      if (path.length >= MAX_SCHEMA_NESTING) throw ioInvalid(nestedTooDeeply(path));
      checkSchema(f['fields'], path);
    }
  }
}
