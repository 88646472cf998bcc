// Load and copy jobs' writes (src/engine/table-writes.ts): rows are staged to
// fragment files as they come (a load of any size holds at most one file's
// rows), then linked into the table by one commit; an abort, a rejected
// record or a crash leaves the table as it was and no staged file behind.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { TableWrites, type FileAppend } from '../../src/engine/table-writes.js';
import { FILE_ROWS } from '../../src/storage/fragment-file.js';
import { Storage } from '../../src/storage/store.js';
import { stateBatches } from '../../src/storage/table-data.js';
import { run } from '../sql/harness.js';
import { T } from '../../src/types/types.js';
import { getValue, vectorFromValues } from '../../src/types/vector.js';

const P = 'tw';
let dir: string;
let storage: Storage;
let catalog: EngineCatalog;
let writes: TableWrites;
const dsDir = (): string => path.join(dir, P, 'd');
/** The parquet files of the dataset directory. */
const parquet = (): string[] => (fs.existsSync(dsDir()) ? fs.readdirSync(dsDir()).filter((f) => f.endsWith('.parquet')).sort() : []);
const q = async (sql: string): Promise<unknown[]> => {
  const r = await run({ storage, catalog, close: async () => undefined }, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });
  return r.batches[0]?.columns.map((v) => getValue(v, 0)) ?? [];
};
const idSchema = { schema: { fields: [{ name: 'id', type: 'INTEGER' }] } };

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'table-writes-'));
  storage = await Storage.open(dir, { noLock: true });
  catalog = new EngineCatalog(storage);
  writes = new TableWrites(storage, catalog);
  await catalog.createDataset(P, 'd', { location: 'US' }, true);
});
afterAll(async () => {
  await storage?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A CSV file of one INT64 column, ids 1..n, with `bad` as the record at 1-based line `badAt`. */
function idsCsv(name: string, n: number, badAt = 0): FileAppend['file'] {
  const lines = Array.from({ length: n }, (_, i) => (i + 1 === badAt ? 'x' : String(i + 1)));
  const p = path.join(dir, name);
  fs.writeFileSync(p, lines.join('\n') + '\n');
  return { path: p, uri: `file://${p}` };
}

/** Reads the whole file into write `id`, about `maxRows` records per call; the errors of every call. */
async function readFile(id: string, file: FileAppend['file'], maxRows: number, onCall: () => void = () => undefined): Promise<string[]> {
  const errors: string[] = [];
  for (;;) {
    const r = await writes.appendFile(id, { file, format: 'CSV', options: {}, fields: [{ name: 'id', type: 'INTEGER' }], skipInvalidRows: false, maxRows });
    if (r.errorsJson) errors.push(r.errorsJson);
    onCall();
    if (r.done || r.errorsJson) return errors;
  }
}

/**
 * A whole file's write runs while the next rows are read (StagedRows overlaps
 * it with the caller), so a staged file may land just after the call that
 * filled it: waits (up to 5 s) until `count` reaches `want`, and returns it.
 */
async function eventually(count: () => number, want: number): Promise<number> {
  for (let i = 0; i < 500 && count() < want; i++) await new Promise((r) => setTimeout(r, 10));
  return count();
}

describe('table writes', () => {
  it('stage a load larger than a file to files as it comes; the commit links them into the new table', async () => {
    const n = FILE_ROWS + 5000;
    const file = idsCsv('big.csv', n);
    const id = writes.begin(P, 'd', 'big', 'WRITE_APPEND', 'CREATE_IF_NEEDED', idSchema);
    let stagedSeen = 0;
    // After each call: the rows past a file's worth are in a staged file, and the table does not exist yet.
    const errors = await readFile(id, file, 262_144, () => {
      stagedSeen = Math.max(stagedSeen, parquet().filter((f) => f.includes('+')).length);
      expect(storage.getTable(P, 'd', 'big')).toBeUndefined();
    });
    expect(errors).toEqual([]);
    stagedSeen = Math.max(stagedSeen, await eventually(() => parquet().filter((f) => f.includes('+')).length, 1));
    expect(stagedSeen).toBe(1);
    expect(storage.getTable(P, 'd', 'big')).toBeUndefined();
    expect(await writes.commit(id)).toBe(n);
    expect(await q('SELECT COUNT(*), SUM(id), MIN(id), MAX(id) FROM d.big')).toEqual([BigInt(n), BigInt((n * (n + 1)) / 2), 1n, BigInt(n)]);
    // Only the table's own files remain: the staged names are gone.
    const stem = storage.requireTable(P, 'd', 'big').storage!;
    expect(parquet().length).toBe(2);
    expect(parquet().every((f) => f.startsWith(`${stem}@`))).toBe(true);
  });

  it('a rejected record is reported; an abort drops what was staged, files too, and leaves the table as it was', async () => {
    await q('CREATE TABLE d.t AS SELECT 1 AS id');
    const before = parquet();
    const id = writes.begin(P, 'd', 't', 'WRITE_APPEND', 'CREATE_IF_NEEDED', idSchema);
    // The bad record comes after a file's worth of good ones, which are staged to a file by then.
    const n = FILE_ROWS + 300_000;
    let staged = 0;
    const errors = await readFile(id, idsCsv('bad.csv', n, n - 10), 262_144, () => {
      staged = Math.max(staged, parquet().length - before.length);
    });
    staged = Math.max(staged, await eventually(() => parquet().length - before.length, 1));
    expect(staged).toBe(1);
    expect(JSON.parse(errors[0]!)).toEqual([{ index: expect.any(Number), errors: [expect.objectContaining({ reason: 'invalid' })] }]);
    await writes.abort(id);
    expect(await q('SELECT COUNT(*), SUM(id) FROM d.t')).toEqual([1n, 1n]);
    expect(parquet()).toEqual(before);
    await expect(writes.commit(id)).rejects.toThrow(/Not found/);
  });

  it("a load into parameterized columns rounds NUMERIC(P, S) to its scale and fails on a value beyond the column's parameters", async () => {
    await q('CREATE TABLE d.pt (n NUMERIC(5, 2), s STRING(2), xs ARRAY<INT64>)');
    const fields = [{ name: 'n', type: 'NUMERIC' }, { name: 's', type: 'STRING' }];
    const load = async (name: string, text: string) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, text);
      const id = writes.begin(P, 'd', 'pt', 'WRITE_APPEND', 'CREATE_IF_NEEDED', { schema: { fields } });
      try {
        await writes.appendFile(id, { file: { path: file, uri: `file://${file}` }, format: 'CSV', options: {}, fields, skipInvalidRows: false, maxRows: 1000 });
      } catch (e) {
        await writes.abort(id);
        throw e;
      }
      return writes.commit(id);
    };
    expect(await load('p1.csv', '1.255,ab\n-2.005,c\n')).toBe(2);
    expect(await q("SELECT STRING_AGG(CAST(n AS STRING), ',' ORDER BY n), COUNTIF(xs IS NULL) FROM d.pt")).toEqual(['-2.01,1.26', 0n]);
    await expect(load('p2.csv', '1000,ab\n')).rejects.toThrow('Field n: NUMERIC(5, 2) has precision 5 and scale 2 but got a value that is not in range of [-999.99, 999.99]');
    await expect(load('p3.csv', '1,abc\n')).rejects.toThrow('Field s: STRING(2) has maximum length 2 but got a value with length 3');
    expect(await q('SELECT COUNT(*) FROM d.pt')).toEqual([2n]);
  });

  it('WRITE_TRUNCATE replaces rows and schema in one commit; a table made meanwhile takes the rows of a write that would have made it', async () => {
    const id = writes.begin(P, 'd', 't', 'WRITE_TRUNCATE', 'CREATE_IF_NEEDED', { schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 's', type: 'STRING' }] } });
    expect(await writes.append(id, JSON.stringify([{ json: { id: 7, s: 'a' } }, { json: { id: 8, s: 'b' } }]), false)).toBe('');
    expect(await writes.commit(id)).toBe(2);
    expect(await q("SELECT COUNT(*), SUM(id), STRING_AGG(s, ',' ORDER BY s) FROM d.t")).toEqual([2n, 15n, 'a,b']);

    const made = writes.begin(P, 'd', 'later', 'WRITE_APPEND', 'CREATE_IF_NEEDED', idSchema);
    expect(await writes.append(made, JSON.stringify([{ json: { id: 2 } }, { json: { id: 3 } }]), false)).toBe('');
    await q('CREATE TABLE d.later AS SELECT 1 AS id');
    expect(await writes.commit(made)).toBe(2);
    expect(await q('SELECT COUNT(*), SUM(id) FROM d.later')).toEqual([3n, 6n]);
    // Every file is one of a table's: nothing staged is left.
    const stems = ['big', 't', 'later', 'pt'].map((t) => `${storage.requireTable(P, 'd', t).storage}@`);
    expect(parquet().filter((f) => !stems.some((s) => f.startsWith(s)))).toEqual([]);
  });

  it('staged rows are laid out as the table is: by its clustering columns within each file', async () => {
    await q('CREATE TABLE d.c (k INT64, s STRING) CLUSTER BY k');
    const id = writes.begin(P, 'd', 'c', 'WRITE_APPEND', 'CREATE_IF_NEEDED', {});
    const keys = [5, 3, 9, 1, 7];
    expect(await writes.append(id, JSON.stringify(keys.map((k) => ({ json: { k, s: `s${k}` } }))), false)).toBe('');
    await writes.commit(id);
    const td = storage.tableData(P, 'd', 'c');
    await td.load();
    const rows = (await stateBatches(td.state())).flatMap((b) => Array.from({ length: b.length }, (_, r) => getValue(b.columns[0]!, r)));
    expect(rows).toEqual([1n, 3n, 5n, 7n, 9n]);
  });

  it('staged files a crash left are removed at start-up', async () => {
    const staged = storage.stageRows(P, 'd', 'x', [{ name: 'id', type: T.INT64, required: false }], {});
    await staged.add({ length: 3, columns: [vectorFromValues(T.INT64, [1n, 2n, 3n])] });
    await staged.finish();
    const left = parquet().filter((f) => f.startsWith('x+'));
    expect(left).toHaveLength(1);
    // No discard, no commit: as after kill -9.
    await storage.close();
    storage = await Storage.open(dir, { noLock: true });
    catalog = new EngineCatalog(storage);
    writes = new TableWrites(storage, catalog);
    expect(parquet().filter((f) => f.startsWith('x+'))).toEqual([]);
    expect(await q('SELECT COUNT(*) FROM d.t')).toEqual([2n]);
  });
});
