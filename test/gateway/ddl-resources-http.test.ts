// DDL options that land on REST resources other than tables, over HTTP against the real engine:
// CREATE PROCEDURE OPTIONS (strict_mode) on the routine, ALTER MODEL SET OPTIONS on the model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('DDL options on routine and model resources', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    expect((await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/ddlp${p}`;
  const query = (sql: string) => rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });

  it('CREATE PROCEDURE OPTIONS (strict_mode = FALSE) keeps strictMode on the routine', async () => {
    // strict_mode FALSE: a table the body names need not exist yet (procedures: strict_mode).
    expect((await query('CREATE PROCEDURE d.lax() OPTIONS (strict_mode = FALSE) BEGIN SELECT * FROM d.later; END')).status).toBe(200);
    expect((await rest(url('/datasets/d/routines/lax'))).body).toMatchObject({ routineType: 'PROCEDURE', strictMode: false });
    // Without the option the routine carries none (the REST field's default is TRUE).
    expect((await query('CREATE PROCEDURE d.plain() BEGIN SELECT 1; END')).status).toBe(200);
    expect((await rest(url('/datasets/d/routines/plain'))).body.strictMode).toBeUndefined();
  });

  it('ALTER MODEL SET OPTIONS sets, replaces and clears the model resource fields', async () => {
    expect((await query("CREATE MODEL d.m OPTIONS (model_type = 'linear_reg') AS SELECT 1.0 AS x, 2.0 AS label")).status).toBe(200);
    const set = await query("ALTER MODEL d.m SET OPTIONS (description = 'churn', labels = [('team', 'ml')], expiration_timestamp = TIMESTAMP '2099-01-01 00:00:00 UTC')");
    expect(set.status).toBe(200);
    const m = (await rest(url('/datasets/d/models/m'))).body;
    expect(m).toMatchObject({ description: 'churn', labels: { team: 'ml' }, expirationTime: String(Date.UTC(2099, 0, 1)), modelType: 'LINEAR_REG' });
    expect((await query("ALTER MODEL d.m SET OPTIONS (description = NULL, labels = [('owner', 'ann')])")).status).toBe(200);
    const after = (await rest(url('/datasets/d/models/m'))).body;
    expect(after.description).toBeUndefined();
    expect(after.labels).toEqual({ owner: 'ann' });
    const missing = await query("ALTER MODEL d.nope SET OPTIONS (description = 'x')");
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe('Not found: Model ddlp:d.nope');
  });
});
