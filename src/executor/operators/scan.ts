// Table scan: reads the projected columns from storage and applies the
// filters the planner pushed down, so later operators see fewer rows.
import type { Expr, ProjectRel, ScanRel } from '../../analyzer/resolved.js';
import { BATCH_SIZE, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate, evaluateSync, hasSubquery, layoutOf } from '../expr.js';
import { selectTrue, sliceBatch, takeBatch } from '../vectors.js';

/**
 * `pick`: output these scan columns (positions in `rel.columns`) instead of
 * all of them: a project of plain column references over the scan, done here
 * rather than by a generator layer of its own (execute.ts).
 */
export async function* scanOp(rel: ScanRel, ctx: ExecContext, pick: readonly number[] | null = null): AsyncGenerator<Batch> {
  const layout = layoutOf(rel.columns);
  const filters = rel.pushedFilters ?? [];
  const src = ctx.query.catalog.scan(rel.table, { columns: rel.tableColumns, asOfMs: rel.asOfMs });
  const scratch = { sel: new Int32Array(BATCH_SIZE) };
  // Pushed filters without subqueries: no await per filter and batch.
  const sync = !filters.some(hasSubquery);
  for await (const raw of src) {
    // BATCH_SIZE slices of what storage hands over (stored chunks whole: a table
    // can be one batch); an index loop rather than a nested generator keeps this
    // generator small for V8 (README).
    const n = raw.length;
    for (let s = 0; s < n; s += BATCH_SIZE) {
      await checkpoint(ctx);
      const b = n <= BATCH_SIZE ? raw : sliceBatch(raw, s, Math.min(n, s + BATCH_SIZE));
      const out = filters.length === 0 ? b : sync ? applyFiltersSync(b, filters, layout, ctx, scratch) : await applyFilters(b, filters, layout, ctx, scratch);
      if (out.length > 0) yield pick === null ? out : pickColumns(out, pick);
    }
  }
}

function pickColumns(b: Batch, pick: readonly number[]): Batch {
  const columns = new Array<Vector>(pick.length);
  for (let i = 0; i < pick.length; i++) columns[i] = b.columns[pick[i]!]!;
  return { length: b.length, columns };
}

/** The scan positions a project of plain column references reads (null: not such a project over a scan). */
export function scanPick(rel: ProjectRel): number[] | null {
  const input = rel.input;
  if (input.kind !== 'scan') return null;
  const pick: number[] = [];
  for (const e of rel.exprs) {
    if (e.kind !== 'column' || e.correlated) return null;
    const i = input.columns.findIndex((c) => c.id === e.columnId);
    if (i < 0) return null;
    pick.push(i);
  }
  return pick;
}

/** applyFilters for conjuncts without subqueries. */
function applyFiltersSync(b: Batch, filters: readonly Expr[], layout: ReadonlyMap<number, number>, ctx: ExecContext, scratch: { sel: Int32Array }): Batch {
  let cur = b;
  for (const f of filters) {
    if (cur.length === 0) break;
    const v = evaluateSync(f, cur, layout, ctx);
    if (scratch.sel.length < cur.length) scratch.sel = new Int32Array(cur.length);
    const { sel, count } = selectTrue(v, cur.length, scratch.sel);
    if (count !== cur.length) cur = takeBatch(cur, sel, count);
  }
  return cur;
}

/** Applies conjuncts one after the other, each on the survivors of the previous. */
export async function applyFilters(
  b: Batch,
  filters: readonly Expr[],
  layout: ReadonlyMap<number, number>,
  ctx: ExecContext,
  /** Reused selection buffer (takeBatch copies the rows out of it). */
  scratch?: { sel: Int32Array },
): Promise<Batch> {
  let cur = b;
  for (const f of filters) {
    if (cur.length === 0) break;
    const v = await evaluate(f, cur, layout, ctx);
    if (scratch && scratch.sel.length < cur.length) scratch.sel = new Int32Array(cur.length);
    const { sel, count } = selectTrue(v, cur.length, scratch?.sel);
    if (count !== cur.length) cur = takeBatch(cur, sel, count);
  }
  return cur;
}
