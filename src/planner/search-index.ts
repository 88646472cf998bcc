// CREATE / DROP SEARCH INDEX and VECTOR INDEX: the index is kept with its table (hidden `searchIndexes` /
// `vectorIndexes` of the stored resource) for INFORMATION_SCHEMA.SEARCH_INDEX* and VECTOR_INDEX*.
// Queries never need one: SEARCH() scans the table and VECTOR_SEARCH searches exactly (brute force); a vector
// index only lends VECTOR_SEARCH its distance_type when the call gives none and the index is populated (which needs
// a table of 10 MB: analyzer/search-index.ts indexPopulated). Both kinds
// report the CREATE_SEARCH_INDEX / DROP_SEARCH_INDEX statement types: JobStatistics2.statementType lists no vector ones.
import type * as A from '../../grammar/ast.js';
import { sqlError } from '../analyzer/errors.js';
import { columnDataTypes, indexColumnRows, indexedPaths, searchIndexesOf, vectorIndexesOf, type SearchIndex, type VectorIndex } from '../analyzer/search-index.js';
import type { TableId } from '../storage/api.js';
import type { Column } from '../types/schema.js';
import { splitPath } from '../analyzer/names.js';
import { policiesOf } from '../analyzer/row-access.js';
import { partitioning, partitionSpecText } from './partition-spec.js';
import { T, arrayOf, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import { QueryError, type QueryResult } from './api.js';
import { evalOption } from './ddl-common.js';
import { writeTarget } from './dml.js';
import type { Session } from './session.js';
import { fq, statementResult } from './statement-type.js';

/** search-index / data-definition-language (CREATE SEARCH INDEX): the index options and their types. */
const OPTION_TYPES: ReadonlyMap<string, SqlType> = new Map<string, SqlType>([
  ['analyzer', T.STRING],
  ['analyzer_options', T.STRING],
  ['data_types', arrayOf(T.STRING)],
  ['default_index_column_granularity', T.STRING],
]);
/** data-definition-language (index_column_option_list): the options of one indexed column. */
const COLUMN_OPTION_TYPES: ReadonlyMap<string, SqlType> = new Map<string, SqlType>([
  ['index_granularity', T.STRING],
  ['data_types', arrayOf(T.STRING)],
]);
const ANALYZERS = ['LOG_ANALYZER', 'NO_OP_ANALYZER', 'PATTERN_ANALYZER'];
const DATA_TYPES = ['STRING', 'INT64', 'TIMESTAMP'];
const GRANULARITIES = ['COLUMN', 'GLOBAL'];

/**
 * An option's value as SEARCH_INDEX_OPTIONS shows it (information-schema-search-index-options examples): a STRING
 * as itself, an ARRAY<STRING> as a list of double-quoted strings.
 */
export function optionText(v: unknown): string {
  return typeof v === 'string' ? v : Array.isArray(v) ? `[${v.map((x) => JSON.stringify(x)).join(', ')}]` : JSON.stringify(v);
}

type ShownOption = { name: string; type: string; value: string };

/** OPTIONS of an index or an indexed column: each known once, of its type; the values, and the set ones as INFORMATION_SCHEMA shows them. */
async function indexOptionValues(s: Session, opts: readonly A.OptionEntry[] | undefined, types: ReadonlyMap<string, SqlType>, what: string): Promise<{ values: Map<string, unknown>; shown: ShownOption[] }> {
  const values = new Map<string, unknown>();
  const shown: ShownOption[] = [];
  for (const o of opts ?? []) {
    const key = o.name.toLowerCase();
    const want = types.get(key);
    if (!want) throw sqlError(`Unknown option ${o.name} for ${what}`, o.value.loc);
    if (values.has(key)) throw sqlError(`Duplicate option ${o.name}`, o.value.loc);
    const v = await evalOption(s, o);
    if (!typeEquals(v.type, want) && !(v.value === null)) {
      throw sqlError(`Invalid value for option ${key}: expected ${typeToSql(want)} but got ${typeToSql(v.type)}`, o.value.loc);
    }
    values.set(key, v.value);
    if (v.value !== null) shown.push({ name: key, type: typeToSql(want), value: optionText(v.value) });
  }
  return { values, shown };
}

/** data_types (of the index or of a column): upper-cased, each a type a search index covers. */
function dataTypesOption(v: unknown, loc: A.Loc): string[] | undefined {
  if (v === null || v === undefined) return undefined;
  const out = (v as string[]).map((x) => String(x).toUpperCase());
  for (const d of out) if (!DATA_TYPES.includes(d)) throw sqlError(`Unsupported data type ${d} in option data_types: expected ${DATA_TYPES.join(', ')}`, loc);
  return out;
}

function granularityOption(v: unknown, name: string, loc: A.Loc): void {
  if (typeof v === 'string' && !GRANULARITIES.includes(v.toUpperCase())) throw sqlError(`Invalid value for option ${name}: ${JSON.stringify(v)}`, loc);
}

export async function createSearchIndex(s: Session, st: A.CreateIndexStmt): Promise<QueryResult> {
  if (st.indexType === 'VECTOR') {
    // data-definition-language (CREATE VECTOR INDEX): the column is a bare column_name.
    if (st.columnOptions) throw sqlError('Column OPTIONS are only supported for search indexes', st.columnOptions[0]!.loc);
    return createVectorIndex(s, st);
  }
  const info = writeTarget(s, st.table, st.loc);
  // Search indexes are built over BigQuery storage (search-intro: standard tables); an external table's rows are its files'.
  if (info.kind === 'EXTERNAL') throw sqlError(`Cannot create a search index on external table ${fq(info.id)}`, st.loc);
  const name = splitPath(st.name).pop()!;
  const existing = searchIndexesOf(info.resource);
  const same = existing.find((x) => x.name.toLowerCase() === name.toLowerCase());
  if (same && st.ifNotExists) return statementResult('CREATE_SEARCH_INDEX', { ddlOperationPerformed: 'SKIP', ddlTargetTable: info.id });
  if (same) throw new QueryError(`Already Exists: Search index ${name} on table ${fq(info.id)}`, 'duplicate', 409);
  // data-definition-language (CREATE SEARCH INDEX, Details): creating one fails on a table with row filters or column
  // ACLs (policy tags, set through tables.insert / patch); both may be added after.
  if (policiesOf(s.ctx.catalog, info.id).length) throw sqlError(`Cannot create a search index on table ${fq(info.id)}, which has row access policies`, st.loc);
  const tagged = taggedField((info.resource.schema as { fields?: TaggedField[] } | undefined)?.fields);
  if (tagged) throw sqlError(`Cannot create a search index on table ${fq(info.id)}, whose column ${tagged} has policy tags (column-level access control)`, st.loc);
  // search-index: a table has at most one search index.
  const other = existing[0];
  if (other) throw sqlError(`Table ${fq(info.id)} already has a search index ${other.name}; only one search index is allowed per table`, st.loc);
  if (st.storing?.length) throw sqlError('STORING is only supported for vector indexes', st.loc);
  if (st.partitionBy) throw sqlError('PARTITION BY is only supported for vector indexes', st.partitionBy.loc);

  const { values, shown } = await indexOptionValues(s, st.options, OPTION_TYPES, 'CREATE SEARCH INDEX');
  const options: SearchIndex['options'] = Object.fromEntries(shown.map((o) => [o.name, { type: o.type, value: o.value }]));
  const analyzer = (values.get('analyzer') as string | null | undefined) ?? 'LOG_ANALYZER';
  if (!ANALYZERS.includes(analyzer)) throw sqlError(`Invalid analyzer ${JSON.stringify(analyzer)}: expected one of ${ANALYZERS.join(', ')}`, st.loc);
  const dataTypes = dataTypesOption(values.get('data_types'), st.loc) ?? ['STRING'];
  granularityOption(values.get('default_index_column_granularity'), 'default_index_column_granularity', st.loc);
  const ao = values.get('analyzer_options') as string | null | undefined;
  // index_option_list: analyzer_options is supported with LOG_ANALYZER and PATTERN_ANALYZER only.
  if (ao != null && analyzer === 'NO_OP_ANALYZER') throw sqlError('Option analyzer_options is not supported with NO_OP_ANALYZER', st.loc);
  if (ao != null) {
    try {
      JSON.parse(ao);
    } catch {
      throw sqlError('Invalid analyzer_options: expected a JSON formatted string', st.loc);
    }
  }

  // index_column_option_list: index_granularity and a column's own data_types, on a column of the table, once.
  const columnOptions: NonNullable<SearchIndex['columnOptions']> = [];
  for (const c of st.columnOptions ?? []) {
    const col = info.columns.find((x) => x.name.toLowerCase() === c.name.toLowerCase());
    if (!col) throw sqlError(`Column ${c.name} does not exist in table ${fq(info.id)}`, c.loc);
    if (columnOptions.some((x) => x.column === col.name)) throw sqlError(`Column ${c.name} is given OPTIONS more than once`, c.loc);
    const o = await indexOptionValues(s, c.options, COLUMN_OPTION_TYPES, 'a search index column');
    granularityOption(o.values.get('index_granularity'), 'index_granularity', c.loc);
    const own = dataTypesOption(o.values.get('data_types'), c.loc);
    columnOptions.push({ column: col.name, options: o.shown, ...(own ? { dataTypes: own } : {}) });
  }
  const typesOf = (name: string): string[] => columnDataTypes({ dataTypes, columnOptions }, name);
  for (const c of columnOptions) {
    // ALL COLUMNS WITH COLUMN OPTIONS sets options on indexed columns: one with nothing to index is no such column.
    const col = info.columns.find((x) => x.name === c.column)!;
    const paths: string[] = [];
    indexedPaths(col.name, col.type, typesOf(col.name), paths);
    if (!paths.length) throw sqlError(`Column ${col.name} of type ${typeToSql(col.type)} cannot be search indexed: a search index covers ${[...typesOf(col.name), 'JSON'].join(', ')} fields`, st.loc);
  }
  // Each named column exists once and has something to index (a STRING or JSON field, or one of data_types).
  if (st.columns) {
    const seen = new Set<string>();
    for (const c of st.columns) {
      const col = info.columns.find((x) => x.name.toLowerCase() === c.toLowerCase());
      if (!col) throw sqlError(`Column ${c} does not exist in table ${fq(info.id)}`, st.loc);
      if (seen.has(c.toLowerCase())) throw sqlError(`Column ${c} is indexed more than once`, st.loc);
      seen.add(c.toLowerCase());
      const paths: string[] = [];
      indexedPaths(col.name, col.type, typesOf(col.name), paths);
      if (!paths.length) throw sqlError(`Column ${col.name} of type ${typeToSql(col.type)} cannot be search indexed: a search index covers ${[...typesOf(col.name), 'JSON'].join(', ')} fields`, st.loc);
    }
  } else {
    // search-index: ALL COLUMNS on a table with nothing of the indexed types fails ("the index creation fails").
    const paths: string[] = [];
    for (const col of info.columns) indexedPaths(col.name, col.type, typesOf(col.name), paths);
    if (!paths.length) throw sqlError(`Table ${fq(info.id)} has no column a search index covers (${[...dataTypes, 'JSON'].join(', ')} fields) for ALL COLUMNS`, st.loc);
  }
  const index: SearchIndex = {
    name,
    ...(st.columns ? { columns: st.columns.slice() } : {}),
    options,
    analyzer,
    dataTypes,
    ...(columnOptions.length ? { columnOptions } : {}),
    ddl: s.ctx.sql.slice(st.start, st.end),
    creationTime: String(Date.now()),
  };
  await s.ctx.catalog.patchTableResource(info.id, { searchIndexes: [index] });
  return statementResult('CREATE_SEARCH_INDEX', { ddlOperationPerformed: 'CREATE', ddlTargetTable: info.id });
}

type TaggedField = { name?: string; policyTags?: { names?: string[] }; fields?: TaggedField[] };

/** The path of the first field (nested ones too) that carries a policy tag, if any. */
function taggedField(fields: readonly TaggedField[] | undefined, prefix = ''): string | undefined {
  for (const f of fields ?? []) {
    const path = `${prefix}${f.name ?? ''}`;
    if (f.policyTags?.names?.length) return path;
    const inner = taggedField(f.fields, `${path}.`);
    if (inner) return inner;
  }
  return undefined;
}

export async function dropSearchIndex(s: Session, st: A.DropStmt): Promise<QueryResult> {
  if (!st.on) return statementResult('DROP_SEARCH_INDEX', { ddlOperationPerformed: 'DROP' });
  const vector = st.objectType === 'VECTOR INDEX';
  const info = writeTarget(s, st.on, st.loc);
  const name = splitPath(st.name).pop()!;
  const existing: { name: string }[] = vector ? vectorIndexesOf(info.resource) : searchIndexesOf(info.resource);
  const keep = existing.filter((x) => x.name.toLowerCase() !== name.toLowerCase());
  if (keep.length === existing.length) {
    if (st.ifExists) return statementResult('DROP_SEARCH_INDEX', { ddlOperationPerformed: 'SKIP', ddlTargetTable: info.id });
    throw new QueryError(`Not found: ${vector ? 'Vector' : 'Search'} index ${name} on table ${fq(info.id)}`, 'notFound', 404);
  }
  await s.ctx.catalog.patchTableResource(info.id, { [vector ? 'vectorIndexes' : 'searchIndexes']: keep.length ? keep : null });
  return statementResult('DROP_SEARCH_INDEX', { ddlOperationPerformed: 'DROP', ddlTargetTable: info.id });
}

/**
 * After ALTER TABLE DROP COLUMN: search-index and vector-index (index refresh) delete an index whose only indexed
 * column is deleted (a vector index's one column); a search index left other columns forgets the dropped names.
 */
export async function pruneIndexes(s: Session, id: TableId): Promise<void> {
  const info = s.ctx.catalog.getTable(id);
  if (!info) return;
  const has = (n: string): boolean => info.columns.some((c) => c.name.toLowerCase() === n.toLowerCase());
  const search = searchIndexesOf(info.resource);
  const keptSearch = search
    .filter((ix) => indexColumnRows(ix, info.columns).length > 0)
    .map((ix): SearchIndex => {
      const columnOptions = ix.columnOptions?.filter((c) => has(c.column));
      return { ...ix, ...(ix.columns ? { columns: ix.columns.filter(has) } : {}), ...(columnOptions ? { columnOptions } : {}) };
    });
  const vector = vectorIndexesOf(info.resource);
  const keptVector = vector.filter((ix) => has(ix.column));
  if (JSON.stringify(keptSearch) !== JSON.stringify(search)) await s.ctx.catalog.patchTableResource(id, { searchIndexes: keptSearch.length ? keptSearch : null });
  if (keptVector.length !== vector.length) await s.ctx.catalog.patchTableResource(id, { vectorIndexes: keptVector.length ? keptVector : null });
}

// ---------------------------------------------------------------- vector indexes

/** vector-index / data-definition-language (CREATE VECTOR INDEX): options, their allowed values. */
const VECTOR_OPTIONS = ['index_type', 'distance_type', 'ivf_options', 'tree_ah_options', 'lexical_search_columns'];
const INDEX_TYPES = ['IVF', 'TREE_AH'];
const DISTANCE_TYPES = ['EUCLIDEAN', 'COSINE', 'DOT_PRODUCT'];

/** An embedding column: ARRAY<FLOAT64>, or the STRUCT<result ARRAY<FLOAT64>, status STRING> of autonomous embedding generation. */
function isEmbedding(t: SqlType): boolean {
  const floats = (x: SqlType): boolean => x.kind === 'ARRAY' && x.element.kind === 'FLOAT64';
  if (floats(t)) return true;
  if (t.kind !== 'STRUCT' || t.fields.length !== 2) return false;
  const [r, st] = t.fields;
  return r!.name.toLowerCase() === 'result' && floats(r!.type) && st!.name.toLowerCase() === 'status' && st!.type.kind === 'STRING';
}

/**
 * lexical_search_columns (CREATE VECTOR INDEX index_option_list; vector-index, hybrid search): unique names of STRING
 * columns of the table, each also a stored column. The names as the table spells them.
 */
function lexicalColumns(names: readonly (string | null)[], columns: readonly Column[], storing: readonly string[], loc: A.Loc): string[] {
  const out: string[] = [];
  for (const n of names) {
    if (n === null) throw sqlError('lexical_search_columns cannot hold NULL', loc);
    const c = columns.find((x) => x.name.toLowerCase() === n.toLowerCase());
    if (!c) throw sqlError(`Lexical search column ${n} does not exist in the table`, loc);
    if (c.type.kind !== 'STRING') throw sqlError(`Lexical search column ${c.name} must be of type STRING, not ${typeToSql(c.type)}`, loc);
    if (out.some((x) => x.toLowerCase() === n.toLowerCase())) throw sqlError(`Lexical search column ${c.name} is listed more than once`, loc);
    if (!storing.some((x) => x.toLowerCase() === n.toLowerCase())) throw sqlError(`Lexical search column ${c.name} must also be a stored column (STORING)`, loc);
    out.push(c.name);
  }
  return out;
}

/** A JSON object option (ivf_options, tree_ah_options) checked key by key. */
function jsonOption(text: string, option: string, keys: Record<string, (v: unknown) => boolean>, loc: A.CreateIndexStmt['loc']): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw sqlError(`Invalid value for option ${option}: expected a JSON formatted string`, loc);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw sqlError(`Invalid value for option ${option}: expected a JSON object`, loc);
  for (const [k, v] of Object.entries(parsed)) {
    const ok = keys[k];
    if (!ok) throw sqlError(`Unknown field ${k} in option ${option}; expected one of ${Object.keys(keys).join(', ')}`, loc);
    if (!ok(v)) throw sqlError(`Invalid value ${JSON.stringify(v)} for ${k} in option ${option}`, loc);
  }
}

export async function createVectorIndex(s: Session, st: A.CreateIndexStmt): Promise<QueryResult> {
  const info = writeTarget(s, st.table, st.loc);
  // data-definition-language (CREATE VECTOR INDEX, Details): vector indexes only on standard tables.
  if (info.kind !== 'TABLE') throw sqlError(`Cannot create a vector index on ${info.kind.toLowerCase().replace('_', ' ')} table ${fq(info.id)}: only standard tables take one`, st.loc);
  const name = splitPath(st.name).pop()!;
  // ... and not under the name of the table's search index.
  const searchNamed = searchIndexesOf(info.resource).find((x) => x.name.toLowerCase() === name.toLowerCase());
  if (searchNamed) throw sqlError(`Table ${fq(info.id)} already has a search index named ${searchNamed.name}; a vector index cannot take that name`, st.loc);
  const existing = vectorIndexesOf(info.resource);
  const same = existing.find((x) => x.name.toLowerCase() === name.toLowerCase());
  if (same && st.ifNotExists) return statementResult('CREATE_SEARCH_INDEX', { ddlOperationPerformed: 'SKIP', ddlTargetTable: info.id });
  if (same && !st.orReplace) throw new QueryError(`Already Exists: Vector index ${name} on table ${fq(info.id)}`, 'duplicate', 409);
  const other = existing.find((x) => x !== same);
  if (other) throw sqlError(`Table ${fq(info.id)} already has a vector index ${other.name}; only one vector index is allowed per table`, st.loc);

  // One embedding column, named (ALL COLUMNS is a search index form).
  if (!st.columns || st.columns.length !== 1) throw sqlError('A vector index is created on exactly one column', st.loc);
  const col = info.columns.find((x) => x.name.toLowerCase() === st.columns![0]!.toLowerCase());
  if (!col) throw sqlError(`Column ${st.columns[0]} does not exist in table ${fq(info.id)}`, st.loc);
  if (!isEmbedding(col.type)) throw sqlError(`Column ${col.name} of type ${typeToSql(col.type)} cannot be vector indexed: the column must be ARRAY<FLOAT64> or STRUCT<result ARRAY<FLOAT64>, status STRING>`, st.loc);
  // STORING: top-level columns of the table, each once, none of type RANGE.
  const storing: string[] = [];
  for (const c of st.storing ?? []) {
    const sc = info.columns.find((x) => x.name.toLowerCase() === c.toLowerCase());
    if (!sc) throw sqlError(`Stored column ${c} does not exist in table ${fq(info.id)}`, st.loc);
    if (storing.some((x) => x.toLowerCase() === c.toLowerCase())) throw sqlError(`Column ${c} is stored more than once`, st.loc);
    if (sc.type.kind === 'RANGE') throw sqlError(`Stored column ${sc.name} cannot be of type ${typeToSql(sc.type)}`, st.loc);
    storing.push(sc.name);
  }

  const options: VectorIndex['options'] = [];
  const values = new Map<string, string>();
  let lexical: string[] | undefined;
  for (const o of st.options ?? []) {
    const key = o.name.toLowerCase();
    if (!VECTOR_OPTIONS.includes(key)) throw sqlError(`Unknown option ${o.name} for CREATE VECTOR INDEX`, o.value.loc);
    if (values.has(key) || (key === 'lexical_search_columns' && lexical)) throw sqlError(`Duplicate option ${o.name}`, o.value.loc);
    const v = await evalOption(s, o);
    if (v.value === null) continue;
    if (key === 'lexical_search_columns') {
      if (!typeEquals(v.type, arrayOf(T.STRING))) throw sqlError(`Invalid value for option ${key}: expected ARRAY<STRING> but got ${typeToSql(v.type)}`, o.value.loc);
      lexical = lexicalColumns(v.value as (string | null)[], info.columns, storing, o.value.loc);
      options.push({ name: key, type: 'ARRAY<STRING>', value: optionText(lexical) });
      continue;
    }
    if (v.type.kind !== 'STRING') throw sqlError(`Invalid value for option ${key}: expected STRING but got ${typeToSql(v.type)}`, o.value.loc);
    values.set(key, v.value as string);
    options.push({ name: key, type: 'STRING', value: v.value as string });
  }
  const indexType = values.get('index_type');
  if (indexType === undefined) throw sqlError('Option index_type is required for CREATE VECTOR INDEX: expected IVF or TREE_AH', st.loc);
  if (!INDEX_TYPES.includes(indexType)) throw sqlError(`Invalid value for option index_type: ${JSON.stringify(indexType)}; expected one of ${INDEX_TYPES.join(', ')}`, st.loc);
  const distance = values.get('distance_type');
  if (distance !== undefined && !DISTANCE_TYPES.includes(distance)) throw sqlError(`Invalid value for option distance_type: ${JSON.stringify(distance)}; expected one of ${DISTANCE_TYPES.join(', ')}`, st.loc);
  const int = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
  const ivf = values.get('ivf_options');
  if (ivf !== undefined) {
    if (indexType !== 'IVF') throw sqlError(`Option ivf_options is only allowed with index_type IVF`, st.loc);
    // vector-index: num_lists is an INT64 of at most 5,000.
    jsonOption(ivf, 'ivf_options', { num_lists: (v) => int(v) && v >= 1 && v <= 5000 }, st.loc);
  }
  const treeAh = values.get('tree_ah_options');
  if (treeAh !== undefined) {
    if (indexType !== 'TREE_AH') throw sqlError(`Option tree_ah_options is only allowed with index_type TREE_AH`, st.loc);
    // vector-index: leaf_node_embedding_count is an INT64 of at least 500; normalization_type NONE or L2.
    jsonOption(treeAh, 'tree_ah_options', { leaf_node_embedding_count: (v) => int(v) && v >= 500, normalization_type: (v) => v === 'NONE' || v === 'L2' }, st.loc);
  }

  // vector-index (Partition a vector index): only TREE_AH indexes are partitioned, by the table's own PARTITION BY.
  if (st.partitionBy) {
    if (indexType !== 'TREE_AH') throw sqlError(`PARTITION BY is only supported for vector indexes with index_type TREE_AH, not ${indexType}`, st.partitionBy.loc);
    if (col.type.kind === 'STRUCT') throw sqlError(`A vector index on the generated embedding column ${col.name} cannot be partitioned`, st.partitionBy.loc);
    const table = partitionSpecText(info.resource).key;
    const given = partitionSpecText(await partitioning(s, st.partitionBy, info.columns, {})).key;
    if (table === 'none') throw sqlError(`PARTITION BY of a vector index needs a partitioned table; ${fq(info.id)} is not partitioned`, st.partitionBy.loc);
    if (given !== table) throw sqlError(`The PARTITION BY of a vector index must be the table's: ${fq(info.id)} is partitioned by ${table}, not ${given}`, st.partitionBy.loc);
  }

  const index: VectorIndex = {
    name,
    column: col.name,
    storing,
    options,
    ddl: s.ctx.sql.slice(st.start, st.end),
    creationTime: same?.creationTime ?? String(Date.now()),
  };
  await s.ctx.catalog.patchTableResource(info.id, { vectorIndexes: [index] });
  return statementResult('CREATE_SEARCH_INDEX', { ddlOperationPerformed: same ? 'REPLACE' : 'CREATE', ddlTargetTable: info.id });
}
