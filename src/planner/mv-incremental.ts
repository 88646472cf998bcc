// What an incremental materialized view's query may hold (materialized-views-create.md, Materialized views query
// support, Aggregate requirements, Unsupported SQL features, WITH clause). A view with
// allow_non_incremental_definition = true is not held to them (non-incremental materialized views: most queries).
import type * as A from '../../grammar/ast.js';
import { someNode } from '../../grammar/ast-walk.js';
import { sqlError } from '../analyzer/errors.js';
import type { AggregateCall, Rel } from '../analyzer/resolved.js';

/** Aggregate requirements: the only aggregate functions an incremental materialized view keeps. */
const SUPPORTED = new Set(['ANY_VALUE', 'APPROX_COUNT_DISTINCT', 'ARRAY_AGG', 'AVG', 'BIT_AND', 'BIT_OR', 'BIT_XOR', 'COUNT', 'COUNTIF', 'HLL_COUNT.INIT', 'LOGICAL_AND', 'LOGICAL_OR', 'MAX', 'MIN', 'MAX_BY', 'MIN_BY', 'SUM']);

/** Aggregate requirements: ANY_VALUE, MAX_BY and MIN_BY but not over STRUCT; ARRAY_AGG but not over ARRAY or STRUCT. */
const NOT_OVER: Record<string, readonly string[]> = { ANY_VALUE: ['STRUCT'], MAX_BY: ['STRUCT'], MIN_BY: ['STRUCT'], ARRAY_AGG: ['ARRAY', 'STRUCT'] };

function refuse(what: string, loc: A.Loc): never {
  throw sqlError(`Incremental materialized view query does not support ${what}; only a materialized view with allow_non_incremental_definition = true may`, loc);
}

function aggregateName(a: AggregateCall): string {
  // COUNT(*) is resolved as the internal $COUNT_STAR.
  const n = a.name.toUpperCase();
  return n === '$COUNT_STAR' ? 'COUNT' : n;
}

/**
 * Refuses what the resolved plan shows: window functions, RIGHT / FULL OUTER JOIN, a table read twice (self-joins),
 * ARRAY subqueries, TABLESAMPLE, FOR SYSTEM_TIME AS OF, ORDER BY / LIMIT (not in the query pattern), set operations
 * other than UNION ALL, more than one level of GROUP BY, and aggregates off the supported list. Returns the names of
 * the aggregates met, for the AST checks.
 */
function checkPlan(plan: Rel, loc: A.Loc): Set<string> {
  const names = new Set<string>();
  const tables = new Set<string>();
  let groupings = 0;
  someNode(plan, (n) => {
    const r = n as unknown as Rel | { kind: 'subquery'; mode: string };
    switch (r.kind) {
      case 'aggregate':
        if (++groupings > 1) refuse('more than one level of GROUP BY or aggregation', loc);
        for (const a of r.aggregates) {
          const name = aggregateName(a);
          names.add(a.name.toUpperCase());
          if (!SUPPORTED.has(name)) refuse(`the aggregate function ${a.name.toUpperCase()}`, loc);
          const t = a.args[0]?.type.kind;
          if (t && NOT_OVER[name]?.includes(t)) refuse(`${name} over ${t}`, loc);
        }
        break;
      case 'window':
        refuse('window functions', loc);
        break;
      case 'join':
        if (r.joinType === 'right' || r.joinType === 'full') refuse(`${r.joinType.toUpperCase()} OUTER JOIN`, loc);
        break;
      case 'sort':
        refuse('ORDER BY', loc);
        break;
      case 'limit':
        refuse('LIMIT', loc);
        break;
      case 'sample':
        refuse('TABLESAMPLE', loc);
        break;
      case 'setop':
        if (r.op !== 'union' || !r.all) refuse(`${r.op.toUpperCase()} ${r.all ? 'ALL' : 'DISTINCT'}`, loc);
        break;
      case 'scan': {
        if (r.asOfMs !== undefined) refuse('FOR SYSTEM_TIME AS OF', loc);
        const key = `${r.table.projectId}.${r.table.datasetId}.${r.table.tableId}`;
        if (tables.has(key)) refuse(`self-joins (${r.table.datasetId}.${r.table.tableId} is read more than once)`, loc);
        tables.add(key);
        break;
      }
      case 'subquery':
        if (r.mode === 'array') refuse('ARRAY subqueries', loc);
        break;
    }
    return false;
  });
  return names;
}

const SUBQUERY = new Set(['ScalarSubquery', 'ArraySubquery', 'ExistsExpr', 'Query']);

/**
 * Aggregate requirements: aggregates must be outputs. A SELECT item may be an aggregate call, or hold none; HAVING
 * (filtering on an aggregate) and QUALIFY are refused, and so is a call of a user-defined function.
 */
function checkSyntax(query: A.Query, aggregates: ReadonlySet<string>, isUdf: (n: A.FunctionCall) => boolean): void {
  const isAggregate = (e: { kind?: string }): boolean => {
    const f = e as A.FunctionCall;
    return f.kind === 'FunctionCall' && !f.over && (aggregates.has(f.name.join('.').toUpperCase()) || SUPPORTED.has(f.name.join('.').toUpperCase()));
  };
  someNode(query, (n) => {
    if (n.kind === 'FunctionCall' && isUdf(n as A.FunctionCall)) refuse(`user-defined functions (${(n as A.FunctionCall).name.join('.')})`, (n as A.FunctionCall).loc);
    if (n.kind !== 'Select') return false;
    const sel = n as A.Select;
    if (sel.having) refuse('HAVING (filtering on an aggregated value)', sel.having.loc);
    if (sel.qualify) refuse('QUALIFY', sel.qualify.loc);
    for (const item of sel.items) {
      if (item.kind !== 'SelectExpr' || isAggregate(item.expr)) continue;
      if (someNode(item.expr, isAggregate, (o) => SUBQUERY.has(o.kind ?? ''))) refuse(`a value computed from an aggregate${item.alias ? ` (${item.alias})` : ''}: aggregates must be outputs`, item.loc);
    }
    return false;
  });
}

/** The checks of an incremental materialized view's query, made over its text and its resolved plan. */
export function checkIncrementalMv(query: A.Query, plan: Rel, isUdf: (n: A.FunctionCall) => boolean, loc: A.Loc): void {
  const aggregates = checkPlan(plan, loc);
  checkSyntax(query, aggregates, isUdf);
}
