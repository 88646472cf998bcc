// Typed AST for GoogleSQL (BigQuery dialect).
//
// Conventions (see grammar/README.md):
// - Every node is discriminated on `kind` and carries `loc` = 1-based line/column
//   (and 0-based char offset) of its first token.
// - Names are kept as written (case preserved); keywords used as names are given
//   their source spelling. Multi-part names are `string[]` of RAW parts: a
//   backtick-quoted `my-project.ds.t` stays ONE part "my-project.ds.t"; the
//   analyzer splits quoted parts on dots. Unquoted dashed names (my-project.ds.t)
//   are joined into "my-project".
// - Numeric literals keep their source text; the analyzer picks INT64/NUMERIC/...
// - Statements additionally carry `start`/`end` char offsets (end exclusive) so
//   DDL can store original SQL text.
// - Only add to this file; never rename existing kinds/fields (analyzer depends on it).

import type { CreatePropertyGraphStmt, GraphIsEndpoint, GraphIsLabeled, GraphQuery, GraphSubquery } from './ast-graph.js';
export type * from './ast-graph.js';

export interface Loc {
  line: number;
  column: number;
  /** 0-based character offset into the source text. */
  offset: number;
}

interface NodeBase {
  loc: Loc;
}

/** Multi-part name as raw parts (see header). */
export type Path = string[];

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

export type TypeNode = ScalarTypeNode | ArrayTypeNode | StructTypeNode | RangeTypeNode | AnyTypeNode | TableTypeNode | AnyTableTypeNode;

/** `ANY TABLE` in table function parameters. */
export interface AnyTableTypeNode extends NodeBase {
  kind: 'AnyTableType';
}

export interface ScalarTypeNode extends NodeBase {
  kind: 'ScalarType';
  /** Upper-cased type name as written, e.g. INT64, INTEGER, STRING, NUMERIC, DECIMAL, FLOAT64, BOOL. */
  name: string;
  /** Parameters like STRING(10) -> ['10'], NUMERIC(10, 2) -> ['10','2'] (literal text). */
  params: string[];
  collate?: string;
}

export interface ArrayTypeNode extends NodeBase {
  kind: 'ArrayType';
  element: TypeNode;
}

export interface StructFieldType {
  /** Undefined for anonymous fields: STRUCT<INT64, STRING>. */
  name?: string;
  type: TypeNode;
  /** Column-definition extras allowed in nested fields of CREATE TABLE column types. */
  notNull?: boolean;
  options?: OptionEntry[];
  collate?: string;
}

export interface StructTypeNode extends NodeBase {
  kind: 'StructType';
  fields: StructFieldType[];
}

export interface RangeTypeNode extends NodeBase {
  kind: 'RangeType';
  element: TypeNode;
}

/** `ANY TYPE` in SQL UDF parameters. */
export interface AnyTypeNode extends NodeBase {
  kind: 'AnyType';
}

/** `TABLE<a INT64, ...>` in table function parameters / RETURNS TABLE<...>. */
export interface TableTypeNode extends NodeBase {
  kind: 'TableType';
  columns: { name: string; type: TypeNode }[];
}

// ---------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------

export type Expr =
  | IntLiteral
  | FloatLiteral
  | StringLiteral
  | BytesLiteral
  | BoolLiteral
  | NullLiteral
  | TypedLiteral
  | RangeLiteral
  | IntervalExpr
  | PathExpr
  | FieldAccess
  | Subscript
  | NamedParam
  | PositionalParam
  | SystemVariable
  | UnaryExpr
  | BinaryExpr
  | LikeExpr
  | BetweenExpr
  | InExpr
  | IsExpr
  | IsDistinctFromExpr
  | CaseExpr
  | CastExpr
  | ExtractExpr
  | FunctionCall
  | ArrayExpr
  | ArraySubquery
  | StructExpr
  | ScalarSubquery
  | ExistsExpr
  | DefaultExpr
  | CollateExpr
  | LambdaExpr
  | NamedArgument
  | StarArg
  | ReplaceFieldsExpr
  | WithExpr
  | GraphIsLabeled
  | GraphIsEndpoint
  | GraphSubquery;

/** Integer literal; text as written, e.g. "42" or "0x1F". */
export interface IntLiteral extends NodeBase {
  kind: 'IntLiteral';
  text: string;
  hex: boolean;
}

/** Floating point literal; text as written, e.g. "1.5e3", ".5". */
export interface FloatLiteral extends NodeBase {
  kind: 'FloatLiteral';
  text: string;
}

export interface StringLiteral extends NodeBase {
  kind: 'StringLiteral';
  /** Unescaped value. */
  value: string;
  raw: boolean;
}

export interface BytesLiteral extends NodeBase {
  kind: 'BytesLiteral';
  value: Uint8Array;
  raw: boolean;
}

export interface BoolLiteral extends NodeBase {
  kind: 'BoolLiteral';
  value: boolean;
}

export interface NullLiteral extends NodeBase {
  kind: 'NullLiteral';
}

/** DATE '...', TIME, DATETIME, TIMESTAMP, NUMERIC, BIGNUMERIC (also DECIMAL/BIGDECIMAL), JSON. */
export interface TypedLiteral extends NodeBase {
  kind: 'TypedLiteral';
  /** Upper-cased type keyword as written (DECIMAL/BIGDECIMAL kept as such). */
  typeName: string;
  /** Unescaped string content. */
  value: string;
}

/** RANGE<DATE> '[2020-01-01, 2020-12-31)' */
export interface RangeLiteral extends NodeBase {
  kind: 'RangeLiteral';
  elementType: TypeNode;
  value: string;
}

/** INTERVAL expr part [TO part]; also INTERVAL '1-2' YEAR TO MONTH. */
export interface IntervalExpr extends NodeBase {
  kind: 'IntervalExpr';
  value: Expr;
  /** Upper-cased date part, e.g. DAY. */
  part: string;
  toPart?: string;
}

/** Dotted identifier chain `a.b.c` (a column, table alias + field, etc.). */
export interface PathExpr extends NodeBase {
  kind: 'PathExpr';
  parts: string[];
}

/** `expr.field` where expr is not a plain identifier chain. */
export interface FieldAccess extends NodeBase {
  kind: 'FieldAccess';
  expr: Expr;
  field: string;
}

export type SubscriptMode = 'OFFSET' | 'SAFE_OFFSET' | 'ORDINAL' | 'SAFE_ORDINAL' | 'BARE';

/** arr[OFFSET(i)], arr[i], json['key'] (BARE). */
export interface Subscript extends NodeBase {
  kind: 'Subscript';
  expr: Expr;
  index: Expr;
  mode: SubscriptMode;
}

export interface NamedParam extends NodeBase {
  kind: 'NamedParam';
  name: string;
}

/** `?`; index is 0-based in order of appearance in the whole script. */
export interface PositionalParam extends NodeBase {
  kind: 'PositionalParam';
  index: number;
}

/** @@dataset_id, @@session.x -> parts ['session','x']. */
export interface SystemVariable extends NodeBase {
  kind: 'SystemVariable';
  parts: string[];
}

export interface UnaryExpr extends NodeBase {
  kind: 'UnaryExpr';
  op: '-' | '+' | '~' | 'NOT';
  operand: Expr;
}

export type BinaryOp =
  | '*'
  | '/'
  | '||'
  | '+'
  | '-'
  | '<<'
  | '>>'
  | '&'
  | '^'
  | '|'
  | '='
  | '!='
  | '<'
  | '>'
  | '<='
  | '>='
  | 'AND'
  | 'OR';

/** `<>` is normalized to `!=`. */
export interface BinaryExpr extends NodeBase {
  kind: 'BinaryExpr';
  op: BinaryOp;
  left: Expr;
  right: Expr;
}

/** x [NOT] LIKE pattern | x [NOT] LIKE ANY|SOME|ALL (p1, p2) | ... (UNNEST(arr)) | ... (subquery). */
export interface LikeExpr extends NodeBase {
  kind: 'LikeExpr';
  expr: Expr;
  not: boolean;
  quantifier?: 'ANY' | 'SOME' | 'ALL';
  /** Set when not quantified. */
  pattern?: Expr;
  /** Quantified list form. */
  patterns?: Expr[];
  unnest?: Expr;
  query?: Query;
}

export interface BetweenExpr extends NodeBase {
  kind: 'BetweenExpr';
  expr: Expr;
  not: boolean;
  low: Expr;
  high: Expr;
}

/** Exactly one of list / query / unnest is set. */
export interface InExpr extends NodeBase {
  kind: 'InExpr';
  expr: Expr;
  not: boolean;
  list?: Expr[];
  query?: Query;
  unnest?: Expr;
}

export interface IsExpr extends NodeBase {
  kind: 'IsExpr';
  expr: Expr;
  not: boolean;
  what: 'NULL' | 'TRUE' | 'FALSE' | 'UNKNOWN';
}

export interface IsDistinctFromExpr extends NodeBase {
  kind: 'IsDistinctFromExpr';
  left: Expr;
  right: Expr;
  /** true for IS NOT DISTINCT FROM. */
  not: boolean;
}

export interface CaseExpr extends NodeBase {
  kind: 'CaseExpr';
  /** Simple CASE operand; undefined for searched CASE. */
  operand?: Expr;
  whens: { when: Expr; then: Expr }[];
  else?: Expr;
}

export interface CastExpr extends NodeBase {
  kind: 'CastExpr';
  safe: boolean;
  expr: Expr;
  type: TypeNode;
  format?: Expr;
  timeZone?: Expr;
}

/** EXTRACT(part FROM expr [AT TIME ZONE tz]); part like DAY, WEEK, or WEEK(MONDAY) -> part 'WEEK', weekday 'MONDAY'. */
export interface ExtractExpr extends NodeBase {
  kind: 'ExtractExpr';
  part: string;
  weekday?: string;
  expr: Expr;
  timeZone?: Expr;
}

export interface OrderByItem extends NodeBase {
  kind: 'OrderByItem';
  expr: Expr;
  direction?: 'ASC' | 'DESC';
  nulls?: 'FIRST' | 'LAST';
  collate?: string;
  /** COLLATE @param (query parameter collation). */
  collateExpr?: Expr;
}

export type FrameBoundType = 'UNBOUNDED PRECEDING' | 'PRECEDING' | 'CURRENT ROW' | 'FOLLOWING' | 'UNBOUNDED FOLLOWING';

export interface FrameBound {
  type: FrameBoundType;
  /** For `n PRECEDING` / `n FOLLOWING`. */
  offset?: Expr;
}

export interface WindowFrame {
  unit: 'ROWS' | 'RANGE';
  start: FrameBound;
  /** Present for BETWEEN ... AND ... */
  end?: FrameBound;
}

export interface WindowSpec extends NodeBase {
  kind: 'WindowSpec';
  /** Named window referenced: OVER w, or OVER (w ORDER BY ...). */
  baseName?: string;
  partitionBy: Expr[];
  orderBy: OrderByItem[];
  frame?: WindowFrame;
}

/**
 * Function call. `name` parts as written (e.g. ['net','ip_from_string'], ['ds','udf']);
 * the `SAFE.` prefix is removed and reported as `safe`.
 */
export interface FunctionCall extends NodeBase {
  kind: 'FunctionCall';
  name: string[];
  safe: boolean;
  args: Expr[];
  distinct: boolean;
  nullHandling?: 'IGNORE' | 'RESPECT';
  having?: { kind: 'MAX' | 'MIN'; expr: Expr };
  orderBy?: OrderByItem[];
  limit?: Expr;
  over?: WindowSpec;
  /** Aggregate filter `SUM(x WHERE cond)`. */
  where?: Expr;
}

/** `*` as a function argument: COUNT(*). */
export interface StarArg extends NodeBase {
  kind: 'StarArg';
}

/** `name => value` argument. */
export interface NamedArgument extends NodeBase {
  kind: 'NamedArgument';
  name: string;
  value: Expr;
}

/** `x -> x + 1`, `(x, y) -> x + y`. */
export interface LambdaExpr extends NodeBase {
  kind: 'LambdaExpr';
  params: string[];
  body: Expr;
}

/** ARRAY<T>[...], [...], ARRAY[...]. */
export interface ArrayExpr extends NodeBase {
  kind: 'ArrayExpr';
  elementType?: TypeNode;
  elements: Expr[];
}

/** ARRAY(subquery). */
export interface ArraySubquery extends NodeBase {
  kind: 'ArraySubquery';
  query: Query;
}

export interface StructField {
  expr: Expr;
  alias?: string;
}

/**
 * STRUCT(1 AS a, 2), STRUCT<a INT64>(1), and tuple syntax (1, 'a') (syntax='tuple').
 */
export interface StructExpr extends NodeBase {
  kind: 'StructExpr';
  syntax: 'struct' | 'tuple';
  type?: StructTypeNode;
  fields: StructField[];
  /** Builds a graph element (set by the graph compiler on the text it generates; never by the parser). */
  graphElement?: true;
}

export interface ScalarSubquery extends NodeBase {
  kind: 'ScalarSubquery';
  query: Query;
}

export interface ExistsExpr extends NodeBase {
  kind: 'ExistsExpr';
  query: Query;
}

/** DEFAULT keyword in INSERT VALUES / UPDATE SET. */
export interface DefaultExpr extends NodeBase {
  kind: 'DefaultExpr';
}

export interface CollateExpr extends NodeBase {
  kind: 'CollateExpr';
  expr: Expr;
  collation: string;
}

/** REPLACE_FIELDS(expr, v AS path, ...) */
export interface ReplaceFieldsExpr extends NodeBase {
  kind: 'ReplaceFieldsExpr';
  expr: Expr;
  fields: { value: Expr; path: string[] }[];
}

/** WITH(a AS expr, b AS expr, result_expr) */
export interface WithExpr extends NodeBase {
  kind: 'WithExpr';
  vars: { name: string; expr: Expr }[];
  body: Expr;
}

// ---------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------

export interface Cte extends NodeBase {
  kind: 'Cte';
  name: string;
  query: Query;
  /** Recursive CTE `WITH DEPTH [AS alias] [BETWEEN lo AND hi | MAX hi]` (ZetaSQL). */
  depth?: { alias?: string; min?: Expr; max?: Expr };
  /** Made by an analyzer rewrite (MATCH_RECOGNIZE), not written: may read the enclosing query's names, which a written WITH query may not. */
  seesOuter?: boolean;
}

export interface WithClause extends NodeBase {
  kind: 'WithClause';
  recursive: boolean;
  ctes: Cte[];
}

/**
 * A full query: [WITH] body [ORDER BY] [LIMIT [OFFSET]] [|> pipe ops].
 * Pipe operators apply after ORDER BY/LIMIT of this level.
 */
export interface Query extends NodeBase {
  kind: 'Query';
  with?: WithClause;
  body: QueryExpr;
  orderBy?: OrderByItem[];
  limit?: Expr;
  offset?: Expr;
  /** LIMIT ALL (no limit) was written. */
  limitAll?: boolean;
  pipes: PipeOp[];
}

/** A parenthesized query appears as a nested `Query` node. */
export type QueryExpr = Select | SetOperation | Query | FromQuery;

export interface Corresponding {
  /** CORRESPONDING or CORRESPONDING BY (cols). */
  by?: string[];
  /** STRICT CORRESPONDING */
  strict?: boolean;
}

export interface SetOperation extends NodeBase {
  kind: 'SetOperation';
  op: 'UNION' | 'INTERSECT' | 'EXCEPT';
  quantifier: 'ALL' | 'DISTINCT';
  /** FULL/LEFT/INNER [OUTER] prefix for CORRESPONDING-by-name set operations. */
  outerMode?: 'FULL' | 'LEFT' | 'INNER';
  corresponding?: Corresponding;
  /** `BY NAME` variant (ZetaSQL); treated as CORRESPONDING. */
  byName?: boolean;
  left: QueryExpr;
  right: QueryExpr;
}

/** FROM-first query body: `FROM t |> ...` */
export interface FromQuery extends NodeBase {
  kind: 'FromQuery';
  from: FromItem;
}

export interface Select extends NodeBase {
  kind: 'Select';
  distinct: boolean;
  /** SELECT AS STRUCT / SELECT AS VALUE. */
  asMode?: 'STRUCT' | 'VALUE';
  items: SelectItem[];
  from?: FromItem;
  where?: Expr;
  groupBy?: GroupBy;
  having?: Expr;
  qualify?: Expr;
  window?: NamedWindow[];
  /** SELECT WITH DIFFERENTIAL_PRIVACY / AGGREGATION_THRESHOLD OPTIONS(...) */
  withModifier?: { name: string; options?: OptionEntry[] };
}

export type SelectItem = SelectExprItem | SelectStar;

export interface SelectExprItem extends NodeBase {
  kind: 'SelectExpr';
  expr: Expr;
  alias?: string;
}

/** `*`, `t.*`, `expr.*`, with optional EXCEPT / REPLACE. */
export interface SelectStar extends NodeBase {
  kind: 'SelectStar';
  /** `t.*` -> PathExpr(['t']); `f(x).*` -> that expression. */
  qualifier?: Expr;
  except?: string[];
  replace?: { expr: Expr; alias: string }[];
}

export interface NamedWindow extends NodeBase {
  kind: 'NamedWindow';
  name: string;
  spec: WindowSpec;
}

export type GroupingItem = Expr | RollupItem | CubeItem | GroupingSetsItem | EmptyGroupingSet;

export interface RollupItem extends NodeBase {
  kind: 'Rollup';
  exprs: Expr[];
}
export interface CubeItem extends NodeBase {
  kind: 'Cube';
  exprs: Expr[];
}
export interface GroupingSetsItem extends NodeBase {
  kind: 'GroupingSets';
  /** Each set is an Expr (incl. StructExpr tuple for `(a, b)`), Rollup, Cube or EmptyGroupingSet. */
  sets: GroupingItem[];
}
/** `()` */
export interface EmptyGroupingSet extends NodeBase {
  kind: 'EmptyGroupingSet';
}

export interface GroupBy extends NodeBase {
  kind: 'GroupBy';
  /** GROUP BY ALL */
  all: boolean;
  items: GroupingItem[];
}

export interface TableSample {
  /** The TABLESAMPLE keyword. */
  loc?: Loc;
  method: string; // SYSTEM | BERNOULLI | RESERVOIR
  size: Expr;
  unit: 'PERCENT' | 'ROWS';
  /** REPEATABLE(seed) */
  repeatable?: Expr;
  /** RESERVOIR(n ROWS PARTITION BY ...) */
  partitionBy?: Expr[];
  /** WITH WEIGHT [AS alias] */
  withWeight?: { alias?: string };
}

export type FromItem = TableRef | UnnestRef | SubqueryRef | TvfRef | JoinRef | PivotRef | UnpivotRef;

/**
 * Fields every FROM item may carry. `matchRecognize` is set when the item is
 * followed by MATCH_RECOGNIZE(...): the item is then the pattern-matching input
 * and the clause's output replaces it (an optional field rather than a new
 * FromItem kind so exhaustive switches elsewhere keep compiling; the analyzer
 * must reject it until supported).
 */
interface FromItemBase extends NodeBase {
  matchRecognize?: MatchRecognizeClause;
  /** `LATERAL (subquery)` / `LATERAL tvf(...)` (ZetaSQL lateral join input). */
  lateral?: boolean;
}

export interface MatchRecognizeClause {
  loc: Loc;
  spec: MatchRecognizeSpec;
  alias?: string;
}

/** Row pattern of MATCH_RECOGNIZE (a regular expression over pattern variables). */
export type RowPattern =
  | { kind: 'PatternVar'; loc: Loc; name: string }
  /** Empty alternative, e.g. `a|` or `()`. */
  | { kind: 'PatternEmpty'; loc: Loc }
  | { kind: 'PatternAnchor'; loc: Loc; anchor: '^' | '$' }
  | { kind: 'PatternConcat'; loc: Loc; items: RowPattern[] }
  | { kind: 'PatternAlt'; loc: Loc; alternatives: RowPattern[] }
  | {
      kind: 'PatternQuantified';
      loc: Loc;
      pattern: RowPattern;
      /** `*` `+` `?` or `{}` for bounded repetition `{n}`, `{n,}`, `{,m}`, `{n,m}`. */
      quantifier: '*' | '+' | '?' | '{}';
      min?: Expr;
      max?: Expr;
      /** `{n}`: exactly n. */
      exact: boolean;
      /** Trailing `?`: reluctant quantifier. */
      reluctant: boolean;
    };

export interface MatchRecognizeSpec {
  partitionBy: Expr[];
  orderBy: OrderByItem[];
  measures: AliasedExpr[];
  afterMatchSkip?: 'PAST LAST ROW' | 'TO NEXT ROW';
  pattern: RowPattern;
  define: { name: string; expr: Expr }[];
  options?: OptionEntry[];
}



/**
 * A table name. Note `FROM t, t.arr` (implicit UNNEST of a path) is also a TableRef;
 * the analyzer decides (first part resolves to a range variable => correlated unnest).
 */
export interface TableRef extends FromItemBase {
  kind: 'TableRef';
  path: Path;
  alias?: string;
  systemTime?: Expr;
  sample?: TableSample;
  withOffset?: { alias?: string };
}

export interface UnnestRef extends FromItemBase {
  kind: 'UnnestRef';
  /** Usually one; several for multi-array UNNEST. */
  exprs: Expr[];
  alias?: string;
  withOffset?: { alias?: string };
  sample?: TableSample;
  /** Multi-array UNNEST: per-array aliases `UNNEST(a AS x, b AS y)` (same length as exprs). */
  exprAliases?: (string | undefined)[];
  /** Multi-array UNNEST `mode => 'PAD'|'TRUNCATE'|'STRICT'`. */
  mode?: Expr;
  /** `FOR SYSTEM_TIME AS OF` (parsed to be refused: an array has no history). */
  systemTime?: Expr;
}

export interface SubqueryRef extends FromItemBase {
  kind: 'SubqueryRef';
  query: Query;
  alias?: string;
  /** `GRAPH_TABLE(g ...)` (graph-sql-queries.md), or a whole `GRAPH g ...` query: `query` is then a placeholder, the analyzer compiles this. */
  graph?: GraphQuery;
  sample?: TableSample;
}

/** Table-valued function argument `TABLE t` is a TableArg. */
export interface TableArg extends NodeBase {
  kind: 'TableArg';
  path: Path;
}

/** `MODEL ds.m` argument of ML.* table functions. */
export interface ModelArg extends NodeBase {
  kind: 'ModelArg';
  path: Path;
}

export interface TvfRef extends FromItemBase {
  kind: 'TvfRef';
  name: Path;
  args: (Expr | TableArg | ModelArg | Query)[];
  alias?: string;
  sample?: TableSample;
}

export type JoinType = 'INNER' | 'LEFT' | 'RIGHT' | 'FULL' | 'CROSS' | 'COMMA';

export interface JoinRef extends FromItemBase {
  kind: 'JoinRef';
  joinType: JoinType;
  natural: boolean;
  left: FromItem;
  right: FromItem;
  on?: Expr;
  using?: string[];
  /** `(a JOIN b) TABLESAMPLE ...`: parsed to be refused (only a table is sampled). */
  sample?: TableSample;
}

export interface AliasedExpr {
  expr: Expr;
  alias?: string;
}

export interface PivotRef extends FromItemBase {
  kind: 'PivotRef';
  input: FromItem;
  aggregates: AliasedExpr[];
  forExpr: Expr;
  inValues: AliasedExpr[];
  alias?: string;
  /** `PIVOT(...) TABLESAMPLE ...`: samples the operator's output. */
  sample?: TableSample;
}

export interface UnpivotColumnSet {
  columns: string[];
  /** Label (string or int literal) */
  alias?: Expr;
}

export interface UnpivotRef extends FromItemBase {
  kind: 'UnpivotRef';
  input: FromItem;
  nulls?: 'INCLUDE' | 'EXCLUDE';
  /** Single-column unpivot has one value column. */
  valueColumns: string[];
  nameColumn: string;
  inColumns: UnpivotColumnSet[];
  alias?: string;
  /** `UNPIVOT(...) TABLESAMPLE ...`: samples the operator's output. */
  sample?: TableSample;
}

// ---------------------------------------------------------------------------
// Pipe operators
// ---------------------------------------------------------------------------

export type PipeOp =
  | PipeWhere
  | PipeSelect
  | PipeExtend
  | PipeSet
  | PipeDrop
  | PipeRename
  | PipeAs
  | PipeAggregate
  | PipeOrderBy
  | PipeLimit
  | PipeJoin
  | PipeCall
  | PipeSetOp
  | PipePivot
  | PipeUnpivot
  | PipeTablesample
  | PipeDistinct
  | PipeAssert
  | PipeWindow
  | PipeWith
  | PipeDescribe
  | PipeMatchRecognize
  | PipeIf;

export interface PipeWhere extends NodeBase {
  kind: 'PipeWhere';
  cond: Expr;
}
export interface PipeSelect extends NodeBase {
  kind: 'PipeSelect';
  distinct: boolean;
  asMode?: 'STRUCT' | 'VALUE';
  items: SelectItem[];
  window?: NamedWindow[];
}
export interface PipeExtend extends NodeBase {
  kind: 'PipeExtend';
  items: SelectItem[];
  window?: NamedWindow[];
}
export interface PipeSet extends NodeBase {
  kind: 'PipeSet';
  assignments: { column: string[]; expr: Expr }[];
}
export interface PipeDrop extends NodeBase {
  kind: 'PipeDrop';
  columns: string[][];
}
export interface PipeRename extends NodeBase {
  kind: 'PipeRename';
  renames: { from: string[]; to: string }[];
}
export interface PipeAs extends NodeBase {
  kind: 'PipeAs';
  alias: string;
}
/** |> AGGREGATE items [GROUP [AND ORDER] BY keys] ; items and keys may carry ASC/DESC. */
export interface PipeAggregateItem {
  expr: Expr;
  alias?: string;
  direction?: 'ASC' | 'DESC';
  nulls?: 'FIRST' | 'LAST';
}
export interface PipeAggregate extends NodeBase {
  kind: 'PipeAggregate';
  items: PipeAggregateItem[];
  groupBy: PipeAggregateItem[];
  groupAndOrder: boolean;
  /** GROUP BY ROLLUP/CUBE/GROUPING SETS in pipe aggregate. */
  groupingItems?: GroupingItem[];
}
export interface PipeOrderBy extends NodeBase {
  kind: 'PipeOrderBy';
  items: OrderByItem[];
}
export interface PipeLimit extends NodeBase {
  kind: 'PipeLimit';
  limit: Expr;
  offset?: Expr;
}
export interface PipeJoin extends NodeBase {
  kind: 'PipeJoin';
  joinType: Exclude<JoinType, 'COMMA'>;
  natural: boolean;
  right: FromItem;
  on?: Expr;
  using?: string[];
}
export interface PipeCall extends NodeBase {
  kind: 'PipeCall';
  tvf: TvfRef;
}
export interface PipeSetOp extends NodeBase {
  kind: 'PipeSetOp';
  op: 'UNION' | 'INTERSECT' | 'EXCEPT';
  quantifier: 'ALL' | 'DISTINCT';
  outerMode?: 'FULL' | 'LEFT' | 'INNER';
  corresponding?: Corresponding;
  byName?: boolean;
  queries: Query[];
}
export interface PipePivot extends NodeBase {
  kind: 'PipePivot';
  aggregates: AliasedExpr[];
  forExpr: Expr;
  inValues: AliasedExpr[];
  alias?: string;
}
export interface PipeUnpivot extends NodeBase {
  kind: 'PipeUnpivot';
  nulls?: 'INCLUDE' | 'EXCLUDE';
  valueColumns: string[];
  nameColumn: string;
  inColumns: UnpivotColumnSet[];
  alias?: string;
}
export interface PipeTablesample extends NodeBase {
  kind: 'PipeTablesample';
  sample: TableSample;
}
export interface PipeDistinct extends NodeBase {
  kind: 'PipeDistinct';
}
export interface PipeAssert extends NodeBase {
  kind: 'PipeAssert';
  cond: Expr;
  payload: Expr[];
}
export interface PipeWindow extends NodeBase {
  kind: 'PipeWindow';
  items: SelectItem[];
}
/** |> WITH name AS (query), ... */
export interface PipeWith extends NodeBase {
  kind: 'PipeWith';
  recursive: boolean;
  ctes: Cte[];
}
/** |> IF cond THEN ( |> ops ) [ELSEIF cond THEN ( |> ops )]... [ELSE ( |> ops )] (ZetaSQL). */
export interface PipeIf extends NodeBase {
  kind: 'PipeIf';
  branches: { cond: Expr; pipes: PipeOp[] }[];
  else?: PipeOp[];
}
/** |> MATCH_RECOGNIZE(...) [AS alias] */
export interface PipeMatchRecognize extends NodeBase {
  kind: 'PipeMatchRecognize';
  spec: MatchRecognizeSpec;
  alias?: string;
}
/** |> DESCRIBE / |> STATIC_DESCRIBE (ZetaSQL debugging operators). */
export interface PipeDescribe extends NodeBase {
  kind: 'PipeDescribe';
  static: boolean;
}

// ---------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------

interface StmtBase extends NodeBase {
  /** Char offsets of the statement text in the source (end exclusive, no trailing `;`). */
  start: number;
  end: number;
}

export interface OptionEntry {
  name: string;
  value: Expr;
}

export interface ColumnDef extends NodeBase {
  kind: 'ColumnDef';
  name: string;
  type: TypeNode;
  notNull: boolean;
  default?: Expr;
  options?: OptionEntry[];
  collate?: string;
  /** PRIMARY KEY NOT ENFORCED on the column. */
  primaryKey?: boolean;
  /** REFERENCES t(c) NOT ENFORCED on the column. */
  references?: { table: Path; columns: string[] };
  /** The column's PRIMARY KEY / REFERENCES was written without NOT ENFORCED (an error: the service enforces no key). */
  enforced?: boolean;
  /** GENERATED ALWAYS AS (expr) [STORED]. */
  generated?: Expr;
}

export interface TableConstraint {
  kind: 'PrimaryKey' | 'ForeignKey';
  name?: string;
  columns: string[];
  references?: { table: Path; columns: string[] };
  /** Written without NOT ENFORCED (an error: the service enforces no key). */
  enforced?: boolean;
  /** ADD CONSTRAINT IF NOT EXISTS name ... (ALTER TABLE only). */
  ifNotExists?: boolean;
}

export type Statement =
  | QueryStatement
  | CreateTableStmt
  | CreateViewStmt
  | CreateSchemaStmt
  | CreateFunctionStmt
  | CreateProcedureStmt
  | CreateModelStmt
  | CreateRowAccessPolicyStmt
  | DropStmt
  | AlterStmt
  | UndropSchemaStmt
  | InsertStmt
  | UpdateStmt
  | DeleteStmt
  | MergeStmt
  | TruncateStmt
  | DeclareStmt
  | SetStmt
  | IfStmt
  | LoopStmt
  | WhileStmt
  | RepeatStmt
  | ForInStmt
  | BreakStmt
  | ContinueStmt
  | BlockStmt
  | RaiseStmt
  | ReturnStmt
  | CallStmt
  | ExecuteImmediateStmt
  | TransactionStmt
  | AssertStmt
  | ExportDataStmt
  | LoadDataStmt
  | GrantStmt
  | CaseStmt
  | CreateConstantStmt
  | CreateIndexStmt
  | CreatePropertyGraphStmt;

export interface Script extends NodeBase {
  kind: 'Script';
  statements: Statement[];
}

export interface QueryStatement extends StmtBase {
  kind: 'QueryStatement';
  query: Query;
}

export interface CreateTableStmt extends StmtBase {
  kind: 'CreateTable';
  orReplace: boolean;
  temp: boolean;
  ifNotExists: boolean;
  /** CREATE EXTERNAL TABLE / CREATE SNAPSHOT TABLE. */
  external: boolean;
  snapshot: boolean;
  name: Path;
  columns?: ColumnDef[];
  constraints?: TableConstraint[];
  defaultCollate?: string;
  /** CREATE EXTERNAL TABLE ... WITH PARTITION COLUMNS [(columns)]: hive partition keys (an empty list: inferred). */
  withPartitionColumns?: ColumnDef[];
  partitionBy?: Expr;
  clusterBy?: Expr[];
  options?: OptionEntry[];
  asQuery?: Query;
  like?: Path;
  copy?: Path;
  clone?: { source: Path; systemTime?: Expr };
  /** External table: WITH PARTITION COLUMNS [(cols)], WITH CONNECTION x. */
  withConnection?: Path;
}

export interface CreateViewStmt extends StmtBase {
  kind: 'CreateView';
  orReplace: boolean;
  ifNotExists: boolean;
  materialized: boolean;
  name: Path;
  /** Optional column name list `CREATE VIEW v (a, b) AS`. */
  columns?: { name: string; options?: OptionEntry[] }[];
  partitionBy?: Expr;
  clusterBy?: Expr[];
  options?: OptionEntry[];
  query: Query;
  /** Original SQL text of the AS query. */
  queryText: string;
}

/** CREATE [OR REPLACE] SEARCH|VECTOR INDEX [IF NOT EXISTS] name ON table(ALL COLUMNS | cols) [STORING(cols)] [PARTITION BY expr] [OPTIONS(...)] */
export interface CreateIndexStmt extends StmtBase {
  kind: 'CreateIndex';
  orReplace: boolean;
  ifNotExists: boolean;
  indexType: 'SEARCH' | 'VECTOR';
  name: Path;
  table: Path;
  /** Undefined for ALL COLUMNS. */
  columns?: string[];
  /** CREATE SEARCH INDEX: the columns given OPTIONS (index_column_option_list), in either column form. */
  columnOptions?: IndexColumn[];
  storing?: string[];
  /** CREATE VECTOR INDEX's PARTITION BY partition_expression. */
  partitionBy?: Expr;
  options?: OptionEntry[];
}

/** `column_name [OPTIONS(index_column_option_list)]` of CREATE SEARCH INDEX. */
export interface IndexColumn {
  name: string;
  loc: Loc;
  options?: OptionEntry[];
}

/** CREATE [OR REPLACE] [TEMP] CONSTANT [IF NOT EXISTS] name = expr (ZetaSQL named constants). */
export interface CreateConstantStmt extends StmtBase {
  kind: 'CreateConstant';
  orReplace: boolean;
  temp: boolean;
  ifNotExists: boolean;
  name: Path;
  value: Expr;
}

export interface CreateSchemaStmt extends StmtBase {
  kind: 'CreateSchema';
  orReplace: boolean;
  ifNotExists: boolean;
  name: Path;
  defaultCollate?: string;
  options?: OptionEntry[];
}

export interface FunctionParam {
  name: string;
  type: TypeNode;
  /** NOT AGGREGATE marker in aggregate UDFs. */
  notAggregate?: boolean;
}

export interface CreateFunctionStmt extends StmtBase {
  kind: 'CreateFunction';
  orReplace: boolean;
  temp: boolean;
  ifNotExists: boolean;
  /** CREATE AGGREGATE FUNCTION */
  aggregate: boolean;
  /** CREATE TABLE FUNCTION */
  tableFunction: boolean;
  name: Path;
  params: FunctionParam[];
  returns?: TypeNode;
  /** LANGUAGE js etc. (lower-cased as written); undefined for SQL. */
  language?: string;
  /** DETERMINISTIC / NOT DETERMINISTIC, when written. */
  deterministic?: boolean;
  /** SQL UDF body expression (AS (expr)). */
  body?: Expr;
  /** Table function body query. */
  query?: Query;
  /** Original text of body (SQL expression text or query text). */
  bodyText?: string;
  /** JavaScript (or other language) code (AS r"""...""" string value). */
  code?: string;
  options?: OptionEntry[];
  /** REMOTE WITH CONNECTION */
  remoteConnection?: Path;
}

export interface ProcedureParam {
  mode?: 'IN' | 'OUT' | 'INOUT';
  name: string;
  type: TypeNode;
}

export interface CreateProcedureStmt extends StmtBase {
  kind: 'CreateProcedure';
  orReplace: boolean;
  ifNotExists: boolean;
  name: Path;
  params: ProcedureParam[];
  options?: OptionEntry[];
  body: BlockStmt;
  bodyText: string;
}

export interface CreateModelStmt extends StmtBase {
  kind: 'CreateModel';
  orReplace: boolean;
  ifNotExists: boolean;
  name: Path;
  transform?: SelectItem[];
  inputColumns?: ColumnDef[];
  outputColumns?: ColumnDef[];
  remoteConnection?: Path;
  options?: OptionEntry[];
  query?: Query;
}

export interface CreateRowAccessPolicyStmt extends StmtBase {
  kind: 'CreateRowAccessPolicy';
  orReplace: boolean;
  ifNotExists: boolean;
  name: string;
  table: Path;
  /** GRANT TO ('user:a@b.com', ...) */
  grantTo: Expr[];
  filter: Expr;
}

export type DropObjectType =
  | 'TABLE'
  | 'EXTERNAL TABLE'
  | 'SNAPSHOT TABLE'
  | 'VIEW'
  | 'MATERIALIZED VIEW'
  | 'SCHEMA'
  | 'FUNCTION'
  | 'TABLE FUNCTION'
  | 'AGGREGATE FUNCTION'
  | 'PROCEDURE'
  | 'MODEL'
  | 'ROW ACCESS POLICY'
  | 'ALL ROW ACCESS POLICIES'
  | 'SEARCH INDEX'
  | 'VECTOR INDEX'
  | 'PROPERTY GRAPH';

export interface DropStmt extends StmtBase {
  kind: 'Drop';
  objectType: DropObjectType;
  ifExists: boolean;
  /** Empty for DROP ALL ROW ACCESS POLICIES. */
  name: Path;
  /** ON table for row access policies / indexes. */
  on?: Path;
  mode?: 'CASCADE' | 'RESTRICT';
}

export type AlterColumnAction =
  | { kind: 'SetDataType'; type: TypeNode }
  | { kind: 'SetDefault'; expr: Expr }
  | { kind: 'DropDefault' }
  | { kind: 'DropNotNull' }
  | { kind: 'SetOptions'; options: OptionEntry[] };

export type AlterAction =
  | { kind: 'AddColumn'; loc: Loc; ifNotExists: boolean; column: ColumnDef }
  | { kind: 'DropColumn'; loc: Loc; ifExists: boolean; name: string }
  | { kind: 'RenameColumn'; loc: Loc; ifExists: boolean; from: string; to: string }
  | { kind: 'SetOptions'; loc: Loc; options: OptionEntry[] }
  | { kind: 'AlterColumn'; loc: Loc; ifExists: boolean; name: string; action: AlterColumnAction }
  | { kind: 'RenameTo'; loc: Loc; name: Path }
  | { kind: 'SetDefaultCollate'; loc: Loc; collation: string }
  | { kind: 'AddConstraint'; loc: Loc; constraint: TableConstraint; ifNotExists: boolean }
  | { kind: 'DropConstraint'; loc: Loc; ifExists: boolean; name: string; primaryKey: boolean }
  /** ALTER SCHEMA ADD / DROP REPLICA (parsed to be refused: the emulator does not replicate datasets). */
  | { kind: 'Replica'; loc: Loc; op: 'ADD' | 'DROP'; name: Path };

/** ALTER TABLE / VIEW / MATERIALIZED VIEW / SCHEMA ... */
export interface AlterStmt extends StmtBase {
  kind: 'Alter';
  objectType: 'TABLE' | 'VIEW' | 'MATERIALIZED VIEW' | 'SCHEMA' | 'MODEL';
  ifExists: boolean;
  name: Path;
  actions: AlterAction[];
}

export interface UndropSchemaStmt extends StmtBase {
  kind: 'UndropSchema';
  ifNotExists: boolean;
  name: Path;
}

export interface InsertStmt extends StmtBase {
  kind: 'Insert';
  target: Path;
  columns?: string[];
  /** VALUES rows; DEFAULT appears as DefaultExpr. */
  values?: Expr[][];
  query?: Query;
  /** ASSERT_ROWS_MODIFIED n */
  assertRowsModified?: Expr;
  /** THEN RETURN items (ZetaSQL). */
  returning?: SelectItem[];
  /** INSERT [OR] IGNORE|REPLACE|UPDATE (ZetaSQL primary-key modes). */
  insertMode?: 'IGNORE' | 'REPLACE' | 'UPDATE';
}

export interface UpdateItem {
  /** Target path: PathExpr / FieldAccess / Subscript. */
  target: Expr;
  value: Expr;
}

/** Nested DML item of UPDATE ... SET (DELETE arr WHERE ...), (UPDATE arr SET ...), (INSERT arr VALUES ...). */
export interface NestedDmlItem {
  stmt: InsertStmt | UpdateStmt | DeleteStmt;
  /** Position among all SET items (assignments and nested DML interleaved). */
  position: number;
}

export interface UpdateStmt extends StmtBase {
  kind: 'Update';
  /** For nested DML the target is the array path relative to the outer row. */
  target: Path;
  alias?: string;
  set: UpdateItem[];
  /** Nested DML SET items (ZetaSQL / BigQuery nested array DML). */
  nestedDml?: NestedDmlItem[];
  /** Nested UPDATE/DELETE: `arr WITH OFFSET [AS o]`. */
  withOffset?: { alias?: string };
  from?: FromItem;
  where?: Expr;
  assertRowsModified?: Expr;
  returning?: SelectItem[];
}

export interface DeleteStmt extends StmtBase {
  kind: 'Delete';
  target: Path;
  alias?: string;
  /** Nested DELETE: `arr WITH OFFSET [AS o]`. */
  withOffset?: { alias?: string };
  where?: Expr;
  assertRowsModified?: Expr;
  returning?: SelectItem[];
}

export type MergeAction =
  | { kind: 'MergeUpdate'; set: UpdateItem[] }
  | { kind: 'MergeDelete' }
  /** INSERT [(cols)] VALUES (...) | INSERT ROW | INSERT [(cols)] ROW */
  | { kind: 'MergeInsert'; columns?: string[]; values?: Expr[]; row: boolean };

export interface MergeClause {
  match: 'MATCHED' | 'NOT MATCHED BY TARGET' | 'NOT MATCHED BY SOURCE';
  condition?: Expr;
  action: MergeAction;
}

export interface MergeStmt extends StmtBase {
  kind: 'Merge';
  target: Path;
  alias?: string;
  source: FromItem;
  on: Expr;
  clauses: MergeClause[];
}

export interface TruncateStmt extends StmtBase {
  kind: 'Truncate';
  name: Path;
}

export interface DeclareStmt extends StmtBase {
  kind: 'Declare';
  names: string[];
  type?: TypeNode;
  default?: Expr;
}

export interface SetTarget {
  name: string;
  /** @@system variable (name holds the dotted name without @@). */
  system: boolean;
}

/** SET x = e; SET (a, b) = (1, 2) / (SELECT AS STRUCT ...). */
export interface SetStmt extends StmtBase {
  kind: 'Set';
  targets: SetTarget[];
  tuple: boolean;
  value: Expr;
}

export interface IfStmt extends StmtBase {
  kind: 'If';
  /** IF then ELSEIF branches, in order. */
  branches: { cond: Expr; body: Statement[] }[];
  else?: Statement[];
}

/** CASE [expr] WHEN ... THEN stmts ... [ELSE stmts] END CASE */
export interface CaseStmt extends StmtBase {
  kind: 'CaseStmt';
  operand?: Expr;
  whens: { when: Expr; body: Statement[] }[];
  else?: Statement[];
}

export interface LoopStmt extends StmtBase {
  kind: 'Loop';
  label?: string;
  body: Statement[];
}

export interface WhileStmt extends StmtBase {
  kind: 'While';
  label?: string;
  cond: Expr;
  body: Statement[];
}

export interface RepeatStmt extends StmtBase {
  kind: 'Repeat';
  label?: string;
  body: Statement[];
  until: Expr;
}

export interface ForInStmt extends StmtBase {
  kind: 'ForIn';
  label?: string;
  variable: string;
  query: Query;
  body: Statement[];
}

/** BREAK or LEAVE. */
export interface BreakStmt extends StmtBase {
  kind: 'Break';
  keyword: 'BREAK' | 'LEAVE';
  label?: string;
}

/** CONTINUE or ITERATE. */
export interface ContinueStmt extends StmtBase {
  kind: 'Continue';
  keyword: 'CONTINUE' | 'ITERATE';
  label?: string;
}

export interface BlockStmt extends StmtBase {
  kind: 'Block';
  label?: string;
  body: Statement[];
  /** Statements of EXCEPTION WHEN ERROR THEN ...; undefined when no handler. */
  exceptionHandler?: Statement[];
}

export interface RaiseStmt extends StmtBase {
  kind: 'Raise';
  /** RAISE USING MESSAGE = expr; undefined for bare RAISE (rethrow). */
  message?: Expr;
}

export interface ReturnStmt extends StmtBase {
  kind: 'Return';
}

export interface CallStmt extends StmtBase {
  kind: 'Call';
  name: Path;
  args: Expr[];
}

export interface ExecuteImmediateStmt extends StmtBase {
  kind: 'ExecuteImmediate';
  sql: Expr;
  into?: string[];
  using?: AliasedExpr[];
}

export interface TransactionStmt extends StmtBase {
  kind: 'Transaction';
  action: 'BEGIN' | 'COMMIT' | 'ROLLBACK';
}

export interface AssertStmt extends StmtBase {
  kind: 'Assert';
  cond: Expr;
  description?: Expr;
}

export interface ExportDataStmt extends StmtBase {
  kind: 'ExportData';
  connection?: Path;
  options?: OptionEntry[];
  query: Query;
}

export interface LoadDataStmt extends StmtBase {
  kind: 'LoadData';
  overwrite: boolean;
  temp: boolean;
  name: Path;
  /** `[OVERWRITE] PARTITIONS (column = value)`: the one partition written (overwrite: that partition replaced). */
  partitions?: { column: string; value: Expr; overwrite: boolean };
  columns?: ColumnDef[];
  partitionBy?: Expr;
  clusterBy?: Expr[];
  options?: OptionEntry[];
  fromFilesOptions: OptionEntry[];
  withPartitionColumns?: ColumnDef[];
  withConnection?: Path;
}

/** GRANT / REVOKE role ON resource TO/FROM users (metadata only). */
export interface GrantStmt extends StmtBase {
  kind: 'Grant';
  revoke: boolean;
  roles: string[];
  resourceType: string;
  resource: Path;
  grantees: Expr[];
}

export type NodeKind = Statement['kind'] | Expr['kind'] | FromItem['kind'] | PipeOp['kind'] | QueryExpr['kind'];
