// "Did you mean ...?" for unknown names, as the real service words it
// ("Unrecognized name: nmae; Did you mean name?"), with ZetaSQL's rule for
// the closest name: names shorter than 3 get none; the edit distance allowed
// is half the length below 5 characters, else a fifth of it plus 2; ties go
// to the name first in order; internal names ($...) are never offered.
// Names compare case-insensitively here (SQL names are).

function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_v, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1));
      cur.push(v);
      best = Math.min(best, v);
    }
    if (best > max) return max + 1;
    prev = cur;
  }
  return prev[b.length]!;
}

/** The closest candidate to `typed` (names compare case-insensitively), or undefined. */
export function closestName(typed: string, candidates: Iterable<string>): string | undefined {
  const t = typed.toLowerCase();
  if (t.length < 3) return undefined;
  const max = t.length < 5 ? Math.floor(t.length / 2) : Math.floor(t.length / 5) + 2;
  let best: string | undefined;
  let bestD = max + 1;
  for (const c of candidates) {
    if (c.startsWith('$')) continue;
    const d = editDistance(t, c.toLowerCase(), max);
    if (d < bestD || (d === bestD && best !== undefined && c < best)) {
      best = c;
      bestD = d;
    }
  }
  return best;
}

/** `; Did you mean x?` for an error message, or ''. */
export function didYouMean(typed: string, candidates: Iterable<string>): string {
  const c = closestName(typed, candidates);
  return c ? `; Did you mean ${c}?` : '';
}
