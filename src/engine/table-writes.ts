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
// Staged rows go to fragment files as they come (StagedRows), so a load of
// any size holds at most one file's rows in memory; the commit links those
// files into the table, never rewriting them.
import { requireAllRowsOf } from '../analyzer/row-access.js';
import { SESSION_USER } from './query.js';
import { statementClockMicros } from '../storage/commit-clock.js';
import { randomBytes } from 'node:crypto';
import { IoError } from '../io/errors.js';
import { loadFileChunks, type LoadChunk, type LoadFile } from '../io/load-files.js';
import type { ReadOptions, RestField } from '../io/schema.js';
import { alreadyExists, CatalogError, invalid, notFound } from '../storage/errors.js';
import { columnsOf, schemaFieldsOf, type Resource } from '../storage/resources.js';
import type { Storage } from '../storage/store.js';
import { FILE_ROWS } from '../storage/fragment-file.js';
import type { StagedRows } from '../storage/fragment-writes.js';
import { conformBatches, mergeBatches } from '../storage/row-batches.js';
import type { TableData } from '../storage/table-data.js';
import { keptBatch, type InsertError } from '../storage/json-rows.js';
import type { Column } from '../types/schema.js';
import { getValue, type Batch } from '../types/vector.js';
import type { Value } from '../types/values.js';
import { QueryError } from '../types/errors.js';
import { tableValueRule } from '../types/table-values.js';
import { decoratorPartition, ingestionUnit, isPartitionTime, partitionOfMs, storedColumns, truncateToPartition, withPartitionTime, type PartitionUnit } from '../storage/ingestion.js';
import type { EngineCatalog, PartitionMatch } from './catalog.js';
import { applyDefaults, convertRequestRows, readTableRows } from './rows.js';
import { insertTable } from './tables.js';
import { copiedPolicies, policiesAfterCopy, type CopyPolicies } from './copy-policies.js';

export type WriteDisposition = 'WRITE_APPEND' | 'WRITE_TRUNCATE' | 'WRITE_TRUNCATE_DATA' | 'WRITE_EMPTY';

interface StagedWrite {
  readonly p: string;
  readonly d: string;
  readonly t: string;
  readonly write: WriteDisposition;
  /** The table to create when missing (its REST body), or for WRITE_TRUNCATE the schema it leaves. */
  readonly resource: Resource;
  /** The columns the rows are read in (the table's schema). */
  readonly columns: readonly Column[];
  /** The columns the staged rows have: `columns`, then an ingestion-time partitioned table's hidden partition time. */
  readonly stored: readonly Column[];
  /** How the rows become table values (parameterized types enforced, NULL arrays []: types/table-values.ts); undefined when they are as they come. */
  readonly valueRule?: (b: Batch) => Batch;
  /** The partition time rows of an ingestion-time partitioned table get: a decorator's (`t$20240101`), else that of the job. */
  readonly partition?: bigint;
  /** The decorator's partition id, when the write names one: WRITE_TRUNCATE replaces only it, WRITE_EMPTY needs only it empty. */
  readonly decorator?: string;
  /** A decorator of a column-partitioned table: the partition its rows must all belong to (load-data-partitioned-tables.md). */
  readonly columnPartition?: PartitionMatch;
  /** The rows, in files as they come (made with the first rows). */
  staged: StagedRows | null;
  lastUsedMs: number;
  /** The local file a load reads into this write, where the last appendFile stopped. */
  file?: { readonly key: string; readonly chunks: AsyncGenerator<LoadChunk> };
  /** The write's calls, one at a time (an abort waits for an append under way). */
  queue: Promise<unknown>;
  /** A copy's: the row access policies of its sources, which the destination takes (undefined: not a copy). */
  copiedPolicies?: readonly Resource[];
  /** A load appending to a table with defaulted columns: which columns its data has (see LoadColumns), and the
   * job's clock its defaults are evaluated at (one CURRENT_TIMESTAMP for all its rows). */
  readonly load?: LoadColumns & { readonly nowMicros: bigint };
}

/**
 * What a load's data says about the columns it leaves out (default-values.md, Load data): `loaded`, the top-level
 * columns of the load's schema (undefined: the table's own); with `selfDescribed` data (Avro, Parquet, ORC) a row or
 * file without a column leaves it out too. A column left out takes its default; one loaded as NULL stays NULL.
 */
export interface LoadColumns {
  readonly loaded?: readonly string[];
  readonly selfDescribed: boolean;
}

/** A load's local file and how to read it (proto LoadFile). */
export interface FileAppend {
  readonly file: LoadFile;
  readonly format: string;
  readonly options: ReadOptions;
  /** CSV: the file's fields in file order. */
  readonly fields?: readonly RestField[];
  readonly skipInvalidRows: boolean;
  /** Records to read in this call (whole chunks: about). */
  readonly maxRows: number;
}

export interface FileAppendResult {
  /** Rejected records (index from this call's first record), as insertAll reports rows; '' when none. */
  readonly errorsJson: string;
  readonly records: number;
  readonly bytesRead: number;
  readonly done: boolean;
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
  begin(p: string, d: string, table: string, write: string, create: string, resource: Resource, load?: LoadColumns): string {
    this.dropStale();
    const dollar = table.indexOf('$');
    const t = dollar >= 0 ? table.slice(0, dollar) : table;
    const decorator = dollar >= 0 ? table.slice(dollar + 1) : undefined;
    this.st.requireDataset(p, d);
    const w = (write || 'WRITE_APPEND').toUpperCase();
    if (w !== 'WRITE_APPEND' && w !== 'WRITE_TRUNCATE' && w !== 'WRITE_TRUNCATE_DATA' && w !== 'WRITE_EMPTY') throw invalid(`Invalid value for writeDisposition: ${write}`);
    const existing = this.st.getTable(p, d, t);
    if (!existing && (create || 'CREATE_IF_NEEDED').toUpperCase() === 'CREATE_NEVER') throw notFound(`Table ${p}:${d}.${t}`);
    if (existing?.kind === 'VIEW' || existing?.kind === 'MATERIALIZED_VIEW') throw invalid(`Cannot write to ${existing.kind === 'VIEW' ? 'view' : 'materialized view'} ${p}:${d}.${t}`);
    const columns = existing && w !== 'WRITE_TRUNCATE' ? this.st.columnsOf(existing) : columnsOf(schemaFieldsOf(resource));
    // A truncating write keeps the table's partitioning; a new table takes the job's.
    const partitioning = existing?.resource ?? resource;
    const unit = ingestionUnit(partitioning);
    const stored = storedColumns(existing?.kind ?? 'TABLE', partitioning, columns);
    let partition = unit ? partitionOfMs(Date.now(), unit) : undefined;
    let columnPartition: PartitionMatch | undefined;
    if (decorator !== undefined) {
      if (!existing) throw notFound(`Table ${p}:${d}.${t}`);
      if (unit) {
        partition = decoratorPartition(decorator, unit);
        if (partition === undefined) throw invalid(`Invalid partition decorator $${decorator} for table ${p}:${d}.${t}`);
      } else columnPartition = columnPartitionOf(existing.resource, columns, decorator, `${p}:${d}.${t}`);
    }
    const id = randomBytes(12).toString('hex');
    const fields = schemaFieldsOf(existing && w !== 'WRITE_TRUNCATE' ? existing.resource : resource);
    const valueRule = tableValueRule(columns, fields);
    // Only rows added to a table's own schema can leave a column out: a new or truncated table takes the load's.
    const defaults = load && existing && w !== 'WRITE_TRUNCATE' && fields.some((f) => f.defaultValueExpression) ? { load: { ...load, nowMicros: statementClockMicros() } } : {};
    this.writes.set(id, { p, d, t, write: w, resource, columns, stored, ...(valueRule ? { valueRule } : {}), partition, decorator, ...(columnPartition ? { columnPartition } : {}), staged: null, lastUsedMs: Date.now(), queue: Promise.resolve(), ...defaults });
    return id;
  }

  /** Stages insertAll-shaped rows (`[{"json": {...}}, ...]`); returns the rejected rows' errors, as insertAll reports them ('' when none). */
  append(id: string, rowsJson: string, skipInvalidRows: boolean): Promise<string> {
    return this.run(id, async (w) => {
      const conv = convertRequestRows(rowsJson, w.columns);
      const { n, errors } = conv;
      if (errors.length > 0 && !skipInvalidRows) {
        const bad = new Set(errors.map((e) => e.index));
        const out: InsertError[] = [...errors];
        for (let r = 0; r < n; r++) if (!bad.has(r)) out.push({ index: r, errors: [{ reason: 'stopped', location: '', debugInfo: '', message: '' }] });
        return JSON.stringify(out);
      }
      if (conv.keep.length > 0) {
        const batch = keptBatch(conv.built ? conv : convertRequestRows(rowsJson, w.columns));
        // Self-described data's rows (an Avro file's records) lack the keys of the columns their file lacks.
        const keys = w.load?.selfDescribed ? rowKeys(rowsJson, conv.keep) : undefined;
        await this.stage(w, batch, keys && ((c, k) => !keys[k]!.has(w.columns[c]!.name.toLowerCase())));
      }
      return errors.length > 0 ? JSON.stringify(errors) : '';
    });
  }

  /** Stages every row of a table outside its streaming buffer (copy jobs; snapshot decorators read as tabledata.list reads them), columns matched by name, a file's worth at a time. */
  appendFrom(id: string, p: string, d: string, t: string): Promise<number> {
    return this.run(id, async (w) => {
      // Rows keep their partition time when both tables are partitioned by ingestion time (stage gives the others the job's).
      const src = await readTableRows(this.st, p, d, t, true, true);
      // using-row-level-security-with-features.md, Copy jobs: a source with row access policies needs the TRUE
      // filter, and its policies go to the destination (at the commit).
      requireAllRowsOf(src.policies, { projectId: p, datasetId: d, tableId: t }, SESSION_USER);
      w.copiedPolicies = [...(w.copiedPolicies ?? []), ...src.policies];
      const into = src.columns.some(isPartitionTime) ? w.stored : w.columns;
      for (let at = 0; at < src.total; at += FILE_ROWS) {
        const part = await src.rows(at, Math.min(src.total, at + FILE_ROWS));
        await this.stage(w, mergeBatches(into, conformBatches(src.columns, into, part)));
      }
      return src.total;
    });
  }

  /**
   * Stages records of a load's local file, read by the engine straight into
   * the write's columns (src/io/load-files.ts), about `maxRows` per call: a
   * call naming the same file continues where the last one stopped, so the
   * job reports progress between calls. A chunk with a rejected record is
   * not staged unless skipInvalidRows (the job then fails and aborts, as
   * with insertAll rows). Errors that stop a load (an unreadable file, JSON
   * that does not parse) fail the call with their envelope.
   */
  appendFile(id: string, a: FileAppend): Promise<FileAppendResult> {
    return this.run(id, async (w) => {
      const key = JSON.stringify([a.file.path, a.file.start ?? 0, a.file.end ?? 0]);
      if (w.file?.key !== key) {
        await closeFile(w);
        w.file = { key, chunks: loadFileChunks(a.file, a.format, a.options, a.fields, w.columns) };
      }
      const chunks = w.file.chunks;
      const errors: InsertError[] = [];
      let records = 0;
      let bytesRead = 0;
      let done = false;
      try {
        while (records < a.maxRows) {
          const next = await chunks.next();
          if (next.done) {
            w.file = undefined;
            done = true;
            break;
          }
          const ch = next.value;
          for (const e of ch.errors) errors.push({ index: e.index + records, errors: e.errors });
          records += ch.records;
          bytesRead = ch.bytesRead;
          if (ch.errors.length > 0 && !a.skipInvalidRows) break;
          const lacking = w.load?.selfDescribed ? ch.lacking : undefined;
          await this.stage(w, ch.batch, lacking?.length ? (c) => lacking.includes(c) : undefined);
        }
      } catch (e) {
        await closeFile(w);
        throw e instanceof IoError ? new CatalogError(e.code, e.reason, e.reason, e.message) : e;
      }
      return { errorsJson: errors.length ? JSON.stringify(errors) : '', records, bytesRead, done };
    });
  }

  /** Stages rows of the write's columns; `absent(c, k)`: self-described data's row k has no column c. */
  private async stage(w: StagedWrite, rows: Batch, absent?: (c: number, k: number) => boolean): Promise<void> {
    if (rows.length === 0) return;
    let b = w.load ? await this.withDefaults(w, w.load, rows, absent) : rows;
    try {
      if (w.valueRule) b = w.valueRule(b);
    } catch (e) {
      // A value its column's parameters refuse (STRING(L), NUMERIC(P, S)) fails the job, as a record that does not convert.
      if (e instanceof QueryError) throw invalid(e.message);
      throw e;
    }
    if (w.columnPartition) checkInPartition(b, w.columnPartition, `${w.p}:${w.d}.${w.t}`, w.columns);
    w.staged ??= this.st.stageRows(w.p, w.d, w.t, w.stored, w.resource);
    await w.staged.add(w.partition === undefined ? b : withPartitionTime(b, w.stored, w.partition));
  }

  /** A load's rows with the defaults of the columns it leaves out (LoadColumns). */
  private withDefaults(w: StagedWrite, load: LoadColumns & { readonly nowMicros: bigint }, rows: Batch, absent: ((c: number, k: number) => boolean) | undefined): Promise<Batch> {
    const loaded = load.loaded && new Set(load.loaded.map((n) => n.toLowerCase()));
    const index = new Map(w.columns.map((c, i) => [c, i]));
    return applyDefaults(this.catalog, { projectId: w.p, datasetId: w.d, tableId: w.t }, w.columns, rows, (c) => {
      if (loaded && !loaded.has(c.name.toLowerCase())) return true;
      if (!absent) return false;
      const i = index.get(c)!;
      const lacks = (k: number): boolean => absent(i, k);
      for (let k = 0; k < rows.length; k++) if (lacks(k)) return lacks;
      return false;
    }, load.nowMicros);
  }

  /** Commits the staged rows (see the header); returns how many. Whatever happens, the write is over. */
  async commit(id: string): Promise<number> {
    const w = this.take(id);
    await w.queue.catch(() => undefined);
    try {
      await closeFile(w);
      // A copy's destination takes its policies in the commit of its rows: no reader sees the new rows under the old
      // policies, nor does a restart after a crash between the two.
      const policies = w.copiedPolicies && policiesAfterCopy(this.st, w, w.write, w.copiedPolicies);
      await this.apply(w, policies);
      return w.staged?.rows ?? 0;
    } finally {
      // Committed rows are in the table's own links to the files now.
      await w.staged?.discard();
    }
  }

  private async apply(w: StagedWrite, policies: Record<string, Resource> | undefined): Promise<void> {
    const { p, d, t, staged } = w;
    const table = { projectId: p, datasetId: d, tableId: t };
    if (!this.st.getTable(p, d, t)) {
      const fill = staged ? async (td: TableData) => td.commit(await td.prepare(null, staged)) : undefined;
      try {
        await insertTable(this.st, p, d, t, { ...w.resource, tableReference: table }, false, fill, policies);
        return;
      } catch (e) {
        // Made meanwhile by someone else: the disposition applies to it.
        if (!this.st.getTable(p, d, t)) throw e;
      }
    }
    // Into one partition (`t$20240101`): WRITE_TRUNCATE replaces only it (the other partitions' rows are staged with the new ones).
    if ((w.partition !== undefined || w.columnPartition) && w.decorator !== undefined) {
      w.staged ??= this.st.stageRows(p, d, t, w.stored, w.resource);
      // Loads only (decorated copies run as DML, gateway/jobs/partition-copy.ts): no policies come with them.
      return this.catalog.writePartition(table, w.columnPartition ?? w.partition!, w.staged, w.write === 'WRITE_TRUNCATE_DATA' ? 'WRITE_TRUNCATE' : w.write);
    }
    if (w.write === 'WRITE_TRUNCATE') return this.catalog.replaceRowsQueued(table, staged ?? [], w.columns, policies);
    // WRITE_TRUNCATE_DATA (Job.md, JobConfigurationLoad): the rows are replaced, the table's schema and constraints stay.
    if (w.write === 'WRITE_TRUNCATE_DATA') return this.catalog.replaceRowsQueued(table, staged ?? []);
    // WRITE_EMPTY is checked at the commit, in turn with the table's mutations.
    const release = w.write === 'WRITE_EMPTY' ? await this.st.mutations.acquire({ p, d, t }, { kind: 'statement' }) : undefined;
    try {
      if (release && this.st.tableData(p, d, t).rowCount > 0) throw alreadyExists(`Table ${p}:${d}.${t}`);
      // The files are read by column name, as conformBatches matches them: columns added since read NULL.
      if (staged && policies) await this.st.commitRowsWithEntry(p, d, t, (e) => ({ ...e, policies }), (td) => td.prepare(null, staged));
      else if (staged) await this.st.writeRows(p, d, t, async (td) => td.commit(await td.prepare(null, staged)));
      else if (policies) await this.st.setTableEntry(p, d, t, { ...this.st.requireTable(p, d, t), policies }, false);
    } finally {
      release?.();
    }
  }

  /**
   * The policy check of a copy whose rows are written otherwise (partition decorators: the gateway's DML script,
   * whose COMMIT sets the destination's policies, copy-policies.ts): every source needs the TRUE filter, and the
   * destination can take the sources' policies. Checked before anything is written.
   */
  checkCopyPolicies(c: CopyPolicies): void {
    copiedPolicies(this.st, c);
  }

  /** Drops the write and its staged rows (once a call under way is done). */
  async abort(id: string): Promise<void> {
    const w = this.writes.get(id);
    if (!w) return;
    this.writes.delete(id);
    await drop(w);
  }

  /** Runs `fn` on write `id` after its earlier calls. */
  private run<T>(id: string, fn: (w: StagedWrite) => Promise<T>): Promise<T> {
    const w = this.get(id);
    const out = w.queue.catch(() => undefined).then(() => fn(w));
    w.queue = out;
    return out;
  }

  private get(id: string): StagedWrite {
    const w = this.writes.get(id);
    if (!w) throw notFound(`Table write ${id}`);
    w.lastUsedMs = Date.now();
    return w;
  }

  private take(id: string): StagedWrite {
    const w = this.get(id);
    this.writes.delete(id);
    return w;
  }

  private dropStale(): void {
    const now = Date.now();
    for (const [id, w] of this.writes) {
      if (now - w.lastUsedMs <= STALE_MS) continue;
      this.writes.delete(id);
      void drop(w);
    }
  }
}

async function closeFile(w: StagedWrite): Promise<void> {
  const f = w.file;
  w.file = undefined;
  await f?.chunks.return(undefined).catch(() => undefined);
}

async function drop(w: StagedWrite): Promise<void> {
  await w.queue.catch(() => undefined);
  await closeFile(w);
  await w.staged?.discard();
}

/** The lower-cased keys of the rows at `keep` of insertAll-shaped `rowsJson` (`[{"json": {...}}, ...]`). */
function rowKeys(rowsJson: string, keep: readonly number[]): Set<string>[] {
  const rows = JSON.parse(rowsJson) as { json?: unknown }[];
  return keep.map((i) => {
    const o = rows[i]?.json;
    return new Set(o && typeof o === 'object' ? Object.keys(o).map((k) => k.toLowerCase()) : []);
  });
}

/**
 * The partition a decorator names in a table partitioned by a column (load-data-partitioned-tables.md: for
 * time-unit column and integer-range partitioned tables the decorator's partition must match the data written):
 * a time unit's start (`$20240102` of a DAY-partitioned DATE, TIMESTAMP or DATETIME column) or a range's start.
 */
function columnPartitionOf(resource: Resource, columns: readonly Column[], decorator: string, name: string): PartitionMatch {
  const tp = resource['timePartitioning'] as { field?: string; type?: string } | undefined;
  const rp = resource['rangePartitioning'] as { field?: string; range?: { start?: unknown; end?: unknown; interval?: unknown } } | undefined;
  const field = tp?.field ?? rp?.field;
  const column = field ? columns.findIndex((c) => c.name.toLowerCase() === field.toLowerCase()) : -1;
  if (column < 0) throw invalid(`Cannot write to partition $${decorator} of ${name}: the table is not partitioned`);
  if (tp?.field) {
    const unit = (String(tp.type ?? 'DAY').toUpperCase() as PartitionUnit);
    const start = decoratorPartition(decorator, unit);
    if (start === undefined) throw invalid(`Invalid partition decorator $${decorator} for table ${name}`);
    const kind = columns[column]!.type.kind;
    const micros = (v: Value): bigint => (kind === 'DATE' ? BigInt(v as number) * 86_400_000_000n : BigInt(v as bigint));
    return { column, id: decorator, contains: (v) => v !== null && truncateToPartition(micros(v), unit) === start };
  }
  const r = rp!.range ?? {};
  const [lo, hi, step] = [Number(r.start), Number(r.end), Number(r.interval)];
  const at = /^-?\d+$/.test(decorator) ? Number(decorator) : NaN;
  if (!Number.isSafeInteger(at) || at < lo || at >= hi || (at - lo) % step !== 0) throw invalid(`Invalid partition decorator $${decorator} for table ${name}`);
  return { column, id: decorator, contains: (v) => v !== null && Number(v) >= at && Number(v) < Math.min(at + step, hi) };
}

/** A decorated load's rows all belong to its partition, else the load fails (load-data-partitioned-tables.md). */
function checkInPartition(b: Batch, m: PartitionMatch, name: string, columns: readonly Column[]): void {
  const col = b.columns[m.column]!;
  for (let r = 0; r < b.length; r++) {
    const v = getValue(col, r);
    if (!m.contains(v)) {
      throw invalid(`The value ${v === null ? 'NULL' : String(v)} of ${columns[m.column]!.name} is outside the destination partition ${name}$${m.id}: a decorator's partition must match the data written`);
    }
  }
}
