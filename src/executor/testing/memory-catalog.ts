// In-memory QueryCatalog TEST DOUBLE: it stands in for the storage layer
// (src/storage) in executor tests only. Tables are column vectors; scans
// return BATCH_SIZE slices of the requested columns. Metadata and write
// methods do the minimum the tests need.
import type { QueryCatalog, RowChange, ScanOptions, TableId, TableInfo, CreateTableOptions } from '../../storage/api.js';
import { changedBatches, collectBatches, scanBatches } from '../../storage/table-state.js';
import type { Column } from '../../types/schema.js';
import type { SqlType } from '../../types/types.js';
import type { Value } from '../../types/values.js';
import { BATCH_SIZE, sliceVector, vectorFromValues, type Batch, type Vector } from '../../types/vector.js';
import { concatBatches } from '../vectors.js';

const keyOf = (id: TableId): string => `${id.projectId}.${id.datasetId}.${id.tableId}`;

interface MemTable {
  info: TableInfo;
  data: Vector[];
  length: number;
}

export class MemoryCatalog implements QueryCatalog {
  private tables = new Map<string, MemTable>();
  private datasets = new Map<string, Record<string, unknown>>();
  private children = new Map<string, Record<string, unknown>>();

  /** Adds a table from column vectors (typed data, as storage would return). */
  addTable(id: TableId, columns: readonly { name: string; type: SqlType }[], data: Vector[]): void {
    const cols: Column[] = columns.map((c) => ({ name: c.name, type: c.type, required: false }));
    const length = data[0]?.length ?? 0;
    this.tables.set(keyOf(id), { info: { id, kind: 'TABLE', columns: cols, rowCount: length, resource: {} }, data, length });
    this.datasets.set(`${id.projectId}.${id.datasetId}`, {});
  }

  /** Adds a table from rows of scalar values (values.ts forms). */
  addRows(id: TableId, columns: readonly { name: string; type: SqlType }[], rows: readonly (readonly Value[])[]): void {
    this.addTable(
      id,
      columns,
      columns.map((c, i) => vectorFromValues(c.type, rows.map((r) => r[i]!))),
    );
  }

  getDataset(projectId: string, datasetId: string): { resource: Record<string, unknown> } | undefined {
    const r = this.datasets.get(`${projectId}.${datasetId}`);
    return r ? { resource: r } : undefined;
  }
  listDatasets(projectId: string): readonly string[] {
    return [...this.datasets.keys()].filter((k) => k.startsWith(`${projectId}.`)).map((k) => k.slice(projectId.length + 1));
  }
  getTable(id: TableId): TableInfo | undefined {
    return this.tables.get(keyOf(id))?.info;
  }
  listTables(projectId: string, datasetId: string): readonly TableInfo[] {
    return [...this.tables.values()].filter((t) => t.info.id.projectId === projectId && t.info.id.datasetId === datasetId).map((t) => t.info);
  }

  /** How many scans each table served (tests check CTE sharing with it). */
  readonly scans = new Map<string, number>();

  async *scan(id: TableId, opts: ScanOptions): AsyncIterable<Batch> {
    this.scans.set(id.tableId, (this.scans.get(id.tableId) ?? 0) + 1);
    const t = this.tables.get(keyOf(id));
    if (!t) throw new Error(`Not found: Table ${keyOf(id)}`);
    for (let s = 0; s < t.length; s += BATCH_SIZE) {
      const e = Math.min(t.length, s + BATCH_SIZE);
      yield* scanBatches([{ length: e - s, columns: t.data.map((v) => sliceVector(v, s, e)) }], opts.columns, s);
    }
  }

  async createTable(id: TableId, columns: readonly Column[], opts?: CreateTableOptions): Promise<TableInfo> {
    const info: TableInfo = { id, kind: opts?.kind ?? 'TABLE', columns, rowCount: 0, resource: opts?.resource ?? {} };
    this.tables.set(keyOf(id), { info, data: columns.map((c) => vectorFromValues(c.type, [])), length: 0 });
    if (opts?.rows) await this.appendRows(id, opts.rows);
    return this.tables.get(keyOf(id))!.info;
  }
  async dropTable(id: TableId): Promise<void> {
    this.tables.delete(keyOf(id));
  }
  async renameTable(id: TableId, to: TableId): Promise<void> {
    const t = this.tables.get(keyOf(id));
    if (!t) throw new Error('no table');
    this.tables.delete(keyOf(id));
    this.tables.set(keyOf(to), { ...t, info: { ...t.info, id: to } });
  }
  async appendRows(id: TableId, rows: readonly Batch[] | AsyncIterable<Batch>): Promise<void> {
    const t = this.tables.get(keyOf(id));
    if (!t) throw new Error('no table');
    const batches = await collectBatches(rows);
    const all = concatBatches(
      t.info.columns.map((c) => c.type),
      [{ length: t.length, columns: t.data }, ...batches],
    );
    t.data = [...all.columns];
    t.length = all.length;
    t.info = { ...t.info, rowCount: all.length };
  }
  async changeRows(id: TableId, change: RowChange): Promise<void> {
    const t = this.tables.get(keyOf(id));
    if (!t) throw new Error('no table');
    await this.replaceRows(id, changedBatches([{ length: t.length, columns: t.data }], change.deleted, change.added));
  }
  async replaceRows(id: TableId, batches: readonly Batch[]): Promise<void> {
    const t = this.tables.get(keyOf(id));
    if (!t) throw new Error('no table');
    const all = concatBatches(
      t.info.columns.map((c) => c.type),
      batches,
    );
    t.data = [...all.columns];
    t.length = all.length;
    t.info = { ...t.info, rowCount: all.length };
  }
  async alterColumns(): Promise<void> {}
  async patchTableResource(): Promise<void> {}
  async patchDatasetResource(): Promise<void> {}
  async createDataset(projectId: string, datasetId: string, resource: Record<string, unknown>): Promise<void> {
    this.datasets.set(`${projectId}.${datasetId}`, resource);
  }
  async dropDataset(projectId: string, datasetId: string): Promise<void> {
    this.datasets.delete(`${projectId}.${datasetId}`);
  }
  async undropDataset(): Promise<void> {}
  async putChild(kind: string, projectId: string, datasetId: string, id: string, resource: Record<string, unknown>): Promise<void> {
    this.children.set(`${kind}/${projectId}.${datasetId}.${id}`, resource);
  }
  getChild(kind: string, projectId: string, datasetId: string, id: string): Record<string, unknown> | undefined {
    return this.children.get(`${kind}/${projectId}.${datasetId}.${id}`);
  }
  listChildren(kind: string, projectId: string, datasetId: string): readonly Record<string, unknown>[] {
    const p = `${kind}/${projectId}.${datasetId}.`;
    return [...this.children.entries()].filter(([k]) => k.startsWith(p)).map(([, v]) => v);
  }
  async deleteChild(kind: string, projectId: string, datasetId: string, id: string): Promise<boolean> {
    return this.children.delete(`${kind}/${projectId}.${datasetId}.${id}`);
  }
}
