// Number formatting the way the service (C++) prints numbers.

/** C printf `%.{p}g` (no `#` flag): trailing zeros stripped, exponent of at least two digits. */
export function formatG(x: number, p = 6): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  if (p === 0) p = 1;
  const e = x.toExponential(p - 1); // d.ddddde±X
  const [mant, expStr] = e.split('e') as [string, string];
  const exp = Number(expStr);
  if (exp < -4 || exp >= p) {
    let m = mant;
    if (m.includes('.')) m = m.replace(/0+$/, '').replace(/\.$/, '');
    const sign = exp < 0 ? '-' : '+';
    const a = Math.abs(exp);
    return `${m}e${sign}${a < 10 ? '0' + a : a}`;
  }
  let f = x.toFixed(Math.max(0, p - 1 - exp));
  if (f.includes('.')) f = f.replace(/0+$/, '').replace(/\.$/, '');
  return f;
}

/**
 * FLOAT64 -> STRING as CAST does: the shortest of %.15g / %.17g that
 * round-trips, so 0.1 -> "0.1", 1e20 -> "1e+20", 1/3 -> "0.33333333333333331".
 */
export function formatDouble(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const s15 = formatG(x, 15);
  if (Number(s15) === x) return s15;
  return formatG(x, 17);
}

/** A value as it appears inside an arithmetic error message ("int64 overflow: 1 + 2"). */
export function formatErrNum(x: number | bigint): string {
  return typeof x === 'bigint' ? x.toString() : formatG(x, 6);
}
