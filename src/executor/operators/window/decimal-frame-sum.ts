// SUM / AVG of NUMERIC / BIGNUMERIC over frames that slide forward (ROWS k
// PRECEDING, RANGE offsets, suffix frames), in O(1) a row: the frame's sum
// is kept as an exact unscaled integer (value x 10^scale), rows added as the
// frame end passes them and subtracted as its start does. Being exact, the
// running total is the frame's own sum whatever rows came and went before:
// a total that passed the type's range on the way (rows entering before
// others left) raises nothing; only a frame whose own sum (or average)
// does not fit fails, with the accumulator's message ("numeric overflow:
// SUM"), as the per-frame sum (SumDecimalAcc) fails. The per-frame feed
// cost O(n x frame) Decimal additions (200k rows, 100-row frames: ~7 s).
import { fail } from '../../../functions/vec.js';
import { bigAt, wordsOfDecimalInto, type DecimalWidth } from '../../../types/decimal-words.js';
import type { Decimal } from '../../../types/values.js';
import type { Vector } from '../../../types/vector.js';

const TWO32 = 4294967296;
/** Values and partial sums kept as doubles up to this magnitude (their sums stay exact below 2^53). */
const SMALL = 2 ** 52;
const NUMERIC_MAX_UNSCALED = 10n ** 38n - 1n;

/** A NUMERIC / BIGNUMERIC vector's words (rows boxed as Decimals converted once; NULL rows' words zero); null: a value does not fit. */
export function wordsOf(v: Vector, width: DecimalWidth): Uint32Array | null {
  if (v.decimal && v.decimal.width === width) return v.decimal.words;
  const out = new Uint32Array(v.length * width);
  const d = v.data as (Decimal | null)[];
  for (let i = 0; i < v.length; i++) {
    const x = d[i];
    if (x === null || x === undefined || (v.nulls !== null && v.nulls[i] === 1)) continue;
    if (!wordsOfDecimalInto(x, width, out, i)) return null;
  }
  return out;
}

/** The unscaled value at words[b] as a double when its magnitude is at most 2^52, else NaN. */
function smallOf(w: Uint32Array, b: number, width: DecimalWidth): number {
  const hi = w[b + 1]! | 0;
  const ext = hi < 0 ? 0xffffffff : 0;
  for (let k = 2; k < width; k++) if (w[b + k] !== ext) return NaN;
  if (hi >= 0x100000 || hi < -0x100000) return NaN;
  return hi * TWO32 + w[b]!;
}

export class DecimalFrameSum {
  /** The total is big + small; small stays within ±2^52 so adding a small value to it is exact. */
  private small = 0;
  private big = 0n;
  /** Non-NULL rows in the frame. */
  count = 0;

  constructor(
    private readonly width: DecimalWidth,
    private readonly avg: boolean,
  ) {}

  reset(): void {
    this.small = 0;
    this.big = 0n;
    this.count = 0;
  }

  /** Adds (sign 1) or removes (sign -1) row r of `words` (NULL rows skipped). */
  move(words: Uint32Array, nulls: Uint8Array | null, r: number, sign: 1 | -1): void {
    if (nulls !== null && nulls[r] === 1) return;
    this.count += sign;
    const x = smallOf(words, r * this.width, this.width);
    if (x === x) {
      const s = this.small + sign * x;
      if (s > SMALL || s < -SMALL) {
        this.big += BigInt(s);
        this.small = 0;
      } else this.small = s;
    } else {
      const b = bigAt(words, r * this.width, this.width);
      this.big += sign === 1 ? b : -b;
    }
  }

  /**
   * Writes the frame's SUM / AVG into out at row i (returns false: NULL, no
   * value in the frame or SAFE past the range). AVG rounds half away from
   * zero at the type's scale, as SumDecimalAcc's Decimal division does.
   */
  write(out: Uint32Array, i: number): boolean {
    if (this.count === 0) return false;
    const w = this.width;
    const b = i * w;
    if (!this.avg && this.big === 0n) {
      // |small| <= 2^52: two words and the sign.
      const x = this.small;
      const hi = Math.floor(x / TWO32);
      out[b] = x - hi * TWO32;
      out[b + 1] = hi >>> 0;
      const ext = hi < 0 ? 0xffffffff : 0;
      for (let k = 2; k < w; k++) out[b + k] = ext;
      return true;
    }
    let t = this.big + BigInt(this.small);
    if (this.avg) {
      const c = BigInt(this.count);
      const neg = t < 0n;
      const m = neg ? -t : t;
      const q = (2n * m + c) / (2n * c);
      t = neg ? -q : q;
    }
    const fits = w === 4 ? t <= NUMERIC_MAX_UNSCALED && t >= -NUMERIC_MAX_UNSCALED : BigInt.asIntN(256, t) === t;
    if (!fits) fail(`${w === 4 ? 'numeric' : 'BIGNUMERIC'} overflow: ${this.avg ? 'AVG' : 'SUM'}`);
    let u = BigInt.asUintN(w * 32, t);
    for (let k = 0; k < w; k++) {
      out[b + k] = Number(u & 0xffffffffn);
      u >>= 32n;
    }
    return true;
  }
}
