// WITH: each CTE is materialized once, on first reference, and shared by all
// references (CteRefRel). WITH RECURSIVE iterates the recursive term over the
// previous iteration's rows until it yields no new rows.
import type { CteRefRel, RecursiveCteRel, WithRel } from '../../analyzer/resolved.js';
import { QueryError } from '../../types/errors.js';
import type { Batch } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { collectRows, executeRel } from '../execute.js';
import { rebatch } from '../vectors.js';

/** The real service stops recursive CTEs after this many iterations. */
export const MAX_RECURSION_ITERATIONS = 500;

export async function* withOp(rel: WithRel, ctx: ExecContext): AsyncGenerator<Batch> {
  // A scope of its own: a correlated subquery re-running this WITH gets fresh materializations.
  const ctes = new Map(ctx.ctes);
  const scoped: ExecContext = { ...ctx, ctes };
  for (const cte of rel.ctes) {
    let p: Promise<Batch[]> | null = null;
    // Lazy: materialized on first reference only.
    const lazy = {
      then<R1, R2>(ok: (v: Batch[]) => R1 | PromiseLike<R1>, err?: (e: unknown) => R2 | PromiseLike<R2>): Promise<R1 | R2> {
        p ??= collectRows(cte.plan, scoped);
        return p.then(ok, err);
      },
    };
    ctes.set(cte.id, lazy as unknown as Promise<Batch[]>);
  }
  yield* executeRel(rel.body, scoped);
}

export async function* cteRefOp(rel: CteRefRel, ctx: ExecContext): AsyncGenerator<Batch> {
  const p = ctx.ctes.get(rel.cteId);
  if (!p) throw new Error(`executor: CTE #${rel.cteId} is not in scope`);
  for (const b of await p) {
    await checkpoint(ctx);
    yield b;
  }
}

export async function* recursiveCteOp(rel: RecursiveCteRel, ctx: ExecContext): AsyncGenerator<Batch> {
  let work: Batch[] = [];
  for (const b of await collectRows(rel.base, ctx)) {
    if (b.length > 0) {
      work.push(b);
      yield b;
    }
  }
  let iterations = 0;
  // The recursive term runs at least once, even over an empty base: it may have rows of its own
  // (`... UNION ALL SELECT 1`), and the reference evaluates it (its errors included).
  while (iterations === 0 || work.length > 0) {
    if (++iterations > MAX_RECURSION_ITERATIONS) {
      throw new QueryError(`Recursive query exceeded the maximum number of iterations (${MAX_RECURSION_ITERATIONS}).`);
    }
    await checkpoint(ctx);
    const ctes = new Map(ctx.ctes);
    ctes.set(rel.cteId, Promise.resolve(work));
    const next: Batch[] = [];
    for await (const b of executeRel(rel.recursive, { ...ctx, ctes })) {
      if (b.length === 0) continue;
      for (const s of rebatch(b)) {
        next.push(s);
        yield s;
      }
    }
    work = next;
  }
}
