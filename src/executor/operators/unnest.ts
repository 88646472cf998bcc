// UNNEST(array, ...) as a relation: one row per element, several arrays zip
// (shorter ones padded with NULL), WITH OFFSET numbers rows from 0; NULL or
// empty arrays give no rows. Correlated arrays are read from outer bindings;
// the lateral-join fast path in join.ts unnests a whole batch at once.
import type { ArrayScanRel, UnnestRel } from '../../analyzer/resolved.js';
import { getValue, type Batch } from '../../types/vector.js';
import { checkpoint, type ExecContext } from '../context.js';
import { evaluate } from '../expr.js';
import { rebatch, ColumnBuffer } from '../vectors.js';
import { unnestRows } from './join-lateral.js';
import type { Value } from '../../types/values.js';
import { typeEquals } from '../../types/types.js';

const ONE_ROW: Batch = { length: 1, columns: [] };
const NO_COLUMNS = new Map<number, number>();

export async function* unnestOp(rel: UnnestRel, ctx: ExecContext): AsyncGenerator<Batch> {
  const arrays = [];
  for (const a of rel.arrays) arrays.push(await evaluate(a, ONE_ROW, NO_COLUMNS, ctx));
  const { rows } = unnestRows(rel, arrays, 1);
  for (const b of rebatch(rows)) {
    await checkpoint(ctx);
    yield b;
  }
}

/** Rows from an ARRAY<STRUCT> value: struct fields spread over the columns (or the element as the one column). */
export async function* arrayScanOp(rel: ArrayScanRel, ctx: ExecContext): AsyncGenerator<Batch> {
  const v = await evaluate(rel.array, ONE_ROW, NO_COLUMNS, ctx);
  const arr = (getValue(v, 0) as Value[] | null) ?? [];
  const elemType = rel.array.type.kind === 'ARRAY' ? rel.array.type.element : rel.array.type;
  const spread =
    elemType.kind === 'STRUCT' &&
    rel.columns.length === elemType.fields.length &&
    !(rel.columns.length === 1 && typeEquals(rel.columns[0]!.type, elemType));
  const bufs = rel.columns.map((c) => new ColumnBuffer(c.type, arr.length));
  for (const e of arr) {
    if (spread) {
      const s = e as Value[] | null;
      bufs.forEach((b, k) => b.appendValue(s === null ? null : s[k]!));
    } else bufs[0]!.appendValue(e);
  }
  const all: Batch = { length: arr.length, columns: bufs.map((b) => b.toVector()) };
  for (const b of rebatch(all)) yield b;
}
