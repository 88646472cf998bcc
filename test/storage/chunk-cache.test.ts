// The chunk cache keeps decoded chunks under its budget, and chunks that live
// on V8's heap (value objects, dictionary strings) under a share of the heap
// limit too: a budget larger than the heap must not fill it.
import { describe, expect, it } from 'vitest';
import { ChunkCache } from '../../src/storage/chunk-cache.js';
import type { ColumnChunk } from '../../src/storage/column-chunk.js';

const values = (n: number): ColumnChunk => ({ kind: 'values', length: n, values: Array.from({ length: n }, (_, i) => `v${i}`) });
const fixed = (n: number): ColumnChunk => ({ kind: 'fixed', length: n, values: new Float64Array(n), validity: null });

describe('chunk cache', () => {
  it('bounds heap-resident chunks by the heap share, evicting only those', async () => {
    const cache = new ChunkCache(1e9);
    cache.heapBudget = 20_000;
    for (let i = 0; i < 10; i++) await cache.chunk('f', i, 'num', () => Promise.resolve(fixed(1000)));
    for (let i = 0; i < 10; i++) await cache.chunk('f', i, 'val', () => Promise.resolve(values(100)));
    expect(cache.heapBytesUsed).toBeLessThanOrEqual(20_000);
    expect(cache.heapBytesUsed).toBeGreaterThan(0);
    // The typed-array chunks were not evicted for the heap's sake.
    const misses = cache.misses;
    for (let i = 0; i < 10; i++) await cache.chunk('f', i, 'num', () => Promise.resolve(fixed(1000)));
    expect(cache.misses).toBe(misses);
  });

  it('bounds all chunks by the budget', async () => {
    const cache = new ChunkCache(50_000);
    for (let i = 0; i < 20; i++) await cache.chunk('f', i, 'num', () => Promise.resolve(fixed(1000)));
    expect(cache.bytesUsed).toBeLessThanOrEqual(50_000);
    expect(cache.evictions).toBeGreaterThan(0);
  });
});
