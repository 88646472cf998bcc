// Load, copy and extract jobs, built from the engine's catalog and row RPCs
// only (GetTable/InsertTable/DeleteTable/InsertRows/ListRows), so they do not
// depend on the SQL engine. Load jobs are synchronous (spec §3.4).
import { gzipSync } from 'node:zlib';
import type { GatewayContext } from '../context.js';
import type { TableRef } from '../engine-client.js';
import { invalid, notImplemented, RestError, type ErrorInfo } from '../errors.js';
import { boolish, checkDatasetId, checkProjectId, checkTableId, isObj, num, str, type Json } from '../validate.js';
import { maybeGunzip, readSource, writeDestination, type SourceFile } from './objects.js';

export interface RestField {
  name: string;
  type: string;
  mode?: string;
  fields?: RestField[];
  [k: string]: unknown;
}

const INSERT_BATCH = 5_000;
const READ_PAGE = 50_000;

/** A table reference from a job configuration; sources may carry a `@epoch` snapshot decorator (restore of a deleted table). */
export function tableRef(v: unknown, projectId: string, what: string, allowDecorator = false): TableRef {
  if (!isObj(v)) throw invalid(`Required parameter is missing: ${what}`);
  const d = str(v['datasetId']);
  const t = str(v['tableId']);
  if (!d || !t) throw invalid(`${what} must name a dataset and a table`);
  const at = allowDecorator ? t.lastIndexOf('@') : -1;
  if (at > 0 && /^-?\d+$/.test(t.slice(at + 1))) checkTableId(t.slice(0, at));
  else checkTableId(t);
  return { project_id: checkProjectId(str(v['projectId']) || projectId), dataset_id: checkDatasetId(d), table_id: t };
}

export const refOut = (r: TableRef): Json => ({ projectId: r.project_id, datasetId: r.dataset_id, tableId: r.table_id });
const refText = (r: TableRef): string => `${r.project_id}:${r.dataset_id}.${r.table_id}`;

async function getTable(ctx: GatewayContext, r: TableRef): Promise<Json | undefined> {
  try {
    const reply = await ctx.call('GetTable', { project_id: r.project_id, dataset_id: r.dataset_id, table_id: r.table_id });
    return JSON.parse(reply.resource_json) as Json;
  } catch (e) {
    if (e instanceof RestError && e.code === 404 && /Table/.test(e.message)) return undefined;
    throw e;
  }
}

function fieldsOf(resource: Json | undefined): RestField[] | undefined {
  const s = resource?.['schema'];
  return isObj(s) && Array.isArray(s['fields']) ? (s['fields'] as RestField[]) : undefined;
}

const KEEP_ON_TRUNCATE = ['description', 'friendlyName', 'labels', 'timePartitioning', 'rangePartitioning', 'clustering', 'expirationTime'];

/**
 * Makes the destination ready per create/write disposition and returns its schema.
 * WRITE_TRUNCATE recreates the table (keeping its REST metadata) since the
 * contract has no truncate RPC.
 */
async function prepareDestination(
  ctx: GatewayContext,
  dest: TableRef,
  schema: RestField[] | undefined,
  createDisposition: string,
  writeDisposition: string,
  extra: Json = {},
): Promise<RestField[]> {
  const existing = await getTable(ctx, dest);
  const create = async (fields: RestField[], base: Json): Promise<void> => {
    const body: Json = { ...base, ...extra, tableReference: refOut(dest), schema: { fields } };
    await ctx.call('InsertTable', { project_id: dest.project_id, dataset_id: dest.dataset_id, table_id: dest.table_id, resource_json: JSON.stringify(body) });
  };
  if (!existing) {
    if (createDisposition === 'CREATE_NEVER') throw new RestError(404, 'notFound', `Not found: Table ${refText(dest)}`);
    if (!schema) throw invalid('No schema specified on job or table.');
    await create(schema, {});
    return schema;
  }
  const current = fieldsOf(existing) ?? [];
  if (writeDisposition === 'WRITE_EMPTY' && Number(existing['numRows'] ?? 0) > 0) {
    throw new RestError(409, 'duplicate', `Already Exists: Table ${refText(dest)}`);
  }
  if (writeDisposition === 'WRITE_TRUNCATE') {
    const base: Json = {};
    for (const k of KEEP_ON_TRUNCATE) if (existing[k] !== undefined) base[k] = existing[k];
    await ctx.call('DeleteTable', { project_id: dest.project_id, dataset_id: dest.dataset_id, table_id: dest.table_id });
    const fields = schema ?? current;
    await create(fields, base);
    return fields;
  }
  return current.length ? current : schema ?? [];
}

interface InsertOutcome {
  rows: number;
  errors: Json[];
}

async function insertAll(ctx: GatewayContext, dest: TableRef, rows: Json[], ignoreUnknown: boolean, skipInvalid: boolean): Promise<InsertOutcome> {
  const out: InsertOutcome = { rows: 0, errors: [] };
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    const batch = rows.slice(i, i + INSERT_BATCH);
    const reply = await ctx.call('InsertRows', {
      table: dest,
      rows_json: JSON.stringify(batch.map((json) => ({ json }))),
      skip_invalid_rows: skipInvalid,
      ignore_unknown_values: ignoreUnknown,
      template_suffix: '',
    });
    const errs = reply.insert_errors_json ? (JSON.parse(reply.insert_errors_json) as Json[]) : [];
    const bad = errs.filter((e) => Array.isArray(e['errors']) && (e['errors'] as Json[]).some((x) => x['reason'] !== 'stopped'));
    out.errors.push(...bad.map((e) => ({ ...e, index: Number(e['index'] ?? 0) + i })));
    out.rows += skipInvalid ? batch.length - bad.length : errs.length ? 0 : batch.length;
    if (errs.length && !skipInvalid) break;
  }
  return out;
}

// ---------- row decoding (f/v cells back to JSON rows) ----------

function decodeValue(f: RestField, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  const t = f.type.toUpperCase();
  if (t === 'RECORD' || t === 'STRUCT') {
    const cells = isObj(v) && Array.isArray(v['f']) ? (v['f'] as { v: unknown }[]) : [];
    const o: Json = {};
    (f.fields ?? []).forEach((sub, i) => {
      o[sub.name] = decodeCell(sub, cells[i]?.v);
    });
    return o;
  }
  return v;
}

function decodeCell(f: RestField, v: unknown): unknown {
  if ((f.mode ?? '').toUpperCase() === 'REPEATED') {
    return Array.isArray(v) ? v.map((c: { v: unknown }) => decodeValue(f, c?.v)) : [];
  }
  return decodeValue(f, v);
}

export function decodeRow(fields: RestField[], row: { f: { v: unknown }[] }): Json {
  const o: Json = {};
  fields.forEach((f, i) => {
    o[f.name] = decodeCell(f, row.f[i]?.v);
  });
  return o;
}

async function* readRows(ctx: GatewayContext, src: TableRef): AsyncGenerator<{ fields: RestField[]; rows: Json[] }> {
  let start = 0;
  for (;;) {
    const page = await ctx.call('ListRows', { table: src, start_index: start, max_results: READ_PAGE, selected_fields: '', timestamp_format: 'TIMESTAMP_RFC3339', string_scalars: false });
    const fields = (JSON.parse(page.schema_json || '{"fields":[]}') as { fields?: RestField[] }).fields ?? [];
    const rows = (JSON.parse(page.rows_json || '[]') as { f: { v: unknown }[] }[]).map((r) => decodeRow(fields, r));
    yield { fields, rows };
    if (page.next_index < 0 || page.next_index >= page.total_rows || rows.length === 0) return;
    start = page.next_index;
  }
}

// ---------- load ----------

/** RFC 4180-style CSV with a configurable delimiter and quote; `quoted` marks fields that were quoted. */
export function parseCsv(text: string, delimiter: string, quote: string): { value: string; quoted: boolean }[][] {
  const rows: { value: string; quoted: boolean }[][] = [];
  let row: { value: string; quoted: boolean }[] = [];
  let field = '';
  let quoted = false;
  let inQuotes = false;
  let i = 0;
  const n = text.length;
  const endField = (): void => {
    row.push({ value: field, quoted });
    field = '';
    quoted = false;
  };
  while (i < n) {
    const c = text[i]!;
    if (inQuotes) {
      if (quote && c === quote) {
        if (text[i + 1] === quote) {
          field += quote;
          i += 2;
          continue;
        }
        inQuotes = false;
        i++;
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (quote && c === quote && field === '') {
      inQuotes = true;
      quoted = true;
      i++;
      continue;
    }
    if (text.startsWith(delimiter, i)) {
      endField();
      i += delimiter.length;
      continue;
    }
    if (c === '\n' || c === '\r') {
      endField();
      rows.push(row);
      row = [];
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
      continue;
    }
    field += c;
    i++;
  }
  if (field !== '' || quoted || row.length) {
    endField();
    rows.push(row);
  }
  return rows;
}

function delimiterOf(v: unknown): string {
  const d = str(v);
  if (!d) return ',';
  if (d === '\\t' || d.toLowerCase() === 'tab') return '\t';
  return d;
}

function inferScalar(values: string[]): string {
  const vals = values.filter((v) => v !== '');
  if (!vals.length) return 'STRING';
  if (vals.every((v) => /^[+-]?\d{1,18}$/.test(v))) return 'INTEGER';
  if (vals.every((v) => /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v))) return 'FLOAT';
  if (vals.every((v) => /^(true|false)$/i.test(v))) return 'BOOLEAN';
  if (vals.every((v) => /^\d{4}-\d{2}-\d{2}$/.test(v))) return 'DATE';
  if (vals.every((v) => /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(v))) return 'DATETIME';
  if (vals.every((v) => /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?\s*(Z|UTC|[+-]\d{2}:?\d{2})$/i.test(v))) return 'TIMESTAMP';
  if (vals.every((v) => /^\d{2}:\d{2}:\d{2}(\.\d+)?$/.test(v))) return 'TIME';
  return 'STRING';
}

function csvRows(files: SourceFile[], cfg: Json, schema: RestField[] | undefined, autodetect: boolean): { fields: RestField[]; rows: Json[] } {
  const delimiter = delimiterOf(cfg['fieldDelimiter']);
  const quote = cfg['quote'] === undefined || cfg['quote'] === null ? '"' : String(cfg['quote']);
  const skip = num(cfg['skipLeadingRows']);
  const nullMarkers = new Set<string>([...(str(cfg['nullMarker']) !== undefined ? [str(cfg['nullMarker'])!] : []), ...(Array.isArray(cfg['nullMarkers']) ? (cfg['nullMarkers'] as string[]) : [])]);
  let fields = schema;
  const rows: Json[] = [];
  for (const file of files) {
    let records = parseCsv(maybeGunzip(file.data).toString('utf8'), delimiter, quote).filter((r) => !(r.length === 1 && r[0]!.value === '' && !r[0]!.quoted));
    let header: string[] | undefined;
    if (!fields && autodetect) {
      // Header detection: skipLeadingRows=1 or a first row of non-numeric names over typed data.
      const first = records[0]?.map((c) => c.value) ?? [];
      const looksLikeHeader = skip === 1 || (skip === undefined && records.length > 1 && first.every((v) => /^[A-Za-z_][\w ]*$/.test(v)) && records.slice(1, 50).some((r) => r.some((c) => inferScalar([c.value]) !== 'STRING')));
      if (looksLikeHeader) header = first.map((h) => h.trim().replace(/\W/g, '_'));
      const body = looksLikeHeader ? records.slice(1) : records;
      const width = Math.max(...body.slice(0, 500).map((r) => r.length), header?.length ?? 0);
      fields = Array.from({ length: width }, (_v, i) => ({
        name: header?.[i] || `string_field_${i}`,
        type: inferScalar(body.slice(0, 500).map((r) => r[i]?.value ?? '')),
        mode: 'NULLABLE',
      }));
      if (!header) fields = fields.map((f, i) => ({ ...f, name: `${f.type === 'STRING' ? 'string' : f.type.toLowerCase()}_field_${i}` }));
      records = body;
    } else if (skip) {
      records = records.slice(skip);
    }
    if (!fields) throw invalid('No schema specified on job or table.');
    for (const r of records) {
      const o: Json = {};
      fields.forEach((f, i) => {
        const cell = r[i];
        if (!cell || (!cell.quoted && cell.value === '') || nullMarkers.has(cell.value)) o[f.name] = null;
        else o[f.name] = cell.value;
      });
      rows.push(o);
    }
  }
  return { fields: fields ?? [], rows };
}

function inferJsonField(name: string, values: unknown[]): RestField {
  const vals = values.filter((v) => v !== null && v !== undefined);
  const repeated = vals.length > 0 && vals.every(Array.isArray);
  const flat = repeated ? vals.flatMap((v) => v as unknown[]) : vals;
  let f: RestField;
  if (flat.length && flat.every(isObj)) {
    const keys = [...new Set(flat.flatMap((o) => Object.keys(o as Json)))];
    f = { name, type: 'RECORD', fields: keys.map((k) => inferJsonField(k, flat.map((o) => (o as Json)[k]))) };
  } else if (flat.length && flat.every((v) => typeof v === 'boolean')) f = { name, type: 'BOOLEAN' };
  else if (flat.length && flat.every((v) => typeof v === 'number' && Number.isInteger(v))) f = { name, type: 'INTEGER' };
  else if (flat.length && flat.every((v) => typeof v === 'number')) f = { name, type: 'FLOAT' };
  else f = { name, type: flat.length && flat.every((v) => typeof v === 'string') ? inferScalar(flat as string[]) : 'STRING' };
  f.mode = repeated ? 'REPEATED' : 'NULLABLE';
  return f;
}

function jsonRows(files: SourceFile[], schema: RestField[] | undefined, autodetect: boolean): { fields: RestField[]; rows: Json[] } {
  const rows: Json[] = [];
  for (const file of files) {
    const lines = maybeGunzip(file.data).toString('utf8').split(/\r?\n/);
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch (e) {
        throw invalid(`Error while reading data, error message: JSON parsing error in row starting at position ${i}: ${(e as Error).message} File: ${file.uri}`);
      }
      if (!isObj(v)) throw invalid(`Error while reading data, error message: JSON table encountered a non-object row ${i + 1} in ${file.uri}`);
      rows.push(v);
    });
  }
  let fields = schema;
  if (!fields && autodetect) {
    const keys = [...new Set(rows.slice(0, 1000).flatMap((r) => Object.keys(r)))];
    fields = keys.map((k) => inferJsonField(k, rows.slice(0, 1000).map((r) => r[k])));
  }
  if (!fields) throw invalid('No schema specified on job or table.');
  return { fields, rows };
}

/** Parquet values as insertAll JSON: int64 as strings, timestamps as ISO, bytes as base64. */
function parquetValue(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(parquetValue);
  if (typeof v === 'object') {
    const o: Json = {};
    for (const [k, x] of Object.entries(v as Json)) o[k] = parquetValue(x);
    return o;
  }
  return v;
}

/** Parquet is self-describing: without a schema the columns are inferred from the decoded values. */
async function parquetRows(files: SourceFile[], schema: RestField[] | undefined): Promise<{ fields: RestField[]; rows: Json[] }> {
  const { parquetReadObjects } = await import('hyparquet');
  const rows: Json[] = [];
  for (const f of files) {
    const ab = f.data.buffer.slice(f.data.byteOffset, f.data.byteOffset + f.data.byteLength) as ArrayBuffer;
    let objs: Record<string, unknown>[];
    try {
      objs = await parquetReadObjects({ file: ab });
    } catch (e) {
      throw invalid(`Error while reading data, error message: not a readable Parquet file (${(e as Error).message}) File: ${f.uri}`);
    }
    for (const o of objs) rows.push(parquetValue(o) as Json);
  }
  if (schema) return { fields: schema, rows };
  const keys = [...new Set(rows.slice(0, 1000).flatMap((r) => Object.keys(r)))];
  return { fields: keys.map((k) => inferJsonField(k, rows.slice(0, 1000).map((r) => r[k]))), rows };
}

function loadError(e: unknown): ErrorInfo {
  if (e instanceof RestError) return e.toInfo();
  return { code: 500, status: 'internal', reason: 'internalError', message: String(e) };
}

export interface DataJobResult {
  error?: ErrorInfo;
  errors?: Json[];
  statistics: Json;
}

/** Runs a load configuration over uploaded bytes or its sourceUris. */
async function parseSources(files: SourceFile[], format: string, cfg: Json, schema: RestField[] | undefined, autodetect: boolean): Promise<{ fields: RestField[]; rows: Json[] }> {
  if (format === 'CSV') return csvRows(files, isObj(cfg['csvOptions']) ? { ...cfg, ...cfg['csvOptions'] } : cfg, schema, autodetect);
  if (format === 'PARQUET') return parquetRows(files, schema);
  return jsonRows(files, schema, autodetect);
}

/**
 * Table insert with externalDataConfiguration (spec §4.3.2): object-store and
 * local sources in CSV / NEWLINE_DELIMITED_JSON / PARQUET are read now and
 * their rows stored in the (already created) table. Returns the inferred
 * schema when the definition had none.
 */
export async function materializeExternal(ctx: GatewayContext, dest: TableRef, ext: Json, schema: RestField[] | undefined): Promise<RestField[] | undefined> {
  const format = (str(ext['sourceFormat']) ?? 'CSV').toUpperCase();
  if (!['CSV', 'NEWLINE_DELIMITED_JSON', 'JSON', 'PARQUET'].includes(format)) return undefined;
  const uris = Array.isArray(ext['sourceUris']) ? (ext['sourceUris'] as unknown[]).filter((u): u is string => typeof u === 'string') : [];
  if (!uris.length) return undefined;
  const files = (await Promise.all(uris.map(readSource))).flat();
  const autodetect = boolish(ext['autodetect']) ?? schema === undefined;
  const parsed = await parseSources(files, format, ext, schema, autodetect);
  const outcome = await insertAll(ctx, dest, parsed.rows, boolish(ext['ignoreUnknownValues']) ?? false, (num(ext['maxBadRecords']) ?? 0) > 0);
  if (outcome.errors.length && (num(ext['maxBadRecords']) ?? 0) === 0) {
    throw invalid(`Error while reading data, error message: ${String((outcome.errors[0]?.['errors'] as Json[] | undefined)?.[0]?.['message'] ?? 'invalid row')}`);
  }
  return schema ? undefined : parsed.fields;
}

/** Source URIs an external table can never read offline (spec §4.3.2): 400 with an explicit message. */
export function rejectUnsupportedExternal(ext: Json): void {
  const format = (str(ext['sourceFormat']) ?? '').toUpperCase();
  const uris = Array.isArray(ext['sourceUris']) ? (ext['sourceUris'] as unknown[]).filter((u): u is string => typeof u === 'string') : [];
  for (const u of uris) {
    if (/^azure:\/\//i.test(u) || /\.blob\.core\.windows\.net/i.test(u)) {
      throw invalid(`Unsupported external data source ${u}: Azure Blob Storage sources are not supported by the emulator`);
    }
    if (/^https:\/\/drive\.google\.com\//i.test(u) && format !== 'GOOGLE_SHEETS' && format !== 'SHEETS') {
      throw invalid(`Unsupported external data source ${u}: only spreadsheet sources are supported for drive URIs`);
    }
  }
}

/**
 * Query-time external tables (spec §1.6.4): each `tableDefinitions` entry is
 * materialized as a table of the internal dataset `_bq_external_temp`, which
 * becomes the default dataset when the request names none.
 */
export async function materializeTableDefinitions(ctx: GatewayContext, projectId: string, defs: Json): Promise<void> {
  const ds = '_bq_external_temp';
  try {
    await ctx.call('InsertDataset', { project_id: projectId, dataset_id: ds, resource_json: JSON.stringify({ datasetReference: { projectId, datasetId: ds } }) });
  } catch (e) {
    if (!(e instanceof RestError && e.code === 409)) throw e;
  }
  for (const [name, def] of Object.entries(defs)) {
    if (!isObj(def)) continue;
    checkTableId(name);
    const ref: TableRef = { project_id: projectId, dataset_id: ds, table_id: name };
    rejectUnsupportedExternal(def);
    try {
      await ctx.call('DeleteTable', { project_id: projectId, dataset_id: ds, table_id: name });
    } catch (e) {
      if (!(e instanceof RestError && e.code === 404)) throw e;
    }
    const schema = isObj(def['schema']) && Array.isArray(def['schema']['fields']) ? (def['schema']['fields'] as RestField[]) : undefined;
    const format = (str(def['sourceFormat']) ?? 'CSV').toUpperCase();
    const uris = Array.isArray(def['sourceUris']) ? (def['sourceUris'] as unknown[]).filter((u): u is string => typeof u === 'string') : [];
    // Parse first (schema may be inferred), then create a plain table and fill it.
    const files = ['CSV', 'NEWLINE_DELIMITED_JSON', 'JSON', 'PARQUET'].includes(format) && uris.length ? (await Promise.all(uris.map(readSource))).flat() : [];
    const parsed = files.length ? await parseSources(files, format, def, schema, boolish(def['autodetect']) ?? schema === undefined) : { fields: schema ?? [], rows: [] };
    await ctx.call('InsertTable', {
      project_id: projectId,
      dataset_id: ds,
      table_id: name,
      resource_json: JSON.stringify({ tableReference: refOut(ref), schema: { fields: parsed.fields } }),
    });
    if (parsed.rows.length) {
      const outcome = await insertAll(ctx, ref, parsed.rows, boolish(def['ignoreUnknownValues']) ?? false, false);
      if (outcome.errors.length) throw invalid(`Error while reading table: ${name}, error message: ${String((outcome.errors[0]?.['errors'] as Json[] | undefined)?.[0]?.['message'] ?? 'invalid row')}`);
    }
  }
}

export async function runLoad(ctx: GatewayContext, projectId: string, cfg: Json, uploaded: Buffer | undefined): Promise<DataJobResult> {
  try {
    const dest = tableRef(cfg['destinationTable'], projectId, 'destinationTable');
    const format = (str(cfg['sourceFormat']) ?? 'CSV').toUpperCase();
    if (!['CSV', 'NEWLINE_DELIMITED_JSON', 'JSON', 'PARQUET'].includes(format)) {
      throw notImplemented(`Load source format ${format} is not implemented by the emulator yet (CSV, NEWLINE_DELIMITED_JSON and PARQUET are)`);
    }
    let files: SourceFile[];
    if (uploaded) files = [{ uri: 'upload', data: uploaded }];
    else {
      const uris = Array.isArray(cfg['sourceUris']) ? (cfg['sourceUris'] as unknown[]).filter((u): u is string => typeof u === 'string') : [];
      if (!uris.length) throw invalid('Required parameter is missing: sourceUris');
      files = (await Promise.all(uris.map(readSource))).flat();
    }
    const jobSchema = isObj(cfg['schema']) && Array.isArray(cfg['schema']['fields']) ? (cfg['schema']['fields'] as RestField[]) : undefined;
    const autodetect = boolish(cfg['autodetect']) ?? false;
    const existing = jobSchema ? undefined : fieldsOf(await getTable(ctx, dest));
    const write = str(cfg['writeDisposition']) ?? 'WRITE_APPEND';
    const knownSchema = jobSchema ?? (write === 'WRITE_TRUNCATE' && autodetect ? undefined : existing);
    const parsed = await parseSources(files, format, cfg, knownSchema, autodetect);
    await prepareDestination(ctx, dest, parsed.fields, str(cfg['createDisposition']) ?? 'CREATE_IF_NEEDED', write);
    const maxBad = num(cfg['maxBadRecords']) ?? 0;
    const outcome = await insertAll(ctx, dest, parsed.rows, boolish(cfg['ignoreUnknownValues']) ?? false, maxBad > 0);
    const bytes = files.reduce((s, f) => s + f.data.length, 0);
    const statistics: Json = {
      load: { inputFiles: String(files.length), inputFileBytes: String(bytes), outputRows: String(outcome.rows), outputBytes: '0', badRecords: String(outcome.errors.length) },
    };
    if (outcome.errors.length > maxBad || (outcome.errors.length && maxBad === 0)) {
      const first = (outcome.errors[0]?.['errors'] as Json[] | undefined)?.[0];
      const errors = outcome.errors.slice(0, 10).map((e) => ({
        reason: 'invalid',
        location: `row ${String(e['index'])}`,
        message: `Error while reading data, error message: ${String((e['errors'] as Json[] | undefined)?.[0]?.['message'] ?? 'invalid row')}`,
      }));
      return {
        error: { code: 400, status: 'invalid', reason: 'invalid', message: `Error while reading data, error message: ${String(first?.['message'] ?? 'invalid row')}` },
        errors,
        statistics,
      };
    }
    return { statistics };
  } catch (e) {
    return { error: loadError(e), statistics: {} };
  }
}

/** Copy: rows of every source appended (or truncated into) the destination; SNAPSHOT/CLONE/RESTORE stamp the type. */
export async function runCopy(ctx: GatewayContext, projectId: string, cfg: Json): Promise<DataJobResult> {
  try {
    const sources = Array.isArray(cfg['sourceTables']) && cfg['sourceTables'].length
      ? (cfg['sourceTables'] as unknown[]).map((s) => tableRef(s, projectId, 'sourceTables', true))
      : [tableRef(cfg['sourceTable'], projectId, 'sourceTable', true)];
    const dest = tableRef(cfg['destinationTable'], projectId, 'destinationTable');
    const op = (str(cfg['operationType']) ?? 'COPY').toUpperCase();
    const first = await getTable(ctx, sources[0]!);
    if (!first) throw new RestError(404, 'notFound', `Not found: Table ${refText(sources[0]!)}`);
    const extra: Json = {};
    if (op === 'SNAPSHOT') {
      extra['type'] = 'SNAPSHOT';
      extra['snapshotDefinition'] = { baseTableReference: refOut(sources[0]!), snapshotTime: new Date().toISOString() };
      if (cfg['destinationExpirationTime'] !== undefined) extra['expirationTime'] = String(Date.parse(String(cfg['destinationExpirationTime'])) || cfg['destinationExpirationTime']);
    } else if (op === 'CLONE') {
      extra['cloneDefinition'] = { baseTableReference: refOut(sources[0]!), cloneTime: new Date().toISOString() };
    }
    const write = str(cfg['writeDisposition']) ?? 'WRITE_EMPTY';
    // Restoring `t@epoch` into `t` itself: once `t` exists again the decorator
    // reads the live (new, empty) table, so such sources are read up front.
    const base = (r: TableRef): string => `${r.project_id}:${r.dataset_id}.${r.table_id.split('@')[0]}`;
    const buffered = new Map<TableRef, Json[][]>();
    for (const src of sources) {
      if (base(src) !== base(dest)) continue;
      const pages: Json[][] = [];
      for await (const page of readRows(ctx, src)) pages.push(page.rows);
      buffered.set(src, pages);
    }
    await prepareDestination(ctx, dest, fieldsOf(first), str(cfg['createDisposition']) ?? 'CREATE_IF_NEEDED', write, extra);
    let copied = 0;
    async function* pagesOf(src: TableRef): AsyncGenerator<{ rows: Json[] }> {
      const pre = buffered.get(src);
      if (pre) for (const rows of pre) yield { rows };
      else yield* readRows(ctx, src);
    }
    for (const src of sources) {
      for await (const page of pagesOf(src)) {
        if (!page.rows.length) continue;
        const outcome = await insertAll(ctx, dest, page.rows, true, false);
        if (outcome.errors.length) {
          throw invalid(`Copy failed: ${String((outcome.errors[0]?.['errors'] as Json[] | undefined)?.[0]?.['message'] ?? 'incompatible rows')}`);
        }
        copied += outcome.rows;
      }
    }
    return { statistics: { copy: { copiedRows: String(copied), copiedLogicalBytes: '0' } } };
  } catch (e) {
    return { error: loadError(e), statistics: {} };
  }
}

function csvCell(v: unknown, delimiter: string): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return s.includes(delimiter) || s.includes('"') || s.includes('\n') || s.includes('\r') ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The real service writes TIMESTAMP as `2024-01-01 00:00:00 UTC` in CSV/JSON exports. */
function exportValue(f: RestField, v: unknown): unknown {
  if (v === null || v === undefined) return v;
  const t = f.type.toUpperCase();
  if ((f.mode ?? '').toUpperCase() === 'REPEATED' && Array.isArray(v)) return v.map((x) => exportValue({ ...f, mode: 'NULLABLE' }, x));
  if (t === 'TIMESTAMP' && typeof v === 'string') return v.replace('T', ' ').replace(/Z$/, ' UTC');
  if ((t === 'RECORD' || t === 'STRUCT') && isObj(v)) {
    const o: Json = {};
    for (const sub of f.fields ?? []) o[sub.name] = exportValue(sub, v[sub.name]);
    return o;
  }
  if (t === 'INTEGER' || t === 'INT64') return typeof v === 'string' && /^-?\d+$/.test(v) && Math.abs(Number(v)) <= Number.MAX_SAFE_INTEGER ? Number(v) : v;
  return v;
}

/** Extract: the table as CSV or NEWLINE_DELIMITED_JSON (optionally GZIP) to each destination URI. */
export async function runExtract(ctx: GatewayContext, projectId: string, cfg: Json): Promise<DataJobResult> {
  try {
    const src = tableRef(cfg['sourceTable'], projectId, 'sourceTable');
    const uris = Array.isArray(cfg['destinationUris']) ? (cfg['destinationUris'] as string[]) : str(cfg['destinationUri']) ? [str(cfg['destinationUri'])!] : [];
    if (!uris.length) throw invalid('Required parameter is missing: destinationUris');
    const format = (str(cfg['destinationFormat']) ?? 'CSV').toUpperCase();
    if (format !== 'CSV' && format !== 'NEWLINE_DELIMITED_JSON') throw notImplemented(`Extract format ${format} is not implemented by the emulator yet`);
    const delimiter = delimiterOf(cfg['fieldDelimiter']);
    const header = boolish(cfg['printHeader']) ?? true;
    const table = await getTable(ctx, src);
    if (!table) throw new RestError(404, 'notFound', `Not found: Table ${refText(src)}`);
    const lines: string[] = [];
    let fields = fieldsOf(table) ?? [];
    if (format === 'CSV' && header) lines.push(fields.map((f) => csvCell(f.name, delimiter)).join(delimiter));
    for await (const page of readRows(ctx, src)) {
      fields = page.fields.length ? page.fields : fields;
      for (const row of page.rows) {
        const out = fields.map((f) => exportValue(f, row[f.name]));
        if (format === 'CSV') lines.push(out.map((v) => csvCell(v, delimiter)).join(delimiter));
        else {
          const o: Json = {};
          fields.forEach((f, i) => {
            if (out[i] !== null && out[i] !== undefined) o[f.name] = out[i];
          });
          lines.push(JSON.stringify(o));
        }
      }
    }
    let data = Buffer.from(lines.join('\n') + (lines.length ? '\n' : ''));
    if ((str(cfg['compression']) ?? '').toUpperCase() === 'GZIP') data = gzipSync(data);
    for (const uri of uris) await writeDestination(uri.replace('*', '000000000000'), data);
    return { statistics: { extract: { destinationUriFileCounts: uris.map(() => '1'), inputBytes: '0' } } };
  } catch (e) {
    return { error: loadError(e), statistics: {} };
  }
}
