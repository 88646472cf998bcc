// The Storage Write API's stream log follows the table WALs' acknowledgement
// policy: by default a line resolves once written (it survives kill -9 from the
// page cache) and is fdatasynced in the background; with --sync-writes
// ('always') only after its fdatasync. Counted sync calls, not timings, tell the
// modes apart. Also: a torn tail is cut before the next line, so lines written
// after a crash are not glued to it.
import fsExports, * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StreamLog, type StreamMeta } from '../../src/engine/storage-write/stream-log.js';
import { StorageWriteService } from '../../src/engine/storage-write/service.js';
import { ResultStore } from '../../src/engine/results.js';
import { RowService } from '../../src/engine/rows.js';
import { toServiceError } from '../../src/engine/service.js';
import { Storage } from '../../src/storage/store.js';
import { BACKGROUND_SYNC_MS } from '../../src/storage/wal.js';
import { tempDir as makeTempDir } from './helpers.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = makeTempDir('wh-swlog-');
  dirs.push(d);
  return d;
}

/** Counts fdatasync (the log's lines, on every FileHandle) and fsync (directory entries: FileHandle's or node:fs's) calls. */
async function spySyncs(dir: string): Promise<{ datasync: () => number; fsync: () => number }> {
  const h = await fsp.open(path.join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(h) as { datasync: () => Promise<void>; sync: () => Promise<void> };
  await h.close();
  const datasync = vi.spyOn(proto, 'datasync');
  const fsync = vi.spyOn(proto, 'sync');
  const fdSync = vi.spyOn(fsExports, 'fsync');
  datasync.mockClear();
  fsync.mockClear();
  return { datasync: () => datasync.mock.calls.length, fsync: () => fsync.mock.calls.length + fdSync.mock.calls.length };
}

async function until(cond: () => boolean): Promise<void> {
  // Bounded generously: waits for an event on a possibly loaded machine, does not time it.
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
}

const NAME = 'projects/p/datasets/d/tables/t/streams/s1';
const META: StreamMeta = { name: NAME, type: 'PENDING', table: { p: 'p', d: 'd', t: 't' }, created: 1 };

/** A log directory that already exists, so that only the stream file's own directory entry is synced. */
function logDir(): string {
  const dir = path.join(tempDir(), '_write_streams');
  fs.mkdirSync(dir);
  return dir;
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('stream log sync policy', () => {
  it('background (default): a line is acknowledged once written and synced later; the new file is synced into its directory first', async () => {
    const dir = logDir();
    const log = new StreamLog(dir);
    expect(log.syncMode).toBe('background');
    expect(log.recover()).toEqual([]);
    const sync = await spySyncs(dir);
    // The background sync's timer fires when the test says so, however loaded the machine is.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    await log.write(NAME, { meta: META });
    await log.write(NAME, { append: 2, rows: [{ id: 1 }, { id: 2 }] });
    // Acknowledged without an fdatasync; only the new file's directory entry was fsynced.
    expect(sync.datasync()).toBe(0);
    expect(sync.fsync()).toBe(1);
    // What kill -9 leaves behind: both lines, read by a fresh log.
    const [r] = new StreamLog(dir).recover();
    expect(r).toMatchObject({ meta: META, rowCount: 2, held: [{ id: 1 }, { id: 2 }] });
    // The one background fdatasync covers both lines.
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(BACKGROUND_SYNC_MS);
    vi.useRealTimers();
    await until(() => sync.datasync() > 0);
    expect(sync.datasync()).toBe(1);
    await log.remove(NAME);
  });

  it('always (--sync-writes): every line is acknowledged only after its fdatasync', async () => {
    const dir = logDir();
    const log = new StreamLog(dir, 'always');
    log.recover();
    const sync = await spySyncs(dir);
    await log.write(NAME, { meta: META });
    expect(sync.datasync()).toBe(1);
    expect(sync.fsync()).toBe(1);
    await log.write(NAME, { append: 1, rows: [{ id: 1 }] });
    expect(sync.datasync()).toBe(2);
    await log.write(NAME, { finalized: true });
    expect(sync.datasync()).toBe(3);
    expect(sync.fsync()).toBe(1); // the directory entry only once per stream
    await log.remove(NAME);
  });

  it('remove deletes the log without syncing lines that wait for their background sync', async () => {
    const dir = logDir();
    const log = new StreamLog(dir);
    log.recover();
    const sync = await spySyncs(dir);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    await log.write(NAME, { meta: META });
    await log.write(NAME, { finalized: true });
    expect(vi.getTimerCount()).toBe(1); // the background sync, pending
    await log.remove(NAME);
    expect(vi.getTimerCount()).toBe(0); // cancelled, not run
    expect(sync.datasync()).toBe(0);
    expect(sync.fsync()).toBe(1); // the new file's directory entry only
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.log'))).toEqual([]);
  });

  it('the engine storage option reaches the stream log: CreateWriteStream syncs before answering only with --sync-writes', async () => {
    for (const syncWrites of [false, true]) {
      const dir = tempDir();
      const st = await Storage.open(dir, { syncWrites, noLock: true });
      // No background sync (the catalog log's after the creates below, the stream log's) can sneak in before the count, however loaded the machine is.
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      await st.createDataset('p', 'd', { datasetReference: { projectId: 'p', datasetId: 'd' } });
      await st.createTable('p', 'd', 't', 'TABLE', { tableReference: { projectId: 'p', datasetId: 'd', tableId: 't' }, schema: { fields: [{ name: 'id', type: 'INTEGER' }] } });
      const handlers = new StorageWriteService(st, new RowService(st, new ResultStore()), toServiceError).handlers();
      const create = handlers['CreateWriteStream'] as grpc.handleUnaryCall<unknown, { name: string }>;
      const sync = await spySyncs(dir);
      const created = await new Promise<{ name: string }>((resolve, reject) =>
        create({ request: { parent: 'projects/p/datasets/d/tables/t', writeStream: { type: 'PENDING' } } } as grpc.ServerUnaryCall<unknown, { name: string }>, (e, r) => (e ? reject(e) : resolve(r!))),
      );
      expect(created.name).toMatch(/^projects\/p\/datasets\/d\/tables\/t\/streams\/./);
      expect(sync.datasync()).toBe(syncWrites ? 1 : 0);
      // The stream is logged either way: a fresh log recovers it.
      expect(new StreamLog(path.join(dir, '_write_streams')).recover().map((r) => r.meta.name)).toEqual([created.name]);
      vi.useRealTimers();
      vi.restoreAllMocks();
      await st.close();
    }
  });
});

describe('stream log recovery', () => {
  it('cuts a torn last line before the next line, so lines written after a crash are kept', async () => {
    const dir = logDir();
    const log = new StreamLog(dir, 'always');
    log.recover();
    await log.write(NAME, { meta: META });
    await log.write(NAME, { append: 2, rows: [{ id: 1 }, { id: 2 }] });
    const [file] = fs.readdirSync(dir);
    // A crash in the middle of the next line.
    fs.appendFileSync(path.join(dir, file!), '{"append":1,"rows":[{"id"');
    const after = new StreamLog(dir, 'always');
    expect(after.recover()).toMatchObject([{ rowCount: 2, held: [{ id: 1 }, { id: 2 }] }]);
    await after.write(NAME, { append: 1, rows: [{ id: 3 }] });
    expect(new StreamLog(dir).recover()).toMatchObject([{ rowCount: 3, held: [{ id: 1 }, { id: 2 }, { id: 3 }] }]);
    await after.remove(NAME);
  });

  it('deletes a log whose meta line never completed (its creation was never acknowledged)', () => {
    const dir = logDir();
    fs.writeFileSync(path.join(dir, 'abc.log'), '{"meta":{"name":"projects/p/da');
    expect(new StreamLog(dir).recover()).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
