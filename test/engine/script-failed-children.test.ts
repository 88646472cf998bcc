// A script's failed child job keeps the type of the statement that failed
// (the real service types it like a child that ran: SELECT, INSERT, ...),
// both inside an EXCEPTION handler's block and when the failure ends the
// script. Over HTTP against the real engine.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('failed script child jobs are typed', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } });
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/fc${p}`;
  const query = (sql: string): Promise<{ status: number; body: any }> => rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
  const child = async (parentId: string, i: number): Promise<any> => (await rest(url(`/jobs/script_job_${parentId}_${i}`))).body;

  it('inside EXCEPTION blocks: each failed statement is a failed child with its statement type', async () => {
    const failing = [
      ['SELECT ERROR(\'boom\')', 'SELECT'],
      ['INSERT d.missing (x) VALUES (1)', 'INSERT'],
      ['UPDATE d.missing SET x = 1 WHERE TRUE', 'UPDATE'],
      ['DELETE FROM d.missing WHERE TRUE', 'DELETE'],
      ['MERGE d.missing t USING (SELECT 1 AS x) s ON t.x = s.x WHEN MATCHED THEN DELETE', 'MERGE'],
      ['CREATE TABLE d.c AS SELECT ERROR(\'no\') AS x', 'CREATE_TABLE_AS_SELECT'],
      ['DROP TABLE d.missing', 'DROP_TABLE'],
      ['DROP VIEW d.missing', 'DROP_VIEW'],
      ['TRUNCATE TABLE d.missing', 'TRUNCATE_TABLE'],
      ['ALTER TABLE d.missing ADD COLUMN y INT64', 'ALTER_TABLE'],
      ['ASSERT FALSE AS \'nope\'', 'ASSERT'],
    ] as const;
    const sql = failing.map(([s]) => `BEGIN\n  ${s};\nEXCEPTION WHEN ERROR THEN\n  SELECT 1;\nEND;`).join('\n');
    const q = await query(sql);
    expect(q.status, JSON.stringify(q.body)).toBe(200);
    const parentId: string = q.body.jobReference.jobId;
    // Children alternate: the failed statement, then the handler's SELECT.
    for (const [i, [text, type]] of failing.entries()) {
      const failed = await child(parentId, 2 * i);
      expect(failed.configuration.query.query).toBe(text);
      expect(failed.status.errorResult, text).toBeDefined();
      expect(failed.statistics.query.statementType, text).toBe(type);
      const handler = await child(parentId, 2 * i + 1);
      expect(handler.status).toEqual({ state: 'DONE' });
      expect(handler.statistics.query.statementType).toBe('SELECT');
    }
  });

  it('a failure that ends the script: the failed child is typed, the script job fails', async () => {
    const q = await query('CREATE TABLE d.t (x INT64);\nINSERT d.t VALUES (1);\nINSERT d.t (nope) VALUES (2);\nSELECT 1;');
    expect(q.status).toBe(400);
    const jobs = (await rest(url('/jobs?stateFilter=done'))).body.jobs as any[];
    const parent = jobs.find((j) => j.errorResult && String(j.errorResult.message).includes('nope'));
    expect(parent).toBeDefined();
    const parentId: string = parent.jobReference.jobId;
    const types = await Promise.all([0, 1, 2].map(async (i) => (await child(parentId, i)).statistics.query.statementType));
    expect(types).toEqual(['CREATE_TABLE', 'INSERT', 'INSERT']);
    const failed = await child(parentId, 2);
    expect(failed.status.errorResult.message).toContain('nope');
    expect((await rest(url(`/jobs/${parentId}`))).body.statistics.query.statementType).toBe('SCRIPT');
  });

  it('a dry run of a DDL statement reports the same types', async () => {
    const dry = async (sql: string): Promise<string> =>
      (await rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, dryRun: true } })).body.statistics?.query?.statementType ??
      (await rest(url('/jobs'), { method: 'POST', json: { configuration: { dryRun: true, query: { query: sql, useLegacySql: false } } } })).body.statistics.query.statementType;
    expect(await dry('DROP VIEW d.v')).toBe('DROP_VIEW');
    expect(await dry('ALTER SCHEMA d SET OPTIONS (description = "x")')).toBe('ALTER_SCHEMA');
    expect(await dry('CREATE TABLE d.n AS SELECT 1 AS x')).toBe('CREATE_TABLE_AS_SELECT');
  });
});
