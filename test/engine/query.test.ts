// ExecuteQuery through the real pipeline (src/planner/run.ts): anonymous
// result tables paged by ListRows, destinations, parameters, DDL/DML over the catalog.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeParameters } from '../../src/engine/parameters.js';
import { loadRunQuery } from '../../src/engine/query.js';
import { startInProcess, type InProcessEngine } from './helpers.js';

let eng: InProcessEngine;
let available = false;
beforeAll(async () => {
  eng = await startInProcess();
  available = (await loadRunQuery()) !== null;
  await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
});
afterAll(async () => {
  await eng.close();
});

interface QueryReply {
  schemaJson: string;
  totalRows: number;
  resultTable: { projectId: string; datasetId: string; tableId: string };
  rowsJson: string;
  nextIndex: number;
  statementType: string;
  numDmlAffectedRows: number;
}

const q = (query: string, extra: Record<string, unknown> = {}) =>
  eng.client.call<QueryReply>('ExecuteQuery', { projectId: 'p', jobId: `job_${Math.random().toString(36).slice(2)}`, query, maxResults: 100, ...extra });

describe('parameters', () => {
  it('decodes strings, JSON numbers, arrays and structs', () => {
    const p = decodeParameters(
      JSON.stringify([
        { name: 'N', parameterType: { type: 'INT64' }, parameterValue: { value: 5 } },
        { name: 's', parameterType: { type: '' }, parameterValue: { value: 'hello' } },
        { name: 'b', parameterType: { type: 'BOOL' }, parameterValue: { value: true } },
        { name: 'ts', parameterType: { type: 'TIMESTAMP' }, parameterValue: { value: '2024-01-01T00:00:00.000Z' } },
        { name: 'arr', parameterType: { type: 'ARRAY', arrayType: { type: 'INT64' } }, parameterValue: { arrayValues: [{ value: '1' }, { value: 2 }] } },
        {
          name: 'st',
          parameterType: { type: 'STRUCT', structTypes: [{ name: 'a', type: { type: 'INT64' } }, { name: 'b', type: { type: 'STRING' } }] },
          parameterValue: { structValues: { a: { value: 1 }, b: { value: 'x' } } },
        },
      ]),
      'NAMED',
    );
    expect(p.named.get('n')).toEqual({ type: { kind: 'INT64' }, value: 5n });
    expect(p.named.get('s')!.value).toBe('hello');
    expect(p.named.get('b')!.value).toBe(true);
    expect(p.named.get('ts')!.value).toBe(1704067200000000n);
    expect(p.named.get('arr')!.value).toEqual([1n, 2n]);
    expect(p.named.get('st')!.value).toEqual([1n, 'x']);
    const pos = decodeParameters(JSON.stringify([{ parameterType: { type: 'FLOAT64' }, parameterValue: { value: '1.5' } }]), 'POSITIONAL');
    expect(pos.positional[0]!.value).toBe(1.5);
  });
});

describe('ExecuteQuery', () => {
  it('finds the pipeline', () => {
    expect(available).toBe(true);
  });

  it('runs a SELECT into an anonymous table that ListRows pages', async () => {
    if (!available) return;
    const r = await q('SELECT x, CAST(x AS STRING) AS s FROM UNNEST(GENERATE_ARRAY(1, 25)) AS x ORDER BY x', { maxResults: 10 });
    expect(r.totalRows).toBe(25);
    expect(JSON.parse(r.rowsJson)).toHaveLength(10);
    expect(r.nextIndex).toBe(10);
    expect(JSON.parse(r.schemaJson).fields.map((f: { type: string }) => f.type)).toEqual(['INTEGER', 'STRING']);
    const page = await eng.client.call<{ rowsJson: string; totalRows: number; nextIndex: number }>('ListRows', { table: r.resultTable, startIndex: 20, maxResults: 10 });
    expect(JSON.parse(page.rowsJson).map((x: { f: { v: string }[] }) => x.f[0]!.v)).toEqual(['21', '22', '23', '24', '25']);
    expect(page.nextIndex).toBe(-1);
  });

  it('DDL and DML go through the catalog and persist as tables', async () => {
    if (!available) return;
    await q('CREATE TABLE d.q1 (id INT64, name STRING)');
    const ins = await q("INSERT INTO d.q1 (id, name) VALUES (1, 'a'), (2, 'b')");
    expect(ins.numDmlAffectedRows).toBe(2);
    const t = await eng.client.resource('GetTable', { projectId: 'p', datasetId: 'd', tableId: 'q1' });
    expect(t.numRows).toBe('2');
    const s = await q('SELECT name FROM d.q1 WHERE id = @id', {
      parameters: { parametersJson: JSON.stringify([{ name: 'id', parameterType: { type: 'INT64' }, parameterValue: { value: '2' } }]), parameterMode: 'NAMED' },
    });
    expect(JSON.parse(s.rowsJson)).toEqual([{ f: [{ v: 'b' }] }]);
    await q("UPDATE d.q1 SET name = 'z' WHERE id = 1");
    const rows = await eng.client.call<{ rowsJson: string }>('ListRows', { table: { projectId: 'p', datasetId: 'd', tableId: 'q1' }, maxResults: 10 });
    expect(JSON.parse(rows.rowsJson).map((x: { f: { v: string }[] }) => x.f[1]!.v).sort()).toEqual(['b', 'z']);
  });

  it('writes to a destination honouring the write disposition', async () => {
    if (!available) return;
    const dest = { projectId: 'p', datasetId: 'd', tableId: 'dest' };
    await q('SELECT 1 AS x', { destination: dest });
    await q('SELECT 2 AS x', { destination: dest, writeDisposition: 'WRITE_APPEND' });
    const e = await eng.client.error('ExecuteQuery', { projectId: 'p', jobId: 'j1', query: 'SELECT 3 AS x', destination: dest, maxResults: 10 });
    expect(e.code).toBe(409);
    await q('SELECT 4 AS x', { destination: dest, writeDisposition: 'WRITE_TRUNCATE' });
    const rows = await eng.client.call<{ rowsJson: string }>('ListRows', { table: dest, maxResults: 10 });
    expect(JSON.parse(rows.rowsJson)).toEqual([{ f: [{ v: '4' }] }]);
  });

  it('maps query errors to the envelope', async () => {
    if (!available) return;
    const e = await eng.client.error('ExecuteQuery', { projectId: 'p', jobId: 'j2', query: 'SELECT nope FROM d.q1', maxResults: 10 });
    expect(e).toMatchObject({ code: 400, reason: 'invalidQuery' });
    expect(e.message).toContain('nope');
  });
});

describe('ALTER TABLE through the catalog', () => {
  it('adds, renames and drops columns keeping rows across a restart', async () => {
    if (!available) return;
    await q('CREATE TABLE d.alt (a INT64, b STRING)');
    await q("INSERT INTO d.alt VALUES (1, 'x'), (2, 'y')");
    await q('ALTER TABLE d.alt ADD COLUMN c FLOAT64');
    await q('ALTER TABLE d.alt RENAME COLUMN b TO bb');
    await q('ALTER TABLE d.alt DROP COLUMN a');
    const dir = eng.dataDir;
    await eng.close();
    eng = await startInProcess(dir);
    const rows = await eng.client.call<{ rowsJson: string; schemaJson: string }>('ListRows', { table: { projectId: 'p', datasetId: 'd', tableId: 'alt' }, maxResults: 10 });
    expect(JSON.parse(rows.schemaJson).fields.map((f: { name: string }) => f.name)).toEqual(['bb', 'c']);
    expect(JSON.parse(rows.rowsJson)).toEqual([{ f: [{ v: 'x' }, { v: null }] }, { f: [{ v: 'y' }, { v: null }] }]);
  });
});

describe('INFORMATION_SCHEMA.JOBS', () => {
  it('reads the job registry snapshot the gateway sends', async () => {
    if (!available) return;
    const jobs = [
      { creation_time: '2024-01-01T00:00:00.000Z', project_id: 'p', job_id: 'j1', job_type: 'QUERY', statement_type: 'SELECT', state: 'DONE', query: 'SELECT 1', total_bytes_processed: 0, error_result: null, destination_table: null },
      { creation_time: '2024-01-02T00:00:00.000Z', project_id: 'p', job_id: 'j2', job_type: 'LOAD', state: 'DONE', error_result: { reason: 'invalid', location: '', message: 'bad' } },
    ];
    const r = await q('SELECT job_id, job_type, error_result.reason FROM `region-us`.INFORMATION_SCHEMA.JOBS ORDER BY creation_time', { jobsSnapshotJson: JSON.stringify(jobs) });
    expect(JSON.parse(r.rowsJson)).toEqual([
      { f: [{ v: 'j1' }, { v: 'QUERY' }, { v: null }] },
      { f: [{ v: 'j2' }, { v: 'LOAD' }, { v: 'invalid' }] },
    ]);
  });
});
