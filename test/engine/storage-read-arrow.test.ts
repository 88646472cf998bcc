// Storage Read Arrow messages made from column vectors (typed arrays copied
// buffer to buffer, NULL bytes as validity bitmaps, ASCII strings encoded at
// once): decoded by apache-arrow's own reader, every value is the one the
// vectors hold, for windows of a table (a RowSource's base) and for rows a
// restriction selected.
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { arrowSchema, RowSource, serializeRecordBatch, serializeSchema } from '../../src/engine/storage-read/arrow.js';
import type { Column } from '../../src/types/schema.js';
import { T } from '../../src/types/types.js';
import type { Value } from '../../src/types/values.js';
import { getValue, vectorFromValues, type Batch, type Vector } from '../../src/types/vector.js';

const columns: Column[] = [
  { name: 'i', type: T.INT64, required: false },
  { name: 'f', type: T.FLOAT64, required: false },
  { name: 'b', type: T.BOOL, required: false },
  { name: 's', type: T.STRING, required: false },
  { name: 'd', type: T.DATE, required: false },
  { name: 't', type: T.TIMESTAMP, required: false },
  { name: 'tm', type: T.TIME, required: false },
];

/** Row r's values: negatives, values past 2^32, NULLs every 7th row, a non-ASCII string every 11th. */
function row(r: number): Value[] {
  const nul = r % 7 === 3;
  return [
    nul ? null : BigInt((r % 2 ? -1 : 1) * r * 4_000_000_001),
    nul ? null : r / 3,
    nul ? null : r % 2 === 0,
    nul ? null : r % 11 === 0 ? `zürich-${r}` : `s${r}`,
    nul ? null : r - 500,
    nul ? null : BigInt(r) * 1_000_000n,
    nul ? null : r * 1000,
  ];
}

function batch(from: number, n: number, big = false): Batch {
  const rows = Array.from({ length: n }, (_, k) => row(from + k));
  const vectors: Vector[] = columns.map((c, i) => vectorFromValues(c.type, rows.map((x) => x[i]!)));
  // INT64 as BigInt64Array too (values past 2^53 keep that layout).
  if (big) vectors[0] = { ...vectors[0]!, data: BigInt64Array.from(rows, (x) => (x[0] === null ? 0n : (x[0] as bigint))) };
  return { length: n, columns: vectors };
}

/** The rows of one record-batch message, as apache-arrow decodes them. */
function decode(rows: RowSource, start: number, end: number): unknown[][] {
  const schema = arrowSchema(columns, 'MICROS');
  const schemaBytes = serializeSchema(schema);
  const msg = serializeRecordBatch(schema, schemaBytes, columns, rows, start, end, 'MICROS');
  const table = arrow.tableFromIPC([schemaBytes, msg]);
  return Array.from({ length: table.numRows }, (_, r) => columns.map((_, k) => table.getChildAt(k)!.get(r)));
}

/** What apache-arrow gives for a value of ours. */
function expected(v: Value, k: number): unknown {
  if (v === null) return null;
  switch (columns[k]!.type.kind) {
    case 'INT64':
      return v;
    case 'DATE':
      return (v as number) * 86_400_000;
    case 'TIMESTAMP':
      return Number(v as bigint) / 1000;
    case 'TIME':
      return BigInt(v as number);
    default:
      return v;
  }
}

describe('Storage Read Arrow record batches from vectors', () => {
  it('a window of several batches, both INT64 layouts', () => {
    const batches = [batch(100, 50), batch(150, 70, true), batch(220, 30)];
    const rows = new RowSource(batches, null, 150, 100);
    const got = decode(rows, 120, 240);
    expect(got).toHaveLength(120);
    got.forEach((r, i) => expect(r).toEqual(row(120 + i).map(expected)));
  });

  it('rows a restriction selected', () => {
    const batches = [batch(0, 64), batch(64, 64, true)];
    const selected = Int32Array.from([1, 3, 5, 63, 64, 100, 127]);
    const got = decode(new RowSource(batches, selected, selected.length), 1, 6);
    expect(got).toEqual([3, 5, 63, 64, 100].map((r) => row(r).map(expected)));
    // The vectors the encoder saw hold the same values.
    const pieces = new RowSource(batches, selected, selected.length).vectors(3, 0, 7);
    expect(pieces.flatMap((p) => Array.from({ length: p.length }, (_, i) => getValue(p, i)))).toEqual([1, 3, 5, 63, 64, 100, 127].map((r) => row(r)[3]));
  });
});
