// EXPORT DATA and LOAD DATA: the SQL forms of extract and load jobs, over the
// same codecs and object I/O the gateway's jobs use (src/io).
//
// EXPORT DATA OPTIONS(uri='gs://b/p/*.csv', format='CSV'|'JSON'|'AVRO'|'PARQUET',
//   overwrite, header, field_delimiter, compression, use_avro_logical_types) AS query
// LOAD DATA {INTO|OVERWRITE} [TEMP TABLE] t [[OVERWRITE] PARTITIONS (col = v)] [(column list)]
//   FROM FILES(format=..., uris=[...], skip_leading_rows, field_delimiter, quote,
//   null_marker, null_markers, ignore_unknown_values, max_bad_records, enable_logical_types,
//   time_zone, date_format, datetime_format, time_format, timestamp_format)
import type * as A from '../../grammar/ast.js';
import { sqlError } from '../analyzer/errors.js';
import { sessionTableName, splitPath, tableIdOf, tableNotFound } from '../analyzer/names.js';
import { typeFromNode } from '../analyzer/types.js';
import { EXTERNAL_READ_OPTIONS } from '../analyzer/information-schema-ddl.js';
import { checkResultArrays } from '../executor/result-check.js';
import { IoError, type Json } from '../io/errors.js';
import { checkLoadable, checkReadable, encodeExport, normalizeFormat, parseSources, SELF_DESCRIBED_FORMATS } from '../io/formats.js';
import { checkHiveOverlap, fileRowsOf, hiveLayout, parseEachFile, type HiveLayout } from '../io/hive.js';
import { destinationHasFiles, localPath, readSources, writeDestination, type SourceFile } from '../io/objects.js';
import { decodeRow } from '../io/rows.js';
import { delimiterOf, type Parsed, type ReadOptions } from '../io/schema.js';
import type { TableId, TableInfo } from '../storage/api.js';
import { convertJsonValue, formatTimestampRfc3339, ValueConversionError } from '../types/json-values.js';
import { columnToRestField, restFieldToColumn, type Column, type RestField } from '../types/schema.js';
import { T, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import { castWithFormat } from '../functions/cast-format.js';
import { civilToUtc, parseTimestampString } from '../functions/civil.js';
import { Decimal, type Interval, type Value } from '../types/values.js';
import { constantVector, getValue, vectorFromValues, type Batch } from '../types/vector.js';
import { truncateToPartition, type PartitionUnit } from '../storage/ingestion.js';
import { parseExpression } from '../../grammar/index.js';
import { someNode } from '../../grammar/ast-walk.js';
import { del } from './dml.js';
import { withDefaults } from './column-defaults.js';
import { encodeRows } from '../types/wire.js';
import { partitioning } from './partition-spec.js';
import { checkClusteringCount, ensureTempDataset, optionsToResource } from './ddl-common.js';
import { QueryError, type QueryResult } from './api.js';
import type { Session } from './session.js';

/** A statement result with the extra job statistics the engine forwards (exportDataStatistics, loadQueryStatistics). */
type DataResult = QueryResult & { statistics: Record<string, unknown> };

const fq = (id: TableId): string => `${id.projectId}:${id.datasetId}.${id.tableId}`;

/** Codec and object I/O failures keep their code and reason in the job's error. */
function queryError(e: unknown): unknown {
  return e instanceof IoError ? new QueryError(e.message, e.reason, e.code) : e;
}

async function io<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    throw queryError(e);
  }
}

/** OPTIONS / FROM FILES entries evaluated (names lower-cased); unknown names and duplicates are errors. */
async function evalOptions(s: Session, entries: readonly A.OptionEntry[] | undefined, known: readonly string[], what: string): Promise<Map<string, Value>> {
  const out = new Map<string, Value>();
  for (const o of entries ?? []) {
    const name = o.name.toLowerCase();
    if (!known.includes(name)) throw sqlError(`Unknown option ${o.name} for ${what}`, o.value.loc);
    if (out.has(name)) throw sqlError(`Duplicate option ${o.name} for ${what}`, o.value.loc);
    out.set(name, (await s.evalScalar(o.value)).value);
  }
  return out;
}

function optString(opts: Map<string, Value>, name: string): string | undefined {
  const v = opts.get(name);
  return v === null || v === undefined ? undefined : typeof v === 'string' ? v : String(v);
}

function optBool(opts: Map<string, Value>, name: string): boolean | undefined {
  const v = opts.get(name);
  return v === null || v === undefined ? undefined : v === true || v === 'true';
}

function optInt(opts: Map<string, Value>, name: string): number | undefined {
  const v = opts.get(name);
  if (v === null || v === undefined) return undefined;
  const n = Number(v instanceof Decimal ? v.toNumber() : (v as number | bigint));
  return Number.isFinite(n) ? n : undefined;
}

// ---------------------------------------------------------------- EXPORT DATA

const EXPORT_OPTIONS = ['uri', 'format', 'overwrite', 'header', 'field_delimiter', 'compression', 'use_avro_logical_types'];
const EXPORT_FORMATS: Record<string, string> = { CSV: 'CSV', JSON: 'NEWLINE_DELIMITED_JSON', AVRO: 'AVRO', PARQUET: 'PARQUET' };

/**
 * The real service writes a query's result as shards named by replacing the
 * URI's single `*` with a 12-digit number. Cloud URIs must carry exactly one
 * `*`; a local path (an emulator extension, not a real destination) may name
 * one file without it.
 */
function checkExportUri(uri: string, loc: A.Loc): void {
  const stars = uri.split('*').length - 1;
  if (stars > 1) throw sqlError(`Invalid uri option value '${uri}': the uri can contain at most one '*' wildcard`, loc);
  if (stars === 0 && localPath(uri) === undefined) {
    throw sqlError(`Invalid uri option value '${uri}': the uri must contain exactly one '*' wildcard, for example gs://bucket/folder/file_*.csv`, loc);
  }
}

export async function exportData(s: Session, st: A.ExportDataStmt): Promise<QueryResult> {
  const opts = await evalOptions(s, st.options, EXPORT_OPTIONS, 'EXPORT DATA');
  const uri = optString(opts, 'uri');
  if (!uri) throw sqlError('EXPORT DATA requires the option uri', st.loc);
  checkExportUri(uri, st.loc);
  const formatName = optString(opts, 'format')?.toUpperCase();
  if (!formatName) throw sqlError('EXPORT DATA requires the option format', st.loc);
  const format = EXPORT_FORMATS[formatName];
  if (!format) throw sqlError(`Invalid value for option format: ${formatName}; supported formats are CSV, JSON, AVRO and PARQUET`, st.loc);
  const fieldDelimiter = optString(opts, 'field_delimiter');
  if (format !== 'CSV' && (opts.has('field_delimiter') || opts.has('header'))) {
    throw sqlError(`Options header and field_delimiter are only valid for format CSV`, st.loc);
  }
  const target = uri.replace('*', '000000000000');
  const overwrite = optBool(opts, 'overwrite') ?? false;

  const saved = s.env;
  s.env = { ...saved, exportQuery: true };
  let q;
  try {
    q = s.analyze(st.query);
  } finally {
    s.env = saved;
  }
  const columns = q.plan.columns.map((c, i) => ({ name: q.outputNames[i] ?? '', type: c.type }));
  const batches = await s.runCharged(q.plan);
  checkResultArrays(columns, batches);
  const total = batches.reduce((n, b) => n + b.length, 0);
  const fields: RestField[] = columns.map((c) => columnToRestField(c.name, c.type));
  // Values in their REST JSON form (RFC 3339 timestamps, INT64 as text): what the export codecs take.
  const wire = JSON.parse(encodeRows(batches, 0, total, { timestampFormat: 'RFC3339', stringScalars: false })) as { f: { v: unknown }[] }[];
  const rows = wire.map((r) => decodeRow(fields, r));
  const data = await io(
    encodeExport(fields, rows, {
      format,
      fieldDelimiter: delimiterOf(fieldDelimiter),
      header: optBool(opts, 'header') ?? false,
      compression: optString(opts, 'compression') ?? '',
      useAvroLogicalTypes: optBool(opts, 'use_avro_logical_types') ?? false,
    }),
  );
  // Without overwrite, a wildcard destination that already holds matching files is an error, as in the real service.
  if (!overwrite && uri.includes('*') && (await io(destinationHasFiles(uri)))) {
    throw new QueryError(`Invalid value: destination ${uri} is not empty; set the option overwrite = true to replace its files`, 'invalid', 400);
  }
  await io(writeDestination(target, data));
  const res: DataResult = {
    columns: null,
    batches: [],
    statementType: 'EXPORT_DATA',
    totalBytesProcessed: 0,
    statistics: { exportDataStatistics: { fileCount: '1', rowCount: String(total) } },
  };
  return res;
}

// ---------------------------------------------------------------- LOAD DATA

const LOAD_OPTIONS = [
  'format', 'uris', 'skip_leading_rows', 'field_delimiter', 'quote', 'null_marker', 'null_markers', 'ignore_unknown_values',
  'max_bad_records', 'enable_logical_types', 'allow_jagged_rows', 'allow_quoted_newlines', 'encoding', 'compression',
  'preserve_ascii_control_characters', 'json_extension', 'decimal_target_types', 'hive_partition_uri_prefix', 'require_hive_partition_filter',
  'enable_list_inference', 'time_zone', 'date_format', 'datetime_format', 'time_format', 'timestamp_format',
];

/** How text cells of the temporal types are read: the load's time_zone and its format options (CAST ... FORMAT elements). */
interface TemporalReads {
  zone?: string;
  formats: Partial<Record<'DATE' | 'DATETIME' | 'TIME' | 'TIMESTAMP', string>>;
}

function temporalReads(opts: Map<string, Value>): TemporalReads {
  const formats: TemporalReads['formats'] = {};
  for (const k of ['DATE', 'DATETIME', 'TIME', 'TIMESTAMP'] as const) {
    const f = optString(opts, `${k.toLowerCase()}_format`);
    if (f !== undefined) formats[k] = f;
  }
  const zone = optString(opts, 'time_zone');
  if (zone !== undefined) {
    // An unknown zone is the statement's error, not each row's.
    try {
      civilToUtc(0n, zone);
    } catch {
      throw new QueryError(`Invalid time zone: ${zone}`, 'invalid', 400);
    }
  }
  return { ...(zone !== undefined ? { zone } : {}), formats };
}

/** A text cell of a temporal column under the load's time_zone / format options; undefined: the default reading applies. */
function readTemporal(type: SqlType, v: string, t: TemporalReads): Value | undefined {
  const k = type.kind;
  if (k !== 'DATE' && k !== 'DATETIME' && k !== 'TIME' && k !== 'TIMESTAMP') return undefined;
  const fmt = t.formats[k];
  if (fmt !== undefined) {
    try {
      return castWithFormat(v, T.STRING, type, fmt, t.zone ?? 'UTC');
    } catch (e) {
      if (e instanceof QueryError) throw new ValueConversionError(e.message);
      throw e;
    }
  }
  // A timestamp that names no zone is a civil time in time_zone (one that names a zone keeps it).
  if (k === 'TIMESTAMP' && t.zone !== undefined) return parseTimestampString(v.trim().replace('T', ' '), t.zone) ?? undefined;
  return undefined;
}

async function tempTarget(s: Session, name: A.Path, loc: A.Loc): Promise<TableId> {
  const parts = splitPath(name);
  const table = parts.length === 1 ? parts[0]! : sessionTableName(parts);
  if (table === undefined) throw sqlError('LOAD DATA into a TEMP TABLE requires an unqualified table name', loc);
  return { ...(await ensureTempDataset(s)), tableId: table };
}

/**
 * The REST metadata of a table LOAD DATA creates: OPTIONS (description,
 * friendly_name, labels; other options kept under `options` as CREATE TABLE
 * does) and CLUSTER BY; the caller adds PARTITION BY as CREATE TABLE does.
 */
async function tableResource(s: Session, st: A.LoadDataStmt): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const other: Record<string, unknown> = {};
  for (const o of st.options ?? []) {
    const v = (await s.evalScalar(o.value)).value;
    const name = o.name.toLowerCase();
    if (name === 'description') out.description = v;
    else if (name === 'friendly_name') out.friendlyName = v;
    else if (name === 'labels') out.labels = Object.fromEntries(((v as Value[][] | null) ?? []).map((kv) => [String(kv[0]), String(kv[1])]));
    else other[name] = typeof v === 'bigint' || v instanceof Decimal ? v.toString() : v;
  }
  if (Object.keys(other).length) out.options = other;
  if (st.clusterBy?.length) out.clustering = { fields: st.clusterBy.map((e) => (e.kind === 'PathExpr' ? e.parts.join('.') : '')) };
  return out;
}

function declaredColumns(defs: readonly A.ColumnDef[]): Column[] {
  const seen = new Set<string>();
  return defs.map((d) => {
    const l = d.name.toLowerCase();
    if (seen.has(l)) throw sqlError(`Duplicate column name ${d.name} in LOAD DATA`, d.loc);
    seen.add(l);
    return { name: d.name, type: typeFromNode(d.type), required: d.notNull };
  });
}

/** The character sets a load reads (the load job's `encoding`; LOAD DATA and CREATE EXTERNAL TABLE's option). */
const ENCODINGS = new Set(['UTF-8', 'ISO-8859-1', 'UTF-16BE', 'UTF-16LE', 'UTF-32BE', 'UTF-32LE']);

function readOptions(opts: Map<string, Value>): ReadOptions {
  // Counts of records are never negative; a character set is one of the load job's.
  for (const name of ['skip_leading_rows', 'max_bad_records']) {
    const n = optInt(opts, name);
    if (n !== undefined && n < 0) throw new QueryError(`Invalid value for ${name}: ${n}; it cannot be negative`, 'invalid', 400);
  }
  const encoding = optString(opts, 'encoding');
  if (encoding !== undefined && !ENCODINGS.has(encoding.toUpperCase())) {
    throw new QueryError(`Invalid encoding ${encoding}: expected one of ${[...ENCODINGS].join(', ')}`, 'invalid', 400);
  }
  // Job.md, nullMarkers: nullMarker and nullMarkers can't both be set.
  if (optString(opts, 'null_marker') !== undefined && opts.get('null_markers') !== undefined && opts.get('null_markers') !== null) {
    throw new QueryError('Only one of null_marker and null_markers can be set', 'invalid', 400);
  }
  const markers = [...(optString(opts, 'null_marker') !== undefined ? [optString(opts, 'null_marker')!] : []), ...((opts.get('null_markers') as Value[] | undefined) ?? []).map(String)];
  const delim = optString(opts, 'field_delimiter');
  const skip = optInt(opts, 'skip_leading_rows');
  const quote = optString(opts, 'quote');
  return {
    fieldDelimiter: delimiterOf(delim),
    ...(quote !== undefined ? { quote } : {}),
    ...(skip !== undefined ? { skipLeadingRows: skip } : {}),
    nullMarkers: markers,
    ...(encoding !== undefined ? { encoding } : {}),
    allowJaggedRows: optBool(opts, 'allow_jagged_rows') ?? false,
    ignoreUnknownValues: optBool(opts, 'ignore_unknown_values') ?? false,
    preserveAsciiControlCharacters: optBool(opts, 'preserve_ascii_control_characters') ?? false,
    useAvroLogicalTypes: optBool(opts, 'enable_logical_types') ?? false,
    // PARQUET: LIST groups load as REPEATED fields of their element (the load job's parquetOptions.enableListInference).
    parquetListInference: optBool(opts, 'enable_list_inference') ?? false,
  };
}

/**
 * Parsed rows -> one batch of `columns`. Keys match case-insensitively; rows
 * with bad values are skipped while they stay within max_bad_records, as the
 * real service counts them, and the first one fails the statement otherwise.
 */
const DATE_ONLY = /^\s*\d{4}[-/]\d{1,2}[-/]\d{1,2}\s*$/;

function toBatch(columns: readonly Column[], rows: readonly Json[], rejectUnknown: boolean, maxBad: number, temporal: TemporalReads = { formats: {} }): { batch: Batch; bad: number; keptRows: number[] } {
  const values: Value[][] = columns.map(() => []);
  const keptRows: number[] = [];
  const lower = new Map(columns.map((c, i) => [c.name.toLowerCase(), i]));
  let bad = 0;
  let kept = 0;
  rows.forEach((row, r) => {
    const cells: Value[] = columns.map(() => null);
    let error: string | undefined;
    for (const [k, v] of Object.entries(row)) {
      const i = lower.get(k.toLowerCase());
      if (i === undefined) {
        if (rejectUnknown) error ??= `JSON parsing error in row starting at position ${r}: No such field: ${k}.`;
        continue;
      }
      const c = columns[i]!;
      if (v === null || v === undefined) continue;
      try {
        // loading-data-cloud-storage-csv.md (and -json.md), Data types, Timestamp: a loaded timestamp has a date and a time part.
        if (c.type.kind === 'TIMESTAMP' && temporal.formats.TIMESTAMP === undefined && typeof v === 'string' && DATE_ONLY.test(v)) {
          throw new ValueConversionError('A timestamp needs a time part after its date');
        }
        cells[i] = (typeof v === 'string' ? readTemporal(c.type, v, temporal) : undefined) ?? convertJsonValue(c.type, v);
      } catch (e) {
        if (!(e instanceof ValueConversionError)) throw e;
        error ??= `Could not parse '${typeof v === 'object' ? JSON.stringify(v) : String(v)}' as ${typeToSql(c.type)} for field ${[c.name, ...e.path].join('.')} (position ${i}) in row ${r + 1}: ${e.message}`;
      }
    }
    columns.forEach((c, i) => {
      if (c.required && cells[i] === null) error ??= `Required field ${c.name} cannot be null (row ${r + 1})`;
    });
    if (error) {
      bad++;
      if (bad > maxBad) throw new QueryError(`Error while reading data, error message: ${error}`, 'invalid', 400);
      return;
    }
    cells.forEach((v, i) => values[i]!.push(v));
    keptRows.push(r);
    kept++;
  });
  return { batch: { length: kept, columns: columns.map((c, i) => vectorFromValues(c.type, values[i]!)) }, bad, keptRows };
}

/** LOAD DATA INTO an existing table with a column list: the list must agree with the table's columns. */
function checkCompatible(table: readonly Column[], declared: readonly Column[], id: TableId): void {
  for (const d of declared) {
    const t = table.find((c) => c.name.toLowerCase() === d.name.toLowerCase());
    if (!t) throw new QueryError(`Provided Schema does not match Table ${fq(id)}. Cannot add fields (field: ${d.name})`, 'invalid', 400);
    if (!typeEquals(t.type, d.type)) throw new QueryError(`Provided Schema does not match Table ${fq(id)}. Field ${d.name} has changed type from ${typeToSql(t.type)} to ${typeToSql(d.type)}`, 'invalid', 400);
  }
}

/** WITH PARTITION COLUMNS: the key columns (declared, else inferred as AUTO mode does) and each file's values. */
function hivePartitions(defs: readonly A.ColumnDef[], files: readonly SourceFile[], prefix: string): { columns: Column[]; valuesOf: Map<SourceFile, string[]> } {
  const declared = defs.length ? declaredColumns(defs) : undefined;
  let layout: HiveLayout;
  try {
    layout = hiveLayout(files.map((f) => f.uri), prefix, declared ? 'CUSTOM' : 'AUTO', declared?.map((c) => ({ name: c.name, type: c.type.kind })));
  } catch (e) {
    throw queryError(e);
  }
  const columns = declared ?? layout.fields.map((f) => restFieldToColumn({ name: f.name, type: f.type }));
  return { columns, valuesOf: new Map(files.map((f, i) => [f, layout.values[i]!])) };
}

/** The hive keys against the files' columns (declared, or read from the files): they cannot overlap. */
function checkKeysApart(hive: { columns: Column[] } | undefined, fileColumns: readonly string[]): void {
  if (!hive) return;
  try {
    checkHiveOverlap(hive.columns.map((c) => ({ name: c.name, type: c.type.kind })), fileColumns);
  } catch (e) {
    throw queryError(e);
  }
}

/** Parses the files a group of equal partition values at a time, each row given its files' key values. */
async function parseHiveGroups(files: readonly SourceFile[], hive: { columns: Column[]; valuesOf: Map<SourceFile, string[]> } | undefined, parse: (group: SourceFile[]) => Promise<Parsed>): Promise<Parsed> {
  if (!hive) return parse(files.slice());
  const groups = new Map<string, SourceFile[]>();
  for (const f of files) {
    const k = JSON.stringify(hive.valuesOf.get(f));
    const g = groups.get(k);
    if (g) g.push(f);
    else groups.set(k, [f]);
  }
  let fields: RestField[] = [];
  const rows: Json[] = [];
  for (const group of groups.values()) {
    const parsed = await parse(group);
    if (!fields.length) fields = parsed.fields;
    const values = hive.valuesOf.get(group[0]!)!;
    for (const row of parsed.rows) {
      hive.columns.forEach((c, i) => (row[c.name] = values[i]!));
      rows.push(row);
    }
  }
  return { fields, rows };
}

/** A value of a DATE / DATETIME / TIMESTAMP partitioning column as UTC micros (a DATETIME's civil micros). */
function partitionMicros(v: Value): bigint | undefined {
  if (typeof v === 'number') return BigInt(v) * 86_400_000_000n;
  return typeof v === 'bigint' ? v : undefined;
}

/**
 * `PARTITIONS (column = value)` of LOAD DATA: the table must be time-partitioned by that column (or, by ingestion time,
 * name _PARTITIONTIME), the value the start of one of its partitions. Gives the partition's start, its unit, and the
 * condition that selects its rows (OVERWRITE PARTITIONS deletes them first).
 */
async function targetPartition(s: Session, st: A.LoadDataStmt, resource: Record<string, unknown>, columns: readonly Column[], id: TableId): Promise<{ start: bigint; unit: PartitionUnit; ingestion: boolean; where: A.Expr }> {
  const p = st.partitions!;
  const tp = resource['timePartitioning'] as { field?: string; type?: string } | undefined;
  if (!tp) throw sqlError(`LOAD DATA PARTITIONS requires a time-partitioned table; ${fq(id)} is not one`, p.value.loc);
  const field = tp.field || '_PARTITIONTIME';
  if (p.column.toLowerCase() !== field.toLowerCase()) throw sqlError(`PARTITIONS names ${p.column}, but ${fq(id)} is partitioned by ${field}`, p.value.loc);
  const unit = (String(tp.type ?? 'DAY').toUpperCase() as PartitionUnit);
  const v = (await s.evalScalar(p.value)).value;
  // load-statements.md: the value is a partition_id of one time partition, never __NULL__ or __UNPARTITIONED__.
  if (v === '__NULL__' || v === '__UNPARTITIONED__') throw sqlError(`The PARTITIONS value cannot be ${v}: name one time partition`, p.value.loc);
  const start = v === null ? undefined : partitionMicros(v);
  if (start === undefined || truncateToPartition(start, unit) !== start) {
    throw sqlError(`The PARTITIONS value of ${p.column} must be the start of a ${unit} partition`, p.value.loc);
  }
  const col = `\`${field.replace(/`/g, '')}\``;
  const kind = columns.find((c) => c.name.toLowerCase() === field.toLowerCase())?.type.kind;
  const where =
    field === '_PARTITIONTIME'
      ? `_PARTITIONTIME = TIMESTAMP_MICROS(${start})`
      : kind === 'DATE'
        ? `DATE_TRUNC(${col}, ${unit}) = DATE_FROM_UNIX_DATE(${start / 86_400_000_000n})`
        : kind === 'DATETIME'
          ? `DATETIME_TRUNC(${col}, ${unit}) = DATETIME(TIMESTAMP_MICROS(${start}), 'UTC')`
          : `TIMESTAMP_TRUNC(${col}, ${unit}, 'UTC') = TIMESTAMP_MICROS(${start})`;
  return { start, unit, ingestion: field === '_PARTITIONTIME', where: parseExpression(where) };
}

/** Every loaded row of a column-partitioned table must fall in the partition PARTITIONS names. */
function checkInPartition(b: Batch, columns: readonly Column[], name: string, part: { start: bigint; unit: PartitionUnit }): void {
  const i = columns.findIndex((c) => c.name.toLowerCase() === name.toLowerCase());
  const v = b.columns[i];
  if (!v) return;
  for (let r = 0; r < b.length; r++) {
    const x = getValue(v, r);
    const us = x === null ? undefined : partitionMicros(x);
    if (us === undefined || truncateToPartition(us, part.unit) !== part.start) {
      throw new QueryError(`Row ${r + 1} has a value of ${name} outside the partition named by PARTITIONS (${formatTimestampRfc3339(part.start)})`, 'invalid', 400);
    }
  }
}

/**
 * An append's rows with the table's defaults where the load leaves a column out (default-values.md, Load data): a
 * column missing from the loaded columns (the column list, or the table's for text formats) takes its default on
 * every row; with a self-describing format (`fileRows`, the parsed rows aligned with the batch), a row whose file
 * has no such column takes it too.
 */
function loadDefaults(s: Session, table: TableInfo, writeColumns: readonly Column[], batch: Batch, loaded: readonly Column[], fileRows: readonly Json[] | undefined): Promise<Batch> {
  return withDefaults(s, table, writeColumns, batch, (c) => {
    if (!loaded.some((x) => x.name.toLowerCase() === c.name.toLowerCase())) return true;
    const absent = (k: number): boolean => {
      const r = fileRows![k];
      return typeof r === 'object' && r !== null && !Array.isArray(r) && !(c.name in r);
    };
    return fileRows?.some((_, k) => absent(k)) ? absent : false;
  });
}

export async function loadData(s: Session, st: A.LoadDataStmt): Promise<QueryResult> {
  // BigLake/Omni connections live in the Connection API, which the emulator
  // does not have: every connection is one that does not exist, and the
  // service answers that as a 404 (a client's input, never a 5xx).
  if (st.withConnection) throw new QueryError(`Not found: Connection ${st.withConnection.join('.')}`, 'notFound', 404);
  // load-statements.md: with a PARTITIONS clause the statement must begin with LOAD DATA INTO (OVERWRITE PARTITIONS
  // comes after the table name); the clustering list holds up to four columns.
  if (st.partitions && st.overwrite) throw sqlError('LOAD DATA with a PARTITIONS clause must begin with LOAD DATA INTO, not LOAD DATA OVERWRITE', st.loc);
  if (st.clusterBy) checkClusteringCount(st.clusterBy);
  const opts = await evalOptions(s, st.fromFilesOptions, LOAD_OPTIONS, 'LOAD DATA FROM FILES');
  const formatName = optString(opts, 'format');
  if (!formatName) throw sqlError('LOAD DATA FROM FILES requires the option format', st.loc);
  const format = normalizeFormat(formatName);
  try {
    checkLoadable(format);
  } catch (e) {
    throw queryError(e);
  }
  const urisV = opts.get('uris');
  const uris = urisV === null || urisV === undefined ? [] : Array.isArray(urisV) ? urisV.filter((u): u is string => typeof u === 'string') : [String(urisV)];
  if (!uris.length) throw sqlError('LOAD DATA FROM FILES requires the option uris', st.loc);
  const web = uris.find((u) => /^https?:\/\//i.test(u));
  if (web) throw new QueryError(`Unsupported source URI ${web}: direct http(s) fetches are not supported in load; use file://, an absolute path, gs:// or s3://`, 'invalid', 400);

  const cat = s.ctx.catalog;
  const id = st.temp ? await tempTarget(s, st.name, st.loc) : tableIdOf(s.analyzer(), st.name, st.loc);
  if (!cat.getDataset(id.projectId, id.datasetId)) throw tableNotFound(s.analyzer(), id);
  const existing = cat.getTable(id);
  if (existing && existing.kind !== 'TABLE') throw sqlError(`Cannot load data into ${fq(id)}: it is a ${existing.kind.toLowerCase().replace('_', ' ')}`, st.loc);
  if (st.partitions && !existing) throw tableNotFound(s.analyzer(), id);
  const part = st.partitions && existing ? await targetPartition(s, st, existing.resource, existing.columns, id) : undefined;
  // OVERWRITE with PARTITIONS replaces that partition only: the rest of the table stays, the load appends.
  const overwriteTable = st.overwrite && !part;
  const declared = st.columns ? declaredColumns(st.columns) : undefined;
  if (declared && existing && !overwriteTable) checkCompatible(existing.columns, declared, id);

  // Positional formats (CSV) follow the declared or the table's columns; otherwise the files' own schema.
  const known = declared ?? existing?.columns;
  const hivePrefix = optString(opts, 'hive_partition_uri_prefix');
  if (st.withPartitionColumns && hivePrefix === undefined) throw sqlError('LOAD DATA WITH PARTITION COLUMNS requires the option hive_partition_uri_prefix', st.loc);
  // load-statements.md: with both column_list and WITH PARTITION COLUMNS, partition_column_list is required.
  if (st.columns && st.withPartitionColumns && st.withPartitionColumns.length === 0) {
    throw sqlError('LOAD DATA with a column list and WITH PARTITION COLUMNS requires the partition column list', st.loc);
  }
  const files = await io(readSources(uris));
  const hive = st.withPartitionColumns ? hivePartitions(st.withPartitionColumns, files, hivePrefix!) : undefined;
  if (hive && existing && !overwriteTable) checkCompatible(existing.columns, hive.columns, id);
  checkKeysApart(hive, declared?.map((c) => c.name) ?? []);
  // The files hold no partition key columns: they come from each file's path (an existing table's key columns are left out).
  const fileColumns = hive ? known?.filter((c) => !hive.columns.some((h) => h.name.toLowerCase() === c.name.toLowerCase())) : known;
  const parsed = await io(parseHiveGroups(files, hive, (group) => parseSources(group, format, readOptions(opts), fileColumns?.map((c) => columnToRestField(c.name, c.type, c.required)), known === undefined)));
  if (!known) checkKeysApart(hive, parsed.fields.map((f) => f.name));
  let columns: Column[];
  try {
    columns = known ? known.slice() : parsed.fields.map(restFieldToColumn);
  } catch (e) {
    throw new QueryError(`Error while reading data, error message: ${(e as Error).message}`, 'invalid', 400);
  }
  for (const h of hive?.columns ?? []) if (!columns.some((c) => c.name.toLowerCase() === h.name.toLowerCase())) columns.push(h);
  const rejectUnknown = format === 'NEWLINE_DELIMITED_JSON' && !(optBool(opts, 'ignore_unknown_values') ?? false);
  const { batch, bad } = toBatch(columns, parsed.rows, rejectUnknown, optInt(opts, 'max_bad_records') ?? 0, temporalReads(opts));
  // Appending to an existing table: the batch follows the table's column order (declared lists may be a reordered subset).
  const writeColumns = existing && !overwriteTable ? existing.columns : columns;
  const aligned: Batch = writeColumns === columns
    ? batch
    : {
        length: batch.length,
        columns: writeColumns.map((c) => {
          const i = columns.findIndex((x) => x.name.toLowerCase() === c.name.toLowerCase());
          if (i < 0 && c.required) throw new QueryError(`Provided Schema does not match Table ${fq(id)}. Field ${c.name} is missing in new schema`, 'invalid', 400);
          return i < 0 ? vectorFromValues(c.type, new Array<Value>(batch.length).fill(null)) : batch.columns[i]!;
        }),
      };
  const written = existing && !overwriteTable ? await loadDefaults(s, existing, writeColumns, aligned, columns, batch.length === parsed.rows.length && SELF_DESCRIBED_FORMATS.has(format) ? parsed.rows : undefined) : aligned;
  if (!existing) {
    const resource = await tableResource(s, st);
    // PARTITION BY as CREATE TABLE takes it: the new table's time or range partitioning.
    if (st.partitionBy) Object.assign(resource, await partitioning(s, st.partitionBy, columns, resource));
    await cat.createTable(id, columns, { temporary: st.temp, resource });
    if (st.temp) s.tempTables.set(id.tableId, id);
    if (batch.length) await cat.appendRows(id, [aligned]);
  } else if (overwriteTable) {
    await cat.replaceRows(id, batch.length ? [aligned] : [], declared ? columns : undefined);
  } else if (part) {
    if (!part.ingestion) checkInPartition(written, writeColumns, st.partitions!.column, part);
    if (st.overwrite || st.partitions!.overwrite) {
      const drop: A.DeleteStmt = { kind: 'Delete', loc: st.loc, start: st.start, end: st.end, target: st.name, where: part.where };
      await del(s, drop);
    }
    // An ingestion-time partitioned table's rows carry the named partition's time instead of the load's.
    const rows = part.ingestion ? { length: written.length, columns: [...written.columns, constantVector(T.TIMESTAMP, part.start, written.length)] } : written;
    if (rows.length) await cat.appendRows(id, [rows]);
  } else if (batch.length) {
    await cat.appendRows(id, [written]);
  }
  const bytes = files.reduce((n, f) => n + f.data.length, 0);
  const res: DataResult = {
    columns: null,
    batches: [],
    statementType: 'LOAD_DATA',
    totalBytesProcessed: 0,
    statistics: {
      loadQueryStatistics: { inputFiles: String(files.length), inputFileBytes: String(bytes), outputRows: String(batch.length), outputBytes: '0', badRecords: String(bad) },
    },
  };
  return res;
}

/** CREATE EXTERNAL TABLE's options (data-definition-language: external_table_option_list), besides the table options. */
const EXTERNAL_OPTIONS = [
  ...LOAD_OPTIONS, 'description', 'friendly_name', 'labels', 'expiration_timestamp', 'max_staleness', 'metadata_cache_mode',
  'reference_file_schema_uri', 'file_set_spec_type', 'sheet_range', 'object_metadata', 'column_name_character_map', 'time_zone',
  'date_format', 'datetime_format', 'time_format', 'timestamp_format',
];

const MINUTE_US = 60_000_000;
const DAY_US = 86_400_000_000;

/**
 * Metadata caching (data-definition-language.md, max_staleness; metadata-caching-external-tables.md): max_staleness
 * 0 (off) or from 30 minutes to 7 days, metadata_cache_mode AUTOMATIC or MANUAL. The emulator reads the files when
 * the table is made, so a cache changes nothing: the options are checked and kept (TABLE_OPTIONS, tables.get).
 */
function checkMetadataCaching(opts: Map<string, Value>, loc: A.Loc): void {
  const v = opts.get('max_staleness') as Interval | null | undefined;
  if (v) {
    const us = (v.months * 30 + v.days) * DAY_US + Number(v.micros);
    if (us !== 0 && (us < 30 * MINUTE_US || us > 7 * DAY_US)) throw sqlError('The max_staleness of an external table must be 0 or between 30 minutes and 7 days, inclusive', loc);
  }
  const mode = optString(opts, 'metadata_cache_mode');
  if (mode !== undefined && !['AUTOMATIC', 'MANUAL'].includes(mode.toUpperCase())) throw sqlError(`Invalid metadata_cache_mode ${mode}: expected AUTOMATIC or MANUAL`, loc);
}

/** REST externalDataConfiguration fields of the read options that have one (tables.get shows them). */
function externalConfiguration(format: string, uris: string[], opts: Map<string, Value>): Record<string, unknown> {
  const out: Record<string, unknown> = { sourceFormat: format, sourceUris: uris };
  const csv: Record<string, unknown> = {};
  const skip = optInt(opts, 'skip_leading_rows');
  if (skip !== undefined) csv.skipLeadingRows = String(skip);
  const delim = optString(opts, 'field_delimiter');
  if (delim !== undefined) csv.fieldDelimiter = delim;
  const quote = optString(opts, 'quote');
  if (quote !== undefined) csv.quote = quote;
  if (format === 'CSV' && Object.keys(csv).length) out.csvOptions = csv;
  const ignore = optBool(opts, 'ignore_unknown_values');
  if (ignore !== undefined) out.ignoreUnknownValues = ignore;
  const maxBad = optInt(opts, 'max_bad_records');
  if (maxBad !== undefined) out.maxBadRecords = maxBad;
  const cacheMode = optString(opts, 'metadata_cache_mode');
  if (cacheMode !== undefined) out.metadataCacheMode = cacheMode.toUpperCase();
  return out;
}

/**
 * CREATE [OR REPLACE] EXTERNAL TABLE [IF NOT EXISTS] t [(columns)] OPTIONS (format = ..., uris = [...], ...):
 * as a tables.insert with externalDataConfiguration (spec §4.3.2), the files are read when the table is made and
 * their rows kept; the table is EXTERNAL (INFORMATION_SCHEMA table_type, DROP EXTERNAL TABLE) and read-only.
 */
export async function createExternalTable(s: Session, st: A.CreateTableStmt, id: TableId, existing: boolean): Promise<QueryResult> {
  // Its clauses are checked by createTable (checkFormClauses).
  // collation-concepts.md, Limitations: external tables don't support collation (an empty one is none; DEFAULT COLLATE
  // is refused with the other clauses an external table lacks).
  const collated = (n: { kind?: string }): boolean => {
    const c = (n as { collate?: unknown }).collate;
    return typeof c === 'string' && c !== '';
  };
  if (someNode([st.columns, st.withPartitionColumns], collated)) throw sqlError("External tables don't support collation", st.loc);
  const opts = await evalOptions(s, st.options, EXTERNAL_OPTIONS, 'CREATE EXTERNAL TABLE');
  const formatName = optString(opts, 'format');
  if (!formatName) throw sqlError('CREATE EXTERNAL TABLE requires the option format', st.loc);
  const format = normalizeFormat(formatName);
  try {
    checkReadable(format);
  } catch (e) {
    throw queryError(e);
  }
  const urisV = opts.get('uris');
  const uris = urisV === null || urisV === undefined ? [] : Array.isArray(urisV) ? urisV.filter((u): u is string => typeof u === 'string') : [String(urisV)];
  if (!uris.length) throw sqlError('CREATE EXTERNAL TABLE requires the option uris', st.loc);
  const web = uris.find((u) => /^https?:\/\//i.test(u));
  if (web) throw new QueryError(`Unsupported external data source ${web}: direct http(s) URLs are not supported; use file://, an absolute path, gs:// or s3://`, 'invalid', 400);
  const declared = st.columns ? declaredColumns(st.columns) : undefined;
  // external-tables.md, Limitations: _object_metadata is reserved for internal use.
  const reserved = [...(declared ?? []), ...(st.withPartitionColumns ? declaredColumns(st.withPartitionColumns) : [])].find((c) => c.name.toLowerCase() === '_object_metadata');
  if (reserved) throw sqlError(`Invalid field name "${reserved.name}": _object_metadata is reserved in external tables`, st.loc);
  checkMetadataCaching(opts, st.loc);
  const hivePrefix = optString(opts, 'hive_partition_uri_prefix');
  if (st.withPartitionColumns && hivePrefix === undefined) throw sqlError('CREATE EXTERNAL TABLE WITH PARTITION COLUMNS requires the option hive_partition_uri_prefix', st.loc);
  const files = await io(readSources(uris));
  // WITH PARTITION COLUMNS: the keys of each file's path are columns after the files' own, as LOAD DATA reads them.
  const hive = st.withPartitionColumns ? hivePartitions(st.withPartitionColumns, files, hivePrefix!) : undefined;
  checkKeysApart(hive, declared?.map((c) => c.name) ?? []);
  // Each file alone with its hive key values, noting which file each row came from (the table's _FILE_NAME).
  const parsed = await io(parseEachFile(files, (f) => parseHiveGroups([f], hive, (group) => parseSources(group, format, readOptions(opts), declared?.map((c) => columnToRestField(c.name, c.type, c.required)), declared === undefined))));
  if (!declared) checkKeysApart(hive, parsed.fields.map((f) => f.name));
  let columns: Column[];
  try {
    columns = declared ? declared.slice() : parsed.fields.map(restFieldToColumn);
  } catch (e) {
    throw new QueryError(`Error while reading data, error message: ${(e as Error).message}`, 'invalid', 400);
  }
  for (const h of hive?.columns ?? []) if (!columns.some((c) => c.name.toLowerCase() === h.name.toLowerCase())) columns.push(h);
  const rejectUnknown = format === 'NEWLINE_DELIMITED_JSON' && !(optBool(opts, 'ignore_unknown_values') ?? false);
  const { batch, keptRows } = toBatch(columns, parsed.rows, rejectUnknown, optInt(opts, 'max_bad_records') ?? 0, temporalReads(opts));
  const ext = externalConfiguration(format, uris, opts);
  // hive-partitioned-queries.md: the keys (tables.md, HivePartitioningOptions.fields) and whether queries must filter on them.
  if (hive) {
    const require = optBool(opts, 'require_hive_partition_filter') ?? false;
    ext.hivePartitioningOptions = { mode: st.withPartitionColumns!.length ? 'CUSTOM' : 'AUTO', sourceUriPrefix: hivePrefix, ...(require ? { requirePartitionFilter: true } : {}), fields: hive.columns.map((c) => c.name) };
  }
  const resource: Record<string, unknown> = { externalDataConfiguration: ext, fileRows: fileRowsOf(parsed.fileOf, keptRows, uris) };
  // The read options set, for TABLE_OPTIONS and TABLES.ddl (INT64 counts kept as JSON numbers).
  const kept = Object.fromEntries(
    [...opts].filter(([name, v]) => name in EXTERNAL_READ_OPTIONS && v !== null).map(([name, v]) => [name, typeof v === 'bigint' ? Number(v) : v]),
  );
  if (Object.keys(kept).length) resource.options = kept;
  const description = optString(opts, 'description');
  if (description !== undefined) resource.description = description;
  const friendly = optString(opts, 'friendly_name');
  if (friendly !== undefined) resource.friendlyName = friendly;
  // labels, expiration_timestamp and max_staleness as a table takes them (the labels page's requirements checked).
  Object.assign(resource, await optionsToResource(s, st.options?.filter((o) => ['labels', 'expiration_timestamp', 'max_staleness'].includes(o.name.toLowerCase()))));
  await s.ctx.catalog.createTable(id, columns, { kind: 'EXTERNAL', resource, orReplace: existing, rows: [batch] });
  return { columns: null, batches: [], statementType: 'CREATE_EXTERNAL_TABLE', totalBytesProcessed: 0, ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE', ddlTargetTable: id } as QueryResult;
}
