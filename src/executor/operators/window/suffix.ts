// Frames that end at UNBOUNDED FOLLOWING short of the whole partition
// (`ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING`, `RANGE BETWEEN 10
// FOLLOWING AND UNBOUNDED FOLLOWING`) over the spilled sorted stream. In
// memory, an order-free aggregate over them runs over the partition read
// backwards, where they are cumulative frames (window.ts mirroredSuffix). The
// stream does the same: such a call becomes its mirror (every ORDER BY key's
// direction and NULL placement flipped, the frame UNBOUNDED PRECEDING .. the
// start's mirror), and the sort puts ties in reverse input order (an ordinal
// as the last, descending, key; peers still by the ORDER BY alone), so the
// rows come in exactly the reverse of the in-memory order and values are
// added in the same order (sums equal to the last bit). Other calls of the
// window run after, in a second pass over the first pass's output.
import type { FrameBound, SortKey, WindowCall, WindowRel } from '../../../analyzer/resolved.js';
import type { Batch } from '../../../types/vector.js';
import type { ExecContext } from '../../context.js';
import { sortedWindow, sortedWindowKeys } from './sorted.js';

/** Aggregates window.ts runs mirrored (ORDER_FREE there; COUNT(*) counts alike either way). */
const ORDER_FREE = new Set(['COUNT', '$COUNT_STAR', 'COUNTIF', 'SUM', 'AVG', 'MIN', 'MAX', 'LOGICAL_AND', 'LOGICAL_OR', 'BIT_AND', 'BIT_OR', 'BIT_XOR']);

/** A call over frames ending at UNBOUNDED FOLLOWING, short of the whole partition, that window.ts runs mirrored. */
function isSuffix(c: WindowCall): boolean {
  const f = c.frame;
  return (
    c.aggregate !== undefined &&
    !c.distinct &&
    ORDER_FREE.has(c.name.toUpperCase()) &&
    c.orderBy.length > 0 &&
    f !== undefined &&
    f.end.type === 'unbounded_following' &&
    f.start.type !== 'unbounded_preceding'
  );
}

function mirrorBound(b: FrameBound): FrameBound {
  if (b.type === 'preceding') return { type: 'following', offset: b.offset };
  if (b.type === 'following') return { type: 'preceding', offset: b.offset };
  return b;
}

/** The call over the rows in reverse order: its frames cumulative. */
function mirrored(c: WindowCall): WindowCall {
  const f = c.frame!;
  const orderBy: SortKey[] = c.orderBy.map((k) => ({ ...k, descending: !k.descending, nullsFirst: !k.nullsFirst }));
  return { ...c, orderBy, frame: { unit: f.unit, start: { type: 'unbounded_preceding' }, end: mirrorBound(f.start) } };
}

export type SortedRun = (source: AsyncIterable<Batch>, ctx: ExecContext) => AsyncGenerator<Batch>;

/**
 * How the sorted stream runs `rel`'s calls (none may partition): in one pass
 * (sorted.ts), or the suffix calls mirrored first and the rest after; null
 * when it cannot.
 */
export function sortedWindowRun(rel: WindowRel): SortedRun | null {
  const keys = sortedWindowKeys(rel);
  if (keys !== null) return (source, ctx) => sortedWindow(rel, keys, source, ctx);
  const suffix = rel.calls.filter(isSuffix);
  if (suffix.length === 0) return null;
  const rest = rel.calls.filter((c) => !isSuffix(c));
  const first: WindowRel = { kind: 'window', input: rel.input, calls: suffix.map(mirrored), columns: [...rel.input.columns, ...suffix.map((c) => c.column)] };
  const firstKeys = sortedWindowKeys(first);
  if (firstKeys === null || firstKeys.length === 0) return null;
  if (rest.length === 0) return (source, ctx) => sortedWindow(first, firstKeys, source, ctx, true);
  const second: WindowRel = { kind: 'window', input: first, calls: rest, columns: [...first.columns, ...rest.map((c) => c.column)] };
  const secondKeys = sortedWindowKeys(second);
  if (secondKeys === null) return null;
  // The second pass's columns put back in the window's order.
  const at = new Map(second.columns.map((c, i) => [c.id, i]));
  const order = rel.columns.map((c) => at.get(c.id)!);
  return async function* (source, ctx) {
    for await (const b of sortedWindow(second, secondKeys, sortedWindow(first, firstKeys, source, ctx, true), ctx)) {
      yield { length: b.length, columns: order.map((i) => b.columns[i]!) };
    }
  };
}
