import { describe, expect, it } from 'vitest';
import { T } from '../types/types.js';
import type { Vector } from '../types/vector.js';
import { rowsComparator, sortIndexes, sortRows, type KeySpec } from './sort-keys.js';

function vec(n: number, f: (i: number) => number | null, type = T.FLOAT64): Vector {
  const d = new Float64Array(n);
  const nulls = new Uint8Array(n);
  let any = false;
  for (let i = 0; i < n; i++) {
    const x = f(i);
    if (x === null) {
      nulls[i] = 1;
      any = true;
    } else d[i] = x;
  }
  return { type, length: n, data: d, nulls: any ? nulls : null };
}

describe('sortRows (rank fast path) agrees with the comparator sort', () => {
  const n = 5000;
  let seed = 42;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const keysets: [string, Vector[]][] = [
    ['fractional with NULL/NaN/-0', [vec(n, () => { const r = rnd(); return r < 0.1 ? null : r < 0.15 ? NaN : r < 0.2 ? -0 : Math.round(rnd() * 100) / 7; })]],
    ['integral + fractional', [vec(n, () => Math.floor(rnd() * 50), T.INT64), vec(n, () => (rnd() < 0.05 ? null : rnd()))]],
    ['huge integral range', [vec(n, () => Math.floor(rnd() * 2 ** 50), T.INT64)]],
    // Radix over the doubles' bits: sign flips, infinities, tiny and huge magnitudes, duplicates.
    ['signed with infinities and duplicates', [vec(n, () => { const r = rnd(); return r < 0.05 ? -Infinity : r < 0.1 ? Infinity : r < 0.2 ? -1e-300 : r < 0.3 ? 2.5 : (rnd() - 0.5) * 10 ** Math.floor(rnd() * 30); })]],
    // First key nearly unique: one rank pass, then ties (runs of a few rows) by the second key.
    ['few ties on the first key', [vec(n, () => (rnd() < 0.02 ? null : Math.floor(rnd() * 3000) / 3), T.FLOAT64), vec(n, () => (rnd() < 0.05 ? null : Math.floor(rnd() * 10)))]],
    ['unique first key', [vec(n, (i) => (i * 7919) % n, T.INT64), vec(n, () => rnd())]],
    ['wide DATE range (Int32Array)', [{ type: T.DATE, length: n, data: Int32Array.from({ length: n }, () => Math.floor((rnd() - 0.5) * 4e6)), nulls: null }]],
  ];
  const specsets: KeySpec[][] = [
    [{ descending: false, nullsFirst: true }, { descending: true, nullsFirst: false }],
    [{ descending: true, nullsFirst: true }, { descending: false, nullsFirst: false }],
  ];
  for (const [label, keys] of keysets) {
    for (const specs of specsets) {
      it(`${label} ${JSON.stringify(specs.slice(0, keys.length))}`, () => {
        const s = specs.slice(0, keys.length);
        expect(Array.from(sortRows(keys, s, n))).toEqual(Array.from(sortIndexes(n, rowsComparator(keys, s))));
      });
    }
  }
});
