// Access to the GoogleSQL reference implementation shipped by the npm package
// @fivetrandevelopers/zetasql (dev-only; installed with
// `npm install --no-save @fivetrandevelopers/zetasql`, loaded at run time).
// It runs ZetaSQL's local_service over gRPC; EvaluateQuery evaluates a query
// over an in-memory catalog. Used by record.ts and refserver.ts.

import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { FEATURES } from '../features.js';
import { freePort } from './server.js';
import { canonicalDecimal, parseTimestampText } from './value.js';

export interface YamlField {
  name: string;
  type: string;
  mode?: string;
  fields?: YamlField[];
}

const require = createRequire(import.meta.url);

// ---- proto shapes used here (keepCase, longs as strings, oneofs) ----
export interface TypeProto {
  type_kind: string;
  array_type?: { element_type: TypeProto };
  struct_type?: { field: Array<{ field_name?: string; field_type: TypeProto }> };
}
export interface ValueProto {
  value?: string;
  int64_value?: string;
  double_value?: number;
  bool_value?: boolean;
  string_value?: string;
  bytes_value?: Buffer;
  date_value?: number;
  timestamp_value?: { seconds?: string; nanos?: number };
  datetime_value?: { bit_field_datetime_seconds?: string; nanos?: number };
  time_value?: string;
  numeric_value?: Buffer;
  bignumeric_value?: Buffer;
  json_value?: string;
  array_value?: { element?: ValueProto[] };
  struct_value?: { field?: ValueProto[] };
}
export interface Column { name: string; type: TypeProto }
export interface EvalResponse {
  content?: { table_data?: { row?: Array<{ cell?: ValueProto[] }> } };
  prepared?: { columns?: Column[] };
}
export type Call = <T>(method: string, req: unknown) => Promise<T>;

interface GrpcModule {
  loadPackageDefinition(def: unknown): Record<string, unknown>;
  credentials: { createInsecure(): unknown };
}
interface ProtoLoader {
  loadSync(file: string, opts: Record<string, unknown>): unknown;
}

const SCALAR_KIND: Record<string, string> = {
  INT64: 'TYPE_INT64', INTEGER: 'TYPE_INT64', FLOAT64: 'TYPE_DOUBLE', FLOAT: 'TYPE_DOUBLE', BOOL: 'TYPE_BOOL', BOOLEAN: 'TYPE_BOOL',
  STRING: 'TYPE_STRING', BYTES: 'TYPE_BYTES', DATE: 'TYPE_DATE', TIMESTAMP: 'TYPE_TIMESTAMP', DATETIME: 'TYPE_DATETIME',
  TIME: 'TYPE_TIME', NUMERIC: 'TYPE_NUMERIC', BIGNUMERIC: 'TYPE_BIGNUMERIC', JSON: 'TYPE_JSON',
};

export function typeProtoOfField(f: YamlField, ignoreMode = false): TypeProto {
  if (!ignoreMode && (f.mode ?? '').toUpperCase() === 'REPEATED') return { type_kind: 'TYPE_ARRAY', array_type: { element_type: typeProtoOfField(f, true) } };
  const t = f.type.toUpperCase();
  if (t === 'RECORD' || t === 'STRUCT') {
    return { type_kind: 'TYPE_STRUCT', struct_type: { field: (f.fields ?? []).map((sf) => ({ field_name: sf.name, field_type: typeProtoOfField(sf) })) } };
  }
  const k = SCALAR_KIND[t];
  if (!k) throw new Error(`recorder: column type ${f.type} not supported`);
  return { type_kind: k };
}

const DAY_MS = 86_400_000;

function daysOf(date: string): number {
  const ms = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(ms)) throw new Error(`bad DATE ${date}`);
  return Math.round(ms / DAY_MS);
}

function decimalToBytes(text: string, scale: number): Buffer {
  const c = canonicalDecimal(text);
  const neg = c.startsWith('-');
  const [ip = '0', fp = ''] = c.replace('-', '').split('.');
  let v = BigInt(ip + fp.padEnd(scale, '0').slice(0, scale));
  if (neg) v = -v;
  const out: number[] = [];
  // little-endian two's complement, minimal length
  for (;;) {
    const byte = Number(v & 0xffn);
    out.push(byte);
    v >>= 8n;
    if ((v === 0n && (byte & 0x80) === 0) || (v === -1n && (byte & 0x80) !== 0)) break;
  }
  return Buffer.from(out);
}

function bytesToDecimal(b: Buffer, scale: number): string {
  let v = 0n;
  for (let i = b.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]!);
  if (b.length > 0 && (b[b.length - 1]! & 0x80) !== 0) v -= 1n << BigInt(8 * b.length);
  const neg = v < 0n;
  const s = (neg ? -v : v).toString().padStart(scale + 1, '0');
  return canonicalDecimal(`${neg ? '-' : ''}${s.slice(0, s.length - scale)}.${s.slice(s.length - scale)}`);
}

/** YAML/wire value → ValueProto of the given type. */
export function valueProto(t: TypeProto, v: unknown): ValueProto {
  if (v === null || v === undefined) return {};
  switch (t.type_kind) {
    case 'TYPE_INT64': return { int64_value: String(v) };
    case 'TYPE_DOUBLE': return { double_value: typeof v === 'number' ? v : Number(v) };
    case 'TYPE_BOOL': return { bool_value: v === true || v === 'true' };
    case 'TYPE_STRING': return { string_value: String(v) };
    case 'TYPE_BYTES': return { bytes_value: Buffer.from(String(v), 'base64') };
    case 'TYPE_DATE': return { date_value: daysOf(String(v)) };
    case 'TYPE_TIMESTAMP': {
      const micros = parseTimestampText(String(v).replace(/ UTC$/, ''));
      if (micros === null) throw new Error(`bad TIMESTAMP ${String(v)}`);
      const secs = micros >= 0n ? micros / 1_000_000n : -((-micros + 999_999n) / 1_000_000n);
      return { timestamp_value: { seconds: secs.toString(), nanos: Number(micros - secs * 1_000_000n) * 1000 } };
    }
    case 'TYPE_DATETIME': {
      const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/.exec(String(v));
      if (!m) throw new Error(`bad DATETIME ${String(v)}`);
      const bits = (BigInt(m[1]!) << 26n) | (BigInt(m[2]!) << 22n) | (BigInt(m[3]!) << 17n) | (BigInt(m[4]!) << 12n) | (BigInt(m[5]!) << 6n) | BigInt(m[6]!);
      return { datetime_value: { bit_field_datetime_seconds: bits.toString(), nanos: Number((m[7] ?? '').padEnd(9, '0')) } };
    }
    case 'TYPE_TIME': {
      const m = /^(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/.exec(String(v));
      if (!m) throw new Error(`bad TIME ${String(v)}`);
      const bits = (BigInt(m[1]!) << 42n) | (BigInt(m[2]!) << 36n) | (BigInt(m[3]!) << 30n) | BigInt((m[4] ?? '').padEnd(9, '0'));
      return { time_value: bits.toString() };
    }
    case 'TYPE_NUMERIC': return { numeric_value: decimalToBytes(String(v), 9) };
    case 'TYPE_BIGNUMERIC': return { bignumeric_value: decimalToBytes(String(v), 38) };
    case 'TYPE_JSON': return { json_value: typeof v === 'string' ? v : JSON.stringify(v) };
    case 'TYPE_ARRAY': return { array_value: { element: (v as unknown[]).map((e) => valueProto(t.array_type!.element_type, e)) } };
    case 'TYPE_STRUCT': {
      const o = v as Record<string, unknown>;
      return { struct_value: { field: t.struct_type!.field.map((f) => valueProto(f.field_type, o[f.field_name ?? ''])) } };
    }
    default: throw new Error(`recorder: cannot encode ${t.type_kind}`);
  }
}

function pad(n: bigint | number, w: number): string {
  return n.toString().padStart(w, '0');
}

function frac(nanos: number): string {
  if (!nanos) return '';
  return '.' + pad(nanos, 9).replace(/0+$/, '');
}

/** ValueProto → REST wire value (what the emulator should send, real family). */
export function wireOf(t: TypeProto, v: ValueProto): unknown {
  if (!v.value) return null;
  switch (t.type_kind) {
    case 'TYPE_INT64': return v.int64_value;
    case 'TYPE_DOUBLE': {
      const d = v.double_value!;
      return Number.isNaN(d) ? 'NaN' : d === Infinity ? 'Infinity' : d === -Infinity ? '-Infinity' : d;
    }
    case 'TYPE_BOOL': return v.bool_value;
    case 'TYPE_STRING': return v.string_value;
    case 'TYPE_BYTES': return Buffer.from(v.bytes_value ?? []).toString('base64');
    case 'TYPE_DATE': return new Date(v.date_value! * DAY_MS).toISOString().slice(0, 10);
    case 'TYPE_TIMESTAMP': {
      const micros = BigInt(v.timestamp_value?.seconds ?? '0') * 1_000_000n + BigInt(Math.floor((v.timestamp_value?.nanos ?? 0) / 1000));
      return micros.toString();
    }
    case 'TYPE_DATETIME': {
      const b = BigInt(v.datetime_value?.bit_field_datetime_seconds ?? '0');
      const y = b >> 26n, mo = (b >> 22n) & 0xfn, d = (b >> 17n) & 0x1fn, h = (b >> 12n) & 0x1fn, mi = (b >> 6n) & 0x3fn, s = b & 0x3fn;
      return `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${frac(v.datetime_value?.nanos ?? 0)}`;
    }
    case 'TYPE_TIME': {
      const b = BigInt(v.time_value ?? '0');
      return `${pad(b >> 42n, 2)}:${pad((b >> 36n) & 0x3fn, 2)}:${pad((b >> 30n) & 0x3fn, 2)}${frac(Number(b & 0x3fffffffn))}`;
    }
    case 'TYPE_NUMERIC': return bytesToDecimal(Buffer.from(v.numeric_value ?? []), 9);
    case 'TYPE_BIGNUMERIC': return bytesToDecimal(Buffer.from(v.bignumeric_value ?? []), 38);
    case 'TYPE_JSON': return v.json_value;
    case 'TYPE_ARRAY': return (v.array_value?.element ?? []).map((e) => wireOf(t.array_type!.element_type, e));
    case 'TYPE_STRUCT': {
      const o: Record<string, unknown> = {};
      t.struct_type!.field.forEach((f, i) => {
        o[f.field_name || `_field_${i + 1}`] = wireOf(f.field_type, v.struct_value?.field?.[i] ?? {});
      });
      return o;
    }
    default: throw new Error(`recorder: cannot decode result type ${t.type_kind}`);
  }
}

const REST_TYPE: Record<string, string> = {
  TYPE_INT64: 'INTEGER', TYPE_DOUBLE: 'FLOAT', TYPE_BOOL: 'BOOLEAN', TYPE_STRING: 'STRING', TYPE_BYTES: 'BYTES', TYPE_DATE: 'DATE',
  TYPE_TIMESTAMP: 'TIMESTAMP', TYPE_DATETIME: 'DATETIME', TYPE_TIME: 'TIME', TYPE_NUMERIC: 'NUMERIC', TYPE_BIGNUMERIC: 'BIGNUMERIC',
  TYPE_JSON: 'JSON', TYPE_STRUCT: 'RECORD',
};

export function restField(name: string, t: TypeProto): YamlField {
  if (t.type_kind === 'TYPE_ARRAY') return { ...restField(name, t.array_type!.element_type), mode: 'REPEATED' };
  const type = REST_TYPE[t.type_kind];
  if (!type) throw new Error(`recorder: result type ${t.type_kind} has no REST counterpart`);
  const f: YamlField = { name, type, mode: 'NULLABLE' };
  if (t.type_kind === 'TYPE_STRUCT') f.fields = t.struct_type!.field.map((sf, i) => restField(sf.field_name || `_field_${i + 1}`, sf.field_type));
  return f;
}

export async function connect(): Promise<{ call: Call; stop: () => void; version: string; alive: () => boolean }> {
  let pkgJson: string;
  try {
    pkgJson = require.resolve('@fivetrandevelopers/zetasql/package.json');
  } catch {
    throw new Error('the reference implementation is not installed: run `npm install --no-save @fivetrandevelopers/zetasql`');
  }
  const version = (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
  const grpc = require('@grpc/grpc-js') as GrpcModule;
  const loader = require('@grpc/proto-loader') as ProtoLoader;
  const protoDir = path.join(path.dirname(pkgJson), 'lib', 'zetasql', 'protos');
  const port = await freePort();
  // Started directly rather than with the package's runServer(): that one uses
  // execFile, whose output buffer limit kills the server on a long run.
  const suffix = (process.arch.startsWith('arm') ? '_arm' : '') + (process.platform === 'darwin' ? '' : '.so');
  const child = spawn(path.join(path.dirname(pkgJson), 'lib', 'zetasql', `remote_server${suffix}`), ['localhost', String(port)], { stdio: 'ignore' });
  let exited = false;
  child.once('exit', () => { exited = true; });
  const def = loader.loadSync('local_service.proto', { keepCase: true, longs: String, enums: String, defaults: false, oneofs: true, includeDirs: [protoDir] });
  const proto = grpc.loadPackageDefinition(def) as { zetasql: { local_service: { ZetaSqlLocalService: new (addr: string, creds: unknown, opts?: Record<string, unknown>) => Record<string, (req: unknown, cb: (e: Error | null, r: unknown) => void) => void> } } };
  const api = new proto.zetasql.local_service.ZetaSqlLocalService(`localhost:${port}`, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 64 << 20,
  });
  const call: Call = <T>(method: string, req: unknown) =>
    new Promise<T>((resolve, reject) => api[method]!(req, (e, r) => (e ? reject(e) : resolve(r as T))));
  for (let i = 0; ; i++) {
    try {
      await call('FormatSql', { sql: 'SELECT 1' });
      break;
    } catch (e) {
      if (i > 80 || exited) throw new Error(`reference service did not start: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return { call, stop: () => { child.kill('SIGKILL'); }, version, alive: () => !exited };
}

/** BigQuery's dialect: the reference's maximum features minus those BigQuery lacks. */
export async function languageOptions(call: Call): Promise<Record<string, unknown>> {
  const max = await call<{ enabled_language_features?: string[] } & Record<string, unknown>>('GetLanguageOptions', { maximum_features: true });
  const short = (f: string) => f.replace(/^FEATURE_/, '').replace(/^V_\d+_\d+_/, '');
  const enabled = (max.enabled_language_features ?? []).filter((f) => FEATURES[short(f)]?.supported !== false);
  return { ...max, enabled_language_features: enabled, product_mode: 'PRODUCT_EXTERNAL' };
}

