// insertAll rows bytes -> column builders in one pass, without row objects
// (and newline-delimited JSON load files the same way: scanNdjson).
//
// JSON.parse of a 500-row request builds a few thousand objects and strings
// that die with the request; under the engine's small young generation the
// scavenger copies whatever is live when it runs, so a collection during a
// request copied the whole parsed tree. This scanner reads the bytes once and
// writes each cell into its column: plain strings, numbers and literals are
// read from the bytes (byte forms of setCell's fast paths, same results);
// escaped strings, objects and arrays are decoded by JSON.parse of just their
// slice and go through setCell. Anything unusual (invalid JSON, a row or
// `json` that is not an object, duplicate or escaped keys, a key matching a
// column only case-insensitively) makes it give up (null): the caller then
// runs convertRows over JSON.parse of the whole text, the reference for
// every value, error and message.
import type { Column } from '../types/schema.js';
import type { SqlType } from '../types/types.js';
import { LOADED_BOOL, ValueConversionError } from '../types/json-values.js';
import {
  ColumnBuilder,
  conversionError,
  dateOnlyTimestamp,
  decimalAt,
  fastDateAt,
  fastIntAt,
  fastTimestampAt,
  missingRequired,
  plainNumericAt,
  setCell,
  type CellError,
  type InsertError,
  type RecentIds,
  type RowsConversion,
} from './json-rows.js';
import { idHash, IdSet } from './id-set.js';

/** Node's Buffer slicing decoders: what Buffer.toString calls, without its argument handling. */
interface Slices {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}
type Bytes = Buffer & Slices;

/** Thrown inside the scanner to give up; never escapes scanRows. */
const GIVE_UP = new Error('insert-scan: left to the generic path');

// Value tokens.
const T_STR = 0; // string without escapes: bytes [vs, ve) between the quotes
const T_ESC = 1; // string with escapes: same bounds
const T_NUM = 2;
const T_TRUE = 3;
const T_FALSE = 4;
const T_NULL = 5;
const T_COMPOSITE = 6; // object or array: [vs, ve) including brackets

// Column kinds with a byte-level converter.
export const K_OTHER = 0;
export const K_STRING = 1;
export const K_INT64 = 2;
export const K_FLOAT64 = 3;
export const K_BOOL = 4;
export const K_TIMESTAMP = 5;
export const K_DATE = 6;
export const K_NUMERIC = 7;

/** V8's SlicedString::kMinLength: shorter substrings are copies. */
const SLICED_MIN = 13;
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];
const JSON_KEY = Buffer.from('json');
const INSERT_ID_KEY = Buffer.from('insertId');

/**
 * Whether scanRows can take rows for these columns: names that a byte
 * comparison matches exactly as a property lookup would (well-formed
 * Unicode) and that no object inherits (`o[name]` on a parsed row would
 * find `Object.prototype`'s member where the scanner finds nothing).
 */
export function scannable(columns: readonly Column[]): boolean {
  for (const c of columns) {
    if (c.name in Object.prototype || /\p{Cs}/u.test(c.name)) return false;
  }
  return true;
}

export interface ScanOptions {
  /**
   * false only checks the rows: plain strings, NUMERICs and FLOAT64 numbers
   * (which never fail) are not made, a fifth of the scan; every field of the
   * result but the builders' values is the same, and `built` is false.
   */
  readonly build?: boolean;
  /** The bytes as latin1 text (one char per byte), when the caller has made it already. */
  readonly latin1?: string;
  /** A key that names no column gives up (the caller reports it: insertAll without ignoreUnknownValues). */
  readonly rejectUnknown?: boolean;
}

/**
 * Converts the rows array text `bytes` (UTF-8) exactly as convertRows would
 * convert JSON.parse of it, or returns null for the generic path.
 */
export function scanRows(bytes: Uint8Array, columns: readonly Column[], recentIds: RecentIds, opts: ScanOptions = {}): RowsConversion | null {
  const buf = (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)) as Bytes;
  try {
    return new Scanner(buf, opts.latin1 ?? buf.latin1Slice(0, buf.length), columns, recentIds, opts.build ?? true, opts.rejectUnknown ?? false).rows();
  } catch {
    // GIVE_UP, or anything unforeseen: the generic path answers either way.
    return null;
  }
}

/**
 * Converts newline-delimited JSON (whole lines, UTF-8; a load file's piece)
 * exactly as convertRows would convert `{json: JSON.parse(line)}` for each
 * line that is not blank, or returns null: then the caller parses the lines
 * itself (a line that is not one JSON object, or anything unusual).
 */
export function scanNdjson(bytes: Buffer, columns: readonly Column[]): RowsConversion | null {
  const buf = bytes as Bytes;
  try {
    // A JSON or BOOL field inside a RECORD or an array is the generic path's (io/json-cells.ts).
    if (columns.some((c) => (c.type.kind === 'ARRAY' || c.type.kind === 'STRUCT') && holdsJsonOrBool(c.type))) return null;
    return new Scanner(buf, buf.latin1Slice(0, buf.length), columns, NO_IDS, true, false, true).ndjsonRows();
  } catch {
    return null;
  }
}

const NO_IDS: RecentIds = { has: () => false };

function holdsJsonOrBool(t: SqlType): boolean {
  return t.kind === 'JSON' || t.kind === 'BOOL' || (t.kind === 'ARRAY' && holdsJsonOrBool(t.element)) || (t.kind === 'STRUCT' && t.fields.some((f) => holdsJsonOrBool(f.type)));
}

/** What the scanner needs of a schema, kept per columns array (Storage caches one per table). */
interface ScanSchema {
  readonly kinds: Uint8Array;
  /** UTF-8 bytes of each column name. */
  readonly names: Buffer[];
  readonly byName: Map<string, number>;
  readonly byLower: Set<string>;
  /** 1 where the name's bytes hold no quote, backslash or control character (plainKey can match them). */
  readonly plain: Uint8Array;
}

const schemas = new WeakMap<readonly Column[], ScanSchema>();

function scanSchema(columns: readonly Column[]): ScanSchema {
  let s = schemas.get(columns);
  if (!s) {
    s = {
      kinds: Uint8Array.from(columns, (c) => kindOf(c.type.kind)),
      names: columns.map((c) => Buffer.from(c.name)),
      byName: new Map(columns.map((c, i) => [c.name, i])),
      byLower: new Set(columns.map((c) => c.name.toLowerCase())),
      plain: Uint8Array.from(columns, (c) => (/["\\\u0000-\u001f]/.test(c.name) ? 0 : 1)),
    };
    schemas.set(columns, s);
  }
  return s;
}

class Scanner {
  private p = 0;
  private readonly len: number;
  // The last value token read by value().
  private tok = 0;
  private vs = 0;
  private ve = 0;
  private ascii = true;
  private nDigits = 0;
  private nFrac = 0;
  private nExp = false;

  private readonly nc: number;
  private readonly kinds: Uint8Array;
  private readonly names: Buffer[];
  private readonly byName: Map<string, number>;
  private readonly byLower: Set<string>;
  private readonly plain: Uint8Array;
  private readonly builders: ColumnBuilder[];
  private capacity = 16;
  /** Row stamp per column: seen[c] === stamp when the current row named column c. */
  private readonly seen: Uint32Array;
  private stamp = 0;
  private hint = 0;
  /** Errors of the current row by column (lazily allocated), and their count. */
  private cellErrors: (CellError | undefined)[] | null = null;
  private nErrors = 0;
  private readonly stack: number[] = [];
  /**
   * `text`: the bytes as latin1 text (one char per byte). Substrings of it are made
   * in JS, where a Buffer slice is a call into C++. Only ASCII runs are read
   * from it, and only as short strings or temporaries: V8 makes a substring
   * of 13 chars or more a view of the whole text, which a stored value would
   * keep alive.
   */
  constructor(
    private readonly b: Bytes,
    private readonly text: string,
    private readonly columns: readonly Column[],
    private readonly recentIds: RecentIds,
    private readonly build: boolean,
    private readonly rejectUnknown: boolean,
    /** Newline-delimited rows of a load file: a JSON column's cell is a JSON value, not JSON text; a BOOL may be 'yes'. */
    private readonly valueJson = false,
  ) {
    if (text.length !== b.length) throw GIVE_UP;
    this.len = b.length;
    const nc = (this.nc = columns.length);
    ({ kinds: this.kinds, names: this.names, byName: this.byName, byLower: this.byLower, plain: this.plain } = scanSchema(columns));
    this.builders = columns.map((c) => new ColumnBuilder(c.type, this.capacity));
    this.seen = new Uint32Array(nc);
  }

  rows(): RowsConversion {
    const b = this.b;
    const errors: InsertError[] = [];
    const keep: number[] = [];
    const newIds: string[] = [];
    const seenInRequest = new IdSet(256);
    this.ws();
    if (b[this.p] !== 0x5b) throw GIVE_UP;
    this.p++;
    this.ws();
    let n = 0;
    let m = 0;
    if (b[this.p] === 0x5d) this.p++;
    else {
      for (;;) {
        if (m === this.capacity) this.grow(m);
        const insertId = this.row(m);
        const errs = this.rowErrors();
        // A row stored by an earlier request is not converted (its slot is
        // taken by the next row); a duplicate of a row accepted earlier in
        // this request is dropped without its errors.
        const h = insertId === undefined ? 0 : idHash(insertId);
        if (insertId !== undefined && this.recentIds.has(insertId, h)) {
          // Converted before its id was read: the slot goes back to unwritten.
          for (const bl of this.builders) bl.clear(m);
        } else {
          const slot = m++;
          if (insertId === undefined || !seenInRequest.has(insertId, h)) {
            if (errs !== null) errors.push({ index: n, errors: errs });
            else {
              keep.push(slot);
              if (insertId !== undefined) {
                seenInRequest.add(insertId, h);
                newIds.push(insertId);
              }
            }
          }
        }
        n++;
        if (!this.more(0x5d)) break;
      }
    }
    this.ws();
    if (this.p !== this.len) throw GIVE_UP;
    return { n, m, builders: this.builders, errors, keep, newIds, built: this.build };
  }

  /** Newline-delimited objects, one per line (blank lines skipped); no insertIds. */
  ndjsonRows(): RowsConversion {
    const b = this.b;
    const len = this.len;
    const errors: InsertError[] = [];
    const keep: number[] = [];
    let m = 0;
    for (;;) {
      this.ws();
      if (this.p >= len) break;
      const start = this.p;
      if (b[start] !== 0x7b) throw GIVE_UP;
      if (m === this.capacity) this.grow(m);
      this.object(m);
      // The object is the whole of its line: no line break inside, only spaces after it.
      const nl = b.indexOf(0x0a, start);
      if (nl >= 0 && nl < this.p) throw GIVE_UP;
      let p = this.p;
      while (p < len && (b[p] === 0x20 || b[p] === 0x09 || b[p] === 0x0d)) p++;
      if (p < len && b[p] !== 0x0a) throw GIVE_UP;
      this.p = p;
      const errs = this.rowErrors();
      if (errs !== null) errors.push({ index: m, errors: errs });
      else keep.push(m);
      m++;
    }
    return { n: m, m, builders: this.builders, errors, keep, newIds: [], built: true };
  }

  /** Room for more rows, projected from the bytes per row so far. */
  private grow(m: number): void {
    const perRow = this.p / Math.max(1, m);
    this.capacity = Math.max(this.capacity * 2, Math.ceil((this.len / perRow) * 1.05) + 4);
    for (const bl of this.builders) bl.grow(this.capacity);
  }

  /** One `{insertId?, json}` item into slot k; returns its insertId. */
  private row(k: number): string | undefined {
    const b = this.b;
    if (b[this.p] !== 0x7b) throw GIVE_UP;
    this.p++;
    this.ws();
    let sawJson = false;
    let sawId = false;
    let insertId: string | undefined;
    if (b[this.p] === 0x7d) throw GIVE_UP;
    for (;;) {
      let key = 0; // 1: json, 2: insertId, 0: another
      if (this.plainKey(JSON_KEY)) key = 1;
      else if (this.plainKey(INSERT_ID_KEY)) key = 2;
      else this.key();
      if (key === 1) {
        if (sawJson || b[this.p] !== 0x7b) throw GIVE_UP;
        sawJson = true;
        this.object(k);
      } else if (key === 2) {
        if (sawId) throw GIVE_UP;
        sawId = true;
        this.value();
        if (this.tok === T_STR) insertId = this.ve > this.vs ? this.str() : undefined;
        else if (this.tok === T_ESC) insertId = (this.jsValue() as string) || undefined;
        else if (this.tok === T_COMPOSITE) throw GIVE_UP;
      } else this.skipValue();
      if (!this.more(0x7d)) break;
    }
    if (!sawJson) throw GIVE_UP;
    return insertId;
  }

  /** The row's `json` object into slot k. */
  private object(k: number): void {
    const b = this.b;
    const nc = this.nc;
    const stamp = ++this.stamp;
    const seen = this.seen;
    let named = 0;
    this.hint = 0;
    this.p++;
    this.ws();
    if (b[this.p] === 0x7d) this.p++;
    else {
      for (;;) {
        // Keys mostly come in schema order: the next column's name is tried first.
        const h = this.hint;
        let c: number;
        if (h < nc && this.plain[h] === 1 && this.plainKey(this.names[h]!)) {
          c = h;
          this.hint = h + 1;
        } else {
          const ks = this.key();
          c = this.column(ks, this.ve, this.ascii);
        }
        this.value();
        if (c >= 0) {
          if (seen[c] === stamp) throw GIVE_UP; // duplicate key: JSON.parse keeps the last
          seen[c] = stamp;
          named++;
          this.cell(c, k);
        } else if (this.tok === T_ESC || this.tok === T_COMPOSITE) this.jsValue(); // validates it
        if (!this.more(0x7d)) break;
      }
    }
    if (named < nc) {
      for (let c = 0; c < nc; c++) {
        if (seen[c] === stamp) continue;
        const col = this.columns[c]!;
        if (col.required) this.fail(c, k, missingRequired(col.name));
        else this.convert(c, k, undefined);
      }
    }
  }

  /** The column a key names exactly, or -1 for an unknown key. */
  private column(ks: number, ke: number, ascii: boolean): number {
    const h = this.hint;
    if (h < this.nc && equalAt(this.b, ks, ke, this.names[h]!)) {
      this.hint = h + 1;
      return h;
    }
    const key = ascii ? this.text.substring(ks, ke) : this.b.utf8Slice(ks, ke);
    const c = this.byName.get(key);
    if (c !== undefined) {
      this.hint = c + 1;
      return c;
    }
    // A case-insensitive match: the generic path's lookup rules.
    if (this.byLower.has(key.toLowerCase()) || this.rejectUnknown) throw GIVE_UP;
    return -1;
  }

  /** Converts the current token into column c, slot k. */
  private cell(c: number, k: number): void {
    const tok = this.tok;
    const bl = this.builders[c]!;
    const b = this.b;
    switch (this.kinds[c]) {
      case K_STRING:
        if (tok === T_STR) {
          if (this.build) bl.setValue(k, this.str());
          return;
        }
        break;
      case K_INT64:
        if (tok === T_NUM) {
          if (!this.nExp && this.nFrac === 0 && this.nDigits <= 15) return bl.setNumber(k, this.num());
        } else if (tok === T_STR) {
          const x = fastIntAt(b, this.vs, this.ve);
          if (!Number.isNaN(x)) return bl.setNumber(k, x);
        }
        break;
      case K_FLOAT64:
        if (tok === T_NUM) {
          if (this.build) bl.setNumber(k, this.num());
          return;
        }
        break;
      case K_BOOL:
        if (tok === T_TRUE) return bl.setNumber(k, 1);
        if (tok === T_FALSE) return bl.setNumber(k, 0);
        if (tok === T_STR && this.valueJson) {
          // A load file's BOOL string in any of its spellings (io/json-cells.ts).
          const b = LOADED_BOOL.get(this.str().toLowerCase());
          if (b !== undefined) return bl.setNumber(k, b === 'true' ? 1 : 0);
        }
        break;
      case K_TIMESTAMP:
        if (tok === T_STR) {
          // A load file's TIMESTAMP needs a time part (json-rows.ts dateOnlyTimestamp).
          const dateOnly = this.valueJson && this.ve - this.vs <= 16 ? dateOnlyTimestamp(this.columns[c]!.name, this.str()) : undefined;
          if (dateOnly) return this.fail(c, k, dateOnly);
          const x = fastTimestampAt(b, this.vs, this.ve);
          if (!Number.isNaN(x)) return bl.setNumber(k, x);
        }
        break;
      case K_DATE:
        if (tok === T_STR) {
          const x = fastDateAt(b, this.vs, this.ve);
          if (!Number.isNaN(x)) return bl.setNumber(k, x);
        }
        break;
      case K_NUMERIC:
        if (tok === T_STR && plainNumericAt(b, this.vs, this.ve)) {
          if (this.build) bl.setValue(k, decimalAt(b, this.vs, this.ve));
          return;
        }
        break;
    }
    if (tok === T_NULL && this.columns[c]!.required) return this.fail(c, k, missingRequired(this.columns[c]!.name));
    const v = this.jsValue(); // validates a composite (JSON.parse of its slice)
    // A newline-delimited file's JSON cell is the value itself: its text, as an insertAll cell holds it (io/json-cells.ts).
    if (this.valueJson && tok !== T_NULL && this.columns[c]!.type.kind === 'JSON') return this.convert(c, k, this.tokenText());
    this.convert(c, k, v);
  }

  /** setCell with the generic path's error handling. */
  private convert(c: number, k: number, v: unknown): void {
    const col = this.columns[c]!;
    try {
      setCell(this.builders[c]!, k, col.type, v);
    } catch (e) {
      // Anything else is the generic path's to throw (with its own message).
      if (!(e instanceof ValueConversionError)) throw GIVE_UP;
      this.fail(c, k, conversionError(col.name, e));
    }
  }

  /** Records a cell error (the cell stays unwritten, as in the generic path). */
  private fail(c: number, _k: number, err: CellError): void {
    this.cellErrors ??= new Array<CellError | undefined>(this.nc);
    this.cellErrors[c] = err;
    this.nErrors++;
  }

  /** The current row's errors in column order (as the generic path lists them), or null. */
  private rowErrors(): CellError[] | null {
    if (this.nErrors === 0) return null;
    const out: CellError[] = [];
    const ce = this.cellErrors!;
    for (let c = 0; c < this.nc; c++) {
      if (ce[c] !== undefined) {
        out.push(ce[c]!);
        ce[c] = undefined;
      }
    }
    this.nErrors = 0;
    return out;
  }

  // --- tokens ---------------------------------------------------------------

  /**
   * After a member or element: true past a comma (and the whitespace after
   * it), false past the closing bracket `close`; anything else gives up.
   */
  private more(close: number): boolean {
    this.ws();
    const c = this.b[this.p++];
    if (c === 0x2c) {
      this.ws();
      return true;
    }
    if (c === close) return false;
    throw GIVE_UP;
  }

  private ws(): void {
    const b = this.b;
    let p = this.p;
    let c = b[p]!;
    if (c > 0x20) return; // compact JSON: no whitespace, one comparison
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = b[++p]!;
    this.p = p;
  }

  /**
   * At a key: when it is exactly `name` (bytes without quotes, backslashes
   * or control characters), skips it and its colon.
   */
  private plainKey(name: Uint8Array): boolean {
    const b = this.b;
    const p = this.p;
    const n = name.length;
    if (b[p] !== 0x22 || b[p + 1 + n] !== 0x22) return false;
    for (let i = 0; i < n; i++) if (b[p + 1 + i] !== name[i]) return false;
    this.p = p + 2 + n;
    this.ws();
    if (b[this.p] !== 0x3a) throw GIVE_UP;
    this.p++;
    this.ws();
    return true;
  }

  /** A key (no escapes) and its colon; returns its start, ve its end, ascii set. */
  private key(): number {
    if (this.b[this.p] !== 0x22) throw GIVE_UP;
    this.string();
    if (this.tok !== T_STR) throw GIVE_UP;
    const ks = this.vs;
    this.ws();
    if (this.b[this.p] !== 0x3a) throw GIVE_UP;
    this.p++;
    this.ws();
    return ks;
  }

  /** The string at p (at its quote). */
  private string(): void {
    const b = this.b;
    const len = this.len;
    let i = this.p + 1;
    let ascii = true;
    let esc = false;
    for (;;) {
      if (i >= len) throw GIVE_UP;
      const c = b[i]!;
      if (c === 0x22) break;
      if (c === 0x5c) {
        esc = true;
        i += 2;
        continue;
      }
      if (c < 0x20) throw GIVE_UP;
      if (c >= 0x80) ascii = false;
      i++;
    }
    this.tok = esc ? T_ESC : T_STR;
    this.vs = this.p + 1;
    this.ve = i;
    this.ascii = ascii;
    this.p = i + 1;
  }

  /** The value at p. */
  private value(): void {
    const b = this.b;
    const c = b[this.p];
    if (c === 0x22) return this.string();
    if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) return this.number();
    if (c === 0x7b || c === 0x5b) return this.composite();
    const p = this.p;
    if (c === 0x74 && b[p + 1] === 0x72 && b[p + 2] === 0x75 && b[p + 3] === 0x65) {
      this.tok = T_TRUE;
      this.p = p + 4;
    } else if (c === 0x66 && b[p + 1] === 0x61 && b[p + 2] === 0x6c && b[p + 3] === 0x73 && b[p + 4] === 0x65) {
      this.tok = T_FALSE;
      this.p = p + 5;
    } else if (c === 0x6e && b[p + 1] === 0x75 && b[p + 2] === 0x6c && b[p + 3] === 0x6c) {
      this.tok = T_NULL;
      this.p = p + 4;
    } else throw GIVE_UP;
  }

  private skipValue(): void {
    this.value();
    if (this.tok === T_ESC || this.tok === T_COMPOSITE) this.jsValue(); // validates it
  }

  /** A JSON number: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? */
  private number(): void {
    const b = this.b;
    const s = this.p;
    let i = s;
    if (b[i] === 0x2d) i++;
    const intStart = i;
    if (b[i] === 0x30) i++;
    else if (isDigit(b[i])) while (isDigit(b[i])) i++;
    else throw GIVE_UP;
    const intDigits = i - intStart;
    let frac = 0;
    if (b[i] === 0x2e) {
      const fs = ++i;
      while (isDigit(b[i])) i++;
      frac = i - fs;
      if (frac === 0) throw GIVE_UP;
    }
    let exp = false;
    if (b[i] === 0x65 || b[i] === 0x45) {
      i++;
      if (b[i] === 0x2b || b[i] === 0x2d) i++;
      const es = i;
      while (isDigit(b[i])) i++;
      if (i === es) throw GIVE_UP;
      exp = true;
    }
    this.tok = T_NUM;
    this.vs = s;
    this.ve = i;
    this.nDigits = intDigits + frac;
    this.nFrac = frac;
    this.nExp = exp;
    this.p = i;
  }

  /**
   * The current number's value as JSON.parse reads it: up to 15 digits and
   * no exponent is an exact integer over an exact power of ten, so one
   * (correctly rounded) division; anything else is parsed from its text.
   */
  private num(): number {
    if (this.nExp || this.nDigits > 15) return Number(this.text.substring(this.vs, this.ve));
    const b = this.b;
    let m = 0;
    for (let i = this.vs; i < this.ve; i++) {
      const d = b[i]!;
      if (d >= 0x30) m = m * 10 + (d - 0x30);
    }
    const v = this.nFrac > 0 ? m / POW10[this.nFrac]! : m;
    return b[this.vs] === 0x2d ? -v : v;
  }

  /** An object or array: finds its end (matching brackets outside strings); JSON.parse validates it when it is read. */
  private composite(): void {
    const b = this.b;
    const len = this.len;
    const stack = this.stack;
    stack.length = 0;
    const s = this.p;
    let i = s;
    for (;;) {
      if (i >= len) throw GIVE_UP;
      const c = b[i]!;
      if (c === 0x22) {
        i++;
        for (;;) {
          if (i >= len) throw GIVE_UP;
          const d = b[i]!;
          if (d === 0x22) break;
          i += d === 0x5c ? 2 : 1;
        }
      } else if (c === 0x7b || c === 0x5b) stack.push(c + 2); // the closing bracket
      else if (c === 0x7d || c === 0x5d) {
        if (stack.pop() !== c) throw GIVE_UP;
        if (stack.length === 0) break;
      }
      i++;
    }
    this.tok = T_COMPOSITE;
    this.vs = s;
    this.ve = i + 1;
    this.p = i + 1;
  }

  /** The current plain string (a string of its own, never a view of the text). */
  private str(): string {
    if (!this.ascii) return this.b.utf8Slice(this.vs, this.ve);
    return this.ve - this.vs < SLICED_MIN ? this.text.substring(this.vs, this.ve) : this.b.latin1Slice(this.vs, this.ve);
  }

  /** The current token's JSON text, a string's quotes included. */
  private tokenText(): string {
    const str = this.tok === T_STR || this.tok === T_ESC;
    return this.b.utf8Slice(str ? this.vs - 1 : this.vs, str ? this.ve + 1 : this.ve);
  }

  /** The current token as JSON.parse of the whole text has it. */
  private jsValue(): unknown {
    switch (this.tok) {
      case T_STR:
        return this.str();
      case T_NUM:
        return this.num();
      case T_TRUE:
        return true;
      case T_FALSE:
        return false;
      case T_NULL:
        return null;
      case T_ESC:
        return parseSlice(this.b, this.vs - 1, this.ve + 1);
      default:
        return parseSlice(this.b, this.vs, this.ve);
    }
  }
}

function parseSlice(b: Bytes, s: number, e: number): unknown {
  try {
    return JSON.parse(b.utf8Slice(s, e));
  } catch {
    throw GIVE_UP; // invalid JSON: the generic path gives the request's error
  }
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

function equalAt(b: Uint8Array, s: number, e: number, name: Uint8Array): boolean {
  const n = name.length;
  if (e - s !== n) return false;
  for (let i = 0; i < n; i++) if (b[s + i] !== name[i]) return false;
  return true;
}

/** A column type's fast-path kind (K_*), shared with the CSV byte scanner (io/csv-bytes.ts). */
export function kindOf(kind: string): number {
  switch (kind) {
    case 'STRING':
      return K_STRING;
    case 'INT64':
      return K_INT64;
    case 'FLOAT64':
      return K_FLOAT64;
    case 'BOOL':
      return K_BOOL;
    case 'TIMESTAMP':
      return K_TIMESTAMP;
    case 'DATE':
      return K_DATE;
    case 'NUMERIC':
      return K_NUMERIC;
    default:
      return K_OTHER;
  }
}
