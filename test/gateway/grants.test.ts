// GRANT/REVOKE over HTTP: schema grants land in datasets.get `access[]` (the
// three predefined data roles in their legacy form), table grants come back
// from tables.getIamPolicy as bindings (setIamPolicy replaces them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('GRANT and REVOKE through the REST API', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } });
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/gp${p}`;
  const query = async (sql: string): Promise<{ status: number; body: any }> =>
    rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });

  it('schema grants and revokes edit the dataset access list', async () => {
    const before = (await rest(url('/datasets/d'))).body;
    expect(before.access).toHaveLength(3);
    expect((await query('GRANT `roles/bigquery.dataViewer`, `roles/bigquery.jobUser` ON SCHEMA d TO "user:ann@example.com", "group:team@example.com", "domain:example.org"')).status).toBe(200);
    expect((await query('REVOKE `roles/bigquery.jobUser` ON SCHEMA gp.d FROM "group:team@example.com", "domain:example.org"')).status).toBe(200);
    const after = (await rest(url('/datasets/d'))).body;
    expect(after.access).toEqual([
      ...before.access,
      { role: 'READER', userByEmail: 'ann@example.com' },
      { role: 'READER', groupByEmail: 'team@example.com' },
      { role: 'READER', domain: 'example.org' },
      { role: 'roles/bigquery.jobUser', userByEmail: 'ann@example.com' },
    ]);
    expect(Number(after.lastModifiedTime)).toBeGreaterThan(Number(before.lastModifiedTime));
    expect(after.etag).not.toBe(before.etag);

    // Access set through datasets.patch in IAM form is returned in the legacy form, and GRANT does not duplicate it.
    const patched = await rest(url('/datasets/d'), { method: 'PATCH', json: { access: [...after.access, { role: 'roles/bigquery.dataEditor', userByEmail: 'bob@example.com' }] } });
    expect(patched.body.access.at(-1)).toEqual({ role: 'WRITER', userByEmail: 'bob@example.com' });
    expect((await query('GRANT `roles/bigquery.dataEditor` ON SCHEMA d TO "user:bob@example.com"')).status).toBe(200);
    expect((await rest(url('/datasets/d'))).body.access.filter((e: any) => e.userByEmail === 'bob@example.com')).toHaveLength(1);
  });

  it('tables.getIamPolicy returns the GRANT bindings on the table, none after they are revoked', async () => {
    expect((await query('CREATE TABLE d.t (a INT64)')).status).toBe(200);
    const empty = (await rest(url('/datasets/d/tables/t:getIamPolicy'), { method: 'POST', json: {} })).body;
    expect(empty.bindings).toBeUndefined();
    expect(empty.version).toBe(1);

    expect((await query('GRANT `roles/bigquery.dataViewer` ON TABLE d.t TO "user:ann@example.com", "serviceAccount:sa@gp.iam.gserviceaccount.com"')).status).toBe(200);
    const granted = await rest(url('/datasets/d/tables/t:getIamPolicy'), { method: 'POST', json: {} });
    expect(granted.status).toBe(200);
    expect(granted.body.bindings).toEqual([{ role: 'roles/bigquery.dataViewer', members: ['user:ann@example.com', 'serviceAccount:sa@gp.iam.gserviceaccount.com'] }]);
    expect(granted.body.etag).not.toBe(empty.etag);
    // The bindings are IAM, not part of the table resource.
    expect((await rest(url('/datasets/d/tables/t'))).body.iamPolicy).toBeUndefined();

    expect((await query('REVOKE `roles/bigquery.dataViewer` ON TABLE d.t FROM "user:ann@example.com", "serviceAccount:sa@gp.iam.gserviceaccount.com"')).status).toBe(200);
    expect((await rest(url('/datasets/d/tables/t:getIamPolicy'), { method: 'POST', json: {} })).body.bindings).toBeUndefined();

    const missing = await rest(url('/datasets/d/tables/nope:getIamPolicy'), { method: 'POST', json: {} });
    expect(missing.status).toBe(404);
  });

  it('tables.setIamPolicy replaces the bindings getIamPolicy and OBJECT_PRIVILEGES read', async () => {
    expect((await query('CREATE TABLE d.s (a INT64); GRANT `roles/bigquery.dataEditor` ON TABLE d.s TO "group:old@example.com"')).status).toBe(200);
    const bindings = [{ role: 'roles/bigquery.dataViewer', members: ['user:cy@example.com'] }];
    const set = await rest(url('/datasets/d/tables/s:setIamPolicy'), { method: 'POST', json: { policy: { bindings } } });
    expect(set.status).toBe(200);
    expect(set.body.bindings).toEqual(bindings);
    const got = (await rest(url('/datasets/d/tables/s:getIamPolicy'), { method: 'POST', json: {} })).body;
    expect(got).toEqual(set.body);
    const privs = await query('SELECT privilege_type, grantee FROM gp.`region-us`.INFORMATION_SCHEMA.OBJECT_PRIVILEGES WHERE object_schema = "d" AND object_name = "s"');
    expect(privs.body.rows.map((r: any) => r.f.map((c: any) => c.v))).toEqual([['roles/bigquery.dataViewer', 'user:cy@example.com']]);

    // tables.update (PUT) replaces the resource, not its IAM policy.
    const table = (await rest(url('/datasets/d/tables/s'))).body;
    expect((await rest(url('/datasets/d/tables/s'), { method: 'PUT', json: { ...table, description: 'x' } })).status).toBe(200);
    expect((await rest(url('/datasets/d/tables/s:getIamPolicy'), { method: 'POST', json: {} })).body.bindings).toEqual(bindings);

    const bad = await rest(url('/datasets/d/tables/s:setIamPolicy'), { method: 'POST', json: { policy: { bindings: [{ members: ['user:x@example.com'] }] } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe("Invalid value at 'policy.bindings[0]'");
  });
});
