// Typed, promise-based client for proto/engine.proto. Every failure comes back
// as a RestError: the engine's `x-warehouse-error` trailer verbatim when
// present, otherwise a mapping of the gRPC status (UNAVAILABLE -> 503 so a
// restarting engine never turns into a hang or a 500).
import * as grpc from '@grpc/grpc-js';
import { engineProto } from './engine-proto.js';
import { RestError, unavailable, type ErrorInfo } from './errors.js';

export interface TableRef { project_id: string; dataset_id: string; table_id: string }
export interface ResourceRequest {
  project_id: string; dataset_id?: string; table_id?: string; resource_json?: string; options?: Record<string, string>;
}
export interface ResourceReply { resource_json: string }
export interface ListRequest {
  project_id: string; dataset_id?: string; page_token?: string; max_results?: number; filter?: string; all?: boolean;
}
export interface ListReply { items_json: string[]; next_page_token: string; total_items: number }
export interface ChildRequest {
  project_id: string; dataset_id: string; table_id?: string; kind: string; child_id?: string;
  resource_json?: string; create_only?: boolean; page_token?: string; max_results?: number;
  child_ids?: string[]; force?: boolean;
  /** ListChildren of routines: only this routineType (routines.list filter). */
  routine_type?: string;
}
export type TimestampFormat = 'TIMESTAMP_RFC3339' | 'TIMESTAMP_FLOAT_SECONDS' | 'TIMESTAMP_INT64_MICROS';
export interface InsertRowsRequest {
  table: TableRef; rows_json: string; skip_invalid_rows: boolean; ignore_unknown_values: boolean; template_suffix: string;
  /** The rows as UTF-8 JSON bytes (a slice of the request body); wins over rows_json when non-empty. */
  rows_utf8?: Buffer;
  /** The rows enter the streaming buffer (tabledata.insertAll only). */
  streaming?: boolean;
}
export interface InsertRowsReply { insert_errors_json: string }
export interface ListRowsRequest {
  table: TableRef; start_index: number; max_results: number; selected_fields: string; timestamp_format: TimestampFormat;
  /** Real family: FLOAT64/BOOL cells as strings, as the real service sends them. */
  string_scalars: boolean;
  /** The reply may carry a large page as rows_utf8 (rows-body.ts). */
  want_rows_utf8?: boolean;
  /** The page ends with the row that brings it to this many bytes (0: max_results alone). */
  max_bytes?: number;
  /** Only rows outside the streaming buffer (extract jobs). */
  settled?: boolean;
}
export interface ListRowsReply {
  total_rows: number; rows_json: string; schema_json: string; next_index: number; etag: string;
  /** The page as UTF-8 JSON bytes; wins over rows_json when non-empty (rows-body.ts). */
  rows_utf8?: Buffer;
}
export interface QueryRequest {
  project_id: string; job_id: string; query: string; default_dataset?: TableRef;
  parameters?: { parameters_json: string; parameter_mode: string };
  dry_run: boolean; destination?: TableRef; write_disposition: string; create_disposition: string;
  table_definitions_json: string; jobs_snapshot_json: string; location: string; session_id: string; create_session?: boolean; time_zone?: string;
  /** The job's maximumBytesBilled; 0 = no limit. */
  maximum_bytes_billed?: number;
  /** The query is a view's body, analysed as CREATE VIEW analyses it (no default dataset at all). */
  view_body?: boolean;
  schema_update_options?: string[];
  max_results: number; timestamp_format: TimestampFormat; string_scalars: boolean;
  /** The reply may carry a large first page as rows_utf8 (rows-body.ts). */
  want_rows_utf8?: boolean;
  /** The first page's byte bound (ListRowsRequest.max_bytes). */
  max_bytes?: number;
  /** A partition-decorated copy's script: its COMMIT sets the destination's row access policies with the rows. */
  copy_policies?: CopyPoliciesRequest;
}
export interface QueryReply {
  schema_json: string; total_rows: number; result_table: TableRef | null; rows_json: string; next_index: number;
  statement_type: string; num_dml_affected_rows: number; ddl_operation_performed: string; ddl_target_table: TableRef | null;
  ddl_target_routine_json: string; total_bytes_processed: number; statistics_json: string;
  total_bytes_billed?: number;
  /** The first page as UTF-8 JSON bytes; wins over rows_json when non-empty (rows-body.ts). */
  rows_utf8?: Buffer;
  /** The job's location (requested, else inferred from its datasets). */
  location?: string;
  /** Where getQueryResults pages the rows from when not result_table (a destination with row access policies). */
  rows_table?: TableRef | null;
}
export interface BeginTableWriteRequest { table: TableRef; write_disposition: string; create_disposition: string; resource_json: string; loaded_columns_json?: string; self_described?: boolean }
/** A load's local file the engine reads (proto LoadFile). */
export interface LoadFile {
  path: string; start: number; end: number; uri: string; format: string; options_json: string; fields_json: string; max_rows: number;
}
export interface CopyPoliciesRequest { sources: TableRef[]; destination: TableRef; write_disposition: string; check_only: boolean }
export interface AppendTableWriteRequest { write_id: string; rows_json?: string; skip_invalid_rows?: boolean; source?: TableRef; file?: LoadFile }
export interface AppendTableWriteReply {
  insert_errors_json: string; source_rows: number;
  /** A file: records read by the call, the file's bytes read so far, whether it is read to its end. */
  file_records?: number; file_bytes_read?: number; file_done?: boolean;
}
export interface TableWriteRequest { write_id: string }
export interface TableWriteReply { write_id: string; rows: number }
export interface HealthReply { status: string; version: string; pid: number }
export type Empty = Record<string, never>;

/** Method name -> [request, reply]. */
export interface EngineRpcs {
  Health: [Empty, HealthReply];
  InsertDataset: [ResourceRequest, ResourceReply];
  GetDataset: [ResourceRequest, ResourceReply];
  ListDatasets: [ListRequest, ListReply];
  UpdateDataset: [ResourceRequest, ResourceReply];
  DeleteDataset: [ResourceRequest, Empty];
  UndeleteDataset: [ResourceRequest, ResourceReply];
  InsertTable: [ResourceRequest, ResourceReply];
  GetTable: [ResourceRequest, ResourceReply];
  ListTables: [ListRequest, ListReply];
  UpdateTable: [ResourceRequest, ResourceReply];
  DeleteTable: [ResourceRequest, Empty];
  PutChild: [ChildRequest, ResourceReply];
  GetChild: [ChildRequest, ResourceReply];
  ListChildren: [ChildRequest, ListReply];
  DeleteChild: [ChildRequest, Empty];
  InsertRows: [InsertRowsRequest, InsertRowsReply];
  ListRows: [ListRowsRequest, ListRowsReply];
  BeginTableWrite: [BeginTableWriteRequest, TableWriteReply];
  AppendTableWrite: [AppendTableWriteRequest, AppendTableWriteReply];
  CommitTableWrite: [TableWriteRequest, TableWriteReply];
  AbortTableWrite: [TableWriteRequest, TableWriteReply];
  CopyRowAccessPolicies: [CopyPoliciesRequest, Empty];
  ExecuteQuery: [QueryRequest, QueryReply];
}
export type EngineMethod = keyof EngineRpcs;

/** What an engine call reads of its cancel signal: an AbortSignal fits, and so does a job's lighter JobCancel. */
export interface CancelSignal {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export interface CallOpts {
  /** Milliseconds; 0 = no deadline (queries run as long as they need). */
  deadlineMs?: number;
  signal?: CancelSignal;
}

/** The package root: the nearest ancestor holding proto/engine.proto (works from dist/ and src/). */
export { packageRoot } from './paths.js';

type UnaryFn = (
  req: unknown,
  md: grpc.Metadata,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res?: unknown) => void,
) => grpc.ClientUnaryCall;

const DEFAULT_DEADLINE_MS = 60_000;

export class EngineClient {
  private client: grpc.Client;
  private readonly ctor: grpc.ServiceClientConstructor;
  /** Where calls go now: the TCP address, or `unix:<path>` once the spawned engine serves on a socket. */
  private target: string;

  constructor(readonly address: string) {
    const pkg = grpc.loadPackageDefinition(engineProto()) as unknown as {
      warehouse_emulator: { engine: { v1: { Engine: grpc.ServiceClientConstructor } } };
    };
    this.ctor = pkg.warehouse_emulator.engine.v1.Engine;
    this.target = address;
    this.client = this.connect(address);
  }

  private connect(target: string): grpc.Client {
    return new this.ctor(target, grpc.credentials.createInsecure(), {
      // Result pages can be large pre-encoded JSON.
      'grpc.max_receive_message_length': -1,
      'grpc.max_send_message_length': -1,
      // Reconnect fast after an engine restart instead of grpc's default backoff of up to 120 s.
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
      // No channelz bookkeeping (per-call counters and traces nobody reads).
      'grpc.enable_channelz': 0,
    });
  }

  /**
   * Calls go to the engine's Unix socket (`undefined`: back to the TCP
   * address). Called by the supervisor when a spawned engine says where it
   * serves, before any call to that engine; a no-op when nothing changes.
   */
  useSocket(path: string | undefined): void {
    const target = path ? `unix:${path}` : this.address;
    if (target === this.target) return;
    this.client.close();
    this.target = target;
    this.client = this.connect(target);
  }

  call<M extends EngineMethod>(method: M, req: EngineRpcs[M][0], opts: CallOpts = {}): Promise<EngineRpcs[M][1]> {
    const fn = (this.client as unknown as Record<string, UnaryFn>)[method];
    const deadlineMs = opts.deadlineMs ?? DEFAULT_DEADLINE_MS;
    const callOpts: grpc.CallOptions = deadlineMs > 0 ? { deadline: Date.now() + deadlineMs } : {};
    return new Promise((resolvePromise, reject) => {
      if (opts.signal?.aborted) {
        reject(new RestError(400, 'stopped', 'Job execution was cancelled: User requested cancellation'));
        return;
      }
      const call = fn.call(this.client, req, new grpc.Metadata(), callOpts, (err, res) => {
        opts.signal?.removeEventListener('abort', onAbort);
        if (err) reject(toRestError(err));
        else resolvePromise(res as EngineRpcs[M][1]);
      });
      const onAbort = (): void => call.cancel();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  close(): void {
    this.client.close();
  }
}

export function toRestError(err: grpc.ServiceError): RestError {
  const raw = err.metadata?.get('x-warehouse-error')?.[0];
  if (raw !== undefined) {
    try {
      const info = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8')) as Partial<ErrorInfo>;
      if (typeof info.code === 'number' && typeof info.message === 'string') {
        return new RestError(info.code, info.reason ?? 'invalid', info.message, info.status);
      }
    } catch {
      // fall through to the status mapping
    }
  }
  const detail = err.details || err.message;
  switch (err.code) {
    case grpc.status.UNAVAILABLE:
      return unavailable();
    case grpc.status.DEADLINE_EXCEEDED:
      return new RestError(503, 'backendError', 'The engine did not answer in time: ' + detail, 'deadlineExceeded');
    case grpc.status.CANCELLED:
      return new RestError(400, 'stopped', 'Job execution was cancelled: ' + detail, 'cancelled');
    case grpc.status.NOT_FOUND:
      return new RestError(404, 'notFound', detail);
    case grpc.status.ALREADY_EXISTS:
      return new RestError(409, 'duplicate', detail);
    case grpc.status.INVALID_ARGUMENT:
      return new RestError(400, 'invalid', detail);
    case grpc.status.FAILED_PRECONDITION:
      return new RestError(400, 'invalid', detail, 'failedPrecondition');
    case grpc.status.UNIMPLEMENTED:
      return new RestError(501, 'notImplemented', detail || 'Not implemented by the engine');
    case grpc.status.RESOURCE_EXHAUSTED:
      return new RestError(429, 'quotaExceeded', detail);
    case grpc.status.PERMISSION_DENIED:
      return new RestError(403, 'accessDenied', detail);
    default:
      return new RestError(500, 'internalError', detail || 'An internal error occurred and the request could not be completed.');
  }
}
