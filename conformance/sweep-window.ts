// Writes a draft .sqltest of aggregate and analytic calls for a differential
// sweep against the GoogleSQL reference implementation (dev-only), as
// conformance/sweep.ts does for scalar functions:
//
//   node --import tsx conformance/sweep-window.ts <family> > /tmp/draft.sqltest
//   node --import tsx conformance/sqltest-ref.ts --emu /tmp/draft.sqltest
//
// Inputs are inline tables `t(id, g, x, y)` (id unique, g a group key with a
// NULL group, x/y of one type) in several shapes: ordinary rows with NULLs and
// ties, all-NULL, empty, one row, extremes of the type. Every query ends in a
// total ORDER BY so answers compare exactly; analytic calls whose answer depends
// on the order of ties get `o, id` as their window order. Families: agg (each
// aggregate x modifiers x data), group (ROLLUP / GROUPING SETS / HAVING),
// window (each analytic function x OVER forms and frames), errors, special
// (NaN / -0.0 / inf keys, STRUCT and ARRAY inputs), edge (offsets at the INT64
// edges, several DISTINCT aggregates, QUALIFY), types
// (TIMESTAMP ... INTERVAL, JSON inputs).

type T = 'INT64' | 'FLOAT64' | 'NUMERIC' | 'BIGNUMERIC' | 'STRING' | 'BOOL' | 'DATE' | 'BYTES';

const NUM_MAX: Record<string, string> = {
  NUMERIC: "NUMERIC '99999999999999999999999999999.999999999'",
  BIGNUMERIC: "BIGNUMERIC '578960446186580977117854925043439539266.34992332820282019728792003956564819967'",
};
/** Values per type: `vals` ordinary (with ties), `ext` the extremes. */
const VALS: Record<T, { vals: string[]; ext: string[] }> = {
  INT64: { vals: ['3', '1', '3', '-2', '7', '0'], ext: ['9223372036854775807', '1', '-9223372036854775808', '-1', '9223372036854775807'] },
  FLOAT64: { vals: ['1.5', '-0.5', '1.5', '2.25', '0.0', '-3.0'], ext: ["CAST('nan' AS FLOAT64)", "CAST('inf' AS FLOAT64)", "CAST('-inf' AS FLOAT64)", "CAST('-0' AS FLOAT64)", '1e308', '1e308'] },
  NUMERIC: { vals: ["NUMERIC '1.5'", "NUMERIC '-0.000000001'", "NUMERIC '1.5'", "NUMERIC '2.25'", "NUMERIC '0'", "NUMERIC '-3'"], ext: [NUM_MAX.NUMERIC!, "NUMERIC '1'", `-${NUM_MAX.NUMERIC!}`, "NUMERIC '0.000000001'", NUM_MAX.NUMERIC!] },
  BIGNUMERIC: { vals: ["BIGNUMERIC '1.5'", "BIGNUMERIC '-1e-38'", "BIGNUMERIC '1.5'", "BIGNUMERIC '2.25'", "BIGNUMERIC '0'", "BIGNUMERIC '-3'"], ext: [NUM_MAX.BIGNUMERIC!, "BIGNUMERIC '1'", "BIGNUMERIC '-578960446186580977117854925043439539266.34992332820282019728792003956564819968'", "BIGNUMERIC '1e-38'", NUM_MAX.BIGNUMERIC!] },
  STRING: { vals: ["'b'", "''", "'b'", "'a'", "'é'", "'B'"], ext: ["''", "'\\x00'", "'🙂'", "'zz'"] },
  BOOL: { vals: ['TRUE', 'FALSE', 'TRUE', 'TRUE', 'FALSE', 'TRUE'], ext: ['TRUE', 'TRUE'] },
  DATE: { vals: ["DATE '2024-02-29'", "DATE '2001-01-01'", "DATE '2024-02-29'", "DATE '1970-01-01'", "DATE '2024-03-01'", "DATE '0001-01-01'"], ext: ["DATE '0001-01-01'", "DATE '9999-12-31'"] },
  BYTES: { vals: ["b'b'", "b''", "b'b'", "b'a'", "b'\\xff'", "b'B'"], ext: ["b''", "b'\\x00'"] },
};
const GROUPS = ["'a'", "'b'", "'a'", 'NULL', "'b'", "'a'"];

/** Shapes of input: name -> rows of [g, x, y] literals. */
function shapes(t: T): Record<string, [string, string, string][]> {
  const v = VALS[t].vals, e = VALS[t].ext;
  const rows = (xs: string[], ys: string[]) => xs.map((x, i) => [GROUPS[i % GROUPS.length]!, x, ys[i % ys.length]!] as [string, string, string]);
  const withNulls = [...v.slice(0, 3), 'NULL', ...v.slice(3), 'NULL'];
  return {
    nulls: rows(withNulls, [...v].reverse().concat(['NULL'])),
    allnull: rows(['NULL', 'NULL', 'NULL'], ['NULL', v[0]!, 'NULL']),
    empty: [],
    one: [["'a'", v[0]!, v[1]!]],
    ext: rows(e, [...e].reverse()),
  };
}

function table(t: T, rows: [string, string, string][]): string {
  const ty = `STRUCT<id INT64, g STRING, x ${t}, y ${t}>`;
  const body = rows.map(([g, x, y], i) => `(${i + 1}, ${g}, ${x}, ${y})`).join(', ');
  return `WITH t AS (SELECT * FROM UNNEST(ARRAY<${ty}>[${body}]))`;
}

const NUM: T[] = ['INT64', 'FLOAT64', 'NUMERIC', 'BIGNUMERIC'];
const ORDERABLE: T[] = [...NUM, 'STRING', 'BOOL', 'DATE', 'BYTES'];

/** Aggregate calls over x (and y): [types, call text]. `X` and `Y` are replaced by the columns. */
const AGGS: [T[], string][] = [
  [ORDERABLE, 'COUNT(X)'], [ORDERABLE, 'COUNT(DISTINCT X)'], [['INT64'], 'COUNT(*)'],
  [NUM, 'SUM(X)'], [NUM, 'SUM(DISTINCT X)'], [NUM, 'AVG(X)'], [NUM, 'AVG(DISTINCT X)'],
  [ORDERABLE, 'MIN(X)'], [ORDERABLE, 'MAX(X)'], [ORDERABLE, 'MIN(DISTINCT X)'],
  [ORDERABLE, 'ANY_VALUE(X HAVING MAX id)'], [ORDERABLE, 'ANY_VALUE(X HAVING MIN id)'], [NUM, 'ANY_VALUE(Y HAVING MAX X)'], [NUM, 'SUM(Y HAVING MIN X)'],
  [ORDERABLE, 'ARRAY_AGG(X IGNORE NULLS ORDER BY id)'], [ORDERABLE, 'ARRAY_AGG(X ORDER BY id)'], [ORDERABLE, 'ARRAY_AGG(DISTINCT X IGNORE NULLS ORDER BY X DESC)'],
  [ORDERABLE, 'ARRAY_AGG(X IGNORE NULLS ORDER BY X, id LIMIT 2)'], [ORDERABLE, 'ARRAY_AGG(X RESPECT NULLS ORDER BY X DESC, id)'],
  [ORDERABLE, 'ARRAY_AGG(STRUCT(id, X) ORDER BY X NULLS LAST, id)'], [ORDERABLE, 'ARRAY_AGG(X IGNORE NULLS ORDER BY X ASC NULLS LAST, id LIMIT 0)'],
  [['INT64'], 'ARRAY_CONCAT_AGG([X, Y] ORDER BY id)'], [['INT64'], 'ARRAY_CONCAT_AGG(IF(X IS NULL, NULL, [X]) ORDER BY id LIMIT 2)'],
  [['STRING', 'BYTES'], 'STRING_AGG(X ORDER BY id)'], [['STRING'], "STRING_AGG(X, '|' ORDER BY X DESC, id)"], [['STRING'], "STRING_AGG(DISTINCT X, ',' ORDER BY X)"],
  [['STRING'], "STRING_AGG(X, '' ORDER BY id LIMIT 2)"], [['BYTES'], "STRING_AGG(X, b'-' ORDER BY X, id)"],
  [['INT64'], 'BIT_AND(X)'], [['INT64'], 'BIT_OR(X)'], [['INT64'], 'BIT_XOR(X)'], [['INT64'], 'BIT_XOR(DISTINCT X)'],
  [['BOOL'], 'LOGICAL_AND(X)'], [['BOOL'], 'LOGICAL_OR(X)'], [['BOOL'], 'COUNTIF(X)'], [['BOOL'], 'COUNTIF(DISTINCT X)'], [NUM, 'COUNTIF(X > Y)'],
  [NUM, 'CORR(X, Y)'], [NUM, 'COVAR_POP(X, Y)'], [NUM, 'COVAR_SAMP(X, Y)'],
  [NUM, 'STDDEV(X)'], [NUM, 'STDDEV_POP(X)'], [NUM, 'STDDEV_SAMP(X)'], [NUM, 'VARIANCE(X)'], [NUM, 'VAR_POP(X)'], [NUM, 'VAR_SAMP(X)'],
  [NUM, 'STDDEV(DISTINCT X)'], [NUM, 'VAR_POP(DISTINCT X)'],
  [ORDERABLE, 'APPROX_COUNT_DISTINCT(X)'],
  [ORDERABLE.filter((t) => t !== 'BOOL'), 'APPROX_QUANTILES(X, 2)'], [NUM, 'APPROX_QUANTILES(X, 4 RESPECT NULLS)'], [NUM, 'APPROX_QUANTILES(DISTINCT X, 2)'],
  [['INT64', 'STRING', 'NUMERIC', 'DATE'], 'APPROX_TOP_COUNT(X, 2)'], [['INT64', 'STRING'], 'APPROX_TOP_SUM(X, 1, 3)'], [['INT64'], 'APPROX_TOP_SUM(Y, X, 2)'],
  [NUM, 'MAX_BY(id, X)'], [NUM, 'MIN_BY(id, X)'],
];

interface Case { name: string; sql: string }

function aggCases(): Case[] {
  const out: Case[] = [];
  for (const [types, fn] of AGGS) for (const t of types) for (const [shape, rows] of Object.entries(shapes(t))) {
    const c = fn.replace(/\bX\b/g, 'x').replace(/\bY\b/g, 'y');
    const head = table(t, rows);
    out.push({ name: `${c} ${t} ${shape} all`, sql: `${head}\nSELECT ${c} AS r FROM t` });
    if (shape !== 'one') out.push({ name: `${c} ${t} ${shape} by g`, sql: `${head}\nSELECT g, ${c} AS r FROM t GROUP BY g ORDER BY g` });
    if (shape === 'nulls' || shape === 'ext') {
      // SAFE. on an aggregate: the service refuses it; the reference decides for itself
      if (shape === 'nulls' && !fn.includes('DISTINCT') && !fn.includes('ORDER BY')) out.push({ name: `SAFE.${c} ${t}`, sql: `${head}\nSELECT SAFE.${c} AS r FROM t` });
    }
  }
  return out;
}

function groupCases(): Case[] {
  const out: Case[] = [];
  const t: T = 'INT64';
  const head = table(t, shapes(t).nulls);
  const h2 = `WITH t AS (SELECT * FROM UNNEST(ARRAY<STRUCT<id INT64, g STRING, h INT64, x INT64>>[(1, 'a', 1, 3), (2, 'a', 2, NULL), (3, 'b', 1, 5), (4, NULL, NULL, 2), (5, 'b', NULL, 7), (6, 'a', 1, 1)]))`;
  const aggs = ['COUNT(*)', 'SUM(x)', 'MAX(x)', 'ARRAY_AGG(id ORDER BY id)', 'GROUPING(g)', 'AVG(x)'];
  for (const a of aggs) {
    out.push({ name: `ROLLUP(g) ${a}`, sql: `${head}\nSELECT g, GROUPING(g) AS gg, ${a} AS r FROM t GROUP BY ROLLUP(g) ORDER BY gg, g` });
    out.push({ name: `ROLLUP(g, h) ${a}`, sql: `${h2}\nSELECT g, h, GROUPING(g) AS gg, GROUPING(h) AS gh, ${a} AS r FROM t GROUP BY ROLLUP(g, h) ORDER BY gg, gh, g, h` });
    out.push({ name: `CUBE(g, h) ${a}`, sql: `${h2}\nSELECT g, h, GROUPING(g) AS gg, GROUPING(h) AS gh, ${a} AS r FROM t GROUP BY CUBE(g, h) ORDER BY gg, gh, g, h` });
    out.push({ name: `GROUPING SETS ${a}`, sql: `${h2}\nSELECT g, h, GROUPING(g) AS gg, GROUPING(h) AS gh, ${a} AS r FROM t GROUP BY GROUPING SETS ((g), (h), (), (g, h)) ORDER BY gg, gh, g, h` });
    out.push({ name: `GROUPING SETS dup ${a}`, sql: `${h2}\nSELECT g, GROUPING(g) AS gg, ${a} AS r FROM t GROUP BY GROUPING SETS (g, g, ()) ORDER BY gg, g, r` });
    out.push({ name: `ROLLUP empty ${a}`, sql: `${table(t, [])}\nSELECT g, GROUPING(g) AS gg, ${a} AS r FROM t GROUP BY ROLLUP(g) ORDER BY gg, g` });
    out.push({ name: `HAVING ${a}`, sql: `${head}\nSELECT g, ${a} AS r FROM t GROUP BY g HAVING COUNT(x) > 1 ORDER BY g` });
    out.push({ name: `no GROUP BY HAVING ${a}`, sql: `${head}\nSELECT ${a === 'GROUPING(g)' ? 'COUNT(*)' : a} AS r FROM t HAVING FALSE` });
  }
  out.push({ name: 'ROLLUP expr', sql: `${h2}\nSELECT g, h + 1 AS h1, SUM(x) AS r FROM t GROUP BY ROLLUP(g, h + 1) ORDER BY g, h1, r` });
  out.push({ name: 'GROUPING of expr', sql: `${h2}\nSELECT h + 1 AS h1, GROUPING(h + 1) AS gh, SUM(x) AS r FROM t GROUP BY ROLLUP(h + 1) ORDER BY gh, h1` });
  out.push({ name: 'GROUP BY ALL-ish ordinal rollup', sql: `${h2}\nSELECT g, SUM(x) AS r FROM t GROUP BY ROLLUP(1) ORDER BY g, r` });
  out.push({ name: 'ROLLUP nested ( )', sql: `${h2}\nSELECT g, h, SUM(x) AS r FROM t GROUP BY ROLLUP((g, h)) ORDER BY g, h, r` });
  out.push({ name: 'GROUPING SETS with ROLLUP', sql: `${h2}\nSELECT g, h, SUM(x) AS r FROM t GROUP BY GROUPING SETS (ROLLUP(g), CUBE(h)) ORDER BY g, h, r` });
  out.push({ name: 'distinct agg with rollup', sql: `${h2}\nSELECT g, COUNT(DISTINCT h) AS r FROM t GROUP BY ROLLUP(g) ORDER BY g, r` });
  out.push({ name: 'window over rollup', sql: `${h2}\nSELECT g, SUM(x) AS s, RANK() OVER (ORDER BY SUM(x) DESC) AS r FROM t GROUP BY ROLLUP(g) ORDER BY r, g` });
  out.push({ name: 'QUALIFY', sql: `${h2}\nSELECT id, g FROM t WHERE TRUE QUALIFY ROW_NUMBER() OVER (PARTITION BY g ORDER BY id) = 1 ORDER BY id` });
  return out;
}

/** Window data: id unique, p a partition key with NULLs, o an order key with ties and NULLs, x a value. */
function wtable(ot: T, xt: T): string {
  const os: Record<string, string[]> = {
    INT64: ['1', '2', '2', 'NULL', '5', '-1', '2', 'NULL', '10'],
    FLOAT64: ['1.0', '2.5', '2.5', 'NULL', "CAST('nan' AS FLOAT64)", "CAST('-inf' AS FLOAT64)", '-0.0', 'NULL', "CAST('inf' AS FLOAT64)"],
    NUMERIC: ["NUMERIC '1'", "NUMERIC '2.5'", "NUMERIC '2.5'", 'NULL', "NUMERIC '5'", "NUMERIC '-1.5'", "NUMERIC '0'", 'NULL', "NUMERIC '10'"],
    BIGNUMERIC: ["BIGNUMERIC '1'", "BIGNUMERIC '2.5'", "BIGNUMERIC '2.5'", 'NULL', "BIGNUMERIC '5'", "BIGNUMERIC '-1.5'", "BIGNUMERIC '0'", 'NULL', "BIGNUMERIC '10'"],
    DATE: ["DATE '2024-01-01'", "DATE '2024-01-03'", "DATE '2024-01-03'", 'NULL', "DATE '2024-02-01'", "DATE '2023-12-31'", "DATE '2024-01-02'", 'NULL', "DATE '2024-03-01'"],
    STRING: ["'a'", "'c'", "'c'", 'NULL', "'e'", "''", "'b'", 'NULL', "'z'"],
  };
  const xs: Record<string, string[]> = {
    INT64: ['10', 'NULL', '30', '40', '50', '60', 'NULL', '80', '90'],
    FLOAT64: ['1.5', 'NULL', '-0.5', '4.0', "CAST('nan' AS FLOAT64)", '6.25', 'NULL', '8.0', "CAST('inf' AS FLOAT64)"],
    STRING: ["'p'", 'NULL', "'q'", "'r'", "'s'", "'t'", 'NULL', "'u'", "'v'"],
  };
  const ps = ["'a'", "'a'", "'b'", "'a'", "'b'", 'NULL', "'a'", "'b'", "'a'"];
  const body = ps.map((p, i) => `(${i + 1}, ${p}, ${os[ot]![i]}, ${xs[xt]![i]})`).join(', ');
  return `WITH t AS (SELECT * FROM UNNEST(ARRAY<STRUCT<id INT64, p STRING, o ${ot}, x ${xt}>>[${body}]))`;
}

const BOUNDS = ['UNBOUNDED PRECEDING', '2 PRECEDING', '1 PRECEDING', '0 PRECEDING', 'CURRENT ROW', '0 FOLLOWING', '1 FOLLOWING', '3 FOLLOWING', 'UNBOUNDED FOLLOWING'];
/** The frames of ROWS/RANGE: every pair of bounds where the start is not after the end in the grammar's sense. */
function frames(unit: 'ROWS' | 'RANGE'): string[] {
  const rank = (b: string) => (b.startsWith('UNBOUNDED P') ? 0 : b.endsWith('PRECEDING') ? 1 : b === 'CURRENT ROW' ? 2 : b.endsWith('FOLLOWING') && !b.startsWith('UNB') ? 3 : 4);
  const out: string[] = [];
  for (const s of BOUNDS) for (const e of BOUNDS) {
    if (rank(s) === 4 || rank(e) === 0) continue;
    if (rank(s) > rank(e)) continue;
    out.push(`${unit} BETWEEN ${s} AND ${e}`);
  }
  out.push(`${unit} UNBOUNDED PRECEDING`, `${unit} 1 PRECEDING`, `${unit} CURRENT ROW`);
  return out;
}

/** Named windows: [name, select list, WINDOW clause]; inheritance that works, then the documented rules' errors. */
const NAMED_WINDOWS: [string, string, string][] = [
  ['w', 'SUM(x) OVER w AS r', 'w AS (PARTITION BY p ORDER BY o, id)'],
  ['w + frame', 'SUM(x) OVER (w ROWS 1 PRECEDING) AS r', 'w AS (PARTITION BY p ORDER BY o, id)'],
  ['w + order', 'SUM(x) OVER (w ORDER BY o DESC, id) AS r', 'w AS (PARTITION BY p)'],
  ['chain', 'SUM(x) OVER w2 AS r, RANK() OVER w1 AS k', 'w1 AS (PARTITION BY p ORDER BY o), w2 AS (w1 RANGE BETWEEN 1 PRECEDING AND CURRENT ROW)'],
  ['chain 3', 'COUNT(*) OVER (w3) AS r', 'w1 AS (PARTITION BY p), w2 AS (w1 ORDER BY o), w3 AS (w2 ROWS UNBOUNDED PRECEDING)'],
  ['w two uses', 'LAG(x) OVER w AS a, LEAD(x) OVER w AS b, ROW_NUMBER() OVER w AS c', 'w AS (ORDER BY o, id)'],
  ['w empty', 'COUNT(*) OVER w AS r', 'w AS ()'],
  ['case-insensitive name', 'SUM(x) OVER W AS r', 'w AS (ORDER BY o, id ROWS 1 PRECEDING)'],
  ['unused window', 'x AS r', 'w AS (ORDER BY o)'],
  ['PARTITION BY on reference', 'SUM(x) OVER (w PARTITION BY p) AS r', 'w AS (ORDER BY o)'],
  ['ORDER BY twice', 'SUM(x) OVER (w ORDER BY id) AS r', 'w AS (ORDER BY o)'],
  ['frame inherited then ORDER BY', 'SUM(x) OVER (w ORDER BY id) AS r', 'w AS (ROWS 1 PRECEDING)'],
  ['frame twice', 'SUM(x) OVER (w ROWS 2 PRECEDING) AS r', 'w AS (ORDER BY o ROWS 1 PRECEDING)'],
  ['forward reference', 'SUM(x) OVER w1 AS r', 'w1 AS (w2), w2 AS (ORDER BY o)'],
  ['duplicate name', 'SUM(x) OVER w AS r', 'w AS (ORDER BY o), w AS (ORDER BY id)'],
  ['numbering with framed window', 'RANK() OVER w AS r', 'w AS (ORDER BY o ROWS 1 PRECEDING)'],
];

function windowCases(): Case[] {
  const out: Case[] = [];
  const add = (name: string, head: string, expr: string) => out.push({ name, sql: `${head}\nSELECT id, ${expr} AS r FROM t ORDER BY id` });
  const h = wtable('INT64', 'INT64');
  // numbering: ties in o are part of the answer; ROW_NUMBER/NTILE need a total order
  const orders = ['ORDER BY o', 'ORDER BY o DESC', 'ORDER BY o NULLS LAST', 'ORDER BY o DESC NULLS FIRST', 'PARTITION BY p ORDER BY o', 'PARTITION BY p ORDER BY o DESC NULLS LAST', 'ORDER BY o, x'];
  for (const w of orders) {
    for (const f of ['RANK()', 'DENSE_RANK()', 'PERCENT_RANK()', 'CUME_DIST()']) add(`${f} OVER (${w})`, h, `${f} OVER (${w})`);
    for (const f of ['ROW_NUMBER()', 'NTILE(3)', 'NTILE(1)', 'NTILE(20)']) add(`${f} OVER (${w}, id)`, h, `${f} OVER (${w}, id)`);
  }
  add('ROW_NUMBER() OVER ()', wtable('INT64', 'INT64'), 'ROW_NUMBER() OVER (PARTITION BY id)');
  add('RANK() OVER (PARTITION BY p)', h, 'RANK() OVER (PARTITION BY p)');
  add('CUME_DIST() OVER (PARTITION BY p)', h, 'CUME_DIST() OVER (PARTITION BY p)');
  // navigation, with a total order
  const tot = ['ORDER BY o, id', 'PARTITION BY p ORDER BY o DESC, id', 'ORDER BY o DESC NULLS FIRST, id DESC'];
  const nav = ['LAG(x)', 'LAG(x, 2)', 'LAG(x, 0)', 'LAG(x, 1, -1)', 'LAG(x, 20, 7)', 'LEAD(x)', 'LEAD(x, 3)', 'LEAD(x, 1, x)', 'LAG(x, NULL)', 'LEAD(x, 1, NULL)'];
  for (const w of tot) for (const f of nav) add(`${f} OVER (${w})`, h, `${f} OVER (${w})`);
  const valf = ['FIRST_VALUE(x)', 'LAST_VALUE(x)', 'FIRST_VALUE(x IGNORE NULLS)', 'LAST_VALUE(x IGNORE NULLS)', 'FIRST_VALUE(x RESPECT NULLS)', 'NTH_VALUE(x, 2)', 'NTH_VALUE(x, 2 IGNORE NULLS)', 'NTH_VALUE(x, 1)', 'NTH_VALUE(x, 5)'];
  for (const w of tot) for (const f of valf) {
    add(`${f} OVER (${w})`, h, `${f} OVER (${w})`);
    for (const fr of ['ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING', 'ROWS BETWEEN 2 FOLLOWING AND UNBOUNDED FOLLOWING', 'ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING', 'ROWS BETWEEN 3 FOLLOWING AND 1 FOLLOWING', 'ROWS BETWEEN CURRENT ROW AND CURRENT ROW']) add(`${f} OVER (${w} ${fr})`, h, `${f} OVER (${w} ${fr})`);
  }
  for (const f of ['FIRST_VALUE(x)', 'LAST_VALUE(x IGNORE NULLS)', 'NTH_VALUE(x, 2)']) add(`${f} OVER (PARTITION BY o, id)`, h, `${f} OVER (PARTITION BY o, id)`);
  // percentiles
  for (const xt of ['INT64', 'FLOAT64'] as T[]) {
    const hx = wtable('INT64', xt);
    for (const f of ['PERCENTILE_CONT(x, 0.5)', 'PERCENTILE_CONT(x, 0)', 'PERCENTILE_CONT(x, 1)', 'PERCENTILE_CONT(x, 0.25 RESPECT NULLS)', 'PERCENTILE_CONT(x, 0.9 IGNORE NULLS)', 'PERCENTILE_DISC(x, 0.5)', 'PERCENTILE_DISC(x, 0)', 'PERCENTILE_DISC(x, 0.34 RESPECT NULLS)', 'PERCENTILE_DISC(x, 1)'])
      for (const w of ['', 'PARTITION BY p']) add(`${f} ${xt} OVER (${w})`, hx, `${f} OVER (${w})`);
  }
  for (const f of ['PERCENTILE_CONT(x, NUMERIC \'0.5\')', 'PERCENTILE_DISC(x, BIGNUMERIC \'0.5\')', 'PERCENTILE_DISC(o, 0.5)']) add(`${f} OVER ()`, wtable('NUMERIC', 'INT64'), `${f} OVER ()`);
  add('PERCENTILE_DISC(x STRING)', wtable('INT64', 'STRING'), 'PERCENTILE_DISC(x, 0.5) OVER (PARTITION BY p)');
  // aggregates over frames: ROWS with a total order, RANGE with ties
  const wa = ['SUM(x)', 'COUNT(x)', 'COUNT(*)', 'MIN(x)', 'MAX(x)', 'AVG(x)', 'COUNTIF(x > 30)', 'ARRAY_AGG(x IGNORE NULLS)', 'STDDEV_SAMP(x)', 'BIT_OR(x)', 'LOGICAL_AND(x > 20)'];
  for (const f of wa) {
    for (const fr of frames('ROWS')) add(`${f} OVER (ORDER BY o, id ${fr})`, h, `${f} OVER (ORDER BY o, id ${fr})`);
    if (f.startsWith('ARRAY_AGG')) continue;
    for (const fr of frames('RANGE')) add(`${f} OVER (ORDER BY o ${fr})`, h, `${f} OVER (ORDER BY o ${fr})`);
    add(`${f} OVER ()`, h, `${f} OVER ()`);
    add(`${f} OVER (PARTITION BY p)`, h, `${f} OVER (PARTITION BY p)`);
    add(`${f} OVER (PARTITION BY p ORDER BY o DESC)`, h, `${f} OVER (PARTITION BY p ORDER BY o DESC)`);
  }
  // RANGE over other key types
  for (const ot of ['FLOAT64', 'NUMERIC', 'BIGNUMERIC', 'DATE', 'STRING'] as T[]) {
    const ho = wtable(ot, 'INT64');
    const num = ot !== 'DATE' && ot !== 'STRING';
    const fr = num ? ['RANGE BETWEEN 1 PRECEDING AND CURRENT ROW', 'RANGE BETWEEN 1.5 PRECEDING AND 1 FOLLOWING', 'RANGE BETWEEN UNBOUNDED PRECEDING AND 0 FOLLOWING', 'RANGE BETWEEN 2 FOLLOWING AND 5 FOLLOWING', 'RANGE CURRENT ROW']
      : ['RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW', 'RANGE CURRENT ROW', 'RANGE BETWEEN 1 PRECEDING AND CURRENT ROW'];
    for (const f of ['SUM(x)', 'COUNT(*)', 'MAX(x)']) for (const d of ['', ' DESC', ' NULLS LAST', ' DESC NULLS FIRST']) for (const r of fr) add(`${f} ${ot} OVER (ORDER BY o${d} ${r})`, ho, `${f} OVER (ORDER BY o${d} ${r})`);
    add(`RANK ${ot}`, ho, 'RANK() OVER (ORDER BY o)');
    add(`DENSE_RANK ${ot} desc`, ho, 'DENSE_RANK() OVER (PARTITION BY p ORDER BY o DESC)');
  }
  // extreme values in frames: SUM overflow, NUMERIC limits
  const extIds = (x: string[], ty: T) => `WITH t AS (SELECT * FROM UNNEST(ARRAY<STRUCT<id INT64, p STRING, o INT64, x ${ty}>>[${x.map((v, i) => `(${i + 1}, 'a', ${i}, ${v})`).join(', ')}]))`;
  const hi = extIds(VALS.INT64.ext, 'INT64');
  for (const fr of ['ROWS BETWEEN CURRENT ROW AND CURRENT ROW', 'ROWS BETWEEN 1 PRECEDING AND CURRENT ROW', 'ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING', 'ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING']) {
    add(`SUM INT64 ext ${fr}`, hi, `SUM(x) OVER (ORDER BY id ${fr})`);
    add(`AVG INT64 ext ${fr}`, hi, `AVG(x) OVER (ORDER BY id ${fr})`);
    add(`SUM NUMERIC ext ${fr}`, extIds(VALS.NUMERIC.ext, 'NUMERIC'), `SUM(x) OVER (ORDER BY id ${fr})`);
    add(`SUM FLOAT64 ext ${fr}`, extIds(VALS.FLOAT64.ext, 'FLOAT64'), `SUM(x) OVER (ORDER BY id ${fr})`);
    add(`MIN FLOAT64 ext ${fr}`, extIds(VALS.FLOAT64.ext, 'FLOAT64'), `MIN(x) OVER (ORDER BY id ${fr})`);
    add(`MAX FLOAT64 ext ${fr}`, extIds(VALS.FLOAT64.ext, 'FLOAT64'), `MAX(x) OVER (ORDER BY id ${fr})`);
  }
  add('RANGE INT64 ext', `WITH t AS (SELECT * FROM UNNEST(ARRAY<STRUCT<id INT64, o INT64>>[(1, 9223372036854775807), (2, -9223372036854775808), (3, 0), (4, 9223372036854775806)]))`, 'COUNT(*) OVER (ORDER BY o RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING)');
  add('RANGE INT64 ext 2', `WITH t AS (SELECT * FROM UNNEST(ARRAY<STRUCT<id INT64, o INT64>>[(1, 9223372036854775807), (2, -9223372036854775808), (3, 0), (4, 9223372036854775806)]))`, 'ARRAY_AGG(id ORDER BY id) OVER (ORDER BY o RANGE BETWEEN 9223372036854775807 PRECEDING AND CURRENT ROW)');
  // named windows and inheritance
  for (const [name, sel, win] of NAMED_WINDOWS) out.push({ name: `named ${name}`, sql: `${h}\nSELECT id, ${sel} FROM t WINDOW ${win} ORDER BY id` });
  // windows over grouped results, DISTINCT in window aggregates (no frame)
  out.push({ name: 'window over group', sql: `${h}\nSELECT p, SUM(x) AS s, SUM(SUM(x)) OVER (ORDER BY p) AS r, RANK() OVER (ORDER BY COUNT(*) DESC, p) AS k FROM t GROUP BY p ORDER BY p` });
  add('COUNT DISTINCT OVER partition', h, 'COUNT(DISTINCT o) OVER (PARTITION BY p)');
  add('SUM DISTINCT OVER ()', h, 'SUM(DISTINCT o) OVER ()');
  add('ARRAY_AGG DISTINCT OVER p', h, 'ARRAY_LENGTH(ARRAY_AGG(DISTINCT o IGNORE NULLS) OVER (PARTITION BY p))');
  add('window in expr', h, 'x - AVG(x) OVER (PARTITION BY p)');
  add('window of window input', h, 'SUM(x) OVER (ORDER BY id) + COUNT(*) OVER ()');
  add('window empty input', wtable('INT64', 'INT64').replace(/>>\[.*\]\)\)/, '>>[]))'), 'SUM(x) OVER ()');
  return out;
}

function errorCases(): Case[] {
  const h = wtable('INT64', 'INT64');
  const q = (name: string, expr: string) => ({ name: `error ${name}`, sql: `${h}\nSELECT id, ${expr} AS r FROM t ORDER BY id` });
  return [
    q('frame on ROW_NUMBER', 'ROW_NUMBER() OVER (ORDER BY id ROWS 1 PRECEDING)'),
    q('frame on RANK', 'RANK() OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)'),
    q('frame on LAG', 'LAG(x) OVER (ORDER BY id ROWS 1 PRECEDING)'),
    q('frame on PERCENTILE_CONT', 'PERCENTILE_CONT(x, 0.5) OVER (ROWS 1 PRECEDING)'),
    q('ORDER BY on PERCENTILE_CONT', 'PERCENTILE_CONT(x, 0.5) OVER (ORDER BY id)'),
    q('RANK without ORDER BY', 'RANK() OVER ()'),
    q('LAG without ORDER BY', 'LAG(x) OVER ()'),
    q('NTILE without ORDER BY', 'NTILE(2) OVER ()'),
    q('ROW_NUMBER without ORDER BY', 'ROW_NUMBER() OVER ()'),
    q('RANGE with two keys', 'SUM(x) OVER (ORDER BY o, id RANGE 1 PRECEDING)'),
    q('RANGE with two keys unbounded', 'SUM(x) OVER (ORDER BY o, id RANGE UNBOUNDED PRECEDING)'),
    q('RANGE CURRENT ROW two keys', 'SUM(x) OVER (ORDER BY o, id RANGE BETWEEN CURRENT ROW AND CURRENT ROW)'),
    q('RANGE offset without ORDER BY', 'SUM(x) OVER (RANGE 1 PRECEDING)'),
    q('RANGE unbounded without ORDER BY', 'SUM(x) OVER (RANGE UNBOUNDED PRECEDING)'),
    q('ROWS without ORDER BY', 'SUM(x) OVER (ROWS 1 PRECEDING)'),
    q('RANGE over STRING offset', 'SUM(x) OVER (ORDER BY CAST(o AS STRING) RANGE 1 PRECEDING)'),
    q('RANGE float offset on INT64', 'SUM(x) OVER (ORDER BY o RANGE 1.5 PRECEDING)'),
    q('DISTINCT with frame', 'SUM(DISTINCT x) OVER (ORDER BY id ROWS 1 PRECEDING)'),
    q('DISTINCT with ORDER BY', 'COUNT(DISTINCT x) OVER (ORDER BY id)'),
    q('negative ROWS offset', 'SUM(x) OVER (ORDER BY id ROWS -1 PRECEDING)'),
    q('NULL ROWS offset', 'SUM(x) OVER (ORDER BY id ROWS NULL PRECEDING)'),
    q('non-constant ROWS offset', 'SUM(x) OVER (ORDER BY id ROWS x PRECEDING)'),
    q('negative RANGE offset', 'SUM(x) OVER (ORDER BY o RANGE BETWEEN -1 PRECEDING AND CURRENT ROW)'),
    q('frame start UNBOUNDED FOLLOWING', 'SUM(x) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED FOLLOWING AND UNBOUNDED FOLLOWING)'),
    q('frame end UNBOUNDED PRECEDING', 'SUM(x) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED PRECEDING)'),
    q('frame CURRENT ROW to PRECEDING', 'SUM(x) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND 1 PRECEDING)'),
    q('frame FOLLOWING to CURRENT ROW', 'SUM(x) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW)'),
    q('frame FOLLOWING alone', 'SUM(x) OVER (ORDER BY id ROWS 1 FOLLOWING)'),
    q('LAG negative offset', 'LAG(x, -1) OVER (ORDER BY id)'),
    q('LEAD negative offset', 'LEAD(x, -2) OVER (ORDER BY id)'),
    q('LAG non-constant offset', 'LAG(x, id) OVER (ORDER BY id)'),
    q('LAG non-constant default', 'LAG(x, 1, x + 1) OVER (ORDER BY id)'),
    q('LAG default wrong type', "LAG(x, 1, 'a') OVER (ORDER BY id)"),
    q('LAG float offset', 'LAG(x, 1.5) OVER (ORDER BY id)'),
    q('NTH_VALUE zero', 'NTH_VALUE(x, 0) OVER (ORDER BY id)'),
    q('NTH_VALUE negative', 'NTH_VALUE(x, -1) OVER (ORDER BY id)'),
    q('NTH_VALUE NULL', 'NTH_VALUE(x, NULL) OVER (ORDER BY id)'),
    q('NTH_VALUE non-constant', 'NTH_VALUE(x, id) OVER (ORDER BY id)'),
    q('NTILE zero', 'NTILE(0) OVER (ORDER BY id)'),
    q('NTILE negative', 'NTILE(-1) OVER (ORDER BY id)'),
    q('NTILE NULL', 'NTILE(NULL) OVER (ORDER BY id)'),
    q('NTILE non-constant', 'NTILE(x) OVER (ORDER BY id)'),
    q('NTILE float', 'NTILE(1.5) OVER (ORDER BY id)'),
    q('PERCENTILE_CONT above 1', 'PERCENTILE_CONT(x, 1.5) OVER ()'),
    q('PERCENTILE_CONT negative', 'PERCENTILE_CONT(x, -0.1) OVER ()'),
    q('PERCENTILE_CONT NULL', 'PERCENTILE_CONT(x, NULL) OVER ()'),
    q('PERCENTILE_CONT non-constant', 'PERCENTILE_CONT(x, x / 100) OVER ()'),
    q('PERCENTILE_DISC non-constant', 'PERCENTILE_DISC(x, id / 10) OVER ()'),
    q('PERCENTILE_CONT NaN', "PERCENTILE_CONT(x, CAST('nan' AS FLOAT64)) OVER ()"),
    q('PERCENTILE_CONT STRING', "PERCENTILE_CONT(CAST(x AS STRING), 0.5) OVER ()"),
    q('IGNORE NULLS on SUM', 'SUM(x IGNORE NULLS) OVER ()'),
    q('IGNORE NULLS on LAG', 'LAG(x IGNORE NULLS) OVER (ORDER BY id)'),
    q('IGNORE NULLS on RANK', 'RANK(IGNORE NULLS) OVER (ORDER BY id)'),
    q('window ORDER BY in aggregate', 'SUM(x ORDER BY id) OVER ()'),
    q('LIMIT in window aggregate', 'ARRAY_AGG(x LIMIT 1) OVER ()'),
    q('nested window', 'SUM(SUM(x) OVER ()) OVER ()'),
    q('window in WHERE', 'x FROM t WHERE ROW_NUMBER() OVER (ORDER BY id) > 1 --'),
    q('unknown named window', 'SUM(x) OVER nope'),
    q('RANGE over BOOL', 'COUNT(*) OVER (ORDER BY o > 2 RANGE 1 PRECEDING)'),
    q('RANGE over DATE offset', "COUNT(*) OVER (ORDER BY DATE_ADD(DATE '2024-01-01', INTERVAL o DAY) RANGE 1 PRECEDING)"),
    q('ARRAY order key', 'COUNT(*) OVER (ORDER BY [o])'),
    q('ORDER BY STRUCT window', 'COUNT(*) OVER (ORDER BY STRUCT(o))'),
    q('PARTITION BY FLOAT64', 'COUNT(*) OVER (PARTITION BY CAST(o AS FLOAT64))'),
    q('PARTITION BY ARRAY', 'COUNT(*) OVER (PARTITION BY [o])'),
    q('HAVING MAX in window', 'ANY_VALUE(x HAVING MAX id) OVER ()'),
    // a CAST of a literal is a literal to these checks; a sign on a CAST, or a CAST of a column, is not
    q('NTILE CAST literal', 'NTILE(CAST(2 AS INT64)) OVER (ORDER BY id)'),
    q('PERCENTILE_CONT CAST string', "PERCENTILE_CONT(x, CAST('0.5' AS FLOAT64)) OVER ()"),
    q('LAG CAST offset', "LAG(x, CAST('2' AS INT64)) OVER (ORDER BY id)"),
    q('NTH_VALUE CAST', "NTH_VALUE(x, CAST('0' AS INT64)) OVER (ORDER BY id)"),
    q('LEAD negated CAST', 'LEAD(x, -CAST(1 AS INT64)) OVER (ORDER BY id)'),
    q('NTILE CAST column', 'NTILE(CAST(x AS INT64)) OVER (ORDER BY id)'),
    // aggregate errors
    { name: 'error SUM overflow', sql: 'SELECT SUM(x) FROM UNNEST([9223372036854775807, 1]) x' },
    { name: 'error SUM NUMERIC overflow', sql: "SELECT SUM(x) FROM UNNEST([NUMERIC '99999999999999999999999999999', NUMERIC '1']) x" },
    { name: 'error AVG overflow', sql: 'SELECT AVG(x) FROM UNNEST([9223372036854775807, 9223372036854775807]) x' },
    { name: 'error ARRAY_AGG NULL', sql: 'SELECT ARRAY_AGG(x) FROM UNNEST([1, NULL]) x' },
    { name: 'error ARRAY_AGG array', sql: 'SELECT ARRAY_AGG([x]) FROM UNNEST([1, 2]) x' },
    { name: 'error ARRAY_CONCAT_AGG NULL elem', sql: 'SELECT ARRAY_CONCAT_AGG(a) FROM UNNEST([STRUCT([1, NULL] AS a)])' },
    { name: 'error DISTINCT ORDER BY other', sql: 'SELECT ARRAY_AGG(DISTINCT x ORDER BY -x) FROM UNNEST([1, 2]) x' },
    { name: 'error LIMIT negative', sql: 'SELECT ARRAY_AGG(x LIMIT -1) FROM UNNEST([1, 2]) x' },
    { name: 'error LIMIT NULL', sql: 'SELECT ARRAY_AGG(x LIMIT NULL) FROM UNNEST([1, 2]) x' },
    { name: 'error LIMIT param-like expr', sql: 'SELECT ARRAY_AGG(x LIMIT 1 + 1) FROM UNNEST([1, 2]) x' },
    { name: 'error IGNORE NULLS on SUM', sql: 'SELECT SUM(x IGNORE NULLS) FROM UNNEST([1, 2]) x' },
    { name: 'error ORDER BY on SUM', sql: 'SELECT SUM(x ORDER BY x) FROM UNNEST([1, 2]) x' },
    { name: 'error nested agg', sql: 'SELECT SUM(MAX(x)) FROM UNNEST([1, 2]) x' },
    { name: 'error STRING_AGG mixed', sql: "SELECT STRING_AGG(x, b',') FROM UNNEST(['a']) x" },
    { name: 'error APPROX_QUANTILES 0', sql: 'SELECT APPROX_QUANTILES(x, 0) FROM UNNEST([1, 2]) x' },
    { name: 'error APPROX_QUANTILES NULL n', sql: 'SELECT APPROX_QUANTILES(x, NULL) FROM UNNEST([1, 2]) x' },
    { name: 'error APPROX_QUANTILES NULL input', sql: 'SELECT APPROX_QUANTILES(x, 2) FROM UNNEST([1, NULL]) x' },
    { name: 'error APPROX_TOP_COUNT 0', sql: 'SELECT APPROX_TOP_COUNT(x, 0) FROM UNNEST([1, 2]) x' },
    { name: 'error APPROX_TOP_SUM negative weight', sql: 'SELECT APPROX_TOP_SUM(x, -1, 2) FROM UNNEST([1, 2]) x' },
    { name: 'error APPROX_TOP_SUM STRING weight', sql: "SELECT APPROX_TOP_SUM(x, 'a', 2) FROM UNNEST([1, 2]) x" },
    { name: 'error MIN ARRAY', sql: 'SELECT MIN([x]) FROM UNNEST([1, 2]) x' },
    { name: 'error SUM STRING', sql: "SELECT SUM('a') FROM UNNEST([1]) x" },
    { name: 'error COUNT DISTINCT FLOAT ok', sql: 'SELECT COUNT(DISTINCT CAST(x AS FLOAT64)) FROM UNNEST([1, 1, 2]) x' },
    { name: 'error COUNT DISTINCT ARRAY', sql: 'SELECT COUNT(DISTINCT [x]) FROM UNNEST([1, 2]) x' },
    { name: 'error GROUPING without GROUP BY', sql: 'SELECT GROUPING(x) FROM UNNEST([1, 2]) x' },
    { name: 'error GROUPING not grouped', sql: 'SELECT GROUPING(x) FROM UNNEST([1, 2]) x GROUP BY x + 1' },
    { name: 'error HAVING MAX ARRAY', sql: 'SELECT ANY_VALUE(x HAVING MAX [x]) FROM UNNEST([1, 2]) x' },
    { name: 'error CORR STRING', sql: "SELECT CORR(x, 'a') FROM UNNEST([1, 2]) x" },
    { name: 'error BIT_AND FLOAT64', sql: 'SELECT BIT_AND(1.5) FROM UNNEST([1, 2]) x' },
    { name: 'error LOGICAL_AND INT64', sql: 'SELECT LOGICAL_AND(x) FROM UNNEST([1, 2]) x' },
    { name: 'error COUNT(*) DISTINCT', sql: 'SELECT COUNT(DISTINCT *) FROM UNNEST([1, 2]) x' },
    { name: 'error STDDEV DISTINCT BIGNUMERIC', sql: "SELECT STDDEV(DISTINCT x) FROM UNNEST([BIGNUMERIC '1', BIGNUMERIC '2']) x" },
    { name: 'error ROLLUP of constant', sql: 'SELECT SUM(x) FROM UNNEST([1, 2]) x GROUP BY ROLLUP(2)' },
  ];
}

/** FLOAT64 specials (NaN, ±inf, -0.0) and compound types as keys and inputs: grouping, DISTINCT, ordering, percentiles. */
function specialCases(): Case[] {
  const f = ["CAST('nan' AS FLOAT64)", "CAST('nan' AS FLOAT64)", "CAST('-0' AS FLOAT64)", '0.0', 'NULL', "CAST('inf' AS FLOAT64)", "CAST('-inf' AS FLOAT64)", '1.5', '1.5'];
  const head = `WITH t AS (SELECT * FROM UNNEST(ARRAY<STRUCT<id INT64, x FLOAT64>>[${f.map((v, i) => `(${i + 1}, ${v})`).join(', ')}]))`;
  const out: Case[] = [];
  const q = (name: string, sql: string) => out.push({ name, sql: `${head}\n${sql}` });
  q('GROUP BY FLOAT64 specials', 'SELECT x, COUNT(*) AS n, ARRAY_AGG(id ORDER BY id) AS ids FROM t GROUP BY x ORDER BY x');
  for (const a of ['COUNT(DISTINCT x)', 'ARRAY_AGG(DISTINCT x IGNORE NULLS ORDER BY x)', 'MIN(x)', 'MAX(x)', 'SUM(x)', 'AVG(x)', 'SUM(DISTINCT x)', 'APPROX_COUNT_DISTINCT(x)', 'ARRAY_AGG(x IGNORE NULLS ORDER BY x DESC, id)', 'STRING_AGG(CAST(x AS STRING), \',\' ORDER BY x, id)', 'ANY_VALUE(id HAVING MAX x)', 'ANY_VALUE(id HAVING MIN x)', 'COUNTIF(x = x)', 'LOGICAL_AND(x > 0)'])
    q(`agg ${a}`, `SELECT ${a} AS r FROM t`);
  q('SELECT DISTINCT FLOAT64', 'SELECT DISTINCT x FROM t ORDER BY x');
  for (const w of ['RANK() OVER (ORDER BY x)', 'DENSE_RANK() OVER (ORDER BY x DESC)', 'CUME_DIST() OVER (ORDER BY x)', 'PERCENT_RANK() OVER (ORDER BY x NULLS LAST)', 'COUNT(*) OVER (PARTITION BY CAST(x AS STRING))',
    'COUNT(*) OVER (ORDER BY x RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING)', 'COUNT(*) OVER (ORDER BY x RANGE CURRENT ROW)', 'SUM(id) OVER (ORDER BY x RANGE BETWEEN UNBOUNDED PRECEDING AND 0.5 FOLLOWING)',
    "COUNT(*) OVER (ORDER BY x RANGE BETWEEN CAST('inf' AS FLOAT64) PRECEDING AND CURRENT ROW)", 'PERCENTILE_CONT(x, 0.5) OVER ()', 'PERCENTILE_DISC(x, 0.5) OVER ()', 'PERCENTILE_CONT(x, 0.1) OVER ()', 'PERCENTILE_DISC(x, 0.9 RESPECT NULLS) OVER ()',
    'FIRST_VALUE(x) OVER (ORDER BY x, id)', 'LAST_VALUE(x) OVER (ORDER BY x DESC, id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)', 'MAX(x) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)', 'MIN(x) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)'])
    q(`window ${w}`, `SELECT id, ${w} AS r FROM t ORDER BY id`);
  // compound inputs
  const c = `WITH t AS (SELECT * FROM UNNEST(ARRAY<STRUCT<id INT64, g STRING, s STRUCT<a INT64, b STRING>, arr ARRAY<INT64>>>[(1, 'a', (1, 'x'), [1, 2]), (2, 'a', NULL, []), (3, 'b', (1, 'x'), NULL), (4, 'b', (2, NULL), [3]), (5, NULL, (NULL, NULL), [1, 2])]))`;
  for (const a of ['ARRAY_AGG(s ORDER BY id)', 'ARRAY_AGG(s IGNORE NULLS ORDER BY id)', 'COUNT(DISTINCT s)', 'ARRAY_CONCAT_AGG(arr ORDER BY id)', 'ARRAY_CONCAT_AGG(arr ORDER BY id LIMIT 2)', 'COUNT(s)', 'COUNT(arr)', 'ANY_VALUE(s HAVING MAX id)', 'ARRAY_AGG(DISTINCT s.a IGNORE NULLS ORDER BY s.a)', 'ARRAY_AGG(STRUCT(arr) ORDER BY id)', 'MAX(s.b)', 'COUNT(DISTINCT TO_JSON_STRING(arr))'])
    out.push({ name: `compound ${a}`, sql: `${c}\nSELECT g, ${a} AS r FROM t GROUP BY g ORDER BY g` });
  out.push({ name: 'GROUP BY STRUCT', sql: `${c}\nSELECT s, COUNT(*) AS n FROM t GROUP BY s ORDER BY n, TO_JSON_STRING(s)` });
  out.push({ name: 'PARTITION BY STRUCT', sql: `${c}\nSELECT id, COUNT(*) OVER (PARTITION BY s) AS n FROM t ORDER BY id` });
  out.push({ name: 'GROUP BY ARRAY', sql: `${c}\nSELECT COUNT(*) AS n FROM t GROUP BY arr ORDER BY n` });
  out.push({ name: 'LAG of STRUCT', sql: `${c}\nSELECT id, LAG(s, 1, STRUCT(9 AS a, 'z' AS b)) OVER (ORDER BY id) AS r FROM t ORDER BY id` });
  out.push({ name: 'LEAD of ARRAY', sql: `${c}\nSELECT id, LEAD(arr) OVER (PARTITION BY g ORDER BY id) AS r FROM t ORDER BY id` });
  out.push({ name: 'FIRST_VALUE of ARRAY ignore nulls', sql: `${c}\nSELECT id, FIRST_VALUE(arr IGNORE NULLS) OVER (ORDER BY id DESC) AS r FROM t ORDER BY id` });
  return out;
}

/** Offsets at the INT64 edges, several DISTINCT aggregates in one query, named-window rule errors, QUALIFY. */
function edgeCases(): Case[] {
  const h = wtable('INT64', 'INT64');
  const out: Case[] = [];
  const add = (name: string, expr: string) => out.push({ name, sql: `${h}\nSELECT id, ${expr} AS r FROM t ORDER BY id` });
  const big = '9223372036854775807';
  for (const fr of [`ROWS BETWEEN ${big} PRECEDING AND ${big} FOLLOWING`, `ROWS BETWEEN ${big} FOLLOWING AND UNBOUNDED FOLLOWING`, `ROWS BETWEEN UNBOUNDED PRECEDING AND ${big} PRECEDING`, `ROWS ${big} PRECEDING`, `ROWS BETWEEN 5 PRECEDING AND 4 PRECEDING`, 'ROWS BETWEEN 4 FOLLOWING AND 5 FOLLOWING'])
    for (const f of ['SUM(x)', 'COUNT(*)', 'FIRST_VALUE(x)', 'LAST_VALUE(x IGNORE NULLS)', 'NTH_VALUE(x, 2)', 'ARRAY_AGG(id)'])
      add(`${f} OVER (ORDER BY o, id ${fr})`, `${f} OVER (ORDER BY o, id ${fr})`);
  for (const fr of [`RANGE BETWEEN ${big} PRECEDING AND ${big} FOLLOWING`, `RANGE BETWEEN ${big} FOLLOWING AND UNBOUNDED FOLLOWING`, 'RANGE BETWEEN 5 PRECEDING AND 4 PRECEDING', 'RANGE BETWEEN 0 FOLLOWING AND 0 FOLLOWING'])
    for (const d of ['', ' DESC']) add(`COUNT(*) OVER (ORDER BY o${d} ${fr})`, `COUNT(*) OVER (ORDER BY o${d} ${fr})`);
  for (const f of [`LAG(x, ${big})`, `LEAD(x, ${big}, -1)`, `NTILE(${big})`, `NTH_VALUE(x, ${big})`, 'NTILE(4)', 'NTILE(9)', 'NTILE(10)'])
    add(`${f} OVER (ORDER BY o, id)`, `${f} OVER (ORDER BY o, id)`);
  const agg = (name: string, sel: string) => out.push({ name, sql: `${h}\nSELECT ${sel}` });
  agg('several DISTINCT', 'p, COUNT(DISTINCT o) AS a, SUM(DISTINCT x) AS b, COUNT(DISTINCT x) AS c, COUNT(*) AS d, ARRAY_AGG(DISTINCT o IGNORE NULLS ORDER BY o) AS e FROM t GROUP BY p ORDER BY p');
  agg('several DISTINCT no group', 'COUNT(DISTINCT o) AS a, SUM(DISTINCT x) AS b, AVG(DISTINCT o) AS c, STRING_AGG(DISTINCT CAST(o AS STRING), \'|\' ORDER BY CAST(o AS STRING)) AS d FROM t');
  agg('DISTINCT on empty', 'COUNT(DISTINCT o) AS a, SUM(DISTINCT x) AS b FROM t WHERE FALSE');
  agg('GROUP BY () empty', 'COUNT(*) AS a, SUM(x) AS b FROM t WHERE FALSE GROUP BY ()');
  agg('GROUP BY empty input', 'p, COUNT(*) AS a FROM t WHERE FALSE GROUP BY p');
  agg('HAVING MAX all NULL key', 'p, ANY_VALUE(id HAVING MAX IF(TRUE, NULL, o)) AS a, SUM(x HAVING MIN CAST(NULL AS INT64)) AS b FROM t GROUP BY p ORDER BY p');
  agg('HAVING MAX ties', 'p, ARRAY_AGG(id HAVING MAX o ORDER BY id) AS a, COUNT(x HAVING MIN o) AS b, SUM(x HAVING MAX o) AS c FROM t GROUP BY p ORDER BY p');
  agg('STRING_AGG NULL delimiter', "STRING_AGG(CAST(o AS STRING), NULL ORDER BY id) AS a FROM t");
  agg('STRING_AGG LIMIT 0', "STRING_AGG(CAST(o AS STRING) ORDER BY id LIMIT 0) AS a FROM t");
  agg('ARRAY_AGG LIMIT with IGNORE NULLS', 'ARRAY_AGG(o IGNORE NULLS ORDER BY id LIMIT 3) AS a FROM t');
  agg('ARRAY_AGG ORDER BY expression', 'ARRAY_AGG(id ORDER BY MOD(id, 3), id DESC) AS a FROM t');
  agg('ARRAY_AGG ORDER BY NULLS', 'ARRAY_AGG(id ORDER BY o DESC NULLS FIRST, id) AS a, ARRAY_AGG(id ORDER BY o NULLS LAST, id) AS b FROM t');
  agg('aggregate of window', 'SUM(r) AS a FROM (SELECT RANK() OVER (ORDER BY o) AS r FROM t)');
  agg('window of aggregate with HAVING', 'p, COUNT(*) AS n, RANK() OVER (ORDER BY COUNT(*) DESC, p) AS r FROM t GROUP BY p HAVING COUNT(*) > 1 ORDER BY p');
  agg('QUALIFY with window', 'id, o FROM t WHERE TRUE QUALIFY RANK() OVER (PARTITION BY p ORDER BY o DESC) = 1 ORDER BY id');
  agg('QUALIFY alias', 'id, ROW_NUMBER() OVER (ORDER BY o, id) AS rn FROM t QUALIFY rn <= 3 ORDER BY id');
  agg('QUALIFY without window', 'id FROM t QUALIFY id > 3 ORDER BY id');
  agg('window in ORDER BY', 'id FROM t ORDER BY SUM(x) OVER (PARTITION BY p), id');
  agg('COUNTIF NULL only', 'COUNTIF(CAST(NULL AS BOOL)) AS a, LOGICAL_AND(CAST(NULL AS BOOL)) AS b, LOGICAL_OR(o > 100) AS c FROM t');
  agg('BIT_ and negatives', 'BIT_AND(x - 100) AS a, BIT_OR(-x) AS b, BIT_XOR(o) AS c FROM t');
  return out;
}

/** The other scalar types as aggregate and analytic inputs. */
function typeCases(): Case[] {
  const vals: Record<string, string[]> = {
    TIMESTAMP: ["TIMESTAMP '2024-02-29 12:00:00+00'", "TIMESTAMP '0001-01-01 00:00:00+00'", 'NULL', "TIMESTAMP '9999-12-31 23:59:59.999999+00'", "TIMESTAMP '2024-02-29 12:00:00+00'"],
    DATETIME: ["DATETIME '2024-02-29 12:00:00'", "DATETIME '0001-01-01 00:00:00'", 'NULL', "DATETIME '9999-12-31 23:59:59.999999'", "DATETIME '2024-02-29 12:00:00'"],
    TIME: ["TIME '12:00:00'", "TIME '00:00:00'", 'NULL', "TIME '23:59:59.999999'", "TIME '12:00:00'"],
    INTERVAL: ['INTERVAL 1 DAY', "INTERVAL '1-2 3 4:5:6' YEAR TO SECOND", 'NULL', 'INTERVAL -30 HOUR', 'INTERVAL 1 DAY'],
    JSON: ["JSON '1'", "JSON '{\"a\": [1, null]}'", 'NULL', "JSON 'null'", "JSON '\"s\"'"],
    NUMERIC: ["NUMERIC '0.1'", "NUMERIC '0.2'", 'NULL', "NUMERIC '0.3'", "NUMERIC '1e-9'"],
    BIGNUMERIC: ["BIGNUMERIC '0.1'", "BIGNUMERIC '1e-38'", 'NULL', "BIGNUMERIC '0.3'", "BIGNUMERIC '1e38'"],
  };
  const fns: Record<string, string[]> = {
    TIMESTAMP: ['MIN(x)', 'MAX(x)', 'COUNT(DISTINCT x)', 'ARRAY_AGG(x IGNORE NULLS ORDER BY x DESC)', 'ANY_VALUE(id HAVING MAX x)', 'STRING_AGG(CAST(x AS STRING) ORDER BY id)'],
    DATETIME: ['MIN(x)', 'MAX(x)', 'COUNT(DISTINCT x)', 'ARRAY_AGG(x IGNORE NULLS ORDER BY x DESC)'],
    TIME: ['MIN(x)', 'MAX(x)', 'COUNT(DISTINCT x)', 'ARRAY_AGG(x IGNORE NULLS ORDER BY x DESC)'],
    INTERVAL: ['SUM(x)', 'AVG(x)', 'MIN(x)', 'MAX(x)', 'COUNT(DISTINCT x)', 'ARRAY_AGG(x IGNORE NULLS ORDER BY id)'],
    JSON: ['ARRAY_AGG(x IGNORE NULLS ORDER BY id)', 'COUNT(x)', 'ANY_VALUE(x HAVING MIN id)', 'STRING_AGG(TO_JSON_STRING(x) ORDER BY id)'],
    NUMERIC: ['SUM(x)', 'AVG(x)', 'STDDEV(x)', 'VAR_POP(x)', 'CORR(x, x)', 'COVAR_SAMP(x, x)'],
    BIGNUMERIC: ['SUM(x)', 'AVG(x)', 'STDDEV_POP(x)', 'VAR_SAMP(x)', 'CORR(x, x)', 'COVAR_POP(x, x)'],
  };
  const out: Case[] = [];
  for (const [t, vs] of Object.entries(vals)) {
    const head = `WITH t AS (SELECT * FROM UNNEST(ARRAY<STRUCT<id INT64, g STRING, x ${t}>>[${vs.map((v, i) => `(${i + 1}, '${'abab'[i % 4]}', ${v})`).join(', ')}]))`;
    for (const f of fns[t]!) {
      out.push({ name: `${t} ${f}`, sql: `${head}\nSELECT ${f} AS r FROM t` });
      out.push({ name: `${t} ${f} by g`, sql: `${head}\nSELECT g, ${f} AS r FROM t GROUP BY g ORDER BY g` });
      if (!f.includes('ORDER BY') && !f.includes('HAVING') && !f.includes('DISTINCT')) out.push({ name: `${t} ${f} OVER`, sql: `${head}\nSELECT id, ${f} OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS r FROM t ORDER BY id` });
    }
    if (t !== 'JSON') {
      for (const w of ['LAG(x) OVER (ORDER BY id)', 'FIRST_VALUE(x IGNORE NULLS) OVER (ORDER BY id DESC)', 'RANK() OVER (ORDER BY x)', 'PERCENTILE_DISC(x, 0.5) OVER ()', 'NTH_VALUE(x, 3) OVER (PARTITION BY g ORDER BY id)'])
        if (!(w.startsWith('PERCENTILE') && (t === 'INTERVAL'))) out.push({ name: `${t} ${w}`, sql: `${head}\nSELECT id, ${w} AS r FROM t ORDER BY id` });
    }
  }
  return out;
}

const FAMILIES: Record<string, () => Case[]> = { agg: aggCases, group: groupCases, window: windowCases, errors: errorCases, special: specialCases, edge: edgeCases, types: typeCases };

function main(): void {
  const fam = process.argv[2];
  const make = fam && FAMILIES[fam];
  if (!make) throw new Error(`family one of ${Object.keys(FAMILIES).join(', ')}`);
  const cases = make();
  const out = [`# Draft: differential sweep, family ${fam} (conformance/sweep-window.ts)`];
  const seen = new Set<string>();
  for (const c of cases) {
    if (seen.has(c.sql)) continue;
    seen.add(c.sql);
    out.push(`\n=== ${c.name}\n--- query\n${c.sql}`);
  }
  process.stdout.write(out.join('\n') + '\n');
  process.stderr.write(`${seen.size} queries\n`);
}

main();
