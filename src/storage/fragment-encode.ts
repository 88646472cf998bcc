// Writing fragment files (fragment-file.ts has the format and the reader):
// pages written from column vectors with no per-value boxing (PLAIN values are
// the typed arrays' bytes, definition levels are the validity bitmap as one
// bit-packed run, strings of few distinct values are dictionary-encoded), with
// min/max/null-count statistics per row group and column. The chunks written
// are handed back in Arrow layout too (write-through: a fresh file's first
// read costs no decode).
import type { Column } from '../types/schema.js';
import type { SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { Decimal, Geography, JsonValue } from '../types/values.js';
import { textOfWords } from '../types/decimal-words.js';
import { jsonValueText } from '../types/json-values.js';
import { getValue, layoutOf, sliceVector, type Batch, type Vector } from '../types/vector.js';
import { toStored } from './codec.js';
import { type ColumnChunk, type SharedDictionary, type Validity, validityOf } from './column-chunk.js';
import { parquetMapping } from './parquet.js';
import { BYTES_KEY, DATA_PAGE, DICTIONARY_PAGE, FORMAT, FORMAT_KEY, MAX_DICTIONARY, PLAIN, RLE, RLE_DICTIONARY, ROW_GROUP, decodePlain, loadLibs, scatterI32, writtenLeaf, type ColumnStats, type Thrift } from './fragment-file.js';
import { fixedBytes, valueBytes } from '../types/logical-bytes.js';
import { assemble, isNested, nestedLayout, shred, type LeafData, type LeafRead } from './nested-parquet.js';

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
