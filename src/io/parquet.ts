// Parquet sources: decoded with hyparquet (loaded on first use) into insertAll rows.
import { ioInvalid, type Json } from './errors.js';
import type { SourceFile } from './objects.js';
import { gunzipSync, gzipSync } from 'node:zlib';
import { parseDate, parseTime, parseTimestamp } from '../types/json-values.js';
import type { SchemaElement, SchemaTree } from 'hyparquet';
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
function microsIso(us: bigint): string {
  const s = us / 1_000_000n - (us % 1_000_000n < 0n ? 1n : 0n);
  const frac = us - s * 1_000_000n;
  return `${new Date(Number(s) * 1000).toISOString().slice(0, 19)}.${frac.toString().padStart(6, '0')}Z`;
}

/** hyparquet's conversions of date/time columns, exact to the microsecond and as the text insertAll takes. */
const PARSERS = {
  timestampFromMilliseconds: (ms: bigint | number) => microsIso(BigInt(ms) * 1000n),
  timestampFromMicroseconds: (us: bigint | number) => microsIso(BigInt(us)),
  timestampFromNanoseconds: (ns: bigint | number) => microsIso(BigInt(ns) / 1000n),
  dateFromDays: (days: number) => new Date(days * 86_400_000).toISOString().slice(0, 10),
};

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
interface ParquetField extends RestField {
  /** TIME columns: the unit of the decoded integer. */
  timeUnit?: 'MILLIS' | 'MICROS' | 'NANOS';
  /** A LIST group kept as its record of repeated records (no list inference): values arrive as arrays. */
  listRecord?: boolean;
  fields?: ParquetField[];
}

/**
 * The REST field of a Parquet schema node. A LIST group is, as the real service
 * loads it, a RECORD holding the REPEATED record of its element (`tags.list.element`),
 * or with list inference (parquetOptions.enableListInference) a REPEATED field of the element.
 */
function fieldOf(node: SchemaTree, listInference: boolean): ParquetField {
  const e = node.element;
  const name = e.name;
  const repeated = e.repetition_type === 'REPEATED';
  const mode = repeated ? 'REPEATED' : e.repetition_type === 'REQUIRED' ? 'REQUIRED' : 'NULLABLE';
  if (!node.children.length) {
    const type = leafType(e);
    const unit = e.logical_type?.type === 'TIME' ? e.logical_type.unit : e.converted_type === 'TIME_MILLIS' ? 'MILLIS' : 'MICROS';
    return { name, type, mode, ...(type === 'TIME' ? { timeUnit: unit } : {}) };
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

/** A decoded value of field `f` as insertAll JSON. */
function convertValue(f: ParquetField, v: unknown, inArray = false): unknown {
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
      return typeof v === 'number' ? String(v) : parquetValue(v);
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
  const { parquetMetadata, parquetReadObjects, parquetSchema } = await import('hyparquet');
  const rows: Json[] = [];
  let fileFields: ParquetField[] | undefined;
  for (const f of files) {
    const ab = f.data.buffer.slice(f.data.byteOffset, f.data.byteOffset + f.data.byteLength) as ArrayBuffer;
    let objs: Record<string, unknown>[];
    let fields: ParquetField[];
    try {
      fields = parquetSchema(parquetMetadata(ab)).children.map((c) => fieldOf(c, listInference));
      // hyparquet decodes SNAPPY itself; GZIP pages (other writers, our own exports) through zlib.
      // utf8: false keeps unannotated byte arrays as bytes (BYTES), as the file declares them.
      objs = await parquetReadObjects({
        file: ab, utf8: false, parsers: PARSERS,
        compressors: { GZIP: (input: Uint8Array) => new Uint8Array(gunzipSync(input)) },
      } as Parameters<typeof parquetReadObjects>[0]);
    } catch (e) {
      throw ioInvalid(`Error while reading data, error message: not a readable Parquet file (${(e as Error).message}) File: ${f.uri}`);
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

/** The REST schema of the file's fields (without the reader's own annotations). */
function stripped(fields: readonly ParquetField[]): RestField[] {
  return fields.map(({ timeUnit: _unit, listRecord: _list, fields: sub, ...f }) => ({ ...f, ...(sub ? { fields: stripped(sub) } : {}) }));
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
