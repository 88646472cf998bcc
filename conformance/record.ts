// Reference-oracle recorder: evaluates a project case (conformance/cases/*.yaml)
// with the GoogleSQL reference implementation and writes the expected answer
// into the case file.
//
//   npm install --no-save @fivetrandevelopers/zetasql   # dev-only, not a dependency
//   node --import tsx conformance/record.ts conformance/cases/<case>.yaml [...]
//
// The package ships a local gRPC service (ZetaSQL's local_service) whose
// EvaluateQuery runs the reference implementation over an in-memory catalog.
// Supported setup steps: `dataset`, `table` (with schema) and `rows`; tables
// are registered both as `<table>` and `<dataset>.<table>`. Default time zone: UTC.

import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { FEATURES } from './features.js';
import { freePort } from './lib/server.js';
import { hasTopLevelOrderBy, type YamlField } from './sources/yamlcases.js';
import { canonicalDecimal, parseTimestampText } from './lib/value.js';
import type { YamlParam } from './lib/params.js';

const require = createRequire(import.meta.url);

// ---- proto shapes used here (keepCase, longs as strings, oneofs) ----
interface TypeProto {
  type_kind: string;
  array_type?: { element_type: TypeProto };
  struct_type?: { field: Array<{ field_name?: string; field_type: TypeProto }> };
}
interface ValueProto {
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
interface Column { name: string; type: TypeProto }
interface EvalResponse {
  content?: { table_data?: { row?: Array<{ cell?: ValueProto[] }> } };
  prepared?: { columns?: Column[] };
}
type Call = <T>(method: string, req: unknown) => Promise<T>;

interface ZetaSqlPackage {
  runServer(port: number): Promise<void>;
  terminateServer(): void;
}
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

function typeProtoOfField(f: YamlField, ignoreMode = false): TypeProto {
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
function valueProto(t: TypeProto, v: unknown): ValueProto {
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
function wireOf(t: TypeProto, v: ValueProto): unknown {
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

function restField(name: string, t: TypeProto): YamlField {
  if (t.type_kind === 'TYPE_ARRAY') return { ...restField(name, t.array_type!.element_type), mode: 'REPEATED' };
  const type = REST_TYPE[t.type_kind];
  if (!type) throw new Error(`recorder: result type ${t.type_kind} has no REST counterpart`);
  const f: YamlField = { name, type, mode: 'NULLABLE' };
  if (t.type_kind === 'TYPE_STRUCT') f.fields = t.struct_type!.field.map((sf, i) => restField(sf.field_name || `_field_${i + 1}`, sf.field_type));
  return f;
}

async function connect(): Promise<{ call: Call; stop: () => void; version: string }> {
  let pkgJson: string;
  let z: ZetaSqlPackage;
  try {
    pkgJson = require.resolve('@fivetrandevelopers/zetasql/package.json');
    z = require('@fivetrandevelopers/zetasql') as ZetaSqlPackage;
  } catch {
    throw new Error('the reference implementation is not installed: run `npm install --no-save @fivetrandevelopers/zetasql`');
  }
  const version = (JSON.parse(readFileSync(pkgJson, 'utf8')) as { version: string }).version;
  const grpc = require('@grpc/grpc-js') as GrpcModule;
  const loader = require('@grpc/proto-loader') as ProtoLoader;
  const protoDir = path.join(path.dirname(pkgJson), 'lib', 'zetasql', 'protos');
  const port = await freePort();
  void z.runServer(port);
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
      if (i > 80) throw new Error(`reference service did not start: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return { call, stop: () => z.terminateServer(), version };
}

/** BigQuery's dialect: the reference's maximum features minus those BigQuery lacks. */
async function languageOptions(call: Call): Promise<Record<string, unknown>> {
  const max = await call<{ enabled_language_features?: string[] } & Record<string, unknown>>('GetLanguageOptions', { maximum_features: true });
  const short = (f: string) => f.replace(/^FEATURE_/, '').replace(/^V_\d+_\d+_/, '');
  const enabled = (max.enabled_language_features ?? []).filter((f) => FEATURES[short(f)]?.supported !== false);
  return { ...max, enabled_language_features: enabled, product_mode: 'PRODUCT_EXTERNAL' };
}

interface CaseDoc {
  name?: string;
  setup?: Array<Record<string, unknown>>;
  query?: string;
  query_parameters?: YamlParam[];
  default_dataset?: string;
}

async function recordOne(file: string, call: Call, lang: Record<string, unknown>, version: string): Promise<string> {
  const text = readFileSync(file, 'utf8');
  const doc = parseDocument(text);
  const c = doc.toJS() as CaseDoc;
  if (!c.query) throw new Error(`${file}: no query`);
  const tables = new Map<string, { dataset: string; id: string; cols: Column[]; rows: ValueProto[][] }>();
  for (const step of c.setup ?? []) {
    if ('dataset' in step) continue;
    if ('table' in step) {
      const t = step['table'] as { dataset: string; id: string; schema: YamlField[] };
      tables.set(`${t.dataset}.${t.id}`, { dataset: t.dataset, id: t.id, cols: t.schema.map((f) => ({ name: f.name, type: typeProtoOfField(f) })), rows: [] });
      continue;
    }
    if ('rows' in step) {
      const r = step['rows'] as { dataset: string; table: string; rows: Array<Record<string, unknown>> };
      const t = tables.get(`${r.dataset}.${r.table}`);
      if (!t) throw new Error(`${file}: rows for unknown table ${r.dataset}.${r.table}`);
      for (const row of r.rows) t.rows.push(t.cols.map((col) => valueProto(col.type, row[col.name])));
      continue;
    }
    throw new Error(`${file}: recorder supports setup steps dataset/table/rows only, not ${Object.keys(step)[0]}`);
  }
  // Tables are reachable as `t` (with default_dataset) and as `ds.t`.
  const simpleTable = (name: string, t: { cols: Column[] }) => ({ name, column: t.cols.map((col) => ({ name: col.name, type: col.type })) });
  const byDataset = new Map<string, Array<ReturnType<typeof simpleTable>>>();
  const top: Array<ReturnType<typeof simpleTable>> = [];
  const content: Record<string, unknown> = {};
  for (const t of tables.values()) {
    if (!byDataset.has(t.dataset)) byDataset.set(t.dataset, []);
    byDataset.get(t.dataset)!.push(simpleTable(t.id, t));
    if (!c.default_dataset || c.default_dataset === t.dataset) top.push(simpleTable(t.id, t));
    content[t.id] = { table_data: { row: t.rows.map((cells) => ({ cell: cells })) } };
  }
  const params = (c.query_parameters ?? []).map((p) => {
    const f: YamlField = p.type.toUpperCase() === 'ARRAY'
      ? { name: p.name ?? '', type: p.array_element_type ?? 'STRING', mode: 'REPEATED' }
      : p.type.toUpperCase() === 'STRUCT'
        ? { name: p.name ?? '', type: 'STRUCT', fields: (p.struct_fields ?? []).map((sf) => ({ name: sf.name, type: sf.type })) }
        : { name: p.name ?? '', type: p.type };
    const type = typeProtoOfField(f);
    const raw = p.type.toUpperCase() === 'ARRAY' ? p.array_values : p.type.toUpperCase() === 'STRUCT' ? p.struct_values : p.value;
    return { name: p.name ?? '', type, value: valueProto(type, raw) };
  });
  const req = {
    sql: c.query,
    options: {
      language_options: lang,
      default_timezone: 'UTC',
      query_parameters: params.map((p) => ({ name: p.name, type: p.type })),
    },
    simple_catalog: {
      name: 'catalog',
      table: top,
      catalog: [...byDataset.entries()].map(([name, ts]) => ({ name, table: ts })),
      builtin_function_options: { language_options: lang },
    },
    table_content: content,
    params: params.map((p) => ({ name: p.name, value: p.value })),
  };
  let expected: Record<string, unknown>;
  let summary: string;
  try {
    const res = await call<EvalResponse>('EvaluateQuery', req);
    const cols = res.prepared?.columns ?? [];
    const rows = (res.content?.table_data?.row ?? []).map((r) => {
      const o: Record<string, unknown> = {};
      cols.forEach((col, i) => { o[col.name] = wireOf(col.type, r.cell?.[i] ?? {}); });
      return o;
    });
    expected = {
      match: hasTopLevelOrderBy(c.query) ? 'ordered' : 'unordered',
      schema: cols.map((col, i) => restField(col.name || `f${i}_`, col.type)),
      rows,
    };
    summary = `${rows.length} row(s)`;
  } catch (e) {
    const msg = (e as { details?: string }).details ?? (e as Error).message;
    expected = { error: { reference_message: msg } };
    summary = `error: ${msg}`;
  }
  doc.set('expected', doc.createNode(expected));
  doc.set('recorded_with', `@fivetrandevelopers/zetasql ${version} (GoogleSQL reference implementation, default time zone UTC)`);
  writeFileSync(file, doc.toString({ lineWidth: 0 }));
  return summary;
}

async function main(): Promise<void> {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: node --import tsx conformance/record.ts <case.yaml>...');
    process.exit(2);
  }
  const { call, stop, version } = await connect();
  let failed = 0;
  try {
    const lang = await languageOptions(call);
    for (const f of files) {
      try {
        console.log(`${f}: ${await recordOne(path.resolve(f), call, lang, version)}`);
      } catch (e) {
        failed++;
        console.error(`${f}: ${(e as Error).message}`);
      }
    }
  } finally {
    stop();
  }
  process.exit(failed ? 1 : 0);
}

void main();
