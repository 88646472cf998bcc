// WAL acknowledgement policy: by default an append resolves once its record is
// written (it survives kill -9 from the page cache) and an fdatasync follows
// in the background; with --sync-writes ('always') it resolves only after its
// fdatasync. Counted fdatasync calls, not timings, tell the two apart.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { stateBatches } from '../../src/storage/table-state.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Storage } from '../../src/storage/store.js';
import { COMPACT_IDLE_MS, idleFoldWaits } from '../../src/storage/fold.js';
import { TableData } from '../../src/storage/table-data.js';
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
let realDatasync: (() => Promise<void>) | undefined;

async function spyDatasync(dir: string): Promise<{ calls: () => number }> {
  const h = await fsp.open(path.join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(h) as { datasync: () => Promise<void> };
  await h.close();
  // Table WALs only (the catalog's log syncs in the background too, on a timer of its own), told apart when called.
  const isWal = (h: { fd: number }): boolean => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${h.fd}`).endsWith('.wal');
    } catch {
      return true;
    }
  };
  realDatasync ??= proto.datasync;
  const original = realDatasync;
  let count = 0;
  const spy = vi.spyOn(proto, 'datasync');
  spy.mockImplementation(function (this: { fd: number }) {
    if (isWal(this)) count++;
    return original.call(this);
  });
  return { calls: () => count };
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
    await w.open(0);
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
    await w.open(0);
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
    await w.open(0);
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
      const reopened = new TableData(st.datasetDir('p', 'd'), td.stem, td.schema);
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
    const make = (bytes: Buffer) => rowsToBatch(td.schema, new Set(['s', 'n']), JSON.parse(bytes.toString('utf8')) as { json: unknown }[]);
    await td.appendRequestRows(raw, 2, make);
    // The record holds the request's bytes verbatim, and the rows are made from them, read back from the log.
    const rec = readWalSync(td.walFile).records[0]!;
    expect(rec.body.includes(raw)).toBe(true);
    const [held] = await stateBatches(td.state());
    expect(held!.length).toBe(2);
    expect([0, 1].map((r) => [getValue(held!.columns[0]!, r), getValue(held!.columns[1]!, r)])).toEqual([['ü "😀" ключ', 7n], ['x', -2n]]);
    // Replay (no compaction ran: the rows come back from the WAL).
    const again = new TableData(st.datasetDir('p', 'd'), td.stem, td.schema);
    await again.load();
    const [b] = await stateBatches(again.state());
    expect([0, 1].map((r) => [getValue(b!.columns[0]!, r), getValue(b!.columns[1]!, r)])).toEqual([['ü "😀" ключ', 7n], ['x', -2n]]);
    await again.close();
    await st.close();
  });
});

describe('rows read back from the log', () => {
  it('an append resolves with its offset, also for appends written together; reads stop once the bytes left the log', async () => {
    const file = path.join(tempDir('wh-wal-'), 't.wal');
    const w = new WalWriter(file);
    await w.open(0);
    const rec = (lsn: number) => encodeRecord(lsn, 1, `{"n":["a"],"r":[${'7'.repeat(lsn * 5)}]}`);
    const recs = [1, 2, 3, 4, 5].map(rec);
    const first = await w.append(recs[0]!);
    // Queued in the same tick: one write for both.
    const [second, third] = await Promise.all([w.append(recs[1]!), w.append(recs[2]!)]);
    expect([first, second, third]).toEqual([0, recs[0]!.length, recs[0]!.length + recs[1]!.length]);
    const offsets = [first, second, third];
    for (const [i, at] of offsets.entries()) expect(w.read(at, recs[i]!.length)).toEqual(recs[i]);
    // Dropping the first two records keeps the third at its offset, in a file
    // of its own; it stays readable at every step of the swap (a query may
    // read held rows then). The fourth is appended after the third was
    // copied, before the exclusive step: it is kept too.
    let dropped = false;
    let fourth = -1;
    const dropping = w
      .dropBefore(third, async (fn) => {
        fourth = await w.append(recs[3]!);
        return fn();
      })
      .then(() => {
        dropped = true;
      });
    for (let turns = 0; !dropped; turns++) {
      expect(w.read(third, recs[2]!.length)).toEqual(recs[2]);
      await new Promise((r) => setImmediate(r));
      expect(turns).toBeLessThan(10_000);
    }
    await dropping;
    expect(fourth).toBe(third + recs[2]!.length);
    expect(readWalSync(file).records.map((r) => r.lsn)).toEqual([3, 4]);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['t.wal']);
    expect(w.read(third, recs[2]!.length)).toEqual(recs[2]);
    expect(w.read(fourth, recs[3]!.length)).toEqual(recs[3]);
    expect(() => w.read(second, recs[1]!.length)).toThrow(/no longer in the log/);
    const fifth = await w.append(recs[4]!);
    expect(fifth).toBe(fourth + recs[3]!.length);
    expect(w.read(fifth, recs[4]!.length)).toEqual(recs[4]);
    expect(readWalSync(file).records.map((r) => r.lsn)).toEqual([3, 4, 5]);
    await w.truncate();
    expect(() => w.read(fifth, 4)).toThrow(/no longer in the log/);
    expect(await w.append(recs[0]!)).toBe(fifth + recs[4]!.length);
    await w.close();
    expect(() => w.read(0, 4)).toThrow(/no longer in the log/);
  });

  it('held rows are made before a fold empties the log and before the table closes', async () => {
    const dir = tempDir('wh-wal-');
    const cols = [{ name: 'n', type: { kind: 'INT64' }, required: false }] as const;
    const make = (bytes: Buffer) => rowsToBatch(cols, new Set(['n']), JSON.parse(bytes.toString('utf8')) as { json: unknown }[]);
    const values = (b: { columns: readonly unknown[] } | undefined) => [0, 1].map((r) => getValue((b as { columns: Parameters<typeof getValue>[0][] }).columns[0]!, r));
    const td = new TableData(dir, 't', cols);
    await td.load();
    await td.appendRequestRows(Buffer.from('[{"json":{"n":1}},{"json":{"n":2}}]'), 2, make);
    const beforeFold = td.state();
    await td.compact();
    // The fold made the rows from the log before emptying it; a reader's state still reads them.
    expect(values((await stateBatches(beforeFold))[0])).toEqual([1n, 2n]);
    expect(values((await stateBatches(td.state()))[0])).toEqual([1n, 2n]);
    await td.appendRequestRows(Buffer.from('[{"json":{"n":3}},{"json":{"n":4}}]'), 2, make);
    const beforeClose = td.state();
    await td.close();
    // A query may still hold a dropped table's rows.
    expect(values((await stateBatches(beforeClose))[1])).toEqual([3n, 4n]);
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
