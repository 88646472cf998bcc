// Load, copy and extract jobs, built from the engine's catalog and row RPCs
// only (GetTable/InsertTable/DeleteTable/InsertRows/ListRows), so they do not
// depend on the SQL engine. Load jobs are synchronous (spec §3.4): the insert
// answers once the job is DONE; meanwhile jobs.get shows it RUNNING with its
// statistics growing (ProgressSink).
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import type { GatewayContext } from '../context.js';
import type { TableRef } from '../engine-client.js';
import { invalid, notImplemented, RestError, type ErrorInfo } from '../errors.js';
import { boolish, checkDatasetId, checkProjectId, checkTableId, isObj, num, schemaFieldsIn, str, type Json } from '../validate.js';
import { IoError } from '../../io/errors.js';
import { delimiterOf } from '../../io/schema.js';
import { checkLoadable, checkReadable, encodeExport, normalizeFormat, parseSources, SELF_DESCRIBED_FORMATS } from '../../io/formats.js';
import { localFiles, localPath, missingEndpoint, readSources, writeDestination, type SourceFile } from '../../io/objects.js';
import { checkLocalPath } from '../../io/local-access.js';
import { bufferSource, fileSource, streamRows, type ByteSource, type ReadProgress } from '../../io/stream.js';
import { decodeRow } from '../../io/rows.js';
import { datesChecked, loadSchema, type LoadFile } from '../../io/load-files.js';
import { checkHiveOverlap, customPrefix, fileRowsOf, hiveLayout, parseEachFile, type HiveLayout } from '../../io/hive.js';
import type { ReadOptions } from '../../io/schema.js';
import { copyPartitions, hasPartitionDecorator } from './partition-copy.js';
import { checkCopyRules, specOfSource } from './copy-rules.js';
import { rowsText } from '../rows-body.js';

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
  // A partition decorator (`t$20240102`, copy jobs: partition-copy.ts) is checked on the table's name.
  const base = t.includes('$') ? t.slice(0, t.indexOf('$')) : t;
  const at = allowDecorator ? base.lastIndexOf('@') : -1;
  if (at > 0 && /^-?\d+$/.test(base.slice(at + 1))) checkTableId(base.slice(0, at));
  else checkTableId(base);
  return { project_id: checkProjectId(str(v['projectId']) || projectId), dataset_id: checkDatasetId(d), table_id: t };
}

export const refOut = (r: TableRef): Json => ({ projectId: r.project_id, datasetId: r.dataset_id, tableId: r.table_id });
export const refText = (r: TableRef): string => `${r.project_id}:${r.dataset_id}.${r.table_id}`;

async function getTable(ctx: GatewayContext, r: TableRef): Promise<Json | undefined> {
  try {
    // A partition's table (`t$20240101`): the table's resource.
    const reply = await ctx.call('GetTable', { project_id: r.project_id, dataset_id: r.dataset_id, table_id: r.table_id.replace(/\$.*$/, '') });
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

/**
 * Starts the job's write into `dest` (the engine's staged table writes): what
 * it stages is seen by nobody until commitWrite applies all of it as one, as
 * the service's jobs are all-or-nothing. Checks the dispositions against the
 * table now (the engine checks WRITE_EMPTY again at the commit) and returns
 * the schema the rows take.
 */
async function beginWrite(
  ctx: GatewayContext,
  dest: TableRef,
  schema: RestField[] | undefined,
  createDisposition: string,
  writeDisposition: string,
  extra: Json = {},
  updateOptions?: readonly string[],
  loadFormat?: string,
): Promise<{ id: string; fields: RestField[] }> {
  const existing = await getTable(ctx, dest);
  let fields: RestField[];
  if (!existing) {
    if (createDisposition === 'CREATE_NEVER') throw new RestError(404, 'notFound', `Not found: Table ${refText(dest)}`);
    if (!schema) throw invalid('No schema specified on job or table.');
    fields = schema;
  } else {
    const current = fieldsOf(existing) ?? [];
    // Into a partition (`t$20240101`) the engine checks that partition at the commit.
    if (writeDisposition === 'WRITE_EMPTY' && !dest.table_id.includes('$') && Number(existing['numRows'] ?? 0) > 0) {
      throw new RestError(409, 'duplicate', `Already Exists: Table ${refText(dest)}`);
    }
    if (updateOptions && schema && writeDisposition !== 'WRITE_TRUNCATE') fields = await evolveSchema(ctx, dest, current, schema, updateOptions);
    else if (writeDisposition === 'WRITE_TRUNCATE') fields = schema ?? current;
    else fields = current.length ? current : (schema ?? []);
  }
  const body: Json = { ...extra, tableReference: refOut(dest), schema: { fields } };
  // A load tells the engine the columns its data has: the table's defaulted others take their defaults (default-values.md, Load data).
  const load = loadFormat && schema ? { loaded_columns_json: JSON.stringify(schema.map((f) => f.name)), self_described: SELF_DESCRIBED_FORMATS.has(loadFormat) } : {};
  const r = await ctx.call('BeginTableWrite', { table: dest, write_disposition: writeDisposition, create_disposition: createDisposition, resource_json: JSON.stringify(body), ...load });
  return { id: r.write_id, fields };
}

/** Applies a write's staged rows (one commit); returns how many. */
async function commitWrite(ctx: GatewayContext, id: string): Promise<number> {
  return Number((await ctx.call('CommitTableWrite', { write_id: id })).rows);
}

/** Drops a write's staged rows (a failed job leaves the table as it was). */
async function abortWrite(ctx: GatewayContext, id: string | undefined): Promise<void> {
  if (id) await ctx.call('AbortTableWrite', { write_id: id }).catch(() => undefined);
}

/** Stages rows into a write, INSERT_BATCH at a time, as insertAll reports them; stops at the first rejected batch unless `skipInvalid`. */
async function stageRows(ctx: GatewayContext, writeId: string, rows: Json[], skipInvalid: boolean, fields?: readonly RestField[]): Promise<InsertOutcome> {
  const out: InsertOutcome = { rows: 0, errors: [] };
  // A load's TIMESTAMP cells need a time part (loading-data-cloud-storage-csv.md / -json.md); insertAll's rows do not.
  const timestamps = (fields ?? []).filter((f) => String(f.type).toUpperCase() === 'TIMESTAMP' && f.mode !== 'REPEATED').map((f) => f.name);
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    const batch = rows.slice(i, i + INSERT_BATCH).map((r) => datesChecked(r, timestamps) as Json);
    const reply = await ctx.call('AppendTableWrite', { write_id: writeId, rows_json: JSON.stringify(batch.map((json) => ({ json }))), skip_invalid_rows: skipInvalid });
    addOutcome(out, reply.insert_errors_json, batch.length, i, skipInvalid);
    if (out.errors.length && !skipInvalid) break;
  }
  return out;
}

/**
 * Adds one batch's insertAll-style errors (rows at `offset`) to `out`; 'stopped' rows are no errors of their own.
 * Without `skipInvalid` a batch with errors stores none of its `n` rows.
 */
function addOutcome(out: InsertOutcome, errorsJson: string, n: number, offset: number, skipInvalid: boolean): void {
  const errs = errorsJson ? (JSON.parse(errorsJson) as Json[]) : [];
  const bad = errs.filter((e) => Array.isArray(e['errors']) && (e['errors'] as Json[]).some((x) => x['reason'] !== 'stopped'));
  out.errors.push(...bad.map((e) => ({ ...e, index: Number(e['index'] ?? 0) + offset })));
  out.rows += skipInvalid ? n - bad.length : errs.length ? 0 : n;
}

/**
 * A load job's schema against the existing table it appends to (schemaUpdateOptions):
 * new columns need ALLOW_FIELD_ADDITION, REQUIRED -> NULLABLE needs
 * ALLOW_FIELD_RELAXATION, with the real service's messages otherwise. The
 * table's schema is patched (the engine checks the evolution rules) and returned.
 */
async function evolveSchema(ctx: GatewayContext, dest: TableRef, current: RestField[], schema: RestField[], options: readonly string[]): Promise<RestField[]> {
  const byName = new Map(schema.map((f) => [f.name.toLowerCase(), f]));
  const known = new Set(current.map((f) => f.name.toLowerCase()));
  const added = schema.filter((f) => !known.has(f.name.toLowerCase()));
  // A REQUIRED field the job's schema leaves out is relaxed too (its rows get NULL).
  const relaxed = current.filter((f) => f.mode === 'REQUIRED' && (byName.get(f.name.toLowerCase())?.mode ?? 'NULLABLE') !== 'REQUIRED');
  const prefix = `Provided Schema does not match Table ${refText(dest)}.`;
  if (added.length && !options.includes('ALLOW_FIELD_ADDITION')) throw invalid(`${prefix} Cannot add fields (field: ${added[0]!.name})`);
  if (relaxed.length && !options.includes('ALLOW_FIELD_RELAXATION')) {
    const f = relaxed[0]!;
    throw invalid(`${prefix} Field ${f.name} ${byName.has(f.name.toLowerCase()) ? 'has changed mode from REQUIRED to NULLABLE' : 'is missing in new schema'}`);
  }
  if (!added.length && !relaxed.length) return current;
  // A load writes its schema with every mode spelled out (as parse() makes it): the added columns too.
  const fields = [...current.map((f) => (relaxed.includes(f) ? { ...f, mode: 'NULLABLE' } : f)), ...added.map((f) => ({ ...f, mode: f.mode ?? 'NULLABLE' }))];
  await ctx.call('UpdateTable', { project_id: dest.project_id, dataset_id: dest.dataset_id, table_id: dest.table_id, resource_json: JSON.stringify({ schema: { fields } }), options: { patch: 'true' } });
  return fields;
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
    addOutcome(out, reply.insert_errors_json, batch.length, i, skipInvalid);
    if (out.errors.length && !skipInvalid) break;
  }
  return out;
}

async function* readRows(ctx: GatewayContext, src: TableRef): AsyncGenerator<{ fields: RestField[]; rows: Json[]; totalRows: number }> {
  let start = 0;
  for (;;) {
    const page = await ctx.call('ListRows', { table: src, start_index: start, max_results: READ_PAGE, selected_fields: '', timestamp_format: 'TIMESTAMP_RFC3339', string_scalars: false, want_rows_utf8: true, settled: true });
    const fields = (JSON.parse(page.schema_json || '{"fields":[]}') as { fields?: RestField[] }).fields ?? [];
    const rows = (JSON.parse(rowsText(page)) as { f: { v: unknown }[] }[]).map((r) => decodeRow(fields, r));
    yield { fields, rows, totalRows: Number(page.total_rows) };
    if (page.next_index < 0 || page.next_index >= page.total_rows || rows.length === 0) return;
    start = page.next_index;
  }
}

/**
 * The table an extract reads: a table with row access policies is read through a query, which the policies filter
 * (using-row-level-security-with-features.md, Extract jobs: only the rows the user can view are exported); its
 * rows are then paged from the query's anonymous result table. Others are read directly.
 */
async function visibleRowsOf(ctx: GatewayContext, src: TableRef): Promise<TableRef> {
  if (src.table_id.includes('$') || src.table_id.includes('@')) return src;
  const policies = await ctx.call('ListChildren', { project_id: src.project_id, dataset_id: src.dataset_id, table_id: src.table_id, kind: 'rowAccessPolicies', max_results: 1 });
  if (!policies.items_json.length) return src;
  const reply = await ctx.call('ExecuteQuery', {
    project_id: src.project_id, job_id: `extract_${randomUUID().replace(/-/g, '_')}`, query: `SELECT * FROM \`${src.project_id}.${src.dataset_id}.${src.table_id}\``,
    dry_run: false, write_disposition: '', create_disposition: '', table_definitions_json: '', jobs_snapshot_json: '', location: '', session_id: '',
    max_results: 0, timestamp_format: 'TIMESTAMP_RFC3339', string_scalars: false,
  });
  if (!reply.result_table) throw new RestError(500, 'internalError', `The rows of ${refText(src)} visible to the user were not kept`);
  return reply.result_table;
}

// ---------- load ----------

/** The reader options of a load configuration (CSV ones may sit in `csvOptions`). */
export function readOptionsOf(cfg: Json): ReadOptions {
  const c = isObj(cfg['csvOptions']) ? { ...cfg, ...cfg['csvOptions'] } : cfg;
  // Job.md, nullMarkers: nullMarker and nullMarkers can't both be set.
  if (str(c['nullMarker']) !== undefined && Array.isArray(c['nullMarkers'])) throw invalid('Only one of nullMarker and nullMarkers can be set');
  const markers = [...(str(c['nullMarker']) !== undefined ? [str(c['nullMarker'])!] : []), ...(Array.isArray(c['nullMarkers']) ? (c['nullMarkers'] as unknown[]).map(String) : [])];
  const avro = isObj(cfg['avroOptions']) ? cfg['avroOptions'] : {};
  const parquet = isObj(cfg['parquetOptions']) ? cfg['parquetOptions'] : {};
  const skip = num(c['skipLeadingRows']);
  return {
    fieldDelimiter: delimiterOf(c['fieldDelimiter']),
    quote: c['quote'] === undefined || c['quote'] === null ? '"' : String(c['quote']),
    ...(skip !== undefined ? { skipLeadingRows: skip } : {}),
    nullMarkers: markers,
    ignoreUnknownValues: boolish(cfg['ignoreUnknownValues']) ?? false,
    allowJaggedRows: boolish(c['allowJaggedRows']) ?? false,
    preserveAsciiControlCharacters: boolish(c['preserveAsciiControlCharacters']) ?? false,
    useAvroLogicalTypes: boolish(cfg['useAvroLogicalTypes']) ?? boolish(avro['useAvroLogicalTypes']) ?? false,
    // bq sends this one in the proto's snake_case spelling, which the real API accepts too
    parquetListInference: boolish(parquet['enableListInference'] ?? parquet['enable_list_inference']) ?? false,
    ...(Array.isArray(cfg['projectionFields']) ? { projectionFields: (cfg['projectionFields'] as unknown[]).map(String) } : {}),
  };
}

/** The shared codecs raise IoError; the REST envelope keeps its code, reason and message. */
function rest(e: unknown): unknown {
  return e instanceof IoError ? new RestError(e.code, e.reason, e.message) : e;
}

async function readAll(uris: readonly string[]): Promise<SourceFile[]> {
  return readSources(uris).catch((e: unknown) => {
    throw rest(e);
  });
}

async function parse(files: SourceFile[], format: string, cfg: Json, schema: RestField[] | undefined, autodetect: boolean): Promise<{ fields: RestField[]; rows: Json[] }> {
  return parseSources(files, format, readOptionsOf(cfg), schema, autodetect).catch((e: unknown) => {
    throw rest(e);
  });
}

function loadError(e: unknown): ErrorInfo {
  if (e instanceof IoError) return new RestError(e.code, e.reason, e.message).toInfo();
  if (e instanceof RestError) return e.toInfo();
  return { code: 500, status: 'internal', reason: 'internalError', message: String(e) };
}

export interface DataJobResult {
  error?: ErrorInfo;
  errors?: Json[];
  statistics: Json;
}

/** Metadata-only external formats (spec §4.3.2): the table is registered with zero rows. */
const METADATA_ONLY_EXTERNAL = ['WIDECOLUMN', 'BIGTABLE'];

function urisOf(v: unknown): string[] {
  return Array.isArray(v) ? (v as unknown[]).filter((u): u is string => typeof u === 'string') : [];
}

/** The format and read options of an external definition. A Sheets source (spec §4.3.2, "for fixtures") is the sheet as a CSV file, local or in an object store. */
function externalFormat(def: Json): { format: string; options: Json } {
  const format = normalizeFormat(str(def['sourceFormat']));
  if (format !== 'GOOGLE_SHEETS' && format !== 'SHEETS') return { format, options: def };
  const sheets = isObj(def['googleSheetsOptions']) ? def['googleSheetsOptions'] : {};
  if (str(sheets['range'])) throw invalid('googleSheetsOptions.range is not supported by the emulator: a Sheets fixture is the whole sheet, as a CSV file');
  return { format: 'CSV', options: { ...def, csvOptions: { skipLeadingRows: sheets['skipLeadingRows'] } } };
}

/** An external definition's schema and rows, read now; undefined for metadata-only sources and definitions without URIs. */
/** An external definition's rows, read a file at a time: `fileOf` names each row's file (its _FILE_NAME, io/hive.ts). */
async function readExternal(def: Json, schema: RestField[] | undefined): Promise<{ fields: RestField[]; rows: Json[]; fileOf: string[]; uris: string[]; hive?: HiveLayout } | undefined> {
  const { format, options } = externalFormat(def);
  if (METADATA_ONLY_EXTERNAL.includes(format)) return undefined;
  try {
    checkReadable(format);
  } catch (e) {
    throw rest(e);
  }
  const uris = urisOf(def['sourceUris']);
  if (!uris.length) return undefined;
  const files = await readAll(uris);
  const autodetect = boolish(def['autodetect']) ?? schema === undefined;
  const hive = hiveLayoutOf(def, files.map((f) => f.uri));
  const parsed = await parseEachFile(files, (f, i) =>
    hive ? parseHive([f], format, options, schema, autodetect, { fields: hive.fields, values: [hive.values[i]!] }) : parse([f], format, options, schema, autodetect),
  );
  return { ...parsed, uris, ...(hive ? { hive } : {}) };
}

/** Notes on an external table which file each of its rows came from (`fileRows`), less the rows the insert skipped. */
async function keepFileRows(ctx: GatewayContext, dest: TableRef, parsed: { fileOf: string[]; uris: string[] }, skipped: readonly Json[]): Promise<void> {
  const bad = new Set(skipped.map((e) => Number(e['index'])));
  const kept = parsed.fileOf.map((_, i) => i).filter((i) => !bad.has(i));
  const { project_id, dataset_id, table_id } = dest;
  await ctx.call('UpdateTable', { project_id, dataset_id, table_id, resource_json: JSON.stringify({ fileRows: fileRowsOf(parsed.fileOf, kept, parsed.uris) }), options: { fileRows: 'true' } });
}

/**
 * hivePartitioningOptions of a load or an external definition (tables.md, HivePartitioningOptions): the keys of the
 * files' paths after sourceUriPrefix, typed by the mode (AUTO inferred, STRINGS, CUSTOM from the prefix's
 * `{key:TYPE}` encoding), and each file's values; undefined without the option.
 */
function hiveLayoutOf(cfg: Json, uris: readonly string[]): HiveLayout | undefined {
  const h = cfg['hivePartitioningOptions'];
  if (!isObj(h)) return undefined;
  const mode = (str(h['mode']) ?? 'AUTO').toUpperCase();
  if (mode !== 'AUTO' && mode !== 'STRINGS' && mode !== 'CUSTOM') throw invalid(`Invalid hivePartitioningOptions.mode ${mode}: expected AUTO, STRINGS or CUSTOM`);
  const given = str(h['sourceUriPrefix']);
  if (!given) throw invalid('hivePartitioningOptions.sourceUriPrefix is required: the common prefix of the source URIs before the partition keys');
  try {
    const custom = mode === 'CUSTOM' ? customPrefix(given) : undefined;
    return hiveLayout(uris, custom?.prefix ?? given, mode, custom?.fields);
  } catch (e) {
    throw rest(e);
  }
}

/** Rows of hive-partitioned `files`, parsed a partition at a time, each with its keys' values; fields: the files', then the keys'. */
async function parseHive(files: readonly SourceFile[], format: string, cfg: Json, schema: RestField[] | undefined, autodetect: boolean, hive: HiveLayout): Promise<{ fields: RestField[]; rows: Json[] }> {
  const keys = new Set(hive.fields.map((k) => k.name.toLowerCase()));
  // A table's schema may hold the keys already (a load appending to it): the files hold the others.
  const fileSchema = schema?.filter((f) => !keys.has(f.name.toLowerCase()));
  const groups = new Map<string, { files: SourceFile[]; values: string[] }>();
  files.forEach((f, i) => {
    const k = JSON.stringify(hive.values[i]);
    const g = groups.get(k);
    if (g) g.files.push(f);
    else groups.set(k, { files: [f], values: hive.values[i]! });
  });
  let fields: RestField[] | undefined;
  const rows: Json[] = [];
  for (const g of groups.values()) {
    const parsed = await parse(g.files, format, cfg, fileSchema, autodetect);
    fields ??= parsed.fields;
    for (const row of parsed.rows) {
      hive.fields.forEach((k, i) => (row[k.name] = g.values[i]!));
      rows.push(row);
    }
  }
  fields ??= fileSchema ?? [];
  try {
    if (!fileSchema) checkHiveOverlap(hive.fields, fields.map((f) => f.name));
  } catch (e) {
    throw rest(e);
  }
  return { fields: [...fields, ...hive.fields.map((k) => ({ name: k.name, type: k.type, mode: 'NULLABLE' }))], rows };
}

/**
 * Table insert with externalDataConfiguration (spec §4.3.2): object-store and
 * local sources in CSV / NEWLINE_DELIMITED_JSON / PARQUET / AVRO (and Sheets
 * fixtures) are read now and their rows stored in the (already created)
 * table. A definition without a schema gives the table the inferred one
 * before its rows are stored.
 */
export async function materializeExternal(ctx: GatewayContext, dest: TableRef, ext: Json, schema: RestField[] | undefined): Promise<void> {
  const parsed = await readExternal(ext, schema);
  if (!parsed) return;
  if (!schema || parsed.hive) {
    const { project_id, dataset_id, table_id } = dest;
    // A hive-partitioned table's keys are columns after the files' (tables.md, HivePartitioningOptions.fields: tables.get shows them).
    const hive = parsed.hive ? { externalDataConfiguration: { ...ext, hivePartitioningOptions: { ...(ext['hivePartitioningOptions'] as Json), fields: parsed.hive.fields.map((k) => k.name) } } } : {};
    await ctx.call('UpdateTable', { project_id, dataset_id, table_id, resource_json: JSON.stringify({ schema: { fields: parsed.fields }, ...hive }), options: { patch: 'true' } });
  }
  const outcome = await insertAll(ctx, dest, parsed.rows, boolish(ext['ignoreUnknownValues']) ?? false, (num(ext['maxBadRecords']) ?? 0) > 0);
  if (outcome.errors.length && (num(ext['maxBadRecords']) ?? 0) === 0) {
    throw invalid(`Error while reading data, error message: ${String((outcome.errors[0]?.['errors'] as Json[] | undefined)?.[0]?.['message'] ?? 'invalid row')}`);
  }
  await keepFileRows(ctx, dest, parsed, outcome.errors);
}

/**
 * Sources an external table can never read offline (spec §4.3.2, §4.5): 400
 * with an explicit message at definition time, rather than a table that
 * silently reads as empty. Google Sheets and Drive URLs need Google's
 * services; bare http(s) URLs are not a source the real service reads
 * either. A wide-column (Bigtable) URI is never read: such tables are
 * metadata only.
 */
export function rejectUnsupportedExternal(ext: Json): void {
  if (METADATA_ONLY_EXTERNAL.includes(normalizeFormat(str(ext['sourceFormat']), ''))) return;
  for (const u of urisOf(ext['sourceUris'])) {
    if (/^azure:\/\//i.test(u) || /\.blob\.core\.windows\.net/i.test(u)) {
      throw invalid(`Unsupported external data source ${u}: Azure Blob Storage sources are not supported by the emulator`);
    }
    if (/^https:\/\/(docs|drive)\.google\.com\//i.test(u)) {
      throw invalid(`Unsupported external data source ${u}: Google Sheets and Google Drive sources are not supported by the emulator (it cannot reach Google Drive); give a Sheets fixture as a CSV file (file://, gs://) instead`);
    }
    if (/^https?:\/\//i.test(u)) {
      throw invalid(`Unsupported external data source ${u}: direct http(s) URLs are not supported; use file://, an absolute path, gs:// (object-store emulator) or s3:// (S3_ENDPOINT)`);
    }
  }
}

/**
 * Query-time external tables (spec §1.6.4): each `tableDefinitions` entry is
 * materialized as a table of the internal dataset `_bq_external_temp`, which
 * becomes the default dataset when the request names none (the engine
 * resolves the names there before the default dataset in either case).
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
    // Parse first (schema may be inferred), then create the external table and fill it, noting each row's file.
    const parsed = (await readExternal(def, schema)) ?? { fields: schema ?? [], rows: [], fileOf: [], uris: [] };
    await ctx.call('InsertTable', {
      project_id: projectId,
      dataset_id: ds,
      table_id: name,
      resource_json: JSON.stringify({ tableReference: refOut(ref), schema: { fields: parsed.fields }, externalDataConfiguration: def }),
    });
    if (parsed.rows.length) {
      const outcome = await insertAll(ctx, ref, parsed.rows, boolish(def['ignoreUnknownValues']) ?? false, false);
      if (outcome.errors.length) throw invalid(`Error while reading table: ${name}, error message: ${String((outcome.errors[0]?.['errors'] as Json[] | undefined)?.[0]?.['message'] ?? 'invalid row')}`);
      await keepFileRows(ctx, ref, parsed, []);
    }
  }
}

const TABLE_SPEC = ['timePartitioning', 'rangePartitioning', 'clustering'];

/** A job configuration's partitioning and clustering of its destination table. */
function tableSpecOf(cfg: Json): Json {
  const out: Json = {};
  for (const k of TABLE_SPEC) if (isObj(cfg[k])) out[k] = cfg[k];
  return out;
}

/**
 * A query job's destination takes the job's partitioning and clustering (bq query
 * --destination_table --time_partitioning_field / --clustering_fields): the engine
 * writes the rows, then a destination without a spec of its own gets the job's.
 */
export async function applyQueryDestinationSpec(ctx: GatewayContext, projectId: string, cfg: Json): Promise<void> {
  const spec = tableSpecOf(cfg);
  if (!Object.keys(spec).length || !isObj(cfg['destinationTable'])) return;
  const dest = tableRef(cfg['destinationTable'], projectId, 'destinationTable');
  const table = await getTable(ctx, dest);
  if (!table || TABLE_SPEC.some((k) => table[k] !== undefined)) return;
  await ctx.call('UpdateTable', { project_id: dest.project_id, dataset_id: dest.dataset_id, table_id: dest.table_id, resource_json: JSON.stringify(spec), options: { patch: 'true' } });
}

/**
 * What a load job's configuration says about the table it creates (bq load
 * --time_partitioning_field, --clustering_fields, --destination_description...):
 * applied when the job creates (or truncates into) the destination.
 */
function loadTableProperties(cfg: Json): Json {
  const out = tableSpecOf(cfg);
  const props = cfg['destinationTableProperties'];
  if (isObj(props)) {
    for (const k of ['description', 'friendlyName']) if (str(props[k]) !== undefined) out[k] = props[k];
    if (isObj(props['labels'])) out['labels'] = props['labels'];
  }
  return out;
}

/** An upload spooled to disk: the data part is bytes [start, end) of the file (plugins/uploads.ts). */
export interface UploadedData {
  path: string;
  start: number;
  end: number;
}

/** A running job's statistics so far (jobs.get shows them while it is RUNNING). */
export type ProgressSink = (statistics: Json) => void;

/** Formats read as a stream of rows; Parquet and Avro readers need the whole file. */
const STREAMED = ['CSV', 'NEWLINE_DELIMITED_JSON'];
/** Formats the engine reads from a local file itself (src/io/load-files.ts): no rows cross as JSON. */
const ENGINE_READ = ['CSV', 'NEWLINE_DELIMITED_JSON', 'PARQUET'];
/** Records the engine reads per AppendTableWrite of a file: the job's statistics move between calls. */
const FILE_CALL_RECORDS = 32_768;

/** A load source: its bytes, and for a local file (or the spooled upload) where it is. */
interface LoadSource {
  readonly bytes: ByteSource;
  readonly file?: LoadFile;
}

/** A load's sources: the upload, local files (unread), or fetched objects. */
async function loadSources(uris: readonly string[], uploaded: UploadedData | undefined): Promise<LoadSource[]> {
  if (uploaded) return [{ bytes: fileSource('upload', uploaded.path, uploaded.start, uploaded.end), file: { path: uploaded.path, start: uploaded.start, end: uploaded.end, uri: 'upload' } }];
  const out: LoadSource[] = [];
  for (const uri of uris) {
    const local = await localFiles(uri).catch((e: unknown) => {
      throw rest(e);
    });
    if (local) {
      for (const p of local) {
        const named = uri.includes('*') ? p : uri;
        out.push({ bytes: fileSource(named, p), file: { path: p, uri: named } });
      }
    } else out.push(...(await readAll([uri])).map((f) => ({ bytes: bufferSource(f) })));
  }
  return out;
}

function loadStatistics(files: number, bytes: number, rows: number, bad: number): Json {
  return { load: { inputFiles: String(files), inputFileBytes: String(bytes), outputRows: String(rows), outputBytes: '0', badRecords: String(bad) } };
}

/**
 * What jobs.insert refuses before a load or extract job exists. Spec §4.5: a
 * load naming an object store whose endpoint is not configured (alt:// without
 * ALT_ENDPOINT, gs:// without STORAGE_EMULATOR_HOST) is a 400 that names the
 * variable, not a failed job. An extract of a model is a 501: models are
 * metadata only (spec §1.6.6), there is nothing trained to write.
 */
export function checkDataJob(which: 'load' | 'copy' | 'extract', cfg: Json): void {
  if (which === 'load') {
    for (const uri of urisOf(cfg['sourceUris'])) {
      const guidance = missingEndpoint(uri);
      if (guidance) throw invalid(guidance);
    }
    // The schema's fields as tables.insert takes them (a timestampPrecision other than 6 or 12 is a 400).
    if (isObj(cfg['schema']) && Array.isArray(cfg['schema']['fields'])) schemaFieldsIn(cfg['schema']['fields'] as unknown[]);
  }
  // Job.md, JobConfigurationTableCopy.writeDisposition: a copy does not take a load's or a query's WRITE_TRUNCATE_DATA.
  if (which === 'copy' && cfg['writeDisposition'] !== undefined && !['WRITE_TRUNCATE', 'WRITE_APPEND', 'WRITE_EMPTY'].includes(String(cfg['writeDisposition']).toUpperCase())) {
    throw invalid(`Invalid value for writeDisposition: ${String(cfg['writeDisposition'])}; a copy job takes WRITE_TRUNCATE, WRITE_APPEND or WRITE_EMPTY`);
  }
  // A local path the --local-files policy refuses is a 403 now, not a failed job (the job checks again as it reads).
  if (which !== 'copy') {
    const uris = which === 'load' ? urisOf(cfg['sourceUris']) : [...urisOf(cfg['destinationUris']), ...urisOf([cfg['destinationUri']])];
    for (const uri of uris) {
      const local = localPath(uri);
      try {
        if (local !== undefined) checkLocalPath(local.includes('*') ? dirname(local) : local, uri);
      } catch (e) {
        throw rest(e);
      }
    }
  }
  if (which === 'extract' && cfg['sourceModel'] !== undefined && cfg['sourceTable'] === undefined) {
    throw notImplemented('Exporting models is not supported by the emulator: models are metadata only (CREATE MODEL trains nothing), so there is no model to write');
  }
}

export async function runLoad(ctx: GatewayContext, projectId: string, cfg: Json, uploaded: UploadedData | undefined, progress: ProgressSink = () => undefined): Promise<DataJobResult> {
  try {
    const dest = tableRef(cfg['destinationTable'], projectId, 'destinationTable');
    const format = normalizeFormat(str(cfg['sourceFormat']));
    checkLoadable(format);
    const uris = Array.isArray(cfg['sourceUris']) ? (cfg['sourceUris'] as unknown[]).filter((u): u is string => typeof u === 'string') : [];
    if (!uploaded) {
      if (!uris.length) throw invalid('Required parameter is missing: sourceUris');
      const web = uris.find((u) => /^https?:\/\//i.test(u));
      if (web) throw invalid(`Unsupported source URI ${web}: direct http(s) fetches are not supported in load; use file://, an absolute path, gs:// or s3://`);
    }
    const jobSchema = isObj(cfg['schema']) && Array.isArray(cfg['schema']['fields']) ? (cfg['schema']['fields'] as RestField[]) : undefined;
    const autodetect = boolish(cfg['autodetect']) ?? false;
    const existing = jobSchema ? undefined : fieldsOf(await getTable(ctx, dest));
    const write = str(cfg['writeDisposition']) ?? 'WRITE_APPEND';
    const knownSchema = jobSchema ?? (write === 'WRITE_TRUNCATE' && autodetect ? undefined : existing);
    const updateOptions = Array.isArray(cfg['schemaUpdateOptions']) ? (cfg['schemaUpdateOptions'] as unknown[]).map(String) : [];
    // Only a schema the job states can differ from the table's.
    const stated = jobSchema ? updateOptions : undefined;
    const maxBad = num(cfg['maxBadRecords']) ?? 0;
    const sources = await loadSources(uris, uploaded);
    const read: ReadProgress = { bytesRead: 0, totalBytes: sources.reduce((n, f) => n + f.bytes.size, 0) };
    const outcome: InsertOutcome = { rows: 0, errors: [] };
    const report = (): Json => loadStatistics(sources.length, read.totalBytes, outcome.rows, outcome.errors.length);
    const ratio = (): number => (read.totalBytes ? Math.min(1, read.bytesRead / read.totalBytes) : 1);
    const create = str(cfg['createDisposition']) ?? 'CREATE_IF_NEEDED';
    const begin = async (fields: RestField[]): Promise<string> => (await beginWrite(ctx, dest, fields, create, write, loadTableProperties(cfg), stated, format)).id;
    const opts = readOptionsOf(cfg);
    const hiveOptions = isObj(cfg['hivePartitioningOptions']) ? cfg['hivePartitioningOptions'] : undefined;
    // tables.md, HivePartitioningOptions.requirePartitionFilter: hive-partitioned loads with it set to true fail.
    if (boolish(hiveOptions?.['requirePartitionFilter']) === true) throw invalid('hivePartitioningOptions.requirePartitionFilter applies to external tables: a hive-partitioned load with it set to true fails');
    // Every row is staged, then committed as one: the table has all of them or (on any failure) none.
    let writeId: string | undefined;
    try {
      const files = sources.map((s) => s.file);
      // An engine the gateway did not spawn may not see the gateway's files.
      const engineReads = ENGINE_READ.includes(format) && ctx.supervisor?.external !== true;
      if (hiveOptions) {
        // Hive-partitioned sources (hive-partitioned-loads-gcs.md): each row takes its file's key values.
        const read = await Promise.all(sources.map(async ({ bytes }): Promise<SourceFile> => ({ uri: bytes.uri, data: await readAllBytes(bytes) })));
        const parsed = await parseHive(read, format, cfg, knownSchema, autodetect, hiveLayoutOf(cfg, read.map((f) => f.uri))!);
        writeId = await begin(parsed.fields);
        Object.assign(outcome, await stageRows(ctx, writeId, parsed.rows, maxBad > 0, parsed.fields));
      } else if (engineReads && files.every((f): f is LoadFile => f !== undefined)) {
        // Local files: the engine reads them straight into the table's columns, a share of records per call.
        const schema = await loadSchema(files, format, opts, knownSchema, autodetect).catch((e: unknown) => {
          throw rest(e);
        });
        writeId = await begin(schema.fields);
        const fileOpts = JSON.stringify({ ...opts, skipLeadingRows: schema.skipLeadingRows });
        let before = 0; // bytes of the files done
        sources: for (const [i, f] of files.entries()) {
          for (;;) {
            const r = await ctx.call('AppendTableWrite', {
              write_id: writeId,
              skip_invalid_rows: maxBad > 0,
              file: {
                path: f.path, start: f.start ?? 0, end: f.end ?? 0, uri: f.uri, format, options_json: fileOpts,
                fields_json: format === 'CSV' ? JSON.stringify(schema.fields) : '', max_rows: FILE_CALL_RECORDS,
              },
            });
            const records = Number(r.file_records ?? 0);
            const offset = outcome.rows + outcome.errors.length;
            addOutcome(outcome, r.insert_errors_json, records, offset, maxBad > 0);
            read.bytesRead = before + Number(r.file_bytes_read ?? 0);
            progress({ ...report(), completionRatio: ratio() });
            if (outcome.errors.length > maxBad) break sources;
            if (r.file_done) break;
          }
          before += sources[i]!.bytes.size;
        }
      } else if (STREAMED.includes(format)) {
        // Rows are made and staged a batch at a time; the write begins once the first batch has settled the schema.
        for await (const batch of streamRows(sources.map((s) => s.bytes), format, opts, knownSchema, autodetect, INSERT_BATCH, read)) {
          writeId ??= await begin(batch.fields);
          if (!batch.rows.length) continue;
          const offset = outcome.rows + outcome.errors.length;
          const r = await stageRows(ctx, writeId, batch.rows, maxBad > 0, batch.fields);
          outcome.rows += r.rows;
          outcome.errors.push(...r.errors.map((e) => ({ ...e, index: Number(e['index'] ?? 0) + offset })));
          progress({ ...report(), completionRatio: ratio() });
          if (r.errors.length && maxBad === 0) break;
        }
      } else {
        const files = await Promise.all(sources.map(async ({ bytes }): Promise<SourceFile> => ({ uri: bytes.uri, data: await readAllBytes(bytes) })));
        const parsed = await parse(files, format, cfg, knownSchema, autodetect);
        writeId = await begin(parsed.fields);
        Object.assign(outcome, await stageRows(ctx, writeId, parsed.rows, maxBad > 0, parsed.fields));
      }
    } catch (e) {
      await abortWrite(ctx, writeId);
      throw e;
    }
    const statistics = report();
    const failed = outcome.errors.length > maxBad || (outcome.errors.length > 0 && maxBad === 0);
    if (failed) await abortWrite(ctx, writeId);
    else if (writeId) await commitWrite(ctx, writeId);
    if (failed) {
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

async function readAllBytes(src: ByteSource): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of src.chunks()) parts.push(c);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** Copy: rows of every source appended (or truncated into) the destination; SNAPSHOT/CLONE/RESTORE stamp the type. */
export async function runCopy(ctx: GatewayContext, projectId: string, cfg: Json): Promise<DataJobResult> {
  try {
    if (hasPartitionDecorator(cfg)) return { statistics: { copy: { copiedRows: String(await copyPartitions(ctx, projectId, cfg)), copiedLogicalBytes: '0' } } };
    const sources = Array.isArray(cfg['sourceTables']) && cfg['sourceTables'].length
      ? (cfg['sourceTables'] as unknown[]).map((s) => tableRef(s, projectId, 'sourceTables', true))
      : [tableRef(cfg['sourceTable'], projectId, 'sourceTable', true)];
    const dest = tableRef(cfg['destinationTable'], projectId, 'destinationTable');
    const op = (str(cfg['operationType']) ?? 'COPY').toUpperCase();
    const tables: Json[] = [];
    for (const src of sources) {
      const t = await getTable(ctx, src);
      if (!t) throw new RestError(404, 'notFound', `Not found: Table ${refText(src)}`);
      // external-tables.md, Limitations: you cannot copy an external table.
      if (t['type'] === 'EXTERNAL') throw invalid(`Cannot copy ${refText(src)}: it is an external table (its rows stay in its files; copy a query's results instead)`);
      tables.push(t);
    }
    const first = tables[0]!;
    const write = str(cfg['writeDisposition']) ?? 'WRITE_EMPTY';
    const existing = await getTable(ctx, dest);
    checkCopyRules(
      sources.map((s, i) => ({ name: refText(s), resource: tables[i]! })),
      existing && { name: refText(dest), resource: existing },
      write.toUpperCase(),
    );
    // A new destination is partitioned and clustered as its source (managing-partitioned-tables.md).
    const extra: Json = existing ? {} : specOfSource(first);
    if (op === 'COPY' && first['type'] === 'SNAPSHOT') {
      // OperationType COPY (Job.md): the destination has the source's type, a snapshot of the same base table.
      extra['type'] = 'SNAPSHOT';
      extra['snapshotDefinition'] = first['snapshotDefinition'];
    } else if (op === 'SNAPSHOT') {
      extra['type'] = 'SNAPSHOT';
      extra['snapshotDefinition'] = { baseTableReference: refOut(sources[0]!), snapshotTime: new Date().toISOString() };
      if (cfg['destinationExpirationTime'] !== undefined) extra['expirationTime'] = String(Date.parse(String(cfg['destinationExpirationTime'])) || cfg['destinationExpirationTime']);
    } else if (op === 'CLONE') {
      extra['cloneDefinition'] = { baseTableReference: refOut(sources[0]!), cloneTime: new Date().toISOString() };
    }
    // The engine reads every source (a `t@epoch` restore of `t` itself included) and commits them as one.
    const { id } = await beginWrite(ctx, dest, fieldsOf(first), str(cfg['createDisposition']) ?? 'CREATE_IF_NEEDED', write, extra);
    let copied = 0;
    try {
      for (const src of sources) copied += Number((await ctx.call('AppendTableWrite', { write_id: id, source: src })).source_rows);
    } catch (e) {
      await abortWrite(ctx, id);
      throw e;
    }
    await commitWrite(ctx, id);
    return { statistics: { copy: { copiedRows: String(copied), copiedLogicalBytes: '0' } } };
  } catch (e) {
    return { error: loadError(e), statistics: {} };
  }
}

/** Extract: the table as CSV, NEWLINE_DELIMITED_JSON (optionally GZIP), AVRO (optionally DEFLATE) or PARQUET to each destination URI. */
export async function runExtract(ctx: GatewayContext, projectId: string, cfg: Json, progress: ProgressSink = () => undefined): Promise<DataJobResult> {
  try {
    const src = tableRef(cfg['sourceTable'], projectId, 'sourceTable');
    const uris = Array.isArray(cfg['destinationUris']) ? (cfg['destinationUris'] as string[]) : str(cfg['destinationUri']) ? [str(cfg['destinationUri'])!] : [];
    if (!uris.length) throw invalid('Required parameter is missing: destinationUris');
    const format = normalizeFormat(str(cfg['destinationFormat']));
    if (!['CSV', 'NEWLINE_DELIMITED_JSON', 'AVRO', 'PARQUET'].includes(format)) throw invalid(`Invalid extract destination format ${format}: use CSV, NEWLINE_DELIMITED_JSON, AVRO or PARQUET`);
    const table = await getTable(ctx, src);
    if (!table) throw new RestError(404, 'notFound', `Not found: Table ${refText(src)}`);
    // external-tables.md, Limitations: no job exports data from an external table.
    if (table['type'] === 'EXTERNAL') throw invalid(`Cannot extract ${refText(src)}: it is an external table (save a query's results to a table and extract that)`);
    let fields = fieldsOf(table) ?? [];
    const rows: Json[] = [];
    for await (const page of readRows(ctx, await visibleRowsOf(ctx, src))) {
      fields = page.fields.length ? page.fields : fields;
      for (const r of page.rows) rows.push(r);
      // Reading the rows is most of an extract's work: the ratio follows it.
      progress({ extract: { destinationUriFileCounts: uris.map(() => '0'), inputBytes: '0' }, completionRatio: page.totalRows ? Math.min(1, rows.length / page.totalRows) : 1 });
    }
    const data = await encodeExport(fields, rows, {
      format,
      fieldDelimiter: delimiterOf(cfg['fieldDelimiter']),
      header: boolish(cfg['printHeader']) ?? true,
      compression: str(cfg['compression']) ?? '',
      useAvroLogicalTypes: boolish(cfg['useAvroLogicalTypes']) ?? false,
    });
    for (const uri of uris) await writeDestination(uri.replace('*', '000000000000'), data);
    return { statistics: { extract: { destinationUriFileCounts: uris.map(() => '1'), inputBytes: '0' } } };
  } catch (e) {
    return { error: loadError(e), statistics: {} };
  }
}
