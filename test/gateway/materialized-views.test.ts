// Materialized views created through tables.insert answer with their base
// tables' current data; a query job's destinationTable is refused for scripts
// and for statements that are no query, as the real service refuses them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('materialized views and query destinations over HTTP', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } });
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/mvp${p}`;
  const query = async (sql: string): Promise<{ status: number; body: any }> =>
    rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
  const rowsOf = (body: any): string[][] => (body.rows ?? []).map((r: any) => r.f.map((c: any) => c.v));

  it('an MV made by tables.insert answers with the current base table; tabledata.list refuses it', async () => {
    expect((await query("CREATE TABLE d.base (g STRING, n INT64); INSERT d.base VALUES ('a', 1), ('b', 2)")).status).toBe(200);
    const created = await rest(url('/datasets/d/tables'), {
      method: 'POST',
      json: { tableReference: { tableId: 'mv' }, materializedView: { query: 'SELECT g, SUM(n) AS s FROM `mvp.d.base` GROUP BY g' } },
    });
    expect(created.status).toBe(200);
    expect(created.body.type).toBe('MATERIALIZED_VIEW');
    const got = await rest(url('/datasets/d/tables/mv'));
    expect(got.body.materializedView).toMatchObject({ enableRefresh: true, refreshIntervalMs: '1800000' });
    expect(Number(got.body.materializedView.lastRefreshTime)).toBeGreaterThan(0);
    expect(got.body.schema.fields.map((f: any) => [f.name, f.type])).toEqual([['g', 'STRING'], ['s', 'INTEGER']]);

    const first = await query('SELECT g, s FROM d.mv ORDER BY g');
    expect(rowsOf(first.body)).toEqual([['a', '1'], ['b', '2']]);
    await query("INSERT d.base VALUES ('a', 10), ('c', 3)");
    const after = await query('SELECT g, s FROM d.mv ORDER BY g');
    expect(rowsOf(after.body)).toEqual([['a', '11'], ['b', '2'], ['c', '3']]);

    const list = await rest(url('/datasets/d/tables/mv/data'));
    expect(list.status).toBe(400);
    expect(list.body.error.message).toBe('Cannot list a table of type MATERIALIZED_VIEW.');
  });

  it('CREATE and ALTER MATERIALIZED VIEW set the refresh settings tables.get reports; the MV stays current', async () => {
    expect((await query('CREATE TABLE d.b2 (n INT64); INSERT d.b2 VALUES (1)')).status).toBe(200);
    expect((await query('CREATE MATERIALIZED VIEW d.mv2 OPTIONS (refresh_interval_minutes = 60) AS SELECT COUNT(*) AS c FROM d.b2')).status).toBe(200);
    const mv = (await rest(url('/datasets/d/tables/mv2'))).body.materializedView;
    expect(mv).toMatchObject({ enableRefresh: true, refreshIntervalMs: '3600000' });
    expect(Number(mv.lastRefreshTime)).toBeGreaterThan(0);
    expect((await query('ALTER MATERIALIZED VIEW d.mv2 SET OPTIONS (enable_refresh = false)')).status).toBe(200);
    const altered = (await rest(url('/datasets/d/tables/mv2'))).body.materializedView;
    expect(altered).toMatchObject({ enableRefresh: false, refreshIntervalMs: '3600000', lastRefreshTime: mv.lastRefreshTime });
    expect(altered.query).toContain('COUNT(*)');
    await query('INSERT d.b2 VALUES (2), (3)');
    expect(rowsOf((await query('SELECT c FROM d.mv2')).body)).toEqual([['3']]);
  });

  /** Inserts a query job with a destination table and waits for it. */
  const destJob = async (sql: string, tableId: string): Promise<any> => {
    const ins = await rest(url('/jobs'), {
      method: 'POST',
      json: { configuration: { query: { query: sql, useLegacySql: false, destinationTable: { projectId: 'mvp', datasetId: 'd', tableId } } } },
    });
    expect(ins.status).toBe(200);
    for (;;) {
      const j = await rest(url(`/jobs/${ins.body.jobReference.jobId}`));
      if (j.body.status.state === 'DONE') return j.body;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('a destination table is refused for scripts and DDL/DML/ASSERT statements, before they run', async () => {
    const script = await destJob('CREATE TABLE d.s1 (x INT64); SELECT 1 AS x', 'out1');
    expect(script.status.errorResult).toMatchObject({ reason: 'invalid', message: 'configuration.query.destinationTable cannot be set for scripts' });
    const ddl = await destJob('CREATE TABLE d.s2 (x INT64)', 'out2');
    expect(ddl.status.errorResult).toMatchObject({ reason: 'invalidQuery', message: 'Cannot set destination table in jobs with DDL statements' });
    const dml = await destJob("INSERT d.base VALUES ('z', 0)", 'out3');
    expect(dml.status.errorResult).toMatchObject({ reason: 'invalidQuery', message: 'Cannot set destination table in jobs with DML statements' });
    const assert = await destJob('ASSERT TRUE', 'out4');
    expect(assert.status.errorResult.message).toBe('Cannot set destination table in jobs with ASSERT statements');
    // Nothing ran: neither table exists and the INSERT added no row.
    expect((await rest(url('/datasets/d/tables/s1'))).status).toBe(404);
    expect((await rest(url('/datasets/d/tables/s2'))).status).toBe(404);
    expect(rowsOf((await query("SELECT COUNT(*) FROM d.base WHERE g = 'z'")).body)).toEqual([['0']]);

    // A query still writes its rows there.
    const ok = await destJob('SELECT 7 AS x', 'out5');
    expect(ok.status.errorResult).toBeUndefined();
    expect(rowsOf((await rest(url('/datasets/d/tables/out5/data'))).body)).toEqual([['7']]);
    // Temporary functions ahead of one query make no script.
    const udf = await destJob('CREATE TEMP FUNCTION twice(x INT64) AS (x * 2); SELECT twice(21) AS y', 'out6');
    expect(udf.status.errorResult).toBeUndefined();
    expect(rowsOf((await rest(url('/datasets/d/tables/out6/data'))).body)).toEqual([['42']]);
  });
});
