// The bulk row-read service (spec §4.14), served by the engine on its gRPC
// port under the real name (google.cloud.bigquery.storage.v1.BigQueryRead,
// which the warehouse's Storage Read client libraries call) and the neutral
// one (warehouse_emulator.v1.StorageRead). A session pins the table's rows as
// they are when it is created, or as they were at `table_modifiers.snapshot_time`;
// its streams are disjoint row ranges.
import { requireAllRowsOf } from '../../analyzer/row-access.js';
import { SESSION_USER } from '../query.js';
import { visibleColumns } from '../../storage/ingestion.js';
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type * as arrow from 'apache-arrow';
import { invalid, notFound } from '../../storage/errors.js';
import type { Storage } from '../../storage/store.js';
import type { TableState } from '../../storage/table-state.js';
import type { Column } from '../../types/schema.js';
import type { SqlType } from '../../types/types.js';
import { readsPast, rowsAsOf } from '../catalog.js';
import { liveRows, readState, scanState } from '../../storage/table-state.js';
import { ResultStore } from '../results.js';
import { arrowSchema, RowSource, serializeRecordBatch, serializeSchema } from './arrow.js';
import { avroSchema, serializeAvroRows } from './avro.js';
import type { PicosPrecision } from '../../types/picos.js';
import { matches, parseRestriction, RestrictionError, selectRows, type RowRestriction } from './restriction.js';
import { selectedFields } from './selected-fields.js';

/** Rows per ReadRows response. */
const ROWS_PER_RESPONSE = 2048;
/** Sessions expire after six hours, as the real service's do. */
const SESSION_TTL_MS = 6 * 3600 * 1000;

type DataFormat = 'ARROW' | 'AVRO';

interface Session {
  readonly name: string;
  readonly format: DataFormat;
  readonly columns: readonly Column[];
  /** Filtered rows in the session (stream ranges index these). */
  readonly rowCount: number;
  /** The rows for filtered positions [start, end): a table's pinned snapshot, or a result table's window read from the result store. */
  readonly rowsFor: (start: number, end: number) => Promise<RowSource>;
  readonly arrowSchema: arrow.Schema | null;
  readonly arrowSchemaBytes: Uint8Array | null;
  readonly avroSchema: string | null;
  /** How TIMESTAMP(12) columns are encoded (read_options' picos_timestamp_precision). */
  readonly picos: PicosPrecision;
  /** Stream id -> row range [start, end) of the filtered rows. */
  readonly streams: Map<string, { start: number; end: number }>;
  readonly expires: number;
  /** Lets go of what the session pins (its table snapshot). */
  readonly release: () => void;
}

interface Timestamp {
  seconds: number;
  nanos: number;
}

interface SerializationOptions {
  picosTimestampPrecision?: string;
  enableDisplayNameAttribute?: boolean;
}

/** Names Avro takes: letters, digits and underscores, not starting with a digit. */
const AVRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The first column or STRUCT field name (at any depth) Avro cannot take, if any. */
function nonAvroName(columns: readonly { readonly name: string; readonly type: SqlType }[]): string | undefined {
  const inType = (t: SqlType): string | undefined =>
    t.kind === 'ARRAY' ? inType(t.element) : t.kind === 'STRUCT' ? nonAvroName(t.fields.filter((f: { name?: string }) => f.name).map((f: { name?: string; type: SqlType }) => ({ name: f.name!, type: f.type }))) : undefined;
  for (const c of columns) {
    if (!AVRO_NAME.test(c.name)) return c.name;
    const inner = inType(c.type);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/** TIMESTAMP_PRECISION_NANOS / _PICOS of the format's options; anything else (UNSPECIFIED) is microseconds. */
function picosPrecision(o: SerializationOptions | null | undefined): PicosPrecision {
  const p = o?.picosTimestampPrecision;
  return p === 'TIMESTAMP_PRECISION_NANOS' ? 'NANOS' : p === 'TIMESTAMP_PRECISION_PICOS' ? 'PICOS' : 'MICROS';
}

interface CreateReadSessionRequest {
  parent: string;
  readSession: {
    table: string;
    dataFormat: string;
    readOptions: {
      selectedFields: string[];
      rowRestriction: string;
      arrowSerializationOptions?: SerializationOptions | null;
      avroSerializationOptions?: SerializationOptions | null;
    } | null;
    tableModifiers: { snapshotTime: Timestamp | null } | null;
  } | null;
  maxStreamCount: number;
  preferredMinStreamCount?: number;
}

interface ReadRowsRequest {
  readStream: string;
  offset: number;
}

interface SplitReadStreamRequest {
  name: string;
  fraction: number;
}

const TABLE_PATH = /^projects\/([^/]+)\/datasets\/([^/]+)\/tables\/([^/]+)$/;
const STREAM_PATH = /^(projects\/[^/]+\/locations\/[^/]+\/sessions\/[^/]+)\/streams\/([^/]+)$/;

type Source = Pick<Session, 'columns' | 'rowCount' | 'rowsFor'> & { readonly release?: () => void };

/** `selected_fields` over a source that reads every column. */
function selectFields(source: Source, fields: readonly string[]): Source {
  if (!fields.length) return source;
  const sel = selectedFields(source.columns, fields);
  return {
    columns: sel.columns,
    rowCount: source.rowCount,
    rowsFor: async (start, end) => (await source.rowsFor(start, end)).project(sel.idx, sel.narrow),
  };
}

/** Resolves when the call can take more, or when the client has gone (no 'drain' comes then). */
function drainedOrCancelled(call: grpc.ServerWritableStream<ReadRowsRequest, unknown>): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      call.off('cancelled', done);
      resolve();
    };
    call.on('drain', done);
    call.on('cancelled', done);
  });
}

/** The live-row numbers of a state whose restriction column matches, reading that column alone. */
async function selectedRows(state: TableState, r: RowRestriction): Promise<Int32Array> {
  const out: number[] = [];
  let base = 0;
  for await (const b of scanState(state, [r.column])) {
    const v = b.columns[0]!;
    for (let i = 0; i < b.length; i++) if (matches(v, i, r)) out.push(base + i);
    base += b.length;
  }
  return Int32Array.from(out);
}

export class StorageReadService {
  private readonly sessions = new Map<string, Session>();

  constructor(
    private readonly storage: Storage,
    private readonly toServiceError: (e: unknown) => grpc.ServiceError,
  ) {}

  handlers(): grpc.UntypedServiceImplementation {
    return {
      CreateReadSession: (call: grpc.ServerUnaryCall<CreateReadSessionRequest, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        this.createReadSession(call.request).then((r) => cb(null, r), (e: unknown) => cb(this.toServiceError(e)));
      },
      ReadRows: (call: grpc.ServerWritableStream<ReadRowsRequest, unknown>) => {
        // An error goes out as the call's status by 'error' (grpc-js sends no status after destroy(): the client would wait forever).
        this.readRows(call).then(() => call.end(), (e: unknown) => call.emit('error', this.toServiceError(e)));
      },
      SplitReadStream: (call: grpc.ServerUnaryCall<SplitReadStreamRequest, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        try {
          cb(null, this.splitReadStream(call.request));
        } catch (e) {
          cb(this.toServiceError(e));
        }
      },
    };
  }

  private sweep(now: number): void {
    for (const [k, s] of this.sessions) {
      if (s.expires > now) continue;
      this.sessions.delete(k);
      s.release();
    }
  }

  async createReadSession(req: CreateReadSessionRequest): Promise<unknown> {
    const rs = req.readSession;
    if (!rs) throw invalid('read_session is required');
    const m = TABLE_PATH.exec(rs.table);
    if (!m) throw invalid(`Invalid table name "${rs.table}": expected projects/{project}/datasets/{dataset}/tables/{table}`);
    const [, p, d, t] = m as unknown as [string, string, string, string];
    const parent = /^projects\/([^/]+)$/.exec(req.parent);
    if (!parent) throw invalid(`Invalid parent "${req.parent}": expected projects/{project}`);
    const format: DataFormat = rs.dataFormat === 'AVRO' ? 'AVRO' : rs.dataFormat === 'ARROW' ? 'ARROW' : (() => {
      throw invalid('data_format must be AVRO or ARROW');
    })();
    // rpc reference, CreateReadSessionRequest: max_stream_count non-negative and not below preferred_min_stream_count.
    const minStreams = req.preferredMinStreamCount ?? 0;
    if (req.maxStreamCount < 0) throw invalid(`max_stream_count must be non-negative, got ${req.maxStreamCount}`);
    if (minStreams < 0) throw invalid(`preferred_min_stream_count must be non-negative, got ${minStreams}`);
    if (req.maxStreamCount > 0 && minStreams > req.maxStreamCount) {
      throw invalid(`max_stream_count (${req.maxStreamCount}) must be greater than or equal to preferred_min_stream_count (${minStreams})`);
    }
    const snap = rs.tableModifiers?.snapshotTime;
    const asOfMs = snap ? snap.seconds * 1000 + Math.floor(snap.nanos / 1e6) : undefined;
    const fields = rs.readOptions?.selectedFields ?? [];
    const restriction = rs.readOptions?.rowRestriction ?? '';
    const result = ResultStore.isAnonDataset(d) ? await this.resultSource(p, d, t, restriction) : undefined;
    const { columns, rowCount, rowsFor, release } = result ? selectFields(result, fields) : await this.tableSource(p, d, t, asOfMs, restriction, fields);

    // rpc reference, AvroSerializationOptions: a name Avro cannot take fails an Avro session (the display-name option,
    // which would rename it, is not modeled: with it the name is kept as it is).
    const badName = format === 'AVRO' && !rs.readOptions?.avroSerializationOptions?.enableDisplayNameAttribute ? nonAvroName(columns) : undefined;
    if (badName !== undefined) {
      release?.();
      throw invalid(`The field name "${badName}" is not a valid Avro name: Avro field names may contain only letters, numbers and underscores, and may not start with a number`);
    }
    const now = Date.now();
    this.sweep(now);
    const name = `projects/${parent[1]}/locations/us/sessions/${randomBytes(12).toString('base64url')}`;
    // The real service hands out no stream for an empty result, else up to
    // max_stream_count streams (0 = its choice); here ranges of ≥ 10k rows.
    const wanted = rowCount === 0 ? 0 : Math.max(1, Math.min(req.maxStreamCount > 0 ? req.maxStreamCount : 1000, Math.ceil(rowCount / 10_000)));
    const streams = new Map<string, { start: number; end: number }>();
    for (let i = 0; i < wanted; i++) {
      streams.set(`s${i}`, { start: Math.floor((rowCount * i) / wanted), end: Math.floor((rowCount * (i + 1)) / wanted) });
    }
    const ro = rs.readOptions;
    const picos = picosPrecision(format === 'ARROW' ? ro?.arrowSerializationOptions : ro?.avroSerializationOptions);
    const aSchema = format === 'ARROW' ? arrowSchema(columns, picos) : null;
    const session: Session = {
      name, format, columns, rowCount, rowsFor, streams, release: release ?? (() => undefined),
      arrowSchema: aSchema,
      arrowSchemaBytes: aSchema ? serializeSchema(aSchema) : null,
      avroSchema: format === 'AVRO' ? avroSchema(columns, picos) : null,
      picos,
      expires: now + SESSION_TTL_MS,
    };
    this.sessions.set(name, session);
    return {
      name,
      expireTime: { seconds: Math.floor(session.expires / 1000), nanos: 0 },
      dataFormat: format,
      ...(format === 'ARROW' ? { arrowSchema: { serializedSchema: Buffer.from(session.arrowSchemaBytes!) } } : { avroSchema: { schema: session.avroSchema } }),
      table: rs.table,
      ...(snap ? { tableModifiers: { snapshotTime: snap } } : {}),
      readOptions: rs.readOptions ?? undefined,
      streams: [...streams.keys()].map((id) => ({ name: `${name}/streams/${id}` })),
      estimatedRowCount: rowCount,
      estimatedTotalBytesScanned: 0,
    };
  }

  /**
   * A table's rows, pinned as they are now or were at `asOfMs`, only the
   * `fields` columns. The rows now are read a response at a time from the
   * table's files (the session holds a snapshot, so they stay; nothing is
   * held whole); a restriction reads its column once to number the rows it selects.
   */
  private async tableSource(p: string, d: string, t: string, asOfMs: number | undefined, rowRestriction: string, fields: readonly string[]): Promise<Source> {
    await this.storage.expirePartitions();
    const entry = this.storage.requireTable(p, d, t);
    if (entry.kind === 'VIEW' || entry.kind === 'MATERIALIZED_VIEW') throw invalid(`${p}:${d}.${t} is a view; the read API reads tables only`);
    // using-row-level-security-with-features.md, The TRUE filter: the Storage Read API is among the non-query
    // operations that need full access to a table with row access policies.
    requireAllRowsOf(Object.values(entry.policies), { projectId: p, datasetId: d, tableId: t }, SESSION_USER);
    const td = this.storage.tableData(p, d, t);
    await td.load();
    // An ingestion-time partitioned table's hidden partition time (last) is no field of it.
    const all = visibleColumns(td.schema);
    const { idx, columns, narrow } = selectedFields(all, fields);
    const restriction = this.restrictionOf(rowRestriction, all);
    if (readsPast(asOfMs)) {
      // A past snapshot_time reads the table's history (7-day window, the same reader as FOR SYSTEM_TIME AS OF and table@<ms>).
      const batches = await rowsAsOf(this.storage, { projectId: p, datasetId: d, tableId: t }, entry, asOfMs);
      const selected = restriction ? selectRows(batches, restriction) : null;
      const rows = new RowSource(batches, selected, selected ? selected.length : batches.reduce((s, b) => s + b.length, 0)).project(idx, narrow);
      return { columns, rowCount: rows.rowCount, rowsFor: () => Promise.resolve(rows) };
    }
    const snapshot = this.storage.clock.acquire();
    const state = td.state();
    try {
      const selected = restriction ? await selectedRows(state, restriction) : null;
      const rowCount = selected ? selected.length : liveRows(state);
      const rowsFor = async (start: number, end: number): Promise<RowSource> => {
        const lo = selected ? selected[start]! : start;
        const hi = selected ? selected[end - 1]! + 1 : end;
        const rows = new RowSource(await readState(state, idx, lo, hi), selected, rowCount, lo);
        return narrow.some((n) => n) ? rows.project(idx.map((_, k) => k), narrow) : rows;
      };
      return { columns, rowCount, rowsFor, release: () => this.storage.clock.release(snapshot) };
    } catch (e) {
      this.storage.clock.release(snapshot);
      throw e;
    }
  }

  /**
   * An anonymous query-result table (`_anon<project>.anon<job>`, a query
   * job's destination, which client libraries read results from): rows come
   * from the result store a response at a time, so a large result is not
   * pinned in memory for the session's six hours. Undefined when there is none.
   */
  private async resultSource(p: string, d: string, t: string, rowRestriction: string): Promise<Pick<Session, 'columns' | 'rowCount' | 'rowsFor'> | undefined> {
    const store = ResultStore.forDataDir(this.storage.dataDir);
    const head = await store.get(p, d, t, 0, 0);
    if (!head) return undefined;
    const columns: Column[] = head.columns.map((c) => ({ name: c.name, type: c.type, required: false }));
    const restriction = this.restrictionOf(rowRestriction, columns);
    // A restriction is evaluated once, over every row; only the selected row numbers are kept.
    const selected = restriction ? selectRows((await store.get(p, d, t))?.batches ?? [], restriction) : null;
    const rowCount = selected ? selected.length : head.rowCount;
    const rowsFor = async (start: number, end: number): Promise<RowSource> => {
      const lo = selected ? selected[start]! : start;
      const hi = selected ? selected[end - 1]! + 1 : end;
      const r = await store.get(p, d, t, lo, hi - lo);
      if (!r) throw notFound(`Table ${p}:${d}.${t}`);
      return new RowSource(r.batches, selected, rowCount);
    };
    return { columns, rowCount, rowsFor };
  }

  private restrictionOf(rowRestriction: string, columns: readonly Column[]): ReturnType<typeof parseRestriction> {
    try {
      return parseRestriction(rowRestriction, columns);
    } catch (e) {
      if (e instanceof RestrictionError) throw invalid(e.message);
      throw e;
    }
  }

  private stream(name: string): { session: Session; range: { start: number; end: number }; id: string } {
    const m = STREAM_PATH.exec(name);
    const session = m ? this.sessions.get(m[1]!) : undefined;
    const range = m && session ? session.streams.get(m[2]!) : undefined;
    if (!m || !session || !range || session.expires <= Date.now()) throw notFound(`Read stream ${name}`);
    return { session, range, id: m[2]! };
  }

  private async readRows(call: grpc.ServerWritableStream<ReadRowsRequest, unknown>): Promise<void> {
    const { session, range } = this.stream(call.request.readStream);
    const size = range.end - range.start;
    const offset = call.request.offset;
    if (offset < 0 || offset > size) throw invalid(`Invalid offset ${offset} for a stream of ${size} rows`);
    for (let at = range.start + offset; at < range.end && !call.cancelled; ) {
      const end = Math.min(range.end, at + ROWS_PER_RESPONSE);
      const n = end - at;
      const src = await session.rowsFor(at, end);
      const rows = session.format === 'ARROW'
        ? { arrowRecordBatch: { serializedRecordBatch: Buffer.from(serializeRecordBatch(session.arrowSchema!, session.arrowSchemaBytes!, session.columns, src, at, end, session.picos)), rowCount: n } }
        : { avroRows: { serializedBinaryRows: serializeAvroRows(session.columns, src, at, end, session.picos), rowCount: n } };
      const ok = call.write({
        ...rows,
        rowCount: n,
        stats: { progress: { atResponseStart: (at - range.start) / size, atResponseEnd: (end - range.start) / size } },
      });
      at = end;
      if (!ok) await drainedOrCancelled(call);
    }
  }

  splitReadStream(req: SplitReadStreamRequest): unknown {
    const { session, range, id } = this.stream(req.name);
    const fraction = req.fraction > 0 && req.fraction < 1 ? req.fraction : 0.5;
    const cut = range.start + Math.floor((range.end - range.start) * fraction);
    // Too small to split: the real service answers with neither stream.
    if (cut <= range.start || cut >= range.end) return {};
    session.streams.delete(id);
    const primary = `${id}a`;
    const remainder = `${id}b`;
    session.streams.set(primary, { start: range.start, end: cut });
    session.streams.set(remainder, { start: cut, end: range.end });
    return { primaryStream: { name: `${session.name}/streams/${primary}` }, remainderStream: { name: `${session.name}/streams/${remainder}` } };
  }
}
