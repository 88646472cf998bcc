// The catalog a query (and a session: its queries in turn) runs against: the
// engine's catalog seen through a transaction (src/storage/transaction.ts).
// Each statement reads one snapshot of every table; mutating statements
// lock their target first; BEGIN TRANSACTION ... COMMIT stages its writes
// and commits them as one. Temporary tables (CREATE TEMP TABLE, the
// `_session` dataset) live here, in memory: they exist for the script or
// session that made them and are gone afterwards, restarts included.
import type { CreateTableOptions, QueryCatalog, RowChange, ScanOptions, ScanParts, TableId, TableInfo, TimelineRow, TransactionControl } from '../storage/api.js';
import { notFound } from '../storage/errors.js';
import type { EntryChange, Storage } from '../storage/store.js';
import { conformBatches } from '../storage/row-batches.js';
import { changedBatches, collectBatches, memParts, partsLogicalBytes, scanBatches, type TableState } from '../storage/table-state.js';
import { DDL_IN_TRANSACTION, Transaction, type TableKey } from '../storage/transaction.js';
import { QueryError } from '../types/errors.js';
import { columnToRestField, type Column, type RestField } from '../types/schema.js';
import { tableValueRule, withTableValues } from '../types/table-values.js';
import type { Batch } from '../types/vector.js';
import { bufferedPartitionTime, masksPartitionTime, type EngineCatalog } from './catalog.js';
import { streamingBuffer, writeApiRecent } from './streaming-buffer.js';
import { activeCdc } from './storage-write/cdc.js';

/** The dataset temporary tables are named in (their ddlTargetTable). */
export const TEMP_DATASET = '_session';

const schemaFields = (resource: Record<string, unknown> | undefined): RestField[] | undefined => (resource?.schema as { fields?: RestField[] } | undefined)?.fields;

const keyOf = (id: TableId): TableKey => ({ p: id.projectId, d: id.datasetId, t: id.tableId });


interface TempTable {
  info: TableInfo;
  rows: Batch[];
}

export class SessionCatalog implements QueryCatalog, TransactionControl {
  readonly transactions: TransactionControl = this;
  /** The statement's or the explicit transaction's. */
  private txn: Transaction | null = null;
  /** Nested statement scopes (a scalar subquery's evaluation inside a statement): only the outermost opens and ends one. */
  private depth = 0;
  private readonly temps = new Map<string, TempTable>();
  /**
   * The temporary tables as an explicit transaction found them: its ROLLBACK undoes their DML and their DDL (the
   * transactions page: ROLLBACK abandons all changes made inside, and CREATE TEMP TABLE / DROP TABLE of a temporary
   * table are statements a transaction may hold).
   */
  private tempsAtBegin: Map<string, { tt: TempTable; info: TableInfo; rows: Batch[] }> | null = null;

  constructor(
    private readonly cat: EngineCatalog,
    private readonly st: Storage,
    /**
     * A decorated copy job's script (gateway/jobs/partition-copy.ts): the change of its destination's entry (the
     * copied row access policies) that its COMMIT TRANSACTION commits with the rows. The copy writes the
     * destination's partition whatever the destination's own policies, which it replaces or appends to
     * (using-row-level-security-with-features.md, Copy jobs: only the sources need the TRUE filter), so the script
     * reads and writes the destination unfiltered.
     */
    private commitEntry?: EntryChange,
  ) {
    this.copyInto = commitEntry;
  }

  /** The copy's destination (see commitEntry), seen without row access policies. */
  private readonly copyInto: EntryChange | undefined;

  // --- statements and transactions --------------------------------------------

  get inTransaction(): boolean {
    return this.txn?.explicit === true;
  }

  /**
   * The query running is a dry run: it writes nothing, so no sweep of expired partitions (a row-level commit) runs
   * before it; its transaction's reads leave them out instead (Transaction's `unswept`).
   */
  dryRun = false;

  async beginStatement(): Promise<void> {
    // A statement's snapshot comes after the partitions expired by now are deleted (a transaction's is its BEGIN's).
    if (this.depth === 0 && !this.txn && !this.dryRun) await this.st.expirePartitions();
    this.depth++;
    if (!this.txn) this.txn = this.newTransaction(false);
  }

  private newTransaction(explicit: boolean): Transaction {
    return new Transaction(this.st, explicit, this.dryRun);
  }

  endStatement(): void {
    if (this.depth > 0) this.depth--;
    if (this.depth === 0 && this.txn && !this.txn.explicit) {
      this.txn.end();
      this.txn = null;
    }
  }

  async lockForMutation(id: TableId): Promise<void> {
    if (this.isTemp(id) || this.cat.isVirtual(id)) return;
    const txn = this.current();
    try {
      await txn.lockForMutation(keyOf(id));
    } catch (e) {
      if (txn.explicit) this.abort();
      throw e;
    }
  }

  async beginTransaction(): Promise<void> {
    if (this.inTransaction) throw new QueryError('Nested transactions are not supported', 'invalidQuery');
    if (!this.dryRun) await this.st.expirePartitions();
    this.txn?.end();
    this.txn = this.newTransaction(true);
    // Appends push onto a table's row list, so each list is copied (the batches themselves are never changed); the
    // table objects are kept, as their info's row count reads them.
    this.tempsAtBegin = new Map([...this.temps].map(([k, tt]) => [k, { tt, info: tt.info, rows: [...tt.rows] }]));
  }

  async commitTransaction(): Promise<void> {
    const txn = this.txn;
    if (!txn?.explicit) throw new QueryError('COMMIT TRANSACTION was called without an active transaction', 'invalidQuery');
    this.txn = null;
    this.tempsAtBegin = null;
    const entry = this.commitEntry;
    this.commitEntry = undefined;
    await txn.commit(entry);
  }

  rollbackTransaction(): void {
    if (!this.inTransaction) throw new QueryError('ROLLBACK TRANSACTION was called without an active transaction', 'invalidQuery');
    this.abort();
  }

  /** Ends whatever is open, dropping staged writes (a script that failed or ended inside a transaction, a closed session). */
  abort(): void {
    this.txn?.rollback();
    this.txn = null;
    // The temporary tables go back to what BEGIN found: those created inside go, those dropped or replaced inside
    // come back, each with its rows.
    const at = this.tempsAtBegin;
    this.tempsAtBegin = null;
    if (!at) return;
    this.temps.clear();
    for (const [k, { tt, info, rows }] of at) this.temps.set(k, Object.assign(tt, { info, rows }));
  }

  /** The open transaction; a read outside any statement scope (none should happen) gets a scope that the next statement's end closes. */
  private current(): Transaction {
    this.txn ??= this.newTransaction(false);
    return this.txn;
  }

  private permanentDdl(): void {
    if (this.inTransaction) throw new QueryError(DDL_IN_TRANSACTION, 'invalidQuery');
  }

  // --- reads ----------------------------------------------------------------

  getDataset(projectId: string, datasetId: string): { readonly resource: Record<string, unknown> } | undefined {
    if (datasetId === TEMP_DATASET) return { resource: { datasetReference: { projectId, datasetId }, location: 'US' } };
    return this.cat.getDataset(projectId, datasetId);
  }

  listDatasets(projectId: string): readonly string[] {
    return this.cat.listDatasets(projectId);
  }

  ingestionTimeline(kind: TimelineRow['kind']): readonly TimelineRow[] {
    return this.cat.ingestionTimeline?.(kind) ?? [];
  }

  getTable(id: TableId): TableInfo | undefined {
    if (this.isTemp(id)) return this.temps.get(id.tableId)?.info;
    const info = this.cat.getTable(id);
    if (!info || info.kind === 'VIEW' || this.cat.isVirtual(id) || !this.txn) return info;
    // The row count this transaction sees (its snapshot, its own changes) once it read the table.
    const txn = this.txn;
    const key = keyOf(id);
    return {
      id: info.id,
      kind: info.kind,
      columns: info.columns,
      viewQuery: info.viewQuery,
      ...(info.partitionUnit ? { partitionUnit: info.partitionUnit } : {}),
      get rowCount(): number {
        return txn.rowCount(key) ?? info.rowCount;
      },
      get resource(): Record<string, unknown> {
        return info.resource;
      },
    };
  }

  listTables(projectId: string, datasetId: string): readonly TableInfo[] {
    if (datasetId === TEMP_DATASET) return [...this.temps.values()].filter((t) => t.info.id.projectId === projectId).map((t) => t.info);
    return this.cat.listTables(projectId, datasetId);
  }

  async *scan(id: TableId, opts: ScanOptions): AsyncIterable<Batch> {
    let batches: readonly Batch[];
    if (opts.history) {
      // time-series-functions.md, APPENDS and CHANGES, Limitations: not within a multi-statement transaction; a
      // temporary table keeps no history.
      if (this.inTransaction) throw new QueryError(`${opts.history.fn} cannot be called within a multi-statement transaction`, 'invalidQuery');
      if (this.isTemp(id)) throw new QueryError(`${opts.history.fn} cannot read temporary table ${id.tableId}: it keeps no change history`, 'invalidQuery');
      yield* this.cat.scan(id, opts);
      return;
    }
    if (this.isTemp(id)) {
      const tt = this.temps.get(id.tableId);
      if (!tt) throw notFound(`Table ${id.projectId}:${id.datasetId}.${id.tableId}`);
      batches = tt.rows;
    } else if (opts.asOfMs !== undefined || this.cat.isVirtual(id)) {
      yield* this.cat.scan(id, opts);
      return;
    } else {
      const e = this.st.getTable(id.projectId, id.datasetId, id.tableId);
      if (!e) throw notFound(`Table ${id.projectId}:${id.datasetId}.${id.tableId}`);
      if (e.kind === 'VIEW') return;
      const txn = this.current();
      const td = this.st.tableData(id.projectId, id.datasetId, id.tableId);
      await td.load();
      yield* bufferedPartitionTime(td, opts, (cols, filters) => txn.scan(keyOf(id), cols, filters));
      return;
    }
    yield* scanBatches(batches, opts.columns);
  }

  async scanParts(id: TableId, opts: ScanOptions): Promise<ScanParts | null> {
    if (opts.history) return null;
    if (this.isTemp(id)) {
      const tt = this.temps.get(id.tableId);
      if (!tt) throw notFound(`Table ${id.projectId}:${id.datasetId}.${id.tableId}`);
      return { columns: tt.info.columns, parts: memParts(tt.rows) };
    }
    if (opts.asOfMs !== undefined || this.cat.isVirtual(id)) return null;
    const e = this.st.getTable(id.projectId, id.datasetId, id.tableId);
    if (!e) throw notFound(`Table ${id.projectId}:${id.datasetId}.${id.tableId}`);
    if (e.kind === 'VIEW') return { columns: [], parts: [] };
    const td = this.st.tableData(id.projectId, id.datasetId, id.tableId);
    await td.load();
    if (masksPartitionTime(td, opts)) return null;
    return this.current().scanParts(keyOf(id), opts.filters);
  }

  async scanLogicalBytes(id: TableId, opts: ScanOptions): Promise<{ rows: number; bytes: number[] } | null> {
    if (opts.history) return null;
    if (this.isTemp(id)) {
      const tt = this.temps.get(id.tableId);
      if (!tt) throw notFound(`Table ${id.projectId}:${id.datasetId}.${id.tableId}`);
      return partsLogicalBytes(memParts(tt.rows), tt.info.columns, opts.columns);
    }
    if (opts.asOfMs !== undefined || this.cat.isVirtual(id)) return null;
    const e = this.st.getTable(id.projectId, id.datasetId, id.tableId);
    if (!e) throw notFound(`Table ${id.projectId}:${id.datasetId}.${id.tableId}`);
    if (e.kind === 'VIEW') return { rows: 0, bytes: opts.columns.map(() => 0) };
    const td = this.st.tableData(id.projectId, id.datasetId, id.tableId);
    await td.load();
    if (masksPartitionTime(td, opts)) return null;
    return this.current().scanLogicalBytes(keyOf(id), opts.columns, opts.filters);
  }

  // --- writes ---------------------------------------------------------------

  async createTable(id: TableId, columns: readonly Column[], opts: CreateTableOptions = {}): Promise<TableInfo> {
    if (opts.rows) opts = { ...opts, rows: withTableValues(tableValueRule(columns, schemaFields(opts.resource)), opts.rows) };
    if (opts.temporary || this.isTemp(id)) return this.createTemp(id, columns, opts);
    this.permanentDdl();
    return this.cat.createTable(id, columns, opts);
  }

  async dropTable(id: TableId): Promise<void> {
    if (this.isTemp(id)) {
      this.temps.delete(id.tableId);
      return;
    }
    this.permanentDdl();
    await this.cat.dropTable(id);
  }

  async renameTable(id: TableId, to: TableId): Promise<void> {
    this.permanentDdl();
    await this.cat.renameTable(id, to);
  }

  async appendRows(id: TableId, rows: readonly Batch[] | AsyncIterable<Batch>): Promise<void> {
    rows = withTableValues(this.valueRule(id), rows);
    if (this.isTemp(id)) {
      this.temp(id).rows.push(...(await collectBatches(rows)));
      return;
    }
    // Staged rows of an explicit transaction are held; otherwise a stream goes on as it comes.
    if (this.inTransaction) rows = await collectBatches(rows);
    await this.current().append(keyOf(id), rows, () => this.cat.appendRows(id, rows));
  }

  async changeRows(id: TableId, change: RowChange): Promise<void> {
    change = { ...change, added: withTableValues(this.valueRule(id), change.added) };
    // change-data-capture.md, Limitations: tables with active CDC refuse mutating DML (DELETE, UPDATE, MERGE).
    if (activeCdc.isActive(id.projectId, id.datasetId, id.tableId)) {
      throw new QueryError(`UPDATE, DELETE and MERGE statements are not supported over table ${id.projectId}.${id.datasetId}.${id.tableId}: it is active with change data capture (a Storage Write API connection is streaming UPSERT and DELETE rows to it)`, 'invalidQuery', 400);
    }
    if (this.isTemp(id)) {
      const tt = this.temp(id);
      tt.rows = changedBatches(tt.rows, change.deleted, change.added);
      return;
    }
    await this.current().change(keyOf(id), change, (base) => this.cat.changeRows(id, change, base), (base, origins) => this.refuseRecentRows(id, base, origins));
  }

  /**
   * An explicit transaction's UPDATE, DELETE or MERGE may not change rows streamed recently: neither insertAll's
   * buffered rows (data-manipulation-language.md, Limitations, as outside a transaction) nor rows the Storage Write
   * API (gRPC) wrote within 30 minutes, which a statement outside a transaction may change (write-api-grpc.md, Use
   * DML with recently streamed data, Limitations: "within a multi-statement transaction ... unsupported").
   */
  private refuseRecentRows(id: TableId, base: TableState, origins: readonly number[]): void {
    const td = this.st.tableData(id.projectId, id.datasetId, id.tableId);
    const name = `${id.projectId}.${id.datasetId}.${id.tableId}`;
    if (streamingBuffer.recentlyStreamed(td, base, origins)) {
      throw new QueryError(`UPDATE or DELETE statement over table ${name} would affect rows in the streaming buffer, which is not supported`, 'invalidQuery', 400);
    }
    if (writeApiRecent.recentlyStreamed(td, base, origins)) {
      throw new QueryError(`UPDATE or DELETE statement over table ${name} would affect rows written by the Storage Write API within the last 30 minutes, which is not supported inside a multi-statement transaction`, 'invalidQuery', 400);
    }
  }

  async replaceRows(id: TableId, batches: readonly Batch[], columns?: readonly Column[], how: { readonly carried?: boolean; readonly truncating?: boolean } = {}): Promise<void> {
    const info = this.getTable(id);
    batches = withTableValues(tableValueRule(columns ?? info?.columns ?? [], schemaFields(info?.resource)), batches);
    if (this.isTemp(id)) {
      const tt = this.temp(id);
      tt.rows = [...batches];
      if (columns) tt.info = tempInfo(id, columns, tt);
      return;
    }
    if (columns) this.permanentDdl();
    await this.current().replace(keyOf(id), batches, columns, (base) => this.cat.replaceRows(id, batches, columns, { base, ...how }));
  }

  async alterColumns(id: TableId, columns: readonly Column[]): Promise<void> {
    if (this.isTemp(id)) {
      // Columns matched by name; added ones read as NULL.
      const tt = this.temp(id);
      tt.rows = conformBatches(tt.info.columns, columns, tt.rows);
      tt.info = tempInfo(id, columns, tt);
      return;
    }
    this.permanentDdl();
    // A rewrite of the rows is a mutation like any other: after the DML queued before it.
    await this.lockForMutation(id);
    await this.cat.alterColumns(id, columns);
  }

  async patchTableResource(id: TableId, patch: Record<string, unknown>): Promise<void> {
    if (this.isTemp(id)) return;
    this.permanentDdl();
    await this.cat.patchTableResource(id, patch);
  }

  async createDataset(projectId: string, datasetId: string, resource: Record<string, unknown>, ifNotExists: boolean): Promise<void> {
    if (datasetId === TEMP_DATASET) return;
    this.permanentDdl();
    await this.cat.createDataset(projectId, datasetId, resource, ifNotExists);
  }

  async dropDataset(projectId: string, datasetId: string, cascade: boolean, ifExists: boolean): Promise<void> {
    this.permanentDdl();
    await this.cat.dropDataset(projectId, datasetId, cascade, ifExists);
  }

  async undropDataset(projectId: string, datasetId: string, ifNotExists: boolean): Promise<void> {
    this.permanentDdl();
    await this.cat.undropDataset(projectId, datasetId, ifNotExists);
  }

  async patchDatasetResource(projectId: string, datasetId: string, patch: Record<string, unknown>): Promise<void> {
    this.permanentDdl();
    await this.cat.patchDatasetResource(projectId, datasetId, patch);
  }

  async putChild(kind: string, projectId: string, datasetId: string, id: string, resource: Record<string, unknown>, tableId?: string): Promise<void> {
    this.permanentDdl();
    await this.cat.putChild(kind, projectId, datasetId, id, resource, tableId);
  }

  getChild(kind: string, projectId: string, datasetId: string, id: string, tableId?: string): Record<string, unknown> | undefined {
    return this.cat.getChild(kind, projectId, datasetId, id, tableId);
  }

  listChildren(kind: string, projectId: string, datasetId: string, tableId?: string): readonly Record<string, unknown>[] {
    const c = this.copyInto;
    if (c && kind === 'rowAccessPolicies' && c.p === projectId && c.d === datasetId && c.t === tableId) return [];
    return this.cat.listChildren(kind, projectId, datasetId, tableId);
  }

  async deleteChild(kind: string, projectId: string, datasetId: string, id: string, tableId?: string): Promise<boolean> {
    this.permanentDdl();
    return this.cat.deleteChild(kind, projectId, datasetId, id, tableId);
  }

  // --- temporary tables -------------------------------------------------------

  private isTemp(id: TableId): boolean {
    return id.datasetId === TEMP_DATASET;
  }

  /** How the rows a statement writes into `id` become table values (types/table-values.ts). */
  private valueRule(id: TableId): ((b: Batch) => Batch) | undefined {
    const info = this.getTable(id);
    return info ? tableValueRule(info.columns, schemaFields(info.resource)) : undefined;
  }

  private temp(id: TableId): TempTable {
    const tt = this.temps.get(id.tableId);
    if (!tt) throw notFound(`Table ${id.projectId}:${id.datasetId}.${id.tableId}`);
    return tt;
  }

  private async createTemp(id: TableId, columns: readonly Column[], opts: CreateTableOptions): Promise<TableInfo> {
    const had = this.temps.get(id.tableId);
    if (had && opts.ifNotExists) return had.info;
    if (had && !opts.orReplace) throw new QueryError(`Already Exists: Table ${id.projectId}:${id.datasetId}.${id.tableId}`, 'duplicate', 409);
    const rows = { rows: await collectBatches(opts.rows ?? []) };
    const tt: TempTable = Object.assign(rows, { info: tempInfo(id, columns, rows, opts.resource) });
    this.temps.set(id.tableId, tt);
    return tt.info;
  }

  /** Ends the session: its transaction rolls back, its temporary tables go. */
  close(): void {
    this.abort();
    this.temps.clear();
  }
}

function tempInfo(id: TableId, columns: readonly Column[], tt: { rows: readonly Batch[] }, extra: Record<string, unknown> = {}): TableInfo {
  const resource = {
    ...extra,
    tableReference: { ...id },
    type: 'TABLE',
    // The statement's schema when it brings one (parameterized types, defaults, descriptions), else the columns'.
    schema: (extra.schema as { fields?: unknown[] } | undefined)?.fields?.length === columns.length ? extra.schema : { fields: columns.map((c) => columnToRestField(c.name, c.type, c.required)) },
    creationTime: String(Date.now()),
  };
  return {
    id,
    kind: 'TABLE',
    columns,
    get rowCount(): number {
      return tt.rows.reduce((n, b) => n + b.length, 0);
    },
    resource,
  };
}
