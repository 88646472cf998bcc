// CAST / SAFE_CAST between every GoogleSQL type pair, with the service's
// rules and messages. The executor calls castVector for each CastExpr.
import { QueryError } from '../types/errors.js';
import { T, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import { Decimal, Interval, RangeValue, type Value } from '../types/values.js';
import { getValue, vectorFromValues, type Vector } from '../types/vector.js';
import { fitParams, ParamRefusal } from '../types/table-values.js';
import {
  civilToUtc,
  formatDate,
  formatDatetime,
  formatTime,
  formatTimestamp,
  joinMicros,
  MAX_TS,
  MIN_TS,
  parseDateString,
  parseDatetimeString,
  parseTimeString,
  parseTimestampString,
  splitMicros,
  utcToCivil,
} from './civil.js';
import { formatDouble } from './format-number.js';
import { formatInterval, parseIntervalString } from './interval.js';
import { fitDecimal, formatDecimal, parseDecimal } from './numeric.js';
import { castWords } from './decimal-kernels.js';
import type { EvalContext } from './registry.js';
import { fail } from './vec.js';
import { castWithFormat } from './cast-format.js';
import { formatTimestampPicos, parseTimestampPicosString } from './timestamp-picos.js';
import { microsToPicos, picosToMicros } from '../types/picos.js';

export interface CastOptions {
  readonly safe: boolean;
  readonly format?: string;
  readonly timeZone?: string;
}

// ignoreBOM keeps a leading U+FEFF: it is a character of the value, not a byte-order mark to drop.
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8Encoder = new TextEncoder();

export function decodeUtf8(b: Uint8Array): string | undefined {
  try {
    return utf8Decoder.decode(b);
  } catch {
    return undefined;
  }
}
export function encodeUtf8(s: string): Uint8Array {
  return utf8Encoder.encode(s);
}

/** Parses an INT64 the way CAST does: optional sign, decimal or 0x hex, surrounding spaces. */
export function parseInt64(s: string): bigint | undefined {
  const m = /^\s*([+-]?)(?:0[xX]([0-9a-fA-F]+)|(\d+))\s*$/.exec(s);
  if (!m) return undefined;
  let v = m[2] !== undefined ? BigInt('0x' + m[2]) : BigInt(m[3]!);
  if (m[1] === '-') v = -v;
  if (v > 9223372036854775807n || v < -9223372036854775808n) return undefined;
  return v;
}

/**
 * STRING -> INT64 for a batch whose every non-NULL value is plain decimal
 * (`-?[0-9]{1,15}`: exact as a double, what `parseInt64` reads the same way),
 * as doubles; null when one is not (sign '+', spaces, hex, longer: the
 * general path decides, raising its error where it must).
 */
export function decimalInt64s(d: readonly Value[], nulls: Uint8Array | null, n: number): Float64Array | null {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const s = d[i] as string;
    const len = s.length;
    let j = len > 0 && s.charCodeAt(0) === 45 ? 1 : 0;
    if (len === j || len - j > 15) return null;
    let x = 0;
    for (; j < len; j++) {
      const c = s.charCodeAt(j) - 48;
      if (c < 0 || c > 9) return null;
      x = x * 10 + c;
    }
    // -0 reads as 0, as the BigInt does.
    out[i] = s.charCodeAt(0) === 45 && x !== 0 ? -x : x;
  }
  return out;
}

export function parseFloat64(s: string): number | undefined {
  const t = s.trim();
  if (/^[+-]?(inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(t)) return NaN;
  // Hexadecimal text is read as C's strtod reads it (0x1.8p3), as the reference implementation does.
  const hex = /^([+-]?)0x([0-9a-f]*)(?:\.([0-9a-f]*))?(?:p([+-]?\d+))?$/i.exec(t);
  if (hex) {
    const [, sign, int = '', frac = '', exp] = hex;
    if (!int && !frac) return undefined;
    const digits = int + frac;
    const v = (digits ? Number(BigInt('0x' + digits)) : 0) * 2 ** (Number(exp ?? 0) - 4 * frac.length);
    return sign === '-' ? -v : v;
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return undefined;
  return Number(t);
}

/** FLOAT64/NUMERIC -> INT64 rounding: half away from zero. */
function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** True when a type or any nested element/field carries parameters (STRING(10), NUMERIC(5,2)). */
function hasParams(t: SqlType): boolean {
  if (t.kind === 'ARRAY') return hasParams(t.element);
  if (t.kind === 'STRUCT') return t.fields.some((f) => hasParams(f.type));
  return !!(t as { params?: readonly number[] }).params?.length;
}

/** The exact decimal value of a double (CAST(double AS NUMERIC) rounds the binary value, not its shortest text). */
export function exactDecimalFromDouble(x: number): Decimal {
  if (x === 0 || !Number.isFinite(x)) return new Decimal(x);
  const buf = new DataView(new ArrayBuffer(8));
  buf.setFloat64(0, x);
  const hi = buf.getUint32(0);
  const lo = buf.getUint32(4);
  const sign = hi >>> 31 ? -1 : 1;
  const exp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (exp === 0) e = -1074;
  else {
    mant |= 1n << 52n;
    e = exp - 1075;
  }
  const m = new Decimal(mant.toString());
  const r = e >= 0 ? m.times(new Decimal(2).pow(e)) : m.div(new Decimal(2).pow(-e));
  return sign < 0 ? r.neg() : r;
}

function checkParams(v: Value, to: SqlType): Value {
  const p = (to as { params?: readonly number[] }).params;
  if (!p || v === null) return v;
  const r = fitParams(to.kind, p, v);
  if (r instanceof ParamRefusal) fail(r.message);
  return r;
}

/** One value; throws QueryError (even for SAFE casts — castVector catches). */
export function castValue(x: Value, from: SqlType, to: SqlType, opts: CastOptions, ctx: EvalContext): Value {
  if (x === null) return null;
  if (opts.format !== undefined) return checkParams(castWithFormat(x, from, to, opts.format, opts.timeZone ?? ctx.timeZone, ctx.nowMicros), to);
  if (typeEquals(from, to) && !hasParams(to)) return x;
  return checkParams(castInner(x, from, to, opts, ctx), to);
}

function castInner(x: Value, from: SqlType, to: SqlType, opts: CastOptions, ctx: EvalContext): Value {
  const zone = opts.timeZone ?? ctx.timeZone;
  const invalid = (): never => fail(`Invalid cast from ${typeToSql(from)} to ${typeToSql(to)}`);
  // TIMESTAMP(12) <-> anything but STRING goes through the microsecond TIMESTAMP (digits past the sixth dropped).
  if (from.kind === 'TIMESTAMP_PICOS' && to.kind !== 'STRING' && to.kind !== 'TIMESTAMP_PICOS') return castInner(picosToMicros(x as bigint), T.TIMESTAMP, to, opts, ctx);
  if (to.kind === 'TIMESTAMP_PICOS' && from.kind !== 'STRING' && from.kind !== 'TIMESTAMP_PICOS') return microsToPicos(castInner(x, from, T.TIMESTAMP, opts, ctx) as bigint);
  switch (to.kind) {
    case 'INT64':
      switch (from.kind) {
        case 'INT64':
          return x;
        case 'BOOL':
          return x ? 1n : 0n;
        case 'FLOAT64': {
          const f = x as number;
          if (!Number.isFinite(f)) fail(`Illegal conversion of non-finite floating point number to an integer: ${formatDouble(f)}`);
          const r = roundHalfAway(f);
          if (r >= 9223372036854775808 || r < -9223372036854775808) fail(`int64 out of range: ${formatDouble(f)}`);
          return BigInt(r);
        }
        case 'NUMERIC':
        case 'BIGNUMERIC': {
          const r = (x as Decimal).toDecimalPlaces(0, Decimal.ROUND_HALF_UP);
          const b = BigInt(r.toFixed());
          if (b > 9223372036854775807n || b < -9223372036854775808n) fail(`int64 out of range: ${formatDecimal(x as Decimal)}`);
          return b;
        }
        case 'STRING': {
          const v = parseInt64(x as string);
          if (v === undefined) fail(`Bad int64 value: ${x as string}`);
          return v;
        }
      }
      return invalid();
    case 'FLOAT64':
      switch (from.kind) {
        case 'INT64':
          return Number(x as bigint);
        case 'FLOAT64':
          return x;
        case 'NUMERIC':
        case 'BIGNUMERIC':
          return (x as Decimal).toNumber();
        case 'STRING': {
          const v = parseFloat64(x as string);
          if (v === undefined) fail(`Bad double value: ${x as string}`);
          return v;
        }
      }
      return invalid();
    case 'NUMERIC':
    case 'BIGNUMERIC': {
      const kind = to.kind;
      let d: Decimal | undefined;
      switch (from.kind) {
        case 'INT64':
          d = new Decimal((x as bigint).toString());
          break;
        case 'FLOAT64': {
          const f = x as number;
          if (!Number.isFinite(f)) fail(`Illegal conversion of non-finite floating point number to ${kind === 'NUMERIC' ? 'numeric' : 'bignumeric'}: ${formatDouble(f)}`);
          d = exactDecimalFromDouble(f);
          const r = fitDecimal(d, kind);
          if (r === undefined) fail(`${kind === 'NUMERIC' ? 'numeric' : 'bignumeric'} out of range: ${formatDouble(f)}`);
          return r;
        }
        case 'NUMERIC':
        case 'BIGNUMERIC':
          d = x as Decimal;
          break;
        case 'STRING': {
          d = parseDecimal(x as string);
          if (d === undefined) fail(`Invalid ${kind} value: ${x as string}`);
          const r = fitDecimal(d, kind);
          if (r === undefined) fail(`Invalid ${kind} value: ${x as string}`);
          return r;
        }
        default:
          return invalid();
      }
      const r = fitDecimal(d, kind);
      // Only BIGNUMERIC -> NUMERIC gets here (worded as the reference words it).
      if (r === undefined) fail(`${kind === 'NUMERIC' ? 'numeric' : 'bignumeric'} out of range: ${formatDecimal(d)}`);
      return r;
    }
    case 'BOOL':
      switch (from.kind) {
        case 'BOOL':
          return x;
        case 'INT64':
          return (x as bigint) !== 0n;
        case 'STRING': {
          // Only 'true' / 'false' in any case; no surrounding spaces (the reference's "Bad bool value").
          const s = (x as string).toLowerCase();
          if (s === 'true') return true;
          if (s === 'false') return false;
          fail(`Bad bool value: ${x as string}`);
        }
      }
      return invalid();
    case 'STRING':
      return toStringValue(x, from, zone, invalid);
    case 'BYTES':
      if (from.kind === 'STRING') return encodeUtf8(x as string);
      if (from.kind === 'BYTES') return x;
      return invalid();
    case 'DATE':
      switch (from.kind) {
        case 'DATE':
          return x;
        case 'STRING': {
          const d = parseDateString(x as string);
          if (d === undefined) fail(`Invalid date: '${x as string}'`);
          return d;
        }
        case 'DATETIME':
          return splitMicros(x as bigint)[0];
        case 'TIMESTAMP':
          return splitMicros(utcToCivil(x as bigint, zone))[0];
      }
      return invalid();
    case 'TIME':
      switch (from.kind) {
        case 'TIME':
          return x;
        case 'STRING': {
          const t = parseTimeString(x as string);
          if (t === undefined) fail(`Invalid time string "${x as string}"`);
          return t;
        }
        case 'DATETIME':
          return splitMicros(x as bigint)[1];
        case 'TIMESTAMP':
          return splitMicros(utcToCivil(x as bigint, zone))[1];
      }
      return invalid();
    case 'DATETIME':
      switch (from.kind) {
        case 'DATETIME':
          return x;
        case 'STRING': {
          const t = parseDatetimeString(x as string);
          if (t === undefined) fail(`Invalid datetime string "${x as string}"`);
          return t;
        }
        case 'DATE':
          return joinMicros(x as number, 0);
        case 'TIMESTAMP':
          return utcToCivil(x as bigint, zone);
      }
      return invalid();
    case 'TIMESTAMP':
      switch (from.kind) {
        case 'TIMESTAMP':
          return x;
        case 'STRING': {
          const t = parseTimestampString(x as string, zone);
          if (t === undefined) fail(`Invalid timestamp: '${x as string}'`);
          return t;
        }
        case 'DATE': {
          const r = civilToUtc(joinMicros(x as number, 0), zone);
          if (r < MIN_TS || r > MAX_TS) fail(`Invalid timestamp`);
          return r;
        }
        case 'DATETIME': {
          const r = civilToUtc(x as bigint, zone);
          if (r < MIN_TS || r > MAX_TS) fail(`Cannot convert DATETIME ${formatDatetime(x as bigint)} to TIMESTAMP`);
          return r;
        }
      }
      return invalid();
    case 'TIMESTAMP_PICOS': {
      if (from.kind === 'TIMESTAMP_PICOS') return x;
      const t = parseTimestampPicosString(x as string, zone);
      if (t === undefined) fail(`Invalid timestamp: '${x as string}'`);
      return t;
    }
    case 'INTERVAL':
      if (from.kind === 'STRING') {
        const iv = parseIntervalString(x as string);
        if (iv === undefined) fail(`Invalid INTERVAL value '${x as string}'`);
        return iv;
      }
      return invalid();
    case 'ARRAY': {
      if (from.kind !== 'ARRAY') return invalid();
      return (x as Value[]).map((e) => (e === null ? null : castValue(e, from.element, to.element, { safe: false, timeZone: opts.timeZone }, ctx)));
    }
    case 'STRUCT': {
      if (from.kind !== 'STRUCT' || from.fields.length !== to.fields.length) return invalid();
      // SAFE_CAST of a STRUCT gives NULL for each field that fails, not for the whole STRUCT (the reference's
      // field-wise cast); an ARRAY element that fails still fails its whole ARRAY.
      const field = (e: Value, i: number): Value => castValue(e, from.fields[i]!.type, to.fields[i]!.type, { safe: opts.safe, timeZone: opts.timeZone }, ctx);
      if (!opts.safe) return (x as Value[]).map(field);
      return (x as Value[]).map((e, i) => {
        try {
          return field(e, i);
        } catch (err) {
          if (err instanceof QueryError) return null;
          throw err;
        }
      });
    }
    case 'RANGE': {
      if (from.kind === 'STRING') return parseRangeString(x as string, to.element, ctx);
      if (from.kind === 'RANGE') {
        const r = x as RangeValue;
        const c = (v: Value) => (v === null ? null : castValue(v, from.element, to.element, { safe: false }, ctx));
        return new RangeValue(c(r.start), c(r.end));
      }
      return invalid();
    }
    case 'JSON':
      if (from.kind === 'JSON') return x;
      return invalid();
  }
  return invalid();
}

function toStringValue(x: Value, from: SqlType, zone: string, invalid: () => never): Value {
  switch (from.kind) {
    case 'STRING':
      return x;
    case 'INT64':
      return (x as bigint).toString();
    case 'FLOAT64':
      // the service never signs a zero here: CAST(-0.0 AS STRING) is '0'
      return formatDouble(Object.is(x, -0) ? 0 : (x as number));
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return formatDecimal(x as Decimal);
    case 'BOOL':
      return x ? 'true' : 'false';
    case 'BYTES': {
      const s = decodeUtf8(x as Uint8Array);
      if (s === undefined) fail('Invalid cast of bytes to UTF8 string');
      return s;
    }
    case 'DATE':
      return formatDate(x as number);
    case 'TIME':
      return formatTime(x as number);
    case 'DATETIME':
      return formatDatetime(x as bigint);
    case 'TIMESTAMP':
      return formatTimestamp(x as bigint, zone);
    case 'TIMESTAMP_PICOS':
      return formatTimestampPicos(x as bigint, zone);
    case 'INTERVAL':
      return formatInterval(x as Interval);
    case 'RANGE': {
      const r = x as RangeValue;
      const el = (from as { element: SqlType }).element;
      const f = (v: Value) => (v === null ? 'UNBOUNDED' : (toStringValue(v, el, zone, invalid) as string));
      return `[${f(r.start)}, ${f(r.end)})`;
    }
    case 'JSON':
      return invalid();
  }
  return invalid();
}

/**
 * A range's text split as the reference splits it (functions/range.cc, strict formatting): exactly
 * "[START, END)", no spaces around either part; UNBOUNDED or NULL (any case) is an unbounded end.
 */
export function rangeParts(s: string): [string | null, string | null] {
  const head = 'Failed to parse range: range must be formatted exactly as [START, END)';
  if (!s.startsWith('[') || !s.endsWith(')')) fail(`${head} (found ${s})`);
  const parts = s.slice(1, -1).split(',');
  if (parts.length !== 2 || !parts[1]!.startsWith(' ')) fail(`${head} with two parts, START and END, divided with ", "`);
  const [start, end] = [parts[0]!.trim(), parts[1]!.trim()];
  if (start.length !== parts[0]!.length) fail(`${head} with START having no leading or trailing spaces, but found: "${parts[0]}"`);
  if (end.length + 1 !== parts[1]!.length) fail(`${head} with END having no leading or trailing spaces, but found: "${parts[1]}"`);
  const bound = (t: string) => (/^(unbounded|null)$/i.test(t) ? null : t);
  return [bound(start), bound(end)];
}

/** Start before end, else the reference's error (the RANGE constructor words it alike). */
export function checkRangeOrder(start: Value, end: Value): void {
  if (start !== null && end !== null && compareScalar(start, end) >= 0) fail('Range start element must be smaller than range end element');
}

export function parseRangeString(s: string, el: SqlType, ctx: EvalContext): RangeValue {
  const [a, b] = rangeParts(s);
  const p = (t: string | null): Value => (t === null ? null : castValue(t, T.STRING, el, { safe: false }, ctx));
  const start = p(a);
  const end = p(b);
  checkRangeOrder(start, end);
  return new RangeValue(start, end);
}

function compareScalar(a: Value, b: Value): number {
  return (a as number | bigint) < (b as number | bigint) ? -1 : (a as number | bigint) > (b as number | bigint) ? 1 : 0;
}

/** Vectorized CAST: typed fast paths for the common numeric pairs, else per value. */
export function castVector(v: Vector, to: SqlType, opts: CastOptions, ctx: EvalContext): Vector {
  const n = v.length;
  if (typeEquals(v.type, to) && opts.format === undefined && !hasParams(to)) return v;
  const from = v.type;
  // INT64 (double layout) -> FLOAT64: a copy.
  if (to.kind === 'FLOAT64' && from.kind === 'INT64' && v.data instanceof Float64Array && opts.format === undefined) {
    return { type: to, length: n, data: v.data.slice(0, n), nulls: v.nulls };
  }
  if (to.kind === 'INT64' && from.kind === 'FLOAT64' && opts.format === undefined) {
    const d = v.data as Float64Array;
    const out = new Float64Array(n);
    let ok = true;
    for (let i = 0; i < n && ok; i++) {
      if (v.nulls !== null && v.nulls[i] === 1) continue;
      const r = roundHalfAway(d[i]!);
      if (!(r < 9007199254740992 && r > -9007199254740992)) ok = false;
      else out[i] = r === 0 ? 0 : r;
    }
    if (ok) return { type: to, length: n, data: out, nulls: v.nulls };
  }
  if (opts.format === undefined && !hasParams(to) && (from.kind === 'NUMERIC' || from.kind === 'BIGNUMERIC' || to.kind === 'NUMERIC' || to.kind === 'BIGNUMERIC')) {
    // On the words where both sides allow it (decimal-kernels.ts); null leaves the value-by-value cast, with its errors.
    const w = castWords(v, to, n, opts.safe === true);
    if (w !== null) return w;
  }
  if (to.kind === 'INT64' && from.kind === 'STRING' && opts.format === undefined) {
    const fast = decimalInt64s(v.data as Value[], v.nulls, n);
    if (fast !== null) return { type: to, length: n, data: fast, nulls: v.nulls };
  }
  const out = new Array<Value>(n);
  for (let i = 0; i < n; i++) {
    const x = getValue(v, i);
    if (x === null) {
      out[i] = null;
      continue;
    }
    if (opts.safe) {
      try {
        out[i] = castValue(x, from, to, opts, ctx);
      } catch (e) {
        if (!(e instanceof QueryError)) throw e;
        out[i] = null;
      }
    } else out[i] = castValue(x, from, to, opts, ctx);
  }
  return vectorFromValues(to, out);
}

/** Which explicit casts exist (the analyzer reports "Invalid cast from X to Y" otherwise). */
export function canCast(from: SqlType, to: SqlType): boolean {
  if (typeEquals(from, to)) return true;
  const f = from.kind;
  const t = to.kind;
  if (f === t && f !== 'ARRAY' && f !== 'STRUCT' && f !== 'RANGE') return true;
  const num = new Set(['INT64', 'FLOAT64', 'NUMERIC', 'BIGNUMERIC']);
  if (num.has(f) && num.has(t)) return true;
  if (t === 'STRING') return f !== 'JSON' && f !== 'GEOGRAPHY' && f !== 'ARRAY' && f !== 'STRUCT';
  if (f === 'STRING') return t !== 'JSON' && t !== 'GEOGRAPHY' && t !== 'ARRAY' && t !== 'STRUCT';
  if ((f === 'BOOL' && t === 'INT64') || (f === 'INT64' && t === 'BOOL')) return true;
  const dt = new Set(['DATE', 'DATETIME', 'TIMESTAMP', 'TIMESTAMP_PICOS']);
  if (dt.has(f) && dt.has(t)) return true;
  if ((f === 'DATETIME' || f === 'TIMESTAMP' || f === 'TIMESTAMP_PICOS') && t === 'TIME') return true;
  if (f === 'ARRAY' && t === 'ARRAY') return canCast(from.element, (to as { element: SqlType }).element);
  if (f === 'STRUCT' && t === 'STRUCT') {
    const tf = (to as { fields: readonly { type: SqlType }[] }).fields;
    return from.fields.length === tf.length && from.fields.every((x, i) => canCast(x.type, tf[i]!.type));
  }
  if (f === 'RANGE' && t === 'RANGE') return canCast(from.element, (to as { element: SqlType }).element);
  return false;
}

