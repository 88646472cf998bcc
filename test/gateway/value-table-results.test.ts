// The shape of a value-table query result through REST: SELECT AS STRUCT / AS VALUE STRUCT(...) as the whole
// query returns the STRUCT's fields as the result's columns (schema and rows of jobs.query, and the destination
// table's schema), and a FROM item with two PIVOT operators is a 400 invalidQuery, never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('value-table results over REST', () => {
  let emu: Emulator;
  let base: string;
  beforeAll(async () => {
    emu = await startEmulator();
    base = `${emu.url}/bigquery/v2/projects/p`;
  }, 60_000);
  afterAll(async () => emu?.stop());

  for (const sql of ["SELECT AS STRUCT 1 AS a, 'x' AS b", "SELECT AS VALUE STRUCT(1 AS a, 'x' AS b)"]) {
    it(`${sql}: the fields are the columns`, async () => {
      const q = await rest(`${base}/queries`, { method: 'POST', json: { query: sql, useLegacySql: false } });
      expect(q.status, JSON.stringify(q.body)).toBe(200);
      expect(q.body.schema.fields.map((f: { name: string; type: string }) => [f.name, f.type])).toEqual([
        ['a', 'INTEGER'],
        ['b', 'STRING'],
      ]);
      expect(q.body.rows).toEqual([{ f: [{ v: '1' }, { v: 'x' }] }]);
      const dest = (await rest(`${base}/jobs/${q.body.jobReference.jobId}`)).body.configuration.query.destinationTable;
      const t = await rest(`${base}/datasets/${dest.datasetId}/tables/${dest.tableId}`);
      expect(t.body.schema.fields.map((f: { name: string }) => f.name)).toEqual(['a', 'b']);
    });
  }

  it('two PIVOT operators on one FROM item are a 400 invalidQuery', async () => {
    const sql = "WITH s AS (SELECT 'a' AS p, 'q1' AS q, 10 AS v) SELECT * FROM s PIVOT(SUM(v) FOR q IN ('q1')) PIVOT(SUM(q1) FOR p IN ('a'))";
    const q = await rest(`${base}/queries`, { method: 'POST', json: { query: sql, useLegacySql: false } });
    expect(q.status).toBe(400);
    expect(q.body.error.errors[0].reason).toBe('invalidQuery');
    expect(q.body.error.message).toContain('Syntax error');
  });
});
