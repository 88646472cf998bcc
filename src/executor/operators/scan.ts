// Table scan: reads the projected columns from storage and applies the
// filters the planner pushed down, so later operators see fewer rows.
import type { Expr, ProjectRel, Rel, ScanRel } from '../../analyzer/resolved.js';
import { BATCH_SIZE, sliceVector, takeVector, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { columnRefsOf, evaluate, evaluateSync, hasSubquery, layoutOf } from '../expr.js';
import { BatchCoalescer, sliceBatch } from '../vectors.js';
import { scanFilters } from './scan-filters.js';

/**
 * `pick`: output these scan columns (positions in `rel.columns`) instead of
 * all of them: a project of plain column references over the scan, done here
 * rather than by a generator layer of its own (execute.ts). `predicate`: a
 * filter directly over the scan (execute.ts), applied like a pushed filter.
 */
export async function* scanOp(rel: ScanRel, ctx: ExecContext, pick: readonly number[] | null = null, predicate: Expr | null = null): AsyncGenerator<Batch> {
  const filters = prepareFilters(predicate === null ? rel.pushedFilters ?? [] : [...(rel.pushedFilters ?? []), predicate], rel.columns);
  // Selective filters leave small batches: coalesce them back towards BATCH_SIZE.
  const co = filters.length > 0 ? new BatchCoalescer((pick ?? rel.columns.map((_, i) => i)).map((i) => rel.columns[i]!.type)) : null;
  // Storage skips row groups whose statistics rule out these filters (scan-filters.ts); rows are still filtered here.
  const storageFilters = [...scanFilters(rel, predicate === null ? [] : [predicate]), ...(ctx.runtimeFilters?.get(rel) ?? [])];
  const opts = { columns: rel.tableColumns, asOfMs: rel.asOfMs, history: rel.history, filters: storageFilters };
  const src = ctx.scanSources?.get(rel)?.(opts) ?? ctx.query.catalog.scan(rel.table, opts);
  const scratch: SelScratch = { a: new Int32Array(BATCH_SIZE), b: new Int32Array(BATCH_SIZE) };
  // Pushed filters without subqueries: no await per filter and batch.
  const sync = filters.every((f) => f.sync);
  for await (const raw of src) {
    // BATCH_SIZE slices of what storage hands over (stored chunks whole: a table
    // can be one batch); an index loop rather than a nested generator keeps this
    // generator small for V8 (README).
    const n = raw.length;
    for (let s = 0; s < n; s += BATCH_SIZE) {
      await checkpoint(ctx);
      const e = Math.min(n, s + BATCH_SIZE);
      if (filters.length === 0) {
        const b = n <= BATCH_SIZE ? raw : sliceBatch(raw, s, e);
        yield pick === null ? b : pickColumns(b, pick);
        continue;
      }
      const kept = sync ? selectSync(raw, s, e, filters, ctx, scratch) : await select(raw, s, e, filters, ctx, scratch);
      if (kept.count === 0) continue;
      for (const o of co!.push(outputRows(raw, s, e, kept, pick))) yield o;
    }
  }
  if (co) for (const o of co.drain()) yield o;
}

/**
 * A pushed filter with the scan positions it reads: each filter is evaluated
 * on just those columns, for just the rows the previous ones kept, so the
 * scan copies the other columns once, for the rows that pass all of them
 * (`id BETWEEN ..` over an 8-column table used to slice every column of every
 * batch, and `a >= x AND a <= y` pushed as two filters took every column of
 * the rows passing the first).
 */
interface PreparedFilter {
  readonly expr: Expr;
  readonly positions: readonly number[];
  /** Column id -> index in `positions`. */
  readonly layout: ReadonlyMap<number, number>;
  readonly sync: boolean;
}

function prepareFilters(filters: readonly Expr[], columns: ScanRel['columns']): PreparedFilter[] {
  const at = layoutOf(columns);
  return filters.map((expr) => {
    const positions: number[] = [];
    const layout = new Map<number, number>();
    for (const id of columnRefsOf(expr)) {
      const p = at.get(id);
      if (p === undefined || layout.has(id)) continue; // correlated references resolve through ctx.outer
      layout.set(id, positions.length);
      positions.push(p);
    }
    return { expr, positions, layout, sync: !hasSubquery(expr) };
  });
}

/** Two selection buffers used in turn: the rows kept so far, and the rows the next filter keeps of them. */
interface SelScratch {
  a: Int32Array;
  b: Int32Array;
}

/** Rows of raw[s, e) kept by every filter: `sel` holds absolute row numbers of `raw`, or is null when all rows pass. */
interface Kept {
  sel: Int32Array | null;
  count: number;
}

/** The columns a filter reads, for the rows kept so far. */
function filterInput(raw: Batch, s: number, e: number, f: PreparedFilter, kept: Kept): Batch {
  const cols = new Array<Vector>(f.positions.length);
  for (let k = 0; k < cols.length; k++) {
    const v = raw.columns[f.positions[k]!]!;
    cols[k] = kept.sel === null ? (s === 0 && e === raw.length ? v : sliceVector(v, s, e)) : takeVector(v, kept.sel, kept.count);
  }
  return { length: kept.count, columns: cols };
}

/** Narrows `kept` to the rows where `v` (one value per kept row) is TRUE. */
function narrow(v: Vector, s: number, kept: Kept, scratch: SelScratch): Kept {
  const out = kept.sel === scratch.a ? scratch.b : scratch.a;
  const d = v.data as Uint8Array;
  const nulls = v.nulls;
  const prev = kept.sel;
  let c = 0;
  for (let j = 0; j < kept.count; j++) {
    if (d[j] === 1 && (nulls === null || nulls[j] === 0)) out[c++] = prev === null ? s + j : prev[j]!;
  }
  return c === kept.count && prev === null ? kept : { sel: out, count: c };
}

function selectSync(raw: Batch, s: number, e: number, filters: readonly PreparedFilter[], ctx: ExecContext, scratch: SelScratch): Kept {
  let kept: Kept = { sel: null, count: e - s };
  for (const f of filters) {
    if (kept.count === 0) break;
    kept = narrow(evaluateSync(f.expr, filterInput(raw, s, e, f, kept), f.layout, ctx), s, kept, scratch);
  }
  return kept;
}

async function select(raw: Batch, s: number, e: number, filters: readonly PreparedFilter[], ctx: ExecContext, scratch: SelScratch): Promise<Kept> {
  let kept: Kept = { sel: null, count: e - s };
  for (const f of filters) {
    if (kept.count === 0) break;
    kept = narrow(await evaluate(f.expr, filterInput(raw, s, e, f, kept), f.layout, ctx), s, kept, scratch);
  }
  return kept;
}

/** The output columns (all, or `pick`) for the kept rows of raw[s, e). */
function outputRows(raw: Batch, s: number, e: number, kept: Kept, pick: readonly number[] | null): Batch {
  const positions = pick ?? raw.columns.map((_, i) => i);
  const columns = new Array<Vector>(positions.length);
  for (let k = 0; k < positions.length; k++) {
    const v = raw.columns[positions[k]!]!;
    columns[k] = kept.sel === null ? (s === 0 && e === raw.length ? v : sliceVector(v, s, e)) : takeVector(v, kept.sel, kept.count);
  }
  return { length: kept.count, columns };
}

function pickColumns(b: Batch, pick: readonly number[]): Batch {
  const columns = new Array<Vector>(pick.length);
  for (let i = 0; i < pick.length; i++) columns[i] = b.columns[pick[i]!]!;
  return { length: b.length, columns };
}

/** A scan with the filter directly over it (null: the relation is not a filter over a scan). */
export function filteredScan(rel: Rel): { scan: ScanRel; predicate: Expr | null } | null {
  if (rel.kind === 'scan') return { scan: rel, predicate: null };
  if (rel.kind === 'filter' && rel.input.kind === 'scan') return { scan: rel.input, predicate: rel.predicate };
  return null;
}

/**
 * The scan positions a project of plain column references reads, over a scan
 * or a filter over a scan (a filter's columns are its input's), or null.
 */
export function scanPick(rel: ProjectRel): number[] | null {
  const src = filteredScan(rel.input);
  if (src === null) return null;
  const pick: number[] = [];
  for (const e of rel.exprs) {
    if (e.kind !== 'column' || e.correlated) return null;
    const i = src.scan.columns.findIndex((c) => c.id === e.columnId);
    if (i < 0) return null;
    pick.push(i);
  }
  return pick;
}
