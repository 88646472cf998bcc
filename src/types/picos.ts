// TIMESTAMP(12), the picosecond TIMESTAMP (README.md "Picosecond TIMESTAMP"):
// its value form is a bigint of picoseconds since the Unix epoch (UTC). A
// year-2026 instant is ~1.8e21 ps, beyond int64, so it has no typed-array
// layout: vectors hold the bigints ('values' layout), and the microsecond
// TIMESTAMP keeps its own fast paths untouched.
import { Decimal } from './values.js';
// json-values.ts imports this module too: only its functions are used here
// (hoisted, so the import cycle is safe), never its constants at load time.
import { formatDatetime, parseTimestamp, ValueConversionError } from './json-values.js';
import { QueryError } from './errors.js';

export const PICOS_PER_MICRO = 1_000_000n;
export const PICOS_PER_SECOND = 1_000_000_000_000n;
/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999999999Z (json-values' TIMESTAMP range, in picoseconds). */
export const MIN_TIMESTAMP_PICOS = -62_135_596_800n * PICOS_PER_SECOND;
export const MAX_TIMESTAMP_PICOS = 253_402_300_800n * PICOS_PER_SECOND - 1n;

/** a / b rounded towards negative infinity (truncation of an instant keeps it in its second/microsecond). */
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b < 0n ? q - 1n : q;
}

/** The microsecond TIMESTAMP of an instant: digits past the sixth are dropped (TIMESTAMP_PRECISION_MICROS). */
export const picosToMicros = (p: bigint): bigint => floorDiv(p, PICOS_PER_MICRO);

/** Nanoseconds since the epoch, digits past the ninth dropped (TIMESTAMP_PRECISION_NANOS). */
export const picosToNanos = (p: bigint): bigint => floorDiv(p, 1000n);

/** A microsecond TIMESTAMP widened to TIMESTAMP(12) (exact). */
export const microsToPicos = (micros: bigint | number): bigint => BigInt(micros) * PICOS_PER_MICRO;

/** `YYYY-MM-DDTHH:MM:SS[.ffffffffffff]` without zone: twelve fractional digits when the fraction is not zero. */
export function formatPicosCivil(p: bigint): string {
  const secs = floorDiv(p, PICOS_PER_SECOND);
  const frac = p - secs * PICOS_PER_SECOND;
  const whole = formatDatetime(secs * 1_000_000n);
  return frac === 0n ? whole : `${whole}.${frac.toString().padStart(12, '0')}`;
}

/** RFC 3339 with `Z` (the ISO8601_STRING cell form and the Read API's PICOS strings). */
export const formatTimestampPicosRfc3339 = (p: bigint): string => formatPicosCivil(p) + 'Z';

// A fraction of the seconds: split into the part the microsecond parser takes and the rest.
const FRACTION = /^(.*?\d:\d{1,2})\.(\d+)(\s*(?:Z|z|UTC|[+-]\d{1,2}(?::?\d{2})?)?)$/;
const EPOCH_SECONDS = /^-?\d+(\.\d+)?$/;

function badTimestamp(s: string): ValueConversionError {
  return new ValueConversionError(
    `Couldn't convert value to timestamp: Could not parse '${s}' as a timestamp. Required format is YYYY-MM-DD HH:MM[:SS[.SSSSSSSSSSSS]] or YYYY/MM/DD HH:MM[:SS[.SSSSSSSSSSSS]]`,
  );
}

function inRange(p: bigint, raw: string): bigint {
  if (p < MIN_TIMESTAMP_PICOS || p > MAX_TIMESTAMP_PICOS) throw new ValueConversionError(`Timestamp value is out of range: ${raw}`);
  return p;
}

/**
 * TIMESTAMP(12) text (the forms TIMESTAMP text takes, with up to twelve
 * fractional digits) or epoch seconds (text or number, exact to the
 * picosecond: digits past the twelfth are dropped) to picoseconds.
 */
export function parseTimestampPicos(v: string | number): bigint {
  const s = typeof v === 'number' ? String(v) : v.trim();
  if (typeof v === 'number' || EPOCH_SECONDS.test(s)) {
    if (typeof v === 'number' && !Number.isFinite(v)) throw new ValueConversionError(`Cannot convert value to timestamp (bad value): ${s}`);
    // Decimal keeps every digit of the text (a double would not); toFixed is exact whatever its precision setting.
    return inRange(BigInt(new Decimal(s).toFixed(12, Decimal.ROUND_FLOOR).replace('.', '')), s);
  }
  const m = FRACTION.exec(s);
  if (!m) return parseTimestamp(s) * PICOS_PER_MICRO;
  const frac = m[2]!;
  if (frac.length > 12) throw badTimestamp(s);
  const micros = parseTimestamp(`${m[1]}.${frac.slice(0, 6) || '0'}${m[3]}`);
  return inRange(micros * PICOS_PER_MICRO + BigInt(frac.slice(6).padEnd(6, '0')), s);
}

/** TIMESTAMP(12) text to the microsecond TIMESTAMP (exports whose timestamp types hold microseconds). */
export const picosTextToMicros = (s: string): bigint => picosToMicros(parseTimestampPicos(s));

/** How a reader asked for TIMESTAMP(12) values (the Read API's PicosTimestampPrecision; UNSPECIFIED is MICROS). */
export type PicosPrecision = 'MICROS' | 'NANOS' | 'PICOS';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Nanoseconds for a 64-bit nanosecond field (years 1677-2262): an instant
 * outside that range cannot be written and is refused rather than wrapped.
 */
export function picosToInt64Nanos(p: bigint): bigint {
  const n = picosToNanos(p);
  if (n < INT64_MIN || n > INT64_MAX) {
    throw new QueryError(`Timestamp ${formatTimestampPicosRfc3339(p)} is out of the range of TIMESTAMP_PRECISION_NANOS (a 64-bit count of nanoseconds); read it with TIMESTAMP_PRECISION_PICOS`, 'invalid');
  }
  return n;
}
