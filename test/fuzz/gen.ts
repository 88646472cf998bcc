// Seeded generators for the bad-input fuzz run: a PRNG, JSON mutations of
// valid REST bodies, SQL mutated from the project's own SQL (the sqltest files,
// the grammar's parse corpus, the shared conformance corpus) and random calls
// of every registered function over awkward literals.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { lookupFunction, type ArgInfo, type FunctionDef } from '../../src/functions/registry.js';
import { T, arrayOf, rangeOf, structOf, type SqlType } from '../../src/types/types.js';
import type { Value } from '../../src/types/values.js';

/** mulberry32: small, fast and the same on every machine. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

// ---------------------------------------------------------------- JSON

type J = null | boolean | number | string | J[] | { [k: string]: J };
type Json = Record<string, unknown>;

const deepArray = (n: number): J => {
  let v: J = 1;
  for (let i = 0; i < n; i++) v = [v];
  return v;
};

/** A JSON value a client should never send where it goes. */
export function oddValue(r: Rng): J {
  switch (r.int(18)) {
    case 0: return null;
    case 1: return r.chance(0.5);
    case 2: return r.pick([0, -1, 1.5, -2147483649, 4294967296, 1e308, -1e-308, 9007199254740993]);
    case 3: return '';
    case 4: return r.pick(['None', 'true', 'NaN', '-1', '1e999', '0x10', ' 12 ', 'café', '😀', '\u0000', '\ud800', 'a'.repeat(10_000)]);
    // Integers at and past the 64-bit edges (set bp: int64 fields kept such text verbatim).
    case 17: return r.pick(['9223372036854775807', '9223372036854775808', '-9223372036854775809', '18446744073709551616', '99999999999999999999999', 1e23]);
    case 5: return [];
    case 6: return {};
    case 7: return [null];
    case 8: return { value: r.pick([null, 1, 'x', [], {}]) };
    case 9: return deepArray(r.pick([5, 50, 99, 101, 600, 1500]));
    case 10: return r.pick(['STRING', 'INT64', 'RECORD', 'ARRAY', 'STRUCT', 'RANGE', 'JSON', 'GEOGRAPHY', 'NOPE']);
    case 11: return { type: r.pick(['ARRAY', 'STRUCT', 5, null, {}]), arrayType: r.chance(0.5) ? { type: 'ARRAY' } : 7 };
    case 12: return [1, 'a', null, {}, []];
    case 13: return r.pick(['SELECT 1', 'SELECT ERROR("café")', "SELECT 'a-b' LIKE '%-%'", ')(', '']);
    case 14: return { fields: [{ name: r.pick(['', 'a', 'a'.repeat(400), 'é']), type: r.pick(['RECORD', 'X', 1]) }] };
    default: return 'x'.repeat(r.pick([1, 300, 2000]));
  }
}

/** A copy of `v` with one to four random changes: values replaced, keys dropped or added, lists wrapped. */
export function mutateJson(r: Rng, v: J): J {
  let out = structuredClone(v);
  const n = 1 + r.int(4);
  for (let i = 0; i < n; i++) out = mutateOnce(r, out);
  return out;
}

function mutateOnce(r: Rng, root: J): J {
  // Walk to a random container, then change one of its entries.
  const containers: (J[] | { [k: string]: J })[] = [];
  const walk = (x: J, depth: number): void => {
    if (depth > 30 || x === null || typeof x !== 'object') return;
    containers.push(x);
    for (const c of Array.isArray(x) ? x : Object.values(x)) walk(c, depth + 1);
  };
  walk(root, 0);
  if (containers.length === 0 || r.chance(0.03)) return oddValue(r);
  const c = r.pick(containers);
  if (Array.isArray(c)) {
    if (c.length === 0 || r.chance(0.2)) c.push(oddValue(r));
    else c[r.int(c.length)] = r.chance(0.7) ? oddValue(r) : [c[r.int(c.length)]!];
    return root;
  }
  const keys = Object.keys(c);
  const op = r.int(5);
  if (keys.length === 0 || op === 0) c[r.pick(['labels', 'extra', 'fields', 'query', 'type', 'value', '__proto__', 'constructor', 'x'.repeat(300)])] = oddValue(r);
  else if (op === 1) delete c[r.pick(keys)];
  else if (op === 2) {
    const k = r.pick(keys);
    c[k] = [c[k]!];
  } else c[r.pick(keys)] = oddValue(r);
  return root;
}

// ---------------------------------------------------------------- SQL

/** Statements from the project's SQL: sqltest queries and setups, the grammar's parse corpus. */
export function projectSql(root: string): string[] {
  const out: string[] = [];
  const sqlDir = path.join(root, 'test', 'sql');
  for (const f of readdirSync(sqlDir).filter((x) => x.endsWith('.sqltest')).sort()) {
    const text = readFileSync(path.join(sqlDir, f), 'utf8');
    for (const m of text.matchAll(/^--- (query|setup)\n([\s\S]*?)(?=^--- |^=== |(?![\s\S]))/gm)) {
      const sql = m[2]!.trim();
      if (sql) out.push(sql);
    }
  }
  for (const f of ['parse_ok.sql', 'errors.sql']) {
    const text = readFileSync(path.join(root, 'grammar', 'testdata', f), 'utf8');
    for (const para of text.split(/\n\s*\n/)) {
      const sql = para.split('\n').filter((l) => !l.trim().startsWith('--')).join('\n').trim();
      if (sql) out.push(sql);
    }
  }
  return out;
}

const TOKENS = [
  'SELECT', 'FROM', 'WHERE', 'GROUP BY', 'ORDER BY', 'LIMIT', 'UNION ALL', 'JOIN', 'ON', 'AS', 'STRUCT', 'ARRAY', 'UNNEST', 'WITH', 'RECURSIVE',
  '(', ')', '[', ']', ',', '.', '*', '+', '-', '/', '||', '->', '@x', '@@error.message', '?', ';', 'NULL', 'TRUE', "''", "'%a-b%'", "b'\\xff'",
  '9223372036854775807', '-9223372036854775808', '1e308', "NUMERIC '1.1'", "JSON '{}'", "DATE '2020-02-30'", "INTERVAL 1 DAY", "'😀'", "'café'",
  'LIKE', 'IN', 'BETWEEN', 'CASE WHEN', 'END', 'OVER ()', 'QUALIFY', '|>', 'DECLARE', 'SET', 'LOOP', 'WHILE TRUE DO', 'END WHILE', 'BEGIN', 'EXCEPTION WHEN ERROR THEN',
  'scratch.s', '`scratch.s`', 'x -> x', 'EXECUTE IMMEDIATE', 'CREATE TEMP FUNCTION', "REPEAT('x', 1000000)",
];

/** `sql` with a few token-level mutations: tokens dropped, repeated, swapped or inserted, or the text cut. */
export function mutateSql(r: Rng, sql: string): string {
  const toks = sql.match(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|`[^`]*`|\w+|\s+|[^\w\s]/g) ?? [sql];
  const n = 1 + r.int(3);
  for (let i = 0; i < n && toks.length > 0; i++) {
    const k = r.int(toks.length);
    switch (r.int(5)) {
      case 0: toks.splice(k, 1); break;
      case 1: toks.splice(k, 0, toks[k]!); break;
      case 2: { const j = r.int(toks.length); [toks[k], toks[j]] = [toks[j]!, toks[k]!]; break; }
      case 3: toks.splice(k, 0, ' ', r.pick(TOKENS), ' '); break;
      default: toks.length = k; break;
    }
  }
  return toks.join('');
}

/** Literals of every type, awkward values included, with their types (and constant values where functions read them). */
const LITERALS: readonly [string, SqlType, unknown?][] = [
  ['NULL', T.INT64, null], ['0', T.INT64, 0n], ['-1', T.INT64, -1n], ['9223372036854775807', T.INT64, 9223372036854775807n],
  ['-9223372036854775808', T.INT64, -9223372036854775808n], ['2147483648', T.INT64, 2147483648n], ['100000000', T.INT64, 100000000n],
  ["CAST('nan' AS FLOAT64)", T.FLOAT64], ["CAST('-inf' AS FLOAT64)", T.FLOAT64], ['-0.0', T.FLOAT64], ['1e308', T.FLOAT64], ['1.5', T.FLOAT64],
  ["NUMERIC '99999999999999999999999999999.999999999'", T.NUMERIC], ["NUMERIC '-1e-9'", T.NUMERIC], ["BIGNUMERIC '1e38'", T.BIGNUMERIC],
  ['TRUE', T.BOOL], ["''", T.STRING, ''], ["'a-b'", T.STRING, 'a-b'], ["'%_\\\\'", T.STRING, '%_\\'], ["'😀é'", T.STRING, '😀é'],
  ["REPEAT('ab', 5000)", T.STRING], ["'$.a[0]'", T.STRING, '$.a[0]'], ["'$'", T.STRING, '$'], ["'YEAR'", T.STRING, 'YEAR'],
  ["'%Y-%m-%d %H:%M:%E*S'", T.STRING, '%Y-%m-%d %H:%M:%E*S'], ["'[a-z'", T.STRING, '[a-z'], ["'(a*)*b'", T.STRING, '(a*)*b'],
  ["'POINT(1 2)'", T.STRING, 'POINT(1 2)'], ["'{\"a\": [1, {\"b\": null}]}'", T.STRING, '{"a": [1, {"b": null}]}'],
  ["b''", T.BYTES], ["b'\\xff\\x00'", T.BYTES], ["REPEAT(b'x', 10000)", T.BYTES],
  ["DATE '0001-01-01'", T.DATE], ["DATE '9999-12-31'", T.DATE], ["DATETIME '9999-12-31 23:59:59.999999'", T.DATETIME],
  ["TIME '23:59:59.999999'", T.TIME], ["TIMESTAMP '0001-01-01 00:00:00+00'", T.TIMESTAMP], ["TIMESTAMP '9999-12-31 23:59:59.999999+00'", T.TIMESTAMP],
  ['INTERVAL 10000 YEAR', T.INTERVAL], ["INTERVAL '-1 2 3:4:5.6' DAY TO SECOND", T.INTERVAL],
  ["JSON '{\"a\": [1, {\"b\": null}]}'", T.JSON], ["JSON 'null'", T.JSON], ["JSON '1e400'", T.JSON],
  ['[1, 2, NULL]', arrayOf(T.INT64)], ['CAST([] AS ARRAY<INT64>)', arrayOf(T.INT64)], ["['a', NULL, '😀']", arrayOf(T.STRING)],
  ['[1.5, CAST(\'nan\' AS FLOAT64)]', arrayOf(T.FLOAT64)], ["[STRUCT(1 AS a, 'x' AS b)]", arrayOf(structOf([{ name: 'a', type: T.INT64 }, { name: 'b', type: T.STRING }]))],
  ["STRUCT(1 AS a, 'x' AS b)", structOf([{ name: 'a', type: T.INT64 }, { name: 'b', type: T.STRING }])],
  ['ST_GEOGPOINT(1, 2)', T.GEOGRAPHY], ["ST_GEOGFROMTEXT('POLYGON((0 0, 0 1, 1 1, 0 0))')", T.GEOGRAPHY],
  ["RANGE(DATE '2020-01-01', NULL)", rangeOf(T.DATE)], ['CAST(NULL AS STRING)', T.STRING, null],
];

function argInfo(l: readonly [string, SqlType, unknown?]): ArgInfo {
  return { type: l[1], isLiteral: true, ...(l.length > 2 ? { constant: { value: l[2] as Value } } : {}), ...(l[0] === 'NULL' ? { untypedNull: true } : {}) };
}

/** Arguments `def` accepts: random literal lists tried against its signatures (undefined when none fit in a few tries). */
function fittingArgs(r: Rng, def: FunctionDef): string[] | undefined {
  for (let k = 0; k < 40; k++) {
    const args = Array.from({ length: r.int(4) }, () => r.pick(LITERALS));
    const infos = args.map(argInfo);
    try {
      const ok = def.kind === 'scalar' ? def.resolve(infos).ok : def.resolve(infos, { distinct: false, ignoreNulls: undefined, hasOrderBy: false }).ok;
      if (ok) return args.map((a) => a[0]);
    } catch {
      // a constant argument its kernel refuses at once: still worth sending
      return args.map((a) => a[0]);
    }
  }
  return undefined;
}

/** A query calling a registered function: mostly with arguments its signatures accept, over awkward values. */
export function randomCall(r: Rng, names: readonly string[]): string {
  const name = r.pick(names);
  const def = lookupFunction(name);
  const args = (def && fittingArgs(r, def)) ?? Array.from({ length: r.int(4) }, () => r.pick(LITERALS)[0]);
  const call = `${name}(${args.join(', ')})`;
  if (def?.kind === 'aggregate') {
    return r.chance(0.5) ? `SELECT ${call} FROM UNNEST(GENERATE_ARRAY(1, 100)) AS i` : `SELECT ${call} OVER (ORDER BY i ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM UNNEST(GENERATE_ARRAY(1, 20)) AS i`;
  }
  switch (r.int(5)) {
    case 0: return `SELECT SAFE.${call}`;
    case 1: return `SELECT ${call} FROM UNNEST(GENERATE_ARRAY(1, 50)) AS i`;
    case 2: return `SELECT ${call}, ${call}`;
    default: return `SELECT ${call}`;
  }
}

const OPERATORS = ['+', '-', '*', '/', '||', '=', '<', '>=', '!=', 'LIKE', 'NOT LIKE', 'IS DISTINCT FROM', '&', '|', '^', '<<', '>>', 'AND', 'OR', 'IN UNNEST'];
const CAST_TYPES = ['INT64', 'FLOAT64', 'NUMERIC', 'BIGNUMERIC', 'BOOL', 'STRING', 'BYTES', 'DATE', 'DATETIME', 'TIME', 'TIMESTAMP', 'INTERVAL', 'JSON', 'GEOGRAPHY', 'ARRAY<INT64>', 'STRUCT<a INT64>', 'RANGE<DATE>'];

/** An operator, a CAST or an array access over awkward literals. */
export function randomExpr(r: Rng): string {
  const a = r.pick(LITERALS)[0];
  const b = r.pick(LITERALS)[0];
  switch (r.int(5)) {
    case 0: return `SELECT ${r.pick(['CAST', 'SAFE_CAST'])}(${a} AS ${r.pick(CAST_TYPES)})`;
    case 1: return `SELECT ${a}[${r.pick(['OFFSET', 'SAFE_OFFSET', 'ORDINAL', 'SAFE_ORDINAL'])}(${b})]`;
    case 2: return `SELECT ${a} BETWEEN ${b} AND ${r.pick(LITERALS)[0]}`;
    case 3: return `SELECT CAST(${a} AS STRING FORMAT ${r.pick(["'YYYY-MM-DD'", "'9,999.99'", "'HEX'", "'ASCII'", "'%'", "''"])})`;
    default: return `SELECT ${a} ${r.pick(OPERATORS)} ${b}`;
  }
}

/** Nesting to a random depth: function calls, arrays, subqueries, parentheses, CASE. */
export function deepSql(r: Rng): string {
  const n = r.pick([10, 100, 300, 1000, 5000, 20000]);
  switch (r.int(11)) {
    // Set bp: the nestings of later features (types, JSON text, pipes, row patterns, prefix operators).
    case 6: return `SELECT CAST(NULL AS ${'STRUCT<a '.repeat(Math.min(n, 2000))}INT64${'>'.repeat(Math.min(n, 2000))})`;
    case 7: return `SELECT PARSE_JSON('${'['.repeat(n)}${']'.repeat(n)}')`;
    case 8: return `FROM UNNEST([1]) AS x ${'|> SELECT x '.repeat(Math.min(n, 200))}`;
    case 9: return `SELECT * FROM (SELECT 1 AS x, 1 AS o) MATCH_RECOGNIZE (ORDER BY o MEASURES COUNT(*) AS c PATTERN (${'('.repeat(Math.min(n, 300))}A${'+)'.repeat(Math.min(n, 300))}) DEFINE A AS x > 0)`;
    case 10: {
      const op = r.pick(['NOT ', '- ', '~']);
      return `SELECT ${op.repeat(n)}${op === 'NOT ' ? 'TRUE' : '1'}`;
    }
    case 0: return `SELECT ${'ABS('.repeat(n)}1${')'.repeat(n)}`;
    case 1: return `SELECT ${'['.repeat(n)}1${']'.repeat(n)}`;
    case 2: return `SELECT ${'(SELECT '.repeat(n)}1${')'.repeat(n)}`;
    case 3: return `SELECT ${'('.repeat(n)}1${')'.repeat(n)}`;
    case 4: return `SELECT 1${' + 1'.repeat(n)}`;
    default: return `SELECT ${'CASE WHEN TRUE THEN '.repeat(Math.min(n, 3000))}1${' END'.repeat(Math.min(n, 3000))}`;
  }
}

/** A data file a load job may be given: CSV or JSON lines with damage, or Parquet/Avro/ORC framing around random bytes. */
export function dataFile(r: Rng): { format: string; bytes: Buffer } {
  const noise = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => r.int(256)));
  const u32 = (n: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n >>> 0);
    return b;
  };
  switch (r.int(6)) {
    case 0: {
      const text = 'a,b\n1,x\n2,"y, ""z"""\n3,\n';
      const pos = r.int(text.length);
      const junk = r.pick(['"', '\n', ',,,,', '\u0000', 'é', 'x'.repeat(100_000), '\r', '"unterminated']);
      return { format: 'CSV', bytes: Buffer.concat([Buffer.from(text.slice(0, pos) + junk + text.slice(pos)), r.chance(0.3) ? noise(50) : Buffer.alloc(0)]) };
    }
    case 1: {
      const text = '{"a": 1, "b": "x"}\n{"a": 2, "b": null}\n';
      const pos = r.int(text.length);
      const junk = r.pick(['{', ']', '"a": [[[[', '\n\n', '1e999', '"\\ud800"', JSON.stringify({ a: deepArray(600) }), '{"a": {"a": 1}}']);
      return { format: 'NEWLINE_DELIMITED_JSON', bytes: Buffer.from(text.slice(0, pos) + junk + text.slice(pos)) };
    }
    case 2:
      // Footer lengths that point anywhere, up to 4 GB.
      return { format: 'PARQUET', bytes: Buffer.concat([Buffer.from('PAR1'), noise(r.int(300)), u32(r.pick([0, 8, 1000, 2 ** 31, 2 ** 32 - 1, r.int(400)])), Buffer.from('PAR1')]) };
    case 3:
      // Avro container header with random metadata (varint lengths of any size).
      return { format: 'AVRO', bytes: Buffer.concat([Buffer.from('Obj\x01', 'latin1'), r.chance(0.5) ? Buffer.from([0xfe, 0xff, 0xff, 0xff, 0x0f]) : noise(20), noise(r.int(300))]) };
    case 4:
      return { format: 'ORC', bytes: Buffer.concat([Buffer.from('ORC'), noise(r.int(200))]) };
    default:
      return { format: r.pick(['CSV', 'NEWLINE_DELIMITED_JSON', 'PARQUET', 'AVRO']), bytes: noise(r.int(2000)) };
  }
}

// ---------------------------------------------------------------- requests

/** Every request goes to this project. */
export const P = '/bigquery/v2/projects/fz';

export interface Req {
  kind: string;
  method: string;
  path: string;
  body?: unknown;
  /** Raw body (with its content type), instead of JSON. */
  raw?: { text: string | Buffer; type: string; encoding?: string };
  /** Writes to the protected dataset/table: checked against the snapshot when rejected. */
  protectedWrite?: boolean;
}

const VALID_TABLE = { tableReference: { tableId: 'x' }, schema: { fields: [{ name: 'a', type: 'STRING', mode: 'NULLABLE' }, { name: 'r', type: 'RECORD', fields: [{ name: 'b', type: 'INTEGER' }] }] }, labels: { k: 'v' }, description: 'd', timePartitioning: { type: 'DAY' } };
const VALID_DATASET = { datasetReference: { datasetId: 'x' }, labels: { k: 'v' }, description: 'd', defaultTableExpirationMs: '3600000', access: [{ role: 'READER', specialGroup: 'projectReaders' }] };
const PARAMS = [
  { name: 'x', parameterType: { type: 'INT64' }, parameterValue: { value: '1' } },
  { name: 'y', parameterType: { type: 'ARRAY', arrayType: { type: 'STRING' } }, parameterValue: { arrayValues: [{ value: 'a' }, { value: null }] } },
  { name: 'z', parameterType: { type: 'STRUCT', structTypes: [{ name: 'a', type: { type: 'DATE' } }] }, parameterValue: { structValues: { a: { value: '2020-01-01' } } } },
  { name: 'w', parameterType: { type: 'RANGE', rangeElementType: { type: 'DATE' } }, parameterValue: { rangeValue: { start: { value: '2020-01-01' }, end: { value: null } } } },
];
const DML = [
  "UPDATE fz.t SET s = CONCAT(s, '!') WHERE id = 1",
  'UPDATE fz.t SET id = CAST(10 / (id - 2) AS INT64) WHERE TRUE',
  "UPDATE fz.t SET s = ERROR('stop') WHERE id = 3",
  "INSERT fz.t (id, s) SELECT 100 + i, IF(i = 3, ERROR('stop'), 'v') FROM UNNEST([1, 2, 3]) AS i",
  'DELETE fz.t WHERE id / (id - 2) > 0',
  "MERGE fz.t AS t USING (SELECT 1 AS id UNION ALL SELECT 1) AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.s = 'twice'",
  'ALTER TABLE fz.t ADD COLUMN id INT64',
  'ALTER TABLE fz.t ALTER COLUMN id SET DATA TYPE STRING',
  "INSERT fz.t (id, j) VALUES (200, JSON '[[[[1]]]]')",
  'TRUNCATE TABLE fz.t_missing',
];

/** Request `i` of a run: one of every family, from `r`. */
export function generate(r: Rng, functions: readonly string[], corpus: readonly string[], i: number): Req {
  // SQL that never writes the protected table (jobs may finish after later requests).
  const sql = (): string => {
    switch (r.int(7)) {
      case 0:
      case 1:
        return mutateSql(r, r.pick(corpus));
      case 2:
        return r.pick(corpus);
      case 3:
        return randomCall(r, functions);
      case 4:
        return r.chance(0.5) ? randomCall(r, functions) : randomExpr(r);
      case 5:
        return deepSql(r);
      default:
        return `DECLARE i INT64 DEFAULT 0; ${r.pick(['WHILE TRUE DO SET i = i + 1; END WHILE', 'LOOP SELECT i; SET i = i + 1; END LOOP', 'REPEAT SET i = i + 1; UNTIL i < 0 END REPEAT'])}; SELECT i`;
    }
  };
  const scratch = `s${i}`;
  switch (r.int(15)) {
    case 13: {
      // A load job of a damaged data file (multipart upload into a scratch table).
      const { format, bytes } = dataFile(r);
      const meta = mutateJson(r, { configuration: { load: { destinationTable: { datasetId: 'scratch', tableId: `l${i}` }, sourceFormat: format, autodetect: r.chance(0.3), schema: { fields: [{ name: 'a', type: 'INTEGER' }, { name: 'b', type: 'STRING' }] } } } } as never);
      const b = 'fuzz_boundary';
      const body = Buffer.concat([
        Buffer.from(`--${b}\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(meta)}\r\n--${b}\r\nContent-Type: application/octet-stream\r\n\r\n`),
        bytes,
        Buffer.from(`\r\n--${b}--`),
      ]);
      return { kind: `load ${format}`, method: 'POST', path: `/upload${P}/jobs?uploadType=multipart`, raw: { text: body, type: `multipart/related; boundary=${b}` } };
    }
    case 0:
      return { kind: 'datasets.insert', method: 'POST', path: `${P}/datasets`, body: mutateJson(r, { ...VALID_DATASET, datasetReference: { datasetId: `d${i}` } } as never) };
    case 1:
      return { kind: 'datasets.patch', method: r.pick(['PATCH', 'PUT']), path: `${P}/datasets/fz`, body: mutateJson(r, { ...VALID_DATASET, datasetReference: { datasetId: 'fz' } } as never), protectedWrite: true };
    case 2:
      return { kind: 'tables.insert', method: 'POST', path: `${P}/datasets/scratch/tables`, body: mutateJson(r, { ...VALID_TABLE, tableReference: { tableId: scratch } } as never) };
    case 3:
      return { kind: 'tables.patch', method: r.pick(['PATCH', 'PUT']), path: `${P}/datasets/fz/tables/t`, body: mutateJson(r, { schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'extra', type: 'STRING' }] }, labels: { a: 'b' } } as never), protectedWrite: true };
    case 4: {
      const rows = [{ insertId: `i${i}`, json: { id: 1000 + i, s: 'ok', a: [1], r: { x: 1, y: 'y' }, j: { k: 1 } } }, { json: { id: 'x', nope: 1, a: 'no', r: 5, ts: 'never', g: 'POINT(1' } }];
      return { kind: 'insertAll', method: 'POST', path: `${P}/datasets/fz/tables/t/insertAll`, body: mutateJson(r, { skipInvalidRows: false, rows } as never), protectedWrite: true };
    }
    case 5:
      return { kind: 'jobs.insert', method: 'POST', path: `${P}/jobs`, body: mutateJson(r, { configuration: { query: { query: sql(), useLegacySql: false, queryParameters: PARAMS, maximumBytesBilled: '1000000', labels: { a: 'b' } } } } as never) };
    case 6:
    case 7:
    case 8: {
      const body: Json = { query: sql(), useLegacySql: false, timeoutMs: 20_000 };
      if (r.chance(0.4)) body['queryParameters'] = r.chance(0.5) ? PARAMS : mutateJson(r, PARAMS as never);
      const dml = r.chance(0.2);
      if (dml) body['query'] = mutateSql(r, r.pick(DML));
      return { kind: dml ? 'jobs.query dml' : 'jobs.query', method: 'POST', path: `${P}/queries`, body: r.chance(0.2) ? mutateJson(r, body as never) : body, protectedWrite: dml };
    }
    case 9: {
      const family = r.pick(['routines', 'models', 'rowAccessPolicies']);
      if (family === 'routines') return { kind: 'routines', method: r.pick(['POST', 'PUT']), path: `${P}/datasets/scratch/routines${r.chance(0.5) ? '' : '/f'}`, body: mutateJson(r, { routineReference: { routineId: `f${i}` }, routineType: 'SCALAR_FUNCTION', language: 'SQL', definitionBody: 'x + 1', arguments: [{ name: 'x', dataType: { typeKind: 'INT64' } }] } as never) };
      if (family === 'models') return { kind: 'models', method: 'PATCH', path: `${P}/datasets/scratch/models/m`, body: mutateJson(r, { description: 'd', labels: { a: 'b' }, expirationTime: '1' } as never) };
      return { kind: 'rowAccessPolicies', method: 'POST', path: `${P}/datasets/scratch/tables/s/rowAccessPolicies`, body: mutateJson(r, { rowAccessPolicyReference: { policyId: `p${i}` }, filterPredicate: 'id > 0', grantees: ['user:a@b.c'] } as never) };
    }
    case 10: {
      // List routes and getQueryResults with random query parameters.
      const path = r.pick(['datasets', 'datasets/fz/tables', 'jobs', 'datasets/fz/routines', 'datasets/fz/models', 'datasets/fz/tables/t/data', 'datasets/fz/tables/t/rowAccessPolicies', 'queries/nope']);
      const params = Array.from({ length: 1 + r.int(3) }, () => `${r.pick(['maxResults', 'pageToken', 'startIndex', 'timeoutMs', 'pageSize', 'all', 'stateFilter', 'selectedFields', 'formatOptions.useInt64Timestamp', 'minCreationTime'])}=${encodeURIComponent(String(r.pick([-1, 0, 1, 'abc', '1e3', '99999999999999999999', '', 'true', '%', '😀', 'a'.repeat(500)])))}`);
      return { kind: 'list', method: 'GET', path: `${P}/${path}?${params.join('&')}` };
    }
    case 11: {
      // Bodies that are no JSON object, in every encoding a client might claim.
      const text = r.pick(['', '{', '[]', 'null', '"x"', '{"query": 1', '\u0000\u0001', '{"a":' + '['.repeat(3000), JSON.stringify(oddValue(r)), '{"query": "SELECT 1"}']);
      const path = r.pick([`${P}/queries`, `${P}/datasets`, `${P}/jobs`, `${P}/datasets/fz/tables/t/insertAll`, `${P}/datasets/fz/tables`]);
      return { kind: 'body', method: 'POST', path, raw: { text, type: r.pick(['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/related; boundary=x']), ...(r.chance(0.2) ? { encoding: r.pick(['gzip', 'deflate', 'br', 'zstd']) } : {}) } };
    }
    case 12: {
      // Raw HTTP the parser or router refuses.
      const text = r.pick([
        `GET /bigquery/v2/projects/fz/datasets/${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
        'GARBAGE / HTTP/9.9\r\n\r\n',
        `POST ${P}/queries HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n{}`,
        `POST ${P}/queries HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}`,
        `GET ${P}/datasets/%E0%A4%A HTTP/1.1\r\nHost: x\r\n\r\n`,
        `GET ${P}/datasets/..%2F..%2Fetc HTTP/1.1\r\nHost: x\r\n\r\n`,
        `DELETE ${P}/datasets/fz/tables/%00 HTTP/1.1\r\nHost: x\r\n\r\n`,
        `GET /bigquery/v2/projects/${'p'.repeat(200)}/datasets HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(20_000)}\r\n\r\n`,
      ]);
      return { kind: 'http', method: 'RAW', path: '', raw: { text, type: '' } };
    }
    default: {
      // A body nested to a random depth on a route that takes one.
      const depth = r.pick([50, 99, 100, 101, 500, 10_000]);
      const text = `{"query": "SELECT 1", "queryParameters": [{"name": "x", "parameterType": ${'{"type": "ARRAY", "arrayType": '.repeat(depth)}{"type": "INT64"}${'}'.repeat(depth)}}]}`;
      return { kind: 'deep body', method: 'POST', path: `${P}/queries`, raw: { text, type: 'application/json' } };
    }
  }
}
