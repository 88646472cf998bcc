// Tests of the .test-file parser and the value-literal parser, run against the
// real compliance files in ../shared (read at test time, never copied).

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FEATURES } from './features.js';
import { parseType, typeToString } from './lib/sqltype.js';
import { parseParameterList, parseTestFile } from './lib/testfile.js';
import { parseTypedLiteral, type Val } from './lib/value.js';
import { loadTestFiles, planGoogleSql, selectExpected } from './sources/googlesql.js';
import { loadFixtures, loadProjectCases, loadRecorded } from './sources/yamlcases.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const shared = path.resolve(here, '..', '..', 'shared', 'conformance');
const gsqlDir = path.join(shared, 'googlesql');
const haveShared = existsSync(gsqlDir);

describe.skipIf(!haveShared)('googlesql .test files', () => {
  const files = haveShared ? loadTestFiles(gsqlDir) : [];
  const cases = files.flatMap((f) => f.cases);

  it('finds at least 4000 cases, each with a query and an expectation', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(cases.length).toBeGreaterThanOrEqual(4000);
    for (const c of cases) {
      expect(c.query.trim().length, `${c.file}:${c.name}`).toBeGreaterThan(0);
      expect(c.expected.length, `${c.file}:${c.name}`).toBeGreaterThan(0);
      expect(c.expected.some((e) => e.kind === 'result' || e.kind === 'error'), `${c.file}:${c.name}`).toBe(true);
    }
  });

  it('parses every expected result and every prepared table', () => {
    const bad: string[] = [];
    for (const f of files) {
      for (const c of f.cases) {
        for (const e of c.expected) {
          if (e.kind !== 'result') continue;
          try {
            parseTypedLiteral(e.text);
          } catch (err) {
            bad.push(`${f.file}:${c.name}: ${(err as Error).message}`);
          }
        }
      }
      for (const p of f.prepare) {
        if (!p.contents) continue;
        try {
          parseTypedLiteral(p.contents);
        } catch (err) {
          bad.push(`${f.file} prepare@${p.line}: ${(err as Error).message}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('gives case names unique within a file', () => {
    for (const f of files) {
      const names = f.cases.map((c) => c.name);
      expect(new Set(names).size, f.file).toBe(names.length);
    }
  });

  it('has a features.ts entry for every required/forbidden feature name in the files', () => {
    const names = new Set<string>();
    for (const f of files) {
      for (const n of f.defaultRequiredFeatures) names.add(n);
      for (const c of f.cases) for (const n of [...c.requiredFeatures, ...c.forbiddenFeatures]) names.add(n);
      for (const p of f.prepare) for (const n of p.requiredFeatures) names.add(n);
    }
    const missing = [...names].filter((n) => n && !(n in FEATURES));
    expect(missing).toEqual([]);
  });

  it('reads file defaults, prepare blocks, options and error sections', () => {
    const pst = files.find((f) => f.file === 'default_timezone_pst.test')!;
    expect(pst.defaults['default_time_zone']).toBe('America/Los_Angeles');
    const agg = files.find((f) => f.file === 'aggregation_queries.test')!;
    const t = agg.prepare.find((p) => /CREATE TABLE TableAllNull AS/.test(p.sql))!;
    expect(t.contents).toMatch(/^ARRAY<STRUCT</);
    const pivot = files.find((f) => f.file === 'pivot.test')!;
    expect(pivot.defaultRequiredFeatures).toContain('PIVOT');
    const arr = files.find((f) => f.file === 'array_functions.test')!;
    const err = arr.cases.find((c) => c.expected[0]?.kind === 'error')!;
    expect(err.expected[0]!.errorCode).toBe('out_of_range');
    expect(err.expected[0]!.errorMessage).toMatch(/out of bounds/);
    // option block followed directly by `--`: the query is the next section
    const st = files.find((f) => f.file === 'struct_queries.test')!;
    const c = st.cases.find((x) => x.name === 'struct_equality_different_field_names')!;
    expect(c.query).toMatch(/^SELECT STRUCT<a int64/);
    expect(c.expected[0]!.text).toBe('ARRAY<STRUCT<BOOL>>[{true}]');
    const nondet = files.flatMap((f) => f.cases).filter((x) => x.expected.some((e) => e.nondeterministic));
    expect(nondet.length).toBeGreaterThan(100);
  });

  it('plans cases with skips that always name a feature from features.ts', () => {
    const groups = planGoogleSql(gsqlDir, () => true, files);
    const planned = groups.flatMap((g) => g.cases);
    expect(planned.length).toBe(cases.length);
    const skipped = planned.filter((p) => p.skip);
    expect(skipped.length).toBeGreaterThan(0);
    for (const s of skipped) {
      expect(FEATURES[s.skip!.feature]?.supported, `${s.id}: ${s.skip!.feature}`).toBe(false);
      // Every skip names the reference page of the missing feature's area.
      expect(s.skip!.why, s.id).toMatch(/\(https:\/\/cloud\.google\.com\/bigquery\/docs\/reference\/standard-sql\/[\w#-]+\)/);
    }
    for (const [name, f] of Object.entries(FEATURES)) if (!f.supported) expect(f.link, name).toMatch(/^https:\/\//);
    expect(new Set(planned.map((p) => p.id)).size).toBe(planned.length);
  });
});

describe('format details', () => {
  it('parses sections labelled WITH FEATURES / ALTERNATION GROUP and picks the BigQuery one', () => {
    const text = [
      '[name=x]', 'SELECT 1', '--', 'WITH FEATURES: AGGREGATE_FILTERING', 'ARRAY<STRUCT<INT64>>[{2}]',
      '--', 'WITH FEATURES: <none>', 'ARRAY<STRUCT<INT64>>[{1}]', '--', 'ALTERNATION GROUP: a', '--', 'ERROR: generic::invalid_argument: boom',
    ].join('\n');
    const tf = parseTestFile('x.test', text);
    const c = tf.cases[0]!;
    expect(c.expected).toHaveLength(3);
    expect(c.expected[0]!.withFeatures).toEqual(['AGGREGATE_FILTERING']);
    expect(c.expected[2]!.labels).toEqual(['ALTERNATION GROUP: a']);
    expect(c.expected[2]!.kind).toBe('error');
    const sel = selectExpected(c.expected.slice(0, 2));
    expect('section' in sel && sel.section.text).toBe('ARRAY<STRUCT<INT64>>[{1}]');
    const only = selectExpected(c.expected.slice(0, 1));
    expect('skip' in only && only.skip.feature).toBe('AGGREGATE_FILTERING');
  });

  it('splits [parameters=...] into named expressions', () => {
    expect(parseParameterList(`2 as lmt, 'x, y' as s`)).toEqual([{ name: 'lmt', expr: '2' }, { name: 's', expr: `'x, y'` }]);
    expect(parseParameterList('1 param1, CAST(NULL AS STRING) AS p2')).toEqual([{ name: 'param1', expr: '1' }, { name: 'p2', expr: 'CAST(NULL AS STRING)' }]);
    expect(parseParameterList('STRUCT<a INT64, b INT64>(1, 2) AS s')[0]).toEqual({ name: 's', expr: 'STRUCT<a INT64, b INT64>(1, 2)' });
    expect(parseParameterList('ARRAY<STRING>[\'a\', NULL] string_arr')[0]!.name).toBe('string_arr');
  });

  it('parses types with odd field names', () => {
    expect(typeToString(parseType('ARRAY<STRUCT<GROUPING SETS INT64, ROLLUP STRING, INT64>>'))).toBe('ARRAY<STRUCT<GROUPING SETS INT64, ROLLUP STRING, INT64>>');
    expect(typeToString(parseType('STRUCT<date DATE, value INT64, `a b` STRING, ARRAY<>>'))).toBe('STRUCT<date DATE, value INT64, a b STRING, ARRAY<>>');
    expect(parseType('RANGE<TIMESTAMP>')).toEqual({ kind: 'range', element: { kind: 'scalar', name: 'TIMESTAMP' } });
  });
});

describe('value literals', () => {
  const one = (lit: string): Val => {
    const t = parseTypedLiteral(lit);
    if (t.value.k !== 'array' || t.value.elems[0]?.k !== 'struct') throw new Error('not a table');
    return t.value.elems[0].fields[0]!;
  };

  it('reads scalars of every type', () => {
    expect(one('ARRAY<STRUCT<INT64>>[{-9223372036854775808}]')).toEqual({ k: 'int', v: -9223372036854775808n });
    expect(one('ARRAY<STRUCT<DOUBLE>>[{nan}]')).toMatchObject({ k: 'float' });
    expect(one('ARRAY<STRUCT<DOUBLE>>[{-inf}]')).toEqual({ k: 'float', v: -Infinity });
    expect(one('ARRAY<STRUCT<DOUBLE>>[{1.2e+308}]')).toEqual({ k: 'float', v: 1.2e308 });
    expect(one('ARRAY<STRUCT<STRING>>[{"a\\"b\\n\\u00e9"}]')).toEqual({ k: 'string', v: 'a"b\né' });
    expect(one('ARRAY<STRUCT<BYTES>>[{b"\\x00\\xff\\101a"}]')).toEqual({ k: 'bytes', v: Buffer.from([0, 255, 65, 97]).toString('base64') });
    expect(one('ARRAY<STRUCT<NUMERIC>>[{-1.500}]')).toEqual({ k: 'decimal', v: '-1.5' });
    expect(one('ARRAY<STRUCT<DATE>>[{2014-01-01}]')).toEqual({ k: 'civil', type: 'DATE', v: '2014-01-01' });
    expect(one('ARRAY<STRUCT<DATETIME>>[{1971-02-03 04:05:06.789100}]')).toEqual({ k: 'civil', type: 'DATETIME', v: '1971-02-03 04:05:06.7891' });
    expect(one('ARRAY<STRUCT<TIME>>[{15:59:59.999999}]')).toEqual({ k: 'civil', type: 'TIME', v: '15:59:59.999999' });
    expect(one('ARRAY<STRUCT<JSON>>[{{"a":[1,{"b":null}]}}]')).toEqual({ k: 'json', v: { a: [1, { b: null }] } });
    expect(one('ARRAY<STRUCT<INTERVAL>>[{-2-0 0 -5:33:22.5}]')).toEqual({ k: 'interval', months: -24n, days: 0n, nanos: -(5n * 3600n + 33n * 60n + 22n) * 1_000_000_000n - 500_000_000n });
    expect(one('ARRAY<STRUCT<BOOL>>[{NULL}]')).toEqual({ k: 'null' });
  });

  it('reads timestamps with offsets as instants', () => {
    const a = one('ARRAY<STRUCT<TIMESTAMP>>[{2017-01-02 03:04:05+08}]');
    const b = one('ARRAY<STRUCT<TIMESTAMP>>[{2017-01-01 19:04:05+00}]');
    const c = one('ARRAY<STRUCT<TIMESTAMP>>[{1970-01-01 12:45:00.000001+12:45}]');
    expect(a).toEqual(b);
    expect(c).toEqual({ k: 'timestamp', micros: 1n });
  });

  it('reads nested ARRAY/STRUCT, elided ARRAY<> types, NULL arrays, order markers and RANGE', () => {
    const t = parseTypedLiteral('ARRAY<STRUCT<dept_id INT64, arr ARRAY<>, r RANGE<DATE>>>[unknown order:\n {101, ARRAY<INT64>[known order:3, 5], [2014-01-01, NULL)},\n {102, ARRAY<INT64>(NULL), NULL}\n]');
    expect(t.value.k === 'array' && t.value.ordered).toBe(false);
    expect(typeToString(t.type)).toBe('ARRAY<STRUCT<dept_id INT64, arr ARRAY<INT64>, r RANGE<DATE>>>');
    const rows = t.value.k === 'array' ? t.value.elems : [];
    expect(rows[0]).toEqual({
      k: 'struct',
      fields: [
        { k: 'int', v: 101n },
        { k: 'array', ordered: true, elems: [{ k: 'int', v: 3n }, { k: 'int', v: 5n }] },
        { k: 'range', start: { k: 'civil', type: 'DATE', v: '2014-01-01' }, end: { k: 'null' } },
      ],
    });
    expect(rows[1]).toMatchObject({ fields: [{ k: 'int', v: 102n }, { k: 'null' }, { k: 'null' }] });
    const nested = parseTypedLiteral('ARRAY<STRUCT<STRUCT<a STRING, b ARRAY<STRUCT<x INT64>>>>>[{{"s", [{1}, {2}]}}]');
    expect(nested.value).toMatchObject({ elems: [{ fields: [{ k: 'struct', fields: [{ v: 's' }, { k: 'array', elems: [{ fields: [{ v: 1n }] }, { fields: [{ v: 2n }] }] }] }] }] });
  });

  it('reads the DML result shape', () => {
    const t = parseTypedLiteral('STRUCT<\n  num_rows_modified INT64,\n  all_rows ARRAY<>\n>{1,\n  ARRAY<STRUCT<primary_key INT64, value INT64>>[unknown order:\n    {1, 10},\n    {NULL, 1}\n  ]\n}');
    expect(t.type.kind).toBe('struct');
    expect(typeToString(t.type)).toBe('STRUCT<num_rows_modified INT64, all_rows ARRAY<STRUCT<primary_key INT64, value INT64>>>');
  });
});

describe.skipIf(!haveShared)('YAML sources', () => {
  it('loads the recorded corpus with its oracles', () => {
    const rec = loadRecorded(path.join(shared, 'recorded'));
    expect(rec.length).toBeGreaterThanOrEqual(30);
    expect(rec.filter((r) => r.expect.kind === 'error').length).toBeGreaterThan(0);
    expect(rec.every((r) => r.query.length > 0)).toBe(true);
  });

  it('loads every fixture with a query and an expectation, and knows every setup step kind', () => {
    const fx = loadFixtures(path.join(shared, 'fixtures'));
    expect(fx.length).toBeGreaterThanOrEqual(150);
    const kinds = new Set(fx.flatMap((f) => f.setup.map((s) => Object.keys(s)[0])));
    for (const k of kinds) expect(['dataset', 'table', 'rows', 'sql', 'row_access_policy']).toContain(k);
    for (const f of fx) expect(f.query.trim().length, f.id).toBeGreaterThan(0);
  });

  it('loads the project cases, each recorded', () => {
    const pc = loadProjectCases(path.join(here, 'cases'));
    expect(pc.length).toBeGreaterThanOrEqual(5);
    for (const c of pc) {
      const raw = readFileSync(path.join(here, 'cases', c.file), 'utf8');
      expect(raw, c.id).toMatch(/recorded_with:/);
    }
  });
});
