// Parquet fragments: one file per compaction, flat columns, see README.md for
// the type mapping. Complex values are stored as the JSON text of their
// storage form (codec.ts) so every warehouse type round-trips exactly.
import * as fsp from 'node:fs/promises';
// hyparquet and hyparquet-writer load on first use (start-up and idle memory).
type Reader = typeof import('hyparquet');
type Writer = typeof import('hyparquet-writer');
let reader: Promise<Reader> | null = null;
let writerLib: Promise<Writer> | null = null;
const loadReader = (): Promise<Reader> => (reader ??= import('hyparquet'));
const loadWriter = (): Promise<Writer> => (writerLib ??= import('hyparquet-writer'));
import type { Column } from '../types/schema.js';
import type { SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { getValue, sliceVector, vectorFromValues, type Batch, type Vector } from '../types/vector.js';
import { Decimal, Geography, JsonValue } from '../types/values.js';
import { jsonNodeToText, parseJsonText } from '../types/json-values.js';
import { fromStored, toStored, type Stored } from './codec.js';
import { nullVector } from './vectors.js';

type Physical = 'INT64' | 'INT32' | 'DOUBLE' | 'BOOLEAN' | 'BYTE_ARRAY';

interface Mapping {
  readonly physical: Physical;
  readonly converted?: 'UTF8' | 'DATE' | 'TIME_MICROS' | 'TIMESTAMP_MICROS';
  /** How values are written/read: native, a plain string, or storage-form JSON text. */
  readonly form: 'native' | 'string' | 'stored-json';
}

export function parquetMapping(t: SqlType): Mapping {
  switch (t.kind) {
    case 'INT64':
      return { physical: 'INT64', form: 'native' };
    case 'DATETIME':
      return { physical: 'INT64', form: 'native' };
    case 'TIMESTAMP':
      return { physical: 'INT64', converted: 'TIMESTAMP_MICROS', form: 'native' };
    case 'TIME':
      return { physical: 'INT64', converted: 'TIME_MICROS', form: 'native' };
    case 'DATE':
      return { physical: 'INT32', converted: 'DATE', form: 'native' };
    case 'FLOAT64':
      return { physical: 'DOUBLE', form: 'native' };
    case 'BOOL':
      return { physical: 'BOOLEAN', form: 'native' };
    case 'BYTES':
      return { physical: 'BYTE_ARRAY', form: 'native' };
    case 'STRING':
    case 'NUMERIC':
    case 'BIGNUMERIC':
    case 'GEOGRAPHY':
    case 'JSON':
      return { physical: 'BYTE_ARRAY', converted: 'UTF8', form: 'string' };
    default:
      return { physical: 'BYTE_ARRAY', converted: 'UTF8', form: 'stored-json' };
  }
}

function columnData(col: Column, vecs: readonly Vector[]): unknown[] {
  const total = vecs.reduce((n, v) => n + v.length, 0);
  const out = new Array<unknown>(total);
  const m = parquetMapping(col.type);
  const t = col.type;
  let k = 0;
  for (const v of vecs) {
    for (let i = 0; i < v.length; i++) {
      const x = getValue(v, i);
      if (x === null) {
        out[k++] = null;
        continue;
      }
      if (m.form === 'native') out[k++] = t.kind === 'TIME' ? BigInt(x as number) : x;
      else if (m.form === 'string') {
        out[k++] =
          t.kind === 'STRING'
            ? x
            : t.kind === 'JSON'
              ? jsonNodeToText((x as JsonValue).node)
              : t.kind === 'GEOGRAPHY'
                ? (x as Geography).wkt
                : (x as Decimal).toFixed();
      } else out[k++] = JSON.stringify(toStored(t, x));
    }
  }
  return out;
}

/** Rows per row group; also the unit of work between event-loop yields. */
const ROW_GROUP = 16384;

const yieldToLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

function sliceRows(batches: readonly Batch[], start: number, end: number): Batch[] {
  const out: Batch[] = [];
  let off = 0;
  for (const b of batches) {
    const bs = off;
    off += b.length;
    if (off <= start || bs >= end) continue;
    const s = Math.max(start, bs) - bs;
    const e = Math.min(end, off) - bs;
    out.push(s === 0 && e === b.length ? b : { length: e - s, columns: b.columns.map((v) => sliceVector(v, s, e)) });
  }
  return out;
}

/**
 * Encodes the rows of `batches` (columns in `columns` order) as one parquet
 * file image, one row group at a time, yielding to the event loop between
 * groups so that a compaction never stalls the engine's other calls for long.
 */
export async function encodeFragment(columns: readonly Column[], batches: readonly Batch[], meta: Record<string, string>): Promise<Uint8Array> {
  const schema: Record<string, unknown>[] = [{ name: 'root', num_children: columns.length }];
  for (const c of columns) {
    const m = parquetMapping(c.type);
    const el: Record<string, unknown> = { name: c.name, type: m.physical, repetition_type: 'OPTIONAL' };
    if (m.converted) el.converted_type = m.converted;
    schema.push(el);
  }
  const { ByteWriter, ParquetWriter } = await loadWriter();
  const writer = new ByteWriter();
  const pw = new ParquetWriter({
    writer,
    // hyparquet-writer's SchemaElement is structural; the elements above follow it.
    schema: schema as never,
    statistics: false,
    kvMetadata: Object.entries(meta).map(([key, value]) => ({ key, value })),
  });
  const total = batches.reduce((n, b) => n + b.length, 0);
  for (let start = 0; start < total; start += ROW_GROUP) {
    const slice = sliceRows(batches, start, Math.min(total, start + ROW_GROUP));
    const sources = columns.map((c, ci) => ({ name: c.name, data: columnData(c, slice.map((b) => b.columns[ci]!)) }));
    await pw.write({ columnData: sources as never, rowGroupSize: ROW_GROUP });
    await yieldToLoop();
  }
  await pw.finish();
  return new Uint8Array(writer.getBuffer());
}

function decodeColumn(t: SqlType, raw: ArrayLike<unknown>): Vector {
  const fast = decodeFixedWidth(t, raw);
  if (fast) return fast;
  const m = parquetMapping(t);
  const n = raw.length;
  const vals = new Array<Value>(n);
  const dec = new TextDecoder();
  for (let i = 0; i < n; i++) {
    const x = raw[i];
    if (x === null || x === undefined) {
      vals[i] = t.kind === 'ARRAY' ? [] : null;
      continue;
    }
    if (m.form === 'native') {
      switch (t.kind) {
        case 'INT64':
        case 'DATETIME':
        case 'TIMESTAMP':
          vals[i] = typeof x === 'bigint' ? x : BigInt(x as number);
          break;
        case 'TIME':
          vals[i] = Number(x as bigint);
          break;
        case 'BYTES':
          vals[i] = typeof x === 'string' ? new TextEncoder().encode(x) : (x as Uint8Array);
          break;
        default:
          vals[i] = x as Value;
      }
      continue;
    }
    const s = typeof x === 'string' ? x : dec.decode(x as Uint8Array);
    if (m.form === 'stored-json') vals[i] = fromStored(t, JSON.parse(s) as Stored);
    else if (t.kind === 'STRING') vals[i] = s;
    else if (t.kind === 'JSON') vals[i] = new JsonValue(parseJsonText(s));
    else if (t.kind === 'GEOGRAPHY') vals[i] = new Geography(null, s);
    else vals[i] = new Decimal(s);
  }
  return vectorFromValues(t, vals);
}

/** Typed-array layouts straight from the decoded column (no per-value boxing). */
function decodeFixedWidth(t: SqlType, raw: ArrayLike<unknown>): Vector | null {
  const n = raw.length;
  let nulls: Uint8Array | null = null;
  const markNull = (i: number): void => {
    nulls ??= new Uint8Array(n);
    nulls[i] = 1;
  };
  switch (t.kind) {
    case 'INT64':
    case 'DATETIME':
    case 'TIMESTAMP':
    case 'TIME':
    case 'FLOAT64': {
      const d = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const x = raw[i];
        if (x === null || x === undefined) markNull(i);
        else if (typeof x === 'bigint') {
          // Beyond 2^53 the exact BigInt64Array layout is needed: take the general path.
          if (x > 9007199254740992n || x < -9007199254740992n) return null;
          d[i] = Number(x);
        } else d[i] = x as number;
      }
      return { type: t, length: n, data: d, nulls };
    }
    case 'DATE': {
      const d = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const x = raw[i];
        if (x === null || x === undefined) markNull(i);
        else d[i] = x as number;
      }
      return { type: t, length: n, data: d, nulls };
    }
    case 'BOOL': {
      const d = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const x = raw[i];
        if (x === null || x === undefined) markNull(i);
        else d[i] = x ? 1 : 0;
      }
      return { type: t, length: n, data: d, nulls };
    }
    case 'STRING': {
      const d = new Array<Value>(n);
      const dec = new TextDecoder();
      for (let i = 0; i < n; i++) {
        const x = raw[i];
        if (x === null || x === undefined) {
          markNull(i);
          d[i] = null;
        } else d[i] = typeof x === 'string' ? x : dec.decode(x as Uint8Array);
      }
      return { type: t, length: n, data: d, nulls };
    }
    default:
      return null;
  }
}

export interface FragmentContent {
  readonly batch: Batch;
  readonly meta: Record<string, string>;
}

/**
 * Reads a fragment into one batch with the table's current `columns`: columns
 * the fragment lacks (added later by ALTER/patch) read as NULL.
 */
export async function readFragment(file: string, columns: readonly Column[]): Promise<FragmentContent> {
  const { parquetMetadata, parquetRead } = await loadReader();
  const buf = await fsp.readFile(file);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const md = parquetMetadata(ab);
  const n = Number(md.num_rows);
  const meta: Record<string, string> = {};
  for (const kv of md.key_value_metadata ?? []) meta[kv.key] = kv.value ?? '';
  const present = new Set(md.schema.slice(1).map((e) => e.name));
  const chunks = new Map<string, unknown[]>();
  const wanted = columns.filter((c) => present.has(c.name)).map((c) => c.name);
  if (wanted.length > 0 && n > 0) {
    await parquetRead({
      file: ab,
      columns: wanted,
      utf8: false,
      // Keep raw integers: the value forms are micros/days, not Date objects.
      parsers: {
        timestampFromMicroseconds: (x: bigint) => x,
        timestampFromMilliseconds: (x: bigint) => x * 1000n,
        dateFromDays: (d: number) => d,
        stringFromBytes: (b: Uint8Array) => (b === undefined || b === null ? b : new TextDecoder().decode(b)),
      },
      onChunk: (c) => {
        let arr = chunks.get(c.columnName);
        if (!arr) {
          arr = new Array<unknown>(n);
          chunks.set(c.columnName, arr);
        }
        const d = c.columnData as ArrayLike<unknown>;
        for (let i = 0; i < d.length; i++) arr[c.rowStart + i] = d[i];
      },
    });
  }
  const vectors = columns.map((c) => {
    const raw = chunks.get(c.name);
    return raw ? decodeColumn(c.type, raw) : nullVector(c.type, n);
  });
  return { batch: { length: n, columns: vectors }, meta };
}
