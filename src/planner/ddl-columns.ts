// Column definitions of CREATE TABLE and ALTER TABLE: constraints, NOT NULL fields,
// COLLATE, DEFAULT expressions, OPTIONS of nested fields, and which type changes
// ALTER COLUMN SET DATA TYPE allows.
import type * as A from '../../grammar/ast.js';
import { coerce, originOf } from '../analyzer/coercion.js';
import { resolveExpr } from '../analyzer/expr.js';
import { tableNotFound } from '../analyzer/names.js';
import { Scope } from '../analyzer/scope.js';
import { canCoerce, typeFromNode } from '../analyzer/types.js';
import type { TableId } from '../storage/api.js';
import { hasTypeParams, restParamsText, restTypeParams, tableRestField, type Column, type RestField } from '../types/schema.js';
import { collationNameError, withDefaultCollation } from '../functions/collation.js';
import { arrayOf, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import { fitParams, ParamRefusal } from '../types/table-values.js';
import { shapeFits } from './dml.js';
import type { Value } from '../types/values.js';
import type { Session } from './session.js';
import { sqlError } from '../analyzer/errors.js';
import { descriptionError, fieldNameError, reservedColumnName } from '../storage/resources.js';
import { REST_TYPE_SQL, roundingMode, checkColumnOptions, evalOption, targetId } from './ddl-common.js';

export interface RestTableConstraints {
  primaryKey?: { columns: string[] };
  foreignKeys?: { name?: string; referencedTable: { projectId: string; datasetId: string; tableId: string }; columnReferences: { referencingColumn: string; referencedColumn: string }[] }[];
}

/**
 * PRIMARY KEY / FOREIGN KEY ... NOT ENFORCED, of the columns and of the table, as the REST resource keeps them
 * (tableConstraints), checked as the service checks them (primary-foreign-keys): NOT ENFORCED is required, a table
 * has one primary key, key columns are columns of the table (`columns`, the table being made or altered, `self`),
 * and a foreign key names an existing table's columns, as many as it has.
 */
export function tableConstraints(s: Session, defs: readonly A.ColumnDef[], constraints: readonly A.TableConstraint[], loc: A.Loc, columns: readonly Column[], self: TableId): RestTableConstraints | undefined {
  const out: RestTableConstraints = {};
  const has = (cols: readonly Column[], n: string) => cols.some((c) => c.name.toLowerCase() === n.toLowerCase());
  // Key errors in the reference analyzer's wording (resolver_stmt.cc ResolvePrimaryKey / ResolveForeignKeyReference).
  const own = (what: 'primary' | 'foreign') => (n: string) => {
    if (!has(columns, n)) throw sqlError(`Unsupported ${what} key column ${n} either does not exist or is a pseudocolumn`, loc);
  };
  for (const c of [...defs.filter((d) => d.enforced), ...constraints.filter((k) => k.enforced)]) {
    const what = c.kind === 'ColumnDef' ? (c.primaryKey ? 'PRIMARY KEY' : 'FOREIGN KEY') : c.kind === 'PrimaryKey' ? 'PRIMARY KEY' : 'FOREIGN KEY';
    throw sqlError(`ENFORCED ${what} constraints are not supported; declare the key NOT ENFORCED`, c.kind === 'ColumnDef' ? c.loc : loc);
  }
  if (defs.filter((d) => d.primaryKey).length + constraints.filter((k) => k.kind === 'PrimaryKey').length > 1) {
    throw sqlError('Multiple PRIMARY KEY definitions found in CREATE TABLE', loc);
  }
  unnamedPrimaryKey(constraints, loc);
  // Constraint names are one per table (ALTER TABLE ADD CONSTRAINT refuses a name the table has).
  const names = new Set<string>();
  for (const c of constraints) {
    if (!c.name) continue;
    if (names.has(c.name.toLowerCase())) throw sqlError(`Duplicate constraint name ${c.name}`, loc);
    names.add(c.name.toLowerCase());
  }
  const foreignKey = (name: string | undefined, cols: readonly string[], ref: { table: A.Path; columns: string[] }) => {
    cols.forEach(own('foreign'));
    if (ref.columns.length !== cols.length) throw sqlError('Number of foreign columns does not match the number of referenced columns', loc);
    const t = targetId(s, ref.table, loc);
    // information-schema-table-constraints: "A foreign key cannot refer to a column in the same table".
    if (t.projectId === self.projectId && t.datasetId === self.datasetId && t.tableId === self.tableId) {
      throw sqlError(`A FOREIGN KEY cannot reference a column in the same table ${t.projectId}.${t.datasetId}.${t.tableId}`, loc);
    }
    const refInfo = s.ctx.catalog.getTable(t);
    const refCols = refInfo?.columns;
    if (!refCols) throw tableNotFound(s.analyzer(), t);
    // A foreign key references a table's primary key (primary-foreign-keys), never a view's columns.
    if (refInfo && refInfo.kind !== 'TABLE') throw sqlError(`FOREIGN KEY cannot reference ${t.projectId}.${t.datasetId}.${t.tableId}, which is a ${refInfo.kind === 'MATERIALIZED_VIEW' ? 'materialized view' : refInfo.kind.toLowerCase()}; it must reference a table`, loc);
    for (const n of ref.columns) if (!has(refCols, n)) throw sqlError(`Column name ${n} not found in ${t.projectId}.${t.datasetId}.${t.tableId}`, loc);
    (out.foreignKeys ??= []).push({
      ...(name ? { name } : {}),
      referencedTable: { projectId: t.projectId, datasetId: t.datasetId, tableId: t.tableId },
      columnReferences: cols.map((c, i) => ({ referencingColumn: c, referencedColumn: ref.columns[i] ?? '' })),
    });
  };
  const pk = defs.filter((d) => d.primaryKey).map((d) => d.name);
  for (const c of constraints) if (c.kind === 'PrimaryKey') pk.push(...c.columns);
  pk.forEach(own('primary'));
  checkKeyColumns(pk, columns, 'PRIMARY KEY', loc);
  checkKeyColumns([...defs.filter((d) => d.references).map((d) => d.name), ...constraints.flatMap((c) => (c.kind === 'ForeignKey' ? c.columns : []))], columns, 'FOREIGN KEY', loc);
  const seen = new Set<string>();
  for (const n of pk) {
    if (seen.has(n.toLowerCase())) throw sqlError(`Duplicate column ${n} specified in PRIMARY KEY of CREATE TABLE`, loc);
    seen.add(n.toLowerCase());
  }
  // data-definition-language (ALTER COLUMN SET DEFAULT): a primary key column takes no default value.
  for (const n of pk) {
    if (defs.some((d) => d.default && d.name.toLowerCase() === n.toLowerCase())) throw primaryKeyDefault(n, loc);
  }
  if (pk.length) out.primaryKey = { columns: pk };
  for (const d of defs) if (d.references) foreignKey(undefined, [d.name], d.references);
  for (const c of constraints) if (c.kind === 'ForeignKey' && c.references) foreignKey(c.name, c.columns, c.references);
  checkForeignKeyCount(out.foreignKeys?.length ?? 0, loc);
  return out.primaryKey || out.foreignKeys ? out : undefined;
}

/** primary-foreign-keys.md (Limitations): a table has at most 64 foreign keys, however they were added. */
export function checkForeignKeyCount(n: number, loc: A.Loc): void {
  if (n > 64) throw sqlError(`Too many foreign keys: the table would have ${n}; at most 64 are allowed`, loc);
}

/** primary-foreign-keys (Limitations): primary keys can't be named; the grammar gives CONSTRAINT name to foreign keys only. */
export function unnamedPrimaryKey(constraints: readonly A.TableConstraint[], loc: A.Loc): void {
  const named = constraints.find((c) => c.kind === 'PrimaryKey' && c.name);
  if (named) throw sqlError(`A PRIMARY KEY cannot be named (CONSTRAINT ${named.name}); only FOREIGN KEY constraints take a name`, loc);
}

export function primaryKeyDefault(column: string, loc: A.Loc): Error {
  return sqlError(`Column ${column} is part of the PRIMARY KEY and cannot have a default value`, loc);
}

/** The types a key column may have (primary-foreign-keys.md, Limitations: BYTES among them). */
const KEY_TYPES = new Set(['BIGNUMERIC', 'BOOL', 'BYTES', 'DATE', 'DATETIME', 'INT64', 'NUMERIC', 'STRING', 'TIMESTAMP']);
/** information-schema-table-constraints: "Primary keys cannot exceed 16 columns". */
const MAX_PRIMARY_KEY_COLUMNS = 16;

/**
 * Key columns are top-level columns of the key types (a STRUCT, ARRAY, FLOAT64, GEOGRAPHY, JSON, INTERVAL, TIME or
 * RANGE column is none), and a primary key has at most 16 of them. Columns that do not exist are checked by the caller.
 */
export function checkKeyColumns(names: readonly string[], columns: readonly Column[], what: 'PRIMARY KEY' | 'FOREIGN KEY', loc: A.Loc): void {
  if (what === 'PRIMARY KEY' && names.length > MAX_PRIMARY_KEY_COLUMNS) {
    throw sqlError(`A PRIMARY KEY can have at most ${MAX_PRIMARY_KEY_COLUMNS} columns, but ${names.length} were given`, loc);
  }
  for (const n of names) {
    const c = columns.find((x) => x.name.toLowerCase() === n.toLowerCase());
    if (c && !KEY_TYPES.has(c.type.kind)) {
      throw sqlError(`${what} column ${c.name} has type ${typeToSql(c.type)}; key columns must be of type BIGNUMERIC, BOOL, BYTES, DATE, DATETIME, INT64, NUMERIC, STRING or TIMESTAMP`, loc);
    }
  }
}

export function columnsFromDefs(defs: readonly A.ColumnDef[]): Column[] {
  const seen = new Set<string>();
  return defs.map((d) => {
    const l = d.name.toLowerCase();
    if (seen.has(l)) throw sqlError(`Duplicate column name ${d.name} in CREATE TABLE`, d.loc);
    seen.add(l);
    checkColumnName(d.name, d.loc);
    checkColumnOptions(d.options);
    checkFieldOptions(d.type);
    checkColumnCollate(d);
    return { name: d.name, type: typeFromNode(d.type), required: d.notNull };
  });
}

/** A column may not take a name of the service's pseudo-columns (the REST schema's check: storage/resources.ts). */
export function checkColumnName(name: string, loc: A.Loc): void {
  const why = reservedColumnName(name) ?? fieldNameError(name);
  if (why) throw sqlError(why, loc);
}

/** The field names inside a column type a query made (CREATE TABLE AS SELECT), held to the column name rules. */
export function checkTypeFieldNames(t: SqlType, loc: A.Loc): void {
  if (t.kind === 'ARRAY') return checkTypeFieldNames(t.element, loc);
  if (t.kind !== 'STRUCT') return;
  for (const f of t.fields) {
    const bad = f.name ? fieldNameError(f.name) : undefined;
    if (bad) throw sqlError(bad, loc);
    checkTypeFieldNames(f.type, loc);
  }
}

/** OPTIONS of nested STRUCT fields take the column options too. */
export function checkFieldOptions(t: A.TypeNode): void {
  const inner = t.kind === 'ArrayType' ? t.element : t;
  if (inner.kind !== 'StructType') return;
  for (const f of inner.fields) {
    const bad = f.name === undefined ? undefined : fieldNameError(f.name);
    if (bad) throw sqlError(bad);
    checkColumnOptions(f.options);
    checkFieldOptions(f.type);
  }
}

/**
 * A column's type with a table's (or dataset's) default collation on the STRING parts that declare none. A part
 * declared COLLATE '' keeps none: collation-concepts says a column with empty collation doesn't inherit the table's
 * default. `def` is the column's definition (absent for CREATE TABLE AS SELECT columns).
 */
export function defaultCollated(t: SqlType, def: A.ColumnDef | undefined, spec: string): SqlType {
  if (def?.collate === '') return t;
  const walk = (x: SqlType, node: A.TypeNode | undefined): SqlType => {
    if (node?.kind === 'ScalarType' && node.collate === '') return x;
    if (x.kind === 'ARRAY') return arrayOf(walk(x.element, node?.kind === 'ArrayType' ? node.element : undefined));
    if (x.kind === 'STRUCT') {
      const fields = node?.kind === 'StructType' ? node.fields : undefined;
      return { kind: 'STRUCT', fields: x.fields.map((f, i) => ({ name: f.name, type: fields?.[i]?.collate === '' ? f.type : walk(f.type, fields?.[i]?.type) })) };
    }
    return withDefaultCollation(x, spec);
  };
  return walk(t, def?.type);
}

/**
 * SET DATA TYPE's new type with the column's collations kept where it writes no COLLATE; undefined when it writes
 * another one (ALTER TABLE SET DEFAULT COLLATE: an existing collation specification on a column cannot be updated).
 */
export function retypedCollation(from: SqlType, node: A.TypeNode, to: SqlType): SqlType | undefined {
  if (node.kind === 'ScalarType' && from.kind === 'STRING' && to.kind === 'STRING') {
    if (node.collate === undefined) return from.collation ? { ...to, collation: from.collation } : to;
    return node.collate === (from.collation ?? '') ? to : undefined;
  }
  if (node.kind === 'ArrayType' && from.kind === 'ARRAY' && to.kind === 'ARRAY') {
    const el = retypedCollation(from.element, node.element, to.element);
    return el && arrayOf(el);
  }
  if (node.kind === 'StructType' && from.kind === 'STRUCT' && to.kind === 'STRUCT' && from.fields.length === to.fields.length) {
    const fields = to.fields.map((f, i) => {
      const t = node.fields[i] ? retypedCollation(from.fields[i]!.type, node.fields[i]!.type, f.type) : f.type;
      return t && { ...f, type: t };
    });
    return fields.every((f) => f !== undefined) ? { kind: 'STRUCT', fields: fields as typeof to.fields } : undefined;
  }
  return to;
}

/** COLLATE takes a STRING column only (data-definition-language: column_schema), and a collation DDL may set, at any depth. */
export function checkColumnCollate(d: A.ColumnDef): void {
  if (d.collate !== undefined) {
    const t = typeFromNode(d.type);
    if (t.kind !== 'STRING') throw sqlError(`COLLATE is not allowed on column ${d.name} of type ${typeToSql(t)}; only STRING columns take a collation`, d.loc);
    checkCollationName(d.collate, d.loc);
  }
  const nested = (n: A.TypeNode): void => {
    if (n.kind === 'ScalarType' && n.collate !== undefined) checkCollationName(n.collate, d.loc);
    else if (n.kind === 'ArrayType') nested(n.element);
    else if (n.kind === 'StructType') {
      for (const f of n.fields) {
        if (f.collate !== undefined) checkCollationName(f.collate, d.loc);
        nested(f.type);
      }
    }
  };
  nested(d.type);
}

/**
 * A collation DDL sets (a column's COLLATE, a table's or dataset's DEFAULT COLLATE) is 'und:ci' or empty
 * (collation-concepts Limitations: no other collation specifications), though a query's COLLATE takes what the
 * reference does. 'binary', the reference's name of the empty one, stays: the page says it can't be set explicitly,
 * but the shared GoogleSQL cases make their tables with it. True when it is.
 */
export function checkCollationName(name: string | undefined, loc: A.Loc): true {
  if (name === undefined || name === '' || ['und:ci', 'binary'].includes(name.toLowerCase())) return true;
  throw sqlError(collationNameError(name) ?? `Collation '${name}' is not supported: a table, column or dataset takes 'und:ci' or an empty collation`, loc);
}

/** The path of a NOT NULL field inside a column type (STRUCT fields, at any depth); undefined when it has none. */
export function requiredFieldPath(t: A.TypeNode, prefix: string): string | undefined {
  if (t.kind === 'ArrayType') return requiredFieldPath(t.element, prefix);
  if (t.kind !== 'StructType') return undefined;
  for (const f of t.fields) {
    const path = `${prefix}.${f.name ?? ''}`;
    if (f.notNull) return path;
    const inner = requiredFieldPath(f.type, path);
    if (inner) return inner;
  }
  return undefined;
}

/** Source text of an expression starting at `offset` (up to the next top-level `,`, `)` or `;`). */
export function exprText(sql: string, offset: number): string {
  let depth = 0;
  let quote: string | undefined;
  for (let i = offset; i < sql.length; i++) {
    const ch = sql[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    else if (ch === '(' || ch === '[') depth++;
    else if (ch === ')' || ch === ']') {
      if (depth === 0) return sql.slice(offset, i).trim();
      depth--;
    } else if ((ch === ',' || ch === ';') && depth === 0) return sql.slice(offset, i).trim();
    // What may follow a column's DEFAULT expression: its OPTIONS, NOT NULL (not an expression's IS NOT NULL).
    else if (depth === 0 && /\s/.test(ch) && /^\s+(OPTIONS\s*\(|NOT\s+NULL\b)/i.test(sql.slice(i, i + 24)) && !/\bIS\s*$/i.test(sql.slice(offset, i))) return sql.slice(offset, i).trim();
  }
  return sql.slice(offset).trim();
}

/**
 * Column extras the REST schema carries (OPTIONS(description=...), DEFAULT
 * expressions): patched into the stored schema after the table exists.
 */
/** Whether a column type has OPTIONS on some nested STRUCT field (`STRUCT<x INT64 OPTIONS(description = '...')>`). */
export function hasNestedOptions(t: A.TypeNode): boolean {
  const inner = t.kind === 'ArrayType' ? t.element : t;
  return inner.kind === 'StructType' && inner.fields.some((f) => !!f.options?.length || hasNestedOptions(f.type));
}

/** Descriptions and NOT NULL (mode REQUIRED) of nested STRUCT fields onto the REST field's sub-fields (same order). */
export async function nestedFieldExtras(s: Session, t: A.TypeNode, f: RestField): Promise<void> {
  const inner = t.kind === 'ArrayType' ? t.element : t;
  if (inner.kind !== 'StructType' || !f.fields) return;
  for (const [i, sf] of inner.fields.entries()) {
    const rf = f.fields[i];
    if (!rf) continue;
    if (sf.notNull && rf.mode !== 'REPEATED') rf.mode = 'REQUIRED';
    await columnOptionFields(s, sf.options, rf);
    await nestedFieldExtras(s, sf.type, rf);
  }
}

/**
 * A column's (or STRUCT field's) OPTIONS onto its REST field: description, rounding_mode (roundingMode, which
 * writes to a parameterized NUMERIC/BIGNUMERIC use: types/table-values.ts). NULL removes the option.
 */
export async function columnOptionFields(s: Session, opts: readonly A.OptionEntry[] | undefined, f: RestField): Promise<void> {
  for (const o of opts ?? []) {
    const key = o.name.toLowerCase();
    if (key !== 'description' && key !== 'rounding_mode') continue;
    const tv = await evalOption(s, o);
    const v = tv.value;
    if (v !== null && tv.type.kind !== 'STRING') throw sqlError(`Option ${o.name} value has type ${typeToSql(tv.type)} which cannot be coerced to expected type STRING`, o.value.loc);
    // rounding_mode applies to values written to a NUMERIC or BIGNUMERIC column or field (data-definition-language: column_option_list).
    if (key === 'rounding_mode' && v !== null && f.type !== 'NUMERIC' && f.type !== 'BIGNUMERIC') throw sqlError(`Option rounding_mode applies to NUMERIC and BIGNUMERIC columns only, not to ${f.name} of type ${REST_TYPE_SQL[f.type] ?? f.type}`, o.value.loc);
    if (key === 'description') {
      if (v === null) delete f.description;
      else {
        const why = descriptionError(f.name, String(v));
        if (why) throw sqlError(why, o.value.loc);
        f.description = String(v);
      }
    } else if (v === null) delete f.roundingMode;
    else f.roundingMode = roundingMode(v, o.value.loc);
  }
}

/** The table's default rounding mode onto its NUMERIC/BIGNUMERIC fields that set none (applied when the fields are made). */
export function defaultRounding(f: RestField, mode: string | undefined): void {
  if (!mode) return;
  if ((f.type === 'NUMERIC' || f.type === 'BIGNUMERIC') && f.roundingMode === undefined) f.roundingMode = mode;
  for (const sf of f.fields ?? []) defaultRounding(sf, mode);
}

/** A column DEFAULT must be assignable to the column's type (the service's analyzer checks it when the column is defined). */
/** The functions a DEFAULT expression may call (default-values: "a literal or one of the following functions"). */
const DEFAULT_FUNCTIONS = new Set(['CURRENT_DATE', 'CURRENT_DATETIME', 'CURRENT_TIME', 'CURRENT_TIMESTAMP', 'GENERATE_UUID', 'RAND', 'SESSION_USER', 'ST_GEOGPOINT']);

const LITERALS = new Set(['IntLiteral', 'FloatLiteral', 'StringLiteral', 'BytesLiteral', 'BoolLiteral', 'NullLiteral', 'TypedLiteral', 'RangeLiteral']);

/**
 * The first part of a DEFAULT expression that is neither a literal nor a call of DEFAULT_FUNCTIONS (default-values:
 * "a literal or one of the following functions", and STRUCT or ARRAY values composed of them): an operator, CAST, a
 * column, a parameter, a call of another function. A sign on a number is part of its literal.
 */
function disallowedDefaultPart(e: A.Expr): A.Expr | undefined {
  const first = (xs: readonly A.Expr[]): A.Expr | undefined => {
    for (const x of xs) {
      const hit = disallowedDefaultPart(x);
      if (hit) return hit;
    }
    return undefined;
  };
  if (LITERALS.has(e.kind)) return undefined;
  switch (e.kind) {
    case 'UnaryExpr':
      return (e.op === '-' || e.op === '+') && (e.operand.kind === 'IntLiteral' || e.operand.kind === 'FloatLiteral' || e.operand.kind === 'TypedLiteral') ? undefined : e;
    case 'IntervalExpr':
      return disallowedDefaultPart(e.value);
    case 'ArrayExpr':
      return first(e.elements);
    case 'StructExpr':
      return first(e.fields.map((f) => f.expr));
    case 'FunctionCall':
      return DEFAULT_FUNCTIONS.has(e.name.join('.').toUpperCase()) ? first(e.args) : e;
    default:
      return e;
  }
}

export function checkDefault(s: Session, e: A.Expr, t: SqlType): void {
  const x = resolveExpr(s.analyzer(), e, { scope: new Scope(), clause: 'a column default expression', noSubqueries: true });
  const bad = disallowedDefaultPart(e);
  if (bad?.kind === 'FunctionCall') throw sqlError(`Function ${bad.name.join('.').toUpperCase()} is not allowed in a column default value; a default value is a literal or one of ${[...DEFAULT_FUNCTIONS].join(', ')}`, bad.loc);
  // A constructor's NULL or literal fields fit the column's field types, as in INSERT VALUES (default-values: a STRUCT default may hold NULL).
  if (!typeEquals(x.type, t) && !canCoerce(x.type, t, originOf(x)) && !shapeFits(x, t)) {
    throw sqlError(`Column default expression has type ${typeToSql(x.type)} which cannot be assigned to column type ${typeToSql(t)}`, e.loc);
  }
  if (bad) throw sqlError(`A column default value is a literal or one of ${[...DEFAULT_FUNCTIONS].join(', ')} (or an ARRAY or STRUCT of them), not an expression`, bad.loc);
  // A STRING literal coerces to a date/time column only when its text is such a value (as in INSERT VALUES).
  coerce(x, t, e.loc);
}

/**
 * The value a column default gives must fit the column (default-values: no NULL default for a REQUIRED column, an
 * ARRAY default neither NULL nor holding NULL elements, a value that conforms to a parameterized type). The default is
 * evaluated once here for the check only; rows get it evaluated when they are written.
 */
export async function checkDefaultValue(s: Session, e: A.Expr, c: Column, f: RestField | undefined): Promise<void> {
  const v = (await s.evalScalar(e, s.analyzer(), c.type)).value;
  if (v === null && c.required) throw sqlError(`The default value of REQUIRED column ${c.name} cannot be NULL`, e.loc);
  if (c.type.kind === 'ARRAY' && (v === null || (v as Value[]).some((x) => x === null))) {
    throw sqlError(`The default value of ARRAY column ${c.name} cannot be NULL or hold NULL elements`, e.loc);
  }
  const params = f ? paramsOfField(c.type, f) : undefined;
  if (v !== null && params) {
    const r = fitParams(c.type.kind, params, v);
    if (r instanceof ParamRefusal) throw sqlError(`The default value of column ${c.name} does not fit its type: ${r.message}`, e.loc);
  }
  // The same constraints on the fields of a STRUCT default (or of the STRUCTs of an ARRAY default), at any depth.
  const bad = v === null ? undefined : nestedDefaultFault(c.name, c.type, f, v, true);
  if (bad) throw sqlError(`The default value of column ${c.name} ${bad}`, e.loc);
}

/**
 * What a non-NULL default value breaks below its column (`top`: the column itself, whose own NULL and parameters are
 * checked by the caller): a NULL in a REQUIRED field, a NULL element of a nested ARRAY, a field value that does not fit
 * the field's parameterized type. The field modes and parameters are the REST field's (SqlType has neither).
 */
function nestedDefaultFault(path: string, t: SqlType, f: RestField | undefined, v: Value, top = false): string | undefined {
  if (t.kind === 'ARRAY') {
    for (const x of v as Value[]) {
      if (x === null) return top ? undefined : `cannot hold NULL elements in ARRAY field ${path}`;
      const bad = nestedDefaultFault(path, t.element, f, x);
      if (bad) return bad;
    }
    return undefined;
  }
  if (t.kind === 'STRUCT') {
    const struct = v as Value[];
    for (const [i, sf] of t.fields.entries()) {
      const name = `${path}.${sf.name}`;
      const rf = f?.fields?.find((x) => x.name.toLowerCase() === sf.name.toLowerCase());
      const x = struct[i] ?? null;
      if (x === null) {
        if (rf?.mode === 'REQUIRED') return `cannot be NULL in REQUIRED field ${name}`;
        continue;
      }
      const bad = nestedDefaultFault(name, sf.type, rf, x);
      if (bad) return bad;
    }
    return undefined;
  }
  const params = !top && f ? paramsOfField(t, f) : undefined;
  const r = params ? fitParams(t.kind, params, v) : undefined;
  return r instanceof ParamRefusal ? `does not fit the type of field ${path}: ${r.message}` : undefined;
}

/** STRING(L) / BYTES(L): [L]; NUMERIC(P[, S]): [P] or [P, S]; undefined for a type without parameters. */
function paramsOfField(t: SqlType, f: RestField): number[] | undefined {
  if ((t.kind === 'STRING' || t.kind === 'BYTES') && f.maxLength !== undefined) return [Number(f.maxLength)];
  if ((t.kind === 'NUMERIC' || t.kind === 'BIGNUMERIC') && f.precision !== undefined) return [Number(f.precision), ...(f.scale === undefined ? [] : [Number(f.scale)])];
  return undefined;
}

/**
 * Whether type parameters `to` take every value `from` allows (SET DATA TYPE widening): a STRING/BYTES length
 * not shorter (none is unbounded), a NUMERIC/BIGNUMERIC with no fewer integer digits and no smaller scale.
 */
function paramsWiden(from: Pick<RestField, 'maxLength' | 'precision' | 'scale'> | undefined, to: Pick<RestField, 'maxLength' | 'precision' | 'scale'>): boolean {
  if (to.maxLength !== undefined) return from?.maxLength !== undefined && Number(to.maxLength) >= Number(from.maxLength);
  if (to.precision !== undefined) {
    if (from?.precision === undefined) return false;
    const [fp, fs, tp, ts] = [Number(from.precision), Number(from.scale ?? 0), Number(to.precision), Number(to.scale ?? 0)];
    return ts >= fs && tp - ts >= fp - fs;
  }
  return true;
}

/**
 * ALTER COLUMN SET DATA TYPE's conversions between types (data-definition-language: the complete list), and
 * TIMESTAMP to TIMESTAMP(12), which is a parameter's widening (more fractional digits) though a type of its own here.
 */
const SET_DATA_TYPE_CONVERSIONS: Partial<Record<SqlType['kind'], readonly SqlType['kind'][]>> = {
  INT64: ['NUMERIC', 'BIGNUMERIC', 'FLOAT64'],
  NUMERIC: ['BIGNUMERIC', 'FLOAT64'],
  TIMESTAMP: ['TIMESTAMP_PICOS'],
};

/**
 * Whether a column of type `from` (its REST field `f`: the parameters) may SET DATA TYPE to `to`: a scalar by a
 * listed conversion (INT64 -> NUMERIC, ...) or to the same type with parameters no narrower; a STRUCT field by
 * field, the same names in the same order (managing-table-schemas: a nested column's field INT64 -> NUMERIC;
 * data-definition-language: a parameterized type's widening); an ARRAY of scalars by its element's parameters.
 */
export function setDataTypeAllowed(from: SqlType, f: RestField | undefined, to: SqlType): boolean {
  if (from.kind === 'ARRAY' || to.kind === 'ARRAY') {
    // An ARRAY's scalar element keeps its type (its parameters may widen); a field within an ARRAY of STRUCTs
    // cannot change (managing-table-schemas: "altering a field within an array of STRUCTs ... isn't supported").
    if (from.kind !== 'ARRAY' || to.kind !== 'ARRAY' || from.element.kind !== to.element.kind) return false;
    if (from.element.kind === 'STRUCT') return typeWithParams(from.element, f) === typeToSql(to.element);
    return setDataTypeAllowed(from.element, f, to.element);
  }
  if (from.kind === 'STRUCT' || to.kind === 'STRUCT') {
    if (from.kind !== 'STRUCT' || to.kind !== 'STRUCT' || from.fields.length !== to.fields.length) return false;
    return from.fields.every((x, k) => {
      const y = to.fields[k]!;
      const sub = f?.fields?.find((g) => g.name.toLowerCase() === x.name.toLowerCase());
      return x.name.toLowerCase() === y.name.toLowerCase() && setDataTypeAllowed(x.type, sub, y.type);
    });
  }
  if (from.kind !== to.kind) return SET_DATA_TYPE_CONVERSIONS[from.kind]?.includes(to.kind) === true;
  return paramsWiden(f, restTypeParams(to));
}

/** A STRUCT column's new REST fields (`fresh`, from its new type) keeping what the old ones had besides the type (descriptions...). */
export function retypedFields(old: readonly RestField[] | undefined, fresh: readonly RestField[]): RestField[] {
  return fresh.map((ff) => {
    const of = old?.find((g) => g.name.toLowerCase() === ff.name.toLowerCase());
    if (!of) return ff;
    const { maxLength: _m, precision: _p, scale: _s, fields: oldSub, ...bare } = of;
    // SET DATA TYPE changes no mode (a field's REQUIRED stays; the new type cannot say NOT NULL).
    return { ...bare, type: ff.type, mode: of.mode ?? ff.mode, ...restParamsOf(ff), ...(ff.fields ? { fields: retypedFields(oldSub, ff.fields) } : {}) };
  });
}

/** A stored column's type as SQL text with the parameters its REST field keeps, at any depth (STRUCT<a STRING(10)>). */
export function typeWithParams(t: SqlType, f: RestField | undefined): string {
  if (t.kind === 'ARRAY') return `ARRAY<${typeWithParams(t.element, f)}>`;
  if (t.kind === 'STRUCT') return `STRUCT<${t.fields.map((x) => `${x.name} ${typeWithParams(x.type, f?.fields?.find((g) => g.name.toLowerCase() === x.name.toLowerCase()))}`).join(', ')}>`;
  return typeToSql(t) + restParamsText(f);
}

export function restParamsOf(f: RestField): Pick<RestField, 'maxLength' | 'precision' | 'scale'> {
  return { ...(f.maxLength !== undefined ? { maxLength: f.maxLength } : {}), ...(f.precision !== undefined ? { precision: f.precision } : {}), ...(f.scale !== undefined ? { scale: f.scale } : {}) };
}

/** The schema's fields with the column definitions' defaults, descriptions and nested NOT NULL fields; undefined when they have none. */
export async function schemaExtras(s: Session, columns: readonly Column[], defs: readonly A.ColumnDef[] | undefined, rounding?: string): Promise<RestField[] | undefined> {
  if (!rounding && !defs?.some((d) => d.default || d.options?.length || hasNestedOptions(d.type) || requiredFieldPath(d.type, d.name) !== undefined) && !columns.some((c) => hasTypeParams(c.type))) return undefined;
  // STRING(10), NUMERIC(10, 2), at any depth: the schema keeps the parameters (maxLength, precision, scale) as tables.get shows them.
  const fields = columns.map((c) => tableRestField(c.name, c.type, c.required));
  for (const d of defs ?? []) {
    const f = fields.find((x) => x.name.toLowerCase() === d.name.toLowerCase());
    if (!f) continue;
    const col = columns.find((c) => c.name.toLowerCase() === d.name.toLowerCase())!;
    if (d.default) {
      checkDefault(s, d.default, col.type);
      f.defaultValueExpression = exprText(s.ctx.sql, d.default.loc.offset);
    }
    await columnOptionFields(s, d.options, f);
    await nestedFieldExtras(s, d.type, f);
    // After the nested fields' NOT NULL modes are on the REST field.
    if (d.default) await checkDefaultValue(s, d.default, col, f);
  }
  for (const f of fields) defaultRounding(f, rounding);
  return fields;
}
