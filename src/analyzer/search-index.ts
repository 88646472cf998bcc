// Search indexes as a table keeps them (CREATE SEARCH INDEX; the hidden `searchIndexes` of its stored
// resource) and the fields they index, as INFORMATION_SCHEMA.SEARCH_INDEX_COLUMNS lists them.
import type { Column } from '../types/schema.js';
import type { SqlType } from '../types/types.js';

export interface SearchIndex {
  name: string;
  /** The indexed columns as named; undefined for ALL COLUMNS. */
  columns?: string[];
  /** OPTIONS as given (option name -> type and the value as SEARCH_INDEX_OPTIONS shows it). */
  options: Record<string, { type: string; value: string }>;
  analyzer: string;
  /** data_types: the scalar types indexed besides JSON (search-index: STRING unless set). */
  dataTypes: string[];
  /**
   * The columns given OPTIONS (index_column_option_list), for INFORMATION_SCHEMA.SEARCH_INDEX_COLUMN_OPTIONS: each
   * option as shown there; `dataTypes`, a column's own data_types, replaces the index's for that column.
   */
  columnOptions?: { column: string; options: { name: string; type: string; value: string }[]; dataTypes?: string[] }[];
  ddl: string;
  creationTime: string;
}

/**
 * Whether an index over a table of `resource` is populated. search-index and vector-index (Understand index refresh):
 * an index on a base table under 10 GB (search) or 10 MB (vector) is not populated: coverage_percentage 0, and
 * queries do not use it (a vector index then lends VECTOR_SEARCH no distance_type). The size is the one the emulator
 * reports for the table (numBytes, spec §8: always zero), so an emulator index is never populated; answers stay exact.
 */
export function indexPopulated(resource: Record<string, unknown>, kind: 'SEARCH' | 'VECTOR'): boolean {
  const bytes = typeof resource.numBytes === 'string' && /^\d+$/.test(resource.numBytes) ? BigInt(resource.numBytes) : 0n;
  return bytes >= (kind === 'SEARCH' ? 10n << 30n : 10n << 20n);
}

export function searchIndexesOf(resource: Record<string, unknown>): SearchIndex[] {
  return (resource.searchIndexes as SearchIndex[] | undefined) ?? [];
}

/** A scalar type's name as data_types spells it (STRING, INT64, TIMESTAMP, JSON). */
function scalarName(t: SqlType): string {
  return t.kind;
}

/**
 * The indexed field paths under one column (`c`, `c.e`, `c.f.g`): every STRING or JSON leaf, or a leaf of
 * one of `dataTypes`, through ARRAYs and STRUCTs (information-schema-index-columns: the expanded fields).
 */
export function indexedPaths(path: string, t: SqlType, dataTypes: readonly string[], out: string[]): void {
  if (t.kind === 'ARRAY') return indexedPaths(path, t.element, dataTypes, out);
  if (t.kind === 'STRUCT') {
    for (const f of t.fields) indexedPaths(`${path}.${f.name}`, f.type, dataTypes, out);
    return;
  }
  if (t.kind === 'JSON' || dataTypes.includes(scalarName(t))) out.push(path);
}

/** The (column, field path) rows of an index over a table's current columns. */
export function indexColumnRows(ix: SearchIndex, columns: readonly Column[]): { column: string; path: string }[] {
  const named = ix.columns?.map((c) => c.toLowerCase());
  const rows: { column: string; path: string }[] = [];
  for (const c of columns) {
    if (named && !named.includes(c.name.toLowerCase())) continue;
    const paths: string[] = [];
    indexedPaths(c.name, c.type, columnDataTypes(ix, c.name), paths);
    for (const p of paths) rows.push({ column: c.name, path: p });
  }
  return rows;
}

/** The types indexed in column `name`: its own data_types option, else the index's. */
export function columnDataTypes(ix: Pick<SearchIndex, 'dataTypes' | 'columnOptions'>, name: string): string[] {
  const l = name.toLowerCase();
  return ix.columnOptions?.find((c) => c.column.toLowerCase() === l)?.dataTypes ?? ix.dataTypes;
}

/**
 * A vector index as a table keeps it (CREATE VECTOR INDEX; the hidden `vectorIndexes` of its stored resource),
 * for INFORMATION_SCHEMA.VECTOR_INDEXES, VECTOR_INDEX_COLUMNS and VECTOR_INDEX_OPTIONS.
 */
export interface VectorIndex {
  name: string;
  /** The one embedding column (vector-index: ARRAY<FLOAT64>, or STRUCT<result ARRAY<FLOAT64>, status STRING>). */
  column: string;
  storing: string[];
  /** OPTIONS in the order given: name, type, and the value as VECTOR_INDEX_OPTIONS shows it (the string itself). */
  options: { name: string; type: string; value: string }[];
  ddl: string;
  creationTime: string;
}

export function vectorIndexesOf(resource: Record<string, unknown>): VectorIndex[] {
  return (resource.vectorIndexes as VectorIndex[] | undefined) ?? [];
}
