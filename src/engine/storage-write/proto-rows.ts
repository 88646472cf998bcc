// Rows of the Storage Write API arrive as protobuf messages described by a
// DescriptorProto the client sends with its first request. This module
// decodes them with that descriptor (the protobuf wire format: varints,
// fixed 32/64-bit, length-delimited, packed repeated scalars) and turns each
// message into a JSON row in the form tabledata.insertAll accepts, mapping
// field values to the table's columns by name the way the real service does:
// TIMESTAMP int64 epoch microseconds, DATE int32 epoch days, NUMERIC and
// BIGNUMERIC as strings or little-endian scaled bytes, STRUCT and RANGE as
// nested messages, ARRAY as repeated fields, the rest as their natural type
// or a string.
import type { Column } from '../../types/schema.js';
import { typeToSql, type SqlType } from '../../types/types.js';
import { formatDate, formatTimestampRfc3339 } from '../../types/json-values.js';
import { formatTimestampPicosRfc3339, microsToPicos } from '../../types/picos.js';

/** DescriptorProto as proto-loader decodes it (camelCase, enums as names). */
export interface MessageDescriptor {
  name: string;
  field: FieldDescriptor[];
  nestedType: MessageDescriptor[];
}

export interface FieldDescriptor {
  name: string;
  number: number;
  label: string;
  type: string;
  typeName: string;
}

export class RowDecodeError extends Error {}

type Raw = bigint | number | Uint8Array;

class Reader {
  pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  get done(): boolean {
    return this.pos >= this.buf.length;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new RowDecodeError('truncated varint');
      const b = this.buf[this.pos++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 70n) throw new RowDecodeError('varint too long');
    }
  }

  fixed(n: 4 | 8): Uint8Array {
    if (this.pos + n > this.buf.length) throw new RowDecodeError('truncated fixed-width field');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  bytes(): Uint8Array {
    const len = Number(this.varint());
    if (this.pos + len > this.buf.length) throw new RowDecodeError('truncated length-delimited field');
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }
}

const VARINT_TYPES = new Set(['TYPE_INT64', 'TYPE_UINT64', 'TYPE_INT32', 'TYPE_UINT32', 'TYPE_SINT32', 'TYPE_SINT64', 'TYPE_BOOL', 'TYPE_ENUM']);
const FIXED64_TYPES = new Set(['TYPE_DOUBLE', 'TYPE_FIXED64', 'TYPE_SFIXED64']);
const FIXED32_TYPES = new Set(['TYPE_FLOAT', 'TYPE_FIXED32', 'TYPE_SFIXED32']);

/** A scalar's value from its wire form, by declared field type. */
function scalarOf(type: string, raw: Raw): bigint | number | boolean | Uint8Array {
  if (raw instanceof Uint8Array && (FIXED64_TYPES.has(type) || FIXED32_TYPES.has(type))) {
    const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    switch (type) {
      case 'TYPE_DOUBLE':
        return dv.getFloat64(0, true);
      case 'TYPE_FLOAT':
        return dv.getFloat32(0, true);
      case 'TYPE_FIXED64':
        return dv.getBigUint64(0, true);
      case 'TYPE_SFIXED64':
        return dv.getBigInt64(0, true);
      case 'TYPE_FIXED32':
        return BigInt(dv.getUint32(0, true));
      default:
        return BigInt(dv.getInt32(0, true));
    }
  }
  if (typeof raw === 'bigint') {
    switch (type) {
      case 'TYPE_BOOL':
        return raw !== 0n;
      case 'TYPE_SINT32':
      case 'TYPE_SINT64':
        return (raw >> 1n) ^ -(raw & 1n);
      case 'TYPE_UINT64':
      case 'TYPE_UINT32':
        return raw;
      case 'TYPE_INT32':
      case 'TYPE_ENUM':
        return BigInt.asIntN(32, raw);
      default:
        return BigInt.asIntN(64, raw);
    }
  }
  return raw;
}

export function wireTypeOf(type: string): number {
  if (VARINT_TYPES.has(type)) return 0;
  if (FIXED64_TYPES.has(type)) return 1;
  if (FIXED32_TYPES.has(type)) return 5;
  return 2;
}

// ignoreBOM: a leading U+FEFF is the value's first character, not a byte-order mark to drop.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A string field's text; bytes that are not UTF-8 are the row's error (the service never stores them). */
function utf8Text(b: Uint8Array, field: string): string {
  try {
    return utf8.decode(b);
  } catch {
    throw new RowDecodeError(`Field ${field}: String field contains invalid UTF-8`);
  }
}

const checked = new WeakSet<MessageDescriptor>();

/**
 * The writer schema must be a valid message descriptor (as protobuf's
 * descriptor builder checks it): field numbers and names unique within a
 * message, numbers positive. Checked once per descriptor.
 */
function checkDescriptor(desc: MessageDescriptor): void {
  if (checked.has(desc)) return;
  const visit = (m: MessageDescriptor, depth: number): void => {
    if (depth > MAX_DEPTH) throw new RowDecodeError(`Invalid proto schema: message types nested more than ${MAX_DEPTH} levels deep`);
    const numbers = new Map<number, string>();
    const names = new Set<string>();
    for (const f of m.field) {
      if (names.has(f.name)) throw new RowDecodeError(`Invalid proto schema: "${m.name}.${f.name}" is already defined.`);
      names.add(f.name);
      if (!(f.number > 0)) throw new RowDecodeError(`Invalid proto schema: Field numbers must be positive integers (field "${f.name}" in "${m.name}").`);
      const prev = numbers.get(f.number);
      if (prev !== undefined) throw new RowDecodeError(`Invalid proto schema: Field number ${f.number} has already been used in "${m.name}" by field "${prev}".`);
      numbers.set(f.number, f.name);
    }
    for (const n of m.nestedType) visit(n, depth + 1);
  };
  visit(desc, 0);
  checked.add(desc);
}

/** Field values by field name; repeated fields as arrays. */
export type Decoded = Map<string, unknown>;

export function findNested(root: MessageDescriptor, typeName: string): MessageDescriptor {
  const last = typeName.split('.').pop()!;
  const stack = [root];
  while (stack.length) {
    const m = stack.pop()!;
    if (m.name === last && m !== root) return m;
    stack.push(...m.nestedType);
  }
  if (root.name === last) return root;
  throw new RowDecodeError(`message type ${typeName} is not in the writer schema`);
}

/** Message nesting a row may have: protobuf parsers' own default limit (a table nests at most 15 levels). */
export const MAX_DEPTH = 100;

function decodeMessage(bytes: Uint8Array, desc: MessageDescriptor, root: MessageDescriptor, depth = 0): Decoded {
  if (depth > MAX_DEPTH) throw new RowDecodeError(`message nested more than ${MAX_DEPTH} levels deep`);
  const byNumber = new Map(desc.field.map((f) => [f.number, f]));
  const out: Decoded = new Map();
  const r = new Reader(bytes);
  while (!r.done) {
    const key = Number(r.varint());
    const num = key >>> 3;
    const wt = key & 7;
    const raw: Raw = wt === 0 ? r.varint() : wt === 1 ? r.fixed(8) : wt === 5 ? r.fixed(4) : wt === 2 ? r.bytes() : (() => {
      throw new RowDecodeError(`unsupported wire type ${wt}`);
    })();
    const f = byNumber.get(num);
    if (!f) continue; // unknown field numbers are skipped, as protobuf parsers do
    // A value of another wire type is none of this field's (a varint where a message goes read as one looped forever);
    // scalars may also come packed, one length-delimited run.
    const want = wireTypeOf(f.type);
    if (wt !== want && !(wt === 2 && want !== 2)) throw new RowDecodeError(`Field ${f.name}: wire type ${wt} does not fit its type ${f.type}`);
    const repeated = f.label === 'LABEL_REPEATED';
    let values: unknown[];
    if (f.type === 'TYPE_MESSAGE') {
      values = [decodeMessage(raw as Uint8Array, findNested(root, f.typeName), root, depth + 1)];
    } else if (f.type === 'TYPE_STRING') {
      values = [utf8Text(raw as Uint8Array, f.name)];
    } else if (f.type === 'TYPE_BYTES') {
      values = [raw];
    } else if (wt === 2 && wireTypeOf(f.type) !== 2) {
      // packed repeated scalars
      const inner = new Reader(raw as Uint8Array);
      values = [];
      const w = wireTypeOf(f.type);
      while (!inner.done) values.push(scalarOf(f.type, w === 0 ? inner.varint() : inner.fixed(w === 1 ? 8 : 4)));
    } else {
      values = [scalarOf(f.type, raw)];
    }
    if (repeated) {
      const prev = (out.get(f.name) as unknown[] | undefined) ?? [];
      out.set(f.name, prev.concat(values));
    } else {
      out.set(f.name, values[values.length - 1]);
    }
  }
  return out;
}

/** Little-endian two's complement unscaled bytes -> decimal text. */
function decimalFromBytes(b: Uint8Array, scale: number): string {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  if (b.length > 0 && (b[b.length - 1]! & 0x80) !== 0) n -= 1n << BigInt(8 * b.length);
  const neg = n < 0n;
  const digits = (neg ? -n : n).toString().padStart(scale + 1, '0');
  const text = scale > 0 ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return (neg ? '-' : '') + text;
}

function mismatch(col: string, t: SqlType, v: unknown): RowDecodeError {
  return new RowDecodeError(`Field ${col}: a ${typeof v === 'object' ? 'message' : typeof v} value cannot be written to a column of type ${typeToSql(t)}`);
}

/** One field value as insertAll JSON for a column of type t. */
function jsonValue(col: string, t: SqlType, v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (t.kind === 'ARRAY') {
    if (!Array.isArray(v)) throw mismatch(col, t, v);
    return v.map((e) => jsonValue(col, t.element, e));
  }
  if (Array.isArray(v)) throw new RowDecodeError(`Field ${col}: a repeated field cannot be written to a column of type ${typeToSql(t)}`);
  if (v instanceof Map) {
    if (t.kind === 'STRUCT') return structJson(t.fields.map((f) => ({ name: f.name, type: f.type })), v, `${col}.`);
    if (t.kind === 'RANGE') {
      const side = (s: string) => (v.get(s) === undefined ? 'UNBOUNDED' : String(jsonValue(`${col}.${s}`, t.element, v.get(s))));
      return `[${side('start')}, ${side('end')})`;
    }
    throw mismatch(col, t, v);
  }
  switch (t.kind) {
    case 'INT64':
      if (typeof v === 'bigint' || typeof v === 'string') return String(v);
      break;
    case 'FLOAT64':
      if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
      if (typeof v === 'bigint') return Number(v);
      if (typeof v === 'string') return v;
      break;
    case 'BOOL':
      if (typeof v === 'boolean') return v;
      if (typeof v === 'string') return v;
      break;
    case 'BYTES':
      if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
      break;
    case 'TIMESTAMP':
      if (typeof v === 'bigint') return formatTimestampRfc3339(v);
      if (typeof v === 'string') return v;
      break;
    case 'TIMESTAMP_PICOS':
      // int64: microseconds, as for TIMESTAMP; string: the text, every digit kept.
      if (typeof v === 'bigint') return formatTimestampPicosRfc3339(microsToPicos(v));
      if (typeof v === 'string') return v;
      break;
    case 'DATE':
      if (typeof v === 'bigint') return formatDate(Number(v));
      if (typeof v === 'string') return v;
      break;
    case 'NUMERIC':
    case 'BIGNUMERIC':
      if (v instanceof Uint8Array) return decimalFromBytes(v, t.kind === 'NUMERIC' ? 9 : 38);
      if (typeof v === 'string' || typeof v === 'bigint') return String(v);
      if (typeof v === 'number') return String(v);
      break;
    case 'STRING':
    case 'JSON':
    case 'GEOGRAPHY':
    case 'INTERVAL':
    case 'DATETIME':
    case 'TIME':
      if (typeof v === 'string') return v;
      break;
    default:
      break;
  }
  throw mismatch(col, t, v);
}

/** A decoded message as an insertAll JSON row for `columns` (also used by bench/swaps' protobufjs trial). */
export function structJson(columns: readonly { name: string; type: SqlType }[], m: Decoded, prefix: string): Record<string, unknown> {
  const byName = new Map(columns.map((c) => [c.name.toLowerCase(), c]));
  const out: Record<string, unknown> = {};
  for (const [name, v] of m) {
    const c = byName.get(name.toLowerCase());
    if (!c) throw new RowDecodeError(`Input schema has more fields than BigQuery schema, extra fields: '${prefix}${name}'`);
    out[c.name] = jsonValue(prefix + c.name, c.type, v);
  }
  return out;
}

/** Decodes serialized rows into insertAll JSON rows for the table's columns; rows that do not fit are reported by index. */
export function decodeRows(rows: readonly Uint8Array[], desc: MessageDescriptor, columns: readonly Column[]): { rows: Record<string, unknown>[]; errors: { index: number; message: string }[] } {
  checkDescriptor(desc);
  const out: Record<string, unknown>[] = [];
  const errors: { index: number; message: string }[] = [];
  rows.forEach((b, index) => {
    try {
      out.push(structJson(columns, decodeMessage(b, desc, desc), ''));
    } catch (e) {
      if (!(e instanceof RowDecodeError)) throw e;
      errors.push({ index, message: e.message });
    }
  });
  return { rows: out, errors };
}
