// getQueryResults of a query job whose destination table has row access policies: the service answers from the
// job's result, not the table, so the user who ran the query pages through all of its rows, while tabledata.list of
// the table still needs the TRUE filter (using-row-level-security-with-features.md, Tabledata.list). The pages read
// the same after the engine restarts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, killEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('getQueryResults of a destination with row access policies', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    expect((await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
  });
  afterAll(async () => {
    await emu?.stop();
  });
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/qr${p}`;
  const query = async (sql: string): Promise<any> => {
    const r = await rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  /** Every row of the job's result through getQueryResults, `max` a page. */
  const pages = async (jobId: string, max: number): Promise<unknown[]> => {
    const out: unknown[] = [];
    let token: string | undefined;
    let calls = 0;
    do {
      const r = await rest(url(`/queries/${jobId}?maxResults=${max}${token ? `&pageToken=${token}` : ''}`));
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.totalRows).toBe('5');
      out.push(...(r.body.rows ?? []).map((x: { f: { v: unknown }[] }) => x.f.map((c) => c.v)));
      token = r.body.pageToken;
      calls++;
    } while (token);
    expect(calls).toBeGreaterThan(1);
    return out;
  };

  it('pages through the job result; tabledata.list of the table is still refused', async () => {
    await query('CREATE TABLE d.dest (n INT64, region STRING)');
    await query("CREATE ROW ACCESS POLICY us ON d.dest GRANT TO ('allUsers') FILTER USING (region = 'US')");
    const ins = await rest(url('/jobs'), {
      method: 'POST',
      json: {
        configuration: {
          query: {
            query: "SELECT n, IF(MOD(n, 2) = 0, 'US', 'EU') AS region FROM UNNEST(GENERATE_ARRAY(1, 5)) AS n ORDER BY n",
            useLegacySql: false,
            destinationTable: { projectId: 'qr', datasetId: 'd', tableId: 'dest' },
            writeDisposition: 'WRITE_APPEND',
          },
        },
      },
    });
    expect(ins.status, JSON.stringify(ins.body)).toBe(200);
    const jobId = ins.body.jobReference.jobId;
    const want = [1, 2, 3, 4, 5].map((n) => [String(n), n % 2 === 0 ? 'US' : 'EU']);
    expect(await pages(jobId, 2)).toEqual(want);
    // The policies still filter what the user reads of the table itself.
    const list = await rest(url('/datasets/d/tables/dest/data'));
    expect(list.status).toBe(403);
    expect(list.body.error.errors[0].reason).toBe('accessDenied');
    expect((await query('SELECT n FROM d.dest ORDER BY n')).rows.map((r: any) => r.f[0].v)).toEqual(['2', '4']);
    await killEngine(emu, 'qr');
    expect(await pages(jobId, 3)).toEqual(want);
  });
});
