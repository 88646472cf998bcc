// Durable state of created write streams: one append-only log per stream
// under `<data dir>/_write_streams/` (project ids cannot start with `_`),
// fsynced before an append is acknowledged, so that offsets and the rows a
// PENDING or BUFFERED stream holds survive a crash of both processes. A log
// is removed once its stream is committed or fully flushed and finalized.
//
// Lines: {"meta": {...}} first, then {"append": n, "rows": [...]} (rows only
// for streams that hold them), {"finalized": true}, {"flushed": n},
// {"committed": ms}.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { ensureDir, fsyncDir } from '../../storage/fsutil.js';

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

type Line =
  | { meta: StreamMeta }
  | { append: number; rows?: Record<string, unknown>[] }
  | { finalized: true }
  | { flushed: number }
  | { committed: number };

export class StreamLog {
  private readonly handles = new Map<string, fsp.FileHandle>();

  constructor(private readonly dir: string) {}

  private file(name: string): string {
    return path.join(this.dir, createHash('sha256').update(name).digest('hex').slice(0, 32) + '.log');
  }

  /** Every stream logged before the last stop, replayed. A torn last line (crash mid-write) was never acknowledged and is dropped. */
  recover(): RecoveredStream[] {
    if (!fs.existsSync(this.dir)) return [];
    const out: RecoveredStream[] = [];
    for (const f of fs.readdirSync(this.dir)) {
      if (!f.endsWith('.log')) continue;
      let s: RecoveredStream | null = null;
      for (const text of fs.readFileSync(path.join(this.dir, f), 'utf8').split('\n')) {
        if (!text) continue;
        let line: Line;
        try {
          line = JSON.parse(text) as Line;
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
      }
      if (s) out.push(s);
    }
    return out;
  }

  private async handle(name: string): Promise<fsp.FileHandle> {
    let h = this.handles.get(name);
    if (!h) {
      await ensureDir(this.dir);
      h = await fsp.open(this.file(name), 'a');
      await fsyncDir(this.dir); // the new file's directory entry is durable too
      this.handles.set(name, h);
    }
    return h;
  }

  /** Appends one line and waits until it is on disk. */
  async write(name: string, line: Line): Promise<void> {
    const h = await this.handle(name);
    await h.appendFile(JSON.stringify(line) + '\n');
    await h.sync();
  }

  async remove(name: string): Promise<void> {
    const h = this.handles.get(name);
    this.handles.delete(name);
    await h?.close();
    await fsp.rm(this.file(name), { force: true });
  }
}
