// ARRAY and STRUCT columns are written as parquet nested columns (LIST and
// groups, repetition and definition levels) and read back into list/struct
// chunks: our reader gives back exactly what was written (random nested
// values of every leaf type), and an independent parquet reader (hyparquet)
// reads the same values from our files.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { chunkBytes, chunkHeapBytes, chunkVector } from '../../src/storage/column-chunk.js';
import { FragmentFile, readHybrid, ROW_GROUP } from '../../src/storage/fragment-file.js';
import { encodeFragmentFile } from '../../src/storage/fragment-encode.js';
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';
import type { Column } from '../../src/types/schema.js';
import { T, type SqlType } from '../../src/types/types.js';
import type { Value } from '../../src/types/values.js';
import { concatVectors, getValue, sliceVector, takeVector, vectorFromValues, type Batch, type Vector } from '../../src/types/vector.js';
import { valueBytes } from '../../src/types/logical-bytes.js';
import { tempDir } from '../engine/helpers.js';
import { arr, LEAVES, norm, randomValue, rng, struct } from '../helpers/random-values.js';


function batchOf(cols: readonly Column[], rows: readonly Value[][]): Batch {
  return { length: rows.length, columns: cols.map((c, i) => vectorFromValues(c.type, rows.map((r) => r[i]!))) };
}

async function write(cols: readonly Column[], rows: readonly Value[][]): Promise<string> {
  const file = path.join(tempDir(), 'n.parquet');
  // Two batches: a row group gathers slices of several.
  const cut = Math.floor(rows.length / 3);
  fs.writeFileSync(file, Buffer.concat(await encodeFragmentFile(cols, [batchOf(cols, rows.slice(0, cut)), batchOf(cols, rows.slice(cut))], {})));
  return file;
}

describe('nested columns in fragment files', () => {
  it('read back exactly what was written: random values of every leaf type, nested to depth 4, read in random slices', async () => {
    const r = rng(19);
    const all = struct(...LEAVES.map((t, i): [string, SqlType] => [`f${i}`, t]));
    const cols: Column[] = [
      { name: 'id', type: T.INT64, required: false },
      { name: 'all', type: all, required: false },
      { name: 'arrays', type: struct(...LEAVES.map((t, i): [string, SqlType] => [`a${i}`, arr(t)])), required: false },
      { name: 'items', type: arr(struct(['v', T.INT64], ['s', T.STRING], ['sub', arr(struct(['x', T.FLOAT64], ['ys', arr(T.STRING)]))])), required: false },
      { name: 'deep', type: struct(['a', struct(['b', arr(struct(['c', arr(T.INT64)], ['d', T.DATE]))])], ['e', T.STRING]), required: false },
      { name: 'anon', type: { kind: 'STRUCT', fields: [{ name: '', type: T.INT64 }, { name: '', type: T.STRING }, { name: 'x', type: T.BOOL }, { name: 'X', type: T.INT64 }] }, required: false },
      { name: 'ints', type: arr(T.INT64), required: false },
      { name: 'strs', type: arr(T.STRING), required: false },
    ];
    const n = 3000;
    const rows = Array.from({ length: n }, (_, k) => [BigInt(k), ...cols.slice(1).map((c) => randomValue(r, c.type, true))]);
    // Some all-NULL / all-empty stretches and a long array.
    rows[5]![6] = Array.from({ length: 10_000 }, (_, i) => BigInt(i));
    for (let k = 100; k < 140; k++) for (let c = 1; c < cols.length; c++) rows[k]![c] = cols[c]!.type.kind === 'ARRAY' ? [] : null;
    const f = await FragmentFile.open(await write(cols, rows));
    expect([...f.columnNames]).toEqual(cols.map((c) => c.name));
    for (const [ci, c] of cols.entries()) {
      const chunk = await f.readChunk(0, c.name, c.type);
      if (ci > 0) {
        expect(chunk.kind).toBe(c.type.kind === 'ARRAY' ? 'list' : 'struct');
        // Typed arrays off V8's heap: only boxed leaves (NUMERIC, JSON, ...) and dictionaries count as heap.
        expect(chunkBytes(chunk)).toBeGreaterThan(chunkHeapBytes(chunk));
      }
      for (let s = 0; s < n; ) {
        const e = Math.min(n, s + 1 + Math.floor(r() * 700));
        const v = chunkVector(c.type, chunk, s, e);
        const got = Array.from({ length: e - s }, (_, i) => norm(getValue(v, i)));
        expect(got).toEqual(rows.slice(s, e).map((row) => norm(row[ci]!)));
        s = e;
      }
      // Billing: the column's logical bytes, as the values measure them.
      expect(f.rowGroups[0]!.columns.get(c.name)!.bytes).toBe(rows.reduce((b, row) => b + valueBytes(c.type, row[ci]!), 0));
    }
  });

  it('scanned nested vectors keep the layout through slice, take (rows repeated too) and concat, and box to the same rows', async () => {
    const r = rng(23);
    const t = arr(struct(['v', T.INT64], ['s', T.STRING], ['tags', arr(T.STRING)], ['in', struct(['x', T.FLOAT64])]));
    const cols: Column[] = [
      { name: 'items', type: t, required: false },
      { name: 'st', type: struct(['a', T.INT64], ['b', arr(T.DATE)]), required: false },
    ];
    const n = 2000;
    const rows = Array.from({ length: n }, () => cols.map((c) => randomValue(r, c.type, true)));
    const f = await FragmentFile.open(await write(cols, rows));
    for (const [ci, c] of cols.entries()) {
      const chunk = await f.readChunk(0, c.name, c.type);
      const whole = chunkVector(c.type, chunk, 0, n);
      expect(whole.nested).toBeDefined();
      const want = rows.map((row) => norm(row[ci]!));
      const boxed = (v: Vector): unknown[] => Array.from({ length: v.length }, (_, i) => norm(getValue(v, i)));
      const s1 = sliceVector(whole, 100, 900);
      expect(s1.nested).toBeDefined();
      expect(boxed(s1)).toEqual(want.slice(100, 900));
      const sel = Int32Array.from({ length: 500 }, () => Math.floor(r() * 800));
      const taken = takeVector(s1, sel);
      expect(boxed(taken)).toEqual([...sel].map((i) => want[100 + i]));
      const distinct = Int32Array.from({ length: 300 }, (_, i) => 799 - 2 * i);
      const t2 = takeVector(s1, distinct);
      expect(t2.nested?.offsets ?? t2.nested?.fields).toBeDefined();
      expect(boxed(t2)).toEqual([...distinct].map((i) => want[100 + i]));
      const parts = [sliceVector(whole, 0, 700), takeVector(whole, sel), sliceVector(taken, 10, 20), chunkVector(c.type, chunk, 1500, 2000)];
      expect(boxed(concatVectors(c.type, parts))).toEqual([...want.slice(0, 700), ...[...sel].map((i) => want[i]), ...[...sel.subarray(10, 20)].map((i) => want[100 + i]), ...want.slice(1500)]);
      expect(boxed(sliceVector(concatVectors(c.type, parts), 650, 760))).toEqual([...want.slice(650, 700), ...[...sel.subarray(0, 60)].map((i) => want[i])]);
    }
  });

  it('split across row groups, each assembled on its own', async () => {
    const r = rng(7);
    const cols: Column[] = [{ name: 'items', type: arr(struct(['v', T.INT64], ['s', T.STRING])), required: false }];
    const n = ROW_GROUP + 500;
    const rows = Array.from({ length: n }, () => [randomValue(r, cols[0]!.type, true)]);
    const f = await FragmentFile.open(await write(cols, rows));
    expect(f.rowGroups.map((g) => g.rows)).toEqual([ROW_GROUP, 500]);
    let base = 0;
    for (let rg = 0; rg < 2; rg++) {
      const len = f.rowGroups[rg]!.rows;
      const v = chunkVector(cols[0]!.type, await f.readChunk(rg, 'items', cols[0]!.type), 0, len);
      expect(Array.from({ length: len }, (_, i) => norm(getValue(v, i)))).toEqual(rows.slice(base, base + len).map((row) => norm(row[0]!)));
      base += len;
    }
  });

  it('files written before, with ARRAY and STRUCT columns as JSON text, still read', async () => {
    const r = rng(11);
    const cols: Column[] = [
      { name: 'items', type: arr(struct(['v', T.INT64], ['s', T.STRING], ['tags', arr(T.STRING)])), required: false },
      { name: 'st', type: struct(['a', T.NUMERIC], ['b', arr(T.DATE)]), required: false },
    ];
    const rows = Array.from({ length: 300 }, () => cols.map((c) => randomValue(r, c.type, true)));
    const file = path.join(tempDir(), 'old.parquet');
    fs.writeFileSync(file, Buffer.concat(await encodeFragmentFile(cols, [batchOf(cols, rows)], {}, true)));
    const f = await FragmentFile.open(file);
    for (const [ci, c] of cols.entries()) {
      const chunk = await f.readChunk(0, c.name, c.type);
      expect(chunk.kind).toBe('values');
      const v = chunkVector(c.type, chunk, 0, rows.length);
      expect(Array.from({ length: rows.length }, (_, i) => norm(getValue(v, i)))).toEqual(rows.map((row) => norm(row[ci]!)));
    }
  });

  it('an independent parquet reader (hyparquet) reads the same nested values from a file we wrote', async () => {
    const r = rng(3);
    const inner = struct(['v', T.INT64], ['s', T.STRING], ['arr', arr(T.FLOAT64)], ['n', T.NUMERIC], ['ts', T.TIMESTAMP], ['d', T.DATE], ['b', T.BOOL]);
    const cols: Column[] = [
      { name: 'id', type: T.INT64, required: false },
      { name: 'items', type: arr(inner), required: false },
      { name: 'st', type: struct(['a', T.INT64], ['inner', inner], ['tags', arr(T.STRING)]), required: false },
      { name: 'strs', type: arr(T.STRING), required: false },
    ];
    const n = 500;
    const rows = Array.from({ length: n }, (_, k) => [BigInt(k), ...cols.slice(1).map((c) => randomValue(r, c.type, true))]);
    const file = await write(cols, rows);
    const bytes = fs.readFileSync(file);
    // Times and dates as their stored integers (the library's default makes millisecond Dates).
    const parsers = { timestampFromMicroseconds: (x: bigint) => x, dateFromDays: (x: number) => x };
    const got = (await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), parsers } as Parameters<typeof parquetReadObjects>[0])) as Record<string, unknown>[];
    expect(got.length).toBe(n);
    for (let k = 0; k < n; k++) for (const [ci, c] of cols.entries()) expect(fromReader(c.type, got[k]![c.name])).toEqual(norm(rows[k]![ci]!));
  });

  it('levels and dictionary indices decode as hyparquet decodes them: random RLE and bit-packed runs of every width, outputs ending mid-run', () => {
    const r = rng(31);
    for (let width = 1; width <= 32; width++) {
      for (let trial = 0; trial < 8; trial++) {
        const bytes: number[] = [];
        const varint = (x: number): void => {
          for (; x >= 0x80; x = Math.floor(x / 128)) bytes.push((x % 128) | 0x80);
          bytes.push(x);
        };
        const max = 2 ** width - 1;
        const value = (): number => (r() < 0.3 ? max : Math.floor(r() * (max + 1)));
        let total = 0;
        for (let run = 0; run < 1 + Math.floor(r() * 12); run++) {
          if (r() < 0.5) {
            // RLE: a count (past 127: a multi-byte header) and one value in ceil(width / 8) bytes.
            const count = 1 + Math.floor(r() * (r() < 0.2 ? 5000 : 40));
            varint(count * 2);
            const v = value();
            for (let b = 0; b < (width + 7) >> 3; b++) bytes.push(Math.floor(v / 2 ** (8 * b)) % 256);
            total += count;
          } else {
            // Bit-packed: groups of 8 values, LSB first.
            const groups = 1 + Math.floor(r() * (r() < 0.2 ? 40 : 4));
            varint(groups * 2 + 1);
            let acc = 0n;
            let bits = 0n;
            for (let i = 0; i < groups * 8; i++) {
              acc |= BigInt(value()) << bits;
              bits += BigInt(width);
            }
            for (let b = 0; b < groups * width; b++) bytes.push(Number((acc >> BigInt(8 * b)) & 255n));
            total += groups * 8;
          }
        }
        const n = r() < 0.5 ? total : Math.max(1, total - Math.floor(r() * 8));
        const buf = Uint8Array.from(bytes);
        const want = new Int32Array(n);
        readRleBitPackedHybrid({ view: new DataView(buf.buffer), offset: 0 }, width, want, buf.length);
        const got = new Int32Array(n);
        readHybrid(buf, width, got);
        expect(got, `width ${width}`).toEqual(want);
      }
    }
  });
});

/** The reader's value in norm's terms (structs by field name; NUMERIC leaves are their text). */
function fromReader(t: SqlType, x: unknown): unknown {
  if (x === null || x === undefined) return null;
  switch (t.kind) {
    case 'ARRAY':
      return (x as unknown[]).map((e) => fromReader(t.element, e));
    case 'STRUCT':
      return t.fields.map((f) => fromReader(f.type, (x as Record<string, unknown>)[f.name]));
    case 'NUMERIC':
      return `D${x as string}`;
    case 'FLOAT64':
      return norm(x as number);
    default:
      return x;
  }
}
