// Row-level DML of many rows (UPDATE, DELETE, MERGE past 20,000 positions or
// with 20,000 new rows): the new rows go to new fragment files and the
// deleted positions to a deletion vector file, committed by one sidecar
// write; no existing fragment is rewritten. The change survives a restart,
// a crash before its sidecar write leaves the table as it was, time travel
// sees the rows before it, an append between the statement's read and its
// commit is kept, a change from a stale read is refused, and a purge (the
// background fold of many deleted rows) rewrites the table without them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { Storage } from '../../src/storage/store.js';
import { TableConflictError } from '../../src/storage/table-data.js';
import { liveRows } from '../../src/storage/table-state.js';
import { run, type Harness } from '../sql/harness.js';
import type { QueryResult } from '../../src/planner/api.js';
import { getValue, type Batch } from '../../src/types/vector.js';

const P = 'big';
let dir: string;
let h: Harness;
const extra: string[] = [];
const q = (sql: string): Promise<QueryResult> => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });
const first = (r: QueryResult): unknown[] => r.batches[0]!.columns.map((v) => getValue(v, 0));
const filesOf = (d: string, ext: string): string[] => (fs.readdirSync(d, { recursive: true }) as string[]).filter((f) => f.endsWith(ext)).sort();

async function open(at = dir): Promise<void> {
  const storage = await Storage.open(at, { noLock: true });
  h = { storage, catalog: new EngineCatalog(storage), close: () => storage.close() };
}
const restart = async (): Promise<void> => {
  await h.close();
  await open();
};
const table = () => h.storage.tableData(P, 'd', 't');
/** The table's summary the tests compare: rows, sum of ids, updated rows, distinct ids. */
const summary = async (from = 'd.t'): Promise<unknown[]> => first(await q(`SELECT COUNT(*), SUM(id), COUNTIF(s = 'u'), COUNT(DISTINCT id) FROM ${from}`));
function copyDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'large-changes-copy-'));
  extra.push(d);
  fs.cpSync(dir, d, { recursive: true });
  return d;
}
/** A one-row batch of the table's columns (id, k, s). */
const row = (id: number): Batch => ({
  length: 1,
  columns: [
    { type: { kind: 'INT64' }, length: 1, data: Float64Array.of(id), nulls: null },
    { type: { kind: 'INT64' }, length: 1, data: Float64Array.of(id % 10), nulls: null },
    { type: { kind: 'STRING' }, length: 1, data: [String(id)], nulls: null },
  ] as unknown as Batch['columns'],
});

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'large-changes-'));
  await open();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  await q('CREATE TABLE d.t AS SELECT x AS id, MOD(x, 10) AS k, CAST(x AS STRING) AS s FROM UNNEST(GENERATE_ARRAY(1, 200000)) AS x');
});
afterEach(async () => {
  await h?.close();
  for (const d of [dir, ...extra.splice(0)]) fs.rmSync(d, { recursive: true, force: true });
});

describe('large row-level changes', () => {
  it('writes new rows and a deletion vector, rewrites no fragment, and survives restarts', async () => {
    const before = filesOf(dir, '.parquet');
    expect((await q(`UPDATE d.t SET s = 'u' WHERE k = 3`)).numDmlAffectedRows).toBe(20000);
    expect((await q('DELETE FROM d.t WHERE id > 150000')).numDmlAffectedRows).toBe(50000);
    const merged = await q(`MERGE d.t USING (SELECT x AS id FROM UNNEST(GENERATE_ARRAY(100001, 160000)) AS x) AS src ON t.id = src.id
      WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (id, k, s) VALUES (src.id, 0, 'm')`);
    expect(merged.numDmlAffectedRows).toBe(60000);
    // The old fragments are all still there and named: nothing was rewritten.
    const after = filesOf(dir, '.parquet');
    expect(after.filter((f) => before.includes(f))).toEqual(before);
    expect(filesOf(dir, '.del').length).toBe(3);
    const sidecar = JSON.parse(fs.readFileSync(table().sidecarFile, 'utf8')) as { fragments: { file: string }[]; deleteFiles: unknown[] };
    expect(before.every((b) => sidecar.fragments.some((f) => b.endsWith(f.file)))).toBe(true);
    expect(sidecar.deleteFiles.length).toBe(3);
    // ids 1..100000 stay (10,000 of them updated), 150001..160000 come back from the MERGE.
    const want = [110000n, 5000050000n + (150001n + 160000n) * 5000n, 10000n, 110000n];
    expect(await summary()).toEqual(want);
    expect(table().rowCount).toBe(110000);
    await restart();
    expect(await summary()).toEqual(want);
    expect(table().rowCount).toBe(110000);
    // A fold (small fragments merged: every row, deleted ones too, positions kept), then again.
    await table().compact();
    await restart();
    expect(await summary()).toEqual(want);
    // numRows of an unopened table: from the sidecar alone.
    await restart();
    expect(table().rowCountSync()).toBe(110000);
  });

  it('time travel sees the rows before each change, also after a restart', async () => {
    await q('SELECT 1');
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    await q(`UPDATE d.t SET s = 'u' WHERE id <= 30000`);
    const t1 = Date.now();
    await new Promise((r) => setTimeout(r, 5));
    await q('DELETE FROM d.t WHERE id > 100000');
    const asOf = (ms: number): Promise<unknown[]> => summary(`d.t FOR SYSTEM_TIME AS OF TIMESTAMP_MILLIS(${ms})`);
    const check = async (): Promise<void> => {
      expect(await asOf(t0)).toEqual([200000n, 20000100000n, 0n, 200000n]);
      expect(await asOf(t1)).toEqual([200000n, 20000100000n, 30000n, 200000n]);
      expect(await summary()).toEqual([100000n, 5000050000n, 30000n, 100000n]);
    };
    await check();
    await restart();
    await check();
    // Purged (a new generation): the old ones keep their deletion vectors.
    await table().purge();
    expect(table().state().deleted.length).toBe(0);
    await check();
    await restart();
    await check();
  });

  it('a crash before the sidecar write leaves the table as it was; one after it, as changed', async () => {
    // A small change first: its WAL record is folded by the large one's commit.
    await q('DELETE FROM d.t WHERE id = 1');
    const beforeDir = copyDir();
    await q('DELETE FROM d.t WHERE id > 100000');
    // Before the sidecar: the new files are there, unnamed (plus a temp sidecar); start-up removes them.
    const news = fs.readdirSync(path.join(dir, P, 'd')).filter((f) => (f.endsWith('.del') || f.endsWith('.parquet')) && !fs.existsSync(path.join(beforeDir, P, 'd', f)));
    expect(news.some((f) => f.endsWith('.del'))).toBe(true);
    for (const f of news) fs.copyFileSync(path.join(dir, P, 'd', f), path.join(beforeDir, P, 'd', f));
    const sidecar = path.basename(table().sidecarFile);
    fs.copyFileSync(table().sidecarFile, path.join(beforeDir, P, 'd', `${sidecar}.x1.tmp`));
    // After the sidecar, before the log's cut: the old log's records are already in the sidecar.
    const afterDir = copyDir();
    const wal = path.basename(table().walFile);
    fs.copyFileSync(path.join(beforeDir, P, 'd', wal), path.join(afterDir, P, 'd', wal));
    await h.close();
    await open(beforeDir);
    expect(await summary()).toEqual([199999n, 20000099999n, 0n, 199999n]);
    expect(fs.readdirSync(path.join(beforeDir, P, 'd')).filter((f) => news.includes(f) || f.endsWith('.tmp'))).toEqual([]);
    await h.close();
    await open(afterDir);
    expect(await summary()).toEqual([99999n, 5000049999n, 0n, 99999n]);
    await h.close();
    await open();
  });

  it('keeps rows appended between the read and the commit, and refuses a change from a stale read', async () => {
    const td = table();
    await td.load();
    const base = td.state();
    await td.append(row(300000));
    const gone = Array.from({ length: 30000 }, (_, i) => i);
    await td.change(base, gone, []);
    expect(liveRows(td.state())).toBe(200001 - 30000);
    expect(first(await q('SELECT COUNT(*), MIN(id), MAX(id) FROM d.t'))).toEqual([170001n, 30001n, 300000n]);
    // `base` is no longer current: its positions may name other rows now.
    const files = filesOf(dir, '.parquet').length;
    await expect(td.change(base, Array.from({ length: 30000 }, (_, i) => 50000 + i), [])).rejects.toThrow(TableConflictError);
    await expect(td.change(base, [5], [])).rejects.toThrow(TableConflictError);
    expect(filesOf(dir, '.del').length).toBe(1);
    expect(filesOf(dir, '.parquet').length).toBe(files);
    await restart();
    expect(first(await q('SELECT COUNT(*), MIN(id), MAX(id) FROM d.t'))).toEqual([170001n, 30001n, 300000n]);
  });

  it('purges many deleted rows in the background, keeping the rows', async () => {
    await q('DELETE FROM d.t WHERE k < 5');
    expect(table().state().deleted.length).toBe(100000);
    // Not while a snapshot is open (a transaction may write the table next).
    const s = h.storage.clock.acquire();
    await table().purge();
    expect(table().state().deleted.length).toBe(100000);
    h.storage.clock.release(s);
    await table().purge();
    expect(table().state().deleted.length).toBe(0);
    expect(liveRows(table().state())).toBe(100000);
    expect(await summary()).toEqual([100000n, 10000200000n, 0n, 100000n]);
    await restart();
    expect(await summary()).toEqual([100000n, 10000200000n, 0n, 100000n]);
    // A small fraction deleted: no purge.
    await q('DELETE FROM d.t WHERE id <= 21000');
    await table().purge();
    expect(table().state().deleted.length).toBeGreaterThan(0);
  });
});
