// Parquet sources: decoded with hyparquet (loaded on first use) into insertAll rows.
import { ioInvalid, type Json } from './errors.js';
import type { SourceFile } from './objects.js';
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
      objs = await parquetReadObjects({ file: ab });
    } catch (e) {
      throw ioInvalid(`Error while reading data, error message: not a readable Parquet file (${(e as Error).message}) File: ${f.uri}`);
    }
    for (const o of objs) rows.push(parquetValue(o) as Json);
  }
  return { fields: schema ?? inferFromRows(rows), rows };
}
