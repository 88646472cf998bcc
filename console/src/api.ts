// The console talks to the emulator through its public REST API (the real
// family, /bigquery/v2), exactly as a client library would; nothing else.
export const BASE = '/bigquery/v2';

export class ApiError extends Error {
  constructor(message: string, readonly status: number, readonly reason: string) {
    super(message);
  }
}

type QueryValue = string | number | boolean | undefined;

export async function api<T>(method: string, path: string, opts: { body?: unknown; query?: Record<string, QueryValue>; signal?: AbortSignal } = {}): Promise<T> {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined && v !== '') qs.set(k, String(v));
  const url = BASE + path + (qs.size ? '?' + qs.toString() : '');
  const r = await fetch(url, {
    method,
    signal: opts.signal,
    headers: opts.body === undefined ? {} : { 'content-type': 'application/json' },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await r.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    json = undefined;
  }
  if (!r.ok) {
    const err = (json as { error?: { message?: string; errors?: { reason?: string }[]; status?: string } } | undefined)?.error;
    throw new ApiError(err?.message ?? `${r.status} ${r.statusText}`, r.status, err?.errors?.[0]?.reason ?? err?.status ?? 'error');
  }
  return json as T;
}

export const enc = encodeURIComponent;

// ---------------------------------------------------------------- resources (the REST shapes the console reads)

export interface FieldSchema {
  name: string;
  type: string;
  mode?: string;
  description?: string;
  fields?: FieldSchema[];
}
export interface TableSchema { fields?: FieldSchema[] }
export interface TableRef { projectId: string; datasetId: string; tableId: string }

export interface DatasetListItem { datasetReference: { projectId: string; datasetId: string }; location?: string }
export interface TableListItem { tableReference: TableRef; type?: string }
export interface RoutineListItem { routineReference: { projectId: string; datasetId: string; routineId: string }; routineType?: string }
export interface ModelListItem { modelReference: { projectId: string; datasetId: string; modelId: string }; modelType?: string }

export interface Table {
  tableReference: TableRef;
  type?: string;
  schema?: TableSchema;
  description?: string;
  labels?: Record<string, string>;
  numRows?: string;
  numBytes?: string;
  creationTime?: string;
  lastModifiedTime?: string;
  expirationTime?: string;
  location?: string;
  timePartitioning?: { type?: string; field?: string; expirationMs?: string };
  rangePartitioning?: { field?: string; range?: { start?: string; end?: string; interval?: string } };
  clustering?: { fields?: string[] };
  view?: { query?: string };
  materializedView?: { query?: string };
  requirePartitionFilter?: boolean;
}

export type Cell = { v: CellValue };
export type CellValue = null | string | { f: Cell[] } | Cell[];
export interface Row { f: Cell[] }

export interface JobStatus { state: string; errorResult?: ErrorProto; errors?: ErrorProto[] }
export interface ErrorProto { reason?: string; location?: string; message?: string }
export interface Job {
  id?: string;
  jobReference: { projectId: string; jobId: string; location?: string };
  configuration: {
    jobType?: string;
    dryRun?: boolean;
    query?: { query?: string; destinationTable?: TableRef; queryParameters?: unknown[] };
    load?: unknown;
    copy?: unknown;
    extract?: unknown;
    labels?: Record<string, string>;
  };
  status: JobStatus;
  statistics?: {
    creationTime?: string;
    startTime?: string;
    endTime?: string;
    totalBytesProcessed?: string;
    numChildJobs?: string;
    parentJobId?: string;
    query?: { statementType?: string; totalBytesProcessed?: string; totalBytesBilled?: string; cacheHit?: boolean; numDmlAffectedRows?: string; totalSlotMs?: string };
  };
  user_email?: string;
}

export interface QueryResults {
  jobReference: { projectId: string; jobId: string; location?: string };
  jobComplete: boolean;
  schema?: TableSchema;
  rows?: Row[];
  totalRows?: string;
  pageToken?: string;
  totalBytesProcessed?: string;
  numDmlAffectedRows?: string;
  cacheHit?: boolean;
}

export function tableName(r: TableRef): string {
  return `${r.projectId}.${r.datasetId}.${r.tableId}`;
}
