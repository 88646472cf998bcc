// Statistical aggregates: VARIANCE / STDDEV (sample and population), COVAR_*,
// CORR, over collected values.
import { Decimal, type Value } from '../types/values.js';
import { asig, defineAggregate } from './signature.js';
import { collect, toNum } from './aggregate-collect.js';

// ---------------------------------------------------------------- statistics

/** Scale factor of the last variance() call: the true variance is result * lastScale^2. */
let lastScale = 1;
function variance(xs: number[], sample: boolean): number | null {
  const n = xs.length;
  if (n === 0 || (sample && n < 2)) return null;
  // Scale by the largest magnitude so squares of values near 1e308 do not overflow.
  let scale = 0;
  for (const x of xs) if (Number.isFinite(x) && Math.abs(x) > scale) scale = Math.abs(x);
  if (scale > 1e150) {
    const v = variance(xs.map((x) => x / scale), sample);
    lastScale = scale;
    return v;
  }
  lastScale = 1;
  let mean = 0;
  for (const x of xs) mean += x;
  mean /= n;
  let m2 = 0;
  for (const x of xs) m2 += (x - mean) * (x - mean);
  if (!Number.isFinite(mean)) return NaN;
  return m2 / (sample ? n - 1 : n);
}
function decimalVariance(xs: Decimal[], sample: boolean): number | null {
  const n = xs.length;
  if (n === 0 || (sample && n < 2)) return null;
  let sum = new Decimal(0);
  for (const x of xs) sum = sum.plus(x);
  const mean = sum.div(n);
  let m2 = new Decimal(0);
  for (const x of xs) m2 = m2.plus(x.minus(mean).pow(2));
  return m2.div(sample ? n - 1 : n).toNumber();
}
/** `xs` divided by its largest finite magnitude when that is extreme (products would overflow or underflow). */
function unitScaled(xs: number[]): number[] {
  let m = 0;
  for (const x of xs) if (Number.isFinite(x) && Math.abs(x) > m) m = Math.abs(x);
  return m > 1e150 || (m > 0 && m < 1e-150) ? xs.map((x) => x / m) : xs;
}
function covariance(pairs: [number, number][], sample: boolean): number | null {
  const n = pairs.length;
  if (n === 0 || (sample && n < 2)) return null;
  let mx = 0, my = 0;
  for (const [x, y] of pairs) {
    mx += x;
    my += y;
  }
  mx /= n;
  my /= n;
  let c = 0;
  for (const [x, y] of pairs) c += (x - mx) * (y - my);
  return c / (sample ? n - 1 : n);
}

export function registerStats(): void {
  // In the reference's order (its "Supported signatures" list); an INT64 argument still resolves to FLOAT64 (the cheaper coercion).
  const numericIn = ['NUMERIC', 'BIGNUMERIC', 'FLOAT64'];
  const varFn = (sample: boolean, sqrt: boolean) => (rows: Value[][]): Value => {
    const vals = rows.map((r) => r[0]!).filter((x) => x !== null);
    let v: number | null;
    if (vals.length > 0 && vals[0] instanceof Decimal) v = decimalVariance(vals as Decimal[], sample);
    else {
      v = variance(vals.map(toNum), sample);
      if (v !== null && lastScale !== 1) return sqrt ? Math.sqrt(v) * lastScale : v * lastScale * lastScale;
    }
    if (v === null) return null;
    return sqrt ? Math.sqrt(v) : v;
  };
  const statSigs = (f: (rows: Value[][]) => Value) => numericIn.map((t) => asig([t], 'FLOAT64', collect((rows) => f(rows))));
  defineAggregate('VAR_SAMP', statSigs(varFn(true, false)), { aliases: ['VARIANCE'] });
  defineAggregate('VAR_POP', statSigs(varFn(false, false)));
  defineAggregate('STDDEV_SAMP', statSigs(varFn(true, true)), { aliases: ['STDDEV'] });
  defineAggregate('STDDEV_POP', statSigs(varFn(false, true)));
  const pairs = (rows: Value[][]): [number, number][] =>
    rows.filter((r) => r[0] !== null && r[1] !== null).map((r) => [toNum(r[0]!), toNum(r[1]!)] as [number, number]);
  const pairSigs = (f: (rows: Value[][]) => Value) => numericIn.map((t) => asig([t, t], 'FLOAT64', collect((rows) => f(rows))));
  defineAggregate('COVAR_SAMP', pairSigs((rows) => covariance(pairs(rows), true)));
  defineAggregate('COVAR_POP', pairSigs((rows) => covariance(pairs(rows), false)));
  defineAggregate(
    'CORR',
    pairSigs((rows) => {
      const p = pairs(rows);
      if (p.length < 2) return null;
      // A constant input has zero variance: the correlation is undefined (NaN).
      if (p.every((x) => x[0] === p[0]![0]) || p.every((x) => x[1] === p[0]![1])) return NaN;
      // The correlation does not change with the scale of either input: dividing each by its largest magnitude
      // keeps the sums of products finite and normal at extreme slopes (x against -1e300 * x is -1, not -Infinity).
      const xs = unitScaled(p.map((x) => x[0]));
      const ys = unitScaled(p.map((x) => x[1]));
      const c = covariance(xs.map((x, i) => [x, ys[i]!]), false)!;
      const vx = variance(xs, false)!;
      const vy = variance(ys, false)!;
      if (vx === 0 || vy === 0) return NaN;
      return Math.max(-1, Math.min(1, c / Math.sqrt(vx * vy)));
    }),
  );
}
