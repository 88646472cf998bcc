// Random values of any type for round-trip tests (nested to any depth, NULLs
// at every level, the edge values of each leaf type), and a form of values
// that toEqual compares exactly (-0, NaN, Decimal, JSON, bytes ...).
import { T, type SqlType } from '../../src/types/types.js';
import { Decimal, Geography, Interval, JsonValue, RangeValue, type Value } from '../../src/types/values.js';
import { jsonNodeToText, parseJsonText } from '../../src/types/json-values.js';

export const arr = (element: SqlType): SqlType => ({ kind: 'ARRAY', element });
export const struct = (...fields: [string, SqlType][]): SqlType => ({ kind: 'STRUCT', fields: fields.map(([name, type]) => ({ name, type })) });

/** Every leaf type a nested column can hold. */
export const LEAVES: SqlType[] = [T.INT64, T.FLOAT64, T.BOOL, T.STRING, T.BYTES, T.NUMERIC, T.BIGNUMERIC, T.TIMESTAMP, T.DATETIME, T.DATE, T.TIME, T.JSON, T.GEOGRAPHY, T.INTERVAL, { kind: 'RANGE', element: T.DATE }];

export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const NUMERIC_MAX = '99999999999999999999999999999.999999999';
export const BIGNUMERIC_MAX = '578960446186580977117854925043439539266.34992332820282019728792003956564819967';

/** A random NUMERIC (width 4) or BIGNUMERIC (8) text as Decimal.toFixed() writes it: 1 to all integer digits, 0 to scale fraction digits, either sign; extremes and zeros among them. */
export function randomDecimalText(r: () => number, width: 4 | 8): string {
  const intMax = width === 4 ? 29 : 38;
  const scale = width === 4 ? 9 : 38;
  const pick = r();
  if (pick < 0.05) return width === 4 ? NUMERIC_MAX : BIGNUMERIC_MAX;
  if (pick < 0.1) return '-' + (width === 4 ? NUMERIC_MAX : BIGNUMERIC_MAX);
  if (pick < 0.13) return width === 4 ? '-0.000000001' : '0.00000000000000000000000000000000000001';
  if (pick < 0.15) return '0';
  const digits = (n: number): string => Array.from({ length: n }, () => Math.floor(r() * 10)).join('');
  const intPart = digits(1 + Math.floor(r() * intMax)).replace(/^0+(?=\d)/, '');
  const frac = digits(Math.floor(r() * (scale + 1))).replace(/0+$/, '');
  if (intPart === '0' && !frac) return '0';
  return `${r() < 0.5 ? '-' : ''}${intPart}${frac ? '.' + frac : ''}`;
}

/** A random value of `t`; `top`: a column's value (a NULL array there stays NULL; nested ones read as []). */
export function randomValue(r: () => number, t: SqlType, top: boolean, pNull = 0.15): Value {
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(r() * xs.length)]!;
  if (t.kind === 'ARRAY') {
    if (top && r() < pNull) return null;
    const n = pick([0, 0, 1, 2, 3, 5]);
    return Array.from({ length: n }, () => randomValue(r, t.element, false, 0.05));
  }
  if (r() < pNull) return null;
  switch (t.kind) {
    case 'STRUCT':
      return t.fields.map((f) => randomValue(r, f.type, false));
    case 'INT64':
      return pick([0n, -1n, 9007199254740993n, -(2n ** 63n), 2n ** 63n - 1n, BigInt(Math.floor(r() * 1e6))]);
    case 'FLOAT64':
      return pick([0, -0, 0.1, -2.5e300, Number.NaN, Number.POSITIVE_INFINITY, r() * 1000]);
    case 'BOOL':
      return r() < 0.5;
    case 'STRING':
      return pick(['', 'a', 'é✓😀', 'x'.repeat(5000), `s${Math.floor(r() * 4)}`, `u${Math.floor(r() * 1e9)}`]);
    case 'BYTES':
      return new Uint8Array(Array.from({ length: Math.floor(r() * 5) }, () => Math.floor(r() * 256)));
    case 'NUMERIC':
      return new Decimal(pick(['0', '-1.5', '99999999999999999999999999999.999999999', `${Math.floor(r() * 1e6)}.25`]));
    case 'BIGNUMERIC':
      return new Decimal(pick(['0', '-1e-38', '123456789012345678901234567890123456789.5']));
    case 'TIMESTAMP':
    case 'DATETIME':
      return pick([0n, -62135596800000000n, 253402300799999999n, 1700000000000001n + BigInt(Math.floor(r() * 1e9))]);
    case 'DATE':
      return pick([0, -719162, 2932896, 19000 + Math.floor(r() * 1000)]);
    case 'TIME':
      return pick([0, 86399999999, Math.floor(r() * 86400) * 1e6]);
    case 'JSON':
      return new JsonValue(parseJsonText(pick(['{"k":1,"big":12345678901234567890}', '[1,"a",null]', 'null', '"x"'])));
    case 'GEOGRAPHY':
      return new Geography(null, pick(['POINT(1 2)', 'LINESTRING(0 0, 1 1)']));
    case 'INTERVAL':
      return new Interval(Math.floor(r() * 10), -3, BigInt(Math.floor(r() * 1e9)));
    case 'RANGE':
      return new RangeValue(pick([null, 19000]), pick([null, 19500]));
    default:
      throw new Error(`no generator for ${t.kind}`);
  }
}

export const norm = (v: Value): unknown =>
  v instanceof Decimal
    ? `D${v.toFixed()}`
    : v instanceof JsonValue
      ? `J${jsonNodeToText(v.node)}`
      : v instanceof Geography
        ? `G${v.wkt}`
        : v instanceof Interval
          ? `I${v.months}/${v.days}/${v.micros}`
          : v instanceof RangeValue
            ? ['R', norm(v.start), norm(v.end)]
            : v instanceof Uint8Array
              ? ['B', ...v]
              : typeof v === 'number' && (Object.is(v, -0) || Number.isNaN(v))
                ? String(Object.is(v, -0) ? '-0' : v)
                : Array.isArray(v)
                  ? v.map(norm)
                  : v;

