// GoogleSQL parser: recursive descent over the Chevrotain-lexed token array,
// building the typed AST directly (no CST pass).
//
// Why hand-written descent rather than a Chevrotain grammar class: GoogleSQL
// needs unbounded lookahead in several places (`(` starting a subquery vs a
// tuple vs a lambda, parenthesized joins, keywords-as-identifiers), and the real
// service's error messages ("Expected X but got Y" / "Unexpected Y") map 1:1 to
// the points where descent fails. Construction cost is zero and there is no
// grammar self-analysis at start-up.
import type * as A from './ast.js';
import {
  T,
  type Token,
  tokenize,
  RESERVED,
  NON_RESERVED_KEYWORDS,
  decodeStringToken,
  decodeQuotedIdent,
  LexError,
  LiteralError,
  positionAt,
} from './lexer.js';
import { SqlSyntaxError } from './errors.js';

export { SqlSyntaxError };

/** Thrown internally; converted to SqlSyntaxError at the API boundary. */
class ParseFail extends Error {
  constructor(
    readonly detail: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(detail);
  }
}

const QUERY_START = new Set(['SELECT', 'WITH', 'FROM']);
const DATE_PARTS_WEEK = 'WEEK';
const TYPED_LITERAL = new Set(['DATE', 'TIME', 'DATETIME', 'TIMESTAMP', 'NUMERIC', 'BIGNUMERIC', 'DECIMAL', 'BIGDECIMAL', 'JSON']);
// Reserved words that are nonetheless callable as functions: IF(...), LEFT(s, n), ...
const RESERVED_FUNCTIONS = new Set(['IF', 'LEFT', 'RIGHT', 'RANGE', 'COLLATE', 'GROUPING']);
const NO_PAREN_FUNCTIONS = new Set(['CURRENT_DATE', 'CURRENT_TIME', 'CURRENT_DATETIME', 'CURRENT_TIMESTAMP']);
const JOIN_START = new Set(['JOIN', 'INNER', 'LEFT', 'RIGHT', 'FULL', 'CROSS', 'NATURAL']);

export class Parser {
  private toks: Token[] = [];
  private pos = 0;
  private sql = '';
  private paramIndex = 0;

  parseScript(sql: string): A.Script {
    this.reset(sql);
    const first = this.peek();
    const statements: A.Statement[] = [];
    for (;;) {
      while (this.acceptSym(';'));
      if (this.peek().type === T.EOF) break;
      statements.push(this.statement());
      if (this.peek().type === T.EOF) break;
      if (!this.isSym(';')) this.fail(this.peek(), 'end of input');
    }
    return { kind: 'Script', loc: this.loc(first), statements };
  }

  parseStatement(sql: string): A.Statement {
    this.reset(sql);
    const s = this.statement();
    this.acceptSym(';');
    if (this.peek().type !== T.EOF) this.fail(this.peek(), 'end of input');
    return s;
  }

  parseExpression(sql: string): A.Expr {
    this.reset(sql);
    const e = this.expr();
    if (this.peek().type !== T.EOF) this.fail(this.peek(), 'end of input');
    return e;
  }

  parseType(sql: string): A.TypeNode {
    this.reset(sql);
    const t = this.type();
    if (this.peek().type !== T.EOF) this.fail(this.peek(), 'end of input');
    return t;
  }

  private reset(sql: string): void {
    this.sql = sql;
    this.pos = 0;
    this.paramIndex = 0;
    try {
      this.toks = tokenize(sql);
    } catch (e) {
      if (e instanceof LexError) throw new ParseFail(`Syntax error: ${e.message}`, e.line, e.column);
      throw e;
    }
  }

  // -------------------------------------------------------------------------
  // Token helpers
  // -------------------------------------------------------------------------

  private peek(k = 0): Token {
    const i = this.pos + k;
    return this.toks[i < this.toks.length ? i : this.toks.length - 1]!;
  }
  private next(): Token {
    const t = this.toks[this.pos]!;
    if (t.type !== T.EOF) this.pos++;
    return t;
  }
  private prevEnd(): number {
    return this.pos > 0 ? this.toks[this.pos - 1]!.end : 0;
  }
  private loc(t: Token): A.Loc {
    return { line: t.line, column: t.column, offset: t.offset };
  }
  private isKw(word: string, k = 0): boolean {
    const t = this.peek(k);
    return t.type === T.Word && t.upper === word;
  }
  private acceptKw(word: string): boolean {
    if (this.isKw(word)) {
      this.pos++;
      return true;
    }
    return false;
  }
  private expectKw(word: string): Token {
    if (!this.isKw(word)) this.fail(this.peek(), `keyword ${word}`);
    return this.next();
  }
  private isSym(s: string, k = 0): boolean {
    const t = this.peek(k);
    return t.type === T.Symbol && t.image === s;
  }
  private acceptSym(s: string): boolean {
    if (this.isSym(s)) {
      this.pos++;
      return true;
    }
    return false;
  }
  private expectSym(s: string): Token {
    if (!this.isSym(s)) {
      // `>>` closing two type argument lists: split it.
      if (s === '>' && this.isSym('>>')) {
        const t = this.peek();
        // Copy-on-write so a backtracking `speculate` restores the unsplit array.
        this.toks = this.toks.slice();
        this.toks[this.pos] = { ...t, image: '>', upper: '>', offset: t.offset + 1, column: t.column + 1 };
        return t;
      }
      this.fail(this.peek(), `"${s}"`);
    }
    return this.next();
  }

  private describe(t: Token): string {
    switch (t.type) {
      case T.EOF:
        return 'end of script';
      case T.Word:
        if (RESERVED.has(t.upper) || NON_RESERVED_KEYWORDS.has(t.upper)) return `keyword ${t.upper}`;
        return `identifier "${t.image}"`;
      case T.QuotedIdent:
        return `identifier ${t.image}`;
      case T.Int:
      case T.HexInt:
        return `integer literal "${t.image}"`;
      case T.Float:
        return `floating point literal "${t.image}"`;
      case T.String: {
        const p = /^[rRbB]*/.exec(t.image)![0].toLowerCase();
        return `${p.includes('b') ? 'bytes' : 'string'} literal ${t.image}`;
      }
      default:
        return `"${t.image}"`;
    }
  }

  /** Throw "Expected X but got Y" (expected given) or "Unexpected Y". */
  private fail(t: Token, expected?: string): never {
    if (expected) throw new ParseFail(`Syntax error: Expected ${expected} but got ${this.describe(t)}`, t.line, t.column);
    throw new ParseFail(`Syntax error: Unexpected ${this.describe(t)}`, t.line, t.column);
  }
  private failMsg(t: Token, msg: string): never {
    throw new ParseFail(`Syntax error: ${msg}`, t.line, t.column);
  }

  /** Identifier token: unquoted non-reserved word or backtick-quoted. */
  private isIdent(k = 0): boolean {
    const t = this.peek(k);
    return t.type === T.QuotedIdent || (t.type === T.Word && !RESERVED.has(t.upper));
  }
  private identName(t: Token): string {
    if (t.type === T.QuotedIdent) {
      try {
        return decodeQuotedIdent(t.image);
      } catch (e) {
        if (e instanceof LiteralError) this.failMsg(t, e.message);
        throw e;
      }
    }
    return t.image;
  }
  private ident(what = 'identifier'): string {
    if (!this.isIdent()) {
      if (what === 'identifier') this.fail(this.peek());
      this.fail(this.peek(), what);
    }
    return this.identName(this.next());
  }
  /** After a dot any word (even reserved) is a field/path component. */
  private identAfterDot(): string {
    const t = this.peek();
    if (t.type === T.Word || t.type === T.QuotedIdent) return this.identName(this.next());
    // `ds.123abc`-like components lex as numbers; accept integer text.
    if (t.type === T.Int) return this.next().image;
    return this.fail(t);
  }

  private speculate<R>(fn: () => R): R | undefined {
    const save = this.pos;
    const saveParam = this.paramIndex;
    const saveToks = this.toks;
    try {
      return fn();
    } catch (e) {
      if (!(e instanceof ParseFail)) throw e;
      this.pos = save;
      this.paramIndex = saveParam;
      this.toks = saveToks;
      return undefined;
    }
  }

  /** True if the tokens at k (after any run of `(`) start a query. */
  private startsQuery(k = 0): boolean {
    while (this.isSym('(', k)) k++;
    const t = this.peek(k);
    return t.type === T.Word && QUERY_START.has(t.upper);
  }

  private stringLit(): string {
    const t = this.peek();
    if (t.type !== T.String) this.fail(t, 'string literal');
    this.next();
    return this.decodeString(t).value;
  }
  private decodeString(t: Token) {
    try {
      return decodeStringToken(t.image);
    } catch (e) {
      if (e instanceof LiteralError) {
        const p = positionAt(this.sql, t.offset + e.relOffset);
        throw new ParseFail(`Syntax error: ${e.message}`, p.line, p.column);
      }
      throw e;
    }
  }

  /** Path with possibly dashed first component (my-project.ds.t). */
  private path(): A.Path {
    const parts: string[] = [this.pathComponent(true)];
    while (this.isSym('.') && this.isPathPart(1)) {
      this.next();
      parts.push(this.pathComponent(false));
    }
    return parts;
  }
  private isPathPart(k: number): boolean {
    const t = this.peek(k);
    return t.type === T.Word || t.type === T.QuotedIdent || t.type === T.Int;
  }
  private pathComponent(first: boolean): string {
    const t = this.peek();
    let name: string;
    if (first) name = this.ident();
    else name = this.identAfterDot();
    if (t.type !== T.Word) return name;
    // Join adjacent `-word` / `-123` / `-123abc` pieces: unquoted project ids may contain dashes.
    let end = t.end;
    for (;;) {
      const d = this.peek();
      let w = this.peek(1);
      if (!(d.type === T.Symbol && d.image === '-' && d.offset === end && w.offset === d.end)) break;
      if (w.type === T.Float && /^[0-9]+\.$/.test(w.image)) {
        // `my-project-123.ds`: the lexer read `123.` as a float; split it back into `123` `.`.
        const intTok: Token = { ...w, type: T.Int, image: w.image.slice(0, -1), upper: w.image.slice(0, -1), end: w.end - 1 };
        const dot: Token = { ...w, type: T.Symbol, image: '.', upper: '.', offset: w.end - 1, column: w.column + w.image.length - 1 };
        this.toks = this.toks.slice();
        this.toks.splice(this.pos + 1, 1, intTok, dot);
        w = intTok;
      }
      if (w.type !== T.Word && w.type !== T.Int) break;
      this.next();
      this.next();
      name += '-' + w.image;
      end = w.end;
      // `123abc` lexes as Int + Word: glue adjacent pieces.
      while ((this.peek().type === T.Word || this.peek().type === T.Int) && this.peek().offset === end) {
        const x = this.next();
        name += x.image;
        end = x.end;
      }
    }
    return name;
  }

  // -------------------------------------------------------------------------
  // Statements
  // -------------------------------------------------------------------------

  private stmtEnd<S extends { start: number; end: number }>(s: S): S {
    s.end = this.prevEnd();
    return s;
  }

  private statement(): A.Statement {
    const t = this.peek();
    // label: LOOP/WHILE/REPEAT/FOR/BEGIN
    if (this.isIdent() && this.isSym(':', 1)) {
      const label = this.identName(this.next());
      this.next();
      const s = this.statement();
      if (s.kind === 'Loop' || s.kind === 'While' || s.kind === 'Repeat' || s.kind === 'ForIn' || s.kind === 'Block') {
        s.label = label;
        s.start = t.offset;
        s.loc = this.loc(t);
        // optional trailing label after END LOOP etc.
        if (this.isIdent() && this.identName(this.peek()) === label) this.next(), (s.end = this.prevEnd());
        return s;
      }
      this.failMsg(t, 'Unexpected label');
    }
    if (t.type === T.Symbol && t.image === '(') return this.queryStatement();
    if (t.type !== T.Word) this.fail(t);
    switch (t.upper) {
      case 'SELECT':
      case 'WITH':
      case 'FROM':
        return this.queryStatement();
      case 'CREATE':
        return this.createStatement();
      case 'DROP':
        return this.dropStatement();
      case 'ALTER':
        return this.alterStatement();
      case 'UNDROP': {
        this.next();
        this.expectKw('SCHEMA');
        const ifNotExists = this.ifNotExists();
        return this.stmtEnd({ kind: 'UndropSchema', loc: this.loc(t), start: t.offset, end: 0, ifNotExists, name: this.path() });
      }
      case 'INSERT':
        return this.insertStatement();
      case 'UPDATE':
        return this.updateStatement();
      case 'DELETE':
        return this.deleteStatement();
      case 'MERGE':
        return this.mergeStatement();
      case 'TRUNCATE': {
        this.next();
        this.expectKw('TABLE');
        return this.stmtEnd({ kind: 'Truncate', loc: this.loc(t), start: t.offset, end: 0, name: this.path() });
      }
      case 'DECLARE':
        return this.declareStatement();
      case 'SET':
        return this.setStatement();
      case 'IF':
        return this.ifStatement();
      case 'CASE':
        return this.caseStatement();
      case 'LOOP': {
        this.next();
        const body = this.stmtList(['END']);
        this.expectKw('END');
        this.expectKw('LOOP');
        return this.stmtEnd({ kind: 'Loop', loc: this.loc(t), start: t.offset, end: 0, body });
      }
      case 'WHILE': {
        this.next();
        const cond = this.expr();
        this.expectKw('DO');
        const body = this.stmtList(['END']);
        this.expectKw('END');
        this.expectKw('WHILE');
        return this.stmtEnd({ kind: 'While', loc: this.loc(t), start: t.offset, end: 0, cond, body });
      }
      case 'REPEAT': {
        this.next();
        const body = this.stmtList(['UNTIL']);
        this.expectKw('UNTIL');
        const until = this.expr();
        this.expectKw('END');
        this.expectKw('REPEAT');
        return this.stmtEnd({ kind: 'Repeat', loc: this.loc(t), start: t.offset, end: 0, body, until });
      }
      case 'FOR': {
        this.next();
        const variable = this.ident();
        this.expectKw('IN');
        this.expectSym('(');
        const query = this.query();
        this.expectSym(')');
        this.expectKw('DO');
        const body = this.stmtList(['END']);
        this.expectKw('END');
        this.expectKw('FOR');
        return this.stmtEnd({ kind: 'ForIn', loc: this.loc(t), start: t.offset, end: 0, variable, query, body });
      }
      case 'BREAK':
      case 'LEAVE': {
        this.next();
        const label = this.isIdent() ? this.ident() : undefined;
        return this.stmtEnd({ kind: 'Break', loc: this.loc(t), start: t.offset, end: 0, keyword: t.upper, label });
      }
      case 'CONTINUE':
      case 'ITERATE': {
        this.next();
        const label = this.isIdent() ? this.ident() : undefined;
        return this.stmtEnd({ kind: 'Continue', loc: this.loc(t), start: t.offset, end: 0, keyword: t.upper, label });
      }
      case 'BEGIN': {
        if (this.isKw('TRANSACTION', 1) || this.isSym(';', 1) || this.peek(1).type === T.EOF) {
          this.next();
          this.acceptKw('TRANSACTION');
          return this.stmtEnd({ kind: 'Transaction', loc: this.loc(t), start: t.offset, end: 0, action: 'BEGIN' });
        }
        return this.block();
      }
      case 'COMMIT':
      case 'ROLLBACK': {
        this.next();
        this.acceptKw('TRANSACTION');
        return this.stmtEnd({ kind: 'Transaction', loc: this.loc(t), start: t.offset, end: 0, action: t.upper });
      }
      case 'RAISE': {
        this.next();
        let message: A.Expr | undefined;
        if (this.acceptKw('USING')) {
          this.expectKw('MESSAGE');
          this.expectSym('=');
          message = this.expr();
        }
        return this.stmtEnd({ kind: 'Raise', loc: this.loc(t), start: t.offset, end: 0, message });
      }
      case 'RETURN':
        this.next();
        return this.stmtEnd({ kind: 'Return', loc: this.loc(t), start: t.offset, end: 0 });
      case 'CALL': {
        this.next();
        const name = this.path();
        this.expectSym('(');
        const args: A.Expr[] = [];
        if (!this.isSym(')')) {
          do args.push(this.expr());
          while (this.acceptSym(','));
        }
        this.expectSym(')');
        return this.stmtEnd({ kind: 'Call', loc: this.loc(t), start: t.offset, end: 0, name, args });
      }
      case 'EXECUTE': {
        this.next();
        this.expectKw('IMMEDIATE');
        const sql = this.expr();
        let into: string[] | undefined;
        let using: A.AliasedExpr[] | undefined;
        if (this.acceptKw('INTO')) {
          into = [];
          do into.push(this.ident());
          while (this.acceptSym(','));
        }
        if (this.acceptKw('USING')) {
          using = [];
          do {
            const expr = this.expr();
            using.push({ expr, alias: this.acceptKw('AS') ? this.ident() : undefined });
          } while (this.acceptSym(','));
        }
        return this.stmtEnd({ kind: 'ExecuteImmediate', loc: this.loc(t), start: t.offset, end: 0, sql, into, using });
      }
      case 'ASSERT': {
        this.next();
        const cond = this.expr();
        const description = this.acceptKw('AS') ? this.expr() : undefined;
        return this.stmtEnd({ kind: 'Assert', loc: this.loc(t), start: t.offset, end: 0, cond, description });
      }
      case 'EXPORT':
        return this.exportData();
      case 'LOAD':
        return this.loadData();
      case 'GRANT':
      case 'REVOKE':
        return this.grantStatement();
      default:
        return this.fail(t);
    }
  }

  /** Statements each terminated by `;`, until one of the stop keywords. */
  private stmtList(stop: string[]): A.Statement[] {
    const out: A.Statement[] = [];
    for (;;) {
      const t = this.peek();
      if (t.type === T.EOF) return out;
      if (t.type === T.Word && stop.includes(t.upper)) {
        // END / ELSE / ELSEIF / WHEN / UNTIL / EXCEPTION close the list (IF( is a function, not a stop).
        return out;
      }
      if (this.acceptSym(';')) continue;
      out.push(this.statement());
      if (!this.isSym(';')) this.fail(this.peek(), '";"');
      this.next();
    }
  }

  private block(): A.BlockStmt {
    const t = this.expectKw('BEGIN');
    const body = this.stmtList(['END', 'EXCEPTION']);
    let exceptionHandler: A.Statement[] | undefined;
    if (this.acceptKw('EXCEPTION')) {
      this.expectKw('WHEN');
      this.expectKw('ERROR');
      this.expectKw('THEN');
      exceptionHandler = this.stmtList(['END']);
    }
    this.expectKw('END');
    return this.stmtEnd({ kind: 'Block', loc: this.loc(t), start: t.offset, end: 0, body, exceptionHandler });
  }

  private ifStatement(): A.IfStmt {
    const t = this.expectKw('IF');
    const branches: { cond: A.Expr; body: A.Statement[] }[] = [];
    let cond = this.expr();
    this.expectKw('THEN');
    branches.push({ cond, body: this.stmtList(['ELSEIF', 'ELSE', 'END']) });
    let elseBody: A.Statement[] | undefined;
    for (;;) {
      if (this.acceptKw('ELSEIF')) {
        cond = this.expr();
        this.expectKw('THEN');
        branches.push({ cond, body: this.stmtList(['ELSEIF', 'ELSE', 'END']) });
      } else if (this.acceptKw('ELSE')) {
        elseBody = this.stmtList(['END']);
      } else break;
    }
    this.expectKw('END');
    this.expectKw('IF');
    return this.stmtEnd({ kind: 'If', loc: this.loc(t), start: t.offset, end: 0, branches, else: elseBody });
  }

  private caseStatement(): A.CaseStmt {
    const t = this.expectKw('CASE');
    const operand = this.isKw('WHEN') ? undefined : this.expr();
    const whens: { when: A.Expr; body: A.Statement[] }[] = [];
    while (this.acceptKw('WHEN')) {
      const when = this.expr();
      this.expectKw('THEN');
      whens.push({ when, body: this.stmtList(['WHEN', 'ELSE', 'END']) });
    }
    const elseBody = this.acceptKw('ELSE') ? this.stmtList(['END']) : undefined;
    this.expectKw('END');
    this.expectKw('CASE');
    return this.stmtEnd({ kind: 'CaseStmt', loc: this.loc(t), start: t.offset, end: 0, operand, whens, else: elseBody });
  }

  private declareStatement(): A.DeclareStmt {
    const t = this.expectKw('DECLARE');
    const names: string[] = [];
    do names.push(this.ident());
    while (this.acceptSym(','));
    const type = this.isKw('DEFAULT') ? undefined : this.type();
    const dflt = this.acceptKw('DEFAULT') ? this.expr() : undefined;
    return this.stmtEnd({ kind: 'Declare', loc: this.loc(t), start: t.offset, end: 0, names, type, default: dflt });
  }

  private setTarget(): A.SetTarget {
    if (this.acceptSym('@@')) {
      const parts = [this.identAfterDot()];
      while (this.acceptSym('.')) parts.push(this.identAfterDot());
      return { name: parts.join('.'), system: true };
    }
    return { name: this.ident(), system: false };
  }

  private setStatement(): A.SetStmt {
    const t = this.expectKw('SET');
    const targets: A.SetTarget[] = [];
    let tuple = false;
    if (this.acceptSym('(')) {
      tuple = true;
      do targets.push(this.setTarget());
      while (this.acceptSym(','));
      this.expectSym(')');
    } else targets.push(this.setTarget());
    this.expectSym('=');
    const value = this.expr();
    return this.stmtEnd({ kind: 'Set', loc: this.loc(t), start: t.offset, end: 0, targets, tuple, value });
  }

  private queryStatement(): A.QueryStatement {
    const t = this.peek();
    const query = this.query();
    return this.stmtEnd({ kind: 'QueryStatement', loc: this.loc(t), start: t.offset, end: 0, query });
  }

  private ifNotExists(): boolean {
    if (this.isKw('IF') && this.isKw('NOT', 1)) {
      this.next();
      this.next();
      this.expectKw('EXISTS');
      return true;
    }
    return false;
  }
  private ifExists(): boolean {
    if (this.isKw('IF') && this.isKw('EXISTS', 1)) {
      this.next();
      this.next();
      return true;
    }
    return false;
  }

  private optionsList(): A.OptionEntry[] {
    this.expectKw('OPTIONS');
    this.expectSym('(');
    const out: A.OptionEntry[] = [];
    if (!this.isSym(')')) {
      do {
        if (this.isSym(')')) break;
        const name = this.identAfterDot();
        if (!this.acceptSym('=')) this.expectSym('=');
        out.push({ name, value: this.expr() });
      } while (this.acceptSym(','));
    }
    this.expectSym(')');
    return out;
  }

  private createStatement(): A.Statement {
    const t = this.expectKw('CREATE');
    let orReplace = false;
    if (this.acceptKw('OR')) {
      this.expectKw('REPLACE');
      orReplace = true;
    }
    let temp = false;
    if (this.acceptKw('TEMP') || this.acceptKw('TEMPORARY')) temp = true;
    const k = this.peek();
    const base = { loc: this.loc(t), start: t.offset, end: 0, orReplace };
    switch (k.upper) {
      case 'TABLE':
        if (this.isKw('FUNCTION', 1)) {
          this.next();
          return this.createFunction(base, temp, false, true);
        }
        this.next();
        return this.createTable(base, temp, false, false);
      case 'EXTERNAL':
      case 'SNAPSHOT':
        this.next();
        this.expectKw('TABLE');
        return this.createTable(base, temp, k.upper === 'EXTERNAL', k.upper === 'SNAPSHOT');
      case 'VIEW':
        this.next();
        return this.createView(base, false);
      case 'MATERIALIZED':
        this.next();
        this.expectKw('VIEW');
        return this.createView(base, true);
      case 'SCHEMA':
      case 'DATABASE': {
        this.next();
        const ifNotExists = this.ifNotExists();
        const name = this.path();
        let defaultCollate: string | undefined;
        let options: A.OptionEntry[] | undefined;
        for (;;) {
          if (this.isKw('DEFAULT') && this.isKw('COLLATE', 1)) {
            this.next();
            this.next();
            defaultCollate = this.stringLit();
          } else if (this.isKw('OPTIONS')) options = this.optionsList();
          else break;
        }
        return this.stmtEnd({ kind: 'CreateSchema', ...base, ifNotExists, name, defaultCollate, options });
      }
      case 'FUNCTION':
        return this.createFunction(base, temp, false, false);
      case 'AGGREGATE':
        this.next();
        return this.createFunction(base, temp, true, false);
      case 'PROCEDURE':
        return this.createProcedure(base);
      case 'CONSTANT': {
        this.next();
        const ifNotExists = this.ifNotExists();
        const name = this.path();
        this.expectSym('=');
        const value = this.expr();
        return this.stmtEnd({ kind: 'CreateConstant', ...base, temp, ifNotExists, name, value });
      }
      case 'MODEL':
        return this.createModel(base);
      case 'ROW':
        return this.createRowAccessPolicy(base);
      case 'SEARCH':
      case 'VECTOR': {
        this.next();
        this.expectKw('INDEX');
        const ifNotExists = this.ifNotExists();
        const name = this.path();
        this.expectKw('ON');
        const table = this.path();
        this.expectSym('(');
        let columns: string[] | undefined;
        if (this.isKw('ALL') && this.isKw('COLUMNS', 1)) {
          this.next();
          this.next();
        } else columns = this.identList();
        this.expectSym(')');
        let storing: string[] | undefined;
        if (this.acceptKw('STORING')) {
          this.expectSym('(');
          storing = this.identList();
          this.expectSym(')');
        }
        const options = this.isKw('OPTIONS') ? this.optionsList() : undefined;
        return this.stmtEnd({ kind: 'CreateIndex', ...base, ifNotExists, indexType: k.upper as 'SEARCH' | 'VECTOR', name, table, columns, storing, options });
      }
      default:
        return this.fail(k);
    }
  }

  private columnDefList(): A.ColumnDef[] {
    this.expectSym('(');
    const cols: A.ColumnDef[] = [];
    do {
      if (this.isSym(')')) break;
      cols.push(this.columnDef());
    } while (this.acceptSym(','));
    this.expectSym(')');
    return cols;
  }

  private columnDef(): A.ColumnDef {
    const t = this.peek();
    const name = this.ident();
    const type = this.type(true);
    const col: A.ColumnDef = { kind: 'ColumnDef', loc: this.loc(t), name, type, notNull: false };
    this.columnAttributes(col, type);
    return col;
  }

  /** Attributes after a column type: NOT NULL, DEFAULT, OPTIONS, COLLATE, PRIMARY KEY, ... */
  private columnAttributes(col: A.ColumnDef, type: A.TypeNode): void {
    if (type.kind === 'ScalarType' && type.collate) col.collate = type.collate;
    for (;;) {
      if (this.isKw('NOT') && this.isKw('NULL', 1)) {
        this.next();
        this.next();
        col.notNull = true;
      } else if (this.acceptKw('DEFAULT')) col.default = this.expr();
      else if (this.isKw('OPTIONS')) col.options = this.optionsList();
      else if (this.acceptKw('COLLATE')) col.collate = this.stringLit();
      else if (this.isKw('PRIMARY')) {
        this.next();
        this.expectKw('KEY');
        this.notEnforced();
        col.primaryKey = true;
      } else if (this.acceptKw('REFERENCES')) {
        const table = this.path();
        this.expectSym('(');
        const columns = this.identList();
        this.expectSym(')');
        this.notEnforced();
        col.references = { table, columns };
      } else if (this.isKw('GENERATED')) {
        this.next();
        this.acceptKw('ALWAYS');
        this.expectKw('AS');
        this.expectSym('(');
        col.generated = this.expr();
        this.expectSym(')');
        this.acceptKw('STORED');
      } else break;
    }
  }

  private notEnforced(): void {
    if (this.isKw('NOT') && this.isKw('ENFORCED', 1)) {
      this.next();
      this.next();
    } else this.acceptKw('ENFORCED');
  }

  private identList(): string[] {
    const out: string[] = [];
    do out.push(this.ident());
    while (this.acceptSym(','));
    return out;
  }

  private tableConstraint(): A.TableConstraint | undefined {
    let name: string | undefined;
    const save = this.pos;
    if (this.acceptKw('CONSTRAINT')) name = this.ident();
    if (this.isKw('PRIMARY') && this.isKw('KEY', 1)) {
      this.next();
      this.next();
      this.expectSym('(');
      const columns = this.identList();
      this.expectSym(')');
      this.notEnforced();
      return { kind: 'PrimaryKey', name, columns };
    }
    if (this.isKw('FOREIGN') && this.isKw('KEY', 1)) {
      this.next();
      this.next();
      this.expectSym('(');
      const columns = this.identList();
      this.expectSym(')');
      this.expectKw('REFERENCES');
      const table = this.path();
      this.expectSym('(');
      const refCols = this.identList();
      this.expectSym(')');
      this.notEnforced();
      return { kind: 'ForeignKey', name, columns, references: { table, columns: refCols } };
    }
    this.pos = save;
    return undefined;
  }

  private createTable(
    base: { loc: A.Loc; start: number; end: number; orReplace: boolean },
    temp: boolean,
    external: boolean,
    snapshot: boolean,
  ): A.CreateTableStmt {
    const ifNotExists = this.ifNotExists();
    const name = this.path();
    const s: A.CreateTableStmt = { kind: 'CreateTable', ...base, temp, ifNotExists, external, snapshot, name };
    if (this.isSym('(') && !this.startsQuery(1)) {
      this.next();
      const columns: A.ColumnDef[] = [];
      const constraints: A.TableConstraint[] = [];
      do {
        if (this.isSym(')')) break;
        const c = this.tableConstraint();
        if (c) constraints.push(c);
        else columns.push(this.columnDef());
      } while (this.acceptSym(','));
      this.expectSym(')');
      s.columns = columns;
      if (constraints.length) s.constraints = constraints;
    }
    for (;;) {
      if (this.acceptKw('LIKE')) s.like = this.path();
      else if (this.acceptKw('COPY')) s.copy = this.path();
      else if (this.acceptKw('CLONE')) {
        const source = this.path();
        s.clone = { source, systemTime: this.systemTime() };
      } else if (this.isKw('DEFAULT') && this.isKw('COLLATE', 1)) {
        this.next();
        this.next();
        s.defaultCollate = this.stringLit();
      } else if (this.isKw('PARTITION')) {
        this.next();
        this.expectKw('BY');
        s.partitionBy = this.expr();
      } else if (this.isKw('CLUSTER')) {
        this.next();
        this.expectKw('BY');
        s.clusterBy = this.exprList();
      } else if (this.isKw('WITH') && this.isKw('CONNECTION', 1)) {
        this.next();
        this.next();
        s.withConnection = this.connectionName();
      } else if (this.isKw('WITH') && this.isKw('PARTITION', 1)) {
        this.next();
        this.next();
        this.expectKw('COLUMNS');
        if (this.isSym('(')) this.columnDefList();
      } else if (this.isKw('OPTIONS')) s.options = this.optionsList();
      else if (this.acceptKw('AS')) {
        s.asQuery = this.query();
      } else break;
    }
    return this.stmtEnd(s);
  }

  private connectionName(): A.Path {
    if (this.acceptKw('DEFAULT')) return ['DEFAULT'];
    if (this.peek().type === T.String) return [this.stringLit()];
    return this.path();
  }

  private systemTime(): A.Expr | undefined {
    if (this.isKw('FOR') && this.isKw('SYSTEM_TIME', 1)) {
      this.next();
      this.next();
      this.expectKw('AS');
      this.expectKw('OF');
      return this.expr();
    }
    if (this.isKw('FOR') && this.isKw('SYSTEM', 1) && this.isKw('TIME', 2)) {
      this.next();
      this.next();
      this.next();
      this.expectKw('AS');
      this.expectKw('OF');
      return this.expr();
    }
    return undefined;
  }

  private createView(base: { loc: A.Loc; start: number; end: number; orReplace: boolean }, materialized: boolean): A.CreateViewStmt {
    const ifNotExists = this.ifNotExists();
    const name = this.path();
    let columns: { name: string; options?: A.OptionEntry[] }[] | undefined;
    if (this.isSym('(') && !this.startsQuery(1)) {
      this.next();
      columns = [];
      do {
        const n = this.ident();
        columns.push({ name: n, options: this.isKw('OPTIONS') ? this.optionsList() : undefined });
      } while (this.acceptSym(','));
      this.expectSym(')');
    }
    let partitionBy: A.Expr | undefined;
    let clusterBy: A.Expr[] | undefined;
    let options: A.OptionEntry[] | undefined;
    for (;;) {
      if (this.isKw('PARTITION')) {
        this.next();
        this.expectKw('BY');
        partitionBy = this.expr();
      } else if (this.isKw('CLUSTER')) {
        this.next();
        this.expectKw('BY');
        clusterBy = this.exprList();
      } else if (this.isKw('OPTIONS')) options = this.optionsList();
      else break;
    }
    this.expectKw('AS');
    const qs = this.peek().offset;
    const query = this.query();
    const queryText = this.sql.slice(qs, this.prevEnd());
    return this.stmtEnd({ kind: 'CreateView', ...base, ifNotExists, materialized, name, columns, partitionBy, clusterBy, options, query, queryText });
  }

  private createFunction(
    base: { loc: A.Loc; start: number; end: number; orReplace: boolean },
    temp: boolean,
    aggregate: boolean,
    tableFunction: boolean,
  ): A.CreateFunctionStmt {
    this.expectKw('FUNCTION');
    const ifNotExists = this.ifNotExists();
    const name = this.path();
    const s: A.CreateFunctionStmt = { kind: 'CreateFunction', ...base, temp, ifNotExists, aggregate, tableFunction, name, params: [] };
    this.expectSym('(');
    if (!this.isSym(')')) {
      do {
        const pname = this.ident();
        const type = this.type();
        const p: A.FunctionParam = { name: pname, type };
        if (this.isKw('NOT') && this.isKw('AGGREGATE', 1)) {
          this.next();
          this.next();
          p.notAggregate = true;
        }
        if (this.acceptKw('DEFAULT')) this.expr();
        s.params.push(p);
      } while (this.acceptSym(','));
    }
    this.expectSym(')');
    for (;;) {
      if (this.acceptKw('RETURNS')) s.returns = this.type();
      else if (this.acceptKw('LANGUAGE')) s.language = this.ident().toLowerCase();
      else if (this.isKw('OPTIONS')) s.options = this.optionsList();
      else if (this.acceptKw('DETERMINISTIC')) continue;
      else if (this.isKw('NOT') && this.isKw('DETERMINISTIC', 1)) {
        this.next();
        this.next();
      } else if (this.isKw('SQL') && this.isKw('SECURITY', 1)) {
        this.next();
        this.next();
        this.next();
      } else if (this.isKw('REMOTE')) {
        this.next();
        this.expectKw('WITH');
        this.expectKw('CONNECTION');
        s.remoteConnection = this.connectionName();
      } else if (this.isKw('WITH') && this.isKw('CONNECTION', 1)) {
        this.next();
        this.next();
        s.remoteConnection = this.connectionName();
      } else if (this.acceptKw('AS')) {
        const bt = this.peek();
        if (bt.type === T.String) {
          this.next();
          s.code = this.decodeString(bt).value;
          s.bodyText = s.code;
        } else if (tableFunction || this.startsQuery(0) && !this.isSym('(')) {
          const qs = bt.offset;
          s.query = this.query();
          s.bodyText = this.sql.slice(qs, this.prevEnd());
        } else {
          this.expectSym('(');
          const bs = this.peek();
          // Lenient: `AS (SELECT ...)` is taken as a scalar subquery body.
          if (this.startsQuery() && !this.isSym('(')) s.body = { kind: 'ScalarSubquery', loc: this.loc(bs), query: this.query() };
          else s.body = this.expr();
          s.bodyText = this.sql.slice(bs.offset, this.prevEnd());
          this.expectSym(')');
        }
      } else break;
    }
    return this.stmtEnd(s);
  }

  private createProcedure(base: { loc: A.Loc; start: number; end: number; orReplace: boolean }): A.Statement {
    this.expectKw('PROCEDURE');
    const ifNotExists = this.ifNotExists();
    const name = this.path();
    const params: A.ProcedureParam[] = [];
    this.expectSym('(');
    if (!this.isSym(')')) {
      do {
        let mode: A.ProcedureParam['mode'];
        if ((this.isKw('IN') || this.isKw('OUT') || this.isKw('INOUT')) && this.isIdent(1)) mode = this.next().upper as A.ProcedureParam['mode'];
        const pname = this.ident();
        params.push({ mode, name: pname, type: this.type() });
      } while (this.acceptSym(','));
    }
    this.expectSym(')');
    let options: A.OptionEntry[] | undefined;
    for (;;) {
      if (this.isKw('OPTIONS')) options = this.optionsList();
      else if (this.isKw('WITH') && this.isKw('CONNECTION', 1)) {
        this.next();
        this.next();
        this.connectionName();
      } else if (this.isKw('EXTERNAL') && this.isKw('SECURITY', 1)) {
        this.next();
        this.next();
        this.next();
      } else break;
    }
    if (this.acceptKw('LANGUAGE')) {
      // Non-SQL procedures (e.g. Python): keep as an empty body; the analyzer rejects the language.
      this.ident();
      this.expectKw('AS');
      const code = this.peek();
      this.stringLit();
      const body: A.BlockStmt = { kind: 'Block', loc: this.loc(code), start: code.offset, end: code.end, body: [] };
      return this.stmtEnd({ kind: 'CreateProcedure', ...base, ifNotExists, name, params, options, body, bodyText: code.image });
    }
    const bs = this.peek().offset;
    const body = this.block();
    return this.stmtEnd({ kind: 'CreateProcedure', ...base, ifNotExists, name, params, options, body, bodyText: this.sql.slice(bs, this.prevEnd()) });
  }

  private createModel(base: { loc: A.Loc; start: number; end: number; orReplace: boolean }): A.CreateModelStmt {
    this.expectKw('MODEL');
    const ifNotExists = this.ifNotExists();
    const name = this.path();
    const s: A.CreateModelStmt = { kind: 'CreateModel', ...base, ifNotExists, name };
    for (;;) {
      if (this.acceptKw('TRANSFORM')) {
        this.expectSym('(');
        s.transform = this.selectList();
        this.expectSym(')');
      } else if (this.acceptKw('INPUT')) s.inputColumns = this.columnDefList();
      else if (this.acceptKw('OUTPUT')) s.outputColumns = this.columnDefList();
      else if (this.acceptKw('REMOTE')) {
        this.expectKw('WITH');
        this.expectKw('CONNECTION');
        s.remoteConnection = this.connectionName();
      } else if (this.isKw('OPTIONS')) s.options = this.optionsList();
      else if (this.acceptKw('AS')) {
        s.query = this.query();
      } else break;
    }
    return this.stmtEnd(s);
  }

  private createRowAccessPolicy(base: { loc: A.Loc; start: number; end: number; orReplace: boolean }): A.CreateRowAccessPolicyStmt {
    this.expectKw('ROW');
    this.expectKw('ACCESS');
    this.expectKw('POLICY');
    const ifNotExists = this.ifNotExists();
    const name = this.ident();
    this.expectKw('ON');
    const table = this.path();
    const grantTo: A.Expr[] = [];
    if (this.acceptKw('GRANT')) {
      this.expectKw('TO');
      this.expectSym('(');
      grantTo.push(...this.exprList());
      this.expectSym(')');
    }
    this.expectKw('FILTER');
    this.expectKw('USING');
    this.expectSym('(');
    const filter = this.expr();
    this.expectSym(')');
    return this.stmtEnd({ kind: 'CreateRowAccessPolicy', ...base, ifNotExists, name, table, grantTo, filter });
  }

  private dropStatement(): A.DropStmt {
    const t = this.expectKw('DROP');
    const k = this.next();
    let objectType: A.DropObjectType;
    switch (k.upper) {
      case 'TABLE':
        objectType = this.acceptKw('FUNCTION') ? 'TABLE FUNCTION' : 'TABLE';
        break;
      case 'EXTERNAL':
        this.expectKw('TABLE');
        objectType = 'EXTERNAL TABLE';
        break;
      case 'SNAPSHOT':
        this.expectKw('TABLE');
        objectType = 'SNAPSHOT TABLE';
        break;
      case 'VIEW':
        objectType = 'VIEW';
        break;
      case 'MATERIALIZED':
        this.expectKw('VIEW');
        objectType = 'MATERIALIZED VIEW';
        break;
      case 'SCHEMA':
      case 'DATABASE':
        objectType = 'SCHEMA';
        break;
      case 'FUNCTION':
        objectType = 'FUNCTION';
        break;
      case 'AGGREGATE':
        this.expectKw('FUNCTION');
        objectType = 'AGGREGATE FUNCTION';
        break;
      case 'PROCEDURE':
        objectType = 'PROCEDURE';
        break;
      case 'MODEL':
        objectType = 'MODEL';
        break;
      case 'ROW':
        this.expectKw('ACCESS');
        this.expectKw('POLICY');
        objectType = 'ROW ACCESS POLICY';
        break;
      case 'ALL':
        this.expectKw('ROW');
        this.expectKw('ACCESS');
        this.expectKw('POLICIES');
        objectType = 'ALL ROW ACCESS POLICIES';
        break;
      case 'SEARCH':
      case 'VECTOR':
        this.expectKw('INDEX');
        objectType = k.upper === 'SEARCH' ? 'SEARCH INDEX' : 'VECTOR INDEX';
        break;
      default:
        this.pos--;
        return this.fail(k);
    }
    const ifExists = this.ifExists();
    const name = objectType === 'ALL ROW ACCESS POLICIES' ? [] : this.path();
    const s: A.DropStmt = { kind: 'Drop', loc: this.loc(t), start: t.offset, end: 0, objectType, ifExists, name };
    if (this.acceptKw('ON')) s.on = this.path();
    if (this.isKw('CASCADE') || this.isKw('RESTRICT')) s.mode = this.next().upper as 'CASCADE' | 'RESTRICT';
    return this.stmtEnd(s);
  }

  private alterStatement(): A.AlterStmt {
    const t = this.expectKw('ALTER');
    const k = this.next();
    let objectType: A.AlterStmt['objectType'];
    switch (k.upper) {
      case 'TABLE':
      case 'VIEW':
      case 'SCHEMA':
      case 'FUNCTION':
      case 'PROCEDURE':
      case 'MODEL':
        objectType = k.upper;
        break;
      case 'DATABASE':
        objectType = 'SCHEMA';
        break;
      case 'MATERIALIZED':
        this.expectKw('VIEW');
        objectType = 'MATERIALIZED VIEW';
        break;
      default:
        this.pos--;
        return this.fail(k);
    }
    const ifExists = this.ifExists();
    const name = this.path();
    const actions: A.AlterAction[] = [];
    do actions.push(this.alterAction());
    while (this.acceptSym(','));
    return this.stmtEnd({ kind: 'Alter', loc: this.loc(t), start: t.offset, end: 0, objectType, ifExists, name, actions });
  }

  private alterAction(): A.AlterAction {
    const t = this.peek();
    const loc = this.loc(t);
    if (this.acceptKw('ADD')) {
      if (this.acceptKw('COLUMN')) {
        const ifNotExists = this.ifNotExists();
        return { kind: 'AddColumn', loc, ifNotExists, column: this.columnDef() };
      }
      const ifNotExists = false;
      const c = this.tableConstraint();
      if (!c) this.fail(this.peek(), 'keyword COLUMN');
      return { kind: 'AddConstraint', loc, constraint: c, ifNotExists };
    }
    if (this.acceptKw('DROP')) {
      if (this.acceptKw('COLUMN')) {
        const ifExists = this.ifExists();
        return { kind: 'DropColumn', loc, ifExists, name: this.ident() };
      }
      if (this.isKw('PRIMARY')) {
        this.next();
        this.expectKw('KEY');
        const ifExists = this.ifExists();
        return { kind: 'DropConstraint', loc, ifExists, name: '', primaryKey: true };
      }
      this.expectKw('CONSTRAINT');
      const ifExists = this.ifExists();
      return { kind: 'DropConstraint', loc, ifExists, name: this.ident(), primaryKey: false };
    }
    if (this.acceptKw('RENAME')) {
      if (this.acceptKw('TO')) return { kind: 'RenameTo', loc, name: this.path() };
      this.expectKw('COLUMN');
      const ifExists = this.ifExists();
      const from = this.ident();
      this.expectKw('TO');
      return { kind: 'RenameColumn', loc, ifExists, from, to: this.ident() };
    }
    if (this.acceptKw('SET')) {
      if (this.isKw('DEFAULT')) {
        this.next();
        this.expectKw('COLLATE');
        return { kind: 'SetDefaultCollate', loc, collation: this.stringLit() };
      }
      return { kind: 'SetOptions', loc, options: this.optionsList() };
    }
    if (this.acceptKw('ALTER')) {
      this.expectKw('COLUMN');
      const ifExists = this.ifExists();
      const name = this.ident();
      let action: A.AlterColumnAction;
      if (this.acceptKw('SET')) {
        if (this.acceptKw('DATA')) {
          this.expectKw('TYPE');
          action = { kind: 'SetDataType', type: this.type(true) };
        } else if (this.acceptKw('DEFAULT')) action = { kind: 'SetDefault', expr: this.expr() };
        else action = { kind: 'SetOptions', options: this.optionsList() };
      } else {
        this.expectKw('DROP');
        if (this.acceptKw('DEFAULT')) action = { kind: 'DropDefault' };
        else {
          this.expectKw('NOT');
          this.expectKw('NULL');
          action = { kind: 'DropNotNull' };
        }
      }
      return { kind: 'AlterColumn', loc, ifExists, name, action };
    }
    return this.fail(t);
  }

  private insertStatement(): A.InsertStmt {
    const t = this.expectKw('INSERT');
    let insertMode: A.InsertStmt['insertMode'];
    if (this.isKw('OR') && (this.isKw('IGNORE', 1) || this.isKw('REPLACE', 1) || this.isKw('UPDATE', 1))) this.next();
    if ((this.isKw('IGNORE') || this.isKw('REPLACE') || this.isKw('UPDATE')) && (this.isIdent(1) || this.isKw('INTO', 1)))
      insertMode = this.next().upper as A.InsertStmt['insertMode'];
    this.acceptKw('INTO');
    const target = this.path();
    const s: A.InsertStmt = { kind: 'Insert', loc: this.loc(t), start: t.offset, end: 0, target };
    if (insertMode) s.insertMode = insertMode;
    if (this.isSym('(') && !this.startsQuery(1)) {
      this.next();
      s.columns = this.identList();
      this.expectSym(')');
    }
    if (this.acceptKw('VALUES')) {
      s.values = [];
      do {
        this.expectSym('(');
        s.values.push(this.exprList());
        this.expectSym(')');
      } while (this.acceptSym(','));
    } else if (this.startsQuery()) {
      s.query = this.query();
    } else this.fail(this.peek());
    this.dmlTail(s);
    return this.stmtEnd(s);
  }

  private dmlTail(s: { assertRowsModified?: A.Expr; returning?: A.SelectItem[] }): void {
    if (this.acceptKw('ASSERT_ROWS_MODIFIED')) s.assertRowsModified = this.expr();
    if (this.isKw('THEN') && this.isKw('RETURN', 1)) {
      this.next();
      this.next();
      if (this.isKw('WITH') && this.isKw('ACTION', 1)) {
        this.next();
        this.next();
        if (this.acceptKw('AS')) this.ident();
      }
      s.returning = this.selectList();
    }
  }

  private dmlAlias(): string | undefined {
    if (this.acceptKw('AS')) return this.ident();
    if (this.isIdent()) return this.identName(this.next());
    return undefined;
  }

  private updateItems(nested?: A.NestedDmlItem[]): A.UpdateItem[] {
    const out: A.UpdateItem[] = [];
    let position = 0;
    do {
      if (nested && this.isSym('(') && (this.isKw('DELETE', 1) || this.isKw('UPDATE', 1) || this.isKw('INSERT', 1))) {
        this.next();
        nested.push({ stmt: this.nestedDml(), position: position++ });
        this.expectSym(')');
        continue;
      }
      const target = this.postfixExpr();
      this.expectSym('=');
      out.push({ target, value: this.expr() });
      position++;
    } while (this.acceptSym(','));
    return out;
  }

  private nestedDml(): A.InsertStmt | A.UpdateStmt | A.DeleteStmt {
    if (this.isKw('INSERT')) return this.insertStatement();
    const t = this.next();
    const target = this.path();
    const alias = this.isIdent() ? this.identName(this.next()) : this.isKw('AS') ? (this.next(), this.ident()) : undefined;
    const withOffset = this.withOffset();
    if (t.upper === 'DELETE') {
      const s: A.DeleteStmt = { kind: 'Delete', loc: this.loc(t), start: t.offset, end: 0, target, withOffset };
      if (this.acceptKw('WHERE')) s.where = this.expr();
      this.dmlTail(s);
      return this.stmtEnd(s);
    }
    this.expectKw('SET');
    const nestedDml: A.NestedDmlItem[] = [];
    const set = this.updateItems(nestedDml);
    const s: A.UpdateStmt = { kind: 'Update', loc: this.loc(t), start: t.offset, end: 0, target, alias, set, withOffset };
    if (nestedDml.length) s.nestedDml = nestedDml;
    if (this.acceptKw('WHERE')) s.where = this.expr();
    this.dmlTail(s);
    return this.stmtEnd(s);
  }

  private updateStatement(): A.UpdateStmt {
    const t = this.expectKw('UPDATE');
    const target = this.path();
    const alias = this.dmlAlias();
    this.expectKw('SET');
    const nestedDml: A.NestedDmlItem[] = [];
    const set = this.updateItems(nestedDml);
    const s: A.UpdateStmt = { kind: 'Update', loc: this.loc(t), start: t.offset, end: 0, target, alias, set };
    if (nestedDml.length) s.nestedDml = nestedDml;
    if (this.acceptKw('FROM')) s.from = this.fromClause();
    if (this.acceptKw('WHERE')) s.where = this.expr();
    this.dmlTail(s);
    return this.stmtEnd(s);
  }

  private deleteStatement(): A.DeleteStmt {
    const t = this.expectKw('DELETE');
    this.acceptKw('FROM');
    const target = this.path();
    const alias = this.dmlAlias();
    const s: A.DeleteStmt = { kind: 'Delete', loc: this.loc(t), start: t.offset, end: 0, target, alias };
    if (this.acceptKw('WHERE')) s.where = this.expr();
    this.dmlTail(s);
    return this.stmtEnd(s);
  }

  private mergeStatement(): A.MergeStmt {
    const t = this.expectKw('MERGE');
    this.acceptKw('INTO');
    const target = this.path();
    const alias = this.dmlAlias();
    this.expectKw('USING');
    const source = this.tablePrimary();
    this.expectKw('ON');
    const on = this.expr();
    const clauses: A.MergeClause[] = [];
    while (this.acceptKw('WHEN')) {
      let match: A.MergeClause['match'];
      if (this.acceptKw('MATCHED')) match = 'MATCHED';
      else {
        this.expectKw('NOT');
        this.expectKw('MATCHED');
        match = 'NOT MATCHED BY TARGET';
        if (this.acceptKw('BY')) {
          if (this.acceptKw('SOURCE')) match = 'NOT MATCHED BY SOURCE';
          else this.expectKw('TARGET');
        }
      }
      const condition = this.acceptKw('AND') ? this.expr() : undefined;
      this.expectKw('THEN');
      let action: A.MergeAction;
      if (this.acceptKw('UPDATE')) {
        this.expectKw('SET');
        action = { kind: 'MergeUpdate', set: this.updateItems() };
      } else if (this.acceptKw('DELETE')) action = { kind: 'MergeDelete' };
      else if (this.acceptKw('INSERT')) {
        let columns: string[] | undefined;
        if (this.acceptSym('(')) {
          columns = this.identList();
          this.expectSym(')');
        }
        if (this.acceptKw('ROW')) action = { kind: 'MergeInsert', columns, row: true };
        else {
          this.expectKw('VALUES');
          this.expectSym('(');
          const values = this.exprList();
          this.expectSym(')');
          action = { kind: 'MergeInsert', columns, values, row: false };
        }
      } else return this.fail(this.peek());
      clauses.push({ match, condition, action });
    }
    return this.stmtEnd({ kind: 'Merge', loc: this.loc(t), start: t.offset, end: 0, target, alias, source, on, clauses });
  }

  private exportData(): A.ExportDataStmt {
    const t = this.expectKw('EXPORT');
    this.expectKw('DATA');
    const s: A.ExportDataStmt = { kind: 'ExportData', loc: this.loc(t), start: t.offset, end: 0, query: undefined as unknown as A.Query };
    if (this.isKw('WITH') && this.isKw('CONNECTION', 1)) {
      this.next();
      this.next();
      s.connection = this.connectionName();
    }
    if (this.isKw('OPTIONS')) s.options = this.optionsList();
    this.expectKw('AS');
    s.query = this.query();
    return this.stmtEnd(s);
  }

  private loadData(): A.LoadDataStmt {
    const t = this.expectKw('LOAD');
    this.expectKw('DATA');
    let overwrite = false;
    if (this.acceptKw('OVERWRITE')) overwrite = true;
    else this.expectKw('INTO');
    const temp = this.acceptKw('TEMP') || this.acceptKw('TEMPORARY');
    if (temp) this.acceptKw('TABLE');
    const name = this.path();
    const s: A.LoadDataStmt = { kind: 'LoadData', loc: this.loc(t), start: t.offset, end: 0, overwrite, temp, name, fromFilesOptions: [] };
    if (this.isSym('(')) s.columns = this.columnDefList();
    for (;;) {
      if (this.isKw('PARTITION')) {
        this.next();
        this.expectKw('BY');
        s.partitionBy = this.expr();
      } else if (this.isKw('CLUSTER')) {
        this.next();
        this.expectKw('BY');
        s.clusterBy = this.exprList();
      } else if (this.isKw('OPTIONS')) s.options = this.optionsList();
      else if (this.acceptKw('FROM')) {
        this.expectKw('FILES');
        this.expectSym('(');
        const opts: A.OptionEntry[] = [];
        do {
          const n = this.identAfterDot();
          this.expectSym('=');
          opts.push({ name: n, value: this.expr() });
        } while (this.acceptSym(','));
        this.expectSym(')');
        s.fromFilesOptions = opts;
      } else if (this.isKw('WITH') && this.isKw('PARTITION', 1)) {
        this.next();
        this.next();
        this.expectKw('COLUMNS');
        s.withPartitionColumns = this.isSym('(') ? this.columnDefList() : [];
      } else if (this.isKw('WITH') && this.isKw('CONNECTION', 1)) {
        this.next();
        this.next();
        s.withConnection = this.connectionName();
      } else break;
    }
    return this.stmtEnd(s);
  }

  private grantStatement(): A.GrantStmt {
    const t = this.next();
    const revoke = t.upper === 'REVOKE';
    const roles: string[] = [];
    do {
      const r = this.peek();
      if (r.type === T.String) roles.push(this.stringLit());
      else roles.push(this.path().join('.'));
    } while (this.acceptSym(','));
    this.expectKw('ON');
    const resourceType = this.next().upper;
    const resource = this.path();
    if (revoke) this.expectKw('FROM');
    else this.expectKw('TO');
    const grantees = this.exprList();
    return this.stmtEnd({ kind: 'Grant', loc: this.loc(t), start: t.offset, end: 0, revoke, roles, resourceType, resource, grantees });
  }

  // -------------------------------------------------------------------------
  // Types
  // -------------------------------------------------------------------------

  /** columnOpts: allow NOT NULL / OPTIONS / COLLATE on nested STRUCT fields (DDL). */
  private type(columnOpts = false): A.TypeNode {
    const t = this.peek();
    if (t.type !== T.Word && t.type !== T.QuotedIdent) this.fail(t, 'type');
    const u = t.upper;
    const loc = this.loc(t);
    if (u === 'ARRAY') {
      this.next();
      this.expectSym('<');
      const element = this.type(columnOpts);
      this.expectSym('>');
      return { kind: 'ArrayType', loc, element };
    }
    if (u === 'STRUCT') {
      this.next();
      if (this.acceptSym('<>')) return { kind: 'StructType', loc, fields: [] };
      return this.structTypeBody(loc, columnOpts);
    }
    if (u === 'RANGE') {
      this.next();
      this.expectSym('<');
      const element = this.type();
      this.expectSym('>');
      return { kind: 'RangeType', loc, element };
    }
    if (u === 'ANY' && this.isKw('TYPE', 1)) {
      this.next();
      this.next();
      return { kind: 'AnyType', loc };
    }
    if (u === 'ANY' && this.isKw('TABLE', 1)) {
      this.next();
      this.next();
      return { kind: 'AnyTableType', loc };
    }
    if (u === 'TABLE' && this.isSym('<', 1)) {
      this.next();
      this.next();
      const columns: { name: string; type: A.TypeNode }[] = [];
      do {
        const n = this.ident();
        columns.push({ name: n, type: this.type() });
      } while (this.acceptSym(','));
      this.expectSym('>');
      return { kind: 'TableType', loc, columns };
    }
    if (t.type === T.Word && RESERVED.has(u) && u !== 'INTERVAL') this.fail(t, 'type');
    this.next();
    let name = t.type === T.QuotedIdent ? this.identName(t) : u;
    // Qualified type names (proto/enum) keep their dotted path.
    while (this.isSym('.') && this.isPathPart(1)) {
      this.next();
      name += '.' + this.identAfterDot();
    }
    const node: A.ScalarTypeNode = { kind: 'ScalarType', loc, name, params: [] };
    if (this.isSym('(')) {
      this.next();
      do {
        const p = this.next();
        if (p.type === T.Word && p.upper === 'MAX') node.params.push('MAX');
        else if (p.type === T.Int || p.type === T.Word) node.params.push(p.image);
        else if (p.type === T.Symbol && p.image === '-' && this.peek().type === T.Int) node.params.push('-' + this.next().image);
        else {
          this.pos--;
          this.fail(p, 'integer literal');
        }
      } while (this.acceptSym(','));
      this.expectSym(')');
    }
    if (this.isKw('COLLATE') && this.peek(1).type === T.String) {
      this.next();
      node.collate = this.stringLit();
    }
    return node;
  }

  private structTypeBody(loc: A.Loc, columnOpts: boolean): A.StructTypeNode {
    this.expectSym('<');
    const fields: A.StructFieldType[] = [];
    if (!this.isSym('>')) {
      do {
        let name: string | undefined;
        // `name TYPE` vs anonymous `TYPE`: a field name is followed by another word.
        const n1 = this.peek(1);
        if (this.isIdent() && (n1.type === T.Word || n1.type === T.QuotedIdent)) name = this.identName(this.next());
        const type = this.type(columnOpts);
        const f: A.StructFieldType = { name, type };
        if (type.kind === 'ScalarType' && type.collate) f.collate = type.collate;
        if (columnOpts) {
          for (;;) {
            if (this.isKw('NOT') && this.isKw('NULL', 1)) {
              this.next();
              this.next();
              f.notNull = true;
            } else if (this.isKw('OPTIONS')) f.options = this.optionsList();
            else if (this.acceptKw('COLLATE')) f.collate = this.stringLit();
            else break;
          }
        }
        fields.push(f);
      } while (this.acceptSym(','));
    }
    this.expectSym('>');
    return { kind: 'StructType', loc, fields };
  }

  // -------------------------------------------------------------------------
  // Queries
  // -------------------------------------------------------------------------

  query(): A.Query {
    const t = this.peek();
    let withClause: A.WithClause | undefined;
    if (this.isKw('WITH')) withClause = this.withClause();
    const body = this.setExpr();
    const q: A.Query = { kind: 'Query', loc: this.loc(t), with: withClause, body, pipes: [] };
    this.orderLimit(q);
    while (this.isSym('|>')) q.pipes.push(this.pipeOp());
    return q;
  }

  private orderLimit(q: A.Query): void {
    if (this.isKw('ORDER')) {
      this.next();
      this.expectKw('BY');
      q.orderBy = this.orderByList();
    }
    if (this.acceptKw('LIMIT')) {
      if (this.acceptKw('ALL')) q.limitAll = true;
      else q.limit = this.expr();
      if (this.acceptKw('OFFSET')) q.offset = this.expr();
    }
  }

  private withClause(): A.WithClause {
    const t = this.expectKw('WITH');
    const recursive = this.acceptKw('RECURSIVE');
    const ctes: A.Cte[] = [];
    do {
      const ct = this.peek();
      const name = this.ident();
      this.expectKw('AS');
      this.expectSym('(');
      const query = this.query();
      this.expectSym(')');
      const cte: A.Cte = { kind: 'Cte', loc: this.loc(ct), name, query };
      if (this.isKw('WITH') && this.isKw('DEPTH', 1)) {
        this.next();
        this.next();
        const depth: NonNullable<A.Cte['depth']> = {};
        if (this.acceptKw('AS')) depth.alias = this.ident();
        else if (this.isIdent() && !this.isKw('BETWEEN') && !this.isKw('MAX')) depth.alias = this.ident();
        if (this.acceptKw('BETWEEN')) {
          depth.min = this.bitOr();
          this.expectKw('AND');
          depth.max = this.bitOr();
        } else if (this.acceptKw('MAX')) depth.max = this.bitOr();
        cte.depth = depth;
      }
      ctes.push(cte);
    } while (this.acceptSym(',') && !this.isKw('SELECT'));
    return { kind: 'WithClause', loc: this.loc(t), recursive, ctes };
  }

  private setOpHead(): boolean {
    const t = this.peek();
    if (t.type !== T.Word) return false;
    if (t.upper === 'UNION' || t.upper === 'INTERSECT' || t.upper === 'EXCEPT') return true;
    if (t.upper === 'FULL' || t.upper === 'LEFT' || t.upper === 'INNER') {
      let k = 1;
      if (this.isKw('OUTER', k)) k++;
      return this.isKw('UNION', k) || this.isKw('INTERSECT', k) || this.isKw('EXCEPT', k);
    }
    return false;
  }

  private setExpr(): A.QueryExpr {
    let left = this.queryPrimary();
    let firstSig: string | undefined;
    while (this.setOpHead()) {
      const t = this.peek();
      let outerMode: A.SetOperation['outerMode'];
      if (this.isKw('FULL') || this.isKw('LEFT') || this.isKw('INNER')) {
        outerMode = this.next().upper as A.SetOperation['outerMode'];
        this.acceptKw('OUTER');
      }
      const opTok = this.next();
      const op = opTok.upper as A.SetOperation['op'];
      let quantifier: A.SetOperation['quantifier'];
      if (this.acceptKw('ALL')) quantifier = 'ALL';
      else if (this.acceptKw('DISTINCT')) quantifier = 'DISTINCT';
      else this.fail(this.peek(), 'keyword ALL or keyword DISTINCT');
      let corresponding: A.Corresponding | undefined;
      let byName: boolean | undefined;
      const strict = this.isKw('STRICT') && this.isKw('CORRESPONDING', 1) ? (this.next(), true) : false;
      if (this.acceptKw('CORRESPONDING')) {
        corresponding = strict ? { strict } : {};
        if (this.acceptKw('BY')) {
          this.expectSym('(');
          corresponding.by = this.identList();
          this.expectSym(')');
        }
      } else if (this.isKw('BY') && this.isKw('NAME', 1)) {
        this.next();
        this.next();
        byName = true;
        corresponding = {};
        if (this.acceptKw('ON')) {
          this.expectSym('(');
          corresponding.by = this.identList();
          this.expectSym(')');
        }
      }
      const sig = `${outerMode ?? ''} ${op} ${quantifier} ${corresponding ? 'C' + (corresponding.by ?? []).join(',') : ''}`;
      if (firstSig === undefined) firstSig = sig;
      else if (sig !== firstSig) this.failMsg(t, 'Different set operations cannot be used in the same query without using parentheses for grouping');
      const right = this.queryPrimary();
      left = { kind: 'SetOperation', loc: this.loc(t), op, quantifier, outerMode, corresponding, byName, left, right };
    }
    return left;
  }

  private queryPrimary(): A.QueryExpr {
    const t = this.peek();
    if (this.isSym('(')) {
      this.next();
      const q = this.query();
      this.expectSym(')');
      return q;
    }
    if (this.isKw('SELECT')) return this.select();
    if (this.isKw('FROM')) {
      this.next();
      return { kind: 'FromQuery', loc: this.loc(t), from: this.fromClause() };
    }
    return this.fail(t);
  }

  private select(): A.Select {
    const t = this.expectKw('SELECT');
    const s: A.Select = { kind: 'Select', loc: this.loc(t), distinct: false, items: [] };
    if (this.isKw('WITH') && this.isIdent(1)) {
      this.next();
      const name = this.ident().toUpperCase();
      s.withModifier = { name, options: this.isKw('OPTIONS') ? this.optionsList() : undefined };
    }
    if (this.acceptKw('DISTINCT')) s.distinct = true;
    else this.acceptKw('ALL');
    if (this.isKw('AS')) {
      if (this.isKw('STRUCT', 1)) {
        this.next();
        this.next();
        s.asMode = 'STRUCT';
      } else if (this.isKw('VALUE', 1)) {
        this.next();
        this.next();
        s.asMode = 'VALUE';
      }
    }
    s.items = this.selectList();
    if (this.acceptKw('FROM')) s.from = this.fromClause();
    if (this.acceptKw('WHERE')) s.where = this.expr();
    if (this.isKw('GROUP')) s.groupBy = this.groupBy();
    if (this.acceptKw('HAVING')) s.having = this.expr();
    if (this.acceptKw('QUALIFY')) s.qualify = this.expr();
    if (this.isKw('WINDOW')) {
      this.next();
      s.window = this.namedWindows();
    }
    return s;
  }

  private namedWindows(): A.NamedWindow[] {
    const out: A.NamedWindow[] = [];
    do {
      const t = this.peek();
      const name = this.ident();
      this.expectKw('AS');
      let spec: A.WindowSpec;
      if (this.isSym('(')) spec = this.windowSpecParen();
      else {
        const bt = this.peek();
        spec = { kind: 'WindowSpec', loc: this.loc(bt), baseName: this.ident(), partitionBy: [], orderBy: [] };
      }
      out.push({ kind: 'NamedWindow', loc: this.loc(t), name, spec });
    } while (this.acceptSym(','));
    return out;
  }

  private groupBy(): A.GroupBy {
    const t = this.expectKw('GROUP');
    this.expectKw('BY');
    if (this.isKw('ALL') && !this.isSym('(', 1)) {
      this.next();
      return { kind: 'GroupBy', loc: this.loc(t), all: true, items: [] };
    }
    const items: A.GroupingItem[] = [];
    do items.push(this.groupingItem());
    while (this.acceptSym(','));
    return { kind: 'GroupBy', loc: this.loc(t), all: false, items };
  }

  private groupingItem(): A.GroupingItem {
    const t = this.peek();
    if (this.isSym('(') && this.isSym(')', 1)) {
      this.next();
      this.next();
      return { kind: 'EmptyGroupingSet', loc: this.loc(t) };
    }
    if ((this.isKw('ROLLUP') || this.isKw('CUBE')) && this.isSym('(', 1)) {
      this.next();
      this.next();
      const exprs = this.exprList();
      this.expectSym(')');
      return { kind: t.upper === 'ROLLUP' ? 'Rollup' : 'Cube', loc: this.loc(t), exprs };
    }
    if (this.isKw('GROUPING') && this.isKw('SETS', 1)) {
      this.next();
      this.next();
      this.expectSym('(');
      const sets: A.GroupingItem[] = [];
      do sets.push(this.groupingItem());
      while (this.acceptSym(','));
      this.expectSym(')');
      return { kind: 'GroupingSets', loc: this.loc(t), sets };
    }
    return this.expr();
  }

  private clauseEndAfterComma(): boolean {
    const t = this.peek();
    if (t.type === T.EOF) return true;
    if (t.type === T.Symbol) return t.image === ')' || t.image === ';' || t.image === '|>';
    if (t.type !== T.Word) return false;
    return (
      t.upper === 'FROM' ||
      t.upper === 'WHERE' ||
      t.upper === 'GROUP' ||
      t.upper === 'HAVING' ||
      t.upper === 'QUALIFY' ||
      t.upper === 'WINDOW' ||
      t.upper === 'ORDER' ||
      t.upper === 'LIMIT' ||
      t.upper === 'UNION' ||
      t.upper === 'INTERSECT' ||
      t.upper === 'EXCEPT'
    );
  }

  selectList(): A.SelectItem[] {
    const items: A.SelectItem[] = [];
    do {
      if (items.length > 0 && this.clauseEndAfterComma()) break; // trailing comma
      items.push(this.selectItem());
    } while (this.acceptSym(','));
    return items;
  }

  private starModifiers(star: A.SelectStar): A.SelectStar {
    if (this.isKw('EXCEPT') && this.isSym('(', 1)) {
      this.next();
      this.next();
      star.except = this.identList();
      this.expectSym(')');
    }
    if (this.isKw('REPLACE') && this.isSym('(', 1)) {
      this.next();
      this.next();
      star.replace = [];
      do {
        const expr = this.expr();
        this.expectKw('AS');
        star.replace.push({ expr, alias: this.ident() });
      } while (this.acceptSym(','));
      this.expectSym(')');
    }
    return star;
  }

  private selectItem(): A.SelectItem {
    const t = this.peek();
    if (this.acceptSym('*')) return this.starModifiers({ kind: 'SelectStar', loc: this.loc(t) });
    const expr = this.expr();
    if (this.isSym('.') && this.isSym('*', 1)) {
      this.next();
      this.next();
      return this.starModifiers({ kind: 'SelectStar', loc: this.loc(t), qualifier: expr });
    }
    const item: A.SelectExprItem = { kind: 'SelectExpr', loc: this.loc(t), expr };
    if (this.acceptKw('AS')) item.alias = this.ident();
    else if (this.isIdent()) item.alias = this.identName(this.next());
    return item;
  }

  private orderByList(): A.OrderByItem[] {
    const out: A.OrderByItem[] = [];
    do out.push(this.orderByItem());
    while (this.acceptSym(','));
    return out;
  }

  private orderByItem(): A.OrderByItem {
    const t = this.peek();
    const expr = this.expr();
    const item: A.OrderByItem = { kind: 'OrderByItem', loc: this.loc(t), expr };
    if (this.acceptKw('COLLATE')) {
      if (this.peek().type === T.String) item.collate = this.stringLit();
      else item.collateExpr = this.primary();
    }
    if (this.acceptKw('ASC')) item.direction = 'ASC';
    else if (this.acceptKw('DESC')) item.direction = 'DESC';
    if (this.acceptKw('NULLS')) {
      if (this.acceptKw('FIRST')) item.nulls = 'FIRST';
      else {
        this.expectKw('LAST');
        item.nulls = 'LAST';
      }
    }
    return item;
  }

  // FROM ----------------------------------------------------------------------

  fromClause(): A.FromItem {
    let left = this.tablePrimary();
    for (;;) {
      const t = this.peek();
      if (this.acceptSym(',')) {
        const right = this.tablePrimary();
        left = { kind: 'JoinRef', loc: left.loc, joinType: 'COMMA', natural: false, left, right };
        continue;
      }
      if (t.type === T.Word && JOIN_START.has(t.upper) && !this.setOpHead()) {
        const j = this.joinHead();
        const right = this.tablePrimary();
        const join: A.JoinRef = { kind: 'JoinRef', loc: left.loc, joinType: j.joinType, natural: j.natural, left, right };
        this.joinCondition(join);
        left = join;
        continue;
      }
      return left;
    }
  }

  private joinHead(): { joinType: Exclude<A.JoinType, 'COMMA'>; natural: boolean } {
    const natural = this.acceptKw('NATURAL');
    let joinType: Exclude<A.JoinType, 'COMMA'> = 'INNER';
    const t = this.peek();
    if (this.acceptKw('CROSS')) joinType = 'CROSS';
    else if (this.acceptKw('INNER')) joinType = 'INNER';
    else if (this.isKw('LEFT') || this.isKw('RIGHT') || this.isKw('FULL')) {
      joinType = this.next().upper as 'LEFT' | 'RIGHT' | 'FULL';
      this.acceptKw('OUTER');
    }
    if (!this.isKw('JOIN')) this.fail(this.peek(), 'keyword JOIN');
    void t;
    this.next();
    return { joinType, natural };
  }

  private joinCondition(j: { on?: A.Expr; using?: string[] }): void {
    if (this.acceptKw('ON')) j.on = this.expr();
    else if (this.acceptKw('USING')) {
      this.expectSym('(');
      j.using = this.identList();
      this.expectSym(')');
    }
  }

  private alias(): string | undefined {
    if (this.acceptKw('AS')) return this.ident();
    if (this.isIdent() && !this.isAliasStop()) return this.identName(this.next());
    return undefined;
  }
  /** Non-reserved words that follow a table/expression and must not be taken as an implicit alias. */
  private isAliasStop(): boolean {
    const t = this.peek();
    if (t.type !== T.Word) return false;
    if ((t.upper === 'PIVOT' || t.upper === 'UNPIVOT') && (this.isSym('(', 1) || this.isKw('INCLUDE', 1) || this.isKw('EXCLUDE', 1))) return true;
    if (t.upper === 'MATCH_RECOGNIZE' && this.isSym('(', 1)) return true;
    return false;
  }

  private tableSample(): A.TableSample | undefined {
    if (!this.acceptKw('TABLESAMPLE')) return undefined;
    const method = this.ident().toUpperCase();
    this.expectSym('(');
    const size = this.expr();
    let unit: 'PERCENT' | 'ROWS' = 'PERCENT';
    if (this.acceptKw('ROWS')) unit = 'ROWS';
    else this.expectKw('PERCENT');
    const sample: A.TableSample = { method, size, unit };
    if (this.isKw('PARTITION')) {
      this.next();
      this.expectKw('BY');
      sample.partitionBy = this.exprList();
    }
    this.expectSym(')');
    if (this.isKw('REPEATABLE') && this.isSym('(', 1)) {
      this.next();
      this.next();
      sample.repeatable = this.expr();
      this.expectSym(')');
    }
    if (this.isKw('WITH') && this.isKw('WEIGHT', 1)) {
      this.next();
      this.next();
      sample.withWeight = { alias: this.alias() };
    }
    return sample;
  }

  private withOffset(): { alias?: string } | undefined {
    if (this.isKw('WITH') && this.isKw('OFFSET', 1)) {
      this.next();
      this.next();
      return { alias: this.alias() };
    }
    return undefined;
  }

  private tablePrimary(): A.FromItem {
    if (this.isKw('LATERAL')) {
      this.next();
      const item = this.tablePrimary();
      item.lateral = true;
      return item;
    }
    const t = this.peek();
    let item: A.FromItem;
    if (this.isSym('(')) {
      if (this.startsQuery(1) && !this.isSym('(', 1)) {
        // `(SELECT ...` is always a subquery: parse without backtracking for precise errors.
        this.next();
        const q = this.query();
        this.expectSym(')');
        const sq: A.SubqueryRef = { kind: 'SubqueryRef', loc: this.loc(t), query: q };
        sq.alias = this.alias();
        return this.fromPostfix(sq);
      }
      if (this.startsQuery(1)) {
        const q = this.speculate(() => {
          this.next();
          const q = this.query();
          this.expectSym(')');
          return q;
        });
        if (q) {
          const sq: A.SubqueryRef = { kind: 'SubqueryRef', loc: this.loc(t), query: q };
          sq.alias = this.alias();
          item = sq;
          return this.fromPostfix(item);
        }
      }
      this.next();
      item = this.fromClause();
      this.expectSym(')');
      return this.fromPostfix(item);
    }
    if (this.isKw('UNNEST')) {
      this.next();
      this.expectSym('(');
      const exprs: A.Expr[] = [];
      const aliases: (string | undefined)[] = [];
      let mode: A.Expr | undefined;
      do {
        if (this.isKw('MODE') && this.isSym('=>', 1)) {
          this.next();
          this.next();
          mode = this.expr();
          continue;
        }
        exprs.push(this.expr());
        aliases.push(this.acceptKw('AS') ? this.ident() : undefined);
      } while (this.acceptSym(','));
      this.expectSym(')');
      const u: A.UnnestRef = { kind: 'UnnestRef', loc: this.loc(t), exprs };
      if (aliases.some((a) => a !== undefined)) u.exprAliases = aliases;
      if (mode) u.mode = mode;
      u.alias = this.alias();
      u.withOffset = this.withOffset();
      return this.fromPostfix(u);
    }
    if (!this.isIdent()) this.fail(t);
    const path = this.path();
    if (this.isSym('(')) {
      // Table-valued function call.
      this.next();
      const args: (A.Expr | A.TableArg | A.ModelArg | A.Query)[] = [];
      if (!this.isSym(')')) {
        do args.push(this.tvfArg());
        while (this.acceptSym(','));
      }
      this.expectSym(')');
      const tvf: A.TvfRef = { kind: 'TvfRef', loc: this.loc(t), name: path, args };
      tvf.alias = this.alias();
      return this.fromPostfix(tvf);
    }
    const tr: A.TableRef = { kind: 'TableRef', loc: this.loc(t), path };
    for (;;) {
      const st = this.systemTime();
      if (st) {
        tr.systemTime = st;
        continue;
      }
      if (tr.alias === undefined) {
        const a = this.alias();
        if (a !== undefined) {
          tr.alias = a;
          continue;
        }
      }
      break;
    }
    tr.withOffset = this.withOffset();
    return this.fromPostfix(tr);
  }

  private tvfArg(): A.Expr | A.TableArg | A.ModelArg | A.Query {
    const t = this.peek();
    if (this.isKw('TABLE') && (this.isIdent(1) || this.peek(1).type === T.Word)) {
      this.next();
      return { kind: 'TableArg', loc: this.loc(t), path: this.path() };
    }
    if (this.isKw('MODEL') && this.isIdent(1)) {
      this.next();
      return { kind: 'ModelArg', loc: this.loc(t), path: this.path() };
    }
    if (this.startsQuery() && !this.isSym('(')) return this.query();
    return this.functionArg();
  }

  private fromPostfix(item: A.FromItem): A.FromItem {
    for (;;) {
      if (this.isKw('TABLESAMPLE')) {
        const s = this.tableSample();
        if (item.kind === 'TableRef' || item.kind === 'UnnestRef' || item.kind === 'SubqueryRef' || item.kind === 'TvfRef') item.sample = s;
        continue;
      }
      if (this.isKw('PIVOT') && this.isSym('(', 1)) {
        const t = this.next();
        const p = this.pivotBody();
        item = { kind: 'PivotRef', loc: this.loc(t), input: item, ...p, alias: this.alias() };
        continue;
      }
      if (this.isKw('MATCH_RECOGNIZE') && this.isSym('(', 1)) {
        const t = this.next();
        if (item.matchRecognize) this.fail(t);
        const spec = this.matchRecognizeBody();
        item.matchRecognize = { loc: this.loc(t), spec, alias: this.alias() };
        continue;
      }
      if (this.isKw('UNPIVOT') && (this.isSym('(', 1) || this.isKw('INCLUDE', 1) || this.isKw('EXCLUDE', 1))) {
        const t = this.next();
        const u = this.unpivotBody();
        item = { kind: 'UnpivotRef', loc: this.loc(t), input: item, ...u, alias: this.alias() };
        continue;
      }
      return item;
    }
  }

  private aliasedExprList(): A.AliasedExpr[] {
    const out: A.AliasedExpr[] = [];
    do {
      const expr = this.expr();
      out.push({ expr, alias: this.alias() });
    } while (this.acceptSym(','));
    return out;
  }

  private pivotBody(): { aggregates: A.AliasedExpr[]; forExpr: A.Expr; inValues: A.AliasedExpr[] } {
    this.expectSym('(');
    const aggregates = this.aliasedExprList();
    this.expectKw('FOR');
    const forExpr = this.postfixExpr();
    this.expectKw('IN');
    this.expectSym('(');
    const inValues = this.aliasedExprList();
    this.expectSym(')');
    this.expectSym(')');
    return { aggregates, forExpr, inValues };
  }

  private unpivotBody(): { nulls?: 'INCLUDE' | 'EXCLUDE'; valueColumns: string[]; nameColumn: string; inColumns: A.UnpivotColumnSet[] } {
    let nulls: 'INCLUDE' | 'EXCLUDE' | undefined;
    if (this.isKw('INCLUDE') || this.isKw('EXCLUDE')) {
      nulls = this.next().upper as 'INCLUDE' | 'EXCLUDE';
      this.expectKw('NULLS');
    }
    this.expectSym('(');
    let valueColumns: string[];
    if (this.acceptSym('(')) {
      valueColumns = this.identList();
      this.expectSym(')');
    } else valueColumns = [this.ident()];
    this.expectKw('FOR');
    const nameColumn = this.ident();
    this.expectKw('IN');
    this.expectSym('(');
    const inColumns: A.UnpivotColumnSet[] = [];
    do {
      let columns: string[];
      if (this.acceptSym('(')) {
        columns = this.identList();
        this.expectSym(')');
      } else columns = [this.path().join('.')];
      let alias: A.Expr | undefined;
      if (this.acceptKw('AS') || this.peek().type === T.String || this.peek().type === T.Int) alias = this.primary();
      inColumns.push({ columns, alias });
    } while (this.acceptSym(','));
    this.expectSym(')');
    this.expectSym(')');
    return { nulls, valueColumns, nameColumn, inColumns };
  }

  // MATCH_RECOGNIZE -------------------------------------------------------------

  private matchRecognizeBody(): A.MatchRecognizeSpec {
    this.expectSym('(');
    const spec: A.MatchRecognizeSpec = { partitionBy: [], orderBy: [], measures: [], pattern: undefined as unknown as A.RowPattern, define: [] };
    if (this.isKw('PARTITION')) {
      this.next();
      this.expectKw('BY');
      spec.partitionBy = this.exprList();
    }
    this.expectKw('ORDER');
    this.expectKw('BY');
    spec.orderBy = this.orderByList();
    this.expectKw('MEASURES');
    do {
      const expr = this.expr();
      this.expectKw('AS');
      spec.measures.push({ expr, alias: this.ident() });
    } while (this.acceptSym(','));
    if (this.acceptKw('AFTER')) {
      this.expectKw('MATCH');
      this.expectKw('SKIP');
      if (this.acceptKw('PAST')) {
        this.expectKw('LAST');
        this.expectKw('ROW');
        spec.afterMatchSkip = 'PAST LAST ROW';
      } else {
        this.expectKw('TO');
        this.expectKw('NEXT');
        this.expectKw('ROW');
        spec.afterMatchSkip = 'TO NEXT ROW';
      }
    }
    this.expectKw('PATTERN');
    this.expectSym('(');
    spec.pattern = this.rowPatternAlt();
    this.expectSym(')');
    this.expectKw('DEFINE');
    do {
      const name = this.ident();
      this.expectKw('AS');
      spec.define.push({ name, expr: this.expr() });
    } while (this.acceptSym(','));
    if (this.isKw('OPTIONS')) spec.options = this.optionsList();
    this.expectSym(')');
    return spec;
  }

  private rowPatternAlt(): A.RowPattern {
    const t = this.peek();
    const alts = [this.rowPatternSeq()];
    while (this.acceptSym('|')) alts.push(this.rowPatternSeq());
    return alts.length === 1 ? alts[0]! : { kind: 'PatternAlt', loc: this.loc(t), alternatives: alts };
  }

  private rowPatternSeq(): A.RowPattern {
    const t = this.peek();
    const items: A.RowPattern[] = [];
    for (;;) {
      const p = this.peek();
      let prim: A.RowPattern;
      if (this.isIdent()) prim = { kind: 'PatternVar', loc: this.loc(p), name: this.identName(this.next()) };
      else if (this.isSym('^') || this.isSym('$')) prim = { kind: 'PatternAnchor', loc: this.loc(p), anchor: this.next().image as '^' | '$' };
      else if (this.isSym('(')) {
        this.next();
        prim = this.isSym(')') ? { kind: 'PatternEmpty', loc: this.loc(p) } : this.rowPatternAlt();
        this.expectSym(')');
      } else break;
      items.push(this.rowPatternQuantifiers(prim));
    }
    if (items.length === 0) return { kind: 'PatternEmpty', loc: this.loc(t) };
    return items.length === 1 ? items[0]! : { kind: 'PatternConcat', loc: this.loc(t), items };
  }

  private rowPatternQuantifiers(prim: A.RowPattern): A.RowPattern {
    for (;;) {
      const q = this.peek();
      let node: Extract<A.RowPattern, { kind: 'PatternQuantified' }>;
      if (this.isSym('*') || this.isSym('+') || this.isSym('?')) {
        this.next();
        node = { kind: 'PatternQuantified', loc: prim.loc, pattern: prim, quantifier: q.image as '*' | '+' | '?', exact: false, reluctant: false };
      } else if (this.isSym('{')) {
        this.next();
        node = { kind: 'PatternQuantified', loc: prim.loc, pattern: prim, quantifier: '{}', exact: false, reluctant: false };
        if (!this.isSym(',')) node.min = this.primary();
        if (this.acceptSym(',')) {
          if (!this.isSym('}')) node.max = this.primary();
        } else {
          node.exact = true;
          node.max = node.min;
        }
        this.expectSym('}');
      } else return prim;
      if (this.acceptSym('?')) node.reluctant = true;
      prim = node;
    }
  }

  // Pipe operators -------------------------------------------------------------

  private pipeOp(): A.PipeOp {
    this.expectSym('|>');
    const t = this.peek();
    const loc = this.loc(t);
    if (t.type !== T.Word) this.fail(t);
    switch (t.upper) {
      case 'WHERE':
        this.next();
        return { kind: 'PipeWhere', loc, cond: this.expr() };
      case 'SELECT': {
        this.next();
        let distinct = false;
        if (this.acceptKw('DISTINCT')) distinct = true;
        else this.acceptKw('ALL');
        let asMode: 'STRUCT' | 'VALUE' | undefined;
        if (this.isKw('AS') && (this.isKw('STRUCT', 1) || this.isKw('VALUE', 1))) {
          this.next();
          asMode = this.next().upper as 'STRUCT' | 'VALUE';
        }
        const items = this.selectList();
        const window = this.isKw('WINDOW') ? (this.next(), this.namedWindows()) : undefined;
        return { kind: 'PipeSelect', loc, distinct, asMode, items, window };
      }
      case 'EXTEND': {
        this.next();
        const items = this.selectList();
        const window = this.isKw('WINDOW') ? (this.next(), this.namedWindows()) : undefined;
        return { kind: 'PipeExtend', loc, items, window };
      }
      case 'WINDOW':
        this.next();
        return { kind: 'PipeWindow', loc, items: this.selectList() };
      case 'SET': {
        this.next();
        const assignments: { column: string[]; expr: A.Expr }[] = [];
        do {
          const column = [this.ident()];
          while (this.acceptSym('.')) column.push(this.identAfterDot());
          this.expectSym('=');
          assignments.push({ column, expr: this.expr() });
        } while (this.acceptSym(','));
        return { kind: 'PipeSet', loc, assignments };
      }
      case 'DROP': {
        this.next();
        const columns: string[][] = [];
        do {
          const c = [this.ident()];
          while (this.acceptSym('.')) c.push(this.identAfterDot());
          columns.push(c);
        } while (this.acceptSym(','));
        return { kind: 'PipeDrop', loc, columns };
      }
      case 'RENAME': {
        this.next();
        const renames: { from: string[]; to: string }[] = [];
        do {
          const from = [this.ident()];
          while (this.acceptSym('.')) from.push(this.identAfterDot());
          this.acceptKw('AS');
          renames.push({ from, to: this.ident() });
        } while (this.acceptSym(','));
        return { kind: 'PipeRename', loc, renames };
      }
      case 'AS':
        this.next();
        return { kind: 'PipeAs', loc, alias: this.ident() };
      case 'AGGREGATE': {
        this.next();
        const items: A.PipeAggregateItem[] = [];
        if (!this.isKw('GROUP')) {
          do {
            if (items.length > 0 && (this.isKw('GROUP') || this.clauseEndAfterComma())) break;
            items.push(this.pipeAggItem());
          } while (this.acceptSym(','));
        }
        const p: A.PipeAggregate = { kind: 'PipeAggregate', loc, items, groupBy: [], groupAndOrder: false };
        if (this.acceptKw('GROUP')) {
          if (this.acceptKw('AND')) {
            this.expectKw('ORDER');
            p.groupAndOrder = true;
          }
          this.expectKw('BY');
          if (this.isKw('ROLLUP') || this.isKw('CUBE') || (this.isKw('GROUPING') && this.isKw('SETS', 1))) {
            p.groupingItems = [];
            do p.groupingItems.push(this.groupingItem());
            while (this.acceptSym(','));
          } else {
            do {
              if (p.groupBy.length > 0 && this.clauseEndAfterComma()) break;
              p.groupBy.push(this.pipeAggItem());
            } while (this.acceptSym(','));
          }
        }
        return p;
      }
      case 'ORDER':
        this.next();
        this.expectKw('BY');
        return { kind: 'PipeOrderBy', loc, items: this.orderByList() };
      case 'LIMIT': {
        this.next();
        const limit = this.expr();
        const offset = this.acceptKw('OFFSET') ? this.expr() : undefined;
        return { kind: 'PipeLimit', loc, limit, offset };
      }
      case 'JOIN':
      case 'INNER':
      case 'LEFT':
      case 'RIGHT':
      case 'FULL':
      case 'CROSS':
      case 'NATURAL': {
        const j = this.joinHead();
        const right = this.tablePrimary();
        const pj: A.PipeJoin = { kind: 'PipeJoin', loc, joinType: j.joinType, natural: j.natural, right };
        this.joinCondition(pj);
        return pj;
      }
      case 'CALL': {
        this.next();
        const ct = this.peek();
        const name = this.path();
        this.expectSym('(');
        const args: (A.Expr | A.TableArg | A.ModelArg | A.Query)[] = [];
        if (!this.isSym(')')) {
          do args.push(this.tvfArg());
          while (this.acceptSym(','));
        }
        this.expectSym(')');
        const tvf: A.TvfRef = { kind: 'TvfRef', loc: this.loc(ct), name, args };
        tvf.alias = this.alias();
        return { kind: 'PipeCall', loc, tvf };
      }
      case 'UNION':
      case 'INTERSECT':
      case 'EXCEPT': {
        this.next();
        let quantifier: 'ALL' | 'DISTINCT';
        if (this.acceptKw('ALL')) quantifier = 'ALL';
        else {
          this.expectKw('DISTINCT');
          quantifier = 'DISTINCT';
        }
        let corresponding: A.Corresponding | undefined;
        let byName: boolean | undefined;
        const strict = this.isKw('STRICT') && this.isKw('CORRESPONDING', 1) ? (this.next(), true) : false;
        if (this.acceptKw('CORRESPONDING')) corresponding = strict ? { strict } : {};
        else if (this.isKw('BY') && this.isKw('NAME', 1)) {
          this.next();
          this.next();
          byName = true;
          corresponding = {};
        }
        const queries: A.Query[] = [];
        do {
          if (queries.length > 0 && !this.isSym('(')) break; // trailing comma
          this.expectSym('(');
          queries.push(this.query());
          this.expectSym(')');
        } while (this.acceptSym(','));
        return { kind: 'PipeSetOp', loc, op: t.upper as 'UNION', quantifier, corresponding, byName, queries };
      }
      case 'PIVOT': {
        this.next();
        const p = this.pivotBody();
        return { kind: 'PipePivot', loc, ...p, alias: this.alias() };
      }
      case 'IF': {
        this.next();
        const branches: { cond: A.Expr; pipes: A.PipeOp[] }[] = [];
        let elsePipes: A.PipeOp[] | undefined;
        const sub = (): A.PipeOp[] => {
          this.expectSym('(');
          const ops: A.PipeOp[] = [];
          while (this.isSym('|>')) ops.push(this.pipeOp());
          this.expectSym(')');
          return ops;
        };
        do {
          const cond = this.expr();
          this.expectKw('THEN');
          branches.push({ cond, pipes: sub() });
        } while (this.acceptKw('ELSEIF'));
        if (this.acceptKw('ELSE')) elsePipes = sub();
        return { kind: 'PipeIf', loc, branches, else: elsePipes };
      }
      case 'MATCH_RECOGNIZE': {
        this.next();
        const spec = this.matchRecognizeBody();
        return { kind: 'PipeMatchRecognize', loc, spec, alias: this.alias() };
      }
      case 'UNPIVOT': {
        this.next();
        const u = this.unpivotBody();
        return { kind: 'PipeUnpivot', loc, ...u, alias: this.alias() };
      }
      case 'TABLESAMPLE':
        return { kind: 'PipeTablesample', loc, sample: this.tableSample()! };
      case 'DISTINCT':
        this.next();
        return { kind: 'PipeDistinct', loc };
      case 'DESCRIBE':
      case 'STATIC_DESCRIBE':
        this.next();
        return { kind: 'PipeDescribe', loc, static: t.upper === 'STATIC_DESCRIBE' };
      case 'WITH': {
        const w = this.withClause();
        return { kind: 'PipeWith', loc, ctes: w.ctes };
      }
      case 'ASSERT': {
        this.next();
        const cond = this.expr();
        const payload: A.Expr[] = [];
        while (this.acceptSym(',')) payload.push(this.expr());
        return { kind: 'PipeAssert', loc, cond, payload };
      }
      default:
        return this.fail(t);
    }
  }

  private pipeAggItem(): A.PipeAggregateItem {
    const expr = this.expr();
    const item: A.PipeAggregateItem = { expr };
    if (this.acceptKw('AS')) item.alias = this.ident();
    else if (this.isIdent()) item.alias = this.identName(this.next());
    if (this.acceptKw('ASC')) item.direction = 'ASC';
    else if (this.acceptKw('DESC')) item.direction = 'DESC';
    if (this.acceptKw('NULLS')) item.nulls = this.acceptKw('FIRST') ? 'FIRST' : (this.expectKw('LAST'), 'LAST');
    return item;
  }

  // -------------------------------------------------------------------------
  // Expressions (precedence climbing, loosest first)
  // -------------------------------------------------------------------------

  expr(): A.Expr {
    let left = this.andExpr();
    while (this.isKw('OR')) {
      this.next();
      const right = this.andExpr();
      left = { kind: 'BinaryExpr', loc: left.loc, op: 'OR', left, right };
    }
    return left;
  }

  private andExpr(): A.Expr {
    let left = this.notExpr();
    while (this.isKw('AND')) {
      this.next();
      const right = this.notExpr();
      left = { kind: 'BinaryExpr', loc: left.loc, op: 'AND', left, right };
    }
    return left;
  }

  private notExpr(): A.Expr {
    if (this.isKw('NOT')) {
      const t = this.next();
      return { kind: 'UnaryExpr', loc: this.loc(t), op: 'NOT', operand: this.notExpr() };
    }
    return this.comparison();
  }

  private comparison(): A.Expr {
    let left = this.bitOr();
    for (;;) {
      const t = this.peek();
      if (t.type === T.Symbol) {
        let op: A.BinaryOp | undefined;
        switch (t.image) {
          case '=':
          case '!=':
          case '<':
          case '>':
          case '<=':
          case '>=':
            op = t.image;
            break;
          case '<>':
            op = '!=';
            break;
        }
        if (!op) return left;
        this.next();
        const right = this.bitOr();
        left = { kind: 'BinaryExpr', loc: left.loc, op, left, right };
        continue;
      }
      if (t.type !== T.Word) return left;
      let not = false;
      let k = 0;
      if (t.upper === 'NOT') {
        const n = this.peek(1);
        if (n.type === T.Word && (n.upper === 'LIKE' || n.upper === 'BETWEEN' || n.upper === 'IN')) {
          not = true;
          k = 1;
        } else return left;
      }
      const kw = this.peek(k).upper;
      if (kw === 'LIKE') {
        this.pos += k + 1;
        left = this.likeRest(left, not);
      } else if (kw === 'BETWEEN') {
        this.pos += k + 1;
        const low = this.bitOr();
        this.expectKw('AND');
        const high = this.bitOr();
        left = { kind: 'BetweenExpr', loc: left.loc, expr: left, not, low, high };
      } else if (kw === 'IN') {
        this.pos += k + 1;
        left = this.inRest(left, not);
      } else if (kw === 'IS') {
        this.next();
        const isNot = this.acceptKw('NOT');
        if (this.acceptKw('DISTINCT')) {
          this.expectKw('FROM');
          const right = this.bitOr();
          left = { kind: 'IsDistinctFromExpr', loc: left.loc, left, right, not: isNot };
        } else {
          const w = this.peek();
          if (w.type === T.Word && (w.upper === 'NULL' || w.upper === 'TRUE' || w.upper === 'FALSE' || w.upper === 'UNKNOWN')) {
            this.next();
            left = { kind: 'IsExpr', loc: left.loc, expr: left, not: isNot, what: w.upper as A.IsExpr['what'] };
          } else this.fail(w);
        }
      } else return left;
    }
  }

  private likeRest(left: A.Expr, not: boolean): A.Expr {
    const q = this.peek();
    if (q.type === T.Word && (q.upper === 'ANY' || q.upper === 'SOME' || q.upper === 'ALL')) {
      this.next();
      const quantifier = q.upper as 'ANY' | 'SOME' | 'ALL';
      const node: A.LikeExpr = { kind: 'LikeExpr', loc: left.loc, expr: left, not, quantifier };
      if (this.isKw('UNNEST')) {
        this.next();
        this.expectSym('(');
        node.unnest = this.expr();
        this.expectSym(')');
        return node;
      }
      this.expectSym('(');
      if (this.startsQuery()) node.query = this.query();
      else node.patterns = this.exprList();
      this.expectSym(')');
      return node;
    }
    return { kind: 'LikeExpr', loc: left.loc, expr: left, not, pattern: this.bitOr() };
  }

  private inRest(left: A.Expr, not: boolean): A.Expr {
    const node: A.InExpr = { kind: 'InExpr', loc: left.loc, expr: left, not };
    if (this.isKw('UNNEST')) {
      this.next();
      this.expectSym('(');
      node.unnest = this.expr();
      this.expectSym(')');
      return node;
    }
    this.expectSym('(');
    if (this.startsQuery() && !this.isSym('(')) {
      // `IN (SELECT ...` is always a subquery: no backtracking, precise errors.
      node.query = this.query();
      this.expectSym(')');
      return node;
    }
    if (this.startsQuery()) {
      const q = this.speculate(() => {
        const q = this.query();
        if (!this.isSym(')')) this.fail(this.peek(), '")"');
        return q;
      });
      if (q) {
        node.query = q;
        this.expectSym(')');
        return node;
      }
    }
    node.list = this.exprList();
    this.expectSym(')');
    return node;
  }

  private bitOr(): A.Expr {
    let left = this.bitXor();
    while (this.isSym('|')) {
      this.next();
      left = { kind: 'BinaryExpr', loc: left.loc, op: '|', left, right: this.bitXor() };
    }
    return left;
  }
  private bitXor(): A.Expr {
    let left = this.bitAnd();
    while (this.isSym('^')) {
      this.next();
      left = { kind: 'BinaryExpr', loc: left.loc, op: '^', left, right: this.bitAnd() };
    }
    return left;
  }
  private bitAnd(): A.Expr {
    let left = this.shift();
    while (this.isSym('&')) {
      this.next();
      left = { kind: 'BinaryExpr', loc: left.loc, op: '&', left, right: this.shift() };
    }
    return left;
  }
  private shift(): A.Expr {
    let left = this.additive();
    for (;;) {
      if (this.isSym('<<') || this.isSym('>>')) {
        const op = this.next().image as '<<' | '>>';
        left = { kind: 'BinaryExpr', loc: left.loc, op, left, right: this.additive() };
      } else return left;
    }
  }
  private additive(): A.Expr {
    let left = this.multiplicative();
    for (;;) {
      if (this.isSym('+') || this.isSym('-')) {
        const op = this.next().image as '+' | '-';
        left = { kind: 'BinaryExpr', loc: left.loc, op, left, right: this.multiplicative() };
      } else return left;
    }
  }
  private multiplicative(): A.Expr {
    let left = this.unary();
    for (;;) {
      if (this.isSym('*') || this.isSym('/') || this.isSym('||')) {
        const op = this.next().image as '*' | '/' | '||';
        left = { kind: 'BinaryExpr', loc: left.loc, op, left, right: this.unary() };
      } else return left;
    }
  }

  private unary(): A.Expr {
    const t = this.peek();
    if (t.type === T.Symbol && (t.image === '-' || t.image === '+' || t.image === '~')) {
      this.next();
      const literalNext = this.peek().type === T.Int || this.peek().type === T.Float;
      const operand = this.unary();
      // Fold `-<number>` into the literal so INT64 min (-9223372036854775808) is representable.
      // Only a literal written right after the minus (not `-(1)`); hex stays a UnaryExpr
      // (`BigInt('-0x1F')` is not valid, so folding would surprise consumers).
      if (t.image === '-' && literalNext && ((operand.kind === 'IntLiteral' && !operand.hex) || operand.kind === 'FloatLiteral') && !operand.text.startsWith('-')) {
        return { ...operand, loc: this.loc(t), text: '-' + operand.text };
      }
      return { kind: 'UnaryExpr', loc: this.loc(t), op: t.image as '-' | '+' | '~', operand };
    }
    return this.postfixExpr();
  }

  /** Primary followed by field access and subscripts. */
  postfixExpr(): A.Expr {
    const parenthesized = this.isSym('(');
    let e = this.primary();
    for (;;) {
      if (this.isSym('.')) {
        if (this.isSym('*', 1)) return e; // `t.*` handled by select item
        // Chained call `(x).f(args)` / `f(x).g()` / `(x).(safe.f)()` = f(x, args) (ZetaSQL).
        // A plain path `a.f(` is a qualified function name, handled in identifierExpr.
        if (this.isSym('(', 1)) {
          let k = 2;
          while (this.isPathPart(k) && this.isSym('.', k + 1)) k += 2;
          if (!(this.isPathPart(k) && this.isSym(')', k + 1) && this.isSym('(', k + 2))) return e;
          this.next();
          this.next();
          const parts = [this.identAfterDot()];
          while (this.acceptSym('.')) parts.push(this.identAfterDot());
          this.expectSym(')');
          e = this.chainedCall(parts, e);
          continue;
        }
        if ((parenthesized || e.kind !== 'PathExpr') && this.isPathPart(1) && this.isSym('(', 2)) {
          this.next();
          e = this.chainedCall([this.identAfterDot()], e);
          continue;
        }
        this.next();
        const field = this.identAfterDot();
        if (e.kind === 'PathExpr') e = { ...e, parts: [...e.parts, field] };
        else e = { kind: 'FieldAccess', loc: e.loc, expr: e, field };
        continue;
      }
      if (this.isSym('[')) {
        this.next();
        let mode: A.SubscriptMode = 'BARE';
        const k = this.peek();
        if (
          k.type === T.Word &&
          (k.upper === 'OFFSET' || k.upper === 'SAFE_OFFSET' || k.upper === 'ORDINAL' || k.upper === 'SAFE_ORDINAL') &&
          this.isSym('(', 1)
        ) {
          this.next();
          this.next();
          mode = k.upper as A.SubscriptMode;
          const index = this.expr();
          this.expectSym(')');
          this.expectSym(']');
          e = { kind: 'Subscript', loc: e.loc, expr: e, index, mode };
        } else {
          const index = this.expr();
          this.expectSym(']');
          e = { kind: 'Subscript', loc: e.loc, expr: e, index, mode };
        }
        continue;
      }
      return e;
    }
  }

  private chainedCall(name: string[], receiver: A.Expr): A.Expr {
    const call = this.functionCall(name, receiver.loc);
    if (call.kind === 'FunctionCall') call.args.unshift(receiver);
    return call;
  }

  private exprList(): A.Expr[] {
    const out: A.Expr[] = [];
    do out.push(this.expr());
    while (this.acceptSym(','));
    return out;
  }

  primary(): A.Expr {
    const t = this.peek();
    const loc = this.loc(t);
    switch (t.type) {
      case T.Int:
        this.next();
        return { kind: 'IntLiteral', loc, text: t.image, hex: false };
      case T.HexInt:
        this.next();
        return { kind: 'IntLiteral', loc, text: t.image, hex: true };
      case T.Float:
        this.next();
        return { kind: 'FloatLiteral', loc, text: t.image };
      case T.String: {
        this.next();
        const d = this.decodeString(t);
        let e: A.Expr;
        if (d.bytes) {
          const value = new Uint8Array(d.value.length);
          for (let i = 0; i < d.value.length; i++) value[i] = d.value.charCodeAt(i);
          e = { kind: 'BytesLiteral', loc, value, raw: d.raw };
        } else e = { kind: 'StringLiteral', loc, value: d.value, raw: d.raw };
        // Adjacent literals of the same kind concatenate ('a' 'b' = 'ab'), as in GoogleSQL.
        let prevEnd = t.end;
        while (this.peek().type === T.String) {
          const n = this.peek();
          if (n.offset === prevEnd) this.failMsg(n, 'concatenated string literals must be separated by whitespace or comments');
          prevEnd = n.end;
          const d2 = this.decodeString(n);
          if (d2.bytes !== d.bytes) this.fail(n);
          this.next();
          if (e.kind === 'StringLiteral') e = { ...e, value: e.value + d2.value };
          else if (e.kind === 'BytesLiteral') {
            const v: Uint8Array = new Uint8Array(e.value.length + d2.value.length);
            v.set(e.value);
            for (let i = 0; i < d2.value.length; i++) v[e.value.length + i] = d2.value.charCodeAt(i);
            e = { ...e, value: v };
          }
        }
        return e;
      }
      case T.QuotedIdent:
        return this.identifierExpr();
      case T.Symbol:
        return this.symbolPrimary(t);
      case T.EOF:
        return this.fail(t);
    }
    // Word
    const u = t.upper;
    switch (u) {
      case 'NULL':
        this.next();
        return { kind: 'NullLiteral', loc };
      case 'TRUE':
      case 'FALSE':
        this.next();
        return { kind: 'BoolLiteral', loc, value: u === 'TRUE' };
      case 'CASE':
        return this.caseExpr();
      case 'CAST':
        return this.castExpr(false);
      case 'EXTRACT':
        return this.extractExpr();
      case 'EXISTS': {
        this.next();
        this.expectSym('(');
        const query = this.query();
        this.expectSym(')');
        return { kind: 'ExistsExpr', loc, query };
      }
      case 'ARRAY':
        return this.arrayExpr();
      case 'STRUCT':
        return this.structExpr();
      case 'INTERVAL': {
        this.next();
        const value = this.expr();
        const part = this.datePart();
        let toPart: string | undefined;
        if (this.acceptKw('TO')) toPart = this.datePart();
        return { kind: 'IntervalExpr', loc, value, part, toPart };
      }
      case 'DEFAULT':
        this.next();
        return { kind: 'DefaultExpr', loc };
      case 'WITH':
        if (this.isSym('(', 1)) return this.withExpr();
        break;
      case 'RANGE':
        if (this.isSym('<', 1)) {
          this.next();
          this.expectSym('<');
          const elementType = this.type();
          this.expectSym('>');
          const st = this.peek();
          if (st.type !== T.String) this.fail(st, 'string literal');
          return { kind: 'RangeLiteral', loc, elementType, value: this.stringLit() };
        }
        break;
    }
    if (u === 'SAFE_CAST' && this.isSym('(', 1)) return this.castExpr(true);
    if (TYPED_LITERAL.has(u) && this.peek(1).type === T.String) {
      this.next();
      return { kind: 'TypedLiteral', loc, typeName: u, value: this.stringLit() };
    }
    if (RESERVED.has(u)) {
      if (RESERVED_FUNCTIONS.has(u) && this.isSym('(', 1)) {
        this.next();
        return this.functionCall([t.image], loc);
      }
      return this.fail(t);
    }
    if (u === 'REPLACE_FIELDS' && this.isSym('(', 1)) return this.replaceFields();
    if (NO_PAREN_FUNCTIONS.has(u) && !this.isSym('(', 1)) {
      this.next();
      return { kind: 'FunctionCall', loc, name: [t.image], safe: false, args: [], distinct: false };
    }
    return this.identifierExpr();
  }

  private symbolPrimary(t: Token): A.Expr {
    const loc = this.loc(t);
    switch (t.image) {
      case '(':
        return this.parenExpr();
      case '[': {
        this.next();
        const elements = this.isSym(']') ? [] : this.exprList();
        this.expectSym(']');
        return { kind: 'ArrayExpr', loc, elements };
      }
      case '@': {
        this.next();
        const n = this.peek();
        if ((n.type !== T.Word && n.type !== T.QuotedIdent) || n.offset !== t.end) this.fail(n);
        this.next();
        return { kind: 'NamedParam', loc, name: this.identName(n) };
      }
      case '@@': {
        this.next();
        const parts = [this.identAfterDot()];
        while (this.isSym('.') && this.isPathPart(1)) {
          this.next();
          parts.push(this.identAfterDot());
        }
        return { kind: 'SystemVariable', loc, parts };
      }
      case '?':
        this.next();
        return { kind: 'PositionalParam', loc, index: this.paramIndex++ };
    }
    return this.fail(t);
  }

  /** `(` ... : subquery, parenthesized expression, or tuple. */
  private parenExpr(): A.Expr {
    const t = this.peek();
    const loc = this.loc(t);
    if (this.startsQuery(1) && !this.isSym('(', 1)) {
      this.next();
      const q = this.query();
      this.expectSym(')');
      return { kind: 'ScalarSubquery', loc, query: q };
    }
    if (this.startsQuery(1)) {
      const q = this.speculate(() => {
        this.next();
        const q = this.query();
        this.expectSym(')');
        return q;
      });
      if (q) return { kind: 'ScalarSubquery', loc, query: q };
    }
    this.next();
    const first = this.expr();
    if (this.acceptSym(',')) {
      const fields: A.StructField[] = [{ expr: first }];
      do fields.push({ expr: this.expr() });
      while (this.acceptSym(','));
      this.expectSym(')');
      return { kind: 'StructExpr', loc, syntax: 'tuple', fields };
    }
    this.expectSym(')');
    return first;
  }

  private identifierExpr(): A.Expr {
    const t = this.peek();
    const loc = this.loc(t);
    const parts = [this.identName(this.next())];
    // Greedily collect `.ident` when followed by `(` — qualified function names.
    if (this.isSym('(')) return this.functionCall(parts, loc);
    let k = 0;
    while (this.isSym('.', k) && this.isPathPart(k + 1)) k += 2;
    if (k > 0 && this.isSym('(', k)) {
      while (this.isSym('.') && this.isPathPart(1)) {
        this.next();
        parts.push(this.identAfterDot());
      }
      return this.functionCall(parts, loc);
    }
    return { kind: 'PathExpr', loc, parts };
  }

  private datePart(): string {
    const t = this.peek();
    if (t.type !== T.Word) this.fail(t);
    this.next();
    return t.upper;
  }

  private caseExpr(): A.Expr {
    const t = this.expectKw('CASE');
    const operand = this.isKw('WHEN') ? undefined : this.expr();
    const whens: { when: A.Expr; then: A.Expr }[] = [];
    while (this.acceptKw('WHEN')) {
      const when = this.expr();
      this.expectKw('THEN');
      whens.push({ when, then: this.expr() });
    }
    if (whens.length === 0) this.fail(this.peek(), 'keyword WHEN');
    const elseExpr = this.acceptKw('ELSE') ? this.expr() : undefined;
    this.expectKw('END');
    return { kind: 'CaseExpr', loc: this.loc(t), operand, whens, else: elseExpr };
  }

  private castExpr(safe: boolean): A.Expr {
    const t = this.next();
    this.expectSym('(');
    const expr = this.expr();
    this.expectKw('AS');
    const type = this.type();
    const node: A.CastExpr = { kind: 'CastExpr', loc: this.loc(t), safe, expr, type };
    if (this.acceptKw('FORMAT')) {
      node.format = this.expr();
      if (this.acceptKw('AT')) {
        this.expectKw('TIME');
        this.expectKw('ZONE');
        node.timeZone = this.expr();
      }
    }
    this.expectSym(')');
    return node;
  }

  private extractExpr(): A.Expr {
    const t = this.next();
    this.expectSym('(');
    const part = this.datePart();
    let weekday: string | undefined;
    if (part === DATE_PARTS_WEEK && this.acceptSym('(')) {
      weekday = this.datePart();
      this.expectSym(')');
    }
    this.expectKw('FROM');
    const expr = this.expr();
    let timeZone: A.Expr | undefined;
    if (this.acceptKw('AT')) {
      this.expectKw('TIME');
      this.expectKw('ZONE');
      timeZone = this.expr();
    }
    this.expectSym(')');
    return { kind: 'ExtractExpr', loc: this.loc(t), part, weekday, expr, timeZone };
  }

  private arrayExpr(): A.Expr {
    const t = this.next();
    const loc = this.loc(t);
    if (this.isSym('(')) {
      this.next();
      const query = this.query();
      this.expectSym(')');
      return { kind: 'ArraySubquery', loc, query };
    }
    let elementType: A.TypeNode | undefined;
    if (this.isSym('<')) {
      this.next();
      elementType = this.type();
      this.expectSym('>');
    }
    this.expectSym('[');
    const elements = this.isSym(']') ? [] : this.exprList();
    this.expectSym(']');
    return { kind: 'ArrayExpr', loc, elementType, elements };
  }

  private structExpr(): A.Expr {
    const t = this.next();
    const loc = this.loc(t);
    let type: A.StructTypeNode | undefined;
    if (this.isSym('<')) type = this.structTypeBody(loc, false);
    if (!type && this.acceptSym('<>')) type = { kind: 'StructType', loc, fields: [] };
    this.expectSym('(');
    const fields: A.StructField[] = [];
    if (!this.isSym(')')) {
      do {
        const expr = this.expr();
        fields.push({ expr, alias: this.acceptKw('AS') ? this.ident() : undefined });
      } while (this.acceptSym(','));
    }
    this.expectSym(')');
    return { kind: 'StructExpr', loc, syntax: 'struct', type, fields };
  }

  private withExpr(): A.Expr {
    const t = this.next();
    this.expectSym('(');
    const vars: { name: string; expr: A.Expr }[] = [];
    while (this.isIdent() && this.isKw('AS', 1)) {
      const name = this.identName(this.next());
      this.next();
      vars.push({ name, expr: this.expr() });
      this.expectSym(',');
    }
    const body = this.expr();
    this.expectSym(')');
    return { kind: 'WithExpr', loc: this.loc(t), vars, body };
  }

  private replaceFields(): A.Expr {
    const t = this.next();
    this.expectSym('(');
    const expr = this.expr();
    const fields: { value: A.Expr; path: string[] }[] = [];
    while (this.acceptSym(',')) {
      const value = this.expr();
      this.expectKw('AS');
      const path = [this.ident()];
      while (this.acceptSym('.')) path.push(this.identAfterDot());
      fields.push({ value, path });
    }
    this.expectSym(')');
    return { kind: 'ReplaceFieldsExpr', loc: this.loc(t), expr, fields };
  }

  /** Lambda `x -> e` / `(x, y) -> e`, named argument `x => e`, or plain expression. */
  private functionArg(): A.Expr {
    const t = this.peek();
    if (this.isIdent() && this.isSym('=>', 1)) {
      const name = this.identName(this.next());
      this.next();
      return { kind: 'NamedArgument', loc: this.loc(t), name, value: this.expr() };
    }
    if (this.isIdent() && this.isSym('->', 1)) {
      const name = this.identName(this.next());
      this.next();
      return { kind: 'LambdaExpr', loc: this.loc(t), params: [name], body: this.expr() };
    }
    if (this.isSym('(')) {
      let k = 1;
      const params: string[] = [];
      let ok = true;
      if (this.isSym(')', k)) k++;
      else {
        for (;;) {
          if (!this.isIdent(k)) {
            ok = false;
            break;
          }
          params.push(this.identName(this.peek(k)));
          k++;
          if (this.isSym(',', k)) k++;
          else if (this.isSym(')', k)) {
            k++;
            break;
          } else {
            ok = false;
            break;
          }
        }
      }
      if (ok && this.isSym('->', k)) {
        this.pos += k + 1;
        return { kind: 'LambdaExpr', loc: this.loc(t), params, body: this.expr() };
      }
    }
    return this.expr();
  }

  private functionCall(name: string[], loc: A.Loc): A.Expr {
    this.expectSym('(');
    let safe = false;
    if (name.length > 1 && name[0]!.toUpperCase() === 'SAFE') {
      safe = true;
      name = name.slice(1);
    }
    const call: A.FunctionCall = { kind: 'FunctionCall', loc, name, safe, args: [], distinct: false };
    if (this.isSym('*') && !this.isSym('.', 1)) {
      const st = this.next();
      call.args.push({ kind: 'StarArg', loc: this.loc(st) });
      this.aggregateModifiers(call);
    } else if (this.isKw('WHERE') || this.isKw('HAVING') || this.isKw('ORDER') || this.isKw('LIMIT')) {
      this.aggregateModifiers(call);
    } else if (!this.isSym(')')) {
      if (this.acceptKw('DISTINCT')) call.distinct = true;
      else if (this.isKw('ALL') && !this.isSym(')', 1) && !this.isSym(',', 1)) this.next();
      do call.args.push(this.functionArg());
      while (this.acceptSym(','));
      this.aggregateModifiers(call);
    }
    this.expectSym(')');
    if (this.isKw('OVER')) {
      this.next();
      if (this.isSym('(')) call.over = this.windowSpecParen();
      else {
        const bt = this.peek();
        call.over = { kind: 'WindowSpec', loc: this.loc(bt), baseName: this.ident(), partitionBy: [], orderBy: [] };
      }
    }
    return call;
  }

  /** Aggregate modifiers after the arguments: [IGNORE|RESPECT NULLS] [WHERE] [HAVING MAX|MIN] [ORDER BY] [LIMIT]. */
  private aggregateModifiers(call: A.FunctionCall): void {
    if (this.isKw('IGNORE') || this.isKw('RESPECT')) {
      call.nullHandling = this.next().upper as 'IGNORE' | 'RESPECT';
      this.expectKw('NULLS');
    }
    if (this.acceptKw('WHERE')) call.where = this.expr();
    if (this.isKw('HAVING')) {
      this.next();
      const m = this.peek();
      if (!(m.type === T.Word && (m.upper === 'MAX' || m.upper === 'MIN'))) this.fail(m, 'keyword MAX or MIN');
      this.next();
      call.having = { kind: m.upper as 'MAX' | 'MIN', expr: this.expr() };
    }
    if (this.isKw('ORDER')) {
      this.next();
      this.expectKw('BY');
      call.orderBy = this.orderByList();
    }
    if (this.acceptKw('LIMIT')) call.limit = this.expr();
  }

  private windowSpecParen(): A.WindowSpec {
    const t = this.expectSym('(');
    const spec: A.WindowSpec = { kind: 'WindowSpec', loc: this.loc(t), partitionBy: [], orderBy: [] };
    if (this.isIdent() && !(this.isKw('PARTITION') || this.isKw('ORDER') || this.isKw('ROWS') || this.isKw('RANGE'))) {
      spec.baseName = this.ident();
    }
    if (this.isKw('PARTITION')) {
      this.next();
      this.expectKw('BY');
      spec.partitionBy = this.exprList();
    }
    if (this.isKw('ORDER')) {
      this.next();
      this.expectKw('BY');
      spec.orderBy = this.orderByList();
    }
    if (this.isKw('ROWS') || this.isKw('RANGE')) {
      const unit = this.next().upper as 'ROWS' | 'RANGE';
      if (this.acceptKw('BETWEEN')) {
        const start = this.frameBound();
        this.expectKw('AND');
        const end = this.frameBound();
        spec.frame = { unit, start, end };
      } else spec.frame = { unit, start: this.frameBound() };
    }
    this.expectSym(')');
    return spec;
  }

  private frameBound(): A.FrameBound {
    if (this.acceptKw('UNBOUNDED')) {
      if (this.acceptKw('PRECEDING')) return { type: 'UNBOUNDED PRECEDING' };
      this.expectKw('FOLLOWING');
      return { type: 'UNBOUNDED FOLLOWING' };
    }
    if (this.isKw('CURRENT') && this.isKw('ROW', 1)) {
      this.next();
      this.next();
      return { type: 'CURRENT ROW' };
    }
    const offset = this.bitOr();
    if (this.acceptKw('PRECEDING')) return { type: 'PRECEDING', offset };
    this.expectKw('FOLLOWING');
    return { type: 'FOLLOWING', offset };
  }
}

// ---------------------------------------------------------------------------
// Public entry points (one reusable parser instance)
// ---------------------------------------------------------------------------

const shared = new Parser();

function wrap<R>(fn: () => R): R {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ParseFail) throw new SqlSyntaxError(e.detail, e.line, e.column);
    // Pathologically deep nesting overflows the descent stack: report, don't crash.
    if (e instanceof RangeError) throw new SqlSyntaxError('Syntax error: Statement is too deeply nested', 1, 1);
    throw e;
  }
}

/** Parse a script (one or more `;`-separated statements). */
export function parseScript(sql: string): A.Script {
  return wrap(() => shared.parseScript(sql));
}

/** Parse exactly one statement (a trailing `;` is allowed). */
export function parseStatement(sql: string): A.Statement {
  return wrap(() => shared.parseStatement(sql));
}

/** Parse a standalone expression (e.g. a column DEFAULT or a view filter). */
export function parseExpression(sql: string): A.Expr {
  return wrap(() => shared.parseExpression(sql));
}

/** Parse a type name like `ARRAY<STRUCT<a INT64>>`. */
export function parseType(sql: string): A.TypeNode {
  return wrap(() => shared.parseType(sql));
}
