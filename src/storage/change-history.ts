// APPENDS and CHANGES (time-series-functions.md): a table's change history
// read from what time travel keeps. Within a generation a row's position
// says when it came (the first version holding it) and a deletion log
// entry when it went (the first version past it); the generation's change
// record says why (table-history.ts, ChangeRecord): an update's new rows,
// rows carried over by a replace that changed no data, an update's old
// rows. A replace that took the rows away (TRUNCATE, WRITE_TRUNCATE) deletes
// the rows live then at its end. Thinned versions (table-history.ts,
// pruneVersions) move their changes to the next kept version's time, as
// they move the rows time travel reads.
import type { Column } from '../types/schema.js';
import { T } from '../types/types.js';
import { takeVector, vectorFromValues, type Batch } from '../types/vector.js';
import type { Value } from '../types/values.js';
import { ROW_POSITION } from './api.js';
import { conformBatches } from './row-batches.js';
import type { HistoryGeneration } from './table-data.js';
import { inRanges } from './table-history.js';
import { scanSegments, segmentRows, sliceSegments, type Segment } from './table-state.js';

export type ChangeType = 'INSERT' | 'UPDATE' | 'DELETE';

/** One row of APPENDS or CHANGES: the generation's row at `position`, what happened to it and when. */
export interface ChangeEvent {
  readonly position: number;
  readonly type: ChangeType;
  readonly ms: number;
  readonly forUpdate: boolean;
}

/**
 * The changes of generation `g` committed in [startMs, endMs): its inserted
 * rows (and, for CHANGES, its updates' new rows, its deletions and the
 * deletions of a replace that took its rows away), by position. Rows a
 * version added are [previous version's rows, its rows), its deletions the
 * log entries between the two versions' lengths: only versions in the
 * window are walked.
 */
export function generationEvents(g: HistoryGeneration, changes: boolean, startMs: number, endMs: number): ChangeEvent[] {
  const out: ChangeEvent[] = [];
  const within = (ms: number): boolean => ms >= startMs && ms < endMs;
  const r = g.record;
  let rows = 0;
  let logged = 0;
  for (const [ms, n, d = 0] of g.versions) {
    const logEnd = Math.min(d, g.log.length);
    if (within(ms)) {
      for (let p = rows; p < n; p++) {
        if (inRanges(r.carried, p)) continue;
        const updated = inRanges(r.updated, p);
        if (updated && !changes) continue;
        out.push({ position: p, type: updated ? 'UPDATE' : 'INSERT', ms, forUpdate: false });
      }
      if (changes) for (let k = logged; k < logEnd; k++) out.push({ position: g.log[k]!, type: 'DELETE', ms, forUpdate: inRanges(r.forUpdate, k) });
    }
    rows = Math.max(rows, n);
    logged = Math.max(logged, logEnd);
  }
  if (changes && r.truncatedRows !== undefined && g.endMs !== undefined && within(g.endMs)) {
    const gone = new Set(g.log.slice(0, logged));
    for (let p = 0; p < Math.min(r.truncatedRows, rows); p++) if (!gone.has(p)) out.push({ position: p, type: 'DELETE', ms: g.endMs, forUpdate: false });
  }
  return out;
}

/** Whether a multi-statement transaction committed to a generation in [startMs, endMs) (CHANGES refuses such a window). */
export function transactionWithin(gens: readonly HistoryGeneration[], startMs: number, endMs: number): boolean {
  return gens.some((g) => (g.record.txn ?? []).some((ms) => ms >= startMs && ms < endMs));
}

/**
 * The rows of APPENDS (`changes` false) or CHANGES over `gens` in
 * [startMs, endMs), in `columns` (today's columns the query reads, matched
 * by name; a column added since reads NULL), then _CHANGE_TYPE,
 * _CHANGE_TIMESTAMP and, for CHANGES, _CHANGE_IS_FOR_UPDATE. Only the
 * rows an event names are read, and only those columns: a window over a
 * table's last commits reads their rows (changedSlices), not the table.
 */
export async function changeRows(gens: readonly HistoryGeneration[], columns: readonly Column[], changes: boolean, startMs: number, endMs: number): Promise<Batch[]> {
  const out: Batch[] = [];
  const names = new Set(columns.map((c) => c.name.toLowerCase()));
  for (const g of gens) {
    const events = generationEvents(g, changes, startMs, endMs);
    if (events.length === 0) continue;
    const byPos = new Map<number, ChangeEvent[]>();
    for (const e of events) {
      const list = byPos.get(e.position);
      if (list) list.push(e);
      else byPos.set(e.position, [e]);
    }
    const cols = g.columns.flatMap((c, i) => (names.has(c.name.toLowerCase()) ? [i] : []));
    const read = cols.map((i) => g.columns[i]!);
    for (const slice of changedSlices(g.segments, [...byPos.keys()].sort((a, b) => a - b))) {
      for await (const b of scanSegments(slice.segments, g.columns, [...cols, ROW_POSITION], [], undefined, undefined, slice.start)) {
        const pos = b.columns[cols.length]!;
        const take: number[] = [];
        const kinds: Value[] = [];
        const times: Value[] = [];
        const forUpdate: Value[] = [];
        for (let i = 0; i < b.length; i++) {
          for (const e of byPos.get(Number((pos.data as ArrayLike<number>)[i])) ?? []) {
            take.push(i);
            kinds.push(e.type);
            times.push(BigInt(Math.round(e.ms * 1000)));
            forUpdate.push(e.forUpdate);
          }
        }
        if (take.length === 0) continue;
        const rows: Batch = { length: take.length, columns: b.columns.slice(0, cols.length).map((v) => takeVector(v, take)) };
        const [conformed] = conformBatches(read, columns, [rows]);
        const extra = [vectorFromValues(T.STRING, kinds), vectorFromValues(T.TIMESTAMP, times), ...(changes ? [vectorFromValues(T.BOOL, forUpdate)] : [])];
        out.push({ length: take.length, columns: [...conformed!.columns, ...extra] });
      }
    }
  }
  return out;
}

/**
 * The parts of `segments` that hold the rows at `positions` (ascending):
 * per segment holding one, the rows from its first such position to its
 * last, with the position of the first (a file segment is read from there,
 * its row groups before skipped).
 */
export function changedSlices(segments: readonly Segment[], positions: readonly number[]): { start: number; segments: Segment[] }[] {
  const out: { start: number; segments: Segment[] }[] = [];
  let off = 0;
  let k = 0;
  for (const seg of segments) {
    const start = off;
    off += segmentRows(seg);
    if (k >= positions.length) break;
    if (positions[k]! >= off) continue;
    const first = positions[k]!;
    while (k < positions.length && positions[k]! < off) k++;
    const last = positions[k - 1]!;
    out.push({ start: first, segments: sliceSegments([seg], first - start, last + 1 - start) });
  }
  return out;
}
