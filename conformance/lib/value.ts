// Typed value model shared by every source, and the parser of the value
// literals the GoogleSQL .test files print (reference implementation's
// Value::Format output). Parsing is type-driven: JSON values print raw, so
// `{{"a":1}}` can only be read knowing the column is JSON.

import { parseTypeAt, skipWs, type SqlType } from './sqltype.js';

export type Val =
  | { k: 'null' }
  | { k: 'int'; v: bigint }
  /** rel: comparison tolerance when the value is a float32 (FLOAT) of the reference */
  | { k: 'float'; v: number; rel?: number }
  | { k: 'bool'; v: boolean }
  | { k: 'string'; v: string }
  /** base64 of the bytes, normalised */
  | { k: 'bytes'; v: string }
  /** canonical decimal text: no exponent, no trailing fractional zeros */
  | { k: 'decimal'; v: string }
  /** DATE / DATETIME / TIME: canonical text (space separator, trimmed fraction) */
  | { k: 'civil'; type: 'DATE' | 'DATETIME' | 'TIME'; v: string }
  | { k: 'timestamp'; micros: bigint }
  | { k: 'json'; v: unknown }
  /** normalised to months, days, nanos */
  | { k: 'interval'; months: bigint; days: bigint; nanos: bigint }
  | { k: 'range'; start: Val; end: Val }
  /** ordered: false = unknown order (multiset compare) */
  | { k: 'array'; elems: Val[]; ordered: boolean }
  | { k: 'struct'; fields: Val[] }
  | { k: 'geography'; v: string }
  /** values of types with no BigQuery counterpart (PROTO, ENUM, UUID) */
  | { k: 'raw'; v: string };

export const NULL: Val = { k: 'null' };

export class ValueParseError extends Error {}

const STICKY = new Map<string, RegExp>();

export interface TypedValue {
  type: SqlType;
  value: Val;
}

/** Parses a value of `type` at `pos`. For `ARRAY<>` the value carries its type. */
export function parseValueAt(text: string, pos: number, type: SqlType): { value: Val; type: SqlType; end: number } {
  const p = new Parser(text, pos);
  const r = p.value(type);
  return { value: r.value, type: r.type, end: p.i };
}

/** Parses a whole typed table literal `ARRAY<STRUCT<...>>[...]` or any typed value. */
export function parseTypedLiteral(text: string): TypedValue {
  const t = parseTypeAt(text, 0);
  const p = new Parser(text, t.end);
  const r = p.value(t.type);
  p.ws();
  if (p.i !== text.length) throw new ValueParseError(`trailing text after value: ${JSON.stringify(text.slice(p.i, p.i + 40))}`);
  return r;
}

class Parser {
  constructor(readonly s: string, public i: number) {}

  ws(): void {
    this.i = skipWs(this.s, this.i);
  }

  fail(msg: string): never {
    throw new ValueParseError(`${msg} at offset ${this.i}: ${JSON.stringify(this.s.slice(this.i, this.i + 40))}`);
  }

  startsWith(lit: string): boolean {
    return this.s.startsWith(lit, this.i);
  }

  startsWithWord(word: string): boolean {
    if (this.s.slice(this.i, this.i + word.length).toUpperCase() !== word.toUpperCase()) return false;
    const next = this.s[this.i + word.length];
    return next === undefined || !/[A-Za-z0-9_]/.test(next);
  }

  value(type: SqlType): TypedValue {
    this.ws();
    // A value whose column type was printed `ARRAY<>` (or any type) may carry
    // its own type prefix: `ARRAY<INT64>[1]`, `ARRAY<INT64>(NULL)`.
    if (/^(ARRAY|STRUCT|RANGE)</.test(this.s.slice(this.i, this.i + 7))) {
      const t = parseTypeAt(this.s, this.i);
      this.i = t.end;
      this.ws();
      if (this.startsWith('(NULL)')) {
        this.i += 6;
        return { type: t.type, value: NULL };
      }
      return this.value(t.type);
    }
    // A JSON value prints `null` for JSON null; only upper-case NULL is SQL NULL there.
    const isJson = type.kind === 'scalar' && type.name === 'JSON';
    if (this.startsWithWord('NULL') && (!isJson || this.s.startsWith('NULL', this.i))) {
      this.i += 4;
      return { type, value: NULL };
    }
    switch (type.kind) {
      case 'array': return this.array(type);
      case 'struct': {
        const r = this.struct(type.fields.map((f) => f.type));
        return { type: { kind: 'struct', fields: type.fields.map((f, i) => ({ name: f.name, type: r.types[i]! })) }, value: r.value };
      }
      case 'range': return { type, value: this.range(type.element) };
      case 'other': return { type, value: { k: 'raw', v: this.rawToken() } };
      case 'scalar': return { type, value: this.scalar(type.name) };
    }
  }

  array(type: { kind: 'array'; element: SqlType | null }): TypedValue {
    if (this.s[this.i] !== '[') this.fail('[ expected');
    this.i++;
    this.ws();
    let ordered = true;
    if (this.startsWith('unknown order:')) {
      ordered = false;
      this.i += 'unknown order:'.length;
    } else if (this.startsWith('known order:')) {
      this.i += 'known order:'.length;
    }
    const elems: Val[] = [];
    let elemType = type.element;
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return { type, value: { k: 'array', elems, ordered } };
    }
    for (;;) {
      if (!elemType) this.fail('element type of ARRAY<> unknown');
      const r = this.value(elemType);
      elemType = mergeType(elemType, r.type);
      elems.push(r.value);
      this.ws();
      if (this.s[this.i] === ',') { this.i++; continue; }
      if (this.s[this.i] === ']') { this.i++; break; }
      this.fail(', or ] expected in array');
    }
    return { type: { kind: 'array', element: elemType }, value: { k: 'array', elems, ordered } };
  }

  struct(types: SqlType[]): { value: Val; types: SqlType[] } {
    if (this.s[this.i] !== '{') this.fail('{ expected');
    this.i++;
    const fields: Val[] = [];
    const refined: SqlType[] = [];
    for (let n = 0; n < types.length; n++) {
      const r = this.value(types[n]!);
      fields.push(r.value);
      refined.push(mergeType(types[n]!, r.type));
      this.ws();
      if (n < types.length - 1) {
        if (this.s[this.i] !== ',') this.fail(', expected in struct');
        this.i++;
      }
    }
    this.ws();
    if (this.s[this.i] !== '}') this.fail('} expected');
    this.i++;
    return { value: { k: 'struct', fields }, types: refined };
  }

  range(element: SqlType): Val {
    if (this.s[this.i] !== '[') this.fail('[ expected for RANGE');
    this.i++;
    const start = this.value(element).value;
    this.ws();
    if (this.s[this.i] !== ',') this.fail(', expected in RANGE');
    this.i++;
    const end = this.value(element).value;
    this.ws();
    if (this.s[this.i] !== ')') this.fail(') expected in RANGE');
    this.i++;
    return { k: 'range', start, end };
  }

  /** Token up to the next top-level `,` `}` `]` or `)` (for PROTO/ENUM/UUID). */
  rawToken(): string {
    const start = this.i;
    if (this.s[this.i] === '{') {
      // proto text format printed in braces
      let depth = 0;
      for (; this.i < this.s.length; this.i++) {
        const c = this.s[this.i];
        if (c === '"') { this.i = this.skipQuoted(this.i); this.i--; continue; }
        if (c === '{') depth++;
        else if (c === '}') { depth--; if (depth === 0) { this.i++; break; } }
      }
      return this.s.slice(start, this.i);
    }
    while (this.i < this.s.length && !/[,}\])\n]/.test(this.s[this.i]!)) this.i++;
    return this.s.slice(start, this.i).trim();
  }

  skipQuoted(i: number): number {
    const q = this.s[i];
    i++;
    while (i < this.s.length && this.s[i] !== q) {
      if (this.s[i] === '\\') i++;
      i++;
    }
    return i + 1;
  }

  /** Anchored match at the cursor (sticky regex: no copy of the rest of the text). */
  match(re: RegExp): RegExpExecArray | null {
    const key = re.source + '/' + re.flags;
    let sticky = STICKY.get(key);
    if (!sticky) {
      sticky = new RegExp(re.source, re.flags.includes('y') ? re.flags : re.flags + 'y');
      STICKY.set(key, sticky);
    }
    sticky.lastIndex = this.i;
    return sticky.exec(this.s);
  }

  scalar(name: string): Val {
    let m: RegExpExecArray | null;
    switch (name) {
      case 'INT64': case 'INT32': case 'UINT32': case 'UINT64': {
        m = this.match(/-?\d+/);
        if (!m) this.fail(`${name} expected`);
        this.i += m[0].length;
        return { k: 'int', v: BigInt(m[0]) };
      }
      case 'DOUBLE': case 'FLOAT': {
        m = this.match(/(-?inf|nan|-?\d+(\.\d*)?(e[+-]?\d+)?)/i);
        if (!m) this.fail(`${name} expected`);
        this.i += m[0].length;
        // A 32-bit FLOAT of the reference is float32-rounded; BigQuery keeps
        // such columns as FLOAT64, so compare at float32 precision.
        return name === 'FLOAT' ? { k: 'float', v: parseFloatLiteral(m[0]), rel: 2 ** -22 } : { k: 'float', v: parseFloatLiteral(m[0]) };
      }
      case 'BOOL': {
        m = this.match(/(true|false)\b/);
        if (!m) this.fail('BOOL expected');
        this.i += m[0].length;
        return { k: 'bool', v: m[0] === 'true' };
      }
      case 'STRING': {
        if (this.s[this.i] !== '"' && this.s[this.i] !== "'") this.fail('string literal expected');
        const end = this.skipQuoted(this.i);
        const body = this.s.slice(this.i + 1, end - 1);
        this.i = end;
        return { k: 'string', v: Buffer.from(unescapeBytes(body)).toString('utf8') };
      }
      case 'BYTES': {
        if (!(this.s[this.i] === 'b' && (this.s[this.i + 1] === '"' || this.s[this.i + 1] === "'"))) this.fail('bytes literal expected');
        const end = this.skipQuoted(this.i + 1);
        const body = this.s.slice(this.i + 2, end - 1);
        this.i = end;
        return { k: 'bytes', v: Buffer.from(unescapeBytes(body)).toString('base64') };
      }
      case 'NUMERIC': case 'BIGNUMERIC': {
        m = this.match(/-?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?/i);
        if (!m) this.fail(`${name} expected`);
        this.i += m[0].length;
        return { k: 'decimal', v: canonicalDecimal(m[0]) };
      }
      case 'DATE': {
        m = this.match(/-?\d{1,5}-\d{1,2}-\d{1,2}/);
        if (!m) this.fail('DATE expected');
        this.i += m[0].length;
        return { k: 'civil', type: 'DATE', v: canonicalCivil('DATE', m[0]) };
      }
      case 'DATETIME': {
        m = this.match(/\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}:\d{2}(\.\d+)?/);
        if (!m) this.fail('DATETIME expected');
        this.i += m[0].length;
        return { k: 'civil', type: 'DATETIME', v: canonicalCivil('DATETIME', m[0]) };
      }
      case 'TIME': {
        m = this.match(/\d{1,2}:\d{2}:\d{2}(\.\d+)?/);
        if (!m) this.fail('TIME expected');
        this.i += m[0].length;
        return { k: 'civil', type: 'TIME', v: canonicalCivil('TIME', m[0]) };
      }
      case 'TIMESTAMP': {
        m = this.match(/\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?([+-]\d{2}(:?\d{2})?|Z| UTC)?/);
        if (!m) this.fail('TIMESTAMP expected');
        this.i += m[0].length;
        const micros = parseTimestampText(m[0]);
        if (micros === null) this.fail('bad TIMESTAMP');
        return { k: 'timestamp', micros };
      }
      case 'JSON': {
        const end = scanJson(this.s, this.i);
        const text = this.s.slice(this.i, end);
        this.i = end;
        try {
          return { k: 'json', v: JSON.parse(text) };
        } catch {
          this.fail('bad JSON value');
        }
      }
      // eslint-disable-next-line no-fallthrough
      case 'INTERVAL': {
        m = this.match(/-?\d+-\d+ -?\d+ -?\d+:\d+:\d+(\.\d+)?/);
        if (!m) this.fail('INTERVAL expected');
        this.i += m[0].length;
        const iv = parseIntervalText(m[0]);
        if (!iv) this.fail('bad INTERVAL');
        return iv;
      }
      case 'GEOGRAPHY': {
        m = this.match(/[A-Z]+\s*(EMPTY|\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))/);
        if (!m) this.fail('GEOGRAPHY expected');
        this.i += m[0].length;
        return { k: 'geography', v: canonicalWkt(m[0]) };
      }
      case 'UUID':
      default:
        return { k: 'raw', v: this.rawToken() };
    }
  }
}

/**
 * Fills elided element types (`ARRAY<>` in a printed header) of `a` from the
 * type a value carried (`b`).
 */
export function mergeType(a: SqlType, b: SqlType): SqlType {
  if (a.kind === 'array') {
    if (b.kind !== 'array') return a;
    if (a.element === null) return b;
    return b.element ? { kind: 'array', element: mergeType(a.element, b.element) } : a;
  }
  if (a.kind === 'struct' && b.kind === 'struct' && a.fields.length === b.fields.length) {
    return { kind: 'struct', fields: a.fields.map((f, i) => ({ name: f.name, type: mergeType(f.type, b.fields[i]!.type) })) };
  }
  return a;
}

/** End offset of one JSON value starting at `i` (balanced brackets, strings). */
function scanJson(s: string, i: number): number {
  const c = s[i];
  if (c === '{' || c === '[') {
    let depth = 0;
    for (; i < s.length; i++) {
      const ch = s[i];
      if (ch === '"') {
        i++;
        while (i < s.length && s[i] !== '"') { if (s[i] === '\\') i++; i++; }
        continue;
      }
      if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') { depth--; if (depth === 0) return i + 1; }
    }
    return i;
  }
  if (c === '"') {
    i++;
    while (i < s.length && s[i] !== '"') { if (s[i] === '\\') i++; i++; }
    return i + 1;
  }
  const m = /^(true|false|null|-?\d+(\.\d+)?([eE][+-]?\d+)?)/.exec(s.slice(i));
  return i + (m ? m[0].length : 0);
}

export function parseFloatLiteral(t: string): number {
  const l = t.toLowerCase();
  if (l === 'nan' || l === '-nan' || l === '+nan') return NaN;
  if (l === 'inf' || l === '+inf' || l === 'infinity' || l === '+infinity') return Infinity;
  if (l === '-inf' || l === '-infinity') return -Infinity;
  return Number(t);
}

/** C-style escapes as printed by the reference implementation, to raw bytes. */
export function unescapeBytes(body: string): Uint8Array {
  const out: number[] = [];
  const utf8 = (s: string) => { for (const b of Buffer.from(s, 'utf8')) out.push(b); };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      const cp = body.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      utf8(ch);
      i += ch.length - 1;
      continue;
    }
    const n = body[++i];
    switch (n) {
      case 'n': out.push(10); break;
      case 't': out.push(9); break;
      case 'r': out.push(13); break;
      case 'a': out.push(7); break;
      case 'b': out.push(8); break;
      case 'f': out.push(12); break;
      case 'v': out.push(11); break;
      case '\\': out.push(92); break;
      case '"': out.push(34); break;
      case "'": out.push(39); break;
      case '`': out.push(96); break;
      case '?': out.push(63); break;
      case 'x': case 'X': {
        const h = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 1))![0];
        out.push(parseInt(h, 16));
        i += h.length;
        break;
      }
      case 'u': {
        utf8(String.fromCodePoint(parseInt(body.slice(i + 1, i + 5), 16)));
        i += 4;
        break;
      }
      case 'U': {
        utf8(String.fromCodePoint(parseInt(body.slice(i + 1, i + 9), 16)));
        i += 8;
        break;
      }
      default: {
        const o = /^[0-7]{1,3}/.exec(body.slice(i));
        if (o) {
          out.push(parseInt(o[0], 8) & 0xff);
          i += o[0].length - 1;
        } else if (n !== undefined) {
          utf8(n);
        }
      }
    }
  }
  return Uint8Array.from(out);
}

/** Canonical decimal text: plain notation, no leading '+', trimmed zeros, "-0" → "0". */
export function canonicalDecimal(text: string): string {
  let t = text.trim();
  let neg = false;
  if (t.startsWith('-')) { neg = true; t = t.slice(1); } else if (t.startsWith('+')) t = t.slice(1);
  let exp = 0;
  const e = /[eE]([+-]?\d+)$/.exec(t);
  if (e) { exp = parseInt(e[1]!, 10); t = t.slice(0, e.index); }
  let [ip = '', fp = ''] = t.split('.');
  // shift the decimal point by exp
  if (exp > 0) {
    fp = fp.padEnd(exp, '0');
    ip += fp.slice(0, exp);
    fp = fp.slice(exp);
  } else if (exp < 0) {
    ip = ip.padStart(-exp + 1, '0');
    fp = ip.slice(ip.length + exp) + fp;
    ip = ip.slice(0, ip.length + exp);
  }
  ip = ip.replace(/^0+/, '') || '0';
  fp = fp.replace(/0+$/, '');
  const body = fp ? `${ip}.${fp}` : ip;
  return neg && body !== '0' ? `-${body}` : body;
}

/** DATE/DATETIME/TIME canonical: zero-padded, space separator, fraction without trailing zeros. */
export function canonicalCivil(type: 'DATE' | 'DATETIME' | 'TIME', text: string): string {
  const t = text.trim().replace('T', ' ');
  const trimFrac = (s: string) => s.replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
  const pad = (s: string, n: number) => s.padStart(n, '0');
  const date = (d: string) => {
    const m = /^(-?)(\d+)-(\d+)-(\d+)$/.exec(d);
    return m ? `${m[1]}${pad(m[2]!, 4)}-${pad(m[3]!, 2)}-${pad(m[4]!, 2)}` : d;
  };
  const time = (s: string) => {
    const m = /^(\d+):(\d+):(\d+)(\.\d+)?$/.exec(s);
    return m ? trimFrac(`${pad(m[1]!, 2)}:${pad(m[2]!, 2)}:${pad(m[3]!, 2)}${m[4] ?? ''}`) : s;
  };
  if (type === 'DATE') return date(t);
  if (type === 'TIME') return time(t);
  const [d = '', tm = ''] = t.split(/\s+/);
  return `${date(d)} ${time(tm)}`;
}

const DAY_MICROS = 86_400_000_000n;

function daysFromCivil(y: number, m: number, d: number): number {
  // Howard Hinnant's days_from_civil: exact for the whole proleptic Gregorian range.
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/**
 * Parses a TIMESTAMP text to epoch microseconds: `YYYY-MM-DD[ T]HH:MM:SS[.f][zone]`
 * with zone `+HH`, `+HH:MM`, `+HHMM`, `Z`, ` UTC` or none (UTC), or a date only.
 */
export function parseTimestampText(text: string): bigint | null {
  const m = /^(\d{1,4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|z|UTC|[+-]\d{1,2}(?::?\d{2})?)?$/.exec(text.trim());
  if (!m) return null;
  const days = daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
  const secs = Number(m[4] ?? 0) * 3600 + Number(m[5] ?? 0) * 60 + Number(m[6] ?? 0);
  const frac = BigInt((m[7] ?? '').padEnd(6, '0').slice(0, 6) || '0');
  let offsetSecs = 0;
  const z = m[8];
  if (z && z !== 'Z' && z !== 'z' && z !== 'UTC') {
    const zm = /^([+-])(\d{1,2}):?(\d{2})?$/.exec(z)!;
    offsetSecs = (zm[1] === '-' ? -1 : 1) * (Number(zm[2]) * 3600 + Number(zm[3] ?? 0) * 60);
  }
  return BigInt(days) * DAY_MICROS + BigInt(secs - offsetSecs) * 1_000_000n + frac;
}

export function formatTimestampMicros(micros: bigint): string {
  const days = micros >= 0n ? micros / DAY_MICROS : -((-micros + DAY_MICROS - 1n) / DAY_MICROS);
  const rem = micros - days * DAY_MICROS;
  const d = new Date(Number(days) * 86_400_000);
  const ymd = `${String(d.getUTCFullYear()).padStart(4, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-${String(d.getUTCDate()).padStart(2, '0')}`;
  const s = Number(rem / 1_000_000n);
  const us = Number(rem % 1_000_000n);
  const hms = `${String(Math.floor(s / 3600)).padStart(2, '0')}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
  return `${ymd} ${hms}${us ? '.' + String(us).padStart(6, '0').replace(/0+$/, '') : ''}+00`;
}

/**
 * INTERVAL text in the canonical `Y-M D H:M:S[.f]` form (each part may carry a
 * sign) or ISO 8601 `P..Y..M..DT..H..M..S`.
 */
export function parseIntervalText(text: string): Val | null {
  const t = text.trim();
  const m = /^(-?)(\d+)-(\d+) (-?\d+) (-?)(\d+):(\d+):(\d+)(?:\.(\d{1,9}))?$/.exec(t);
  if (m) {
    const ym = BigInt(m[2]!) * 12n + BigInt(m[3]!);
    const months = m[1] === '-' ? -ym : ym;
    const days = BigInt(m[4]!);
    const nsAbs = (BigInt(m[6]!) * 3600n + BigInt(m[7]!) * 60n + BigInt(m[8]!)) * 1_000_000_000n + BigInt((m[9] ?? '').padEnd(9, '0') || '0');
    return { k: 'interval', months, days, nanos: m[5] === '-' ? -nsAbs : nsAbs };
  }
  const iso = /^(-?)P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)W)?(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+)(?:\.(\d{1,9}))?S)?)?$/.exec(t);
  if (iso) {
    const n = (s: string | undefined) => BigInt(s ?? 0);
    const sign = iso[1] === '-' ? -1n : 1n;
    const months = n(iso[2]) * 12n + n(iso[3]);
    const days = n(iso[4]) * 7n + n(iso[5]);
    const secs = n(iso[8]);
    let frac = BigInt((iso[9] ?? '').padEnd(9, '0') || '0');
    if ((iso[8] ?? '').startsWith('-')) frac = -frac;
    const nanos = (n(iso[6]) * 3600n + n(iso[7]) * 60n + secs) * 1_000_000_000n + frac;
    return { k: 'interval', months: sign * months, days: sign * days, nanos: sign * nanos };
  }
  return null;
}

export function canonicalWkt(text: string): string {
  return text.trim().replace(/\s+/g, ' ').replace(/\s*([(),])\s*/g, '$1').replace(/,/g, ', ').toUpperCase();
}

/** Short human rendering of a value for mismatch messages. */
export function showVal(v: Val): string {
  switch (v.k) {
    case 'null': return 'NULL';
    case 'int': return v.v.toString();
    case 'float': return Number.isNaN(v.v) ? 'nan' : String(v.v);
    case 'bool': return String(v.v);
    case 'string': return JSON.stringify(v.v);
    case 'bytes': return `b64:${v.v}`;
    case 'decimal': return v.v;
    case 'civil': return v.v;
    case 'timestamp': return formatTimestampMicros(v.micros);
    case 'json': return `JSON ${JSON.stringify(v.v)}`;
    case 'interval': return `INTERVAL(${v.months}m ${v.days}d ${v.nanos}ns)`;
    case 'range': return `[${showVal(v.start)}, ${showVal(v.end)})`;
    case 'array': return `[${v.ordered ? '' : 'unordered:'}${v.elems.map(showVal).join(', ')}]`;
    case 'struct': return `{${v.fields.map(showVal).join(', ')}}`;
    case 'geography': return v.v;
    case 'raw': return v.v;
  }
}
