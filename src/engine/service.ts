// The gRPC Engine service (proto/engine.proto): request decoding, error
// mapping, and dispatch to one module per RPC family.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { CatalogError } from '../storage/errors.js';
import { setGeographyText } from '../types/json-values.js';
import { InvalidNameError } from '../storage/names.js';
import type { Storage } from '../storage/store.js';
import type { ReadOptions, RestField } from '../io/schema.js';
import type { TimestampFormat, WireOptions } from '../types/wire.js';
import { EngineCatalog } from './catalog.js';
import * as children from './children.js';
import * as datasets from './datasets.js';
import { checkTableDefaults, executeQuery, statusWord } from './query.js';
import { canonicalGeographyText } from './geography-text.js';
import { ResultStore } from './results.js';
import { RowService } from './rows.js';
import { Sessions } from './sessions.js';
import { TableWrites } from './table-writes.js';
import { copyPolicyChange, type CopyPolicies } from './copy-policies.js';
import * as tables from './tables.js';
import { parseResource } from './util.js';
import { resourceError } from '../types/errors.js';

export const ENGINE_VERSION = '0.1.0';

/** Finds proto/engine.proto from dist/ (bundled) or src/engine/ (tsx). */
export function findProto(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const p = path.join(dir, 'proto', 'engine.proto');
    if (fs.existsSync(p)) return p;
    dir = path.dirname(dir);
  }
  throw new Error('proto/engine.proto not found above ' + fileURLToPath(import.meta.url));
}

export function loadEngineService(): grpc.ServiceDefinition {
  const def = protoLoader.loadSync(findProto(), { keepCase: false, longs: Number, enums: String, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    warehouse_emulator: { engine: { v1: { Engine: grpc.ServiceClientConstructor } } };
  };
  return pkg.warehouse_emulator.engine.v1.Engine.service;
}

interface ErrorBody {
  code: number;
  status: string;
  reason: string;
  message: string;
}

const GRPC_BY_HTTP: Record<number, grpc.status> = {
  400: grpc.status.INVALID_ARGUMENT,
  403: grpc.status.PERMISSION_DENIED,
  404: grpc.status.NOT_FOUND,
  409: grpc.status.ALREADY_EXISTS,
  499: grpc.status.CANCELLED,
  501: grpc.status.UNIMPLEMENTED,
  503: grpc.status.UNAVAILABLE,
};

export function errorBody(e: unknown): ErrorBody {
  if (e instanceof CatalogError) return { code: e.code, status: e.status, reason: e.reason, message: e.message };
  if (e instanceof InvalidNameError) return { code: 400, status: 'invalid', reason: 'invalid', message: e.message };
  const err = e as { name?: string; message?: string; httpCode?: number; reason?: string };
  if (err && typeof err.httpCode === 'number' && typeof err.reason === 'string') {
    return { code: err.httpCode, status: statusWord(err.httpCode), reason: err.reason, message: String(err.message) };
  }
  if (err?.name === 'AbortError') return { code: 499, status: 'cancelled', reason: 'stopped', message: 'Job execution was cancelled' };
  // V8 giving out (a stack overflow, a string or array past its maximum length) on what a client sent.
  const exceeded = resourceError(e);
  if (exceeded) return { code: 400, status: 'invalid', reason: exceeded.reason, message: exceeded.message };
  return { code: 500, status: 'internalError', reason: 'internalError', message: String(err?.message ?? e) };
}

/**
 * JSON with every character outside printable ASCII escaped (\uXXXX): gRPC
 * metadata values must be printable ASCII (grpc-js throws on anything else),
 * and JSON.parse on the other side restores the text exactly.
 */
export function asciiJson(v: unknown): string {
  return JSON.stringify(v).replace(/[^\x20-\x7e]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

/** A status message for grpc-message, which grpc-js percent-encodes with encodeURI: lone surrogates would throw there. */
function wellFormed(s: string): string {
  return s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/**
 * Longest error message an answer carries (UTF-16 units; longer ones are cut
 * with an ellipsis). gRPC sends errors in HTTP/2 headers, escaped and
 * percent-encoded, and a header block past ~100 KB makes the client drop the
 * call (a 503 instead of the error); the local socket carries the same text.
 */
export const MAX_ERROR_MESSAGE = 8192;
/** grpc-message is only the fallback when x-warehouse-error is missing. */
const MAX_STATUS_MESSAGE = 1024;

function cut(s: string, n: number): string {
  if (s.length <= n) return s;
  let end = n - 1;
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // not half a surrogate pair
  return s.slice(0, end) + '\u2026';
}

export function toServiceError(e: unknown): grpc.ServiceError {
  try {
    const full = errorBody(e);
    if (full.code >= 500 && full.code !== 501 && full.code !== 503) console.error('engine internal error:', e);
    const body = { ...full, message: cut(full.message, MAX_ERROR_MESSAGE) };
    const md = new grpc.Metadata();
    md.set('x-warehouse-error', asciiJson(body));
    const code = body.code === 400 && body.status === 'failedPrecondition' ? grpc.status.FAILED_PRECONDITION : (GRPC_BY_HTTP[body.code] ?? grpc.status.INTERNAL);
    const details = wellFormed(cut(body.message, MAX_STATUS_MESSAGE));
    return Object.assign(new Error(details), { code, details, metadata: md }) as grpc.ServiceError;
  } catch (inner) {
    // Last resort: an error that cannot be described still becomes an answer, never a throw out of a handler.
    console.error('engine: cannot describe an error', e, inner);
    return Object.assign(new Error('internal error'), { code: grpc.status.INTERNAL, details: 'An internal error occurred and the request could not be completed.', metadata: new grpc.Metadata() }) as grpc.ServiceError;
  }
}

type Handler<Req, Res> = (req: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res> | Res;

function unary<Req, Res>(fn: Handler<Req, Res>): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => fn(call.request, call))
      .then(
        (r) => callback(null, r),
        (e: unknown) => callback(toServiceError(e)),
      );
  };
}

interface ResourceRequest {
  projectId: string;
  datasetId: string;
  tableId: string;
  resourceJson: string;
  options: Record<string, string>;
}
interface ListRequest {
  projectId: string;
  datasetId: string;
  pageToken: string;
  maxResults: number;
  filter: string;
  all: boolean;
}
interface ChildRequest {
  projectId: string;
  datasetId: string;
  tableId: string;
  kind: string;
  childId: string;
  resourceJson: string;
  createOnly: boolean;
  pageToken: string;
  maxResults: number;
  childIds?: string[];
  force?: boolean;
  routineType?: string;
}
interface TableRef {
  projectId: string;
  datasetId: string;
  tableId: string;
}
interface InsertRowsRequest {
  table: TableRef | null;
  rowsJson: string;
  rowsUtf8: Buffer;
  skipInvalidRows: boolean;
  ignoreUnknownValues: boolean;
  templateSuffix: string;
  streaming: boolean;
}
interface ListRowsRequest {
  table: TableRef | null;
  startIndex: number;
  maxResults: number;
  selectedFields: string;
  timestampFormat: string;
  stringScalars: boolean;
  wantRowsUtf8: boolean;
  maxBytes: number;
  settled: boolean;
}
interface QueryRequest {
  projectId: string;
  jobId: string;
  query: string;
  defaultDataset: TableRef | null;
  parameters: { parametersJson: string; parameterMode: string } | null;
  dryRun: boolean;
  destination: TableRef | null;
  writeDisposition: string;
  createDisposition: string;
  schemaUpdateOptions: string[];
  tableDefinitionsJson: string;
  jobsSnapshotJson: string;
  location: string;
  sessionId: string;
  createSession: boolean;
  timeZone: string;
  maximumBytesBilled: number;
  maxResults: number;
  timestampFormat: string;
  stringScalars: boolean;
  wantRowsUtf8: boolean;
  maxBytes: number;
  viewBody: boolean;
  copyPolicies: { sources: TableRef[]; destination: TableRef | null; writeDisposition: string } | null;
}

interface AppendTableWriteRequest {
  writeId: string;
  rowsJson: string;
  skipInvalidRows: boolean;
  source: TableRef | null;
  file: { path: string; start: number; end: number; uri: string; format: string; optionsJson: string; fieldsJson: string; maxRows: number } | null;
}

const flag = (o: Record<string, string> | undefined, k: string): boolean => (o?.[k] ?? '').toLowerCase() === 'true';

/** The wire options of one call; with `bytes`, a large page of its rows comes back as `rowsUtf8` (encodeRowsPage). */
function wireOptions(r: { timestampFormat: string; stringScalars: boolean; wantRowsUtf8: boolean; maxBytes: number }): WireOptions {
  const tf = r.timestampFormat;
  const timestampFormat: TimestampFormat =
    tf === 'TIMESTAMP_FLOAT_SECONDS' ? 'FLOAT_SECONDS' : tf === 'TIMESTAMP_INT64_MICROS' ? 'INT64_MICROS' : 'RFC3339';
  return { timestampFormat, stringScalars: r.stringScalars, rowsAsBytes: r.wantRowsUtf8, maxBytes: Number(r.maxBytes) || 0 };
}

/** The table names of a request's tableDefinitions (JSON object text; empty or unreadable: none). */
function tableDefinitionNames(json: string | undefined): string[] {
  if (!json) return [];
  try {
    const defs = JSON.parse(json) as unknown;
    return defs && typeof defs === 'object' && !Array.isArray(defs) ? Object.keys(defs) : [];
  } catch {
    return [];
  }
}

const ref = (t: TableRef | null): TableRef => ({ projectId: t?.projectId ?? '', datasetId: t?.datasetId ?? '', tableId: t?.tableId ?? '' });

/** A CopyPoliciesRequest's rule (copy-policies.ts); undefined without one. */
function copyPoliciesOf(r: { sources: TableRef[]; destination: TableRef | null; writeDisposition: string } | null | undefined): CopyPolicies | undefined {
  return r ? { sources: (r.sources ?? []).map(ref), destination: ref(r.destination), write: r.writeDisposition } : undefined;
}

export interface ServiceOptions {
  /** Server-level default dataset (--dataset) and its project (--project-id). */
  readonly defaultDataset?: string;
  readonly defaultProject?: string;
}

export function engineHandlers(st: Storage, opts: ServiceOptions = {}): grpc.UntypedServiceImplementation {
  // GEOGRAPHY text written by any path is stored as canonical WKT.
  setGeographyText(canonicalGeographyText);
  const results = new ResultStore({ dir: path.join(st.dataDir, '.results') });
  const catalog = new EngineCatalog(st);
  const sessions = new Sessions(catalog, st);
  const writes = new TableWrites(st, catalog);
  const rows = new RowService(st, results);
  const res = (r: unknown): { resourceJson: string } => ({ resourceJson: JSON.stringify(r) });
  const list = (p: { items: unknown[]; next: string; total: number }): { itemsJson: string[]; nextPageToken: string; totalItems: number } => ({
    itemsJson: p.items.map((i) => JSON.stringify(i)),
    nextPageToken: p.next,
    totalItems: p.total,
  });

  return {
    Health: unary(() => ({ status: 'SERVING', version: ENGINE_VERSION, pid: process.pid })),

    InsertDataset: unary(async (r: ResourceRequest) => res(await datasets.insertDataset(st, r.projectId, r.datasetId, parseResource(r.resourceJson)))),
    GetDataset: unary((r: ResourceRequest) => res(datasets.getDataset(st, r.projectId, r.datasetId))),
    ListDatasets: unary((r: ListRequest) => list(datasets.listDatasets(st, r.projectId, r.pageToken, r.maxResults, r.filter, r.all))),
    UpdateDataset: unary(async (r: ResourceRequest) =>
      res(await datasets.updateDataset(st, r.projectId, r.datasetId, parseResource(r.resourceJson), flag(r.options, 'patch'))),
    ),
    DeleteDataset: unary(async (r: ResourceRequest) => {
      await datasets.deleteDataset(st, r.projectId, r.datasetId, flag(r.options, 'deleteContents'));
      return {};
    }),
    UndeleteDataset: unary(async (r: ResourceRequest) => res(await datasets.undeleteDataset(st, r.projectId, r.datasetId))),

    // A client's resource cannot set the fields REST never shows (DDL options, GRANT bindings, indexes).
    InsertTable: unary(async (r: ResourceRequest) => {
      const body = tables.withoutHidden(parseResource(r.resourceJson));
      await checkTableDefaults(st, catalog, r.projectId, body);
      return res(await tables.insertTable(st, r.projectId, r.datasetId, r.tableId, body));
    }),
    GetTable: unary(async (r: ResourceRequest) => {
      // numRows and numBytes count no expired partition (Storage.expirePartitions deletes them first).
      await st.expirePartitions();
      // options.iamPolicy: the table's GRANT bindings (tables.getIamPolicy), which the REST resource hides.
      return res(flag(r.options, 'iamPolicy') ? (st.requireTable(r.projectId, r.datasetId, r.tableId).resource.iamPolicy ?? {}) : tables.getTable(st, r.projectId, r.datasetId, r.tableId));
    }),
    ListTables: unary((r: ListRequest) => list(tables.listTables(st, r.projectId, r.datasetId, r.pageToken, r.maxResults))),
    UpdateTable: unary(async (r: ResourceRequest) => {
      const body = parseResource(r.resourceJson);
      // options.iamPolicy: tables.setIamPolicy replaces the GRANT bindings; a client's resource sets no hidden field.
      if (flag(r.options, 'iamPolicy')) return res(await tables.updateTable(st, r.projectId, r.datasetId, r.tableId, { iamPolicy: body.iamPolicy }, true));
      // options.fileRows: the gateway notes which file each row of an external table it filled came from (_FILE_NAME).
      if (flag(r.options, 'fileRows')) return res(await tables.updateTable(st, r.projectId, r.datasetId, r.tableId, { fileRows: body.fileRows }, true));
      await checkTableDefaults(st, catalog, r.projectId, body);
      return res(await tables.updateTable(st, r.projectId, r.datasetId, r.tableId, tables.withoutHidden(body), flag(r.options, 'patch')));
    }),
    DeleteTable: unary(async (r: ResourceRequest) => {
      await tables.deleteTable(st, r.projectId, r.datasetId, r.tableId);
      return {};
    }),

    PutChild: unary(async (r: ChildRequest) =>
      res(await children.putChild(st, r.kind, r.projectId, r.datasetId, r.tableId, r.childId, parseResource(r.resourceJson), r.createOnly)),
    ),
    GetChild: unary((r: ChildRequest) => res(children.getChild(st, r.kind, r.projectId, r.datasetId, r.tableId, r.childId))),
    ListChildren: unary((r: ChildRequest) => list(children.listChildren(st, r.kind, r.projectId, r.datasetId, r.tableId, r.pageToken, r.maxResults, r.routineType || undefined))),
    DeleteChild: unary(async (r: ChildRequest) => {
      if (r.kind === 'rowAccessPolicies') await children.deletePolicies(st, r.projectId, r.datasetId, r.tableId, r.childIds?.length ? r.childIds : [r.childId], r.force === true);
      else await children.deleteChild(st, r.kind, r.projectId, r.datasetId, r.tableId, r.childId);
      return {};
    }),

    InsertRows: unary(async (r: InsertRowsRequest) => {
      const t = ref(r.table);
      const errs = await rows.insertRows({
        ...t,
        rowsJson: r.rowsJson,
        rowsUtf8: r.rowsUtf8.length > 0 ? r.rowsUtf8 : undefined,
        skipInvalidRows: r.skipInvalidRows,
        ignoreUnknownValues: r.ignoreUnknownValues,
        templateSuffix: r.templateSuffix,
        streaming: r.streaming,
      });
      return { insertErrorsJson: errs };
    }),
    ListRows: unary(async (r: ListRowsRequest) => {
      const t = ref(r.table);
      const wire = wireOptions(r);
      return rows.listRows({ ...t, startIndex: r.startIndex, maxResults: r.maxResults, selectedFields: r.selectedFields, wire, settled: r.settled });
    }),

    BeginTableWrite: unary((r: { table: TableRef | null; writeDisposition: string; createDisposition: string; resourceJson: string; loadedColumnsJson: string; selfDescribed: boolean }) => {
      const t = ref(r.table);
      const load = { ...(r.loadedColumnsJson ? { loaded: JSON.parse(r.loadedColumnsJson) as string[] } : {}), selfDescribed: r.selfDescribed };
      return { writeId: writes.begin(t.projectId, t.datasetId, t.tableId, r.writeDisposition, r.createDisposition, parseResource(r.resourceJson), load), rows: 0 };
    }),
    AppendTableWrite: unary(async (r: AppendTableWriteRequest) => {
      const src = ref(r.source);
      if (src.tableId) return { insertErrorsJson: '', sourceRows: await writes.appendFrom(r.writeId, src.projectId, src.datasetId, src.tableId) };
      const f = r.file;
      if (f?.path) {
        const out = await writes.appendFile(r.writeId, {
          file: { path: f.path, start: f.start, ...(f.end > 0 ? { end: f.end } : {}), uri: f.uri || f.path },
          format: f.format,
          options: f.optionsJson ? (JSON.parse(f.optionsJson) as ReadOptions) : {},
          ...(f.fieldsJson ? { fields: JSON.parse(f.fieldsJson) as RestField[] } : {}),
          skipInvalidRows: r.skipInvalidRows,
          maxRows: f.maxRows > 0 ? f.maxRows : Number.POSITIVE_INFINITY,
        });
        return { insertErrorsJson: out.errorsJson, sourceRows: 0, fileRecords: out.records, fileBytesRead: out.bytesRead, fileDone: out.done };
      }
      return { insertErrorsJson: await writes.append(r.writeId, r.rowsJson, r.skipInvalidRows), sourceRows: 0 };
    }),
    CommitTableWrite: unary(async (r: { writeId: string }) => ({ writeId: r.writeId, rows: await writes.commit(r.writeId) })),
    CopyRowAccessPolicies: unary(async (r: { sources: TableRef[]; destination: TableRef | null; writeDisposition: string; checkOnly: boolean }) => {
      writes.checkCopyPolicies(copyPoliciesOf(r)!);
      return {};
    }),
    AbortTableWrite: unary(async (r: { writeId: string }) => {
      await writes.abort(r.writeId);
      return { writeId: r.writeId, rows: 0 };
    }),

    ExecuteQuery: unary(async (r: QueryRequest, call) => {
      const abort = new AbortController();
      // grpc-js emits 'cancelled' on every stream close, finished calls included:
      // only a call still running is cancelled (and no abort reason is built for nothing).
      let finished = false;
      call.on('cancelled', () => {
        if (!finished) abort.abort();
      });
      const dd = r.defaultDataset;
      // A view's body has no default dataset, not even the engine's --dataset (views-intro.md, Limitations).
      const defaultDataset = r.viewBody
        ? undefined
        : dd && dd.datasetId
          ? { projectId: dd.projectId || r.projectId, datasetId: dd.datasetId }
          : opts.defaultDataset
            ? { projectId: opts.defaultProject || r.projectId, datasetId: opts.defaultDataset }
            : undefined;
      const dest = ref(r.destination);
      const wire = wireOptions(r);
      try {
        return await executeQuery(st, catalog, results, {
          projectId: r.projectId,
          jobId: r.jobId,
          query: r.query,
          defaultDataset,
          parametersJson: r.parameters?.parametersJson,
          parameterMode: r.parameters?.parameterMode,
          dryRun: r.dryRun,
          ...(r.viewBody ? { viewBody: true } : {}),
          destination: dest.tableId ? { ...dest, projectId: dest.projectId || r.projectId } : undefined,
          writeDisposition: r.writeDisposition,
          createDisposition: r.createDisposition,
          schemaUpdateOptions: r.schemaUpdateOptions ?? [],
          maxResults: r.maxResults,
          wire,
          signal: abort.signal,
          jobsSnapshotJson: r.jobsSnapshotJson,
          ...(r.timeZone ? { timeZone: r.timeZone } : {}),
          ...(r.maximumBytesBilled > 0 ? { maximumBytesBilled: r.maximumBytesBilled } : {}),
          ...(r.sessionId ? { sessionId: r.sessionId, createSession: r.createSession } : {}),
          location: r.location,
          externalTables: tableDefinitionNames(r.tableDefinitionsJson),
          ...(r.copyPolicies ? { commitEntry: copyPolicyChange(st, copyPoliciesOf(r.copyPolicies)!) } : {}),
        }, sessions);
      } finally {
        finished = true;
      }
    }),
  };
}

/**
 * TCP_NODELAY and a large HTTP/2 receive window on the server's sockets.
 * grpc-js leaves Nagle on for server sockets, so a reply's trailers wait for
 * the client's delayed ACK (~40 ms per call); and the default 64 KB window
 * makes a 100 KB insertAll wait for a window update. grpc-js exposes neither
 * as an option, so they are set on its (stable, internal) http2 server options.
 */
export function tuneServer(server: grpc.Server): void {
  const s = server as unknown as { commonServerOptions?: { noDelay?: boolean; settings?: Record<string, unknown> } };
  if (!s.commonServerOptions) return;
  s.commonServerOptions.noDelay = true;
  s.commonServerOptions.settings = { ...(s.commonServerOptions.settings ?? {}), initialWindowSize: 8 * 1024 * 1024 };
}
