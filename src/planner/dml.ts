// INSERT, UPDATE, DELETE, MERGE, TRUNCATE. UPDATE, DELETE and MERGE change
// rows, not tables: they read the target with each row's position
// (ROW_POSITION), compute only the rows they touch, and hand storage the
// positions that go and the rows that come (QueryCatalog.changeRows), so a
// one-row UPDATE of a big table costs one row. An updated row comes back as
// a new row at the end: row order is no part of a table, as in the service.
import type * as A from '../../grammar/ast.js';
import { callScalar } from '../analyzer/calls.js';
import { coerce, isErrorCall, literal, originOf, requireBool } from '../analyzer/coercion.js';
import { resolveExpr } from '../analyzer/expr.js';
import { outputNames, type Analyzer } from '../analyzer/index.js';
import { project } from '../analyzer/query.js';
import { resolveFrom } from '../analyzer/from.js';
import { rewriteExpr } from '../analyzer/rewrite.js';
import type { ColumnRefExpr, Expr, Rel, ResolvedColumn } from '../analyzer/resolved.js';
import { extractEquiKeys } from '../executor/operators/join.js';
import { Scope, colRef } from '../analyzer/scope.js';
import { canCoerce, Origin } from '../analyzer/types.js';
import { sqlError } from '../analyzer/errors.js';
import { checkResultArrays } from '../executor/result-check.js';
import { ROW_POSITION, type TableInfo } from '../storage/api.js';
import { truncateToPartition, type PartitionUnit } from '../storage/ingestion.js';
import type { Column, RestField } from '../types/schema.js';
import { T, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { formatTimestampRfc3339 } from '../types/json-values.js';
import { getValue, takeVector, type Batch } from '../types/vector.js';
import { QueryError, type QueryResult } from './api.js';
import { checkPartitionFilters, checkTargetFilter } from './partition-filter.js';
import { applyNested, setTargetError } from './nested-dml.js';
import type { Session } from './session.js';
import { defaultValue, PARTITION_TIME } from './column-defaults.js';
import { fq, statementResult as result } from './statement-type.js';
import { splitPath, tableIdOf, tableNotFound } from '../analyzer/names.js';
import { requireFullRowAccess } from '../analyzer/row-access.js';

// ---------------------------------------------------------------- DML helpers

/** `src`'s batches, each passed to `check` (which throws to fail the statement) before it is handed on. */
export async function* checked(src: AsyncIterable<Batch>, check: (b: Batch) => void): AsyncGenerator<Batch> {
  for await (const b of src) {
    check(b);
    yield b;
  }
}

export function writeTarget(s: Session, path: A.Path, loc: A.Loc): TableInfo {
  const parts = splitPath(path);
  const temp = parts.length === 1 ? s.tempTables.get(parts[0]!) : undefined;
  const id = temp ?? tableIdOf(s.analyzer(), path, loc);
  const info = s.ctx.catalog.getTable(id);
  if (!info) throw tableNotFound(s.analyzer(), id);
  if (info.kind === 'VIEW' || info.kind === 'MATERIALIZED_VIEW') throw sqlError(`Cannot modify ${info.kind === 'VIEW' ? 'view' : 'materialized view'} ${fq(id)}`, loc);
  return info;
}

/** The target of a DML statement: a table snapshot is read-only (table snapshots: queried, copied or restored, never modified). */
function dmlWriteTarget(s: Session, path: A.Path, loc: A.Loc): TableInfo {
  // data-manipulation-language.md, Limitations: a wildcard table may be read by a DML statement, never its target.
  const parts = splitPath(path);
  if (parts[parts.length - 1]!.endsWith('*')) throw sqlError(`A wildcard table cannot be the target of a DML statement: ${parts.join('.')}`, loc);
  const info = writeTarget(s, path, loc);
  if (info.resource.type === 'SNAPSHOT') throw sqlError(`Cannot modify table snapshot ${fq(info.id)}`, loc);
  // An external table's rows are its files' (external tables: read-only to DML).
  if (info.kind === 'EXTERNAL') throw sqlError(`Cannot modify external table ${fq(info.id)}`, loc);
  // using-row-level-security-with-features.md, DML: changing a table with row access policies needs the TRUE filter.
  requireFullRowAccess(s.ctx.catalog, info.id, s.ctx.sessionUser, loc);
  s.versions.noteCurrent(info.id);
  // Job.md, JobStatistics2.referencedTables: a DML statement's target is a table the job references, whether it reads
  // it (UPDATE, DELETE, MERGE) or only writes it (INSERT, a MERGE of WHEN NOT MATCHED only, TRUNCATE).
  s.referenced.noteTable(info.id);
  return info;
}

/**
 * The columns INSERT, UPDATE, DELETE and MERGE read and write: the table's,
 * then for an ingestion-time partitioned table its _PARTITIONTIME (stored
 * after them: scan index `columns.length`), which INSERT may name, UPDATE may
 * set and every other write keeps (storage/ingestion.ts).
 */
function dmlTarget(info: TableInfo): TableInfo {
  if (!info.partitionUnit) return info;
  return { id: info.id, kind: info.kind, rowCount: info.rowCount, resource: info.resource, partitionUnit: info.partitionUnit, columns: [...info.columns, PARTITION_TIME] };
}

/**
 * dml-syntax.md (INSERT and MERGE, "Omitting column names"): an ingestion-time partitioned target needs its column
 * list; a row without one would leave the partition to chance. Worded as the reference resolver words it.
 */
function noColumnList(info: TableInfo, loc: A.Loc): void {
  if (info.partitionUnit) throw sqlError('INSERT must specify a column list', loc);
}

/** The number of a DML target's columns a row without a column list gives (all but _PARTITIONTIME). */
const ownColumns = (info: TableInfo): number => info.columns.length - (info.partitionUnit ? 1 : 0);

/**
 * The tables a DML statement reads besides its target (UPDATE ... FROM, MERGE ... USING, subqueries in its conditions
 * and values) need their partition filters as a query's do (querying-partitioned-tables.md, require a partition
 * filter). The statement's conditions (WHERE; ON and the WHEN conditions, using-dml-with-partitioned-tables.md) count
 * as filters over the source; the values (SET, INSERT VALUES) are only searched for subqueries. The target is held to
 * its own rule by checkTargetFilter.
 */
function sourceFilters(s: Session, an: Analyzer, source: Rel | undefined, conditions: readonly Expr[], values: readonly Expr[] = []): void {
  const input: Rel = source ?? { kind: 'values', rows: [], columns: [] };
  const predicate: Expr = conditions.length === 1 ? conditions[0]! : ({ kind: 'logical', type: T.BOOL, op: 'and', args: [...conditions] } as Expr);
  checkPartitionFilters(s, project(an, { kind: 'filter', input, predicate, columns: input.columns }, values, values.map(() => '')));
}

/**
 * The target of UPDATE, DELETE, MERGE, TRUNCATE: its mutation lock is taken
 * before anything reads it (mutations of one table run one at a time, each
 * seeing the ones before; see src/storage/transaction.ts).
 */
async function mutationTarget(s: Session, path: A.Path, loc: A.Loc): Promise<TableInfo> {
  const info = dmlWriteTarget(s, path, loc);
  // A dry run changes nothing: it waits for no writer.
  if (!s.ctx.dryRun) await s.ctx.catalog.transactions?.lockForMutation(info.id);
  return info;
}

/**
 * Assignment coercion into a column (INSERT, UPDATE SET, MERGE). `what`
 * names the value in the refusal: 'Value' for an expression, `Query column
 * N` for a column of INSERT's query.
 */
export function coerceForWrite(e: Expr, c: Column, loc: A.Loc | undefined, what = 'Value'): Expr {
  if (typeEquals(e.type, c.type)) return e;
  // ERROR(...) takes its type from its context (debugging_functions.md): here the column's.
  if (isErrorCall(e) || canCoerce(e.type, c.type, originOf(e)) || shapeFits(e, c.type)) return coerce(e, c.type, loc);
  throw sqlError(`${what} has type ${typeToSql(e.type)} which cannot be inserted into column ${c.name}, which has type ${typeToSql(c.type)}`, loc);
}

/**
 * Column k of a query written into a table (INSERT ... SELECT, CREATE TABLE (cols) / LIKE ... AS SELECT) as the
 * assignment sees it: a bare untyped NULL or `[]` in the outermost SELECT list keeps its free coercion, so
 * `INSERT t (ts) SELECT NULL` writes a NULL TIMESTAMP (ZetaSQL's resolver_dml.cc and resolver_stmt.cc exempt such
 * literals of the query's top ProjectScan: UntypedLiteralMap); anywhere deeper the column has the type it was given.
 */
export function queryColumn(plan: Rel, k: number): Expr {
  const e = plan.kind === 'project' ? plan.exprs[k] : undefined;
  return e?.kind === 'literal' && originOf(e) === Origin.Null ? e : colRef(plan.columns[k]!);
}

/**
 * The same kind, STRUCTs with as many fields at every depth: the assignment casts the value (a field's own
 * type is the cast's to judge: `(1, NULL)` into STRUCT<a INT64, b DATE>); a STRUCT of another arity never is.
 */
function sameShape(from: SqlType, to: SqlType): boolean {
  if (from.kind !== to.kind) return false;
  if (from.kind === 'STRUCT' && to.kind === 'STRUCT') return from.fields.length === to.fields.length && from.fields.every((f, i) => arity(f.type, to.fields[i]!.type));
  if (from.kind === 'ARRAY' && to.kind === 'ARRAY') return arity(from.element, to.element);
  return true;
}

const arity = (from: SqlType, to: SqlType): boolean => from.kind !== to.kind || sameShape(from, to);

/**
 * A STRUCT or ARRAY written as a constructor (`STRUCT('x' AS n)`, `(1, NULL)`, `[...]`) fits a column when each
 * field or element does, by its own coercion (a NULL or literal field as a literal): a STRING literal field never
 * becomes an INT64 (it failed at run time). Other values keep the same-shape rule.
 */
export function shapeFits(e: Expr, to: SqlType): boolean {
  const fits = (x: Expr, t: SqlType): boolean => typeEquals(x.type, t) || canCoerce(x.type, t, originOf(x)) || shapeFits(x, t);
  if (e.kind === 'make_struct' && to.kind === 'STRUCT') return e.fields.length === to.fields.length && e.fields.every((f, i) => fits(f, to.fields[i]!.type));
  if (e.kind === 'make_array' && to.kind === 'ARRAY') return e.elements.every((x) => fits(x, to.element));
  // A constructor of literals is folded to one literal: its fields are judged as literals (a NULL field fits any type).
  if (e.kind === 'literal' && (to.kind === 'STRUCT' || to.kind === 'ARRAY')) return literalFits(e.type, e.value, to, originOf(e));
  return sameShape(e.type, to);
}

function literalFits(from: SqlType, v: Value, to: SqlType, origin: ReturnType<typeof originOf>): boolean {
  if (v === null || typeEquals(from, to) || canCoerce(from, to, origin)) return true;
  if (from.kind === 'STRUCT' && to.kind === 'STRUCT') {
    const a = v as Value[];
    return from.fields.length === to.fields.length && from.fields.every((f, i) => literalFits(f.type, a[i]!, to.fields[i]!.type, origin));
  }
  if (from.kind === 'ARRAY' && to.kind === 'ARRAY') return (v as Value[]).every((x) => literalFits(from.element, x, to.element, origin));
  return false;
}

/** UPDATE SET / MERGE UPDATE SET: the assignment of a value to a column or field (ZetaSQL's resolver wording). */
function coerceForSet(e: Expr, c: Column, path: string, loc: A.Loc | undefined): Expr {
  if (typeEquals(e.type, c.type)) return e;
  if (isErrorCall(e) || canCoerce(e.type, c.type, originOf(e)) || shapeFits(e, c.type)) return coerce(e, c.type, loc);
  throw sqlError(`Value of type ${typeToSql(e.type)} cannot be assigned to ${path}, which has type ${typeToSql(c.type)}`, loc);
}

/**
 * UPDATE SET / MERGE UPDATE SET: a target named twice is refused, and so is a
 * field path inside another target (`s` and `s.a`), as the service refuses them.
 */
function checkAssignedOnce(paths: readonly string[], loc: A.Loc | undefined): void {
  const seen: string[] = [];
  for (const p of paths) {
    const l = p.toLowerCase();
    if (seen.includes(l)) throw sqlError(`Update item ${p} assigned more than once`, loc);
    const over = seen.findIndex((q) => l.startsWith(q + '.') || q.startsWith(l + '.'));
    if (over >= 0) throw sqlError(`Update item ${p} overlaps with ${paths[over]}`, loc);
    seen.push(l);
  }
}

function checkRequired(info: TableInfo, batches: readonly Batch[]): void {
  const fields = (info.resource.schema as { fields?: RestField[] } | undefined)?.fields;
  info.columns.forEach((c, i) => {
    if (c === PARTITION_TIME) return checkPartitionTimes(info.partitionUnit!, batches, i);
    // A STRUCT's REQUIRED fields live only in the REST schema (SqlType has no field modes).
    const field = fields?.find((f) => f.name.toLowerCase() === c.name.toLowerCase());
    const nested = field?.fields?.some(hasRequired) ? field.fields : undefined;
    if (!c.required && !nested) return;
    for (const b of batches) {
      const v = b.columns[i]!;
      if (c.required && v.nulls) for (let r = 0; r < b.length; r++) if (v.nulls[r]) throw new QueryError(`Required field ${c.name} cannot be null`, 'invalidQuery');
      if (nested) for (let r = 0; r < b.length; r++) checkRequiredFields(c.name, nested, modeOf(field!) === 'REPEATED', getValue(v, r));
    }
  });
  // Parameterized types (STRING(L), NUMERIC(P, S)) and NULL arrays are made table values where rows are written (types/table-values.ts).
}

/**
 * A written _PARTITIONTIME must be the start of a partition of the table's unit
 * (using-dml-with-partitioned-tables: only timestamps at exact day boundaries
 * for a daily table); a NULL is not judged here.
 */
/** 2160-01-01 00:00:00 UTC in epoch microseconds: the end of the partitions DML may write. */
const DML_PARTITION_TIME_END = BigInt(Date.UTC(2160, 0, 1)) * 1000n;

function checkPartitionTimes(unit: PartitionUnit, batches: readonly Batch[], col: number): void {
  for (const b of batches) {
    const v = b.columns[col]!;
    for (let r = 0; r < b.length; r++) {
      const us = getValue(v, r) as bigint | null;
      if (us !== null && truncateToPartition(us, unit) !== us) {
        throw new QueryError(`Cannot write _PARTITIONTIME ${formatTimestampRfc3339(us)}: it is not the start of a ${unit} partition of this ingestion-time partitioned table`, 'invalidQuery');
      }
      // partitioned-tables.md, Ingestion time partitioning: DML cannot reference dates before 1970-01-01 or after 2159-12-31.
      if (us !== null && (us < 0n || us >= DML_PARTITION_TIME_END)) {
        throw new QueryError(`Cannot write _PARTITIONTIME ${formatTimestampRfc3339(us)}: DML writes partitions from 1970-01-01 to 2159-12-31 only`, 'invalidQuery');
      }
    }
  }
}

function hasRequired(f: RestField): boolean {
  return modeOf(f) === 'REQUIRED' || (f.fields?.some(hasRequired) ?? false);
}

function modeOf(f: RestField): string {
  return (f.mode ?? 'NULLABLE').toUpperCase();
}

/** A STRUCT value (or each element of an ARRAY of them) against its fields' REQUIRED modes, at any depth. */
function checkRequiredFields(path: string, fields: readonly RestField[], repeated: boolean, v: Value): void {
  if (v === null) return;
  if (repeated) {
    for (const e of v as Value[]) checkRequiredFields(path, fields, false, e);
    return;
  }
  const struct = v as Value[];
  fields.forEach((f, j) => {
    const name = `${path}.${f.name}`;
    const x = struct[j] ?? null;
    if (modeOf(f) === 'REQUIRED' && x === null) throw new QueryError(`Required field ${name} cannot be null`, 'invalidQuery');
    if (f.fields?.some(hasRequired)) checkRequiredFields(name, f.fields, modeOf(f) === 'REPEATED', x);
  });
}

function rowCount(batches: readonly Batch[]): number {
  return batches.reduce((n, b) => n + b.length, 0);
}

/** A scan of every column of a table, for a rewrite of its rows: an ingestion-time partitioned table's _PARTITIONTIME last (dmlTarget). */
export function scanAll(s: Session, table: TableInfo): Rel {
  const an = s.analyzer();
  const info = dmlTarget(table);
  return { kind: 'scan', table: info.id, tableColumns: info.columns.map((_, i) => i), columns: info.columns.map((c) => an.newColumn(c.name, c.type)) };
}

// ---------------------------------------------------------------- INSERT

export async function insert(s: Session, st: A.InsertStmt): Promise<QueryResult> {
  const info = dmlTarget(dmlWriteTarget(s, st.target, st.loc));
  if (st.insertMode) {
    // INSERT OR IGNORE/REPLACE/UPDATE needs an enforced primary key, which tables here never have.
    const pk = (info.resource as { tableConstraints?: { primaryKey?: { columns?: string[] } } }).tableConstraints?.primaryKey?.columns;
    if (!pk?.length) throw sqlError(`INSERT OR ${st.insertMode} is not allowed because the table does not have a primary key`, st.loc);
    throw sqlError(`INSERT OR ${st.insertMode} is not supported`, st.loc);
  }
  const an = s.analyzer();
  const cols = info.columns;
  let targetIdx: number[];
  if (st.columns) {
    targetIdx = st.columns.map((n) => {
      const i = cols.findIndex((c) => c.name.toLowerCase() === n.toLowerCase());
      if (i < 0) throw sqlError(`Column ${n} is not present in table ${fq(info.id)}`, st.loc);
      return i;
    });
    const twice = targetIdx.find((c, k) => targetIdx.indexOf(c) !== k);
    if (twice !== undefined) throw sqlError(`INSERT has columns with duplicate name: ${cols[twice]!.name}`, st.loc);
  } else {
    noColumnList(info, st.loc);
    targetIdx = cols.slice(0, ownColumns(info)).map((_, i) => i);
  }
  let rel: Rel;
  if (st.values) {
    const rows: Expr[][] = [];
    for (const row of st.values) {
      if (row.length !== targetIdx.length) {
        throw sqlError(`Inserted row has wrong column count; Has ${row.length}, expected ${targetIdx.length}`, row[0]?.loc ?? st.loc);
      }
      const full: Expr[] = [];
      for (let i = 0; i < cols.length; i++) {
        const k = targetIdx.indexOf(i);
        const c = cols[i]!;
        if (k < 0 || row[k]!.kind === 'DefaultExpr') full.push(await defaultValue(an, info, c));
        else full.push(coerceForWrite(resolveExpr(an, row[k]!, { scope: new Scope(), clause: 'INSERT VALUES' }), c, row[k]!.loc));
      }
      rows.push(full);
    }
    rel = { kind: 'values', rows, columns: cols.map((c) => an.newColumn(c.name, c.type)) };
  } else {
    const q = s.analyze(st.query!, { allowDuplicateNames: true }, an);
    checkPartitionFilters(s, q.plan);
    const qc = q.plan.columns;
    if (qc.length !== targetIdx.length) {
      throw sqlError(`Inserted row has wrong column count; Has ${qc.length}, expected ${targetIdx.length}`, st.query!.loc);
    }
    const exprs: Expr[] = [];
    for (let i = 0; i < cols.length; i++) {
      const k = targetIdx.indexOf(i);
      exprs.push(k < 0 ? await defaultValue(an, info, cols[i]!) : coerceForWrite(queryColumn(q.plan, k), cols[i]!, st.query!.loc, `Query column ${k + 1}`));
    }
    rel = project(an, q.plan, exprs, cols.map((c) => c.name));
  }
  if (!st.returning && !st.assertRowsModified) {
    // Written as the query makes them (a large INSERT ... SELECT is never held whole), each batch checked on its way.
    let n = 0;
    const rows = checked(s.streamCharged(rel), (b) => {
      checkRequired(info, [b]);
      checkResultArrays(cols, [b]);
      n += b.length;
    });
    await s.ctx.catalog.appendRows(info.id, rows);
    return result('INSERT', { numDmlAffectedRows: n });
  }
  const batches = await s.runCharged(rel);
  checkRequired(info, batches);
  checkResultArrays(cols, batches);
  const n = rowCount(batches);
  if (st.assertRowsModified) await assertRows(s, st.assertRowsModified, n);
  const ret = st.returning ? await returning(s, info, undefined, batches, st.returning) : {};
  if (n) await s.ctx.catalog.appendRows(info.id, batches);
  return result('INSERT', { numDmlAffectedRows: n, ...ret });
}

async function assertRows(s: Session, e: A.Expr, n: number): Promise<void> {
  const v = (await s.evalScalar(e)).value;
  if (v === null) throw new QueryError('ASSERT_ROWS_MODIFIED must have a non-NULL argument', 'invalidQuery');
  if (BigInt(v as bigint) !== BigInt(n)) throw new QueryError(`ASSERT_ROWS_MODIFIED expected ${v} rows modified, but found ${n}`, 'invalidQuery');
}

// ---------------------------------------------------------------- UPDATE / DELETE / TRUNCATE

/** Scope over the target table's columns (`cols`, in table order) under its alias (and its name). */
function targetScope(info: TableInfo, alias: string | undefined, cols: readonly ResolvedColumn[], date?: ResolvedColumn): Scope {
  const scope = new Scope();
  const name = alias ?? info.id.tableId;
  scope.addRangeVar({ name, lname: name.toLowerCase(), columns: targetColumns(info, cols, date) });
  return scope;
}

/** The target's columns under their names; then _PARTITIONDATE of an ingestion-time partitioned table (positionedScan). */
function targetColumns(info: TableInfo, cols: readonly ResolvedColumn[], date?: ResolvedColumn): ResolvedColumn[] {
  const out = cols.map((c, i) => ({ ...c, name: info.columns[i]!.name }));
  return date ? [...out, { ...date, name: '_PARTITIONDATE' }] : out;
}

/** The column and nested field path an UPDATE SET target names (`col`, `alias.col`, `col.f.g`). */
function setTargetPath(info: TableInfo, alias: string, t: A.Expr): { col: number; fields: string[] } {
  const parts: string[] = [];
  let e: A.Expr = t;
  while (e.kind === 'FieldAccess') {
    parts.unshift(e.field);
    e = e.expr;
  }
  if (e.kind !== 'PathExpr') throw setTargetError(t);
  parts.unshift(...e.parts);
  if (parts.length > 1 && parts[0]!.toLowerCase() === alias.toLowerCase() && !info.columns.some((c) => c.name.toLowerCase() === parts[0]!.toLowerCase())) parts.shift();
  const i = info.columns.findIndex((c) => c.name.toLowerCase() === parts[0]!.toLowerCase());
  if (i < 0) throw sqlError(`Unrecognized name: ${parts[0]}`, t.loc);
  return { col: i, fields: parts.slice(1) };
}

/** Rebuilds `base` with the field at `path` replaced by `value` (nested SET s.a.b = v). */
function replaceField(base: Expr, path: readonly string[], value: Expr, loc: A.Loc): Expr {
  if (path.length === 0) return value;
  const t = base.type;
  if (t.kind !== 'STRUCT') throw sqlError(`Cannot access field ${path[0]} on a value with type ${typeToSql(t)}`, loc);
  const k = t.fields.findIndex((f) => f.name.toLowerCase() === path[0]!.toLowerCase());
  if (k < 0) throw sqlError(`Field name ${path[0]} does not exist in ${typeToSql(t)}`, loc);
  const fields = t.fields.map((f, i): Expr => {
    const fe: Expr = { kind: 'field', type: f.type, arg: base, fieldIndex: i };
    return i === k ? replaceField(fe, path.slice(1), value, loc) : fe;
  });
  // Setting a field of a NULL struct is an error (checked lazily, per row).
  const fail = callScalar('ERROR', [literal(T.STRING, `Cannot set field of NULL ${typeToSql(t)}`)], loc);
  const raise: Expr = { kind: 'conditional', type: t, op: 'case', whens: [callScalar('$is_null', [fail], loc)], thens: [base], else: base };
  return { kind: 'conditional', type: t, op: 'case', whens: [callScalar('$is_null', [base], loc)], thens: [raise], else: { kind: 'make_struct', type: t, fields } };
}


/**
 * A scan of every column of the target plus each row's position (the last
 * column), for a row-level change. `an`: the statement's analyzer (column ids are unique per analyzer).
 */
function positionedScan(an: Analyzer, info: TableInfo): { scan: Rel; cols: ResolvedColumn[]; pos: ResolvedColumn; date?: ResolvedColumn } {
  const cols = info.columns.map((c) => an.newColumn(c.name, c.type));
  const pos = an.newColumn('$pos', T.INT64);
  const scan: Rel = { kind: 'scan', table: info.id, tableColumns: [...info.columns.map((_, i) => i), ROW_POSITION], columns: [...cols, pos] };
  if (info.partitionUnit !== 'DAY') return { scan, cols, pos };
  // A daily ingestion-time partitioned table's conditions may also read _PARTITIONDATE, the date of its _PARTITIONTIME (the last of `cols`).
  const date: Expr = { kind: 'cast', type: T.DATE, arg: colRef(cols[cols.length - 1]!), safe: false };
  const p = project(an, scan, [...scan.columns.map((c) => colRef(c)), date], [...info.columns.map((c) => c.name), '$pos', '_PARTITIONDATE']);
  const n = cols.length;
  return { scan: p, cols: p.columns.slice(0, n), pos: p.columns[n]!, date: p.columns[n + 1]! };
}

/** The positions in column `col` of `batches` (a positioned scan's). */
function positionsOf(batches: readonly Batch[], col: number): number[] {
  const out: number[] = [];
  for (const b of batches) {
    const v = b.columns[col]!;
    // ROW_POSITION comes as numbers (Float64Array, no NULLs): read them as they are, not boxed one by one.
    if (v.data instanceof Float64Array && v.nulls === null) for (let i = 0; i < b.length; i++) out.push(v.data[i]!);
    else for (let i = 0; i < b.length; i++) out.push(Number(getValue(v, i)));
  }
  return out;
}

/** Whether a position occurs twice (a target row matched by two source rows). */
function hasRepeats(positions: readonly number[]): boolean {
  // Many positions: a byte per row up to the largest, one pass, no sort.
  let max = 0;
  for (let i = 0; i < positions.length; i++) if (positions[i]! > max) max = positions[i]!;
  if (max > 8 * positions.length + 4096) {
    // Few positions in a large table: sorting them costs less than a byte per row.
    const sorted = Float64Array.from(positions).sort();
    for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return true;
    return false;
  }
  const seen = new Uint8Array(max + 1);
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i]!;
    if (seen[p] === 1) return true;
    seen[p] = 1;
  }
  return false;
}

/** The first `n` columns of each batch. */
const firstColumns = (batches: readonly Batch[], n: number): Batch[] => batches.map((b) => ({ length: b.length, columns: b.columns.slice(0, n) }));

const MATCHED_TWICE = 'UPDATE/MERGE must match at most one source row for each target row';

/**
 * The row values after an UPDATE SET list (of UPDATE or of a MERGE WHEN clause): `current` with each
 * assigned column or nested field replaced; `changed` holds the columns the list assigns.
 */
async function assignValues(
  s: Session,
  an: Analyzer,
  info: TableInfo,
  alias: string,
  items: readonly A.UpdateItem[],
  scope: Scope,
  current: readonly Expr[],
  loc: A.Loc,
): Promise<{ values: Expr[]; changed: Set<number> }> {
  const values = [...current];
  const changed = new Set<number>();
  const targets = items.map((item) => ({ item, ...setTargetPath(info, alias, item.target) }));
  checkAssignedOnce(targets.map((x) => [info.columns[x.col]!.name, ...x.fields].join('.')), loc);
  for (const { item, col: i, fields } of targets) {
    const c = info.columns[i]!;
    changed.add(i);
    if (item.value.kind === 'DefaultExpr' && fields.length === 0) {
      values[i] = await defaultValue(an, info, c);
      continue;
    }
    // A nested field's DEFAULT is NULL (fields have no default expressions).
    const raw = item.value.kind === 'DefaultExpr' ? literal(T.INT64, null) : resolveExpr(an, item.value, { scope, clause: 'UPDATE SET' });
    if (fields.length === 0) values[i] = coerceForSet(raw, c, c.name, item.value.loc);
    else {
      let ft: SqlType = c.type;
      for (const f of fields) ft = ft.kind === 'STRUCT' ? (ft.fields.find((x) => x.name.toLowerCase() === f.toLowerCase())?.type ?? ft) : ft;
      // Several SETs of fields of one column build on each other.
      values[i] = replaceField(values[i]!, fields, coerceForSet(raw, { name: c.name, type: ft, required: false }, [c.name, ...fields].join('.'), item.value.loc), item.target.loc);
    }
  }
  return { values, changed };
}

export async function update(s: Session, st: A.UpdateStmt): Promise<QueryResult> {
  const info = dmlTarget(await mutationTarget(s, st.target, st.loc));
  const an = s.analyzer();
  const { scan, cols, pos, date } = positionedScan(an, info);
  const scope = targetScope(info, st.alias, cols, date);
  const alias = st.alias ?? info.id.tableId;
  if (!st.where) throw sqlError('UPDATE must have a WHERE clause', st.loc);
  let rel: Rel;
  let where: Expr;
  let src: Rel | undefined;
  if (st.from) {
    // Target rows joined to the source rows the WHERE condition pairs them with; a target row paired twice is an error.
    const srcScope = new Scope();
    src = resolveFrom(an, st.from, srcScope, undefined);
    // dml-syntax.md (UPDATE, FROM): a self-join names the target again under an alias; under the target's own name
    // the two could not be told apart (the reference resolver's wording).
    if (srcScope.findRangeVar(alias.toLowerCase())) throw sqlError(`Alias ${alias} in the FROM clause was already defined as the UPDATE target`, st.from.loc);
    for (const rv of srcScope.rangeVars) scope.addRangeVar(rv);
    where = requireBool(resolveExpr(an, st.where, { scope, clause: 'WHERE clause' }), st.where.loc, 'WHERE clause');
    rel = { kind: 'join', joinType: 'inner', left: scan, right: src, condition: where, lateral: false, columns: [...scan.columns, ...src.columns] };
  } else {
    where = requireBool(resolveExpr(an, st.where, { scope, clause: 'WHERE clause' }), st.where.loc, 'WHERE clause');
    // A filter keeps the rows its predicate is TRUE for; as a plain WHERE it reaches the scan (row groups skipped by statistics).
    rel = { kind: 'filter', input: scan, predicate: where, columns: scan.columns };
  }
  checkTargetFilter(info, cols, [where], date);
  // The new values of the rows the WHERE selects.
  let setItems: readonly A.UpdateItem[] = st.set;
  if (st.nestedDml?.length) {
    const { parseExpression } = await import('../../grammar/index.js');
    setItems = applyNested(parseExpression, st.set, st.nestedDml);
  }
  const { values: newVals } = await assignValues(s, an, info, alias, setItems, scope, cols.map((c) => colRef(c)), st.loc);
  sourceFilters(s, an, src, [where], newVals);
  const nc = info.columns.length;
  const plan = s.optimize(project(an, rel, [...newVals, colRef(pos)], [...info.columns.map((c) => c.name), '$pos']));
  await s.charge(plan);
  await s.chargeTarget(info);
  if (s.ctx.dryRun) return result('UPDATE', {});
  const batches = await s.runOptimized(plan);
  const deleted = positionsOf(batches, nc);
  if (st.from && hasRepeats(deleted)) throw new QueryError(MATCHED_TWICE, 'invalidQuery');
  const added = firstColumns(batches, nc);
  checkRequired(info, added);
  checkResultArrays(info.columns, added);
  if (st.assertRowsModified) await assertRows(s, st.assertRowsModified, deleted.length);
  await s.ctx.catalog.changeRows(info.id, { deleted, added, updated: deleted.length, updatedDeletes: deleted.length });
  return result('UPDATE', { numDmlAffectedRows: deleted.length });
}

export async function del(s: Session, st: A.DeleteStmt): Promise<QueryResult> {
  const info = dmlTarget(await mutationTarget(s, st.target, st.loc));
  const an = s.analyzer();
  const { scan, cols, pos, date } = positionedScan(an, info);
  const scope = targetScope(info, st.alias, cols, date);
  if (!st.where) throw sqlError('DELETE must have a WHERE clause', st.loc);
  const pred = requireBool(resolveExpr(an, st.where, { scope, clause: 'WHERE clause' }), st.where.loc, 'WHERE clause');
  checkTargetFilter(info, cols, [pred], date);
  sourceFilters(s, an, undefined, [pred]);
  const filter: Rel = { kind: 'filter', input: scan, predicate: pred, columns: scan.columns };
  const plan = s.optimize(filter);
  await s.charge(plan);
  await s.chargeTarget(info);
  if (s.ctx.dryRun) return result('DELETE', {});
  // Without RETURNING only the positions are wanted: the scan reads just the columns the condition does (billed as above).
  const gone = await s.runOptimized(st.returning ? plan : s.optimize(project(an, filter, [colRef(pos)], ['$pos'])));
  const deleted = positionsOf(gone, st.returning ? cols.length : 0);
  if (st.assertRowsModified) await assertRows(s, st.assertRowsModified, deleted.length);
  const ret = st.returning ? await returning(s, info, st.alias, firstColumns(gone, cols.length), st.returning) : {};
  await s.ctx.catalog.changeRows(info.id, { deleted, added: [] });
  return result('DELETE', { numDmlAffectedRows: deleted.length, ...ret });
}

export async function truncate(s: Session, st: A.TruncateStmt): Promise<QueryResult> {
  const info = await mutationTarget(s, st.name, st.loc);
  const n = info.rowCount;
  await s.ctx.catalog.replaceRows(info.id, [], undefined, { truncating: true });
  return result('TRUNCATE_TABLE', { numDmlAffectedRows: n });
}

// ---------------------------------------------------------------- MERGE

/** Source rows up to which a MERGE reads its source first to narrow the target scan. */
const SMALL_SOURCE = 10_000;

/**
 * A MERGE whose target rows matter only where the source matches them (no
 * WHEN NOT MATCHED BY SOURCE): a small source is read first (once: the join
 * then reads those rows as literals), and the target's scan gets
 * `key IN (the source's keys)` for each `target column = source column` of
 * ON, so that it skips row groups by their statistics and hands on only
 * rows that can match (a one-row MERGE into a big table reads one row group).
 */
async function narrowTarget(s: Session, tRel: Rel, scan: Rel, source: Rel, on: Expr): Promise<{ target: Rel; source: Rel }> {
  const keys = extractEquiKeys(on, tRel, source).keys.filter((k) => k.left.kind === 'column' && k.right.kind === 'column');
  if (keys.length === 0 || tRel.kind !== 'project') return { target: tRel, source };
  const rows = await s.run(source);
  if (rows.reduce((n, b) => n + b.length, 0) > SMALL_SOURCE) return { target: tRel, source };
  const literals: Expr[][] = [];
  for (const b of rows) for (let i = 0; i < b.length; i++) literals.push(source.columns.map((c, k) => literal(c.type, getValue(b.columns[k]!, i))));
  const read: Rel = { kind: 'values', rows: literals, columns: source.columns };
  // tRel's columns are the scan's, projected in order: a key column of tRel is the scan column at the same place.
  const preds: Expr[] = [];
  for (const k of keys) {
    const at = tRel.columns.findIndex((c) => c.id === (k.left as ColumnRefExpr).columnId);
    const from = source.columns.findIndex((c) => c.id === (k.right as ColumnRefExpr).columnId);
    const col = scan.columns[at];
    const st = source.columns[from]?.type;
    // Same type and no collation: the IN list then matches exactly the rows ON's equality can.
    if (!col || !st || !typeEquals(col.type, st) || (col.type as { collation?: string }).collation || (st as { collation?: string }).collation) continue;
    const seen = new Map<string, Expr>();
    for (const r of literals) {
      const v = r[from]! as { value: Value };
      if (v.value !== null) seen.set(String(v.value), r[from]!);
    }
    // No source key at all: no target row can match.
    preds.push(seen.size === 0 ? literal(T.BOOL, false) : callScalar('$in', [colRef(col), ...seen.values()], undefined));
  }
  if (preds.length === 0) return { target: tRel, source: read };
  const predicate: Expr = preds.length === 1 ? preds[0]! : { kind: 'logical', type: T.BOOL, op: 'and', args: preds };
  return { target: { ...tRel, input: { kind: 'filter', input: scan, predicate, columns: scan.columns } }, source: read };
}

/**
 * data-manipulation-language.md (Limitations): correlated subqueries in a MERGE's search condition, WHEN
 * conditions, UPDATE SET or INSERT values are not supported. The wording paraphrases the page.
 */
function refuseCorrelatedSubquery(e: Expr, loc: A.Loc): void {
  rewriteExpr(e, (x) => {
    if (x.kind === 'subquery' && x.correlatedColumns.length > 0) throw sqlError('Correlated subqueries are not supported in a MERGE statement\'s ON, WHEN, UPDATE SET or INSERT clauses', loc);
    return undefined;
  });
}

export async function merge(s: Session, st: A.MergeStmt): Promise<QueryResult> {
  const info = dmlTarget(await mutationTarget(s, st.target, st.loc));
  const an = s.analyzer();
  const nc = info.columns.length;
  const target = positionedScan(an, info);
  const tname = st.alias ?? info.id.tableId;
  // Mark target rows with a constant TRUE column so the full join tells matched from unmatched.
  const date = target.date ? [target.date] : [];
  const tRel: Rel = project(an, target.scan, [...target.cols.map((c) => colRef(c)), literal(T.BOOL, true), colRef(target.pos), ...date.map((c) => colRef(c))], [...info.columns.map((c) => c.name), '$t', '$pos', ...date.map(() => '_PARTITIONDATE')]);
  const tCols = tRel.columns.slice(0, nc);
  // ON and WHEN MATCHED see target and source; WHEN NOT MATCHED [BY TARGET] sees
  // only the source and WHEN NOT MATCHED BY SOURCE only the target (a column both
  // have, as in dbt's `insert (id) values (id)`, is not ambiguous there).
  const scope = new Scope();
  const targetOnly = new Scope();
  const sourceOnly = new Scope();
  const targetVar = { name: tname, lname: tname.toLowerCase(), columns: targetColumns(info, tCols, target.date ? tRel.columns[nc + 2] : undefined) };
  scope.addRangeVar(targetVar);
  targetOnly.addRangeVar(targetVar);
  const srcScope = new Scope();
  const src = resolveFrom(an, st.source, srcScope, undefined);
  const sMarkRel = project(an, src, [...src.columns.map((c) => colRef(c)), literal(T.BOOL, true)], [...src.columns.map((c) => c.name), '$s']);
  // Re-point source range variables at the projected copies.
  const idMap = new Map(src.columns.map((c, i) => [c.id, sMarkRel.columns[i]!]));
  for (const rv of srcScope.rangeVars) {
    const moved = { ...rv, columns: rv.columns.map((c) => ({ ...idMap.get(c.id)!, name: c.name })), ...(rv.value ? { value: { ...idMap.get(rv.value.id)!, name: rv.value.name } } : {}) };
    scope.addRangeVar(moved);
    sourceOnly.addRangeVar(moved);
  }
  const scopeOf = (c: A.MergeStmt['clauses'][number]): Scope => (c.match === 'MATCHED' ? scope : c.match === 'NOT MATCHED BY SOURCE' ? targetOnly : sourceOnly);
  // The reference resolver names the conditions 'merge condition' and 'match condition' when they are not BOOL.
  const on = requireBool(resolveExpr(an, st.on, { scope, clause: 'ON clause' }), st.on.loc, 'merge condition');
  // Target rows no source row matches take part only through WHEN NOT MATCHED BY SOURCE: without one, a right join
  // hands on the matched target rows alone (a one-row MERGE into a big table costs one row past the probe).
  const bySource = st.clauses.some((c) => c.match === 'NOT MATCHED BY SOURCE');
  const join: Rel = { kind: 'join', joinType: bySource ? 'full' : 'right', left: tRel, right: sMarkRel, condition: on, lateral: false, columns: [...tRel.columns, ...sMarkRel.columns] };
  const tFlag = colRef(tRel.columns[nc]!);
  const sFlag = colRef(sMarkRel.columns[sMarkRel.columns.length - 1]!);
  const isTrue = (e: Expr) => callScalar('$is_true', [e], st.loc);
  const isNull = (e: Expr) => callScalar('$is_null', [e], st.loc);
  const matched = { kind: 'logical', type: T.BOOL, op: 'and', args: [isTrue(tFlag), isTrue(sFlag)] } as Expr;
  const notMatchedByTarget = { kind: 'logical', type: T.BOOL, op: 'and', args: [isNull(tFlag), isTrue(sFlag)] } as Expr;
  const notMatchedBySource = { kind: 'logical', type: T.BOOL, op: 'and', args: [isTrue(tFlag), isNull(sFlag)] } as Expr;
  // Per row: action index (first clause whose match kind and condition hold), -1 = none.
  const whens: Expr[] = [];
  const thens: Expr[] = [];
  const conditions: Expr[] = [on];
  st.clauses.forEach((c, i) => {
    const kind = c.match === 'MATCHED' ? matched : c.match === 'NOT MATCHED BY SOURCE' ? notMatchedBySource : notMatchedByTarget;
    const cond = c.condition ? isTrue(requireBool(resolveExpr(an, c.condition, { scope: scopeOf(c), clause: 'MERGE WHEN clause' }), c.condition.loc, 'match condition')) : undefined;
    if (cond) conditions.push(cond);
    whens.push(cond ? ({ kind: 'logical', type: T.BOOL, op: 'and', args: [kind, cond] } as Expr) : kind);
    thens.push(literal(T.INT64, BigInt(i)));
  });
  checkTargetFilter(info, tCols, conditions, target.date ? tRel.columns[nc + 2] : undefined);
  const action: Expr = { kind: 'conditional', type: T.INT64, op: 'case', whens, thens, else: literal(T.INT64, -1n) };
  // Output row values: for each clause the new values; rows without action keep the target values.
  const rowExprs: Expr[] = [];
  // Each WHEN ... UPDATE clause's new row values (columns and nested fields, DEFAULT), as UPDATE assigns them.
  const updates = new Map<number, { values: Expr[]; changed: Set<number> }>();
  for (const [i, c] of st.clauses.entries()) {
    // INSERT [(columns)] VALUES (...): one value per named column, or per column of the table without a list.
    if (c.action.kind === 'MergeInsert' && c.action.values && !c.action.columns) noColumnList(info, st.loc);
    if (c.action.kind === 'MergeInsert' && c.action.values) {
      const want = c.action.columns?.length ?? ownColumns(info);
      if (c.action.values.length !== want) throw sqlError(`Inserted row has wrong column count; Has ${c.action.values.length}, expected ${want}`, c.action.values[0]?.loc ?? st.loc);
    }
    if (c.action.kind === 'MergeUpdate') updates.set(i, await assignValues(s, an, info, tname, c.action.set, scopeOf(c), tCols.map((x) => colRef(x)), st.loc));
  }
  for (let ci = 0; ci < info.columns.length; ci++) {
    const col = info.columns[ci]!;
    const cw: Expr[] = [];
    const ct: Expr[] = [];
    for (const [i, c] of st.clauses.entries()) {
      const isI = callScalar('$equal', [action, literal(T.INT64, BigInt(i))], st.loc);
      if (c.action.kind === 'MergeUpdate') {
        const u = updates.get(i)!;
        if (u.changed.has(ci)) {
          cw.push(isI);
          ct.push(u.values[ci]!);
        }
      } else if (c.action.kind === 'MergeInsert') {
        const a = c.action;
        let v: Expr;
        if (a.row) {
          const sc = srcScope.starColumns().map((x) => idMap.get(x.id) ?? x);
          // INSERT ROW writes the source row whole, by position: it has to have the target's width.
          if (!a.columns && sc.length !== ownColumns(info)) throw sqlError(`Inserted row has wrong column count; Has ${sc.length}, expected ${ownColumns(info)}`, st.loc);
          const k = a.columns ? a.columns.findIndex((n) => n.toLowerCase() === col.name.toLowerCase()) : ci < ownColumns(info) ? ci : -1;
          v = k >= 0 && sc[k] ? coerceForWrite(colRef(sc[k]!), col, st.loc) : col === PARTITION_TIME ? await defaultValue(an, info, col) : literal(col.type, null);
        } else {
          const names = a.columns ?? info.columns.map((x) => x.name);
          const k = names.findIndex((n) => n.toLowerCase() === col.name.toLowerCase());
          const ve = k >= 0 ? a.values![k] : undefined;
          v = !ve || ve.kind === 'DefaultExpr' ? await defaultValue(an, info, col) : coerceForWrite(resolveExpr(an, ve, { scope: sourceOnly, clause: 'INSERT VALUES' }), col, ve.loc);
        }
        cw.push(isI);
        ct.push(v);
      }
    }
    rowExprs.push(cw.length ? { kind: 'conditional', type: col.type, op: 'case', whens: cw, thens: ct, else: colRef(tCols[ci]!) } : colRef(tCols[ci]!));
  }
  for (const e of [...conditions, ...rowExprs]) refuseCorrelatedSubquery(e, st.loc);
  sourceFilters(s, an, sMarkRel, conditions, rowExprs);
  const outExprs = [...rowExprs, action, colRef(tRel.columns[nc + 1]!), matched];
  const outNames = [...info.columns.map((c) => c.name), '$action', '$pos', '$matched'];
  // Billed as the statement reads, before narrowTarget's rewrite: the source's columns it uses and the whole target.
  await s.charge(s.optimize(project(an, join, outExprs, outNames)));
  await s.chargeTarget(info);
  if (s.ctx.dryRun) return result('MERGE', {});
  const sides = bySource ? { target: tRel, source: sMarkRel as Rel } : await narrowTarget(s, tRel, target.scan, sMarkRel, on);
  const batches = await s.run(project(an, { ...join, left: sides.target, right: sides.source }, outExprs, outNames));
  // DML page (MERGE, matched_clause): with a WHEN MATCHED ... UPDATE clause, a target row that several source rows
  // match (by ON) is an error when the statement updates or deletes it, whichever of those pairs fires the clause
  // (also when one pair alone does); a row no clause touches is no error. A row several pairs update or delete is an
  // error whatever the clauses (as earlier sets expect of DELETE alone; the page's sentence names UPDATE only).
  const matchedUpdate = st.clauses.some((c) => c.match === 'MATCHED' && c.action.kind === 'MergeUpdate');
  const matchedOnce = new Set<number>();
  const matchedTwice = new Set<number>();
  // Per row: the target row it replaces or deletes (its position), the row it adds.
  let n = 0;
  // Updates first (their old and new rows), then deletions and inserts: APPENDS and CHANGES tell them apart by that order.
  const updatedOld: number[] = [];
  const deletedOnly: number[] = [];
  const updatedNew: Batch[] = [];
  const inserted: Batch[] = [];
  for (const b of batches) {
    const act = b.columns[nc]!;
    const posCol = b.columns[nc + 1]!;
    const matchCol = b.columns[nc + 2]!;
    const keepUpdated: number[] = [];
    const keepInserted: number[] = [];
    for (let i = 0; i < b.length; i++) {
      if (matchedUpdate && getValue(matchCol, i) === true) {
        const pos = Number(getValue(posCol, i));
        if (matchedOnce.has(pos)) matchedTwice.add(pos);
        else matchedOnce.add(pos);
      }
      const a = getValue(act, i) as bigint | null;
      const ai = a === null ? -1 : Number(a);
      if (ai < 0) continue;
      n++;
      const kind = st.clauses[ai]!.action.kind;
      if (kind === 'MergeUpdate') {
        updatedOld.push(Number(getValue(posCol, i)));
        keepUpdated.push(i);
      } else if (kind === 'MergeDelete') deletedOnly.push(Number(getValue(posCol, i)));
      else keepInserted.push(i);
    }
    if (keepUpdated.length > 0) updatedNew.push({ length: keepUpdated.length, columns: b.columns.slice(0, nc).map((v) => takeVector(v, keepUpdated)) });
    if (keepInserted.length > 0) inserted.push({ length: keepInserted.length, columns: b.columns.slice(0, nc).map((v) => takeVector(v, keepInserted)) });
  }
  const deleted = [...updatedOld, ...deletedOnly];
  const added = [...updatedNew, ...inserted];
  if (new Set(deleted).size !== deleted.length || (matchedTwice.size > 0 && deleted.some((p) => matchedTwice.has(p)))) {
    throw new QueryError(MATCHED_TWICE, 'invalidQuery');
  }
  checkRequired(info, added);
  checkResultArrays(info.columns, added);
  await s.ctx.catalog.changeRows(info.id, { deleted, added, updated: updatedOld.length, updatedDeletes: updatedOld.length });
  // Job.md, DmlStats: a MERGE reports the rows it inserted, updated and deleted.
  const dmlStats = { insertedRowCount: String(n - updatedOld.length - deletedOnly.length), updatedRowCount: String(updatedOld.length), deletedRowCount: String(deletedOnly.length) };
  return result('MERGE', { numDmlAffectedRows: n, statistics: { dmlStats } });
}

// ---------------------------------------------------------------- THEN RETURN

/**
 * DML ... THEN RETURN items: the items evaluated over the affected rows
 * (inserted, deleted, or updated values), which are fed back as literal rows.
 */
async function returning(s: Session, info: TableInfo, alias: string | undefined, rows: readonly Batch[], items: readonly A.SelectItem[]): Promise<Pick<QueryResult, 'columns' | 'batches'>> {
  const an = s.analyzer();
  const rowType = { kind: 'STRUCT' as const, fields: info.columns.map((c) => ({ name: c.name, type: c.type })) };
  const values: Value[] = [];
  for (const b of rows) for (let i = 0; i < b.length; i++) values.push(b.columns.map((v) => getValue(v, i)));
  const cols = info.columns.map((c) => an.newColumn(c.name, c.type));
  const src: Rel = { kind: 'array_scan', array: literal({ kind: 'ARRAY', element: rowType }, values), columns: cols };
  const scope = new Scope();
  const name = alias ?? info.id.tableId;
  scope.addRangeVar({ name, lname: name.toLowerCase(), columns: cols });
  const exprs: Expr[] = [];
  const names: string[] = [];
  for (const it of items) {
    if (it.kind === 'SelectStar') {
      cols.forEach((c) => {
        exprs.push(colRef(c));
        names.push(c.name);
      });
    } else {
      exprs.push(resolveExpr(an, it.expr, { scope, clause: 'THEN RETURN' }));
      names.push(it.alias ?? (it.expr.kind === 'PathExpr' ? it.expr.parts[it.expr.parts.length - 1]! : ''));
    }
  }
  const out = outputNames(names);
  const p = project(an, src, exprs, out);
  const batches = await s.run(p);
  return { columns: p.columns.map((c, i) => ({ name: out[i]!, type: c.type })), batches };
}
