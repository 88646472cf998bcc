// The bq CLI's table and job commands against the real engine: load (local CSV and
// NEWLINE_DELIMITED_JSON media uploads, --autodetect, a schema file,
// --skip_leading_rows, --replace, --schema_update_option, a gs:// source; PARQUET with and without
// list inference), extract and load through a
// stand-in for the object-store emulator (test/helpers/object-store.ts; bq itself only accepts gs:// extract URIs),
// cp, mk --view / --schema file / partitioning and clustering, update, show --schema,
// show -j, ls -j, ls -p, cancel, wait, rm -t, head -n/-s/-c and insert with a bad row.
// Each bq run costs seconds: independent commands run in parallel waves.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { startGcsStandIn, type ObjectStore } from '../helpers/object-store.js';
import { bqFor, hasBq, oneLine, prettyRows, type Bq } from './bq-cli-setup.js';

describe.skipIf(!hasRealEngine() || !hasBq())('bq table and job commands', () => {
  let emu: Emulator;
  let gcs: ObjectStore;
  let bq: Bq;
  const api = (p: string): string => `${emu.url}/bigquery/v2/projects/test${p}`;
  const rows = async (table: string): Promise<unknown[][]> => {
    const r = await rest(api(`/datasets/d/tables/${table}/data`));
    expect(r.status).toBe(200);
    return ((r.body.rows ?? []) as { f: { v: unknown }[] }[]).map((row) => row.f.map((c) => c.v));
  };
  const file = (name: string, text: string): string => {
    writeFileSync(join(bq.dir, name), text);
    return `./${name}`;
  };

  beforeAll(async () => {
    gcs = await startGcsStandIn(['bkt']);
    emu = await startEmulator({ env: { STORAGE_EMULATOR_HOST: gcs.endpoint } });
    bq = bqFor(emu.url, { direct: true });
    expect((await rest(api('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
    const fields = [{ name: 'name', type: 'STRING' }, { name: 'age', type: 'INTEGER' }, { name: 'ts', type: 'TIMESTAMP' }];
    expect((await rest(api('/datasets/d/tables'), { method: 'POST', json: { tableReference: { tableId: 'base' }, schema: { fields } } })).status).toBe(200);
    const seed = ['ann', 'bob', 'cy'].map((name, i) => ({ json: { name, age: 30 + i, ts: `2024-01-0${i + 1} 00:00:00` } }));
    expect((await rest(api('/datasets/d/tables/base/insertAll'), { method: 'POST', json: { rows: seed } })).body.insertErrors).toBeUndefined();
    await gcs.put('bkt', 'in/part-1.json', Buffer.from('{"name":"g1","age":1}\n{"name":"g2","age":2}\n'));
    await gcs.put('bkt', 'in/part-2.json', Buffer.from('{"name":"g3","age":3}\n'));
  });
  afterAll(async () => {
    await emu?.stop();
    await gcs?.close();
  });

  it('load, mk, insert, head and cancel; then extract, cp, update, show; then jobs and rm', async () => {
    const csv = file('people.csv', 'name,age,score\nann,31,1.5\nbob,42,2.25\n');
    const json = file('people.json', '{"name":"x","tags":["t1","t2"],"addr":{"city":"c","zip":1}}\n{"name":"y","tags":[],"addr":{"city":"d","zip":2}}\n');
    const schema = file('schema.json', JSON.stringify([{ name: 'name', type: 'STRING' }, { name: 'age', type: 'INTEGER', mode: 'REQUIRED' }, { name: 'score', type: 'FLOAT' }]));
    const bad = file('bad.json', '{"name":"ok","age":1}\n{"name":"bad","age":"notanint"}\n');
    // A Parquet file as other writers make them: a 3-level LIST, a group, a DECIMAL, a local (not UTC) TIMESTAMP.
    const parquet = join(bq.dir, 'nested.parquet');
    writeFileSync(parquet, Buffer.from(parquetWriteBuffer({
      columnData: [
        { name: 'id', data: [1n, 2n] },
        { name: 'tags', data: [['a', 'b'], []] },
        { name: 'addr', data: [{ city: 'c', zip: 1 }, null] },
        { name: 'price', data: [1.25, null] },
        { name: 'at', data: [1704164645123456n, null] },
        { name: 'day', data: [19723, null] },
      ],
      schema: [
        { name: 'root', num_children: 6 },
        { name: 'id', type: 'INT64', repetition_type: 'REQUIRED' },
        { name: 'tags', repetition_type: 'OPTIONAL', num_children: 1, converted_type: 'LIST' },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        { name: 'element', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
        { name: 'addr', repetition_type: 'OPTIONAL', num_children: 2 },
        { name: 'city', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
        { name: 'zip', type: 'INT32', repetition_type: 'OPTIONAL' },
        { name: 'price', type: 'INT64', repetition_type: 'OPTIONAL', converted_type: 'DECIMAL', precision: 18, scale: 2 },
        { name: 'at', type: 'INT64', repetition_type: 'OPTIONAL', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' } },
        { name: 'day', type: 'INT32', repetition_type: 'OPTIONAL', converted_type: 'DATE' },
      ],
    } as unknown as Parameters<typeof parquetWriteBuffer>[0])));
    const long = 'SELECT COUNT(*) FROM UNNEST(GENERATE_ARRAY(1, 100000)) a CROSS JOIN UNNEST(GENERATE_ARRAY(1, 100000)) b';

    const [autoCsv, schemaCsv, autoJson, fromGcs, part, fromFile, view, insertBad, head, headCols, dataset, pq, pqList, cancelled] = await Promise.all([
      bq('--job_id=load_auto', 'load', '--autodetect', '--source_format=CSV', 'd.lcsv', csv),
      bq('load', '--source_format=CSV', '--skip_leading_rows=1', '--time_partitioning_type=DAY', 'd.lschema', csv, schema),
      bq('load', '--autodetect', '--source_format=NEWLINE_DELIMITED_JSON', 'd.ljson', json),
      bq('load', '--source_format=NEWLINE_DELIMITED_JSON', '--clustering_fields=name', 'd.lgcs', 'gs://bkt/in/*.json', 'name:STRING,age:INTEGER'),
      bq('mk', '--table', '--time_partitioning_field=ts', '--time_partitioning_type=DAY', '--clustering_fields=name,age', '--description=part tbl',
        'd.part', 'name:STRING,age:INTEGER,ts:TIMESTAMP'),
      bq('mk', '--schema', schema, 'd.fromfile'),
      bq('mk', '--view=SELECT name, age * 2 AS age2 FROM d.base', 'd.v'),
      bq.run('insert', 'd.base', bad),
      bq('head', '-n', '2', '-s', '1', 'd.base'),
      bq('head', '-c', 'name', 'd.base'),
      bq('mk', '--dataset', '--default_table_expiration=3600', '--description=two', 'test:d2'),
      bq('load', '--source_format=PARQUET', 'd.pq', parquet),
      bq('load', '--source_format=PARQUET', '--parquet_enable_list_inference', 'd.pqlist', parquet),
      // A query that runs until cancelled: started without waiting, then cancelled.
      (async () => {
        const started = await bq('query', '--nosync', '--nouse_legacy_sql', long);
        const job = /Successfully started query test:(\S+)/.exec(started)?.[1];
        expect(job).toBeDefined();
        return { job: job!, out: await bq('cancel', job!) };
      })(),
    ]);
    for (const out of [autoCsv, schemaCsv, autoJson, fromGcs]) expect(out).not.toMatch(/error/i);
    // --autodetect: the header row names the columns, the values type them.
    expect((await rest(api('/datasets/d/tables/lcsv'))).body.schema.fields.map((f: { name: string; type: string }) => `${f.name}:${f.type}`)).toEqual(['name:STRING', 'age:INTEGER', 'score:FLOAT']);
    expect(await rows('lcsv')).toEqual([['ann', '31', '1.5'], ['bob', '42', '2.25']]);
    expect(await rows('lschema')).toEqual([['ann', '31', '1.5'], ['bob', '42', '2.25']]);
    expect((await rest(api('/datasets/d/tables/lschema'))).body.schema.fields[1]).toMatchObject({ name: 'age', mode: 'REQUIRED' });
    expect(await rows('ljson')).toEqual([
      ['x', [{ v: 't1' }, { v: 't2' }], { f: [{ v: 'c' }, { v: '1' }] }],
      ['y', [], { f: [{ v: 'd' }, { v: '2' }] }],
    ]);
    expect((await rows('lgcs')).sort()).toEqual([['g1', '1'], ['g2', '2'], ['g3', '3']]);
    // The table a load job creates takes the job's partitioning and clustering.
    expect((await rest(api('/datasets/d/tables/lgcs'))).body.clustering).toEqual({ fields: ['name'] });
    expect(dataset).toContain("Dataset 'test:d2' successfully created.");
    // Parquet: the file's schema gives the types; a LIST is a record of repeated records unless list inference is on.
    for (const out of [pq, pqList]) expect(out).not.toMatch(/error/i);
    const typesOf = (fields: { name: string; type: string; mode: string; fields?: unknown[] }[]): string[] =>
      fields.map((f) => `${f.name}:${f.type}:${f.mode}${f.fields ? `(${typesOf(f.fields as typeof fields).join(',')})` : ''}`);
    expect(typesOf((await rest(api('/datasets/d/tables/pq'))).body.schema.fields)).toEqual([
      'id:INTEGER:REQUIRED', 'tags:RECORD:NULLABLE(list:RECORD:REPEATED(element:STRING:NULLABLE))', 'addr:RECORD:NULLABLE(city:STRING:NULLABLE,zip:INTEGER:NULLABLE)',
      'price:NUMERIC:NULLABLE', 'at:DATETIME:NULLABLE', 'day:DATE:NULLABLE',
    ]);
    expect(await rows('pq')).toEqual([
      ['1', { f: [{ v: [{ v: { f: [{ v: 'a' }] } }, { v: { f: [{ v: 'b' }] } }] }] }, { f: [{ v: 'c' }, { v: '1' }] }, '1.25', '2024-01-02T03:04:05.123456', '2024-01-01'],
      ['2', { f: [{ v: [] }] }, null, null, null, null],
    ]);
    expect(typesOf((await rest(api('/datasets/d/tables/pqlist'))).body.schema.fields)[1]).toBe('tags:STRING:REPEATED');
    expect((await rows('pqlist'))[0]![1]).toEqual([{ v: 'a' }, { v: 'b' }]);
    expect(part).toContain("Table 'test:d.part' successfully created.");
    expect(fromFile).toContain("Table 'test:d.fromfile' successfully created.");
    expect(view).toContain("View 'test:d.v' successfully created.");
    // bq prints each row's errors; without --skip_invalid_rows the good row is reported stopped and nothing is stored.
    expect(insertBad.code).not.toBe(0);
    expect(insertBad.stdout).toContain('record 1 errors: \tinvalid: Cannot convert value to integer (bad value): notanint');
    expect(insertBad.stdout).toContain('record 0 errors: \tstopped: ');
    expect(prettyRows(head)).toEqual([['name', 'age', 'ts'], ['bob', '31', '2024-01-02 00:00:00'], ['cy', '32', '2024-01-03 00:00:00']]);
    expect(prettyRows(headCols)).toEqual([['name'], ['ann'], ['bob'], ['cy']]);
    expect(cancelled.out).toContain('Job has been cancelled successfully.');

    const [replaced, extractCsv, extractJson, extractPq, copied, updated, showSchema, showPart, showView, showJob, showDataset, waited] = await Promise.all([
      bq('load', '--replace', '--source_format=CSV', '--skip_leading_rows=1', 'd.lschema', file('people2.csv', 'name,age,score\ncy,7,0.5\n')),
      bq('extract', 'd.lcsv', 'gs://bkt/out/people.csv'),
      bq('extract', '--destination_format=NEWLINE_DELIMITED_JSON', '--compression=GZIP', 'd.ljson', 'gs://bkt/out/people.json.gz'),
      bq('extract', '--destination_format=PARQUET', 'd.pqlist', 'gs://bkt/out/pq.parquet'),
      bq('cp', 'd.lcsv', 'd.copy'),
      bq('update', '--description=new desc', 'd.fromfile'),
      bq('--format=prettyjson', 'show', '--schema', 'd.ljson'),
      bq('show', 'd.part'),
      bq('show', 'd.v'),
      bq('show', '-j', 'load_auto'),
      bq('--format=prettyjson', 'show', 'd2'),
      bq.run('wait', cancelled.job),
    ]);
    expect(replaced).not.toMatch(/error/i);
    expect(await rows('lschema')).toEqual([['cy', '7', '0.5']]);
    expect((await rest(api('/datasets/d/tables/lschema'))).body.timePartitioning).toEqual({ type: 'DAY' });
    expect(extractCsv).not.toMatch(/error/i);
    expect((await gcs.get('bkt', 'out/people.csv'))?.toString()).toBe('name,age,score\nann,31,1.5\nbob,42,2.25\n');
    expect(extractJson).not.toMatch(/error/i);
    const lines = gunzipSync((await gcs.get('bkt', 'out/people.json.gz'))!).toString().trim().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(lines).toEqual([{ name: 'x', tags: ['t1', 't2'], addr: { city: 'c', zip: '1' } }, { name: 'y', tags: [], addr: { city: 'd', zip: '2' } }]);
    expect(copied).toContain("Table 'test:d.lcsv' successfully copied to 'test:d.copy'");
    expect(await rows('copy')).toEqual(await rows('lcsv'));
    expect(updated).toContain("Table 'test:d.fromfile' successfully updated.");
    expect((await rest(api('/datasets/d/tables/fromfile'))).body.description).toBe('new desc');
    expect(JSON.parse(showSchema)).toEqual([
      { name: 'name', type: 'STRING', mode: 'NULLABLE' },
      { name: 'tags', type: 'STRING', mode: 'REPEATED' },
      { name: 'addr', type: 'RECORD', mode: 'NULLABLE', fields: [{ name: 'city', type: 'STRING', mode: 'NULLABLE' }, { name: 'zip', type: 'INTEGER', mode: 'NULLABLE' }] },
    ]);
    expect(showPart).toMatch(/DAY \(field: ts\)\s+name, age/);
    expect(showPart).toContain('|- ts: timestamp');
    // A view's schema is its query's columns, as the real service reports it.
    expect(showView).toMatch(/\|- name: string\s+VIEW/);
    expect(showView).toContain('|- age2: integer');
    expect(showJob).toContain('Job test:load_auto');
    expect(showJob).toMatch(/load\s+SUCCESS/);
    // int64 fields are JSON strings, as the real service sends them (bq prints what it gets).
    expect(JSON.parse(showDataset)).toMatchObject({ datasetReference: { datasetId: 'd2', projectId: 'test' }, description: 'two', defaultTableExpirationMs: '3600000' });
    // bq wait on a cancelled job: the job's error, and a failing exit status.
    expect(waited.code).not.toBe(0);
    expect(oneLine(waited)).toContain('Job execution was cancelled: User requested cancellation');

    const extra = file('extra.csv', 'name,age,score,note\ndee,9,0.25,new\n');
    expect(extractPq).not.toMatch(/error/i);
    const [jobs, projects, removed, noAddition, addition, pqBack] = await Promise.all([
      bq('ls', '-j', '-n', '100'), bq('ls', '-p'), bq('rm', '-f', '-t', 'd.copy'),
      bq.run('load', '--source_format=CSV', '--skip_leading_rows=1', 'd.lcsv', extra, 'name:STRING,age:INTEGER,score:FLOAT,note:STRING'),
      bq('load', '--schema_update_option=ALLOW_FIELD_ADDITION', '--schema_update_option=ALLOW_FIELD_RELAXATION', '--source_format=CSV', '--skip_leading_rows=1', 'd.lschema', extra, 'name:STRING,age:INTEGER,score:FLOAT,note:STRING'),
      bq('load', '--source_format=PARQUET', '--parquet_enable_list_inference', 'd.pqback', 'gs://bkt/out/pq.parquet'),
    ]);
    // A Parquet extract loads back (with list inference) with the same schema and rows: DECIMAL, local TIMESTAMP,
    // DATE, groups and REPEATED fields are written as such, not as text.
    expect(pqBack).not.toMatch(/error/i);
    expect((await rest(api('/datasets/d/tables/pqback'))).body.schema).toEqual((await rest(api('/datasets/d/tables/pqlist'))).body.schema);
    expect(await rows('pqback')).toEqual(await rows('pqlist'));
    // A load whose schema adds a column (and relaxes a REQUIRED one): the real service's error
    // without --schema_update_option, the evolved table with it.
    expect(noAddition.code).not.toBe(0);
    expect(oneLine(noAddition)).toContain('Provided Schema does not match Table test:d.lcsv. Cannot add fields (field: note)');
    expect(addition).not.toMatch(/error/i);
    expect((await rest(api('/datasets/d/tables/lschema'))).body.schema.fields.map((f: { name: string; mode: string }) => `${f.name}:${f.mode}`))
      .toEqual(['name:NULLABLE', 'age:NULLABLE', 'score:NULLABLE', 'note:NULLABLE']);
    expect(await rows('lschema')).toEqual([['cy', '7', '0.5', null], ['dee', '9', '0.25', 'new']]);
    expect(jobs).toMatch(/load_auto\s+load\s+SUCCESS/);
    expect(jobs).toMatch(new RegExp(`${cancelled.job}\\s+query\\s+FAILURE`));
    expect(jobs).toMatch(/\s+extract\s+SUCCESS/);
    expect(jobs).toMatch(/\s+copy\s+SUCCESS/);
    expect(projects).toMatch(/projectId\s+friendlyName[\s\S]*\btest\b/);
    expect(removed).toBe('');
    expect((await rest(api('/datasets/d/tables/copy'))).status).toBe(404);
  }, 180_000);
});
