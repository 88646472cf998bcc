// DATE / DATETIME / TIMESTAMP ± INTERVAL and INTERVAL +, -, * INT64,
// / INT64, unary - on typed arrays and parts (interval-arith-kernels.ts)
// against the value functions of interval.ts row by row: random values of
// every magnitude (micros past 2^53, parts at their limits, month-end days,
// instants near 0001-01-01 and 9999-12-31, INT64s past 2^53), inputs as a
// stored column's parts and as Interval values, NULL rows. A row whose value
// function fails is run on its own: the kernel fails with the same message.
import { describe, expect, it } from 'vitest';
import { T, type SqlType } from '../types/types.js';
import { Interval, type Value } from '../types/values.js';
import { getValue, intervalVector, layoutBoxing, vectorFromValues, type Vector } from '../types/vector.js';
import { datetimeAddInterval, intervalAdd, intervalDiv, intervalMul, intervalNeg, MAX_DAYS, MAX_MICROS, MAX_MONTHS, timestampAddInterval } from './interval.js';
import { intervalNegKernel, intervalScaleKernel, intervalSumKernel, temporalIntervalKernel } from './interval-arith-kernels.js';
import { MAX_TS, MIN_TS } from './civil.js';
import type { ScalarKernel } from './registry.js';

let seed = 23;
const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
const bigIn = (lo: bigint, hi: bigint): bigint => lo + (BigInt(Math.floor(rand() * 2 ** 52)) * (hi - lo)) / 2n ** 52n;
const US_DAY = 86_400_000_000n;

function randomInterval(): Interval {
  const pick = rand();
  if (pick < 0.4) return new Interval(int(-30, 30), int(-40, 40), BigInt(int(-1e6, 1e6)) * BigInt(int(1, 4e6)));
  if (pick < 0.55) return new Interval(int(-MAX_MONTHS, MAX_MONTHS), int(-MAX_DAYS, MAX_DAYS), bigIn(-MAX_MICROS, MAX_MICROS));
  if (pick < 0.65) return new Interval(0, 0, (rand() < 0.5 ? 1n : -1n) * bigIn(2n ** 53n - 1000n, 2n ** 53n + 1000n));
  if (pick < 0.75) return new Interval([MAX_MONTHS, -MAX_MONTHS, 0][int(0, 2)]!, [MAX_DAYS, -MAX_DAYS, 0][int(0, 2)]!, [MAX_MICROS, -MAX_MICROS, 0n][int(0, 2)]!);
  if (pick < 0.85) return new Interval(int(-12, 12) * 12, 0, 0n);
  return new Interval(int(-2000, 2000), int(-100000, 100000), BigInt(int(-1e9, 1e9)) * 1000n);
}

function randomInstant(): bigint {
  const pick = rand();
  if (pick < 0.4) return bigIn(-(2n ** 53n) + 1n, 2n ** 53n - 1n);
  if (pick < 0.6) return bigIn(MIN_TS, MAX_TS);
  if (pick < 0.7) return MIN_TS + BigInt(int(0, 400)) * US_DAY + BigInt(int(0, 1e6));
  if (pick < 0.8) return MAX_TS - BigInt(int(0, 400)) * US_DAY - BigInt(int(0, 1e6));
  // A month's last days (Jan 31 + 1 month clamps).
  const y = int(1, 9999);
  const m = int(1, 12);
  const days = BigInt(Math.floor(Date.UTC(y, m, 1) / 86400000) - int(1, 3));
  return days * US_DAY + BigInt(int(0, 86399)) * 1_000_000n;
}

function randomInt64(): bigint {
  const pick = rand();
  if (pick < 0.5) return BigInt(int(-5, 5));
  if (pick < 0.75) return BigInt(int(-100000, 100000));
  if (pick < 0.9) return BigInt(int(-1e9, 1e9)) * BigInt(int(1, 1e6));
  return (rand() < 0.5 ? 1n : -1n) * bigIn(2n ** 53n - 10n, 2n ** 62n);
}

/** An INTERVAL vector as a stored column's parts or as Interval values. */
function intervals(values: (Interval | null)[], asParts: boolean): Vector {
  if (!asParts) return vectorFromValues(T.INTERVAL, values);
  const n = values.length;
  const nulls = values.some((x) => x === null) ? Uint8Array.from(values, (x) => (x === null ? 1 : 0)) : null;
  return intervalVector(T.INTERVAL, n, nulls, {
    months: Int32Array.from(values, (x) => x?.months ?? 0),
    days: Int32Array.from(values, (x) => x?.days ?? 0),
    micros: BigInt64Array.from(values, (x) => x?.micros ?? 0n),
  });
}

type Outcome = { value: Value } | { error: string };
const outcome = (f: () => Value): Outcome => {
  try {
    return { value: f() };
  } catch (e) {
    return { error: (e as Error).message };
  }
};
const same = (got: Value, want: Value): boolean =>
  want instanceof Interval ? got instanceof Interval && got.months === want.months && got.days === want.days && got.micros === want.micros : got === want;

/**
 * Runs `kernel` over rows whose value functions succeed (one batch, some rows
 * NULL) and over each failing row alone; checks every answer. Returns the
 * counts of values and errors compared.
 */
function check(kernel: ScalarKernel, columns: (n: number, rows: number[], asParts: boolean) => Vector[], want: Outcome[], asParts: boolean): [number, number] {
  const ok = want.flatMap((w, i) => ('value' in w ? [i] : []));
  const args = columns(ok.length, ok, asParts);
  const before = layoutBoxing.interval;
  const got = kernel(args, ok.length, undefined as never);
  if (asParts) expect(layoutBoxing.interval - before).toBe(0);
  for (let k = 0; k < ok.length; k++) {
    const w = (want[ok[k]!] as { value: Value }).value;
    const g = getValue(got, k);
    if (!same(g, w)) expect(g, `row ${ok[k]}`).toEqual(w);
  }
  const bad = want.flatMap((w, i) => ('error' in w ? [i] : [])).slice(0, 300);
  for (const i of bad) {
    const single = columns(1, [i], asParts);
    expect(() => kernel(single, 1, undefined as never), `row ${i}`).toThrow((want[i] as { error: string }).error);
  }
  return [ok.length, bad.length];
}

const int64s = (values: bigint[], rows: number[]): Vector => vectorFromValues(T.INT64, rows.map((i) => values[i]!));
const N = 20_000;

describe('date/time ± INTERVAL on typed arrays and parts', () => {
  const ivs = Array.from({ length: N }, () => (rand() < 0.03 ? null : randomInterval()));
  for (const kind of ['TIMESTAMP', 'DATETIME', 'DATE'] as const) {
    const type: SqlType = kind === 'TIMESTAMP' ? T.TIMESTAMP : kind === 'DATETIME' ? T.DATETIME : T.DATE;
    const ts = Array.from({ length: N }, () => (kind === 'DATE' ? BigInt(int(-719162, 2932896)) : randomInstant()));
    for (const sign of [1, -1]) {
      for (const first of sign === 1 ? [true, false] : [true]) {
        it(`${first ? `${kind} ${sign === 1 ? '+' : '-'} INTERVAL` : `INTERVAL + ${kind}`}: the value function's result or error for ${N} random rows`, () => {
          const want = ts.map((t, i): Outcome => {
            const iv = ivs[i];
            if (iv === null) return { value: null };
            if (kind === 'DATE') return outcome(() => datetimeAddInterval(t * US_DAY, iv!, sign));
            return outcome(() => (kind === 'TIMESTAMP' ? timestampAddInterval(t, iv!, sign) : datetimeAddInterval(t, iv!, sign)));
          });
          const kernel = temporalIntervalKernel(kind, sign, first);
          let values = 0;
          let errors = 0;
          for (const asParts of [true, false]) {
            const [v, e] = check(
              kernel,
              (_n, rows, parts) => {
                const t = vectorFromValues(type, rows.map((i) => (kind === 'DATE' ? Number(ts[i]) : ts[i]!)));
                const iv = intervals(rows.map((i) => ivs[i]!), parts);
                return first ? [t, iv] : [iv, t];
              },
              want,
              asParts,
            );
            values += v;
            errors += e;
          }
          expect(values).toBeGreaterThan(N);
          expect(errors).toBeGreaterThan(20);
        });
      }
    }
  }
});

describe('INTERVAL arithmetic on parts', () => {
  const a = Array.from({ length: N }, () => (rand() < 0.03 ? null : randomInterval()));
  const b = Array.from({ length: N }, () => (rand() < 0.03 ? null : randomInterval()));
  const k = Array.from({ length: N }, randomInt64);
  const kSmall = k.map((x, i) => (i % 3 === 0 ? x : BigInt(int(-3, 3))));
  const cases: [string, ScalarKernel, (x: Interval, i: number) => Value, (rows: number[], parts: boolean) => Vector[]][] = [
    ['INTERVAL + INTERVAL', intervalSumKernel(1), (x, i) => (b[i] === null ? null : intervalAdd(x, b[i]!)), (rows, p) => [intervals(rows.map((i) => a[i]!), p), intervals(rows.map((i) => b[i]!), p)]],
    ['INTERVAL - INTERVAL', intervalSumKernel(-1), (x, i) => (b[i] === null ? null : intervalAdd(x, intervalNeg(b[i]!))), (rows, p) => [intervals(rows.map((i) => a[i]!), p), intervals(rows.map((i) => b[i]!), p)]],
    ['INTERVAL * INT64', intervalScaleKernel('mul'), (x, i) => intervalMul(x, kSmall[i]!), (rows, p) => [intervals(rows.map((i) => a[i]!), p), int64s(kSmall, rows)]],
    ['INT64 * INTERVAL', intervalScaleKernel('mul', false), (x, i) => intervalMul(x, kSmall[i]!), (rows, p) => [int64s(kSmall, rows), intervals(rows.map((i) => a[i]!), p)]],
    ['INTERVAL / INT64', intervalScaleKernel('div'), (x, i) => intervalDiv(x, k[i]! % 7n === 0n ? 0n : k[i]!), (rows, p) => [intervals(rows.map((i) => a[i]!), p), int64s(k.map((x) => (x % 7n === 0n ? 0n : x)), rows)]],
    ['-INTERVAL', intervalNegKernel, (x) => intervalNeg(x), (rows, p) => [intervals(rows.map((i) => a[i]!), p)]],
  ];
  for (const [name, kernel, f, columns] of cases) {
    it(`${name}: the value function's result or error for ${N} random rows`, () => {
      const want = a.map((x, i): Outcome => (x === null ? { value: null } : outcome(() => f(x, i))));
      let values = 0;
      let errors = 0;
      for (const asParts of [true, false]) {
        const [v, e] = check(kernel, (_n, rows, parts) => columns(rows, parts), want, asParts);
        values += v;
        errors += e;
      }
      expect(values).toBeGreaterThan(N);
      if (name !== '-INTERVAL') expect(errors).toBeGreaterThan(20);
    });
  }
});
