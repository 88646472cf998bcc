// GoogleSQL lexer, built on Chevrotain's regex lexer.
//
// Why all words share one Word token: BigQuery has ~100 reserved keywords and
// hundreds of non-reserved ones that double as identifiers (DATE, TABLE, VALUE,
// OFFSET...). Lexing every word as Word and testing keyword-ness in the parser
// (`upper` field vs the RESERVED set) avoids a token type per keyword and the
// keyword-as-identifier category machinery, and makes the lexer trivially fast.
import { createToken, Lexer, type TokenType } from 'chevrotain';

export enum T {
  Word = 1,
  QuotedIdent,
  String,
  Int,
  HexInt,
  Float,
  Symbol,
  EOF,
}

export interface Token {
  type: T;
  /** Source text of the token. */
  image: string;
  /** Upper-cased image for Word tokens (keyword checks); image otherwise. */
  upper: string;
  offset: number;
  /** Offset just past the token. */
  end: number;
  line: number;
  column: number;
}

/** BigQuery's reserved keywords: never usable as unquoted identifiers. */
export const RESERVED = new Set(
  (
    'ALL AND ANY ARRAY AS ASC ASSERT_ROWS_MODIFIED AT BETWEEN BY CASE CAST COLLATE CONTAINS CREATE CROSS CUBE ' +
    'CURRENT DEFAULT DEFINE DESC DISTINCT ELSE END ENUM ESCAPE EXCEPT EXCLUDE EXISTS EXTRACT FALSE FETCH FOLLOWING ' +
    'FOR FROM FULL GROUP GROUPING GROUPS HASH HAVING IF IGNORE IN INNER INTERSECT INTERVAL INTO IS JOIN LATERAL ' +
    'LEFT LIKE LIMIT LOOKUP MERGE NATURAL NEW NO NOT NULL NULLS OF ON OR ORDER OUTER OVER PARTITION PRECEDING ' +
    'PROTO QUALIFY RANGE RECURSIVE RESPECT RIGHT ROLLUP ROWS SELECT SET SOME STRUCT TABLESAMPLE THEN TO TREAT TRUE ' +
    'UNBOUNDED UNION UNNEST USING WHEN WHERE WINDOW WITH WITHIN'
  ).split(' '),
);

/**
 * Non-reserved keywords: usable as identifiers, but described as "keyword X" in
 * error messages like the real service does.
 */
export const NON_RESERVED_KEYWORDS = new Set(
  (
    'ABORT ACCESS ACTION ADD AGGREGATE ALTER ANALYZE ASSERT BATCH BEGIN BIGDECIMAL BIGNUMERIC BREAK CALL CASCADE CHECK ' +
    'CLAMPED CLONE CLUSTER COLUMN COLUMNS COMMIT CONNECTION CONSTANT CONSTRAINT CONTINUE COPY CORRESPONDING DATA DATABASE DATE ' +
    'DATETIME DECIMAL DECLARE DEFINER DELETE DESCRIBE DETERMINISTIC DO DROP ELSEIF ENFORCED ERROR EXCEPTION EXECUTE EXPLAIN ' +
    'EXPORT EXTERNAL FILES FILTER FILL FIRST FOREIGN FORMAT FUNCTION GENERATED GRANT IDENTITY IMMEDIATE IMPORT INCLUDE ' +
    'INDEX INOUT INPUT INSERT INVOKER ISOLATION ITERATE JSON KEY LANGUAGE LAST LEAVE LEVEL LOAD LOOP MACRO MATCH MATCHED ' +
    'MATERIALIZED MAX MESSAGE MIN MODEL MODULE NUMERIC OFFSET ONLY OPTIONS OUT OUTPUT OVERWRITE PERCENT PIVOT POLICIES POLICY ' +
    'PRIMARY PRIVATE PRIVILEGES PROCEDURE PUBLIC QUALIFY RAISE READ REFERENCES REMOTE RENAME REPEAT REPEATABLE REPLACE ' +
    'REPLACE_FIELDS RESTRICT RETURN RETURNS REVOKE ROLLBACK ROW RUN SAFE_CAST SCHEMA SEARCH SECURITY SHOW SIMPLE SNAPSHOT ' +
    'SOURCE SQL STABLE STORED STORING SYSTEM SYSTEM_TIME TABLE TARGET TEMP TEMPORARY TIME TIMESTAMP TRANSACTION TRANSFORM ' +
    'TRUNCATE TYPE UNDROP UNIQUE UNKNOWN UNPIVOT UNTIL UPDATE VALUE VALUES VECTOR VIEW VIEWS VOLATILE WEIGHT WHILE WRITE ZONE'
  ).split(' '),
);

const WhiteSpace = createToken({ name: 'WhiteSpace', pattern: /[ \t\r\n\f\v]+/, group: Lexer.SKIPPED });
const LineComment = createToken({ name: 'LineComment', pattern: /(?:--|#)[^\n\r]*/, group: Lexer.SKIPPED });
const BlockComment = createToken({ name: 'BlockComment', pattern: /\/\*[\s\S]*?\*\//, group: Lexer.SKIPPED });
// A backslash always pairs with the next character (also in raw strings, where it
// is kept), so `r'\''` is one literal. Single-quoted forms cannot span lines.
const StringTok = createToken({
  name: 'String',
  pattern:
    /(?:[rR][bB]?|[bB][rR]?)?(?:'''(?:[^'\\]|\\[\s\S]|'(?!''))*'''|"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""|'(?:[^'\\\r\n]|\\[\s\S])*'|"(?:[^"\\\r\n]|\\[\s\S])*")/,
});
// Fallbacks so unterminated literals become precise errors instead of lexer noise.
// Tried before String: a triple quote with no closing triple anywhere after it
// (otherwise `"""abc` would lex as the empty string `""` followed by junk).
const UnclosedTriple = createToken({
  name: 'UnclosedTriple',
  pattern: /(?:[rR][bB]?|[bB][rR]?)?(?:'''(?![\s\S]*''')|"""(?![\s\S]*"""))/,
});
const UnclosedString = createToken({ name: 'UnclosedString', pattern: /(?:[rR][bB]?|[bB][rR]?)?['"]/ });
const QuotedIdent = createToken({ name: 'QuotedIdent', pattern: /`(?:[^`\\]|\\[\s\S])*`/ });
const UnclosedIdent = createToken({ name: 'UnclosedIdent', pattern: /`/ });
const UnclosedComment = createToken({ name: 'UnclosedComment', pattern: /\/\*/ });
const Word = createToken({ name: 'Word', pattern: /[A-Za-z_][A-Za-z0-9_]*/ });
const HexInt = createToken({ name: 'HexInt', pattern: /0[xX][0-9a-fA-F]+/ });
const Float = createToken({
  name: 'Float',
  pattern: /(?:[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)/,
});
const Int = createToken({ name: 'Int', pattern: /[0-9]+/ });
const Symbol = createToken({
  name: 'Symbol',
  pattern: /\|>|=>|->|<=|>=|<>|!=|<<|>>|\|\||@@|[(),.;*\/+\-~&^|=<>\[\]{}?:@%]/,
});

const allTokens: TokenType[] = [
  WhiteSpace,
  LineComment,
  BlockComment,
  UnclosedComment,
  UnclosedTriple,
  StringTok,
  UnclosedString,
  QuotedIdent,
  UnclosedIdent,
  Word,
  HexInt,
  Float,
  Int,
  Symbol,
];

/** Construct a Chevrotain lexer (exported for the start-up cost test). */
export function buildLexer(): Lexer {
  // positionTracking "full" gives line/column; validations are off because the
  // token set is fixed and validated by tests (saves start-up time).
  return new Lexer(allTokens, { positionTracking: 'full', skipValidations: true, ensureOptimizations: false });
}

let lexer: Lexer | undefined;
function getLexer(): Lexer {
  lexer ??= buildLexer();
  return lexer;
}

export class LexError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

const typeMap = new Map<TokenType, T>([
  [Word, T.Word],
  [QuotedIdent, T.QuotedIdent],
  [StringTok, T.String],
  [Int, T.Int],
  [HexInt, T.HexInt],
  [Float, T.Float],
  [Symbol, T.Symbol],
]);

/** Tokenize; the returned array always ends with an EOF token positioned at end of text. */
export function tokenize(sql: string): Token[] {
  const res = getLexer().tokenize(sql);
  const out: Token[] = [];
  for (const t of res.tokens) {
    const tt = t.tokenType;
    const line = t.startLine ?? 1;
    const column = t.startColumn ?? 1;
    const type = typeMap.get(tt);
    if (type === undefined) {
      if (tt === UnclosedTriple) throw new LexError('Unclosed triple-quoted string literal', line, column);
      if (tt === UnclosedString) throw new LexError('Unclosed string literal', line, column);
      if (tt === UnclosedIdent) throw new LexError('Unclosed identifier literal', line, column);
      if (tt === UnclosedComment) throw new LexError('Unclosed comment', line, column);
      throw new LexError(`Unexpected character "${t.image}"`, line, column);
    }
    out.push({
      type,
      image: t.image,
      upper: type === T.Word ? t.image.toUpperCase() : t.image,
      offset: t.startOffset,
      end: t.startOffset + t.image.length,
      line,
      column,
    });
  }
  if (res.errors.length > 0) {
    const e = res.errors[0]!;
    const ch = sql.charAt(e.offset);
    throw new LexError(
      ch === '\\' ? `Illegal escape sequence: \\` : `Illegal input character "${ch}"`,
      e.line ?? 1,
      e.column ?? 1,
    );
  }
  const eof = endPosition(sql);
  out.push({ type: T.EOF, image: '', upper: '', offset: sql.length, end: sql.length, line: eof.line, column: eof.column });
  return out;
}

/** 1-based line/column just past the end of the text. */
function endPosition(sql: string): { line: number; column: number } {
  let line = 1;
  let lastNl = -1;
  for (let i = 0; i < sql.length; i++) {
    const c = sql.charCodeAt(i);
    if (c === 10) {
      line++;
      lastNl = i;
    } else if (c === 13 && sql.charCodeAt(i + 1) !== 10) {
      line++;
      lastNl = i;
    }
  }
  return { line, column: sql.length - lastNl };
}

/** 1-based line/column of a char offset (used for errors inside literals). */
export function positionAt(sql: string, offset: number): { line: number; column: number } {
  return endPosition(sql.slice(0, offset));
}

// ---------------------------------------------------------------------------
// Literal unescaping (GoogleSQL rules)
// ---------------------------------------------------------------------------

export interface DecodedString {
  bytes: boolean;
  raw: boolean;
  /** Text for string literals; for bytes literals each char code is one byte (0-255). */
  value: string;
}

export class LiteralError extends Error {
  constructor(
    message: string,
    /** Offset of the problem relative to the literal token start. */
    readonly relOffset: number,
  ) {
    super(message);
  }
}

/** Decode a String token image (with prefix and quotes) to its value. */
export function decodeStringToken(image: string): DecodedString {
  let i = 0;
  let raw = false;
  let bytes = false;
  while (i < 2) {
    const c = image[i];
    if (c === 'r' || c === 'R') raw = true;
    else if (c === 'b' || c === 'B') bytes = true;
    else break;
    i++;
  }
  const q = image[i]!;
  const triple = image.startsWith(q + q + q, i) && image.length - i >= 6;
  const qlen = triple ? 3 : 1;
  const body = image.slice(i + qlen, image.length - qlen);
  const bodyStart = i + qlen;
  if (raw) return { bytes, raw, value: bytes ? utf8Bytes(body) : body };
  return { bytes, raw, value: unescape(body, bytes, bodyStart) };
}

function utf8Bytes(s: string): string {
  // Bytes literal source chars are UTF-8 encoded; represent each byte as a char.
  const buf = Buffer.from(s, 'utf8');
  let out = '';
  for (const b of buf) out += String.fromCharCode(b);
  return out;
}

const SIMPLE_ESC: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  '?': '?',
  '"': '"',
  "'": "'",
  '`': '`',
};

function unescape(body: string, bytes: boolean, base: number): string {
  if (body.indexOf('\\') < 0) return bytes ? utf8Bytes(body) : body;
  let out = '';
  let plain = '';
  const flushPlain = () => {
    if (plain) {
      out += bytes ? utf8Bytes(plain) : plain;
      plain = '';
    }
  };
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      plain += c;
      continue;
    }
    flushPlain();
    const at = base + i;
    const e = body[i + 1];
    if (e === undefined) throw new LiteralError('Illegal escape sequence: \\', at);
    const simple = SIMPLE_ESC[e];
    if (simple !== undefined) {
      out += simple;
      i++;
      continue;
    }
    if (e === 'x' || e === 'X') {
      const hex = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 2, i + 4));
      if (!hex || hex[0].length !== 2) throw new LiteralError(`Illegal escape sequence: Hex escape must be followed by 2 hex digits but saw: \\${body.slice(i + 1, i + 4)}`, at);
      const v = parseInt(hex[0], 16);
      out += bytes ? String.fromCharCode(v) : String.fromCodePoint(v);
      i += 3;
      continue;
    }
    if (e === 'u' || e === 'U') {
      const n = e === 'u' ? 4 : 8;
      const hex = body.slice(i + 2, i + 2 + n);
      if (bytes) throw new LiteralError(`Illegal escape sequence: Unicode escape sequence \\${e} cannot be used in bytes literals`, at);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex))
        throw new LiteralError(`Illegal escape sequence: \\${e} must be followed by ${n} hex digits but saw: \\${body.slice(i + 1, i + 2 + n)}`, at);
      const cp = parseInt(hex, 16);
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        throw new LiteralError(`Illegal escape sequence: Value of \\${body.slice(i + 1, i + 2 + n)} exceeds Unicode limit (0x0010FFFF) or is a surrogate`, at);
      out += String.fromCodePoint(cp);
      i += 1 + n;
      continue;
    }
    if (e >= '0' && e <= '7') {
      const oct = body.slice(i + 1, i + 4);
      if (!/^[0-7]{3}$/.test(oct)) throw new LiteralError(`Illegal escape sequence: Octal escape must be followed by 3 octal digits but saw: \\${oct}`, at);
      const v = parseInt(oct, 8);
      if (v > 255) throw new LiteralError(`Illegal escape sequence: Octal value out of range: \\${oct}`, at);
      out += bytes ? String.fromCharCode(v) : String.fromCodePoint(v);
      i += 3;
      continue;
    }
    throw new LiteralError(`Illegal escape sequence: \\${e}`, at);
  }
  flushPlain();
  return out;
}

/** Unescape a backtick-quoted identifier (same escapes as strings, minus bytes). */
export function decodeQuotedIdent(image: string): string {
  return unescape(image.slice(1, -1), false, 1);
}
