// `bq query` as people type it, against the real engine: standard SQL without a flag (spec §1.6.3), --use_legacy_sql,
// --max_rows, --destination_table with --replace/--append_table, the output
// formats over nested and typed columns, ARRAY/STRUCT/NULL parameters, errors,
// scripts, DDL and DML. bq formats the API responses itself, so a field name or
// shape that differs from the real service shows up here as a crash or wrong text.
// Each bq run costs seconds: independent commands run in parallel waves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { bqFor, hasBq, oneLine, prettyRows, type Bq } from './bq-cli-setup.js';

describe.skipIf(!hasRealEngine() || !hasBq())('bq query', () => {
  let emu: Emulator;
  let bq: Bq;
  const api = (p: string): string => `${emu.url}/bigquery/v2/projects/test${p}`;
  beforeAll(async () => {
    emu = await startEmulator();
    bq = bqFor(emu.url, { direct: true });
    // Fixtures through REST: this suite is about bq query, the other bq suites cover mk/insert.
    expect((await rest(api('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'q' } } })).status).toBe(200);
    const people = { tableReference: { tableId: 'people' }, schema: { fields: [{ name: 'name', type: 'STRING' }, { name: 'age', type: 'INTEGER' }] } };
    expect((await rest(api('/datasets/q/tables'), { method: 'POST', json: people })).status).toBe(200);
    const rows = [{ json: { name: 'ann', age: 30 } }, { json: { name: 'bob', age: 25 } }, { json: { name: 'cy', age: 41 } }];
    expect((await rest(api('/datasets/q/tables/people/insertAll'), { method: 'POST', json: { rows } })).body.insertErrors).toBeUndefined();
  });
  afterAll(async () => emu?.stop());

  it('--use_legacy_sql, standard SQL without a flag, --max_rows, formats, parameters, errors', async () => {
    const typed = `SELECT [1, 2] AS arr, STRUCT(1 AS a, 'x' AS b) AS st, NUMERIC '1.50' AS num,
      TIMESTAMP '2024-01-02 03:04:05 UTC' AS ts, CAST(NULL AS STRING) AS n, [STRUCT(7 AS k, [2.5] AS f)] AS nested`;
    const flat = `SELECT NUMERIC '-3' AS num, CAST(NULL AS TIMESTAMP) AS ts, 'q"' AS s, 1.5 AS f
      UNION ALL SELECT NUMERIC '1.50', TIMESTAMP '2024-01-02 03:04:05 UTC', 'a,b', NULL ORDER BY num`;
    const [legacy, maxRows, pretty, csv, sparse, params, syntax, missing, divide] = await Promise.all([
      // --use_legacy_sql: its bracketed table reference (spec §1.6.3: bq sends no flag at all without it, which is standard SQL here).
      bq('query', '--use_legacy_sql', 'SELECT name, age FROM [test:q.people] WHERE age > 26 ORDER BY age'),
      bq('query', '--max_rows=2', 'SELECT name FROM `test.q.people` ORDER BY name'),
      bq('--format=prettyjson', 'query', '--nouse_legacy_sql', typed),
      bq('--format=csv', 'query', '--nouse_legacy_sql', flat),
      bq('--format=sparse', 'query', '--nouse_legacy_sql', "SELECT 1 AS a, 'x' AS b, NULL AS c"),
      bq('--format=json', 'query', '--nouse_legacy_sql',
        '--parameter=arr:ARRAY<INT64>:[3,4,5]', '--parameter=st:STRUCT<x INT64, y STRING>:{"x":1,"y":"foo"}', '--parameter=nothing:INT64:NULL',
        'SELECT ARRAY_LENGTH(@arr) AS n, @arr AS arr, @st.y AS y, @st AS st, @nothing IS NULL AS is_null, @nothing AS nothing'),
      bq.run('query', '--nouse_legacy_sql', 'SELECT name FROM q.people WHERE'),
      bq.run('query', '--nouse_legacy_sql', 'SELECT * FROM q.nope'),
      bq.run('query', '--nouse_legacy_sql', 'SELECT 1 / 0'),
    ]);
    expect(prettyRows(legacy)).toEqual([['name', 'age'], ['ann', '30'], ['cy', '41']]);
    expect(prettyRows(maxRows)).toEqual([['name'], ['ann'], ['bob']]);
    expect(JSON.parse(pretty)).toEqual([{
      arr: ['1', '2'], st: { a: '1', b: 'x' }, num: '1.5', ts: '2024-01-02 03:04:05', n: null, nested: [{ k: '7', f: ['2.5'] }],
    }]);
    // bq's CSV: quoted when needed, NULL as an empty cell.
    expect(csv.trim().split('\n')).toEqual(['num,ts,s,f', '-3,,"q""",1.5', '1.5,2024-01-02 03:04:05,"a,b",']);
    expect(sparse).toMatch(/a\s+b\s+c\s*\n[\s-]+\n\s+1\s+x\s+NULL/);
    expect(JSON.parse(params)).toEqual([{ n: '3', arr: ['3', '4', '5'], y: 'foo', st: { x: '1', y: 'foo' }, is_null: 'true', nothing: null }]);
    // Errors: bq prints the service's message with its location, and exits non-zero.
    expect(syntax.code).not.toBe(0);
    expect(oneLine(syntax)).toMatch(/Error in query string: Error processing job 'test:bqjob_\w+': Syntax error: Unexpected end of script at \[1:32\]/);
    expect(missing.code).not.toBe(0);
    expect(oneLine(missing)).toContain('Not found: Table test:q.nope was not found in location US');
    expect(divide.code).not.toBe(0);
    expect(oneLine(divide)).toContain('division by zero: 1 / 0');
  }, 120_000);

  it('scripts, DDL, DML and --destination_table with --replace / --append_table', async () => {
    const [script, scriptJson, ddl, dest] = await Promise.all([
      bq('query', '--nouse_legacy_sql', "DECLARE x INT64 DEFAULT 2;\nSELECT x * 10 AS y;\nSELECT 'done' AS s;"),
      bq('--format=json', 'query', '--nouse_legacy_sql', 'SELECT 1 AS a; SELECT 2 AS b;'),
      bq('query', '--nouse_legacy_sql', 'CREATE TABLE q.t2 (a INT64, b STRING)'),
      bq('query', '--nouse_legacy_sql', '--destination_table=q.dest', '--clustering_fields=name', 'SELECT name, age FROM q.people WHERE age < 35'),
    ]);
    // A script prints each statement's result in statement order, headed by its text and position.
    expect(script.indexOf('SELECT x * 10 AS y; -- at [2:1]')).toBeGreaterThanOrEqual(0);
    expect(script.indexOf("SELECT 'done' AS s; -- at [3:1]")).toBeGreaterThan(script.indexOf('SELECT x * 10 AS y;'));
    expect(prettyRows(script)).toEqual([['y'], ['20'], ['s'], ['done']]);
    expect(JSON.parse(scriptJson)).toEqual([[{ a: '1' }], [{ b: '2' }]]);
    expect(ddl).toContain('Created test.q.t2');
    expect(prettyRows(dest).slice(1).sort()).toEqual([['ann', '30'], ['bob', '25']]);
    // The destination a query job creates takes the job's clustering / partitioning.
    expect((await rest(api('/datasets/q/tables/dest'))).body.clustering).toEqual({ fields: ['name'] });

    const [insert, exists, append, partitioned] = await Promise.all([
      bq('query', '--nouse_legacy_sql', "INSERT INTO q.t2 VALUES (1, 'x'), (2, 'y'), (3, 'z')"),
      bq.run('query', '--nouse_legacy_sql', '--destination_table=q.dest', 'SELECT 1 AS a'),
      bq('query', '--nouse_legacy_sql', '--destination_table=q.dest', '--append_table', "SELECT 'dee' AS name, 50 AS age"),
      bq('query', '--nouse_legacy_sql', '--destination_table=q.byday', '--time_partitioning_field=ts', '--time_partitioning_type=DAY',
        "SELECT TIMESTAMP '2024-05-06 07:08:09 UTC' AS ts, 1 AS x"),
    ]);
    expect(prettyRows(partitioned)).toEqual([['ts', 'x'], ['2024-05-06 07:08:09', '1']]);
    expect((await rest(api('/datasets/q/tables/byday'))).body.timePartitioning).toEqual({ type: 'DAY', field: 'ts' });
    expect(insert).toContain('Number of affected rows: 3');
    // WRITE_EMPTY (the default) on a table with rows: the real service's duplicate error.
    expect(exists.code).not.toBe(0);
    expect(oneLine(exists)).toContain('Already Exists: Table test:q.dest');
    expect(prettyRows(append).slice(1).sort()).toEqual([['ann', '30'], ['bob', '25'], ['dee', '50']]);

    const [update, replace] = await Promise.all([
      bq('query', '--nouse_legacy_sql', "UPDATE q.t2 SET b = 'w' WHERE a >= 2"),
      bq('query', '--nouse_legacy_sql', '--destination_table=q.dest', '--replace', "SELECT 'eve' AS name, 60 AS age"),
    ]);
    expect(update).toContain('Number of affected rows: 2');
    expect(prettyRows(replace)).toEqual([['name', 'age'], ['eve', '60']]);
    const data = await rest(api('/datasets/q/tables/dest/data'));
    expect(data.body.rows).toEqual([{ f: [{ v: 'eve' }, { v: '60' }] }]);
  }, 120_000);
});
