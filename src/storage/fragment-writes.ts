// Writing fragment files: rows as files of at most FILE_ROWS rows (temp,
// fsync, rename), and StagedRows, rows written to such files as they come
// (a bulk write of any size holds at most one file's rows in memory) and
// committed later by a table (TableData.prepare), or dropped.
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import type { Column } from '../types/schema.js';
import { concatVectors, layoutOf, sliceBatches, takeVector, type Batch } from '../types/vector.js';
import { chunkCache, newScanPass } from './chunk-cache.js';
import type { ColumnChunk } from './column-chunk.js';
import { FILE_ROWS } from './fragment-file.js';
import { encodeFragmentFile, type WrittenChunks } from './fragment-encode.js';
import { atomicWrite, ensureDirDurable, fsyncDir, type UnsealedFiles } from './fsutil.js';

/** A fragment file of a table, or the window [skip, skip + rows) of one (a replace kept rows appended after its base). */
export interface FragmentInfo {
  readonly file: string;
  readonly rows: number;
  readonly lastLsn: number;
  readonly skip?: number;
}

/** A column as fragment metadata and sidecars name it. */
export function colInfo(c: Column): { name: string; type: string } {
  return { name: c.name, type: JSON.stringify(c.type) };
}

/** A new fragment file name of storage stem `stem` (a crash's orphan is recognised by the stem; see README "Layout"). */
export function fragmentName(stem: string, lastLsn: number): string {
  return `${stem}@${String(lastLsn).padStart(12, '0')}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}.parquet`;
}

/**
 * Writes rows as fragment files in `dir` named for `stem`, at most FILE_ROWS
 * rows each, in schema `columns`: each durable before it is named, or, with
 * `unsealed` (a stem nothing names yet), synced by its seal. `writeThrough`:
 * the files' chunks go to the chunk cache as they are written (a table's
 * own files; not rows staged under a stem of their own, which a table links
 * under other names).
 */
export async function writeFragments(
  dir: string,
  stem: string,
  columns: readonly Column[],
  batches: readonly Batch[],
  lastLsn: number,
  unsealed: UnsealedFiles | null = null,
  writeThrough = true,
): Promise<FragmentInfo[]> {
  const total = batches.reduce((s, b) => s + b.length, 0);
  const out: FragmentInfo[] = [];
  const meta = { 'warehouse.lastLsn': String(lastLsn), 'warehouse.columns': JSON.stringify(columns.map(colInfo)) };
  for (let start = 0; start < total; start += FILE_ROWS) {
    const end = Math.min(total, start + FILE_ROWS);
    const file = fragmentName(stem, lastLsn);
    const at = path.join(dir, file);
    // Write-through: the chunks a read would decode, made from the values written, cached once the file is (chunk-cache.ts).
    const chunks: { rg: number; name: string; chunk: ColumnChunk }[] = [];
    const written: WrittenChunks = {
      shared: (name) => chunkCache.dictionary(at, name),
      add: (rg, name, chunk) => chunks.push({ rg, name, chunk }),
    };
    const pieces = await encodeFragmentFile(columns, sliceBatches(batches, start, end), meta, false, writeThrough ? written : undefined);
    // Its temp file starts with `${stem}@` too: an orphan of a crash is removed with the stem's.
    if (unsealed) await unsealed.write(at, pieces);
    else await atomicWrite(at, pieces);
    const pass = newScanPass();
    for (const c of chunks) chunkCache.put(at, c.rg, c.name, c.chunk, pass);
    out.push({ file, rows: end - start, lastLsn });
  }
  return out;
}

/**
 * One file's rows ordered by the columns `layoutBy` names (a table's
 * partitioning column, then its clustering ones), so that their filters skip
 * row groups; as they are without any.
 */
export function laidOut(batches: readonly Batch[], columns: readonly Column[], layoutBy: readonly string[]): readonly Batch[] {
  const keys = layoutBy.flatMap((name) => {
    const i = columns.findIndex((c) => c.name.toLowerCase() === name.toLowerCase());
    const t = columns[i]?.type;
    // Keys compared as they are held: numbers, bigints, strings (others, such as NUMERIC objects, are left out).
    return t && (layoutOf(t) !== 'values' || t.kind === 'STRING') ? [i] : [];
  });
  const n = batches.reduce((s, b) => s + b.length, 0);
  if (keys.length === 0 || n < 2) return batches;
  const all = columns.map((c, i) => concatVectors(c.type, batches.map((b) => b.columns[i]!)));
  const order = Int32Array.from({ length: n }, (_, i) => i);
  const data = keys.map((k) => all[k]!.data as ArrayLike<number | bigint | string>);
  const nulls = keys.map((k) => all[k]!.nulls);
  order.sort((a, b) => {
    for (let k = 0; k < keys.length; k++) {
      const nl = nulls[k];
      const na = nl !== null && nl[a] === 1;
      const nb = nl !== null && nl[b] === 1;
      if (na || nb) {
        if (na !== nb) return na ? -1 : 1;
        continue;
      }
      const x = data[k]![a]!;
      const y = data[k]![b]!;
      if (x < y) return -1;
      if (x > y) return 1;
    }
    return a - b;
  });
  return [{ length: n, columns: all.map((v) => takeVector(v, order)) }];
}

/**
 * Rows written to fragment files in `dir` as they are added: whole files of
 * FILE_ROWS rows, the rest at `finish`, each in the layout order of
 * `layoutBy` (laidOut). Nothing names the files until a
 * table commits them. A load job stages its rows under a stem of its own
 * (a `+` stem no catalog entry names, so a crash's files are removed at
 * start-up; Storage.stageRows); the table that commits them links the
 * files under its own names (TableData.prepare) and the staged names are
 * then removed by `discard`, which also drops a write that never commits.
 * Calls are made one at a time.
 */
export class StagedRows {
  /** Rows added. */
  rows = 0;
  private held: Batch[] = [];
  private heldRows = 0;
  private readonly files: FragmentInfo[] = [];
  private discarded = false;
  /**
   * A whole file's write still running: its encoding (which yields between
   * row groups), write and fsync overlap the caller making the next file's
   * rows; one at a time, so files stay in row order.
   */
  private writing: Promise<void> | null = null;

  constructor(
    readonly dir: string,
    private readonly stem: string,
    readonly columns: readonly Column[],
    private readonly lastLsn = 0,
    private readonly layoutBy: readonly string[] = [],
    /** Files of a table nothing names yet: synced by its seal, not one by one (UnsealedFiles). */
    private readonly unsealed: UnsealedFiles | null = null,
    /** Whether the files are the table's own (not linked under other names later): their chunks are then cached as written (writeFragments). */
    private readonly writeThrough = true,
  ) {}

  async add(b: Batch): Promise<void> {
    if (this.discarded) throw new Error('staged rows were dropped');
    if (b.length === 0) return;
    this.held.push(b);
    this.heldRows += b.length;
    this.rows += b.length;
    if (this.heldRows < FILE_ROWS) return;
    // A whole file now; the rows past it start the next one.
    const file = sliceBatches(this.held, 0, FILE_ROWS);
    this.held = sliceBatches(this.held, FILE_ROWS, this.heldRows);
    this.heldRows -= FILE_ROWS;
    await this.settle();
    // Not awaited: its error comes from the next settle (add, finish, discard).
    const w = this.write(file);
    w.catch(() => {});
    this.writing = w;
  }

  /** Waits for the running write, rethrowing its error. */
  private async settle(): Promise<void> {
    const w = this.writing;
    this.writing = null;
    if (w) await w;
  }

  /** Writes the rows still held; the files, in row order. */
  async finish(): Promise<readonly FragmentInfo[]> {
    await this.settle();
    if (this.heldRows > 0) {
      const held = this.held;
      this.held = [];
      this.heldRows = 0;
      await this.write(held);
    }
    return [...this.files];
  }

  /**
   * The files, hard-linked into `dir` under the names `name` gives (the
   * table's own), made durable there: the staged names stay valid until
   * `discard`, so a commit that fails can be retried. Where the file system
   * has no hard links the files are copied. `unsealed`: the table's own
   * names are not durable until its seal (a table nothing names yet).
   */
  async linkInto(dir: string, name: () => string, unsealed: UnsealedFiles | null = null): Promise<FragmentInfo[]> {
    const out: FragmentInfo[] = [];
    for (const f of await this.finish()) {
      const file = name();
      const from = path.join(this.dir, f.file);
      const to = path.join(dir, file);
      await fsp.link(from, to).catch(async () => {
        await fsp.copyFile(from, to);
        const fh = await fsp.open(to, 'r+');
        await fh.sync().finally(() => fh.close());
      });
      out.push({ ...f, file });
    }
    if (out.length > 0 && unsealed) unsealed.addDir(dir);
    else if (out.length > 0) await fsyncDir(dir);
    return out;
  }

  /** Removes the staged files (rows a table committed stay in its own links) and lets go of the rows held. */
  async discard(): Promise<void> {
    this.discarded = true;
    this.held = [];
    this.heldRows = 0;
    // A running write's file is removed with the others.
    await this.settle().catch(() => {});
    for (const f of this.files.splice(0)) await fsp.rm(path.join(this.dir, f.file), { force: true });
  }

  private async write(batches: readonly Batch[]): Promise<void> {
    if (this.files.length === 0) await ensureDirDurable(this.dir);
    this.files.push(...(await writeFragments(this.dir, this.stem, this.columns, laidOut(batches, this.columns, this.layoutBy), this.lastLsn, this.unsealed, this.writeThrough)));
  }
}
