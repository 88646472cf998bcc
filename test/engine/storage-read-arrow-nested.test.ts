// Storage Read Arrow messages of ARRAY and STRUCT columns made from their
// layout (list offsets, struct validity, leaf buffers as the scan holds them)
// are byte for byte the messages made by boxing every row and encoding its
// values one by one: random nested tables of every leaf type (NULLs at every
// level, empty arrays, depth 4) read back from a fragment file, in windows
// and through a restriction's rows, and column pieces of every kind a
// session can be handed (boxed rows, rows taken more than once, rows made
// NULL over a view, concatenations), none of the views boxed.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { arrowSchema, RowSource, serializeRecordBatch, serializeSchema, serializeValueRecordBatch } from '../../src/engine/storage-read/arrow.js';
import { chunkVector } from '../../src/storage/column-chunk.js';
import { FragmentFile } from '../../src/storage/fragment-file.js';
import { encodeFragmentFile } from '../../src/storage/fragment-encode.js';
import type { Column } from '../../src/types/schema.js';
import { T, type SqlType } from '../../src/types/types.js';
import type { Value } from '../../src/types/values.js';
import { concatVectors, nestedBoxing, sliceVector, takeVector, vectorFromValues, withNullRows, type Batch, type Vector } from '../../src/types/vector.js';
import { arr, LEAVES, randomValue, rng, struct } from '../helpers/random-values.js';
import { tempDir } from './helpers.js';

const cols: Column[] = [
  { name: 'id', type: T.INT64, required: false },
  { name: 'n', type: T.NUMERIC, required: false },
  { name: 'all', type: struct(...LEAVES.map((t, i): [string, SqlType] => [`f${i}`, t])), required: false },
  { name: 'arrays', type: struct(...LEAVES.map((t, i): [string, SqlType] => [`a${i}`, arr(t)])), required: false },
  { name: 'items', type: arr(struct(['v', T.INT64], ['s', T.STRING], ['sub', arr(struct(['x', T.FLOAT64], ['ys', arr(T.STRING)]))])), required: false },
  { name: 'deep', type: struct(['a', struct(['b', arr(struct(['c', arr(T.INT64)], ['d', T.DATE]))])], ['e', T.STRING]), required: false },
  { name: 'ints', type: arr(T.INT64), required: false },
  { name: 'strs', type: arr(T.STRING), required: false },
  { name: 'bytes', type: arr(T.BYTES), required: false },
];

function randomRows(seed: number, n: number): Value[][] {
  const r = rng(seed);
  const rows = Array.from({ length: n }, (_, k) => [BigInt(k), ...cols.slice(1).map((c) => randomValue(r, c.type, true))]);
  // An all-NULL / all-empty stretch.
  for (let k = 40; k < 60; k++) for (let c = 1; c < cols.length; c++) rows[k]![c] = cols[c]!.type.kind === 'ARRAY' ? [] : null;
  return rows;
}

/** The rows written to a fragment file and read back as a scan makes them: nested columns as views of list/struct chunks, in batches of random sizes. */
async function scanned(rows: readonly Value[][], r: () => number): Promise<Batch[]> {
  const file = path.join(tempDir(), 'n.parquet');
  const batch = (rs: readonly Value[][]): Batch => ({ length: rs.length, columns: cols.map((c, i) => vectorFromValues(c.type, rs.map((x) => x[i]!))) });
  fs.writeFileSync(file, Buffer.concat(await encodeFragmentFile(cols, [batch(rows)], {})));
  const f = await FragmentFile.open(file);
  const chunks = await Promise.all(cols.map((c) => f.readChunk(0, c.name, c.type)));
  const out: Batch[] = [];
  for (let s = 0; s < rows.length; ) {
    const e = Math.min(rows.length, s + 1 + Math.floor(r() * 600));
    out.push({ length: e - s, columns: cols.map((c, k) => chunkVector(c.type, chunks[k]!, s, e)) });
    s = e;
  }
  return out;
}

const schema = arrowSchema(cols, 'MICROS');
const schemaBytes = serializeSchema(schema);

/** The message from the vectors and the one from boxed values, as buffers toEqual compares byte for byte. */
function both(src: RowSource, start: number, end: number, want: readonly Value[][]): [Buffer, Buffer] {
  const boxedBefore = nestedBoxing.rows;
  const direct = Buffer.from(serializeRecordBatch(schema, schemaBytes, cols, src, start, end, 'MICROS'));
  // No nested view was boxed on the way.
  expect(nestedBoxing.rows).toBe(boxedBefore);
  const boxed = Buffer.from(serializeValueRecordBatch(schema, schemaBytes, cols, cols.map((_, k) => want.map((row) => row[k]!)), 'MICROS'));
  return [direct, boxed];
}

describe('Storage Read Arrow messages of nested columns from their layout', () => {
  it('are the boxed encoding byte for byte: scanned random tables, in windows and through a restriction', async () => {
    const r = rng(5);
    const n = 2500;
    const rows = randomRows(41, n);
    const batches = await scanned(rows, r);
    expect(batches[0]!.columns[4]!.nested?.offsets).toBeDefined();
    expect(batches[0]!.columns[2]!.nested?.fields).toBeDefined();
    const src = new RowSource(batches, null, n);
    for (const [s, e] of [[0, n], [0, 1], [37, 1290], [1999, 2500], [2499, 2500]] as const) {
      const [direct, boxed] = both(src, s, e, rows.slice(s, e));
      expect(direct.equals(boxed)).toBe(true);
    }
    const selected = Int32Array.from(Array.from({ length: n }, (_, i) => i).filter(() => r() < 0.3));
    const sel = new RowSource(batches, selected, selected.length);
    const [direct, boxed] = both(sel, 5, selected.length, [...selected.subarray(5)].map((i) => rows[i]!));
    expect(direct.equals(boxed)).toBe(true);
    // And what apache-arrow reads of it is the rows (a spot check of the reference itself).
    const table = arrow.tableFromIPC([schemaBytes, direct]);
    expect(table.numRows).toBe(selected.length - 5);
    expect(table.getChild('id')!.get(0)).toBe(BigInt(selected[5]!));
  });

  it('are the boxed encoding byte for byte for every kind of column piece', async () => {
    const r = rng(9);
    const n = 900;
    const rows = randomRows(77, n);
    const scan = await scanned(rows, r);
    const view = (k: number): Vector => concatVectors(cols[k]!.type, scan.map((b) => b.columns[k]!));
    const whole = cols.map((_, k) => view(k));
    const want: Value[][] = [];
    const batches: Batch[] = [];
    const add = (columns: Vector[], wantRows: Value[][]): void => {
      batches.push({ length: wantRows.length, columns });
      want.push(...wantRows);
    };
    // Views as a scan slices them.
    add(whole.map((v) => sliceVector(v, 0, 200)), rows.slice(0, 200));
    // Boxed rows (a query's results).
    add(cols.map((c, k) => vectorFromValues(c.type, rows.slice(200, 300).map((row) => row[k]!))), rows.slice(200, 300));
    // Rows taken more than once (a lateral join's owners) and rows taken once, in a new order.
    const again = Int32Array.from({ length: 150 }, () => 300 + Math.floor(r() * 100));
    add(whole.map((v) => takeVector(v, again)), [...again].map((i) => rows[i]!));
    const once = Int32Array.from({ length: 100 }, (_, i) => 499 - i);
    add(whole.map((v) => takeVector(v, once)), [...once].map((i) => rows[i]!));
    // Rows made NULL over a view: a NULL struct's fields and a NULL array's elements are not sent.
    const nulls = Uint8Array.from({ length: 200 }, () => (r() < 0.3 ? 1 : 0));
    add(
      whole.map((v) => {
        const s = sliceVector(v, 500, 700);
        const u = s.nulls ? s.nulls.map((b, i) => b | nulls[i]!) : nulls.slice();
        return withNullRows(s, u);
      }),
      rows.slice(500, 700).map((row, i) => (nulls[i] ? row.map(() => null) : row)),
    );
    // Concatenations of views and of mixed pieces.
    add(whole.map((v, k) => concatVectors(cols[k]!.type, [sliceVector(v, 700, 800), takeVector(v, again.subarray(0, 20)), vectorFromValues(cols[k]!.type, rows.slice(800, 810).map((row) => row[k]!))])), [...rows.slice(700, 800), ...[...again.subarray(0, 20)].map((i) => rows[i]!), ...rows.slice(800, 810)]);
    const src = new RowSource(batches, null, want.length);
    for (const [s, e] of [[0, want.length], [150, 420], [399, 760]] as const) {
      const [direct, boxed] = both(src, s, e, want.slice(s, e));
      expect(direct.equals(boxed)).toBe(true);
    }
  });

  it('fixed-width values under NULL rows are written as 0, as the boxed encoding writes them', () => {
    const c: Column[] = [{ name: 'i', type: T.INT64, required: false }, { name: 'f', type: T.FLOAT64, required: false }, { name: 'b', type: T.BOOL, required: false }, { name: 'd', type: T.DATE, required: false }];
    const nulls = Uint8Array.from([0, 1, 0, 1]);
    const vectors: Vector[] = [
      { type: T.INT64, length: 4, data: Float64Array.from([5, 7, -9, 3]), nulls },
      { type: T.FLOAT64, length: 4, data: Float64Array.from([0.5, 7, 1, Number.NaN]), nulls },
      { type: T.BOOL, length: 4, data: Uint8Array.from([1, 1, 0, 1]), nulls },
      { type: T.DATE, length: 4, data: Int32Array.from([1, 2, 3, 4]), nulls },
    ];
    const s = arrowSchema(c, 'MICROS');
    const sb = serializeSchema(s);
    const direct = Buffer.from(serializeRecordBatch(s, sb, c, new RowSource([{ length: 4, columns: vectors }], null, 4), 0, 4, 'MICROS'));
    const boxed = Buffer.from(serializeValueRecordBatch(s, sb, c, [[5n, null, -9n, null], [0.5, null, 1, null], [true, null, false, null], [1, null, 3, null]], 'MICROS'));
    expect(direct.equals(boxed)).toBe(true);
  });
});
