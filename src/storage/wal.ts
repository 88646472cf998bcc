// Per-table write-ahead log. Record layout (little endian):
//   u32 payloadLength | u32 crc32(payload) | payload
//   payload = u32 rowCount | f64 lsn | UTF-8 JSON {"n":[names],"c":[[stored values]...]}
// Appends are group-committed: every record queued while a write+fdatasync is
// in flight goes out with the next single write+fdatasync, and each append
// resolves only once its bytes are durable. Recovery reads records until the
// first short or checksum-failing one (a torn tail from a crash) and cuts the
// file there.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';
import { fsyncDir } from './fsutil.js';

const HEADER = 8;
const PAYLOAD_HEADER = 12;

export interface WalRecordInfo {
  readonly lsn: number;
  readonly rowCount: number;
}

export interface WalRecord extends WalRecordInfo {
  readonly body: Buffer;
}

export function encodeRecord(lsn: number, rowCount: number, json: string): Buffer {
  const bodyLen = Buffer.byteLength(json);
  const buf = Buffer.allocUnsafe(HEADER + PAYLOAD_HEADER + bodyLen);
  buf.writeUInt32LE(PAYLOAD_HEADER + bodyLen, 0);
  buf.writeUInt32LE(rowCount, HEADER);
  buf.writeDoubleLE(lsn, HEADER + 4);
  buf.write(json, HEADER + PAYLOAD_HEADER, 'utf8');
  buf.writeUInt32LE(crc32(buf.subarray(HEADER)), 4);
  return buf;
}

export interface WalScan {
  readonly records: WalRecord[];
  /** Byte length of the valid prefix; anything after it is a torn tail. */
  readonly validLength: number;
  readonly fileLength: number;
}

/** Parses the valid prefix of a WAL image. `headersOnly` skips body copies (row counting). */
export function scanWal(buf: Buffer, headersOnly = false): WalScan {
  const records: WalRecord[] = [];
  let pos = 0;
  while (pos + HEADER <= buf.length) {
    const len = buf.readUInt32LE(pos);
    if (len < PAYLOAD_HEADER || pos + HEADER + len > buf.length) break;
    const payload = buf.subarray(pos + HEADER, pos + HEADER + len);
    if (crc32(payload) !== buf.readUInt32LE(pos + 4)) break;
    records.push({
      rowCount: payload.readUInt32LE(0),
      lsn: payload.readDoubleLE(4),
      body: headersOnly ? Buffer.alloc(0) : payload.subarray(PAYLOAD_HEADER),
    });
    pos += HEADER + len;
  }
  return { records, validLength: pos, fileLength: buf.length };
}

export function readWalSync(file: string, headersOnly = false): WalScan {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], validLength: 0, fileLength: 0 };
    throw e;
  }
  return scanWal(buf, headersOnly);
}

interface Pending {
  readonly buf: Buffer;
  readonly resolve: () => void;
  readonly reject: (e: unknown) => void;
}

export class WalWriter {
  private handle: fsp.FileHandle | null = null;
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private size = 0;
  private records = 0;

  constructor(readonly file: string) {}

  /** Opens for append after recovery cut the file to `validLength`. */
  async open(validLength: number, recordCount: number): Promise<void> {
    const existed = fs.existsSync(this.file);
    const h = await fsp.open(this.file, fs.constants.O_RDWR | fs.constants.O_CREAT);
    // A new log's directory entry must be durable before records in it are acknowledged.
    if (!existed) await fsyncDir(path.dirname(this.file));
    const st = await h.stat();
    if (st.size !== validLength) {
      // Drop a torn tail so that new records follow the last good one.
      await h.truncate(validLength);
      await h.sync();
    }
    this.handle = h;
    this.size = validLength;
    this.records = recordCount;
  }

  get byteSize(): number {
    return this.size;
  }

  get recordCount(): number {
    return this.records;
  }

  append(buf: Buffer): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ buf, resolve, reject });
      if (!this.flushing) this.flushing = this.flushLoop();
    });
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          const h = this.handle;
          if (!h) throw new Error(`WAL ${this.file} is closed`);
          const data = batch.length === 1 ? batch[0]!.buf : Buffer.concat(batch.map((p) => p.buf));
          await h.write(data, 0, data.length, this.size);
          await h.datasync();
          this.size += data.length;
          this.records += batch.length;
          for (const p of batch) p.resolve();
        } catch (e) {
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      this.flushing = null;
    }
  }

  /** Waits for queued appends. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Empties the log after its records reached a durable fragment. */
  async truncate(): Promise<void> {
    await this.drain();
    if (!this.handle) return;
    await this.handle.truncate(0);
    await this.handle.sync();
    this.size = 0;
    this.records = 0;
  }

  async close(): Promise<void> {
    await this.drain();
    const h = this.handle;
    this.handle = null;
    if (h) await h.close();
  }
}
