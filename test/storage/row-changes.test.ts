// Row-level DML: UPDATE, DELETE and MERGE change the rows they touch (a WAL
// record of deleted positions and new rows), never rewrite the table for a
// small change; the change survives a restart before and after its fold,
// time travel sees the rows before it, paging skips deleted rows, and many
// deleted rows end in a purge (a rewrite) that forgets the positions.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { Storage } from '../../src/storage/store.js';
import { liveRows, readState } from '../../src/storage/table-state.js';
import { run, type Harness } from '../sql/harness.js';
import type { QueryResult } from '../../src/planner/api.js';
import { getValue } from '../../src/types/vector.js';

const P = 'rows';
let dir: string;
let h: Harness;
const q = (sql: string): Promise<QueryResult> => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });
const first = (r: QueryResult): unknown[] => r.batches[0]!.columns.map((v) => getValue(v, 0));
const parquetFiles = (): string[] => (fs.readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.parquet')).sort();

async function open(): Promise<void> {
  const storage = await Storage.open(dir, { noLock: true });
  h = { storage, catalog: new EngineCatalog(storage), close: () => storage.close() };
}
const restart = async (): Promise<void> => {
  await h.close();
  await open();
};
const table = () => h.storage.tableData(P, 'd', 't');

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'row-changes-'));
  await open();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  await q('CREATE TABLE d.t AS SELECT x AS id, MOD(x, 10) AS k, CAST(x AS STRING) AS s FROM UNNEST(GENERATE_ARRAY(1, 50000)) AS x');
});
afterEach(async () => {
  await h?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('row-level DML', () => {
  it('changes the rows it touches, durably, without rewriting the table', async () => {
    const files = parquetFiles();
    expect((await q(`UPDATE d.t SET s = 'changed' WHERE id = 7`)).numDmlAffectedRows).toBe(1);
    expect((await q('DELETE FROM d.t WHERE id BETWEEN 100 AND 109')).numDmlAffectedRows).toBe(10);
    const merged = await q(`MERGE d.t USING (SELECT 8 AS id UNION ALL SELECT 9 UNION ALL SELECT 60000) AS src ON t.id = src.id
      WHEN MATCHED AND src.id = 8 THEN UPDATE SET k = -1 WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (id, k, s) VALUES (src.id, 0, 'new')`);
    expect(merged.numDmlAffectedRows).toBe(3);
    // No file was written: the changes are in the log.
    expect(parquetFiles()).toEqual(files);
    const check = async (): Promise<void> => {
      expect(first(await q('SELECT COUNT(*), SUM(id), COUNTIF(s = "changed"), COUNTIF(k = -1), COUNTIF(s = "new") FROM d.t'))).toEqual([
        49990n - 1n + 1n,
        1250025000n - 1045n - 9n + 60000n,
        1n,
        1n,
        1n,
      ]);
      expect(first(await q('SELECT COUNT(*) FROM d.t WHERE id = 7'))).toEqual([1n]);
    };
    await check();
    // Replayed from the log after a restart, then folded into a fragment and read back again.
    await restart();
    await check();
    await table().compact();
    await restart();
    await check();
    expect(table().rowCount).toBe(49990);
  });

  it('keeps deletions a fold finds alone in the log', async () => {
    await q('DELETE FROM d.t WHERE id IN (1, 2, 3)');
    await table().compact();
    await restart();
    expect(first(await q('SELECT COUNT(*), MIN(id) FROM d.t'))).toEqual([49997n, 4n]);
    await q('DELETE FROM d.t WHERE id = 4');
    await restart();
    expect(first(await q('SELECT COUNT(*), MIN(id) FROM d.t'))).toEqual([49996n, 5n]);
  });

  it('pages over live rows only, and time travel sees the rows before a change', async () => {
    await q('SELECT 1');
    const before = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    await q('DELETE FROM d.t WHERE id <= 1000');
    const td = table();
    const state = td.state();
    expect(liveRows(state)).toBe(49000);
    const page = await readState(state, [0], 10, 12);
    expect(page.flatMap((b) => Array.from({ length: b.length }, (_, i) => getValue(b.columns[0]!, i)))).toEqual([1011n, 1012n]);
    expect(first(await q(`SELECT COUNT(*) FROM d.t FOR SYSTEM_TIME AS OF TIMESTAMP_MILLIS(${before})`))).toEqual([50000n]);
    expect(first(await q('SELECT COUNT(*), MIN(id) FROM d.t'))).toEqual([49000n, 1001n]);
  });

  it('keeps many deleted rows in place, a big change too, until a purge rewrites the table without them', async () => {
    const files = parquetFiles();
    await q('DELETE FROM d.t WHERE k IN (0, 1, 2)');
    expect(table().state().deleted.length).toBe(15000);
    await q('DELETE FROM d.t WHERE k IN (3, 4)');
    expect(liveRows(table().state())).toBe(25000);
    expect(table().state().deleted.length).toBe(25000);
    expect(parquetFiles()).toEqual(files);
    // Many new rows at once go to a fragment of their own, the positions to a deletion vector: the old file stays.
    expect((await q('UPDATE d.t SET s = "all" WHERE TRUE')).numDmlAffectedRows).toBe(25000);
    expect(table().state().deleted.length).toBe(50000);
    expect(parquetFiles().filter((f) => files.includes(f))).toEqual(files);
    // The purge (an idle fold's, here called at once): the positions are forgotten.
    await table().purge();
    expect(table().state().deleted.length).toBe(0);
    expect(liveRows(table().state())).toBe(25000);
    await restart();
    expect(first(await q('SELECT COUNT(*), COUNTIF(s = "all"), COUNT(DISTINCT id) FROM d.t'))).toEqual([25000n, 25000n, 25000n]);
  });

  it('inside a transaction: changes of rows it inserted and read, committed as one', async () => {
    await q(`BEGIN TRANSACTION;
      INSERT INTO d.t VALUES (70000, 1, 'a'), (70001, 1, 'b');
      UPDATE d.t SET s = 'x' WHERE id IN (5, 70001);
      DELETE FROM d.t WHERE id IN (6, 70000);
      UPDATE d.t SET k = 99 WHERE s = 'x';
      COMMIT TRANSACTION;`);
    expect(first(await q('SELECT COUNT(*), COUNTIF(s = "x"), COUNTIF(k = 99), COUNTIF(id IN (6, 70000)) FROM d.t'))).toEqual([50000n, 2n, 2n, 0n]);
    await q(`BEGIN TRANSACTION; DELETE FROM d.t WHERE id = 1; ROLLBACK TRANSACTION;`);
    expect(first(await q('SELECT COUNT(*) FROM d.t WHERE id = 1'))).toEqual([1n]);
  });

  it('a target row matched by two source rows is an error, and nothing changes', async () => {
    await expect(q('UPDATE d.t SET k = src.v FROM (SELECT 3 AS id, 1 AS v UNION ALL SELECT 3, 2) AS src WHERE t.id = src.id')).rejects.toThrow(
      'UPDATE/MERGE must match at most one source row for each target row',
    );
    await expect(q('MERGE d.t USING (SELECT 3 AS id UNION ALL SELECT 3) AS src ON t.id = src.id WHEN MATCHED THEN DELETE')).rejects.toThrow(
      'UPDATE/MERGE must match at most one source row for each target row',
    );
    expect(first(await q('SELECT COUNT(*), SUM(k) FROM d.t'))).toEqual([50000n, 225000n]);
  });
});
