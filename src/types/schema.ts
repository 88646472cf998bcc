// REST table schemas (TableFieldSchema JSON) <-> SqlType columns.
import { QueryError } from './errors.js';
import { T, arrayOf, rangeOf, scalar, structOf, type ScalarKind, type ScalarType, type SqlType } from './types.js';

/** The REST `TableFieldSchema` as clients send it and the service echoes it. */
export interface RestField {
  name: string;
  type: string;
  mode?: string;
  fields?: RestField[];
  description?: string;
  rangeElementType?: { type: string };
  maxLength?: string;
  precision?: string;
  scale?: string;
  /** TIMESTAMP only: '6' (microseconds, the default) or '12' (picoseconds, TIMESTAMP(12)). */
  timestampPrecision?: string;
  defaultValueExpression?: string;
  collation?: string;
  /** NUMERIC/BIGNUMERIC: how writes round to a parameterized scale (ROUND_HALF_AWAY_FROM_ZERO, the default, or ROUND_HALF_EVEN). */
  roundingMode?: string;
  policyTags?: unknown;
  [extra: string]: unknown;
}

export interface Column {
  readonly name: string;
  /** REPEATED fields are ARRAY<T> here. */
  readonly type: SqlType;
  readonly required: boolean;
}

/** REST type names (legacy and standard spellings) -> scalar kinds. */
const REST_TYPE: Record<string, ScalarKind | 'STRUCT' | 'RANGE'> = {
  INTEGER: 'INT64',
  INT64: 'INT64',
  FLOAT: 'FLOAT64',
  FLOAT64: 'FLOAT64',
  NUMERIC: 'NUMERIC',
  DECIMAL: 'NUMERIC',
  BIGNUMERIC: 'BIGNUMERIC',
  BIGDECIMAL: 'BIGNUMERIC',
  BOOLEAN: 'BOOL',
  BOOL: 'BOOL',
  STRING: 'STRING',
  BYTES: 'BYTES',
  DATE: 'DATE',
  TIME: 'TIME',
  DATETIME: 'DATETIME',
  TIMESTAMP: 'TIMESTAMP',
  INTERVAL: 'INTERVAL',
  JSON: 'JSON',
  GEOGRAPHY: 'GEOGRAPHY',
  RECORD: 'STRUCT',
  STRUCT: 'STRUCT',
  RANGE: 'RANGE',
};

/** RECORD fields nest this deep at most (top-level fields are level 1). */
export const MAX_SCHEMA_NESTING = 15;

/** The service's refusal of a RECORD at `path` whose fields would nest deeper. */
export const nestedTooDeeply = (path: readonly string[]): string =>
  `Schema nested too deeply for field ${path.join('.')}, maximum allowed depth is ${MAX_SCHEMA_NESTING}.`;

/**
 * The refusal of a `timestampPrecision` other than the service's two (6 and
 * 12), for the schemas requests bring (tables, load jobs, parameters); the
 * wording is the emulator's.
 */
export function timestampPrecisionError(f: { name?: unknown; timestampPrecision?: unknown }): string | undefined {
  const p = f.timestampPrecision;
  if (p === undefined || p === null || String(p) === '6' || String(p) === '12') return undefined;
  return `Invalid value for timestampPrecision of field ${String(f.name)}: ${String(p)}; it must be 6 (microseconds) or 12 (picoseconds)`;
}

export function isKnownRestType(type: string): boolean {
  return REST_TYPE[type.toUpperCase()] !== undefined;
}

/** Refuses an unknown type or a RANGE without its element type with the real service's wording (400 invalid). */
export function restFieldToColumn(f: RestField): Column {
  return fieldToColumn(f, false);
}

/**
 * restFieldToColumn with the schema's maxLength / precision / scale kept in the types at every depth
 * (STRING(10), STRUCT<a NUMERIC(10, 2)>), as INFORMATION_SCHEMA spells them; queries compute with the base types.
 */
export function restFieldToParamColumn(f: RestField): Column {
  return fieldToColumn(f, true);
}

function fieldToColumn(f: RestField, keepParams: boolean): Column {
  const kind = REST_TYPE[(f.type ?? '').toUpperCase()];
  if (!kind) throw new QueryError(`Invalid value for type: ${f.type} is not a valid value`, 'invalid');
  let t: SqlType;
  if (kind === 'STRUCT') {
    t = structOf((f.fields ?? []).map((sub) => {
      const c = fieldToColumn(sub, keepParams);
      return { name: c.name, type: c.type };
    }));
  } else if (kind === 'RANGE') {
    const el = REST_TYPE[(f.rangeElementType?.type ?? '').toUpperCase()];
    if (el !== 'DATE' && el !== 'DATETIME' && el !== 'TIMESTAMP') {
      throw new QueryError('Field ' + f.name + ' of type RANGE must have a range element type of DATE, DATETIME or TIMESTAMP', 'invalid');
    }
    t = rangeOf(scalar(el));
  } else if (kind === 'TIMESTAMP' && String(f.timestampPrecision) === '12') {
    // Other precisions are refused where schemas come in (timestampPrecisionError), not when stored ones are read.
    t = T.TIMESTAMP_PICOS;
  } else if (kind === 'STRING' && typeof f.collation === 'string' && f.collation !== '') {
    t = { kind, collation: f.collation };
  } else {
    t = scalar(kind);
  }
  if (keepParams && t.kind !== 'STRUCT' && t.kind !== 'RANGE') {
    const p = f.maxLength ?? f.precision;
    if (p !== undefined) t = { ...t, params: f.scale !== undefined && f.maxLength === undefined ? [Number(p), Number(f.scale)] : [Number(p)] } as SqlType;
  }
  const mode = (f.mode ?? 'NULLABLE').toUpperCase();
  if (mode === 'REPEATED') t = arrayOf(t);
  return { name: f.name, type: t, required: mode === 'REQUIRED' };
}

/** REST type name a query result or schema reports for a type (legacy names, as the service does). */
export function restTypeName(t: SqlType): string {
  switch (t.kind) {
    case 'INT64':
      return 'INTEGER';
    case 'FLOAT64':
      return 'FLOAT';
    case 'BOOL':
      return 'BOOLEAN';
    case 'STRUCT':
      return 'RECORD';
    case 'ARRAY':
      return restTypeName(t.element);
    case 'TIMESTAMP_PICOS':
      return 'TIMESTAMP';
    default:
      return t.kind;
  }
}

/** The REST field a result column reports: ARRAY<T> becomes mode REPEATED of T. */
export function columnToRestField(name: string, t: SqlType, required = false): RestField {
  const repeated = t.kind === 'ARRAY';
  const inner = t.kind === 'ARRAY' ? t.element : t;
  const out: RestField = { name, type: restTypeName(inner), mode: repeated ? 'REPEATED' : required ? 'REQUIRED' : 'NULLABLE' };
  // An anonymous struct field is named by its position in schemas, as the service names it.
  if (inner.kind === 'STRUCT') out.fields = inner.fields.map((f, i) => columnToRestField(f.name || `_field_${i + 1}`, f.type));
  if (inner.kind === 'RANGE') out.rangeElementType = { type: (inner.element as ScalarType).kind };
  if (inner.kind === 'STRING' && inner.collation) out.collation = inner.collation;
  if (inner.kind === 'TIMESTAMP_PICOS') out.timestampPrecision = '12';
  return out;
}

/**
 * The REST attributes of a parameterized type (STRING(10): maxLength; NUMERIC(10, 2): precision and scale)
 * a table's schema keeps; empty for other types. The engine computes with the base type.
 */
export function restTypeParams(t: SqlType): Pick<RestField, 'maxLength' | 'precision' | 'scale'> {
  if (t.kind === 'ARRAY' || t.kind === 'STRUCT' || t.kind === 'RANGE' || !t.params?.length) return {};
  if (t.kind === 'STRING' || t.kind === 'BYTES') return { maxLength: String(t.params[0]) };
  if (t.kind === 'NUMERIC' || t.kind === 'BIGNUMERIC') return { precision: String(t.params[0]), ...(t.params.length > 1 ? { scale: String(t.params[1]) } : {}) };
  return {};
}

/** A table's REST field for a column whose type may carry parameters at any depth (STRUCT<a STRING(5)>): columnToRestField with them. */
export function tableRestField(name: string, t: SqlType, required = false): RestField {
  const out: RestField = { ...columnToRestField(name, t, required), ...restTypeParams(t.kind === 'ARRAY' ? t.element : t) };
  const inner = t.kind === 'ARRAY' ? t.element : t;
  if (inner.kind === 'STRUCT') out.fields = inner.fields.map((f, i) => tableRestField(f.name || `_field_${i + 1}`, f.type));
  return out;
}

/** Whether a type carries parameters at any depth. */
export function hasTypeParams(t: SqlType): boolean {
  if (t.kind === 'ARRAY') return hasTypeParams(t.element);
  if (t.kind === 'STRUCT') return t.fields.some((f) => hasTypeParams(f.type));
  if (t.kind === 'RANGE') return false;
  return !!t.params?.length;
}

/** The parameters of a REST field as type text: `(10)`, `(10, 2)`, or '' (INFORMATION_SCHEMA data_type). */
export function restParamsText(f: Pick<RestField, 'maxLength' | 'precision' | 'scale'> | undefined): string {
  if (!f) return '';
  if (f.maxLength !== undefined) return `(${f.maxLength})`;
  if (f.precision !== undefined) return f.scale !== undefined ? `(${f.precision}, ${f.scale})` : `(${f.precision})`;
  return '';
}
