// Time travel through the engine's API: tabledata.list of `table@<epoch ms>`
// on a live table reads the table as of that instant (the same history as
// FOR SYSTEM_TIME AS OF), also after a restart; an instant before the table
// existed is BigQuery's "Invalid snapshot time" error.
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
