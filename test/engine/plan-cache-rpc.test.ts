// The plan cache behind ExecuteQuery (src/engine/query.ts): repeated queries
// see changes made through the other RPCs (tables.update/patch, delete and
// re-insert, datasets.patch, routines) exactly as the first run of a new
// text would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planCacheHits } from '../../src/engine/plan-cache.js';
import { startInProcess, type InProcessEngine } from './helpers.js';

let eng: InProcessEngine;
beforeAll(async () => {
  eng = await startInProcess();
  await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
  await q('CREATE TABLE d.t AS SELECT 1 AS a');
});
afterAll(async () => {
  await eng.close();
});

interface Reply {
  schemaJson: string;
  rowsJson: string;
}

let n = 0;
const q = (query: string) => eng.client.call<Reply>('ExecuteQuery', { projectId: 'p', jobId: `job_${n++}`, query, maxResults: 100 });
const rows = async (query: string): Promise<unknown> => JSON.parse((await q(query)).rowsJson);
const names = async (query: string): Promise<string[]> => (JSON.parse((await q(query)).schemaJson) as { fields: { name: string }[] }).fields.map((f) => f.name);
const error = async (query: string): Promise<string> => (await eng.client.error('ExecuteQuery', { projectId: 'p', jobId: `job_${n++}`, query, maxResults: 100 })).message;
const table = (t: string, resource: object, patch: boolean) =>
  eng.client.call('UpdateTable', { projectId: 'p', datasetId: 'd', tableId: t, resourceJson: JSON.stringify(resource), options: patch ? { patch: 'true' } : {} });

describe('plan cache behind ExecuteQuery', () => {
  it('follows a schema added by tables.patch and a table deleted and re-created by REST', async () => {
    const sql = 'SELECT * FROM d.t';
    const hits = planCacheHits();
    for (let i = 0; i < 3; i++) expect(await names(sql)).toEqual(['a']);
    expect(planCacheHits() - hits).toBe(2); // the second and third run came from the plan
    await table('t', { schema: { fields: [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'STRING' }] } }, true);
    expect(await names(sql)).toEqual(['a', 'b']);
    expect(await rows(sql)).toEqual([{ f: [{ v: '1' }, { v: null }] }]);
    await eng.client.call('DeleteTable', { projectId: 'p', datasetId: 'd', tableId: 't' });
    expect(await error(sql)).toMatch(/Not found: Table p:d\.t/);
    await eng.client.call('InsertTable', { projectId: 'p', datasetId: 'd', resourceJson: JSON.stringify({ tableReference: { tableId: 't' }, schema: { fields: [{ name: 'z', type: 'BOOLEAN' }] } }) });
    expect(await names(sql)).toEqual(['z']);
    expect(await rows(sql)).toEqual([]);
  });

  it('follows requirePartitionFilter set by tables.patch', async () => {
    await q('CREATE TABLE d.pt (day DATE, n INT64) PARTITION BY day');
    const sql = 'SELECT COUNT(*) AS c FROM d.pt';
    const hits = planCacheHits();
    for (let i = 0; i < 3; i++) expect(await rows(sql)).toEqual([{ f: [{ v: '0' }] }]);
    expect(planCacheHits() - hits).toBe(2);
    await table('pt', { requirePartitionFilter: true }, true);
    expect(await error(sql)).toMatch(/without a filter over column\(s\) 'day'/);
    await table('pt', { requirePartitionFilter: false }, true);
    expect(await rows(sql)).toEqual([{ f: [{ v: '0' }] }]);
  });

  it('follows a routine replaced through PutChild', async () => {
    await q('CREATE FUNCTION d.f(x INT64) AS (x + 1)');
    const sql = 'SELECT d.f(1) AS v';
    const hits = planCacheHits();
    for (let i = 0; i < 3; i++) expect(await rows(sql)).toEqual([{ f: [{ v: '2' }] }]);
    expect(planCacheHits() - hits).toBe(2);
    const routine = {
      routineReference: { projectId: 'p', datasetId: 'd', routineId: 'f' },
      routineType: 'SCALAR_FUNCTION',
      language: 'SQL',
      arguments: [{ name: 'x', dataType: { typeKind: 'INT64' } }],
      definitionBody: 'x * 100',
    };
    await eng.client.call('PutChild', { projectId: 'p', datasetId: 'd', kind: 'routines', childId: 'f', resourceJson: JSON.stringify(routine) });
    expect(await rows(sql)).toEqual([{ f: [{ v: '100' }] }]);
    await eng.client.call('DeleteChild', { projectId: 'p', datasetId: 'd', kind: 'routines', childId: 'f' });
    expect(await error(sql)).toMatch(/Function not found: d\.f/);
  });

  it('follows a dataset made case-insensitive by datasets.patch', async () => {
    await q('CREATE TABLE d.Mixed AS SELECT 7 AS v');
    const sql = 'SELECT v FROM d.mixed';
    const before = await error(sql);
    for (let i = 0; i < 2; i++) expect(await error(sql)).toBe(before);
    await eng.client.call('UpdateDataset', { projectId: 'p', datasetId: 'd', resourceJson: JSON.stringify({ isCaseInsensitive: true }), options: { patch: 'true' } });
    for (let i = 0; i < 3; i++) expect(await rows(sql)).toEqual([{ f: [{ v: '7' }] }]);
  });
});
