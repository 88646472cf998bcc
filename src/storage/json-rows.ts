// insertAll rows (REST JSON) -> a column batch. Shared by the insert path and
// by WAL replay of raw-row records, so both convert identically.
import type { Column } from '../types/schema.js';
import type { SqlType } from '../types/types.js';
import { convertJsonValue, daysFromCivil } from '../types/json-values.js';
import { Decimal, type Value } from '../types/values.js';
import { layoutOf, vectorFromValues, type Batch, type Layout, type Vector } from '../types/vector.js';

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
    private readonly capacity: number,
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
      // The builder owns its array: NULL and never-written (rejected row) slots are set in place.
      const vals = this.vals.length === n ? this.vals : this.vals.slice(0, n);
      for (let j = 0; j < n; j++) if ((nulls !== null && nulls[j] === 1) || vals[j] === undefined) vals[j] = null;
      return vectorFromValues(this.type, vals);
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
