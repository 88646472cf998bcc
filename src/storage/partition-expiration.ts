// Partition expiration (managing-partitioned-tables.md, Set the partition expiration): each partition of a
// table partitioned by ingestion time or by a time-unit column expires when its start (the partition boundary,
// UTC) plus timePartitioning.expirationMs has passed. Integer-range tables have no partition expiration (the
// note there); `__NULL__` rows have no partition time, and time-unit column values before 1960-01-01 are in
// `__UNPARTITIONED__` (partitioned-tables.md), so neither expires.
//
// The rule here says which rows are expired at an instant; Storage.expirePartitions deletes them with a
// row-level commit (the only way rows change), before each statement and engine call reads. A deletion, not
// a read filter: the page says an expired partition is deleted and then kept only as time travel keeps
// deleted data, so raising the expiration later does not bring it back, and FOR SYSTEM_TIME AS OF an earlier
// instant still reads it.
//
// The deletion happens at the first sweep after the expiry, but the partition is gone from its expiry on
// (managing-partitioned-tables.md: "When a partition expires, BigQuery deletes that partition"; time-travel.md
// reads a table as it was at the instant). So a read of a state at an instant leaves out what had expired by
// then, whether or not a sweep deleted it yet (`withoutExpired`): FOR SYSTEM_TIME AS OF an instant between an
// expiry and the sweep after it, and a dry run, which must not write and so sweeps nothing.
import { ROW_POSITION } from './api.js';
import type { Column } from '../types/schema.js';
import { getValue } from '../types/vector.js';
import { PARTITION_TIME_COLUMN, truncateToPartition, type PartitionUnit } from './ingestion.js';
import { scanState, type TableState } from './table-state.js';
import { mergeSorted } from './deletion-log.js';

const DAY_US = 86_400_000_000n;
/** 1960-01-01T00:00:00Z in microseconds: time-unit column values before it are in `__UNPARTITIONED__`. */
const FIRST_PARTITION_US = BigInt(Date.UTC(1960, 0, 1)) * 1000n;

/** Which rows of a table are expired now. */
export interface ExpiredRows {
  /** Index of the partitioning column among the table's stored columns. */
  readonly column: number;
  /** Rows whose partition time (UTC micros) is below this are expired: the start of the first live partition. */
  readonly before: bigint;
  /** Values below this are in `__UNPARTITIONED__` (time-unit column partitioning), never expired. */
  readonly floor: bigint | null;
  /** The instant (epoch ms) the next partition expires: until then the same rows are expired. */
  readonly untilMs: number;
}

/** The start of the partition after the one starting at `start`. */
function nextPartition(start: bigint, unit: PartitionUnit): bigint {
  if (unit === 'HOUR') return start + DAY_US / 24n;
  if (unit === 'DAY') return start + DAY_US;
  const d = new Date(Number(start / 1000n));
  const y = d.getUTCFullYear() + (unit === 'YEAR' ? 1 : 0);
  const m = unit === 'MONTH' ? d.getUTCMonth() + 1 : 0;
  return BigInt(Date.UTC(y, m, 1)) * 1000n;
}

/** The table's partition expiration in ms, when it has one (a table, not a view or snapshot, partitioned by time). */
export function partitionExpirationMs(kind: string, resource: Record<string, unknown>): number | null {
  if (kind !== 'TABLE') return null;
  const tp = resource['timePartitioning'] as { expirationMs?: unknown } | undefined;
  const ms = Number(tp?.expirationMs ?? 0);
  return Number.isFinite(ms) && ms > 0 ? ms : null;
}

/** Which rows of a table with `resource` and `stored` columns are expired at `nowMs` (null: none can be). */
export function expiredRows(kind: string, resource: Record<string, unknown>, stored: readonly Column[], nowMs: number): ExpiredRows | null {
  const expMs = partitionExpirationMs(kind, resource);
  if (expMs === null) return null;
  const tp = resource['timePartitioning'] as { field?: unknown; type?: unknown };
  const field = typeof tp.field === 'string' && tp.field !== '' ? tp.field.toLowerCase() : null;
  const column = stored.findIndex((c) => (field === null ? c.name === PARTITION_TIME_COLUMN : c.name.toLowerCase() === field));
  if (column < 0) return null;
  const t = String(tp.type ?? 'DAY').toUpperCase();
  const unit: PartitionUnit = t === 'HOUR' || t === 'MONTH' || t === 'YEAR' ? t : 'DAY';
  // A partition starting at S is expired once S + expiration <= now: every partition up to the one holding now - expiration.
  const before = nextPartition(truncateToPartition(BigInt(Math.trunc(nowMs - expMs)) * 1000n, unit), unit);
  return { column, before, floor: field === null ? null : FIRST_PARTITION_US, untilMs: Number(before / 1000n) + expMs };
}

/** A partitioning column's value as UTC micros (DATE: days; DATETIME read as UTC, as its partitions are). */
function micros(v: unknown, kind: string): bigint | null {
  if (v === null || v === undefined) return null;
  if (kind === 'DATE') return BigInt(v as number) * DAY_US;
  if (kind === 'TIMESTAMP_PICOS') return (v as bigint) / 1_000_000n;
  return typeof v === 'bigint' ? v : null;
}

/** Positions (ascending) of the live rows of `state` that `x` says are expired. */
export async function expiredPositions(state: TableState, x: ExpiredRows): Promise<number[]> {
  const kind = state.columns[x.column]!.type.kind;
  const out: number[] = [];
  for await (const b of scanState(state, [x.column, ROW_POSITION])) {
    const pos = b.columns[1]!.data as ArrayLike<number>;
    for (let r = 0; r < b.length; r++) {
      const us = micros(getValue(b.columns[0]!, r), kind);
      if (us !== null && us < x.before && (x.floor === null || us >= x.floor)) out.push(Number(pos[r]));
    }
  }
  return out;
}

/**
 * `state` as read at `atMs`: the rows of partitions expired by then (by the table's `resource`) left out as deleted
 * ones, whether or not a sweep deleted them yet. The same state when none are; else one for reading only.
 */
export async function withoutExpired(kind: string, resource: Record<string, unknown>, state: TableState, atMs: number): Promise<TableState> {
  const x = expiredRows(kind, resource, state.columns, atMs);
  if (!x) return state;
  const positions = await expiredPositions(state, x);
  if (positions.length === 0) return state;
  const { generation, columns, segments, count, rows, csn } = state;
  return { generation, columns, segments, count, rows, csn, deleted: mergeSorted(state.deleted, Uint32Array.from(positions)) };
}
