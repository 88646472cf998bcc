// Types and expressions: one rule per precedence level, loosest first.
// (GoogleSQL parser layer; grammar/parser/base.ts says how the layers fit.)
import type * as A from '../ast.js';
import { type IOrAlt, type IToken, type ParserMethod } from 'chevrotain';
import { T, RESERVED } from '../lexer.js';
import { Identifier, AnyWord, QuotedIdent, StringLit, IntLit, HexIntLit, FloatLit, EOF } from '../tokens.js';
import { S, LP, RP, COMMA, DOT, K, ParserBase } from './base.js';

const TYPED_LITERAL = new Set(['DATE', 'TIME', 'DATETIME', 'TIMESTAMP', 'NUMERIC', 'BIGNUMERIC', 'DECIMAL', 'BIGDECIMAL', 'JSON']);

// Reserved words that are nonetheless callable as functions: IF(...), LEFT(s, n), ...
const RESERVED_FUNCTIONS = ['IF', 'LEFT', 'RIGHT', 'RANGE', 'COLLATE', 'GROUPING'];

const NO_PAREN_FUNCTIONS = new Set(['CURRENT_DATE', 'CURRENT_TIME', 'CURRENT_DATETIME', 'CURRENT_TIMESTAMP']);


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


/** Tokens that would continue a comparison: after one, a syntax error ("Unexpected ..."). */
const COMPARISON_NEXT = ['=', '!=', '<>', '<', '>', '<=', '>=', 'LIKE', 'BETWEEN', 'IN', 'IS', 'NOT'];

export abstract class ExpressionParser extends ParserBase {
  /** Defined in graph.ts: a label expression (`IS LABELED`). */
  protected abstract graphLabelExpr: ParserMethod<[], A.GraphLabelExpr>;
  /** Defined in graph.ts: `{ ... }` of a graph subquery (EXISTS / VALUE / ARRAY / IN). */
  protected abstract graphSubqueryBraces: ParserMethod<[], A.GraphQuery>;
  /** Defined in queries.ts: expressions hold subqueries. */
  protected abstract query: ParserMethod<[], A.Query>;
  protected abstract parenQuery: ParserMethod<[], A.Query>;
  protected abstract queryThenRParen: ParserMethod<[], A.Query>;

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
                  // graph-operators.md / graph-patterns.md: `element IS [NOT] LABELED label_expression`.
                  GATE: () => this.isKw('LABELED'),
                  ALT: () => {
                    this.consume(36, AnyWord);
                    const label = this.subrule(37, this.graphLabelExpr);
                    left = { kind: 'GraphIsLabeled', loc: left.loc, expr: left, not: isNot, label };
                  },
                },
                {
                  // graph-operators.md: `node IS [NOT] SOURCE [OF] edge`, `node IS [NOT] DESTINATION [OF] edge`.
                  GATE: () => this.isKw('SOURCE') || this.isKw('DESTINATION'),
                  ALT: () => {
                    const w = this.consume(38, AnyWord);
                    this.option(39, () => this.consume(40, K.OF!));
                    const edge = this.subrule(41, this.bitOr);
                    left = { kind: 'GraphIsEndpoint', loc: left.loc, node: left, not: isNot, which: this.up(w) === 'SOURCE' ? 'SOURCE' : 'DESTINATION', edge };
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
    // graph-subqueries.md: value [NOT] IN { GRAPH g ... }.
    const graph = this.option(90, { GATE: () => unnest === undefined && this.isSym('{'), DEF: () => this.subrule(91, this.graphSubqueryBraces) });
    if (graph !== undefined && this.live) return { kind: 'GraphSubquery', loc: node.loc, mode: 'IN', query: graph, value: left!, not: !!not };
    if (this.must(unnest === undefined && graph === undefined)) {
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

  protected bitOr = this.RULE('bitOr', (): A.Expr => {
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

  /**
   * The text of a typed literal (DATE '...', NUMERIC '...', RANGE<T> '...'): string chunks concatenate here too
   * (lexical.md, String and bytes literals: `DATE '2014' "-01-01"`); bytes chunks are no text.
   */
  /**
   * The text of a typed literal (DATE '...', NUMERIC '...', RANGE<T> '...'): string chunks concatenate here too
   * (lexical.md, String and bytes literals: `DATE '2014' "-01-01"`); bytes are no text.
   */
  private literalText = this.RULE('literalText', (): string => {
    const first = this.la(1);
    const e = this.subrule(1, this.concatStrings);
    if (!this.live) return '';
    if (e.kind !== 'StringLiteral') this.fail(first);
    return e.value;
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
          // graph-subqueries.md: EXISTS { graph query | MATCH ... | graph pattern }.
          const graph = this.option(90, () => this.subrule(91, this.graphSubqueryBraces));
          if (graph !== undefined && this.live) return { kind: 'GraphSubquery', loc, mode: 'EXISTS', query: graph };
          let query = graph as unknown as A.Query;
          if (this.must(graph === undefined)) {
            this.consume(28, LP);
            query = this.subrule(29, this.query);
            this.consume(30, RP);
          }
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
                return { kind: 'RangeLiteral', loc, elementType, value: this.subrule(46, this.literalText) };
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
        // graph-subqueries.md: VALUE { GRAPH g ... }.
        GATE: () => this.isKw('VALUE') && this.isSym('{', 2),
        ALT: (): A.Expr => {
          const loc = this.here();
          this.consume(90, K.VALUE!);
          return { kind: 'GraphSubquery', loc, mode: 'VALUE', query: this.subrule(91, this.graphSubqueryBraces) };
        },
      },
      {
        GATE: () => this.isKw('SAFE_CAST') && this.isSym('(', 2),
        ALT: (): A.Expr => this.subrule(2, this.castBody, { ARGS: [this.consume(8, K.SAFE_CAST!)] }),
      },
      {
        GATE: () => TYPED_LITERAL.has(this.la(1).upper) && this.isType(T.String, 2),
        ALT: (): A.Expr => {
          const loc = this.here();
          const w = this.consume(3, Identifier);
          return { kind: 'TypedLiteral', loc, typeName: this.up(w), value: this.subrule(4, this.literalText) };
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
    // graph-subqueries.md: ARRAY { GRAPH g ... }.
    const graph = this.option(90, () => this.subrule(91, this.graphSubqueryBraces));
    if (graph !== undefined && this.live) return { kind: 'GraphSubquery', loc, mode: 'ARRAY', query: graph };
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
  protected functionArg = this.RULE('functionArg', (): A.Expr => {
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

  protected windowSpecParen = this.RULE('windowSpecParen', (): A.WindowSpec => {
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

  // ORDER BY items: of queries, aggregate calls, windows and pipe operators


  protected orderByList = this.RULE('orderByList', (): A.OrderByItem[] => {
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

  protected columnPath = this.RULE('columnPath', (): string[] => {
    const c = [this.subrule(1, this.ident)];
    this.many(2, () => (this.consume(3, DOT), c.push(this.subrule(4, this.identAfterDot))));
    return c;
  });
}
