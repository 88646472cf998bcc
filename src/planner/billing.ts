// Bytes a statement processes and bills, as the service reports them in job
// statistics (totalBytesProcessed, totalBytesBilled) and enforces with
// maximumBytesBilled. Processed: per scan, the table's rows times the logical
// width of the columns it reads (nominal widths for variable-width types).
// Billed (on-demand pricing): each table's bytes rounded up to a whole MB,
// at least 10 MB per table read; a statement that reads nothing bills nothing.
import type { Rel } from '../analyzer/resolved.js';
import { relInputs } from '../analyzer/rewrite.js';
import type { TableId, TableInfo } from '../storage/api.js';
import { QueryError } from '../types/errors.js';
import type { SqlType } from '../types/types.js';

const MB = 1024 * 1024;
/** The service's minimum bytes billed per table a query reads. */
const MIN_BILLED_PER_TABLE = 10 * MB;

/** Logical bytes per value the service bills for fixed-width types; variable-width ones use a nominal size. */
function typeBytes(t: SqlType): number {
  switch (t.kind) {
    case 'BOOL':
      return 1;
    case 'NUMERIC':
    case 'INTERVAL':
      return 16;
    case 'BIGNUMERIC':
      return 32;
    case 'STRUCT':
      return t.fields.reduce((n, f) => n + typeBytes(f.type), 0);
    case 'ARRAY':
      return typeBytes(t.element);
    case 'STRING':
    case 'BYTES':
    case 'JSON':
    case 'GEOGRAPHY':
      return 10;
    default:
      return 8;
  }
}

const keyOf = (id: TableId): string => `${id.projectId}\u0000${id.datasetId}\u0000${id.tableId}`;

/** Bytes of every column of a table (what a DML statement bills for its target). */
export function wholeTableBytes(info: TableInfo): number {
  // An ingestion-time partitioned table's _PARTITIONTIME is no column of its data.
  return info.rowCount * info.columns.reduce((n, c) => n + typeBytes(c.type), 0);
}

/** A statement's bytes, by table: the service rounds and applies its minimum per table. */
export class ScanAccount {
  private readonly byTable = new Map<string, number>();

  clear(): void {
    this.byTable.clear();
  }

  get processed(): number {
    let n = 0;
    for (const b of this.byTable.values()) n += b;
    return n;
  }

  get billed(): number {
    let n = 0;
    for (const b of this.byTable.values()) if (b > 0) n += Math.max(MIN_BILLED_PER_TABLE, Math.ceil(b / MB) * MB);
    return n;
  }

  /**
   * Adds what an optimized plan's scans read: rows x width of the columns
   * each scan reads. An ingestion-time partitioned table's _PARTITIONTIME
   * (scan index past its columns) is not billed, as the service bills a
   * query of the pseudo-columns alone nothing.
   */
  addPlan(rel: Rel, tableInfo: (id: TableId) => TableInfo | undefined): void {
    if (rel.kind === 'scan') {
      const info = tableInfo(rel.table);
      if (info) {
        const width = rel.columns.reduce((n, c, i) => n + (rel.tableColumns[i] === info.columns.length && info.partitionUnit ? 0 : typeBytes(c.type)), 0);
        this.add(rel.table, info.rowCount * width);
      }
    }
    for (const i of relInputs(rel)) this.addPlan(i, tableInfo);
  }

  add(id: TableId, bytes: number): void {
    const k = keyOf(id);
    this.byTable.set(k, (this.byTable.get(k) ?? 0) + bytes);
  }

  /** A DML target: all its columns, whatever the statement reads of it. */
  setWhole(info: TableInfo): void {
    this.byTable.set(keyOf(info.id), wholeTableBytes(info));
  }

  /** The job's maximumBytesBilled: a statement that would bill more fails before it runs. */
  checkLimit(limit: number | undefined): void {
    if (!limit) return;
    const billed = this.billed;
    if (billed > limit) throw new QueryError(`Query exceeded limit for bytes billed: ${limit}. ${billed} or higher required.`, 'bytesBilledLimitExceeded');
  }
}
