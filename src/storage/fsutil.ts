// Small durable-file helpers. Every metadata write is temp + fsync + rename +
// fsync(dir), so a crash leaves either the old or the new file, never a torn one.
// Only the fsyncs go to the thread pool: opens, small writes, closes and
// renames are quick page-cache operations, done in place. Each thread-pool
// round trip cost ~0.1 ms of latency and a context switch on the 2-core VM
// (a CREATE OR REPLACE TABLE made ~40 of them).
import fsExports, * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';

let tmpCounter = 0;
function tmpName(file: string): string {
  return `${file}.${process.pid}.${++tmpCounter}.tmp`;
}

/** Writes at most this much in place; more goes through the thread pool (a large catalog must not stall the event loop). */
const SYNC_WRITE_MAX = 1 << 20;

/** fsync(2) on the thread pool. Called through node:fs's exports object, where tests count the calls. */
function fsyncFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsExports.fsync(fd, (e) => (e ? reject(e) : resolve())));
}

export async function fsyncDir(dir: string): Promise<void> {
  const fd = fs.openSync(dir, 'r');
  try {
    await fsyncFd(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** `len` bytes of `fd` at `pos`; a file shorter than that is an error naming `file`. */
export function readExactSync(fd: number, len: number, pos: number, file: string): Buffer {
  const buf = Buffer.allocUnsafeSlow(len);
  for (let off = 0; off < len; ) {
    const n = fs.readSync(fd, buf, off, len - off, pos + off);
    if (n <= 0) throw new Error(`${file}: short read at ${pos + off}`);
    off += n;
  }
  return buf;
}

export function fsyncDirSync(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** `data` may be a list of pieces, written in order with writev (no copy into one buffer). */
export async function atomicWrite(file: string, data: string | Uint8Array | readonly Uint8Array[]): Promise<void> {
  await commitTemp(await writeTemp(file, data), file);
}

/**
 * atomicWrite's first half: `data` in a synced temp file beside `file`
 * (returned). Nothing is visible under `file` until commitTemp; a caller that
 * gives up removes the temp file (a crash's leftovers are the owner's to clean).
 */
export async function writeTemp(file: string, data: string | Uint8Array | readonly Uint8Array[]): Promise<string> {
  const tmp = tmpName(file);
  const fd = fs.openSync(tmp, 'w');
  try {
    await writeAll(fd, typeof data === 'string' ? [Buffer.from(data)] : Array.isArray(data) ? (data as readonly Uint8Array[]) : [data as Uint8Array]);
    await fsyncFd(fd);
  } finally {
    fs.closeSync(fd);
  }
  return tmp;
}

/** atomicWrite's second half: the temp file becomes `file`, durably. */
export async function commitTemp(tmp: string, file: string): Promise<void> {
  fs.renameSync(tmp, file);
  await fsyncDir(path.dirname(file));
}

/**
 * Files of something no record names yet (a table's new incarnation before
 * the catalog record that publishes it): written in place under their own
 * names, with no temp file, rename or sync each, and made durable together
 * by one `seal` (every file's fsync and its directory's, at once on the
 * thread pool) before that record is appended. A crash before it leaves
 * files of a stem no catalog entry names, which start-up removes; so the
 * ordering a temp + rename gives is not needed, and a CREATE TABLE ... AS
 * SELECT waits for one round of syncs instead of six in a row.
 */
export class UnsealedFiles {
  /** Each file written, with its bytes while they are few (see `inline`). */
  private readonly files = new Map<string, Buffer | null>();
  private readonly dirs = new Set<string>();
  private inlineBytes = 0;
  private sealing: Promise<unknown> | null = null;

  /** Writes `file` whole (truncating it), to be synced by `seal`. */
  async write(file: string, data: string | Uint8Array | readonly Uint8Array[]): Promise<void> {
    const pieces = typeof data === 'string' ? [Buffer.from(data)] : Array.isArray(data) ? (data as readonly Uint8Array[]) : [data as Uint8Array];
    const fd = fs.openSync(file, 'w');
    try {
      await writeAll(fd, pieces);
    } finally {
      fs.closeSync(fd);
    }
    const size = pieces.reduce((n, b) => n + b.byteLength, 0);
    const old = this.files.get(file);
    if (old) this.inlineBytes -= old.length;
    const keep = this.inlineBytes + size <= INLINE_MAX_BYTES;
    this.files.set(file, keep ? Buffer.concat(pieces) : null);
    if (keep) this.inlineBytes += size;
    this.dirs.add(path.dirname(file));
  }

  /** A directory whose new entries `seal` makes durable (a file created in it by other means). */
  addDir(dir: string): void {
    this.dirs.add(dir);
  }

  /**
   * Every file written and not yet synced, with its bytes, when all are
   * small enough (INLINE_MAX_BYTES together) for a catalog record to carry
   * them (which then makes them durable: start-up writes them again from it);
   * null when one is not.
   */
  inline(): { file: string; data: Buffer }[] | null {
    const out: { file: string; data: Buffer }[] = [];
    for (const [file, data] of this.files) {
      if (!data) return null;
      out.push({ file, data });
    }
    return out;
  }

  /** Syncs every file written and directory named since the last seal (waiting for one under way). A file removed meanwhile needs none. */
  async seal(): Promise<void> {
    while (this.sealing) await this.sealing.catch(() => undefined);
    if (this.files.size === 0 && this.dirs.size === 0) return;
    const files = [...this.files];
    const dirs = [...this.dirs];
    this.files.clear();
    this.dirs.clear();
    this.inlineBytes = 0;
    const run = Promise.all([...files.map(([f]) => fsyncPath(f)), ...dirs.map((d) => fsyncDir(d))]).catch((e: unknown) => {
      // Still owed: the next seal tries them again.
      for (const [f] of files) if (!this.files.has(f)) this.files.set(f, null);
      for (const d of dirs) this.dirs.add(d);
      throw e;
    });
    this.sealing = run;
    try {
      await run;
    } finally {
      if (this.sealing === run) this.sealing = null;
    }
  }
}

/** At most this many bytes of a new table's files ride in its catalog record (UnsealedFiles.inline): a small result's fragment and sidecar. */
export const INLINE_MAX_BYTES = 16 * 1024;

async function fsyncPath(file: string): Promise<void> {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  try {
    await fsyncFd(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes every piece in order, continuing after a short write. */
async function writeAll(fd: number, pieces: readonly Uint8Array[]): Promise<void> {
  let rest = pieces.filter((b) => b.byteLength > 0);
  const inPlace = rest.reduce((n, b) => n + b.byteLength, 0) <= SYNC_WRITE_MAX;
  while (rest.length > 0) {
    let bytesWritten = inPlace
      ? fs.writevSync(fd, rest)
      : await new Promise<number>((resolve, reject) => fs.writev(fd, rest, (e, n) => (e ? reject(e) : resolve(n))));
    if (bytesWritten === 0) throw new Error('writev wrote nothing');
    let i = 0;
    while (i < rest.length && bytesWritten >= rest[i]!.byteLength) bytesWritten -= rest[i++]!.byteLength;
    rest = rest.slice(i);
    if (bytesWritten > 0) rest[0] = rest[0]!.subarray(bytesWritten);
  }
}

export function atomicWriteSync(file: string, data: string | Uint8Array): void {
  const tmp = tmpName(file);
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  fsyncDirSync(path.dirname(file));
}

/**
 * mkdir -p, one level at a time: Node's recursive mkdir never settles under
 * pseudo file systems such as /proc (a user-chosen path must fail, not hang).
 */
export async function ensureDir(dir: string): Promise<void> {
  if (await fsp.stat(dir).then((s) => s.isDirectory(), () => false)) return;
  const parent = path.dirname(dir);
  if (parent !== dir) await ensureDir(parent);
  await fsp.mkdir(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'EEXIST') throw e;
  });
}

/** mkdir -p whose new entries are durable: each directory it makes is synced into its parent. */
export async function ensureDirDurable(dir: string): Promise<void> {
  const made = fs.mkdirSync(dir, { recursive: true });
  if (made === undefined) return;
  for (let d = dir; d.length >= made.length; d = path.dirname(d)) await fsyncDir(path.dirname(d));
}

/** ensureDir, synchronously (start-up paths). */
export function ensureDirSync(dir: string): void {
  try {
    if (fs.statSync(dir).isDirectory()) return;
  } catch {
    // missing: create it below
  }
  const parent = path.dirname(dir);
  if (parent !== dir) ensureDirSync(parent);
  try {
    fs.mkdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

export function existsSync(p: string): boolean {
  try {
    fs.statSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Renames with a durable parent on both sides (moves between directories). */
export async function durableRename(from: string, to: string): Promise<void> {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.renameSync(from, to);
  await Promise.all([fsyncDir(path.dirname(to)), path.dirname(from) !== path.dirname(to) ? fsyncDir(path.dirname(from)) : undefined]);
}
