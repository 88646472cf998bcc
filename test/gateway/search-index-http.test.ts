// CREATE SEARCH INDEX on a table whose schema carries policy tags (column-level access control), which only the REST
// schema can set: data-definition-language (CREATE SEARCH INDEX, Details) refuses it; the tags may come after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('search indexes and column ACLs', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    expect((await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/sixp${p}`;
  const query = (sql: string) => rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
  const tag = { names: ['projects/sixp/locations/us/taxonomies/1/policyTags/2'] };
  const table = (tableId: string, fields: unknown[]) =>
    rest(url('/datasets/d/tables'), { method: 'POST', json: { tableReference: { projectId: 'sixp', datasetId: 'd', tableId }, schema: { fields } } });

  it('refuses a table with a policy-tagged column, nested or not, with the 400 envelope', async () => {
    expect((await table('top', [{ name: 'msg', type: 'STRING' }, { name: 'ssn', type: 'STRING', policyTags: tag }])).status).toBe(200);
    const top = await query('CREATE SEARCH INDEX ix ON d.top (msg)');
    expect(top.status).toBe(400);
    expect(top.body.error.errors[0].reason).toBe('invalidQuery');
    expect(top.body.error.message).toContain('policy tags');
    const nested = [{ name: 'msg', type: 'STRING' }, { name: 'p', type: 'RECORD', fields: [{ name: 'email', type: 'STRING', policyTags: tag }] }];
    expect((await table('nested', nested)).status).toBe(200);
    expect((await query('CREATE SEARCH INDEX ix ON d.nested (ALL COLUMNS)')).body.error.message).toContain('p.email');
  });

  it('takes a table without tags, and the tags may be added after', async () => {
    expect((await table('plain', [{ name: 'msg', type: 'STRING' }, { name: 'ssn', type: 'STRING' }])).status).toBe(200);
    expect((await query('CREATE SEARCH INDEX ix ON d.plain (msg)')).status).toBe(200);
    const patched = await rest(url('/datasets/d/tables/plain'), { method: 'PATCH', json: { schema: { fields: [{ name: 'msg', type: 'STRING' }, { name: 'ssn', type: 'STRING', policyTags: tag }] } } });
    expect(patched.status).toBe(200);
    const views = await query('SELECT index_name FROM d.INFORMATION_SCHEMA.SEARCH_INDEXES');
    expect(views.body.rows).toEqual([{ f: [{ v: 'ix' }] }]);
  });
});
