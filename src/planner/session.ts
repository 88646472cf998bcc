// One runQuery call: the analyzer environment (parameters, script variables,
// temp functions/tables), and the helpers every statement uses: analyze +
// optimize + execute a query, evaluate a scalar expression.
import type * as A from '../../grammar/ast.js';
import { parseScript, SqlSyntaxError } from '../../grammar/index.js';
import { Analyzer, type AnalyzerEnv } from '../analyzer/context.js';
import { analyzeQuery } from '../analyzer/index.js';
import { coerce, originOf } from '../analyzer/coercion.js';
import { resolveExpr } from '../analyzer/expr.js';
import { setConstantFolder } from '../analyzer/names.js';
import { canCoerce, setLiteralTimeZone } from '../analyzer/types.js';
import { typeEquals, type SqlType } from '../types/types.js';
import type { Rel, ResolvedQuery } from '../analyzer/resolved.js';
import { Scope } from '../analyzer/scope.js';
import { collect, makeExecContext, stream, type ExecContext } from '../executor/execute.js';
import { QueryError, type QueryContext, type TypedValue } from './api.js';
import { optimize } from './optimize.js';
import { ScanAccount, type ScanReader } from './billing.js';
import { References } from './references.js';
import { ReadVersions } from './read-versions.js';
import { foldExpr } from './rules/fold.js';
import type { Batch } from '../types/vector.js';
import { getValue } from '../types/vector.js';
import type { TableId, TableInfo } from '../storage/api.js';
import { partsLogicalBytes } from '../storage/table-state.js';
import { statementClockMicros } from '../storage/commit-clock.js';
import { vectorBytes } from '../types/logical-bytes.js';

/** The service's limit on a GoogleSQL text (1,024K characters, comments and white space included). */
export const MAX_QUERY_CHARS = 1024 * 1024;

/** Characters (code points) of `sql`, counted only when its UTF-16 length could pass the limit. */
function tooLong(sql: string): boolean {
  if (sql.length <= MAX_QUERY_CHARS) return false;
  let n = 0;
  for (const _ of sql) if (++n > MAX_QUERY_CHARS) return true;
  return false;
}

export function parse(sql: string): A.Script {
  if (tooLong(sql)) throw new QueryError('The query is too large. The maximum standard SQL query length is 1024.00K characters, including comments and white space characters.', 'invalid');
  try {
    return parseScript(sql);
  } catch (e) {
    if (e instanceof SqlSyntaxError) throw new QueryError(e.message, 'invalidQuery');
    throw e;
  }
}

/**
 * Parsed scripts by SQL text. Parsing is a pure function of the text and, for
 * a small GROUP BY, ~40% of the engine's CPU per query, so repeated texts (a
 * client's dashboard, the same query from many clients) skip it. Each caller
 * gets a structured clone: later stages may annotate their AST, and the
 * cached one must stay as parsed. A text seen for the first time is only
 * remembered (null): its fresh AST goes to the caller unshared, so one-off
 * statements (CI suites, dbt) pay no clone and keep no AST alive. Bounded by
 * entry size and total text (an AST is ~10-20x its text), least recently used
 * first out; errors are not cached.
 */
const PARSE_CACHE_MAX_SQL = 8 * 1024;
const PARSE_CACHE_MAX_TOTAL = 256 * 1024;
const parseCache = new Map<string, A.Script | null>();
let parseCacheChars = 0;

export function parseCached(sql: string): A.Script {
  if (sql.length > PARSE_CACHE_MAX_SQL) return parse(sql);
  const cached = parseCache.get(sql);
  if (cached === undefined) {
    const script = parse(sql);
    parseCache.set(sql, null);
    parseCacheChars += sql.length;
    for (const k of parseCache.keys()) {
      if (parseCacheChars <= PARSE_CACHE_MAX_TOTAL) break;
      parseCache.delete(k);
      parseCacheChars -= k.length;
    }
    return script;
  }
  const script = cached ?? parse(sql);
  parseCache.delete(sql);
  parseCache.set(sql, script);
  return structuredClone(script);
}

export class Session {
  env: AnalyzerEnv;
  exec: ExecContext;
  readonly tempFunctions: Map<string, A.CreateFunctionStmt>;
  readonly variables: Map<string, TypedValue>;
  readonly tempTables: Map<string, TableId>;
  /** What the running statement reads, for its job statistics (charge()). */
  readonly scanned = new ScanAccount();
  /** The tables and routines the running statement referenced, for its job statistics (references.ts). */
  readonly referenced = new References();
  /** The instant each table is read at in the running statement: one per table (read-versions.ts). */
  readonly versions = new ReadVersions();
  /** The query's first statement (only it may SET @@location). */
  firstStatement?: A.Statement;

  /** `variables`: a map of its own (EXECUTE IMMEDIATE's text sees the system variables only, even in a session). */
  constructor(
    readonly ctx: QueryContext,
    variables?: Map<string, TypedValue>,
  ) {
    // A session's queries share these (and its catalog's temporary tables and transaction).
    this.tempFunctions = ctx.session?.tempFunctions ?? new Map();
    this.variables = variables ?? ctx.session?.variables ?? new Map();
    this.tempTables = ctx.session?.tempTables ?? new Map();
    // A session's SET @@time_zone / @@dataset_id outlives the query that ran it.
    const set = (name: string): string | undefined => {
      const v = this.variables.get(name)?.value;
      return typeof v === 'string' ? v : undefined;
    };
    const timeZone = set('@@time_zone') ?? ctx.timeZone ?? 'UTC';
    const datasetId = set('@@dataset_id');
    const defaultDataset = ctx.viewBody ? undefined : datasetId === undefined ? ctx.defaultDataset : { projectId: set('@@dataset_project_id') ?? ctx.projectId, datasetId };
    this.exec = makeExecContext(ctx, { timeZone });
    this.installFolder();
    this.env = {
      catalog: ctx.catalog,
      projectId: ctx.projectId,
      ...(defaultDataset ? { defaultDataset } : {}),
      ...(ctx.viewBody ? { storedBody: true } : {}),
      params: ctx.params,
      timeZone,
      // system-variables.md (@@time_zone): FOR SYSTEM_TIME AS OF keeps America/Los_Angeles unless a zone was chosen.
      asOfTimeZone: set('@@time_zone') ?? ctx.timeZone ?? 'America/Los_Angeles',
      parse,
      tempFunctions: this.tempFunctions,
      variables: this.variables,
      tempTables: this.tempTables,
      nowMs: Number(ctx.nowMicros / 1000n),
      sessionUser: ctx.sessionUser,
      jobId: ctx.jobId,
      onRoutine: (r) => this.referenced.noteRoutine(r),
      ...(ctx.location ? { location: ctx.location } : {}),
      ...(ctx.externalTables ? { externalTables: ctx.externalTables } : {}),
    };
  }

  private installFolder(): void {
    const ev = this.exec.eval;
    setConstantFolder((e, timeZone) => {
      const f = foldExpr(e, timeZone === undefined ? ev : { ...ev, timeZone });
      return f.kind === 'literal' ? f.value : undefined;
    });
  }

  private clockStarted = false;

  /**
   * Before each statement of a script: CURRENT_TIMESTAMP() and the other clock functions read the start of the
   * statement that contains them (timestamp functions reference), so every statement after the first reads the
   * clock anew (never earlier than the one before). The first keeps the job's instant. Inside a transaction they
   * read the instant the transaction began (transactions: date/time functions in transactions), the clock of its
   * BEGIN TRANSACTION.
   */
  advanceClock(): void {
    if (!this.clockStarted) {
      this.clockStarted = true;
      return;
    }
    if (this.ctx.catalog.transactions?.inTransaction) return;
    const now = statementClockMicros();
    if (now > this.exec.eval.nowMicros) this.setClock(now);
  }

  /** The instant the clock functions read from here on (a session's query inside a transaction an earlier query began). */
  setClock(micros: bigint): void {
    this.env = { ...this.env, nowMs: Number(micros / 1000n) };
    this.exec = { ...this.exec, eval: { ...this.exec.eval, nowMicros: micros } };
    this.installFolder();
  }

  /** A script's statement runs as a child job of its own: @@current_job_id reads that child's id. */
  setJobId(jobId: string): void {
    this.env = { ...this.env, jobId };
  }

  /** SET @@time_zone: the default time zone of the statements that follow (`chosen`: false for a zone in force only for a while). */
  setTimeZone(zone: string, chosen = true): void {
    this.env = { ...this.env, timeZone: zone, ...(chosen ? { asOfTimeZone: zone } : {}) };
    this.exec = { ...this.exec, eval: { ...this.exec.eval, timeZone: zone } };
    this.installFolder();
  }

  /**
   * Runs `f` (the evaluation of an OPTIONS value) in the default time zone of OPTIONS expressions: the
   * system-variables reference (@@time_zone) keeps America/Los_Angeles there for backward compatibility, unless
   * @@time_zone was set earlier in the query (or session); a request's time_zone property chooses a zone as well.
   */
  async inOptionsTimeZone<T>(f: () => Promise<T>): Promise<T> {
    if (this.variables.has('@@time_zone') || this.ctx.timeZone) return f();
    const prev = this.env.timeZone ?? 'UTC';
    this.setTimeZone('America/Los_Angeles', false);
    try {
      return await f();
    } finally {
      this.setTimeZone(prev, false);
    }
  }

  /** SET @@dataset_id / @@dataset_project_id: the default dataset of the statements that follow. */
  setDefaultDataset(part: 'datasetId' | 'projectId', value: string): void {
    const dd = this.env.defaultDataset;
    if (part === 'projectId' && !dd) return; // kept in the variables until a dataset id is set
    const projectId = part === 'projectId' ? value : (dd?.projectId ?? this.ctx.projectId);
    this.env = { ...this.env, defaultDataset: { projectId, datasetId: part === 'datasetId' ? value : dd!.datasetId } };
  }

  analyzer(): Analyzer {
    setLiteralTimeZone(this.env.timeZone ?? 'UTC');
    return new Analyzer(this.env);
  }

  /** `an`: the analyzer whose column ids the caller's own plan nodes above the query take (ids must not repeat in a plan). */
  analyze(q: A.Query, opts: { allowDuplicateNames?: boolean } = {}, an?: Analyzer): ResolvedQuery {
    setLiteralTimeZone(this.env.timeZone ?? 'UTC');
    return analyzeQuery(this.env, q, an, opts);
  }

  optimize(rel: Rel): Rel {
    return optimize(rel, { eval: this.exec.eval });
  }

  async run(rel: Rel): Promise<Batch[]> {
    return collect(this.optimize(rel), this.exec);
  }

  /**
   * Counts an optimized plan's scans toward the running statement's bytes
   * (job statistics); past the job's maximumBytesBilled it fails before
   * anything runs. Only what the statement itself reads is charged, not the
   * engine's own reads (copies, clones, OPTIONS values).
   */
  async charge(optimized: Rel): Promise<void> {
    this.versions.notePlan(optimized, Number(this.exec.eval.nowMicros / 1000n));
    await this.scanned.addPlan(optimized, this.reader);
    this.referenced.notePlan(optimized, this.reader.tableInfo);
    // A dry run reports the estimate; only a run can exceed the limit.
    if (!this.ctx.dryRun) this.scanned.checkLimit(this.ctx.maximumBytesBilled);
  }

  private readonly reader: ScanReader = {
    tableInfo: (id) => this.ctx.catalog.getTable(id),
    isDryRun: () => this.ctx.dryRun === true,
    measureRows: async (scan, predicate, from, pruneBy) => {
      let n = 0;
      // A filter straight over the scan (not optimized, so `scan` stays the node storage-only filters name).
      const ctx = pruneBy.length === 0 ? this.exec : { ...this.exec, runtimeFilters: new Map([[scan, pruneBy]]) };
      for await (const b of stream({ kind: 'filter', input: scan, predicate, columns: scan.columns }, ctx)) {
        for (let c = from; c < b.columns.length; c++) n += vectorBytes(b.columns[c]!);
      }
      return n;
    },
    logicalBytes: async (id, opts) => {
      const lb = await this.ctx.catalog.scanLogicalBytes?.(id, opts);
      if (lb) return lb;
      const sp = await this.ctx.catalog.scanParts?.(id, opts);
      if (sp) return partsLogicalBytes(sp.parts, sp.columns, opts.columns);
      if (opts.asOfMs === undefined) return null;
      // A past snapshot is no list of parts: its rows are measured (the statement reads them anyway).
      const bytes = opts.columns.map(() => 0);
      let rows = 0;
      for await (const b of this.ctx.catalog.scan(id, opts)) {
        rows += b.length;
        b.columns.forEach((v, k) => (bytes[k]! += vectorBytes(v)));
      }
      return { rows, bytes };
    },
  };

  /** Bills a DML statement's target whole (every column of the partitions it reads), as the service does. */
  chargeTarget(info: TableInfo): Promise<void> {
    this.versions.noteCurrent(info.id);
    this.referenced.noteTable(info.id);
    return this.scanned.setWhole(info, this.reader);
  }

  /** optimize(), charge() and run: a statement's own read. */
  async runCharged(rel: Rel): Promise<Batch[]> {
    const plan = this.optimize(rel);
    await this.charge(plan);
    return collect(plan, this.exec);
  }

  /** runCharged(), batch by batch as the plan makes them (CTAS and INSERT write them as they come). */
  async *streamCharged(rel: Rel): AsyncGenerator<Batch> {
    const plan = this.optimize(rel);
    await this.charge(plan);
    yield* stream(plan, this.exec);
  }

  /** run(), batch by batch as the plan makes them (CTAS writes them as they come). */
  stream(rel: Rel): AsyncGenerator<Batch> {
    return stream(this.optimize(rel), this.exec);
  }

  /** Executes a plan that already went through optimize(). */
  async runOptimized(rel: Rel): Promise<Batch[]> {
    return collect(rel, this.exec);
  }

  /** Runs `fn` in a statement scope (one snapshot of every table) unless one is open already (TransactionControl). */
  async scoped<T>(fn: () => Promise<T>): Promise<T> {
    const tx = this.ctx.catalog.transactions;
    if (!tx) return fn();
    await tx.beginStatement();
    try {
      return await fn();
    } finally {
      tx.endStatement();
    }
  }

  /** Evaluates a scalar expression with no FROM (script conditions, SET values, OPTIONS): in a scope of its own outside a statement. */
  /** `target`: the type the value goes to (a variable's), coerced to when the expression may coerce (an untyped [] or NULL, a literal). */
  evalScalar(e: A.Expr, an = this.analyzer(), target?: SqlType): Promise<TypedValue> {
    return this.scoped(() => this.evalScalarNow(e, an, target));
  }

  private async evalScalarNow(e: A.Expr, an: Analyzer, target: SqlType | undefined): Promise<TypedValue> {
    let x = resolveExpr(an, e, { scope: new Scope(), clause: 'expression' });
    if (target && !typeEquals(x.type, target) && canCoerce(x.type, target, originOf(x))) x = coerce(x, target);
    const folded = foldExpr(x, this.exec.eval);
    if (folded.kind === 'literal') return { type: folded.type, value: folded.value };
    const col = an.newColumn('v', x.type);
    const rel: Rel = { kind: 'project', input: { kind: 'values', rows: [[]], columns: [] }, exprs: [x], columns: [col] };
    const batches = await this.run(rel);
    const b = batches[0];
    return { type: x.type, value: b && b.length ? getValue(b.columns[0]!, 0) : null };
  }
}
