// NUMERIC and BIGNUMERIC columns are held as Arrow's decimal128 / decimal256
// words: stored text -> words -> Decimal gives back every value exactly
// (random digits at every length, both types' extremes, NULLs), a fragment
// file's flat and nested columns read into `decimal` chunks counted by their
// buffers' size, vectors keep the words through slice, take, concat and
// NULLing, and Storage Read Arrow messages copy the words byte for byte as
// the one-value-at-a-time encoding writes them, nothing boxed on the way.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { arrowSchema, RowSource, serializeRecordBatch, serializeSchema, serializeValueRecordBatch } from '../../src/engine/storage-read/arrow.js';
import { chunkBytes, chunkHeapBytes, chunkVector, type ColumnChunk } from '../../src/storage/column-chunk.js';
import { FragmentFile } from '../../src/storage/fragment-file.js';
import { encodeFragmentFile } from '../../src/storage/fragment-encode.js';
import { decimalOfWords, wordsOfText, type DecimalWidth } from '../../src/types/decimal-words.js';
import type { Column } from '../../src/types/schema.js';
import { T } from '../../src/types/types.js';
import { Decimal, type Value } from '../../src/types/values.js';
import { concatVectors, decimalBoxing, getValue, sliceVector, takeVector, vectorFromValues, withNullRows, type Batch, type Vector } from '../../src/types/vector.js';
import '../../src/functions/numeric.js';
import { arr, randomDecimalText, rng, struct } from '../helpers/random-values.js';
import { tempDir } from '../engine/helpers.js';
import { decodeBatch, encodeBatch, type EncodedBatch } from '../../src/executor/parallel/codec.js';
import { deserialize, serialize } from 'node:v8';

/** The value's words as BigInt arithmetic makes them. */
function referenceWords(text: string, width: DecimalWidth): number[] {
  const scale = width === 4 ? 9 : 38;
  let n = BigInt(new Decimal(text).toFixed(scale).replace('.', ''));
  if (n < 0n) n += 1n << BigInt(32 * width);
  return Array.from({ length: width }, (_, w) => Number((n >> BigInt(32 * w)) & 0xffffffffn));
}

const bytesOf = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('decimal words', () => {
  for (const width of [4, 8] as const) {
    it(`text -> words -> Decimal is exact (${width === 4 ? 'NUMERIC' : 'BIGNUMERIC'})`, () => {
      const r = rng(width);
      const words = new Uint32Array(width);
      for (let k = 0; k < 5000; k++) {
        const text = randomDecimalText(r, width);
        const b = bytesOf(text);
        expect(wordsOfText(b, 0, b.length, width, words, 0)).toBe(true);
        expect(Array.from(words)).toEqual(referenceWords(text, width));
        const d = decimalOfWords(words, 0, width);
        expect(d.toFixed()).toBe(text);
        // The same internal form decimal.js's parser makes (so every Decimal method behaves the same on it).
        expect({ s: d.s, e: d.e, d: d.d }).toEqual((({ s, e, d }) => ({ s, e, d }))(new Decimal(text)));
      }
    });
  }

  it('NUMERIC amounts below 2^53 unscaled (made by number arithmetic) are decimal.js\'s own form', () => {
    const r = rng(53);
    const words = new Uint32Array(4);
    const unscaled = [0n, 1n, 10n, 100n, 10n ** 7n, 10n ** 9n, 123456789n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 64n - 1n, 2n ** 64n];
    for (let k = 0; k < 20000; k++) unscaled.push(BigInt(Math.floor(r() * 2 ** (1 + Math.floor(r() * 53)))));
    for (const m of unscaled) {
      for (const x of m === 0n ? [m] : [m, -m]) {
        const neg = x < 0n;
        const digits = (neg ? -x : x).toString().padStart(10, '0');
        const text = `${neg ? '-' : ''}${digits.slice(0, -9)}.${digits.slice(-9)}`;
        const b = bytesOf(text);
        expect(wordsOfText(b, 0, b.length, 4, words, 0)).toBe(true);
        const d = decimalOfWords(words, 0, 4);
        const want = new Decimal(text);
        expect({ s: d.s, e: d.e, d: d.d }, text).toEqual({ s: want.s, e: want.e, d: want.d });
      }
    }
  });

  it('refuses texts the words cannot hold (the chunk then keeps values)', () => {
    const w = new Uint32Array(8);
    const no = (s: string, width: DecimalWidth): void => expect(wordsOfText(bytesOf(s), 0, s.length, width, w, 0), s).toBe(false);
    no('1.0000000001', 4);
    no('1e5', 4);
    no('', 4);
    no('-', 4);
    no('1.', 4);
    no('0.' + '0'.repeat(38) + '1', 8);
    // BIGNUMERIC's minimum is -2^255 / 10^38: one past the words' positive range, kept as a value.
    no('-578960446186580977117854925043439539266.34992332820282019728792003956564819968', 8);
    no('578960446186580977117854925043439539266.34992332820282019728792003956564819968', 8);
  });
});

const cols: Column[] = [
  { name: 'n', type: T.NUMERIC, required: false },
  { name: 'b', type: T.BIGNUMERIC, required: false },
  { name: 'an', type: arr(T.NUMERIC), required: false },
  { name: 'sb', type: struct(['x', T.BIGNUMERIC], ['y', T.INT64]), required: false },
];

function randomRows(seed: number, n: number): Value[][] {
  const r = rng(seed);
  const num = (width: DecimalWidth): Value => (r() < 0.2 ? null : new Decimal(randomDecimalText(r, width)));
  return Array.from({ length: n }, () => [
    num(4),
    num(8),
    r() < 0.1 ? null : Array.from({ length: Math.floor(r() * 4) }, () => new Decimal(randomDecimalText(r, 4))),
    r() < 0.1 ? null : [num(8), BigInt(Math.floor(r() * 100))],
  ]);
}

async function chunksOf(rows: readonly Value[][]): Promise<ColumnChunk[]> {
  const file = path.join(tempDir(), 'd.parquet');
  const batch: Batch = { length: rows.length, columns: cols.map((c, i) => vectorFromValues(c.type, rows.map((x) => x[i]!))) };
  fs.writeFileSync(file, Buffer.concat(await encodeFragmentFile(cols, [batch], {})));
  const f = await FragmentFile.open(file);
  return Promise.all(cols.map((c) => f.readChunk(0, c.name, c.type)));
}

const text = (v: Value): unknown => (v instanceof Decimal ? v.toFixed() : Array.isArray(v) ? v.map(text) : v);

describe('NUMERIC and BIGNUMERIC chunks', () => {
  it('read from a fragment file as words, every value back exactly, counted by their buffers', async () => {
    const rows = randomRows(7, 3000);
    const chunks = await chunksOf(rows);
    const [n, b] = chunks as [ColumnChunk, ColumnChunk];
    expect(n.kind).toBe('decimal');
    expect(b.kind).toBe('decimal');
    if (n.kind !== 'decimal' || b.kind !== 'decimal') return;
    expect(chunkBytes(n)).toBe(3000 * 16 + (n.validity?.byteLength ?? 0) + 64);
    expect(chunkBytes(b)).toBe(3000 * 32 + (b.validity?.byteLength ?? 0) + 64);
    expect(chunkHeapBytes(n)).toBe(0);
    // Nested leaves too.
    const list = chunks[2]!;
    expect(list.kind === 'list' && list.child.kind).toBe('decimal');
    for (let s = 0; s < rows.length; s += 700) {
      const e = Math.min(rows.length, s + 700);
      cols.forEach((c, k) => {
        const v = chunkVector(c.type, chunks[k]!, s, e);
        for (let i = s; i < e; i++) expect(text(getValue(v, i - s)), `${c.name} row ${i}`).toEqual(text(rows[i]![k]!));
      });
    }
  });

  it('vectors keep the words through slice, take, concat and NULLing, boxing the same values', async () => {
    const rows = randomRows(8, 1000);
    const chunks = await chunksOf(rows);
    const before = decimalBoxing.rows;
    const v = chunkVector(T.NUMERIC, chunks[0]!, 100, 900);
    const sliced = sliceVector(v, 10, 500);
    const sel = Int32Array.from({ length: 300 }, (_, i) => (i * 37) % 490);
    const taken = takeVector(sliced, sel);
    const joined = concatVectors(T.NUMERIC, [taken, sliced]);
    const nulls = new Uint8Array(joined.length).map((_, i) => (i % 3 === 0 || joined.nulls?.[i] === 1 ? 1 : 0));
    const nulled = withNullRows(joined, nulls);
    for (const x of [sliced, taken, joined, nulled]) expect(x.decimal).toBeDefined();
    expect(decimalBoxing.rows).toBe(before);
    const want = [...sel.map((i) => i + 110)].map((i) => rows[i]![0]!).concat(rows.slice(110, 600).map((r) => r[0]!));
    for (let i = 0; i < want.length; i++) {
      expect(text(getValue(joined, i))).toEqual(text(want[i]!));
      expect(text(getValue(nulled, i))).toEqual(i % 3 === 0 ? null : text(want[i]!));
    }
  });

  it('cross threads and spill frames as words (encodeBatch / decodeBatch through v8.serialize), nothing boxed', async () => {
    const rows = randomRows(10, 900);
    const chunks = await chunksOf(rows);
    const before = decimalBoxing.rows;
    const batch: Batch = { length: 800, columns: [chunkVector(T.NUMERIC, chunks[0]!, 50, 850), chunkVector(T.BIGNUMERIC, chunks[1]!, 50, 850)] };
    const back = decodeBatch(deserialize(serialize(encodeBatch(batch))) as EncodedBatch);
    expect(back.columns.every((v) => v.decimal !== undefined)).toBe(true);
    expect(decimalBoxing.rows).toBe(before);
    for (let i = 0; i < 800; i++) {
      expect(text(getValue(back.columns[0]!, i))).toEqual(text(rows[50 + i]![0]!));
      expect(text(getValue(back.columns[1]!, i))).toEqual(text(rows[50 + i]![1]!));
    }
  });

  it('Storage Read Arrow messages copy the words: byte for byte the value-by-value encoding, nothing boxed', async () => {
    const rows = randomRows(9, 2500);
    const chunks = await chunksOf(rows);
    const batches: Batch[] = [];
    for (let s = 0; s < rows.length; s += 611) {
      const e = Math.min(rows.length, s + 611);
      batches.push({ length: e - s, columns: cols.map((c, k) => chunkVector(c.type, chunks[k]!, s, e)) });
    }
    const schema = arrowSchema(cols, 'MICROS');
    const schemaBytes = serializeSchema(schema);
    const selected = Int32Array.from({ length: 1200 }, (_, i) => i * 2 + (i % 2));
    for (const [src, pick] of [
      [new RowSource(batches, null, rows.length), (i: number) => i],
      [new RowSource(batches, selected, selected.length), (i: number) => selected[i]!],
    ] as const) {
      for (const [start, end] of [
        [0, src.rowCount],
        [5, 1000],
        [611, 612],
      ] as const) {
        const before = decimalBoxing.rows;
        const direct = Buffer.from(serializeRecordBatch(schema, schemaBytes, cols, src, start, end, 'MICROS'));
        expect(decimalBoxing.rows).toBe(before);
        const want = cols.map((_, k) => Array.from({ length: end - start }, (_, i) => rows[pick(start + i)]![k]!));
        expect(direct).toEqual(Buffer.from(serializeValueRecordBatch(schema, schemaBytes, cols, want, 'MICROS')));
      }
    }
    // Pieces of every kind one column can be handed: words, boxed values, NULLed words.
    const v = batches[0]!.columns[0]!;
    const boxed: Vector = vectorFromValues(T.NUMERIC, rows.slice(0, 50).map((r) => r[0]!));
    const nulled = withNullRows(v, new Uint8Array(v.length).fill(1));
    const mixed = new RowSource(
      [v, boxed, nulled].map((x) => ({ length: x.length, columns: [x] })),
      null,
      v.length * 2 + 50,
    );
    const one = [cols[0]!];
    const s1 = arrowSchema(one, 'MICROS');
    const want = [[...rows.slice(0, v.length).map((r) => r[0]!), ...rows.slice(0, 50).map((r) => r[0]!), ...new Array<Value>(v.length).fill(null)]];
    expect(Buffer.from(serializeRecordBatch(s1, serializeSchema(s1), one, mixed, 0, mixed.rowCount, 'MICROS'))).toEqual(Buffer.from(serializeValueRecordBatch(s1, serializeSchema(s1), one, want, 'MICROS')));
  });
});
