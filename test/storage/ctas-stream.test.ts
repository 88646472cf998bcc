// CREATE TABLE ... AS SELECT writes its result as the query makes it (files
// of bounded size, never the whole result in memory), and stays atomic: a
// query that fails part-way leaves the old table as it was and no files.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { FILE_ROWS } from '../../src/storage/fragment-file.js';
import { Storage } from '../../src/storage/store.js';
import { run, type Harness } from '../sql/harness.js';
import type { QueryResult } from '../../src/planner/api.js';
import { getValue } from '../../src/types/vector.js';

const P = 'ctas';
let dir: string;
let h: Harness;
const q = (sql: string): Promise<QueryResult> => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });
const first = (r: QueryResult): unknown[] => r.batches[0]!.columns.map((v) => getValue(v, 0));
/** Every file under the data dir (names only). */
const files = (): string[] => (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile()).sort();

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctas-stream-'));
  const storage = await Storage.open(dir, { noLock: true });
  h = { storage, catalog: new EngineCatalog(storage), close: () => storage.close() };
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
});
afterAll(async () => {
  await h?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('CREATE TABLE AS SELECT and INSERT ... SELECT, streamed', () => {
  it('writes every batch the query makes', async () => {
    await q('CREATE TABLE d.t AS SELECT x AS id, CAST(x AS STRING) AS s FROM UNNEST(GENERATE_ARRAY(1, 100000)) AS x');
    expect(first(await q('SELECT COUNT(*), SUM(id), COUNT(DISTINCT s) FROM d.t'))).toEqual([100000n, 5000050000n, 100000n]);
  });

  it('a query failing part-way replaces nothing and leaves no file behind', async () => {
    const before = files();
    // The error comes from a row past the first file (FILE_ROWS rows), which was already written:
    // 20,000 rows past it, so that the batch holding the error (a few thousand rows) starts after it.
    const n = Math.ceil(FILE_ROWS / 1000) * 1000 + 20_000;
    let writtenFiles = 0;
    const watcher = fs.watch(dir, { recursive: true }, (_e, name) => {
      if (name?.endsWith('.parquet') && !before.includes(name)) writtenFiles++;
    });
    const x = 'a * 1000 + b';
    await expect(q(`CREATE OR REPLACE TABLE d.t AS SELECT IF(${x} < ${n - 1}, ${x}, ERROR(CONCAT('boom ', CAST(${x} AS STRING)))) AS id FROM UNNEST(GENERATE_ARRAY(0, ${n / 1000 - 1})) AS a, UNNEST(GENERATE_ARRAY(0, 999)) AS b`)).rejects.toThrow(/boom/);
    watcher.close();
    expect(writtenFiles).toBeGreaterThan(0);
    expect(first(await q('SELECT COUNT(*), SUM(id) FROM d.t'))).toEqual([100000n, 5000050000n]);
    // Files the failed statement wrote are gone (the catalog log may have grown: compare table files only).
    const tableFiles = (l: string[]): string[] => l.filter((f) => f.endsWith('.parquet'));
    expect(tableFiles(files())).toEqual(tableFiles(before));
    // An array the new table cannot store (a NULL element) fails the statement the same way.
    await expect(q('CREATE TABLE d.u AS SELECT [x, NULL] AS a FROM UNNEST(GENERATE_ARRAY(1, 10)) AS x')).rejects.toThrow(/null element/);
    expect(h.catalog.getTable({ projectId: P, datasetId: 'd', tableId: 'u' })).toBeUndefined();
  });

  it('INSERT ... SELECT: a large result goes to files as it comes, a failing one leaves nothing behind', async () => {
    await q('CREATE TABLE d.ins (id INT64)');
    const n = Math.ceil(FILE_ROWS / 1000) * 1000 + 1000;
    const x = 'a * 1000 + b';
    const from = `FROM UNNEST(GENERATE_ARRAY(0, ${n / 1000 - 1})) AS a, UNNEST(GENERATE_ARRAY(0, 999)) AS b`;
    const before = files().filter((f) => f.endsWith('.parquet'));
    await expect(q(`INSERT INTO d.ins SELECT IF(${x} < ${n - 1}, ${x}, ERROR('boom')) ${from}`)).rejects.toThrow(/boom/);
    expect(files().filter((f) => f.endsWith('.parquet'))).toEqual(before);
    expect(first(await q('SELECT COUNT(*) FROM d.ins'))).toEqual([0n]);
    expect((await q(`INSERT INTO d.ins SELECT ${x} ${from}`)).numDmlAffectedRows).toBe(n);
    expect((await q('INSERT INTO d.ins VALUES (-1), (-2)')).numDmlAffectedRows).toBe(2);
    expect(first(await q('SELECT COUNT(*), SUM(id) FROM d.ins'))).toEqual([BigInt(n + 2), BigInt((n * (n - 1)) / 2 - 3)]);
  });
});
