// Partition expiration through REST (managing-partitioned-tables.md, Set the partition expiration; REST
// Table.timePartitioning.expirationMs): a partition past its expiration is deleted, so tables.get's numRows and
// tabledata.list leave its rows out, a tables.patch lowering the expiration deletes older partitions at once, and
// raising it again brings none back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

const DAY_MS = 86_400_000;

describe.skipIf(!hasRealEngine())('partition expiration', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'x' } } });
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/pexp${p}`;
  const schema = { fields: [{ name: 'd', type: 'DATE' }, { name: 'k', type: 'INT64' }] };
  const query = async (sql: string): Promise<void> => {
    const r = await rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  const numRows = async (t: string): Promise<string> => (await rest(url(`/datasets/x/tables/${t}`))).body.numRows;
  const listed = async (t: string): Promise<string[]> => ((await rest(url(`/datasets/x/tables/${t}/data`))).body.rows ?? []).map((r: any) => r.f[1].v).sort();

  it('tables.get numRows and tabledata.list leave out partitions past timePartitioning.expirationMs', async () => {
    const made = await rest(url('/datasets/x/tables'), {
      method: 'POST',
      json: { tableReference: { tableId: 't' }, schema, timePartitioning: { type: 'DAY', field: 'd', expirationMs: String(10 * DAY_MS) } },
    });
    expect(made.status).toBe(200);
    await query('INSERT x.t VALUES (DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY), 1), (DATE_SUB(CURRENT_DATE(), INTERVAL 5 DAY), 2), (CURRENT_DATE(), 3)');
    expect(await numRows('t')).toBe('2');
    expect(await listed('t')).toEqual(['2', '3']);
  });

  it('tables.patch lowering expirationMs deletes older partitions at once; raising it brings none back', async () => {
    await rest(url('/datasets/x/tables'), { method: 'POST', json: { tableReference: { tableId: 'u' }, schema, timePartitioning: { type: 'DAY', field: 'd' } } });
    await query('INSERT x.u VALUES (DATE_SUB(CURRENT_DATE(), INTERVAL 30 DAY), 1), (DATE_SUB(CURRENT_DATE(), INTERVAL 5 DAY), 2), (CURRENT_DATE(), 3)');
    expect(await numRows('u')).toBe('3');
    const lowered = await rest(url('/datasets/x/tables/u'), { method: 'PATCH', json: { timePartitioning: { type: 'DAY', field: 'd', expirationMs: String(2 * DAY_MS) } } });
    expect(lowered.status).toBe(200);
    expect(await numRows('u')).toBe('1');
    expect(await listed('u')).toEqual(['3']);
    await rest(url('/datasets/x/tables/u'), { method: 'PATCH', json: { timePartitioning: { type: 'DAY', field: 'd', expirationMs: String(100 * DAY_MS) } } });
    expect(await numRows('u')).toBe('1');
    expect(await listed('u')).toEqual(['3']);
  });

  it('a table that expired with time is restorable by copying table@<time before its expiration>', async () => {
    // restore-deleted-tables.md: implicit deletions by table expiration are restorable within the time-travel window.
    const made = await rest(url('/datasets/x/tables'), { method: 'POST', json: { tableReference: { tableId: 'gone' }, schema, expirationTime: String(Date.now() + 2000) } });
    expect(made.status).toBe(200);
    await query('INSERT x.gone VALUES (CURRENT_DATE(), 1), (CURRENT_DATE(), 2)');
    const before = Date.now();
    await new Promise((r) => setTimeout(r, 2200));
    expect((await rest(url('/datasets/x/tables/gone'))).status).toBe(404);
    const restore = await rest(url('/jobs'), {
      method: 'POST',
      json: { configuration: { copy: { sourceTable: { projectId: 'pexp', datasetId: 'x', tableId: `gone@${before}` }, destinationTable: { projectId: 'pexp', datasetId: 'x', tableId: 'back' } } } },
    });
    expect(restore.body.status, JSON.stringify(restore.body)).toEqual({ state: 'DONE' });
    expect(await listed('back')).toEqual(['1', '2']);
  });
});
