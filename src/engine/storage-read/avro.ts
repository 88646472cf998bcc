// Table rows as Avro, the way the Storage Read API sends them: the session
// carries the writer schema (JSON), each ReadRows response a run of rows in
// Avro binary encoding (no container framing). NULLABLE columns are unions
// ["null", T]; REPEATED ones arrays; logical types as the real service
// writes them (date, time-micros, timestamp-micros, datetime as a string,
// decimal bytes for NUMERIC(38, 9) and BIGNUMERIC(77, 38)). TIMESTAMP(12) as
// the session's picos_timestamp_precision asks: timestamp-micros (MICROS, the
// default), timestamp-nanos (NANOS) or an RFC 3339 string (PICOS).
import type { Column } from '../../types/schema.js';
import type { SqlType } from '../../types/types.js';
import type { Decimal, Geography, Interval, JsonValue, RangeValue, Value } from '../../types/values.js';
import { formatDatetime, formatInterval, jsonValueText } from '../../types/json-values.js';
import type { RowSource } from './arrow.js';
import { formatTimestampPicosRfc3339, picosToInt64Nanos, picosToMicros, type PicosPrecision } from '../../types/picos.js';

type AvroType = string | Record<string, unknown> | AvroType[];

function baseType(t: SqlType, name: string, picos: PicosPrecision): AvroType {
  switch (t.kind) {
    case 'INT64':
      return 'long';
    case 'FLOAT64':
      return 'double';
    case 'BOOL':
      return 'boolean';
    case 'STRING':
      return 'string';
    case 'BYTES':
      return 'bytes';
    case 'DATE':
      return { type: 'int', logicalType: 'date' };
    case 'TIME':
      return { type: 'long', logicalType: 'time-micros' };
    case 'TIMESTAMP':
      return { type: 'long', logicalType: 'timestamp-micros' };
    case 'TIMESTAMP_PICOS':
      return picos === 'PICOS' ? 'string' : { type: 'long', logicalType: picos === 'NANOS' ? 'timestamp-nanos' : 'timestamp-micros' };
    case 'DATETIME':
      return { type: 'string', logicalType: 'datetime' };
    case 'NUMERIC':
      return { type: 'bytes', logicalType: 'decimal', precision: 38, scale: 9 };
    case 'BIGNUMERIC':
      return { type: 'bytes', logicalType: 'decimal', precision: 77, scale: 38 };
    case 'GEOGRAPHY':
      return { type: 'string', sqlType: 'GEOGRAPHY' };
    case 'JSON':
      return { type: 'string', sqlType: 'JSON' };
    case 'INTERVAL':
      return { type: 'string', sqlType: 'INTERVAL' };
    case 'ARRAY':
      return { type: 'array', items: baseType(t.element, name, picos) };
    case 'STRUCT':
      return {
        type: 'record',
        name,
        fields: t.fields.map((f, i) => {
          const fname = f.name || `_field_${i + 1}`;
          return { name: fname, type: fieldType(f.type, false, `${name}__${fname}`, picos) };
        }),
      };
    case 'RANGE':
      return {
        type: 'record',
        name,
        fields: ['start', 'end'].map((side) => ({ name: side, type: ['null', baseType(t.element, `${name}__${side}`, picos)] })),
      };
  }
}

/** Arrays are never NULL (a NULL array reads as empty); other nullable columns are unions. */
function fieldType(t: SqlType, required: boolean, name: string, picos: PicosPrecision): AvroType {
  const b = baseType(t, name, picos);
  return required || t.kind === 'ARRAY' ? b : ['null', b];
}

export function avroSchema(columns: readonly Column[], picos: PicosPrecision): string {
  return JSON.stringify({
    type: 'record',
    name: '__root__',
    fields: columns.map((c) => ({ name: c.name, type: fieldType(c.type, c.required, `__root__${c.name}`, picos) })),
  });
}

class Writer {
  private buf = Buffer.allocUnsafe(1 << 16);
  private pos = 0;

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  long(v: bigint | number): void {
    // zig-zag, then base-128 varint
    let n = BigInt.asUintN(64, (BigInt(v) << 1n) ^ (BigInt(v) >> 63n));
    this.room(10);
    while (n >= 0x80n) {
      this.buf[this.pos++] = Number(n & 0x7fn) | 0x80;
      n >>= 7n;
    }
    this.buf[this.pos++] = Number(n);
  }

  double(v: number): void {
    this.room(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  byte(v: number): void {
    this.room(1);
    this.buf[this.pos++] = v;
  }

  bytes(b: Uint8Array): void {
    this.long(b.length);
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  string(s: string): void {
    this.bytes(Buffer.from(s, 'utf8'));
  }

  done(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/** Big-endian two's complement, minimal length, of the unscaled decimal. */
function decimalBytes(d: Decimal, scale: number): Uint8Array {
  let n = BigInt(d.toFixed(scale).replace('.', ''));
  const out: number[] = [];
  for (;;) {
    out.unshift(Number(n & 0xffn));
    const rest = n >> 8n;
    // stop once the remaining bits are pure sign extension of the byte written
    if ((rest === 0n && (out[0]! & 0x80) === 0) || (rest === -1n && (out[0]! & 0x80) !== 0)) break;
    n = rest;
  }
  return Uint8Array.from(out);
}

function writeValue(w: Writer, t: SqlType, v: Value, picos: PicosPrecision): void {
  switch (t.kind) {
    case 'INT64':
    case 'TIMESTAMP':
      return w.long(v as bigint);
    case 'TIMESTAMP_PICOS': {
      const p = v as bigint;
      return picos === 'PICOS' ? w.string(formatTimestampPicosRfc3339(p)) : w.long(picos === 'NANOS' ? picosToInt64Nanos(p) : picosToMicros(p));
    }
    case 'TIME':
    case 'DATE':
      return w.long(v as number);
    case 'FLOAT64':
      return w.double(v as number);
    case 'BOOL':
      return w.byte(v ? 1 : 0);
    case 'STRING':
      return w.string(v as string);
    case 'BYTES':
      return w.bytes(v as Uint8Array);
    case 'DATETIME':
      return w.string(formatDatetime(v as bigint));
    case 'NUMERIC':
      return w.bytes(decimalBytes(v as Decimal, 9));
    case 'BIGNUMERIC':
      return w.bytes(decimalBytes(v as Decimal, 38));
    case 'GEOGRAPHY':
      return w.string((v as Geography).wkt);
    case 'JSON':
      return w.string(jsonValueText(v as JsonValue));
    case 'INTERVAL':
      return w.string(formatInterval(v as Interval));
    case 'ARRAY': {
      const items = (v as Value[] | null) ?? [];
      if (items.length > 0) {
        w.long(items.length);
        for (const e of items) writeValue(w, t.element, e, picos);
      }
      return w.long(0);
    }
    case 'STRUCT':
      t.fields.forEach((f, i) => writeField(w, f.type, false, (v as Value[])[i]!, picos));
      return;
    case 'RANGE': {
      const r = v as RangeValue;
      writeField(w, t.element, false, r.start, picos);
      writeField(w, t.element, false, r.end, picos);
      return;
    }
  }
}

function writeField(w: Writer, t: SqlType, required: boolean, v: Value, picos: PicosPrecision): void {
  if (required || t.kind === 'ARRAY') return writeValue(w, t, v, picos);
  if (v === null) return w.long(0);
  w.long(1);
  writeValue(w, t, v, picos);
}

export function serializeAvroRows(columns: readonly Column[], rows: RowSource, start: number, end: number, picos: PicosPrecision): Buffer {
  const cols = columns.map((_, k) => rows.values(k, start, end));
  const w = new Writer();
  for (let i = 0; i < end - start; i++) {
    columns.forEach((c, k) => writeField(w, c.type, c.required, cols[k]![i]!, picos));
  }
  return w.done();
}
