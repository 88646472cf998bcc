// An unseen set (issue 16, set ba, sql61 session): the rules of datasets, snapshots, clones and labels that only the
// REST interface or a located job shows, through HTTP. Pages: table-snapshots-create.md and table-clones-create.md
// (the snapshot's or clone's dataset in the base table's region), labels-intro.md (Requirements for labels: at most 64,
// keys 1-63 lowercase letters, digits, _ and -, starting with a letter; values 0-63), deleting-labels.md (API: a
// label set to null in a patch is deleted), filtering-labels.md (Limitations on filter specifications: only AND,
// labels.key[:value] terms, each key once, at most ten), adding-labels.md (jobs: the same key and value rules).
// First run (before any fix) and what changed are in the sql61 report and commit messages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

describe.skipIf(!hasRealEngine())('set ba: dataset, snapshot and label rules over REST', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => emu?.stop());
  const api = (p: string): string => `${emu.url}/bigquery/v2/projects/pba${p}`;
  const query = (sql: string) => rest(api('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
  const mkDataset = async (id: string, extra: Record<string, unknown> = {}) => {
    const r = await rest(api('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: id }, ...extra } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  const reason = (r: { body: any }): string | undefined => r.body?.error?.errors?.[0]?.reason;
  const labelsOf = (n: number): Record<string, string> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i + 1}`, 'v']));

  it('a snapshot or clone into a dataset of another location is refused and makes nothing', async () => {
    await mkDataset('home', { location: 'US' });
    await mkDataset('abroad', { location: 'EU' });
    expect((await query('CREATE TABLE home.base (a INT64)')).status).toBe(200);
    for (const sql of ['CREATE SNAPSHOT TABLE abroad.snap CLONE home.base', 'CREATE TABLE abroad.twin CLONE home.base']) {
      const r = await query(sql);
      expect(r.status, sql).toBeGreaterThanOrEqual(400);
      expect(r.status, sql).toBeLessThan(500);
    }
    expect((await rest(api('/datasets/abroad/tables/snap'))).status).toBe(404);
    expect((await rest(api('/datasets/abroad/tables/twin'))).status).toBe(404);
    const copy = await rest(api('/jobs'), {
      method: 'POST',
      json: { configuration: { copy: { sourceTable: { projectId: 'pba', datasetId: 'home', tableId: 'base' }, destinationTable: { projectId: 'pba', datasetId: 'abroad', tableId: 'jobsnap' }, operationType: 'SNAPSHOT' } } },
    });
    const failed = copy.status >= 400 || copy.body?.status?.errorResult !== undefined;
    expect(failed, JSON.stringify(copy.body)).toBe(true);
    expect((await rest(api('/datasets/abroad/tables/jobsnap'))).status).toBe(404);
  });

  it('datasets.insert and tables.insert refuse labels the labels page does not allow', async () => {
    const bad: Record<string, string>[] = [{ Env: 'x' }, { env: 'Prod' }, { '1st': 'x' }, { ['k'.repeat(64)]: 'x' }, { k: 'v'.repeat(64) }, { '': 'x' }, labelsOf(65)];
    for (const [i, labels] of bad.entries()) {
      const r = await rest(api('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: `bad${i}` }, labels } });
      expect(r.status, JSON.stringify(labels).slice(0, 80)).toBe(400);
      expect(reason(r)).toBe('invalid');
    }
    await mkDataset('lab', { labels: { ...labelsOf(63), tag_only: '' } });
    const t = await rest(api('/datasets/lab/tables'), { method: 'POST', json: { tableReference: { tableId: 't' }, labels: { Team: 'a' } } });
    expect(t.status).toBe(400);
    expect(reason(t)).toBe('invalid');
    const ok = await rest(api('/datasets/lab/tables'), { method: 'POST', json: { tableReference: { tableId: 't' }, labels: { team: 'a', 'ключ': 'значение' } } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('a patch setting a label to null deletes that label and keeps the others', async () => {
    await mkDataset('patchy', { labels: { color: 'red', size: 'big' } });
    const r = await rest(api('/datasets/patchy'), { method: 'PATCH', json: { labels: { color: null } } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await rest(api('/datasets/patchy'))).body.labels).toEqual({ size: 'big' });
    const bad = await rest(api('/datasets/patchy'), { method: 'PATCH', json: { labels: { Size: 'x' } } });
    expect(bad.status).toBe(400);
    expect((await rest(api('/datasets/patchy'))).body.labels).toEqual({ size: 'big' });
  });

  it('datasets.list filters on labels as the filter syntax allows, and refuses the rest', async () => {
    await mkDataset('f_a', { labels: { env: 'prod', team: 'x' } });
    await mkDataset('f_b', { labels: { env: 'dev', team: 'x' } });
    await mkDataset('f_c', { labels: { owner: 'ann' } });
    const list = async (filter: string) => rest(api(`/datasets?filter=${encodeURIComponent(filter)}`));
    const ids = async (filter: string): Promise<string[]> => {
      const r = await list(filter);
      expect(r.status, filter).toBe(200);
      return ((r.body.datasets ?? []) as { datasetReference: { datasetId: string } }[]).map((d) => d.datasetReference.datasetId).filter((d) => d.startsWith('f_')).sort();
    };
    expect(await ids('labels.env:prod')).toEqual(['f_a']);
    expect(await ids('labels.team')).toEqual(['f_a', 'f_b']);
    expect(await ids('labels.team:x labels.env:dev')).toEqual(['f_b']);
    expect(await ids('labels.team:x AND labels.env:prod')).toEqual(['f_a']);
    for (const filter of ['labels.env:prod OR labels.env:dev', 'labels.env:prod labels.env:dev', Array.from({ length: 11 }, (_, i) => `labels.k${i}`).join(' '), 'name:f_a']) {
      const r = await list(filter);
      expect(r.status, filter).toBe(400);
      expect(reason(r), filter).toBe('invalid');
    }
    expect(await ids('labels.owner:ann')).toEqual(['f_c']);
    // Ten expressions are the most a filter holds (none of these datasets has all ten keys).
    expect(await ids(Array.from({ length: 10 }, (_, i) => `labels.k${i}`).join(' '))).toEqual([]);
  });

  it('a query job with a label the labels page does not allow is refused; allowed labels show in INFORMATION_SCHEMA.JOBS', async () => {
    await mkDataset('jobs_here');
    const bad = await rest(api('/jobs'), { method: 'POST', json: { configuration: { query: { query: 'SELECT 1', useLegacySql: false }, labels: { Stage: 'one' } } } });
    expect(bad.status).toBe(400);
    expect(reason(bad)).toBe('invalid');
    const ok = await rest(api('/jobs'), { method: 'POST', json: { jobReference: { jobId: 'labelled_job' }, configuration: { query: { query: 'SELECT 1', useLegacySql: false }, labels: { stage: 'one' } } } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const r = await query("SELECT labels FROM `region-us`.INFORMATION_SCHEMA.JOBS WHERE job_id = 'labelled_job'");
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(JSON.stringify(r.body.rows)).toContain('"stage"');
    expect(JSON.stringify(r.body.rows)).toContain('"one"');
  });
  it('INFORMATION_SCHEMA.JOBS: dml_statistics, session_info, transaction_id, query_dialect and continuous of the emulator\'s jobs', async () => {
    // information-schema-jobs.md, Schema: a DML job's row counts; the dialect the request asked for; a job outside a
    // session or transaction has none.
    await mkDataset('jobcols');
    expect((await query('CREATE TABLE jobcols.t (a INT64)')).status).toBe(200);
    const ins = await rest(api('/jobs'), { method: 'POST', json: { jobReference: { jobId: 'dml_job' }, configuration: { query: { query: 'INSERT jobcols.t VALUES (1), (2)', useLegacySql: false } } } });
    expect(ins.status, JSON.stringify(ins.body)).toBe(200);
    for (let i = 0; i < 200 && (await rest(api('/jobs/dml_job'))).body.status?.state !== 'DONE'; i++) await new Promise((r) => setTimeout(r, 50));
    const plain = await rest(api('/jobs'), { method: 'POST', json: { jobReference: { jobId: 'plain_job' }, configuration: { query: { query: 'SELECT 1' } } } });
    expect(plain.status).toBe(200);
    const r = await query(
      "SELECT job_id, dml_statistics.inserted_row_count, dml_statistics.deleted_row_count, session_info, transaction_id, query_dialect, continuous FROM `region-us`.INFORMATION_SCHEMA.JOBS WHERE job_id IN ('dml_job', 'plain_job') ORDER BY job_id",
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const rows = (r.body.rows as { f: { v: unknown }[] }[]).map((x) => x.f.map((c) => c.v));
    expect(rows).toEqual([
      ['dml_job', '2', null, null, null, 'GOOGLE_SQL', 'false'],
      ['plain_job', null, null, null, null, 'DEFAULT_GOOGLE_SQL', 'false'],
    ]);
  });
});
