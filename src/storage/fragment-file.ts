// Fragment files: the parquet files that hold a table's rows. Written here
// page by page from column vectors (no per-value boxing: PLAIN values are the
// typed arrays' bytes, definition levels are the validity bitmap as one
// bit-packed run, strings of few distinct values are dictionary-encoded),
// with min/max/null-count statistics per row group and column. Read back one
// row group and one column at a time (only the byte range of that column
// chunk) into Arrow-layout chunks (column-chunk.ts). Row groups hold up to
// ROW_GROUP rows, files up to FILE_ROWS: a scan decodes and caches what it
// needs, and statistics let it skip row groups that cannot match.
//
// Files written before this format (hyparquet-writer's pages, no
// `warehouse.format` key) are read through hyparquet, a row group at a time.
import * as fsp from 'node:fs/promises';
import type { Column } from '../types/schema.js';
import type { SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { Decimal, Geography, JsonValue } from '../types/values.js';
import { textOfWords, wordsOfText, type DecimalWidth } from '../types/decimal-words.js';
import { jsonValueText, parseJsonText } from '../types/json-values.js';
import { getValue, layoutOf, sliceVector, type Batch, type Vector } from '../types/vector.js';
import { fromStored, toStored, type Stored } from './codec.js';
import { intervalChunkOf, rangeChunkOf } from './interval-range-chunks.js';
import { type ColumnChunk, type SharedDictionary, TextValues, type Validity, validityOf } from './column-chunk.js';
import { parquetMapping } from './parquet.js';
import { fixedBytes, valueBytes } from '../types/logical-bytes.js';
import { assemble, isNested, nestedLayout, shred, type LeafData, type LeafNode, type LeafRead } from './nested-parquet.js';

// A value's text is its code points: a leading U+FEFF is a character, not a byte-order mark to drop.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

type Thrift = Record<string, unknown>;
type Hyparquet = typeof import('hyparquet');
type ThriftRead = typeof import('hyparquet/src/thrift.js');
type RleRead = typeof import('hyparquet/src/encoding.js');
type ThriftWrite = typeof import('hyparquet-writer/src/thrift.js');
type MetaWrite = typeof import('hyparquet-writer/src/metadata.js');
type ByteWriterLib = typeof import('hyparquet-writer/src/bytewriter.js');

let thriftRead: ThriftRead | null = null;
let rleRead: RleRead | null = null;

// The parquet libraries load on first use (start-up and idle memory).
let libs: Promise<{ hp: Hyparquet; tr: ThriftRead; rle: RleRead; tw: ThriftWrite; mw: MetaWrite; bw: ByteWriterLib }> | null = null;
const loadLibs = () =>
  (libs ??= Promise.all([
    import('hyparquet'),
    import('hyparquet/src/thrift.js'),
    import('hyparquet/src/encoding.js'),
    import('hyparquet-writer/src/thrift.js'),
    import('hyparquet-writer/src/metadata.js'),
    import('hyparquet-writer/src/bytewriter.js'),
  ]).then(([hp, tr, rle, tw, mw, bw]) => {
    thriftRead = tr;
    rleRead = rle;
    return { hp, tr, rle, tw, mw, bw };
  }));

/** Rows per row group: the unit of decoding, caching and skipping. */
export const ROW_GROUP = 65_536;
/** Rows per file: a bulk write is split into files of at most this many rows. */
export const FILE_ROWS = 1_048_576;
/** A string column is dictionary-encoded when its row group has at most this many distinct values (and at most half as many as rows). */
const MAX_DICTIONARY = 65_536;

const FORMAT_KEY = 'warehouse.format';
const FORMAT = '2';
/** A column chunk's key-value metadata: the logical bytes (types/logical-bytes.ts) of its values, which job statistics bill. */
const BYTES_KEY = 'warehouse.logical_bytes';

/** Parquet's encodings and page types, by their thrift numbers. */
const PLAIN = 0;
const RLE = 3;
const RLE_DICTIONARY = 8;
const DATA_PAGE = 0;
const DICTIONARY_PAGE = 2;

/** Min/max of a row group's column in comparable form (numbers, bigints, strings), and its NULL count. */
export interface ColumnStats {
  readonly min?: number | bigint | string | boolean;
  readonly max?: number | bigint | string | boolean;
  readonly nulls: number;
}

// ---------------------------------------------------------------- writing

class Out {
  buf: Buffer = Buffer.allocUnsafe(1 << 16);
  len = 0;
  private view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const b = Buffer.allocUnsafe(size);
    this.buf.copy(b, 0, 0, this.len);
    this.buf = b;
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  u8(x: number): void {
    this.ensure(1);
    this.buf[this.len++] = x;
  }
  u32(x: number): void {
    this.ensure(4);
    this.view.setUint32(this.len, x, true);
    this.len += 4;
  }
  varint(x: number): void {
    while (x > 0x7f) {
      this.u8((x & 0x7f) | 0x80);
      x >>>= 7;
    }
    this.u8(x);
  }
  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }
  /** UTF-8 of `s` at the end; returns its byte length. */
  utf8(s: string): number {
    this.ensure(s.length * 3);
    const n = this.buf.write(s, this.len, 'utf8');
    this.len += n;
    return n;
  }
  /** Sets the u32 at `at`. */
  setU32(at: number, x: number): void {
    this.view.setUint32(at, x, true);
  }
  done(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
}

/** One column of one row group, gathered from the batches' vectors. */
interface Gathered {
  readonly n: number;
  readonly validity: Validity;
  /** Non-NULL values in row order: a typed array (fixed width) or strings/bytes. */
  readonly values: Float64Array | BigInt64Array | Int32Array | Uint8Array | (string | Uint8Array)[];
  readonly stats: ColumnStats;
  /** Logical bytes of the values, where they are not the fixed width or the strings' own bytes (JSON, GEOGRAPHY, ARRAY, ...). */
  readonly bytes?: number;
  /** A nested column's leaf: its repetition and definition levels (validity then unused). */
  readonly levels?: LeafData;
}

function gather(t: SqlType, vecs: readonly Vector[], n: number): Gathered {
  let validity: Validity = null;
  let nullCount = 0;
  if (vecs.some((v) => v.nulls !== null)) {
    const nulls = new Uint8Array(n);
    let k = 0;
    for (const v of vecs) {
      if (v.nulls) nulls.set(v.nulls, k);
      k += v.length;
    }
    for (let i = 0; i < n; i++) nullCount += nulls[i]!;
    validity = validityOf(nulls, n);
  }
  const present = n - nullCount;
  const layout = layoutOf(t);
  if (layout === 'f64' || layout === 'i64' || layout === 'i32' || layout === 'bool') {
    const fast = gatherFixed(t, vecs, present);
    if (fast) return { n, validity, values: fast.values, stats: layout === 'bool' ? { nulls: nullCount } : { min: fast.min, max: fast.max, nulls: nullCount } };
    const out =
      layout === 'i32' ? new Int32Array(present) : layout === 'bool' ? new Uint8Array(present) : vecs.some((v) => v.data instanceof BigInt64Array) ? new BigInt64Array(present) : new Float64Array(present);
    let j = 0;
    let min: number | bigint | undefined;
    let max: number | bigint | undefined;
    for (const v of vecs) {
      const d = v.data as ArrayLike<number | bigint>;
      for (let i = 0; i < v.length; i++) {
        if (v.nulls !== null && v.nulls[i] === 1) continue;
        const x = out instanceof BigInt64Array ? (typeof d[i] === 'bigint' ? (d[i] as bigint) : BigInt(d[i] as number)) : (d[i] as number);
        (out as Float64Array)[j++] = x as number;
        if (t.kind === 'FLOAT64' && Number.isNaN(x)) continue;
        if (min === undefined || x < min) min = x;
        if (max === undefined || x > max) max = x;
      }
    }
    const stats: ColumnStats = layout === 'bool' ? { nulls: nullCount } : { min, max, nulls: nullCount };
    return { n, validity, values: out, stats };
  }
  const out: (string | Uint8Array)[] = [];
  if (t.kind === 'STRING') {
    let min: string | undefined;
    let max: string | undefined;
    // Strings as they are (the common case: no conversion per value).
    for (const v of vecs) {
      const d = v.data as (string | null)[];
      for (let i = 0; i < v.length; i++) {
        if (v.nulls !== null && v.nulls[i] === 1) continue;
        const x = d[i]!;
        out.push(x);
        if (min === undefined || x < min) min = x;
        if (max === undefined || x > max) max = x;
      }
    }
    return { n, validity, values: out, stats: { min, max, nulls: nullCount } };
  }
  const m = parquetMapping(t);
  let bytes = 0;
  for (const v of vecs) {
    if (v.decimal && (t.kind === 'NUMERIC' || t.kind === 'BIGNUMERIC')) {
      // Words (a scan's, or a kernel's result) written as their text without a Decimal per value.
      const { words, width } = v.decimal;
      const each = fixedBytes(t)!;
      for (let i = 0; i < v.length; i++) {
        if (v.nulls !== null && v.nulls[i] === 1) continue;
        bytes += each;
        out.push(textOfWords(words, i, width));
      }
      continue;
    }
    for (let i = 0; i < v.length; i++) {
      const x = getValue(v, i);
      if (x === null || (t.kind === 'ARRAY' && (x as Value[]).length === 0 && v.nulls?.[i] === 1)) continue;
      if (t.kind === 'BYTES') {
        bytes += 2 + (x as Uint8Array).length;
        out.push(x as Uint8Array);
        continue;
      }
      if (t.kind === 'JSON') {
        // JSON bills its text's bytes: measured on the text written.
        const text = jsonValueText(x as JsonValue);
        bytes += Buffer.byteLength(text, 'utf8');
        out.push(text);
        continue;
      }
      bytes += valueBytes(t, x);
      out.push(m.form === 'stored-json' ? JSON.stringify(toStored(t, x)) : t.kind === 'GEOGRAPHY' ? (x as Geography).wkt : (x as Decimal).toFixed());
    }
  }
  return { n, validity, values: out, stats: { nulls: nullCount }, bytes };
}

/**
 * The common case without a per-value branch: every vector of one typed
 * array kind (the row group's values copied, NULL rows left out), with
 * min/max; null when the vectors mix kinds (a BigInt64Array among doubles).
 */
function gatherFixed(t: SqlType, vecs: readonly Vector[], present: number): { values: Float64Array | Int32Array | Uint8Array | BigInt64Array; min?: number | bigint; max?: number | bigint } | null {
  const first = vecs[0]?.data;
  if (!first || Array.isArray(first) || !vecs.every((v) => v.data.constructor === first.constructor)) return null;
  const Ctor = first.constructor as new (n: number) => Float64Array;
  const out = new Ctor(present);
  let j = 0;
  for (const v of vecs) {
    const d = v.data as Float64Array;
    if (v.nulls === null) {
      out.set(d.subarray(0, v.length), j);
      j += v.length;
    } else for (let i = 0; i < v.length; i++) if (v.nulls[i] !== 1) out[j++] = d[i]!;
  }
  if (out instanceof Uint8Array || present === 0) return { values: out };
  let min = out[0]!;
  let max = out[0]!;
  if (t.kind === 'FLOAT64') {
    // NaN is no bound (the service orders it first; statistics leave it out).
    let k = 0;
    while (k < present && Number.isNaN(out[k]!)) k++;
    if (k === present) return { values: out };
    min = max = out[k]!;
    for (let i = k + 1; i < present; i++) {
      const x = out[i]!;
      if (x < min) min = x;
      else if (x > max) max = x;
    }
  } else {
    for (let i = 1; i < present; i++) {
      const x = out[i]!;
      if (x < min) min = x;
      else if (x > max) max = x;
    }
  }
  return { values: out, min, max };
}

/** Definition levels of a page: one RLE run of 1s (no NULLs), or the validity bitmap as one bit-packed run; with the 4-byte length. */
function writeLevels(o: Out, validity: Validity, n: number): void {
  const at = o.len;
  o.u32(0);
  if (validity === null) {
    o.varint(n * 2);
    o.u8(1);
  } else {
    const groups = (n + 7) >> 3;
    o.varint(groups * 2 + 1);
    o.bytes(validity.subarray(0, groups));
  }
  o.setU32(at, o.len - at - 4);
}

/** Levels of a nested leaf (below 2^width of `max`), with the 4-byte length: one RLE run when all are equal, else one bit-packed run. */
function writeLevelRuns(o: Out, levels: Int32Array, max: number): void {
  const width = 32 - Math.clz32(max);
  const at = o.len;
  o.u32(0);
  const first = levels[0] ?? 0;
  let same = true;
  for (let i = 1; i < levels.length && same; i++) same = levels[i] === first;
  if (same) {
    o.varint(levels.length * 2);
    o.u8(first);
  } else writeBitPacked(o, levels, width);
  o.setU32(at, o.len - at - 4);
}

/** `values` (each below 2^width, width <= 24) as one bit-packed run of the RLE/bit-packing hybrid. */
function writeBitPacked(o: Out, values: Int32Array, width: number): void {
  const groups = (values.length + 7) >> 3;
  o.varint(groups * 2 + 1);
  const nbytes = groups * width;
  o.ensure(nbytes);
  const buf = o.buf;
  let at = o.len;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < values.length; i++) {
    acc |= values[i]! << bits;
    bits += width;
    while (bits >= 8) {
      buf[at++] = acc & 0xff;
      acc >>>= 8;
      bits -= 8;
    }
  }
  if (bits > 0) buf[at++] = acc & 0xff;
  // The run covers whole groups of 8 values: pad with zeros.
  buf.fill(0, at, o.len + nbytes);
  o.len += nbytes;
}

function plainFixed(o: Out, physical: string, values: Float64Array | BigInt64Array | Int32Array | Uint8Array): void {
  if (physical === 'BOOLEAN') {
    const nbytes = (values.length + 7) >> 3;
    o.ensure(nbytes);
    o.buf.fill(0, o.len, o.len + nbytes);
    for (let i = 0; i < values.length; i++) if (values[i]) o.buf[o.len + (i >> 3)]! |= 1 << (i & 7);
    o.len += nbytes;
    return;
  }
  if (physical === 'INT64' && values instanceof Float64Array) {
    // Exact integers within 2^53 as int64 little endian, without a BigInt per value.
    const out = new Int32Array(values.length * 2);
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      const hi = Math.floor(v / 4294967296);
      out[2 * i] = (v - hi * 4294967296) | 0;
      out[2 * i + 1] = hi;
    }
    o.bytes(new Uint8Array(out.buffer));
    return;
  }
  if (physical === 'INT32' && !(values instanceof Int32Array)) {
    o.bytes(new Uint8Array(Int32Array.from(values as Float64Array).buffer));
    return;
  }
  o.bytes(new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
}

/** Writes `values` length-prefixed; returns each one's byte length. */
function plainBinary(o: Out, values: readonly (string | Uint8Array)[]): Uint32Array {
  const lengths = new Uint32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    const at = o.len;
    o.u32(0);
    const n = typeof v === 'string' ? o.utf8(v) : (o.bytes(v), v.length);
    o.setU32(at, n);
    lengths[i] = n;
  }
  return lengths;
}

/** A page: its header's bytes, then its body (pieces, not copied). */
async function page(pieces: Uint8Array[], type: number, body: Uint8Array, header: Thrift): Promise<number> {
  const { tw, bw } = await loadLibs();
  const w = new bw.ByteWriter();
  tw.serializeTCompactProtocol(w, { field_1: type, field_2: body.length, field_3: body.length, ...header });
  const h = w.getBytes();
  pieces.push(h, body);
  return h.length + body.length;
}

/**
 * The chunks a file being written will hold, as a read of it would decode
 * them (write-through: fragment-writes.ts puts them in the chunk cache, so
 * the statement after a CTAS or a DML does not decode its rows cold).
 */
export interface WrittenChunks {
  /** The shared dictionary a read of column `name` (STRING) maps its codes into, as readPart passes it to readChunk. */
  shared(name: string): SharedDictionary | null;
  add(rowGroup: number, name: string, chunk: ColumnChunk): void;
}

/**
 * One column chunk's pages; `dictionaryLength`: the dictionary page's bytes
 * (0: none); `chunk` (with `shared`: write-through asked for) the chunk
 * decodeChunk would make of them, or undefined where it is not made here
 * (values kept as objects: NUMERIC, JSON, nested; a fixed-width column
 * whose vectors' layout the decoder would not give back as it is).
 */
async function columnChunk(
  t: SqlType,
  g: Gathered,
  shared?: () => SharedDictionary | null,
): Promise<{ pieces: Uint8Array[]; length: number; dictionaryLength: number; bytes: number; chunk?: ColumnChunk }> {
  const m = parquetMapping(t);
  const pieces: Uint8Array[] = [];
  const body = new Out();
  const lv = g.levels;
  if (lv) {
    if (lv.rep) writeLevelRuns(body, lv.rep, lv.maxRep);
    writeLevelRuns(body, lv.def, lv.maxDef);
  } else writeLevels(body, g.validity, g.n);
  // A data page counts its level entries (a nested leaf has more than rows).
  const entries = lv ? lv.count : g.n;
  const present = g.values.length;
  if (!Array.isArray(g.values)) {
    plainFixed(body, m.physical, g.values);
    const length = await page(pieces, DATA_PAGE, body.done(), { field_5: { field_1: entries, field_2: PLAIN, field_3: RLE, field_4: RLE } });
    const chunk = shared && !lv ? (writtenFixed(m.physical, g) ?? undefined) : undefined;
    return { pieces, length, dictionaryLength: 0, bytes: present * fixedBytes(t)!, chunk };
  }
  const strings = g.values;
  if (t.kind === 'STRING' && present > 0) {
    // Dictionary-encode when the distinct values are few.
    const ids = new Map<string, number>();
    const idx = new Int32Array(present);
    let ok = true;
    for (let i = 0; i < present; i++) {
      const s = strings[i] as string;
      let id = ids.get(s);
      if (id === undefined) {
        if (ids.size >= MAX_DICTIONARY || ids.size > present / 2) {
          ok = false;
          break;
        }
        id = ids.size;
        ids.set(s, id);
      }
      idx[i] = id;
    }
    if (ok) {
      const dict = new Out();
      const dictionary = [...ids.keys()];
      const lengths = plainBinary(dict, dictionary);
      // Each value's 2 + UTF-8 bytes, by how often its dictionary entry occurs.
      const counts = new Float64Array(ids.size);
      for (let i = 0; i < present; i++) counts[idx[i]!]!++;
      let bytes = 0;
      for (let id = 0; id < counts.length; id++) bytes += counts[id]! * (2 + lengths[id]!);
      const dictionaryLength = await page(pieces, DICTIONARY_PAGE, dict.done(), { field_7: { field_1: ids.size, field_2: PLAIN } });
      const width = Math.max(1, 32 - Math.clz32(Math.max(1, ids.size - 1)));
      body.u8(width);
      writeBitPacked(body, idx, width);
      const length = dictionaryLength + (await page(pieces, DATA_PAGE, body.done(), { field_5: { field_1: entries, field_2: RLE_DICTIONARY, field_3: RLE, field_4: RLE } }));
      return { pieces, length, dictionaryLength, bytes, chunk: shared && !lv ? dictChunk(idx, dictionary, g.validity, g.n, shared()) : undefined };
    }
  }
  const valuesAt = body.len;
  const lengths = plainBinary(body, strings);
  const length = await page(pieces, DATA_PAGE, body.done(), { field_5: { field_1: entries, field_2: PLAIN, field_3: RLE, field_4: RLE } });
  // STRING and BYTES: offsets and bytes copied out of the page as a read does; NUMERIC / BIGNUMERIC, INTERVAL and RANGE: their text parsed into words and parts as a read does; the other types' values a read parses (decodePlain) are left to it.
  const chunk = shared && !lv && (t.kind === 'STRING' || t.kind === 'BYTES' || t.kind === 'NUMERIC' || t.kind === 'BIGNUMERIC' || t.kind === 'INTERVAL' || t.kind === 'RANGE') ? decodePlain(t, m.physical, body.done().subarray(valuesAt), g.validity, g.n, present) : undefined;
  let bytes = g.bytes;
  if (bytes === undefined) {
    // STRING and BYTES: 2 + their bytes each.
    bytes = 2 * present;
    for (let i = 0; i < lengths.length; i++) bytes += lengths[i]!;
  }
  return { pieces, length, dictionaryLength: 0, bytes, chunk };
}

/** 2^53: INT64 values in [-2^53, 2^53) decode as doubles (int64Doubles), others as BigInt64Array. */
const EXACT = 9007199254740992;

/**
 * The chunk decodePlain makes of a fixed-width column written from `g`
 * (write-through), sharing g's values (a fresh array the writer only
 * reads); null when g's layout is not the one a read gives back.
 */
function writtenFixed(physical: string, g: Gathered): ColumnChunk | null {
  const v = g.values;
  let values: Float64Array | BigInt64Array | Int32Array | Uint8Array;
  if (physical === 'DOUBLE' && v instanceof Float64Array) values = v;
  else if (physical === 'INT32' && v instanceof Int32Array) values = v;
  else if (physical === 'BOOLEAN' && v instanceof Uint8Array) {
    for (let i = 0; i < v.length; i++) if (v[i]! > 1) return null;
    values = v;
  } else if (physical === 'INT64' && v instanceof Float64Array) {
    for (let i = 0; i < v.length; i++) {
      const x = v[i]!;
      if (!Number.isInteger(x) || x < -EXACT || x >= EXACT) return null;
      // -0 is written as the integer 0 and read back as +0.
      if (x === 0) v[i] = 0;
    }
    values = v;
  } else if (physical === 'INT64' && v instanceof BigInt64Array) {
    const f = new Float64Array(v.length);
    values = f;
    for (let i = 0; i < v.length; i++) {
      const x = v[i]!;
      if (x < -EXACT_N || x >= EXACT_N) {
        values = v;
        break;
      }
      f[i] = Number(x);
    }
  } else return null;
  return { kind: 'fixed', length: g.n, values: spreadValid(values, g.validity, g.n), validity: g.validity };
}

const EXACT_N = 9007199254740992n;

/** `present` (the valid rows' values) spread to their rows, NULL rows 0, as decodePlain does. */
function spreadValid<A extends Float64Array | BigInt64Array | Int32Array | Uint8Array>(present: A, validity: Validity, rows: number): A {
  if (validity === null) return present;
  const out = new (present.constructor as new (n: number) => A)(rows);
  for (let i = 0, j = 0; i < rows; i++) if (validity[i >> 3]! & (1 << (i & 7))) out[i] = present[j++]!;
  return out;
}

/** The chunk decodeChunk makes of a dictionary-encoded column written with codes `idx` into `dictionary` (write-through). */
function dictChunk(idx: Int32Array, dictionary: string[], validity: Validity, rows: number, shared: SharedDictionary | null): ColumnChunk {
  const codes = shared ? shared.map(dictionary) : null;
  const own = new Int32Array(idx.length);
  if (codes) for (let i = 0; i < idx.length; i++) own[i] = codes[idx[i]!]!;
  else own.set(idx);
  const indices = scatterI32(own, validity, rows);
  return codes ? { kind: 'dict', length: rows, indices, dictionary: shared!.values, validity, shared: true } : { kind: 'dict', length: rows, indices, dictionary, validity };
}

/** Stats in the writer's terms: BYTE_ARRAY as strings, INT64 as bigints. */
function writerStats(t: SqlType, s: ColumnStats): Thrift {
  const m = parquetMapping(t);
  const conv = (v: ColumnStats['min']): unknown => (v === undefined ? undefined : m.physical === 'INT64' ? (typeof v === 'bigint' ? v : BigInt(v as number)) : v);
  return { null_count: BigInt(s.nulls), min_value: conv(s.min), max_value: conv(s.max) };
}

/**
 * The rows of `batches` (columns in `columns` order) as the bytes of one
 * fragment file, in pieces (for writev): ROW_GROUP rows per row group.
 */
export async function encodeFragmentFile(
  columns: readonly Column[],
  batches: readonly Batch[],
  meta: Record<string, string>,
  /** Only tests ask for it: ARRAY and STRUCT columns as storage-form JSON text, as files before nested columns hold them. */
  nestedAsJson = false,
  /** The chunks to cache as written (write-through; flat columns only). */
  writeThrough?: WrittenChunks,
): Promise<Uint8Array[]> {
  const { mw, bw } = await loadLibs();
  const total = batches.reduce((n, b) => n + b.length, 0);
  const pieces: Uint8Array[] = [new TextEncoder().encode('PAR1')];
  let offset = 4;
  const schema: Thrift[] = [{ name: 'root', num_children: columns.length }];
  const nested = (t: SqlType): boolean => !nestedAsJson && isNested(t);
  for (const c of columns) {
    if (nested(c.type)) {
      schema.push(...nestedLayout(c.name, c.type).schema);
      continue;
    }
    const m = parquetMapping(c.type);
    schema.push({ name: c.name, type: m.physical, repetition_type: 'OPTIONAL', ...(m.converted ? { converted_type: m.converted } : {}) });
  }
  const rowGroups: Thrift[] = [];
  let bi = 0;
  let bo = 0;
  for (let start = 0; start < total; start += ROW_GROUP) {
    const n = Math.min(ROW_GROUP, total - start);
    // The slices of the batches that make this row group, per column.
    const parts: Batch[] = [];
    for (let need = n; need > 0; ) {
      const b = batches[bi]!;
      const take = Math.min(need, b.length - bo);
      parts.push(take === b.length && bo === 0 ? b : { length: take, columns: b.columns.map((v) => sliceOf(v, bo, bo + take)) });
      need -= take;
      bo += take;
      if (bo === b.length) {
        bi++;
        bo = 0;
      }
    }
    const chunks: Thrift[] = [];
    let groupBytes = 0;
    for (let ci = 0; ci < columns.length; ci++) {
      const t = columns[ci]!.type;
      if (nested(t)) {
        const written = await nestedChunks(columns[ci]!, parts.map((p) => p.columns[ci]!), offset, writeThrough ? (chunk) => writeThrough.add(rowGroups.length, columns[ci]!.name, chunk) : undefined);
        chunks.push(...written.chunks);
        pieces.push(...written.pieces);
        offset += written.length;
        groupBytes += written.length;
        continue;
      }
      const g = gather(t, parts.map((p) => p.columns[ci]!), n);
      const name = columns[ci]!.name;
      const { pieces: chunkPieces, length, dictionaryLength, bytes, chunk } = await columnChunk(t, g, writeThrough ? () => writeThrough.shared(name) : undefined);
      if (chunk) writeThrough!.add(rowGroups.length, name, chunk);
      const dictionary = dictionaryLength > 0;
      const m = parquetMapping(t);
      chunks.push({
        file_offset: BigInt(offset),
        meta_data: {
          type: m.physical,
          encodings: dictionary ? ['PLAIN', 'RLE', 'RLE_DICTIONARY'] : ['PLAIN', 'RLE'],
          path_in_schema: [columns[ci]!.name],
          codec: 'UNCOMPRESSED',
          num_values: BigInt(n),
          total_uncompressed_size: BigInt(length),
          total_compressed_size: BigInt(length),
          data_page_offset: BigInt(offset + dictionaryLength),
          ...(dictionary ? { dictionary_page_offset: BigInt(offset) } : {}),
          statistics: writerStats(t, g.stats),
          key_value_metadata: [{ key: BYTES_KEY, value: String(bytes) }],
        },
      });
      pieces.push(...chunkPieces);
      offset += length;
      groupBytes += length;
    }
    rowGroups.push({ columns: chunks, total_byte_size: BigInt(groupBytes), num_rows: BigInt(n) });
    // A turn for the loop between row groups: a file of 1M rows takes hundreds of ms to encode, and metadata calls wait behind it.
    if (start + ROW_GROUP < total) await new Promise((r) => setImmediate(r));
  }
  const footer = new bw.ByteWriter();
  const kv = [...Object.entries(meta), [FORMAT_KEY, FORMAT]].map(([key, value]) => ({ key, value }));
  mw.writeMetadata(footer, { version: 2, schema, num_rows: BigInt(total), row_groups: rowGroups, key_value_metadata: kv, created_by: 'warehouse-emulator' } as never);
  pieces.push(footer.getBytes(), new TextEncoder().encode('PAR1'));
  return pieces;
}

/**
 * A nested column's leaves for one row group (written at `offset`): their
 * column chunks' metadata and pages. `written` (write-through): the chunk a
 * read would assemble, from the levels as shredded (the pages' runs encode
 * them as they are) and each leaf's values decoded from its page by the
 * read's own decoder.
 */
async function nestedChunks(
  col: Column,
  vecs: readonly Vector[],
  offset: number,
  written?: (chunk: ColumnChunk) => void,
): Promise<{ chunks: Thrift[]; pieces: Uint8Array[]; length: number }> {
  const t = col.type;
  const layout = nestedLayout(col.name, t);
  const rows: Value[] = [];
  let bytes = 0;
  for (const v of vecs) {
    for (let i = 0; i < v.length; i++) {
      const x = getValue(v, i);
      bytes += valueBytes(t, x);
      rows.push(x);
    }
  }
  const chunks: Thrift[] = [];
  const pieces: Uint8Array[] = [];
  const start = offset;
  const leaves = shred(layout, rows);
  const reads: LeafRead[] = [];
  for (let li = 0; li < leaves.length; li++) {
    const leaf = layout.leaves[li]!;
    const d = leaves[li]!;
    const stats: ColumnStats = { min: d.min, max: d.max, nulls: d.nulls };
    const g: Gathered = { n: d.count, validity: null, values: d.values, stats, levels: d };
    const { pieces: chunkPieces, length, dictionaryLength } = await columnChunk(leaf.type, g);
    const dictionary = dictionaryLength > 0;
    chunks.push({
      file_offset: BigInt(offset),
      meta_data: {
        type: parquetMapping(leaf.type).physical,
        encodings: dictionary ? ['PLAIN', 'RLE', 'RLE_DICTIONARY'] : ['PLAIN', 'RLE'],
        path_in_schema: leaf.path,
        codec: 'UNCOMPRESSED',
        num_values: BigInt(d.count),
        total_uncompressed_size: BigInt(length),
        total_compressed_size: BigInt(length),
        data_page_offset: BigInt(offset + dictionaryLength),
        ...(dictionary ? { dictionary_page_offset: BigInt(offset) } : {}),
        statistics: writerStats(leaf.type, stats),
        // The whole column's logical bytes, on its first leaf (a reader sums its leaves').
        key_value_metadata: [{ key: BYTES_KEY, value: String(li === 0 ? bytes : 0) }],
      },
    });
    pieces.push(...chunkPieces);
    offset += length;
    if (written) reads.push(writtenLeaf(leaf, Buffer.concat(chunkPieces), d));
  }
  if (written) written(assemble(layout, reads));
  return { chunks, pieces, length: offset - start };
}

function sliceOf(v: Vector, s: number, e: number): Vector {
  if (v.decimal) return sliceVector(v, s, e);
  const d = v.data;
  return { type: v.type, length: e - s, data: Array.isArray(d) ? d.slice(s, e) : d.subarray(s, e), nulls: v.nulls ? v.nulls.subarray(s, e) : null };
}

// ---------------------------------------------------------------- reading

function readPageHeaderSync(bytes: Uint8Array, at: number): { header: Thrift; at: number } {
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: at };
  const header = thriftRead!.deserializeTCompactProtocol(reader) as Thrift;
  return { header, at: reader.offset };
}

interface ColumnMeta {
  readonly offset: number;
  readonly length: number;
  readonly stats: ColumnStats | undefined;
  /** Logical bytes of the chunk's values (absent in files written before they were kept). */
  readonly bytes: number | undefined;
  /** A nested column: its leaves' column chunks (in schema order, one byte range after another from `offset`). */
  readonly leaves?: readonly { readonly offset: number; readonly length: number }[];
}

export interface RowGroupMeta {
  readonly rows: number;
  /** By column name. */
  readonly columns: ReadonlyMap<string, ColumnMeta>;
}

/** A fragment file's footer: row groups, their columns' byte ranges and statistics, the key-value metadata. */
export class FragmentFile {
  private constructor(
    readonly path: string,
    readonly rows: number,
    readonly rowGroups: readonly RowGroupMeta[],
    readonly meta: Readonly<Record<string, string>>,
    /** The file's columns (name -> physical layout); a table column missing here reads as NULL. */
    readonly columnNames: ReadonlySet<string>,
  ) {
    this.rowStarts = new Float64Array(rowGroups.length);
    let at = 0;
    for (let rg = 0; rg < rowGroups.length; rg++) {
      this.rowStarts[rg] = at;
      at += rowGroups[rg]!.rows;
    }
  }

  /** The position of each row group's first row in the file. */
  readonly rowStarts: Float64Array;

  get ownFormat(): boolean {
    return this.meta[FORMAT_KEY] === FORMAT;
  }

  static async open(path: string): Promise<FragmentFile> {
    const { hp } = await loadLibs();
    const h = await fsp.open(path, 'r');
    try {
      const size = (await h.stat()).size;
      const tail = Buffer.alloc(8);
      await h.read(tail, 0, 8, size - 8);
      const len = tail.readUInt32LE(0);
      const footer = Buffer.alloc(len + 8);
      await h.read(footer, 0, len + 8, size - 8 - len);
      const md = hp.parquetMetadata(footer, {
        parsers: {
          timestampFromMicroseconds: (x: bigint) => x,
          timestampFromMilliseconds: (x: bigint) => x * 1000n,
          timestampFromNanoseconds: (x: bigint) => x / 1000n,
          dateFromDays: (d: number) => d,
          stringFromBytes: (b: Uint8Array) => (b === undefined || b === null ? b : Buffer.from(b).toString('utf8')),
        } as never,
      });
      const meta: Record<string, string> = {};
      for (const kv of md.key_value_metadata ?? []) meta[kv.key] = kv.value ?? '';
      // Top-level columns: the root's children (a group's subtree is skipped).
      const names: string[] = [];
      const groups = new Set<string>();
      for (let i = 1; i < md.schema.length; ) {
        const el = md.schema[i]!;
        names.push(el.name);
        let skip = 1;
        if (el.num_children) {
          groups.add(el.name);
          for (let open = el.num_children; open > 0; open--, skip++) open += md.schema[i + skip]!.num_children ?? 0;
        }
        i += skip;
      }
      const rowGroups = md.row_groups.map((rg) => {
        const columns = new Map<string, ColumnMeta>();
        for (const c of rg.columns) {
          const cm = c.meta_data!;
          const start = Number(cm.dictionary_page_offset ?? cm.data_page_offset);
          const st = cm.statistics;
          const bytes = cm.key_value_metadata?.find((kv) => kv.key === BYTES_KEY)?.value;
          const name = cm.path_in_schema[0]!;
          if (groups.has(name)) {
            // A nested column's leaf: its range joins the column's.
            const prev = columns.get(name);
            const length = Number(cm.total_compressed_size);
            const leaves = [...(prev?.leaves ?? []), { offset: start, length }];
            const b = bytes === undefined ? prev?.bytes : (prev?.bytes ?? 0) + Number(bytes);
            columns.set(name, { bytes: b, offset: prev?.offset ?? start, length: start + length - (prev?.offset ?? start), stats: undefined, leaves });
            continue;
          }
          columns.set(name, {
            bytes: bytes === undefined ? undefined : Number(bytes),
            offset: start,
            length: Number(cm.total_compressed_size),
            stats: st ? { min: normStat(st.min_value ?? st.min), max: normStat(st.max_value ?? st.max), nulls: Number(st.null_count ?? 0) } : undefined,
          });
        }
        return { rows: Number(rg.num_rows), columns };
      });
      return new FragmentFile(path, Number(md.num_rows), rowGroups, meta, new Set(names));
    } finally {
      await h.close();
    }
  }

  /** One column of one row group as a chunk of table type `t` (null chunk when the file lacks the column). */
  async readChunk(rg: number, name: string, t: SqlType, shared: SharedDictionary | null = null): Promise<ColumnChunk> {
    const g = this.rowGroups[rg]!;
    const cm = g.columns.get(name);
    if (!cm || !this.columnNames.has(name)) return { kind: 'null', length: g.rows };
    if (!this.ownFormat) return this.readLegacy(rg, name, t);
    // A nested column read as another type, or of another shape (neither should pass sameType): NULL.
    const layout = cm.leaves && isNested(t) ? nestedLayout(name, t) : null;
    if (cm.leaves && layout?.leaves.length !== cm.leaves.length) return { kind: 'null', length: g.rows };
    const bytes = Buffer.alloc(cm.length);
    const h = await fsp.open(this.path, 'r');
    try {
      for (let off = 0; off < cm.length; ) {
        const { bytesRead } = await h.read(bytes, off, cm.length - off, cm.offset + off);
        if (bytesRead <= 0) throw new Error(`${this.path}: short read of a column chunk`);
        off += bytesRead;
      }
    } finally {
      await h.close();
    }
    if (layout && cm.leaves) return assemble(layout, cm.leaves.map((l, i) => decodeLeaf(layout.leaves[i]!, bytes.subarray(l.offset - cm.offset, l.offset - cm.offset + l.length))));
    return decodeChunk(t, bytes, g.rows, shared);
  }

  /** A row group's column from a file of the earlier format, through hyparquet. */
  private async readLegacy(rg: number, name: string, t: SqlType): Promise<ColumnChunk> {
    const { hp } = await loadLibs();
    const buf = await fsp.readFile(this.path);
    const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    let rowStart = 0;
    for (let i = 0; i < rg; i++) rowStart += this.rowGroups[i]!.rows;
    const rows = this.rowGroups[rg]!.rows;
    const raw = new Array<unknown>(rows);
    await hp.parquetRead({
      file: ab,
      columns: [name],
      rowStart,
      rowEnd: rowStart + rows,
      utf8: false,
      parsers: {
        timestampFromMicroseconds: (x: bigint) => x,
        timestampFromMilliseconds: (x: bigint) => x * 1000n,
        dateFromDays: (d: number) => d,
        stringFromBytes: (b: Uint8Array) => (b === undefined || b === null ? b : utf8.decode(b)),
      } as never,
      onChunk: (c) => {
        const d = c.columnData as ArrayLike<unknown>;
        for (let i = 0; i < d.length; i++) {
          const r = c.rowStart + i - rowStart;
          if (r >= 0 && r < rows) raw[r] = d[i];
        }
      },
    });
    return valuesChunk(t, raw);
  }
}

function normStat(v: unknown): ColumnStats['min'] {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'string' || typeof v === 'boolean') return v;
  return undefined;
}

/** Decodes a column chunk of this format (a dictionary page, then one data page); dictionary codes into `shared` where they fit. */
function decodeChunk(t: SqlType, bytes: Uint8Array, rows: number, shared: SharedDictionary | null): ColumnChunk {
  const m = parquetMapping(t);
  const { dictionary, dp, body } = chunkPages(bytes);
  const encoding = dp.field_2 as number;
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const levelsLen = view.getUint32(0, true);
  const validity = readValidity(body.subarray(4, 4 + levelsLen), rows);
  const values = body.subarray(4 + levelsLen);
  let present = rows;
  if (validity) {
    present = 0;
    for (let i = 0; i < rows; i++) if (validity[i >> 3]! & (1 << (i & 7))) present++;
  }
  if (encoding === RLE_DICTIONARY) {
    const width = values[0]!;
    const idx = new Int32Array(present);
    readHybrid(values.subarray(1), width, idx);
    const codes = shared && dictionary ? shared.map(dictionary) : null;
    if (codes) {
      for (let i = 0; i < present; i++) idx[i] = codes[idx[i]!]!;
      return { kind: 'dict', length: rows, indices: scatterI32(idx, validity, rows), dictionary: shared!.values, validity, shared: true };
    }
    return { kind: 'dict', length: rows, indices: scatterI32(idx, validity, rows), dictionary: dictionary ?? [], validity };
  }
  return decodePlain(t, m.physical, values, validity, rows, present);
}

/** decodeLeaf of a leaf just written: its levels as shredded (what the page's runs decode to), its values from the page. */
function writtenLeaf(leaf: LeafNode, bytes: Uint8Array, d: LeafData): LeafRead {
  const read = decodeLeaf(leaf, bytes, false);
  return { ...read, rep: d.rep === null ? null : d.rep.subarray(0, d.count), def: d.def.subarray(0, d.count) };
}

/**
 * `out.length` values of parquet's RLE / bit-packed hybrid encoding of
 * `width` bits from `bytes` (dictionary indices, a nested leaf's repetition
 * and definition levels). hyparquet's reader takes each bit-packed value
 * through a general loop with a DataView read per byte: the first read of a
 * nested column of dictionary strings spent more time there than in
 * assembling its chunks. Widths past 24 bits go to it.
 */
export function readHybrid(bytes: Uint8Array, width: number, out: Int32Array): void {
  if (width > 24) {
    rleRead!.readRleBitPackedHybrid({ view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 }, width, out, bytes.byteLength);
    return;
  }
  const n = out.length;
  const mask = (1 << width) - 1;
  const valueBytes = (width + 7) >> 3;
  let p = 0;
  let seen = 0;
  while (seen < n && p < bytes.length) {
    let header = 0;
    for (let shift = 1; ; shift *= 128) {
      const b = bytes[p++]!;
      header += (b & 0x7f) * shift;
      if (b < 0x80) break;
    }
    if (header % 2 === 1) {
      // Bit-packed: groups of 8 values, LSB first; a run may pad past the values wanted.
      const count = Math.floor(header / 2) * 8;
      let acc = 0;
      let bits = 0;
      for (let i = 0; i < count; i++) {
        while (bits < width) {
          acc |= (bytes[p++] ?? 0) << bits;
          bits += 8;
        }
        if (seen < n) out[seen++] = acc & mask;
        acc >>>= width;
        bits -= width;
      }
    } else {
      const count = Math.floor(header / 2);
      let value = 0;
      for (let i = 0; i < valueBytes; i++) value |= bytes[p++]! << (8 * i);
      const end = Math.min(n, seen + count);
      out.fill(value, seen, end);
      seen = end;
    }
  }
}

/** One leaf of a nested column: its levels (`withLevels` false: not decoded, the caller has them), and how its chunk is made once assemble knows its slots. */
function decodeLeaf(leaf: LeafNode, bytes: Uint8Array, withLevels = true): LeafRead {
  const { dictionary, dp, body } = chunkPages(bytes);
  const count = dp.field_1 as number;
  const encoding = dp.field_2 as number;
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let p = 0;
  const levels = (max: number): Int32Array => {
    const len = view.getUint32(p, true);
    const out = new Int32Array(withLevels ? count : 0);
    if (withLevels) readHybrid(body.subarray(p + 4, p + 4 + len), 32 - Math.clz32(max), out);
    p += 4 + len;
    return out;
  };
  const rep = leaf.slotRep > 0 ? levels(leaf.slotRep) : null;
  const def = levels(leaf.presentDef);
  const values = body.subarray(p);
  const t = leaf.type;
  return {
    rep,
    def,
    count,
    chunk: (validity, slots, present) => {
      if (encoding !== RLE_DICTIONARY) return decodePlain(t, parquetMapping(t).physical, values, validity, slots, present);
      const idx = new Int32Array(present);
      if (present > 0) readHybrid(values.subarray(1), values[0]!, idx);
      return { kind: 'dict', length: slots, indices: scatterI32(idx, validity, slots), dictionary: dictionary ?? [], validity };
    },
  };
}

/** A column chunk of this format: its dictionary page's strings (if it has one) and its one data page. */
function chunkPages(bytes: Uint8Array): { dictionary: string[] | null; dp: Thrift; body: Uint8Array } {
  let at = 0;
  let dictionary: string[] | null = null;
  for (;;) {
    const h = readPageHeaderSync(bytes, at);
    const body = bytes.subarray(h.at, h.at + (h.header.field_3 as number));
    at = h.at + body.length;
    if (h.header.field_1 !== DICTIONARY_PAGE) return { dictionary, dp: h.header.field_5 as Thrift, body };
    dictionary = dictionaryPage(body, (h.header.field_7 as Thrift).field_1 as number);
  }
}

/** A dictionary page's `n` strings (PLAIN BYTE_ARRAY). */
function dictionaryPage(body: Uint8Array, n: number): string[] {
  const dictionary = new Array<string>(n);
  const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  for (let i = 0, p = 0; i < n; i++) {
    const len = buf.readUInt32LE(p);
    dictionary[i] = buf.toString('utf8', p + 4, p + 4 + len);
    p += 4 + len;
  }
  return dictionary;
}

/** The validity bitmap from definition levels (null when every row is valid). */
function readValidity(levels: Uint8Array, rows: number): Validity {
  const reader = { view: new DataView(levels.buffer, levels.byteOffset, levels.byteLength), offset: 0 };
  // This format's levels: one RLE run of 1s, or one bit-packed run that is the validity bitmap.
  const header = thriftRead!.readVarInt(reader);
  if ((header & 1) === 0 && header >>> 1 >= rows && levels[reader.offset] === 1) return null;
  if ((header & 1) === 1 && (header >>> 1) * 8 >= rows) return levels.slice(reader.offset, reader.offset + ((rows + 7) >> 3));
  const out = new Int32Array(rows);
  rleRead!.readRleBitPackedHybrid({ view: reader.view, offset: 0 }, 1, out, levels.byteLength);
  const v = new Uint8Array((rows + 7) >> 3);
  let all = true;
  for (let i = 0; i < rows; i++) {
    if (out[i]) v[i >> 3]! |= 1 << (i & 7);
    else all = false;
  }
  return all ? null : v;
}

/** Values of the valid rows spread to their rows (NULL rows get 0). */
function scatterI32(present: Int32Array, validity: Validity, rows: number): Int32Array {
  if (validity === null) return present;
  const out = new Int32Array(rows);
  for (let i = 0, j = 0; i < rows; i++) if (validity[i >> 3]! & (1 << (i & 7))) out[i] = present[j++]!;
  return out;
}

function aligned(b: Uint8Array, bytes: number): ArrayBuffer {
  const ab = new ArrayBuffer(bytes);
  new Uint8Array(ab).set(b.subarray(0, bytes));
  return ab;
}

/**
 * INT64 values (32-bit halves, low first) as doubles into `f`; false at the
 * first beyond +-2^53 (f then incomplete). A function of its own: when this
 * loop sat in decodePlain, its OSR code (compiled before the code after the
 * loop ever ran) deoptimized at that code on every INT64 chunk, and was
 * compiled again (~40 times per worker thread on a 10M-row table's first
 * read, its compiles queued before the executor's).
 */
function int64Doubles(halves: Int32Array, f: Float64Array, n: number): boolean {
  for (let i = 0; i < n; i++) {
    const hi = halves[2 * i + 1]!;
    if (hi > 2097151 || hi < -2097152) return false;
    f[i] = hi * 4294967296 + (halves[2 * i]! >>> 0);
  }
  return true;
}

function decodePlain(t: SqlType, physical: string, b: Uint8Array, validity: Validity, rows: number, present: number): ColumnChunk {
  const spread = <A extends Float64Array | BigInt64Array | Int32Array | Uint8Array>(src: A, make: (n: number) => A): A => {
    if (validity === null) return src;
    const out = make(rows);
    for (let i = 0, j = 0; i < rows; i++) if (validity[i >> 3]! & (1 << (i & 7))) out[i] = src[j++]!;
    return out;
  };
  switch (physical) {
    case 'DOUBLE':
      return { kind: 'fixed', length: rows, values: spread(new Float64Array(aligned(b, present * 8)), (n) => new Float64Array(n)), validity };
    case 'INT32':
      return { kind: 'fixed', length: rows, values: spread(new Int32Array(aligned(b, present * 4)), (n) => new Int32Array(n)), validity };
    case 'BOOLEAN': {
      const v = new Uint8Array(present);
      for (let i = 0; i < present; i++) v[i] = (b[i >> 3]! >> (i & 7)) & 1;
      return { kind: 'fixed', length: rows, values: spread(v, (n) => new Uint8Array(n)), validity };
    }
    case 'INT64': {
      const halves = new Int32Array(aligned(b, present * 8));
      // Exact within 2^53: doubles (the executor's fast INT64 layout); else BigInt64Array.
      const f = new Float64Array(present);
      const values = int64Doubles(halves, f, present) ? spread(f, (n) => new Float64Array(n)) : spread(new BigInt64Array(halves.buffer), (n) => new BigInt64Array(n));
      return { kind: 'fixed', length: rows, values, validity };
    }
    default: {
      // BYTE_ARRAY: 4-byte lengths, then the bytes.
      const offsets = new Int32Array(rows + 1);
      const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
      let total = 0;
      for (let i = 0, p = 0; i < rows; i++) {
        if (validity === null || validity[i >> 3]! & (1 << (i & 7))) {
          const len = buf.readUInt32LE(p);
          p += 4 + len;
          total += len;
        }
        offsets[i + 1] = total;
      }
      // A Buffer: strings are sliced from it per batch (column-chunk.ts) without a view per value.
      const bytes = Buffer.alloc(total);
      let ascii = true;
      for (let i = 0, p = 0; i < rows; i++) {
        if (validity === null || validity[i >> 3]! & (1 << (i & 7))) {
          const len = buf.readUInt32LE(p);
          bytes.set(b.subarray(p + 4, p + 4 + len), offsets[i]!);
          p += 4 + len;
        }
      }
      for (let i = 0; i < total && ascii; i++) if (bytes[i]! > 0x7f) ascii = false;
      if (t.kind === 'STRING') return { kind: 'utf8', length: rows, offsets, bytes, validity, ascii };
      // JSON and GEOGRAPHY stay their stored text; values are made where kernels use them (column-chunk.ts TextValues).
      if (t.kind === 'JSON' || t.kind === 'GEOGRAPHY') return { kind: 'utf8', length: rows, offsets, bytes, validity, ascii, kept: new TextValues(t.kind) };
      if (t.kind === 'BYTES') return { kind: 'binary', length: rows, offsets, bytes, validity };
      if (t.kind === 'NUMERIC' || t.kind === 'BIGNUMERIC') {
        const words = decimalWordsOf(t.kind === 'NUMERIC' ? 4 : 8, bytes, offsets, validity, rows);
        if (words) return words;
      }
      const parts = t.kind === 'INTERVAL' ? intervalChunkOf(bytes, offsets, validity, rows) : t.kind === 'RANGE' ? rangeChunkOf(t.element, bytes, offsets, validity, rows) : null;
      if (parts) return parts;
      // The other types are stored as text: their values are made once, here.
      const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const values = new Array<Value>(rows);
      for (let i = 0; i < rows; i++) values[i] = validity === null || validity[i >> 3]! & (1 << (i & 7)) ? textValue(t, text.toString('utf8', offsets[i]!, offsets[i + 1]!)) : null;
      return { kind: 'values', length: rows, values };
    }
  }
}

/** NUMERIC / BIGNUMERIC text rows as a decimal chunk (null if a text is not one the words hold: the values are then kept). */
function decimalWordsOf(width: DecimalWidth, bytes: Uint8Array, offsets: Int32Array, validity: Validity, rows: number): ColumnChunk | null {
  const words = new Uint32Array(rows * width);
  for (let i = 0; i < rows; i++) {
    if (validity !== null && (validity[i >> 3]! & (1 << (i & 7))) === 0) continue;
    if (!wordsOfText(bytes, offsets[i]!, offsets[i + 1]!, width, words, i)) return null;
  }
  return { kind: 'decimal', length: rows, words, width, validity };
}

/** A value stored as text (NUMERIC, JSON, GEOGRAPHY, storage-form JSON of the others). */
function textValue(t: SqlType, s: string): Value {
  if (parquetMapping(t).form === 'stored-json') return fromStored(t, JSON.parse(s) as Stored);
  if (t.kind === 'JSON') return new JsonValue(parseJsonText(s));
  if (t.kind === 'GEOGRAPHY') return new Geography(null, s);
  if (t.kind === 'NUMERIC' || t.kind === 'BIGNUMERIC') return new Decimal(s);
  return s;
}

/** A chunk from hyparquet's raw values (files of the earlier format). */
function valuesChunk(t: SqlType, raw: ArrayLike<unknown>): ColumnChunk {
  const n = raw.length;
  const layout = layoutOf(t);
  let nulls: Uint8Array | null = null;
  const mark = (i: number): void => {
    (nulls ??= new Uint8Array(n))[i] = 1;
  };
  if (layout === 'f64' || layout === 'i64' || layout === 'i32' || layout === 'bool') {
    let data: Float64Array | BigInt64Array | Int32Array | Uint8Array = layout === 'i32' ? new Int32Array(n) : layout === 'bool' ? new Uint8Array(n) : new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const x = raw[i];
      if (x === null || x === undefined) mark(i);
      else if (typeof x === 'bigint') {
        if ((x > 9007199254740992n || x < -9007199254740992n) && !(data instanceof BigInt64Array)) data = BigInt64Array.from(data as Float64Array, (v) => BigInt(v));
        if (data instanceof BigInt64Array) data[i] = x;
        else data[i] = Number(x);
      } else if (typeof x === 'boolean') data[i] = x ? 1 : 0;
      else if (data instanceof BigInt64Array) data[i] = BigInt(x as number);
      else data[i] = x as number;
    }
    return { kind: 'fixed', length: n, values: data, validity: validityOf(nulls, n) };
  }
  const m = parquetMapping(t);
  const values = new Array<Value>(n);
  for (let i = 0; i < n; i++) {
    const x = raw[i];
    if (x === null || x === undefined) {
      values[i] = null;
      continue;
    }
    if (t.kind === 'BYTES') values[i] = typeof x === 'string' ? new TextEncoder().encode(x) : (x as Uint8Array);
    else {
      const s = typeof x === 'string' ? x : utf8.decode(x as Uint8Array);
      values[i] = m.form === 'native' ? s : textValue(t, s);
    }
  }
  return { kind: 'values', length: n, values };
}
