// Locations through the real Node client: a job lives in one location and is
// found only there (jobs.get/cancel/getQueryResults: 404 elsewhere, and
// without a location unless it is in the US or EU multi-region); a query or a
// load/copy/extract job touches only datasets of its own location (notFound,
// in the job's location's words); a job that names no location runs where its
// datasets are.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BigQuery, type Job } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const TOKYO = 'asia-northeast1';

describe('job locations through the Node client', () => {
  let emu: Emulator;
  let bq: BigQuery;
  let loadJob: Job;
  const out = mkdtempSync(join(tmpdir(), 'loc-out-'));
  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'loc-p'] });
    bq = new BigQuery({ projectId: 'loc-p', apiEndpoint: emu.url, authClient: fakeAuth() });
    await bq.createDataset('tokyo', { location: TOKYO });
    await bq.createDataset('usa');
    const file = join(out, 'in.json');
    writeFileSync(file, '{"name":"a","n":1}\n{"name":"b","n":2}\n');
    // The dataset object carries its location, so the load job runs there.
    [loadJob] = await bq.dataset('tokyo', { location: TOKYO }).table('t').createLoadJob(file, {
      sourceFormat: 'NEWLINE_DELIMITED_JSON',
      schema: { fields: [{ name: 'name', type: 'STRING' }, { name: 'n', type: 'INTEGER' }] },
    });
  });
  afterAll(async () => emu?.stop());

  const code = (p: Promise<unknown>): Promise<unknown> => p.then(() => 200, (e: { code?: number }) => e.code);

  it('a job is found only in its own location', async () => {
    expect(loadJob.location).toBe(TOKYO);
    expect(await code(bq.job(loadJob.id!).getMetadata())).toBe(404);
    expect(await code(bq.job(loadJob.id!, { location: 'US' }).getMetadata())).toBe(404);
    const [meta] = await bq.job(loadJob.id!, { location: TOKYO.toUpperCase() }).getMetadata();
    expect(meta.jobReference.location).toBe(TOKYO);
    // Without a location, a job in the US multi-region is still found.
    const [usJob] = await bq.createQueryJob({ query: 'SELECT 1' });
    expect(await code(bq.job(usJob.id!).getMetadata())).toBe(200);
  });

  it('a query reads only datasets of its location, and one that names none runs where they are', async () => {
    const wrong = await bq.dataset('tokyo', { location: 'US' }).createQueryJob({ query: 'SELECT * FROM tokyo.t' }).then(
      () => undefined,
      (e: { errors?: { reason: string; message: string }[]; response?: { jobReference: { location: string } } }) => e,
    );
    expect(wrong?.errors?.[0]).toEqual({ reason: 'notFound', message: 'Not found: Dataset loc-p:tokyo was not found in location US' });
    expect(wrong?.response?.jobReference.location).toBe('US');
    await expect(bq.query({ query: 'SELECT COUNT(*) AS c FROM tokyo.t', location: 'US' })).rejects.toThrow('Not found: Dataset loc-p:tokyo was not found in location US');

    const [inferred] = await bq.createQueryJob({ query: 'SELECT SUM(n) AS s FROM tokyo.t' });
    expect(inferred.location).toBe(TOKYO);
    const [rows] = await inferred.getQueryResults();
    expect(rows).toEqual([{ s: 3 }]);
    // jobs.query infers it too.
    const [, , resp] = await bq.query({ query: 'SELECT COUNT(*) AS c FROM tokyo.t' }, { autoPaginate: false }) as unknown as [unknown, unknown, { jobReference: { location: string } }];
    expect(resp.jobReference.location).toBe(TOKYO);
    // Two locations in one statement: the second is not found where the first put the job.
    await expect(bq.query('SELECT * FROM tokyo.t CROSS JOIN usa.none')).rejects.toThrow(`Not found: Dataset loc-p:usa was not found in location ${TOKYO}`);
    // A destination table elsewhere is not found either.
    await expect(bq.query({ query: 'SELECT 1 AS x', location: TOKYO, destination: bq.dataset('usa').table('dest') })).rejects.toThrow(`Not found: Dataset loc-p:usa was not found in location ${TOKYO}`);
  });

  it('cancel and getQueryResults name the location too', async () => {
    const [job] = await bq.dataset('tokyo', { location: TOKYO }).createQueryJob({ query: 'SELECT name FROM tokyo.t ORDER BY name' });
    expect(job.location).toBe(TOKYO);
    expect(await code(bq.job(job.id!, { location: 'US' }).cancel())).toBe(404);
    const wrongResults = await rest(`${emu.url}/bigquery/v2/projects/loc-p/queries/${job.id}?location=EU`);
    expect(wrongResults.status).toBe(404);
    expect(wrongResults.body.error.message).toBe(`Not found: Job loc-p:EU.${job.id}`);
    const [rows] = await job.getQueryResults();
    expect(rows).toEqual([{ name: 'a' }, { name: 'b' }]);
  });

  it('copy and extract jobs in the wrong location are refused with 404; without one they run where the tables are', async () => {
    const table = bq.dataset('tokyo').table('t');
    expect(await code(bq.dataset('tokyo', { location: 'US' }).table('t').createCopyJob(bq.dataset('tokyo').table('t2')))).toBe(404);
    // (createExtractJob takes Cloud Storage files only: a local destination goes through createJob.)
    const extractTo = (location?: string) =>
      bq.createJob({ configuration: { extract: { sourceTable: { datasetId: 'tokyo', tableId: 't' }, destinationUris: [`file://${out}/x.csv`] } }, ...(location ? { location } : {}) });
    expect(await code(extractTo('US'))).toBe(404);
    const [copy] = await table.createCopyJob(bq.dataset('tokyo').table('t2'));
    expect(copy.location).toBe(TOKYO);
    // Across locations (managing-tables.md, Copy tables across regions; overturned by set bj, which held this 404):
    // one table copied into a new one in another region is taken, the job in the source's location; an append
    // across regions is not (the page's Limitations).
    const [across] = await table.createCopyJob(bq.dataset('usa').table('t3'));
    expect(across.location).toBe(TOKYO);
    expect(await code(table.createCopyJob(bq.dataset('usa').table('t3'), { writeDisposition: 'WRITE_APPEND' }))).toBe(400);
    const [extract] = await extractTo();
    expect(extract.location).toBe(TOKYO);
  });

  it('a query reading a region-qualified INFORMATION_SCHEMA view runs in that region', async () => {
    const post = (body: Record<string, unknown>) => rest(`${emu.url}/bigquery/v2/projects/loc-p/queries`, { method: 'POST', json: { useLegacySql: false, ...body } });
    // The intro page: a region qualifier reads that location's datasets; the job runs there (jobs.query reports it).
    const tables = await post({ query: `SELECT table_schema, table_name FROM \`region-${TOKYO}\`.INFORMATION_SCHEMA.TABLES ORDER BY table_name` });
    expect(tables.status).toBe(200);
    expect(tables.body.jobReference.location).toBe(TOKYO);
    expect(tables.body.rows.map((r: { f: { v: string }[] }) => r.f.map((c) => c.v))).toEqual([['tokyo', 't'], ['tokyo', 't2']]);
    const us = await post({ query: 'SELECT COUNT(*) AS n FROM `region-us`.INFORMATION_SCHEMA.SCHEMATA' });
    expect(us.body.jobReference.location).toBe('US');
    expect(us.body.rows[0].f[0].v).toBe('1');
    // A region qualifier of another location than the job's: not found there, as a dataset of that location is.
    const wrong = await post({ query: `SELECT COUNT(*) FROM \`region-${TOKYO}\`.INFORMATION_SCHEMA.TABLES`, location: 'US' });
    expect(wrong.status).toBe(404);
    expect(wrong.body.error.errors[0]).toMatchObject({ reason: 'notFound', message: `Not found: Dataset loc-p:region-${TOKYO} was not found in location US` });
    const mixed = await post({ query: `SELECT (SELECT COUNT(*) FROM tokyo.t) + (SELECT COUNT(*) FROM \`region-us\`.INFORMATION_SCHEMA.TABLES)` });
    expect(mixed.status).toBe(404);
    expect(mixed.body.error.message).toBe(`Not found: Dataset loc-p:region-us was not found in location ${TOKYO}`);
  });
});
