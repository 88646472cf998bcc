// INFORMATION_SCHEMA.JOBS as a query reads a finished script (issue 16, set ab): the parent job's row (a SCRIPT
// statement, DONE, no error, no parent), its children (parent_job_id, statement_type, query text, the error_result of
// a statement that failed inside an EXCEPTION block), and JOBS_BY_PROJECT, which the JOBS page calls a synonym of JOBS.
// Over HTTP against the real engine: the job registry that fills the view lives in the gateway.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('INFORMATION_SCHEMA.JOBS of a finished script', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/jc${p}`;
  const query = async (sql: string): Promise<{ status: number; body: any }> =>
    rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
  const rowsOf = (body: any): (string | null)[][] => (body.rows ?? []).map((r: any) => r.f.map((c: any) => c.v));

  it('the parent row, its children, a handled failure and JOBS_BY_PROJECT', async () => {
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } });
    expect((await query('CREATE TABLE d.t (x INT64)')).status).toBe(200);
    const script = "BEGIN\n  SELECT ERROR('inner failure');\nEXCEPTION WHEN ERROR THEN\n  SELECT 'handled' AS h;\nEND;\nINSERT d.t VALUES (7);\nSELECT COUNT(*) AS n FROM d.t;";
    const q = await query(script);
    expect(q.status).toBe(200);
    expect(rowsOf(q.body)).toEqual([['1']]);
    const parentId: string = q.body.jobReference.jobId;

    const parent = await query(
      `SELECT statement_type, job_type, state, error_result IS NULL, parent_job_id IS NULL, query FROM \`region-us\`.INFORMATION_SCHEMA.JOBS WHERE job_id = '${parentId}'`,
    );
    expect(parent.status).toBe(200);
    expect(rowsOf(parent.body)).toEqual([['SCRIPT', 'QUERY', 'DONE', 'true', 'true', script]]);

    const kids = await query(
      `SELECT statement_type, query, error_result.reason, STRPOS(error_result.message, 'inner failure') > 0 FROM \`region-us\`.INFORMATION_SCHEMA.JOBS WHERE parent_job_id = '${parentId}' ORDER BY job_id`,
    );
    expect(kids.status).toBe(200);
    const rows = rowsOf(kids.body);
    // One child per statement that ran, in order: the failed SELECT, the handler's SELECT, the INSERT, the last SELECT.
    expect(rows.map((r) => r[0])).toEqual(['SELECT', 'SELECT', 'INSERT', 'SELECT']);
    expect(rows[0]).toEqual(['SELECT', "SELECT ERROR('inner failure')", 'invalidQuery', 'true']);
    expect(rows[1]).toEqual(['SELECT', "SELECT 'handled' AS h", null, null]);
    expect(rows[2]).toEqual(['INSERT', 'INSERT d.t VALUES (7)', null, null]);

    const byProject = await query(`SELECT COUNT(*) FROM \`region-us\`.INFORMATION_SCHEMA.JOBS_BY_PROJECT WHERE parent_job_id = '${parentId}' OR job_id = '${parentId}'`);
    expect(rowsOf(byProject.body)).toEqual([['5']]);
  });
});
