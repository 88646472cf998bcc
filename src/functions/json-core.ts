// JSON text parsing (with wide-number modes), canonical serialization and
// JSONPath evaluation shared by the JSON family and TO_JSON_STRING.
import { JSON_NESTING_ERROR, MAX_JSON_NESTING, jsonDoubleText, parseJsonText as parseStoredJson } from '../types/json-values.js';
import { JsonValue, type JsonNode } from '../types/values.js';
import { fail } from './vec.js';

export type WideNumberMode = 'exact' | 'round';

class JsonParser {
  i = 0;
  /** False: check the text (the same errors at the same offsets) without making its values; value() returns null. */
  build = true;
  constructor(
    readonly s: string,
    readonly mode: WideNumberMode,
  ) {}
  err(msg?: string): never {
    throw new JsonSyntaxError(msg ?? `Unexpected character at offset ${this.i}`);
  }
  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 32 || c === 9 || c === 10 || c === 13) this.i++;
      else break;
    }
  }
  value(depth = 0): JsonNode {
    this.ws();
    const cc = this.s.charCodeAt(this.i);
    // A number (its first character: '-' or a digit) without a one-character string per value.
    if (cc === 45 || (cc >= 48 && cc <= 57)) return this.number();
    const c = this.s[this.i];
    if ((c === '{' || c === '[') && depth >= MAX_JSON_NESTING) this.err(JSON_NESTING_ERROR);
    if (c === '{') {
      this.i++;
      const obj: { [k: string]: JsonNode } | null = this.build ? {} : null;
      this.ws();
      if (this.s[this.i] === '}') {
        this.i++;
        return obj;
      }
      for (;;) {
        this.ws();
        if (this.s[this.i] !== '"') this.err();
        const k = this.string();
        this.ws();
        if (this.s[this.i] !== ':') this.err();
        this.i++;
        const v = this.value(depth + 1);
        // Duplicate keys: the first one wins, as the service keeps.
        if (obj !== null && !Object.prototype.hasOwnProperty.call(obj, k)) obj[k] = v;
        this.ws();
        if (this.s[this.i] === ',') {
          this.i++;
          continue;
        }
        if (this.s[this.i] === '}') {
          this.i++;
          return obj;
        }
        this.err();
      }
    }
    if (c === '[') {
      this.i++;
      const arr: JsonNode[] | null = this.build ? [] : null;
      this.ws();
      if (this.s[this.i] === ']') {
        this.i++;
        return arr;
      }
      for (;;) {
        const v = this.value(depth + 1);
        if (arr !== null) arr.push(v);
        this.ws();
        if (this.s[this.i] === ',') {
          this.i++;
          continue;
        }
        if (this.s[this.i] === ']') {
          this.i++;
          return arr;
        }
        this.err();
      }
    }
    if (c === '"') return this.string();
    if (this.s.startsWith('true', this.i)) {
      this.i += 4;
      return true;
    }
    if (this.s.startsWith('false', this.i)) {
      this.i += 5;
      return false;
    }
    if (this.s.startsWith('null', this.i)) {
      this.i += 4;
      return null;
    }
    return this.number();
  }
  string(): string {
    const s = this.s;
    const start = ++this.i;
    // Most strings have no escape or control character: one slice, not a character at a time.
    for (let i = start; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 34) {
        this.i = i + 1;
        return s.slice(start, i);
      }
      if (c === 92 || c < 0x20) {
        this.i = i;
        break;
      }
    }
    let out = s.slice(start, this.i);
    for (;;) {
      if (this.i >= s.length) this.err('Unterminated string');
      const c = s[this.i]!;
      if (c === '"') {
        this.i++;
        return out;
      }
      if (c === '\\') {
        const e = s[this.i + 1];
        this.i += 2;
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            const h = s.slice(this.i, this.i + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(h)) this.err();
            out += String.fromCharCode(parseInt(h, 16));
            this.i += 4;
            break;
          }
          default:
            this.err();
        }
        continue;
      }
      if (c.charCodeAt(0) < 0x20) this.err();
      out += c;
      this.i++;
    }
  }
  number(): JsonNode {
    // Sticky: matched where the parser is, without a copy of the rest of the text.
    NUMBER.lastIndex = this.i;
    const m = NUMBER.exec(this.s);
    if (!m) this.err();
    const text = m[0];
    this.i += text.length;
    // An integer of at most 15 digits is exactly the double it reads as (-0 as 0, as through BigInt).
    if (m[2] === undefined && m[3] === undefined) {
      if (m[1]!.length <= 15) return this.build ? Number(text) + 0 : null;
      const x = jsonNumberFromText(text, this.mode);
      return this.build ? x : null;
    }
    // Checking only: in round mode a fraction without exponent under 300 characters is finite, so valid.
    if (!this.build && this.mode === 'round' && m[3] === undefined && text.length < 300) return null;
    const x = fractionFromText(text, this.mode);
    return this.build ? x : null;
  }
}

const NUMBER = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

export class JsonSyntaxError extends Error {}

/**
 * How a JsonText's own part is parsed at its first read: a wide-number mode
 * (PARSE_JSON's text, checked whole when made), or `stored`: the storage
 * form of a JSON value (types/json-values.ts jsonNodeToText, read back by its
 * parseJsonText), whose keys are unique and numbers already canonical.
 */
export type JsonTextMode = WideNumberMode | 'stored';

/**
 * A valid JSON text read lazily (PARSE_JSON under a field access, analyzer
 * fieldAccess; a stored JSON column's values): `member`, `element` and `at`
 * find a value's text by scanning, without making the values around it, and
 * `node` parses the text (only its own part) at the first read. The text is
 * valid when made, so these scans raise nothing. Duplicate keys: the first
 * is found, as the parsed object keeps it.
 */
export class JsonText extends JsonValue {
  private done = false;
  constructor(
    readonly text: string,
    readonly start: number,
    readonly end: number,
    readonly mode: JsonTextMode,
  ) {
    super(null);
  }
  override get node(): JsonNode {
    if (!this.done) {
      const t = this.start === 0 && this.end === this.text.length ? this.text : this.text.slice(this.start, this.end);
      this.parsed = this.mode === 'stored' ? parseStoredJson(t) : parseJsonText(t, this.mode);
      this.done = true;
    }
    return this.parsed;
  }
  override get storedText(): string | undefined {
    // A stored text is compact (no blank), so any value's span in it is that value's storage form.
    if (this.mode !== 'stored') return undefined;
    return this.start === 0 && this.end === this.text.length ? this.text : this.text.slice(this.start, this.end);
  }
  /**
   * Whether a path function reads this value by scanning its text: until it
   * is parsed (a walk of the parsed value is then faster).
   */
  scans(): boolean {
    return !this.done;
  }
  /** Where the value's first non-blank character is. */
  private lead(): number {
    const s = this.text;
    let i = this.start;
    for (let c = s.charCodeAt(i); c === 32 || c === 9 || c === 10 || c === 13; c = s.charCodeAt(++i));
    return i;
  }
  /** The first member `key` of this object (as the parsed object keeps the first of duplicate keys); null when not an object or absent. */
  member(key: string): JsonText | null {
    return this.text.charCodeAt(this.lead()) === 123 ? this.at([key]) : null;
  }
  /** Element `i` of this array; null when not an array or out of range. */
  element(i: number): JsonText | null {
    return this.text.charCodeAt(this.lead()) === 91 ? this.at([i]) : null;
  }
  /**
   * The value at a path, as jsonAtPath finds it in the parsed value (a key
   * names an object's member, a number or digit string an array's element);
   * null when absent. Keys Object.prototype has are not asked here (callers
   * take the parsed path for them: the parsed object's own property rules).
   */
  at(steps: readonly PathStep[]): JsonText | null {
    const span = this.span(steps);
    return span === undefined ? null : new JsonText(this.text, span[0], span[1], this.mode);
  }
  /** The [start, end) span of the value at a path (see `at`). */
  span(steps: readonly PathStep[]): [number, number] | undefined {
    if (steps.length === 0) return [this.start, this.end];
    const fast = findValid(this.text, this.start, steps);
    if (fast !== ESCAPED) return fast;
    const sc = new TextScanner(this.text);
    sc.i = this.start;
    return sc.find(steps, 0);
  }
  /** Spans of this array's elements (undefined: not an array). */
  elements(): [number, number][] | undefined {
    const i = this.lead();
    return this.text.charCodeAt(i) === 91 ? jsonTextElements(this.text, [i, this.end]) : undefined;
  }
}

/** findValid met a key with an escape: the caller compares keys unescaped (TextScanner). */
const ESCAPED = 0;

const isBlank = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13;

/** Index just past the string whose opening quote is at `i` (a valid text: it is closed). */
function validStringEnd(s: string, i: number): number {
  for (let j = i + 1; ; ) {
    const c = s.charCodeAt(j);
    if (c === 34) return j + 1;
    j += c === 92 ? 2 : 1;
  }
}

/** Index just past the value starting at `i` of a valid text (no checks: the text is valid). */
function skipValid(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 34) return validStringEnd(s, i);
  if (c === 123 || c === 91) {
    let depth = 1;
    for (i++; depth > 0; ) {
      const d = s.charCodeAt(i);
      if (d === 34) i = validStringEnd(s, i);
      else {
        if (d === 123 || d === 91) depth++;
        else if (d === 125 || d === 93) depth--;
        i++;
      }
    }
    return i;
  }
  const n = s.length;
  for (; i < n; i++) {
    const d = s.charCodeAt(i);
    if (d === 44 || d === 125 || d === 93 || isBlank(d)) break;
  }
  return i;
}

/**
 * The span of the value at a path in a valid JSON text, as TextScanner.find
 * finds it (the first of duplicate keys; an array's element by a number or a
 * digit string), in one pass over character codes that makes nothing; ESCAPED
 * when a key on the way has an escape (its unescaped form decides).
 */
function findValid(s: string, i: number, steps: readonly PathStep[]): [number, number] | undefined | typeof ESCAPED {
  for (let k = 0; ; k++) {
    while (isBlank(s.charCodeAt(i))) i++;
    if (k === steps.length) return [i, skipValid(s, i)];
    const st = steps[k]!;
    const c = s.charCodeAt(i);
    if (c === 123) {
      const want = typeof st === 'string' ? st : String(st);
      let found = false;
      i++;
      for (;;) {
        while (isBlank(s.charCodeAt(i))) i++;
        if (s.charCodeAt(i) !== 34) return undefined; // '}': not found
        // The key: equal to `want` character for character, or not.
        let j = i + 1;
        let m = 0;
        let same = true;
        for (;;) {
          const d = s.charCodeAt(j);
          if (d === 34) break;
          if (d === 92) return ESCAPED;
          if (same && (m >= want.length || d !== want.charCodeAt(m))) same = false;
          m++;
          j++;
        }
        i = j + 1;
        while (isBlank(s.charCodeAt(i))) i++;
        i++; // ':'
        while (isBlank(s.charCodeAt(i))) i++;
        if (same && m === want.length) {
          found = true;
          break;
        }
        i = skipValid(s, i);
        while (isBlank(s.charCodeAt(i))) i++;
        if (s.charCodeAt(i) !== 44) return undefined; // '}'
        i++;
      }
      if (found) continue;
    }
    if (c === 91) {
      const idx = arrayIndex(st);
      if (idx < 0) return undefined;
      i++;
      while (isBlank(s.charCodeAt(i))) i++;
      if (s.charCodeAt(i) === 93) return undefined;
      for (let n = 0; n < idx; n++) {
        i = skipValid(s, i);
        while (isBlank(s.charCodeAt(i))) i++;
        if (s.charCodeAt(i) !== 44) return undefined; // ']'
        i++;
        while (isBlank(s.charCodeAt(i))) i++;
      }
      continue;
    }
    return undefined;
  }
}

/** Whether a path has a key the parsed path must answer (one Object.prototype has: `__proto__`, `constructor`, ...). */
export function pathNeedsParse(steps: readonly PathStep[]): boolean {
  // A call's path is one array for all its rows (json.ts pathOrFail's cache): judged once.
  let r = needsParse.get(steps);
  if (r === undefined) {
    r = steps.some((st) => typeof st === 'string' && st in Object.prototype);
    needsParse.set(steps, r);
  }
  return r;
}

const needsParse = new WeakMap<readonly PathStep[], boolean>();

/**
 * The STRING JSON_VALUE makes of the value at `span` of a valid JSON text:
 * NULL for null, objects and arrays; a string unescaped; a number as the
 * parsed number prints (jsonToString); true / false.
 */
export function scalarOfValidText(t: JsonText, span: [number, number]): string | null {
  const s = t.text;
  let i = span[0];
  for (let c = s.charCodeAt(i); c === 32 || c === 9 || c === 10 || c === 13; c = s.charCodeAt(++i));
  const c = s.charCodeAt(i);
  if (c === 123 || c === 91 || c === 110) return null; // { [ null
  if (c === 116) return 'true';
  if (c === 102) return 'false';
  let e = span[1];
  for (let d = s.charCodeAt(e - 1); d === 32 || d === 9 || d === 10 || d === 13; d = s.charCodeAt(--e - 1));
  if (c === 34) {
    // Without an escape the text between the quotes is the string (a valid text has no control characters).
    for (let j = i + 1; j < e - 1; j++) if (s.charCodeAt(j) === 92) return JSON.parse(s.slice(i, e)) as string;
    return s.slice(i + 1, e - 1);
  }
  // An integer of at most 15 digits prints as written (no leading zero, no -0); any other number as parsed.
  if (isShortInt(s, i, e)) return s.slice(i, e);
  return jsonToString(new JsonText(s, i, e, t.mode).node);
}

/** Whether s[i, e) is 0 or an integer of 1 to 15 digits without a leading zero (either sign, not -0). */
function isShortInt(s: string, i: number, e: number): boolean {
  if (s.charCodeAt(i) === 45) i++;
  const n = e - i;
  if (n < 1 || n > 15) return false;
  const first = s.charCodeAt(i);
  if (first === 48) return n === 1 && s.charCodeAt(i - 1) !== 45;
  for (let j = i; j < e; j++) {
    const d = s.charCodeAt(j);
    if (d < 48 || d > 57) return false;
  }
  return true;
}

/** Checks `s` as parseJsonText parses it (the same errors) without making its values. */
export function checkJsonText(s: string, mode: WideNumberMode): void {
  const p = new JsonParser(s, mode);
  p.build = false;
  p.value();
  p.ws();
  if (p.i !== s.length) p.err();
}

export function jsonNumberFromText(text: string, mode: WideNumberMode): JsonNode {
  if (/^-?\d+$/.test(text)) {
    const b = BigInt(text);
    if (b >= -9007199254740991n && b <= 9007199254740991n) return Number(b);
    if (b >= -9223372036854775808n && b <= 18446744073709551615n) return b;
    // Beyond UINT64 the number is a double: exact mode keeps it when the double holds that very integer
    // (100000000000000000000 = 1e20 does; 12345678901234567890123 does not), as the reference judges it.
    const x = Number(text);
    if (!Number.isFinite(x)) fail(`Invalid input to PARSE_JSON: number overflow parsing '${text}'`);
    if (mode === 'exact' && BigInt(x) !== b) fail(`Invalid input to PARSE_JSON: Input number: ${text} cannot round-trip through string representation`);
    return x;
  }
  return fractionFromText(text, mode);
}

/** A JSON number with a fraction or an exponent. */
function fractionFromText(text: string, mode: WideNumberMode): JsonNode {
  const x = Number(text);
  // Beyond the double range no mode can keep the number (the reference: "number overflow").
  if (!Number.isFinite(x)) fail(`Invalid input to PARSE_JSON: number overflow parsing '${text}'`);
  // The double's shortest text being the input's own says they are the same value.
  if (mode === 'exact' && String(x) !== text && !decimalTextEqualsDouble(text, x)) {
    fail(`Invalid input to PARSE_JSON: Input number: ${text} cannot round-trip through string representation`);
  }
  return x;
}

function decimalTextEqualsDouble(text: string, x: number): boolean {
  // Exact when the shortest representation of x names the same decimal value.
  const norm = (s: string): string => {
    const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(s);
    if (!m) return s;
    let digits = (m[2]! + (m[3] ?? '')).replace(/^0+/, '');
    let exp = Number(m[4] ?? 0) - (m[3]?.length ?? 0);
    while (digits.endsWith('0')) {
      digits = digits.slice(0, -1);
      exp++;
    }
    return digits === '' ? '0' : `${m[1]}${digits}e${exp}`;
  };
  return norm(text) === norm(String(x).replace('e+', 'e'));
}

export function parseJsonText(s: string, mode: WideNumberMode = 'exact'): JsonNode {
  const p = new JsonParser(s, mode);
  let v: JsonNode;
  try {
    v = p.value();
    p.ws();
    if (p.i !== s.length) p.err();
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw e;
    throw e;
  }
  return v;
}

export function escapeJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c === 10) out += '\\n';
    else if (c === 13) out += '\\r';
    else if (c === 9) out += '\\t';
    else if (c === 8) out += '\\b';
    else if (c === 12) out += '\\f';
    else if (c < 0x20) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

export function jsonNumberString(x: number): string {
  return jsonDoubleText(x);
}

/** Canonical JSON text: compact, object keys sorted (the JSON type's normal form). */
export function jsonToString(v: JsonNode, sortKeys = true): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      return jsonNumberString(v);
    case 'bigint':
      return v.toString();
    case 'string':
      return escapeJsonString(v);
  }
  if (Array.isArray(v)) return '[' + v.map((x) => jsonToString(x, sortKeys)).join(',') + ']';
  const keys = Object.keys(v);
  if (sortKeys) keys.sort(compareUtf8);
  return '{' + keys.map((k) => escapeJsonString(k) + ':' + jsonToString(v[k]!, sortKeys)).join(',') + '}';
}

function compareUtf8(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Pretty form of TO_JSON_STRING(x, true): two-space indentation. */
export function jsonPretty(v: JsonNode, indent = ''): string {
  if (v === null || typeof v !== 'object') return jsonToString(v);
  const inner = indent + '  ';
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]';
    return '[\n' + v.map((x) => inner + jsonPretty(x, inner)).join(',\n') + '\n' + indent + ']';
  }
  const keys = Object.keys(v);
  if (keys.length === 0) return '{}';
  return '{\n' + keys.map((k) => inner + escapeJsonString(k) + ': ' + jsonPretty(v[k]!, inner)).join(',\n') + '\n' + indent + '}';
}

// ---------------------------------------------------------------- JSONPath

export type PathStep = string | number;

/**
 * Parses a JSONPath as the service reads one (the JSON functions page, "JSONPath format", and each function's
 * own page: the standard extractors escape a key as `."a.b"`, the legacy ones as `['a.b']`). Steps:
 *   `.name`: letters, digits, `_`, `-`, `:` and blanks (anything else needs the escaped form);
 *   `[token]`: digits, `_`, `-` in the standard functions; letters too in the legacy ones;
 *   `."key"` (standard only; `\"` escapes a quote) or `['key']` (legacy only; `\'` escapes a quote).
 * The legacy functions also take a trailing `.` (`$.` is the root). The grammar's details (which characters,
 * `[token]` read as a key or an index) are the reference implementation's: the documentation names the
 * operators only. Returns the steps, or the service's message for an invalid path.
 */
export function parseJsonPath(path: string, legacy: boolean): PathStep[] | string {
  if (!path.startsWith('$')) return "JSONPath must start with '$'";
  const steps: PathStep[] = [];
  let rest = path.slice(1);
  const offset = legacy ? LEGACY_OFFSET : STANDARD_OFFSET;
  const escKey = legacy ? LEGACY_ESC_KEY : STANDARD_ESC_KEY;
  for (;;) {
    let m = KEY.exec(rest);
    if (m) steps.push(m[1]!);
    else if ((m = offset.exec(rest))) steps.push(/^(?:0|[1-9]\d{0,14})$/.test(m[1]!) ? Number(m[1]) : m[1]!);
    else if ((m = escKey.exec(rest))) steps.push(m[1]!.replace(legacy ? /\\'/g : /\\"/g, legacy ? "'" : '"'));
    else break;
    rest = rest.slice(m[0].length);
  }
  if (rest === '' || (legacy && rest === '.')) return steps;
  const unsupported = /\*|\.\.|@/.exec(rest);
  return unsupported ? `Unsupported operator in JSONPath: ${unsupported[0]}` : `Invalid token in JSONPath at: ${rest}`;
}

const KEY = /^\.([\p{L}\p{N}_\-:\t\n\f\r ]+)/u;
const STANDARD_OFFSET = /^\[[\t\n\f\r ]*([\p{N}_\-]+)[\t\n\f\r ]*\]/u;
const LEGACY_OFFSET = /^\[[\t\n\f\r ]*([\p{L}\p{N}_\-]+)[\t\n\f\r ]*\]/u;
const STANDARD_ESC_KEY = /^\."((?:[^\\"]|\\"|\\[^"])*)"/u;
const LEGACY_ESC_KEY = /^\[[\t\n\f\r ]*'((?:[^\\']|\\'|\\[^'])*)'[\t\n\f\r ]*\]/u;

/**
 * The array index a step names: a number, or a key step's leading integer (`[1-]`, `.1a` are 1; `[-0]` is 0);
 * -1 (no element) when it has none or is negative (`[-1]`, `[_1]`). The reference's reading; the documentation
 * says only that a path naming no value gives NULL.
 */
export function arrayIndex(st: PathStep): number {
  if (typeof st === 'number') return st;
  const m = /^[\t\n\f\r ]*-?\d+/.exec(st);
  if (!m) return -1;
  const n = Number(m[0]);
  return n >= 0 ? Math.abs(n) : -1; // abs: `-0` is element 0
}

export function jsonAtPath(v: JsonNode, steps: readonly PathStep[]): JsonNode | undefined {
  let cur: JsonNode | undefined = v;
  for (const st of steps) {
    if (cur === null || cur === undefined || typeof cur !== 'object') return undefined;
    if (Array.isArray(cur)) {
      const idx = arrayIndex(st);
      if (idx < 0 || idx >= cur.length) return undefined;
      cur = cur[idx];
    } else {
      const k = String(st);
      if (!Object.prototype.hasOwnProperty.call(cur, k)) return undefined;
      cur = (cur as { [k: string]: JsonNode })[k];
    }
  }
  return cur;
}

/** JSON scalar as the STRING JSON_VALUE returns, or null for objects/arrays/null. */
export function scalarString(v: JsonNode | undefined): string | null {
  if (v === undefined || v === null || typeof v === 'object') return null;
  if (typeof v === 'string') return v;
  return jsonToString(v);
}

// The path functions over a JSON value: a JsonText is scanned (only the
// target's text is read; values around it are skipped, none made), any other
// value walked as parsed. Both give the same answers (test/sql/json-scan.test.ts).

/** JSON_QUERY / JSON_EXTRACT and subscripts over JSON: the value at the path, null when absent. */
export function jsonQueryOf(v: JsonValue, steps: readonly PathStep[]): JsonValue | null {
  if (v instanceof JsonText && v.scans() && !pathNeedsParse(steps)) return v.at(steps);
  const r = jsonAtPath(v.node, steps);
  return r === undefined ? null : new JsonValue(r);
}

/** JSON_VALUE / JSON_EXTRACT_SCALAR over JSON. */
export function jsonValueOf(v: JsonValue, steps: readonly PathStep[]): string | null {
  if (v instanceof JsonText && v.scans() && !pathNeedsParse(steps)) {
    const span = v.span(steps);
    return span === undefined ? null : scalarOfValidText(v, span);
  }
  return scalarString(jsonAtPath(v.node, steps));
}

/** JSON_QUERY_ARRAY / JSON_EXTRACT_ARRAY over JSON: the array's elements, null when not an array. */
export function jsonQueryArrayOf(v: JsonValue, steps: readonly PathStep[]): JsonValue[] | null {
  if (v instanceof JsonText && v.scans() && !pathNeedsParse(steps)) {
    const els = v.at(steps)?.elements();
    return els === undefined ? null : els.map((e) => new JsonText(v.text, e[0], e[1], v.mode));
  }
  const r = jsonAtPath(v.node, steps);
  return Array.isArray(r) ? r.map((e) => new JsonValue(e)) : null;
}

/** JSON_VALUE_ARRAY / JSON_EXTRACT_STRING_ARRAY over JSON: null when not an array of scalars. */
export function jsonValueArrayOf(v: JsonValue, steps: readonly PathStep[]): (string | null)[] | null {
  if (v instanceof JsonText && v.scans() && !pathNeedsParse(steps)) {
    const els = v.at(steps)?.elements();
    if (els === undefined) return null;
    const out: (string | null)[] = [];
    for (const e of els) {
      const c = v.text.charCodeAt(e[0]);
      if (c === 123 || c === 91) return null;
      out.push(scalarOfValidText(v, e));
    }
    return out;
  }
  const r = jsonAtPath(v.node, steps);
  if (!Array.isArray(r)) return null;
  const out: (string | null)[] = [];
  for (const e of r) {
    if (e !== null && typeof e === 'object') return null;
    out.push(scalarString(e));
  }
  return out;
}

export function jsonTypeName(v: JsonNode): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'boolean':
      return 'boolean';
    case 'number':
    case 'bigint':
      return 'number';
    case 'string':
      return 'string';
  }
  return 'object';
}

// ---------------------------------------------------------------- JSON-formatted STRING inputs

/**
 * The JSON_* functions read a JSON-formatted STRING as text, left to right, and
 * stop at the value the path names: what follows it is never validated, the
 * first of duplicate keys wins, key order and number spelling are kept.
 * Returns the [start, end) span of the value, or undefined when the path does
 * not match or the text is malformed before the value ends.
 */
export function jsonTextSpan(s: string, steps: readonly PathStep[]): [number, number] | undefined {
  const sc = new TextScanner(s);
  try {
    return sc.find(steps, 0);
  } catch (e) {
    if (e instanceof JsonSyntaxError) return undefined;
    throw e;
  }
}

/** Spans of the elements of the JSON array at `span` (undefined: not an array). */
export function jsonTextElements(s: string, span: [number, number]): [number, number][] | undefined {
  if (s[span[0]] !== '[') return undefined;
  const sc = new TextScanner(s);
  sc.i = span[0] + 1;
  const out: [number, number][] = [];
  try {
    sc.ws();
    if (s[sc.i] === ']') return out;
    for (;;) {
      sc.ws();
      const start = sc.i;
      sc.skipValue();
      out.push([start, sc.i]);
      sc.ws();
      if (s[sc.i] === ',') sc.i++;
      else if (s[sc.i] === ']') return out;
      else sc.err();
    }
  } catch (e) {
    if (e instanceof JsonSyntaxError) return undefined;
    throw e;
  }
}

/** The text of a span without the whitespace between tokens. */
export function minifyJsonText(s: string, span: [number, number]): string {
  let out = '';
  for (let i = span[0]; i < span[1]; i++) {
    const c = s[i]!;
    if (c === '"') {
      const j = TextScanner.stringEnd(s, i);
      const raw = s.slice(i, j);
      // Escapes are written canonically, as the reference re-serializes a string ("\u00e9" -> "é", "\/" -> "/").
      out += raw.includes('\\') ? reescape(raw) : raw;
      i = j - 1;
    } else if (c !== ' ' && c !== '\t' && c !== '\n' && c !== '\r') out += c;
  }
  return out;
}

function reescape(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw) as string);
  } catch {
    return raw;
  }
}

/** A scalar span as JSON_VALUE returns it: strings unescaped, numbers as written; NULL for null/containers. */
export function scalarFromText(s: string, span: [number, number]): string | null {
  const c = s[span[0]];
  if (c === '{' || c === '[') return null;
  const text = s.slice(span[0], span[1]);
  if (text === 'null') return null;
  if (c === '"') {
    try {
      return JSON.parse(text) as string;
    } catch {
      return null;
    }
  }
  return text;
}

/**
 * The end of the number or literal (true/false/null) starting at `i`, or -1:
 * the longest match of `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false|null`
 * within the 400 characters from `i` (the window the scanner always read).
 */
export function scalarTokenEnd(s: string, i: number): number {
  const lim = Math.min(s.length, i + 400);
  let j = i;
  if (j < lim && s.charCodeAt(j) === 45) j++;
  if (j < lim && s.charCodeAt(j) === 48) j++;
  else if (isDigit(s, j, lim)) while (isDigit(s, j, lim)) j++;
  else {
    if (j !== i) return -1;
    if (i + 4 <= lim && (s.startsWith('true', i) || s.startsWith('null', i))) return i + 4;
    if (i + 5 <= lim && s.startsWith('false', i)) return i + 5;
    return -1;
  }
  if (j < lim && s.charCodeAt(j) === 46 && isDigit(s, j + 1, lim)) {
    j += 2;
    while (isDigit(s, j, lim)) j++;
  }
  const e = s.charCodeAt(j);
  if (j < lim && (e === 101 || e === 69)) {
    let k = j + 1;
    const sign = s.charCodeAt(k);
    if (k < lim && (sign === 43 || sign === 45)) k++;
    if (isDigit(s, k, lim)) {
      while (isDigit(s, k, lim)) k++;
      j = k;
    }
  }
  return j;
}

function isDigit(s: string, j: number, lim: number): boolean {
  const c = s.charCodeAt(j);
  return j < lim && c >= 48 && c <= 57;
}

class TextScanner {
  i = 0;
  constructor(readonly s: string) {}

  err(): never {
    throw new JsonSyntaxError('malformed JSON text');
  }

  ws(): void {
    const s = this.s;
    let i = this.i;
    for (let c = s.charCodeAt(i); c === 32 || c === 9 || c === 10 || c === 13; c = s.charCodeAt(++i));
    this.i = i;
  }

  /** Index just past the closing quote of the string starting at `i` (or the text's end). */
  static stringEnd(s: string, i: number): number {
    let j = i + 1;
    const n = s.length;
    for (let c = s.charCodeAt(j); j < n && c !== 34; c = s.charCodeAt(j)) j += c === 92 ? 2 : 1;
    return Math.min(j + 1, n);
  }

  /** Whether the string at `i` (passed) is `want`, without making the string when it has no escapes. */
  stringEquals(want: string): boolean {
    const start = this.i;
    if (!this.scanString()) return this.parsedString(start) === want;
    return this.i - start - 2 === want.length && this.s.startsWith(want, start + 1);
  }

  /**
   * Moves past the string at `i`; true when it has no escapes or control
   * characters (then JSON.parse would return the text between the quotes as it is).
   */
  private scanString(): boolean {
    const s = this.s;
    const start = this.i;
    if (s.charCodeAt(start) !== 34) this.err();
    const end = TextScanner.stringEnd(s, start);
    if (s.charCodeAt(end - 1) !== 34 || end - 1 === start) this.err();
    this.i = end;
    for (let j = start + 1; j < end - 1; j++) {
      const c = s.charCodeAt(j);
      if (c < 32 || c === 92) return false;
    }
    return true;
  }

  /** The string scanned from `start` to `i`, through JSON.parse (escapes; malformed text raises). */
  private parsedString(start: number): string {
    try {
      return JSON.parse(this.s.slice(start, this.i)) as string;
    } catch {
      return this.err();
    }
  }

  /** `depth`: containers around this value (a deeper one is an error, not a stack overflow). */
  skipValue(depth = 0): void {
    this.ws();
    const s = this.s;
    const c = s[this.i];
    if (c === '"') {
      const start = this.i;
      if (!this.scanString()) this.parsedString(start);
      return;
    }
    if (c === '{' || c === '[') {
      if (depth >= MAX_JSON_NESTING) fail(JSON_NESTING_ERROR);
      const close = c === '{' ? '}' : ']';
      this.i++;
      this.ws();
      if (s[this.i] === close) {
        this.i++;
        return;
      }
      for (;;) {
        this.ws();
        if (c === '{') {
          const start = this.i;
          if (!this.scanString()) this.parsedString(start);
          this.ws();
          if (s[this.i] !== ':') this.err();
          this.i++;
        }
        this.skipValue(depth + 1);
        this.ws();
        if (s[this.i] === ',') this.i++;
        else if (s[this.i] === close) {
          this.i++;
          return;
        } else this.err();
      }
    }
    const end = scalarTokenEnd(s, this.i);
    if (end < 0) this.err();
    this.i = end;
  }

  find(steps: readonly PathStep[], k: number): [number, number] | undefined {
    this.ws();
    if (k === steps.length) {
      const start = this.i;
      this.skipValue();
      return [start, this.i];
    }
    const s = this.s;
    const st = steps[k]!;
    if (s[this.i] === '{') {
      this.i++;
      this.ws();
      if (s[this.i] === '}') return undefined;
      const want = String(st);
      for (;;) {
        this.ws();
        const found = this.stringEquals(want);
        this.ws();
        if (s[this.i] !== ':') this.err();
        this.i++;
        if (found) return this.find(steps, k + 1);
        this.skipValue();
        this.ws();
        if (s[this.i] === ',') this.i++;
        else if (s[this.i] === '}') return undefined;
        else this.err();
      }
    }
    if (s[this.i] === '[') {
      const idx = arrayIndex(st);
      if (idx < 0) return undefined;
      this.i++;
      this.ws();
      if (s[this.i] === ']') return undefined;
      for (let n = 0; ; n++) {
        if (n === idx) return this.find(steps, k + 1);
        this.skipValue();
        this.ws();
        if (s[this.i] === ',') this.i++;
        else if (s[this.i] === ']') return undefined;
        else this.err();
      }
    }
    return undefined;
  }
}
