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
import type { AggregateCall, Expr } from '../../analyzer/resolved.js';
import type { GroupsAccumulator } from '../../functions/registry.js';
import { T } from '../../types/types.js';
import { sliceVector, type Vector } from '../../types/vector.js';
import type { ExecContext } from '../context.js';
import { growF64 } from '../vectors.js';

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

  /** Bytes held: a row count per group, and per argument its sums (NULL counts and direct-fed counts once some row needed them), for the room made. */
  bytes(): number {
    let perGroup = 8;
    for (const a of this.args) perGroup += 8 + (a.nulls ? 8 : 0) + (a.fedAcc ? 8 : 0);
    return this.capacity * perGroup;
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

  /** Fused call i's output column (after the last update). */
  finish(i: number, numGroups: number): Vector {
    this.resize(numGroups);
    const out = this.outputs[i]!;
    if (out.kind === 'rows') return { type: T.INT64, length: numGroups, data: this.rows.slice(0, numGroups), nulls: null };
    const a = out.arg;
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
