// The table-level row-group index (row-group-index.ts): a selective scan of a
// many-file table consults only its candidate row groups' statistics, the
// index is built once per segment list (not per query), and every scan
// through it gives the rows and the read/skipped counts of the file-by-file
// scan it replaces (counted, never timed).
import * as fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScanFilter } from '../../src/storage/api.js';
import { writeFragments } from '../../src/storage/fragment-writes.js';
import { pruningCounters } from '../../src/storage/pruning.js';
import { indexCounters } from '../../src/storage/row-group-index.js';
import { partsLogicalBytes, plainState, scanCounters, scanSegments, scanState, stateLogicalBytes, stateParts, stateSegments, type ScanStats, type Segment, type TableState } from '../../src/storage/table-state.js';
import type { Column } from '../../src/types/schema.js';
import { T } from '../../src/types/types.js';
import { getValue, vectorFromValues, type Batch } from '../../src/types/vector.js';
import { tempDir } from '../engine/helpers.js';

const FILES = 40;
const ROWS = 1000;
const cols: Column[] = [
  { name: 'id', type: T.INT64, required: false },
  { name: 'v', type: T.FLOAT64, required: false },
];
let dir: string;
let segs: Segment[];

/** Rows [from, from + n): ascending ids (NULL every 97th), v spread over [0, 100). */
function batch(from: number, n: number, idType: Column['type'] = T.INT64): Batch {
  const ids = Array.from({ length: n }, (_, i) => ((from + i) % 97 === 50 ? null : idType.kind === 'STRING' ? String(from + i) : BigInt(from + i)));
  const vs = Array.from({ length: n }, (_, i) => ((from + i) * 7919) % 1000 / 10);
  return { length: n, columns: [vectorFromValues(idType, ids), vectorFromValues(T.FLOAT64, vs)] };
}

beforeAll(async () => {
  dir = tempDir('rg-index-');
  segs = [];
  for (let f = 0; f < FILES; f++) {
    // File 13 was written when `id` was a STRING (an ALTER since): it reads as NULL, its statistics say nothing.
    const schema = f === 13 ? [{ ...cols[0]!, type: T.STRING }, cols[1]!] : cols;
    const [info] = await writeFragments(dir, 't', schema, [batch(f * ROWS, ROWS, schema[0]!.type)], f);
    segs.push({ kind: 'file', path: `${dir}/${info!.file}`, skip: 0, rows: ROWS });
  }
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const newStats = (): ScanStats => ({ rowGroupsRead: 0, rowGroupsSkipped: 0, blocksSkipped: 0 });

async function rowsOf(batches: AsyncIterable<Batch>): Promise<unknown[][]> {
  const out: unknown[][] = [];
  for await (const b of batches) for (let i = 0; i < b.length; i++) out.push(b.columns.map((v) => getValue(v, i)));
  return out;
}

/** The scan through the index and the file-by-file scan: rows (as sets for a live filter, which reads in no fixed order), counts, and footers consulted. */
async function both(st: TableState, filters: ScanFilter[]): Promise<{ indexed: unknown[][]; plain: unknown[][]; stats: ScanStats; plainStats: ScanStats; files: number; plainFiles: number }> {
  const stats = newStats();
  let f0 = pruningCounters.filesTested;
  const indexed = await rowsOf(scanState(st, [0, 1], filters, stats));
  const files = pruningCounters.filesTested - f0;
  const plainStats = newStats();
  f0 = pruningCounters.filesTested;
  const plain = await rowsOf(scanSegments(stateSegments(st), st.columns, [0, 1], filters, plainStats, st.deleted));
  return { indexed, plain, stats, plainStats, files, plainFiles: pruningCounters.filesTested - f0 };
}

describe('row-group index', () => {
  it('a selective range consults only its candidates, with the rows and counts of the file-by-file scan', async () => {
    const st = plainState(cols, segs);
    const b0 = indexCounters.built;
    const r = await both(st, [{ column: 0, op: '>=', values: [27_010] }, { column: 0, op: '<=', values: [27_012] }]);
    // Storage skips what cannot match; the executor filters the rows it hands over.
    expect(r.indexed.map((row) => row[0])).toEqual(expect.arrayContaining([27010n, 27011n, 27012n]));
    expect(r.indexed).toEqual(r.plain);
    expect(r.stats).toEqual(r.plainStats);
    expect([r.stats.rowGroupsRead, r.stats.rowGroupsSkipped]).toEqual([2, FILES - 2]);
    // The candidate file, and file 13 whose statistics say nothing; the plain scan prepares the filters for all 40.
    expect(r.files).toBe(2);
    expect(r.plainFiles).toBe(FILES);
    // Built once for the segment list: later scans of it (and of states sharing it) build none.
    expect(indexCounters.built - b0).toBe(1);
    const again = await both(st, [{ column: 0, op: 'in', values: [5, 39_999, 13_500] }]);
    expect(again.indexed).toEqual(again.plain);
    expect(again.stats).toEqual(again.plainStats);
    expect(again.stats.rowGroupsRead).toBe(3);
    expect(indexCounters.built - b0).toBe(1);
  });

  it('any filter gives the rows and counts of the file-by-file scan', async () => {
    // A state with deleted rows and rows appended in memory after the files (same segment list: the index is reused).
    const mem: Segment = { kind: 'mem', batch: batch(FILES * ROWS, 10) };
    const all = [...segs, mem];
    const deleted = Uint32Array.from([3, 27_011, 39_999, FILES * ROWS + 2]);
    const st: TableState = { ...plainState(cols, all), deleted };
    const cases: ScanFilter[][] = [
      [{ column: 0, op: '=', values: [7_500] }],
      [{ column: 0, op: '<', values: [1_500] }],
      [{ column: 0, op: '>', values: [38_500] }, { column: 1, op: '<=', values: [50] }],
      [{ column: 0, op: 'in', values: [13_010, 40_005] }],
      [{ column: 0, op: '>=', values: [100_000] }],
      [{ column: 0, op: '>=', values: [20_000] }, { column: 0, op: '<', values: [10_000] }],
      [{ column: 0, op: 'isNull', values: [] }],
      [{ column: 1, op: '>=', values: [99.9] }],
      [{ column: 0, op: '<=', values: [3_000.5] }, { column: 1, op: 'notNull', values: [] }],
    ];
    for (const filters of cases) {
      const r = await both(st, filters);
      expect(r.indexed, JSON.stringify(filters)).toEqual(r.plain);
      expect(r.stats, JSON.stringify(filters)).toEqual(r.plainStats);
      // The parts parallel execution reads: the same row groups, in the same order, as the file-by-file listing.
      const listed = newStats();
      const parts = await stateParts(st, filters, listed);
      expect(listed.rowGroupsRead + listed.rowGroupsSkipped).toBe(FILES);
      expect(parts.filter((p) => p.kind === 'rowGroup').length).toBe(listed.rowGroupsRead);
    }
  });

  it("job statistics' logical bytes come from the index with the listed parts' sums, and list nothing", async () => {
    // A window of the first file, the other files, rows appended in memory; and a state of fewer rows than its segments (the last file cut: listed as parts).
    const windowed: Segment[] = [{ ...(segs[0] as Segment & { kind: 'file' }), skip: 100, rows: 500 }, ...segs.slice(1), { kind: 'mem', batch: batch(FILES * ROWS, 10) }];
    for (const st of [plainState(cols, windowed), plainState(cols, windowed, (FILES - 1) * ROWS - 700)]) {
      const expected = await partsLogicalBytes(await stateParts(st, [], newStats()), cols, [0, 1]);
      expect(expected.bytes.every((b) => b > 0)).toBe(true);
      const read = scanCounters.rowGroupsRead;
      const built = indexCounters.built;
      expect(await stateLogicalBytes(st, [0, 1])).toEqual(expected);
      expect(await stateLogicalBytes(st, [1])).toEqual({ rows: expected.rows, bytes: [expected.bytes[1]] });
      expect(scanCounters.rowGroupsRead).toBe(read);
      expect(indexCounters.built).toBeLessThanOrEqual(built + 1);
    }
    // Deleted rows or filters: the listed parts' sums as before.
    const del: TableState = { ...plainState(cols, windowed), deleted: Uint32Array.from([5, 2_000, 30_001]) };
    const filters: ScanFilter[] = [{ column: 0, op: '<', values: [5_000] }];
    expect(await stateLogicalBytes(del, [0, 1])).toEqual(await partsLogicalBytes(await stateParts(del, [], newStats()), cols, [0, 1]));
    expect(await stateLogicalBytes(plainState(cols, windowed), [1], filters)).toEqual(await partsLogicalBytes(await stateParts(plainState(cols, windowed), filters, newStats()), cols, [1]));
  });

  it("a top-N's live filter reads best first and stops at the first row group that loses", async () => {
    const st = plainState(cols, segs);
    for (const live of [
      { column: 0, op: '>=', values: [39_000], live: true },
      { column: 0, op: '<=', values: [1_999], live: true },
      { column: 0, op: '>', values: [], live: true },
    ] satisfies ScanFilter[]) {
      const r = await both(st, [live]);
      const sorted = (rows: unknown[][]): unknown[][] => [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0])));
      expect(sorted(r.indexed)).toEqual(sorted(r.plain));
      expect(r.stats).toEqual(r.plainStats);
      if (live.values.length > 0) {
        // The row groups that can hold better rows, and file 13 (no statistics); the rest are never looked at.
        expect(r.stats.rowGroupsRead).toBe(live.op === '>=' ? 2 : 3);
        expect(r.files).toBe(r.stats.rowGroupsRead);
        expect(r.plainFiles).toBe(FILES);
      }
    }
  });
});
