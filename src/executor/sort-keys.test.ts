import { describe, expect, it } from 'vitest';
import { T } from '../types/types.js';
import type { Vector } from '../types/vector.js';
import { compareStrings } from '../functions/compare.js';
import { rowsComparator, sortIndexes, sortRows, thresholdComparator, type KeySpec } from './sort-keys.js';

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

function strVec(n: number, f: (i: number) => string | null): Vector {
  const d: (string | null)[] = new Array(n);
  const nulls = new Uint8Array(n);
  let any = false;
  for (let i = 0; i < n; i++) {
    d[i] = f(i);
    if (d[i] === null) {
      nulls[i] = 1;
      any = true;
    }
  }
  return { type: T.STRING, length: n, data: d, nulls: any ? nulls : null };
}

/** Reference order for one string key, independent of sort-keys.ts: code points via compareStrings. */
function refStringCmp(v: Vector, spec: KeySpec): (a: number, b: number) => number {
  const d = v.data as (string | null)[];
  return (a, b) => {
    const x = d[a]!;
    const y = d[b]!;
    if (x === null || y === null) return x === y ? 0 : (x === null) === spec.nullsFirst ? -1 : 1;
    return (spec.descending ? -1 : 1) * compareStrings(x, y);
  };
}

describe('STRING sort keys (ranked) follow code point order', () => {
  const n = 3000;
  let seed = 7;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  // BMP letters, U+E000.. (above surrogates in UTF-16, below astral code points), astral emoji, NULLs, repeats.
  const pieces = ['a', 'b', 'B', '\ue000', '\uffff', '\u{1F600}', '\u{10000}', 'ab', '', 'é'];
  const mk = (): string | null => (rnd() < 0.05 ? null : Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pieces[Math.floor(rnd() * pieces.length)]!).join(''));
  const high = strVec(n, mk);
  const ascii = strVec(n, () => (rnd() < 0.05 ? null : `k${Math.floor(rnd() * 300)}`));
  const second = vec(n, (i) => (i * 7919) % n, T.INT64);
  for (const spec of [{ descending: false, nullsFirst: true }, { descending: true, nullsFirst: false }, { descending: false, nullsFirst: false }] as KeySpec[]) {
    for (const [label, v] of [['with surrogates and U+E000+', high], ['ASCII, repeated', ascii]] as const) {
      it(`${label} ${JSON.stringify(spec)}, then an INT64 key`, () => {
        const c0 = refStringCmp(v, spec);
        const c1 = rowsComparator([second], [{ descending: false, nullsFirst: true }]);
        const ref = sortIndexes(n, (a, b) => c0(a, b) || c1(a, b));
        expect(Array.from(sortRows([v, second], [spec, { descending: false, nullsFirst: true }], n))).toEqual(Array.from(ref));
        expect(Array.from(sortRows([v], [spec], n))).toEqual(Array.from(sortIndexes(n, (a, b) => c0(a, b) || a - b)));
        // Top-N threshold comparisons agree with the reference too.
        for (const t of [0, 17, 1234]) {
          const cmp = thresholdComparator(v, { ...v, length: 1, data: [(v.data as (string | null)[])[t]!], nulls: v.nulls && v.nulls[t] === 1 ? Uint8Array.of(1) : null }, spec);
          for (let j = 0; j < n; j++) if (Math.sign(cmp(j)) !== Math.sign(c0(j, t))) expect.fail(`row ${j} vs row ${t}: ${cmp(j)} vs ${c0(j, t)}`);
        }
      });
    }
  }
});
