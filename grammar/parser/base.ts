// GoogleSQL parser, ground floor: token helpers, error wording and the small
// rules every layer uses.
//
// The parser is one Chevrotain EmbeddedActionsParser building the typed AST
// of grammar/ast.ts directly in its embedded actions (no CST), recovery off.
//
// Lookahead is LL(1) from the grammar (maxLookahead 1 keeps performSelfAnalysis
// cheap); the few decisions GoogleSQL needs more context for are GATEs over the
// next tokens (`IF NOT EXISTS`, `WITH OFFSET`, `PIVOT (`...), and BACKTRACK for
// `((SELECT ...) ...)`, which is a subquery or a parenthesized expression /
// join depending on what follows the inner query. Alternatives are ordered
// (first viable wins), which is how the keyword/identifier overlaps resolve.
//
// Recording phase: Chevrotain runs every rule once at construction with dummy
// tokens to record the grammar. Hence: every DSL call must be reached while
// recording (conditions are GATEs, or `must()` blocks, which recording always
// enters), and results of SUBRULE/CONSUME are only mutated or inspected outside
// recording (`live`). DSL occurrence indices are unique per rule (`or(3, ...)`):
// Chevrotain keys its lookahead cache on them.
//
// Error messages: the service's wording is produced by `errorMessageProvider`
// (MismatchedToken → "Expected X but got Y", NoViableAlt/EarlyExit → "Unexpected
// Y" or, with an ERR_MSG, "Expected <ERR_MSG> but got Y", NotAllInputParsed →
// "Expected end of input but got Y") and by `fail()` for semantic checks. The
// position is that of the offending token (end of text for end of script).
//
// Layers: the class is built as a chain, one file per statement family, each
// extending the one below: base < expressions < from < queries < pipe < ddl <
// dml < statements (GoogleSqlParser, which records the grammar once every
// layer's rules exist). A rule of a higher layer that a lower one needs
// (expressions hold subqueries) is declared abstract in the lower class.
import type * as A from '../ast.js';
import { EmbeddedActionsParser, getLookaheadPaths, LLkLookaheadStrategy, MismatchedTokenException, type ILookaheadStrategy, type IOrAlt, type IToken, type IParserErrorMessageProvider, type TokenType, type ParserMethod } from 'chevrotain';
import { T, tokenize, RESERVED, NON_RESERVED_KEYWORDS, decodeStringToken, decodeQuotedIdent, LexError, LiteralError, positionAt } from '../lexer.js';
import { SqlSyntaxError } from '../errors.js';
import { ALL_TOKENS, KW, SYM, Identifier, AnyWord, PathPart, QuotedIdent, StringLit, IntLit, EOF, toChevrotainTokens, type XToken } from '../tokens.js';

export const S = SYM as Record<string, TokenType>;
export const LP = S['(']!;
export const RP = S[')']!;
export const COMMA = S[',']!;
export const DOT = S['.']!;
export const K = KW;

/** The service's description of a token in error messages. */
export function describeToken(t: IToken): string {
  if (t.tokenType === EOF) return 'end of script';
  const x = t as XToken;
  switch (x.kind) {
    case T.Word:
      if (RESERVED.has(x.upper) || NON_RESERVED_KEYWORDS.has(x.upper)) return `keyword ${x.upper}`;
      return `identifier "${x.image}"`;
    case T.QuotedIdent:
      return `identifier ${x.image}`;
    case T.Int:
    case T.HexInt:
      return `integer literal "${x.image}"`;
    case T.Float:
      return `floating point literal "${x.image}"`;
    case T.String: {
      const p = /^[rRbB]*/.exec(x.image)![0].toLowerCase();
      return `${p.includes('b') ? 'bytes' : 'string'} literal ${x.image}`;
    }
    default:
      return `"${x.image}"`;
  }
}

export const QUERY_START = new Set(['SELECT', 'WITH', 'FROM']);

/** What CONSUME(tokType) expected, in the service's words; undefined = just "Unexpected". */
function expectedLabel(tt: TokenType): string | undefined {
  if (tt === Identifier || tt === AnyWord || tt === PathPart || tt === QuotedIdent) return undefined;
  if (tt === StringLit) return 'string literal';
  if (tt === IntLit) return 'integer literal';
  if (K[tt.name] === tt) return `keyword ${tt.name}`;
  return typeof tt.LABEL === 'string' ? tt.LABEL : tt.name;
}

// Messages are stored without the "Syntax error: " prefix; the boundary adds it and the position.
const errorMessageProvider: IParserErrorMessageProvider = {
  buildMismatchTokenMessage({ expected, actual }) {
    const e = expectedLabel(expected);
    return e ? `Expected ${e} but got ${describeToken(actual)}` : `Unexpected ${describeToken(actual)}`;
  },
  buildNotAllInputParsedMessage({ firstRedundant }) {
    return `Expected end of input but got ${describeToken(firstRedundant)}`;
  },
  buildNoViableAltMessage({ actual, customUserDescription }) {
    return customUserDescription ? `Expected ${customUserDescription} but got ${describeToken(actual[0]!)}` : `Unexpected ${describeToken(actual[0]!)}`;
  },
  buildEarlyExitMessage({ actual, customUserDescription }) {
    return customUserDescription ? `Expected ${customUserDescription} but got ${describeToken(actual[0]!)}` : `Unexpected ${describeToken(actual[0]!)}`;
  },
};

/**
 * Chevrotain's lookahead for an OR with GATEs, as a table per alternative:
 * the same decision (first alternative, in order, whose GATE is not false and
 * whose first-token set holds the next token; an alternative that may be empty
 * matches any token), without Chevrotain's per-call array of the GATEs and its
 * path loops (each OR with a GATE ran them on every call). Undefined when a
 * path is longer than one token (never at maxLookahead 1): Chevrotain's own.
 */
function gatedOneTokenLookahead(options: Parameters<ILookaheadStrategy['buildLookaheadForAlternation']>[0]): ((this: unknown, orAlts?: IOrAlt<unknown>[]) => number | undefined) | undefined {
  if (options.dynamicTokensEnabled) return undefined;
  const paths = getLookaheadPaths({ occurrence: options.prodOccurrence, rule: options.rule, prodType: 'Alternation', maxLookahead: options.maxLookahead });
  const always: boolean[] = [];
  const firsts: Set<number>[] = [];
  for (const alt of paths) {
    const first = new Set<number>();
    let empty = false;
    for (const path of alt) {
      if (path.length > 1) return undefined;
      const tt = path[0];
      if (tt === undefined) {
        empty = true;
        continue;
      }
      first.add(tt.tokenTypeIdx!);
      // A category token type matches the token types it categorizes.
      if (tt.isParent === true) for (const [idx, yes] of Object.entries(tt.categoryMatchesMap ?? {})) if (yes === true) first.add(Number(idx));
    }
    always.push(empty);
    firsts.push(first);
  }
  let size = 0;
  for (const f of firsts) for (const i of f) size = Math.max(size, i + 1);
  const tables = firsts.map((f) => {
    const t = new Uint8Array(size);
    for (const i of f) t[i] = 1;
    return t;
  });
  const n = paths.length;
  return function (this: unknown, orAlts?: IOrAlt<unknown>[]): number | undefined {
    const idx = (this as { LA_FAST(k: number): IToken }).LA_FAST(1).tokenTypeIdx;
    for (let t = 0; t < n; t++) {
      const gate = (orAlts![t] as { GATE?: () => boolean }).GATE;
      if (gate !== undefined && gate.call(this) === false) continue;
      if (always[t] || tables[t]![idx] === 1) return t;
    }
    return undefined;
  };
}

/**
 * Chevrotain's LL(k) lookahead, but each decision's function is built on its
 * first use instead of for the whole grammar at construction: a query touches
 * a small part of the grammar, so start-up pays only for grammar recording.
 */
class LazyLookahead implements ILookaheadStrategy {
  private readonly llk = new LLkLookaheadStrategy({ maxLookahead: 1 });
  validate(options: Parameters<ILookaheadStrategy['validate']>[0]) {
    return this.llk.validate(options);
  }
  buildLookaheadForAlternation(options: Parameters<ILookaheadStrategy['buildLookaheadForAlternation']>[0]) {
    const llk = this.llk;
    let fn: ((orAlts?: IOrAlt<unknown>[]) => number | undefined) | undefined;
    return function (this: unknown, orAlts?: IOrAlt<unknown>[]) {
      fn ??= (options.hasPredicates && gatedOneTokenLookahead(options)) || llk.buildLookaheadForAlternation(options);
      return fn.call(this, orAlts);
    };
  }
  buildLookaheadForOptional(options: Parameters<ILookaheadStrategy['buildLookaheadForOptional']>[0]) {
    const llk = this.llk;
    let fn: (() => boolean) | undefined;
    return function (this: unknown) {
      fn ??= llk.buildLookaheadForOptional(options);
      return fn.call(this);
    };
  }
}

export abstract class ParserBase extends EmbeddedActionsParser {
  /** Defined in expressions.ts (the rules here take expressions: OPTIONS values, FOR SYSTEM_TIME AS OF). */
  protected abstract expr: ParserMethod<[], A.Expr>;

  protected sql = '';
  protected paramIndex = 0;
  /** Position reported for errors at end of input (Chevrotain's EOF token has none). */
  protected eofLine = 1;
  protected eofColumn = 1;
  protected eofOffset = 0;

  constructor() {
    // skipValidations: the grammar is deliberately ambiguous at LL(1) (ordered
    // alternatives + gates, like the service's keyword/identifier overlaps), and
    // the validations would also cost start-up time.
    super(ALL_TOKENS, { recoveryEnabled: false, maxLookahead: 1, skipValidations: true, errorMessageProvider, lookaheadStrategy: new LazyLookahead() });
  }

  protected load(sql: string): void {
    this.sql = sql;
    this.paramIndex = 0;
    let toks;
    try {
      toks = tokenize(sql);
    } catch (e) {
      if (e instanceof LexError) throw new SqlSyntaxError(`Syntax error: ${e.message}`, e.line, e.column);
      throw e;
    }
    const eof = toks[toks.length - 1]!;
    this.eofLine = eof.line;
    this.eofColumn = eof.column;
    this.eofOffset = eof.offset;
    this.input = toChevrotainTokens(toks);
  }

  protected run<R>(rule: () => R): R {
    let r: R;
    try {
      r = rule();
    } catch (e) {
      // Pathologically deep nesting overflows the stack: report, don't crash.
      if (e instanceof RangeError) throw new SqlSyntaxError('Syntax error: Statement is too deeply nested for this emulator\'s parser (nested subqueries, CASE or function calls several hundred levels deep); simplify the query', 1, 1);
      throw e;
    }
    const err = this.errors[0];
    if (err) {
      const t = err.token;
      if (t.tokenType === EOF || Number.isNaN(t.startOffset)) throw new SqlSyntaxError(`Syntax error: ${err.message}`, this.eofLine, this.eofColumn);
      throw new SqlSyntaxError(`Syntax error: ${err.message}`, t.startLine!, t.startColumn!);
    }
    return r;
  }

  // -------------------------------------------------------------------------
  // Token helpers (gates and actions)
  // -------------------------------------------------------------------------

  protected get live(): boolean {
    return !this.RECORDING_PHASE;
  }
  /**
   * Guard for a block that must be parsed (not lookahead-filtered) when `cond`
   * holds, like descent's `if (!isSym(')')) parseList()`: errors then come from
   * inside the block ("Expected type ..."), not "Unexpected ...". Always true
   * while recording so the block's DSL calls are recorded. Only used after a
   * consumed token, so the rule's first set is unaffected.
   */
  protected must(cond: boolean): boolean {
    return this.RECORDING_PHASE || cond;
  }
  protected la(k: number): XToken {
    return this.LA(k) as XToken;
  }
  protected isKw(word: string, k = 1): boolean {
    const t = this.la(k);
    return t.kind === T.Word && t.upper === word;
  }
  protected isSym(s: string, k = 1): boolean {
    const t = this.la(k);
    return t.kind === T.Symbol && t.image === s;
  }
  protected isIdent(k = 1): boolean {
    return this.la(k).ident === true;
  }
  protected isEof(k = 1): boolean {
    return this.la(k).tokenType === EOF;
  }
  protected isType(tt: T, k = 1): boolean {
    return this.la(k).kind === tt;
  }
  protected isPathPart(k: number): boolean {
    const t = this.la(k).kind;
    return t === T.Word || t === T.QuotedIdent || t === T.Int;
  }
  /** True if the tokens at k (after any run of `(`) start a query. */
  protected startsQuery(k = 1): boolean {
    while (this.isSym('(', k)) k++;
    const t = this.la(k);
    return t.kind === T.Word && QUERY_START.has(t.upper);
  }
  protected loc(t: IToken): A.Loc {
    return { line: t.startLine!, column: t.startColumn!, offset: t.startOffset };
  }
  protected x(t: IToken): XToken {
    return t as XToken;
  }
  protected up(t: IToken): string {
    return (t as XToken).upper ?? '';
  }
  protected prevEnd(): number {
    return this.la(0).end ?? 0;
  }
  protected stmtEnd<S extends { start: number; end: number }>(s: S): S {
    if (this.live) s.end = this.prevEnd();
    return s;
  }
  protected curOffset(): number {
    const t = this.la(1);
    return t.tokenType === EOF ? this.eofOffset : t.startOffset;
  }

  /** Throws a recognition error (so BACKTRACK treats it as a failed alternative). */
  protected failMsg(t: IToken, msg: string): never {
    // SAVE_ERROR (not in Chevrotain's typings) records the error in `errors`: the
    // top-level rule swallows recognition exceptions, so an unsaved one is lost.
    const save = (this as unknown as { SAVE_ERROR(e: Error): Error }).SAVE_ERROR.bind(this);
    throw save(new MismatchedTokenException(msg, t, this.LA(0)));
  }
  protected fail(t: IToken, expected?: string): never {
    return this.failMsg(t, expected ? `Expected ${expected} but got ${describeToken(t)}` : `Unexpected ${describeToken(t)}`);
  }

  protected nameOf(t: IToken): string {
    if (t.tokenType === QuotedIdent) {
      try {
        return decodeQuotedIdent(t.image);
      } catch (e) {
        if (e instanceof LiteralError) this.failMsg(t, e.message);
        throw e;
      }
    }
    return t.image;
  }
  protected decodeString(t: IToken) {
    if (!this.live) return { bytes: false, raw: false, value: '' };
    try {
      return decodeStringToken(t.image);
    } catch (e) {
      if (e instanceof LiteralError) {
        const p = positionAt(this.sql, t.startOffset + e.relOffset);
        this.failMsg({ ...t, startLine: p.line, startColumn: p.column }, e.message);
      }
      throw e;
    }
  }

  protected speculate(rule: () => unknown): boolean {
    const saveParam = this.paramIndex;
    const ok = this.BACKTRACK(rule).call(this);
    this.paramIndex = saveParam;
    return ok;
  }

  protected setOpHead(): boolean {
    const t = this.la(1);
    if (t.kind !== T.Word) return false;
    if (t.upper === 'UNION' || t.upper === 'INTERSECT' || t.upper === 'EXCEPT') return true;
    if (t.upper === 'OUTER') return this.isKw('UNION', 2) || this.isKw('INTERSECT', 2) || this.isKw('EXCEPT', 2);
    if (t.upper === 'FULL' || t.upper === 'LEFT' || t.upper === 'INNER') {
      let k = 2;
      if (t.upper !== 'INNER' && this.isKw('OUTER', k)) k++;
      return this.isKw('UNION', k) || this.isKw('INTERSECT', k) || this.isKw('EXCEPT', k);
    }
    return false;
  }


  /** Recording-phase-safe views of SUBRULE results (dummies while the grammar is recorded). */
  protected str(v: unknown): string {
    return typeof v === 'string' ? v : '';
  }
  protected joined(p: A.Path): string {
    return Array.isArray(p) ? p.join('.') : '';
  }

  // -------------------------------------------------------------------------
  // Small shared rules
  // -------------------------------------------------------------------------

  protected ident = this.RULE('ident', (): string => this.nameOf(this.consume(1, Identifier)));

  /** After a dot any word (even reserved), a quoted name or digits is a field/path component. */
  protected identAfterDot = this.RULE('identAfterDot', (): string => this.nameOf(this.consume(1, PathPart)));

  protected stringLit = this.RULE('stringLit', (): string => this.decodeString(this.consume(1, StringLit)).value);

  protected identList = this.RULE('identList', (): string[] => {
    const out = [this.subrule(1, this.ident)];
    this.many(2, () => {
      this.consume(3, COMMA);
      out.push(this.subrule(4, this.ident));
    });
    return out;
  });

  /**
   * A value DEFAULT may stand for: an INSERT or MERGE INSERT VALUES item, an UPDATE SET value. DEFAULT is a
   * reserved keyword and no expression anywhere else (`CONCAT(DEFAULT, 'x')`, `SELECT DEFAULT`: a syntax error).
   */
  protected valueOrDefault = this.RULE('valueOrDefault', (): A.Expr =>
    this.or(1, [
      { ALT: (): A.Expr => ({ kind: 'DefaultExpr', loc: this.loc(this.consume(2, K.DEFAULT!)) }) },
      { ALT: (): A.Expr => this.subrule(3, this.expr) },
    ]),
  );

  /** A VALUES row's items (valueOrDefault). */
  protected valuesList = this.RULE('valuesList', (): A.Expr[] => {
    const out = [this.subrule(1, this.valueOrDefault)];
    this.many(2, () => {
      this.consume(3, COMMA);
      out.push(this.subrule(4, this.valueOrDefault));
    });
    return out;
  });

  protected exprList = this.RULE('exprList', (): A.Expr[] => {
    const out = [this.subrule(1, this.expr)];
    this.many(2, () => {
      this.consume(3, COMMA);
      out.push(this.subrule(4, this.expr));
    });
    return out;
  });

  /** Path with possibly dashed first component (my-project.ds.t). */
  protected path = this.RULE('path', (): A.Path => {
    const parts = [this.subrule(1, this.pathComponent, { ARGS: [true] })];
    this.many(2, {
      GATE: () => this.isSym('.') && this.isPathPart(2),
      DEF: () => {
        this.consume(3, DOT);
        parts.push(this.subrule(4, this.pathComponent, { ARGS: [false] }));
      },
    });
    return parts;
  });

  private pathComponent = this.RULE('pathComponent', (first?: boolean): string => {
    const t = this.or(1, [
      { GATE: () => first === true, ALT: () => this.consume(2, Identifier) },
      { GATE: () => first !== true, ALT: () => this.consume(3, PathPart) },
    ]);
    let name = this.nameOf(t);
    let end = this.x(t).end;
    // Join adjacent `-word` / `-123` / `-123abc` pieces: unquoted project ids may contain dashes, in the path's first
    // part only (lexical.md, table names: "Only the first identifier in the table path ... can have dashes").
    this.many(4, {
      GATE: () => {
        if (first !== true || this.x(t).kind !== T.Word) return false;
        const d = this.la(1);
        const w = this.la(2);
        return d.kind === T.Symbol && d.image === '-' && d.startOffset === end && w.startOffset === d.end && (w.kind === T.Word || w.kind === T.Int);
      },
      DEF: () => {
        this.consume(5, S['-']!);
        const w = this.or(6, [{ ALT: () => this.consume(7, AnyWord) }, { ALT: () => this.consume(8, IntLit) }]);
        name += '-' + w.image;
        end = this.x(w).end;
        // `123abc` lexes as Int + Word: glue adjacent pieces.
        this.many(9, {
          GATE: () => (this.la(1).kind === T.Word || this.la(1).kind === T.Int) && this.la(1).startOffset === end,
          DEF: () => {
            const p = this.or(10, [{ ALT: () => this.consume(11, AnyWord) }, { ALT: () => this.consume(12, IntLit) }]);
            name += p.image;
            end = this.x(p).end;
          },
        });
      },
    });
    return name;
  });

  protected ifNotExists = this.RULE('ifNotExists', (): boolean => {
    return (
      this.option(1, {
        GATE: () => this.isKw('NOT', 2),
        DEF: () => {
          this.consume(2, K.IF!);
          this.consume(3, K.NOT!);
          this.consume(4, K.EXISTS!);
          return true;
        },
      }) === true
    );
  });

  protected ifExists = this.RULE('ifExists', (): boolean => {
    return (
      this.option(1, {
        GATE: () => this.isKw('EXISTS', 2),
        DEF: () => {
          this.consume(2, K.IF!);
          this.consume(3, K.EXISTS!);
          return true;
        },
      }) === true
    );
  });

  protected optionsList = this.RULE('optionsList', (): A.OptionEntry[] => {
    this.consume(1, K.OPTIONS!);
    this.consume(2, LP);
    const out: A.OptionEntry[] = [];
    this.option(3, () => {
      out.push(this.subrule(4, this.optionEntry));
      this.many(7, () => {
        this.consume(8, COMMA);
        // A trailing comma is allowed; anything else must be an entry.
        this.or(9, [{ GATE: () => this.isSym(')'), ALT: () => undefined }, { ALT: () => out.push(this.subrule(10, this.optionEntry)) }]);
      });
    });
    this.consume(13, RP);
    return out;
  });
  /** `name = value`; the options of SELECT WITH AGGREGATION_THRESHOLD / DIFFERENTIAL_PRIVACY are also written `name => value`. */
  private optionEntry = this.RULE('optionEntry', (): A.OptionEntry => {
    const name = this.subrule(1, this.identAfterDot);
    this.or(2, [{ ALT: () => this.consume(3, S['=']!) }, { GATE: () => this.inSelectModifier, ALT: () => this.consume(4, S['=>']!) }]);
    return { name, value: this.subrule(5, this.expr) };
  });
  protected inSelectModifier = false;

  protected connectionName = this.RULE('connectionName', (): A.Path =>
    this.or(1, [
      { ALT: () => (this.consume(2, K.DEFAULT!), ['DEFAULT']) },
      { ALT: () => [this.subrule(3, this.stringLit)] },
      { ALT: () => this.subrule(4, this.path) },
    ]),
  );

  protected systemTime = this.RULE('systemTime', (): A.Expr | undefined => {
    this.consume(1, K.FOR!);
    this.or(2, [
      { ALT: () => this.consume(3, K.SYSTEM_TIME!) },
      {
        ALT: () => {
          this.consume(4, K.SYSTEM!);
          this.consume(5, K.TIME!);
        },
      },
    ]);
    this.consume(6, K.AS!);
    this.consume(7, K.OF!);
    return this.subrule(8, this.expr);
  });
  protected isSystemTime(k = 1): boolean {
    return this.isKw('FOR', k) && (this.isKw('SYSTEM_TIME', k + 1) || (this.isKw('SYSTEM', k + 1) && this.isKw('TIME', k + 2)));
  }

}
