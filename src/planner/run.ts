// The SQL pipeline entry the engine imports: parse -> for each statement:
// analyze -> optimize -> execute -> QueryResult. Multi-statement scripts run
// through a small interpreter (DECLARE/SET/IF/loops/BEGIN...EXCEPTION/RAISE/
// ASSERT/EXECUTE IMMEDIATE) and report statementType SCRIPT with the last
// SELECT's rows.
import type * as A from '../../grammar/ast.js';
import '../functions/index.js';
import { coerce, literal } from '../analyzer/coercion.js';
import { typeFromNode, canCoerce } from '../analyzer/types.js';
import { checkResultArrays } from '../executor/result-check.js';
import { T, typeEquals, typeToSql, type SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { getValue } from '../types/vector.js';
import { childJobId, QueryError, resourceError, type QueryContext, type QueryResult, type RunQuery, type TypedValue } from './api.js';
import { checkpoint } from '../executor/context.js';
import { Session, parse, parseCached } from './session.js';
import * as Dml from './dml.js';
import { alter } from './ddl-alter.js';
import { createRowAccessPolicy, grant } from './ddl-access.js';
import { createFunction, createModel, createProcedure, findProcedure } from './ddl-routines.js';
import { createPropertyGraph } from './ddl-graph.js';
import { createSchema, createTable, createView, drop, undropSchema } from './ddl-tables.js';
import { checkPartitionFilters, checkResultNames } from './partition-filter.js';
import * as D from './data-statements.js';
import { statementTypeOf } from './statement-type.js';
import { sqlError } from '../analyzer/errors.js';
import { splitPath, tableIdOf } from '../analyzer/names.js';
import type { TableId } from '../storage/api.js';
import { DDL_IN_TRANSACTION } from '../storage/transaction.js';
import { fitParams, ParamRefusal } from '../types/table-values.js';

const splitPathLength = (p: A.Path): number => splitPath(p).length;
import { foldExpr } from './rules/fold.js';
import { resolveZone } from '../functions/civil.js';
import { createSearchIndex } from './search-index.js';
import { checkVariableSize } from './variable-limits.js';
import { ddlOfRoutine } from '../udf/routine-ddl.js';

class BreakSignal {
  constructor(readonly label: string | undefined) {}
}
class ContinueSignal {
  constructor(readonly label: string | undefined) {}
}
class ReturnSignal {}

/** Where a statement sits: offsets into the script's text, or into a CALLed procedure's CREATE PROCEDURE text. */
export interface StackFrame {
  readonly start: number;
  readonly end: number;
  readonly procedure?: { readonly text: string; readonly id: string };
}

/** 1-based line and column of a source offset (script stack frames). */
export function sourcePosition(sql: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < sql.length; i++) {
    if (sql[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** One SQL statement a script ran (where, and its result or error): the engine reports each as a child job. */
export interface ScriptChild {
  /** Innermost first: the statement, then each CALL that led to it. */
  readonly frames: readonly StackFrame[];
  readonly result?: QueryResult;
  readonly error?: QueryError;
  /** A failed statement's type (a statement that ran has it in `result`). */
  readonly statementType?: string;
  /** Older than the newest MAX_CHILD_ROWS children: its rows were let go. */
  readonly rowsDropped?: boolean;
}

/** Script children whose rows are kept (the newest): a long loop must not hold every SELECT's batches. */
const MAX_CHILD_ROWS = 100;
/** Script children kept at least (the newest; the engine reports 1,000): a loop may run millions of statements. */
const MAX_CHILDREN = 1000;

/** A script's child jobs: the newest ones, and how many ran before them. */
export interface ScriptChildren {
  readonly list: readonly ScriptChild[];
  readonly dropped: number;
  /** Bytes processed and billed by all of them. */
  readonly bytes: number;
  readonly billed: number;
}

class ChildList implements ScriptChildren {
  readonly list: ScriptChild[] = [];
  dropped = 0;
  /** Bytes processed and billed by all children so far (@@script.bytes_processed, the script job's statistics). */
  bytes = 0;
  billed = 0;
  /** Whether a DECLARE or SET ran after the last child: @@row_count describes the previous statement only. */
  afterNonDml = false;

  push(c: ScriptChild): void {
    const kids = this.list;
    kids.push(c);
    this.afterNonDml = false;
    this.bytes += c.result?.totalBytesProcessed ?? 0;
    this.billed += c.result?.totalBytesBilled ?? 0;
    const old = kids[kids.length - 1 - MAX_CHILD_ROWS];
    if (old?.result?.batches.length) kids[kids.length - 1 - MAX_CHILD_ROWS] = { ...old, result: { ...old.result, batches: [] }, rowsDropped: true };
    // Trimmed in steps of MAX_CHILDREN, so each child is moved at most once.
    if (kids.length > 2 * MAX_CHILDREN) {
      kids.splice(0, MAX_CHILDREN);
      this.dropped += MAX_CHILDREN;
    }
  }
}

/** The error of a script that failed after running statements, with their child jobs. */
export type ScriptFailure = QueryError & { scriptChildren?: ScriptChildren };

/**
 * Procedural statements: EXECUTE IMMEDIATE runs none of them (a labeled loop starts with its label). CALL is one
 * (procedural-language.md, CALL: it can't be nested in an EXECUTE IMMEDIATE statement), and so are BEGIN / COMMIT /
 * ROLLBACK TRANSACTION (the page's EXECUTE IMMEDIATE runs one query, DDL, DML or DCL statement).
 */
const PROCEDURAL = new Set<A.Statement['kind']>(['Block', 'If', 'CaseStmt', 'Loop', 'While', 'Repeat', 'ForIn', 'Declare', 'Break', 'Continue', 'Return', 'Raise', 'Call', 'Transaction']);

/** Control flow and variables run inside the script job; every other statement is a child job of its own. */
const NOT_CHILD_JOBS = new Set<A.Statement['kind']>(['Block', 'If', 'CaseStmt', 'Loop', 'While', 'Repeat', 'ForIn', 'Declare', 'Set', 'Break', 'Continue', 'Return', 'Raise', 'Call']);

interface ScriptState {
  /** SQL statements run so far (script child jobs); unset outside scripts. */
  children?: ChildList;
  /** More than one statement: each runs as a child job with its own id (@@current_job_id). */
  script?: boolean;
  /** The CALLs running now (innermost first) and the procedure whose body runs. */
  calls?: readonly StackFrame[];
  procedure?: StackFrame['procedure'];
  last?: QueryResult;
  lastSelect?: QueryResult;
  count: number;
  error?: QueryError;
  /** Text of the statement running now (for @@error.statement_text). */
  current?: string;
  /** performance.now() past which the script fails (scriptTimeLimitMs). */
  deadline: number;
}

async function runSelect(s: Session, q: A.Query): Promise<QueryResult> {
  // A top-level result's repeated names are renamed (a, a_1) unless the job writes a destination table
  // (query-syntax.md, Duplicate aliases).
  const r = s.analyze(q, { allowDuplicateNames: !s.ctx.hasDestination });
  checkPartitionFilters(s, r.plan);
  checkResultNames(r.outputNames);
  const columns = r.plan.columns.map((c, i) => ({ name: r.outputNames[i] ?? '', type: c.type }));
  const plan = s.optimize(r.plan);
  await s.charge(plan);
  if (s.ctx.dryRun) return { columns, batches: [], statementType: 'SELECT', totalBytesProcessed: 0 };
  const batches = await s.runOptimized(plan);
  checkResultArrays(columns, batches);
  return { columns, batches, statementType: 'SELECT', totalBytesProcessed: 0 };
}

/** A statement's result with the bytes it read (Session.charge) as its job statistics. */
function withBytes(s: Session, r: QueryResult): QueryResult {
  const refs = s.referenced.statistics();
  const statistics = r.statistics || refs.referencedTables || refs.referencedRoutines ? { ...r.statistics, ...refs } : undefined;
  return { ...r, totalBytesProcessed: s.scanned.processed, totalBytesBilled: s.scanned.billed, ...(statistics ? { statistics } : {}) };
}

function truthy(v: TypedValue, loc: A.Loc): boolean {
  if (v.type.kind !== 'BOOL' && v.value !== null) throw sqlError(`Condition must be of type BOOL, but was ${typeToSql(v.type)}`, loc);
  return v.value === true;
}

async function declare(s: Session, st: A.DeclareStmt): Promise<void> {
  let tv: TypedValue;
  if (st.default) {
    const declared = st.type ? typeFromNode(st.type) : undefined;
    const v = await s.evalScalar(st.default, undefined, declared);
    if (declared) {
      const t = declared;
      if (!typeEquals(v.type, t) && !canCoerce(v.type, t)) throw sqlError(`Cannot coerce ${typeToSql(v.type)} to ${typeToSql(t)}`, st.default.loc);
      const f = foldExpr(coerce(literal(v.type, v.value), t), s.exec.eval);
      tv = { type: t, value: f.kind === 'literal' ? f.value : v.value };
    } else tv = v;
  } else {
    if (!st.type) throw sqlError('DECLARE requires a type or a default value', st.loc);
    tv = { type: typeFromNode(st.type), value: null };
  }
  tv = { type: tv.type, value: fitVariable(tv.type, tv.value) };
  for (const n of st.names) {
    if (s.variables.has(n.toLowerCase())) throw sqlError(`Variable ${n} is already declared`, st.loc);
    assignVariable(s, n, tv, st.loc);
  }
}

/** Sets a user variable, within the size limits of variable-limits.ts. */
function assignVariable(s: Session, name: string, tv: TypedValue, loc?: A.Loc): void {
  const key = name.toLowerCase();
  checkVariableSize(s.variables, key, tv, loc);
  s.variables.set(key, tv);
}

/**
 * A value held to its variable's parameterized type (data-types page: STRING(L) / BYTES(L) / NUMERIC(P, S) apply to
 * declared variables as to columns: a decimal rounded to the scale, a value that does not fit refused), inside ARRAY
 * elements and STRUCT fields too. Every write of a declared variable goes through here.
 */
function fitVariable(t: SqlType, v: Value): Value {
  if (v === null || !hasParams(t)) return v;
  if (t.kind === 'ARRAY') return (v as Value[]).map((x) => fitVariable(t.element, x));
  if (t.kind === 'STRUCT') return (v as Value[]).map((x, i) => fitVariable(t.fields[i]!.type, x));
  const params = (t as { params?: readonly number[] }).params;
  if (!params?.length) return v;
  const r = fitParams(t.kind, params, v);
  if (r instanceof ParamRefusal) throw new QueryError(r.message, 'invalidQuery');
  return r;
}

const hasParams = (t: SqlType): boolean =>
  t.kind === 'ARRAY' ? hasParams(t.element) : t.kind === 'STRUCT' ? t.fields.some((f) => hasParams(f.type)) : !!(t as { params?: readonly number[] }).params?.length;

const WRITABLE_SYSTEM_VARIABLES = new Set(['dataset_id', 'dataset_project_id', 'location', 'query_label', 'reservation', 'time_zone']);
const READ_ONLY_SYSTEM_VARIABLES = new Set(['current_job_id', 'last_job_id', 'project_id', 'row_count', 'session_id']);

async function setVar(s: Session, st: A.SetStmt): Promise<void> {
  // One value per variable: a tuple naming one twice (in any case) is refused before its value is evaluated, as the
  // reference implementation's script executor does (the procedural-language page is silent).
  const seen = new Set<string>();
  for (const t of st.targets) {
    const key = (t.system ? '@@' : '') + t.name.toLowerCase();
    if (seen.has(key)) throw sqlError(`Assigning multiple values to variable: ${t.name}`, st.loc);
    seen.add(key);
  }
  const one = !st.tuple && !st.targets[0]!.system ? s.variables.get(st.targets[0]!.name.toLowerCase()) : undefined;
  const v = await s.evalScalar(st.value, undefined, one?.type);
  const assign = (name: string, system: boolean, val: TypedValue, nullTakes = false) => {
    if (system) {
      const lower = name.toLowerCase();
      // The system-variables reference: six are read and write, the others read-only; other names do not exist.
      if (!WRITABLE_SYSTEM_VARIABLES.has(lower)) {
        const readOnly = READ_ONLY_SYSTEM_VARIABLES.has(lower) || lower.startsWith('error.') || lower.startsWith('script.');
        throw sqlError(readOnly ? `Cannot set read-only system variable @@${lower}` : `Unrecognized system variable: @@${name}`, st.loc);
      }
      // The reference: every writable system variable is a STRING; @@location only as the query's first statement.
      if (val.type.kind !== 'STRING' && val.value !== null) throw sqlError(`System variable @@${lower} must be set to a STRING, not ${typeToSql(val.type)}`, st.loc);
      if (lower === 'location' && st !== s.firstStatement) throw sqlError('SET @@location must be the first statement of the query', st.loc);
      if (lower === 'time_zone' || lower === 'dataset_id' || lower === 'dataset_project_id') {
        // system-variables.md: @@dataset_project_id set to NULL means the query-executing project (@@project_id).
        const nullProject = lower === 'dataset_project_id' && val.value === null;
        if (!nullProject && (val.type.kind !== 'STRING' || val.value === null)) throw sqlError(`System variable @@${lower} must be set to a non-NULL STRING, not ${val.value === null ? 'NULL' : typeToSql(val.type)}`, st.loc);
        const text = nullProject ? s.ctx.projectId : (val.value as string);
        if (lower === 'time_zone') {
          resolveZone(text);
          s.setTimeZone(text);
        } else s.setDefaultDataset(lower === 'dataset_id' ? 'datasetId' : 'projectId', text);
      }
      // Every writable system variable is a STRING, so a NULL keeps that type (`SET @@x = NULL` has an INT64 NULL).
      s.variables.set('@@' + name.toLowerCase(), val.value === null ? { type: T.STRING, value: null } : val);
      return;
    }
    const cur = s.variables.get(name.toLowerCase());
    if (!cur) throw sqlError(`Undeclared variable: ${name}`, st.loc);
    let value = val.value;
    if (!typeEquals(cur.type, val.type)) {
      // SET assigns as an implicit coercion does, not as a CAST: a literal was coerced already by evalScalar (literal
      // rules); a tuple's NULL field has lost its literal origin, so a NULL is taken there.
      if (!canCoerce(val.type, cur.type) && !(nullTakes && val.value === null)) {
        throw sqlError(`Cannot assign ${typeToSql(val.type)} to variable ${name} of type ${typeToSql(cur.type)}`, st.loc);
      }
      const f = foldExpr(coerce(literal(val.type, val.value), cur.type), s.exec.eval);
      if (f.kind !== 'literal') throw sqlError(`Cannot assign ${typeToSql(val.type)} to variable ${name} of type ${typeToSql(cur.type)}`, st.loc);
      value = f.value;
    }
    assignVariable(s, name, { type: cur.type, value: fitVariable(cur.type, value) }, st.loc);
  };
  if (st.tuple) {
    if (v.type.kind !== 'STRUCT' || v.type.fields.length !== st.targets.length) throw sqlError('SET with a tuple requires a STRUCT value with matching fields', st.loc);
    const fields = v.type.fields;
    st.targets.forEach((t, i) => assign(t.name, t.system, { type: fields[i]!.type, value: v.value === null ? null : (v.value as Value[])[i]! }, true));
  } else assign(st.targets[0]!.name, st.targets[0]!.system, v);
}

async function runBlock(s: Session, stmts: readonly A.Statement[], state: ScriptState): Promise<void> {
  for (const st of stmts) await runStatement(s, st, state);
}

async function loopBody(s: Session, label: string | undefined, body: readonly A.Statement[], state: ScriptState): Promise<'break' | 'continue'> {
  try {
    await runBlock(s, body, state);
    return 'continue';
  } catch (e) {
    if (e instanceof BreakSignal && (!e.label || e.label.toLowerCase() === label?.toLowerCase())) return 'break';
    if (e instanceof ContinueSignal && (!e.label || e.label.toLowerCase() === label?.toLowerCase())) return 'continue';
    throw e;
  }
}

/**
 * How long a script may run: the service's cumulative time limit of a
 * multi-statement query (24 hours), or WAREHOUSE_EMULATOR_SCRIPT_TIMEOUT_MS
 * (BIGQUERY_EMULATOR_SCRIPT_TIMEOUT_MS) for tests that must reach it.
 * Loops have no iteration limit of their own, as in the service.
 */
function scriptTimeLimitMs(): number {
  const env = Number(process.env.WAREHOUSE_EMULATOR_SCRIPT_TIMEOUT_MS || process.env.BIGQUERY_EMULATOR_SCRIPT_TIMEOUT_MS);
  return Number.isFinite(env) && env > 0 ? env : 24 * 3600 * 1000;
}

function timedOut(limitMs: number): QueryError {
  const after = limitMs >= 360_000 ? `${(limitMs / 3_600_000).toFixed(1)} hours` : `${(limitMs / 1000).toFixed(1)} seconds`;
  return new QueryError(`Operation timed out after ${after}. Consider reducing the amount of work performed by your operation so that it can complete within this limit.`, 'timeout');
}

/** The statement (and the CALLs leading to it) where each error of the script arose. */
const errorFrames = new WeakMap<QueryError, StackFrame[]>();
/** Errors of RAISE USING MESSAGE = NULL: a handler's @@error.message is NULL (procedural-language.md, RAISE). */
const nullMessages = new WeakSet<QueryError>();

const STACK_FRAME_TYPE: SqlType = { kind: 'STRUCT', fields: [{ name: 'line', type: T.INT64 }, { name: 'column', type: T.INT64 }, { name: 'filename', type: T.STRING }, { name: 'location', type: T.STRING }] };

const ERROR_VARIABLES = ['@@error.message', '@@error.statement_text', '@@error.stack_trace', '@@error.formatted_stack_trace'];

/** @@error.stack_trace (a frame per statement, innermost first; `location` names a procedure) and its text form. */
function setErrorTrace(s: Session, frames: readonly StackFrame[]): void {
  const rows = frames.map((f) => {
    const p = sourcePosition(f.procedure ? f.procedure.text : s.ctx.sql, f.start);
    return [BigInt(p.line), BigInt(p.column), null, f.procedure?.id ?? null] as Value[];
  });
  s.variables.set('@@error.stack_trace', { type: { kind: 'ARRAY', element: STACK_FRAME_TYPE }, value: rows });
  const text = rows.map((r) => `At ${r[3] ?? ''}[${r[0]}:${r[1]}]`).join('\n');
  s.variables.set('@@error.formatted_stack_trace', { type: T.STRING, value: text });
}

function framesOf(st: A.Statement, state: ScriptState): StackFrame[] {
  return [{ start: st.start, end: st.end, ...(state.procedure ? { procedure: state.procedure } : {}) }, ...(state.calls ?? [])];
}

// The DML page lists TRUNCATE TABLE among the DML statements, and @@row_count follows "a DML statement": after
// TRUNCATE it is the rows the statement removed, as its numDmlAffectedRows.
const DML = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE', 'TRUNCATE_TABLE']);

/**
 * The documented read-only @@script.* system variables, as of the statement about to run, and
 * the two that describe the previous child job: @@last_job_id, and @@row_count (the rows a DML
 * statement modified; NULL after any other statement and outside scripts).
 */
function setScriptVariables(s: Session, children: ChildList, script: boolean): void {
  const n = children.dropped + children.list.length;
  // system-variables reference: in a script, @@current_job_id is the job of the current statement, not the script's.
  if (script) s.setJobId(childJobId(s.ctx.jobId, n));
  const prev = children.list[children.list.length - 1];
  const dml = !children.afterNonDml && prev?.result && DML.has(prev.result.statementType) ? prev.result.numDmlAffectedRows : undefined;
  s.variables.set('@@row_count', { type: T.INT64, value: dml === undefined ? null : BigInt(dml) });
  s.variables.set('@@last_job_id', { type: T.STRING, value: n ? childJobId(s.ctx.jobId, n - 1) : null });
  const bytes = BigInt(children.bytes);
  s.variables.set('@@script.num_child_jobs', { type: T.INT64, value: BigInt(n) });
  s.variables.set('@@script.bytes_processed', { type: T.INT64, value: bytes });
  s.variables.set('@@script.bytes_billed', { type: T.INT64, value: BigInt(children.billed) });
  s.variables.set('@@script.slot_ms', { type: T.INT64, value: 0n });
}

async function runStatement(s: Session, st: A.Statement, state: ScriptState): Promise<void> {
  if (state.children) setScriptVariables(s, state.children, state.script === true);
  s.advanceClock();
  try {
    await runOne(s, st, state);
    // DECLARE and SET are statements but no child jobs: after one, the previous statement is no DML.
    if (state.children && (st.kind === 'Declare' || st.kind === 'Set')) state.children.afterNonDml = true;
  } catch (e0) {
    const e = resourceError(e0) ?? e0;
    // Where the error arose: the innermost statement (enclosing blocks and CALLs see it first).
    if (e instanceof QueryError && !errorFrames.has(e)) errorFrames.set(e, framesOf(st, state));
    // A failed statement is a failed child job too (the script may go on in an EXCEPTION handler).
    if (state.children && e instanceof QueryError && !NOT_CHILD_JOBS.has(st.kind)) state.children.push({ frames: framesOf(st, state), error: e, statementType: statementTypeOf(st) });
    throw e;
  }
}

/**
 * Before every statement and loop iteration: cancellation, a turn of the event
 * loop now and then (a loop of SETs never reaches an operator's checkpoint and
 * would hold the engine), and the script's time limit.
 */
async function tick(s: Session, state: ScriptState): Promise<void> {
  await checkpoint(s.exec);
  if (performance.now() > state.deadline) throw timedOut(scriptTimeLimitMs());
}

/**
 * Statements that run in a statement scope of their own (one snapshot; see
 * TransactionControl): all but control flow, whose conditions are scoped
 * where they are evaluated (Session.evalScalar), and EXECUTE IMMEDIATE and
 * CALL, whose statements are scoped one by one.
 */
const UNSCOPED = new Set<A.Statement['kind']>(['Block', 'If', 'CaseStmt', 'Loop', 'While', 'Repeat', 'ForIn', 'Declare', 'Set', 'Break', 'Continue', 'Return', 'Raise', 'Call', 'ExecuteImmediate', 'Transaction', 'Assert']);


/** Whether a statement changes permanent catalog objects (refused inside a transaction; temporary tables and functions are allowed). */
function permanentDdl(st: A.Statement): boolean {
  switch (st.kind) {
    case 'CreateTable':
    case 'CreateFunction':
      return !st.temp;
    case 'Drop':
      return st.objectType !== 'TABLE' && st.objectType !== 'FUNCTION' ? true : splitPathLength(st.name) > 1;
    case 'CreateView':
    case 'CreatePropertyGraph':
    case 'Alter':
    case 'CreateSchema':
    case 'UndropSchema':
    case 'CreateModel':
    case 'CreateProcedure':
    case 'CreateRowAccessPolicy':
    case 'CreateIndex':
    case 'Grant':
      return true;
    default:
      return false;
  }
}

async function runOne(s: Session, st: A.Statement, state: ScriptState): Promise<void> {
  await tick(s, state);
  const tx = s.ctx.catalog.transactions;
  if (!tx || UNSCOPED.has(st.kind)) return runStatementKind(s, st, state);
  if (tx.inTransaction && permanentDdl(st)) throw sqlError(DDL_IN_TRANSACTION, st.loc);
  await tx.beginStatement();
  try {
    await runStatementKind(s, st, state);
  } finally {
    tx.endStatement();
  }
}

async function runStatementKind(s: Session, st: A.Statement, state: ScriptState): Promise<void> {
  state.count++;
  s.scanned.clear();
  s.referenced.clear();
  s.versions.clear();
  if (st.kind !== 'Block' && st.kind !== 'If' && st.kind !== 'While' && st.kind !== 'Loop' && st.kind !== 'Repeat' && st.kind !== 'ForIn' && st.kind !== 'CaseStmt') {
    // A procedure's statements have their offsets in the procedure's own text, not in the script's.
    state.current = (state.procedure ? state.procedure.text : s.ctx.sql).slice(st.start, st.end);
  }
  let r: QueryResult | undefined;
  // Replacing and keeping an existing object at once is contradictory (the grammar allows both).
  if (st.kind.startsWith('Create') && (st as { orReplace?: boolean }).orReplace && (st as { ifNotExists?: boolean }).ifNotExists) {
    throw sqlError(`CREATE ${st.kind.slice('Create'.length).toUpperCase()} cannot have both OR REPLACE and IF NOT EXISTS`, st.loc);
  }
  switch (st.kind) {
    case 'QueryStatement':
      r = await runSelect(s, st.query);
      break;
    case 'CreateTable':
      r = await createTable(s, st);
      break;
    case 'CreateView':
      r = await createView(s, st);
      break;
    case 'CreatePropertyGraph':
      r = await createPropertyGraph(s, st);
      break;
    case 'Drop':
      r = await drop(s, st);
      break;
    case 'Insert':
      r = await Dml.insert(s, st);
      break;
    case 'Update':
      r = await Dml.update(s, st);
      break;
    case 'Delete':
      r = await Dml.del(s, st);
      break;
    case 'Merge':
      r = await Dml.merge(s, st);
      break;
    case 'Truncate':
      r = await Dml.truncate(s, st);
      break;
    case 'Alter':
      r = await alter(s, st);
      break;
    case 'CreateSchema':
      r = await createSchema(s, st);
      break;
    case 'UndropSchema':
      r = await undropSchema(s, st);
      break;
    case 'CreateFunction':
      r = await createFunction(s, st);
      break;
    case 'CreateModel':
      r = await createModel(s, st);
      break;
    case 'CreateProcedure':
      r = await createProcedure(s, st);
      break;
    case 'CreateRowAccessPolicy':
      r = await createRowAccessPolicy(s, st);
      break;
    case 'CreateIndex':
      r = await createSearchIndex(s, st);
      break;
    case 'Declare':
      await declare(s, st);
      return;
    case 'Set':
      await setVar(s, st);
      return;
    case 'If': {
      for (const b of st.branches) {
        if (truthy(await s.evalScalar(b.cond), b.cond.loc)) return runBlock(s, b.body, state);
      }
      if (st.else) await runBlock(s, st.else, state);
      return;
    }
    case 'CaseStmt': {
      if (st.operand) {
        // A simple CASE statement matches as the CASE expression does (procedural-language page): the operand is
        // evaluated once, the WHEN values coerce to a common type with it, and a NULL WHEN never matches.
        const pick: A.Expr = {
          kind: 'CaseExpr',
          loc: st.loc,
          operand: st.operand,
          whens: st.whens.map((w, i) => ({ when: w.when, then: { kind: 'IntLiteral', loc: w.when.loc, text: String(i), hex: false } })),
        };
        const i = (await s.evalScalar(pick)).value;
        if (i !== null) return runBlock(s, st.whens[Number(i)]!.body, state);
      } else {
        for (const w of st.whens) if (truthy(await s.evalScalar(w.when), w.when.loc)) return runBlock(s, w.body, state);
      }
      if (st.else) await runBlock(s, st.else, state);
      return;
    }
    case 'Loop':
      for (;;) {
        await tick(s, state);
        if ((await loopBody(s, st.label, st.body, state)) === 'break') return;
      }
    case 'While':
      for (;;) {
        await tick(s, state);
        if (!truthy(await s.evalScalar(st.cond), st.cond.loc)) return;
        if ((await loopBody(s, st.label, st.body, state)) === 'break') return;
      }
    case 'Repeat':
      for (;;) {
        await tick(s, state);
        if ((await loopBody(s, st.label, st.body, state)) === 'break') return;
        if (truthy(await s.evalScalar(st.until), st.until.loc)) return;
      }
    case 'ForIn': {
      const res = await s.scoped(() => runSelect(s, st.query));
      const cols = res.columns ?? [];
      const type = { kind: 'STRUCT' as const, fields: cols.map((c) => ({ name: c.name, type: c.type })) };
      const name = st.variable.toLowerCase();
      const prev = s.variables.get(name);
      try {
        for (const b of res.batches) {
          for (let i = 0; i < b.length; i++) {
            await tick(s, state);
            assignVariable(s, name, { type, value: b.columns.map((v) => getValue(v, i)) }, st.loc);
            if ((await loopBody(s, st.label, st.body, state)) === 'break') return;
          }
        }
      } finally {
        if (prev) s.variables.set(name, prev);
        else s.variables.delete(name);
      }
      return;
    }
    case 'Break':
      throw new BreakSignal(st.label);
    case 'Continue':
      throw new ContinueSignal(st.label);
    case 'Return':
      throw new ReturnSignal();
    case 'Block': {
      const declared = new Set(s.variables.keys());
      try {
        if (!st.exceptionHandler) await runBlock(s, st.body, state);
        else {
          try {
            await runBlock(s, st.body, state);
          } catch (e) {
            if (e instanceof BreakSignal || e instanceof ContinueSignal || e instanceof ReturnSignal) throw e;
            const err = e instanceof QueryError ? e : new QueryError(e instanceof Error ? e.message : String(e), 'invalidQuery');
            const saved = state.error;
            // @@error exists only inside a handler: an enclosing handler's comes back after this one, none after the last.
            const savedVars = ERROR_VARIABLES.map((k) => s.variables.get(k));
            state.error = err;
            // Variables declared in the BEGIN section are valid only there, not in the block's handler
            // (procedural-language.md, BEGIN...EXCEPTION...END).
            for (const k of [...s.variables.keys()]) if (!declared.has(k) && !k.startsWith('@@')) s.variables.delete(k);
            s.variables.set('@@error.message', { type: T.STRING, value: nullMessages.has(err) ? null : err.message.replace(/ at \[\d+:\d+\]$/, '') });
            s.variables.set('@@error.statement_text', { type: T.STRING, value: state.current ?? null });
            setErrorTrace(s, errorFrames.get(err) ?? []);
            try {
              await runBlock(s, st.exceptionHandler, state);
            } finally {
              state.error = saved;
              ERROR_VARIABLES.forEach((k, i) => {
                const prev = savedVars[i];
                if (prev) s.variables.set(k, prev);
                else s.variables.delete(k);
              });
            }
          }
        }
      } catch (e) {
        if (e instanceof BreakSignal && st.label && e.label?.toLowerCase() === st.label.toLowerCase()) return;
        throw e;
      } finally {
        // Variables declared inside a block go out of scope with it.
        for (const k of [...s.variables.keys()]) if (!declared.has(k) && !k.startsWith('@@')) s.variables.delete(k);
      }
      return;
    }
    case 'Raise': {
      if (!st.message) {
        if (state.error) throw state.error;
        throw new QueryError('RAISE without a message can only be used inside an exception handler', 'invalidQuery');
      }
      const v = await s.evalScalar(st.message, undefined, T.STRING);
      // The reference: MESSAGE is a STRING expression (a NULL literal coerces to one).
      if (v.type.kind !== 'STRING') throw sqlError(`RAISE USING MESSAGE requires a STRING, but got ${typeToSql(v.type)}`, st.message.loc);
      const raised = new QueryError(String(v.value ?? ''), 'invalidQuery');
      if (v.value === null) nullMessages.add(raised);
      throw raised;
    }
    case 'Assert': {
      const v = await s.evalScalar(st.cond);
      // debugging-statements: the expression must evaluate to a BOOL.
      if (v.type.kind !== 'BOOL') throw sqlError(`ASSERT expression must be of type BOOL, but has type ${typeToSql(v.type)}`, st.cond.loc);
      if (v.value !== true) {
        const desc = st.description ? String((await s.evalScalar(st.description)).value) : s.ctx.sql.slice(st.cond.loc.offset, st.end).replace(/\s+AS\s+[\s\S]*$/i, '').trim();
        throw new QueryError(`Assertion failed: ${desc}`, 'invalidQuery');
      }
      r = { columns: null, batches: [], statementType: 'ASSERT', totalBytesProcessed: 0 };
      break;
    }
    case 'ExecuteImmediate': {
      const sqlV = await s.evalScalar(st.sql);
      if (sqlV.value === null && sqlV.type.kind === 'STRING') throw sqlError('EXECUTE IMMEDIATE sql string cannot be NULL', st.sql.loc);
      if (typeof sqlV.value !== 'string') throw sqlError('EXECUTE IMMEDIATE requires a STRING', st.sql.loc);
      // Only system variables and the USING values reach the text: the script's own variables and the outer query's
      // parameters are not exposed to it (procedural-language.md, EXECUTE IMMEDIATE, query_statement).
      const using = new Map<string, TypedValue>();
      const positional: TypedValue[] = [];
      const names = new Set<string>();
      for (const u of st.using ?? []) {
        // USING is all positional or all named, each name once (the service's analyzer).
        if (!u.alias !== !st.using![0]!.alias) throw sqlError('Cannot mix named and positional parameters', u.expr.loc);
        if (u.alias && names.has(u.alias.toLowerCase())) throw sqlError(`The same parameter cannot be assigned multiple times in a USING clause: ${u.alias}`, u.expr.loc);
        if (u.alias) names.add(u.alias.toLowerCase());
        const v = await s.evalScalar(u.expr);
        if (u.alias) using.set(u.alias.toLowerCase(), v);
        else positional.push(v);
      }
      // The system variables go in before the session is made: SET @@time_zone / @@dataset_id hold inside the text.
      const system = new Map([...s.variables].filter(([k]) => k.startsWith('@@')));
      const inner = new Session({ ...s.ctx, sql: sqlV.value, params: { named: using, positional } }, system);
      for (const [k, v] of s.tempFunctions) inner.tempFunctions.set(k, v);
      for (const [k, v] of s.tempTables) inner.tempTables.set(k, v);
      const sub: ScriptState = { count: 0, deadline: state.deadline };
      const dynamic = parse(sqlV.value).statements;
      // The dynamic statement is a SQL statement, never a procedural one nor another EXECUTE IMMEDIATE
      // (procedural-language.md, EXECUTE IMMEDIATE: it can't be nested in another one).
      const text = sqlV.value;
      const firstWord = (d: A.Statement) => /^\s*([A-Za-z_]\w*)/.exec(text.slice(d.start))?.[1]?.toUpperCase() ?? d.kind.toUpperCase();
      for (const d of dynamic) {
        if (PROCEDURAL.has(d.kind) || d.kind === 'ExecuteImmediate') throw sqlError(`Syntax error: Unexpected keyword ${firstWord(d)}`, d.loc);
      }
      // It is one statement: a second one after a semicolon is where the text should have ended.
      if (dynamic.length > 1) throw sqlError(`Syntax error: Expected end of input but got keyword ${firstWord(dynamic[1]!)}`, dynamic[1]!.loc);
      // INTO stores a row of the query's columns; a statement that is not a query has none to store.
      if (st.into && dynamic.length === 1 && dynamic[0]!.kind !== 'QueryStatement') {
        throw sqlError(`EXECUTE IMMEDIATE with INTO needs a query, not ${firstWord(dynamic[0]!)}`, st.loc);
      }
      await runBlock(inner, dynamic, sub);
      // Temporary tables and functions the dynamic statement made live on for the script, as if made by it.
      for (const [k, v] of inner.tempTables) s.tempTables.set(k, v);
      for (const [k, v] of inner.tempFunctions) s.tempFunctions.set(k, v);
      if (st.into && sub.lastSelect) {
        // INTO takes one row: none sets NULLs, more is an error (procedural-language: EXECUTE IMMEDIATE).
        if (sub.lastSelect.batches.reduce((k, x) => k + x.length, 0) > 1) throw sqlError('EXECUTE IMMEDIATE INTO: the query returned more than one row', st.loc);
        const b = sub.lastSelect.batches.find((x) => x.length > 0);
        const row = b && b.length ? b.columns.map((c) => getValue(c, 0)) : undefined;
        // SELECT AS STRUCT is a value table: its one STRUCT value (here, its fields as columns) goes to one variable.
        const last = dynamic[dynamic.length - 1]!;
        const asStruct = st.into.length === 1 && last.kind === 'QueryStatement' && last.query.body.kind === 'Select' && last.query.body.asMode === 'STRUCT';
        // Each INTO variable takes one column, in order: the counts must agree.
        const ncols = sub.lastSelect.columns?.length ?? 0;
        if (!asStruct && ncols !== st.into.length) throw sqlError(`EXECUTE IMMEDIATE INTO has ${st.into.length} variable${st.into.length === 1 ? '' : 's'}, but the query returns ${ncols} column${ncols === 1 ? '' : 's'}`, st.loc);
        st.into.forEach((name, i) => {
          const cur = s.variables.get(name.toLowerCase());
          if (!cur) throw sqlError(`Undeclared variable: ${name}`, st.loc);
          const v = row ? (asStruct ? row : row[i]!) : null;
          // Each column is assigned as SET assigns: of the variable's type or one that coerces to it.
          const ct = asStruct ? undefined : sub.lastSelect!.columns![i]!.type;
          if (ct && !typeEquals(ct, cur.type)) {
            if (!canCoerce(ct, cur.type)) throw sqlError(`Cannot coerce ${typeToSql(ct)} to ${typeToSql(cur.type)} (EXECUTE IMMEDIATE INTO ${name})`, st.loc);
            const f = foldExpr(coerce(literal(ct, v), cur.type), s.exec.eval);
            assignVariable(s, name, { type: cur.type, value: fitVariable(cur.type, f.kind === 'literal' ? f.value : v) }, st.loc);
            return;
          }
          assignVariable(s, name, { type: cur.type, value: fitVariable(cur.type, v) }, st.loc);
        });
      }
      r = sub.last;
      if (sub.lastSelect && !st.into) state.lastSelect = sub.lastSelect;
      break;
    }
    case 'Call':
      await callProcedure(s, st, state);
      return;
    case 'ExportData':
      r = await D.exportData(s, st);
      break;
    case 'LoadData':
      r = await D.loadData(s, st);
      break;
    case 'Transaction': {
      const tx = s.ctx.catalog.transactions;
      if (tx) {
        if (st.action === 'BEGIN') {
          await tx.beginTransaction();
          openTransactions.set(s.tempTables, { tables: new Map(s.tempTables), functions: new Map(s.tempFunctions), clock: s.exec.eval.nowMicros });
        } else if (st.action === 'COMMIT') {
          await tx.commitTransaction();
          openTransactions.delete(s.tempTables);
        } else {
          restoreNames(s);
          tx.rollbackTransaction();
        }
      }
      r = { columns: null, batches: [], statementType: `${st.action}_TRANSACTION`, totalBytesProcessed: 0 };
      break;
    }
    case 'Grant':
      r = await grant(s, st);
      break;
  }
  if (r) {
    r = withBytes(s, r);
    if (st.kind === 'QueryStatement') state.lastSelect = r;
    state.last = r;
    state.children?.push({ frames: framesOf(st, state), result: r });
  }
}

/**
 * The open transaction of a script or session, by the map of temporary names it holds (a session's queries share
 * it): the temporary tables' and functions' names as BEGIN found them, which its ROLLBACK puts back as the catalog
 * does with the tables (transactions: ROLLBACK abandons all changes made inside, temporary DDL included), and the
 * instant it began, what the clock functions read inside it (a session's later queries included).
 */
const openTransactions = new WeakMap<Map<string, TableId>, { tables: Map<string, TableId>; functions: Map<string, A.CreateFunctionStmt>; clock: bigint }>();

/** Puts back the temporary names the open (or just aborted) transaction found, if one began in this script or session. */
function restoreNames(s: Session): void {
  const at = openTransactions.get(s.tempTables);
  if (!at) return;
  openTransactions.delete(s.tempTables);
  s.tempTables.clear();
  for (const [k, v] of at.tables) s.tempTables.set(k, v);
  s.tempFunctions.clear();
  for (const [k, v] of at.functions) s.tempFunctions.set(k, v);
}

/** CALL: runs the procedure body with its own variables; OUT/INOUT arguments (variables) receive the results. */
/**
 * Stack frames at most (procedural-language.md, CALL: the maximum depth of procedure calls is 50 frames). The script
 * itself is the first frame, as in @@error.stack_trace, so 49 procedures may run nested; the reference
 * implementation's script executor counts the same way (its default maximum stack depth is 50).
 */
const MAX_CALL_FRAMES = 50;

/** The procedure a CALL names, with as many parameters as the CALL has arguments. */
function calledProcedure(s: Session, st: A.CallStmt): ReturnType<typeof findProcedure> {
  const proc = findProcedure(s, st.name, st.loc);
  if (st.args.length !== proc.params.length) throw sqlError(`Procedure ${st.name.join('.')} expects ${proc.params.length} arguments, but ${st.args.length} were given`, st.loc);
  return proc;
}

async function callProcedure(s: Session, st: A.CallStmt, state: ScriptState): Promise<void> {
  if (splitPath(st.name).join('.').toUpperCase() === 'BQ.ABORT_SESSION') {
    // The system procedure that ends the session (its transaction rolls back, its temporary tables go): the
    // current one, or the one an id names, from in or out of any session (sessions.md, Terminate a session by ID).
    if (st.args.length > 1) throw sqlError(`BQ.ABORT_SESSION takes at most one argument, the session id, but ${st.args.length} were given`, st.loc);
    const arg = st.args[0] ? (await s.evalScalar(st.args[0] as A.Expr)).value : undefined;
    if (st.args[0] && typeof arg !== 'string') throw sqlError('The argument of BQ.ABORT_SESSION must be a session id (a STRING)', st.args[0].loc);
    const named = arg as string | undefined;
    if (named === undefined || named === s.ctx.session?.id) {
      if (!s.ctx.session) throw sqlError('BQ.ABORT_SESSION without a session id can only be called in a session', st.loc);
      s.ctx.session.abort();
    } else if (!s.ctx.abortSession?.(named)) throw new QueryError(`Session ${named} was not found or has expired`, 'notFound', 404);
    return;
  }
  const proc = calledProcedure(s, st);
  const bound = new Map<string, TypedValue>();
  const outs: { param: string; variable: string }[] = [];
  for (const [i, p] of proc.params.entries()) {
    const a = st.args[i]!;
    const t = typeFromNode(p.type);
    if (p.mode === 'OUT' || p.mode === 'INOUT') {
      if (a.kind !== 'PathExpr' || a.parts.length !== 1 || !s.variables.has(a.parts[0]!.toLowerCase())) {
        throw sqlError(`${p.mode} argument ${p.name} of procedure ${st.name.join('.')} must be a variable`, a.loc);
      }
      // The variable takes the parameter's value at the end (and gives its own for INOUT): their types must assign.
      const vt = s.variables.get(a.parts[0]!.toLowerCase())!.type;
      if (!typeEquals(vt, t) && (!canCoerce(t, vt) || (p.mode === 'INOUT' && !canCoerce(vt, t)))) {
        throw sqlError(`${p.mode} argument ${p.name} of procedure ${st.name.join('.')} has type ${typeToSql(t)}, which variable ${a.parts[0]} of type ${typeToSql(vt)} cannot take`, a.loc);
      }
      // procedural-language.md, CALL: the same variable may not appear more than once as an OUT or INOUT argument.
      if (outs.some((o) => o.variable === a.parts[0]!.toLowerCase())) {
        throw sqlError(`A variable cannot be passed in multiple times as OUT/INOUT arguments: ${a.parts[0]}`, a.loc);
      }
      outs.push({ param: p.name.toLowerCase(), variable: a.parts[0]!.toLowerCase() });
      bound.set(p.name.toLowerCase(), p.mode === 'INOUT' ? s.variables.get(a.parts[0]!.toLowerCase())! : { type: t, value: null });
    } else {
      // An IN argument coerces to its parameter's type as a function argument does (literals more freely), or is refused.
      const v = await s.evalScalar(a, undefined, t);
      if (!typeEquals(v.type, t)) throw sqlError(`Argument ${p.name} of procedure ${st.name.join('.')} has type ${typeToSql(t)}, which a value of type ${typeToSql(v.type)} cannot take`, a.loc);
      bound.set(p.name.toLowerCase(), v);
    }
  }
  // The frames now running are the script's and one per procedure in state.calls; this CALL would add one more.
  if (1 + (state.calls?.length ?? 0) >= MAX_CALL_FRAMES) {
    throw new QueryError(`Out of stack space due to deeply-nested procedure call to ${st.name.join('.')}`, 'resourcesExceeded');
  }
  const saved = new Map(s.variables);
  // Statements of the body are child jobs too, their stack frames in the procedure's text.
  const outer = { calls: state.calls, procedure: state.procedure };
  const id = tableIdOf(s.analyzer(), st.name, st.loc);
  const ddl = ddlOfRoutine(s.ctx.catalog.getChild('routines', id.projectId, id.datasetId, id.tableId));
  state.calls = framesOf(st, state);
  state.procedure = { text: ddl ?? '', id: `${id.projectId}.${id.datasetId}.${id.tableId}` };
  // data-definition-language.md, Default project in procedure body: the body's names resolve in the project that owns
  // the procedure, whichever project runs the CALL (the default dataset, on which the pages are silent, stays the caller's).
  const callerProject = s.env.projectId;
  s.env = { ...s.env, projectId: id.projectId };
  s.variables.clear();
  for (const [k, v] of saved) if (k.startsWith('@@')) s.variables.set(k, v);
  for (const [k, v] of bound) s.variables.set(k, v);
  let results: Map<string, TypedValue>;
  try {
    try {
      // A body with EXCEPTION WHEN ERROR runs as the block it is, its handler included.
      if (proc.body.exceptionHandler) await runStatementKind(s, proc.body, state);
      else await runBlock(s, proc.body.body, state);
    } catch (e) {
      if (!(e instanceof ReturnSignal)) throw e;
    }
  } finally {
    s.env = { ...s.env, projectId: callerProject };
    results = new Map(s.variables);
    state.calls = outer.calls;
    state.procedure = outer.procedure;
    s.variables.clear();
    for (const [k, v] of saved) s.variables.set(k, v);
  }
  for (const o of outs) {
    const v = results.get(o.param);
    const cur = s.variables.get(o.variable)!;
    if (!v) continue;
    // The value takes the variable's type (an INT64 OUT parameter into a FLOAT64 variable is a FLOAT64).
    const f = typeEquals(v.type, cur.type) ? undefined : foldExpr(coerce(literal(v.type, v.value), cur.type), s.exec.eval);
    assignVariable(s, o.variable, { type: cur.type, value: fitVariable(cur.type, f && f.kind === 'literal' ? f.value : v.value) });
  }
}

/** A dry run of one statement: what it would read is charged (the estimate); nothing is written (the DML planners stop before they run). */
async function dryStatement(s: Session, st: A.Statement): Promise<void> {
  if (st.kind === 'QueryStatement') {
    await s.charge(s.optimize(s.analyze(st.query, { allowDuplicateNames: true }).plan));
    return;
  }
  const q = st.kind === 'Insert' ? st.query : st.kind === 'CreateTable' && !st.copy && !st.clone ? st.asQuery : undefined;
  if (q) await s.charge(s.optimize(s.analyze(q, { allowDuplicateNames: st.kind === 'Insert' }).plan));
  else if (st.kind === 'Update') await Dml.update(s, st);
  else if (st.kind === 'Delete') await Dml.del(s, st);
  else if (st.kind === 'Merge') await Dml.merge(s, st);
}

/** Dry run: statements are analyzed and charged, never applied (a script's as multi-statement-queries.md says, below). */
async function dryRun(s: Session, script: A.Script, single: boolean, state: ScriptState): Promise<QueryResult> {
  const st = script.statements[0]!;
  if (single && st.kind === 'QueryStatement') return withBytes(s, await runSelect(s, st.query));
  if (single) {
    const type = statementTypeOf(st) ?? st.kind.toUpperCase();
    await s.scoped(() => dryStatement(s, st));
    return withBytes(s, { columns: null, batches: [], statementType: type, totalBytesProcessed: 0 });
  }
  // multi-statement-queries.md (Dry-run a multi-statement query): queries and DML are validated and the dry run goes
  // on; DECLARE and SET run (they write no table) so later statements see their variables; a CALL is checked (the
  // procedure exists, its arguments fit its parameters) and ends the dry run, as do the first DDL statement, EXECUTE
  // IMMEDIATE (its dynamic query not run) and control statements (FOR, IF, WHILE, ...).
  // The variables DECLARE and SET make are the dry run's own: a session's (shared with its later queries) stay as they were.
  const saved = new Map(s.variables);
  try {
    await s.scoped(async () => {
      for (const x of script.statements) {
        if (x.kind === 'QueryStatement' || x.kind === 'Insert' || x.kind === 'Update' || x.kind === 'Delete' || x.kind === 'Merge') await dryStatement(s, x);
        else if (x.kind === 'Declare' || x.kind === 'Set') await runOne(s, x, state);
        else {
          if (x.kind === 'Call') calledProcedure(s, x);
          break;
        }
      }
    });
  } finally {
    s.variables.clear();
    for (const [k, v] of saved) s.variables.set(k, v);
  }
  return withBytes(s, { columns: null, batches: [], statementType: 'SCRIPT', totalBytesProcessed: 0 });
}

/**
 * multi-statement-queries.md: CREATE TEMP FUNCTION statements followed by a single SELECT are not a multi-statement
 * query (the real service runs them as one query job).
 */
function tempFunctionsThenQuery(statements: readonly A.Statement[]): boolean {
  const last = statements[statements.length - 1]!;
  return last.kind === 'QueryStatement' && statements.slice(0, -1).every((x) => x.kind === 'CreateFunction' && x.temp);
}

/**
 * A destination table takes a query's rows: the real service refuses it, before
 * running anything, for a script (EXECUTE IMMEDIATE and CALL count as one) and
 * for a single statement that is no query, naming its class.
 */
function checkDestination(statements: readonly A.Statement[], single: boolean): void {
  if (tempFunctionsThenQuery(statements)) return;
  const st = statements[0]!;
  const type = single ? statementTypeOf(st) : undefined;
  if (type === 'SELECT') return;
  if (type === undefined || type === 'CALL') throw new QueryError('configuration.query.destinationTable cannot be set for scripts', 'invalid');
  const what = DML.has(type) ? 'DML' : /^(CREATE|DROP|ALTER|UNDROP)_/.test(type) ? 'DDL' : type.replace(/_/g, ' ');
  throw new QueryError(`Cannot set destination table in jobs with ${what} statements`, 'invalidQuery');
}

export const runQuery: RunQuery = async (ctx: QueryContext): Promise<QueryResult> => {
  const script = parseCached(ctx.sql);
  const s = new Session(ctx);
  const state: ScriptState = { count: 0, children: new ChildList(), deadline: performance.now() + scriptTimeLimitMs() };
  s.variables.set('@@script.job_id', { type: T.STRING, value: ctx.jobId });
  s.variables.set('@@script.creation_time', { type: T.TIMESTAMP, value: ctx.nowMicros });
  if (ctx.session) s.variables.set('@@session_id', { type: T.STRING, value: ctx.session.id });
  s.firstStatement = script.statements[0];
  if (script.statements.length === 0) throw new QueryError('Syntax error: Unexpected end of script at [1:1]', 'invalidQuery');
  const single = script.statements.length === 1 && !['Block', 'If', 'Loop', 'While', 'Repeat', 'ForIn', 'Declare', 'Set', 'CaseStmt'].includes(script.statements[0]!.kind);
  const oneQuery = !single && tempFunctionsThenQuery(script.statements);
  if (!single && !oneQuery) state.script = true;
  if (ctx.hasDestination) checkDestination(script.statements, single);
  if (ctx.dryRun) return dryRun(s, script, single, state);
  const tx = ctx.catalog.transactions;
  const open = openTransactions.get(s.tempTables);
  if (open && tx?.inTransaction) s.setClock(open.clock);
  try {
    await runBlock(s, script.statements, state);
    // A transaction the script left open rolls back (in a session it stays open for the session's next query).
    if (tx?.inTransaction && !ctx.session) {
      restoreNames(s);
      tx.rollbackTransaction();
    }
  } catch (e) {
    // A failure without a handler rolls the open transaction back (or finds it rolled back by a conflict); in a session
    // it stays open until a ROLLBACK or the session's end (transactions.md, Transaction scope).
    const keepOpen = ctx.session !== undefined && tx?.inTransaction === true;
    if (!keepOpen) restoreNames(s);
    if (tx?.inTransaction && !keepOpen) tx.rollbackTransaction();
    if (e instanceof ReturnSignal) {
      /* RETURN ends the script normally */
    } else if (e instanceof BreakSignal || e instanceof ContinueSignal) {
      throw new QueryError('BREAK/CONTINUE outside of a loop', 'invalidQuery');
    } else {
      // A failed script still had child jobs (those that ran, and the failing one): the engine reports them with the error.
      if (!single && e instanceof QueryError && state.children?.list.length) (e as ScriptFailure).scriptChildren = state.children;
      throw e;
    }
  }
  // A statement that reported nothing of its own (a CALL of an empty procedure, BQ.ABORT_SESSION) still has a type.
  if (oneQuery && state.last) return state.last;
  if (single) return state.last ?? { columns: null, batches: [], statementType: statementTypeOf(script.statements[0]!) ?? 'SCRIPT', totalBytesProcessed: 0 };
  const base = state.lastSelect ?? state.last;
  const out: QueryResult & { scriptChildren: ScriptChildren } = {
    columns: base?.columns ?? null,
    batches: base?.batches ?? [],
    statementType: 'SCRIPT',
    totalBytesProcessed: state.children!.bytes,
    totalBytesBilled: state.children!.billed,
    scriptChildren: state.children!,
  };
  return out;
};
