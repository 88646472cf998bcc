// UNION / INTERSECT / EXCEPT. UNION ALL streams its inputs. The others hash
// whole rows into a GroupTable and count, per distinct row, how often each
// side produced it; ALL variants emit the multiplicities (INTERSECT ALL:
// min(l, r); EXCEPT ALL: l - r), DISTINCT variants one copy. N-ary forms fold
// left to right.
import type { SetOpRel } from '../../analyzer/resolved.js';
import { BATCH_SIZE, type Batch } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { executeRel } from '../execute.js';
import { GroupTable } from '../hash.js';
import { growInt32, takeBatch } from '../vectors.js';

export async function* setOpOp(rel: SetOpRel, ctx: ExecContext): AsyncGenerator<Batch> {
  const types = rel.columns.map((c) => c.type);
  if (rel.op === 'union' && rel.all) {
    for (const input of rel.inputs) {
      for await (const b of executeRel(input, ctx)) {
        await checkpoint(ctx);
        if (b.length > 0) yield b;
      }
    }
    return;
  }
  if (rel.op === 'union') {
    const table = new GroupTable(types, 1024);
    let ids = new Int32Array(BATCH_SIZE);
    for (const input of rel.inputs) {
      for await (const b of executeRel(input, ctx)) {
        await checkpoint(ctx);
        if (b.length === 0) continue;
        if (ids.length < b.length) ids = new Int32Array(b.length);
        const sel = new Int32Array(b.length);
        const c = table.insertFresh(b.columns, b.length, ids, sel);
        if (c > 0) yield c === b.length ? b : takeBatch(b, sel, c);
      }
    }
    return;
  }
  // INTERSECT / EXCEPT: fold pairwise over the inputs.
  const table = new GroupTable(types, 1024);
  let counts: Int32Array = new Int32Array(1024);
  let ids = new Int32Array(BATCH_SIZE);
  for await (const b of executeRel(rel.inputs[0]!, ctx)) {
    await checkpoint(ctx);
    if (b.length === 0) continue;
    if (ids.length < b.length) ids = new Int32Array(b.length);
    table.findOrInsert(b.columns, b.length, ids);
    if (counts.length < table.size) counts = growInt32(counts, Math.max(table.size, counts.length * 2));
    for (let i = 0; i < b.length; i++) counts[ids[i]!]!++;
  }
  for (let k = 1; k < rel.inputs.length; k++) {
    const other = new Int32Array(table.size);
    for await (const b of executeRel(rel.inputs[k]!, ctx)) {
      await checkpoint(ctx);
      if (b.length === 0) continue;
      if (ids.length < b.length) ids = new Int32Array(b.length);
      table.lookup(b.columns, b.length, ids);
      for (let i = 0; i < b.length; i++) if (ids[i]! >= 0) other[ids[i]!]!++;
    }
    const next = new Int32Array(table.size);
    for (let g = 0; g < table.size; g++) {
      const l = counts[g]!;
      const r = other[g]!;
      let c: number;
      if (rel.op === 'intersect') c = rel.all ? Math.min(l, r) : l > 0 && r > 0 ? 1 : 0;
      else c = rel.all ? Math.max(0, l - r) : l > 0 && r === 0 ? 1 : 0;
      next[g] = c;
    }
    counts = next;
  }
  // Emit each distinct row `count` times.
  const keys = table.keyVectors();
  const rows: Batch = { length: table.size, columns: keys };
  let sel = new Int32Array(BATCH_SIZE);
  let c = 0;
  for (let g = 0; g < table.size; g++) {
    const times = rel.all ? counts[g]! : Math.min(1, counts[g]!);
    for (let t = 0; t < times; t++) {
      sel[c++] = g;
      if (c === BATCH_SIZE) {
        yield takeBatch(rows, sel, c);
        sel = new Int32Array(BATCH_SIZE);
        c = 0;
        await checkpoint(ctx);
      }
    }
  }
  if (c > 0) yield takeBatch(rows, sel, c);
}
