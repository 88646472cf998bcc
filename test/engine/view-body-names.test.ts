// A view stored with a bare name in its body (as tables.insert over the engine RPC takes it unchecked, and as an
// earlier version of the emulator resolved such bodies against the view's dataset): views-intro.md, Limitations,
// gives a view body no default dataset, so querying that view fails as a bad query (400 invalidQuery), with the
// request's default dataset as without one, and the engine keeps serving.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessEngine } from './helpers.js';

let eng: InProcessEngine;
let n = 0;
const q = (query: string, defaultDataset?: string) =>
  eng.client.call<{ rowsJson: string }>('ExecuteQuery', { projectId: 'p', jobId: `vb_${n++}`, query, maxResults: 100, ...(defaultDataset ? { defaultDataset: { projectId: 'p', datasetId: defaultDataset } } : {}) });
const error = (query: string, defaultDataset?: string) =>
  eng.client.error('ExecuteQuery', { projectId: 'p', jobId: `vb_${n++}`, query, maxResults: 100, ...(defaultDataset ? { defaultDataset: { projectId: 'p', datasetId: defaultDataset } } : {}) });

beforeAll(async () => {
  eng = await startInProcess();
  await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
  await q('CREATE TABLE d.t AS SELECT 1 AS a');
  const view = (tableId: string, query: string) =>
    eng.client.call('InsertTable', { projectId: 'p', datasetId: 'd', resourceJson: JSON.stringify({ tableReference: { tableId }, view: { query } }) });
  await view('bare_v', 'SELECT a FROM t');
  await view('qualified_v', 'SELECT a FROM d.t');
});
afterAll(async () => {
  await eng.close();
});

describe('a stored view body with a bare name', () => {
  it('fails when queried, with or without a default dataset, and the engine keeps answering', async () => {
    for (const dd of [undefined, 'd']) {
      const e = await error('SELECT a FROM d.bare_v', dd);
      expect([e.code, e.reason]).toEqual([400, 'invalidQuery']);
      expect(e.message).toContain('Table "t" must be qualified with a dataset');
    }
    expect(JSON.parse((await q('SELECT a FROM d.qualified_v', 'd')).rowsJson)).toEqual([{ f: [{ v: '1' }] }]);
  });

  it("reads its dataset-qualified names in the view's own project when queried from another project", async () => {
    // data-definition-language.md, Default project in view body: the view's project, whoever queries it.
    const r = await eng.client.call<{ rowsJson: string }>('ExecuteQuery', { projectId: 'q', jobId: `vb_${n++}`, query: 'SELECT a FROM p.d.qualified_v', maxResults: 100 });
    expect(JSON.parse(r.rowsJson)).toEqual([{ f: [{ v: '1' }] }]);
  });
});
