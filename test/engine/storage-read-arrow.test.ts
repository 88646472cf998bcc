// Storage Read Arrow messages made from column vectors (typed arrays copied
// buffer to buffer, NULL bytes as validity bitmaps, ASCII strings encoded at
// once): decoded by apache-arrow's own reader, every value is the one the
// vectors hold, for windows of a table (a RowSource's base) and for rows a
// restriction selected; TIMESTAMP(12) inside an ARRAY and a STRUCT at each
// picos_timestamp_precision.
import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { arrowSchema, RowSource, serializeRecordBatch, serializeSchema } from '../../src/engine/storage-read/arrow.js';
import type { Column } from '../../src/types/schema.js';
import { T, arrayOf, structOf } from '../../src/types/types.js';
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

  it('TIMESTAMP(12) nested in ARRAY and STRUCT: microseconds, nanoseconds (exact) or RFC 3339 text', () => {
    const picos = [{ name: 'a', type: arrayOf(T.TIMESTAMP_PICOS), required: false }, { name: 'r', type: structOf([{ name: 'ts', type: T.TIMESTAMP_PICOS }]), required: false }];
    // 2023-01-01T12:00:00.123456789123Z and one picosecond before the epoch.
    const p1 = 1_672_574_400_123_456_789_123n;
    const rows = new RowSource([{ length: 2, columns: [vectorFromValues(picos[0]!.type, [[p1, -1n], []]), vectorFromValues(picos[1]!.type, [[p1], null])] }], null, 2);
    const read = (precision: 'MICROS' | 'NANOS' | 'PICOS'): arrow.Table => {
      const schema = arrowSchema(picos, precision);
      const schemaBytes = serializeSchema(schema);
      return arrow.tableFromIPC([schemaBytes, serializeRecordBatch(schema, schemaBytes, picos, rows, 0, 2, precision)]);
    };
    const micros = read('MICROS');
    expect(String(micros.schema.fields[0]!.type)).toBe('List<Timestamp<MICROSECOND, UTC>>');
    expect(micros.getChild('a')!.get(0)!.toArray()).toEqual(BigInt64Array.from([1_672_574_400_123_456n, -1n]));
    const nanos = read('NANOS');
    expect(String(nanos.schema.fields[1]!.type)).toBe('Struct<{ts:Timestamp<NANOSECOND, UTC>}>');
    // apache-arrow's reader gives milliseconds as a double: the int64 words hold the nanoseconds exactly.
    expect((nanos.getChild('r')!.data[0]!.children[0]!.values as BigInt64Array)[0]).toBe(1_672_574_400_123_456_789n);
    const text = read('PICOS');
    expect(text.getChild('a')!.get(0)!.toArray()).toEqual(['2023-01-01T12:00:00.123456789123Z', '1969-12-31T23:59:59.999999999999Z']);
    expect(text.getChild('r')!.get(0)!.toJSON()).toEqual({ ts: '2023-01-01T12:00:00.123456789123Z' });
    expect(text.getChild('r')!.get(1)).toBeNull();
  });

  it('NANOS refuses an instant beyond 64-bit nanoseconds (after 2262) instead of wrapping it', () => {
    const cols = [{ name: 'ts', type: T.TIMESTAMP_PICOS, required: false }];
    const year2300 = 10_413_792_000n * 1_000_000_000_000n;
    const rows = new RowSource([{ length: 1, columns: [vectorFromValues(T.TIMESTAMP_PICOS, [year2300])] }], null, 1);
    const schema = arrowSchema(cols, 'NANOS');
    expect(() => serializeRecordBatch(schema, serializeSchema(schema), cols, rows, 0, 1, 'NANOS')).toThrow(/2300-01-01T00:00:00Z is out of the range of TIMESTAMP_PRECISION_NANOS/);
  });
});
