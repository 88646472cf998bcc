// CAST(... FORMAT '...'): bytes<->string encodings and the datetime format
// elements (YYYY, MM, DD, HH24, MI, SS, FFn, AM, MON, MONTH, DAY, DY, TZH, TZM ...).
import type { SqlType } from '../types/types.js';
import { typeToSql } from '../types/types.js';
import type { Decimal, Value } from '../types/values.js';
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
      return s.replace(/(.{76})(?=.)/g, '$1\r\n');
    }
    case 'ASCII':
      for (const x of b) if (x > 127) fail('Failed to decode invalid ASCII string');
      return Buffer.from(b).toString('latin1');
    case 'UTF8':
    case 'UTF-8': {
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(b);
      } catch {
        fail('Invalid cast of bytes to UTF8 string');
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
      if (!/^[0-9a-fA-F]*$/.test(s)) fail(`Failed to decode invalid hexadecimal string: "${original}"`);
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
      const t = fmt === 'BASE64M' ? s.replace(/[\r\n]/g, '') : s;
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
    if (/[\s\-/,.;:]/.test(c)) {
      out.push({ lit: c });
      i++;
      continue;
    }
    fail(`Cannot find matching format element for the remaining format string: ${fmt.slice(i)}`);
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
  let i = 0;
  const bad = (): never => fail(`Failed to parse input string "${input}"`);
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
  for (const t of toks) {
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
      case 'RRRR':
        y = num(5);
        break;
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
          const n = Number(t.el.slice(2));
          const m = new RegExp(`^[0-9]{1,${n}}`).exec(input.slice(i));
          if (!m) bad();
          i += m![0].length;
          us = Number((m![0] + '000000000').slice(0, 6));
        } else bad();
    }
  }
  if (i !== input.length) bad();
  if (pm !== undefined) h = (h % 12) + (pm ? 12 : 0);
  if (mo < 1 || mo > 12 || d < 1 || y < 1 || y > 9999 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) bad();
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

/** Numeric FORMAT ('999.99', '0000', 'S999', '$999,999.00'): the common subset. */
function formatNumberElements(x: Value, kind: string, format: string): string {
  const n = kind === 'INT64' ? Number(x as bigint) : kind === 'FLOAT64' ? (x as number) : (x as Decimal).toNumber();
  const f = format.toUpperCase();
  const dot = f.indexOf('.');
  const intPart = (dot < 0 ? f : f.slice(0, dot)).replace(/[^09,]/g, '');
  const fracDigits = dot < 0 ? 0 : f.slice(dot + 1).replace(/[^09]/g, '').length;
  const neg = n < 0;
  const abs = Math.abs(n);
  let [ip, fp] = abs.toFixed(fracDigits).split('.') as [string, string | undefined];
  const digitSlots = intPart.replace(/,/g, '').length;
  if (ip.length > digitSlots) return '#'.repeat(f.length + 1);
  const zeroPad = intPart.indexOf('0');
  if (zeroPad >= 0) ip = ip.padStart(intPart.replace(/,/g, '').length - intPart.slice(0, zeroPad).replace(/,/g, '').length, '0');
  if (ip === '0' && zeroPad < 0 && fracDigits > 0) ip = '';
  if (intPart.includes(',')) ip = ip.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  let body = fp !== undefined ? `${ip}.${fp}` : ip;
  if (f.includes('$')) body = '$' + body;
  const width = intPart.length + (dot < 0 ? 0 : fracDigits + 1) + (f.includes('$') ? 1 : 0);
  const signed = (neg ? '-' : f.startsWith('S') ? '+' : ' ') + body;
  return signed.padStart(width + 1, ' ');
}
