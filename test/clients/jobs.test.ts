// Query jobs as the service runs them, through the real Node client: the
// insert answers at once with the job RUNNING (an analysis error makes it
// DONE with the error), clients poll; getQueryResults with a timeout answers
// jobComplete false while the query runs; jobs.cancel stops a running job;
// jobs.delete answers `{}`; load jobs stay synchronous (spec §3.4).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BigQuery } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

// Runs until cancelled (10^10 joined rows): the executor checks the job's cancel switch between batches.
const ENDLESS = 'SELECT COUNT(*) AS n FROM UNNEST(GENERATE_ARRAY(1, 100000)) AS a, UNNEST(GENERATE_ARRAY(1, 100000)) AS b';

describe('query jobs through the Node client', () => {
  let emu: Emulator;
  let bq: BigQuery;
  const api = (path: string): string => `${emu.url}/bigquery/v2/projects/jobs-p${path}`;
  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'jobs-p'] });
    bq = new BigQuery({ projectId: 'jobs-p', apiEndpoint: emu.url, authClient: fakeAuth() });
    await bq.createDataset('jd');
  });
  afterAll(async () => emu?.stop());

  it('insert answers RUNNING at once; a timed-out getQueryResults says jobComplete false; cancel stops the job', async () => {
    const [job, inserted] = await bq.createQueryJob({ query: ENDLESS });
    expect(inserted.status).toEqual({ state: 'RUNNING' });
    // The client turns jobComplete:false past its timeout into this error.
    await expect(bq.query(ENDLESS, { job, timeoutMs: 300 })).rejects.toThrow('The query did not complete before 300ms');
    const raw = await rest(api(`/queries/${job.id}?timeoutMs=100&location=US`));
    expect(raw.body).toMatchObject({ kind: 'bigquery#getQueryResultsResponse', jobComplete: false, jobReference: { jobId: job.id, location: 'US' } });
    const [cancelled] = await job.cancel();
    expect(cancelled.kind).toBe('bigquery#jobCancelResponse');
    // The client polls jobs.get until DONE; the stopped job carries the service's error.
    await expect(job.promise()).rejects.toThrow(/cancel/i);
    const [meta] = await job.getMetadata();
    expect(meta.status.state).toBe('DONE');
    expect(meta.status.errorResult.reason).toBe('stopped');
    const [stoppedList] = await bq.getJobs({ stateFilter: ['done'] });
    expect(stoppedList.map((j) => j.id)).toContain(job.id);
  });

  it('an analysis error comes back on the insert as a DONE job with the error', async () => {
    const err = await bq.createQueryJob({ query: 'SELECT * FROM jd.missing' }).then(
      () => undefined,
      (e: { errors?: { reason: string; message: string }[]; response?: { status: { state: string } } }) => e,
    );
    expect(err?.errors?.[0]).toMatchObject({ reason: 'notFound', message: 'Not found: Table jobs-p:jd.missing was not found in location US' });
    expect(err?.response?.status.state).toBe('DONE');
  });

  it('short queries: the client polls to the result; a finished job is deleted with an empty answer', async () => {
    const [job] = await bq.createQueryJob({ query: 'SELECT 17 AS x' });
    const [rows] = await job.getQueryResults();
    expect(rows).toEqual([{ x: 17 }]);
    const [resp] = await job.delete();
    expect(resp).toEqual({});
    const [exists] = await job.exists();
    expect(exists).toBe(false);
  });

  it('load jobs from a local file stay synchronous: the insert answers DONE', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jobs-load-'));
    const file = join(dir, 'rows.json');
    writeFileSync(file, '{"a":1}\n{"a":2}\n');
    const table = bq.dataset('jd').table('loaded');
    const [job] = await table.createLoadJob(file, { sourceFormat: 'NEWLINE_DELIMITED_JSON', schema: { fields: [{ name: 'a', type: 'INTEGER' }] } });
    expect(job.metadata.status.state).toBe('DONE');
    const [rows] = await table.getRows();
    expect(rows).toHaveLength(2);
  });

  it('an Avro file written with the snappy codec loads (fixture made by Apache Avro\'s Python writer: fixtures/make-snappy-avro.py)', async () => {
    const table = bq.dataset('jd').table('snappy');
    const [job] = await table.createLoadJob(join(import.meta.dirname, 'fixtures', 'snappy.avro'), { sourceFormat: 'AVRO' });
    expect(job.metadata.status).toEqual({ state: 'DONE' });
    const [rows] = await bq.query('SELECT COUNT(*) AS n, COUNTIF(population IS NULL) AS missing, MAX(name) AS top FROM jd.snappy');
    expect(rows).toEqual([{ n: 203, missing: 1, top: 'State 99 of the long list of states' }]);
    const [first] = await bq.query("SELECT post_abbr, population FROM jd.snappy WHERE name = 'Alaska'");
    expect(first).toEqual([{ post_abbr: 'AK', population: 733391 }]);
  });
});
