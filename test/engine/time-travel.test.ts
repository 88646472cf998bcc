// Time travel through the engine's API: tabledata.list of `table@<epoch ms>`
// on a live table reads the table as of that instant (the same history as
// FOR SYSTEM_TIME AS OF), also after a restart; an instant before the table
// existed is BigQuery's "Invalid snapshot time" error. FOR SYSTEM_TIME AS OF an
// instant CURRENT_TIMESTAMP() read just before a change never sees it, one read
// just after always does, also within one millisecond (storage/commit-clock.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessEngine } from './helpers.js';

let eng: InProcessEngine;
const T = { projectId: 'p', datasetId: 'd' };
const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 5));

const insert = (ids: number[]) =>
  eng.client.call<{ insertErrorsJson: string }>('InsertRows', { table: { ...T, tableId: 't' }, rowsJson: JSON.stringify(ids.map((id) => ({ json: { id } }))) });
async function listIds(tableId: string): Promise<number[]> {
  const r = await eng.client.call<{ rowsJson: string }>('ListRows', { table: { ...T, tableId }, maxResults: 100 });
  return (JSON.parse(r.rowsJson || '[]') as { f: { v: string }[] }[]).map((row) => Number(row.f[0]!.v));
}

beforeAll(async () => {
  eng = await startInProcess();
  await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
  await eng.client.call('InsertTable', { projectId: 'p', datasetId: 'd', resourceJson: JSON.stringify({ tableReference: { tableId: 't' }, schema: { fields: [{ name: 'id', type: 'INT64' }] } }) });
});
afterAll(async () => {
  await eng.close();
});

describe('table@<epoch ms> on a live table', () => {
  it('lists the rows as of that instant, before and after a restart', async () => {
    await insert([1, 2]);
    await tick();
    const mid = Date.now();
    await tick();
    await insert([3]);
    expect(await listIds('t')).toEqual([1, 2, 3]);
    expect(await listIds(`t@${mid}`)).toEqual([1, 2]);
    // A negative decorator is relative to now; 0 is the current table.
    expect(await listIds(`t@-${Date.now() - mid + 3_600_000}`).catch((e: Error) => e.message)).toMatch(/Invalid snapshot time \d+ for table p:d\.t@\d+\. Cannot read before \d+\./);
    expect(await listIds('t@0')).toEqual([1, 2, 3]);
    const dir = eng.dataDir;
    await eng.close();
    eng = await startInProcess(dir);
    expect(await listIds(`t@${mid}`)).toEqual([1, 2]);
    expect(await listIds('t')).toEqual([1, 2, 3]);
  });
});

describe('FOR SYSTEM_TIME AS OF CURRENT_TIMESTAMP() around a change', () => {
  const count = async (query: string): Promise<number> => {
    const r = await eng.client.call<{ rowsJson: string }>('ExecuteQuery', { projectId: 'p', jobId: `tt_${Math.random().toString(36).slice(2)}`, query, maxResults: 10 });
    const rows = JSON.parse(r.rowsJson) as { f: { v: string }[] }[];
    return Number(rows[rows.length - 1]!.f[0]!.v);
  };
  it('an instant read before a change misses it, one read after sees it, in every round', async () => {
    await count('CREATE TABLE d.tt (x INT64); SELECT 0');
    // Back-to-back statements: most rounds put the change in the millisecond of the instant before it.
    for (let i = 1; i <= 60; i++) {
      const before = await count(`DECLARE t TIMESTAMP DEFAULT CURRENT_TIMESTAMP(); INSERT d.tt VALUES (${i}); SELECT COUNT(*) FROM d.tt FOR SYSTEM_TIME AS OF t`);
      expect(before, `round ${i}: as of an instant before the insert`).toBe(i - 1);
      const after = await count(`UPDATE d.tt SET x = -x WHERE x = ${i}; SELECT COUNTIF(x < 0) FROM d.tt FOR SYSTEM_TIME AS OF CURRENT_TIMESTAMP()`);
      expect(after, `round ${i}: as of an instant after the update`).toBe(i);
    }
  });
});
