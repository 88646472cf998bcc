// Row comparators over precomputed key vectors: the sort, top-N, window and
// aggregate ORDER BY all sort an index array with these. One closure per key
// (chosen by physical layout), never one per row.
import type { Value } from '../types/values.js';
import type { Vector } from '../types/vector.js';
import { compareFloats, compareValues } from './values-compare.js';

export interface KeySpec {
  readonly descending: boolean;
  readonly nullsFirst: boolean;
}

export type RowComparator = (a: number, b: number) => number;

/** Comparator of one key: NULL placement by `nullsFirst` (independent of direction), then value order. */
export function keyComparator(v: Vector, spec: KeySpec): RowComparator {
  const nulls = v.nulls;
  const sign = spec.descending ? -1 : 1;
  const nullA = spec.nullsFirst ? -1 : 1;
  const d = v.data;
  let cmp: RowComparator;
  if (d instanceof Float64Array) {
    cmp = (a, b) => {
      const x = d[a]!;
      const y = d[b]!;
      return x < y ? -sign : x > y ? sign : x === y ? 0 : sign * compareFloats(x, y);
    };
  } else if (d instanceof Int32Array || d instanceof Uint8Array) {
    cmp = (a, b) => {
      const x = d[a]!;
      const y = d[b]!;
      return x < y ? -sign : x > y ? sign : 0;
    };
  } else if (d instanceof BigInt64Array) {
    cmp = (a, b) => {
      const x = d[a]!;
      const y = d[b]!;
      return x < y ? -sign : x > y ? sign : 0;
    };
  } else {
    const vals = d as Value[];
    const t = v.type;
    cmp = (a, b) => sign * compareValues(vals[a]!, vals[b]!, t);
  }
  if (nulls === null) return cmp;
  return (a, b) => {
    const na = nulls[a] === 1;
    const nb = nulls[b] === 1;
    if (na || nb) return na === nb ? 0 : na ? nullA : -nullA;
    return cmp(a, b);
  };
}

/** Lexicographic comparator over several keys, with row index as the final tie-break (stable). */
export function rowsComparator(keys: readonly Vector[], specs: readonly KeySpec[]): RowComparator {
  const cs = keys.map((k, i) => keyComparator(k, specs[i]!));
  if (cs.length === 1) {
    const c0 = cs[0]!;
    return (a, b) => c0(a, b) || a - b;
  }
  return (a, b) => {
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i]!(a, b);
      if (c !== 0) return c;
    }
    return a - b;
  };
}

/** Same as rowsComparator without the stability tie-break: 0 means peers. */
export function peersComparator(keys: readonly Vector[], specs: readonly KeySpec[]): RowComparator {
  const cs = keys.map((k, i) => keyComparator(k, specs[i]!));
  return (a, b) => {
    for (let i = 0; i < cs.length; i++) {
      const c = cs[i]!(a, b);
      if (c !== 0) return c;
    }
    return 0;
  };
}

/** Sorts row indexes 0..n-1 (stable). */
export function sortIndexes(n: number, cmp: RowComparator): Int32Array {
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  idx.sort(cmp);
  return idx;
}
