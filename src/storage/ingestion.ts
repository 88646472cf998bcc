// Ingestion-time partitioning: a table with `timePartitioning` and no
// `field` is partitioned by when its rows were written (or by the partition a
// decorator `t$20240101` named). Each row carries that time, truncated to the
// partition unit, in a hidden physical TIMESTAMP column stored after the
// table's own columns: the catalog never shows it (REST schema, `SELECT *`,
// INFORMATION_SCHEMA.COLUMNS, tabledata.list, reads); SQL reads it as the
// pseudo-column _PARTITIONTIME (and, for daily partitions, _PARTITIONDATE,
// its date). Its name cannot be a user column's (field names are letters,
// digits and underscores).
import { T } from '../types/types.js';
import type { Column } from '../types/schema.js';
import { constantVector, type Batch } from '../types/vector.js';

export type PartitionUnit = 'HOUR' | 'DAY' | 'MONTH' | 'YEAR';

/** The hidden column's physical name. */
export const PARTITION_TIME_COLUMN = '$partitiontime';

export const partitionTimeColumn: Column = { name: PARTITION_TIME_COLUMN, type: T.TIMESTAMP, required: false };

/** The partition unit of an ingestion-time partitioned table's resource; undefined for any other table. */
export function ingestionUnit(resource: Record<string, unknown>): PartitionUnit | undefined {
  const tp = resource['timePartitioning'] as { field?: unknown; type?: unknown } | undefined;
  if (!tp || typeof tp !== 'object' || (typeof tp.field === 'string' && tp.field !== '')) return undefined;
  if (resource['type'] === 'VIEW' || resource['view'] !== undefined || resource['materializedView'] !== undefined) return undefined;
  const unit = String(tp.type ?? 'DAY').toUpperCase();
  return unit === 'HOUR' || unit === 'MONTH' || unit === 'YEAR' ? unit : 'DAY';
}

/** Whether a stored column is the hidden partition time. */
export const isPartitionTime = (c: { readonly name: string }): boolean => c.name === PARTITION_TIME_COLUMN;

/** The table's visible columns of a stored column list (the hidden one left out). */
export function visibleColumns<C extends { readonly name: string }>(columns: readonly C[]): C[] {
  return columns.filter((c) => !isPartitionTime(c));
}

const HOUR_US = 3_600_000_000;
const DAY_US = 24 * HOUR_US;

/** `micros` (UTC) truncated to the start of its partition. */
export function truncateToPartition(micros: bigint, unit: PartitionUnit): bigint {
  if (unit === 'HOUR' || unit === 'DAY') {
    const step = BigInt(unit === 'HOUR' ? HOUR_US : DAY_US);
    const r = micros % step;
    return micros - (r < 0n ? r + step : r);
  }
  const d = new Date(Number(micros / 1000n));
  const start = Date.UTC(d.getUTCFullYear(), unit === 'MONTH' ? d.getUTCMonth() : 0, 1);
  return BigInt(start) * 1000n;
}

/** The partition of a write at `ms` (epoch milliseconds). */
export function partitionOfMs(ms: number, unit: PartitionUnit): bigint {
  return truncateToPartition(BigInt(Math.trunc(ms)) * 1000n, unit);
}

const DIGITS: Record<PartitionUnit, number> = { HOUR: 10, DAY: 8, MONTH: 6, YEAR: 4 };

/**
 * The start (UTC micros) of the partition a decorator id names (`2024010112`,
 * `20240101`, `202401`, `2024` by unit); undefined when it names none
 * (wrong length for the unit, an impossible date).
 */
export function decoratorPartition(id: string, unit: PartitionUnit): bigint | undefined {
  if (!new RegExp(`^\\d{${DIGITS[unit]}}$`).test(id)) return undefined;
  const y = Number(id.slice(0, 4));
  const m = id.length >= 6 ? Number(id.slice(4, 6)) : 1;
  const d = id.length >= 8 ? Number(id.slice(6, 8)) : 1;
  const h = id.length >= 10 ? Number(id.slice(8, 10)) : 0;
  const ms = Date.UTC(y, m - 1, d, h);
  const back = new Date(ms);
  if (y < 1 || back.getUTCFullYear() !== y || back.getUTCMonth() !== m - 1 || back.getUTCDate() !== d || h > 23) return undefined;
  return BigInt(ms) * 1000n;
}

/** The decorator id of a partition start (`$20240101` without the `$`). */
export function partitionId(micros: bigint, unit: PartitionUnit): string {
  const iso = new Date(Number(micros / 1000n)).toISOString();
  const id = iso.slice(0, 4) + iso.slice(5, 7) + iso.slice(8, 10) + iso.slice(11, 13);
  return id.slice(0, DIGITS[unit]);
}

/**
 * A batch of the table's visible columns completed with the hidden one, each
 * row in partition `micros`; a batch that already carries it is returned as is.
 */
export function withPartitionTime(batch: Batch, stored: readonly Column[], micros: bigint): Batch {
  if (batch.columns.length === stored.length) return batch;
  return { length: batch.length, columns: [...batch.columns, constantVector(T.TIMESTAMP, micros, batch.length)] };
}

/** A table's stored columns: `visible` (its schema's), then the hidden partition time when it is partitioned by ingestion time. */
export function storedColumns(kind: string, resource: Record<string, unknown>, visible: Column[]): Column[] {
  return kind !== 'EXTERNAL' && ingestionUnit(resource) ? [...visible, partitionTimeColumn] : visible;
}
