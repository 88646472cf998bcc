// Script child jobs, EXPORT DATA / LOAD DATA as query jobs, AVRO loads and
// unsupported external sources, over HTTP against the real engine (and the
// Node client for jobs.list with parentJobId).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BigQuery } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

describe.skipIf(!hasRealEngine())('script child jobs and data statements over HTTP', () => {
  let emu: Emulator;
  const dir = mkdtempSync(join(tmpdir(), 'p3-data-'));
  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    emu = await startEmulator();
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/sj${p}`;
  const query = async (sql: string): Promise<{ status: number; body: any }> =>
    rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });

  it('a script reports one child job per statement (jobs.list parentJobId, jobs.get, getQueryResults, INFORMATION_SCHEMA.JOBS)', async () => {
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } });
    const sql = 'CREATE TABLE d.t (x INT64);\nINSERT d.t VALUES (1), (2);\n  SELECT SUM(x) AS s FROM d.t;';
    const q = await query(sql);
    expect(q.status).toBe(200);
    expect(q.body.rows).toEqual([{ f: [{ v: '3' }] }]);
    const parentId: string = q.body.jobReference.jobId;
    const parent = await rest(url(`/jobs/${parentId}`));
    expect(parent.body.statistics.numChildJobs).toBe('3');
    expect(parent.body.statistics.query.statementType).toBe('SCRIPT');

    const list = await rest(url(`/jobs?parentJobId=${parentId}`));
    expect(list.status).toBe(200);
    expect(list.body.jobs).toHaveLength(3);
    const ids: string[] = list.body.jobs.map((j: any) => j.jobReference.jobId).sort();
    expect(ids).toEqual([0, 1, 2].map((i) => `script_job_${parentId}_${i}`).sort());

    const kids = await Promise.all(ids.map(async (id) => (await rest(url(`/jobs/${id}`))).body));
    const byType = new Map(kids.map((k: any) => [k.statistics.query.statementType, k]));
    expect([...byType.keys()].sort()).toEqual(['CREATE_TABLE', 'INSERT', 'SELECT']);
    for (const k of kids) {
      expect(k.statistics.parentJobId).toBe(parentId);
      expect(k.status).toEqual({ state: 'DONE' });
      expect(k.statistics.scriptStatistics.evaluationKind).toBe('STATEMENT');
    }
    const insert = byType.get('INSERT');
    expect(insert.configuration.query.query).toBe('INSERT d.t VALUES (1), (2)');
    expect(insert.statistics.query.numDmlAffectedRows).toBe('2');
    expect(insert.statistics.scriptStatistics.stackFrames).toEqual([{ startLine: 2, startColumn: 1, endLine: 2, endColumn: 26, text: 'INSERT d.t VALUES (1), (2)' }]);
    const select = byType.get('SELECT');
    expect(select.statistics.scriptStatistics.stackFrames[0]).toMatchObject({ startLine: 3, startColumn: 3 });
    expect(byType.get('CREATE_TABLE').statistics.query.ddlTargetTable).toEqual({ projectId: 'sj', datasetId: 'd', tableId: 't' });
    // The SELECT child has its own result.
    const res = await rest(url(`/queries/${select.jobReference.jobId}`));
    expect(res.body.rows).toEqual([{ f: [{ v: '3' }] }]);
    expect(res.body.schema.fields.map((f: any) => f.name)).toEqual(['s']);

    // Top-level listings leave children out, as the real jobs.list does without parentJobId.
    const top = await rest(url('/jobs'));
    expect(top.body.jobs.some((j: any) => String(j.jobReference.jobId).startsWith('script_job_'))).toBe(false);

    const info = await query(`SELECT job_id, statement_type FROM \`region-us\`.INFORMATION_SCHEMA.JOBS WHERE parent_job_id = '${parentId}' ORDER BY job_id`);
    expect(info.status).toBe(200);
    expect(info.body.rows.map((r: any) => r.f[1].v).sort()).toEqual(['CREATE_TABLE', 'INSERT', 'SELECT']);

    // Deleting the script job deletes its children, as the real jobs.delete does.
    expect((await rest(url(`/jobs/${parentId}/delete`), { method: 'DELETE' })).status).toBe(200);
    expect((await rest(url(`/jobs/${ids[0]}`))).status).toBe(404);
    expect((await rest(url(`/jobs?parentJobId=${parentId}`))).body.jobs ?? []).toEqual([]);

    // A single statement is no script: no children.
    const single = await query('SELECT 1 AS one');
    const one = await rest(url(`/jobs/${single.body.jobReference.jobId}`));
    expect(one.body.statistics.numChildJobs).toBeUndefined();
    expect((await rest(url(`/jobs?parentJobId=${single.body.jobReference.jobId}`))).body.jobs ?? []).toEqual([]);
  });

  it('a statement that fails inside an EXCEPTION block is a failed child job; the script goes on', async () => {
    const q = await query("BEGIN\n  SELECT ERROR('boom');\nEXCEPTION WHEN ERROR THEN\n  SELECT 'handled' AS h;\nEND;");
    expect(q.status).toBe(200);
    expect(q.body.rows).toEqual([{ f: [{ v: 'handled' }] }]);
    const parentId: string = q.body.jobReference.jobId;
    const kids = (await rest(url(`/jobs?parentJobId=${parentId}`))).body.jobs;
    expect(kids).toHaveLength(2);
    const failed = (await rest(url(`/jobs/script_job_${parentId}_0`))).body;
    expect(failed.configuration.query.query).toBe("SELECT ERROR('boom')");
    expect(failed.status.errorResult.reason).toBe('invalidQuery');
    expect(failed.status.errorResult.message).toContain('boom');
    expect(failed.statistics.scriptStatistics.stackFrames[0]).toMatchObject({ startLine: 2, startColumn: 3 });
    const handled = (await rest(url(`/jobs/script_job_${parentId}_1`))).body;
    expect(handled.status).toEqual({ state: 'DONE' });
    expect(handled.statistics.query.statementType).toBe('SELECT');
    expect((await rest(url(`/jobs/${parentId}`))).body.statistics.numChildJobs).toBe('2');
  });

  it('a failed script fails its job and still lists the children that ran, the failing one with its error', async () => {
    const q = await query("SELECT 1 AS a;\nSELECT ERROR('stop here');\nSELECT 3 AS never;");
    expect(q.status).toBe(400);
    expect(q.body.error.message).toContain('stop here');
    const jobs = (await rest(url('/jobs?stateFilter=done'))).body.jobs as any[];
    const parent = jobs.find((j) => j.errorResult && String(j.errorResult.message).includes('stop here'));
    expect(parent).toBeDefined();
    const parentId: string = parent.jobReference.jobId;
    const full = (await rest(url(`/jobs/${parentId}`))).body;
    expect(full.status.errorResult.message).toContain('stop here');
    expect(full.statistics.numChildJobs).toBe('2');
    const kids = (await rest(url(`/jobs?parentJobId=${parentId}`))).body.jobs as any[];
    expect(kids).toHaveLength(2);
    const first = (await rest(url(`/jobs/script_job_${parentId}_0`))).body;
    expect(first.status).toEqual({ state: 'DONE' });
    expect(first.configuration.query.query).toBe('SELECT 1 AS a');
    const second = (await rest(url(`/jobs/script_job_${parentId}_1`))).body;
    expect(second.status.errorResult.message).toContain('stop here');
    expect(second.statistics.scriptStatistics.stackFrames[0]).toMatchObject({ startLine: 2, startColumn: 1 });
  });

  it('a long loop reports every child in numChildJobs but registers the newest 1000, rows for the newest 100', async () => {
    const q = await query('DECLARE i INT64 DEFAULT 0;\nWHILE i < 1005 DO\n  SET i = i + 1;\n  SELECT i AS n;\nEND WHILE;');
    expect(q.status).toBe(200);
    expect(q.body.rows).toEqual([{ f: [{ v: '1005' }] }]);
    const parentId: string = q.body.jobReference.jobId;
    expect((await rest(url(`/jobs/${parentId}`))).body.statistics.numChildJobs).toBe('1005');
    expect((await rest(url(`/jobs/script_job_${parentId}_4`))).status).toBe(404);
    const oldest = await rest(url(`/jobs/script_job_${parentId}_5`));
    expect(oldest.body.configuration.query.query).toBe('SELECT i AS n');
    const newest = await rest(url(`/queries/script_job_${parentId}_1004`));
    expect(newest.body.rows).toEqual([{ f: [{ v: '1005' }] }]);
    const page = await rest(url(`/jobs?parentJobId=${parentId}&maxResults=1000`));
    expect(page.body.jobs).toHaveLength(1000);
  });

  it('statements in a CALLed procedure are child jobs with the procedure and the CALL on their stack', async () => {
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'pr' } } });
    const q = await query('CREATE PROCEDURE pr.twice(x INT64)\nBEGIN\n  SELECT x * 2 AS y;\nEND;\nCALL pr.twice(21);');
    expect(q.status).toBe(200);
    expect(q.body.rows).toEqual([{ f: [{ v: '42' }] }]);
    const parentId: string = q.body.jobReference.jobId;
    expect((await rest(url(`/jobs/${parentId}`))).body.statistics.numChildJobs).toBe('2');
    const inner = (await rest(url(`/jobs/script_job_${parentId}_1`))).body;
    expect(inner.configuration.query.query).toBe('SELECT x * 2 AS y');
    expect(inner.statistics.scriptStatistics.stackFrames).toEqual([
      { startLine: 3, startColumn: 3, endLine: 3, endColumn: 19, procedureId: 'sj.pr.twice', text: 'SELECT x * 2 AS y' },
      { startLine: 5, startColumn: 1, endLine: 5, endColumn: 17, text: 'CALL pr.twice(21)' },
    ]);
    expect((await rest(url(`/queries/script_job_${parentId}_1`))).body.rows).toEqual([{ f: [{ v: '42' }] }]);
  });

  it('Node client: getJobs({parentJobId}) lists the script children', async () => {
    const bq = new BigQuery({ projectId: 'sj', apiEndpoint: emu.url, authClient: fakeAuth() });
    const [job] = await bq.createQueryJob({ query: 'DECLARE n INT64 DEFAULT 2;\nSELECT n * 10 AS v;\nSELECT n + 1 AS w;' });
    const [rows] = await job.getQueryResults();
    expect(rows).toEqual([{ w: 3 }]);
    const [children] = await bq.getJobs({ parentJobId: job.id! });
    expect(children).toHaveLength(2);
    for (const c of children) {
      expect(c.metadata.statistics.parentJobId).toBe(job.id);
      expect(c.metadata.statistics.query.statementType).toBe('SELECT');
    }
    const texts = children.map((c) => c.metadata.configuration.query.query).sort();
    expect(texts).toEqual(['SELECT n * 10 AS v', 'SELECT n + 1 AS w']);
    const first = children.find((c) => c.metadata.configuration.query.query === 'SELECT n * 10 AS v')!;
    const [firstRows] = await first.getQueryResults();
    expect(firstRows).toEqual([{ v: 20 }]);
  });

  it('EXPORT DATA and LOAD DATA run as query jobs with their statement types and statistics', async () => {
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'io' } } });
    const uri = `file://${dir}/ex_*.csv`;
    const ex = await query(`EXPORT DATA OPTIONS (uri = '${uri}', format = 'CSV', header = true) AS SELECT 1 AS id, 'a' AS s UNION ALL SELECT 2, 'b'`);
    expect(ex.status).toBe(200);
    const exJob = await rest(url(`/jobs/${ex.body.jobReference.jobId}`));
    expect(exJob.body.statistics.query.statementType).toBe('EXPORT_DATA');
    expect(exJob.body.statistics.query.exportDataStatistics).toEqual({ fileCount: '1', rowCount: '2' });
    expect(readFileSync(`${dir}/ex_000000000000.csv`, 'utf8')).toBe('id,s\n1,a\n2,b\n');

    const ld = await query(`LOAD DATA INTO io.t FROM FILES (format = 'CSV', uris = ['${uri}'], skip_leading_rows = 1)`);
    expect(ld.status).toBe(200);
    const ldJob = await rest(url(`/jobs/${ld.body.jobReference.jobId}`));
    expect(ldJob.body.statistics.query.statementType).toBe('LOAD_DATA');
    expect(ldJob.body.statistics.query.loadQueryStatistics).toMatchObject({ inputFiles: '1', outputRows: '2', badRecords: '0' });
    const table = await rest(url('/datasets/io/tables/t'));
    expect(table.body.schema.fields.map((f: any) => [f.name, f.type])).toEqual([['id', 'INTEGER'], ['s', 'STRING']]);

    const clustered = await query(`LOAD DATA INTO io.c (id INT64, s STRING) CLUSTER BY s OPTIONS (description = 'from files') FROM FILES (format = 'CSV', uris = ['${uri}'], skip_leading_rows = 1)`);
    expect(clustered.status).toBe(200);
    const ct = (await rest(url('/datasets/io/tables/c'))).body;
    expect(ct.clustering).toEqual({ fields: ['s'] });
    expect(ct.description).toBe('from files');
    expect(ct.numRows).toBe('2');

    const again = await query(`EXPORT DATA OPTIONS (uri = '${uri}', format = 'CSV') AS SELECT 1 AS id`);
    expect(again.status).toBe(400);
    expect(again.body.error.message).toContain('is not empty');
    const badUri = await query(`EXPORT DATA OPTIONS (uri = 'gs://b/one.csv', format = 'CSV') AS SELECT 1 AS id`);
    expect(badUri.status).toBe(400);
    expect(badUri.body.error.errors[0].reason).toBe('invalidQuery');
  });

  it('AVRO load jobs map logical types per useAvroLogicalTypes; AVRO extracts', async () => {
    const avro = `file://${dir}/av_*.avro`;
    const ex = await query(`EXPORT DATA OPTIONS (uri = '${avro}', format = 'AVRO', use_avro_logical_types = true) AS SELECT 1 AS id, TIMESTAMP '2024-01-01 00:00:00 UTC' AS ts, DATE '2024-01-02' AS d`);
    expect(ex.status).toBe(200);
    const load = async (tableId: string, logical: boolean): Promise<any> =>
      rest(url('/jobs'), { method: 'POST', json: { configuration: { load: { destinationTable: { datasetId: 'io', tableId }, sourceFormat: 'AVRO', sourceUris: [avro], useAvroLogicalTypes: logical } } } });
    const withTypes = await load('av1', true);
    expect(withTypes.body.status).toEqual({ state: 'DONE' });
    const t1 = await rest(url('/datasets/io/tables/av1'));
    expect(t1.body.schema.fields.map((f: any) => [f.name, f.type, f.mode])).toEqual([['id', 'INTEGER', 'NULLABLE'], ['ts', 'TIMESTAMP', 'NULLABLE'], ['d', 'DATE', 'NULLABLE']]);
    const rows1 = await rest(url('/datasets/io/tables/av1/data'));
    expect(rows1.body.rows).toEqual([{ f: [{ v: '1' }, { v: '1.7040672E9' }, { v: '2024-01-02' }] }]);
    await load('av2', false);
    const t2 = await rest(url('/datasets/io/tables/av2'));
    expect(t2.body.schema.fields.map((f: any) => f.type)).toEqual(['INTEGER', 'INTEGER', 'INTEGER']);
    expect((await rest(url('/datasets/io/tables/av2/data'))).body.rows).toEqual([{ f: [{ v: '1' }, { v: '1704067200000000' }, { v: '19724' }] }]);

    const out = `file://${dir}/extract_*.avro`;
    const extract = await rest(url('/jobs'), { method: 'POST', json: { configuration: { extract: { sourceTable: { datasetId: 'io', tableId: 'av1' }, destinationUris: [out], destinationFormat: 'AVRO' } } } });
    expect(extract.body.status).toEqual({ state: 'DONE' });
    const back = await rest(url('/jobs'), { method: 'POST', json: { configuration: { load: { destinationTable: { datasetId: 'io', tableId: 'av3' }, sourceFormat: 'AVRO', sourceUris: [out], useAvroLogicalTypes: true } } } });
    expect(back.body.status).toEqual({ state: 'DONE' });
    expect((await rest(url('/datasets/io/tables/av3/data'))).body.rows).toEqual(rows1.body.rows);

    const pq = `file://${dir}/extract_*.parquet`;
    const toParquet = await rest(url('/jobs'), { method: 'POST', json: { configuration: { extract: { sourceTable: { datasetId: 'io', tableId: 'av1' }, destinationUris: [pq], destinationFormat: 'PARQUET' } } } });
    expect(toParquet.body.status).toEqual({ state: 'DONE' });
    const fromParquet = await rest(url('/jobs'), { method: 'POST', json: { configuration: { load: { destinationTable: { datasetId: 'io', tableId: 'pq' }, sourceFormat: 'PARQUET', sourceUris: [pq] } } } });
    expect(fromParquet.body.status).toEqual({ state: 'DONE' });
    const pqTable = await rest(url('/datasets/io/tables/pq'));
    expect(pqTable.body.schema.fields.map((f: any) => f.name)).toEqual(['id', 'ts', 'd']);
    expect((await rest(url('/datasets/io/tables/pq/data'))).body.rows[0].f[0]).toEqual({ v: '1' });
  });

  it('LOAD DATA WITH CONNECTION: no connection exists here, so the service\'s 404 for a missing connection, in its envelope', async () => {
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'io' } } });
    for (const conn of ['`p.us.lake`', "'projects/p/locations/us/connections/lake'", 'DEFAULT']) {
      const r = await query(`LOAD DATA INTO io.conn (id INT64) FROM FILES (format = 'PARQUET', uris = ['gs://b/x.parquet']) WITH CONNECTION ${conn}`);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe(404);
      expect(r.body.error.errors[0].reason).toBe('notFound');
      expect(r.body.error.message).toMatch(/^Not found: Connection /);
    }
    expect((await rest(url('/datasets/io/tables/conn'))).status).toBe(404);
  });

  it('EXTERNAL_QUERY and OBJ.MAKE_REF: the connection they name does not exist either, the same 404 envelope', async () => {
    for (const sql of ["SELECT * FROM EXTERNAL_QUERY('p.us.pg', 'SELECT 1 AS x')", "SELECT OBJ.MAKE_REF('gs://b/o.jpg', 'us.reader') AS r"]) {
      const r = await query(sql);
      expect(r.status).toBe(404);
      expect(r.body.error.errors[0].reason).toBe('notFound');
      expect(r.body.error.message).toMatch(/^Not found: Connection (p\.us\.pg|us\.reader)$/);
    }
  });

  it('external tables over Google Sheets or bare https are rejected instead of reading empty', async () => {
    const sheets = await rest(url('/datasets/io/tables'), {
      method: 'POST',
      json: { tableReference: { tableId: 'sheet' }, externalDataConfiguration: { sourceFormat: 'GOOGLE_SHEETS', sourceUris: ['https://docs.google.com/spreadsheets/d/abc/edit'], autodetect: true } },
    });
    expect(sheets.status).toBe(400);
    expect(sheets.body.error.errors[0].reason).toBe('invalid');
    expect(sheets.body.error.message).toContain('Google Sheets');
    expect((await rest(url('/datasets/io/tables/sheet'))).status).toBe(404);
    const web = await rest(url('/datasets/io/tables'), {
      method: 'POST',
      json: { tableReference: { tableId: 'web' }, externalDataConfiguration: { sourceFormat: 'CSV', sourceUris: ['https://example.com/data.csv'] } },
    });
    expect(web.status).toBe(400);
    const q = await rest(url('/queries'), {
      method: 'POST',
      json: { query: 'SELECT COUNT(*) FROM s', useLegacySql: false, tableDefinitions: { s: { sourceFormat: 'GOOGLE_SHEETS', sourceUris: ['https://docs.google.com/spreadsheets/d/abc/edit'] } } },
    });
    expect(q.status).toBe(400);
    expect(q.body.error.message).toContain('Google Sheets');
  });
});
