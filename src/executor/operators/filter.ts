// WHERE / HAVING / QUALIFY: keeps rows whose predicate is TRUE (NULL drops).
import type { FilterRel } from '../../analyzer/resolved.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate, evaluateSync, hasSubquery, layoutOf } from '../expr.js';
import { executeRel } from '../execute.js';
import { BATCH_SIZE, type Batch } from '../../types/vector.js';
import { BatchCoalescer, selectTrue, takeBatch } from '../vectors.js';

export async function* filterOp(rel: FilterRel, ctx: ExecContext): AsyncGenerator<Batch> {
  const layout = layoutOf(rel.input.columns);
  // Selective filters leave small batches: coalesce them back towards BATCH_SIZE.
  const co = new BatchCoalescer(rel.columns.map((c) => c.type));
  // Selection scratch, reused: takeBatch copies the selected rows out of it.
  let selBuf = new Int32Array(BATCH_SIZE);
  const sync = !hasSubquery(rel.predicate);
  for await (const b of executeRel(rel.input, ctx)) {
    await checkpoint(ctx);
    if (b.length === 0) continue;
    const v = sync ? evaluateSync(rel.predicate, b, layout, ctx) : await evaluate(rel.predicate, b, layout, ctx);
    if (selBuf.length < b.length) selBuf = new Int32Array(b.length);
    const { sel, count } = selectTrue(v, b.length, selBuf);
    if (count === 0) continue;
    for (const o of co.push(count === b.length ? b : takeBatch(b, sel, count))) yield o;
  }
  for (const o of co.drain()) yield o;
}
