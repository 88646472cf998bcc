// End to end against the real engine: HTTP and the Node client (apiEndpoint
// and BIGQUERY_EMULATOR_HOST), per shared/clients/real-client-traces.md.
// The bq CLI has its own file (bq-cli.test.ts) so it runs in parallel.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BigQuery } from '@google-cloud/bigquery';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, hasRealEngine, rest, runGateway, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';


describe.skipIf(!hasRealEngine())('gateway + real engine', () => {
  let emu: Emulator;
  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    emu = await startEmulator();
  });
  afterAll(async () => emu?.stop());
  const bqUrl = (p: string): string => `${emu.url}/bigquery/v2/projects/test${p}`;

  it('datasets, tables and rows over HTTP in both families', async () => {
    expect((await rest(bqUrl('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'h1' } } })).status).toBe(200);
    const t = await rest(bqUrl('/datasets/h1/tables'), {
      method: 'POST',
      json: { tableReference: { tableId: 't' }, schema: { fields: [{ name: 'n', type: 'INTEGER' }, { name: 'ts', type: 'TIMESTAMP' }, { name: 'tags', type: 'STRING', mode: 'REPEATED' }] } },
    });
    expect(t.status).toBe(200);
    expect(t.body.kind).toBe('bigquery#table');
    const ins = await rest(bqUrl('/datasets/h1/tables/t/insertAll'), {
      method: 'POST',
      json: { skipInvalidRows: null, rows: [{ json: { n: 1, ts: '2024-01-01 00:00:00' } }, { json: { n: 2, tags: ['a'] } }] },
    });
    expect(ins.body).toEqual({ kind: 'bigquery#tableDataInsertAllResponse' });
    const real = await rest(bqUrl('/datasets/h1/tables/t/data'));
    expect(real.body.totalRows).toBe('2');
    expect(real.body.rows[0].f[1].v).toBe('1.7040672E9');
    expect(real.body.rows[0].f[2].v).toEqual([]);
    const neutral = await rest(`${emu.url}/warehouse/v2/projects/test/datasets/h1/tables/t/data?maxResults=1`);
    expect(neutral.body).toMatchObject({ kind: 'warehouse#tableDataList', totalRows: '2', pageToken: '1' });
    expect(neutral.body.rows[0].f[1].v).toBe('2024-01-01T00:00:00Z');
    const micros = await rest(`${emu.url}/projects/test/datasets/h1/tables/t/data?formatOptions.useInt64Timestamp=true`);
    expect(micros.body.rows[0].f[1].v).toBe('1704067200000000');
    const nf = await rest(bqUrl('/datasets/h1/tables/nope'));
    expect(nf.body.error.message).toBe('Not found: Table test:h1.nope');
    expect((await rest(bqUrl('/datasets/h1?deleteContents=true'), { method: 'DELETE' })).status).toBe(204);
  });

  it('insertAll rows reach the engine as the request bytes: multi-byte text, keys after rows, malformed rows', async () => {
    expect((await rest(bqUrl('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'ins' } } })).status).toBe(200);
    const t = await rest(bqUrl('/datasets/ins/tables'), { method: 'POST', json: { tableReference: { tableId: 't' }, schema: { fields: [{ name: 's', type: 'STRING' }, { name: 'n', type: 'NUMERIC' }] } } });
    expect(t.status).toBe(200);
    const post = (body: string) => rest(bqUrl('/datasets/ins/tables/t/insertAll'), { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    // `rows` first, other keys after it; text with 2-, 3- and 4-byte UTF-8 and escapes.
    const ok = await post('{ "rows": [{"insertId":"a","json":{"s":"ü \\"ключ\\" 😀 ]}","n":"1.5"}}], "skipInvalidRows": false, "ignoreUnknownValues": true }');
    expect(ok.body).toEqual({ kind: 'bigquery#tableDataInsertAllResponse' });
    const list = await rest(bqUrl('/datasets/ins/tables/t/data'));
    expect(list.body.rows).toEqual([{ f: [{ v: 'ü "ключ" 😀 ]}' }, { v: '1.5' }] }]);
    // Rows the gateway forwards unparsed but the engine cannot parse: the usual parse error.
    const bad = await post('{"rows":[{"json":{"s":"x",}}]}');
    expect(bad.status).toBe(400);
    expect(bad.body.error.errors[0].reason).toBe('parseError');
    expect(bad.body.error.message).toMatch(/^Parse error: invalid JSON payload received\./);
    expect((await post('{"rows":[{"json":"unterminated}]}')).body.error.errors[0].reason).toBe('parseError');
    // Rows not last: what a full parse of the body gives (another array after them; a repeated key, the last wins).
    expect((await post('{"rows":[{"json":{"s":"after"}}],"other":[{"json":{"s":"not a row"}}]}')).body).toEqual({ kind: 'bigquery#tableDataInsertAllResponse' });
    expect((await post('{"rows":[{"json":{"s":"first"}}], "rows":[{"json":{"s":"second"}}]}')).body).toEqual({ kind: 'bigquery#tableDataInsertAllResponse' });
    expect((await post('{"rows":{"json":{}}}')).body.error.message).toBe('Invalid value for rows: expected a list of rows');
    expect((await post('{"rows":[ ]}')).body.error.message).toBe('No rows present in the request.');
    const after = await rest(bqUrl('/datasets/ins/tables/t/data'));
    expect(after.body.rows.map((r: { f: { v: unknown }[] }) => r.f[0]!.v)).toEqual(['ü "ключ" 😀 ]}', 'after', 'second']);
  });

  // JSON numbers (functions README, "JSON numbers"): an integral double is printed as an integer on every path
  // that makes a JSON value, as the service prints PARSE_JSON('{"foo": 5.0}') back as {"foo":5}.
  it('JSON values from insertAll (object and text) and an NDJSON load print integral doubles as integers', async () => {
    await rest(bqUrl('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'jn' } } });
    await rest(bqUrl('/datasets/jn/tables'), { method: 'POST', json: { tableReference: { tableId: 't' }, schema: { fields: [{ name: 'k', type: 'INTEGER' }, { name: 'j', type: 'JSON' }] } } });
    // Raw bodies, so that 5.0 reaches the emulator as written.
    const ins = await rest(bqUrl('/datasets/jn/tables/t/insertAll'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"rows":[{"json":{"k":1,"j":{"a":5.0,"b":[1.0,2.5]}}},{"json":{"k":2,"j":"{\\"a\\": 2.0, \\"z\\": 1e300}"}}]}',
    });
    expect(ins.body).toEqual({ kind: 'bigquery#tableDataInsertAllResponse' });
    const boundary = '===============json==';
    const meta = { configuration: { load: { destinationTable: { datasetId: 'jn', tableId: 't' }, sourceFormat: 'NEWLINE_DELIMITED_JSON' } } };
    const body = `--${boundary}\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(meta)}\r\n--${boundary}\r\nContent-Type: application/octet-stream\r\n\r\n{"k":3,"j":{"c":7.0}}\n\r\n--${boundary}--`;
    const load = await rest(`${emu.url}/upload/bigquery/v2/projects/test/jobs?uploadType=multipart`, { method: 'POST', body, headers: { 'content-type': `multipart/related; boundary="${boundary}"` } });
    expect(load.body.status).toEqual({ state: 'DONE' });
    const q = await rest(bqUrl('/queries'), { method: 'POST', json: { query: 'SELECT TO_JSON_STRING(j) AS s FROM jn.t ORDER BY k', useLegacySql: false } });
    expect(q.body.rows.map((r: { f: { v: string }[] }) => r.f[0]!.v)).toEqual(['{"a":5,"b":[1,2.5]}', '{"a":2,"z":1e+300}', '{"c":7}']);
    const list = await rest(bqUrl('/datasets/jn/tables/t/data'));
    expect(list.body.rows.map((r: { f: { v: string }[] }) => r.f[1]!.v).sort()).toEqual(['{"a":2,"z":1e+300}', '{"a":5,"b":[1,2.5]}', '{"c":7}']);
  });

  it('load (multipart and resumable uploads, file:// source), copy and extract jobs', async () => {
    await rest(bqUrl('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'ld' } } });
    const meta = { configuration: { load: { destinationTable: { datasetId: 'ld', tableId: 'p' }, sourceFormat: 'CSV', skipLeadingRows: 1, schema: { fields: [{ name: 'name', type: 'STRING' }, { name: 'age', type: 'INTEGER' }] } } }, jobReference: { jobId: 'load1' } };
    const boundary = '===============123==';
    const body = `--${boundary}\r\nContent-Type: application/json\r\nMIME-Version: 1.0\r\n\r\n${JSON.stringify(meta)}\r\n--${boundary}\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n\r\nname,age\nann,3\nbob,4\n\r\n--${boundary}--`;
    const mp = await rest(`${emu.url}/upload/bigquery/v2/projects/test/jobs?uploadType=multipart`, { method: 'POST', body, headers: { 'content-type': `multipart/related; boundary="${boundary}"` } });
    expect(mp.status).toBe(200);
    expect(mp.body.status).toEqual({ state: 'DONE' });
    expect(mp.body.statistics.load.outputRows).toBe('2');

    const init = await fetch(`${emu.url}/upload/bigquery/v2/projects/test/jobs?uploadType=resumable`, {
      method: 'POST',
      body: JSON.stringify({ configuration: { load: { destinationTable: { datasetId: 'ld', tableId: 'p' }, sourceFormat: 'NEWLINE_DELIMITED_JSON' } } }),
      headers: { 'content-type': 'application/json' },
    });
    const location = init.headers.get('location')!;
    expect(location).toMatch(/upload_id=/);
    const data = '{"name":"cy","age":5}\n';
    const put = await rest(location, { method: 'PUT', body: data, headers: { 'content-range': `bytes 0-${data.length - 1}/${data.length}` } });
    expect(put.body.status).toEqual({ state: 'DONE' });
    expect((await rest(bqUrl('/datasets/ld/tables/p/data'))).body.totalRows).toBe('3');

    const cp = await rest(bqUrl('/jobs'), { method: 'POST', json: { configuration: { copy: { sourceTable: { datasetId: 'ld', tableId: 'p' }, destinationTable: { datasetId: 'ld', tableId: 'p2' } } } } });
    expect(cp.body.status).toEqual({ state: 'DONE' });
    expect((await rest(bqUrl('/datasets/ld/tables/p2/data'))).body.totalRows).toBe('3');

    const snap = await rest(bqUrl('/jobs'), { method: 'POST', json: { configuration: { copy: { sourceTable: { datasetId: 'ld', tableId: 'p' }, destinationTable: { datasetId: 'ld', tableId: 'snap' }, operationType: 'SNAPSHOT' } } } });
    expect(snap.body.status).toEqual({ state: 'DONE' });
    expect((await rest(bqUrl('/datasets/ld/tables/snap'))).body.type).toBe('SNAPSHOT');
    // Restore a deleted table through its `@epoch` decorator.
    const beforeDelete = Date.now();
    await new Promise((r) => setTimeout(r, 50));
    await rest(bqUrl('/datasets/ld/tables/p2'), { method: 'DELETE' });
    const restore = await rest(bqUrl('/jobs'), { method: 'POST', json: { configuration: { copy: { sourceTable: { datasetId: 'ld', tableId: `p2@${beforeDelete}` }, destinationTable: { datasetId: 'ld', tableId: 'p2' } } } } });
    expect(restore.body.status).toEqual({ state: 'DONE' });
    expect((await rest(bqUrl('/datasets/ld/tables/p2/data'))).body.totalRows).toBe('3');

    const out = join(mkdtempSync(join(tmpdir(), 'extract-')), 'out.json');
    const ex = await rest(bqUrl('/jobs'), { method: 'POST', json: { configuration: { extract: { sourceTable: { datasetId: 'ld', tableId: 'p2' }, destinationUris: [`file://${out}`], destinationFormat: 'NEWLINE_DELIMITED_JSON' } } } });
    expect(ex.body.status).toEqual({ state: 'DONE' });
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    // INT64 is written as a JSON string in JSON exports (the real service keeps 64-bit precision so)
    expect(lines).toEqual(expect.arrayContaining([{ name: 'ann', age: '3' }, { name: 'cy', age: '5' }]));

    const src = join(mkdtempSync(join(tmpdir(), 'load-')), 'x.csv');
    writeFileSync(src, 'n,s\n1,a\n2,b\n');
    const fl = await rest(bqUrl('/jobs'), { method: 'POST', json: { configuration: { load: { destinationTable: { datasetId: 'ld', tableId: 'auto' }, sourceUris: [`file://${src}`], autodetect: true } } } });
    expect(fl.body.status).toEqual({ state: 'DONE' });
    const auto = await rest(bqUrl('/datasets/ld/tables/auto'));
    expect(auto.body.schema.fields.map((f: any) => [f.name, f.type])).toEqual([['n', 'INTEGER'], ['s', 'STRING']]);
    const pq = join(mkdtempSync(join(tmpdir(), 'pq-')), 'x.parquet');
    writeFileSync(pq, Buffer.from(parquetWriteBuffer({ columnData: [{ name: 'id', data: [1n, 2n], type: 'INT64' }, { name: 'name', data: ['a', 'b'], type: 'STRING' }] })));
    const pl = await rest(bqUrl('/jobs'), { method: 'POST', json: { configuration: { load: { destinationTable: { datasetId: 'ld', tableId: 'pq' }, sourceFormat: 'PARQUET', sourceUris: [pq] } } } });
    expect(pl.body.status).toEqual({ state: 'DONE' });
    expect((await rest(bqUrl('/datasets/ld/tables/pq/data'))).body.rows).toEqual([{ f: [{ v: '1' }, { v: 'a' }] }, { f: [{ v: '2' }, { v: 'b' }] }]);
    const bad = await rest(bqUrl('/jobs'), { method: 'POST', json: { configuration: { load: { destinationTable: { datasetId: 'ld', tableId: 'p' }, sourceUris: ['file:///definitely/not/here.csv'] } } } });
    expect(bad.body.status.errorResult.reason).toBe('notFound');
    await rest(bqUrl('/datasets/ld?deleteContents=true'), { method: 'DELETE' });
  });

  it('external tables are materialized at insert; tableDefinitions land in _bq_external_temp', async () => {
    const csv = join(mkdtempSync(join(tmpdir(), 'ext-')), 'e.csv');
    writeFileSync(csv, 'n,s\n1,a\n2,b\n');
    await rest(bqUrl('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'ex' } } });
    const t = await rest(bqUrl('/datasets/ex/tables'), {
      method: 'POST',
      json: { tableReference: { tableId: 'e' }, externalDataConfiguration: { sourceUris: [`file://${csv}`], sourceFormat: 'CSV', csvOptions: { skipLeadingRows: 1 }, schema: { fields: [{ name: 'n', type: 'INTEGER' }, { name: 's', type: 'STRING' }] } } },
    });
    expect(t.body.type).toBe('EXTERNAL');
    // external-tables.md, Limitations: tabledata.list does not read an external table (overturned by sql66: this read
    // its rows through it); a query does.
    expect((await rest(bqUrl('/datasets/ex/tables/e/data'))).status).toBe(400);
    expect((await rest(bqUrl('/queries'), { method: 'POST', json: { query: 'SELECT COUNT(*) FROM ex.e', useLegacySql: false } })).body.rows).toEqual([{ f: [{ v: '2' }] }]);
    const az = await rest(bqUrl('/datasets/ex/tables'), { method: 'POST', json: { tableReference: { tableId: 'az' }, externalDataConfiguration: { sourceUris: ['azure://a.blob.core.windows.net/c/x.csv'], sourceFormat: 'CSV' } } });
    expect(az.status).toBe(400);
    const q = await rest(bqUrl('/queries'), {
      method: 'POST',
      json: { query: 'SELECT SUM(n) AS total FROM ext1', useLegacySql: false, tableDefinitions: { ext1: { sourceUris: [`file://${csv}`], sourceFormat: 'CSV', autodetect: true } } },
    });
    expect(q.body.rows).toEqual([{ f: [{ v: '3' }] }]);
    // With a defaultDataset too (spec §1.6.4): the definitions resolve as bare names before the dataset's tables.
    const withDefault = await rest(bqUrl('/queries'), {
      method: 'POST',
      json: { query: 'SELECT SUM(ext1.n) AS total FROM ext1, e', useLegacySql: false, defaultDataset: { datasetId: 'ex' }, tableDefinitions: { ext1: { sourceUris: [`file://${csv}`], sourceFormat: 'CSV', autodetect: true } } },
    });
    expect(withDefault.body.rows).toEqual([{ f: [{ v: '6' }] }]);
    // No schema: the inferred one is the table's before its rows are stored.
    const auto = await rest(bqUrl('/datasets/ex/tables'), { method: 'POST', json: { tableReference: { tableId: 'auto' }, externalDataConfiguration: { sourceUris: [`file://${csv}`], sourceFormat: 'CSV', autodetect: true } } });
    expect(auto.body.schema.fields.map((f: { name: string; type: string }) => `${f.name}:${f.type}`)).toEqual(['n:INTEGER', 's:STRING']);
    expect((await rest(bqUrl('/queries'), { method: 'POST', json: { query: 'SELECT n, s FROM ex.auto ORDER BY n', useLegacySql: false } })).body.rows).toEqual([{ f: [{ v: '1' }, { v: 'a' }] }, { f: [{ v: '2' }, { v: 'b' }] }]);
    // Spec §4.3.2: a Sheets fixture is a CSV file; a Bigtable source registers metadata only, URI and all.
    const sheet = await rest(bqUrl('/datasets/ex/tables'), {
      method: 'POST',
      json: { tableReference: { tableId: 'sheet' }, externalDataConfiguration: { sourceUris: [`file://${csv}`], sourceFormat: 'GOOGLE_SHEETS', googleSheetsOptions: { skipLeadingRows: 1 }, schema: { fields: [{ name: 'n', type: 'INTEGER' }, { name: 's', type: 'STRING' }] } } },
    });
    expect(sheet.status).toBe(200);
    expect((await rest(bqUrl('/queries'), { method: 'POST', json: { query: 'SELECT COUNT(*) FROM ex.sheet', useLegacySql: false } })).body.rows).toEqual([{ f: [{ v: '2' }] }]);
    const bigtable = await rest(bqUrl('/datasets/ex/tables'), {
      method: 'POST',
      json: { tableReference: { tableId: 'bt' }, externalDataConfiguration: { sourceUris: ['https://googleapis.com/bigtable/projects/test/instances/i/tables/t'], sourceFormat: 'BIGTABLE' } },
    });
    expect(bigtable.status).toBe(200);
    expect((await rest(bqUrl('/queries'), { method: 'POST', json: { query: 'SELECT COUNT(*) FROM ex.bt', useLegacySql: false } })).body.rows).toEqual([{ f: [{ v: '0' }] }]);
    // Spec §7: an alt:// load without ALT_ENDPOINT is refused at insert, naming the variable.
    const alt = await rest(bqUrl('/jobs'), { method: 'POST', json: { configuration: { load: { sourceUris: ['alt://bkt/x.csv'], destinationTable: { datasetId: 'ex', tableId: 'alt' } } } } });
    expect(alt.status).toBe(400);
    expect(alt.body.error.message).toContain('ALT_ENDPOINT');
    await rest(bqUrl('/datasets/ex?deleteContents=true'), { method: 'DELETE' });
  });

  for (const mode of ['apiEndpoint', 'BIGQUERY_EMULATOR_HOST'] as const) {
    it(`Node client (${mode}): dataset/table create, insert, getRows, exists, delete`, async () => {
      const saved = process.env['BIGQUERY_EMULATOR_HOST'];
      if (mode === 'BIGQUERY_EMULATOR_HOST') process.env['BIGQUERY_EMULATOR_HOST'] = emu.url;
      try {
        const bq = new BigQuery({ projectId: 'test', apiEndpoint: emu.url, authClient: fakeAuth() });
        const name = `node_${mode === 'apiEndpoint' ? 'a' : 'e'}`;
        const [ds] = await bq.createDataset(name, { location: 'US' });
        expect((await ds.exists())[0]).toBe(true);
        expect((await bq.dataset('missing_ds').exists())[0]).toBe(false);
        const [table] = await ds.createTable('people', {
          schema: { fields: [{ name: 'name', type: 'STRING' }, { name: 'age', type: 'INTEGER' }, { name: 'ts', type: 'TIMESTAMP' }, { name: 'tags', type: 'STRING', mode: 'REPEATED' }] },
        });
        await table.insert([{ name: 'a', age: 1, ts: new Date('2024-01-01T00:00:00Z') }, { name: 'b', age: 2, tags: ['x'] }]);
        const [rows] = await table.getRows();
        expect(rows.map((r: Record<string, unknown>) => r['name']).sort()).toEqual(['a', 'b']);
        const a = rows.find((r: Record<string, unknown>) => r['name'] === 'a') as Record<string, any>;
        expect(a['tags']).toEqual([]);
        expect(a['ts'].value).toBe('2024-01-01T00:00:00.000Z');
        const [tables] = await ds.getTables();
        expect(tables.map((t) => t.id)).toContain('people');
        await table.delete();
        await ds.delete({ force: true });
        expect((await ds.exists())[0]).toBe(false);
      } finally {
        if (saved === undefined) delete process.env['BIGQUERY_EMULATOR_HOST'];
        else process.env['BIGQUERY_EMULATOR_HOST'] = saved;
      }
    });
  }

  it('Node client: query (named/positional params, paging) and createQueryJob + getQueryResults', async () => {
    const bq = new BigQuery({ projectId: 'test', apiEndpoint: emu.url, authClient: fakeAuth() });
    const [rows] = await bq.query({ query: 'SELECT 1 AS x', useLegacySql: false });
    expect(rows).toEqual([{ x: 1 }]);
    const [named] = await bq.query({ query: 'SELECT @n + 1 AS y, @b AS b, @arr AS arr', params: { n: 41, b: true, arr: [1, 2] } });
    expect(named).toEqual([{ y: 42, b: true, arr: [1, 2] }]);
    const [positional] = await bq.query({ query: 'SELECT ? AS s', params: ['hi'] });
    expect(positional).toEqual([{ s: 'hi' }]);
    const [job] = await bq.createQueryJob({ query: 'SELECT @n + 1 AS y', params: { n: 41 } });
    const [res] = await job.getQueryResults();
    expect(res).toEqual([{ y: 42 }]);
    // Paging: the client follows pageToken through getQueryResults.
    const [many] = await bq.query({ query: 'SELECT x FROM UNNEST(GENERATE_ARRAY(1, 2500)) AS x ORDER BY x', maxResults: 1000 });
    expect(many).toHaveLength(2500);
    expect(many[2499]).toEqual({ x: 2500 });
  });

  it('parameterized types on the wire: tables.get shows STRUCT fields\' maxLength/precision/scale; written values rounded, NULL arrays []', async () => {
    const q = (query: string) => rest(bqUrl('/queries'), { method: 'POST', json: { query, useLegacySql: false } });
    await rest(bqUrl('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'pz' } } });
    // BIGNUMERIC(P) takes P <= 38 (data-types.md, Parameterized decimal type); this test had BIGNUMERIC(40).
    expect((await q('CREATE TABLE pz.t (s STRUCT<a STRING(5), b NUMERIC(5, 2)>, n BIGNUMERIC(38), xs ARRAY<INT64>)')).body.jobComplete).toBe(true);
    const t = await rest(bqUrl('/datasets/pz/tables/t'));
    expect(t.body.schema.fields).toEqual([
      { name: 's', type: 'RECORD', mode: 'NULLABLE', fields: [{ name: 'a', type: 'STRING', mode: 'NULLABLE', maxLength: '5' }, { name: 'b', type: 'NUMERIC', mode: 'NULLABLE', precision: '5', scale: '2' }] },
      { name: 'n', type: 'BIGNUMERIC', mode: 'NULLABLE', precision: '38' },
      { name: 'xs', type: 'INTEGER', mode: 'REPEATED' },
    ]);
    expect((await q("INSERT pz.t VALUES (STRUCT('abc', 1.255), 2.5, NULL)")).body.numDmlAffectedRows).toBe('1');
    const rows = await rest(bqUrl('/datasets/pz/tables/t/data'));
    expect(rows.body.rows).toEqual([{ f: [{ v: { f: [{ v: 'abc' }, { v: '1.26' }] } }, { v: '3' }, { v: [] }] }]);
    const bad = await q("INSERT pz.t (s) VALUES (STRUCT('abcdef', 1))");
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('Field s.a: STRING(5) has maximum length 5 but got a value with length 6');
    // insertAll: a row beyond a column's parameters is rejected as an invalid row; the others are rounded as they are stored.
    const insert = (skipInvalidRows: boolean) =>
      rest(bqUrl('/datasets/pz/tables/t/insertAll'), { method: 'POST', json: { skipInvalidRows, rows: [{ json: { s: { a: 'ab', b: '2.005' } } }, { json: { s: { a: 'abcdefg' } } }] } });
    const stopped = await insert(false);
    expect(stopped.body.insertErrors).toEqual([
      { index: 1, errors: [{ reason: 'invalid', location: 's', debugInfo: '', message: 'Field s.a: STRING(5) has maximum length 5 but got a value with length 7' }] },
      { index: 0, errors: [{ reason: 'stopped', location: '', debugInfo: '', message: '' }] },
    ]);
    const skipped = await insert(true);
    expect(skipped.body.insertErrors).toEqual([{ index: 1, errors: [expect.objectContaining({ reason: 'invalid', location: 's' })] }]);
    const after = await q('SELECT s.b FROM pz.t WHERE s.a = "ab"');
    expect(after.body.rows).toEqual([{ f: [{ v: '2.01' }] }]);
  });

  it('jobs over HTTP: DDL/DML statistics, legacy bracket refs, errors, getQueryResults paging', async () => {
    const q = (json: Record<string, unknown>) => rest(bqUrl('/queries'), { method: 'POST', json });
    await rest(bqUrl('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'qj' } } });
    expect((await q({ query: 'CREATE TABLE qj.t (a INT64, s STRING)', useLegacySql: false })).body.jobComplete).toBe(true);
    const ins = await q({ query: "INSERT INTO qj.t VALUES (1, 'x'), (2, 'y'), (3, 'z')", useLegacySql: false });
    expect(ins.body).toMatchObject({ numDmlAffectedRows: '3', dmlStats: { insertedRowCount: '3' } });
    const job = await rest(bqUrl(`/jobs/${ins.body.jobReference.jobId}`));
    expect(job.body.statistics.query).toMatchObject({ statementType: 'INSERT', numDmlAffectedRows: '3' });
    // jobs.insert answers RUNNING; getQueryResults waits for the end.
    const ddlRunning = await rest(bqUrl('/jobs'), { method: 'POST', json: { configuration: { query: { query: 'CREATE TABLE qj.u AS SELECT 1 AS one', useLegacySql: false } } } });
    expect((await rest(bqUrl(`/queries/${ddlRunning.body.jobReference.jobId}?maxResults=0`))).body.jobComplete).toBe(true);
    const ddl = await rest(bqUrl(`/jobs/${ddlRunning.body.jobReference.jobId}`));
    expect(ddl.body.statistics.query).toMatchObject({ ddlOperationPerformed: 'CREATE', ddlTargetTable: { projectId: 'test', datasetId: 'qj', tableId: 'u' } });
    // Spec §1.6.3: only useLegacySql true rewrites bracket references; unset is standard SQL.
    const legacy = await q({ query: 'SELECT a FROM [test:qj.t] WHERE a = 2', useLegacySql: true });
    expect(legacy.body.rows).toEqual([{ f: [{ v: '2' }] }]);
    const unset = await q({ query: 'SELECT a FROM [test:qj.t] WHERE a = 2' });
    expect(unset.status).toBe(400);
    expect(unset.body.error.errors[0].reason).toBe('invalidQuery');
    expect((await q({ query: 'SELECT a FROM `test.qj.t` WHERE a = 3' })).body.rows).toEqual([{ f: [{ v: '3' }] }]);
    const bad = await q({ query: 'SELECT nope FROM qj.t', useLegacySql: false });
    expect(bad.status).toBe(400);
    expect(bad.body.error.errors[0].reason).toBe('invalidQuery');
    await rest(bqUrl('/jobs'), { method: 'POST', json: { configuration: { query: { query: 'SELECT a FROM qj.t ORDER BY a', useLegacySql: false } }, jobReference: { jobId: 'sel1' } } });
    const p1 = await rest(bqUrl('/queries/sel1?maxResults=2'));
    const sel = await rest(bqUrl('/jobs/sel1'));
    expect(sel.body.status.state).toBe('DONE');
    expect(p1.body).toMatchObject({ jobComplete: true, totalRows: '3', pageToken: '2' });
    const p2 = await rest(bqUrl('/queries/sel1?pageToken=2'));
    expect(p2.body.rows).toEqual([{ f: [{ v: '3' }] }]);
    const dest = sel.body.configuration.query.destinationTable;
    expect((await rest(bqUrl(`/datasets/${dest.datasetId}/tables/${dest.tableId}/data`))).body.totalRows).toBe('3');
    const jobs = await q({ query: "SELECT job_id, state FROM `region-us`.INFORMATION_SCHEMA.JOBS WHERE job_id = 'sel1' OR state = 'RUNNING'", useLegacySql: false });
    expect(jobs.body.rows).toEqual(expect.arrayContaining([{ f: [{ v: 'sel1' }, { v: 'DONE' }] }, { f: [{ v: jobs.body.jobReference.jobId }, { v: 'RUNNING' }] }]));
    // query-syntax.md, Duplicate aliases: a result's repeated names are renamed, unless a destination table is named.
    const dup = await q({ query: 'SELECT 1 AS a, 2 AS a, 3 AS A', useLegacySql: false });
    expect(dup.body.schema.fields.map((f: { name: string }) => f.name)).toEqual(['a', 'a_1', 'A_2']);
    expect(dup.body.rows).toEqual([{ f: [{ v: '1' }, { v: '2' }, { v: '3' }] }]);
    const dupDest = { query: 'SELECT 1 AS a, 2 AS a', useLegacySql: false, destinationTable: { projectId: 'test', datasetId: 'qj', tableId: 'dup' } };
    await rest(bqUrl('/jobs'), { method: 'POST', json: { configuration: { query: dupDest }, jobReference: { jobId: 'dupdest' } } });
    expect((await rest(bqUrl('/queries/dupdest'))).status).toBe(400);
    const dupJob = await rest(bqUrl('/jobs/dupdest'));
    expect(dupJob.body.status.errorResult).toMatchObject({ reason: 'invalidQuery', message: expect.stringContaining('Duplicate column names in the result are not supported') });
    expect((await rest(bqUrl('/datasets/qj/tables/dup'))).status).toBe(404);
    await rest(bqUrl('/datasets/qj?deleteContents=true'), { method: 'DELETE' });
  });

  it('a second emulator on the same data dir fails clearly instead of sharing it', async () => {
    const r = await runGateway(['--data-dir', emu.dataDir, '--http-port', '0', '--grpc-port', String(await freePort())]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/in use|locked/i);
    expect((await rest(bqUrl('/datasets'))).status).toBe(200);
  });

  it('the engine does not outlive a SIGKILLed gateway, and restarts after its own SIGKILL', async () => {
    const own = await startEmulator();
    try {
      const child = (): number | undefined => {
        try {
          return Number(execFileSync('pgrep', ['-P', String(own.proc.pid)]).toString().trim().split('\n')[0]) || undefined;
        } catch {
          return undefined;
        }
      };
      const first = child()!;
      process.kill(first, 'SIGKILL');
      const t0 = Date.now();
      let status = 0;
      while (Date.now() - t0 < 30_000 && status !== 200) {
        status = (await rest(`${own.url}/bigquery/v2/projects/test/datasets`)).status;
        if (status !== 200) expect(status).toBe(503);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(200);
      const second = child()!;
      expect(second).not.toBe(first);
      own.proc.kill('SIGKILL');
      const t1 = Date.now();
      let alive = true;
      while (alive && Date.now() - t1 < 15_000) {
        await new Promise((r) => setTimeout(r, 200));
        try {
          process.kill(second, 0);
        } catch {
          alive = false;
        }
      }
      expect(alive).toBe(false);
    } finally {
      await own.stop();
    }
  });

});
