// INFORMATION_SCHEMA.STREAMING_TIMELINE and WRITE_API_TIMELINE
// (information-schema-streaming.md, information-schema-write-api.md): the
// streaming inserts (tabledata.insertAll) and Storage Write API appends this
// engine received, counted per minute, table and error code (and, for the
// Storage Write API, stream type). Kept in memory for the engine's life:
// they are statistics of the traffic, not data, and a restart starts them
// anew (the pages keep 180 days; older minutes are dropped here too).
import type { TimelineRow } from '../storage/api.js';

const MINUTE_MS = 60_000;
const RETENTION_MS = 180 * 86_400_000;

type Kind = TimelineRow['kind'];

class IngestionTimeline {
  private readonly rows = new Map<string, TimelineRow & { requests: number; rows: number; bytes: number }>();
  private oldest = Infinity;

  /** One request: its table, stream type (WRITE_API: DEFAULT, COMMITTED, PENDING, BUFFERED), error code (null or OK when it succeeded), rows and bytes. */
  note(kind: Kind, table: { p: string; d: string; t: string }, streamType: string | null, errorCode: string | null, rows: number, bytes: number, nowMs = Date.now()): void {
    const minuteMs = nowMs - (nowMs % MINUTE_MS);
    const key = JSON.stringify([kind, minuteMs, table.p, table.d, table.t, streamType, errorCode]);
    let r = this.rows.get(key);
    if (!r) {
      r = { kind, minuteMs, projectId: table.p, datasetId: table.d, tableId: table.t, streamType, errorCode, requests: 0, rows: 0, bytes: 0 };
      this.rows.set(key, r);
      this.oldest = Math.min(this.oldest, minuteMs);
    }
    r.requests++;
    r.rows += rows;
    r.bytes += bytes;
    if (nowMs - this.oldest > RETENTION_MS) this.prune(nowMs);
  }

  /** The rows of `kind` (of every project: a view narrows them), oldest minute first. */
  list(kind: Kind): TimelineRow[] {
    return [...this.rows.values()].filter((r) => r.kind === kind).sort((a, b) => a.minuteMs - b.minuteMs);
  }

  private prune(nowMs: number): void {
    this.oldest = Infinity;
    for (const [k, r] of this.rows) {
      if (nowMs - r.minuteMs > RETENTION_MS) this.rows.delete(k);
      else this.oldest = Math.min(this.oldest, r.minuteMs);
    }
  }
}

export const ingestionTimeline = new IngestionTimeline();

/** A REST error status as the canonical error code the timelines group by. */
export function canonicalCode(httpStatus: number): string {
  return CODES[httpStatus] ?? (httpStatus >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT');
}

const CODES: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 409: 'ALREADY_EXISTS',
  412: 'FAILED_PRECONDITION', 429: 'RESOURCE_EXHAUSTED', 499: 'CANCELLED', 500: 'INTERNAL', 501: 'UNIMPLEMENTED', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};
