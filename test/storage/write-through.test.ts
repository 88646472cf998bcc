// Write-through: the chunks of a fragment file the engine writes are cached
// as it writes them, made from the values written. Each must equal the chunk
// a read of the file decodes (layout, values, validity, dictionary codes), so
// that a statement reading a table just written sees the same rows either way.
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkCache } from '../../src/storage/chunk-cache.js';
import type { ColumnChunk } from '../../src/storage/column-chunk.js';
import { FragmentFile, ROW_GROUP } from '../../src/storage/fragment-file.js';
import { writeFragments } from '../../src/storage/fragment-writes.js';
import type { Column } from '../../src/types/schema.js';
import { T, type SqlType } from '../../src/types/types.js';
import { Decimal, type Value } from '../../src/types/values.js';
import { decimalBoxing, decimalVector, getValue, vectorFromValues, type Batch, type Vector } from '../../src/types/vector.js';
import { wordsOfText, type DecimalWidth } from '../../src/types/decimal-words.js';
import { tempDir } from '../engine/helpers.js';
import { openHarness, run, type Harness } from '../sql/harness.js';

const cols: Column[] = [
  { name: 'i', type: T.INT64, required: false },
  { name: 'big', type: T.INT64, required: false },
  { name: 'fi', type: T.INT64, required: false },
  { name: 'f', type: T.FLOAT64, required: false },
  { name: 'b', type: T.BOOL, required: false },
  { name: 's', type: T.STRING, required: false },
  { name: 'u', type: T.STRING, required: false },
  { name: 'd', type: T.DATE, required: false },
  { name: 'ts', type: T.TIMESTAMP, required: false },
  { name: 'tm', type: T.TIME, required: false },
  { name: 'by', type: T.BYTES, required: false },
  { name: 'none', type: T.STRING, required: false },
  { name: 'n', type: T.NUMERIC, required: false },
  { name: 'bn', type: T.BIGNUMERIC, required: false },
];

function row(k: number): Value[] {
  const nul = k % 7 === 3;
  return [
    nul ? null : BigInt(k * 1000 - 50),
    // One row group holds a value beyond 2^53: a read gives that chunk as BigInt64Array.
    nul ? null : k === 5 ? 9007199254740993n : BigInt(-k),
    null, // replaced below by a Float64Array-layout INT64 vector holding -0
    nul ? null : k % 11 === 0 ? NaN : k % 13 === 0 ? -0 : k * 0.5,
    nul ? null : k % 2 === 0,
    nul ? null : `cat${k % 5}`,
    nul ? null : `unique ✓ ${k}`,
    nul ? null : 19000 + k,
    nul ? null : 1_700_000_000_000_000n + BigInt(k),
    nul ? null : k * 1_000_000,
    nul ? null : new Uint8Array([k & 255, 0, 255]),
    null,
    nul ? null : new Decimal(`${k}.25`),
    nul ? null : new Decimal(`-${k}.${'7'.repeat(38)}`),
  ];
}

function batchOf(rows: Value[][], first: number): Batch {
  const columns: Vector[] = cols.map((c, i) => vectorFromValues(c.type, rows.map((r) => r[i]!)));
  // INT64 held as doubles (the executor's fast layout), with -0 and NULLs.
  const data = new Float64Array(rows.length);
  const nulls = new Uint8Array(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const k = first + r;
    if (k % 9 === 4) nulls[r] = 1;
    else data[r] = k % 10 === 0 ? -0 : k * 3;
  }
  columns[2] = { type: T.INT64, length: rows.length, data, nulls };
  // NUMERIC / BIGNUMERIC as words (a scan's or a kernel's result), written without boxing.
  for (const i of [cols.length - 2, cols.length - 1]) columns[i] = asWords(columns[i]!, i === cols.length - 2 ? 4 : 8);
  return { length: rows.length, columns };
}

/** A vector of Decimals as a decimal view of their words. */
function asWords(v: Vector, width: DecimalWidth): Vector {
  const words = new Uint32Array(v.length * width);
  for (let i = 0; i < v.length; i++) {
    const x = getValue(v, i);
    if (x === null) continue;
    const text = Buffer.from((x as Decimal).toFixed(), 'latin1');
    expect(wordsOfText(text, 0, text.length, width, words, i)).toBe(true);
  }
  return decimalVector(v.type, v.length, v.nulls, { words, width });
}

/**
 * A chunk with its typed arrays as their kind and bytes (compared byte for byte, so -0, NaN and BigInt64
 * values too); the validity bitmap as bytes whatever Uint8Array holds it (a read slices it from a Buffer).
 */
function plain(c: ColumnChunk): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(c)) {
    if (!ArrayBuffer.isView(v)) out[k] = v;
    else out[k] = `${k === 'validity' ? 'bitmap' : v.constructor.name} ${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}`;
  }
  return out;
}

/** plain() at every level of a nested chunk (list child, struct children). */
function deep(c: ColumnChunk): unknown {
  const out = plain(c);
  for (const [k, v] of Object.entries(out)) {
    if (Array.isArray(v) && k === 'children') out[k] = v.map((x) => deep(x as ColumnChunk));
    else if (v && typeof v === 'object' && 'kind' in v) out[k] = deep(v as ColumnChunk);
  }
  return out;
}

/** The cached chunk, or undefined when the cache does not hold it (the load is never called on a hit). */
async function cached(file: string, rg: number, name: string): Promise<ColumnChunk | undefined> {
  let missed = false;
  const c = await chunkCache.chunk(file, rg, name, () => {
    missed = true;
    return Promise.resolve({ kind: 'null', length: 0 });
  });
  return missed ? undefined : c;
}

describe('write-through chunks', () => {
  it('equal the chunks a read of the file decodes, for every column the writer makes them for', async () => {
    chunkCache.clear();
    const n = ROW_GROUP + 1000;
    const rows = Array.from({ length: n }, (_, k) => row(k));
    const dir = tempDir();
    const batches = [batchOf(rows.slice(0, 100), 0), batchOf(rows.slice(100), 100)];
    const boxed = decimalBoxing.rows;
    const [frag] = await writeFragments(dir, 'wt', cols, batches, 1);
    expect(decimalBoxing.rows, 'words written as text without Decimals').toBe(boxed);
    const file = path.join(dir, frag!.file);
    const f = await FragmentFile.open(file);
    expect(f.rowGroups.length).toBe(2);
    const kinds: string[] = [];
    for (let rg = 0; rg < f.rowGroups.length; rg++) {
      for (const c of cols) {
        const mine = await cached(file, rg, c.name);
        expect(mine, `${c.name} cached`).toBeDefined();
        // A read maps a STRING column's codes into the table's shared dictionary, as the writer did.
        const read = await f.readChunk(rg, c.name, c.type, c.type.kind === 'STRING' ? chunkCache.dictionary(file, c.name) : null);
        expect(plain(mine!), `${c.name} row group ${rg}`).toEqual(plain(read));
        kinds.push(`${c.name}:${mine!.kind}${mine!.kind === 'fixed' ? ':' + mine!.values.constructor.name : ''}`);
      }
    }
    // The layouts covered: doubles and BigInt64Array INT64, dictionary and plain strings, bytes, decimal words.
    expect(kinds).toEqual(
      expect.arrayContaining(['big:fixed:BigInt64Array', 'big:fixed:Float64Array', 'fi:fixed:Float64Array', 's:dict', 'u:utf8', 'by:binary', 'd:fixed:Int32Array', 'b:fixed:Uint8Array', 'n:decimal', 'bn:decimal']),
    );
  });

  it('nested columns: the chunk a read assembles, at every level', async () => {
    chunkCache.clear();
    const arr = (element: SqlType): SqlType => ({ kind: 'ARRAY', element });
    const struct = (...fields: [string, SqlType][]): SqlType => ({ kind: 'STRUCT', fields: fields.map(([name, type]) => ({ name, type })) });
    const item = struct(['s', T.STRING], ['xs', arr(T.INT64)], ['f', T.FLOAT64]);
    const ncols: Column[] = [
      { name: 'a', type: arr(T.INT64), required: false },
      { name: 'tags', type: arr(T.STRING), required: false },
      { name: 'items', type: arr(item), required: false },
      { name: 'st', type: struct(['x', T.INT64], ['inner', struct(['d', T.DATE], ['ys', arr(T.STRING)])]), required: false },
    ];
    const n = ROW_GROUP + 700;
    const nrow = (k: number): Value[] => [
      k % 5 === 0 ? [] : [BigInt(k), k === 7 ? 9007199254740993n : -1n],
      k % 3 === 0 ? [] : [`t${k % 4}`, 'é✓'],
      k % 4 === 0 ? [] : [[k % 6 === 0 ? null : `s${k}`, k % 2 ? [] : [BigInt(k)], k % 9 === 0 ? null : k === 3 ? -0 : k / 4]],
      k % 7 === 0 ? null : [k % 11 === 0 ? null : BigInt(k), k % 13 === 0 ? null : [19000 + k, k % 2 ? ['y'] : []]],
    ];
    const rows = Array.from({ length: n }, (_, k) => nrow(k));
    const nbatch = (rs: Value[][]): Batch => ({ length: rs.length, columns: ncols.map((c, i) => vectorFromValues(c.type, rs.map((r) => r[i]!))) });
    const dir = tempDir();
    const [frag] = await writeFragments(dir, 'wtn', ncols, [nbatch(rows.slice(0, 300)), nbatch(rows.slice(300))], 1);
    const file = path.join(dir, frag!.file);
    const f = await FragmentFile.open(file);
    expect(f.rowGroups.length).toBe(2);
    for (let rg = 0; rg < f.rowGroups.length; rg++) {
      for (const c of ncols) {
        const mine = await cached(file, rg, c.name);
        expect(mine, `${c.name} cached`).toBeDefined();
        expect(deep(mine!), `${c.name} row group ${rg}`).toEqual(deep(await f.readChunk(rg, c.name, c.type)));
      }
    }
  });

  it('a table just written is read from the cache, with the same rows', async () => {
    const h: Harness = await openHarness();
    try {
      const opts = { projectId: 'wt', defaultDataset: { projectId: 'wt', datasetId: 'd' } };
      await h.catalog.createDataset('wt', 'd', { location: 'US' }, true);
      const q = (sql: string) => run(h, sql, opts);
      await q(`CREATE TABLE d.t AS SELECT x AS id, MOD(x, 7) AS k, CAST(x AS FLOAT64) / 3 AS v, CONCAT('s', CAST(MOD(x, 50) AS STRING)) AS s, [x, MOD(x, 3)] AS arr, STRUCT(x AS a, ['p', 'q'] AS tags) AS st FROM UNNEST(GENERATE_ARRAY(1, ${2 * ROW_GROUP + 10})) AS x`);
      const sql = 'SELECT COUNT(*), SUM(id), SUM(k), SUM(v), COUNT(DISTINCT s), MIN(s), MAX(s), SUM(arr[OFFSET(1)]), SUM(st.a), MAX(st.tags[OFFSET(1)]) FROM d.t';
      const misses = chunkCache.misses;
      const hot = await q(sql);
      expect(chunkCache.misses - misses).toBe(0);
      // The same query over chunks decoded from the files.
      chunkCache.clear();
      const cold = await q(sql);
      expect(chunkCache.misses - misses).toBeGreaterThan(0);
      const vals = (r: typeof hot) => r.batches[0]!.columns.map((v) => getValue(v, 0));
      expect(vals(hot)).toEqual(vals(cold));
    } finally {
      await h.close();
    }
  }, 60_000);
});

beforeAll(() => chunkCache.clear());
afterAll(() => chunkCache.clear());
