// Routine bodies resolve in the project that contains the routine, whichever project calls it
// (user-defined-functions.md, Default project in SQL expressions; user-defined-aggregates.md, Use the default project
// in the function body; table functions as their sibling SQL functions, table-functions.md being silent;
// data-definition-language.md, Default project in procedure body). Projects p and q both hold d.t, with different
// rows: a routine of p called from q reads p's. And the engine's standalone --dataset is no default of a view's body
// (views-intro.md, Limitations), the check the gateway runs on a view inserted over REST (QueryRequest.view_body).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, tempDir, type InProcessEngine } from './helpers.js';

let n = 0;
const run = (eng: InProcessEngine, projectId: string, query: string, extra: Record<string, unknown> = {}) =>
  eng.client.call<{ rowsJson: string }>('ExecuteQuery', { projectId, jobId: `rb_${n++}`, query, maxResults: 100, ...extra });
const cells = (r: { rowsJson: string }): unknown => (JSON.parse(r.rowsJson) as { f: { v: unknown }[] }[]).map((row) => row.f.map((c) => c.v));

describe('a routine of project p called from project q', () => {
  let eng: InProcessEngine;
  beforeAll(async () => {
    eng = await startInProcess();
    for (const [projectId, a] of [['p', 1], ['q', 2]] as const) {
      await eng.client.call('InsertDataset', { projectId, resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
      await run(eng, projectId, `CREATE TABLE d.t AS SELECT ${a} AS a`);
    }
    await run(eng, 'p', 'CREATE FUNCTION d.f() AS ((SELECT MAX(a) FROM d.t))');
    await run(eng, 'p', 'CREATE TABLE FUNCTION d.tf(k INT64) AS SELECT a * k AS a FROM d.t');
    await run(eng, 'p', 'CREATE AGGREGATE FUNCTION d.agg(x INT64) RETURNS INT64 AS (SUM(x) * (SELECT MAX(a) FROM d.t))');
    await run(eng, 'p', 'CREATE PROCEDURE d.pr() BEGIN SELECT MAX(a) AS m FROM d.t; END');
  });
  afterAll(async () => eng.close());

  it("a SQL function reads its body's dataset.table in p", async () => {
    expect(cells(await run(eng, 'q', 'SELECT p.d.f() AS v, (SELECT MAX(a) FROM d.t) AS own'))).toEqual([['1', '2']]);
  });
  it('a table function reads it in p', async () => {
    expect(cells(await run(eng, 'q', 'SELECT a FROM p.d.tf(10)'))).toEqual([['10']]);
  });
  it('an aggregate function reads it in p', async () => {
    expect(cells(await run(eng, 'q', 'SELECT p.d.agg(x) AS s FROM UNNEST([3, 4]) AS x'))).toEqual([['7']]);
  });
  it('a procedure reads it in p, and the caller reads its own afterwards', async () => {
    expect(cells(await run(eng, 'q', 'CALL p.d.pr()'))).toEqual([['1']]);
    expect(cells(await run(eng, 'q', 'CALL p.d.pr(); SELECT MAX(a) AS m FROM d.t'))).toEqual([['2']]);
  });
  it('a table function reading a table of another location fails at the call (set bd, moved from unseen-bd-routines)', async () => {
    // table-functions.md, Limitations: a table function is stored in the same location as the tables it reads. (The
    // sqltest harness runs no job location, so this case of test/sql/unseen-bd-routines.sqltest lives here.)
    await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'eu' }, location: 'EU' }) });
    await run(eng, 'p', 'CREATE TABLE eu.t AS SELECT 1 AS x');
    await run(eng, 'p', 'CREATE TABLE FUNCTION d.read_eu() AS SELECT x FROM eu.t');
    const e = await eng.client.error('ExecuteQuery', { projectId: 'p', jobId: `rb_${n++}`, query: 'SELECT x FROM d.read_eu()', maxResults: 100 });
    expect(e.code).toBe(404);
    expect(e.message).toContain('was not found in location US');
  });

  it("a view of q calling p's function: the function's body still reads p", async () => {
    await run(eng, 'q', 'CREATE VIEW d.v AS SELECT p.d.f() AS fv');
    expect(cells(await run(eng, 'q', 'SELECT fv FROM d.v'))).toEqual([['1']]);
  });
});

describe("the engine's standalone --dataset", () => {
  let eng: InProcessEngine;
  beforeAll(async () => {
    eng = await startInProcess(tempDir(), { defaultDataset: 'd', defaultProject: 'p' });
    await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
    await run(eng, 'p', 'CREATE TABLE d.t AS SELECT 5 AS a');
    await run(eng, 'p', 'CREATE FUNCTION d.plus_one(x INT64) AS (x + 1)');
  });
  afterAll(async () => eng.close());

  it('is the default of a query', async () => {
    expect(cells(await run(eng, 'p', 'SELECT plus_one(a) AS a FROM t'))).toEqual([['6']]);
  });
  it("is no default of a view's body checked as one (dry run, view_body): bare table and function names are refused", async () => {
    for (const [query, message] of [
      ['SELECT a FROM t', 'Table "t" must be qualified with a dataset'],
      ['SELECT plus_one(a) AS a FROM d.t', 'Function not found: plus_one'],
    ]) {
      const e = await eng.client.error('ExecuteQuery', { projectId: 'p', jobId: `rb_${n++}`, query, maxResults: -1, dryRun: true, viewBody: true });
      expect([e.code, e.reason]).toEqual([400, 'invalidQuery']);
      expect(e.message).toContain(message);
    }
    // The same text without view_body is a query: the engine's --dataset applies (no plan of it is reused above).
    await run(eng, 'p', 'SELECT a FROM t', { dryRun: true, maxResults: -1 });
    await eng.client.call('ExecuteQuery', { projectId: 'p', jobId: `rb_${n++}`, query: 'SELECT a FROM d.t', maxResults: -1, dryRun: true, viewBody: true });
  });
  it('is no default of a CREATE VIEW body', async () => {
    const e = await eng.client.error('ExecuteQuery', { projectId: 'p', jobId: `rb_${n++}`, query: 'CREATE VIEW d.v AS SELECT a FROM t', maxResults: 100 });
    expect(e.message).toContain('Table "t" must be qualified with a dataset');
  });
});
