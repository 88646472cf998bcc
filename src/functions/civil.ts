// Civil calendar arithmetic and time zones, with no Date objects on hot paths.
// DATE = days since 1970-01-01; TIME = micros of day; DATETIME = civil micros
// since 1970-01-01T00:00; TIMESTAMP = UTC micros since the epoch.
import { fail } from './vec.js';
import { TZ_NAMES } from './tz-names.js';
import { civilFromDays, daysFromCivil } from '../types/json-values.js';

export const MICROS_PER_SECOND = 1000000;
export const MICROS_PER_DAY = 86400000000;
export const MICROS_PER_DAY_N = 86400000000n;
export const MIN_DATE = -719162; // 0001-01-01
export const MAX_DATE = 2932896; // 9999-12-31
export const MIN_TS = -62135596800000000n;
export const MAX_TS = 253402300799999999n;

// The calendar arithmetic lives with the value converters; re-exported for the family modules.
export { daysFromCivil, civilFromDays };

export function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}
const MDAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
export function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeap(y) ? 29 : MDAYS[m - 1]!;
}
/** 0 = Sunday ... 6 = Saturday. */
export function weekday(days: number): number {
  return (((days + 4) % 7) + 7) % 7;
}
export function dayOfYear(days: number): number {
  const [y] = civilFromDays(days);
  return days - daysFromCivil(y, 1, 1) + 1;
}

const pad2 = (n: number): string => (n < 10 ? '0' + n : '' + n);
export function pad(n: number, w: number): string {
  const s = String(Math.abs(n));
  return (n < 0 ? '-' : '') + (s.length >= w ? s : '0'.repeat(w - s.length) + s);
}

export function formatDate(days: number): string {
  const [y, m, d] = civilFromDays(days);
  return `${pad(y, 4)}-${pad2(m)}-${pad2(d)}`;
}

/** Fraction digits as the service prints them: none, or 3/6 digits as needed. */
export function fracString(micros: number): string {
  if (micros === 0) return '';
  if (micros % 1000 === 0) return '.' + pad(micros / 1000, 3);
  return '.' + pad(micros, 6);
}

export function formatTime(t: number): string {
  const secs = Math.floor(t / 1e6);
  const us = t - secs * 1e6;
  return `${pad2(Math.floor(secs / 3600))}:${pad2(Math.floor(secs / 60) % 60)}:${pad2(secs % 60)}${fracString(us)}`;
}

export function splitMicros(x: bigint): [number, number] {
  // [days, micros of day] with floor semantics.
  let days = x / MICROS_PER_DAY_N;
  let rem = x - days * MICROS_PER_DAY_N;
  if (rem < 0n) {
    rem += MICROS_PER_DAY_N;
    days -= 1n;
  }
  return [Number(days), Number(rem)];
}
export function joinMicros(days: number, micros: number): bigint {
  return BigInt(days) * MICROS_PER_DAY_N + BigInt(micros);
}

export function formatDatetime(dt: bigint): string {
  const [d, t] = splitMicros(dt);
  return `${formatDate(d)} ${formatTime(t)}`;
}

/** TIMESTAMP as CAST(... AS STRING) prints it in `zone`: 2020-01-01 00:00:00+00. */
export function formatTimestamp(ts: bigint, zone = 'UTC'): string {
  const off = offsetSecondsAt(zone, ts);
  const [d, t] = splitMicros(ts + BigInt(off) * 1000000n);
  return `${formatDate(d)} ${formatTime(t)}${formatOffset(off)}`;
}

export function formatOffset(offSeconds: number, colonAlways = false): string {
  const sign = offSeconds < 0 ? '-' : '+';
  const a = Math.abs(offSeconds);
  const h = Math.floor(a / 3600);
  const m = Math.floor(a / 60) % 60;
  return m !== 0 || colonAlways ? `${sign}${pad2(h)}:${pad2(m)}` : `${sign}${pad2(h)}`;
}

// ---------------------------------------------------------------- time zones

interface Zone {
  readonly fixed?: number; // seconds east of UTC
  readonly fmt?: Intl.DateTimeFormat;
}
const zoneCache = new Map<string, Zone>();

export function resolveZone(name: string): Zone {
  let z = zoneCache.get(name);
  if (z) return z;
  z = parseZone(name);
  zoneCache.set(name, z);
  return z;
}

// A time zone is an offset from UTC, (+|-)H[H][:M[M]] with an optional UTC prefix, at most 14 hours, or a tz
// database name. Names match case-sensitively and no space is allowed: the reference refuses 'utc', 'gmt',
// 'america/new_york', 'GMT+5', 'Z' and ' UTC' (the documentation gives only the canonical forms; the reference
// is the evidence for the rest). HHMM without a colon is read as the reference reads it ('+0530', '+123' = 12:03).
const OFFSET_RE = /^(?:UTC)?([+-])(?:(\d{1,2})(?::(\d{1,2}))?|(\d{2})(\d{1,2}))$/;
const UTC_NAMES = new Set(['UTC', 'Etc/UTC', 'GMT', 'Etc/GMT']);
let nameSpelling: Map<string, string> | undefined;

/** The database's spelling of `name` when it differs only in letter case, else undefined. */
function respelled(name: string): string | undefined {
  if (!nameSpelling) {
    nameSpelling = new Map();
    for (const n of [...Intl.supportedValuesOf('timeZone'), ...TZ_NAMES]) nameSpelling.set(n.toLowerCase(), n);
  }
  const exact = nameSpelling.get(name.toLowerCase());
  return exact !== undefined && exact !== name ? exact : undefined;
}

function parseZone(name: string): Zone {
  const s = name;
  if (s === '') fail('Invalid empty time zone');
  if (UTC_NAMES.has(s)) return { fixed: 0 };
  const m = OFFSET_RE.exec(s);
  if (m) {
    const h = Number(m[2] ?? m[4]);
    const mi = Number(m[3] ?? m[5] ?? 0);
    if (mi > 59 || h * 60 + mi > 14 * 60) fail(`Invalid time zone: ${name}`);
    return { fixed: (m[1] === '-' ? -1 : 1) * (h * 3600 + mi * 60) };
  }
  if (/\s/.test(s) || respelled(s) !== undefined) fail(`Invalid time zone: ${name}`);
  try {
    const fmt = new Intl.DateTimeFormat('en-US', {
      timeZone: s,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short',
    });
    return { fmt };
  } catch {
    fail(`Invalid time zone: ${name}`);
  }
}

/** Offset (seconds east of UTC) of `zone` at the UTC instant `ts` (micros). */
export function offsetSecondsAt(zone: string, ts: bigint): number {
  const z = resolveZone(zone);
  if (z.fixed !== undefined) return z.fixed;
  let ms = Number(ts / 1000n);
  // Intl handles years 1..9999 fine; clamp outside so we never throw.
  if (ms < -62135596800000) ms = -62135596800000;
  if (ms > 253402300799000) ms = 253402300799000;
  ms = Math.floor(ms / 1000) * 1000;
  const parts = z.fmt!.formatToParts(new Date(ms));
  let y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0, bc = false;
  for (const p of parts) {
    switch (p.type) {
      case 'year': y = Number(p.value); break;
      case 'month': mo = Number(p.value); break;
      case 'day': d = Number(p.value); break;
      case 'hour': h = Number(p.value); break;
      case 'minute': mi = Number(p.value); break;
      case 'second': se = Number(p.value); break;
      case 'era': bc = p.value.startsWith('B'); break;
    }
  }
  if (bc) y = 1 - y;
  const local = daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
  return local - ms / 1000;
}

const DAY_US = 86400000000n;

/**
 * The UTC instant of a civil datetime (micros) in `zone`, as absl's FromCivil gives it:
 * a repeated time takes the earlier instant, a skipped one the offset in force before
 * the transition (so it lands after the gap by the gap's length).
 */
export function civilToUtc(civil: bigint, zone: string): bigint {
  const z = resolveZone(zone);
  if (z.fixed !== undefined) return civil - BigInt(z.fixed) * 1000000n;
  const at = (o: number) => civil - BigInt(o) * 1000000n;
  const a = offsetSecondsAt(zone, civil);
  const b = offsetSecondsAt(zone, at(a));
  // The offsets in force a day either side cover any transition near this time.
  const offsets = new Set([a, b, offsetSecondsAt(zone, at(a) - DAY_US), offsetSecondsAt(zone, at(a) + DAY_US)]);
  let best: bigint | undefined;
  for (const o of offsets) {
    const u = at(o);
    if ((o === a ? b : offsetSecondsAt(zone, u)) === o && (best === undefined || u < best)) best = u;
  }
  return best ?? at(offsetSecondsAt(zone, at(Math.max(...offsets))));
}

/** Civil datetime (micros) of the instant `ts` in `zone`. */
export function utcToCivil(ts: bigint, zone: string): bigint {
  return ts + BigInt(offsetSecondsAt(zone, ts)) * 1000000n;
}

// ---------------------------------------------------------------- canonical parsing

export function checkDate(days: number): boolean {
  return days >= MIN_DATE && days <= MAX_DATE;
}

function validYmd(y: number, m: number, d: number): boolean {
  return y >= 1 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= daysInMonth(y, m);
}

/** 'YYYY-[M]M-[D]D' -> days, or undefined. The year has four digits (data types page: "YYYY: Four-digit year"). */
export function parseDateString(s: string): number | undefined {
  const m = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(s);
  if (!m) return undefined;
  const y = Number(m[1]), mo = Number(m[2]), d = Number(m[3]);
  if (!validYmd(y, mo, d)) return undefined;
  return daysFromCivil(y, mo, d);
}

function fracToMicros(f: string | undefined): number | undefined {
  if (!f) return 0;
  // The service keeps microseconds and rejects a string with more than six subsecond digits.
  if (f.length > 6) return undefined;
  return Number((f + '000000').slice(0, 6));
}

/** '[H]H:[M]M:[S]S[.F]' -> micros of day. */
export function parseTimeString(s: string): number | undefined {
  const m = /^(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d+))?$/.exec(s);
  if (!m) return undefined;
  const h = Number(m[1]), mi = Number(m[2]), se = Number(m[3] ?? 0);
  const us = fracToMicros(m[4]);
  if (h > 23 || mi > 59 || se > 60 || us === undefined) return undefined;
  if (se === 60) return (((h * 60 + mi) * 60 + 60) * 1e6) % 86400e6;
  return ((h * 60 + mi) * 60 + se) * 1e6 + us;
}

// The canonical forms as the reference reads them: a four-digit year, no surrounding space, one 'T' or space
// before the time, seconds present, digits after a '.', a zone only after a time: an
// offset or Z written against it, or a zone name after one space.
const DT_RE = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt ](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d+))?(?:([Zz]|[+-]\d{1,2}(?::?\d{2})?)| (?![+-]\d|[Zz]$)(\S.*))?)?$/;

/** DATETIME canonical string -> civil micros. */
export function parseDatetimeString(s: string): bigint | undefined {
  const m = DT_RE.exec(s);
  if (!m || m[8] !== undefined || m[9] !== undefined) return undefined;
  return datetimeFromMatch(m);
}

/** `leapFraction`: a TIMESTAMP keeps the fraction of a leap second (12:59:60.5 -> 13:00:00.5); DATETIME drops it. */
function datetimeFromMatch(m: RegExpExecArray, leapFraction = false): bigint | undefined {
  const y = Number(m[1]), mo = Number(m[2]), d = Number(m[3]);
  if (!validYmd(y, mo, d)) return undefined;
  const h = Number(m[4] ?? 0), mi = Number(m[5] ?? 0), se = Number(m[6] ?? 0);
  const us = fracToMicros(m[7]);
  if (h > 23 || mi > 59 || se > 60 || us === undefined) return undefined;
  // A leap second (:60) becomes the start of the next minute, as the service does.
  if (se === 60) return joinMicros(daysFromCivil(y, mo, d), ((h * 60 + mi) * 60 + 60) * 1e6 + (leapFraction ? us : 0));
  return joinMicros(daysFromCivil(y, mo, d), ((h * 60 + mi) * 60 + se) * 1e6 + us);
}

/** TIMESTAMP canonical string (optional zone suffix, else `defaultZone`) -> UTC micros. */
export function parseTimestampString(s: string, defaultZone: string): bigint | undefined {
  const m = DT_RE.exec(s);
  if (!m) return undefined;
  const civil = datetimeFromMatch(m, true);
  if (civil === undefined) return undefined;
  const zone = m[8] === undefined ? (m[9] ?? defaultZone) : /^z$/i.test(m[8]) ? 'UTC' : m[8];
  let ts: bigint;
  try {
    ts = civilToUtc(civil, zone);
  } catch {
    return undefined;
  }
  if (ts < MIN_TS || ts > MAX_TS) return undefined;
  return ts;
}
