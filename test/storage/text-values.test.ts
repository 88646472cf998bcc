// JSON and GEOGRAPHY chunks hold their stored text; what kernels read (JSON's
// parsed nodes, from the first kernel read of a batch; geographies, from the
// first read) is kept beside a cached chunk (column-chunk.ts TextValues),
// charged to the budget as a second cache entry and evicted on its own, before
// the chunk. Every form gives the same values.
import { describe, expect, it } from 'vitest';
import { ChunkCache, NO_KEEP_PASS } from '../../src/storage/chunk-cache.js';
import { chunkVector, TextValues, type ColumnChunk } from '../../src/storage/column-chunk.js';
import { JsonText, jsonValueOf } from '../../src/functions/json-core.js';
import { jsonValueText, parseJsonText, jsonNodeToText } from '../../src/types/json-values.js';
import { T } from '../../src/types/types.js';
import type { Vector } from '../../src/types/vector.js';
import { Geography, JsonValue, type Value } from '../../src/types/values.js';

/** A text chunk as a fragment read decodes it (NULL every 7th row). */
function textChunk(texts: (string | null)[], type: 'JSON' | 'GEOGRAPHY'): ColumnChunk {
  const bufs = texts.map((x) => Buffer.from(x ?? '', 'utf8'));
  const offsets = new Int32Array(texts.length + 1);
  bufs.forEach((b, i) => (offsets[i + 1] = offsets[i]! + b.length));
  const validity = new Uint8Array((texts.length + 7) >> 3);
  texts.forEach((x, i) => {
    if (x !== null) validity[i >> 3]! |= 1 << (i & 7);
  });
  const bytes = Buffer.concat(bufs);
  return { kind: 'utf8', length: texts.length, offsets, bytes, validity, ascii: !texts.some((x) => x !== null && /[^\x00-\x7f]/.test(x)), kept: new TextValues(type) };
}

const N = 300;
const jsonTexts = Array.from({ length: N }, (_, i) => (i % 7 === 3 ? null : jsonNodeToText(parseJsonText(`{"a":${i},"s":"v${i % 5}é","n":{"x":[${i},"${i}"]},"w":12345678901234567890}`))));
const wkts = Array.from({ length: N }, (_, i) => (i % 7 === 3 ? null : `POINT(${(i % 359) - 179} ${(i % 169) - 84})`));
const vals = (v: Vector): Value[] => v.data as Value[];
const node = (v: Value): unknown => (v === null ? null : jsonNodeToText((v as JsonValue).node));

describe('JSON and GEOGRAPHY text chunks and their kept values', () => {
  const text = (v: Value): string | null => (v === null ? null : jsonValueText(v as JsonValue));

  // Texts with a number past a double (each value through the exact parser) and non-ASCII ones; ASCII texts parsed as one array.
  const asciiTexts = jsonTexts.map((x, i) => (x === null ? null : jsonNodeToText(parseJsonText(`{"a":${i},"s":"v${i % 5}","n":{"x":[${i},"${i}",null,true]},"f":${i / 8}}`))));
  it.each([
    ['exact numbers, non-ASCII', jsonTexts],
    ['ASCII', asciiTexts],
  ])('keeps the nodes of the first kernel read, charged, parsed once by batch; all equal (%s)', async (_, texts) => {
    const cache = new ChunkCache(1e9);
    const c = textChunk(texts, 'JSON');
    const read = (): Promise<ColumnChunk> => cache.chunk('f', 0, 'j', () => Promise.resolve(c), 1);
    await read();
    const chunkOnly = cache.bytesUsed;
    // The first batch: its stored texts are the chunk's byte for byte (a writer never parses), and nothing is kept for a writer.
    const first = chunkVector(T.JSON, c, 0, 100);
    expect(vals(first).map(text)).toEqual(texts.slice(0, 100));
    expect(cache.bytesUsed).toBe(chunkOnly);
    expect((c as { kept: TextValues }).kept.values).toBeNull();
    // A kernel reads values of the first query: as each value parsed alone; the batch's nodes are kept and charged.
    expect(jsonValueOf(first.data[1] as JsonValue, ['s'])).toBe(texts === jsonTexts ? 'v1é' : 'v1');
    expect(cache.bytesUsed).toBeGreaterThan(chunkOnly + N * 8);
    const charged = cache.bytesUsed;
    const parsed = (first.data[2] as JsonValue).node;
    expect(parsed).toEqual(parseJsonText(texts[2]!));
    // The rest of the first scan, its nodes read in batches of other bounds; then a second query: the same nodes (not parsed again), nothing charged twice.
    const rest = chunkVector(T.JSON, c, 50, N);
    expect(vals(rest).map(text)).toEqual(texts.slice(50));
    expect((rest.data[1] as JsonValue).node).toBe((first.data[51] as JsonValue).node);
    const restNodes = vals(rest).map((v) => (v === null ? null : (v as JsonValue).node));
    const warm = chunkVector(T.JSON, await read(), 0, N);
    expect(warm.data[2]).not.toBe(first.data[2]);
    expect((warm.data[2] as JsonValue).node).toBe(parsed);
    expect((warm.data[151] as JsonValue).node).toBe(restNodes[101]);
    expect(cache.bytesUsed).toBe(charged);
    expect(vals(warm).map((v) => (v === null ? null : (v as JsonValue).node))).toEqual(texts.map((x) => (x === null ? null : parseJsonText(x))));
    expect(vals(warm).map(node)).toEqual(texts);
    expect(vals(warm).map(text)).toEqual(texts);
    expect(warm.nulls).toEqual(nullsOf(texts));
    expect(vals(warm).map((v) => (v === null ? null : jsonValueOf(v as JsonValue, ['n', 'x', 1])))).toEqual(texts.map((x) => (x === null ? null : jsonValueOf(new JsonText(x, 0, x.length, 'stored'), ['n', 'x', 1]))));
    // Evicted for the heap's sake (mid-scan): the values go, the text (off the heap) stays; the next batch keeps values again, equal.
    cache.heapBudget = 100;
    cache.shrink();
    expect(cache.bytesUsed).toBe(chunkOnly);
    expect((c as { kept: TextValues }).kept.values).toBeNull();
    cache.heapBudget = 1e9;
    const again = chunkVector(T.JSON, await read(), 0, N);
    expect((again.data[2] as JsonValue).node).not.toBe(parsed);
    expect(vals(again).map(node)).toEqual(texts);
    expect(cache.bytesUsed).toBe(charged);
  });

  it('keeps geographies (their parsed shapes are kept by value), dropped with the chunk', async () => {
    const cache = new ChunkCache(1e9);
    const c = textChunk(wkts, 'GEOGRAPHY');
    const a = chunkVector(T.GEOGRAPHY, await cache.chunk('f', 0, 'g', () => Promise.resolve(c), 1), 0, N);
    const b = chunkVector(T.GEOGRAPHY, await cache.chunk('f', 0, 'g', () => Promise.resolve(c), 2), 0, N);
    expect(b.data[0]).toBe(a.data[0]);
    expect(vals(a).map((g) => (g === null ? null : (g as Geography).wkt))).toEqual(wkts);
    cache.forget('f');
    expect(cache.bytesUsed).toBe(0);
    // A scan still holding the dropped chunk makes values per batch, keeping none.
    const d = chunkVector(T.GEOGRAPHY, c, 0, 2);
    expect(d.data[0]).not.toBe(a.data[0]);
    expect(chunkVector(T.GEOGRAPHY, c, 0, 2).data[0]).not.toBe(d.data[0]);
    expect((c as { kept: TextValues }).kept.values).toBeNull();
  });

  it('keeps nothing for a chunk the cache does not hold, or values that do not fit', async () => {
    const cache = new ChunkCache(1e9);
    // A worker reading another's morsel caches nothing, so keeps nothing.
    const c1 = textChunk(jsonTexts, 'JSON');
    await cache.chunk('f', 0, 'j', () => Promise.resolve(c1), NO_KEEP_PASS);
    const n0 = (c: ColumnChunk): unknown => (chunkVector(T.JSON, c, 0, 2).data[0] as JsonValue).node;
    expect(n0(c1)).toEqual(n0(c1));
    expect(n0(c1)).not.toBe(n0(c1));
    expect(cache.bytesUsed).toBe(0);
    const c2 = textChunk(jsonTexts, 'JSON');
    cache.heapBudget = 1000;
    await cache.chunk('f', 1, 'j', () => Promise.resolve(c2), 1);
    const used = cache.bytesUsed;
    expect(vals(chunkVector(T.JSON, c2, 0, N)).map(node)).toEqual(jsonTexts);
    expect((c2 as { kept: TextValues }).kept.values).toBeNull();
    expect(cache.bytesUsed).toBe(used);
    expect(cache.heapBytesUsed).toBe(0);
  });
});

describe('a cache under pressure', () => {
  it("drops the least recently used chunk's kept values before the chunk, and before other chunks", async () => {
    const c1 = textChunk(wkts, 'GEOGRAPHY');
    const c2 = textChunk(wkts, 'GEOGRAPHY');
    const probe = new ChunkCache(1e9);
    await probe.chunk('f', 0, 'g', () => Promise.resolve(c1), 1);
    const chunk = probe.bytesUsed;
    chunkVector(T.GEOGRAPHY, c1, 0, N);
    const values = probe.bytesUsed - chunk;
    probe.clear();
    // Room for both chunks and one chunk's values: reading the second chunk's values drops the first's, not its text.
    const cache = new ChunkCache(2 * chunk + values + 100);
    await cache.chunk('f', 0, 'g', () => Promise.resolve(c1), 1);
    const a = chunkVector(T.GEOGRAPHY, c1, 0, N);
    await cache.chunk('f', 1, 'g', () => Promise.resolve(c2), 2);
    expect((c1 as { kept: TextValues }).kept.values).not.toBeNull();
    chunkVector(T.GEOGRAPHY, c2, 0, N);
    expect((c1 as { kept: TextValues }).kept.values).toBeNull();
    expect((c2 as { kept: TextValues }).kept.values).not.toBeNull();
    expect(cache.bytesUsed).toBe(2 * chunk + values);
    const misses = cache.misses;
    await cache.chunk('f', 0, 'g', () => Promise.resolve(c1), 3);
    expect(cache.misses).toBe(misses);
    // Its values made again (the other chunk's go) are equal, new objects.
    const b = chunkVector(T.GEOGRAPHY, c1, 0, N);
    expect(b.data[0]).not.toBe(a.data[0]);
    expect(vals(b).map((g) => (g === null ? null : (g as Geography).wkt))).toEqual(wkts);
    expect((c2 as { kept: TextValues }).kept.values).toBeNull();
  });
});

function nullsOf(texts: (string | null)[]): Uint8Array {
  return Uint8Array.from(texts, (x) => (x === null ? 1 : 0));
}
