// Table rows: InsertRows (insertAll) and ListRows (tabledata.list), spec 2.3, 2.8, 4.4.
import { invalid, notFound } from '../storage/errors.js';
import { schemaFieldsOf, type Resource } from '../storage/resources.js';
import type { Storage } from '../storage/store.js';
import { columnToRestField, type Column, type RestField } from '../types/schema.js';
import { ValueConversionError } from '../types/json-values.js';
import { takeVector, type Batch } from '../types/vector.js';
import { ColumnBuilder, setCell } from '../storage/json-rows.js';
import { encodeRows, type WireOptions } from '../types/wire.js';
import { ResultStore } from './results.js';
import { insertTable } from './tables.js';
import { rowsAsOf } from './catalog.js';

interface InsertError {
  readonly index: number;
  readonly errors: { reason: string; location: string; debugInfo: string; message: string }[];
}

/** insertId de-duplication window (the real service keeps ids about a minute; a few minutes is safe). */
export const DEDUP_WINDOW_MS = 5 * 60 * 1000;

/**
 * Recently stored insertIds per table, in two generations of plain sets: an id
 * is kept at least DEDUP_WINDOW_MS (at most twice that). Sets of strings, not
 * a map of expiry times: no boxed number per id and no sweeps over all ids.
 */
export class IdGenerations {
  private current = new Set<string>();
  private previous = new Set<string>();
  private rotatedMs: number;

  constructor(now: number) {
    this.rotatedMs = now;
  }

  has(id: string): boolean {
    return this.current.has(id) || this.previous.has(id);
  }

  /** Ages the generations; true when both are empty afterwards (the table can be forgotten). */
  rotate(now: number): boolean {
    if (now - this.rotatedMs >= DEDUP_WINDOW_MS) {
      // Two windows since the last rotation: everything is older than a window.
      this.previous = now - this.rotatedMs >= 2 * DEDUP_WINDOW_MS ? new Set() : this.current;
      this.current = new Set();
      this.rotatedMs = now;
    }
    return this.current.size === 0 && this.previous.size === 0;
  }

  add(ids: readonly string[]): void {
    for (const id of ids) this.current.add(id);
  }
}

const NO_IDS = { has: (_id: string): boolean => false };

class DedupCache {
  private byTable = new Map<string, IdGenerations>();

  /** The table's recent ids (read-only use). */
  forTable(table: string, now: number): { has(id: string): boolean } {
    const g = this.byTable.get(table);
    if (!g) return NO_IDS;
    if (g.rotate(now)) {
      this.byTable.delete(table);
      return NO_IDS;
    }
    return g;
  }

  remember(table: string, ids: readonly string[], now: number): void {
    if (ids.length === 0) return;
    let g = this.byTable.get(table);
    if (!g) this.byTable.set(table, (g = new IdGenerations(now)));
    g.rotate(now);
    g.add(ids);
  }
}

export interface InsertRowsArgs {
  readonly projectId: string;
  readonly datasetId: string;
  readonly tableId: string;
  readonly rowsJson: string;
  /** The rows as UTF-8 JSON bytes as the client sent them (wins over rowsJson); logged to the WAL as they are. */
  readonly rowsUtf8?: Buffer;
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
      const text = a.rowsUtf8 ? a.rowsUtf8.toString('utf8') : a.rowsJson;
      rows = text ? JSON.parse(text) : [];
    } catch {
      throw invalid('Invalid JSON payload received.');
    }
    if (!Array.isArray(rows)) throw invalid('Invalid JSON payload received. rows must be a list.');
    const columns = this.st.columnsOf(entry);
    const nc = columns.length;
    const tableKey = `${p}\u0000${d}\u0000${t}`;
    const now = Date.now();
    const recentIds = this.dedup.forTable(tableKey, now);
    const n = rows.length;
    // Pass 1: the row objects to convert (slot k holds row cand[k]); rows that
    // are not objects fail here, ids seen by earlier requests are skipped.
    const objs: Record<string, unknown>[] = [];
    const cand: number[] = [];
    const candIds: (string | undefined)[] = [];
    const notObject = new Set<number>();
    for (let r = 0; r < n; r++) {
      const item = rows[r] as { insertId?: unknown; json?: unknown } | null;
      const json = item && typeof item === 'object' ? item.json : undefined;
      if (json === null || typeof json !== 'object' || Array.isArray(json)) {
        notObject.add(r);
        continue;
      }
      const insertId = typeof item!.insertId === 'string' && item!.insertId !== '' ? item!.insertId : undefined;
      if (insertId !== undefined && recentIds.has(insertId)) continue;
      objs.push(json as Record<string, unknown>);
      cand.push(r);
      candIds.push(insertId);
    }
    // Pass 2, one column at a time: a tight loop per column with a fixed
    // converter, writing straight into the column's vector.
    const m = objs.length;
    const builders = columns.map((c) => new ColumnBuilder(c.type, m));
    let rowErrors: (InsertError['errors'] | undefined)[] | null = null;
    let lowerMaps: (Map<string, unknown> | undefined)[] | null = null;
    for (let c = 0; c < nc; c++) {
      const col = columns[c]!;
      const name = col.name;
      const lowerName = name.toLowerCase();
      const type = col.type;
      const b = builders[c]!;
      for (let k = 0; k < m; k++) {
        const o = objs[k]!;
        let v = o[name];
        if (v === undefined) {
          // Column names are case-insensitive.
          lowerMaps ??= new Array<Map<string, unknown> | undefined>(m);
          let lower = lowerMaps[k];
          if (lower === undefined) lowerMaps[k] = lower = new Map(Object.keys(o).map((key) => [key.toLowerCase(), o[key]]));
          v = lower.get(lowerName);
        }
        if ((v === null || v === undefined) && col.required) {
          rowErrors ??= new Array<InsertError['errors'] | undefined>(m);
          (rowErrors[k] ??= []).push({ reason: 'invalid', location: name, debugInfo: '', message: `Missing required field: ${name}.` });
          continue;
        }
        try {
          setCell(b, k, type, v);
        } catch (e) {
          if (!(e instanceof ValueConversionError)) throw e;
          rowErrors ??= new Array<InsertError['errors'] | undefined>(m);
          (rowErrors[k] ??= []).push({ reason: 'invalid', location: [name, ...e.path].join('.'), debugInfo: '', message: e.message });
        }
      }
    }
    // Pass 3, in row order: errors, duplicates within the request (of an
    // accepted row only, as a row-at-a-time loop would see them), acceptance.
    const errors: InsertError[] = [];
    const keep: number[] = [];
    const newIds: string[] = [];
    const seenInRequest = new Set<string>();
    for (let r = 0, k = 0; r < n; r++) {
      if (notObject.has(r)) {
        errors.push({ index: r, errors: [{ reason: 'invalid', location: '', debugInfo: '', message: 'Row must be a JSON object.' }] });
        continue;
      }
      if (k >= m || cand[k] !== r) continue; // an id seen by an earlier request
      const slot = k++;
      const insertId = candIds[slot];
      if (insertId !== undefined && seenInRequest.has(insertId)) continue;
      const errs = rowErrors?.[slot];
      if (errs) {
        errors.push({ index: r, errors: errs });
        continue;
      }
      keep.push(slot);
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
    if (keep.length > 0) {
      let batch: Batch = { length: m, columns: builders.map((b) => b.finish(m)) };
      if (keep.length < m) batch = { length: keep.length, columns: batch.columns.map((v) => takeVector(v, keep)) };
      // Every row stored as sent: the WAL keeps the request's own JSON (no re-encoding).
      const raw = keep.length === rows.length ? (a.rowsUtf8 ?? a.rowsJson) : undefined;
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
    const anon = ResultStore.isAnonDataset(d) ? await this.results.get(p, d, t, Math.max(0, a.startIndex), a.maxResults) : undefined;
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
      let asOfMs: number | undefined;
      const decorated = /^(.+)@(-?\d+)$/.exec(t);
      if (!this.st.getTable(p, d, t) && decorated) {
        // Snapshot decorator `table@<epoch ms>` (negative: that long ago; 0: now): a
        // live table reads as of that instant, a deleted one from its snapshot.
        name = decorated[1]!;
        const at = Number(decorated[2]);
        if (this.st.getTable(p, d, name)) asOfMs = at < 0 ? Date.now() + at : at === 0 ? undefined : at;
        else deleted = this.st.resolveDecorated(p, d, t);
        if (!deleted && !this.st.getTable(p, d, name)) name = t;
      }
      const entry = deleted ? deleted.entry : this.st.requireTable(p, d, name);
      // A materialized view is not listable either (the real service's message); it is read by queries.
      if (entry.kind === 'VIEW' || entry.kind === 'MATERIALIZED_VIEW') throw invalid(`Cannot list a table of type ${entry.kind}.`);
      const td = deleted ? this.st.deletedTableData(deleted) : this.st.tableData(p, d, name);
      await td.load();
      columns = td.schema;
      fields = schemaFieldsOf(entry.resource as Resource);
      batches = asOfMs !== undefined && asOfMs < Date.now() ? await rowsAsOf(this.st, { projectId: p, datasetId: d, tableId: name }, entry, asOfMs) : td.snapshot();
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

