// GroupTable modes: keys arrive hashed, move to the dense index once their
// range is small against the group count, and leave it again for a key it
// cannot hold. Whatever the mode, equal keys share one group id, distinct
// keys get distinct ids, and ids never change.
import { describe, expect, it } from 'vitest';
import { T } from '../types/types.js';
import { BATCH_SIZE, type Vector } from '../types/vector.js';
import { GroupTable } from './hash.js';

function f64(values: ArrayLike<number>, nulls: Uint8Array | null = null): Vector {
  return { type: T.INT64, length: values.length, data: Float64Array.from(values), nulls };
}

/** Feeds `keys` in batches and checks every id against a Map of first appearances. */
function feed(table: GroupTable, keys: Float64Array, seen: Map<number, number>): void {
  const out = new Int32Array(BATCH_SIZE);
  for (let s = 0; s < keys.length; s += BATCH_SIZE) {
    const part = keys.subarray(s, Math.min(keys.length, s + BATCH_SIZE));
    table.findOrInsert([f64(part)], part.length, out);
    for (let i = 0; i < part.length; i++) {
      const k = Object.is(part[i], -0) ? 0 : part[i]!;
      const want = seen.get(k) ?? seen.size;
      if (out[i] !== want) expect.fail(`key ${k}: group ${out[i]}, expected ${want}`);
      seen.set(k, want);
    }
  }
  expect(table.size).toBe(seen.size);
}

describe('GroupTable', () => {
  it('keeps group ids across hashed -> dense -> hashed -> never dense again', () => {
    const table = new GroupTable([T.INT64]);
    const seen = new Map<number, number>();
    // 600k rows over [0, 2M) in a scattered order: wider than the first batch's dense limit.
    const n = 600_000;
    const wide = new Float64Array(n);
    for (let i = 0; i < n; i++) wide[i] = ((i * 69621) % 2147483647) % 2_000_000;
    feed(table, wide, seen);
    // Keys that fit the index once it exists, then one far outside, then a fraction.
    feed(table, Float64Array.from({ length: 300_000 }, (_, i) => (i * 7) % 2_000_000), seen);
    feed(table, Float64Array.of(1e12, 5, -3), seen);
    feed(table, Float64Array.of(0.5, 1e12, 5, -0), seen);
    feed(table, wide.subarray(0, 50_000), seen);
    // lookup() finds every key, and nothing else.
    const probe = Float64Array.of(1e12, 0.5, 5, 7e12, 0.25);
    const got = new Int32Array(probe.length);
    table.lookup([f64(probe)], probe.length, got);
    expect([...got]).toEqual([seen.get(1e12), seen.get(0.5), seen.get(5), -1, -1]);
    const keys = table.keyVectors()[0]!.data as Float64Array;
    for (const [k, g] of seen) if (keys[g] !== k) expect.fail(`group ${g} holds ${keys[g]}, expected ${k}`);
  });

  it('a table direct-indexed up front over a known range keeps ids for keys inside it, below, above and not integers', () => {
    const table = new GroupTable([T.INT64]);
    expect(table.presetDense(1_000, 4_999_999, 1024)).toBe(true);
    // A second preset, or one for a non-empty table, is refused.
    expect(table.presetDense(0, 10, 16)).toBe(false);
    const seen = new Map<number, number>();
    feed(table, Float64Array.from({ length: 200_000 }, (_, i) => 1_000 + ((i * 69621) % 5_000_000)), seen);
    feed(table, Float64Array.of(3, 5_000_000, 1_000, 7e9), seen);
    feed(table, Float64Array.of(2.5, 3, 4_999_999), seen);
    const keys = table.keyVectors()[0]!.data as Float64Array;
    for (const [k, g] of seen) if (keys[g] !== k) expect.fail(`group ${g} holds ${keys[g]}, expected ${k}`);
    expect(new GroupTable([T.STRING]).presetDense(0, 10, 16)).toBe(false);
  });

  it('NULL keys have their own group beside the dense index, kept when the table goes hashed', () => {
    for (const preset of [false, true]) {
      const table = new GroupTable([T.INT64]);
      if (preset) expect(table.presetDense(0, 99_999, 100_000)).toBe(true);
      const ids = new Map<number | null, number>();
      const out = new Int32Array(BATCH_SIZE);
      const batch = (keys: (number | null)[]): void => {
        const nulls = keys.some((k) => k === null) ? Uint8Array.from(keys, (k) => (k === null ? 1 : 0)) : null;
        // A NULL row's data is whatever the vector holds there (here a fraction the index could not hold).
        table.findOrInsert([f64(keys.map((k) => k ?? 0.5), nulls)], keys.length, out);
        keys.forEach((k, i) => {
          const want = ids.get(k) ?? ids.size;
          if (out[i] !== want) expect.fail(`key ${k}: group ${out[i]}, expected ${want} (preset ${preset})`);
          ids.set(k, want);
        });
      };
      // NULL first, NULL-only batches, NULL runs between keys; then keys scattered over [0, 100k) (dense).
      batch([null, 5, 7, null, null, 5]);
      batch([null, null]);
      for (let s = 0; s < 100_000; s += 4096) batch(Array.from({ length: 4096 }, (_, i) => (i % 97 === 0 ? null : ((s + i) * 7919) % 100_000)));
      // A key far outside: the table goes hashed, the NULL group with it.
      batch([1e12, null, 3, null]);
      batch([null, 4, 1e12]);
      expect(table.size).toBe(ids.size);
      const keys = table.keyVectors()[0]!;
      for (const [k, g] of ids) {
        if (k === null) expect(keys.nulls![g]).toBe(1);
        else if ((keys.data as Float64Array)[g] !== k || (keys.nulls !== null && keys.nulls[g] === 1)) expect.fail(`group ${g} holds ${(keys.data as Float64Array)[g]}, expected ${k}`);
      }
      const got = new Int32Array(2);
      table.lookup([f64([0, 3], Uint8Array.of(1, 0))], 2, got);
      expect([...got]).toEqual([ids.get(null), ids.get(3)]);
    }
  });

  it('a NULL key keeps a hashed table hashed', () => {
    const table = new GroupTable([T.INT64]);
    const out = new Int32Array(3);
    table.findOrInsert([f64([1, 0, 2], Uint8Array.of(0, 1, 0))], 3, out);
    expect([...out]).toEqual([0, 1, 2]);
    // 200k more keys over a 3M range: enough groups to go dense, were it not for the NULL.
    const keys = Float64Array.from({ length: 200_000 }, (_, i) => 3 + ((i * 104729) % 3_000_000));
    const ids = new Int32Array(BATCH_SIZE);
    let next = 3;
    const first = new Map<number, number>();
    for (let s = 0; s < keys.length; s += BATCH_SIZE) {
      const part = keys.subarray(s, Math.min(keys.length, s + BATCH_SIZE));
      table.findOrInsert([f64(part)], part.length, ids);
      for (let i = 0; i < part.length; i++) {
        let g = first.get(part[i]!);
        if (g === undefined) first.set(part[i]!, (g = next++));
        if (ids[i] !== g) expect.fail(`key ${part[i]}: group ${ids[i]}, expected ${g}`);
      }
    }
    table.findOrInsert([f64([0], Uint8Array.of(1))], 1, out);
    expect(out[0]).toBe(1);
  });
});
