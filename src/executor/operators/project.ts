// SELECT list: computes one vector per expression; plain column references
// pass the input vector through untouched.
import type { ProjectRel } from '../../analyzer/resolved.js';
import type { Batch, Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate, evaluateSync, hasSubquery, layoutOf } from '../expr.js';
import { executeRel } from '../execute.js';

export async function* projectOp(rel: ProjectRel, ctx: ExecContext): AsyncGenerator<Batch> {
  const layout = layoutOf(rel.input.columns);
  // Without subqueries no await per expression and batch.
  const sync = !rel.exprs.some(hasSubquery);
  for await (const b of executeRel(rel.input, ctx)) {
    await checkpoint(ctx);
    yield { length: b.length, columns: sync ? projectSync(rel, b, layout, ctx) : await projectAsync(rel, b, layout, ctx) };
  }
}

function projectSync(rel: ProjectRel, b: Batch, layout: ReadonlyMap<number, number>, ctx: ExecContext): Vector[] {
  const cols: Vector[] = new Array(rel.exprs.length);
  for (let i = 0; i < rel.exprs.length; i++) cols[i] = evaluateSync(rel.exprs[i]!, b, layout, ctx);
  return cols;
}

async function projectAsync(rel: ProjectRel, b: Batch, layout: ReadonlyMap<number, number>, ctx: ExecContext): Promise<Vector[]> {
  const cols: Vector[] = new Array(rel.exprs.length);
  for (let i = 0; i < rel.exprs.length; i++) cols[i] = await evaluate(rel.exprs[i]!, b, layout, ctx);
  return cols;
}
