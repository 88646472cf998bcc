// A ROWS frame bound's row, shared by the in-memory window (window.ts) and the
// spilled sorted stream (sorted.ts), so that both frame rows alike.
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
