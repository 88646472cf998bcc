// Row access policy DDL through jobs.insert / jobs.get (REST JobStatistics2): a policy made without GRANT TO
// has no grantees, so it admits no one's rows (grantees are the initial members of the policy's IAM policy);
// DROP ALL ROW ACCESS POLICIES reports DROP_ROW_ACCESS_POLICY ("DROP [ALL] ROW ACCESS POLICY|POLICIES") with
// ddlAffectedRowAccessPolicyCount, which DROP ROW ACCESS POLICY does not carry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('row access policy jobs through the REST API', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } });
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/rap${p}`;
  /** jobs.insert, then jobs.get until DONE. */
  const job = async (sql: string): Promise<any> => {
    const ins = await rest(url('/jobs'), { method: 'POST', json: { configuration: { query: { query: sql, useLegacySql: false } } } });
    expect(ins.status).toBe(200);
    for (;;) {
      const got = (await rest(url(`/jobs/${ins.body.jobReference.jobId}`))).body;
      if (got.status?.state === 'DONE') return got;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const count = async (): Promise<string> => {
    const q = await rest(url('/queries'), { method: 'POST', json: { query: 'SELECT COUNT(*) FROM d.t', useLegacySql: false, timeoutMs: 30000 } });
    expect(q.status).toBe(200);
    return q.body.rows[0].f[0].v;
  };

  it('a policy without GRANT TO admits no rows; DROP ALL reports DROP_ROW_ACCESS_POLICY and the policies it dropped', async () => {
    await job("CREATE TABLE d.t AS SELECT * FROM UNNEST(['EU', 'EU', 'US']) AS region");
    expect(await count()).toBe('3');

    const made = await job("CREATE ROW ACCESS POLICY nobody ON d.t FILTER USING (region = 'EU')");
    expect(made.status.errorResult).toBeUndefined();
    expect(made.statistics.query.statementType).toBe('CREATE_ROW_ACCESS_POLICY');
    const listed = (await rest(url('/datasets/d/tables/t/rowAccessPolicies'))).body.rowAccessPolicies;
    expect(listed.map((p: any) => [p.rowAccessPolicyReference.policyId, p.filterPredicate, p.grantees])).toEqual([['nobody', "region = 'EU'", undefined]]);
    expect(await count()).toBe('0');

    // A second policy granted to everyone admits its rows; the grantee-less one still adds none.
    await job("CREATE ROW ACCESS POLICY us ON d.t GRANT TO ('allAuthenticatedUsers') FILTER USING (region = 'US')");
    expect(await count()).toBe('1');

    const one = await job('DROP ROW ACCESS POLICY us ON d.t');
    expect(one.statistics.query.statementType).toBe('DROP_ROW_ACCESS_POLICY');
    expect(one.statistics.query.ddlAffectedRowAccessPolicyCount).toBeUndefined();
    await job("CREATE ROW ACCESS POLICY us2 ON d.t GRANT TO ('allUsers') FILTER USING (TRUE)");

    const all = await job('DROP ALL ROW ACCESS POLICIES ON d.t');
    expect(all.status.errorResult).toBeUndefined();
    expect(all.statistics.query.statementType).toBe('DROP_ROW_ACCESS_POLICY');
    expect(all.statistics.query.ddlAffectedRowAccessPolicyCount).toBe('2');
    expect(all.statistics.query.ddlOperationPerformed).toBe('DROP');
    expect(all.statistics.query.ddlTargetTable).toEqual({ projectId: 'rap', datasetId: 'd', tableId: 't' });
    expect((await rest(url('/datasets/d/tables/t/rowAccessPolicies'))).body.rowAccessPolicies ?? []).toEqual([]);
    expect(await count()).toBe('3');

    // With no policy left, DROP ALL drops none.
    const none = await job('DROP ALL ROW ACCESS POLICIES ON d.t');
    expect(none.statistics.query.ddlAffectedRowAccessPolicyCount).toBe('0');
  });
});
