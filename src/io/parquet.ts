// Parquet sources: decoded with hyparquet (loaded on first use) into insertAll
// rows (parquetRows; load-files.ts reads local files into columns instead).
import { open } from 'node:fs/promises';
import { ioInvalid, type Json } from './errors.js';
import type { SourceFile } from './objects.js';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { parseDate, parseTime, parseTimestamp } from '../types/json-values.js';
import { picosTextToMicros } from '../types/picos.js';
import { zstdCompress } from '../functions/compression.js';

/** zstd's own default level. */
const ZSTD_LEVEL = 3;
import type { AsyncBuffer, FileMetaData, SchemaElement, SchemaTree } from 'hyparquet';
import type { Parsed, RestField } from './schema.js';

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

/** Microseconds since the epoch as RFC 3339 with all six fraction digits (a JS Date keeps only milliseconds). */
export function microsIso(us: bigint): string {
  const s = us / 1_000_000n - (us % 1_000_000n < 0n ? 1n : 0n);
  const frac = us - s * 1_000_000n;
  return `${new Date(Number(s) * 1000).toISOString().slice(0, 19)}.${frac.toString().padStart(6, '0')}Z`;
}

/**
 * For decoder workers (their source is JS text): hyparquet's conversions of
 * date/time columns as the text insertAll takes, exact to the microsecond
 * (TEXT_PARSERS, the worker's copy of microsIso), and as raw values
 * (RAW_PARSERS: microseconds as a number where exact, else a bigint; days).
 */
export const WORKER_PARSERS_JS = `
function microsIso(us) {
  const s = us / 1000000n - (us % 1000000n < 0n ? 1n : 0n);
  const frac = us - s * 1000000n;
  return new Date(Number(s) * 1000).toISOString().slice(0, 19) + '.' + frac.toString().padStart(6, '0') + 'Z';
}
const TEXT_PARSERS = {
  timestampFromMilliseconds: (ms) => microsIso(BigInt(ms) * 1000n),
  timestampFromMicroseconds: (us) => microsIso(BigInt(us)),
  timestampFromNanoseconds: (ns) => microsIso(BigInt(ns) / 1000n),
  dateFromDays: (days) => new Date(days * 86400000).toISOString().slice(0, 10),
};
function micros(us) {
  const n = Number(us);
  return Number.isSafeInteger(n) ? n : BigInt(us);
}
const RAW_PARSERS = {
  timestampFromMilliseconds: (ms) => micros(BigInt(ms) * 1000n),
  timestampFromMicroseconds: (us) => micros(us),
  timestampFromNanoseconds: (ns) => micros(BigInt(ns) / 1000n),
  dateFromDays: (days) => days,
};`;

/**
 * For decoder workers: the page decompressors hyparquet does not carry:
 * GZIP through zlib, ZSTD through the zstd wasm package (the codec of
 * Parquet exports with compression ZSTD; loaded by `await withZstd()`, which
 * a worker calls when a file's column chunks use it). hyparquet decodes
 * SNAPPY itself.
 */
export function workerCompressorsJs(): string {
  const zstd = createRequire(import.meta.url).resolve('@bokuweb/zstd-wasm');
  return `
const { gunzipSync } = require('node:zlib');
const compressors = { GZIP: (input) => new Uint8Array(gunzipSync(input)) };
async function withZstd() {
  if (compressors.ZSTD) return;
  const z = require(${JSON.stringify(zstd)});
  await z.init();
  compressors.ZSTD = (input) => z.decompress(input);
}`;
}

/**
 * Decoding runs on a worker thread, ended past a deadline: hyparquet loops
 * without end on some damaged pages (a bit-packed run of width 0 with a huge
 * count; minutes for a 2 KB file), and neither the gateway (load jobs) nor
 * the engine (LOAD DATA) may stall on a file a client sent. The worker gets
 * the file's bytes and hands back hyparquet's row objects, its date/time
 * columns converted by TEXT_PARSERS (above).
 */
function decoderSource(libUrl: string): string {
  return `
const { parentPort } = require('node:worker_threads');
${WORKER_PARSERS_JS}
${workerCompressorsJs()}
const parsers = TEXT_PARSERS;
parentPort.once('message', async (file) => {
  try {
    const lib = await import(${JSON.stringify(libUrl)});
    const metadata = await lib.parquetMetadataAsync(file);
    if (metadata.row_groups.some((g) => g.columns.some((c) => c.meta_data && c.meta_data.codec === 'ZSTD'))) await withZstd();
    // utf8: false keeps unannotated byte arrays as bytes (BYTES), as the file declares them.
    const objs = await lib.parquetReadObjects({ file, metadata, utf8: false, parsers, compressors });
    parentPort.postMessage({ objs });
  } catch (e) {
    parentPort.postMessage({ error: String((e && e.message) || e) });
  }
});`;
}

/** A file may take `baseMs` to decode, plus `perMbMs` per megabyte (tests shorten it). */
export const PARQUET_DEADLINE = { baseMs: 10_000, perMbMs: 1_000 };

function decodeOnWorker(ab: ArrayBuffer): Promise<Record<string, unknown>[]> {
  const libUrl = pathToFileURL(createRequire(import.meta.url).resolve('hyparquet')).href;
  const deadlineMs = PARQUET_DEADLINE.baseMs + (PARQUET_DEADLINE.perMbMs * ab.byteLength) / (1 << 20);
  return new Promise((resolve, reject) => {
    const w = new Worker(decoderSource(libUrl), { eval: true });
    const done = (f: () => void): void => {
      clearTimeout(timer);
      void w.terminate();
      f();
    };
    const timer = setTimeout(() => done(() => reject(new Error(`decoding did not finish within ${Math.round(deadlineMs / 1000)} s`))), deadlineMs);
    w.once('message', (m: { objs?: Record<string, unknown>[]; error?: string }) => done(() => (m.error !== undefined ? reject(new Error(m.error)) : resolve(m.objs!))));
    w.once('error', (e) => done(() => reject(e)));
    // Copied, not transferred: detaching a buffer would slow every typed-array loop of this thread for good (V8's ArrayBufferDetaching protector; executor README).
    w.postMessage(ab);
  });
}

/**
 * The REST type of a Parquet leaf column, from its physical and logical types
 * as the real service maps them (timestamps not adjusted to UTC are DATETIME,
 * decimals NUMERIC or BIGNUMERIC by precision and scale, unannotated byte
 * arrays BYTES).
 */
function leafType(e: SchemaElement): string {
  const lt = e.logical_type?.type;
  const ct = e.converted_type;
  // ENUM stays BYTES (the real default without parquetOptions.enumAsString)
  if (lt === 'STRING' || lt === 'UUID' || ct === 'UTF8') return 'STRING';
  if (lt === 'JSON' || ct === 'JSON') return 'JSON';
  if (lt === 'DECIMAL' || ct === 'DECIMAL') return (e.scale ?? 0) <= 9 && (e.precision ?? 0) - (e.scale ?? 0) <= 29 ? 'NUMERIC' : 'BIGNUMERIC';
  if (lt === 'DATE' || ct === 'DATE') return 'DATE';
  if (lt === 'TIME' || ct === 'TIME_MILLIS' || ct === 'TIME_MICROS') return 'TIME';
  if (e.logical_type?.type === 'TIMESTAMP') return e.logical_type.isAdjustedToUTC === false ? 'DATETIME' : 'TIMESTAMP';
  if (ct === 'TIMESTAMP_MILLIS' || ct === 'TIMESTAMP_MICROS' || e.type === 'INT96') return 'TIMESTAMP';
  switch (e.type) {
    case 'BOOLEAN': return 'BOOLEAN';
    case 'INT32':
    case 'INT64': return 'INTEGER';
    case 'FLOAT':
    case 'DOUBLE': return 'FLOAT';
    default: return 'BYTES';
  }
}

/** A column read as REST type `type`, with what converting its decoded values needs. */
export interface ParquetField extends RestField {
  /** TIME columns: the unit of the decoded integer. */
  timeUnit?: 'MILLIS' | 'MICROS' | 'NANOS';
  /** A LIST group kept as its record of repeated records (no list inference): values arrive as arrays. */
  listRecord?: boolean;
  /** DECIMAL columns: hyparquet hands them over as doubles (see decimalText). */
  decimalScale?: number;
  fields?: ParquetField[];
}

/**
 * The REST field of a Parquet schema node. A LIST group is, as the real service
 * loads it, a RECORD holding the REPEATED record of its element (`tags.list.element`),
 * or with list inference (parquetOptions.enableListInference) a REPEATED field of the element.
 */
export function fieldOf(node: SchemaTree, listInference: boolean): ParquetField {
  const e = node.element;
  const name = e.name;
  const repeated = e.repetition_type === 'REPEATED';
  const mode = repeated ? 'REPEATED' : e.repetition_type === 'REQUIRED' ? 'REQUIRED' : 'NULLABLE';
  if (!node.children.length) {
    const type = leafType(e);
    const unit = e.logical_type?.type === 'TIME' ? e.logical_type.unit : e.converted_type === 'TIME_MILLIS' ? 'MILLIS' : 'MICROS';
    return { name, type, mode, ...(type === 'TIME' ? { timeUnit: unit } : {}), ...(type === 'NUMERIC' || type === 'BIGNUMERIC' ? { decimalScale: e.scale ?? 0 } : {}) };
  }
  if ((e.converted_type === 'LIST' || e.logical_type?.type === 'LIST') && node.children.length === 1) {
    // <list> (repeated group of one <element>) or the legacy 2-level form (the repeated child is the element)
    const rep = node.children[0]!;
    const threeLevel = rep.children.length === 1;
    const elem = threeLevel ? rep.children[0]! : rep;
    if (listInference) return { ...fieldOf(elem, listInference), name, mode: 'REPEATED' };
    if (threeLevel) {
      const inner: ParquetField = { name: rep.element.name, type: 'RECORD', mode: 'REPEATED', fields: [fieldOf(elem, listInference)] };
      return { name, type: 'RECORD', mode, fields: [inner], listRecord: true };
    }
  }
  return { name, type: 'RECORD', mode, fields: node.children.map((c) => fieldOf(c, listInference)) };
}

/**
 * A DECIMAL that hyparquet decoded through a double (1250000000 * 1e-9 is
 * 1.2500000000000002): the 15 significant digits a double holds, in plain notation.
 */
function decimalText(v: number, scale: number): string {
  const r = Number(v.toPrecision(15));
  const t = String(r);
  if (/e/i.test(t) && Number.isInteger(r)) return BigInt(r).toString();
  return /e/i.test(t) ? r.toFixed(Math.min(scale, 20)).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '') : t;
}

/** A decoded value of field `f` (read with TEXT_PARSERS) as insertAll JSON. */
export function convertValue(f: ParquetField, v: unknown, inArray = false): unknown {
  if (v === null || v === undefined) return null;
  if (f.mode === 'REPEATED' && !inArray) return Array.isArray(v) ? v.map((x) => convertValue(f, x, true)) : [];
  switch (f.type) {
    case 'RECORD': {
      if (f.listRecord) {
        // hyparquet hands a LIST over as an array: rebuild the {list: [{element}]} records
        const inner = f.fields![0]!;
        const elem = inner.fields![0]!;
        return { [inner.name]: (Array.isArray(v) ? v : []).map((x) => ({ [elem.name]: convertValue(elem, x) })) };
      }
      const o: Json = {};
      const src = v as Json;
      for (const sub of f.fields ?? []) o[sub.name] = convertValue(sub, src[sub.name]);
      return o;
    }
    case 'TIME': {
      const us = f.timeUnit === 'MILLIS' ? BigInt(v as number) * 1000n : f.timeUnit === 'NANOS' ? BigInt(v as bigint) / 1000n : BigInt(v as bigint);
      return microsIso(us).slice(11, 26);
    }
    case 'DATETIME':
      return typeof v === 'string' ? v.replace(/Z$/, '') : parquetValue(v);
    case 'NUMERIC':
    case 'BIGNUMERIC':
      return typeof v === 'number' ? decimalText(v, f.decimalScale ?? 0) : parquetValue(v);
    default:
      return parquetValue(v);
  }
}

/**
 * Parquet is self-describing: the columns and their types come from the file's
 * schema (the first file's), values are converted by it; a job or table schema,
 * when there is one, names the destination columns.
 */
export async function parquetRows(files: readonly SourceFile[], schema: RestField[] | undefined, listInference = false): Promise<Parsed> {
  const { parquetMetadata, parquetSchema } = await import('hyparquet');
  const rows: Json[] = [];
  let fileFields: ParquetField[] | undefined;
  for (const f of files) {
    const ab = f.data.buffer.slice(f.data.byteOffset, f.data.byteOffset + f.data.byteLength) as ArrayBuffer;
    let objs: Record<string, unknown>[];
    let fields: ParquetField[];
    try {
      fields = parquetSchema(parquetMetadata(ab)).children.map((c) => fieldOf(c, listInference));
      objs = await decodeOnWorker(ab);
    } catch (e) {
      throw unreadable(e, f.uri);
    }
    fileFields ??= fields;
    for (const o of objs) {
      const row: Json = {};
      for (const fd of fields) row[fd.name] = convertValue(fd, o[fd.name]);
      rows.push(row);
    }
  }
  return { fields: schema ?? stripped(fileFields ?? []), rows };
}

/** Bytes [start, end) of a local file as hyparquet reads a file: slices read on demand (the footer, then a row group's column chunks). */
export async function fileRangeBuffer(path: string, start = 0, end?: number): Promise<AsyncBuffer & { close(): Promise<void> }> {
  const fh = await open(path, 'r');
  const stop = end ?? (await fh.stat()).size;
  return {
    byteLength: stop - start,
    async slice(from: number, to?: number): Promise<ArrayBuffer> {
      const n = Math.max(0, Math.min(to ?? stop - start, stop - start) - from);
      const buf = Buffer.allocUnsafeSlow(n);
      for (let off = 0; off < n; ) {
        const { bytesRead } = await fh.read(buf, off, n - off, start + from + off);
        if (bytesRead === 0) throw new Error('unexpected end of file');
        off += bytesRead;
      }
      return buf.buffer as ArrayBuffer;
    },
    close: () => fh.close(),
  };
}

/** A local Parquet file's metadata and fields (the footer only); IoError when it is not a readable Parquet file. */
export async function parquetFileSchema(file: AsyncBuffer, uri: string, listInference: boolean): Promise<{ metadata: FileMetaData; fields: ParquetField[] }> {
  const { parquetMetadataAsync, parquetSchema } = await import('hyparquet');
  try {
    const metadata = await parquetMetadataAsync(file);
    return { metadata, fields: parquetSchema(metadata).children.map((c) => fieldOf(c, listInference)) };
  } catch (e) {
    throw unreadable(e, uri);
  }
}

export function unreadable(e: unknown, uri: string): Error {
  return ioInvalid(`Error while reading data, error message: not a readable Parquet file (${(e as Error).message}) File: ${uri}`);
}

/** The REST schema of the file's fields (without the reader's own annotations). */
export function stripped(fields: readonly ParquetField[]): RestField[] {
  return fields.map(({ timeUnit: _unit, listRecord: _list, decimalScale: _scale, fields: sub, ...f }) => ({ ...f, ...(sub ? { fields: stripped(sub) } : {}) }));
}

/** A NUMERIC/BIGNUMERIC text as its unscaled integer at `scale` (hyparquet-writer writes bigints as DECIMAL bytes exactly). */
function decimalUnscaled(text: string, scale: number): bigint {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (!m) throw ioInvalid(`Invalid NUMERIC value for Parquet: ${text}`);
  const v = BigInt(`${m[2] || '0'}${(m[3] ?? '').padEnd(scale, '0').slice(0, scale)}`);
  return m[1] === '-' ? -v : v;
}

/** The leaf schema element and value conversion of a scalar REST type, as the real service exports it. */
function parquetLeaf(type: string): { element: Record<string, unknown>; value: (v: unknown) => unknown } {
  switch (type) {
    case 'INTEGER':
    case 'INT64':
      return { element: { type: 'INT64' }, value: (v) => BigInt(String(v)) };
    case 'FLOAT':
    case 'FLOAT64':
      return { element: { type: 'DOUBLE' }, value: (v) => Number(v) };
    case 'BOOLEAN':
    case 'BOOL':
      return { element: { type: 'BOOLEAN' }, value: (v) => v === true || v === 'true' };
    case 'BYTES':
      return { element: { type: 'BYTE_ARRAY' }, value: (v) => new Uint8Array(Buffer.from(String(v), 'base64')) };
    case 'DATE':
      return { element: { type: 'INT32', converted_type: 'DATE' }, value: (v) => parseDate(String(v)) };
    case 'TIMESTAMP':
      return { element: { type: 'INT64', converted_type: 'TIMESTAMP_MICROS' }, value: (v) => parseTimestamp(String(v)) };
    case 'TIMESTAMP(12)':
      // Twelve-digit cells, written as the microsecond (TIMESTAMP_MICROS, as the other TIMESTAMPs).
      return { element: { type: 'INT64', converted_type: 'TIMESTAMP_MICROS' }, value: (v) => picosTextToMicros(String(v)) };
    case 'DATETIME':
      // a local timestamp: micros of the civil time read as UTC, not adjusted
      return {
        element: { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' } },
        value: (v) => parseTimestamp(`${String(v).replace(' ', 'T')}Z`),
      };
    case 'TIME':
      return { element: { type: 'INT64', converted_type: 'TIME_MICROS' }, value: (v) => BigInt(parseTime(String(v))) };
    case 'NUMERIC':
      return { element: { type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, converted_type: 'DECIMAL', precision: 38, scale: 9 }, value: (v) => decimalUnscaled(String(v), 9) };
    case 'BIGNUMERIC':
      return { element: { type: 'FIXED_LEN_BYTE_ARRAY', type_length: 32, converted_type: 'DECIMAL', precision: 76, scale: 38 }, value: (v) => decimalUnscaled(String(v), 38) };
    default:
      // STRING, JSON, GEOGRAPHY, INTERVAL, RANGE: UTF8 text
      return { element: { type: 'BYTE_ARRAY', converted_type: 'UTF8' }, value: (v) => (typeof v === 'object' ? JSON.stringify(v) : String(v)) };
  }
}

/** An exported field's schema elements (depth first) and the conversion of its REST JSON values to the writer's. */
interface ParquetColumn {
  elements: Record<string, unknown>[];
  value: (v: unknown) => unknown;
}

/**
 * One exported field as the real service writes it: scalars with their
 * physical and logical types (NUMERIC/BIGNUMERIC as DECIMAL, DATETIME as a
 * local TIMESTAMP), RECORD as a group, REPEATED as a 3-level LIST
 * (`name.list.element`).
 */
function parquetColumn(f: RestField, repetition = (f.mode ?? '').toUpperCase() === 'REQUIRED' ? 'REQUIRED' : 'OPTIONAL'): ParquetColumn {
  if ((f.mode ?? '').toUpperCase() === 'REPEATED') {
    const elem = parquetColumn({ ...f, name: 'element', mode: 'NULLABLE' }, 'REQUIRED');
    return {
      elements: [
        { name: f.name, repetition_type: 'OPTIONAL', num_children: 1, converted_type: 'LIST' },
        { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
        ...elem.elements,
      ],
      value: (v) => (Array.isArray(v) ? v.map(elem.value) : []),
    };
  }
  const t = f.type.toUpperCase();
  if (t === 'RECORD' || t === 'STRUCT') {
    const subs = (f.fields ?? []).map((sub) => ({ name: sub.name, col: parquetColumn(sub) }));
    return {
      elements: [{ name: f.name, repetition_type: repetition, num_children: subs.length }, ...subs.flatMap((x) => x.col.elements)],
      value: (v) => {
        if (v === null || v === undefined) return null;
        const o: Json = {};
        for (const x of subs) o[x.name] = x.col.value((v as Json)[x.name]);
        return o;
      },
    };
  }
  const leaf = parquetLeaf(t === 'TIMESTAMP' && f.timestampPrecision === '12' ? 'TIMESTAMP(12)' : t);
  return {
    elements: [{ name: f.name, repetition_type: repetition, ...leaf.element }],
    value: (v) => (v === null || v === undefined ? null : leaf.value(v)),
  };
}

/** Page codecs for EXPORT DATA's compression option: hyparquet-writer ships SNAPPY; GZIP comes from zlib, ZSTD from the zstd wasm package. */
export type ParquetCodec = 'UNCOMPRESSED' | 'SNAPPY' | 'GZIP' | 'ZSTD';

/** Rows (REST JSON values) as one Parquet file (hyparquet-writer, loaded on first use). */
export async function writeParquet(fields: readonly RestField[], rows: readonly Json[], codec: ParquetCodec = 'SNAPPY'): Promise<Buffer> {
  const { parquetWriteBuffer } = await import('hyparquet-writer');
  const cols = fields.map((f) => parquetColumn(f));
  const buf = parquetWriteBuffer({
    columnData: fields.map((f, i) => ({ name: f.name, data: rows.map((r) => cols[i]!.value(r[f.name])) })),
    schema: [{ name: 'root', num_children: fields.length }, ...cols.flatMap((c) => c.elements)],
    codec,
    compressors: { GZIP: (bytes: Uint8Array) => new Uint8Array(gzipSync(bytes)), ZSTD: (bytes: Uint8Array) => zstdCompress(bytes, ZSTD_LEVEL) },
  } as unknown as Parameters<typeof parquetWriteBuffer>[0]);
  return Buffer.from(buf);
}
