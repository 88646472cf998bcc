// TABLESAMPLE SYSTEM (p PERCENT): Bernoulli sampling of rows (the real service
// samples blocks; per-row sampling has the same expected size).
import type { SampleRel } from '../../analyzer/resolved.js';
import type { Batch } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { executeRel } from '../execute.js';
import { takeBatch } from '../vectors.js';

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
  const rnd = rel.seed !== undefined ? seededRandom(rel.seed) : ctx.eval.random;
  for await (const b of executeRel(rel.input, ctx)) {
    await checkpoint(ctx);
    if (p >= 1) {
      yield b;
      continue;
    }
    const sel = new Int32Array(b.length);
    let c = 0;
    for (let i = 0; i < b.length; i++) if (rnd() < p) sel[c++] = i;
    if (c > 0) yield takeBatch(b, sel, c);
  }
}
