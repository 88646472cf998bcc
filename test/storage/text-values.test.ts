// JSON and GEOGRAPHY chunks hold their stored text; the values made from it
// (JSON parsed, geographies) are kept beside the chunk as a second cache entry
// once a kernel walked per-batch values (column-chunk.ts TextValues), charged
// to the budget and evicted on their own. Every form gives the same values.
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
  it('makes per-batch values until a kernel walked them, then keeps them parsed at the next hit, all equal', async () => {
    const cache = new ChunkCache(1e9);
    const c = textChunk(jsonTexts, 'JSON');
    const read = (): Promise<ColumnChunk> => cache.chunk('f', 0, 'j', () => Promise.resolve(c), 1);
    const first = chunkVector(T.JSON, await read(), 0, N);
    // Per batch: texts read lazily; their stored text is the chunk's, byte for byte, without a parse.
    expect(first.data[0]).toBeInstanceOf(JsonText);
    expect(vals(first).map((v) => (v === null ? null : jsonValueText(v as JsonValue)))).toEqual(jsonTexts);
    const used = cache.bytesUsed;
    // A hit with nothing walked keeps nothing more.
    await read();
    expect(cache.bytesUsed).toBe(used);
    expect(jsonValueOf(first.data[1] as JsonValue, ['s'])).toBe('v1é');
    // Walked: the next hit keeps the parsed values, charged to the cache.
    await read();
    expect(cache.bytesUsed).toBeGreaterThan(used + N * 48);
    const warm = chunkVector(T.JSON, c, 10, 200);
    expect(warm.data[0]).not.toBeInstanceOf(JsonText);
    expect(vals(warm).map(node)).toEqual(jsonTexts.slice(10, 200));
    expect(vals(warm).map((v) => (v === null ? null : jsonValueText(v as JsonValue)))).toEqual(jsonTexts.slice(10, 200));
    expect(warm.nulls).toEqual(first.nulls!.slice(10, 200));
    expect(vals(warm).map((v) => (v === null ? null : jsonValueOf(v as JsonValue, ['n', 'x', 1])))).toEqual(vals(first).slice(10, 200).map((v) => (v === null ? null : jsonValueOf(v as JsonValue, ['n', 'x', 1]))));
    // Evicted for the heap's sake (mid-scan): the values go, the text (off the heap) stays; values are made per batch again, equal.
    cache.heapBudget = 100;
    cache.shrink();
    expect(cache.bytesUsed).toBe(used);
    expect((c as { kept: TextValues }).kept.values).toBeNull();
    expect(cache.hits).toBe(2);
    const again = chunkVector(T.JSON, await read(), 0, N);
    expect(cache.hits).toBe(3);
    expect(again.data[0]).toBeInstanceOf(JsonText);
    expect(vals(again).map(node)).toEqual(jsonTexts);
  });

  it('keeps geographies at the first hit (their parsed shapes are kept by value), dropped with the chunk', async () => {
    const cache = new ChunkCache(1e9);
    const c = textChunk(wkts, 'GEOGRAPHY');
    const read = (pass = 1): Promise<ColumnChunk> => cache.chunk('f', 0, 'g', () => Promise.resolve(c), pass);
    const cold = chunkVector(T.GEOGRAPHY, await read(), 0, N);
    expect(vals(cold).map((g) => (g === null ? null : (g as Geography).wkt))).toEqual(wkts);
    // A worker reading another's morsel keeps nothing.
    await read(NO_KEEP_PASS);
    expect(chunkVector(T.GEOGRAPHY, c, 0, 2).data[0]).not.toBe(chunkVector(T.GEOGRAPHY, c, 0, 2).data[0]);
    await read();
    const a = chunkVector(T.GEOGRAPHY, c, 0, N);
    const b = chunkVector(T.GEOGRAPHY, c, 0, N);
    expect(a.data[0]).toBe(b.data[0]);
    expect(vals(a).map((g) => (g === null ? null : (g as Geography).wkt))).toEqual(wkts);
    cache.forget('f');
    expect(cache.bytesUsed).toBe(0);
    expect(chunkVector(T.GEOGRAPHY, c, 0, 2).data[0]).not.toBe(a.data[0]);
  });

  it('does not keep values that do not fit beside the chunks', async () => {
    const c = textChunk(jsonTexts, 'JSON');
    const cache = new ChunkCache(1e9);
    cache.heapBudget = 1000;
    await cache.chunk('f', 0, 'j', () => Promise.resolve(c), 1);
    (c as { kept: TextValues }).kept.walked = true;
    await cache.chunk('f', 0, 'j', () => Promise.resolve(c), 1);
    expect((c as { kept: TextValues }).kept.values).toBeNull();
    expect(cache.heapBytesUsed).toBe(0);
    expect(vals(chunkVector(T.JSON, c, 0, N)).map(node)).toEqual(jsonTexts);
  });
});
