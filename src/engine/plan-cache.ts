// Plans of repeated single SELECT statements. A dashboard, a benchmark or a
// polling client sends the same text again and again; its parse (a clone of
// the cached AST), analysis, partition-filter check and optimization were
// about half of the engine's CPU for a small GROUP BY, and their code is what
// stays cold longest after start. A cached plan skips all four and goes
// straight to the executor.
//
// Exactness, not heuristics, decides what may be reused:
//   - key: the SQL text, project, default dataset, time zone, session user
//     and query parameters (names, types, values); dry runs and statements
//     with a destination table are never cached;
//   - catalog: the analysis reads through a `RecordingCatalog` (catalog.ts)
//     that leaves a check per read (dataset, table, routine, row-access
//     policies by the identity of their stored entries; row counts by value);
//     every use re-runs the checks, and a failed one rebuilds the plan.
//     Listings (INFORMATION_SCHEMA), INFORMATION_SCHEMA.JOBS, scans and
//     writes during analysis make a statement uncacheable;
//   - time: a read of the analysing session's clock or random source (a
//     folded CURRENT_DATE(), a time-travel bound) makes the statement
//     uncacheable; as a second guard it is analysed again with the clock a
//     year, seven hours and some microseconds later, and a plan or outcome
//     that differs is never cached. Volatile functions (RAND, GENERATE_UUID)
//     are never folded, so they run per execution anyway;
//   - errors: only plans that analysed cleanly are kept; a failing statement
//     goes through the normal path and fails there, with its own message.
// A text is planned here only when it is seen the second time, so one-off
// statements (most DDL/DML, conformance cases) cost nothing extra.
import type { Rel } from '../analyzer/resolved.js';
import { checkResultArrays } from '../executor/result-check.js';
import type { QueryContext, QueryResult, ResultColumn, TypedValue } from '../planner/api.js';
import type { RoutineRef } from '../planner/references.js';
import { checkPartitionFilters, checkResultNames } from '../planner/partition-filter.js';
import { parseCached, Session } from '../planner/session.js';
import { Decimal, Geography, Interval, JsonValue, RangeValue, type JsonNode, type Value } from '../types/values.js';
import type { QueryCatalog } from '../storage/api.js';
import type { EngineCatalog, RecordingCatalog } from './catalog.js';
import { DEFAULT_JOB_LOCATION, JobLocation, type CatalogView } from './location.js';

interface CachedPlan {
  readonly columns: readonly ResultColumn[];
  /** The job location the analysis resolved (a job that named none takes it on every use). */
  readonly location: string;
  /** Optimized; shared by concurrent executions (the executor never mutates plans). */
  readonly plan: Rel;
  /** True while everything the analysis read is unchanged. */
  readonly checks: readonly (() => boolean)[];
  /** The persistent routines the analysis resolved (referencedRoutines of every run). */
  readonly routines: readonly RoutineRef[];
}

/** Longer texts are rare as repeated statements and not worth holding. */
const MAX_SQL = 8 * 1024;
const MAX_PLANS = 256;
/** Bound of the keys remembered as seen once or uncacheable, in characters. */
const MAX_SEEN_CHARS = 1024 * 1024;
/** The second analysis's clock offset: crosses a day, month and year boundary, and a whole second. */
const CLOCK_SHIFT_MICROS = ((366n * 24n + 7n) * 3600n + 13n) * 1_000_000n + 123_457n;

class PlanCache {
  /** LRU of plans by key. */
  readonly plans = new Map<string, CachedPlan>();
  /** Keys seen once (true) or found uncacheable (false), oldest first. */
  readonly seen = new Map<string, boolean>();
  seenChars = 0;
  /** Executions from a cached plan (tests read it through planCacheHits). */
  hits = 0;
}

const caches = new WeakMap<EngineCatalog, PlanCache>();

let totalHits = 0;

/** How many statements of this catalog (of every catalog without one) ran from a cached plan. */
export function planCacheHits(catalog?: EngineCatalog): number {
  return catalog ? (caches.get(catalog)?.hits ?? 0) : totalHits;
}

/** The cache key; undefined for parameter values it cannot spell (never cached). */
function keyOf(ctx: QueryContext, location: string): string | undefined {
  const dd = ctx.defaultDataset;
  // Query-time tables are read anew for each request: nothing to reuse.
  if (ctx.externalTables?.size) return undefined;
  const { named, positional } = ctx.params;
  const params = named.size === 0 && positional.length === 0 ? '' : paramsKey(named, positional);
  if (params === undefined) return undefined;
  return `${ctx.projectId}\u0000${location}\u0000${dd ? `${dd.projectId}.${dd.datasetId}` : ''}\u0000${ctx.timeZone ?? ''}\u0000${ctx.sessionUser}\u0000${params}\u0000${ctx.sql}`;
}

/**
 * Query parameters as key text: names, types and values, each value as a
 * tagged tree so that distinct values never share a text (NaN and NULL,
 * -0 and 0, 1 and 1n, '1' and 1 all differ; values are folded into plans).
 */
function paramsKey(named: ReadonlyMap<string, TypedValue>, positional: readonly TypedValue[]): string | undefined {
  const one = (p: TypedValue): unknown => [p.type, valueTree(p.value)];
  try {
    return JSON.stringify([[...named].map(([n, p]) => [n, one(p)]), positional.map(one)]);
  } catch {
    return undefined;
  }
}

function valueTree(v: Value): unknown {
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'string') return ['s', v];
  if (typeof v === 'number') return ['n', Object.is(v, -0) ? '-0' : String(v)];
  if (typeof v === 'bigint') return ['b', v.toString()];
  if (Array.isArray(v)) return ['a', ...v.map(valueTree)];
  if (v instanceof Uint8Array) return ['y', Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')];
  if (v instanceof Decimal) return ['d', v.isNegative() ? '-' : '+', v.toString()];
  if (v instanceof Interval) return ['i', v.months, v.days, v.micros.toString()];
  if (v instanceof JsonValue) return ['j', jsonTree(v.node)];
  if (v instanceof Geography) return ['g', v.wkt];
  if (v instanceof RangeValue) return ['r', valueTree(v.start), valueTree(v.end)];
  throw new Error('unknown parameter value');
}

function jsonTree(n: JsonNode): unknown {
  if (n === null || typeof n === 'boolean' || typeof n === 'string') return n;
  if (typeof n === 'number') return ['n', Object.is(n, -0) ? '-0' : String(n)];
  if (typeof n === 'bigint') return ['b', n.toString()];
  if (Array.isArray(n)) return ['a', ...n.map(jsonTree)];
  return ['o', ...Object.entries(n).map(([k, x]) => [k, jsonTree(x)])];
}

function remember(m: Map<string, CachedPlan>, key: string, v: CachedPlan): void {
  m.delete(key);
  m.set(key, v);
  if (m.size > MAX_PLANS) m.delete(m.keys().next().value!);
}

function see(pc: PlanCache, key: string, cacheable: boolean): void {
  if (!pc.seen.delete(key)) pc.seenChars += key.length;
  pc.seen.set(key, cacheable);
  for (const k of pc.seen.keys()) {
    if (pc.seenChars <= MAX_SEEN_CHARS) break;
    pc.seen.delete(k);
    pc.seenChars -= k.length;
  }
}

/**
 * Runs `ctx` from a cached plan when it is a repeated single SELECT whose
 * plan is (or can now be) cached; undefined when the caller should run it
 * through `runQuery`. The result and any execution error are those runQuery
 * gives for the statement. `view` is the catalog as the job's location `loc`
 * sees it (location.ts): plans are keyed on the requested location, and a
 * hit settles an inferred one as the plan's analysis did.
 */
export async function runCached(
  ctx: QueryContext,
  catalog: EngineCatalog,
  loc = new JobLocation('', DEFAULT_JOB_LOCATION),
  view: CatalogView = (c) => c,
): Promise<QueryResult | undefined> {
  if (ctx.dryRun || ctx.hasDestination || ctx.sql.length > MAX_SQL) return undefined;
  let pc = caches.get(catalog);
  if (!pc) {
    pc = new PlanCache();
    caches.set(catalog, pc);
  }
  const key = keyOf(ctx, loc.requested);
  if (key === undefined) return undefined;
  let p = pc.plans.get(key);
  if (p && !valid(p)) {
    pc.plans.delete(key);
    p = undefined;
  }
  if (p) remember(pc.plans, key, p);
  else {
    const seen = pc.seen.get(key);
    if (seen === false) return undefined;
    if (seen === undefined) {
      see(pc, key, true);
      return undefined;
    }
    const built = build(ctx, catalog, loc, view);
    if (built === 'never') see(pc, key, false);
    if (built === 'never' || built === 'failed') return undefined;
    p = built;
    remember(pc.plans, key, p);
  }
  loc.admits(p.location);
  pc.hits++;
  totalHits++;
  // As runSelect in planner/run.ts: bytes from the row counts before the run.
  const s = new Session(ctx);
  const batches = await s.scoped(async () => {
    await s.charge(p.plan);
    return s.runOptimized(p.plan);
  });
  checkResultArrays(p.columns, batches);
  for (const r of p.routines) s.referenced.noteRoutine(r);
  const statistics = s.referenced.statistics();
  return {
    columns: p.columns,
    batches,
    statementType: 'SELECT',
    totalBytesProcessed: s.scanned.processed,
    totalBytesBilled: s.scanned.billed,
    ...(statistics.referencedTables || statistics.referencedRoutines ? { statistics } : {}),
  };
}

/** Whether everything the plan's analysis read is unchanged (a check that throws: changed). */
function valid(p: CachedPlan): boolean {
  try {
    return p.checks.every((check) => check());
  } catch {
    return false;
  }
}

/**
 * Analysis, partition-filter check and optimization of a single SELECT, as
 * runSelect in planner/run.ts does them. `script`: a parse of ctx.sql that
 * nothing else uses (analysis may annotate it); parsed here when absent.
 */
function plan(ctx: QueryContext, located: QueryCatalog, rec: RecordingCatalog, script = parseCached(ctx.sql)): { columns: ResultColumn[]; plan: Rel; routines: readonly RoutineRef[] } {
  const st = script.statements[0];
  if (st?.kind !== 'QueryStatement') throw new Error('not a query');
  const s = new Session({ ...ctx, catalog: located });
  watchClock(s, rec);
  // No destination table here (runCached passes jobs with one by): repeated result names are renamed, as runSelect does.
  const r = s.analyze(st.query, { allowDuplicateNames: true });
  checkPartitionFilters(s, r.plan);
  checkResultNames(r.outputNames);
  const columns = r.plan.columns.map((c, i) => ({ name: r.outputNames[i] ?? '', type: c.type }));
  return { columns, plan: s.optimize(r.plan), routines: s.referenced.routineList };
}

/**
 * Makes the session's clock and random source mark the statement uncacheable
 * when analysis or optimization reads them (a folded CURRENT_TIMESTAMP()
 * comparison, a time-travel bound), whatever the plan looks like afterwards.
 */
function watchClock(s: Session, rec: RecordingCatalog): void {
  const ev = s.exec.eval;
  const { nowMicros, random } = ev;
  // (A copy of the evaluation context made meanwhile reads both: conservative.)
  Object.defineProperty(ev, 'nowMicros', { get: () => ((rec.cacheable = false), nowMicros) });
  Object.defineProperty(ev, 'random', { get: () => ((rec.cacheable = false), random) });
  // The analyzer's environment is copied for view bodies: a callback survives the copy.
  (s.env as { onClock?: () => void }).onClock = () => (rec.cacheable = false);
}

/**
 * A cacheable plan for `ctx`; 'never' when the text can never be cached
 * (no single SELECT, reads the checks cannot cover, depends on the clock);
 * 'failed' when it does not analyse now (the normal path reports why).
 */
function build(ctx: QueryContext, catalog: EngineCatalog, loc: JobLocation, view: CatalogView): CachedPlan | 'never' | 'failed' {
  let script;
  try {
    script = parseCached(ctx.sql);
  } catch {
    return 'never';
  }
  if (script.statements.length !== 1 || script.statements[0]!.kind !== 'QueryStatement') return 'never';
  const rec = catalog.recording();
  let a: { columns: ResultColumn[]; plan: Rel; routines: readonly RoutineRef[] };
  try {
    a = plan(ctx, view(rec), rec, script);
  } catch {
    return rec.cacheable ? 'failed' : 'never';
  }
  if (!rec.cacheable) return 'never';
  const later = catalog.recording();
  try {
    const b = plan({ ...ctx, nowMicros: ctx.nowMicros + CLOCK_SHIFT_MICROS }, view(later), later);
    if (!later.cacheable || !sameShape(a, b)) return 'never';
  } catch {
    return 'never'; // fails later but not now: depends on the clock
  }
  return { columns: a.columns, location: loc.value, plan: a.plan, checks: rec.checks, routines: a.routines };
}

/**
 * Structural equality of two analysis outputs: same kinds, keys and values
 * (bigints, typed-array bytes, class instances field by field; functions by
 * source text). Symbol-keyed analysis facts are not compared (the executor never
 * reads them).
 */
export function sameShape(a: unknown, b: unknown, seen = new Map<object, object>()): boolean {
  if (Object.is(a, b)) return true;
  // Kernels and accumulator factories made per resolution: the same code, over what the plan also holds (types, literal arguments).
  if (typeof a === 'function' && typeof b === 'function') return a.toString() === b.toString();
  if (typeof a !== typeof b || typeof a !== 'object' || a === null || b === null) return false;
  const x = a as object;
  const y = b as object;
  if (Object.getPrototypeOf(x) !== Object.getPrototypeOf(y)) return false;
  if (seen.get(x) === y) return true;
  seen.set(x, y);
  if (ArrayBuffer.isView(x)) {
    const u = new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
    const v = new Uint8Array((y as ArrayBufferView).buffer, (y as ArrayBufferView).byteOffset, (y as ArrayBufferView).byteLength);
    return u.length === v.length && u.every((n, i) => n === v[i]);
  }
  if (x instanceof Map || x instanceof Set) {
    const ex = [...x.entries()];
    const ey = [...(y as Map<unknown, unknown>).entries()];
    return ex.length === ey.length && ex.every((e, i) => sameShape(e, ey[i], seen));
  }
  if (x instanceof Date) return x.getTime() === (y as Date).getTime();
  const kx = Object.keys(x);
  const ky = Object.keys(y);
  if (kx.length !== ky.length) return false;
  for (let i = 0; i < kx.length; i++) {
    const k = kx[i]!;
    if (k !== ky[i] || !sameShape((x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k], seen)) return false;
  }
  return true;
}
