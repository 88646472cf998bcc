// gRPC-level dataset / table / child semantics.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessEngine } from './helpers.js';

let eng: InProcessEngine;
beforeAll(async () => {
  eng = await startInProcess();
});
afterAll(async () => {
  await eng.close();
});

const ds = (projectId: string, datasetId: string, body: Record<string, unknown> = {}, options: Record<string, string> = {}) => ({
  projectId,
  datasetId,
  resourceJson: JSON.stringify(body),
  options,
});

describe('datasets', () => {
  it('inserts with the project from the URL and stamps the resource', async () => {
    const r = await eng.client.resource('InsertDataset', ds('p1', '', { datasetReference: { datasetId: 'd1' }, labels: { env: 'dev' } }));
    expect(r.id).toBe('p1:d1');
    expect(r.datasetReference).toEqual({ datasetId: 'd1', projectId: 'p1' });
    expect(r.location).toBe('US');
    expect(typeof r.creationTime).toBe('string');
    expect(r.creationTime).toBe(r.lastModifiedTime);
    expect(typeof r.etag).toBe('string');
    expect(Array.isArray(r.access)).toBe(true);
    const g = await eng.client.resource('GetDataset', ds('p1', 'd1'));
    expect(g).toEqual(r);
  });

  it('409 on duplicate, 404 on missing', async () => {
    const e = await eng.client.error('InsertDataset', ds('p1', '', { datasetReference: { datasetId: 'd1' } }));
    expect(e).toMatchObject({ code: 409, status: 'alreadyExists', reason: 'duplicate', message: 'Already Exists: Dataset p1:d1' });
    const n = await eng.client.error('GetDataset', ds('p1', 'nope'));
    expect(n).toMatchObject({ code: 404, status: 'notFound', reason: 'notFound', message: 'Not found: Dataset p1:nope' });
  });

  it('rejects ids that could escape the data dir', async () => {
    for (const bad of ['..', 'a/b', 'a\\b', 'a\u0000b', 'a.b']) {
      const e = await eng.client.error('InsertDataset', ds('p1', '', { datasetReference: { datasetId: bad } }));
      expect(e.code).toBe(400);
    }
    const e = await eng.client.error('InsertDataset', ds('../x', '', { datasetReference: { datasetId: 'ok' } }));
    expect(e.code).toBe(400);
  });

  it('patch merges, update replaces, lastModifiedTime advances', async () => {
    const before = await eng.client.resource('GetDataset', ds('p1', 'd1'));
    const p = await eng.client.resource('UpdateDataset', ds('p1', 'd1', { description: 'x', labels: { team: 'a' } }, { patch: 'true' }));
    expect(p.description).toBe('x');
    expect(p.labels).toEqual({ env: 'dev', team: 'a' });
    expect(p.creationTime).toBe(before.creationTime);
    expect(Number(p.lastModifiedTime)).toBeGreaterThan(Number(before.lastModifiedTime));
    expect(p.etag).not.toBe(before.etag);
    const u = await eng.client.resource('UpdateDataset', ds('p1', 'd1', { friendlyName: 'F' }));
    expect(u.friendlyName).toBe('F');
    expect(u.description).toBeUndefined();
    expect(u.labels).toBeUndefined();
    expect(u.id).toBe('p1:d1');
    expect(Number(u.lastModifiedTime)).toBeGreaterThan(Number(p.lastModifiedTime));
  });

  it('lists with pagination, label filter and hidden datasets', async () => {
    for (const d of ['la', 'lb', 'lc', '_hidden']) {
      await eng.client.resource('InsertDataset', ds('p2', '', { datasetReference: { datasetId: d }, labels: d === 'lb' ? { k: 'v' } : {} }));
    }
    const page1 = await eng.client.call<{ itemsJson: string[]; nextPageToken: string }>('ListDatasets', { projectId: 'p2', maxResults: 2 });
    expect(page1.itemsJson.map((i) => JSON.parse(i).datasetReference.datasetId)).toEqual(['la', 'lb']);
    const page2 = await eng.client.call<{ itemsJson: string[]; nextPageToken: string }>('ListDatasets', { projectId: 'p2', maxResults: 2, pageToken: page1.nextPageToken });
    expect(page2.itemsJson.map((i) => JSON.parse(i).datasetReference.datasetId)).toEqual(['lc']);
    expect(page2.nextPageToken).toBe('');
    const f = await eng.client.call<{ itemsJson: string[] }>('ListDatasets', { projectId: 'p2', filter: 'labels.k:v' });
    expect(f.itemsJson.map((i) => JSON.parse(i).id)).toEqual(['p2:lb']);
    const all = await eng.client.call<{ itemsJson: string[] }>('ListDatasets', { projectId: 'p2', all: true });
    expect(all.itemsJson).toHaveLength(4);
  });

  it('501 for externalDatasetReference', async () => {
    const e = await eng.client.error('InsertDataset', ds('p1', '', { datasetReference: { datasetId: 'ext' }, externalDatasetReference: { externalSource: 'x' } }));
    expect(e).toMatchObject({ code: 501, reason: 'notImplemented' });
  });

  it('delete needs deleteContents when non-empty; undelete restores tables, rows, children', async () => {
    await eng.client.resource('InsertDataset', ds('p3', '', { datasetReference: { datasetId: 'dd' }, description: 'keep me' }));
    await eng.client.resource('InsertTable', {
      projectId: 'p3',
      datasetId: 'dd',
      resourceJson: JSON.stringify({ tableReference: { tableId: 't' }, schema: { fields: [{ name: 'x', type: 'INT64' }] } }),
    });
    await eng.client.call('InsertRows', { table: { projectId: 'p3', datasetId: 'dd', tableId: 't' }, rowsJson: JSON.stringify([{ json: { x: 1 } }, { json: { x: 2 } }]) });
    await eng.client.resource('PutChild', { projectId: 'p3', datasetId: 'dd', kind: 'routines', childId: 'r1', resourceJson: JSON.stringify({ routineType: 'SCALAR_FUNCTION' }) });
    const e = await eng.client.error('DeleteDataset', ds('p3', 'dd'));
    expect(e).toMatchObject({ code: 400, status: 'failedPrecondition', reason: 'resourceInUse', message: 'Dataset p3:dd is still in use' });
    await eng.client.call('DeleteDataset', ds('p3', 'dd', {}, { deleteContents: 'true' }));
    expect((await eng.client.error('GetDataset', ds('p3', 'dd'))).code).toBe(404);
    const u = await eng.client.resource('UndeleteDataset', ds('p3', 'dd'));
    expect(u.description).toBe('keep me');
    const t = await eng.client.resource('GetTable', { projectId: 'p3', datasetId: 'dd', tableId: 't' });
    expect(t.numRows).toBe('2');
    const r = await eng.client.resource('GetChild', { projectId: 'p3', datasetId: 'dd', kind: 'routines', childId: 'r1' });
    expect(r.routineType).toBe('SCALAR_FUNCTION');
    const again = await eng.client.error('UndeleteDataset', ds('p3', 'dd'));
    expect(again).toMatchObject({ code: 409, status: 'alreadyExists' });
    expect((await eng.client.error('UndeleteDataset', ds('p3', 'never'))).code).toBe(404);
  });

  it('empty dataset deletes without deleteContents', async () => {
    await eng.client.resource('InsertDataset', ds('p3', '', { datasetReference: { datasetId: 'empty' } }));
    await eng.client.call('DeleteDataset', ds('p3', 'empty'));
    expect((await eng.client.error('GetDataset', ds('p3', 'empty'))).code).toBe(404);
  });
});

const tb = (tableId: string, body: Record<string, unknown> = {}, options: Record<string, string> = {}) => ({
  projectId: 'p1',
  datasetId: 'd1',
  tableId,
  resourceJson: JSON.stringify(body),
  options,
});

describe('tables', () => {
  const allTypes = [
    { name: 'i', type: 'INT64' },
    { name: 'f', type: 'FLOAT64', mode: 'REQUIRED' },
    { name: 'n', type: 'NUMERIC' },
    { name: 'bn', type: 'BIGNUMERIC' },
    { name: 'b', type: 'BOOL' },
    { name: 's', type: 'STRING', mode: 'nullable' },
    { name: 'y', type: 'BYTES' },
    { name: 'd', type: 'DATE' },
    { name: 't', type: 'TIME' },
    { name: 'dt', type: 'DATETIME' },
    { name: 'ts', type: 'TIMESTAMP' },
    { name: 'iv', type: 'INTERVAL' },
    { name: 'j', type: 'JSON' },
    { name: 'g', type: 'GEOGRAPHY' },
    { name: 'r', type: 'RANGE', rangeElementType: { type: 'DATE' } },
    { name: 'st', type: 'STRUCT', fields: [{ name: 'a', type: 'INTEGER' }, { name: 'arr', type: 'STRING', mode: 'REPEATED' }] },
    { name: 'rep', type: 'INTEGER', mode: 'REPEATED' },
  ];

  it('echoes schemas with legacy names; a mode only where one was sent (as the service)', async () => {
    const r = await eng.client.resource('InsertTable', tb('', { tableReference: { tableId: 'all' }, schema: { fields: allTypes }, description: 'd' }));
    const fields = (r.schema as { fields: { name: string; type: string; mode: string; fields?: unknown[] }[] }).fields;
    expect(fields.map((f) => f.type)).toEqual([
      'INTEGER', 'FLOAT', 'NUMERIC', 'BIGNUMERIC', 'BOOLEAN', 'STRING', 'BYTES', 'DATE', 'TIME', 'DATETIME', 'TIMESTAMP', 'INTERVAL', 'JSON', 'GEOGRAPHY', 'RANGE', 'RECORD', 'INTEGER',
    ]);
    expect(fields.map((f) => f.mode)).toEqual([undefined, 'REQUIRED', undefined, undefined, undefined, 'NULLABLE', ...Array(10).fill(undefined), 'REPEATED']);
    expect(fields[15]!.fields).toEqual([{ name: 'a', type: 'INTEGER' }, { name: 'arr', type: 'STRING', mode: 'REPEATED' }]);
    expect(r).toMatchObject({ id: 'p1:d1.all', type: 'TABLE', numRows: '0', numBytes: '0', location: 'US', description: 'd' });
    expect(r.tableReference).toEqual({ projectId: 'p1', datasetId: 'd1', tableId: 'all' });
  });

  it('views, materialized views, external tables', async () => {
    const v = await eng.client.resource('InsertTable', tb('', { tableReference: { tableId: 'v' }, view: { query: 'SELECT 1 AS x' } }));
    expect(v.type).toBe('VIEW');
    expect(v.view).toEqual({ query: 'SELECT 1 AS x', useLegacySql: false });
    const mv = await eng.client.resource('InsertTable', tb('', { tableReference: { tableId: 'mv' }, materializedView: { query: 'SELECT 2 AS y' } }));
    expect(mv.type).toBe('MATERIALIZED_VIEW');
    const ext = { sourceUris: ['gs://b/x.csv'], sourceFormat: 'CSV', csvOptions: { skipLeadingRows: '1' } };
    const e = await eng.client.resource('InsertTable', tb('', { tableReference: { tableId: 'ext' }, externalDataConfiguration: ext }));
    expect(e.type).toBe('EXTERNAL');
    expect(e.externalDataConfiguration).toEqual(ext);
    const l = await eng.client.call<{ itemsJson: string[] }>('ListTables', { projectId: 'p1', datasetId: 'd1' });
    const items = l.itemsJson.map((i) => JSON.parse(i));
    expect(items.find((i) => i.tableReference.tableId === 'v').type).toBe('VIEW');
    expect(items.find((i) => i.tableReference.tableId === 'mv').type).toBe('MATERIALIZED_VIEW');
    const x = await eng.client.error('InsertTable', tb('', { tableReference: { tableId: 'bl' }, biglakeConfiguration: {} }));
    expect(x.code).toBe(501);
  });

  it('404 / 409 wording', async () => {
    expect(await eng.client.error('GetTable', tb('missing'))).toMatchObject({ code: 404, message: 'Not found: Table p1:d1.missing' });
    expect(await eng.client.error('InsertTable', tb('', { tableReference: { tableId: 'all' } }))).toMatchObject({
      code: 409,
      message: 'Already Exists: Table p1:d1.all',
    });
    expect(await eng.client.error('InsertTable', { projectId: 'p1', datasetId: 'nods', resourceJson: JSON.stringify({ tableReference: { tableId: 'x' } }) })).toMatchObject({
      code: 404,
      message: 'Not found: Dataset p1:nods',
    });
  });

  it('patch adds columns and relaxes modes; rejects drops and type changes', async () => {
    await eng.client.resource('InsertTable', tb('', { tableReference: { tableId: 'evo' }, schema: { fields: [{ name: 'a', type: 'STRING', mode: 'REQUIRED' }] } }));
    await eng.client.call('InsertRows', { table: { projectId: 'p1', datasetId: 'd1', tableId: 'evo' }, rowsJson: JSON.stringify([{ json: { a: 'x' } }]) });
    const p = await eng.client.resource('UpdateTable', tb('evo', { schema: { fields: [{ name: 'a', type: 'STRING' }, { name: 'b', type: 'INT64' }] } }, { patch: 'true' }));
    expect((p.schema as { fields: unknown[] }).fields).toEqual([{ name: 'a', type: 'STRING' }, { name: 'b', type: 'INTEGER' }]);
    await eng.client.call('InsertRows', { table: { projectId: 'p1', datasetId: 'd1', tableId: 'evo' }, rowsJson: JSON.stringify([{ json: { b: 5 } }]) });
    const rows = await eng.client.call<{ rowsJson: string; totalRows: number }>('ListRows', { table: { projectId: 'p1', datasetId: 'd1', tableId: 'evo' }, maxResults: 10 });
    expect(JSON.parse(rows.rowsJson)).toEqual([{ f: [{ v: 'x' }, { v: null }] }, { f: [{ v: null }, { v: '5' }] }]);
    expect((await eng.client.error('UpdateTable', tb('evo', { schema: { fields: [{ name: 'a', type: 'STRING' }] } }, { patch: 'true' }))).code).toBe(400);
    expect((await eng.client.error('UpdateTable', tb('evo', { schema: { fields: [{ name: 'a', type: 'INT64' }, { name: 'b', type: 'INT64' }] } }))).code).toBe(400);
  });

  it('update replaces REST-only fields; delete then 404', async () => {
    await eng.client.resource('UpdateTable', tb('evo', { description: 'one', labels: { a: 'b' } }, { patch: 'true' }));
    const u = await eng.client.resource('UpdateTable', tb('evo', { friendlyName: 'F' }));
    expect(u.description).toBeUndefined();
    expect(u.friendlyName).toBe('F');
    expect((u.schema as { fields: unknown[] }).fields).toHaveLength(2);
    await eng.client.call('DeleteTable', tb('evo'));
    expect((await eng.client.error('GetTable', tb('evo'))).code).toBe(404);
    expect(eng.storage.findDeletedTable('p1', 'd1', 'evo')).toBeDefined();
    // The deleted table stays readable through a snapshot decorator (copy-job restore source).
    const snap = await eng.client.resource('GetTable', tb('evo@0'));
    expect(snap.numRows).toBe('2');
    const at = Number(u.creationTime);
    const rows = await eng.client.call<{ rowsJson: string }>('ListRows', { table: { projectId: 'p1', datasetId: 'd1', tableId: `evo@${at}` }, maxResults: 10 });
    expect(JSON.parse(rows.rowsJson)).toHaveLength(2);
    expect((await eng.client.error('GetTable', tb(`evo@${at - 100000}`))).code).toBe(404);
  });

  it('a table re-created while its delete is in flight keeps both generations apart', async () => {
    const body = { tableReference: { tableId: 'race' }, schema: { fields: [{ name: 'x', type: 'INT64' }] } };
    await eng.client.resource('InsertTable', tb('', body));
    await eng.client.call('InsertRows', { table: { projectId: 'p1', datasetId: 'd1', tableId: 'race' }, rowsJson: JSON.stringify([{ json: { x: 1 } }]) });
    await Promise.all([eng.client.call('DeleteTable', tb('race')), eng.client.resource('InsertTable', tb('', body)).catch(() => null)]);
    if (!eng.storage.getTable('p1', 'd1', 'race')) await eng.client.resource('InsertTable', tb('', body));
    expect((await eng.client.resource('GetTable', tb('race'))).numRows).toBe('0');
    expect((await eng.client.resource('GetTable', tb('race@0'))).numRows).toBe('0');
    const snap = eng.storage.findDeletedTable('p1', 'd1', 'race')!;
    expect(eng.storage.deletedTableData(snap).rowCountSync()).toBe(1);
  });

  it('children: create-only conflicts, list, delete', async () => {
    const c = { projectId: 'p1', datasetId: 'd1', kind: 'models', childId: 'm1', resourceJson: JSON.stringify({ modelType: 'LINEAR_REG' }), createOnly: true };
    const m = await eng.client.resource('PutChild', c);
    expect(m.modelReference).toEqual({ projectId: 'p1', datasetId: 'd1', modelId: 'm1' });
    expect((await eng.client.error('PutChild', c)).code).toBe(409);
    const l = await eng.client.call<{ itemsJson: string[] }>('ListChildren', { projectId: 'p1', datasetId: 'd1', kind: 'models' });
    expect(l.itemsJson).toHaveLength(1);
    await eng.client.call('DeleteChild', { projectId: 'p1', datasetId: 'd1', kind: 'models', childId: 'm1' });
    expect((await eng.client.error('GetChild', { projectId: 'p1', datasetId: 'd1', kind: 'models', childId: 'm1' })).message).toBe('Not found: Model p1:d1.m1');
    const pol = await eng.client.resource('PutChild', { projectId: 'p1', datasetId: 'd1', tableId: 'all', kind: 'rowAccessPolicies', childId: 'pol', resourceJson: JSON.stringify({ filterPredicate: 'TRUE' }) });
    expect(pol.rowAccessPolicyReference).toEqual({ projectId: 'p1', datasetId: 'd1', tableId: 'all', policyId: 'pol' });
  });
});
