// CSV bytes -> column builders, without a string per cell: the records of a
// buffer are scanned for their cells' byte ranges, then each column's cells
// are converted from the bytes (the byte forms of setCell's fast paths:
// integers, decimals, dates, timestamps, booleans), strings decoded once
// from the bytes, and anything else (spaces, exponents, other forms,
// every error) goes through setCell with the cell's text, so results and
// messages are the same as the string parser's (CsvParser + csvRow). It
// reads what CsvParser reads: a delimiter and quote of one ASCII byte each
// (quote may be none), records ending at \n, \r\n or \r, blank lines
// skipped, a quote opening a quoted field only at the field's start, `""`
// inside one a quote, text after its closing quote appended, an unquoted
// empty field NULL and a quoted one ''. Other delimiters take CsvParser.
import { ColumnBuilder, decimalAt, fastDateAt, fastIntAt, fastTimestampAt, plainNumericAt } from '../storage/json-rows.js';
import { K_BOOL, K_DATE, K_FLOAT64, K_INT64, K_NUMERIC, K_STRING, K_TIMESTAMP } from '../storage/insert-scan.js';

/** Node's Buffer slicing decoders (what Buffer.toString calls, without its argument handling). */
type Bytes = Buffer & { latin1Slice(start: number, end: number): string; utf8Slice(start: number, end: number): string };

/** V8's SlicedString::kMinLength: shorter substrings of the chunk's text are copies, longer ones would keep it alive. */
const SLICED_MIN = 13;
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

// Cell kinds.
export const C_NULL = 0; // unquoted and empty
export const C_PLAIN = 1; // bytes [s, e) as they are (unquoted, or quoted without escapes)
export const C_TEXT = 2; // text in `texts` (escaped quotes, text after a closing quote)

/** Whether a delimiter and quote can be scanned as bytes. */
export function byteScannable(delimiter: string, quote: string): boolean {
  const ok = (c: string): boolean => c.length === 1 && c.charCodeAt(0) < 0x80 && c !== '\n' && c !== '\r';
  return ok(delimiter) && (quote === '' || (ok(quote) && quote !== delimiter));
}

/** The cells of the complete records of one buffer. */
export class CsvCells {
  /** Records found; record r's cells are [first[r], first[r + 1]). */
  records = 0;
  first = new Int32Array(1024);
  cells = 0;
  start = new Int32Array(8192);
  end = new Int32Array(8192);
  kind = new Uint8Array(8192);
  /** 1 where a cell's bytes include a non-ASCII byte. */
  wide = new Uint8Array(8192);
  texts: (string | undefined)[] = [];
  /** The buffer the ranges are in, and its latin1 text (made when a cell needs it). */
  buf!: Bytes;
  private latin1: string | null = null;

  reset(buf: Bytes): void {
    this.records = 0;
    this.cells = 0;
    this.texts.length = 0;
    this.buf = buf;
    this.latin1 = null;
    this.first[0] = 0;
  }

  addCell(s: number, e: number, kind: number, wide: number, text?: string): void {
    if (this.cells === this.start.length) this.growCells();
    const i = this.cells++;
    this.start[i] = s;
    this.end[i] = e;
    this.kind[i] = kind;
    this.wide[i] = wide;
    if (text !== undefined) this.texts[i] = text;
  }

  /** Ends a record at the cells added since the last one; a blank line (one NULL cell) is dropped. */
  endRecord(from: number): void {
    if (this.cells - from === 1 && this.kind[from] === C_NULL) {
      this.cells = from;
      return;
    }
    if (this.records + 2 > this.first.length) {
      const a = new Int32Array(this.first.length * 2);
      a.set(this.first);
      this.first = a;
    }
    this.first[++this.records] = this.cells;
  }

  /** The text of cell i (undefined: NULL). */
  text(i: number): string | undefined {
    const k = this.kind[i];
    if (k === C_NULL) return undefined;
    if (k === C_TEXT) return this.texts[i]!;
    const s = this.start[i]!;
    const e = this.end[i]!;
    if (this.wide[i]) return this.buf.utf8Slice(s, e);
    if (e - s >= SLICED_MIN) return this.buf.latin1Slice(s, e);
    this.latin1 ??= this.buf.latin1Slice(0, this.buf.length);
    return this.latin1.substring(s, e);
  }

  private growCells(): void {
    const n = this.start.length * 2;
    const grow = <T extends Int32Array | Uint8Array>(a: T, b: T): T => (b.set(a), b);
    this.start = grow(this.start, new Int32Array(n));
    this.end = grow(this.end, new Int32Array(n));
    this.kind = grow(this.kind, new Uint8Array(n));
    this.wide = grow(this.wide, new Uint8Array(n));
  }
}

/**
 * Scans the complete records of `b` from `from` into `out`; returns where
 * the first incomplete one starts (b.length when none), which the caller
 * keeps for the next buffer. `last`: b ends the input (a final record needs
 * no line break; an unclosed quote runs to the end).
 */
export function scanCsv(b: Bytes, from: number, last: boolean, delimiter: number, quote: number, out: CsvCells): number {
  out.reset(b);
  const len = b.length;
  let p = from;
  record: while (p < len) {
    const recStart = p;
    const firstCell = out.cells;
    for (;;) {
      // One field from p.
      if (b[p] === quote) {
        const s = p + 1;
        let q = s;
        let escaped = false;
        let e: number;
        for (;;) {
          const j = b.indexOf(quote, q);
          if (j < 0 || (j === len - 1 && !last)) {
            // The closing quote (or what follows it) is in the next buffer.
            if (!last) {
              out.cells = firstCell;
              return recStart;
            }
            // An unclosed quote at the end runs to it.
            e = j < 0 ? len : j;
            q = len;
            break;
          }
          if (b[j + 1] === quote) {
            escaped = true;
            q = j + 2;
            continue;
          }
          e = j;
          q = j + 1;
          break;
        }
        // Text after the closing quote, up to the field's end, is part of it.
        let t = q;
        while (t < len) {
          const c = b[t]!;
          if (c === delimiter || c === 10 || c === 13) break;
          t++;
        }
        if (t === len && !last) {
          out.cells = firstCell;
          return recStart;
        }
        if (!escaped && t === q) out.addCell(s, e, C_PLAIN, wideAt(b, s, e));
        else {
          const body = b.utf8Slice(s, e);
          const unescaped = escaped ? body.split(String.fromCharCode(quote, quote)).join(String.fromCharCode(quote)) : body;
          out.addCell(s, e, C_TEXT, 0, unescaped + (t > q ? b.utf8Slice(q, t) : ''));
        }
        p = t;
      } else {
        const s = p;
        let wide = 0;
        while (p < len) {
          const c = b[p]!;
          if (c === delimiter || c === 10 || c === 13) break;
          wide |= c >> 7;
          p++;
        }
        if (p === len && !last) {
          out.cells = firstCell;
          return recStart;
        }
        out.addCell(s, p, p === s ? C_NULL : C_PLAIN, wide);
      }
      // The field's end: a delimiter, a line break, or the input's end.
      if (p >= len) {
        out.endRecord(firstCell);
        break record;
      }
      const c = b[p]!;
      if (c === delimiter) {
        p++;
        if (p === len) {
          if (!last) {
            out.cells = firstCell;
            return recStart;
          }
          out.addCell(p, p, C_NULL, 0);
          out.endRecord(firstCell);
          break record;
        }
        continue;
      }
      if (c === 13) {
        if (p + 1 === len && !last) {
          // \r\n may straddle the buffers.
          out.cells = firstCell;
          return recStart;
        }
        p += b[p + 1] === 10 ? 2 : 1;
      } else p++;
      out.endRecord(firstCell);
      continue record;
    }
  }
  return len;
}

function wideAt(b: Uint8Array, s: number, e: number): number {
  for (let i = s; i < e; i++) if (b[i]! >= 0x80) return 1;
  return 0;
}

/**
 * Sets slot k of builder `bl` (a column of kind `kind`) from plain cell i's
 * bytes when a fast path takes them; false when the cell's text must go
 * through setCell.
 */
export function setPlain(cells: CsvCells, i: number, kind: number, bl: ColumnBuilder, k: number): boolean {
  const b = cells.buf;
  const s = cells.start[i]!;
  const e = cells.end[i]!;
  switch (kind) {
    case K_STRING:
      bl.setValue(k, cells.text(i)!);
      return true;
    case K_INT64: {
      const x = fastIntAt(b, s, e);
      if (Number.isNaN(x)) return false;
      bl.setNumber(k, x);
      return true;
    }
    case K_FLOAT64: {
      let x = plainFloatAt(b, s, e);
      // More digits or an exponent: what parseFloat64 gives a cell of that form (Number of its text).
      if (Number.isNaN(x) && floatSyntaxAt(b, s, e)) x = Number(cells.text(i));
      if (Number.isNaN(x)) return false;
      bl.setNumber(k, x);
      return true;
    }
    case K_BOOL:
      if (e - s === 4 && b[s] === 0x74 && b[s + 1] === 0x72 && b[s + 2] === 0x75 && b[s + 3] === 0x65) bl.setNumber(k, 1);
      else if (e - s === 5 && b[s] === 0x66 && b[s + 1] === 0x61 && b[s + 2] === 0x6c && b[s + 3] === 0x73 && b[s + 4] === 0x65) bl.setNumber(k, 0);
      else return false;
      return true;
    case K_TIMESTAMP: {
      // A date alone is read by the slow path, which refuses it in a load (load-files.ts csvText).
      const colon = b.indexOf(0x3a, s);
      if (e - s <= 16 && (colon < 0 || colon >= e)) return false;
      const x = fastTimestampAt(b, s, e);
      if (Number.isNaN(x)) return false;
      bl.setNumber(k, x);
      return true;
    }
    case K_DATE: {
      const x = fastDateAt(b, s, e);
      if (Number.isNaN(x)) return false;
      bl.setNumber(k, x);
      return true;
    }
    case K_NUMERIC:
      if (!plainNumericAt(b, s, e)) return false;
      bl.setValue(k, decimalAt(b, s, e));
      return true;
    default:
      return false;
  }
}

/**
 * `[+-]?d+(.d+)?` of at most 15 digits as the double Number() gives
 * (an exact integer over an exact power of ten: one correctly rounded
 * division), else NaN.
 */
function plainFloatAt(b: Uint8Array, s: number, e: number): number {
  let i = s;
  const sign = b[i];
  if (sign === 0x2d || sign === 0x2b) i++;
  let m = 0;
  let digits = 0;
  let frac = -1;
  for (; i < e; i++) {
    const c = b[i]!;
    if (c === 0x2e) {
      if (frac >= 0) return NaN;
      frac = 0;
      continue;
    }
    const d = c - 0x30;
    if (d < 0 || d > 9) return NaN;
    m = m * 10 + d;
    digits++;
    if (frac >= 0) frac++;
  }
  if (digits === 0 || digits > 15 || frac === 0) return NaN;
  const v = frac > 0 ? m / POW10[frac]! : m;
  return sign === 0x2d ? -v : v;
}

/** Whether bytes [s, e) are `[+-]?(d+.?d*|.d+)([eE][+-]?d+)?`, the number form parseFloat64 reads with Number(). */
function floatSyntaxAt(b: Uint8Array, s: number, e: number): boolean {
  let i = s;
  if (b[i] === 0x2b || b[i] === 0x2d) i++;
  let digits = 0;
  while (i < e && b[i]! >= 0x30 && b[i]! <= 0x39) i++, digits++;
  if (i < e && b[i] === 0x2e) {
    i++;
    while (i < e && b[i]! >= 0x30 && b[i]! <= 0x39) i++, digits++;
  }
  if (digits === 0) return false;
  if (i < e && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    if (i < e && (b[i] === 0x2b || b[i] === 0x2d)) i++;
    const es = i;
    while (i < e && b[i]! >= 0x30 && b[i]! <= 0x39) i++;
    if (i === es) return false;
  }
  return i === e;
}
