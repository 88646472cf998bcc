// 64-bit integers (BigInt64Array rows: interval micros, TIMESTAMP / DATETIME
// values past 2^53) read and written as their two 32-bit halves
// (little-endian), so that kernels make no BigInt per row.
const TWO32 = 4294967296;

/** The halves of rows [0, n) of `a`: a view, no copy. */
export const halvesOf = (a: BigInt64Array, n = a.length): Int32Array => new Int32Array(a.buffer, a.byteOffset, 2 * n);

/** Row i as a double when it is exactly one (|x| <= 2^53), else NaN. */
export function exactAt(h: Int32Array, i: number): number {
  const hi = h[2 * i + 1]!;
  if (hi > 2097151 || hi < -2097152) return NaN;
  return hi * TWO32 + (h[2 * i]! >>> 0);
}

/** Writes the integer double x (|x| <= 2^53) as row i. */
export function setExact(h: Int32Array, i: number, x: number): void {
  const hi = Math.floor(x / TWO32);
  h[2 * i] = x - hi * TWO32;
  h[2 * i + 1] = hi;
}

/** Rows [0, n) of integer doubles as halves (a new array). */
export function halvesOfDoubles(d: Float64Array, n: number): Int32Array {
  const h = new Int32Array(2 * n);
  for (let i = 0; i < n; i++) setExact(h, i, d[i]!);
  return h;
}
