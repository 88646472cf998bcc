// Queries end to end through the real clients: the bq CLI (jobs.insert +
// getQueryResults, parameters, dry run, max rows, legacy-SQL default) and the
// Node client (jobs.query, createQueryJob + getQueryResults, named and
// positional parameters, paging over 100k rows).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BigQuery } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const hasBq = (process.env['PATH'] ?? '').split(':').some((d) => d && existsSync(join(d, 'bq')));

describe('queries through real clients', () => {
  let emu: Emulator;
  let client: BigQuery;
  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    emu = await startEmulator({ args: ['--project-id', 'test'] });
    client = new BigQuery({ projectId: 'test', apiEndpoint: emu.url, authClient: fakeAuth() });
    await client.createDataset('qc');
    await client.query({ query: 'CREATE TABLE qc.people (name STRING, age INT64, born DATE)' });
    await client.query({
      query: "INSERT INTO qc.people VALUES ('ada', 36, DATE '1815-12-10'), ('linus', 54, DATE '1969-12-28'), ('grace', 85, NULL)",
    });
  });
  afterAll(async () => emu?.stop());

  it('Node client: jobs.query with named and positional parameters of several types', async () => {
    const [named] = await client.query({
      query: 'SELECT name, age + @bump AS older FROM qc.people WHERE age > @min AND name IN UNNEST(@names) ORDER BY name',
      params: { bump: 1, min: 40, names: ['linus', 'grace'] },
    });
    expect(named).toEqual([
      { name: 'grace', older: 86 },
      { name: 'linus', older: 55 },
    ]);
    const [positional] = await client.query({ query: 'SELECT ? AS s, ? AS b, ? AS f', params: ['x', true, 1.5] });
    expect(positional).toEqual([{ s: 'x', b: true, f: 1.5 }]);
    const [structs] = await client.query({ query: 'SELECT @p.a AS a, @p.b AS b', params: { p: { a: 7, b: 'seven' } } });
    expect(structs).toEqual([{ a: 7, b: 'seven' }]);
  });

  it('Node client: createQueryJob + getQueryResults pages over 100k rows', async () => {
    const [job] = await client.createQueryJob({ query: 'SELECT n FROM UNNEST(GENERATE_ARRAY(1, 100000)) AS n ORDER BY n' });
    const [rows] = await job.getQueryResults();
    expect(rows.length).toBe(100000);
    expect(rows[0]).toEqual({ n: 1 });
    expect(rows[99999]).toEqual({ n: 100000 });
    const [meta] = await job.getMetadata();
    expect(meta.status.state).toBe('DONE');
    expect(meta.statistics.query.statementType).toBe('SELECT');
  });

  it('Node client: a bad query rejects with the real error', async () => {
    await expect(client.query({ query: 'SELECT nope FROM qc.people' })).rejects.toThrow(/Unrecognized name: nope; Did you mean name\? at \[1:8\]/);
  });

  it.skipIf(!hasBq)('bq CLI: query with parameters, dry run, max rows, legacy default', async () => {
    const cfg = mkdtempSync(join(tmpdir(), 'bq-cfg-'));
    const rc = join(cfg, 'bqrc');
    writeFileSync(rc, '');
    // bq shells out to `gcloud config list` on every run; with an empty CLOUDSDK_CONFIG
    // its answer is `{}`, so a stub on PATH saves seconds. bq and its HTTP calls are real.
    const stubDir = mkdtempSync(join(tmpdir(), 'gcloud-stub-'));
    writeFileSync(join(stubDir, 'gcloud'), '#!/bin/sh\necho "{}"\n', { mode: 0o755 });
    const bq = (...args: string[]): Promise<string> =>
      new Promise((res, rej) => {
        execFile(
          'bq',
          [`--bigqueryrc=${rc}`, `--api=${emu.url.replace('localhost', '127.0.0.1')}`, '--project_id=test', '--oauth_access_token=fake', '--format=json', ...args],
          { env: { ...process.env, CLOUDSDK_CONFIG: cfg, PATH: `${stubDir}:${process.env['PATH'] ?? ''}` }, timeout: 90_000 },
          (err, stdout, stderr) => (err ? rej(new Error(`bq ${args.join(' ')}: ${err.message}\n${stdout}\n${stderr}`)) : res(stdout)),
        );
      });
    const [withParams, dry, limited, legacy] = await Promise.all([
      bq('query', '--nouse_legacy_sql', '--parameter=min:INT64:40', '--parameter=suffix::!', "SELECT CONCAT(name, @suffix) AS n FROM qc.people WHERE age > @min ORDER BY n"),
      bq('query', '--nouse_legacy_sql', '--dry_run', 'SELECT name FROM qc.people'),
      bq('query', '--nouse_legacy_sql', '--max_rows=2', 'SELECT n FROM UNNEST(GENERATE_ARRAY(1, 10)) AS n ORDER BY n'),
      bq('query', '--use_legacy_sql', 'SELECT COUNT(*) AS c FROM [test:qc.people]'),
    ]);
    expect(JSON.parse(withParams)).toEqual([{ n: 'grace!' }, { n: 'linus!' }]);
    const dryJob = JSON.parse(dry) as { configuration: { dryRun: boolean }; statistics: { totalBytesProcessed: string; query: { schema: unknown } } };
    expect(dryJob.configuration.dryRun).toBe(true);
    expect(dryJob.statistics.totalBytesProcessed).toMatch(/^\d+$/);
    expect(dryJob.statistics.query.schema).toEqual({ fields: [{ name: 'name', type: 'STRING', mode: 'NULLABLE' }] });
    expect(JSON.parse(limited)).toEqual([{ n: '1' }, { n: '2' }]);
    expect(JSON.parse(legacy)).toEqual([{ c: '3' }]);
  }, 150_000);
});
