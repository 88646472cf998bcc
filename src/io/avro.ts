// Avro object container files (avsc, loaded on first use): reading into
// insertAll rows with the real service's type mapping, and writing rows.
//
// Load mapping (as the real service): boolean BOOLEAN, int/long INTEGER,
// float/double FLOAT, bytes/fixed BYTES, string/enum STRING, record RECORD,
// array REPEATED, map REPEATED RECORD(key, value); a union of null and one
// type is NULLABLE, any other field REQUIRED. Logical types: `decimal` is
// always NUMERIC/BIGNUMERIC; date, time-*, timestamp-* and local-timestamp-*
// become DATE, TIME, TIMESTAMP and DATETIME only with useAvroLogicalTypes,
// otherwise they load as their raw INTEGER.
import type * as Avsc from 'avsc';
import { formatDate, formatDatetime, formatTime, formatTimestampRfc3339, parseDate, parseDatetime, parseTime, parseTimestamp } from '../types/json-values.js';
import { IoError, ioInvalid, ioNotImplemented, isObj, type Json } from './errors.js';
import type { SourceFile } from './objects.js';
import { avroSnappyBlock } from './snappy.js';
import { picosTextToMicros } from '../types/picos.js';
import type { Parsed, RestField } from './schema.js';

type AvroLib = typeof Avsc;
let lib: Promise<AvroLib> | undefined;
const loadAvsc = (): Promise<AvroLib> =>
  (lib ??= import('avsc').then((m) => guardCounts((m as unknown as { default?: AvroLib }).default ?? (m as unknown as AvroLib))));

/** What avsc's readers see of a type and its read position. */
interface AvscTap {
  buf: Uint8Array;
  pos: number;
  readLong(): number;
  skipLong(): void;
  readString(): string;
}
interface AvscType {
  typeName: string;
  _read(tap: AvscTap): unknown;
  readonly itemsType?: AvscType;
  readonly valuesType?: AvscType;
  readonly fields?: readonly { readonly type: AvscType }[];
  readonly underlyingType?: AvscType;
  readonly size?: number;
}

/** Whether a value of type `t` can take no bytes (so a count of them is not bounded by the bytes left). */
function zeroSize(t: AvscType | undefined, depth = 0): boolean {
  if (!t || depth > 50) return false;
  if (t.typeName === 'null') return true;
  if (t.fields) return t.fields.every((f) => zeroSize(f.type, depth + 1));
  if (t.typeName === 'fixed') return t.size === 0;
  return t.underlyingType !== undefined && zeroSize(t.underlyingType, depth + 1);
}

/**
 * avsc trusts the item counts of arrays and maps: it made `new Array(count)`
 * with a count read from the file (V8 aborts the whole process past ~134M
 * elements) and read that many items past the end of the data. These readers
 * refuse a block claiming more items than bytes are left (each item takes a
 * byte at least), or more than MAX_EMPTY_RECORDS items that take none.
 */
function guardCounts(avro: AvroLib): AvroLib {
  const builtins = (avro as unknown as { types: Record<string, { prototype: AvscType }> }).types;
  const blockSize = (tap: AvscTap, itemType: AvscType | undefined): number => {
    let n = tap.readLong();
    if (n < 0) {
      n = -n;
      tap.skipLong();
    }
    if (n > (zeroSize(itemType) ? MAX_EMPTY_RECORDS : tap.buf.length - tap.pos)) throw new Error(`an array or map block claims ${n} items`);
    return n;
  };
  builtins['ArrayType']!.prototype._read = function (this: AvscType, tap: AvscTap): unknown[] {
    const items = this.itemsType!;
    const out: unknown[] = [];
    for (let n = blockSize(tap, items); n !== 0; n = blockSize(tap, items)) while (n-- > 0) out.push(items._read(tap));
    return out;
  };
  builtins['MapType']!.prototype._read = function (this: AvscType, tap: AvscTap): Record<string, unknown> {
    const values = this.valuesType!;
    const out: Record<string, unknown> = {};
    // Keys are strings: a byte each at least, whatever the values.
    for (let n = blockSize(tap, undefined); n !== 0; n = blockSize(tap, undefined)) {
      while (n-- > 0) {
        const key = tap.readString();
        out[key] = values._read(tap);
      }
    }
    return out;
  };
  return avro;
}

/** A schema as avsc hands it to the parse hook (JSON form). */
type AvroSchema = string | AvroSchema[] | { type: AvroSchema; [k: string]: unknown };

/** INT64 values are exact: longs decode to and encode from bigint, not doubles. */
function bigintLong(avro: AvroLib): Avsc.Type {
  return avro.types.LongType.__with({
    fromBuffer: (buf: Buffer) => buf.readBigInt64LE(),
    toBuffer: (n: bigint) => {
      const buf = Buffer.alloc(8);
      buf.writeBigInt64LE(n);
      return buf;
    },
    fromJSON: (v: unknown) => BigInt(v as string),
    toJSON: (n: bigint) => Number(n),
    isValid: (n: unknown) => typeof n === 'bigint',
    compare: (a: bigint, b: bigint) => (a === b ? 0 : a < b ? -1 : 1),
  });
}

const typeName = (s: AvroSchema): string => (typeof s === 'string' ? s : Array.isArray(s) ? 'union' : typeof s.type === 'string' ? s.type : 'union');
const logicalOf = (s: AvroSchema): string | undefined => (isObj(s) && typeof s['logicalType'] === 'string' ? s['logicalType'] : undefined);

/** Named types (records, enums, fixed) by name, so later references resolve. */
type Named = Map<string, AvroSchema>;

function resolve(s: AvroSchema, named: Named): AvroSchema {
  if (typeof s === 'string' && named.has(s)) return named.get(s)!;
  if (isObj(s) && typeof s.type === 'string' && named.has(s.type) && !['record', 'enum', 'fixed', 'array', 'map'].includes(s.type)) return named.get(s.type)!;
  return s;
}

function remember(s: AvroSchema, named: Named): void {
  if (isObj(s) && typeof s['name'] === 'string' && ['record', 'enum', 'fixed'].includes(String(s.type))) {
    named.set(s['name'], s);
    if (typeof s['namespace'] === 'string') named.set(`${s['namespace']}.${s['name']}`, s);
  }
}

function decimalType(s: Json): string {
  const precision = Number(s['precision'] ?? 0);
  const scale = Number(s['scale'] ?? 0);
  if (precision - scale <= 29 && scale <= 9) return 'NUMERIC';
  if (precision - scale <= 39 && scale <= 38) return 'BIGNUMERIC';
  return 'STRING';
}

/** The BigQuery type of a non-union Avro schema. */
function scalarType(s: AvroSchema, logical: boolean): { type: string; fields?: RestField[] } {
  const lt = logicalOf(s);
  const base = typeName(s);
  if (lt === 'decimal' && (base === 'bytes' || base === 'fixed')) return { type: decimalType(s as Json) };
  if (logical && lt) {
    if (lt === 'date' && base === 'int') return { type: 'DATE' };
    if ((lt === 'time-millis' && base === 'int') || (lt === 'time-micros' && base === 'long')) return { type: 'TIME' };
    if ((lt === 'timestamp-millis' || lt === 'timestamp-micros') && base === 'long') return { type: 'TIMESTAMP' };
    if ((lt === 'local-timestamp-millis' || lt === 'local-timestamp-micros') && base === 'long') return { type: 'DATETIME' };
    if (lt === 'datetime' && base === 'string') return { type: 'DATETIME' };
  }
  if (isObj(s) && base === 'string' && typeof s['sqlType'] === 'string' && ['JSON', 'GEOGRAPHY'].includes(s['sqlType'])) return { type: s['sqlType'] };
  switch (base) {
    case 'boolean':
      return { type: 'BOOLEAN' };
    case 'int':
    case 'long':
      return { type: 'INTEGER' };
    case 'float':
    case 'double':
      return { type: 'FLOAT' };
    case 'bytes':
    case 'fixed':
      return { type: 'BYTES' };
    case 'string':
    case 'enum':
      return { type: 'STRING' };
    default:
      throw ioInvalid(`Error while reading data, error message: unsupported Avro type ${base}`);
  }
}

function fieldOf(name: string, schema: AvroSchema, logical: boolean, named: Named, inUnion = false): RestField {
  const s = resolve(schema, named);
  remember(s, named);
  if (Array.isArray(s)) {
    const branches = s.filter((b) => typeName(resolve(b, named)) !== 'null');
    if (branches.length !== 1 || inUnion) throw ioInvalid(`Error while reading data, error message: unsupported Avro union for field ${name}: only a union of null and one type is supported`);
    const f = fieldOf(name, branches[0]!, logical, named, true);
    return f.mode === 'REPEATED' ? f : { ...f, mode: 'NULLABLE' };
  }
  const t = typeName(s);
  if (t === 'array' && isObj(s)) {
    const item = fieldOf(name, s['items'] as AvroSchema, logical, named);
    return { ...item, mode: 'REPEATED' };
  }
  if (t === 'map' && isObj(s)) {
    const value = fieldOf('value', s['values'] as AvroSchema, logical, named);
    return { name, type: 'RECORD', mode: 'REPEATED', fields: [{ name: 'key', type: 'STRING', mode: 'REQUIRED' }, value] };
  }
  if (t === 'record' && isObj(s)) {
    const fields = (s['fields'] as { name: string; type: AvroSchema }[]).map((f) => fieldOf(f.name, f.type, logical, named));
    return { name, type: 'RECORD', mode: 'REQUIRED', fields };
  }
  return { name, ...scalarType(s, logical), mode: 'REQUIRED' };
}

/** Two's complement big-endian bytes -> the decimal text with `scale` fraction digits. */
function decimalText(buf: Uint8Array, scale: number): string {
  let n = 0n;
  for (const b of buf) n = (n << 8n) | BigInt(b);
  if (buf.length && buf[0]! & 0x80) n -= 1n << BigInt(buf.length * 8);
  const neg = n < 0n;
  const digits = (neg ? -n : n).toString().padStart(scale + 1, '0');
  const int = digits.slice(0, digits.length - scale);
  const frac = scale ? digits.slice(digits.length - scale).replace(/0+$/, '') : '';
  return `${neg ? '-' : ''}${int}${frac ? '.' + frac : ''}`;
}

const big = (v: unknown): bigint => (typeof v === 'bigint' ? v : BigInt(Math.trunc(Number(v))));

/** A decoded Avro value -> its insertAll JSON form for the mapped field. */
function jsonValue(schema: AvroSchema, v: unknown, logical: boolean, named: Named): unknown {
  if (v === null || v === undefined) return null;
  const s = resolve(schema, named);
  if (Array.isArray(s)) {
    const branch = s.find((b) => typeName(resolve(b, named)) !== 'null')!;
    return jsonValue(branch, v, logical, named);
  }
  const t = typeName(s);
  const lt = logicalOf(s);
  switch (t) {
    case 'array':
      return (v as unknown[]).map((x) => jsonValue((s as Json)['items'] as AvroSchema, x, logical, named));
    case 'map':
      return Object.entries(v as Json).map(([key, x]) => ({ key, value: jsonValue((s as Json)['values'] as AvroSchema, x, logical, named) }));
    case 'record': {
      const o: Json = {};
      for (const f of (s as Json)['fields'] as { name: string; type: AvroSchema }[]) o[f.name] = jsonValue(f.type, (v as Json)[f.name], logical, named);
      return o;
    }
    case 'bytes':
    case 'fixed':
      if (lt === 'decimal') return decimalText(v as Uint8Array, Number((s as Json)['scale'] ?? 0));
      return Buffer.from(v as Uint8Array).toString('base64');
    case 'int':
    case 'long': {
      if (logical && lt) {
        if (lt === 'date') return formatDate(Number(v));
        if (lt === 'time-millis') return formatTime(Number(v) * 1000);
        if (lt === 'time-micros') return formatTime(Number(v));
        if (lt === 'timestamp-millis') return formatTimestampRfc3339(big(v) * 1000n);
        if (lt === 'timestamp-micros') return formatTimestampRfc3339(big(v));
        if (lt === 'local-timestamp-millis') return formatDatetime(big(v) * 1000n);
        if (lt === 'local-timestamp-micros') return formatDatetime(big(v));
      }
      return String(v);
    }
    case 'float':
    case 'double':
      return Number.isFinite(v as number) ? v : String(v);
    default:
      return v;
  }
}

/**
 * A container file's framing, checked before avsc reads it: avsc trusts the
 * counts it finds, so a metadata map claiming 2^31 entries in a few hundred
 * bytes kept it (and the process reading it) busy for minutes, and a block of
 * billions of zero-byte records would fill the memory. Throws the service's
 * refusal for a file that cannot be what it claims.
 */
export function checkAvroContainer(data: Uint8Array, uri: string): void {
  let pos = 4;
  const bad = (what: string): never => {
    throw ioInvalid(`Error while reading data, error message: not a readable Avro file (${what}) File: ${uri}`);
  };
  const long = (): number => {
    let n = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (pos >= data.length) bad('truncated');
      const b = data[pos++]!;
      n += (b & 0x7f) * mul;
      if (b < 0x80) return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
      mul *= 128;
    }
    return bad('bad varint');
  };
  const left = (): number => data.length - pos;
  if (data.length < 4 || data[0] !== 0x4f || data[1] !== 0x62 || data[2] !== 0x6a || data[3] !== 1) return; // avsc names a wrong magic
  // Header metadata: blocks of (key, value) byte strings, each at least two bytes.
  let schemaText: string | undefined;
  for (let count = long(); count !== 0; count = long()) {
    if (count < 0) {
      count = -count;
      long();
    }
    if (count > left() / 2) bad('metadata count past the end of the file');
    for (let i = 0; i < count; i++) {
      const k = long();
      if (k < 0 || k > left()) bad('metadata key past the end of the file');
      const key = Buffer.from(data.buffer, data.byteOffset + pos, k).toString('latin1');
      pos += k;
      const v = long();
      if (v < 0 || v > left()) bad('metadata value past the end of the file');
      if (key === 'avro.schema') schemaText = Buffer.from(data.buffer, data.byteOffset + pos, v).toString('utf8');
      pos += v;
    }
  }
  pos += 16;
  let empty = false;
  try {
    empty = schemaText !== undefined && canBeEmpty(JSON.parse(schemaText) as AvroSchema, new Map(), 0);
  } catch {
    return; // avsc reports the schema
  }
  // Data blocks: a record of nulls takes no bytes, so only a count bounds them.
  while (empty && pos < data.length) {
    const count = long();
    const size = long();
    if (count > MAX_EMPTY_RECORDS || size < 0 || size > left()) bad('a data block past the end of the file');
    pos += size + 16;
  }
}

/** Records a block may hold when a record takes no bytes. */
const MAX_EMPTY_RECORDS = 1_000_000;

/** Whether a value of this schema can be encoded in no bytes (null, and records of such fields). */
function canBeEmpty(s: AvroSchema, named: Named, depth: number): boolean {
  if (depth > 100) return false;
  if (typeof s === 'string') return s === 'null' || (named.has(s) && canBeEmpty(named.get(s)!, named, depth + 1));
  if (Array.isArray(s)) return false; // a union writes its branch index
  remember(s, named);
  if (s.type === 'record') return Array.isArray(s['fields']) && (s['fields'] as { type: AvroSchema }[]).every((f) => canBeEmpty(f.type, named, depth + 1));
  if (s.type === 'fixed') return s['size'] === 0;
  return canBeEmpty(s.type, named, depth + 1);
}

/** Avro container files -> rows; the file's writer schema gives the columns unless `schema` is set. */
/** avsc's codec callback form of avroSnappyBlock. */
function snappyCodec(buf: Buffer, cb: (err: Error | null, data?: Buffer) => void): void {
  try {
    cb(null, avroSnappyBlock(buf));
  } catch (e) {
    cb(e as Error);
  }
}

export async function avroRows(files: readonly SourceFile[], schema: RestField[] | undefined, logical: boolean): Promise<Parsed> {
  const avro = await loadAvsc();
  const long = bigintLong(avro);
  const rows: Json[] = [];
  let fields = schema;
  for (const file of files) {
    checkAvroContainer(file.data, file.uri);
    let writer: AvroSchema | undefined;
    const records: unknown[] = [];
    const unreadable = (e: unknown): IoError => ioInvalid(`Error while reading data, error message: not a readable Avro file (${(e as Error)?.message ?? String(e)}) File: ${file.uri}`);
    await new Promise<void>((resolveP, reject) => {
      const dec = new avro.streams.BlockDecoder({
        // avsc knows null and deflate; snappy blocks (what many writers use) are decoded here.
        codecs: { ...avro.streams.BlockDecoder.defaultCodecs(), snappy: snappyCodec },
        parseHook: (s: Avsc.Schema) => {
          writer = s as AvroSchema;
          return avro.Type.forSchema(s, { registry: { long } });
        },
      });
      dec.on('data', (r: unknown) => records.push(r));
      dec.on('end', () => resolveP());
      dec.on('error', (e: Error) => reject(unreadable(e)));
      // A reader may also throw where avsc does not catch (the header): the same refusal.
      dec.end(file.data);
    }).catch((e: unknown) => {
      throw e instanceof IoError ? e : unreadable(e);
    });
    if (!writer) throw ioInvalid(`Error while reading data, error message: not a readable Avro file File: ${file.uri}`);
    const named: Named = new Map();
    const root = resolve(writer, named);
    if (typeName(root) !== 'record') throw ioInvalid(`Error while reading data, error message: the Avro schema of ${file.uri} is not a record`);
    const top = (root as Json)['fields'] as { name: string; type: AvroSchema }[];
    const own = top.map((f) => fieldOf(f.name, f.type, logical, named));
    fields ??= own;
    for (const r of records) {
      const o: Json = {};
      for (const f of top) o[f.name] = jsonValue(f.type, (r as Json)[f.name], logical, named);
      rows.push(o);
    }
  }
  if (!fields) throw ioInvalid('No schema specified on job or table.');
  return { fields, rows };
}

// ---------- writing ----------

/** The Avro schema the real service exports a column as. */
function avroTypeOf(f: RestField, logical: boolean, path: string): AvroSchema {
  const t = f.type.toUpperCase();
  let s: AvroSchema;
  switch (t) {
    case 'INTEGER':
    case 'INT64':
      s = 'long';
      break;
    case 'FLOAT':
    case 'FLOAT64':
      s = 'double';
      break;
    case 'BOOLEAN':
    case 'BOOL':
      s = 'boolean';
      break;
    case 'BYTES':
      s = 'bytes';
      break;
    case 'NUMERIC':
      s = { type: 'bytes', logicalType: 'decimal', precision: 38, scale: 9 };
      break;
    case 'BIGNUMERIC':
      s = { type: 'bytes', logicalType: 'decimal', precision: 77, scale: 38 };
      break;
    case 'TIMESTAMP':
      s = { type: 'long', logicalType: 'timestamp-micros' };
      break;
    case 'DATE':
      s = logical ? { type: 'int', logicalType: 'date' } : 'string';
      break;
    case 'TIME':
      s = logical ? { type: 'long', logicalType: 'time-micros' } : 'string';
      break;
    case 'DATETIME':
      s = logical ? { type: 'string', logicalType: 'datetime' } : 'string';
      break;
    case 'GEOGRAPHY':
    case 'JSON':
      s = { type: 'string', sqlType: t };
      break;
    case 'RECORD':
    case 'STRUCT':
      s = { type: 'record', name: path, fields: (f.fields ?? []).map((sub) => ({ name: sub.name, type: avroTypeOf(sub, logical, `${path}_${sub.name}`) })) };
      break;
    default:
      s = 'string';
  }
  const mode = (f.mode ?? 'NULLABLE').toUpperCase();
  if (mode === 'REPEATED') return { type: 'array', items: s };
  return mode === 'REQUIRED' ? s : ['null', s];
}

function decimalBytes(text: string, scale: number): Buffer {
  const [i, fr = ''] = text.replace(/^\+/, '').split('.');
  let n = BigInt((i || '0') + (fr + '0'.repeat(scale)).slice(0, scale));
  const bytes: number[] = [];
  const neg = n < 0n;
  if (neg) n = -n;
  // Minimal two's complement big-endian encoding.
  let len = 1;
  while (n >= 1n << BigInt(len * 8 - 1)) len++;
  let u = neg ? (1n << BigInt(len * 8)) - n : n;
  for (let k = 0; k < len; k++) {
    bytes.unshift(Number(u & 0xffn));
    u >>= 8n;
  }
  return Buffer.from(bytes);
}

/** An exported row value (REST JSON form: RFC 3339 timestamps, INT64 as text) -> the Avro value of its column. */
function avroValue(f: RestField, v: unknown, logical: boolean, repeatedDone = false): unknown {
  if (v === null || v === undefined) return (f.mode ?? '').toUpperCase() === 'REPEATED' && !repeatedDone ? [] : null;
  if ((f.mode ?? '').toUpperCase() === 'REPEATED' && !repeatedDone) return (v as unknown[]).map((x) => avroValue(f, x, logical, true));
  const t = f.type.toUpperCase();
  const s = String(v);
  switch (t) {
    case 'INTEGER':
    case 'INT64':
      return BigInt(s);
    case 'FLOAT':
    case 'FLOAT64':
      return typeof v === 'number' ? v : Number(s);
    case 'BOOLEAN':
    case 'BOOL':
      return v === true || s === 'true';
    case 'BYTES':
      return Buffer.from(s, 'base64');
    case 'NUMERIC':
      return decimalBytes(s, 9);
    case 'BIGNUMERIC':
      return decimalBytes(s, 38);
    // Logical longs go through avsc's own long type (its registry only replaces
    // bare 'long'): doubles, exact for timestamps up to year ~2255.
    case 'TIMESTAMP':
      // TIMESTAMP(12) cells carry twelve digits; timestamp-micros holds six.
      return Number(f.timestampPrecision === '12' ? picosTextToMicros(s) : parseTimestamp(s));
    case 'DATE':
      return logical ? parseDate(s) : s;
    case 'TIME':
      return logical ? parseTime(s) : s;
    case 'DATETIME':
      return logical ? formatDatetime(parseDatetime(s)) : s;
    case 'RECORD':
    case 'STRUCT': {
      const o: Json = {};
      for (const sub of f.fields ?? []) o[sub.name] = avroValue(sub, (v as Json)[sub.name], logical);
      return o;
    }
    default:
      return typeof v === 'object' ? JSON.stringify(v) : s;
  }
}

/** Rows (REST JSON values) as an Avro object container file; codec `null`, `deflate` (or `snappy`: not available here). */
export async function writeAvro(fields: readonly RestField[], rows: readonly Json[], codec: 'null' | 'deflate', logical: boolean): Promise<Buffer> {
  const avro = await loadAvsc();
  const schema = { type: 'record', name: 'Root', fields: fields.map((f) => ({ name: f.name, type: avroTypeOf(f, logical, f.name) })) };
  // Logical types are registered as pass-through classes so that avsc keeps
  // them (and decimal precision/scale) in the header schema it writes.
  class PassThrough extends avro.types.LogicalType {
    private readonly attrs: Json;
    constructor(schema: Avsc.Schema, opts?: unknown) {
      super(schema, opts);
      const s = schema as unknown as Json;
      this.attrs = s['precision'] !== undefined ? { precision: s['precision'], scale: s['scale'] } : {};
    }
    override _fromValue(v: unknown): unknown {
      return v;
    }
    override _toValue(v: unknown): unknown {
      return v;
    }
    /** avsc asks logical types for their own attributes when it writes the header schema. */
    protected override _export(attrs: Avsc.Schema): void {
      Object.assign(attrs as object, this.attrs);
    }
  }
  const logicalTypes = Object.fromEntries(['date', 'time-micros', 'timestamp-micros', 'decimal', 'datetime'].map((n) => [n, PassThrough]));
  const type = avro.Type.forSchema(schema as Avsc.Schema, { registry: { long: bigintLong(avro) }, logicalTypes });
  const chunks: Buffer[] = [];
  const enc = new avro.streams.BlockEncoder(type as unknown as Avsc.Schema, { codec });
  const done = new Promise<void>((resolveP, reject) => {
    enc.on('data', (c: Buffer) => chunks.push(c));
    enc.on('end', () => resolveP());
    enc.on('error', reject);
  });
  for (const r of rows) {
    const o: Json = {};
    for (const f of fields) o[f.name] = avroValue(f, r[f.name], logical);
    enc.write(o);
  }
  enc.end();
  await done;
  return Buffer.concat(chunks);
}

export function avroCodec(compression: string): 'null' | 'deflate' {
  if (compression === 'NONE' || compression === '') return 'null';
  if (compression === 'DEFLATE') return 'deflate';
  throw ioNotImplemented(`Avro compression ${compression} is not supported by the emulator (NONE and DEFLATE are)`);
}
