// The chunk cache keeps decoded chunks under its budget, and chunks that live
// on V8's heap (value objects, dictionary strings) under a share of the heap
// limit too: a budget larger than the heap must not fill it.
import { describe, expect, it } from 'vitest';
import { ChunkCache, newScanPass, NO_KEEP_PASS } from '../../src/storage/chunk-cache.js';
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

  it('evicts at once when its budget is lowered (the execution pool halving the main thread\'s share)', async () => {
    const cache = new ChunkCache(100_000);
    for (let i = 0; i < 10; i++) await cache.chunk('f', i, 'num', () => Promise.resolve(fixed(1000)));
    expect(cache.bytesUsed).toBeGreaterThan(50_000);
    cache.budget = 40_000;
    expect(cache.bytesUsed).toBeLessThanOrEqual(40_000);
    expect(cache.bytesUsed).toBeGreaterThan(0);
  });

  it('keeps a write\'s chunks (write-through) within a quarter of the allowance, evicting nothing for them', async () => {
    const cache = new ChunkCache(100_000);
    await cache.chunk('r', 0, 'num', () => Promise.resolve(fixed(1000)));
    for (let i = 0; i < 10; i++) cache.put('w', i, 'num', fixed(1000), newScanPass());
    expect(cache.bytesUsed).toBeLessThanOrEqual(25_000);
    expect(cache.bytesUsed).toBeGreaterThan(8_000);
    expect(cache.evictions).toBe(0);
  });

  it('keeps the first chunks of a scan larger than the cache for its next run, evicting other scans\' chunks first', async () => {
    const cache = new ChunkCache(5 * 8_100);
    const read = async (col: string, pass: number): Promise<number> => {
      const hits = cache.hits;
      for (let i = 0; i < 10; i++) await cache.chunk('f', i, col, () => Promise.resolve(fixed(1000)), pass);
      return cache.hits - hits;
    };
    // Least recently used order alone: a 10-chunk scan through a 5-chunk cache never hits.
    expect(await read('plain', 0)).toBe(0);
    expect(await read('plain', 0)).toBe(0);
    // With passes, the second run finds the first run's first five chunks (the rest are read, not kept)...
    expect(await read('a', newScanPass())).toBe(0);
    expect(cache.bypassed).toBe(5);
    expect(await read('a', newScanPass())).toBe(5);
    expect(await read('a', newScanPass())).toBe(5);
    expect(cache.bytesUsed).toBeLessThanOrEqual(5 * 8_100);
    // ...and another scan's chunks make room for a new one's.
    expect(await read('b', newScanPass())).toBe(0);
    expect(await read('b', newScanPass())).toBe(5);
    expect(await read('a', newScanPass())).toBe(0);
  });

  it('serves a read that keeps nothing (a morsel taken over from another worker) from the cache, without adding to it', async () => {
    const cache = new ChunkCache(1e9);
    const load = (): Promise<ColumnChunk> => Promise.resolve(fixed(1000));
    const kept = await cache.chunk('f', 0, 'num', load, newScanPass());
    expect(cache.bytesUsed).toBeGreaterThan(0);
    const used = cache.bytesUsed;
    // Cached chunks are used...
    expect(await cache.chunk('f', 0, 'num', load, NO_KEEP_PASS)).toBe(kept);
    // ...others are read and let go.
    for (let i = 1; i < 5; i++) await cache.chunk('f', i, 'num', load, NO_KEEP_PASS);
    expect(cache.bytesUsed).toBe(used);
    expect(cache.bypassed).toBe(4);
    expect(cache.misses).toBe(5);
    // So the next read of them is a miss again, and a pass that keeps them keeps them.
    for (let i = 1; i < 5; i++) await cache.chunk('f', i, 'num', load, newScanPass());
    expect(cache.misses).toBe(9);
    expect(cache.bytesUsed).toBe(5 * used);
  });
});
