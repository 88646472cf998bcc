// Joins without equality keys (and CROSS JOIN): a nested loop over the
// materialized right side, in blocks of left rows x right rows.
import type { Expr, JoinRel } from '../../analyzer/resolved.js';
import type { Value } from '../../types/values.js';
import { BATCH_SIZE, sliceVector, takeVector, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { columnRefsOf } from '../expr.js';
import { executeRel, materialize } from '../execute.js';
import { BatchCoalescer } from '../vectors.js';

import { PairEmitter, condLayoutOf } from './join-pairs.js';

export async function* nestedLoopJoin(rel: JoinRel, residual: Expr | undefined, ctx: ExecContext): AsyncGenerator<Batch> {
  const right = await materialize(rel.right, ctx);
  const jt = rel.joinType;
  const em = new PairEmitter(rel, residual, condLayoutOf(rel), right, jt === 'right' || jt === 'full' ? new Uint8Array(right.length) : null, ctx);
  const co = new BatchCoalescer(rel.columns.map((c) => c.type));
  const m = right.length;
  // Pairs go in blocks of left rows × a run of right rows, left-major (the
  // order a row-by-row loop gives): a small right side is tiled `per` times
  // with its left rows repeated, a large one is taken in runs of BATCH_SIZE
  // as views. The block's columns are fills and copies, not gathers through
  // a selection, and the condition runs once per block.
  const per = m === 0 ? 0 : Math.max(1, Math.floor(BATCH_SIZE / m));
  const run = Math.min(m, BATCH_SIZE);
  // With a residual, the block needs only the columns it reads; the pairs
  // that pass are gathered from the inputs (flushBlock).
  const nl = rel.left.columns.length;
  const reads = new Set(residual ? columnRefsOf(residual) : []);
  const real = [...rel.left.columns, ...rel.right.columns].map((c) => !residual || reads.has(c.id));
  const tiled = per > 1 ? right.columns.map((v, k) => (real[nl + k] ? tileVector(v, per) : v)) : null;
  for await (const left of executeRel(rel.left, ctx)) {
    await checkpoint(ctx);
    if (left.length === 0) continue;
    em.startLeft(left.length);
    for (let i0 = 0; m > 0 && i0 < left.length; i0 += per) {
      const i1 = Math.min(left.length, i0 + per);
      for (let j0 = 0; j0 < m; j0 += run) {
        const j1 = Math.min(m, j0 + run);
        const w = j1 - j0;
        const c = (i1 - i0) * w;
        const lcols = left.columns.map((v, k) => (real[k] ? repeatRows(v, i0, i1, w) : v));
        const rcols = right.columns.map((v, k) => {
          if (!real[nl + k]) return v;
          if (tiled === null) return w === m ? v : sliceVector(v, j0, j1);
          const t = tiled[k]!;
          return c === t.length ? t : sliceVector(t, 0, c);
        });
        await em.flushBlock(left, { length: c, columns: [...lcols, ...rcols] }, i0, j0, w);
        for (const b of em.out.splice(0)) for (const o of co.push(b)) yield o;
        await checkpoint(ctx);
      }
    }
    em.finishLeft(left);
    for (const b of em.out.splice(0)) for (const o of co.push(b)) yield o;
  }
  for (const b of em.unmatchedRight(rel.left.columns)) for (const o of co.push(b)) yield o;
  for (const o of co.drain()) yield o;
}

/** Rows i0..i1 of `v`, each repeated `w` times in a row (fills, one per row). */
function repeatRows(v: Vector, i0: number, i1: number, w: number): Vector {
  const n = (i1 - i0) * w;
  if (v.nested) {
    // Nested views are taken (a lazy take when rows repeat), not boxed to be filled.
    const sel = new Int32Array(n);
    for (let i = i0, k = 0; i < i1; i++, k += w) sel.fill(i, k, k + w);
    return takeVector(v, sel, n);
  }
  const src = v.data;
  const data = (Array.isArray(src) ? new Array<Value>(n) : new (src.constructor as new (n: number) => typeof src)(n)) as typeof src;
  let nulls: Uint8Array | null = null;
  for (let i = i0, k = 0; i < i1; i++, k += w) {
    (data as Value[]).fill((src as Value[])[i]!, k, k + w);
    if (v.nulls !== null && v.nulls[i] === 1) (nulls ??= new Uint8Array(n)).fill(1, k, k + w);
  }
  return { type: v.type, length: n, data, nulls };
}

/** `v` repeated `times` times end to end (copies). */
function tileVector(v: Vector, times: number): Vector {
  const m = v.length;
  const n = m * times;
  const src = v.data;
  let data: typeof src;
  if (Array.isArray(src)) {
    const out = new Array<Value>(n);
    for (let t = 0, k = 0; t < times; t++) for (let j = 0; j < m; j++, k++) out[k] = src[j]!;
    data = out;
  } else {
    const out = new (src.constructor as new (n: number) => typeof src)(n);
    for (let t = 0; t < times; t++) (out as Float64Array).set(src.subarray(0, m) as Float64Array, t * m);
    data = out;
  }
  let nulls: Uint8Array | null = null;
  if (v.nulls !== null) {
    nulls = new Uint8Array(n);
    for (let t = 0; t < times; t++) nulls.set(v.nulls.subarray(0, m), t * m);
  }
  return { type: v.type, length: n, data, nulls };
}
