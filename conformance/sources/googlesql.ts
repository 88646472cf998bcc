// Source `googlesql`: the GoogleSQL compliance .test files. One group per
// file: a dataset `gsql_<file>` in project `conformance`, its prepare_database
// blocks run once (CREATE TABLE AS SELECT through jobs.query), then every case
// runs as a query with that defaultDataset.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseScript } from '../../grammar/index.js';
import { recursiveWithViolation } from '../../grammar/recursive-with.js';
import { someNode } from '../../grammar/ast-walk.js';
import type * as A from '../../grammar/ast.js';
import { decideFeatureOff, decideSkip, FEATURES } from '../features.js';
import { errorSummary, firstLine, RestError, type Client, type QueryParameter } from '../lib/client.js';
import { compareRows } from '../lib/compare.js';
import { fail, type Group, type Outcome, type PlannedCase, type RunContext } from '../lib/model.js';
import { paramTypeOfField, paramValueOfCell } from '../lib/params.js';
import { normalizeRestType, restTypeName, typeToString, unsupportedInBigQuery, type SqlType } from '../lib/sqltype.js';
import { parseParameterList, parseTestFile, type ExpectedSection, type PrepareBlock, type TestCase, type TestFile } from '../lib/testfile.js';
import { formatTimestampMicros, parseTypedLiteral, type TypedValue, type Val } from '../lib/value.js';
import { decodeRows, type RestField } from '../lib/wire.js';

export const GOOGLESQL_PROJECT = 'conformance';

/**
 * File headers the shared subset dropped with their proto lines. Upstream
 * google/zetasql array_path.test starts with
 * `[default required_features=V_1_3_UNNEST_AND_FLATTEN_ARRAYS]`: its cases
 * before the first `[default required_features=...]` line need that feature.
 */
const LOST_DEFAULT_FEATURES: Record<string, string> = {
  'array_path.test': 'UNNEST_AND_FLATTEN_ARRAYS',
};

export function loadTestFiles(dir: string): TestFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.test'))
    .sort()
    .map((f) => {
      const text = readFileSync(path.join(dir, f), 'utf8');
      const lost = LOST_DEFAULT_FEATURES[f];
      // on the first line, so that case line numbers stay those of the file
      return parseTestFile(f, lost ? `[default required_features=${lost}]${text.startsWith('\n') ? '' : '\n'}${text}` : text);
    });
}

type PrepKind = 'table' | 'temp_function' | 'ddl' | 'constant';

interface Prep {
  block: PrepareBlock;
  kind: PrepKind;
  /** object name as written */
  name: string;
  /** planned skip (feature BigQuery lacks) */
  skip?: { feature: string; why: string };
  /** contents literal for tables */
  contents?: TypedValue;
  contentsError?: string;
  /**
   * Columns BigQuery cannot hold (a PROTO/ENUM/UUID type, integers beyond
   * INT64, NULL array elements): left out of the REST fallback table, and a
   * case that names one of them (or selects *) is skipped with its feature.
   */
  dropped: Array<{ name: string; feature: string }>;
  /** Columns whose prepared rows hold a NULL ARRAY, which a BigQuery table stores as [] (data-types#array_nulls). */
  nullArrays?: string[];
  state: { status: 'pending' | 'ok' | 'failed'; cause?: string; viaFallback?: boolean };
  /** CREATE TABLE t AS SELECT AS STRUCT: readable as columns, but an INSERT of a whole STRUCT row needs a value table. */
  structValueTable?: boolean;
}

function hasNullElement(v: Val): boolean {
  if (v.k === 'array') return v.elems.some((e) => e.k === 'null' || hasNullElement(e));
  if (v.k === 'struct') return v.fields.some(hasNullElement);
  if (v.k === 'range') return false;
  return false;
}

/** Per column of a prepared table: the feature BigQuery would need to hold it. */
function unstorableColumns(typed: TypedValue): Array<{ name: string; feature: string }> | null {
  const cols = columnTypes(typed.type);
  if (!cols || !(typed.type.kind === 'array' && typed.type.element?.kind === 'struct')) return null;
  const rows = typed.value.k === 'array' ? typed.value.elems : [];
  const out: Array<{ name: string; feature: string }> = [];
  cols.forEach((c, i) => {
    const name = c.name ?? `_col${i}`;
    const tf = typeFeature(c.type);
    if (tf) return void out.push({ name, feature: tf });
    if (hasEmptyStruct(c.type)) return void out.push({ name, feature: 'type:EMPTY_STRUCT' });
    const cells = rows.map((r) => (r.k === 'struct' ? r.fields[i] : undefined)).filter((x): x is Val => x !== undefined);
    if (cells.some(needsUint64)) return void out.push({ name, feature: 'type:UINT64' });
    if (cells.some(hasNullElement)) out.push({ name, feature: 'array_null_elements' });
  });
  return out;
}

/** The columns of a prepared table whose rows hold a NULL ARRAY. */
function nullArrayColumns(typed: TypedValue): string[] {
  const cols = columnTypes(typed.type);
  if (!cols || !(typed.type.kind === 'array' && typed.type.element?.kind === 'struct')) return [];
  const rows = typed.value.k === 'array' ? typed.value.elems : [];
  return cols.flatMap((c, i) => (c.type?.kind === 'array' && rows.some((r) => r.k === 'struct' && r.fields[i]?.k === 'null') ? [c.name ?? `_col${i}`] : []));
}

function classifyPrepare(b: PrepareBlock): { kind: PrepKind; name: string } {
  const sql = b.sql;
  let m = /^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP|TEMPORARY)\s+(?:AGGREGATE\s+)?FUNCTION\s+([`\w.]+)/i.exec(sql);
  if (m) return { kind: 'temp_function', name: m[1]!.replace(/`/g, '') };
  m = /^\s*CREATE\s+CONSTANT\s+([`\w.]+)/i.exec(sql);
  if (m) return { kind: 'constant', name: m[1]!.replace(/`/g, '') };
  m = /^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\s+)?TABLE\s+FUNCTION\s+([`\w.]+)/i.exec(sql);
  if (m) return { kind: 'ddl', name: m[1]!.replace(/`/g, '') };
  m = /^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([`\w.]+)/i.exec(sql);
  if (m) return { kind: 'table', name: m[1]!.replace(/`/g, '') };
  m = /^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:\w+\s+)*?(?:FUNCTION|VIEW|PROCEDURE)\s+([`\w.]+)/i.exec(sql);
  if (m) return { kind: 'ddl', name: m[1]!.replace(/`/g, '') };
  return { kind: 'ddl', name: `prepare@${b.line}` };
}

const mentionRe = new Map<string, RegExp>();
function mentions(text: string, name: string): boolean {
  let re = mentionRe.get(name);
  if (!re) {
    const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    re = new RegExp(`(^|[^A-Za-z0-9_])${esc}($|[^A-Za-z0-9_])`, 'i');
    mentionRe.set(name, re);
  }
  return re.test(text);
}

/** Which feature a type needs that BigQuery lacks (PROTO/ENUM/UUID pseudo-features). */
/** A STRUCT<> anywhere in a column type: a table cannot hold it ("Field s is type RECORD but has no schema"). */
function hasEmptyStruct(t: SqlType | null): boolean {
  if (!t) return false;
  if (t.kind === 'struct') return t.fields.length === 0 || t.fields.some((f) => hasEmptyStruct(f.type));
  if (t.kind === 'array' || t.kind === 'range') return hasEmptyStruct(t.element);
  return false;
}

function typeFeature(t: SqlType): string | null {
  const r = unsupportedInBigQuery(t);
  if (!r) return null;
  if (r.includes('PROTO')) return 'type:PROTO';
  if (r.includes('ENUM')) return 'type:ENUM';
  if (r.includes('UUID')) return 'type:UUID';
  if (/^type [\w.]+$/.test(r)) return 'type:PROTO'; // bare proto/enum names
  return null;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A value needing UINT64: an integer beyond the INT64 range. */
export function needsUint64(v: Val): boolean {
  switch (v.k) {
    case 'int': return v.v < INT64_MIN || v.v > INT64_MAX;
    case 'array': return v.elems.some(needsUint64);
    case 'struct': return v.fields.some(needsUint64);
    case 'range': return needsUint64(v.start) || needsUint64(v.end);
    default: return false;
  }
}

/** Internal-mode type names in SQL text (string literals and comments removed). */
export function internalTypeFeature(sql: string): string | null {
  const s = sql.replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|--[^\n]*|#[^\n]*/g, "''");
  // also the _UINT64 variants of functions (KLL_QUANTILES.MERGE_UINT64): they return UINT64
  if (/\buint64\b|_uint64\s*\(/i.test(s)) return 'type:UINT64';
  if (/\buint32\b/i.test(s)) return 'type:UINT32';
  if (/\bint32\b/i.test(s)) return 'type:INT32';
  if (/\bfloat32\b|\bAS\s+float\s*\)|<\s*float\s*>/i.test(s)) return 'type:FLOAT32';
  if (/\bdouble\b/i.test(s)) return 'type:DOUBLE';
  return null;
}

/** Internal-mode scalar types (no BigQuery counterpart) anywhere in a type. */
export function internalScalars(t: SqlType): Set<string> {
  const out = new Set<string>();
  const walk = (x: SqlType | null): void => {
    if (!x) return;
    if (x.kind === 'scalar') {
      if (x.name === 'INT32' || x.name === 'UINT32' || x.name === 'UINT64') out.add(`type:${x.name}`);
      if (x.name === 'FLOAT') out.add('type:FLOAT32');
    } else if (x.kind === 'array') walk(x.element);
    else if (x.kind === 'range') walk(x.element);
    else if (x.kind === 'struct') x.fields.forEach((f) => walk(f.type));
  };
  walk(t);
  return out;
}

function pseudo(feature: string): { feature: string; why: string } {
  const f = FEATURES[feature];
  return { feature, why: f ? `${f.why} (${f.link})` : feature };
}

/** Picks the expected section for BigQuery's feature set. */
export function selectExpected(sections: ExpectedSection[]): { section: ExpectedSection } | { skip: { feature: string; why: string } } | { none: true } {
  const usable = sections.filter((s) => s.kind !== 'other');
  if (usable.length === 0) return { none: true };
  const fitting = usable.filter((s) => s.withFeatures.every((f) => FEATURES[f]?.supported === true));
  if (fitting.length > 0) {
    // most specific label wins: the section produced with the most of BigQuery's features on
    fitting.sort((a, b) => b.withFeatures.length - a.withFeatures.length);
    return { section: fitting[0]! };
  }
  const d = decideSkip(usable[0]!.withFeatures);
  return { skip: d.skip ? { feature: d.feature, why: `expected result exists only with ${d.feature}: ${d.why}` } : { feature: '?', why: 'no expected section' } };
}

interface Expectation {
  kind: 'rows' | 'error' | 'dml';
  section: ExpectedSection;
  typed?: TypedValue;
  /** BigQuery-adjusted: the reference result cannot be returned by BigQuery */
  adjusted?: string;
}

/** Finds properties of an expected result that BigQuery cannot return. */
export function bigQueryAdjustment(typed: TypedValue): string | null {
  const cols = columnTypes(typed.type);
  if (!cols) return null;
  for (const c of cols) {
    if (unsupportedInBigQuery(c.type) === 'ARRAY of ARRAY') return 'ARRAY of ARRAY in the result (BigQuery cannot return it)';
  }
  const hasNullElem = (v: Val): boolean => {
    if (v.k === 'array') return v.elems.some((e) => e.k === 'null' || hasNullElem(e));
    if (v.k === 'struct') return v.fields.some(hasNullElem);
    return false;
  };
  const hasNestedArray = (v: Val): boolean => {
    if (v.k === 'array') return v.elems.some((e) => e.k === 'array' || hasNestedArray(e));
    if (v.k === 'struct') return v.fields.some(hasNestedArray);
    return false;
  };
  const rows = typed.value.k === 'array' ? typed.value.elems : [];
  for (const r of rows) {
    const cells = r.k === 'struct' && typed.type.kind === 'array' && typed.type.element?.kind === 'struct' ? r.fields : [r];
    for (const c of cells) {
      if (hasNestedArray(c)) return 'ARRAY of ARRAY in the result (BigQuery cannot return it)';
      if (hasNullElem(c)) return 'NULL element in an ARRAY of the result (BigQuery: "Array cannot have a null element")';
    }
  }
  return null;
}

// Aggregate functions of the aggregate, statistical aggregate and approximate aggregate references.
const AGGREGATE_NAMES = [
  'ANY_VALUE', 'ARRAY_AGG', 'ARRAY_CONCAT_AGG', 'AVG', 'BIT_AND', 'BIT_OR', 'BIT_XOR', 'COUNT', 'COUNTIF', 'LOGICAL_AND',
  'LOGICAL_OR', 'MAX', 'MAX_BY', 'MIN', 'MIN_BY', 'STRING_AGG', 'SUM', 'CORR', 'COVAR_POP', 'COVAR_SAMP', 'STDDEV',
  'STDDEV_POP', 'STDDEV_SAMP', 'VARIANCE', 'VAR_POP', 'VAR_SAMP', 'APPROX_COUNT_DISTINCT', 'APPROX_QUANTILES',
  'APPROX_TOP_COUNT', 'APPROX_TOP_SUM', 'PERCENTILE_CONT', 'PERCENTILE_DISC',
];
// Numbering and navigation functions of the window function references.
const WINDOW_NAMES = ['ROW_NUMBER', 'RANK', 'DENSE_RANK', 'PERCENT_RANK', 'CUME_DIST', 'NTILE', 'LAG', 'LEAD', 'FIRST_VALUE', 'LAST_VALUE', 'NTH_VALUE'];
const SAFE_REFUSED_RE = new RegExp(`\\bSAFE\\s*\\.\\s*(${[...AGGREGATE_NAMES, ...WINDOW_NAMES].join('|')})\\s*\\(`, 'i');

/** A query calling an aggregate or window function with the SAFE. prefix, which BigQuery refuses (functions-reference: SAFE. prefix). */
export function safeRefusedAdjustment(query: string): string | null {
  const m = SAFE_REFUSED_RE.exec(query);
  return m ? `SAFE. prefix on the aggregate or window function ${m[1]!.toUpperCase()} (BigQuery: "SAFE is not supported for function ${m[1]!.toUpperCase()}")` : null;
}

/** Columns of a result table type `ARRAY<STRUCT<...>>` (or a value table `ARRAY<T>`). */
function columnTypes(t: SqlType): Array<{ name: string | null; type: SqlType }> | null {
  if (t.kind !== 'array' || !t.element) return null;
  if (t.element.kind === 'struct') return t.element.fields;
  return [{ name: null, type: t.element }];
}

/** Compares a REST field against an expected type; null when compatible. */
export function compareFieldType(exp: SqlType, act: RestField, where: string): string | null {
  const mode = (act.mode ?? 'NULLABLE').toUpperCase();
  let t = exp;
  if (t.kind === 'array') {
    if (mode !== 'REPEATED') return `schema ${where}: expected ARRAY (mode REPEATED), got ${act.type} mode ${mode}`;
    if (!t.element) return null; // element type elided by the file and all values NULL
    t = t.element;
  } else if (mode === 'REPEATED') {
    return `schema ${where}: expected ${typeToString(exp)}, got REPEATED ${act.type}`;
  }
  const want = restTypeName(t);
  const got = normalizeRestType(act.type);
  if (want !== got) return `schema ${where}: expected ${want}, got ${got}`;
  if (t.kind === 'struct') {
    const sub = act.fields ?? [];
    if (sub.length !== t.fields.length) return `schema ${where}: expected ${t.fields.length} struct fields, got ${sub.length}`;
    for (let i = 0; i < t.fields.length; i++) {
      const ef = t.fields[i]!;
      const af = sub[i]!;
      if (ef.name && af.name?.toLowerCase() !== ef.name.toLowerCase()) return `schema ${where}.${i}: expected field name ${ef.name}, got ${af.name}`;
      const d = compareFieldType(ef.type, af, `${where}.${ef.name ?? i}`);
      if (d) return d;
    }
  }
  return null;
}

export function compareSchema(cols: Array<{ name: string | null; type: SqlType }>, fields: RestField[]): string | null {
  if (cols.length !== fields.length) {
    return `column count: expected ${cols.length}, got ${fields.length} (${fields.map((f) => f.name).join(', ')})`;
  }
  const names = renamedDuplicates(cols.map((c) => c.name));
  for (let i = 0; i < cols.length; i++) {
    const c = cols[i]!;
    const f = fields[i]!;
    const name = names[i];
    if (name && f.name?.toLowerCase() !== name.toLowerCase()) return `column name ${i}: expected ${name}, got ${f.name}`;
    const d = compareFieldType(c.type, f, `column ${c.name ?? i}`);
    if (d) return d;
  }
  return null;
}

/**
 * The reference returns repeated result names as they are; BigQuery renames every repeat after the first with the
 * first free suffix, a -> a_1, a_2 (query-syntax.md, Duplicate aliases; names compare case-insensitively).
 */
function renamedDuplicates(names: readonly (string | null)[]): (string | null)[] {
  const taken = new Set(names.filter((n): n is string => !!n).map((n) => n.toLowerCase()));
  const seen = new Set<string>();
  return names.map((n) => {
    if (!n) return n;
    const l = n.toLowerCase();
    if (!seen.has(l)) return seen.add(l), n;
    let i = 1;
    while (taken.has(`${l}_${i}`)) i++;
    taken.add(`${l}_${i}`);
    return `${n}_${i}`;
  });
}

/** Rows of an expected table value, as lists of cells. */
function expectedRows(typed: TypedValue): { rows: Val[][]; ordered: boolean } {
  const v = typed.value;
  if (v.k !== 'array') return { rows: [], ordered: true };
  const structRows = typed.type.kind === 'array' && typed.type.element?.kind === 'struct';
  const rows = v.elems.map((e) => {
    if (!structRows) return [e];
    if (e.k === 'struct') return e.fields;
    const n = (typed.type.kind === 'array' && typed.type.element?.kind === 'struct') ? typed.type.element.fields.length : 1;
    return new Array<Val>(n).fill({ k: 'null' });
  });
  return { rows, ordered: v.ordered };
}

const DML_RE = /^\s*(INSERT|UPDATE|DELETE|MERGE)\b/i;
/** The table a DML statement writes. */
const DML_TARGET_RE = /^\s*(?:UPDATE|DELETE(?:\s+FROM)?|INSERT(?:\s+INTO)?|MERGE(?:\s+INTO)?)\s+([`\w.]+)/i;

function dmlTarget(sql: string): string | null {
  const m = /^\s*(?:INSERT(?:\s+OR\s+\w+)?(?:\s+INTO)?|UPDATE|DELETE(?:\s+FROM)?|MERGE(?:\s+INTO)?)\s+([`\w.]+)/i.exec(sql);
  return m ? m[1]!.replace(/`/g, '') : null;
}

/** ZetaSQL type of a prepared table's contents → REST schema (fallback creation). */
function restSchemaOf(t: SqlType, name: string): RestField {
  if (t.kind === 'array') {
    if (!t.element) throw new Error(`column ${name}: element type unknown`);
    return { ...restSchemaOf(t.element, name), mode: 'REPEATED' };
  }
  if (t.kind === 'struct') {
    return { name, type: 'RECORD', mode: 'NULLABLE', fields: t.fields.map((f, i) => restSchemaOf(f.type, f.name ?? `_field_${i + 1}`)) };
  }
  if (t.kind === 'range') return { name, type: 'RANGE', mode: 'NULLABLE', rangeElementType: { type: restTypeName(t.element) } };
  if (t.kind === 'other') throw new Error(`column ${name}: type ${t.name} has no BigQuery counterpart`);
  return { name, type: restTypeName(t), mode: 'NULLABLE' };
}

/** A typed value → insertAll JSON. */
export function jsonOfVal(v: Val, t: SqlType | null): unknown {
  switch (v.k) {
    case 'null': return null;
    case 'int': return v.v.toString();
    case 'float': return Number.isNaN(v.v) ? 'NaN' : v.v === Infinity ? 'Infinity' : v.v === -Infinity ? '-Infinity' : v.v;
    case 'bool': return v.v;
    case 'string': case 'bytes': case 'decimal': case 'geography': case 'raw': return v.v;
    case 'civil': return v.v;
    case 'timestamp': return formatTimestampMicros(v.micros).replace(/\+00$/, '+00:00');
    case 'json': return JSON.stringify(v.v);
    case 'interval': {
      const sign = v.months < 0n ? '-' : '';
      const m = v.months < 0n ? -v.months : v.months;
      const ns = v.nanos < 0n ? -v.nanos : v.nanos;
      const secs = ns / 1_000_000_000n;
      const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
      return `${sign}${m / 12n}-${m % 12n} ${v.days} ${v.nanos < 0n ? '-' : ''}${secs / 3600n}:${(secs / 60n) % 60n}:${secs % 60n}${frac ? '.' + frac : ''}`;
    }
    case 'range': {
      const el = t && t.kind === 'range' ? t.element : null;
      const side = (x: Val) => (x.k === 'null' ? 'UNBOUNDED' : String(jsonOfVal(x, el)));
      return `[${side(v.start)}, ${side(v.end)})`;
    }
    case 'array': {
      const et = t && t.kind === 'array' ? t.element : null;
      return v.elems.map((e) => jsonOfVal(e, et));
    }
    case 'struct': {
      const o: Record<string, unknown> = {};
      const fields = t && t.kind === 'struct' ? t.fields : [];
      v.fields.forEach((fv, i) => {
        o[fields[i]?.name ?? `_field_${i + 1}`] = jsonOfVal(fv, fields[i]?.type ?? null);
      });
      return o;
    }
  }
}

interface FileState {
  dataset: string;
  preps: Prep[];
}

export function planGoogleSql(dir: string, filter: (id: string) => boolean, files: TestFile[] = loadTestFiles(dir)): Group[] {
  const groups: Group[] = [];
  for (const tf of files) {
    const base = tf.file.replace(/\.test$/, '');
    const preps: Prep[] = tf.prepare.map((block) => {
      const c = classifyPrepare(block);
      const p: Prep = { block, kind: c.kind, name: c.name, dropped: [], state: { status: 'pending' } };
      const d = decideSkip([...tf.defaultRequiredFeatures, ...block.requiredFeatures]);
      if (d.skip) p.skip = { feature: d.feature, why: d.why };
      if (c.kind === 'constant') p.skip = pseudo('named_constants');
      // CREATE TABLE t AS SELECT AS VALUE <scalar> makes a value table without
      // columns (AS STRUCT tables are kept: BigQuery reads them as columns)
      if (c.kind === 'table' && /\bAS\s+SELECT\s+AS\s+VALUE\b/i.test(block.sql)) p.skip = pseudo('value_tables');
      if (c.kind === 'table' && /\bAS\s+SELECT\s+AS\s+STRUCT\b/i.test(block.sql)) p.structValueTable = true;
      if (block.contents) {
        try {
          p.contents = parseTypedLiteral(block.contents);
          p.nullArrays = nullArrayColumns(p.contents);
          const cols = unstorableColumns(p.contents);
          const ncols = columnTypes(p.contents.type)?.length ?? 0;
          if (cols === null) {
            const f = typeFeature(p.contents.type);
            if (f) p.skip ??= pseudo(f);
            if (needsUint64(p.contents.value)) p.skip ??= pseudo('type:UINT64');
          } else if (cols.length > 0 && cols.length === ncols) {
            p.skip ??= pseudo(cols[0]!.feature);
          } else {
            p.dropped = cols;
          }
        } catch (e) {
          p.contentsError = (e as Error).message;
        }
      }
      // protos named in the statement itself, for tables whose contents do
      // not show which columns they are
      if (/zetasql_test__/.test(block.sql) && (p.kind !== 'table' || !p.contents || p.dropped.length === 0)) p.skip ??= pseudo('type:PROTO');
      return p;
    });
    const state: FileState = { dataset: `gsql_${base.replace(/\W/g, '_')}`, preps };
    const cases: PlannedCase[] = [];
    tf.cases.forEach((tc, index) => {
      const id = `googlesql/${tf.file}:${tc.name}`;
      if (!filter(id)) return;
      cases.push(planCase(id, tc, index, tf, state));
    });
    if (cases.length === 0) continue;
    groups.push({
      source: 'googlesql',
      file: tf.file,
      cases,
      parallel: true,
      setup: (ctx) => setupFile(ctx, state, tf),
      notes: () => state.preps.flatMap((p) => {
        if (p.state.status === 'failed') return [`prepare ${p.name} failed: ${p.state.cause ?? ''}`];
        if (p.state.viaFallback) return [`prepare ${p.name}: CTAS failed (${p.state.cause ?? ''}); table created over REST from the printed contents`];
        return [];
      }),
    });
  }
  return groups;
}

function datasetName(state: FileState, ctx: RunContext): string {
  return state.dataset + ctx.nonce;
}

async function setupFile(ctx: RunContext, state: FileState, tf: TestFile): Promise<void> {
  const ds = datasetName(state, ctx);
  // GoogleSQL resolves table names case-insensitively; BigQuery does so in
  // datasets created with isCaseInsensitive.
  await ctx.client.ensureDataset(GOOGLESQL_PROJECT, ds, { isCaseInsensitive: true });
  const defaultDataset = { projectId: GOOGLESQL_PROJECT, datasetId: ds };
  for (const p of state.preps) {
    if (p.skip || p.kind === 'temp_function' || p.kind === 'constant') {
      p.state = { status: 'ok' };
      continue;
    }
    try {
      await ctx.client.query(GOOGLESQL_PROJECT, { query: p.block.sql, defaultDataset, connectionProperties: timeZoneProps(tf) });
      p.state = { status: 'ok' };
    } catch (e1) {
      if (p.kind !== 'table' || !p.contents) {
        p.state = { status: 'failed', cause: errorSummary(e1) };
        continue;
      }
      // Fallback: create the table over REST from the printed contents, so
      // one unsupported CTAS does not fail every case of the file.
      try {
        await createFromContents(ctx.client, ds, p);
        p.state = { status: 'ok', viaFallback: true, cause: errorSummary(e1) };
      } catch (e2) {
        p.state = { status: 'failed', cause: `CTAS: ${errorSummary(e1)}; REST fallback: ${errorSummary(e2)}` };
      }
    }
  }
}

async function createFromContents(client: Client, ds: string, p: Prep): Promise<void> {
  const typed = p.contents!;
  const cols = columnTypes(typed.type);
  if (!cols || !(typed.type.kind === 'array' && typed.type.element?.kind === 'struct')) throw new Error('contents are not a table of STRUCT rows');
  const dropped = new Set(p.dropped.map((d) => d.name));
  const keep = cols.map((c, i) => ({ c, i, name: c.name ?? `_col${i}` })).filter((x) => !dropped.has(x.name));
  const fields = keep.map((x) => restSchemaOf(x.c.type, x.name));
  await client.createTable(GOOGLESQL_PROJECT, ds, {
    tableReference: { projectId: GOOGLESQL_PROJECT, datasetId: ds, tableId: p.name },
    schema: { fields },
  });
  const rows = typed.value.k === 'array' ? typed.value.elems : [];
  if (rows.length === 0) return;
  const json = rows.map((r) => {
    const o: Record<string, unknown> = {};
    if (r.k === 'struct') keep.forEach((x, j) => { o[fields[j]!.name] = jsonOfVal(r.fields[x.i]!, x.c.type); });
    return o;
  });
  for (let i = 0; i < json.length; i += 5000) await client.insertAll(GOOGLESQL_PROJECT, ds, p.name, json.slice(i, i + 5000));
}

/**
 * The reference driver that produced the expected answers runs with default
 * time zone America/Los_Angeles unless a file says otherwise; BigQuery's is
 * UTC. Every request of the source therefore names the zone, with the real
 * API's connection property `time_zone` (no script needed).
 */
export const REFERENCE_DEFAULT_TIME_ZONE = 'America/Los_Angeles';

function timeZoneProps(tf: TestFile): Array<{ key: string; value: string }> {
  return [{ key: 'time_zone', value: tf.defaults['default_time_zone'] || REFERENCE_DEFAULT_TIME_ZONE }];
}

/** The query places WITH RECURSIVE where the service does not allow it (the reference does): see grammar/recursive-with.ts. */
function breaksRecursiveWithRules(sql: string): boolean {
  if (!/\bRECURSIVE\b/i.test(sql)) return false;
  try {
    return parseScript(sql).statements.some((st) => st.kind === 'QueryStatement' && recursiveWithViolation(st.query) !== undefined);
  } catch {
    return false; // not parseable here: the case runs and says so
  }
}

/** Some node of the parsed script satisfies `pred`; false when it does not parse here (the case runs and says so). */
function parsedSome(sql: string, pred: (node: { kind?: string }) => boolean): boolean {
  try {
    return someNode(parseScript(sql), pred);
  } catch {
    return false;
  }
}

/** INTERSECT ALL or EXCEPT ALL (also as pipe operators): the service has ALL on UNION only, the reference on all three. */
function usesNonUnionAll(sql: string): boolean {
  if (!/\b(INTERSECT|EXCEPT)\s+ALL\b/i.test(sql)) return false;
  return parsedSome(sql, (o) => (o.kind === 'SetOperation' || o.kind === 'PipeSetOp') && (o as Partial<A.SetOperation>).op !== 'UNION' && (o as Partial<A.SetOperation>).quantifier === 'ALL');
}

/** A ROWS frame (not fully unbounded) with no ORDER BY: the service requires one, the reference runs it. */
function rowsFrameWithoutOrder(sql: string): boolean {
  if (!/\bROWS\b/i.test(sql)) return false;
  return parsedSome(sql, (o) => {
    const w = o as Partial<A.WindowSpec>;
    if (o.kind !== 'WindowSpec' || w.frame?.unit !== 'ROWS' || w.baseName || w.orderBy?.length) return false;
    return !(w.frame.start.type === 'UNBOUNDED PRECEDING' && w.frame.end?.type === 'UNBOUNDED FOLLOWING');
  });
}

/** A PIVOT aggregate over two columns (CORR(x, y)): the service takes one-argument aggregates only, the reference more. */
function pivotsMultiArgument(sql: string): boolean {
  if (!/\bPIVOT\b/i.test(sql)) return false;
  return parsedSome(sql, (o) => {
    if (o.kind !== 'PivotRef') return false;
    return (o as A.PivotRef).aggregates.some((a) => a.expr.kind === 'FunctionCall' && a.expr.args.filter((x) => x.kind === 'PathExpr').length > 1);
  });
}

/** A TABLE argument that is a function call, `f(TABLE g())`. */
function tableArgumentIsCall(sql: string): boolean {
  return /[(,]\s*TABLE\s+[\w.`]+\s*\(/i.test(sql);
}

function planCase(id: string, tc: TestCase, index: number, tf: TestFile, state: FileState): PlannedCase {
  const skip = (s0: { feature: string; why: string }): PlannedCase => {
    // Every skip names the reference page of the missing feature's area.
    const link = FEATURES[s0.feature]?.link;
    const s = link && !s0.why.includes(link) ? { ...s0, why: `${s0.why} (${link})` } : s0;
    return { id, skip: s, run: async () => ({ status: 'skip', skipFeature: s.feature, skipWhy: s.why }) };
  };
  const d = decideSkip(tc.requiredFeatures);
  if (d.skip) return skip({ feature: d.feature, why: d.why });
  const off = decideFeatureOff(id.replace(/^googlesql\//, ''));
  if (off.skip) return skip({ feature: off.feature, why: off.why });
  const pk = tc.options['primary_key_mode'];
  if (pk === 'first_column_is_primary_key') return skip(pseudo('primary_key_mode:first_column_is_primary_key'));
  const sel = selectExpected(tc.expected);
  if ('skip' in sel) return skip(sel.skip);
  if ('none' in sel) return { id, run: async () => fail('harness: no expected section found in the case') };
  if (/zetasql_test__/.test(tc.query) || /zetasql_test__/.test(tc.parameters ?? '')) return skip(pseudo('type:PROTO'));
  const itf = internalTypeFeature(tc.query + '\n' + (tc.parameters ?? ''));
  if (itf) return skip(pseudo(itf));
  if (breaksRecursiveWithRules(tc.query)) return skip(pseudo('recursive_with_placement'));
  if (usesNonUnionAll(tc.query)) return skip(pseudo('set_op_all_non_union'));
  if (rowsFrameWithoutOrder(tc.query)) return skip(pseudo('window_frame_without_order'));
  if (pivotsMultiArgument(tc.query)) return skip(pseudo('pivot_multi_argument_aggregate'));
  if (tableArgumentIsCall(tc.query)) return skip(pseudo('tvf_call_as_table_argument'));
  // objects of the file's prepare blocks this case uses
  const referenced = state.preps.filter((p) => mentions(tc.query, p.name) || (tc.parameters !== null && mentions(tc.parameters, p.name)));
  // temp functions used by referenced temp functions (transitively)
  for (let i = 0; i < referenced.length; i++) {
    for (const p of state.preps) {
      if (p.kind === 'temp_function' && !referenced.includes(p) && mentions(referenced[i]!.block.sql, p.name)) referenced.push(p);
    }
  }
  for (const p of referenced) if (p.skip) return skip({ feature: p.skip.feature, why: `uses ${p.name}: ${p.skip.why}` });
  const insertTarget = /^\s*INSERT\s+(?:INTO\s+)?`?([\w.]+)`?/i.exec(tc.query)?.[1];
  const valueTable = insertTarget ? referenced.find((p) => p.structValueTable && p.name.toLowerCase() === insertTarget.toLowerCase()) : undefined;
  if (valueTable) return skip({ feature: 'value_tables', why: `inserts whole STRUCT rows into ${valueTable.name}, a value table (CREATE TABLE ... AS SELECT AS STRUCT); BigQuery tables always have columns` });
  // a column BigQuery cannot hold, named by the case or reached through *
  const text = tc.query + '\n' + (tc.parameters ?? '');
  // A NULL array the prepared rows hold is [] in a BigQuery table: a test of that column's NULL-ness selects other rows there.
  for (const p of referenced) {
    const col = p.nullArrays?.find((c) => new RegExp(`(^|[^A-Za-z0-9_])${c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+IS\\s+(NOT\\s+)?NULL\\b`, 'i').test(text));
    if (col) return skip({ feature: 'table_null_arrays', why: `tests ${p.name}.${col} IS [NOT] NULL: ${FEATURES.table_null_arrays!.why} (${FEATURES.table_null_arrays!.link})` });
  }
  for (const p of referenced) {
    if (p.dropped.length === 0) continue;
    const star = /\*\s*(?:,|\bFROM\b|\bEXCEPT\b|\bREPLACE\b|$)/i.test(text.replace(/\(\s*\*\s*\)/g, '()'));
    const hit = p.dropped.find((d) => mentions(text, d.name)) ?? (star ? p.dropped[0] : undefined);
    if (hit) return skip({ feature: hit.feature, why: `uses ${p.name}.${hit.name}: ${FEATURES[hit.feature] ? `${FEATURES[hit.feature]!.why} (${FEATURES[hit.feature]!.link})` : hit.feature}` });
  }

  // An integer parameter beyond INT64 is a UINT64 value: no warehouse type holds it.
  if (tc.parameters && parseParameterList(tc.parameters).some((p) => [...p.expr.matchAll(/(?<![\w.'"])-?\d{19,}(?![\w.])/g)].some((m) => BigInt(m[0]) > INT64_MAX || BigInt(m[0]) < INT64_MIN))) {
    return skip(pseudo('type:UINT64'));
  }

  let exp: Expectation;
  const section = sel.section;
  if (section.kind === 'error') {
    // As below for DML results: an expected error of DML on a table with INT32/UINT32/UINT64/FLOAT
    // columns is those types' coercion or overflow error, which BigQuery tables cannot reach.
    const target = DML_TARGET_RE.exec(tc.query)?.[1]?.replace(/`/g, '').toLowerCase();
    const tablePrep = target ? referenced.find((p) => p.kind === 'table' && p.name.toLowerCase() === target) : undefined;
    const internal = tablePrep?.contents ? [...internalScalars(tablePrep.contents.type)] : [];
    if (internal.length > 0) return skip(pseudo(internal[0]!));
    exp = { kind: 'error', section };
  } else {
    let typed: TypedValue;
    try {
      typed = parseTypedLiteral(section.text);
    } catch (e) {
      return { id, run: async () => fail(`harness: cannot parse expected value: ${firstLine((e as Error).message)}`) };
    }
    const tfeat = typeFeature(typed.type);
    if (tfeat) return skip(pseudo(tfeat));
    if (needsUint64(typed.value)) return skip(pseudo('type:UINT64'));
    if (DML_RE.test(tc.query)) {
      // DML on a table with INT32/UINT32/UINT64/FLOAT columns tests those
      // types' semantics (coercion, overflow): BigQuery tables cannot have them.
      const allRows = typed.type.kind === 'struct' ? typed.type.fields[1]?.type : undefined;
      const internal = allRows ? [...internalScalars(allRows)] : [];
      if (internal.length > 0) return skip(pseudo(internal[0]!));
      // A table the DML leaves with a NULL array element: BigQuery refuses the write.
      const after = typed.value.k === 'struct' ? typed.value.fields[1] : undefined;
      const rowsAfter = after?.k === 'array' ? after.elems : [];
      exp = rowsAfter.some((r) => r.k === 'struct' && r.fields.some(hasNullElement))
        ? { kind: 'error', section, typed, adjusted: 'DML writes an ARRAY with a NULL element (BigQuery: "Array cannot have a null element")' }
        : { kind: 'dml', section, typed };
    } else {

      const adj = bigQueryAdjustment(typed) ?? safeRefusedAdjustment(tc.query);
      // A FLOAT (float32) table column is FLOAT64 in BigQuery: where the reference widened its values to
      // DOUBLE, they compare within float32 precision.
      const float32 = referenced.some((p) => p.kind === 'table' && p.contents && internalScalars(p.contents.type).has('type:FLOAT32'));
      const t = float32 ? { ...typed, value: float32Tolerant(typed.value) } : typed;
      exp = adj ? { kind: 'error', section, typed: t, adjusted: adj } : { kind: 'rows', section, typed: t };
    }
  }
  return { id, run: (ctx) => runCase(ctx, tc, index, tf, state, referenced, exp) };
}

function buildQuery(tc: TestCase, tf: TestFile, referenced: Prep[]): string {
  const temps = referenced.filter((p) => p.kind === 'temp_function');
  // keep the file's declaration order (a function may call an earlier one)
  temps.sort((a, b) => a.block.line - b.block.line);
  const prelude = temps.map((p) => `${p.block.sql.replace(/;\s*$/, '')};\n`).join('');
  return prelude + tc.query;
}

async function evalParameters(ctx: RunContext, tc: TestCase, tf: TestFile, defaultDataset: { projectId: string; datasetId: string }): Promise<QueryParameter[]> {
  if (!tc.parameters) return [];
  const list = parseParameterList(tc.parameters);
  if (list.length === 0) return [];
  const sql = 'SELECT ' + list.map((p, i) => `${p.expr} AS p${i}`).join(', ');
  const run = (query: string) => ctx.client.query(GOOGLESQL_PROJECT, { query, defaultDataset, connectionProperties: timeZoneProps(tf) });
  let res;
  try {
    res = await run(sql);
  } catch (e) {
    // A query result cannot hold an array with NULL elements, but an array
    // parameter can: read each parameter alone, such arrays as arrays of structs.
    if (!/Array cannot have a null element/.test(errorSummary(e))) throw new ParamError(`parameter evaluation (${sql.slice(0, 80)}): ${errorSummary(e)}`);
    return Promise.all(list.map((p) => evalOneParameter(run, p)));
  }
  const cells = res.rows[0]?.f ?? [];
  const params = list.map((p, i) => {
    const f = res.fields[i];
    if (!f) throw new ParamError(`parameter evaluation returned ${res.fields.length} columns for ${list.length} parameters`);
    return { name: p.name, parameterType: paramTypeOfField(f), parameterValue: paramValueOfCell(f, cells[i]?.v) };
  });
  // A result returns a NULL array as [] (as the service does); a parameter can be a NULL
  // array (no arrayValues): ask which of the empty ones are NULL.
  return Promise.all(
    params.map(async (q, i) => {
      if (q.parameterType.type !== 'ARRAY' || (q.parameterValue.arrayValues?.length ?? 0) > 0) return q;
      const r = await run(`SELECT (${list[i]!.expr}) IS NULL AS n`).catch((e: unknown) => {
        throw new ParamError(`parameter evaluation of ${q.name} IS NULL: ${errorSummary(e)}`);
      });
      const isNull = String(r.rows[0]?.f?.[0]?.v) === 'true';
      return isNull ? { ...q, parameterValue: {} } : q;
    }),
  );
}

type QueryRunner = (query: string) => Promise<{ fields: RestField[]; rows: Array<{ f?: Array<{ v?: unknown }> }> }>;

async function evalOneParameter(run: QueryRunner, p: { name: string; expr: string }): Promise<QueryParameter> {
  const plain = `SELECT ${p.expr} AS p`;
  try {
    const res = await run(plain);
    const f = res.fields[0]!;
    return { name: p.name, parameterType: paramTypeOfField(f), parameterValue: paramValueOfCell(f, res.rows[0]?.f?.[0]?.v) };
  } catch (e) {
    if (!/Array cannot have a null element/.test(errorSummary(e))) throw new ParamError(`parameter evaluation (${plain.slice(0, 80)}): ${errorSummary(e)}`);
  }
  const wrapped = `SELECT ARRAY(SELECT AS STRUCT e AS v FROM UNNEST(${p.expr}) AS e WITH OFFSET o ORDER BY o) AS p`;
  let res;
  try {
    res = await run(wrapped);
  } catch (e) {
    throw new ParamError(`parameter evaluation (${wrapped.slice(0, 80)}): ${errorSummary(e)}`);
  }
  const elem = res.fields[0]?.fields?.[0];
  if (!elem) throw new ParamError(`parameter evaluation of ${p.name}: no element type`);
  const structs = res.rows[0]?.f?.[0]?.v;
  const items = Array.isArray(structs) ? (structs as Array<{ v?: { f?: Array<{ v?: unknown }> } }>) : [];
  return {
    name: p.name,
    parameterType: { type: 'ARRAY', arrayType: paramTypeOfField(elem) },
    parameterValue: { arrayValues: items.map((it) => paramValueOfCell(elem, it.v?.f?.[0]?.v)) },
  };
}

class ParamError extends Error {}

function errorOutcome(exp: Expectation, e: unknown): Outcome {
  const msg = e instanceof Error ? e.message : String(e);
  const expectedMsg = exp.section.errorMessage ?? '';
  const matched = expectedMsg !== '' && normalizeMsg(msg).includes(normalizeMsg(expectedMsg));
  return {
    status: 'pass',
    errorExpected: true,
    errorMessageMatched: exp.adjusted ? undefined : matched,
    ...(exp.adjusted ? { adjusted: exp.adjusted } : {}),
  };
}

/**
 * A recursive CTE whose recursion the reference marks non-deterministic (RAND in the recursive term) may run
 * past BigQuery's limit of 500 iterations, where the service fails the query (recursive-ctes page,
 * iteration limit); the reference has no limit. Such a run is the service's answer too, so it passes as
 * `adjusted`; any other error, or a result, is compared as usual.
 */
function iterationLimitOutcome(exp: Expectation, query: string, e: unknown): Outcome | undefined {
  if (!exp.section.nondeterministic || !/\bWITH\s+RECURSIVE\b/i.test(query)) return undefined;
  const msg = e instanceof Error ? e.message : String(e);
  if (!/Recursive query exceeded the maximum number of iterations \(500\)/.test(msg)) return undefined;
  return { status: 'pass', adjusted: 'a random recursion reached the 500-iteration limit of recursive CTEs' };
}

function normalizeMsg(s: string): string {
  return s.replace(/\s+/g, ' ').replace(/\s*\[at \d+:\d+\]$/, '').trim().toLowerCase();
}

async function runCase(ctx: RunContext, tc: TestCase, index: number, tf: TestFile, state: FileState, referenced: Prep[], exp: Expectation): Promise<Outcome> {
  for (const p of referenced) {
    if (p.state.status === 'failed') return fail(`prepare failed: ${p.name}: ${p.state.cause ?? ''}`);
  }
  const ds = datasetName(state, ctx);
  let defaultDataset = { projectId: GOOGLESQL_PROJECT, datasetId: ds };
  const query = buildQuery(tc, tf, referenced);
  let params: QueryParameter[];
  try {
    params = await evalParameters(ctx, tc, tf, defaultDataset);
  } catch (e) {
    return fail(e instanceof ParamError ? e.message : errorSummary(e));
  }
  if (DML_RE.test(tc.query)) {
    // DML mutates (even when an error is expected, the emulator may not fail):
    // run it on copies of the tables it names, in a dataset of its own.
    const scratch = `${ds}_dml${index}`;
    try {
      await ctx.client.ensureDataset(GOOGLESQL_PROJECT, scratch, { isCaseInsensitive: true });
      for (const p of referenced.filter((r) => r.kind === 'table')) {
        await ctx.client.query(GOOGLESQL_PROJECT, {
          query: `CREATE TABLE \`${GOOGLESQL_PROJECT}.${scratch}.${p.name}\` AS SELECT * FROM \`${GOOGLESQL_PROJECT}.${ds}.${p.name}\``,
        });
      }
    } catch (e) {
      return fail(`DML scratch copy: ${errorSummary(e)}`);
    }
    defaultDataset = { projectId: GOOGLESQL_PROJECT, datasetId: scratch };
  }
  let res;
  try {
    res = await ctx.client.query(GOOGLESQL_PROJECT, { query, defaultDataset, queryParameters: params, connectionProperties: timeZoneProps(tf) });
  } catch (e) {
    if (exp.kind === 'error') return errorOutcome(exp, e);
    const limit = iterationLimitOutcome(exp, tc.query, e);
    if (limit) return limit;
    if (e instanceof RestError || e instanceof Error) return fail(`query error: ${errorSummary(e)}`, e.message);
    return fail(`query error: ${String(e)}`);
  }
  if (exp.kind === 'error') {
    const what = exp.adjusted ? `BigQuery would fail: ${exp.adjusted}` : `expected ${exp.section.text.split('\n')[0]}`;
    return fail(`expected an error, got success`, `${what}; got ${res.rows.length} row(s)`, exp.adjusted ? { adjusted: exp.adjusted } : {});
  }
  const typed = exp.typed!;
  if (exp.kind === 'rows') {
    const cols = columnTypes(typed.type);
    if (!cols) return fail(`harness: expected value is not a table (${typeToString(typed.type)})`);
    const sd = compareSchema(cols, res.fields);
    if (sd) return fail(schemaCause(sd), sd);
    const expRows = expectedRows(typed);
    if (exp.section.nondeterministic) {
      // Compare all that is deterministic: first as it stands, then with row and array
      // element order free; only a result that differs even then is left to its shape.
      if (expRows.rows.length !== res.rows.length) return fail('row count mismatch', `expected ${expRows.rows.length}, got ${res.rows.length} (non-deterministic result)`);
      if (compareTable(expRows.rows, expRows.ordered, res.fields, res.rows).status === 'pass') return { status: 'pass', nondeterministic: 'exact' };
      const loose = compareTable(expRows.rows.map((r) => r.map(orderFree)), false, res.fields, res.rows);
      if (loose.status === 'pass') return { status: 'pass', nondeterministic: 'unordered' };
      // Left to its shape: still compare every column on its own (as a multiset, arrays order-free) and
      // the columns that agree together, so only the columns whose values vary go uncompared.
      const cols = deterministicColumns(expRows.rows.map((r) => r.map(orderFree)), res.fields, res.rows);
      return {
        status: 'pass', shapeOnly: true, nondeterministic: 'shape', shapeWhy: nondeterministicWhy(tc.query),
        shapeColumns: { compared: cols.same.length, of: res.fields.length, differing: cols.differing },
        ...(loose.detail ? { detail: loose.detail } : {}),
      };
    }
    return compareTable(expRows.rows, expRows.ordered, res.fields, res.rows);
  }
  // DML: STRUCT<num_rows_modified INT64, all_rows ARRAY<>>
  if (typed.value.k !== 'struct' || typed.type.kind !== 'struct') return fail('harness: DML expectation is not a STRUCT');
  const [numVal, allRows] = typed.value.fields;
  const allType = typed.type.fields[1]?.type;
  if (numVal?.k === 'int' && res.numDmlAffectedRows !== undefined && BigInt(res.numDmlAffectedRows) !== numVal.v) {
    return fail('DML affected-row count mismatch', `expected ${numVal.v}, got ${res.numDmlAffectedRows}`);
  }
  if (numVal?.k === 'int' && res.numDmlAffectedRows === undefined) return fail('DML answer lacks numDmlAffectedRows');
  const target = dmlTarget(tc.query);
  if (!target || !allRows || !allType) return fail('harness: cannot determine the DML target table');
  let after;
  try {
    after = await ctx.client.query(GOOGLESQL_PROJECT, { query: `SELECT * FROM \`${GOOGLESQL_PROJECT}.${defaultDataset.datasetId}.${target}\``, defaultDataset, connectionProperties: timeZoneProps(tf) });
  } catch (e) {
    return fail(`reading the table after DML: ${errorSummary(e)}`);
  }
  const tv: TypedValue = { type: allType, value: allRows };
  const cols = columnTypes(allType);
  if (cols) {
    const sd = compareSchema(cols, after.fields);
    if (sd) return fail(`table after DML: ${schemaCause(sd)}`, sd);
  }
  const er = expectedRows(tv);
  // table contents have no order
  return compareTable(er.rows, false, after.fields, after.rows, 'table after DML: ');
}

/** `v` with each FLOAT64 value that is exactly a float32 one compared within float32 precision. */
function float32Tolerant(v: Val): Val {
  if (v.k === 'float') return v.rel === undefined && Number.isFinite(v.v) && Math.fround(v.v) === v.v && !Number.isInteger(v.v) ? { ...v, rel: 2 ** -22 } : v;
  if (v.k === 'array') return { ...v, elems: v.elems.map(float32Tolerant) };
  if (v.k === 'struct') return { ...v, fields: v.fields.map(float32Tolerant) };
  return v;
}

/** `v` with every nested array compared as a multiset. */
function orderFree(v: Val): Val {
  if (v.k === 'array') return { ...v, ordered: false, elems: v.elems.map(orderFree) };
  if (v.k === 'struct') return { ...v, fields: v.fields.map(orderFree) };
  return v;
}

// What makes a result's values (not only its order) depend on the run, first match wins.
const NONDETERMINISM: [RegExp, string][] = [
  [/\b(RAND|GENERATE_UUID|NEW_UUID)\s*\(/i, 'random values'],
  [/\bTABLESAMPLE\b/i, 'sampled rows'],
  [/\b(APPROX_\w+|HLL_COUNT\.\w+|KLL_QUANTILES\.\w+)\s*\(/i, 'approximate aggregate'],
  [/\bANY_VALUE\s*\(/i, 'ANY_VALUE picks any row of the group'],
  [/\b(STRING_AGG|ARRAY_CONCAT_AGG)\s*\(/i, 'aggregate that concatenates in input order'],
  [/\b(FIRST_VALUE|LAST_VALUE|NTH_VALUE|LAG|LEAD|ROW_NUMBER|PERCENTILE_DISC|MIN_BY|MAX_BY)\s*\(/i, 'a function that picks a row among ties'],
  [/\bLIMIT\b/i, 'LIMIT without a total order picks any rows'],
  [/\bARRAY_AGG\s*\(/i, 'ARRAY_AGG with LIMIT or of ties'],
];

/**
 * The columns of a non-deterministic result that match the expectation on their own, as multisets, and
 * (names of) those that differ. The matching columns are also checked together, rows kept whole: if they
 * only match one by one, the columns are reported as differing from the first that breaks the joint match.
 */
export function deterministicColumns(exp: Val[][], fields: RestField[], rows: Parameters<typeof decodeRows>[1]): { same: number[]; differing: string[] } {
  let act: Val[][];
  try {
    act = decodeRows(fields, rows);
  } catch {
    return { same: [], differing: fields.map((f) => f.name) };
  }
  const project = (t: Val[][], cs: number[]) => t.map((r) => cs.map((c) => r[c]!));
  const same: number[] = [];
  for (let c = 0; c < fields.length; c++) {
    // Each column alone, then together with those kept so far: a column joins only if the rows still match whole.
    if (compareRows(project(exp, [c]), project(act, [c]), false) !== null) continue;
    if (compareRows(project(exp, [...same, c]), project(act, [...same, c]), false) === null) same.push(c);
  }
  return { same, differing: fields.filter((_, c) => !same.includes(c)).map((f) => f.name) };
}

/** A reason for a non-deterministic result that cannot be compared beyond its shape. */
export function nondeterministicWhy(query: string): string {
  for (const [re, why] of NONDETERMINISM) if (re.test(query)) return why;
  return 'other (order among ties inside values)';
}

function compareTable(exp: Val[][], ordered: boolean, fields: RestField[], rows: Parameters<typeof decodeRows>[1], prefix = ''): Outcome {
  let act: Val[][];
  try {
    act = decodeRows(fields, rows);
  } catch (e) {
    return fail(`${prefix}undecodable result cell: ${firstLine((e as Error).message)}`);
  }
  const d = compareRows(exp, act, ordered);
  if (!d) return { status: 'pass' };
  const kind = d.startsWith('row count') ? 'row count mismatch' : d.startsWith('rows (any order)') ? 'row set mismatch (unordered)' : d.startsWith('kind') ? 'value type mismatch' : 'value mismatch';
  return fail(prefix + kind, d);
}

/** Groups schema differences by kind (the column position/name is in the detail). */
export function schemaCause(sd: string): string {
  if (sd.startsWith('column count')) return 'column count mismatch';
  if (sd.startsWith('column name')) return 'column name mismatch';
  const m = /: (expected .*)$/.exec(sd);
  return `column type mismatch: ${m ? m[1] : sd}`;
}
