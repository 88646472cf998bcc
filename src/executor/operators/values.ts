// Literal rows (VALUES, SELECT without FROM). Rows may hold any expression,
// including correlated references and subqueries, evaluated against one empty row.
import type { ValuesRel } from '../../analyzer/resolved.js';
import { BATCH_SIZE, getValue, type Batch } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate } from '../expr.js';
import { ColumnBuffer } from '../vectors.js';

const ONE_ROW: Batch = { length: 1, columns: [] };
const NO_COLUMNS = new Map<number, number>();

export async function* valuesOp(rel: ValuesRel, ctx: ExecContext): AsyncGenerator<Batch> {
  if (rel.columns.length === 0) {
    // SELECT without FROM: rows with no columns.
    for (let s = 0; s < rel.rows.length; s += BATCH_SIZE) yield { length: Math.min(BATCH_SIZE, rel.rows.length - s), columns: [] };
    return;
  }
  for (let s = 0; s < rel.rows.length; s += BATCH_SIZE) {
    await checkpoint(ctx);
    const end = Math.min(rel.rows.length, s + BATCH_SIZE);
    const bufs = rel.columns.map((c) => new ColumnBuffer(c.type, end - s));
    for (let r = s; r < end; r++) {
      const row = rel.rows[r]!;
      for (let c = 0; c < bufs.length; c++) {
        const e = row[c]!;
        // Literal cells (the usual INSERT ... VALUES) skip expression evaluation.
        bufs[c]!.appendValue(e.kind === 'literal' ? e.value : getValue(await evaluate(e, ONE_ROW, NO_COLUMNS, ctx), 0));
      }
    }
    yield { length: end - s, columns: bufs.map((b) => b.toVector()) };
  }
}
