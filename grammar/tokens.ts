// Chevrotain token vocabulary for the GoogleSQL parser, and the adapter that
// turns the hand-written scanner's Token[] (grammar/lexer.ts) into the IToken
// vector Chevrotain parses.
//
// Keywords-as-identifiers, the standard Chevrotain way: one token type per
// keyword; non-reserved keywords carry the `Identifier` category so that
// CONSUME(Identifier) accepts them, reserved ones do not. Plain words are
// `Word`. Two more categories: `AnyWord` (every word, reserved or not: field
// names after a dot, date parts, option names) and `PathPart` (AnyWord plus
// quoted identifiers and integers: `ds.123abc` path components).
import { createToken, EOF, type IToken, type TokenType } from 'chevrotain';
import { T, type Token, RESERVED, NON_RESERVED_KEYWORDS } from './lexer.js';

export const Identifier = createToken({ name: 'Identifier' });
export const AnyWord = createToken({ name: 'AnyWord' });
export const PathPart = createToken({ name: 'PathPart' });

export const Word = createToken({ name: 'Word', categories: [Identifier, AnyWord, PathPart] });
export const QuotedIdent = createToken({ name: 'QuotedIdent', categories: [Identifier, PathPart] });
export const StringLit = createToken({ name: 'StringLit' });
export const IntLit = createToken({ name: 'IntLit', categories: [PathPart] });
export const HexIntLit = createToken({ name: 'HexIntLit' });
export const FloatLit = createToken({ name: 'FloatLit' });

/**
 * Words the grammar names as keywords although BigQuery does not list them
 * (contextual words of pipe syntax, MATCH_RECOGNIZE, subscripts...). They are
 * identifiers everywhere else and are described as identifiers in errors.
 */
const CONTEXTUAL = (
  'AFTER ALWAYS DEPTH MATCH_RECOGNIZE MEASURES MODE NAME NEXT PAST PATTERN SETS SKIP STRICT EXTEND ' +
  'STATIC_DESCRIBE SAFE_OFFSET ORDINAL SAFE_ORDINAL REPLICA'
).split(' ');

/** Keyword token types by upper-cased word. */
export const KW: Record<string, TokenType> = Object.create(null) as Record<string, TokenType>;
for (const w of RESERVED) KW[w] = createToken({ name: w, categories: [AnyWord, PathPart] });
for (const w of [...NON_RESERVED_KEYWORDS, ...CONTEXTUAL]) {
  if (!KW[w]) KW[w] = createToken({ name: w, categories: [Identifier, AnyWord, PathPart] });
}

/** Symbol token types by spelling. `>>` is lexed as two adjacent `>` (see toChevrotainTokens). */
export const SYM: Record<string, TokenType> = Object.create(null) as Record<string, TokenType>;
const SYMBOL_NAMES: Record<string, string> = {
  '|>': 'PipeArrow', '=>': 'FatArrow', '->': 'Arrow', '<=': 'LessEq', '>=': 'GreaterEq', '<>': 'LtGt', '!=': 'NotEq',
  '<<': 'ShiftLeft', '||': 'Concat', '@@': 'AtAt', '(': 'LParen', ')': 'RParen', ',': 'Comma', '.': 'Dot', ';': 'Semi',
  '*': 'Star', '/': 'Slash', '+': 'Plus', '-': 'Minus', '~': 'Tilde', '&': 'Amp', '^': 'Caret', '|': 'Pipe', '=': 'Eq',
  '<': 'Less', '>': 'Greater', '[': 'LBracket', ']': 'RBracket', '{': 'LBrace', '}': 'RBrace', '?': 'Question', ':': 'Colon',
  '@': 'At', '%': 'Percent', $: 'Dollar', '!': 'Bang',
};
for (const [s, name] of Object.entries(SYMBOL_NAMES)) SYM[s] = createToken({ name, label: `"${s}"` });

export const ALL_TOKENS: TokenType[] = [
  Identifier, AnyWord, PathPart, Word, QuotedIdent, StringLit, IntLit, HexIntLit, FloatLit,
  ...Object.values(KW), ...Object.values(SYM),
];

/** Chevrotain token plus what the grammar's gates and error messages need from the scanner token. */
export interface XToken extends IToken {
  kind: T;
  /** Upper-cased image of words (keyword tests in gates); image otherwise. */
  upper: string;
  /** Offset just past the token. */
  end: number;
  /** Usable as an unquoted/quoted identifier (non-reserved word or backtick name). */
  ident: boolean;
}

function mk(t: Token, tokenType: TokenType, image = t.image, offset = t.offset, column = t.column): XToken {
  return {
    image,
    startOffset: offset,
    endOffset: offset + image.length - 1,
    startLine: t.line,
    startColumn: column,
    endLine: t.line,
    endColumn: column + image.length - 1,
    tokenType,
    tokenTypeIdx: tokenType.tokenTypeIdx!,
    kind: t.type,
    upper: t.type === T.Word ? t.upper : image,
    end: offset + image.length,
    ident: t.type === T.QuotedIdent || (t.type === T.Word && !RESERVED.has(t.upper)),
  };
}

/**
 * Scanner tokens (without the trailing EOF) → Chevrotain tokens. Two spots the
 * hand-written parser fixed up while parsing are split here instead, since a
 * Chevrotain token vector is immutable during a parse:
 * - `>>` becomes two adjacent `>` so `ARRAY<ARRAY<INT64>>` closes two lists;
 *   the shift operator is `>` `>` with no gap (a gate checks adjacency).
 * - `my-project-123.ds`: the scanner reads `123.` as a float; inside a dashed
 *   name (word `-` float, all adjacent, a word right after) it is `123` `.`.
 */
export function toChevrotainTokens(toks: Token[]): XToken[] {
  const out: XToken[] = [];
  const n = toks.length - 1; // drop EOF: Chevrotain's LA() past the end yields its own EOF token
  for (let i = 0; i < n; i++) {
    const t = toks[i]!;
    switch (t.type) {
      case T.Word:
        out.push(mk(t, KW[t.upper] ?? Word));
        break;
      case T.QuotedIdent:
        out.push(mk(t, QuotedIdent));
        break;
      case T.String:
        out.push(mk(t, StringLit));
        break;
      case T.Int:
        out.push(mk(t, IntLit));
        break;
      case T.HexInt:
        out.push(mk(t, HexIntLit));
        break;
      case T.Float: {
        const prev = toks[i - 1];
        const prev2 = toks[i - 2];
        const next = toks[i + 1]!;
        if (
          /^[0-9]+\.$/.test(t.image) &&
          prev?.type === T.Symbol && prev.image === '-' && prev.end === t.offset &&
          (prev2?.type === T.Word || prev2?.type === T.Int) && prev2.end === prev.offset &&
          (next.type === T.Word || next.type === T.QuotedIdent) && next.offset === t.end
        ) {
          const digits = t.image.slice(0, -1);
          out.push(mk({ ...t, type: T.Int }, IntLit, digits));
          out.push(mk({ ...t, type: T.Symbol }, SYM['.']!, '.', t.end - 1, t.column + digits.length));
          break;
        }
        out.push(mk(t, FloatLit));
        break;
      }
      case T.Symbol:
        if (t.image === '>>') {
          out.push(mk(t, SYM['>']!, '>'));
          out.push(mk(t, SYM['>']!, '>', t.offset + 1, t.column + 1));
        } else out.push(mk(t, SYM[t.image]!));
        break;
      default:
        break;
    }
  }
  return out;
}

export { EOF };
