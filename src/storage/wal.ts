// Per-table write-ahead log. Record layout (little endian):
//   u32 payloadLength | u32 crc32(payload) | payload
//   payload = u32 rowCount | f64 lsn | UTF-8 JSON {"n":[names],"c":[[stored values]...]}
// Appends are group-committed: every record queued while a write is in flight
// goes out with the next single write. When an append resolves depends on the
// sync mode:
//   'background' (default): once its bytes are written (write() returned):
//     they are in the OS page cache, which survives kill -9 of the process;
//     an fdatasync follows within BACKGROUND_SYNC_MS, so power loss can only
//     take the last few tens of milliseconds of acknowledged appends.
//   'always' (--sync-writes): once write + fdatasync both finished, so an
//     acknowledged append also survives power loss.
// Recovery reads records until the first short or checksum-failing one (a
// torn tail from a crash) and cuts the file there.
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { crc32 } from 'node:zlib';
import { fsyncDir, readExactSync, type UnsealedFiles } from './fsutil.js';

const HEADER = 8;
/** Background mode: the longest an acknowledged append waits for its fdatasync (bounds the power-loss window). */
export const BACKGROUND_SYNC_MS = 50;

/** When an append is acknowledged; see the header comment. */
export type WalSyncMode = 'background' | 'always';
const PAYLOAD_HEADER = 12;
/** Where a record's JSON starts, from the record's start. */
export const RECORD_JSON_OFFSET = HEADER + PAYLOAD_HEADER;

export interface WalRecordInfo {
  readonly lsn: number;
  readonly rowCount: number;
}

export interface WalRecord extends WalRecordInfo {
  readonly body: Buffer;
}

/** `json`: the record's JSON text, whole or in pieces (UTF-8 bytes are copied as they are). */
export function encodeRecord(lsn: number, rowCount: number, json: string | readonly (string | Uint8Array)[]): Buffer {
  const parts = typeof json === 'string' ? [json] : json;
  let bodyLen = 0;
  for (const p of parts) bodyLen += typeof p === 'string' ? Buffer.byteLength(p) : p.length;
  const buf = Buffer.allocUnsafe(HEADER + PAYLOAD_HEADER + bodyLen);
  buf.writeUInt32LE(PAYLOAD_HEADER + bodyLen, 0);
  buf.writeUInt32LE(rowCount, HEADER);
  buf.writeDoubleLE(lsn, HEADER + 4);
  let pos = HEADER + PAYLOAD_HEADER;
  for (const p of parts) {
    if (typeof p === 'string') pos += buf.write(p, pos, 'utf8');
    else {
      buf.set(p, pos);
      pos += p.length;
    }
  }
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

/** A kept tail being copied to a new log file (see dropBefore): bytes [cut, upTo) are in `t`. */
interface Copy {
  readonly t: fsp.FileHandle;
  readonly cut: number;
  upTo: number;
}

interface Pending {
  readonly buf: Buffer;
  readonly resolve: (at: number) => void;
  readonly reject: (e: unknown) => void;
}

export class WalWriter {
  private handle: fsp.FileHandle | null = null;
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private size = 0;
  /** Background mode: bytes written since the last fdatasync started. */
  private unsynced = false;
  private syncTimer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> | null = null;
  /**
   * The offset of the file's first byte in the log's whole history: offsets
   * given out by append stay valid while their bytes are in the file, across
   * dropBefore, and not after (see read).
   */
  private base = 0;

  constructor(
    readonly file: string,
    readonly syncMode: WalSyncMode = 'background',
    /** Reports a failed background fdatasync (no append is waiting for it any more). */
    private readonly onSyncError: (e: unknown) => void = (e) => console.error(`WAL fdatasync failed: ${String(e)}`),
  ) {}

  /**
   * Opens for append after recovery cut the file to `validLength`.
   * `unsealed`: the log of a table nothing names yet, whose directory entry
   * is made durable by its seal (before any record in it can count).
   */
  async open(validLength: number, unsealed: UnsealedFiles | null = null): Promise<void> {
    const existed = fs.existsSync(this.file);
    const h = await fsp.open(this.file, fs.constants.O_RDWR | fs.constants.O_CREAT);
    // A new log's directory entry must be durable before records in it are acknowledged.
    if (!existed && unsealed) unsealed.addDir(path.dirname(this.file));
    else if (!existed) await fsyncDir(path.dirname(this.file));
    const st = await h.stat();
    if (st.size !== validLength) {
      // Drop a torn tail so that new records follow the last good one.
      await h.truncate(validLength);
      await h.sync();
    }
    this.handle = h;
    this.size = validLength;
  }

  get byteSize(): number {
    return this.size;
  }

  /** True while acknowledged bytes wait for their background fdatasync. */
  get syncPending(): boolean {
    return this.unsynced || this.syncing !== null;
  }

  /** The offset the next record will have (see base). */
  get end(): number {
    return this.base + this.size;
  }

  /** Appends a record; resolves with its offset (see base). */
  append(buf: Buffer): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ buf, resolve, reject });
      if (!this.flushing) this.flushing = this.flushLoop();
    });
  }

  private async flushLoop(): Promise<void> {
    // Yield once: append() records this.flushing before any write happens
    // (background writes below never await), and appends of the same tick share a write.
    await null;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          const h = this.handle;
          if (!h) throw new Error(`WAL ${this.file} is closed`);
          const data = batch.length === 1 ? batch[0]!.buf : Buffer.concat(batch.map((p) => p.buf));
          // write() may write less than asked (a full disk, a signal): the rest follows.
          // Background mode writes on the event loop, as Redis does: copying one
          // record into the page cache takes tens of µs, less than a thread-pool
          // round trip (and no wait for a pool thread on a busy machine).
          for (let off = 0; off < data.length; ) {
            const n = this.syncMode === 'background' ? fs.writeSync(h.fd, data, off, data.length - off, this.size + off) : (await h.write(data, off, data.length - off, this.size + off)).bytesWritten;
            if (n <= 0) throw new Error(`WAL ${this.file}: write made no progress`);
            off += n;
          }
          if (this.syncMode === 'always') await h.datasync();
          let at = this.end;
          this.size += data.length;
          if (this.syncMode === 'background') this.scheduleSync();
          for (const p of batch) {
            p.resolve(at);
            at += p.buf.length;
          }
        } catch (e) {
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      this.flushing = null;
    }
  }

  private scheduleSync(): void {
    this.unsynced = true;
    if (this.syncTimer || this.syncing) return; // the running sync reschedules when it ends
    this.syncTimer = setTimeout(() => {
      this.syncTimer = null;
      void this.syncNow().catch(this.onSyncError);
    }, BACKGROUND_SYNC_MS);
    // A pending sync does not keep the process alive: close() syncs what is left.
    this.syncTimer.unref();
  }

  /** One fdatasync covering every write finished before it starts; writes finished meanwhile get the next one. */
  private async syncNow(): Promise<void> {
    if (this.syncing) await this.syncing.catch(() => undefined);
    const h = this.handle;
    if (!this.unsynced || !h) return;
    this.unsynced = false;
    const run = h.datasync();
    this.syncing = run;
    try {
      await run;
    } catch (e) {
      // Those bytes may not be durable: the next write schedules another try.
      this.unsynced = true;
      throw e;
    } finally {
      this.syncing = null;
    }
    if (this.unsynced && this.handle) this.scheduleSync();
  }

  /**
   * `len` bytes at offset `at` (see base), read back (from the page cache,
   * as a rule). Throws once they are no longer in the log (emptied, dropped
   * or closed): its owner makes what it still needs before either.
   */
  read(at: number, len: number): Buffer {
    const h = this.handle;
    const pos = at - this.base;
    if (!h || pos < 0 || pos + len > this.size) throw new Error(`WAL ${this.file}: the bytes at ${at} are no longer in the log`);
    return readExactSync(h.fd, len, pos, `WAL ${this.file}`);
  }

  /**
   * Drops the records before offset `cut` (a record boundary; see base),
   * keeping the ones after it: a fold wrote the first ones to a fragment
   * while appends went on. The kept records are copied to a new file that
   * is synced and renamed over the log, so a crash leaves either the whole
   * old log (whose folded records recovery skips) or the kept records.
   * Appends go on while the records there are so far are copied (off the
   * event loop); `exclusive` runs the rest, the copy of the last few and the
   * swap, with no append under way (the owner's table gate).
   */
  async dropBefore(cut: number, exclusive: <T>(fn: () => Promise<T>) => Promise<T>): Promise<void> {
    const tmp = `${this.file}.tmp`;
    let copy: Copy | null = null;
    try {
      await this.drain();
      if (this.handle && cut > this.base && this.end > cut) {
        copy = { t: await fsp.open(tmp, 'w+'), cut, upTo: cut };
        await this.copyTail(copy);
      }
      await exclusive(async () => {
        await this.drain();
        const h = this.handle;
        if (!h || cut <= this.base) return;
        if (cut >= this.end) return this.truncate();
        copy ??= { t: await fsp.open(tmp, 'w+'), cut, upTo: cut };
        await this.copyTail(copy);
        const { t } = copy;
        await fsp.rename(tmp, this.file);
        copy = null;
        // One synchronous step from here: held rows after `cut` are read from
        // the old file (its bytes do not change) until the new one takes over.
        await this.syncing?.catch(() => undefined);
        this.cancelSync();
        this.unsynced = false;
        this.size = this.end - cut;
        this.base = cut;
        this.handle = t;
        await h.close();
        await fsyncDir(path.dirname(this.file));
      });
    } finally {
      if (copy) {
        await copy.t.close();
        await fsp.rm(tmp, { force: true });
      }
    }
  }

  /** Copies the log's bytes from `copy.upTo` to its end into `copy.t` (at their offset less the cut) and syncs them. */
  private async copyTail(copy: Copy): Promise<void> {
    const h = this.handle!;
    const end = this.end;
    const buf = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(1, end - copy.upTo)));
    while (copy.upTo < end) {
      const { bytesRead } = await h.read(buf, 0, Math.min(buf.length, end - copy.upTo), copy.upTo - this.base);
      if (bytesRead <= 0) throw new Error(`WAL ${this.file}: short read at ${copy.upTo - this.base}`);
      for (let off = 0; off < bytesRead; ) off += (await copy.t.write(buf, off, bytesRead - off, copy.upTo - copy.cut + off)).bytesWritten;
      copy.upTo += bytesRead;
    }
    await copy.t.datasync();
  }

  /** Waits for queued appends. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private cancelSync(): void {
    if (this.syncTimer) clearTimeout(this.syncTimer);
    this.syncTimer = null;
  }

  /** Empties the log after its records reached a durable fragment. */
  async truncate(): Promise<void> {
    await this.drain();
    if (!this.handle) return;
    // Already empty, and its emptiness durable (opened empty, or truncated and synced): nothing to do.
    if (this.size === 0 && !this.unsynced && this.syncing === null) return;
    await this.handle.truncate(0);
    await this.handle.sync();
    // Nothing left to sync: the records live on in a synced fragment.
    this.cancelSync();
    this.unsynced = false;
    this.base += this.size;
    this.size = 0;
  }

  /** Waits for queued appends and makes them durable (background mode: syncs now instead of later). */
  async flush(): Promise<void> {
    await this.drain();
    this.cancelSync();
    await this.syncNow();
  }

  /** Closes without the final sync, for a log its owner deletes next (the Storage Write API's stream logs). */
  async discard(): Promise<void> {
    await this.drain();
    this.cancelSync();
    this.unsynced = false;
    await this.syncing?.catch(() => undefined);
    const h = this.handle;
    this.handle = null;
    if (h) await h.close();
  }

  async close(): Promise<void> {
    // A failed final sync is reported, and the log is closed all the same.
    await this.flush().catch(this.onSyncError);
    const h = this.handle;
    this.handle = null;
    if (h) await h.close();
  }
}
