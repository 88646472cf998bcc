// PERCENTILE_CONT / PERCENTILE_DISC over whole partitions: the exact position, the picked values, interpolation.
import type { WindowCall } from '../../../analyzer/resolved.js';
import { QueryError } from '../../../types/errors.js';
import { Decimal, type Value } from '../../../types/values.js';
import { getValue, vectorFromValues as vfv, type Batch, type Vector } from '../../../types/vector.js';
import { type ExecContext } from '../../context.js';
import { evaluate } from '../../expr.js';
import { keyComparator } from '../../sort-keys.js';
import { type Layout, type Geometry, constantArg, toNum } from './geometry.js';

/**
 * PERCENTILE_CONT / PERCENTILE_DISC over each whole partition, as the
 * reference evaluator does: values ascend with NaN first; under RESPECT NULLS
 * the NULLs count as the smallest values. The position max_index × percentile
 * is exact (a double percentile is split into mantissa and exponent), its
 * fraction is the right weight. CONT interpolates left·(1 − w) + right·w
 * (exactly for NUMERIC/BIGNUMERIC, rounded to the type's scale).
 */
export async function percentile(call: WindowCall, cont: boolean, g: Geometry, input: Batch, layout: Layout, ctx: ExecContext): Promise<Vector> {
  const n = g.n;
  const v = await evaluate(call.args[0]!, input, layout, ctx);
  const pct = percentileArg(call, await constantArg(call.args[1], input, layout, ctx));
  const out: Value[] = new Array(n);
  const cmp = keyComparator(v, { descending: false, nullsFirst: true });
  // Rows of one partition are contiguous in sorted positions; sort each partition's values once.
  for (let ps = 0; ps < n; ps = g.partEnd[ps]!) {
    const pe = g.partEnd[ps]!;
    const rows: number[] = [];
    let nulls = 0;
    for (let p = ps; p < pe; p++) {
      const r = g.idx[p]!;
      if (v.nulls !== null && v.nulls[r] === 1) nulls++;
      else rows.push(r);
    }
    rows.sort(cmp);
    const pick = percentilePick(call, cont, pct, rows.length, nulls);
    const res = pick === null ? null : percentileValue(call, pick, (i) => getValue(v, rows[i]!));
    for (let p = ps; p < pe; p++) out[g.idx[p]!] = res;
  }
  return vfv(call.column.type, out);
}

/** The percentile argument (a constant), checked. */
export function percentileArg(call: WindowCall, pv: Value): Decimal | number {
  if (pv === null) throw new QueryError(`${call.name} percentile cannot be NULL`);
  const pctNum = pv instanceof Decimal ? pv.toNumber() : toNum(pv as number | bigint);
  if (!(pctNum >= 0 && pctNum <= 1)) throw new QueryError(`Percentile argument must be in [0, 1]; got ${pv instanceof Decimal ? pv.toString() : pctNum}`);
  return pv instanceof Decimal ? pv : pctNum;
}

/**
 * Which of a partition's `m` non-NULL values (ascending, NaN first) make its
 * percentile, `nulls` NULLs beside them: `left` (and `right` with weight `w`,
 * CONT interpolating); null: the result is NULL.
 */
export interface PercentilePick {
  readonly left: number;
  readonly right: number | null;
  readonly w: Weight | null;
}

export function percentilePick(call: WindowCall, cont: boolean, pct: Decimal | number, m: number, nullCount: number): PercentilePick | null {
  // Under RESPECT NULLS the NULLs count as the smallest values.
  const nulls = call.ignoreNulls === false ? nullCount : 0;
  if (m === 0) return null;
  if (cont) {
    const { index, right } = percentileIndex(pct, m - 1 + nulls);
    if (index >= nulls) {
      const i = index - nulls;
      return isZero(right) ? { left: i, right: null, w: null } : { left: i, right: i + 1, w: right };
    }
    // Between the last NULL and the smallest value: the value itself.
    if (index === nulls - 1 && !isZero(right)) return { left: 0, right: null, w: null };
    return null;
  }
  const w = percentileIndex(pct, m + nulls);
  const index = w.index > 0 && isZero(w.right) ? w.index - 1 : w.index;
  return index >= nulls ? { left: index - nulls, right: null, w: null } : null;
}

/** The percentile from the picked values (`at(i)`: the i-th smallest non-NULL value). */
export function percentileValue(call: WindowCall, pick: PercentilePick, at: (i: number) => Value): Value {
  const rt = call.column.type.kind;
  const scale = rt === 'NUMERIC' ? 9 : rt === 'BIGNUMERIC' ? 38 : -1;
  const left = at(pick.left);
  return pick.right === null ? left : interpolate(left, at(pick.right), pick.w!, scale);
}

/** A weight: an exact fraction num / 2^bits (double percentiles) or a Decimal. */
type Weight = { readonly num: bigint; readonly bits: bigint } | Decimal;

const isZero = (w: Weight): boolean => (w instanceof Decimal ? w.isZero() : w.num === 0n);

/** floor(maxIndex × pct) and the fraction above it, both exact. */
function percentileIndex(pct: Decimal | number, maxIndex: number): { index: number; right: Weight } {
  if (pct instanceof Decimal) {
    const x = pct.times(maxIndex);
    const index = x.floor();
    return { index: index.toNumber(), right: x.minus(index) };
  }
  // pct = mant / 2^bits exactly (pct in [0, 1]).
  let mant = pct;
  let bits = 0n;
  while (mant !== Math.floor(mant)) {
    mant *= 2;
    bits++;
  }
  const prod = BigInt(maxIndex) * BigInt(mant);
  const index = prod >> bits;
  return { index: Number(index), right: { num: prod - (index << bits), bits } };
}

/** num / 2^bits as a double (bits past the double range shift out first). */
function ratio(num: bigint, bits: bigint): number {
  if (bits > 1000n) {
    num >>= bits - 1000n;
    bits = 1000n;
  }
  return Number(num) / 2 ** Number(bits);
}

function interpolate(left: Value, right: Value, w: Weight, scale: number): Value {
  if (left instanceof Decimal && right instanceof Decimal) {
    const rw = w instanceof Decimal ? w : new Decimal(w.num.toString()).div(new Decimal(2).pow(Number(w.bits)));
    return left.times(new Decimal(1).minus(rw)).plus(right.times(rw)).toDecimalPlaces(scale, Decimal.ROUND_HALF_UP);
  }
  const x = toNum(left as number);
  const y = toNum(right as number);
  if (w instanceof Decimal) return x * new Decimal(1).minus(w).toNumber() + y * w.toNumber();
  // The reference sums left·(1 − w) + right·w in long double, so the products
  // do not round to double before the sum (31 and 32 at 0.3 give 31.3, not
  // 31.300000000000004): the exact sum, rounded once, matches it.
  if (Number.isFinite(x) && Number.isFinite(y)) return exactWeightedSum(x, y, w.num, w.bits);
  // Both weights from the exact fraction, so neither loses relative precision near 0.
  return x * ratio((1n << w.bits) - w.num, w.bits) + y * ratio(w.num, w.bits);
}

/** A finite double as m·2^e exactly. */
function exactParts(d: number): { m: bigint; e: number } {
  if (d === 0) return { m: 0n, e: 0 };
  let e = 0;
  while (!Number.isInteger(d)) {
    d *= 2;
    e--;
  }
  return { m: BigInt(d), e };
}

/** x·(2^bits − num)/2^bits + y·num/2^bits, rounded once to the nearest double. */
function exactWeightedSum(x: number, y: number, num: bigint, bits: bigint): number {
  const a = exactParts(x);
  const b = exactParts(y);
  const e = Math.min(a.e, b.e);
  let m = (a.m << BigInt(a.e - e)) * ((1n << bits) - num) + (b.m << BigInt(b.e - e)) * num;
  let exp = e - Number(bits);
  if (m === 0n) return 0;
  const neg = m < 0n;
  if (neg) m = -m;
  // Keep 55 significant bits plus a sticky bit, so Number() rounds once, correctly.
  const len = m.toString(2).length;
  if (len > 55) {
    const k = BigInt(len - 55);
    const sticky = (m & ((1n << k) - 1n)) !== 0n ? 1n : 0n;
    m = (m >> k) | sticky;
    exp += len - 55;
  }
  const r = Number(m) * 2 ** Math.max(exp, -1000) * 2 ** (exp - Math.max(exp, -1000));
  return neg ? -r : r;
}
