// LIMIT / OFFSET: stops pulling from its input once satisfied.
import type { LimitRel } from '../../analyzer/resolved.js';
import type { Batch } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { executeRel } from '../execute.js';
import { sliceBatch } from '../vectors.js';

export async function* limitOp(rel: LimitRel, ctx: ExecContext): AsyncGenerator<Batch> {
  let skip = rel.offset;
  let left = rel.limit ?? Infinity;
  if (left <= 0) return;
  for await (const b of executeRel(rel.input, ctx)) {
    await checkpoint(ctx);
    let start = 0;
    if (skip > 0) {
      const s = Math.min(skip, b.length);
      skip -= s;
      start = s;
    }
    if (start >= b.length) continue;
    const end = Math.min(b.length, start + left);
    left -= end - start;
    yield sliceBatch(b, start, end);
    if (left <= 0) return;
  }
}
