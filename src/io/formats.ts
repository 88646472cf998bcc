// One entry for reading sources and one for writing exports, by format name:
// load/extract jobs (gateway) and LOAD DATA / EXPORT DATA (engine) share them.
import { gzipSync } from 'node:zlib';
import { avroCodec, avroRows, writeAvro } from './avro.js';
import { checkFlatForCsv, csvRows, writeCsv } from './csv.js';
import { ioInvalid, ioNotImplemented, type Json } from './errors.js';
import { jsonRows, writeNdjson } from './json.js';
import { orcRows } from './orc.js';
import { readSources, type SourceFile } from './objects.js';
import { backupFileUris, datastoreRows } from './datastore-backup.js';
import { parquetRows, writeParquet } from './parquet.js';
import { exportRow } from './rows.js';
import { checkSchema, type Parsed, type ReadOptions, type RestField } from './schema.js';

/** Source formats the emulator reads. */
export const READABLE_FORMATS = ['CSV', 'NEWLINE_DELIMITED_JSON', 'PARQUET', 'AVRO', 'ORC', 'DATASTORE_BACKUP', 'DOCSTORE_BACKUP'] as const;

/** REST and SQL spellings -> the REST sourceFormat name (`JSON` is NEWLINE_DELIMITED_JSON). */
/** Formats whose files carry their own schema: a file (or record) without a column leaves it out (default-values.md, Load data). */
export const SELF_DESCRIBED_FORMATS: ReadonlySet<string> = new Set(['PARQUET', 'AVRO', 'ORC']);

export function normalizeFormat(f: string | undefined, fallback = 'CSV'): string {
  const u = (f ?? fallback).toUpperCase();
  return u === 'JSON' ? 'NEWLINE_DELIMITED_JSON' : u;
}

/**
 * Formats the real service reads that the emulator cannot: Sheets, Bigtable
 * and table formats need Google services. 501 with the reason, never an
 * empty result.
 */
export function checkReadable(format: string): void {
  if ((READABLE_FORMATS as readonly string[]).includes(format)) return;
  if (['GOOGLE_SHEETS', 'SHEETS', 'BIGTABLE', 'ICEBERG', 'DELTA_LAKE'].includes(format)) {
    throw ioNotImplemented(`Source format ${format} is not supported by the emulator (CSV, NEWLINE_DELIMITED_JSON, AVRO, PARQUET, ORC and DATASTORE_BACKUP are)`);
  }
  throw ioInvalid(`Invalid source format ${format}`);
}

/**
 * A load (jobs.insert load, LOAD DATA) reads files of the formats above only:
 * the service's load takes no Sheets, Bigtable or table-format source (those
 * are external tables), so naming one is the client's mistake, a 400, not a
 * feature the emulator lacks.
 */
export function checkLoadable(format: string): void {
  if (!(READABLE_FORMATS as readonly string[]).includes(format)) throw ioInvalid(`Invalid source format ${format}`);
}

export async function parseSources(files: readonly SourceFile[], format: string, opts: ReadOptions, schema: RestField[] | undefined, autodetect: boolean): Promise<Parsed> {
  checkReadable(format);
  if (schema) checkSchema(schema);
  switch (format) {
    case 'CSV':
      return csvRows(files, opts, schema, autodetect);
    case 'PARQUET':
      return parquetRows(files, schema, opts.parquetListInference ?? false);
    case 'AVRO':
      return avroRows(files, schema, opts.useAvroLogicalTypes ?? false);
    case 'ORC':
      return orcRows(files, schema);
    case 'DATASTORE_BACKUP':
    case 'DOCSTORE_BACKUP': {
      // One URI, the kind's .export_metadata; the rows are in the files it names beside it.
      if (files.length !== 1) throw ioInvalid('Only one source URI is allowed for a Datastore export: its kind\'s .export_metadata file');
      return datastoreRows(await readSources(backupFileUris(files[0]!)), opts.projectionFields);
    }
    default:
      return jsonRows(files, schema, autodetect);
  }
}

export interface ExportOptions {
  /** CSV, NEWLINE_DELIMITED_JSON, AVRO or PARQUET. */
  format: string;
  fieldDelimiter: string;
  header: boolean;
  /** NONE, GZIP (CSV/JSON/Parquet), DEFLATE (Avro), SNAPPY (Parquet, its default), ZSTD (Parquet). */
  compression: string;
  useAvroLogicalTypes: boolean;
}

/** Rows (REST JSON values, RFC 3339 timestamps) as the bytes of one export file. */
export async function encodeExport(fields: readonly RestField[], rows: readonly Json[], o: ExportOptions): Promise<Buffer> {
  const compression = o.compression.toUpperCase();
  // An unset compression is '' for Parquet (SNAPPY by default) and NONE elsewhere.
  if (o.format === 'AVRO') return writeAvro(fields, rows, avroCodec(compression), o.useAvroLogicalTypes);
  if (o.format === 'PARQUET') {
    // The real service's default is SNAPPY.
    const codec = compression === '' || compression === 'SNAPPY' ? 'SNAPPY' : compression === 'NONE' ? 'UNCOMPRESSED' : compression === 'GZIP' || compression === 'ZSTD' ? compression : undefined;
    if (!codec) throw ioInvalid(`Compression ${compression} is not supported for PARQUET exports (SNAPPY, GZIP, ZSTD or NONE)`);
    return writeParquet(fields, rows, codec);
  }
  let text: string;
  if (o.format === 'CSV') {
    checkFlatForCsv(fields);
    text = writeCsv(fields, rows.map((r) => exportRow(fields, r)), o.fieldDelimiter, o.header);
  } else if (o.format === 'NEWLINE_DELIMITED_JSON') {
    text = writeNdjson(fields, rows.map((r) => exportRow(fields, r)));
  } else throw ioInvalid(`Invalid export format ${o.format}`);
  if (compression === 'GZIP') return gzipSync(Buffer.from(text));
  if (compression !== 'NONE' && compression !== '') throw ioInvalid(`Compression ${compression} is not supported for ${o.format} exports (GZIP or NONE)`);
  return Buffer.from(text);
}
