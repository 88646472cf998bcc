// The deletion log of a table's generation: positions of rows that row-level
// DML (UPDATE, DELETE, MERGE) deleted, in commit order, and its forms on
// disk: inline in the sidecar, in WAL records (`{"d":[...]`), and deletion
// vector files (`.del`) of large changes. See README.md "Row-level changes".
import * as fs from 'node:fs';
import * as path from 'node:path';
import { atomicWrite, type UnsealedFiles } from './fsutil.js';
import { NONE_DELETED } from './table-state.js';


/**
 * A deletion vector: the positions one large row-level change deleted
 * (u32 little-endian, ascending), in a file of their own written once, so
 * that a sidecar names them instead of holding them. They are entries
 * [at, at + count) of the generation's deletion log.
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

/** Positions (ascending) as a deletion vector file of storage stem `stem` in `dir`, durable before any sidecar names it. */
export async function writeDeleteFile(dir: string, stem: string, lsn: number, positions: Uint32Array, unsealed: UnsealedFiles | null): Promise<DeleteFileWritten> {
  const file = deleteFileName(stem, lsn);
  const bytes = new Uint8Array(positions.buffer, positions.byteOffset, positions.byteLength);
  if (unsealed) await unsealed.write(path.join(dir, file), bytes);
  else await atomicWrite(path.join(dir, file), bytes);
  return { file, count: positions.length };
}
