// DDL OPTIONS with no REST field of their own are kept with the stored resource for INFORMATION_SCHEMA, never shown
// in the REST resource (tables.get / tables.list / datasets.get), and a client cannot set them through REST.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('DDL options kept out of REST resources', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    expect((await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/hopt${p}`;
  const query = (sql: string) => rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });

  it('a table made with options that have no REST field shows them in INFORMATION_SCHEMA only', async () => {
    expect((await query('CREATE TABLE d.t (a INT64) OPTIONS (enable_change_history = true, enable_fine_grained_mutations = true)')).status).toBe(200);
    const t = (await rest(url('/datasets/d/tables/t'))).body;
    expect(t.tableReference.tableId).toBe('t');
    expect(t.options).toBeUndefined();
    const list = (await rest(url('/datasets/d/tables'))).body;
    expect(list.tables).toHaveLength(1);
    expect(list.tables[0].options).toBeUndefined();
    const r = await query("SELECT is_change_history_enabled, is_fine_grained_mutations_enabled FROM d.INFORMATION_SCHEMA.TABLES WHERE table_name = 't'");
    expect(r.body.rows).toEqual([{ f: [{ v: 'YES' }, { v: 'YES' }] }]);
    // tables.update replaces the resource: the DDL options stay.
    expect((await rest(url('/datasets/d/tables/t'), { method: 'PUT', json: { ...t, description: 'x' } })).status).toBe(200);
    const again = await query("SELECT is_change_history_enabled FROM d.INFORMATION_SCHEMA.TABLES WHERE table_name = 't'");
    expect(again.body.rows).toEqual([{ f: [{ v: 'YES' }] }]);
  });

  it('a client cannot plant options through tables.insert', async () => {
    const ins = await rest(url('/datasets/d/tables'), {
      method: 'POST',
      json: { tableReference: { tableId: 'u' }, schema: { fields: [{ name: 'a', type: 'INTEGER' }] }, options: { enable_change_history: true } },
    });
    expect(ins.status).toBe(200);
    expect(ins.body.options).toBeUndefined();
    const r = await query("SELECT is_change_history_enabled FROM d.INFORMATION_SCHEMA.TABLES WHERE table_name = 'u'");
    expect(r.body.rows).toEqual([{ f: [{ v: 'NO' }] }]);
  });

  it('a dataset made by CREATE SCHEMA shows no options key', async () => {
    expect((await query("CREATE SCHEMA s2 OPTIONS (description = 'x', max_time_travel_hours = 48)")).status).toBe(200);
    const ds = (await rest(url('/datasets/s2'))).body;
    expect(ds.description).toBe('x');
    expect(ds.options).toBeUndefined();
  });
});
