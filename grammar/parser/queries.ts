// Queries: WITH, set operations, SELECT and its clauses.
// (GoogleSQL parser layer; grammar/parser/base.ts says how the layers fit.)
import type * as A from '../ast.js';
import { type ParserMethod } from 'chevrotain';
import { T } from '../lexer.js';
import { EOF } from '../tokens.js';
import { S, LP, RP, COMMA, DOT, K } from './base.js';
import { FromParser } from './from.js';

const CLAUSE_END = new Set(['FROM', 'WHERE', 'GROUP', 'HAVING', 'QUALIFY', 'WINDOW', 'ORDER', 'LIMIT', 'UNION', 'INTERSECT', 'EXCEPT']);

export abstract class QueryParser extends FromParser {
  /** Defined in pipe.ts: a query may end with pipe operators. */
  protected abstract pipeOp: ParserMethod<[], A.PipeOp>;

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
  protected parenQuery = this.RULE('parenQuery', (): A.Query => {
    this.consume(1, LP);
    const q = this.subrule(2, this.query);
    this.consume(3, RP);
    return q;
  });
  protected queryThenRParen = this.RULE('queryThenRParen', (): A.Query => {
    const q = this.subrule(1, this.query);
    this.consume(2, RP);
    return q;
  });

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

  protected withClause = this.RULE('withClause', (): A.WithClause => {
    const t = this.consume(1, K.WITH!);
    const recursive = this.option(2, () => this.consume(3, K.RECURSIVE!)) !== undefined;
    const ctes: A.Cte[] = [this.subrule(4, this.cte)];
    this.many(5, () => {
      this.consume(6, COMMA);
      this.option(7, { GATE: () => !this.isKw('SELECT'), DEF: () => ctes.push(this.subrule(8, this.cte)) });
    });
    return { kind: 'WithClause', loc: this.loc(t), recursive, ctes };
  });

  /**
   * Column propagation mode of a set operation: FULL [OUTER] | LEFT [OUTER] | INNER | OUTER, where OUTER alone is
   * FULL (query-syntax.md "Set operators": BY NAME or CORRESPONDING; the reference grammar has no INNER OUTER).
   */
  protected setOpMode = this.RULE('setOpMode', (): 'FULL' | 'LEFT' | 'INNER' => {
    return this.or(1, [
      { ALT: () => (this.consume(2, K.FULL!), this.option(3, () => this.consume(4, K.OUTER!)), 'FULL' as const) },
      { ALT: () => (this.consume(5, K.LEFT!), this.option(6, () => this.consume(7, K.OUTER!)), 'LEFT' as const) },
      { ALT: () => (this.consume(8, K.INNER!), 'INNER' as const) },
      { ALT: () => (this.consume(9, K.OUTER!), 'FULL' as const) },
    ]);
  });

  /** CORRESPONDING / BY NAME modifiers of a set operation; `on` allows BY NAME ON (cols). */
  protected setOpModifiers = this.RULE('setOpModifiers', (withColumns?: boolean): { corresponding?: A.Corresponding; byName?: boolean } => {
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

  protected namedWindows = this.RULE('namedWindows', (): A.NamedWindow[] => {
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

  protected groupingItem = this.RULE('groupingItem', (): A.GroupingItem => {
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

  protected clauseEndAfterComma(): boolean {
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

}
