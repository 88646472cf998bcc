// BigQuery Graph: CREATE PROPERTY GRAPH, DROP PROPERTY GRAPH's name, GQL queries (`GRAPH g MATCH ... RETURN ...`,
// `GRAPH_TABLE(g ...)`). Pages: reference/standard-sql/graph-schema-statements.md, graph-query-statements.md,
// graph-patterns.md. (GoogleSQL parser layer; grammar/parser/base.ts says how the layers fit.)
import type * as A from '../ast.js';
import { type IToken } from 'chevrotain';
import { AnyWord, IntLit } from '../tokens.js';
import { T } from '../lexer.js';
import { S, LP, RP, COMMA, K } from './base.js';
import { PipeParser } from './pipe.js';

type Base = { loc: A.Loc; start: number; end: number; orReplace: boolean };

/** Words that open a path search prefix or a path mode (graph-patterns.md): parsed, then refused by the analyzer. */
const PATH_PREFIX = new Set(['ANY', 'ALL', 'SHORTEST', 'CHEAPEST', 'WALK', 'TRAIL', 'ACYCLIC', 'SIMPLE', 'PATH', 'PATHS']);

export abstract class GraphParser extends PipeParser {
  /** A contextual word the grammar names (PROPERTY, GRAPH, NODE, LABEL, ...): any word, checked when live. */
  private word(t: IToken, w: string): IToken {
    if (this.live && this.up(t) !== w) this.fail(t, `keyword ${w}`);
    return t;
  }

  // -------------------------------------------------------------------------- CREATE PROPERTY GRAPH

  /** After `CREATE [OR REPLACE]`, at PROPERTY. */
  protected createPropertyGraph = this.RULE('createPropertyGraph', (base?: Base): A.CreatePropertyGraphStmt => {
    this.word(this.consume(1, AnyWord), 'PROPERTY');
    this.word(this.consume(2, AnyWord), 'GRAPH');
    const ifNotExists = this.subrule(3, this.ifNotExists);
    const name = this.subrule(4, this.path);
    this.word(this.consume(5, AnyWord), 'NODE');
    this.word(this.consume(6, AnyWord), 'TABLES');
    const nodeTables = this.subrule(7, this.graphElementList, { ARGS: [false] });
    let edgeTables: A.GraphElementDef[] = [];
    this.option(8, {
      GATE: () => this.isKw('EDGE'),
      DEF: () => {
        this.consume(9, AnyWord);
        this.word(this.consume(10, AnyWord), 'TABLES');
        edgeTables = this.subrule(11, this.graphElementList, { ARGS: [true] });
      },
    });
    return this.stmtEnd<A.CreatePropertyGraphStmt>({ kind: 'CreatePropertyGraph', ...base!, ifNotExists, name, nodeTables, edgeTables });
  });

  private graphElementList = this.RULE('graphElementList', (edge?: boolean): A.GraphElementDef[] => {
    this.consume(1, LP);
    const out = [this.subrule(2, this.graphElement, { ARGS: [edge] })];
    this.many(3, () => (this.consume(4, COMMA), out.push(this.subrule(5, this.graphElement, { ARGS: [edge] }))));
    this.consume(6, RP);
    return out;
  });

  private graphElement = this.RULE('graphElement', (edge?: boolean): A.GraphElementDef => {
    const t = this.la(1);
    const el: A.GraphElementDef = { loc: this.loc(t), table: this.subrule(1, this.path), labels: [] };
    this.option(2, () => (this.consume(3, K.AS!), (el.alias = this.subrule(4, this.ident))));
    this.option(5, { GATE: () => this.isKw('KEY'), DEF: () => (this.consume(6, K.KEY!), (el.key = this.subrule(7, this.parenIdents))) });
    if (this.must(edge === true)) {
      el.source = this.subrule(8, this.graphEndpoint, { ARGS: ['SOURCE'] });
      el.destination = this.subrule(9, this.graphEndpoint, { ARGS: ['DESTINATION'] });
    }
    this.many(10, {
      GATE: () => this.isKw('LABEL') || this.isKw('DEFAULT'),
      DEF: () => {
        const lt = this.la(1);
        const label: A.GraphLabelDef = { loc: this.loc(lt), properties: { kind: 'all' } };
        this.or(11, [
          { ALT: () => (this.consume(12, K.DEFAULT!), this.word(this.consume(13, AnyWord), 'LABEL')) },
          { ALT: () => (this.word(this.consume(14, AnyWord), 'LABEL'), (label.name = this.subrule(15, this.ident))) },
        ]);
        this.option(16, { GATE: () => this.isKw('OPTIONS'), DEF: () => this.subrule(17, this.optionsList) });
        this.option(18, { GATE: () => this.isKw('PROPERTIES') || this.isKw('NO'), DEF: () => (label.properties = this.subrule(19, this.graphProperties)) });
        el.labels.push(label);
      },
    });
    // Properties without a label: those of the default label.
    this.option(20, {
      GATE: () => el.labels.length === 0 && (this.isKw('PROPERTIES') || this.isKw('NO')),
      DEF: () => el.labels.push({ loc: this.loc(this.la(1)), properties: this.subrule(21, this.graphProperties) }),
    });
    return el;
  });

  private parenIdents = this.RULE('parenIdents', (): string[] => {
    this.consume(1, LP);
    const out = this.subrule(2, this.identList);
    this.consume(3, RP);
    return out;
  });

  private graphEndpoint = this.RULE('graphEndpoint', (which?: string): A.GraphEndpointDef => {
    const t = this.word(this.consume(1, AnyWord), which ?? 'SOURCE');
    this.consume(2, K.KEY!);
    const columns = this.subrule(3, this.parenIdents);
    this.consume(4, K.REFERENCES!);
    const ref = this.subrule(5, this.ident);
    const refColumns = this.option(6, () => this.subrule(7, this.parenIdents));
    return { loc: this.loc(t), columns, ref, ...(refColumns ? { refColumns } : {}) };
  });

  private graphProperties = this.RULE('graphProperties', (): A.GraphPropertiesDef =>
    this.or(1, [
      { ALT: (): A.GraphPropertiesDef => (this.consume(2, K.NO!), this.word(this.consume(3, AnyWord), 'PROPERTIES'), { kind: 'none' }) },
      {
        ALT: (): A.GraphPropertiesDef => {
          this.word(this.consume(4, AnyWord), 'PROPERTIES');
          return this.or(5, [
            {
              ALT: (): A.GraphPropertiesDef => {
                this.consume(6, LP);
                const items: { loc: A.Loc; expr: A.Expr; alias?: string }[] = [];
                const item = (i: number) => {
                  const it: { loc: A.Loc; expr: A.Expr; alias?: string } = { loc: this.loc(this.la(1)), expr: this.subrule(i, this.expr) };
                  this.option(i + 1, () => (this.consume(i + 2, K.AS!), (it.alias = this.subrule(i + 3, this.ident))));
                  this.option(i + 4, { GATE: () => this.isKw('OPTIONS'), DEF: () => this.subrule(i + 5, this.optionsList) });
                  items.push(it);
                };
                item(7);
                this.many(13, () => (this.consume(14, COMMA), item(15)));
                this.consume(21, RP);
                return { kind: 'list', items };
              },
            },
            {
              ALT: (): A.GraphPropertiesDef => {
                this.option(22, { GATE: () => this.isKw('ARE'), DEF: () => this.consume(23, AnyWord) });
                this.consume(24, K.ALL!);
                this.word(this.consume(25, AnyWord), 'COLUMNS');
                const except = this.option(26, () => (this.consume(27, K.EXCEPT!), this.subrule(28, this.parenIdents)));
                return except ? { kind: 'all', except } : { kind: 'all' };
              },
            },
          ]);
        },
      },
    ]),
  );

  // -------------------------------------------------------------------------- GQL queries

  /** `GRAPH name` + a multi-linear query statement (graph-query-statements.md, GRAPH clause). */
  protected graphStatementQuery = this.RULE('graphStatementQuery', (): A.GraphQuery => {
    this.word(this.consume(1, AnyWord), 'GRAPH');
    return this.subrule(2, this.graphQueryBody);
  });

  /** `{ GRAPH g ... }`, `{ MATCH ... }` or `{ pattern }` of a graph subquery (graph-subqueries.md). */
  protected graphSubqueryBraces = this.RULE('graphSubqueryBraces', (): A.GraphQuery => {
    const t = this.consume(1, S['{']!);
    const loc = this.loc(t);
    const q = this.or(2, [
      { GATE: () => this.isKw('GRAPH'), ALT: (): A.GraphQuery => this.subrule(3, this.graphStatementQuery) },
      {
        GATE: () => this.isKw('MATCH') || this.isKw('OPTIONAL'),
        ALT: (): A.GraphQuery => {
          const stmts: A.GraphStmt[] = [];
          this.atLeastOne(4, { GATE: () => !this.isSym('}'), DEF: () => stmts.push(this.subrule(5, this.graphStmt)) });
          return { kind: 'GraphQuery', loc, graph: [], noReturn: true, parts: [{ loc, branches: [{ loc, stmts }], ops: [] }] };
        },
      },
      {
        ALT: (): A.GraphQuery => {
          const pattern = this.subrule(6, this.graphPattern);
          return { kind: 'GraphQuery', loc, graph: [], noReturn: true, parts: [{ loc, branches: [{ loc, stmts: [{ kind: 'GMatch', loc, optional: false, pattern }] }], ops: [] }] };
        },
      },
    ]);
    this.consume(7, S['}']!);
    return q;
  });

  /** `name` + a multi-linear query statement: the body of GRAPH_TABLE and of a GRAPH query. */
  protected graphQueryBody = this.RULE('graphQueryBody', (): A.GraphQuery => {
    const t = this.la(1);
    const graph = this.subrule(1, this.path);
    const parts = [this.subrule(2, this.graphLinearQuery)];
    this.many(3, { GATE: () => this.isKw('NEXT'), DEF: () => (this.consume(4, AnyWord), parts.push(this.subrule(5, this.graphLinearQuery))) });
    return { kind: 'GraphQuery', loc: this.loc(t), graph, parts };
  });

  private graphLinearQuery = this.RULE('graphLinearQuery', (): A.GraphLinearQuery => {
    const t = this.la(1);
    const q: A.GraphLinearQuery = { loc: this.loc(t), branches: [this.subrule(1, this.graphSimpleQuery)], ops: [] };
    this.many(2, {
      GATE: () => this.isKw('UNION') || this.isKw('INTERSECT') || this.isKw('EXCEPT'),
      DEF: () => {
        const ot = this.consume(3, AnyWord);
        const qt = this.or(4, [{ ALT: () => this.consume(5, K.ALL!) }, { ALT: () => this.consume(6, K.DISTINCT!) }]);
        q.ops.push({ loc: this.loc(ot), op: this.up(ot) as 'UNION', quantifier: this.up(qt) as 'ALL' });
        q.branches.push(this.subrule(7, this.graphSimpleQuery));
      },
    });
    return q;
  });

  /** Statements up to and including RETURN. */
  private graphSimpleQuery = this.RULE('graphSimpleQuery', (): A.GraphSimpleQuery => {
    const t = this.la(1);
    const stmts: A.GraphStmt[] = [];
    let done = false;
    this.atLeastOne(1, {
      GATE: () => !done,
      DEF: () => {
        const s = this.subrule(2, this.graphStmt);
        stmts.push(s);
        if (this.live && s.kind === 'GReturn') done = true;
      },
    });
    if (this.live && !done) this.fail(this.la(1), 'keyword RETURN');
    return { loc: this.loc(t), stmts };
  });

  private graphStmt = this.RULE('graphStmt', (): A.GraphStmt => {
    const t = this.la(1);
    const loc = this.loc(t);
    return this.or(1, [
      {
        GATE: () => this.isKw('MATCH') || (this.isKw('OPTIONAL') && this.isKw('MATCH', 2)),
        ALT: (): A.GraphStmt => {
          const optional = this.option(2, { GATE: () => this.isKw('OPTIONAL'), DEF: () => (this.consume(3, AnyWord), true) }) === true;
          this.consume(4, K.MATCH!);
          return { kind: 'GMatch', loc, optional, pattern: this.subrule(5, this.graphPattern) };
        },
      },
      {
        ALT: (): A.GraphStmt => {
          this.consume(6, K.FILTER!);
          this.option(7, () => this.consume(8, K.WHERE!));
          return { kind: 'GFilter', loc, cond: this.subrule(9, this.expr) };
        },
      },
      {
        GATE: () => this.isKw('LET'),
        ALT: (): A.GraphStmt => {
          this.consume(10, AnyWord);
          const defs: { loc: A.Loc; name: string; expr: A.Expr }[] = [];
          const def = (i: number) => {
            const dt = this.la(1);
            const name = this.subrule(i, this.ident);
            this.consume(i + 1, S['=']!);
            defs.push({ loc: this.loc(dt), name, expr: this.subrule(i + 2, this.expr) });
          };
          def(11);
          this.many(14, () => (this.consume(15, COMMA), def(16)));
          return { kind: 'GLet', loc, defs };
        },
      },
      {
        ALT: (): A.GraphStmt => {
          this.consume(19, K.FOR!);
          const name = this.subrule(20, this.ident);
          this.consume(21, K.IN!);
          const expr = this.subrule(22, this.expr);
          const s: A.GraphStmt = { kind: 'GFor', loc, name, expr };
          // graph-query-statements.md (FOR): WITH after FOR always begins WITH OFFSET.
          this.option(23, () => {
            this.consume(24, K.WITH!);
            this.consume(25, K.OFFSET!);
            s.offset = this.option(26, () => (this.consume(27, K.AS!), this.subrule(28, this.ident))) ?? 'offset';
          });
          return s;
        },
      },
      { ALT: (): A.GraphStmt => (this.consume(29, K.ORDER!), this.consume(30, K.BY!), { kind: 'GOrderBy', loc, items: this.subrule(31, this.orderByList) }) },
      { ALT: (): A.GraphStmt => (this.consume(32, K.LIMIT!), { kind: 'GLimit', loc, limit: this.subrule(33, this.expr) }) },
      {
        GATE: () => this.isKw('OFFSET') || this.isKw('SKIP'),
        ALT: (): A.GraphStmt => (this.consume(34, AnyWord), { kind: 'GLimit', loc, offset: this.subrule(35, this.expr) }),
      },
      { ALT: (): A.GraphStmt => this.subrule(36, this.graphReturn) },
    ]);
  });

  /** RETURN / WITH [ALL | DISTINCT] items [GROUP BY] [ORDER BY] [OFFSET] [LIMIT]. */
  private graphReturn = this.RULE('graphReturn', (): A.GraphReturn => {
    const t = this.la(1);
    const kind = this.or(1, [{ ALT: () => (this.consume(2, K.RETURN!), 'GReturn' as const) }, { ALT: () => (this.consume(3, K.WITH!), 'GWith' as const) }]);
    const r: A.GraphReturn = { kind, loc: this.loc(t), distinct: false, star: false, items: [] };
    this.option(4, () => this.or(5, [{ ALT: () => (this.consume(6, K.DISTINCT!), (r.distinct = true)) }, { ALT: () => this.consume(7, K.ALL!) }]));
    const item = (i: number) => {
      const it = this.la(1);
      this.or(i, [
        { ALT: () => (this.consume(i + 1, S['*']!), (r.star = true), r.items.push({ kind: 'SelectStar', loc: this.loc(it) })) },
        {
          ALT: () => {
            const x: A.SelectExprItem = { kind: 'SelectExpr', loc: this.loc(it), expr: this.subrule(i + 2, this.expr) };
            this.option(i + 3, () => (this.consume(i + 4, K.AS!), (x.alias = this.subrule(i + 5, this.ident))));
            r.items.push(x);
          },
        },
      ]);
    };
    item(8);
    this.many(14, () => (this.consume(15, COMMA), item(16)));
    this.option(22, () => {
      const gt = this.consume(23, K.GROUP!);
      this.consume(24, K.BY!);
      this.or(25, [
        { GATE: () => this.isKw('ALL'), ALT: () => (this.consume(26, K.ALL!), (r.groupBy = { loc: this.loc(gt), all: true, items: [] })) },
        { ALT: () => (r.groupBy = { loc: this.loc(gt), all: false, items: this.subrule(27, this.exprList) }) },
      ]);
    });
    this.option(28, () => (this.consume(29, K.ORDER!), this.consume(30, K.BY!), (r.orderBy = this.subrule(31, this.orderByList))));
    this.option(32, { GATE: () => this.isKw('OFFSET') || this.isKw('SKIP'), DEF: () => (this.consume(33, AnyWord), (r.offset = this.subrule(34, this.expr))) });
    this.option(35, () => (this.consume(36, K.LIMIT!), (r.limit = this.subrule(37, this.expr))));
    return r;
  });

  /** path_pattern_list [WHERE]. */
  private graphPattern = this.RULE('graphPattern', (): A.GraphPattern => {
    const t = this.la(1);
    const p: A.GraphPattern = { loc: this.loc(t), paths: [this.subrule(1, this.graphPathPattern)] };
    this.many(2, () => (this.consume(3, COMMA), p.paths.push(this.subrule(4, this.graphPathPattern))));
    this.option(5, () => (this.consume(6, K.WHERE!), (p.where = this.subrule(7, this.expr))));
    return p;
  });

  private graphPathPattern = this.RULE('graphPathPattern', (): A.GraphPathPattern => {
    const t = this.la(1);
    const p: A.GraphPathPattern = { loc: this.loc(t), elements: [] };
    this.option(1, { GATE: () => this.isIdent() && this.isSym('=', 2), DEF: () => ((p.variable = this.subrule(2, this.ident)), this.consume(3, S['=']!)) });
    const words: string[] = [];
    this.many(4, {
      GATE: () => (this.la(1).kind === T.Word && PATH_PREFIX.has(this.la(1).upper)) || (words.length > 0 && this.la(1).tokenType === IntLit),
      DEF: () => words.push(this.la(1).tokenType === IntLit ? this.consume(5, IntLit).image : this.up(this.consume(6, AnyWord))),
    });
    if (words.length) p.prefix = words.join(' ');
    this.atLeastOne(7, () => p.elements.push(this.subrule(8, this.graphPathTerm)));
    return p;
  });

  /** A node pattern, an edge pattern or a parenthesized subpath, then an optional quantifier. */
  private graphPathTerm = this.RULE('graphPathTerm', (): A.GraphElementPattern => {
    const t = this.la(1);
    const el = this.or(1, [
      {
        // `((` or `(WALK ...`: a subpath (graph-patterns.md, graph subpath pattern).
        GATE: () => this.isSym('(') && (this.isSym('(', 2) || this.isSym('-', 2) || this.isSym('<', 2) || this.isSym('->', 2) || (this.la(2).kind === T.Word && PATH_PREFIX.has(this.la(2).upper) && !this.isSym(')', 3) && !this.isSym(':', 3))),
        ALT: (): A.GraphElementPattern => {
          this.consume(2, LP);
          const inner = this.subrule(3, this.graphPathPattern);
          const where = this.option(4, () => (this.consume(5, K.WHERE!), this.subrule(6, this.expr)));
          this.consume(7, RP);
          return { kind: 'subpath', loc: this.loc(t), path: inner, ...(where ? { where } : {}) };
        },
      },
      {
        ALT: (): A.GraphElementPattern => {
          this.consume(8, LP);
          const n: A.GraphElementPattern = { kind: 'node', loc: this.loc(t) };
          this.subrule(9, this.graphFiller, { ARGS: [n] });
          this.consume(10, RP);
          return n;
        },
      },
      {
        // `-[ ... ]-`, `-[ ... ]->`, `-`
        ALT: (): A.GraphElementPattern => {
          this.consume(11, S['-']!);
          const e: A.GraphElementPattern = { kind: 'edge', loc: this.loc(t), direction: 'any' };
          this.option(12, () => {
            this.consume(13, S['[']!);
            this.subrule(14, this.graphFiller, { ARGS: [e] });
            this.consume(15, S[']']!);
            this.or(16, [{ ALT: () => this.consume(17, S['-']!) }, { ALT: () => (this.consume(18, S['->']!), (e.direction = 'right')) }]);
          });
          return e;
        },
      },
      { ALT: (): A.GraphElementPattern => (this.consume(19, S['->']!), { kind: 'edge', loc: this.loc(t), direction: 'right' }) },
      {
        // `<-[ ... ]-`, `<-`
        ALT: (): A.GraphElementPattern => {
          this.consume(20, S['<']!);
          this.consume(21, S['-']!);
          const e: A.GraphElementPattern = { kind: 'edge', loc: this.loc(t), direction: 'left' };
          this.option(22, () => {
            this.consume(23, S['[']!);
            this.subrule(24, this.graphFiller, { ARGS: [e] });
            this.consume(25, S[']']!);
            this.consume(26, S['-']!);
          });
          return e;
        },
      },
    ]);
    // Quantifiers: `{m,n}`, `{n}`, `{,n}`, `+`, `*` (graph-patterns.md, quantified path pattern).
    this.option(27, {
      GATE: () => this.isSym('{') || this.isSym('+') || this.isSym('*'),
      DEF: () => {
        const q = this.la(1);
        const parts: string[] = [];
        this.or(28, [
          {
            ALT: () => {
              this.consume(29, S['{']!);
              this.many(30, { GATE: () => !this.isSym('}'), DEF: () => this.or(31, [{ ALT: () => parts.push(this.consume(32, IntLit).image) }, { ALT: () => parts.push(this.consume(33, COMMA).image) }]) });
              this.consume(34, S['}']!);
            },
          },
          { ALT: () => parts.push(this.consume(35, S['+']!).image) },
          { ALT: () => parts.push(this.consume(36, S['*']!).image) },
        ]);
        // fixed_quantifier `{n}`, bounded_quantifier `{[m], n}`; anything else is kept unbounded and refused.
        const text = parts.join('');
        const fixed = /^(\d+)$/.exec(text);
        const bounded = /^(\d*),(\d+)$/.exec(text);
        const bounds = fixed ? { min: Number(fixed[1]), max: Number(fixed[1]) } : bounded ? { min: Number(bounded[1] || '0'), max: Number(bounded[2]) } : {};
        if (this.live) el.quantifier = { loc: this.loc(q), ...bounds };
      },
    });
    return el;
  });

  /** [variable] [IS | : label_expression] [WHERE expr | {props}] [COST expr], filling `el`. */
  private graphFiller = this.RULE('graphFiller', (el?: A.GraphElementPattern): void => {
    const e = el ?? ({} as A.GraphElementPattern);
    this.option(1, { GATE: () => this.isIdent() && !this.isKw('COST'), DEF: () => (e.variable = this.subrule(2, this.ident)) });
    this.option(3, () => {
      this.or(4, [{ ALT: () => this.consume(5, K.IS!) }, { ALT: () => this.consume(6, S[':']!) }]);
      e.label = this.subrule(7, this.graphLabelExpr);
    });
    this.option(8, () =>
      this.or(9, [
        { ALT: () => (this.consume(10, K.WHERE!), (e.where = this.subrule(11, this.expr))) },
        {
          ALT: () => {
            const bt = this.consume(12, S['{']!);
            const props: { loc: A.Loc; name: string; value: A.Expr }[] = [];
            const prop = (i: number) => {
              const pt = this.la(1);
              const name = this.subrule(i, this.ident);
              this.consume(i + 1, S[':']!);
              props.push({ loc: this.loc(pt), name, value: this.subrule(i + 2, this.expr) });
            };
            // graph-patterns.md: an element property filter list can't be empty.
            if (this.live && this.isSym('}')) this.failMsg(bt, 'An element property filter list can not be empty');
            prop(13);
            this.many(16, () => (this.consume(17, COMMA), prop(18)));
            this.consume(21, S['}']!);
            e.props = props;
          },
        },
      ]),
    );
    this.option(22, { GATE: () => this.isKw('COST'), DEF: () => (this.consume(23, AnyWord), (e.cost = this.subrule(24, this.expr))) });
  });

  protected graphLabelExpr = this.RULE('graphLabelExpr', (): A.GraphLabelExpr => {
    const t = this.la(1);
    const items = [this.subrule(1, this.labelAnd)];
    this.many(2, () => (this.consume(3, S['|']!), items.push(this.subrule(4, this.labelAnd))));
    return items.length === 1 ? items[0]! : { kind: 'or', loc: this.loc(t), items };
  });

  private labelAnd = this.RULE('labelAnd', (): A.GraphLabelExpr => {
    const t = this.la(1);
    const items = [this.subrule(1, this.labelUnary)];
    this.many(2, () => (this.consume(3, S['&']!), items.push(this.subrule(4, this.labelUnary))));
    return items.length === 1 ? items[0]! : { kind: 'and', loc: this.loc(t), items };
  });

  /** `!` binds tighter than `&` and `|` (zetasql.tm: unary precedence). */
  private labelUnary = this.RULE('labelUnary', (): A.GraphLabelExpr => {
    const t = this.la(1);
    return this.or(1, [
      { ALT: (): A.GraphLabelExpr => (this.consume(2, S['!']!), { kind: 'not', loc: this.loc(t), item: this.subrule(3, this.labelUnary) }) },
      { ALT: (): A.GraphLabelExpr => this.subrule(4, this.labelPrimary) },
    ]);
  });

  private labelPrimary = this.RULE('labelPrimary', (): A.GraphLabelExpr => {
    const t = this.la(1);
    let x: A.GraphLabelExpr = { kind: 'any', loc: this.loc(t) };
    return this.or(1, [
      { ALT: (): A.GraphLabelExpr => (this.consume(2, S['%']!), { kind: 'any', loc: this.loc(t) }) },
      { ALT: (): A.GraphLabelExpr => (this.consume(3, LP), (x = this.subrule(4, this.graphLabelExpr)), this.consume(6, RP), x) },
      { ALT: (): A.GraphLabelExpr => ({ kind: 'name', loc: this.loc(t), name: this.subrule(5, this.ident) }) },
    ]);
  });
}
