// Bad input over HTTP against the real gateway and engine: each known case of
// issue 15 gets the error envelope with a 4xx and the service's wording, the
// engine process never changes, and what is stored stays as it was.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enginePid, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

function expectEnvelope(r: { status: number; body: any }, code: number, reason: string, message?: string | RegExp): void {
  expect(r.status, JSON.stringify(r.body)).toBe(code);
  expect(r.body.error.code).toBe(code);
  expect(typeof r.body.error.status).toBe('string');
  expect(r.body.error.errors).toEqual([{ domain: 'global', reason, message: r.body.error.message }]);
  if (typeof message === 'string') expect(r.body.error.message).toBe(message);
  else if (message) expect(r.body.error.message).toMatch(message);
}

/** Raw bytes to the gateway: for requests fetch would not send (oversized headers, lying lengths). */
function raw(port: number, text: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let out = '';
    sock.on('data', (b) => (out += b.toString('latin1')));
    sock.on('error', reject);
    sock.on('close', () => {
      const [head, ...rest] = out.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head ?? '')?.[1]);
      const text = rest.join('\r\n\r\n');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON
      }
      resolve({ status, body });
    });
    sock.end(text);
  });
}

describe('bad input gets the envelope, never a crash', () => {
  let emu: Emulator;
  let pid: number;
  const base = (): string => `${emu.url}/bigquery/v2/projects/p`;
  const post = (path: string, json: unknown) => rest(`${base()}/${path}`, { method: 'POST', json });
  const query = (q: string, extra: Record<string, unknown> = {}) => post('queries', { query: q, useLegacySql: false, ...extra });

  beforeAll(async () => {
    emu = await startEmulator();
    pid = enginePid(emu);
    expect((await post('datasets', { datasetReference: { datasetId: 'd' } })).status).toBe(200);
    expect((await query('CREATE TABLE d.t (id INT64, s STRING)')).status).toBe(200);
    expect((await query("INSERT d.t VALUES (1, 'a'), (2, 'b')")).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    // Nothing crashed, and the stored rows are as written.
    expect(enginePid(emu)).toBe(pid);
    expect(emu.output()).not.toMatch(/engine: (exited|killed)/);
    const rows = await query('SELECT id, s FROM d.t ORDER BY id');
    expect(rows.body.rows).toEqual([{ f: [{ v: '1' }, { v: 'a' }] }, { f: [{ v: '2' }, { v: 'b' }] }]);
    await emu?.stop();
  });

  it('an error text with any characters crosses to the client exactly', async () => {
    for (const text of ['café', 'snow ☃, face 😀', 'tab\tand\u0001control', '"quoted" \\ back']) {
      const r = await query(`SELECT ERROR(${JSON.stringify(text).replace(/\\u0001/g, '\u0001')})`);
      expectEnvelope(r, 400, 'invalidQuery', text);
    }
    // A very long one is cut, still well formed.
    const r = await query("SELECT ERROR(REPEAT('😀', 100000))");
    expectEnvelope(r, 400, 'invalidQuery');
    expect(r.body.error.message.length).toBeLessThanOrEqual(8192);
    expect(r.body.error.message.endsWith('😀…')).toBe(true);
  });

  it('invalid project ids in the path are a 400 on every route family, and create nothing', async () => {
    const bad = `${emu.url}/bigquery/v2/projects/Bad%20Id!`;
    const msg = /^Invalid project ID 'Bad Id!'/;
    expectEnvelope(await rest(`${bad}/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'x' } } }), 400, 'invalid', msg);
    expectEnvelope(await rest(`${bad}/datasets`), 400, 'invalid', msg);
    expectEnvelope(await rest(`${bad}/jobs`, { method: 'POST', json: { configuration: { query: { query: 'SELECT 1' } } } }), 400, 'invalid', msg);
    expectEnvelope(await rest(`${bad}/queries`, { method: 'POST', json: { query: 'SELECT 1' } }), 400, 'invalid', msg);
    expectEnvelope(await rest(`${bad}/datasets/d/tables/t/data`), 400, 'invalid', msg);
    expect((await rest(`${emu.url}/bigquery/v2/projects`)).body.projects?.map((p: { id: string }) => p.id) ?? []).not.toContain('Bad Id!');
  });

  it('SQL that once answered 500 is a 400', async () => {
    expectEnvelope(await query("SELECT APPLY(NUMERIC '1.1', '$.a')"), 400, 'invalidQuery', /^No matching signature for function APPLY/);
    expectEnvelope(await query("SELECT PARSE_JSON(CONCAT(REPEAT('[', 10000), REPEAT(']', 10000)))"), 400, 'invalidQuery', /Max nesting of 500 has been exceeded/);
    expectEnvelope(await query("SELECT LENGTH(STRING_AGG(s)) FROM UNNEST(GENERATE_ARRAY(1, 3000)) AS i, (SELECT REPEAT('x', 1000000) AS s)"), 400, 'resourcesExceeded', 'Cannot query rows larger than 100MB limit.');
    expectEnvelope(await query(`SELECT ${'ABS('.repeat(5000)}1${')'.repeat(5000)}`), 400, 'invalidQuery', /too deeply nested/);
    // The service's limit on the text: 1,024K characters (not UTF-16 units), comments included.
    const tooLong = `SELECT 1 -- ${'x'.repeat(1024 * 1024)}`;
    expectEnvelope(await query(tooLong), 400, 'invalid', 'The query is too large. The maximum standard SQL query length is 1024.00K characters, including comments and white space characters.');
    expect((await query(`SELECT 1 -- ${'😀'.repeat(600_000)}`)).status).toBe(200);
    const r = await query("SELECT 'a-b' LIKE '%a-b%' AS l");
    expect(r.status).toBe(200);
    expect(r.body.rows).toEqual([{ f: [{ v: 'true' }] }]);
  });

  it('wrong JSON types in bodies of every route family', async () => {
    const cases: [string, string, unknown, string | RegExp][] = [
      ['POST', 'datasets', { datasetReference: { datasetId: 'x1' }, labels: true }, "Invalid value at 'dataset.labels' (type.googleapis.com/google.cloud.bigquery.v2.Dataset.LabelsEntry), true"],
      ['PATCH', 'datasets/d', { defaultTableExpirationMs: 'soon' }, "Invalid value at 'dataset.default_table_expiration_ms.value' (TYPE_INT64), \"soon\""],
      ['POST', 'datasets/d/tables', { tableReference: { tableId: 'v' }, view: { query: {} } }, "Invalid value at 'table.view' (query), Starting an object on a scalar field"],
      ['POST', 'datasets/d/tables', { tableReference: { tableId: 'v' }, view: [{ query: 'SELECT 1' }] }, 'Invalid JSON payload received. Unknown name "view" at \'table\': Proto field is not repeating, cannot start list.'],
      ['PUT', 'datasets/d/tables/t', { schema: { fields: [{ name: 'id', type: 'INTEGER', fields: 'none' }] } }, "Invalid value at 'table.schema.fields[0].fields[0]' (type.googleapis.com/google.cloud.bigquery.v2.TableFieldSchema), \"none\""],
      ['POST', 'datasets/d/tables/t/insertAll', { skipInvalidRows: 'maybe', rows: [{ json: { id: 3 } }] }, "Invalid value at 'skip_invalid_rows.value' (TYPE_BOOL), \"maybe\""],
      ['POST', 'jobs', { configuration: { query: { query: 'SELECT 1', maximumBytesBilled: 'None' } } }, "Invalid value at 'job.configuration.query.maximum_bytes_billed.value' (TYPE_INT64), \"None\""],
      // One value where one goes may come as a one-element list (the samples' writeDisposition); two may not.
      ['POST', 'jobs', { configuration: { query: { query: 'SELECT 1', writeDisposition: ['WRITE_APPEND', 'WRITE_TRUNCATE'] } } }, 'Invalid JSON payload received. Unknown name "writeDisposition" at \'job.configuration.query\': Proto field is not repeating, cannot start list.'],
      ['POST', 'queries', { query: 'SELECT @x', queryParameters: [null] }, "Invalid value at 'query_request.query_parameters[0]' (type.googleapis.com/google.cloud.bigquery.v2.QueryParameter), null"],
      ['POST', 'queries', { query: 'SELECT 1', maxResults: -1, timeoutMs: { a: 1 } }, "Invalid value at 'query_request.max_results.value' (TYPE_UINT32), -1\nInvalid value at 'query_request' (timeout_ms), Starting an object on a scalar field"],
      ['POST', 'datasets/d/routines', { routineReference: { routineId: 'f' }, arguments: [{ name: 'x', dataType: 'INT64' }] }, "Invalid value at 'routine.arguments[0].data_type' (type.googleapis.com/google.cloud.bigquery.v2.StandardSqlDataType), \"INT64\""],
      ['POST', 'datasets/d/tables/t/rowAccessPolicies', { rowAccessPolicyReference: { policyId: 'p' }, filterPredicate: [] }, /^Invalid JSON payload received. Unknown name "filterPredicate"/],
    ];
    for (const [method, path, json, message] of cases) {
      expectEnvelope(await rest(`${base()}/${path}`, { method, json }), 400, 'invalid', message);
    }
    // A parameter type that is no type name: the engine's refusal.
    const r = await query('SELECT @x', { queryParameters: [{ name: 'x', parameterType: { type: 5 }, parameterValue: { value: '1' } }] });
    expectEnvelope(r, 400, 'invalid', 'Invalid query parameter type 5 for @x');
    // A view's query is checked as the service checks it: `true` is read as text, then refused as SQL.
    const view = (query: unknown) => rest(`${base()}/datasets/d/tables`, { method: 'POST', json: { tableReference: { tableId: 'v' }, view: { query } } });
    expectEnvelope(await view(true), 400, 'invalidQuery', 'Syntax error: Unexpected keyword TRUE at [1:1]');
    expectEnvelope(await view('SELECT nope FROM d.t'), 400, 'invalidQuery', 'Unrecognized name: nope at [1:8]');
    expectEnvelope(await view('SELECT * FROM d.missing'), 404, 'notFound', /^Not found: Table p:d.missing/);
    // views-intro.md, Limitations: a view's references name their dataset (the view's own included).
    expectEnvelope(await view('SELECT * FROM t'), 400, 'invalidQuery', /^Table "t" must be qualified with a dataset/);
    // Nothing above was created.
    expect((await rest(`${base()}/datasets/x1`)).status).toBe(404);
    expect((await rest(`${base()}/datasets/d/tables/v`)).status).toBe(404);
  });

  it('schemas and bodies nested too deeply', async () => {
    const nest = (levels: number): unknown => {
      let f: Record<string, unknown> = { name: 'leaf', type: 'INTEGER' };
      for (let i = levels - 1; i >= 1; i--) f = { name: `r${i}`, type: 'RECORD', fields: [f] };
      return f;
    };
    expect((await post('datasets/d/tables', { tableReference: { tableId: 'n15' }, schema: { fields: [nest(15)] } })).status).toBe(200);
    const path = Array.from({ length: 15 }, (_, i) => `r${i + 1}`).join('.');
    expectEnvelope(await post('datasets/d/tables', { tableReference: { tableId: 'n16' }, schema: { fields: [nest(16)] } }), 400, 'invalid', `Schema nested too deeply for field ${path}, maximum allowed depth is 15.`);
    const deep = `{"tableReference":{"tableId":"n2000"},"schema":{"fields":[${'{"name":"r","type":"RECORD","fields":['.repeat(2000)}{"name":"x","type":"INTEGER"}${']}'.repeat(2000)}]}}`;
    const r = await rest(`${base()}/datasets/d/tables`, { method: 'POST', body: deep, headers: { 'content-type': 'application/json' } });
    expectEnvelope(r, 400, 'invalid', "Invalid JSON payload received. Message too deep. Max recursion depth reached for key 'fields'");
    // insertAll rows reach the engine unparsed: a JSON cell nested 10,000 deep is that row's error.
    expect((await query('CREATE TABLE d.j (j JSON)')).status).toBe(200);
    for (const cell of [`${'['.repeat(10_000)}${']'.repeat(10_000)}`, JSON.stringify(`${'['.repeat(10_000)}${']'.repeat(10_000)}`)]) {
      const ins = await rest(`${base()}/datasets/d/tables/j/insertAll`, { method: 'POST', body: `{"rows":[{"json":{"j":${cell}}}]}`, headers: { 'content-type': 'application/json' } });
      expect(ins.status).toBe(200);
      expect(ins.body.insertErrors[0].errors[0].message).toMatch(/^Invalid JSON value: .*Max nesting of 500|^Invalid JSON value: \[\[\[/);
    }
  });

  it('load jobs of bad schemas and damaged files fail as jobs, with the service\'s reasons', async () => {
    const load = async (meta: unknown, data: Buffer) => {
      const b = 'xbx';
      const body = Buffer.concat([Buffer.from(`--${b}\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(meta)}\r\n--${b}\r\n\r\n`), data, Buffer.from(`\r\n--${b}--`)]);
      return rest(`${emu.url}/upload/bigquery/v2/projects/p/jobs?uploadType=multipart`, { method: 'POST', body, headers: { 'content-type': `multipart/related; boundary=${b}` } });
    };
    const cfg = (format: string, fields: unknown[]) => ({ configuration: { load: { destinationTable: { datasetId: 'd', tableId: 'loaded' }, sourceFormat: format, schema: { fields } } } });
    const cases: [unknown, Buffer, string][] = [
      [cfg('CSV', [{ name: 'a', type: 'None' }]), Buffer.from('1\n'), 'Invalid value for type: None is not a valid value'],
      [cfg('NEWLINE_DELIMITED_JSON', [{ type: 'STRING' }]), Buffer.from('{}\n'), 'Empty field name'],
      // An Avro header claiming 2^31 metadata entries: avsc once spun on it for minutes, holding the gateway.
      [cfg('AVRO', [{ name: 'a', type: 'INTEGER' }]), Buffer.concat([Buffer.from('Obj\x01', 'latin1'), Buffer.from([0xfe, 0xff, 0xff, 0xff, 0x0f]), Buffer.alloc(64, 7)]), 'not a readable Avro file'],
    ];
    for (const [meta, data, message] of cases) {
      const r = await load(meta, data);
      expect(r.status).toBe(200);
      expect(r.body.status.errorResult.reason).toBe('invalid');
      expect(r.body.status.errorResult.message).toContain(message);
    }
    expect((await rest(`${base()}/datasets/d/tables/loaded`)).status).toBe(404);
  });

  it('query parameters out of range and garbage page tokens', async () => {
    for (const path of ['datasets', 'datasets/d/tables', 'jobs', 'datasets/d/routines', 'datasets/d/tables/t/data']) {
      expectEnvelope(await rest(`${base()}/${path}?maxResults=-1`), 400, 'invalid', "Invalid value at 'max_results' (type.googleapis.com/google.protobuf.UInt32Value), \"-1\"");
      expectEnvelope(await rest(`${base()}/${path}?pageToken=garbage`), 400, 'invalid', 'Invalid page token: garbage');
    }
  });

  it('requests refused before routing get the envelope', async () => {
    expectEnvelope(await rest(`${base()}/datasets/${'a'.repeat(70_000)}`), 431, 'invalid', /^Request Header Fields Too Large/);
    const bad = await rest(`${base()}/queries`, { method: 'POST', body: '{"query": ', headers: { 'content-type': 'application/json' } });
    expectEnvelope(bad, 400, 'parseError', /^Parse error: invalid JSON payload received/);
    const enc = await rest(`${base()}/queries`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', 'content-encoding': 'zstd-x' } });
    expectEnvelope(enc, 415, 'invalid', 'Unsupported Content-Encoding: zstd-x');
    const big = await raw(emu.httpPort, `POST /bigquery/v2/projects/p/queries HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 999999999999\r\n\r\n{}`);
    expectEnvelope(big, 413, 'invalid', /^Request payload size exceeds the limit/);
    const garbled = await raw(emu.httpPort, 'GARBAGE / HTTP/9.9\r\n\r\n');
    expectEnvelope(garbled, 400, 'invalid', /^Bad Request/);
  });
});

describe('a statement that outgrows memory', () => {
  let emu: Emulator;
  beforeAll(async () => {
    // A small heap, so that the run reaches it in a second or two.
    emu = await startEmulator({ env: { WAREHOUSE_ENGINE_NODE_FLAGS: '--max-old-space-size=256' } });
  }, 60_000);
  afterAll(async () => emu?.stop());

  it('fails with resources exceeded, and the engine goes on', async () => {
    const pid = enginePid(emu);
    const q = (query: string) => rest(`${emu.url}/bigquery/v2/projects/p/queries`, { method: 'POST', json: { query, useLegacySql: false, timeoutMs: 120_000 } });
    // 8 million distinct strings, every one kept for the result.
    const big = "SELECT CONCAT('x', CAST(x AS STRING)) AS s FROM UNNEST(GENERATE_ARRAY(1, 1000000)) AS x, UNNEST(GENERATE_ARRAY(1, 8)) AS y";
    expectEnvelope(await q(big), 400, 'resourcesExceeded', 'Resources exceeded during query execution: The query could not be executed in the allotted memory.');
    // The same rows streamed through an aggregate need no memory: the guard tells garbage from live data.
    const count = await q(`SELECT COUNT(*) AS n FROM (${big})`);
    expect(count.status).toBe(200);
    expect(count.body.rows).toEqual([{ f: [{ v: '8000000' }] }]);
    expect(enginePid(emu)).toBe(pid);
    expect(emu.output()).not.toMatch(/engine: (exited|killed)|out of memory/);
  }, 120_000);
});
