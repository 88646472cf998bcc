// Table OPTIONS over HTTP: those of BigLake (Iceberg) managed tables, and those with no REST field (below).
// BigLake tables' options against the real engine: storage_uri, file_format,
// table_format and CREATE TABLE ... WITH CONNECTION are the table resource's biglakeConfiguration, which the emulator
// refuses with 501 notImplemented as tables.insert / update / patch do (spec §4.3.1), instead of dropping them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('table OPTIONS over HTTP', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    expect((await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/topt${p}`;
  const query = (sql: string) => rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
  const notImplemented = (r: { status: number; body: { error: { errors: { reason: string; message: string }[] } } }) => {
    expect(r.status).toBe(501);
    expect(r.body.error.errors[0]!.reason).toBe('notImplemented');
    expect(r.body.error.errors[0]!.message).toContain('biglakeConfiguration');
  };

  it('CREATE TABLE with storage_uri / file_format / table_format or WITH CONNECTION is 501 and makes no table', async () => {
    notImplemented(await query("CREATE TABLE d.lake (a INT64) WITH CONNECTION `topt.us.conn` OPTIONS (storage_uri = 'gs://b/lake/', file_format = 'PARQUET', table_format = 'ICEBERG')"));
    notImplemented(await query("CREATE TABLE d.lake (a INT64) OPTIONS (storage_uri = 'gs://b/lake/')"));
    notImplemented(await query('CREATE TABLE d.lake (a INT64) WITH CONNECTION `topt.us.conn`'));
    expect((await rest(url('/datasets/d/tables/lake'))).status).toBe(404);
  });

  it('ALTER TABLE SET OPTIONS storage_uri is 501 and leaves the table as it was', async () => {
    expect((await query("CREATE TABLE d.plain (a INT64) OPTIONS (description = 'kept')")).status).toBe(200);
    notImplemented(await query("ALTER TABLE d.plain SET OPTIONS (storage_uri = 'gs://b/moved/')"));
    const t = (await rest(url('/datasets/d/tables/plain'))).body;
    expect(t.description).toBe('kept');
    expect(t.biglakeConfiguration).toBeUndefined();
  });

  it('file_format other than PARQUET is a 400 invalidQuery, checked first', async () => {
    const bad = await query("CREATE TABLE d.bad (a INT64) OPTIONS (file_format = 'CSV')");
    expect(bad.status).toBe(400);
    expect(bad.body.error.errors[0].reason).toBe('invalidQuery');
  });

  // DDL OPTIONS with no REST field of their own are kept with the stored resource for INFORMATION_SCHEMA, never
  // shown in the REST resource (tables.get / tables.list / datasets.get), and a client cannot set them through REST.
  it('a table made with options that have no REST field shows them in INFORMATION_SCHEMA only', async () => {
    expect((await query('CREATE TABLE d.t (a INT64) OPTIONS (enable_change_history = true, enable_fine_grained_mutations = true)')).status).toBe(200);
    const t = (await rest(url('/datasets/d/tables/t'))).body;
    expect(t.tableReference.tableId).toBe('t');
    expect(t.options).toBeUndefined();
    const list = (await rest(url('/datasets/d/tables'))).body;
    const listed = list.tables.find((x: { tableReference: { tableId: string } }) => x.tableReference.tableId === 't');
    expect(listed).toBeDefined();
    expect(listed.options).toBeUndefined();
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

  it('tables.patch cannot plant options or GRANT bindings; setIamPolicy still sets the bindings', async () => {
    expect((await query('CREATE TABLE d.w (a INT64)')).status).toBe(200);
    const member = 'user:planted@example.com';
    const patched = await rest(url('/datasets/d/tables/w'), {
      method: 'PATCH',
      json: { description: 'p', options: { enable_change_history: true }, iamPolicy: { bindings: [{ role: 'roles/bigquery.dataViewer', members: [member] }] } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.description).toBe('p');
    const r = await query("SELECT is_change_history_enabled FROM d.INFORMATION_SCHEMA.TABLES WHERE table_name = 'w'");
    expect(r.body.rows).toEqual([{ f: [{ v: 'NO' }] }]);
    expect((await rest(url('/datasets/d/tables/w:getIamPolicy'), { method: 'POST', json: {} })).body.bindings).toBeUndefined();
    const set = await rest(url('/datasets/d/tables/w:setIamPolicy'), { method: 'POST', json: { policy: { bindings: [{ role: 'roles/bigquery.dataViewer', members: [member] }] } } });
    expect(set.status).toBe(200);
    expect((await rest(url('/datasets/d/tables/w:getIamPolicy'), { method: 'POST', json: {} })).body.bindings).toEqual([{ role: 'roles/bigquery.dataViewer', members: [member] }]);
  });

  it('a dataset made by CREATE SCHEMA shows no options key', async () => {
    expect((await query("CREATE SCHEMA s2 OPTIONS (description = 'x', max_time_travel_hours = 48)")).status).toBe(200);
    const ds = (await rest(url('/datasets/s2'))).body;
    expect(ds.description).toBe('x');
    expect(ds.options).toBeUndefined();
  });
});
