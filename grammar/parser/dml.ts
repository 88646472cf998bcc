// DML (INSERT, UPDATE, DELETE, MERGE) and the other data statements: EXPORT DATA, LOAD DATA, GRANT/REVOKE.
// (GoogleSQL parser layer; grammar/parser/base.ts says how the layers fit.)
import type * as A from '../ast.js';
import { SqlSyntaxError } from '../errors.js';
import { AnyWord } from '../tokens.js';
import { S, LP, RP, COMMA, K } from './base.js';
import { DdlParser } from './ddl.js';

export abstract class DmlParser extends DdlParser {
  // -------------------------------------------------------------------------
  // DML and other statements
  // -------------------------------------------------------------------------

  protected insertStatement = this.RULE('insertStatement', (): A.InsertStmt => {
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

  protected updateStatement = this.RULE('updateStatement', (): A.UpdateStmt => {
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

  protected deleteStatement = this.RULE('deleteStatement', (): A.DeleteStmt => {
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

  protected mergeStatement = this.RULE('mergeStatement', (): A.MergeStmt => {
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

  protected exportData = this.RULE('exportData', (): A.ExportDataStmt => {
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

  protected loadData = this.RULE('loadData', (): A.LoadDataStmt => {
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

  protected grantStatement = this.RULE('grantStatement', (): A.GrantStmt => {
    const t = this.or(1, [{ ALT: () => this.consume(2, K.GRANT!) }, { ALT: () => this.consume(3, K.REVOKE!) }]);
    const revoke = this.up(t) === 'REVOKE';
    const roles = [this.subrule(4, this.grantRole)];
    this.many(5, () => {
      this.consume(6, COMMA);
      roles.push(this.subrule(7, this.grantRole));
    });
    this.consume(8, K.ON!);
    let resourceType = this.up(this.consume(9, AnyWord));
    // `EXTERNAL TABLE` is the one two-word resource type (data-control-language.md).
    this.option(15, { GATE: () => resourceType === 'EXTERNAL', DEF: () => { this.consume(16, K.TABLE!); resourceType = 'EXTERNAL TABLE'; } });
    const resource = this.subrule(10, this.path);
    this.or(11, [
      { GATE: () => revoke, ALT: () => this.consume(12, K.FROM!) },
      { GATE: () => !revoke, ALT: () => this.consume(13, K.TO!) },
    ]);
    const grantees = this.subrule(14, this.exprList);
    return this.stmtEnd<A.GrantStmt>({ kind: 'Grant', loc: this.loc(t), start: t.startOffset, end: 0, revoke, roles, resourceType, resource, grantees });
  });

}
