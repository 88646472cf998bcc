// The anonymous result store on its own: results written by one store are
// read back by a fresh one on the same directory (what an engine restart
// does), large results are chunked and read a window at a time, and results
// expire after the TTL.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ResultStore, type ResultTable } from '../../src/engine/results.js';
import { vectorFromValues, type Batch } from '../../src/types/vector.js';
import { Decimal, type Value } from '../../src/types/values.js';
import type { SqlType } from '../../src/types/types.js';
import { encodeRows } from '../../src/types/wire.js';
import { tempDir as newTempDir } from './helpers.js';

const dirs: string[] = [];
const tempDir = (prefix: string): string => {
  const d = newTempDir(prefix);
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const INT: SqlType = { kind: 'INT64' };
const STR: SqlType = { kind: 'STRING' };
const NUM: SqlType = { kind: 'NUMERIC' };
const ARR: SqlType = { kind: 'ARRAY', element: INT };
const F64: SqlType = { kind: 'FLOAT64' };
const DATE: SqlType = { kind: 'DATE' };
const BOOL: SqlType = { kind: 'BOOL' };
const wire = { timestampFormat: 'RFC3339' as const, stringScalars: true };

/**
 * n rows in executor-sized batches: id (float-held INT64), label, amount,
 * tags, f (NaN, -0, +-Infinity, NULL), big (INT64 past 2^53 in every other
 * batch: two layouts in one column), d (DATE), b (BOOL with NULLs).
 */
function table(tableId: string, n: number): ResultTable {
  const batches: Batch[] = [];
  for (let s = 0; s < n; s += 4096) {
    const len = Math.min(4096, n - s);
    const ids: Value[] = [], labels: Value[] = [], amounts: Value[] = [], tags: Value[] = [];
    const fs_: Value[] = [], bigs: Value[] = [], ds: Value[] = [], bs: Value[] = [];
    const odd = (s / 4096) % 2 === 1;
    for (let i = s; i < s + len; i++) {
      ids.push(BigInt(i));
      labels.push(i % 7 === 0 ? null : `row ${i}`);
      amounts.push(new Decimal(`${i}.25`));
      tags.push(i % 3 === 0 ? [] : [BigInt(i), 9007199254740993n]);
      fs_.push([NaN, -0, Infinity, -Infinity, null, i / 3][i % 6]!);
      bigs.push(i % 5 === 0 ? null : odd ? (1n << 60n) + BigInt(i) : BigInt(-i));
      ds.push(i % 11 === 0 ? null : i - 5000);
      bs.push(i % 3 === 0 ? null : i % 2 === 0);
    }
    batches.push({
      length: len,
      columns: [
        vectorFromValues(INT, ids), vectorFromValues(STR, labels), vectorFromValues(NUM, amounts), vectorFromValues(ARR, tags),
        vectorFromValues(F64, fs_), vectorFromValues(INT, bigs), vectorFromValues(DATE, ds), vectorFromValues(BOOL, bs),
      ],
    });
  }
  return {
    projectId: 'p',
    datasetId: ResultStore.datasetFor('p'),
    tableId,
    columns: [
      { name: 'id', type: INT }, { name: 'label', type: STR }, { name: 'amount', type: NUM }, { name: 'tags', type: ARR },
      { name: 'f', type: F64 }, { name: 'big', type: INT }, { name: 'd', type: DATE }, { name: 'b', type: BOOL },
    ],
    batches,
    rowCount: n,
    etag: `"e-${tableId}"`,
  };
}

const page = (t: ResultTable, start: number, count: number): string => encodeRows(t.batches, start, count, wire);

describe('ResultStore', () => {
  it('a small result is on disk when put resolves and reads back identically in a fresh store', async () => {
    const dir = tempDir('wh-res-');
    const a = new ResultStore({ dir });
    const t = table('anon_small', 300);
    await a.put(t);
    const expected = encodeRows(t.batches, 0, 300, wire);
    expect(expected).toContain('9007199254740993');
    a.close();
    const b = new ResultStore({ dir });
    const r = (await b.get('p', t.datasetId, 'anon_small'))!;
    expect(r.rowCount).toBe(300);
    expect(r.etag).toBe('"e-anon_small"');
    expect(r.columns).toEqual(t.columns);
    expect(page(r, 0, 300)).toBe(expected);
    expect(await b.get('p', t.datasetId, 'anon_other')).toBeUndefined();
    b.close();
  });

  it('a large result is written in chunks and read back a window at a time', async () => {
    const dir = tempDir('wh-res-');
    const a = new ResultStore({ dir });
    const n = 200_000;
    const t = table('anon_large', n);
    await a.put(t);
    a.close();
    const files = fs.readdirSync(path.join(dir, 'p', ResultStore.datasetFor('p')));
    expect(files.filter((f) => f.endsWith('.chunk')).length).toBe(Math.ceil(n / 65_536));
    const b = new ResultStore({ dir });
    const start = 150_000;
    const r = (await b.get('p', t.datasetId, 'anon_large', start, 10))!;
    expect(r.rowCount).toBe(n);
    // Only the chunk holding the window is loaded; the others are placeholders of the right length.
    expect(r.batches.reduce((s, x) => s + x.length, 0)).toBe(n);
    expect(r.batches.filter((x) => x.columns.length > 0).length).toBe(1);
    expect(page(r, start, 10)).toBe(encodeRows(t.batches, start, 10, wire));
    // A window across a chunk boundary.
    const across = (await b.get('p', t.datasetId, 'anon_large', 65_530, 12))!;
    expect(page(across, 65_530, 12)).toBe(encodeRows(t.batches, 65_530, 12, wire));
    expect((await b.get('p', t.datasetId, 'anon_large', n - 1, 5))!.batches.at(-1)!.columns.length).toBe(8);
    // Every row of every chunk, with NaN, -0, infinities, int64 past 2^53 and NULLs, as written.
    const all = (await b.get('p', t.datasetId, 'anon_large'))!;
    expect(page(all, 0, n)).toBe(encodeRows(t.batches, 0, n, wire));
    expect(page(all, 0, 12)).toContain('"NaN"');
    expect(page(all, 4096, 1)).toContain(String((1n << 60n) + 4096n));
    b.close();
  }, 60_000);

  it('results expire after the TTL, and the sweep deletes their files', async () => {
    const dir = tempDir('wh-res-');
    let now = Date.now();
    const s = new ResultStore({ dir, ttlMs: 60_000, now: () => now });
    await s.put(table('anon_old', 10));
    await s.put(table('anon_big', 20_000));
    now += 30_000;
    expect((await s.get('p', ResultStore.datasetFor('p'), 'anon_old'))?.rowCount).toBe(10);
    now += 31_000;
    expect(await s.get('p', ResultStore.datasetFor('p'), 'anon_old')).toBeUndefined();
    // A fresh store (a restart) does not serve it either.
    const fresh = new ResultStore({ dir, ttlMs: 60_000, now: () => now });
    expect(await fresh.get('p', ResultStore.datasetFor('p'), 'anon_big')).toBeUndefined();
    // File times are real time: the sweep's clock is moved past them.
    const sweeper = new ResultStore({ dir, ttlMs: 60_000, now: () => Date.now() + 61_000 });
    expect(await sweeper.sweep()).toBeGreaterThanOrEqual(3); // two manifests and the large result's chunk
    expect(fs.readdirSync(path.join(dir, 'p', ResultStore.datasetFor('p')))).toEqual([]);
    expect(fs.readdirSync(path.join(dir, 'log'))).toEqual([]);
    for (const x of [s, fresh, sweeper]) x.close();
  });

  it('small results share an append-only log; a line a kill cut short is dropped, the lines before it are read', async () => {
    const dir = tempDir('wh-res-');
    const a = new ResultStore({ dir });
    for (let i = 0; i < 50; i++) await a.put(table(`anon_s${i}`, i + 1));
    a.close();
    const logs = fs.readdirSync(path.join(dir, 'log'));
    expect(logs).toHaveLength(1);
    // A torn tail, as a kill in the middle of write(2) leaves it.
    fs.appendFileSync(path.join(dir, 'log', logs[0]!), `${JSON.stringify('p\u0000_anonp\u0000anon_torn')}\t{"projectId":"p","rowCo`);
    const b = new ResultStore({ dir });
    expect(await b.get('p', '_anonp', 'anon_torn')).toBeUndefined();
    for (const i of [0, 17, 49]) {
      const r = (await b.get('p', '_anonp', `anon_s${i}`))!;
      expect(page(r, 0, i + 1)).toBe(encodeRows(table('x', i + 1).batches, 0, i + 1, wire));
    }
    // The new run appends to a log of its own; a rewrite of a key wins over the old line after another restart.
    await b.put(table('anon_s3', 7));
    b.close();
    expect(fs.readdirSync(path.join(dir, 'log'))).toHaveLength(2);
    const c = new ResultStore({ dir });
    expect((await c.get('p', '_anonp', 'anon_s3'))!.rowCount).toBe(7);
    expect((await c.get('p', '_anonp', 'anon_s4'))!.rowCount).toBe(5);
    c.close();
  });

  it('a rewritten result (same job id) never serves the old rows', async () => {
    const dir = tempDir('wh-res-');
    const s = new ResultStore({ dir });
    await s.put(table('anon_re', 100_000));
    expect((await s.get('p', ResultStore.datasetFor('p'), 'anon_re', 0, 1))!.rowCount).toBe(100_000);
    await s.put(table('anon_re', 5));
    const r = (await s.get('p', ResultStore.datasetFor('p'), 'anon_re'))!;
    expect(r.rowCount).toBe(5);
    expect(page(r, 0, 5)).toBe(encodeRows(table('x', 5).batches, 0, 5, wire));
    s.close();
    const again = new ResultStore({ dir });
    expect((await again.get('p', ResultStore.datasetFor('p'), 'anon_re'))!.rowCount).toBe(5);
    again.close();
  }, 60_000);

  it('without a dir results live in memory only', async () => {
    const s = new ResultStore();
    await s.put(table('anon_mem', 100_000));
    const r = (await s.get('p', ResultStore.datasetFor('p'), 'anon_mem', 99_990, 10))!;
    expect(page(r, 99_990, 10)).toBe(encodeRows(table('x', 100_000).batches, 99_990, 10, wire));
    expect(await new ResultStore().get('p', ResultStore.datasetFor('p'), 'anon_mem')).toBeUndefined();
  });
});
