// Id checks and query-parameter readers shared by the route plugins. Ids are
// checked here, before the engine, so names that could escape the data dir
// (.., /, NUL) never reach storage.
import { invalid } from './errors.js';
import { timestampPrecisionError } from '../types/schema.js';

export type Query = Record<string, string | string[] | undefined>;
export type Json = Record<string, unknown>;

const DATASET_ID = /^[A-Za-z0-9_]{1,1024}$/;
// Unicode letters, marks, numbers, connectors, dashes and spaces, as the real service allows.
const TABLE_ID = /^[\p{L}\p{M}\p{N}\p{Pc}\p{Pd}\p{Zs}]+$/u;
const PROJECT_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const CHILD_ID = /^[A-Za-z0-9_]{1,1024}$/;
const JOB_ID = /^[A-Za-z0-9_-]{1,1024}$/;

export function checkProjectId(id: string): string {
  if (!PROJECT_ID.test(id) || id.includes('..')) {
    throw invalid(`Invalid project ID '${id}'. Project IDs must contain 6-63 lowercase letters, digits, or dashes. Some project IDs also include domain name separated by a colon. IDs must start with a letter and may not end with a dash.`);
  }
  return id;
}

export function checkDatasetId(id: string): string {
  if (!DATASET_ID.test(id)) {
    throw invalid(`Invalid dataset ID "${id}". Dataset IDs must be alphanumeric (plus underscores) and must be at most 1024 characters long.`);
  }
  return id;
}

export function checkTableId(id: string): string {
  if (!TABLE_ID.test(id) || Buffer.byteLength(id, 'utf8') > 1024) {
    throw invalid(`Invalid table ID "${id}". Table IDs must be alphanumeric (plus underscores) and must be at most 1024 characters long. Also, Table decorators cannot be used.`);
  }
  return id;
}

export function checkChildId(kindWord: string, id: string): string {
  if (!CHILD_ID.test(id)) {
    throw invalid(`Invalid ${kindWord} ID "${id}". ${kindWord[0]!.toUpperCase()}${kindWord.slice(1)} IDs must be alphanumeric (plus underscores) and must be at most 1024 characters long.`);
  }
  return id;
}

export function checkJobId(id: string): string {
  if (!JOB_ID.test(id)) {
    throw invalid(`Invalid job ID "${id}". Job IDs must be alphanumeric (plus underscores and dashes) and must be at most 1024 characters long.`);
  }
  return id;
}

export function qStr(q: Query, name: string): string | undefined {
  const v = q[name];
  if (Array.isArray(v)) return v[v.length - 1];
  return v;
}

export function qList(q: Query, name: string): string[] {
  const v = q[name];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).filter((s) => s !== '');
}

export function qBool(q: Query, name: string): boolean | undefined {
  const v = qStr(q, name);
  if (v === undefined || v === '') return undefined;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw invalid(`Invalid value for ${name}: ${v} is not a valid boolean`);
}

const UINT32 = 'type.googleapis.com/google.protobuf.UInt32Value';
/** Integer query parameters: their protobuf type (as a refusal names it) and range. */
const INT_PARAMS: Record<string, readonly [string, number, number]> = {
  maxResults: [UINT32, 0, 4294967295],
  timeoutMs: [UINT32, 0, 4294967295],
  pageSize: ['TYPE_INT32', -2147483648, 2147483647],
  startIndex: ['type.googleapis.com/google.protobuf.UInt64Value', 0, Number.MAX_SAFE_INTEGER],
  minCreationTime: ['TYPE_UINT64', 0, Number.MAX_SAFE_INTEGER],
  maxCreationTime: ['TYPE_UINT64', 0, Number.MAX_SAFE_INTEGER],
  accessPolicyVersion: ['TYPE_INT32', -2147483648, 2147483647],
};

/** An integer query parameter in its protobuf type's range; a bad one is refused as the service words it. */
export function qInt(q: Query, name: string): number | undefined {
  const v = qStr(q, name);
  if (v === undefined || v === '') return undefined;
  const [proto, min, max] = INT_PARAMS[name] ?? ['TYPE_INT64', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
  const n = /^\s*[+-]?\d+\s*$/.test(v) ? Number(v) : NaN;
  if (!(n >= min && n <= max)) throw invalid(`Invalid value at '${name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())}' (${proto}), ${JSON.stringify(v)}`);
  return n;
}

/** A page token of the offset form every list here hands out (the next item's decimal index); 0 when absent. */
export function qPageToken(q: Query): number {
  const t = qStr(q, 'pageToken');
  if (t === undefined || t === '') return 0;
  if (!/^\d{1,15}$/.test(t)) throw invalid(`Invalid page token: ${t}`);
  return Number(t);
}

/** A JSON body as an object ({} when absent); arrays and scalars are rejected like the real service does. */
export function bodyObject(body: unknown): Json {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw invalid('Invalid JSON payload received. Expected an object.');
  }
  return body as Json;
}

export function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Integer-ish fields arrive as JSON numbers (Node) or strings (bq). */
export function num(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

export function boolish(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return undefined;
}

/** int64 members of TableFieldSchema: the service echoes them as decimal strings, whatever JSON type they came as. */
const FIELD_INT64 = ['maxLength', 'precision', 'scale', 'timestampPrecision'] as const;

/**
 * A schema's fields as they are stored and echoed (recursively): int64
 * members as strings. `timestampPrecision` is 6 (microseconds, the default)
 * or 12 (picoseconds: TIMESTAMP(12), src/types/README.md).
 */
export function schemaFieldsIn(fields: readonly unknown[]): Json[] {
  return fields.map((f) => {
    if (!isObj(f)) return f as Json;
    const out: Json = { ...f };
    for (const k of FIELD_INT64) if (typeof out[k] === 'number') out[k] = String(out[k]);
    const bad = timestampPrecisionError(out);
    if (bad) throw invalid(bad);
    if (Array.isArray(out['fields'])) out['fields'] = schemaFieldsIn(out['fields'] as unknown[]);
    return out;
  });
}
