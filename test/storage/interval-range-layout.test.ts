// INTERVAL and RANGE columns are held in the Arrow layout: a fragment file's
// stored text reads into month-day-nano parts and into a struct of two
// fixed-width sides (unbounded = a NULL side), every value back exactly
// (extremes of each part, negative parts, unbounded sides, NULLs, sides past
// 2^53), counted by the buffers' size; vectors keep the layout through slice,
// take, concat, NULLing and the worker codec; Storage Read Arrow messages
// are byte for byte the value-by-value encoding, nothing boxed on the way.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { arrowSchema, RowSource, serializeRecordBatch, serializeSchema, serializeValueRecordBatch } from '../../src/engine/storage-read/arrow.js';
import { decodeBatch, encodeBatch, type EncodedBatch } from '../../src/executor/parallel/codec.js';
import { chunkBytes, chunkHeapBytes, chunkVector, type ColumnChunk } from '../../src/storage/column-chunk.js';
import { FragmentFile } from '../../src/storage/fragment-file.js';
import { encodeFragmentFile } from '../../src/storage/fragment-encode.js';
import { intervalChunkOf, rangeChunkOf } from '../../src/storage/interval-range-chunks.js';
import { compareIntervals, rangeRelation, rangeSide } from '../../src/functions/interval-range-kernels.js';
import { compareOp } from '../../src/functions/operators.js';
import type { Column } from '../../src/types/schema.js';
import { T, type SqlType } from '../../src/types/types.js';
import { Interval, RangeValue, type Value } from '../../src/types/values.js';
import { concatVectors, getValue, layoutBoxing, sliceVector, takeVector, vectorFromValues, withNullRows, type Batch } from '../../src/types/vector.js';
import { arr, norm, rng, struct } from '../helpers/random-values.js';
import { tempDir } from '../engine/helpers.js';

const range = (element: SqlType): SqlType => ({ kind: 'RANGE', element }) as SqlType;

const cols: Column[] = [
  { name: 'i', type: T.INTERVAL, required: false },
  { name: 'rd', type: range(T.DATE), required: false },
  { name: 'rdt', type: range(T.DATETIME), required: false },
  { name: 'rts', type: range(T.TIMESTAMP), required: false },
  { name: 'ai', type: arr(T.INTERVAL), required: false },
  { name: 'sr', type: struct(['r', range(T.DATE)], ['k', T.INT64]), required: false },
];

// The service's limits: 10,000 years of months, 3,660,000 days, 87,840,000 hours.
const MAX_MONTHS = 120000;
const MAX_DAYS = 3660000;
const MAX_MICROS = 87840000n * 3600n * 1000000n;
const MIN_DATE = -719162;
const MAX_DATE = 2932896;
const MIN_TS = -62135596800000000n;
const MAX_TS = 253402300799999999n;

function randomRows(seed: number, n: number): Value[][] {
  const r = rng(seed);
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(r() * xs.length)]!;
  const part = (max: number): number => pick([0, max, -max, 1, -1, Math.floor((r() - 0.5) * 2 * max)]);
  const micros = (): bigint => pick([0n, MAX_MICROS, -MAX_MICROS, 1n, -1n, 9007199254740993n, -9007199254740993n, BigInt(Math.floor((r() - 0.5) * 2e15)), BigInt(Math.floor((r() - 0.5) * 2e9))]);
  const interval = (): Value => (r() < 0.15 ? null : new Interval(part(MAX_MONTHS), part(MAX_DAYS), micros()));
  const day = (): Value => (r() < 0.2 ? null : pick([MIN_DATE, MAX_DATE, 0, -1, Math.floor(r() * 40000) - 20000]));
  const micro = (): Value => (r() < 0.2 ? null : pick([MIN_TS, MAX_TS, 0n, -1n, 9007199254740992n, 1700000000000001n + BigInt(Math.floor(r() * 1e9))]));
  const rangeOf = (side: () => Value): Value => (r() < 0.15 ? null : new RangeValue(side(), side()));
  return Array.from({ length: n }, () => [
    interval(),
    rangeOf(day),
    rangeOf(micro),
    rangeOf(micro),
    r() < 0.1 ? null : Array.from({ length: Math.floor(r() * 4) }, () => new Interval(part(MAX_MONTHS), part(MAX_DAYS), micros())),
    r() < 0.1 ? null : [rangeOf(day), BigInt(Math.floor(r() * 100))],
  ]);
}

async function chunksOf(rows: readonly Value[][]): Promise<ColumnChunk[]> {
  const file = path.join(tempDir(), 'ir.parquet');
  const batch: Batch = { length: rows.length, columns: cols.map((c, i) => vectorFromValues(c.type, rows.map((x) => x[i]!))) };
  fs.writeFileSync(file, Buffer.concat(await encodeFragmentFile(cols, [batch], {})));
  const f = await FragmentFile.open(file);
  return Promise.all(cols.map((c) => f.readChunk(0, c.name, c.type)));
}

const bytesOf = (texts: readonly string[]): { bytes: Uint8Array; offsets: Int32Array } => {
  const enc = texts.map((t) => Buffer.from(t));
  const offsets = new Int32Array(texts.length + 1);
  enc.forEach((b, i) => (offsets[i + 1] = offsets[i]! + b.length));
  return { bytes: Buffer.concat(enc), offsets };
};

describe('INTERVAL and RANGE chunks', () => {
  it('read from a fragment file as parts and sides, every value back exactly, counted by their buffers', async () => {
    const rows = randomRows(1, 3000);
    const chunks = await chunksOf(rows);
    const [i, rd, rdt, rts, ai, sr] = chunks as [ColumnChunk, ColumnChunk, ColumnChunk, ColumnChunk, ColumnChunk, ColumnChunk];
    expect(i.kind).toBe('interval');
    expect([rd.kind, rdt.kind, rts.kind]).toEqual(['range', 'range', 'range']);
    expect(ai.kind === 'list' && ai.child.kind).toBe('interval');
    expect(sr.kind === 'struct' && sr.children[0]!.kind).toBe('range');
    if (i.kind !== 'interval' || rd.kind !== 'range' || rts.kind !== 'range') return;
    expect(chunkBytes(i)).toBe(3000 * 16 + (i.validity?.byteLength ?? 0) + 64);
    expect(chunkHeapBytes(i)).toBe(0);
    expect(chunkHeapBytes(rd)).toBe(0);
    // DATE sides are 4 bytes a row; TIMESTAMP sides past 2^53 are BigInt64Array.
    expect(rd.start.kind === 'fixed' && rd.start.values).toBeInstanceOf(Int32Array);
    expect(rts.start.kind === 'fixed' && rts.start.values).toBeInstanceOf(BigInt64Array);
    for (let s = 0; s < rows.length; s += 700) {
      const e = Math.min(rows.length, s + 700);
      cols.forEach((c, k) => {
        const v = chunkVector(c.type, chunks[k]!, s, e);
        for (let r = s; r < e; r++) expect(norm(getValue(v, r - s)), `${c.name} row ${r}`).toEqual(norm(rows[r]![k]!));
      });
    }
  });

  it('refuse text of another shape (the chunk then keeps values) and read every shape the store writes', () => {
    const no = (t: string): void => expect(intervalChunkOf(bytesOf([t]).bytes, bytesOf([t]).offsets, null, 1), t).toBeNull();
    for (const t of ['[1,2,"3"', '["1",2,"3"]', '[1,2,"3",4]', '[1,,"3"]', '[1,2,"x"]', '{}', '[9999999999,0,"0"]']) no(t);
    const ok = bytesOf(['[0,0,"0"]', '[-120000,3660000,"-316224000000000000"]', '[1,-1,"9007199254740993"]']);
    const c = intervalChunkOf(ok.bytes, ok.offsets, null, 3)!;
    expect(c.kind === 'interval' && [Array.from(c.months), Array.from(c.days), Array.from(c.micros)]).toEqual([
      [0, -120000, 1],
      [0, 3660000, -1],
      [0n, -316224000000000000n, 9007199254740993n],
    ]);
    const rno = (t: string, e: SqlType = T.DATE): void => expect(rangeChunkOf(e, bytesOf([t]).bytes, bytesOf([t]).offsets, null, 1), t).toBeNull();
    for (const t of ['[1,2', '[1]', '[1,2,3]', '[nul,2]', '["1",2]', '[1.5,2]']) rno(t);
    rno('[1,2]', T.INT64);
    const rr = bytesOf(['[null,null]', '[-5,"253402300799999999"]', '[null,9007199254740992]']);
    const rc = rangeChunkOf(T.TIMESTAMP, rr.bytes, rr.offsets, null, 3)!;
    const v = chunkVector(range(T.TIMESTAMP), rc, 0, 3);
    expect([0, 1, 2].map((k) => norm(getValue(v, k)))).toEqual([norm(new RangeValue(null, null)), norm(new RangeValue(-5n, 253402300799999999n)), norm(new RangeValue(null, 9007199254740992n))]);
  });

  it('vectors keep the layout through slice, take, concat, NULLing and the worker codec, boxing the same values', async () => {
    const rows = randomRows(2, 1000);
    const chunks = await chunksOf(rows);
    for (const k of [0, 1, 3]) {
      const t = cols[k]!.type;
      const before = { ...layoutBoxing };
      const v = chunkVector(t, chunks[k]!, 100, 900);
      const sliced = sliceVector(v, 10, 500);
      const sel = Int32Array.from({ length: 300 }, (_, i) => (i * 37) % 490);
      const taken = takeVector(sliced, sel);
      const joined = concatVectors(t, [taken, sliced]);
      const nulls = new Uint8Array(joined.length).map((_, i) => (i % 3 === 0 || joined.nulls?.[i] === 1 ? 1 : 0));
      const nulled = withNullRows(joined, nulls);
      const crossed = decodeBatch(deserialize(serialize(encodeBatch({ length: nulled.length, columns: [nulled] }))) as EncodedBatch).columns[0]!;
      for (const x of [sliced, taken, joined, nulled, crossed]) expect(k === 0 ? x.interval : x.range).toBeDefined();
      expect(layoutBoxing).toEqual(before);
      const want = [...sel.map((i) => i + 110)].map((i) => rows[i]![k]!).concat(rows.slice(110, 600).map((r) => r[k]!));
      for (let i = 0; i < want.length; i++) {
        expect(norm(getValue(joined, i))).toEqual(norm(want[i]!));
        expect(norm(getValue(crossed, i))).toEqual(i % 3 === 0 ? null : norm(want[i]!));
      }
    }
  });

  it('kernels over the layout answer as the row-by-row ones: interval comparisons (exact double keys and BigInt keys), RANGE_START, range relations', async () => {
    const rows = randomRows(4, 1200);
    // Small intervals too (double keys), beside the extremes (BigInt keys).
    const small = rows.map((x, k) => [k % 9 === 0 ? null : new Interval((k % 25) - 12, (k % 61) - 30, BigInt((k * 7919) % 200000) * 1000000n - 50000000000n), x[1]!]);
    const file = path.join(tempDir(), 'k.parquet');
    const kcols: Column[] = [
      { name: 'i', type: T.INTERVAL, required: false },
      { name: 'rd', type: range(T.DATE), required: false },
    ];
    const batchOf = (rs: Value[][]): Batch => ({ length: rs.length, columns: kcols.map((c, i) => vectorFromValues(c.type, rs.map((x) => x[i]!))) });
    fs.writeFileSync(file, Buffer.concat(await encodeFragmentFile(kcols, [batchOf(small)], {})));
    const f = await FragmentFile.open(file);
    const [ic, rc] = await Promise.all(kcols.map((c) => f.readChunk(0, c.name, c.type)));
    const extremes = await chunksOf(rows);
    const ops = ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const;
    for (const [chunk, values] of [
      [ic!, small.map((x) => x[0]!)],
      [extremes[0]!, rows.map((x) => x[0]!)],
    ] as const) {
      const v = chunkVector(T.INTERVAL, chunk, 0, values.length);
      const boxed = vectorFromValues(T.INTERVAL, values);
      const other = vectorFromValues(T.INTERVAL, values.map((_, k) => values[(k * 13) % values.length]!));
      for (const op of ops) {
        const fast = compareIntervals(op, v, other, values.length)!;
        expect(fast).not.toBeNull();
        for (let k = 0; k < values.length; k++) expect(getValue(fast, k), `${op} row ${k}`).toBe(compareOp(op, getValue(boxed, k), getValue(other, k)));
      }
    }
    const rv = chunkVector(range(T.DATE), rc!, 0, small.length);
    const ranges = small.map((x) => x[1]! as RangeValue | null);
    const point = vectorFromValues(T.DATE, ranges.map((_, k) => (k % 7 === 3 ? null : -20000 + ((k * 997) % 40000))));
    const other = vectorFromValues(range(T.DATE), ranges.map((_, k) => ranges[(k * 31) % ranges.length]!));
    const contains = rangeRelation('contains', [rv, point], small.length)!;
    const containsRange = rangeRelation('contains', [rv, other], small.length)!;
    const overlaps = rangeRelation('overlaps', [rv, other], small.length)!;
    const cmp = (x: Value, y: Value): number => ((x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : 0);
    for (let k = 0; k < small.length; k++) {
      const a = ranges[k]!;
      const p = getValue(point, k);
      const b = getValue(other, k) as RangeValue | null;
      expect(getValue(contains, k), `contains row ${k}`).toBe(a === null || p === null ? null : (a.start === null || cmp(p, a.start) >= 0) && (a.end === null || cmp(p, a.end) < 0));
      expect(getValue(containsRange, k)).toBe(a === null || b === null ? null : (a.start === null || (b.start !== null && cmp(b.start, a.start) >= 0)) && (a.end === null || (b.end !== null && cmp(b.end, a.end) <= 0)));
      expect(getValue(overlaps, k)).toBe(a === null || b === null ? null : !((a.end !== null && b.start !== null && cmp(a.end, b.start) <= 0) || (b.end !== null && a.start !== null && cmp(b.end, a.start) <= 0)));
    }
    const start = rangeSide([rv], 'start')!;
    for (let k = 0; k < small.length; k++) expect(getValue(start, k)).toBe(ranges[k] === null ? null : ranges[k]!.start);
  });

  it('Storage Read Arrow messages from the layout: byte for byte the value-by-value encoding, nothing boxed', async () => {
    const rows = randomRows(3, 2500);
    const chunks = await chunksOf(rows);
    const flat = cols.slice(0, 4);
    const batches: Batch[] = [];
    for (let s = 0; s < rows.length; s += 611) {
      const e = Math.min(rows.length, s + 611);
      batches.push({ length: e - s, columns: flat.map((c, k) => chunkVector(c.type, chunks[k]!, s, e)) });
    }
    const schema = arrowSchema(flat, 'MICROS');
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
        const before = { ...layoutBoxing };
        const direct = Buffer.from(serializeRecordBatch(schema, schemaBytes, flat, src, start, end, 'MICROS'));
        expect(layoutBoxing).toEqual(before);
        const want = flat.map((_, k) => Array.from({ length: end - start }, (_, i) => rows[pick(start + i)]![k]!));
        expect(direct).toEqual(Buffer.from(serializeValueRecordBatch(schema, schemaBytes, flat, want, 'MICROS')));
      }
    }
  });
});
