// REST f/v rows back to JSON rows, and the value forms exports write.
import { isObj, type Json } from './errors.js';
import type { RestField } from './schema.js';

function decodeValue(f: RestField, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  const t = f.type.toUpperCase();
  if (t === 'RECORD' || t === 'STRUCT') {
    const cells = isObj(v) && Array.isArray(v['f']) ? (v['f'] as { v: unknown }[]) : [];
    const o: Json = {};
    (f.fields ?? []).forEach((sub, i) => {
      o[sub.name] = decodeCell(sub, cells[i]?.v);
    });
    return o;
  }
  return v;
}

function decodeCell(f: RestField, v: unknown): unknown {
  if ((f.mode ?? '').toUpperCase() === 'REPEATED') {
    return Array.isArray(v) ? v.map((c: { v: unknown }) => decodeValue(f, c?.v)) : [];
  }
  return decodeValue(f, v);
}

/** One REST `rows[]` item ({f: [{v}]}) as a JSON object keyed by field name. */
export function decodeRow(fields: readonly RestField[], row: { f: { v: unknown }[] }): Json {
  const o: Json = {};
  fields.forEach((f, i) => {
    o[f.name] = decodeCell(f, row.f[i]?.v);
  });
  return o;
}

/**
 * CSV/JSON export form: the real service writes TIMESTAMP as `2024-01-01 00:00:00 UTC`,
 * and INT64 as a JSON string (to keep 64-bit precision), which the REST form already is.
 */
export function exportValue(f: RestField, v: unknown): unknown {
  if (v === null || v === undefined) return v;
  const t = f.type.toUpperCase();
  if ((f.mode ?? '').toUpperCase() === 'REPEATED' && Array.isArray(v)) return v.map((x) => exportValue({ ...f, mode: 'NULLABLE' }, x));
  if (t === 'TIMESTAMP' && typeof v === 'string') return v.replace('T', ' ').replace(/Z$/, ' UTC');
  if ((t === 'RECORD' || t === 'STRUCT') && isObj(v)) {
    const o: Json = {};
    for (const sub of f.fields ?? []) o[sub.name] = exportValue(sub, v[sub.name]);
    return o;
  }
  return v;
}

export function exportRow(fields: readonly RestField[], row: Json): Json {
  const o: Json = {};
  for (const f of fields) o[f.name] = exportValue(f, row[f.name]);
  return o;
}
