// FROM items: tables, joins, UNNEST, table-valued function calls, PIVOT/UNPIVOT, TABLESAMPLE, MATCH_RECOGNIZE.
// (GoogleSQL parser layer; grammar/parser/base.ts says how the layers fit.)
import type * as A from '../ast.js';
import { type IToken, type ParserMethod } from 'chevrotain';
import { T } from '../lexer.js';
import { AnyWord } from '../tokens.js';
import { S, LP, RP, COMMA, K } from './base.js';
import { ExpressionParser } from './expressions.js';

/** `item` is a join chain of its own group with at least one JOIN (not only commas) outside nested parentheses. */
function hasOwnJoin(item: A.FromItem, closed: WeakSet<A.FromItem>): boolean {
  const walk = (x: A.FromItem): boolean => x.kind === 'JoinRef' && !closed.has(x) && (x.joinType !== 'COMMA' || walk(x.left) || walk(x.right));
  return walk(item);
}

/** One `JOIN right [ON|USING ...]*` of a FROM chain, as written. */
type JoinStep = { head: { joinType: Exclude<A.JoinType, 'COMMA'>; natural: boolean }; at: IToken; right: A.FromItem; conds: Array<{ on?: A.Expr; using?: string[]; at: IToken }> };

type TvfArg = A.Expr | A.TableArg | A.ModelArg | A.Query;

export abstract class FromParser extends ExpressionParser {
  /** Defined in graph.ts: the graph name and GQL query inside GRAPH_TABLE( ... ). */
  protected abstract graphQueryBody: ParserMethod<[], A.GraphQuery>;
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

  protected joinHead = this.RULE('joinHead', (): { joinType: Exclude<A.JoinType, 'COMMA'>; natural: boolean } => {
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

  protected joinCondition = this.RULE('joinCondition', (): { on?: A.Expr; using?: string[] } =>
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

  protected alias = this.RULE('alias', (): string | undefined =>
    this.option(1, { GATE: () => !this.isAliasStop(), DEF: () => this.subrule(2, this.aliasRequired) }),
  );
  protected aliasRequired = this.RULE('aliasRequired', (): string =>
    this.or(1, [{ ALT: () => (this.consume(2, K.AS!), this.subrule(3, this.ident)) }, { ALT: () => this.subrule(4, this.ident) }]),
  );

  protected tableSample = this.RULE('tableSample', (): A.TableSample => {
    const kw = this.consume(1, K.TABLESAMPLE!);
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
    const sample: A.TableSample = { loc: this.loc(kw), method, size, unit };
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

  protected withOffset = this.RULE('withOffset', (): { alias?: string } => {
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
        // graph-sql-queries.md: GRAPH_TABLE (property_graph_name multi_linear_query_statement) [[AS] alias].
        GATE: () => this.isKw('GRAPH_TABLE') && this.isSym('(', 2),
        ALT: (): A.FromItem => {
          this.consume(90, AnyWord);
          this.consume(91, LP);
          const graph = this.subrule(92, this.graphQueryBody);
          this.consume(93, RP);
          const sq: A.SubqueryRef = { kind: 'SubqueryRef', loc: this.loc(t), query: { kind: 'Query', loc: this.loc(t), body: { kind: 'Select', loc: this.loc(t), distinct: false, items: [] }, pipes: [] }, graph };
          sq.alias = this.subrule(94, this.alias);
          return this.subrule(95, this.fromPostfix, { ARGS: [sq] });
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
  protected tvfArgs = this.RULE('tvfArgs', (): TvfArg[] => {
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
              if (this.live) item.sample = s;
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

  protected pivotBody = this.RULE('pivotBody', (): { aggregates: A.AliasedExpr[]; forExpr: A.Expr; inValues: A.AliasedExpr[] } => {
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

  protected unpivotBody = this.RULE('unpivotBody', (): { nulls?: 'INCLUDE' | 'EXCLUDE'; valueColumns: string[]; nameColumn: string; inColumns: A.UnpivotColumnSet[] } => {
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

  protected matchRecognizeBody = this.RULE('matchRecognizeBody', (): A.MatchRecognizeSpec => {
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

}
