// The streaming buffer: rows that insertAll (tabledata.insertAll, the legacy
// streaming API) wrote recently. As the service documents it, queries and
// tabledata.list read them at once, but they are not yet in managed storage:
// tables.get reports them apart (`streamingBuffer`: estimatedRows,
// estimatedBytes, oldestEntryTime) and leaves them out of numRows, and copy
// and extract jobs do not see them ("up to 90 minutes to become available
// for copy and export operations").
//
// Row-level DML (UPDATE, DELETE, MERGE) may not change rows streamed within
// the last 30 minutes that are still buffered: the statement fails with the
// service's error, as documented among DML's limitations.
//
// When rows leave the buffer is the emulator's rule, chosen to keep tests
// deterministic: a request's rows leave STREAMING_BUFFER_MS after it was
// acknowledged (WAREHOUSE_EMULATOR_STREAMING_BUFFER_SECONDS, default 90
// minutes, the documented bound; 0 turns the buffer off). A change of the
// table's generation (rows replaced: a truncating write, a rewrite, a schema
// change) empties it, as does a restart: the buffer is bookkeeping in the
// engine's memory, never where rows are kept (they are in the table's log
// from the acknowledgement on, whatever this says).
//
// Rows are tracked by position in the table's generation, the positions an
// append took (TableData's appends report them; appends only ever add
// positions at the end), so that a reader that must not see them reads the
// state with those positions as deleted ones.
import type { AppendedRows, TableData } from '../storage/table-data.js';
import { countBelow, type TableState } from '../storage/table-state.js';

const envSeconds = Number(process.env.WAREHOUSE_EMULATOR_STREAMING_BUFFER_SECONDS ?? process.env.BIGQUERY_EMULATOR_STREAMING_BUFFER_SECONDS);

/** How long a request's rows stay in the buffer. */
export const STREAMING_BUFFER_MS = Number.isFinite(envSeconds) && envSeconds >= 0 ? envSeconds * 1000 : 90 * 60 * 1000;

/** UPDATE, DELETE and MERGE may not change rows streamed within this time (the documented 30 minutes; rows out of the buffer always may). */
export const DML_RECENT_MS = 30 * 60 * 1000;

interface Entry {
  /** Positions [start, end) of the generation. */
  readonly start: number;
  readonly end: number;
  readonly bytes: number;
  readonly ms: number;
}

interface Buffered {
  generation: number;
  entries: Entry[];
}

/** What tables.get reports (int64 fields as decimal strings). */
export interface StreamingBufferStats {
  estimatedRows: string;
  estimatedBytes: string;
  oldestEntryTime: string;
}

export class StreamingBuffer {
  private readonly tables = new WeakMap<TableData, Buffered>();

  constructor(private readonly windowMs = STREAMING_BUFFER_MS) {}

  /** Records an acknowledged insertAll append: the positions its rows took (TableData.appendRequestRows / append). */
  note(td: TableData, rows: AppendedRows, bytes: number, ms = Date.now()): void {
    if (this.windowMs <= 0 || rows.end <= rows.start) return;
    let b = this.tables.get(td);
    if (b && rows.generation < b.generation) return;
    if (!b || b.generation !== rows.generation) this.tables.set(td, (b = { generation: rows.generation, entries: [] }));
    const last = b.entries[b.entries.length - 1];
    // Appends within a second of the last one that follow it join its entry: a stream of requests keeps one entry a second.
    if (last && last.end === rows.start && ms - last.ms < 1000) b.entries[b.entries.length - 1] = { ...last, end: rows.end, bytes: last.bytes + bytes };
    else b.entries.push({ start: rows.start, end: rows.end, bytes, ms });
  }

  /** The entries still buffered for `state` (expired ones and those of an older generation dropped). */
  private live(td: TableData, state: TableState, now: number): readonly Entry[] {
    const b = this.tables.get(td);
    if (!b) return [];
    if (b.generation !== state.generation) {
      // A newer generation replaced the buffered rows; an older state (a statement's earlier read) has none of them.
      if (state.generation > b.generation) this.tables.delete(td);
      return [];
    }
    const from = now - this.windowMs;
    let i = 0;
    while (i < b.entries.length && b.entries[i]!.ms <= from) i++;
    if (i > 0) b.entries.splice(0, i);
    if (b.entries.length === 0) this.tables.delete(td);
    return b.entries;
  }

  /** Changes whenever what stats() reports may have (memo keys of presented resources). */
  key(td: TableData, state: TableState, now = Date.now()): string {
    const entries = this.live(td, state, now);
    return entries.length === 0 ? '' : `${entries.length}:${entries[0]!.ms}:${entries[entries.length - 1]!.end}`;
  }

  /** Whether any row of `state` was streamed within DML_RECENT_MS and is still buffered (TRUNCATE TABLE may not remove it). */
  anyRecent(td: TableData, state: TableState, now = Date.now()): boolean {
    return this.live(td, state, now).some((e) => e.ms > now - DML_RECENT_MS && e.start < state.rows);
  }

  /** Whether any of `positions` (of `state`) was streamed within DML_RECENT_MS and is still buffered: row-level DML may not change it. */
  recentlyStreamed(td: TableData, state: TableState, positions: readonly number[], now = Date.now()): boolean {
    const recent = this.live(td, state, now).filter((e) => e.ms > now - DML_RECENT_MS);
    if (recent.length === 0 || positions.length === 0) return false;
    const ranges = this.ranges(recent, state);
    return positions.some((p) => ranges.some(([a, b]) => p >= a && p < b));
  }

  /** The entries' positions within `state` as disjoint ranges, ascending. */
  private ranges(entries: readonly Entry[], state: TableState): [number, number][] {
    const sorted = entries.map((e): [number, number] => [e.start, Math.min(e.end, state.rows)]).filter(([a, b]) => a < b);
    sorted.sort((x, y) => x[0] - y[0]);
    const out: [number, number][] = [];
    for (const [a, b] of sorted) {
      const last = out[out.length - 1];
      if (last && a <= last[1]) last[1] = Math.max(last[1], b);
      else out.push([a, b]);
    }
    return out;
  }

  /** tables.get's `streamingBuffer`, or undefined while nothing is buffered. */
  stats(td: TableData, state: TableState, now = Date.now()): StreamingBufferStats | undefined {
    const entries = this.live(td, state, now);
    if (entries.length === 0) return undefined;
    const rows = this.ranges(entries, state).reduce((n, [a, b]) => n + (b - a) - (countBelow(state.deleted, b) - countBelow(state.deleted, a)), 0);
    const bytes = entries.reduce((n, e) => n + e.bytes, 0);
    return { estimatedRows: String(rows), estimatedBytes: String(bytes), oldestEntryTime: String(entries[0]!.ms) };
  }

  /** The positions of `state` still buffered, as disjoint ranges [start, end), ascending (an ingestion-time partitioned table's _PARTITIONTIME reads NULL there). */
  bufferedRanges(td: TableData, state: TableState, now = Date.now()): [number, number][] {
    const entries = this.live(td, state, now);
    return entries.length === 0 ? [] : this.ranges(entries, state);
  }

  /** The rows of `state` in managed storage: its buffered rows read as deleted (copy and extract jobs read this). */
  settled(td: TableData, state: TableState, now = Date.now()): TableState {
    const entries = this.live(td, state, now);
    if (entries.length === 0) return state;
    // The state's deleted positions and the buffered ones, merged in order (each once).
    const merged: number[] = [];
    const del = state.deleted;
    let i = 0;
    for (const [a, b] of this.ranges(entries, state)) {
      while (i < del.length && del[i]! < a) merged.push(del[i++]!);
      for (let p = a; p < b; p++) merged.push(p);
      while (i < del.length && del[i]! < b) i++;
    }
    while (i < del.length) merged.push(del[i++]!);
    return { ...state, deleted: Uint32Array.from(merged) };
  }
}

/** The engine's one buffer (insertAll, tables.get, copy and extract share it). */
export const streamingBuffer = new StreamingBuffer();

/**
 * Rows the Storage Write API (gRPC) wrote within the last 30 minutes
 * (write-api-grpc.md, Use DML with recently streamed data): UPDATE, DELETE
 * and MERGE may change them, but not inside a multi-statement transaction
 * (its Limitations). Bookkeeping only, as the buffer above: not reported by
 * tables.get, not hidden from copies. The window is the documented 30
 * minutes, or the buffer's when that is shorter (0 turns both off).
 */
export const writeApiRecent = new StreamingBuffer(Math.min(STREAMING_BUFFER_MS, DML_RECENT_MS));
