// Table OPTIONS of BigLake (Iceberg) managed tables over HTTP against the real engine: storage_uri, file_format,
// table_format and CREATE TABLE ... WITH CONNECTION are the table resource's biglakeConfiguration, which the emulator
// refuses with 501 notImplemented as tables.insert / update / patch do (spec §4.3.1), instead of dropping them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('BigLake table options', () => {
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
});
