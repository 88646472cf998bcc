// Table rows as Arrow IPC messages, the way the Storage Read API sends them:
// one encapsulated schema message for the session, then one encapsulated
// record-batch message per ReadRows response (clients concatenate the two and
// read them as an IPC stream).
//
// Type mapping (the real service's): INT64 int64, FLOAT64 float64, BOOL bool,
// STRING utf8, BYTES binary, DATE date32, TIME time64[us], DATETIME
// timestamp[us], TIMESTAMP timestamp[us, UTC], NUMERIC decimal128(38, 9),
// BIGNUMERIC decimal256(76, 38), GEOGRAPHY / JSON / INTERVAL utf8 text,
// ARRAY list, STRUCT struct, RANGE struct<start, end>. TIMESTAMP(12) as the
// session's picos_timestamp_precision asks: timestamp[us, UTC] (MICROS, the
// default), timestamp[ns, UTC] (NANOS) or utf8 RFC 3339 text (PICOS).
import * as arrow from 'apache-arrow';
import type { Column } from '../../types/schema.js';
import type { ArrayType, RangeType, SqlType, StructType } from '../../types/types.js';
import type { Decimal, Geography, Interval, JsonValue, RangeValue, Value } from '../../types/values.js';
import { formatInterval, formatIntervalParts, jsonValueText } from '../../types/json-values.js';
import { setBigAt, type DecimalWidth } from '../../types/decimal-words.js';
import { getValue, layoutOf, packedList, sliceVector, structField, takeVector, vectorFromValues, withNullRows, type Batch, type Vector } from '../../types/vector.js';
import { formatTimestampPicosRfc3339, picosToInt64Nanos, picosToMicros, type PicosPrecision } from '../../types/picos.js';

// makeData's per-type prop interfaces are not exported; the props built here
// follow the Arrow layout of each type, checked by the client-library test.
const makeData = arrow.makeData as unknown as (props: Record<string, unknown>) => arrow.Data;

function arrowType(t: SqlType, picos: PicosPrecision): arrow.DataType {
  switch (t.kind) {
    case 'INT64':
      return new arrow.Int64();
    case 'FLOAT64':
      return new arrow.Float64();
    case 'BOOL':
      return new arrow.Bool();
    case 'STRING':
    case 'GEOGRAPHY':
    case 'JSON':
    case 'INTERVAL':
      return new arrow.Utf8();
    case 'BYTES':
      return new arrow.Binary();
    case 'DATE':
      return new arrow.DateDay();
    case 'TIME':
      return new arrow.TimeMicrosecond();
    case 'DATETIME':
      return new arrow.TimestampMicrosecond();
    case 'TIMESTAMP':
      return new arrow.TimestampMicrosecond('UTC');
    case 'TIMESTAMP_PICOS':
      return picos === 'PICOS' ? new arrow.Utf8() : picos === 'NANOS' ? new arrow.TimestampNanosecond('UTC') : new arrow.TimestampMicrosecond('UTC');
    case 'NUMERIC':
      return new arrow.Decimal(9, 38, 128);
    case 'BIGNUMERIC':
      return new arrow.Decimal(38, 76, 256);
    case 'ARRAY':
      return new arrow.List(new arrow.Field('item', arrowType(t.element, picos), false));
    case 'STRUCT':
      return new arrow.Struct(t.fields.map((f, i) => new arrow.Field(f.name || `_field_${i + 1}`, arrowType(f.type, picos), true)));
    case 'RANGE':
      return new arrow.Struct([new arrow.Field('start', arrowType(t.element, picos), true), new arrow.Field('end', arrowType(t.element, picos), true)]);
  }
}

export function arrowSchema(columns: readonly Column[], picos: PicosPrecision): arrow.Schema {
  return new arrow.Schema(columns.map((c) => new arrow.Field(c.name, arrowType(c.type, picos), !c.required || c.type.kind === 'ARRAY')));
}

/** Validity bitmap (bit set = value present), or null when every value is present. */
function validity(values: readonly Value[]): { bitmap: Uint8Array | undefined; nullCount: number } {
  let nullCount = 0;
  for (const v of values) if (v === null) nullCount++;
  if (nullCount === 0) return { bitmap: undefined, nullCount };
  const bitmap = new Uint8Array((values.length + 7) >> 3);
  values.forEach((v, i) => {
    if (v !== null) bitmap[i >> 3]! |= 1 << (i & 7);
  });
  return { bitmap, nullCount };
}

const utf8 = new TextEncoder();

function textOf(t: SqlType, v: Value): string {
  switch (t.kind) {
    case 'JSON':
      return jsonValueText(v as JsonValue);
    case 'GEOGRAPHY':
      return (v as Geography).wkt;
    case 'INTERVAL':
      return formatInterval(v as Interval);
    default:
      return v as string;
  }
}

function variableWidth(type: arrow.Utf8 | arrow.Binary, chunks: readonly (Uint8Array | null)[], values: readonly Value[]): arrow.Data {
  const offsets = new Int32Array(chunks.length + 1);
  let size = 0;
  chunks.forEach((c, i) => {
    size += c ? c.length : 0;
    offsets[i + 1] = size;
  });
  const data = new Uint8Array(size);
  chunks.forEach((c, i) => {
    if (c) data.set(c, offsets[i]!);
  });
  const { bitmap, nullCount } = validity(values);
  return makeData({ type, length: values.length, nullCount, nullBitmap: bitmap, valueOffsets: offsets, data });
}

/** Two's complement little-endian words of an unscaled decimal. */
function decimalWords(values: readonly Value[], scale: number, width: DecimalWidth): Uint32Array {
  const out = new Uint32Array(values.length * width);
  values.forEach((v, i) => {
    // toFixed is exact whatever Decimal's configured precision; dropping the point unscales.
    if (v !== null) setBigAt(out, i * width, width, BigInt((v as Decimal).toFixed(scale).replace('.', '')));
  });
  return out;
}

/** Arrow data of one column from scalar values (values.ts forms). */
function columnData(t: SqlType, values: readonly Value[], picos: PicosPrecision): arrow.Data {
  const length = values.length;
  const { bitmap, nullCount } = validity(values);
  const fixed = (type: arrow.DataType, data: ArrayLike<number> | ArrayLike<bigint>): arrow.Data => makeData({ type, length, nullCount, nullBitmap: bitmap, data });
  switch (t.kind) {
    case 'INT64':
    case 'DATETIME':
    case 'TIMESTAMP':
      return fixed(arrowType(t, picos), BigInt64Array.from(values, (v) => (v === null ? 0n : (v as bigint))));
    case 'TIMESTAMP_PICOS': {
      if (picos === 'PICOS') return variableWidth(new arrow.Utf8(), values.map((v) => (v === null ? null : utf8.encode(formatTimestampPicosRfc3339(v as bigint)))), values);
      const cut = picos === 'NANOS' ? picosToInt64Nanos : picosToMicros;
      return fixed(arrowType(t, picos), BigInt64Array.from(values, (v) => (v === null ? 0n : cut(v as bigint))));
    }
    case 'TIME':
      return fixed(arrowType(t, picos), BigInt64Array.from(values, (v) => (v === null ? 0n : BigInt(v as number))));
    case 'FLOAT64':
      return fixed(arrowType(t, picos), Float64Array.from(values, (v) => (v === null ? 0 : (v as number))));
    case 'DATE':
      return fixed(arrowType(t, picos), Int32Array.from(values, (v) => (v === null ? 0 : (v as number))));
    case 'BOOL': {
      const bits = new Uint8Array((length + 7) >> 3);
      values.forEach((v, i) => {
        if (v === true) bits[i >> 3]! |= 1 << (i & 7);
      });
      return fixed(arrowType(t, picos), bits);
    }
    case 'NUMERIC':
      return fixed(arrowType(t, picos), decimalWords(values, 9, 4));
    case 'BIGNUMERIC':
      return fixed(arrowType(t, picos), decimalWords(values, 38, 8));
    case 'BYTES':
      return variableWidth(new arrow.Binary(), values.map((v) => (v === null ? null : (v as Uint8Array))), values);
    case 'STRING':
    case 'JSON':
    case 'GEOGRAPHY':
    case 'INTERVAL':
      return variableWidth(new arrow.Utf8(), values.map((v) => (v === null ? null : utf8.encode(textOf(t, v)))), values);
    case 'ARRAY': {
      const offsets = new Int32Array(length + 1);
      const flat: Value[] = [];
      values.forEach((v, i) => {
        if (v !== null) for (const e of v as Value[]) flat.push(e);
        offsets[i + 1] = flat.length;
      });
      const type = arrowType(t, picos) as arrow.List;
      // A NULL array reads as an empty one: the real service never returns NULL arrays.
      return makeData({ type, length, nullCount: 0, valueOffsets: offsets, child: columnData(t.element, flat, picos) });
    }
    case 'STRUCT': {
      const type = arrowType(t, picos) as arrow.Struct;
      const children = t.fields.map((f, k) => columnData(f.type, values.map((v) => (v === null ? null : (v as Value[])[k]!)), picos));
      return makeData({ type, length, nullCount, nullBitmap: bitmap, children });
    }
    case 'RANGE': {
      const type = arrowType(t, picos) as arrow.Struct;
      const side = (pick: (r: RangeValue) => Value) => columnData(t.element, values.map((v) => (v === null ? null : pick(v as RangeValue))), picos);
      return makeData({ type, length, nullCount, nullBitmap: bitmap, children: [side((r) => r.start), side((r) => r.end)] });
    }
  }
}

function streamBytes(schema: arrow.Schema, batches: arrow.RecordBatch[]): Uint8Array {
  return arrow.RecordBatchStreamWriter.writeAll(batches.length ? batches : new arrow.Table(schema)).toUint8Array(true);
}

/** End-of-stream marker: continuation token and a zero length. */
const EOS_BYTES = 8;

/** The encapsulated schema message (what `ArrowSchema.serialized_schema` holds). */
export function serializeSchema(schema: arrow.Schema): Uint8Array {
  const bytes = streamBytes(schema, []);
  return bytes.subarray(0, bytes.length - EOS_BYTES);
}

/** The validity bitmap of column pieces (bit set = present, padding bits clear as `validity` makes them), or none when nothing is NULL. */
function validityOf(parts: readonly Vector[], length: number): { bitmap: Uint8Array | undefined; nullCount: number } {
  if (parts.every((p) => p.nulls === null)) return { bitmap: undefined, nullCount: 0 };
  const bitmap = new Uint8Array((length + 7) >> 3);
  let nullCount = 0;
  let at = 0;
  for (const p of parts) {
    const nulls = p.nulls;
    for (let i = 0; i < p.length; i++) {
      const r = at + i;
      if (nulls !== null && nulls[i] === 1) nullCount++;
      else bitmap[r >> 3]! |= 1 << (r & 7);
    }
    at += p.length;
  }
  return nullCount === 0 ? { bitmap: undefined, nullCount } : { bitmap, nullCount };
}

/** Zero bytes in the value slots of NULL rows (`width` bytes each): a vector may hold anything there, the boxed encoding writes 0. */
function clearNullSlots(out: ArrayBufferView, width: number, parts: readonly Vector[]): void {
  const bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
  let at = 0;
  for (const p of parts) {
    const nulls = p.nulls;
    if (nulls !== null) for (let i = 0; i < p.length; i++) if (nulls[i] === 1) bytes.fill(0, (at + i) * width, (at + i + 1) * width);
    at += p.length;
  }
}
/** INT64-like values (bigints, or doubles holding integers) as little-endian 64-bit words. */
function int64Words(parts: readonly Vector[], length: number): BigInt64Array {
  const out = new BigInt64Array(length);
  const words = new Uint32Array(out.buffer);
  let at = 0;
  for (const p of parts) {
    const d = p.data;
    if (d instanceof BigInt64Array) out.set(d, at);
    else {
      // Doubles hold exact integers here (|x| <= 2^53): two 32-bit halves, no BigInt per value.
      const f = d as Float64Array;
      for (let i = 0; i < p.length; i++) {
        const x = f[i]!;
        const hi = Math.floor(x / 4294967296);
        words[2 * (at + i)] = x - hi * 4294967296;
        words[2 * (at + i) + 1] = hi >>> 0;
      }
    }
    at += p.length;
  }
  return out;
}

/** `out` filled with the pieces' values, one after another (their data of `out`'s layout). */
function concatTyped<A extends Float64Array | Int32Array>(out: A, parts: readonly Vector[]): A {
  let at = 0;
  for (const p of parts) {
    out.set(p.data as A, at);
    at += p.length;
  }
  return out;
}

/**
 * Arrow data of one column from the executor's column pieces: fixed-width
 * types copied buffer to buffer (NULL bytes become the validity bitmap),
 * strings encoded in one go; ARRAY and STRUCT columns from their layout
 * (list offsets, struct validity, field and element pieces in turn), so a
 * scanned nested column's leaves are copied as they are; NUMERIC and
 * BIGNUMERIC as a scan's decimal words; INTERVAL from a scan's parts, RANGE
 * from its sides (fixed-width copies); the other types
 * through their values. The bytes are the ones `columnData` makes of the
 * rows' values.
 */
function vectorData(t: SqlType, parts: readonly Vector[], picos: PicosPrecision): arrow.Data {
  const length = parts.reduce((n, p) => n + p.length, 0);
  if (t.kind === 'ARRAY') return listData(t, parts, length, picos);
  if (t.kind === 'STRUCT') return structData(t, parts, length, picos);
  if (t.kind === 'NUMERIC' || t.kind === 'BIGNUMERIC') return decimalData(t, parts, length, picos);
  if (t.kind === 'RANGE') return rangeData(t, parts, length, picos);
  if (t.kind === 'INTERVAL' && parts.some((p) => p.interval)) return intervalData(parts, length);
  const layout = layoutOf(t);
  if (layout === 'values' && t.kind !== 'STRING') return columnData(t, boxedValues(parts), picos);
  const { bitmap, nullCount } = validityOf(parts, length);
  const fixed = (data: BigInt64Array | Float64Array | Int32Array | Uint8Array, width: number): arrow.Data => {
    if (nullCount > 0 && width > 0) clearNullSlots(data, width, parts);
    return makeData({ type: arrowType(t, picos), length, nullCount, nullBitmap: bitmap, data });
  };
  switch (layout) {
    case 'i64':
      return fixed(int64Words(parts, length), 8);
    case 'f64': {
      const out = concatTyped(new Float64Array(length), parts);
      // TIME: micros of day as time64[us].
      return fixed(t.kind === 'TIME' ? int64Words([{ type: t, length, data: out, nulls: null }], length) : out, 8);
    }
    case 'i32':
      return fixed(concatTyped(new Int32Array(length), parts), 4);
    case 'bool': {
      const bits = new Uint8Array((length + 7) >> 3);
      let at = 0;
      for (const p of parts) {
        const d = p.data as Uint8Array;
        const nulls = p.nulls;
        for (let i = 0; i < p.length; i++) if (d[i] === 1 && (nulls === null || nulls[i] !== 1)) bits[(at + i) >> 3]! |= 1 << ((at + i) & 7);
        at += p.length;
      }
      return fixed(bits, 0);
    }
    default: {
      // STRING: the rows' concatenation encoded once; offsets by character count when it is ASCII, else by each string's UTF-8 length.
      const strs: string[] = [];
      for (const p of parts) for (let i = 0; i < p.length; i++) strs.push(p.nulls?.[i] === 1 ? '' : ((p.data as Value[])[i] as string));
      const joined = strs.join('');
      const data = Buffer.from(joined, 'utf8');
      const offsets = new Int32Array(length + 1);
      if (data.length === joined.length) for (let i = 0; i < length; i++) offsets[i + 1] = offsets[i]! + strs[i]!.length;
      else for (let i = 0; i < length; i++) offsets[i + 1] = offsets[i]! + Buffer.byteLength(strs[i]!, 'utf8');
      // Lone surrogates at a boundary pair up in the concatenation: such rows are encoded one by one.
      if (offsets[length] !== data.length) return columnData(t, boxedValues(parts), picos);
      return makeData({ type: new arrow.Utf8(), length, nullCount, nullBitmap: bitmap, valueOffsets: offsets, data: new Uint8Array(data.buffer, data.byteOffset, data.length) });
    }
  }
}

/** NUMERIC / BIGNUMERIC pieces: a scan's words copied as they are, boxed pieces' values unscaled (decimalWords). */
function decimalData(t: SqlType, parts: readonly Vector[], length: number, picos: PicosPrecision): arrow.Data {
  const width = t.kind === 'NUMERIC' ? 4 : 8;
  const out = new Uint32Array(length * width);
  let at = 0;
  for (const p of parts) {
    if (p.decimal) out.set(p.decimal.words.subarray(0, p.length * width), at * width);
    else out.set(decimalWords(boxedValues([p]), width === 4 ? 9 : 38, width), at * width);
    at += p.length;
  }
  const { bitmap, nullCount } = validityOf(parts, length);
  if (nullCount > 0) clearNullSlots(out, 4 * width, parts);
  return makeData({ type: arrowType(t, picos), length, nullCount, nullBitmap: bitmap, data: out });
}

/** INTERVAL pieces as their canonical text (formatInterval's), an interval view's from its parts without an Interval per row. */
function intervalData(parts: readonly Vector[], length: number): arrow.Data {
  const strs: string[] = [];
  for (const p of parts) {
    const iv = p.interval;
    const values = iv ? null : (p.data as Value[]);
    for (let i = 0; i < p.length; i++) {
      if (p.nulls !== null && p.nulls[i] === 1) strs.push('');
      else strs.push(iv ? formatIntervalParts(iv.months[i]!, iv.days[i]!, iv.micros[i]!) : formatInterval(values![i] as Interval));
    }
  }
  // The text is ASCII: offsets by character count.
  const offsets = new Int32Array(length + 1);
  for (let i = 0; i < length; i++) offsets[i + 1] = offsets[i]! + strs[i]!.length;
  const data = Buffer.from(strs.join(''), 'latin1');
  const { bitmap, nullCount } = validityOf(parts, length);
  return makeData({ type: new arrow.Utf8(), length, nullCount, nullBitmap: bitmap, valueOffsets: offsets, data: new Uint8Array(data.buffer, data.byteOffset, data.length) });
}

/** RANGE pieces as struct<start, end>: a range view's sides copied as fixed-width columns, boxed pieces' from their values; a NULL range's sides NULL. */
function rangeData(t: RangeType, parts: readonly Vector[], length: number, picos: PicosPrecision): arrow.Data {
  const { bitmap, nullCount } = validityOf(parts, length);
  const starts: Vector[] = [];
  const ends: Vector[] = [];
  for (const p of parts) {
    let start: Vector, end: Vector;
    if (p.range) ({ start, end } = p.range);
    else {
      const values = p.data as Value[];
      const side = (pick: (r: RangeValue) => Value): Vector => vectorFromValues(t.element, Array.from({ length: p.length }, (_, i) => (values[i] === null ? null : pick(values[i] as RangeValue))));
      start = side((r) => r.start);
      end = side((r) => r.end);
    }
    starts.push(p.nulls !== null ? nullUnder(start, p.nulls) : start);
    ends.push(p.nulls !== null ? nullUnder(end, p.nulls) : end);
  }
  return makeData({ type: arrowType(t, picos), length, nullCount, nullBitmap: bitmap, children: [vectorData(t.element, starts, picos), vectorData(t.element, ends, picos)] });
}

function boxedValues(parts: readonly Vector[]): Value[] {
  const out: Value[] = [];
  for (const p of parts) for (let i = 0; i < p.length; i++) out.push(getValue(p, i));
  return out;
}

/**
 * ARRAY rows as list offsets (from 0) + their elements, NULL rows empty: a
 * list view's as they are or taken once (packedList); boxed rows from their
 * values.
 */
function listView(t: ArrayType, p: Vector): { offsets: Int32Array; child: Vector } {
  const packed = packedList(p, p.length);
  if (packed) return packed;
  const values = p.data as Value[];
  const offsets = new Int32Array(p.length + 1);
  const flat: Value[] = [];
  for (let i = 0; i < p.length; i++) {
    const v = p.nulls !== null && p.nulls[i] === 1 ? null : values[i]!;
    if (v !== null) for (const e of v as Value[]) flat.push(e);
    offsets[i + 1] = flat.length;
  }
  return { offsets, child: vectorFromValues(t.element, flat) };
}

function listData(t: ArrayType, parts: readonly Vector[], length: number, picos: PicosPrecision): arrow.Data {
  const offsets = new Int32Array(length + 1);
  const children: Vector[] = [];
  let row = 0;
  for (const p of parts) {
    const { offsets: o, child } = listView(t, p);
    const base = offsets[row]!;
    for (let i = 0; i < p.length; i++) offsets[row + i + 1] = base + o[i + 1]!;
    children.push(child);
    row += p.length;
  }
  // A NULL array reads as an empty one: the real service never returns NULL arrays.
  return makeData({ type: arrowType(t, picos), length, nullCount: 0, valueOffsets: offsets, child: vectorData(t.element, children, picos) });
}

/** STRUCT rows' field vectors: a struct view's (rows taken too), boxed rows' from their values. */
function structView(t: StructType, p: Vector): readonly Vector[] {
  const fields = t.fields.map((_, j) => structField(p, j));
  if (fields.every((f) => f !== null)) return fields as Vector[];
  const values = p.data as Value[];
  const row = (i: number): Value[] | null => (p.nulls !== null && p.nulls[i] === 1 ? null : (values[i] as Value[] | null));
  return t.fields.map((f, k) => vectorFromValues(f.type, Array.from({ length: p.length }, (_, i) => row(i)?.[k] ?? null)));
}

/** `f` NULL also where its struct is: a NULL struct's fields read as NULL, whatever the view holds there. */
function nullUnder(f: Vector, structNulls: Uint8Array): Vector {
  let nulls: Uint8Array | null = null;
  for (let i = 0; i < f.length; i++) if (structNulls[i] === 1 && f.nulls?.[i] !== 1) (nulls ??= f.nulls ? f.nulls.slice() : new Uint8Array(f.length))[i] = 1;
  return nulls ? withNullRows(f, nulls) : f;
}

function structData(t: StructType, parts: readonly Vector[], length: number, picos: PicosPrecision): arrow.Data {
  const { bitmap, nullCount } = validityOf(parts, length);
  const fieldParts: Vector[][] = t.fields.map(() => []);
  for (const p of parts) {
    const fields = structView(t, p);
    fields.forEach((f, j) => fieldParts[j]!.push(p.nulls !== null ? nullUnder(f, p.nulls) : f));
  }
  const children = t.fields.map((f, j) => vectorData(f.type, fieldParts[j]!, picos));
  return makeData({ type: arrowType(t, picos), length, nullCount, nullBitmap: bitmap, children });
}

/** One encapsulated record-batch message of rows [start, end) of `rows`. */
export function serializeRecordBatch(schema: arrow.Schema, schemaBytes: Uint8Array, columns: readonly Column[], rows: RowSource, start: number, end: number, picos: PicosPrecision): Uint8Array {
  return message(schema, schemaBytes, end - start, columns.map((c, k) => vectorData(c.type, rows.vectors(k, start, end), picos)));
}

/** The message of rows given as each column's values, every value encoded one by one: the reference the encoding from vectors is tested against. */
export function serializeValueRecordBatch(schema: arrow.Schema, schemaBytes: Uint8Array, columns: readonly Column[], values: readonly (readonly Value[])[], picos: PicosPrecision): Uint8Array {
  return message(schema, schemaBytes, values[0]?.length ?? 0, columns.map((c, k) => columnData(c.type, values[k]!, picos)));
}

function message(schema: arrow.Schema, schemaBytes: Uint8Array, length: number, children: arrow.Data[]): Uint8Array {
  const data = makeData({ type: new arrow.Struct(schema.fields), length, nullCount: 0, children });
  const bytes = streamBytes(schema, [new arrow.RecordBatch(schema, data as arrow.Data<arrow.Struct>)]);
  return bytes.subarray(schemaBytes.length, bytes.length - EOS_BYTES);
}

/** Row access over a table snapshot, after the session's row filter. */
export class RowSource {
  private readonly starts: number[] = [];

  constructor(
    private readonly batches: readonly Batch[],
    /** Row numbers (in snapshot order) that pass the filter; null = all rows. */
    private readonly selected: Int32Array | null,
    readonly rowCount: number,
    /** The row number of the batches' first row (they hold a window of the rows). */
    private readonly base = 0,
  ) {
    let s = base;
    for (const b of batches) {
      this.starts.push(s);
      s += b.length;
    }
  }

  /** The same rows with only the columns at `idx` (selected_fields), in that order; `narrow[k]` reshapes column k's rows (nested selected fields). */
  project(idx: readonly number[], narrow?: readonly (((v: Vector) => Vector) | undefined)[]): RowSource {
    const column = (b: Batch, i: number, k: number): Vector => narrow?.[k]?.(b.columns[i]!) ?? b.columns[i]!;
    return new RowSource(this.batches.map((b) => ({ length: b.length, columns: idx.map((i, k) => column(b, i, k)) })), this.selected, this.rowCount, this.base);
  }

  /** Column k of filtered rows [start, end) as vector pieces (slices of the batches; selections taken). */
  vectors(k: number, start: number, end: number): Vector[] {
    const out: Vector[] = [];
    let b = 0;
    for (let i = start; i < end; ) {
      const r = this.selected ? this.selected[i]! : i;
      while (this.starts[b]! + this.batches[b]!.length <= r) b++;
      const bs = this.starts[b]!;
      const v = this.batches[b]!.columns[k]!;
      const be = bs + this.batches[b]!.length;
      if (!this.selected) {
        const e = Math.min(end, be);
        out.push(sliceVector(v, r - bs, e - bs));
        i = e;
        continue;
      }
      // The selected rows in this batch.
      const sel: number[] = [];
      while (i < end && this.selected[i]! < be) sel.push(this.selected[i++]! - bs);
      out.push(takeVector(v, sel));
    }
    return out;
  }

  /** Scalar values of column k for filtered rows [start, end) (row numbers ascend, so the batch cursor only moves forward). */
  values(k: number, start: number, end: number): Value[] {
    const out: Value[] = new Array(end - start);
    let b = 0;
    for (let i = start; i < end; i++) {
      const r = this.selected ? this.selected[i]! : i;
      while (this.starts[b]! + this.batches[b]!.length <= r) b++;
      out[i - start] = getValue(this.batches[b]!.columns[k]!, r - this.starts[b]!);
    }
    return out;
  }
}
