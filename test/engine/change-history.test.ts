// APPENDS and CHANGES through the engine's API (time-series-functions.md):
// the change history of rows streamed with insertAll, inserted, updated,
// merged and deleted by DML answers the same after a restart (rows still in
// the WAL, then folded into fragments), with _CHANGE_TIMESTAMP the commit
// time each write got (between the instants read around it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessEngine } from './helpers.js';

let eng: InProcessEngine;
const T = { projectId: 'p', datasetId: 'd' };
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));

async function query(sql: string): Promise<string[][]> {
  const r = await eng.client.call<{ rowsJson: string }>('ExecuteQuery', { projectId: 'p', jobId: `ch_${Math.random().toString(36).slice(2)}`, query: sql, maxResults: 1000 });
  return (JSON.parse(r.rowsJson || '[]') as { f: { v: string | null }[] }[]).map((row) => row.f.map((c) => String(c.v)));
}

beforeAll(async () => {
  eng = await startInProcess();
  await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
});
afterAll(async () => {
  await eng.close();
});

describe('APPENDS and CHANGES across a restart', () => {
  it('answer the same with rows in the WAL, after a restart, and after the fold', async () => {
    await query('CREATE TABLE d.t (id INT64, v STRING) OPTIONS (enable_change_history = TRUE)');
    const t0 = Date.now();
    await tick();
    await eng.client.call('InsertRows', { table: { ...T, tableId: 't' }, rowsJson: JSON.stringify([{ json: { id: 1, v: 'a' } }, { json: { id: 2, v: 'b' } }]) });
    await tick();
    const t1 = Date.now();
    await tick();
    await query("INSERT d.t VALUES (3, 'c')");
    await query("UPDATE d.t SET v = 'B' WHERE id = 2");
    await query("MERGE d.t USING (SELECT 3 AS id UNION ALL SELECT 4) s ON t.id = s.id WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, 'd')");
    const appends = 'SELECT id, v, _CHANGE_TYPE, UNIX_MICROS(_CHANGE_TIMESTAMP) FROM APPENDS(TABLE d.t, NULL, NULL) ORDER BY 4, 1';
    const changes = 'SELECT id, v, _CHANGE_TYPE, _CHANGE_IS_FOR_UPDATE, UNIX_MICROS(_CHANGE_TIMESTAMP) FROM CHANGES(TABLE d.t, NULL, NULL) ORDER BY 5, 1, 3';
    const a0 = await query(appends);
    const c0 = await query(changes);
    expect(a0.map((r) => r.slice(0, 3))).toEqual([['1', 'a', 'INSERT'], ['2', 'b', 'INSERT'], ['3', 'c', 'INSERT'], ['4', 'd', 'INSERT']]);
    // The streamed rows' commit time lies between the instants read around the request.
    const streamed = Number(a0[0]![3]) / 1000;
    expect(streamed).toBeGreaterThan(t0);
    expect(streamed).toBeLessThan(t1);
    expect(c0.map((r) => r.slice(0, 4))).toEqual([
      ['1', 'a', 'INSERT', 'false'],
      ['2', 'b', 'INSERT', 'false'],
      ['3', 'c', 'INSERT', 'false'],
      ['2', 'b', 'DELETE', 'true'],
      ['2', 'B', 'UPDATE', 'false'],
      ['3', 'c', 'DELETE', 'false'],
      ['4', 'd', 'INSERT', 'false'],
    ]);
    const dir = eng.dataDir;
    // Restart with the rows and changes still in the WAL: its records' times and kinds rebuild the history.
    await eng.close();
    eng = await startInProcess(dir);
    expect(await query(appends)).toEqual(a0);
    expect(await query(changes)).toEqual(c0);
    // Folded into fragments: the sidecar carries the record.
    await eng.storage.tableData('p', 'd', 't').compact();
    await eng.close();
    eng = await startInProcess(dir);
    expect(await query(appends)).toEqual(a0);
    expect(await query(changes)).toEqual(c0);
  });

  it("keep a multi-statement transaction's inserts, updates and deletes as such across a restart", async () => {
    await query('CREATE TABLE d.tx (id INT64, v STRING) OPTIONS (enable_change_history = TRUE)');
    await query("INSERT d.tx VALUES (1, 'a'), (2, 'b')");
    await query("BEGIN TRANSACTION; INSERT d.tx VALUES (3, 'c'); UPDATE d.tx SET v = 'A' WHERE id = 1; DELETE d.tx WHERE id = 2; COMMIT TRANSACTION");
    await tick();
    const afterCommit = Date.now();
    await tick();
    await query("UPDATE d.tx SET v = 'C' WHERE id = 3");
    const appends = 'SELECT id, v, _CHANGE_TYPE, UNIX_MICROS(_CHANGE_TIMESTAMP) FROM APPENDS(TABLE d.tx, NULL, NULL) ORDER BY 4, 1';
    // A window after the commit (CHANGES refuses one holding it).
    const changes = `SELECT id, v, _CHANGE_TYPE, _CHANGE_IS_FOR_UPDATE FROM CHANGES(TABLE d.tx, TIMESTAMP_MILLIS(${afterCommit}), NULL) ORDER BY 3, 1`;
    const a0 = await query(appends);
    expect(a0.map((r) => r.slice(0, 3))).toEqual([['1', 'a', 'INSERT'], ['2', 'b', 'INSERT'], ['3', 'c', 'INSERT']]);
    expect(Number(a0[2]![3]) / 1000).toBeLessThan(afterCommit);
    expect(Number(a0[2]![3])).toBeGreaterThan(Number(a0[0]![3]));
    const c0 = await query(changes);
    expect(c0).toEqual([['3', 'c', 'DELETE', 'true'], ['3', 'C', 'UPDATE', 'false']]);
    expect(await query('SELECT id, v FROM d.tx ORDER BY id')).toEqual([['1', 'A'], ['3', 'C']]);
    const dir = eng.dataDir;
    await eng.close();
    eng = await startInProcess(dir);
    expect(await query(appends)).toEqual(a0);
    expect(await query(changes)).toEqual(c0);
    await eng.storage.tableData('p', 'd', 'tx').compact();
    await eng.close();
    eng = await startInProcess(dir);
    expect(await query(appends)).toEqual(a0);
    expect(await query(changes)).toEqual(c0);
    expect(await query('SELECT id, v FROM d.tx ORDER BY id')).toEqual([['1', 'A'], ['3', 'C']]);
  });
});
