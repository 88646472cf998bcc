// What the query engine needs from storage. The storage owner implements it;
// the analyzer (name resolution, schemas) and the executor (scans, writes) use it.
import type { Column } from '../types/schema.js';
import type { Batch } from '../types/vector.js';
import type { ScanPart } from './table-state.js';
import type { PartitionUnit } from './ingestion.js';

export interface TableId {
  readonly projectId: string;
  readonly datasetId: string;
  readonly tableId: string;
}

export type TableKind = 'TABLE' | 'VIEW' | 'MATERIALIZED_VIEW' | 'EXTERNAL' | 'SNAPSHOT';

export interface TableInfo {
  readonly id: TableId;
  readonly kind: TableKind;
  readonly columns: readonly Column[];
  /** Standard-SQL text of a view or materialized view. */
  readonly viewQuery?: string;
  readonly rowCount: number;
  /** The REST table resource as stored (for INFORMATION_SCHEMA and DDL echo). */
  readonly resource: Record<string, unknown>;
  /**
   * Partitioned by ingestion time (storage/ingestion.ts): each row's
   * partition time is a hidden TIMESTAMP stored after `columns` (scan column
   * index `columns.length`; writes carry it last), in this unit.
   */
  readonly partitionUnit?: PartitionUnit;
  /** CDC ingestion: when row modifications were last applied (ms; TableEntry.cdcWatermark). */
  readonly upsertWatermarkMs?: number;
}

/**
 * A scan column that is no table column: each row's position among the rows
 * the scan reads (INT64), which changeRows takes to name the rows it deletes.
 */
export const ROW_POSITION = -1;

/**
 * Scan columns of a change-history read (ScanOptions.history): APPENDS' and
 * CHANGES' _CHANGE_TYPE (STRING), _CHANGE_TIMESTAMP (TIMESTAMP) and CHANGES'
 * _CHANGE_IS_FOR_UPDATE (BOOL).
 */
export const CHANGE_TYPE = -2;
export const CHANGE_TIMESTAMP = -3;
export const CHANGE_IS_FOR_UPDATE = -4;

/**
 * A scan of a table's change history instead of its rows (APPENDS,
 * CHANGES: time-series-functions.md): the changes committed in
 * [startMs, endMs), start null for the table's creation.
 */
export interface HistoryRead {
  readonly fn: 'APPENDS' | 'CHANGES';
  readonly startMs: number | null;
  readonly endMs: number;
}

/**
 * A row-level change of a table (UPDATE, DELETE, MERGE): the rows at
 * `deleted` (ROW_POSITION values of a scan the same statement made) go, and
 * `added` (every column, schema order) come, as one commit.
 */
export interface RowChange {
  readonly deleted: readonly number[];
  readonly added: readonly Batch[];
  /** The first `updated` rows of `added` are updated rows' new values, not inserts (APPENDS leaves them out). */
  readonly updated?: number;
  /** The first `updatedDeletes` of `deleted` are the updated rows' old ones (CHANGES' _CHANGE_IS_FOR_UPDATE). */
  readonly updatedDeletes?: number;
}

export interface ScanOptions {
  /** Indexes into TableInfo.columns to read, in this order (or ROW_POSITION). */
  readonly columns: readonly number[];
  /** Time travel: the table as of this epoch-ms instant (FOR SYSTEM_TIME AS OF). */
  readonly asOfMs?: number;
  /** The table's change history in a window, not its rows (columns then include CHANGE_TYPE and the like). */
  readonly history?: HistoryRead;
  /**
   * Conditions every row the query wants meets (conjuncts of its WHERE):
   * storage may skip row groups whose statistics rule them out. Rows it
   * returns may still fail them (the executor filters again).
   */
  readonly filters?: readonly ScanFilter[];
}

/** A scan as parts (QueryCatalog.scanParts): `columns` is the table schema the parts are read in (ScanOptions.columns index it). */
export interface ScanParts {
  readonly columns: readonly Column[];
  readonly parts: readonly ScanPart[];
}

/** A comparable value of a scan filter: numbers or bigints (numeric, date and time types), strings, booleans. */
export type ScanValue = number | bigint | string | boolean;

/** `column op values` on a table column (ScanOptions.filters). */
export interface ScanFilter {
  /** Index into TableInfo.columns. */
  readonly column: number;
  readonly op: '=' | '<' | '<=' | '>' | '>=' | 'in' | 'isNull' | 'notNull';
  /** One value for the comparisons, the list for `in`, none for the NULL tests. */
  readonly values: readonly ScanValue[];
  /**
   * The values may tighten while the scan runs (a top-N's running threshold,
   * executor operators/topn-filter.ts): checked again before each row group
   * is read; a comparison without a value yet rules nothing out. The scan
   * then reads row groups best first by this column's statistics (its rows
   * come in no defined order).
   */
  readonly live?: boolean;
}

export interface CreateTableOptions {
  readonly kind?: TableKind;
  readonly viewQuery?: string;
  /** Extra REST resource fields (description, labels, options...). */
  readonly resource?: Record<string, unknown>;
  readonly ifNotExists?: boolean;
  readonly orReplace?: boolean;
  /** Session-scoped temporary table: not persisted. */
  readonly temporary?: boolean;
  /**
   * The new table's rows: a table made with its rows appears with them, in
   * one commit (CREATE TABLE ... AS SELECT). A stream is written as it comes
   * (a large result is never held whole).
   */
  readonly rows?: readonly Batch[] | AsyncIterable<Batch>;
}

/**
 * Statements and transactions over a catalog (the engine's catalog has
 * them; test doubles need not): the planner opens a statement around each
 * SQL statement (its reads see one snapshot), takes the mutation lock of a
 * mutating statement's target before reading it, and runs BEGIN / COMMIT /
 * ROLLBACK TRANSACTION. See src/storage/transaction.ts.
 */
export interface TransactionControl {
  readonly inTransaction: boolean;
  /** Opens a statement's scope (outside a transaction, after the storage's own deletions due now: expired partitions). */
  beginStatement(): Promise<void>;
  /** Ends the statement (ok or not): outside a transaction, its snapshot and locks go. */
  endStatement(): void;
  lockForMutation(id: TableId): Promise<void>;
  /** Opens a transaction whose snapshot comes after the storage's own deletions due now (see beginStatement). */
  beginTransaction(): Promise<void>;
  commitTransaction(): Promise<void>;
  rollbackTransaction(): void;
}

/** One minute's requests into one table (INFORMATION_SCHEMA.STREAMING_TIMELINE / WRITE_API_TIMELINE; engine/ingestion-timeline.ts). */
export interface TimelineRow {
  readonly kind: 'STREAMING' | 'WRITE_API';
  readonly minuteMs: number;
  readonly projectId: string;
  readonly datasetId: string;
  readonly tableId: string;
  /** WRITE_API: DEFAULT, COMMITTED, PENDING or BUFFERED. */
  readonly streamType: string | null;
  /** STREAMING: null when the request succeeded; WRITE_API: OK. */
  readonly errorCode: string | null;
  readonly requests: number;
  readonly rows: number;
  readonly bytes: number;
}

export interface QueryCatalog {
  readonly transactions?: TransactionControl;
  /** Optional: the ingestion requests the service received, per minute (INFORMATION_SCHEMA.*_TIMELINE views of them). */
  ingestionTimeline?(kind: TimelineRow['kind']): readonly TimelineRow[];
  getDataset(projectId: string, datasetId: string): { readonly resource: Record<string, unknown> } | undefined;
  listDatasets(projectId: string): readonly string[];
  getTable(id: TableId): TableInfo | undefined;
  listTables(projectId: string, datasetId: string): readonly TableInfo[];

  /** Column batches of the table's rows in storage order. */
  scan(id: TableId, opts: ScanOptions): AsyncIterable<Batch>;
  /**
   * Optional (parallel execution): what `scan` with these options would read,
   * as parts each readable on its own (a worker thread reads a row group by
   * path, table-state.ts readPart), in scan order, with the schema the
   * file columns are read in. Null when the rows are not held that way (time
   * travel, virtual tables): the caller scans.
   */
  scanParts?(id: TableId, opts: ScanOptions): Promise<ScanParts | null>;
  /**
   * Optional (job statistics): the logical bytes of `opts.columns` and the
   * live rows over what scanParts(id, opts) lists, as partsLogicalBytes sums
   * them, without listing the parts where storage can tell from its index.
   * Null where scanParts is.
   */
  scanLogicalBytes?(id: TableId, opts: ScanOptions): Promise<{ readonly rows: number; readonly bytes: readonly number[] } | null>;

  createTable(id: TableId, columns: readonly Column[], opts?: CreateTableOptions): Promise<TableInfo>;
  dropTable(id: TableId): Promise<void>;
  /** ALTER TABLE RENAME TO (same dataset): the table, rows and history included, takes the new name in one commit. */
  renameTable(id: TableId, to: TableId): Promise<void>;
  /**
   * Appends rows durably (acknowledged = survives kill -9), in one commit.
   * Batches carry every column in schema order; a stream is written as it
   * comes (INSERT ... SELECT of a large result is never held whole).
   */
  appendRows(id: TableId, batches: readonly Batch[] | AsyncIterable<Batch>): Promise<void>;
  /**
   * Deletes and adds rows in one commit (UPDATE, DELETE, MERGE): what the
   * statement changed, not the whole table. Its positions come from a scan
   * made after lockForMutation, in the same statement.
   */
  changeRows(id: TableId, change: RowChange): Promise<void>;
  /**
   * Replaces all rows atomically (TRUNCATE, WRITE_TRUNCATE, schema rewrites).
   * `how.carried`: the rows are the table's own, rewritten (ALTER TABLE's
   * column changes): neither deleted nor inserted for APPENDS and CHANGES.
   * `how.truncating`: TRUNCATE TABLE, refused while recently streamed rows are buffered.
   */
  replaceRows(id: TableId, batches: readonly Batch[], columns?: readonly Column[], how?: { readonly carried?: boolean; readonly truncating?: boolean }): Promise<void>;
  /** Changes the schema (ALTER TABLE), keeping rows; new columns read as NULL. */
  alterColumns(id: TableId, columns: readonly Column[]): Promise<void>;
  /** Updates REST-only metadata fields (OPTIONS, descriptions). */
  patchTableResource(id: TableId, patch: Record<string, unknown>): Promise<void>;

  createDataset(projectId: string, datasetId: string, resource: Record<string, unknown>, ifNotExists: boolean): Promise<void>;
  dropDataset(projectId: string, datasetId: string, cascade: boolean, ifExists: boolean): Promise<void>;
  undropDataset(projectId: string, datasetId: string, ifNotExists: boolean): Promise<void>;
  /** datasets.patch of REST fields (GRANT/REVOKE ON SCHEMA edit `access`). */
  patchDatasetResource(projectId: string, datasetId: string, patch: Record<string, unknown>): Promise<void>;

  /** Routines, models, row-access policies (JSON resources kept in catalog.store). */
  putChild(kind: string, projectId: string, datasetId: string, id: string, resource: Record<string, unknown>, tableId?: string): Promise<void>;
  getChild(kind: string, projectId: string, datasetId: string, id: string, tableId?: string): Record<string, unknown> | undefined;
  listChildren(kind: string, projectId: string, datasetId: string, tableId?: string): readonly Record<string, unknown>[];
  deleteChild(kind: string, projectId: string, datasetId: string, id: string, tableId?: string): Promise<boolean>;
}
