// Logical bytes: the size the service bills a value by (its "data size
// calculation": INT64 8, NUMERIC 16, STRING 2 + its UTF-8 bytes, STRUCT and
// ARRAY the sum of what they hold, GEOGRAPHY 16 + 24 per vertex, ...; a NULL
// of any type 0). Storage keeps each column chunk's total (fragment files) so
// that job statistics need no read of the values.
import type { SqlType } from './types.js';
import { jsonValueText } from './json-values.js';
import type { Geography, JsonValue, Value } from './values.js';
import { getValue, type Vector } from './vector.js';

/** Bytes of every non-NULL value of a fixed-width type; undefined for the types whose size varies by value. */
export function fixedBytes(t: SqlType): number | undefined {
  switch (t.kind) {
    case 'BOOL':
      return 1;
    case 'NUMERIC':
    case 'INTERVAL':
    case 'RANGE':
      return 16;
    case 'BIGNUMERIC':
      return 32;
    case 'STRING':
    case 'BYTES':
    case 'JSON':
    case 'GEOGRAPHY':
    case 'ARRAY':
    case 'STRUCT':
      return undefined;
    default:
      return 8;
  }
}

/** A value's size by a nominal 10 bytes per variable-width value (where no stored total exists: time travel, older files). */
export function nominalBytes(t: SqlType): number {
  if (t.kind === 'STRUCT') return t.fields.reduce((n, f) => n + nominalBytes(f.type), 0);
  if (t.kind === 'ARRAY') return nominalBytes(t.element);
  return fixedBytes(t) ?? 10;
}

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Vertices of a geography: its WKT's coordinate pairs (points of every ring and line). */
function vertices(wkt: string): number {
  const numbers = wkt.match(/[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/g);
  return numbers ? numbers.length >> 1 : 0;
}

/** The logical bytes of one value of type `t` (0 for NULL). */
export function valueBytes(t: SqlType, v: Value): number {
  if (v === null) return 0;
  switch (t.kind) {
    case 'STRING':
      return 2 + utf8Bytes(v as string);
    case 'BYTES':
      return 2 + (v as Uint8Array).length;
    case 'JSON':
      return utf8Bytes(jsonValueText(v as JsonValue));
    case 'GEOGRAPHY':
      return 16 + 24 * vertices((v as Geography).wkt);
    case 'ARRAY': {
      let n = 0;
      for (const x of v as Value[]) n += valueBytes(t.element, x);
      return n;
    }
    case 'STRUCT': {
      let n = 0;
      const fields = v as Value[];
      for (let i = 0; i < t.fields.length; i++) n += valueBytes(t.fields[i]!.type, fields[i] ?? null);
      return n;
    }
    default:
      return fixedBytes(t)!;
  }
}

/** Whole vectors' totals: rows held in memory are measured for every statement that reads them until they are folded into files. */
const measured = new WeakMap<Vector, number>();

/** The logical bytes of a vector's rows [from, to), less the rows at `skip` (ascending positions within the vector). */
export function vectorBytes(v: Vector, from = 0, to = v.length, skip: ArrayLike<number> = []): number {
  const whole = from === 0 && to === v.length && skip.length === 0;
  if (whole) {
    const known = measured.get(v);
    if (known !== undefined) return known;
  }
  const n = measure(v, from, to, skip);
  if (whole) measured.set(v, n);
  return n;
}

function measure(v: Vector, from: number, to: number, skip: ArrayLike<number>): number {
  const width = fixedBytes(v.type);
  let k = 0;
  while (k < skip.length && skip[k]! < from) k++;
  if (width !== undefined && v.nulls === null) {
    let skipped = 0;
    for (let j = k; j < skip.length && skip[j]! < to; j++) skipped++;
    return width * (to - from - skipped);
  }
  let n = 0;
  for (let i = from; i < to; i++) {
    if (k < skip.length && skip[k] === i) {
      k++;
      continue;
    }
    if (v.nulls !== null && v.nulls[i] === 1) continue;
    n += width ?? valueBytes(v.type, getValue(v, i));
  }
  return n;
}
