// A rules sweep (issue 16, set ay, sql59 session): load jobs through HTTP (jobs.insert with file:// sources, which the
// engine reads itself), from files this test writes byte for byte. The SQL form's cases are
// test/sql/unseen-ay-rules-loads.sqltest. Rules (page, section: paraphrase):
//   json-data.md, Load from newline delimited JSON files: a JSON column's value in the file is the JSON value (a string
//     is a JSON string); data-types.md, JSON type: the first of duplicate keys is kept (also for insertAll cells).
//   exporting-data.md: an extract to newline-delimited JSON, loaded back with the schema, gives the same JSON values.
//   Job.md, JobConfigurationLoad: nullMarker and nullMarkers can't both be set; nullMarkers lists every NULL
//     spelling, the empty string included; ignoreUnknownValues (CSV: trailing columns are bad records without it);
//     maxBadRecords; allowJaggedRows (missing trailing columns are bad records without it);
//     preserveAsciiControlCharacters (CSV page, Encoding: an ASCII 0 fails the load without it);
//     writeDisposition WRITE_EMPTY (a table with data is a 'duplicate' error); createDisposition CREATE_NEVER
//     (a missing table is a 'notFound' error).
//   loading-data-cloud-storage-json.md, Details, Boolean: yes/no, y/n, t/f strings load into BOOL.
//   schema-detect.md: yes/no detect as BOOLEAN, YYYY/MM/DD HH:MM as TIMESTAMP.
//   load-data-partitioned-tables.md: a decorator's partition must match the rows' partitioning column values.
// Every case written before the first run; first run and corrections in the commit message.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, jobDone, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

type Field = { name: string; type: string; mode?: string; fields?: Field[] };

describe.skipIf(!hasRealEngine())('load jobs: the rules of the loading pages (set ay)', () => {
  let emu: Emulator;
  let dir: string;
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/ayp${p}`;
  const query = async (sql: string): Promise<unknown[][]> => {
    const r = await rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return (r.body.rows ?? []).map((x: { f: { v: unknown }[] }) => x.f.map((c) => c.v));
  };
  const done = (jobId: string): Promise<any> => jobDone(emu, 'ayp', jobId);
  /** Runs a job; the finished job resource, or the insert's error body when the insert itself is refused. */
  const job = async (configuration: Record<string, unknown>): Promise<{ status: number; job?: any; body: any }> => {
    const ins = await rest(url('/jobs'), { method: 'POST', json: { configuration } });
    if (ins.status !== 200) return { status: ins.status, body: ins.body };
    return { status: 200, job: await done(ins.body.jobReference.jobId), body: ins.body };
  };
  const load = (table: string, file: string, format: string, extra: Record<string, unknown> = {}, schema?: Field[]) =>
    job({ load: { destinationTable: { datasetId: 'd', tableId: table }, sourceUris: [`file://${file}`], sourceFormat: format, ...(schema ? { schema: { fields: schema } } : {}), ...extra } });
  const loaded = async (...args: Parameters<typeof load>): Promise<void> => {
    const r = await load(...args);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.job.status.errorResult, JSON.stringify(r.job.status)).toBeUndefined();
  };
  /** The reason a load failed with: the insert's error or the job's errorResult. */
  const refused = async (...args: Parameters<typeof load>): Promise<string> => {
    const r = await load(...args);
    if (r.status !== 200) {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      return r.body.error.errors[0].reason as string;
    }
    expect(r.job.status.errorResult, 'the load should have failed').toBeDefined();
    return r.job.status.errorResult.reason as string;
  };
  const file = (name: string, text: string | Buffer): string => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  beforeAll(async () => {
    emu = await startEmulator();
    dir = mkdtempSync(join(tmpdir(), 'unseen-ay-loads-'));
    expect((await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
  });
  afterAll(async () => {
    await emu?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a newline-delimited JSON column takes the value itself: a string is a JSON string, the first duplicate key stays', async () => {
    const f = file('j1.json', ['{"id": 1, "doc": "plain words"}', '{"id": 2, "doc": {"k": 1, "k": 2, "z": [1, {"a": 0, "a": 9}]}}', '{"id": 3, "doc": 12.5}', '{"id": 4, "doc": null}', ''].join('\n'));
    await loaded('j1', f, 'NEWLINE_DELIMITED_JSON', {}, [{ name: 'id', type: 'INTEGER' }, { name: 'doc', type: 'JSON' }]);
    expect(await query('SELECT id, JSON_TYPE(doc), TO_JSON_STRING(doc) FROM d.j1 ORDER BY id')).toEqual([
      ['1', 'string', '"plain words"'],
      ['2', 'object', '{"k":1,"z":[1,{"a":0}]}'],
      ['3', 'number', '12.5'],
      // TO_JSON_STRING of a NULL is the text null (corrected after the first run: the case expected NULL).
      ['4', null, 'null'],
    ]);
  });

  it('a JSON field inside a RECORD of a newline-delimited file is the value too', async () => {
    const f = file('j2.json', '{"r": {"n": 1, "doc": "text"}}\n{"r": {"n": 2, "doc": {"b": true, "b": false}}}\n');
    await loaded('j2', f, 'NEWLINE_DELIMITED_JSON', {}, [{ name: 'r', type: 'RECORD', fields: [{ name: 'n', type: 'INTEGER' }, { name: 'doc', type: 'JSON' }] }]);
    expect(await query('SELECT r.n, JSON_TYPE(r.doc), TO_JSON_STRING(r.doc) FROM d.j2 ORDER BY r.n')).toEqual([
      ['1', 'string', '"text"'],
      ['2', 'object', '{"b":true}'],
    ]);
  });

  it('an insertAll JSON cell is JSON text, and its first duplicate key stays', async () => {
    await query('CREATE TABLE d.ins (id INT64, doc JSON)');
    const r = await rest(url('/datasets/d/tables/ins/insertAll'), { method: 'POST', json: { rows: [{ json: { id: 1, doc: '{"k": "first", "k": "second"}' } }, { json: { id: 2, doc: '"quoted"' } }] } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.insertErrors).toBeUndefined();
    expect(await query('SELECT id, TO_JSON_STRING(doc) FROM d.ins ORDER BY id')).toEqual([
      ['1', '{"k":"first"}'],
      ['2', '"quoted"'],
    ]);
  });

  it('an extract of a JSON column to newline-delimited JSON loads back to the same JSON values', async () => {
    await query(`CREATE TABLE d.src AS SELECT * FROM UNNEST([STRUCT(1 AS id, JSON '"a string"' AS doc), (2, JSON '{"x": [1, 2]}'), (3, JSON '7')])`);
    const out = join(dir, 'ex-*.json');
    const ex = await job({ extract: { sourceTable: { projectId: 'ayp', datasetId: 'd', tableId: 'src' }, destinationUris: [`file://${out}`], destinationFormat: 'NEWLINE_DELIMITED_JSON' } });
    expect(ex.job?.status.errorResult, JSON.stringify(ex.body)).toBeUndefined();
    await loaded('back', out, 'NEWLINE_DELIMITED_JSON', {}, [{ name: 'id', type: 'INTEGER' }, { name: 'doc', type: 'JSON' }]);
    expect(await query('SELECT id, JSON_TYPE(doc), TO_JSON_STRING(doc) FROM d.back ORDER BY id')).toEqual([
      ['1', 'string', '"a string"'],
      ['2', 'object', '{"x":[1,2]}'],
      ['3', 'number', '7'],
    ]);
  });

  it('nullMarker and nullMarkers together are refused', async () => {
    const f = file('nm.csv', '1,x\n');
    expect(await refused('nm', f, 'CSV', { nullMarker: 'NA', nullMarkers: ['N'] }, [{ name: 'n', type: 'INTEGER' }, { name: 's', type: 'STRING' }])).toBe('invalid');
  });

  it('with custom nullMarkers an empty field is an empty STRING, and fails an INTEGER column', async () => {
    const schema = [{ name: 'n', type: 'INTEGER' }, { name: 's', type: 'STRING' }];
    await loaded('nm2', file('nm2.csv', '1,\n2,NA\nNA,z\n'), 'CSV', { nullMarkers: ['NA'] }, schema);
    expect(await query('SELECT n, s, s IS NULL FROM d.nm2 ORDER BY n NULLS LAST')).toEqual([
      ['1', '', 'false'],
      ['2', null, 'true'],
      [null, 'z', 'false'],
    ]);
    expect(await refused('nm3', file('nm3.csv', ',a\n'), 'CSV', { nullMarkers: ['NA'] }, schema)).toBe('invalid');
    // Listed, the empty string is NULL again for every type.
    await loaded('nm4', file('nm4.csv', ',a\n'), 'CSV', { nullMarkers: ['NA', ''] }, schema);
    expect(await query('SELECT n, s FROM d.nm4')).toEqual([[null, 'a']]);
  });

  it('a CSV row with trailing extra columns is a bad record unless ignoreUnknownValues', async () => {
    const schema = [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'INTEGER' }];
    const f = file('uk.csv', '1,2\n3,4,5\n6,7\n');
    expect(await refused('uk1', f, 'CSV', {}, schema)).toBe('invalid');
    await loaded('uk2', f, 'CSV', { ignoreUnknownValues: true }, schema);
    expect(await query('SELECT a, b FROM d.uk2 ORDER BY a')).toEqual([['1', '2'], ['3', '4'], ['6', '7']]);
    // Counted as a bad record: maxBadRecords lets it be skipped.
    await loaded('uk3', f, 'CSV', { maxBadRecords: 1 }, schema);
    expect(await query('SELECT a, b FROM d.uk3 ORDER BY a')).toEqual([['1', '2'], ['6', '7']]);
  });

  it('a CSV row missing trailing columns is a bad record unless allowJaggedRows', async () => {
    const schema = [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'INTEGER' }];
    const f = file('jag.csv', '1,2\n3\n');
    expect(await refused('jag1', f, 'CSV', {}, schema)).toBe('invalid');
    await loaded('jag2', f, 'CSV', { allowJaggedRows: true }, schema);
    expect(await query('SELECT a, b FROM d.jag2 ORDER BY a')).toEqual([['1', '2'], ['3', null]]);
  });

  it('an ASCII 0 in a CSV file fails the load unless preserveAsciiControlCharacters', async () => {
    const schema = [{ name: 's', type: 'STRING' }];
    const f = file('nul.csv', Buffer.from('ab\u0000c\n', 'utf8'));
    expect(await refused('nul1', f, 'CSV', {}, schema)).toBe('invalid');
    await loaded('nul2', f, 'CSV', { preserveAsciiControlCharacters: true }, schema);
    expect(await query('SELECT TO_CODE_POINTS(s) FROM d.nul2')).toEqual([[[{ v: '97' }, { v: '98' }, { v: '0' }, { v: '99' }]]]);
  });

  it('newline-delimited JSON strings in the BOOL spellings load into a BOOL column', async () => {
    const f = file('b.json', '{"k": 1, "b": "Yes"}\n{"k": 2, "b": "n"}\n{"k": 3, "b": "T"}\n{"k": 4, "b": false}\n');
    await loaded('bools', f, 'NEWLINE_DELIMITED_JSON', {}, [{ name: 'k', type: 'INTEGER' }, { name: 'b', type: 'BOOLEAN' }]);
    expect(await query('SELECT STRING_AGG(CAST(b AS STRING), "," ORDER BY k) FROM d.bools')).toEqual([['true,false,true,false']]);
  });

  it('autodetect reads yes/no as BOOLEAN and YYYY/MM/DD HH:MM as TIMESTAMP', async () => {
    // The column was named `at` at the first run, a reserved keyword the query could not name (corrected).
    const f = file('ad.csv', 'flag,stamp\nyes,2021/03/04 05:06\nno,2021/12/31 23:59\n');
    await loaded('ad', f, 'CSV', { autodetect: true, skipLeadingRows: 1 });
    const t = await rest(url('/datasets/d/tables/ad'));
    expect(t.body.schema.fields.map((x: Field) => [x.name, x.type])).toEqual([['flag', 'BOOLEAN'], ['stamp', 'TIMESTAMP']]);
    expect(await query('SELECT flag, CAST(stamp AS STRING) FROM d.ad ORDER BY stamp')).toEqual([['true', '2021-03-04 05:06:00+00'], ['false', '2021-12-31 23:59:00+00']]);
  });

  it('WRITE_EMPTY into a table with rows is a duplicate error; CREATE_NEVER of a missing table is notFound', async () => {
    const schema = [{ name: 'a', type: 'INTEGER' }];
    const f = file('we.csv', '1\n');
    await loaded('we', f, 'CSV', {}, schema);
    expect(await refused('we', f, 'CSV', { writeDisposition: 'WRITE_EMPTY' }, schema)).toBe('duplicate');
    expect(await refused('nosuch', f, 'CSV', { createDisposition: 'CREATE_NEVER' }, schema)).toBe('notFound');
    expect(await query('SELECT COUNT(*) FROM d.we')).toEqual([['1']]);
  });

  it("a partition decorator must name the partition of the rows' partitioning column", async () => {
    await query('CREATE TABLE d.part (d DATE, n INT64) PARTITION BY d');
    const f = file('part.csv', '2024-01-02,1\n');
    expect(await refused('part$20240103', f, 'CSV', {}, [{ name: 'd', type: 'DATE' }, { name: 'n', type: 'INTEGER' }])).toBe('invalid');
    await loaded('part$20240102', f, 'CSV', {}, [{ name: 'd', type: 'DATE' }, { name: 'n', type: 'INTEGER' }]);
    expect(await query('SELECT CAST(d AS STRING), n FROM d.part')).toEqual([['2024-01-02', '1']]);
  });
});
