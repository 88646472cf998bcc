// The storage form of values that have no native parquet column type, and of
// every value inside a WAL record: a JSON-compatible tree that round-trips the
// value forms of values.ts exactly (bigints and decimals as strings, bytes as
// base64, non-finite floats as strings).
import type { SqlType } from '../types/types.js';
import { Decimal, Geography, Interval, JsonValue, RangeValue, type Value } from '../types/values.js';
import { jsonValueText } from '../types/json-values.js';
import { JsonText } from '../functions/json-core.js';

export type Stored = null | boolean | number | string | Stored[];

export function toStored(type: SqlType, v: Value): Stored {
  if (v === null) return null;
  switch (type.kind) {
    case 'INT64':
    case 'DATETIME':
    case 'TIMESTAMP':
      // Numbers stay numbers while exact (cheaper to write and parse).
      return typeof v === 'bigint' ? (v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v.toString()) : (v as number);
    case 'TIMESTAMP_PICOS':
      return (v as bigint).toString();
    case 'FLOAT64': {
      const x = v as number;
      return Number.isFinite(x) ? (Object.is(x, -0) ? '-0' : x) : String(x);
    }
    case 'DATE':
    case 'TIME':
      return v as number;
    case 'BOOL':
      return v as boolean;
    case 'STRING':
      return v as string;
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return (v as Decimal).toFixed();
    case 'BYTES': {
      const b = v as Uint8Array;
      return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
    }
    case 'INTERVAL': {
      const iv = v as Interval;
      return [iv.months, iv.days, iv.micros.toString()];
    }
    case 'JSON':
      return jsonValueText(v as JsonValue);
    case 'GEOGRAPHY':
      return (v as Geography).wkt;
    case 'RANGE': {
      const r = v as RangeValue;
      return [toStored(type.element, r.start), toStored(type.element, r.end)];
    }
    case 'ARRAY': {
      const a = v as Value[];
      const out = new Array<Stored>(a.length);
      for (let i = 0; i < a.length; i++) out[i] = toStored(type.element, a[i]!);
      return out;
    }
    case 'STRUCT': {
      const a = v as Value[];
      return type.fields.map((f, i) => toStored(f.type, a[i] ?? null));
    }
  }
}

export function fromStored(type: SqlType, s: Stored | undefined): Value {
  if (s === null || s === undefined) return type.kind === 'ARRAY' ? [] : null;
  switch (type.kind) {
    case 'INT64':
    case 'DATETIME':
    case 'TIMESTAMP':
    case 'TIMESTAMP_PICOS':
      return BigInt(s as number | string);
    case 'FLOAT64':
      return typeof s === 'number' ? s : Number(s);
    case 'DATE':
    case 'TIME':
      return s as number;
    case 'BOOL':
      return s as boolean;
    case 'STRING':
      return s as string;
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return new Decimal(s as string);
    case 'BYTES': {
      const b = Buffer.from(s as string, 'base64');
      return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    }
    case 'INTERVAL': {
      const a = s as [number, number, string];
      return new Interval(a[0], a[1], BigInt(a[2]));
    }
    case 'JSON':
      // The text toStored wrote (canonical): read lazily, parsed only where a kernel reads the value.
      return new JsonText(s as string, 0, (s as string).length, 'stored');
    case 'GEOGRAPHY':
      return new Geography(null, s as string);
    case 'RANGE': {
      const a = s as Stored[];
      return new RangeValue(fromStored(type.element, a[0]), fromStored(type.element, a[1]));
    }
    case 'ARRAY': {
      const a = s as Stored[];
      const out = new Array<Value>(a.length);
      for (let i = 0; i < a.length; i++) out[i] = fromStored(type.element, a[i]);
      return out;
    }
    case 'STRUCT': {
      const a = s as Stored[];
      return type.fields.map((f, i) => fromStored(f.type, a[i]));
    }
  }
}
