// Versioned table history (TableData.rowsAsOf): every committed append and
// replace is a version with its commit time; reads pick the version live at
// an instant, across restarts (WAL-only rows and compacted ones), and old
// generations are collected once they leave the time-travel window.
import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { conformBatches } from '../../src/storage/row-batches.js';
import { stateBatches, TableData, type TableState } from '../../src/storage/table-data.js';
import { pruneVersions, type Version } from '../../src/storage/table-history.js';
import { restFieldToColumn } from '../../src/types/schema.js';
import { getValue, vectorFromValues, type Batch } from '../../src/types/vector.js';
import { tempDir } from '../engine/helpers.js';

const cols = [restFieldToColumn({ name: 'x', type: 'INT64' })];
const batch = (...xs: number[]): Batch => ({ length: xs.length, columns: [vectorFromValues(cols[0]!.type, xs.map(BigInt))] });
const idsOf = (bs: readonly Batch[]): number[] => bs.flatMap((b) => Array.from({ length: b.length }, (_, i) => Number(getValue(b.columns[0]!, i))));
/** The ids of a state (rowsAsOf, state()), read as a scan reads them. */
const ids = async (s: TableState | null): Promise<number[] | null> => (s === null ? null : idsOf(await stateBatches(s)));
/** Lets the clock move on, so that the next commit is at a later millisecond. */
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));
const parquetFiles = (dir: string): string[] => fs.readdirSync(dir).filter((n) => n.endsWith('.parquet'));

const saved = TableData.retentionMs;
afterEach(() => {
  TableData.retentionMs = saved;
});

describe('table history', () => {
  it('reads each version as of its instant, before and after a restart and a compaction', async () => {
    const dir = tempDir();
    let td = new TableData(dir, 't', cols);
    await td.load();
    const t0 = Date.now();
    await tick();
    await td.append(batch(1, 2));
    await tick();
    const t1 = Date.now();
    await tick();
    await td.append(batch(3));
    await tick();
    const t2 = Date.now();
    await tick();
    await td.append(batch(4));
    const check = async (): Promise<void> => {
      expect(await ids(await td.rowsAsOf(t0))).toEqual([]);
      expect(await ids(await td.rowsAsOf(t1))).toEqual([1, 2]);
      expect(await ids(await td.rowsAsOf(t2))).toEqual([1, 2, 3]);
      expect(await ids(await td.rowsAsOf(Date.now()))).toEqual([1, 2, 3, 4]);
      // Before its first write a table has no history of its own (the engine bounds reads by the table's creation time).
      expect(await ids(await td.rowsAsOf(t0 - 60_000))).toEqual([]);
    };
    await check();
    // Restart with the rows only in the WAL: the record times rebuild the history.
    await td.close();
    td = new TableData(dir, 't', cols);
    await check();
    // Compacted into a fragment: the sidecar carries the history.
    await td.compact();
    await td.close();
    td = new TableData(dir, 't', cols);
    await check();
    await td.close();
  });

  it('keeps replaced generations readable across restarts, then collects them', async () => {
    const dir = tempDir();
    let td = new TableData(dir, 't', cols);
    await td.load();
    await td.append(batch(1, 2, 3));
    await tick();
    const beforeDelete = Date.now();
    await tick();
    // A DML result with WAL rows pending: they must survive in the old generation.
    await td.append(batch(4));
    await tick();
    const beforeReplace = Date.now();
    await tick();
    await td.replace([batch(1, 3)]);
    await tick();
    const afterReplace = Date.now();
    await tick();
    await td.append(batch(5));
    await td.replace([]); // TRUNCATE
    const check = async (): Promise<void> => {
      expect(await ids(await td.rowsAsOf(beforeDelete))).toEqual([1, 2, 3]);
      expect(await ids(await td.rowsAsOf(beforeReplace))).toEqual([1, 2, 3, 4]);
      expect(await ids(await td.rowsAsOf(afterReplace))).toEqual([1, 3]);
      expect(await ids(await td.rowsAsOf(Date.now() + 1))).toEqual([]);
    };
    await check();
    await td.close();
    td = new TableData(dir, 't', cols);
    await check();
    expect(td.historyStartMs()).toBeLessThanOrEqual(beforeDelete);
    await td.close();

    // Out of the window: the next load drops the old generations and deletes their files.
    const before = parquetFiles(dir).length;
    expect(before).toBeGreaterThan(0);
    TableData.retentionMs = 1;
    await tick();
    td = new TableData(dir, 't', cols);
    await td.load();
    expect(parquetFiles(dir)).toEqual([]); // the live generation is empty (truncated)
    expect(await td.rowsAsOf(beforeReplace)).toBeNull();
    await td.append(batch(7));
    expect(await ids(td.state())).toEqual([7]);
    await td.close();
  });

  it('drops replaced schemas\' columns and retyped ones as NULL when reading an old generation', async () => {
    const dir = tempDir();
    const old = [restFieldToColumn({ name: 'x', type: 'INT64' }), restFieldToColumn({ name: 'gone', type: 'STRING' })];
    const td = new TableData(dir, 't', old);
    await td.load();
    await td.append({ length: 1, columns: [vectorFromValues(old[0]!.type, [7n]), vectorFromValues(old[1]!.type, ['g'])] });
    await tick();
    const then = Date.now();
    await tick();
    const now = [restFieldToColumn({ name: 'x', type: 'FLOAT64' }), restFieldToColumn({ name: 'y', type: 'STRING' })];
    await td.replace([{ length: 1, columns: [vectorFromValues(now[0]!.type, [1.5]), vectorFromValues(now[1]!.type, ['y'])] }], now);
    // The generation then, in its own schema; matched to today's by name (and type), its columns read as NULL.
    const state = (await td.rowsAsOf(then))!;
    expect(state.columns.map((c) => c.name)).toEqual(['x', 'gone']);
    const rows = conformBatches(state.columns, td.schema, await stateBatches(state));
    expect(rows.reduce((s, b) => s + b.length, 0)).toBe(1);
    expect(rows[0]!.columns.map((v) => getValue(v, 0))).toEqual([null, null]);
    await td.close();
  });

  it('caps the kept generations: the oldest go and reads before them fail', async () => {
    const dir = tempDir();
    const td = new TableData(dir, 't', cols);
    await td.load();
    await td.append(batch(0));
    await tick();
    const first = Date.now();
    for (let i = 1; i <= 70; i++) await td.replace([batch(i)]);
    expect(await td.rowsAsOf(first)).toBeNull();
    expect(td.truncatedBeforeMs).toBeGreaterThan(first);
    // 64 past generations and the live one's fragment.
    expect(parquetFiles(dir)).toHaveLength(65);
    expect(await ids(await td.rowsAsOf(Date.now()))).toEqual([70]);
    await td.close();
  });

  it('thins old versions: exact for a minute, per second to an hour, per minute beyond, none before the window', () => {
    const now = 10 * 24 * 3600_000;
    const day = 24 * 3600_000;
    const v: Version[] = [
      [now - 9 * day, 1], // superseded before the window: dropped
      [now - 8 * day, 2], // live at the window's start: kept
      [now - 2 * day + 1_000, 3], // same minute as the next: dropped
      [now - 2 * day + 2_000, 4],
      [now - 1800_000 + 100, 5], // same second as the next: dropped
      [now - 1800_000 + 200, 6],
      [now - 1800_000 + 1_200, 7], // next second: kept
      [now - 30_000 + 1, 8], // within the minute: all kept
      [now - 30_000 + 2, 9],
    ];
    expect(pruneVersions(v, now, 7 * day).map((x) => x[1])).toEqual([2, 4, 6, 7, 8, 9]);
  });
});
