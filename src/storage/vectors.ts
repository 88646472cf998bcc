// Column vectors <-> arrays of storage forms (codec.ts), with typed-array
// fast paths: WAL records and parquet fragments both go through here.
import type { SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { getValue, layoutOf, vectorFromValues, type Vector } from '../types/vector.js';
import { fromStored, toStored, type Stored } from './codec.js';

export function vectorToStored(v: Vector): Stored[] {
  const n = v.length;
  const out = new Array<Stored>(n);
  const nulls = v.nulls;
  const d = v.data;
  const layout = layoutOf(v.type);
  if ((layout === 'i64' || layout === 'i32' || layout === 'f64') && !(d instanceof BigInt64Array) && v.type.kind !== 'FLOAT64') {
    const a = d as Float64Array | Int32Array;
    for (let i = 0; i < n; i++) out[i] = nulls !== null && nulls[i] === 1 ? null : a[i]!;
    return out;
  }
  if (layout === 'bool') {
    const a = d as Uint8Array;
    for (let i = 0; i < n; i++) out[i] = nulls !== null && nulls[i] === 1 ? null : a[i] === 1;
    return out;
  }
  if (layout === 'values' && (v.type.kind === 'STRING' || v.type.kind === 'GEOGRAPHY') && v.type.kind === 'STRING') {
    const a = d as Value[];
    for (let i = 0; i < n; i++) out[i] = a[i] as string | null;
    return out;
  }
  for (let i = 0; i < n; i++) out[i] = toStored(v.type, getValue(v, i));
  return out;
}

export function storedToVector(type: SqlType, s: readonly Stored[]): Vector {
  const n = s.length;
  const layout = layoutOf(type);
  if (layout === 'f64' || layout === 'i32' || layout === 'i64') {
    let plain = type.kind !== 'FLOAT64' || s.every((x) => x === null || typeof x === 'number');
    if (layout === 'i64') plain = s.every((x) => x === null || typeof x === 'number');
    if (plain) {
      const data = layout === 'i32' ? new Int32Array(n) : new Float64Array(n);
      let nulls: Uint8Array | null = null;
      for (let i = 0; i < n; i++) {
        const x = s[i];
        if (x === null || x === undefined) {
          nulls ??= new Uint8Array(n);
          nulls[i] = 1;
        } else data[i] = x as number;
      }
      return { type, length: n, data, nulls };
    }
  }
  const vals = new Array<Value>(n);
  for (let i = 0; i < n; i++) vals[i] = fromStored(type, s[i]);
  return vectorFromValues(type, vals);
}

/** A vector of n NULLs (a column added after these rows were written). */
export function nullVector(type: SqlType, n: number): Vector {
  if (type.kind === 'ARRAY') return vectorFromValues(type, new Array<Value>(n).fill([]));
  return vectorFromValues(type, new Array<Value>(n).fill(null));
}
