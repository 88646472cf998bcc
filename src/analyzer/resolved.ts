// The resolved logical plan: what the analyzer produces, the planner rewrites
// and the executor runs. Every column has a unique numeric id within a
// statement (as in ZetaSQL's resolved AST); expressions refer to columns by id,
// and each relational node lists the columns it outputs, in batch order.
import type { ResolvedAggregate, ResolvedScalar } from '../functions/registry.js';
import type { HistoryRead, TableId } from '../storage/api.js';
import type { SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';

export interface ResolvedColumn {
  readonly id: number;
  /** Display name (the output column name for the top-level select list). */
  readonly name: string;
  readonly type: SqlType;
}

// ---------------------------------------------------------------- expressions

export type Expr =
  | LiteralExpr
  | ColumnRefExpr
  | CallExpr
  | CastExpr
  | ConditionalExpr
  | LogicalExpr
  | MakeStructExpr
  | MakeArrayExpr
  | FieldAccessExpr
  | SubqueryExpr
  | LambdaExpr;

export interface LiteralExpr {
  readonly kind: 'literal';
  readonly type: SqlType;
  /** Scalar value form of values.ts. Query parameters are resolved to literals. */
  readonly value: Value;
}

export interface ColumnRefExpr {
  readonly kind: 'column';
  readonly type: SqlType;
  readonly columnId: number;
  /**
   * True when the column belongs to an enclosing query (a correlated
   * reference inside a subquery or a lateral join's right side); the
   * executor binds it from the outer row being processed.
   */
  readonly correlated?: boolean;
}

export interface CallExpr {
  readonly kind: 'call';
  readonly type: SqlType;
  /** Canonical function name, for messages and EXPLAIN. */
  readonly name: string;
  readonly args: readonly Expr[];
  readonly fn: ResolvedScalar;
  /** SAFE.-prefixed call: an error in this call yields NULL. */
  readonly safe: boolean;
}

export interface CastExpr {
  readonly kind: 'cast';
  readonly type: SqlType;
  readonly arg: Expr;
  /** SAFE_CAST: failure yields NULL. */
  readonly safe: boolean;
  readonly format?: Expr;
  readonly timeZone?: Expr;
}

/**
 * Branching forms evaluate lazily: a branch is computed only for the rows that
 * take it, so `IF(x = 0, 0, 1 / x)` never divides by zero.
 */
export interface ConditionalExpr {
  readonly kind: 'conditional';
  readonly type: SqlType;
  /** CASE WHEN c THEN r ... ELSE e END (IF, IFNULL, NULLIF, simple CASE are rewritten to this or to coalesce). */
  readonly op: 'case' | 'coalesce';
  /** op = case: whens[i] / thens[i]; op = coalesce: thens are the arguments. */
  readonly whens: readonly Expr[];
  readonly thens: readonly Expr[];
  readonly else?: Expr;
}

export interface LogicalExpr {
  readonly kind: 'logical';
  readonly type: SqlType; // BOOL
  readonly op: 'and' | 'or' | 'not';
  readonly args: readonly Expr[];
}

export interface MakeStructExpr {
  readonly kind: 'make_struct';
  readonly type: SqlType; // STRUCT
  readonly fields: readonly Expr[];
}

export interface MakeArrayExpr {
  readonly kind: 'make_array';
  readonly type: SqlType; // ARRAY
  readonly elements: readonly Expr[];
}

export interface FieldAccessExpr {
  readonly kind: 'field';
  readonly type: SqlType;
  readonly arg: Expr;
  readonly fieldIndex: number;
}

export interface SubqueryExpr {
  readonly kind: 'subquery';
  readonly type: SqlType;
  /**
   * scalar: one column, at most one row (error otherwise), NULL when empty.
   * array: ARRAY(subquery). exists: EXISTS. in: `inExpr IN (subquery)`.
   */
  readonly mode: 'scalar' | 'array' | 'exists' | 'in';
  readonly plan: Rel;
  readonly inExpr?: Expr;
  /** Outer column ids the subquery reads; empty = uncorrelated (evaluate once). */
  readonly correlatedColumns: readonly number[];
}

/** Lambda argument of ARRAY_FILTER / ARRAY_TRANSFORM etc. */
export interface LambdaExpr {
  readonly kind: 'lambda';
  readonly type: SqlType; // the body's type
  readonly params: readonly ResolvedColumn[];
  readonly body: Expr;
}

// ---------------------------------------------------------------- relations

export interface SortKey {
  readonly expr: Expr;
  readonly descending: boolean;
  /** GoogleSQL default: NULLs first ascending, last descending. */
  readonly nullsFirst: boolean;
  readonly collation?: string;
}

export type Rel =
  | ScanRel
  | ValuesRel
  | FilterRel
  | ProjectRel
  | AggregateRel
  | JoinRel
  | SortRel
  | LimitRel
  | WindowRel
  | SetOpRel
  | UnnestRel
  | WithRel
  | CteRefRel
  | RecursiveCteRel
  | SampleRel
  | ArrayScanRel;

interface RelBase {
  /** Output columns in batch order. */
  readonly columns: readonly ResolvedColumn[];
}

export interface ScanRel extends RelBase {
  readonly kind: 'scan';
  readonly table: TableId;
  /** Index into the table's columns for each output column. */
  readonly tableColumns: readonly number[];
  readonly asOfMs?: number;
  /** APPENDS / CHANGES: the table's change history, not its rows (storage/api.ts, HistoryRead). */
  readonly history?: HistoryRead;
  /** Filters the planner pushed into the scan (conjuncts over output columns). */
  readonly pushedFilters?: readonly Expr[];
}

/** Literal rows; `SELECT` without FROM is a one-row ValuesRel with no columns. */
export interface ValuesRel extends RelBase {
  readonly kind: 'values';
  readonly rows: readonly (readonly Expr[])[];
}

export interface FilterRel extends RelBase {
  readonly kind: 'filter';
  readonly input: Rel;
  readonly predicate: Expr;
}

/** Computes `exprs` over its input; outputs exactly `columns` (same order as exprs). */
export interface ProjectRel extends RelBase {
  readonly kind: 'project';
  readonly input: Rel;
  readonly exprs: readonly Expr[];
}

export interface AggregateCall {
  readonly column: ResolvedColumn;
  readonly name: string;
  readonly fn: ResolvedAggregate;
  readonly args: readonly Expr[];
  readonly distinct: boolean;
  readonly ignoreNulls: boolean | undefined;
  readonly orderBy: readonly SortKey[];
  readonly limit?: number;
  /** HAVING MAX expr / HAVING MIN expr inside the call. */
  readonly having?: { readonly max: boolean; readonly expr: Expr };
  /** Aggregate FILTER (WHERE ...) style predicate (COUNTIF is a plain function). */
  readonly filter?: Expr;
}

/**
 * Output columns: the group keys (in groupBy order) then the aggregates.
 * With grouping sets, the same node computes every set; keys absent from a set
 * are NULL, and `groupingColumns` (if any) report GROUPING() bits.
 */
export interface AggregateRel extends RelBase {
  readonly kind: 'aggregate';
  readonly input: Rel;
  readonly groupBy: readonly { readonly column: ResolvedColumn; readonly expr: Expr }[];
  readonly aggregates: readonly AggregateCall[];
  /** Each set lists indexes into groupBy; absent = one set with every key. */
  readonly groupingSets?: readonly (readonly number[])[];
  /** GROUPING(key) outputs: column + the groupBy index it tests. */
  readonly groupingCalls?: readonly { readonly column: ResolvedColumn; readonly keyIndex: number }[];
}

export type JoinType = 'inner' | 'left' | 'right' | 'full' | 'cross' | 'semi' | 'anti';

/** Output columns: left's then right's (semi/anti: left's only). */
export interface JoinRel extends RelBase {
  readonly kind: 'join';
  readonly joinType: JoinType;
  readonly left: Rel;
  readonly right: Rel;
  readonly condition?: Expr;
  /**
   * The right side reads columns of the left row (correlated UNNEST(t.arr),
   * lateral subqueries): it is evaluated once per left row.
   */
  readonly lateral: boolean;
  /** Set by the planner: equi-join keys for a hash join; `condition` keeps the residual. */
  readonly equiKeys?: readonly { readonly left: Expr; readonly right: Expr; readonly nullSafe: boolean }[];
}

export interface SortRel extends RelBase {
  readonly kind: 'sort';
  readonly input: Rel;
  readonly keys: readonly SortKey[];
  /** Top-N: set by the planner when a LIMIT sits on top. */
  readonly limit?: number;
}

export interface LimitRel extends RelBase {
  readonly kind: 'limit';
  readonly input: Rel;
  /** null = no limit (LIMIT ALL / OFFSET only). */
  readonly limit: number | null;
  readonly offset: number;
}

export type FrameBound =
  | { readonly type: 'unbounded_preceding' }
  | { readonly type: 'unbounded_following' }
  | { readonly type: 'current_row' }
  | { readonly type: 'preceding'; readonly offset: Expr }
  | { readonly type: 'following'; readonly offset: Expr };

export interface WindowFrame {
  readonly unit: 'ROWS' | 'RANGE';
  readonly start: FrameBound;
  readonly end: FrameBound;
}

export interface WindowCall {
  readonly column: ResolvedColumn;
  /** Upper-case function name: ROW_NUMBER, RANK, LAG, FIRST_VALUE, PERCENTILE_CONT, ... or an aggregate's name. */
  readonly name: string;
  readonly args: readonly Expr[];
  /** Present when the function is an aggregate used as a window function. */
  readonly aggregate?: ResolvedAggregate;
  readonly distinct: boolean;
  readonly ignoreNulls: boolean | undefined;
  readonly partitionBy: readonly Expr[];
  readonly orderBy: readonly SortKey[];
  /** Absent: the function's default (whole partition without ORDER BY; RANGE UNBOUNDED PRECEDING..CURRENT ROW with it). */
  readonly frame?: WindowFrame;
}

/** Outputs the input columns followed by one column per window call. */
export interface WindowRel extends RelBase {
  readonly kind: 'window';
  readonly input: Rel;
  readonly calls: readonly WindowCall[];
  /**
   * Set by the planner (rules/window-topn.ts) when a filter above keeps only
   * rows whose `fn` value is <= `limit`: every call is then
   * ROW_NUMBER/RANK/DENSE_RANK over one spec, and the operator may drop each
   * partition's later rows.
   */
  readonly partitionLimit?: { readonly fn: 'ROW_NUMBER' | 'RANK' | 'DENSE_RANK'; readonly limit: number };
}

/** Inputs already project to the output column order/types (the analyzer inserts casts). */
export interface SetOpRel extends RelBase {
  readonly kind: 'setop';
  readonly op: 'union' | 'intersect' | 'except';
  readonly all: boolean;
  readonly inputs: readonly Rel[];
}

/**
 * UNNEST(array) as a relation: one row per element (none for NULL/empty).
 * Correlated arrays appear as the right side of a lateral JoinRel.
 */
export interface UnnestRel extends RelBase {
  readonly kind: 'unnest';
  readonly arrays: readonly Expr[];
  /** One element column per array (multi-way UNNEST zips, padding with NULL). */
  readonly elements: readonly ResolvedColumn[];
  readonly offset?: ResolvedColumn;
  /**
   * Multi-way UNNEST `mode =>`: PAD (default: shorter arrays pad with NULL),
   * TRUNCATE (stop at the shortest), STRICT (unequal lengths are the error
   * "Unnested arrays under STRICT mode must have equal lengths").
   */
  readonly mode?: 'PAD' | 'TRUNCATE' | 'STRICT';
}

/** A table-valued expression computed from a value, e.g. a table-valued function body. */
export interface ArrayScanRel extends RelBase {
  readonly kind: 'array_scan';
  /** ARRAY<STRUCT<...>> value whose elements become rows (AS STRUCT / value tables). */
  readonly array: Expr;
}

export interface WithRel extends RelBase {
  readonly kind: 'with';
  readonly ctes: readonly { readonly id: number; readonly name: string; readonly plan: Rel }[];
  readonly body: Rel;
}

export interface CteRefRel extends RelBase {
  readonly kind: 'cte_ref';
  readonly cteId: number;
  /** The CTE's own output columns, which `columns` renames 1:1. */
  readonly cteColumns: readonly ResolvedColumn[];
}

/** WITH RECURSIVE: base, then recursive steps that read `cteId` as the previous iteration. */
export interface RecursiveCteRel extends RelBase {
  readonly kind: 'recursive_cte';
  readonly cteId: number;
  readonly base: Rel;
  readonly recursive: Rel;
}

export interface SampleRel extends RelBase {
  readonly kind: 'sample';
  readonly input: Rel;
  readonly percent: number;
  readonly seed?: number;
}

/** A planned SELECT: the relation plus the output names the REST schema reports. */
export interface ResolvedQuery {
  readonly plan: Rel;
  readonly outputNames: readonly string[];
  /**
   * The query is a value table (SELECT AS STRUCT / AS VALUE): one unnamed column, or a STRUCT value table's
   * fields as the columns.
   */
  readonly isValueTable: boolean;
}
