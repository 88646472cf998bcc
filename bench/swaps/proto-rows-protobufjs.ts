// A copy of src/engine/storage-write/proto-rows.ts as of d5b991c (issue 17 library swap
// trial, bench/swaps/README.md) whose wire decoding is protobufjs's: the
// writer's DescriptorProto becomes a protobufjs Type (Type.fromDescriptor,
// its decoder generated once per descriptor), and each decoded message is
// turned into the field-name map that proto-rows.ts's structJson converts
// to insertAll JSON (imported, as are its descriptor helpers). Not used by
// the engine; measured against the hand-written decoder by bench/swaps/run.ts (proto), with and without the
// wire check the hand-written decoder does and protobufjs does not.
import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs';
import 'protobufjs/ext/descriptor/index.js';
import type { Column } from '../../src/types/schema.js';
import {
  findNested, MAX_DEPTH, RowDecodeError, structJson, wireTypeOf,
  type Decoded, type FieldDescriptor, type MessageDescriptor,
} from '../../src/engine/storage-write/proto-rows.js';

const TYPE_NUMBERS: Record<string, number> = {
  TYPE_DOUBLE: 1, TYPE_FLOAT: 2, TYPE_INT64: 3, TYPE_UINT64: 4, TYPE_INT32: 5, TYPE_FIXED64: 6, TYPE_FIXED32: 7, TYPE_BOOL: 8, TYPE_STRING: 9,
  TYPE_GROUP: 10, TYPE_MESSAGE: 11, TYPE_BYTES: 12, TYPE_UINT32: 13, TYPE_ENUM: 14, TYPE_SFIXED32: 15, TYPE_SFIXED64: 16, TYPE_SINT32: 17, TYPE_SINT64: 18,
};
const LABEL_NUMBERS: Record<string, number> = { LABEL_OPTIONAL: 1, LABEL_REQUIRED: 2, LABEL_REPEATED: 3 };

/** proto-loader's form of a DescriptorProto (enum names) in protobufjs's (enum numbers); nested type names made local. */
function numericDescriptor(d: MessageDescriptor): object {
  return {
    name: d.name,
    field: d.field.map((f) => ({
      name: f.name,
      number: f.number,
      label: LABEL_NUMBERS[f.label] ?? 1,
      type: TYPE_NUMBERS[f.type] ?? 0,
      ...(f.typeName ? { typeName: f.typeName.split('.').pop() } : {}),
    })),
    nestedType: d.nestedType.map(numericDescriptor),
  };
}

const INT64_KINDS = new Set(['int64', 'sint64', 'sfixed64']);
const UINT64_KINDS = new Set(['uint64', 'fixed64']);

interface LongLike {
  low: number;
  high: number;
}

/** A protobufjs long (or a number, without long.js) as a bigint. */
function bigOf(v: LongLike | number, signed: boolean): bigint {
  if (typeof v === 'number') return BigInt(v);
  const u = (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
  return signed ? BigInt.asIntN(64, u) : u;
}

/** One decoded value in the hand-written decoder's form (integers as bigint, messages as maps). */
function valueOf(f: protobuf.Field, v: unknown): unknown {
  if (f.resolvedType instanceof protobuf.Type) return mapOf(f.resolvedType, v as protobuf.Message);
  if (INT64_KINDS.has(f.type)) return bigOf(v as LongLike, true);
  if (UINT64_KINDS.has(f.type)) return bigOf(v as LongLike, false);
  if (typeof v === 'number' && f.type !== 'double' && f.type !== 'float') return BigInt(v);
  return v;
}

function mapOf(t: protobuf.Type, m: protobuf.Message): Decoded {
  const out: Decoded = new Map();
  for (const f of t.fieldsArray) {
    if (!Object.prototype.hasOwnProperty.call(m, f.name)) continue;
    const v = (m as unknown as Record<string, unknown>)[f.name];
    if (f.repeated) {
      const arr = v as unknown[];
      if (arr.length) out.set(f.name, arr.map((e) => valueOf(f, e)));
    } else out.set(f.name, valueOf(f, v));
  }
  return out;
}

const types = new WeakMap<MessageDescriptor, protobuf.Type>();

let checked = true;
/** Whether checkWire runs first (the bench measures both). */
export function setChecked(on: boolean): void {
  checked = on;
}

function typeOf(desc: MessageDescriptor): protobuf.Type {
  let t = types.get(desc);
  if (!t) {
    t = (protobuf.Type as unknown as { fromDescriptor(d: object): protobuf.Type }).fromDescriptor(numericDescriptor(desc));
    new protobuf.Root().add(t);
    t.resolveAll();
    types.set(desc, t);
  }
  return t;
}

const nestedCache = new WeakMap<FieldDescriptor, MessageDescriptor>();

function nestedOf(root: MessageDescriptor, f: FieldDescriptor): MessageDescriptor {
  let m = nestedCache.get(f);
  if (!m) nestedCache.set(f, (m = findNested(root, f.typeName)));
  return m;
}
const fieldMaps = new WeakMap<MessageDescriptor, Map<number, FieldDescriptor>>();

/**
 * What protobufjs's generated decoders do not check, checked first as the
 * hand-written decoder checks it (same messages): every known field's wire
 * type fits its type (protobufjs reads by the declared type whatever the
 * tag says, so a mismatch decodes garbage or fails with "index out of
 * range"), wire types 3/4/6/7, truncation, nesting depth, and strings that
 * are valid UTF-8 (protobufjs decodes invalid bytes to wrong characters,
 * silently; the hand-written decoder gives U+FFFD; here a row error, the
 * direction input validation is taking).
 */
function checkWire(buf: Uint8Array, desc: MessageDescriptor, root: MessageDescriptor, depth: number): void {
  if (depth > MAX_DEPTH) throw new RowDecodeError(`message nested more than ${MAX_DEPTH} levels deep`);
  let byNumber = fieldMaps.get(desc);
  if (!byNumber) fieldMaps.set(desc, (byNumber = new Map(desc.field.map((f) => [f.number, f]))));
  let pos = 0;
  const varint = (): number => {
    let result = 0;
    let mul = 1;
    for (let i = 0; ; i++) {
      if (pos >= buf.length) throw new RowDecodeError('truncated varint');
      const b = buf[pos++]!;
      result += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) return result;
      mul *= 128;
      if (i >= 9) throw new RowDecodeError('varint too long');
    }
  };
  while (pos < buf.length) {
    const key = varint();
    const num = Math.floor(key / 8);
    const wt = key % 8;
    let start = pos;
    let end: number;
    if (wt === 0) {
      varint();
      end = pos;
    } else if (wt === 1 || wt === 5) {
      end = pos + (wt === 1 ? 8 : 4);
      if (end > buf.length) throw new RowDecodeError('truncated fixed-width field');
    } else if (wt === 2) {
      const len = varint();
      start = pos;
      end = pos + len;
      if (end > buf.length) throw new RowDecodeError('truncated length-delimited field');
    } else throw new RowDecodeError(`unsupported wire type ${wt}`);
    pos = end;
    const f = byNumber.get(num);
    if (!f) continue;
    const want = wireTypeOf(f.type);
    if (wt !== want && !(wt === 2 && want !== 2)) throw new RowDecodeError(`Field ${f.name}: wire type ${wt} does not fit its type ${f.type}`);
    if (f.type === 'TYPE_MESSAGE') checkWire(buf.subarray(start, end), nestedOf(root, f), root, depth + 1);
    else if (f.type === 'TYPE_STRING' && !isUtf8(buf.subarray(start, end))) throw new RowDecodeError(`Field ${f.name}: not valid UTF-8`);
  }
}

function decodeMessage(bytes: Uint8Array, desc: MessageDescriptor): Decoded {
  const t = typeOf(desc);
  if (checked) checkWire(bytes, desc, desc, 0);
  let m: protobuf.Message;
  try {
    m = t.decode(bytes);
  } catch (e) {
    throw new RowDecodeError((e as Error).message);
  }
  return mapOf(t, m);
}

/** Decodes serialized rows into insertAll JSON rows for the table's columns; rows that do not fit are reported by index. */
export function decodeRows(rows: readonly Uint8Array[], desc: MessageDescriptor, columns: readonly Column[]): { rows: Record<string, unknown>[]; errors: { index: number; message: string }[] } {
  const out: Record<string, unknown>[] = [];
  const errors: { index: number; message: string }[] = [];
  rows.forEach((b, index) => {
    try {
      out.push(structJson(columns, decodeMessage(b, desc), ''));
    } catch (e) {
      if (!(e instanceof RowDecodeError)) throw e;
      errors.push({ index, message: e.message });
    }
  });
  return { rows: out, errors };
}
