// The deletion log of a table's generation: positions of rows that row-level
// DML (UPDATE, DELETE, MERGE) deleted, in commit order, and its forms on
// disk: inline in the sidecar, in WAL records (`{"d":[...]`), and deletion
// vector files (`.del`) of large changes. See README.md "Row-level changes".
import * as fs from 'node:fs';
import * as path from 'node:path';
import { atomicWrite, type UnsealedFiles } from './fsutil.js';
import { NONE_DELETED } from './table-state.js';


/**
 * A deletion vector: entries [at, at + count) of the generation's deletion
 * log (u32 little-endian, in log order), in a file of their own written
 * once, so that a sidecar names them instead of holding them: the positions
 * one large row-level change deleted (ascending), or entries a sidecar write
 * moved out of its inline part (spillInline).
 */
export interface DeleteFile {
  readonly file: string;
  readonly count: number;
  readonly at: number;
}

/** A deletion vector file written ahead of its commit (TableData.change). */
export interface DeleteFileWritten {
  readonly file: string;
  readonly count: number;
}

/**
 * A row-level change deleting more rows than this writes their positions to
 * a deletion vector file (DeleteFile) rather than into its WAL record (JSON),
 * and its new rows to fragment files like a bulk append.
 */
export const WAL_DELETES_MAX = 20_000;
/**
 * A sidecar holds at most this many entries of the deletion log inline
 * (about 8 bytes of JSON each, written again at every sidecar write): past
 * it, the write moves them to deletion vector files first (spillInline).
 */
export const INLINE_DELETES_MAX = 256;

/** A new deletion vector file name of storage stem `stem` (removed with the stem's orphans when no sidecar names it). */
function deleteFileName(stem: string, lsn: number): string {
  return `${stem}@${String(lsn).padStart(12, '0')}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.del`;
}

/**
 * A deletion log from its sidecar form: `inline` entries with each file's
 * entries spliced in at its `at` (files in log order). u32 little-endian:
 * the byte order of every platform Node runs this on.
 */
export function readDeleteLog(dir: string, inline: readonly number[], files: readonly DeleteFile[]): number[] {
  if (files.length === 0) return [...inline];
  const out: number[] = [];
  let i = 0;
  for (const f of files) {
    while (out.length < f.at && i < inline.length) out.push(inline[i++]!);
    const bytes = fs.readFileSync(path.join(dir, f.file));
    if (out.length !== f.at || bytes.length !== f.count * 4) throw new Error(`deletion vector ${f.file} does not match its sidecar`);
    const positions = new Uint32Array(f.count);
    Buffer.from(positions.buffer).set(bytes);
    for (let k = 0; k < positions.length; k++) out.push(positions[k]!);
  }
  while (i < inline.length) out.push(inline[i++]!);
  return out;
}

/** The entries of log[0, n) that no file holds (a sidecar's inline `deletes`). */
export function inlineDeletes(log: readonly number[], files: readonly DeleteFile[], n: number): number[] {
  if (files.length === 0) return log.slice(0, n);
  const out: number[] = [];
  let from = 0;
  for (const f of files) {
    for (let k = from; k < Math.min(f.at, n); k++) out.push(log[k]!);
    from = Math.max(from, f.at + f.count);
  }
  for (let k = from; k < n; k++) out.push(log[k]!);
  return out;
}

/** The first `n` entries of a deletion log, ascending (a state's `deleted`). */
export function sortedDeletes(log: readonly number[], n: number): Uint32Array {
  if (n === 0) return NONE_DELETED;
  return Uint32Array.from(log.slice(0, n)).sort();
}

/** The positions a WAL record deletes (a row-level change's record starts `{"d":[...]`). */
export function recordDeletes(body: Buffer): readonly number[] {
  if (body.length < 5 || body[2] !== 0x64 /* d */ || body[3] !== 0x22) return [];
  return (JSON.parse(body.toString('utf8')) as { d: number[] }).d;
}

/** Positions ascending, each once (a sort, not a Set: a large change names hundreds of thousands). */
export function distinctSorted(positions: readonly number[]): Uint32Array {
  const sorted = Uint32Array.from(positions).sort();
  let n = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) sorted[n++] = sorted[i]!;
  return n === sorted.length ? sorted : sorted.slice(0, n);
}

/** Two ascending position lists as one (no position is in both). */
export function mergeSorted(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const out = new Uint32Array(a.length + b.length);
  let i = 0, j = 0, k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i]! < b[j]! ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}

/** Entries of a deletion log (one change's positions: ascending) as a deletion vector file of storage stem `stem` in `dir`, durable before any sidecar names it. */
export async function writeDeleteFile(dir: string, stem: string, lsn: number, positions: Uint32Array, unsealed: UnsealedFiles | null): Promise<DeleteFileWritten> {
  const file = deleteFileName(stem, lsn);
  const bytes = new Uint8Array(positions.buffer, positions.byteOffset, positions.byteLength);
  if (unsealed) await unsealed.write(path.join(dir, file), bytes);
  else await atomicWrite(path.join(dir, file), bytes);
  return { file, count: positions.length };
}

/** How many entries of log[0, n) no file holds (the inline ones). */
function inlineCount(files: readonly DeleteFile[], n: number): number {
  return n - files.reduce((k, f) => k + Math.max(0, Math.min(f.at + f.count, n) - f.at), 0);
}

/**
 * The files of log[0, n) once its inline entries are bounded, or null when
 * they are few enough (INLINE_DELETES_MAX). Otherwise every run of inline
 * entries becomes a file, and each file merges with the one before it while
 * that one is at most twice its size (so each file is more than twice the
 * next: O(log) files per generation, an entry rewritten O(log) times). New files are written and synced here,
 * before any sidecar names them (a crash leaves them unnamed: the next load
 * removes them); the files merged away are the old sidecar's to let go.
 * `log` holds every entry, those in files too.
 */
export async function spillInline(
  dir: string,
  stem: string,
  lsn: number,
  log: readonly number[],
  files: readonly DeleteFile[],
  n: number,
  unsealed: UnsealedFiles | null,
): Promise<DeleteFile[] | null> {
  if (inlineCount(files, n) <= INLINE_DELETES_MAX) return null;
  const runs: { at: number; count: number; file?: string }[] = [];
  const push = (r: { at: number; count: number; file?: string }): void => {
    runs.push(r);
    while (runs.length >= 2 && runs[runs.length - 2]!.count <= 2 * runs[runs.length - 1]!.count) {
      const b = runs.pop()!;
      const a = runs.pop()!;
      runs.push({ at: a.at, count: a.count + b.count });
    }
  };
  let from = 0;
  for (const f of files) {
    if (f.at > from) push({ at: from, count: f.at - from });
    push(f);
    from = f.at + f.count;
  }
  if (n > from) push({ at: from, count: n - from });
  return Promise.all(
    runs.map(async (r): Promise<DeleteFile> => {
      if (r.file !== undefined) return { file: r.file, count: r.count, at: r.at };
      const positions = Uint32Array.from(log.slice(r.at, r.at + r.count));
      const written = await writeDeleteFile(dir, stem, lsn, positions, unsealed);
      return { file: written.file, count: written.count, at: r.at };
    }),
  );
}
