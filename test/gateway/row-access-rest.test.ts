// Row-level security over the REST and Storage APIs (using-row-level-security-with-features.md): copy jobs (partition
// decorators too) need the TRUE filter on the source and carry its policies; tabledata.list and the Storage Read API need the TRUE filter;
// an extract exports the rows the user may view. rowAccessPolicies.delete / batchDelete keep the table's last
// policy unless `force` (their REST reference pages), as DROP ROW ACCESS POLICY does (managing-row-level-security.md).
import * as grpc from '@grpc/grpc-js';
import { v1 } from '@google-cloud/bigquery-storage';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAuth } from '../helpers/auth.js';
import { hasRealEngine, killEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('row access policies over REST', () => {
  let emu: Emulator;
  let dir: string;
  beforeAll(async () => {
    emu = await startEmulator();
    dir = mkdtempSync(join(tmpdir(), 'rap-rest-'));
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } });
  });
  afterAll(async () => {
    await emu?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/rr${p}`;
  const query = async (sql: string): Promise<any> => {
    const r = await rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  /** jobs.insert, then jobs.get until DONE. */
  const job = async (configuration: unknown): Promise<any> => {
    const ins = await rest(url('/jobs'), { method: 'POST', json: { configuration } });
    expect(ins.status, JSON.stringify(ins.body)).toBe(200);
    for (;;) {
      const got = (await rest(url(`/jobs/${ins.body.jobReference.jobId}`))).body;
      if (got.status?.state === 'DONE') return got;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const copy = (src: string, dst: string, extra: Record<string, unknown> = {}): Promise<any> =>
    job({ copy: { sourceTable: { projectId: 'rr', datasetId: 'd', tableId: src }, destinationTable: { projectId: 'rr', datasetId: 'd', tableId: dst }, ...extra } });
  const policyIds = async (t: string): Promise<string[]> =>
    ((await rest(url(`/datasets/d/tables/${t}/rowAccessPolicies`))).body.rowAccessPolicies ?? []).map((p: any) => p.rowAccessPolicyReference.policyId);
  const count = async (t: string): Promise<string> => (await query(`SELECT COUNT(*) FROM d.${t}`)).rows[0].f[0].v;

  it('a copy job needs the TRUE filter on the source, and the copy carries its policies', async () => {
    await query("CREATE TABLE d.src AS SELECT * FROM UNNEST(['EU', 'EU', 'US']) AS region");
    await query("CREATE ROW ACCESS POLICY us ON d.src GRANT TO ('allUsers') FILTER USING (region = 'US')");

    const refused = await copy('src', 'dst');
    expect(refused.status.errorResult.reason).toBe('accessDenied');
    expect(refused.status.errorResult.message).toMatch(/TRUE filter/);
    expect((await rest(url('/datasets/d/tables/dst'))).status).toBe(404);

    await query("CREATE ROW ACCESS POLICY everyone ON d.src GRANT TO ('allUsers') FILTER USING (TRUE)");
    const done = await copy('src', 'dst');
    expect(done.status.errorResult).toBeUndefined();
    expect(done.statistics.copy.copiedRows).toBe('3');
    expect(await policyIds('dst')).toEqual(['everyone', 'us']);
    const pol = (await rest(url('/datasets/d/tables/dst/rowAccessPolicies/us'))).body;
    expect(pol.rowAccessPolicyReference).toEqual({ projectId: 'rr', datasetId: 'd', tableId: 'dst', policyId: 'us' });
    expect(pol.filterPredicate).toBe("region = 'US'");

    // A snapshot made by a copy job carries them too.
    const snap = await copy('src', 'snap', { operationType: 'SNAPSHOT' });
    expect(snap.status.errorResult).toBeUndefined();
    expect(await policyIds('snap')).toEqual(['everyone', 'us']);
  });

  it('a copy replaces the destination policies unless it appends; an appended name taken twice is invalid', async () => {
    await query("CREATE TABLE d.plain AS SELECT 'EU' AS region");
    await query("CREATE TABLE d.guarded AS SELECT 'US' AS region");
    await query("CREATE ROW ACCESS POLICY mine ON d.guarded GRANT TO ('allUsers') FILTER USING (TRUE)");

    const appended = await copy('plain', 'guarded', { writeDisposition: 'WRITE_APPEND' });
    expect(appended.status.errorResult).toBeUndefined();
    expect(await policyIds('guarded')).toEqual(['mine']);
    expect(await count('guarded')).toBe('2');

    // src holds `everyone` and `us`: appended into dst, which already holds both, they collide.
    const collide = await copy('src', 'dst', { writeDisposition: 'WRITE_APPEND' });
    expect(collide.status.errorResult.reason).toBe('invalid');
    expect(await count('dst')).toBe('3');

    const truncated = await copy('plain', 'guarded', { writeDisposition: 'WRITE_TRUNCATE' });
    expect(truncated.status.errorResult).toBeUndefined();
    expect(await policyIds('guarded')).toEqual([]);
    expect(await count('guarded')).toBe('1');
  });

  // managing-partitioned-tables.md, Copy partitions: a copy with partition decorators (run as DML) takes the same rule.
  it('a partition-decorator copy needs the TRUE filter, carries the policies and refuses a clash; they outlive a restart', async () => {
    const rows = async (t: string): Promise<string[]> => (await query(`SELECT CONCAT(CAST(day AS STRING), ' ', region) FROM d.${t} ORDER BY 1`)).rows?.map((r: any) => r.f[0].v) ?? [];
    await query('CREATE TABLE d.ps (day DATE, region STRING) PARTITION BY day');
    await query("INSERT d.ps VALUES (DATE '2024-01-01', 'EU'), (DATE '2024-01-01', 'US'), (DATE '2024-01-02', 'US')");
    await query('CREATE TABLE d.pd (day DATE, region STRING) PARTITION BY day');
    await query("CREATE ROW ACCESS POLICY us ON d.ps GRANT TO ('allUsers') FILTER USING (region = 'US')");

    // Without the TRUE filter the copy is refused (it used to copy only the US row), and nothing is written.
    const refused = await copy('ps$20240101', 'pd', { writeDisposition: 'WRITE_TRUNCATE' });
    expect(refused.status.errorResult.reason).toBe('accessDenied');
    expect(refused.status.errorResult.message).toMatch(/TRUE filter/);
    expect(await rows('pd')).toEqual([]);
    expect(await policyIds('pd')).toEqual([]);

    await query("CREATE ROW ACCESS POLICY everyone ON d.ps GRANT TO ('allUsers') FILTER USING (TRUE)");
    const done = await copy('ps$20240101', 'pd$20240101', { writeDisposition: 'WRITE_TRUNCATE' });
    expect(done.status.errorResult).toBeUndefined();
    expect((await policyIds('pd')).sort()).toEqual(['everyone', 'us']);
    expect(await rows('pd')).toEqual(['2024-01-01 EU', '2024-01-01 US']);

    // WRITE_APPEND keeps the destination's policies and adds the source's: the same names twice is invalid input.
    const clash = await copy('ps$20240102', 'pd$20240102', { writeDisposition: 'WRITE_APPEND' });
    expect(clash.status.errorResult.reason).toBe('invalid');
    expect(clash.status.errorResult.message).toMatch(/already exists/);
    expect(await rows('pd')).toEqual(['2024-01-01 EU', '2024-01-01 US']);

    await killEngine(emu, 'rr');
    expect((await policyIds('pd')).sort()).toEqual(['everyone', 'us']);
    expect(await rows('pd')).toEqual(['2024-01-01 EU', '2024-01-01 US']);
  });

  it('tabledata.list and the Storage Read API need the TRUE filter; an extract exports the visible rows', async () => {
    await query("CREATE TABLE d.reads AS SELECT * FROM UNNEST(['EU', 'EU', 'US']) AS region");
    await query("CREATE ROW ACCESS POLICY us ON d.reads GRANT TO ('allUsers') FILTER USING (region = 'US')");

    const listed = await rest(url('/datasets/d/tables/reads/data'));
    expect(listed.status).toBe(403);
    expect(listed.body.error.errors[0].reason).toBe('accessDenied');

    const gapic = new v1.BigQueryReadClient({ apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: 'rr' } as unknown as ConstructorParameters<typeof v1.BigQueryReadClient>[0]);
    try {
      const session = gapic.createReadSession({ parent: 'projects/rr', readSession: { table: 'projects/rr/datasets/d/tables/reads', dataFormat: 'AVRO' } });
      await expect(session).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    } finally {
      await gapic.close();
    }

    const out = join(dir, 'reads.json');
    const extract = await job({ extract: { sourceTable: { projectId: 'rr', datasetId: 'd', tableId: 'reads' }, destinationUris: [`file://${out}`], destinationFormat: 'NEWLINE_DELIMITED_JSON' } });
    expect(extract.status.errorResult).toBeUndefined();
    expect(readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l))).toEqual([{ region: 'US' }]);

    // With the TRUE filter every row is listed.
    await query("CREATE ROW ACCESS POLICY all_rows ON d.reads GRANT TO ('allUsers') FILTER USING (TRUE)");
    const all = await rest(url('/datasets/d/tables/reads/data'));
    expect(all.status).toBe(200);
    expect(all.body.totalRows).toBe('3');
  });

  it('rowAccessPolicies.delete and batchDelete keep the last policy unless force', async () => {
    await query("CREATE TABLE d.del AS SELECT 'EU' AS region");
    for (const p of ['a', 'b', 'c']) await query(`CREATE ROW ACCESS POLICY ${p} ON d.del GRANT TO ('allUsers') FILTER USING (TRUE)`);
    const del = (id: string, q = ''): Promise<any> => rest(url(`/datasets/d/tables/del/rowAccessPolicies/${id}${q}`), { method: 'DELETE' });
    const batch = (body: unknown): Promise<any> => rest(url('/datasets/d/tables/del/rowAccessPolicies:batchDelete'), { method: 'POST', json: body });

    expect((await del('a')).status).toBe(204);
    const all = await batch({ policyIds: ['b', 'c'] });
    expect(all.status).toBe(400);
    expect(all.body.error.errors[0].reason).toBe('invalid');
    expect(await policyIds('del')).toEqual(['b', 'c']);
    expect((await batch({ policyIds: ['b', 'nope'] })).status).toBe(404);
    expect(await policyIds('del')).toEqual(['b', 'c']);

    expect((await batch({ policyIds: ['b'] })).status).toBe(200);
    const last = await del('c');
    expect(last.status).toBe(400);
    expect(last.body.error.message).toMatch(/last row access policy c/);
    expect(await policyIds('del')).toEqual(['c']);
    expect((await del('c', '?force=true')).status).toBe(204);
    expect(await policyIds('del')).toEqual([]);

    await query("CREATE ROW ACCESS POLICY x ON d.del GRANT TO ('allUsers') FILTER USING (TRUE)");
    expect((await batch({ policyIds: ['x'], force: true })).status).toBe(200);
    expect(await policyIds('del')).toEqual([]);
  });
});
