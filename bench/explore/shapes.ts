// Exploratory, not timed in CI: common query shapes outside the bench set,
// emulator vs DuckDB in the same run, to find cliffs (a shape many times
// slower than its neighbours). Start an emulator, then
//   node --import tsx bench/explore/shapes.ts http://127.0.0.1:9050 [rows=2000000] [name-substring]
// It builds the scale set's table (bench/scale/dataset.ts) in dataset `sd`
// if absent and DuckDB's in memory, runs each shape 4 times on each side and
// prints the medians of the last 3 and their ratio. Found 2026-11-29: see
// the issue notes of that day for the figures before and after.
import { DuckDBInstance } from '@duckdb/node-api';
import { emulatorSetup, duckdbSetup } from '../scale/dataset.js';
const url = process.argv[2]!; const rows = Number(process.argv[3] ?? 2000000); const only = process.argv[4];
interface QueryReply { jobComplete?: boolean; jobReference?: { jobId: string }; error?: unknown; totalRows?: string }
async function q(sql: string): Promise<[number, number]> {
  const t = performance.now();
  let r = await fetch(`${url}/bigquery/v2/projects/p/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: sql, useLegacySql: false, timeoutMs: 600000, maxResults: 100000 }) });
  let j = (await r.json()) as QueryReply;
  while (j.jobComplete === false) { r = await fetch(`${url}/bigquery/v2/projects/p/queries/${j.jobReference?.jobId}?timeoutMs=600000&maxResults=100000`); j = (await r.json()) as QueryReply; }
  if (j.error) throw new Error(sql + ' ' + JSON.stringify(j.error));
  return [performance.now() - t, Number(j.totalRows ?? 0)];
}
const ds = 'sd';
await q(`CREATE SCHEMA IF NOT EXISTS ${ds}`);
const e = emulatorSetup(ds, rows);
try { await q(`SELECT 1 FROM ${ds}.f LIMIT 1`); } catch { await q(e.fact); await q(e.dim); }
const db = await (await DuckDBInstance.create(':memory:', { threads: '2' })).connect();
const d = duckdbSetup(rows); await db.run(d.fact); await db.run(d.dim);
const cases: [string, string, string][] = [
  ['dedup_array_agg_limit1', `SELECT COUNT(*) FROM (SELECT hk, ARRAY_AGG(STRUCT(id, v) ORDER BY ts DESC LIMIT 1)[OFFSET(0)] AS last FROM sd.f GROUP BY hk)`, `SELECT COUNT(*) FROM (SELECT hk, arg_max({'id': id, 'v': v}, ts) FROM f GROUP BY hk)`],
  ['dedup_qualify_rn', `SELECT COUNT(*) FROM (SELECT * FROM sd.f WHERE true QUALIFY ROW_NUMBER() OVER (PARTITION BY hk ORDER BY ts DESC) = 1)`, `SELECT COUNT(*) FROM (SELECT * FROM f QUALIFY ROW_NUMBER() OVER (PARTITION BY hk ORDER BY ts DESC) = 1)`],
  ['string_agg_k1000', `SELECT k1000, LENGTH(STRING_AGG(s, ',')) FROM sd.f GROUP BY k1000`, `SELECT k1000, LENGTH(STRING_AGG(s, ',')) FROM f GROUP BY k1000`],
  ['count_distinct_by_k', `SELECT k1000, COUNT(DISTINCT s) FROM sd.f GROUP BY k1000`, `SELECT k1000, COUNT(DISTINCT s) FROM f GROUP BY k1000`],
  ['approx_count_distinct', `SELECT APPROX_COUNT_DISTINCT(hk) FROM sd.f`, `SELECT approx_count_distinct(hk) FROM f`],
  ['group_by_date_string', `SELECT d, SUBSTR(s, 1, 3) AS c, COUNT(*), SUM(v) FROM sd.f GROUP BY d, c`, `SELECT d, substr(s, 1, 3) AS c, COUNT(*), SUM(v) FROM f GROUP BY d, c`],
  ['ts_trunc_group', `SELECT TIMESTAMP_TRUNC(ts, HOUR) AS h, COUNT(*) FROM sd.f GROUP BY h`, `SELECT date_trunc('hour', ts) AS h, COUNT(*) FROM f GROUP BY h`],
  ['format_date', `SELECT COUNT(DISTINCT FORMAT_DATE('%Y-%m', d)) FROM sd.f`, `SELECT COUNT(DISTINCT strftime(d, '%Y-%m')) FROM f`],
  ['case_string_filter', `SELECT COUNT(*) FROM sd.f WHERE s LIKE 'Red%' AND b AND v > 500`, `SELECT COUNT(*) FROM f WHERE s LIKE 'Red%' AND b AND v > 500`],
  ['lag_window_k', `SELECT SUM(x) FROM (SELECT v - LAG(v) OVER (PARTITION BY k1000 ORDER BY id) AS x FROM sd.f)`, `SELECT SUM(x) FROM (SELECT v - LAG(v) OVER (PARTITION BY k1000 ORDER BY id) AS x FROM f)`],
  ['running_sum', `SELECT MAX(x) FROM (SELECT SUM(v) OVER (PARTITION BY k1000 ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS x FROM sd.f)`, `SELECT MAX(x) FROM (SELECT SUM(v) OVER (PARTITION BY k1000 ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS x FROM f)`],
  ['join_self_hk', `SELECT COUNT(*) FROM sd.f a JOIN sd.dim b ON a.k1000 = b.k WHERE b.g = 3`, `SELECT COUNT(*) FROM f a JOIN dim b ON a.k1000 = b.k WHERE b.g = 3`],
  ['in_subquery', `SELECT COUNT(*) FROM sd.f WHERE hk IN (SELECT k FROM sd.dim WHERE g = 1)`, `SELECT COUNT(*) FROM f WHERE hk IN (SELECT k FROM dim WHERE g = 1)`],
  ['percentile_cont', `SELECT k1000, PERCENTILE_CONT(v, 0.5) OVER (PARTITION BY k1000) FROM sd.f QUALIFY ROW_NUMBER() OVER (PARTITION BY k1000) = 1`, `SELECT k1000, quantile_cont(v, 0.5) OVER (PARTITION BY k1000) FROM f QUALIFY ROW_NUMBER() OVER (PARTITION BY k1000) = 1`],
  ['order_by_all_limit', `SELECT * FROM sd.f ORDER BY s, id LIMIT 1000`, `SELECT * FROM f ORDER BY s, id LIMIT 1000`],
  ['distinct_two_cols', `SELECT COUNT(*) FROM (SELECT DISTINCT k1000, d FROM sd.f)`, `SELECT COUNT(*) FROM (SELECT DISTINCT k1000, d FROM f)`],
  ['union_all_agg', `SELECT COUNT(*), SUM(v) FROM (SELECT v FROM sd.f WHERE b UNION ALL SELECT v FROM sd.f WHERE NOT b)`, `SELECT COUNT(*), SUM(v) FROM (SELECT v FROM f WHERE b UNION ALL SELECT v FROM f WHERE NOT b)`],
  ['safe_cast_concat', `SELECT COUNT(*) FROM sd.f WHERE SAFE_CAST(SUBSTR(s, 4) AS INT64) > 5000`, `SELECT COUNT(*) FROM f WHERE TRY_CAST(substr(s, 4) AS BIGINT) > 5000`],
  ['regexp_extract', `SELECT COUNT(DISTINCT REGEXP_EXTRACT(s, r'^[A-Za-z]+')) FROM sd.f`, `SELECT COUNT(DISTINCT regexp_extract(s, '^[A-Za-z]+')) FROM f`],
  ['split_offset', `SELECT COUNT(*) FROM sd.f WHERE SPLIT(s, '0')[SAFE_OFFSET(0)] = 'Red'`, `SELECT COUNT(*) FROM f WHERE string_split(s, '0')[1] = 'Red'`],
  ['cast_string_concat', `SELECT COUNT(DISTINCT CONCAT(CAST(k1000 AS STRING), '-', CAST(d AS STRING))) FROM sd.f`, `SELECT COUNT(DISTINCT CAST(k1000 AS VARCHAR) || '-' || CAST(d AS VARCHAR)) FROM f`],
  ['date_diff_sum', `SELECT SUM(DATE_DIFF(d, DATE '2020-01-01', DAY)) FROM sd.f`, `SELECT SUM(date_diff('day', DATE '2020-01-01', d)) FROM f`],
  ['timestamp_diff', `SELECT SUM(TIMESTAMP_DIFF(ts, TIMESTAMP '2020-01-01', SECOND)) FROM sd.f`, `SELECT SUM(date_diff('second', TIMESTAMP '2020-01-01', ts)) FROM f`],
  ['coalesce_if', `SELECT SUM(IF(b, COALESCE(v, 0), -v)) FROM sd.f`, `SELECT SUM(IF(b, COALESCE(v, 0), -v)) FROM f`],
  ['upper_length', `SELECT SUM(LENGTH(UPPER(s))) FROM sd.f`, `SELECT SUM(length(upper(s))) FROM f`],
  ['round_div', `SELECT SUM(ROUND(v / 3, 2)) FROM sd.f`, `SELECT SUM(ROUND(v / 3, 2)) FROM f`],
  ['date_group_month', `SELECT DATE_TRUNC(d, MONTH) AS m, COUNT(*) FROM sd.f GROUP BY m`, `SELECT date_trunc('month', d) AS m, COUNT(*) FROM f GROUP BY m`],
  ['string_group', `SELECT s, COUNT(*) FROM sd.f GROUP BY s ORDER BY 2 DESC, 1 LIMIT 10`, `SELECT s, COUNT(*) FROM f GROUP BY s ORDER BY 2 DESC, 1 LIMIT 10`],
  ['to_json_string', `SELECT SUM(LENGTH(TO_JSON_STRING(STRUCT(id, s)))) FROM sd.f WHERE k1000 < 100`, `SELECT SUM(length(to_json({'id': id, 's': s})::VARCHAR)) FROM f WHERE k1000 < 100`],
  ['array_agg_unnest', `SELECT SUM(x) FROM (SELECT ARRAY_AGG(id) AS a FROM sd.f GROUP BY k1000), UNNEST(a) AS x`, `SELECT SUM(x) FROM (SELECT unnest(list(id)) AS x FROM f GROUP BY k1000)`],
  ['left_join_null', `SELECT COUNT(*) FROM sd.f a LEFT JOIN sd.dim b ON a.hk = b.k WHERE b.k IS NULL`, `SELECT COUNT(*) FROM f a LEFT JOIN dim b ON a.hk = b.k WHERE b.k IS NULL`],
  ['extract_dow', `SELECT EXTRACT(DAYOFWEEK FROM d) AS w, AVG(v) FROM sd.f GROUP BY w`, `SELECT dayofweek(d) + 1 AS w, AVG(v) FROM f GROUP BY w`],
];
console.log('rows', rows, 'load', (await import('node:os')).loadavg()[0].toFixed(1));
for (const [name, eq, dq] of cases) {
  if (only && !name.includes(only)) continue;
  const et: number[] = []; const dt: number[] = [];
  try {
    for (let i = 0; i < 4; i++) {
      et.push((await q(eq))[0]);
      const t = performance.now(); await (await db.runAndReadAll(dq)).getRows(); dt.push(performance.now() - t);
    }
  } catch (err) { console.log(name, 'ERROR', String(err).slice(0, 300)); continue; }
  const med = (a: number[]) => a.slice(1).sort((x, y) => x - y)[1]!;
  console.log(name.padEnd(24), med(et).toFixed(1).padStart(9), med(dt).toFixed(1).padStart(9), (med(et) / med(dt)).toFixed(2).padStart(7) + 'x');
}
