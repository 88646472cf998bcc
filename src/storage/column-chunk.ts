// A column of one row group as storage holds it in memory: the Arrow layout
// (validity bitmap, fixed-width value buffer, offsets + UTF-8 bytes,
// dictionary indices), decoded from a fragment's pages and cached under the
// memory budget (chunk-cache.ts). The executor gets batches as views of it
// (`chunkVector`): typed arrays are shared, not copied; strings are made per
// batch (dictionary strings once per chunk). ARRAY and STRUCT columns are
// lists (offsets + a child chunk) and structs (validity + child chunks) of
// these, their values boxed per batch. NUMERIC and BIGNUMERIC are Arrow's
// decimal128 / decimal256 words (decimal-words.ts), their Decimals made per
// batch where a kernel reads them. INTERVAL is Arrow's month-day-nano
// (months, days, microseconds) and RANGE a struct of two fixed-width sides,
// boxed per batch where a kernel reads them. JSON and GEOGRAPHY are their
// stored text (utf8), with the values kernels read kept beside it while the
// cache holds it (`TextValues`: JSON's parsed nodes, geographies). Nested columns of files written before
// keep their values (values.ts forms), made once when decoded.
import type { SqlType } from '../types/types.js';
import { Geography, JsonValue, type JsonNode, type Value } from '../types/values.js';
import { parseJsonText } from '../types/json-values.js';
import type { DecimalWidth } from '../types/decimal-words.js';
import { decimalVector, intervalVector, layoutOf, nestedVector, rangeVector, type Vector } from '../types/vector.js';

/** Bit i set: row i is valid (not NULL), as Arrow's validity bitmap and parquet's definition levels (bit-packed, LSB first). */
export type Validity = Uint8Array | null;

export type ColumnChunk =
  | { readonly kind: 'fixed'; readonly length: number; readonly values: Float64Array | BigInt64Array | Int32Array | Uint8Array; readonly validity: Validity }
  | {
      readonly kind: 'utf8';
      readonly length: number;
      readonly offsets: Int32Array;
      readonly bytes: Uint8Array;
      readonly validity: Validity;
      readonly ascii: boolean;
      /** JSON / GEOGRAPHY text: its values as kernels last used them (set at decode). */
      readonly kept?: TextValues;
    }
  | {
      readonly kind: 'dict';
      readonly length: number;
      readonly indices: Int32Array;
      readonly dictionary: readonly string[];
      readonly validity: Validity;
      /** `dictionary` is a SharedDictionary's (counted by the cache once, not per chunk). */
      readonly shared?: true;
    }
  | { readonly kind: 'binary'; readonly length: number; readonly offsets: Int32Array; readonly bytes: Uint8Array; readonly validity: Validity }
  /** NUMERIC (width 4) / BIGNUMERIC (width 8): row i's unscaled value in words[i * width, (i + 1) * width), little-endian two's complement; NULL rows' words zero. */
  | { readonly kind: 'decimal'; readonly length: number; readonly words: Uint32Array; readonly width: DecimalWidth; readonly validity: Validity }
  /** INTERVAL: row i is months[i] months, days[i] days, micros[i] microseconds; NULL rows' parts zero. */
  | { readonly kind: 'interval'; readonly length: number; readonly months: Int32Array; readonly days: Int32Array; readonly micros: BigInt64Array; readonly validity: Validity }
  /** RANGE<T>: `start` and `end` chunks of T as long as the range (a NULL row there: unbounded). */
  | { readonly kind: 'range'; readonly length: number; readonly validity: Validity; readonly start: ColumnChunk; readonly end: ColumnChunk }
  | { readonly kind: 'values'; readonly length: number; readonly values: readonly Value[] }
  /** An ARRAY column (parquet LIST): row i's elements are child rows [offsets[i], offsets[i + 1]). */
  | { readonly kind: 'list'; readonly length: number; readonly offsets: Int32Array; readonly validity: Validity; readonly child: ColumnChunk }
  /** A STRUCT column: one child chunk per field, each as long as the struct. */
  | { readonly kind: 'struct'; readonly length: number; readonly validity: Validity; readonly children: readonly ColumnChunk[] }
  | { readonly kind: 'null'; readonly length: number };

type Utf8Chunk = ColumnChunk & { kind: 'utf8' };

/**
 * Beside a JSON or GEOGRAPHY text chunk, kept while the cache holds the chunk
 * so that no later query parses or boxes the column again: JSON rows' parsed
 * nodes, from the first kernel read of their batch (a read that only writes
 * the stored text, e.g. Storage Read, keeps nothing; batches box their
 * StoredJson values anew, young garbage, which beat keeping a million value
 * objects in the old space: fewer bytes kept, less promotion), and GEOGRAPHY
 * rows' values from the first read (a function keeps the parsed shape on the
 * value). The cache sets `keep` while it holds the chunk (chunk-cache.ts: it
 * charges the estimated bytes as an entry of their own, evicted on its own or
 * with the chunk); a chunk the cache does not hold keeps nothing.
 */
export class TextValues {
  /** Row i's parsed node (JSON) or value (GEOGRAPHY); undefined: not read yet; null: none kept. */
  values: (JsonNode | Value | undefined)[] | null = null;
  /** While the cache holds the chunk: charges its values and allocates `values`; false when they do not fit. */
  keep: (() => boolean) | null = null;
  constructor(readonly type: 'JSON' | 'GEOGRAPHY') {}
}

/**
 * The heap bytes a text chunk's kept values may reach (the cache charges them
 * when the first batch is kept): JSON's parsed nodes about 4 bytes a
 * character and a slot a row (measured 88 bytes a row on 1M 5-field
 * objects of 55 characters, after a full GC; objects of short strings take more); a geography
 * its value, its text as a string (1 or 2 bytes a character) and its shape
 * (~100 bytes for a point).
 */
export function textValuesBytes(c: Utf8Chunk): number {
  const chars = c.offsets[c.length]! - c.offsets[0]!;
  return c.kept?.type === 'GEOGRAPHY' ? 64 + c.length * 200 + chars * (c.ascii ? 1 : 2) : 64 + c.length * 8 + chars * 4;
}

/** Bytes a chunk holds (the cache's accounting); value and string objects are estimated. */
export function chunkBytes(c: ColumnChunk): number {
  const v = 'validity' in c && c.validity ? c.validity.byteLength : 0;
  switch (c.kind) {
    case 'fixed':
      return c.values.byteLength + v + 64;
    case 'decimal':
      return c.words.byteLength + v + 64;
    case 'interval':
      return c.months.byteLength + c.days.byteLength + c.micros.byteLength + v + 64;
    case 'range':
      return chunkBytes(c.start) + chunkBytes(c.end) + v + 64;
    case 'utf8':
    case 'binary':
      return c.offsets.byteLength + c.bytes.byteLength + v + 64;
    case 'dict':
      return c.indices.byteLength + (c.shared ? 0 : stringsBytes(c.dictionary)) + v + 64;
    case 'values':
      return c.length * 48 + 64;
    case 'list':
      return c.offsets.byteLength + v + chunkBytes(c.child) + 64;
    case 'struct':
      return c.children.reduce((n, ch) => n + chunkBytes(ch), v + 64);
    case 'null':
      return 64;
  }
}

/** Of chunkBytes, what lives on V8's heap (value objects, dictionary strings); typed-array data lives outside it. */
export function chunkHeapBytes(c: ColumnChunk): number {
  switch (c.kind) {
    case 'values':
      return chunkBytes(c);
    case 'dict':
      return c.shared ? 0 : stringsBytes(c.dictionary);
    case 'list':
      return chunkHeapBytes(c.child);
    case 'struct':
      return c.children.reduce((n, ch) => n + chunkHeapBytes(ch), 0);
    default:
      return 0;
  }
}

/** Estimated heap bytes of dictionary strings. */
function stringsBytes(values: readonly string[]): number {
  let s = 0;
  for (const d of values) s += 24 + 2 * d.length;
  return s;
}

/**
 * The dictionary that one column's row groups share on one thread (the
 * chunk cache keeps one per table and column): each row group's dictionary
 * page is mapped into it, so every chunk's codes index the same array, and
 * calls over dictionary codes (`LOWER(s)`, `REGEXP_CONTAINS`; executor
 * expr.ts) run once per value per statement instead of once per value per
 * row group, and the strings are on the heap once instead of once per row
 * group (10,000 values: ~0.5 MB per row group). Append-only: a code never
 * changes meaning; at most MAX_SHARED values, then row groups keep their own.
 */
export class SharedDictionary {
  readonly values: string[] = [];
  private readonly ids = new Map<string, number>();
  /** Estimated heap bytes (the values and the lookup table). */
  bytes = 0;

  /** The codes of a dictionary page's values here (added when new), or null when they do not all fit. */
  map(page: readonly string[]): Int32Array | null {
    const out = new Int32Array(page.length);
    for (let i = 0; i < page.length; i++) {
      const v = page[i]!;
      let id = this.ids.get(v);
      if (id === undefined) {
        if (this.values.length >= MAX_SHARED) return null;
        id = this.values.length;
        this.values.push(v);
        this.ids.set(v, id);
        this.bytes += 48 + 2 * v.length;
      }
      out[i] = id;
    }
    return out;
  }
}

/** Values a shared dictionary takes at most (a row group's own dictionary has at most as many). */
const MAX_SHARED = 65_536;

export function isValid(validity: Validity, i: number): boolean {
  return validity === null || (validity[i >> 3]! & (1 << (i & 7))) !== 0;
}

/** The executor's NULL bytes (1 = NULL) of rows [s, e); null when none of them is NULL. */
function nullsOf(validity: Validity, s: number, e: number): Uint8Array | null {
  if (validity === null) return null;
  const n = e - s;
  let out: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    const r = s + i;
    if ((validity[r >> 3]! & (1 << (r & 7))) === 0) (out ??= new Uint8Array(n))[i] = 1;
  }
  return out;
}

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
const latin1 = (b: Uint8Array, s: number, e: number): string => asBuffer(b).toString('latin1', s, e);
const utf8 = (b: Uint8Array, s: number, e: number): string => asBuffer(b).toString('utf8', s, e);

/**
 * Rows [s, e) of a chunk as an executor vector of type `t`: fixed-width
 * values as views, strings made for these rows only.
 */
export function chunkVector(t: SqlType, c: ColumnChunk, s: number, e: number): Vector {
  const n = e - s;
  switch (c.kind) {
    case 'fixed':
      return { type: t, length: n, data: c.values.subarray(s, e), nulls: nullsOf(c.validity, s, e) };
    case 'utf8': {
      const kept = c.kept && c.kept.type === t.kind ? c.kept : undefined;
      if (t.kind === 'JSON') return { type: t, length: n, data: storedJson(c, s, e, kept), nulls: nullsOf(c.validity, s, e) };
      if (kept?.values && keptAll(kept.values, s, e)) return { type: t, length: n, data: kept.values.slice(s, e) as Value[], nulls: nullsOf(c.validity, s, e) };
      const out = texts(c, s, e);
      if (t.kind === 'GEOGRAPHY') for (let i = 0; i < n; i++) if (out[i] !== null) out[i] = new Geography(null, out[i] as string);
      // Rows kept by an earlier read stay the same objects (their parsed shapes with them).
      if (kept) adoptKept(kept, s, out);
      return { type: t, length: n, data: out, nulls: nullsOf(c.validity, s, e) };
    }
    case 'dict': {
      const out = new Array<Value>(n);
      const { indices, dictionary, validity } = c;
      for (let i = 0; i < n; i++) out[i] = isValid(validity, s + i) ? dictionary[indices[s + i]!]! : null;
      return { type: t, length: n, data: out, nulls: nullsOf(validity, s, e), dict: { codes: indices.subarray(s, e), values: dictionary } };
    }
    case 'binary': {
      const out = new Array<Value>(n);
      const { offsets, bytes, validity } = c;
      for (let i = 0; i < n; i++) out[i] = isValid(validity, s + i) ? bytes.slice(offsets[s + i]!, offsets[s + i + 1]!) : null;
      return { type: t, length: n, data: out, nulls: nullsOf(validity, s, e) };
    }
    case 'decimal':
      return decimalVector(t, n, nullsOf(c.validity, s, e), { words: c.words.subarray(s * c.width, e * c.width), width: c.width });
    case 'interval':
      return intervalVector(t, n, nullsOf(c.validity, s, e), { months: c.months.subarray(s, e), days: c.days.subarray(s, e), micros: c.micros.subarray(s, e) });
    case 'range': {
      const element = t.kind === 'RANGE' ? t.element : t;
      return rangeVector(t, n, nullsOf(c.validity, s, e), { start: chunkVector(element, c.start, s, e), end: chunkVector(element, c.end, s, e) });
    }
    case 'values': {
      const data = c.values.slice(s, e) as Value[];
      let nulls: Uint8Array | null = null;
      // NULL arrays stay NULL (nested DML tells them from empty ones); the wire writes them as [].
      for (let i = 0; i < n; i++) if (data[i] === null) (nulls ??= new Uint8Array(n))[i] = 1;
      return { type: t, length: n, data, nulls };
    }
    case 'list':
    case 'struct':
      return nestedOf(t, c, s, e, false);
    case 'null':
      return nullVectorOf(t, n);
  }
}

/**
 * Rows from `s` of a batch just made (`made`): kept where `kept` holds none of them yet, and where it
 * does, replaced by the kept ones (same objects for every batching); nothing when the cache will not keep them.
 */
function adoptKept<X>(kept: TextValues, s: number, made: X[]): void {
  if (!kept.values && !kept.keep?.()) return;
  const k = kept.values!;
  for (let i = 0; i < made.length; i++) {
    const v = k[s + i];
    if (v === undefined) k[s + i] = made[i] as JsonNode | Value;
    else made[i] = v as X;
  }
}

/** Whether rows [s, e) are all kept. */
function keptAll(values: readonly (JsonNode | Value | undefined)[], s: number, e: number): boolean {
  for (let i = s; i < e; i++) if (values[i] === undefined) return false;
  return true;
}

/** Rows [s, e) of a text chunk as strings (NULL rows null). */
function texts(c: Utf8Chunk, s: number, e: number): Value[] {
  const n = e - s;
  const out = new Array<Value>(n);
  const { offsets, bytes, validity } = c;
  if (c.ascii && n > 0) {
    // One string for the rows' bytes, then substrings of it (V8 shares the characters).
    const all = latin1(bytes, offsets[s]!, offsets[e]!);
    const base = offsets[s]!;
    for (let i = 0; i < n; i++) out[i] = isValid(validity, s + i) ? all.slice(offsets[s + i]! - base, offsets[s + i + 1]! - base) : null;
  } else {
    for (let i = 0; i < n; i++) out[i] = isValid(validity, s + i) ? utf8(bytes, offsets[s + i]!, offsets[s + i + 1]!) : null;
  }
  return out;
}

/** Rows [s, e) of a JSON text chunk as values read from their text (or the kept nodes) only when a kernel or writer reads them (JsonRows). */
function storedJson(c: Utf8Chunk, s: number, e: number, kept: TextValues | undefined): Value[] {
  const rows = new JsonRows(c, s, e, kept);
  const out = new Array<Value>(e - s);
  for (let i = 0; i < out.length; i++) out[i] = isValid(c.validity, s + i) ? new StoredJson(rows, s + i) : null;
  return out;
}

/**
 * Rows [s, e) of a JSON text chunk, as one batch's values read them: the
 * nodes kept from an earlier query, else parsed together at the first read
 * of any of them (one JSON.parse of the rows' texts as an array: about half
 * the cost of boxing each text and scanning it for a path, measured on 1M
 * 5-field objects, and then every path walks the parsed value) and kept
 * while the cache lets them; their stored texts decoded from the chunk's
 * bytes where a writer asks (Storage Read, REST, exports never parse).
 */
class JsonRows {
  private nodes: JsonNode[] | null = null;
  constructor(
    private readonly c: Utf8Chunk,
    private readonly s: number,
    private readonly e: number,
    private readonly kept: TextValues | undefined,
  ) {}

  node(r: number): JsonNode {
    if (this.nodes === null) {
      const k = this.kept?.values;
      const v = k ? k[r] : undefined;
      if (v !== undefined) return v as JsonNode;
      this.nodes = this.parse();
      // Rows kept by an earlier read (another batching) stay the same nodes.
      if (this.kept) adoptKept(this.kept, this.s, this.nodes);
    }
    return this.nodes[r - this.s]!;
  }

  storedText(r: number): string {
    // Decoded per value, not sliced from a batch string the kept values would hold (measured: Storage Read of kept values slower).
    const { offsets, bytes } = this.c;
    return (this.c.ascii ? latin1 : utf8)(bytes, offsets[r]!, offsets[r + 1]!);
  }

  private parse(): JsonNode[] {
    const { offsets, bytes, validity } = this.c;
    const { s, e } = this;
    // The rows' texts as one array: '[' texts joined by ',' ']' (NULL rows as null, never read).
    const buf = Buffer.allocUnsafe(offsets[e]! - offsets[s]! + (e - s) * 5 + 2);
    const src = asBuffer(bytes);
    let p = 0;
    buf[p++] = 0x5b;
    for (let r = s; r < e; r++) {
      if (r > s) buf[p++] = 0x2c;
      if (isValid(validity, r)) p += src.copy(buf, p, offsets[r]!, offsets[r + 1]!);
      else p += buf.write('null', p, 'latin1');
    }
    buf[p++] = 0x5d;
    // A number of 16 digits or more may not be a double exactly: each value through the exact parser.
    // (Nesting needs no check: stored values were checked when made.)
    if (hasDigitRun16(buf, p)) {
      const out: JsonNode[] = [];
      for (let r = s; r < e; r++) out.push(isValid(validity, r) ? parseJsonText(this.storedText(r)) : null);
      return out;
    }
    return JSON.parse(buf.toString(this.c.ascii ? 'latin1' : 'utf8', 0, p)) as JsonNode[];
  }
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/**
 * Whether bytes [0, n) hold 16 ASCII digits in a row. Such a run covers one
 * of every 16th byte, so only those are looked at, and a run only around a
 * digit there (measured on 1M 5-field objects: ~5x faster than /\d{16}/ over
 * the decoded string, which took ~8% of a cold query's CPU).
 */
function hasDigitRun16(b: Uint8Array, n: number): boolean {
  for (let i = 15; i < n; i += 16) {
    if (!isDigit(b[i]!)) continue;
    let lo = i;
    while (lo > 0 && isDigit(b[lo - 1]!)) lo--;
    let hi = i;
    while (hi + 1 < n && isDigit(b[hi + 1]!)) hi++;
    if (hi - lo + 1 >= 16) return true;
  }
  return false;
}

/** A stored JSON value: parsed with its batch's rows at the first read (JsonRows), its text the chunk's bytes. */
class StoredJson extends JsonValue {
  private read = false;
  constructor(
    private readonly rows: JsonRows,
    private readonly row: number,
  ) {
    super(null);
  }
  override get node(): JsonNode {
    if (!this.read) {
      this.parsed = this.rows.node(this.row);
      this.read = true;
    }
    return this.parsed;
  }
  override get storedText(): string {
    return this.rows.storedText(this.row);
  }
}

/**
 * Rows [s, e) of a list or struct chunk as a vector whose view shares the
 * layout (leaves as chunkVector makes them), boxed only when a kernel reads
 * `data`. A NULL array nested in a struct boxes as [] (as the storage form
 * always made it); at the top it stays NULL.
 */
function nestedOf(t: SqlType, c: ColumnChunk, s: number, e: number, nested: boolean): Vector {
  const n = e - s;
  if (c.kind === 'list' && t.kind === 'ARRAY') {
    const base = c.offsets[s]!;
    const offsets = new Int32Array(n + 1);
    for (let i = 0; i <= n; i++) offsets[i] = c.offsets[s + i]! - base;
    const child = nestedOf(t.element, c.child, base, c.offsets[e]!, true);
    return nestedVector(t, n, nested ? null : nullsOf(c.validity, s, e), { offsets, child });
  }
  if (c.kind === 'struct' && t.kind === 'STRUCT') {
    return nestedVector(t, n, nullsOf(c.validity, s, e), { fields: t.fields.map((f, j) => nestedOf(f.type, c.children[j]!, s, e, true)) });
  }
  if (c.kind === 'null' && t.kind === 'ARRAY' && nested) return { type: t, length: n, data: Array.from({ length: n }, () => []), nulls: null };
  return chunkVector(t, c, s, e);
}

/** A vector of `n` NULLs (ARRAY: empty arrays). */
export function nullVectorOf(t: SqlType, n: number): Vector {
  if (t.kind === 'ARRAY') return { type: t, length: n, data: Array.from({ length: n }, () => []), nulls: null };
  const nulls = new Uint8Array(n).fill(1);
  switch (layoutOf(t)) {
    case 'f64':
    case 'i64':
      return { type: t, length: n, data: new Float64Array(n), nulls };
    case 'i32':
      return { type: t, length: n, data: new Int32Array(n), nulls };
    case 'bool':
      return { type: t, length: n, data: new Uint8Array(n), nulls };
    default:
      return { type: t, length: n, data: new Array<Value>(n).fill(null), nulls };
  }
}

/** The validity bitmap of executor NULL bytes (null when none is NULL). */
export function validityOf(nulls: Uint8Array | null, n: number): Validity {
  if (nulls === null) return null;
  let any = false;
  const out = new Uint8Array((n + 7) >> 3);
  for (let i = 0; i < n; i++) {
    if (nulls[i] === 1) any = true;
    else out[i >> 3]! |= 1 << (i & 7);
  }
  return any ? out : null;
}
