// The grammar of SEARCH's search_query for LOG_ANALYZER and PATTERN_ANALYZER (search_functions page,
// "Rules for search_query"): terms joined by AND, OR and whitespace (an implicit AND), grouped by
// parentheses. A term is a single term (a backslash keeps the next character as text), a phrase in
// double quotes (its tokens next to each other, in order) or a backtick term (an exact, case-sensitive
// match). AND and OR are the operators; NOT, IN and NEAR are reserved and only usable in backticks.
import { fail } from './vec.js';

export type SearchNode =
  | { readonly kind: 'and' | 'or'; readonly items: readonly SearchNode[] }
  | { readonly kind: 'term' | 'phrase' | 'exact'; readonly text: string };

type Lexeme = { kind: 'open' | 'close' | 'and' | 'or' } | { kind: 'term' | 'phrase' | 'exact'; text: string };

const RESERVED_WORDS = new Set(['NOT', 'IN', 'NEAR']);

function bad(q: string, why: string): never {
  return fail(`SEARCH: invalid search query ${JSON.stringify(q)}: ${why}`);
}

/** Reads a quoted part from q[i] (the opening quote); a backslash keeps the next character. */
function quoted(q: string, i: number, quote: string): { text: string; end: number } {
  let text = '';
  for (let k = i + 1; k < q.length; k++) {
    const c = q[k]!;
    if (c === '\\' && k + 1 < q.length) text += q[++k]!;
    else if (c === quote) return { text, end: k + 1 };
    else text += c;
  }
  return bad(q, `unmatched ${quote}`);
}

function lex(q: string): Lexeme[] {
  const out: Lexeme[] = [];
  for (let i = 0; i < q.length; ) {
    const c = q[i]!;
    if (/\s/.test(c)) i++;
    else if (c === '(' || c === ')') {
      out.push({ kind: c === '(' ? 'open' : 'close' });
      i++;
    } else if (c === '"' || c === '`') {
      const r = quoted(q, i, c);
      out.push({ kind: c === '"' ? 'phrase' : 'exact', text: r.text });
      i = r.end;
    } else {
      let text = '';
      let escaped = false;
      while (i < q.length && !/\s/.test(q[i]!) && !'()"`'.includes(q[i]!)) {
        if (q[i] === '\\' && i + 1 < q.length) {
          escaped = true;
          text += q[i + 1]!;
          i += 2;
        } else text += q[i++]!;
      }
      if (!escaped && (text === 'AND' || text === 'OR')) out.push({ kind: text === 'AND' ? 'and' : 'or' });
      else if (!escaped && RESERVED_WORDS.has(text)) bad(q, `${text} is a reserved word; enclose it in backticks`);
      else out.push({ kind: 'term', text });
    }
  }
  return out;
}

/** Parses a search query; OR binds loosest, then AND (written or implicit). */
export function parseSearchQuery(q: string): SearchNode {
  const ls = lex(q);
  let pos = 0;
  const orExpr = (): SearchNode => {
    const items = [andExpr()];
    while (ls[pos]?.kind === 'or') {
      pos++;
      items.push(andExpr());
    }
    return items.length === 1 ? items[0]! : { kind: 'or', items };
  };
  const andExpr = (): SearchNode => {
    const items = [primary()];
    for (;;) {
      const k = ls[pos]?.kind;
      if (k === 'and') {
        pos++;
        items.push(primary());
      } else if (k !== undefined && k !== 'or' && k !== 'close') items.push(primary());
      else break;
    }
    return items.length === 1 ? items[0]! : { kind: 'and', items };
  };
  const primary = (): SearchNode => {
    const l = ls[pos++];
    if (l === undefined) return bad(q, 'a term is missing');
    if (l.kind === 'open') {
      const e = orExpr();
      if (ls[pos++]?.kind !== 'close') bad(q, 'unmatched (');
      return e;
    }
    if (l.kind === 'term' || l.kind === 'phrase' || l.kind === 'exact') return { kind: l.kind, text: l.text };
    return bad(q, `unexpected ${l.kind === 'close' ? ')' : l.kind.toUpperCase()}`);
  };
  if (!ls.length) return { kind: 'and', items: [] };
  const e = orExpr();
  if (pos < ls.length) bad(q, 'unmatched )');
  return e;
}
