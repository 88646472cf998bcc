// Out-of-core reads: a scan decodes only the row groups and columns it needs,
// and skips row groups whose statistics rule out its filters (counted, not
// timed); a table several times larger than the memory budget is read whole
// after a restart with the cache never above the budget.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkCache } from '../../src/storage/chunk-cache.js';
import { ROW_GROUP } from '../../src/storage/fragment-file.js';
import { ZONE_ROWS } from '../../src/storage/pruning.js';
import { Storage } from '../../src/storage/store.js';
import { scanCounters } from '../../src/storage/table-state.js';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { openHarness, run, type Harness } from '../sql/harness.js';
import type { QueryResult } from '../../src/planner/api.js';
import { getValue } from '../../src/types/vector.js';

const P = 'prune';
let h: Harness;
const q = (sql: string): Promise<QueryResult> => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });
const first = (r: QueryResult): unknown[] => r.batches[0]!.columns.map((v) => getValue(v, 0));

/**
 * The row groups a query reads and skips, and the batches of those read that it skips by their block zones.
 * Less what its dry run reads: on a partitioned table, the bytes billed count the rows of the partitions a
 * filter keeps (planner/billing.ts) with a scan of the partitioning column, before the query runs.
 */
async function counted(sql: string): Promise<{ read: number; skipped: number; blocks: number; result: QueryResult }> {
  const counters = (): number[] => [scanCounters.rowGroupsRead, scanCounters.rowGroupsSkipped, scanCounters.blocksSkipped];
  const d0 = counters();
  await run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' }, dryRun: true });
  const dry = counters().map((n, i) => n - d0[i]!);
  const c0 = counters();
  const result = await q(sql);
  const [read, skipped, blocks] = counters().map((n, i) => n - c0[i]! - dry[i]!);
  return { read: read!, skipped: skipped!, blocks: blocks!, result };
}

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  // 4 row groups, ids in order: each row group holds a contiguous id range.
  await q(`CREATE TABLE d.big AS SELECT x AS id, MOD(x, 7) AS k, CONCAT('s', CAST(MOD(x, 100) AS STRING)) AS s, DATE_ADD(DATE '2024-01-01', INTERVAL DIV(x, 1000) DAY) AS day FROM UNNEST(GENERATE_ARRAY(0, ${4 * ROW_GROUP - 1})) AS x`);
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('scans read what the query needs', () => {
  it('a selective filter reads only the row groups that can match', async () => {
    const lo = ROW_GROUP + 10;
    const between = await counted(`SELECT COUNT(*), SUM(k) FROM d.big WHERE id BETWEEN ${lo} AND ${lo + 999}`);
    expect(first(between.result)[0]).toBe(1000n);
    expect([between.read, between.skipped]).toEqual([1, 3]);
    // Within the row group read, only the batch of 4,096 ids holding the range is made (ZONE_ROWS).
    expect(between.blocks).toBe(ROW_GROUP / ZONE_ROWS - 1);
    const cmp = await counted(`SELECT COUNT(*) FROM d.big WHERE id >= ${3 * ROW_GROUP} AND k = 3`);
    expect([cmp.read, cmp.skipped]).toEqual([1, 3]);
    const inList = await counted(`SELECT COUNT(*) FROM d.big WHERE id IN (5, ${2 * ROW_GROUP + 5})`);
    expect(first(inList.result)[0]).toBe(2n);
    expect([inList.read, inList.skipped]).toEqual([2, 2]);
    const day = await counted(`SELECT COUNT(*) FROM d.big WHERE day = DATE '2024-01-02'`);
    expect(first(day.result)[0]).toBe(1000n);
    expect(day.read).toBe(1);
    // No usable filter: everything is read; the answers do not depend on skipping.
    const all = await counted(`SELECT COUNT(*) FROM d.big WHERE MOD(id, 2) = 0`);
    expect([all.read, all.skipped, all.blocks]).toEqual([4, 0, 0]);
    expect(first(all.result)[0]).toBe(BigInt(2 * ROW_GROUP));
    // A value no row group holds skips them all.
    const none = await counted(`SELECT COUNT(*) FROM d.big WHERE id < 0 OR id IS NULL AND id > 0`);
    expect(first(none.result)[0]).toBe(0n);
  });

  it('a hash join reads only the probe row groups the build keys can be in (runtime join filter)', async () => {
    await q(`CREATE TABLE d.few AS SELECT id, CONCAT('n', CAST(id AS STRING)) AS name FROM UNNEST([${ROW_GROUP + 5}, ${ROW_GROUP + 7}, ${2 * ROW_GROUP - 1}]) AS id`);
    const inner = await counted('SELECT COUNT(*), SUM(big.k), MAX(few.name) FROM d.big JOIN d.few USING (id)');
    expect(first(inner.result)).toEqual([3n, BigInt((ROW_GROUP + 5) % 7 + (ROW_GROUP + 7) % 7 + (2 * ROW_GROUP - 1) % 7), `n${ROW_GROUP + 7}`]);
    // (d.few's own row group is read too.)
    expect([inner.read, inner.skipped]).toEqual([2, 3]);
    const semi = await counted('SELECT COUNT(*) FROM d.big WHERE id IN (SELECT id FROM d.few)');
    expect(first(semi.result)[0]).toBe(3n);
    expect([semi.read, semi.skipped]).toEqual([2, 3]);
    // No build key at all: nothing is read.
    const empty = await counted('SELECT COUNT(*) FROM d.big JOIN (SELECT id FROM d.few WHERE id < 0) AS f USING (id)');
    expect(first(empty.result)[0]).toBe(0n);
    expect([empty.read, empty.skipped]).toEqual([0, 5]);
    // A LEFT join keeps every probe row: no filter.
    const left = await counted('SELECT COUNT(*), COUNT(few.name) FROM d.big LEFT JOIN d.few USING (id)');
    expect(first(left.result)).toEqual([BigInt(4 * ROW_GROUP), 3n]);
    expect([left.read, left.skipped]).toEqual([5, 0]);
    await q('DROP TABLE d.few');
  });

  it('a MERGE with a small source reads only the target row groups its keys can be in', async () => {
    const m = await counted(`MERGE d.big USING (SELECT ${ROW_GROUP + 5} AS id, 'x' AS s UNION ALL SELECT -1, 'new') AS src ON big.id = src.id
      WHEN MATCHED THEN UPDATE SET s = src.s WHEN NOT MATCHED THEN INSERT (id, k, s, day) VALUES (src.id, 0, src.s, NULL)`);
    expect(m.result.numDmlAffectedRows).toBe(2);
    expect(m.read).toBe(1);
    expect(first(await q(`SELECT COUNTIF(s = 'x'), COUNTIF(id = -1), COUNT(*) FROM d.big`))).toEqual([1n, 1n, BigInt(4 * ROW_GROUP + 1)]);
    // Put back as it was (the tests after this one read the whole table).
    await q(`DELETE FROM d.big WHERE id = -1`);
    await q(`UPDATE d.big SET s = CONCAT('s', CAST(MOD(id, 100) AS STRING)) WHERE id = ${ROW_GROUP + 5}`);
  });

  it('partitioned and clustered tables are laid out by their keys, so their filters prune', async () => {
    // Rows arrive in no order of day or k: written as they come, every row group would hold every day.
    const rows = 4 * ROW_GROUP;
    const mix = 'MOD(x * 7919, 64)';
    await q(`CREATE TABLE d.part PARTITION BY day CLUSTER BY k AS SELECT x AS id, DATE_ADD(DATE '2024-01-01', INTERVAL ${mix} DAY) AS day, MOD(x * 31, 1000) AS k FROM UNNEST(GENERATE_ARRAY(0, ${rows - 1})) AS x`);
    const day = await counted(`SELECT COUNT(*) FROM d.part WHERE day = DATE '2024-01-05'`);
    expect(first(day.result)[0]).toBe(BigInt(rows / 64));
    expect(day.read).toBe(1);
    expect(day.skipped).toBe(3);
    // Rows appended later (a bulk INSERT) are laid out in their own file the same way.
    const before = first(await q(`SELECT COUNT(*) FROM d.part WHERE day = DATE '2024-01-05' AND k = 5`))[0] as bigint;
    await q(`INSERT INTO d.part SELECT x, DATE_ADD(DATE '2024-01-01', INTERVAL ${mix} DAY), 5 FROM UNNEST(GENERATE_ARRAY(0, ${ROW_GROUP - 1})) AS x`);
    const again = await counted(`SELECT COUNT(*) FROM d.part WHERE day = DATE '2024-01-05' AND k = 5`);
    expect(first(again.result)[0]).toBe(before + BigInt(ROW_GROUP / 64));
    expect(again.read).toBeLessThanOrEqual(2);
  });

  it('an ingestion-time partitioned table is laid out by its hidden partition time, so _PARTITIONTIME filters prune', async () => {
    const rows = 4 * ROW_GROUP;
    await q('CREATE TABLE d.ing (id INT64) PARTITION BY _PARTITIONDATE');
    // Partitions in no order of arrival: the bulk INSERT's file is ordered by partition time.
    await q(`INSERT INTO d.ing (_PARTITIONTIME, id) SELECT TIMESTAMP_ADD(TIMESTAMP '2024-01-01', INTERVAL MOD(x * 7919, 64) DAY), x FROM UNNEST(GENERATE_ARRAY(0, ${rows - 1})) AS x`);
    const hit = await counted(`SELECT COUNT(*) FROM d.ing WHERE _PARTITIONTIME = TIMESTAMP '2024-01-05'`);
    expect(first(hit.result)[0]).toBe(BigInt(rows / 64));
    expect([hit.read, hit.skipped]).toEqual([1, 3]);
    const range = await counted(`SELECT COUNT(*) FROM d.ing WHERE _PARTITIONTIME >= TIMESTAMP '2024-02-15'`);
    expect(first(range.result)[0]).toBe(BigInt((rows / 64) * 19));
    expect(range.read).toBe(2);
    // _PARTITIONDATE, the UTC date of _PARTITIONTIME, prunes as well: a day, a range, BETWEEN.
    const day = await counted(`SELECT COUNT(*) FROM d.ing WHERE _PARTITIONDATE = DATE '2024-01-05'`);
    expect(first(day.result)[0]).toBe(BigInt(rows / 64));
    expect([day.read, day.skipped]).toEqual([1, 3]);
    const after = await counted(`SELECT COUNT(*) FROM d.ing WHERE DATE '2024-02-14' < _PARTITIONDATE`);
    expect(first(after.result)[0]).toBe(BigInt((rows / 64) * 19));
    expect(after.read).toBe(2);
    const between = await counted(`SELECT COUNT(*) FROM d.ing WHERE _PARTITIONDATE BETWEEN '2024-01-02' AND '2024-01-03'`);
    expect(first(between.result)[0]).toBe(BigInt((rows / 64) * 2));
    expect(between.read).toBe(1);
  });

  it('a filter on the date of a TIMESTAMP column (DATE(ts), CAST(ts AS DATE)) skips row groups, whatever the time zone', async () => {
    const rows = 4 * ROW_GROUP;
    // One day per 1,024 rows, in order: each row group holds 64 days.
    await q(`CREATE TABLE d.ev AS SELECT x AS id, TIMESTAMP_ADD(TIMESTAMP '2024-01-01', INTERVAL DIV(x, 1024) * 24 + 12 HOUR) AS ts FROM UNNEST(GENERATE_ARRAY(0, ${rows - 1})) AS x`);
    const fn = await counted(`SELECT COUNT(*) FROM d.ev WHERE DATE(ts) = DATE '2024-01-10'`);
    expect(first(fn.result)[0]).toBe(1024n);
    expect([fn.read, fn.skipped]).toEqual([1, 3]);
    const cast = await counted(`SELECT COUNT(*) FROM d.ev WHERE CAST(ts AS DATE) >= DATE '2024-07-01'`);
    expect(first(cast.result)[0]).toBe(BigInt(rows - 182 * 1024));
    expect(cast.read).toBe(2);
    // A zone other than UTC moves the day's bounds by hours: still the right rows, still one row group.
    const zoned = await counted(`SELECT COUNT(*) FROM d.ev WHERE DATE(ts, 'Pacific/Kiritimati') = DATE '2024-01-10'`);
    expect(first(zoned.result)[0]).toBe(1024n);
    expect(zoned.read).toBe(1);
  });

  it("ORDER BY .. LIMIT skips row groups whose statistics lose against the running n-th best (live filter)", async () => {
    const rowsOf = (r: QueryResult): unknown[][] => r.batches.flatMap((b) => Array.from({ length: b.length }, (_, i) => b.columns.map((v) => getValue(v, i))));
    await q(`CREATE TABLE d.seq AS SELECT x AS id, MOD(x, 7) AS k FROM UNNEST(GENERATE_ARRAY(0, ${4 * ROW_GROUP - 1})) AS x`);
    // Ascending ids, smallest wanted: the first row group's 5th id rules out the other three.
    const asc = await counted('SELECT id, k FROM d.seq WHERE k <> 3 ORDER BY id ASC NULLS LAST, k LIMIT 5');
    expect([asc.read, asc.skipped]).toEqual([1, 3]);
    // Within the row group, batches after the first few are skipped by their block zones; without
    // the filter (nothing held back to coalesce), every batch after the first.
    expect(asc.blocks).toBeGreaterThanOrEqual(ROW_GROUP / ZONE_ROWS - 2);
    const plain = await counted('SELECT id, k FROM d.seq ORDER BY id ASC NULLS LAST LIMIT 5');
    expect([plain.read, plain.skipped, plain.blocks]).toEqual([1, 3, ROW_GROUP / ZONE_ROWS - 1]);
    expect(rowsOf(plain.result)).toEqual([0, 1, 2, 3, 4].map((i) => [BigInt(i), BigInt(i % 7)]));
    // The same query with the key an expression (no filter): the same rows.
    expect(rowsOf(asc.result)).toEqual(rowsOf(await q('SELECT id, k FROM d.seq WHERE k <> 3 ORDER BY id + 0 ASC NULLS LAST, k LIMIT 5')));
    // Largest wanted, in the last row group: row groups are read best first by their statistics, so it rules out the rest.
    // Within it, blocks best first too: its last batch, then the other batches are skipped by their zones.
    const desc = await counted('SELECT id FROM d.seq ORDER BY id DESC LIMIT 3');
    expect([desc.read, desc.skipped, desc.blocks]).toEqual([1, 3, ROW_GROUP / ZONE_ROWS - 1]);
    expect(rowsOf(desc.result)).toEqual([[BigInt(4 * ROW_GROUP - 1)], [BigInt(4 * ROW_GROUP - 2)], [BigInt(4 * ROW_GROUP - 3)]]);
    // Descending over a column whose first row group is all NULL (NULLs last), and ties on the bound.
    await q(`CREATE TABLE d.nv AS SELECT x AS id, IF(x < ${ROW_GROUP}, NULL, DIV(x, 1000)) AS v FROM UNNEST(GENERATE_ARRAY(0, ${3 * ROW_GROUP - 1})) AS x`);
    for (const sql of ['SELECT id, v FROM d.nv ORDER BY v DESC, id LIMIT 1500', `SELECT id, v FROM d.nv ORDER BY v ASC NULLS LAST, id DESC LIMIT 1200`]) {
      const got = await counted(sql);
      expect(rowsOf(got.result), sql).toEqual(rowsOf(await q(sql.replace('ORDER BY v', 'ORDER BY v + 0'))));
    }
    const rg2 = await counted('SELECT id, v FROM d.nv ORDER BY v ASC NULLS LAST, id DESC LIMIT 1200');
    expect([rg2.read, rg2.skipped]).toEqual([2, 1]);
    await q('DROP TABLE d.nv');
    await q('DROP TABLE d.seq');
  });

  it("calls over a string column run over row groups' dictionaries shared per column, as over the rows", async () => {
    // Each row group adds values the earlier ones lack: the shared dictionary grows as the scan reads on.
    const gen = `SELECT x, IF(MOD(x, 13) = 0, NULL, CONCAT(IF(MOD(x, 2) = 0, 'Ab', 'cD'), CAST(MOD(x * 7, 40 + 30 * DIV(x, ${ROW_GROUP})) AS STRING))) AS s FROM UNNEST(GENERATE_ARRAY(0, ${4 * ROW_GROUP - 1})) AS x`;
    await q(`CREATE TABLE d.dict AS ${gen}`);
    const calls = "COUNTIF(REGEXP_CONTAINS(LOWER(s), r'^ab1[0-9]$')), COUNT(DISTINCT UPPER(s)), MAX(LOWER(s)), COUNTIF(LOWER(s) IS NULL), SUM(LENGTH(LOWER(s)))";
    chunkCache.clear();
    const stored = first(await q(`SELECT ${calls} FROM d.dict`));
    // The same calls over the generated rows (no storage, no dictionary).
    expect(stored).toEqual(first(await q(`SELECT ${calls} FROM (${gen})`)));
    expect(stored[3]).toBe(BigInt(Math.ceil((4 * ROW_GROUP) / 13)));
    // Again with the dictionary already complete (cached chunks), and filtered by the call.
    expect(first(await q(`SELECT COUNT(*) FROM d.dict WHERE REGEXP_CONTAINS(LOWER(s), r'^cd1[0-9]$')`))).toEqual(first(await q(`SELECT COUNT(*) FROM (${gen}) WHERE REGEXP_CONTAINS(LOWER(s), r'^cd1[0-9]$')`)));
    await q('DROP TABLE d.dict');
  });

  it('a table several times the memory budget is read whole after a restart, the cache within its budget', async () => {
    const dir = h.storage.dataDir;
    const done = h.close;
    // A restart: the storage closes (its catalog and sidecars stay on disk), the chunk cache starts empty.
    await h.storage.close();
    const saved = chunkCache.budget;
    // ~3 MB of decoded chunks in the table; the budget a fraction of it.
    chunkCache.budget = 600_000;
    chunkCache.clear();
    const st = await Storage.open(dir, { noLock: true });
    try {
      const cat = new EngineCatalog(st);
      h = { catalog: cat, storage: st, close: async () => { await st.close(); await done().catch(() => undefined); } };
      let peak = 0;
      const r = await q('SELECT COUNT(*), SUM(id), COUNT(DISTINCT s), MAX(day) FROM d.big');
      peak = Math.max(peak, chunkCache.bytesUsed);
      expect(first(r)).toEqual([BigInt(4 * ROW_GROUP), BigInt((4 * ROW_GROUP * (4 * ROW_GROUP - 1)) / 2), 100n, Math.floor((4 * ROW_GROUP - 1) / 1000) + 19723]);
      // The table did not fit: chunks were evicted, or read without being kept (the scan's first ones stay).
      expect(chunkCache.evictions + chunkCache.bypassed).toBeGreaterThan(0);
      expect(peak).toBeLessThanOrEqual(chunkCache.budget);
    } finally {
      chunkCache.budget = saved;
    }
  });
});
