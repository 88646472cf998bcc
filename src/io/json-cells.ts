// JSON columns' cells of newline-delimited JSON rows.
import type { SqlType } from '../types/types.js';
import { CSV_BOOL } from './csv.js';
import { isObj, type Json } from './errors.js';
import type { RestField } from './schema.js';

/**
 * Where a schema holds JSON columns: by lower-case field name, a JSON field or
 * a RECORD's fields that hold some. A JSON column's cell in a newline-delimited
 * file is the JSON value itself (json-data.md, Load from newline delimited JSON
 * files: "This is a string" loads as a JSON string), where an insertAll cell
 * is JSON text; jsonCellsAsText makes the first the second, so one conversion
 * (storage/json-rows.ts) serves both. A BOOL cell may be a string in any of
 * the spellings a CSV file's is (loading-data-cloud-storage-json.md, Details,
 * Boolean); jsonCellsAsText makes it true or false.
 */
export type JsonShape = Map<string, { repeated: boolean; bool?: true; fields?: JsonShape }>;

export function jsonShapeOfFields(fields: readonly RestField[]): JsonShape | null {
  let shape: JsonShape | null = null;
  for (const f of fields) {
    const t = f.type.toUpperCase();
    const sub = t === 'RECORD' || t === 'STRUCT' ? jsonShapeOfFields(f.fields ?? []) : null;
    const bool = t === 'BOOL' || t === 'BOOLEAN';
    if (t !== 'JSON' && !bool && !sub) continue;
    (shape ??= new Map()).set(f.name.toLowerCase(), { repeated: (f.mode ?? '').toUpperCase() === 'REPEATED', ...(bool ? { bool } : {}), ...(sub ? { fields: sub } : {}) });
  }
  return shape;
}

export function jsonShapeOfColumns(columns: readonly { name: string; type: SqlType }[]): JsonShape | null {
  let shape: JsonShape | null = null;
  for (const c of columns) {
    const repeated = c.type.kind === 'ARRAY';
    const t = c.type.kind === 'ARRAY' ? c.type.element : c.type;
    const sub = t.kind === 'STRUCT' ? jsonShapeOfColumns(t.fields) : null;
    const bool = t.kind === 'BOOL';
    if (t.kind !== 'JSON' && !bool && !sub) continue;
    (shape ??= new Map()).set(c.name.toLowerCase(), { repeated, ...(bool ? { bool } : {}), ...(sub ? { fields: sub } : {}) });
  }
  return shape;
}

/** Rewrites `row`'s JSON cells (per `shape`) as their JSON text and its BOOL spellings as true or false, in place. */
export function jsonCellsAsText(row: Json, shape: JsonShape): Json {
  for (const k of Object.keys(row)) {
    const node = shape.get(k.toLowerCase());
    if (!node) continue;
    const one = (v: unknown): unknown => {
      if (v === null || v === undefined) return v;
      if (node.fields) return isObj(v) ? jsonCellsAsText(v, node.fields) : v;
      if (node.bool) return typeof v === 'string' ? (CSV_BOOL.get(v.toLowerCase()) ?? v) : v;
      return JSON.stringify(v);
    };
    const v = row[k];
    row[k] = node.repeated ? (Array.isArray(v) ? v.map(one) : v) : one(v);
  }
  return row;
}
