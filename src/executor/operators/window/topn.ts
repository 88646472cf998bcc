// Per-partition top-N for windows marked with partitionLimit (see
// planner/rules/window-topn.ts): the rows that are among the first `limit` of
// their partition in window order (ORDER BY keys, ties by input position as
// the window's stable sort breaks them). Each partition keeps a small sorted
// candidate list; a row that is not smaller than a full list's last entry is
// dropped with one comparison, so no full sort happens.
import type { WindowCall } from '../../../analyzer/resolved.js';
import type { Batch, Vector } from '../../../types/vector.js';
import type { ExecContext } from '../../context.js';
import { evaluate } from '../../expr.js';
import { GroupTable } from '../../hash.js';
import { rowsComparator, type RowComparator } from '../../sort-keys.js';

type Layout = ReadonlyMap<number, number>;

/** Candidate lists larger than this per partition are not worth it: the caller numbers every row. */
const MAX_LIMIT = 1024;

/**
 * Input rows to keep (ascending), or null when pruning would not pay
 * (large limit, or about as many candidate slots as rows).
 */
export async function topRowsPerPartition(call: WindowCall, input: Batch, layout: Layout, ctx: ExecContext, limit: number): Promise<Int32Array | null> {
  const n = input.length;
  if (limit > MAX_LIMIT || n < 2 * limit) return null;
  if (limit === 0) return new Int32Array(0);
  const pVecs: Vector[] = [];
  for (const e of call.partitionBy) pVecs.push(await evaluate(e, input, layout, ctx));
  const oVecs: Vector[] = [];
  for (const k of call.orderBy) oVecs.push(await evaluate(k.expr, input, layout, ctx));
  // Partition ids: x - min for one small-range integer key, else one GroupTable pass.
  const pid = new Int32Array(n);
  let numParts = pVecs.length === 1 ? integralIds(pVecs[0]!, n, pid) : pVecs.length === 0 ? 1 : -1;
  if (numParts < 0) {
    const table = new GroupTable(pVecs.map((v) => v.type), 1024);
    table.findOrInsert(pVecs, n, pid);
    numParts = table.size;
  }
  if (numParts * limit * 2 > n) return null;
  const cand = new Int32Array(numParts * limit);
  const count = new Int32Array(numParts);
  const o0 = oVecs.length === 1 ? oVecs[0]! : null;
  const d0 = o0?.data;
  let done = false;
  if (o0 !== null && o0.nulls === null && (d0 instanceof Float64Array || d0 instanceof Int32Array)) {
    done = selectTyped(d0, call.orderBy[0]!.descending, pid, n, limit, cand, count, new Float64Array(numParts));
    if (!done) count.fill(0);
  }
  if (!done) {
    const cmp = oVecs.length === 0 ? (a: number, b: number) => a - b : rowsComparator(oVecs, call.orderBy);
    selectGeneric(cmp, pid, n, limit, cand, count);
  }
  let m = 0;
  for (let p = 0; p < numParts; p++) m += count[p]!;
  const keep = new Int32Array(m);
  let j = 0;
  for (let p = 0; p < numParts; p++) {
    const base = p * limit;
    for (let i = 0; i < count[p]!; i++) keep[j++] = cand[base + i]!;
  }
  keep.sort();
  return keep;
}

/**
 * Ids x - min (NULL: max - min + 1) for one typed key of integers whose range
 * is at most n; returns the id count, or -1 (pid untouched) for other keys.
 */
function integralIds(v: Vector, n: number, pid: Int32Array): number {
  const d = v.data;
  if (!(d instanceof Float64Array || d instanceof Int32Array || d instanceof Uint8Array)) return -1;
  const nulls = v.nulls;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const x = d[i]!;
    if (x !== Math.floor(x)) return -1; // fractions, NaN
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const range = min === Infinity ? 0 : max - min + 1;
  if (range > n) return -1;
  for (let i = 0; i < n; i++) pid[i] = nulls !== null && nulls[i] === 1 ? range : d[i]! - min;
  return range + 1;
}

/**
 * One typed key without NULLs: plain number comparisons, each partition's
 * last candidate value cached in `worst`. Rows arrive in input order, so a
 * row equal to a candidate sorts after it (stable ties). False on a NaN (the
 * caller restarts with the comparator, which orders NaN).
 */
function selectTyped(d: Float64Array | Int32Array, desc: boolean, pid: Int32Array, n: number, limit: number, cand: Int32Array, count: Int32Array, worst: Float64Array): boolean {
  const s = desc ? -1 : 1;
  for (let r = 0; r < n; r++) {
    const x = s * d[r]!;
    if (x !== x) return false;
    const p = pid[r]!;
    const c = count[p]!;
    // Not strictly smaller than a full list's last candidate: never among the first `limit`.
    if (c === limit && !(x < worst[p]!)) continue;
    const base = p * limit;
    let i = c;
    if (c === limit) i = c - 1;
    else count[p] = c + 1;
    while (i > 0 && x < s * d[cand[base + i - 1]!]!) {
      cand[base + i] = cand[base + i - 1]!;
      i--;
    }
    cand[base + i] = r;
    worst[p] = s * d[cand[base + count[p]! - 1]!]!;
  }
  return true;
}

function selectGeneric(cmp: RowComparator, pid: Int32Array, n: number, limit: number, cand: Int32Array, count: Int32Array): void {
  for (let r = 0; r < n; r++) {
    const p = pid[r]!;
    const base = p * limit;
    const c = count[p]!;
    let i = c;
    if (c === limit) {
      if (!(cmp(r, cand[base + c - 1]!) < 0)) continue;
      i = c - 1;
    } else count[p] = c + 1;
    while (i > 0 && cmp(r, cand[base + i - 1]!) < 0) {
      cand[base + i] = cand[base + i - 1]!;
      i--;
    }
    cand[base + i] = r;
  }
}
