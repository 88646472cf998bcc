// CREATE FUNCTION / TABLE FUNCTION / PROCEDURE / MODEL: routines kept as the REST
// routine resource, with the checks the service makes when they are created.
import { findNode, someNode } from '../analyzer/ast-search.js';
import type * as A from '../../grammar/ast.js';
import { hasRecursiveWith } from '../../grammar/recursive-with.js';
import { datasetUnqualified, projectUnqualified, tableNotFound, splitPath } from '../analyzer/names.js';
import { checkDeclaredTable } from '../analyzer/table-functions.js';
import { typeFromNode } from '../analyzer/types.js';
import type { TableId } from '../storage/api.js';
import { typeToSql, type SqlType } from '../types/types.js';
import { QueryError, type QueryResult } from './api.js';
import type { Session } from './session.js';
import { sqlError } from '../analyzer/errors.js';
import { checkSqlFunctionReturn, findUdf, storedRoutineEnv, UNQUALIFIED_ROUTINES } from '../analyzer/sql-udfs.js';
import { lookupFunction } from '../functions/registry.js';
import { statementResult } from './statement-type.js';
import { checkExternalFunction, languageOf, stringListOption, stringOption } from '../udf/index.js';
import { ddlOfRoutine } from '../udf/routine-ddl.js';
import { already, optionsToResource, checkOptionNames, evalOption, targetId } from './ddl-common.js';

const result = statementResult;

function typeJson(t: SqlType): Record<string, unknown> {
  switch (t.kind) {
    case 'ARRAY':
      return { typeKind: 'ARRAY', arrayElementType: typeJson(t.element) };
    case 'STRUCT':
      return { typeKind: 'STRUCT', structType: { fields: t.fields.map((f) => ({ name: f.name, type: typeJson(f.type) })) } };
    default:
      return { typeKind: t.kind };
  }
}

/** The system variables a SQL function's body may read (user-defined-functions.md, table-functions.md). */
const FUNCTION_SYSTEM_VARIABLES = new Set(['session_id', 'location']);

export async function createFunction(s: Session, st: A.CreateFunctionStmt): Promise<QueryResult> {
  const type = st.tableFunction ? 'CREATE_TABLE_FUNCTION' : 'CREATE_FUNCTION';
  if (st.language && !['js', 'javascript', 'sql', 'python'].includes(st.language.toLowerCase())) {
    throw sqlError(`Language "${st.language}" is unsupported`, st.loc);
  }
  const external = languageOf(st) !== undefined;
  // A string body is code of another language: without LANGUAGE it is neither that nor a SQL body (an expression in parentheses).
  if (st.code !== undefined && !external && !st.remoteConnection) throw sqlError(`Function ${st.name.join('.')} has a string body but no LANGUAGE clause; a SQL function body is an expression in parentheses`, st.loc);
  if (external) {
    // Non-SQL bodies are checked now (types, options); they run at call time (src/udf/).
    const typed = (t: A.TypeNode) => (t.kind === 'AnyType' || t.kind === 'TableType' || t.kind === 'AnyTableType' ? undefined : typeFromNode(t));
    const params = st.params.map((p) => typed(p.type)).filter((t): t is SqlType => t !== undefined);
    try {
      checkExternalFunction(st, params, st.returns ? typed(st.returns) : undefined);
    } catch (e) {
      if (e instanceof QueryError) throw sqlError(e.message, st.loc);
      throw e;
    }
  }
  // The Routine resource: determinism is a JavaScript function's; a SQL function's is derived from its body.
  if (st.deterministic !== undefined && !external && !st.remoteConnection) {
    throw sqlError(`${st.deterministic ? 'DETERMINISTIC' : 'NOT DETERMINISTIC'} is only allowed for JavaScript functions; SQL function ${st.name.join('.')} cannot specify its determinism`, st.loc);
  }
  checkParamNames(st.params, st.loc);
  // lexical.md, Query parameters: they can't be used in the SQL body of CREATE FUNCTION (the function outlives the request).
  const param = external ? undefined : findNode(st.body ?? st.query, ['NamedParam', 'PositionalParam']);
  if (param) throw sqlError('Query parameters cannot be used in the body of a function', param.loc);
  // user-defined-functions.md and table-functions.md, system variables: a SQL function's body may read @@session_id
  // and @@location; no other system variable is supported there.
  let sysvar: A.SystemVariable | undefined;
  if (!external) {
    someNode(st.body ?? st.query, (n) => {
      const v = n as A.SystemVariable;
      if (n.kind === 'SystemVariable' && !FUNCTION_SYSTEM_VARIABLES.has(v.parts.join('.').toLowerCase())) sysvar = v;
      return sysvar !== undefined;
    });
  }
  if (sysvar) throw sqlError(`System variable @@${sysvar.parts.join('.')} is not supported in the body of a function; only @@session_id and @@location are`, sysvar.loc);
  // query-syntax.md, CTE rules and constraints: WITH RECURSIVE isn't allowed in functions (SQL and table functions).
  if (!external && hasRecursiveWith(st)) throw sqlError('WITH RECURSIVE is not allowed in a function body', st.loc);
  if (!external && !st.remoteConnection && !st.tableFunction) checkOptionNames(st.options, SQL_FUNCTION_OPTIONS, 'CREATE FUNCTION');
  if (!external && !st.tableFunction && !st.aggregate && st.body) refuseAggregateBody(st);
  if (!external && st.aggregate && st.body) refuseLooseAggregateParams(st);
  if (st.temp && splitPath(st.name).length > 1) throw sqlError(`CREATE TEMP FUNCTION requires an unqualified name, but got ${st.name.join('.')}`, st.loc);
  if (!st.temp) {
    // A persistent function's body sees no temporary function (it outlives them): such a call names no function.
    const called = new Set<string>();
    callNames(st.body ?? st.query, called);
    for (const n of called) if (s.tempFunctions.has(n)) throw sqlError(`Function not found: ${n.toLowerCase()}; the persistent function ${st.name.join('.')} cannot call the temporary function ${n.toLowerCase()}`, st.loc);
    refuseBarePersistentCalls(s, st);
  }
  if (st.temp) {
    checkDeclaredTable(s.analyzer(), st);
    checkSqlFunctionReturn(s.analyzer(), st);
  } else {
    // A persistent function's body is checked as it will resolve when called (storedRoutineEnv): in its own project,
    // with no default dataset; made in another project than the one running the DDL, with no default project either.
    const home = splitPath(st.name).length === 1 && !s.env.defaultDataset ? s.ctx.projectId : targetId(s, st.name, st.loc).projectId;
    const otherProject = home !== s.env.projectId;
    if (languageOf(st) === undefined) refuseUnqualifiedTables(st.body ?? st.query, st.params, otherProject, st.tableFunction !== true);
    const saved = s.env;
    s.env = { ...storedRoutineEnv(saved, home, st.tableFunction === true), ...(otherProject ? { noDefaultProject: true } : {}) };
    try {
      checkDeclaredTable(s.analyzer(), st);
      checkSqlFunctionReturn(s.analyzer(), st);
    } finally {
      s.env = saved;
    }
  }
  if (st.temp) {
    const key = st.name.join('.').toUpperCase();
    if (s.tempFunctions.has(key) && !st.orReplace) {
      if (st.ifNotExists) return result(type, { ddlOperationPerformed: 'SKIP' });
      throw sqlError(`Function ${st.name.join('.')} already exists`, st.loc);
    }
    s.tempFunctions.set(key, st);
    return result(type, { ddlOperationPerformed: 'CREATE' });
  }
  const cat = s.ctx.catalog;
  let id: TableId;
  if (splitPath(st.name).length === 1 && !s.env.defaultDataset) {
    // Unqualified persistent function without a default dataset: kept at project level.
    id = { projectId: s.ctx.projectId, datasetId: UNQUALIFIED_ROUTINES, tableId: splitPath(st.name)[0]! };
    if (!cat.getDataset(id.projectId, id.datasetId)) await cat.createDataset(id.projectId, id.datasetId, { location: 'US' }, true);
  } else id = targetId(s, st.name, st.loc);
  if (!cat.getDataset(id.projectId, id.datasetId)) throw tableNotFound(s.analyzer(), id);
  if (st.tableFunction) refuseSelfCall(s, st, id);
  // query-syntax.md, FOR SYSTEM_TIME AS OF, Limitations: not on a source table of CREATE TABLE FUNCTION.
  if (st.tableFunction && someNode(st, (o) => o.kind === 'TableRef' && !!(o as { systemTime?: unknown }).systemTime)) throw sqlError('FOR SYSTEM_TIME AS OF cannot be used in the body of CREATE TABLE FUNCTION', st.loc);
  const existing = cat.getChild('routines', id.projectId, id.datasetId, id.tableId);
  const routine = { projectId: id.projectId, datasetId: id.datasetId, routineId: id.tableId };
  if (existing && st.ifNotExists) return result(type, { ddlOperationPerformed: 'SKIP', ddlTargetRoutine: routine });
  if (existing && !st.orReplace) throw already('Function', `${id.projectId}:${id.datasetId}.${id.tableId}`);
  const now = String(Date.now());
  const resource: Record<string, unknown> = {
    routineReference: routine,
    routineType: st.tableFunction ? 'TABLE_VALUED_FUNCTION' : st.aggregate ? 'AGGREGATE_FUNCTION' : 'SCALAR_FUNCTION',
    language: st.language ? (st.language.toLowerCase() === 'js' ? 'JAVASCRIPT' : st.language.toUpperCase()) : 'SQL',
    definitionBody: st.code ?? st.bodyText ?? '',
    arguments: st.params.map((p) =>
      p.type.kind === 'AnyType' || p.type.kind === 'AnyTableType'
        ? { name: p.name, argumentKind: 'ANY_TYPE' }
        : p.type.kind === 'TableType'
          ? { name: p.name, argumentKind: 'FIXED_TYPE', dataType: { typeKind: 'TABLE' } }
          : { name: p.name, dataType: typeJson(typeFromNode(p.type)) },
    ),
    ...(st.returns && st.returns.kind !== 'TableType' && st.returns.kind !== 'AnyType' ? { returnType: typeJson(typeFromNode(st.returns)) } : {}),
    // A table function's declared RETURNS TABLE<...> (REST returnTableType; INFORMATION_SCHEMA.ROUTINES.data_type).
    ...(st.returns?.kind === 'TableType' ? { returnTableType: { columns: st.returns.columns.map((c) => ({ name: c.name, type: typeJson(typeFromNode(c.type)) })) } } : {}),
    ...(st.deterministic !== undefined ? { determinismLevel: st.deterministic ? 'DETERMINISTIC' : 'NOT_DETERMINISTIC' } : {}),
    ...(external ? externalRoutineFields(st) : {}),
    ...(await routineOptionFields(s, st.tableFunction ? checkedOptions(st.options, TABLE_FUNCTION_OPTIONS, 'CREATE TABLE FUNCTION') : st.options)),
    ddl: s.ctx.sql.slice(st.start, st.end),
    creationTime: (existing?.creationTime as string) ?? now,
    lastModifiedTime: now,
  };
  await cat.putChild('routines', id.projectId, id.datasetId, id.tableId, resource);
  return result(type, { ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE', ddlTargetRoutine: routine });
}

/**
 * A table function's body may not call the table function itself (routines are not recursive; a scalar function's
 * body fails the same way when it is resolved, before the function exists).
 */
function refuseSelfCall(s: Session, st: A.CreateFunctionStmt, id: TableId): void {
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!n || typeof n !== 'object') return;
    const o = n as { kind?: string; name?: A.Path; loc?: A.Loc };
    if (o.kind === 'TvfRef' && o.name) {
      let ref: TableId | undefined;
      try {
        ref = targetId(s, o.name, o.loc ?? st.loc);
      } catch {
        ref = undefined;
      }
      if (ref && ref.projectId === id.projectId && ref.datasetId === id.datasetId && ref.tableId.toLowerCase() === id.tableId.toLowerCase()) {
        throw sqlError(`Table-valued function ${o.name.join('.')} cannot be called in its own body: recursive table functions are not supported`, o.loc ?? st.loc);
      }
    }
    for (const v of Object.values(n)) if (v && typeof v === 'object') walk(v);
  };
  walk(st.query);
}

/**
 * A scalar (non-AGGREGATE) SQL function's body may not aggregate outside a subquery of its own: refused at CREATE
 * with the reference implementation's words, where the call failed later without naming the function.
 */
function refuseAggregateBody(st: A.CreateFunctionStmt): void {
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!n || typeof n !== 'object') return;
    const o = n as { kind?: string };
    if (o.kind === 'Query') return; // a subquery aggregates its own rows
    if (o.kind === 'FunctionCall') {
      const f = n as A.FunctionCall;
      if (!f.over && f.name.length === 1 && lookupFunction(f.name[0]!)?.kind === 'aggregate') {
        throw sqlError(`Aggregate function ${f.name[0]!.toUpperCase()} not allowed in SQL function body for non-AGGREGATE function`, f.loc);
      }
    }
    for (const v of Object.values(n)) if (v && typeof v === 'object') walk(v);
  };
  walk(st.body);
}

/**
 * user-defined-aggregates.md, SQL UDAF parameters: inside the body an aggregate parameter appears only as an
 * argument of an aggregate function call; a NOT AGGREGATE parameter may appear anywhere (the reference analyzer's
 * wording, function_resolver.cc).
 */
function refuseLooseAggregateParams(st: A.CreateFunctionStmt): void {
  const aggregateParams = new Set(st.params.filter((p) => !p.notAggregate).map((p) => p.name.toLowerCase()));
  const walk = (n: unknown, inAggregate: boolean): void => {
    if (Array.isArray(n)) return n.forEach((x) => walk(x, inAggregate));
    if (!n || typeof n !== 'object') return;
    const o = n as { kind?: string };
    if (o.kind === 'Query') return; // a subquery's names are its own
    if (o.kind === 'PathExpr' && !inAggregate) {
      const p = n as A.PathExpr;
      const name = p.parts[0]!.toLowerCase();
      if (aggregateParams.has(name)) throw sqlError(`Function argument ${p.parts[0]} cannot be referenced outside aggregate function calls unless marked as NOT AGGREGATE`, p.loc);
    }
    let inner = inAggregate;
    if (o.kind === 'FunctionCall') {
      const f = n as A.FunctionCall;
      if (!f.over && lookupFunction(f.name.join('.'))?.kind === 'aggregate') inner = true;
    }
    for (const v of Object.values(n)) if (v && typeof v === 'object') walk(v, inner);
  };
  walk(st.body, false);
}

/** A routine's parameters have distinct names (case-insensitive), as ZetaSQL requires. */
function checkParamNames(params: readonly { name: string }[], loc: A.Loc): void {
  const seen = new Set<string>();
  for (const p of params) {
    const l = p.name.toLowerCase();
    if (seen.has(l)) throw sqlError(`Duplicate argument name ${p.name}`, loc);
    seen.add(l);
  }
}

/** The one-part names called anywhere in an AST (upper-cased, as the temporary functions are keyed). */
/**
 * user-defined-functions.md, Limitations: a persistent function's body names another persistent function with its
 * dataset; a bare name there names none (the body has no default dataset), even where the default dataset of this
 * request holds a function of that name.
 */
function refuseBarePersistentCalls(s: Session, st: A.CreateFunctionStmt): void {
  if (languageOf(st) !== undefined) return;
  const an = s.analyzer();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const n = node as { kind?: unknown; name?: unknown; loc?: A.Loc };
    if ((n.kind === 'FunctionCall' || n.kind === 'TvfRef') && Array.isArray(n.name) && n.name.length === 1 && !String(n.name[0]).includes('.')) {
      const name = String(n.name[0]);
      if (findUdf(an, [name])) throw sqlError(`Function not found: ${name}; the body of the persistent function ${st.name.join('.')} must qualify the function ${name} with its dataset`, n.loc ?? st.loc);
    }
    for (const v of Object.values(node)) walk(v);
  };
  walk(st.body ?? st.query);
}

/**
 * The table names of a persistent function's body (SQL, aggregate, table function) name their dataset, and their
 * project too when the function is made in another project than the one running the DDL: user-defined-functions.md
 * and user-defined-aggregates.md, Default project in the function body (such a CREATE fails); the body has no default
 * dataset (as a view's, views-intro.md Limitations; the persistent-UDF Limitations ask the same of function names).
 * Paths starting with a name the body binds (an alias, a CTE, a parameter) are not table names.
 */
function refuseUnqualifiedTables(body: unknown, params: readonly { name: string }[], otherProject: boolean, bareRefused: boolean): void {
  const bound = new Set(params.map((p) => p.name.toLowerCase()));
  const refs: A.TableRef[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const n = node as { kind?: unknown; alias?: unknown; name?: unknown; path?: A.Path };
    if (typeof n.alias === 'string') bound.add(n.alias.toLowerCase());
    if (n.kind === 'Cte' && typeof n.name === 'string') bound.add(n.name.toLowerCase());
    if (n.kind === 'TableRef' && n.path) {
      refs.push(node as A.TableRef);
      // A qualified table's implicit alias (FROM ds.t, t.arr).
      const parts = splitPath(n.path);
      if (parts.length > 1) bound.add(parts[parts.length - 1]!.toLowerCase());
    }
    for (const v of Object.values(node)) walk(v);
  };
  walk(body);
  for (const r of refs) {
    const parts = splitPath(r.path);
    const first = parts[0]!.toLowerCase();
    if (bound.has(first) || first === '_session' || first === 'information_schema') continue;
    if (parts.length === 1 && bareRefused) throw datasetUnqualified(parts[0]!, r.loc);
    if (parts.length === 2 && otherProject) throw projectUnqualified(parts, r.loc);
  }
}

function callNames(node: unknown, out: Set<string>): void {
  if (Array.isArray(node)) {
    for (const x of node) callNames(x, out);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const n = node as { kind?: unknown; name?: unknown };
  if (n.kind === 'FunctionCall' && Array.isArray(n.name) && n.name.length === 1) out.add(String(n.name[0]).toUpperCase());
  for (const v of Object.values(node)) callNames(v, out);
}

/**
 * The REST Routine fields of a routine's OPTIONS that INFORMATION_SCHEMA.ROUTINE_OPTIONS lists besides
 * library (importedLibraries): description, data_governance_type.
 */
/** A table function's options (data-definition-language: table_function_options_list). */
const TABLE_FUNCTION_OPTIONS = new Set(['description']);
/** The options of a SQL function (temporary or not; other languages and remote functions take their own). */
const SQL_FUNCTION_OPTIONS = new Set(['description', 'data_governance_type']);
/** The options of a SQL stored procedure. */
const PROCEDURE_OPTIONS = new Set(['description', 'strict_mode']);

function checkedOptions(opts: readonly A.OptionEntry[] | undefined, allowed: ReadonlySet<string>, what: string): readonly A.OptionEntry[] | undefined {
  checkOptionNames(opts, allowed, what);
  return opts;
}

async function routineOptionFields(s: Session, opts: readonly A.OptionEntry[] | undefined): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const o of opts ?? []) {
    const key = o.name.toLowerCase();
    if (key !== 'description' && key !== 'data_governance_type') continue;
    const v = await evalOption(s, o);
    if (v.value === null) continue;
    if (v.type.kind !== 'STRING') throw sqlError(`Invalid value for option ${key}: expected STRING but got ${typeToSql(v.type)}`, o.value.loc);
    if (key === 'description') out.description = v.value;
    // routines: data_governance_type takes one value, DATA_MASKING.
    else if (v.value !== 'DATA_MASKING') throw sqlError(`Invalid value for option data_governance_type: ${JSON.stringify(v.value)}; the supported value is "DATA_MASKING"`, o.value.loc);
    else out.dataGovernanceType = v.value;
  }
  return out;
}

/** REST Routine fields of a JavaScript / Python function (importedLibraries, pythonOptions). */
function externalRoutineFields(st: A.CreateFunctionStmt): Record<string, unknown> {
  if (languageOf(st) === 'js') {
    const libs = stringListOption(st, 'library');
    return libs?.length ? { importedLibraries: libs } : {};
  }
  const packages = stringListOption(st, 'packages');
  return { pythonOptions: { entryPoint: stringOption(st, 'entry_point'), ...(packages?.length ? { packages } : {}) } };
}

export async function createModel(s: Session, st: A.CreateModelStmt): Promise<QueryResult> {
  const id = targetId(s, st.name, st.loc);
  const cat = s.ctx.catalog;
  if (!cat.getDataset(id.projectId, id.datasetId)) throw tableNotFound(s.analyzer(), id);
  // The training query is analysed as the service does: a table it reads that does not exist is notFound.
  const training = st.query ? s.analyze(st.query) : undefined;
  const existing = cat.getChild('models', id.projectId, id.datasetId, id.tableId);
  if (existing && st.ifNotExists) return result('CREATE_MODEL', { ddlOperationPerformed: 'SKIP' });
  if (existing && !st.orReplace) throw already('Model', `${id.projectId}:${id.datasetId}.${id.tableId}`);
  const opts = await optionsToResource(s, st.options);
  const options = (opts.options as Record<string, unknown> | undefined) ?? {};
  const labels = (options.input_label_cols as string[] | undefined) ?? ['label'];
  const isLabel = (name: string): boolean => labels.some((l) => l.toLowerCase() === name.toLowerCase());
  // The training query's columns as StandardSqlFields: the label columns, the others are features
  // (bq show --model prints both; ML.PREDICT's stub names predicted_<label> from the labels).
  const trained = training?.plan.columns.map((c, i) => ({ name: training.outputNames[i] ?? c.name, type: typeJson(c.type) }));
  const labelColumns = trained?.filter((c) => isLabel(c.name));
  const now = String(Date.now());
  await cat.putChild('models', id.projectId, id.datasetId, id.tableId, {
    modelReference: { projectId: id.projectId, datasetId: id.datasetId, modelId: id.tableId },
    modelType: String((options.model_type as string | undefined) ?? 'MODEL_TYPE_UNSPECIFIED').toUpperCase(),
    ...(trained ? { featureColumns: trained.filter((c) => !isLabel(c.name)) } : {}),
    labelColumns: labelColumns?.length ? labelColumns : labels.map((name) => ({ name, type: { typeKind: 'FLOAT64' } })),
    creationTime: now,
    lastModifiedTime: now,
    location: 'US',
  });
  return result('CREATE_MODEL', { ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE' });
}

// ---------------------------------------------------------------- procedures and row-access policies

export async function createProcedure(s: Session, st: A.CreateProcedureStmt): Promise<QueryResult> {
  checkParamNames(st.params, st.loc);
  checkOptionNames(st.options, PROCEDURE_OPTIONS, 'CREATE PROCEDURE');
  const strict = st.options?.find((o) => o.name.toLowerCase() === 'strict_mode');
  // Kept on the routine as the REST Routine's strictMode (routines.get shows it; unset means the default, TRUE).
  let strictMode: boolean | undefined;
  if (strict) {
    const v = await evalOption(s, strict);
    if (v.type.kind !== 'BOOL' && v.value !== null) throw sqlError(`Invalid value for option strict_mode: expected BOOL but got ${typeToSql(v.type)}`, strict.value.loc);
    if (typeof v.value === 'boolean') strictMode = v.value;
  }
  const id = targetId(s, st.name, st.loc);
  const cat = s.ctx.catalog;
  if (!cat.getDataset(id.projectId, id.datasetId)) throw tableNotFound(s.analyzer(), id);
  const existing = cat.getChild('routines', id.projectId, id.datasetId, id.tableId);
  const routine = { projectId: id.projectId, datasetId: id.datasetId, routineId: id.tableId };
  if (existing && st.ifNotExists) return result('CREATE_PROCEDURE', { ddlOperationPerformed: 'SKIP', ddlTargetRoutine: routine });
  if (existing && !st.orReplace) throw already('Procedure', `${id.projectId}:${id.datasetId}.${id.tableId}`);
  // data-definition-language.md, Default project in procedure body: the project that owns the procedure, not
  // necessarily the one running CREATE PROCEDURE; strict_mode's checks resolve the body there.
  const saved = s.env;
  s.env = { ...saved, projectId: id.projectId };
  try {
    checkProcedureTables(s, st);
  } finally {
    s.env = saved;
  }
  const now = String(Date.now());
  await cat.putChild('routines', id.projectId, id.datasetId, id.tableId, {
    routineReference: routine,
    routineType: 'PROCEDURE',
    language: 'SQL',
    definitionBody: st.bodyText,
    arguments: st.params.map((p) => ({ name: p.name, mode: p.mode ?? 'IN', dataType: typeJson(typeFromNode(p.type)) })),
    ...(await routineOptionFields(s, st.options)),
    ...(strictMode === undefined ? {} : { strictMode }),
    ddl: s.ctx.sql.slice(st.start, st.end),
    creationTime: (existing?.creationTime as string) ?? now,
    lastModifiedTime: now,
  });
  return result('CREATE_PROCEDURE', { ddlOperationPerformed: existing ? 'REPLACE' : 'CREATE', ddlTargetRoutine: routine });
}

/**
 * strict_mode (the default, TRUE): the service checks a procedure body's references when the procedure is made,
 * so a dataset-qualified table that does not exist is an error of the CREATE (procedures: strict_mode). Checked
 * here for the names that are plainly tables: FROM paths of two or three parts whose dataset exists, less the
 * tables the body makes itself; bare names (CTEs, temporary tables, array paths) and dynamic SQL are left to the call.
 */
function checkProcedureTables(s: Session, st: A.CreateProcedureStmt): void {
  const opt = st.options?.find((o) => o.name.toLowerCase() === 'strict_mode');
  if (opt && opt.value.kind === 'BoolLiteral' && !opt.value.value) return;
  const refs: A.TableRef[] = [];
  const calls: A.CallStmt[] = [];
  const made = new Set<string>();
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!n || typeof n !== 'object') return;
    const o = n as { kind?: string; path?: A.Path; name?: A.Path };
    if (o.kind === 'TableRef') refs.push(n as A.TableRef);
    if (o.kind === 'Call') calls.push(n as A.CallStmt);
    if (o.kind && /^Create/.test(o.kind) && Array.isArray(o.name)) made.add(splitPath(o.name).pop()!.toLowerCase());
    for (const v of Object.values(n)) if (v && typeof v === 'object') walk(v);
  };
  walk(st.body);
  const cat = s.ctx.catalog;
  /** The table a FROM path names, when it is plainly one: two or three parts, its dataset there, not made by the body. */
  const tableOf = (r: A.TableRef): TableId | undefined => {
    const parts = splitPath(r.path);
    if (parts.length < 2 || parts.length > 3 || parts.some((p) => p.toUpperCase() === 'INFORMATION_SCHEMA') || made.has(parts[parts.length - 1]!.toLowerCase())) return undefined;
    const projectId = parts.length === 3 ? parts[0]! : s.env.projectId;
    const datasetId = parts[parts.length - 2]!;
    return cat.getDataset(projectId, datasetId) ? { projectId, datasetId, tableId: parts[parts.length - 1]! } : undefined;
  };
  for (const r of refs) {
    const id = tableOf(r);
    if (id && !cat.getTable(id)) throw tableNotFound(s.analyzer(), id);
  }
  // The body's CALL targets exist too: the page's strict_mode says a procedure calling itself is to be made with
  // strict_mode=FALSE, for the errors its not yet existing causes. System procedures (BQ.) and names in datasets
  // that do not exist (yet) are left to the call.
  for (const c of calls) {
    const parts = splitPath(c.name);
    if (parts[0]?.toUpperCase() === 'BQ' || made.has(parts[parts.length - 1]!.toLowerCase())) continue;
    let id: TableId;
    try {
      id = targetId(s, c.name, c.loc);
    } catch {
      continue;
    }
    if (cat.getDataset(id.projectId, id.datasetId) && !cat.getChild('routines', id.projectId, id.datasetId, id.tableId)) {
      throw new QueryError(`Not found: Procedure ${id.projectId}:${id.datasetId}.${id.tableId}`, 'notFound', 404);
    }
  }
  checkProcedureColumns(s, st, tableOf);
}

/**
 * strict_mode's other half ("non-existent tables or columns"): each query of the body that reads only tables that
 * exist is analysed at CREATE, and an unknown column or field there is the CREATE's error. Names the analyser cannot
 * know yet (the procedure's arguments, its variables, FOR variables) are left to the call, as are other errors.
 */
function checkProcedureColumns(s: Session, st: A.CreateProcedureStmt, tableOf: (r: A.TableRef) => TableId | undefined): void {
  const locals = new Set(st.params.map((p) => p.name.toLowerCase()));
  const queries: A.QueryStatement[] = [];
  const walk = (n: unknown, top: boolean): void => {
    if (Array.isArray(n)) return n.forEach((x) => walk(x, top));
    if (!n || typeof n !== 'object') return;
    const o = n as { kind?: string };
    if (o.kind === 'Declare') for (const v of (n as A.DeclareStmt).names) locals.add(v.toLowerCase());
    if (o.kind === 'ForIn') locals.add((n as A.ForInStmt).variable.toLowerCase());
    if (o.kind === 'QueryStatement' && top) queries.push(n as A.QueryStatement);
    // Statements nest in blocks, branches and loops; a query's own subqueries are not statements.
    for (const v of Object.values(n)) if (v && typeof v === 'object') walk(v, top && o.kind !== 'QueryStatement');
  };
  walk(st.body, true);
  for (const q of queries) {
    const refs: A.TableRef[] = [];
    const collect = (n: unknown): void => {
      if (Array.isArray(n)) return n.forEach(collect);
      if (!n || typeof n !== 'object') return;
      if ((n as { kind?: string }).kind === 'TableRef') refs.push(n as A.TableRef);
      for (const v of Object.values(n)) if (v && typeof v === 'object') collect(v);
    };
    collect(q.query);
    if (!refs.length || refs.some((r) => !tableOf(r))) continue;
    try {
      s.analyze(q.query);
    } catch (e) {
      if (!(e instanceof QueryError)) continue;
      const unknown = /^Unrecognized name: (\w+)/.exec(e.message);
      if ((unknown && !locals.has(unknown[1]!.toLowerCase())) || /^(Name \w+ not found inside|Field name \w+ does not exist in) /.test(e.message)) throw e;
    }
  }
}

export function findProcedure(s: Session, name: A.Path, loc: A.Loc): A.CreateProcedureStmt {
  const id = targetId(s, name, loc);
  // A procedure made by REST routines.insert has its DDL written from its fields.
  const ddl = ddlOfRoutine(s.ctx.catalog.getChild('routines', id.projectId, id.datasetId, id.tableId));
  const stmt = ddl ? s.env.parse(ddl).statements[0] : undefined;
  if (!stmt || stmt.kind !== 'CreateProcedure') throw new QueryError(`Not found: Procedure ${id.projectId}:${id.datasetId}.${id.tableId}`, 'notFound', 404);
  return stmt;
}
