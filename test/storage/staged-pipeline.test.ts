// A bulk write (StagedRows: CTAS, loads, INSERT ... SELECT) writes each whole
// file while its caller makes the next file's rows. The files must be the ones
// written one after another (same bytes, rows in order), and a write dropped
// while a file is still being written must leave no file behind.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILE_ROWS, FragmentFile } from '../../src/storage/fragment-file.js';
import { StagedRows, writeFragments } from '../../src/storage/fragment-writes.js';
import type { Column } from '../../src/types/schema.js';
import { T } from '../../src/types/types.js';
import type { Batch } from '../../src/types/vector.js';
import { tempDir } from '../engine/helpers.js';

const cols: Column[] = [
  { name: 'i', type: T.INT64, required: false },
  { name: 's', type: T.STRING, required: false },
];

function batches(total: number): Batch[] {
  const out: Batch[] = [];
  for (let s = 0; s < total; s += 50_000) {
    const n = Math.min(50_000, total - s);
    const ids = new Float64Array(n);
    const strs: string[] = new Array(n);
    for (let r = 0; r < n; r++) {
      ids[r] = s + r;
      strs[r] = `v${(s + r) % 1000}`;
    }
    out.push({ length: n, columns: [{ type: T.INT64, length: n, data: ids, nulls: null }, { type: T.STRING, length: n, data: strs, nulls: null }] });
  }
  return out;
}

describe('a bulk write that writes a file while the next one is made', () => {
  it('writes the files one after another would, rows in order', async () => {
    const all = batches(2 * FILE_ROWS + 5000);
    const dir = tempDir();
    const staged = new StagedRows(dir, 'st', cols, 3);
    for (const b of all) await staged.add(b);
    const files = await staged.finish();
    expect(files.map((f) => f.rows)).toEqual([FILE_ROWS, FILE_ROWS, 5000]);
    const serialDir = tempDir();
    const serial = await writeFragments(serialDir, 'st', cols, all, 3);
    expect(serial.length).toBe(3);
    for (let k = 0; k < 3; k++) {
      const a = fs.readFileSync(path.join(dir, files[k]!.file));
      const b = fs.readFileSync(path.join(serialDir, serial[k]!.file));
      expect(Buffer.compare(a, b), `file ${k}`).toBe(0);
      const first = await (await FragmentFile.open(path.join(dir, files[k]!.file))).readChunk(0, 'i', T.INT64, null);
      expect(first.kind === 'fixed' && first.values[0]).toBe(k * FILE_ROWS);
    }
  }, 120_000);

  it('dropped while a file is written: no file left', async () => {
    const dir = tempDir();
    const staged = new StagedRows(dir, 'st', cols, 3);
    // The last add starts the first file's write and returns before it is done.
    for (const b of batches(FILE_ROWS + 10)) await staged.add(b);
    await staged.discard();
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('st'))).toEqual([]);
  }, 120_000);
});
