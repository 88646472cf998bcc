// default-values.md, Load data: a load job's rows take a column's default when the loaded data has no such column
// (text formats: the load's schema lacks it; Parquet/Avro/ORC: the file's own schema lacks it); a value loaded as
// NULL stays NULL. Through jobs.insert (file:// sources, the engine reads them), the gateway's streamed path (a
// multipart upload of CSV) and a Parquet file; the rows read the same after the engine is killed and restarted.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeExport } from '../../src/io/formats.js';
import { writeParquet } from '../../src/io/parquet.js';
import { hasRealEngine, jobDone, killEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe.skipIf(!hasRealEngine())('column defaults in load jobs', () => {
  let emu: Emulator;
  let dir: string;
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/ldp${p}`;
  const query = async (sql: string): Promise<unknown[][]> => {
    const r = await rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return (r.body.rows ?? []).map((x: { f: { v: unknown }[] }) => x.f.map((c) => c.v));
  };
  /** A table with a column without default (note), a constant default (tag) and a per-row one (id). */
  const table = (t: string) => query(`CREATE TABLE d.${t} (n INT64, note STRING, tag STRING DEFAULT 'dflt', id STRING DEFAULT GENERATE_UUID())`);
  const done = (jobId: string): Promise<any> => jobDone(emu, 'ldp', jobId);
  const load = async (t: string, file: string, format: string, schema?: { name: string; type: string }[]): Promise<void> => {
    const ins = await rest(url('/jobs'), {
      method: 'POST',
      json: { configuration: { load: { destinationTable: { datasetId: 'd', tableId: t }, sourceUris: [`file://${file}`], sourceFormat: format, writeDisposition: 'WRITE_APPEND', ...(schema ? { schema: { fields: schema } } : {}) } } },
    });
    expect(ins.status, JSON.stringify(ins.body)).toBe(200);
    const job = await done(ins.body.jobReference.jobId);
    expect(job.status.errorResult, JSON.stringify(job.status)).toBeUndefined();
  };
  const file = (name: string, text: string | Buffer): string => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const rows = (t: string) => query(`SELECT n, note, tag, id FROM d.${t} ORDER BY n`);
  /** The ids of rows that took the default: UUIDs, one per row. */
  const expectUuids = (got: unknown[][]): void => {
    const ids = got.map((r) => r[3]);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  };

  beforeAll(async () => {
    emu = await startEmulator();
    dir = mkdtempSync(join(tmpdir(), 'load-defaults-'));
    expect((await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
  });
  afterAll(async () => {
    await emu?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const saved: Record<string, unknown[][]> = {};

  it('CSV: the columns the load schema leaves out take their defaults, per row; an empty field loaded stays NULL', async () => {
    await table('csv');
    // The file has two columns, the table four: tag and id are left out, so they take their defaults.
    await load('csv', file('two.csv', '1,a\n2,\n3,c\n'), 'CSV', [{ name: 'n', type: 'INT64' }, { name: 'note', type: 'STRING' }]);
    // A file of every column: tag loaded empty is NULL, not its default.
    await load('csv', file('all.csv', '4,d,,x\n'), 'CSV', [{ name: 'n', type: 'INT64' }, { name: 'note', type: 'STRING' }, { name: 'tag', type: 'STRING' }, { name: 'id', type: 'STRING' }]);
    const got = await rows('csv');
    expect(got.map((r) => r.slice(0, 3))).toEqual([['1', 'a', 'dflt'], ['2', null, 'dflt'], ['3', 'c', 'dflt'], ['4', 'd', null]]);
    expectUuids(got.slice(0, 3));
    expect(got[3]![3]).toBe('x');
    saved['csv'] = got;
  });

  it('newline-delimited JSON: a key absent or null under a loaded column is NULL; a column the schema lacks takes its default', async () => {
    await table('js');
    const data = file('rows.json', '{"n":1,"tag":"own"}\n{"n":2}\n{"n":3,"tag":null}\n');
    // The schema names tag: its rows without the key, or with null, load NULL. id is not loaded: its default.
    await load('js', data, 'NEWLINE_DELIMITED_JSON', [{ name: 'n', type: 'INT64' }, { name: 'tag', type: 'STRING' }]);
    let got = await rows('js');
    expect(got.map((r) => r.slice(0, 3))).toEqual([['1', null, 'own'], ['2', null, null], ['3', null, null]]);
    expectUuids(got);
    // No schema on the job: the table's is the load's, every column is loaded, and nothing takes a default.
    await load('js', file('more.json', '{"n":4}\n'), 'NEWLINE_DELIMITED_JSON');
    got = await rows('js');
    expect(got[3]).toEqual(['4', null, null, null]);
    saved['js'] = got;
  });

  it('Parquet: columns the file does not have take their defaults', async () => {
    await table('pq');
    const pq = await writeParquet([{ name: 'n', type: 'INT64' }, { name: 'tag', type: 'STRING' }], [{ n: '1', tag: 'p1' }, { n: '2', tag: null }]);
    await load('pq', file('two.parquet', pq), 'PARQUET');
    const got = await rows('pq');
    expect(got.map((r) => r.slice(0, 3))).toEqual([['1', null, 'p1'], ['2', null, null]]);
    expectUuids(got);
    saved['pq'] = got;
  });

  it('Avro (the gateway parses the file and stages its records): columns the file does not have take their defaults', async () => {
    await table('av');
    const avro = await encodeExport([{ name: 'n', type: 'INTEGER' }, { name: 'note', type: 'STRING' }], [{ n: '1', note: 'a1' }, { n: '2', note: null }], { format: 'AVRO', compression: 'NONE', fieldDelimiter: ',', header: false, useAvroLogicalTypes: false });
    await load('av', file('two.avro', avro), 'AVRO');
    const got = await rows('av');
    expect(got.map((r) => r.slice(0, 3))).toEqual([['1', 'a1', 'dflt'], ['2', null, 'dflt']]);
    expectUuids(got);
    saved['av'] = got;
  });

  it('a multipart upload: WRITE_APPEND gives each row its own GENERATE_UUID', async () => {
    await table('up');
    const meta = {
      configuration: { load: { destinationTable: { datasetId: 'd', tableId: 'up' }, sourceFormat: 'CSV', writeDisposition: 'WRITE_APPEND', schema: { fields: [{ name: 'n', type: 'INT64' }, { name: 'tag', type: 'STRING' }] } } },
    };
    const b = 'ld-boundary';
    const body = Buffer.from(`--${b}\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(meta)}\r\n--${b}\r\nContent-Type: application/octet-stream\r\n\r\n1,u1\n2,u2\n3,\n\r\n--${b}--\r\n`);
    const r = await rest(`${emu.url}/upload/bigquery/v2/projects/ldp/jobs?uploadType=multipart`, { method: 'POST', body, headers: { 'content-type': `multipart/related; boundary=${b}` } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await done(r.body.jobReference.jobId)).status.errorResult).toBeUndefined();
    const got = await rows('up');
    expect(got.map((x) => x.slice(0, 3))).toEqual([['1', null, 'u1'], ['2', null, 'u2'], ['3', null, null]]);
    expectUuids(got);
    saved['up'] = got;
  });

  it('the loaded rows read the same after the engine restarts (defaults are not evaluated again)', async () => {
    await killEngine(emu, 'ldp');
    for (const [t, got] of Object.entries(saved)) expect(await rows(t)).toEqual(got);
  });
});
