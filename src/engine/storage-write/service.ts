// The Storage Write API (google.cloud.bigquery.storage.v1.BigQueryWrite),
// served by the engine so that the warehouse's write clients work unchanged.
//
// Streams: `_default` (committed, at-least-once, no offsets) and created
// COMMITTED (rows visible when the append is acknowledged), PENDING (rows held
// until FinalizeWriteStream + BatchCommitWriteStreams) and BUFFERED (rows held
// until FlushRows) streams with exact offsets. Rows that reach the table go
// through the same durable insert path as tabledata.insertAll; created
// streams (their offsets and the rows PENDING and BUFFERED streams hold) are
// logged before an append is acknowledged (stream-log.ts; under the same sync
// policy as the table WALs, --sync-writes included), so both survive kill -9.
// Commits and flushes move a stream's rows into its table in one table
// commit with the stream's new state, and a COMMITTED stream's append logs
// its next offset with its rows in the table's WAL record (TableData marks),
// so every acknowledged row is written once, whatever a crash interrupts.
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { invalid } from '../../storage/errors.js';
import { schemaFieldsOf, type Resource } from '../../storage/resources.js';
import type { Storage } from '../../storage/store.js';
import type { RestField } from '../../types/schema.js';
import type { RowService } from '../rows.js';
import { isUndecodable, undecodableError } from '../grpc-guard.js';
import { decodeRows, RowDecodeError, type MessageDescriptor } from './proto-rows.js';
import { StreamLog } from './stream-log.js';
import { activeCdc, cdcKey, INVALID_CHANGE_TYPE, isPseudoColumn, PSEUDO_COLUMNS, takeChanges, type Change } from './cdc.js';
import { primaryKeyNames } from './cdc-apply.js';
import { ingestionTimeline } from '../ingestion-timeline.js';
import { KeyedMutex } from '../../storage/gate.js';
import type { CommitFile } from '../../storage/store.js';
import type { TableData } from '../../storage/table-data.js';

type StreamType = 'COMMITTED' | 'PENDING' | 'BUFFERED';

interface WriteStreamState {
  readonly name: string;
  readonly type: StreamType;
  readonly table: { p: string; d: string; t: string };
  readonly created: number;
  committed: number | null;
  finalized: boolean;
  /** Rows appended so far (the next offset). */
  rowCount: number;
  /** PENDING/BUFFERED rows not yet in the table. */
  held: Record<string, unknown>[];
  /** BUFFERED: rows [0, flushed) are in the table. */
  flushed: number;
}

/** One AppendRows call's CDC state: the table it streams changes to (its activeCdc key), whether it streamed plain rows. */
interface Connection {
  changes: string | null;
  plain: boolean;
}

interface Timestamp {
  seconds: number;
  nanos: number;
}

interface AppendRowsRequest {
  writeStream: string;
  offset: { value: number } | null;
  protoRows: { writerSchema: { protoDescriptor: MessageDescriptor | null } | null; rows: { serializedRows: Buffer[] } | null } | null;
  arrowRows: unknown;
  rows?: string;
  missingValueInterpretations?: Record<string, string>;
  defaultMissingValueInterpretation?: string;
}

type Interpretation = 'NULL_VALUE' | 'DEFAULT_VALUE';

const TABLE_PATH = /^projects\/([^/]+)\/datasets\/([^/]+)\/tables\/([^/]+)$/;
const STREAM_PATH = /^(projects\/([^/]+)\/datasets\/([^/]+)\/tables\/([^/]+))\/streams\/([^/]+)$/;

/** The service's StorageErrorCode values (rpc reference, StorageError.StorageErrorCode). */
const STORAGE_CODES = {
  TABLE_NOT_FOUND: 1, STREAM_ALREADY_COMMITTED: 2, STREAM_NOT_FOUND: 3, INVALID_STREAM_TYPE: 4, INVALID_STREAM_STATE: 5,
  STREAM_FINALIZED: 6, SCHEMA_MISMATCH_EXTRA_FIELDS: 7, OFFSET_ALREADY_EXISTS: 8, OFFSET_OUT_OF_RANGE: 9,
} as const;
type StorageCode = keyof typeof STORAGE_CODES;
const STORAGE_ERROR_TYPE = 'type.googleapis.com/google.cloud.bigquery.storage.v1.StorageError';

function varint(n: number): Buffer {
  const out: number[] = [];
  for (; n > 127; n = Math.floor(n / 128)) out.push((n % 128) | 128);
  out.push(n);
  return Buffer.from(out);
}

/** A StorageError message's bytes (code = 1, entity = 2, error_message = 3), as the write clients decode it. */
function storageErrorBytes(code: StorageCode, entity: string, message: string): Buffer {
  const text = (tag: number, s: string): Buffer => {
    const b = Buffer.from(s, 'utf8');
    return Buffer.concat([Buffer.from([tag]), varint(b.length), b]);
  };
  return Buffer.concat([Buffer.from([0x08]), varint(STORAGE_CODES[code]), text(0x12, entity), text(0x1a, message)]);
}

/**
 * gRPC error with the code and message the write clients look at; `storage`: the StorageError the service attaches
 * (in the trailer the client libraries read it from: managedwriter's parseStorageErrors).
 */
function grpcError(code: grpc.status, message: string, storage?: { code: StorageCode; entity: string }): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  if (storage) metadata.add('google.cloud.bigquery.storage.v1.storageerror-bin', storageErrorBytes(storage.code, storage.entity, message));
  return Object.assign(new Error(message), { code, details: message, metadata }) as grpc.ServiceError;
}

function ts(ms: number): Timestamp {
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 };
}

const FIELD_TYPE: Record<string, string> = { INTEGER: 'INT64', FLOAT: 'DOUBLE', FLOAT64: 'DOUBLE', BOOLEAN: 'BOOL', RECORD: 'STRUCT' };

function tableFieldSchema(f: RestField): unknown {
  const type = FIELD_TYPE[f.type.toUpperCase()] ?? f.type.toUpperCase();
  return {
    name: f.name,
    type,
    mode: (f.mode ?? 'NULLABLE').toUpperCase(),
    fields: (f.fields ?? []).map(tableFieldSchema),
    ...(f.rangeElementType ? { rangeElementType: { type: f.rangeElementType.type.toUpperCase() } } : {}),
    ...(f.timestampPrecision === '12' ? { timestampPrecision: { value: 12 } } : {}),
  };
}

export class StorageWriteService {
  private readonly streams = new Map<string, WriteStreamState>();
  /** FlushRows of one stream, one at a time (each moves the rows the one before left). */
  private readonly flushes = new KeyedMutex();
  private readonly log: StreamLog;

  constructor(
    private readonly storage: Storage,
    private readonly rows: RowService,
    private readonly toServiceError: (e: unknown) => grpc.ServiceError,
  ) {
    this.log = new StreamLog(path.join(storage.dataDir, '_write_streams'), storage.walSync);
    for (const r of this.log.recover()) {
      this.streams.set(r.meta.name, { ...r.meta, rowCount: r.rowCount, held: r.held, flushed: r.flushed, finalized: r.finalized, committed: r.committed });
    }
  }

  /** A gRPC error made here (grpcError) as it is; any other (catalog errors carry HTTP codes) through the engine's mapping. */
  private serviceError(e: unknown): grpc.ServiceError {
    return e instanceof Error && 'metadata' in e && typeof (e as { code?: unknown }).code === 'number' ? (e as grpc.ServiceError) : this.toServiceError(e);
  }

  handlers(): grpc.UntypedServiceImplementation {
    const unary = <Req>(fn: (req: Req) => Promise<unknown> | unknown) => (call: grpc.ServerUnaryCall<Req, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      Promise.resolve()
        .then(() => fn(call.request))
        .then((r) => cb(null, r), (e: unknown) => cb(this.serviceError(e)));
    };
    return {
      CreateWriteStream: unary((req: { parent: string; writeStream: { type: string } | null }) => this.create(req.parent, req.writeStream?.type ?? '')),
      GetWriteStream: unary((req: { name: string; view: string }) => this.describe(this.stream(req.name), req.view === 'FULL')),
      FinalizeWriteStream: unary((req: { name: string }) => this.finalize(req.name)),
      BatchCommitWriteStreams: unary((req: { parent: string; writeStreams: string[] }) => this.commit(req.parent, req.writeStreams)),
      FlushRows: unary((req: { writeStream: string; offset: { value: number } | null }) => this.flush(req.writeStream, req.offset?.value ?? null)),
      AppendRows: (call: grpc.ServerDuplexStream<AppendRowsRequest, unknown>) => this.appendRows(call),
    };
  }

  private tableOf(p: string, d: string, t: string): void {
    const entity = `projects/${p}/datasets/${d}/tables/${t}`;
    if (!this.storage.getTable(p, d, t)) throw grpcError(grpc.status.NOT_FOUND, `Requested entity was not found. Entity: ${entity}`, { code: 'TABLE_NOT_FOUND', entity });
  }

  private async create(parent: string, type: string): Promise<unknown> {
    const m = TABLE_PATH.exec(parent);
    if (!m) throw invalid(`Invalid parent "${parent}": expected projects/{project}/datasets/{dataset}/tables/{table}`);
    const [, p, d, t] = m as unknown as [string, string, string, string];
    this.tableOf(p, d, t);
    if (type !== 'COMMITTED' && type !== 'PENDING' && type !== 'BUFFERED') throw invalid('write_stream.type must be COMMITTED, PENDING or BUFFERED');
    const name = `${parent}/streams/${randomBytes(12).toString('base64url')}`;
    const s: WriteStreamState = { name, type, table: { p, d, t }, created: Date.now(), committed: null, finalized: false, rowCount: 0, held: [], flushed: 0 };
    await this.log.write(name, { meta: { name, type, table: s.table, created: s.created } });
    this.streams.set(name, s);
    // The service answers CreateWriteStream with the table's schema (clients build their row descriptor from it).
    return this.describe(s, true);
  }

  /** The stream by name; `_default` exists for every table. */
  private stream(name: string): WriteStreamState {
    const existing = this.streams.get(name);
    if (existing) return existing;
    const m = STREAM_PATH.exec(name);
    if (m && m[5] === '_default') {
      const [, , p, d, t] = m as unknown as [string, string, string, string, string];
      this.tableOf(p, d, t);
      // rpc reference, WriteStream.create_time: the _default stream's is the table's creation time.
      const created = Number(this.storage.getTable(p, d, t)?.resource.creationTime ?? Date.now());
      return { name, type: 'COMMITTED', table: { p, d, t }, created, committed: null, finalized: false, rowCount: 0, held: [], flushed: 0 };
    }
    throw grpcError(grpc.status.NOT_FOUND, `Requested entity was not found. Entity: ${name}`, { code: 'STREAM_NOT_FOUND', entity: name });
  }

  private describe(s: WriteStreamState, full: boolean): unknown {
    const { p, d, t } = s.table;
    const entry = this.storage.getTable(p, d, t);
    return {
      name: s.name,
      type: s.type,
      createTime: ts(s.created),
      // rpc reference, WriteStream.commit_time: a COMMITTED stream's is its create_time; a PENDING one's unset until committed.
      commitTime: s.type === 'COMMITTED' ? ts(s.created) : s.committed !== null ? ts(s.committed) : null,
      tableSchema: full && entry ? { fields: schemaFieldsOf(entry.resource as Resource).map(tableFieldSchema) } : null,
      writeMode: 'INSERT',
      location: 'US',
    };
  }

  /**
   * Writes a COMMITTED stream's JSON rows to the table through the durable
   * insertAll path; returns row errors. A created stream's rows carry its
   * next offset as the table's mark in the same WAL record, so the offset is
   * known exactly when the rows are there (settle).
   */
  private async insert(s: WriteStreamState, rows: Record<string, unknown>[], isDefault: boolean): Promise<{ index: number; message: string }[]> {
    if (rows.length === 0) return [];
    const errs = await this.rows.insertRows({
      projectId: s.table.p, datasetId: s.table.d, tableId: s.table.t,
      rowsJson: JSON.stringify(rows.map((json) => ({ json }))),
      skipInvalidRows: false, ignoreUnknownValues: false, templateSuffix: '', writeApi: true,
      ...(isDefault ? {} : { mark: [s.name, s.rowCount + rows.length] as const }),
    });
    if (errs === '') return [];
    const parsed = JSON.parse(errs) as { index: number; errors: { reason: string; message: string }[] }[];
    return parsed.flatMap((e) => e.errors.filter((x) => x.reason !== 'stopped').map((x) => ({ index: e.index, message: x.message })));
  }

  private appendRows(call: grpc.ServerDuplexStream<AppendRowsRequest, unknown>): void {
    let streamName = '';
    let schema: MessageDescriptor | null = null;
    // Requests are answered strictly in order, one at a time. An error ends the call with its
    // status ('error': grpc-js sends none after destroy()); requests queued behind it are dropped.
    let chain = Promise.resolve();
    let failed = false;
    // default_missing_value_interpretation holds from the request that sets it on, along the connection.
    let interpretation: Interpretation = 'NULL_VALUE';
    const conn: Connection = { changes: null, plain: false };
    // change-data-capture.md: a table is active with CDC while a connection streams row modifications to it.
    const leave = (): void => {
      if (conn.changes !== null) activeCdc.leave(conn.changes);
      conn.changes = null;
    };
    call.on('close', leave);
    call.on('data', (req: AppendRowsRequest | unknown) => {
      chain = chain.then(async () => {
        if (failed) return;
        if (isUndecodable(req)) throw undecodableError(req);
        const r = req as AppendRowsRequest;
        if (r.writeStream) streamName = r.writeStream;
        if (r.protoRows?.writerSchema?.protoDescriptor) schema = r.protoRows.writerSchema.protoDescriptor;
        const dflt = r.defaultMissingValueInterpretation;
        if (dflt === 'NULL_VALUE' || dflt === 'DEFAULT_VALUE') interpretation = dflt;
        const out = (await this.appendOne(streamName, schema, r, interpretation, conn)) as { error?: { code: grpc.status } };
        this.noteAppend(streamName, r, out.error?.code ?? grpc.status.OK);
        call.write(out);
      }).catch((e: unknown) => {
        failed = true;
        const err = this.serviceError(e);
        if (!isUndecodable(req)) this.noteAppend(streamName, req as AppendRowsRequest, err.code);
        call.emit('error', err);
      });
    });
    call.on('end', () => {
      void chain.then(() => {
        leave();
        if (!failed) call.end();
      });
    });
    call.on('error', () => undefined);
  }

  private async appendOne(streamName: string, schema: MessageDescriptor | null, req: AppendRowsRequest, interpretation: Interpretation, conn: Connection): Promise<unknown> {
    const status = (code: grpc.status, message: string, storage?: StorageCode) => ({
      error: { code, message, details: storage ? [{ type_url: STORAGE_ERROR_TYPE, value: storageErrorBytes(storage, streamName, message) }] : [] },
      writeStream: streamName,
    });
    if (!streamName) return status(grpc.status.INVALID_ARGUMENT, 'write_stream must be set in the first request of a connection');
    const s = this.stream(streamName);
    if (req.arrowRows) return status(grpc.status.UNIMPLEMENTED, 'arrow_rows appends are not supported by this emulator; send proto_rows');
    if (!schema) return status(grpc.status.INVALID_ARGUMENT, 'writer_schema must be set in the first request of a connection');
    // write-api-batch.md, step 3: an append after FinalizeWriteStream is STREAM_FINALIZED.
    if (s.finalized) return status(grpc.status.INVALID_ARGUMENT, `Stream is finalized: ${streamName}`, 'STREAM_FINALIZED');
    if (s.committed !== null && s.type !== 'COMMITTED') return status(grpc.status.INVALID_ARGUMENT, `Stream is already committed: ${streamName}`, 'STREAM_ALREADY_COMMITTED');
    const isDefault = streamName.endsWith('/streams/_default');
    if (!this.storage.getTable(s.table.p, s.table.d, s.table.t)) return status(grpc.status.NOT_FOUND, `Requested entity was not found. Entity: projects/${s.table.p}/datasets/${s.table.d}/tables/${s.table.t}`, 'TABLE_NOT_FOUND');
    const td = await this.settle(s);
    // write-api-best-practices.md, Handle schema updates: a writer schema field the table lacks refuses the request.
    const columns = new Set(td.schema.map((c) => c.name.toLowerCase()));
    // change-data-capture.md: the pseudocolumns _CHANGE_TYPE and _CHANGE_SEQUENCE_NUMBER make the rows changes.
    const cdc = schema.field.some((f) => isPseudoColumn(f.name) && !columns.has(f.name.toLowerCase()));
    const extra = schema.field.filter((f) => !columns.has(f.name.toLowerCase()) && !(cdc && isPseudoColumn(f.name))).map((f) => f.name);
    if (extra.length > 0) return status(grpc.status.INVALID_ARGUMENT, `Input schema has more fields than BigQuery schema, extra fields: '${extra.join(',')}'`, 'SCHEMA_MISMATCH_EXTRA_FIELDS');
    if (cdc) {
      const refused = this.cdcRefusal(s, isDefault, conn);
      if (refused) return status(grpc.status.INVALID_ARGUMENT, refused);
    } else if (conn.changes !== null) {
      return status(grpc.status.INVALID_ARGUMENT, `${INVALID_CHANGE_TYPE}: rows without _CHANGE_TYPE on a connection that streams UPSERT and DELETE rows`);
    }
    const offset = req.offset ? req.offset.value : null;
    if (offset !== null) {
      if (isDefault) return status(grpc.status.INVALID_ARGUMENT, 'The offset is not supported on the default stream');
      if (offset < s.rowCount) return status(grpc.status.ALREADY_EXISTS, `The offset is within stream, expected offset ${s.rowCount}, received ${offset}`, 'OFFSET_ALREADY_EXISTS');
      if (offset > s.rowCount) return status(grpc.status.OUT_OF_RANGE, `The offset is beyond stream, expected offset ${s.rowCount}, received ${offset}`, 'OFFSET_OUT_OF_RANGE');
    }
    const perColumn = req.missingValueInterpretations ?? {};
    const bad = Object.entries(perColumn).find(([k, v]) => k.includes('.') || (v !== 'NULL_VALUE' && v !== 'DEFAULT_VALUE'));
    if (bad) {
      return status(grpc.status.INVALID_ARGUMENT, bad[0].includes('.') ? `missing_value_interpretations keys must be top-level column names, not a field path: ${bad[0]}` : `Invalid missing value interpretation ${bad[1]} for column ${bad[0]}`);
    }
    // An append carries rows (the AppendRows reference: proto_rows.rows); the service refuses one without.
    if ((req.protoRows?.rows?.serializedRows ?? []).length === 0) return status(grpc.status.INVALID_ARGUMENT, `Rows must be specified. Entity: ${streamName}`);
    let decoded;
    try {
      decoded = decodeRows(req.protoRows?.rows?.serializedRows ?? [], schema, cdc ? [...td.schema, ...PSEUDO_COLUMNS] : td.schema);
    } catch (e) {
      if (e instanceof RowDecodeError) return status(grpc.status.INVALID_ARGUMENT, e.message);
      throw e;
    }
    // The pseudocolumns are taken out of the rows first: what is left is a row of the table.
    const changes = cdc && decoded.errors.length === 0 ? takeChanges(decoded.rows) : null;
    let rowErrors = changes ? changes.errors : decoded.errors;
    if (rowErrors.length === 0) decoded.rows = await this.withDefaults(s, schema, decoded.rows, perColumn, interpretation);
    // Column parameters (STRING(L), NUMERIC(P, S), ...) are checked when rows are appended, on every stream type.
    if (rowErrors.length === 0) rowErrors = this.rows.checkStreamRows(s.table.p, s.table.d, s.table.t, decoded.rows, s.type !== 'COMMITTED' && !changes);
    if (rowErrors.length === 0 && changes) rowErrors = await this.applyChanges(s, decoded.rows, changes.changes);
    else if (rowErrors.length === 0 && s.type === 'COMMITTED') rowErrors = await this.insert(s, decoded.rows, isDefault);
    if (rowErrors.length > 0) {
      // The whole request is rejected; nothing of it is written.
      return {
        error: { code: grpc.status.INVALID_ARGUMENT, message: `Errors found while processing rows. Please refer to the row_errors field for details. The list may not be complete because of the size limitations. Entity: ${streamName}`, details: [] },
        rowErrors: rowErrors.map((e) => ({ index: e.index, code: 'FIELDS_ERROR', message: e.message })),
        writeStream: streamName,
      };
    }
    if (changes && conn.changes === null) {
      conn.changes = cdcKey(s.table.p, s.table.d, s.table.t);
      activeCdc.enter(conn.changes);
    }
    if (!changes) conn.plain = true;
    if (!isDefault) await this.log.write(s.name, s.type === 'COMMITTED' ? { append: decoded.rows.length } : { append: decoded.rows.length, rows: decoded.rows });
    if (s.type !== 'COMMITTED') s.held.push(...decoded.rows);
    const start = s.rowCount;
    s.rowCount += decoded.rows.length;
    return { appendResult: isDefault ? {} : { offset: { value: start } }, writeStream: streamName };
  }

  /** An append request in WRITE_API_TIMELINE (ingestion-timeline.ts): its stream's table and type, its status, rows and bytes. */
  private noteAppend(streamName: string, req: AppendRowsRequest, code: grpc.status): void {
    const m = STREAM_PATH.exec(streamName);
    if (!m) return;
    const [, , p, d, t, id] = m as unknown as [string, string, string, string, string, string];
    const type = id === '_default' ? 'DEFAULT' : this.streams.get(streamName)?.type;
    if (!type) return;
    const rows = req.protoRows?.rows?.serializedRows ?? [];
    ingestionTimeline.note('WRITE_API', { p, d, t }, type, grpc.status[code] ?? 'UNKNOWN', rows.length, rows.reduce((n, b) => n + b.length, 0));
  }

  /**
   * Why an append of CDC rows is refused before its rows are read (change-data-capture.md, Prerequisites and
   * Limitations): a stream other than _default, a table without a primary key, a connection that streamed plain rows.
   */
  private cdcRefusal(s: WriteStreamState, isDefault: boolean, conn: Connection): string | null {
    const name = `projects/${s.table.p}/datasets/${s.table.d}/tables/${s.table.t}`;
    if (!isDefault) return `Change data capture (_CHANGE_TYPE) is supported only on the default stream, not on ${s.name}`;
    const entry = this.storage.requireTable(s.table.p, s.table.d, s.table.t);
    if (primaryKeyNames(entry.resource).length === 0) return `Change data capture (_CHANGE_TYPE) requires a primary key on the table: ${name} has none`;
    if (conn.plain) return `${INVALID_CHANGE_TYPE}: UPSERT and DELETE rows on a connection that streamed rows without _CHANGE_TYPE`;
    return null;
  }

  /** CDC rows applied to the table's keys (RowService.applyChanges); row errors as appends report them. */
  private async applyChanges(s: WriteStreamState, rows: Record<string, unknown>[], changes: readonly Change[]): Promise<{ index: number; message: string }[]> {
    if (rows.length === 0) return [];
    const errs = await this.rows.applyChanges(s.table.p, s.table.d, s.table.t, rows, changes);
    return errs.flatMap((e) => e.errors.filter((x) => x.reason !== 'stopped').map((x) => ({ index: e.index, message: x.message })));
  }

  /**
   * default-values.md, Use the Storage Write API (gRPC): a defaulted column the writer schema lacks takes its default
   * on every row; a row that leaves a field of the writer schema unset gets NULL, or the default where the request's
   * missing_value_interpretations (else the connection's default_missing_value_interpretation) says DEFAULT_VALUE.
   */
  private withDefaults(s: WriteStreamState, schema: MessageDescriptor, rows: Record<string, unknown>[], perColumn: Record<string, string>, interpretation: Interpretation): Promise<Record<string, unknown>[]> {
    const written = new Set(schema.field.map((f) => f.name.toLowerCase()));
    const asked = new Map(Object.entries(perColumn).map(([k, v]) => [k.toLowerCase(), v]));
    return this.rows.streamRowsWithDefaults(s.table.p, s.table.d, s.table.t, rows, (c) => {
      const lower = c.name.toLowerCase();
      if (!written.has(lower)) return true;
      if ((asked.get(lower) ?? interpretation) !== 'DEFAULT_VALUE') return false;
      const unset = (k: number): boolean => !(c.name in rows[k]!);
      return rows.some((_, k) => unset(k)) && unset;
    });
  }

  /**
   * The stream's table, loaded; a COMMITTED stream's row count caught up
   * with its mark there (a crash after an append's rows were logged and
   * before the stream's own log line: the append happened, and a retry of
   * it must find its offset taken).
   */
  private async settle(s: WriteStreamState): Promise<TableData> {
    const td = this.storage.tableData(s.table.p, s.table.d, s.table.t);
    await td.load();
    if (s.type === 'COMMITTED') s.rowCount = Math.max(s.rowCount, td.markOf(s.name) ?? 0);
    return td;
  }

  private async finalize(name: string): Promise<unknown> {
    const s = this.stream(name);
    if (name.endsWith('/streams/_default')) throw invalid('FinalizeWriteStream is not supported on the default stream');
    if (this.storage.getTable(s.table.p, s.table.d, s.table.t)) await this.settle(s);
    if (!s.finalized) {
      await this.log.write(name, { finalized: true });
      s.finalized = true;
      // Nothing more can change for a finalized COMMITTED stream, nor for a BUFFERED one with every row flushed.
      if (s.type === 'COMMITTED' || (s.type === 'BUFFERED' && s.flushed === s.rowCount)) await this.log.remove(name);
    }
    return { rowCount: s.rowCount };
  }

  private async commit(parent: string, names: string[]): Promise<unknown> {
    const m = TABLE_PATH.exec(parent);
    if (!m) throw invalid(`Invalid parent "${parent}": expected projects/{project}/datasets/{dataset}/tables/{table}`);
    const errors: { code: string; entity: string; errorMessage: string }[] = [];
    const streams: WriteStreamState[] = [];
    for (const n of names) {
      const s = this.streams.get(n);
      if (!s) errors.push({ code: 'STREAM_NOT_FOUND', entity: n, errorMessage: `Stream not found: ${n}` });
      else if (s.type !== 'PENDING') errors.push({ code: 'INVALID_STREAM_TYPE', entity: n, errorMessage: `Only PENDING streams can be committed: ${n}` });
      else if (!s.finalized) errors.push({ code: 'INVALID_STREAM_STATE', entity: n, errorMessage: `Stream is not finalized: ${n}` });
      else if (s.committed !== null) errors.push({ code: 'STREAM_ALREADY_COMMITTED', entity: n, errorMessage: `Stream already committed: ${n}` });
      else streams.push(s);
    }
    // All or nothing, as the real service commits a batch atomically.
    if (errors.length > 0) return { commitTime: null, streamErrors: errors };
    const [, p, d, t] = m as unknown as [string, string, string, string];
    const other = streams.find((s) => s.table.p !== p || s.table.d !== d || s.table.t !== t);
    if (other) throw invalid(`Stream ${other.name} does not belong to table ${parent}`);
    // One table commit for every stream's rows, with each stream's committed mark (stream-log.ts).
    const now = Date.now();
    for (const s of streams) s.committed = now; // a concurrent commit of the same stream sees it taken
    try {
      const files = streams.map((s) => ({ file: this.log.stateFile(s.name), text: StreamLog.stateText({ committed: now }) }));
      await this.commitRows(p, d, t, streams.flatMap((s) => s.held), files, streams.map((s) => s.name).join(', '));
    } catch (e) {
      for (const s of streams) s.committed = null;
      throw e;
    }
    for (const s of streams) {
      s.held = [];
      await this.log.remove(s.name);
    }
    return { commitTime: ts(now), streamErrors: [] };
  }

  /** Rows leaving streams for their table, with the streams' state files (RowService.commitStreamRows). */
  private async commitRows(p: string, d: string, t: string, rows: readonly Record<string, unknown>[], files: readonly CommitFile[], what: string): Promise<void> {
    const rowErrors = await this.rows.commitStreamRows(p, d, t, rows, files);
    const first = rowErrors[0]?.errors[0];
    if (first) throw invalid(`Rows of ${what} no longer fit the table: ${first.message}`);
  }

  private async flush(name: string, offset: number | null): Promise<unknown> {
    const s = this.stream(name);
    if (s.type !== 'BUFFERED') throw invalid(`FlushRows is only supported on BUFFERED streams: ${name}`);
    return this.flushes.run(name, async () => {
      const upTo = offset === null ? s.rowCount : offset + 1;
      if (upTo > s.rowCount) throw grpcError(grpc.status.OUT_OF_RANGE, `Offset ${offset} is beyond the end of stream ${name} (${s.rowCount} rows)`);
      if (upTo > s.flushed) {
        const { p, d, t } = s.table;
        await this.commitRows(p, d, t, s.held.slice(0, upTo - s.flushed), [{ file: this.log.stateFile(name), text: StreamLog.stateText({ flushed: upTo }) }], name);
        s.held.splice(0, upTo - s.flushed);
        s.flushed = upTo;
        if (s.finalized && s.flushed === s.rowCount) await this.log.remove(name);
      }
      return { offset: s.flushed - 1 };
    });
  }
}
