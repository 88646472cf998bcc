// Fused grouped COUNT / SUM / AVG of FLOAT64. A GROUP BY with COUNT(*),
// SUM(v) and AVG(v) fed three accumulators, each with its own loop over the
// batch's group ids (AVG's loop counting too); here one loop per argument
// adds the value to its group's partial sum and counts the group's rows, and
// SUM(v) / AVG(v) / COUNT(v) of the same argument share it. The accumulators
// keep the SQL semantics: at finish each SUM/AVG accumulator folds the
// partial sums (`mergePartial`) and finishes as usual, so NULL for empty
// groups, -0, overflow (scaled sums, 'double overflow', SAFE.) stay theirs.
//
// Partial sums stay finite: a row whose addition would leave the finite
// range (an infinite or NaN value, an overflow) stops the loop, and that row
// and the rest of its batch go to the accumulators directly (`fedAcc` counts
// them, so the partial counts stay right). Without such rows every group's
// values are added in row order, as the accumulators would add them.
//
// Slot mode (`useSlots`): with one numeric GROUP BY key, one summed argument
// and no other calls, the sums and counts are kept by key slot (key - lo, a
// range of at most MAX_SLOTS) in one loop that reads the key and the value
// and never makes group ids; the group table gets only each batch's new
// keys, in order of first appearance, so group ids are what they would be.
// At finish (or when a batch does not fit: a key out of range, a fraction,
// NULLs, a sum leaving the finite range) the slot arrays are gathered into
// the per-group ones and the rest goes the usual way: same values, same
// order of additions. (A worker's 5M rows of a 1,000-key COUNT/SUM/AVG,
// replayed in one thread: ~42 -> ~33 ms CPU.)
import type { AggregateCall, Expr } from '../../analyzer/resolved.js';
import type { GroupsAccumulator } from '../../functions/registry.js';
import { T } from '../../types/types.js';
import { sliceVector, type Vector } from '../../types/vector.js';
import type { ExecContext } from '../context.js';
import type { GroupTable } from '../hash.js';
import { growF64 } from '../vectors.js';

/** Slot mode's widest key range (a sum and a count per slot: 1 MB). */
const MAX_SLOTS = 65_536;

/** Batches folded wholly in slot mode, and slot modes ended before the input did (tests assert on them). */
export const slotCounters = { batches: 0, left: 0 };

/** One summed argument and the calls reading it. */
interface FusedArg {
  readonly expr: Expr;
  /** SUM / AVG accumulators of this argument (mergePartial at finish). */
  readonly accs: GroupsAccumulator[];
  /** Partial sums of finite values, from -0 (the additive identity). */
  sums: Float64Array;
  /** NULL values per group (allocated at the first NULL). */
  nulls: Float64Array | null;
  /** Non-NULL values per group given to the accumulators directly (rows after a non-finite sum). */
  fedAcc: Float64Array | null;
}

/** What one fused call outputs. */
type FusedOutput =
  | { readonly kind: 'rows' }
  | { readonly kind: 'count'; readonly arg: FusedArg }
  | { readonly kind: 'acc'; readonly arg: FusedArg; readonly acc: GroupsAccumulator };

function plainCall(a: AggregateCall): boolean {
  return !a.distinct && !a.filter && a.orderBy.length === 0 && a.limit === undefined && !a.having && !a.ignoreNulls;
}

function sameExpr(a: Expr, b: Expr): boolean {
  return a === b || (a.kind === 'column' && b.kind === 'column' && a.columnId === b.columnId && !a.correlated && !b.correlated);
}

export class FusedSums {
  /** Rows per group (COUNT(*)). */
  private rows: Float64Array = new Float64Array(16);
  private capacity = 16;
  /** Slot mode's group table (null: off): sums and counts by key - slotLo until gathered. */
  private slotTable: GroupTable | null = null;
  private slotLo = 0;
  /**
   * Slot j's partial sum at [2j] (from -0) and row count at [2j + 1]: one
   * cache line per row's update, not two (the loop ~15% faster than with a
   * sums array and a counts array, standalone, 5M rows of 1,000 keys).
   */
  private slots = new Float64Array(0);
  /** Rows of the current batch whose key was new (their first appearance), and how many (slotSums' box). */
  private fresh = new Int32Array(0);
  private readonly freshBox = new Int32Array(1);

  private constructor(
    readonly args: readonly FusedArg[],
    /** By index into the aggregate's calls; undefined = not fused. */
    readonly outputs: readonly (FusedOutput | undefined)[],
  ) {}

  /**
   * The fused part of a grouped aggregate's calls, or null when there is
   * no SUM/AVG of FLOAT64 to fuse (COUNT alone gains nothing). `skip[i]`:
   * calls handled elsewhere.
   */
  static plan(calls: readonly AggregateCall[], skip: readonly boolean[], ctx: ExecContext): FusedSums | null {
    const args: FusedArg[] = [];
    const outputs: (FusedOutput | undefined)[] = calls.map(() => undefined);
    const argOf = (e: Expr): FusedArg => {
      let a = args.find((x) => sameExpr(x.expr, e));
      if (!a) {
        a = { expr: e, accs: [], sums: new Float64Array(16).fill(-0), nulls: null, fedAcc: null };
        args.push(a);
      }
      return a;
    };
    calls.forEach((c, i) => {
      if (skip[i] || !plainCall(c) || (c.name !== 'SUM' && c.name !== 'AVG') || c.args.length !== 1 || c.args[0]!.type.kind !== 'FLOAT64') return;
      const acc = c.fn.create(ctx.eval, { distinct: false, ignoreNulls: undefined, hasOrderBy: false });
      if (!acc.mergePartial) return;
      const arg = argOf(c.args[0]!);
      arg.accs.push(acc);
      outputs[i] = { kind: 'acc', arg, acc };
    });
    if (args.length === 0) return null;
    calls.forEach((c, i) => {
      if (skip[i] || !plainCall(c) || outputs[i]) return;
      if (c.name === '$count_star' && c.args.length === 0) outputs[i] = { kind: 'rows' };
      else if (c.name === 'COUNT' && c.args.length === 1) {
        const arg = args.find((x) => sameExpr(x.expr, c.args[0]!));
        if (arg) outputs[i] = { kind: 'count', arg };
      }
    });
    return new FusedSums(args, outputs);
  }

  /** Bytes held: a row count per group, and per argument its sums (NULL counts and direct-fed counts once some row needed them), for the room made; slot mode's arrays. */
  bytes(): number {
    let perGroup = 8;
    for (const a of this.args) perGroup += 8 + (a.nulls ? 8 : 0) + (a.fedAcc ? 8 : 0);
    return this.capacity * perGroup + this.slots.byteLength + this.fresh.byteLength;
  }

  /** Room for `numGroups` groups (an aggregation sized before reading reserves it up front: no doubling copies). */
  resize(numGroups: number): void {
    if (numGroups <= this.capacity) return;
    const cap = Math.max(numGroups, this.capacity * 2);
    this.rows = growF64(this.rows, cap);
    for (const a of this.args) {
      const s = new Float64Array(cap).fill(-0);
      s.set(a.sums);
      a.sums = s;
      if (a.nulls) a.nulls = growF64(a.nulls, cap);
      if (a.fedAcc) a.fedAcc = growF64(a.fedAcc, cap);
    }
    this.capacity = cap;
  }

  /**
   * Slot mode over `table` (empty, one FLOAT64-layout key) when the calls
   * are all fused over one argument; see the file's header.
   */
  useSlots(table: GroupTable): void {
    if (this.args.length === 1 && this.outputs.every((o) => o !== undefined) && table.size === 0) this.slotTable = table;
  }

  /** In slot mode: no group ids needed, call updateSlots. */
  get slotted(): boolean {
    return this.slotTable !== null;
  }

  /**
   * Slot mode: folds rows [0, n) of one batch by key slot, as far as they
   * fit; returns the first row that did not (n: all did). From that row on
   * slot mode is over and the caller goes the usual way (group ids, update).
   */
  updateSlots(key: Vector, arg: Vector, n: number): number {
    const table = this.slotTable!;
    const k = key.data;
    const d = arg.data;
    if (!(k instanceof Float64Array) || !(d instanceof Float64Array) || hasNull(key.nulls, n) || hasNull(arg.nulls, n)) {
      this.leaveSlots();
      slotCounters.left++;
      return 0;
    }
    if (this.fresh.length < n) this.fresh = new Int32Array(Math.max(n, 4096));
    const box = this.freshBox;
    box[0] = 0;
    let i = 0;
    while ((i = slotSums(k, d, i, n, this.slotLo, this.slots, this.fresh, box)) < n && this.widen(k, i, n));
    // The batch's new keys into the table, in order of first appearance.
    const m = box[0]!;
    if (m > 0) {
      const keys = new Float64Array(m);
      for (let t = 0; t < m; t++) keys[t] = k[this.fresh[t]!]!;
      table.findOrInsert([{ type: key.type, length: m, data: keys, nulls: null }], m, this.fresh);
    }
    if (i < n) {
      this.leaveSlots();
      slotCounters.left++;
    } else slotCounters.batches++;
    return i;
  }

  /**
   * Slots for rows [from, n)'s keys when they are integers whose range with
   * the keys so far is at most MAX_SLOTS: laid out again, with room on the
   * side the range grew (keys rising or falling); false when not.
   */
  private widen(k: Float64Array, from: number, n: number): boolean {
    const len = this.slots.length >> 1;
    const at = k[from]! - this.slotLo;
    // Within the slots: the loop stopped at a sum leaving the finite range.
    if (Number.isInteger(at) && at >= 0 && at < len) return false;
    let lo = k[from]!;
    let hi = lo;
    for (let i = from; i < n; i++) {
      const x = k[i]!;
      if (Math.floor(x) !== x) return false; // fractions, NaN (infinities fail the range)
      if (x < lo) lo = x;
      else if (x > hi) hi = x;
    }
    const falling = len > 0 && lo < this.slotLo;
    // With the slots in use (rows counted), not their room.
    const now = this.slots;
    let first = 0;
    let last = len - 1;
    while (first < len && now[2 * first + 1] === 0) first++;
    while (last >= first && now[2 * last + 1] === 0) last--;
    if (first <= last) {
      lo = Math.min(lo, this.slotLo + first);
      hi = Math.max(hi, this.slotLo + last);
    }
    const need = hi - lo + 1;
    if (!(need <= MAX_SLOTS)) return false;
    const size = Math.min(MAX_SLOTS, Math.max(need, 2 * len, 1024));
    const base = falling ? hi - size + 1 : lo;
    const slots = new Float64Array(2 * size);
    for (let j = 0; j < slots.length; j += 2) slots[j] = -0;
    if (first <= last) slots.set(now.subarray(2 * first, 2 * (last + 1)), 2 * (this.slotLo + first - base));
    this.slots = slots;
    this.slotLo = base;
    return true;
  }

  /** Ends slot mode: each group's count and sum gathered from its key's slot. */
  private leaveSlots(): void {
    const table = this.slotTable;
    if (!table) return;
    this.slotTable = null;
    const numGroups = table.size;
    this.resize(numGroups);
    const keys = table.keyVectors()[0]!.data as Float64Array;
    const a = this.args[0]!;
    const lo = this.slotLo;
    const slots = this.slots;
    for (let g = 0; g < numGroups; g++) {
      const j = 2 * (keys[g]! - lo);
      a.sums[g] = slots[j]!;
      this.rows[g] = slots[j + 1]!;
    }
    this.slots = new Float64Array(0);
  }

  /** Folds one batch: `vecs[k]` is args[k] evaluated over it, `groups` its group ids. */
  update(vecs: readonly Vector[], groups: Int32Array, n: number, numGroups: number): void {
    this.resize(numGroups);
    // Rows [0, counted) of the batch are counted in `rows` (by the first NULL-free argument's loop).
    let counted = 0;
    for (let k = 0; k < this.args.length; k++) {
      const a = this.args[k]!;
      const v = vecs[k]!;
      const d = v.data;
      let stop = 0;
      if (d instanceof Float64Array) {
        if (v.nulls !== null) stop = sumNulls(a.sums, (a.nulls ??= new Float64Array(this.capacity)), d, v.nulls, groups, n);
        else if (counted === 0) counted = stop = sumRows(this.rows, a.sums, d, groups, n);
        else stop = sumOnly(a.sums, d, groups, n);
      }
      if (stop < n) this.feedAccs(a, v, groups, stop, n);
    }
    if (counted < n) countRows(this.rows, groups, counted, n);
  }

  /** Rows [from, n) of argument `a` go to its accumulators directly. */
  private feedAccs(a: FusedArg, v: Vector, groups: Int32Array, from: number, n: number): void {
    const fed = (a.fedAcc ??= new Float64Array(this.capacity));
    const nulls = v.nulls;
    const nullCounts = nulls !== null ? (a.nulls ??= new Float64Array(this.capacity)) : null;
    for (let i = from; i < n; i++) {
      if (nullCounts !== null && nulls![i] === 1) nullCounts[groups[i]!]!++;
      else fed[groups[i]!]!++;
    }
    const part = sliceVector(v, from, n);
    const g = groups.subarray(from, n);
    for (const acc of a.accs) {
      acc.resize(this.capacity);
      acc.update([part], g, n - from);
    }
  }

  /** Whether fused call i's output is the row counts themselves (a view of them under finish's `view`). */
  isRows(i: number): boolean {
    return this.outputs[i]!.kind === 'rows';
  }

  /** Fused call i's output column (after the last update; `view`: a row count as a view of the counts, for sums never updated again). */
  finish(i: number, numGroups: number, view = false): Vector {
    this.leaveSlots();
    this.resize(numGroups);
    const out = this.outputs[i]!;
    if (out.kind === 'rows') return { type: T.INT64, length: numGroups, data: view ? this.rows.subarray(0, numGroups) : this.rows.slice(0, numGroups), nulls: null };
    const a = out.arg;
    // A SUM / AVG whose accumulator took nothing directly, over NULL-free values: the partial
    // sums and row counts are the whole story (finishPartial: no copy through the accumulator).
    if (out.kind === 'acc' && a.nulls === null && a.fedAcc === null && out.acc.finishPartial) {
      const v = out.acc.finishPartial(a.sums, this.rows, numGroups);
      if (v !== null) return v;
    }
    // Non-NULL values per group; less those the accumulators took directly, the values in the partial sums.
    const values = new Float64Array(numGroups);
    if (a.nulls) for (let g = 0; g < numGroups; g++) values[g] = this.rows[g]! - a.nulls[g]!;
    else values.set(this.rows.subarray(0, numGroups));
    if (out.kind === 'count') return { type: T.INT64, length: numGroups, data: values, nulls: null };
    if (a.fedAcc) for (let g = 0; g < numGroups; g++) values[g]! -= a.fedAcc[g]!;
    out.acc.resize(numGroups);
    out.acc.mergePartial!(a.sums, values, numGroups);
    return out.acc.finish(numGroups);
  }
}

// Standalone loops over typed arrays (V8 OSRs them on the first large batch;
// see the README's "Keeping V8 fast"). Each returns the first row whose sum
// would not be finite (n when none), left undone.

function hasNull(nulls: Uint8Array | null, n: number): boolean {
  if (nulls === null) return false;
  for (let i = 0; i < n; i++) if (nulls[i] === 1) return true;
  return false;
}

/**
 * Slot mode's loop: adds each row's value to its key's slot and counts it,
 * noting rows whose slot was empty in `fresh` (`box[0]` of them); stops at a
 * key that is not an integer within the slots or a sum that would not be
 * finite (returns that row, n when none).
 */
function slotSums(k: Float64Array, d: Float64Array, from: number, n: number, lo: number, slots: Float64Array, fresh: Int32Array, box: Int32Array): number {
  const len = slots.length >> 1;
  let i = from;
  for (; i < n; i++) {
    const j = k[i]! - lo;
    const ji = j | 0;
    // ji === j: an integer within int32 (NaN and fractions fail); one unsigned compare for the bounds.
    if (ji !== j || ji >>> 0 >= len) break;
    const at = ji << 1;
    const r = slots[at]! + d[i]!;
    if (r - r !== 0) break;
    const c = slots[at + 1]!;
    if (c === 0) {
      const f = box[0]!;
      fresh[f] = i;
      box[0] = f + 1;
    }
    slots[at] = r;
    slots[at + 1] = c + 1;
  }
  return i;
}

function sumRows(rows: Float64Array, s: Float64Array, d: Float64Array, groups: Int32Array, n: number): number {
  for (let i = 0; i < n; i++) {
    const g = groups[i]!;
    const r = s[g]! + d[i]!;
    if (r - r !== 0) return i;
    s[g] = r;
    rows[g]!++;
  }
  return n;
}

function sumOnly(s: Float64Array, d: Float64Array, groups: Int32Array, n: number): number {
  for (let i = 0; i < n; i++) {
    const g = groups[i]!;
    const r = s[g]! + d[i]!;
    if (r - r !== 0) return i;
    s[g] = r;
  }
  return n;
}

function sumNulls(s: Float64Array, nullCounts: Float64Array, d: Float64Array, nulls: Uint8Array, groups: Int32Array, n: number): number {
  for (let i = 0; i < n; i++) {
    const g = groups[i]!;
    if (nulls[i] === 1) {
      nullCounts[g]!++;
      continue;
    }
    const r = s[g]! + d[i]!;
    if (r - r !== 0) return i;
    s[g] = r;
  }
  return n;
}

function countRows(rows: Float64Array, groups: Int32Array, from: number, n: number): void {
  for (let i = from; i < n; i++) rows[groups[i]!]!++;
}
