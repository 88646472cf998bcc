// Table rows: InsertRows (insertAll) and ListRows (tabledata.list), spec 2.3, 2.8, 4.4.
import { requireAllRowsOf } from '../analyzer/row-access.js';
import { SESSION_USER } from './query.js';
import { CatalogError, invalid, notFound } from '../storage/errors.js';
import { decoratorPartition, ingestionUnit, isPartitionTime, partitionOfMs, visibleColumns, withPartitionTime } from '../storage/ingestion.js';
import { schemaFieldsOf, type Resource } from '../storage/resources.js';
import type { CommitFile, Storage } from '../storage/store.js';
import type { AppendedRows, Mark, TableData } from '../storage/table-data.js';
import { columnToRestField, type Column, type RestField } from '../types/schema.js';
import type { Batch } from '../types/vector.js';
import { convertRows, keptBatch, rowObjects, type CellError, type InsertError, type RecentIds, type RowsConversion } from '../storage/json-rows.js';
import type { SqlType } from '../types/types.js';
import { scannable, scanRows, type ScanOptions } from '../storage/insert-scan.js';
import { idHash, IdSet } from '../storage/id-set.js';
import { encodeRowsPageAsync, type RowsPage, type WireOptions } from '../types/wire.js';
import { PagesAhead, ResultStore } from './results.js';
import { insertTable } from './tables.js';
import { bufferedPartitionTime, EngineCatalog, rowsAsOf } from './catalog.js';
import { statementClockMicros } from '../storage/commit-clock.js';
import type { TableId } from '../storage/api.js';
import type { LeftOut } from '../planner/column-defaults.js';
import { getValue, sliceBatches, takeVector, vectorFromValues } from '../types/vector.js';
import { decodeRow } from '../io/rows.js';
import { liveRows, readState, scanState } from '../storage/table-state.js';
import { streamingBuffer, writeApiRecent } from './streaming-buffer.js';
import { tableValueRule } from '../types/table-values.js';
import { bothRules, streamBoundRule } from './stream-bounds.js';
import { applyChangeBatch } from './storage-write/cdc-apply.js';
import { canonicalCode, ingestionTimeline } from './ingestion-timeline.js';
import type { Change } from './storage-write/cdc.js';

/** insertId de-duplication window (the real service keeps ids about a minute; a few minutes is safe). */
export const DEDUP_WINDOW_MS = 5 * 60 * 1000;

/**
 * Recently stored insertIds per table, in two generations of id sets: an id
 * is kept at least DEDUP_WINDOW_MS (at most twice that). Sets of ids
 * (storage/id-set.ts), not a map of expiry times: no boxed number per id and
 * no sweeps over all ids.
 */
export class IdGenerations {
  private current = new IdSet();
  private previous = new IdSet();
  private rotatedMs: number;

  constructor(now: number) {
    this.rotatedMs = now;
  }

  /** `h`: idHash(id), when the caller has it. */
  has(id: string, h = idHash(id)): boolean {
    return this.current.has(id, h) || this.previous.has(id, h);
  }

  /** Ages the generations; true when both are empty afterwards (the table can be forgotten). */
  rotate(now: number): boolean {
    if (now - this.rotatedMs >= DEDUP_WINDOW_MS) {
      // Two windows since the last rotation: everything is older than a window.
      this.previous = now - this.rotatedMs >= 2 * DEDUP_WINDOW_MS ? new IdSet() : this.current;
      this.current = new IdSet();
      this.rotatedMs = now;
    }
    return this.current.size === 0 && this.previous.size === 0;
  }

  add(ids: readonly string[]): void {
    for (const id of ids) this.current.add(id, idHash(id));
  }
}

const NO_IDS: RecentIds = { has: () => false };

class DedupCache {
  private byTable = new Map<string, IdGenerations>();
  /**
   * Ids of acknowledged requests not yet in their sets. Adding 500 ids to a
   * large set (a cache miss per id) took ~0.1 ms of the engine's ~1 ms per
   * insertAll; it runs right after the reply is written (setImmediate), while
   * the gateway and the client handle it, and any check settles them first.
   */
  private pending: { table: string; ids: readonly string[]; now: number }[] = [];

  /** The table's recent ids (read-only use). */
  forTable(table: string, now: number): RecentIds {
    this.settle();
    const g = this.byTable.get(table);
    if (!g) return NO_IDS;
    if (g.rotate(now)) {
      this.byTable.delete(table);
      return NO_IDS;
    }
    return g;
  }

  remember(table: string, ids: readonly string[], now: number): void {
    if (ids.length === 0) return;
    if (this.pending.length === 0) setImmediate(() => this.settle());
    this.pending.push({ table, ids, now });
  }

  private settle(): void {
    if (this.pending.length === 0) return;
    const pending = this.pending;
    this.pending = [];
    for (const { table, ids, now } of pending) {
      let g = this.byTable.get(table);
      if (!g) this.byTable.set(table, (g = new IdGenerations(now)));
      g.rotate(now);
      g.add(ids);
    }
  }
}

export interface InsertRowsArgs {
  readonly projectId: string;
  readonly datasetId: string;
  readonly tableId: string;
  readonly rowsJson: string;
  /** The rows as UTF-8 JSON bytes as the client sent them (wins over rowsJson); logged to the WAL as they are. */
  readonly rowsUtf8?: Buffer;
  readonly skipInvalidRows: boolean;
  readonly ignoreUnknownValues: boolean;
  readonly templateSuffix: string;
  /** A mark the table keeps with these rows (TableData.append): a Storage Write stream's offset. */
  readonly mark?: Mark;
  /** The rows enter the streaming buffer (tabledata.insertAll; not the Storage Write API, seeds or external tables). */
  readonly streaming?: boolean;
  /** The rows are the Storage Write API's (gRPC): noted as recent writes (streaming-buffer.ts, writeApiRecent). */
  readonly writeApi?: boolean;
}

/** The request's rows (JSON text or UTF-8 bytes) parsed: the generic path. */
function parseRows(text: string | Buffer): unknown[] {
  let rows: unknown;
  try {
    const t = typeof text === 'string' ? text : text.toString('utf8');
    rows = t ? JSON.parse(t) : [];
  } catch {
    throw invalid('Invalid JSON payload received.');
  }
  if (!Array.isArray(rows)) throw invalid('Invalid JSON payload received. rows must be a list.');
  return rows;
}

/**
 * The request's rows converted: one pass over their bytes into the columns;
 * anything unusual (including invalid JSON) goes the generic way, JSON.parse
 * then convertRows. `opts` are the scanner's (build false: the result may
 * have `built` false; latin1: of a Buffer's bytes).
 */
export function convertRequestRows(rows: string | Buffer, columns: readonly Column[], recentIds: RecentIds = NO_IDS, opts: ScanOptions = {}): RowsConversion {
  const bytes = typeof rows !== 'string' ? rows : rows && !/\p{Cs}/u.test(rows) ? Buffer.from(rows) : undefined;
  // The scanner checks top-level keys only: a RECORD's unknown sub-fields are found on the generic path.
  const scan = bytes && scannable(columns) && !(opts.rejectUnknown && hasRecord(columns)) ? scanRows(bytes, columns, recentIds, opts) : null;
  if (scan) return scan;
  const parsed = parseRows(rows);
  return opts.rejectUnknown ? convertReportingUnknown(parsed, columns, recentIds) : convertRows(parsed, columns, recentIds);
}

const withRecords = new WeakMap<readonly Column[], boolean>();
function hasRecord(columns: readonly Column[]): boolean {
  let r = withRecords.get(columns);
  if (r === undefined) withRecords.set(columns, (r = columns.some((c) => (c.type.kind === 'ARRAY' ? c.type.element : c.type).kind === 'STRUCT')));
  return r;
}

/**
 * convertRows, where a row naming a field the schema lacks (at any depth) is
 * rejected as the service rejects it without ignoreUnknownValues: reason
 * invalid, location the field's path, `no such field: <path>.`.
 */
function convertReportingUnknown(rows: unknown[], columns: readonly Column[], recentIds: RecentIds): RowsConversion {
  const unknown = new Map<number, CellError[]>();
  rows.forEach((item, r) => {
    const json = item !== null && typeof item === 'object' ? (item as { json?: unknown }).json : undefined;
    if (json === null || typeof json !== 'object' || Array.isArray(json)) return;
    const errs: CellError[] = [];
    unknownFields(json as Record<string, unknown>, columns, '', errs);
    if (errs.length) unknown.set(r, errs);
  });
  if (unknown.size === 0) return convertRows(rows, columns, recentIds);
  // Such rows go in as non-objects (rejected, no builder slot) and their error is replaced.
  const conv = convertRows(rows.map((item, r) => (unknown.has(r) ? null : item)), columns, recentIds);
  return { ...conv, errors: conv.errors.map((e) => ({ index: e.index, errors: unknown.get(e.index) ?? e.errors })) };
}

function unknownFields(o: Record<string, unknown>, fields: readonly { name: string; type: SqlType }[], path: string, out: CellError[]): void {
  for (const key of Object.keys(o)) {
    const lower = key.toLowerCase();
    const f = fields.find((x) => x.name === key) ?? fields.find((x) => x.name.toLowerCase() === lower);
    if (!f) {
      out.push({ reason: 'invalid', location: path + key, debugInfo: '', message: `no such field: ${path + key}.` });
      continue;
    }
    const t = f.type.kind === 'ARRAY' ? f.type.element : f.type;
    if (t.kind !== 'STRUCT') continue;
    const v = o[key];
    for (const item of Array.isArray(v) ? v : [v]) {
      if (item !== null && typeof item === 'object' && !Array.isArray(item)) unknownFields(item as Record<string, unknown>, t.fields, `${path}${f.name}.`, out);
    }
  }
}

/**
 * How an accepted request's rows are made again from their bytes read back
 * from the log (TableData.appendRequestRows). Made here, apart from any request, so
 * that the closure cannot hold one.
 */
function rowsMaker(columns: readonly Column[]): (rows: Buffer) => Batch {
  return (rows) => keptBatch(convertRequestRows(rows, columns, NO_IDS));
}

/**
 * The partition time insertAll rows into `entry` get (ingestion-time
 * partitioned tables; undefined for others): the decorator's partition
 * (`t$20240101`), else that of their arrival.
 */
function streamedPartition(entry: { resource: Record<string, unknown> }, name: string, decorator: string | undefined, now: number): bigint | undefined {
  const unit = ingestionUnit(entry.resource);
  if (decorator === undefined) return unit ? partitionOfMs(now, unit) : undefined;
  if (!unit) throw invalid(`Streaming to a partition decorator is supported for ingestion-time partitioned tables only (emulator): ${name}$${decorator}`);
  // write-api-rest.md, Ingestion-time partitioning: decorators on daily partitioned tables only, naming a day from
  // 31 days back to 16 days ahead of the current UTC date (other partitions take a load or query job).
  if (unit !== 'DAY') throw invalid(`Streaming to a partition decorator is only supported for daily partitioned tables: ${name}$${decorator}`);
  const at = decoratorPartition(decorator, unit);
  if (at === undefined) throw invalid(`Invalid partition decorator $${decorator} for table ${name}`);
  const today = partitionOfMs(now, 'DAY');
  if (at < today - 31n * DAY_MICROS || at > today + 16n * DAY_MICROS) {
    throw invalid(`The partition $${decorator} of ${name} is outside the allowed bounds for streaming (31 days in the past to 16 days in the future); write it with a load or query job`);
  }
  return at;
}

const DAY_MICROS = 86_400_000_000n;

/** quotas.md, Streaming inserts: rows a request may carry, and the length of an insertId. */
const MAX_REQUEST_ROWS = 50_000;
const MAX_INSERT_ID = 128;

/** write-api-rest.md, Template table details: the suffix's characters, and its length with the table's name. */
function checkTemplateSuffix(table: string, suffix: string): void {
  if (!/^[A-Za-z0-9_]+$/.test(suffix)) throw invalid(`Invalid template suffix "${suffix}": it may contain only letters, numbers and underscores`);
  if (table.length + suffix.length > 1024) throw invalid(`Invalid template suffix: the table name and the suffix together exceed 1024 characters`);
}

export class RowService {
  private dedup = new DedupCache();
  private readonly ahead = new PagesAhead<ListRowsResult>();
  /** The catalog default expressions are evaluated under (made on first use). */
  private catalog?: EngineCatalog;

  constructor(
    private readonly st: Storage,
    private readonly results: ResultStore,
  ) {}

  /** Returns the JSON text of `insertErrors`, or '' when every row was stored. */
  async insertRows(a: InsertRowsArgs): Promise<string> {
    const { projectId: p, datasetId: d } = a;
    // `t$20240101`: the rows go to that partition of an ingestion-time partitioned table.
    const dollar = a.tableId.indexOf('$');
    let t = dollar >= 0 ? a.tableId.slice(0, dollar) : a.tableId;
    const decorator = dollar >= 0 ? a.tableId.slice(dollar + 1) : undefined;
    const base = this.st.requireTable(p, d, t);
    if (a.templateSuffix) {
      checkTemplateSuffix(t, a.templateSuffix);
      // Template tables: rows go to `<table><suffix>`, created from the template's schema.
      const target = t + a.templateSuffix;
      if (!this.st.getTable(p, d, target)) {
        await insertTable(this.st, p, d, target, { schema: base.resource.schema, tableReference: { projectId: p, datasetId: d, tableId: target } }).catch((e: unknown) => {
          if (!this.st.getTable(p, d, target)) throw e;
        });
      }
      t = target;
    }
    // A replace or drop of the table meanwhile: the rows go to the table of that name now (with its schema), or fail.
    if (!a.streaming) return this.st.writeRows(p, d, t, (data) => this.insertInto(data, a, p, d, t, decorator));
    // tabledata.insertAll: counted in STREAMING_TIMELINE (ingestion-timeline.ts) with its outcome.
    const seen = { rows: 0 };
    const note = (code: string | null): void => ingestionTimeline.note('STREAMING', { p, d, t }, null, code, seen.rows, a.rowsUtf8?.length ?? Buffer.byteLength(a.rowsJson));
    try {
      const errs = await this.st.writeRows(p, d, t, (data) => this.insertInto(data, a, p, d, t, decorator, seen));
      note(errs === '' ? null : 'INVALID_ARGUMENT');
      return errs;
    } catch (e) {
      note(canonicalCode(e instanceof CatalogError ? e.code : 500));
      throw e;
    }
  }

  /**
   * Rows held by Storage Write streams, committed as one table commit with
   * the streams' state `files` (Storage.commitRows): after a crash either
   * the rows are in the table and the files say so, or neither, so a stream
   * is never committed twice. Nothing is written when a row does not
   * convert: its errors are returned.
   */
  async commitStreamRows(p: string, d: string, t: string, rows: readonly Record<string, unknown>[], files: readonly CommitFile[]): Promise<InsertError[]> {
    return this.st.writeRows(p, d, t, async (td) => {
      let batch: Batch | null = null;
      if (rows.length > 0) {
        const made = this.streamBatch(p, d, t, rows);
        if (Array.isArray(made)) return made;
        batch = made;
      }
      // The committed rows' positions for writeApiRecent: the rows the table gained over the commit (rows appended
      // meanwhile by others count too, a bound on the safe side: a transaction's DML over them is refused).
      await td.load();
      const before = td.state();
      await this.st.commitRows(batch ? [await td.prepare(null, [batch])] : [], [], files);
      const after = td.state();
      if (batch && after.generation === before.generation) writeApiRecent.note(td, { generation: after.generation, start: before.rows, end: after.rows }, 0);
      return [];
    });
  }

  /**
   * Storage Write rows as a batch of the table's stored columns (its hidden partition time included), converted as
   * a commit of held rows converts them; or the rows' errors.
   */
  private streamBatch(p: string, d: string, t: string, rows: readonly Record<string, unknown>[]): Batch | InsertError[] {
    const entry = this.st.requireTable(p, d, t);
    const conv = convertRequestRows(JSON.stringify(rows.map((json) => ({ json }))), this.st.columnsOf(entry), NO_IDS, { rejectUnknown: true });
    if (conv.errors.length > 0) return conv.errors;
    // Parameterized columns: NUMERIC(P, S) rounded as every write makes it; a value that no longer fits (the
    // table altered since the append checked it) fails the commit.
    const rule = tableValueRule(this.st.columnsOf(entry), schemaFieldsOf(entry.resource), true);
    const refused: InsertError[] = [];
    const made = rule ? rule(keptBatch(conv), (k, message, location) => refused.push({ index: conv.keep[k]!, errors: [{ reason: 'invalid', location, debugInfo: '', message }] })) : keptBatch(conv);
    if (refused.length > 0) return refused;
    const partition = streamedPartition(entry, `${p}:${d}.${t}`, undefined, Date.now());
    return partition === undefined ? made : withPartitionTime(made, this.st.storedColumnsOf(entry), partition);
  }

  /**
   * CDC rows of a default-stream append (change-data-capture.md) applied to their primary keys in one commit
   * (cdc-apply.ts), in turn with the table's mutating statements; or the rows' errors, nothing applied.
   */
  async applyChanges(p: string, d: string, t: string, rows: readonly Record<string, unknown>[], changes: readonly Change[]): Promise<InsertError[]> {
    const release = await this.st.mutations.acquire({ p, d, t }, { kind: 'statement' });
    try {
      return await this.st.writeRows(p, d, t, async (td) => {
        const batch = this.streamBatch(p, d, t, rows);
        if (Array.isArray(batch)) return batch;
        await applyChangeBatch(this.st, td, { p, d, t }, batch, changes);
        return [];
      });
    } finally {
      release();
    }
  }

  /**
   * Storage Write rows checked against the table's column parameters
   * (STRING(L), BYTES(L), NUMERIC(P, S), BIGNUMERIC(P, S), inside STRUCTs
   * too) when they are appended, whatever the stream type: one message per
   * refused row, in the service's wording (`Field foo: STRING(10) has maximum
   * length 10 but got a value with length 12 on field foo.`, as the Java
   * client's integration test of row errors asserts). Values that do not
   * convert at all are left to the insert.
   */
  checkStreamRows(p: string, d: string, t: string, rows: readonly Record<string, unknown>[], held: boolean): { index: number; message: string }[] {
    const entry = this.st.requireTable(p, d, t);
    const columns = this.st.columnsOf(entry);
    // A column-partitioned table's partitioning value must lie within the streaming bound (stream-bounds.ts).
    const rule = bothRules(tableValueRule(columns, schemaFieldsOf(entry.resource), true), streamBoundRule(entry.resource, columns));
    // Held rows (PENDING, BUFFERED) are converted here too, so a missing REQUIRED value fails its append, not the
    // commit; a COMMITTED stream's rows are converted by the insert that writes them.
    if ((!rule && !held) || rows.length === 0) return [];
    const conv = convertRequestRows(JSON.stringify(rows.map((json) => ({ json }))), columns, NO_IDS, { build: true, rejectUnknown: true });
    if (conv.errors.length > 0) return conv.errors.map((e) => ({ index: e.index, message: e.errors.map((c) => c.message).join(' ') }));
    if (!rule) return [];
    const out = new Map<number, string>();
    rule(keptBatch(conv), (k, message) => {
      const index = conv.keep[k]!;
      const path = /^Field (.+?): /.exec(message)?.[1];
      if (!out.has(index)) out.set(index, path ? `${message} on field ${path}.` : message);
    });
    return [...out].map(([index, message]) => ({ index, message }));
  }

  private async insertInto(data: TableData, a: InsertRowsArgs, p: string, d: string, t: string, decorator?: string, seen?: { rows: number }): Promise<string> {
    const entry = this.st.requireTable(p, d, t);
    if (entry.kind === 'VIEW') throw invalid(`Cannot insert into view ${p}:${d}.${t}`);
    const columns = this.st.columnsOf(entry);
    const stored = this.st.storedColumnsOf(entry);
    // Ids dedupe between uniform references only: a template insert's not against a direct one (write-api-rest.md,
    // Template table details, Deduplication).
    const tableKey = `${p}\u0000${d}\u0000${t}${a.templateSuffix ? '\u0000template' : ''}`;
    const now = Date.now();
    const partition = streamedPartition(entry, `${p}:${d}.${t}`, decorator, now);
    const recentIds = this.dedup.forTable(tableKey, now);
    const rows = a.rowsUtf8 ?? a.rowsJson;
    // Only checked: the rows are made from their bytes again when read (or
    // below, when some are not kept or they came as text). A Buffer's latin1
    // text, which the scanner reads, is made once for both scans.
    const latin1 = typeof rows === 'string' ? undefined : rows.toString('latin1');
    const rejectUnknown = !a.ignoreUnknownValues;
    // Parameterized columns (STRING(L), NUMERIC(P, S), at any depth): each row's values are checked and rounded as
    // a SQL write makes them (types/table-values.ts), and such rows are stored as made, not as the request's bytes.
    // insertAll rows also keep a column-partitioned table's streaming bound (stream-bounds.ts): a refused row is an invalid row.
    const rule = bothRules(tableValueRule(columns, schemaFieldsOf(entry.resource), true), a.streaming ? streamBoundRule(entry.resource, columns, now) : undefined);
    // insertAll into a table with a defaulted column: rows are made here and stored as made (defaults are evaluated
    // once, at insert). The Storage Write API's gRPC rule differs (defaults only for fields its writer schema lacks,
    // default-values.md): not applied here.
    const defaults = a.streaming === true && schemaFieldsOf(entry.resource).some((f) => f.defaultValueExpression);
    const conv = convertRequestRows(rows, columns, recentIds, { build: rule !== undefined || defaults, latin1, rejectUnknown });
    const { n, newIds } = conv;
    if (seen) seen.rows = n;
    if (n > MAX_REQUEST_ROWS) throw invalid(`Too many rows present in the request, limit: ${MAX_REQUEST_ROWS} row count: ${n}.`);
    const longId = newIds.find((id) => id.length > MAX_INSERT_ID);
    if (longId !== undefined) throw invalid(`The insertId ${longId.slice(0, 16)}... is longer than ${MAX_INSERT_ID} characters`);
    let { errors, keep } = conv;
    let made: Batch | undefined;
    if (rule && keep.length > 0) {
      const failed = new Map<number, CellError[]>();
      const fixed = rule(keptBatch(conv), (k, message, location) => {
        // A builder slot is the request's row when no row was an insertId seen before; else no row index to report.
        if (conv.m !== n) throw invalid(message);
        const index = keep[k]!;
        failed.set(index, [...(failed.get(index) ?? []), { reason: 'invalid', location, debugInfo: '', message }]);
      });
      if (failed.size > 0) {
        errors = [...errors, ...[...failed].map(([index, errs]) => ({ index, errors: errs }))].sort((x, y) => x.index - y.index);
        const sel = keep.flatMap((slot, k) => (failed.has(slot) ? [] : [k]));
        keep = sel.map((k) => keep[k]!);
        made = { length: sel.length, columns: fixed.columns.map((v) => takeVector(v, sel)) };
      } else made = fixed;
    }
    if (errors.length > 0 && !a.skipInvalidRows) {
      // The whole request is rejected: every other row is reported as stopped.
      const bad = new Set(errors.map((e) => e.index));
      const out: InsertError[] = [...errors];
      for (let r = 0; r < n; r++) {
        if (!bad.has(r)) out.push({ index: r, errors: [{ reason: 'stopped', location: '', debugInfo: '', message: '' }] });
      }
      return JSON.stringify(out);
    }
    if (defaults && keep.length > 0) made = await this.withDefaults(made ?? keptBatch(conv), columns, parseRows(rows), keep, recentIds, { projectId: p, datasetId: d, tableId: t });
    if (keep.length > 0) {
      // Every row stored as sent: the WAL keeps the request's own JSON (no
      // re-encoding), and request bytes are made into rows from the log when
      // read. Converting them again gives the same rows: nothing was dropped,
      // and conversion depends on the bytes and the columns only.
      const all = keep.length === n;
      let placed: AppendedRows | undefined;
      // Rows of an ingestion-time partitioned table carry their partition time: logged as columns, not as the request's JSON.
      if (made) placed = await data.append(partition === undefined ? made : withPartitionTime(made, stored, partition), undefined, a.mark);
      else if (all && typeof rows !== 'string' && partition === undefined) placed = await data.appendRequestRows(rows, n, rowsMaker(columns), a.mark);
      else {
        const kept = keptBatch(conv.built ? conv : convertRequestRows(rows, columns, recentIds, { latin1, rejectUnknown }));
        const batch = partition === undefined ? kept : withPartitionTime(kept, stored, partition);
        placed = await data.append(batch, all && typeof rows === 'string' && partition === undefined ? rows : undefined, a.mark);
      }
      const bytes = (): number => (typeof rows === 'string' ? Buffer.byteLength(rows) : rows.length);
      if (a.streaming && placed) streamingBuffer.note(data, placed, bytes());
      if (a.writeApi && placed) writeApiRecent.note(data, placed, bytes());
      this.dedup.remember(tableKey, newIds, now);
    }
    return errors.length > 0 ? JSON.stringify(errors) : '';
  }

  /**
   * Rows of an insert with the table's defaults where a row leaves a column out (default-values.md, Use the
   * BigQuery Storage Write API (REST)): a key the row has, even with null, keeps its value. `batch` row k is slot
   * keep[k] of the request's rows. Evaluated as one write's (planner/column-defaults.ts, the rule INSERT uses).
   */
  private async withDefaults(batch: Batch, columns: readonly Column[], rows: readonly unknown[], keep: readonly number[], recentIds: RecentIds, id: { projectId: string; datasetId: string; tableId: string }): Promise<Batch> {
    const { objs } = rowObjects(rows, recentIds);
    const kept = keep.map((slot) => objs[slot]!);
    const has = (o: Record<string, unknown>, lower: string): boolean => Object.keys(o).some((k) => k.toLowerCase() === lower);
    this.catalog ??= new EngineCatalog(this.st);
    return applyDefaults(this.catalog, id, columns, batch, (c) => {
      const lower = c.name.toLowerCase();
      return kept.some((o) => !has(o, lower)) && ((k: number) => !has(kept[k]!, lower));
    });
  }

  /**
   * Storage Write API rows (REST JSON objects keyed by column name) with the defaults of the columns `leftOut` names
   * for them (default-values.md, Use the Storage Write API (gRPC): its rule is the caller's), as JSON values: the
   * rows are then written, or held by a PENDING/BUFFERED stream and logged, as made, so a restart reads the same.
   */
  async streamRowsWithDefaults(p: string, d: string, t: string, rows: Record<string, unknown>[], leftOut: LeftOut): Promise<Record<string, unknown>[]> {
    const entry = this.st.requireTable(p, d, t);
    // Tables without a defaulted column (most): nothing to evaluate.
    if (rows.length === 0 || !schemaFieldsOf(entry.resource).some((f) => f.defaultValueExpression)) return rows;
    const columns = this.st.columnsOf(entry);
    const chosen = new Map<number, true | ((k: number) => boolean)>();
    const nulls: Batch = { length: rows.length, columns: columns.map((c) => vectorFromValues(c.type, new Array<null>(rows.length).fill(null))) };
    this.catalog ??= new EngineCatalog(this.st);
    const made = await applyDefaults(this.catalog, { projectId: p, datasetId: d, tableId: t }, columns, nulls, (c) => {
      const which = leftOut(c);
      if (which !== false) chosen.set(columns.indexOf(c), which);
      return which;
    });
    if (chosen.size === 0) return rows;
    const sel = [...chosen.keys()];
    const fields = sel.map((i) => columnToRestField(columns[i]!.name, columns[i]!.type, columns[i]!.required));
    const wire: WireOptions = { timestampFormat: 'RFC3339', stringScalars: false, rowsAsBytes: false, maxBytes: 0 };
    const encoded = JSON.parse((await encodeRowsPageAsync([made], 0, rows.length, wire, sel)).rowsJson) as { f: { v: unknown }[] }[];
    return rows.map((row, k) => {
      const out = { ...row };
      const dflt = decodeRow(fields, encoded[k]!);
      sel.forEach((i, j) => {
        const which = chosen.get(i)!;
        if (which === true || which(k)) out[columns[i]!.name] = dflt[fields[j]!.name];
      });
      return out;
    });
  }

  /**
   * A page of a table's rows. Pages of a query result (immutable) are also
   * encoded one ahead (PagesAhead): the next page is being written while the
   * client reads this one.
   */
  async listRows(a: ListRowsArgs): Promise<ListRowsResult> {
    if (!ResultStore.isAnonDataset(a.datasetId)) return this.readPage(a);
    const page = (await this.ahead.take(pageKey(a))) ?? (await this.readPage(a));
    if (page.nextIndex >= 0 && a.maxResults > 0) {
      const next = { ...a, startIndex: page.nextIndex };
      this.ahead.add(pageKey(next), () => this.readPage(next));
    }
    return page;
  }

  private async readPage(a: ListRowsArgs): Promise<ListRowsResult> {
    const { projectId: p, datasetId: d, tableId: t } = a;
    let columns: readonly Column[];
    let fields: RestField[];
    let total: number;
    let etag: string;
    /** The page's rows [start, start + count), from `pageRows` of the batches it gives. */
    let pageOf: (start: number, count: number) => Promise<{ batches: readonly Batch[]; at: number }>;
    const anon = ResultStore.isAnonDataset(d) ? await this.results.get(p, d, t, Math.max(0, a.startIndex), a.maxResults) : undefined;
    if (anon) {
      columns = anon.columns.map((c) => ({ name: c.name, type: c.type, required: false }));
      fields = anon.columns.map((c) => columnToRestField(c.name, c.type));
      total = anon.rowCount;
      etag = anon.etag;
      pageOf = (start) => Promise.resolve({ batches: anon.batches, at: start });
    } else {
      if (ResultStore.isAnonDataset(d) && !this.st.getDataset(p, d)) throw notFound(`Table ${p}:${d}.${t}`);
      const read = await readTableRows(this.st, p, d, t, a.settled);
      // using-row-level-security-with-features.md, Tabledata.list: over a table with row access policies it needs
      // the TRUE filter (extract jobs read through a query instead, which the policies filter).
      requireAllRowsOf(read.policies, { projectId: p, datasetId: d, tableId: t }, SESSION_USER);
      ({ columns, fields, total } = read);
      etag = `"${Buffer.from(`${p}.${d}.${t}:${read.version}:${total}`).toString('base64').slice(-16)}"`;
      // Only the page's rows are read (the row groups holding them).
      pageOf = async (start, count) => ({ batches: await read.rows(start, start + count), at: 0 });
    }
    let sel = columns.map((_, i) => i);
    if (a.selectedFields) {
      const wanted = new Set(
        a.selectedFields
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .map((s) => s.split('.')[0]!.toLowerCase()),
      );
      for (const w of wanted) {
        if (!columns.some((c) => c.name.toLowerCase() === w)) throw invalid(`Field ${w} not found in table schema.`);
      }
      sel = sel.filter((i) => wanted.has(columns[i]!.name.toLowerCase()));
    }
    const start = Math.max(0, a.startIndex);
    const count = Math.max(0, Math.min(a.maxResults, total - start));
    const got = await pageOf(start, count);
    const { rowsJson, rowsUtf8, rows } = await encodeRowsPageAsync(got.batches, got.at, count, a.wire, sel);
    const selFields = sel.map((i) => fields[i] ?? columnToRestField(columns[i]!.name, columns[i]!.type, columns[i]!.required));
    return {
      rowsJson,
      ...(rowsUtf8 ? { rowsUtf8 } : {}),
      totalRows: total,
      schemaJson: JSON.stringify({ fields: selFields }),
      nextIndex: start + rows < total && rows > 0 ? start + rows : -1,
      etag,
    };
  }
}

/** Everything that shapes a page of rows. */
function pageKey(a: ListRowsArgs): string {
  const w = a.wire;
  return [a.projectId, a.datasetId, a.tableId, a.startIndex, a.maxResults, a.selectedFields, w.timestampFormat, w.stringScalars, w.rowsAsBytes, w.maxBytes].join('\u0000');
}

export interface ListRowsArgs {
  readonly projectId: string;
  readonly datasetId: string;
  readonly tableId: string;
  readonly startIndex: number;
  readonly maxResults: number;
  readonly selectedFields: string;
  readonly wire: WireOptions;
  /** Leave out the streaming buffer's rows (extract jobs). */
  readonly settled?: boolean;
}

export interface ListRowsResult extends Readonly<Omit<RowsPage, 'rows'>> {
  readonly totalRows: number;
  readonly schemaJson: string;
  readonly nextIndex: number;
  readonly etag: string;
}


/**
 * The rows of one partition of an ingestion-time partitioned table
 * (`t$20240101`; `$__UNPARTITIONED__`: rows still in the streaming buffer,
 * whose partition time reads NULL), as tabledata.list lists them (and a query
 * job into that partition reports them). Read whole: the partition's rows
 * are held for the listing.
 */
async function partitionRows(st: Storage, p: string, d: string, t: string, decorator: string, settled: boolean, withPartitionTime: boolean): Promise<TableRows> {
  const entry = st.requireTable(p, d, t);
  const unit = ingestionUnit(entry.resource);
  if (!unit) throw invalid(`Partition decorators are supported for ingestion-time partitioned tables only (emulator): ${p}:${d}.${t}$${decorator}`);
  const want = decorator === '__UNPARTITIONED__' ? null : decoratorPartition(decorator, unit);
  if (want === undefined) throw invalid(`Invalid partition decorator $${decorator} for table ${p}:${d}.${t}`);
  const td = st.tableData(p, d, t);
  await td.load();
  const state = settled ? streamingBuffer.settled(td, td.state()) : td.state();
  const stored = state.columns;
  const hidden = stored.findIndex(isPartitionTime);
  const kept = withPartitionTime ? stored : visibleColumns(stored);
  const opts = { columns: stored.map((_, i) => i) };
  const batches: Batch[] = [];
  // Buffered rows read NULL as queries read them.
  for await (const b of bufferedPartitionTime(td, opts, (cols, filters) => scanState(state, cols, filters))) {
    const keep: number[] = [];
    for (let r = 0; r < b.length; r++) if (getValue(b.columns[hidden]!, r) === want) keep.push(r);
    if (keep.length > 0) batches.push({ length: keep.length, columns: b.columns.slice(0, kept.length).map((v) => takeVector(v, keep)) });
  }
  const total = batches.reduce((n, b) => n + b.length, 0);
  return { columns: kept, fields: schemaFieldsOf(entry.resource as Resource), total, version: td.version, policies: Object.values(entry.policies), rows: (start, end) => Promise.resolve(sliceBatches(batches, start, end)) };
}

/** A table's rows as readTableRows reads them, with the table's row access policies. */
export interface TableRows {
  readonly columns: readonly Column[];
  readonly fields: RestField[];
  readonly total: number;
  readonly version: number;
  /** The table's row access policies: who reads through tabledata.list or copies it needs the TRUE filter. */
  readonly policies: readonly Resource[];
  readonly rows: (start: number, end: number) => Promise<readonly Batch[]>;
}

/**
 * A table's rows as tabledata.list and copy jobs read them: the live table,
 * or with a snapshot decorator `table@<epoch ms>` (negative: that long ago;
 * 0: now) the live table as of that instant, or a deleted one from its
 * snapshot.
 */
export async function readTableRows(
  st: Storage,
  p: string,
  d: string,
  t: string,
  /** Leave out rows still in the streaming buffer (copy and extract jobs read only managed storage). */
  settled = false,
  /** With an ingestion-time partitioned table's hidden partition time, last (copy jobs keep each row's partition). */
  withPartitionTime = false,
): Promise<TableRows> {
  await st.expirePartitions();
  // A partition of an ingestion-time partitioned table (`t$20240101`): its rows only.
  const dollar = t.indexOf('$');
  if (dollar > 0) return partitionRows(st, p, d, t.slice(0, dollar), t.slice(dollar + 1), settled, withPartitionTime);
  let name = t;
  let deleted = undefined as ReturnType<Storage['resolveDecorated']>;
  let asOfMs: number | undefined;
  const decorated = /^(.+)@(-?\d+)$/.exec(t);
  if (!st.getTable(p, d, t) && decorated) {
    name = decorated[1]!;
    const at = Number(decorated[2]);
    if (st.getTable(p, d, name)) asOfMs = at < 0 ? Date.now() + at : at === 0 ? undefined : at;
    else deleted = st.resolveDecorated(p, d, t);
    if (!deleted && !st.getTable(p, d, name)) name = t;
  }
  const entry = deleted ? deleted.entry : st.requireTable(p, d, name);
  // A materialized view is not listable either (the real service's message); it is read by queries. Nor is an external
  // table (external-tables.md, Limitations: no TableDataList, no extract job, no copy of one).
  if (entry.kind === 'VIEW' || entry.kind === 'MATERIALIZED_VIEW' || entry.kind === 'EXTERNAL') throw invalid(`Cannot list a table of type ${entry.kind}.`);
  const td = deleted ? st.deletedTableData(deleted) : st.tableData(p, d, name);
  await td.load();
  const fields = schemaFieldsOf(entry.resource as Resource);
  if (asOfMs !== undefined && asOfMs < Date.now()) {
    const batches = await rowsAsOf(st, { projectId: p, datasetId: d, tableId: name }, entry, asOfMs);
    const total = batches.reduce((s, b) => s + b.length, 0);
    const kept = withPartitionTime ? td.schema : visibleColumns(td.schema);
    const slice = (start: number, end: number): Batch[] => sliceBatches(batches, start, end).map((b) => ({ length: b.length, columns: b.columns.slice(0, kept.length) }));
    return { columns: kept, fields, total, version: td.version, policies: Object.values(entry.policies), rows: (start, end) => Promise.resolve(slice(start, end)) };
  }
  const state = settled ? streamingBuffer.settled(td, td.state()) : td.state();
  // The hidden partition time is the last stored column.
  const columns = withPartitionTime ? state.columns : visibleColumns(state.columns);
  const all = columns.map((_, i) => i);
  return { columns, fields, total: liveRows(state), version: td.version, policies: Object.values(entry.policies), rows: (start, end) => readState(state, all, start, end) };
}

/**
 * `batch` (rows of table `id`'s `columns`) with the defaults of the columns a write leaves out (planner/column-defaults.ts,
 * the rule INSERT uses), evaluated as one statement of the engine's own, at the write (`nowMicros`: its clock).
 */
export async function applyDefaults(catalog: EngineCatalog, id: TableId, columns: readonly Column[], batch: Batch, leftOut: LeftOut, nowMicros = statementClockMicros()): Promise<Batch> {
  const { withDefaultsOf } = await import('../planner/column-defaults.js');
  const info = catalog.getTable(id)!;
  const ctx = { sql: '', projectId: id.projectId, params: { named: new Map(), positional: [] }, catalog, jobId: '', signal: new AbortController().signal, dryRun: false, nowMicros, sessionUser: SESSION_USER };
  return withDefaultsOf(ctx, info, columns, batch, leftOut);
}
