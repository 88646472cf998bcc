// Top-N: LIMIT over ORDER BY becomes a bounded sort (the Limit stays for OFFSET).
import type { Rel } from '../../analyzer/resolved.js';

export function topN(rel: Rel): Rel {
  if (rel.kind === 'limit' && rel.limit !== null && rel.input.kind === 'sort' && rel.input.limit === undefined) {
    return { ...rel, input: { ...rel.input, limit: rel.limit + rel.offset } };
  }
  return rel;
}
