// REST wire encoding of result rows (spec 2.8): the JSON text of a `rows`
// array, `[{"f":[{"v":...},...]},...]`, built directly as a string so that
// neither the engine nor the gateway materializes per-cell objects. Used by
// tabledata.list (ListRows) and by query results alike.
import type { SqlType } from './types.js';
import { Decimal, type Geography, type Interval, type JsonValue, type RangeValue, type Value } from './values.js';
import { layoutOf, type Batch, type Vector } from './vector.js';
import {
  formatDate,
  formatDatetime,
  formatInterval,
  formatTime,
  formatTimestampFloatSeconds,
  formatTimestampRfc3339,
  jsonNodeToText,
} from './json-values.js';

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
}

/**
 * A page of REST rows as it goes on the wire: the JSON text, or for a large
 * page asked for as bytes, '' and its UTF-8 (proto `rows_json` / `rows_utf8`).
 */
export interface RowsPage {
  rowsJson: string;
  rowsUtf8?: Buffer;
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
    case 'INTERVAL':
      return (v) => q(formatInterval(v as Interval));
    case 'JSON':
      return (v) => JSON.stringify(jsonNodeToText((v as JsonValue).node));
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

/** Encoder of the cell of row i of a vector, with typed-array fast paths. */
type CellEncoder = (i: number) => string;

function vectorCellEncoder(vec: Vector, opts: WireOptions): CellEncoder {
  const t = vec.type;
  const nulls = vec.nulls;
  const nullCell = t.kind === 'ARRAY' ? '{"v":[]}' : '{"v":null}';
  const d = vec.data;
  let body: CellEncoder;
  const layout = layoutOf(t);
  if (layout === 'values') {
    const enc = valueEncoder(t, opts);
    const vals = d as Value[];
    body = (i) => {
      const x = vals[i]!;
      return x === null ? nullCell : '{"v":' + enc(x) + '}';
    };
    return body;
  }
  if (layout === 'f64' && t.kind === 'FLOAT64') {
    const a = d as Float64Array;
    const strs = opts.stringScalars === true;
    body = (i) => '{"v":' + floatText(a[i]!, strs) + '}';
  } else if (layout === 'i64' || (layout === 'f64' && t.kind === 'TIME')) {
    const a = d as Float64Array | BigInt64Array;
    if (t.kind === 'INT64') body = (i) => '{"v":"' + String(a[i]!) + '"}';
    else if (t.kind === 'TIMESTAMP') {
      const tf = opts.timestampFormat;
      body = tf === 'INT64_MICROS' ? (i) => '{"v":"' + String(a[i]!) + '"}' : (i) => '{"v":' + timestampText(a[i]!, tf) + '}';
    } else if (t.kind === 'DATETIME') body = (i) => '{"v":"' + formatDatetime(a[i]!) + '"}';
    else body = (i) => '{"v":"' + formatTime(Number(a[i]!)) + '"}';
  } else if (layout === 'i32') {
    const a = d as Int32Array;
    body = (i) => '{"v":"' + formatDate(a[i]!) + '"}';
  } else {
    const a = d as Uint8Array;
    const [tt, ff] = opts.stringScalars ? ['{"v":"true"}', '{"v":"false"}'] : ['{"v":true}', '{"v":false}'];
    body = (i) => (a[i] ? tt : ff);
  }
  if (nulls === null) return body;
  return (i) => (nulls[i] === 1 ? nullCell : body(i));
}

/** Text handed to the row sink at a time (see writeRows). */
const RUN_CHARS = 8192;

/** Writes the REST `rows` array for rows [start, start+count) of `batches` into `out`. */
function writeRows(out: RowSink, batches: readonly Batch[], start: number, count: number, opts: WireOptions, columns?: readonly number[]): void {
  let offset = 0;
  let remaining = count;
  let pos = start;
  for (const b of batches) {
    if (remaining <= 0) break;
    const end = offset + b.length;
    if (pos >= end) {
      offset = end;
      continue;
    }
    const cols = columns ?? b.columns.map((_, i) => i);
    const encs = cols.map((c) => vectorCellEncoder(b.columns[c]!, opts));
    const from = pos - offset;
    const to = Math.min(b.length, from + remaining);
    const nc = encs.length;
    // Rows go to the sink in runs of ~8 KB of text: one UTF-8 write per run
    // instead of per row (the per-call cost was the largest single item of a
    // large page).
    let run = '';
    let inRun = 0;
    for (let r = from; r < to; r++) {
      let row = nc > 0 ? '{"f":[' + encs[0]!(r) : '{"f":[';
      for (let c = 1; c < nc; c++) row += ',' + encs[c]!(r);
      run = inRun++ === 0 ? row + ']}' : run + ',' + row + ']}';
      if (run.length >= RUN_CHARS) {
        out.rows(run, inRun);
        run = '';
        inRun = 0;
      }
    }
    if (inRun > 0) out.rows(run, inRun);
    remaining -= to - from;
    pos += to - from;
    offset = end;
  }
}

/**
 * The REST `rows` array for rows [start, start+count) of the concatenation
 * of `batches`, restricted to `columns` (indexes into each batch's columns;
 * all when omitted): as UTF-8 bytes when `opts.rowsAsBytes` and the page is
 * ROW_BYTES_MIN bytes or more, else as JSON text.
 */
export function encodeRowsPage(
  batches: readonly Batch[],
  start: number,
  count: number,
  opts: WireOptions,
  columns?: readonly number[],
): RowsPage {
  if (count <= 0) return { rowsJson: '[]' };
  // Each row's text goes straight into a growing byte buffer: the per-row
  // temporaries die young, and the result is one flat string decoded once
  // (a rope over the whole page made GC dominate large pages), or no string.
  const out = new RowSink(count);
  writeRows(out, batches, start, count, opts, columns);
  if (opts.rowsAsBytes && out.length >= ROW_BYTES_MIN) return { rowsJson: '', rowsUtf8: out.bytes() };
  return { rowsJson: out.text() };
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

/**
 * The first 64 KB of every page's bytes, shared: encodeRows is synchronous,
 * and a fresh 64 KB buffer per call (off-heap, too large for Node's pool)
 * was an allocation and a later free for every one-row page. Larger pages
 * grow into buffers of their own.
 */
const SCRATCH_BYTES = 64 * 1024;
let scratch: Buffer | undefined;

class RowSink {
  private buf = (scratch ??= Buffer.allocUnsafe(SCRATCH_BYTES));
  private pos = 1;
  /** Rows appended so far. */
  private written = 0;
  private closed = false;

  /** `count`: the rows the page will have. */
  constructor(private readonly count: number) {
    this.buf[0] = 0x5b; // [
  }

  /** Appends `n` rows' text (`s`: the rows joined by commas). */
  rows(s: string, n: number): void {
    // Worst case 3 bytes per UTF-16 unit, plus the separator.
    const need = this.pos + s.length * 3 + 2;
    if (need > this.buf.length) {
      // Sized for the whole page from the rows so far (+1/8), so that a large
      // page grows once or twice rather than doubling from 64 KB: each
      // megabyte-sized step was a copy and external memory for V8 to count.
      const estimate = this.written > 0 ? Math.ceil((this.pos / this.written) * this.count * 1.125) : 0;
      const nb = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2, estimate));
      this.buf.copy(nb, 0, 0, this.pos);
      this.buf = nb;
    }
    if (this.written > 0) this.buf[this.pos++] = 0x2c; // ,
    this.written += n;
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }

  /** The page's length in bytes, with its closing bracket (before close). */
  get length(): number {
    return this.pos + 1;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
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

/** Encodes single values (query-parameter echo, tests). */
export function encodeCell(type: SqlType, v: Value, opts: WireOptions): string {
  return fieldCell(type, opts)(v);
}

export { Decimal };
