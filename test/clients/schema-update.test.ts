// schemaUpdateOptions through the real Node client: query jobs appending to a
// table may add columns (ALLOW_FIELD_ADDITION) or relax REQUIRED ones
// (ALLOW_FIELD_RELAXATION); WRITE_TRUNCATE replaces a table's schema; load
// jobs relax a REQUIRED column their schema leaves out.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BigQuery, type Dataset, type JobLoadMetadata } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

type Field = { name: string; type: string; mode?: string };

describe('schemaUpdateOptions through the Node client', () => {
  let emu: Emulator;
  let bq: BigQuery;
  let ds: Dataset;
  const ref = (tableId: string) => ({ projectId: 'su-p', datasetId: 'su', tableId });
  const fields = async (table: string): Promise<Field[]> => (await ds.table(table).getMetadata())[0].schema.fields as Field[];
  const rows = async (table: string): Promise<unknown[]> => (await bq.query(`SELECT * FROM su.${table} ORDER BY 1`))[0];
  const runQuery = async (query: string, extra: Record<string, unknown>): Promise<void> => {
    const [job] = await bq.createQueryJob({ query, ...extra });
    await job.getQueryResults();
  };

  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'su-p'] });
    bq = new BigQuery({ projectId: 'su-p', apiEndpoint: emu.url, authClient: fakeAuth() });
    [ds] = await bq.createDataset('su');
  });
  afterAll(async () => emu?.stop());

  it('ALLOW_FIELD_ADDITION: a WRITE_APPEND query adds its new columns as NULLABLE; without it the job fails', async () => {
    await ds.createTable('add', { schema: [{ name: 'name', type: 'STRING', mode: 'REQUIRED' }] });
    await bq.query(`INSERT su.add (name) VALUES ('old')`);
    const query = `SELECT 'new' AS name, 1999 AS year`;
    await expect(runQuery(query, { destinationTable: ref('add'), writeDisposition: 'WRITE_APPEND' })).rejects.toThrow(
      'Provided Schema does not match Table su-p:su.add. Cannot add fields (field: year)',
    );
    await runQuery(query, { destinationTable: ref('add'), writeDisposition: 'WRITE_APPEND', schemaUpdateOptions: ['ALLOW_FIELD_ADDITION'] });
    expect(await fields('add')).toEqual([
      { name: 'name', type: 'STRING', mode: 'REQUIRED' },
      { name: 'year', type: 'INTEGER', mode: 'NULLABLE' },
    ]);
    expect(await rows('add')).toEqual([
      { name: 'new', year: 1999 },
      { name: 'old', year: null },
    ]);
  });

  it('ALLOW_FIELD_RELAXATION: a WRITE_APPEND query makes the REQUIRED columns NULLABLE (writeDisposition as the samples send it)', async () => {
    await ds.createTable('relax', { schema: [{ name: 'age', type: 'STRING', mode: 'REQUIRED' }, { name: 'id', type: 'INTEGER', mode: 'REQUIRED' }] });
    await bq.query(`INSERT su.relax (age, id) VALUES ('7', 1)`);
    // The samples pass the disposition as a one-element array; the service reads it.
    await bq.createJob({
      configuration: {
        query: { query: 'SELECT age, 2 AS id FROM su.relax', destinationTable: ref('relax'), schemaUpdateOptions: ['ALLOW_FIELD_RELAXATION'], writeDisposition: ['WRITE_APPEND'] as unknown as string, useLegacySql: false },
      },
    }).then(([job]) => job.getQueryResults());
    expect((await fields('relax')).map((f) => f.mode)).toEqual(['NULLABLE', 'NULLABLE']);
    expect(await rows('relax')).toEqual([{ age: '7', id: 1 }, { age: '7', id: 2 }]);
  });

  it('schema update options need WRITE_APPEND (WRITE_EMPTY is refused); WRITE_TRUNCATE replaces the schema', async () => {
    await ds.createTable('trunc', { schema: [{ name: 'a', type: 'STRING', mode: 'REQUIRED' }] });
    await expect(runQuery('SELECT 1 AS b', { destinationTable: ref('trunc'), writeDisposition: 'WRITE_EMPTY', schemaUpdateOptions: ['ALLOW_FIELD_ADDITION'] })).rejects.toThrow(
      'Schema update options should only be specified with WRITE_APPEND disposition, or with WRITE_TRUNCATE disposition on a table partition.',
    );
    await runQuery(`SELECT 1 AS b, 'x' AS c`, { destinationTable: ref('trunc'), writeDisposition: 'WRITE_TRUNCATE' });
    expect((await fields('trunc')).map((f) => f.name)).toEqual(['b', 'c']);
    expect(await rows('trunc')).toEqual([{ b: 1, c: 'x' }]);
  });

  it('a load with ALLOW_FIELD_RELAXATION whose schema leaves a REQUIRED column out relaxes it; without the option it fails', async () => {
    const [table] = await ds.createTable('load_relax', {
      schema: [{ name: 'Name', type: 'STRING', mode: 'REQUIRED' }, { name: 'Age', type: 'INTEGER' }, { name: 'Weight', type: 'FLOAT' }],
    });
    const file = join(mkdtempSync(join(tmpdir(), 'su-')), 'partial.csv');
    writeFileSync(file, '30,70.5\n41,80\n');
    // The samples' string form of a schema; the client expands it.
    const options = { schema: 'Age:INTEGER, Weight:FLOAT', writeDisposition: 'WRITE_APPEND', sourceFormat: 'CSV' } as unknown as JobLoadMetadata;
    await expect(table.load(file, options)).rejects.toThrow('Provided Schema does not match Table su-p:su.load_relax. Field Name is missing in new schema');
    const [job] = await table.load(file, { ...options, schemaUpdateOptions: ['ALLOW_FIELD_RELAXATION'] });
    expect(job.status).toEqual({ state: 'DONE' });
    expect((await fields('load_relax'))[0]).toEqual({ name: 'Name', type: 'STRING', mode: 'NULLABLE' });
    expect(await rows('load_relax')).toEqual([
      { Name: null, Age: 30, Weight: 70.5 },
      { Name: null, Age: 41, Weight: 80 },
    ]);
  });
});
