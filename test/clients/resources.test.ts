// Resource shapes as the service answers them, through the real Node client:
// schemas echoed as sent (no mode added), jobs.query's queryId,
// tables.get?view=BASIC without storage statistics, an emptied labels map left
// out, int64 fields of partitioning specs as strings, default collations
// applied to STRING fields, If-Match preconditions (412), views listed with
// their query, insertAll's per-row error texts.
import { BigQuery } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

describe('resource shapes through the Node client', () => {
  let emu: Emulator;
  let bq: BigQuery;
  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'res-p'] });
    bq = new BigQuery({ projectId: 'res-p', apiEndpoint: emu.url, authClient: fakeAuth() });
    await bq.createDataset('rd');
  });
  afterAll(async () => emu?.stop());

  it('a schema comes back as it was sent: no mode where none was given', async () => {
    const schema = { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'details', type: 'RECORD', fields: [{ name: 'nested_id', type: 'INTEGER' }, { name: 'tags', type: 'STRING', mode: 'REPEATED' }] }] };
    const [table] = await bq.dataset('rd').createTable('nested', { schema });
    expect(table.metadata.schema).toEqual(schema);
    const [meta] = await table.getMetadata();
    expect(meta.schema).toEqual(schema);
  });

  it('jobs.query names its query; tables.get?view=BASIC leaves the storage statistics out', async () => {
    const [, , resp] = (await bq.query({ query: 'SELECT 1 AS x' }, { autoPaginate: false })) as unknown as [unknown, unknown, { queryId?: string; jobReference: { jobId: string } }];
    expect(resp.queryId).toBe(resp.jobReference.jobId);
    const table = bq.dataset('rd').table('nested');
    const [basic] = await table.get({ view: 'BASIC' } as never);
    expect(Object.keys(basic.metadata)).not.toContain('numBytes');
    expect(Object.keys(basic.metadata)).not.toContain('lastModifiedTime');
    expect(basic.metadata.schema.fields).toHaveLength(2);
    const [full] = await table.getMetadata();
    expect(full.numBytes).toBeDefined();
    expect(full.lastModifiedTime).toBeDefined();
  });

  it('labels emptied by a patch are left out; partitioning int64 fields are strings', async () => {
    const ds = bq.dataset('rd');
    await ds.setMetadata({ labels: { color: 'green' } });
    await ds.setMetadata({ labels: { color: null } });
    const [dsMeta] = await ds.getMetadata();
    expect(dsMeta.labels).toBeUndefined();
    const [table] = await ds.createTable('ranged', {
      schema: 'n:INTEGER',
      // Numbers, as the samples send them: the service echoes int64 strings.
      rangePartitioning: { field: 'n', range: { start: 0, end: 100000, interval: 10 } },
      labels: { a: 'b' },
    } as never);
    expect(table.metadata.rangePartitioning).toEqual({ field: 'n', range: { start: '0', end: '100000', interval: '10' } });
    await table.setMetadata({ labels: { a: null } } as never);
    const [meta] = await table.getMetadata();
    expect(meta.labels).toBeUndefined();
  });

  it('a default collation (the table\'s, else its dataset\'s) applies to STRING fields; fields added later take the table\'s', async () => {
    const [table] = await bq.dataset('rd').createTable('coll', { schema: [{ name: 'name', type: 'STRING' }, { name: 'n', type: 'INTEGER' }], defaultCollation: 'und:ci' } as never);
    let [md] = await table.getMetadata();
    expect(md.schema.fields).toEqual([{ name: 'name', type: 'STRING', collation: 'und:ci' }, { name: 'n', type: 'INTEGER' }]);
    md.schema.fields.push({ name: 'more', type: 'STRING' });
    await table.setMetadata(md);
    [md] = await table.getMetadata();
    expect(md.schema.fields[2]).toEqual({ name: 'more', type: 'STRING', collation: 'und:ci' });
    const [ds] = await bq.createDataset('rd_ci', { defaultCollation: 'und:ci' } as never);
    const [inDs] = await ds.createTable('t', { schema: 's:STRING' });
    expect(inDs.metadata.schema.fields).toEqual([{ name: 's', type: 'STRING', collation: 'und:ci' }]);
  });

  it('If-Match with a stale etag is refused with 412; the current one passes', async () => {
    const ds = bq.dataset('rd');
    await expect(ds.setMetadata({ etag: 'a-fake-etag', description: 'no' })).rejects.toThrow(/precondition/i);
    const [cur] = await ds.getMetadata();
    await ds.setMetadata({ etag: cur.etag, description: 'yes' });
    expect((await ds.getMetadata())[0].description).toBe('yes');
    const table = ds.table('nested');
    const err = await table.setMetadata({ etag: 'stale', description: 'x' }).catch((e: { code: number }) => e);
    expect(err).toMatchObject({ code: 412 });
    const tm = (await table.getMetadata())[0];
    await table.setMetadata({ etag: tm.etag, description: 'ok' });
  });

  it('tables.list shows a view with its query; insertAll reports the service\'s row error texts', async () => {
    await bq.dataset('rd').createTable('v', { view: { query: 'SELECT 1 AS one', useLegacySql: false } });
    const list = await rest(`${emu.url}/bigquery/v2/projects/res-p/datasets/rd/tables`);
    const v = list.body.tables.find((t: { tableReference: { tableId: string } }) => t.tableReference.tableId === 'v');
    expect(v.view).toEqual({ query: 'SELECT 1 AS one', useLegacySql: false });
    const [t] = await bq.dataset('rd').createTable('people', { schema: 'name:STRING' });
    const err = await t.insert([{ name: 'dave' }, { name: true }]).catch((e: { name: string; errors: unknown[] }) => e);
    expect(err).toMatchObject({ name: 'PartialFailureError' });
    expect((err as { errors: unknown[] }).errors).toEqual([
      { errors: [{ message: 'Conversion from bool to std::string is unsupported.', reason: 'invalid' }], row: { name: true } },
      { errors: [{ message: '', reason: 'stopped' }], row: { name: 'dave' } },
    ]);
  });
});
