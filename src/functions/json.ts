// JSON functions over the JSON type (JsonValue) and JSON-formatted STRINGs.
import { formatDouble } from './format-number.js';
import { T, arrayOf, type SqlType } from '../types/types.js';
import { Decimal, Interval, JsonValue, RangeValue, type JsonNode, type Value } from '../types/values.js';
import { formatDate, formatTime, splitMicros } from './civil.js';
import { formatTimestampPicosRfc3339 } from '../types/picos.js';
import {
  JsonSyntaxError,
  JsonText,
  checkJsonText,
  jsonAtPath,
  jsonQueryArrayOf,
  jsonQueryOf,
  jsonValueArrayOf,
  jsonValueOf,
  jsonPretty,
  jsonTextElements,
  jsonTextSpan,
  minifyJsonText,
  scalarFromText,
  jsonToString,
  jsonTypeName,
  parseJsonPath,
  arrayIndex,
  parseJsonText,
  type PathStep,
  type WideNumberMode,
} from './json-core.js';
import { formatDecimal } from './numeric.js';
import { parseFloat64 } from './conversion.js';
import { defineScalar, named, opt, rep, sig, sigf } from './signature.js';
import type { ArgInfo } from './registry.js';
import { fail, rowKernel } from './vec.js';

// ---------------------------------------------------------------- SQL value -> JSON

function timestampJson(ts: bigint): string {
  const [d, t] = splitMicros(ts);
  return `${formatDate(d)}T${formatTime(t)}Z`;
}

/** SQL value -> JSON node (TO_JSON, JSON_OBJECT, JSON_ARRAY, TO_JSON_STRING). */
export function valueToJson(v: Value, t: SqlType, opts: { stringifyWide?: boolean; fn?: string; jsonString?: boolean } = {}): JsonNode {
  if (v === null) return null;
  switch (t.kind) {
    case 'BOOL':
      return v as boolean;
    case 'INT64': {
      // Exact: a safe integer as a number, beyond that a bigint (a JSON number is never a rounded double).
      const b = v as bigint;
      if (b >= -9007199254740991n && b <= 9007199254740991n) return Number(b);
      if (b >= -9007199254740992n && b <= 9007199254740992n) return b;
      return opts.stringifyWide || opts.jsonString ? b.toString() : b;
    }
    case 'FLOAT64': {
      const x = v as number;
      if (Number.isNaN(x)) return 'NaN';
      if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
      // -0.0 becomes 0: a SQL value made JSON is canonicalized (the reference's ToJson canonicalize_zero).
      return x === 0 ? 0 : x;
    }
    case 'NUMERIC':
    case 'BIGNUMERIC': {
      const d = v as Decimal;
      const x = d.toNumber();
      const integral = d.isInteger();
      // TO_JSON_STRING: a number only for an integer within +-2^53, otherwise a string.
      if (opts.jsonString) return integral && d.abs().lte(9007199254740992) ? BigInt(d.toFixed()) : formatDecimal(d);
      const exactDouble = new Decimal(x).eq(d);
      if (opts.stringifyWide && !(exactDouble && Math.abs(x) <= 9007199254740992)) return formatDecimal(d);
      if (integral) {
        const b = BigInt(d.toFixed());
        if (b >= -9223372036854775808n && b <= 18446744073709551615n) return Number.isSafeInteger(x) ? x : b;
      }
      // A JSON number holds an integer or a double; anything else would lose digits.
      if (!exactDouble) fail(`Invalid input to ${opts.fn ?? 'TO_JSON'}: Failed to convert type ${t.kind} to JSON`);
      return x;
    }
    case 'STRING':
      return v as string;
    case 'BYTES':
      return Buffer.from(v as Uint8Array).toString('base64');
    case 'DATE':
      return formatDate(v as number);
    case 'TIME':
      return formatTime(v as number);
    case 'DATETIME': {
      const [d, tm] = splitMicros(v as bigint);
      return `${formatDate(d)}T${formatTime(tm)}`;
    }
    case 'TIMESTAMP':
      return timestampJson(v as bigint);
    case 'TIMESTAMP_PICOS':
      return formatTimestampPicosRfc3339(v as bigint);
    case 'INTERVAL':
      return isoInterval(v as Interval);
    case 'JSON':
      return (v as JsonValue).node;
    case 'ARRAY':
      return (v as Value[]).map((e) => valueToJson(e, t.element, opts));
    case 'STRUCT': {
      const o: { [k: string]: JsonNode } = {};
      // a repeated field name keeps its first value (TO_JSON omits the duplicates)
      (v as Value[]).forEach((e, i) => {
        const f = t.fields[i]!;
        if (!Object.prototype.hasOwnProperty.call(o, f.name)) o[f.name] = valueToJson(e, f.type, opts);
      });
      return o;
    }
    case 'RANGE': {
      const r = v as RangeValue;
      return { start: valueToJson(r.start, t.element, opts), end: valueToJson(r.end, t.element, opts) };
    }
    case 'GEOGRAPHY':
      return String((v as { wkt?: string }).wkt ?? '');
  }
  return null;
}

/** ISO 8601 duration of an INTERVAL, as its JSON encoding: P-2Y-1M, P1DT5H30M, PT10H20M30.52S. */
function isoInterval(iv: Interval): string {
  const months = Number(iv.months);
  const y = Math.trunc(months / 12);
  const mo = months % 12;
  const days = Number(iv.days);
  const micros = BigInt(iv.micros);
  const neg = micros < 0n;
  const abs = neg ? -micros : micros;
  const h = abs / 3600000000n;
  const mi = (abs / 60000000n) % 60n;
  const sec = (abs / 1000000n) % 60n;
  const frac = abs % 1000000n;
  const sg = neg ? '-' : '';
  let out = 'P';
  if (y) out += `${y}Y`;
  if (mo) out += `${mo}M`;
  if (days) out += `${days}D`;
  let time = '';
  if (h) time += `${sg}${h}H`;
  if (mi) time += `${sg}${mi}M`;
  if (sec || frac) time += `${sg}${sec}${frac ? '.' + frac.toString().padStart(6, '0').replace(/0+$/, '') : ''}S`;
  if (time) out += 'T' + time;
  return out === 'P' ? 'PT0S' : out;
}

/** TO_JSON_STRING keeps struct field order (it serializes the value, not a JSON object). */
function toJsonStringOrdered(v: Value, t: SqlType, pretty: boolean, indent = ''): string {
  if (v === null) return 'null';
  if (t.kind === 'STRUCT' || t.kind === 'ARRAY') {
    const inner = indent + '  ';
    if (t.kind === 'ARRAY') {
      const els = (v as Value[]).map((e) => toJsonStringOrdered(e, t.element, pretty, inner));
      if (!pretty || els.length === 0) return '[' + els.join(',') + ']';
      return '[\n' + els.map((e) => inner + e).join(',\n') + '\n' + indent + ']';
    }
    const parts = (v as Value[]).map((e, i) => {
      const f = t.fields[i]!;
      return jsonToString(f.name) + (pretty ? ': ' : ':') + toJsonStringOrdered(e, f.type, pretty, inner);
    });
    if (!pretty || parts.length === 0) return '{' + parts.join(',') + '}';
    return '{\n' + parts.map((p) => inner + p).join(',\n') + '\n' + indent + '}';
  }
  const node = valueToJson(v, t, { jsonString: true });
  if (t.kind === 'JSON') return pretty ? jsonPretty(node, indent) : jsonToString(node);
  // A finite FLOAT64 is written as CAST(x AS STRING) writes it (the reference's TO_JSON_STRING):
  // 1e+15, 0.33333333333333331, 4.94065645841247e-324; -0 as 0.
  if (t.kind === 'FLOAT64' && typeof node === 'number') return formatDouble(node === 0 ? 0 : node);
  return jsonToString(node);
}

// ---------------------------------------------------------------- JSON -> SQL

function wideMode(v: Value | undefined): WideNumberMode {
  if (v === undefined) return 'exact';
  const m = String(v);
  if (m !== 'exact' && m !== 'round') fail(`Invalid \`wide_number_mode\` specified: ${m}`);
  return m;
}

function parseJsonOrFail(s: string, mode: WideNumberMode, fn = 'PARSE_JSON'): JsonNode {
  try {
    return parseJsonText(s, mode);
  } catch (e) {
    if (e instanceof JsonSyntaxError) fail(`Invalid input to ${fn}: ${e.message}`);
    throw e;
  }
}

/** Parsed paths by text, per mode: a call's path is a literal, so rows parse it once (bounded: cleared past 256 paths). */
const pathCache = [new Map<string, readonly PathStep[]>(), new Map<string, readonly PathStep[]>()];

function pathOrFail(p: string, legacy: boolean): readonly PathStep[] {
  // Paths come from arguments some signatures leave untyped (JSON_SET's pairs) or NULL.
  if (typeof p !== 'string') fail('JSONPath must be a string literal or query parameter');
  const cache = pathCache[legacy ? 1 : 0]!;
  const hit = cache.get(p);
  if (hit !== undefined) return hit;
  const steps = parseJsonPath(p, legacy);
  if (typeof steps === 'string') fail(steps);
  if (cache.size >= 256) cache.clear();
  cache.set(p, steps);
  return steps;
}

/**
 * A path argument must be known before the rows are read: a string literal, a query parameter, or an untyped
 * NULL literal. The reference refuses a column or an expression, and in the extractors `CAST(NULL AS STRING)`
 * too (the mutators take it); the documentation only ever writes a path as a literal.
 */
function constantPath(a: ArgInfo | undefined, typedNull: boolean): boolean {
  if (a === undefined || a.untypedNull || (a as { isParameter?: boolean }).isParameter) return true;
  return a.constant !== undefined && (typedNull || a.constant.value !== null);
}

/** The extractors' path (argument 2). */
const extractorPath = (args: readonly ArgInfo[]): string | undefined =>
  constantPath(args[1], false) ? undefined : 'JSONPath must be a string literal or query parameter';

/** The mutators' paths: every (or every other) one of the unnamed arguments after the JSON value. */
const mutatorPaths = (fn: string, everyOther: boolean) => (args: readonly ArgInfo[]): string | undefined => {
  for (let i = 1, k = 0; i < args.length; i++) {
    if (args[i]!.name !== undefined) continue;
    if ((!everyOther || k % 2 === 0) && !constantPath(args[i], true)) return `Argument ${i + 1} to ${fn} must be a literal or query parameter`;
    k++;
  }
  return undefined;
};

/** "lax [recursive] $..." modifiers of JSON_QUERY; undefined when the path has none. */
function laxModifiers(p: string): { recursive: boolean; rest: string } | undefined {
  const m = /^\s*((?:[A-Za-z]+\s+)+)(\$.*)$/s.exec(p);
  if (!m) return undefined;
  const words = m[1]!.trim().toLowerCase().split(/\s+/);
  if (new Set(words).size !== words.length || words.some((w) => w !== 'lax' && w !== 'recursive'))
    fail("JSONPath must start with zero or more unique modifiers followed by '$'");
  if (!words.includes('lax')) fail("JSONPath must start with zero or more unique modifiers followed by '$'");
  return { recursive: words.includes('recursive'), rest: m[2]! };
}

/** Lax evaluation: arrays are looked through for member access; a non-array is its own element 0. */
function laxQuery(root: JsonNode, steps: readonly PathStep[], recursive: boolean): JsonNode[] {
  let cur: JsonNode[] = [root];
  const unwrap = (n: JsonNode, out: JsonNode[], depth: number): void => {
    if (Array.isArray(n) && (recursive || depth === 0)) for (const e of n) unwrap(e, out, depth + 1);
    else out.push(n);
  };
  for (const st of steps) {
    const next: JsonNode[] = [];
    for (const n of cur) {
      if (typeof st === 'number') {
        if (Array.isArray(n)) {
          if (st < n.length) next.push(n[st]!);
        } else if (st === 0) next.push(n);
        continue;
      }
      const cands: JsonNode[] = [];
      unwrap(n, cands, 0);
      for (const c of cands)
        if (c !== null && typeof c === 'object' && !Array.isArray(c) && Object.prototype.hasOwnProperty.call(c, st)) next.push((c as { [k: string]: JsonNode })[st]!);
    }
    cur = next;
  }
  return cur;
}

export function registerJson(): void {
  // Extraction, both legacy (JSON_EXTRACT*) and standard (JSON_QUERY/JSON_VALUE).
  for (const [name, legacy] of [
    ['JSON_QUERY', false],
    ['JSON_EXTRACT', true],
  ] as const) {
    // The path is required here (the pages' JSON_QUERY(json, path), JSON_EXTRACT(json, path)); the other extractors default it to '$'.
    defineScalar(name, [
      sig(['STRING', 'STRING'], 'STRING', rowKernel(T.STRING, (v) => {
        const text = v[0] as string;
        const span = jsonTextSpan(text, pathOrFail(v[1] as string, legacy));
        if (!span) return null;
        const out = minifyJsonText(text, span);
        // A JSON-formatted STRING yields SQL NULL for a JSON null (the JSON type keeps JSON null).
        return out === 'null' ? null : out;
      })),
      sig(['JSON', 'STRING'], 'JSON', rowKernel(T.JSON, (v) => {
        const p = v[1] as string;
        const lax = legacy ? undefined : laxModifiers(p);
        if (lax) return new JsonValue(laxQuery((v[0] as JsonValue).node, pathOrFail(lax.rest, false), lax.recursive));
        return jsonQueryOf(v[0] as JsonValue, pathOrFail(p, legacy));
      })),
    ], { validate: extractorPath });
  }
  for (const [name, legacy] of [
    ['JSON_VALUE', false],
    ['JSON_EXTRACT_SCALAR', true],
  ] as const) {
    defineScalar(name, [
      sig(['STRING', opt('STRING')], 'STRING', rowKernel(T.STRING, (v) => {
        const text = v[0] as string;
        const span = jsonTextSpan(text, pathOrFail(v.length > 1 ? (v[1] as string) : '$', legacy));
        return span ? scalarFromText(text, span) : null;
      })),
      sig(['JSON', opt('STRING')], 'STRING', rowKernel(T.STRING, (v) => jsonValueOf(v[0] as JsonValue, pathOrFail(v.length > 1 ? (v[1] as string) : '$', legacy)))),
    ], { validate: extractorPath });
  }
  for (const [name, legacy] of [
    ['JSON_QUERY_ARRAY', false],
    ['JSON_EXTRACT_ARRAY', true],
  ] as const) {
    defineScalar(name, [
      sig(['STRING', opt('STRING')], 'ARRAY<STRING>', rowKernel(arrayOf(T.STRING), (v) => {
        const text = v[0] as string;
        const span = jsonTextSpan(text, pathOrFail(v.length > 1 ? (v[1] as string) : '$', legacy));
        const els = span && jsonTextElements(text, span);
        return els ? els.map((e) => minifyJsonText(text, e)) : null;
      })),
      sig(['JSON', opt('STRING')], 'ARRAY<JSON>', rowKernel(arrayOf(T.JSON), (v) => jsonQueryArrayOf(v[0] as JsonValue, pathOrFail(v.length > 1 ? (v[1] as string) : '$', legacy)))),
    ], { validate: extractorPath });
  }
  for (const [name, legacy] of [
    ['JSON_VALUE_ARRAY', false],
    ['JSON_EXTRACT_STRING_ARRAY', true],
  ] as const) {
    defineScalar(name, [
      sig(['STRING', opt('STRING')], 'ARRAY<STRING>', rowKernel(arrayOf(T.STRING), (v) => {
        const text = v[0] as string;
        const span = jsonTextSpan(text, pathOrFail(v.length > 1 ? (v[1] as string) : '$', legacy));
        const els = span && jsonTextElements(text, span);
        if (!els) return null;
        const out: Value[] = [];
        for (const e of els) {
          const c = text[e[0]];
          if (c === '{' || c === '[') return null;
          out.push(scalarFromText(text, e));
        }
        return out;
      })),
      sig(['JSON', opt('STRING')], 'ARRAY<STRING>', rowKernel(arrayOf(T.STRING), (v) => jsonValueArrayOf(v[0] as JsonValue, pathOrFail(v.length > 1 ? (v[1] as string) : '$', legacy)))),
    ], { validate: extractorPath });
  }

  defineScalar('PARSE_JSON', [
    sigf(['STRING', named('wide_number_mode', 'STRING')], 'JSON', () => rowKernel(T.JSON, (v) => new JsonValue(parseJsonOrFail(v[0] as string, wideMode(v[1]))))),
  ]);
  // PARSE_JSON under a field access (analyzer fieldAccess): the text checked whole, its values made only where read (JsonText).
  defineScalar('$parse_json_lazy', [
    sigf(['STRING', opt('STRING')], 'JSON', () =>
      rowKernel(T.JSON, (v) => {
        const s = v[0] as string;
        const mode = wideMode(v[1]);
        try {
          checkJsonText(s, mode);
        } catch (e) {
          if (e instanceof JsonSyntaxError) fail(`Invalid input to PARSE_JSON: ${e.message}`);
          throw e;
        }
        return new JsonText(s, 0, s.length, mode);
      }),
    ),
  ]);
  defineScalar('TO_JSON', [
    sigf(['ANY', named('stringify_wide_numbers', 'BOOL')], 'JSON', (c) => {
      const t = c.argTypes[0]!;
      return rowKernel(T.JSON, (v) => new JsonValue(valueToJson(v[0]!, t, { stringifyWide: v[1] === true })), false);
    }),
  ]);
  defineScalar('TO_JSON_STRING', [
    sigf(['ANY', opt('BOOL')], 'STRING', (c) => {
      const t = c.argTypes[0]!;
      // json_functions (TO_JSON_STRING): a NULL pretty_print gives NULL whatever the value.
      return rowKernel(T.STRING, (v) => (v.length > 1 && v[1] === null ? null : toJsonStringOrdered(v[0]!, t, v[1] === true)), false);
    }),
  ]);
  defineScalar('JSON_TYPE', [sig(['JSON'], 'STRING', rowKernel(T.STRING, (v) => jsonTypeName((v[0] as JsonValue).node)))]);

  // Typed extractors
  defineScalar('BOOL', [
    sig(['JSON'], 'BOOL', rowKernel(T.BOOL, (v) => {
      const n = (v[0] as JsonValue).node;
      if (typeof n !== 'boolean') fail('The provided JSON input is not a boolean');
      return n;
    })),
  ]);
  const toInt = (n: JsonNode, strict: boolean): bigint | null => {
    if (typeof n === 'bigint') {
      if (n > 9223372036854775807n || n < -9223372036854775808n) return strict ? fail(`The provided JSON number: ${n} cannot be converted to an int64`) : null;
      return n;
    }
    if (typeof n === 'number') {
      // An integral double past INT64's range (9.3e18) is as unconvertible as a fraction.
      if (!Number.isInteger(n) || n >= 2 ** 63 || n < -(2 ** 63)) return strict ? fail(`The provided JSON number: ${jsonToString(n)} cannot be converted to an integer`) : null;
      return BigInt(n);
    }
    return strict ? fail('The provided JSON input is not an integer') : null;
  };
  defineScalar('INT64', [sig(['JSON'], 'INT64', rowKernel(T.INT64, (v) => toInt((v[0] as JsonValue).node, true)))]);
  defineScalar('FLOAT64', [
    sig(['JSON', named('wide_number_mode', 'STRING')], 'FLOAT64', rowKernel(T.FLOAT64, (v) => {
      // Not null-propagating (a NULL mode is checked below), but a NULL JSON is NULL.
      if (v[0] === null) return null;
      const n = (v[0] as JsonValue).node;
      const mode = wideMode(v[1] ?? 'round');
      if (typeof n === 'number') return n;
      if (typeof n === 'bigint') {
        const x = Number(n);
        if (mode === 'exact' && BigInt(x) !== n) fail(`JSON number: ${n} cannot be converted to FLOAT64 without loss of precision`);
        return x;
      }
      fail('The provided JSON input is not a number');
    }, false)),
  ]);
  defineScalar('LAX_BOOL', [
    sig(['JSON'], 'BOOL', rowKernel(T.BOOL, (v) => {
      const n = (v[0] as JsonValue).node;
      if (typeof n === 'boolean') return n;
      if (typeof n === 'string') return n.toLowerCase() === 'true' ? true : n.toLowerCase() === 'false' ? false : null;
      if (typeof n === 'number') return n !== 0;
      if (typeof n === 'bigint') return n !== 0n;
      return null;
    })),
  ]);
  defineScalar('LAX_INT64', [
    sig(['JSON'], 'INT64', rowKernel(T.INT64, (v) => {
      const n = (v[0] as JsonValue).node;
      if (typeof n === 'boolean') return n ? 1n : 0n;
      if (typeof n === 'bigint') return n <= 9223372036854775807n && n >= -9223372036854775808n ? n : null;
      let x: number;
      if (typeof n === 'number') x = n;
      else if (typeof n === 'string') {
        if (!/^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(n)) return null;
        x = Number(n);
      } else return null;
      const r = x < 0 ? -Math.round(-x) : Math.round(x);
      if (!Number.isFinite(r) || Math.abs(r) >= 9223372036854775808) return null;
      return BigInt(r);
    })),
  ]);
  defineScalar('LAX_FLOAT64', [
    sig(['JSON'], 'FLOAT64', rowKernel(T.FLOAT64, (v) => {
      const n = (v[0] as JsonValue).node;
      if (typeof n === 'number') return n;
      if (typeof n === 'bigint') return Number(n);
      // A JSON string reads as CAST(string AS FLOAT64) reads it, hexadecimal included ('"0x10"' is 16: the reference).
      if (typeof n === 'string') return parseFloat64(n) ?? null;
      return null;
    })),
  ]);
  defineScalar('LAX_STRING', [
    sig(['JSON'], 'STRING', rowKernel(T.STRING, (v) => {
      const n = (v[0] as JsonValue).node;
      if (typeof n === 'string') return n;
      if (n === null || typeof n === 'object') return null;
      return jsonToString(n);
    })),
  ]);

  // Construction
  defineScalar('JSON_ARRAY', [
    sigf([rep('ANY')], 'JSON', (c) => rowKernel(T.JSON, (v) => new JsonValue(v.map((x, i) => valueToJson(x, c.argTypes[i]!, { fn: 'JSON_ARRAY' }))), false)),
  ]);
  defineScalar('JSON_OBJECT', [
    sigf(['ARRAY<STRING>', 'ARRAY'], 'JSON', (c) => {
      const et = (c.argTypes[1] as { element: SqlType }).element;
      return rowKernel(T.JSON, (v) => {
        const ks = v[0] as Value[] | null;
        const vs = v[1] as Value[] | null;
        if (ks === null) fail('Invalid input to JSON_OBJECT: The keys array cannot be NULL');
        if (vs === null) fail('Invalid input to JSON_OBJECT: The values array cannot be NULL');
        if (ks.length !== vs.length) fail('Invalid input to JSON_OBJECT: The number of keys and values must match');
        const o: { [k: string]: JsonNode } = {};
        ks.forEach((k, i) => {
          if (k === null) fail('Invalid input to JSON_OBJECT: A key cannot be NULL');
          if (!Object.prototype.hasOwnProperty.call(o, k as string)) o[k as string] = valueToJson(vs[i]!, et, { fn: 'JSON_OBJECT' });
        });
        return new JsonValue(o);
      }, false);
    }),
    sigf([rep('ANY')], 'JSON', (c) => rowKernel(T.JSON, (v) => {
      const o: { [k: string]: JsonNode } = {};
      for (let i = 0; i < v.length; i += 2) {
        if (v[i] === null) fail('Invalid input to JSON_OBJECT: A key cannot be NULL');
        const k = v[i] as string;
        if (!Object.prototype.hasOwnProperty.call(o, k)) o[k] = valueToJson(v[i + 1]!, c.argTypes[i + 1]!, { fn: 'JSON_OBJECT' });
      }
      return new JsonValue(o);
    }, false), (c) => c.argTypes.length % 2 === 0 && c.argTypes.every((t, i) => i % 2 === 1 || t.kind === 'STRING' || c.args[i]?.untypedNull === true)),
  ]);

  // Mutation
  const clone = (n: JsonNode): JsonNode => (n === null || typeof n !== 'object' ? n : Array.isArray(n) ? n.map(clone) : Object.fromEntries(Object.entries(n).map(([k, x]) => [k, clone(x)])));
  defineScalar('JSON_REMOVE', [
    sig(['JSON', rep('STRING')], 'JSON', rowKernel(T.JSON, (v) => {
      if (v[0] === null) return null;
      let root = clone((v[0] as JsonValue).node);
      for (let i = 1; i < v.length; i++) {
        if (v[i] === null) continue;
        const steps = pathOrFail(v[i] as string, false);
        if (steps.length === 0) fail("Invalid input to JSON_REMOVE: The JSONPath cannot be '$'");
        const parent = jsonAtPath(root, steps.slice(0, -1));
        const last = steps[steps.length - 1]!;
        if (parent === undefined || parent === null || typeof parent !== 'object') continue;
        if (Array.isArray(parent)) {
          const idx = arrayIndex(last);
          if (idx >= 0 && idx < parent.length) parent.splice(idx, 1);
        } else delete (parent as { [k: string]: JsonNode })[String(last)];
      }
      return new JsonValue(root);
    }, false)),
  ], { validate: mutatorPaths('JSON_REMOVE', false) });
  defineScalar('JSON_SET', [
    sigf(['JSON', rep('ANY'), named('create_if_missing', 'BOOL')], 'JSON', (c) => rowKernel(T.JSON, (v) => {
      if (v[0] === null) return null;
      let create = true;
      const pairs: number[] = [];
      v.forEach((x, i) => {
        if (i === 0) return;
        if (c.args[i]?.name) create = x as boolean;
        else pairs.push(i);
      });
      // create_if_missing => NULL: every set operation is ignored.
      if (create === null) return v[0];
      let root = clone((v[0] as JsonValue).node);
      for (let k = 0; k + 1 < pairs.length; k += 2) {
        const i = pairs[k]!;
        if (v[i] === null) continue; // a NULL path skips its pair
        const steps = pathOrFail(v[i] as string, false);
        const val = valueToJson(v[i + 1]!, c.argTypes[i + 1]!, { fn: 'JSON_SET' });
        if (steps.length === 0) {
          root = val;
          continue;
        }
        // A JSON null where a container is needed becomes one (only when creating).
        const fresh = (next: PathStep): JsonNode => (typeof next === 'number' ? [] : {});
        if (root === null) {
          if (!create) continue;
          root = fresh(steps[0]!);
        }
        let cur: JsonNode = root;
        for (let s = 0; s < steps.length; s++) {
          const st = steps[s]!;
          const isLast = s === steps.length - 1;
          if (cur === null || typeof cur !== 'object') break;
          if (Array.isArray(cur)) {
            if (typeof st !== 'number') break;
            if (!create && st >= cur.length) break;
            while (cur.length < st) cur.push(null);
            if (isLast) cur[st] = val;
            else {
              if (cur[st] === undefined || cur[st] === null) {
                if (!create) break;
                cur[st] = fresh(steps[s + 1]!);
              }
              cur = cur[st]!;
            }
          } else {
            if (typeof st === 'number') break;
            const o = cur as { [k: string]: JsonNode };
            const has = Object.prototype.hasOwnProperty.call(o, st);
            if (!create && !has) break;
            if (isLast) o[st] = val;
            else {
              if (!has || o[st] === null) {
                if (!create) break;
                o[st] = fresh(steps[s + 1]!);
              }
              cur = o[st]!;
            }
          }
        }
      }
      return new JsonValue(root);
    }, false)),
  ], { validate: mutatorPaths('JSON_SET', true) });
  // JSON_STRIP_NULLS(json [, path] [, include_arrays => BOOL] [, remove_empty => BOOL])
  const strip = (n: JsonNode, arrays: boolean, empty: boolean): JsonNode | undefined => {
    if (n === null) return undefined;
    if (Array.isArray(n)) {
      // Without include_arrays an array keeps its elements (nulls and emptied values too); objects inside are still stripped.
      if (!arrays) return n.map((x) => (x === null ? null : strip(x, arrays, empty) ?? (Array.isArray(x) ? [] : {})));
      const r: JsonNode[] = [];
      for (const x of n) {
        const y = strip(x, arrays, empty);
        if (y !== undefined) r.push(y);
      }
      return empty && r.length === 0 ? undefined : r;
    }
    if (typeof n === 'object' && typeof n !== 'bigint') {
      const o: { [k: string]: JsonNode } = {};
      for (const [k, x] of Object.entries(n)) {
        const y = strip(x, arrays, empty);
        if (y !== undefined) o[k] = y;
      }
      return empty && Object.keys(o).length === 0 ? undefined : o;
    }
    return n;
  };
  defineScalar('JSON_STRIP_NULLS', [
    sigf(['JSON', opt('STRING'), named('include_arrays', 'BOOL'), named('remove_empty', 'BOOL')], 'JSON', (c) => rowKernel(T.JSON, (v) => {
      if (v[0] === null) return null;
      // json_functions (JSON_STRIP_NULLS): a NULL json_path, include_arrays or remove_empty returns the input.
      if (v.some((x, i) => i > 0 && x === null)) return v[0];
      let path = '$', arrays = true, empty = false;
      v.forEach((x, i) => {
        const at = c.assign[i];
        if (at === 1) path = x as string;
        else if (at === 2) arrays = x !== false;
        else if (at === 3) empty = x === true;
      });
      const root = clone((v[0] as JsonValue).node);
      const steps = pathOrFail(path, false);
      if (steps.length === 0) {
        // everything stripped: the result is JSON null, not SQL NULL
        const r = strip(root, arrays, empty);
        return new JsonValue(r === undefined ? null : r);
      }
      const parent = jsonAtPath(root, steps.slice(0, -1));
      const last = steps[steps.length - 1]!;
      if (parent !== null && parent !== undefined && typeof parent === 'object') {
        const container = parent as { [k: string]: JsonNode } & JsonNode[];
        const key = Array.isArray(parent) ? Number(last) : String(last);
        const cur = (container as Record<string | number, JsonNode>)[key];
        if (cur !== undefined) {
          const r = strip(cur, arrays, empty);
          (container as Record<string | number, JsonNode>)[key] = r === undefined ? null : r;
        }
      }
      return new JsonValue(root);
    }, false)),
  ]);
  /** Puts `x` at the (existing) location `steps` of `root`; returns the new root. */
  const replaceAt = (root: JsonNode, steps: readonly PathStep[], x: JsonNode): JsonNode => {
    if (steps.length === 0) return x;
    const parent = jsonAtPath(root, steps.slice(0, -1)) as Record<string | number, JsonNode>;
    parent[steps[steps.length - 1]!] = x;
    return root;
  };
  const arrayMod = (insert: boolean) =>
    sigf(['JSON', rep('ANY'), named(insert ? 'insert_each_element' : 'append_each_element', 'BOOL')], 'JSON', (c) => rowKernel(T.JSON, (v) => {
      if (v[0] === null) return null;
      let root = clone((v[0] as JsonValue).node);
      // The trailing named flag (default true) spreads an ARRAY value into separate elements.
      let each = true;
      const pairs: number[] = [];
      let eachNull = false;
      v.forEach((x, i) => {
        if (i === 0) return;
        if (c.args[i]?.name) {
          each = x !== false;
          eachNull = x === null;
        } else pairs.push(i);
      });
      // json_functions (JSON_ARRAY_APPEND/INSERT): a NULL flag returns the input, a NULL path skips its pair.
      if (eachNull) return v[0];
      for (let k = 0; k + 1 < pairs.length; k += 2) {
        const i = pairs[k]!;
        if (v[i] === null) continue;
        const steps = pathOrFail(v[i] as string, false);
        const vt = c.argTypes[i + 1]!;
        const vals: JsonNode[] = each && vt.kind === 'ARRAY' && v[i + 1] !== null
          ? (v[i + 1] as Value[]).map((e) => valueToJson(e, (vt as { element: SqlType }).element))
          : [valueToJson(v[i + 1]!, vt)];
        // A JSON null at the target becomes an array (padded with nulls for INSERT).
        if (insert) {
          const idx = steps[steps.length - 1];
          if (typeof idx !== 'number') continue;
          const at = steps.slice(0, -1);
          let parent = jsonAtPath(root, at);
          if (parent === null) {
            parent = [];
            root = replaceAt(root, at, parent);
          }
          if (Array.isArray(parent)) {
            while (parent.length < idx) parent.push(null);
            parent.splice(idx, 0, ...vals);
          }
        } else {
          const target = jsonAtPath(root, steps);
          if (Array.isArray(target)) target.push(...vals);
          else if (target === null) root = replaceAt(root, steps, [...vals]);
        }
      }
      return new JsonValue(root);
    }, false));
  // (path, value) pairs must be complete.
  const pairsComplete = (fn: string) => (args: readonly ArgInfo[]) =>
    args.filter((a, i) => i > 0 && a.name === undefined).length % 2 === 1 ? `Call to function ${fn} is missing repeated arguments.` : undefined;
  defineScalar('JSON_ARRAY_APPEND', [arrayMod(false)], { validate: (a) => pairsComplete('JSON_ARRAY_APPEND')(a) ?? mutatorPaths('JSON_ARRAY_APPEND', true)(a) });
  defineScalar('JSON_ARRAY_INSERT', [arrayMod(true)], { validate: (a) => pairsComplete('JSON_ARRAY_INSERT')(a) ?? mutatorPaths('JSON_ARRAY_INSERT', true)(a) });
  // JSON_FLATTEN: the non-array values directly in the input or inside consecutively nested arrays.
  defineScalar('JSON_FLATTEN', [
    sig(['JSON'], 'ARRAY<JSON>', rowKernel(arrayOf(T.JSON), (v) => {
      const out: JsonValue[] = [];
      const walk = (n: JsonNode): void => {
        if (Array.isArray(n)) for (const e of n) walk(e);
        else out.push(new JsonValue(n));
      };
      walk((v[0] as JsonValue).node);
      return out;
    })),
  ]);
  defineScalar('JSON_KEYS', [
    sigf(['JSON', opt('INT64'), named('mode', 'STRING')], 'ARRAY<STRING>', (c) => rowKernel(arrayOf(T.STRING), (v) => {
      let max = Infinity;
      let mode = 'strict';
      v.forEach((x, i) => {
        if (c.assign[i] === 1) max = x === null ? Infinity : Number(x as bigint);
        else if (c.assign[i] === 2) mode = String(x).toLowerCase();
      });
      // json_functions (JSON_KEYS): a NULL json_expr or mode gives NULL; a NULL max_depth is ignored.
      if (v[0] === null || v.some((x, i) => c.assign[i] === 2 && x === null)) return null;
      if (max <= 0) fail('max_depth must be positive.');
      if (mode !== 'strict' && mode !== 'lax' && mode !== 'lax recursive') fail(`Invalid mode: ${mode}`);
      const keys = new Set<string>();
      const walk = (n: JsonNode, prefix: string, depth: number, inArray = 0): void => {
        if (depth > max || n === null || typeof n !== 'object') return;
        if (Array.isArray(n)) {
          // strict: arrays are opaque; lax: look through one array level; lax recursive: any.
          if (mode === 'strict' || (mode === 'lax' && inArray > 0)) return;
          for (const e of n) walk(e, prefix, depth, inArray + 1);
          return;
        }
        for (const [k, x] of Object.entries(n)) {
          const name = prefix + (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : jsonToString(k));
          keys.add(name);
          walk(x, name + '.', depth + 1);
        }
      };
      walk((v[0] as JsonValue).node, '', 1);
      return [...keys].sort();
    }, false)),
  ]);
}
