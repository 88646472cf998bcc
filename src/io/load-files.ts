// Load sources the engine reads itself: a local file named by a load job
// (`file://`, an absolute path) or an upload the gateway spooled. The
// file's records become column batches of the destination's columns
// directly, with insertAll's conversions and row errors (a CSV cell or a
// JSON value is converted as the same value in an insertAll row would be),
// and nothing crosses from the gateway as JSON rows. CSV and newline-
// delimited JSON are read a buffer at a time (gzip detected) and scanned
// as bytes (csv-bytes.ts; storage/insert-scan.ts scanNdjson), falling back
// to the string parsers where the scanners do not apply; Parquet is read a
// row group at a time, its flat columns from their pages (parquet-pages.ts),
// those of the destination's type as raw values straight into the columns,
// any other column through the insertAll form parquetRows gives it.
import type { Column } from '../types/schema.js';
import type { SqlType } from '../types/types.js';
import type { Batch } from '../types/vector.js';
import { MAX_DATE_DAYS, MIN_DATE_DAYS, MAX_TIMESTAMP_MICROS, MIN_TIMESTAMP_MICROS, ValueConversionError } from '../types/json-values.js';
import { ColumnBuilder, conversionError, convertRows, keptBatch, loadedTimestampText, missingRequired, setCell, type CellError, type InsertError, type RowsConversion } from '../storage/json-rows.js';
import { kindOf, scanNdjson } from '../storage/insert-scan.js';
import { CSV_BOOL, CsvParser, csvRules, csvSchema, leadingRows, type CsvCell } from './csv.js';
import { byteScannable, CsvCells, C_NULL, C_PLAIN, scanCsv, setPlain } from './csv-bytes.js';
import { ioInvalid, type Json } from './errors.js';
import { checkLocalPath } from './local-access.js';
import { convertValue, fileRangeBuffer, microsIso, parquetFileSchema, stripped, unreadable, type ParquetField } from './parquet.js';
import { flatColumns, RowGroupDecoder, type GroupColumns, type GroupRequest } from './parquet-pages.js';
import type { FileMetaData } from 'hyparquet';
import { jsonCellsAsText, jsonShapeOfColumns } from './json-cells.js';
import { checkSchema, inferFromRows, type ReadOptions, type RestField } from './schema.js';
import { fileSource, ndjsonLines, ndjsonObjects, plainBytes, textOf, type ReadProgress } from './stream.js';

/** A local file, or the byte range [start, end) of one (an upload's data part in its spool file). */
export interface LoadFile {
  readonly path: string;
  readonly start?: number;
  readonly end?: number;
  /** The URI the job named (error messages). */
  readonly uri: string;
}

/** Records of a file converted into the destination's columns. */
export interface LoadChunk {
  /** Records read (converted or rejected). */
  readonly records: number;
  /** The records that converted, as a batch of the columns. */
  readonly batch: Batch;
  /** Rejected records as insertAll reports rows, `index` from the chunk's first record. */
  readonly errors: InsertError[];
  /** The file's bytes read so far (as stored: compressed bytes of a gzipped file). */
  readonly bytesRead: number;
  /** Parquet: the columns (indexes) the file's own schema lacks, which a load leaves out (default-values.md, Load data). */
  readonly lacking?: readonly number[];
}

/** Records autodetect samples (the first file's first ones), as streamRows samples them. */
const CSV_SAMPLE = 500;
const JSON_SAMPLE = 1000;

/**
 * The schema of a load's rows, from `schema` (the job's or the table's) or,
 * with autodetect, from the first records (CSV: header and column types of
 * the first file's; JSON: keys and value types of the first 1,000 objects)
 * or the first Parquet file's own; and the CSV records each file skips
 * (skipLeadingRows, else a detected header). Only what the sample needs is
 * read (Parquet: the footer).
 */
export async function loadSchema(files: readonly LoadFile[], format: string, opts: ReadOptions, schema: RestField[] | undefined, autodetect: boolean): Promise<{ fields: RestField[]; skipLeadingRows: number }> {
  if (schema) checkSchema(schema);
  const skip = opts.skipLeadingRows ?? 0;
  const first = files[0];
  if (format === 'PARQUET' && !schema && first) {
    const buf = await fileRangeBuffer(first.path, first.start, first.end);
    try {
      return { fields: stripped((await parquetFileSchema(buf, first.uri, opts.parquetListInference ?? false)).fields), skipLeadingRows: skip };
    } finally {
      await buf.close();
    }
  }
  if (schema || format === 'PARQUET') return { fields: schema ?? [], skipLeadingRows: skip };
  if (!autodetect || !first) throw ioInvalid('No schema specified on job or table.');
  const progress: ReadProgress = { bytesRead: 0, totalBytes: 0 };
  if (format === 'CSV') {
    const src = fileSource(first.uri, first.path, first.start, first.end);
    const records: CsvCell[][] = [];
    const parser = new CsvParser(opts.fieldDelimiter || ',', opts.quote ?? '"', (r) => records.push(r));
    for await (const text of textOf(src, progress)) {
      parser.push(text);
      if (records.length >= CSV_SAMPLE) break;
    }
    if (records.length < CSV_SAMPLE) parser.push('', true);
    const detected = csvSchema(records, opts.skipLeadingRows);
    return { fields: detected.fields, skipLeadingRows: leadingRows(opts, detected.header) };
  }
  const sample: Json[] = [];
  for (const f of files) {
    for await (const objs of ndjsonObjects(fileSource(f.uri, f.path, f.start, f.end), progress)) {
      for (const o of objs) sample.push(o);
      if (sample.length >= JSON_SAMPLE) break;
    }
    if (sample.length >= JSON_SAMPLE) break;
  }
  return { fields: inferFromRows(sample), skipLeadingRows: skip };
}

/** Records converted at a time (CSV and JSON; Parquet converts a row group at a time). */
const CHUNK_RECORDS = 32_768;

/**
 * The records of `file` in `format` (CSV, NEWLINE_DELIMITED_JSON, PARQUET) as
 * chunks of `columns`. CSV needs `fields`: its columns in file order (names
 * matched to `columns`) and `opts.skipLeadingRows` as the load applies it
 * (autodetect's header included). Errors that stop a load (unreadable
 * files, JSON that does not parse, a path the local-files policy refuses)
 * are IoErrors, thrown by the first next().
 */
export async function* loadFileChunks(named: LoadFile, format: string, opts: ReadOptions, fields: readonly RestField[] | undefined, columns: readonly Column[]): AsyncGenerator<LoadChunk> {
  // The engine checks the path itself: its gRPC port may be reachable without the gateway.
  const file = { ...named, path: checkLocalPath(named.path, named.uri) };
  switch (format) {
    case 'CSV':
      if (!fields) throw ioInvalid('No schema specified on job or table.');
      return yield* csvChunks(file, opts, fields, columns);
    case 'NEWLINE_DELIMITED_JSON':
      return yield* ndjsonChunks(file, columns);
    case 'PARQUET':
      return yield* parquetChunks(file, opts, columns);
    default:
      throw ioInvalid(`Source format ${format} is not read from files by the engine`);
  }
}

/**
 * For each column, the index of the source name that fills it, as insertAll
 * matches row keys: the exact name, else case-insensitively (the last such
 * name); -1 for none (the column is NULL).
 */
export function matchColumns(names: readonly string[], columns: readonly Column[]): number[] {
  const lower = new Map<string, number>();
  names.forEach((n, i) => lower.set(n.toLowerCase(), i));
  return columns.map((c) => {
    const exact = names.indexOf(c.name);
    return exact >= 0 ? exact : (lower.get(c.name.toLowerCase()) ?? -1);
  });
}

/** Rows being converted into builders, with the errors of rejected ones. */
class ChunkRows {
  readonly builders: ColumnBuilder[];
  private rowErrors: (CellError[] | undefined)[] | null = null;

  constructor(
    private readonly columns: readonly Column[],
    private readonly n: number,
  ) {
    this.builders = columns.map((c) => new ColumnBuilder(c.type, n));
  }

  fail(k: number, e: CellError): void {
    this.rowErrors ??= new Array<CellError[] | undefined>(this.n);
    (this.rowErrors[k] ??= []).push(e);
  }

  /** Sets slot k of column c from an insertAll-form value `v` (setCell), a failure recorded as the row's error. */
  set(c: number, k: number, v: unknown): void {
    const col = this.columns[c]!;
    if ((v === null || v === undefined) && col.required) return this.fail(k, missingRequired(col.name));
    try {
      setCell(this.builders[c]!, k, col.type, v);
    } catch (e) {
      if (!(e instanceof ValueConversionError)) throw e;
      this.fail(k, conversionError(col.name, e));
    }
  }

  finish(bytesRead: number): LoadChunk {
    const errors: InsertError[] = [];
    const keep: number[] = [];
    for (let k = 0; k < this.n; k++) {
      const errs = this.rowErrors?.[k];
      if (errs) errors.push({ index: k, errors: errs });
      else keep.push(k);
    }
    const conv: RowsConversion = { n: this.n, m: this.n, builders: this.builders, errors, keep, newIds: [], built: true };
    return { records: this.n, batch: keptBatch(conv), errors, bytesRead };
  }
}

// ---------------------------------------------------------------- CSV

/** Bytes of a file read at a time by the byte-level CSV and JSON scanners (their records are converted per buffer). */
const READ_BYTES = 1024 * 1024;

async function* csvChunks(file: LoadFile, opts: ReadOptions, fields: readonly RestField[], columns: readonly Column[]): AsyncGenerator<LoadChunk> {
  const rules = csvRules(opts);
  const rr: RecordRules = {
    markers: rules.nullMarkers.size ? rules.nullMarkers : null,
    emptyIsNull: rules.emptyIsNull,
    // Records with more fields (without ignoreUnknownValues) or fewer (without allowJaggedRows) than the schema are bad.
    width: { max: rules.ignoreExtra ? Infinity : fields.length, min: opts.allowJaggedRows === false ? fields.length : 0 },
  };
  const src = matchColumns(fields.map((f) => f.name), columns);
  const delimiter = opts.fieldDelimiter || ',';
  const quote = opts.quote ?? '"';
  if (byteScannable(delimiter, quote)) {
    yield* csvByteChunks(file, delimiter.charCodeAt(0), quote ? quote.charCodeAt(0) : -1, opts.skipLeadingRows ?? 0, src, columns, rr, rules.keepNul);
    return;
  }
  const progress: ReadProgress = { bytesRead: 0, totalBytes: 0 };
  let skip = opts.skipLeadingRows ?? 0;
  let records: CsvCell[][] = [];
  const parser = new CsvParser(delimiter, quote, (r) => {
    if (skip > 0) skip--;
    else records.push(r);
  });
  const convert = (): LoadChunk => {
    const out = csvChunk(records, src, columns, rr, progress.bytesRead);
    records = [];
    return out;
  };
  for await (const text of textOf(fileSource(file.uri, file.path, file.start, file.end), progress)) {
    if (!rules.keepNul && text.includes('\u0000')) throw asciiZero();
    parser.push(text);
    if (records.length >= CHUNK_RECORDS) yield convert();
  }
  parser.push('', true);
  if (records.length) yield convert();
}

/** CSV with a one-byte delimiter and quote, scanned as bytes (csv-bytes.ts), a buffer's records at a time. */
async function* csvByteChunks(
  file: LoadFile,
  delimiter: number,
  quote: number,
  skipLeadingRows: number,
  src: readonly number[],
  columns: readonly Column[],
  rr: RecordRules,
  keepNul: boolean,
): AsyncGenerator<LoadChunk> {
  const progress: ReadProgress = { bytesRead: 0, totalBytes: 0 };
  const cells = new CsvCells();
  const kinds = columns.map((c) => kindOf(c.type.kind));
  let skip = skipLeadingRows;
  let carry: Buffer | null = null;
  let first = true;
  const chunk = (b: Buffer, last: boolean): LoadChunk | null => {
    // A leading UTF-8 BOM is no part of the first record (textOf drops it too).
    const from = first && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf ? 3 : 0;
    if (b.length >= 3 || last) first = false;
    if (first) {
      carry = b;
      return null;
    }
    if (!keepNul && b.indexOf(0) >= 0) throw asciiZero();
    const end = scanCsv(b as Parameters<typeof scanCsv>[0], from, last, delimiter, quote, cells);
    carry = end < b.length ? b.subarray(end) : null;
    const dropped = Math.min(skip, cells.records);
    skip -= dropped;
    return cells.records > dropped ? csvCellsChunk(cells, dropped, src, kinds, columns, rr, progress.bytesRead) : null;
  };
  for await (const piece of plainBytes(fileSource(file.uri, file.path, file.start, file.end, READ_BYTES), progress)) {
    const b: Buffer = carry ? Buffer.concat([carry, piece]) : piece;
    const out = chunk(b, false);
    if (out) yield out;
  }
  if (carry) {
    const out = chunk(carry, true);
    if (out) yield out;
  }
}

/** Records [from, cells.records) of a scanned buffer converted (see csvChunk: the same values and errors). */
function csvCellsChunk(cells: CsvCells, from: number, src: readonly number[], kinds: readonly number[], columns: readonly Column[], rr: RecordRules, bytesRead: number): LoadChunk {
  const { markers, emptyIsNull } = rr;
  const m = cells.records - from;
  const rows = new ChunkRows(columns, m);
  const firsts = cells.first;
  for (let k = 0; k < m; k++) checkWidth(rows, k, firsts[from + k + 1]! - firsts[from + k]!, rr.width);
  for (let c = 0; c < columns.length; c++) {
    const fi = src[c]!;
    const kind = kinds[c]!;
    const bl = rows.builders[c]!;
    for (let k = 0; k < m; k++) {
      const r = from + k;
      const at = firsts[r]!;
      if (fi < 0 || fi >= firsts[r + 1]! - at) {
        rows.set(c, k, null);
        continue;
      }
      const i = at + fi;
      const ck = cells.kind[i];
      if (ck === C_NULL) rows.set(c, k, emptyIsNull ? null : csvText(columns[c]!, ''));
      else if (markers !== null) {
        const text = cells.text(i)!;
        rows.set(c, k, markers.has(text) ? null : csvText(columns[c]!, text));
      } else if (ck !== C_PLAIN || !setPlain(cells, i, kind, bl, k)) rows.set(c, k, csvText(columns[c]!, cells.text(i)!));
    }
  }
  return rows.finish(bytesRead);
}

/** How many fields a CSV record may have (Job.md, ignoreUnknownValues and allowJaggedRows: others are bad records). */
interface Width {
  readonly max: number;
  readonly min: number;
}

/** How a load's CSV records become cells: null markers (csv.ts CsvRules) and the width a record may have. */
interface RecordRules {
  readonly markers: ReadonlySet<string> | null;
  readonly emptyIsNull: boolean;
  readonly width: Width;
}

function checkWidth(rows: ChunkRows, k: number, n: number, width: Width): void {
  if (n > width.max) rows.fail(k, { reason: 'invalid', location: '', debugInfo: '', message: `Too many values in the row: the schema has ${width.max} columns.` });
  else if (n < width.min) rows.fail(k, { reason: 'invalid', location: '', debugInfo: '', message: `CSV table references column position ${width.min - 1}, but the row contains only ${n} columns.` });
}

/** CSV page, Encoding: without preserveAsciiControlCharacters a file with an ASCII 0 cannot be loaded. */
function asciiZero(): Error {
  return ioInvalid('Error while reading data, error message: Bad character (ASCII 0) encountered.');
}

function csvText(col: Column, text: string): string {
  if (col.type.kind === 'TIMESTAMP') return loadedTimestampText(text);
  return col.type.kind === 'BOOL' ? (CSV_BOOL.get(text.toLowerCase()) ?? text) : text;
}

/** CSV records as insertAll rows of their cells would convert: missing cells and null markers are NULL. */
function csvChunk(records: readonly CsvCell[][], src: readonly number[], columns: readonly Column[], rr: RecordRules, bytesRead: number): LoadChunk {
  const { markers, emptyIsNull } = rr;
  const m = records.length;
  const rows = new ChunkRows(columns, m);
  for (let k = 0; k < m; k++) checkWidth(rows, k, records[k]!.length, rr.width);
  for (let c = 0; c < columns.length; c++) {
    const fi = src[c]!;
    for (let k = 0; k < m; k++) {
      let v: CsvCell | undefined = fi < 0 ? null : records[k]![fi];
      if (v === null && fi >= 0 && !emptyIsNull) v = '';
      if (v === undefined || (v !== null && markers !== null && markers.has(v))) v = null;
      rows.set(c, k, v === null ? null : csvText(columns[c]!, v));
    }
  }
  return rows.finish(bytesRead);
}

// ---------------------------------------------------------------- newline-delimited JSON

/**
 * Newline-delimited JSON read a buffer of whole lines at a time: scanned as
 * bytes into the columns (insert-scan.ts scanNdjson), or where the scanner
 * gives up, the buffer's lines parsed and converted as insertAll rows
 * (convertRows): the same values and errors either way.
 */
async function* ndjsonChunks(file: LoadFile, columns: readonly Column[]): AsyncGenerator<LoadChunk> {
  const progress: ReadProgress = { bytesRead: 0, totalBytes: 0 };
  let lineNo = 0;
  const convert = (b: Buffer): LoadChunk => {
    const conv = scanNdjson(b, columns) ?? convertRows(linesOf(b), columns, NO_IDS);
    lineNo += countLines(b);
    return { records: conv.n, batch: keptBatch(conv), errors: conv.errors, bytesRead: progress.bytesRead };
  };
  const shape = jsonShapeOfColumns(columns);
  const timestamps = columns.filter((c) => c.type.kind === 'TIMESTAMP').map((c) => c.name);
  const linesOf = (b: Buffer): { json: unknown }[] => {
    const objs: Json[] = [];
    ndjsonLines(b.toString('utf8'), lineNo, file.uri, objs);
    return objs.map((json) => ({ json: datesChecked(shape ? jsonCellsAsText(json, shape) : json, timestamps) }));
  };
  let carry: Buffer | null = null;
  let first = true;
  for await (const piece of plainBytes(fileSource(file.uri, file.path, file.start, file.end, READ_BYTES), progress)) {
    let b: Buffer = carry ? Buffer.concat([carry, piece]) : piece;
    if (first) {
      if (b.length < 3) {
        carry = b;
        continue;
      }
      // A leading UTF-8 BOM is no part of the first line (textOf drops it too).
      if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) b = b.subarray(3);
      first = false;
    }
    const end = b.lastIndexOf(0x0a) + 1;
    carry = end < b.length ? b.subarray(end) : null;
    if (end > 0) yield convert(b.subarray(0, end));
  }
  if (carry?.length) yield convert(carry);
}

/** A load row's top-level TIMESTAMP strings as loadedTimestampText reads them (a date alone is refused). */
export function datesChecked(json: unknown, timestamps: readonly string[]): unknown {
  if (!timestamps.length || typeof json !== 'object' || json === null || Array.isArray(json)) return json;
  const row = json as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(row)) {
    const v = row[k];
    if (typeof v !== 'string' || !timestamps.some((t) => t.toLowerCase() === k.toLowerCase())) continue;
    const text = loadedTimestampText(v);
    if (text !== v) (out ??= { ...row })[k] = text;
  }
  return out ?? json;
}

/** Lines of whole-line bytes: its line breaks, and a last line without one. */
function countLines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(0x0a); i >= 0; i = b.indexOf(0x0a, i + 1)) n++;
  return b.length > 0 && b[b.length - 1] !== 0x0a ? n + 1 : n;
}

const NO_IDS = { has: (): boolean => false };

// ---------------------------------------------------------------- Parquet

/** Fills column slots from a row group's raw values of a file column (see rawFill). */
type RawFill = (rows: ChunkRows, c: number, data: ArrayLike<unknown>) => void;

/**
 * Parquet a row group at a time, decoded on a worker (parquet-pages.ts; the
 * next row group while this one is converted): flat columns of the
 * destination's type as raw values straight into the columns (rawFill),
 * any other column through the insertAll form parquetRows gives it.
 */
async function* parquetChunks(file: LoadFile, opts: ReadOptions, columns: readonly Column[]): AsyncGenerator<LoadChunk> {
  const buf = await fileRangeBuffer(file.path, file.start, file.end);
  let metadata: FileMetaData;
  let fields: ParquetField[];
  try {
    ({ metadata, fields } = await parquetFileSchema(buf, file.uri, opts.parquetListInference ?? false));
  } finally {
    await buf.close();
  }
  const src = matchColumns(fields.map((f) => f.name), columns);
  const lacking = columns.flatMap((_, c) => (src[c]! < 0 ? [c] : []));
  const plans = columns.map((col, c) => {
    const field = src[c]! >= 0 ? fields[src[c]!]! : undefined;
    return { field, raw: field ? rawFill(field, col.type) : null };
  });
  const flat = await flatColumns(metadata);
  const wanted = new Map<string, boolean>();
  for (const p of plans) if (p.field) wanted.set(p.field.name, p.raw !== null && flat.has(p.field.name));
  const req: GroupRequest = {
    flat: [...wanted].filter(([name]) => flat.has(name)).map(([name, raw]) => ({ name, raw })),
    nested: [...wanted.keys()].filter((name) => !flat.has(name)),
  };
  const groups = metadata.row_groups;
  const size = (rg: number): number => Number(groups[rg]!.total_compressed_size ?? groups[rg]!.total_byte_size ?? 0);
  const decoder = new RowGroupDecoder(file.path, file.start, file.end);
  let next: Promise<GroupColumns> | null = null;
  try {
    const decode = (rg: number): Promise<GroupColumns> | null => (rg < groups.length && req.flat.length + req.nested.length > 0 ? decoder.decode(rg, req, size(rg)) : null);
    next = decode(0);
    let bytes = 0;
    for (let rg = 0; rg < groups.length; rg++) {
      const n = Number(groups[rg]!.num_rows);
      const data = next ? await next.catch((e: unknown) => Promise.reject(unreadable(e, file.uri))) : new Map<string, ArrayLike<unknown>>();
      next = decode(rg + 1);
      const rows = new ChunkRows(columns, n);
      plans.forEach((p, c) => {
        const values = p.field ? data.get(p.field.name) : undefined;
        if (!p.field || !values) {
          for (let k = 0; k < n; k++) rows.set(c, k, null);
        } else if (p.raw && flat.has(p.field.name)) p.raw(rows, c, values);
        else for (let k = 0; k < n; k++) rows.set(c, k, convertValue(p.field, values[k]));
      });
      bytes += size(rg);
      yield { ...rows.finish(Math.min(bytes, buf.byteLength)), lacking };
    }
  } finally {
    next?.catch(() => undefined);
    await decoder.close();
  }
}

const TWO_32 = 4294967296;
const MIN_TIMESTAMP_MICROS_N = Number(MIN_TIMESTAMP_MICROS);
const MAX_TIMESTAMP_MICROS_N = Number(MAX_TIMESTAMP_MICROS);

/**
 * How a flat file column fills a column of `type` from raw values, when
 * their types match (INT64, FLOAT64, BOOL, STRING, DATE, TIMESTAMP,
 * DATETIME, TIME): numbers straight into the builder. A value the fast path
 * does not take (out of range, another JS type) goes the insertAll way as
 * the text parquetRows would give it, so results and errors are the same.
 * null: the column is converted from its insertAll form (convertValue).
 */
function rawFill(f: ParquetField, type: SqlType): RawFill | null {
  if ((f.mode ?? '').toUpperCase() === 'REPEATED' || f.fields) return null;
  const pair = `${f.type}>${type.kind}`;
  switch (pair) {
    case 'INTEGER>INT64':
      return (rows, c, data) => {
        const b = rows.builders[c]!;
        if (data instanceof BigInt64Array) {
          // Read through a 32-bit view: no BigInt per value for the exact ones.
          const w = new Int32Array(data.buffer, data.byteOffset, data.length * 2);
          for (let k = 0; k < data.length; k++) {
            const hi = w[2 * k + 1]!;
            if (hi >= -2097152 && hi < 2097152) b.setNumber(k, hi * TWO_32 + (w[2 * k]! >>> 0));
            else b.set(k, data[k]!);
          }
          return;
        }
        for (let k = 0; k < data.length; k++) {
          const v = data[k];
          if (typeof v === 'number') b.setNumber(k, v);
          else if (typeof v === 'bigint' && v >= -9223372036854775808n && v <= 9223372036854775807n) b.set(k, v);
          else rows.set(c, k, v === null || v === undefined ? null : String(v));
        }
      };
    case 'FLOAT>FLOAT64':
      return (rows, c, data) => {
        const b = rows.builders[c]!;
        for (let k = 0; k < data.length; k++) {
          const v = data[k];
          if (typeof v === 'number') b.setNumber(k, v);
          else rows.set(c, k, v ?? null);
        }
      };
    case 'BOOLEAN>BOOL':
      return (rows, c, data) => {
        const b = rows.builders[c]!;
        for (let k = 0; k < data.length; k++) {
          const v = data[k];
          if (typeof v === 'boolean') b.setNumber(k, v ? 1 : 0);
          else rows.set(c, k, v ?? null);
        }
      };
    case 'STRING>STRING':
      return (rows, c, data) => {
        const b = rows.builders[c]!;
        for (let k = 0; k < data.length; k++) {
          const v = data[k];
          if (typeof v === 'string') b.setValue(k, v);
          else rows.set(c, k, v === null || v === undefined ? null : convertValue(f, v));
        }
      };
    case 'DATE>DATE':
      return (rows, c, data) => {
        const b = rows.builders[c]!;
        for (let k = 0; k < data.length; k++) {
          const v = data[k];
          if (typeof v === 'number' && v >= MIN_DATE_DAYS && v <= MAX_DATE_DAYS) b.setNumber(k, v);
          // Out of range: the text the insertAll form has (TEXT_PARSERS), refused as it refuses it.
          else rows.set(c, k, typeof v === 'number' ? new Date(v * 86_400_000).toISOString().slice(0, 10) : (v ?? null));
        }
      };
    case 'TIMESTAMP>TIMESTAMP':
    case 'DATETIME>DATETIME': {
      const local = f.type === 'DATETIME';
      return (rows, c, data) => {
        const b = rows.builders[c]!;
        for (let k = 0; k < data.length; k++) {
          const v = data[k];
          // Microseconds: a number where exact (RAW_PARSERS), else a bigint.
          if (typeof v === 'number' && v >= MIN_TIMESTAMP_MICROS_N && v <= MAX_TIMESTAMP_MICROS_N) b.setNumber(k, v);
          else if (typeof v === 'bigint' && v >= MIN_TIMESTAMP_MICROS && v <= MAX_TIMESTAMP_MICROS) b.set(k, v);
          else if (typeof v === 'bigint' || typeof v === 'number') {
            const iso = microsIso(BigInt(v));
            rows.set(c, k, local ? iso.replace(/Z$/, '') : iso);
          } else rows.set(c, k, v ?? null);
        }
      };
    }
    case 'TIME>TIME': {
      const unit = f.timeUnit;
      return (rows, c, data) => {
        const b = rows.builders[c]!;
        for (let k = 0; k < data.length; k++) {
          const v = data[k];
          if (v === null || v === undefined) {
            rows.set(c, k, null);
            continue;
          }
          const us = unit === 'MILLIS' ? Number(v) * 1000 : unit === 'NANOS' ? Number(BigInt(v as bigint) / 1000n) : Number(v);
          if (us >= 0 && us < 86_400_000_000) b.setNumber(k, us);
          else rows.set(c, k, convertValue(f, v));
        }
      };
    }
    default:
      return null;
  }
}
