// Many small row-level changes: each is a WAL record, and a fold moves its
// positions into the sidecar; once more than INLINE_DELETES_MAX of them would
// be inline, the sidecar write moves them into deletion vector files first
// (merged as they pile up), so the sidecar, written whole at every fold and
// commit, stays small. The rows survive restarts and crashes on either side
// of that sidecar write (the new file left behind), time travel sees every
// version before and after, and an open snapshot keeps reading its rows.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { INLINE_DELETES_MAX } from '../../src/storage/deletion-log.js';
import { Storage } from '../../src/storage/store.js';
import { liveRows, stateBatches } from '../../src/storage/table-state.js';
import { run, type Harness } from '../sql/harness.js';
import type { QueryResult } from '../../src/planner/api.js';
import { getValue } from '../../src/types/vector.js';

const P = 'small';
const ROWS = 10_000;
let dir: string;
let h: Harness;
const extra: string[] = [];
const q = (sql: string): Promise<QueryResult> => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });
const first = (r: QueryResult): unknown[] => r.batches[0]!.columns.map((v) => getValue(v, 0));
const tableDir = (at = dir): string => path.join(at, P, 'd');
const delFiles = (at = dir): string[] => fs.readdirSync(tableDir(at)).filter((f) => f.endsWith('.del')).sort();

async function open(at = dir): Promise<void> {
  const storage = await Storage.open(at, { noLock: true });
  h = { storage, catalog: new EngineCatalog(storage), close: () => storage.close() };
}
const restart = async (at = dir): Promise<void> => {
  await h.close();
  await open(at);
};
const table = () => h.storage.tableData(P, 'd', 't');
interface SidecarDeletes {
  deletes?: number[];
  deleteFiles?: { file: string; count: number; at: number }[];
}
const sidecar = (): SidecarDeletes => JSON.parse(fs.readFileSync(table().sidecarFile, 'utf8')) as SidecarDeletes;
function copyDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'small-changes-copy-'));
  extra.push(d);
  fs.cpSync(dir, d, { recursive: true });
  return d;
}

/** The id at each position of the table as made (read from its files, not assumed). */
let idAt: number[] = [];
/** The i-th position deleted: a walk over every position (37 is prime to ROWS). */
const positionOf = (i: number): number => (i * 37) % ROWS;
/** [COUNT(*), SUM(id)] of the table with the first `n` positions of the walk deleted. */
function expected(n: number): [bigint, bigint] {
  let sum = 0;
  for (const id of idAt) sum += id;
  for (let i = 0; i < n; i++) sum -= idAt[positionOf(i)]!;
  return [BigInt(ROWS - n), BigInt(sum)];
}
const summary = async (from = 'd.t'): Promise<unknown[]> => first(await q(`SELECT COUNT(*), SUM(id) FROM ${from}`));
/** One-row changes, each its own WAL record, deleting walk positions [from, to). */
async function deleteOneByOne(from: number, to: number): Promise<void> {
  const td = table();
  for (let i = from; i < to; i++) await td.change(td.state(), [positionOf(i)], []);
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'small-changes-'));
  await open();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  await q(`CREATE TABLE d.t AS SELECT x AS id, MOD(x, 10) AS k FROM UNNEST(GENERATE_ARRAY(1, ${ROWS})) AS x`);
  const td = table();
  await td.load();
  idAt = [];
  for (const b of await stateBatches(td.state())) for (let r = 0; r < b.length; r++) idAt.push(Number(getValue(b.columns[0]!, r)));
  expect(idAt.length).toBe(ROWS);
});
afterEach(async () => {
  await h?.close();
  for (const d of [dir, ...extra.splice(0)]) fs.rmSync(d, { recursive: true, force: true });
});

describe('many small row-level changes', () => {
  it('keep at most INLINE_DELETES_MAX positions inline in the sidecar, the rest in merged deletion vector files, across restarts', async () => {
    // A few: inline, no file.
    await deleteOneByOne(0, 100);
    await table().compact();
    expect(sidecar().deletes?.length).toBe(100);
    expect(delFiles()).toEqual([]);
    // Past the bound at the next fold: every inline entry goes to a file.
    await deleteOneByOne(100, 100 + INLINE_DELETES_MAX);
    await table().compact();
    expect(sidecar().deletes ?? []).toEqual([]);
    expect(sidecar().deleteFiles!.map((f) => [f.at, f.count])).toEqual([[0, 100 + INLINE_DELETES_MAX]]);
    expect(await summary()).toEqual(expected(100 + INLINE_DELETES_MAX));
    // Rounds of changes, each folded: the inline part stays bounded and the files few (merged as they pile up).
    let n = 100 + INLINE_DELETES_MAX;
    for (let round = 0; round < 8; round++) {
      await deleteOneByOne(n, n + 200);
      n += 200;
      await table().compact();
      const sc = sidecar();
      expect(sc.deletes?.length ?? 0).toBeLessThanOrEqual(INLINE_DELETES_MAX);
      // Files in log order, each after the one before, together with the inline entries the whole log.
      let at = 0;
      for (const f of sc.deleteFiles ?? []) {
        expect(f.at).toBeGreaterThanOrEqual(at);
        at = f.at + f.count;
      }
      expect((sc.deleteFiles ?? []).reduce((k, f) => k + f.count, 0) + (sc.deletes?.length ?? 0)).toBe(n);
      expect((sc.deleteFiles ?? []).length).toBeLessThanOrEqual(1 + Math.ceil(Math.log2(n / INLINE_DELETES_MAX)));
      expect(delFiles()).toEqual(expect.arrayContaining((sc.deleteFiles ?? []).map((f) => f.file)));
    }
    expect(await summary()).toEqual(expected(n));
    expect(table().rowCount).toBe(ROWS - n);
    await restart();
    // Files merged away are gone (the graveyard's, or removed as unnamed at the load).
    await table().load();
    expect(delFiles()).toEqual((sidecar().deleteFiles ?? []).map((f) => f.file).sort());
    expect(await summary()).toEqual(expected(n));
    await restart();
    // numRows of an unopened table: from the sidecar and the WAL alone.
    expect(table().rowCountSync()).toBe(ROWS - n);
    // A large change and a bulk append after them: the log's order is kept.
    await q('DELETE FROM d.t WHERE k = 3');
    await q(`INSERT INTO d.t SELECT x AS id, 0 AS k FROM UNNEST(GENERATE_ARRAY(${ROWS + 1}, ${ROWS + 30000})) AS x`);
    const kept = first(await q('SELECT COUNT(*), SUM(id) FROM d.t'));
    await restart();
    expect(first(await q('SELECT COUNT(*), SUM(id) FROM d.t'))).toEqual(kept);
  });

  it('time travel reads every version before and after the positions moved to files, also after a restart and a replace', async () => {
    const marks: { ms: number; n: number }[] = [];
    const mark = async (n: number): Promise<void> => {
      await new Promise((r) => setTimeout(r, 3));
      marks.push({ ms: Date.now(), n });
      await new Promise((r) => setTimeout(r, 3));
    };
    await mark(0);
    await deleteOneByOne(0, 150);
    await mark(150);
    await deleteOneByOne(150, 150 + INLINE_DELETES_MAX);
    await mark(150 + INLINE_DELETES_MAX);
    await table().compact();
    expect(delFiles().length).toBe(1);
    await deleteOneByOne(150 + INLINE_DELETES_MAX, 200 + 2 * INLINE_DELETES_MAX);
    await mark(200 + 2 * INLINE_DELETES_MAX);
    await table().compact();
    const checkPast = async (): Promise<void> => {
      for (const m of marks) expect(await summary(`d.t FOR SYSTEM_TIME AS OF TIMESTAMP_MILLIS(${m.ms})`)).toEqual(expected(m.n));
    };
    const now = expected(200 + 2 * INLINE_DELETES_MAX);
    await checkPast();
    expect(await summary()).toEqual(now);
    await restart();
    await checkPast();
    expect(await summary()).toEqual(now);
    // Rows still only in the log, past the bound, then a replace (a new generation): the old
    // generation's inline part is bounded too, and it keeps its files for time travel.
    await deleteOneByOne(200 + 2 * INLINE_DELETES_MAX, 300 + 3 * INLINE_DELETES_MAX);
    await mark(300 + 3 * INLINE_DELETES_MAX);
    await table().replace(await stateBatches(table().state()));
    const past = (JSON.parse(fs.readFileSync(table().sidecarFile, 'utf8')) as { past: SidecarDeletes[] }).past;
    expect(past.length).toBe(1);
    expect(past[0]!.deletes?.length ?? 0).toBeLessThanOrEqual(INLINE_DELETES_MAX);
    expect(table().state().deleted.length).toBe(0);
    await checkPast();
    expect(await summary()).toEqual(expected(300 + 3 * INLINE_DELETES_MAX));
    await restart();
    await checkPast();
    expect(await summary()).toEqual(expected(300 + 3 * INLINE_DELETES_MAX));
  });

  it('a crash before the sidecar write leaves the new file behind, unnamed and removed; one after it, the folded table', async () => {
    await deleteOneByOne(0, INLINE_DELETES_MAX + 50);
    const beforeDir = copyDir();
    await table().compact();
    const news = delFiles();
    expect(news.length).toBe(1);
    // Before the sidecar write: the synced deletion vector is there, nothing names it (plus a temp sidecar).
    for (const f of news) fs.copyFileSync(path.join(tableDir(), f), path.join(tableDir(beforeDir), f));
    const sc = path.basename(table().sidecarFile);
    fs.copyFileSync(table().sidecarFile, path.join(tableDir(beforeDir), `${sc}.x1.tmp`));
    // After the sidecar write, before the log's cut: the log's records are in the sidecar (skipped on replay).
    const afterDir = copyDir();
    const wal = path.basename(table().walFile);
    fs.copyFileSync(path.join(tableDir(beforeDir), wal), path.join(tableDir(afterDir), wal));
    const want = expected(INLINE_DELETES_MAX + 50);
    await restart(beforeDir);
    expect(await summary()).toEqual(want);
    expect(fs.readdirSync(tableDir(beforeDir)).filter((f) => news.includes(f) || f.endsWith('.tmp'))).toEqual([]);
    // Its next fold writes a file of its own.
    await table().compact();
    expect(delFiles(beforeDir).length).toBe(1);
    await restart(beforeDir);
    expect(await summary()).toEqual(want);
    await restart(afterDir);
    expect(await summary()).toEqual(want);
    expect(table().rowCount).toBe(ROWS - INLINE_DELETES_MAX - 50);
    await restart();
  });

  it('an open snapshot keeps reading its rows while files are written and merged away', async () => {
    await deleteOneByOne(0, 100);
    const s = h.storage.clock.acquire();
    const td = table();
    const then = td.stateAt(s);
    const rowsThen = liveRows(then);
    for (let round = 0; round < 4; round++) {
      await deleteOneByOne(100 + round * 300, 400 + round * 300);
      await td.compact();
    }
    expect(delFiles().length).toBeGreaterThan(0);
    expect(liveRows(td.stateAt(s))).toBe(rowsThen);
    let count = 0;
    for (const b of await stateBatches(td.stateAt(s))) count += b.length;
    expect(count).toBe(ROWS - 100);
    h.storage.clock.release(s);
    expect(await summary()).toEqual(expected(1300));
    await restart();
    expect(await summary()).toEqual(expected(1300));
  });
});
