// insertAll rows (REST JSON) -> a column batch. Shared by the insert path and
// by WAL replay of raw-row records, so both convert identically.
import type { Column } from '../types/schema.js';
import type { SqlType } from '../types/types.js';
import { convertJsonValue, daysFromCivil, ValueConversionError } from '../types/json-values.js';
import { Decimal, type Value } from '../types/values.js';
import { decimalAt } from '../types/decimal-words.js';

export { decimalAt };
import { layoutOf, takeVector, vectorFromValues, type Batch, type Layout, type Vector } from '../types/vector.js';

/**
 * Builds one column of an insert batch in its vector layout directly (no
 * intermediate value array, no BigInt for safe INT64). Row slots may be
 * rewritten: a rejected row's slot is reused by the next accepted row.
 */
export class ColumnBuilder {
  private readonly layout: Layout;
  private num: Float64Array | Int32Array | Uint8Array | null = null;
  private vals: Value[] | null = null;
  private nulls: Uint8Array | null = null;

  constructor(
    private readonly type: SqlType,
    private capacity: number,
  ) {
    this.layout = layoutOf(type);
    switch (this.layout) {
      case 'f64':
      case 'i64':
        this.num = new Float64Array(capacity);
        break;
      case 'i32':
        this.num = new Int32Array(capacity);
        break;
      case 'bool':
        this.num = new Uint8Array(capacity);
        break;
      default:
        this.vals = new Array<Value>(capacity);
    }
  }

  /** Room for `capacity` slots (the insert scanner learns a request's row count as it goes). */
  grow(capacity: number): void {
    if (capacity <= this.capacity) return;
    const num = this.num;
    if (num) {
      const a = num instanceof Float64Array ? new Float64Array(capacity) : num instanceof Int32Array ? new Int32Array(capacity) : new Uint8Array(capacity);
      a.set(num);
      this.num = a;
    }
    if (this.vals) this.vals.length = capacity;
    if (this.nulls) {
      const a = new Uint8Array(capacity);
      a.set(this.nulls);
      this.nulls = a;
    }
    this.capacity = capacity;
  }

  /** Slot i as never written (the insert scanner reuses the slot of a row it does not keep). */
  clear(i: number): void {
    if (this.num) this.num[i] = 0;
    if (this.vals) this.vals[i] = undefined as unknown as Value;
    if (this.nulls) this.nulls[i] = 0;
  }

  setNumber(i: number, x: number): void {
    if (this.num) {
      this.num[i] = x;
      if (this.nulls) this.nulls[i] = 0;
    } else this.set(i, this.layout === 'i64' ? BigInt(x) : x);
  }

  setValue(i: number, v: Value): void {
    if (this.vals) {
      this.vals[i] = v;
      if (this.nulls) this.nulls[i] = 0;
    } else this.set(i, v);
  }

  set(i: number, v: Value): void {
    if (v === null) {
      this.nulls ??= new Uint8Array(this.capacity);
      this.nulls[i] = 1;
      if (this.vals) this.vals[i] = null;
      return;
    }
    if (this.nulls) this.nulls[i] = 0;
    if (this.vals) {
      this.vals[i] = v;
      return;
    }
    const num = this.num!;
    switch (this.layout) {
      case 'i64': {
        const b = v as bigint;
        if (b >= -9007199254740992n && b <= 9007199254740992n) num[i] = Number(b);
        else {
          // Beyond 2^53: fall back to exact values for this batch.
          const vals = new Array<Value>(this.capacity);
          for (let j = 0; j < this.capacity; j++) vals[j] = this.nulls?.[j] ? null : BigInt(num[j]!);
          this.vals = vals;
          this.num = null;
          vals[i] = b;
        }
        return;
      }
      case 'bool':
        num[i] = v ? 1 : 0;
        return;
      default:
        num[i] = v as number;
    }
  }

  finish(n: number): Vector {
    const nulls = this.nulls ? this.nulls.subarray(0, n) : null;
    const anyNull = nulls !== null && nulls.includes(1);
    if (this.vals) {
      // The builder owns its array: it is cut to n and NULL and never-written
      // (rejected row) slots are set in place; it becomes the vector's data
      // (vectorFromValues would copy it) unless exact INT64 values need their layout.
      const vals = this.vals;
      if (vals.length !== n) vals.length = n;
      let valNulls: Uint8Array | null = null;
      for (let j = 0; j < n; j++) {
        if ((nulls !== null && nulls[j] === 1) || vals[j] === undefined || vals[j] === null) {
          vals[j] = null;
          (valNulls ??= new Uint8Array(n))[j] = 1;
        }
      }
      if (this.layout === 'i64') return vectorFromValues(this.type, vals);
      return { type: this.type, length: n, data: vals, nulls: valNulls };
    }
    const data = this.num!.length === n ? this.num! : this.num!.slice(0, n);
    return { type: this.type, length: n, data, nulls: anyNull ? nulls!.slice() : null };
  }
}

// --- cell conversion ----------------------------------------------------------
// Fast paths for the forms clients send most (canonical ISO timestamps and
// dates, integers as decimal strings, plain decimals); they produce exactly
// what convertJsonValue would, and anything else goes through it (including
// every error, so the messages are the same).

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const MICROS_PER_DAY = 86_400_000_000;

/** Value of the decimal digits s[from, to), or -1 when any is not a digit. */
function digits(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Days of a `YYYY-MM-DD` prefix of s (years 1000-9999), or NaN. */
function isoDays(s: string): number {
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return NaN;
  const y = digits(s, 0, 4), m = digits(s, 5, 7), d = digits(s, 8, 10);
  if (y < 1000 || m < 1 || m > 12 || d < 1) return NaN;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  if (d > (m === 2 && leap ? 29 : DAYS_IN_MONTH[m - 1]!)) return NaN;
  return daysFromCivil(y, m, d);
}

/** `YYYY-MM-DD`. */
function fastDate(s: string): number {
  return s.length === 10 ? isoDays(s) : NaN;
}

/**
 * `YYYY-MM-DD[T ]HH:MM:SS[.f{1,6}][Z]` for years 1700-2200 (UTC micros well
 * inside 2^53, so a double is exact), or NaN.
 */
function fastTimestamp(s: string): number {
  const n = s.length;
  if (n < 19 || n > 27) return NaN;
  const sep = s.charCodeAt(10);
  if ((sep !== 84 && sep !== 116 && sep !== 32) || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return NaN;
  const year = digits(s, 0, 4);
  if (year < 1700 || year > 2200) return NaN;
  const days = isoDays(s);
  const h = digits(s, 11, 13), mi = digits(s, 14, 16), sec = digits(s, 17, 19);
  if (Number.isNaN(days) || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59) return NaN;
  let end = n;
  const last = s.charCodeAt(n - 1);
  if (last === 90 || last === 122) end--;
  let micros = 0;
  if (end > 19) {
    if (s.charCodeAt(19) !== 46 || end === 20 || end > 26) return NaN;
    const f = digits(s, 20, end);
    if (f < 0) return NaN;
    micros = f * 10 ** (26 - end);
  }
  return days * MICROS_PER_DAY + ((h * 60 + mi) * 60 + sec) * 1e6 + micros;
}

/** `-?d{1,15}` as a number (exact), or NaN. */
function fastInt(s: string): number {
  const n = s.length;
  const neg = n > 0 && s.charCodeAt(0) === 45 ? 1 : 0;
  if (n - neg < 1 || n - neg > 15) return NaN;
  const x = digits(s, neg, n);
  if (x < 0) return NaN;
  return neg ? -x || 0 : x;
}

/** `-?d{1,29}(.d{1,9})?`: within NUMERIC's range and scale, so no rounding or range check applies. */
function plainNumeric(s: string): boolean {
  const n = s.length;
  let i = n > 0 && s.charCodeAt(0) === 45 ? 1 : 0;
  const intStart = i;
  while (i < n && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
  const intLen = i - intStart;
  if (intLen < 1 || intLen > 29) return false;
  if (i === n) return true;
  if (s.charCodeAt(i) !== 46) return false;
  const fracStart = ++i;
  while (i < n && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
  return i === n && i - fracStart >= 1 && i - fracStart <= 9;
}

// Byte versions of the fast paths above, for the insert scanner
// (insert-scan.ts): the same checks over ASCII bytes b[s, e), the same results.

/** Value of the decimal digits b[from, to), or -1 when any is not a digit. */
function digitsAt(b: Uint8Array, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = b[i]! - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** The two digits b[i], b[i + 1], or -1. */
function d2(b: Uint8Array, i: number): number {
  const x = b[i]! - 48;
  const y = b[i + 1]! - 48;
  return x >= 0 && x <= 9 && y >= 0 && y <= 9 ? x * 10 + y : -1;
}

/** isoDays over bytes, given the year already read (-1 when not digits). */
function isoDaysAt(b: Uint8Array, s: number, y: number): number {
  if (b[s + 4] !== 45 || b[s + 7] !== 45) return NaN;
  const m = d2(b, s + 5), d = d2(b, s + 8);
  if (y < 1000 || m < 1 || m > 12 || d < 1) return NaN;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  if (d > (m === 2 && leap ? 29 : DAYS_IN_MONTH[m - 1]!)) return NaN;
  return daysFromCivil(y, m, d);
}

function yearAt(b: Uint8Array, s: number): number {
  const hi = d2(b, s), lo = d2(b, s + 2);
  return hi < 0 || lo < 0 ? -1 : hi * 100 + lo;
}

/** fastDate over bytes. */
export function fastDateAt(b: Uint8Array, s: number, e: number): number {
  return e - s === 10 ? isoDaysAt(b, s, yearAt(b, s)) : NaN;
}

const FRACTION_SCALE = [1e6, 1e5, 1e4, 1e3, 100, 10, 1];

/** fastTimestamp over bytes. */
export function fastTimestampAt(b: Uint8Array, s: number, e: number): number {
  const n = e - s;
  if (n < 19 || n > 27) return NaN;
  const sep = b[s + 10];
  if ((sep !== 84 && sep !== 116 && sep !== 32) || b[s + 13] !== 58 || b[s + 16] !== 58) return NaN;
  const year = yearAt(b, s);
  if (year < 1700 || year > 2200) return NaN;
  const days = isoDaysAt(b, s, year);
  const h = d2(b, s + 11), mi = d2(b, s + 14), sec = d2(b, s + 17);
  if (Number.isNaN(days) || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59) return NaN;
  let end = n;
  const last = b[e - 1];
  if (last === 90 || last === 122) end--;
  let micros = 0;
  if (end > 19) {
    if (b[s + 19] !== 46 || end === 20 || end > 26) return NaN;
    const f = digitsAt(b, s + 20, s + end);
    if (f < 0) return NaN;
    micros = f * FRACTION_SCALE[end - 20]!; // 10 ** (26 - end)
  }
  return days * MICROS_PER_DAY + ((h * 60 + mi) * 60 + sec) * 1e6 + micros;
}

/** fastInt over bytes. */
export function fastIntAt(b: Uint8Array, s: number, e: number): number {
  const n = e - s;
  const neg = n > 0 && b[s] === 45 ? 1 : 0;
  if (n - neg < 1 || n - neg > 15) return NaN;
  const x = digitsAt(b, s + neg, e);
  if (x < 0) return NaN;
  return neg ? -x || 0 : x;
}

/** plainNumeric over bytes. */
export function plainNumericAt(b: Uint8Array, s: number, e: number): boolean {
  let i = e > s && b[s] === 45 ? s + 1 : s;
  const intStart = i;
  while (i < e && b[i]! >= 48 && b[i]! <= 57) i++;
  const intLen = i - intStart;
  if (intLen < 1 || intLen > 29) return false;
  if (i === e) return true;
  if (b[i] !== 46) return false;
  const fracStart = ++i;
  while (i < e && b[i]! >= 48 && b[i]! <= 57) i++;
  return i === e && i - fracStart >= 1 && i - fracStart <= 9;
}

/**
 * Converts one JSON cell into slot `k` of `b` (a column of `type`). Throws
 * ValueConversionError (from convertJsonValue) for values the type rejects.
 */
export function setCell(b: ColumnBuilder, k: number, type: SqlType, v: unknown): void {
  switch (type.kind) {
    case 'STRING':
      if (typeof v === 'string') return b.setValue(k, v);
      break;
    case 'INT64':
      if (typeof v === 'number' && Number.isSafeInteger(v)) return b.setNumber(k, v);
      if (typeof v === 'string') {
        const x = fastInt(v);
        if (!Number.isNaN(x)) return b.setNumber(k, x);
      }
      break;
    case 'FLOAT64':
      if (typeof v === 'number') return b.setNumber(k, v);
      break;
    case 'BOOL':
      if (typeof v === 'boolean') return b.setNumber(k, v ? 1 : 0);
      break;
    case 'TIMESTAMP':
      if (typeof v === 'string') {
        const x = fastTimestamp(v);
        if (!Number.isNaN(x)) return b.setNumber(k, x);
      }
      break;
    case 'DATE':
      if (typeof v === 'string') {
        const x = fastDate(v);
        if (!Number.isNaN(x)) return b.setNumber(k, x);
      }
      break;
    case 'NUMERIC':
      if (typeof v === 'string' && plainNumeric(v)) {
        const d = new Decimal(v);
        return b.setValue(k, d.isZero() ? new Decimal(0) : d);
      }
      break;
  }
  b.set(k, convertJsonValue(type, v));
}

/** Looks a column up in a row object: exact name first, then case-insensitively. */
export function cellOf(o: Record<string, unknown>, name: string, lowerName: string, lower: { map: Map<string, unknown> | null }): unknown {
  const v = o[name];
  if (v !== undefined) return v;
  lower.map ??= new Map(Object.keys(o).map((k) => [k.toLowerCase(), o[k]]));
  return lower.map.get(lowerName);
}

/**
 * Converts already-validated rows (`[{json: {...}}]`) for `columns`; only
 * columns named in `present` (lower-case; the schema when the rows were
 * accepted) take values, the others are NULL.
 */
export function rowsToBatch(columns: readonly Column[], present: ReadonlySet<string>, rows: readonly { json?: unknown }[]): Batch {
  const n = rows.length;
  const builders = columns.map((c) => new ColumnBuilder(c.type, n));
  const lowerNames = columns.map((c) => c.name.toLowerCase());
  for (let r = 0; r < n; r++) {
    const o = (rows[r]!.json ?? {}) as Record<string, unknown>;
    const lower = { map: null as Map<string, unknown> | null };
    for (let c = 0; c < columns.length; c++) {
      const v = present.has(lowerNames[c]!) ? cellOf(o, columns[c]!.name, lowerNames[c]!, lower) : undefined;
      setCell(builders[c]!, r, columns[c]!.type, v);
    }
  }
  return { length: n, columns: builders.map((b) => b.finish(n)) };
}

// --- insertAll requests --------------------------------------------------------

export interface CellError {
  readonly reason: string;
  readonly location: string;
  readonly debugInfo: string;
  readonly message: string;
}

/** One `insertErrors` entry. */
export interface InsertError {
  readonly index: number;
  readonly errors: CellError[];
}

/** insertIds stored by earlier requests. */
export interface RecentIds {
  /** `hash`: idHash(id) (id-set.ts), when the caller has it. */
  has(id: string, hash?: number): boolean;
}

/** A request's rows converted into column builders. */
export interface RowsConversion {
  /** Rows in the request. */
  readonly n: number;
  /** Builder slots used: one per row not already stored by an earlier request, in row order. */
  readonly m: number;
  readonly builders: ColumnBuilder[];
  /** Rejected rows, in row order. */
  readonly errors: InsertError[];
  /** Slots to store, in row order. */
  readonly keep: number[];
  /** insertIds of the rows to store. */
  readonly newIds: string[];
  /** false: the rows were only checked (insert-scan.ts), the builders hold no strings or NUMERICs; same other fields. */
  readonly built: boolean;
}

/**
 * Pass 1 of convertRows: the row objects to convert (slot k holds row
 * cand[k]); rows that are not objects fail, ids seen by earlier requests are
 * skipped. The scanner (insert-scan.ts) gives its slots the same rows.
 */
export function rowObjects(rows: readonly unknown[], recentIds: RecentIds): { objs: Record<string, unknown>[]; cand: number[]; candIds: (string | undefined)[]; notObject: Set<number> } {
  const objs: Record<string, unknown>[] = [];
  const cand: number[] = [];
  const candIds: (string | undefined)[] = [];
  const notObject = new Set<number>();
  for (let r = 0; r < rows.length; r++) {
    const item = rows[r] as { insertId?: unknown; json?: unknown } | null;
    const json = item && typeof item === 'object' ? item.json : undefined;
    if (json === null || typeof json !== 'object' || Array.isArray(json)) {
      notObject.add(r);
      continue;
    }
    const insertId = typeof item!.insertId === 'string' && item!.insertId !== '' ? item!.insertId : undefined;
    if (insertId !== undefined && recentIds.has(insertId)) continue;
    objs.push(json as Record<string, unknown>);
    cand.push(r);
    candIds.push(insertId);
  }
  return { objs, cand, candIds, notObject };
}

/**
 * Converts parsed insertAll rows (`[{insertId?, json}]`). The reference for
 * the byte scanner of insert-scan.ts, which falls back to it for anything
 * unusual.
 */
export function convertRows(rows: readonly unknown[], columns: readonly Column[], recentIds: RecentIds): RowsConversion {
  const nc = columns.length;
  const n = rows.length;
  const { objs, cand, candIds, notObject } = rowObjects(rows, recentIds);
  // Pass 2, one column at a time: a tight loop per column with a fixed
  // converter, writing straight into the column's vector.
  const m = objs.length;
  const builders = columns.map((c) => new ColumnBuilder(c.type, m));
  let rowErrors: (CellError[] | undefined)[] | null = null;
  let lowerMaps: (Map<string, unknown> | undefined)[] | null = null;
  for (let c = 0; c < nc; c++) {
    const col = columns[c]!;
    const name = col.name;
    const lowerName = name.toLowerCase();
    const type = col.type;
    const b = builders[c]!;
    for (let k = 0; k < m; k++) {
      const o = objs[k]!;
      let v = o[name];
      if (v === undefined) {
        // Column names are case-insensitive.
        lowerMaps ??= new Array<Map<string, unknown> | undefined>(m);
        let lower = lowerMaps[k];
        if (lower === undefined) lowerMaps[k] = lower = new Map(Object.keys(o).map((key) => [key.toLowerCase(), o[key]]));
        v = lower.get(lowerName);
      }
      if ((v === null || v === undefined) && col.required) {
        rowErrors ??= new Array<CellError[] | undefined>(m);
        (rowErrors[k] ??= []).push(missingRequired(name));
        continue;
      }
      try {
        setCell(b, k, type, v);
      } catch (e) {
        if (!(e instanceof ValueConversionError)) throw e;
        rowErrors ??= new Array<CellError[] | undefined>(m);
        (rowErrors[k] ??= []).push(conversionError(name, e));
      }
    }
  }
  // Pass 3, in row order: errors, duplicates within the request (of an
  // accepted row only, as a row-at-a-time loop would see them), acceptance.
  const errors: InsertError[] = [];
  const keep: number[] = [];
  const newIds: string[] = [];
  const seenInRequest = new Set<string>();
  for (let r = 0, k = 0; r < n; r++) {
    if (notObject.has(r)) {
      errors.push({ index: r, errors: [{ reason: 'invalid', location: '', debugInfo: '', message: 'Row must be a JSON object.' }] });
      continue;
    }
    if (k >= m || cand[k] !== r) continue; // an id seen by an earlier request
    const slot = k++;
    const insertId = candIds[slot];
    if (insertId !== undefined && seenInRequest.has(insertId)) continue;
    const errs = rowErrors?.[slot];
    if (errs) {
      errors.push({ index: r, errors: errs });
      continue;
    }
    keep.push(slot);
    if (insertId !== undefined) {
      seenInRequest.add(insertId);
      newIds.push(insertId);
    }
  }
  return { n, m, builders, errors, keep, newIds, built: true };
}

/** The rows a conversion keeps, as the batch to store. */
export function keptBatch(c: RowsConversion): Batch {
  if (!c.built) throw new Error('keptBatch: the rows were only checked');
  const { m, keep } = c;
  const columns = c.builders.map((b) => b.finish(m));
  // Rejected rows' slots hold whatever their conversion left: only kept slots are read.
  if (keep.length === m) return { length: m, columns };
  return { length: keep.length, columns: columns.map((v) => takeVector(v, keep)) };
}

/**
 * A batch whose columns are made when first read: an accepted insertAll
 * request's rows stay in the WAL until a query or a fold reads them
 * (TableData.appendRequestRows). `make` must give `length` rows.
 */
export class DeferredBatch implements Batch {
  private made: readonly Vector[] | null = null;

  constructor(
    readonly length: number,
    private make: (() => Batch) | null,
  ) {}

  get columns(): readonly Vector[] {
    if (this.made === null) {
      const b = this.make!();
      if (b.length !== this.length) throw new Error(`deferred batch: ${b.length} rows made, ${this.length} expected`);
      this.made = b.columns;
      this.make = null;
    }
    return this.made;
  }
}

export function missingRequired(name: string): CellError {
  return { reason: 'invalid', location: name, debugInfo: '', message: `Missing required field: ${name}.` };
}

/**
 * loading-data-cloud-storage-csv.md and -json.md, Data types, Timestamp: a loaded TIMESTAMP has a date portion and a
 * time portion; a date alone (which insertAll and literals take as midnight) is a bad record in a load.
 */
const DATE_ONLY = /^\s*\d{4}[-/]\d{1,2}[-/]\d{1,2}\s*$/;

/** A load's text cell of a TIMESTAMP column: as it is, or, for a date alone, a text no TIMESTAMP reading takes that says why. */
export function loadedTimestampText(text: string): string {
  return DATE_ONLY.test(text) ? `${text.trim()} (a date without a time part: a loaded TIMESTAMP needs both)` : text;
}

/** The error of a load's TIMESTAMP cell holding a date alone (see loadedTimestampText), or undefined. */
export function dateOnlyTimestamp(name: string, text: string): CellError | undefined {
  return DATE_ONLY.test(text) ? conversionError(name, new ValueConversionError(`Invalid TIMESTAMP value ${text.trim()}: a loaded TIMESTAMP needs a time part after its date`)) : undefined;
}

export function conversionError(name: string, e: ValueConversionError): CellError {
  return { reason: 'invalid', location: [name, ...e.path].join('.'), debugInfo: '', message: e.message };
}
