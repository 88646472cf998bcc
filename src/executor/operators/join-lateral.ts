// Lateral joins: the right side runs per left row (correlated), with a
// whole-batch fast path for UNNEST of the left rows' arrays.
import { QueryError } from '../../types/errors.js';
import type { JoinRel, UnnestRel } from '../../analyzer/resolved.js';
import { T, type SqlType } from '../../types/types.js';
import type { Value } from '../../types/values.js';
import { BATCH_SIZE, getValue, packedList, sliceVector, takeVector, type Batch, type Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate, layoutOf } from '../expr.js';
import { executeRel, materialize } from '../execute.js';
import { BatchCoalescer, ColumnBuffer, Phys, concatBatches, nullVector, physOf } from '../vectors.js';

import { PairEmitter, condLayoutOf } from './join-pairs.js';

// ---------------------------------------------------------------- lateral

/** The rows UNNEST produces for each row of `b`: right batch + owning row per right row. */
export function unnestRows(
  rel: UnnestRel,
  arrays: readonly Vector[],
  n: number,
): { rows: Batch; owner: Int32Array } {
  const na = arrays.length;
  const packed = na === 1 ? packedList(arrays[0]!, n) : null;
  if (packed) return unnestView(rel, packed.offsets, packed.child, n);
  const vals: (Value[] | null)[][] = arrays.map((a) => {
    const out: (Value[] | null)[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = getValue(a, i) as Value[] | null;
    return out;
  });
  // Zip length per row: the longest array (NULL and empty arrays give no rows).
  const lens = new Int32Array(n);
  let m = 0;
  for (let i = 0; i < n; i++) {
    let len = 0;
    for (let a = 0; a < na; a++) {
      const v = vals[a]![i];
      if (v && v.length > len) len = v.length;
    }
    if (rel.mode && na > 1) {
      // TRUNCATE: the shortest array's length; STRICT: all lengths must agree (NULL = empty).
      let min = len;
      for (let a = 0; a < na; a++) min = Math.min(min, vals[a]![i]?.length ?? 0);
      if (rel.mode === 'STRICT' && min !== len) throw new QueryError('Unnested arrays under STRICT mode must have equal lengths', 'invalidQuery');
      len = min;
    }
    lens[i] = len;
    m += len;
  }
  const owner = new Int32Array(m);
  // WITH OFFSET only: most UNNESTs never read the positions.
  const offsets = rel.offset ? new Float64Array(m) : null;
  for (let i = 0, k = 0; i < n; i++) {
    const len = lens[i]!;
    for (let e = 0; e < len; e++, k++) owner[k] = i;
    if (offsets !== null) for (let e = 0, k2 = k - len; e < len; e++, k2++) offsets[k2] = e;
  }
  const byId = new Map<number, Vector>();
  rel.elements.forEach((c, a) => byId.set(c.id, elementColumn(c.type, vals[a]!, lens, m)));
  if (rel.offset && offsets !== null) byId.set(rel.offset.id, { type: T.INT64, length: m, data: offsets, nulls: null });
  return { rows: { length: m, columns: rel.columns.map((c) => byId.get(c.id)!) }, owner };
}

/** unnestRows of one array given in the Arrow layout: the elements are its child vector, in order (NULL and empty arrays have none). */
function unnestView(rel: UnnestRel, offsets: Int32Array, child: Vector, n: number): { rows: Batch; owner: Int32Array } {
  const m = offsets[n]! - offsets[0]!;
  const owner = new Int32Array(m);
  const positions = rel.offset ? new Float64Array(m) : null;
  const base = offsets[0]!;
  for (let i = 0; i < n; i++) {
    for (let k = offsets[i]! - base, e = 0; k < offsets[i + 1]! - base; k++, e++) {
      owner[k] = i;
      if (positions !== null) positions[k] = e;
    }
  }
  const elements = base === 0 && child.length === m ? child : sliceVector(child, base, base + m);
  const byId = new Map<number, Vector>();
  byId.set(rel.elements[0]!.id, elements);
  if (rel.offset && positions !== null) byId.set(rel.offset.id, { type: T.INT64, length: m, data: positions, nulls: null });
  return { rows: { length: m, columns: rel.columns.map((c) => byId.get(c.id)!) }, owner };
}

/** One element column of an UNNEST: element k of each row's array, NULL past its end. */
function elementColumn(type: SqlType, arrs: readonly (Value[] | null)[], lens: Int32Array, m: number): Vector {
  const layout = physOf(type);
  if (layout === Phys.F64 || layout === Phys.I32 || layout === Phys.I64F) {
    const d = layout === Phys.I32 ? new Int32Array(m) : new Float64Array(m);
    let nulls: Uint8Array | null = null;
    let k = 0;
    for (let i = 0; i < arrs.length; i++) {
      const arr = arrs[i];
      const len = lens[i]!;
      for (let e = 0; e < len; e++, k++) {
        const x = arr && e < arr.length ? arr[e]! : null;
        if (x === null) {
          nulls ??= new Uint8Array(m);
          nulls[k] = 1;
        } else if (typeof x === 'bigint') {
          // INT64-like elements beyond ±2^53 need the exact layout: take the general path.
          // (compared as the double it rounds to: ±2^53 itself goes the general way too, so kept values are exact)
          const f = Number(x);
          if (f >= 9007199254740992 || f <= -9007199254740992) return generalElementColumn(type, arrs, lens, m);
          d[k] = f;
        } else d[k] = x as number;
      }
    }
    return { type, length: m, data: d, nulls };
  }
  return generalElementColumn(type, arrs, lens, m);
}

function generalElementColumn(type: SqlType, arrs: readonly (Value[] | null)[], lens: Int32Array, m: number): Vector {
  if (physOf(type) === Phys.VALUES) return valuesElementColumn(type, arrs, lens, m);
  const buf = new ColumnBuffer(type, m);
  for (let i = 0; i < arrs.length; i++) {
    const arr = arrs[i];
    for (let e = 0; e < lens[i]!; e++) buf.appendValue(arr && e < arr.length ? arr[e]! : null);
  }
  return buf.toVector();
}

/** generalElementColumn for types held as values (STRUCT, STRING, ...): the elements themselves, no buffer per element. */
export function valuesElementColumn(type: SqlType, arrs: readonly (Value[] | null)[], lens: Int32Array, m: number): Vector {
  const out = new Array<Value>(m);
  let nulls: Uint8Array | null = null;
  let k = 0;
  for (let i = 0; i < arrs.length; i++) {
    const arr = arrs[i];
    const len = lens[i]!;
    for (let e = 0; e < len; e++, k++) {
      const x = arr && e < arr.length ? arr[e]! : null;
      if (x === null) (nulls ??= new Uint8Array(m))[k] = 1;
      out[k] = x;
    }
  }
  return { type, length: m, data: out, nulls };
}

/** An inner UNNEST's output batches: rel.columns from the owners' left rows and the element rows. */
function unnestPairs(rel: JoinRel, left: Batch, { rows, owner }: { rows: Batch; owner: Int32Array }): Batch[] {
  const leftAt = new Map(rel.left.columns.map((c, i) => [c.id, i]));
  const rightAt = new Map(rel.right.columns.map((c, i) => [c.id, i]));
  const out: Batch[] = [];
  for (let s = 0; s < rows.length; s += BATCH_SIZE) {
    const e = Math.min(rows.length, s + BATCH_SIZE);
    const sel = owner.subarray(s, e);
    const whole = s === 0 && e === rows.length;
    const columns = rel.columns.map((c) => {
      const l = leftAt.get(c.id);
      if (l !== undefined) return takeVector(left.columns[l]!, sel, e - s);
      const r = rows.columns[rightAt.get(c.id)!]!;
      return whole ? r : sliceVector(r, s, e);
    });
    out.push({ length: e - s, columns });
  }
  return out;
}

export async function* lateralJoin(rel: JoinRel, ctx: ExecContext): AsyncGenerator<Batch> {
  const lLayout = layoutOf(rel.left.columns);
  const co = new BatchCoalescer(rel.columns.map((c) => c.type));
  const condLayout = condLayoutOf(rel);
  const residual = rel.condition;
  const em = new PairEmitter(rel, residual, condLayout, { length: 0, columns: [] }, null, ctx);
  for await (const left of executeRel(rel.left, ctx)) {
    await checkpoint(ctx);
    const n = left.length;
    if (n === 0) continue;
    em.startLeft(n);
    if (rel.right.kind === 'unnest' && (rel.joinType === 'inner' || rel.joinType === 'cross') && !residual) {
      // Every element row pairs with its owner, in order: the output is the
      // owners' left columns and the element columns, no pairs to match.
      const arrays: Vector[] = [];
      for (const a of rel.right.arrays) arrays.push(await evaluate(a, left, lLayout, ctx));
      for (const b of unnestPairs(rel, left, unnestRows(rel.right, arrays, n))) for (const o of co.push(b)) yield o;
      continue;
    }
    if (rel.right.kind === 'unnest') {
      // Fast path: unnest the arrays of the whole left batch at once.
      const arrays: Vector[] = [];
      for (const a of rel.right.arrays) arrays.push(await evaluate(a, left, lLayout, ctx));
      const { rows, owner } = unnestRows(rel.right, arrays, n);
      em.right = rows;
      for (let j = 0; j < rows.length; j++) {
        em.push(owner[j]!, j);
        if (em.full) await em.flush(left);
      }
      await em.flush(left);
    } else {
      // General: run the right side once per left row with that row bound as outer values.
      const batches: Batch[] = [];
      const owners: number[] = [];
      for (let i = 0; i < n; i++) {
        const outer = new Map(ctx.outer);
        rel.left.columns.forEach((c, k) => outer.set(c.id, getValue(left.columns[k]!, i)));
        const r = await materialize(rel.right, { ...ctx, outer });
        batches.push(r);
        for (let j = 0; j < r.length; j++) owners.push(i);
        await checkpoint(ctx);
      }
      const rows = concatBatches(
        rel.right.columns.map((c) => c.type),
        batches,
      );
      em.right = rows;
      for (let j = 0; j < rows.length; j++) {
        em.push(owners[j]!, j);
        if (em.full) await em.flush(left);
      }
      await em.flush(left);
    }
    if (em.right.columns.length === 0 && rel.right.columns.length > 0) {
      em.right = { length: 0, columns: rel.right.columns.map((c) => nullVector(c.type, 0)) };
    }
    em.finishLeft(left);
    for (const b of em.out.splice(0)) for (const o of co.push(b)) yield o;
  }
  for (const o of co.drain()) yield o;
}
