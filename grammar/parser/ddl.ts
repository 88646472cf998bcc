// DDL: CREATE, DROP, ALTER of every object kind.
// (GoogleSQL parser layer; grammar/parser/base.ts says how the layers fit.)
import type * as A from '../ast.js';
import { type IToken, type ParserMethod } from 'chevrotain';
import { T } from '../lexer.js';
import { SqlSyntaxError } from '../errors.js';
import { AnyWord, StringLit } from '../tokens.js';
import { S, LP, RP, COMMA, K } from './base.js';
import { GraphParser } from './graph.js';

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

type Base = { loc: A.Loc; start: number; end: number; orReplace: boolean };

export abstract class DdlParser extends GraphParser {
  /** Defined in statements.ts: a procedure's body is a block. */
  protected abstract block: ParserMethod<[], A.BlockStmt>;

  // -------------------------------------------------------------------------
  // DDL
  // -------------------------------------------------------------------------

  protected createStatement = this.RULE('createStatement', (): A.Statement => {
    const t = this.consume(1, K.CREATE!);
    const orReplace = this.option(2, () => (this.consume(3, K.OR!), this.consume(4, K.REPLACE!), true)) === true;
    const tempTok = this.option(5, () => this.or(6, [{ ALT: () => this.consume(7, K.TEMP!) }, { ALT: () => this.consume(8, K.TEMPORARY!) }]));
    const temp = tempTok !== undefined;
    const base: Base = { loc: this.loc(t), start: t.startOffset, end: 0, orReplace };
    const st = this.or(9, [
      { GATE: () => this.isKw('PROPERTY') && this.isKw('GRAPH', 2), ALT: () => this.subrule(90, this.createPropertyGraph, { ARGS: [base] }) },
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
          // data-definition-language: CREATE SEARCH INDEX has no OR REPLACE form (CREATE VECTOR INDEX has).
          if (this.live && base?.orReplace && this.up(k) === 'SEARCH') throw new SqlSyntaxError('Syntax error: CREATE SEARCH INDEX does not take OR REPLACE', k.startLine!, k.startColumn!);
          this.consume(49, K.INDEX!);
          const ifNotExists = this.subrule(50, this.ifNotExists);
          const name = this.subrule(51, this.path);
          this.consume(52, K.ON!);
          const table = this.subrule(53, this.path);
          this.consume(54, LP);
          // ALL COLUMNS [WITH COLUMN OPTIONS (column [, ...])] | column [, ...]; column: name [OPTIONS(...)].
          const list: { all: boolean; cols: A.IndexColumn[] } = this.or(55, [
            {
              GATE: () => this.isKw('COLUMNS', 2),
              ALT: () => {
                this.consume(56, K.ALL!);
                this.consume(57, K.COLUMNS!);
                const withOptions = this.option(67, () => {
                  this.consume(68, K.WITH!);
                  this.consume(69, K.COLUMN!);
                  this.consume(70, K.OPTIONS!);
                  this.consume(71, LP);
                  const c = this.subrule(72, this.indexColumns);
                  this.consume(73, RP);
                  return c;
                });
                return { all: true, cols: withOptions ?? [] };
              },
            },
            { ALT: () => ({ all: false, cols: this.subrule(58, this.indexColumns) }) },
          ]);
          // (The recording phase gives placeholders, not lists.)
          const columns = this.live && !list.all ? list.cols.map((c) => c.name) : undefined;
          const withOpts = this.live ? list.cols.filter((c) => c.options) : [];
          const columnOptions = withOpts.length ? withOpts : undefined;
          this.consume(59, RP);
          const storing = this.option(60, () => {
            this.consume(61, K.STORING!);
            this.consume(62, LP);
            const s = this.subrule(63, this.identList);
            this.consume(64, RP);
            return s;
          });
          // CREATE VECTOR INDEX ... [PARTITION BY partition_expression] (checked in the planner: TREE_AH, as the table).
          const partitionBy = this.option(74, () => {
            this.consume(75, K.PARTITION!);
            this.consume(76, K.BY!);
            return this.subrule(77, this.expr);
          });
          const options = this.option(65, () => this.subrule(66, this.optionsList));
          return this.stmtEnd<A.CreateIndexStmt>({ kind: 'CreateIndex', ...base, ifNotExists, indexType: this.up(k) as 'SEARCH' | 'VECTOR', name, table, columns, ...(columnOptions ? { columnOptions } : {}), storing, ...(partitionBy ? { partitionBy } : {}), options });
        },
      },
    ]);
    if (this.live && tempTok) {
      const form = tempForm(st);
      if (form) throw new SqlSyntaxError(`Syntax error: CREATE ${form} does not take ${this.up(tempTok)}`, tempTok.startLine!, tempTok.startColumn!);
    }
    return st;
  });

  /** CREATE SEARCH INDEX's columns: `column_name [OPTIONS(index_column_option_list)]`, comma separated. */
  private indexColumns = this.RULE('indexColumns', (): A.IndexColumn[] => {
    const out = [this.subrule(1, this.indexColumn)];
    this.many(2, () => {
      this.consume(3, COMMA);
      out.push(this.subrule(4, this.indexColumn));
    });
    return out;
  });

  private indexColumn = this.RULE('indexColumn', (): A.IndexColumn => {
    const t = this.la(1);
    const name = this.subrule(1, this.ident);
    const options = this.option(2, () => this.subrule(3, this.optionsList));
    return { name, loc: this.loc(t), ...(options ? { options } : {}) };
  });

  protected columnDefList = this.RULE('columnDefList', (): A.ColumnDef[] => {
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

  protected dropStatement = this.RULE('dropStatement', (): A.DropStmt => {
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
      // graph-schema-statements.md: DROP PROPERTY GRAPH [IF EXISTS] name.
      { GATE: () => this.isKw('PROPERTY') && this.isKw('GRAPH', 2), ALT: (): A.DropObjectType => (this.consume(52, AnyWord), this.consume(53, AnyWord), 'PROPERTY GRAPH') },
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

  protected alterStatement = this.RULE('alterStatement', (): A.AlterStmt => {
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

}
