// Table-valued functions in FROM: SQL table functions (the body analyzed with
// its parameters bound), the built-ins written as rewrites (RANGE_SESSIONIZE,
// GAP_FILL, VECTOR_SEARCH) and ML.* stubs.
import { collationOf, isBinaryCollation } from '../functions/collation.js';
import type { Interval, Value } from '../types/values.js';
import type * as A from '../../grammar/ast.js';
import { T, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import type { Analyzer, CteDef } from './context.js';
import { sqlError } from './errors.js';
import { coerce, literal, originOf } from './coercion.js';
import { resolveExpr, typeOf } from './expr.js';
import { constantValue, resolveTableRef, tableIdOf } from './names.js';
import { indexPopulated, vectorIndexesOf } from './search-index.js';
import type { Expr, Rel } from './resolved.js';
import { Scope, colRef } from './scope.js';
import { Origin, canCoerce } from './types.js';
import { findUdf, inRoutineBody } from './sql-udfs.js';
import { changeHistoryTvf } from './change-history.js';
import { refuseUnservedFunction } from './unserved-functions.js';
import { type Leaf, rangeOver } from './from.js';
import { type RelOut, project, resolveQuery } from './query.js';

/** SQL table functions: the body query is analyzed with its parameters bound to the (constant) arguments. */
export function resolveTvf(an: Analyzer, item: A.TvfRef, scope: Scope): Leaf {
  const fname = item.name.join('.').toUpperCase();
  if (fname.startsWith('ML.')) return mlStub(an, item, fname, scope);
  if (fname === 'RANGE_SESSIONIZE') return rangeSessionize(an, item, scope);
  if (fname === 'GAP_FILL') return gapFill(an, item, scope);
  if (fname === 'VECTOR_SEARCH') return vectorSearch(an, item, scope);
  if (fname === 'APPENDS' || fname === 'CHANGES') return changeHistoryTvf(an, item, fname);
  const def = findUdf(an, item.name);
  if (!def) refuseUnservedFunction(item.name, item.args, item.loc);
  if (!def || !def.tableFunction || !def.query) throw sqlError(`Table-valued function not found: ${item.name.join('.')}`, item.loc);
  if (item.args.length !== def.params.length) {
    throw sqlError(`Number of arguments does not match for table-valued function ${item.name.join('.')}`, item.loc);
  }
  const params = new Map<string, Expr>();
  // TABLE parameters bind like CTEs of the body (one evaluation however often the body reads them).
  const tableParams: { id: number; name: string; plan: Rel; def: CteDef }[] = [];
  def.params.forEach((p, i) => {
    const a = item.args[i]!;
    const isTableParam = p.type.kind === 'TableType' || p.type.kind === 'AnyTableType';
    if (isTableParam) {
      let out: RelOut;
      if (a.kind === 'TableArg') {
        const r = resolveTableRef(an, { kind: 'TableRef', loc: a.loc, path: a.path }, undefined);
        out = { rel: r.rel, names: r.names, isValueTable: r.isValueTable };
      } else if (a.kind === 'Query') out = resolveQuery(an, a, undefined);
      else if (a.kind === 'ScalarSubquery') out = resolveQuery(an, a.query, undefined);
      else throw sqlError(`Table-valued function ${item.name.join('.')} argument ${p.name} must be a TABLE or a subquery`, a.loc);
      const id = an.newId();
      const columns = out.rel.columns.map((c, k) => ({ ...c, name: out.names[k] ?? c.name }));
      tableParams.push({ id, name: p.name, plan: out.rel, def: { id, name: p.name, columns, isValueTable: out.isValueTable } });
      return;
    }
    if (a.kind === 'TableArg' || a.kind === 'Query' || a.kind === 'ModelArg') throw sqlError('TABLE and MODEL arguments of table-valued functions are not supported', a.loc);
    let v = resolveExpr(an, a, { scope, clause: 'table-valued function argument' });
    // collation-concepts.md, Limitations: table functions can't take collated arguments.
    const c = collationOf(v.type);
    if (c && !isBinaryCollation(c)) throw sqlError(`Collation '${c}' on argument of TVF call is not allowed`, a.loc);
    if (p.type.kind !== 'AnyType' && p.type.kind !== 'TableType') {
      const t = typeOf(p.type);
      // As a scalar function's arguments: a value of a type that does not coerce is no match (a STRING literal is no INT64).
      if (!typeEquals(v.type, t) && !canCoerce(v.type, t, originOf(v))) {
        throw sqlError(`No matching signature for table-valued function ${item.name.join('.')} for argument ${p.name} of type ${typeToSql(t)}: got ${typeToSql(v.type)}`, a.loc);
      }
      if (!typeEquals(v.type, t)) v = coerce(v, t);
    }
    params.set(p.name.toLowerCase(), v);
  });
  const savedCtes = an.ctes.splice(0);
  if (tableParams.length) an.ctes.push(new Map(tableParams.map((t) => [t.name.toLowerCase(), t.def])));
  (an.tvfParams as Map<string, Expr>[]).push(params);
  try {
    let out = inRoutineBody(an, def, () => resolveQuery(an, def.query!, undefined));
    refuseUnnamedColumns(out, def.query.loc);
    if (def.returns?.kind === 'TableType') out = declaredTable(an, out, def.returns, item);
    const alias = item.alias ?? item.name[item.name.length - 1]!.split('.').pop()!;
    const rv = rangeOver(alias, out.rel, out.names);
    const rel: Rel = tableParams.length ? { kind: 'with', ctes: tableParams.map((t) => ({ id: t.id, name: t.name, plan: t.plan })), body: out.rel, columns: out.rel.columns } : out.rel;
    return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
  } finally {
    (an.tvfParams as Map<string, Expr>[]).pop();
    an.ctes.push(...savedCtes);
  }
}

/**
 * CREATE TABLE FUNCTION: the body's output is checked when the function is made, as the service does, with each
 * scalar parameter bound to a NULL of its type: every column named, and as RETURNS TABLE<...> declares it.
 * A body that cannot be analyzed yet (a table made later, TABLE or ANY TYPE parameters) is left to the call.
 */
export function checkDeclaredTable(an: Analyzer, st: A.CreateFunctionStmt): void {
  if (!st.tableFunction || !st.query) return;
  if (st.params.some((p) => p.type.kind === 'AnyType' || p.type.kind === 'TableType' || p.type.kind === 'AnyTableType')) return;
  const params = new Map<string, Expr>(st.params.map((p) => [p.name.toLowerCase(), literal(typeOf(p.type), null)]));
  const savedCtes = an.ctes.splice(0);
  (an.tvfParams as Map<string, Expr>[]).push(params);
  let out: RelOut;
  try {
    out = resolveQuery(an, st.query, undefined);
  } catch {
    return;
  } finally {
    (an.tvfParams as Map<string, Expr>[]).pop();
    an.ctes.push(...savedCtes);
  }
  refuseUnnamedColumns(out, st.query.loc);
  if (st.returns?.kind === 'TableType') declaredTable(an, out, st.returns, { kind: 'TvfRef', loc: st.loc, name: st.name, args: [] });
}

/** data-definition-language.md, CREATE TABLE FUNCTION: the SQL query must include names for all columns. */
function refuseUnnamedColumns(out: RelOut, loc: A.Loc): void {
  if (out.isValueTable) return;
  const i = out.names.findIndex((n) => !n);
  if (i >= 0) throw sqlError(`CREATE TABLE FUNCTION columns must be named, but column ${i + 1} has no name`, loc);
}

/** A table function's body output as its RETURNS TABLE<...> declares it: each column by name, coerced to the declared type (ZetaSQL's wording). */
function declaredTable(an: Analyzer, out: RelOut, decl: A.TableTypeNode, item: A.TvfRef): RelOut {
  const exprs = decl.columns.map((c) => {
    const k = out.names.findIndex((n) => n.toLowerCase() === c.name.toLowerCase());
    if (k < 0) throw sqlError(`Required column name ${c.name} not returned from SQL body of CREATE TABLE FUNCTION statement`, item.loc);
    // A declared name the body returns twice has no one column to take (the reference's rule); other columns the body
    // returns beyond the declared ones are dropped by this projection, as the reference's is.
    if (out.names.some((n, i) => i !== k && n.toLowerCase() === c.name.toLowerCase())) {
      throw sqlError(`Required column name ${c.name} returned multiple times from SQL body of CREATE TABLE FUNCTION statement`, item.loc);
    }
    const t = typeOf(c.type);
    const e = colRef(out.rel.columns[k]!);
    // collation-concepts.md, Limitations: no collated output column when a result schema is declared.
    const coll = collationOf(e.type);
    if (coll && !isBinaryCollation(coll)) {
      throw sqlError(`Collation '${coll}' on output column ${c.name} is not allowed when an explicit result schema is present`, item.loc);
    }
    if (typeEquals(e.type, t)) return e;
    if (!canCoerce(e.type, t, Origin.Column)) {
      throw sqlError(`Column ${c.name} for the output table of a CREATE TABLE FUNCTION statement has type ${typeToSql(t)}, but the SQL body provides incompatible type ${typeToSql(e.type)} for this column`, item.loc);
    }
    return coerce(e, t);
  });
  const names = decl.columns.map((c) => c.name);
  return { rel: project(an, out.rel, exprs, names), names, isValueTable: false };
}

/** The rows of a TABLE / subquery argument of a table function. */
function tableArgument(an: Analyzer, a: A.TvfRef['args'][number], what: string): RelOut {
  if (a.kind === 'TableArg') {
    const r = resolveTableRef(an, { kind: 'TableRef', loc: a.loc, path: a.path }, undefined);
    return { rel: r.rel, names: r.names, isValueTable: r.isValueTable };
  }
  if (a.kind === 'Query') return resolveQuery(an, a, undefined);
  if (a.kind === 'ScalarSubquery') return resolveQuery(an, a.query, undefined);
  throw sqlError(`${what} must be a TABLE or a subquery`, a.loc);
}

/**
 * RANGE_SESSIONIZE(TABLE t, 'range_column', ['partition', ...] [, 'MEETS' | 'OVERLAPS']):
 * the input rows plus `session_range`, the union of the ranges of the session
 * (within the partition) that each row belongs to. Sessions join ranges that
 * meet or overlap (MEETS, the default) or only overlap (OVERLAPS); a NULL
 * bound is unbounded; a NULL range is in no session. Planned as a gaps-and-
 * islands window query over the input bound as a CTE.
 */
function rangeSessionize(an: Analyzer, item: A.TvfRef, scope: Scope): Leaf {
  const fn = 'RANGE_SESSIONIZE';
  if (item.args.length < 3 || item.args.length > 4) throw sqlError(`Number of arguments does not match for table-valued function ${fn}`, item.loc);
  const input = tableArgument(an, item.args[0]!, `${fn} argument 1`);
  const constant = (i: number, t: SqlType, what: string): Value => {
    const a = item.args[i]!;
    if (a.kind === 'TableArg' || a.kind === 'Query' || a.kind === 'ModelArg') throw sqlError(`${fn} ${what} must be a ${typeToSql(t)} literal`, a.loc);
    const e = resolveExpr(an, a, { scope, clause: 'table-valued function argument' });
    // `[]` is an empty array whatever element type it was given
    const emptyArray = e.kind === 'literal' && t.kind === 'ARRAY' && e.type.kind === 'ARRAY' && Array.isArray(e.value) && e.value.length === 0;
    if (e.kind !== 'literal' || (!typeEquals(e.type, t) && !emptyArray) || e.value === null) throw sqlError(`${fn} ${what} must be a non-NULL ${typeToSql(t)} literal`, a.loc);
    return e.value;
  };
  const lower = input.names.map((n) => n.toLowerCase());
  const column = (name: string, what: string): string => {
    const i = lower.indexOf(name.toLowerCase());
    if (i < 0) throw sqlError(`${fn} ${what} ${name} is not a column of the input table`, item.loc);
    return '`' + input.names[i]!.replace(/[`\\]/g, '\\$&') + '`';
  };
  const rangeName = constant(1, T.STRING, 'range_column') as string;
  const rc = column(rangeName, 'range_column');
  if (input.rel.columns[lower.indexOf(rangeName.toLowerCase())]!.type.kind !== 'RANGE') {
    throw sqlError(`${fn} range_column ${rangeName} must have a RANGE type`, item.args[1]!.loc);
  }
  const parts = (constant(2, { kind: 'ARRAY', element: T.STRING }, 'partitioning_columns') as string[]).map((c) => column(c, 'partitioning column'));
  const option = item.args.length === 4 ? (constant(3, T.STRING, 'sessionize_option') as string).toUpperCase() : 'MEETS';
  if (option !== 'MEETS' && option !== 'OVERLAPS') throw sqlError(`${fn} sessionize_option must be 'MEETS' or 'OVERLAPS'`, item.args[3]!.loc);
  // A row starts a session when its start is past the end of every earlier
  // range of the partition (ordered by start); MEETS also joins start = end.
  const partition = [...parts, `${rc} IS NULL`].join(', ');
  const after = option === 'MEETS' ? '>' : '>=';
  const sql = `SELECT * EXCEPT (__rs_pcnt, __rs_pinf, __rs_pmax, __rs_new, __rs_sid),
      IF(${rc} IS NULL, NULL, RANGE(
        IF(LOGICAL_OR(RANGE_START(${rc}) IS NULL) OVER __rs_s, NULL, MIN(RANGE_START(${rc})) OVER __rs_s),
        IF(LOGICAL_OR(RANGE_END(${rc}) IS NULL) OVER __rs_s, NULL, MAX(RANGE_END(${rc})) OVER __rs_s))) AS session_range
    FROM (
      SELECT *, SUM(__rs_new) OVER (PARTITION BY ${partition} ORDER BY RANGE_START(${rc}), RANGE_END(${rc}) ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS __rs_sid
      FROM (
        SELECT *, CASE WHEN __rs_pcnt = 0 THEN 1 WHEN __rs_pinf OR RANGE_START(${rc}) IS NULL THEN 0
                       WHEN RANGE_START(${rc}) ${after} __rs_pmax THEN 1 ELSE 0 END AS __rs_new
        FROM (
          SELECT *, COUNT(*) OVER __rs_prev AS __rs_pcnt,
                 LOGICAL_OR(RANGE_END(${rc}) IS NULL) OVER __rs_prev AS __rs_pinf,
                 MAX(RANGE_END(${rc})) OVER __rs_prev AS __rs_pmax
          FROM __rs_input
          WINDOW __rs_prev AS (PARTITION BY ${partition} ORDER BY RANGE_START(${rc}), RANGE_END(${rc}) ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING))))
    WINDOW __rs_s AS (PARTITION BY ${partition}, __rs_sid)`;
  return resolveRewrittenTvf(an, item, input, sql, '__rs_input', 'range_sessionize');
}

/**
 * GAP_FILL(TABLE t | (subquery), ts_column, bucket_width [, partitioning_columns => [...]]
 * [, value_columns => [(col, 'null'|'locf'|'linear'), ...]] [, origin => x] [, ignore_null_values => b]):
 * one row per grid point (origin + k * bucket_width) between the first and the
 * last time point of each partition. A value is the input row's at exactly that
 * point, or else filled: NULL, the last observed value (locf) or the linear
 * interpolation of its neighbours. Planned as a window query over the input
 * rows unioned with the grid points, ordered by time (input rows first at a tie).
 */
function gapFill(an: Analyzer, item: A.TvfRef, scope: Scope): Leaf {
  const fn = 'GAP_FILL';
  if (!item.args.length) throw sqlError(`Number of arguments does not match for table-valued function ${fn}`, item.loc);
  const input = tableArgument(an, item.args[0]!, `${fn} argument 1`);
  const named = new Map<string, A.Expr>();
  const positional: A.Expr[] = [];
  for (const a of item.args.slice(1)) {
    if (a.kind === 'TableArg' || a.kind === 'Query' || a.kind === 'ModelArg') throw sqlError(`${fn} takes a table only as its first argument`, a.loc);
    if (a.kind === 'NamedArgument') {
      const n = a.name.toLowerCase();
      if (named.has(n)) throw sqlError(`Duplicate named argument ${a.name} in ${fn}`, a.loc);
      named.set(n, a.value);
    } else if (named.size) throw sqlError(`Positional argument follows named argument in ${fn}`, a.loc);
    else positional.push(a);
  }
  const order = ['ts_column', 'bucket_width', 'partitioning_columns', 'value_columns', 'origin', 'ignore_null_values'];
  if (positional.length > order.length) throw sqlError(`Number of arguments does not match for table-valued function ${fn}`, item.loc);
  positional.forEach((a, i) => {
    if (named.has(order[i]!)) throw sqlError(`Named argument ${order[i]} of ${fn} is also given positionally`, a.loc);
    named.set(order[i]!, a);
  });
  for (const n of named.keys()) if (!order.includes(n)) throw sqlError(`Unknown named argument ${n} of ${fn}`, item.loc);
  for (const n of ['ts_column', 'bucket_width']) if (!named.has(n)) throw sqlError(`${fn} requires argument ${n}`, item.loc);
  const constant = (n: string): { value: Value; type: SqlType; loc: A.Loc } => {
    const a = named.get(n)!;
    const e = resolveExpr(an, a, { scope, clause: 'table-valued function argument' });
    const v = constantValue(e);
    if (v === undefined) throw sqlError(`${fn} argument ${n} must be a constant`, a.loc);
    if (v === null) throw sqlError(`${fn} argument ${n} must not be NULL`, a.loc);
    return { value: v, type: e.type, loc: a.loc };
  };
  const lower = input.names.map((c) => c.toLowerCase());
  const q = (name: string): string => '`' + name.replace(/[`\\]/g, '\\$&') + '`';
  const column = (name: string, what: string, loc: A.Loc): number => {
    const i = lower.indexOf(name.toLowerCase());
    if (i < 0) throw sqlError(`${fn} ${what} ${name} is not a column of the input table`, loc);
    return i;
  };

  const ts = constant('ts_column');
  if (ts.type.kind !== 'STRING') throw sqlError(`${fn} ts_column must be a STRING`, ts.loc);
  const tsIdx = column(ts.value as string, 'ts_column', ts.loc);
  const tsType = input.rel.columns[tsIdx]!.type;
  if (tsType.kind !== 'DATE' && tsType.kind !== 'DATETIME' && tsType.kind !== 'TIMESTAMP') {
    throw sqlError(`${fn} ts_column ${input.names[tsIdx]} must be of type DATE, DATETIME or TIMESTAMP, not ${typeToSql(tsType)}`, ts.loc);
  }
  const bw = constant('bucket_width');
  if (bw.type.kind !== 'INTERVAL') throw sqlError(`${fn} bucket_width must be an INTERVAL`, bw.loc);
  const iv = bw.value as Interval;
  // The grid is kept in integer steps of the time column's unit (days for DATE,
  // microseconds otherwise); a DATE grid may instead step in months (as DATE_BUCKET).
  const monthly = tsType.kind === 'DATE' && iv.months !== 0;
  if (iv.months !== 0 && (!monthly || iv.days !== 0 || iv.micros !== 0n)) {
    throw sqlError(`${fn} bucket_width with a MONTH, QUARTER or YEAR part is only supported alone, for a DATE ts_column`, bw.loc);
  }
  let width: bigint;
  if (tsType.kind === 'DATE') {
    if (iv.micros !== 0n) throw sqlError(`${fn} bucket_width for a DATE column must be a whole number of days`, bw.loc);
    width = BigInt(monthly ? iv.months : iv.days);
  } else width = BigInt(iv.days) * 86_400_000_000n + iv.micros;
  if (width <= 0n) throw sqlError(`${fn} bucket_width must be positive`, bw.loc);
  let origin: bigint = tsType.kind === 'DATE' ? BigInt(Math.floor(Date.UTC(1950, 0, 1) / 86_400_000)) : BigInt(Date.UTC(1950, 0, 1)) * 1000n;
  if (named.has('origin')) {
    const o = constant('origin');
    if (o.type.kind !== tsType.kind) throw sqlError(`${fn} origin must have the type of ts_column (${typeToSql(tsType)}), not ${typeToSql(o.type)}`, o.loc);
    origin = typeof o.value === 'number' ? BigInt(o.value) : (o.value as bigint);
  }
  let parts: number[] = [];
  if (named.has('partitioning_columns')) {
    const p = constant('partitioning_columns');
    // An empty array literal (`[]`, "zero or more column names") has no element type of its own.
    const empty = Array.isArray(p.value) && p.value.length === 0;
    if (p.type.kind !== 'ARRAY' || (p.type.element.kind !== 'STRING' && !empty)) throw sqlError(`${fn} partitioning_columns must be an ARRAY<STRING>`, p.loc);
    parts = (p.value as string[]).map((c) => column(c, 'partitioning column', p.loc));
  }
  let values: { idx: number; method: 'null' | 'locf' | 'linear' }[];
  if (named.has('value_columns')) {
    const v = constant('value_columns');
    const ok = v.type.kind === 'ARRAY' && v.type.element.kind === 'STRUCT' && v.type.element.fields.length === 2 && v.type.element.fields.every((f) => f.type.kind === 'STRING');
    if (!ok) throw sqlError(`${fn} value_columns must be an ARRAY<STRUCT<STRING, STRING>>`, v.loc);
    values = (v.value as Value[][]).map(([name, method]) => {
      const idx = column(name as string, 'value column', v.loc);
      const m = String(method).toLowerCase();
      if (m !== 'null' && m !== 'locf' && m !== 'linear') throw sqlError(`${fn} gap-filling method must be 'null', 'locf' or 'linear', not '${String(method)}'`, v.loc);
      const t = input.rel.columns[idx]!.type.kind;
      if (m === 'linear' && t !== 'INT64' && t !== 'FLOAT64' && t !== 'NUMERIC' && t !== 'BIGNUMERIC') {
        throw sqlError(`${fn} linear gap filling requires a numeric column; ${input.names[idx]} is ${t}`, v.loc);
      }
      return { idx, method: m };
    });
  } else values = input.names.map((_, idx) => ({ idx, method: 'null' as const })).filter((c) => c.idx !== tsIdx && !parts.includes(c.idx));
  const seen = new Set<number>();
  for (const c of values) {
    if (c.idx === tsIdx || parts.includes(c.idx)) throw sqlError(`${fn} value column ${input.names[c.idx]} is the ts_column or a partitioning column`, item.loc);
    if (seen.has(c.idx)) throw sqlError(`${fn} value column ${input.names[c.idx]} is given more than once`, item.loc);
    seen.add(c.idx);
  }
  let ignoreNulls = true;
  if (named.has('ignore_null_values')) {
    const b = constant('ignore_null_values');
    if (b.type.kind !== 'BOOL') throw sqlError(`${fn} ignore_null_values must be a BOOL`, b.loc);
    ignoreNulls = b.value as boolean;
  }

  const tsc = q(input.names[tsIdx]!);
  const toUnit = tsType.kind === 'DATE' ? `UNIX_DATE(${tsc})` : tsType.kind === 'DATETIME' ? `UNIX_MICROS(TIMESTAMP(${tsc}, 'UTC'))` : `UNIX_MICROS(${tsc})`;
  const fromUnit = (x: string): string => tsType.kind === 'DATE' ? `DATE_FROM_UNIX_DATE(${x})` : tsType.kind === 'DATETIME' ? `DATETIME(TIMESTAMP_MICROS(${x}), 'UTC')` : `TIMESTAMP_MICROS(${x})`;
  // floor((x - origin) / width) with DIV/MOD, exact on INT64 (DIV truncates toward zero)
  const floorIdx = (x: string): string => `(DIV(${x} - ${origin}, ${width}) - IF(MOD(${x} - ${origin}, ${width}) < 0, 1, 0))`;
  const ceilIdx = (x: string): string => `(${floorIdx(x)} + IF(MOD(${x} - ${origin}, ${width}) = 0, 0, 1))`;
  // Monthly DATE grid: bucket k starts at origin + k * width months; the first and last
  // buckets come from DATE_BUCKET (its lower bounds are whole steps from the origin).
  const od = `DATE_FROM_UNIX_DATE(${origin})`;
  const mBucket = (x: string): string => `DATE_BUCKET(DATE_FROM_UNIX_DATE(${x}), INTERVAL ${width} MONTH, ${od})`;
  const mIdx = (x: string): string => `DIV(DATE_DIFF(${mBucket(x)}, ${od}, MONTH), ${width})`;
  const loIdx = monthly ? `(${mIdx('__gf_lo')} + IF(UNIX_DATE(${mBucket('__gf_lo')}) = __gf_lo, 0, 1))` : ceilIdx('__gf_lo');
  const hiIdx = monthly ? mIdx('__gf_hi') : floorIdx('__gf_hi');
  const gridT = monthly ? `UNIX_DATE(DATE_ADD(${od}, INTERVAL __gf_k * ${width} MONTH))` : `${origin} + __gf_k * ${width}`;
  const pcols = parts.map((i) => q(input.names[i]!));
  const vcol = (i: number): string => `__gf_v${i}`;
  const dataSel = [...pcols, `${toUnit} AS __gf_t`, '0 AS __gf_grid', ...values.map((c, k) => `${q(input.names[c.idx]!)} AS ${vcol(k)}`)];
  const gridSel = [...pcols, `${gridT} AS __gf_t`, '1 AS __gf_grid', ...values.map((c, k) => `CAST(NULL AS ${typeToSql(input.rel.columns[c.idx]!.type)}) AS ${vcol(k)}`)];
  const partBy = pcols.length ? `PARTITION BY ${pcols.join(', ')} ` : '';
  const upTo = `(${partBy}ORDER BY __gf_t, __gf_grid ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`;
  const from = `(${partBy}ORDER BY __gf_t, __gf_grid ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)`;
  // Per value column, the middle query keeps the neighbouring observations as STRUCT(t, v):
  // a STRUCT is non-NULL even when its v is NULL ("the last input row" vs "the last non-NULL value").
  const filled = values.map((c, k) => {
    const v = vcol(k);
    const obs = (nonNullOnly: boolean): string => `IF(__gf_grid = 0${nonNullOnly ? ` AND ${v} IS NOT NULL` : ''}, STRUCT(__gf_t AS t, ${v} AS v), NULL)`;
    if (c.method === 'null') return `LAST_VALUE(${obs(false)} IGNORE NULLS) OVER ${upTo} AS __gf_p${k}`;
    const prev = `LAST_VALUE(${obs(ignoreNulls)} IGNORE NULLS) OVER ${upTo} AS __gf_p${k}`;
    if (c.method === 'locf') return prev;
    return `${prev}, FIRST_VALUE(${obs(ignoreNulls)} IGNORE NULLS) OVER ${from} AS __gf_n${k}`;
  });
  const final = (k: number, method: 'null' | 'locf' | 'linear', type: SqlType): string => {
    const p = `__gf_p${k}`, n = `__gf_n${k}`;
    if (method === 'null') return `IF(${p}.t = __gf_t, ${p}.v, NULL)`;
    if (method === 'locf') return `${p}.v`;
    // INT64 is interpolated in FLOAT64 and rounded half away from zero (the documented 77.5 -> 78)
    const calc = type.kind === 'INT64'
      ? `CAST(ROUND(${p}.v + (${n}.v - ${p}.v) * (__gf_t - ${p}.t) / (${n}.t - ${p}.t)) AS INT64)`
      : `${p}.v + (${n}.v - ${p}.v) * CAST(__gf_t - ${p}.t AS ${typeToSql(type)}) / CAST(${n}.t - ${p}.t AS ${typeToSql(type)})`;
    return `CASE WHEN ${p}.t = __gf_t THEN ${p}.v WHEN ${p} IS NULL OR ${n} IS NULL THEN NULL ELSE ${calc} END`;
  };
  const outCols = [`${fromUnit('__gf_t')} AS ${tsc}`, ...pcols, ...values.map((c, k) => `${final(k, c.method, input.rel.columns[c.idx]!.type)} AS ${q(input.names[c.idx]!)}`)];
  const sql = `SELECT ${outCols.join(', ')} FROM (
      SELECT ${[...pcols, '__gf_t', '__gf_grid', ...filled].join(', ')}
      FROM (
        SELECT ${dataSel.join(', ')} FROM __gf_input WHERE ${tsc} IS NOT NULL
        UNION ALL
        SELECT ${gridSel.join(', ')}
        FROM (SELECT ${[...pcols, `MIN(${toUnit}) AS __gf_lo`, `MAX(${toUnit}) AS __gf_hi`].join(', ')} FROM __gf_input WHERE ${tsc} IS NOT NULL${pcols.length ? ` GROUP BY ${pcols.join(', ')}` : ''}),
          UNNEST(GENERATE_ARRAY(${loIdx}, ${hiIdx})) AS __gf_k))
    WHERE __gf_grid = 1`;
  return resolveRewrittenTvf(an, item, input, sql, '__gf_input', 'gap_fill');
}

/**
 * VECTOR_SEARCH(TABLE base | (query), 'column_to_search', TABLE query | (query) [, 'query_column_to_search']
 * [, query_column_to_search => ...] [, top_k => n] [, distance_type => 'EUCLIDEAN'|'COSINE'|'DOT_PRODUCT']
 * [, options => '{"use_brute_force": b, "fraction_lists_to_search": f}']) (search_functions):
 * for each query row, its top_k nearest base rows as (query STRUCT, base STRUCT, distance).
 * The emulator has no approximate index, so the search is always exact (brute force), which the page
 * allows: use_brute_force and fraction_lists_to_search only trade recall for speed on the service.
 * A vector index still matters for one thing: without distance_type, a vector index on the searched
 * column of a TABLE argument gives its distance_type when the index is used: not with use_brute_force, and
 * not while it is not populated (indexPopulated: a table under 10 MB, which every emulator table is).
 * Distances: EUCLIDEAN sqrt(sum (a-b)^2), COSINE 1 - a.b / (|a||b|), DOT_PRODUCT -a.b (smaller is nearer).
 * Ties in distance keep the base rows' order. top_k defaults to 10; a negative top_k returns every row.
 * Planned as a cross join of the numbered rows with a per-query-row ROW_NUMBER.
 */
function vectorSearch(an: Analyzer, item: A.TvfRef, scope: Scope): Leaf {
  const fn = 'VECTOR_SEARCH';
  const tables = item.args.filter((a) => a.kind === 'TableArg' || a.kind === 'Query' || a.kind === 'ScalarSubquery');
  // The single search form (Preview) names its embedding: query_value => ARRAY<FLOAT64>, and has no query table.
  const single = item.args.some((a) => a.kind === 'NamedArgument' && a.name.toLowerCase() === 'query_value');
  const tableCount = single ? 1 : 2;
  if (item.args.length < tableCount + 1 || tables.length !== tableCount || item.args[1]!.kind === 'TableArg' || item.args[1]!.kind === 'Query') {
    throw sqlError(`${fn} takes a base table, the column to search and a query table: VECTOR_SEARCH(TABLE base, 'column', TABLE query, ...)`, item.loc);
  }
  if (item.args[0] !== tables[0] || (!single && item.args[2] !== tables[1])) throw sqlError(`${fn} takes the base table as argument 1 and the query table as argument 3`, item.loc);
  baseQueryRules(an, item.args[0]!, fn);
  const base = tableArgument(an, item.args[0]!, `${fn} argument 1`);
  const named = new Map<string, A.Expr>([['column_to_search', item.args[1] as A.Expr]]);
  const order = single
    ? ['column_to_search', 'query_value', 'top_k', 'distance_type', 'options']
    : ['column_to_search', 'query_column_to_search', 'top_k', 'distance_type', 'options'];
  let position = 1;
  for (const a of item.args.slice(single ? 2 : 3)) {
    if (a.kind === 'TableArg' || a.kind === 'Query' || a.kind === 'ModelArg') throw sqlError(`${fn} takes tables only as arguments 1 and 3`, a.loc);
    let n: string;
    let v: A.Expr;
    if (a.kind === 'NamedArgument') {
      n = a.name.toLowerCase();
      v = a.value;
      position = order.length;
    } else {
      if (position >= order.length) throw sqlError(`Positional argument follows named argument in ${fn}`, a.loc);
      n = order[position++]!;
      v = a;
    }
    if (n === 'lexical_search_columns' || n === 'lexical_search_query_value') {
      // search_functions: hybrid search (Preview) only with the single query_value form; not emulated.
      if (!single) throw sqlError(`${fn}: ${n} can be used only with query_value (hybrid search does not support batch queries)`, a.loc);
      throw sqlError(`${fn}: hybrid search (${n}) is not supported by the emulator`, a.loc);
    }
    if (!order.includes(n)) throw sqlError(`Unknown named argument ${n} of ${fn}`, a.loc);
    if (named.has(n)) throw sqlError(`Duplicate argument ${n} in ${fn}`, a.loc);
    named.set(n, v);
  }
  const constant = (n: string, t: SqlType): Value | undefined => {
    const a = named.get(n);
    if (!a) return undefined;
    const e = resolveExpr(an, a, { scope, clause: 'table-valued function argument' });
    const v = constantValue(e);
    if (v === undefined) throw sqlError(`${fn} argument ${n} must be a constant`, a.loc);
    if (v === null) throw sqlError(`${fn} argument ${n} must not be NULL`, a.loc);
    if (!typeEquals(e.type, t)) throw sqlError(`${fn} argument ${n} must be ${typeToSql(t)}, got ${typeToSql(e.type)}`, a.loc);
    return v;
  };
  const q = (name: string): string => '`' + name.replace(/[`\\]/g, '\\$&') + '`';
  const embedding = (input: RelOut, name: string, which: string): string => {
    const i = input.names.findIndex((c) => c.toLowerCase() === name.toLowerCase());
    if (i < 0) throw sqlError(`${fn}: column ${name} not found in the ${which} table`, item.loc);
    const t = input.rel.columns[i]!.type;
    if (t.kind !== 'ARRAY' || t.element.kind !== 'FLOAT64') throw sqlError(`${fn}: column ${name} of the ${which} table must be ARRAY<FLOAT64>, got ${typeToSql(t)}`, item.loc);
    return input.names[i]!;
  };
  const column = embedding(base, constant('column_to_search', T.STRING) as string, 'base');
  let query: RelOut;
  if (single) {
    // The embedding as a one-row query table whose column has the searched column's name.
    const v = named.get('query_value')!;
    const sub: A.Query = { kind: 'Query', loc: v.loc, pipes: [], body: { kind: 'Select', loc: v.loc, distinct: false, items: [{ kind: 'SelectExpr', loc: v.loc, expr: v, alias: column }] } };
    query = tableArgument(an, sub, `${fn} query_value`);
  } else query = tableArgument(an, item.args[2]!, `${fn} argument 3`);
  const queryColumn = single ? column : embedding(query, (constant('query_column_to_search', T.STRING) as string | undefined) ?? column, 'query');
  if (single) embedding(query, column, 'query_value');
  const topK = (constant('top_k', T.INT64) as bigint | undefined) ?? 10n;

  let bruteForce = false;
  let fraction = false;
  const optionsText = constant('options', T.STRING) as string | undefined;
  if (optionsText !== undefined) {
    const loc = named.get('options')!.loc;
    let opts: unknown;
    try {
      opts = JSON.parse(optionsText);
    } catch {
      throw sqlError(`${fn} options must be a JSON object: ${optionsText}`, loc);
    }
    if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) throw sqlError(`${fn} options must be a JSON object: ${optionsText}`, loc);
    for (const [k, v] of Object.entries(opts)) {
      if (k === 'use_brute_force') {
        if (typeof v !== 'boolean') throw sqlError(`${fn} option use_brute_force must be a JSON boolean`, loc);
        bruteForce = v;
      } else if (k === 'fraction_lists_to_search') {
        // search_functions: in the range 0.0 to 1.0, exclusive.
        if (typeof v !== 'number' || !(v > 0 && v < 1)) throw sqlError(`${fn} option fraction_lists_to_search must be a number between 0.0 and 1.0, exclusive`, loc);
        fraction = true;
      } else throw sqlError(`${fn} has no option ${k}; the options are use_brute_force and fraction_lists_to_search`, loc);
    }
  }

  if (bruteForce && fraction) throw sqlError(`${fn} option fraction_lists_to_search cannot be specified when use_brute_force is true`, named.get('options')!.loc);
  let distanceType = (constant('distance_type', T.STRING) as string | undefined)?.toUpperCase();
  if (distanceType === undefined && !bruteForce) distanceType = indexDistanceType(an, item.args[0]!, column);
  distanceType ??= 'EUCLIDEAN';
  if (!['EUCLIDEAN', 'COSINE', 'DOT_PRODUCT'].includes(distanceType)) {
    throw sqlError(`${fn} distance_type must be 'EUCLIDEAN', 'COSINE' or 'DOT_PRODUCT', got '${distanceType}'`, named.get('distance_type')!.loc);
  }
  const err = (s: string): string => `ERROR(${JSON.stringify(s)})`;
  const dist = distanceType === 'DOT_PRODUCT'
    ? `-(SELECT SUM(__vs_x * __vs_qv[OFFSET(__vs_i)]) FROM UNNEST(__vs_bv) AS __vs_x WITH OFFSET __vs_i)`
    : `${distanceType}_DISTANCE(__vs_bv, __vs_qv)`;
  const check = `CASE
      WHEN __vs_qv IS NULL OR ARRAY_LENGTH(__vs_qv) = 0 THEN ${err(`${fn}: the query column ${queryColumn} has a NULL or empty array`)}
      WHEN __vs_bv IS NULL OR ARRAY_LENGTH(__vs_bv) = 0 THEN ${err(`${fn}: the base column ${column} has a NULL or empty array`)}
      WHEN ARRAY_LENGTH(__vs_qv) != ARRAY_LENGTH(__vs_bv) THEN ERROR(FORMAT('${fn}: embeddings must have the same length; the query embedding has %d elements and the base embedding %d', ARRAY_LENGTH(__vs_qv), ARRAY_LENGTH(__vs_bv)))
      WHEN EXISTS (SELECT 1 FROM UNNEST(ARRAY_CONCAT(__vs_qv, __vs_bv)) AS __vs_x WHERE __vs_x IS NULL) THEN ${err(`${fn}: an embedding has a NULL element`)}
      ELSE ${dist} END`;
  const struct = (input: RelOut): string => `STRUCT(${input.names.map((n) => `${q(n)} AS ${q(n)}`).join(', ')})`;
  const sql = `SELECT ${single ? '' : '__vs_q AS query, '}__vs_b AS base, __vs_d AS distance FROM (
      SELECT __vs_q, __vs_b, __vs_qid, __vs_bid, ${check} AS __vs_d
      FROM (SELECT ${struct(query)} AS __vs_q, ${q(queryColumn)} AS __vs_qv, ROW_NUMBER() OVER () AS __vs_qid FROM __vs_query)
      CROSS JOIN (SELECT ${struct(base)} AS __vs_b, ${q(column)} AS __vs_bv, ROW_NUMBER() OVER () AS __vs_bid FROM __vs_base))
    ${topK < 0n ? '' : `QUALIFY ROW_NUMBER() OVER (PARTITION BY __vs_qid ORDER BY __vs_d, __vs_bid) <= ${topK}`}`;
  return resolveRewrittenTvfOver(an, item, [{ input: base, name: '__vs_base' }, { input: query, name: '__vs_query' }], sql, 'vector_search');
}

/**
 * search_functions (VECTOR_SEARCH, base_table_query): only SELECT, FROM and WHERE clauses, and no logical
 * views in its FROM clause.
 */
function baseQueryRules(an: Analyzer, a: A.TvfRef['args'][number], fn: string): void {
  const q = a.kind === 'Query' ? a : a.kind === 'ScalarSubquery' ? a.query : undefined;
  if (!q) return;
  const s = q.body;
  const extra = q.with || q.orderBy || q.limit || q.offset || q.pipes.length || s.kind !== 'Select' || s.groupBy || s.having || s.qualify || s.window || s.withModifier;
  if (extra) throw sqlError(`${fn}: the base table query may have only SELECT, FROM and WHERE clauses`, a.loc);
  const walk = (f: A.FromItem | undefined): void => {
    if (!f) return;
    if (f.kind === 'JoinRef') {
      walk(f.left);
      walk(f.right);
    } else if (f.kind === 'TableRef' && !(f.path.length === 1 && an.findCte(f.path[0]!))) {
      if (an.getTable(tableIdOf(an, f.path, f.loc))?.kind === 'VIEW') throw sqlError(`${fn}: the base table query cannot read the logical view ${f.path.join('.')}`, f.loc);
    }
  };
  walk(s.from);
}

/** The distance_type of a populated vector index on `column` of a TABLE argument (EUCLIDEAN when the index sets none). */
function indexDistanceType(an: Analyzer, a: A.TvfRef['args'][number], column: string): string | undefined {
  if (a.kind !== 'TableArg' || (a.path.length === 1 && an.findCte(a.path[0]!))) return undefined;
  const info = an.getTable(tableIdOf(an, a.path, a.loc));
  const ix = info ? vectorIndexesOf(info.resource).find((x) => x.column.toLowerCase() === column.toLowerCase()) : undefined;
  if (!ix || !indexPopulated(info!.resource, 'VECTOR')) return undefined;
  return ix.options.find((o) => o.name.toLowerCase() === 'distance_type')?.value.toUpperCase() ?? 'EUCLIDEAN';
}

/**
 * Resolves a built-in table function written as SQL over its table argument:
 * the argument is visible to `sql` as the CTE `inputName` (and only it: the
 * caller's CTEs are hidden), and the result is a WITH over the argument's plan.
 */
function resolveRewrittenTvf(an: Analyzer, item: A.TvfRef, input: RelOut, sql: string, inputName: string, defaultAlias: string): Leaf {
  return resolveRewrittenTvfOver(an, item, [{ input, name: inputName }], sql, defaultAlias);
}

/** resolveRewrittenTvf over several table arguments, each bound as its own CTE. */
function resolveRewrittenTvfOver(an: Analyzer, item: A.TvfRef, inputs: { input: RelOut; name: string }[], sql: string, defaultAlias: string): Leaf {
  const stmt = an.env.parse(sql).statements[0];
  if (stmt?.kind !== 'QueryStatement') throw new Error(`${defaultAlias}: internal query did not parse`);
  const bound = inputs.map(({ input, name }) => ({
    id: an.newId(),
    name,
    plan: input.rel,
    columns: input.rel.columns.map((c, k) => ({ ...c, name: input.names[k] ?? c.name })),
  }));
  const savedCtes = an.ctes.splice(0);
  an.ctes.push(new Map(bound.map((b) => [b.name, { id: b.id, name: b.name, columns: b.columns, isValueTable: false }])));
  try {
    const out = resolveQuery(an, stmt.query, undefined);
    const rv = rangeOver(item.alias ?? defaultAlias, out.rel, out.names);
    const rel: Rel = { kind: 'with', ctes: bound.map((b) => ({ id: b.id, name: b.name, plan: b.plan })), body: out.rel, columns: out.rel.columns };
    return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
  } finally {
    an.ctes.splice(0);
    an.ctes.push(...savedCtes);
  }
}

/**
 * ML.PREDICT / ML.EVALUATE / ML.FORECAST over metadata-only models (spec §1.6.6:
 * inference is not implemented): the documented output columns, with NULL results.
 */
function mlStub(an: Analyzer, item: A.TvfRef, fname: string, scope: Scope): Leaf {
  const m = item.args[0];
  if (!m || m.kind !== 'ModelArg') throw sqlError(`${fname} requires a MODEL argument`, item.loc);
  const parts = m.path.flatMap((p) => p.split('.'));
  const modelId = parts[parts.length - 1]!;
  const datasetId = parts.length > 1 ? parts[parts.length - 2]! : an.env.defaultDataset?.datasetId ?? '';
  const projectId = parts.length > 2 ? parts[0]! : an.env.projectId;
  const model = an.env.catalog.getDataset(projectId, datasetId) ? an.env.catalog.getChild('models', projectId, datasetId, modelId) : undefined;
  if (!model) throw sqlError(`Not found: Model ${projectId}:${datasetId}.${modelId}`, m.loc);
  const alias = item.alias ?? fname.slice(3).toLowerCase();
  const nullCols = (cols: [string, SqlType][]): Leaf => {
    const rel: Rel = { kind: 'values', rows: [cols.map(([, t]) => literal(t, null))], columns: cols.map(([n, t]) => an.newColumn(n, t)) };
    const rv = rangeOver(alias, rel, cols.map(([n]) => n));
    return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
  };
  switch (fname) {
    case 'ML.PREDICT': {
      const input = item.args[1];
      if (!input || input.kind === 'ModelArg') throw sqlError('ML.PREDICT requires an input table or query', item.loc);
      let out: RelOut;
      if (input.kind === 'Query') out = resolveQuery(an, input, undefined);
      else if (input.kind === 'ScalarSubquery') out = resolveQuery(an, input.query, undefined);
      else if (input.kind === 'TableArg') {
        const r = resolveTableRef(an, { kind: 'TableRef', loc: input.loc, path: input.path }, undefined);
        out = { rel: r.rel, names: r.names, isValueTable: r.isValueTable };
      } else {
        const x = resolveExpr(an, input, { scope, clause: 'ML.PREDICT' });
        throw sqlError(`ML.PREDICT input must be a table or query, not ${typeToSql(x.type)}`, input.loc);
      }
      const labels = ((model.labelColumns as { name?: string }[] | undefined) ?? [{ name: 'label' }]).map((l) => `predicted_${l.name ?? 'label'}`);
      const exprs: Expr[] = [...out.rel.columns.map((c) => colRef(c)), ...labels.map(() => literal(T.FLOAT64, null))];
      const names = [...out.names, ...labels];
      const rel = project(an, out.rel, exprs, names);
      const rv = rangeOver(alias, rel, names);
      return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
    }
    case 'ML.EVALUATE':
      return nullCols([['mean_absolute_error', T.FLOAT64], ['mean_squared_error', T.FLOAT64], ['mean_squared_log_error', T.FLOAT64], ['median_absolute_error', T.FLOAT64], ['r2_score', T.FLOAT64], ['explained_variance', T.FLOAT64]]);
    case 'ML.FORECAST':
      return nullCols([['forecast_timestamp', T.TIMESTAMP], ['forecast_value', T.FLOAT64], ['standard_error', T.FLOAT64], ['confidence_level', T.FLOAT64], ['prediction_interval_lower_bound', T.FLOAT64], ['prediction_interval_upper_bound', T.FLOAT64]]);
    default:
      throw sqlError(`Table-valued function not found: ${item.name.join('.')}`, item.loc);
  }
}
