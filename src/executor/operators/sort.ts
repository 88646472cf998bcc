// ORDER BY: materializes the input, evaluates the key vectors once, sorts an
// index array with typed comparators (stable), and emits rows in BATCH_SIZE
// slices. With `limit` (top-N) it keeps only the best rows: the buffer is
// compacted to `limit` rows whenever it grows past 2×limit + BATCH_SIZE, so
// memory stays O(limit) and the cost O(n log limit) amortized.
import type { SortKey, SortRel } from '../../analyzer/resolved.js';
import { BATCH_SIZE, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate, layoutOf } from '../expr.js';
import { executeRel } from '../execute.js';
import { sortRows } from '../sort-keys.js';
import { concatBatches, takeBatch } from '../vectors.js';

export async function sortKeyVectors(keys: readonly SortKey[], b: Batch, layout: ReadonlyMap<number, number>, ctx: ExecContext): Promise<Vector[]> {
  const out: Vector[] = [];
  for (const k of keys) out.push(await evaluate(k.expr, b, layout, ctx));
  return out;
}

/** The permutation that orders `b` by `keys`. */
export async function sortPermutation(keys: readonly SortKey[], b: Batch, layout: ReadonlyMap<number, number>, ctx: ExecContext): Promise<Int32Array> {
  const vecs = await sortKeyVectors(keys, b, layout, ctx);
  return sortRows(vecs, keys, b.length);
}

export async function* sortOp(rel: SortRel, ctx: ExecContext): AsyncGenerator<Batch> {
  const layout = layoutOf(rel.input.columns);
  const types = rel.input.columns.map((c) => c.type);
  const limit = rel.limit;
  let parts: Batch[] = [];
  let rows = 0;
  for await (const b of executeRel(rel.input, ctx)) {
    await checkpoint(ctx);
    if (b.length === 0) continue;
    parts.push(b);
    rows += b.length;
    if (limit !== undefined && rows > 2 * limit + BATCH_SIZE) {
      const all = concatBatches(types, parts);
      const perm = await sortPermutation(rel.keys, all, layout, ctx);
      const keep = Math.min(limit, all.length);
      parts = [takeBatch(all, perm, keep)];
      rows = keep;
    }
  }
  if (rows === 0) return;
  const all = concatBatches(types, parts);
  parts = [];
  const perm = await sortPermutation(rel.keys, all, layout, ctx);
  await checkpoint(ctx);
  const total = limit !== undefined ? Math.min(limit, all.length) : all.length;
  for (let s = 0; s < total; s += BATCH_SIZE) {
    const e = Math.min(total, s + BATCH_SIZE);
    yield takeBatch(all, perm.subarray(s, e), e - s);
    await checkpoint(ctx);
  }
}
