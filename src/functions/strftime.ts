// FORMAT_* / PARSE_* format elements (strftime-like, absl flavour):
// %Y %m %d %H %M %S %E<n>S %E*S %Ez %z %Z %j %a %A %b %B %p %I %y %C %D %F %T %R %e %u %w %U %W %V %G %g %Q %s ...
import { MAX_DATE, civilFromDays, dayOfYear, daysFromCivil, daysInMonth, joinMicros, offsetSecondsAt, pad, splitMicros, weekday } from './civil.js';
import { fail } from './vec.js';

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

function isoWeekYear(days: number): [number, number] {
  const wd = (weekday(days) + 6) % 7;
  const thursday = days - wd + 3;
  const [y] = civilFromDays(thursday);
  return [y, Math.floor((thursday - daysFromCivil(y, 1, 1)) / 7) + 1];
}
function weekNum(days: number, start: number): number {
  const [y] = civilFromDays(days);
  const jan1 = daysFromCivil(y, 1, 1);
  const offset = (start - weekday(jan1) + 7) % 7;
  const doy0 = days - jan1;
  return doy0 < offset ? 0 : Math.floor((doy0 - offset) / 7) + 1;
}

/**
 * %Z: the zone's offset at that instant as UTC, UTC-7, UTC+5:30 (the service prints
 * offsets, not tz abbreviations: the data types page shows UTC-7 for
 * America/Los_Angeles in summer, the format elements page UTC-5).
 */
function zoneAbbrev(zone: string, ts: bigint): string {
  const off = offsetSecondsAt(zone, ts);
  if (off === 0) return 'UTC';
  const a = Math.abs(off);
  const mins = Math.floor(a / 60) % 60;
  // Whole hours as format-elements.md shows (UTC-5); with minutes, hours and minutes in two digits each (UTC+0530),
  // as the reference formats %Z (date_time_util.cc).
  return `UTC${off < 0 ? '-' : '+'}${mins ? pad(Math.floor(a / 3600), 2) + pad(mins, 2) : Math.floor(a / 3600)}`;
}
function offsetString(off: number, colon: boolean): string {
  const sign = off < 0 ? '-' : '+';
  const a = Math.abs(off);
  return `${sign}${pad(Math.floor(a / 3600), 2)}${colon ? ':' : ''}${pad(Math.floor(a / 60) % 60, 2)}`;
}

const DATE_ELEMENTS = new Set('AaBbhCDdeFGgjmUuVWwxYyQJ');
const TIME_ELEMENTS = new Set('HIklMpPRrSTX');

/**
 * The element's part of a value: date, time, both (%c), zone, epoch (%s), or
 * none (%f is no element of the service's: printed as is everywhere).
 */
function elementPart(el: string): 'date' | 'time' | 'both' | 'zone' | 'epoch' | 'none' | 'other' {
  const body = el.startsWith('E') || el.startsWith('O') ? (/^E(\d+|\*)S$/.test(el) ? 'S' : el === 'E4Y' ? 'Y' : el.slice(1)) : el;
  if (body === 'c') return 'both';
  if (DATE_ELEMENTS.has(body)) return 'date';
  if (TIME_ELEMENTS.has(body)) return 'time';
  if (body === 'z' || body === 'Z') return 'zone';
  if (body === 's') return 'epoch';
  if (body === 'f') return 'none';
  return 'other';
}

const APPLIES: Record<string, ReadonlySet<string>> = {
  DATE: new Set(['date', 'other']),
  TIME: new Set(['time', 'other']),
  DATETIME: new Set(['date', 'time', 'both', 'epoch', 'other']),
  TIMESTAMP: new Set(['date', 'time', 'both', 'zone', 'epoch', 'other']),
};

/**
 * FORMAT_<kind>: an element that is not part of the value's type (an hour in
 * FORMAT_DATE, a year in FORMAT_TIME, a zone outside FORMAT_TIMESTAMP) is
 * printed as written, as the reference implementation does.
 */
export function formatStrftime(fmt: string, days: number, tod: number, tz: { zone: string; ts: bigint } | null, kind: string): string {
  const applies = APPLIES[kind];
  const text = applies ? fmt.replace(/%[-_0^#]?(E(?:\d+|\*)S|E4Y|E[zYyCcxX]|O[a-zA-Z]|[\s\S])/g, (all, el: string) => (applies.has(elementPart(el)) ? all : '%' + all)) : fmt;
  return formatElements(text, days, tod, tz);
}

function applyFlag(flag: string, element: string, text: string): string {
  switch (flag) {
    case '-': return text.replace(/^[0 ]+(?=.)/, '');
    case '_': return text.replace(/^0+(?=.)/, (z) => ' '.repeat(z.length));
    case '0': return text.replace(/^ +/, (z) => '0'.repeat(z.length));
    case '^': return text.toUpperCase();
    default: return element === 'p' || element === 'Z' ? text.toLowerCase() : text.toUpperCase();
  }
}

function formatElements(fmt: string, days: number, tod: number, tz: { zone: string; ts: bigint } | null): string {
  const [y, m, d] = civilFromDays(days);
  const h = Math.floor(tod / 3600e6);
  const mi = Math.floor(tod / 60e6) % 60;
  const s = Math.floor(tod / 1e6) % 60;
  const us = tod % 1e6;
  const off = tz ? offsetSecondsAt(tz.zone, tz.ts) : 0;
  let out = '';
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i]!;
    if (c !== '%' || i + 1 >= fmt.length) {
      out += c;
      continue;
    }
    let e = fmt[++i]!;
    // A glibc flag before an element: - (no padding), _ (spaces), 0 (zeros), ^ (upper case), # (swap case).
    if ('-_0^#'.includes(e) && i + 1 < fmt.length) {
      const token = /^(E(?:\d+|\*)S|E4Y|E[zYyCcxX]|O[a-zA-Z]|[\s\S])/.exec(fmt.slice(i + 1))![0];
      i += token.length;
      out += applyFlag(e, token, formatElements('%' + token, days, tod, tz));
      continue;
    }
    // %E / %O modifiers
    if (e === 'E') {
      const rest = fmt.slice(i + 1);
      const m1 = /^(\d+|\*)S/.exec(rest);
      if (m1) {
        i += m1[0].length;
        if (m1[1] === '*') {
          const frac = us === 0 ? '' : '.' + pad(us, 6).replace(/0+$/, '');
          out += pad(s, 2) + frac;
        } else {
          const n = Number(m1[1]);
          out += pad(s, 2) + (n > 0 ? '.' + (pad(us, 6) + '000000').slice(0, n) : '');
        }
        continue;
      }
      if (rest.startsWith('z')) {
        i++;
        out += offsetString(off, true);
        continue;
      }
      if (rest.startsWith('4Y')) {
        i += 2;
        out += pad(y, 4);
        continue;
      }
      if (rest.startsWith('Y')) {
        i++;
        out += String(y);
        continue;
      }
      if (rest.startsWith('y')) {
        i++;
        out += pad(y % 100, 2);
        continue;
      }
      if (rest.startsWith('c')) {
        i++;
        e = 'c';
      } else if (rest.startsWith('x')) {
        i++;
        e = 'x';
      } else if (rest.startsWith('X')) {
        i++;
        e = 'X';
      } else if (rest.startsWith('C')) {
        i++;
        e = 'C';
      } else {
        out += '%E';
        continue;
      }
    } else if (e === 'O') {
      const n = fmt[i + 1];
      if (n && 'deHImMSuUVwWy'.includes(n)) {
        i++;
        e = n;
      }
    }
    switch (e) {
      case 'Y':
        out += String(y);
        break;
      case 'y':
        out += pad(y % 100, 2);
        break;
      case 'C':
        out += pad(Math.floor(y / 100), 2);
        break;
      case 'm':
        out += pad(m, 2);
        break;
      case 'd':
        out += pad(d, 2);
        break;
      case 'e':
        out += String(d).padStart(2, ' ');
        break;
      case 'H':
        out += pad(h, 2);
        break;
      case 'k':
        out += String(h).padStart(2, ' ');
        break;
      case 'I':
        out += pad(h % 12 === 0 ? 12 : h % 12, 2);
        break;
      case 'l':
        out += String(h % 12 === 0 ? 12 : h % 12).padStart(2, ' ');
        break;
      case 'M':
        out += pad(mi, 2);
        break;
      case 'S':
        out += pad(s, 2);
        break;
      case 'f':
        out += pad(us, 6);
        break;
      case 'p':
        out += h < 12 ? 'AM' : 'PM';
        break;
      case 'P':
        out += h < 12 ? 'am' : 'pm';
        break;
      case 'j':
        out += pad(dayOfYear(days), 3);
        break;
      case 'a':
        out += DAYS[weekday(days)]!.slice(0, 3);
        break;
      case 'A':
        out += DAYS[weekday(days)]!;
        break;
      case 'b':
      case 'h':
        out += MONTHS[m - 1]!.slice(0, 3);
        break;
      case 'B':
        out += MONTHS[m - 1]!;
        break;
      case 'D':
        out += `${pad(m, 2)}/${pad(d, 2)}/${pad(y % 100, 2)}`;
        break;
      case 'x':
        out += `${pad(m, 2)}/${pad(d, 2)}/${pad(y % 100, 2)}`;
        break;
      case 'F':
        // %Y-%m-%d, so the year is as unpadded as %Y's (the reference writes year 45 as 45-03-01).
        out += `${y}-${pad(m, 2)}-${pad(d, 2)}`;
        break;
      case 'T':
      case 'X':
        out += `${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}`;
        break;
      case 'R':
        out += `${pad(h, 2)}:${pad(mi, 2)}`;
        break;
      case 'r':
        out += `${pad(h % 12 === 0 ? 12 : h % 12, 2)}:${pad(mi, 2)}:${pad(s, 2)} ${h < 12 ? 'AM' : 'PM'}`;
        break;
      case 'c':
        out += `${DAYS[weekday(days)]!.slice(0, 3)} ${MONTHS[m - 1]!.slice(0, 3)} ${String(d).padStart(2, ' ')} ${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)} ${y}`;
        break;
      case 'u':
        out += String(((weekday(days) + 6) % 7) + 1);
        break;
      case 'w':
        out += String(weekday(days));
        break;
      case 'U':
        out += pad(weekNum(days, 0), 2);
        break;
      case 'W':
        out += pad(weekNum(days, 1), 2);
        break;
      case 'V':
        out += pad(isoWeekYear(days)[1], 2);
        break;
      case 'G':
        out += String(isoWeekYear(days)[0]);
        break;
      case 'J': {
        // ISO 8601 day of the ISO year (001-371)
        const jan4 = daysFromCivil(isoWeekYear(days)[0], 1, 4);
        out += pad(days - (jan4 - ((weekday(jan4) + 6) % 7)) + 1, 3);
        break;
      }
      case 'g':
        out += pad(isoWeekYear(days)[0] % 100, 2);
        break;
      case 'Q':
        out += String(Math.floor((m - 1) / 3) + 1);
        break;
      case 's': {
        const ts = tz ? tz.ts : joinMicros(days, tod);
        const q = ts / 1000000n;
        out += String(ts < 0n && ts % 1000000n !== 0n ? q - 1n : q);
        break;
      }
      case 'z':
        out += offsetString(off, false);
        break;
      case 'Z':
        out += tz ? zoneAbbrev(tz.zone, tz.ts) : 'UTC';
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case '%':
        out += '%';
        break;
      default:
        out += '%' + e;
    }
  }
  return out;
}

export interface ParsedTime {
  days: number;
  tod: number;
  zone?: string;
  ts?: bigint;
}

/**
 * The elements PARSE_DATE, PARSE_TIME and PARSE_DATETIME refuse whatever the input, as the format elements
 * page's Type column lists them: no time of day or zone for a DATE, no date for a TIME, no zone for a DATETIME.
 */
const TIME_OF_DAY = ['H', 'I', 'M', 'S', 'p', 'P', 'T', 'R', 'X', 'c', 's', 'k', 'l', 'E#S', 'E*S'];
const ZONE = ['Z', 'z', 'Ez'];
const NOT_FOR: Record<string, readonly string[]> = {
  DATE: [...TIME_OF_DAY, ...ZONE],
  TIME: ['Y', 'm', 'd', 'A', 'a', 'B', 'b', 'C', 'D', 'e', 'F', 'G', 'g', 'j', 'U', 'u', 'V', 'W', 'w', 'x', 'y', 'h', 'E4Y'],
  DATETIME: ZONE,
};
function checkParseElements(fmt: string, kind: string): void {
  const refused = NOT_FOR[kind];
  if (!refused) return;
  for (const m of fmt.matchAll(/%(E[0-9*]S|E4Y|Ez|[EO]?.)/g)) {
    const key = /^E\dS$/.test(m[1]!) ? 'E#S' : m[1]!;
    if (refused.includes(key)) fail(`Invalid format: %${m[1]} is not allowed for the ${kind} type.`);
  }
}

/** PARSE_*: every element must match; unspecified fields default to 1970-01-01 00:00:00. */
export function parseStrftime(fmt: string, input: string, kind: string, _defaultZone: string): ParsedTime {
  checkParseElements(fmt, kind);
  let i = 0;
  const bad = (): never => fail(`Failed to parse input string "${input}"`);
  let y = 1970, mo = 1, d = 1, h = 0, mi = 0, s = 0, us = 0;
  // %C (century) and %y (year of the century) combine, in either order; a later full year (%Y, %F, %c) replaces both.
  let cent: number | undefined, yy: number | undefined;
  const fullYear = (v: number): void => {
    y = v;
    cent = yy = undefined;
  };
  let pm: boolean | undefined;
  let hour12 = false;
  let doy: number | undefined;
  let zone: string | undefined;
  let epoch: bigint | undefined;
  let isoYear: number | undefined, isoWeek: number | undefined, wday: number | undefined;
  let weekNo: number | undefined, weekStart = 0;
  let isoDoy: number | undefined;
  // ISO elements (%G %g %V %J) are ignored when non-ISO date elements are present too
  let nonIso = false;
  // leading white space in the input is always allowed
  while (i < input.length && /\s/.test(input[i]!)) i++;
  const num = (min: number, max: number, signed = false, skipSpace = false): number => {
    if (skipSpace) while (i < input.length && input[i] === ' ') i++;
    const re = new RegExp(`^${signed ? '[+-]?' : ''}[0-9]{${min},${max}}`);
    const m = re.exec(input.slice(i));
    if (!m) bad();
    i += m![0].length;
    return Number(m![0]);
  };
  const word = (list: string[], abbrOk: boolean): number => {
    const rest = input.slice(i).toLowerCase();
    for (let k = 0; k < list.length; k++) {
      const full = list[k]!.toLowerCase();
      if (rest.startsWith(full)) {
        i += full.length;
        return k;
      }
    }
    if (abbrOk)
      for (let k = 0; k < list.length; k++) {
        const ab = list[k]!.slice(0, 3).toLowerCase();
        if (rest.startsWith(ab)) {
          i += 3;
          return k;
        }
      }
    return bad();
  };
  for (let f = 0; f < fmt.length; f++) {
    const c = fmt[f]!;
    if (c !== '%') {
      if (/\s/.test(c)) {
        while (i < input.length && /\s/.test(input[i]!)) i++;
        continue;
      }
      // A literal that meets other input is worded as the reference does; one past the input's end is a plain parse failure.
      if (i < input.length && input[i] !== c)
        fail(`Mismatch between format character '${c}' and string character '${input[i]}' at string index: ${i} with format: '${fmt}'`);
      if (input[i] !== c) bad();
      i++;
      continue;
    }
    let e = fmt[++f];
    if (e === undefined) bad();
    if (e === 'E') {
      const rest = fmt.slice(f + 1);
      const m1 = /^(\d+|\*)S/.exec(rest);
      if (m1) {
        f += m1[0].length;
        s = num(1, 2);
        if (input[i] === '.') {
          i++;
          const m2 = /^[0-9]+/.exec(input.slice(i));
          if (!m2) bad();
          i += m2![0].length;
          us = Number((m2![0] + '000000').slice(0, 6));
        }
        continue;
      }
      if (rest.startsWith('z')) {
        f++;
        e = 'z';
      } else if (rest.startsWith('4Y')) {
        f += 2;
        fullYear(num(4, 4));
        continue;
      } else if (rest.startsWith('Y')) {
        f++;
        e = 'Y';
      } else {
        f++;
        e = fmt[f];
      }
    } else if (e === 'O') {
      f++;
      e = fmt[f];
    }
    if (e !== undefined && 'YyCmdejbBhDxFcUWQ'.includes(e)) nonIso = true;
    switch (e) {
      case 'Y': {
        // Digits while the year stays within 10000, as the reference reads them ('%Y%m' of '202001' is 2020-01;
        // '12345' leaves its 5 unread); 10000 itself parses, then is out of range.
        const m = /^[0-9]+/.exec(input.slice(i));
        if (!m) bad();
        let v = 0, n = 0;
        while (n < m![0].length && v * 10 + Number(m![0][n]) <= 10000) v = v * 10 + Number(m![0][n++]);
        i += n;
        fullYear(v);
        break;
      }
      case 'y':
        yy = num(1, 2);
        break;
      case 'C':
        cent = num(1, 2);
        break;
      case 'm':
        mo = num(1, 2);
        break;
      case 'd':
        d = num(1, 2);
        break;
      case 'e':
        d = num(1, 2, false, true);
        break;
      case 'H':
        h = num(1, 2);
        break;
      case 'k':
        h = num(1, 2, false, true);
        break;
      case 'I':
      case 'l':
        h = num(1, 2);
        hour12 = true;
        break;
      case 'M':
        mi = num(1, 2);
        break;
      case 'S':
        s = num(1, 2);
        break;
      case 'f': {
        const m2 = /^[0-9]{1,6}/.exec(input.slice(i));
        if (!m2) bad();
        i += m2![0].length;
        us = Number((m2![0] + '000000').slice(0, 6));
        break;
      }
      case 'P':
        // format-elements.md, %P: "This can't be used with parsing. Instead, use %p." (the reference implementation
        // reads it as %p only under its parse_version2 flag; BigQuery's page wins). A runtime failure, as a
        // mismatching input is, so SAFE. gives NULL.
        fail(`Failed to parse input string "${input}": %P can't be used with parsing, use %p`);
        break;
      case 'p': {
        const w = input.slice(i, i + 2).toUpperCase();
        if (w === 'AM') pm = false;
        else if (w === 'PM') pm = true;
        else bad();
        i += 2;
        break;
      }
      case 'j':
        doy = num(1, 3);
        break;
      case 'a':
      case 'A':
        wday = word(DAYS, true);
        break;
      case 'b':
      case 'B':
      case 'h':
        mo = word(MONTHS, true) + 1;
        break;
      case 'D':
      case 'x': {
        mo = num(1, 2);
        if (input[i++] !== '/') bad();
        d = num(1, 2);
        if (input[i++] !== '/') bad();
        // %D and %x set a full year (the 69 pivot), which a later %C replaces as it does %Y's.
        const v = num(1, 2);
        fullYear(v < 69 ? 2000 + v : 1900 + v);
        break;
      }
      case 'F':
        fullYear(num(1, 4));
        if (input[i++] !== '-') bad();
        mo = num(1, 2);
        if (input[i++] !== '-') bad();
        d = num(1, 2);
        break;
      case 'T':
      case 'X':
        h = num(1, 2);
        if (input[i++] !== ':') bad();
        mi = num(1, 2);
        if (input[i++] !== ':') bad();
        s = num(1, 2);
        break;
      case 'R':
        h = num(1, 2);
        if (input[i++] !== ':') bad();
        mi = num(1, 2);
        break;
      case 'r': {
        h = num(1, 2);
        hour12 = true;
        if (input[i++] !== ':') bad();
        mi = num(1, 2);
        if (input[i++] !== ':') bad();
        s = num(1, 2);
        while (input[i] === ' ') i++;
        const w = input.slice(i, i + 2).toUpperCase();
        if (w === 'AM') pm = false;
        else if (w === 'PM') pm = true;
        else bad();
        i += 2;
        break;
      }
      case 'c': {
        word(DAYS, true);
        while (input[i] === ' ') i++;
        mo = word(MONTHS, true) + 1;
        while (input[i] === ' ') i++;
        d = num(1, 2);
        while (input[i] === ' ') i++;
        h = num(1, 2);
        if (input[i++] !== ':') bad();
        mi = num(1, 2);
        if (input[i++] !== ':') bad();
        s = num(1, 2);
        while (input[i] === ' ') i++;
        fullYear(num(1, 5));
        break;
      }
      case 'u':
        wday = num(1, 1) % 7;
        break;
      case 'w':
        wday = num(1, 1);
        break;
      case 'U':
      case 'W': {
        const w = num(1, 2);
        if (w > 53) bad();
        weekNo = w;
        weekStart = e === 'U' ? 0 : 1;
        break;
      }
      case 'V':
        isoWeek = num(1, 2);
        break;
      case 'G':
        isoYear = num(1, 5);
        break;
      case 'g': {
        // two-digit years as %y: 69-99 are 19xx, 00-68 are 20xx
        const v = num(1, 2);
        isoYear = v < 69 ? 2000 + v : 1900 + v;
        break;
      }
      case 'J':
        isoDoy = num(1, 3);
        break;
      case 'Q': {
        const q = num(1, 1);
        if (q < 1 || q > 4) bad();
        mo = (q - 1) * 3 + 1;
        break;
      }
      case 's':
        epoch = BigInt(num(1, 20, true)) * 1000000n;
        break;
      case 'z': {
        const m2 = /^([+-])(\d{2}):?(\d{2})?|^Z/i.exec(input.slice(i));
        if (!m2) bad();
        i += m2![0].length;
        zone = m2![0].toUpperCase() === 'Z' ? 'UTC' : `${m2![1]}${m2![2]}:${m2![3] ?? '00'}`;
        break;
      }
      case 'Z': {
        const m2 = /^[A-Za-z_/+\-0-9:]+/.exec(input.slice(i));
        if (!m2) bad();
        i += m2![0].length;
        zone = m2![0];
        break;
      }
      case 'n':
      case 't':
        while (i < input.length && /\s/.test(input[i]!)) i++;
        break;
      case '%':
        if (input[i++] !== '%') bad();
        break;
      default:
        bad();
    }
  }
  while (i < input.length && /\s/.test(input[i]!)) i++;
  if (i !== input.length) bad();
  // A two-digit year alone pivots at 69 (69-99 are 19xx); with a century it is that century's year.
  if (cent !== undefined) y = cent * 100 + (yy ?? 0);
  else if (yy !== undefined) y = yy < 69 ? 2000 + yy : 1900 + yy;
  if (hour12) {
    if (h < 1 || h > 12) bad();
    h = h % 12;
  }
  if (pm !== undefined) h = (h % 12) + (pm ? 12 : 0);
  if (epoch !== undefined) {
    const [dd, tt] = splitMicros(epoch);
    return { days: dd, tod: tt, ts: epoch };
  }
  let days: number;
  if (!nonIso && isoYear !== undefined && (isoWeek !== undefined || isoDoy !== undefined)) {
    if (isoYear < 1 || isoYear > 9999 || (isoWeek !== undefined && (isoWeek < 1 || isoWeek > 53)) || (isoDoy !== undefined && (isoDoy < 1 || isoDoy > 371))) bad();
    const jan4 = daysFromCivil(isoYear, 1, 4);
    const start = jan4 - ((weekday(jan4) + 6) % 7);
    days = isoWeek !== undefined ? start + (isoWeek - 1) * 7 + (wday === undefined ? 0 : (wday + 6) % 7) : start + isoDoy! - 1;
  } else if (weekNo !== undefined) {
    // %U / %W: week 1 starts on the year's first Sunday / Monday; the weekday defaults to that day.
    if (y < 1 || y > 9999) fail('Invalid result from parsing function');
    const jan1 = daysFromCivil(y, 1, 1);
    const first = jan1 + ((weekStart - weekday(jan1) + 7) % 7);
    const wd = wday === undefined ? weekStart : wday;
    days = first + (weekNo - 1) * 7 + ((wd - weekStart + 7) % 7);
  } else if (doy !== undefined) {
    if (y < 1 || y > 9999) fail('Invalid result from parsing function');
    if (doy < 1 || doy > 366) bad();
    if (doy === 366 && daysInMonth(y, 2) === 28) fail(`Year ${y} has 365 days, but the specified day of year was 366`);
    days = daysFromCivil(y, 1, 1) + doy - 1;
  } else {
    // A year outside 1..9999 parsed but is no date (the reference's 'invalid result'); other fields out of range fail to parse.
    if (y < 1 || y > 9999) fail('Invalid result from parsing function');
    if (mo < 1 || mo > 12 || d < 1 || d > 31) bad();
    // A day the month does not have (Feb 30) parses, then fails the reference's normalization check.
    if (d > daysInMonth(y, mo)) fail('Out-of-range datetime field in parsing function');
    days = daysFromCivil(y, mo, d);
  }
  if (h > 23 || mi > 59 || s > 60) bad();
  // Second 60 rolls over into the next minute (as CAST does), its fraction dropped as the reference's
  // parser drops it; past 9999-12-31 that is no date.
  let tod = ((h * 60 + mi) * 60 + s) * 1e6 + (s === 60 ? 0 : us);
  if (tod >= 86400e6) {
    tod -= 86400e6;
    if (++days > MAX_DATE) fail('Invalid result from parsing function');
  }
  return { days, tod, zone };
}
