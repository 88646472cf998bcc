// DATE / DATETIME / TIMESTAMP ± INTERVAL and INTERVAL arithmetic (+, -,
// * INT64, / INT64, unary -) over typed arrays and interval parts, without
// an Interval or a BigInt per row. Each row runs in doubles while every
// intermediate is an exact integer below 2^53 and every part is in range;
// any other row (micros past 2^53, a month step leaving years 1..9999,
// a part out of range, a zero divisor, BigInt INT64s) is computed by the
// value functions of interval.ts through a scratch interval, so results and
// errors are theirs by construction.
import { T } from '../types/types.js';
import type { Interval, Value } from '../types/values.js';
import { intervalVector, type IntervalView, type Vector } from '../types/vector.js';
import { addMonthsToDays, datetimeAddInterval, intervalAdd, intervalDiv, intervalMul, intervalNeg, MAX_DAYS, MAX_MONTHS, timestampAddInterval } from './interval.js';
import type { ScalarKernel } from './registry.js';
import { asQueryError, I64Out, mergeNulls } from './vec.js';
import { exactAt, halvesOf, setExact } from './int64-halves.js';

const DAY_US = 86_400_000_000;
const US_DAY = 86_400_000_000n;
const TWO53 = 9007199254740992;

/** An INTERVAL vector's parts: a stored column's, or read from its Interval values (a literal, a computed value). */
function partsOf(v: Vector, n: number): IntervalView {
  if (v.interval) return v.interval;
  const values = v.data as Value[];
  const months = new Int32Array(n);
  const days = new Int32Array(n);
  const micros = new BigInt64Array(n);
  for (let i = 0; i < n; i++) {
    const x = values[i] as Interval | null | undefined;
    if (x == null) continue;
    months[i] = x.months;
    days[i] = x.days;
    micros[i] = x.micros;
  }
  return { months, days, micros };
}

interface Scratch {
  months: number;
  days: number;
  micros: bigint;
}
const scratchOf = (p: IntervalView, i: number, s: Scratch): Interval => {
  s.months = p.months[i]!;
  s.days = p.days[i]!;
  s.micros = p.micros[i]!;
  return s as Interval;
};

type Temporal = 'TIMESTAMP' | 'DATETIME' | 'DATE';

/**
 * TIMESTAMP / DATETIME / DATE ± INTERVAL (`sign` -1 for minus): months move
 * the civil date clamping the day to the month's end, then days, then micros
 * (interval.ts datetimeAddInterval).
 */
export function temporalIntervalKernel(kind: Temporal, sign: number, temporalFirst: boolean): ScalarKernel {
  const type = kind === 'TIMESTAMP' ? T.TIMESTAMP : T.DATETIME;
  return (args, n) => {
    const tv = args[temporalFirst ? 0 : 1]!;
    const p = partsOf(args[temporalFirst ? 1 : 0]!, n);
    const h = halvesOf(p.micros);
    const nulls = mergeNulls(args, n);
    const td = tv.data as Float64Array | BigInt64Array | Int32Array;
    const out = new I64Out(n);
    const s: Scratch = { months: 0, days: 0, micros: 0n };
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      let d: number;
      let tod = 0;
      if (td instanceof Int32Array) d = td[i]!;
      else if (td instanceof Float64Array) {
        const t = td[i]!;
        // fmod is exact, and so is the subtraction of the part of the day.
        tod = t % DAY_US;
        d = (t - tod) / DAY_US;
        if (tod < 0) {
          tod += DAY_US;
          d -= 1;
        }
      } else d = NaN;
      const m = p.months[i]!;
      if (m !== 0 && d === d) d = addMonthsToDays(d, sign * m);
      // d * DAY_US is exact for any day count of a valid date (DAY_US is 2^10 * 84375000).
      const base = (d + sign * p.days[i]!) * DAY_US + tod;
      const r = base + sign * exactAt(h, i);
      if (r < TWO53 && r > -TWO53 && base < TWO53 && base > -TWO53) out.setNum(i, r === 0 ? 0 : r);
      else {
        const iv = scratchOf(p, i, s);
        try {
          const t = td instanceof Int32Array ? BigInt(td[i]!) * US_DAY : td instanceof Float64Array ? BigInt(td[i]!) : td[i]!;
          out.setBig(i, kind === 'TIMESTAMP' ? timestampAddInterval(t, iv, sign) : datetimeAddInterval(t, iv, sign));
        } catch (e) {
          throw asQueryError(e);
        }
      }
    }
    return out.vector(type, nulls);
  };
}

/** Parts out, written by the fast loop or from a value function's Interval. */
class PartsOut {
  readonly months: Int32Array;
  readonly days: Int32Array;
  readonly micros: BigInt64Array;
  readonly h: Int32Array;
  constructor(n: number) {
    this.months = new Int32Array(n);
    this.days = new Int32Array(n);
    this.micros = new BigInt64Array(n);
    this.h = halvesOf(this.micros);
  }
  set(i: number, r: Interval): void {
    this.months[i] = r.months;
    this.days[i] = r.days;
    this.micros[i] = r.micros;
  }
  vector(n: number, nulls: Uint8Array | null): Vector {
    return intervalVector(T.INTERVAL, n, nulls, { months: this.months, days: this.days, micros: this.micros });
  }
}

/** True when months and days are in range and the micros an integer double below 2^53 (within MAX_MICROS). */
const fits = (m: number, d: number, us: number): boolean => m <= MAX_MONTHS && m >= -MAX_MONTHS && d <= MAX_DAYS && d >= -MAX_DAYS && us < TWO53 && us > -TWO53;

/** INTERVAL + INTERVAL (`sign` 1) and INTERVAL - INTERVAL (-1), part by part. */
export function intervalSumKernel(sign: number): ScalarKernel {
  return (args, n) => {
    const a = partsOf(args[0]!, n);
    const b = partsOf(args[1]!, n);
    const ha = halvesOf(a.micros);
    const hb = halvesOf(b.micros);
    const nulls = mergeNulls(args, n);
    const out = new PartsOut(n);
    const s1: Scratch = { months: 0, days: 0, micros: 0n };
    const s2: Scratch = { months: 0, days: 0, micros: 0n };
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const m = a.months[i]! + sign * b.months[i]!;
      const d = a.days[i]! + sign * b.days[i]!;
      const us = exactAt(ha, i) + sign * exactAt(hb, i);
      if (fits(m, d, us)) {
        out.months[i] = m;
        out.days[i] = d;
        setExact(out.h, i, us);
      } else {
        const x = scratchOf(a, i, s1);
        const y = scratchOf(b, i, s2);
        try {
          out.set(i, intervalAdd(x, sign === 1 ? y : intervalNeg(y)));
        } catch (e) {
          throw asQueryError(e);
        }
      }
    }
    return out.vector(n, nulls);
  };
}

/** INTERVAL * INT64, INT64 * INTERVAL (`intervalFirst` false) and INTERVAL / INT64. */
export function intervalScaleKernel(op: 'mul' | 'div', intervalFirst = true): ScalarKernel {
  return (args, n) => {
    const a = partsOf(args[intervalFirst ? 0 : 1]!, n);
    const kd = args[intervalFirst ? 1 : 0]!.data as Float64Array | BigInt64Array;
    const h = halvesOf(a.micros);
    const nulls = mergeNulls(args, n);
    const out = new PartsOut(n);
    const s: Scratch = { months: 0, days: 0, micros: 0n };
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      // A BigInt INT64 (past 2^53) or a zero divisor: the value function.
      const k = kd instanceof Float64Array ? kd[i]! : NaN;
      let m: number;
      let d: number;
      let us: number;
      if (op === 'mul') {
        m = a.months[i]! * k;
        d = a.days[i]! * k;
        us = exactAt(h, i) * k;
      } else {
        if (k === 0) m = d = us = NaN;
        else {
          // interval.ts intervalDiv: fractional months spill into days, fractional days into micros.
          m = Math.trunc(a.months[i]! / k);
          const days = a.days[i]! + (a.months[i]! - m * k) * 30;
          d = Math.trunc(days / k);
          const x = exactAt(h, i) + (days - d * k) * DAY_US;
          // Truncated toward zero; exact: the remainder is, and so is the division of a multiple.
          us = x < TWO53 && x > -TWO53 ? (x - (x % k)) / k : NaN;
        }
      }
      if (fits(m, d, us)) {
        out.months[i] = m;
        out.days[i] = d;
        setExact(out.h, i, us === 0 ? 0 : us);
      } else {
        const x = scratchOf(a, i, s);
        const kb = kd instanceof Float64Array ? BigInt(kd[i]!) : kd[i]!;
        try {
          out.set(i, op === 'mul' ? intervalMul(x, kb) : intervalDiv(x, kb));
        } catch (e) {
          throw asQueryError(e);
        }
      }
    }
    return out.vector(n, nulls);
  };
}

/** -INTERVAL: every part negated (always in range). */
export const intervalNegKernel: ScalarKernel = (args, n) => {
  const a = partsOf(args[0]!, n);
  const h = halvesOf(a.micros);
  const nulls = args[0]!.nulls;
  const out = new PartsOut(n);
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    out.months[i] = -a.months[i]!;
    out.days[i] = -a.days[i]!;
    const us = exactAt(h, i);
    if (us === us) setExact(out.h, i, us === 0 ? 0 : -us);
    else out.micros[i] = -a.micros[i]!;
  }
  return out.vector(n, nulls);
};
