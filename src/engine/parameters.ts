// REST `queryParameters` -> QueryParameters of the SQL pipeline. Values come as
// strings (bq CLI) or JSON numbers/booleans (Node client); types by REST name.
import type { QueryParameters, TypedValue } from '../planner/api.js';
import { invalid } from '../storage/errors.js';
import { convertJsonValue, ValueConversionError } from '../types/json-values.js';
import { restFieldToColumn, timestampPrecisionError } from '../types/schema.js';
import { arrayOf, rangeOf, structOf, T, type ScalarType, type SqlType } from '../types/types.js';
import { RangeValue, type Value } from '../types/values.js';
import { parseTimestampString } from '../functions/civil.js';

interface RestParamType {
  type?: string;
  arrayType?: RestParamType;
  structTypes?: { name?: string; type?: RestParamType }[];
  rangeElementType?: RestParamType;
  /** '12' for a TIMESTAMP(12) parameter (the Node client's `TIMESTAMP(12)` type). */
  timestampPrecision?: string | number;
}

interface RestParamValue {
  value?: unknown;
  arrayValues?: RestParamValue[] | null;
  structValues?: Record<string, RestParamValue> | null;
  rangeValue?: { start?: RestParamValue | null; end?: RestParamValue | null } | null;
}

interface RestParam {
  name?: string;
  parameterType?: RestParamType;
  parameterValue?: RestParamValue | null;
}

/** Parameter types nest this deep at most (the deepest a schema may nest is 15). */
const MAX_TYPE_DEPTH = 32;

const isObject = (x: unknown): boolean => typeof x === 'object' && x !== null && !Array.isArray(x);

export function paramType(t: RestParamType | undefined, where: string, depth = 0): SqlType {
  // Any JSON may arrive here (the gateway reads numbers as text, and gRPC callers send what they like).
  if (t !== undefined && t !== null && !isObject(t)) throw invalid(`Invalid query parameter type for ${where}: ${JSON.stringify(t)}`);
  if (depth > MAX_TYPE_DEPTH) throw invalid(`Invalid query parameter type for ${where}: nested more than ${MAX_TYPE_DEPTH} levels`);
  const raw = t?.type ?? '';
  const name = (typeof raw === 'string' || typeof raw === 'number' ? String(raw) : '\u0000').toUpperCase();
  if (name === '') return T.STRING;
  if (name === 'ARRAY') return arrayOf(paramType(t!.arrayType, where, depth + 1));
  if (name === 'STRUCT' || name === 'RECORD') {
    const fields = t!.structTypes ?? [];
    if (!Array.isArray(fields)) throw invalid(`Invalid query parameter type for ${where}: structTypes must be a list`);
    return structOf(fields.map((f) => {
      if (!isObject(f)) throw invalid(`Invalid query parameter type for ${where}: ${JSON.stringify(f)}`);
      return { name: typeof f.name === 'string' ? f.name : '', type: paramType(f.type, where, depth + 1) };
    }));
  }
  if (name === 'RANGE') return rangeOf(paramType(t!.rangeElementType, where, depth + 1) as ScalarType);
  const badPrecision = t ? timestampPrecisionError({ name: where, timestampPrecision: t.timestampPrecision }) : undefined;
  if (badPrecision) throw invalid(badPrecision);
  try {
    return restFieldToColumn({ name: 'p', type: name, timestampPrecision: t?.timestampPrecision === undefined ? undefined : String(t.timestampPrecision) }).type;
  } catch {
    throw invalid(`Invalid query parameter type ${String(raw)} for ${where}`);
  }
}

function paramValue(type: SqlType, v: RestParamValue | null | undefined, where: string): Value {
  if (v === null || v === undefined) return null;
  if (!isObject(v)) throw invalid(`Invalid value for query parameter ${where}: ${JSON.stringify(v)}`);
  try {
    switch (type.kind) {
      case 'ARRAY':
        // No arrayValues is a NULL array (the service's reading); `arrayValues: []` an empty one.
        if (!Array.isArray(v.arrayValues)) return null;
        return v.arrayValues.map((x) => paramValue(type.element, x, where));
      case 'STRUCT': {
        const sv = v.structValues;
        if (!sv) return null;
        if (!isObject(sv)) throw invalid(`Invalid value for query parameter ${where}: ${JSON.stringify(sv)}`);
        return type.fields.map((f, i) => paramValue(f.type, sv[f.name] ?? sv[String(i)], where));
      }
      case 'RANGE': {
        if (v.rangeValue) {
          if (!isObject(v.rangeValue)) throw invalid(`Invalid value for query parameter ${where}: ${JSON.stringify(v.rangeValue)}`);
          const el = type.element;
          return new RangeValue(paramValue(el, v.rangeValue.start, where), paramValue(el, v.rangeValue.end, where));
        }
        return convertJsonValue(type, v.value);
      }
      case 'TIMESTAMP':
        return timestampParam(type, v.value);
      default:
        return convertJsonValue(type, v.value);
    }
  } catch (e) {
    if (e instanceof ValueConversionError) throw invalid(`Invalid value for query parameter ${where}: ${e.message}`);
    throw e;
  }
}

/**
 * A TIMESTAMP parameter is written `YYYY-MM-DD HH:MM:SS.DDDDDD time_zone`
 * (parameterized-queries.md, "Use timestamps in parameterized queries"), the
 * zone possibly a name (America/New_York) as in a timestamp literal, which
 * the JSON row reading (offsets only) does not take.
 */
function timestampParam(type: SqlType, value: unknown): Value {
  try {
    return convertJsonValue(type, value);
  } catch (e) {
    const micros = e instanceof ValueConversionError && typeof value === 'string' ? parseTimestampString(value.trim(), 'UTC') : undefined;
    if (micros === undefined) throw e;
    return micros;
  }
}

export function decodeParameters(json: string | undefined, mode: string | undefined): QueryParameters {
  const named = new Map<string, TypedValue>();
  const positional: TypedValue[] = [];
  if (!json) return { named, positional };
  let list: unknown;
  try {
    list = JSON.parse(json);
  } catch {
    throw invalid('Invalid JSON in queryParameters');
  }
  const m = (mode ?? '').toUpperCase();
  if (!Array.isArray(list)) return { named, positional };
  const byName = m === 'NAMED' || (m !== 'POSITIONAL' && list.some((p: RestParam) => isObject(p) && typeof p.name === 'string' && p.name !== ''));
  list.forEach((p: RestParam, i: number) => {
    if (!isObject(p)) throw invalid(`Invalid query parameter at position ${i + 1}: ${JSON.stringify(p)}`);
    if (p.name !== undefined && p.name !== null && typeof p.name !== 'string') throw invalid(`Invalid query parameter name at position ${i + 1}: ${JSON.stringify(p.name)}`);
    const where = p.name ? `@${p.name}` : `at position ${i + 1}`;
    const type = paramType(p.parameterType, where);
    const tv: TypedValue = { type, value: paramValue(type, p.parameterValue, where) };
    if (byName) {
      if (!p.name) throw invalid('Positional parameters are not allowed in a query with named parameters');
      named.set(p.name.toLowerCase(), tv);
    } else positional.push(tv);
  });
  const given = m === 'NAMED' || m === 'POSITIONAL' ? m : undefined;
  if (list.length === 0 && !given) return { named, positional };
  return { named, positional, mode: byName ? 'NAMED' : 'POSITIONAL' };
}
