// CREATE SEARCH INDEX / DROP SEARCH INDEX: the index is kept with its table (hidden `searchIndexes` of the
// stored resource) for INFORMATION_SCHEMA.SEARCH_INDEXES, SEARCH_INDEX_COLUMNS and SEARCH_INDEX_OPTIONS.
// Queries never need it: SEARCH() scans the table either way.
import type * as A from '../../grammar/ast.js';
import { sqlError } from '../analyzer/errors.js';
import { indexedPaths, searchIndexesOf, type SearchIndex } from '../analyzer/search-index.js';
import { splitPath } from '../analyzer/names.js';
import { T, arrayOf, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import { QueryError, type QueryResult } from './api.js';
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
const ANALYZERS = ['LOG_ANALYZER', 'NO_OP_ANALYZER', 'PATTERN_ANALYZER'];
const DATA_TYPES = ['STRING', 'INT64', 'TIMESTAMP'];
const GRANULARITIES = ['COLUMN', 'GLOBAL'];

function sqlText(v: unknown): string {
  return Array.isArray(v) ? `[${v.map(sqlText).join(', ')}]` : JSON.stringify(v);
}

export async function createSearchIndex(s: Session, st: A.CreateIndexStmt): Promise<QueryResult> {
  // Vector indexes are accepted and not kept (no INFORMATION_SCHEMA.VECTOR_INDEXES here).
  if (st.indexType === 'VECTOR') return statementResult('CREATE_SEARCH_INDEX', { ddlOperationPerformed: 'CREATE' });
  const info = writeTarget(s, st.table, st.loc);
  const name = splitPath(st.name).pop()!;
  const existing = searchIndexesOf(info.resource);
  const same = existing.find((x) => x.name.toLowerCase() === name.toLowerCase());
  if (same && st.ifNotExists) return statementResult('CREATE_SEARCH_INDEX', { ddlOperationPerformed: 'SKIP', ddlTargetTable: info.id });
  if (same && !st.orReplace) throw new QueryError(`Already Exists: Search index ${name} on table ${fq(info.id)}`, 'duplicate', 409);
  // search-index: a table has at most one search index.
  const other = existing.find((x) => x !== same);
  if (other) throw sqlError(`Table ${fq(info.id)} already has a search index ${other.name}; only one search index is allowed per table`, st.loc);
  if (st.storing?.length) throw sqlError('STORING is only supported for vector indexes', st.loc);

  const options: SearchIndex['options'] = {};
  const values = new Map<string, unknown>();
  for (const o of st.options ?? []) {
    const key = o.name.toLowerCase();
    const want = OPTION_TYPES.get(key);
    if (!want) throw sqlError(`Unknown option ${o.name} for CREATE SEARCH INDEX`, o.value.loc);
    if (values.has(key)) throw sqlError(`Duplicate option ${o.name}`, o.value.loc);
    const v = await s.evalScalar(o.value);
    if (!typeEquals(v.type, want) && !(v.value === null)) {
      throw sqlError(`Invalid value for option ${key}: expected ${typeToSql(want)} but got ${typeToSql(v.type)}`, o.value.loc);
    }
    values.set(key, v.value);
    if (v.value !== null) options[key] = { type: typeToSql(want), sql: sqlText(v.value) };
  }
  const analyzer = (values.get('analyzer') as string | null | undefined) ?? 'LOG_ANALYZER';
  if (!ANALYZERS.includes(analyzer)) throw sqlError(`Invalid analyzer ${JSON.stringify(analyzer)}: expected one of ${ANALYZERS.join(', ')}`, st.loc);
  const dataTypes = ((values.get('data_types') as string[] | null | undefined) ?? ['STRING']).map((x) => String(x).toUpperCase());
  for (const d of dataTypes) if (!DATA_TYPES.includes(d)) throw sqlError(`Unsupported data type ${d} in option data_types: expected ${DATA_TYPES.join(', ')}`, st.loc);
  const gran = values.get('default_index_column_granularity') as string | null | undefined;
  if (gran != null && !GRANULARITIES.includes(gran.toUpperCase())) throw sqlError(`Invalid value for option default_index_column_granularity: ${JSON.stringify(gran)}`, st.loc);
  const ao = values.get('analyzer_options') as string | null | undefined;
  if (ao != null) {
    try {
      JSON.parse(ao);
    } catch {
      throw sqlError('Invalid analyzer_options: expected a JSON formatted string', st.loc);
    }
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
      indexedPaths(col.name, col.type, dataTypes, paths);
      if (!paths.length) throw sqlError(`Column ${col.name} of type ${typeToSql(col.type)} cannot be search indexed: a search index covers ${[...dataTypes, 'JSON'].join(', ')} fields`, st.loc);
    }
  }
  const index: SearchIndex = {
    name,
    ...(st.columns ? { columns: st.columns.slice() } : {}),
    options,
    analyzer,
    dataTypes,
    ddl: s.ctx.sql.slice(st.start, st.end),
    creationTime: same?.creationTime ?? String(Date.now()),
  };
  await s.ctx.catalog.patchTableResource(info.id, { searchIndexes: [index] });
  return statementResult('CREATE_SEARCH_INDEX', { ddlOperationPerformed: same ? 'REPLACE' : 'CREATE', ddlTargetTable: info.id });
}

export async function dropSearchIndex(s: Session, st: A.DropStmt): Promise<QueryResult> {
  if (st.objectType === 'VECTOR INDEX' || !st.on) return statementResult('DROP_SEARCH_INDEX', { ddlOperationPerformed: 'DROP' });
  const info = writeTarget(s, st.on, st.loc);
  const name = splitPath(st.name).pop()!;
  const existing = searchIndexesOf(info.resource);
  const keep = existing.filter((x) => x.name.toLowerCase() !== name.toLowerCase());
  if (keep.length === existing.length) {
    if (st.ifExists) return statementResult('DROP_SEARCH_INDEX', { ddlOperationPerformed: 'SKIP', ddlTargetTable: info.id });
    throw new QueryError(`Not found: Search index ${name} on table ${fq(info.id)}`, 'notFound', 404);
  }
  await s.ctx.catalog.patchTableResource(info.id, { searchIndexes: keep.length ? keep : null });
  return statementResult('DROP_SEARCH_INDEX', { ddlOperationPerformed: 'DROP', ddlTargetTable: info.id });
}
