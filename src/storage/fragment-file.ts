// Fragment files: the parquet files that hold a table's rows (written by
// fragment-encode.ts). Read back one row group and one column at a time (only
// the byte range of that column chunk) into Arrow-layout chunks
// (column-chunk.ts). Row groups hold up to ROW_GROUP rows, files up to
// FILE_ROWS: a scan decodes and caches what it needs, and statistics let it
// skip row groups that cannot match.
//
// Files written before this format (hyparquet-writer's pages, no
// `warehouse.format` key) are read through hyparquet, a row group at a time.
import * as fsp from 'node:fs/promises';
import type { SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { Decimal, Geography, JsonValue } from '../types/values.js';
import { wordsOfText, type DecimalWidth } from '../types/decimal-words.js';
import { parseJsonText } from '../types/json-values.js';
import { layoutOf } from '../types/vector.js';
import { fromStored, type Stored } from './codec.js';
import { intervalChunkOf, rangeChunkOf } from './interval-range-chunks.js';
import { type ColumnChunk, type SharedDictionary, TextValues, type Validity, validityOf } from './column-chunk.js';
import { parquetMapping } from './parquet.js';
import { assemble, isNested, nestedLayout, type LeafData, type LeafNode, type LeafRead } from './nested-parquet.js';

// A value's text is its code points: a leading U+FEFF is a character, not a byte-order mark to drop.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

export type Thrift = Record<string, unknown>;
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
export const loadLibs = () =>
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
export const MAX_DICTIONARY = 65_536;

export const FORMAT_KEY = 'warehouse.format';
export const FORMAT = '2';
/** A column chunk's key-value metadata: the logical bytes (types/logical-bytes.ts) of its values, which job statistics bill. */
export const BYTES_KEY = 'warehouse.logical_bytes';

/** Parquet's encodings and page types, by their thrift numbers. */
export const PLAIN = 0;
export const RLE = 3;
export const RLE_DICTIONARY = 8;
export const DATA_PAGE = 0;
export const DICTIONARY_PAGE = 2;

/** Min/max of a row group's column in comparable form (numbers, bigints, strings), and its NULL count. */
export interface ColumnStats {
  readonly min?: number | bigint | string | boolean;
  readonly max?: number | bigint | string | boolean;
  readonly nulls: number;
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
export function writtenLeaf(leaf: LeafNode, bytes: Uint8Array, d: LeafData): LeafRead {
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
export function scatterI32(present: Int32Array, validity: Validity, rows: number): Int32Array {
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

export function decodePlain(t: SqlType, physical: string, b: Uint8Array, validity: Validity, rows: number, present: number): ColumnChunk {
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
