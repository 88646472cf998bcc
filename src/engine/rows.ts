// Table rows: InsertRows (insertAll) and ListRows (tabledata.list), spec 2.3, 2.8, 4.4.
import { invalid, notFound } from '../storage/errors.js';
import { schemaFieldsOf, type Resource } from '../storage/resources.js';
import type { Storage } from '../storage/store.js';
import { columnToRestField, type Column, type RestField } from '../types/schema.js';
import { convertJsonValue, parseTimestampNumber, ValueConversionError } from '../types/json-values.js';
import type { Value } from '../types/values.js';
import type { Batch } from '../types/vector.js';
import { ColumnBuilder } from '../storage/json-rows.js';
import { encodeRows, type WireOptions } from '../types/wire.js';
import { ResultStore } from './results.js';
import { insertTable } from './tables.js';

interface InsertError {
  readonly index: number;
  readonly errors: { reason: string; location: string; debugInfo: string; message: string }[];
}

/** insertId de-duplication window (the real service keeps ids about a minute; a few minutes is safe). */
const DEDUP_WINDOW_MS = 5 * 60 * 1000;

const EMPTY_IDS: ReadonlyMap<string, number> = new Map();

class DedupCache {
  private byTable = new Map<string, Map<string, number>>();
  private lastSweep = Date.now();

  /** The table's id -> expiry map (read-only use; may be empty). */
  forTable(table: string): ReadonlyMap<string, number> {
    return this.byTable.get(table) ?? EMPTY_IDS;
  }

  remember(table: string, ids: readonly string[], now: number): void {
    let m = this.byTable.get(table);
    if (!m) {
      m = new Map();
      this.byTable.set(table, m);
    }
    for (const id of ids) m.set(id, now + DEDUP_WINDOW_MS);
    if (now - this.lastSweep > 30_000) {
      this.lastSweep = now;
      for (const [t, ids2] of this.byTable) {
        for (const [k, exp] of ids2) if (exp <= now) ids2.delete(k);
        if (ids2.size === 0) this.byTable.delete(t);
      }
    }
  }
}

export interface InsertRowsArgs {
  readonly projectId: string;
  readonly datasetId: string;
  readonly tableId: string;
  readonly rowsJson: string;
  readonly skipInvalidRows: boolean;
  readonly ignoreUnknownValues: boolean;
  readonly templateSuffix: string;
}

export class RowService {
  private dedup = new DedupCache();

  constructor(
    private readonly st: Storage,
    private readonly results: ResultStore,
  ) {}

  /** Returns the JSON text of `insertErrors`, or '' when every row was stored. */
  async insertRows(a: InsertRowsArgs): Promise<string> {
    const { projectId: p, datasetId: d } = a;
    let t = a.tableId;
    const base = this.st.requireTable(p, d, t);
    if (a.templateSuffix) {
      // Template tables: rows go to `<table><suffix>`, created from the template's schema.
      const target = t + a.templateSuffix;
      if (!this.st.getTable(p, d, target)) {
        await insertTable(this.st, p, d, target, { schema: base.resource.schema, tableReference: { projectId: p, datasetId: d, tableId: target } }).catch((e: unknown) => {
          if (!this.st.getTable(p, d, target)) throw e;
        });
      }
      t = target;
    }
    const entry = this.st.requireTable(p, d, t);
    if (entry.kind === 'VIEW') throw invalid(`Cannot insert into view ${p}:${d}.${t}`);
    let rows: unknown;
    try {
      rows = a.rowsJson ? JSON.parse(a.rowsJson) : [];
    } catch {
      throw invalid('Invalid JSON payload received.');
    }
    if (!Array.isArray(rows)) throw invalid('Invalid JSON payload received. rows must be a list.');
    const columns = this.st.columnsOf(entry);
    const nc = columns.length;
    const tableKey = `${p}\u0000${d}\u0000${t}`;
    const now = Date.now();
    const builders = columns.map((c) => new ColumnBuilder(c.type, rows.length));
    const accepted: number[] = [];
    const newIds: string[] = [];
    const seenInRequest = new Set<string>();
    const recentIds = this.dedup.forTable(tableKey);
    const errors: InsertError[] = [];
    const lowerNames = columns.map((c) => c.name.toLowerCase());
    const kinds = columns.map((c) => c.type.kind);
    for (let r = 0; r < rows.length; r++) {
      const item = rows[r] as { insertId?: unknown; json?: unknown } | null;
      const json = item && typeof item === 'object' ? item.json : undefined;
      if (json === null || typeof json !== 'object' || Array.isArray(json)) {
        errors.push({ index: r, errors: [{ reason: 'invalid', location: '', debugInfo: '', message: 'Row must be a JSON object.' }] });
        continue;
      }
      const insertId = typeof item!.insertId === 'string' && item!.insertId !== '' ? item!.insertId : undefined;
      if (insertId !== undefined && (seenInRequest.has(insertId) || (recentIds.get(insertId) ?? 0) > now)) continue;
      const o = json as Record<string, unknown>;
      let lower: Map<string, unknown> | null = null;
      let rowErrors: InsertError['errors'] | null = null;
      for (let c = 0; c < nc; c++) {
        const col = columns[c]!;
        let v = o[col.name];
        if (v === undefined) {
          // Column names are case-insensitive.
          lower ??= new Map(Object.keys(o).map((k) => [k.toLowerCase(), o[k]]));
          v = lower.get(lowerNames[c]!);
        }
        if ((v === null || v === undefined) && col.required) {
          (rowErrors ??= []).push({ reason: 'invalid', location: col.name, debugInfo: '', message: `Missing required field: ${col.name}.` });
          continue;
        }
        const k = accepted.length;
        const kind = kinds[c]!;
        // Fast paths for the common JSON forms; everything else via convertJsonValue.
        if (typeof v === 'number' && (kind === 'FLOAT64' || (kind === 'INT64' && Number.isSafeInteger(v)))) {
          builders[c]!.setNumber(k, v);
          continue;
        }
        if (typeof v === 'string' && kind === 'STRING') {
          builders[c]!.setValue(k, v);
          continue;
        }
        if (typeof v === 'boolean' && kind === 'BOOL') {
          builders[c]!.setNumber(k, v ? 1 : 0);
          continue;
        }
        if (typeof v === 'string' && kind === 'TIMESTAMP') {
          try {
            const micros = parseTimestampNumber(v);
            if (!Number.isNaN(micros)) {
              builders[c]!.setNumber(k, micros);
              continue;
            }
          } catch {
            // fall through: convertJsonValue reports the error
          }
        }
        try {
          builders[c]!.set(k, convertJsonValue(col.type, v));
        } catch (e) {
          if (!(e instanceof ValueConversionError)) throw e;
          (rowErrors ??= []).push({ reason: 'invalid', location: [col.name, ...e.path].join('.'), debugInfo: '', message: e.message });
        }
      }
      if (rowErrors) {
        errors.push({ index: r, errors: rowErrors });
        continue;
      }
      accepted.push(r);
      if (insertId !== undefined) {
        seenInRequest.add(insertId);
        newIds.push(insertId);
      }
    }
    if (errors.length > 0 && !a.skipInvalidRows) {
      // The whole request is rejected: every other row is reported as stopped.
      const bad = new Set(errors.map((e) => e.index));
      const out: InsertError[] = [...errors];
      for (let r = 0; r < rows.length; r++) {
        if (!bad.has(r)) out.push({ index: r, errors: [{ reason: 'stopped', location: '', debugInfo: '', message: '' }] });
      }
      return JSON.stringify(out);
    }
    if (accepted.length > 0) {
      const batch: Batch = { length: accepted.length, columns: builders.map((b) => b.finish(accepted.length)) };
      // Every row stored as sent: the WAL keeps the request's own JSON text (no re-encoding).
      const raw = accepted.length === rows.length ? a.rowsJson : undefined;
      await this.st.tableData(p, d, t).append(batch, raw);
      this.dedup.remember(tableKey, newIds, now);
    }
    return errors.length > 0 ? JSON.stringify(errors) : '';
  }

  async listRows(a: ListRowsArgs): Promise<ListRowsResult> {
    const { projectId: p, datasetId: d, tableId: t } = a;
    let columns: readonly Column[];
    let fields: RestField[];
    let batches: readonly Batch[];
    let total: number;
    let etag: string;
    const anon = ResultStore.isAnonDataset(d) ? this.results.get(p, d, t) : undefined;
    if (anon) {
      columns = anon.columns.map((c) => ({ name: c.name, type: c.type, required: false }));
      fields = anon.columns.map((c) => columnToRestField(c.name, c.type));
      batches = anon.batches;
      total = anon.rowCount;
      etag = anon.etag;
    } else {
      if (ResultStore.isAnonDataset(d) && !this.st.getDataset(p, d)) throw notFound(`Table ${p}:${d}.${t}`);
      let name = t;
      let deleted = undefined as ReturnType<Storage['resolveDecorated']>;
      if (!this.st.getTable(p, d, t) && t.includes('@')) {
        // Snapshot decorator: a live table reads as itself, a deleted one from its snapshot.
        name = t.slice(0, t.lastIndexOf('@'));
        if (!this.st.getTable(p, d, name)) deleted = this.st.resolveDecorated(p, d, t);
        if (!deleted && !this.st.getTable(p, d, name)) name = t;
      }
      const entry = deleted ? deleted.entry : this.st.requireTable(p, d, name);
      if (entry.kind === 'VIEW') throw invalid('Cannot list a table of type VIEW.');
      const td = deleted ? this.st.deletedTableData(deleted) : this.st.tableData(p, d, name);
      await td.load();
      columns = td.schema;
      fields = schemaFieldsOf(entry.resource as Resource);
      batches = td.snapshot();
      total = batches.reduce((s, b) => s + b.length, 0);
      etag = `"${Buffer.from(`${p}.${d}.${t}:${td.version}:${total}`).toString('base64').slice(-16)}"`;
    }
    let sel = columns.map((_, i) => i);
    if (a.selectedFields) {
      const wanted = new Set(
        a.selectedFields
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .map((s) => s.split('.')[0]!.toLowerCase()),
      );
      for (const w of wanted) {
        if (!columns.some((c) => c.name.toLowerCase() === w)) throw invalid(`Field ${w} not found in table schema.`);
      }
      sel = sel.filter((i) => wanted.has(columns[i]!.name.toLowerCase()));
    }
    const start = Math.max(0, a.startIndex);
    const count = Math.max(0, Math.min(a.maxResults, total - start));
    const rowsJson = encodeRows(batches, start, count, a.wire, sel);
    const selFields = sel.map((i) => fields[i] ?? columnToRestField(columns[i]!.name, columns[i]!.type, columns[i]!.required));
    return {
      totalRows: total,
      rowsJson,
      schemaJson: JSON.stringify({ fields: selFields }),
      nextIndex: start + count < total && count > 0 ? start + count : -1,
      etag,
    };
  }
}

export interface ListRowsArgs {
  readonly projectId: string;
  readonly datasetId: string;
  readonly tableId: string;
  readonly startIndex: number;
  readonly maxResults: number;
  readonly selectedFields: string;
  readonly wire: WireOptions;
}

export interface ListRowsResult {
  readonly totalRows: number;
  readonly rowsJson: string;
  readonly schemaJson: string;
  readonly nextIndex: number;
  readonly etag: string;
}

