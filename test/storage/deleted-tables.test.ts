// Snapshots of dropped tables live in deleted-tables.log, not in catalog.store:
// kept across restarts, moved out of catalogs written before the log, cut at a
// torn line, dropped when a crash came before the catalog lost the table, and
// recovered from the drop's catalog record when a crash came before the log had it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { insertDataset } from '../../src/engine/datasets.js';
import { deleteTable, insertTable } from '../../src/engine/tables.js';
import { CatalogLog } from '../../src/storage/catalog-log.js';
import { DeletedTableLog } from '../../src/storage/deleted-tables.js';
import { Storage } from '../../src/storage/store.js';
import { tempDir } from '../engine/helpers.js';

const logLines = (dir: string): string[] => fs.readFileSync(path.join(dir, 'deleted-tables.log'), 'utf8').split('\n').filter(Boolean);

async function withTables(dir: string, names: string[]): Promise<Storage> {
  const st = await Storage.open(dir, { noLock: true });
  await insertDataset(st, 'p', 'd', { datasetReference: { projectId: 'p', datasetId: 'd' } });
  for (const t of names) await insertTable(st, 'p', 'd', t, { schema: { fields: [{ name: 'x', type: 'INT64' }] }, description: t });
  return st;
}

describe('deleted-table snapshots', () => {
  it('are logged with the catalog save that drops the table, found before and after a restart, and never in catalog.store', async () => {
    const dir = tempDir();
    const st = await withTables(dir, ['a', 'b']);
    const a = st.requireTable('p', 'd', 'a');
    await deleteTable(st, 'p', 'd', 'a');
    expect(st.findDeletedTable('p', 'd', 'a')?.entry).toEqual(a);
    expect(logLines(dir).map((l) => JSON.parse(l).tableId)).toEqual(['a']);
    expect(JSON.parse(fs.readFileSync(st.catalogFile, 'utf8')).deletedTables).toBeUndefined();
    // A replace keeps each version: the newest, or the one live at a time.
    await insertTable(st, 'p', 'd', 'a', { schema: { fields: [{ name: 'y', type: 'STRING' }] } });
    const a2 = st.requireTable('p', 'd', 'a');
    await new Promise((r) => setTimeout(r, 5));
    await deleteTable(st, 'p', 'd', 'a');
    const first = st.findDeletedTable('p', 'd', 'a', 0)!;
    expect(first.entry).toEqual(a);
    expect(st.findDeletedTable('p', 'd', 'a', first.deletedMs + 1)?.entry).toEqual(a2);
    await st.close();
    const again = await Storage.open(dir, { noLock: true });
    expect(again.findDeletedTable('p', 'd', 'a')?.entry).toEqual(a2);
    expect(again.findDeletedTable('p', 'd', 'a', 0)?.entry).toEqual(a);
    expect(again.findDeletedTable('p', 'd', 'b')).toBeUndefined();
    await again.close();
  });

  it('move out of a catalog written before the log, once', async () => {
    const dir = tempDir();
    const st = await withTables(dir, ['a', 'b']);
    const a = st.requireTable('p', 'd', 'a');
    await deleteTable(st, 'p', 'd', 'a');
    await st.close();
    // The old layout: the snapshots inside catalog.store, no log.
    const logged = logLines(dir).map((l) => JSON.parse(l) as unknown);
    const catalog = JSON.parse(fs.readFileSync(path.join(dir, 'catalog.store'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(path.join(dir, 'catalog.store'), JSON.stringify({ ...catalog, deletedTables: logged }));
    fs.rmSync(path.join(dir, 'deleted-tables.log'));
    for (let open = 0; open < 2; open++) {
      const st2 = await Storage.open(dir, { noLock: true });
      expect(st2.findDeletedTable('p', 'd', 'a')?.entry).toEqual(a);
      expect(JSON.parse(fs.readFileSync(st2.catalogFile, 'utf8')).deletedTables).toBeUndefined();
      expect(logLines(dir)).toHaveLength(1);
      await st2.close();
    }
    // A crash after the log was written but before the catalog lost them: not moved twice.
    fs.writeFileSync(path.join(dir, 'catalog.store'), JSON.stringify({ ...catalog, deletedTables: logged }));
    const st3 = await Storage.open(dir, { noLock: true });
    expect(logLines(dir)).toHaveLength(1);
    expect(st3.findDeletedTable('p', 'd', 'a')?.entry).toEqual(a);
    await st3.close();
  });

  it('a torn last line is cut; a snapshot of a table the catalog still has (a crash before its save) is dropped', async () => {
    const dir = tempDir();
    const st = await withTables(dir, ['a', 'b']);
    await deleteTable(st, 'p', 'd', 'a');
    const b = st.requireTable('p', 'd', 'b');
    await st.close();
    const file = path.join(dir, 'deleted-tables.log');
    const good = fs.readFileSync(file);
    // b's snapshot logged, the catalog never saved without b; then a torn line.
    const bogus = { projectId: 'p', datasetId: 'd', tableId: 'b', deletedMs: Date.now(), entry: b, trashDir: 'p/d/.trash/b@1' };
    fs.appendFileSync(file, `${JSON.stringify(bogus)}\n{"projectId":"p","data`);
    const again = await Storage.open(dir, { noLock: true });
    expect(again.findDeletedTable('p', 'd', 'b')).toBeUndefined();
    expect(again.getTable('p', 'd', 'b')).toEqual(b);
    expect(again.findDeletedTable('p', 'd', 'a')?.tableId).toBe('a');
    expect(fs.readFileSync(file)).toEqual(good);
    await deleteTable(again, 'p', 'd', 'b');
    expect(logLines(dir).map((l) => JSON.parse(l).tableId)).toEqual(['a', 'b']);
    await again.close();
  });

  it('a drop whose catalog record cannot be written leaves the table in place, in memory and after a restart', async () => {
    const dir = tempDir();
    const st = await withTables(dir, ['a']);
    const append = vi.spyOn(CatalogLog.prototype, 'append').mockRejectedValueOnce(new Error('disk full'));
    try {
      await expect(deleteTable(st, 'p', 'd', 'a')).rejects.toThrow('disk full');
    } finally {
      append.mockRestore();
    }
    expect(st.getTable('p', 'd', 'a')).toBeDefined();
    expect(st.findDeletedTable('p', 'd', 'a')).toBeUndefined();
    // Tried again, the drop goes through.
    await deleteTable(st, 'p', 'd', 'a');
    expect(st.getTable('p', 'd', 'a')).toBeUndefined();
    await st.close();
    const again = await Storage.open(dir, { noLock: true });
    expect(again.getTable('p', 'd', 'a')).toBeUndefined();
    expect(again.findDeletedTable('p', 'd', 'a')).toBeDefined();
    await again.close();
  });

  it('a snapshot rides in the record that drops its table: a crash before deleted-tables.log has it loses nothing', async () => {
    const dir = tempDir();
    const st = await withTables(dir, ['a', 'b']);
    const a = st.requireTable('p', 'd', 'a');
    // The log's write after the record fails (or a crash comes first): the drop still stands.
    const flush = vi.spyOn(DeletedTableLog.prototype, 'flush').mockRejectedValueOnce(new Error('disk full'));
    try {
      await deleteTable(st, 'p', 'd', 'a');
    } finally {
      flush.mockRestore();
    }
    expect(st.getTable('p', 'd', 'a')).toBeUndefined();
    expect(st.findDeletedTable('p', 'd', 'a')?.entry).toEqual(a);
    expect(logLines(dir)).toEqual([]);
    // The data dir as a kill -9 would leave it now: the record written, the log's line not.
    const crashed = tempDir();
    fs.cpSync(dir, crashed, { recursive: true });
    await st.close();
    const again = await Storage.open(crashed, { noLock: true });
    expect(again.getTable('p', 'd', 'a')).toBeUndefined();
    expect(again.getTable('p', 'd', 'b')).toBeDefined();
    expect(again.findDeletedTable('p', 'd', 'a')?.entry).toEqual(a);
    expect(logLines(crashed).map((l) => JSON.parse(l).tableId)).toEqual(['a']);
    await again.close();
    // Once there, a later restart does not add it twice.
    const third = await Storage.open(crashed, { noLock: true });
    expect(logLines(crashed).map((l) => JSON.parse(l).tableId)).toEqual(['a']);
    await third.close();
  });
});
