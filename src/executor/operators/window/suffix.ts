// Frames that end at UNBOUNDED FOLLOWING short of the whole partition
// (`ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING`, `RANGE BETWEEN 10
// FOLLOWING AND UNBOUNDED FOLLOWING`) over the spilled sorted stream. In
// memory, an order-free aggregate over them runs over the partition read
// backwards, where they are cumulative frames (aggregates.ts mirroredSuffix). The
// stream does the same: such a call becomes its mirror (every ORDER BY key's
// direction and NULL placement flipped, the frame UNBOUNDED PRECEDING .. the
// start's mirror), and the sort puts ties in reverse input order (an ordinal
// as the last, descending, key; peers still by the ORDER BY alone), so the
// rows come in exactly the reverse of the in-memory order and values are
// added in the same order (sums equal to the last bit). Other calls of the
// window run after, in a second pass over the first pass's output.
import type { FrameBound, Rel, ResolvedColumn, SortKey, WindowCall, WindowRel } from '../../../analyzer/resolved.js';
import { T } from '../../../types/types.js';
import type { Batch } from '../../../types/vector.js';
import type { ExecContext } from '../../context.js';
import { isWhole, isWholeValue } from './accumulated.js';
import { orderKey, sortedWindow, sortedWindowKeys, type Ties } from './sorted.js';

/** Aggregates aggregates.ts runs mirrored (ORDER_FREE there; COUNT(*) counts alike either way). */
const ORDER_FREE = new Set(['COUNT', '$COUNT_STAR', 'COUNTIF', 'SUM', 'AVG', 'MIN', 'MAX', 'LOGICAL_AND', 'LOGICAL_OR', 'BIT_AND', 'BIT_OR', 'BIT_XOR']);

/** Value functions run mirrored: the first row of the frame is the last of its mirror and the other way round. */
const MIRROR_VALUED: Readonly<Record<string, string>> = { FIRST_VALUE: 'LAST_VALUE', LAST_VALUE: 'FIRST_VALUE' };

/**
 * A call over frames ending at UNBOUNDED FOLLOWING, short of the whole
 * partition: an aggregate aggregates.ts runs mirrored, FIRST_VALUE / LAST_VALUE,
 * or ANY_VALUE (the frame's first non-NULL value: LAST_VALUE IGNORE NULLS of
 * the mirror).
 */
function isSuffix(c: WindowCall): boolean {
  const f = c.frame;
  if (c.orderBy.length === 0 || f === undefined || f.end.type !== 'unbounded_following' || f.start.type === 'unbounded_preceding') return false;
  const name = c.name.toUpperCase();
  if (!c.aggregate) return name in MIRROR_VALUED;
  return !c.distinct && (ORDER_FREE.has(name) || (name === 'ANY_VALUE' && c.args.length === 1));
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
  const frame = { unit: f.unit, start: { type: 'unbounded_preceding' }, end: mirrorBound(f.start) } as const;
  const name = c.name.toUpperCase();
  if (!c.aggregate) return { ...c, name: MIRROR_VALUED[name]!, orderBy, frame };
  if (name === 'ANY_VALUE') return { ...c, name: 'LAST_VALUE', aggregate: undefined, ignoreNulls: true, orderBy, frame };
  return { ...c, orderBy, frame };
}

export type SortedRun = (source: AsyncIterable<Batch>, ctx: ExecContext) => AsyncGenerator<Batch>;

/** The column id of the input ordinal the passes carry (no plan column is negative; sorted.ts uses -2). */
const ORDINAL_ID = -3;

/**
 * How the sorted stream runs `rel`'s calls (none may partition): in one pass
 * (sorted.ts) when they share one ORDER BY, else one pass per ORDER BY (the
 * suffix calls mirrored, each mirrored ORDER BY a pass of its own), each
 * pass's output the next one's input. The rows carry their input ordinal,
 * the last key of every sort (descending in a mirrored pass), so ties come in
 * the in-memory order (its reverse) whatever order the previous pass left them
 * in. Calls over all rows run in the first pass, which reads the rows in input
 * order. Null when a pass cannot run over the sorted stream.
 */
export function sortedWindowRun(rel: WindowRel): SortedRun | null {
  const keys = sortedWindowKeys(rel);
  if (keys !== null) return (source, ctx) => sortedWindow(rel, keys, source, ctx);
  const passes = new Map<string, { calls: WindowCall[]; mirrored: boolean }>();
  const wholes: WindowCall[] = [];
  for (const c of rel.calls) {
    if (c.partitionBy.length > 0) return null;
    if (isWhole(c) || isWholeValue(c)) {
      wholes.push(c);
      continue;
    }
    const m = isSuffix(c);
    const call = m ? mirrored(c) : c;
    const key = `${m}|${orderKey(call)}`;
    const p = passes.get(key);
    if (p) p.calls.push(call);
    else passes.set(key, { calls: [call], mirrored: m });
  }
  const list = [...passes.values()];
  if (list.length === 0) return null;
  list[0]!.calls.unshift(...wholes);
  const ord: ResolvedColumn = { id: ORDINAL_ID, name: '$ordinal', type: T.INT64 };
  let input: Rel = { ...rel.input, columns: [...rel.input.columns, ord] } as Rel;
  const steps: { rel: WindowRel; keys: readonly SortKey[]; ties: Ties }[] = [];
  for (const p of list) {
    const passRel: WindowRel = { kind: 'window', input, calls: p.calls, columns: [...input.columns, ...p.calls.map((c) => c.column)] };
    const k = sortedWindowKeys(passRel);
    if (k === null) return null;
    steps.push({ rel: passRel, keys: k, ties: { ordinal: ORDINAL_ID, descending: p.mirrored } });
    input = passRel;
  }
  // The last pass's columns put back in the window's order (the ordinal dropped).
  const at = new Map(input.columns.map((c, i) => [c.id, i]));
  const order = rel.columns.map((c) => at.get(c.id)!);
  return async function* (source, ctx) {
    let rows: AsyncIterable<Batch> = (async function* (): AsyncGenerator<Batch> {
      let n = 0;
      for await (const b of source) {
        const o = new Float64Array(b.length);
        for (let i = 0; i < b.length; i++) o[i] = n++;
        yield { length: b.length, columns: [...b.columns, { type: T.INT64, length: b.length, data: o, nulls: null }] };
      }
    })();
    for (const st of steps) rows = sortedWindow(st.rel, st.keys, rows, ctx, st.ties);
    for await (const b of rows) yield { length: b.length, columns: order.map((i) => b.columns[i]!) };
  };
}
