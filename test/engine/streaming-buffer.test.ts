// When rows leave the streaming buffer (src/engine/streaming-buffer.ts), with
// the clock given: a request's rows leave the window's length after it; a new
// generation of the table empties the buffer; settled states read buffered
// rows as deleted ones, merged with the rows DML deleted.
import { describe, expect, it } from 'vitest';
import { StreamingBuffer } from '../../src/engine/streaming-buffer.js';
import type { TableData } from '../../src/storage/table-data.js';
import { NONE_DELETED, liveRows, type TableState } from '../../src/storage/table-state.js';

const state = (rows: number, generation = 0, deleted: number[] = []): TableState => ({
  generation, columns: [], segments: [], count: 0, rows, csn: 0, deleted: deleted.length ? Uint32Array.from(deleted) : NONE_DELETED,
});

describe('StreamingBuffer', () => {
  it('a request leaves the buffer the window after it; appends within a second join one entry', () => {
    const buf = new StreamingBuffer(60_000);
    const td = {} as TableData;
    buf.note(td, { generation: 0, start: 0, end: 2 }, 20, 1_000);
    buf.note(td, { generation: 0, start: 2, end: 3 }, 10, 1_500);
    buf.note(td, { generation: 0, start: 3, end: 5 }, 30, 30_000);
    expect(buf.stats(td, state(5), 30_000)).toEqual({ estimatedRows: '5', estimatedBytes: '60', oldestEntryTime: '1000' });
    // The first second's entry (rows 0-2) leaves at 61 s; the last one at 90 s.
    expect(buf.stats(td, state(5), 61_000)).toEqual({ estimatedRows: '2', estimatedBytes: '30', oldestEntryTime: '30000' });
    expect(buf.stats(td, state(5), 90_000)).toBeUndefined();
  });

  it('settled states leave buffered rows out, together with deleted ones; rows appended by others stay', () => {
    const buf = new StreamingBuffer(60_000);
    const td = {} as TableData;
    // Rows 0-1 loaded, 2-4 streamed, 5 loaded after; row 3 deleted by DML, row 0 too.
    buf.note(td, { generation: 0, start: 2, end: 5 }, 30, 1_000);
    const s = state(6, 0, [0, 3]);
    expect([...buf.settled(td, s, 2_000).deleted]).toEqual([0, 2, 3, 4]);
    expect(liveRows(buf.settled(td, s, 2_000))).toBe(2);
    expect(buf.stats(td, s, 2_000)?.estimatedRows).toBe('2');
    expect(buf.settled(td, s, 61_001)).toBe(s);
  });

  it('row-level DML may not touch rows streamed within 30 minutes that are still buffered', () => {
    const buf = new StreamingBuffer(90 * 60_000);
    const td = {} as TableData;
    buf.note(td, { generation: 0, start: 2, end: 4 }, 20, 0);
    buf.note(td, { generation: 0, start: 4, end: 6 }, 20, 40 * 60_000);
    const s = state(6);
    expect(buf.recentlyStreamed(td, s, [0, 1], 41 * 60_000)).toBe(false); // loaded rows
    expect(buf.recentlyStreamed(td, s, [5], 41 * 60_000)).toBe(true);
    expect(buf.recentlyStreamed(td, s, [2, 3], 41 * 60_000)).toBe(false); // buffered, but streamed 41 minutes ago
    expect(buf.recentlyStreamed(td, s, [5], 71 * 60_000)).toBe(false);
  });

  it('a new generation (rows replaced) empties the buffer; an older state sees none of it; a window of 0 buffers nothing', () => {
    const buf = new StreamingBuffer(60_000);
    const td = {} as TableData;
    buf.note(td, { generation: 1, start: 0, end: 4 }, 40, 1_000);
    expect(buf.stats(td, state(4, 0), 2_000)).toBeUndefined();
    expect(buf.stats(td, state(4, 1), 2_000)?.estimatedRows).toBe('4');
    expect(buf.stats(td, state(4, 2), 2_000)).toBeUndefined();
    expect(buf.stats(td, state(4, 1), 2_000)).toBeUndefined();
    const none = new StreamingBuffer(0);
    none.note(td, { generation: 0, start: 0, end: 4 }, 40, 1_000);
    expect(none.stats(td, state(4), 1_000)).toBeUndefined();
  });
});
