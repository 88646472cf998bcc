// Typed-array GroupsAccumulators for the executor's scale tests (stand-ins for
// the function library's SUM/COUNT; FLOAT64 sums only).
import type { GroupsAccumulator, ResolvedAggregate } from '../../functions/registry.js';
import { T } from '../../types/types.js';
import type { Vector } from '../../types/vector.js';

class SumF64 implements GroupsAccumulator {
  private sums = new Float64Array(16);
  private counts = new Float64Array(16);
  resize(n: number): void {
    if (n <= this.sums.length) return;
    let c = this.sums.length;
    while (c < n) c *= 2;
    const s = new Float64Array(c);
    s.set(this.sums);
    const k = new Float64Array(c);
    k.set(this.counts);
    this.sums = s;
    this.counts = k;
  }
  update(args: readonly Vector[], groups: Int32Array, n: number): void {
    const a = args[0]!;
    const d = a.data as Float64Array;
    const nulls = a.nulls;
    const s = this.sums;
    const c = this.counts;
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const g = groups[i]!;
      s[g] = s[g]! + d[i]!;
      c[g] = c[g]! + 1;
    }
  }
  finish(n: number): Vector {
    const nulls = new Uint8Array(n);
    let any = false;
    for (let g = 0; g < n; g++) if (this.counts[g] === 0) nulls[g] = 1, (any = true);
    return { type: T.FLOAT64, length: n, data: this.sums.slice(0, n), nulls: any ? nulls : null };
  }
}

class CountStar implements GroupsAccumulator {
  private counts = new Float64Array(16);
  resize(n: number): void {
    if (n <= this.counts.length) return;
    let c = this.counts.length;
    while (c < n) c *= 2;
    const k = new Float64Array(c);
    k.set(this.counts);
    this.counts = k;
  }
  update(_args: readonly Vector[], groups: Int32Array, n: number): void {
    const c = this.counts;
    for (let i = 0; i < n; i++) c[groups[i]!]!++;
  }
  finish(n: number): Vector {
    return { type: T.INT64, length: n, data: this.counts.slice(0, n), nulls: null };
  }
}

export const TYPED_AGG = {
  sumF64: (): ResolvedAggregate => ({ returnType: T.FLOAT64, argTypes: [T.FLOAT64], create: () => new SumF64() }),
  countStar: (): ResolvedAggregate => ({ returnType: T.INT64, argTypes: [], create: () => new CountStar() }),
};
