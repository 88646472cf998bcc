// LIKE pattern matching: `%` (any sequence), `_` (any one character: a code
// point of a STRING, a byte of BYTES) and backslash escapes. Patterns are
// matched as their `%`-separated segments, never as a backtracking regular
// expression: a RegExp of `%a%a%a%b` over a few thousand characters ran for
// minutes and held the engine's event loop; here each segment is found at its
// leftmost place, O(text x pattern) at worst, like the service's RE2.
import { fail } from './vec.js';

/** One character of a segment, or null for `_`. */
type Unit = string | null;

interface LikePattern {
  /** The pattern split at its unescaped `%`s (one segment when it has none). */
  readonly segs: readonly (readonly Unit[])[];
  /** Each segment as plain text when it holds no `_` (matched with native string search), else undefined. */
  readonly plain: readonly (string | undefined)[];
}

const cache = new Map<string, LikePattern>();

function compile(pattern: string, bytes: boolean): LikePattern {
  const key = (bytes ? 'b' : 's') + pattern;
  let p = cache.get(key);
  if (p) return p;
  const chars = bytes ? pattern.split('') : Array.from(pattern);
  const segs: Unit[][] = [[]];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    const seg = segs[segs.length - 1]!;
    if (c === '\\') {
      if (i + 1 >= chars.length) fail('LIKE pattern ends with a backslash');
      seg.push(chars[++i]!);
    } else if (c === '%') segs.push([]);
    else if (c === '_') seg.push(null);
    else seg.push(c);
  }
  p = { segs, plain: segs.map((s) => (s.every((u) => u !== null) ? s.join('') : undefined)) };
  if (cache.size > 10000) cache.clear();
  cache.set(key, p);
  return p;
}

/** Whether `seg` matches `text` at `at` (`text` holds one character per element). */
function matchAt(seg: readonly Unit[], text: readonly string[] | string, at: number): boolean {
  for (let k = 0; k < seg.length; k++) {
    const u = seg[k];
    if (u !== null && u !== text[at + k]) return false;
  }
  return true;
}

/** `text` LIKE `pattern`. For BYTES both are latin1 strings, one character per byte. */
export function likeMatches(pattern: string, text: string, bytes: boolean): boolean {
  const p = compile(pattern, bytes);
  const { segs, plain } = p;
  const last = segs.length - 1;
  if (plain.every((s) => s !== undefined)) {
    // No `_`: native search over the text as it is.
    const ps = plain as readonly string[];
    if (last === 0) return text === ps[0];
    const head = ps[0]!;
    const tail = ps[last]!;
    if (head.length + tail.length > text.length || !text.startsWith(head) || !text.endsWith(tail)) return false;
    let pos = head.length;
    const end = text.length - tail.length;
    for (let i = 1; i < last; i++) {
      const s = ps[i]!;
      if (s === '') continue;
      const at = text.indexOf(s, pos);
      if (at < 0 || at + s.length > end) return false;
      pos = at + s.length;
    }
    return true;
  }
  // With `_`: one element per character (code points of a STRING).
  const t: readonly string[] | string = bytes || !/[\ud800-\udfff]/.test(text) ? text : Array.from(text);
  const n = t.length;
  if (last === 0) return segs[0]!.length === n && matchAt(segs[0]!, t, 0);
  const head = segs[0]!;
  const tail = segs[last]!;
  if (head.length + tail.length > n || !matchAt(head, t, 0) || !matchAt(tail, t, n - tail.length)) return false;
  let pos = head.length;
  const end = n - tail.length;
  for (let i = 1; i < last; i++) {
    const s = segs[i]!;
    let at = pos;
    while (at + s.length <= end && !matchAt(s, t, at)) at++;
    if (at + s.length > end) return false;
    pos = at + s.length;
  }
  return true;
}
