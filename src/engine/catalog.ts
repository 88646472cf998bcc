// QueryCatalog (src/storage/api.ts) over the engine's storage: what the SQL
// pipeline reads and writes. DDL goes through the same resource stamping as
// the REST handlers, so tables made by SQL look like tables made by REST.
import { ROW_POSITION, type CreateTableOptions, type QueryCatalog, type RowChange, type ScanFilter, type ScanOptions, type ScanParts, type TableId, type TableInfo, type TimelineRow } from '../storage/api.js';
import { ingestionTimeline } from './ingestion-timeline.js';
import { alreadyExists, CatalogError, invalid, notFound } from '../storage/errors.js';
import { conformBatches, mergeBatches } from '../storage/row-batches.js';
import { BULK_ROWS, stateBatches, type NewRows, type TableData, type TableState } from '../storage/table-data.js';
import { timeTravelMs } from '../storage/table-history.js';
import { scanBatches, scanState, stateLogicalBytes, stateParts } from '../storage/table-state.js';
import { schemaFieldsOf, type Resource } from '../storage/resources.js';
import type { Storage, TableEntry } from '../storage/store.js';
import { withoutExpired } from '../storage/partition-expiration.js';
import { columnToRestField, type Column, type RestField } from '../types/schema.js';
import { getValue, vectorFromValues, type Batch, type Vector } from '../types/vector.js';
import { Decimal, type Value } from '../types/values.js';
import { microsToPicos } from '../types/picos.js';
import type { SqlType } from '../types/types.js';
import { nullVector } from '../storage/vectors.js';
import { ingestionUnit, isPartitionTime, partitionId, visibleColumns, partitionOfMs, withPartitionTime } from '../storage/ingestion.js';
import { StagedRows } from '../storage/fragment-writes.js';

function widen(v: Value, to: SqlType): Value {
  if (v === null) return null;
  if (to.kind === 'NUMERIC' || to.kind === 'BIGNUMERIC') return typeof v === 'bigint' ? new Decimal(v.toString()) : v;
  if (to.kind === 'FLOAT64') return typeof v === 'bigint' ? Number(v) : v instanceof Decimal ? v.toNumber() : v;
  if (to.kind === 'TIMESTAMP_PICOS') return typeof v === 'bigint' ? microsToPicos(v) : v;
  return v;
}
import * as children from './children.js';
import { caseClash, deleteDataset, insertDataset, undeleteDataset, updateDataset } from './datasets.js';
import { HIDDEN_FIELDS, insertTable, presentTable, updateTable } from './tables.js';
import { streamingBuffer } from './streaming-buffer.js';
import { committedAfter } from '../storage/commit-clock.js';
import { historyBatches } from './change-history.js';

/** An instant some commit came after: the table is read from its history, not its current state. */
export const readsPast = (ms: number | undefined): ms is number => ms !== undefined && (ms < Date.now() || committedAfter(ms));

function restFieldsOf(columns: readonly Column[], previous: readonly RestField[] = []): RestField[] {
  return keptRestFields(visibleColumns(columns).map((c) => columnToRestField(c.name, c.type, c.required)), previous, true);
}

/**
 * New REST fields keeping the REST-only attributes of those whose type is unchanged, at any depth (a STRUCT
 * field retyped by SET DATA TYPE takes its new type). A column's mode comes from its Column; a STRUCT field's
 * REQUIRED, which the SqlType does not carry, is kept.
 */
function keptRestFields(fields: readonly RestField[], previous: readonly RestField[] = [], top = false): RestField[] {
  const prev = new Map(previous.map((f) => [f.name.toLowerCase(), f]));
  return fields.map((f) => {
    const old = prev.get(f.name.toLowerCase());
    // Keep descriptions and other REST-only attributes of unchanged columns.
    if (!old || old.type !== f.type) return f;
    const keepMode = !top && old.mode === 'REQUIRED' && f.mode !== 'REPEATED';
    const kept: RestField = { ...old, mode: keepMode ? 'REQUIRED' : f.mode };
    // TIMESTAMP and TIMESTAMP(12) share the REST type: the precision tells them apart.
    if (f.timestampPrecision !== undefined) kept.timestampPrecision = f.timestampPrecision;
    else if (kept.timestampPrecision === '12') delete kept.timestampPrecision;
    if (f.fields) kept.fields = keptRestFields(f.fields, old.fields);
    return kept;
  });
}

/**
 * A table's rows as of `ms` (FOR SYSTEM_TIME AS OF, `table@ms`), in its
 * current schema: its own history, or, before it was created, the dropped or
 * replaced table of that name live then (CREATE OR REPLACE keeps the old
 * version readable). Outside both: BigQuery's "Invalid snapshot time" error.
 */
export async function rowsAsOf(st: Storage, id: TableId, e: TableEntry, ms: number): Promise<readonly Batch[]> {
  const { projectId: p, datasetId: d, tableId: t } = id;
  const created = Number(e.resource.creationTime ?? 0);
  const td = st.tableData(p, d, t);
  await td.load();
  const window = timeTravelMs(st.getDataset(p, d)?.resource);
  const earliest = Math.max(created, Date.now() - window, td.truncatedBeforeMs);
  // A state of another schema (an older generation, a replaced table) in today's columns, matched by name.
  // Partitions expired by `ms` are gone at `ms` though a sweep may have deleted them only later
  // (partition-expiration.ts): left out by the table's partition expiration, when the entry (its setting) is
  // unchanged since `ms`; no history of the setting is kept, so an instant before its last change reads as stored.
  const read = async (s: TableState | null, of: TableEntry = e): Promise<Batch[]> => {
    if (!s) return [];
    const settled = ms >= Number(of.resource.lastModifiedTime ?? Number.POSITIVE_INFINITY);
    return conformBatches(s.columns, st.storedColumnsOf(e), await stateBatches(settled ? await withoutExpired(of.kind, of.resource, s, ms) : s));
  };
  if (ms >= earliest) {
    // null: between the resource's creation stamp and the first version, when there were no rows yet.
    return read(await td.rowsAsOf(ms));
  }
  const x = ms >= Date.now() - window && ms < created ? st.findDeletedTable(p, d, t, ms) : undefined;
  if (x && Number(x.entry.resource.creationTime ?? 0) <= ms) {
    const rows = await st.deletedTableData(x).rowsAsOf(ms);
    if (rows) return read(rows, x.entry);
  }
  throw invalid(`Invalid snapshot time ${ms} for table ${p}:${d}.${t}@${ms}. Cannot read before ${earliest}.`);
}

/**
 * Rows of a table's visible columns completed with its hidden partition time
 * (storage/ingestion.ts), that of a write now: the writers that name none
 * (a query job's destination, a TRUNCATE's empty rows). Rows that carry it
 * pass as they are; so do tables not partitioned by ingestion time.
 */
export function completedRows<R extends NewRows>(stored: readonly Column[], resource: Record<string, unknown>, rows: R): R {
  const unit = ingestionUnit(resource);
  if (!unit || !stored.some(isPartitionTime) || rows instanceof StagedRows) return rows;
  const at = partitionOfMs(Date.now(), unit);
  if (Array.isArray(rows)) return (rows as readonly Batch[]).map((b) => withPartitionTime(b, stored, at)) as unknown as R;
  const source = rows as AsyncIterable<Batch>;
  return (async function* (): AsyncGenerator<Batch> {
    for await (const b of source) yield withPartitionTime(b, stored, at);
  })() as unknown as R;
}

/** The streaming buffer's positions whose partition time a scan with `opts` must read as NULL (none: nothing to mask). */
function bufferedPositions(td: TableData, opts: ScanOptions): [number, number][] {
  const state = td.state();
  const reads = opts.columns.some((i) => i >= 0 && state.columns[i] !== undefined && isPartitionTime(state.columns[i]!));
  return reads ? streamingBuffer.bufferedRanges(td, state) : [];
}

/** Whether a scan with `opts` reads the partition time of rows still in the streaming buffer (parallel parts cannot mask them: the caller scans). */
export function masksPartitionTime(td: TableData, opts: ScanOptions): boolean {
  return bufferedPositions(td, opts).length > 0;
}

/**
 * The rows `read` gives for `opts` (a scan of a table's stored columns, or
 * ROW_POSITION), with an ingestion-time partitioned table's partition time
 * NULL for rows still in the streaming buffer, as the service documents
 * (`WHERE _PARTITIONTIME IS NULL` selects them). Each row's position tells;
 * filters on the partition time are left to the executor (statistics know
 * the stored times, not the NULLs read).
 */
export async function* bufferedPartitionTime(
  td: TableData,
  opts: ScanOptions,
  read: (cols: readonly number[], filters: readonly ScanFilter[] | undefined) => AsyncIterable<Batch>,
): AsyncGenerator<Batch> {
  const buffered = bufferedPositions(td, opts);
  if (buffered.length === 0) {
    yield* read(opts.columns, opts.filters);
    return;
  }
  const stored = td.schema;
  const at = opts.columns.map((i, k) => (i >= 0 && stored[i] && isPartitionTime(stored[i]!) ? k : -1)).filter((k) => k >= 0);
  const filters = (opts.filters ?? []).filter((f) => !(stored[f.column] && isPartitionTime(stored[f.column]!)));
  const n = opts.columns.length;
  for await (const b of read([...opts.columns, ROW_POSITION], filters)) {
    const pos = b.columns[n]!;
    const columns = b.columns.slice(0, n);
    for (const k of at) {
      const values: Value[] = [];
      for (let r = 0; r < b.length; r++) {
        const p = Number(getValue(pos, r));
        values.push(buffered.some(([lo, hi]) => p >= lo && p < hi) ? null : getValue(columns[k]!, r));
      }
      columns[k] = vectorFromValues(columns[k]!.type, values);
    }
    yield { length: b.length, columns };
  }
}

/** The hidden partition time of a batch of a table's stored rows (after its `visible` columns), if it has one: kept by schema rewrites. */
const hiddenOf = (b: Batch, visible: readonly Column[]): Vector[] => b.columns.slice(visible.length, visible.length + 1);

const vKey = (id: TableId): string => `${id.projectId}\u0000${id.datasetId}\u0000${id.tableId}`;

/** One partition of a table partitioned by a column: the stored column, its decorator id, which values belong to it. */
export interface PartitionMatch {
  readonly column: number;
  readonly id: string;
  readonly contains: (v: Value) => boolean;
}

export class EngineCatalog implements QueryCatalog {
  /** Per-query tables that exist only in memory (`_bqemu_jobs.JOBS` from the job registry). */
  private readonly virtual = new Map<string, { info: TableInfo; batch: Batch }>();

  constructor(private readonly st: Storage) {}

  /** A read-only view that records what it reads (the plan cache's dependency checks). */
  recording(): RecordingCatalog {
    return new RecordingCatalog(this, this.st);
  }

  isVirtual(id: TableId): boolean {
    return this.virtual.has(vKey(id));
  }

  setVirtualTable(id: TableId, columns: readonly Column[], batch: Batch): void {
    const info: TableInfo = { id, kind: 'TABLE', columns, rowCount: batch.length, resource: { tableReference: { ...id }, type: 'TABLE' } };
    this.virtual.set(vKey(id), { info, batch });
  }

  getDataset(projectId: string, datasetId: string): { readonly resource: Record<string, unknown> } | undefined {
    const e = this.st.getDataset(projectId, datasetId);
    return e ? { resource: e.resource } : undefined;
  }

  listDatasets(projectId: string): readonly string[] {
    return this.st.listDatasets(projectId).map((d) => d.datasetId);
  }

  ingestionTimeline(kind: TimelineRow['kind']): readonly TimelineRow[] {
    return ingestionTimeline.list(kind);
  }

  /** TableInfo by entry, while its resource and kind are those it was made from (its getters read rows live). */
  private readonly infos = new WeakMap<TableEntry, { resource: Resource; kind: TableEntry['kind']; info: TableInfo }>();

  private info(id: TableId, e: TableEntry): TableInfo {
    const hit = this.infos.get(e);
    if (hit && hit.resource === e.resource && hit.kind === e.kind) return hit.info;
    const info = this.makeInfo(id, e);
    this.infos.set(e, { resource: e.resource, kind: e.kind, info });
    return info;
  }

  private makeInfo(id: TableId, e: TableEntry): TableInfo {
    const st = this.st;
    const view = e.resource.view as Resource | undefined;
    const mv = e.resource.materializedView as Resource | undefined;
    const viewQuery = e.kind === 'VIEW' ? (view?.query as string | undefined) : e.kind === 'MATERIALIZED_VIEW' ? (mv?.query as string | undefined) : undefined;
    let presented: { from: Resource; rows: number; modified: number; buffered: string; r: Record<string, unknown> } | undefined;
    return {
      id,
      kind: e.kind,
      columns: st.columnsOf(e),
      viewQuery,
      ...(st.storedColumnsOf(e).length > st.columnsOf(e).length ? { partitionUnit: ingestionUnit(e.resource) } : {}),
      ...(e.cdcWatermark !== undefined ? { upsertWatermarkMs: e.cdcWatermark } : {}),
      get rowCount(): number {
        return e.kind === 'VIEW' ? 0 : st.tableData(id.projectId, id.datasetId, id.tableId).rowCount;
      },
      get resource(): Record<string, unknown> {
        // Built once per state of the table (stored resource, row count, last
        // change): the partition-filter check reads it for every scan of every
        // statement. Readers never modify it (they copy).
        const td = e.kind === 'VIEW' ? undefined : st.tableData(id.projectId, id.datasetId, id.tableId);
        const rows = td ? td.rowCount : -1;
        const modified = td ? td.modifiedMs : -1;
        const buffered = td?.isLoaded ? streamingBuffer.key(td, td.state()) : '';
        if (presented && presented.from === e.resource && presented.rows === rows && presented.modified === modified && presented.buffered === buffered) return presented.r;
        const r = presentTable(st, id.projectId, id.datasetId, id.tableId, e);
        // GRANT bindings and search indexes, hidden from REST, are what INFORMATION_SCHEMA.OBJECT_PRIVILEGES and SEARCH_INDEXES list.
        for (const k of HIDDEN_FIELDS) if (e.resource[k] !== undefined) r[k] = e.resource[k];
        presented = { from: e.resource, rows, modified, buffered, r };
        return r;
      },
    };
  }

  getTable(id: TableId): TableInfo | undefined {
    const v = this.virtual.get(vKey(id));
    if (v) return v.info;
    const e = this.st.getTable(id.projectId, id.datasetId, id.tableId);
    return e ? this.info(id, e) : undefined;
  }

  listTables(projectId: string, datasetId: string): readonly TableInfo[] {
    const ds = this.st.getDataset(projectId, datasetId);
    if (!ds) return [];
    return this.st
      .liveTableIds(ds)
      .sort()
      .map((t) => this.info({ projectId, datasetId, tableId: t }, ds.tables[t]!));
  }

  async *scan(id: TableId, opts: ScanOptions): AsyncIterable<Batch> {
    const v = this.virtual.get(vKey(id));
    if (v) {
      yield* scanBatches([v.batch], opts.columns);
      return;
    }
    const e = this.st.getTable(id.projectId, id.datasetId, id.tableId);
    if (!e) throw notFound(`Table ${id.projectId}:${id.datasetId}.${id.tableId}`);
    if (e.kind === 'VIEW') return;
    if (opts.history) {
      yield* await historyBatches(this.st, id, e, opts.history, opts.columns);
      return;
    }
    const td = this.st.tableData(id.projectId, id.datasetId, id.tableId);
    await td.load();
    if (readsPast(opts.asOfMs)) {
      yield* scanBatches(await rowsAsOf(this.st, id, e, opts.asOfMs), opts.columns);
      return;
    }
    const state = td.state();
    yield* bufferedPartitionTime(td, opts, (cols, filters) => scanState(state, cols, filters));
  }

  async scanParts(id: TableId, opts: ScanOptions): Promise<ScanParts | null> {
    if (this.virtual.has(vKey(id)) || readsPast(opts.asOfMs) || opts.history) return null;
    const e = this.st.getTable(id.projectId, id.datasetId, id.tableId);
    if (!e) throw notFound(`Table ${id.projectId}:${id.datasetId}.${id.tableId}`);
    if (e.kind === 'VIEW') return { columns: [], parts: [] };
    const td = this.st.tableData(id.projectId, id.datasetId, id.tableId);
    await td.load();
    const state = td.state();
    if (masksPartitionTime(td, opts)) return null;
    return { columns: state.columns, parts: await stateParts(state, opts.filters) };
  }

  async scanLogicalBytes(id: TableId, opts: ScanOptions): Promise<{ rows: number; bytes: number[] } | null> {
    if (this.virtual.has(vKey(id)) || readsPast(opts.asOfMs) || opts.history) return null;
    const e = this.st.getTable(id.projectId, id.datasetId, id.tableId);
    if (!e) throw notFound(`Table ${id.projectId}:${id.datasetId}.${id.tableId}`);
    if (e.kind === 'VIEW') return { rows: 0, bytes: opts.columns.map(() => 0) };
    const td = this.st.tableData(id.projectId, id.datasetId, id.tableId);
    await td.load();
    const state = td.state();
    if (masksPartitionTime(td, opts)) return null;
    return stateLogicalBytes(state, opts.columns, opts.filters);
  }

  async createTable(id: TableId, columns: readonly Column[], opts: CreateTableOptions = {}): Promise<TableInfo> {
    const { projectId: p, datasetId: d, tableId: t } = id;
    const existing = this.st.getTable(p, d, t);
    const kind = opts.kind ?? 'TABLE';
    if (existing && opts.ifNotExists) return this.info(id, existing);
    const body: Resource = { ...(opts.resource ?? {}), tableReference: { projectId: p, datasetId: d, tableId: t } };
    // Descriptions and default values the statement gave (opts.resource.schema) stay on their fields.
    if (columns.length > 0 || kind !== 'VIEW') body.schema = { fields: restFieldsOf(columns, schemaFieldsOf(body)) };
    if (kind === 'VIEW') body.view = { query: opts.viewQuery ?? '', useLegacySql: false };
    if (kind === 'MATERIALIZED_VIEW') body.materializedView = { ...(body.materializedView as Resource | undefined), query: opts.viewQuery ?? '' };
    if (kind === 'SNAPSHOT' || kind === 'EXTERNAL') body.type = kind;
    // OR REPLACE: the new table takes the old one's place in one commit (a reader never finds neither),
    // with its rows, if any (written to the new table's storage before it appears).
    const rows = opts.rows;
    const fill = rows ? async (td: TableData) => td.commit(await td.prepare(null, completedRows(td.schema, body, rows))) : undefined;
    await insertTable(this.st, p, d, t, body, opts.orReplace === true, fill);
    return this.getTable(id)!;
  }

  async dropTable(id: TableId): Promise<void> {
    await this.st.deleteTable(id.projectId, id.datasetId, id.tableId);
  }

  async renameTable(id: TableId, to: TableId): Promise<void> {
    await this.st.renameTable(id.projectId, id.datasetId, id.tableId, to.tableId);
  }

  async appendRows(id: TableId, given: readonly Batch[] | AsyncIterable<Batch>): Promise<void> {
    const { projectId: p, datasetId: d, tableId: t } = id;
    const entry = this.st.requireTable(p, d, t);
    const rows = completedRows(this.st.storedColumnsOf(entry), entry.resource, given);
    if (!Array.isArray(rows)) {
      // Held until they make a bulk append: a small result is one WAL record, a large one goes to files as it comes.
      const it = (rows as AsyncIterable<Batch>)[Symbol.asyncIterator]();
      const held: Batch[] = [];
      let n = 0;
      for (let r = await it.next(); ; r = await it.next()) {
        if (r.done) return n > 0 ? this.appendRows(id, held) : undefined;
        if (r.value.length === 0) continue;
        held.push(r.value);
        n += r.value.length;
        if (n >= BULK_ROWS) break;
      }
      async function* all(): AsyncGenerator<Batch> {
        yield* held;
        for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
      }
      // Not retried on the table that has the name now (Storage.writeRows): a stream is read once; a replace meanwhile fails the statement.
      const td = this.st.tableData(p, d, t);
      await td.commit(await td.prepare(null, all()));
      return;
    }
    const batches = rows as readonly Batch[];
    // A statement's rows as one append: a CTAS / INSERT ... SELECT of bulk size
    // then goes straight to a fragment (not one WAL JSON record per 4096-row
    // batch, compacted again in the background while later queries run).
    const batch = batches.length === 1 ? batches[0]! : mergeBatches(this.st.storedColumnsOf(entry), batches);
    await this.st.writeRows(p, d, t, (td) => td.append(batch));
  }

  /** `base`: the state the change's positions are in (the statement's read of the table); else the table's state now. */
  async changeRows(id: TableId, change: RowChange, base?: TableState): Promise<void> {
    const { projectId: p, datasetId: d, tableId: t } = id;
    const e = this.st.requireTable(p, d, t);
    const td = this.st.tableData(p, d, t);
    if (td.isLoaded && streamingBuffer.recentlyStreamed(td, base ?? td.state(), change.deleted)) {
      throw new CatalogError(400, 'invalid', 'invalidQuery', `UPDATE or DELETE statement over table ${p}.${d}.${t} would affect rows in the streaming buffer, which is not supported`);
    }
    // No retry on the table that has the name now (Storage.writeRows): the positions are this table's.
    await td.change(base ?? null, change.deleted, completedRows(this.st.storedColumnsOf(e), e.resource, change.added), change);
  }

  async replaceRows(
    id: TableId,
    batches: NewRows,
    columns?: readonly Column[],
    opts: { readonly base?: TableState; readonly carried?: boolean; readonly truncating?: boolean; readonly policies?: Record<string, Resource> } = {},
  ): Promise<void> {
    const { projectId: p, datasetId: d, tableId: t } = id;
    const e = this.st.requireTable(p, d, t);
    // data-manipulation-language.md, Limitations: TRUNCATE, like UPDATE/DELETE/MERGE, may not remove rows streamed within 30 minutes.
    const td = this.st.tableData(p, d, t);
    if (opts.truncating && td.isLoaded && streamingBuffer.anyRecent(td, opts.base ?? td.state())) {
      throw new CatalogError(400, 'invalid', 'invalidQuery', `TRUNCATE TABLE statement over table ${p}.${d}.${t} would affect rows in the streaming buffer, which is not supported`);
    }
    const resource = columns ? { ...e.resource, schema: { fields: restFieldsOf(columns, schemaFieldsOf(e.resource)) } } : undefined;
    const stored = this.st.storedColumnsOf(resource ? { ...e, resource } : e);
    await this.st.replaceRows(p, d, t, completedRows(stored, e.resource, batches), { resource, base: opts.base, carried: opts.carried, ...(opts.policies ? { policies: opts.policies } : {}) });
  }

  /**
   * Replaces all rows outside any statement (a job's WRITE_TRUNCATE): in
   * turn with the table's mutating statements (its mutation lock), rows
   * appended meanwhile kept; with `policies`, the table's row access
   * policies are replaced in the same commit (a copy job's).
   */
  async replaceRowsQueued(id: TableId, batches: NewRows, columns?: readonly Column[], policies?: Record<string, Resource>): Promise<void> {
    const release = await this.st.mutations.acquire({ p: id.projectId, d: id.datasetId, t: id.tableId }, { kind: 'statement' });
    try {
      const td = this.st.tableData(id.projectId, id.datasetId, id.tableId);
      await td.load();
      await this.replaceRows(id, batches, columns, { base: td.state(), ...(policies ? { policies } : {}) });
    } finally {
      release();
    }
  }

  /**
   * Rows into one partition of an ingestion-time partitioned table (a
   * decorated destination, `t$20240101`; the rows carry its partition time),
   * in turn with the table's mutations: WRITE_TRUNCATE deletes that
   * partition's rows and adds the new ones in one commit (a row-level
   * change: the other partitions' rows stay as they are, and change history
   * sees only that partition's rows go), WRITE_EMPTY needs it empty,
   * WRITE_APPEND adds.
   */
  /**
   * A decorated load's rows into one partition: an ingestion-time partition's time, or (PartitionMatch) a
   * column-partitioned table's partition. WRITE_TRUNCATE replaces that partition's rows, WRITE_EMPTY needs it empty.
   */
  async writePartition(id: TableId, partition: bigint | PartitionMatch, rows: readonly Batch[] | StagedRows, write: string): Promise<void> {
    const { projectId: p, datasetId: d, tableId: t } = id;
    const release = await this.st.mutations.acquire({ p, d, t }, { kind: 'statement' });
    try {
      const td = this.st.tableData(p, d, t);
      await td.load();
      const base = td.state();
      const hidden = base.columns.findIndex(isPartitionTime);
      if (typeof partition === 'bigint' && hidden < 0) throw invalid(`Table ${p}:${d}.${t} is not partitioned by ingestion time`);
      const match: PartitionMatch =
        typeof partition === 'bigint'
          ? { column: hidden, id: partitionId(partition, ingestionUnit(this.st.requireTable(p, d, t).resource) ?? 'DAY'), contains: (v) => v === partition }
          : partition;
      // The positions of the partition's live rows. Rows still in the streaming buffer are not among them: the buffer
      // is retained when a job overwrites a partition with WRITE_TRUNCATE (write-api-rest.md, Stream into
      // time-partitioned tables); they read as __UNPARTITIONED__ meanwhile, and WRITE_EMPTY does not count them.
      const buffered = streamingBuffer.bufferedRanges(td, base);
      const inBuffer = (q: number): boolean => buffered.some(([a, z]) => q >= a && q < z);
      const inPartition: number[] = [];
      for await (const b of scanState(base, [match.column, ROW_POSITION])) {
        const pos = b.columns[1]!.data as ArrayLike<number>;
        for (let r = 0; r < b.length; r++) if (match.contains(getValue(b.columns[0]!, r)) && !inBuffer(Number(pos[r]))) inPartition.push(Number(pos[r]));
      }
      if (write === 'WRITE_EMPTY' && inPartition.length > 0) throw alreadyExists(`Table ${p}:${d}.${t}$${match.id}`);
      if (write !== 'WRITE_TRUNCATE') {
        await td.commit(await td.prepare(null, rows));
        return;
      }
      await td.changeWith(base, inPartition, rows);
    } finally {
      release();
    }
  }

  async alterColumns(id: TableId, columns: readonly Column[]): Promise<void> {
    const { projectId: p, datasetId: d, tableId: t } = id;
    const e = this.st.requireTable(p, d, t);
    const old = this.st.columnsOf(e);
    const retyped = columns.some((c) => {
      const o = old.find((x) => x.name.toLowerCase() === c.name.toLowerCase());
      return o !== undefined && JSON.stringify(o.type) !== JSON.stringify(c.type);
    });
    const resource = { ...e.resource, schema: { fields: restFieldsOf(columns, schemaFieldsOf(e.resource)) } };
    const renamed =
      columns.length === old.length &&
      columns.some((c, i) => c.name.toLowerCase() !== old[i]!.name.toLowerCase()) &&
      columns.every((c, i) => JSON.stringify(c.type) === JSON.stringify(old[i]!.type));
    if (renamed && e.kind !== 'VIEW') {
      // RENAME COLUMN: same shape, new names. Fragments are read by name, so the rows are rewritten under the new names.
      const td = this.st.tableData(p, d, t);
      await td.load();
      const base = td.state();
      const batches = (await stateBatches(base)).map((b) => ({ length: b.length, columns: [...columns.map((c, i) => ({ ...b.columns[i]!, type: c.type })), ...hiddenOf(b, old)] }));
      await this.st.replaceRows(p, d, t, batches, { resource, base, carried: true });
      return;
    }
    if (retyped && e.kind !== 'VIEW') {
      // ALTER COLUMN SET DATA TYPE widens values (INT64 -> NUMERIC/BIGNUMERIC/FLOAT64, NUMERIC -> BIGNUMERIC/FLOAT64): rewrite rows.
      const td = this.st.tableData(p, d, t);
      await td.load();
      const base = td.state();
      const oldIdx = new Map(old.map((c, i) => [c.name.toLowerCase(), i]));
      const batches = (await stateBatches(base)).map((b) => ({
        length: b.length,
        columns: columns.map((c) => {
          const i = oldIdx.get(c.name.toLowerCase());
          if (i === undefined) return nullVector(c.type, b.length);
          const v = b.columns[i]!;
          if (JSON.stringify(v.type) === JSON.stringify(c.type)) return v;
          const vals: Value[] = [];
          for (let r = 0; r < b.length; r++) vals.push(widen(getValue(v, r), c.type));
          return vectorFromValues(c.type, vals);
        }).concat(hiddenOf(b, old)),
      }));
      await this.st.replaceRows(p, d, t, batches, { resource, base, carried: true });
      return;
    }
    await this.st.setTableResource(p, d, t, resource, true);
  }

  async patchTableResource(id: TableId, patch: Record<string, unknown>): Promise<void> {
    // tables.patch semantics: fields replace, null deletes (ALTER TABLE SET OPTIONS(x = NULL)).
    await updateTable(this.st, id.projectId, id.datasetId, id.tableId, patch, true);
  }

  async createDataset(projectId: string, datasetId: string, resource: Record<string, unknown>, ifNotExists: boolean): Promise<void> {
    if (this.st.getDataset(projectId, datasetId) || caseClash(this.st, projectId, datasetId, resource.isCaseInsensitive === true)) {
      if (ifNotExists) return;
    }
    await insertDataset(this.st, projectId, datasetId, { ...resource, datasetReference: { projectId, datasetId } });
  }

  async dropDataset(projectId: string, datasetId: string, cascade: boolean, ifExists: boolean): Promise<void> {
    if (!this.st.getDataset(projectId, datasetId) && ifExists) return;
    await deleteDataset(this.st, projectId, datasetId, cascade);
  }

  async undropDataset(projectId: string, datasetId: string, ifNotExists: boolean): Promise<void> {
    if (this.st.getDataset(projectId, datasetId) && ifNotExists) return;
    await undeleteDataset(this.st, projectId, datasetId);
  }

  async patchDatasetResource(projectId: string, datasetId: string, patch: Record<string, unknown>): Promise<void> {
    await updateDataset(this.st, projectId, datasetId, patch, true);
  }

  async putChild(kind: string, projectId: string, datasetId: string, id: string, resource: Record<string, unknown>, tableId?: string): Promise<void> {
    await children.putChild(this.st, kind, projectId, datasetId, tableId ?? '', id, resource, false);
  }

  getChild(kind: string, projectId: string, datasetId: string, id: string, tableId?: string): Record<string, unknown> | undefined {
    try {
      return children.getChild(this.st, kind, projectId, datasetId, tableId ?? '', id);
    } catch (e) {
      if (e instanceof CatalogError && e.code === 404) return undefined;
      throw e;
    }
  }

  listChildren(kind: string, projectId: string, datasetId: string, tableId?: string): readonly Record<string, unknown>[] {
    try {
      return Object.values(children.collection(this.st, kind, projectId, datasetId, tableId ?? ''));
    } catch (e) {
      if (e instanceof CatalogError && e.code === 404) return [];
      throw e;
    }
  }

  async deleteChild(kind: string, projectId: string, datasetId: string, id: string, tableId?: string): Promise<boolean> {
    try {
      return await children.deleteChild(this.st, kind, projectId, datasetId, tableId ?? '', id);
    } catch (e) {
      if (e instanceof CatalogError && e.code === 404) return false;
      throw e;
    }
  }
}

/** Thrown by a recording view when the analysis tries to write: it is no pure read and not cached. */
export class NotCacheable extends Error {}

/** Resource fields of a TableInfo that follow the table's rows (not its stored resource). */
const DATA_FIELDS = new Set(['numRows', 'lastModifiedTime']);

/**
 * A read-only view of an EngineCatalog for the plan cache (`plan-cache.ts`):
 * every read leaves a check that is true while what it read is unchanged.
 * Datasets, tables, routines and policies are compared by the identity of
 * their stored entries and resources, which the storage and REST handlers
 * replace on every change (never edit in place); row counts and the
 * resource fields derived from rows by value. Reads whose answer the checks
 * cannot cover (listings, INFORMATION_SCHEMA.JOBS, scans, writes) make the
 * statement uncacheable.
 */
export class RecordingCatalog implements QueryCatalog {
  readonly checks: (() => boolean)[] = [];
  cacheable = true;

  constructor(
    private readonly cat: EngineCatalog,
    private readonly st: Storage,
  ) {}

  getDataset(projectId: string, datasetId: string): { readonly resource: Record<string, unknown> } | undefined {
    const st = this.st;
    const e = st.getDataset(projectId, datasetId);
    const res = e?.resource;
    this.checks.push(() => {
      const x = st.getDataset(projectId, datasetId);
      return x === e && x?.resource === res;
    });
    return this.cat.getDataset(projectId, datasetId);
  }

  getTable(id: TableId): TableInfo | undefined {
    const info = this.cat.getTable(id);
    if (info && this.cat.isVirtual(id)) this.cacheable = false;
    const st = this.st;
    const e = st.getTable(id.projectId, id.datasetId, id.tableId);
    const res = e?.resource;
    const kind = e?.kind;
    const cat = this.cat;
    this.checks.push(() => {
      const x = st.getTable(id.projectId, id.datasetId, id.tableId);
      return x === e && x?.resource === res && x?.kind === kind && !cat.isVirtual(id);
    });
    if (!info) return undefined;
    const checks = this.checks;
    const rows = (): void => {
      if (info.kind === 'VIEW') return; // no rows: presentTable adds no row-derived fields
      const td = st.tableData(id.projectId, id.datasetId, id.tableId);
      const n = td.rowCount;
      const m = td.modifiedMs;
      checks.push(() => {
        const now = st.tableData(id.projectId, id.datasetId, id.tableId);
        return now.rowCount === n && now.modifiedMs === m;
      });
    };
    return {
      id: info.id,
      kind: info.kind,
      columns: info.columns,
      viewQuery: info.viewQuery,
      ...(info.partitionUnit ? { partitionUnit: info.partitionUnit } : {}),
      get rowCount(): number {
        rows();
        return info.rowCount;
      },
      get resource(): Record<string, unknown> {
        // Fields read one by one are covered by the stored resource's identity, except the row-derived ones.
        return new Proxy(info.resource, {
          get(t, k, r) {
            if (typeof k === 'string' && DATA_FIELDS.has(k)) rows();
            return Reflect.get(t, k, r);
          },
          ownKeys(t) {
            rows();
            return Reflect.ownKeys(t);
          },
          has(t, k) {
            if (typeof k === 'string' && DATA_FIELDS.has(k)) rows();
            return Reflect.has(t, k);
          },
          getOwnPropertyDescriptor(t, k) {
            rows();
            return Reflect.getOwnPropertyDescriptor(t, k);
          },
        });
      },
    };
  }

  getChild(kind: string, projectId: string, datasetId: string, id: string, tableId?: string): Record<string, unknown> | undefined {
    const r = this.cat.getChild(kind, projectId, datasetId, id, tableId);
    this.checks.push(() => this.cat.getChild(kind, projectId, datasetId, id, tableId) === r);
    return r;
  }

  listChildren(kind: string, projectId: string, datasetId: string, tableId?: string): readonly Record<string, unknown>[] {
    const rs = this.cat.listChildren(kind, projectId, datasetId, tableId);
    // A table's row-access policies (read for every scan); other listings feed INFORMATION_SCHEMA.
    if (kind !== 'rowAccessPolicies') this.cacheable = false;
    this.checks.push(() => {
      const now = this.cat.listChildren(kind, projectId, datasetId, tableId);
      return now.length === rs.length && now.every((x, i) => x === rs[i]);
    });
    return rs;
  }

  listDatasets(projectId: string): readonly string[] {
    this.cacheable = false;
    return this.cat.listDatasets(projectId);
  }

  ingestionTimeline(kind: TimelineRow['kind']): readonly TimelineRow[] {
    this.cacheable = false;
    return this.cat.ingestionTimeline?.(kind) ?? [];
  }

  listTables(projectId: string, datasetId: string): readonly TableInfo[] {
    this.cacheable = false;
    return this.cat.listTables(projectId, datasetId);
  }

  scan(id: TableId, opts: ScanOptions): AsyncIterable<Batch> {
    this.cacheable = false;
    return this.cat.scan(id, opts);
  }

  private write(): never {
    this.cacheable = false;
    throw new NotCacheable('a write during analysis');
  }
  createTable(): Promise<TableInfo> {
    return this.write();
  }
  dropTable(): Promise<void> {
    return this.write();
  }
  renameTable(): Promise<void> {
    return this.write();
  }
  appendRows(): Promise<void> {
    return this.write();
  }
  changeRows(): Promise<void> {
    return this.write();
  }
  replaceRows(): Promise<void> {
    return this.write();
  }
  alterColumns(): Promise<void> {
    return this.write();
  }
  patchTableResource(): Promise<void> {
    return this.write();
  }
  createDataset(): Promise<void> {
    return this.write();
  }
  dropDataset(): Promise<void> {
    return this.write();
  }
  undropDataset(): Promise<void> {
    return this.write();
  }
  patchDatasetResource(): Promise<void> {
    return this.write();
  }
  putChild(): Promise<void> {
    return this.write();
  }
  deleteChild(): Promise<boolean> {
    return this.write();
  }
}
