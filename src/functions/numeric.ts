// NUMERIC (precision 38, scale 9) and BIGNUMERIC (precision 76.76, scale 38)
// through decimal.js: results round half away from zero to the type's scale
// and raise the service's overflow errors.
import { BIGNUMERIC_MAX, BIGNUMERIC_MIN } from '../types/json-values.js';
import { Decimal } from '../types/values.js';
import { fail } from './vec.js';

// Intermediate results need far more than 76 digits (products of two BIGNUMERICs).
Decimal.set({ precision: 200, rounding: Decimal.ROUND_HALF_UP, toExpNeg: -100, toExpPos: 100, minE: -9e15, maxE: 9e15 });

export const NUMERIC_MAX = new Decimal('99999999999999999999999999999.999999999');
export { BIGNUMERIC_MAX, BIGNUMERIC_MIN };

export type DecKind = 'NUMERIC' | 'BIGNUMERIC';

/** Rounds to the type's scale; undefined when out of range. */
export function fitDecimal(d: Decimal, kind: DecKind): Decimal | undefined {
  if (kind === 'NUMERIC') {
    const r = d.toDecimalPlaces(9, Decimal.ROUND_HALF_UP);
    if (r.abs().gt(NUMERIC_MAX)) return undefined;
    return r.isZero() ? ZERO : r;
  }
  const r = d.toDecimalPlaces(38, Decimal.ROUND_HALF_UP);
  if (r.gt(BIGNUMERIC_MAX) || r.lt(BIGNUMERIC_MIN)) return undefined;
  return r.isZero() ? ZERO : r;
}

export const ZERO = new Decimal(0);

/** fitDecimal or the overflow error: `numeric overflow: 1e+29 + 1` style messages use `detail`. */
export function checkDecimal(d: Decimal, kind: DecKind, detail?: string): Decimal {
  const r = fitDecimal(d, kind);
  if (r === undefined) fail(`${kind === 'NUMERIC' ? 'numeric' : 'BIGNUMERIC'} overflow${detail ? ': ' + detail : ''}`);
  return r;
}

/** NUMERIC/BIGNUMERIC as CAST(... AS STRING) prints it: plain notation, no trailing zeros. */
export function formatDecimal(d: Decimal): string {
  if (d.isZero()) return '0';
  return d.toFixed();
}

const DEC_RE = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/;
/** Parses a NUMERIC/BIGNUMERIC string; undefined on syntax error. */
export function parseDecimal(s: string): Decimal | undefined {
  const m = DEC_RE.exec(s);
  if (!m || (m[2] === '' && (m[3] === undefined || m[3] === ''))) return undefined;
  try {
    return new Decimal(s.trim());
  } catch {
    return undefined;
  }
}
