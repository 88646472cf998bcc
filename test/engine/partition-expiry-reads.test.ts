// A partition is gone from its expiry on (managing-partitioned-tables.md, Set the partition expiration; time-travel.md
// reads a table as it was at an instant), though the storage deletes it only at the first sweep after (a row-level
// commit before a statement or read: Storage.expirePartitions). So FOR SYSTEM_TIME AS OF an instant between the expiry
// and that sweep leaves it out, as a read then would have, and one before the expiry still reads it. A dry run writes
// nothing: it sweeps nothing (no commit, the table's rows version unchanged), and still neither reads nor bills the
// expired rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessEngine } from './helpers.js';

let eng: InProcessEngine;
const HOUR_MS = 3_600_000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const run = (query: string, dryRun = false) =>
  eng.client.call<{ rowsJson: string; totalBytesProcessed: number | string }>('ExecuteQuery', { projectId: 'p', jobId: `pe_${Math.random().toString(36).slice(2)}`, query, maxResults: 10, dryRun });
const scalar = async (query: string): Promise<string> => (JSON.parse((await run(query)).rowsJson) as { f: { v: string }[] }[])[0]!.f[0]!.v;

beforeAll(async () => {
  eng = await startInProcess();
  await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
});
afterAll(async () => {
  await eng.close();
});

/**
 * Table d.<name>, hourly partitions of `ts`, whose previous hour's partition expires `inMs` from now (the current
 * hour's an hour later); one row in each of the two.
 */
async function tableExpiringIn(name: string, inMs: number): Promise<number> {
  const now = Date.now();
  const prevHour = Math.floor(now / HOUR_MS) * HOUR_MS - HOUR_MS;
  const expiry = now + inMs;
  await eng.client.call('InsertTable', {
    projectId: 'p', datasetId: 'd',
    resourceJson: JSON.stringify({
      tableReference: { tableId: name },
      schema: { fields: [{ name: 'ts', type: 'TIMESTAMP' }, { name: 'k', type: 'INT64' }] },
      timePartitioning: { type: 'HOUR', field: 'ts', expirationMs: String(expiry - prevHour) },
    }),
  });
  await run(`INSERT d.${name} VALUES (TIMESTAMP_MILLIS(${prevHour + 1000}), 1), (CURRENT_TIMESTAMP(), 2)`);
  return expiry;
}

describe('partition expiry between its instant and the sweep', () => {
  it('FOR SYSTEM_TIME AS OF an instant after the expiry leaves the partition out before any sweep deleted it', async () => {
    const expiry = await tableExpiringIn('tt', 3000);
    const before = Date.now();
    expect(before, 'the insert took longer than the expiry is away').toBeLessThan(expiry);
    await sleep(Math.max(0, expiry + 1500 - Date.now()));
    // The statement sweeps first (now, past expiry + 1500): the version live at expiry + 500 still holds the row.
    expect(await scalar(`SELECT STRING_AGG(CAST(k AS STRING) ORDER BY k) FROM d.tt FOR SYSTEM_TIME AS OF TIMESTAMP_MILLIS(${expiry + 500})`)).toBe('2');
    expect(await scalar(`SELECT STRING_AGG(CAST(k AS STRING) ORDER BY k) FROM d.tt FOR SYSTEM_TIME AS OF TIMESTAMP_MILLIS(${before})`)).toBe('1,2');
    expect(await scalar('SELECT COUNT(*) FROM d.tt')).toBe('1');
    // tabledata.list of `t@<ms>` reads the same history.
    const listed = await eng.client.call<{ rowsJson: string }>('ListRows', { table: { projectId: 'p', datasetId: 'd', tableId: `tt@${expiry + 500}` }, maxResults: 10 });
    expect((JSON.parse(listed.rowsJson) as { f: { v: string }[] }[]).map((r) => r.f[1]!.v)).toEqual(['2']);
  });

  it('a dry run commits nothing (no sweep) and neither reads nor bills the expired partition', async () => {
    const expiry = await tableExpiringIn('dry', 2000);
    const live = await run('SELECT k FROM d.dry', true);
    const td = eng.storage.tableData('p', 'd', 'dry');
    await td.load();
    const version = td.version;
    await sleep(Math.max(0, expiry + 500 - Date.now()));
    const dry = await run('SELECT k FROM d.dry', true);
    const dryScript = await run('BEGIN TRANSACTION; SELECT k FROM d.dry; COMMIT TRANSACTION;', true);
    expect(td.version, 'a dry run swept').toBe(version);
    expect(td.state().rows - td.state().deleted.length, 'a dry run deleted rows').toBe(2);
    // One row of two left: the estimate halves (8 bytes of INT64 a row).
    expect(Number(live.totalBytesProcessed)).toBe(16);
    expect(Number(dry.totalBytesProcessed)).toBe(8);
    expect(Number(dryScript.totalBytesProcessed)).toBeLessThanOrEqual(8);
    // The next statement that runs sweeps it.
    expect(await scalar('SELECT COUNT(*) FROM d.dry')).toBe('1');
    expect(td.version).toBeGreaterThan(version);
  });
});
