// Parquet sources: decoded with hyparquet (loaded on first use) into insertAll rows.
import { ioInvalid, type Json } from './errors.js';
import type { SourceFile } from './objects.js';
import { gunzipSync, gzipSync } from 'node:zlib';
import { parseDate, parseTime, parseTimestamp } from '../types/json-values.js';
import { inferFromRows, type Parsed, type RestField } from './schema.js';

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
export async function parquetRows(files: readonly SourceFile[], schema: RestField[] | undefined): Promise<Parsed> {
  const { parquetReadObjects } = await import('hyparquet');
  const rows: Json[] = [];
  for (const f of files) {
    const ab = f.data.buffer.slice(f.data.byteOffset, f.data.byteOffset + f.data.byteLength) as ArrayBuffer;
    let objs: Record<string, unknown>[];
    try {
      // hyparquet decodes SNAPPY itself; GZIP pages (other writers, our own exports) through zlib.
      objs = await parquetReadObjects({ file: ab, compressors: { GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)) } });
    } catch (e) {
      throw ioInvalid(`Error while reading data, error message: not a readable Parquet file (${(e as Error).message}) File: ${f.uri}`);
    }
    for (const o of objs) rows.push(parquetValue(o) as Json);
  }
  return { fields: schema ?? inferFromRows(rows), rows };
}

interface ParquetColumn {
  element: Record<string, unknown>;
  data: unknown[];
}

/**
 * One flat Parquet column of an exported field. Scalars keep their physical
 * types (INT64, DOUBLE, BOOLEAN, DATE, TIMESTAMP/TIME in micros); NUMERIC,
 * DATETIME, GEOGRAPHY and JSON are UTF8 text; RECORD and REPEATED columns are
 * written as their JSON text (the emulator writes no nested Parquet groups).
 */
function parquetColumn(f: RestField, rows: readonly Json[]): ParquetColumn {
  const t = f.type.toUpperCase();
  const values = rows.map((r) => r[f.name]);
  const el = (type: string, converted?: string): Record<string, unknown> => ({ name: f.name, type, repetition_type: 'OPTIONAL', ...(converted ? { converted_type: converted } : {}) });
  const map = <T>(fn: (v: unknown) => T): unknown[] => values.map((v) => (v === null || v === undefined ? null : fn(v)));
  if ((f.mode ?? '').toUpperCase() === 'REPEATED' || t === 'RECORD' || t === 'STRUCT') return { element: el('BYTE_ARRAY', 'UTF8'), data: map((v) => JSON.stringify(v)) };
  switch (t) {
    case 'INTEGER':
    case 'INT64':
      return { element: el('INT64'), data: map((v) => BigInt(String(v))) };
    case 'FLOAT':
    case 'FLOAT64':
      return { element: el('DOUBLE'), data: map((v) => Number(v)) };
    case 'BOOLEAN':
    case 'BOOL':
      return { element: el('BOOLEAN'), data: map((v) => v === true || v === 'true') };
    case 'BYTES':
      return { element: el('BYTE_ARRAY'), data: map((v) => new Uint8Array(Buffer.from(String(v), 'base64'))) };
    case 'DATE':
      return { element: el('INT32', 'DATE'), data: map((v) => parseDate(String(v))) };
    case 'TIMESTAMP':
      return { element: el('INT64', 'TIMESTAMP_MICROS'), data: map((v) => parseTimestamp(String(v))) };
    case 'TIME':
      return { element: el('INT64', 'TIME_MICROS'), data: map((v) => BigInt(parseTime(String(v)))) };
    default:
      return { element: el('BYTE_ARRAY', 'UTF8'), data: map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))) };
  }
}

/** Page codecs for EXPORT DATA's compression option: hyparquet-writer ships SNAPPY; GZIP comes from zlib. */
export type ParquetCodec = 'UNCOMPRESSED' | 'SNAPPY' | 'GZIP';

/** Rows (REST JSON values) as one Parquet file (hyparquet-writer, loaded on first use). */
export async function writeParquet(fields: readonly RestField[], rows: readonly Json[], codec: ParquetCodec = 'SNAPPY'): Promise<Buffer> {
  const { parquetWriteBuffer } = await import('hyparquet-writer');
  const cols = fields.map((f) => parquetColumn(f, rows));
  const buf = parquetWriteBuffer({
    columnData: fields.map((f, i) => ({ name: f.name, data: cols[i]!.data })),
    schema: [{ name: 'root', num_children: fields.length }, ...cols.map((c) => c.element)],
    codec,
    compressors: { GZIP: (bytes: Uint8Array) => new Uint8Array(gzipSync(bytes)) },
  } as unknown as Parameters<typeof parquetWriteBuffer>[0]);
  return Buffer.from(buf);
}
