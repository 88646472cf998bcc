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

// ---------------------------------------------------------------- printf-exact doubles

/** The exact decimal value of |x| (finite, non-zero): 0.<digits> * 10^point, no trailing zeros. */
function exactDigits(x: number): { digits: string; point: number } {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, Math.abs(x));
  const hi = dv.getUint32(0);
  const lo = dv.getUint32(4);
  const bexp = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e = -1074;
  if (bexp !== 0) {
    m |= 1n << 52n;
    e = bexp - 1075;
  }
  const int = e >= 0 ? (m << BigInt(e)).toString() : (m * 5n ** BigInt(-e)).toString();
  const point = int.length - (e >= 0 ? 0 : -e);
  return { digits: int.replace(/0+$/, ''), point };
}

/** Keeps the first `keep` digits, rounding half to even on the exact value (as C's printf does). */
function roundDigits(d: { digits: string; point: number }, keep: number): { digits: string; point: number } {
  const { digits, point } = d;
  if (keep >= digits.length) return d;
  if (keep < 0) return { digits: '', point };
  const head = digits.slice(0, keep);
  const next = digits[keep]!;
  const tail = digits.slice(keep + 1);
  const lastOdd = keep > 0 && Number(head[keep - 1]) % 2 === 1;
  const up = next > '5' || (next === '5' && (tail.length > 0 || lastOdd));
  if (!up) return { digits: head.replace(/0+$/, ''), point };
  const inc = (BigInt(head || '0') + 1n).toString();
  if (keep === 0) return { digits: '1', point: point + 1 };
  return inc.length > head.length ? { digits: inc.replace(/0+$/, ''), point: point + 1 } : { digits: inc.replace(/0+$/, ''), point };
}

function fixedText(d: { digits: string; point: number }, decimals: number, alt: boolean): string {
  const all = d.digits;
  let int: string;
  let frac: string;
  if (d.point <= 0) {
    int = '0';
    frac = ('0'.repeat(-d.point) + all).slice(0, decimals).padEnd(decimals, '0');
  } else {
    int = all.slice(0, d.point).padEnd(d.point, '0');
    frac = all.slice(d.point, d.point + decimals).padEnd(decimals, '0');
  }
  if (int === '') int = '0';
  return decimals > 0 ? `${int}.${frac}` : alt ? `${int}.` : int;
}

function expText(d: { digits: string; point: number }, decimals: number, alt: boolean, zero: boolean): string {
  const all = (d.digits || '0').padEnd(decimals + 1, '0');
  const e = zero ? 0 : d.point - 1;
  const mant = decimals > 0 ? `${all[0]}.${all.slice(1, decimals + 1)}` : alt ? `${all[0]}.` : all[0]!;
  const a = Math.abs(e);
  return `${mant}e${e < 0 ? '-' : '+'}${a < 10 ? '0' + a : a}`;
}

/** Digits of a JS fixed or exponential rendering (no sign) as 0.<digits> * 10^point. */
function digitsOf(text: string): { digits: string; point: number } {
  const m = /^(\d+)(?:\.(\d*))?(?:e([+-]\d+))?$/.exec(text)!;
  const all = m[1]! + (m[2] ?? '');
  const lz = all.length - all.replace(/^0+/, '').length;
  const digits = all.slice(lz).replace(/0+$/, '');
  return { digits, point: m[1]!.length - lz + Number(m[3] ?? 0) };
}

// JS's toFixed/toExponential round the exact binary value correctly except at an
// exact tie, where they round up and C rounds to even. Three extra digits reading
// "500" flag a possible tie; only those take the exact (BigInt) path.
function fastFixed(abs: number, prec: number): { digits: string; point: number } | undefined {
  if (abs >= 1e21 || prec + 3 > 100) return undefined;
  if (abs.toFixed(prec + 3).endsWith('500')) return undefined;
  return digitsOf(abs.toFixed(prec));
}
function fastSig(abs: number, k: number): { digits: string; point: number } | undefined {
  if (k + 2 > 100) return undefined;
  if (abs.toExponential(k + 2).split('e')[0]!.endsWith('500')) return undefined;
  return digitsOf(abs.toExponential(k - 1));
}

/**
 * %f / %e / %g of a finite double exactly as C's printf: digits from the exact
 * binary value, ties rounded to even (2.5 -> "2" at %.0f), `alt` is the # flag.
 * The sign is included; letters are lower-case.
 */
export function printfDouble(x: number, conv: 'f' | 'e' | 'g', prec: number, alt: boolean): string {
  const sign = x < 0 || Object.is(x, -0) ? '-' : '';
  const zero = x === 0;
  const abs = Math.abs(x);
  const none = { digits: '', point: 1 };
  if (conv === 'f') {
    const r = zero ? none : fastFixed(abs, prec) ?? ((d) => roundDigits(d, d.point + prec))(exactDigits(x));
    return sign + fixedText(r, prec, alt);
  }
  const k = conv === 'e' ? prec + 1 : prec === 0 ? 1 : prec;
  const r = zero ? none : fastSig(abs, k) ?? roundDigits(exactDigits(x), k);
  if (conv === 'e') return sign + expText(r, prec, alt, zero);
  const X = zero ? 0 : r.point - 1;
  let s = X < -4 || X >= k ? expText(r, k - 1, alt, zero) : fixedText(r, k - 1 - X, alt);
  if (!alt) s = s.replace(/\.?0+(?=e|$)/, (m) => (m.startsWith('.') || s.includes('.') ? '' : m));
  return sign + s;
}
