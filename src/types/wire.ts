// REST wire encoding of result rows (spec 2.8): the JSON of a `rows` array,
// `[{"f":[{"v":...},...]},...]`, written straight from the column vectors
// into UTF-8 bytes (see "pages as bytes"), so that neither the engine nor the
// gateway materializes per-cell objects. Used by tabledata.list (ListRows)
// and by query results alike; valueEncoder / encodeCell give single values.
import type { SqlType } from './types.js';
import { Decimal, type Geography, type Interval, type JsonValue, type RangeValue, type Value } from './values.js';
import { layoutOf, type Batch, type Vector } from './vector.js';
import { textOfWords } from './decimal-words.js';
import {
  formatDate,
  formatDatetime,
  formatInterval,
  formatIntervalParts,
  formatTime,
  formatTimestampFloatSeconds,
  formatTimestampRfc3339,
  jsonValueText,
} from './json-values.js';
import { formatTimestampPicosRfc3339, picosToMicros } from './picos.js';

/** How TIMESTAMP cells are written; mirrors proto TimestampFormat. */
export type TimestampFormat = 'RFC3339' | 'FLOAT_SECONDS' | 'INT64_MICROS';

export interface WireOptions {
  readonly timestampFormat: TimestampFormat;
  /**
   * The real service sends every scalar cell as a string ("1.5", "true").
   * The spec's neutral family sends FLOAT64 as a JSON number and BOOL as a
   * JSON boolean; this flag selects the real family's strings.
   */
  readonly stringScalars?: boolean;
  /**
   * The caller takes a large page as bytes (encodeRowsPage). The gateway asks
   * for it, so that a 10,000-row page crosses to the gateway and on to the
   * client as the bytes encodeRows wrote: no ~1 MB string to decode (then a
   * full GC every few pages), and no UTF-8 re-encoding by protobuf's string
   * writer, which measures it in a JS loop.
   */
  readonly rowsAsBytes?: boolean;
  /**
   * A page ends with the first row that brings its bytes to this many (it
   * holds at least one row): the real service limits every response to
   * 10 MB besides maxResults. 0 or absent: rows only.
   */
  readonly maxBytes?: number;
}

/**
 * A page of REST rows as it goes on the wire: the JSON text, or for a large
 * page asked for as bytes, '' and its UTF-8 (proto `rows_json` / `rows_utf8`).
 */
export interface RowsPage {
  rowsJson: string;
  rowsUtf8?: Buffer;
  /** Rows in the page: fewer than asked for when maxBytes ended it. */
  rows: number;
}

/**
 * Pages of at least this many bytes are taken as bytes when asked for; a
 * smaller one stays text (it costs nothing much, and its bytes would be a
 * copy out of the shared scratch buffer).
 */
export const ROW_BYTES_MIN = 16 * 1024;

/** Encodes one non-null scalar value of `type` as the JSON text of a `v`. */
type ValueEncoder = (v: Value) => string;

const q = (s: string): string => '"' + s + '"';

function floatText(x: number, asString: boolean): string {
  if (Number.isNaN(x)) return '"NaN"';
  if (x === Infinity) return '"Infinity"';
  if (x === -Infinity) return '"-Infinity"';
  return asString ? q(javaDouble(x)) : String(x);
}

/**
 * A double as Java's Double.toString prints it, which is how the real service
 * writes FLOAT64 cells: `1.0`, `0.5`, `1.0E20`, `2.5E-5` (shortest digits).
 */
export function javaDouble(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const ax = Math.abs(x);
  if (ax >= 1e-3 && ax < 1e7) {
    const s = String(x);
    return s.includes('.') ? s : s + '.0';
  }
  const [mant, exp] = x.toExponential().split('e');
  return `${mant!.includes('.') ? mant : mant + '.0'}E${exp!.replace('+', '')}`;
}

function timestampText(micros: bigint | number, f: TimestampFormat): string {
  switch (f) {
    case 'INT64_MICROS':
      return q(typeof micros === 'number' ? String(micros) : micros.toString());
    case 'FLOAT_SECONDS':
      return q(formatTimestampFloatSeconds(micros));
    default:
      return q(formatTimestampRfc3339(micros));
  }
}

function rangeBoundText(t: SqlType, v: Value, f: TimestampFormat): string {
  if (v === null) return 'UNBOUNDED';
  switch (t.kind) {
    case 'DATE':
      return formatDate(v as number);
    case 'DATETIME':
      return formatDatetime(v as bigint);
    default: {
      const s = timestampText(v as bigint, f);
      return s.slice(1, -1);
    }
  }
}

/** Encoder of non-null values of `type` (scalar value forms, values.ts). */
export function valueEncoder(type: SqlType, opts: WireOptions): ValueEncoder {
  const strs = opts.stringScalars === true;
  const tf = opts.timestampFormat;
  switch (type.kind) {
    case 'INT64':
      return (v) => q(String(v));
    case 'FLOAT64':
      return (v) => floatText(v as number, strs);
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return (v) => q((v as Decimal).toFixed());
    case 'BOOL':
      return strs ? (v) => (v ? '"true"' : '"false"') : (v) => (v ? 'true' : 'false');
    case 'STRING':
      return (v) => JSON.stringify(v as string);
    case 'BYTES':
      return (v) => q(Buffer.from((v as Uint8Array).buffer, (v as Uint8Array).byteOffset, (v as Uint8Array).byteLength).toString('base64'));
    case 'DATE':
      return (v) => q(formatDate(v as number));
    case 'TIME':
      return (v) => q(formatTime(v as number));
    case 'DATETIME':
      return (v) => q(formatDatetime(v as bigint));
    case 'TIMESTAMP':
      return (v) => timestampText(v as bigint, tf);
    case 'TIMESTAMP_PICOS':
      // Only ISO8601_STRING (RFC3339) carries the twelve digits; the numeric forms are of the microsecond.
      return tf === 'RFC3339' ? (v) => q(formatTimestampPicosRfc3339(v as bigint)) : (v) => timestampText(picosToMicros(v as bigint), tf);
    case 'INTERVAL':
      return (v) => q(formatInterval(v as Interval));
    case 'JSON':
      return (v) => JSON.stringify(jsonValueText(v as JsonValue));
    case 'GEOGRAPHY':
      return (v) => JSON.stringify((v as Geography).wkt);
    case 'RANGE': {
      const el = type.element;
      return (v) => {
        const r = v as RangeValue;
        return JSON.stringify(`[${rangeBoundText(el, r.start, tf)}, ${rangeBoundText(el, r.end, tf)})`);
      };
    }
    case 'ARRAY': {
      const inner = valueEncoder(type.element, opts);
      return (v) => {
        const a = v as Value[];
        let s = '[';
        for (let i = 0; i < a.length; i++) {
          if (i) s += ',';
          const x = a[i]!;
          s += x === null ? '{"v":null}' : '{"v":' + inner(x) + '}';
        }
        return s + ']';
      };
    }
    case 'STRUCT': {
      const encs = type.fields.map((f) => fieldCell(f.type, opts));
      return (v) => {
        const a = v as Value[];
        let s = '{"f":[';
        for (let i = 0; i < encs.length; i++) {
          if (i) s += ',';
          s += encs[i]!(a[i] ?? null);
        }
        return s + ']}';
      };
    }
  }
}

/** Encoder of a whole cell `{"v":...}` for a possibly-null value. */
function fieldCell(type: SqlType, opts: WireOptions): (v: Value) => string {
  const enc = valueEncoder(type, opts);
  // A NULL or missing REPEATED field is `{"v":[]}`: clients map over it.
  const nullCell = type.kind === 'ARRAY' ? '{"v":[]}' : '{"v":null}';
  return (v) => (v === null ? nullCell : '{"v":' + enc(v) + '}');
}

// ---------------------------------------------------------------- pages as bytes
//
// A page is written straight into one UTF-8 buffer, cell by cell: integers,
// dates, times, timestamps and booleans as digits and constant bytes (no
// string per cell), plain ASCII strings byte by byte, anything else as its
// valueEncoder text. A large page used to be built as per-row strings, then
// encoded to UTF-8 in 8 KB runs: two thirds of the engine's time per page
// went to those strings, their encoding and the collections they caused.

const MICROS_PER_DAY = 86_400_000_000;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

const bytesOf = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const CELL_OPEN = bytesOf('{"v":');
const ROW_OPEN = bytesOf('{"f":[');
const ROW_CLOSE = bytesOf(']}');
const NULL_CELL = bytesOf('{"v":null}');
const EMPTY_ARRAY_CELL = bytesOf('{"v":[]}');
const TRUE_CELL = bytesOf('{"v":true}');
const FALSE_CELL = bytesOf('{"v":false}');
const TRUE_TEXT_CELL = bytesOf('{"v":"true"}');
const FALSE_TEXT_CELL = bytesOf('{"v":"false"}');

/**
 * The first 64 KB of every page's bytes, shared: pages are written
 * synchronously, and a fresh 64 KB buffer per call (off-heap, too large for
 * Node's pool) was an allocation and a later free for every one-row page.
 * Larger pages grow into buffers of their own.
 */
const SCRATCH_BYTES = 64 * 1024;
let scratch: Buffer | undefined;

/** "00".."99" as byte pairs: digits are written two at a time. */
const PAIRS = Uint8Array.from({ length: 200 }, (_, i) => 48 + (i % 2 === 0 ? Math.floor(i / 20) : (i >> 1) % 10));

/** `v` (an integer in [0, 10^width), width even) as exactly `width` digits at buf[p]; returns the end. */
function putPairs(buf: Buffer, p: number, v: number, width: number): number {
  const end = p + width;
  let e = end;
  while (e > p) {
    const q = Math.floor(v / 100);
    const r = (v - q * 100) << 1;
    buf[--e] = PAIRS[r + 1]!;
    buf[--e] = PAIRS[r]!;
    v = q;
  }
  return end;
}

/** The digits of `v`, an integer in [0, 1e8), at buf[p]; returns the end. */
function putSmall(buf: Buffer, p: number, v: number): number {
  const n = v < 10 ? 1 : v < 100 ? 2 : v < 1e3 ? 3 : v < 1e4 ? 4 : v < 1e5 ? 5 : v < 1e6 ? 6 : v < 1e7 ? 7 : 8;
  const end = p + n;
  let e = end;
  while (v >= 100) {
    const q = (v / 100) | 0;
    const r = (v - q * 100) << 1;
    buf[--e] = PAIRS[r + 1]!;
    buf[--e] = PAIRS[r]!;
    v = q;
  }
  if (v >= 10) {
    buf[--e] = PAIRS[(v << 1) + 1]!;
    buf[--e] = PAIRS[v << 1]!;
  } else buf[--e] = 48 + v;
  return end;
}

/** The digits of a non-negative safe integer at buf[p] (16 at most); returns the end. */
function putUint(buf: Buffer, p: number, x: number): number {
  if (x < 1e8) return putSmall(buf, p, x);
  const hi = Math.floor(x / 1e8);
  return putPairs(buf, putSmall(buf, p, hi), x - hi * 1e8, 8);
}

/** A growing UTF-8 buffer holding one page's `rows` array. Writers call `room` for what they write. */
class PageWriter {
  buf: Buffer;
  pos = 0;
  /** Rows begun so far. */
  private rowsWritten = 0;

  /**
   * `count`: the rows the page will have, `maxBytes` about its most bytes
   * (they size growth); `shared`: start in the shared scratch buffer (only
   * for a page written in one go).
   */
  constructor(
    private readonly count: number,
    private readonly maxBytes: number,
    shared: boolean,
  ) {
    this.buf = shared ? (scratch ??= Buffer.allocUnsafe(SCRATCH_BYTES)) : Buffer.allocUnsafe(Math.min(SCRATCH_BYTES, 1024 + count * 64));
    this.buf[this.pos++] = 0x5b; // [
  }

  room(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  private grow(n: number): void {
    // Sized for the whole page from the rows so far (+1/8), so that a large
    // page grows once or twice rather than doubling from 64 KB: each
    // megabyte-sized step is a copy and external memory for V8 to count.
    const estimate = this.rowsWritten > 0 ? Math.min(Math.ceil((this.pos / this.rowsWritten) * this.count * 1.125), this.maxBytes + SCRATCH_BYTES) : 0;
    const nb = Buffer.allocUnsafe(Math.max(this.pos + n, this.buf.length * 2, estimate));
    this.buf.copy(nb, 0, 0, this.pos);
    this.buf = nb;
  }

  /** Constant bytes (short: a loop beats a native call). */
  lit(b: Uint8Array): void {
    const n = b.length;
    this.room(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) buf[p++] = b[i]!;
    this.pos = p;
  }

  /** Text known to be ASCII. */
  ascii(s: string): void {
    const n = s.length;
    this.room(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) buf[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** Any text, as UTF-8. */
  utf8(s: string): void {
    this.room(s.length * 3);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** `d` as exactly `width` digits, width even (0 <= d < 10^width; room taken by the caller). */
  fixed(d: number, width: number): void {
    this.pos = putPairs(this.buf, this.pos, d, width);
  }

  /** A quoted JSON string as JSON.stringify writes it. */
  jsonString(s: string): void {
    const n = s.length;
    this.room(n + 2);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
        // Escapes or non-ASCII: the whole string the general way.
        this.utf8(JSON.stringify(s));
        return;
      }
      buf[p++] = c;
    }
    buf[p++] = 0x22;
    this.pos = p;
  }

  /** `YYYY-MM-DD` of days since the epoch (years 1-9999; others through formatDate). */
  date(days: number): void {
    // civilFromDays, inline (no array per value).
    const z = days + 719468;
    const era = Math.floor(z / 146097);
    const doe = z - era * 146097;
    const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
    const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
    const mp = Math.floor((5 * doy + 2) / 153);
    const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
    const m = mp + (mp < 10 ? 3 : -9);
    const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
    if (!(y >= 0 && y <= 9999)) {
      this.ascii(formatDate(days));
      return;
    }
    this.room(10);
    this.fixed(y, 4);
    this.buf[this.pos++] = 0x2d;
    this.fixed(m, 2);
    this.buf[this.pos++] = 0x2d;
    this.fixed(d, 2);
  }

  /** `HH:MM:SS[.ffffff]` of microseconds since midnight (a safe integer in [0, 86400e6)). */
  time(us: number): void {
    if (!(us >= 0 && us < MICROS_PER_DAY)) {
      this.ascii(formatTime(us));
      return;
    }
    const secs = Math.floor(us / 1e6);
    const frac = us - secs * 1e6;
    this.room(15);
    this.fixed(Math.floor(secs / 3600), 2);
    this.buf[this.pos++] = 0x3a;
    this.fixed(Math.floor(secs / 60) % 60, 2);
    this.buf[this.pos++] = 0x3a;
    this.fixed(secs % 60, 2);
    if (frac !== 0) {
      this.buf[this.pos++] = 0x2e;
      this.fixed(frac, 6);
    }
  }

  /** `YYYY-MM-DDTHH:MM:SS[.ffffff]` of safe-integer micros (formatDatetime). */
  datetime(micros: number): void {
    const days = Math.floor(micros / MICROS_PER_DAY);
    this.date(days);
    this.room(1);
    this.buf[this.pos++] = 0x54; // T
    this.time(micros - days * MICROS_PER_DAY);
  }

  beginRow(): void {
    this.rowsWritten++;
  }

  private close(): void {
    this.room(1);
    this.buf[this.pos++] = 0x5d; // ]
  }

  text(): string {
    this.close();
    return this.buf.toString('utf8', 0, this.pos);
  }

  /** The page's bytes, owned by the caller: a view of a grown buffer, a copy of the shared scratch. */
  bytes(): Buffer {
    this.close();
    return this.buf === scratch ? Buffer.from(this.buf.subarray(0, this.pos)) : this.buf.subarray(0, this.pos);
  }
}

/** Writes the cell `{"v":...}` of row i of a vector. */
type CellWriter = (w: PageWriter, i: number) => void;

const isSafeInt = (x: number): boolean => x >= -MAX_SAFE && x <= MAX_SAFE && Math.floor(x) === x;

/** The cell `{"v":"<digits>"}` of an integer-valued cell: exact safe integers as digits, anything else as its text. */
function integerCell(w: PageWriter, x: number | bigint): void {
  if (typeof x !== 'number' || !isSafeInt(x)) {
    w.lit(CELL_OPEN);
    w.ascii(`"${String(x)}"}`);
    return;
  }
  w.room(26);
  const buf = w.buf;
  let p = w.pos;
  buf[p++] = 0x7b; // {"v":"
  buf[p++] = 0x22;
  buf[p++] = 0x76;
  buf[p++] = 0x22;
  buf[p++] = 0x3a;
  buf[p++] = 0x22;
  if (x < 0) {
    buf[p++] = 0x2d;
    x = -x;
  }
  p = putUint(buf, p, x);
  buf[p++] = 0x22;
  buf[p++] = 0x7d;
  w.pos = p;
}

/** A cell whose value text (between `{"v":` and `}`, ASCII) `text` gives. */
function textCell(text: (i: number) => string): CellWriter {
  return (w, i) => {
    w.lit(CELL_OPEN);
    w.ascii(text(i));
    w.room(1);
    w.buf[w.pos++] = 0x7d;
  };
}

/** A quoted date/time value: written by `put` from a safe-integer count (then `suffix`, unless 0), else `text` of it. */
function civilCell(a: Float64Array | BigInt64Array, put: (w: PageWriter, x: number) => void, text: (x: number | bigint) => string, suffix: number): CellWriter {
  return (w, i) => {
    const x = a[i]!;
    w.lit(CELL_OPEN);
    w.room(1);
    w.buf[w.pos++] = 0x22;
    if (typeof x === 'number' && isSafeInt(x)) {
      put(w, x);
      if (suffix) {
        w.room(1);
        w.buf[w.pos++] = suffix;
      }
    } else w.ascii(text(x));
    w.room(2);
    w.buf[w.pos++] = 0x22;
    w.buf[w.pos++] = 0x7d;
  };
}

function vectorCellWriter(vec: Vector, opts: WireOptions): CellWriter {
  const t = vec.type;
  const nulls = vec.nulls;
  const nullCell = t.kind === 'ARRAY' ? EMPTY_ARRAY_CELL : NULL_CELL;
  if (vec.decimal) {
    // NUMERIC / BIGNUMERIC words: their text straight from the words, no Decimal per cell.
    const { words, width } = vec.decimal;
    return (w, i) => {
      if (nulls !== null && nulls[i] === 1) return w.lit(nullCell);
      w.lit(CELL_OPEN);
      w.utf8(q(textOfWords(words, i, width)));
      w.room(1);
      w.buf[w.pos++] = 0x7d;
    };
  }
  if (vec.interval) {
    // INTERVAL parts: the canonical text straight from them, no Interval per cell.
    const { months, days, micros } = vec.interval;
    return (w, i) => {
      if (nulls !== null && nulls[i] === 1) return w.lit(nullCell);
      w.lit(CELL_OPEN);
      w.ascii(q(formatIntervalParts(months[i]!, days[i]!, micros[i]!)));
      w.room(1);
      w.buf[w.pos++] = 0x7d;
    };
  }
  const d = vec.data;
  const layout = layoutOf(t);
  let body: CellWriter;
  if (layout === 'values') {
    const vals = d as Value[];
    if (t.kind === 'STRING') {
      return (w, i) => {
        const x = vals[i];
        if (x === null || x === undefined) return w.lit(nullCell);
        w.lit(CELL_OPEN);
        w.jsonString(x as string);
        w.room(1);
        w.buf[w.pos++] = 0x7d;
      };
    }
    const enc = valueEncoder(t, opts);
    return (w, i) => {
      const x = vals[i]!;
      if (x === null) return w.lit(nullCell);
      w.lit(CELL_OPEN);
      w.utf8(enc(x));
      w.room(1);
      w.buf[w.pos++] = 0x7d;
    };
  }
  if (layout === 'f64' && t.kind === 'FLOAT64') {
    const a = d as Float64Array;
    const strs = opts.stringScalars === true;
    body = textCell((i) => floatText(a[i]!, strs));
  } else if (layout === 'i64' || (layout === 'f64' && t.kind === 'TIME')) {
    const a = d as Float64Array | BigInt64Array;
    if (t.kind === 'INT64' || (t.kind === 'TIMESTAMP' && opts.timestampFormat === 'INT64_MICROS')) {
      body = (w, i) => integerCell(w, a[i]!);
    } else if (t.kind === 'TIMESTAMP' && opts.timestampFormat !== 'FLOAT_SECONDS') {
      body = civilCell(a, (w, x) => w.datetime(x), (x) => formatTimestampRfc3339(x), 0x5a /* Z */);
    } else if (t.kind === 'TIMESTAMP') {
      const tf = opts.timestampFormat;
      body = textCell((i) => timestampText(a[i]!, tf));
    } else if (t.kind === 'DATETIME') body = civilCell(a, (w, x) => w.datetime(x), (x) => formatDatetime(x), 0);
    else body = civilCell(a, (w, x) => w.time(x), (x) => formatTime(Number(x)), 0);
  } else if (layout === 'i32') {
    const a = d as Int32Array;
    body = (w, i) => {
      w.lit(CELL_OPEN);
      w.room(1);
      w.buf[w.pos++] = 0x22;
      w.date(a[i]!);
      w.room(2);
      w.buf[w.pos++] = 0x22;
      w.buf[w.pos++] = 0x7d;
    };
  } else {
    const a = d as Uint8Array;
    const [tt, ff] = opts.stringScalars ? [TRUE_TEXT_CELL, FALSE_TEXT_CELL] : [TRUE_CELL, FALSE_CELL];
    body = (w, i) => w.lit(a[i] ? tt : ff);
  }
  if (nulls === null) return body;
  return (w, i) => (nulls[i] === 1 ? w.lit(nullCell) : body(w, i));
}

/**
 * Writes the REST `rows` array of rows [start, start+count) of the
 * concatenation of `batches` (columns `columns` of each, all when omitted),
 * up to opts.maxBytes, a slice of rows at a time (encodeRowsPageAsync).
 */
class PageEncoder {
  readonly out: PageWriter;
  private readonly maxBytes: number;
  /** Rows still to write; the batch and row within it where the next one is. */
  private remaining: number;
  private bi = 0;
  private r: number;
  private writers: CellWriter[] | null = null;
  private first = true;

  constructor(
    private readonly batches: readonly Batch[],
    start: number,
    private readonly count: number,
    private readonly opts: WireOptions,
    private readonly columns: readonly number[] | undefined,
    shared: boolean,
  ) {
    this.maxBytes = opts.maxBytes || Number.POSITIVE_INFINITY;
    this.out = new PageWriter(count, this.maxBytes, shared);
    this.remaining = Math.max(0, count);
    // Skip to the batch holding row `start`.
    let r = start;
    while (this.bi < batches.length && r >= batches[this.bi]!.length) r -= batches[this.bi++]!.length;
    this.r = r;
  }

  /** Rows written so far. */
  get rows(): number {
    return this.count - this.remaining;
  }

  /** Writes up to `slice` more rows; false once the page is complete. */
  step(slice: number): boolean {
    const out = this.out;
    const batches = this.batches;
    let budget = slice;
    while (this.remaining > 0 && budget > 0 && this.bi < batches.length && out.pos < this.maxBytes) {
      const b = batches[this.bi]!;
      if (this.r >= b.length) {
        this.bi++;
        this.r = 0;
        this.writers = null;
        continue;
      }
      const writers = (this.writers ??= (this.columns ?? b.columns.map((_, i) => i)).map((c) => vectorCellWriter(b.columns[c]!, this.opts)));
      const nc = writers.length;
      const to = Math.min(b.length, this.r + this.remaining, this.r + budget);
      let r = this.r;
      while (r < to) {
        out.beginRow();
        out.room(1);
        if (!this.first) out.buf[out.pos++] = 0x2c; // ,
        this.first = false;
        out.lit(ROW_OPEN);
        for (let c = 0; c < nc; c++) {
          if (c > 0) {
            out.room(1);
            out.buf[out.pos++] = 0x2c;
          }
          writers[c]!(out, r);
        }
        out.lit(ROW_CLOSE);
        r++;
        if (out.pos >= this.maxBytes) break;
      }
      this.remaining -= r - this.r;
      budget -= r - this.r;
      this.r = r;
    }
    return this.remaining > 0 && this.bi < batches.length && out.pos < this.maxBytes;
  }

  finish(): RowsPage {
    const rows = this.rows;
    if (this.opts.rowsAsBytes && this.out.pos + 1 >= ROW_BYTES_MIN) return { rowsJson: '', rowsUtf8: this.out.bytes(), rows };
    return { rowsJson: this.out.text(), rows };
  }
}

/**
 * The REST `rows` array for rows [start, start+count) of the concatenation
 * of `batches`, restricted to `columns` (indexes into each batch's columns;
 * all when omitted), up to opts.maxBytes: as UTF-8 bytes when
 * `opts.rowsAsBytes` and the page is ROW_BYTES_MIN bytes or more, else as
 * JSON text.
 */
export function encodeRowsPage(
  batches: readonly Batch[],
  start: number,
  count: number,
  opts: WireOptions,
  columns?: readonly number[],
): RowsPage {
  if (count <= 0) return { rowsJson: '[]', rows: 0 };
  const enc = new PageEncoder(batches, start, count, opts, columns, true);
  enc.step(Number.POSITIVE_INFINITY);
  return enc.finish();
}

/** Rows written between turns of the event loop by encodeRowsPageAsync (~10 ms of work). */
const SLICE_ROWS = 8192;

/**
 * encodeRowsPage a slice of rows at a time, giving other calls a turn in
 * between: a 10 MB page takes ~100 ms to write, which a SELECT 1 arriving
 * meanwhile should not wait for.
 */
export async function encodeRowsPageAsync(
  batches: readonly Batch[],
  start: number,
  count: number,
  opts: WireOptions,
  columns?: readonly number[],
): Promise<RowsPage> {
  if (count <= SLICE_ROWS) return encodeRowsPage(batches, start, count, opts, columns);
  // A buffer of its own: the shared scratch would be another page's meanwhile.
  const enc = new PageEncoder(batches, start, count, opts, columns, false);
  while (enc.step(SLICE_ROWS)) await new Promise((r) => setImmediate(r));
  return enc.finish();
}

/** encodeRowsPage's JSON text, always as text. */
export function encodeRows(
  batches: readonly Batch[],
  start: number,
  count: number,
  opts: WireOptions,
  columns?: readonly number[],
): string {
  return encodeRowsPage(batches, start, count, { ...opts, rowsAsBytes: false }, columns).rowsJson;
}

/** Encodes single values (query-parameter echo, tests). */
export function encodeCell(type: SqlType, v: Value, opts: WireOptions): string {
  return fieldCell(type, opts)(v);
}

export { Decimal };
