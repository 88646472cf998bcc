// How much of the project's own SQL test data covers each function family page of
// the reference, and each statement / query-syntax page (issue 16's second target: our own cases passing >= 99.5%).
// Dev-only, not in CI.
//
//   npx vitest run test/sql/sql.test.ts --reporter=json --outputFile=/tmp/sql.json
//   node --import tsx conformance/family-report.ts /tmp/sql.json
//
// A case counts toward every family whose functions its query calls (a case with
// DATE_ADD and FORMAT counts for `date` and `string`); every test/sql/*.sqltest file
// is read (docs-*, fn-* and unseen-* are written per function page; the others per
// feature). Pass or fail comes from the vitest JSON report of test/sql/sql.test.ts; a
// case marked `@fails` counts as failing (vitest reports its expected failure as passed).

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// Function names per reference page ("function list" pages of GoogleSQL for BigQuery).
// Prefix rules (ST_, NET., ...) come after the exact names.
const FAMILIES: Record<string, string[]> = {
  aggregate: ['ANY_VALUE', 'ARRAY_AGG', 'ARRAY_CONCAT_AGG', 'AVG', 'BIT_AND', 'BIT_OR', 'BIT_XOR', 'COUNT', 'COUNTIF', 'GROUPING', 'LOGICAL_AND', 'LOGICAL_OR', 'MAX', 'MAX_BY', 'MIN', 'MIN_BY', 'STRING_AGG', 'SUM'],
  approximate_aggregate: ['APPROX_COUNT_DISTINCT', 'APPROX_QUANTILES', 'APPROX_TOP_COUNT', 'APPROX_TOP_SUM'],
  statistical_aggregate: ['CORR', 'COVAR_POP', 'COVAR_SAMP', 'STDDEV', 'STDDEV_POP', 'STDDEV_SAMP', 'VAR_POP', 'VAR_SAMP', 'VARIANCE'],
  array: ['ARRAY', 'GENERATE_ARRAY', 'GENERATE_DATE_ARRAY', 'GENERATE_TIMESTAMP_ARRAY', 'FLATTEN'],
  bit: ['BIT_COUNT'],
  // NULLIFZERO and ZEROIFNULL are ZetaSQL's, not on GoogleSQL for BigQuery's conditional_expressions page.
  conditional: ['CASE', 'COALESCE', 'IF', 'IFNULL', 'NULLIF'],
  conversion: ['CAST', 'SAFE_CAST', 'PARSE_NUMERIC', 'PARSE_BIGNUMERIC'],
  date: ['CURRENT_DATE', 'DATE', 'DATE_ADD', 'DATE_SUB', 'DATE_DIFF', 'DATE_TRUNC', 'DATE_BUCKET', 'DATE_FROM_UNIX_DATE', 'FORMAT_DATE', 'LAST_DAY', 'PARSE_DATE', 'UNIX_DATE', 'EXTRACT'],
  datetime: ['CURRENT_DATETIME', 'DATETIME', 'DATETIME_ADD', 'DATETIME_SUB', 'DATETIME_DIFF', 'DATETIME_TRUNC', 'DATETIME_BUCKET', 'FORMAT_DATETIME', 'PARSE_DATETIME'],
  time: ['CURRENT_TIME', 'TIME', 'TIME_ADD', 'TIME_SUB', 'TIME_DIFF', 'TIME_TRUNC', 'FORMAT_TIME', 'PARSE_TIME'],
  timestamp: ['CURRENT_TIMESTAMP', 'TIMESTAMP', 'TIMESTAMP_ADD', 'TIMESTAMP_SUB', 'TIMESTAMP_DIFF', 'TIMESTAMP_TRUNC', 'TIMESTAMP_BUCKET', 'TIMESTAMP_SECONDS', 'TIMESTAMP_MILLIS', 'TIMESTAMP_MICROS', 'FORMAT_TIMESTAMP', 'PARSE_TIMESTAMP', 'UNIX_SECONDS', 'UNIX_MILLIS', 'UNIX_MICROS'],
  debugging: ['ERROR'],
  hash: ['FARM_FINGERPRINT', 'MD5', 'SHA1', 'SHA256', 'SHA512'],
  interval: ['JUSTIFY_DAYS', 'JUSTIFY_HOURS', 'JUSTIFY_INTERVAL', 'MAKE_INTERVAL'],
  json: ['PARSE_JSON', 'TO_JSON', 'TO_JSON_STRING', 'INT64', 'FLOAT64', 'BOOL'],
  math: ['ABS', 'ACOS', 'ACOSH', 'ASIN', 'ASINH', 'ATAN', 'ATAN2', 'ATANH', 'CBRT', 'CEIL', 'CEILING', 'COS', 'COSH', 'COSINE_DISTANCE', 'COT', 'COTH', 'CSC', 'CSCH', 'DIV', 'EXP', 'EUCLIDEAN_DISTANCE', 'FLOOR', 'GREATEST', 'IEEE_DIVIDE', 'IS_INF', 'IS_NAN', 'LEAST', 'LN', 'LOG', 'LOG10', 'MOD', 'POW', 'POWER', 'RAND', 'RANGE_BUCKET', 'ROUND', 'SAFE_ADD', 'SAFE_DIVIDE', 'SAFE_MULTIPLY', 'SAFE_NEGATE', 'SAFE_SUBTRACT', 'SEC', 'SECH', 'SIGN', 'SIN', 'SINH', 'SQRT', 'TAN', 'TANH', 'TRUNC'],
  navigation: ['FIRST_VALUE', 'LAST_VALUE', 'NTH_VALUE', 'LAG', 'LEAD', 'PERCENTILE_CONT', 'PERCENTILE_DISC'],
  numbering: ['RANK', 'DENSE_RANK', 'PERCENT_RANK', 'CUME_DIST', 'NTILE', 'ROW_NUMBER'],
  range: ['RANGE', 'RANGE_CONTAINS', 'RANGE_END', 'RANGE_INTERSECT', 'RANGE_OVERLAPS', 'RANGE_SESSIONIZE', 'RANGE_START', 'GENERATE_RANGE_ARRAY'],
  search: ['SEARCH', 'VECTOR_SEARCH'],
  text_analysis: ['TEXT_ANALYZE', 'BAG_OF_WORDS', 'TF_IDF'],
  string: ['ASCII', 'BYTE_LENGTH', 'CHAR_LENGTH', 'CHARACTER_LENGTH', 'CHR', 'CODE_POINTS_TO_BYTES', 'CODE_POINTS_TO_STRING', 'COLLATE', 'CONCAT', 'CONTAINS_SUBSTR', 'EDIT_DISTANCE', 'ENDS_WITH', 'FORMAT', 'FROM_BASE32', 'FROM_BASE64', 'FROM_HEX', 'INITCAP', 'INSTR', 'LEFT', 'LENGTH', 'LOWER', 'LPAD', 'LTRIM', 'NORMALIZE', 'NORMALIZE_AND_CASEFOLD', 'OCTET_LENGTH', 'REPEAT', 'REPLACE', 'REVERSE', 'RIGHT', 'RPAD', 'RTRIM', 'SAFE_CONVERT_BYTES_TO_STRING', 'SOUNDEX', 'SPLIT', 'STARTS_WITH', 'STRPOS', 'SUBSTR', 'SUBSTRING', 'TO_BASE32', 'TO_BASE64', 'TO_CODE_POINTS', 'TO_HEX', 'TRANSLATE', 'TRIM', 'UNICODE', 'UPPER'],
  utility: ['GENERATE_UUID'],
  time_series: ['APPENDS', 'CHANGES', 'GAP_FILL'],
  // graph-gql-functions.md; a GRAPH_TABLE call or a GQL statement counts too (below).
  graph: ['GRAPH_TABLE', 'LABELS', 'ELEMENT_ID', 'SOURCE_NODE_ID', 'DESTINATION_NODE_ID', 'PROPERTY_EXISTS', 'PROPERTY_NAMES', 'PATH_LENGTH', 'NODES', 'EDGES', 'PATH_FIRST', 'PATH_LAST', 'IS_ACYCLIC', 'IS_SIMPLE', 'IS_TRAIL'],
};
const PREFIXES: [string, string][] = [
  ['ARRAY_', 'array'], ['ST_', 'geography'], ['S2_', 'geography'], ['NET.', 'net'], ['HLL_COUNT.', 'hll'], ['KLL_QUANTILES.', 'kll'],
  ['KEYS.', 'aead'], ['AEAD.', 'aead'], ['DETERMINISTIC_', 'aead'], ['JSON_', 'json'], ['LAX_', 'json'], ['REGEXP_', 'string'],
];
const BY_NAME = new Map<string, string>(Object.entries(FAMILIES).flatMap(([fam, names]) => names.map((n): [string, string] => [n, fam])));

/** The SQL text with string literals and comments blanked, so their text is not read as calls or clauses. */
function codeOf(sql: string): string {
  return sql.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|--[^\n]*|#[^\n]*/g, "''");
}

function familiesOf(code: string): Set<string> {
  const out = new Set<string>();
  for (const m of code.matchAll(/\b((?:[A-Za-z_][A-Za-z0-9_]*\.)?[A-Za-z_][A-Za-z0-9_]*)\s*\(/g)) {
    const name = m[1]!.toUpperCase().replace(/^SAFE\./, '');
    const fam = BY_NAME.get(name) ?? PREFIXES.find(([p]) => name.startsWith(p))?.[1];
    if (fam) out.add(fam);
  }
  // The bit page is mostly operators: & | ^ ~ << >> (not || or |>, nor the >> closing ARRAY<STRUCT<...>>).
  if (/<<|(?<!\|)\|(?![|>])|&|\^|~|>>\s*[\d(@]/.test(code)) out.add('bit');
  // A GQL query statement (graph-query-statements.md), and the differentially private aggregates (aggregate-dp-functions.md).
  if (/^\s*GRAPH\s+[\w`]/im.test(code)) out.add('graph');
  if (/\bWITH\s+DIFFERENTIAL_PRIVACY\b/i.test(code)) out.add('aggregate_dp');
  return out;
}

// The statement and query-syntax pages (query-syntax.md by clause, pipe-syntax.md, subqueries.md,
// window-function-calls.md, dml-syntax.md, data-definition-language.md, data-control-language.md,
// procedural-language.md, transactions.md, other-statements.md, information-schema-intro.md): a case counts
// toward every page whose construct its query uses.
const SYNTAX: [string, RegExp][] = [
  ['query: SELECT list (*, EXCEPT, REPLACE, AS STRUCT/VALUE, DISTINCT)', /\bSELECT\s+(?:ALL\s+|DISTINCT\s+)?(?:AS\s+(?:STRUCT|VALUE)\b|[\w.`]*\*\s*(?:EXCEPT|REPLACE)\b)|\bSELECT\s+DISTINCT\b/i],
  ['query: FROM joins', /\b(?:JOIN|CROSS\s+JOIN)\b/i],
  ['query: UNNEST', /\bUNNEST\s*\(/i],
  ['query: WHERE', /\bWHERE\b/i],
  ['query: GROUP BY (ROLLUP, CUBE, GROUPING SETS, ALL)', /\bGROUP\s+BY\b/i],
  ['query: HAVING', /\bHAVING\b/i],
  ['query: QUALIFY', /\bQUALIFY\b/i],
  ['query: WINDOW clause', /\bWINDOW\s+\w+\s+AS\b/i],
  ['query: ORDER BY, LIMIT, OFFSET', /\b(?:ORDER\s+BY|LIMIT)\b/i],
  ['query: set operations', /\b(?:UNION|INTERSECT|EXCEPT)\s+(?:ALL|DISTINCT)\b|\b(?:FULL|LEFT|INNER)\s+(?:OUTER\s+)?(?:UNION|INTERSECT|EXCEPT)\b/i],
  ['query: WITH (CTEs, RECURSIVE)', /^\s*\(?\s*WITH\s+(?:RECURSIVE\s+)?[\w`]+\s+AS\s*\(/im],
  ['query: PIVOT / UNPIVOT', /\b(?:PIVOT|UNPIVOT)\s*(?:\(|INCLUDE|EXCLUDE)/i],
  ['query: TABLESAMPLE', /\bTABLESAMPLE\b/i],
  ['query: MATCH_RECOGNIZE', /\bMATCH_RECOGNIZE\b/i],
  ['query: FOR SYSTEM_TIME AS OF', /\bFOR\s+SYSTEM_TIME\s+AS\s+OF\b/i],
  ['pipe syntax', /\|>/],
  ['subqueries', /\(\s*SELECT\b|\bEXISTS\s*\(/i],
  ['window function calls', /\bOVER\s*(?:\(|\w)/i],
  ['DML', /^\s*(?:INSERT|UPDATE|DELETE|MERGE|TRUNCATE)\b/im],
  ['DDL', /^\s*(?:CREATE|ALTER|DROP|UNDROP)\b/im],
  ['DCL', /^\s*(?:GRANT|REVOKE)\b/im],
  ['procedural language', /^\s*(?:DECLARE|SET|IF|LOOP|WHILE|REPEAT|FOR|CALL|EXECUTE\s+IMMEDIATE|RAISE|RETURN|BEGIN(?!\s+TRANSACTION))\b/im],
  ['transactions', /\bBEGIN\s+TRANSACTION\b|^\s*(?:COMMIT|ROLLBACK)\b/im],
  ['other statements (EXPORT DATA, LOAD DATA, ASSERT)', /^\s*(?:EXPORT\s+DATA|LOAD\s+DATA|ASSERT)\b/im],
  ['INFORMATION_SCHEMA', /\bINFORMATION_SCHEMA\b/i],
];

interface Case { file: string; name: string; query: string; knownFailure: boolean }

function readCases(dir: string): Case[] {
  const cases: Case[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sqltest')).sort()) {
    let cur: Case | undefined;
    let section = '';
    for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n')) {
      if (line.startsWith('=== ')) {
        cur = { file, name: line.slice(4).trim(), query: '', knownFailure: false };
        cases.push(cur);
        section = '';
      } else if (cur && line.startsWith('--- ')) section = line.slice(4).trim();
      else if (cur && section === '' && /^@fails\b/.test(line)) cur.knownFailure = true;
      else if (cur && section === 'query') cur.query += line + '\n';
    }
  }
  return cases;
}

interface VitestReport { testResults: { assertionResults: { ancestorTitles: string[]; title: string; status: string }[] }[] }

function main(): void {
  const reportPath = process.argv[2];
  if (!reportPath) {
    console.error('usage: node --import tsx conformance/family-report.ts <vitest JSON report of test/sql/sql.test.ts>');
    process.exit(2);
  }
  const report = JSON.parse(readFileSync(reportPath, 'utf8')) as VitestReport;
  const status = new Map<string, string>();
  for (const f of report.testResults) for (const a of f.assertionResults) status.set(`${a.ancestorTitles[0]}\u0000${a.title}`, a.status);
  type Row = { cases: number; passed: number; failed: string[]; files: Set<string> };
  const rows = new Map<string, Row>();
  const pages = new Map<string, Row>();
  const count = (table: Map<string, Row>, key: string, c: Case, passed: boolean): void => {
    const r = table.get(key) ?? { cases: 0, passed: 0, failed: [], files: new Set<string>() };
    table.set(key, r);
    r.cases++;
    r.files.add(c.file.replace(/\.sqltest$/, ''));
    if (passed) r.passed++;
    else r.failed.push(`${c.file}: ${c.name}`);
  };
  let unmatched = 0;
  for (const c of readCases(path.join(import.meta.dirname, '..', 'test', 'sql'))) {
    const st = status.get(`${c.file}\u0000${c.name}`);
    if (st === undefined) { unmatched++; continue; }
    const passed = st === 'passed' && !c.knownFailure;
    const code = codeOf(c.query);
    for (const fam of familiesOf(code)) count(rows, fam, c, passed);
    for (const [page, re] of SYNTAX) if (re.test(code)) count(pages, page, c, passed);
  }
  const table = (title: string, t: Map<string, Row>, sort: boolean): void => {
    console.log(`| ${title} | cases | passing | rate | files |`);
    console.log('|---|---:|---:|---:|---:|');
    for (const [k, r] of sort ? [...t].sort((a, b) => a[0].localeCompare(b[0])) : t) {
      console.log(`| ${k} | ${r.cases} | ${r.passed} | ${((100 * r.passed) / r.cases).toFixed(1)}% | ${r.files.size} |`);
    }
  };
  table('family', rows, true);
  const missing = [...new Set([...BY_NAME.values(), ...PREFIXES.map(([, f]) => f)])].filter((f) => !rows.has(f));
  if (missing.length) console.log(`\nfamilies without a case: ${missing.join(', ')}`);
  console.log('');
  table('statement / syntax page', new Map(SYNTAX.filter(([p]) => pages.has(p)).map(([p]) => [p, pages.get(p)!])), false);
  for (const [fam, r] of rows) for (const f of r.failed) console.log(`failing (${fam}): ${f}`);
  for (const [page, r] of pages) for (const f of r.failed) console.log(`failing (${page}): ${f}`);
  if (unmatched) console.log(`\n${unmatched} cases had no result in the report (not run, or renamed)`);
}

main();
