// DATE / TIME / DATETIME / TIMESTAMP functions.
// Date parts arrive as constant STRING arguments ('DAY', 'WEEK(MONDAY)', 'ISOYEAR'),
// exactly as `$extract` receives them from the analyzer.
import { T, arrayOf, type SqlType } from '../types/types.js';
import { Interval, JsonValue, type Value } from '../types/values.js';
import { vectorFromValues } from '../types/vector.js';
import {
  MAX_DATE,
  MICROS_PER_DAY,
  MAX_TS,
  MIN_DATE,
  MIN_TS,
  civilFromDays,
  civilToUtc,
  daysFromCivil,
  daysInMonth,
  dayOfYear,
  formatDate,
  formatDatetime,
  formatTime,
  formatTimestamp as formatTimestampIn,
  joinMicros,
  parseDateString,
  parseDatetimeString,
  parseTimeString,
  parseTimestampString,
  resolveZone,
  splitMicros,
  utcToCivil,
  weekday,
} from './civil.js';
import { extractInterval, addMonthsToDays, datetimeAddInterval } from './interval.js';
import { extractIntervalParts, orRows } from './interval-range-kernels.js';
import { defineScalar, opt, sig, sigf, type ArgSpec, type ScalarOptions } from './signature.js';
import type { EvalContext, ScalarKernel } from './registry.js';
import { I64Out, asQueryError, constKernel, fail, mergeNulls, rowKernel } from './vec.js';
import { formatStrftime, parseStrftime } from './strftime.js';

const US_DAY = 86400000000n;
const US_PER: Record<string, bigint> = { MICROSECOND: 1n, MILLISECOND: 1000n, SECOND: 1000000n, MINUTE: 60000000n, HOUR: 3600000000n, DAY: US_DAY };
const WEEKDAYS = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'];

interface Part {
  readonly name: string;
  /** Week start (0 = Sunday) for WEEK / WEEK(<day>) / ISOWEEK. */
  readonly weekStart: number;
}

/** 2^53: doubles below it in magnitude are exact integers. */
const EXACT = 9007199254740992;

const partCache = new Map<string, Part>();
export function parsePart(s: string): Part {
  const key = s.toUpperCase().replace(/\s+/g, '');
  let p = partCache.get(key);
  if (p) return p;
  const m = /^WEEK\((\w+)\)$/.exec(key);
  if (m) {
    const d = WEEKDAYS.indexOf(m[1]!);
    if (d < 0) fail(`Invalid day of week: ${s.replace(/^.*\(|\)$/g, '')}`);
    p = { name: 'WEEK', weekStart: d };
  } else p = { name: key, weekStart: key === 'ISOWEEK' ? 1 : 0 };
  partCache.set(key, p);
  return p;
}

function isoWeekYear(days: number): [number, number] {
  const wd = (weekday(days) + 6) % 7; // Monday = 0
  const thursday = days - wd + 3;
  const [y] = civilFromDays(thursday);
  const week = Math.floor((thursday - daysFromCivil(y, 1, 1)) / 7) + 1;
  return [y, week];
}
function isoYearStart(y: number): number {
  const jan4 = daysFromCivil(y, 1, 4);
  return jan4 - ((weekday(jan4) + 6) % 7);
}
function weekNumber(days: number, start: number): number {
  const [y] = civilFromDays(days);
  const jan1 = daysFromCivil(y, 1, 1);
  const offset = (start - weekday(jan1) + 7) % 7;
  const doy0 = days - jan1;
  return doy0 < offset ? 0 : Math.floor((doy0 - offset) / 7) + 1;
}

/** EXTRACT of a date part from days (+ micros of day for time parts). */
function extractCivil(part: Part, days: number, tod: number, kind: string): Value {
  const [y, m, d] = civilFromDays(days);
  switch (part.name) {
    case 'YEAR':
      return BigInt(y);
    case 'MONTH':
      return BigInt(m);
    case 'DAY':
      return BigInt(d);
    case 'QUARTER':
      return BigInt(Math.floor((m - 1) / 3) + 1);
    case 'DAYOFWEEK':
      return BigInt(weekday(days) + 1);
    case 'DAYOFYEAR':
      return BigInt(dayOfYear(days));
    case 'WEEK':
      return BigInt(weekNumber(days, part.weekStart));
    case 'ISOWEEK':
      return BigInt(isoWeekYear(days)[1]);
    case 'ISOYEAR':
      return BigInt(isoWeekYear(days)[0]);
  }
  if (kind === 'DATE') fail(`EXTRACT from DATE does not support the ${part.name} date part`);
  switch (part.name) {
    case 'HOUR':
      return BigInt(Math.floor(tod / 3600e6));
    case 'MINUTE':
      return BigInt(Math.floor(tod / 60e6) % 60);
    case 'SECOND':
      return BigInt(Math.floor(tod / 1e6) % 60);
    case 'MILLISECOND':
      return BigInt(Math.floor(tod / 1000) % 1000);
    case 'MICROSECOND':
      return BigInt(tod % 1e6);
  }
  fail(`Unsupported date part ${part.name}`);
}

// ---------------------------------------------------------------- truncation

function truncDays(days: number, part: Part): number {
  const [y, m] = civilFromDays(days);
  switch (part.name) {
    case 'DAY':
      return days;
    case 'WEEK':
    case 'ISOWEEK':
      return days - ((weekday(days) - part.weekStart + 7) % 7);
    case 'MONTH':
      return daysFromCivil(y, m, 1);
    case 'QUARTER':
      return daysFromCivil(y, Math.floor((m - 1) / 3) * 3 + 1, 1);
    case 'YEAR':
      return daysFromCivil(y, 1, 1);
    case 'ISOYEAR':
      return isoYearStart(isoWeekYear(days)[0]);
  }
  return NaN;
}

function truncDatetime(dt: bigint, part: Part, fn: string, kind: string): bigint {
  const unit = US_PER[part.name];
  if (unit !== undefined && part.name !== 'DAY') {
    let r = dt - (((dt % unit) + unit) % unit);
    if (r < MIN_TS) r = MIN_TS;
    return r;
  }
  const [d] = splitMicros(dt);
  const td = truncDays(d, part);
  if (Number.isNaN(td)) fail(`${fn} does not support the ${part.name} date part when the argument is ${kind}`);
  if (td < MIN_DATE) fail(`Truncating date ${formatDate(d)} to ${part.name} resulted in an out of range date value: ${td}`);
  return joinMicros(td, 0);
}

// ---------------------------------------------------------------- differences

/** The difference of two dates (days since the epoch) in a date part; undefined for a part dates do not have. */
function dateDiffFn(part: Part): ((a: number, b: number) => number) | undefined {
  switch (part.name) {
    case 'DAY':
      return (a, b) => a - b;
    case 'WEEK':
    case 'ISOWEEK':
      return (a, b) => (truncDays(a, part) - truncDays(b, part)) / 7;
    case 'MONTH':
      return (a, b) => {
        const [ya, ma] = civilFromDays(a);
        const [yb, mb] = civilFromDays(b);
        return ya * 12 + ma - (yb * 12 + mb);
      };
    case 'QUARTER':
      return (a, b) => {
        const [ya, ma] = civilFromDays(a);
        const [yb, mb] = civilFromDays(b);
        return ya * 4 + Math.floor((ma - 1) / 3) - (yb * 4 + Math.floor((mb - 1) / 3));
      };
    case 'YEAR':
      return (a, b) => civilFromDays(a)[0] - civilFromDays(b)[0];
    case 'ISOYEAR':
      return (a, b) => isoWeekYear(a)[0] - isoWeekYear(b)[0];
  }
  return undefined;
}

function diffDays(a: number, b: number, part: Part, fn: string): bigint {
  const f = dateDiffFn(part);
  if (f === undefined) fail(`${fn} does not support the ${part.name} date part`);
  return BigInt(f(a, b));
}

/**
 * Floor division of an integer-valued double |x| < 2^52 by a positive integer
 * unit, exactly: the rounded quotient is off by at most one, and q * unit is
 * exact here, so one comparison each way corrects it (double % is a C call in
 * V8, several times slower).
 */
function floorDivNum(x: number, unit: number): number {
  let q = Math.floor(x / unit);
  const m = q * unit;
  if (m > x) q--;
  else if (m + unit <= x) q++;
  return q;
}

const TWO52 = 4503599627370496;

/**
 * DATE_DIFF / DATETIME_DIFF / TIMESTAMP_DIFF with a constant part as a typed
 * loop on doubles (dates as Int32Array, micros as exact Float64Array), where
 * the general kernel went row by row on boxed BigInts (SUM(DATE_DIFF(d, DATE
 * '2020-01-01', DAY)) over 2M rows 23x DuckDB). Undefined where the general
 * kernel must answer: a part the type does not have (its error). A batch of
 * BigInt64Array micros, or micros (a difference) past 2^52, takes the general path.
 */
export function fastDiff(kind: 'DATE' | 'DATETIME' | 'TIMESTAMP', partValue: Value | undefined, general: ScalarKernel): ScalarKernel | undefined {
  if (typeof partValue !== 'string') return undefined;
  const part = parsePart(partValue);
  const days = dateDiffFn(part);
  const big = US_PER[part.name];
  const unit = big === undefined ? undefined : Number(big);
  if (kind === 'DATE') {
    if (days === undefined) return undefined;
    return (args, n, ctx) => {
      const a = args[0]!.data;
      const b = args[1]!.data;
      if (!(a instanceof Int32Array) || !(b instanceof Int32Array)) return general(args, n, ctx);
      const nulls = mergeNulls([args[0]!, args[1]!], n);
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) if (nulls === null || nulls[i] === 0) out[i] = days(a[i]!, b[i]!);
      return { type: T.INT64, length: n, data: out, nulls };
    };
  }
  // TIMESTAMP_DIFF truncates the difference in micros; DATETIME_DIFF counts part boundaries (diffMicros).
  if (kind === 'TIMESTAMP' ? unit === undefined : unit === undefined && days === undefined) return undefined;
  const DAY = MICROS_PER_DAY;
  return (args, n, ctx) => {
    const a = args[0]!.data;
    const b = args[1]!.data;
    if (!(a instanceof Float64Array) || !(b instanceof Float64Array)) return general(args, n, ctx);
    const nulls = mergeNulls([args[0]!, args[1]!], n);
    const out = new I64Out(n);
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const x = a[i]!;
      const y = b[i]!;
      let r = NaN; // past 2^52: the general path
      if (kind === 'TIMESTAMP') {
        const d = x - y;
        // toward zero: the floor of |d|, signed (0 - q: never -0)
        if (Math.abs(d) < TWO52) r = d < 0 ? 0 - floorDivNum(-d, unit!) : floorDivNum(d, unit!);
      } else if (Math.abs(x) < TWO52 && Math.abs(y) < TWO52) {
        r = unit !== undefined ? floorDivNum(x, unit) - floorDivNum(y, unit) : days!(floorDivNum(x, DAY), floorDivNum(y, DAY));
      }
      if (r === r) out.setNum(i, r);
      else out.setBig(i, diffMicros(BigInt(x), BigInt(y), part, '', kind === 'DATETIME'));
    }
    return out.vector(T.INT64, nulls);
  };
}

/** Floor division of micros by a unit (toward minus infinity). */
function floorDiv(x: bigint, unit: bigint): bigint {
  const q = x / unit;
  return x % unit !== 0n && x < 0n ? q - 1n : q;
}

function diffMicros(a: bigint, b: bigint, part: Part, fn: string, civil: boolean): bigint {
  const unit = US_PER[part.name];
  // DATETIME_DIFF counts the part boundaries between the values (09:59:59 to 10:00:00 is one MINUTE);
  // TIMESTAMP_DIFF truncates the difference (the reference's answers).
  if (unit !== undefined && part.name !== 'DAY' && civil) return floorDiv(a, unit) - floorDiv(b, unit);
  if (unit !== undefined && (part.name !== 'DAY' || !civil)) return (a - b) / unit;
  if (!civil) fail(`${fn} does not support the ${part.name} date part`);
  return diffDays(splitMicros(a)[0], splitMicros(b)[0], part, fn);
}

/** The general *_DIFF kernels: row by row on BigInts, any part (the reference's errors for the parts a type lacks). */
export function diffGeneral(fn: string): Record<'DATE' | 'DATETIME' | 'TIMESTAMP', ScalarKernel> {
  return {
    DATE: rowKernel(T.INT64, (v) => diffDays(v[0] as number, v[1] as number, parsePart(v[2] as string), fn)),
    DATETIME: rowKernel(T.INT64, (v) => diffMicros(v[0] as bigint, v[1] as bigint, parsePart(v[2] as string), fn, true)),
    TIMESTAMP: rowKernel(T.INT64, (v) => diffMicros(v[0] as bigint, v[1] as bigint, parsePart(v[2] as string), fn, false)),
  };
}

// ---------------------------------------------------------------- add/sub with a part

/** A date result in range, or the service's overflow error ("Adding -1 MONTH to date 0001-01-01 causes overflow"). */
function checkDateRange(d: number, from: number, n: number | string, part: string): number {
  if (!(d >= MIN_DATE && d <= MAX_DATE)) fail(`Adding ${n} ${part} to date ${formatDate(from)} causes overflow`);
  return d;
}

function addToDays(days: number, n: number, part: Part, fn: string): number {
  switch (part.name) {
    case 'DAY':
      return checkDateRange(days + n, days, n, part.name);
    case 'WEEK':
      return checkDateRange(days + 7 * n, days, n, part.name);
    case 'MONTH':
      return checkDateRange(addMonthsToDays(days, n), days, n, part.name);
    case 'QUARTER':
      return checkDateRange(addMonthsToDays(days, 3 * n), days, n, part.name);
    case 'YEAR':
      return checkDateRange(addMonthsToDays(days, 12 * n), days, n, part.name);
  }
  fail(`Unsupported date part ${part.name} in function ${fn}`);
}

function addToDatetime(dt: bigint, n: bigint, part: Part, fn: string, isTs: boolean): bigint {
  const unit = US_PER[part.name];
  let r: bigint;
  if (unit !== undefined) r = dt + n * unit;
  else {
    if (isTs) fail(`Unsupported date part ${part.name} in function ${fn}`);
    const [d, t] = splitMicros(dt);
    const months = { MONTH: 1, QUARTER: 3, YEAR: 12 }[part.name as 'MONTH'];
    const days = part.name === 'DAY' ? d + Number(n) : part.name === 'WEEK' ? d + 7 * Number(n) : months ? addMonthsToDays(d, Number(n) * months) : NaN;
    if (Number.isNaN(days) && !months) fail(`Unsupported date part ${part.name} in function ${fn}`);
    // Out of range (NaN past year 9999) is the datetime's overflow below.
    r = Number.isNaN(days) || days < MIN_DATE || days > MAX_DATE ? MAX_TS + 1n : joinMicros(days, t);
  }
  if (r < MIN_TS || r > MAX_TS) {
    // Worded as the reference words each: a TIMESTAMP adds (a negated count for _SUB) in hours for DAY and
    // prints six fraction digits and the zone; a DATETIME says "Subtracting" and prints fractions by threes.
    if (isTs) {
      const [k, p] = part.name === 'DAY' ? [24n * n, 'HOUR'] : [n, part.name];
      const [d, t] = splitMicros(dt);
      fail(`Adding ${k} ${p} to timestamp ${formatDate(d)} ${formatTime(t).slice(0, 8)}.${String(t % 1e6).padStart(6, '0')}+00 causes overflow`);
    }
    const shown = formatDatetime(dt).replace(/(\.\d{3})000$/, '$1');
    if (fn.endsWith('_SUB')) fail(`Subtracting ${-n} ${part.name} from datetime ${shown} causes overflow`);
    fail(`Adding ${n} ${part.name} to datetime ${shown} causes overflow`);
  }
  return r;
}

/**
 * The date parts each *_ADD/*_SUB takes, by the type of its first argument, refused in the reference's words
 * (builtin_function_internal_1.cc): no time parts for a DATE, no WEEK and longer for a TIMESTAMP or a TIME,
 * no DAY for a TIME.
 */
function addSubPartError(fn: string, kind: string, part: unknown): string | undefined {
  if (typeof part !== 'string') return undefined;
  const name = part.startsWith('WEEK(') ? 'WEEK' : part;
  const long = ['YEAR', 'ISOYEAR', 'QUARTER', 'MONTH', 'WEEK', 'ISOWEEK'].includes(name);
  const time = ['HOUR', 'MINUTE', 'SECOND', 'MILLISECOND', 'MICROSECOND', 'NANOSECOND'].includes(name);
  const refused = long ? kind === 'TIMESTAMP' || kind === 'TIME' : name === 'DAY' ? kind === 'TIME' : time ? kind === 'DATE' : false;
  return refused ? `${fn} does not support the ${part} date part` : undefined;
}

/**
 * The date parts each *_DIFF, *_TRUNC and LAST_DAY takes, by the matched type of its first argument, refused at
 * analysis in the reference's words: as an analysis error, SAFE. does not hide it and an empty input still fails.
 */
const TIME_PARTS = ['MICROSECOND', 'MILLISECOND', 'SECOND', 'MINUTE', 'HOUR'];
const DAY_PARTS = ['DAY', 'WEEK', 'ISOWEEK', 'MONTH', 'QUARTER', 'YEAR', 'ISOYEAR'];
function partOptions(fn: string, family: 'diff' | 'trunc' | 'last'): ScalarOptions {
  return {
    validate: (args, m) => {
      const part = args[family === 'diff' ? 2 : 1]?.constant?.value;
      if (typeof part !== 'string') return undefined;
      const name = part.toUpperCase().replace(/\s+/g, '').replace(/^WEEK\(.*$/, 'WEEK');
      const kind = m.argTypes[0]!.kind;
      const allowed =
        family === 'last' ? DAY_PARTS.slice(1)
        : kind === 'DATE' ? DAY_PARTS
        : kind === 'TIME' ? TIME_PARTS
        : kind === 'TIMESTAMP' && family === 'diff' ? [...TIME_PARTS, 'DAY']
        : [...TIME_PARTS, ...DAY_PARTS];
      return allowed.includes(name) ? undefined : `${fn} does not support the ${part} date part`;
    },
  };
}

// ---------------------------------------------------------------- helpers

const zoneOf = (v: Value[], idx: number, ctx: EvalContext): string => (v.length > idx && v[idx] !== undefined ? (v[idx] as string) : ctx.timeZone);

/**
 * A TIMESTAMP's civil date and time in a zone as a DATE or DATETIME value: near either end of the range an offset
 * crosses it (0001-01-01 00:00 UTC is 0000-12-31 in New York), which is no value of those types, refused as the
 * reference refuses it.
 */
function civilValueIn(ts: bigint, zone: string, what: 'date' | 'datetime'): bigint {
  const civil = utcToCivil(ts, zone);
  if (civil < MIN_TS || civil > MAX_TS) fail(`Invalid ${what} extracted from timestamp ${formatTimestampIn(ts, zone)}`);
  return civil;
}

function tsToCivil(ts: bigint, zone: string): [number, number] {
  return splitMicros(utcToCivil(ts, zone));
}

const partArg: ArgSpec = { type: 'STRING', constant: true };
const optPart: ArgSpec = { type: 'STRING', constant: true, optional: true };

function checkTs(r: bigint): bigint {
  if (r < MIN_TS || r > MAX_TS) fail('TIMESTAMP overflow');
  return r;
}

function makeDate(y: bigint, m: bigint, d: bigint): number {
  const yy = Number(y), mm = Number(m), dd = Number(d);
  if (yy < 1 || yy > 9999 || mm < 1 || mm > 12 || dd < 1 || dd > daysInMonth(yy, mm)) fail(`Input calculates to invalid date: ${pad4(yy)}-${pad2(mm)}-${pad2(dd)}`);
  return daysFromCivil(yy, mm, dd);
}
const pad2 = (n: number): string => String(n).padStart(2, '0');
const pad4 = (n: number): string => String(n).padStart(4, '0');
/** DATETIME(y, m, d, h, mi, s): one check of all six parts, worded as the reference does (its hour is printed with %04d). */
function makeDatetime(v: readonly Value[]): bigint {
  const [y, mo, d, h, mi, s] = v.map((x) => Number(x as bigint)) as [number, number, number, number, number, number];
  const bad = () => fail(`Input calculates to invalid datetime: ${pad4(y)}-${pad2(mo)}-${pad2(d)} ${pad4(h)}:${pad2(mi)}:${pad2(s)}`);
  if (y < 1 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60) bad();
  // Second 60 (a leap second) rolls over into the next minute, as the reference's constructors do.
  const r = joinMicros(daysFromCivil(y, mo, d), ((h * 60 + mi) * 60 + s) * 1e6);
  if (r > MAX_TS) bad();
  return r;
}
function makeTime(h: bigint, m: bigint, s: bigint): number {
  const hh = Number(h), mm = Number(m), ss = Number(s);
  if (hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 60) fail(`Input calculates to invalid time: ${pad2(hh)}:${pad2(mm)}:${pad2(ss)}`);
  // Second 60 rolls over (23:59:60 is 00:00:00), as the reference's TIME(h, m, s) does.
  return (((hh * 60 + mm) * 60 + ss) * 1e6) % 86400e6;
}

// ---------------------------------------------------------------- buckets

function bucketCivil(dt: bigint, iv: Interval, origin: bigint): bigint {
  if (iv.months !== 0) {
    if (iv.days !== 0 || iv.micros !== 0n) fail('BUCKET interval must not mix months with days or time');
    if (iv.months < 0) fail('BUCKET interval must be positive');
    const [d] = splitMicros(dt);
    const [od, ot] = splitMicros(origin);
    const [y, m] = civilFromDays(d);
    const [oy, om] = civilFromDays(od);
    let k = Math.floor((y * 12 + m - (oy * 12 + om)) / iv.months);
    let cand = joinMicros(addMonthsToDays(od, k * iv.months), ot);
    if (cand > dt) {
      k--;
      cand = joinMicros(addMonthsToDays(od, k * iv.months), ot);
    }
    return cand;
  }
  // One non-zero part (time-series-functions.md: "a single interval"; the reference reads it from the value, so
  // INTERVAL 90 MINUTE and INTERVAL '1:30' HOUR TO MINUTE are the same width, but DAY with a time part is refused).
  if (iv.days !== 0 && iv.micros !== 0n) fail('Exactly one non-zero INTERVAL part in bucket width is required');
  const width = BigInt(iv.days) * US_DAY + iv.micros;
  if (width <= 0n) fail('BUCKET interval must be positive');
  let q = (dt - origin) / width;
  if ((dt - origin) % width < 0n) q -= 1n;
  return origin + q * width;
}

const DEFAULT_ORIGIN = joinMicros(daysFromCivil(1950, 1, 1), 0);

// ---------------------------------------------------------------- registration

export function registerDatetime(): void {
  // Constructors / conversions
  defineScalar('DATE', [
    sig(['INT64', 'INT64', 'INT64'], 'DATE', rowKernel(T.DATE, (v) => makeDate(v[0] as bigint, v[1] as bigint, v[2] as bigint))),
    sig(['TIMESTAMP', opt('STRING')], 'DATE', rowKernel(T.DATE, (v, ctx) => splitMicros(civilValueIn(v[0] as bigint, zoneOf(v, 1, ctx), 'date'))[0])),
    sig(['DATETIME'], 'DATE', rowKernel(T.DATE, (v) => splitMicros(v[0] as bigint)[0])),
    sig(['DATE'], 'DATE', rowKernel(T.DATE, (v) => v[0]!)),
    sig(['STRING'], 'DATE', rowKernel(T.DATE, (v, ctx) => {
      // A date or zone-less datetime string gives its written date; a string with a
      // time zone is a TIMESTAMP, whose date is taken in the default time zone.
      const s = v[0] as string;
      const dt = parseDatetimeString(s);
      const ts = dt === undefined ? parseTimestampString(s, ctx.timeZone) : undefined;
      const d = parseDateString(s) ?? (dt !== undefined ? splitMicros(dt)[0] : ts !== undefined ? tsToCivil(ts, ctx.timeZone)[0] : datePartOf(s));
      if (d === undefined) fail(`Invalid date: '${s}'`);
      return d;
    })),
  ]);
  defineScalar('DATETIME', [
    sig(['INT64', 'INT64', 'INT64', 'INT64', 'INT64', 'INT64'], 'DATETIME', rowKernel(T.DATETIME, makeDatetime)),
    sig(['DATE', 'TIME'], 'DATETIME', rowKernel(T.DATETIME, (v) => joinMicros(v[0] as number, v[1] as number))),
    sig(['DATE'], 'DATETIME', rowKernel(T.DATETIME, (v) => joinMicros(v[0] as number, 0))),
    sig(['TIMESTAMP', opt('STRING')], 'DATETIME', rowKernel(T.DATETIME, (v, ctx) => civilValueIn(v[0] as bigint, zoneOf(v, 1, ctx), 'datetime'))),
    sig(['DATETIME'], 'DATETIME', rowKernel(T.DATETIME, (v) => v[0]!)),
    sig(['STRING'], 'DATETIME', rowKernel(T.DATETIME, (v) => {
      const d = parseDatetimeString(v[0] as string);
      if (d === undefined) fail(`Invalid datetime string "${v[0] as string}"`);
      return d;
    })),
  ]);
  defineScalar('TIME', [
    sig(['INT64', 'INT64', 'INT64'], 'TIME', rowKernel(T.TIME, (v) => makeTime(v[0] as bigint, v[1] as bigint, v[2] as bigint))),
    sig(['TIMESTAMP', opt('STRING')], 'TIME', rowKernel(T.TIME, (v, ctx) => tsToCivil(v[0] as bigint, zoneOf(v, 1, ctx))[1])),
    sig(['DATETIME'], 'TIME', rowKernel(T.TIME, (v) => splitMicros(v[0] as bigint)[1])),
    sig(['TIME'], 'TIME', rowKernel(T.TIME, (v) => v[0]!)),
    sig(['STRING'], 'TIME', rowKernel(T.TIME, (v) => {
      const d = parseTimeString(v[0] as string);
      if (d === undefined) fail(`Invalid time string "${v[0] as string}"`);
      return d;
    })),
  ]);
  defineScalar('TIMESTAMP', [
    sig(['STRING', opt('STRING')], 'TIMESTAMP', rowKernel(T.TIMESTAMP, (v, ctx) => {
      const z = zoneOf(v, 1, ctx);
      resolveZone(z);
      const r = parseTimestampString(v[0] as string, z);
      if (r === undefined) fail(`Invalid timestamp: '${v[0] as string}'`);
      return r;
    })),
    sig(['DATE', opt('STRING')], 'TIMESTAMP', rowKernel(T.TIMESTAMP, (v, ctx) => checkTs(civilToUtc(joinMicros(v[0] as number, 0), zoneOf(v, 1, ctx))))),
    sig(['DATETIME', opt('STRING')], 'TIMESTAMP', rowKernel(T.TIMESTAMP, (v, ctx) => checkTs(civilToUtc(v[0] as bigint, zoneOf(v, 1, ctx))))),
    sig(['TIMESTAMP'], 'TIMESTAMP', rowKernel(T.TIMESTAMP, (v) => v[0]!)),
  ]);

  // CURRENT_*
  const nowCivil = (ctx: EvalContext, zone?: string): bigint => utcToCivil(ctx.nowMicros, zone ?? ctx.timeZone);
  const zoned = (t: SqlType, f: (civil: bigint) => Value): ScalarKernel => (args, n, ctx) => {
    if (args.length === 0) return constKernel(t, (c) => f(nowCivil(c)))(args, n, ctx);
    return rowKernel(t, (v, c) => f(nowCivil(c, v[0] as string)))(args, n, ctx);
  };
  defineScalar('CURRENT_DATE', [sig([opt('STRING')], 'DATE', zoned(T.DATE, (c) => splitMicros(c)[0]))]);
  defineScalar('CURRENT_DATETIME', [sig([opt('STRING')], 'DATETIME', zoned(T.DATETIME, (c) => c))]);
  defineScalar('CURRENT_TIME', [sig([opt('STRING')], 'TIME', zoned(T.TIME, (c) => splitMicros(c)[1]))]);
  defineScalar('CURRENT_TIMESTAMP', [sig([], 'TIMESTAMP', constKernel(T.TIMESTAMP, (ctx) => ctx.nowMicros))]);

  // EXTRACT
  defineScalar(
    '$extract',
    [
      sigf([partArg, 'DATE'], 'INT64', (c) => fastExtract(c.args[0]!.constant?.value, 'DATE') ?? rowKernel(T.INT64, (v) => extractCivil(parsePart(v[0] as string), v[1] as number, 0, 'DATE'))),
      sigf([partArg, 'TIMESTAMP', opt('STRING')], (c) => extractType(c.args[0]!.constant?.value), (c) => (c.args.length === 2 ? fastExtract(c.args[0]!.constant?.value, 'TIMESTAMP') : undefined) ?? rowKernel(extractType(c.args[0]!.constant?.value), (v, ctx) => {
        const p = parsePart(v[0] as string);
        const zone = zoneOf(v, 2, ctx);
        if (p.name === 'DATE') return splitMicros(civilValueIn(v[1] as bigint, zone, 'date'))[0];
        if (p.name === 'DATETIME') return civilValueIn(v[1] as bigint, zone, 'datetime');
        const [d, t] = splitMicros(utcToCivil(v[1] as bigint, zone));
        if (p.name === 'TIME') return t;
        return extractCivil(p, d, t, 'TIMESTAMP');
      })),
      sigf([partArg, 'DATETIME'], (c) => extractType(c.args[0]!.constant?.value), (c) => fastExtract(c.args[0]!.constant?.value, 'DATETIME') ?? rowKernel(extractType(c.args[0]!.constant?.value), (v) => {
        const p = parsePart(v[0] as string);
        const [d, t] = splitMicros(v[1] as bigint);
        if (p.name === 'DATE') return d;
        if (p.name === 'TIME') return t;
        return extractCivil(p, d, t, 'DATETIME');
      })),
      sig([partArg, 'TIME'], 'INT64', rowKernel(T.INT64, (v) => {
        const p = parsePart(v[0] as string);
        if (!['HOUR', 'MINUTE', 'SECOND', 'MILLISECOND', 'MICROSECOND'].includes(p.name)) fail(`EXTRACT from TIME does not support the ${p.name} date part`);
        return extractCivil(p, 0, v[1] as number, 'TIME');
      })),
      sigf([partArg, 'INTERVAL'], 'INT64', (c) => {
        const rows = rowKernel(T.INT64, (v) => extractInterval(v[1] as Interval, parsePart(v[0] as string).name));
        const part = c.args[0]!.constant?.value;
        if (typeof part !== 'string') return rows;
        let name: string | undefined;
        try {
          name = parsePart(part).name;
        } catch {
          return rows; // (its error is raised per row)
        }
        return orRows((args, n) => extractIntervalParts(name, args[1]!, n), rows);
      }),
    ],
    {
      safeCallable: false,
      // Named as users write it ("No matching signature for function EXTRACT for argument types: DATE_TIME_PART FROM INT64").
      display: {
        what: 'function EXTRACT',
        given: (a) => `DATE_TIME_PART FROM ${a[1]}${a[2] ? ` AT TIME ZONE ${a[2]}` : ''}`,
        signature: (_n, a) => `EXTRACT(DATE_TIME_PART FROM ${a[1]}${a[2] ? ' [AT TIME ZONE STRING]' : ''})`,
      },
    },
  );

  // *_ADD / *_SUB with INTERVAL (the analyzer passes `INTERVAL n PART` as an INTERVAL value)
  const dateAdd = (sign: number, fn: string) => [
    sig(['DATE', 'INTERVAL'], 'DATE', (args, n) => {
      // Typed: DATE in/out as Int32Array; intervals read from the values array.
      const dv = args[0]!;
      const iv = args[1]!;
      const dd = dv.data as Int32Array;
      const ivs = iv.data as Value[];
      const nulls = mergeNulls(args, n);
      const out = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) continue;
        const x = ivs[i] as Interval;
        if (x.micros !== 0n) fail(`${fn} does not support time parts; use DATETIME_${fn.slice(5)}`);
        let d = dd[i]!;
        if (x.months !== 0) d = checkDateRange(addMonthsToDays(d, sign * x.months), dd[i]!, sign * x.months, 'MONTH');
        out[i] = checkDateRange(d + sign * x.days, dd[i]!, sign * x.days, 'DAY');
      }
      return { type: T.DATE, length: n, data: out, nulls };
    }),
    sigf(['DATE', 'INT64', partArg], 'DATE', (c) => {
      const slow = rowKernel(T.DATE, (v) => addToDays(v[0] as number, sign * Number(v[1] as bigint), parsePart(v[2] as string), fn));
      const p = c.args[2]!.constant?.value;
      if (typeof p !== 'string') return slow;
      const part = parsePart(p);
      // The part is a constant: typed arrays in and out, no value boxed per row (DATE_ADD(d, INTERVAL id DAY) over 100k rows).
      return (args, n, ctx) => {
        const kd = args[1]!.data;
        if (!(kd instanceof Float64Array)) return slow(args, n, ctx);
        const dd = args[0]!.data as Int32Array;
        const nulls = mergeNulls(args, n);
        const out = new Int32Array(n);
        for (let i = 0; i < n; i++) if (nulls === null || nulls[i] !== 1) out[i] = addToDays(dd[i]!, sign * kd[i]!, part, fn);
        return { type: T.DATE, length: n, data: out, nulls };
      };
    }),
  ];
  // The second argument must be written `INTERVAL n PART` (or be an INTERVAL value); the reference refuses anything
  // else, an untyped NULL too, with "Expected INTERVAL expression", and lists the one form users write.
  const addSubOptions = (fn: string): ScalarOptions => ({
    mismatch: (args) => (args.length === 2 && args[1]!.type.kind !== 'INTERVAL' ? 'Expected INTERVAL expression' : undefined),
    validate: (args) =>
      args.length === 2 && args[1]!.untypedNull ? 'Expected INTERVAL expression' : args.length === 3 ? addSubPartError(fn, args[0]!.type.kind, args[2]!.constant?.value) : undefined,
    display: { what: `function ${fn}`, signature: (_n, a) => `${fn}(${a[0]}, INTERVAL INT64 DATE_TIME_PART)` },
  });
  defineScalar('DATE_ADD', dateAdd(1, 'DATE_ADD'), addSubOptions('DATE_ADD'));
  defineScalar('DATE_SUB', dateAdd(-1, 'DATE_SUB'), addSubOptions('DATE_SUB'));
  const dtAdd = (sign: number, fn: string, isTs: boolean) => {
    const t = isTs ? 'TIMESTAMP' : 'DATETIME';
    const vt = isTs ? T.TIMESTAMP : T.DATETIME;
    return [
      sig([t, 'INTERVAL'], t, rowKernel(vt, (v) => {
        const iv = v[1] as Interval;
        if (isTs && iv.months !== 0) fail(`${fn} does not support the MONTH date part when the argument is TIMESTAMP`);
        return datetimeAddInterval(v[0] as bigint, iv, sign);
      })),
      sigf([t, 'INT64', partArg], t, (c) => {
        const slow = rowKernel(vt, (v) => addToDatetime(v[0] as bigint, BigInt(sign) * (v[1] as bigint), parsePart(v[2] as string), fn, isTs));
        const p = c.args[2]!.constant?.value;
        const part = typeof p === 'string' ? parsePart(p) : null;
        const unit = part ? US_PER[part.name] : undefined;
        if (!part || unit === undefined) return slow;
        const u = sign * Number(unit);
        // The part is a constant of fixed length: doubles in and out (TIMESTAMP_ADD(ts, INTERVAL n SECOND) over a CTAS's
        // rows); a row whose sum is not exact below 2^53 (inside the TIMESTAMP range) goes through addToDatetime.
        return (args, n, ctx) => {
          const a = args[0]!.data;
          const k = args[1]!.data;
          if (!(a instanceof Float64Array) || !(k instanceof Float64Array)) return slow(args, n, ctx);
          const nulls = mergeNulls(args, n);
          const out = new I64Out(n);
          for (let i = 0; i < n; i++) {
            if (nulls !== null && nulls[i] === 1) continue;
            const d = k[i]! * u;
            const r = a[i]! + d;
            if (out.f !== null && d < EXACT && d > -EXACT && r < EXACT && r > -EXACT) out.f[i] = r === 0 ? 0 : r;
            else out.setBig(i, addToDatetime(BigInt(a[i]!), BigInt(sign) * BigInt(k[i]!), part, fn, isTs));
          }
          return out.vector(vt, nulls);
        };
      }),
    ];
  };
  defineScalar('DATETIME_ADD', dtAdd(1, 'DATETIME_ADD', false), addSubOptions('DATETIME_ADD'));
  defineScalar('DATETIME_SUB', dtAdd(-1, 'DATETIME_SUB', false), addSubOptions('DATETIME_SUB'));
  defineScalar('TIMESTAMP_ADD', dtAdd(1, 'TIMESTAMP_ADD', true), addSubOptions('TIMESTAMP_ADD'));
  defineScalar('TIMESTAMP_SUB', dtAdd(-1, 'TIMESTAMP_SUB', true), addSubOptions('TIMESTAMP_SUB'));
  const timeAdd = (sign: number) => [
    sig(['TIME', 'INTERVAL'], 'TIME', rowKernel(T.TIME, (v) => {
      const iv = v[1] as Interval;
      const r = (BigInt(v[0] as number) + BigInt(sign) * iv.micros) % US_DAY;
      return Number(r < 0n ? r + US_DAY : r);
    })),
    sig(['TIME', 'INT64', partArg], 'TIME', rowKernel(T.TIME, (v) => {
      const unit = US_PER[parsePart(v[2] as string).name];
      if (unit === undefined || unit === US_DAY) fail(`Unsupported date part ${v[2] as string} in function TIME_${sign > 0 ? 'ADD' : 'SUB'}`);
      const r = (BigInt(v[0] as number) + BigInt(sign) * (v[1] as bigint) * unit) % US_DAY;
      return Number(r < 0n ? r + US_DAY : r);
    })),
  ];
  defineScalar('TIME_ADD', timeAdd(1), addSubOptions('TIME_ADD'));
  defineScalar('TIME_SUB', timeAdd(-1), addSubOptions('TIME_SUB'));

  // *_DIFF
  // Each *_DIFF follows the type of its arguments (the pages' notes: DATE_DIFF(TIMESTAMP, ...) is
  // TIMESTAMP_DIFF, TIMESTAMP_DIFF(DATE, ...) is DATE_DIFF, ...); its own type is listed first so a
  // pair of string literals reads as that type.
  const timeDiff = (fn: string) => sig(['TIME', 'TIME', partArg], 'INT64', rowKernel(T.INT64, (v) => {
    const unit = US_PER[parsePart(v[2] as string).name];
    if (unit === undefined || unit === US_DAY) fail(`${fn} does not support the ${v[2] as string} date part`);
    // Part boundaries between the two times, as DATETIME_DIFF.
    return floorDiv(BigInt(v[0] as number), unit) - floorDiv(BigInt(v[1] as number), unit);
  }));
  const diffSigs = (fn: string, first: 'DATE' | 'DATETIME' | 'TIMESTAMP' | 'TIME') => {
    const general = diffGeneral(fn);
    const withFast = (k: 'DATE' | 'DATETIME' | 'TIMESTAMP') =>
      sigf([k, k, partArg], 'INT64', (c) => fastDiff(k, c.args[2]?.constant?.value, general[k]) ?? general[k]);
    const all = {
      DATE: withFast('DATE'),
      DATETIME: withFast('DATETIME'),
      TIMESTAMP: withFast('TIMESTAMP'),
      TIME: timeDiff(fn),
    };
    const order = [first, ...(['DATE', 'DATETIME', 'TIMESTAMP', 'TIME'] as const).filter((k) => k !== first)];
    return order.map((k) => all[k]);
  };
  defineScalar('DATE_DIFF', diffSigs('DATE_DIFF', 'DATE'), partOptions('DATE_DIFF', 'diff'));
  defineScalar('DATETIME_DIFF', diffSigs('DATETIME_DIFF', 'DATETIME'), partOptions('DATETIME_DIFF', 'diff'));
  defineScalar('TIMESTAMP_DIFF', diffSigs('TIMESTAMP_DIFF', 'TIMESTAMP'), partOptions('TIMESTAMP_DIFF', 'diff'));
  defineScalar('TIME_DIFF', diffSigs('TIME_DIFF', 'TIME'), partOptions('TIME_DIFF', 'diff'));

  // *_TRUNC
  defineScalar('DATE_TRUNC', [
    sigf(['DATE', partArg], 'DATE', (c) => fastDateTrunc(c.args[1]!.constant?.value) ?? rowKernel(T.DATE, (v) => {
      const p = parsePart(v[1] as string);
      const r = truncDays(v[0] as number, p);
      if (Number.isNaN(r)) fail(`DATE_TRUNC does not support the ${p.name} date part when the argument is DATE`);
      if (r < MIN_DATE) fail(`Truncating date ${formatDate(v[0] as number)} to ${p.name} resulted in an out of range date value: ${r}`);
      return r;
    })),
    sig(['DATETIME', partArg], 'DATETIME', rowKernel(T.DATETIME, (v) => truncDatetime(v[0] as bigint, parsePart(v[1] as string), 'DATE_TRUNC', 'DATETIME'))),
    sig(['TIMESTAMP', partArg, opt('STRING')], 'TIMESTAMP', rowKernel(T.TIMESTAMP, (v, ctx) => truncTimestamp(v[0] as bigint, parsePart(v[1] as string), zoneOf(v, 2, ctx)))),
  ], partOptions('DATE_TRUNC', 'trunc'));
  // each *_TRUNC also takes the other civil/absolute type (DATETIME_TRUNC(timestamp, part[, zone]), TIMESTAMP_TRUNC(datetime, part))
  const truncSig = (fn: string, kind: 'DATETIME' | 'TIMESTAMP') => {
    const general = truncGeneral(fn, kind);
    const args = kind === 'TIMESTAMP' ? ['TIMESTAMP', partArg, opt('STRING')] : ['DATETIME', partArg];
    return sigf(args, kind, (c) => fastTrunc(fn, kind, c.args[1]?.constant?.value, c.args.length > 2 ? c.args[2]!.constant?.value ?? null : undefined, general) ?? general);
  };
  defineScalar('DATETIME_TRUNC', [truncSig('DATETIME_TRUNC', 'DATETIME'), truncSig('DATETIME_TRUNC', 'TIMESTAMP')], partOptions('DATETIME_TRUNC', 'trunc'));
  defineScalar('TIMESTAMP_TRUNC', [truncSig('TIMESTAMP_TRUNC', 'TIMESTAMP'), truncSig('TIMESTAMP_TRUNC', 'DATETIME')], partOptions('TIMESTAMP_TRUNC', 'trunc'));
  defineScalar('TIME_TRUNC', [
    sig(['TIME', partArg], 'TIME', rowKernel(T.TIME, (v) => {
      const p = parsePart(v[1] as string);
      const unit = US_PER[p.name];
      if (unit === undefined || unit === US_DAY) fail(`TIME_TRUNC does not support the ${p.name} date part`);
      const u = Number(unit);
      return Math.floor((v[0] as number) / u) * u;
    })),
  ], partOptions('TIME_TRUNC', 'trunc'));
  defineScalar('LAST_DAY', [
    sig(['DATE', optPart], 'DATE', rowKernel(T.DATE, (v) => lastDay(v[0] as number, parsePart(v.length > 1 ? (v[1] as string) : 'MONTH')))),
    sig(['DATETIME', optPart], 'DATE', rowKernel(T.DATE, (v) => lastDay(splitMicros(v[0] as bigint)[0], parsePart(v.length > 1 ? (v[1] as string) : 'MONTH')))),
  ], partOptions('LAST_DAY', 'last'));

  // Buckets: each name accepts DATE, DATETIME and TIMESTAMP forms.
  const bucketSigs = [
    sig(['DATE', 'INTERVAL', opt('DATE')], 'DATE', rowKernel(T.DATE, (v) => {
      const iv = v[1] as Interval;
      if (iv.micros !== 0n) fail('DATE_BUCKET only supports intervals of days, weeks, months, quarters and years');
      const origin = v.length > 2 ? joinMicros(v[2] as number, 0) : DEFAULT_ORIGIN;
      return splitMicros(bucketCivil(joinMicros(v[0] as number, 0), iv, origin))[0];
    })),
    sig(['DATETIME', 'INTERVAL', opt('DATETIME')], 'DATETIME', rowKernel(T.DATETIME, (v) => bucketCivil(v[0] as bigint, v[1] as Interval, v.length > 2 ? (v[2] as bigint) : DEFAULT_ORIGIN))),
    sig(['TIMESTAMP', 'INTERVAL', opt('TIMESTAMP')], 'TIMESTAMP', rowKernel(T.TIMESTAMP, (v, ctx) => {
      const zone = ctx.timeZone;
      const iv = v[1] as Interval;
      if (iv.months !== 0) fail('TIMESTAMP_BUCKET does not support intervals with MONTH or YEAR parts');
      // Buckets are fixed lengths of absolute time (a day = 24 h) counted from the
      // origin instant; the default origin is 1950-01-01 00:00 in the default time zone.
      const origin = v.length > 2 ? (v[2] as bigint) : civilToUtc(DEFAULT_ORIGIN, zone);
      return bucketCivil(v[0] as bigint, iv, origin);
    })),
  ];
  // Each name lists its own type first so that NULL arguments resolve to it.
  defineScalar('DATE_BUCKET', [bucketSigs[0]!, bucketSigs[1]!, bucketSigs[2]!]);
  defineScalar('DATETIME_BUCKET', [bucketSigs[1]!, bucketSigs[0]!, bucketSigs[2]!]);
  defineScalar('TIMESTAMP_BUCKET', [bucketSigs[2]!, bucketSigs[1]!, bucketSigs[0]!]);

  // STRING(temporal [, time zone])
  defineScalar('STRING', [
    sig(['TIMESTAMP', opt('STRING')], 'STRING', rowKernel(T.STRING, (v, ctx) => formatTimestampIn(v[0] as bigint, zoneOf(v, 1, ctx)))),
    sig(['DATE'], 'STRING', rowKernel(T.STRING, (v) => formatDate(v[0] as number))),
    sig(['DATETIME'], 'STRING', rowKernel(T.STRING, (v) => formatDatetime(v[0] as bigint))),
    sig(['TIME'], 'STRING', rowKernel(T.STRING, (v) => formatTime(v[0] as number))),
    sig(['JSON'], 'STRING', rowKernel(T.STRING, (v) => {
      const n = (v[0] as JsonValue).node;
      if (typeof n !== 'string') fail('The provided JSON input is not a string');
      return n;
    })),
  ]);

  // Arrays of dates / timestamps
  defineScalar('GENERATE_DATE_ARRAY', [
    sig(['DATE', 'DATE', opt('INTERVAL')], 'ARRAY<DATE>', rowKernel(arrayOf(T.DATE), (v) => {
      const iv = v.length > 2 ? (v[2] as Interval) : new Interval(0, 1, 0n);
      if (iv.micros !== 0n) fail('GENERATE_DATE_ARRAY only supports date parts');
      if (iv.months === 0 && iv.days === 0) fail('Sequence step cannot be 0.');
      const start = v[0] as number;
      const end = v[1] as number;
      const out: Value[] = [];
      const pos = iv.months > 0 || (iv.months === 0 && iv.days > 0);
      // Each element is the previous one plus the step (the reference's sequence: 01-31, 02-29, 03-29, ...).
      for (let d = start; !Number.isNaN(d) && (pos ? d <= end : d >= end); d = addMonthsToDays(d, iv.months) + iv.days) {
        out.push(d);
        if (out.length > 1048576) fail('GENERATE_DATE_ARRAY would produce more than 1048576 elements');
      }
      return out;
    })),
  ]);
  defineScalar('GENERATE_TIMESTAMP_ARRAY', [
    sig(['TIMESTAMP', 'TIMESTAMP', 'INTERVAL'], 'ARRAY<TIMESTAMP>', rowKernel(arrayOf(T.TIMESTAMP), (v) => {
      const iv = v[2] as Interval;
      // The service names the step's date part; a whole number of years reads as YEAR.
      if (iv.months !== 0) fail(`GENERATE_TIMESTAMP_ARRAY does not support the ${iv.months % 12 === 0 ? 'YEAR' : 'MONTH'} date part`);
      const step = BigInt(iv.days) * US_DAY + iv.micros;
      if (step === 0n) fail('Sequence step cannot be 0.');
      const out: Value[] = [];
      for (let t = v[0] as bigint; step > 0n ? t <= (v[1] as bigint) : t >= (v[1] as bigint); t += step) {
        out.push(t);
        if (out.length > 1048576) fail('GENERATE_TIMESTAMP_ARRAY would produce more than 1048576 elements');
      }
      return out;
    })),
  ], {
    // A literal step's date part is refused at analysis, as the reference does (SAFE. does not hide it).
    validate: (args) => {
      const iv = args[2]?.constant?.value;
      return iv instanceof Interval && iv.months !== 0 ? `GENERATE_TIMESTAMP_ARRAY does not support the ${iv.months % 12 === 0 ? 'YEAR' : 'MONTH'} date part` : undefined;
    },
  });

  // UNIX conversions
  defineScalar('UNIX_DATE', [sig(['DATE'], 'INT64', rowKernel(T.INT64, (v) => BigInt(v[0] as number)))]);
  defineScalar('DATE_FROM_UNIX_DATE', [sig(['INT64'], 'DATE', rowKernel(T.DATE, (v) => {
    const d = Number(v[0] as bigint);
    if (d < MIN_DATE || d > MAX_DATE) fail(`DATE_FROM_UNIX_DATE range is ${MIN_DATE} to ${MAX_DATE} but saw ${v[0]}`);
    return d;
  }))]);
  const floorDiv = (a: bigint, b: bigint): bigint => (a >= 0n ? a / b : -((-a + b - 1n) / b));
  defineScalar('UNIX_SECONDS', [sig(['TIMESTAMP'], 'INT64', rowKernel(T.INT64, (v) => floorDiv(v[0] as bigint, 1000000n)))]);
  defineScalar('UNIX_MILLIS', [sig(['TIMESTAMP'], 'INT64', rowKernel(T.INT64, (v) => floorDiv(v[0] as bigint, 1000n)))]);
  defineScalar('UNIX_MICROS', [sig(['TIMESTAMP'], 'INT64', rowKernel(T.INT64, (v) => v[0]!))]);
  const fromUnix = (mult: bigint) => rowKernel(T.TIMESTAMP, (v) => {
    const r = (v[0] as bigint) * mult;
    if (r < MIN_TS || r > MAX_TS) fail(`Input value ${v[0]} cannot be converted into a TIMESTAMP, because it would be out of the allowed range between ${MIN_TS} to ${MAX_TS} (microseconds)`);
    return r;
  });
  defineScalar('TIMESTAMP_SECONDS', [sig(['INT64'], 'TIMESTAMP', fromUnix(1000000n))]);
  defineScalar('TIMESTAMP_MILLIS', [sig(['INT64'], 'TIMESTAMP', fromUnix(1000n))]);
  defineScalar('TIMESTAMP_MICROS', [sig(['INT64'], 'TIMESTAMP', fromUnix(1n))]);
  defineScalar('TIMESTAMP_FROM_UNIX_SECONDS', [sig(['INT64'], 'TIMESTAMP', fromUnix(1000000n))]);
  defineScalar('TIMESTAMP_FROM_UNIX_MILLIS', [sig(['INT64'], 'TIMESTAMP', fromUnix(1000n))]);
  defineScalar('TIMESTAMP_FROM_UNIX_MICROS', [sig(['INT64'], 'TIMESTAMP', fromUnix(1n))]);

  // FORMAT_* / PARSE_*
  const formatDateGeneral = rowKernel(T.STRING, (v) => formatStrftime(v[0] as string, v[1] as number, 0, null, 'DATE'));
  defineScalar('FORMAT_DATE', [sigf(['STRING', 'DATE'], 'STRING', (c) => fastFormatDate(c.args[0]?.constant?.value, formatDateGeneral) ?? formatDateGeneral)]);
  defineScalar('FORMAT_DATETIME', [sig(['STRING', 'DATETIME'], 'STRING', rowKernel(T.STRING, (v) => {
    const [d, t] = splitMicros(v[1] as bigint);
    return formatStrftime(v[0] as string, d, t, null, 'DATETIME');
  }))]);
  defineScalar('FORMAT_TIME', [sig(['STRING', 'TIME'], 'STRING', rowKernel(T.STRING, (v) => formatStrftime(v[0] as string, 0, v[1] as number, null, 'TIME')))]);
  defineScalar('FORMAT_TIMESTAMP', [sig(['STRING', 'TIMESTAMP', opt('STRING')], 'STRING', rowKernel(T.STRING, (v, ctx) => {
    const zone = zoneOf(v, 2, ctx);
    const ts = v[1] as bigint;
    const [d, t] = splitMicros(utcToCivil(ts, zone));
    return formatStrftime(v[0] as string, d, t, { zone, ts }, 'TIMESTAMP');
  }))]);
  defineScalar('PARSE_DATE', [sig(['STRING', 'STRING'], 'DATE', rowKernel(T.DATE, (v, ctx) => parseStrftime(v[0] as string, v[1] as string, 'DATE', ctx.timeZone).days))]);
  defineScalar('PARSE_DATETIME', [sig(['STRING', 'STRING'], 'DATETIME', rowKernel(T.DATETIME, (v, ctx) => {
    const r = parseStrftime(v[0] as string, v[1] as string, 'DATETIME', ctx.timeZone);
    return joinMicros(r.days, r.tod);
  }))]);
  defineScalar('PARSE_TIME', [sig(['STRING', 'STRING'], 'TIME', rowKernel(T.TIME, (v, ctx) => parseStrftime(v[0] as string, v[1] as string, 'TIME', ctx.timeZone).tod))]);
  defineScalar('PARSE_TIMESTAMP', [sig(['STRING', 'STRING', opt('STRING')], 'TIMESTAMP', rowKernel(T.TIMESTAMP, (v, ctx) => {
    const zone = zoneOf(v, 2, ctx);
    const r = parseStrftime(v[0] as string, v[1] as string, 'TIMESTAMP', zone);
    if (r.ts !== undefined) return checkTs(r.ts);
    return checkTs(civilToUtc(joinMicros(r.days, r.tod), r.zone ?? zone));
  }))]);
}

function datePartOf(s: string): number | undefined {
  const m = /^\s*(\d{1,4}-\d{1,2}-\d{1,2})[ T]/.exec(s);
  if (!m) return undefined;
  return parseTimestampString(s, 'UTC') !== undefined || parseDatetimeString(s) !== undefined ? parseDateString(m[1]!) : undefined;
}

function fastDateTrunc(partValue: Value | undefined): ScalarKernel | undefined {
  if (typeof partValue !== 'string') return undefined;
  const part = parsePart(partValue);
  if (Number.isNaN(truncDays(0, part))) return undefined;
  return (args, n) => {
    const v = args[0]!;
    const d = v.data as Int32Array;
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      if (v.nulls !== null && v.nulls[i] !== 0) continue;
      const r = truncDays(d[i]!, part);
      if (r < MIN_DATE) fail(`Truncating date ${formatDate(d[i]!)} to ${part.name} resulted in an out of range date value: ${r}`);
      out[i] = r;
    }
    return { type: T.DATE, length: n, data: out, nulls: v.nulls };
  };
}

function lastDay(d: number, p: Part): number {
  const [y, m] = civilFromDays(d);
  switch (p.name) {
    case 'MONTH':
      return daysFromCivil(y, m, daysInMonth(y, m));
    case 'QUARTER': {
      const qm = Math.floor((m - 1) / 3) * 3 + 3;
      return daysFromCivil(y, qm, daysInMonth(y, qm));
    }
    case 'YEAR':
      return daysFromCivil(y, 12, 31);
    case 'WEEK':
      return truncDays(d, p) + 6;
    case 'ISOWEEK':
      return truncDays(d, p) + 6;
    case 'ISOYEAR':
      return isoYearStart(isoWeekYear(d)[0] + 1) - 1;
  }
  fail(`LAST_DAY does not support the ${p.name} date part`);
}

function truncTimestamp(ts: bigint, p: Part, zone: string): bigint {
  const unit = US_PER[p.name];
  if (unit !== undefined && unit < 3600000000n) {
    // Sub-hour parts are zone-independent (offsets are whole minutes, but seconds can differ historically).
    if (unit <= 60000000n && unit !== 60000000n) return ts - (((ts % unit) + unit) % unit);
  }
  const civil = utcToCivil(ts, zone);
  const t = truncDatetime(civil, p, 'TIMESTAMP_TRUNC', 'TIMESTAMP');
  // HOUR/MINUTE subtract the civil minutes and seconds from the timestamp itself (the
  // documented behaviour; it differs from re-reading the civil time around DST changes)
  if (unit !== undefined && unit < US_DAY) return ts - (civil - t);
  const r = civilToUtc(t, zone);
  // The start of 0001-01-01's day (month, year...) east of UTC is before the first TIMESTAMP: an error, not a clamp
  // (the reference's wording; the documentation's TIMESTAMP range starts at 0001-01-01 00:00:00 UTC).
  if (r < MIN_TS) fail(`Truncating to the nearest ${p.name} causes underflow at timezone ${zone}`);
  return r;
}

/**
 * FORMAT_DATE with a constant format: each distinct date is formatted once
 * (dates repeat: COUNT(DISTINCT FORMAT_DATE('%Y-%m', d)) over 2M rows was 11.6x
 * DuckDB formatting every row), in a cache that lives as long as the call and
 * is emptied past 64k dates. A format's errors are never cached.
 */
export function fastFormatDate(format: Value | undefined, general: ScalarKernel): ScalarKernel | undefined {
  if (typeof format !== 'string') return undefined;
  const cache = new Map<number, string>();
  return (args, n, ctx) => {
    const d = args[1]!.data;
    if (!(d instanceof Int32Array)) return general(args, n, ctx);
    const nulls = mergeNulls(args, n);
    const out = new Array<Value>(n);
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) {
        out[i] = null;
        continue;
      }
      const day = d[i]!;
      let s = cache.get(day);
      if (s === undefined) {
        if (cache.size >= 65536) cache.clear();
        try {
          s = formatStrftime(format, day, 0, null, 'DATE');
        } catch (e) {
          throw asQueryError(e);
        }
        cache.set(day, s);
      }
      out[i] = s;
    }
    return vectorFromValues(T.STRING, out);
  };
}

/** The zone is a zero fixed offset; false for any other zone, also an unknown one (raised later, per row). */
function isUtcZone(zone: string): boolean {
  try {
    return resolveZone(zone).fixed === 0;
  } catch {
    return false;
  }
}

/** The general DATETIME_TRUNC / TIMESTAMP_TRUNC kernels: row by row on BigInts, any part and zone. */
export function truncGeneral(fn: string, kind: 'DATETIME' | 'TIMESTAMP'): ScalarKernel {
  return kind === 'DATETIME'
    ? rowKernel(T.DATETIME, (v) => truncDatetime(v[0] as bigint, parsePart(v[1] as string), fn, 'DATETIME'))
    : rowKernel(T.TIMESTAMP, (v, ctx) => truncTimestamp(v[0] as bigint, parsePart(v[1] as string), zoneOf(v, 2, ctx)));
}

/**
 * DATETIME_TRUNC / TIMESTAMP_TRUNC with a constant part on exact Float64Array
 * micros, as a typed loop (TIMESTAMP_TRUNC(ts, HOUR) GROUP BY over 2M rows was
 * 8.6x DuckDB row by row on BigInts). A TIMESTAMP only in a zone fixed at UTC
 * (the zone argument when given -- `zone` undefined when absent, null when not
 * constant -- else the statement's), where truncTimestamp is truncDatetime.
 * Micros past 2^52, truncated dates before 0001-01-01 (the error) and
 * BigInt64Array batches take the general path.
 */
export function fastTrunc(fn: string, kind: 'DATETIME' | 'TIMESTAMP', partValue: Value | undefined, zone: Value | undefined, general: ScalarKernel): ScalarKernel | undefined {
  if (typeof partValue !== 'string') return undefined;
  // An unknown zone goes to the general kernel, which raises per row (so that SAFE. turns it into NULL).
  if (zone !== undefined && (typeof zone !== 'string' || !isUtcZone(zone))) return undefined;
  const part = parsePart(partValue);
  const big = US_PER[part.name];
  const unit = big === undefined ? undefined : Number(big);
  if (unit === undefined && Number.isNaN(truncDays(0, part))) return undefined;
  const DAY = MICROS_PER_DAY;
  return (args, n, ctx) => {
    const a = args[0]!.data;
    if (!(a instanceof Float64Array)) return general(args, n, ctx);
    if (kind === 'TIMESTAMP' && zone === undefined && resolveZone(ctx.timeZone).fixed !== 0) return general(args, n, ctx);
    const v = args[0]!;
    const nulls = v.nulls;
    const out = new I64Out(n);
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const x = a[i]!;
      let r = NaN;
      if (Math.abs(x) < TWO52) {
        if (unit !== undefined) r = floorDivNum(x, unit) * unit;
        else {
          const td = truncDays(floorDivNum(x, DAY), part);
          if (td >= MIN_DATE) r = td * DAY;
        }
      }
      if (r === r) out.setNum(i, r);
      else out.setBig(i, kind === 'DATETIME' ? truncDatetime(BigInt(x), part, fn, 'DATETIME') : truncTimestamp(BigInt(x), part, 'UTC'));
    }
    return out.vector(v.type, nulls);
  };
}

/**
 * Typed-array EXTRACT for a constant part: DATE (Int32Array) or DATETIME/TIMESTAMP
 * micros held as doubles; TIMESTAMP only when the statement zone is UTC (checked per call).
 */
function fastExtract(partValue: Value | undefined, kind: 'DATE' | 'DATETIME' | 'TIMESTAMP'): ScalarKernel | undefined {
  if (typeof partValue !== 'string') return undefined;
  const part = parsePart(partValue);
  if (part.name === 'DATE' || part.name === 'TIME' || part.name === 'DATETIME') return undefined;
  if (kind === 'DATE' && !['YEAR', 'MONTH', 'DAY', 'QUARTER', 'DAYOFWEEK', 'DAYOFYEAR', 'WEEK', 'ISOWEEK', 'ISOYEAR'].includes(part.name)) return undefined;
  const fn = extractNumberFn(part);
  const DAY = 86400e6;
  return (args, n, ctx) => {
    const v = args[1]!;
    const d = v.data;
    const nulls = v.nulls;
    if (kind === 'TIMESTAMP' && resolveZone(ctx.timeZone).fixed !== 0) return slowExtract(part, args, n, ctx);
    const out = new Float64Array(n);
    if (d instanceof Int32Array) {
      for (let i = 0; i < n; i++) if (nulls === null || nulls[i] === 0) out[i] = fn(d[i]!, 0);
    } else if (d instanceof Float64Array) {
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) continue;
        const x = d[i]!;
        const days = Math.floor(x / DAY);
        out[i] = fn(days, x - days * DAY);
      }
    } else return slowExtract(part, args, n, ctx);
    return { type: T.INT64, length: n, data: out, nulls };
  };
}

function slowExtract(part: Part, args: readonly import('../types/vector.js').Vector[], n: number, ctx: EvalContext): import('../types/vector.js').Vector {
  return rowKernel(T.INT64, (v, c) => {
    const x = v[1]!;
    const civil = typeof x === 'number' ? joinMicros(x, 0) : args[1]!.type.kind === 'TIMESTAMP' ? utcToCivil(x as bigint, c.timeZone) : (x as bigint);
    const [d, t] = splitMicros(civil);
    return extractCivil(part, d, t, args[1]!.type.kind);
  })(args, n, ctx);
}

/** EXTRACT as a number (days since epoch, micros of day). */
function extractNumberFn(part: Part): (days: number, tod: number) => number {
  switch (part.name) {
    case 'YEAR':
      return (d) => civilFromDays(d)[0];
    case 'MONTH':
      return (d) => civilFromDays(d)[1];
    case 'DAY':
      return (d) => civilFromDays(d)[2];
    case 'QUARTER':
      return (d) => Math.floor((civilFromDays(d)[1] - 1) / 3) + 1;
    case 'DAYOFWEEK':
      return (d) => weekday(d) + 1;
    case 'DAYOFYEAR':
      return (d) => dayOfYear(d);
    case 'WEEK':
      return (d) => weekNumber(d, part.weekStart);
    case 'ISOWEEK':
      return (d) => isoWeekYear(d)[1];
    case 'ISOYEAR':
      return (d) => isoWeekYear(d)[0];
    case 'HOUR':
      return (_d, t) => Math.floor(t / 3600e6);
    case 'MINUTE':
      return (_d, t) => Math.floor(t / 60e6) % 60;
    case 'SECOND':
      return (_d, t) => Math.floor(t / 1e6) % 60;
    case 'MILLISECOND':
      return (_d, t) => Math.floor(t / 1000) % 1000;
    case 'MICROSECOND':
      return (_d, t) => t % 1e6;
  }
  fail(`Unsupported date part ${part.name}`);
}

function extractType(part: Value | undefined): SqlType {
  const p = typeof part === 'string' ? part.toUpperCase() : '';
  if (p === 'DATE') return T.DATE;
  if (p === 'TIME') return T.TIME;
  if (p === 'DATETIME') return T.DATETIME;
  return T.INT64;
}
