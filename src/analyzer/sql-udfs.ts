// SQL UDFs: found (temporary, then persistent routines) and inlined at the
// call with their arguments bound; their declared return type checked.
import type * as A from '../../grammar/ast.js';
import { lookupFunction } from '../functions/registry.js';
import { collationOf, isBinaryCollation } from '../functions/collation.js';
import { T, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { QueryError } from '../types/errors.js';
import { externalAggregateDef, externalUdfCall, languageOf } from '../udf/index.js';
import { ddlOfRoutine } from '../udf/routine-ddl.js';
import type { Expr } from './resolved.js';
import { Scope, colRef } from './scope.js';
import { canCoerce, typeFromNode } from './types.js';
import { originOf, coerce } from './coercion.js';
import { type ExprCtx, resolveExpr } from './expr.js';
import { resolveAggregate, safePrefixRefused } from './aggregate-calls.js';

export function findUdf(an: Analyzer, parts: readonly string[]): A.CreateFunctionStmt | undefined {
  const full = parts.join('.');
  if (an.env.tempFunctions.size) {
    // lexical.md, Case sensitivity: user-defined function names are case-sensitive.
    const t = an.env.tempFunctions.get(full.toUpperCase());
    if (t && t.name.join('.') === full) return t;
  }
  const segs = parts.length === 1 && !full.includes('.') ? [full] : parts.flatMap((p) => p.split('.'));
  if (segs.length < 2) {
    // Unqualified: built-ins win; then the default dataset's routines and the project-level store
    // for unqualified CREATE FUNCTION (catalog lookups are not free: only when no built-in matches).
    if (lookupFunction(full)) return undefined;
    if (an.env.storedBody) return undefined;
    const d = an.env.defaultDataset;
    const inDataset = d && routineAt(an, d.projectId, d.datasetId, segs[0]!);
    if (inDataset) return routineStmt(an, inDataset, d.projectId);
    const r = routineAt(an, an.env.projectId, UNQUALIFIED_ROUTINES, segs[0]!);
    if (r) return routineStmt(an, r, an.env.projectId);
    return undefined;
  }
  // Qualified names of built-ins (NET.HOST, HLL_COUNT.MERGE) are not routines.
  if (lookupFunction(full)) return undefined;
  if (segs.length === 2 && an.env.noDefaultProject) return undefined;
  const routineId = segs[segs.length - 1]!;
  const datasetId = segs[segs.length - 2]!;
  const projectId = segs.length > 2 ? segs[segs.length - 3]! : an.env.projectId;
  const r = routineAt(an, projectId, datasetId, routineId);
  return r ? routineStmt(an, r, projectId) : undefined;
}

/** The project of each persistent routine findUdf returned (each parse is a fresh statement). */
const routineProjects = new WeakMap<A.CreateFunctionStmt, string>();

/**
 * Resolves a routine's body. A persistent one's is resolved as its own, whoever calls it: in the project that contains
 * the routine (user-defined-functions.md and user-defined-aggregates.md, Default project in the function body; table
 * functions, on which table-functions.md is silent, as their sibling SQL functions and as views), with no default
 * dataset, no temporary table or function of the caller, and a bare name naming no persistent function (Limitations:
 * a persistent function names another with its dataset). A temporary one's in the caller's setting (it may call a
 * persistent function by its bare name through the default dataset).
 */
export function inRoutineBody<T>(an: Analyzer, udf: A.CreateFunctionStmt, resolve: () => T): T {
  if (udf.temp) return resolve();
  const env = an.env;
  (an as { env: Analyzer['env'] }).env = storedRoutineEnv(env, routineProjects.get(udf) ?? env.projectId, udf.tableFunction === true);
  try {
    return resolve();
  } finally {
    (an as { env: Analyzer['env'] }).env = env;
  }
}

/**
 * The setting a persistent routine's body resolves in: its own project, nothing of the caller's request or script.
 * `tableFunction`: a table function's bare table names keep the caller's default dataset (table-functions.md is
 * silent, and the pinned GoogleSQL case call_sql_tvf.test:tvf_call_no_table_args reads a bare table in one).
 */
export function storedRoutineEnv(env: Analyzer['env'], projectId: string, tableFunction = false): Analyzer['env'] {
  return { ...env, projectId, defaultDataset: tableFunction ? env.defaultDataset : undefined, storedBody: true, noDefaultProject: undefined, externalTables: undefined, tempTables: new Map(), tempFunctions: new Map() };
}

function routineAt(an: Analyzer, projectId: string, datasetId: string, id: string): Record<string, unknown> | undefined {
  if (!an.env.catalog.getDataset(projectId, datasetId)) return undefined;
  let r: Record<string, unknown> | undefined;
  try {
    r = an.env.catalog.getChild('routines', projectId, datasetId, id);
  } catch {
    return undefined;
  }
  if (r) an.env.onRoutine?.({ projectId, datasetId, routineId: id });
  return r;
}

/** Dataset holding CREATE FUNCTION targets written without a dataset and with no default dataset. */
export const UNQUALIFIED_ROUTINES = '_bqemu_routines';

function routineStmt(an: Analyzer, r: Record<string, unknown>, projectId: string): A.CreateFunctionStmt | undefined {
  // Routines made by REST routines.insert carry no DDL: one is written from the resource's fields.
  const ddl = ddlOfRoutine(r);
  if (!ddl) return undefined;
  const stmt = an.env.parse(ddl).statements[0];
  if (stmt?.kind !== 'CreateFunction') return undefined;
  routineProjects.set(stmt, projectId);
  return stmt;
}

export function inlineUdf(an: Analyzer, udf: A.CreateFunctionStmt, n: A.FunctionCall, ctx: ExprCtx): Expr {
  const external = languageOf(udf) !== undefined;
  if (!udf.body && !external) throw sqlError(`Function ${n.name.join('.')} has no SQL body`, n.loc);
  if (n.distinct && !udf.aggregate) throw sqlError(`Non-aggregate function ${n.name.join('.')} cannot be called with DISTINCT`, n.loc);
  // functions-reference.md (SAFE. prefix): not supported with user-defined functions, SQL or not, scalar or aggregate.
  if (n.safe) throw safePrefixRefused(n.name.join('.'), n.loc);
  if (external && udf.aggregate) {
    // JavaScript UDAF: resolved like a built-in aggregate over a registry-shaped definition (src/udf/).
    const types = udf.params.map((p) => (p.type.kind === 'AnyType' ? T.STRING : typeFromNode(p.type)));
    try {
      return resolveAggregate(an, n, externalAggregateDef(an.env, udf, n.name.join('.'), types, udf.returns ? typeFromNode(udf.returns) : T.STRING), ctx);
    } catch (e) {
      if (e instanceof QueryError && !/ at \[\d+:\d+\]$/.test(e.message)) throw new QueryError(`${e.message} at [${n.loc.line}:${n.loc.column}]`, e.reason, e.httpCode);
      throw e;
    }
  }
  if (n.args.length !== udf.params.length) {
    throw sqlError(`Number of arguments does not match for function ${n.name.join('.')}`, n.loc);
  }
  const m = new Map<string, Expr>();
  udf.params.forEach((p, i) => {
    let v = resolveExpr(an, n.args[i]!, ctx);
    refuseCollatedArgument(v.type, p.name, n.args[i]!.loc);
    // user-defined-aggregates.md, Limitations: only literals, query parameters and script variables (all resolved to
    // literals) are NOT AGGREGATE arguments; the reference analyzer's wording.
    if (udf.aggregate && p.notAggregate && v.kind !== 'literal') {
      throw sqlError(`${udf.params.length === 1 ? 'The argument' : `Argument ${i + 1}`} to ${n.name.join('.')} must be a literal or query parameter`, n.args[i]!.loc);
    }
    if (p.type.kind !== 'AnyType') {
      const t = typeFromNode(p.type);
      if (!typeEquals(v.type, t) && !canCoerce(v.type, t, originOf(v))) {
        throw sqlError(`No matching signature for function ${n.name.join('.')} for argument types: ${typeToSql(v.type)}`, n.args[i]!.loc);
      }
      v = coerce(v, t);
    }
    m.set(p.name.toLowerCase(), v);
  });
  if (external) {
    // JavaScript / Python: a call whose kernel runs the compiled function over the batch (src/udf/).
    const args = udf.params.map((p) => m.get(p.name.toLowerCase())!);
    try {
      return externalUdfCall(an.env, udf, n.name.join('.'), args, args.map((a) => a.type), udf.returns ? typeFromNode(udf.returns) : T.STRING);
    } catch (e) {
      if (e instanceof QueryError && !/ at \[\d+:\d+\]$/.test(e.message)) throw new QueryError(`${e.message} at [${n.loc.line}:${n.loc.column}]`, e.reason, e.httpCode);
      throw e;
    }
  }
  // The body sees only its parameters (and may call aggregates when the caller allows them).
  const bodyScope = new Scope();
  bodyScope.udfArgs = m;
  let body = inRoutineBody(an, udf, () => resolveExpr(an, udf.body!, { scope: bodyScope, clause: ctx.clause, udfArgs: m, aggs: ctx.aggs, inAggregate: ctx.inAggregate }));
  refuseCollatedReturn(body.type, n.loc);
  if (udf.returns) body = toDeclaredReturn(body, typeFromNode(udf.returns), udf.returns.loc);
  return body;
}

/** collation-concepts.md, Limitations: a user-defined function can't take a collated argument. */
export function refuseCollatedArgument(t: SqlType, name: string, loc: A.Loc): void {
  const c = collationOf(t);
  if (c && !isBinaryCollation(c)) throw sqlError(`Collation is not allowed on argument ${name} ('${c}'). Use COLLATE(arg, '') to remove collation`, loc);
}

/** collation-concepts.md, Limitations: collation in the return type of a user-defined function body isn't allowed. */
function refuseCollatedReturn(t: SqlType, loc: A.Loc): void {
  const c = collationOf(t);
  if (c && !isBinaryCollation(c)) throw sqlError(`Collation ['${c}'] in return type of user-defined function body is not allowed`, loc);
}

/** A SQL function body's value as its RETURNS type (ZetaSQL's wording when the body's type cannot coerce to it). */
function toDeclaredReturn(body: Expr, rt: SqlType, loc: A.Loc, origin = originOf(body)): Expr {
  if (typeEquals(body.type, rt)) return body;
  if (!canCoerce(body.type, rt, origin)) {
    throw sqlError(`Function declared to return ${typeToSql(rt)} but the function body produces incompatible type ${typeToSql(body.type)}`, loc);
  }
  return coerce(body, rt);
}

/**
 * CREATE FUNCTION of a scalar SQL function with fixed argument types and a RETURNS type: the body is
 * resolved now (arguments as typed NULLs) and must give a type that coerces to RETURNS, as the service
 * checks at CREATE. A body that does not resolve yet (a table or function made later) is left to call time.
 */
export function checkSqlFunctionReturn(an: Analyzer, st: A.CreateFunctionStmt): void {
  if (st.tableFunction || st.aggregate || !st.body || languageOf(st) !== undefined) return;
  if (st.params.some((p) => p.type.kind === 'AnyType' || p.type.kind === 'TableType' || p.type.kind === 'AnyTableType')) return;
  // Each argument stands in as a column of its type (a NULL literal would coerce, and pick overloads, as no argument does).
  const m = new Map<string, Expr>(st.params.map((p) => [p.name.toLowerCase(), colRef(an.newColumn(p.name, typeFromNode(p.type)))]));
  const scope = new Scope();
  scope.udfArgs = m;
  let body: Expr;
  try {
    body = resolveExpr(an, st.body, { scope, clause: 'SQL function body', udfArgs: m });
  } catch (e) {
    // The service analyzes a non-templated body when the function is made: a function it calls that does not exist,
    // or a name that is neither a parameter nor a column, is an error of the CREATE (other analysis errors, such as a
    // table made later, are left to the call).
    if (e instanceof QueryError && (e.message.startsWith('Function not found') || e.message.startsWith('Unrecognized name'))) throw e;
    return;
  }
  refuseCollatedReturn(body.type, st.body.loc);
  if (!st.returns || st.returns.kind === 'AnyType') return;
  toDeclaredReturn(body, typeFromNode(st.returns), st.returns.loc);
}
