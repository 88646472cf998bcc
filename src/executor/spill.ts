// Operator state that does not fit the engine's memory budget goes to spill
// files: batches written one after another as frames (typed columns as their
// bytes, values in their storage form; see encodeFrame) and read back in order. Files live under the
// spill directory (the engine's `<data dir>/.spill`, emptied at start-up; a
// temp directory in-process) and are deleted when the operator is done.
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync, writevSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import type { SqlType } from '../types/types.js';
import { sliceVector, type Batch, type Vector } from '../types/vector.js';
import { memoryBudget } from '../storage/memory-budget.js';
import { hashRows } from './hash.js';
import { decodeBatch, encodeBatch, type EncodedBatch } from './parallel/codec.js';
import { ColumnBuffer, Phys, physOf, VALUE_BYTES } from './vectors.js';
import { mix32 } from './values-compare.js';

let spillDir = path.join(tmpdir(), `warehouse-spill-${process.pid}`);
let nextFile = 0;

/** Where spill files go (the engine: under its data directory); anything left there is removed. */
export function setSpillDir(dir: string): void {
  spillDir = dir;
  rmSync(dir, { recursive: true, force: true });
}

/**
 * When operators spill: past `share` of the engine's memory limit (the chunk
 * caches hold the rest: giving way, they keep the engine near the limit), into
 * `partitions` files by key (each then holds ~1/partitions of the state).
 * Tunables for tests.
 */
export const spillOptions = { share: 0.6, partitions: 32 };

/** Rows per slice when whole columns are written. */
const SPILL_BATCH = 64 * 1024;

/**
 * What spilled (tests and the bench read them); `rawRows`: input rows a GROUP BY of nearly unique keys wrote as they came;
 * `rangePlans`: GROUP BYs that split their key's range (from statistics) between memory and files before reading;
 * `wholePlans`: those that kept it whole in memory past half their share (aggregate-spill.ts planByRange).
 */
export const spillCounters = { files: 0, batches: 0, bytes: 0, rawRows: 0, rangePlans: 0, wholePlans: 0 };

/** One spill file: batches appended, then read back in order (any number of times), then removed. */
export class SpillFile {
  private fd: number;
  readonly path: string;
  bytes = 0;
  batches = 0;
  rows = 0;

  constructor() {
    mkdirSync(spillDir, { recursive: true });
    this.path = path.join(spillDir, `${process.pid}-${nextFile++}.spill`);
    this.fd = openSync(this.path, 'w+');
    spillCounters.files++;
  }

  write(b: Batch): void {
    if (b.length === 0) return;
    const frame = encodeFrame(b);
    let bytes = 0;
    for (const part of frame) bytes += part.byteLength;
    const written = writevSync(this.fd, frame, this.bytes);
    if (written < bytes) writeAll(this.fd, Buffer.concat(frame).subarray(written), this.bytes + written);
    this.bytes += bytes;
    this.batches++;
    this.rows += b.length;
    spillCounters.batches++;
    spillCounters.bytes += bytes;
  }

  /**
   * The batches written, in order. `reuse`: the caller is done with each
   * batch before it takes the next (it copies what it keeps), so every batch
   * is read into the same memory: no garbage to collect.
   */
  *read(reuse = false): Generator<Batch> {
    const head = new Uint8Array(8);
    const headView = new DataView(head.buffer);
    let buffer = new ArrayBuffer(0);
    for (let at = 0; at < this.bytes; ) {
      readSync(this.fd, head, 0, 8, at);
      const n = headView.getUint32(0, true);
      // Memory at offset 0 of its buffer: typed arrays are views of it at 8-byte aligned offsets.
      if (!reuse || buffer.byteLength < n) buffer = new ArrayBuffer(reuse ? Math.max(n, 2 * buffer.byteLength) : n);
      const body = new Uint8Array(buffer, 0, n);
      readSync(this.fd, body, 0, n, at + 8);
      at += 8 + n;
      if (!reuse) memoryBudget.dropped(n);
      yield decodeFrame(body, headView.getUint32(4, true));
    }
  }

  close(): void {
    if (this.fd < 0) return;
    closeSync(this.fd);
    this.fd = -1;
    rmSync(this.path, { force: true });
  }
}

// A frame: [body bytes u32][header bytes u32], then the body: a header
// (v8.serialize: row count, each column's type and layout, value-layout
// columns in storage form) and each typed column's values and NULL flags as
// they are in memory, every part at an 8-byte aligned offset. Typed columns
// are written straight from their arrays and read back as views of the
// frame's buffer: no copy, no per-value work.

function writeAll(fd: number, b: Uint8Array, at: number): void {
  for (let done = 0; done < b.byteLength; ) done += writeSync(fd, b, done, b.byteLength - done, at + done);
}

type ColumnLayout = 'f64' | 'big' | 'i32' | 'u8' | 'values';

interface FrameHeader {
  readonly length: number;
  readonly columns: readonly { readonly type: SqlType; readonly layout: ColumnLayout; readonly nulls: boolean }[];
  /** The value-layout columns, in order. */
  readonly values: EncodedBatch;
}

const PAD = new Uint8Array(8);
const pad8 = (n: number): number => (8 - (n & 7)) & 7;

function layoutOfData(d: Vector['data']): ColumnLayout {
  if (d instanceof Float64Array) return 'f64';
  if (d instanceof BigInt64Array) return 'big';
  if (d instanceof Int32Array) return 'i32';
  if (d instanceof Uint8Array) return 'u8';
  return 'values';
}

/** The frame's parts, to be written one after another. */
function encodeFrame(b: Batch): Uint8Array[] {
  const values: Vector[] = [];
  const columns = b.columns.map((v) => {
    // Decimal words and interval parts go with the value-layout columns (encodeBatch copies them; reading `data` would box them).
    const layout = v.decimal || v.interval ? 'values' : layoutOfData(v.data);
    if (layout === 'values') values.push(v);
    return { type: v.type, layout, nulls: layout !== 'values' && v.nulls !== null };
  });
  const header: FrameHeader = { length: b.length, columns, values: encodeBatch({ length: b.length, columns: values }) };
  const head = serialize(header);
  const parts: Uint8Array[] = [new Uint8Array(8), head];
  let body = head.byteLength;
  const add = (a: Uint8Array): void => {
    const p = pad8(body);
    if (p) parts.push(PAD.subarray(0, p));
    parts.push(a);
    body += p + a.byteLength;
  };
  b.columns.forEach((v, i) => {
    if (columns[i]!.layout === 'values') return;
    const d = v.data as Float64Array | BigInt64Array | Int32Array | Uint8Array;
    add(new Uint8Array(d.buffer, d.byteOffset, v.length * d.BYTES_PER_ELEMENT));
    if (v.nulls) add(v.nulls.subarray(0, v.length));
  });
  const sizes = new DataView(parts[0]!.buffer);
  sizes.setUint32(0, body, true);
  sizes.setUint32(4, head.byteLength, true);
  return parts;
}

function decodeFrame(body: Uint8Array, headBytes: number): Batch {
  const header = deserialize(body.subarray(0, headBytes)) as FrameHeader;
  const values = decodeBatch(header.values).columns;
  const n = header.length;
  let at = headBytes;
  let vi = 0;
  const take = (bytes: number): number => {
    at += pad8(at);
    const o = at;
    at += bytes;
    return o;
  };
  const columns = header.columns.map((c): Vector => {
    if (c.layout === 'values') return values[vi++]!;
    const buf = body.buffer;
    const off = body.byteOffset;
    let data: Vector['data'];
    if (c.layout === 'f64') data = new Float64Array(buf, off + take(n * 8), n);
    else if (c.layout === 'big') data = new BigInt64Array(buf, off + take(n * 8), n);
    else if (c.layout === 'i32') data = new Int32Array(buf, off + take(n * 4), n);
    else data = new Uint8Array(buf, off + take(n), n);
    const nulls = c.nulls ? new Uint8Array(buf, off + take(n), n) : null;
    return { type: c.type, length: n, data, nulls };
  });
  return { length: n, columns };
}

/**
 * Rows spread over `n` spill files by the hash of their key columns, so that
 * every key's rows land in one file (each file then fits on its own: Grace
 * hash partitioning). `level` picks other hash bits for a second split of one
 * partition. Each file's rows are gathered in a buffer of its own and written
 * when that holds about `flushBytes` (large sequential writes, no per-batch
 * garbage); `flush()` writes what is left before the files are read.
 */
export class SpillPartitions {
  readonly files: SpillFile[] = [];
  private hashes = new Int32Array(0);
  private part = new Int32Array(0);
  private order = new Int32Array(0);
  /** Per file: its rows not yet written (made at the first write, by the batch's column types). */
  private buffers: ColumnBuffer[][] | null = null;
  /** Rows in each file's buffer (a batch may have no columns). */
  private buffered = new Int32Array(0);
  private flushRows = 0;
  /**
   * Files below this one are not written: their rows stay with the owner
   * (a GROUP BY's in-memory key ranges). writeKeyed returns how many of its
   * batch's rows they are; `kept()` names them.
   */
  resident = 0;

  constructor(
    readonly n: number,
    private readonly level = 0,
    /**
     * One numeric key: rows go to files by its value, file p holding [lo + p × width, lo + (p + 1) × width)
     * (the first and last files also below and above; NULL and NaN in file 0), so each file's keys are
     * a dense range (a group table's direct-indexed mode) rather than scattered by hash.
     */
    readonly range: { readonly lo: number; readonly width: number } | null = null,
  ) {
    for (let i = 0; i < n; i++) this.files.push(new SpillFile());
  }

  /** Writes rows [0, n) of `columns` (whole columns of some state, say a group table's keys) in slices of SPILL_BATCH rows. */
  writeColumns(columns: readonly Vector[], n: number, keys: readonly number[]): void {
    for (let s = 0; s < n; s += SPILL_BATCH) {
      const e = Math.min(n, s + SPILL_BATCH);
      this.write({ length: e - s, columns: columns.map((c) => sliceVector(c, s, e)) }, keys);
    }
  }

  /** Writes `b`'s rows to the files of their keys (`keys`: column indices of `b`). */
  write(b: Batch, keys: readonly number[]): void {
    this.writeKeyed(
      b,
      keys.map((k) => b.columns[k]!),
    );
  }

  /**
   * Writes `b`'s rows to the files of `keyVecs`' values (one row each per row
   * of `b`), but those of files below `resident`: returns how many rows those
   * are (`kept()` lists them).
   */
  writeKeyed(b: Batch, keyVecs: readonly Vector[]): number {
    const len = b.length;
    if (len === 0) return 0;
    if (this.hashes.length < len) {
      this.hashes = new Int32Array(len);
      this.part = new Int32Array(len);
      this.order = new Int32Array(len);
    }
    const bufs = (this.buffers ??= this.makeBuffers(b));
    const part = this.part;
    const range = this.range;
    if (range !== null && keyVecs.length === 1) rangeParts(keyVecs[0]!, len, this.n, range.lo, range.width, part);
    else {
      hashRows(keyVecs, len, this.hashes);
      hashParts(this.hashes, len, this.n, Math.imul(0x9e3779b9, this.level + 1), part);
    }
    // Rows grouped by file in one counting pass: starts[p] .. starts[p + 1] of `order` are file p's rows, in input order.
    const starts = orderByPart(part, len, this.n, this.order);
    const order = this.order;
    for (let p = this.resident; p < this.n; p++) {
      const a = starts[p]!;
      const e = starts[p + 1]!;
      if (a === e) continue;
      const cols = bufs[p]!;
      for (let c = 0; c < cols.length; c++) cols[c]!.appendTake(b.columns[c]!, order, a, e);
      if ((this.buffered[p]! += e - a) >= this.flushRows) this.flushFile(p);
    }
    return starts[this.resident]!;
  }

  /** The rows of the last writeKeyed's batch that went to no file (files below `resident`), in input order: the first `count` of these. */
  kept(): Int32Array {
    return this.order;
  }

  private makeBuffers(b: Batch): ColumnBuffer[][] {
    let rowBytes = 1;
    for (const c of b.columns) rowBytes += physBytes(physOf(c.type));
    // Buffers of every file together take ~1/16 of the memory limit at most (4 MB per file at most).
    const limit = memoryBudget.limit > 0 ? memoryBudget.limit : 4 << 30;
    const bytes = Math.min(4 << 20, Math.max(64 << 10, limit / 16 / this.n));
    this.flushRows = Math.max(1024, Math.floor(bytes / rowBytes));
    this.buffered = new Int32Array(this.n);
    return this.files.map(() => b.columns.map((c) => new ColumnBuffer(c.type, 1024)));
  }

  private flushFile(p: number): void {
    const cols = this.buffers![p]!;
    const length = this.buffered[p]!;
    if (length === 0) return;
    this.buffered[p] = 0;
    this.files[p]!.write({ length, columns: cols.map((c) => c.view()) });
    for (const c of cols) c.clear();
  }

  /** Writes every file's buffered rows (before the files are read). */
  flush(): void {
    if (this.buffers) for (let p = 0; p < this.n; p++) this.flushFile(p);
  }

  /** Bytes of the rows buffered before they are written (their owner reserves them). */
  bytes(): number {
    let n = 0;
    if (this.buffers) for (const cols of this.buffers) for (const c of cols) n += c.bytes();
    return n;
  }

  close(): void {
    this.buffers = null;
    for (const f of this.files) f.close();
  }
}

/** Bytes a row takes in a ColumnBuffer of this layout (value-layout cells as VALUE_BYTES). */
function physBytes(p: Phys): number {
  return p === Phys.I32 ? 4 : p === Phys.BOOL ? 1 : p === Phys.VALUES ? VALUE_BYTES : 8;
}

function hashParts(hashes: Int32Array, len: number, n: number, salt: number, part: Int32Array): void {
  for (let i = 0; i < len; i++) part[i] = (mix32(hashes[i]! ^ salt) >>> 0) % n;
}

/** File of each row by its key's value (SpillPartitions' `range`). */
function rangeParts(v: Vector, len: number, n: number, lo: number, width: number, part: Int32Array): void {
  const d = v.data;
  const nulls = v.nulls;
  if (d instanceof Float64Array && nulls === null) {
    rangePartsF64(d, len, n, lo, width, part);
    return;
  }
  for (let i = 0; i < len; i++) {
    if (nulls !== null && nulls[i] === 1) part[i] = 0;
    else {
      const x = Number((d as ArrayLike<number | bigint>)[i]);
      part[i] = x !== x ? 0 : rangePart(x, n, lo, width);
    }
  }
}

function rangePartsF64(d: Float64Array, len: number, n: number, lo: number, width: number, part: Int32Array): void {
  for (let i = 0; i < len; i++) {
    const x = d[i]!;
    part[i] = x !== x ? 0 : rangePart(x, n, lo, width);
  }
}

function rangePart(x: number, n: number, lo: number, width: number): number {
  const p = Math.floor((x - lo) / width);
  return p <= 0 ? 0 : p >= n ? n - 1 : p;
}

/** Counting sort of rows by file: returns starts (n + 1 entries); order[starts[p] .. starts[p + 1]) are file p's rows in input order. */
function orderByPart(part: Int32Array, len: number, n: number, order: Int32Array): Int32Array {
  const starts = new Int32Array(n + 1);
  for (let i = 0; i < len; i++) starts[part[i]! + 1]!++;
  for (let p = 0; p < n; p++) starts[p + 1]! += starts[p]!;
  const fill = starts.slice(0, n);
  for (let i = 0; i < len; i++) order[fill[part[i]!]!++] = i;
  return starts;
}
