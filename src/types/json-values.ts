// JSON forms -> scalar value forms (values.ts), as the real service accepts
// them in insertAll rows and in query parameter values. Also the civil
// date/time arithmetic and canonical text forms every other converter reuses.
//
// Every parser throws `ValueConversionError` with the real service's wording;
// callers turn it into an insertErrors entry or a 400 envelope.
import { Decimal } from 'decimal.js';
import type { SqlType } from './types.js';
import { Geography, Interval, JsonValue, RangeValue, type JsonNode, type Value } from './values.js';
import { parseTimestampPicos } from './picos.js';

export class ValueConversionError extends Error {
  /** Field path below the column where the bad value sits (STRUCT sub-fields), outermost first. */
  readonly path: string[] = [];
}

// --- civil calendar ----------------------------------------------------------

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm). */
export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** [year, month, day] of days since 1970-01-01. */
export function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const y = yoe + era * 400;
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [m <= 2 ? y + 1 : y, m, d];
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
function validDate(y: number, m: number, d: number): boolean {
  if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  return d <= (m === 2 && leap ? 29 : DAYS_IN_MONTH[m - 1]!);
}

export const MIN_DATE_DAYS = daysFromCivil(1, 1, 1);
export const MAX_DATE_DAYS = daysFromCivil(9999, 12, 31);
export const MICROS_PER_DAY = 86_400_000_000n;
export const MIN_TIMESTAMP_MICROS = BigInt(MIN_DATE_DAYS) * MICROS_PER_DAY;
export const MAX_TIMESTAMP_MICROS = BigInt(MAX_DATE_DAYS + 1) * MICROS_PER_DAY - 1n;

const pad2 = (n: number): string => (n < 10 ? '0' + n : String(n));
function pad4(n: number): string {
  const s = String(n);
  return s.length >= 4 ? s : '0000'.slice(s.length) + s;
}
function frac6(micros: number): string {
  if (micros === 0) return '';
  const s = String(micros);
  return '.' + '000000'.slice(s.length) + s;
}

// Dates repeat heavily in real columns: remember the last one formatted.
let lastDays = NaN;
let lastDate = '';
export function formatDate(days: number): string {
  if (days === lastDays) return lastDate;
  const [y, m, d] = civilFromDays(days);
  lastDays = days;
  lastDate = `${pad4(y)}-${pad2(m)}-${pad2(d)}`;
  return lastDate;
}

/** `HH:MM:SS[.ffffff]` of microseconds since midnight. */
export function formatTime(micros: number): string {
  const secs = Math.floor(micros / 1e6);
  const us = micros - secs * 1e6;
  return `${pad2(Math.floor(secs / 3600))}:${pad2(Math.floor(secs / 60) % 60)}:${pad2(secs % 60)}${frac6(us)}`;
}

const MICROS_PER_DAY_NUM = 86_400_000_000;

function splitMicros(micros: bigint | number): [number, number] {
  if (typeof micros === 'number' || (micros >= -9007199254740991n && micros <= 9007199254740991n)) {
    // Exact in doubles below 2^53 (years up to ~2255): no BigInt arithmetic.
    const m = Number(micros);
    const days = Math.floor(m / MICROS_PER_DAY_NUM);
    return [days, m - days * MICROS_PER_DAY_NUM];
  }
  let days = micros / MICROS_PER_DAY;
  let rem = micros % MICROS_PER_DAY;
  if (rem < 0n) {
    rem += MICROS_PER_DAY;
    days -= 1n;
  }
  return [Number(days), Number(rem)];
}

/** `YYYY-MM-DDTHH:MM:SS[.ffffff]` (DATETIME wire form). */
export function formatDatetime(micros: bigint | number): string {
  const [days, rem] = splitMicros(micros);
  return `${formatDate(days)}T${formatTime(rem)}`;
}

/** RFC 3339 with `Z`, fractional digits only when non-zero. */
export function formatTimestampRfc3339(micros: bigint | number): string {
  return formatDatetime(micros) + 'Z';
}

/**
 * Epoch seconds as Java's Double.toString prints them (the real service's
 * TIMESTAMP cell form): `1.7040672E9`, `1.704067200123456E9`, `0.5`, `1.0`.
 * Built from the exact microsecond count, so no digit is lost to a double.
 */
export function formatTimestampFloatSeconds(micros: bigint | number): string {
  // Safe-integer counts (every TIMESTAMP from year 1685 to 2255) take plain
  // number arithmetic: exact there, and several times cheaper than BigInt.
  if (typeof micros === 'number' && Number.isSafeInteger(micros)) {
    const m = Math.abs(micros);
    const frac = m % 1_000_000;
    return floatSecondsText(micros < 0, m, String((m - frac) / 1_000_000), frac);
  }
  let m = BigInt(micros);
  const neg = m < 0n;
  if (neg) m = -m;
  const frac = m % 1_000_000n;
  return floatSecondsText(neg, m < 10_000_000_000_000n ? Number(m) : Infinity, (m / 1_000_000n).toString(), Number(frac));
}

/** formatTimestampFloatSeconds from |micros| (only compared with 1e3 and 1e13), its whole seconds' digits and its microseconds. */
function floatSecondsText(neg: boolean, m: number, intPart: string, frac: number): string {
  const frac6 = String(frac).padStart(6, '0');
  const fracPart = frac6.replace(/0+$/, '');
  let out: string;
  if (m === 0) out = '0.0';
  else if (m >= 1000 && m < 10_000_000_000_000) {
    // 1e-3 <= x < 1e7: plain notation, at least one fractional digit.
    out = `${intPart}.${fracPart || '0'}`;
  } else {
    // Scientific: the significant digits of intPart.frac6 (leading zeros of
    // the fraction count towards the exponent when there are no whole seconds).
    const digits = intPart === '0' ? frac6 : intPart + fracPart;
    const firstNonZero = digits.search(/[1-9]/);
    const sig = digits.slice(firstNonZero).replace(/0+$/, '');
    const exp = intPart === '0' ? -(firstNonZero + 1) : intPart.length - 1;
    out = `${sig[0]}.${sig.slice(1) || '0'}E${exp}`;
  }
  return neg ? '-' + out : out;
}

/** Canonical INTERVAL text: `Y-M D H:M:S[.F]`. */
export function formatInterval(iv: Interval): string {
  return formatIntervalParts(iv.months, iv.days, iv.micros);
}

/** formatInterval of an interval's parts (a stored column's, without an Interval). */
export function formatIntervalParts(months: number, days: number, micros: bigint): string {
  const ym = `${months < 0 ? '-' : ''}${Math.floor(Math.abs(months) / 12)}-${Math.abs(months) % 12}`;
  let us = micros;
  const neg = us < 0n;
  if (neg) us = -us;
  if (us <= 9007199254740991n) {
    // Exact in doubles: no BigInt division per part.
    const u = Number(us);
    const f = u % 1_000_000;
    const fs = f === 0 ? '' : ('.' + String(f).padStart(6, '0')).replace(/0+$/, '');
    return `${ym} ${days} ${neg ? '-' : ''}${Math.floor(u / 3_600_000_000)}:${Math.floor(u / 60_000_000) % 60}:${Math.floor(u / 1_000_000) % 60}${fs}`;
  }
  const h = us / 3_600_000_000n;
  const mi = (us / 60_000_000n) % 60n;
  const s = (us / 1_000_000n) % 60n;
  const f = Number(us % 1_000_000n);
  const fs = f === 0 ? '' : ('.' + String(f).padStart(6, '0')).replace(/0+$/, '');
  return `${ym} ${days} ${neg ? '-' : ''}${h}:${mi}:${s}${fs}`;
}

// --- parsers -----------------------------------------------------------------

const DATE_RE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
const TIME_RE = /^(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{0,9}))?)?$/;
// date, then optional [T or spaces] time, then optional zone.
const TS_RE =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:[Tt]|\s+)(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{0,9}))?)?)?\s*(Z|z|UTC|[+-]\d{1,2}(?::?\d{2})?)?$/;

export function parseDate(s: string): number {
  const m = DATE_RE.exec(s.trim());
  if (m) {
    const y = +m[1]!, mo = +m[2]!, d = +m[3]!;
    if (validDate(y, mo, d)) return daysFromCivil(y, mo, d);
  }
  throw new ValueConversionError(`Invalid date string "${s}"`);
}

function timeParts(h: string, mi: string, s: string | undefined, f: string | undefined): number | null {
  const hh = +h, mm = +mi, ss = s === undefined ? 0 : +s;
  if (hh > 23 || mm > 59 || ss > 59) return null;
  const us = f ? +(f + '000000').slice(0, 6) : 0;
  return ((hh * 60 + mm) * 60 + ss) * 1e6 + us;
}

export function parseTime(s: string): number {
  const m = TIME_RE.exec(s.trim());
  if (m) {
    const t = timeParts(m[1]!, m[2]!, m[3], m[4]);
    if (t !== null) return t;
  }
  throw new ValueConversionError(`Invalid time string "${s}"`);
}

/** Civil date-time text to microseconds as a double (exact: the range fits below 2^53 only up to year ~2255, so callers check). */
function parseCivilNumber(s: string, allowZone: boolean, what: string): number {
  const m = TS_RE.exec(s.trim());
  if (m) {
    const y = +m[1]!, mo = +m[2]!, d = +m[3]!;
    if (validDate(y, mo, d) && (allowZone || !m[8])) {
      const t = m[4] === undefined ? 0 : timeParts(m[4], m[5]!, m[6], m[7]);
      if (t !== null) {
        let micros = daysFromCivil(y, mo, d) * 86_400_000_000 + t;
        const z = m[8];
        if (z && z !== 'Z' && z !== 'z' && z !== 'UTC') {
          const zm = /^([+-])(\d{1,2}):?(\d{2})?$/.exec(z)!;
          const off = (+zm[2]! * 60 + (zm[3] ? +zm[3] : 0)) * 60_000_000;
          micros -= zm[1] === '-' ? -off : off;
        }
        if (micros >= MIN_TS_NUM && micros <= MAX_TS_NUM) return micros;
      }
    }
  }
  throw new ValueConversionError(
    what === 'timestamp'
      ? `Couldn't convert value to timestamp: Could not parse '${s}' as a timestamp. Required format is YYYY-MM-DD HH:MM[:SS[.SSSSSS]] or YYYY/MM/DD HH:MM[:SS[.SSSSSS]]`
      : `Invalid datetime string "${s}"`,
  );
}

// The extreme timestamps (years 1 and 9999) are beyond 2^53 micros, so the
// double is not exact there; beyond +-2^53 the bigint path below recomputes exactly.
const MIN_TS_NUM = Number(MIN_TIMESTAMP_MICROS);
const MAX_TS_NUM = Number(MAX_TIMESTAMP_MICROS);
const SAFE = 9007199254740991;

function parseCivil(s: string, allowZone: boolean, what: string): bigint {
  const n = parseCivilNumber(s, allowZone, what);
  if (n >= -SAFE && n <= SAFE) return BigInt(n);
  return parseCivilExact(s, allowZone);
}

function parseCivilExact(s: string, allowZone: boolean): bigint {
  const m = TS_RE.exec(s.trim())!;
  const t = m[4] === undefined ? 0 : timeParts(m[4], m[5]!, m[6], m[7])!;
  let micros = BigInt(daysFromCivil(+m[1]!, +m[2]!, +m[3]!)) * MICROS_PER_DAY + BigInt(t);
  const z = allowZone ? m[8] : undefined;
  if (z && z !== 'Z' && z !== 'z' && z !== 'UTC') {
    const zm = /^([+-])(\d{1,2}):?(\d{2})?$/.exec(z)!;
    const off = BigInt((+zm[2]! * 60 + (zm[3] ? +zm[3] : 0)) * 60_000_000);
    micros -= zm[1] === '-' ? -off : off;
  }
  return micros;
}

/**
 * TIMESTAMP text to microseconds as a number when exactly representable
 * (the insert fast path, no BigInt); NaN when the caller must use parseTimestamp.
 */
export function parseTimestampNumber(s: string): number {
  const t = s.trim();
  if (/^-?\d+(\.\d+)?$/.test(t)) return NaN;
  const n = parseCivilNumber(t.replace(/\//g, '-'), true, 'timestamp');
  return n >= -SAFE && n <= SAFE ? n : NaN;
}

export const parseDatetime = (s: string): bigint => parseCivil(s, false, 'datetime');

export function parseTimestamp(s: string): bigint {
  const t = s.trim();
  // Epoch seconds as text, as clients that stringify numbers send them.
  if (/^-?\d+(\.\d+)?$/.test(t) && !/^\d{4}-/.test(t)) return epochSecondsToMicros(Number(t), s);
  return parseCivil(t.replace(/\//g, '-'), true, 'timestamp');
}

function epochSecondsToMicros(secs: number, raw: unknown): bigint {
  if (!Number.isFinite(secs)) throw new ValueConversionError(`Cannot convert value to timestamp (bad value): ${String(raw)}`);
  const micros = BigInt(Math.round(secs * 1e6));
  if (micros < MIN_TIMESTAMP_MICROS || micros > MAX_TIMESTAMP_MICROS) {
    throw new ValueConversionError(`Timestamp value is out of range: ${String(raw)}`);
  }
  return micros;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

export function parseInt64(v: unknown): bigint {
  if (typeof v === 'number') {
    if (Number.isInteger(v)) return BigInt(v);
  } else if (typeof v === 'string') {
    const t = v.trim();
    if (/^[+-]?\d+$/.test(t)) {
      const b = BigInt(t);
      if (b >= INT64_MIN && b <= INT64_MAX) return b;
    } else if (/^[+-]?\d+\.0*$/.test(t)) {
      return parseInt64(t.slice(0, t.indexOf('.')));
    }
  }
  throw new ValueConversionError(`Cannot convert value to integer (bad value): ${displayValue(v)}`);
}

export function parseFloat64(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const t = v.trim();
    if (t === 'NaN' || t === 'nan') return NaN;
    if (t === 'Infinity' || t === '+Infinity' || t === 'inf' || t === '+inf') return Infinity;
    if (t === '-Infinity' || t === '-inf') return -Infinity;
    if (t !== '' && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return Number(t);
  }
  throw new ValueConversionError(`Cannot convert value to floating point (bad value): ${displayValue(v)}`);
}

export function parseBool(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (t === 'true' || t === '1') return true;
    if (t === 'false' || t === '0') return false;
  }
  if (v === 1) return true;
  if (v === 0) return false;
  throw new ValueConversionError(`Cannot convert value to boolean (bad value): ${displayValue(v)}`);
}

export const NUMERIC_MAX = new Decimal('99999999999999999999999999999.999999999');
export const BIGNUMERIC_MAX = new Decimal('578960446186580977117854925043439539266.34992332820282019728792003956564819967');
export const BIGNUMERIC_MIN = new Decimal('-578960446186580977117854925043439539266.34992332820282019728792003956564819968');

/** NUMERIC (scale 9) or BIGNUMERIC (scale 38), rounded half away from zero, range-checked. */
export function parseDecimal(v: unknown, big: boolean): Decimal {
  let d: Decimal | null = null;
  if (typeof v === 'number' && Number.isFinite(v)) d = new Decimal(v);
  else if (typeof v === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)) d = new Decimal(v.trim());
  const name = big ? 'BIGNUMERIC' : 'NUMERIC';
  if (d === null) throw new ValueConversionError(`Invalid ${name} value: ${displayValue(v)}`);
  d = d.toDecimalPlaces(big ? 38 : 9, Decimal.ROUND_HALF_UP);
  if (big ? d.gt(BIGNUMERIC_MAX) || d.lt(BIGNUMERIC_MIN) : d.abs().gt(NUMERIC_MAX)) {
    throw new ValueConversionError(`Invalid ${name} value: ${displayValue(v)}`);
  }
  return d.isZero() ? new Decimal(0) : d;
}

export function parseBytes(v: unknown): Uint8Array {
  if (typeof v === 'string') {
    const t = v.replace(/\s+/g, '');
    if (/^[A-Za-z0-9+/_-]*={0,2}$/.test(t) && t.replace(/=+$/, '').length % 4 !== 1) {
      const b = Buffer.from(t, t.includes('-') || t.includes('_') ? 'base64url' : 'base64');
      return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    }
  }
  throw new ValueConversionError(`Could not decode base64 string to bytes. Field: ${displayValue(v)}`);
}

const ISO_INTERVAL_RE =
  /^([+-])?P(?:([+-]?\d+)Y)?(?:([+-]?\d+)M)?(?:([+-]?\d+)W)?(?:([+-]?\d+)D)?(?:T(?:([+-]?\d+)H)?(?:([+-]?\d+)M)?(?:([+-]?\d+(?:\.\d{1,9})?)S)?)?$/;
const CANON_INTERVAL_RE = /^(-)?(\d+)-(\d+)\s+(-?\d+)\s+(-)?(\d+):(\d+):(\d+)(?:\.(\d{1,9}))?$/;

function secondsTextToMicros(s: string): bigint {
  const neg = s.startsWith('-');
  const t = s.replace(/^[+-]/, '');
  const [i, f = ''] = t.split('.');
  const us = BigInt(i!) * 1_000_000n + BigInt((f + '000000').slice(0, 6));
  return neg ? -us : us;
}

export function parseInterval(v: unknown): Interval {
  if (typeof v === 'string') {
    const t = v.trim();
    let m = CANON_INTERVAL_RE.exec(t);
    if (m) {
      const months = (+m[2]! * 12 + +m[3]!) * (m[1] ? -1 : 1);
      const us =
        (BigInt(m[6]!) * 3_600_000_000n + BigInt(m[7]!) * 60_000_000n + BigInt(m[8]!) * 1_000_000n + BigInt(((m[9] ?? '') + '000000').slice(0, 6))) *
        (m[5] ? -1n : 1n);
      return new Interval(months, +m[4]!, us);
    }
    m = ISO_INTERVAL_RE.exec(t);
    if (m && t !== 'P' && !t.endsWith('T')) {
      const sign = m[1] === '-' ? -1 : 1;
      const n = (x: string | undefined): number => (x ? +x : 0);
      const months = sign * (n(m[2]) * 12 + n(m[3]));
      const days = sign * (n(m[4]) * 7 + n(m[5]));
      const us = BigInt(sign) * (BigInt(n(m[6])) * 3_600_000_000n + BigInt(n(m[7])) * 60_000_000n + (m[8] ? secondsTextToMicros(m[8]) : 0n));
      return new Interval(months, days, us);
    }
  }
  throw new ValueConversionError(`Invalid INTERVAL value: ${displayValue(v)}`);
}

/** The spellings of BOOL a load file's cell may have (loading CSV or JSON data: 1/0, true/false, t/f, yes/no, y/n, any case). */
export const LOADED_BOOL: ReadonlyMap<string, 'true' | 'false'> = new Map([
  ...['1', 'true', 't', 'yes', 'y'].map((x) => [x, 'true'] as const),
  ...['0', 'false', 'f', 'no', 'n'].map((x) => [x, 'false'] as const),
]);

/** Levels of arrays and objects a JSON value may nest, as the service parses it (ZetaSQL's max_nesting). */
export const MAX_JSON_NESTING = 500;
export const JSON_NESTING_ERROR = `Max nesting of ${MAX_JSON_NESTING} has been exceeded while parsing JSON document`;

/** Throws a SyntaxError when `text` nests arrays and objects deeper than MAX_JSON_NESTING (strings skipped). */
function checkJsonNesting(text: string): void {
  // Nesting past the limit needs that many brackets.
  if (text.length <= MAX_JSON_NESTING) return;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip a string, escapes included.
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_NESTING) throw new SyntaxError(JSON_NESTING_ERROR);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

/**
 * Parses JSON text keeping integers beyond 2^53 exact (as bigint). Texts
 * without a long digit run take the native parser; the rest a small exact one.
 * For the storage form (keys unique); text from clients goes through parseJsonInput.
 */
export function parseJsonText(text: string): JsonNode {
  checkJsonNesting(text);
  if (!/\d{16}/.test(text)) return JSON.parse(text) as JsonNode;
  return new ExactJsonParser(text, true).parseDocument();
}

/**
 * The one parser of JSON text a client sends (insertAll and Storage Write
 * cells, load files, parameters): as parseJsonText, but an object keeps the
 * first of duplicate keys, as the JSON type does (data-types.md, JSON type);
 * JSON.parse keeps the last. `wide`: integers beyond 2^53 as bigint (a JSON
 * value), else as JSON.parse reads them (a load file's row, whose cells are
 * converted by type).
 */
export function parseJsonInput(text: string, wide = true): JsonNode {
  checkJsonNesting(text);
  const exact = wide && /\d{16}/.test(text);
  if (!exact) {
    const v = JSON.parse(text) as JsonNode;
    // A duplicate key leaves fewer members than the text names (each is one colon outside strings).
    if (typeof v !== 'object' || v === null || memberCount(v) === colonsOutsideStrings(text)) return v;
  }
  return new ExactJsonParser(text, wide).parseDocument();
}

function colonsOutsideStrings(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x3a) n++;
  }
  return n;
}

function memberCount(v: JsonNode): number {
  if (typeof v !== 'object' || v === null) return 0;
  let n = 0;
  if (Array.isArray(v)) for (const x of v) n += memberCount(x);
  else
    for (const k in v) {
      n++;
      n += memberCount(v[k]!);
    }
  return n;
}

class ExactJsonParser {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly wide: boolean,
  ) {}

  parseDocument(): JsonNode {
    const v = this.value();
    this.ws();
    if (this.i !== this.s.length) this.fail();
    return v;
  }

  private fail(): never {
    throw new SyntaxError(`Unexpected token in JSON at position ${this.i}`);
  }

  private ws(): void {
    const s = this.s;
    while (this.i < s.length && (s[this.i] === ' ' || s[this.i] === '\n' || s[this.i] === '\r' || s[this.i] === '\t')) this.i++;
  }

  private value(): JsonNode {
    this.ws();
    const c = this.s[this.i];
    if (c === '{') {
      this.i++;
      const o: { [k: string]: JsonNode } = {};
      this.ws();
      if (this.s[this.i] === '}') {
        this.i++;
        return o;
      }
      for (;;) {
        this.ws();
        if (this.s[this.i] !== '"') this.fail();
        const k = this.string();
        this.ws();
        if (this.s[this.i++] !== ':') this.fail();
        const v = this.value();
        // The first of duplicate keys stays; `__proto__` is an own key, as JSON.parse makes it.
        if (!Object.hasOwn(o, k)) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
        this.ws();
        const d = this.s[this.i++];
        if (d === '}') return o;
        if (d !== ',') this.fail();
      }
    }
    if (c === '[') {
      this.i++;
      const a: JsonNode[] = [];
      this.ws();
      if (this.s[this.i] === ']') {
        this.i++;
        return a;
      }
      for (;;) {
        a.push(this.value());
        this.ws();
        const d = this.s[this.i++];
        if (d === ']') return a;
        if (d !== ',') this.fail();
      }
    }
    if (c === '"') return this.string();
    const m = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(this.s.slice(this.i, this.i + 400));
    if (!m) this.fail();
    const tok = m[0];
    this.i += tok.length;
    if (tok === 'true') return true;
    if (tok === 'false') return false;
    if (tok === 'null') return null;
    const n = Number(tok);
    if (this.wide && /^-?\d+$/.test(tok) && !Number.isSafeInteger(n)) return BigInt(tok);
    return n;
  }

  private string(): string {
    const start = this.i;
    this.i++;
    const s = this.s;
    while (this.i < s.length) {
      const ch = s[this.i];
      if (ch === '\\') this.i += 2;
      else if (ch === '"') {
        this.i++;
        return JSON.parse(s.slice(start, this.i)) as string;
      } else this.i++;
    }
    this.fail();
  }
}

/**
 * JSON text of a JSON number held as a double: safe integers plainly, other
 * values with their shortest digits, in exponent form outside 1e-4 .. 1e15
 * (the service prints 9.007199254740992e+15, 1e+100, 1e-05).
 */
export function jsonDoubleText(x: number): string {
  if (!Number.isFinite(x)) return 'null';
  if (Number.isSafeInteger(x)) return Object.is(x, -0) ? '-0' : String(x);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(x.toExponential())!;
  const digits = m[2]! + (m[3] ?? '');
  const k = digits.length;
  const n = Number(m[4]) + 1; // position of the decimal point
  const sign = m[1]!;
  if (k <= n && n <= 15) return sign + digits + '0'.repeat(n - k) + '.0';
  if (n > 0 && n <= 15) return sign + digits.slice(0, n) + '.' + digits.slice(n);
  if (n > -4 && n <= 0) return sign + '0.' + '0'.repeat(-n) + digits;
  const e = n - 1;
  return sign + digits[0] + (k > 1 ? '.' + digits.slice(1) : '') + 'e' + (e < 0 ? '-' : '+') + String(Math.abs(e)).padStart(2, '0');
}

/** The storage-form text of a JSON value (jsonNodeToText of its node; a value held as that text gives it as it is, parsing nothing). */
export function jsonValueText(v: JsonValue): string {
  return v.storedText ?? jsonNodeToText(v.node);
}

/** Compact JSON text of a JsonNode (bigint as a bare number). */
export function jsonNodeToText(n: JsonNode): string {
  if (n === null) return 'null';
  switch (typeof n) {
    case 'string':
      return JSON.stringify(n);
    case 'number':
      return jsonDoubleText(n);
    case 'bigint':
      return n.toString();
    case 'boolean':
      return n ? 'true' : 'false';
  }
  if (Array.isArray(n)) return '[' + n.map(jsonNodeToText).join(',') + ']';
  // The JSON type's normal form orders object keys (the service prints {"a":..,"b":..}).
  let out = '{';
  let first = true;
  for (const k of Object.keys(n).sort()) {
    if (!first) out += ',';
    first = false;
    out += JSON.stringify(k) + ':' + jsonNodeToText(n[k]!);
  }
  return out + '}';
}

function toJsonNode(v: unknown, depth = 0): JsonNode {
  if (v === null || typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number' || typeof v === 'bigint') return v;
  if (typeof v === 'object' && depth >= MAX_JSON_NESTING) throw new ValueConversionError(`Invalid JSON value: ${JSON_NESTING_ERROR}`);
  if (Array.isArray(v)) return v.map((x) => toJsonNode(x, depth + 1));
  if (typeof v === 'object') {
    const o: { [k: string]: JsonNode } = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) o[k] = toJsonNode(x, depth + 1);
    return o;
  }
  throw new ValueConversionError('Invalid JSON value');
}

export function parseJsonValue(v: unknown): JsonValue {
  if (typeof v === 'string') {
    try {
      return new JsonValue(parseJsonInput(v));
    } catch {
      throw new ValueConversionError(`Invalid JSON value: ${v}`);
    }
  }
  return new JsonValue(toJsonNode(v));
}

/** `[a, b)` with UNBOUNDED / NULL ends, or an object {start, end}. */
export function parseRange(v: unknown, element: SqlType): RangeValue {
  const bound = (x: unknown): Value => {
    if (x === null || x === undefined) return null;
    if (typeof x === 'string') {
      const t = x.trim();
      if (t === '' || /^(UNBOUNDED|NULL)$/i.test(t)) return null;
      return convertJsonValue(element, t);
    }
    return convertJsonValue(element, x);
  };
  let start: Value, end: Value;
  if (typeof v === 'string') {
    const m = /^\s*\[\s*([^,]*?)\s*,\s*([^,]*?)\s*\)\s*$/.exec(v);
    if (!m) throw new ValueConversionError(`Invalid RANGE value: ${v}`);
    start = bound(m[1]);
    end = bound(m[2]);
  } else if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    start = bound(o.start);
    end = bound(o.end);
  } else {
    throw new ValueConversionError(`Invalid RANGE value: ${displayValue(v)}`);
  }
  if (start !== null && end !== null && (start as bigint | number) >= (end as bigint | number)) {
    throw new ValueConversionError(`Invalid RANGE value: ${displayValue(v)}. The start of a range must be less than its end`);
  }
  return new RangeValue(start, end);
}

function displayValue(v: unknown): string {
  if (typeof v === 'string') return v;
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/**
 * GEOGRAPHY text -> its stored form. The engine installs the canonical-WKT
 * printer of the function library (src/engine/geography-text.ts); this layer
 * cannot import it, and without it the text is kept as sent.
 */
let geographyText: (text: string) => string = (s) => s;
export function setGeographyText(f: (text: string) => string): void {
  geographyText = f;
}

/**
 * One JSON value (a cell of an insertAll row or a query parameter value) to
 * the value form of `type`. `null`/`undefined` give SQL NULL; REPEATED
 * (ARRAY) NULL gives the empty array, as the real service stores it.
 */
export function convertJsonValue(type: SqlType, v: unknown): Value {
  if (v === null || v === undefined) return type.kind === 'ARRAY' ? [] : null;
  if (Array.isArray(v) && type.kind !== 'ARRAY' && type.kind !== 'JSON') {
    throw new ValueConversionError('Array specified for non-repeated field.');
  }
  switch (type.kind) {
    case 'INT64':
      return parseInt64(v);
    case 'FLOAT64':
      return parseFloat64(v);
    case 'NUMERIC':
      return parseDecimal(v, false);
    case 'BIGNUMERIC':
      return parseDecimal(v, true);
    case 'BOOL':
      return parseBool(v);
    case 'STRING':
      if (typeof v === 'string') return v;
      if (typeof v === 'number' || typeof v === 'bigint') return String(v);
      if (typeof v === 'boolean') throw new ValueConversionError('Conversion from bool to std::string is unsupported.');
      throw new ValueConversionError('This field is not a record.');
    case 'BYTES':
      return parseBytes(v);
    case 'DATE':
      if (typeof v !== 'string') break;
      return parseDate(v);
    case 'TIME':
      if (typeof v !== 'string') break;
      return parseTime(v);
    case 'DATETIME':
      if (typeof v !== 'string') break;
      return parseDatetime(v);
    case 'TIMESTAMP':
      if (typeof v === 'number') return epochSecondsToMicros(v, v);
      if (typeof v !== 'string') break;
      return parseTimestamp(v);
    case 'TIMESTAMP_PICOS':
      if (typeof v !== 'string' && typeof v !== 'number') break;
      return parseTimestampPicos(v);
    case 'INTERVAL':
      return parseInterval(v);
    case 'JSON':
      return parseJsonValue(v);
    case 'GEOGRAPHY':
      if (typeof v !== 'string' || v.trim() === '') break;
      return new Geography(null, geographyText(v.trim()));
    case 'RANGE':
      return parseRange(v, type.element);
    case 'ARRAY': {
      if (!Array.isArray(v)) throw new ValueConversionError(`Cannot convert value to array (bad value): ${displayValue(v)}`);
      const out = new Array<Value>(v.length);
      for (let i = 0; i < v.length; i++) {
        if (v[i] === null || v[i] === undefined) throw new ValueConversionError('Array elements cannot be null');
        out[i] = convertJsonValue(type.element, v[i]);
      }
      return out;
    }
    case 'STRUCT': {
      if (typeof v !== 'object' || Array.isArray(v)) throw new ValueConversionError('This field is a record; its value must be an object.');
      const o = v as Record<string, unknown>;
      const fields = type.fields;
      const out = new Array<Value>(fields.length);
      let lower: Map<string, unknown> | null = null;
      for (let i = 0; i < fields.length; i++) {
        const f = fields[i]!;
        let x = o[f.name];
        if (x === undefined) {
          lower ??= new Map(Object.entries(o).map(([k, val]) => [k.toLowerCase(), val]));
          x = lower.get(f.name.toLowerCase());
        }
        try {
          out[i] = convertJsonValue(f.type, x);
        } catch (e) {
          if (e instanceof ValueConversionError) e.path.unshift(f.name);
          throw e;
        }
      }
      return out;
    }
  }
  // TIMESTAMP(12) is a timestamp in the service's words.
  throw new ValueConversionError(`Cannot convert value to ${type.kind === 'TIMESTAMP_PICOS' ? 'timestamp' : type.kind.toLowerCase()} (bad value): ${displayValue(v)}`);
}
