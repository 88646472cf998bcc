// NUMERIC and BIGNUMERIC values as Arrow lays them out: an unscaled integer
// (value x 10^9, x 10^38) in little-endian two's complement, 4 (decimal128)
// or 8 (decimal256) 32-bit words per value. Storage decodes stored text into
// words (`wordsOfText`) and keeps chunks of them; Decimals are made from the
// words only where a kernel reads values (`decimalOfWords`), and the Storage
// Read Arrow writer copies the words as they are.
import { Decimal } from './values.js';

/** Scratch digits (BIGNUMERIC: up to 77 digits, plus the scale's leading zeros). */
const DIGITS = new Uint8Array(128);

/** Value of DIGITS[from, to) (at most 7 digits). */
function word(from: number, to: number): number {
  let w = 0;
  for (let i = from; i < to; i++) w = w * 10 + DIGITS[i]!;
  return w;
}

/**
 * A Decimal made directly from its sign, exponent and base-1e7 words: an
 * instance of decimal.js's class with the own properties its constructor
 * sets, in the same order (`constructor`, `s`, `e`, `d`), without going
 * through its argument checks.
 */
const DecimalOf = function (this: { constructor: unknown; s: number; e: number; d: number[] }, s: number, e: number, d: number[]) {
  this.constructor = Decimal;
  this.s = s;
  this.e = e;
  this.d = d;
} as unknown as new (s: number, e: number, d: number[]) => Decimal;
DecimalOf.prototype = Decimal.prototype;

const POW10_7 = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000];

/**
 * `new Decimal(text)` for a plainNumericAt text b[s, e), zero normalised as
 * setCell does, built without decimal.js's string parsing: the same sign,
 * exponent and base-1e7 words as its parseDecimal computes (checked against
 * it in test/storage/insert-scan.test.ts), in an array of exactly their
 * number (parseDecimal's pushes leave room for 17).
 */
export function decimalAt(b: Uint8Array, s: number, e: number): Decimal {
  const neg = b[s] === 45;
  let nd = 0;
  let intLen = -1;
  for (let i = neg ? s + 1 : s; i < e; i++) {
    const c = b[i]!;
    if (c === 46) intLen = nd;
    else DIGITS[nd++] = c - 48;
  }
  if (intLen < 0) intLen = nd;
  return decimalOfDigits(neg, nd, intLen);
}

/** The Decimal of DIGITS[0, nd) with the point after intLen of them. */
function decimalOfDigits(neg: boolean, nd: number, intLen: number): Decimal {
  let lz = 0;
  while (lz < nd && DIGITS[lz] === 0) lz++;
  if (lz === nd) return new Decimal(0);
  let end = nd;
  while (DIGITS[end - 1] === 0) end--;
  // parseDecimal over the significant digits S = DIGITS[lz, end): exponent x
  // of the first digit; the first word holds the digits up to the next
  // multiple of 7 positions, the last is padded with zeros on the right.
  const len = end - lz;
  const x = intLen - lz - 1;
  let first = (x + 1) % 7;
  if (x < 0) first += 7;
  let d: number[];
  if (first >= len) d = [word(lz, end) * POW10_7[first - len]!];
  else {
    const count = (first > 0 ? 1 : 0) + Math.ceil((len - first) / 7);
    d = count === 1 ? [0] : count === 2 ? [0, 0] : count === 3 ? [0, 0, 0] : new Array<number>(count).fill(0);
    let j = 0;
    if (first > 0) d[j++] = word(lz, lz + first);
    let r = first;
    for (; r < len - 7; r += 7) d[j++] = word(lz + r, lz + r + 7);
    d[j] = word(lz + r, end) * POW10_7[7 - (len - r)]!;
  }
  return new DecimalOf(neg ? -1 : 1, x, d);
}

/** 32-bit words per value: NUMERIC decimal128, BIGNUMERIC decimal256. */
export type DecimalWidth = 4 | 8;

export const decimalScale = (width: DecimalWidth): number => (width === 4 ? 9 : 38);

/** Scratch 16-bit halves of one value's magnitude, least significant first. */
const HALVES = new Float64Array(16);

const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/** HALVES[0, n) = HALVES * 10^k + add (k <= 9); false when it overflows n halves. */
function mulAdd(n: number, k: number, add: number): boolean {
  const m = POW10[k]!;
  let carry = add;
  for (let i = 0; i < n; i++) {
    const x = HALVES[i]! * m + carry;
    const lo = x % 65536;
    HALVES[i] = lo;
    carry = (x - lo) / 65536;
  }
  return carry === 0;
}

/**
 * The plain decimal text b[s, e) (`-`, digits, optionally `.` and digits, as
 * Decimal.toFixed() writes it) as `width` words at out[at * width]. False
 * (out then partly written) when it is not such a text, has more fraction
 * digits than the scale or does not fit: the caller keeps the values instead.
 */
export function wordsOfText(b: Uint8Array, s: number, e: number, width: DecimalWidth, out: Uint32Array, at: number): boolean {
  const n = 2 * width;
  const scale = decimalScale(width);
  HALVES.fill(0, 0, n);
  let i = s;
  const neg = i < e && b[i] === 45;
  if (neg) i++;
  let group = 0;
  let groupLen = 0;
  let frac = -1;
  let digits = 0;
  for (; i < e; i++) {
    const c = b[i]!;
    if (c === 46 && frac < 0) {
      frac = 0;
      continue;
    }
    if (c < 48 || c > 57) return false;
    digits++;
    if (frac >= 0) frac++;
    group = group * 10 + (c - 48);
    if (++groupLen === 9) {
      if (!mulAdd(n, 9, group)) return false;
      group = 0;
      groupLen = 0;
    }
  }
  if (digits === 0 || frac === 0) return false;
  if (frac < 0) frac = 0;
  if (frac > scale) return false;
  if (groupLen > 0 && !mulAdd(n, groupLen, group)) return false;
  for (let pad = scale - frac; pad > 0; pad -= 9) if (!mulAdd(n, Math.min(pad, 9), 0)) return false;
  // The sign bit: a magnitude of 2^(32 width - 1) or more does not fit (BIGNUMERIC's minimum, exactly -2^255, is kept as a value).
  if (HALVES[n - 1]! >= 32768) return false;
  const base = at * width;
  if (neg) {
    // Two's complement: invert, add one.
    let carry = 1;
    for (let h = 0; h < n; h++) {
      const x = 65535 - HALVES[h]! + carry;
      HALVES[h] = x & 65535;
      carry = x >>> 16;
    }
  }
  for (let w = 0; w < width; w++) out[base + w] = (HALVES[2 * w]! + HALVES[2 * w + 1]! * 65536) >>> 0;
  return true;
}

/** Scratch base-1e7 groups of a magnitude, least significant first. */
const GROUPS = new Float64Array(12);

/** Decimal digits of 0 < x < 1e7. */
const digitCount = (x: number): number => (x < 1e3 ? (x < 10 ? 1 : x < 100 ? 2 : 3) : x < 1e5 ? (x < 1e4 ? 4 : 5) : x < 1e6 ? 6 : 7);

/**
 * decimalOfWords of a NUMERIC whose unscaled magnitude m is below 2^53 (the
 * usual amounts): its integer part then fits one base-1e7 word and its nine
 * fraction digits two, so decimal.js's words and exponent come straight from
 * number arithmetic.
 */
function smallNumeric(neg: boolean, m: number): Decimal {
  if (m === 0) return new Decimal(0);
  const int = Math.floor(m / 1e9);
  const frac = m - int * 1e9;
  const f1 = Math.floor(frac / 100);
  const f2 = (frac - f1 * 100) * 1e5;
  let d: number[];
  let e: number;
  if (int > 0) {
    e = digitCount(int) - 1;
    d = f2 !== 0 ? [int, f1, f2] : f1 !== 0 ? [int, f1] : [int];
  } else if (f1 > 0) {
    e = digitCount(f1) - 8;
    d = f2 !== 0 ? [f1, f2] : [f1];
  } else {
    e = digitCount(f2) - 15;
    d = [f2];
  }
  return new DecimalOf(neg ? -1 : 1, e, d);
}

/** The Decimal of the value at words[at * width] (scale 9 for width 4, 38 for 8). */
export function decimalOfWords(words: Uint32Array, at: number, width: DecimalWidth): Decimal {
  const n = 2 * width;
  const base = at * width;
  const neg = words[base + width - 1]! >= 0x80000000;
  if (width === 4) {
    // Magnitude below 2^53: the high words all sign (0 or ~0) and the second's top 11 bits too.
    const w1 = words[base + 1]!;
    if (!neg && words[base + 3] === 0 && words[base + 2] === 0 && w1 < 0x200000) return smallNumeric(false, w1 * 4294967296 + words[base]!);
    if (neg && words[base + 3] === 0xffffffff && words[base + 2] === 0xffffffff && w1 >= 0xffe00000) {
      // -(value) = 2^64 - (w1:w0) within the low 64 bits.
      const lo = words[base]!;
      const m = lo === 0 ? (0x100000000 - w1) * 4294967296 : (0xffffffff - w1) * 4294967296 + (0x100000000 - lo);
      if (m <= 9007199254740991) return smallNumeric(true, m);
    }
  }
  let top = -1;
  let carry = neg ? 1 : 0;
  for (let w = 0; w < width; w++) {
    let x = words[base + w]!;
    if (neg) x = ~x >>> 0;
    const lo = (x & 65535) + carry;
    HALVES[2 * w] = lo & 65535;
    const hi = (x >>> 16) + (lo >>> 16);
    HALVES[2 * w + 1] = hi & 65535;
    carry = hi >>> 16;
  }
  for (let h = n - 1; h >= 0; h--)
    if (HALVES[h] !== 0) {
      top = h;
      break;
    }
  if (top < 0) return new Decimal(0);
  // Base-1e7 groups by long division of the halves.
  let groups = 0;
  while (top >= 0) {
    let rem = 0;
    for (let h = top; h >= 0; h--) {
      const x = rem * 65536 + HALVES[h]!;
      const q = Math.floor(x / 1e7);
      HALVES[h] = q;
      rem = x - q * 1e7;
    }
    GROUPS[groups++] = rem;
    while (top >= 0 && HALVES[top] === 0) top--;
  }
  // Digits, most significant first, with leading zeros so that at least one precedes the point.
  const scale = decimalScale(width);
  const nd = Math.max(groups * 7, scale + 1);
  DIGITS.fill(0, 0, nd - groups * 7);
  let p = nd - groups * 7;
  for (let g = groups - 1; g >= 0; g--) {
    let x = GROUPS[g]!;
    for (let k = 6; k >= 0; k--) {
      DIGITS[p + k] = x % 10;
      x = (x - (x % 10)) / 10;
    }
    p += 7;
  }
  return decimalOfDigits(neg, nd, nd - scale);
}

/** Sign of (a's value at ai) - (b's value at bi): signed top words, then unsigned lower words. */
export function compareWords(a: Uint32Array, ai: number, b: Uint32Array, bi: number, width: DecimalWidth): number {
  const x = ai * width;
  const y = bi * width;
  const hx = a[x + width - 1]! | 0;
  const hy = b[y + width - 1]! | 0;
  if (hx !== hy) return hx < hy ? -1 : 1;
  for (let w = width - 2; w >= 0; w--) {
    const p = a[x + w]!;
    const q = b[y + w]!;
    if (p !== q) return p < q ? -1 : 1;
  }
  return 0;
}

/** A Decimal's words (null when it has more fraction digits than the scale or does not fit). */
export function wordsOfDecimal(d: Decimal, width: DecimalWidth): Uint32Array | null {
  const out = new Uint32Array(width);
  const text = Buffer.from(d.toFixed(), 'latin1');
  return wordsOfText(text, 0, text.length, width, out, 0) ? out : null;
}

const TWO32 = 4294967296;

/** A NUMERIC's unscaled value at words[b] as a double when its magnitude is at most 2^53 (the high words only sign), else NaN. */
export function smallAt(w: Uint32Array, b: number): number {
  const hi = w[b + 1]! | 0;
  const ext = hi < 0 ? 0xffffffff : 0;
  if (w[b + 2] !== ext || w[b + 3] !== ext || hi >= 0x200000 || hi < -0x200000) return NaN;
  return hi * TWO32 + w[b]!;
}

/** The unscaled value at words[b] as a BigInt. */
export function bigAt(w: Uint32Array, b: number, width: DecimalWidth): bigint {
  let r = 0n;
  for (let k = width - 1; k >= 0; k--) r = (r << 32n) | BigInt(w[b + k]!);
  return BigInt.asIntN(width * 32, r);
}

/** Writes the unscaled value v (in range for the width) as words at w[b]: two's complement, little-endian. */
export function setBigAt(w: Uint32Array, b: number, width: DecimalWidth, v: bigint): void {
  let u = BigInt.asUintN(width * 32, v);
  for (let k = 0; k < width; k++) {
    w[b + k] = Number(u & 0xffffffffn);
    u >>= 32n;
  }
}

/** The text of an unscaled value as CAST(x AS STRING) writes it: plain, no trailing fraction zeros, '0' for zero. */
function textOfBig(x: bigint, scale: number): string {
  if (x === 0n) return '0';
  const neg = x < 0n;
  const digits = (neg ? -x : x).toString().padStart(scale + 1, '0');
  const int = digits.slice(0, digits.length - scale);
  let end = digits.length;
  while (end > int.length && digits.charCodeAt(end - 1) === 48) end--;
  const frac = digits.slice(int.length, end);
  return (neg ? '-' : '') + int + (frac === '' ? '' : '.' + frac);
}

function textOfSmall(x: number): string {
  if (x === 0) return '0';
  const m = Math.abs(x);
  const f = m % 1e9;
  const int = String((m - f) / 1e9);
  const sign = x < 0 ? '-' : '';
  if (f === 0) return sign + int;
  let frac = String(f).padStart(9, '0');
  let end = 9;
  while (frac.charCodeAt(end - 1) === 48) end--;
  frac = frac.slice(0, end);
  return sign + int + '.' + frac;
}

/** The value at words[at * width] as Decimal.toFixed() (and CAST AS STRING) writes it, without making the Decimal. */
export function textOfWords(words: Uint32Array, at: number, width: DecimalWidth): string {
  const b = at * width;
  const x = width === 4 ? smallAt(words, b) : NaN;
  return x === x ? textOfSmall(x) : textOfBig(bigAt(words, b, width), decimalScale(width));
}

/** Scratch text bytes of a Decimal (wordsOfDecimalInto): BIGNUMERIC's 77 digits, sign and point fit. */
const TEXT = new Uint8Array(96);

/**
 * wordsOfDecimal into out[at * width] without allocating (hashing and
 * grouping boxed values the same way as words). False when it does not fit.
 */
export function wordsOfDecimalInto(d: Decimal, width: DecimalWidth, out: Uint32Array, at: number): boolean {
  const t = d.toFixed();
  if (t.length > TEXT.length) return false;
  for (let i = 0; i < t.length; i++) TEXT[i] = t.charCodeAt(i);
  return wordsOfText(TEXT, 0, t.length, width, out, at);
}

/**
 * Hash of the value at words[at * width]. Equal values have equal words at
 * the type's fixed scale (-0, 1.50 and 1.5 alike), so this is a grouping hash;
 * boxed values hash through wordsOfDecimalInto to the same number.
 */
export function hashWordsAt(words: Uint32Array, at: number, width: DecimalWidth): number {
  const b = at * width;
  let h = 0x243f6a88 | 0;
  for (let k = 0; k < width; k++) h = Math.imul(h ^ words[b + k]!, 0x9e3779b1) + k;
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/** Whether the values at a[ai * width] and b[bi * width] are equal (equal values, equal words). */
export function wordsEqual(a: Uint32Array, ai: number, b: Uint32Array, bi: number, width: DecimalWidth): boolean {
  const x = ai * width;
  const y = bi * width;
  for (let k = 0; k < width; k++) if (a[x + k] !== b[y + k]) return false;
  return true;
}
