// Gateway HTTP behaviour against the real gateway process: first with no
// engine at all (503s, envelopes, discovery, health), then with the in-memory
// fake engine of fixtures/ (routing per family, paging, job states, supervision).
import { execFileSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_ENGINE, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

function expectEnvelope(body: any, code: number, reason?: string): void {
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(typeof body.error.status).toBe('string');
  expect(body.error.errors[0].domain).toBe('global');
  if (reason) expect(body.error.errors[0].reason).toBe(reason);
}

describe('gateway without an engine (--engine-binary "")', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ engineBinary: '' });
  });
  afterAll(async () => emu?.stop());

  it('answers health by itself, never ok while no engine serves (spec §1.1)', async () => {
    for (const p of ['/', '/healthz']) {
      const r = await rest(emu.url + p);
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ service: 'warehouse-emulator', status: 'starting', message: expect.stringMatching(/no engine serving on 127\.0\.0\.1:\d+/) });
    }
  });

  it('answers engine-backed routes with a prompt 503 envelope', async () => {
    const t0 = Date.now();
    for (const p of ['/bigquery/v2/projects/p/datasets', '/warehouse/v2/projects/p/datasets/d/tables/t/data', '/projects/p/datasets/d']) {
      const r = await rest(emu.url + p);
      expect(r.status).toBe(503);
      expectEnvelope(r.body, 503, 'backendError');
    }
    const q = await rest(emu.url + '/bigquery/v2/projects/p/queries', { method: 'POST', json: { query: 'SELECT 1' } });
    expect(q.status).toBe(503);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('renders unknown routes, wrong methods, bad JSON and bad ids as envelopes', async () => {
    const nf = await rest(emu.url + '/no/such/route');
    expect(nf.status).toBe(404);
    expectEnvelope(nf.body, 404, 'notFound');
    const wm = await rest(emu.url + '/bigquery/v2/projects/p/datasets', { method: 'PUT' });
    expect(wm.status).toBe(405);
    expectEnvelope(wm.body, 405);
    const bad = await rest(emu.url + '/bigquery/v2/projects/p/datasets', { method: 'POST', body: '{nope', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expectEnvelope(bad.body, 400, 'parseError');
    const id = await rest(emu.url + '/bigquery/v2/projects/p/datasets', { method: 'POST', json: { datasetReference: { datasetId: 'a/b' } } });
    expect(id.status).toBe(400);
    expect(id.body.error.message).toBe('Invalid dataset ID "a/b". Dataset IDs must be alphanumeric (plus underscores) and must be at most 1024 characters long.');
    const ext = await rest(emu.url + '/bigquery/v2/projects/p/datasets', { method: 'POST', json: { datasetReference: { datasetId: 'x' }, externalDatasetReference: { externalSource: 'x' } } });
    expect(ext.status).toBe(501);
    expectEnvelope(ext.body, 501, 'notImplemented');
    // Raw request: fetch would normalise the dot segment away.
    const dots = await new Promise<{ status: number; body: any }>((res, rej) => {
      const r = httpRequest({ host: '127.0.0.1', port: emu.httpPort, path: '/bigquery/v2/projects/p/datasets/d/tables/..' }, (m) => {
        let t = '';
        m.on('data', (b: Buffer) => (t += b.toString()));
        m.on('end', () => res({ status: m.statusCode ?? 0, body: JSON.parse(t) }));
      });
      r.on('error', rej);
      r.end();
    });
    expect(dots.status).toBe(400);
    expect(dots.body.error.message).toMatch(/Invalid table ID/);
    const slash = await rest(emu.url + '/bigquery/v2/projects/p/datasets/d/tables/a%2Fb');
    expect(slash.status).toBe(400);
    const badUrl = await rest(emu.url + '/bigquery/v2/projects/p/datasets/%zz');
    expect(badUrl.status).toBe(400);
    expectEnvelope(badUrl.body, 400);
    const badGzip = await rest(emu.url + '/bigquery/v2/projects/p/datasets', { method: 'POST', body: 'not gzip', headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' } });
    expect(badGzip.status).toBe(400);
    expectEnvelope(badGzip.body, 400, 'parseError');
    const arr = await rest(emu.url + '/bigquery/v2/projects/p/datasets', { method: 'POST', json: [1] });
    expect(arr.status).toBe(400);
  });

  it('serves a discovery document rooted at the caller', async () => {
    for (const p of ['/$discovery/rest?version=v2', '/discovery/v1/apis/bigquery/v2/rest', '/discovery/v1/apis/warehouse/v2/rest']) {
      const r = await rest(emu.url + p);
      expect(r.status).toBe(200);
      expect(r.body.kind).toBe('discovery#restDescription');
      expect(r.body.rootUrl).toBe(emu.url + '/');
      for (const res of ['datasets', 'tables', 'tabledata', 'jobs', 'projects', 'models', 'routines', 'rowAccessPolicies']) {
        expect(Object.keys(r.body.resources)).toContain(res);
      }
      expect(r.body.resources.jobs.methods.getQueryResults.path).toBe('projects/{+projectId}/queries/{+jobId}');
      expect(r.body.schemas.Job.properties.jobReference.$ref).toBe('JobReference');
    }
  });

  it('serves the stubs: migration store, transfer, projects', async () => {
    for (const v of ['v2alpha', 'v2']) {
      const base = `${emu.url}/${v}/projects/p/locations/us/workflows`;
      const c = await rest(base, { method: 'POST', json: { displayName: 'w' } });
      expect(c.status).toBe(200);
      const id = String(c.body.name).split('/').pop();
      expect((await rest(`${base}/${id}`)).body.displayName).toBe('w');
      expect((await rest(`${base}/${id}:start`, { method: 'POST', json: {} })).status).toBe(200);
      expect((await rest(base)).body.migrationWorkflows.length).toBe(1);
      expect((await rest(`${base}/${id}`, { method: 'DELETE' })).status).toBe(200);
      expect((await rest(`${base}/${id}`)).status).toBe(404);
    }
    expect((await rest(`${emu.url}/v1/projects/p/transferConfigs`)).body).toEqual({ transferConfigs: [] });
    expect((await rest(`${emu.url}/v1/projects/p/locations/eu/dataSources`)).body).toEqual({ dataSources: [] });
    expect((await rest(`${emu.url}/v1/projects/p/transferConfigs/x`)).status).toBe(404);
    expect((await rest(`${emu.url}/v1/projects/p/transferConfigs`, { method: 'POST', json: {} })).status).toBe(501);
    expect((await rest(`${emu.url}/bigquery/v2/projects/p/serviceAccount`)).body.kind).toBe('bigquery#getServiceAccountResponse');
    // projects.list: every valid project seen in a request path (twice is once), never an invalid id.
    await rest(`${emu.url}/bigquery/v2/projects/seen-proj/datasets`);
    await rest(`${emu.url}/projects/seen-proj/datasets`);
    await rest(`${emu.url}/bigquery/v2/projects/bad..id/datasets`);
    const projects = await rest(`${emu.url}/bigquery/v2/projects`);
    expect(projects.body.kind).toBe('bigquery#projectList');
    const ids = (projects.body.projects as { id: string }[]).map((x) => x.id);
    expect(ids.filter((x) => x === 'seen-proj')).toHaveLength(1);
    expect(ids).toContain('p');
    expect(ids).not.toContain('bad..id');
    // seed API is off by default
    expect((await rest(`${emu.url}/api/emulator/seed`, { method: 'POST', json: {} })).status).toBe(404);
  });
});

describe('gateway with the fake engine', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ engineBinary: FAKE_ENGINE, args: ['--enable-seed-api', '--seed-api-seed-token', 'tok', '--log-requests', '--copy-engine-stdout', '--debug'] });
  });
  afterAll(async () => emu?.stop());
  const bq = (p: string): string => `${emu.url}/bigquery/v2/projects/test${p}`;

  it('datasets and tables under every family, kinds following the family', async () => {
    const c = await rest(bq('/datasets?alt=json&prettyPrint=false'), { method: 'POST', json: { datasetReference: { datasetId: 'fam' } } });
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({ kind: 'bigquery#dataset', datasetReference: { projectId: 'test', datasetId: 'fam' }, location: 'US' });
    expect((await rest(`${emu.url}/warehouse/v2/projects/test/datasets/fam`)).body.kind).toBe('warehouse#dataset');
    expect((await rest(`${emu.url}/projects/test/datasets/fam`)).body.kind).toBe('bigquery#dataset');
    const dup = await rest(bq('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'fam' } } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.message).toBe('Already Exists: Dataset test:fam');
    const missing = await rest(bq('/datasets/nope'));
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe('Not found: Dataset test:nope');
    // gzip body + explicit nulls
    const gz = gzipSync(JSON.stringify({ tableReference: { tableId: 't' }, schema: { fields: [{ name: 'a', type: 'INTEGER' }] }, description: null }));
    const t = await fetch(bq('/datasets/fam/tables'), { method: 'POST', body: gz, headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' } });
    expect(t.status).toBe(200);
    const list = await rest(bq('/datasets/fam/tables'));
    expect(list.body.kind).toBe('bigquery#tableList');
    expect(list.body.tables[0]).toMatchObject({ kind: 'bigquery#table', tableReference: { tableId: 't' }, type: 'TABLE' });
    const iam = await rest(bq('/datasets/fam/tables/t:getIamPolicy'), { method: 'POST', json: {} });
    expect(iam.status).toBe(200);
    expect((await rest(bq('/datasets/fam/tables/t:testIamPermissions'), { method: 'POST', json: { permissions: ['a'] } })).body).toEqual({ permissions: ['a'] });
    const del = await rest(bq('/datasets/fam'), { method: 'DELETE' });
    expect(del.status).toBe(400);
    expect(del.body.error.status).toBe('failedPrecondition');
    expect((await rest(bq('/datasets/fam?deleteContents=true'), { method: 'DELETE' })).status).toBe(204);
  });

  it('tabledata: insertAll with bq-style nulls, paging by pageToken and startIndex, maxResults=0', async () => {
    await rest(bq('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'rows' } } });
    await rest(bq('/datasets/rows/tables'), { method: 'POST', json: { tableReference: { tableId: 't' }, schema: { fields: [{ name: 'n', type: 'INTEGER' }] } } });
    const ins = await rest(bq('/datasets/rows/tables/t/insertAll?alt=json'), {
      method: 'POST',
      json: { skipInvalidRows: null, ignoreUnknownValues: null, templateSuffix: null, rows: [1, 2, 3, 4, 5].map((n) => ({ json: { n } })) },
    });
    expect(ins.body).toEqual({ kind: 'bigquery#tableDataInsertAllResponse' });
    const p1 = await rest(bq('/datasets/rows/tables/t/data?maxResults=2'));
    expect(p1.body).toMatchObject({ kind: 'bigquery#tableDataList', totalRows: '5', pageToken: '2' });
    expect(p1.body.rows).toHaveLength(2);
    const p2 = await rest(bq(`/datasets/rows/tables/t/data?maxResults=2&pageToken=${p1.body.pageToken}`));
    expect(p2.body.rows.map((r: any) => r.f[0].v)).toEqual(['3', '4']);
    const s = await rest(bq('/datasets/rows/tables/t/data?startIndex=4'));
    expect(s.body.rows.map((r: any) => r.f[0].v)).toEqual(['5']);
    expect(s.body.pageToken).toBeUndefined();
    const z = await rest(bq('/datasets/rows/tables/t/data?maxResults=0'));
    expect(Object.keys(z.body).sort()).toEqual(['etag', 'kind', 'totalRows']);
    const empty = await rest(bq('/datasets/rows/tables/t/insertAll'), { method: 'POST', json: { rows: [] } });
    expect(empty.status).toBe(400);
  });

  it('jobs.query answers with a jobReference (also JOB_CREATION_OPTIONAL) and honours requestId', async () => {
    const r = await rest(bq('/queries'), { method: 'POST', json: { query: 'SELECT 7', useLegacySql: false, requestId: 'r1', jobCreationMode: 'JOB_CREATION_OPTIONAL' } });
    expect(r.body).toMatchObject({ kind: 'bigquery#queryResponse', jobComplete: true, totalRows: '1', rows: [{ f: [{ v: '7' }] }], cacheHit: false });
    expect(r.body.jobReference).toMatchObject({ projectId: 'test', location: 'US' });
    expect(r.body.queryId).toBe(r.body.jobReference.jobId);
    const again = await rest(bq('/queries'), { method: 'POST', json: { query: 'SELECT 7', useLegacySql: false, requestId: 'r1' } });
    expect(again.body.jobReference.jobId).toBe(r.body.jobReference.jobId);
    const bad = await rest(bq('/queries'), { method: 'POST', json: { query: 'BOGUS', useLegacySql: false } });
    expect(bad.status).toBe(400);
    expectEnvelope(bad.body, 400, 'invalidQuery');
    const legacy = await rest(bq('/queries'), { method: 'POST', json: { query: 'SELECT * FROM TABLE_QUERY(d, "x")' } });
    expect(legacy.status).toBe(400);
    expectEnvelope(legacy.body, 400, 'invalidQuery');
    const sess = await rest(bq('/queries'), { method: 'POST', json: { query: 'ECHO', useLegacySql: false, createSession: true } });
    const sessionId = sess.body.sessionInfo.sessionId;
    expect(sessionId).toMatch(/^session_/);
    const inSession = await rest(bq('/queries'), { method: 'POST', json: { query: 'ECHO', useLegacySql: false, connectionProperties: [{ key: 'session_id', value: sessionId }], defaultDataset: { datasetId: 'dd' } } });
    const echoed = JSON.parse(inSession.body.rows[0].f[0].v);
    expect(echoed).toMatchObject({ session_id: sessionId, default_dataset: { project_id: 'test', dataset_id: 'dd' }, string_scalars: true, timestamp_format: 'TIMESTAMP_FLOAT_SECONDS' });
    const dry = await rest(bq('/queries'), { method: 'POST', json: { query: 'SELECT 1', useLegacySql: false, dryRun: true } });
    expect(dry.body).toMatchObject({ jobComplete: true, totalBytesProcessed: '0' });
  });

  it('jobs.insert -> RUNNING -> DONE, long-polled getQueryResults, paging, list filters, cancel, delete', async () => {
    const ins = await rest(bq('/jobs'), { method: 'POST', json: { configuration: { query: { query: 'SLEEP 2500' } }, jobReference: { jobId: 'slow1', projectId: 'test' } } });
    expect(ins.body.status.state).toBe('RUNNING');
    expect(ins.body.jobReference).toEqual({ projectId: 'test', jobId: 'slow1', location: 'US' });
    const quick = await rest(bq('/queries/slow1?timeoutMs=0'));
    expect(quick.body.jobComplete).toBe(false);
    const running = await rest(bq('/jobs?stateFilter=running'));
    expect(running.body.jobs.map((j: any) => j.jobReference.jobId)).toContain('slow1');
    const t0 = Date.now();
    const done = await rest(bq('/queries/slow1'));
    expect(done.body.jobComplete).toBe(true);
    expect(Date.now() - t0).toBeLessThan(5000);
    const job = await rest(bq('/jobs/slow1?location=US'));
    expect(job.body.status).toEqual({ state: 'DONE' });
    expect(job.body.statistics).toMatchObject({ creationTime: expect.any(String), startTime: expect.any(String), endTime: expect.any(String) });
    expect(job.body.configuration.query.destinationTable).toMatchObject({ projectId: 'test' });
    const dupe = await rest(bq('/jobs'), { method: 'POST', json: { configuration: { query: { query: 'SELECT 1' } }, jobReference: { jobId: 'slow1' } } });
    expect(dupe.status).toBe(409);

    await rest(bq('/jobs'), { method: 'POST', json: { configuration: { query: { query: 'ROWS 25', useLegacySql: false } }, jobReference: { jobId: 'many' } } });
    const pg = await rest(bq('/queries/many?maxResults=10&startIndex=0'));
    expect(pg.body).toMatchObject({ totalRows: '25', pageToken: '10' });
    const pg2 = await rest(bq('/queries/many?pageToken=20'));
    expect(pg2.body.rows.map((r: any) => r.f[0].v)).toEqual(['20', '21', '22', '23', '24']);
    const zero = await rest(bq('/queries/many?maxResults=0'));
    expect(zero.body.rows).toBeUndefined();
    expect(zero.body.totalRows).toBe('25');

    const failed = await rest(bq('/jobs'), { method: 'POST', json: { configuration: { query: { query: 'NOPE', useLegacySql: false } } } });
    expect(failed.status).toBe(200);
    expect(failed.body.status.state).toBe('DONE');
    expect(failed.body.status.errorResult.reason).toBe('invalidQuery');
    const failedRes = await rest(bq(`/queries/${failed.body.jobReference.jobId}`));
    expectEnvelope(failedRes.body, 400, 'invalidQuery');

    const dry = await rest(bq('/jobs'), { method: 'POST', json: { configuration: { dryRun: true, query: { query: 'SELECT 1', useLegacySql: false } } } });
    expect(dry.body.status.state).toBe('DONE');
    expect(dry.body.statistics).toMatchObject({ totalBytesProcessed: '0', query: { totalBytesProcessed: '0' } });

    await rest(bq('/jobs'), { method: 'POST', json: { configuration: { query: { query: 'SLEEP 30000' } }, jobReference: { jobId: 'tocancel' } } });
    const cancel = await rest(bq('/jobs/tocancel/cancel'), { method: 'POST' });
    expect(cancel.body.kind).toBe('bigquery#jobCancelResponse');
    expect(cancel.body.job.status.state).toBe('DONE');
    expect(cancel.body.job.status.errorResult.reason).toBe('stopped');

    const list = await rest(bq('/jobs?projection=full&maxResults=2'));
    expect(list.body.jobs).toHaveLength(2);
    expect(list.body.nextPageToken).toBeDefined();
    expect((await rest(bq('/jobs?allUsers=true'))).status).toBe(501);
    const doneOnly = await rest(bq('/jobs?stateFilter=done&stateFilter=pending&maxResults=1000'));
    expect(doneOnly.body.jobs.every((j: any) => j.state === 'DONE')).toBe(true);

    const js = await rest(bq('/queries'), { method: 'POST', json: { query: 'SELECT COUNT(*) FROM `region-us`.INFORMATION_SCHEMA.JOBS', useLegacySql: false } });
    expect(Number(js.body.rows[0].f[0].v)).toBeGreaterThan(3);

    await rest(bq('/jobs'), { method: 'POST', json: { configuration: { query: { query: 'SCRIPT', useLegacySql: false } }, jobReference: { jobId: 'script1' } } });
    expect((await rest(bq('/queries/script1'))).body.jobComplete).toBe(true);
    const script = await rest(bq('/jobs/script1'));
    expect(script.body.statistics.numChildJobs).toBe('2');
    const kids = await rest(bq('/jobs?parentJobId=script1'));
    expect(kids.body.jobs.map((j: any) => j.statistics.query.statementType).sort()).toEqual(['CREATE_TABLE', 'INSERT']);
    expect((await rest(bq('/jobs?maxResults=1000'))).body.jobs.some((j: any) => j.jobReference.jobId.startsWith('script_job_'))).toBe(false);

    const deleted = await rest(bq('/jobs/slow1/delete'), { method: 'DELETE' });
    expect([deleted.status, deleted.body]).toEqual([200, {}]);
    const gone = await rest(bq('/jobs/slow1'));
    expect(gone.status).toBe(404);
    expect(gone.body.error.message).toBe('Not found: Job test:slow1');
  });

  it('--log-requests, --copy-engine-stdout and --debug show up in the output', async () => {
    await rest(bq('/datasets?logcheck=1'));
    await new Promise((r) => setTimeout(r, 100));
    const out = emu.output();
    expect(out).toMatch(/GET \/bigquery\/v2\/projects\/test\/datasets\?logcheck=1 -> 200 \(/);
    expect(out).toMatch(/engine serving on \d+/);
    expect(out).toMatch(/engine: spawning/);
  });

  it('seed API: token gate then 501 pointing at --seed-data-file', async () => {
    const noTok = await rest(`${emu.url}/api/emulator/seed`, { method: 'POST', json: { source: { project: 'x' } } });
    expect(noTok.status).toBe(403);
    const ok = await rest(`${emu.url}/api/emulator/seed`, { method: 'POST', json: { source: { project: 'x' } }, headers: { 'X-BigQuery-Emulator-Seed-Token': 'tok' } });
    expect(ok.status).toBe(501);
    expect(ok.body.error.message).toMatch(/--seed-data-file/);
    const mixed = await rest(`${emu.url}/api/emulator/seed`, { method: 'POST', json: { source: { project: 'x' }, destination: { dataset: 'd' } }, headers: { 'X-Warehouse-Emulator-Seed-Token': 'tok' } });
    expect(mixed.status).toBe(400);
  });

  it('restarts a dead engine, answering 503 meanwhile, and leaves no orphan on stop', async () => {
    const crash = await rest(bq('/queries'), { method: 'POST', json: { query: 'CRASH', useLegacySql: false } });
    expect(crash.status).toBe(503);
    const t0 = Date.now();
    let status = 0;
    while (Date.now() - t0 < 15_000) {
      status = (await rest(bq('/datasets'))).status;
      if (status === 200) break;
      expect(status).toBe(503);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    const enginePids = (): string[] => {
      try {
        return execFileSync('pgrep', ['-P', String(emu.proc.pid)]).toString().trim().split('\n').filter(Boolean);
      } catch {
        return [];
      }
    };
    const children = enginePids();
    expect(children.length).toBe(1);
    await emu.stop();
    await new Promise((r) => setTimeout(r, 300));
    for (const pid of children) {
      expect(() => process.kill(Number(pid), 0)).toThrow();
    }
  });
});
