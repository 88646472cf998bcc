// An unseen set (issue 16, set az, sql60 session, 2026-11-30): job-level rules of query results, jobs,
// parameters and the cache, through HTTP. The project's own requests; expected answers from the pages named on
// each case (guide pages under bigquery/docs/, REST pages under reference/rest/v2/), written before the first run.
// Rules and where they are checked:
//   JobReference.md jobId: letters, digits, `_`, `-` only; at most 1,024 characters.
//   managing-jobs.md "Delete job metadata": only after the job is complete; a parent's child jobs go with it;
//     deleting a child job is not allowed. "Cancel a job": on a finished job it has no effect.
//   jobs/query.md labels: keys and values at most 63 characters, lowercase letters, digits, `_`, `-`; keys start
//     with a letter. requestId: at most 36 ASCII characters; a duplicate only when the request is the same (another
//     query under the same requestId is not the earlier job); dry runs are never duplicates.
//   Job.md JobConfigurationQuery: createDisposition CREATE_NEVER: a missing destination is notFound in the job
//     result; writeDisposition WRITE_EMPTY (the default): a destination with data is `duplicate` in the job result,
//     WRITE_TRUNCATE_DATA overwrites the rows and keeps the table's schema; priority INTERACTIVE or BATCH;
//     allowLargeResults needs a destinationTable under legacy SQL and is ignored under GoogleSQL; flattenResults=false
//     needs allowLargeResults under legacy SQL and is ignored under GoogleSQL; only one of timePartitioning and
//     rangePartitioning.
//   cached-results.md: results are never cached with a destination table (cacheHit false); "Ensuring use of the
//     cache": CREATE_NEVER without a destination fails NOT_FOUND when the result is not in the cache (the emulator
//     keeps no cache, so it never is); useQueryCache=false is accepted.
//   parameterized-queries.md: parameters only under GoogleSQL; RANGE parameters with rangeElementType.
//   writing-results.md: the queried tables must be in the destination dataset's location.
// First run (sql60, before any fix): 16 of 31 passed (51.6%). One mistake in this test data: the cross-location case
// expected the reason word 'invalid', which the page does not give (the emulator refuses with notFound, nothing
// written): corrected 17/31. The 14 failures, all fixed: a script's child job could be deleted on its own; job labels
// were not checked (jobs.query and jobs.insert); a requestId was not limited to 36 ASCII characters, and another
// query (or other parameters) under a used requestId returned the earlier job; WRITE_TRUNCATE_DATA was unknown (taken
// as WRITE_EMPTY); unknown writeDisposition and priority values were taken; legacy SQL took query parameters,
// allowLargeResults without a destination and flattenResults=false without allowLargeResults; timePartitioning with
// rangePartitioning was taken; CREATE_NEVER without a destination returned a (never cached) result. After: 31/31.
// A second blind batch (temporary result tables: no DML target, not listed) passed 2/2 on its first run; the two
// jobTimeoutMs cases were written with that fix (the option was taken and ignored). A third batch (WRITE_TRUNCATE_DATA
// for loads, refused for copies: Job.md JobConfigurationLoad / JobConfigurationTableCopy) was written before the load
// path was changed but first run after it (2/2); before, the engine refused WRITE_TRUNCATE_DATA for every data job.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('unseen az: job-level rules', () => {
  let emu: Emulator;
  const P = 'azp';
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/${P}${p}`;
  const query = (body: Record<string, unknown>): Promise<any> => rest(url('/queries'), { method: 'POST', json: { useLegacySql: false, timeoutMs: 30000, ...body } });
  const insert = (query: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<any> =>
    rest(url('/jobs'), { method: 'POST', json: { configuration: { query: { useLegacySql: false, ...query } }, ...extra } });
  /** Waits for a job and returns its resource. */
  const finished = async (jobId: string): Promise<any> => {
    await rest(url(`/queries/${jobId}?timeoutMs=30000`));
    return (await rest(url(`/jobs/${jobId}`))).body;
  };
  /** The reason a request or its job was refused: the request's error, else the job's errorResult; undefined when it ran. */
  const refusal = async (r: any): Promise<string | undefined> => {
    if (r.status >= 400) return r.body.error.errors[0].reason;
    const job = r.body.status ? r.body : undefined;
    if (job) return (await finished(job.jobReference.jobId)).status.errorResult?.reason;
    return undefined;
  };
  const rowsOf = (r: any): unknown[][] => (r.body.rows ?? []).map((row: any) => row.f.map((c: any) => c.v));

  beforeAll(async () => {
    emu = await startEmulator();
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'az' }, location: 'US' } });
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'az_eu' }, location: 'EU' } });
    await query({ query: 'CREATE TABLE az.src (n INT64, s STRING); INSERT az.src (n, s) VALUES (1, "a"), (2, "b"), (3, "c")' });
  }, 120_000);
  afterAll(async () => emu?.stop());

  // JobReference.md, jobId.
  it('a job id with a character other than letters, digits, _ and - is invalid', async () => {
    for (const id of ['has.dot', 'has space', 'colon:id', 'ümlaut']) {
      const r = await insert({ query: 'SELECT 1' }, { jobReference: { jobId: id } });
      expect(r.status, id).toBe(400);
      expect(r.body.error.errors[0].reason).toBe('invalid');
    }
  });

  it('a job id of 1,024 characters is taken, one of 1,025 is invalid', async () => {
    const ok = await insert({ query: 'SELECT 1' }, { jobReference: { jobId: 'j'.repeat(1024) } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.jobReference.jobId).toHaveLength(1024);
    const long = await insert({ query: 'SELECT 1' }, { jobReference: { jobId: 'k'.repeat(1025) } });
    expect(long.status).toBe(400);
    expect(long.body.error.errors[0].reason).toBe('invalid');
  });

  it('a job id of dashes, underscores and digits is taken and read back as given', async () => {
    const r = await insert({ query: 'SELECT 2 AS x' }, { jobReference: { jobId: 'az-Job_01-x' } });
    expect(r.status).toBe(200);
    const job = await finished('az-Job_01-x');
    expect(job.jobReference.jobId).toBe('az-Job_01-x');
    expect(job.status.state).toBe('DONE');
  });

  // managing-jobs.md, "Delete job metadata" and "Cancel a job".
  it('deleting a script job deletes its child jobs too', async () => {
    const r = await insert({ query: 'SELECT 1; SELECT 2;' }, { jobReference: { jobId: 'az_parent1' } });
    expect(r.status).toBe(200);
    await finished('az_parent1');
    const kids = (await rest(url('/jobs?parentJobId=az_parent1'))).body.jobs ?? [];
    expect(kids.length).toBe(2);
    const del = await rest(url('/jobs/az_parent1/delete'), { method: 'DELETE' });
    expect(del.status).toBe(200);
    for (const k of kids) expect((await rest(url(`/jobs/${k.jobReference.jobId}`))).status).toBe(404);
  });

  it('a child job of a script cannot be deleted on its own', async () => {
    await insert({ query: 'SELECT 1; SELECT 2;' }, { jobReference: { jobId: 'az_parent2' } });
    await finished('az_parent2');
    const kids = (await rest(url('/jobs?parentJobId=az_parent2'))).body.jobs ?? [];
    expect(kids.length).toBe(2);
    const childId = kids[0].jobReference.jobId;
    const del = await rest(url(`/jobs/${childId}/delete`), { method: 'DELETE' });
    expect(del.status).toBe(400);
    expect(del.body.error.errors[0].reason).toBe('invalid');
    // Nothing was deleted: the child and its parent are still there.
    expect((await rest(url(`/jobs/${childId}`))).status).toBe(200);
    expect((await rest(url('/jobs/az_parent2'))).status).toBe(200);
  });

  it('cancelling a finished job has no effect: it stays DONE without an error', async () => {
    await insert({ query: 'SELECT 3' }, { jobReference: { jobId: 'az_done1' } });
    await finished('az_done1');
    const c = await rest(url('/jobs/az_done1/cancel'), { method: 'POST' });
    expect(c.status).toBe(200);
    expect(c.body.job.status.state).toBe('DONE');
    expect(c.body.job.status.errorResult).toBeUndefined();
    const res = await rest(url('/queries/az_done1'));
    expect(rowsOf(res)).toEqual([['3']]);
  });

  // jobs/query.md, labels.
  it('job labels are echoed on the job', async () => {
    const r = await query({ query: 'SELECT 1', labels: { team: 'data-eng', cost_center: '42' } });
    expect(r.status).toBe(200);
    const job = await finished(r.body.jobReference.jobId);
    expect(job.configuration.labels).toEqual({ team: 'data-eng', cost_center: '42' });
  });

  it('a label key with an uppercase letter, a leading digit or over 63 characters is invalid', async () => {
    for (const labels of [{ Team: 'x' }, { '1team': 'x' }, { ['k'.repeat(64)]: 'x' }, { team: 'v'.repeat(64) }, { team: 'UPPER' }]) {
      const r = await query({ query: 'SELECT 1', labels });
      expect(r.status, JSON.stringify(labels)).toBe(400);
      expect(r.body.error.errors[0].reason).toBe('invalid');
    }
  });

  it('jobs.insert checks configuration.labels with the same rules', async () => {
    const bad = await rest(url('/jobs'), { method: 'POST', json: { configuration: { labels: { 'bad key': 'v' }, query: { query: 'SELECT 1', useLegacySql: false } } } });
    expect(await refusal(bad)).toBe('invalid');
    const good = await rest(url('/jobs'), { method: 'POST', json: { configuration: { labels: { env: 'test-1' }, query: { query: 'SELECT 1', useLegacySql: false } } } });
    expect(good.status).toBe(200);
    expect((await finished(good.body.jobReference.jobId)).configuration.labels).toEqual({ env: 'test-1' });
  });

  // jobs/query.md, requestId.
  it('a requestId longer than 36 characters is invalid', async () => {
    const r = await query({ query: 'SELECT 1', requestId: 'r'.repeat(37) });
    expect(r.status).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('invalid');
    const ok = await query({ query: 'SELECT 1', requestId: 'q'.repeat(36) });
    expect(ok.status).toBe(200);
  });

  it('the same requestId with the same mutating request returns the first job, inserting once', async () => {
    await query({ query: 'CREATE TABLE az.rid (n INT64)' });
    const body = { query: 'INSERT az.rid (n) VALUES (1)', requestId: 'az-rid-same' };
    const a = await query(body);
    const b = await query(body);
    expect(b.body.jobReference.jobId).toBe(a.body.jobReference.jobId);
    expect(rowsOf(await query({ query: 'SELECT COUNT(*) FROM az.rid' }))).toEqual([['1']]);
  });

  it('another query under the same requestId is not a duplicate: it runs', async () => {
    const a = await query({ query: 'SELECT 10 AS v', requestId: 'az-rid-diff' });
    const b = await query({ query: 'SELECT 20 AS v', requestId: 'az-rid-diff' });
    expect(rowsOf(a)).toEqual([['10']]);
    expect(rowsOf(b)).toEqual([['20']]);
    expect(b.body.jobReference.jobId).not.toBe(a.body.jobReference.jobId);
  });

  it('other parameters under the same requestId are not a duplicate either', async () => {
    const q = { query: 'SELECT @v AS v', requestId: 'az-rid-param', parameterMode: 'NAMED' };
    const a = await query({ ...q, queryParameters: [{ name: 'v', parameterType: { type: 'INT64' }, parameterValue: { value: '1' } }] });
    const b = await query({ ...q, queryParameters: [{ name: 'v', parameterType: { type: 'INT64' }, parameterValue: { value: '2' } }] });
    expect(rowsOf(a)).toEqual([['1']]);
    expect(rowsOf(b)).toEqual([['2']]);
  });

  it('a dry run is never a duplicate of an earlier request with its requestId', async () => {
    const a = await query({ query: 'SELECT n FROM az.src', requestId: 'az-rid-dry' });
    expect(a.status).toBe(200);
    const dry = await query({ query: 'SELECT n FROM az.src', requestId: 'az-rid-dry', dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body.rows).toBeUndefined();
    expect(dry.body.totalBytesProcessed).toBeDefined();
  });

  // Job.md JobConfigurationQuery, createDisposition / writeDisposition.
  it('CREATE_NEVER with a missing destination table fails notFound in the job result', async () => {
    const r = await insert({ query: 'SELECT 1 AS x', destinationTable: { projectId: P, datasetId: 'az', tableId: 'never_made' }, createDisposition: 'CREATE_NEVER' });
    expect(await refusal(r)).toBe('notFound');
    expect((await rest(url('/datasets/az/tables/never_made'))).status).toBe(404);
  });

  it('CREATE_NEVER with an existing destination table writes to it', async () => {
    await query({ query: 'CREATE TABLE az.cn (x INT64)' });
    const r = await insert({ query: 'SELECT 5 AS x', destinationTable: { projectId: P, datasetId: 'az', tableId: 'cn' }, createDisposition: 'CREATE_NEVER' });
    expect(await refusal(r)).toBeUndefined();
    expect(rowsOf(await query({ query: 'SELECT x FROM az.cn' }))).toEqual([['5']]);
  });

  it('the default write disposition (WRITE_EMPTY) refuses a destination holding rows: duplicate', async () => {
    await query({ query: 'CREATE TABLE az.we (x INT64); INSERT az.we (x) VALUES (1)' });
    const r = await insert({ query: 'SELECT 2 AS x', destinationTable: { projectId: P, datasetId: 'az', tableId: 'we' } });
    expect(await refusal(r)).toBe('duplicate');
    expect(rowsOf(await query({ query: 'SELECT x FROM az.we' }))).toEqual([['1']]);
  });

  it('WRITE_EMPTY writes to an existing empty destination', async () => {
    await query({ query: 'CREATE TABLE az.we2 (x INT64)' });
    const r = await insert({ query: 'SELECT 9 AS x', destinationTable: { projectId: P, datasetId: 'az', tableId: 'we2' }, writeDisposition: 'WRITE_EMPTY' });
    expect(await refusal(r)).toBeUndefined();
    expect(rowsOf(await query({ query: 'SELECT x FROM az.we2' }))).toEqual([['9']]);
  });

  it('WRITE_TRUNCATE_DATA overwrites the rows and keeps the table schema', async () => {
    await query({ query: 'CREATE TABLE az.wtd (x INT64 OPTIONS (description = "kept"), y STRING); INSERT az.wtd (x, y) VALUES (1, "old"), (2, "old")' });
    const r = await insert({ query: 'SELECT 7 AS x, "new" AS y', destinationTable: { projectId: P, datasetId: 'az', tableId: 'wtd' }, writeDisposition: 'WRITE_TRUNCATE_DATA' });
    expect(await refusal(r)).toBeUndefined();
    expect(rowsOf(await query({ query: 'SELECT x, y FROM az.wtd' }))).toEqual([['7', 'new']]);
    const t = await rest(url('/datasets/az/tables/wtd'));
    expect(t.body.schema.fields[0]).toMatchObject({ name: 'x', description: 'kept' });
  });

  // Job.md JobConfigurationLoad.writeDisposition lists WRITE_TRUNCATE_DATA too; JobConfigurationTableCopy does not.
  it('a load with WRITE_TRUNCATE_DATA replaces the rows and keeps the table schema', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'az-load-'));
    const file = join(dir, 'rows.csv');
    writeFileSync(file, '5,five\n6,six\n');
    await query({ query: 'CREATE TABLE az.ltd (x INT64 OPTIONS (description = "kept"), y STRING); INSERT az.ltd (x, y) VALUES (1, "old")' });
    const r = await rest(url('/jobs'), {
      method: 'POST',
      json: { configuration: { load: { destinationTable: { projectId: P, datasetId: 'az', tableId: 'ltd' }, sourceUris: [`file://${file}`], sourceFormat: 'CSV', writeDisposition: 'WRITE_TRUNCATE_DATA' } } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await rest(url(`/jobs/${r.body.jobReference.jobId}`))).body.status.errorResult).toBeUndefined();
    expect(rowsOf(await query({ query: 'SELECT x, y FROM az.ltd ORDER BY x' }))).toEqual([['5', 'five'], ['6', 'six']]);
    const t = await rest(url('/datasets/az/tables/ltd'));
    expect(t.body.schema.fields[0]).toMatchObject({ name: 'x', description: 'kept' });
    rmSync(dir, { recursive: true, force: true });
  });

  it('a copy job does not take WRITE_TRUNCATE_DATA', async () => {
    await query({ query: 'CREATE TABLE az.cp_dst (n INT64, s STRING)' });
    const r = await rest(url('/jobs'), {
      method: 'POST',
      json: { configuration: { copy: { sourceTable: { projectId: P, datasetId: 'az', tableId: 'src' }, destinationTable: { projectId: P, datasetId: 'az', tableId: 'cp_dst' }, writeDisposition: 'WRITE_TRUNCATE_DATA' } } },
    });
    expect(await refusal(r)).toBe('invalid');
    expect(rowsOf(await query({ query: 'SELECT COUNT(*) FROM az.cp_dst' }))).toEqual([['0']]);
  });

  it('an unknown write disposition is invalid', async () => {
    const r = await insert({ query: 'SELECT 1 AS x', destinationTable: { projectId: P, datasetId: 'az', tableId: 'wd_bad' }, writeDisposition: 'WRITE_SOMETIMES' });
    expect(await refusal(r)).toBe('invalid');
  });

  // Job.md priority.
  it('priority BATCH runs the query and is echoed; an unknown priority is invalid', async () => {
    const r = await insert({ query: 'SELECT 4 AS x', priority: 'BATCH' });
    expect(r.status).toBe(200);
    const job = await finished(r.body.jobReference.jobId);
    expect(job.configuration.query.priority).toBe('BATCH');
    expect(job.status.errorResult).toBeUndefined();
    expect(rowsOf(await rest(url(`/queries/${r.body.jobReference.jobId}`)))).toEqual([['4']]);
    const bad = await insert({ query: 'SELECT 1', priority: 'URGENT' });
    expect(await refusal(bad)).toBe('invalid');
  });

  // Job.md allowLargeResults / flattenResults.
  it('allowLargeResults under legacy SQL needs a destination table', async () => {
    const r = await insert({ query: 'SELECT 1 AS x', useLegacySql: true, allowLargeResults: true });
    expect(await refusal(r)).toBe('invalid');
  });

  it('flattenResults=false under legacy SQL needs allowLargeResults', async () => {
    const r = await insert({ query: 'SELECT 1 AS x', useLegacySql: true, flattenResults: false });
    expect(await refusal(r)).toBe('invalid');
  });

  it('allowLargeResults and flattenResults=false are ignored under GoogleSQL', async () => {
    const r = await insert({ query: 'SELECT STRUCT(1 AS a, [2, 3] AS b) AS s', allowLargeResults: true, flattenResults: false });
    expect(await refusal(r)).toBeUndefined();
    const res = await rest(url(`/queries/${r.body.jobReference.jobId}`));
    expect(res.body.schema.fields[0]).toMatchObject({ name: 's', type: 'RECORD' });
  });

  it('timePartitioning and rangePartitioning together are invalid', async () => {
    const r = await insert({
      query: 'SELECT 1 AS n, DATE "2024-01-01" AS d',
      destinationTable: { projectId: P, datasetId: 'az', tableId: 'both_parts' },
      timePartitioning: { type: 'DAY', field: 'd' },
      rangePartitioning: { field: 'n', range: { start: '0', end: '10', interval: '1' } },
    });
    expect(await refusal(r)).toBe('invalid');
    expect((await rest(url('/datasets/az/tables/both_parts'))).status).toBe(404);
  });

  // cached-results.md.
  it('with a destination table the result is not cached: cacheHit is false', async () => {
    const r = await insert({ query: 'SELECT n FROM az.src', destinationTable: { projectId: P, datasetId: 'az', tableId: 'cached_dest' } });
    const job = await finished(r.body.jobReference.jobId);
    expect(job.statistics.query.cacheHit).toBe(false);
  });

  it('CREATE_NEVER without a destination needs a cached result: none there, notFound', async () => {
    const r = await insert({ query: 'SELECT n FROM az.src WHERE n > 1', createDisposition: 'CREATE_NEVER' });
    expect(await refusal(r)).toBe('notFound');
  });

  // Second blind batch (cached-results.md, Limitations and "How cached results are stored"; writing-results.md,
  // "Temporary and permanent tables"): a query's temporary result table is no DML target and is not listed.
  it('DML cannot target a query\'s temporary result table', async () => {
    const r = await insert({ query: 'SELECT n FROM az.src' });
    const job = await finished(r.body.jobReference.jobId);
    const t = job.configuration.query.destinationTable;
    expect(t.datasetId.startsWith('_')).toBe(true);
    const dml = await query({ query: `DELETE FROM \`${t.projectId}.${t.datasetId}.${t.tableId}\` WHERE TRUE` });
    expect(dml.status).toBeGreaterThanOrEqual(400);
    expect(dml.status).toBeLessThan(500);
    expect(rowsOf(await rest(url(`/queries/${r.body.jobReference.jobId}`)))).toHaveLength(3);
  });

  it('the anonymous datasets of temporary results are not in datasets.list', async () => {
    await query({ query: 'SELECT 1 AS one' });
    const list = await rest(url('/datasets?all=false'));
    const ids = (list.body.datasets ?? []).map((d: any) => d.datasetReference.datasetId);
    expect(ids).toContain('az');
    expect(ids.some((id: string) => id.startsWith('_'))).toBe(false);
  });

  it('useQueryCache=false is taken and the query runs', async () => {
    const r = await query({ query: 'SELECT COUNT(*) FROM az.src', useQueryCache: false });
    expect(r.status).toBe(200);
    expect(r.body.cacheHit).toBe(false);
    expect(rowsOf(r)).toEqual([['3']]);
  });

  // parameterized-queries.md.
  it('query parameters are refused under legacy SQL', async () => {
    const r = await query({ query: 'SELECT 1', useLegacySql: true, queryParameters: [{ name: 'a', parameterType: { type: 'INT64' }, parameterValue: { value: '1' } }] });
    expect(r.status).toBe(400);
    expect(['invalid', 'invalidQuery']).toContain(r.body.error.errors[0].reason);
  });

  it('a RANGE<DATE> parameter with rangeElementType', async () => {
    const r = await query({
      query: 'SELECT RANGE_START(@r) AS s, RANGE_END(@r) AS e',
      parameterMode: 'NAMED',
      queryParameters: [{
        name: 'r',
        parameterType: { type: 'RANGE', rangeElementType: { type: 'DATE' } },
        parameterValue: { rangeValue: { start: { value: '2024-01-01' }, end: { value: '2024-02-01' } } },
      }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(rowsOf(r)).toEqual([['2024-01-01', '2024-02-01']]);
  });

  // Job.md JobConfiguration.jobTimeoutMs, jobs/query.md jobTimeoutMs (cases added with the fix, not blind).
  const HEAVY = 'SELECT COUNT(*) AS c FROM UNNEST(GENERATE_ARRAY(1, 20000)) AS a CROSS JOIN UNNEST(GENERATE_ARRAY(1, 20000)) AS b WHERE MOD(a * b, 7) = 3';
  it('a job past its jobTimeoutMs is stopped with reason timeout', async () => {
    const r = await rest(url('/jobs'), { method: 'POST', json: { configuration: { jobTimeoutMs: '50', query: { query: HEAVY, useLegacySql: false } } } });
    expect(r.status).toBe(200);
    const job = await finished(r.body.jobReference.jobId);
    expect(job.status.state).toBe('DONE');
    expect(job.status.errorResult.reason).toBe('timeout');
    expect(job.configuration.jobTimeoutMs).toBe('50');
  }, 60_000);

  it('jobs.query takes jobTimeoutMs too; a job within its limit is not affected', async () => {
    const r = await query({ query: HEAVY, jobTimeoutMs: '50' });
    expect(r.status).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('timeout');
    const ok = await query({ query: 'SELECT 1 AS x', jobTimeoutMs: '60000' });
    expect(rowsOf(ok)).toEqual([['1']]);
  }, 60_000);

  // writing-results.md, "Temporary and permanent tables".
  it('a destination in another location than the queried tables is refused, nothing written', async () => {
    const r = await insert({ query: 'SELECT n FROM az.src', destinationTable: { projectId: P, datasetId: 'az_eu', tableId: 'cross' } });
    // The page gives no reason word: first written as 'invalid'; the emulator says the dataset is not found in the
    // job's location (notFound), which keeps the rule. Either refusal is the page's answer.
    expect(['invalid', 'notFound']).toContain(await refusal(r));
    expect((await rest(url('/datasets/az_eu/tables/cross'))).status).toBe(404);
  });
});
