// WAL acknowledgement policy: by default an append resolves once its record is
// written (it survives kill -9 from the page cache) and an fdatasync follows
// in the background; with --sync-writes ('always') it resolves only after its
// fdatasync. Counted fdatasync calls, not timings, tell the two apart.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Storage } from '../../src/storage/store.js';
import { COMPACT_IDLE_MS, idleFoldWaits, TableData } from '../../src/storage/table-data.js';
import { rowsToBatch } from '../../src/storage/json-rows.js';
import { getValue, vectorFromValues } from '../../src/types/vector.js';
import { encodeRecord, readWalSync, WalWriter } from '../../src/storage/wal.js';
import { tempDir as makeTempDir } from '../engine/helpers.js';

const dirs: string[] = [];
function tempDir(prefix: string): string {
  const d = makeTempDir(prefix);
  dirs.push(d);
  return d;
}

/** Counts fdatasync calls on every FileHandle (the WAL's included). */
async function spyDatasync(dir: string): Promise<{ calls: () => number }> {
  const h = await fsp.open(path.join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(h) as { datasync: () => Promise<void> };
  await h.close();
  const spy = vi.spyOn(proto, 'datasync');
  spy.mockClear(); // a second spyOn returns the same spy
  return { calls: () => spy.mock.calls.length };
}

async function until(cond: () => boolean): Promise<void> {
  // Bounded generously: the machine may be loaded; this waits for an event, it does not time it.
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
}

afterEach(() => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('WAL sync policy', () => {
  it("background: an append is acknowledged once written, and synced soon after without waiting for it", async () => {
    const dir = tempDir('wh-wal-');
    const file = path.join(dir, 't.wal');
    const w = new WalWriter(file);
    expect(w.syncMode).toBe('background');
    await w.open(0, 0);
    const sync = await spyDatasync(dir);
    await w.append(encodeRecord(1, 1, '{"n":["a"],"c":[[1]]}'));
    // Acknowledged: the record is in the file (what kill -9 leaves behind) and no fdatasync ran yet.
    expect(sync.calls()).toBe(0);
    expect(w.syncPending).toBe(true);
    expect(readWalSync(file).records.map((r) => r.lsn)).toEqual([1]);
    // Appends acknowledged meanwhile share the one background sync.
    await Promise.all([2, 3, 4].map((lsn) => w.append(encodeRecord(lsn, 1, '{"n":["a"],"c":[[2]]}'))));
    await until(() => !w.syncPending);
    expect(w.syncPending).toBe(false);
    expect(sync.calls()).toBeGreaterThanOrEqual(1);
    expect(sync.calls()).toBeLessThanOrEqual(2);
    expect(readWalSync(file).records.map((r) => r.lsn)).toEqual([1, 2, 3, 4]);
    await w.close();
  });

  it('background: flush() and close() sync what is pending right away', async () => {
    const dir = tempDir('wh-wal-');
    const w = new WalWriter(path.join(dir, 't.wal'));
    await w.open(0, 0);
    const sync = await spyDatasync(dir);
    await w.append(encodeRecord(1, 1, '{"n":["a"],"c":[[1]]}'));
    expect(sync.calls()).toBe(0);
    await w.flush();
    expect(sync.calls()).toBe(1);
    expect(w.syncPending).toBe(false);
    await w.append(encodeRecord(2, 1, '{"n":["a"],"c":[[1]]}'));
    await w.close();
    expect(sync.calls()).toBe(2);
  });

  it("always (--sync-writes): every append is acknowledged only after its fdatasync", async () => {
    const dir = tempDir('wh-wal-');
    const w = new WalWriter(path.join(dir, 't.wal'), 'always');
    await w.open(0, 0);
    const sync = await spyDatasync(dir);
    await w.append(encodeRecord(1, 1, '{"n":["a"],"c":[[1]]}'));
    expect(sync.calls()).toBe(1);
    expect(w.syncPending).toBe(false);
    await w.append(encodeRecord(2, 1, '{"n":["a"],"c":[[1]]}'));
    expect(sync.calls()).toBe(2);
    await w.close();
    expect(sync.calls()).toBe(2); // nothing was left to sync
  });

  it('the storage option reaches every table WAL', async () => {
    for (const syncWrites of [false, true]) {
      const dir = tempDir('wh-wal-');
      const st = await Storage.open(dir, { syncWrites, noLock: true });
      expect(st.walSync).toBe(syncWrites ? 'always' : 'background');
      await st.createDataset('p', 'd', { datasetReference: { projectId: 'p', datasetId: 'd' } });
      await st.createTable('p', 'd', 't', 'TABLE', { tableReference: { projectId: 'p', datasetId: 'd', tableId: 't' }, schema: { fields: [{ name: 'a', type: 'INTEGER' }] } });
      const td = st.tableData('p', 'd', 't');
      expect(td.walSync).toBe(syncWrites ? 'always' : 'background');
      const sync = await spyDatasync(dir);
      await td.append({ length: 1, columns: [vectorFromValues(td.schema[0]!.type, [7n])] });
      // Only the synchronous mode pays an fdatasync before the append resolves.
      expect(sync.calls()).toBe(syncWrites ? 1 : 0);
      await st.close();
      const reopened = new TableData(st.datasetDir('p', 'd'), 't', td.schema);
      await reopened.load();
      expect(reopened.rowCount).toBe(1);
      await reopened.close();
    }
  });

  it('logs insertAll rows given as UTF-8 bytes as they are, and replays them', async () => {
    const dir = tempDir('wh-wal-');
    const st = await Storage.open(dir, { noLock: true });
    await st.createDataset('p', 'd', { datasetReference: { projectId: 'p', datasetId: 'd' } });
    await st.createTable('p', 'd', 't', 'TABLE', { tableReference: { projectId: 'p', datasetId: 'd', tableId: 't' }, schema: { fields: [{ name: 's', type: 'STRING' }, { name: 'n', type: 'INTEGER' }] } });
    const td = st.tableData('p', 'd', 't');
    const raw = Buffer.from('[{"insertId":"1","json":{"s":"ü \\"😀\\" ключ","n":"7"}},{"json":{"S":"x","n":-2}}]', 'utf8');
    const rows = JSON.parse(raw.toString('utf8')) as { json: unknown }[];
    await td.append(rowsToBatch(td.schema, new Set(['s', 'n']), rows), raw);
    // The record holds the request's bytes verbatim.
    const rec = readWalSync(td.walFile).records[0]!;
    expect(rec.body.includes(raw)).toBe(true);
    // Replay (no compaction ran: the rows come back from the WAL).
    const again = new TableData(st.datasetDir('p', 'd'), 't', td.schema);
    await again.load();
    const [b] = again.snapshot();
    expect([0, 1].map((r) => [getValue(b!.columns[0]!, r), getValue(b!.columns[1]!, r)])).toEqual([['ü "😀" ключ', 7n], ['x', -2n]]);
    await again.close();
    await st.close();
  });
});

describe('idle compaction', () => {
  it("waits while another table takes appends, for at most ten idle periods after the table's own last change", () => {
    const now = 1_000_000;
    // Nobody else appending, or the last append was long ago / this table's own: fold now.
    expect(idleFoldWaits(now, null, now - COMPACT_IDLE_MS)).toBe(false);
    expect(idleFoldWaits(now, now - 10 * COMPACT_IDLE_MS, now - COMPACT_IDLE_MS)).toBe(false);
    // Another table appended a moment ago: wait...
    expect(idleFoldWaits(now, now - 1, now - COMPACT_IDLE_MS)).toBe(true);
    // ...but not past the bound.
    expect(idleFoldWaits(now, now - 1, now - 10 * COMPACT_IDLE_MS)).toBe(false);
  });
});
