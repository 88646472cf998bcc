// Parquet fragments: one file per compaction, flat columns, see README.md for
// the type mapping. Complex values are stored as the JSON text of their
// storage form (codec.ts) so every warehouse type round-trips exactly.
import * as fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
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
import { getValue, layoutOf, sliceVector, vectorFromValues, type Batch, type Vector } from '../types/vector.js';
import { Decimal, Geography, JsonValue } from '../types/values.js';
import { jsonValueText, parseJsonText } from '../types/json-values.js';
import { fromStored, toStored, type Stored } from './codec.js';
import { nullVector } from './vectors.js';
import { parquetFieldNames } from './nested-parquet.js';

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
              ? jsonValueText(x as JsonValue)
              : t.kind === 'GEOGRAPHY'
                ? (x as Geography).wkt
                : (x as Decimal).toFixed();
      } else out[k++] = JSON.stringify(toStored(t, x));
    }
  }
  return out;
}

/** Rows per row group. */
const ROW_GROUP = 16384;
/**
 * Pages are written uncompressed. hyparquet-writer's default, its pure-JS
 * snappy, was about 40% of the encoder's CPU: a 1M-row, 3-column CTAS took
 * ~1.0 s (encoder ~0.7 s) with it and ~0.6 s (encoder ~0.3-0.4 s) without.
 * The files are local and about twice the size; reading them back is as fast.
 * Fragments written before (SNAPPY) are read as they are.
 */
export const PAGE_CODEC = 'UNCOMPRESSED';
export type PageCodec = typeof PAGE_CODEC | 'SNAPPY';

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
 * One column of one row group as sent to the encoder: fixed-width layouts as
 * a fresh typed array (cloned by memcpy, expanded to writer values in the
 * worker), everything else as the writer's values (strings, bytes, null).
 */
type GroupColumn =
  | { readonly values: unknown[] }
  | { readonly fixed: Float64Array | BigInt64Array | Int32Array | Uint8Array; readonly nulls: Uint8Array | null; readonly as: 'number' | 'bigint' | 'bool' }
  | { readonly text: string; readonly ends: Int32Array; readonly nulls: Uint8Array | null };

/**
 * Text columns go to the encoder as one string and where each value ends:
 * posting an array of 16k strings cost the engine's main thread about as much
 * as converting them (a WAL fold during an insert stream took requests from
 * ~2.7 to ~7 ms); one long string is copied in one piece. Longer texts than
 * this stay an array (V8 caps string length).
 */
const PACKED_TEXT_MAX = 64 * 1024 * 1024;

/** `values` (strings and nulls) packed for the encoder; null when too long. */
function packText(values: readonly unknown[]): GroupColumn | null {
  const n = values.length;
  const ends = new Int32Array(n);
  let nulls: Uint8Array | null = null;
  let len = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v === null || v === undefined) (nulls ??= new Uint8Array(n))[i] = 1;
    else {
      len += (v as string).length;
      if (len > PACKED_TEXT_MAX) return null;
    }
    ends[i] = len;
  }
  // join writes null and undefined as ''.
  return { text: values.join(''), ends, nulls };
}

function groupColumn(col: Column, vecs: readonly Vector[]): GroupColumn {
  const as = col.type.kind === 'TIME' || layoutOf(col.type) === 'i64' ? 'bigint' : layoutOf(col.type) === 'bool' ? 'bool' : layoutOf(col.type) === 'values' ? null : 'number';
  const first = vecs[0]?.data;
  if (as === null || first === undefined || Array.isArray(first) || !vecs.every((v) => v.data.constructor === first.constructor)) {
    const values = columnData(col, vecs);
    // Every value of these forms is a string or null.
    return (parquetMapping(col.type).form !== 'native' && packText(values)) || { values };
  }
  const total = vecs.reduce((n, v) => n + v.length, 0);
  // A fresh array, not a view: cloning a view would copy its whole buffer.
  const fixed = new (first.constructor as new (n: number) => Float64Array)(total);
  const anyNulls = vecs.some((v) => v.nulls !== null);
  const nulls = anyNulls ? new Uint8Array(total) : null;
  let k = 0;
  for (const v of vecs) {
    fixed.set(v.data as Float64Array, k);
    if (nulls && v.nulls) nulls.set(v.nulls, k);
    k += v.length;
  }
  return { fixed, nulls, as };
}

type Group = { name: string; col: GroupColumn }[];

/** A group column as hyparquet-writer values. Self-contained: the worker runs it from its source text. */
function expandColumn(c: GroupColumn): unknown[] {
  if ('values' in c) return c.values;
  if ('text' in c) {
    const { text, ends, nulls } = c;
    const values = new Array<unknown>(ends.length);
    for (let i = 0, start = 0; i < ends.length; start = ends[i]!, i++) values[i] = nulls !== null && nulls[i] === 1 ? null : text.slice(start, ends[i]!);
    return values;
  }
  const { fixed, nulls, as } = c;
  const out = new Array<unknown>(fixed.length);
  for (let i = 0; i < fixed.length; i++) {
    if (nulls !== null && nulls[i] === 1) out[i] = null;
    else if (as === 'bigint') out[i] = BigInt(fixed[i]!);
    else if (as === 'bool') out[i] = fixed[i] === 1;
    else out[i] = fixed[i];
  }
  return out;
}

// The compaction encoder runs on a worker thread so that folding a WAL into a
// fragment (~3 µs/row of CPU) never stalls inserts and queries on the engine's
// event loop. The worker is plain JS built from expandColumn's source (works
// the same bundled, under tsx and under vitest) and imports hyparquet-writer by
// its resolved file URL. A fragment goes over one row group at a time, each
// acknowledged before the next is built, so neither thread ever holds more
// than a group of converted values. If the worker cannot start, encoding
// falls back to this thread (yielding between groups).
const WORKER_IDLE_MS = 10_000;
let worker: Worker | null = null;
let workerBroken = false;
let workerIdle: NodeJS.Timeout | null = null;
let nextJob = 1;
type Reply = { id: number; kind: 'ack' } | { id: number; kind: 'done'; buf: ArrayBuffer } | { id: number; kind: 'error'; error: string };
/** The one outstanding request of each job. */
const waiting = new Map<number, { resolve: (r: Reply) => void; reject: (e: Error) => void }>();

function workerSource(libUrl: string): string {
  return `'use strict';
const { parentPort } = require('node:worker_threads');
const __name = (f) => f; // esbuild's keepNames helper, should the transpiler have added it
const expandColumn = ${expandColumn.toString()};
let lib = null;
const jobs = new Map();
let chain = Promise.resolve();
parentPort.on('message', (m) => {
  chain = chain.then(() => handle(m));
});
async function handle(m) {
  try {
    lib ??= await import(${JSON.stringify(libUrl)});
    if (m.kind === 'start') {
      const writer = new lib.ByteWriter();
      jobs.set(m.id, { writer, pw: new lib.ParquetWriter({ writer, schema: m.schema, statistics: false, codec: m.codec, kvMetadata: m.kv }) });
      parentPort.postMessage({ id: m.id, kind: 'ack' });
    } else if (m.kind === 'group') {
      jobs.get(m.id).pw.write({ columnData: m.group.map((c) => ({ name: c.name, data: expandColumn(c.col) })), rowGroupSize: m.rowGroup });
      parentPort.postMessage({ id: m.id, kind: 'ack' });
    } else {
      const j = jobs.get(m.id);
      jobs.delete(m.id);
      j.pw.finish();
      const buf = j.writer.getBuffer();
      parentPort.postMessage({ id: m.id, kind: 'done', buf }, [buf]);
    }
  } catch (e) {
    jobs.delete(m.id);
    parentPort.postMessage({ id: m.id, kind: 'error', error: String((e && e.stack) || e) });
  }
}`;
}

function failAll(e: Error): void {
  for (const j of waiting.values()) j.reject(e);
  waiting.clear();
}

function getWorker(): Worker | null {
  if (workerBroken) return null;
  if (worker) return worker;
  try {
    const libUrl = pathToFileURL(createRequire(import.meta.url).resolve('hyparquet-writer')).href;
    const w = new Worker(workerSource(libUrl), { eval: true });
    w.on('message', (m: Reply) => {
      const j = waiting.get(m.id);
      if (!j) return;
      waiting.delete(m.id);
      if (m.kind === 'error') j.reject(new Error(`parquet encoder: ${m.error}`));
      else j.resolve(m);
    });
    // Only the current worker can have requests out: one let go when idle had none.
    w.on('error', (e) => {
      if (worker !== w) return;
      worker = null;
      failAll(e);
    });
    w.on('exit', () => {
      if (worker !== w) return;
      worker = null;
      failAll(new Error('parquet encoder worker exited'));
    });
    w.unref();
    worker = w;
    return w;
  } catch {
    workerBroken = true;
    return null;
  }
}

let activeJobs = 0;

/** Lets an idle worker go (its heap is tens of MB); the next compaction starts another. */
function idleWorker(): void {
  if (workerIdle) clearTimeout(workerIdle);
  workerIdle = setTimeout(() => {
    workerIdle = null;
    if (activeJobs === 0 && worker) {
      const w = worker;
      worker = null;
      void w.terminate();
    }
  }, WORKER_IDLE_MS);
  workerIdle.unref();
}

function request(w: Worker, msg: { id: number; kind: string } & Record<string, unknown>): Promise<Reply> {
  return new Promise<Reply>((resolve, reject) => {
    waiting.set(msg.id, { resolve, reject });
    w.postMessage(msg);
  });
}

const yieldToLoop = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * Encodes the rows of `batches` (columns in `columns` order) as one parquet
 * file image. The encoding itself runs on a worker thread; this thread only
 * copies each row group's column data into arrays the worker can take.
 */
export async function encodeFragment(
  columns: readonly Column[],
  batches: readonly Batch[],
  meta: Record<string, string>,
  /** Only tests pass another codec (fragments as earlier versions wrote them). */
  codec: PageCodec = PAGE_CODEC,
): Promise<Uint8Array> {
  const schema: Record<string, unknown>[] = [{ name: 'root', num_children: columns.length }];
  for (const c of columns) {
    const m = parquetMapping(c.type);
    const el: Record<string, unknown> = { name: c.name, type: m.physical, repetition_type: 'OPTIONAL' };
    if (m.converted) el.converted_type = m.converted;
    schema.push(el);
  }
  const total = batches.reduce((n, b) => n + b.length, 0);
  const kv = Object.entries(meta).map(([key, value]) => ({ key, value }));
  const group = (start: number): Group => {
    const slice = sliceRows(batches, start, Math.min(total, start + ROW_GROUP));
    return columns.map((c, ci) => ({ name: c.name, col: groupColumn(c, slice.map((b) => b.columns[ci]!)) }));
  };
  const w = getWorker();
  if (w) {
    if (workerIdle) clearTimeout(workerIdle);
    workerIdle = null;
    const id = nextJob++;
    // Referenced while a job is out, so a pending compaction keeps the process alive.
    if (activeJobs++ === 0) w.ref();
    try {
      await request(w, { id, kind: 'start', schema, kv, codec });
      for (let start = 0; start < total; start += ROW_GROUP) await request(w, { id, kind: 'group', group: group(start), rowGroup: ROW_GROUP });
      const done = await request(w, { id, kind: 'finish' });
      if (done.kind === 'done') return new Uint8Array(done.buf);
    } catch (e) {
      // Whatever went wrong in the worker, the encoding is redone here; a
      // worker that fails is not started again.
      if (!workerBroken) console.error(`parquet encoder worker failed, encoding on the main thread from now on: ${e instanceof Error ? e.message : String(e)}`);
      workerBroken = true;
    } finally {
      if (--activeJobs === 0) {
        w.unref();
        idleWorker();
      }
    }
  }
  const lib = await loadWriter();
  const writer = new lib.ByteWriter();
  const pw = new lib.ParquetWriter({ writer, schema: schema as never, statistics: false, codec, kvMetadata: kv });
  for (let start = 0; start < total; start += ROW_GROUP) {
    await pw.write({ columnData: group(start).map((c) => ({ name: c.name, data: expandColumn(c.col) })) as never, rowGroupSize: ROW_GROUP });
    await yieldToLoop();
  }
  await pw.finish();
  return new Uint8Array(writer.getBuffer());
}

function decodeColumn(t: SqlType, raw: ArrayLike<unknown>): Vector {
  const fast = decodeFixedWidth(t, raw);
  if (fast) return fast;
  const n = raw.length;
  const vals = new Array<Value>(n);
  for (let i = 0; i < n; i++) vals[i] = rawValue(t, raw[i]);
  return vectorFromValues(t, vals);
}

// A value's text is its code points: a leading U+FEFF is a character, not a byte-order mark to drop.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * One value as hyparquet read it: a leaf's, a storage-form JSON text (ARRAY
 * and STRUCT columns before nested columns), or a nested column's (lists as
 * arrays, structs as objects by their parquet field names).
 */
function rawValue(t: SqlType, x: unknown): Value {
  if (x === null || x === undefined) return t.kind === 'ARRAY' ? [] : null;
  if (t.kind === 'ARRAY' && Array.isArray(x)) return x.map((e) => rawValue(t.element, e));
  if (t.kind === 'STRUCT' && typeof x === 'object' && !(x instanceof Uint8Array)) {
    const names = parquetFieldNames(t);
    return t.fields.map((f, i) => rawValue(f.type, (x as Record<string, unknown>)[names[i]!]));
  }
  const m = parquetMapping(t);
  if (m.form === 'native') {
    switch (t.kind) {
      case 'INT64':
      case 'DATETIME':
      case 'TIMESTAMP':
        return typeof x === 'bigint' ? x : BigInt(x as number);
      case 'TIME':
        return Number(x as bigint);
      case 'BYTES':
        return typeof x === 'string' ? new TextEncoder().encode(x) : (x as Uint8Array);
      default:
        return x as Value;
    }
  }
  const s = typeof x === 'string' ? x : utf8.decode(x as Uint8Array);
  if (m.form === 'stored-json') return fromStored(t, JSON.parse(s) as Stored);
  if (t.kind === 'STRING') return s;
  if (t.kind === 'JSON') return new JsonValue(parseJsonText(s));
  if (t.kind === 'GEOGRAPHY') return new Geography(null, s);
  return new Decimal(s);
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
      for (let i = 0; i < n; i++) {
        const x = raw[i];
        if (x === null || x === undefined) {
          markNull(i);
          d[i] = null;
        } else d[i] = typeof x === 'string' ? x : utf8.decode(x as Uint8Array);
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
        stringFromBytes: (b: Uint8Array) => (b === undefined || b === null ? b : utf8.decode(b)),
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
