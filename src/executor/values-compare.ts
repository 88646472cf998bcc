// Equality, ordering and hashing of scalar values (values.ts forms) with the
// GoogleSQL rules: grouping equality treats NULL = NULL, NaN = NaN, -0 = +0;
// ordering puts NaN before every other FLOAT64 and compares STRING by code
// point. Typed-array columns bypass these (see hash.ts, sort-keys.ts); these
// serve the `values` layout and nested STRUCT/ARRAY values.
import type { SqlType } from '../types/types.js';
import { Decimal, Interval, JsonValue, RangeValue, Geography, type Value } from '../types/values.js';
import { hashWordsAt, wordsOfDecimalInto } from '../types/decimal-words.js';

export function valuesEqual(a: Value, b: Value, t: SqlType): boolean {
  if (a === null || b === null) return a === b;
  switch (t.kind) {
    case 'FLOAT64': {
      const x = a as number;
      const y = b as number;
      return x === y || (x !== x && y !== y);
    }
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return (a as Decimal).eq(b as Decimal);
    case 'BYTES':
      return bytesCompare(a as Uint8Array, b as Uint8Array) === 0;
    case 'ARRAY': {
      const x = a as Value[];
      const y = b as Value[];
      if (x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) if (!valuesEqual(x[i]!, y[i]!, t.element)) return false;
      return true;
    }
    case 'STRUCT': {
      const x = a as Value[];
      const y = b as Value[];
      for (let i = 0; i < t.fields.length; i++) if (!valuesEqual(x[i]!, y[i]!, t.fields[i]!.type)) return false;
      return true;
    }
    case 'INTERVAL': {
      // Equal as compared: 1 month = 30 days, 1 day = 24 h (GROUP BY, DISTINCT, joins).
      return intervalMicros(a as Interval) === intervalMicros(b as Interval);
    }
    case 'RANGE': {
      const x = a as RangeValue;
      const y = b as RangeValue;
      return valuesEqual(x.start, y.start, t.element) && valuesEqual(x.end, y.end, t.element);
    }
    case 'JSON':
      return jsonText(a) === jsonText(b);
    case 'GEOGRAPHY':
      return (a as Geography).wkt === (b as Geography).wkt;
    default:
      return a === b;
  }
}

function jsonText(v: Value): string {
  return v instanceof JsonValue ? JSON.stringify(v.node, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x)) : String(v);
}

/** STRING ordering by Unicode code point (JS `<` compares UTF-16 units, which differs above U+FFFF). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x !== y) {
      // Surrogates (D800-DFFF) encode code points above FFFF: lift them above E000-FFFF.
      if (x >= 0xd800 && y >= 0xd800) {
        x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
        y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
      }
      return x < y ? -1 : 1;
    }
  }
  return a.length - b.length < 0 ? -1 : a.length === b.length ? 0 : 1;
}

export function bytesCompare(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

/** FLOAT64 order: NaN first, then numbers ascending (-0 = +0). */
export function compareFloats(x: number, y: number): number {
  if (x < y) return -1;
  if (x > y) return 1;
  if (x === y) return 0;
  const xn = x !== x;
  const yn = y !== y;
  return xn === yn ? 0 : xn ? -1 : 1;
}

function intervalMicros(v: Interval): bigint {
  // The service compares intervals after normalizing 1 month = 30 days, 1 day = 24 h.
  return (BigInt(v.months) * 30n + BigInt(v.days)) * 86_400_000_000n + v.micros;
}

/**
 * Total order over non-NULL values of one type, NULLs first; STRUCT/ARRAY
 * compare lexicographically (used for partitioning, never user-visible ORDER BY of those types).
 */
export function compareValues(a: Value, b: Value, t: SqlType): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  switch (t.kind) {
    case 'FLOAT64':
    case 'TIME':
    case 'DATE':
      return compareFloats(a as number, b as number);
    case 'INT64':
    case 'DATETIME':
    case 'TIMESTAMP': {
      const x = a as bigint;
      const y = b as bigint;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 'STRING':
      return compareStrings(a as string, b as string);
    case 'BYTES':
      return bytesCompare(a as Uint8Array, b as Uint8Array);
    case 'BOOL':
      return a === b ? 0 : a === false ? -1 : 1;
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return (a as Decimal).cmp(b as Decimal);
    case 'INTERVAL': {
      const x = intervalMicros(a as Interval);
      const y = intervalMicros(b as Interval);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case 'RANGE': {
      const x = a as RangeValue;
      const y = b as RangeValue;
      // An unbounded (NULL) start sorts first, an unbounded end last.
      const e = x.end === null || y.end === null ? (x.end === y.end ? 0 : x.end === null ? 1 : -1) : compareValues(x.end, y.end, t.element);
      return compareValues(x.start, y.start, t.element) || e;
    }
    case 'ARRAY': {
      const x = a as Value[];
      const y = b as Value[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const c = compareValues(x[i]!, y[i]!, t.element);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    }
    case 'STRUCT': {
      const x = a as Value[];
      const y = b as Value[];
      for (let i = 0; i < t.fields.length; i++) {
        const c = compareValues(x[i]!, y[i]!, t.fields[i]!.type);
        if (c !== 0) return c;
      }
      return 0;
    }
    default: {
      const x = jsonText(a);
      const y = jsonText(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
  }
}

// ---------------------------------------------------------------- hashing

const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const big64 = new BigInt64Array(1);
const bigU32 = new Uint32Array(big64.buffer);

export const NULL_HASH = 0x2f0e1d3b | 0;
const NAN_HASH = 0x7ff80001 | 0;

export function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/** Hash of a double, with NaN and -0 normalized (INT64 values hash through here too, so layouts agree). */
export function hashDouble(x: number): number {
  if (x !== x) return NAN_HASH;
  if (x === 0) return 0x1b873593;
  if ((x | 0) === x) return mix32(x);
  f64[0] = x;
  return mix32(u32[0]! ^ mix32(u32[1]!));
}

export function hashBigint(x: bigint): number {
  if (x <= 9007199254740992n && x >= -9007199254740992n) return hashDouble(Number(x));
  big64[0] = x;
  return mix32(bigU32[0]! ^ mix32(bigU32[1]! + 0x27d4eb2d));
}

export function hashString(s: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return mix32(h ^ s.length);
}

export function combineHash(h: number, v: number): number {
  return (Math.imul(h, 31) + v) | 0;
}

/** Scratch words of a boxed NUMERIC / BIGNUMERIC being hashed. */
const HASH_WORDS = new Uint32Array(8);

export function hashValue(v: Value, t: SqlType): number {
  if (v === null) return NULL_HASH;
  switch (t.kind) {
    case 'FLOAT64':
    case 'TIME':
      return hashDouble(v as number);
    case 'DATE':
      return mix32(v as number);
    case 'INT64':
    case 'DATETIME':
    case 'TIMESTAMP':
      return hashBigint(v as bigint);
    case 'BOOL':
      return v === true ? 0x3c6ef372 : 0x1f83d9ab;
    case 'STRING':
      return hashString(v as string);
    case 'BYTES': {
      const b = v as Uint8Array;
      let h = 0x811c9dc5 | 0;
      for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i]!, 16777619);
      return mix32(h ^ b.length);
    }
    case 'NUMERIC':
    case 'BIGNUMERIC': {
      // The hash of its words, as keys held as words hash (hash.ts); a value without words (none in range) by its text.
      const width = t.kind === 'NUMERIC' ? 4 : 8;
      return wordsOfDecimalInto(v as Decimal, width, HASH_WORDS, 0) ? hashWordsAt(HASH_WORDS, 0, width) : hashString((v as Decimal).toString());
    }
    case 'ARRAY': {
      let h = 0x6a09e667 | 0;
      for (const e of v as Value[]) h = combineHash(h, hashValue(e, t.element));
      return mix32(h);
    }
    case 'STRUCT': {
      let h = 0x3c6ef372 | 0;
      const x = v as Value[];
      for (let i = 0; i < t.fields.length; i++) h = combineHash(h, hashValue(x[i]!, t.fields[i]!.type));
      return mix32(h);
    }
    case 'INTERVAL': {
      return mix32(hashBigint(intervalMicros(v as Interval)));
    }
    case 'RANGE': {
      const x = v as RangeValue;
      return mix32(combineHash(hashValue(x.start, t.element), hashValue(x.end, t.element)));
    }
    case 'GEOGRAPHY':
      return hashString((v as Geography).wkt);
    default:
      return hashString(jsonText(v));
  }
}

/** A string key for a tuple of values (caches keyed by correlated bindings; not a hot path). */
export function tupleKey(values: readonly Value[]): string {
  return JSON.stringify(values, (_k, x: unknown) => {
    if (typeof x === 'bigint') return `${x}n`;
    if (typeof x === 'number' && !Number.isFinite(x)) return `${x}f`;
    if (Object.is(x, -0)) return 0;
    if (x instanceof Uint8Array) return `b:${Buffer.from(x).toString('base64')}`;
    if (x instanceof Decimal) return `d:${x.toString()}`;
    if (x instanceof Interval) return `i:${x.months}/${x.days}/${x.micros}`;
    if (x instanceof JsonValue) return `j:${jsonText(x)}`;
    if (x instanceof Geography) return `g:${x.wkt}`;
    return x;
  });
}
