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
import { encodeFragmentFile, FragmentFile, ROW_GROUP } from '../../src/storage/fragment-file.js';
import type { Column } from '../../src/types/schema.js';
import { T, type SqlType } from '../../src/types/types.js';
import { Decimal, Geography, Interval, JsonValue, RangeValue, type Value } from '../../src/types/values.js';
import { jsonNodeToText, parseJsonText } from '../../src/types/json-values.js';
import { concatVectors, getValue, sliceVector, takeVector, vectorFromValues, type Batch, type Vector } from '../../src/types/vector.js';
import { valueBytes } from '../../src/types/logical-bytes.js';
import { tempDir } from '../engine/helpers.js';

const arr = (element: SqlType): SqlType => ({ kind: 'ARRAY', element });
const struct = (...fields: [string, SqlType][]): SqlType => ({ kind: 'STRUCT', fields: fields.map(([name, type]) => ({ name, type })) });

function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random value of `t`; `top`: a column's value (a NULL array there stays NULL; nested ones read as []). */
function randomValue(r: () => number, t: SqlType, top: boolean, pNull = 0.15): Value {
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(r() * xs.length)]!;
  if (t.kind === 'ARRAY') {
    if (top && r() < pNull) return null;
    const n = pick([0, 0, 1, 2, 3, 5]);
    return Array.from({ length: n }, () => randomValue(r, t.element, false, 0.05));
  }
  if (r() < pNull) return null;
  switch (t.kind) {
    case 'STRUCT':
      return t.fields.map((f) => randomValue(r, f.type, false));
    case 'INT64':
      return pick([0n, -1n, 9007199254740993n, -(2n ** 63n), 2n ** 63n - 1n, BigInt(Math.floor(r() * 1e6))]);
    case 'FLOAT64':
      return pick([0, -0, 0.1, -2.5e300, Number.NaN, Number.POSITIVE_INFINITY, r() * 1000]);
    case 'BOOL':
      return r() < 0.5;
    case 'STRING':
      return pick(['', 'a', 'é✓😀', 'x'.repeat(5000), `s${Math.floor(r() * 4)}`, `u${Math.floor(r() * 1e9)}`]);
    case 'BYTES':
      return new Uint8Array(Array.from({ length: Math.floor(r() * 5) }, () => Math.floor(r() * 256)));
    case 'NUMERIC':
      return new Decimal(pick(['0', '-1.5', '99999999999999999999999999999.999999999', `${Math.floor(r() * 1e6)}.25`]));
    case 'BIGNUMERIC':
      return new Decimal(pick(['0', '-1e-38', '123456789012345678901234567890123456789.5']));
    case 'TIMESTAMP':
    case 'DATETIME':
      return pick([0n, -62135596800000000n, 253402300799999999n, 1700000000000001n + BigInt(Math.floor(r() * 1e9))]);
    case 'DATE':
      return pick([0, -719162, 2932896, 19000 + Math.floor(r() * 1000)]);
    case 'TIME':
      return pick([0, 86399999999, Math.floor(r() * 86400) * 1e6]);
    case 'JSON':
      return new JsonValue(parseJsonText(pick(['{"k":1,"big":12345678901234567890}', '[1,"a",null]', 'null', '"x"'])));
    case 'GEOGRAPHY':
      return new Geography(null, pick(['POINT(1 2)', 'LINESTRING(0 0, 1 1)']));
    case 'INTERVAL':
      return new Interval(Math.floor(r() * 10), -3, BigInt(Math.floor(r() * 1e9)));
    case 'RANGE':
      return new RangeValue(pick([null, 19000]), pick([null, 19500]));
    default:
      throw new Error(`no generator for ${t.kind}`);
  }
}

const norm = (v: Value): unknown =>
  v instanceof Decimal
    ? `D${v.toFixed()}`
    : v instanceof JsonValue
      ? `J${jsonNodeToText(v.node)}`
      : v instanceof Geography
        ? `G${v.wkt}`
        : v instanceof Interval
          ? `I${v.months}/${v.days}/${v.micros}`
          : v instanceof RangeValue
            ? ['R', norm(v.start), norm(v.end)]
            : v instanceof Uint8Array
              ? ['B', ...v]
              : typeof v === 'number' && (Object.is(v, -0) || Number.isNaN(v))
                ? String(Object.is(v, -0) ? '-0' : v)
                : Array.isArray(v)
                  ? v.map(norm)
                  : v;

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

const LEAVES: SqlType[] = [T.INT64, T.FLOAT64, T.BOOL, T.STRING, T.BYTES, T.NUMERIC, T.BIGNUMERIC, T.TIMESTAMP, T.DATETIME, T.DATE, T.TIME, T.JSON, T.GEOGRAPHY, T.INTERVAL, { kind: 'RANGE', element: T.DATE }];

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
