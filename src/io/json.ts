// Newline-delimited JSON: parsing into insertAll rows and writing rows.
import { ioInvalid, isObj, type Json } from './errors.js';
import { maybeGunzip, type SourceFile } from './objects.js';
import { inferFromRows, type Parsed, type RestField } from './schema.js';
import { jsonCellsAsText, jsonShapeOfFields } from './json-cells.js';
import { ndjsonLines } from './stream.js';

export function jsonRows(files: readonly SourceFile[], schema: RestField[] | undefined, autodetect: boolean): Parsed {
  const rows: Json[] = [];
  for (const file of files) ndjsonLines(maybeGunzip(file.data).toString('utf8'), 0, file.uri, rows);
  const fields = schema ?? (autodetect ? inferFromRows(rows) : undefined);
  if (!fields) throw ioInvalid('No schema specified on job or table.');
  const shape = jsonShapeOfFields(fields);
  if (shape) for (const r of rows) jsonCellsAsText(r, shape);
  return { fields, rows };
}

/**
 * Rows (already in export form) as newline-delimited JSON; NULL values are
 * left out, as the real service does. A JSON column's value is written as
 * the JSON value (its REST form is its text), so a load of the file reads it back.
 */
export function writeNdjson(fields: readonly RestField[], rows: readonly Json[]): string {
  const lines = rows.map((row) => recordText(fields, row));
  return lines.join('\n') + (lines.length ? '\n' : '');
}

function recordText(fields: readonly RestField[], row: Json): string {
  const parts: string[] = [];
  for (const f of fields) {
    const v = row[f.name];
    if (v !== null && v !== undefined) parts.push(JSON.stringify(f.name) + ':' + fieldText(f, v));
  }
  return '{' + parts.join(',') + '}';
}

function fieldText(f: RestField, v: unknown): string {
  if ((f.mode ?? '').toUpperCase() === 'REPEATED' && Array.isArray(v)) return '[' + v.map((x) => valueText(f, x)).join(',') + ']';
  return valueText(f, v);
}

function valueText(f: RestField, v: unknown): string {
  const t = f.type.toUpperCase();
  if (t === 'JSON' && typeof v === 'string') return v;
  if ((t === 'RECORD' || t === 'STRUCT') && isObj(v)) return recordText(f.fields ?? [], v);
  return JSON.stringify(v) ?? 'null';
}
