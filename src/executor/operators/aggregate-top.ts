// ORDER BY ... LIMIT 1 inside an aggregate call (the dedup idiom
// ARRAY_AGG(STRUCT(...) ORDER BY ts DESC LIMIT 1)[OFFSET(0)] ... GROUP BY id):
// instead of buffering every row until the end, each group keeps only its
// best row so far (its arguments and sort keys), replaced when a strictly
// better row arrives, so the call holds one row per group (and the routing
// aggregate sees that in its bytes). A tie keeps the earlier row, as the
// stable sort of the buffered path does.
import type { AggregateCall } from '../../analyzer/resolved.js';
import { collatorFor } from '../../functions/collation.js';
import { getValue, type Vector } from '../../types/vector.js';
import { rowsComparator, type KeySpec } from '../sort-keys.js';
import { compareFloats, compareValues } from '../values-compare.js';
import { ColumnBuffer, growInt32, Phys } from '../vectors.js';

export class TopOne {
  /** Kept rows: a group's current best and rows replaced since the last compaction. */
  private args: ColumnBuffer[];
  private order: ColumnBuffer[];
  /** Per group: its best row in the kept buffers, -1 = none yet. */
  private best: Int32Array = new Int32Array(0);
  private live = 0;
  private dead = 0;
  /** Per group: the batch that last saw it (`stamp`) and its best row in that batch (`local`). */
  private stamp: Int32Array = new Int32Array(0);
  private local: Int32Array = new Int32Array(0);
  private batchNo = 0;
  /** Values the aggregate drops (a NULL first argument of STRING_AGG, ARRAY_CONCAT_AGG, ... IGNORE NULLS) never count. */
  private readonly skipNulls: boolean;

  constructor(private readonly call: AggregateCall) {
    this.args = call.args.map((a) => new ColumnBuffer(a.type));
    this.order = call.orderBy.map((k) => new ColumnBuffer(k.expr.type));
    this.skipNulls = call.name !== 'ARRAY_AGG' || call.ignoreNulls === true;
  }

  bytes(): number {
    let n = this.best.byteLength + this.stamp.byteLength + this.local.byteLength;
    for (const b of this.args) n += b.bytes();
    for (const b of this.order) n += b.bytes();
    return n;
  }

  /** Rows 0..count-1 of `args` / `order` (already the selected rows), in groups `groups`. */
  add(args: readonly Vector[], order: readonly Vector[], groups: Int32Array, count: number, numGroups: number): void {
    this.grow(numGroups);
    const stamp = this.stamp;
    const local = this.local;
    const no = ++this.batchNo;
    const drop = this.skipNulls && args.length > 0 ? args[0]!.nulls : null;
    const inBatch = rowsComparator(order, this.call.orderBy);
    const seen = new Int32Array(count);
    let ns = 0;
    for (let j = 0; j < count; j++) {
      if (drop !== null && drop[j] === 1) continue;
      const g = groups[j]!;
      if (stamp[g] !== no) {
        stamp[g] = no;
        local[g] = j;
        seen[ns++] = g;
      } else if (inBatch(j, local[g]!) < 0) local[g] = j;
    }
    // Each group's batch best against its kept best: only a strictly better row replaces it.
    const win = new Int32Array(ns);
    const winGroup = new Int32Array(ns);
    let nw = 0;
    for (let s = 0; s < ns; s++) {
      const g = seen[s]!;
      const j = local[g]!;
      const b = this.best[g]!;
      if (b >= 0 && !this.before(order, j, b)) continue;
      win[nw] = j;
      winGroup[nw++] = g;
    }
    if (nw === 0) return;
    const at = this.args.length > 0 ? this.args[0]!.length : this.order[0]!.length;
    for (let k = 0; k < args.length; k++) this.args[k]!.appendTake(args[k]!, win, 0, nw);
    for (let k = 0; k < order.length; k++) this.order[k]!.appendTake(order[k]!, win, 0, nw);
    for (let w = 0; w < nw; w++) {
      const g = winGroup[w]!;
      if (this.best[g]! >= 0) this.dead++;
      else this.live++;
      this.best[g] = at + w;
    }
    if (this.dead > Math.max(this.live, 4096)) this.compact();
  }

  /** The kept best rows in group order: the arguments' vectors and the rows of them to feed, with their groups. */
  finish(numGroups: number): { args: Vector[]; rows: Int32Array; groups: Int32Array; count: number } {
    this.grow(numGroups);
    const rows = new Int32Array(this.live);
    const groups = new Int32Array(this.live);
    let c = 0;
    for (let g = 0; g < numGroups; g++) {
      const b = this.best[g]!;
      if (b < 0) continue;
      rows[c] = b;
      groups[c++] = g;
    }
    return { args: this.args.map((b) => b.view()), rows, groups, count: c };
  }

  private grow(numGroups: number): void {
    if (this.best.length >= numGroups) return;
    const cap = Math.max(numGroups, this.best.length * 2, 1024);
    const old = this.best.length;
    this.best = growInt32(this.best, cap);
    this.best.fill(-1, old);
    this.stamp = growInt32(this.stamp, cap);
    this.local = growInt32(this.local, cap);
  }

  /** Whether batch row j sorts strictly before kept row b. */
  private before(order: readonly Vector[], j: number, b: number): boolean {
    const specs = this.call.orderBy;
    for (let k = 0; k < order.length; k++) {
      const c = compareWithKept(order[k]!, j, this.order[k]!, b, specs[k]!);
      if (c !== 0) return c < 0;
    }
    return false;
  }

  /** Drops replaced rows: the buffers keep only each group's best. */
  private compact(): void {
    const keep = new Int32Array(this.live);
    let c = 0;
    for (let g = 0; g < this.best.length; g++) {
      const b = this.best[g]!;
      if (b >= 0) {
        keep[c] = b;
        this.best[g] = c++;
      }
    }
    const redo = (bufs: ColumnBuffer[]): ColumnBuffer[] =>
      bufs.map((old) => {
        const nb = new ColumnBuffer(old.type, c);
        nb.appendTake(old.view(), keep, 0, c);
        return nb;
      });
    this.args = redo(this.args);
    this.order = redo(this.order);
    this.dead = 0;
  }
}

/** keyComparator's order between row j of `v` and kept row b of `kept` (NULL placement, then value order by direction). */
function compareWithKept(v: Vector, j: number, kept: ColumnBuffer, b: number, spec: KeySpec): number {
  const vn = v.nulls !== null && v.nulls[j] === 1;
  const kn = kept.isNull(b);
  if (vn || kn) {
    if (vn === kn) return 0;
    const nullA = spec.nullsFirst ? -1 : 1;
    return vn ? nullA : -nullA;
  }
  const sign = spec.descending ? -1 : 1;
  const d = v.data;
  if ((kept.phys === Phys.F64 || kept.phys === Phys.I64F) && d instanceof Float64Array) return sign * compareFloats(d[j]!, kept.f64[b]!);
  if (kept.phys === Phys.I32 && d instanceof Int32Array) return sign * Math.sign(d[j]! - kept.i32[b]!);
  const x = getValue(v, j);
  const y = kept.get(b);
  const coll = spec.collation && v.type.kind === 'STRING' ? collatorFor(spec.collation) : null;
  if (coll) return sign * coll.compare(x as string, y as string);
  return sign * compareValues(x, y, v.type);
}
