// Pipe syntax operators (`|> ...`).
// (GoogleSQL parser layer; grammar/parser/base.ts says how the layers fit.)
import type * as A from '../ast.js';
import { type IToken } from 'chevrotain';
import { S, LP, RP, COMMA, K } from './base.js';
import { QueryParser } from './queries.js';

export abstract class PipeParser extends QueryParser {
  // Pipe operators -------------------------------------------------------------

  private windowClauseOpt = this.RULE('windowClauseOpt', (): A.NamedWindow[] | undefined =>
    this.option(1, () => (this.consume(2, K.WINDOW!), this.subrule(3, this.namedWindows))),
  );


  private pipeSubOps = this.RULE('pipeSubOps', (): A.PipeOp[] => {
    this.consume(1, LP);
    const ops: A.PipeOp[] = [];
    this.many(2, () => ops.push(this.subrule(3, this.pipeOp)));
    this.consume(4, RP);
    return ops;
  });

  protected pipeOp = this.RULE('pipeOp', (): A.PipeOp => {
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

}
