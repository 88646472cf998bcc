// SUM / AVG of FLOAT64 finished from the fused loop's partial sums alone
// (GroupsAccumulator.finishPartial, src/functions/aggregates.ts) must equal
// mergePartial + finish, the path it skips: groups without values NULL, sums
// of zeros +0, -0 sums, AVG divided by the values' count; and decline (null)
// once anything was folded into the accumulator or a sum is not finite.
import { describe, expect, it } from 'vitest';
import '../../src/functions/index.js';
import { lookupFunction, resolveAggregate, type AggregateFunctionDef, type GroupsAccumulator } from '../../src/functions/registry.js';
import { T } from '../../src/types/types.js';
import type { EvalContext } from '../../src/functions/registry.js';

const opts = { distinct: false, ignoreNulls: undefined, hasOrderBy: false };

function acc(name: 'SUM' | 'AVG'): GroupsAccumulator {
  const r = resolveAggregate(lookupFunction(name) as AggregateFunctionDef, [{ type: T.FLOAT64 }], opts);
  if (!r.ok) throw new Error(`${name} did not resolve`);
  return r.resolved.create({} as EvalContext, opts);
}

/** Partial sums as the fused loop leaves them: from -0, finite, with each group's value count. */
function partials(n: number): { sums: Float64Array; counts: Float64Array } {
  const sums = new Float64Array(n).fill(-0);
  const counts = new Float64Array(n);
  for (let g = 0; g < n; g++) {
    const m = g % 7;
    if (m === 0) continue; // no values: NULL
    counts[g] = m;
    sums[g] = m === 1 ? -0 : m === 2 ? 0 : m === 3 ? -1e308 : (g * 1.37) / 3 - 40;
  }
  return { sums, counts };
}

describe('finishPartial', () => {
  for (const name of ['SUM', 'AVG'] as const) {
    it(`${name}: equals mergePartial + finish`, () => {
      const n = 10_000;
      const { sums, counts } = partials(n);
      const usual = acc(name);
      usual.mergePartial!(sums, counts, n);
      const want = usual.finish(n);
      const got = acc(name).finishPartial!(sums, counts, n);
      expect(got).not.toBeNull();
      expect(got!.length).toBe(n);
      expect(got!.nulls).toEqual(want.nulls);
      // Object.is per value: +0 and -0 told apart.
      const same = Array.from(got!.data as Float64Array).every((x, g) => Object.is(x, (want.data as Float64Array)[g]));
      expect(same).toBe(true);
    });
  }

  it('declines once values were folded in, or for a sum that is not finite', () => {
    const { sums, counts } = partials(100);
    const a = acc('SUM');
    a.resize(100);
    a.update([{ type: T.FLOAT64, length: 1, data: new Float64Array([1]), nulls: null }], new Int32Array([5]), 1);
    expect(a.finishPartial!(sums, counts, 100)).toBeNull();
    const inf = sums.slice();
    inf[10] = Infinity;
    expect(acc('SUM').finishPartial!(inf, counts, 100)).toBeNull();
  });
});
