// The scale set's queries, each written for both engines by hand (the shared
// cases go through lib/sql-translate.ts; these few are clearer side by side).
// `{{f}}` / `{{dim}}` name the tables on each side.

export interface ScaleCase {
  name: string;
  /** What it exercises, for the report. */
  what: string;
  emulator: string;
  duckdb: string;
  /** The answer's order is defined (compared in order, else as a multiset). */
  ordered: boolean;
}

export function scaleCases(rows: number): ScaleCase[] {
  const lo = Math.floor(rows / 2);
  const hi = lo + 999;
  const same = (sql: string): { emulator: string; duckdb: string } => ({ emulator: sql, duckdb: sql });
  return [
    { name: 'count_star', what: 'COUNT(*)', ordered: false, ...same('SELECT COUNT(*) AS n FROM {{f}}') },
    {
      name: 'sum_avg_by_key1000', what: 'SUM/AVG by a 1,000-value key', ordered: false,
      ...same('SELECT k1000, COUNT(*) AS n, SUM(v) AS sv, AVG(v) AS av FROM {{f}} GROUP BY k1000'),
    },
    { name: 'count_distinct_hk', what: `COUNT(DISTINCT) of a ~N/2-value key`, ordered: false, ...same('SELECT COUNT(DISTINCT hk) AS n FROM {{f}}') },
    {
      name: 'group_by_hk_top10', what: 'GROUP BY the ~N/2-value key, top 10', ordered: true,
      ...same('SELECT hk, COUNT(*) AS n, SUM(v) AS sv FROM {{f}} GROUP BY hk ORDER BY n DESC, hk LIMIT 10'),
    },
    {
      name: 'id_range_1000', what: 'id BETWEEN: 1,000 rows, all columns', ordered: true,
      ...same(`SELECT * FROM {{f}} WHERE id BETWEEN ${lo} AND ${hi} ORDER BY id`),
    },
    {
      name: 'order_by_float_limit100', what: 'ORDER BY FLOAT64 DESC, id LIMIT 100', ordered: true,
      ...same('SELECT id, v FROM {{f}} ORDER BY v DESC, id LIMIT 100'),
    },
    {
      name: 'join_dim_100k', what: 'join with a 100k-row dimension, GROUP BY its attribute', ordered: false,
      ...same('SELECT d.g, COUNT(*) AS n, SUM(f.v) AS sv FROM {{f}} AS f JOIN {{dim}} AS d ON d.k = MOD(f.id, 100000) GROUP BY d.g'),
    },
    {
      name: 'row_number_rn1', what: 'ROW_NUMBER() per 1,000-value key, rn = 1', ordered: false,
      ...same('SELECT k1000, id, v FROM (SELECT k1000, id, v, ROW_NUMBER() OVER (PARTITION BY k1000 ORDER BY v DESC, id) AS rn FROM {{f}}) WHERE rn = 1'),
    },
    {
      name: 'lower_regexp_where', what: 'LOWER + REGEXP_CONTAINS in WHERE', ordered: false,
      emulator: "SELECT COUNT(*) AS n FROM {{f}} WHERE REGEXP_CONTAINS(LOWER(s), r'^(red|blu)0+12[0-9]{2}$')",
      duckdb: "SELECT COUNT(*) AS n FROM {{f}} WHERE regexp_matches(lower(s), '^(red|blu)0+12[0-9]{2}$')",
    },
  ];
}

export function bindTables(sql: string, f: string, dim: string): string {
  return sql.replaceAll('{{f}}', f).replaceAll('{{dim}}', dim);
}
