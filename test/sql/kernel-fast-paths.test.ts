// Typed-array fast paths of scalar kernels (src/functions) must give exactly
// what the general path they skip gives, value by value over edge values:
// Object.is, so +0 and -0 are told apart, and NaN equals NaN.
import { describe, expect, it } from 'vitest';
import '../../src/functions/index.js';
import { roundDigitsFast, roundDouble, truncDouble } from '../../src/functions/math.js';
import { valueKey } from '../../src/functions/compare.js';
import { ArrayAggAcc, StringAggAcc, arrayAggCollect, stringAggCollect } from '../../src/functions/aggregate-collect.js';
import { arrayOf } from '../../src/types/types.js';
import { diffGeneral, fastDiff, fastFormatDate, fastTrunc, truncGeneral } from '../../src/functions/datetime.js';
import { rowKernel } from '../../src/functions/vec.js';
import { formatStrftime } from '../../src/functions/strftime.js';
import { lookupFunction, resolveAggregate, type AggregateFunctionDef, type EvalContext } from '../../src/functions/registry.js';
import { T, structOf, type SqlType } from '../../src/types/types.js';
import { Decimal, type Value } from '../../src/types/values.js';
import { getValue, vectorFromValues, type Vector } from '../../src/types/vector.js';

/** Doubles near every kind of boundary: ties in decimal, exact binary fractions, huge, tiny, signed zeros, non-finite. */
function edgeDoubles(): number[] {
  const xs = [0, -0, NaN, Infinity, -Infinity, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 52, 2 ** 53, 2 ** 52 - 0.5, 4503599627370495.5, 1e15 + 0.3, 1e21, 1e300];
  for (const t of ['0.5', '1.5', '2.5', '2.55', '2.675', '1.005', '0.125', '0.375', '1.0000000000000002', '0.285', '1.45', '8.345', '123.4565', '0.045', '5e-23', '4.5e-22', '5.5e-22', '0.1', '0.7', '999999.995', '12345678.125'])
    xs.push(Number(t));
  // near decimal ties at several digit counts, one ulp either side
  for (let d = 1; d <= 22; d++) {
    for (const m of [1, 5, 15, 25, 125, 12345, 99995]) {
      const t = (m + 0.5) / 10 ** d;
      xs.push(t, nextUp(t), nextDown(t));
    }
  }
  // a pseudo-random spread of magnitudes
  let seed = 12345;
  for (let i = 0; i < 2000; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const m = seed / 2147483648;
    const e = (i % 40) - 20;
    xs.push(m * 10 ** e, Math.round(m * 1e6) / 1e3, (Math.round(m * 2000) + 0.5) / 1000);
  }
  return [...xs, ...xs.map((x) => -x)];
}

function nextUp(x: number): number {
  const b = new Float64Array([x]);
  const u = new BigInt64Array(b.buffer);
  u[0] = u[0]! + (x >= 0 ? 1n : -1n);
  return b[0]!;
}
function nextDown(x: number): number {
  const b = new Float64Array([x]);
  const u = new BigInt64Array(b.buffer);
  u[0] = u[0]! + (x > 0 ? -1n : 1n);
  return b[0]!;
}

describe('ROUND / TRUNC (FLOAT64, digits) fast path', () => {
  const xs = edgeDoubles();
  for (const trunc of [false, true]) {
    it(`${trunc ? 'TRUNC' : 'ROUND'}: equals the decimal.js path for every edge value and digit count`, () => {
      const general = trunc ? truncDouble : roundDouble;
      const bad: string[] = [];
      for (const d of [-400, -3, -1, 0, 1, 2, 3, 5, 9, 15, 16, 17, 22, 23, 30, 400]) {
        for (const x of xs) {
          let want: number | string;
          let got: number | string;
          try {
            want = general(x, d);
          } catch (e) {
            want = String(e);
          }
          try {
            got = roundDigitsFast(x, d, trunc);
          } catch (e) {
            got = String(e);
          }
          if (!Object.is(got, want) && bad.length < 10) bad.push(`${x} ${d}: ${String(got)} vs ${String(want)}`);
        }
      }
      expect(bad).toEqual([]);
    });
  }
});

describe('APPROX_COUNT_DISTINCT on the group table', () => {
  // The general definition it replaced: the distinct valueKeys of each group's non-NULL values.
  const big = 2n ** 60n;
  const cases: [string, SqlType, Value[]][] = [
    ['INT64', T.INT64, [0n, 1n, -1n, 1n, null, 9007199254740992n, -9007199254740992n, big, -big, big, 5n, 0n]],
    ['FLOAT64', T.FLOAT64, [0, -0, NaN, NaN, Infinity, -Infinity, 1.5, 1.5, null, 2 ** 53, 2 ** 53 + 2, 1e-300, -0]],
    ['STRING', T.STRING, ['a', 'A', '', '', null, 'a', 'é', 'e\u0301', 'abc', 'abc']],
    ['BOOL', T.BOOL, [true, false, true, null, false]],
    ['DATE', T.DATE, [0, 1, -1, 0, null, 2932896, -719162]],
    ['TIMESTAMP', T.TIMESTAMP, [0n, 1n, 253402300799999999n, -62135596800000000n, 1n, null]],
    ['NUMERIC', T.NUMERIC, [new Decimal('1.0'), new Decimal('1'), new Decimal('-0'), new Decimal('0'), new Decimal('1e-9'), null, new Decimal('99999999999999999999999999999.999999999')]],
    ['BYTES', T.BYTES, [new Uint8Array([1]), new Uint8Array([1]), new Uint8Array([]), null, new Uint8Array([1, 0])]],
    ['STRUCT', structOf([{ name: 'a', type: T.INT64 }, { name: 'b', type: T.FLOAT64 }]), [[1n, 0], [1n, -0], [1n, NaN], [1n, NaN], [null, 1], [null, 1], null, [2n, null]]],
  ];
  const resolved = (t: SqlType) => {
    const r = resolveAggregate(lookupFunction('APPROX_COUNT_DISTINCT') as AggregateFunctionDef, [{ type: t }], { distinct: false, ignoreNulls: undefined, hasOrderBy: false });
    if (!r.ok) throw new Error('did not resolve');
    return r.resolved;
  };
  const opts = { distinct: false, ignoreNulls: undefined, hasOrderBy: false };
  for (const [name, type, base] of cases) {
    it(`${name}: per group, in batches, global and grouped`, () => {
      // rows: every edge value several times over, spread over 5 groups, in 3 batches
      const values: Value[] = [];
      for (let r = 0; r < 7; r++) values.push(...base.slice(r % base.length), ...base.slice(0, r % base.length));
      const groups = Int32Array.from(values, (_, i) => (i * 7 + (i >> 3)) % 5);
      const want = (g: number | null) => {
        const s = new Set<string>();
        values.forEach((v, i) => {
          if (v !== null && (g === null || groups[i] === g)) s.add(valueKey(v));
        });
        return s.size;
      };
      const batches: [number, number][] = [[0, 10], [10, 11], [11, values.length]];
      const vec = (lo: number, hi: number): Vector => vectorFromValues(type, values.slice(lo, hi));
      // grouped
      const acc = resolved(type).create({} as EvalContext, opts);
      acc.resize(5);
      for (const [lo, hi] of batches) acc.update([vec(lo, hi)], groups.slice(lo, hi), hi - lo);
      const out = acc.finish(5);
      expect(Array.from({ length: 5 }, (_, g) => Number(getValue(out, g)))).toEqual(Array.from({ length: 5 }, (_, g) => want(g)));
      // global: updateGroup, then update mixed in (rows of group 0 and others)
      const glob = resolved(type).create({} as EvalContext, opts);
      glob.resize(1);
      for (const [lo, hi] of batches) glob.updateGroup!([vec(lo, hi)], 0, hi - lo);
      expect(Number(getValue(glob.finish(1), 0))).toBe(want(null));
      glob.resize(5);
      glob.update([vec(0, values.length)], groups, values.length);
      const mixed = glob.finish(5);
      expect(Number(getValue(mixed, 0))).toBe(want(null));
      for (let g = 1; g < 5; g++) expect(Number(getValue(mixed, g))).toBe(want(g));
    });
  }
  it('INT64 beyond 2^53 in one batch and doubles in another count as one value where equal', () => {
    const acc = resolved(T.INT64).create({} as EvalContext, opts);
    acc.resize(1);
    acc.updateGroup!([vectorFromValues(T.INT64, [5n, big, 7n])], 0, 3);
    acc.updateGroup!([vectorFromValues(T.INT64, [5n, 6n, 7n])], 0, 3);
    expect(Number(getValue(acc.finish(1), 0))).toBe(4);
  });
});

describe('DATE_DIFF / DATETIME_DIFF / TIMESTAMP_DIFF fast paths', () => {
  const ctx = { nowMicros: 0n, timeZone: 'UTC', sessionUser: 'u', random: Math.random } as EvalContext;
  const parts = ['DAY', 'WEEK', 'WEEK(MONDAY)', 'WEEK(SATURDAY)', 'ISOWEEK', 'MONTH', 'QUARTER', 'YEAR', 'ISOYEAR', 'HOUR', 'MINUTE', 'SECOND', 'MILLISECOND', 'MICROSECOND'];
  // dates around year, ISO-year and leap boundaries, the range ends, and a spread
  const dates: number[] = [-719162, 2932896, 0, -1, 1, 59, 60, 365, 366, -366];
  for (let y = 1998; y <= 2006; y++) for (const [m, d] of [[1, 1], [1, 4], [12, 28], [12, 31], [2, 29], [3, 1]]) dates.push(Math.floor(Date.UTC(y, m! - 1, d!) / 864e5) + (m === 2 && d === 29 && y % 4 ? -1 : 0));
  for (let i = 0; i < 200; i++) dates.push(Math.round(Math.sin(i) * 3e6));
  const D = 86400000000;
  const micros: number[] = [0, -1, 1, 999999, -999999, 1000000, D - 1, D, -D, -D + 1, 253402300799999999, -62135596800000000, 2 ** 53 - 1, -(2 ** 53) + 1, 2 ** 52, 2 ** 52 - 1, -(2 ** 52), 2 ** 52 + 86400000001, -(2 ** 52) - 7];
  for (const d of dates) micros.push(d * D, d * D + 3599999999, d * D - 1, d * D + 86399999999);
  const run = (k: (args: Vector[], n: number, c: EvalContext) => Vector, type: SqlType, a: Value[], b: Value[], part: string): (string | null)[] | string => {
    try {
      const n = a.length;
      const out = k([vectorFromValues(type, a), vectorFromValues(type, b), vectorFromValues(T.STRING, new Array(n).fill(part))], n, ctx);
      return Array.from({ length: n }, (_, i) => { const v = getValue(out, i); return v === null ? null : String(v); });
    } catch (e) {
      return String(e);
    }
  };
  for (const kind of ['DATETIME', 'TIMESTAMP'] as const) {
    it(`${kind}_TRUNC and TIMESTAMP_TRUNC(${kind}): equal the BigInt row kernel for every part, zone and statement zone`, () => {
      const type = T[kind];
      const a: Value[] = [...micros.filter((x) => Math.abs(x) < 2 ** 53).map((x) => BigInt(x)), null];
      const truncParts = [...parts, 'DAYOFWEEK'];
      let fastCount = 0;
      for (const fn of ['DATETIME_TRUNC', 'TIMESTAMP_TRUNC']) {
        const general = truncGeneral(fn, kind);
        for (const part of truncParts) {
          for (const zone of kind === 'TIMESTAMP' ? [undefined, 'UTC', '+00:00', 'America/New_York', null] : [undefined]) {
            const fast = fastTrunc(fn, kind, part, zone, general);
            if (fast === undefined) continue;
            fastCount++;
            for (const tz of ['UTC', 'Asia/Kolkata']) {
              const c = { ...ctx, timeZone: tz };
              const call = (k: typeof general, xs: Value[]) => {
                try {
                  const n = xs.length;
                  const args = [vectorFromValues(type, xs), vectorFromValues(T.STRING, new Array(n).fill(part))];
                  if (zone !== undefined) args.push(vectorFromValues(T.STRING, new Array(n).fill(zone)));
                  const out = k(args, n, c);
                  return Array.from({ length: n }, (_, i) => String(getValue(out, i)));
                } catch (e) {
                  return String(e);
                }
              };
              expect(call(fast, a), `${fn} ${kind} ${part} ${zone} ${tz}`).toEqual(call(general, a));
              const a2 = [...a, 253402300799999999n, -62135596800000000n];
              expect(call(fast, a2), `${fn} ${kind} ${part} ${zone} ${tz} (BigInt64Array)`).toEqual(call(general, a2));
            }
          }
        }
      }
      expect(fastCount).toBe(kind === 'DATETIME' ? 28 : 84);
    });
  }
  for (const kind of ['DATE', 'DATETIME', 'TIMESTAMP'] as const) {
    it(`${kind}: equals the BigInt row kernel for every part`, () => {
      const general = diffGeneral(`${kind}_DIFF`)[kind];
      const type = T[kind];
      const base: Value[] = kind === 'DATE' ? dates : micros.filter((x) => Math.abs(x) < 2 ** 53).map((x) => BigInt(x));
      // every value against a few others, with NULLs on both sides
      const a: Value[] = [];
      const b: Value[] = [];
      base.forEach((x, i) => {
        for (const j of [0, 1, 7, 13]) {
          a.push(x);
          b.push(base[(i * 31 + j) % base.length]!);
        }
      });
      a.push(null, base[3]!, null);
      b.push(base[2]!, null, null);
      let fastCount = 0;
      for (const part of parts) {
        const fast = fastDiff(kind, part, general);
        if (fast === undefined) continue;
        fastCount++;
        if (kind !== 'DATE') expect(vectorFromValues(type, a).data).toBeInstanceOf(Float64Array);
        expect(run(fast, type, a, b, part), `${kind} ${part}`).toEqual(run(general, type, a, b, part));
        // the Float64Array batches above and, for micros, a BigInt64Array batch (values past 2^53)
        if (kind !== 'DATE') {
          const a2 = [...a, 253402300799999999n];
          const b2 = [...b, -62135596800000000n];
          expect(run(fast, type, a2, b2, part), `${kind} ${part} (BigInt64Array)`).toEqual(run(general, type, a2, b2, part));
        }
      }
      expect(fastCount).toBe(kind === 'DATE' ? 9 : kind === 'DATETIME' ? 14 : 6);
    });
  }
});

describe('FORMAT_DATE with a constant format', () => {
  const ctx = { nowMicros: 0n, timeZone: 'UTC', sessionUser: 'u', random: Math.random } as EvalContext;
  const general = rowKernel(T.STRING, (v) => formatStrftime(v[0] as string, v[1] as number, 0, null, 'DATE'));
  it('equals formatting every row, across batches and past the cache bound', () => {
    const days: Value[] = [];
    for (let i = 0; i < 70000; i++) days.push(-719162 + ((i * 7919) % 3652059));
    days.push(null, 0, 0, null, -1);
    for (const fmt of ['%Y-%m', '%F', '%A %d %B %Y', '%j %U %W %V %G %u %w', '%H:%M %Z %%', '%E4Y%C%y%Q', '%x|%D|%e|%b', '', 'plain']) {
      const fast = fastFormatDate(fmt, general)!;
      const call = (k: typeof general, xs: Value[]) => {
        const n = xs.length;
        const out = k([vectorFromValues(T.STRING, new Array(n).fill(fmt)), vectorFromValues(T.DATE, xs)], n, ctx);
        return Array.from({ length: n }, (_, i) => getValue(out, i));
      };
      // twice: the second batch reads the cache the first filled (and emptied past 64k)
      for (const batch of [days, days.slice(60000)]) expect(call(fast, batch), fmt).toEqual(call(general, batch));
    }
  });
});

describe('STRING_AGG of STRING', () => {
  const strs = ['a', '', 'bc', 'é', '\u{1F600}', 'x,y', 'zz'];
  // Dictionary-coded values (a dictionary-encoded column's batches): one dictionary for both batches, the second batch's value a third way.
  const dictValues: (string | null)[] = [...strs, 'unused'];
  const coded = (vals: Value[]): Vector => {
    const v = vectorFromValues(T.STRING, vals);
    const codes = Int32Array.from(vals, (x) => (x === null ? 0 : dictValues.indexOf(x as string)));
    return { ...v, dict: { codes, values: dictValues } };
  };
  const run = (acc: import('../../src/functions/registry.js').GroupsAccumulator, vals: Value[], seps: Value[] | null, groups: Int32Array, ng: number, dict = 0) => {
    try {
      acc.resize(ng);
      // two batches
      const cut = Math.floor(vals.length / 3);
      for (const [lo, hi] of [[0, cut], [cut, vals.length]] as const) {
        // dict 1: both batches coded; 2: only the first (codes and plain strings in one group's values).
        const args = [dict === 1 || (dict === 2 && lo === 0) ? coded(vals.slice(lo, hi)) : vectorFromValues(T.STRING, vals.slice(lo, hi))];
        if (seps) args.push(vectorFromValues(T.STRING, seps.slice(lo, hi)));
        acc.update(args, groups.slice(lo, hi), hi - lo);
      }
      const out = acc.finish(ng);
      return Array.from({ length: ng }, (_, g) => getValue(out, g));
    } catch (e) {
      return String(e);
    }
  };
  it('equals the collecting form: NULLs, separators constant, varying and NULL, LIMIT, empty groups', () => {
    const n = 500;
    const ng = 9; // group 8 never gets a row
    const vals: Value[] = Array.from({ length: n }, (_, i) => (i % 11 === 3 ? null : strs[(i * 5) % strs.length]!));
    const groups = Int32Array.from({ length: n }, (_, i) => (i * 7) % 8);
    const sepsets: (Value[] | null)[] = [
      null,
      new Array(n).fill(' | '),
      new Array(n).fill(''),
      Array.from({ length: n }, (_, i) => ['-', '+', ''][i % 3]!),
      Array.from({ length: n }, (_, i) => (i === 77 ? null : ';')), // NULL separator: the error
      Array.from({ length: n }, (_, i) => (vals[i] === null ? null : ';')), // only beside NULL values: no error
    ];
    for (const seps of sepsets) {
      for (const limit of [undefined, 1, 3, 1000]) {
        const o = { distinct: false, ignoreNulls: undefined, hasOrderBy: false, limit };
        const general = stringAggCollect(false)({ args: seps ? [{ type: T.STRING }, { type: T.STRING }] : [{ type: T.STRING }], argTypes: [], returnType: T.STRING } as never, o)({} as EvalContext, o);
        const want = run(general, vals, seps, groups, ng);
        for (const dict of [0, 1, 2]) expect(run(new StringAggAcc(seps !== null, limit), vals, seps, groups, ng, dict), `${JSON.stringify(seps?.slice(0, 3))} ${limit} ${dict}`).toEqual(want);
      }
    }
  });
});

describe('ARRAY_AGG', () => {
  it('equals the collecting form: NULLs kept or ignored, LIMIT, empty groups, several types', () => {
    const cases: [SqlType, Value[]][] = [
      [T.INT64, [1n, null, -5n, 2n ** 60n, 0n]],
      [T.FLOAT64, [0, -0, NaN, null, 1.5]],
      [T.STRING, ['a', null, '', 'bc']],
      [T.DATE, [0, null, -719162, 2932896]],
    ];
    for (const [type, base] of cases) {
      const n = 300;
      const vals = Array.from({ length: n }, (_, i) => base[(i * 3) % base.length]!);
      const groups = Int32Array.from({ length: n }, (_, i) => (i * 5) % 6);
      for (const ignoreNulls of [undefined, true, false]) {
        for (const limit of [undefined, 1, 4, 1000]) {
          const o = { distinct: false, ignoreNulls, hasOrderBy: false, limit };
          const rt = arrayOf(type);
          const accs = [arrayAggCollect()({ args: [{ type }], argTypes: [type], returnType: rt } as never, o)({} as EvalContext, o), new ArrayAggAcc(rt, ignoreNulls === true, limit)];
          const [want, got] = accs.map((acc) => {
            acc.resize(7); // group 6 never gets a row
            acc.update([vectorFromValues(type, vals.slice(0, 100))], groups.slice(0, 100), 100);
            acc.update([vectorFromValues(type, vals.slice(100))], groups.slice(100), n - 100);
            const out = acc.finish(7);
            return Array.from({ length: 7 }, (_, g) => getValue(out, g));
          });
          expect(got, `${type.kind} ${ignoreNulls} ${limit}`).toEqual(want);
        }
      }
    }
  });
});

describe('PARSE_JSON text fast paths', () => {
  it('numbers read as the general reading (jsonNumberFromText) reads them, strings as JSON.parse, errors at the same offsets', async () => {
    const { parseJsonText, jsonNumberFromText } = await import('../../src/functions/json-core.js');
    const nums = ['0', '-0', '7', '-12', '999999999999999', '-999999999999999', '1000000000000000', '9007199254740993', '-9223372036854775808', '18446744073709551615',
      '123456789012345678901', '100000000000000000000', '0.1', '-0.0', '1.0', '2.50', '1e3', '-1E-7', '1.7976931348623157e308', '5e-324', '0.30000000000000004', '3.14159265358979323846', '1e400'];
    for (const mode of ['round', 'exact'] as const) {
      for (const t of nums) {
        const general = ((): unknown => {
          try {
            return jsonNumberFromText(t, mode);
          } catch (e) {
            return String(e);
          }
        })();
        const fast = ((): unknown => {
          try {
            return (parseJsonText(`{"a":[${t}]}`, mode) as { a: unknown[] }).a[0];
          } catch (e) {
            return String(e);
          }
        })();
        expect(Object.is(fast, general) || fast === general, `${mode} ${t}: ${String(fast)} vs ${String(general)}`).toBe(true);
      }
    }
    for (const t of ['""', '"abc"', '"a\\"b"', '"\\u00e9\\n"', '"é😀"', '"x\\\\"', '"tail\\/"']) expect(parseJsonText(t), t).toBe(JSON.parse(t));
    const err = (t: string): string => {
      try {
        parseJsonText(t);
        return 'no error';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(err('"abc')).toBe('Unterminated string');
    expect(err('"ab\\')).toBe('Unexpected character at offset 5');
    expect(err('"ab\u0001c"')).toBe('Unexpected character at offset 3');
    expect(err('{"a": -x}')).toBe('Unexpected character at offset 6');
  });
});
