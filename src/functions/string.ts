// STRING and BYTES functions. Positions and lengths count Unicode code points
// for STRING and bytes for BYTES; strings without surrogates take the direct
// UTF-16 path.
import { MAX_ROW_BYTES, QueryError, rowTooLarge } from '../types/errors.js';
import { T, arrayOf, type SqlType } from '../types/types.js';
import { Decimal, JsonValue, type JsonNode, type Value } from '../types/values.js';
import { castValue, decodeUtf8 } from './conversion.js';
import { printfDouble } from './format-number.js';
import { checkHex, fromBase32, toBase32, toHex } from './cast-format.js';
import { concatBytes, rowSized } from './operators.js';
import type { ScalarKernel } from './registry.js';
import { defineScalar, named, opt, rep, sig, sigf } from './signature.js';
import { fail, mergeNulls, rowKernel, valuesOf } from './vec.js';
import { formatValueLiteral } from './format-value.js';
import { jsonPretty, jsonToString } from './json-core.js';

const SURR = /[\uD800-\uDFFF]/;
const hasSurrogates = (s: string): boolean => SURR.test(s);
export function codePoints(s: string): string[] {
  return hasSurrogates(s) ? Array.from(s) : s.split('');
}
export function cpLength(s: string): number {
  if (!hasSurrogates(s)) return s.length;
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** STRING -> STRING typed over the values array (no per-row arg arrays). */
function strUnary(fn: (s: string) => string): ScalarKernel {
  return (args, n) => {
    const a = args[0]!;
    const d = valuesOf(a, n);
    const out = new Array<Value>(n);
    for (let i = 0; i < n; i++) {
      const x = d[i];
      out[i] = x === null || x === undefined ? null : fn(x as string);
    }
    return { type: T.STRING, length: n, data: out, nulls: a.nulls };
  };
}

function lengthKernel(bytes: boolean, byteLen: boolean): ScalarKernel {
  return (args, n) => {
    const a = args[0]!;
    const d = valuesOf(a, n);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const x = d[i];
      if (x === null || x === undefined) continue;
      if (bytes) out[i] = (x as Uint8Array).length;
      else if (byteLen) out[i] = Buffer.byteLength(x as string, 'utf8');
      else out[i] = cpLength(x as string);
    }
    return { type: T.INT64, length: n, data: out, nulls: a.nulls };
  };
}

function substrStr(s: string, pos: number, len: number | undefined): string {
  if (len !== undefined && len < 0) fail('Third argument in SUBSTR() cannot be negative');
  const cps = hasSurrogates(s);
  const L = cps ? cpLength(s) : s.length;
  let start: number;
  if (pos > 0) start = pos - 1;
  else if (pos === 0) start = 0;
  else start = Math.max(0, L + pos);
  if (start >= L) return '';
  const end = len === undefined ? L : Math.min(L, start + len);
  if (!cps) return s.slice(start, end);
  return Array.from(s).slice(start, end).join('');
}
function substrBytes(b: Uint8Array, pos: number, len: number | undefined): Uint8Array {
  if (len !== undefined && len < 0) fail('Third argument in SUBSTR() cannot be negative');
  const L = b.length;
  let start: number;
  if (pos > 0) start = pos - 1;
  else if (pos === 0) start = 0;
  else start = Math.max(0, L + pos);
  if (start >= L) return new Uint8Array(0);
  const end = len === undefined ? L : Math.min(L, start + len);
  return b.slice(start, end);
}

function clampNum(x: bigint): number {
  return x > 9007199254740991n ? Number.MAX_SAFE_INTEGER : x < -9007199254740991n ? -Number.MAX_SAFE_INTEGER : Number(x);
}

function bytesIndexOf(h: Uint8Array, nd: Uint8Array, from: number): number {
  outer: for (let i = from; i + nd.length <= h.length; i++) {
    for (let j = 0; j < nd.length; j++) if (h[i + j] !== nd[j]) continue outer;
    return i;
  }
  return -1;
}

/** INSTR / STRPOS on code points: 1-based position of the occurrence-th match, 0 if none. */
function instr(h: string | Uint8Array, nd: string | Uint8Array, position = 1, occurrence = 1): number {
  if (position === 0) fail('Position must be non-zero');
  if (occurrence <= 0) fail('Occurrence must be positive');
  const isBytes = h instanceof Uint8Array;
  const hay: Value[] | Uint8Array = isBytes ? h : codePoints(h as string);
  const need: Value[] | Uint8Array = isBytes ? (nd as Uint8Array) : codePoints(nd as string);
  const L = hay.length;
  const m = need.length;
  const eq = (i: number): boolean => {
    for (let j = 0; j < m; j++) if (hay[i + j] !== need[j]) return false;
    return true;
  };
  let count = 0;
  if (position > 0) {
    for (let i = position - 1; i + m <= L; i++) if (eq(i) && ++count === occurrence) return i + 1;
  } else {
    // searching backwards: a match may start at the position (counted from the end) or before it;
    // an empty subvalue also matches just past that position (as the reference finds it: -1 gives L + 1)
    for (let i = L + position + (m === 0 ? 1 : 0); i >= 0; i--) {
      if (i + m > L) continue;
      if (eq(i) && ++count === occurrence) return i + 1;
    }
  }
  return 0;
}

function trimChars(s: string, chars: string, left: boolean, right: boolean): string {
  const set = new Set(codePoints(chars));
  const cps = codePoints(s);
  let a = 0;
  let b = cps.length;
  if (left) while (a < b && set.has(cps[a]!)) a++;
  if (right) while (b > a && set.has(cps[b - 1]!)) b--;
  return cps.slice(a, b).join('');
}
function trimBytes(s: Uint8Array, chars: Uint8Array, left: boolean, right: boolean): Uint8Array {
  const set = new Set(chars);
  let a = 0;
  let b = s.length;
  if (left) while (a < b && set.has(s[a]!)) a++;
  if (right) while (b > a && set.has(s[b - 1]!)) b--;
  return s.slice(a, b);
}

function pad(value: string | Uint8Array, len: number, fill: string | Uint8Array | undefined, left: boolean): string | Uint8Array {
  if (len < 0) fail('Second argument (output size) for LPAD/RPAD cannot be negative');
  if (len > 1048576) fail('Output of LPAD/RPAD exceeds max allowed output size of 1MB');
  if (value instanceof Uint8Array) {
    const f = (fill as Uint8Array | undefined) ?? new Uint8Array([32]);
    if (f.length === 0) fail('Third argument (pad pattern) for LPAD/RPAD cannot be empty');
    if (value.length >= len) return value.slice(0, len);
    const padLen = len - value.length;
    const p = new Uint8Array(padLen);
    for (let i = 0; i < padLen; i++) p[i] = f[i % f.length]!;
    return left ? concatBytes([p, value]) : concatBytes([value, p]);
  }
  const cps = codePoints(value);
  const f = codePoints((fill as string | undefined) ?? ' ');
  if (f.length === 0) fail('Third argument (pad pattern) for LPAD/RPAD cannot be empty');
  if (cps.length >= len) return cps.slice(0, len).join('');
  const padLen = len - cps.length;
  let p = '';
  for (let i = 0; i < padLen; i++) p += f[i % f.length];
  return left ? p + value : value + p;
}

/**
 * SOUNDEX as the reference implementation computes it: letters other than A-Z/a-z are
 * skipped, the first letter keeps its case, a letter coded as the last coded letter is
 * dropped even across vowels, H, W and Y (which have no code).
 */
/**
 * Full Unicode case folding (ß and ẞ fold to ss, ligatures expand): upper then lower case per
 * character approximates it, except for the dotless ı, which folds to itself.
 */
function caseFold(s: string): string {
  let out = '';
  for (const ch of s) {
    const f = ch === 'ı' ? ch : ch.toUpperCase().toLowerCase();
    out += f === 'ß' ? 'ss' : f; // the capital ẞ upper-cases to itself
  }
  return out;
}

function soundex(s: string): string {
  const codes: Record<string, string> = { B: '1', F: '1', P: '1', V: '1', C: '2', G: '2', J: '2', K: '2', Q: '2', S: '2', X: '2', Z: '2', D: '3', T: '3', L: '4', M: '5', N: '5', R: '6' };
  let out = '';
  let last = '';
  for (const ch of s) {
    if (!/^[A-Za-z]$/.test(ch)) continue;
    const code = codes[ch.toUpperCase()];
    if (out === '') {
      out = ch;
      last = code ?? '';
      continue;
    }
    if (code === undefined || code === last) continue;
    out += code;
    last = code;
    if (out.length === 4) break;
  }
  if (out === '') return '';
  return out.padEnd(4, '0');
}

function initcap(s: string, delims?: string): string {
  const d = delims === undefined ? new Set([' ', '\t', '\n', '\r', '\v', '\f', '[', ']', '(', ')', '{', '}', '/', '|', '<', '>', '!', '?', '@', '"', '^', '#', '$', '&', '~', '_', ',', '.', ':', ';', '*', '%', '+', '-']) : new Set(codePoints(delims));
  let out = '';
  let start = true;
  for (const ch of s) {
    if (d.has(ch)) {
      out += ch;
      start = true;
    } else {
      out += start ? ch.toUpperCase() : ch.toLowerCase();
      start = false;
    }
  }
  return out;
}

function editDistance(a: string[] | Uint8Array, b: string[] | Uint8Array, max?: number): number {
  const n = a.length;
  const m = b.length;
  let prev = new Array<number>(m + 1);
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    const cur = new Array<number>(m + 1);
    cur[0] = i;
    for (let j = 1; j <= m; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  const d = prev[m]!;
  return max !== undefined && d > max ? max : d;
}

/** EDIT_DISTANCE's optional max_distance, which string_functions.md requires to be zero or more. */
function maxDistance(v: readonly Value[]): number | undefined {
  if (v.length < 3) return undefined;
  const m = v[2] as bigint;
  if (m < 0n) fail(`The max_distance argument of EDIT_DISTANCE must be non-negative, but is ${m}`);
  return Number(m);
}

// ---------------------------------------------------------------- FORMAT (printf)

const NULL_RESULT = Symbol('null result');

/** FORMAT(fmt, args...): printf semantics; null when a NULL argument makes the result NULL. */
export function formatPrintf(fmt: string, args: Value[], types: readonly import('../types/types.js').SqlType[]): string | null {
  try {
    return formatPrintfInner(fmt, args, types);
  } catch (e) {
    if (e === NULL_RESULT) return null;
    throw e;
  }
}

/** How many values a FORMAT pattern consumes (one per specifier but %%, one more per `*`). */
/** A FORMAT specifier: flags, width, precision (`*`: taken from an argument), conversion. */
const SPECIFIER = /%([-+ #0']*)(\*|\d+)?(?:\.(\*|\d+))?([a-zA-Z%])/g;

function formatArgsNeeded(fmt: string): number {
  let n = 0;
  for (const m of fmt.matchAll(SPECIFIER)) {
    if (m[4] === '%') continue;
    n += 1 + (m[2] === '*' ? 1 : 0) + (m[3] === '*' ? 1 : 0);
  }
  return n;
}

/**
 * The reference's errors for a '%' that starts no valid specifier: the character where the
 * specifier stops making sense (the last one when the pattern ends inside it), or a lone '%' at the end.
 */
function badSpecifier(fmt: string, pct: number): never {
  if (pct === fmt.length - 1) fail(`Invalid FORMAT string: "${fmt}"`);
  const spec = /^[-+ #0']*(\*|\d+)?(?:\.(\*|\d*))?/.exec(fmt.slice(pct + 1))![0];
  const stop = Math.min(pct + 1 + spec.length, fmt.length - 1);
  fail(`Invalid format specifier character "${fmt[stop]}" in FORMAT string: "${fmt}"`);
}

/** The refusal of a value of type `t` for specifier `conv` (argument `argNo` of FORMAT), or undefined when it fits. */
function specifierTypeError(conv: string, t: SqlType, argNo: number): string | undefined {
  const bad = (want: string) => `Invalid type for argument ${argNo} to FORMAT; Expected ${want}; Got ${t.kind}`;
  if ('dixXo'.includes(conv)) return t.kind === 'INT64' ? undefined : bad('integer');
  // %u takes only unsigned integers, which BigQuery has none of.
  if (conv === 'u') return bad('UINT');
  if ('fFeEgG'.includes(conv)) return ['FLOAT64', 'NUMERIC', 'BIGNUMERIC', 'INT64'].includes(t.kind) ? undefined : bad('floating point');
  if (conv === 's') return t.kind === 'STRING' ? undefined : bad('STRING');
  if (conv === 'p' || conv === 'P') return t.kind === 'JSON' ? undefined : bad('JSON');
  return undefined;
}

/**
 * A constant FORMAT pattern checked against its arguments' types, as the service checks it when it
 * analyzes the call (so neither SAFE. nor an untaken branch hides the error): the message, or undefined.
 */
export function formatPatternError(fmt: string, types: readonly SqlType[]): string | undefined {
  try {
    let argi = 0;
    let last = 0;
    const literal = (from: number, to: number) => {
      const i = fmt.slice(from, to).indexOf('%');
      if (i >= 0) badSpecifier(fmt, from + i);
    };
    for (const m of fmt.matchAll(SPECIFIER)) {
      literal(last, m.index);
      last = m.index + m[0].length;
      const conv = m[4]!;
      if (conv === '%') continue;
      argi += (m[2] === '*' ? 1 : 0) + (m[3] === '*' ? 1 : 0);
      if (argi >= types.length) return `Too few arguments to FORMAT for pattern "${fmt}"; Expected ${formatArgsNeeded(fmt) + 1}; Got ${types.length + 1}`;
      if (!'diuxXofFeEgGspPtT'.includes(conv)) badSpecifier(fmt, m.index);
      const err = specifierTypeError(conv, types[argi]!, argi + 2);
      if (err) return err;
      argi++;
    }
    literal(last, fmt.length);
    return undefined;
  } catch (e) {
    if (e instanceof QueryError) return e.message;
    throw e;
  }
}

function formatPrintfInner(fmt: string, args: Value[], types: readonly SqlType[]): string {
  let out = '';
  let argi = 0;
  const re = new RegExp(SPECIFIER);
  let last = 0;
  let m: RegExpExecArray | null;
  // A '%' that starts no valid specifier is an error, as is one cut off at the end.
  const literal = (text: string, at: number): string => {
    const i = text.indexOf('%');
    if (i >= 0) badSpecifier(fmt, at + i);
    return text;
  };
  while ((m = re.exec(fmt)) !== null) {
    out += literal(fmt.slice(last, m.index), last);
    last = re.lastIndex;
    const [, flags = '', widthS, precS, conv] = m;
    if (conv === '%') {
      out += '%';
      continue;
    }
    const star = (): number => {
      const a = args[argi++];
      if (a === null || a === undefined) throw NULL_RESULT;
      return Number(a as bigint);
    };
    let width = widthS === undefined ? undefined : widthS === '*' ? star() : Number(widthS);
    const prec = precS === undefined ? undefined : precS === '*' ? star() : Number(precS);
    if (argi >= args.length) fail(`Too few arguments to FORMAT for pattern "${fmt}"; Expected ${formatArgsNeeded(fmt) + 1}; Got ${args.length + 1}`);
    const v = args[argi];
    // A NULL argument prints as NULL for %t/%T; for other specifiers the result is NULL.
    if (v === null && conv !== 't' && conv !== 'T') throw NULL_RESULT;
    const t = types[argi]!;
    argi++;
    let s: string;
    if (v === null) s = 'NULL';
    else {
      const typeError = specifierTypeError(conv, t, argi + 1);
      if (typeError) fail(typeError);
      switch (conv) {
        case 'd':
        case 'i': {
          s = (v as bigint).toString();
          // A precision on %d is the minimum number of digits (%.0d prints nothing for 0).
          if (prec === 0 && v === 0n) s = '';
          else if (prec !== undefined) s = s.startsWith('-') ? '-' + s.slice(1).padStart(prec, '0') : s.padStart(prec, '0');
          if (flags.includes("'")) s = s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
          if (flags.includes('+') && (v as bigint) >= 0n) s = '+' + s;
          else if (flags.includes(' ') && (v as bigint) >= 0n) s = ' ' + s;
          break;
        }
        case 'x':
        case 'X':
        case 'o': {
          const b = v as bigint;
          // string_functions.md, format specifiers: %o, %x and %X of a negative INT64 are an error (the packaged
          // reference prints the magnitude after a minus sign instead).
          if (b < 0n) fail(`FORMAT specifier %${conv} cannot format a negative INT64 value: ${b}`);
          s = b.toString(conv === 'o' ? 8 : 16);
          if (prec === 0 && b === 0n) s = '';
          else if (prec !== undefined) s = s.padStart(prec, '0');
          // the ' flag groups hex digits by four with ':' and octal digits by four with ','
          if (flags.includes("'")) s = s.replace(/\B(?=(?:[0-9a-f]{4})+$)/g, conv === 'o' ? ',' : ':');
          if (conv === 'X') s = s.toUpperCase();
          if (flags.includes('#') && b !== 0n) s = (conv === 'o' ? '0' : conv === 'x' ? '0x' : '0X') + s;
          break;
        }
        case 'f':
        case 'F':
        case 'e':
        case 'E':
        case 'g':
        case 'G': {
          const x = typeof v === 'bigint' ? Number(v) : v instanceof Decimal ? v.toNumber() : (v as number);
          const p = prec ?? 6;
          const alt = flags.includes('#');
          if (Number.isNaN(x)) s = 'nan';
          else if (!Number.isFinite(x)) s = x > 0 ? 'inf' : '-inf';
          else if ((conv === 'f' || conv === 'F') && v instanceof Decimal) s = v.toFixed(p) + (alt && p === 0 ? '.' : '');
          else s = printfDouble(x, conv.toLowerCase() as 'f' | 'e' | 'g', p, alt);
          if (conv === 'E' || conv === 'G' || conv === 'F') s = s.toUpperCase();
          if (flags.includes("'")) s = s.replace(/^(-?\d+)/, (q) => q.replace(/\B(?=(\d{3})+(?!\d))/g, ','));
          if (flags.includes('+') && x >= 0) s = '+' + s;
          else if (flags.includes(' ') && x >= 0) s = ' ' + s;
          break;
        }
        case 's':
          s = v as string;
          if (prec !== undefined) s = codePoints(s).slice(0, prec).join('');
          break;
        case 'p':
        case 'P':
          s = conv === 'p' ? jsonToString((v as JsonValue).node) : jsonPretty((v as JsonValue).node);
          break;
        case 't':
          // %t of a FLOAT64 always shows a fraction or exponent (123.0), unlike CAST, also inside arrays and structs
          s = formatValueLiteral(v, t, false, true);
          if (prec !== undefined) s = codePoints(s).slice(0, prec).join('');
          break;
        case 'T':
          s = formatValueLiteral(v, t, true);
          if (prec !== undefined) s = codePoints(s).slice(0, prec).join('');
          break;
        default:
          badSpecifier(fmt, m.index);
      }
    }
    if (width !== undefined) {
      if (width < 0) {
        width = -width;
      }
      const len = cpLength(s);
      if (len < width) {
        if (flags.includes('-')) s = s + ' '.repeat(width - len);
        else if (flags.includes('0') && /[dieEfFgGxXo]/.test(conv!) && v !== null) {
          const sign = /^[+\- ]/.test(s) ? s[0]! : '';
          s = sign + '0'.repeat(width - len) + s.slice(sign.length);
        } else s = ' '.repeat(width - len) + s;
      }
    }
    out += s;
  }
  out += literal(fmt.slice(last), last);
  if (argi < args.length) fail(`Too many arguments to FORMAT for pattern "${fmt}"; Expected ${argi + 1}; Got ${args.length + 1}`);
  return out;
}

// ---------------------------------------------------------------- registration


/** CONTAINS_SUBSTR compares NFKC-normalized, case-folded text (full folding: ß matches ss). */
function foldNfkc(s: string): string {
  return caseFold(s.normalize('NFKC')).normalize('NFKC');
}
export function registerStrings(): void {
  defineScalar('CONCAT', [
    sig(['STRING', rep('STRING')], 'STRING', (args, n) => {
      const cols = args.map((a) => valuesOf(a, n));
      const nulls = mergeNulls(args, n);
      const out = new Array<Value>(n);
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) {
          out[i] = null;
          continue;
        }
        let s = '';
        for (let k = 0; k < cols.length; k++) s += cols[k]![i] as string;
        out[i] = rowSized(s);
      }
      return { type: T.STRING, length: n, data: out, nulls };
    }),
    sig(['BYTES', rep('BYTES')], 'BYTES', rowKernel(T.BYTES, (v) => concatBytes(v as Uint8Array[]))),
    // Other scalar types are converted as CAST(x AS STRING) would (the service's documented coercion; the
    // reference lists only the two signatures above).
    {
      ...sigf(['ANY', rep('ANY')], 'STRING', (c) => rowKernel(T.STRING, (v, ctx) => v.map((x, i) => castValue(x, c.argTypes[i]!, T.STRING, { safe: false }, ctx) as string).join('')), (c) =>
        c.argTypes.every((t) => t.kind !== 'BYTES' && t.kind !== 'ARRAY' && t.kind !== 'STRUCT' && t.kind !== 'JSON' && t.kind !== 'GEOGRAPHY')),
      unlisted: true,
    },
  ], { pure: true });

  // Not `pure` (memoized), nor STARTS_WITH / ENDS_WITH: one pass over a string costs less than the memo's lookup.
  defineScalar('LENGTH', [sig(['STRING'], 'INT64', lengthKernel(false, false)), sig(['BYTES'], 'INT64', lengthKernel(true, false))]);
  defineScalar('CHAR_LENGTH', [sig(['STRING'], 'INT64', lengthKernel(false, false))], { aliases: ['CHARACTER_LENGTH'] });
  defineScalar('BYTE_LENGTH', [sig(['STRING'], 'INT64', lengthKernel(false, true)), sig(['BYTES'], 'INT64', lengthKernel(true, false))], { aliases: ['OCTET_LENGTH'] });

  const asciiCase = (upper: boolean) => rowKernel(T.BYTES, (v) => (v[0] as Uint8Array).map((c) => (upper ? (c >= 97 && c <= 122 ? c - 32 : c) : c >= 65 && c <= 90 ? c + 32 : c)));
  defineScalar('LOWER', [sig(['STRING'], 'STRING', strUnary((s) => s.toLowerCase())), sig(['BYTES'], 'BYTES', asciiCase(false))], { pure: true });
  defineScalar('UPPER', [sig(['STRING'], 'STRING', strUnary((s) => s.toUpperCase())), sig(['BYTES'], 'BYTES', asciiCase(true))], { pure: true });
  defineScalar('INITCAP', [sig(['STRING', opt('STRING')], 'STRING', rowKernel(T.STRING, (v) => initcap(v[0] as string, v[1] as string | undefined)))], { pure: true });

  const trim = (left: boolean, right: boolean) => [
    sig(['STRING', opt('STRING')], 'STRING', rowKernel(T.STRING, (v) => {
      const s = v[0] as string;
      if (v.length === 1) return left && right ? s.replace(/^[\s\u00a0\u3000\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\ufeff]+|[\s\u00a0\u3000\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\ufeff]+$/g, '') : trimChars(s, ' \t\n\r\v\f\u00a0\u3000\u2028\u2029', left, right);
      return trimChars(s, v[1] as string, left, right);
    })),
    sig(['BYTES', 'BYTES'], 'BYTES', rowKernel(T.BYTES, (v) => trimBytes(v[0] as Uint8Array, v[1] as Uint8Array, left, right))),
  ];
  defineScalar('TRIM', trim(true, true), { pure: true });
  defineScalar('LTRIM', trim(true, false), { pure: true });
  defineScalar('RTRIM', trim(false, true), { pure: true });

  const padSigs = (left: boolean) => [
    sig(['STRING', 'INT64', opt('STRING')], 'STRING', rowKernel(T.STRING, (v) => pad(v[0] as string, clampNum(v[1] as bigint), v[2] as string | undefined, left))),
    sig(['BYTES', 'INT64', opt('BYTES')], 'BYTES', rowKernel(T.BYTES, (v) => pad(v[0] as Uint8Array, clampNum(v[1] as bigint), v[2] as Uint8Array | undefined, left))),
  ];
  defineScalar('LPAD', padSigs(true), { pure: true });
  defineScalar('RPAD', padSigs(false), { pure: true });

  defineScalar('REPEAT', [
    sig(['STRING', 'INT64'], 'STRING', rowKernel(T.STRING, (v) => {
      const k = v[1] as bigint;
      if (k < 0n) fail('Second argument (repeat count) for REPEAT cannot be negative');
      const s = v[0] as string;
      if (s.length * Number(k) > 1048576) fail('Output of REPEAT exceeds max allowed output size of 1MB');
      return s.repeat(Number(k));
    })),
    sig(['BYTES', 'INT64'], 'BYTES', rowKernel(T.BYTES, (v) => {
      const k = v[1] as bigint;
      if (k < 0n) fail('Second argument (repeat count) for REPEAT cannot be negative');
      const b = v[0] as Uint8Array;
      if (b.length * Number(k) > 1048576) fail('Output of REPEAT exceeds max allowed output size of 1MB');
      // Straight into the output: an empty input may come with a count in the billions.
      const out = new Uint8Array(b.length * Number(k));
      if (b.length > 0) for (let at = 0; at < out.length; at += b.length) out.set(b, at);
      return out;
    })),
  ]);
  defineScalar('REPLACE', [
    sig(['STRING', 'STRING', 'STRING'], 'STRING', rowKernel(T.STRING, (v) => {
      const [s, f, r] = v as [string, string, string];
      if (f === '') return s;
      const parts = s.split(f);
      // The output's size is known before it is built: past the row limit it is refused, not allocated.
      if (s.length + (parts.length - 1) * (r.length - f.length) > MAX_ROW_BYTES) throw rowTooLarge();
      return parts.join(r);
    })),
    sig(['BYTES', 'BYTES', 'BYTES'], 'BYTES', rowKernel(T.BYTES, (v) => {
      const s = v[0] as Uint8Array;
      const f = v[1] as Uint8Array;
      const r = v[2] as Uint8Array;
      if (f.length === 0) return s;
      const parts: Uint8Array[] = [];
      let i = 0;
      for (;;) {
        const j = bytesIndexOf(s, f, i);
        if (j < 0) break;
        parts.push(s.slice(i, j), r);
        i = j + f.length;
      }
      parts.push(s.slice(i));
      return concatBytes(parts);
    })),
  ], { pure: true });
  defineScalar('REVERSE', [
    sig(['STRING'], 'STRING', strUnary((s) => codePoints(s).reverse().join(''))),
    sig(['BYTES'], 'BYTES', rowKernel(T.BYTES, (v) => (v[0] as Uint8Array).slice().reverse())),
  ], { pure: true });
  defineScalar('SUBSTR', [
    sig(['STRING', 'INT64', opt('INT64')], 'STRING', (args, n) => {
      // Typed access: positions are read as doubles, no BigInt per row.
      const s = valuesOf(args[0]!, n);
      const pos = args[1]!;
      const len = args[2];
      const nulls = mergeNulls(args, n);
      const num = (v: import('../types/vector.js').Vector, i: number): number =>
        v.data instanceof Float64Array ? v.data[i]! : clampNum((v.data as BigInt64Array)[i]!);
      const out = new Array<Value>(n);
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) {
          out[i] = null;
          continue;
        }
        out[i] = substrStr(s[i] as string, num(pos, i), len ? num(len, i) : undefined);
      }
      return { type: T.STRING, length: n, data: out, nulls };
    }),
    sig(['BYTES', 'INT64', opt('INT64')], 'BYTES', rowKernel(T.BYTES, (v) => substrBytes(v[0] as Uint8Array, clampNum(v[1] as bigint), v.length > 2 ? clampNum(v[2] as bigint) : undefined))),
  ], { pure: true, aliases: ['SUBSTRING'] });
  const leftRight = (left: boolean) => [
    sig(['STRING', 'INT64'], 'STRING', rowKernel(T.STRING, (v) => {
      const k = clampNum(v[1] as bigint);
      if (k < 0) fail(`Second argument in ${left ? 'LEFT' : 'RIGHT'}() cannot be negative`);
      const cps = codePoints(v[0] as string);
      return (left ? cps.slice(0, k) : cps.slice(Math.max(0, cps.length - k))).join('');
    })),
    sig(['BYTES', 'INT64'], 'BYTES', rowKernel(T.BYTES, (v) => {
      const k = clampNum(v[1] as bigint);
      if (k < 0) fail(`Second argument in ${left ? 'LEFT' : 'RIGHT'}() cannot be negative`);
      const b = v[0] as Uint8Array;
      return left ? b.slice(0, k) : b.slice(Math.max(0, b.length - k));
    })),
  ];
  defineScalar('LEFT', leftRight(true), { pure: true });
  defineScalar('RIGHT', leftRight(false), { pure: true });
  defineScalar('STRPOS', [
    sig(['STRING', 'STRING'], 'INT64', rowKernel(T.INT64, (v) => BigInt(instr(v[0] as string, v[1] as string)))),
    sig(['BYTES', 'BYTES'], 'INT64', rowKernel(T.INT64, (v) => BigInt(instr(v[0] as Uint8Array, v[1] as Uint8Array)))),
  ], { pure: true });
  defineScalar('INSTR', [
    sig(['STRING', 'STRING', opt('INT64'), opt('INT64')], 'INT64', rowKernel(T.INT64, (v) => BigInt(instr(v[0] as string, v[1] as string, v.length > 2 ? clampNum(v[2] as bigint) : 1, v.length > 3 ? clampNum(v[3] as bigint) : 1)))),
    sig(['BYTES', 'BYTES', opt('INT64'), opt('INT64')], 'INT64', rowKernel(T.INT64, (v) => BigInt(instr(v[0] as Uint8Array, v[1] as Uint8Array, v.length > 2 ? clampNum(v[2] as bigint) : 1, v.length > 3 ? clampNum(v[3] as bigint) : 1)))),
  ], { pure: true });
  const startsEnds = (starts: boolean) => [
    sig(['STRING', 'STRING'], 'BOOL', (args, n) => {
      const a = valuesOf(args[0]!, n);
      const b = valuesOf(args[1]!, n);
      const nulls = mergeNulls(args, n);
      const out = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        if (nulls !== null && nulls[i] === 1) continue;
        const x = a[i] as string;
        const y = b[i] as string;
        out[i] = (starts ? x.startsWith(y) : x.endsWith(y)) ? 1 : 0;
      }
      return { type: T.BOOL, length: n, data: out, nulls };
    }),
    sig(['BYTES', 'BYTES'], 'BOOL', rowKernel(T.BOOL, (v) => {
      const a = v[0] as Uint8Array;
      const b = v[1] as Uint8Array;
      if (b.length > a.length) return false;
      const off = starts ? 0 : a.length - b.length;
      for (let i = 0; i < b.length; i++) if (a[off + i] !== b[i]) return false;
      return true;
    })),
  ];
  defineScalar('STARTS_WITH', startsEnds(true));
  defineScalar('ENDS_WITH', startsEnds(false));

  defineScalar('SPLIT', [
    sig(['STRING', opt('STRING')], 'ARRAY<STRING>', rowKernel(arrayOf(T.STRING), (v) => {
      const s = v[0] as string;
      const d = v.length > 1 ? (v[1] as string) : ',';
      if (s === '') return [''];
      if (d === '') return codePoints(s);
      return s.split(d);
    })),
    sig(['BYTES', 'BYTES'], 'ARRAY<BYTES>', rowKernel(arrayOf(T.BYTES), (v) => {
      const s = v[0] as Uint8Array;
      const d = v[1] as Uint8Array;
      if (s.length === 0) return [new Uint8Array(0)];
      if (d.length === 0) return Array.from(s, (x) => new Uint8Array([x]));
      const out: Value[] = [];
      let i = 0;
      for (;;) {
        const j = bytesIndexOf(s, d, i);
        if (j < 0) break;
        out.push(s.slice(i, j));
        i = j + d.length;
      }
      out.push(s.slice(i));
      return out;
    })),
  ]);
  defineScalar('SPLIT_SUBSTR', [
    sig(['STRING', 'STRING', 'INT64', opt('INT64')], 'STRING', rowKernel(T.STRING, (v) => {
      const s = v[0] as string;
      const d = v[1] as string;
      if (d === '') fail('Delimiter of SPLIT_SUBSTR function must be non-empty');
      const parts = s.split(d);
      let start = clampNum(v[2] as bigint);
      if (start > 0) start -= 1;
      else if (start < 0) start = Math.max(0, parts.length + start);
      if (start >= parts.length) return '';
      let count = v.length > 3 ? clampNum(v[3] as bigint) : parts.length;
      if (count < 0) fail('Number of splits of SPLIT_SUBSTR function must be non-negative');
      count = Math.min(count, parts.length - start);
      return parts.slice(start, start + count).join(d);
    })),
  ]);
  defineScalar('TRANSLATE', [
    sig(['STRING', 'STRING', 'STRING'], 'STRING', rowKernel(T.STRING, (v) => {
      const from = codePoints(v[1] as string);
      const to = codePoints(v[2] as string);
      const map = new Map<string, string | null>();
      from.forEach((c, i) => {
        if (map.has(c)) fail('Duplicate character "' + c + '" in TRANSLATE source characters');
        map.set(c, i < to.length ? to[i]! : null);
      });
      let out = '';
      for (const c of v[0] as string) {
        if (map.has(c)) {
          const r = map.get(c);
          if (r !== null && r !== undefined) out += r;
        } else out += c;
      }
      return out;
    })),
    sig(['BYTES', 'BYTES', 'BYTES'], 'BYTES', rowKernel(T.BYTES, (v) => {
      const from = v[1] as Uint8Array;
      const to = v[2] as Uint8Array;
      const map = new Map<number, number | null>();
      from.forEach((c, i) => {
        if (map.has(c)) fail(`Duplicate byte 0x${c.toString(16)} in TRANSLATE source bytes`);
        map.set(c, i < to.length ? to[i]! : null);
      });
      const out: number[] = [];
      for (const c of v[0] as Uint8Array) {
        if (map.has(c)) {
          const r = map.get(c);
          if (r !== null && r !== undefined) out.push(r);
        } else out.push(c);
      }
      return Uint8Array.from(out);
    })),
  ]);
  defineScalar('SOUNDEX', [sig(['STRING'], 'STRING', strUnary(soundex))], { pure: true });
  const normMode = (v: Value | undefined): 'NFC' | 'NFKC' | 'NFD' | 'NFKD' => {
    const m = v === undefined ? 'NFC' : String(v).toUpperCase();
    if (m !== 'NFC' && m !== 'NFKC' && m !== 'NFD' && m !== 'NFKD') fail(`Invalid normalization mode: ${String(v)}`);
    return m;
  };
  // The mode is a keyword (NORMALIZE(x, NFKC)); a constant STRING slot lets the analyzer read it as one.
  defineScalar('NORMALIZE', [sig(['STRING', { type: 'STRING', optional: true, constant: true }], 'STRING', rowKernel(T.STRING, (v) => (v[0] as string).normalize(normMode(v[1]))))], { pure: true });
  defineScalar('NORMALIZE_AND_CASEFOLD', [sig(['STRING', { type: 'STRING', optional: true, constant: true }], 'STRING', rowKernel(T.STRING, (v) => caseFold((v[0] as string).normalize(normMode(v[1]))).normalize(normMode(v[1]))))], { pure: true });
  defineScalar('ASCII', [
    sig(['STRING'], 'INT64', rowKernel(T.INT64, (v) => {
      const s = v[0] as string;
      if (s === '') return 0n;
      const c = s.codePointAt(0)!;
      // Only the first character must be ASCII; the reference's message quotes the whole input.
      if (c > 127) fail(`Argument to ASCII is not a structurally valid ASCII string: '${s}'`);
      return BigInt(c);
    })),
    sig(['BYTES'], 'INT64', rowKernel(T.INT64, (v) => BigInt((v[0] as Uint8Array)[0] ?? 0))),
  ]);
  defineScalar('UNICODE', [sig(['STRING'], 'INT64', rowKernel(T.INT64, (v) => BigInt((v[0] as string).codePointAt(0) ?? 0)))]);
  // string_functions.md (CHR): code point 0 gives an empty string (the reference gives a NUL character).
  const chr = (c: bigint): string => {
    if (c < 0n || c > 0x10ffffn || (c >= 0xd800n && c <= 0xdfffn)) fail(`Invalid codepoint ${c}`);
    return c === 0n ? '' : String.fromCodePoint(Number(c));
  };
  defineScalar('CHR', [sig(['INT64'], 'STRING', rowKernel(T.STRING, (v) => chr(v[0] as bigint)))]);
  defineScalar('CODE_POINTS_TO_STRING', [
    sig(['ARRAY<INT64>'], 'STRING', rowKernel(T.STRING, (v) => {
      let s = '';
      for (const c of v[0] as Value[]) {
        if (c === null) return null;
        const x = c as bigint;
        if (x < 0n || x > 0x10ffffn || (x >= 0xd800n && x <= 0xdfffn)) fail(`Invalid codepoint ${x}`);
        s += String.fromCodePoint(Number(x));
      }
      return s;
    })),
  ]);
  defineScalar('CODE_POINTS_TO_BYTES', [
    sig(['ARRAY<INT64>'], 'BYTES', rowKernel(T.BYTES, (v) => {
      const arr = v[0] as Value[];
      const out = new Uint8Array(arr.length);
      for (let i = 0; i < arr.length; i++) {
        if (arr[i] === null) return null;
        const x = arr[i] as bigint;
        if (x < 0n || x > 255n) fail(`Invalid ASCII value ${x}`);
        out[i] = Number(x);
      }
      return out;
    })),
  ]);
  defineScalar('TO_CODE_POINTS', [
    sig(['STRING'], 'ARRAY<INT64>', rowKernel(arrayOf(T.INT64), (v) => Array.from(v[0] as string, (c) => BigInt(c.codePointAt(0)!)))),
    sig(['BYTES'], 'ARRAY<INT64>', rowKernel(arrayOf(T.INT64), (v) => Array.from(v[0] as Uint8Array, (c) => BigInt(c)))),
  ]);
  defineScalar('TO_HEX', [sig(['BYTES'], 'STRING', rowKernel(T.STRING, (v) => toHex(v[0] as Uint8Array)))]);
  defineScalar('FROM_HEX', [
    sig(['STRING'], 'BYTES', rowKernel(T.BYTES, (v) => {
      const s = v[0] as string;
      checkHex(s, s);
      return Uint8Array.from(Buffer.from(s.length % 2 ? '0' + s : s, 'hex'));
    })),
  ]);
  defineScalar('TO_BASE64', [sig(['BYTES'], 'STRING', rowKernel(T.STRING, (v) => Buffer.from(v[0] as Uint8Array).toString('base64')))]);
  defineScalar('FROM_BASE64', [
    sig(['STRING'], 'BYTES', rowKernel(T.BYTES, (v) => {
      const s = (v[0] as string).replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 === 1) fail(`Failed to decode invalid base64 string: "${v[0] as string}"`);
      return Uint8Array.from(Buffer.from(s, 'base64'));
    })),
  ]);
  defineScalar('TO_BASE32', [sig(['BYTES'], 'STRING', rowKernel(T.STRING, (v) => toBase32(v[0] as Uint8Array)))]);
  defineScalar('FROM_BASE32', [
    sig(['STRING'], 'BYTES', rowKernel(T.BYTES, (v) => {
      const r = fromBase32(v[0] as string);
      if (!r) fail(`Failed to decode invalid base32 string: "${v[0] as string}"`);
      return r;
    })),
  ]);
  /** Every byte that does not start a well-formed UTF-8 sequence becomes one U+FFFD (as the reference replaces them). */
  const replaceInvalidUtf8 = (b: Uint8Array): string => {
    let out = '';
    let i = 0;
    while (i < b.length) {
      const c = b[i]!;
      const len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
      const s = len > 0 && i + len <= b.length ? decodeUtf8(b.subarray(i, i + len)) : undefined;
      if (s === undefined) {
        out += '\uFFFD';
        i++;
      } else {
        out += s;
        i += len;
      }
    }
    return out;
  };
  defineScalar('SAFE_CONVERT_BYTES_TO_STRING', [
    sig(['BYTES'], 'STRING', rowKernel(T.STRING, (v) => {
      const b = v[0] as Uint8Array;
      return decodeUtf8(b) ?? replaceInvalidUtf8(b);
    })),
  ]);
  defineScalar('FORMAT', [
    sigf(['STRING', { type: 'ANY', repeated: true }], 'STRING', (c) => {
      const types = c.argTypes.slice(1);
      return rowKernel(T.STRING, (v) => (v[0] === null ? null : formatPrintf(v[0] as string, v.slice(1), types)), false);
    }),
  ], {
    validate: (args) => {
      const f = args[0]!;
      if (typeof f.constant?.value !== 'string' || (f as { isParameter?: boolean }).isParameter) return undefined;
      return formatPatternError(f.constant.value, args.slice(1).map((a) => a.type));
    },
  });
  defineScalar('EDIT_DISTANCE', [
    sig(['STRING', 'STRING', named('max_distance', 'INT64')], 'INT64', rowKernel(T.INT64, (v) => BigInt(editDistance(codePoints(v[0] as string), codePoints(v[1] as string), maxDistance(v))))),
    sig(['BYTES', 'BYTES', named('max_distance', 'INT64')], 'INT64', rowKernel(T.INT64, (v) => BigInt(editDistance(v[0] as Uint8Array, v[1] as Uint8Array, maxDistance(v))))),
  ]);
  defineScalar('COLLATE', [sig(['STRING', 'STRING'], 'STRING', rowKernel(T.STRING, (v) => v[0]!, false))], {
    validate: (args) => (args[1]!.constant === undefined ? 'The second argument of COLLATE() must be a string literal' : undefined),
  });
  defineScalar('CONTAINS_SUBSTR', [
    sigf(['ANY', 'STRING', named('json_scope', 'STRING')], 'BOOL', (c) => rowKernel(T.BOOL, (v) => {
      if (v[1] === null) fail('The second argument of CONTAINS_SUBSTR must not be NULL');
      const needle = foldNfkc(v[1] as string);
      const scope = v.length > 2 && v[2] !== null ? String(v[2]).toUpperCase() : 'JSON_VALUES';
      if (scope !== 'JSON_VALUES' && scope !== 'JSON_KEYS' && scope !== 'JSON_KEYS_AND_VALUES') fail(`Invalid JSON scope: ${String(v[2])}`);
      const hit = (s: string): boolean => foldNfkc(s).includes(needle);
      // JSON: keys and/or scalar values per json_scope, each searched on its own
      const searchJson = (n: JsonNode): boolean => {
        if (n === null) return false;
        if (Array.isArray(n)) return n.some(searchJson);
        if (typeof n === 'object') {
          for (const [k, x] of Object.entries(n)) {
            if (scope !== 'JSON_VALUES' && hit(k)) return true;
            if (searchJson(x)) return true;
          }
          return false;
        }
        if (scope === 'JSON_KEYS') return false;
        return hit(typeof n === 'string' ? n : jsonToString(n));
      };
      const search = (x: Value, t: import('../types/types.js').SqlType): boolean | null => {
        if (x === null) return null;
        if (t.kind === 'ARRAY' || t.kind === 'STRUCT') {
          let sawNull = false;
          const els = x as Value[];
          for (let i = 0; i < els.length; i++) {
            const r = search(els[i]!, t.kind === 'ARRAY' ? t.element : t.fields[i]!.type);
            if (r === true) return true;
            if (r === null) sawNull = true;
          }
          return sawNull ? null : false;
        }
        if (t.kind === 'JSON') return searchJson((x as JsonValue).node);
        const s = t.kind === 'STRING' ? (x as string) : formatValueLiteral(x, t, false);
        return hit(s);
      };
      return search(v[0]!, c.argTypes[0]!);
    }, false)),
  ]);
}
