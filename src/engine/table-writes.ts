// The writes of load and copy jobs: rows staged one request at a time, then
// committed as one, as the service's jobs are atomic. A reader sees the table
// before the job or after it (never part of its rows, never a truncated or
// missing table in between), and kill -9 at any instant leaves one or the
// other. Dispositions:
//   table missing: CREATE_IF_NEEDED makes it, with its rows, in one commit;
//   WRITE_TRUNCATE: its rows (and schema) are replaced in one commit, in turn
//     with mutating statements on it, keeping its other metadata;
//   WRITE_APPEND: the rows are appended in one commit;
//   WRITE_EMPTY: as WRITE_APPEND, when the table holds no rows at commit.
import { randomBytes } from 'node:crypto';
import { alreadyExists, invalid, notFound } from '../storage/errors.js';
import { columnsOf, schemaFieldsOf, type Resource } from '../storage/resources.js';
import type { Storage } from '../storage/store.js';
import { conformBatches, mergeBatches, type TableData } from '../storage/table-data.js';
import { keptBatch, type InsertError } from '../storage/json-rows.js';
import type { Column } from '../types/schema.js';
import type { Batch } from '../types/vector.js';
import type { EngineCatalog } from './catalog.js';
import { convertRequestRows, readTableRows } from './rows.js';
import { insertTable } from './tables.js';

export type WriteDisposition = 'WRITE_APPEND' | 'WRITE_TRUNCATE' | 'WRITE_EMPTY';

interface StagedWrite {
  readonly p: string;
  readonly d: string;
  readonly t: string;
  readonly write: WriteDisposition;
  /** The table to create when missing (its REST body), or for WRITE_TRUNCATE the schema it leaves. */
  readonly resource: Resource;
  /** The columns the staged rows have. */
  readonly columns: readonly Column[];
  readonly batches: Batch[];
  rows: number;
  lastUsedMs: number;
}

/** A staged write nobody committed or aborted (its job's gateway went away) is dropped after this long. */
const STALE_MS = 60 * 60 * 1000;

export class TableWrites {
  private readonly writes = new Map<string, StagedWrite>();

  constructor(
    private readonly st: Storage,
    private readonly catalog: EngineCatalog,
  ) {}

  /**
   * Starts a write into p:d.t. `resource`: the REST body of the table to
   * make when it is missing (CREATE_IF_NEEDED), and the schema the rows
   * have; an existing table keeps its own schema unless WRITE_TRUNCATE.
   */
  begin(p: string, d: string, t: string, write: string, create: string, resource: Resource): string {
    this.dropStale();
    this.st.requireDataset(p, d);
    const w = (write || 'WRITE_APPEND').toUpperCase();
    if (w !== 'WRITE_APPEND' && w !== 'WRITE_TRUNCATE' && w !== 'WRITE_EMPTY') throw invalid(`Invalid value for writeDisposition: ${write}`);
    const existing = this.st.getTable(p, d, t);
    if (!existing && (create || 'CREATE_IF_NEEDED').toUpperCase() === 'CREATE_NEVER') throw notFound(`Table ${p}:${d}.${t}`);
    if (existing?.kind === 'VIEW' || existing?.kind === 'MATERIALIZED_VIEW') throw invalid(`Cannot write to ${existing.kind === 'VIEW' ? 'view' : 'materialized view'} ${p}:${d}.${t}`);
    const columns = existing && w !== 'WRITE_TRUNCATE' ? this.st.columnsOf(existing) : columnsOf(schemaFieldsOf(resource));
    const id = randomBytes(12).toString('hex');
    this.writes.set(id, { p, d, t, write: w, resource, columns, batches: [], rows: 0, lastUsedMs: Date.now() });
    return id;
  }

  /** Stages insertAll-shaped rows (`[{"json": {...}}, ...]`); returns the rejected rows' errors, as insertAll reports them ('' when none). */
  append(id: string, rowsJson: string, skipInvalidRows: boolean): string {
    const w = this.get(id);
    const conv = convertRequestRows(rowsJson, w.columns);
    const { n, errors } = conv;
    if (errors.length > 0 && !skipInvalidRows) {
      const bad = new Set(errors.map((e) => e.index));
      const out: InsertError[] = [...errors];
      for (let r = 0; r < n; r++) if (!bad.has(r)) out.push({ index: r, errors: [{ reason: 'stopped', location: '', debugInfo: '', message: '' }] });
      return JSON.stringify(out);
    }
    if (conv.keep.length > 0) this.stage(w, keptBatch(conv.built ? conv : convertRequestRows(rowsJson, w.columns)));
    return errors.length > 0 ? JSON.stringify(errors) : '';
  }

  /** Stages every row of a table (copy jobs; snapshot decorators read as tabledata.list reads them), columns matched by name. */
  async appendFrom(id: string, p: string, d: string, t: string): Promise<number> {
    const w = this.get(id);
    const src = await readTableRows(this.st, p, d, t);
    if (src.total > 0) this.stage(w, mergeBatches(w.columns, conformBatches(src.columns, w.columns, await src.rows(0, src.total))));
    return src.total;
  }

  private stage(w: StagedWrite, b: Batch): void {
    if (b.length === 0) return;
    w.batches.push(b);
    w.rows += b.length;
  }

  /** Commits the staged rows (see the header); returns how many. */
  async commit(id: string): Promise<number> {
    const w = this.get(id);
    this.writes.delete(id);
    const { p, d, t } = w;
    const table = { projectId: p, datasetId: d, tableId: t };
    const rows = w.batches;
    if (!this.st.getTable(p, d, t)) {
      const fill = rows.length > 0 ? (td: TableData) => td.append(mergeBatches(td.schema, rows)) : undefined;
      try {
        await insertTable(this.st, p, d, t, { ...w.resource, tableReference: table }, false, fill);
        return w.rows;
      } catch (e) {
        // Made meanwhile by someone else: the disposition applies to it.
        if (!this.st.getTable(p, d, t)) throw e;
      }
    }
    if (w.write === 'WRITE_TRUNCATE') {
      await this.catalog.replaceRowsQueued(table, rows, w.columns);
      return w.rows;
    }
    // WRITE_EMPTY is checked at the commit, in turn with the table's mutations.
    const release = w.write === 'WRITE_EMPTY' ? await this.st.mutations.acquire({ p, d, t }, { kind: 'statement' }) : undefined;
    try {
      if (release && this.st.tableData(p, d, t).rowCount > 0) throw alreadyExists(`Table ${p}:${d}.${t}`);
      if (rows.length > 0) {
        const batch = mergeBatches(w.columns, rows);
        await this.st.writeRows(p, d, t, (td) => td.append(conformBatches(w.columns, td.schema, [batch])[0]!));
      }
    } finally {
      release?.();
    }
    return w.rows;
  }

  abort(id: string): void {
    this.writes.delete(id);
  }

  private get(id: string): StagedWrite {
    const w = this.writes.get(id);
    if (!w) throw notFound(`Table write ${id}`);
    w.lastUsedMs = Date.now();
    return w;
  }

  private dropStale(): void {
    const now = Date.now();
    for (const [id, w] of this.writes) if (now - w.lastUsedMs > STALE_MS) this.writes.delete(id);
  }
}
