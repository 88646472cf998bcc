// Fragment files of this format round-trip every warehouse type exactly
// (NULLs, dictionary and plain strings, INT64 beyond 2^53), read back a row
// group and a column at a time with statistics; files of the earlier format
// (hyparquet-writer's) are still read.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chunkVector, SharedDictionary } from '../../src/storage/column-chunk.js';
import { FragmentFile, ROW_GROUP } from '../../src/storage/fragment-file.js';
import { encodeFragmentFile } from '../../src/storage/fragment-encode.js';
import { encodeFragment } from '../../src/storage/parquet.js';
import type { Column } from '../../src/types/schema.js';
import { T, type SqlType } from '../../src/types/types.js';
import { Decimal, Geography, Interval, JsonValue, type Value } from '../../src/types/values.js';
import { jsonNodeToText, parseJsonText } from '../../src/types/json-values.js';
import { getValue, vectorFromValues, type Batch } from '../../src/types/vector.js';
import { tempDir } from '../engine/helpers.js';
import { valueBytes, vectorBytes } from '../../src/types/logical-bytes.js';

const STRUCT: SqlType = { kind: 'STRUCT', fields: [{ name: 'a', type: T.INT64 }, { name: 'b', type: T.STRING }] };
const cols: Column[] = [
  { name: 'i', type: T.INT64, required: false },
  { name: 'f', type: T.FLOAT64, required: false },
  { name: 'b', type: T.BOOL, required: false },
  { name: 's', type: T.STRING, required: false },
  { name: 'u', type: T.STRING, required: false },
  { name: 'd', type: T.DATE, required: false },
  { name: 'ts', type: T.TIMESTAMP, required: false },
  { name: 'tm', type: T.TIME, required: false },
  { name: 'by', type: T.BYTES, required: false },
  { name: 'n', type: T.NUMERIC, required: false },
  { name: 'j', type: T.JSON, required: false },
  { name: 'g', type: T.GEOGRAPHY, required: false },
  { name: 'iv', type: T.INTERVAL, required: false },
  { name: 'st', type: STRUCT, required: false },
  { name: 'ar', type: { kind: 'ARRAY', element: T.INT64 }, required: false },
];

function row(k: number): Value[] {
  const nul = k % 7 === 3;
  return [
    nul ? null : k === 5 ? 9007199254740993n + BigInt(k) : BigInt(k * 1000 - 50),
    nul ? null : k * 0.5,
    nul ? null : k % 2 === 0,
    nul ? null : `cat${k % 5}`,
    nul ? null : `unique ✓ ${k}`,
    nul ? null : 19000 + k,
    nul ? null : 1_700_000_000_000_000n + BigInt(k),
    nul ? null : k * 1_000_000,
    nul ? null : new Uint8Array([k & 255, 0, 255]),
    nul ? null : new Decimal(`${k}.25`),
    nul ? null : new JsonValue(parseJsonText(`{"k":${k},"big":12345678901234567890}`)),
    nul ? null : new Geography(null, `POINT(${k} 1)`),
    nul ? null : new Interval(1, k, BigInt(k)),
    nul ? null : [BigInt(k), `s${k}`],
    nul ? [] : [BigInt(k), BigInt(k + 1)],
  ];
}

function batchOf(rows: Value[][]): Batch {
  return { length: rows.length, columns: cols.map((c, i) => vectorFromValues(c.type, rows.map((r) => r[i]!))) };
}

const norm = (v: Value): unknown => (v instanceof Decimal ? v.toFixed() : v instanceof JsonValue ? jsonNodeToText(v.node) : v instanceof Geography ? v.wkt : v instanceof Interval ? `${v.months}/${v.days}/${v.micros}` : v instanceof Uint8Array ? [...v] : Array.isArray(v) ? v.map(norm) : v);

describe('fragment files', () => {
  it('round-trip every type, row group by row group and column by column, with statistics', async () => {
    const n = ROW_GROUP + 1000;
    const rows = Array.from({ length: n }, (_, k) => row(k));
    const file = path.join(tempDir(), 'f.parquet');
    fs.writeFileSync(file, Buffer.concat(await encodeFragmentFile(cols, [batchOf(rows.slice(0, 100)), batchOf(rows.slice(100))], { 'warehouse.lastLsn': '7' })));
    const f = await FragmentFile.open(file);
    expect(f.ownFormat).toBe(true);
    expect(f.rows).toBe(n);
    expect(f.rowGroups.map((g) => g.rows)).toEqual([ROW_GROUP, 1000]);
    expect(f.meta['warehouse.lastLsn']).toBe('7');
    let base = 0;
    for (let rg = 0; rg < f.rowGroups.length; rg++) {
      const len = f.rowGroups[rg]!.rows;
      for (const [ci, c] of cols.entries()) {
        const chunk = await f.readChunk(rg, c.name, c.type);
        const v = chunkVector(c.type, chunk, 0, len);
        for (const k of [0, 3, 5, 10, len - 1]) expect(norm(getValue(v, k)), `${c.name} row ${base + k}`).toEqual(norm(rows[base + k]![ci]!));
        if (c.name === 's') expect(chunk.kind).toBe('dict');
        if (c.name === 'u') expect(chunk.kind).toBe('utf8');
      }
      base += len;
    }
    const st = f.rowGroups[1]!.columns.get('i')!.stats!;
    expect(st.nulls).toBe(143);
    expect(st.min).toBe(BigInt(ROW_GROUP * 1000 - 50));
    expect(f.rowGroups[0]!.columns.get('s')!.stats).toMatchObject({ min: 'cat0', max: 'cat4' });
    expect(f.rowGroups[0]!.columns.get('d')!.stats).toMatchObject({ min: 19000 });
    // Each chunk keeps its values' logical bytes (job statistics bill them): as measured from the rows.
    base = 0;
    for (const g of f.rowGroups) {
      const mine = batchOf(rows.slice(base, base + g.rows));
      for (const [ci, c] of cols.entries()) expect(g.columns.get(c.name)!.bytes, c.name).toBe(vectorBytes(mine.columns[ci]!));
      base += g.rows;
    }
    // STRING: 2 + UTF-8 bytes ('unique ✓ 0': 12); NULL: nothing; ARRAY<INT64>: 8 an element.
    expect(valueBytes(T.STRING, 'unique ✓ 0')).toBe(14);
    expect(f.rowGroups[1]!.columns.get('i')!.bytes).toBe((1000 - 143) * 8);
    expect(valueBytes(cols[14]!.type, [1n, 2n])).toBe(16);
  });

  it('reads files of the earlier format, and a column a file lacks as NULL', async () => {
    const rows = Array.from({ length: 50 }, (_, k) => row(k));
    const file = path.join(tempDir(), 'old.parquet');
    fs.writeFileSync(file, await encodeFragment(cols.slice(0, 8), [batchOf(rows)].map((b) => ({ length: b.length, columns: b.columns.slice(0, 8) })), {}));
    const f = await FragmentFile.open(file);
    expect(f.ownFormat).toBe(false);
    for (const [ci, c] of cols.entries()) {
      const v = chunkVector(c.type, await f.readChunk(0, c.name, c.type), 0, 50);
      for (const k of [0, 3, 5, 49]) expect(norm(getValue(v, k)), c.name).toEqual(ci < 8 ? norm(rows[k]![ci]!) : c.type.kind === 'ARRAY' ? [] : null);
    }
  });

  it("maps row groups' dictionaries into one shared dictionary, values unchanged", async () => {
    // Three row groups whose value sets overlap and grow; NULLs in between.
    const sc: Column[] = [{ name: 's', type: T.STRING, required: false }];
    const n = 2 * ROW_GROUP + 500;
    const val = (k: number): string | null => (k % 11 === 0 ? null : `v${(k * 7) % (k < ROW_GROUP ? 50 : 80)}`);
    const file = path.join(tempDir(), 'shared.parquet');
    const rows = Array.from({ length: n }, (_, k) => val(k));
    fs.writeFileSync(file, Buffer.concat(await encodeFragmentFile(sc, [{ length: n, columns: [vectorFromValues(T.STRING, rows)] }], {})));
    const f = await FragmentFile.open(file);
    const shared = new SharedDictionary();
    let base = 0;
    for (let rg = 0; rg < f.rowGroups.length; rg++) {
      const len = f.rowGroups[rg]!.rows;
      const chunk = await f.readChunk(rg, 's', T.STRING, shared);
      expect(chunk).toMatchObject({ kind: 'dict', shared: true });
      if (chunk.kind === 'dict') expect(chunk.dictionary).toBe(shared.values);
      const v = chunkVector(T.STRING, chunk, 0, len);
      for (let k = 0; k < len; k++) if (getValue(v, k) !== rows[base + k]) expect(getValue(v, k), `row ${base + k}`).toBe(rows[base + k]);
      base += len;
    }
    expect(new Set(shared.values)).toEqual(new Set(rows.filter((x) => x !== null)));
    expect(shared.values.length).toBe(80);
  });
});
