// Durable state of created write streams: one append-only log per stream
// under `<data dir>/_write_streams/` (project ids cannot start with `_`), so
// that offsets and the rows a PENDING or BUFFERED stream holds survive a crash
// of both processes. A log is removed once its stream is committed or fully
// flushed and finalized.
//
// Lines are written by the table WAL's writer (src/storage/wal.ts), so they
// follow the same acknowledgement policy: by default a line is acknowledged
// once written (the page cache survives kill -9) and fdatasynced in the
// background within BACKGROUND_SYNC_MS; with --sync-writes ('always') only
// after its fdatasync. A new log's directory entry is fsynced before its
// first line is acknowledged in both modes (as a new WAL's is): kill -9 alone
// would not need it, but without it power loss could drop a whole stream
// rather than the last few milliseconds of it; it costs one sync per
// CreateWriteStream, not per append. Nothing syncs pending lines at a clean
// stop (the service has no close hook): the page cache keeps them, and only a
// power loss within the kernel's writeback delay after the stop could cost them.
//
// Lines: {"meta": {...}} first, then {"append": n, "rows": [...]} (rows only
// for streams that hold them), {"finalized": true} ({"flushed": n} and
// {"committed": ms} in logs of earlier versions).
//
// Rows leaving a stream for its table (BatchCommitWriteStreams, FlushRows)
// change the stream's state file `<log>.state` ({"seq", "flushed"?,
// "committed"?}) in the same table commit (Storage.commitRows): a crash
// leaves both or neither, so rows are never committed twice.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { ensureDir, fsyncDir } from '../../storage/fsutil.js';
import { WalWriter, type WalSyncMode } from '../../storage/wal.js';

export interface StreamMeta {
  readonly name: string;
  readonly type: 'COMMITTED' | 'PENDING' | 'BUFFERED';
  readonly table: { p: string; d: string; t: string };
  readonly created: number;
}

export interface RecoveredStream {
  meta: StreamMeta;
  rowCount: number;
  held: Record<string, unknown>[];
  flushed: number;
  finalized: boolean;
  committed: number | null;
}

/** What the stream's state file says (written with table commits). */
export interface StreamState {
  /** BUFFERED: rows [0, flushed) are in the table. */
  readonly flushed?: number;
  /** PENDING: committed at this time (ms); the stream is gone. */
  readonly committed?: number;
}

/** A stream log's state file (`<hash>.log` -> `<hash>.state`). */
const stateOf = (logFile: string): string => logFile.replace(/\.log$/, '.state');

type Line =
  | { meta: StreamMeta }
  | { append: number; rows?: Record<string, unknown>[] }
  | { finalized: true }
  | { flushed: number }
  | { committed: number };

export class StreamLog {
  /** Open writers by stream name (a promise, so that concurrent first writes share one open). */
  private readonly writers = new Map<string, Promise<WalWriter>>();
  /** Recovered logs by file: the valid prefix a writer resumes after (a torn tail is cut first). recover() runs before any write. */
  private readonly resume = new Map<string, number>();

  constructor(
    private readonly dir: string,
    readonly syncMode: WalSyncMode = 'background',
  ) {}

  private file(name: string): string {
    return path.join(this.dir, createHash('sha256').update(name).digest('hex').slice(0, 32) + '.log');
  }

  /** The stream's state file, written by the table commit that moves its rows (see the header). */
  stateFile(name: string): string {
    return stateOf(this.file(name));
  }

  /** A state file's text (CommitFile.text) for the commit whose record is `seq`. */
  static stateText(state: StreamState): (seq: number) => string {
    return (seq) => JSON.stringify({ seq, ...state });
  }

  private readState(file: string): StreamState {
    try {
      return JSON.parse(fs.readFileSync(stateOf(file), 'utf8')) as StreamState;
    } catch {
      return {};
    }
  }

  /**
   * Every stream logged before the last stop, replayed. A torn last line
   * (crash mid-write) was never acknowledged: it is dropped, and cut from the
   * file before the stream's next line. A log without its meta line belongs
   * to a stream whose creation was never acknowledged: it is deleted.
   */
  recover(): RecoveredStream[] {
    if (!fs.existsSync(this.dir)) return [];
    const out: RecoveredStream[] = [];
    for (const f of fs.readdirSync(this.dir)) {
      if (!f.endsWith('.log')) continue;
      const file = path.join(this.dir, f);
      const buf = fs.readFileSync(file);
      let s: RecoveredStream | null = null;
      let pos = 0;
      for (let nl = buf.indexOf(10, pos); nl >= 0; nl = buf.indexOf(10, pos)) {
        let line: Line;
        try {
          line = JSON.parse(buf.toString('utf8', pos, nl)) as Line;
        } catch {
          break;
        }
        if ('meta' in line) s = { meta: line.meta, rowCount: 0, held: [], flushed: 0, finalized: false, committed: null };
        else if (!s) break;
        else if ('append' in line) {
          s.rowCount += line.append;
          if (line.rows) s.held.push(...line.rows);
        } else if ('finalized' in line) s.finalized = true;
        else if ('flushed' in line) {
          s.held.splice(0, line.flushed - s.flushed);
          s.flushed = line.flushed;
        } else if ('committed' in line) {
          s.committed = line.committed;
          s.held = [];
        }
        pos = nl + 1;
      }
      const state = this.readState(file);
      if (s && state.flushed !== undefined && state.flushed > s.flushed) {
        s.held.splice(0, state.flushed - s.flushed);
        s.flushed = state.flushed;
      }
      if (s && state.committed === undefined) {
        out.push(s);
        this.resume.set(file, pos);
      } else {
        // Never created, or committed (its log was to go with the commit).
        fs.rmSync(file, { force: true });
        fs.rmSync(stateOf(file), { force: true });
      }
    }
    // State files whose log is gone (a start-up redid the commit's write of them).
    for (const f of fs.readdirSync(this.dir)) {
      if (f.endsWith('.state') && !fs.existsSync(path.join(this.dir, f.replace(/\.state$/, '.log')))) fs.rmSync(path.join(this.dir, f), { force: true });
    }
    return out;
  }

  private writer(name: string): Promise<WalWriter> {
    let w = this.writers.get(name);
    if (!w) {
      w = this.open(name);
      this.writers.set(name, w);
      // A failed open is retried by the next write.
      w.catch(() => {
        if (this.writers.get(name) === w) this.writers.delete(name);
      });
    }
    return w;
  }

  private async open(name: string): Promise<WalWriter> {
    if (!fs.existsSync(this.dir)) {
      await ensureDir(this.dir);
      await fsyncDir(path.dirname(this.dir)); // the directory's own entry, once
    }
    const file = this.file(name);
    const w = new WalWriter(file, this.syncMode, (e) => console.error(`write stream log fdatasync failed: ${String(e)}`));
    const r = this.resume.get(file);
    // A new file's directory entry is fsynced by open() before any line in it is acknowledged.
    await w.open(r ?? 0);
    this.resume.delete(file);
    return w;
  }

  /** Appends one line; resolves when the sync mode acknowledges it (see the header comment). */
  async write(name: string, line: Line): Promise<void> {
    const w = await this.writer(name);
    await w.append(Buffer.from(JSON.stringify(line) + '\n'));
  }

  /** Deletes a stream's log. Lines still waiting for their background sync are not synced: the file goes. */
  async remove(name: string): Promise<void> {
    const w = this.writers.get(name);
    this.writers.delete(name);
    const file = this.file(name);
    this.resume.delete(file);
    await (await w?.catch(() => undefined))?.discard();
    await fsp.rm(file, { force: true });
    await fsp.rm(this.stateFile(name), { force: true });
  }
}
