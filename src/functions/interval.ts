// INTERVAL values: arithmetic, canonical text, MAKE_INTERVAL, JUSTIFY_*,
// `$make_interval_literal` (INTERVAL expr PART [TO PART]) and date/time +/- INTERVAL.
import { T } from '../types/types.js';
import { getValue } from '../types/vector.js';
import { Interval, type Value } from '../types/values.js';
import { civilFromDays, daysFromCivil, daysInMonth, joinMicros, MAX_TS, MIN_TS, splitMicros } from './civil.js';
import { constArg, defineScalar, named, sig, sigf } from './signature.js';
import { fail, rowKernel } from './vec.js';
import { mapIntervalParts, orRows } from './interval-range-kernels.js';

export const MAX_MONTHS = 120000;
export const MAX_DAYS = 3660000;
export const MAX_MICROS = 316224000000000000n;
const US_HOUR = 3600000000n;
const US_MIN = 60000000n;
const US_SEC = 1000000n;
const US_DAY = 86400000000n;

/**
 * An INTERVAL from its parts, each checked against its range. The error names the
 * first part out of range as the service does ("Interval field months '120012' is out
 * of range -120000 to 120000"); arithmetic (+, -, *, /, SUM) words the time part in
 * nanoseconds (`timeUnit`), as the reference implementation builds those results.
 */
export function makeInterval(months: number, days: number, micros: bigint, timeUnit: 'microseconds' | 'nanoseconds' = 'microseconds'): Interval {
  const scale = timeUnit === 'nanoseconds' ? 1000n : 1n;
  const field = Math.abs(months) > MAX_MONTHS ? ['months', months, MAX_MONTHS] : Math.abs(days) > MAX_DAYS ? ['days', days, MAX_DAYS] : micros > MAX_MICROS || micros < -MAX_MICROS ? [timeUnit, micros * scale, MAX_MICROS * scale] : undefined;
  if (field) fail(`Interval field ${field[0]} '${field[1]}' is out of range -${field[2]} to ${field[2]}`);
  return new Interval(months, days, micros);
}

export function intervalAdd(a: Interval, b: Interval): Interval {
  return makeInterval(a.months + b.months, a.days + b.days, a.micros + b.micros, 'nanoseconds');
}
export function intervalNeg(a: Interval): Interval {
  return new Interval(-a.months || 0, -a.days || 0, -a.micros);
}
export function intervalMul(a: Interval, k: bigint): Interval {
  const kn = Number(k);
  return makeInterval(a.months * kn, a.days * kn, a.micros * k, 'nanoseconds');
}
/** INTERVAL / INT64: fractional months spill into days, fractional days into micros (ZetaSQL). */
export function intervalDiv(a: Interval, k: bigint): Interval {
  if (k === 0n) fail('Interval division by zero');
  const kn = Number(k);
  const months = Math.trunc(a.months / kn);
  const remMonths = a.months - months * kn;
  const daysTotal = a.days + remMonths * 30;
  const days = Math.trunc(daysTotal / kn);
  const remDays = daysTotal - days * kn;
  const micros = (a.micros + BigInt(remDays) * US_DAY) / k;
  return makeInterval(months, days, micros, 'nanoseconds');
}

export function formatInterval(iv: Interval): string {
  const m = iv.months;
  const ym = `${m < 0 ? '-' : ''}${Math.floor(Math.abs(m) / 12)}-${Math.abs(m) % 12}`;
  let us = iv.micros;
  const neg = us < 0n;
  if (neg) us = -us;
  const h = us / US_HOUR;
  const mi = (us % US_HOUR) / US_MIN;
  const s = (us % US_MIN) / US_SEC;
  const f = us % US_SEC;
  let frac = '';
  if (f !== 0n) frac = '.' + f.toString().padStart(6, '0').replace(/0+$/, '');
  return `${ym} ${iv.days} ${neg ? '-' : ''}${h}:${mi}:${s}${frac}`;
}

// ---------------------------------------------------------------- parsing

function parseSecondsFrac(s: string, allowNanos = false): bigint | undefined {
  // [-]S[.ffffff] -> micros; INTERVAL literals may carry nanoseconds, which truncate.
  const m = /^([+-]?)(\d*)(?:\.(\d{0,9}))?$/.exec(s);
  if (!m || (m[2] === '' && !m[3])) return undefined;
  const frac = m[3] ?? '';
  if (frac.length > 6 && !allowNanos) return undefined;
  const us = BigInt(m[2] || '0') * US_SEC + BigInt((frac + '000000').slice(0, 6));
  return m[1] === '-' ? -us : us;
}

function parseHms(s: string, parts: 'HMS' | 'HM' | 'MS'): bigint | undefined {
  const neg = s.startsWith('-');
  const body = s.replace(/^[+-]/, '');
  const p = body.split(':');
  let us: bigint;
  if (parts === 'HMS') {
    if (p.length !== 3 || !/^\d+$/.test(p[0]!) || !/^\d+$/.test(p[1]!)) return undefined;
    const sec = parseSecondsFrac(p[2]!);
    if (sec === undefined || sec < 0n) return undefined;
    us = BigInt(p[0]!) * US_HOUR + BigInt(p[1]!) * US_MIN + sec;
  } else if (parts === 'HM') {
    if (p.length !== 2 || !/^\d+$/.test(p[0]!) || !/^\d+$/.test(p[1]!)) return undefined;
    us = BigInt(p[0]!) * US_HOUR + BigInt(p[1]!) * US_MIN;
  } else {
    if (p.length !== 2 || !/^\d+$/.test(p[0]!)) return undefined;
    const sec = parseSecondsFrac(p[1]!);
    if (sec === undefined || sec < 0n) return undefined;
    us = BigInt(p[0]!) * US_MIN + sec;
  }
  return neg ? -us : us;
}

function parseYm(s: string): number | undefined {
  const m = /^([+-]?)(\d+)-(\d+)$/.exec(s);
  if (!m) return undefined;
  const v = Number(m[2]) * 12 + Number(m[3]);
  return m[1] === '-' ? -v : v;
}

/** CAST(STRING AS INTERVAL): canonical 'Y-M D H:M:S' (and its partial forms) or ISO 8601 'P...'. */
export function parseIntervalString(input: string): Interval | undefined {
  const s = input.trim();
  if (s.startsWith('P') || s.startsWith('-P')) return parseIso(s, input);
  const parts = s.split(/\s+/);
  try {
    if (parts.length === 3) {
      const ym = parseYm(parts[0]!);
      const d = /^[+-]?\d+$/.test(parts[1]!) ? Number(parts[1]) : undefined;
      const t = parseHms(parts[2]!, 'HMS');
      if (ym === undefined || d === undefined || t === undefined) return undefined;
      return makeInterval(ym, d, t);
    }
    if (parts.length === 2) {
      // 'Y-M D' or 'D H:M:S'
      const ym = parseYm(parts[0]!);
      if (ym !== undefined && /^[+-]?\d+$/.test(parts[1]!)) return makeInterval(ym, Number(parts[1]), 0n);
      if (/^[+-]?\d+$/.test(parts[0]!)) {
        const t = parseHms(parts[1]!, 'HMS');
        if (t !== undefined) return makeInterval(0, Number(parts[0]), t);
      }
      return undefined;
    }
    if (parts.length === 1) {
      const ym = parseYm(parts[0]!);
      if (ym !== undefined) return makeInterval(ym, 0, 0n);
      const t = parseHms(parts[0]!, 'HMS');
      if (t !== undefined) return makeInterval(0, 0, t);
    }
  } catch {
    return undefined;
  }
  return undefined;
}

function parseIso(s: string, original: string): Interval | undefined {
  let i = 0;
  let sign = 1;
  if (s[i] === '-') {
    sign = -1;
    i++;
  }
  if (s[i] !== 'P') return undefined;
  i++;
  let months = 0, days = 0, micros = 0n, inTime = false;
  while (i < s.length) {
    if (s[i] === 'T') {
      inTime = true;
      i++;
      continue;
    }
    // ISO 8601 allows a comma as the decimal mark ('PT10H20M30,456S' is documented)
    const m = /^-?\d+(?:[.,]\d+)?/.exec(s.slice(i));
    if (!m) {
      if (i >= s.length) break;
      fail(`Invalid INTERVAL value '${original}': Unexpected '${s[i]}'`);
    }
    i += m[0].length;
    const unit = s[i];
    if (unit === undefined) fail(`Invalid INTERVAL value '${original}': Expected number at end of string`);
    i++;
    const num = m[0].replace(',', '.');
    if (!inTime) {
      if (num.includes('.')) return undefined;
      const v = Number(num);
      if (unit === 'Y') months += v * 12;
      else if (unit === 'M') months += v;
      else if (unit === 'W') days += v * 7;
      else if (unit === 'D') days += v;
      else fail(`Invalid INTERVAL value '${original}': Unexpected '${unit}'`);
    } else {
      if (unit === 'H' && !num.includes('.')) micros += BigInt(num) * US_HOUR;
      else if (unit === 'M' && !num.includes('.')) micros += BigInt(num) * US_MIN;
      else if (unit === 'S') {
        const v = parseSecondsFrac(num);
        if (v === undefined) return undefined;
        micros += v;
      } else fail(`Invalid INTERVAL value '${original}': Unexpected '${unit}'`);
    }
  }
  if (s === 'P' || s === '-P') fail(`Invalid INTERVAL value '${original}': Expected number at end of string`);
  return makeInterval(sign * months, sign * days, BigInt(sign) * micros);
}

// ---------------------------------------------------------------- literal form

const PART_ORDER = ['YEAR', 'QUARTER', 'MONTH', 'WEEK', 'DAY', 'HOUR', 'MINUTE', 'SECOND', 'MILLISECOND', 'MICROSECOND'];

/** INTERVAL n PART. */
export function intervalFromPart(n: bigint, part: string): Interval {
  switch (part) {
    case 'YEAR':
      return makeInterval(Number(n) * 12, 0, 0n);
    case 'QUARTER':
      return makeInterval(Number(n) * 3, 0, 0n);
    case 'MONTH':
      return makeInterval(Number(n), 0, 0n);
    case 'WEEK':
      return makeInterval(0, Number(n) * 7, 0n);
    case 'DAY':
      return makeInterval(0, Number(n), 0n);
    case 'HOUR':
      return makeInterval(0, 0, n * US_HOUR);
    case 'MINUTE':
      return makeInterval(0, 0, n * US_MIN);
    case 'SECOND':
      return makeInterval(0, 0, n * US_SEC);
    case 'MILLISECOND':
      return makeInterval(0, 0, n * 1000n);
    case 'MICROSECOND':
      return makeInterval(0, 0, n);
  }
  fail(`Unsupported INTERVAL date part ${part}`);
}

/** INTERVAL 'text' FROM TO TO. */
export function intervalFromString(text: string, from: string, to: string | undefined): Interval {
  const bad = (): never => fail(`Invalid INTERVAL value '${text}'`);
  const s = text.trim();
  if (to === undefined || to === from) {
    if (from === 'SECOND') {
      const v = parseSecondsFrac(s, true);
      return v === undefined ? bad() : makeInterval(0, 0, v);
    }
    if (!/^[+-]?\d+$/.test(s)) bad();
    return intervalFromPart(BigInt(s), from);
  }
  const key = `${from} TO ${to}`;
  const parts = s.split(/\s+/);
  const num = (x: string | undefined): number => (x !== undefined && /^[+-]?\d+$/.test(x) ? Number(x) : bad());
  switch (key) {
    case 'YEAR TO MONTH': {
      const ym = parts.length === 1 ? parseYm(parts[0]!) : undefined;
      return ym === undefined ? bad() : makeInterval(ym, 0, 0n);
    }
    case 'YEAR TO DAY': {
      const ym = parts.length === 2 ? parseYm(parts[0]!) : undefined;
      return ym === undefined ? bad() : makeInterval(ym, num(parts[1]), 0n);
    }
    case 'YEAR TO HOUR':
    case 'YEAR TO MINUTE':
    case 'YEAR TO SECOND': {
      if (parts.length !== 3) bad();
      const ym = parseYm(parts[0]!);
      const t = timePart(parts[2]!, to!);
      return ym === undefined || t === undefined ? bad() : makeInterval(ym, num(parts[1]), t);
    }
    case 'MONTH TO DAY': {
      if (parts.length !== 2) bad();
      return makeInterval(num(parts[0]), num(parts[1]), 0n);
    }
    case 'MONTH TO HOUR':
    case 'MONTH TO MINUTE':
    case 'MONTH TO SECOND': {
      if (parts.length !== 3) bad();
      const t = timePart(parts[2]!, to!);
      return t === undefined ? bad() : makeInterval(num(parts[0]), num(parts[1]), t);
    }
    case 'DAY TO HOUR':
    case 'DAY TO MINUTE':
    case 'DAY TO SECOND': {
      if (parts.length !== 2) bad();
      const t = timePart(parts[1]!, to!);
      return t === undefined ? bad() : makeInterval(0, num(parts[0]), t);
    }
    case 'HOUR TO MINUTE': {
      const t = parts.length === 1 ? parseHms(parts[0]!, 'HM') : undefined;
      return t === undefined ? bad() : makeInterval(0, 0, t);
    }
    case 'HOUR TO SECOND': {
      const t = parts.length === 1 ? parseHms(parts[0]!, 'HMS') : undefined;
      return t === undefined ? bad() : makeInterval(0, 0, t);
    }
    case 'MINUTE TO SECOND': {
      const t = parts.length === 1 ? parseHms(parts[0]!, 'MS') : undefined;
      return t === undefined ? bad() : makeInterval(0, 0, t);
    }
  }
  fail(`Unsupported INTERVAL datetime field ${key}`);
}

function timePart(s: string, to: string): bigint | undefined {
  if (to === 'HOUR') {
    if (!/^[+-]?\d+$/.test(s)) return undefined;
    return BigInt(s) * US_HOUR;
  }
  return parseHms(s, to === 'MINUTE' ? 'HM' : 'HMS');
}

// ---------------------------------------------------------------- date/time + interval

/** Adds months clamping the day to the month's end (Jan 31 + 1 month = Feb 28/29). */
export function addMonthsToDays(days: number, months: number): number {
  const [y, m, d] = civilFromDays(days);
  const total = y * 12 + (m - 1) + months;
  const ny = Math.floor(total / 12);
  const nm = total - ny * 12 + 1;
  if (ny < 1 || ny > 9999) return NaN;
  return daysFromCivil(ny, nm, Math.min(d, daysInMonth(ny, nm)));
}

/** DATETIME (civil micros) + INTERVAL. */
export function datetimeAddInterval(dt: bigint, iv: Interval, sign = 1): bigint {
  let [d, t] = splitMicros(dt);
  if (iv.months !== 0) d = addMonthsToDays(d, sign * iv.months);
  if (Number.isNaN(d)) fail('DATETIME overflow');
  d += sign * iv.days;
  const r = joinMicros(d, t) + (sign === 1 ? iv.micros : -iv.micros);
  if (r < MIN_TS || r > MAX_TS) fail('DATETIME overflow');
  return r;
}

/** TIMESTAMP + INTERVAL: months/days apply in UTC civil time, as ZetaSQL does. */
export function timestampAddInterval(ts: bigint, iv: Interval, sign = 1): bigint {
  const r = datetimeAddInterval(ts, iv, sign);
  if (r < MIN_TS || r > MAX_TS) fail('TIMESTAMP overflow');
  return r;
}

/** INTERVAL of a difference of instants/civil times: whole days kept apart only for DATE/DATETIME. */
export function diffToInterval(a: bigint, b: bigint, splitDays: boolean): Interval {
  const d = a - b;
  if (!splitDays) return makeInterval(0, 0, d);
  const days = d / US_DAY;
  return makeInterval(0, Number(days), d - days * US_DAY);
}

// ---------------------------------------------------------------- functions

function justifyHours(iv: Interval): Interval {
  let days = iv.days + Number(iv.micros / US_DAY);
  let micros = iv.micros % US_DAY;
  if (days > 0 && micros < 0n) {
    days--;
    micros += US_DAY;
  } else if (days < 0 && micros > 0n) {
    days++;
    micros -= US_DAY;
  }
  return makeInterval(iv.months, days, micros);
}
function justifyDays(iv: Interval): Interval {
  let months = iv.months + Math.trunc(iv.days / 30);
  let days = iv.days % 30;
  if (months > 0 && days < 0) {
    months--;
    days += 30;
  } else if (months < 0 && days > 0) {
    months++;
    days -= 30;
  }
  return makeInterval(months, days || 0, iv.micros);
}
/** Postgres/ZetaSQL justify_interval: carry micros into days, days into months, then align signs. */
function justifyInterval(iv: Interval): Interval {
  let days = iv.days + Number(iv.micros / US_DAY);
  let micros = iv.micros % US_DAY;
  let months = iv.months + Math.trunc(days / 30);
  days = days % 30;
  if (months > 0 && (days < 0 || (days === 0 && micros < 0n))) {
    days += 30;
    months--;
  } else if (months < 0 && (days > 0 || (days === 0 && micros > 0n))) {
    days -= 30;
    months++;
  }
  if (days > 0 && micros < 0n) {
    micros += US_DAY;
    days--;
  } else if (days < 0 && micros > 0n) {
    micros -= US_DAY;
    days++;
  }
  return makeInterval(months, days || 0, micros);
}

export function registerIntervalFunctions(): void {
  const MI = ['year', 'month', 'day', 'hour', 'minute', 'second'];
  defineScalar('MAKE_INTERVAL', [
    sigf(MI.map((n) => named(n, 'INT64')), 'INTERVAL', (c) => {
      const assign = c.assign;
      return rowKernel(T.INTERVAL, (v) => {
        // Arguments arrive in call order; place them by the parameter they bound to.
        const p: bigint[] = [0n, 0n, 0n, 0n, 0n, 0n];
        for (let i = 0; i < v.length; i++) p[assign[i]!] = v[i] as bigint;
        const [y, mo, d, h, mi, s] = p as [bigint, bigint, bigint, bigint, bigint, bigint];
        return makeInterval(Number(y) * 12 + Number(mo), Number(d), h * US_HOUR + mi * US_MIN + s * US_SEC);
      });
    }),
  ]);
  defineScalar('JUSTIFY_HOURS', [sig(['INTERVAL'], 'INTERVAL', orRows((args, n) => mapIntervalParts(justifyHours, args[0]!, n), rowKernel(T.INTERVAL, (v) => justifyHours(v[0] as Interval))))]);
  defineScalar('JUSTIFY_DAYS', [sig(['INTERVAL'], 'INTERVAL', orRows((args, n) => mapIntervalParts(justifyDays, args[0]!, n), rowKernel(T.INTERVAL, (v) => justifyDays(v[0] as Interval))))]);
  defineScalar('JUSTIFY_INTERVAL', [
    sig(['INTERVAL'], 'INTERVAL', orRows((args, n) => mapIntervalParts(justifyInterval, args[0]!, n), rowKernel(T.INTERVAL, (v) => justifyInterval(v[0] as Interval)))),
  ]);
  // INTERVAL expr PART [TO PART]
  defineScalar(
    '$make_interval_literal',
    [
      sig(['INT64', constArg('STRING')], 'INTERVAL', (args, n) => {
        // INTERVAL <expr> PART over a column: one Interval per row, no per-row argument arrays.
        const x = args[0]!;
        const part = (getValue(args[1]!, 0) as string).toUpperCase();
        const out = new Array<Value>(n);
        const d = x.data;
        for (let i = 0; i < n; i++) {
          if (x.nulls !== null && x.nulls[i] === 1) out[i] = null;
          else out[i] = intervalFromPart(d instanceof Float64Array ? BigInt(d[i]!) : (d as BigInt64Array)[i]!, part);
        }
        return { type: T.INTERVAL, length: n, data: out, nulls: x.nulls };
      }),
      sig(['STRING', constArg('STRING'), constArg('STRING')], 'INTERVAL', rowKernel(T.INTERVAL, (v) =>
        intervalFromString(v[0] as string, (v[1] as string).toUpperCase(), (v[2] as string).toUpperCase()),
      )),
      sig(['STRING', constArg('STRING')], 'INTERVAL', rowKernel(T.INTERVAL, (v) => intervalFromString(v[0] as string, (v[1] as string).toUpperCase(), undefined))),
    ],
    { safeCallable: false },
  );
}

/** EXTRACT(part FROM INTERVAL). */
export function extractInterval(iv: Interval, part: string): Value {
  const us = iv.micros;
  switch (part) {
    case 'YEAR':
      return BigInt(Math.trunc(iv.months / 12));
    case 'MONTH':
      return BigInt(iv.months % 12);
    case 'DAY':
      return BigInt(iv.days);
    case 'HOUR':
      return us / US_HOUR;
    case 'MINUTE':
      return (us % US_HOUR) / US_MIN;
    case 'SECOND':
      return (us % US_MIN) / US_SEC;
    case 'MILLISECOND':
      return (us % US_SEC) / 1000n;
    case 'MICROSECOND':
      return us % US_SEC;
  }
  fail(`Unsupported date part ${part} for INTERVAL`);
}

export { PART_ORDER };
