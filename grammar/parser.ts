// GoogleSQL parser: a Chevrotain EmbeddedActionsParser building the typed AST
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
import { checkScript } from './script-checks.js';
import {
  EmbeddedActionsParser,
  getLookaheadPaths,
  LLkLookaheadStrategy,
  MismatchedTokenException,
  type ILookaheadStrategy,
  type IOrAlt,
  type IToken,
  type IParserErrorMessageProvider,
  type TokenType,
} from 'chevrotain';
import type * as A from './ast.js';
import { T, tokenize, RESERVED, NON_RESERVED_KEYWORDS, decodeStringToken, decodeQuotedIdent, LexError, LiteralError, positionAt } from './lexer.js';
import { SqlSyntaxError } from './errors.js';
import { ALL_TOKENS, KW, SYM, Identifier, AnyWord, PathPart, QuotedIdent, StringLit, IntLit, HexIntLit, FloatLit, EOF, toChevrotainTokens, type XToken } from './tokens.js';

export { SqlSyntaxError };

const TYPED_LITERAL = new Set(['DATE', 'TIME', 'DATETIME', 'TIMESTAMP', 'NUMERIC', 'BIGNUMERIC', 'DECIMAL', 'BIGDECIMAL', 'JSON']);
// Reserved words that are nonetheless callable as functions: IF(...), LEFT(s, n), ...
const RESERVED_FUNCTIONS = ['IF', 'LEFT', 'RIGHT', 'RANGE', 'COLLATE', 'GROUPING'];
const NO_PAREN_FUNCTIONS = new Set(['CURRENT_DATE', 'CURRENT_TIME', 'CURRENT_DATETIME', 'CURRENT_TIMESTAMP']);
const QUERY_START = new Set(['SELECT', 'WITH', 'FROM']);
const JOIN_START = new Set(['JOIN', 'INNER', 'LEFT', 'RIGHT', 'FULL', 'CROSS', 'NATURAL']);
const CLAUSE_END = new Set(['FROM', 'WHERE', 'GROUP', 'HAVING', 'QUALIFY', 'WINDOW', 'ORDER', 'LIMIT', 'UNION', 'INTERSECT', 'EXCEPT']);

/**
 * Reserved words that end an expression wherever they follow one: no operator
 * or postfix form continues with them (the operators are symbols and AND, OR,
 * NOT, IS, IN, LIKE, BETWEEN, which are not here).
 */
const TERMINATOR_WORDS = new Set(['WHEN', 'THEN', 'ELSE', 'END', 'AS', 'FROM', 'WHERE', 'GROUP', 'HAVING', 'QUALIFY', 'WINDOW', 'ORDER', 'LIMIT', 'UNION', 'INTERSECT', 'EXCEPT', 'ASC', 'DESC']);

/** Word operators that start an expression (and are not calls): `NOT (x)`. */
const PREFIX_WORDS = new Set(['NOT']);

/**
 * `a OR b OR c ...` as a tree. Short chains nest to the left as written; long
 * ones (generated IN-like filters with thousands of terms) are balanced so the
 * tree stays shallow: AND/OR are associative and the analyzer flattens them.
 */
function chain(op: 'AND' | 'OR', terms: A.Expr[]): A.Expr {
  if (terms.length > 32) {
    const build = (lo: number, hi: number): A.Expr => {
      if (hi - lo === 1) return terms[lo]!;
      const mid = (lo + hi) >>> 1;
      const left = build(lo, mid);
      return { kind: 'BinaryExpr', loc: left.loc, op, left, right: build(mid, hi) };
    };
    return build(0, terms.length);
  }
  let left = terms[0]!;
  for (let i = 1; i < terms.length; i++) left = { kind: 'BinaryExpr', loc: left.loc, op, left, right: terms[i]! };
  return left;
}

const S = SYM as Record<string, TokenType>;
const LP = S['(']!;
const RP = S[')']!;
const COMMA = S[',']!;
const DOT = S['.']!;
const K = KW;

/** The service's description of a token in error messages. */
/** `item` is a join chain of its own group with at least one JOIN (not only commas) outside nested parentheses. */
function hasOwnJoin(item: A.FromItem, closed: WeakSet<A.FromItem>): boolean {
  const walk = (x: A.FromItem): boolean => x.kind === 'JoinRef' && !closed.has(x) && (x.joinType !== 'COMMA' || walk(x.left) || walk(x.right));
  return walk(item);
}

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

/** Tokens that would continue a comparison: after one, a syntax error ("Unexpected ..."). */
const COMPARISON_NEXT = ['=', '!=', '<>', '<', '>', '<=', '>=', 'LIKE', 'BETWEEN', 'IN', 'IS', 'NOT'];

/** What CONSUME(tokType) expected, in the service's words; undefined = just "Unexpected". */
/**
 * The form a CREATE statement names when its grammar has no TEMP (data-definition-language: only CREATE TEMP TABLE,
 * TEMP FUNCTION and TEMP AGGREGATE FUNCTION make session objects), else undefined.
 */
function tempForm(st: A.Statement): string | undefined {
  switch (st.kind) {
    case 'CreateTable':
      return st.snapshot ? 'SNAPSHOT TABLE' : undefined;
    case 'CreateFunction':
      return st.tableFunction ? 'TABLE FUNCTION' : undefined;
    case 'CreateView':
      return st.materialized ? 'MATERIALIZED VIEW' : 'VIEW';
    case 'CreateSchema':
      return 'SCHEMA';
    case 'CreateProcedure':
      return 'PROCEDURE';
    case 'CreateRowAccessPolicy':
      return 'ROW ACCESS POLICY';
    case 'CreateIndex':
      return `${st.indexType} INDEX`;
    default:
      return undefined;
  }
}

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
 * Chevrotain's LL(k) lookahead, but each decision's function is built on its
 * first use instead of for the whole grammar at construction: a query touches
 * a small part of the grammar, so start-up pays only for grammar recording.
 */
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

type Base = { loc: A.Loc; start: number; end: number; orReplace: boolean };
/** One `JOIN right [ON|USING ...]*` of a FROM chain, as written. */
type JoinStep = { head: { joinType: Exclude<A.JoinType, 'COMMA'>; natural: boolean }; at: IToken; right: A.FromItem; conds: Array<{ on?: A.Expr; using?: string[]; at: IToken }> };
type TvfArg = A.Expr | A.TableArg | A.ModelArg | A.Query;

export class GoogleSqlParser extends EmbeddedActionsParser {
  private sql = '';
  private paramIndex = 0;
  /** Position reported for errors at end of input (Chevrotain's EOF token has none). */
  private eofLine = 1;
  private eofColumn = 1;
  private eofOffset = 0;

  constructor() {
    // skipValidations: the grammar is deliberately ambiguous at LL(1) (ordered
    // alternatives + gates, like the service's keyword/identifier overlaps), and
    // the validations would also cost start-up time.
    super(ALL_TOKENS, { recoveryEnabled: false, maxLookahead: 1, skipValidations: true, errorMessageProvider, lookaheadStrategy: new LazyLookahead() });
    this.performSelfAnalysis();
  }

  // -------------------------------------------------------------------------
  // Entry points
  // -------------------------------------------------------------------------

  parseScript(sql: string): A.Script {
    this.load(sql);
    return this.run(() => this.script());
  }
  parseStatement(sql: string): A.Statement {
    this.load(sql);
    return this.run(() => this.singleStatement());
  }
  parseExpression(sql: string): A.Expr {
    this.load(sql);
    return this.run(() => this.expr());
  }
  parseType(sql: string): A.TypeNode {
    this.load(sql);
    return this.run(() => this.type());
  }

  private load(sql: string): void {
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

  private run<R>(rule: () => R): R {
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

  private get live(): boolean {
    return !this.RECORDING_PHASE;
  }
  /**
   * Guard for a block that must be parsed (not lookahead-filtered) when `cond`
   * holds, like descent's `if (!isSym(')')) parseList()`: errors then come from
   * inside the block ("Expected type ..."), not "Unexpected ...". Always true
   * while recording so the block's DSL calls are recorded. Only used after a
   * consumed token, so the rule's first set is unaffected.
   */
  private must(cond: boolean): boolean {
    return this.RECORDING_PHASE || cond;
  }
  private la(k: number): XToken {
    return this.LA(k) as XToken;
  }
  private isKw(word: string, k = 1): boolean {
    const t = this.la(k);
    return t.kind === T.Word && t.upper === word;
  }
  private isSym(s: string, k = 1): boolean {
    const t = this.la(k);
    return t.kind === T.Symbol && t.image === s;
  }
  private isIdent(k = 1): boolean {
    return this.la(k).ident === true;
  }
  private isEof(k = 1): boolean {
    return this.la(k).tokenType === EOF;
  }
  private isType(tt: T, k = 1): boolean {
    return this.la(k).kind === tt;
  }
  private isPathPart(k: number): boolean {
    const t = this.la(k).kind;
    return t === T.Word || t === T.QuotedIdent || t === T.Int;
  }
  /** True if the tokens at k (after any run of `(`) start a query. */
  private startsQuery(k = 1): boolean {
    while (this.isSym('(', k)) k++;
    const t = this.la(k);
    return t.kind === T.Word && QUERY_START.has(t.upper);
  }
  private loc(t: IToken): A.Loc {
    return { line: t.startLine!, column: t.startColumn!, offset: t.startOffset };
  }
  private x(t: IToken): XToken {
    return t as XToken;
  }
  private up(t: IToken): string {
    return (t as XToken).upper ?? '';
  }
  private prevEnd(): number {
    return this.la(0).end ?? 0;
  }
  private stmtEnd<S extends { start: number; end: number }>(s: S): S {
    if (this.live) s.end = this.prevEnd();
    return s;
  }
  private curOffset(): number {
    const t = this.la(1);
    return t.tokenType === EOF ? this.eofOffset : t.startOffset;
  }

  /** Throws a recognition error (so BACKTRACK treats it as a failed alternative). */
  private failMsg(t: IToken, msg: string): never {
    // SAVE_ERROR (not in Chevrotain's typings) records the error in `errors`: the
    // top-level rule swallows recognition exceptions, so an unsaved one is lost.
    const save = (this as unknown as { SAVE_ERROR(e: Error): Error }).SAVE_ERROR.bind(this);
    throw save(new MismatchedTokenException(msg, t, this.LA(0)));
  }
  private fail(t: IToken, expected?: string): never {
    return this.failMsg(t, expected ? `Expected ${expected} but got ${describeToken(t)}` : `Unexpected ${describeToken(t)}`);
  }

  private nameOf(t: IToken): string {
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
  private decodeString(t: IToken) {
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

  // -------------------------------------------------------------------------
  // Small shared rules
  // -------------------------------------------------------------------------

  private ident = this.RULE('ident', (): string => this.nameOf(this.consume(1, Identifier)));

  /** After a dot any word (even reserved), a quoted name or digits is a field/path component. */
  private identAfterDot = this.RULE('identAfterDot', (): string => this.nameOf(this.consume(1, PathPart)));

  private stringLit = this.RULE('stringLit', (): string => this.decodeString(this.consume(1, StringLit)).value);

  private identList = this.RULE('identList', (): string[] => {
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
  private valueOrDefault = this.RULE('valueOrDefault', (): A.Expr =>
    this.or(1, [
      { ALT: (): A.Expr => ({ kind: 'DefaultExpr', loc: this.loc(this.consume(2, K.DEFAULT!)) }) },
      { ALT: (): A.Expr => this.subrule(3, this.expr) },
    ]),
  );

  /** A VALUES row's items (valueOrDefault). */
  private valuesList = this.RULE('valuesList', (): A.Expr[] => {
    const out = [this.subrule(1, this.valueOrDefault)];
    this.many(2, () => {
      this.consume(3, COMMA);
      out.push(this.subrule(4, this.valueOrDefault));
    });
    return out;
  });

  private exprList = this.RULE('exprList', (): A.Expr[] => {
    const out = [this.subrule(1, this.expr)];
    this.many(2, () => {
      this.consume(3, COMMA);
      out.push(this.subrule(4, this.expr));
    });
    return out;
  });

  /** Path with possibly dashed first component (my-project.ds.t). */
  private path = this.RULE('path', (): A.Path => {
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
    // Join adjacent `-word` / `-123` / `-123abc` pieces: unquoted project ids may contain dashes.
    this.many(4, {
      GATE: () => {
        if (this.x(t).kind !== T.Word) return false;
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

  private ifNotExists = this.RULE('ifNotExists', (): boolean => {
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

  private ifExists = this.RULE('ifExists', (): boolean => {
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

  private optionsList = this.RULE('optionsList', (): A.OptionEntry[] => {
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
  private inSelectModifier = false;

  private connectionName = this.RULE('connectionName', (): A.Path =>
    this.or(1, [
      { ALT: () => (this.consume(2, K.DEFAULT!), ['DEFAULT']) },
      { ALT: () => [this.subrule(3, this.stringLit)] },
      { ALT: () => this.subrule(4, this.path) },
    ]),
  );

  private systemTime = this.RULE('systemTime', (): A.Expr | undefined => {
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
  private isSystemTime(k = 1): boolean {
    return this.isKw('FOR', k) && (this.isKw('SYSTEM_TIME', k + 1) || (this.isKw('SYSTEM', k + 1) && this.isKw('TIME', k + 2)));
  }

  // -------------------------------------------------------------------------
  // Scripts and statements
  // -------------------------------------------------------------------------

  private script = this.RULE('script', (): A.Script => {
    const first = this.la(1);
    const statements: A.Statement[] = [];
    this.many(1, () => this.consume(2, S[';']!));
    if (this.must(!this.isEof())) {
      statements.push(this.subrule(4, this.statement));
      this.many(5, () => {
        this.consume(6, S[';']!);
        if (this.must(!this.isEof() && !this.isSym(';'))) statements.push(this.subrule(8, this.statement));
      });
    }
    // Anything left is reported by Chevrotain as NotAllInputParsed: "Expected end of input but got ...".
    const loc: A.Loc = first.tokenType === EOF ? { line: this.eofLine, column: this.eofColumn, offset: this.eofOffset } : this.loc(first);
    return { kind: 'Script', loc, statements };
  });

  private singleStatement = this.RULE('singleStatement', (): A.Statement => {
    const s = this.subrule(1, this.statement);
    this.option(2, () => this.consume(3, S[';']!));
    return s;
  });

  private statement = this.RULE('statement', (): A.Statement => {
    const t = this.la(1);
    const loc = this.loc(t);
    const start = t.startOffset;
    return this.or(1, [
      { GATE: () => this.isIdent() && this.isSym(':', 2), ALT: () => this.subrule(2, this.labeledStatement) },
      { ALT: () => this.subrule(3, this.queryStatement) },
      { ALT: () => this.subrule(4, this.createStatement) },
      { ALT: () => this.subrule(5, this.dropStatement) },
      { ALT: () => this.subrule(6, this.alterStatement) },
      {
        ALT: () => {
          this.consume(7, K.UNDROP!);
          this.consume(8, K.SCHEMA!);
          const ifNotExists = this.subrule(9, this.ifNotExists);
          return this.stmtEnd<A.UndropSchemaStmt>({ kind: "UndropSchema", loc, start, end: 0, ifNotExists, name: this.subrule(10, this.path) });
        },
      },
      { ALT: () => this.subrule(11, this.insertStatement) },
      { ALT: () => this.subrule(12, this.updateStatement) },
      { ALT: () => this.subrule(13, this.deleteStatement) },
      { ALT: () => this.subrule(14, this.mergeStatement) },
      {
        ALT: () => {
          this.consume(15, K.TRUNCATE!);
          this.consume(16, K.TABLE!);
          return this.stmtEnd<A.TruncateStmt>({ kind: "Truncate", loc, start, end: 0, name: this.subrule(17, this.path) });
        },
      },
      { ALT: () => this.subrule(18, this.declareStatement) },
      { ALT: () => this.subrule(19, this.setStatement) },
      { ALT: () => this.subrule(20, this.ifStatement) },
      { ALT: () => this.subrule(21, this.caseStatement) },
      {
        ALT: () => {
          this.consume(22, K.LOOP!);
          const body = this.subrule(23, this.stmtList, { ARGS: [['END']] });
          this.consume(24, K.END!);
          this.consume(25, K.LOOP!);
          return this.stmtEnd<A.LoopStmt>({ kind: 'Loop', loc, start, end: 0, body });
        },
      },
      {
        ALT: () => {
          this.consume(26, K.WHILE!);
          const cond = this.subrule(27, this.expr);
          this.consume(28, K.DO!);
          const body = this.subrule(29, this.stmtList, { ARGS: [['END']] });
          this.consume(30, K.END!);
          this.consume(31, K.WHILE!);
          return this.stmtEnd<A.WhileStmt>({ kind: 'While', loc, start, end: 0, cond, body });
        },
      },
      {
        ALT: () => {
          this.consume(32, K.REPEAT!);
          const body = this.subrule(33, this.stmtList, { ARGS: [['UNTIL']] });
          this.consume(34, K.UNTIL!);
          const until = this.subrule(35, this.expr);
          this.consume(36, K.END!);
          this.consume(37, K.REPEAT!);
          return this.stmtEnd<A.RepeatStmt>({ kind: 'Repeat', loc, start, end: 0, body, until });
        },
      },
      {
        ALT: () => {
          this.consume(38, K.FOR!);
          const variable = this.subrule(39, this.ident);
          this.consume(40, K.IN!);
          this.consume(41, LP);
          const query = this.subrule(42, this.query);
          this.consume(43, RP);
          this.consume(44, K.DO!);
          const body = this.subrule(45, this.stmtList, { ARGS: [['END']] });
          this.consume(46, K.END!);
          this.consume(47, K.FOR!);
          return this.stmtEnd<A.ForInStmt>({ kind: 'ForIn', loc, start, end: 0, variable, query, body });
        },
      },
      {
        ALT: () => {
          const k = this.or(48, [{ ALT: () => this.consume(49, K.BREAK!) }, { ALT: () => this.consume(50, K.LEAVE!) }]);
          const label = this.option(51, () => this.subrule(52, this.ident));
          return this.stmtEnd<A.BreakStmt>({ kind: 'Break', loc, start, end: 0, keyword: this.up(k) as A.BreakStmt['keyword'], label });
        },
      },
      {
        ALT: () => {
          const k = this.or(53, [{ ALT: () => this.consume(54, K.CONTINUE!) }, { ALT: () => this.consume(55, K.ITERATE!) }]);
          const label = this.option(56, () => this.subrule(57, this.ident));
          return this.stmtEnd<A.ContinueStmt>({ kind: 'Continue', loc, start, end: 0, keyword: this.up(k) as A.ContinueStmt['keyword'], label });
        },
      },
      {
        GATE: () => this.isKw('TRANSACTION', 2) || this.isSym(';', 2) || this.isEof(2),
        ALT: () => {
          this.consume(58, K.BEGIN!);
          this.option(59, () => this.consume(60, K.TRANSACTION!));
          return this.stmtEnd<A.TransactionStmt>({ kind: 'Transaction', loc, start, end: 0, action: 'BEGIN' });
        },
      },
      { ALT: () => this.subrule(61, this.block) },
      {
        ALT: () => {
          const k = this.or(62, [{ ALT: () => this.consume(63, K.COMMIT!) }, { ALT: () => this.consume(64, K.ROLLBACK!) }]);
          this.option(65, () => this.consume(66, K.TRANSACTION!));
          return this.stmtEnd<A.TransactionStmt>({ kind: 'Transaction', loc, start, end: 0, action: this.up(k) as A.TransactionStmt['action'] });
        },
      },
      {
        ALT: () => {
          this.consume(67, K.RAISE!);
          const message = this.option(68, () => {
            this.consume(69, K.USING!);
            this.consume(70, K.MESSAGE!);
            this.consume(71, S['=']!);
            return this.subrule(72, this.expr);
          });
          return this.stmtEnd<A.RaiseStmt>({ kind: 'Raise', loc, start, end: 0, message });
        },
      },
      {
        ALT: () => {
          this.consume(73, K.RETURN!);
          return this.stmtEnd<A.ReturnStmt>({ kind: 'Return', loc, start, end: 0 });
        },
      },
      {
        ALT: () => {
          this.consume(74, K.CALL!);
          const name = this.subrule(75, this.path);
          this.consume(76, LP);
          let args: A.Expr[] = [];
          if (this.must(!this.isSym(')'))) args = this.subrule(78, this.exprList);
          this.consume(79, RP);
          return this.stmtEnd<A.CallStmt>({ kind: 'Call', loc, start, end: 0, name, args });
        },
      },
      {
        ALT: () => {
          this.consume(80, K.EXECUTE!);
          this.consume(81, K.IMMEDIATE!);
          const sql = this.subrule(82, this.expr);
          const into = this.option(83, () => {
            this.consume(84, K.INTO!);
            return this.subrule(85, this.identList);
          });
          const using = this.option(86, () => {
            this.consume(87, K.USING!);
            const out: A.AliasedExpr[] = [];
            const item = () => {
              const expr = this.subrule(88, this.expr);
              out.push({ expr, alias: this.option(89, () => (this.consume(90, K.AS!), this.subrule(91, this.ident))) });
            };
            item();
            this.many(92, () => {
              this.consume(93, COMMA);
              const expr = this.subrule(94, this.expr);
              out.push({ expr, alias: this.option(95, () => (this.consume(96, K.AS!), this.subrule(97, this.ident))) });
            });
            return out;
          });
          return this.stmtEnd<A.ExecuteImmediateStmt>({ kind: 'ExecuteImmediate', loc, start, end: 0, sql, into, using });
        },
      },
      {
        ALT: () => {
          this.consume(98, K.ASSERT!);
          const cond = this.subrule(99, this.expr);
          const description = this.option(100, () => (this.consume(101, K.AS!), this.subrule(102, this.expr)));
          return this.stmtEnd<A.AssertStmt>({ kind: 'Assert', loc, start, end: 0, cond, description });
        },
      },
      { ALT: () => this.subrule(103, this.exportData) },
      { ALT: () => this.subrule(104, this.loadData) },
      { ALT: () => this.subrule(105, this.grantStatement) },
    ]);
  });

  private labeledStatement = this.RULE('labeledStatement', (): A.Statement => {
    const t = this.consume(1, Identifier);
    const label = this.nameOf(t);
    this.consume(2, S[':']!);
    const s = this.subrule(3, this.statement);
    const loopLike = () => s.kind === 'Loop' || s.kind === 'While' || s.kind === 'Repeat' || s.kind === 'ForIn' || s.kind === 'Block';
    if (this.live && !loopLike()) this.failMsg(t, 'Unexpected label');
    // Optional trailing label after END LOOP etc.; labels are case-insensitive, as BREAK / LEAVE match them.
    this.option(4, {
      GATE: () => this.isIdent() && this.nameOf(this.la(1)).toLowerCase() === label.toLowerCase(),
      DEF: () => this.consume(5, Identifier),
    });
    if (this.live && loopLike()) {
      const l = s as A.LoopStmt;
      l.label = label;
      l.start = t.startOffset;
      l.loc = this.loc(t);
      l.end = this.prevEnd();
    }
    return s;
  });

  /** Statements each terminated by `;`, until one of the stop keywords (or end of input). */
  private stmtList = this.RULE('stmtList', (stop?: string[]): A.Statement[] => {
    const out: A.Statement[] = [];
    const isStop = () => {
      const t = this.la(1);
      return t.tokenType === EOF || (t.kind === T.Word && stop !== undefined && stop.includes(t.upper));
    };
    this.many(1, {
      GATE: () => !isStop(),
      DEF: () =>
        this.or(2, [
          { ALT: () => this.consume(3, S[';']!) },
          {
            ALT: () => {
              out.push(this.subrule(4, this.statement));
              this.consume(5, S[';']!);
            },
          },
        ]),
    });
    // A token that neither starts a statement nor closes the list: the service says "Unexpected".
    if (this.live && !isStop()) this.fail(this.la(1));
    return out;
  });

  private block = this.RULE('block', (): A.BlockStmt => {
    const t = this.consume(1, K.BEGIN!);
    const body = this.subrule(2, this.stmtList, { ARGS: [['END', 'EXCEPTION']] });
    const exceptionHandler = this.option(3, () => {
      this.consume(4, K.EXCEPTION!);
      this.consume(5, K.WHEN!);
      this.consume(6, K.ERROR!);
      this.consume(7, K.THEN!);
      return this.subrule(8, this.stmtList, { ARGS: [['END']] });
    });
    this.consume(9, K.END!);
    return this.stmtEnd<A.BlockStmt>({ kind: 'Block', loc: this.loc(t), start: t.startOffset, end: 0, body, exceptionHandler });
  });

  private ifStatement = this.RULE('ifStatement', (): A.IfStmt => {
    const t = this.consume(1, K.IF!);
    const branches: { cond: A.Expr; body: A.Statement[] }[] = [];
    const cond = this.subrule(2, this.expr);
    this.consume(3, K.THEN!);
    branches.push({ cond, body: this.subrule(4, this.stmtList, { ARGS: [['ELSEIF', 'ELSE', 'END']] }) });
    let elseBody: A.Statement[] | undefined;
    this.many(5, () =>
      this.or(6, [
        {
          ALT: () => {
            this.consume(7, K.ELSEIF!);
            const c = this.subrule(8, this.expr);
            this.consume(9, K.THEN!);
            branches.push({ cond: c, body: this.subrule(10, this.stmtList, { ARGS: [['ELSEIF', 'ELSE', 'END']] }) });
          },
        },
        {
          ALT: () => {
            this.consume(11, K.ELSE!);
            elseBody = this.subrule(12, this.stmtList, { ARGS: [['END']] });
          },
        },
      ]),
    );
    this.consume(13, K.END!);
    this.consume(14, K.IF!);
    return this.stmtEnd<A.IfStmt>({ kind: 'If', loc: this.loc(t), start: t.startOffset, end: 0, branches, else: elseBody });
  });

  private caseStatement = this.RULE('caseStatement', (): A.CaseStmt => {
    const t = this.consume(1, K.CASE!);
    let operand: A.Expr | undefined;
    if (this.must(!this.isKw('WHEN'))) operand = this.subrule(3, this.expr);
    const whens: { when: A.Expr; body: A.Statement[] }[] = [];
    this.many(4, () => {
      this.consume(5, K.WHEN!);
      const when = this.subrule(6, this.expr);
      this.consume(7, K.THEN!);
      whens.push({ when, body: this.subrule(8, this.stmtList, { ARGS: [['WHEN', 'ELSE', 'END']] }) });
    });
    const elseBody = this.option(9, () => (this.consume(10, K.ELSE!), this.subrule(11, this.stmtList, { ARGS: [['END']] })));
    this.consume(12, K.END!);
    this.consume(13, K.CASE!);
    return this.stmtEnd<A.CaseStmt>({ kind: 'CaseStmt', loc: this.loc(t), start: t.startOffset, end: 0, operand, whens, else: elseBody });
  });

  private declareStatement = this.RULE('declareStatement', (): A.DeclareStmt => {
    const t = this.consume(1, K.DECLARE!);
    const names = this.subrule(2, this.identList);
    let type: A.TypeNode | undefined;
    if (this.must(!this.isKw('DEFAULT'))) type = this.subrule(4, this.type);
    const dflt = this.option(5, () => (this.consume(6, K.DEFAULT!), this.subrule(7, this.expr)));
    return this.stmtEnd<A.DeclareStmt>({ kind: 'Declare', loc: this.loc(t), start: t.startOffset, end: 0, names, type, default: dflt });
  });

  private setTarget = this.RULE('setTarget', (): A.SetTarget =>
    this.or(1, [
      {
        ALT: () => {
          this.consume(2, S['@@']!);
          const parts = [this.subrule(3, this.identAfterDot)];
          this.many(4, () => {
            this.consume(5, DOT);
            parts.push(this.subrule(6, this.identAfterDot));
          });
          return { name: parts.join('.'), system: true };
        },
      },
      { ALT: () => ({ name: this.subrule(7, this.ident), system: false }) },
    ]),
  );

  private setStatement = this.RULE('setStatement', (): A.SetStmt => {
    const t = this.consume(1, K.SET!);
    const targets: A.SetTarget[] = [];
    let tuple = false;
    this.or(2, [
      {
        ALT: () => {
          this.consume(3, LP);
          tuple = true;
          targets.push(this.subrule(4, this.setTarget));
          this.many(5, () => {
            this.consume(6, COMMA);
            targets.push(this.subrule(7, this.setTarget));
          });
          this.consume(8, RP);
        },
      },
      { ALT: () => targets.push(this.subrule(9, this.setTarget)) },
    ]);
    this.consume(10, S['=']!);
    const value = this.subrule(11, this.expr);
    return this.stmtEnd<A.SetStmt>({ kind: 'Set', loc: this.loc(t), start: t.startOffset, end: 0, targets, tuple, value });
  });

  private queryStatement = this.RULE('queryStatement', (): A.QueryStatement => {
    const t = this.la(1);
    const query = this.subrule(1, this.query);
    return this.stmtEnd<A.QueryStatement>({ kind: 'QueryStatement', loc: this.loc(t), start: t.startOffset, end: 0, query });
  });

  // -------------------------------------------------------------------------
  // DDL
  // -------------------------------------------------------------------------

  private createStatement = this.RULE('createStatement', (): A.Statement => {
    const t = this.consume(1, K.CREATE!);
    const orReplace = this.option(2, () => (this.consume(3, K.OR!), this.consume(4, K.REPLACE!), true)) === true;
    const tempTok = this.option(5, () => this.or(6, [{ ALT: () => this.consume(7, K.TEMP!) }, { ALT: () => this.consume(8, K.TEMPORARY!) }]));
    const temp = tempTok !== undefined;
    const base: Base = { loc: this.loc(t), start: t.startOffset, end: 0, orReplace };
    const st = this.or(9, [
      {
        GATE: () => this.isKw('FUNCTION', 2),
        ALT: () => {
          this.consume(10, K.TABLE!);
          return this.subrule(11, this.createFunction, { ARGS: [base, temp, false, true] });
        },
      },
      {
        ALT: () => {
          this.consume(12, K.TABLE!);
          return this.subrule(13, this.createTable, { ARGS: [base, temp, false, false] });
        },
      },
      {
        ALT: () => {
          const k = this.or(14, [{ ALT: () => this.consume(15, K.EXTERNAL!) }, { ALT: () => this.consume(16, K.SNAPSHOT!) }]);
          // CREATE SNAPSHOT TABLE has no OR REPLACE form (data-definition-language: CREATE SNAPSHOT TABLE).
          if (this.live && base?.orReplace && this.up(k) === 'SNAPSHOT') throw new SqlSyntaxError('Syntax error: CREATE SNAPSHOT TABLE does not take OR REPLACE', k.startLine!, k.startColumn!);
          this.consume(17, K.TABLE!);
          return this.subrule(18, this.createTable, { ARGS: [base, temp, this.up(k) === 'EXTERNAL', this.up(k) === 'SNAPSHOT'] });
        },
      },
      {
        ALT: () => {
          this.consume(19, K.VIEW!);
          return this.subrule(20, this.createView, { ARGS: [base, false] });
        },
      },
      {
        ALT: () => {
          this.consume(21, K.MATERIALIZED!);
          this.consume(22, K.VIEW!);
          return this.subrule(23, this.createView, { ARGS: [base, true] });
        },
      },
      {
        ALT: () => {
          const k = this.or(24, [{ ALT: () => this.consume(25, K.SCHEMA!) }, { ALT: () => this.consume(26, K.DATABASE!) }]);
          // CREATE SCHEMA [IF NOT EXISTS] has no OR REPLACE form (data-definition-language: CREATE SCHEMA).
          if (this.live && base?.orReplace) throw new SqlSyntaxError(`Syntax error: CREATE ${this.up(k)} does not take OR REPLACE`, k.startLine!, k.startColumn!);
          const ifNotExists = this.subrule(27, this.ifNotExists);
          const name = this.subrule(28, this.path);
          let defaultCollate: string | undefined;
          let options: A.OptionEntry[] | undefined;
          // data-definition-language (CREATE SCHEMA): [DEFAULT COLLATE] [OPTIONS], in that order.
          this.option(29, () => {
            this.consume(31, K.DEFAULT!);
            this.consume(32, K.COLLATE!);
            defaultCollate = this.subrule(33, this.stringLit);
          });
          this.option(30, () => (options = this.subrule(34, this.optionsList)));
          return this.stmtEnd<A.CreateSchemaStmt>({ kind: 'CreateSchema', ...base, ifNotExists, name, defaultCollate, options });
        },
      },
      { ALT: () => this.subrule(35, this.createFunction, { ARGS: [base, temp, false, false] }) },
      {
        ALT: () => {
          this.consume(36, K.AGGREGATE!);
          return this.subrule(37, this.createFunction, { ARGS: [base, temp, true, false] });
        },
      },
      { ALT: () => this.subrule(38, this.createProcedure, { ARGS: [base] }) },
      {
        ALT: () => {
          this.consume(39, K.CONSTANT!);
          const ifNotExists = this.subrule(40, this.ifNotExists);
          const name = this.subrule(41, this.path);
          this.consume(42, S['=']!);
          const value = this.subrule(43, this.expr);
          return this.stmtEnd<A.CreateConstantStmt>({ kind: 'CreateConstant', ...base, temp, ifNotExists, name, value });
        },
      },
      { ALT: () => this.subrule(44, this.createModel, { ARGS: [base] }) },
      { ALT: () => this.subrule(45, this.createRowAccessPolicy, { ARGS: [base] }) },
      {
        ALT: () => {
          const k = this.or(46, [{ ALT: () => this.consume(47, K.SEARCH!) }, { ALT: () => this.consume(48, K.VECTOR!) }]);
          this.consume(49, K.INDEX!);
          const ifNotExists = this.subrule(50, this.ifNotExists);
          const name = this.subrule(51, this.path);
          this.consume(52, K.ON!);
          const table = this.subrule(53, this.path);
          this.consume(54, LP);
          const columns = this.or(55, [
            {
              GATE: () => this.isKw('COLUMNS', 2),
              ALT: () => {
                this.consume(56, K.ALL!);
                this.consume(57, K.COLUMNS!);
                return undefined;
              },
            },
            { ALT: () => this.subrule(58, this.identList) },
          ]);
          this.consume(59, RP);
          const storing = this.option(60, () => {
            this.consume(61, K.STORING!);
            this.consume(62, LP);
            const s = this.subrule(63, this.identList);
            this.consume(64, RP);
            return s;
          });
          const options = this.option(65, () => this.subrule(66, this.optionsList));
          return this.stmtEnd<A.CreateIndexStmt>({ kind: 'CreateIndex', ...base, ifNotExists, indexType: this.up(k) as 'SEARCH' | 'VECTOR', name, table, columns, storing, options });
        },
      },
    ]);
    if (this.live && tempTok) {
      const form = tempForm(st);
      if (form) throw new SqlSyntaxError(`Syntax error: CREATE ${form} does not take ${this.up(tempTok)}`, tempTok.startLine!, tempTok.startColumn!);
    }
    return st;
  });

  private columnDefList = this.RULE('columnDefList', (): A.ColumnDef[] => {
    this.consume(1, LP);
    const cols: A.ColumnDef[] = [];
    if (this.must(!this.isSym(')'))) {
      cols.push(this.subrule(3, this.columnDef));
      this.many(4, () => {
        this.consume(5, COMMA);
        if (this.must(!this.isSym(')'))) cols.push(this.subrule(7, this.columnDef));
      });
    }
    this.consume(8, RP);
    return cols;
  });

  private columnDef = this.RULE('columnDef', (): A.ColumnDef => {
    const t = this.la(1);
    const name = this.subrule(1, this.ident);
    const type = this.subrule(2, this.type, { ARGS: [true] });
    const col: A.ColumnDef = { kind: 'ColumnDef', loc: this.loc(t), name, type, notNull: false };
    if (this.live && type.kind === 'ScalarType' && type.collate) col.collate = type.collate;
    this.subrule(3, this.columnAttributes, { ARGS: [col] });
    return col;
  });

  /** Attributes after a column type: NOT NULL, DEFAULT, OPTIONS, COLLATE, PRIMARY KEY, ... */
  private columnAttributes = this.RULE('columnAttributes', (col?: A.ColumnDef): void => {
    const c = col ?? ({} as A.ColumnDef);
    this.many(1, () =>
      this.or(2, [
        {
          GATE: () => this.isKw('NULL', 2),
          ALT: () => {
            this.consume(3, K.NOT!);
            this.consume(4, K.NULL!);
            c.notNull = true;
          },
        },
        { ALT: () => (this.consume(5, K.DEFAULT!), (c.default = this.subrule(6, this.expr))) },
        { ALT: () => (c.options = this.subrule(7, this.optionsList)) },
        { ALT: () => (this.consume(8, K.COLLATE!), (c.collate = this.subrule(9, this.stringLit))) },
        {
          ALT: () => {
            this.consume(10, K.PRIMARY!);
            this.consume(11, K.KEY!);
            if (!this.subrule(12, this.notEnforced)) c.enforced = true;
            c.primaryKey = true;
          },
        },
        {
          ALT: () => {
            this.consume(13, K.REFERENCES!);
            const table = this.subrule(14, this.path);
            this.consume(15, LP);
            const columns = this.subrule(16, this.identList);
            this.consume(17, RP);
            if (!this.subrule(18, this.notEnforced)) c.enforced = true;
            c.references = { table, columns };
          },
        },
        {
          ALT: () => {
            this.consume(19, K.GENERATED!);
            this.option(20, () => this.consume(21, K.ALWAYS!));
            this.consume(22, K.AS!);
            this.consume(23, LP);
            c.generated = this.subrule(24, this.expr);
            this.consume(25, RP);
            this.option(26, () => this.consume(27, K.STORED!));
          },
        },
      ]),
    );
  });

  /** A key constraint's enforcement: true when it is written NOT ENFORCED (the only form the service takes). */
  private notEnforced = this.RULE('notEnforced', (): boolean => {
    let not = false;
    this.option(1, () =>
      this.or(2, [
        {
          GATE: () => this.isKw('ENFORCED', 2),
          ALT: () => {
            this.consume(3, K.NOT!);
            this.consume(4, K.ENFORCED!);
            not = true;
          },
        },
        { ALT: () => this.consume(5, K.ENFORCED!) },
      ]),
    );
    return not;
  });

  private isTableConstraint(): boolean {
    let k = 1;
    if (this.isKw('CONSTRAINT')) {
      if (!this.isIdent(2)) return false;
      k = 3;
    }
    return (this.isKw('PRIMARY', k) || this.isKw('FOREIGN', k)) && this.isKw('KEY', k + 1);
  }

  private tableConstraint = this.RULE('tableConstraint', (): A.TableConstraint => {
    let ifNotExists = false;
    // ALTER TABLE ADD CONSTRAINT [IF NOT EXISTS] name ... (data-definition-language; CREATE TABLE's gate never reaches it).
    const name = this.option(1, () => (this.consume(2, K.CONSTRAINT!), (ifNotExists = this.subrule(30, this.ifNotExists)), this.subrule(3, this.ident)));
    const c = this.or(4, [
      {
        ALT: (): A.TableConstraint => {
          this.consume(5, K.PRIMARY!);
          this.consume(6, K.KEY!);
          this.consume(7, LP);
          const columns = this.subrule(8, this.identList);
          this.consume(9, RP);
          const enforced = !this.subrule(10, this.notEnforced);
          return { kind: 'PrimaryKey', name, columns, ...(enforced ? { enforced } : {}) };
        },
      },
      {
        ALT: (): A.TableConstraint => {
          this.consume(11, K.FOREIGN!);
          this.consume(12, K.KEY!);
          this.consume(13, LP);
          const columns = this.subrule(14, this.identList);
          this.consume(15, RP);
          this.consume(16, K.REFERENCES!);
          const table = this.subrule(17, this.path);
          this.consume(18, LP);
          const refCols = this.subrule(19, this.identList);
          this.consume(20, RP);
          const enforced = !this.subrule(21, this.notEnforced);
          return { kind: 'ForeignKey', name, columns, references: { table, columns: refCols }, ...(enforced ? { enforced } : {}) };
        },
      },
    ]);
    if (this.live && ifNotExists) c.ifNotExists = true;
    return c;
  });

  private createTable = this.RULE('createTable', (base?: Base, temp?: boolean, external?: boolean, snapshot?: boolean): A.CreateTableStmt => {
    const ifNotExists = this.subrule(1, this.ifNotExists);
    const name = this.subrule(2, this.path);
    const s: A.CreateTableStmt = { kind: 'CreateTable', ...base!, temp: !!temp, ifNotExists, external: !!external, snapshot: !!snapshot, name };
    this.option(3, {
      GATE: () => !this.startsQuery(2),
      DEF: () => {
        this.consume(4, LP);
        const columns: A.ColumnDef[] = [];
        const constraints: A.TableConstraint[] = [];
        const element = (i: number) =>
          this.or(i, [
            { GATE: () => this.isTableConstraint(), ALT: () => constraints.push(this.subrule(i + 1, this.tableConstraint)) },
            { ALT: () => columns.push(this.subrule(i + 2, this.columnDef)) },
          ]);
        if (this.must(!this.isSym(')'))) {
          element(6);
          this.many(9, () => {
            this.consume(10, COMMA);
            if (this.must(!this.isSym(')'))) element(12);
          });
        }
        this.consume(15, RP);
        s.columns = columns;
        if (constraints.length) s.constraints = constraints;
      },
    });
    // data-definition-language gives the clauses in one order: [LIKE | COPY | CLONE src] [DEFAULT COLLATE]
    // [PARTITION BY] [CLUSTER BY] [WITH CONNECTION] [WITH PARTITION COLUMNS] [OPTIONS] [AS query]; which of them a
    // form takes (COPY and CLONE take OPTIONS only) is checked when the statement runs.
    this.option(16, () =>
      this.or(17, [
        { ALT: () => (this.consume(18, K.LIKE!), (s.like = this.subrule(19, this.path))) },
        { ALT: () => (this.consume(20, K.COPY!), (s.copy = this.subrule(21, this.path))) },
        {
          ALT: () => {
            this.consume(22, K.CLONE!);
            const source = this.subrule(23, this.path);
            s.clone = { source, systemTime: this.option(24, { GATE: () => this.isSystemTime(), DEF: () => this.subrule(25, this.systemTime) }) };
          },
        },
      ]),
    );
    this.option(26, () => {
      this.consume(26, K.DEFAULT!);
      this.consume(27, K.COLLATE!);
      s.defaultCollate = this.subrule(28, this.stringLit);
    });
    this.option(29, () => (this.consume(29, K.PARTITION!), this.consume(30, K.BY!), (s.partitionBy = this.subrule(31, this.expr))));
    this.option(32, () => (this.consume(32, K.CLUSTER!), this.consume(33, K.BY!), (s.clusterBy = this.subrule(34, this.exprList))));
    this.option(35, {
      GATE: () => this.isKw('CONNECTION', 2),
      DEF: () => {
        this.consume(35, K.WITH!);
        this.consume(36, K.CONNECTION!);
        s.withConnection = this.subrule(37, this.connectionName);
      },
    });
    this.option(38, {
      GATE: () => this.isKw('PARTITION', 2),
      DEF: () => {
        this.consume(38, K.WITH!);
        this.consume(39, K.PARTITION!);
        this.consume(40, K.COLUMNS!);
        s.withPartitionColumns = this.option(41, () => this.subrule(42, this.columnDefList)) ?? [];
      },
    });
    this.option(43, () => (s.options = this.subrule(43, this.optionsList)));
    this.option(44, () => (this.consume(44, K.AS!), (s.asQuery = this.subrule(45, this.query))));
    return this.stmtEnd(s);
  });

  private createView = this.RULE('createView', (base?: Base, materialized?: boolean): A.CreateViewStmt => {
    const ifNotExists = this.subrule(1, this.ifNotExists);
    const name = this.subrule(2, this.path);
    const columns = this.option(3, {
      GATE: () => !this.startsQuery(2),
      DEF: () => {
        this.consume(4, LP);
        const cols: { name: string; options?: A.OptionEntry[] }[] = [];
        const n = this.subrule(5, this.ident);
        cols.push({ name: n, options: this.option(6, () => this.subrule(7, this.optionsList)) });
        this.many(8, () => {
          this.consume(9, COMMA);
          const n2 = this.subrule(10, this.ident);
          cols.push({ name: n2, options: this.option(11, () => this.subrule(12, this.optionsList)) });
        });
        this.consume(13, RP);
        return cols;
      },
    });
    let partitionBy: A.Expr | undefined;
    let clusterBy: A.Expr[] | undefined;
    let options: A.OptionEntry[] | undefined;
    // [PARTITION BY] [CLUSTER BY] (a materialized view's; a view takes neither) [OPTIONS], in that order.
    this.option(14, () => (this.consume(16, K.PARTITION!), this.consume(17, K.BY!), (partitionBy = this.subrule(18, this.expr))));
    this.option(15, () => (this.consume(19, K.CLUSTER!), this.consume(20, K.BY!), (clusterBy = this.subrule(21, this.exprList))));
    this.option(16, () => (options = this.subrule(22, this.optionsList)));
    this.consume(23, K.AS!);
    const qs = this.curOffset();
    const query = this.subrule(24, this.query);
    const queryText = this.sql.slice(qs, this.prevEnd());
    return this.stmtEnd<A.CreateViewStmt>({ kind: 'CreateView', ...base!, ifNotExists, materialized: !!materialized, name, columns, partitionBy, clusterBy, options, query, queryText });
  });

  private functionParam = this.RULE('functionParam', (): A.FunctionParam => {
    const pname = this.subrule(1, this.ident);
    const type = this.subrule(2, this.type);
    const p: A.FunctionParam = { name: pname, type };
    this.option(3, () => {
      this.consume(4, K.NOT!);
      this.consume(5, K.AGGREGATE!);
      p.notAggregate = true;
    });
    this.option(6, () => (this.consume(7, K.DEFAULT!), this.subrule(8, this.expr)));
    return p;
  });

  private createFunction = this.RULE('createFunction', (base?: Base, temp?: boolean, aggregate?: boolean, tableFunction?: boolean): A.CreateFunctionStmt => {
    this.consume(1, K.FUNCTION!);
    const ifNotExists = this.subrule(2, this.ifNotExists);
    const name = this.subrule(3, this.path);
    const s: A.CreateFunctionStmt = { kind: 'CreateFunction', ...base!, temp: !!temp, ifNotExists, aggregate: !!aggregate, tableFunction: !!tableFunction, name, params: [] };
    this.consume(4, LP);
    if (this.must(!this.isSym(')'))) {
      s.params.push(this.subrule(6, this.functionParam));
      this.many(7, () => {
        this.consume(8, COMMA);
        s.params.push(this.subrule(9, this.functionParam));
      });
    }
    this.consume(10, RP);
    this.many(11, () =>
      this.or(12, [
        { ALT: () => (this.consume(13, K.RETURNS!), (s.returns = this.subrule(14, this.type))) },
        { ALT: () => (this.consume(15, K.LANGUAGE!), (s.language = this.str(this.subrule(16, this.ident)).toLowerCase())) },
        { ALT: () => (s.options = this.subrule(17, this.optionsList)) },
        { ALT: () => (this.consume(18, K.DETERMINISTIC!), (s.deterministic = true)) },
        { GATE: () => this.isKw('DETERMINISTIC', 2), ALT: () => (this.consume(19, K.NOT!), this.consume(20, K.DETERMINISTIC!), (s.deterministic = false)) },
        {
          GATE: () => this.isKw('SECURITY', 2),
          ALT: () => {
            this.consume(21, K.SQL!);
            this.consume(22, K.SECURITY!);
            this.consume(23, AnyWord);
          },
        },
        {
          ALT: () => {
            this.consume(24, K.REMOTE!);
            this.consume(25, K.WITH!);
            this.consume(26, K.CONNECTION!);
            s.remoteConnection = this.subrule(27, this.connectionName);
          },
        },
        {
          GATE: () => this.isKw('CONNECTION', 2),
          ALT: () => {
            this.consume(28, K.WITH!);
            this.consume(29, K.CONNECTION!);
            s.remoteConnection = this.subrule(30, this.connectionName);
          },
        },
        {
          ALT: () => {
            this.consume(31, K.AS!);
            // A table function's body is always a query (errors from inside it).
            const tvfBody = tableFunction === true && !this.isType(T.String);
            if (this.must(tvfBody)) {
              const qs = this.curOffset();
              s.query = this.subrule(44, this.query);
              s.bodyText = this.sql.slice(qs, this.prevEnd());
            }
            if (this.must(!tvfBody))
            this.or(32, {
              ERR_MSG: '"("',
              DEF: [
              {
                ALT: () => {
                  const bt = this.consume(33, StringLit);
                  s.code = this.decodeString(bt).value;
                  s.bodyText = s.code;
                },
              },
              {
                GATE: () => this.startsQuery() && !this.isSym('('),
                ALT: () => {
                  const qs = this.curOffset();
                  s.query = this.subrule(34, this.query);
                  s.bodyText = this.sql.slice(qs, this.prevEnd());
                },
              },
              {
                ALT: () => {
                  this.consume(35, LP);
                  const bs = this.la(1);
                  const bso = this.curOffset();
                  s.body = this.or(36, [
                    // Lenient: `AS (SELECT ...)` is taken as a scalar subquery body.
                    {
                      GATE: () => this.startsQuery() && !this.isSym('('),
                      ALT: (): A.Expr => ({ kind: 'ScalarSubquery', loc: this.loc(bs), query: this.subrule(37, this.query) }),
                    },
                    { ALT: () => this.subrule(38, this.expr) },
                  ]);
                  s.bodyText = this.sql.slice(bso, this.prevEnd());
                  this.consume(39, RP);
                },
              },
            ]});
          },
        },
      ]),
    );
    return this.stmtEnd(s);
  });

  private procedureParam = this.RULE('procedureParam', (): A.ProcedureParam => {
    const mode = this.option(1, {
      GATE: () => this.isIdent(2),
      DEF: () =>
        this.or(2, [
          { ALT: () => this.consume(3, K.IN!) },
          { ALT: () => this.consume(4, K.OUT!) },
          { ALT: () => this.consume(5, K.INOUT!) },
        ]),
    });
    const name = this.subrule(6, this.ident);
    return { mode: mode ? (this.up(mode) as A.ProcedureParam['mode']) : undefined, name, type: this.subrule(7, this.type) };
  });

  private createProcedure = this.RULE('createProcedure', (base?: Base): A.Statement => {
    this.consume(1, K.PROCEDURE!);
    const ifNotExists = this.subrule(2, this.ifNotExists);
    const name = this.subrule(3, this.path);
    const params: A.ProcedureParam[] = [];
    this.consume(4, LP);
    if (this.must(!this.isSym(')'))) {
      params.push(this.subrule(6, this.procedureParam));
      this.many(7, () => {
        this.consume(8, COMMA);
        params.push(this.subrule(9, this.procedureParam));
      });
    }
    this.consume(10, RP);
    let options: A.OptionEntry[] | undefined;
    this.many(11, () =>
      this.or(12, [
        { ALT: () => (options = this.subrule(13, this.optionsList)) },
        { ALT: () => (this.consume(14, K.WITH!), this.consume(15, K.CONNECTION!), this.subrule(16, this.connectionName)) },
        {
          GATE: () => this.isKw('SECURITY', 2),
          ALT: () => {
            this.consume(17, K.EXTERNAL!);
            this.consume(18, K.SECURITY!);
            this.consume(19, AnyWord);
          },
        },
      ]),
    );
    return this.or(20, {
      ERR_MSG: 'keyword BEGIN',
      DEF: [
      {
        ALT: () => {
          // Non-SQL procedures (e.g. Python): keep as an empty body; the analyzer rejects the language.
          this.consume(21, K.LANGUAGE!);
          this.subrule(22, this.ident);
          this.consume(23, K.AS!);
          const code = this.la(1);
          this.subrule(24, this.stringLit);
          const body: A.BlockStmt = { kind: 'Block', loc: this.loc(code), start: code.startOffset, end: code.end, body: [] };
          return this.stmtEnd<A.CreateProcedureStmt>({ kind: 'CreateProcedure', ...base!, ifNotExists, name, params, options, body, bodyText: code.image });
        },
      },
      {
        ALT: () => {
          const bs = this.curOffset();
          const body = this.subrule(25, this.block);
          return this.stmtEnd<A.CreateProcedureStmt>({ kind: 'CreateProcedure', ...base!, ifNotExists, name, params, options, body, bodyText: this.sql.slice(bs, this.prevEnd()) });
        },
      },
    ]});
  });

  private createModel = this.RULE('createModel', (base?: Base): A.CreateModelStmt => {
    this.consume(1, K.MODEL!);
    const ifNotExists = this.subrule(2, this.ifNotExists);
    const name = this.subrule(3, this.path);
    const s: A.CreateModelStmt = { kind: 'CreateModel', ...base!, ifNotExists, name };
    this.many(4, () =>
      this.or(5, [
        {
          ALT: () => {
            this.consume(6, K.TRANSFORM!);
            this.consume(7, LP);
            s.transform = this.subrule(8, this.selectList);
            this.consume(9, RP);
          },
        },
        { ALT: () => (this.consume(10, K.INPUT!), (s.inputColumns = this.subrule(11, this.columnDefList))) },
        { ALT: () => (this.consume(12, K.OUTPUT!), (s.outputColumns = this.subrule(13, this.columnDefList))) },
        {
          ALT: () => {
            this.consume(14, K.REMOTE!);
            this.consume(15, K.WITH!);
            this.consume(16, K.CONNECTION!);
            s.remoteConnection = this.subrule(17, this.connectionName);
          },
        },
        { ALT: () => (s.options = this.subrule(18, this.optionsList)) },
        { ALT: () => (this.consume(19, K.AS!), (s.query = this.subrule(20, this.query))) },
      ]),
    );
    return this.stmtEnd(s);
  });

  private createRowAccessPolicy = this.RULE('createRowAccessPolicy', (base?: Base): A.CreateRowAccessPolicyStmt => {
    this.consume(1, K.ROW!);
    this.consume(2, K.ACCESS!);
    this.consume(3, K.POLICY!);
    const ifNotExists = this.subrule(4, this.ifNotExists);
    const name = this.subrule(5, this.ident);
    this.consume(6, K.ON!);
    const table = this.subrule(7, this.path);
    const grantTo: A.Expr[] = [];
    this.option(8, () => {
      this.consume(9, K.GRANT!);
      this.consume(10, K.TO!);
      this.consume(11, LP);
      const g = this.subrule(12, this.exprList);
      if (this.live) grantTo.push(...g);
      this.consume(13, RP);
    });
    this.consume(14, K.FILTER!);
    this.consume(15, K.USING!);
    this.consume(16, LP);
    const filter = this.subrule(17, this.expr);
    this.consume(18, RP);
    return this.stmtEnd<A.CreateRowAccessPolicyStmt>({ kind: 'CreateRowAccessPolicy', ...base!, ifNotExists, name, table, grantTo, filter });
  });

  private dropStatement = this.RULE('dropStatement', (): A.DropStmt => {
    const t = this.consume(1, K.DROP!);
    const objectType = this.or(2, [
      { ALT: (): A.DropObjectType => (this.consume(3, K.TABLE!), this.option(4, () => this.consume(5, K.FUNCTION!)) ? 'TABLE FUNCTION' : 'TABLE') },
      { ALT: (): A.DropObjectType => (this.consume(6, K.EXTERNAL!), this.consume(7, K.TABLE!), 'EXTERNAL TABLE') },
      { ALT: (): A.DropObjectType => (this.consume(8, K.SNAPSHOT!), this.consume(9, K.TABLE!), 'SNAPSHOT TABLE') },
      { ALT: (): A.DropObjectType => (this.consume(10, K.VIEW!), 'VIEW') },
      { ALT: (): A.DropObjectType => (this.consume(11, K.MATERIALIZED!), this.consume(12, K.VIEW!), 'MATERIALIZED VIEW') },
      { ALT: (): A.DropObjectType => (this.or(13, [{ ALT: () => this.consume(14, K.SCHEMA!) }, { ALT: () => this.consume(15, K.DATABASE!) }]), 'SCHEMA') },
      { ALT: (): A.DropObjectType => (this.consume(16, K.FUNCTION!), 'FUNCTION') },
      { ALT: (): A.DropObjectType => (this.consume(17, K.AGGREGATE!), this.consume(18, K.FUNCTION!), 'AGGREGATE FUNCTION') },
      { ALT: (): A.DropObjectType => (this.consume(19, K.PROCEDURE!), 'PROCEDURE') },
      { ALT: (): A.DropObjectType => (this.consume(20, K.MODEL!), 'MODEL') },
      { ALT: (): A.DropObjectType => (this.consume(21, K.ROW!), this.consume(22, K.ACCESS!), this.consume(23, K.POLICY!), 'ROW ACCESS POLICY') },
      {
        ALT: (): A.DropObjectType => (this.consume(24, K.ALL!), this.consume(25, K.ROW!), this.consume(26, K.ACCESS!), this.consume(27, K.POLICIES!), 'ALL ROW ACCESS POLICIES'),
      },
      { ALT: (): A.DropObjectType => (this.consume(28, K.SEARCH!), this.consume(29, K.INDEX!), 'SEARCH INDEX') },
      { ALT: (): A.DropObjectType => (this.consume(30, K.VECTOR!), this.consume(31, K.INDEX!), 'VECTOR INDEX') },
    ]);
    const ifExists = this.subrule(32, this.ifExists);
    let name: A.Path = [];
    if (this.must(objectType !== 'ALL ROW ACCESS POLICIES')) name = this.subrule(34, this.path);
    const s: A.DropStmt = { kind: 'Drop', loc: this.loc(t), start: t.startOffset, end: 0, objectType, ifExists, name };
    this.option(35, () => (this.consume(36, K.ON!), (s.on = this.subrule(37, this.path))));
    this.option(38, () => {
      const m = this.or(39, [{ ALT: () => this.consume(40, K.CASCADE!) }, { ALT: () => this.consume(41, K.RESTRICT!) }]);
      s.mode = this.up(m) as 'CASCADE' | 'RESTRICT';
    });
    return this.stmtEnd(s);
  });

  private alterStatement = this.RULE('alterStatement', (): A.AlterStmt => {
    const t = this.consume(1, K.ALTER!);
    // Routines have no ALTER statement (data-definition-language lists CREATE [OR REPLACE] and DROP for functions,
    // table functions and procedures only): the reference refuses ALTER FUNCTION / PROCEDURE / AGGREGATE FUNCTION /
    // TABLE FUNCTION in its grammar, with this wording, at the object kind.
    const routine = (k: IToken, what: string): never => {
      throw new SqlSyntaxError(`Syntax error: ALTER ${what} is not supported`, k.startLine!, k.startColumn!);
    };
    const objectType = this.or(2, [
      {
        // TABLE FUNCTION before TABLE: two tokens of lookahead tell them apart.
        ALT: (): A.AlterStmt['objectType'] => {
          const k = this.consume(19, K.TABLE!);
          this.consume(20, K.FUNCTION!);
          return this.live ? routine(k, 'TABLE FUNCTION') : 'TABLE';
        },
        GATE: () => this.la(2).tokenType === K.FUNCTION,
      },
      {
        ALT: (): A.AlterStmt['objectType'] => {
          const k = this.or(3, [
            { ALT: () => this.consume(4, K.TABLE!) },
            { ALT: () => this.consume(5, K.VIEW!) },
            { ALT: () => this.consume(6, K.SCHEMA!) },
            { ALT: () => this.consume(9, K.MODEL!) },
          ]);
          return this.up(k) as A.AlterStmt['objectType'];
        },
      },
      {
        ALT: (): A.AlterStmt['objectType'] => {
          let what = 'AGGREGATE FUNCTION';
          const k = this.or(21, [
            { ALT: () => ((what = 'FUNCTION'), this.consume(7, K.FUNCTION!)) },
            { ALT: () => ((what = 'PROCEDURE'), this.consume(8, K.PROCEDURE!)) },
            { ALT: () => { const a = this.consume(22, K.AGGREGATE!); this.consume(23, K.FUNCTION!); return a; } },
          ]);
          return this.live ? routine(k, what) : 'TABLE';
        },
      },
      { ALT: (): A.AlterStmt['objectType'] => (this.consume(10, K.DATABASE!), 'SCHEMA') },
      { ALT: (): A.AlterStmt['objectType'] => (this.consume(11, K.MATERIALIZED!), this.consume(12, K.VIEW!), 'MATERIALIZED VIEW') },
    ]);
    const ifExists = this.subrule(13, this.ifExists);
    const name = this.subrule(14, this.path);
    const actions: A.AlterAction[] = [this.subrule(15, this.alterAction)];
    this.many(16, () => {
      this.consume(17, COMMA);
      actions.push(this.subrule(18, this.alterAction));
    });
    return this.stmtEnd<A.AlterStmt>({ kind: 'Alter', loc: this.loc(t), start: t.startOffset, end: 0, objectType, ifExists, name, actions });
  });

  private alterAction = this.RULE('alterAction', (): A.AlterAction => {
    const loc = this.loc(this.la(1));
    return this.or(1, [
      {
        ALT: (): A.AlterAction => {
          this.consume(2, K.ADD!);
          return this.or(3, {
            ERR_MSG: 'keyword COLUMN',
            DEF: [
              {
                ALT: (): A.AlterAction => {
                  this.consume(4, K.COLUMN!);
                  const ifNotExists = this.subrule(5, this.ifNotExists);
                  return { kind: 'AddColumn', loc, ifNotExists, column: this.subrule(6, this.columnDef) };
                },
              },
              {
                ALT: (): A.AlterAction => {
                  const constraint = this.subrule(7, this.tableConstraint);
                  return { kind: 'AddConstraint', loc, constraint, ifNotExists: !!constraint.ifNotExists };
                },
              },
              {
                ALT: (): A.AlterAction => {
                  this.consume(80, K.REPLICA!);
                  const name = this.subrule(81, this.path);
                  this.option(82, () => this.subrule(83, this.optionsList));
                  return { kind: 'Replica', loc, op: 'ADD', name };
                },
              },
            ],
          });
        },
      },
      {
        ALT: (): A.AlterAction => {
          this.consume(8, K.DROP!);
          return this.or(9, [
            {
              ALT: (): A.AlterAction => {
                this.consume(10, K.COLUMN!);
                const ifExists = this.subrule(11, this.ifExists);
                return { kind: 'DropColumn', loc, ifExists, name: this.subrule(12, this.ident) };
              },
            },
            {
              ALT: (): A.AlterAction => {
                this.consume(13, K.PRIMARY!);
                this.consume(14, K.KEY!);
                const ifExists = this.subrule(15, this.ifExists);
                return { kind: 'DropConstraint', loc, ifExists, name: '', primaryKey: true };
              },
            },
            {
              ALT: (): A.AlterAction => {
                this.consume(16, K.CONSTRAINT!);
                const ifExists = this.subrule(17, this.ifExists);
                return { kind: 'DropConstraint', loc, ifExists, name: this.subrule(18, this.ident), primaryKey: false };
              },
            },
            {
              ALT: (): A.AlterAction => {
                this.consume(84, K.REPLICA!);
                return { kind: 'Replica', loc, op: 'DROP', name: this.subrule(85, this.path) };
              },
            },
          ]);
        },
      },
      {
        ALT: (): A.AlterAction => {
          this.consume(19, K.RENAME!);
          return this.or(20, [
            { ALT: (): A.AlterAction => (this.consume(21, K.TO!), { kind: 'RenameTo', loc, name: this.subrule(22, this.path) }) },
            {
              ALT: (): A.AlterAction => {
                this.consume(23, K.COLUMN!);
                const ifExists = this.subrule(24, this.ifExists);
                const from = this.subrule(25, this.ident);
                this.consume(26, K.TO!);
                return { kind: 'RenameColumn', loc, ifExists, from, to: this.subrule(27, this.ident) };
              },
            },
          ]);
        },
      },
      {
        ALT: (): A.AlterAction => {
          this.consume(28, K.SET!);
          return this.or(29, [
            {
              ALT: (): A.AlterAction => {
                this.consume(30, K.DEFAULT!);
                this.consume(31, K.COLLATE!);
                return { kind: 'SetDefaultCollate', loc, collation: this.subrule(32, this.stringLit) };
              },
            },
            { ALT: (): A.AlterAction => ({ kind: 'SetOptions', loc, options: this.subrule(33, this.optionsList) }) },
          ]);
        },
      },
      {
        ALT: (): A.AlterAction => {
          this.consume(34, K.ALTER!);
          this.consume(35, K.COLUMN!);
          const ifExists = this.subrule(36, this.ifExists);
          const name = this.subrule(37, this.ident);
          const action = this.or(38, [
            {
              ALT: (): A.AlterColumnAction => {
                this.consume(39, K.SET!);
                return this.or(40, [
                  {
                    ALT: (): A.AlterColumnAction => {
                      this.consume(41, K.DATA!);
                      this.consume(42, K.TYPE!);
                      return { kind: 'SetDataType', type: this.subrule(43, this.type, { ARGS: [true] }) };
                    },
                  },
                  { ALT: (): A.AlterColumnAction => (this.consume(44, K.DEFAULT!), { kind: 'SetDefault', expr: this.subrule(45, this.expr) }) },
                  { ALT: (): A.AlterColumnAction => ({ kind: 'SetOptions', options: this.subrule(46, this.optionsList) }) },
                ]);
              },
            },
            {
              ALT: (): A.AlterColumnAction => {
                this.consume(47, K.DROP!);
                return this.or(48, [
                  { ALT: (): A.AlterColumnAction => (this.consume(49, K.DEFAULT!), { kind: 'DropDefault' }) },
                  { ALT: (): A.AlterColumnAction => (this.consume(50, K.NOT!), this.consume(51, K.NULL!), { kind: 'DropNotNull' }) },
                ]);
              },
            },
          ]);
          return { kind: 'AlterColumn', loc, ifExists, name, action };
        },
      },
    ]);
  });

  // -------------------------------------------------------------------------
  // DML and other statements
  // -------------------------------------------------------------------------

  private insertStatement = this.RULE('insertStatement', (): A.InsertStmt => {
    const t = this.consume(1, K.INSERT!);
    this.option(2, {
      GATE: () => this.isKw('IGNORE', 2) || this.isKw('REPLACE', 2) || this.isKw('UPDATE', 2),
      DEF: () => this.consume(3, K.OR!),
    });
    const mode = this.option(4, {
      GATE: () => this.isIdent(2) || this.isKw('INTO', 2),
      DEF: () =>
        this.or(5, [
          { ALT: () => this.consume(6, K.IGNORE!) },
          { ALT: () => this.consume(7, K.REPLACE!) },
          { ALT: () => this.consume(8, K.UPDATE!) },
        ]),
    });
    this.option(9, () => this.consume(10, K.INTO!));
    const target = this.subrule(11, this.path);
    const s: A.InsertStmt = { kind: 'Insert', loc: this.loc(t), start: t.startOffset, end: 0, target };
    if (mode) s.insertMode = this.up(mode) as A.InsertStmt['insertMode'];
    this.option(12, {
      GATE: () => !this.startsQuery(2),
      DEF: () => {
        this.consume(13, LP);
        s.columns = this.subrule(14, this.identList);
        this.consume(15, RP);
      },
    });
    this.or(16, [
      {
        ALT: () => {
          this.consume(17, K.VALUES!);
          const values: A.Expr[][] = [];
          const row = () => {
            this.consume(18, LP);
            values.push(this.subrule(19, this.valuesList));
            this.consume(20, RP);
          };
          row();
          this.many(21, () => {
            this.consume(22, COMMA);
            this.consume(23, LP);
            values.push(this.subrule(24, this.valuesList));
            this.consume(25, RP);
          });
          s.values = values;
        },
      },
      { GATE: () => this.startsQuery(), ALT: () => (s.query = this.subrule(26, this.query)) },
    ]);
    this.subrule(27, this.dmlTail, { ARGS: [s] });
    return this.stmtEnd(s);
  });

  private dmlTail = this.RULE('dmlTail', (s?: { assertRowsModified?: A.Expr; returning?: A.SelectItem[] }): void => {
    const target = s ?? {};
    this.option(1, () => (this.consume(2, K.ASSERT_ROWS_MODIFIED!), (target.assertRowsModified = this.subrule(3, this.expr))));
    this.option(4, {
      GATE: () => this.isKw('RETURN', 2),
      DEF: () => {
        this.consume(5, K.THEN!);
        this.consume(6, K.RETURN!);
        this.option(7, {
          GATE: () => this.isKw('ACTION', 2),
          DEF: () => {
            this.consume(8, K.WITH!);
            this.consume(9, K.ACTION!);
            this.option(10, () => (this.consume(11, K.AS!), this.subrule(12, this.ident)));
          },
        });
        target.returning = this.subrule(13, this.selectList);
      },
    });
  });

  private dmlAlias = this.RULE('dmlAlias', (): string | undefined =>
    this.option(1, () =>
      this.or(2, [{ ALT: () => (this.consume(3, K.AS!), this.subrule(4, this.ident)) }, { ALT: () => this.subrule(5, this.ident) }]),
    ),
  );

  private updateItem = this.RULE('updateItem', (nested?: A.NestedDmlItem[], out?: A.UpdateItem[], pos?: { n: number }): void => {
    this.or(1, [
      {
        GATE: () => nested !== undefined && (this.isKw('DELETE', 2) || this.isKw('UPDATE', 2) || this.isKw('INSERT', 2)),
        ALT: () => {
          this.consume(2, LP);
          const stmt = this.subrule(3, this.nestedDml);
          if (this.live) nested!.push({ stmt, position: pos!.n++ });
          this.consume(4, RP);
        },
      },
      {
        ALT: () => {
          const target = this.subrule(5, this.postfixExpr);
          this.consume(6, S['=']!);
          const value = this.subrule(7, this.valueOrDefault);
          if (this.live) {
            out!.push({ target, value });
            pos!.n++;
          }
        },
      },
    ]);
  });

  private updateItems = this.RULE('updateItems', (nested?: A.NestedDmlItem[]): A.UpdateItem[] => {
    const out: A.UpdateItem[] = [];
    const pos = { n: 0 };
    this.subrule(1, this.updateItem, { ARGS: [nested, out, pos] });
    this.many(2, () => {
      this.consume(3, COMMA);
      this.subrule(4, this.updateItem, { ARGS: [nested, out, pos] });
    });
    return out;
  });

  private nestedDml = this.RULE('nestedDml', (): A.InsertStmt | A.UpdateStmt | A.DeleteStmt =>
    this.or(1, [
      { ALT: () => this.subrule(2, this.insertStatement) },
      {
        ALT: (): A.DeleteStmt => {
          const t = this.consume(3, K.DELETE!);
          const target = this.subrule(4, this.path);
          this.subrule(5, this.dmlAlias);
          const withOffset = this.option(6, { GATE: () => this.isKw('OFFSET', 2), DEF: () => this.subrule(7, this.withOffset) });
          const s: A.DeleteStmt = { kind: 'Delete', loc: this.loc(t), start: t.startOffset, end: 0, target, withOffset };
          this.option(8, () => (this.consume(9, K.WHERE!), (s.where = this.subrule(10, this.expr))));
          this.subrule(11, this.dmlTail, { ARGS: [s] });
          return this.stmtEnd(s);
        },
      },
      {
        ALT: (): A.UpdateStmt => {
          const t = this.consume(12, K.UPDATE!);
          const target = this.subrule(13, this.path);
          const alias = this.subrule(14, this.dmlAlias);
          const withOffset = this.option(15, { GATE: () => this.isKw('OFFSET', 2), DEF: () => this.subrule(16, this.withOffset) });
          this.consume(17, K.SET!);
          const nestedDml: A.NestedDmlItem[] = [];
          const set = this.subrule(18, this.updateItems, { ARGS: [nestedDml] });
          const s: A.UpdateStmt = { kind: 'Update', loc: this.loc(t), start: t.startOffset, end: 0, target, alias, set, withOffset };
          if (nestedDml.length) s.nestedDml = nestedDml;
          this.option(19, () => (this.consume(20, K.WHERE!), (s.where = this.subrule(21, this.expr))));
          this.subrule(22, this.dmlTail, { ARGS: [s] });
          return this.stmtEnd(s);
        },
      },
    ]),
  );

  private updateStatement = this.RULE('updateStatement', (): A.UpdateStmt => {
    const t = this.consume(1, K.UPDATE!);
    const target = this.subrule(2, this.path);
    const alias = this.subrule(3, this.dmlAlias);
    this.consume(4, K.SET!);
    const nestedDml: A.NestedDmlItem[] = [];
    const set = this.subrule(5, this.updateItems, { ARGS: [nestedDml] });
    const s: A.UpdateStmt = { kind: 'Update', loc: this.loc(t), start: t.startOffset, end: 0, target, alias, set };
    if (nestedDml.length) s.nestedDml = nestedDml;
    this.option(6, () => (this.consume(7, K.FROM!), (s.from = this.subrule(8, this.fromClause))));
    this.option(9, () => (this.consume(10, K.WHERE!), (s.where = this.subrule(11, this.expr))));
    this.subrule(12, this.dmlTail, { ARGS: [s] });
    return this.stmtEnd(s);
  });

  private deleteStatement = this.RULE('deleteStatement', (): A.DeleteStmt => {
    const t = this.consume(1, K.DELETE!);
    this.option(2, () => this.consume(3, K.FROM!));
    const target = this.subrule(4, this.path);
    const alias = this.subrule(5, this.dmlAlias);
    const s: A.DeleteStmt = { kind: 'Delete', loc: this.loc(t), start: t.startOffset, end: 0, target, alias };
    this.option(6, () => (this.consume(7, K.WHERE!), (s.where = this.subrule(8, this.expr))));
    this.subrule(9, this.dmlTail, { ARGS: [s] });
    return this.stmtEnd(s);
  });

  private mergeClause = this.RULE('mergeClause', (): A.MergeClause => {
    this.consume(1, K.WHEN!);
    const match = this.or(2, {
      ERR_MSG: 'keyword NOT',
      DEF: [
      { ALT: (): A.MergeClause['match'] => (this.consume(3, K.MATCHED!), 'MATCHED') },
      {
        ALT: (): A.MergeClause['match'] => {
          this.consume(4, K.NOT!);
          this.consume(5, K.MATCHED!);
          return (
            this.option(6, () => {
              this.consume(7, K.BY!);
              return this.or(8, [
                { ALT: (): A.MergeClause['match'] => (this.consume(9, K.SOURCE!), 'NOT MATCHED BY SOURCE') },
                { ALT: (): A.MergeClause['match'] => (this.consume(10, K.TARGET!), 'NOT MATCHED BY TARGET') },
              ]);
            }) ?? 'NOT MATCHED BY TARGET'
          );
        },
      },
    ]});
    const condition = this.option(11, () => (this.consume(12, K.AND!), this.subrule(13, this.expr)));
    this.consume(14, K.THEN!);
    const next = this.LA(1);
    const action = this.or(15, [
      { ALT: (): A.MergeAction => (this.consume(16, K.UPDATE!), this.consume(17, K.SET!), { kind: 'MergeUpdate', set: this.subrule(18, this.updateItems) }) },
      { ALT: (): A.MergeAction => (this.consume(19, K.DELETE!), { kind: 'MergeDelete' }) },
      {
        ALT: (): A.MergeAction => {
          this.consume(20, K.INSERT!);
          const columns = this.option(21, () => {
            this.consume(22, LP);
            const c = this.subrule(23, this.identList);
            this.consume(24, RP);
            return c;
          });
          return this.or(25, [
            {
              ALT: (): A.MergeAction => {
                const r = this.consume(26, K.ROW!);
                // INSERT ROW takes no column list (data-manipulation-language: MERGE, merge_insert_clause).
                if (this.live && columns) throw new SqlSyntaxError('Syntax error: Expected keyword VALUES but got keyword ROW', r.startLine!, r.startColumn!);
                return { kind: 'MergeInsert', columns, row: true };
              },
            },
            {
              ALT: (): A.MergeAction => {
                this.consume(27, K.VALUES!);
                this.consume(28, LP);
                const values = this.subrule(29, this.valuesList);
                this.consume(30, RP);
                return { kind: 'MergeInsert', columns, values, row: false };
              },
            },
          ]);
        },
      },
    ]);
    // The documented grammar: WHEN MATCHED and NOT MATCHED BY SOURCE take UPDATE or DELETE, NOT MATCHED [BY TARGET] takes INSERT.
    this.ACTION(() => {
      const byTarget = match === 'NOT MATCHED BY TARGET';
      if (byTarget !== (action.kind === 'MergeInsert')) {
        throw new SqlSyntaxError(`Syntax error: Expected ${byTarget ? 'keyword INSERT' : 'keyword DELETE or keyword UPDATE'} but got keyword ${next.image.toUpperCase()}`, next.startLine!, next.startColumn!);
      }
    });
    return { match, condition, action };
  });

  private mergeStatement = this.RULE('mergeStatement', (): A.MergeStmt => {
    const t = this.consume(1, K.MERGE!);
    this.option(2, () => this.consume(3, K.INTO!));
    const target = this.subrule(4, this.path);
    const alias = this.subrule(5, this.dmlAlias);
    this.consume(6, K.USING!);
    const source = this.subrule(7, this.tablePrimary);
    // The source is a table or a subquery (data-manipulation-language: MERGE, source_name), not UNNEST.
    if (this.live && source.kind === 'UnnestRef') throw new SqlSyntaxError('Syntax error: MERGE USING takes a table name or a subquery, not UNNEST', source.loc.line, source.loc.column);
    this.consume(8, K.ON!);
    const on = this.subrule(9, this.expr);
    const clauses: A.MergeClause[] = [];
    // The grammar wants at least one WHEN clause.
    this.atLeastOne(10, { ERR_MSG: 'keyword WHEN', DEF: () => clauses.push(this.subrule(11, this.mergeClause)) });
    return this.stmtEnd<A.MergeStmt>({ kind: 'Merge', loc: this.loc(t), start: t.startOffset, end: 0, target, alias, source, on, clauses });
  });

  private exportData = this.RULE('exportData', (): A.ExportDataStmt => {
    const t = this.consume(1, K.EXPORT!);
    this.consume(2, K.DATA!);
    const s: A.ExportDataStmt = { kind: 'ExportData', loc: this.loc(t), start: t.startOffset, end: 0, query: undefined as unknown as A.Query };
    this.option(3, () => {
      this.consume(4, K.WITH!);
      this.consume(5, K.CONNECTION!);
      s.connection = this.subrule(6, this.connectionName);
    });
    this.option(7, () => (s.options = this.subrule(8, this.optionsList)));
    this.consume(9, K.AS!);
    s.query = this.subrule(10, this.query);
    return this.stmtEnd(s);
  });

  private loadData = this.RULE('loadData', (): A.LoadDataStmt => {
    const t = this.consume(1, K.LOAD!);
    this.consume(2, K.DATA!);
    const overwrite = this.or(3, {
      ERR_MSG: 'keyword INTO',
      DEF: [{ ALT: () => (this.consume(4, K.OVERWRITE!), true) }, { ALT: () => (this.consume(5, K.INTO!), false) }],
    });
    const temp = this.option(6, () => this.or(7, [{ ALT: () => this.consume(8, K.TEMP!) }, { ALT: () => this.consume(9, K.TEMPORARY!) }])) !== undefined;
    this.option(10, { GATE: () => temp, DEF: () => this.consume(11, K.TABLE!) });
    const name = this.subrule(12, this.path);
    const s: A.LoadDataStmt = { kind: 'LoadData', loc: this.loc(t), start: t.startOffset, end: 0, overwrite, temp, name, fromFilesOptions: [] };
    // [[OVERWRITE] PARTITIONS (column = value)]: the one partition the load writes (PARTITIONS is not a keyword).
    this.option(44, {
      GATE: () => this.isKw('PARTITIONS') || (this.isKw('OVERWRITE') && this.isKw('PARTITIONS', 2)),
      DEF: () => {
        const ow = this.option(45, () => this.consume(46, K.OVERWRITE!)) !== undefined;
        this.subrule(47, this.ident);
        this.consume(48, LP);
        const column = this.subrule(49, this.ident);
        this.consume(50, S['=']!);
        const value = this.subrule(51, this.expr);
        this.consume(52, RP);
        s.partitions = { column, value, overwrite: ow };
      },
    });
    this.option(13, () => (s.columns = this.subrule(14, this.columnDefList)));
    this.many(15, () =>
      this.or(16, [
        { ALT: () => (this.consume(17, K.PARTITION!), this.consume(18, K.BY!), (s.partitionBy = this.subrule(19, this.expr))) },
        { ALT: () => (this.consume(20, K.CLUSTER!), this.consume(21, K.BY!), (s.clusterBy = this.subrule(22, this.exprList))) },
        { ALT: () => (s.options = this.subrule(23, this.optionsList)) },
        {
          ALT: () => {
            this.consume(24, K.FROM!);
            this.consume(25, K.FILES!);
            this.consume(26, LP);
            const opts: A.OptionEntry[] = [];
            const n = this.subrule(27, this.identAfterDot);
            this.consume(28, S['=']!);
            opts.push({ name: n, value: this.subrule(29, this.expr) });
            this.many(30, () => {
              this.consume(31, COMMA);
              const n2 = this.subrule(32, this.identAfterDot);
              this.consume(33, S['=']!);
              opts.push({ name: n2, value: this.subrule(34, this.expr) });
            });
            this.consume(35, RP);
            s.fromFilesOptions = opts;
          },
        },
        {
          GATE: () => this.isKw('PARTITION', 2),
          ALT: () => {
            this.consume(36, K.WITH!);
            this.consume(37, K.PARTITION!);
            this.consume(38, K.COLUMNS!);
            s.withPartitionColumns = this.option(39, () => this.subrule(40, this.columnDefList)) ?? [];
          },
        },
        {
          GATE: () => this.isKw('CONNECTION', 2),
          ALT: () => {
            this.consume(41, K.WITH!);
            this.consume(42, K.CONNECTION!);
            s.withConnection = this.subrule(43, this.connectionName);
          },
        },
      ]),
    );
    return this.stmtEnd(s);
  });

  private grantRole = this.RULE('grantRole', (): string =>
    this.or(1, [{ ALT: () => this.subrule(2, this.stringLit) }, { ALT: () => this.joined(this.subrule(3, this.path)) }]),
  );

  private grantStatement = this.RULE('grantStatement', (): A.GrantStmt => {
    const t = this.or(1, [{ ALT: () => this.consume(2, K.GRANT!) }, { ALT: () => this.consume(3, K.REVOKE!) }]);
    const revoke = this.up(t) === 'REVOKE';
    const roles = [this.subrule(4, this.grantRole)];
    this.many(5, () => {
      this.consume(6, COMMA);
      roles.push(this.subrule(7, this.grantRole));
    });
    this.consume(8, K.ON!);
    const resourceType = this.up(this.consume(9, AnyWord));
    const resource = this.subrule(10, this.path);
    this.or(11, [
      { GATE: () => revoke, ALT: () => this.consume(12, K.FROM!) },
      { GATE: () => !revoke, ALT: () => this.consume(13, K.TO!) },
    ]);
    const grantees = this.subrule(14, this.exprList);
    return this.stmtEnd<A.GrantStmt>({ kind: 'Grant', loc: this.loc(t), start: t.startOffset, end: 0, revoke, roles, resourceType, resource, grantees });
  });

  // -------------------------------------------------------------------------
  // Types
  // -------------------------------------------------------------------------

  /** columnOpts: allow NOT NULL / OPTIONS / COLLATE on nested STRUCT fields (DDL). */
  type = this.RULE('type', (columnOpts?: boolean): A.TypeNode => {
    const t = this.la(1);
    const loc = this.loc(t);
    return this.or(1, {
      ERR_MSG: 'type',
      DEF: [
        {
          ALT: (): A.TypeNode => {
            this.consume(2, K.ARRAY!);
            this.consume(3, S['<']!);
            const element = this.subrule(4, this.type, { ARGS: [columnOpts] });
            this.consume(5, S['>']!);
            return { kind: 'ArrayType', loc, element };
          },
        },
        {
          ALT: (): A.TypeNode => {
            this.consume(6, K.STRUCT!);
            return this.or(7, [
              { ALT: (): A.TypeNode => (this.consume(8, S['<>']!), { kind: 'StructType', loc, fields: [] }) },
              { ALT: (): A.TypeNode => this.subrule(9, this.structTypeBody, { ARGS: [loc, columnOpts] }) },
            ]);
          },
        },
        {
          ALT: (): A.TypeNode => {
            this.consume(10, K.RANGE!);
            this.consume(11, S['<']!);
            const element = this.subrule(12, this.type);
            this.consume(13, S['>']!);
            return { kind: 'RangeType', loc, element };
          },
        },
        { GATE: () => this.isKw('TYPE', 2), ALT: (): A.TypeNode => (this.consume(14, K.ANY!), this.consume(15, K.TYPE!), { kind: 'AnyType', loc }) },
        { GATE: () => this.isKw('TABLE', 2), ALT: (): A.TypeNode => (this.consume(16, K.ANY!), this.consume(17, K.TABLE!), { kind: 'AnyTableType', loc }) },
        {
          GATE: () => this.isKw('TABLE') && this.isSym('<', 2),
          ALT: (): A.TypeNode => {
            this.consume(18, K.TABLE!);
            this.consume(19, S['<']!);
            const columns: { name: string; type: A.TypeNode }[] = [];
            const n = this.subrule(20, this.ident);
            columns.push({ name: n, type: this.subrule(21, this.type) });
            this.many(22, () => {
              this.consume(23, COMMA);
              const n2 = this.subrule(24, this.ident);
              columns.push({ name: n2, type: this.subrule(25, this.type) });
            });
            this.consume(26, S['>']!);
            return { kind: 'TableType', loc, columns };
          },
        },
        { ALT: (): A.TypeNode => this.subrule(27, this.scalarType) },
      ],
    });
  });

  private scalarType = this.RULE('scalarType', (): A.ScalarTypeNode => {
    const t = this.or(1, [{ ALT: () => this.consume(2, Identifier) }, { ALT: () => this.consume(3, K.INTERVAL!) }]);
    let name = t.tokenType === QuotedIdent ? this.nameOf(t) : this.up(t);
    // Qualified type names (proto/enum) keep their dotted path.
    this.many(4, {
      GATE: () => this.isSym('.') && this.isPathPart(2),
      DEF: () => {
        this.consume(5, DOT);
        name += '.' + this.subrule(6, this.identAfterDot);
      },
    });
    const node: A.ScalarTypeNode = { kind: 'ScalarType', loc: this.loc(t), name, params: [] };
    this.option(7, () => {
      this.consume(8, LP);
      const param = (i: number) =>
        this.or(i, {
          ERR_MSG: 'integer literal',
          DEF: [
            { ALT: () => node.params.push(this.consume(i + 1, IntLit).image) },
            {
              ALT: () => {
                const w = this.consume(i + 2, AnyWord);
                node.params.push(this.up(w) === 'MAX' ? 'MAX' : w.image);
              },
            },
            { ALT: () => (this.consume(i + 3, S['-']!), node.params.push('-' + this.consume(i + 4, IntLit).image)) },
          ],
        });
      param(10);
      this.many(20, () => {
        this.consume(21, COMMA);
        param(30);
      });
      this.consume(40, RP);
    });
    this.option(41, {
      GATE: () => this.isType(T.String, 2),
      DEF: () => {
        this.consume(42, K.COLLATE!);
        node.collate = this.subrule(43, this.stringLit);
      },
    });
    return node;
  });

  private structField = this.RULE('structField', (columnOpts?: boolean): A.StructFieldType => {
    // `name TYPE` vs anonymous `TYPE`: a field name is followed by another word.
    const name = this.option(1, {
      GATE: () => this.isIdent() && (this.la(2).kind === T.Word || this.la(2).kind === T.QuotedIdent),
      DEF: () => this.subrule(2, this.ident),
    });
    const type = this.subrule(3, this.type, { ARGS: [columnOpts] });
    const f: A.StructFieldType = { name, type };
    if (this.live && type.kind === 'ScalarType' && type.collate) f.collate = type.collate;
    this.many(4, {
      GATE: () => columnOpts === true,
      DEF: () =>
        this.or(5, [
          { GATE: () => this.isKw('NULL', 2), ALT: () => (this.consume(6, K.NOT!), this.consume(7, K.NULL!), (f.notNull = true)) },
          { ALT: () => (f.options = this.subrule(8, this.optionsList)) },
          { ALT: () => (this.consume(9, K.COLLATE!), (f.collate = this.subrule(10, this.stringLit))) },
        ]),
    });
    return f;
  });

  private structTypeBody = this.RULE('structTypeBody', (loc?: A.Loc, columnOpts?: boolean): A.StructTypeNode => {
    this.consume(1, S['<']!);
    const fields: A.StructFieldType[] = [];
    if (this.must(!this.isSym('>'))) {
      fields.push(this.subrule(3, this.structField, { ARGS: [columnOpts] }));
      this.many(4, () => {
        this.consume(5, COMMA);
        fields.push(this.subrule(6, this.structField, { ARGS: [columnOpts] }));
      });
    }
    this.consume(7, S['>']!);
    return { kind: 'StructType', loc: loc!, fields };
  });

  // -------------------------------------------------------------------------
  // Queries
  // -------------------------------------------------------------------------

  query = this.RULE('query', (): A.Query => {
    const t = this.la(1);
    const withClause = this.option(1, () => this.subrule(2, this.withClause));
    const body = this.subrule(3, this.setExpr);
    const q: A.Query = { kind: 'Query', loc: this.loc(t), with: withClause, body, pipes: [] };
    this.option(4, () => {
      this.consume(5, K.ORDER!);
      this.consume(6, K.BY!);
      q.orderBy = this.subrule(7, this.orderByList);
    });
    this.option(8, () => {
      this.consume(9, K.LIMIT!);
      this.or(10, [
        { ALT: () => (this.consume(11, K.ALL!), (q.limitAll = true)) },
        { ALT: () => (q.limit = this.subrule(12, this.expr)) },
      ]);
      this.option(13, () => (this.consume(14, K.OFFSET!), (q.offset = this.subrule(15, this.expr))));
    });
    this.many(16, () => q.pipes.push(this.subrule(17, this.pipeOp)));
    return q;
  });

  /** `( query )` — run by BACKTRACK to tell `((SELECT ...) ...)` subqueries from parenthesized expressions/joins. */
  private parenQuery = this.RULE('parenQuery', (): A.Query => {
    this.consume(1, LP);
    const q = this.subrule(2, this.query);
    this.consume(3, RP);
    return q;
  });
  private queryThenRParen = this.RULE('queryThenRParen', (): A.Query => {
    const q = this.subrule(1, this.query);
    this.consume(2, RP);
    return q;
  });
  private speculate(rule: () => unknown): boolean {
    const saveParam = this.paramIndex;
    const ok = this.BACKTRACK(rule).call(this);
    this.paramIndex = saveParam;
    return ok;
  }

  private cte = this.RULE('cte', (): A.Cte => {
    const ct = this.la(1);
    const name = this.subrule(1, this.ident);
    this.consume(2, K.AS!);
    this.consume(3, LP);
    const query = this.subrule(4, this.query);
    this.consume(5, RP);
    const cte: A.Cte = { kind: 'Cte', loc: this.loc(ct), name, query };
    this.option(6, {
      GATE: () => this.isKw('DEPTH', 2),
      DEF: () => {
        this.consume(7, K.WITH!);
        this.consume(8, K.DEPTH!);
        const depth: NonNullable<A.Cte['depth']> = {};
        this.option(9, {
          GATE: () => !this.isKw('MAX'),
          DEF: () =>
            this.or(10, [
              { ALT: () => (this.consume(11, K.AS!), (depth.alias = this.subrule(12, this.ident))) },
              { ALT: () => (depth.alias = this.subrule(13, this.ident)) },
            ]),
        });
        this.option(14, () =>
          this.or(15, [
            {
              ALT: () => {
                this.consume(16, K.BETWEEN!);
                depth.min = this.subrule(17, this.bitOr);
                this.consume(18, K.AND!);
                depth.max = this.subrule(19, this.bitOr);
              },
            },
            { ALT: () => (this.consume(20, K.MAX!), (depth.max = this.subrule(21, this.bitOr))) },
          ]),
        );
        cte.depth = depth;
      },
    });
    return cte;
  });

  private withClause = this.RULE('withClause', (): A.WithClause => {
    const t = this.consume(1, K.WITH!);
    const recursive = this.option(2, () => this.consume(3, K.RECURSIVE!)) !== undefined;
    const ctes: A.Cte[] = [this.subrule(4, this.cte)];
    this.many(5, () => {
      this.consume(6, COMMA);
      this.option(7, { GATE: () => !this.isKw('SELECT'), DEF: () => ctes.push(this.subrule(8, this.cte)) });
    });
    return { kind: 'WithClause', loc: this.loc(t), recursive, ctes };
  });

  private setOpHead(): boolean {
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

  /**
   * Column propagation mode of a set operation: FULL [OUTER] | LEFT [OUTER] | INNER | OUTER, where OUTER alone is
   * FULL (query-syntax.md "Set operators": BY NAME or CORRESPONDING; the reference grammar has no INNER OUTER).
   */
  private setOpMode = this.RULE('setOpMode', (): 'FULL' | 'LEFT' | 'INNER' => {
    return this.or(1, [
      { ALT: () => (this.consume(2, K.FULL!), this.option(3, () => this.consume(4, K.OUTER!)), 'FULL' as const) },
      { ALT: () => (this.consume(5, K.LEFT!), this.option(6, () => this.consume(7, K.OUTER!)), 'LEFT' as const) },
      { ALT: () => (this.consume(8, K.INNER!), 'INNER' as const) },
      { ALT: () => (this.consume(9, K.OUTER!), 'FULL' as const) },
    ]);
  });

  /** CORRESPONDING / BY NAME modifiers of a set operation; `on` allows BY NAME ON (cols). */
  private setOpModifiers = this.RULE('setOpModifiers', (withColumns?: boolean): { corresponding?: A.Corresponding; byName?: boolean } => {
    const out: { corresponding?: A.Corresponding; byName?: boolean } = {};
    const strict = this.option(1, { GATE: () => this.isKw('CORRESPONDING', 2), DEF: () => this.consume(2, K.STRICT!) }) !== undefined;
    this.option(3, {
      GATE: () => !this.isKw('BY') || this.isKw('NAME', 2),
      DEF: () =>
      this.or(4, [
        {
          ALT: () => {
            this.consume(5, K.CORRESPONDING!);
            const c: A.Corresponding = strict ? { strict } : {};
            out.corresponding = c;
            this.option(6, {
              GATE: () => withColumns === true,
              DEF: () => {
                this.consume(7, K.BY!);
                this.consume(8, LP);
                c.by = this.subrule(9, this.identList);
                this.consume(10, RP);
              },
            });
          },
        },
        {
          GATE: () => this.isKw('NAME', 2),
          ALT: () => {
            this.consume(11, K.BY!);
            this.consume(12, K.NAME!);
            const c: A.Corresponding = {};
            out.byName = true;
            out.corresponding = c;
            this.option(13, {
              GATE: () => withColumns === true,
              DEF: () => {
                this.consume(14, K.ON!);
                this.consume(15, LP);
                c.by = this.subrule(16, this.identList);
                this.consume(17, RP);
              },
            });
          },
        },
      ]),
    });
    return out;
  });

  private setExpr = this.RULE('setExpr', (): A.QueryExpr => {
    let left = this.subrule(1, this.queryPrimary);
    let firstSig: string | undefined;
    this.many(2, {
      GATE: () => this.setOpHead(),
      DEF: () => {
        const t = this.la(1);
        const outerMode = this.option(3, () => this.subrule(4, this.setOpMode));
        const opTok = this.or(10, [{ ALT: () => this.consume(11, K.UNION!) }, { ALT: () => this.consume(12, K.INTERSECT!) }, { ALT: () => this.consume(13, K.EXCEPT!) }]);
        const op = this.up(opTok) as A.SetOperation['op'];
        const quantifier = this.or(14, {
          ERR_MSG: 'keyword ALL or keyword DISTINCT',
          DEF: [
            { ALT: (): A.SetOperation['quantifier'] => (this.consume(15, K.ALL!), 'ALL') },
            { ALT: (): A.SetOperation['quantifier'] => (this.consume(16, K.DISTINCT!), 'DISTINCT') },
          ],
        });
        const m = this.subrule(17, this.setOpModifiers, { ARGS: [true] });
        if (this.live) {
          const corresponding = m.corresponding;
          const sig = `${outerMode ?? ''} ${op} ${quantifier} ${corresponding ? 'C' + (corresponding.by ?? []).join(',') : ''}`;
          if (firstSig === undefined) firstSig = sig;
          else if (sig !== firstSig) this.failMsg(t, 'Different set operations cannot be used in the same query without using parentheses for grouping');
        }
        const right = this.subrule(18, this.queryPrimary);
        left = { kind: 'SetOperation', loc: this.loc(t), op, quantifier, outerMode, corresponding: m.corresponding, byName: m.byName, left, right };
      },
    });
    return left;
  });

  private queryPrimary = this.RULE('queryPrimary', (): A.QueryExpr => {
    const t = this.la(1);
    return this.or(1, [
      {
        // `(query) AS t |> ...`: a pipe query may start with an aliased subquery (pipe syntax reference, AS/JOIN examples).
        GATE: () => this.startsAliasedPipeInput(),
        ALT: (): A.QueryExpr => {
          const query = this.subrule(6, this.parenQuery);
          const alias = this.subrule(7, this.aliasRequired);
          return { kind: 'FromQuery', loc: this.loc(t), from: { kind: 'SubqueryRef', loc: this.loc(t), query, alias } };
        },
      },
      { ALT: (): A.QueryExpr => this.subrule(2, this.parenQuery) },
      { ALT: (): A.QueryExpr => this.subrule(3, this.select) },
      { ALT: (): A.QueryExpr => (this.consume(4, K.FROM!), { kind: 'FromQuery', loc: this.loc(t), from: this.subrule(5, this.fromClause) }) },
    ]);
  });

  /** `( ... ) [AS] alias |>`: the closing parenthesis of the first one, then an alias, then a pipe. */
  private startsAliasedPipeInput(): boolean {
    if (!this.isSym('(')) return false;
    let depth = 0;
    for (let k = 1; ; k++) {
      const t = this.la(k);
      if (t.tokenType === EOF) return false;
      if (t.kind !== T.Symbol) continue;
      if (t.image === '(') depth++;
      else if (t.image === ')' && --depth === 0) {
        const a = this.isKw('AS', k + 1) ? k + 2 : k + 1;
        return this.isIdent(a) && this.isSym('|>', a + 1);
      }
    }
  }

  private select = this.RULE('select', (): A.Select => {
    const t = this.consume(1, K.SELECT!);
    const s: A.Select = { kind: 'Select', loc: this.loc(t), distinct: false, items: [] };
    this.option(2, {
      GATE: () => this.isIdent(2),
      DEF: () => {
        this.consume(3, K.WITH!);
        const name = this.str(this.subrule(4, this.ident)).toUpperCase();
        this.inSelectModifier = true;
        try {
          s.withModifier = { name, options: this.option(5, () => this.subrule(6, this.optionsList)) };
        } finally {
          this.inSelectModifier = false;
        }
      },
    });
    this.option(7, () =>
      this.or(8, [{ ALT: () => (this.consume(9, K.DISTINCT!), (s.distinct = true)) }, { ALT: () => this.consume(10, K.ALL!) }]),
    );
    this.option(11, {
      GATE: () => this.isKw('STRUCT', 2) || this.isKw('VALUE', 2),
      DEF: () => {
        this.consume(12, K.AS!);
        const m = this.or(13, [{ ALT: () => this.consume(14, K.STRUCT!) }, { ALT: () => this.consume(15, K.VALUE!) }]);
        s.asMode = this.up(m) as 'STRUCT' | 'VALUE';
      },
    });
    s.items = this.subrule(16, this.selectList);
    this.option(17, () => (this.consume(18, K.FROM!), (s.from = this.subrule(19, this.fromClause))));
    this.option(20, () => (this.consume(21, K.WHERE!), (s.where = this.subrule(22, this.expr))));
    this.option(23, () => (s.groupBy = this.subrule(24, this.groupBy)));
    this.option(25, () => (this.consume(26, K.HAVING!), (s.having = this.subrule(27, this.expr))));
    this.option(28, () => (this.consume(29, K.QUALIFY!), (s.qualify = this.subrule(30, this.expr))));
    this.option(31, () => (this.consume(32, K.WINDOW!), (s.window = this.subrule(33, this.namedWindows))));
    return s;
  });
  /** Recording-phase-safe views of SUBRULE results (dummies while the grammar is recorded). */
  private str(v: unknown): string {
    return typeof v === 'string' ? v : '';
  }
  private joined(p: A.Path): string {
    return Array.isArray(p) ? p.join('.') : '';
  }

  private namedWindow = this.RULE('namedWindow', (): A.NamedWindow => {
    const t = this.la(1);
    const name = this.subrule(1, this.ident);
    this.consume(2, K.AS!);
    const spec = this.or(3, [
      { ALT: () => this.subrule(4, this.windowSpecParen) },
      {
        ALT: (): A.WindowSpec => {
          const bt = this.la(1);
          return { kind: 'WindowSpec', loc: this.loc(bt), baseName: this.subrule(5, this.ident), partitionBy: [], orderBy: [] };
        },
      },
    ]);
    return { kind: 'NamedWindow', loc: this.loc(t), name, spec };
  });

  private namedWindows = this.RULE('namedWindows', (): A.NamedWindow[] => {
    const out = [this.subrule(1, this.namedWindow)];
    this.many(2, () => {
      this.consume(3, COMMA);
      out.push(this.subrule(4, this.namedWindow));
    });
    return out;
  });

  private groupBy = this.RULE('groupBy', (): A.GroupBy => {
    const t = this.consume(1, K.GROUP!);
    this.consume(2, K.BY!);
    return this.or(3, [
      { GATE: () => !this.isSym('(', 2), ALT: (): A.GroupBy => (this.consume(4, K.ALL!), { kind: 'GroupBy', loc: this.loc(t), all: true, items: [] }) },
      {
        ALT: (): A.GroupBy => {
          const items = [this.subrule(5, this.groupingItem)];
          this.many(6, () => {
            this.consume(7, COMMA);
            items.push(this.subrule(8, this.groupingItem));
          });
          return { kind: 'GroupBy', loc: this.loc(t), all: false, items };
        },
      },
    ]);
  });

  private groupingItem = this.RULE('groupingItem', (): A.GroupingItem => {
    const t = this.la(1);
    return this.or(1, [
      { GATE: () => this.isSym(')', 2), ALT: (): A.GroupingItem => (this.consume(2, LP), this.consume(3, RP), { kind: 'EmptyGroupingSet', loc: this.loc(t) }) },
      {
        GATE: () => this.isSym('(', 2),
        ALT: (): A.GroupingItem => {
          const k = this.or(4, [{ ALT: () => this.consume(5, K.ROLLUP!) }, { ALT: () => this.consume(6, K.CUBE!) }]);
          this.consume(7, LP);
          const exprs = this.subrule(8, this.exprList);
          this.consume(9, RP);
          return { kind: this.up(k) === 'ROLLUP' ? 'Rollup' : 'Cube', loc: this.loc(t), exprs };
        },
      },
      {
        GATE: () => this.isKw('SETS', 2),
        ALT: (): A.GroupingItem => {
          this.consume(10, K.GROUPING!);
          this.consume(11, K.SETS!);
          this.consume(12, LP);
          const sets = [this.subrule(13, this.groupingItem)];
          this.many(14, () => {
            this.consume(15, COMMA);
            sets.push(this.subrule(16, this.groupingItem));
          });
          this.consume(17, RP);
          return { kind: 'GroupingSets', loc: this.loc(t), sets };
        },
      },
      { ALT: (): A.GroupingItem => this.subrule(18, this.expr) },
    ]);
  });

  private clauseEndAfterComma(): boolean {
    const t = this.la(1);
    if (t.tokenType === EOF) return true;
    if (t.kind === T.Symbol) return t.image === ')' || t.image === ';' || t.image === '|>';
    return t.kind === T.Word && CLAUSE_END.has(t.upper);
  }

  selectList = this.RULE('selectList', (): A.SelectItem[] => {
    const items = [this.subrule(1, this.selectItem)];
    this.many(2, () => {
      this.consume(3, COMMA);
      // A trailing comma before the next clause is allowed.
      this.or(4, [{ GATE: () => this.clauseEndAfterComma(), ALT: () => undefined }, { ALT: () => items.push(this.subrule(5, this.selectItem)) }]);
    });
    return items;
  });

  private starModifiers = this.RULE('starModifiers', (star?: A.SelectStar): A.SelectStar => {
    const s = star ?? ({} as A.SelectStar);
    this.option(1, {
      GATE: () => this.isSym('(', 2),
      DEF: () => {
        this.consume(2, K.EXCEPT!);
        this.consume(3, LP);
        s.except = this.subrule(4, this.identList);
        this.consume(5, RP);
      },
    });
    this.option(6, {
      GATE: () => this.isSym('(', 2),
      DEF: () => {
        this.consume(7, K.REPLACE!);
        this.consume(8, LP);
        const replace: { expr: A.Expr; alias: string }[] = [];
        const expr = this.subrule(9, this.expr);
        this.consume(10, K.AS!);
        replace.push({ expr, alias: this.subrule(11, this.ident) });
        this.many(12, () => {
          this.consume(13, COMMA);
          const e2 = this.subrule(14, this.expr);
          this.consume(15, K.AS!);
          replace.push({ expr: e2, alias: this.subrule(16, this.ident) });
        });
        this.consume(17, RP);
        s.replace = replace;
      },
    });
    return s;
  });

  private selectItem = this.RULE('selectItem', (): A.SelectItem => {
    const t = this.la(1);
    return this.or(1, [
      { ALT: (): A.SelectItem => (this.consume(2, S['*']!), this.subrule(3, this.starModifiers, { ARGS: [{ kind: 'SelectStar', loc: this.loc(t) }] })) },
      {
        ALT: (): A.SelectItem => {
          const expr = this.subrule(4, this.expr);
          return this.or(5, [
            {
              GATE: () => this.isSym('*', 2),
              ALT: (): A.SelectItem => {
                this.consume(6, DOT);
                this.consume(7, S['*']!);
                return this.subrule(8, this.starModifiers, { ARGS: [{ kind: 'SelectStar', loc: this.loc(t), qualifier: expr }] });
              },
            },
            {
              ALT: (): A.SelectItem => {
                const item: A.SelectExprItem = { kind: 'SelectExpr', loc: this.loc(t), expr };
                this.option(9, () =>
                  this.or(10, [
                    { ALT: () => (this.consume(11, K.AS!), (item.alias = this.subrule(12, this.ident))) },
                    { ALT: () => (item.alias = this.subrule(13, this.ident)) },
                  ]),
                );
                return item;
              },
            },
          ]);
        },
      },
    ]);
  });

  private orderByList = this.RULE('orderByList', (): A.OrderByItem[] => {
    const out = [this.subrule(1, this.orderByItem)];
    this.many(2, () => {
      this.consume(3, COMMA);
      out.push(this.subrule(4, this.orderByItem));
    });
    return out;
  });

  private orderByItem = this.RULE('orderByItem', (): A.OrderByItem => {
    const t = this.la(1);
    const expr = this.subrule(1, this.expr);
    const item: A.OrderByItem = { kind: 'OrderByItem', loc: this.loc(t), expr };
    this.option(2, () => {
      this.consume(3, K.COLLATE!);
      this.or(4, [
        { ALT: () => (item.collate = this.subrule(5, this.stringLit)) },
        { ALT: () => (item.collateExpr = this.subrule(6, this.primary)) },
      ]);
    });
    Object.assign(item, this.subrule(16, this.sortDirection));
    return item;
  });

  /** `[ASC | DESC] [NULLS FIRST | NULLS LAST]` after an ORDER BY or pipe AGGREGATE item. */
  sortDirection = this.RULE('sortDirection', (): { direction?: 'ASC' | 'DESC'; nulls?: 'FIRST' | 'LAST' } => {
    const out: { direction?: 'ASC' | 'DESC'; nulls?: 'FIRST' | 'LAST' } = {};
    this.option(1, () =>
      this.or(2, [
        { ALT: () => (this.consume(3, K.ASC!), (out.direction = 'ASC')) },
        { ALT: () => (this.consume(4, K.DESC!), (out.direction = 'DESC')) },
      ]),
    );
    this.option(5, () => {
      this.consume(6, K.NULLS!);
      this.or(7, {
        ERR_MSG: 'keyword LAST',
        DEF: [
          { ALT: () => (this.consume(8, K.FIRST!), (out.nulls = 'FIRST')) },
          { ALT: () => (this.consume(9, K.LAST!), (out.nulls = 'LAST')) },
        ],
      });
    });
    return out;
  });

  // -------------------------------------------------------------------------
  // FROM
  // -------------------------------------------------------------------------

  fromClause = this.RULE('fromClause', (): A.FromItem => {
    const first = this.subrule(1, this.tablePrimary);
    let left = first;
    let comma = false;
    // The chain as written, kept for consecutive ON/USING clauses (regroupJoins).
    const steps: JoinStep[] = [];
    let consecutive = false;
    this.many(2, {
      GATE: () => !this.setOpHead(),
      DEF: () =>
        this.or(3, [
          {
            ALT: () => {
              const t = this.consume(4, COMMA);
              if (this.live && consecutive) this.failMsg(t, 'Comma join is not allowed after consecutive ON/USING clauses');
              comma = true;
              const right = this.subrule(5, this.tablePrimary);
              left = { kind: 'JoinRef', loc: left.loc, joinType: 'COMMA', natural: false, left, right };
            },
          },
          {
            ALT: () => {
              const t = this.la(1);
              const j = this.subrule(6, this.joinHead);
              // `a, b RIGHT JOIN c` would read as `a, (b RIGHT JOIN c)` in some engines: the grammar refuses it (the reference).
              if (this.live && comma && (j.joinType === 'RIGHT' || j.joinType === 'FULL')) {
                this.failMsg(
                  t,
                  `${j.joinType} JOIN must be parenthesized when following a comma join.  Also, if the preceding comma join is a correlated CROSS JOIN that unnests an array, then CROSS JOIN syntax must be used in place of the comma join`,
                );
              }
              const right = this.subrule(7, this.tablePrimary);
              const conds: JoinStep['conds'] = [];
              this.many(9, () => {
                const at = this.la(1);
                conds.push({ ...this.subrule(8, this.joinCondition), at });
              });
              if (this.live && conds.length > 1) {
                // Consecutive clauses do not mix with comma joins (the reference's grammar).
                if (comma) this.failMsg(conds[1]!.at, `Unexpected keyword ${this.up(conds[1]!.at)}`);
                consecutive = true;
              }
              const { at: _at, ...cond } = conds[0] ?? { at: t };
              left = { kind: 'JoinRef', loc: left.loc, joinType: j.joinType, natural: j.natural, left, right, ...cond };
              steps.push({ head: j, at: t, right, conds });
            },
          },
        ]),
    });
    return this.live && consecutive ? this.regroupJoins(first, steps) : left;
  });

  /**
   * `a JOIN b JOIN c ON x ON y`: each ON/USING clause closes the nearest open join to its left, as parentheses
   * would (the query-syntax page's join chains: `A JOIN B JOIN C JOIN D USING (w) ON B.x = C.y ON A.z = B.x`), so
   * this reads `a JOIN (b JOIN c ON x) ON y`. A stack over the chain as written, as the reference's parser does;
   * CROSS and NATURAL joins take no clause and bind at once.
   */
  private regroupJoins(first: A.FromItem, steps: JoinStep[]): A.FromItem {
    type Open = { head: JoinStep['head']; at: IToken; left: A.FromItem };
    const open: Open[] = [];
    let cur = first;
    let joins = 0;
    let conditions = 0;
    for (const s of steps) {
      if (s.head.joinType === 'CROSS' || s.head.natural) {
        cur = { kind: 'JoinRef', loc: cur.loc, joinType: s.head.joinType, natural: s.head.natural, left: cur, right: s.right };
      } else {
        open.push({ head: s.head, at: s.at, left: cur });
        cur = s.right;
        joins++;
      }
      const unmatched = open.length;
      for (const c of s.conds) {
        const o = open.pop();
        if (!o) {
          this.failMsg(c.at, `The number of join conditions is ${s.conds.length} but the number of joins that require a join condition is only ${unmatched}. Unexpected keyword ${this.up(c.at)}`);
        }
        const { at: _at, ...cond } = c;
        cur = { kind: 'JoinRef', loc: o.left.loc, joinType: o.head.joinType, natural: false, left: o.left, right: cur, ...cond };
        if (++conditions === joins) joins = conditions = 0;
      }
    }
    if (open.length) {
      const o = open[0]!;
      this.failMsg(o.at, `The number of join conditions is ${conditions} but the number of joins that require a join condition is ${joins}. ${o.head.joinType} JOIN must have an ON or USING clause`);
    }
    return cur;
  }

  private joinHead = this.RULE('joinHead', (): { joinType: Exclude<A.JoinType, 'COMMA'>; natural: boolean } => {
    const natural = this.option(1, () => this.consume(2, K.NATURAL!)) !== undefined;
    const joinType =
      this.option(3, () =>
        this.or(4, [
          { ALT: (): Exclude<A.JoinType, 'COMMA'> => (this.consume(5, K.CROSS!), 'CROSS') },
          { ALT: (): Exclude<A.JoinType, 'COMMA'> => (this.consume(6, K.INNER!), 'INNER') },
          {
            ALT: (): Exclude<A.JoinType, 'COMMA'> => {
              const k = this.or(7, [{ ALT: () => this.consume(8, K.LEFT!) }, { ALT: () => this.consume(9, K.RIGHT!) }, { ALT: () => this.consume(10, K.FULL!) }]);
              this.option(11, () => this.consume(12, K.OUTER!));
              return this.up(k) as 'LEFT' | 'RIGHT' | 'FULL';
            },
          },
        ]),
      ) ?? 'INNER';
    this.consume(13, K.JOIN!);
    return { joinType, natural };
  });

  private joinCondition = this.RULE('joinCondition', (): { on?: A.Expr; using?: string[] } =>
    this.or(1, [
      { ALT: () => (this.consume(2, K.ON!), { on: this.subrule(3, this.expr) }) },
      {
        ALT: () => {
          this.consume(4, K.USING!);
          this.consume(5, LP);
          const using = this.subrule(6, this.identList);
          this.consume(7, RP);
          return { using };
        },
      },
    ]),
  );

  /** Non-reserved words that follow a table/expression and must not be taken as an implicit alias. */
  private isAliasStop(): boolean {
    const t = this.la(1);
    if (t.kind !== T.Word) return false;
    if ((t.upper === 'PIVOT' || t.upper === 'UNPIVOT') && (this.isSym('(', 2) || this.isKw('INCLUDE', 2) || this.isKw('EXCLUDE', 2))) return true;
    if (t.upper === 'MATCH_RECOGNIZE' && this.isSym('(', 2)) return true;
    return false;
  }

  private alias = this.RULE('alias', (): string | undefined =>
    this.option(1, { GATE: () => !this.isAliasStop(), DEF: () => this.subrule(2, this.aliasRequired) }),
  );
  private aliasRequired = this.RULE('aliasRequired', (): string =>
    this.or(1, [{ ALT: () => (this.consume(2, K.AS!), this.subrule(3, this.ident)) }, { ALT: () => this.subrule(4, this.ident) }]),
  );

  private tableSample = this.RULE('tableSample', (): A.TableSample => {
    this.consume(1, K.TABLESAMPLE!);
    const method = this.str(this.subrule(2, this.ident)).toUpperCase();
    this.consume(3, LP);
    // The size is a literal or a parameter: a sign is not part of the grammar (the reference's syntax error).
    if (this.live && this.isSym('-')) this.fail(this.la(1));
    const size = this.subrule(4, this.expr);
    const unit = this.or(5, {
      ERR_MSG: 'keyword PERCENT',
      DEF: [
        { ALT: (): 'PERCENT' | 'ROWS' => (this.consume(6, K.ROWS!), 'ROWS') },
        { ALT: (): 'PERCENT' | 'ROWS' => (this.consume(7, K.PERCENT!), 'PERCENT') },
      ],
    });
    const sample: A.TableSample = { method, size, unit };
    this.option(8, () => (this.consume(9, K.PARTITION!), this.consume(10, K.BY!), (sample.partitionBy = this.subrule(11, this.exprList))));
    this.consume(12, RP);
    this.option(13, {
      GATE: () => this.isSym('(', 2),
      DEF: () => {
        this.consume(14, K.REPEATABLE!);
        this.consume(15, LP);
        sample.repeatable = this.subrule(16, this.expr);
        this.consume(17, RP);
      },
    });
    this.option(18, {
      GATE: () => this.isKw('WEIGHT', 2),
      DEF: () => {
        this.consume(19, K.WITH!);
        this.consume(20, K.WEIGHT!);
        sample.withWeight = { alias: this.subrule(21, this.alias) };
      },
    });
    return sample;
  });

  private withOffset = this.RULE('withOffset', (): { alias?: string } => {
    this.consume(1, K.WITH!);
    this.consume(2, K.OFFSET!);
    return { alias: this.subrule(3, this.alias) };
  });
  private optWithOffset = this.RULE('optWithOffset', (): { alias?: string } | undefined =>
    this.option(1, { GATE: () => this.isKw('OFFSET', 2), DEF: () => this.subrule(2, this.withOffset) }),
  );

  private unnestItem = this.RULE('unnestItem', (st?: { exprs: A.Expr[]; aliases: (string | undefined)[]; mode?: A.Expr }): void => {
    const s = st ?? { exprs: [], aliases: [] };
    this.or(1, [
      {
        GATE: () => this.isKw('MODE') && this.isSym('=>', 2),
        ALT: () => {
          this.consume(2, K.MODE!);
          this.consume(3, S['=>']!);
          s.mode = this.subrule(4, this.expr);
        },
      },
      {
        ALT: () => {
          s.exprs.push(this.subrule(5, this.expr));
          s.aliases.push(this.option(6, () => (this.consume(7, K.AS!), this.subrule(8, this.ident))));
        },
      },
    ]);
  });

  /** Join nodes that a pair of parentheses closed (no longer a join of the group around them). */
  private parenJoins = new WeakSet<A.FromItem>();

  tablePrimary = this.RULE('tablePrimary', (): A.FromItem => {
    const t = this.la(1);
    // A query parameter names no table (the service's words; table names are never parameters).
    if (this.live && ((this.isSym('@') && this.la(2).ident === true) || this.isSym('?'))) this.failMsg(t, 'Query parameters cannot be used in place of table names');
    return this.or(1, [
      {
        ALT: (): A.FromItem => {
          this.consume(2, K.LATERAL!);
          const item = this.subrule(3, this.tablePrimary);
          if (this.live) item.lateral = true;
          return item;
        },
      },
      {
        // `(SELECT ...` is always a subquery (no backtracking: precise errors); `((SELECT ...` only if it parses as one.
        GATE: () => this.startsQuery(2) && (!this.isSym('(', 2) || this.speculate(this.parenQuery)),
        ALT: (): A.FromItem => {
          const q = this.subrule(4, this.parenQuery);
          const sq: A.SubqueryRef = { kind: 'SubqueryRef', loc: this.loc(t), query: q };
          sq.alias = this.subrule(5, this.alias);
          return this.subrule(6, this.fromPostfix, { ARGS: [sq] });
        },
      },
      {
        ALT: (): A.FromItem => {
          this.consume(7, LP);
          const item = this.subrule(8, this.fromClause);
          // Only a join may be parenthesized (query-syntax.md from_item: `( join_operation )`), as in the reference:
          // `((SELECT ...) AS d)`, `(t)` and `((a JOIN b))` are syntax errors.
          if (this.live && !hasOwnJoin(item, this.parenJoins)) this.fail(this.la(1), 'keyword JOIN');
          this.consume(9, RP);
          if (this.live) this.parenJoins.add(item);
          return this.subrule(10, this.fromPostfix, { ARGS: [item] });
        },
      },
      {
        ALT: (): A.FromItem => {
          this.consume(11, K.UNNEST!);
          this.consume(12, LP);
          const st: { exprs: A.Expr[]; aliases: (string | undefined)[]; mode?: A.Expr } = { exprs: [], aliases: [] };
          this.subrule(13, this.unnestItem, { ARGS: [st] });
          this.many(14, () => {
            this.consume(15, COMMA);
            this.subrule(16, this.unnestItem, { ARGS: [st] });
          });
          this.consume(17, RP);
          const u: A.UnnestRef = { kind: 'UnnestRef', loc: this.loc(t), exprs: st.exprs };
          if (st.aliases.some((a) => a !== undefined)) u.exprAliases = st.aliases;
          if (st.mode) u.mode = st.mode;
          u.alias = this.subrule(18, this.alias);
          u.withOffset = this.subrule(19, this.optWithOffset);
          this.option(40, { GATE: () => this.isSystemTime(), DEF: () => (u.systemTime = this.subrule(41, this.systemTime)) });
          return this.subrule(20, this.fromPostfix, { ARGS: [u] });
        },
      },
      {
        ALT: (): A.FromItem => {
          const path = this.subrule(21, this.path);
          return this.or(22, [
            {
              ALT: (): A.FromItem => {
                // Table-valued function call.
                const args = this.subrule(23, this.tvfArgs);
                const tvf: A.TvfRef = { kind: 'TvfRef', loc: this.loc(t), name: path, args };
                tvf.alias = this.subrule(24, this.alias);
                return this.subrule(25, this.fromPostfix, { ARGS: [tvf] });
              },
            },
            {
              ALT: (): A.FromItem => {
                const tr: A.TableRef = { kind: 'TableRef', loc: this.loc(t), path };
                this.many(26, {
                  GATE: () => this.isSystemTime() || (tr.alias === undefined && (this.isKw('AS') || (this.isIdent() && !this.isAliasStop()))),
                  DEF: () =>
                    this.or(27, [
                      { GATE: () => this.isKw('FOR'), ALT: () => (tr.systemTime = this.subrule(28, this.systemTime)) },
                      { ALT: () => (tr.alias = this.subrule(29, this.aliasRequired)) },
                    ]),
                });
                tr.withOffset = this.subrule(30, this.optWithOffset);
                return this.subrule(31, this.fromPostfix, { ARGS: [tr] });
              },
            },
          ]);
        },
      },
    ]);
  });

  /** `( [arg, ...] )` of a table-valued function (also `|> CALL`). */
  private tvfArgs = this.RULE('tvfArgs', (): TvfArg[] => {
    this.consume(1, LP);
    const args: TvfArg[] = [];
    if (this.must(!this.isSym(')'))) {
      args.push(this.subrule(3, this.tvfArg));
      this.many(4, () => {
        this.consume(5, COMMA);
        args.push(this.subrule(6, this.tvfArg));
      });
    }
    this.consume(7, RP);
    return args;
  });

  private tvfArg = this.RULE('tvfArg', (): TvfArg => {
    const t = this.la(1);
    return this.or(1, [
      {
        GATE: () => this.isKw('TABLE') && (this.isIdent(2) || this.la(2).kind === T.Word),
        ALT: (): TvfArg => (this.consume(2, K.TABLE!), { kind: 'TableArg', loc: this.loc(t), path: this.subrule(3, this.path) }),
      },
      {
        GATE: () => this.isKw('MODEL') && this.isIdent(2),
        ALT: (): TvfArg => (this.consume(4, K.MODEL!), { kind: 'ModelArg', loc: this.loc(t), path: this.subrule(5, this.path) }),
      },
      { GATE: () => this.startsQuery() && !this.isSym('('), ALT: (): TvfArg => this.subrule(6, this.query) },
      { ALT: (): TvfArg => this.subrule(7, this.functionArg) },
    ]);
  });

  private fromPostfix = this.RULE('fromPostfix', (input?: A.FromItem): A.FromItem => {
    let item = input!;
    // The FROM grammar is `from_item [ { pivot_operator | unpivot_operator } ] [ tablesample_operator ]`:
    // one PIVOT or UNPIVOT, then at most one TABLESAMPLE (a chain needs a subquery, as the reference agrees).
    let pivoted = false;
    let sampled = false;
    this.many(1, {
      GATE: () =>
        this.isKw('TABLESAMPLE') ||
        ((this.isKw('PIVOT') || this.isKw('MATCH_RECOGNIZE')) && this.isSym('(', 2)) ||
        (this.isKw('UNPIVOT') && (this.isSym('(', 2) || this.isKw('INCLUDE', 2) || this.isKw('EXCLUDE', 2))),
      DEF: () =>
        this.or(2, [
          {
            ALT: () => {
              const t = this.la(1);
              const s = this.subrule(3, this.tableSample);
              if (this.live && sampled) this.fail(t);
              sampled = true;
              if (this.live && item.kind !== 'JoinRef') item.sample = s;
            },
          },
          {
            ALT: () => {
              const t = this.consume(4, K.PIVOT!);
              if (this.live && (pivoted || sampled)) this.fail(t);
              pivoted = true;
              const p = this.subrule(5, this.pivotBody);
              item = { kind: 'PivotRef', loc: this.loc(t), input: item, ...p, alias: this.subrule(6, this.alias) };
            },
          },
          {
            ALT: () => {
              const t = this.consume(7, K.MATCH_RECOGNIZE!);
              if (this.live && item.matchRecognize) this.fail(t);
              const spec = this.subrule(8, this.matchRecognizeBody);
              const mr = { loc: this.loc(t), spec, alias: this.subrule(9, this.alias) };
              if (this.live) item.matchRecognize = mr;
            },
          },
          {
            ALT: () => {
              const t = this.consume(10, K.UNPIVOT!);
              if (this.live && (pivoted || sampled)) this.fail(t);
              pivoted = true;
              const u = this.subrule(11, this.unpivotBody);
              item = { kind: 'UnpivotRef', loc: this.loc(t), input: item, ...u, alias: this.subrule(12, this.alias) };
            },
          },
        ]),
    });
    return item;
  });

  private aliasedExprList = this.RULE('aliasedExprList', (): A.AliasedExpr[] => {
    const out: A.AliasedExpr[] = [];
    const e = this.subrule(1, this.expr);
    out.push({ expr: e, alias: this.subrule(2, this.alias) });
    this.many(3, () => {
      this.consume(4, COMMA);
      const e2 = this.subrule(5, this.expr);
      out.push({ expr: e2, alias: this.subrule(6, this.alias) });
    });
    return out;
  });

  private pivotBody = this.RULE('pivotBody', (): { aggregates: A.AliasedExpr[]; forExpr: A.Expr; inValues: A.AliasedExpr[] } => {
    this.consume(1, LP);
    const aggregates = this.subrule(2, this.aliasedExprList);
    this.consume(3, K.FOR!);
    const forExpr = this.subrule(4, this.postfixExpr);
    this.consume(5, K.IN!);
    this.consume(6, LP);
    const inValues = this.subrule(7, this.aliasedExprList);
    this.consume(8, RP);
    this.consume(9, RP);
    return { aggregates, forExpr, inValues };
  });

  private columnGroup = this.RULE('columnGroup', (): string[] =>
    this.or(1, [
      {
        ALT: () => {
          this.consume(2, LP);
          const c = this.subrule(3, this.identList);
          this.consume(4, RP);
          return c;
        },
      },
      { ALT: () => [this.subrule(5, this.ident)] },
    ]),
  );

  private unpivotColumnSet = this.RULE('unpivotColumnSet', (): A.UnpivotColumnSet => {
    const columns = this.or(1, [
      {
        ALT: () => {
          this.consume(2, LP);
          const c = this.subrule(3, this.identList);
          this.consume(4, RP);
          return c;
        },
      },
      { ALT: () => [this.joined(this.subrule(5, this.path))] },
    ]);
    const alias = this.option(6, () =>
      this.or(7, [
        { ALT: () => (this.consume(8, K.AS!), this.subrule(9, this.primary)) },
        { GATE: () => this.isType(T.String) || this.isType(T.Int), ALT: () => this.subrule(10, this.primary) },
      ]),
    );
    return { columns, alias };
  });

  private unpivotBody = this.RULE('unpivotBody', (): { nulls?: 'INCLUDE' | 'EXCLUDE'; valueColumns: string[]; nameColumn: string; inColumns: A.UnpivotColumnSet[] } => {
    const nulls = this.option(1, () => {
      const k = this.or(2, [{ ALT: () => this.consume(3, K.INCLUDE!) }, { ALT: () => this.consume(4, K.EXCLUDE!) }]);
      this.consume(5, K.NULLS!);
      return this.up(k) as 'INCLUDE' | 'EXCLUDE';
    });
    this.consume(6, LP);
    const valueColumns = this.subrule(7, this.columnGroup);
    this.consume(8, K.FOR!);
    const nameColumn = this.subrule(9, this.ident);
    this.consume(10, K.IN!);
    this.consume(11, LP);
    const inColumns = [this.subrule(12, this.unpivotColumnSet)];
    this.many(13, () => {
      this.consume(14, COMMA);
      inColumns.push(this.subrule(15, this.unpivotColumnSet));
    });
    this.consume(16, RP);
    this.consume(17, RP);
    return { nulls, valueColumns, nameColumn, inColumns };
  });

  // MATCH_RECOGNIZE -------------------------------------------------------------

  private matchRecognizeBody = this.RULE('matchRecognizeBody', (): A.MatchRecognizeSpec => {
    this.consume(1, LP);
    const spec: A.MatchRecognizeSpec = { partitionBy: [], orderBy: [], measures: [], pattern: undefined as unknown as A.RowPattern, define: [] };
    this.option(2, () => (this.consume(3, K.PARTITION!), this.consume(4, K.BY!), (spec.partitionBy = this.subrule(5, this.exprList))));
    this.consume(6, K.ORDER!);
    this.consume(7, K.BY!);
    spec.orderBy = this.subrule(8, this.orderByList);
    this.consume(9, K.MEASURES!);
    const measure = (i: number) => {
      const expr = this.subrule(i, this.expr);
      this.consume(i + 1, K.AS!);
      spec.measures.push({ expr, alias: this.subrule(i + 2, this.ident) });
    };
    measure(10);
    this.many(13, () => {
      this.consume(14, COMMA);
      measure(15);
    });
    this.option(18, () => {
      this.consume(19, K.AFTER!);
      this.consume(20, K.MATCH!);
      this.consume(21, K.SKIP!);
      this.or(22, [
        { ALT: () => (this.consume(23, K.PAST!), this.consume(24, K.LAST!), this.consume(25, K.ROW!), (spec.afterMatchSkip = 'PAST LAST ROW')) },
        { ALT: () => (this.consume(26, K.TO!), this.consume(27, K.NEXT!), this.consume(28, K.ROW!), (spec.afterMatchSkip = 'TO NEXT ROW')) },
      ]);
    });
    this.consume(29, K.PATTERN!);
    this.consume(30, LP);
    spec.pattern = this.subrule(31, this.rowPatternAlt);
    this.consume(32, RP);
    this.consume(33, K.DEFINE!);
    const define = (i: number) => {
      const name = this.subrule(i, this.ident);
      this.consume(i + 1, K.AS!);
      spec.define.push({ name, expr: this.subrule(i + 2, this.expr) });
    };
    define(34);
    this.many(37, () => {
      this.consume(38, COMMA);
      define(39);
    });
    this.option(42, () => (spec.options = this.subrule(43, this.optionsList)));
    this.consume(44, RP);
    return spec;
  });

  private rowPatternAlt = this.RULE('rowPatternAlt', (): A.RowPattern => {
    const t = this.la(1);
    const alts = [this.subrule(1, this.rowPatternSeq)];
    this.many(2, () => {
      this.consume(3, S['|']!);
      alts.push(this.subrule(4, this.rowPatternSeq));
    });
    return alts.length === 1 ? alts[0]! : { kind: 'PatternAlt', loc: this.loc(t), alternatives: alts };
  });

  private rowPatternSeq = this.RULE('rowPatternSeq', (): A.RowPattern => {
    const t = this.la(1);
    const items: A.RowPattern[] = [];
    this.many(1, () => {
      const p = this.la(1);
      const prim = this.or(2, [
        { ALT: (): A.RowPattern => ({ kind: 'PatternVar', loc: this.loc(p), name: this.subrule(3, this.ident) }) },
        { ALT: (): A.RowPattern => (this.consume(4, S['^']!), { kind: 'PatternAnchor', loc: this.loc(p), anchor: '^' }) },
        { ALT: (): A.RowPattern => (this.consume(5, S['$']!), { kind: 'PatternAnchor', loc: this.loc(p), anchor: '$' }) },
        {
          ALT: (): A.RowPattern => {
            this.consume(6, LP);
            const inner = this.or(7, [
              { GATE: () => this.isSym(')'), ALT: (): A.RowPattern => ({ kind: 'PatternEmpty', loc: this.loc(p) }) },
              { ALT: (): A.RowPattern => this.subrule(8, this.rowPatternAlt) },
            ]);
            this.consume(9, RP);
            return inner;
          },
        },
      ]);
      items.push(this.subrule(10, this.rowPatternQuantifiers, { ARGS: [prim] }));
    });
    if (items.length === 0) return { kind: 'PatternEmpty', loc: this.loc(t) };
    return items.length === 1 ? items[0]! : { kind: 'PatternConcat', loc: this.loc(t), items };
  });

  private rowPatternQuantifiers = this.RULE('rowPatternQuantifiers', (input?: A.RowPattern): A.RowPattern => {
    let prim = input!;
    this.many(1, () => {
      const node = this.or(2, [
        {
          ALT: () => {
            const q = this.or(3, [{ ALT: () => this.consume(4, S['*']!) }, { ALT: () => this.consume(5, S['+']!) }, { ALT: () => this.consume(6, S['?']!) }]);
            const n: Extract<A.RowPattern, { kind: 'PatternQuantified' }> = {
              kind: 'PatternQuantified', loc: prim?.loc, pattern: prim, quantifier: q.image as '*' | '+' | '?', exact: false, reluctant: false,
            };
            return n;
          },
        },
        {
          ALT: () => {
            this.consume(7, S['{']!);
            const n: Extract<A.RowPattern, { kind: 'PatternQuantified' }> = { kind: 'PatternQuantified', loc: prim?.loc, pattern: prim, quantifier: '{}', exact: false, reluctant: false };
            this.option(8, () => (n.min = this.subrule(9, this.primary)));
            this.or(10, [
              { ALT: () => (this.consume(11, COMMA), this.option(12, () => (n.max = this.subrule(13, this.primary)))) },
              {
                ALT: () => {
                  n.exact = true;
                  n.max = n.min;
                },
              },
            ]);
            this.consume(14, S['}']!);
            return n;
          },
        },
      ]);
      this.option(15, () => (this.consume(16, S['?']!), this.live && (node.reluctant = true)));
      prim = node;
    });
    return prim;
  });

  // Pipe operators -------------------------------------------------------------

  private windowClauseOpt = this.RULE('windowClauseOpt', (): A.NamedWindow[] | undefined =>
    this.option(1, () => (this.consume(2, K.WINDOW!), this.subrule(3, this.namedWindows))),
  );

  private columnPath = this.RULE('columnPath', (): string[] => {
    const c = [this.subrule(1, this.ident)];
    this.many(2, () => (this.consume(3, DOT), c.push(this.subrule(4, this.identAfterDot))));
    return c;
  });

  private pipeSubOps = this.RULE('pipeSubOps', (): A.PipeOp[] => {
    this.consume(1, LP);
    const ops: A.PipeOp[] = [];
    this.many(2, () => ops.push(this.subrule(3, this.pipeOp)));
    this.consume(4, RP);
    return ops;
  });

  private pipeOp = this.RULE('pipeOp', (): A.PipeOp => {
    this.consume(1, S['|>']!);
    const t = this.la(1);
    const loc = this.loc(t);
    return this.or(2, [
      { ALT: (): A.PipeOp => (this.consume(3, K.WHERE!), { kind: 'PipeWhere', loc, cond: this.subrule(4, this.expr) }) },
      {
        ALT: (): A.PipeOp => {
          this.consume(5, K.SELECT!);
          let distinct = false;
          this.option(6, () => this.or(7, [{ ALT: () => (this.consume(8, K.DISTINCT!), (distinct = true)) }, { ALT: () => this.consume(9, K.ALL!) }]));
          const asMode = this.option(10, {
            GATE: () => this.isKw('STRUCT', 2) || this.isKw('VALUE', 2),
            DEF: () => {
              this.consume(11, K.AS!);
              const m = this.or(12, [{ ALT: () => this.consume(13, K.STRUCT!) }, { ALT: () => this.consume(14, K.VALUE!) }]);
              return this.up(m) as 'STRUCT' | 'VALUE';
            },
          });
          const items = this.subrule(15, this.selectList);
          const window = this.subrule(16, this.windowClauseOpt);
          return { kind: 'PipeSelect', loc, distinct, asMode, items, window };
        },
      },
      {
        ALT: (): A.PipeOp => {
          this.consume(17, K.EXTEND!);
          const items = this.subrule(18, this.selectList);
          const window = this.subrule(19, this.windowClauseOpt);
          return { kind: 'PipeExtend', loc, items, window };
        },
      },
      { ALT: (): A.PipeOp => (this.consume(20, K.WINDOW!), { kind: 'PipeWindow', loc, items: this.subrule(21, this.selectList) }) },
      {
        ALT: (): A.PipeOp => {
          this.consume(22, K.SET!);
          const assignments: { column: string[]; expr: A.Expr }[] = [];
          const assign = (i: number) => {
            const ct = this.la(1);
            const column = this.subrule(i, this.columnPath);
            // The pipe SET grammar takes a column name alone (the reference's message).
            if (this.live && column.length > 1) this.failMsg(ct, 'Pipe SET can only update columns by column name alone; Setting columns under table aliases or fields under paths is not supported');
            this.consume(i + 1, S['=']!);
            assignments.push({ column, expr: this.subrule(i + 2, this.expr) });
          };
          assign(23);
          this.many(26, () => {
            this.consume(27, COMMA);
            assign(28);
          });
          return { kind: 'PipeSet', loc, assignments };
        },
      },
      {
        ALT: (): A.PipeOp => {
          this.consume(31, K.DROP!);
          const dropped = (ct: IToken, c: string[]) => {
            if (this.live && c.length > 1) this.failMsg(ct, 'Pipe DROP can only drop columns by name alone; Dropping columns under table aliases or fields under paths is not supported');
            return c;
          };
          const columns = [dropped(this.la(1), this.subrule(32, this.columnPath))];
          this.many(33, () => (this.consume(34, COMMA), columns.push(dropped(this.la(1), this.subrule(35, this.columnPath)))));
          return { kind: 'PipeDrop', loc, columns };
        },
      },
      {
        ALT: (): A.PipeOp => {
          this.consume(36, K.RENAME!);
          const renames: { from: string[]; to: string }[] = [];
          const rename = (i: number) => {
            const ct = this.la(1);
            const from = this.subrule(i, this.columnPath);
            if (this.live && from.length > 1) this.failMsg(ct, 'Pipe RENAME can only rename columns by name alone; Renaming columns under table aliases or fields under paths is not supported');
            this.option(i + 1, () => this.consume(i + 2, K.AS!));
            renames.push({ from, to: this.subrule(i + 3, this.ident) });
          };
          rename(37);
          this.many(41, () => {
            this.consume(42, COMMA);
            rename(43);
          });
          return { kind: 'PipeRename', loc, renames };
        },
      },
      { ALT: (): A.PipeOp => (this.consume(47, K.AS!), { kind: 'PipeAs', loc, alias: this.subrule(48, this.ident) }) },
      { ALT: (): A.PipeOp => this.subrule(49, this.pipeAggregate, { ARGS: [loc] }) },
      { ALT: (): A.PipeOp => (this.consume(50, K.ORDER!), this.consume(51, K.BY!), { kind: 'PipeOrderBy', loc, items: this.subrule(52, this.orderByList) }) },
      {
        ALT: (): A.PipeOp => {
          this.consume(53, K.LIMIT!);
          const limit = this.subrule(54, this.expr);
          const offset = this.option(55, () => (this.consume(56, K.OFFSET!), this.subrule(57, this.expr)));
          return { kind: 'PipeLimit', loc, limit, offset };
        },
      },
      {
        // `|> LEFT OUTER UNION ...` is a set operation, not a join.
        GATE: () => !this.setOpHead(),
        ALT: (): A.PipeOp => {
          const j = this.subrule(58, this.joinHead);
          const right = this.subrule(59, this.tablePrimary);
          const pj: A.PipeJoin = { kind: 'PipeJoin', loc, joinType: j.joinType, natural: j.natural, right };
          this.option(61, () => Object.assign(pj, this.subrule(60, this.joinCondition)));
          return pj;
        },
      },
      {
        ALT: (): A.PipeOp => {
          this.consume(61, K.CALL!);
          const ct = this.la(1);
          const name = this.subrule(62, this.path);
          const args = this.subrule(63, this.tvfArgs);
          const tvf: A.TvfRef = { kind: 'TvfRef', loc: this.loc(ct), name, args };
          tvf.alias = this.subrule(64, this.alias);
          return { kind: 'PipeCall', loc, tvf };
        },
      },
      {
        ALT: (): A.PipeOp => {
          // `|> LEFT OUTER UNION ALL BY NAME (...)`: the column propagation modes of standard set operations.
          const outerMode = this.option(110, () => this.subrule(111, this.setOpMode));
          const opTok = this.or(65, [{ ALT: () => this.consume(66, K.UNION!) }, { ALT: () => this.consume(67, K.INTERSECT!) }, { ALT: () => this.consume(68, K.EXCEPT!) }]);
          const quantifier = this.or(69, {
            ERR_MSG: 'keyword DISTINCT',
            DEF: [
              { ALT: (): 'ALL' | 'DISTINCT' => (this.consume(70, K.ALL!), 'ALL') },
              { ALT: (): 'ALL' | 'DISTINCT' => (this.consume(71, K.DISTINCT!), 'DISTINCT') },
            ],
          });
          const m = this.subrule(72, this.setOpModifiers, { ARGS: [true] });
          const queries = [this.subrule(73, this.parenQuery)];
          this.many(74, () => {
            this.consume(75, COMMA);
            // trailing comma
            this.option(76, () => queries.push(this.subrule(77, this.parenQuery)));
          });
          return { kind: 'PipeSetOp', loc, op: this.up(opTok) as 'UNION', quantifier, ...(outerMode ? { outerMode } : {}), corresponding: m.corresponding, byName: m.byName, queries };
        },
      },
      {
        ALT: (): A.PipeOp => {
          this.consume(78, K.PIVOT!);
          const p = this.subrule(79, this.pivotBody);
          return { kind: 'PipePivot', loc, ...p, alias: this.subrule(80, this.alias) };
        },
      },
      {
        ALT: (): A.PipeOp => {
          this.consume(81, K.IF!);
          const branches: { cond: A.Expr; pipes: A.PipeOp[] }[] = [];
          const branch = (i: number) => {
            const cond = this.subrule(i, this.expr);
            this.consume(i + 1, K.THEN!);
            branches.push({ cond, pipes: this.subrule(i + 2, this.pipeSubOps) });
          };
          branch(82);
          this.many(85, () => {
            this.consume(86, K.ELSEIF!);
            branch(87);
          });
          const elsePipes = this.option(90, () => (this.consume(91, K.ELSE!), this.subrule(92, this.pipeSubOps)));
          return { kind: 'PipeIf', loc, branches, else: elsePipes };
        },
      },
      {
        ALT: (): A.PipeOp => {
          this.consume(93, K.MATCH_RECOGNIZE!);
          const spec = this.subrule(94, this.matchRecognizeBody);
          return { kind: 'PipeMatchRecognize', loc, spec, alias: this.subrule(95, this.alias) };
        },
      },
      {
        ALT: (): A.PipeOp => {
          this.consume(96, K.UNPIVOT!);
          const u = this.subrule(97, this.unpivotBody);
          return { kind: 'PipeUnpivot', loc, ...u, alias: this.subrule(98, this.alias) };
        },
      },
      { ALT: (): A.PipeOp => ({ kind: 'PipeTablesample', loc, sample: this.subrule(99, this.tableSample) }) },
      { ALT: (): A.PipeOp => (this.consume(100, K.DISTINCT!), { kind: 'PipeDistinct', loc }) },
      {
        ALT: (): A.PipeOp => {
          const k = this.or(101, [{ ALT: () => this.consume(102, K.DESCRIBE!) }, { ALT: () => this.consume(103, K.STATIC_DESCRIBE!) }]);
          return { kind: 'PipeDescribe', loc, static: this.up(k) === 'STATIC_DESCRIBE' };
        },
      },
      {
        ALT: (): A.PipeOp => {
          const w = this.subrule(104, this.withClause);
          return { kind: 'PipeWith', loc, recursive: w.recursive, ctes: w.ctes };
        },
      },
      {
        ALT: (): A.PipeOp => {
          this.consume(105, K.ASSERT!);
          const cond = this.subrule(106, this.expr);
          const payload: A.Expr[] = [];
          this.many(107, () => (this.consume(108, COMMA), payload.push(this.subrule(109, this.expr))));
          return { kind: 'PipeAssert', loc, cond, payload };
        },
      },
    ]);
  });

  private pipeAggregate = this.RULE('pipeAggregate', (loc?: A.Loc): A.PipeAggregate => {
    this.consume(1, K.AGGREGATE!);
    const items: A.PipeAggregateItem[] = [];
    if (this.must(!this.isKw('GROUP'))) {
      items.push(this.subrule(3, this.pipeAggItem));
      this.many(4, () => {
        this.consume(5, COMMA);
        if (this.must(!(this.isKw('GROUP') || this.clauseEndAfterComma()))) items.push(this.subrule(7, this.pipeAggItem));
      });
    }
    const p: A.PipeAggregate = { kind: 'PipeAggregate', loc: loc!, items, groupBy: [], groupAndOrder: false };
    this.option(8, () => {
      this.consume(9, K.GROUP!);
      this.option(10, () => (this.consume(11, K.AND!), this.consume(12, K.ORDER!), (p.groupAndOrder = true)));
      this.consume(13, K.BY!);
      this.or(14, [
        {
          GATE: () => this.isKw('ROLLUP') || this.isKw('CUBE') || (this.isKw('GROUPING') && this.isKw('SETS', 2)),
          ALT: () => {
            const gi = [this.subrule(15, this.groupingItem)];
            this.many(16, () => (this.consume(17, COMMA), gi.push(this.subrule(18, this.groupingItem))));
            p.groupingItems = gi;
          },
        },
        {
          ALT: () => {
            p.groupBy.push(this.subrule(19, this.pipeAggItem));
            this.many(20, () => {
              this.consume(21, COMMA);
              this.option(22, { GATE: () => !this.clauseEndAfterComma(), DEF: () => p.groupBy.push(this.subrule(23, this.pipeAggItem)) });
            });
          },
        },
      ]);
    });
    return p;
  });

  private pipeAggItem = this.RULE('pipeAggItem', (): A.PipeAggregateItem => {
    const expr = this.subrule(1, this.expr);
    const item: A.PipeAggregateItem = { expr };
    this.option(2, () =>
      this.or(3, [
        { ALT: () => (this.consume(4, K.AS!), (item.alias = this.subrule(5, this.ident))) },
        { ALT: () => (item.alias = this.subrule(6, this.ident)) },
      ]),
    );
    Object.assign(item, this.subrule(16, this.sortDirection));
    return item;
  });

  // -------------------------------------------------------------------------
  // Expressions: one rule per precedence level, loosest first
  // -------------------------------------------------------------------------

  private exprAlts: IOrAlt<A.Expr>[] | undefined;
  expr = this.RULE('expr', (): A.Expr =>
    this.or(5, (this.exprAlts ??= [
      {
        // A lone call or parenthesized operand (`IF(...)`, `((...))`) goes straight to
        // postfixExpr: skipping the dozen precedence levels keeps deep nesting off the stack.
        // Parentheses that only wrap another parenthesized group are consumed in a loop
        // (they make no AST node), so `((((x))))` costs one level however deep.
        GATE: () => this.lonePrimaryAhead(),
        ALT: (): A.Expr => {
          let wrap = this.live ? this.wrapperParens() : 0;
          let open = 0;
          this.many(7, { GATE: () => open < wrap, DEF: () => (this.consume(8, LP), open++) });
          const e = this.subrule(6, this.postfixExpr);
          this.many(9, { GATE: () => open > 0, DEF: () => (this.consume(10, RP), open--) });
          wrap = 0;
          return e;
        },
      },
      {
        // Only `+ - * / ||` at the top level up to the expression's end: start at `additive`
        // (a `(1 + (2 + (...)))` level then costs 7 rules instead of 18).
        GATE: () => this.arithmeticAhead(),
        ALT: (): A.Expr => this.subrule(11, this.additive),
      },
      {
        ALT: (): A.Expr => {
          const terms = [this.subrule(1, this.andExpr)];
          this.many(2, () => {
            this.consume(3, K.OR!);
            terms.push(this.subrule(4, this.andExpr));
          });
          return chain('OR', terms);
        },
      },
    ])),
  );

  private andExpr = this.RULE('andExpr', (): A.Expr => {
    const terms = [this.subrule(1, this.notExpr)];
    this.many(2, () => {
      this.consume(3, K.AND!);
      terms.push(this.subrule(4, this.notExpr));
    });
    return chain('AND', terms);
  });

  /**
   * The expression ahead is one call `name(...)` or one parenthesized group
   * `(...)` followed by a token that ends any expression (`)`, `,`, `;`, end):
   * then no operator can apply and it parses as a postfixExpr alone.
   */
  /**
   * Up to the end of the expression ahead (`)`, `]`, `,`, `;` or the end, at
   * bracket depth 0) there is no operator looser than `+`: no comparison,
   * bitwise or logical operator and no reserved word (AND, IS, CASE, AS, FROM,
   * NULL, ...). Then the precedence levels above `additive` could never apply.
   */
  private arithmeticAhead(): boolean {
    let depth = 0;
    for (let k = 1; ; k++) {
      const x = this.la(k);
      if (x.tokenType === EOF) return k > 1;
      if (x.kind === T.Symbol) {
        const s = x.image;
        if (s === '(' || s === '[') depth++;
        else if (s === ')' || s === ']') {
          if (depth === 0) return k > 1;
          depth--;
        } else if (depth === 0) {
          if (s === ',' || s === ';') return k > 1;
          if (s !== '+' && s !== '-' && s !== '*' && s !== '/' && s !== '||' && s !== '.') return false;
        }
      } else if (depth === 0 && x.kind === T.Word && RESERVED.has(x.upper)) return k > 1 && TERMINATOR_WORDS.has(x.upper);
    }
  }

  /**
   * How many leading `(` only wrap the next `(`'s group: in `(((x)))`, two
   * (the innermost pair stays: it may be a subquery or a tuple).
   */
  private wrapperParens(): number {
    let run = 0;
    while (this.isSym('(', run + 1)) run++;
    if (run < 2) return 0;
    // One pass: where each `(` of the leading run closes.
    const close = new Array<number>(run + 1).fill(-1);
    const open: number[] = [];
    for (let k = 1; ; k++) {
      const x = this.la(k);
      if (x.tokenType === EOF) return 0;
      if (x.kind !== T.Symbol) continue;
      if (x.image === '(') open.push(k);
      else if (x.image === ')') {
        const o = open.pop()!;
        if (o <= run) close[o] = k;
        if (open.length === 0) break;
      }
    }
    let n = 0;
    while (n + 2 <= run && close[n + 2] === close[n + 1]! - 1) n++;
    return n;
  }

  /** Lookahead index of the `)` matching the `(` at index k, or -1. */
  private matchingParen(k: number): number {
    let depth = 0;
    for (;; k++) {
      const x = this.la(k);
      if (x.tokenType === EOF) return -1;
      if (x.kind !== T.Symbol) continue;
      if (x.image === '(') depth++;
      else if (x.image === ')' && --depth === 0) return k;
    }
  }

  private lonePrimaryAhead(): boolean {
    let k = 1;
    const t = this.la(1);
    if (t.kind === T.Word && t.upper === 'CASE') {
      // CASE ... END (nested CASEs counted).
      let open = 0;
      for (;; k++) {
        const x = this.la(k);
        if (x.tokenType === EOF) return false;
        if (x.kind !== T.Word) continue;
        if (x.upper === 'CASE') open++;
        else if (x.upper === 'END' && --open === 0) break;
      }
      return this.endsExpression(k + 1);
    }
    if (t.kind === T.Word || t.kind === T.QuotedIdent) {
      if (t.kind === T.Word && PREFIX_WORDS.has(t.upper)) return false;
      k = 2;
    }
    if (!this.isSym('(', k)) return false;
    k = this.matchingParen(k);
    if (k < 0) return false;
    return this.endsExpression(k + 1);
  }

  /** The token at k cannot continue an expression: `)`, `]`, `,`, `;`, the end, or a clause word (THEN, ELSE, END, AS, FROM, ...). */
  private endsExpression(k: number): boolean {
    const x = this.la(k);
    if (x.tokenType === EOF) return true;
    if (x.kind === T.Symbol) return x.image === ')' || x.image === ']' || x.image === ',' || x.image === ';';
    return x.kind === T.Word && TERMINATOR_WORDS.has(x.upper);
  }

  private notExprAlts: IOrAlt<A.Expr>[] | undefined;
  private notExpr = this.RULE('notExpr', (): A.Expr =>
    this.or(1, (this.notExprAlts ??= [
      {
        ALT: (): A.Expr => {
          const t = this.consume(2, K.NOT!);
          return { kind: 'UnaryExpr', loc: this.loc(t), op: 'NOT', operand: this.subrule(3, this.notExpr) };
        },
      },
      { ALT: (): A.Expr => this.subrule(4, this.comparison) },
    ])),
  );

  private comparison = this.RULE('comparison', (): A.Expr => {
    let left = this.subrule(1, this.bitOr);
    // Comparison operators do not chain (`a < b < c`, `a = b IS NULL` are syntax errors, as in GoogleSQL).
    const compared = this.option(2, {
      // NOT continues the comparison only as NOT LIKE / NOT BETWEEN / NOT IN.
      GATE: () => !this.isKw('NOT') || this.isKw('LIKE', 2) || this.isKw('BETWEEN', 2) || this.isKw('IN', 2),
      DEF: () => {
        this.or(3, [
          {
            ALT: () => {
              const opTok = this.or(4, [
                { ALT: () => this.consume(5, S['=']!) },
                { ALT: () => this.consume(6, S['!=']!) },
                { ALT: () => this.consume(7, S['<>']!) },
                { ALT: () => this.consume(8, S['<']!) },
                { ALT: () => this.consume(9, S['>']!) },
                { ALT: () => this.consume(10, S['<=']!) },
                { ALT: () => this.consume(11, S['>=']!) },
              ]);
              const op = (opTok.image === '<>' ? '!=' : opTok.image) as A.BinaryOp;
              const right = this.subrule(12, this.bitOr);
              left = { kind: 'BinaryExpr', loc: left.loc, op, left, right };
            },
          },
          {
            ALT: () => {
              const not = this.option(13, () => this.consume(14, K.NOT!)) !== undefined;
              this.or(15, [
                { ALT: () => (this.consume(16, K.LIKE!), (left = this.subrule(17, this.likeRest, { ARGS: [left, not] }))) },
                {
                  ALT: () => {
                    this.consume(18, K.BETWEEN!);
                    const low = this.subrule(19, this.bitOr);
                    this.consume(20, K.AND!);
                    const high = this.subrule(21, this.bitOr);
                    left = { kind: 'BetweenExpr', loc: left.loc, expr: left, not, low, high };
                  },
                },
                { ALT: () => (this.consume(22, K.IN!), (left = this.subrule(23, this.inRest, { ARGS: [left, not] }))) },
              ]);
            },
          },
          {
            ALT: () => {
              this.consume(24, K.IS!);
              const isNot = this.option(25, () => this.consume(26, K.NOT!)) !== undefined;
              this.or(27, [
                {
                  ALT: () => {
                    this.consume(28, K.DISTINCT!);
                    this.consume(29, K.FROM!);
                    const right = this.subrule(30, this.bitOr);
                    left = { kind: 'IsDistinctFromExpr', loc: left.loc, left, right, not: isNot };
                  },
                },
                {
                  ALT: () => {
                    const w = this.or(31, [
                      { ALT: () => this.consume(32, K.NULL!) },
                      { ALT: () => this.consume(33, K.TRUE!) },
                      { ALT: () => this.consume(34, K.FALSE!) },
                      { ALT: () => this.consume(35, K.UNKNOWN!) },
                    ]);
                    left = { kind: 'IsExpr', loc: left.loc, expr: left, not: isNot, what: this.up(w) as A.IsExpr['what'] };
                  },
                },
              ]);
            },
          },
        ]);
        return true;
      },
    });
    if (this.live && compared !== undefined && COMPARISON_NEXT.some((w) => (w.length > 2 || /^[A-Z]/.test(w) ? this.isKw(w) : this.isSym(w)))) this.fail(this.la(1));
    return left;
  });

  private likeRest = this.RULE('likeRest', (left?: A.Expr, not?: boolean): A.Expr => {
    const l = left!;
    return this.or(1, [
      {
        ALT: (): A.Expr => {
          const q = this.or(2, [{ ALT: () => this.consume(3, K.ANY!) }, { ALT: () => this.consume(4, K.SOME!) }, { ALT: () => this.consume(5, K.ALL!) }]);
          const node: A.LikeExpr = { kind: 'LikeExpr', loc: l?.loc, expr: l, not: !!not, quantifier: this.up(q) as 'ANY' | 'SOME' | 'ALL' };
          const unnest = this.option(6, () => {
            this.consume(7, K.UNNEST!);
            this.consume(8, LP);
            node.unnest = this.subrule(9, this.expr);
            this.consume(10, RP);
            return true;
          });
          if (this.must(unnest === undefined)) {
            this.consume(11, LP);
            this.or(12, [
              // `LIKE ANY ((SELECT p), 'q')` is a list whose first pattern is a scalar subquery.
              { GATE: () => this.startsQuery() && (!this.isSym('(') || this.speculate(this.queryThenRParen)), ALT: () => (node.query = this.subrule(13, this.queryThenRParen)) },
              {
                ALT: () => {
                  node.patterns = this.subrule(14, this.exprList);
                  this.consume(15, RP);
                },
              },
            ]);
          }
          return node;
        },
      },
      { ALT: (): A.Expr => ({ kind: 'LikeExpr', loc: l?.loc, expr: l, not: !!not, pattern: this.subrule(16, this.bitOr) }) },
    ]);
  });

  private inRest = this.RULE('inRest', (left?: A.Expr, not?: boolean): A.Expr => {
    const node: A.InExpr = { kind: 'InExpr', loc: left?.loc as A.Loc, expr: left!, not: !!not };
    const unnest = this.option(1, () => {
      this.consume(2, K.UNNEST!);
      this.consume(3, LP);
      node.unnest = this.subrule(4, this.expr);
      this.consume(5, RP);
      return true;
    });
    if (this.must(unnest === undefined)) {
          this.consume(6, LP);
          this.or(7, [
            {
              // `IN (SELECT ...` is always a subquery (precise errors); `IN ((SELECT ...` only if it parses as one.
              GATE: () => this.startsQuery() && (!this.isSym('(') || this.speculate(this.queryThenRParen)),
              ALT: () => (node.query = this.subrule(8, this.query)),
            },
            { ALT: () => (node.list = this.subrule(9, this.exprList)) },
          ]);
          this.consume(10, RP);
    }
    return node;
  });

  private bitOr = this.RULE('bitOr', (): A.Expr => {
    let left = this.subrule(1, this.bitXor);
    this.many(2, () => {
      this.consume(3, S['|']!);
      left = { kind: 'BinaryExpr', loc: left.loc, op: '|', left, right: this.subrule(4, this.bitXor) };
    });
    return left;
  });

  private bitXor = this.RULE('bitXor', (): A.Expr => {
    let left = this.subrule(1, this.bitAnd);
    this.many(2, () => {
      this.consume(3, S['^']!);
      left = { kind: 'BinaryExpr', loc: left.loc, op: '^', left, right: this.subrule(4, this.bitAnd) };
    });
    return left;
  });

  private bitAnd = this.RULE('bitAnd', (): A.Expr => {
    let left = this.subrule(1, this.shift);
    this.many(2, () => {
      this.consume(3, S['&']!);
      left = { kind: 'BinaryExpr', loc: left.loc, op: '&', left, right: this.subrule(4, this.shift) };
    });
    return left;
  });

  /** `>>` arrives as two adjacent `>` tokens (see tokens.ts). */
  private isShiftRight(): boolean {
    const a = this.la(1);
    const b = this.la(2);
    return a.kind === T.Symbol && a.image === '>' && b.kind === T.Symbol && b.image === '>' && b.startOffset === a.end;
  }

  private shift = this.RULE('shift', (): A.Expr => {
    let left = this.subrule(1, this.additive);
    this.many(2, {
      GATE: () => this.isSym('<<') || this.isShiftRight(),
      DEF: () => {
        const op = this.or(3, [
          { ALT: (): '<<' | '>>' => (this.consume(4, S['<<']!), '<<') },
          { ALT: (): '<<' | '>>' => (this.consume(5, S['>']!), this.consume(6, S['>']!), '>>') },
        ]);
        left = { kind: 'BinaryExpr', loc: left.loc, op, left, right: this.subrule(7, this.additive) };
      },
    });
    return left;
  });

  private additive = this.RULE('additive', (): A.Expr => {
    let left = this.subrule(1, this.multiplicative);
    this.many(2, () => {
      const opTok = this.or(3, [{ ALT: () => this.consume(4, S['+']!) }, { ALT: () => this.consume(5, S['-']!) }]);
      left = { kind: 'BinaryExpr', loc: left.loc, op: opTok.image as '+' | '-', left, right: this.subrule(6, this.multiplicative) };
    });
    return left;
  });

  private multiplicative = this.RULE('multiplicative', (): A.Expr => {
    let left = this.subrule(1, this.unary);
    this.many(2, () => {
      const opTok = this.or(3, [{ ALT: () => this.consume(4, S['*']!) }, { ALT: () => this.consume(5, S['/']!) }, { ALT: () => this.consume(6, S['||']!) }]);
      left = { kind: 'BinaryExpr', loc: left.loc, op: opTok.image as '*' | '/' | '||', left, right: this.subrule(7, this.unary) };
    });
    return left;
  });

  private unaryAlts: IOrAlt<A.Expr>[] | undefined;
  private unary = this.RULE('unary', (): A.Expr =>
    this.or(1, (this.unaryAlts ??= [
      {
        ALT: (): A.Expr => {
          const t = this.or(2, [{ ALT: () => this.consume(3, S['-']!) }, { ALT: () => this.consume(4, S['+']!) }, { ALT: () => this.consume(5, S['~']!) }]);
          const literalNext = this.isType(T.Int) || this.isType(T.Float);
          const operand = this.subrule(6, this.unary);
          // Fold `-<number>` into the literal so INT64 min (-9223372036854775808) is representable.
          // Only a literal written right after the minus (not `-(1)`); hex stays a UnaryExpr
          // (`BigInt('-0x1F')` is not valid, so folding would surprise consumers).
          if (
            t.image === '-' &&
            literalNext &&
            ((operand.kind === 'IntLiteral' && !operand.hex) || operand.kind === 'FloatLiteral') &&
            !operand.text.startsWith('-')
          ) {
            return { ...operand, loc: this.loc(t), text: '-' + operand.text };
          }
          return { kind: 'UnaryExpr', loc: this.loc(t), op: t.image as '-' | '+' | '~', operand };
        },
      },
      { ALT: (): A.Expr => this.subrule(7, this.postfixExpr) },
    ])),
  );

  /** `.(a.b)(` or `.name(` after a non-path operand: a chained call. */
  private chainedParenCallAhead(): boolean {
    let k = 3;
    while (this.isPathPart(k) && this.isSym('.', k + 1)) k += 2;
    return this.isPathPart(k) && this.isSym(')', k + 1) && this.isSym('(', k + 2);
  }

  /** Primary followed by field access, subscripts and chained calls. */
  postfixExpr = this.RULE('postfixExpr', (): A.Expr => {
    const parenthesized = this.isSym('(');
    let e = this.subrule(1, this.primary);
    this.many(2, {
      GATE: () => {
        if (this.isSym('[')) return true;
        if (!this.isSym('.')) return false;
        if (this.isSym('*', 2)) return false; // `t.*` is handled by the select item
        if (this.isSym('(', 2)) return this.chainedParenCallAhead();
        return true;
      },
      DEF: () =>
        this.or(3, [
          {
            // Chained call `(x).(safe.f)(args)` = f(x, args) (ZetaSQL).
            GATE: () => this.isSym('(', 2),
            ALT: () => {
              this.consume(4, DOT);
              this.consume(5, LP);
              const parts = [this.subrule(6, this.identAfterDot)];
              this.many(7, () => (this.consume(8, DOT), parts.push(this.subrule(9, this.identAfterDot))));
              this.consume(10, RP);
              e = this.subrule(11, this.chainedCall, { ARGS: [parts, e] });
            },
          },
          {
            // `(x).f(args)` / `f(x).g()`; a plain path `a.f(` is a qualified function name (identifierExpr).
            GATE: () => (parenthesized || e.kind !== 'PathExpr') && this.isPathPart(2) && this.isSym('(', 3),
            ALT: () => {
              this.consume(12, DOT);
              const name = this.subrule(13, this.identAfterDot);
              e = this.subrule(14, this.chainedCall, { ARGS: [[name], e] });
            },
          },
          {
            ALT: () => {
              this.consume(15, DOT);
              const field = this.subrule(16, this.identAfterDot);
              if (this.live) e = e.kind === 'PathExpr' ? { ...e, parts: [...e.parts, field] } : { kind: 'FieldAccess', loc: e.loc, expr: e, field };
            },
          },
          {
            ALT: () => {
              this.consume(17, S['[']!);
              const base = e;
              e = this.or(18, [
                {
                  GATE: () => this.isSym('(', 2),
                  ALT: (): A.Expr => {
                    const k = this.or(19, [
                      { ALT: () => this.consume(20, K.OFFSET!) },
                      { ALT: () => this.consume(21, K.SAFE_OFFSET!) },
                      { ALT: () => this.consume(22, K.ORDINAL!) },
                      { ALT: () => this.consume(23, K.SAFE_ORDINAL!) },
                    ]);
                    this.consume(24, LP);
                    const index = this.subrule(25, this.expr);
                    this.consume(26, RP);
                    return { kind: 'Subscript', loc: base.loc, expr: base, index, mode: this.up(k) as A.SubscriptMode };
                  },
                },
                { ALT: (): A.Expr => ({ kind: 'Subscript', loc: base.loc, expr: base, index: this.subrule(27, this.expr), mode: 'BARE' }) },
              ]);
              this.consume(28, S[']']!);
            },
          },
        ]),
    });
    return e;
  });

  private chainedCall = this.RULE('chainedCall', (name?: string[], receiver?: A.Expr): A.Expr => {
    const call = this.subrule(1, this.functionCall, { ARGS: [name ?? [], receiver?.loc as A.Loc] });
    if (this.live && call.kind === 'FunctionCall') call.args.unshift(receiver!);
    return call;
  });

  private concatStrings = this.RULE('concatStrings', (): A.Expr => {
    const t = this.consume(1, StringLit);
    const loc = this.loc(t);
    const d = this.decodeString(t);
    let e: A.Expr;
    if (d.bytes) {
      const value = new Uint8Array(d.value.length);
      for (let i = 0; i < d.value.length; i++) value[i] = d.value.charCodeAt(i);
      e = { kind: 'BytesLiteral', loc, value, raw: d.raw };
    } else e = { kind: 'StringLiteral', loc, value: d.value, raw: d.raw };
    // Adjacent literals of the same kind concatenate ('a' 'b' = 'ab'), as in GoogleSQL.
    let prevEnd = this.x(t).end;
    this.many(2, () => {
      const n = this.consume(3, StringLit);
      if (!this.live) return;
      if (n.startOffset === prevEnd) this.failMsg(n, 'concatenated string literals must be separated by whitespace or comments');
      prevEnd = this.x(n).end;
      const d2 = this.decodeString(n);
      if (d2.bytes !== d.bytes) this.fail(n);
      if (e.kind === 'StringLiteral') e = { ...e, value: e.value + d2.value };
      else if (e.kind === 'BytesLiteral') {
        const v: Uint8Array = new Uint8Array(e.value.length + d2.value.length);
        v.set(e.value);
        for (let i = 0; i < d2.value.length; i++) v[e.value.length + i] = d2.value.charCodeAt(i);
        e = { ...e, value: v };
      }
    });
    return e;
  });

  /** Location of the next token (alternatives compute it themselves so their arrays can be cached). */
  private here(): A.Loc {
    return this.loc(this.la(1));
  }

  // Hot ORs keep their alternative arrays across calls (no per-call closures) and
  // avoid GATEs where the first token decides: an ungated LL(1) OR is a table lookup.
  private primaryAlts: IOrAlt<A.Expr>[] | undefined;
  primary = this.RULE('primary', (): A.Expr =>
    this.or(1, (this.primaryAlts ??= [
      { ALT: (): A.Expr => ({ kind: 'IntLiteral', loc: this.here(), text: this.consume(2, IntLit).image, hex: false }) },
      { ALT: (): A.Expr => ({ kind: 'IntLiteral', loc: this.here(), text: this.consume(3, HexIntLit).image, hex: true }) },
      { ALT: (): A.Expr => ({ kind: 'FloatLiteral', loc: this.here(), text: this.consume(4, FloatLit).image }) },
      { ALT: (): A.Expr => this.subrule(5, this.concatStrings) },
      { ALT: (): A.Expr => this.subrule(6, this.parenExpr) },
      {
        ALT: (): A.Expr => {
          const loc = this.here();
          this.consume(7, S['[']!);
          let elements: A.Expr[] = [];
          if (this.must(!this.isSym(']'))) elements = this.subrule(9, this.exprList);
          this.consume(10, S[']']!);
          return { kind: 'ArrayExpr', loc, elements };
        },
      },
      {
        ALT: (): A.Expr => {
          const loc = this.here();
          const at = this.consume(11, S['@']!);
          const n = this.la(1);
          if (this.live && ((n.kind !== T.Word && n.kind !== T.QuotedIdent) || n.startOffset !== this.x(at).end)) this.fail(n);
          const name = this.or(12, [{ ALT: () => this.consume(13, AnyWord) }, { ALT: () => this.consume(14, QuotedIdent) }]);
          return { kind: 'NamedParam', loc, name: this.nameOf(name) };
        },
      },
      {
        ALT: (): A.Expr => {
          const loc = this.here();
          this.consume(15, S['@@']!);
          const parts = [this.subrule(16, this.identAfterDot)];
          this.many(17, {
            GATE: () => this.isSym('.') && this.isPathPart(2),
            DEF: () => (this.consume(18, DOT), parts.push(this.subrule(19, this.identAfterDot))),
          });
          return { kind: 'SystemVariable', loc, parts };
        },
      },
      { ALT: (): A.Expr => ({ kind: 'PositionalParam', loc: this.loc(this.consume(20, S['?']!)), index: this.live ? this.paramIndex++ : 0 }) },
      { ALT: (): A.Expr => ({ kind: 'NullLiteral', loc: this.loc(this.consume(21, K.NULL!)) }) },
      { ALT: (): A.Expr => ({ kind: 'BoolLiteral', loc: this.loc(this.consume(22, K.TRUE!)), value: true }) },
      { ALT: (): A.Expr => ({ kind: 'BoolLiteral', loc: this.loc(this.consume(23, K.FALSE!)), value: false }) },
      { ALT: (): A.Expr => this.subrule(24, this.caseExpr) },
      { ALT: (): A.Expr => this.subrule(25, this.castBody, { ARGS: [this.consume(62, K.CAST!)] }) },
      { ALT: (): A.Expr => this.subrule(26, this.extractExpr) },
      {
        ALT: (): A.Expr => {
          const loc = this.here();
          this.consume(27, K.EXISTS!);
          this.consume(28, LP);
          const query = this.subrule(29, this.query);
          this.consume(30, RP);
          return { kind: 'ExistsExpr', loc, query };
        },
      },
      { ALT: (): A.Expr => this.subrule(31, this.arrayExpr) },
      { ALT: (): A.Expr => this.subrule(32, this.structExpr) },
      {
        ALT: (): A.Expr => {
          const loc = this.here();
          this.consume(33, K.INTERVAL!);
          const value = this.subrule(34, this.expr);
          const part = this.subrule(35, this.datePart);
          const toPart = this.option(36, () => (this.consume(37, K.TO!), this.subrule(38, this.datePart)));
          return { kind: 'IntervalExpr', loc, value, part, toPart };
        },
      },
      {
        // `WITH(x AS e, ..., body)`; a bare reserved WITH is "Unexpected keyword WITH".
        ALT: (): A.Expr => {
          if (this.live && !this.isSym('(', 2)) this.fail(this.la(1));
          return this.subrule(40, this.withExpr);
        },
      },
      {
        // RANGE<T> 'literal' or the RANGE(a, b) function.
        ALT: (): A.Expr => {
          const loc = this.here();
          if (this.live && !this.isSym('<', 2) && !this.isSym('(', 2)) this.fail(this.la(1));
          const r = this.consume(41, K.RANGE!);
          return this.or(42, [
            {
              ALT: (): A.Expr => {
                this.consume(43, S['<']!);
                const elementType = this.subrule(44, this.type);
                this.consume(45, S['>']!);
                return { kind: 'RangeLiteral', loc, elementType, value: this.subrule(46, this.stringLit) };
              },
            },
            { ALT: (): A.Expr => this.subrule(47, this.functionCall, { ARGS: [[r.image], loc] }) },
          ]);
        },
      },
      {
        // Reserved words that are nonetheless callable as functions: IF(...), LEFT(s, n), ...
        ALT: (): A.Expr => {
          const loc = this.here();
          if (this.live && !this.isSym('(', 2)) this.fail(this.la(1));
          const w = this.or(48, (this.reservedFnAlts ??= RESERVED_FUNCTIONS.map((f, i) => ({ ALT: () => this.consume(49 + i, K[f]!) }))));
          return this.subrule(60, this.functionCall, { ARGS: [[w.image], loc] });
        },
      },
      { ALT: (): A.Expr => this.subrule(61, this.identifierPrimary) },
    ])),
  );
  private reservedFnAlts: IOrAlt<IToken>[] | undefined;

  /** Identifier-led primaries: non-reserved words that open special forms, else a name/path/call. */
  private identifierPrimaryAlts: IOrAlt<A.Expr>[] | undefined;
  private identifierPrimary = this.RULE('identifierPrimary', (): A.Expr =>
    this.or(1, (this.identifierPrimaryAlts ??= [
      {
        GATE: () => this.isKw('SAFE_CAST') && this.isSym('(', 2),
        ALT: (): A.Expr => this.subrule(2, this.castBody, { ARGS: [this.consume(8, K.SAFE_CAST!)] }),
      },
      {
        GATE: () => TYPED_LITERAL.has(this.la(1).upper) && this.isType(T.String, 2),
        ALT: (): A.Expr => {
          const loc = this.here();
          const w = this.consume(3, Identifier);
          return { kind: 'TypedLiteral', loc, typeName: this.up(w), value: this.subrule(4, this.stringLit) };
        },
      },
      { GATE: () => this.isKw('REPLACE_FIELDS') && this.isSym('(', 2), ALT: (): A.Expr => this.subrule(5, this.replaceFields) },
      {
        GATE: () => NO_PAREN_FUNCTIONS.has(this.la(1).upper) && !this.isSym('(', 2),
        ALT: (): A.Expr => {
          const loc = this.here();
          return { kind: 'FunctionCall', loc, name: [this.consume(6, Identifier).image], safe: false, args: [], distinct: false };
        },
      },
      { ALT: (): A.Expr => this.subrule(7, this.identifierExpr) },
    ])),
  );

  /** `(` ... : subquery, parenthesized expression, or tuple. */
  private parenExpr = this.RULE('parenExpr', (): A.Expr => {
    const t = this.la(1);
    const loc = this.loc(t);
    return this.or(1, [
      {
        // `(SELECT ...` is always a subquery (precise errors); `((SELECT ...` only if it parses as one.
        GATE: () => this.startsQuery(2) && (!this.isSym('(', 2) || this.speculate(this.parenQuery)),
        ALT: (): A.Expr => ({ kind: 'ScalarSubquery', loc, query: this.subrule(2, this.parenQuery) }),
      },
      {
        ALT: (): A.Expr => {
          this.consume(3, LP);
          const first = this.subrule(4, this.expr);
          const fields: A.StructField[] = [{ expr: first }];
          this.many(6, () => (this.consume(7, COMMA), fields.push({ expr: this.subrule(8, this.expr) })));
          this.consume(9, RP);
          return fields.length > 1 ? { kind: 'StructExpr', loc, syntax: 'tuple', fields } : first;
        },
      },
    ]);
  });

  private identifierExpr = this.RULE('identifierExpr', (): A.Expr => {
    const t = this.consume(1, Identifier);
    const loc = this.loc(t);
    const parts = [this.nameOf(t)];
    return this.or(2, [
      { GATE: () => this.isSym('('), ALT: (): A.Expr => this.subrule(3, this.functionCall, { ARGS: [parts, loc] }) },
      {
        // Qualified function name `a.b.f(`: collect `.part`s only when a `(` follows them.
        GATE: () => {
          let k = 1;
          while (this.isSym('.', k) && this.isPathPart(k + 1)) k += 2;
          return k > 1 && this.isSym('(', k);
        },
        ALT: (): A.Expr => {
          this.many(4, { GATE: () => this.isSym('.'), DEF: () => (this.consume(5, DOT), parts.push(this.subrule(6, this.identAfterDot))) });
          return this.subrule(7, this.functionCall, { ARGS: [parts, loc] });
        },
      },
      { ALT: (): A.Expr => ({ kind: 'PathExpr', loc, parts }) },
    ]);
  });

  private datePart = this.RULE('datePart', (): string => this.up(this.consume(1, AnyWord)));

  private caseExpr = this.RULE('caseExpr', (): A.Expr => {
    const t = this.consume(1, K.CASE!);
    let operand: A.Expr | undefined;
    if (this.must(!this.isKw('WHEN'))) operand = this.subrule(3, this.expr);
    const whens: { when: A.Expr; then: A.Expr }[] = [];
    this.atLeastOne(4, {
      ERR_MSG: 'keyword WHEN',
      DEF: () => {
        this.consume(5, K.WHEN!);
        const when = this.subrule(6, this.expr);
        this.consume(7, K.THEN!);
        whens.push({ when, then: this.subrule(8, this.expr) });
      },
    });
    const elseExpr = this.option(9, () => (this.consume(10, K.ELSE!), this.subrule(11, this.expr)));
    this.consume(12, K.END!);
    return { kind: 'CaseExpr', loc: this.loc(t), operand, whens, else: elseExpr };
  });

  private atTimeZone = this.RULE('atTimeZone', (): A.Expr => {
    this.consume(1, K.AT!);
    this.consume(2, K.TIME!);
    this.consume(3, K.ZONE!);
    return this.subrule(4, this.expr);
  });

  /** `( expr AS type [FORMAT ...] )` after CAST / SAFE_CAST (t: that keyword). */
  private castBody = this.RULE('castBody', (t?: IToken): A.Expr => {
    this.consume(4, LP);
    const expr = this.subrule(5, this.expr);
    this.consume(6, K.AS!);
    const type = this.subrule(7, this.type);
    const node: A.CastExpr = { kind: 'CastExpr', loc: t ? this.loc(t) : this.here(), safe: t !== undefined && this.up(t) === 'SAFE_CAST', expr, type };
    this.option(8, () => {
      this.consume(9, K.FORMAT!);
      node.format = this.subrule(10, this.expr);
      this.option(11, () => (node.timeZone = this.subrule(12, this.atTimeZone)));
    });
    this.consume(13, RP);
    return node;
  });

  private extractExpr = this.RULE('extractExpr', (): A.Expr => {
    const t = this.consume(1, K.EXTRACT!);
    this.consume(2, LP);
    const part = this.subrule(3, this.datePart);
    const weekday = this.option(4, {
      GATE: () => part === 'WEEK',
      DEF: () => {
        this.consume(5, LP);
        const w = this.subrule(6, this.datePart);
        this.consume(7, RP);
        return w;
      },
    });
    this.consume(8, K.FROM!);
    const expr = this.subrule(9, this.expr);
    const timeZone = this.option(10, () => this.subrule(11, this.atTimeZone));
    this.consume(12, RP);
    return { kind: 'ExtractExpr', loc: this.loc(t), part, weekday, expr, timeZone };
  });

  private arrayExpr = this.RULE('arrayExpr', (): A.Expr => {
    const t = this.consume(1, K.ARRAY!);
    const loc = this.loc(t);
    const query = this.option(2, () => this.subrule(3, this.parenQuery));
    if (query !== undefined && this.live) return { kind: 'ArraySubquery', loc, query };
    const elementType = this.option(4, () => {
      this.consume(5, S['<']!);
      const et = this.subrule(6, this.type);
      this.consume(7, S['>']!);
      return et;
    });
    this.consume(8, S['[']!);
    let elements: A.Expr[] = [];
    if (this.must(!this.isSym(']'))) elements = this.subrule(10, this.exprList);
    this.consume(11, S[']']!);
    return { kind: 'ArrayExpr', loc, elementType, elements };
  });

  private structExpr = this.RULE('structExpr', (): A.Expr => {
    const t = this.consume(1, K.STRUCT!);
    const loc = this.loc(t);
    const type = this.option(2, () =>
      this.or(3, [
        { ALT: (): A.StructTypeNode => this.subrule(4, this.structTypeBody, { ARGS: [loc, false] }) },
        { ALT: (): A.StructTypeNode => (this.consume(5, S['<>']!), { kind: 'StructType', loc, fields: [] }) },
      ]),
    );
    this.consume(6, LP);
    const fields: A.StructField[] = [];
    const field = (i: number) => {
      const expr = this.subrule(i, this.expr);
      fields.push({ expr, alias: this.option(i + 1, () => (this.consume(i + 2, K.AS!), this.subrule(i + 3, this.ident))) });
    };
    if (this.must(!this.isSym(')'))) {
      field(10);
      this.many(20, () => (this.consume(21, COMMA), field(30)));
    }
    this.consume(40, RP);
    return { kind: 'StructExpr', loc, syntax: 'struct', type, fields };
  });

  private withExpr = this.RULE('withExpr', (): A.Expr => {
    const t = this.consume(1, K.WITH!);
    this.consume(2, LP);
    const vars: { name: string; expr: A.Expr }[] = [];
    this.many(3, {
      GATE: () => this.isIdent() && this.isKw('AS', 2),
      DEF: () => {
        const name = this.subrule(4, this.ident);
        this.consume(5, K.AS!);
        vars.push({ name, expr: this.subrule(6, this.expr) });
        this.consume(7, COMMA);
      },
    });
    const body = this.subrule(8, this.expr);
    this.consume(9, RP);
    return { kind: 'WithExpr', loc: this.loc(t), vars, body };
  });

  private replaceFields = this.RULE('replaceFields', (): A.Expr => {
    const t = this.consume(1, K.REPLACE_FIELDS!);
    this.consume(2, LP);
    const expr = this.subrule(3, this.expr);
    const fields: { value: A.Expr; path: string[] }[] = [];
    this.many(4, () => {
      this.consume(5, COMMA);
      const value = this.subrule(6, this.expr);
      this.consume(7, K.AS!);
      fields.push({ value, path: this.subrule(8, this.columnPath) });
    });
    this.consume(9, RP);
    return { kind: 'ReplaceFieldsExpr', loc: this.loc(t), expr, fields };
  });

  /** `(a, b) ->` lambda parameter list ahead? */
  private lambdaParamsAhead(): boolean {
    if (!this.isSym('(')) return false;
    let k = 2;
    if (this.isSym(')', k)) return this.isSym('->', k + 1);
    for (;;) {
      if (!this.isIdent(k)) return false;
      k++;
      if (this.isSym(',', k)) k++;
      else if (this.isSym(')', k)) return this.isSym('->', k + 1);
      else return false;
    }
  }

  /** Lambda `x -> e` / `(x, y) -> e`, named argument `x => e`, or plain expression. */
  private functionArg = this.RULE('functionArg', (): A.Expr => {
    const t = this.la(1);
    return this.or(1, [
      {
        GATE: () => this.isSym('=>', 2),
        ALT: (): A.Expr => {
          const name = this.subrule(2, this.ident);
          this.consume(3, S['=>']!);
          return { kind: 'NamedArgument', loc: this.loc(t), name, value: this.subrule(4, this.expr) };
        },
      },
      {
        GATE: () => this.isSym('->', 2),
        ALT: (): A.Expr => {
          const name = this.subrule(5, this.ident);
          this.consume(6, S['->']!);
          return { kind: 'LambdaExpr', loc: this.loc(t), params: [name], body: this.subrule(7, this.expr) };
        },
      },
      {
        GATE: () => this.lambdaParamsAhead(),
        ALT: (): A.Expr => {
          this.consume(8, LP);
          const params = this.option(9, () => this.subrule(10, this.identList)) ?? [];
          this.consume(11, RP);
          this.consume(12, S['->']!);
          return { kind: 'LambdaExpr', loc: this.loc(t), params, body: this.subrule(13, this.expr) };
        },
      },
      { ALT: (): A.Expr => this.subrule(14, this.expr) },
    ]);
  });

  private functionCall = this.RULE('functionCall', (nameIn?: string[], loc?: A.Loc): A.Expr => {
    this.consume(1, LP);
    let name = nameIn ?? [];
    let safe = false;
    if (name.length > 1 && name[0]!.toUpperCase() === 'SAFE') {
      safe = true;
      name = name.slice(1);
    }
    const call: A.FunctionCall = { kind: 'FunctionCall', loc: loc!, name, safe, args: [], distinct: false };
    this.or(2, [
      { GATE: () => this.isSym(')'), ALT: () => undefined },
      {
        // `DISTINCT *` is parsed so the analyzer can say COUNT(*) takes no DISTINCT, as the reference does.
        GATE: () => (this.isKw('DISTINCT') ? this.isSym('*', 2) && !this.isSym('.', 3) : !this.isSym('.', 2)),
        ALT: () => {
          this.option(43, () => (this.consume(44, K.DISTINCT!), (call.distinct = true)));
          const st = this.consume(3, S['*']!);
          call.args.push({ kind: 'StarArg', loc: this.loc(st) });
          // COUNT(*, contribution_bounds_per_group => ...) is the differentially private COUNT's form; the
          // analyzer says where a `*` with more arguments is allowed.
          this.many(40, () => (this.consume(41, COMMA), call.args.push(this.subrule(42, this.functionArg))));
          this.subrule(4, this.aggregateModifiers, { ARGS: [call] });
        },
      },
      {
        GATE: () => this.isKw('WHERE') || this.isKw('HAVING') || this.isKw('ORDER') || this.isKw('LIMIT'),
        ALT: () => this.subrule(5, this.aggregateModifiers, { ARGS: [call] }),
      },
      {
        ALT: () => {
          this.option(6, {
            GATE: () => this.isKw('DISTINCT') || (!this.isSym(')', 2) && !this.isSym(',', 2)),
            DEF: () =>
              this.or(7, [
                { ALT: () => (this.consume(8, K.DISTINCT!), (call.distinct = true)) },
                { ALT: () => this.consume(9, K.ALL!) },
              ]),
          });
          call.args.push(this.subrule(10, this.functionArg));
          this.many(11, () => (this.consume(12, COMMA), call.args.push(this.subrule(13, this.functionArg))));
          this.subrule(14, this.aggregateModifiers, { ARGS: [call] });
        },
      },
    ]);
    this.consume(15, RP);
    this.option(16, () => {
      this.consume(17, K.OVER!);
      this.or(18, [
        { ALT: () => (call.over = this.subrule(19, this.windowSpecParen)) },
        {
          ALT: () => {
            const bt = this.la(1);
            call.over = { kind: 'WindowSpec', loc: this.loc(bt), baseName: this.subrule(20, this.ident), partitionBy: [], orderBy: [] };
          },
        },
      ]);
    });
    return call;
  });

  /** Aggregate modifiers after the arguments: [IGNORE|RESPECT NULLS] [WHERE] [HAVING MAX|MIN] [ORDER BY] [LIMIT]. */
  private aggregateModifiers = this.RULE('aggregateModifiers', (callIn?: A.FunctionCall): void => {
    const call = callIn ?? ({} as A.FunctionCall);
    this.option(1, () => {
      const k = this.or(2, [{ ALT: () => this.consume(3, K.IGNORE!) }, { ALT: () => this.consume(4, K.RESPECT!) }]);
      this.consume(5, K.NULLS!);
      call.nullHandling = this.up(k) as 'IGNORE' | 'RESPECT';
    });
    this.option(6, () => (this.consume(7, K.WHERE!), (call.where = this.subrule(8, this.expr))));
    this.option(9, () => {
      this.consume(10, K.HAVING!);
      const m = this.or(11, {
        ERR_MSG: 'keyword MAX or MIN',
        DEF: [{ ALT: () => this.consume(12, K.MAX!) }, { ALT: () => this.consume(13, K.MIN!) }],
      });
      call.having = { kind: this.up(m) as 'MAX' | 'MIN', expr: this.subrule(14, this.expr) };
    });
    this.option(15, () => (this.consume(16, K.ORDER!), this.consume(17, K.BY!), (call.orderBy = this.subrule(18, this.orderByList))));
    this.option(19, () => (this.consume(20, K.LIMIT!), (call.limit = this.subrule(21, this.expr))));
  });

  private windowSpecParen = this.RULE('windowSpecParen', (): A.WindowSpec => {
    const t = this.consume(1, LP);
    const spec: A.WindowSpec = { kind: 'WindowSpec', loc: this.loc(t), partitionBy: [], orderBy: [] };
    this.option(2, () => (spec.baseName = this.subrule(3, this.ident)));
    this.option(4, () => (this.consume(5, K.PARTITION!), this.consume(6, K.BY!), (spec.partitionBy = this.subrule(7, this.exprList))));
    this.option(8, () => (this.consume(9, K.ORDER!), this.consume(10, K.BY!), (spec.orderBy = this.subrule(11, this.orderByList))));
    this.option(12, () => {
      const u = this.or(13, [{ ALT: () => this.consume(14, K.ROWS!) }, { ALT: () => this.consume(15, K.RANGE!) }]);
      const unit = this.up(u) as 'ROWS' | 'RANGE';
      this.or(16, [
        {
          ALT: () => {
            this.consume(17, K.BETWEEN!);
            const start = this.subrule(18, this.frameBound);
            this.consume(19, K.AND!);
            const end = this.subrule(20, this.frameBound);
            spec.frame = { unit, start, end };
          },
        },
        { ALT: () => (spec.frame = { unit, start: this.subrule(21, this.frameBound) }) },
      ]);
    });
    this.consume(22, RP);
    return spec;
  });

  private frameBound = this.RULE('frameBound', (): A.FrameBound =>
    this.or(1, [
      {
        ALT: (): A.FrameBound => {
          this.consume(2, K.UNBOUNDED!);
          return this.or(3, {
            ERR_MSG: 'keyword FOLLOWING',
            DEF: [
              { ALT: (): A.FrameBound => (this.consume(4, K.PRECEDING!), { type: 'UNBOUNDED PRECEDING' }) },
              { ALT: (): A.FrameBound => (this.consume(5, K.FOLLOWING!), { type: 'UNBOUNDED FOLLOWING' }) },
            ],
          });
        },
      },
      { GATE: () => this.isKw('ROW', 2), ALT: (): A.FrameBound => (this.consume(6, K.CURRENT!), this.consume(7, K.ROW!), { type: 'CURRENT ROW' }) },
      {
        ALT: (): A.FrameBound => {
          const offset = this.subrule(8, this.bitOr);
          return this.or(9, {
            ERR_MSG: 'keyword FOLLOWING',
            DEF: [
              { ALT: (): A.FrameBound => (this.consume(10, K.PRECEDING!), { type: 'PRECEDING', offset }) },
              { ALT: (): A.FrameBound => (this.consume(11, K.FOLLOWING!), { type: 'FOLLOWING', offset }) },
            ],
          });
        },
      },
    ]),
  );
}

// ---------------------------------------------------------------------------
// Public entry points: one parser instance, built lazily on first use (the
// grammar recording + lookahead precomputation runs once per process).
// ---------------------------------------------------------------------------

let shared: GoogleSqlParser | undefined;
function parser(): GoogleSqlParser {
  return (shared ??= new GoogleSqlParser());
}

/** Parse a script (one or more `;`-separated statements). */
export function parseScript(sql: string): A.Script {
  return checkScript(checkDepth(parser().parseScript(sql)));
}

/**
 * Deepest expression nesting the rest of the pipeline (analyzer, planner,
 * executor: recursive walks) handles on Node's default stack with a wide
 * margin: a 1,500-term `a + b + ...` chain still analyzes, 2,000 does not.
 * Long AND/OR chains are balanced by the parser and nested parentheses cost
 * nothing, so this only bites on thousands of chained non-associative operators.
 */
export const MAX_EXPRESSION_DEPTH = 1000;

/** Rejects, with a 400-worthy syntax error, an AST nested deeper than MAX_EXPRESSION_DEPTH (iterative walk). */
function checkDepth<T extends object>(root: T): T {
  const nodes: unknown[] = [root];
  const depths: number[] = [0];
  while (nodes.length) {
    const n = nodes.pop();
    let d = depths.pop()!;
    if (n === null || typeof n !== 'object') continue;
    if (Array.isArray(n)) {
      for (const x of n) if (x !== null && typeof x === 'object') (nodes.push(x), depths.push(d));
      continue;
    }
    if (n instanceof Uint8Array) continue;
    const kind = (n as { kind?: unknown }).kind;
    // Set operations chain without recursion downstream: they do not count.
    if (typeof kind === 'string' && kind !== 'SetOperation') d++;
    if (d > MAX_EXPRESSION_DEPTH) {
      const loc = (n as { loc?: A.Loc }).loc;
      throw new SqlSyntaxError(`Syntax error: Expression is nested more than ${MAX_EXPRESSION_DEPTH} levels deep, which this emulator does not support; simplify the query (for example, group long operator chains with parentheses or use IN)`, loc?.line ?? 1, loc?.column ?? 1);
    }
    for (const k in n) {
      if (k === 'loc') continue;
      const v = (n as Record<string, unknown>)[k];
      if (v !== null && typeof v === 'object') (nodes.push(v), depths.push(d));
    }
  }
  return root;
}

/** Parse exactly one statement (a trailing `;` is allowed). */
export function parseStatement(sql: string): A.Statement {
  return checkDepth(parser().parseStatement(sql));
}

/** Parse a standalone expression (e.g. a column DEFAULT or a view filter). */
export function parseExpression(sql: string): A.Expr {
  return checkDepth(parser().parseExpression(sql));
}

/** Parse a type name like `ARRAY<STRUCT<a INT64>>`. */
export function parseType(sql: string): A.TypeNode {
  return parser().parseType(sql);
}
