// SQL values <-> values of a UDF's language. JavaScript follows the real
// service's "SQL type encodings in JavaScript": FLOAT64 and INT64 as Number,
// NUMERIC/BIGNUMERIC as a Number when integral within ±2^53 (else a String),
// BYTES as base64, DATE/DATETIME/TIMESTAMP as Date (TIMESTAMP with a
// `microsecond` field: the fraction of the second in µs), ARRAY as Array,
// STRUCT as an object, JSON as plain JS values. Python values cross the pipe
// in the REST wire forms (INT64 as a decimal string, ...), see python.ts.
import { Decimal } from 'decimal.js';
import { convertJsonValue, formatDate, formatDatetime, formatTime, formatTimestampRfc3339, ValueConversionError } from '../types/json-values.js';
import { typeToSql, type SqlType } from '../types/types.js';
import { JsonValue, type JsonNode, type Value } from '../types/values.js';

/** Types a JavaScript UDF may not take or return (the real service rejects them at CREATE). */
export function jsUnsupportedType(t: SqlType): string | undefined {
  switch (t.kind) {
    case 'TIME':
    case 'INTERVAL':
    case 'GEOGRAPHY':
    case 'RANGE':
      return typeToSql(t);
    case 'ARRAY':
      return jsUnsupportedType(t.element);
    case 'STRUCT':
      for (const f of t.fields) {
        const u = jsUnsupportedType(f.type);
        if (u) return u;
      }
      return undefined;
    default:
      return undefined;
  }
}

const TWO53 = 2 ** 53;

function base64(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
}

function jsonToJs(n: JsonNode): unknown {
  if (n === null || typeof n !== 'object') return typeof n === 'bigint' ? Number(n) : n;
  if (Array.isArray(n)) return n.map(jsonToJs);
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(n)) o[k] = jsonToJs(v);
  return o;
}

/**
 * A SQL value as it is copied into the UDF's isolate (structured clone): as
 * the body sees it, except TIMESTAMP, which crosses as BigInt microseconds and
 * becomes a Date with a `microsecond` field there (isolate-runtime.ts).
 */
export function toJs(t: SqlType, v: Value, bigInts = false): unknown {
  if (v === null) return null;
  switch (t.kind) {
    case 'INT64':
      // A JavaScript UDAF takes INT64 as a BigInt (user-defined-aggregates.md, Permitted SQL type encodings).
      return bigInts ? v : Number(v as bigint);
    case 'FLOAT64':
    case 'BOOL':
    case 'STRING':
      return v;
    case 'NUMERIC':
    case 'BIGNUMERIC': {
      const d = v as Decimal;
      return d.isInteger() && d.abs().lte(TWO53) ? d.toNumber() : d.toFixed();
    }
    case 'BYTES':
      return base64(v as Uint8Array);
    case 'DATE':
      return new Date((v as number) * 86_400_000);
    case 'DATETIME': {
      const us = v as bigint;
      return new Date(Number(us >= 0n ? us / 1000n : -((-us + 999n) / 1000n)));
    }
    case 'TIMESTAMP':
      return v;
    case 'JSON':
      return jsonToJs((v as JsonValue).node);
    case 'ARRAY':
      return (v as Value[]).map((x) => toJs(t.element, x, bigInts));
    case 'STRUCT': {
      const o: Record<string, unknown> = {};
      const vals = v as Value[];
      t.fields.forEach((f, i) => (o[f.name] = toJs(f.type, vals[i]!, bigInts)));
      return o;
    }
    default:
      throw new ValueConversionError(`Type ${typeToSql(t)} is not supported in JavaScript UDFs`);
  }
}

function isDate(x: unknown): x is Date {
  return Object.prototype.toString.call(x) === '[object Date]';
}

function jsToJson(x: unknown): JsonNode {
  if (x === null || x === undefined) return null;
  if (typeof x === 'number' || typeof x === 'string' || typeof x === 'boolean') return x;
  if (typeof x === 'bigint') return x;
  if (isDate(x)) return x.toISOString();
  if (Array.isArray(x)) return x.map(jsToJson);
  if (typeof x === 'object') {
    const o: { [k: string]: JsonNode } = {};
    for (const [k, v] of Object.entries(x as object)) if (v !== undefined) o[k] = jsToJson(v);
    return o;
  }
  return null;
}

function timeOf(x: Date): bigint {
  const ms = x.getTime();
  if (Number.isNaN(ms)) throw new ValueConversionError('Invalid Date');
  return BigInt(ms) * 1000n;
}

/** A JavaScript result as a value of the declared return type. */
export function fromJs(t: SqlType, x: unknown): Value {
  if (x === null || x === undefined) return null;
  switch (t.kind) {
    case 'FLOAT64':
      if (typeof x === 'number') return x;
      if (typeof x === 'boolean') return x ? 1 : 0;
      return Number(x);
    case 'INT64': {
      if (typeof x === 'bigint') return x;
      const n = typeof x === 'number' ? x : typeof x === 'boolean' ? (x ? 1 : 0) : Number(String(x).trim());
      if (typeof x === 'string' && /^\s*[-+]?\d+\s*$/.test(x)) return BigInt(x.trim());
      if (!Number.isFinite(n) || !Number.isInteger(n)) throw new ValueConversionError(`Cannot coerce ${String(x)} to INT64`);
      return BigInt(n);
    }
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return convertJsonValue(t, typeof x === 'number' ? x : String(x));
    case 'BOOL':
      return typeof x === 'boolean' ? x : Boolean(x);
    case 'STRING':
      if (typeof x === 'string') return x;
      if (isDate(x)) return x.toString();
      return typeof x === 'object' ? JSON.stringify(x) : String(x);
    case 'BYTES':
      return convertJsonValue(t, String(x));
    case 'DATE':
      if (isDate(x)) return Math.floor(x.getTime() / 86_400_000);
      return convertJsonValue(t, String(x));
    case 'DATETIME':
      if (isDate(x)) return timeOf(x);
      return convertJsonValue(t, String(x));
    case 'TIMESTAMP': {
      if (typeof x === 'bigint') return x; // epoch microseconds: a Date with its microsecond field (isolate-runtime.ts)
      if (isDate(x)) {
        // A `microsecond` field refines the Date's milliseconds (as on input).
        const us = (x as Date & { microsecond?: unknown }).microsecond;
        const base = timeOf(x);
        if (typeof us === 'number' && Number.isInteger(us) && us >= 0 && us < 1_000_000) {
          const sec = base >= 0n ? base / 1_000_000n : -((-base + 999_999n) / 1_000_000n);
          return sec * 1_000_000n + BigInt(us);
        }
        return base;
      }
      if (typeof x === 'number') return BigInt(Math.round(x)) * 1000n; // epoch milliseconds, as new Date(n)
      return convertJsonValue(t, String(x));
    }
    case 'JSON':
      return new JsonValue(jsToJson(x));
    case 'ARRAY': {
      if (!Array.isArray(x)) throw new ValueConversionError(`Cannot coerce ${typeof x} to ${typeToSql(t)}`);
      return x.map((e) => {
        const v = fromJs(t.element, e);
        if (v === null) throw new ValueConversionError('Array cannot have a null element');
        return v;
      });
    }
    case 'STRUCT': {
      if (typeof x !== 'object' || Array.isArray(x)) throw new ValueConversionError(`Cannot coerce ${typeof x} to ${typeToSql(t)}`);
      const o = x as Record<string, unknown>;
      return t.fields.map((f) => fromJs(f.type, o[f.name]));
    }
    default:
      throw new ValueConversionError(`Type ${typeToSql(t)} is not supported in JavaScript UDFs`);
  }
}

// ---------------------------------------------------------------- REST wire forms (Python)

/** A SQL value in the REST `rows` form (INT64 as a decimal string, TIMESTAMP as RFC 3339, STRUCT as an object by name). */
export function toWire(t: SqlType, v: Value): unknown {
  if (v === null) return null;
  switch (t.kind) {
    case 'INT64':
      return String(v);
    case 'FLOAT64':
      return Number.isFinite(v as number) ? v : String(v);
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return (v as Decimal).toFixed();
    case 'BOOL':
    case 'STRING':
      return v;
    case 'BYTES':
      return base64(v as Uint8Array);
    case 'DATE':
      return formatDate(v as number);
    case 'TIME':
      return formatTime(v as number);
    case 'DATETIME':
      return formatDatetime(v as bigint);
    case 'TIMESTAMP':
      return formatTimestampRfc3339(v as bigint);
    case 'JSON':
      return jsToJson((v as JsonValue).node);
    case 'ARRAY':
      return (v as Value[]).map((x) => toWire(t.element, x));
    case 'STRUCT': {
      const o: Record<string, unknown> = {};
      t.fields.forEach((f, i) => (o[f.name] = toWire(f.type, (v as Value[])[i]!)));
      return o;
    }
    default:
      throw new ValueConversionError(`Type ${typeToSql(t)} is not supported in Python UDFs`);
  }
}

export function fromWire(t: SqlType, x: unknown): Value {
  if (t.kind === 'JSON') return x === null || x === undefined ? null : new JsonValue(jsToJson(x));
  return convertJsonValue(t, x);
}
