// --quick shrinks every case to at most QUICK_MAX_ROWS rows by rewriting the
// integer upper bounds of GENERATE_ARRAY in the case SQL. The statement shape
// (MOD keys, cross joins, joins) is kept, so quick mode still exercises the
// same plan; only the sizes change.

export const QUICK_MAX_ROWS = 2000;

const GENERATE_ARRAY_LITERAL = /GENERATE_ARRAY\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)/gi;

/**
 * Rewrites one statement. All GENERATE_ARRAY ranges in one statement are
 * treated as if cross-joined (an upper bound of the rows it yields); the
 * largest range is shrunk first until the product is ≤ maxRows, so a
 * `1..1000000 × 1..2` cross join becomes `1..1000 × 1..2`.
 */
export function scaleGenerateArrays(sql: string, maxRows: number = QUICK_MAX_ROWS): string {
  const ranges = [...sql.matchAll(GENERATE_ARRAY_LITERAL)].map((m) => {
    const lo = Number(m[1]);
    const hi = Number(m[2]);
    return { lo, size: Math.max(0, hi - lo + 1) };
  });
  if (ranges.length === 0) return sql;
  const product = (): number => ranges.reduce((p, r) => p * Math.max(1, r.size), 1);
  while (product() > maxRows) {
    let largest = ranges[0]!;
    for (const r of ranges) if (r.size > largest.size) largest = r;
    if (largest.size <= 1) break;
    const others = product() / largest.size;
    largest.size = Math.max(1, Math.min(largest.size - 1, Math.floor(maxRows / others)));
  }
  let n = 0;
  return sql.replace(GENERATE_ARRAY_LITERAL, (whole) => {
    const r = ranges[n++]!;
    const open = whole.indexOf('(');
    return `${whole.slice(0, open)}(${r.lo}, ${r.lo + r.size - 1})`;
  });
}
