// Query parameters: built from YAML case data, or from a REST result cell
// (the .test files give parameters as SQL expressions; the harness evaluates
// them with `SELECT <expr>` on the emulator and sends the typed result).

import type { QueryParameter, QueryParameterType, QueryParameterValue } from './client.js';
import { decodeTimestamp, type RestField } from './wire.js';
import { formatTimestampMicros } from './value.js';
import { normalizeRestType } from './sqltype.js';

/** REST schema type → standard SQL parameter type name. */
export function paramTypeName(restType: string): string {
  switch (normalizeRestType(restType)) {
    case 'INTEGER': return 'INT64';
    case 'FLOAT': return 'FLOAT64';
    case 'BOOLEAN': return 'BOOL';
    case 'RECORD': return 'STRUCT';
    default: return restType.toUpperCase();
  }
}

export function paramTypeOfField(f: RestField, ignoreMode = false): QueryParameterType {
  if (!ignoreMode && (f.mode ?? '').toUpperCase() === 'REPEATED') {
    return { type: 'ARRAY', arrayType: paramTypeOfField(f, true) };
  }
  const type = paramTypeName(f.type);
  if (type === 'STRUCT') {
    return { type, structTypes: (f.fields ?? []).map((sf) => ({ name: sf.name, type: paramTypeOfField(sf) })) };
  }
  if (type === 'RANGE') return { type, rangeElementType: { type: paramTypeName(f.rangeElementType?.type ?? 'DATE') } };
  return { type };
}

function timestampParamText(micros: bigint): string {
  return formatTimestampMicros(micros).replace(/\+00$/, '+00:00');
}

/** REST cell value (from a `SELECT expr` answer) → parameter value. */
export function paramValueOfCell(f: RestField, v: unknown, ignoreMode = false): QueryParameterValue {
  if (v === null || v === undefined) return {};
  if (!ignoreMode && (f.mode ?? '').toUpperCase() === 'REPEATED') {
    const list = Array.isArray(v) ? v : [];
    const inner = (c: unknown) => (c !== null && typeof c === 'object' && 'v' in (c as object) ? (c as { v: unknown }).v : c);
    return { arrayValues: list.map((c) => paramValueOfCell(f, inner(c), true)) };
  }
  const type = paramTypeName(f.type);
  if (type === 'STRUCT') {
    const cells = (v as { f?: Array<{ v?: unknown }> }).f ?? [];
    const structValues: Record<string, QueryParameterValue> = {};
    (f.fields ?? []).forEach((sf, i) => {
      structValues[sf.name] = paramValueOfCell(sf, cells[i]?.v);
    });
    return { structValues };
  }
  if (type === 'TIMESTAMP') {
    const micros = decodeTimestamp(String(v));
    return { value: micros === null ? String(v) : timestampParamText(micros) };
  }
  if (type === 'RANGE') {
    const m = /^\[\s*([^,]*?)\s*,\s*([^,]*?)\s*\)$/.exec(String(v));
    if (!m) return { value: String(v) };
    const el = { name: 'e', type: f.rangeElementType?.type ?? 'DATE' };
    const side = (s: string): QueryParameterValue => (/^(UNBOUNDED|NULL)$/i.test(s) ? {} : paramValueOfCell(el, s));
    return { rangeValue: { start: side(m[1]!), end: side(m[2]!) } };
  }
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return { value: 'NaN' };
    if (!Number.isFinite(v)) return { value: v > 0 ? 'Infinity' : '-Infinity' };
  }
  return { value: String(v) };
}

/** Case-file parameter shape (fixtures, recorded corpus, project cases). */
export interface YamlParam {
  name?: string;
  type: string;
  value?: unknown;
  array_element_type?: string;
  array_values?: unknown[];
  struct_fields?: Array<{ name: string; type: string }>;
  struct_values?: Record<string, unknown>;
}

function scalarText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}

export function yamlParamToRest(p: YamlParam): QueryParameter {
  const type = p.type.toUpperCase();
  const out: QueryParameter = { parameterType: { type }, parameterValue: {} };
  if (p.name) out.name = p.name;
  if (type === 'ARRAY') {
    const et = (p.array_element_type ?? 'STRING').toUpperCase();
    out.parameterType = { type, arrayType: { type: et } };
    out.parameterValue = p.array_values == null ? {} : { arrayValues: p.array_values.map((v) => ({ value: scalarText(v) })) };
    return out;
  }
  if (type === 'STRUCT') {
    const fields = p.struct_fields ?? [];
    out.parameterType = { type, structTypes: fields.map((f) => ({ name: f.name, type: { type: f.type.toUpperCase() } })) };
    const sv: Record<string, QueryParameterValue> = {};
    for (const f of fields) sv[f.name] = { value: scalarText(p.struct_values?.[f.name]) };
    out.parameterValue = p.struct_values == null ? {} : { structValues: sv };
    return out;
  }
  out.parameterValue = { value: scalarText(p.value) };
  return out;
}
