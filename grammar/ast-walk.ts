// A generic search of the parser's AST (analyzer checks and the grammar's own
// syntactic rules share it).

/** True when a node below `root` (entering subqueries only if `skip` lets it) satisfies `pred`. */
export function someNode(root: unknown, pred: (node: { kind?: string }) => boolean, skip?: (node: { kind?: string }) => boolean): boolean {
  const stack: unknown[] = [root];
  while (stack.length) {
    const x = stack.pop();
    if (!x || typeof x !== 'object') continue;
    if (Array.isArray(x)) {
      stack.push(...x);
      continue;
    }
    const o = x as { kind?: string };
    if (skip?.(o)) continue;
    if (pred(o)) return true;
    for (const v of Object.values(o)) if (v && typeof v === 'object') stack.push(v);
  }
  return false;
}

/** True when `q` names `lname` (lower case) as a one-part table anywhere, subqueries included. */
export function mentionsTable(q: unknown, lname: string): boolean {
  return someNode(q, (o) => {
    const path = (o as { path?: string[] }).path;
    return o.kind === 'TableRef' && path?.length === 1 && path[0]!.toLowerCase() === lname;
  });
}
