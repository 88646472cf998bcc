// The bound of a time-unit column-partitioned table's partitioning value
// when rows are streamed (write-api-rest.md, Time-unit column partitioning:
// "You can stream data into a table partitioned on a DATE, DATETIME, or
// TIMESTAMP column that is between 10 years in the past and 1 year in the
// future. Data outside this range is rejected."). Loads, queries and DML
// are not bounded: only insertAll and the Storage Write API check it.
//
// The bound is taken on the value's UTC date, against the current UTC date
// moved by whole calendar years (the page speaks of years). A NULL value
// goes to the __NULL__ partition and is always taken.
import type { Column } from '../types/schema.js';
import type { TableValueRule } from '../types/table-values.js';
import { getValue } from '../types/vector.js';

const DAY_MS = 86_400_000;
const DAY_MICROS = 86_400_000_000n;
const PICOS_PER_MICRO = 1_000_000n;

/** The UTC day (days since 1970-01-01) of a DATE, DATETIME or TIMESTAMP value; undefined for other types. */
function dayOf(kind: string, v: unknown): number | undefined {
  if (kind === 'DATE' && typeof v === 'number') return v;
  if (typeof v !== 'bigint') return undefined;
  if (kind === 'DATETIME' || kind === 'TIMESTAMP') return Number(floorDiv(v, DAY_MICROS));
  if (kind === 'TIMESTAMP_PICOS') return Number(floorDiv(v, DAY_MICROS * PICOS_PER_MICRO));
  return undefined;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b < 0n ? q - 1n : q;
}

/** The partitioning column types the bound applies to. */
const BOUNDED = new Set(['DATE', 'DATETIME', 'TIMESTAMP', 'TIMESTAMP_PICOS']);

const isoDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/**
 * A rule refusing rows whose partitioning column lies outside the streaming
 * bound (undefined when the table has no DATE/DATETIME/TIMESTAMP
 * partitioning column). Same shape as tableValueRule's, so writers apply
 * both alike: it calls `onError` for each refused row and returns the batch
 * unchanged.
 */
export function streamBoundRule(resource: Record<string, unknown>, columns: readonly Column[], now = Date.now()): TableValueRule | undefined {
  const tp = resource['timePartitioning'] as { field?: unknown } | undefined;
  const field = typeof tp?.field === 'string' ? tp.field.toLowerCase() : undefined;
  if (field === undefined) return undefined;
  const i = columns.findIndex((c) => c.name.toLowerCase() === field);
  const col = columns[i];
  if (!col || !BOUNDED.has(col.type.kind)) return undefined;
  const today = new Date(Math.floor(now / DAY_MS) * DAY_MS);
  const y = today.getUTCFullYear(), m = today.getUTCMonth(), d = today.getUTCDate();
  const low = Date.UTC(y - 10, m, d) / DAY_MS;
  const high = Date.UTC(y + 1, m, d) / DAY_MS;
  return (b, onError) => {
    const v = b.columns[i]!;
    for (let r = 0; r < b.length; r++) {
      const day = dayOf(col.type.kind, getValue(v, r));
      if (day === undefined || (day >= low && day <= high)) continue;
      onError?.(
        r,
        `Value ${isoDay(day)} for field ${col.name} of the destination table is outside the allowed bounds. You can only stream to a ${col.type.kind} partitioning column values between ${isoDay(low)} (10 years in the past) and ${isoDay(high)} (1 year in the future); write other values with a load or query job.`,
        col.name,
      );
    }
    return b;
  };
}

/** Both rules in turn (either may be undefined): the second sees the first's batch, row for row. */
export function bothRules(a: TableValueRule | undefined, b: TableValueRule | undefined): TableValueRule | undefined {
  if (!a || !b) return a ?? b;
  return (batch, onError) => b(a(batch, onError), onError);
}

