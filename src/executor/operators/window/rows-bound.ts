// Frame bounds shared by the in-memory window (window.ts) and the spilled
// sorted stream (sorted.ts), so that both frame rows alike: a ROWS bound's
// row, and the search a RANGE offset bound makes over ascending keys.
import type { FrameBound } from '../../../analyzer/resolved.js';

/** Row p's frame bound over one partition [ps, pe): a start is inclusive, an end exclusive. */
export function rowsBound(b: FrameBound, off: number, p: number, ps: number, pe: number, isStart: boolean): number {
  const clamp = (x: number): number => (x < ps ? ps : x > pe ? pe : x);
  const base = isStart ? 0 : 1;
  switch (b.type) {
    case 'unbounded_preceding':
      return ps;
    case 'unbounded_following':
      return pe;
    case 'current_row':
      return p + base;
    case 'preceding':
      return clamp(p - off + base);
    case 'following':
      return clamp(p + off + base);
  }
}

/** First position in [lo, hi) of ascending `k` whose key is >= x (strict: > x). */
export function lowerBound<T extends number | bigint>(k: ArrayLike<T>, x: T, lo: number, hi: number, strict: boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const v = k[mid]!;
    if (strict ? v <= x : v < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
