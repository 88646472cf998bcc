// Streaming reads for loads: the bytes of a source are read in chunks (from
// a file, an upload spooled to disk, or a buffer already fetched) and become
// insertAll rows a batch at a time, so a large CSV or newline-delimited JSON
// load never holds its file, its text or all its rows in memory. (Parquet and
// Avro readers need the whole file: formats.ts reads those.)
import { createReadStream, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import { CsvParser, csvRow, csvRules, csvSchema, leadingRows, type CsvCell } from './csv.js';
import { ioInvalid, isObj, type Json } from './errors.js';
import type { SourceFile } from './objects.js';
import { checkSchema, inferFromRows, type ReadOptions, type RestField } from './schema.js';
import { parseJsonInput } from '../types/json-values.js';
import { jsonCellsAsText, jsonShapeOfFields } from './json-cells.js';

/** Bytes of one source file (maybe gzipped: detected by its magic bytes). */
export interface ByteSource {
  uri: string;
  /** Size in bytes as stored (compressed, for a gzipped file). */
  size: number;
  chunks(): AsyncIterable<Buffer>;
}

/** A local file, or the byte range [start, end) of one (an upload's data part inside the spooled request), read `chunkBytes` at a time. */
export function fileSource(uri: string, path: string, start = 0, end?: number, chunkBytes = 256 * 1024): ByteSource {
  const stop = end ?? statSync(path).size;
  return {
    uri,
    size: stop - start,
    chunks: () => (stop > start ? createReadStream(path, { start, end: stop - 1, highWaterMark: chunkBytes }) : Readable.from([])),
  };
}

export function bufferSource(file: SourceFile): ByteSource {
  return { uri: file.uri, size: file.data.length, chunks: () => Readable.from([file.data]) };
}

/** How far a load has read: compressed bytes of all its sources. */
export interface ReadProgress {
  bytesRead: number;
  totalBytes: number;
}

/** The source's bytes, gunzipped when they start with the gzip magic; counts raw bytes into `progress`. */
export async function* plainBytes(src: ByteSource, progress: ReadProgress): AsyncGenerator<Buffer> {
  const it = src.chunks()[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done) return;
  async function* raw(): AsyncGenerator<Buffer> {
    let next: IteratorResult<Buffer> = first;
    while (!next.done) {
      progress.bytesRead += next.value.length;
      yield next.value;
      next = await it.next();
    }
  }
  const head = first.value;
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) yield* Readable.from(raw()).pipe(createGunzip());
  else yield* raw();
}

/** Text of a source in pieces (UTF-8 split safely across chunks, a leading BOM dropped). */
export async function* textOf(src: ByteSource, progress: ReadProgress): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let first = true;
  for await (const chunk of plainBytes(src, progress)) {
    let text = decoder.write(chunk);
    if (first && text) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    yield text;
  }
  yield decoder.end();
}

export interface RowBatch {
  fields: RestField[];
  rows: Json[];
}

/**
 * Rows of CSV or NEWLINE_DELIMITED_JSON sources in batches of about
 * `batchRows`, with the schema: `schema`, or autodetected from the first
 * records (the sample waits for them). Yields at least one batch (maybe
 * empty) so the caller always learns the schema.
 */
export async function* streamRows(
  sources: readonly ByteSource[],
  format: string,
  opts: ReadOptions,
  schema: RestField[] | undefined,
  autodetect: boolean,
  batchRows: number,
  progress: ReadProgress,
): AsyncGenerator<RowBatch> {
  if (schema) checkSchema(schema);
  const rows = format === 'CSV' ? csvStream(sources, opts, schema, autodetect, progress) : ndjsonStream(sources, schema, autodetect, progress);
  let fields: RestField[] | undefined;
  let batch: Json[] = [];
  let yielded = false;
  for await (const part of rows) {
    fields = part.fields;
    for (const r of part.rows) batch.push(r);
    while (batch.length >= batchRows) {
      const out = batch.length === batchRows ? batch : batch.slice(0, batchRows);
      batch = batch.length === batchRows ? [] : batch.slice(batchRows);
      yielded = true;
      yield { fields, rows: out };
    }
  }
  if (!fields) {
    if (!schema) throw ioInvalid('No schema specified on job or table.');
    fields = schema;
  }
  if (batch.length || !yielded) yield { fields, rows: batch };
}

const CSV_SAMPLE = 500;

/** CSV records as rows, per chunk read; autodetect samples the first records of the first file. */
async function* csvStream(sources: readonly ByteSource[], opts: ReadOptions, schema: RestField[] | undefined, autodetect: boolean, progress: ReadProgress): AsyncGenerator<RowBatch> {
  const rules = csvRules(opts);
  let fields = schema;
  let skip = opts.skipLeadingRows ?? 0;
  for (const src of sources) {
    let records: CsvCell[][] = [];
    let seen = 0; // records of this file before `records`
    const parser = new CsvParser(opts.fieldDelimiter || ',', opts.quote ?? '"', (r) => records.push(r));
    const take = (end: boolean): Json[] | undefined => {
      if (!fields) {
        if (!autodetect) throw ioInvalid('No schema specified on job or table.');
        if (records.length < CSV_SAMPLE && !end) return undefined; // still sampling
        const detected = csvSchema(records, opts.skipLeadingRows);
        fields = detected.fields;
        skip = leadingRows(opts, detected.header);
      }
      const out: Json[] = [];
      for (let i = Math.max(0, skip - seen); i < records.length; i++) out.push(csvRow(fields, records[i]!, rules, seen + i + 1));
      seen += records.length;
      records = [];
      return out;
    };
    const texts = textOf(src, progress);
    for await (const text of texts) {
      parser.push(text);
      const rows = take(false);
      if (rows?.length) yield { fields: fields!, rows };
    }
    parser.push('', true);
    const rows = take(true);
    if (rows?.length) yield { fields: fields!, rows };
  }
}

const JSON_SAMPLE = 1000;

/** Newline-delimited JSON objects as rows; autodetect samples the first rows. */
async function* ndjsonStream(sources: readonly ByteSource[], schema: RestField[] | undefined, autodetect: boolean, progress: ReadProgress): AsyncGenerator<RowBatch> {
  let fields = schema;
  let pending: Json[] = [];
  const flush = (end: boolean): Json[] | undefined => {
    if (!fields) {
      if (!autodetect) throw ioInvalid('No schema specified on job or table.');
      if (pending.length < JSON_SAMPLE && !end) return undefined;
      fields = inferFromRows(pending);
    }
    const out = pending;
    pending = [];
    const shape = jsonShapeOfFields(fields);
    if (shape) for (const r of out) jsonCellsAsText(r, shape);
    return out;
  };
  for (const src of sources) {
    for await (const objs of ndjsonObjects(src, progress)) {
      for (const o of objs) pending.push(o);
      const rows = flush(false);
      if (rows?.length) yield { fields: fields!, rows };
    }
  }
  const rows = flush(true);
  if (rows?.length || fields) yield { fields: fields!, rows: rows ?? [] };
}

/**
 * The objects of a newline-delimited JSON source, those of each piece read
 * at a time. A line that is not JSON, or not an object, fails the load with
 * its position (0-based line number) and the file's URI.
 */
export async function* ndjsonObjects(src: ByteSource, progress: ReadProgress): AsyncGenerator<Json[]> {
  let carry = '';
  let lineNo = 0;
  for await (const piece of textOf(src, progress)) {
    const text = carry + piece;
    const end = text.lastIndexOf('\n') + 1;
    carry = text.slice(end);
    if (end === 0) continue;
    const out: Json[] = [];
    lineNo += ndjsonLines(text.slice(0, end), lineNo, src.uri, out);
    if (out.length) yield out;
  }
  const out: Json[] = [];
  if (carry) ndjsonLines(carry, lineNo, src.uri, out);
  if (out.length) yield out;
}

/**
 * Adds to `out` the objects of `text`'s lines (each ends at \n, the last one
 * perhaps at the text's end; a \r before it is no part of it; blank lines
 * are skipped), numbered from `firstLine` for errors; returns how many lines.
 */
export function ndjsonLines(text: string, firstLine: number, uri: string, out: Json[]): number {
  let i = firstLine;
  for (let start = 0; start < text.length; ) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    const line = text.charCodeAt(end - 1) === 13 && end > start ? text.slice(start, end - 1) : text.slice(start, end);
    const at = i++;
    start = end + 1;
    if (line.trim() === '') continue;
    let v: unknown;
    try {
      // The one parser of client JSON text: a duplicate key keeps its first value, as in a JSON value.
      v = parseJsonInput(line, false);
    } catch (e) {
      throw ioInvalid(`Error while reading data, error message: JSON parsing error in row starting at position ${at}: ${(e as Error).message} File: ${uri}`);
    }
    if (!isObj(v)) throw ioInvalid(`Error while reading data, error message: JSON table encountered a non-object row ${at + 1} in ${uri}`);
    out.push(v);
  }
  return i - firstLine;
}
