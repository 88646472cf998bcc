// Anonymous query-result tables: kept in memory (LRU, bounded by cells) under
// the hidden dataset `_anon...`, so ListRows / getQueryResults can page them.
import type { ResultColumn } from '../planner/api.js';
import type { Batch } from '../types/vector.js';

export interface ResultTable {
  readonly projectId: string;
  readonly datasetId: string;
  readonly tableId: string;
  readonly columns: readonly ResultColumn[];
  readonly batches: readonly Batch[];
  readonly rowCount: number;
  readonly etag: string;
}

export const ANON_DATASET_PREFIX = '_anon';
const MAX_CELLS = 50_000_000;
const MAX_TABLES = 2000;

export class ResultStore {
  private tables = new Map<string, ResultTable>();
  private cells = 0;

  static isAnonDataset(datasetId: string): boolean {
    return datasetId.startsWith(ANON_DATASET_PREFIX);
  }

  static datasetFor(projectId: string): string {
    return `${ANON_DATASET_PREFIX}${projectId.replace(/[^A-Za-z0-9_]/g, '_')}`;
  }

  put(t: ResultTable): void {
    const key = `${t.projectId}\u0000${t.datasetId}\u0000${t.tableId}`;
    const old = this.tables.get(key);
    if (old) {
      this.cells -= old.rowCount * Math.max(1, old.columns.length);
      this.tables.delete(key);
    }
    this.tables.set(key, t);
    this.cells += t.rowCount * Math.max(1, t.columns.length);
    // Evict oldest first; the newest result always stays.
    for (const [k, v] of this.tables) {
      if ((this.cells <= MAX_CELLS && this.tables.size <= MAX_TABLES) || v === t) break;
      this.tables.delete(k);
      this.cells -= v.rowCount * Math.max(1, v.columns.length);
    }
  }

  get(projectId: string, datasetId: string, tableId: string): ResultTable | undefined {
    const key = `${projectId}\u0000${datasetId}\u0000${tableId}`;
    const t = this.tables.get(key);
    if (t) {
      // Refresh recency.
      this.tables.delete(key);
      this.tables.set(key, t);
    }
    return t;
  }
}
