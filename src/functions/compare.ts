// Value ordering and equality with GoogleSQL semantics, shared by operators,
// GREATEST/LEAST, MIN/MAX, ARRAY functions and the executor (sort keys).
import type { SqlType } from '../types/types.js';
import { Decimal, Interval, JsonValue, RangeValue, type Value } from '../types/values.js';

/**
 * Strings order by code point (= UTF-8 byte order). JS compares UTF-16 code
 * units, which differs only when a surrogate meets a BMP char >= U+E000.
 */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      const xs = x >= 0xd800 && x <= 0xdfff;
      const ys = y >= 0xd800 && y <= 0xdfff;
      // A surrogate is part of a code point above U+FFFF, beyond any BMP char.
      if (xs !== ys) return xs ? 1 : -1;
      return x < y ? -1 : 1;
    }
  }
  return a.length - b.length < 0 ? -1 : a.length === b.length ? 0 : 1;
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

const MICROS_PER_DAY = 86400000000n;
/** Intervals compare as months*30 days + days, then micros (ZetaSQL's IntervalValue ordering). */
export function intervalKey(iv: Interval): bigint {
  return (BigInt(iv.months) * 30n + BigInt(iv.days)) * MICROS_PER_DAY + iv.micros;
}

/**
 * Total order for sorting: NULL first, then NaN, then numbers (the service's
 * ORDER BY order). Returns <0, 0, >0. Both values have the same static type.
 */
export function compareValues(a: Value, b: Value): number {
  if (a === null) return b === null ? 0 : -1;
  if (b === null) return 1;
  switch (typeof a) {
    case 'number': {
      const y = b as number;
      if (a < y) return -1;
      if (a > y) return 1;
      if (a === y) return 0;
      const an = Number.isNaN(a);
      const bn = Number.isNaN(y);
      return an === bn ? 0 : an ? -1 : 1;
    }
    case 'bigint':
      return a < (b as bigint) ? -1 : a > (b as bigint) ? 1 : 0;
    case 'string':
      return compareStrings(a, b as string);
    case 'boolean':
      return a === b ? 0 : a ? 1 : -1;
  }
  if (a instanceof Decimal) return a.cmp(b as Decimal);
  if (a instanceof Uint8Array) return compareBytes(a, b as Uint8Array);
  if (a instanceof Interval) {
    const x = intervalKey(a);
    const y = intervalKey(b as Interval);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a instanceof RangeValue) {
    const rb = b as RangeValue;
    // Unbounded start sorts first, unbounded end sorts last.
    const s = a.start === null ? (rb.start === null ? 0 : -1) : rb.start === null ? 1 : compareValues(a.start, rb.start);
    if (s !== 0) return s;
    return a.end === null ? (rb.end === null ? 0 : 1) : rb.end === null ? -1 : compareValues(a.end, rb.end);
  }
  if (Array.isArray(a)) {
    const y = b as Value[];
    const n = Math.min(a.length, y.length);
    for (let i = 0; i < n; i++) {
      const c = compareValues(a[i]!, y[i]!);
      if (c !== 0) return c;
    }
    return a.length - y.length;
  }
  if (a instanceof JsonValue) return compareStrings(JSON.stringify(a.node, jsonReplacer), JSON.stringify((b as JsonValue).node, jsonReplacer));
  return 0;
}

function jsonReplacer(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? v.toString() : v;
}

/**
 * SQL `=`: null when either side is NULL or (for arrays/structs) when a NULL
 * element decides; NaN is unequal to everything.
 */
export function sqlEquals(a: Value, b: Value): boolean | null {
  if (a === null || b === null) return null;
  if (typeof a === 'number') return a === (b as number);
  if (typeof a === 'bigint' || typeof a === 'string' || typeof a === 'boolean') return a === b;
  if (a instanceof Decimal) return a.eq(b as Decimal);
  if (a instanceof Uint8Array) return compareBytes(a, b as Uint8Array) === 0;
  if (a instanceof Interval) return intervalKey(a) === intervalKey(b as Interval);
  if (a instanceof RangeValue) {
    const rb = b as RangeValue;
    return groupEquals(a.start, rb.start) && groupEquals(a.end, rb.end);
  }
  if (Array.isArray(a)) {
    const y = b as Value[];
    if (a.length !== y.length) return false;
    let sawNull = false;
    for (let i = 0; i < a.length; i++) {
      const e = sqlEquals(a[i]!, y[i]!);
      if (e === false) return false;
      if (e === null) sawNull = true;
    }
    return sawNull ? null : true;
  }
  return compareValues(a, b) === 0;
}

/** Equality for grouping/DISTINCT/IS NOT DISTINCT FROM: NULL = NULL and NaN = NaN. */
export function groupEquals(a: Value, b: Value): boolean {
  if (a === null || b === null) return a === b;
  if (typeof a === 'number') return a === b || (Number.isNaN(a) && Number.isNaN(b as number));
  if (Array.isArray(a)) {
    const y = b as Value[];
    if (a.length !== y.length) return false;
    for (let i = 0; i < a.length; i++) if (!groupEquals(a[i]!, y[i]!)) return false;
    return true;
  }
  if (a instanceof RangeValue) {
    const rb = b as RangeValue;
    return groupEquals(a.start, rb.start) && groupEquals(a.end, rb.end);
  }
  return sqlEquals(a, b) === true;
}

/** A string key that is equal exactly for groupEquals-equal values (hash tables, DISTINCT). */
export function valueKey(v: Value): string {
  if (v === null) return 'N';
  switch (typeof v) {
    case 'number':
      return Number.isNaN(v) ? 'fNaN' : Object.is(v, -0) ? 'f0' : 'f' + v;
    case 'bigint':
      return 'i' + v;
    case 'string':
      return 's' + v;
    case 'boolean':
      return v ? 'T' : 'F';
  }
  if (v instanceof Decimal) return 'd' + v.toString();
  if (v instanceof Uint8Array) return 'b' + Buffer.from(v).toString('base64');
  if (v instanceof Interval) return 'v' + intervalKey(v);
  if (v instanceof RangeValue) return 'r(' + valueKey(v.start) + ',' + valueKey(v.end) + ')';
  if (Array.isArray(v)) return '[' + v.map(valueKey).join(',') + ']';
  if (v instanceof JsonValue) return 'j' + JSON.stringify(v.node, jsonReplacer);
  return '?';
}

export function isComparableType(t: SqlType): boolean {
  return t.kind !== 'JSON' && t.kind !== 'GEOGRAPHY';
}
