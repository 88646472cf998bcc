// AST of BigQuery Graph: CREATE PROPERTY GRAPH and GQL queries (GRAPH g MATCH ... RETURN ..., GRAPH_TABLE).
// Pages: reference/standard-sql/graph-schema-statements.md, graph-query-statements.md, graph-patterns.md.
import type { Expr, Loc, OrderByItem, Path, SelectItem } from './ast.js';

/** `x IS [NOT] LABELED label_expression` (graph-patterns.md, label expressions). */
export interface GraphIsLabeled {
  kind: 'GraphIsLabeled';
  loc: Loc;
  expr: Expr;
  not: boolean;
  label: GraphLabelExpr;
}

/** `EXISTS { ... }`, `VALUE { ... }`, `ARRAY { ... }`, `value [NOT] IN { ... }` (graph-subqueries.md). */
export interface GraphSubquery {
  kind: 'GraphSubquery';
  loc: Loc;
  mode: 'EXISTS' | 'VALUE' | 'ARRAY' | 'IN';
  /** `graph` is empty when the braces hold only MATCH statements or a pattern (EXISTS): the enclosing graph. */
  query: GraphQuery;
  value?: Expr;
  not?: boolean;
}

/** `node IS [NOT] SOURCE|DESTINATION [OF] edge` (graph-operators.md). */
export interface GraphIsEndpoint {
  kind: 'GraphIsEndpoint';
  loc: Loc;
  node: Expr;
  not: boolean;
  which: 'SOURCE' | 'DESTINATION';
  edge: Expr;
}


/** `CREATE [OR REPLACE] PROPERTY GRAPH [IF NOT EXISTS] name NODE TABLES (...) [EDGE TABLES (...)]`. */
export interface CreatePropertyGraphStmt {
  kind: 'CreatePropertyGraph';
  loc: Loc;
  start: number;
  end: number;
  orReplace: boolean;
  ifNotExists: boolean;
  name: Path;
  nodeTables: GraphElementDef[];
  edgeTables: GraphElementDef[];
}

/** One node or edge definition: `table [AS alias] [KEY (...)] [SOURCE KEY ... DESTINATION KEY ...] labels/properties`. */
export interface GraphElementDef {
  loc: Loc;
  table: Path;
  alias?: string;
  key?: string[];
  source?: GraphEndpointDef;
  destination?: GraphEndpointDef;
  /** Empty: `DEFAULT LABEL PROPERTIES ARE ALL COLUMNS` (the page's implicit form). */
  labels: GraphLabelDef[];
}

/** `SOURCE KEY (cols) REFERENCES node [(cols)]` / `DESTINATION KEY ...`. */
export interface GraphEndpointDef {
  loc: Loc;
  columns: string[];
  ref: string;
  refColumns?: string[];
}

export interface GraphLabelDef {
  loc: Loc;
  /** Undefined: DEFAULT LABEL (the element's alias). */
  name?: string;
  properties: GraphPropertiesDef;
}

export type GraphPropertiesDef =
  | { kind: 'all'; except?: string[] }
  | { kind: 'none' }
  | { kind: 'list'; items: { loc: Loc; expr: Expr; alias?: string }[] };

// ---------------------------------------------------------------------------- queries

/** `GRAPH g` + linear query statements chained by NEXT (also the body of GRAPH_TABLE). */
export interface GraphQuery {
  kind: 'GraphQuery';
  loc: Loc;
  graph: Path;
  /** EXISTS { MATCH ... } / EXISTS { pattern }: statements without RETURN. */
  noReturn?: boolean;
  /** A whole `GRAPH g ...` statement (its result may not hold graph elements), not GRAPH_TABLE's body. */
  topLevel?: boolean;
  /** Linear query statements, chained by NEXT. */
  parts: GraphLinearQuery[];
}

/** Simple linear queries joined by set operators (`op[i]` between `branches[i]` and `branches[i+1]`). */
export interface GraphLinearQuery {
  loc: Loc;
  branches: GraphSimpleQuery[];
  ops: { loc: Loc; op: 'UNION' | 'INTERSECT' | 'EXCEPT'; quantifier: 'ALL' | 'DISTINCT' }[];
}

export interface GraphSimpleQuery {
  loc: Loc;
  stmts: GraphStmt[];
}

export type GraphStmt =
  | { kind: 'GMatch'; loc: Loc; optional: boolean; pattern: GraphPattern }
  | { kind: 'GFilter'; loc: Loc; cond: Expr }
  | { kind: 'GLet'; loc: Loc; defs: { loc: Loc; name: string; expr: Expr }[] }
  | { kind: 'GFor'; loc: Loc; name: string; expr: Expr; offset?: string }
  | { kind: 'GOrderBy'; loc: Loc; items: OrderByItem[] }
  | { kind: 'GLimit'; loc: Loc; limit?: Expr; offset?: Expr }
  | GraphReturn;

/** RETURN (ends a simple linear query) or WITH (passes its columns on). */
export interface GraphReturn {
  kind: 'GReturn' | 'GWith';
  loc: Loc;
  distinct: boolean;
  star: boolean;
  items: SelectItem[];
  groupBy?: { loc: Loc; all: boolean; items: Expr[] };
  orderBy?: OrderByItem[];
  limit?: Expr;
  offset?: Expr;
}

export interface GraphPattern {
  loc: Loc;
  paths: GraphPathPattern[];
  where?: Expr;
}

export interface GraphPathPattern {
  loc: Loc;
  /** `p = ...` */
  variable?: string;
  /** Path search prefix and/or path mode as written (ANY, ANY SHORTEST, ANY CHEAPEST, ALL, WALK, TRAIL, ...). */
  prefix?: string;
  elements: GraphElementPattern[];
}

export interface GraphElementPattern {
  kind: 'node' | 'edge' | 'subpath';
  loc: Loc;
  /** Edges: the arrow as written. */
  direction?: 'right' | 'left' | 'any';
  variable?: string;
  label?: GraphLabelExpr;
  where?: Expr;
  props?: { loc: Loc; name: string; value: Expr }[];
  /** A subpath's path pattern (its path mode in `prefix`). */
  path?: GraphPathPattern;
  /** `{m,n}`, `{n}`, `{,n}` after an element or subpath; `+` and `*` (unbounded) are kept without bounds. */
  quantifier?: { loc: Loc; min?: number; max?: number };
  cost?: Expr;
}

export type GraphLabelExpr =
  | { kind: 'name'; loc: Loc; name: string }
  | { kind: 'any'; loc: Loc }
  | { kind: 'or' | 'and'; loc: Loc; items: GraphLabelExpr[] }
  | { kind: 'not'; loc: Loc; item: GraphLabelExpr };
