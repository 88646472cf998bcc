// catalog.log: every committed catalog change since the last checkpoint
// (catalog.store), one record per commit. A DDL costs one small append, not a
// rewrite of the whole catalog (10,000 tables made catalog.store ~7 MB, and
// every CREATE TABLE wrote and synced all of it). Records use the WAL's
// framing (length, crc32, torn-tail cut on open) and its sync policy: an
// append is acknowledged once written (survives kill -9), fdatasynced within
// BACKGROUND_SYNC_MS, or before the acknowledgement with --sync-writes.
//
// A record is `{ops}` with the WAL record's lsn as its sequence number.
// Replay applies, in order, the records newer than the checkpoint's `seq`.
import type { TableKind } from './api.js';
import type { DeletedTable } from './deleted-tables.js';
import type { Resource } from './resources.js';
import { encodeRecord, readWalSync, WalWriter, type WalSyncMode } from './wal.js';

export interface TableEntry {
  readonly resource: Resource;
  readonly kind: TableKind;
  /** Row-access policies by id. */
  readonly policies: Readonly<Record<string, Resource>>;
  /**
   * File stem of the table's row storage. Every create makes a new one (an
   * incarnation: `<name stem>+<id>`), so a replacement is prepared beside
   * the table it replaces and takes its place with one catalog record.
   * Absent in catalogs from before incarnations: the name's stem.
   */
  readonly storage?: string;
  /**
   * CDC ingestion (engine/storage-write/cdc-apply.ts): when row modifications were last applied, in ms
   * (INFORMATION_SCHEMA.TABLES.upsert_stream_apply_watermark); committed with the rows they changed.
   */
  readonly cdcWatermark?: number;
}

/** One change of the catalog; a record's ops apply together or not at all. */
export type CatalogOp =
  | { readonly op: 'dataset'; readonly p: string; readonly d: string; readonly resource: Resource }
  | { readonly op: 'dropDataset'; readonly p: string; readonly d: string; readonly deletedMs: number; readonly trashDir: string }
  | { readonly op: 'undropDataset'; readonly p: string; readonly d: string; readonly deletedMs: number }
  | { readonly op: 'purgeTombstones'; readonly before: number }
  | { readonly op: 'table'; readonly p: string; readonly d: string; readonly t: string; readonly entry: TableEntry | null }
  | { readonly op: 'child'; readonly p: string; readonly d: string; readonly kind: 'routines' | 'models' | 'propertyGraphs'; readonly id: string; readonly resource: Resource | null }
  /**
   * A file a commit writes beside its record (path relative to the data
   * dir): a table's sidecar in a multi-table commit, or a caller's state
   * file (Storage.commitRows). Redone on start-up when the file is older
   * than the record (its `seq`), so that a crash between the record and the
   * file writes leaves the whole commit, never a part of it.
   */
  | { readonly op: 'sidecar'; readonly file: string; readonly text: string }
  /**
   * The snapshot of the table a drop or replace in the same record takes
   * out: deleted-tables.log gets it after the record (synced before any
   * checkpoint), and start-up adds it there when a crash came between the
   * two. So no sync of deleted-tables.log waits in front of the record.
   */
  | { readonly op: 'deletedTable'; readonly snapshot: DeletedTable }
  /**
   * A small file of a table the same record publishes (a fragment; path
   * relative to the data dir, bytes base64), written but not yet synced
   * when the record was: start-up writes it again when it is missing or
   * differs (fragments never change once named), and a checkpoint syncs it
   * before the log can lose the record.
   */
  | { readonly op: 'file'; readonly file: string; readonly data: string };

export interface CatalogRecord {
  readonly seq: number;
  readonly ops: readonly CatalogOp[];
}

export class CatalogLog {
  private wal: WalWriter | null = null;

  constructor(
    readonly file: string,
    private readonly syncMode: WalSyncMode,
  ) {}

  /** Opens the log (a torn tail cut); returns its records, oldest first. */
  async open(): Promise<CatalogRecord[]> {
    const scan = readWalSync(this.file);
    const records = scan.records.map((r) => ({ seq: r.lsn, ops: (JSON.parse(r.body.toString('utf8')) as { ops: CatalogOp[] }).ops }));
    const wal = new WalWriter(this.file, this.syncMode, (e) => console.error(`catalog.log fdatasync failed: ${String(e)}`));
    await wal.open(scan.validLength);
    this.wal = wal;
    return records;
  }

  get byteSize(): number {
    return this.wal?.byteSize ?? 0;
  }

  /** Appends a record; resolves once it is written (synced too, with --sync-writes). */
  async append(seq: number, ops: readonly CatalogOp[]): Promise<void> {
    if (!this.wal) throw new Error('catalog.log is closed');
    await this.wal.append(encodeRecord(seq, 0, JSON.stringify({ ops })));
  }

  /** Empties the log once a checkpoint holds every record in it. */
  async truncate(): Promise<void> {
    await this.wal?.truncate();
  }

  async close(): Promise<void> {
    const w = this.wal;
    this.wal = null;
    await w?.close();
  }
}
