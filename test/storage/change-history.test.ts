// The change record APPENDS and CHANGES read (storage/change-history.ts,
// ChangeRecord in table-history.ts) through large changes (new rows in
// fragment files, deletions in a deletion vector, a clustered table whose
// files reorder their rows), a purge (a replace that changes no data),
// restarts, sidecars written before the record existed, and a past
// generation leaving the time-travel window.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { Storage } from '../../src/storage/store.js';
import { TableData } from '../../src/storage/table-data.js';
import { run, type Harness } from '../sql/harness.js';
import { getValue } from '../../src/types/vector.js';
import { changedSlices } from '../../src/storage/change-history.js';
import { scanCounters, type Segment } from '../../src/storage/table-state.js';
import { tempDir } from '../engine/helpers.js';

const P = 'ch';
let dir: string;
let h: Harness;
const q = async (sql: string): Promise<unknown[][]> => {
  const r = await run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });
  return r.batches.flatMap((b) => Array.from({ length: b.length }, (_, i) => b.columns.map((v) => getValue(v, i))));
};
async function open(): Promise<void> {
  const storage = await Storage.open(dir, { noLock: true });
  h = { storage, catalog: new EngineCatalog(storage), close: () => storage.close() };
}
const restart = async (): Promise<void> => {
  await h.close();
  await open();
};
const saved = TableData.retentionMs;

beforeEach(async () => {
  dir = tempDir('change-history-');
  await open();
  await q('CREATE SCHEMA d');
});
afterEach(async () => {
  TableData.retentionMs = saved;
  await h.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const appendsByType = 'SELECT _CHANGE_TYPE, COUNT(*), SUM(id) FROM APPENDS(TABLE d.t) GROUP BY 1 ORDER BY 1';
const changesByType = 'SELECT _CHANGE_TYPE, _CHANGE_IS_FOR_UPDATE, COUNT(*), SUM(id) FROM CHANGES(TABLE d.t, NULL, NULL) GROUP BY 1, 2 ORDER BY 1, 2';

describe('change record', () => {
  it('tells a large MERGE on a clustered table apart: updated rows, inserted rows, deleted rows (files, not the WAL)', async () => {
    await q("CREATE TABLE d.t (id INT64, k INT64, s STRING) CLUSTER BY k OPTIONS (enable_change_history = TRUE) AS SELECT id, MOD(id * 7919, 1000) AS k, 'o' AS s FROM UNNEST(GENERATE_ARRAY(1, 30000)) AS id");
    // 25,000 of the 30,000 rows updated, 500 deleted, 25,000 new ones inserted: the bulk path, files laid out by k.
    await q(`MERGE d.t USING (SELECT id FROM UNNEST(GENERATE_ARRAY(5001, 55000)) AS id) src ON t.id = src.id
      WHEN MATCHED AND t.id <= 5500 THEN DELETE
      WHEN MATCHED THEN UPDATE SET s = 'u', k = 999 - t.k
      WHEN NOT MATCHED THEN INSERT (id, k, s) VALUES (src.id, MOD(src.id, 1000), 'n')`);
    const sum = (a: number, b: number): bigint => BigInt(((a + b) * (b - a + 1)) / 2);
    const expectedAppends = [['INSERT', 55000n, sum(1, 30000) + sum(30001, 55000)]];
    const expectedChanges = [
      ['DELETE', false, 500n, sum(5001, 5500)],
      ['DELETE', true, 24500n, sum(5501, 30000)],
      ['INSERT', false, 55000n, sum(1, 30000) + sum(30001, 55000)],
      ['UPDATE', false, 24500n, sum(5501, 30000)],
    ];
    expect(await q(appendsByType)).toEqual(expectedAppends);
    expect(await q(changesByType)).toEqual(expectedChanges);
    // The updates' new rows are the updated values, the deletions' the old ones.
    expect(await q("SELECT COUNTIF(s = 'u'), COUNTIF(s = 'o') FROM CHANGES(TABLE d.t, NULL, NULL) WHERE _CHANGE_TYPE != 'INSERT'")).toEqual([[24500n, 25000n]]);
    await restart();
    expect(await q(appendsByType)).toEqual(expectedAppends);
    expect(await q(changesByType)).toEqual(expectedChanges);
  });

  it('a purge carries the rows over: APPENDS and CHANGES do not list them again', async () => {
    await q('CREATE TABLE d.t (id INT64) OPTIONS (enable_change_history = TRUE) AS SELECT id FROM UNNEST(GENERATE_ARRAY(1, 40000)) AS id');
    await q('DELETE d.t WHERE id <= 30000');
    const a = await q(appendsByType);
    const c = await q(changesByType);
    const td = h.storage.tableData(P, 'd', 't');
    await td.compact();
    const generation = td.state().generation;
    await td.purge();
    // The purge replaced the generation (the past one keeps the history).
    expect(td.state().generation).toBeGreaterThan(generation);
    expect(td.state().deleted.length).toBe(0);
    expect((await q('SELECT COUNT(*) FROM d.t'))[0]).toEqual([10000n]);
    expect(await q(appendsByType)).toEqual(a);
    expect(await q(changesByType)).toEqual(c);
    await restart();
    expect(await q(appendsByType)).toEqual(a);
    expect(await q(changesByType)).toEqual(c);
  });

  it('a sidecar written before the record: every appended row reads as an insert (the storage did not tell then)', async () => {
    await q('CREATE TABLE d.t (id INT64) AS SELECT 1 AS id UNION ALL SELECT 2');
    await q('UPDATE d.t SET id = 20 WHERE id = 2');
    expect(await q('SELECT id FROM APPENDS(TABLE d.t) ORDER BY id')).toEqual([[1n], [2n]]);
    await h.storage.tableData(P, 'd', 't').compact();
    await h.close();
    // What an older build wrote: the same sidecar without `changes`.
    const ds = path.join(dir, P, 'd');
    const meta = fs.readdirSync(ds).find((n) => n.endsWith('.meta.json'))!;
    const sc = JSON.parse(fs.readFileSync(path.join(ds, meta), 'utf8')) as Record<string, unknown>;
    expect(sc.changes).toBeDefined();
    delete sc.changes;
    fs.writeFileSync(path.join(ds, meta), JSON.stringify(sc));
    await open();
    expect(await q('SELECT id FROM APPENDS(TABLE d.t) ORDER BY id')).toEqual([[1n], [2n], [20n]]);
  });

  it('a past generation that left the time-travel window takes its changes with it', async () => {
    await q('CREATE TABLE d.t (id INT64) OPTIONS (enable_change_history = TRUE)');
    await q('INSERT d.t VALUES (1), (2)');
    await q('TRUNCATE TABLE d.t');
    await q('INSERT d.t VALUES (3)');
    expect(await q("SELECT id, _CHANGE_TYPE FROM CHANGES(TABLE d.t, NULL, NULL) ORDER BY _CHANGE_TIMESTAMP, id")).toEqual([[1n, 'INSERT'], [2n, 'INSERT'], [1n, 'DELETE'], [2n, 'DELETE'], [3n, 'INSERT']]);
    TableData.retentionMs = 50;
    await new Promise((r) => setTimeout(r, 100));
    // The next sidecar write drops the generation the TRUNCATE superseded.
    await q('INSERT d.t VALUES (4)');
    await h.storage.tableData(P, 'd', 't').compact();
    expect(await q('SELECT id, _CHANGE_TYPE FROM CHANGES(TABLE d.t, NULL, NULL) ORDER BY id')).toEqual([[3n, 'INSERT'], [4n, 'INSERT']]);
  });

  it('a window over the last commits reads only their rows: row groups of earlier files are not read', async () => {
    await q('CREATE TABLE d.t (id INT64)');
    // Bulk inserts: each its own fragment file.
    for (let g = 0; g < 4; g++) await q(`INSERT d.t SELECT id FROM UNNEST(GENERATE_ARRAY(${g * 30000 + 1}, ${(g + 1) * 30000})) AS id`);
    await new Promise((r) => setTimeout(r, 5));
    const start = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    await q('INSERT d.t SELECT id FROM UNNEST(GENERATE_ARRAY(120001, 150000)) AS id');
    const before = scanCounters.rowGroupsRead;
    expect(await q(`SELECT COUNT(*), MIN(id), MAX(id) FROM APPENDS(TABLE d.t, TIMESTAMP_MILLIS(${start}))`)).toEqual([[30000n, 120001n, 150000n]]);
    const read = scanCounters.rowGroupsRead - before;
    const all = scanCounters.rowGroupsRead;
    expect(await q('SELECT COUNT(*) FROM APPENDS(TABLE d.t)')).toEqual([[150000n]]);
    // The whole history reads five times the row groups the last commit's window does.
    expect(scanCounters.rowGroupsRead - all).toBe(5 * read);
  });
});

describe('changedSlices', () => {
  const mem = (n: number): Segment => ({ kind: 'mem', batch: { length: n, columns: [] } });
  it('keeps, per segment holding a position, its rows from the first such position to the last', () => {
    const slices = changedSlices([mem(10), mem(10), mem(10)], [3, 5, 25, 29]);
    expect(slices.map((s) => [s.start, s.segments.map((g) => (g as { batch: { length: number } }).batch.length)])).toEqual([[3, [3]], [25, [5]]]);
    expect(changedSlices([mem(10)], [])).toEqual([]);
  });
});
