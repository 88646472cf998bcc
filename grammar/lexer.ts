// GoogleSQL lexer: a hand-written one-pass scanner producing a compact Token[].
// The parser (a Chevrotain grammar, parser.ts) consumes these through
// tokens.ts, which maps each word to its keyword token type.
//
// Why not Chevrotain's regex lexer: the scanner is one pass over char codes
// (~200 lines), has no start-up cost (no token regex analysis for ~370 token
// types), reports unterminated literals/comments at their start exactly as the
// service does, and its token stream was verified identical to the earlier
// Chevrotain lexer's on the whole corpus plus truncations.
//
// All words lex as one Word kind with an upper-cased `upper` field: keyword-ness
// is a table lookup in tokens.ts (one token type per keyword, non-reserved ones
// in the Identifier category), so the scanner needs no keyword list.
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

export class LexError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
  }
}

const C_0 = 48;
const C_9 = 57;
const isDigit = (c: number) => c >= C_0 && c <= C_9;
const isWordStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isWordChar = (c: number) => isWordStart(c) || isDigit(c);
const isHex = (c: number) => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

const SYMBOLS2 = new Set(['|>', '=>', '->', '<=', '>=', '<>', '!=', '<<', '>>', '||', '@@']);
// `$` is the end anchor in MATCH_RECOGNIZE patterns.
// `!` negates a graph label (graph-patterns.md, label expression).
const SYMBOLS1 = new Set('(),.;*/+-~&^|=<>[]{}?:@%$!'.split(''));

/**
 * Tokenize; the returned array always ends with an EOF token positioned at end of text.
 * A hand-written scanner (one pass, charCode tests): no start-up cost and precise
 * errors for unterminated literals.
 */
export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  const n = sql.length;
  let i = 0;
  let line = 1;
  let lineStart = 0;
  // Track newlines inside multi-line tokens (comments, triple-quoted strings).
  const skipLines = (from: number, to: number) => {
    for (let k = from; k < to; k++) {
      const c = sql.charCodeAt(k);
      if (c === 10 || (c === 13 && sql.charCodeAt(k + 1) !== 10)) {
        line++;
        lineStart = k + 1;
      }
    }
  };
  // The first tab at or after the current line's start (-1: none left): columnAt's own
  // search for it runs to the end of the text when there is none, once per token.
  let tabAt = sql.indexOf('\t');
  const push = (type: T, start: number, end: number) => {
    const image = sql.slice(start, end);
    if (tabAt >= 0 && tabAt < lineStart) tabAt = sql.indexOf('\t', lineStart);
    const column = tabAt < 0 || tabAt >= start ? start - lineStart + 1 : columnAt(sql, lineStart, start);
    out.push({ type, image, upper: type === T.Word ? image.toUpperCase() : image, offset: start, end, line, column });
  };
  const err = (msg: string, at: number): never => {
    throw new LexError(msg, line, columnAt(sql, lineStart, at));
  };

  while (i < n) {
    const c = sql.charCodeAt(i);
    // Whitespace and newlines.
    if (c === 32 || c === 9 || c === 12 || c === 11) {
      i++;
      continue;
    }
    if (c === 10 || c === 13) {
      if (c === 13 && sql.charCodeAt(i + 1) === 10) i++;
      i++;
      line++;
      lineStart = i;
      continue;
    }
    // Comments: --, #, /* */.
    if (c === 35 || (c === 45 && sql.charCodeAt(i + 1) === 45)) {
      while (i < n && sql.charCodeAt(i) !== 10 && sql.charCodeAt(i) !== 13) i++;
      continue;
    }
    if (c === 47 && sql.charCodeAt(i + 1) === 42) {
      const close = sql.indexOf('*/', i + 2);
      if (close < 0) err('Unclosed comment', i);
      skipLines(i, close + 2);
      i = close + 2;
      continue;
    }
    // String / bytes literals with optional r/b prefixes (rb, br, any case).
    let p = 0;
    if (c === 114 || c === 82 || c === 98 || c === 66) {
      const c1 = sql.charCodeAt(i + 1);
      if (c1 === 39 || c1 === 34) p = 1;
      else {
        const lower0 = c | 32;
        const lower1 = c1 | 32;
        const c2 = sql.charCodeAt(i + 2);
        if ((lower1 === 114 || lower1 === 98) && lower1 !== lower0 && (c2 === 39 || c2 === 34)) p = 2;
      }
    }
    const q = sql.charCodeAt(i + p);
    if (q === 39 || q === 34) {
      const start = i;
      let j = i + p;
      if (sql.charCodeAt(j + 1) === q && sql.charCodeAt(j + 2) === q) {
        // Triple-quoted: may span lines; a backslash always pairs with the next char.
        j += 3;
        for (;;) {
          if (j >= n) err('Unclosed triple-quoted string literal', start);
          const d = sql.charCodeAt(j);
          if (d === 92) j += 2;
          else if (d === q && sql.charCodeAt(j + 1) === q && sql.charCodeAt(j + 2) === q) {
            j += 3;
            break;
          } else j++;
        }
        push(T.String, start, j);
        skipLines(start, j);
        i = j;
        continue;
      }
      j++;
      for (;;) {
        if (j >= n) err('Unclosed string literal', start);
        const d = sql.charCodeAt(j);
        if (d === 92) {
          if (j + 1 >= n) err('Unclosed string literal', start);
          j += 2;
        } else if (d === q) {
          j++;
          break;
        } else if (d === 10 || d === 13) err('Unclosed string literal', start);
        else j++;
      }
      push(T.String, start, j);
      skipLines(start, j); // backslash-newline inside a single-quoted literal
      i = j;
      continue;
    }
    // Words (keywords and identifiers).
    if (isWordStart(c)) {
      let j = i + 1;
      while (j < n && isWordChar(sql.charCodeAt(j))) j++;
      push(T.Word, i, j);
      i = j;
      continue;
    }
    // Backtick-quoted identifiers.
    if (c === 96) {
      let j = i + 1;
      for (;;) {
        if (j >= n) err('Unclosed identifier literal', i);
        const d = sql.charCodeAt(j);
        if (d === 92) j += 2;
        else if (d === 96) {
          j++;
          break;
        } else j++;
      }
      // `` names nothing (the reference's lexer refuses it).
      if (j === i + 2) err('Invalid empty identifier', i);
      push(T.QuotedIdent, i, j);
      skipLines(i, j);
      i = j;
      continue;
    }
    // Numbers: 0x1F, 12, 1.5, .5, 1., 1e10, 1.5E-3.
    if (isDigit(c) || (c === 46 && isDigit(sql.charCodeAt(i + 1)))) {
      let j = i;
      if (c === C_0 && (sql.charCodeAt(i + 1) | 32) === 120 && isHex(sql.charCodeAt(i + 2))) {
        j = i + 2;
        while (j < n && isHex(sql.charCodeAt(j))) j++;
        push(T.HexInt, i, j);
        i = j;
        continue;
      }
      let float = false;
      while (j < n && isDigit(sql.charCodeAt(j))) j++;
      if (sql.charCodeAt(j) === 46) {
        float = true;
        j++;
        while (j < n && isDigit(sql.charCodeAt(j))) j++;
      }
      if ((sql.charCodeAt(j) | 32) === 101) {
        let k = j + 1;
        const s = sql.charCodeAt(k);
        if (s === 43 || s === 45) k++;
        if (isDigit(sql.charCodeAt(k))) {
          while (k < n && isDigit(sql.charCodeAt(k))) k++;
          j = k;
          float = true;
        }
      }
      push(float ? T.Float : T.Int, i, j);
      i = j;
      continue;
    }
    // Symbols.
    const two = sql.substr(i, 2);
    if (SYMBOLS2.has(two)) {
      push(T.Symbol, i, i + 2);
      i += 2;
      continue;
    }
    const ch = sql[i]!;
    if (SYMBOLS1.has(ch)) {
      push(T.Symbol, i, i + 1);
      i++;
      continue;
    }
    const cp = String.fromCodePoint(sql.codePointAt(i)!);
    err(`Illegal input character "${cp}"`, i);
  }
  out.push({ type: T.EOF, image: '', upper: '', offset: n, end: n, line, column: columnAt(sql, lineStart, n) });
  checkLiteralAliasSpacing(out);
  return out;
}

const isNumber = (t: Token | undefined) => t !== undefined && (t.type === T.Int || t.type === T.Float || t.type === T.HexInt);
const glued = (a: Token | undefined, b: Token) => a !== undefined && a.end === b.offset;

/**
 * A number glued to a word (`SELECT 42abc`) is refused: query-syntax.md, Implicit aliases, says a literal and its
 * alias need whitespace between them. Not inside names, where the scanner splits one name into a number and a word:
 * a dashed project id (`proj-123.ds`) or a path part after a dot (`t.1col`, `a[0].1x`).
 */
function checkLiteralAliasSpacing(toks: Token[]): void {
  for (let k = 0; k + 1 < toks.length; k++) {
    const num = toks[k]!;
    const word = toks[k + 1]!;
    if (!isNumber(num) || word.type !== T.Word || !glued(num, word)) continue;
    const prev = toks[k - 1];
    if (glued(prev, num)) {
      if (prev!.type === T.Symbol && prev!.image === '.') continue;
      // `my-project-123.ds`: the scanner's float `123.` before the next part. An integer glued to a word after a
      // dash (`my-proj-1a`) is refused: lexical.md's table names take a number or an identifier after a dash.
      if (prev!.type === T.Symbol && prev!.image === '-' && glued(toks[k - 2], prev!) && num.type === T.Float) continue;
      if (num.image.startsWith('.') && (prev!.type !== T.Symbol || prev!.image === ')' || prev!.image === ']')) continue;
    }
    throw new LexError('Missing whitespace between literal and alias', word.line, word.column);
  }
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
  const p = endPosition(sql.slice(0, offset));
  const lineStart = Math.max(sql.lastIndexOf('\n', offset - 1), sql.lastIndexOf('\r', offset - 1)) + 1;
  return { line: p.line, column: columnAt(sql, lineStart, offset) };
}

/**
 * 1-based column of `offset` on the line starting at `lineStart`, with tabs
 * expanded to 8-column stops — the service reports positions that way.
 */
export function columnAt(sql: string, lineStart: number, offset: number): number {
  const tab = sql.indexOf('\t', lineStart);
  if (tab < 0 || tab >= offset) return offset - lineStart + 1;
  let col = 1;
  for (let i = lineStart; i < offset; i++) col = sql.charCodeAt(i) === 9 ? Math.floor((col - 1) / 8 + 1) * 8 + 1 : col + 1;
  return col;
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
