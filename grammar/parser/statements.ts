// Scripts and statements: the statement dispatcher, blocks, control flow,
// DECLARE/SET; the top layer of the GoogleSQL parser (grammar/parser/base.ts),
// which records the whole grammar once every layer's rules exist.
import type * as A from '../ast.js';
import { T } from '../lexer.js';
import { Identifier, EOF } from '../tokens.js';
import { S, LP, RP, COMMA, DOT, K } from './base.js';
import { DmlParser } from './dml.js';

export class GoogleSqlParser extends DmlParser {
  constructor() {
    super();
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
      // graph-query-statements.md: a GQL query, GRAPH name + linear query statements; run as SELECT * FROM its table.
      { GATE: () => this.isKw('GRAPH') && this.isIdent(2), ALT: () => this.subrule(90, this.graphQueryStatement) },
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

  protected block = this.RULE('block', (): A.BlockStmt => {
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

  private graphQueryStatement = this.RULE('graphQueryStatement', (): A.QueryStatement => {
    const t = this.la(1);
    const loc = this.loc(t);
    const graph = this.subrule(1, this.graphStatementQuery);
    if (this.live) graph.topLevel = true;
    const placeholder: A.Query = { kind: 'Query', loc, body: { kind: 'Select', loc, distinct: false, items: [] }, pipes: [] };
    const from: A.SubqueryRef = { kind: 'SubqueryRef', loc, query: placeholder, graph };
    const query: A.Query = { kind: 'Query', loc, body: { kind: 'Select', loc, distinct: false, items: [{ kind: 'SelectStar', loc }], from }, pipes: [] };
    return this.stmtEnd<A.QueryStatement>({ kind: 'QueryStatement', loc, start: t.startOffset, end: 0, query });
  });

  private queryStatement = this.RULE('queryStatement', (): A.QueryStatement => {
    const t = this.la(1);
    const query = this.subrule(1, this.query);
    return this.stmtEnd<A.QueryStatement>({ kind: 'QueryStatement', loc: this.loc(t), start: t.startOffset, end: 0, query });
  });

}
