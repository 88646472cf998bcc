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
// stored text (utf8), with the values made from it kept beside it once a
// kernel used them (`TextValues`). Nested columns of files written before
// keep their values (values.ts forms), made once when decoded.
import type { SqlType } from '../types/types.js';
import { Geography, JsonValue, type JsonNode, type Value } from '../types/values.js';
import { parseJsonText } from '../types/json-values.js';
import { JsonText } from '../functions/json-core.js';
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

/**
 * Beside a JSON or GEOGRAPHY text chunk: the values made from its text, kept
 * while the cache keeps them (a second cache entry, charged and evicted on
 * its own, chunk-cache.ts), so that warm queries walk parsed JSON and reuse
 * the geography functions' parsed shapes (kept per Geography object) as
 * when the values were the chunk. Made on a cache hit of a chunk whose
 * per-batch values a kernel walked (`walked`; GEOGRAPHY: always, its
 * functions keep shapes by object): a scan, a Storage Read or an export
 * that only copies the text never parses it.
 */
export class TextValues {
  values: Value[] | null = null;
  walked: boolean;
  constructor(readonly type: 'JSON' | 'GEOGRAPHY') {
    this.walked = type === 'GEOGRAPHY';
  }
}

/** A text chunk's values, made whole (JSON parsed), and their estimated heap bytes; null when it keeps none. */
export function makeTextValues(c: ColumnChunk): { values: Value[]; bytes: number } | null {
  if (c.kind !== 'utf8' || !c.kept) return null;
  const { offsets, bytes, validity } = c;
  const values = new Array<Value>(c.length);
  let est = 64;
  for (let i = 0; i < c.length; i++) {
    if (!isValid(validity, i)) {
      values[i] = null;
      continue;
    }
    const x = utf8(bytes, offsets[i]!, offsets[i + 1]!);
    if (c.kept.type === 'GEOGRAPHY') {
      values[i] = new Geography(null, x);
      est += 48 + 2 * x.length;
    } else {
      values[i] = new StoredJson(parseJsonText(x), bytes, offsets[i]!, offsets[i + 1]!);
      // The parsed value's objects, keys and strings: about four bytes a character of its text, measured ~230 bytes for 50 characters.
      est += 48 + 4 * x.length;
    }
  }
  return { values, bytes: est };
}

/** A kept JSON value: parsed, its stored text left in the chunk's bytes (made again where a writer asks, never parsed again). */
class StoredJson extends JsonValue {
  constructor(
    node: JsonNode,
    private readonly bytes: Uint8Array,
    private readonly start: number,
    private readonly end: number,
  ) {
    super(node);
  }
  override get storedText(): string {
    return utf8(this.bytes, this.start, this.end);
  }
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
      const kept = c.kept?.values;
      if (kept) return { type: t, length: n, data: kept.slice(s, e), nulls: nullsOf(c.validity, s, e) };
      const out = new Array<Value>(n);
      const { offsets, bytes, validity } = c;
      const make = c.ascii ? latin1 : utf8;
      if (c.ascii && n > 0) {
        // One string for the rows' bytes, then substrings of it (V8 shares the characters).
        const all = latin1(bytes, offsets[s]!, offsets[e]!);
        const base = offsets[s]!;
        for (let i = 0; i < n; i++) out[i] = isValid(validity, s + i) ? all.slice(offsets[s + i]! - base, offsets[s + i + 1]! - base) : null;
      } else {
        for (let i = 0; i < n; i++) out[i] = isValid(validity, s + i) ? make(bytes, offsets[s + i]!, offsets[s + i + 1]!) : null;
      }
      if (t.kind === 'JSON' || t.kind === 'GEOGRAPHY') boxText(t.kind, out, c.kept);
      return { type: t, length: n, data: out, nulls: nullsOf(validity, s, e) };
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
 * A batch's JSON or GEOGRAPHY texts as values, made for this batch (the
 * chunk keeps none yet): JSON read lazily (JsonText: a path function scans
 * the text, only what a kernel reads whole is parsed; a walk tells the
 * chunk's `kept`, so the cache keeps parsed values at its next hit).
 */
function boxText(kind: 'JSON' | 'GEOGRAPHY', out: Value[], kept: TextValues | undefined): void {
  for (let i = 0; i < out.length; i++) {
    const x = out[i] as string | null;
    if (x === null) continue;
    if (kind === 'GEOGRAPHY') out[i] = new Geography(null, x);
    else {
      const j = new JsonText(x, 0, x.length, 'stored');
      j.demand = kept;
      out[i] = j;
    }
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
