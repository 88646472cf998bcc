// Exploratory, not timed in CI: statements (DML touching many rows, MERGE),
// nested data, joins without equality and correlated subqueries, emulator vs
// DuckDB in the same run (see shapes.ts). Builds its own tables in dataset
// `x` (1M rows).
//   node --import tsx bench/explore/statements.ts http://127.0.0.1:9050 [name-substring]
import { DuckDBInstance } from '@duckdb/node-api';
const url = process.argv[2]!; const only = process.argv[3];
interface QueryReply { jobComplete?: boolean; jobReference?: { jobId: string }; error?: unknown }
async function q(sql: string): Promise<number> {
  const t = performance.now();
  let r = await fetch(`${url}/bigquery/v2/projects/p/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: sql, useLegacySql: false, timeoutMs: 600000, maxResults: 100000 }) });
  let j = (await r.json()) as QueryReply;
  while (j.jobComplete === false) { r = await fetch(`${url}/bigquery/v2/projects/p/queries/${j.jobReference?.jobId}?timeoutMs=600000&maxResults=100000`); j = (await r.json()) as QueryReply; }
  if (j.error) throw new Error(sql + ' ' + JSON.stringify(j.error));
  return performance.now() - t;
}
const db = await (await DuckDBInstance.create(':memory:', { threads: '2' })).connect();
const dd = async (sql: string) => { const t = performance.now(); await (await db.runAndReadAll(sql)).getRows(); return performance.now() - t; };
await q('CREATE SCHEMA IF NOT EXISTS x');
const N = 1000000;
// setup per case: [name, emuSetup[], emuQuery, duckSetup[], duckQuery]
const base = `SELECT id, MOD(id, 1000) AS k, CAST(id AS FLOAT64) / 7 AS v, CONCAT('s', CAST(MOD(id * 13, 5000) AS STRING)) AS s FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS id`;
const dbase = `SELECT id, id % 1000 AS k, id::DOUBLE / 7 AS v, 's' || CAST((id * 13) % 5000 AS VARCHAR) AS s FROM range(1, ${N + 1}) AS _r(id)`;
const cases: [string, string[], string, string[], string][] = [
  ['insert_select_1m', [`CREATE OR REPLACE TABLE x.t AS ${base}`, 'CREATE OR REPLACE TABLE x.u AS SELECT * FROM x.t WHERE FALSE'], 'INSERT INTO x.u SELECT * FROM x.t', [`CREATE OR REPLACE TABLE t AS ${dbase}`, 'CREATE OR REPLACE TABLE u AS SELECT * FROM t WHERE FALSE'], 'INSERT INTO u SELECT * FROM t'],
  ['update_10pct', [`CREATE OR REPLACE TABLE x.t AS ${base}`], 'UPDATE x.t SET v = v + 1 WHERE MOD(id, 10) = 0', [`CREATE OR REPLACE TABLE t AS ${dbase}`], 'UPDATE t SET v = v + 1 WHERE id % 10 = 0'],
  ['delete_half', [`CREATE OR REPLACE TABLE x.t AS ${base}`], 'DELETE FROM x.t WHERE MOD(id, 2) = 0', [`CREATE OR REPLACE TABLE t AS ${dbase}`], 'DELETE FROM t WHERE id % 2 = 0'],
  ['merge_100k', [`CREATE OR REPLACE TABLE x.t AS ${base}`, `CREATE OR REPLACE TABLE x.src AS SELECT id * 10 AS id, 1 AS k, 0.5 AS v, 'm' AS s FROM UNNEST(GENERATE_ARRAY(1, 200000)) AS id`],
    'MERGE x.t T USING x.src S ON T.id = S.id WHEN MATCHED THEN UPDATE SET v = S.v WHEN NOT MATCHED THEN INSERT ROW',
    [`CREATE OR REPLACE TABLE t AS ${dbase}`, `CREATE OR REPLACE TABLE src AS SELECT id * 10 AS id, 1 AS k, 0.5 AS v, 'm' AS s FROM range(1, 200001) AS _r(id)`],
    'MERGE INTO t USING src S ON t.id = S.id WHEN MATCHED THEN UPDATE SET v = S.v WHEN NOT MATCHED THEN INSERT BY NAME'],
  ['update_join', [`CREATE OR REPLACE TABLE x.t AS ${base}`, `CREATE OR REPLACE TABLE x.dim AS SELECT k, k * 2 AS w FROM UNNEST(GENERATE_ARRAY(0, 999)) AS k`], 'UPDATE x.t SET v = d.w FROM x.dim d WHERE t.k = d.k AND d.k < 100',
    [`CREATE OR REPLACE TABLE t AS ${dbase}`, 'CREATE OR REPLACE TABLE dim AS SELECT k, k * 2 AS w FROM range(0, 1000) AS _r(k)'], 'UPDATE t SET v = d.w FROM dim d WHERE t.k = d.k AND d.k < 100'],
  ['nested_struct_array', [`CREATE OR REPLACE TABLE x.n AS SELECT k, ARRAY_AGG(STRUCT(id, v, s)) AS items FROM (${base}) GROUP BY k`], 'SELECT SUM(i.v) FROM x.n, UNNEST(items) AS i WHERE i.s LIKE "s1%"',
    [`CREATE OR REPLACE TABLE n AS SELECT k, list({'id': id, 'v': v, 's': s}) AS items FROM (${dbase}) GROUP BY k`], "SELECT SUM(i.v) FROM (SELECT unnest(items) AS i FROM n) WHERE i.s LIKE 's1%'"],
  ['array_length_filter', [], 'SELECT COUNT(*) FROM x.n WHERE ARRAY_LENGTH(items) > 0 AND items[OFFSET(0)].v > 0', [], 'SELECT COUNT(*) FROM n WHERE len(items) > 0 AND items[1].v > 0'],
  ['json_extract', [`CREATE OR REPLACE TABLE x.j AS SELECT id, TO_JSON_STRING(STRUCT(id, s, STRUCT(k AS a, v AS b) AS nest)) AS js FROM (${base}) WHERE id <= 300000`], "SELECT SUM(CAST(JSON_VALUE(js, '$.nest.a') AS INT64)) FROM x.j",
    [`CREATE OR REPLACE TABLE j AS SELECT id, to_json({'id': id, 's': s, 'nest': {'a': k, 'b': v}})::VARCHAR AS js FROM (${dbase}) WHERE id <= 300000`], "SELECT SUM(CAST(json_extract_string(js, '$.nest.a') AS BIGINT)) FROM j"],
  ['parse_json_field', [], "SELECT SUM(INT64(PARSE_JSON(js, wide_number_mode => 'round').nest.a)) FROM x.j", [], "SELECT SUM(CAST(json_extract(js::JSON, '$.nest.a') AS BIGINT)) FROM j"],
  ['cross_join_small', [], 'SELECT COUNT(*) FROM x.dim a CROSS JOIN x.dim b WHERE a.w + b.w = 1000', [], 'SELECT COUNT(*) FROM dim a CROSS JOIN dim b WHERE a.w + b.w = 1000'],
  ['nonequi_join', [], 'SELECT COUNT(*) FROM x.dim a JOIN x.dim b ON a.k < b.k AND b.k - a.k < 10', [], 'SELECT COUNT(*) FROM dim a JOIN dim b ON a.k < b.k AND b.k - a.k < 10'],
  ['correlated_exists', [], 'SELECT COUNT(*) FROM x.dim a WHERE EXISTS (SELECT 1 FROM x.t WHERE t.k = a.k AND t.v > 100000)', [], 'SELECT COUNT(*) FROM dim a WHERE EXISTS (SELECT 1 FROM t WHERE t.k = a.k AND t.v > 100000)'],
  ['scalar_subquery_per_row', [], 'SELECT SUM((SELECT MAX(w) FROM x.dim WHERE dim.k = t.k)) FROM x.t WHERE id <= 100000', [], 'SELECT SUM((SELECT MAX(w) FROM dim WHERE dim.k = t.k)) FROM t WHERE id <= 100000'],
];
console.log('load', (await import('node:os')).loadavg()[0].toFixed(1));
for (const [name, es, eq, ds, dq] of cases) {
  if (only && !name.includes(only)) continue;
  const et: number[] = []; const dt: number[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      for (const s of es) await q(s);
      et.push(await q(eq));
      for (const s of ds) await dd(s);
      dt.push(await dd(dq));
    }
  } catch (err) { console.log(name, 'ERROR', String(err).slice(0, 300)); continue; }
  const med = (a: number[]) => a.slice().sort((x, y) => x - y)[1]!;
  console.log(name.padEnd(24), med(et).toFixed(1).padStart(9), med(dt).toFixed(1).padStart(9), (med(et) / med(dt)).toFixed(2).padStart(7) + 'x');
}
