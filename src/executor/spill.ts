// Operator state that does not fit the engine's memory budget goes to spill
// files: batches written one after another (each a length-prefixed
// v8.serialize of its parallel/codec.ts encoding: typed arrays as they are,
// values in their storage form) and read back in order. Files live under the
// spill directory (the engine's `<data dir>/.spill`, emptied at start-up; a
// temp directory in-process) and are deleted when the operator is done.
import { closeSync, mkdirSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { sliceVector, type Batch, type Vector } from '../types/vector.js';
import { memoryBudget } from '../storage/memory-budget.js';
import { hashRows } from './hash.js';
import { decodeBatch, encodeBatch, type EncodedBatch } from './parallel/codec.js';
import { takeBatch } from './vectors.js';
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
 * `partitions` files by key hash (each then holds ~1/partitions of the state).
 * Tunables for tests.
 */
export const spillOptions = { share: 0.6, partitions: 32 };

/** What spilled (tests and the bench read them). */
export const spillCounters = { files: 0, batches: 0, bytes: 0 };

/** One spill file: batches appended, then read back in order (any number of times), then removed. */
export class SpillFile {
  private fd: number;
  readonly path: string;
  bytes = 0;
  batches = 0;

  constructor() {
    mkdirSync(spillDir, { recursive: true });
    this.path = path.join(spillDir, `${process.pid}-${nextFile++}.spill`);
    this.fd = openSync(this.path, 'w+');
    spillCounters.files++;
  }

  write(b: Batch): void {
    if (b.length === 0) return;
    const body = serialize(encodeBatch(b, []));
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32LE(body.length, 0);
    writeSync(this.fd, head, 0, 4, this.bytes);
    writeSync(this.fd, body, 0, body.length, this.bytes + 4);
    this.bytes += 4 + body.length;
    // The encoded copy and its bytes are garbage outside V8's heap now (memory-budget.ts collects once enough piled up).
    memoryBudget.dropped(2 * body.length);
    this.batches++;
    spillCounters.batches++;
    spillCounters.bytes += 4 + body.length;
  }

  /** The batches written, in order. */
  *read(): Generator<Batch> {
    const head = Buffer.allocUnsafe(4);
    for (let at = 0; at < this.bytes; ) {
      readSync(this.fd, head, 0, 4, at);
      const n = head.readUInt32LE(0);
      const body = Buffer.allocUnsafe(n);
      readSync(this.fd, body, 0, n, at + 4);
      at += 4 + n;
      const b = decodeBatch(deserialize(body) as EncodedBatch);
      memoryBudget.dropped(n);
      yield b;
    }
  }

  close(): void {
    if (this.fd < 0) return;
    closeSync(this.fd);
    this.fd = -1;
    rmSync(this.path, { force: true });
  }
}

/**
 * Rows spread over `n` spill files by the hash of their key columns, so that
 * every key's rows land in one file (each file then fits on its own: Grace
 * hash partitioning). `level` picks other hash bits for a second split of one
 * partition.
 */
/** Rows per frame when whole columns are written (fewer, larger frames than BATCH_SIZE). */
const SPILL_BATCH = 64 * 1024;

export class SpillPartitions {
  readonly files: SpillFile[] = [];
  private hashes = new Int32Array(0);

  constructor(
    readonly n: number,
    private readonly level = 0,
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
    const len = b.length;
    if (len === 0) return;
    if (this.hashes.length < len) this.hashes = new Int32Array(len);
    hashRows(keys.map((k) => b.columns[k]!), len, this.hashes);
    // Rows grouped by file in one counting pass: starts[p] .. starts[p + 1] of `order` are file p's rows, in input order.
    const starts = new Int32Array(this.n + 1);
    const part = new Int32Array(len);
    const salt = Math.imul(0x9e3779b9, this.level + 1);
    for (let i = 0; i < len; i++) {
      const p = (mix32(this.hashes[i]! ^ salt) >>> 0) % this.n;
      part[i] = p;
      starts[p + 1]!++;
    }
    for (let p = 0; p < this.n; p++) starts[p + 1]! += starts[p]!;
    const order = new Int32Array(len);
    const fill = starts.slice(0, this.n);
    for (let i = 0; i < len; i++) order[fill[part[i]!]!++] = i;
    for (let p = 0; p < this.n; p++) {
      const a = starts[p]!;
      const e = starts[p + 1]!;
      if (a === e) continue;
      this.files[p]!.write(e - a === len ? b : takeBatch(b, order.subarray(a, e)));
    }
  }

  close(): void {
    for (const f of this.files) f.close();
  }
}
