// TABLESAMPLE SYSTEM (p PERCENT) samples data blocks, not rows (table-sampling page): a table is split into
// blocks of about 1 GB, each block is read whole or skipped, a table smaller than a block is one block read
// entirely, and a sample of more than 0 percent of a non-empty table always returns rows.
import type { SampleRel } from '../../analyzer/resolved.js';
import type { Batch } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { executeRel } from '../execute.js';
import { batchBytes } from '../vectors.js';

/** The size of one sampled block (the service splits tables "larger than about 1 GB"). */
export const SAMPLE_BLOCK_BYTES = 1 << 30;

/** mulberry32: small seeded PRNG so REPEATABLE samples are deterministic (tests use it for replayable data too). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function* sampleOp(rel: SampleRel, ctx: ExecContext): AsyncGenerator<Batch> {
  const p = Math.max(0, Math.min(100, rel.percent)) / 100;
  if (p === 0) return;
  const rnd = rel.seed !== undefined ? seededRandom(rel.seed) : ctx.eval.random;
  // Blocks are cut from the stream as it comes; the first block is always read, so a sample above 0 percent
  // never comes back empty (the service picks at least one block), and each later block is kept with probability p.
  let keep = true;
  let blockBytes = 0;
  for await (const b of executeRel(rel.input, ctx)) {
    await checkpoint(ctx);
    if (blockBytes >= SAMPLE_BLOCK_BYTES) {
      blockBytes = 0;
      keep = p >= 1 || rnd() < p;
    }
    blockBytes += batchBytes(b);
    if (keep) yield b;
  }
}
