// CAST(... FORMAT '...'): bytes<->string encodings and the datetime format
// elements (YYYY, MM, DD, HH24, MI, SS, FFn, AM, MON, MONTH, DAY, DY, TZH, TZM ...).
import type { SqlType } from '../types/types.js';
import { typeToSql } from '../types/types.js';
import { Decimal, type Value } from '../types/values.js';
import {
  civilFromDays,
  civilToUtc,
  daysFromCivil,
  daysInMonth,
  dayOfYear,
  joinMicros,
  offsetSecondsAt,
  pad,
  splitMicros,
  utcToCivil,
  weekday,
} from './civil.js';
import { printfDouble } from './format-number.js';
import { fail } from './vec.js';

// ---------------------------------------------------------------- bytes encodings

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function toBase32(b: Uint8Array): string {
  let out = '';
  let bits = 0;
  let val = 0;
  for (const x of b) {
    val = (val << 8) | x;
    bits += 8;
    while (bits >= 5) {
      out += B32[(val >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(val << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += '=';
  return out;
}

export function fromBase32(s: string): Uint8Array | undefined {
  const t = s.replace(/=+$/, '');
  const out: number[] = [];
  let bits = 0;
  let val = 0;
  for (const c of t.toUpperCase()) {
    const i = B32.indexOf(c);
    if (i < 0) return undefined;
    val = (val << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((val >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Uint8Array.from(out);
}

/** Refuses a string that is not hexadecimal, naming the first bad character's offset in the input as written. */
export function checkHex(s: string, original: string): void {
  const bad = s.search(/[^0-9a-fA-F]/);
  if (bad >= 0) fail(`Failed to decode invalid hexadecimal string due to character at offset ${bad}: ${original}`);
}

export function toHex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

function encodeBytes(b: Uint8Array, fmt: string): string {
  switch (fmt) {
    case 'BASE2':
      return Array.from(b, (x) => x.toString(2).padStart(8, '0')).join('');
    case 'BASE8': {
      // Groups of 3 bytes -> 8 octal digits, as ZetaSQL encodes.
      let bits = '';
      for (const x of b) bits += x.toString(2).padStart(8, '0');
      while (bits.length % 3 !== 0) bits += '0';
      let out = '';
      for (let i = 0; i < bits.length; i += 3) out += parseInt(bits.slice(i, i + 3), 2).toString(8);
      return out;
    }
    case 'BASE16':
    case 'HEX':
      return toHex(b);
    case 'BASE32':
      return toBase32(b);
    case 'BASE64':
      return Buffer.from(b).toString('base64');
    case 'BASE64M': {
      const s = Buffer.from(b).toString('base64');
      // MIME lines of 76 characters, separated by a line feed (as the reference implementation writes them).
      return s.replace(/(.{76})(?=.)/g, '$1\n');
    }
    case 'ASCII':
      for (const x of b) if (x > 127) fail('Failed to decode invalid ASCII string');
      return Buffer.from(b).toString('latin1');
    case 'UTF8':
    case 'UTF-8': {
      try {
        return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(b);
      } catch {
        // The reference's wording for the FORMAT 'UTF8' decoder (a plain CAST says 'Invalid cast of bytes to UTF8 string').
        fail('A string is not valid UTF-8.');
      }
    }
  }
  fail(`Invalid format for conversion from BYTES to STRING: ${fmt}`);
}

function decodeBytes(s: string, fmt: string, original: string): Uint8Array {
  switch (fmt) {
    case 'BASE2': {
      for (let i = 0; i < s.length; i++)
        if (s[i] !== '0' && s[i] !== '1') fail(`Failed to decode invalid base2 string due to character '${s[i]}' at offset ${i}`);
      if (s.length % 8 !== 0) fail(`Failed to decode invalid base2 string`);
      const out = new Uint8Array(s.length / 8);
      for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(i * 8, i * 8 + 8), 2);
      return out;
    }
    case 'BASE8': {
      let bits = '';
      for (let i = 0; i < s.length; i++) {
        if (!/[0-7]/.test(s[i]!)) fail(`Failed to decode invalid base8 string due to character '${s[i]}' at offset ${i}`);
        bits += parseInt(s[i]!, 8).toString(2).padStart(3, '0');
      }
      const n = Math.floor(bits.length / 8);
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) out[i] = parseInt(bits.slice(i * 8, i * 8 + 8), 2);
      return out;
    }
    case 'BASE16':
    case 'HEX': {
      checkHex(s, original);
      const t = s.length % 2 ? '0' + s : s;
      return Uint8Array.from(Buffer.from(t, 'hex'));
    }
    case 'BASE32': {
      const r = fromBase32(s);
      if (!r) fail(`Failed to decode invalid base32 string: "${original}"`);
      return r;
    }
    case 'BASE64':
    case 'BASE64M': {
      // whitespace in the input is ignored by both BASE64 and BASE64M decoding
      const t = s.replace(/\s/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(t) || t.length % 4 === 1) fail(`Failed to decode invalid base64 string: "${original}"`);
      return Uint8Array.from(Buffer.from(t, 'base64'));
    }
    case 'ASCII':
      for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 127) fail('Failed to encode invalid ASCII string');
      return Uint8Array.from(Buffer.from(s, 'latin1'));
    case 'UTF8':
    case 'UTF-8':
      return new TextEncoder().encode(s);
  }
  fail(`Invalid format for conversion from STRING to BYTES: ${fmt}`);
}

// ---------------------------------------------------------------- datetime format elements

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

// Longest match first.
const ELEMENTS = [
  'YYYY', 'YYY', 'YY', 'Y', 'RRRR', 'RR', 'MONTH', 'MON', 'MM', 'DDD', 'DD', 'DAY', 'DY', 'D', 'HH24', 'HH12', 'HH', 'MI', 'SSSSS', 'SS',
  'FF1', 'FF2', 'FF3', 'FF4', 'FF5', 'FF6', 'FF7', 'FF8', 'FF9', 'AM', 'PM', 'A.M.', 'P.M.', 'TZH', 'TZM', 'CC', 'SCC', 'Q', 'IW', 'WW', 'W',
];
const CATEGORY: Record<string, string> = {
  YYYY: 'YEAR', YYY: 'YEAR', YY: 'YEAR', Y: 'YEAR', RRRR: 'YEAR', RR: 'YEAR', MONTH: 'MONTH', MON: 'MONTH', MM: 'MONTH',
  DDD: 'DAY', DD: 'DAY', DAY: 'DAY', DY: 'DAY', D: 'DAY', HH24: 'HOUR', HH12: 'HOUR', HH: 'HOUR', MI: 'MINUTE', SS: 'SECOND', SSSSS: 'SECOND',
  FF1: 'SECOND', FF2: 'SECOND', FF3: 'SECOND', FF4: 'SECOND', FF5: 'SECOND', FF6: 'SECOND', FF7: 'SECOND', FF8: 'SECOND', FF9: 'SECOND',
  AM: 'MERIDIAN', PM: 'MERIDIAN', 'A.M.': 'MERIDIAN', 'P.M.': 'MERIDIAN', TZH: 'TIME_ZONE', TZM: 'TIME_ZONE',
};

type Tok = { el: string; raw: string } | { lit: string };

function tokenize(fmt: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < fmt.length) {
    const c = fmt[i]!;
    if (c === '"') {
      let j = i + 1;
      let lit = '';
      while (j < fmt.length && fmt[j] !== '"') {
        if (fmt[j] === '\\' && j + 1 < fmt.length) j++;
        lit += fmt[j];
        j++;
      }
      out.push({ lit });
      i = j + 1;
      continue;
    }
    const up = fmt.slice(i).toUpperCase();
    const el = ELEMENTS.find((e) => up.startsWith(e));
    if (el) {
      out.push({ el, raw: fmt.slice(i, i + el.length) });
      i += el.length;
      continue;
    }
    // format-elements.md, Whitespace: only the ASCII 32 space; any other whitespace in a format model is an error.
    if (/[ \-/,.;:']/.test(c)) {
      out.push({ lit: c });
      i++;
      continue;
    }
    // The reference's words, with the offset of the first character no element matches.
    fail(`Cannot find matched format element at ${i}`);
  }
  return out;
}

function allowed(el: string, kind: string): boolean {
  const cat = CATEGORY[el] ?? 'YEAR';
  if (kind === 'DATE') return !['HOUR', 'MINUTE', 'SECOND', 'MERIDIAN', 'TIME_ZONE'].includes(cat);
  if (kind === 'TIME') return ['HOUR', 'MINUTE', 'SECOND', 'MERIDIAN'].includes(cat);
  if (kind === 'DATETIME') return cat !== 'TIME_ZONE';
  return true;
}

function caseLike(raw: string, s: string): string {
  if (raw === raw.toUpperCase()) return s.toUpperCase();
  if (raw[0] === raw[0]!.toUpperCase()) return s;
  return s.toLowerCase();
}

function formatDatetimeElements(fmt: string, kind: string, days: number, tod: number, offSec: number): string {
  const toks = tokenize(fmt);
  const [y, m, d] = civilFromDays(days);
  const h = Math.floor(tod / 3600e6);
  const mi = Math.floor(tod / 60e6) % 60;
  const s = Math.floor(tod / 1e6) % 60;
  const us = tod % 1e6;
  let out = '';
  for (const t of toks) {
    if ('lit' in t) {
      out += t.lit;
      continue;
    }
    if (!allowed(t.el, kind)) fail(`${kind} does not support '${t.el}'`);
    switch (t.el) {
      case 'YYYY':
      case 'RRRR':
        out += pad(y, 4);
        break;
      case 'YYY':
        out += pad(y % 1000, 3);
        break;
      case 'YY':
      case 'RR':
        out += pad(y % 100, 2);
        break;
      case 'Y':
        out += String(y % 10);
        break;
      case 'MM':
        out += pad(m, 2);
        break;
      case 'MON':
        out += caseLike(t.raw, MONTHS[m - 1]!.slice(0, 3));
        break;
      case 'MONTH':
        out += caseLike(t.raw, MONTHS[m - 1]!);
        break;
      case 'DD':
        out += pad(d, 2);
        break;
      case 'DDD':
        out += pad(dayOfYear(days), 3);
        break;
      case 'D':
        out += String(weekday(days) + 1);
        break;
      case 'DAY':
        out += caseLike(t.raw, DAYS[weekday(days)]!);
        break;
      case 'DY':
        out += caseLike(t.raw, DAYS[weekday(days)]!.slice(0, 3));
        break;
      case 'HH24':
        out += pad(h, 2);
        break;
      case 'HH':
      case 'HH12':
        out += pad(h % 12 === 0 ? 12 : h % 12, 2);
        break;
      case 'MI':
        out += pad(mi, 2);
        break;
      case 'SS':
        out += pad(s, 2);
        break;
      case 'SSSSS':
        out += pad(h * 3600 + mi * 60 + s, 5);
        break;
      case 'AM':
      case 'PM':
        out += caseLike(t.raw, h < 12 ? 'AM' : 'PM');
        break;
      case 'A.M.':
      case 'P.M.':
        out += caseLike(t.raw, h < 12 ? 'A.M.' : 'P.M.');
        break;
      case 'TZH':
        out += (offSec < 0 ? '-' : '+') + pad(Math.floor(Math.abs(offSec) / 3600), 2);
        break;
      case 'TZM':
        out += pad(Math.floor(Math.abs(offSec) / 60) % 60, 2);
        break;
      case 'CC':
      case 'SCC':
        out += pad(Math.floor((y - 1) / 100) + 1, 2);
        break;
      case 'Q':
        out += String(Math.floor((m - 1) / 3) + 1);
        break;
      default:
        if (t.el.startsWith('FF')) {
          const n = Number(t.el.slice(2));
          out += (pad(us, 6) + '000').slice(0, n);
        }
    }
  }
  return out;
}

/** The documented format model rules for parsing a string into date and time parts. */
function checkParseModel(els: Set<string>): void {
  const count = (cat: string) => [...els].filter((e) => CATEGORY[e] === cat).length;
  for (const cat of ['MERIDIAN', 'YEAR', 'MONTH', 'HOUR']) {
    if (count(cat) > 1) fail(`More than one format element in category ${cat} exist: ${[...els].filter((e) => CATEGORY[e] === cat).map((e) => `'${e}'`).join(', ')}`);
  }
  if (els.has('DDD') && count('MONTH') > 0) fail(`Format element in category MONTH and 'DDD' cannot exist simultaneously`);
  const meridian = count('MERIDIAN') > 0;
  const h12 = els.has('HH') || els.has('HH12');
  if (els.has('HH24') && meridian) fail(`Format element 'HH24' and format element in category MERIDIAN cannot exist simultaneously`);
  if (h12 && !meridian) fail(`Format element in category MERIDIAN is required when 'HH12' or 'HH' exists`);
  if (meridian && !h12) fail(`Format element 'HH12' or 'HH' is required when a format element in category MERIDIAN exists`);
  if (els.has('SSSSS') && (count('HOUR') > 0 || els.has('MI') || els.has('SS') || meridian)) {
    fail(`Format element 'SSSSS' cannot exist simultaneously with format elements in category HOUR, MINUTE, SECOND or MERIDIAN`);
  }
}

/** Parsed elements that read letters or a sign, not digits. */
const NAMED_ELEMENTS = new Set(['MON', 'MONTH', 'DAY', 'DY', 'AM', 'PM', 'A.M.', 'P.M.', 'TZH']);

function parseDatetimeElements(input: string, fmt: string, kind: string, zone: string, nowMicros = 0n): { days: number; tod: number; zone?: string } {
  const toks = tokenize(fmt);
  const seen = new Set<string>();
  for (const t of toks) {
    if ('lit' in t) continue;
    if (!allowed(t.el, kind)) {
      fail(`Format element in category ${CATEGORY[t.el]} ('${t.el}') is not allowed for output type ${kind}`);
    }
    if (seen.has(t.el)) fail(`Format element '${t.el}' appears more than once in the format string`);
    seen.add(t.el);
  }
  checkParseModel(seen);
  let i = 0;
  // Errors name the format element being parsed and where its input began, as the reference does.
  let cur = '', curAt = 0;
  const bad = (): never => fail(`Failed to parse input timestamp string at ${curAt} with format element '${cur}'`);
  const num = (maxLen: number): number => {
    const m = new RegExp(`^[0-9]{1,${maxLen}}`).exec(input.slice(i));
    if (!m) bad();
    i += m![0].length;
    return Number(m![0]);
  };
  // Unspecified fields default to the current year and month, day 1, midnight (ZetaSQL).
  const [cy, cm] = civilFromDays(splitMicros(utcToCivil(nowMicros, zone))[0]);
  let y = cy, mo = cm, d = 1, h = 0, mi = 0, s = 0, us = 0, pm: boolean | undefined;
  let tzh: number | undefined, tzm = 0;
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k]!;
    cur = 'lit' in t ? t.lit : t.el;
    curAt = i;
    if (i >= input.length && !('lit' in t && /\s/.test(t.lit))) fail(`Entire timestamp string has been parsed before dealing with format element '${cur}'`);
    if ('lit' in t) {
      if (/\s/.test(t.lit)) {
        while (i < input.length && /\s/.test(input[i]!)) i++;
        continue;
      }
      if (input[i] !== t.lit) bad();
      i++;
      continue;
    }
    switch (t.el) {
      case 'YYYY':
      case 'RRRR': {
        // Up to 5 digits (a year past 9999 fails here), but 4 when digits of the next element follow at once ('YYYYMMDD').
        const next = toks[k + 1];
        y = num(next && !('lit' in next) && !NAMED_ELEMENTS.has(next.el) ? 4 : 5);
        if (y > 9999) bad();
        break;
      }
      case 'YYY':
        y = 2000 + num(3);
        break;
      case 'YY':
      case 'RR':
        y = 2000 + num(2);
        break;
      case 'Y':
        y = 2020 + num(1);
        break;
      case 'MM':
        mo = num(2);
        if (mo < 1 || mo > 12) bad();
        break;
      case 'MON':
      case 'MONTH': {
        const rest = input.slice(i).toLowerCase();
        const idx = MONTHS.findIndex((x) => rest.startsWith(t.el === 'MON' ? x.slice(0, 3).toLowerCase() : x.toLowerCase()));
        if (idx < 0) bad();
        mo = idx + 1;
        i += t.el === 'MON' ? 3 : MONTHS[idx]!.length;
        break;
      }
      case 'DD':
        d = num(2);
        if (d < 1 || d > 31) bad();
        break;
      case 'DDD': {
        const doy = num(3);
        const base = daysFromCivil(y, 1, 1) + doy - 1;
        [y, mo, d] = civilFromDays(base);
        break;
      }
      case 'HH24':
        h = num(2);
        break;
      case 'HH':
      case 'HH12':
        h = num(2);
        if (h < 1 || h > 12) bad();
        break;
      case 'MI':
        mi = num(2);
        break;
      case 'SS':
        s = num(2);
        break;
      case 'SSSSS': {
        const v = num(5);
        h = Math.floor(v / 3600);
        mi = Math.floor(v / 60) % 60;
        s = v % 60;
        break;
      }
      case 'AM':
      case 'PM':
      case 'A.M.':
      case 'P.M.': {
        const rest = input.slice(i).toUpperCase();
        const len = t.el.length;
        const word = rest.slice(0, len);
        if (word === 'AM' || word === 'A.M.') pm = false;
        else if (word === 'PM' || word === 'P.M.') pm = true;
        else bad();
        i += len;
        break;
      }
      case 'TZH': {
        const sign = input[i];
        if (sign !== '+' && sign !== '-') bad();
        i++;
        tzh = num(2) * (sign === '-' ? -1 : 1);
        break;
      }
      case 'TZM':
        tzm = num(2);
        break;
      default:
        if (t.el.startsWith('FF')) {
          // FFn takes the digits there are and rounds them to n places ('07.16' with FF1 is 07.2)
          const n = Number(t.el.slice(2));
          const m = /^[0-9]{1,9}/.exec(input.slice(i));
          if (!m) bad();
          i += m![0].length;
          const nanos = Number((m![0] + '000000000').slice(0, 9));
          const unit = 10 ** (9 - n);
          us = Math.floor((Math.round(nanos / unit) * unit) / 1000);
        } else bad();
    }
  }
  while (i < input.length && /\s/.test(input[i]!)) i++;
  if (i !== input.length) fail(`Illegal non-space trailing data '${input.slice(i)}' in timestamp string`);
  if (pm !== undefined) h = (h % 12) + (pm ? 12 : 0);
  if (y < 1 || y > 9999 || d > daysInMonth(y, mo)) fail('Invalid result from year, month, day values after parsing');
  if (h > 23 || mi > 59 || s > 59) fail(`Failed to parse input string "${input}"`);
  let z: string | undefined;
  if (tzh !== undefined) z = `${tzh < 0 ? '-' : '+'}${pad(Math.abs(tzh), 2)}:${pad(tzm, 2)}`;
  return { days: daysFromCivil(y, mo, d), tod: ((h * 60 + mi) * 60 + s) * 1e6 + us, zone: z };
}

// ---------------------------------------------------------------- entry

export function castWithFormat(x: Value, from: SqlType, to: SqlType, format: string, zone: string, nowMicros = 0n): Value {
  const fmt = format.trim().toUpperCase();
  if (from.kind === 'BYTES' && to.kind === 'STRING') return encodeBytes(x as Uint8Array, fmt);
  if (from.kind === 'STRING' && to.kind === 'BYTES') return decodeBytes(x as string, fmt, x as string);
  if (to.kind === 'STRING') {
    switch (from.kind) {
      case 'DATE':
        return formatDatetimeElements(format, 'DATE', x as number, 0, 0);
      case 'TIME':
        return formatDatetimeElements(format, 'TIME', 0, x as number, 0);
      case 'DATETIME': {
        const [d, t] = splitMicros(x as bigint);
        return formatDatetimeElements(format, 'DATETIME', d, t, 0);
      }
      case 'TIMESTAMP': {
        const off = offsetSecondsAt(zone, x as bigint);
        const [d, t] = splitMicros(utcToCivil(x as bigint, zone));
        return formatDatetimeElements(format, 'TIMESTAMP', d, t, off);
      }
      case 'INT64':
      case 'FLOAT64':
      case 'NUMERIC':
      case 'BIGNUMERIC':
        return formatNumberElements(x, from.kind, format);
    }
  }
  if (from.kind === 'STRING') {
    const s = x as string;
    switch (to.kind) {
      case 'DATE':
        return parseDatetimeElements(s, format, 'DATE', zone, nowMicros).days;
      case 'TIME':
        return parseDatetimeElements(s, format, 'TIME', zone, nowMicros).tod;
      case 'DATETIME': {
        const r = parseDatetimeElements(s, format, 'DATETIME', zone, nowMicros);
        return joinMicros(r.days, r.tod);
      }
      case 'TIMESTAMP': {
        const r = parseDatetimeElements(s, format, 'TIMESTAMP', zone, nowMicros);
        return civilToUtc(joinMicros(r.days, r.tod), r.zone ?? zone);
      }
    }
  }
  fail(`FORMAT is not supported for CAST from ${typeToSql(from)} to ${typeToSql(to)}`);
}

// ---------------------------------------------------------------- numeric format elements
//
// CAST(number AS STRING FORMAT '...'): digits 0 9 X x, decimal point . D V, group
// separator , G, sign S MI PR, currency $ C c L, exponent EEEE, flags B FM, and RN.
// Every element yields a fixed number of characters (one position is kept for the
// sign when there is no sign element) and the output is aligned on the decimal
// point; digits that do not fit turn every digit into '#'.

type NumEl = '0' | '9' | 'X' | 'x' | '.' | 'D' | 'V' | ',' | 'G' | 'EEEE' | 'eeee';

interface NumFormat {
  kind: 'decimal' | 'hex' | 'roman';
  /** Digits, decimal point, group separators and the exponent, in order. */
  els: NumEl[];
  /** Index in `els` of the decimal point (or of EEEE, or els.length). */
  point: number;
  firstZero: number | undefined;
  scale: number;
  intDigits: number;
  exponent: boolean;
  sign: 'S' | 'MI' | 'PR' | undefined;
  signFront: boolean;
  currency: '$' | 'C' | 'c' | 'L' | undefined;
  b: boolean;
  fm: boolean;
  romanUpper: boolean;
}

const numFormatCache = new Map<string, NumFormat>();

function formatError(msg: string): never {
  fail(`Error in format string: ${msg}`);
}

/** The format element at the start of `s` and its length. */
function numElement(s: string): [string, number] | undefined {
  const c = s[0]!;
  const u = s.slice(0, 4).toUpperCase();
  if ('$09.,'.includes(c) || c === 'X' || c === 'x') return [c, 1];
  if (u.startsWith('MI') || u.startsWith('PR') || u.startsWith('FM')) return [u.slice(0, 2), 2];
  if (u.startsWith('RN')) return [c === 'r' ? 'rn' : 'RN', 2];
  if (u === 'EEEE') return [c === 'e' ? 'eeee' : 'EEEE', 4];
  if (u.startsWith('TM')) formatError("'TM', 'TM9' or 'TME' are not supported");
  switch (c) {
    case 'D': case 'd': return ['D', 1];
    case 'G': case 'g': return ['G', 1];
    case 'S': case 's': return ['S', 1];
    case 'B': case 'b': return ['B', 1];
    case 'V': case 'v': return ['V', 1];
    case 'C': case 'c': return [c, 1];
    case 'L': case 'l': return ['L', 1];
  }
  return undefined;
}

function parseNumFormat(format: string): NumFormat {
  const cached = numFormatCache.get(format);
  if (cached) return cached;
  const f: NumFormat = {
    kind: 'decimal', els: [], point: -1, firstZero: undefined, scale: 0, intDigits: 0, exponent: false,
    sign: undefined, signFront: false, currency: undefined, b: false, fm: false, romanUpper: true,
  };
  type State = 'start' | 'int' | 'frac' | 'exp' | 'hex' | 'afterSign' | 'roman';
  let state = 'start' as State;
  let has9 = false, hasX = false, hasGroup = false, digits = 0, roman = false;
  const setSign = (el: 'S' | 'MI' | 'PR') => {
    if (f.sign) formatError("There can be at most one of 'S', 'MI', or 'PR'");
    f.sign = el;
    state = 'afterSign';
  };
  const setPoint = () => {
    f.point = f.els.length - 1;
    state = 'frac';
  };
  for (let i = 0; i < format.length; ) {
    const m = numElement(format.slice(i));
    if (!m) formatError(`Invalid format element '${format[i]}'`);
    const [el, len] = m;
    i += len;
    if (el === 'FM') {
      if (f.fm) formatError("'FM' cannot be repeated");
      f.fm = true;
      continue;
    }
    if (el === '$' || el === 'C' || el === 'c' || el === 'L') {
      if (f.currency) formatError("There can be at most one of '$', 'C' or 'L'");
      f.currency = el;
      continue;
    }
    if (el === 'B') {
      if (f.b) formatError("There can be at most one 'B'");
      f.b = true;
      continue;
    }
    if (el === '0' || el === '9' || el === 'X' || el === 'x') digits++;
    if (['0', '9', 'X', 'x', '.', 'D', 'V', ',', 'G', 'EEEE', 'eeee'].includes(el)) {
      f.els.push(el as NumEl);
      if (el === '0' && f.firstZero === undefined) f.firstZero = f.els.length - 1;
    }
    const upperEl = el === 'x' ? 'X' : el === 'eeee' ? 'EEEE' : el === 'rn' ? 'RN' : el;
    if (state === 'roman') formatError(`'RN' cannot appear together with '${upperEl}'`);
    switch (state) {
      case 'start':
        if (el === 'S') { f.sign = 'S'; f.signFront = true; state = 'int'; }
        else if (el === 'MI' || el === 'PR') formatError(`'${el}' can only appear after all digits and 'EEEE'`);
        else if (el === '9') { has9 = true; state = 'int'; }
        else if (el === '0') state = 'int';
        else if (el === 'X' || el === 'x') { hasX = true; state = 'hex'; }
        else if (el === 'RN' || el === 'rn') { roman = true; f.romanUpper = el === 'RN'; state = 'roman'; }
        else if (el === '.' || el === 'D' || el === 'V') setPoint();
        else formatError(`Unexpected '${upperEl}'`);
        break;
      case 'int':
        if (el === 'S' || el === 'MI' || el === 'PR') setSign(el);
        else if (el === 'EEEE' || el === 'eeee') {
          if (hasGroup) formatError("',' or 'G' cannot appear together with 'EEEE'");
          f.exponent = true;
          f.point = f.els.length - 1;
          state = 'exp';
        } else if (el === 'X' || el === 'x') {
          if (has9) formatError("'X' cannot appear together with '9'");
          if (hasGroup) formatError("'X' cannot appear together with ',' or 'G'");
          hasX = true;
          state = 'hex';
        } else if (el === '9') has9 = true;
        else if (el === '0') { /* digit */ }
        else if (el === ',' || el === 'G') hasGroup = true;
        else if (el === '.' || el === 'D' || el === 'V') setPoint();
        else formatError(`Unexpected '${upperEl}'`);
        break;
      case 'frac':
        if (el === '0' || el === '9') f.scale++;
        else if (el === 'X' || el === 'x') formatError(`'X' cannot appear together with '${f.els[f.point]}'`);
        else if (el === 'EEEE' || el === 'eeee') {
          if (hasGroup) formatError("',' or 'G' cannot appear together with 'EEEE'");
          f.exponent = true;
          state = 'exp';
        } else if (el === 'S' || el === 'MI' || el === 'PR') setSign(el);
        else if (el === '.' || el === 'D' || el === 'V') formatError("There can be at most one of '.', 'D', or 'V'");
        else if (el === ',' || el === 'G') formatError("',' or 'G' cannot appear after '.', 'D' or 'V'");
        else formatError(`Unexpected '${upperEl}'`);
        break;
      case 'exp':
        if (el === 'S' || el === 'MI' || el === 'PR') setSign(el);
        else if (el === ',' || el === 'G') formatError("',' or 'G' cannot appear together with 'EEEE'");
        else formatError(`'${upperEl}' cannot appear after 'EEEE'`);
        break;
      case 'hex':
        if (el === '0' || el === 'X' || el === 'x') { /* digit */ }
        else if (el === 'S' || el === 'MI' || el === 'PR') setSign(el);
        else formatError(`'X' cannot appear together with '${upperEl}'`);
        break;
      case 'afterSign':
        if (['0', '9', 'X', 'x', 'EEEE', 'eeee'].includes(el)) {
          if (f.sign === 'S') formatError("'S' can only appear before or after all digits and 'EEEE'");
          formatError(`'${f.sign!}' can only appear after all digits and 'EEEE'`);
        }
        formatError(`Unexpected format element '${upperEl}'`);
    }
  }
  if (f.currency && hasX) formatError(`'X' cannot appear together with '${f.currency.toUpperCase()}'`);
  if (f.currency && roman) formatError(`'RN' cannot appear together with '${f.currency.toUpperCase()}'`);
  if (f.b && hasX) formatError("'X' cannot appear together with 'B'");
  if (f.b && roman) formatError("'RN' cannot appear together with 'B'");
  if (roman) f.kind = 'roman';
  else {
    if (digits === 0) formatError("Format string must contain at least one of 'X', '0' or '9'");
    if (hasX && digits > 16) formatError("Max number of 'X' is 16");
    if (hasX) {
      f.kind = 'hex';
      // a '0' takes the letter case of the next X (upper case when there is none)
      let next: NumEl = 'X';
      for (let k = f.els.length - 1; k >= 0; k--) {
        if (f.els[k] === '0') f.els[k] = next;
        else next = f.els[k]!;
      }
    } else {
      f.intDigits = digits - f.scale;
      if (f.point < 0) f.point = f.els.length;
      // with an exponent at most one integer digit is kept ('999.99EEEE' acts as '9.99EEEE')
      if (f.exponent && f.point >= 2) {
        f.els.splice(0, f.point - 1);
        if (f.firstZero !== undefined) f.firstZero = Math.max(0, f.firstZero - (f.point - 1));
        f.point = 1;
      }
    }
  }
  if (numFormatCache.size > 256) numFormatCache.clear();
  numFormatCache.set(format, f);
  return f;
}

interface NumParts {
  negative: boolean;
  inf: boolean;
  nan: boolean;
  /** Integer digits without leading zeros ('' for 0). */
  int: string;
  frac: string;
  /** Exponent with sign, at least two digits ('+01'). */
  exp: string;
}

/** printf '%#.{scale}f' / '%#.{scale}e' of the value, split into parts. */
function numberParts(x: Value, kind: string, scale: number, exponent: boolean): NumParts {
  let text: string;
  if (kind === 'FLOAT64') {
    const n = x as number;
    if (Number.isNaN(n)) return { negative: false, inf: false, nan: true, int: '', frac: '', exp: '' };
    if (!Number.isFinite(n)) return { negative: n < 0, inf: true, nan: false, int: '', frac: '', exp: '' };
    // the service prints -0.0 as an unsigned zero
    text = printfDouble(n === 0 ? 0 : n, exponent ? 'e' : 'f', scale, true);
  } else {
    const d = kind === 'INT64' ? new Decimal((x as bigint).toString()) : (x as Decimal);
    if (exponent) {
      const e = d.toExponential(scale, Decimal.ROUND_HALF_UP);
      const [m, ex] = e.split('e') as [string, string];
      const ev = Number(ex);
      text = `${m.includes('.') ? m : m + '.'}e${ev < 0 ? '-' : '+'}${String(Math.abs(ev)).padStart(2, '0')}`;
    } else {
      text = d.toFixed(scale, Decimal.ROUND_HALF_UP);
      if (!text.includes('.')) text += '.';
    }
    if (/^-0\.0*(e|$)/.test(text)) text = text.slice(1);
  }
  const negative = text.startsWith('-');
  if (negative) text = text.slice(1);
  let exp = '';
  const ei = text.indexOf('e');
  if (ei >= 0) {
    exp = text.slice(ei + 1);
    text = text.slice(0, ei);
  }
  const dot = text.indexOf('.');
  const int = text.slice(0, dot);
  return { negative, inf: false, nan: false, int: int === '0' ? '' : int, frac: text.slice(dot + 1), exp };
}

function signParts(f: NumFormat, negative: boolean, blank: boolean): [string, string] {
  const pick = (s: string) => (blank ? ' '.repeat(s.length) : s);
  switch (f.sign) {
    case 'S':
      return f.signFront ? [pick(negative ? '-' : '+'), ''] : ['', pick(negative ? '-' : '+')];
    case 'MI':
      return ['', pick(negative ? '-' : ' ')];
    case 'PR':
      return [pick(negative ? '<' : ' '), pick(negative ? '>' : ' ')];
    default:
      return [pick(negative ? '-' : ' '), ''];
  }
}

function currencyText(f: NumFormat, blank: boolean): string {
  if (!f.currency) return '';
  const s = f.currency === '$' || f.currency === 'L' ? '$' : f.currency === 'C' ? 'USD' : 'usd';
  return blank ? ' '.repeat(s.length) : s;
}

function finishNum(f: NumFormat, s: string): string {
  return f.fm ? s.trim() : s;
}

function formatDecimalNum(f: NumFormat, x: Value, kind: string): string {
  const n = numberParts(x, kind, f.scale, f.exponent);
  if (f.fm) n.frac = n.frac.replace(/0+$/, '');
  if (n.inf || n.nan) {
    const word = n.inf ? 'INF' : 'NAN';
    let body: string;
    let pad: number;
    if (f.exponent) {
      body = word;
      pad = f.els.length;
    } else {
      const overflow = f.point < 3;
      let frac = '';
      for (let k = f.point; k < f.els.length; k++) {
        const el = f.els[k]!;
        if (el === '.' || el === 'D') frac += overflow ? '.' : ' ';
        else if (el === '0' || el === '9') frac += overflow ? '#' : ' ';
      }
      if (f.fm) frac = frac.trim();
      let int = '';
      let wi = word.length - 1, k = f.point - 1;
      for (; wi >= 0 && k >= 0; k--, wi--) {
        const el = f.els[k]!;
        int = (overflow ? (el === ',' || el === 'G' ? ',' : '#') : word[wi]!) + int;
      }
      body = int + frac;
      pad = k + 1;
    }
    let [pre, suf] = signParts(f, n.negative, false);
    if (n.nan) [pre, suf] = [' '.repeat(pre.length), ' '.repeat(suf.length)];
    return finishNum(f, (f.fm ? '' : ' '.repeat(pad)) + pre + currencyText(f, false) + body + suf);
  }
  const overflow = n.int.length > f.intDigits;
  const blank = f.b && n.int === '';
  let frac = '';
  let fi = 0;
  for (let k = f.point; k < f.els.length; k++) {
    const el = f.els[k]!;
    if (el === '.' || el === 'D') frac += blank ? ' ' : '.';
    else if (el === '0' || el === '9') {
      if (overflow) frac += '#';
      else if (fi < n.frac.length) frac += blank ? ' ' : n.frac[fi];
      fi++;
    } else if (el === 'EEEE' || el === 'eeee') {
      frac += overflow ? '####' : blank ? '    ' : (el === 'EEEE' ? 'E' : 'e') + n.exp;
    }
  }
  let int = '';
  let pad = f.point;
  const wantInt = f.intDigits > 0 && (n.int !== '' || f.exponent || (f.firstZero !== undefined && f.firstZero < f.point) || n.frac === '');
  if (wantInt) {
    const digits = n.int === '' ? '0' : n.int;
    let di = digits.length - 1;
    let k = f.point - 1;
    for (; k >= 0; k--) {
      if (di < 0 && !(f.firstZero !== undefined && k >= f.firstZero)) break;
      const el = f.els[k]!;
      if (el === '0' || el === '9') {
        int = (overflow ? '#' : blank ? ' ' : di >= 0 ? digits[di]! : '0') + int;
        di--;
      } else int = (blank ? ' ' : ',') + int;
    }
    pad = k + 1;
  }
  const [pre, suf] = signParts(f, n.negative, blank);
  return finishNum(f, ' '.repeat(pad) + pre + currencyText(f, blank) + int + frac + suf);
}

function formatHexNum(f: NumFormat, x: Value, kind: string): string {
  let negative: boolean;
  let mag: bigint | undefined;
  if (kind === 'INT64') {
    const v = x as bigint;
    negative = v < 0n;
    mag = negative ? -v : v;
  } else {
    const d = kind === 'FLOAT64' ? new Decimal(x as number) : (x as Decimal);
    negative = d.isNegative() && !d.isZero();
    const r = d.abs().toDecimalPlaces(0, Decimal.ROUND_HALF_UP);
    mag = r.isFinite() && r.lte('18446744073709551615') ? BigInt(r.toFixed(0)) : undefined;
  }
  const hex = mag === undefined ? '0'.repeat(17) : mag.toString(16);
  const overflow = hex.length > f.els.length;
  let out = '';
  let hi = hex.length - 1;
  let k = f.els.length - 1;
  for (; k >= 0; k--) {
    if (hi < 0 && !(f.firstZero !== undefined && k >= f.firstZero)) break;
    const el = f.els[k]!;
    const c = overflow ? '#' : hi >= 0 ? hex[hi]! : '0';
    out = (el === 'X' ? c.toUpperCase() : c) + out;
    hi--;
  }
  const [pre, suf] = signParts(f, negative, false);
  return finishNum(f, (f.fm ? '' : ' '.repeat(k + 1)) + pre + out + suf);
}

const ROMAN: [number, string][] = [[1000, 'M'], [900, 'CM'], [500, 'D'], [400, 'CD'], [100, 'C'], [90, 'XC'], [50, 'L'], [40, 'XL'], [10, 'X'], [9, 'IX'], [5, 'V'], [4, 'IV'], [1, 'I']];

function formatRomanNum(f: NumFormat, x: Value, kind: string): string {
  const d = kind === 'INT64' ? new Decimal((x as bigint).toString()) : kind === 'FLOAT64' ? new Decimal(x as number) : (x as Decimal);
  const n = d.isFinite() ? d.toDecimalPlaces(0, Decimal.ROUND_HALF_UP).toNumber() : NaN;
  if (!(n >= 1 && n <= 3999)) fail(`Input value ${formatNumberForError(x, kind)} is out of the range of RN format, which must be between 1 and 3999`);
  let r = '';
  let rest = n;
  for (const [v, s] of ROMAN) for (; rest >= v; rest -= v) r += s;
  if (!f.romanUpper) r = r.toLowerCase();
  return f.fm ? r : r.padStart(15, ' ');
}

function formatNumberForError(x: Value, kind: string): string {
  return kind === 'INT64' ? (x as bigint).toString() : kind === 'FLOAT64' ? String(x) : (x as Decimal).toFixed();
}

function formatNumberElements(x: Value, kind: string, format: string): string {
  const f = parseNumFormat(format);
  if (f.kind === 'hex') return formatHexNum(f, x, kind);
  if (f.kind === 'roman') return formatRomanNum(f, x, kind);
  return formatDecimalNum(f, x, kind);
}
