// Bytes a statement processes and bills, as the service reports them in job
// statistics (totalBytesProcessed, totalBytesBilled) and enforces with
// maximumBytesBilled. Processed: per scan, the logical bytes
// (types/logical-bytes.ts) of the columns it reads, over the partitions the
// scan cannot eliminate: storage's per-chunk totals, or, where partitions are
// eliminated, the kept partitions' rows read and measured (a row group may
// hold several). Partition elimination is the service's, from the scan's
// constant filters on the partitioning column, widened to whole partitions.
// A run (not a dry run, whose estimate is the upper bound) of a clustered
// table also leaves out the row groups its filters on clustering columns rule
// out by their statistics, as the service bills only the blocks it scans;
// other skipping (row groups by statistics of other columns) bills the same.
// Billed (on-demand pricing): each table's bytes rounded up to a whole MB,
// at least 10 MB per table read; a statement that reads nothing bills nothing.
import type { Expr, Rel, ScanRel } from '../analyzer/resolved.js';
import { callScalar } from '../analyzer/calls.js';
import { literal } from '../analyzer/coercion.js';
import { not } from '../analyzer/predicates.js';
import { relInputs, visitRelExprs } from '../analyzer/rewrite.js';
import { colRef } from '../analyzer/scope.js';
import { usedColumns } from './rules/prune.js';
import { scanFilters } from '../executor/operators/scan-filters.js';
import type { ScanFilter, ScanOptions, ScanValue, TableId, TableInfo } from '../storage/api.js';
import { truncateToPartition, type PartitionUnit } from '../storage/ingestion.js';
import { QueryError } from '../types/errors.js';
import { T, type SqlType } from '../types/types.js';
import { nominalBytes } from '../types/logical-bytes.js';

const MB = 1024 * 1024;
/** The service's minimum bytes billed per table a query reads. */
const MIN_BILLED_PER_TABLE = 10 * MB;

const keyOf = (id: TableId): string => `${id.projectId}\u0000${id.datasetId}\u0000${id.tableId}`;

// ---------------------------------------------------------------- partition elimination

/** How a table is partitioned: the column (scan index) and its partitions. */
type Scheme =
  | { readonly kind: 'time'; readonly column: number; readonly type: SqlType; readonly unit: PartitionUnit }
  | { readonly kind: 'range'; readonly column: number; readonly start: bigint; readonly end: bigint; readonly interval: bigint };

function schemeOf(info: TableInfo): Scheme | undefined {
  if (info.partitionUnit) return { kind: 'time', column: info.columns.length, type: T.TIMESTAMP, unit: info.partitionUnit };
  const r = info.resource;
  const tp = r['timePartitioning'] as { field?: string; type?: string } | undefined;
  if (tp?.field) {
    const column = info.columns.findIndex((c) => c.name.toLowerCase() === tp.field!.toLowerCase());
    const unit = String(tp.type ?? 'DAY').toUpperCase() as PartitionUnit;
    if (column >= 0 && ['HOUR', 'DAY', 'MONTH', 'YEAR'].includes(unit)) return { kind: 'time', column, type: info.columns[column]!.type, unit };
  }
  const rp = r['rangePartitioning'] as { field?: string; range?: { start?: unknown; end?: unknown; interval?: unknown } } | undefined;
  if (rp?.field && rp.range) {
    const column = info.columns.findIndex((c) => c.name.toLowerCase() === rp.field!.toLowerCase());
    try {
      const [start, end, interval] = [rp.range.start, rp.range.end, rp.range.interval].map((v) => BigInt(String(v)));
      if (column >= 0 && interval! > 0n) return { kind: 'range', column, start: start!, end: end!, interval: interval! };
    } catch {
      // a malformed range partitions nothing
    }
  }
  return undefined;
}

/** A partition's values of the column: [from, to) (either side open), or the NULL partition. */
type Part = { readonly from?: ScanValue; readonly to?: ScanValue } | 'null';

const DAY_US = 86_400_000_000n;

/** The partition holding `v`, as bounds of the column's own values. */
function partitionOf(v: ScanValue, s: Scheme): Part {
  if (s.kind === 'range') {
    const x = BigInt(v as bigint | number);
    // Values outside [start, end) share one partition (__UNPARTITIONED__): its rows are those outside.
    if (x < s.start || x >= s.end) return { from: s.end, to: s.start };
    const from = s.start + ((x - s.start) / s.interval) * s.interval;
    return { from, to: from + s.interval };
  }
  if (s.type.kind === 'DATE') {
    const micros = BigInt(v as number) * DAY_US;
    const from = truncateToPartition(micros, s.unit);
    return { from: Number(from / DAY_US), to: Number(nextPartition(from, s.unit) / DAY_US) };
  }
  // TIMESTAMP (UTC) and DATETIME (civil) micros partition alike.
  const from = truncateToPartition(BigInt(v as bigint | number), s.unit);
  return { from, to: nextPartition(from, s.unit) };
}

function nextPartition(from: bigint, unit: PartitionUnit): bigint {
  if (unit === 'HOUR') return from + 3_600_000_000n;
  if (unit === 'DAY') return from + DAY_US;
  const d = new Date(Number(from / 1000n));
  return BigInt(Date.UTC(d.getUTCFullYear() + (unit === 'YEAR' ? 1 : 0), d.getUTCMonth() + (unit === 'MONTH' ? 1 : 0), 1)) * 1000n;
}

const lt = (a: ScanValue, b: ScanValue): boolean => (typeof a === 'bigint' || typeof b === 'bigint' ? BigInt(a as number) < BigInt(b as number) : a < b);

/**
 * The partitions the filters on the partitioning column cannot eliminate
 * (undefined: no such filter, every partition): for comparisons the
 * partitions from the lower bound's to the upper bound's, for IN each
 * value's, for IS NULL the NULL partition.
 */
function keptPartitions(filters: readonly ScanFilter[], s: Scheme): Part[] | undefined {
  const mine = filters.filter((f) => f.column === s.column && !f.live);
  if (mine.length === 0 || mine.some((f) => f.op === 'notNull') && mine.length === 1) return undefined;
  if (mine.some((f) => f.op === 'isNull')) return mine.every((f) => f.op === 'isNull') ? ['null'] : [];
  let lo: ScanValue | undefined;
  let hi: ScanValue | undefined;
  let inList: readonly ScanValue[] | undefined;
  // The column's values are integers (days, micros, INT64): strict bounds become inclusive ones.
  const step = (v: ScanValue, by: number): ScanValue => (typeof v === 'bigint' ? v + BigInt(by) : (v as number) + by);
  for (const f of mine) {
    if (f.op === 'in') {
      inList = inList ? inList.filter((x) => f.values.includes(x)) : f.values;
      continue;
    }
    const v = f.values[0];
    if (v === undefined) continue;
    const low = f.op === '>' ? step(v, 1) : f.op === '>=' || f.op === '=' ? v : undefined;
    const high = f.op === '<' ? step(v, -1) : f.op === '<=' || f.op === '=' ? v : undefined;
    if (low !== undefined && (lo === undefined || lt(lo, low))) lo = low;
    if (high !== undefined && (hi === undefined || lt(high, hi))) hi = high;
  }
  if (inList) {
    const inRange = inList.filter((v) => (lo === undefined || !lt(v, lo)) && (hi === undefined || !lt(hi, v)));
    const seen = new Map<string, Part>();
    for (const v of inRange) {
      const p = partitionOf(v, s);
      if (p !== 'null') seen.set(`${p.from}:${p.to}`, p);
    }
    return [...seen.values()];
  }
  if (lo !== undefined && hi !== undefined && lt(hi, lo)) return [];
  if (s.kind === 'range') {
    // The in-range partitions the bounds touch, and the out-of-range one when the bounds reach past [start, end).
    const parts: Part[] = [];
    const from = lo === undefined || lt(lo, s.start) ? s.start : (partitionOf(lo, s) as { from: bigint }).from;
    const to = hi === undefined || !lt(hi, s.end) ? s.end : (partitionOf(hi, s) as { to: bigint }).to;
    if (lt(from, to)) parts.push({ from, to });
    if (lo === undefined || hi === undefined || lt(lo, s.start) || !lt(hi, s.end)) parts.push({ from: s.end, to: s.start });
    return parts;
  }
  const from = lo === undefined ? undefined : (partitionOf(lo, s) as { from: ScanValue }).from;
  const to = hi === undefined ? undefined : (partitionOf(hi, s) as { to: ScanValue }).to;
  return [{ ...(from !== undefined ? { from } : {}), ...(to !== undefined ? { to } : {}) }];
}

/**
 * The logical bytes of table columns `cols` over the partitions a scan's
 * filters keep: undefined when they eliminate none. The kept partitions'
 * rows are read (row groups outside them skipped by statistics) and
 * measured, as a row group may hold rows of several partitions.
 */
async function keptPartitionBytes(rel: ScanRel, above: readonly Expr[], info: TableInfo, cols: readonly number[], reader: ScanReader, pruneBy: readonly ScanFilter[]): Promise<number | undefined> {
  const s = schemeOf(info);
  if (!s || (!rel.pushedFilters?.length && !above.length)) return undefined;
  const parts = keptPartitions(scanFilters(rel, above), s);
  if (!parts) return undefined;
  if (parts.length === 0 || cols.length === 0) return 0;
  const type = s.kind === 'range' ? T.INT64 : s.type;
  // The partitioning column (for the predicate), then the measured ones.
  const col = { id: 1, name: 'p', type };
  const measured = cols.map((c, i) => ({ id: i + 2, name: `c${i}`, type: info.columns[c]!.type }));
  const scan: ScanRel = { kind: 'scan', table: rel.table, tableColumns: [s.column, ...cols], columns: [col, ...measured], ...(rel.asOfMs !== undefined ? { asOfMs: rel.asOfMs } : {}) };
  const ref = colRef(col);
  const lit = (v: ScanValue): Expr => literal(type, type.kind === 'DATE' ? Number(v) : BigInt(v as number));
  const one = (p: Part): Expr => {
    if (p === 'null') return callScalar('$is_null', [ref], undefined);
    const { from, to } = p;
    // The out-of-range partition of a range-partitioned table: from end, to start (wrapping).
    if (from !== undefined && to !== undefined && !lt(from, to)) {
      return { kind: 'logical', type: T.BOOL, op: 'or', args: [callScalar('$less', [ref, lit(to)], undefined), callScalar('$greater_or_equal', [ref, lit(from)], undefined)] };
    }
    const args: Expr[] = [];
    if (from !== undefined) args.push(callScalar('$greater_or_equal', [ref, lit(from)], undefined));
    if (to !== undefined) args.push(callScalar('$less', [ref, lit(to)], undefined));
    if (args.length === 0) args.push(not(callScalar('$is_null', [ref], undefined)));
    return args.length === 1 ? args[0]! : { kind: 'logical', type: T.BOOL, op: 'and', args };
  };
  const predicate: Expr = parts.length === 1 ? one(parts[0]!) : { kind: 'logical', type: T.BOOL, op: 'or', args: parts.map(one) };
  return reader.measureRows(scan, predicate, 1, pruneBy);
}

/** The logical bytes of table columns `cols` over every row of the row groups `pruneBy` keeps (storage's totals; a nominal width per value where it keeps none). */
async function tableBytes(info: TableInfo, asOfMs: number | undefined, cols: readonly number[], reader: ScanReader, pruneBy: readonly ScanFilter[] = []): Promise<number> {
  if (cols.length === 0) return 0;
  const lb = await reader.logicalBytes(info.id, { columns: cols, filters: pruneBy, ...(asOfMs !== undefined ? { asOfMs } : {}) });
  if (lb) return lb.bytes.reduce((a, b) => a + b, 0);
  return info.rowCount * cols.reduce((n, c) => n + nominalBytes(info.columns[c]!.type), 0);
}

/** A scan's filters on the table's clustering columns (the row groups they rule out are not billed). */
function clusterFilters(info: TableInfo, rel: ScanRel, above: readonly Expr[]): ScanFilter[] {
  const fields = (info.resource['clustering'] as { fields?: string[] } | undefined)?.fields;
  if (!fields?.length || (!rel.pushedFilters?.length && !above.length)) return [];
  const names = new Set(fields.map((f) => f.toLowerCase()));
  return scanFilters(rel, above).filter((f) => !f.live && names.has(info.columns[f.column]?.name.toLowerCase() ?? ''));
}

/** What a ScanAccount needs of the session: table metadata, measures of a plan's rows, and storage's byte totals. */
export interface ScanReader {
  /** The statement is a dry run: its estimate leaves out no clustered blocks. */
  isDryRun(): boolean;
  tableInfo(id: TableId): TableInfo | undefined;
  /** The logical bytes of `scan`'s columns from index `from` over the rows `predicate` keeps, in the row groups `pruneBy`'s statistics keep. */
  measureRows(scan: ScanRel, predicate: Expr, from: number, pruneBy: readonly ScanFilter[]): Promise<number>;
  /** Logical bytes of each of `opts.columns` over the row groups `opts.filters`' statistics keep (storage's totals; a past snapshot's rows measured); null where storage cannot tell (virtual tables). */
  logicalBytes(id: TableId, opts: ScanOptions): Promise<{ readonly rows: number; readonly bytes: readonly number[] } | null>;
}

/** A statement's bytes, by table: the service rounds and applies its minimum per table. */
export class ScanAccount {
  private readonly byTable = new Map<string, number>();
  /** Each table's last scan, to bill other columns of what it reads (a DML target bills every column of the partitions it reads). */
  private readonly lastScan = new Map<string, (cols: readonly number[], pruneBy: readonly ScanFilter[]) => Promise<number>>();

  clear(): void {
    this.byTable.clear();
    this.lastScan.clear();
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
   * Adds what an optimized plan's scans read: rows of the partitions each
   * scan cannot eliminate x width of the columns it reads. An ingestion-time
   * partitioned table's _PARTITIONTIME (scan index past its columns) is not
   * billed, as the service bills a query of the pseudo-columns alone nothing.
   */
  async addPlan(root: Rel, reader: ScanReader): Promise<void> {
    const used = usedColumns(root);
    // Subqueries' plans (inside expressions, at any depth) read tables too.
    const plans: Rel[] = [root];
    visitRelExprs(root, (e) => void (e.kind === 'subquery' && plans.push(e.plan)));
    for (const p of plans) await this.addScans(p, reader, used);
  }

  /** `used`: the columns something reads (a scan keeps one column for COUNT(*) that nothing reads: not billed). */
  private async addScans(rel: Rel, reader: ScanReader, used: ReadonlyMap<number, number>, above: readonly Expr[] = []): Promise<void> {
    if (rel.kind === 'scan') {
      const info = reader.tableInfo(rel.table);
      if (info) {
        const cols = rel.tableColumns.filter((t, i) => t >= 0 && t < info.columns.length && used.get(rel.columns[i]!.id));
        const bytesOf = async (cs: readonly number[], pruneBy: readonly ScanFilter[]): Promise<number> =>
          (await keptPartitionBytes(rel, above, info, cs, reader, pruneBy)) ?? tableBytes(info, rel.asOfMs, cs, reader, pruneBy);
        this.lastScan.set(keyOf(rel.table), bytesOf);
        this.add(rel.table, await bytesOf(cols, reader.isDryRun() ? [] : clusterFilters(info, rel, above)));
      }
    }
    // A filter right above a scan is the scan's too (the executor hands it to storage likewise).
    if (rel.kind === 'filter' && rel.input.kind === 'scan') return this.addScans(rel.input, reader, used, [rel.predicate]);
    for (const i of relInputs(rel)) await this.addScans(i, reader, used);
  }

  add(id: TableId, bytes: number): void {
    const k = keyOf(id);
    this.byTable.set(k, (this.byTable.get(k) ?? 0) + bytes);
  }

  /** A DML target: all its columns (an ingestion-time partitioned table's _PARTITIONTIME is none) of the partitions its scan reads, whatever the statement reads of them (clustering leaves nothing out: DML pricing counts whole partitions). */
  async setWhole(info: TableInfo, reader: ScanReader): Promise<void> {
    // The stored table's columns (a DML target's info may list pseudo-columns past them).
    const all = (reader.tableInfo(info.id) ?? info).columns.map((_, i) => i);
    const bytesOf = this.lastScan.get(keyOf(info.id));
    this.byTable.set(keyOf(info.id), await (bytesOf ? bytesOf(all, []) : tableBytes(info, undefined, all, reader)));
  }

  /** The job's maximumBytesBilled: a statement that would bill more fails before it runs. */
  checkLimit(limit: number | undefined): void {
    if (!limit) return;
    const billed = this.billed;
    if (billed > limit) throw new QueryError(`Query exceeded limit for bytes billed: ${limit}. ${billed} or higher required.`, 'bytesBilledLimitExceeded');
  }
}
