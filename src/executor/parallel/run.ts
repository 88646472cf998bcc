// Parallel execution of the morsel-driven pipelines: an aggregate or a top-N
// over filters, projections and hash joins of one table scan (split.ts). The
// scan's parts are listed once (storage skips row groups by statistics) and
// grouped into morsels; each morsel of row groups runs the partial plan on a
// worker thread, memory batches run on this thread; the merge plan folds the
// partial results strictly in morsel order, so the answer never depends on
// which worker finished first. Small inputs, plans a worker cannot run, and
// any failure of the parallel run (an error raised by a row, a worker gone)
// take the serial path over the same parts: its result and its errors are the
// serial ones.
import type { AggregateRel, Rel, ScanRel, SortRel } from '../../analyzer/resolved.js';
import { ROW_POSITION, type ScanParts } from '../../storage/api.js';
import type { ScanPart } from '../../storage/table-state.js';
import type { Batch, Vector } from '../../types/vector.js';
import { checkpoint, type ExecContext, type TopNSeed } from '../context.js';
import { evaluateSync, layoutOf } from '../expr.js';
import { thresholdComparator } from '../sort-keys.js';
import { collectRows } from '../execute.js';
import { aggregateOp } from '../operators/aggregate.js';
import { spillingAggregate } from '../operators/aggregate-spill.js';
import { scanFilters } from '../operators/scan-filters.js';
import { sortOp } from '../operators/sort.js';
import { sliceBatch } from '../vectors.js';
import { decodeBatch, encodeBatch, encodeRel, tableKey, Unencodable, type Encoded } from './codec.js';
import { broadcastSource, partRows, withParts, withScanSource } from './parts.js';
import { parallelEnabled, workerPool, type EncodedPart, type EncodedPlan, type RowGroupPart } from './pool.js';
import { finishAggregate, pipelineOf, scansOf, splitAggregate, splitTopN, type ScanInput, type TwoPhase } from './split.js';

function minRowsOf(env: string | undefined): number {
  return env !== undefined && /^\d+$/.test(env) ? Number(env) : 4_194_304;
}

/** Tunables (tests force parallel runs over small tables). */
export const parallelOptions = {
  /**
   * Inputs (rows of the listed parts) below this run serially: at 1-2M rows
   * the split (plan encoding, messages, each worker's own warm-up, the merge)
   * cost about what it saved on a quiet 2-core machine and lost on a busy one
   * (bench agg_group_by_1m 3.7x -> 4.2x DuckDB, join_hash_2m 1.6x -> 3.0x
   * when 256k was the threshold). Env WAREHOUSE_EMULATOR_PARALLEL_MIN_ROWS.
   */
  minRows: minRowsOf(process.env.WAREHOUSE_EMULATOR_PARALLEL_MIN_ROWS ?? process.env.BIGQUERY_EMULATOR_PARALLEL_MIN_ROWS),
  /** Parts cut to at most this many rows before they are grouped into morsels (0: as listed). */
  morselRows: 0,
  /**
   * Run the two phases even when every part is held in memory (all of them
   * then run on this thread): no faster, but checks the split and merge over
   * any table (tests).
   */
  splitMemory: false,
};

/** Parallel runs in this process, and those that fell back to the serial path (tests assert on them). */
export const parallelCounters = { runs: 0, fallbacks: 0, morsels: 0 };

/** Build sides of more rows run serially (every worker would hold its own copy). */
const MAX_BROADCAST_ROWS = 1_000_000;

/**
 * An aggregate whose partial results are not much smaller than its input
 * (GROUP BY a key of nearly unique values) gains nothing from the split: the
 * merge would redo the work on this thread. Checked on the first morsels.
 */
class NotReducing extends Error {}
/** Input rows from which the reduction is checked (on the morsels up to 4x this). */
const REDUCE_CHECK_ROWS = 32_768;

interface Prepared {
  readonly split: TwoPhase;
  readonly encoded: Encoded;
  /** scansOf(split.partial): the order the worker names the scans in. */
  readonly scans: readonly ScanRel[];
}

// Plans are reused (the engine's plan cache): split and encode each once.
const prepared = new WeakMap<Rel, Prepared | null>();

function prepare<R extends Rel, S extends TwoPhase>(rel: R, split: (r: R) => S | null): (Prepared & { split: S }) | null {
  let p = prepared.get(rel);
  if (p === undefined) {
    p = null;
    const s = split(rel);
    // Row positions (a DML statement's target scan) stay with the serial scan.
    if (s && !scansOf(s.partial).some((x) => x.tableColumns.includes(ROW_POSITION))) {
      try {
        p = { split: s, encoded: encodeRel(s.partial), scans: scansOf(s.partial) };
      } catch (e) {
        if (!(e instanceof Unencodable)) throw e;
      }
    }
    prepared.set(rel, p);
  }
  return p as (Prepared & { split: S }) | null;
}

/** The aggregate run in parallel, or null when it cannot be (the caller runs aggregateOp). */
export function parallelAggregate(rel: AggregateRel, ctx: ExecContext): AsyncIterable<Batch> | null {
  if (!parallelEnabled() || !ctx.query.catalog.scanParts || countsRows(rel)) return null;
  const p = prepare(rel, splitAggregate);
  // A scan served from given rows (a merge plan's partial rows, parts listed already) is no catalog scan to split.
  if (!p || p.scans.some((s) => ctx.scanSources?.has(s))) return null;
  const keys = rel.groupBy.length;
  return runTwoPhase(p, ctx, {
    serial: (c) => spillingAggregate(rel, c) ?? aggregateOp(rel, c),
    finish: (merged) => merged.map((b) => finishAggregate(b, keys, p.split.steps)),
    check: (inputRows, partialRows) => {
      if (partialRows > inputRows / 2) throw new NotReducing();
    },
  });
}

/** COUNT(*) of a table: counting batch lengths costs less than the messages. */
function countsRows(rel: AggregateRel): boolean {
  return rel.input.kind === 'scan' && rel.groupBy.length === 0 && rel.aggregates.every((a) => a.name === '$count_star' && !a.filter);
}

/**
 * A top-N of stored columns by stored columns: each row costs one comparison
 * with the threshold, less than what splitting costs (every morsel starts
 * without the serial run's threshold).
 */
function comparesOnly(rel: SortRel): boolean {
  let r = rel.input;
  while (r.kind === 'project' && r.exprs.every((e) => e.kind === 'column')) r = r.input;
  return r.kind === 'scan' && !r.pushedFilters?.length && rel.keys.every((k) => k.expr.kind === 'column');
}

/** The top-N (ORDER BY .. LIMIT) run in parallel, or null (the caller runs sortOp). */
export function parallelTopN(rel: SortRel, ctx: ExecContext): AsyncIterable<Batch> | null {
  if (rel.limit === undefined || !parallelEnabled() || !ctx.query.catalog.scanParts || comparesOnly(rel)) return null;
  const p = prepare(rel, splitTopN);
  if (!p || p.scans.some((s) => ctx.scanSources?.has(s))) return null;
  const layout = layoutOf(rel.columns);
  return runTwoPhase(p, ctx, {
    serial: (c) => sortOp(rel, c),
    finish: (merged) => merged,
    // A morsel's n-th best row: no other morsel's row that ranks after it can be among the best.
    seedOf: (batches) => {
      if (batches.reduce((n, b) => n + b.length, 0) !== rel.limit) return null;
      const last = batches[batches.length - 1]!;
      const row = sliceBatch(last, last.length - 1, last.length);
      return rel.keys.map((k) => evaluateSync(k.expr, row, layout, ctx));
    },
    beats: (a, b) => {
      for (let k = 0; k < rel.keys.length; k++) {
        const c = thresholdComparator(a[k]!, b[k]!, rel.keys[k]!)(0);
        if (c !== 0) return c < 0;
      }
      return false;
    },
  });
}


interface Phases {
  /** The plan itself, serially, with its scans reading from the context. */
  serial(ctx: ExecContext): AsyncIterable<Batch>;
  /** The merge plan's output as the plan's. */
  finish(merged: Batch[]): Batch[];
  /** Called after each morsel's partial result is merged (input rows so far, partial rows so far); may throw NotReducing. */
  check?(inputRows: number, partialRows: number): void;
  /** Top-N: the sort keys a later morsel's rows must beat, from a morsel's partial result (null: none). */
  seedOf?(batches: Batch[]): Vector[] | null;
  /** Whether seed `a` is the stricter one. */
  beats?(a: readonly Vector[], b: readonly Vector[]): boolean;
}

let nextPlanId = 1;

const listParts = (s: ScanInput, ctx: ExecContext): Promise<ScanParts | null> =>
  ctx.query.catalog.scanParts!(s.scan.table, { columns: s.scan.tableColumns, asOfMs: s.scan.asOfMs, history: s.scan.history, filters: scanFilters(s.scan, s.filter ? [s.filter] : []) });

/**
 * Lists the scans' parts, then runs the partial plan per morsel and the merge
 * plan over the results; or the plan serially over the listed parts, for
 * small inputs and after any failure.
 */
async function* runTwoPhase(p: Prepared, ctx: ExecContext, phases: Phases): AsyncGenerator<Batch> {
  const { partial, merge, mergeScan } = p.split;
  const pipe = pipelineOf((partial as AggregateRel | SortRel).input, ctx);
  const listed = pipe && (await listParts(pipe.morsel, ctx));
  const built = pipe && listed ? await Promise.all(pipe.broadcast.map((b) => listParts(b, ctx))) : [];
  if (!pipe || !listed || built.some((b) => b === null)) {
    yield* phases.serial(ctx);
    return;
  }
  const broadcast = pipe.broadcast.map((b, i) => ({ scan: b.scan, ...built[i]! }));
  // Every thread reads a build side once per query (not once per morsel): its join index is cached for that batch.
  let base = ctx;
  for (const b of broadcast) base = withScanSource(base, b.scan, broadcastSource(b.columns, b.parts));
  const scan = pipe.morsel.scan;
  const parts = cut(listed.parts);
  const serialCtx = withParts(base, scan, listed.columns, parts);
  const rows = parts.reduce((n, x) => n + partRows(x), 0);
  const buildRows = broadcast.reduce((n, b) => n + b.parts.reduce((k, x) => k + partRows(x), 0), 0);
  const serial =
    // No parts: nothing to merge (a global aggregate's partials would not make its one row of an empty input).
    parts.length === 0 ||
    rows < parallelOptions.minRows ||
    buildRows > MAX_BROADCAST_ROWS ||
    (!parallelOptions.splitMemory && parts.every((x) => x.kind === 'mem'));
  const pool = serial ? null : workerPool();
  if (!pool) {
    yield* phases.serial(serialCtx);
    return;
  }
  const tasks = morsels(parts, rows, pool.size);
  const workerOf = affinities(tasks);
  parallelCounters.runs++;
  parallelCounters.morsels += tasks.length;
  const planId = nextPlanId++;
  const plan = (): EncodedPlan => ({
    rel: p.encoded,
    morselScan: p.scans.indexOf(scan),
    columns: listed.columns,
    broadcast: broadcast.map((b) => ({ scan: p.scans.indexOf(b.scan), columns: b.columns, parts: b.parts.map(encodePart) })),
    rowCounts: Object.fromEntries(p.scans.map((s) => [tableKey(s.table), ctx.query.catalog.getTable(s.table)?.rowCount ?? Infinity])),
    eval: { nowMicros: String(ctx.eval.nowMicros), timeZone: ctx.eval.timeZone, sessionUser: ctx.eval.sessionUser },
  });
  // Seeds of finished morsels: the strictest for morsel i (an earlier morsel's wins ties, a later one's loses them).
  const seeds: { at: number; keys: Vector[] }[] = [];
  const seedFor = (i: number): TopNSeed | null => {
    let best: TopNSeed | null = null;
    for (const s of seeds) {
      const strict = s.at < i;
      if (best === null || phases.beats!(s.keys, best.keys) || (strict && !best.strict && !phases.beats!(best.keys, s.keys))) best = { keys: s.keys, strict };
    }
    return best;
  };
  const cols = scan.tableColumns.join(',');
  const run = (m: Morsel, i: number): Promise<Batch[]> => {
    const seed = phases.seedOf ? seedFor(i) : null;
    const out =
      m.kind === 'mem'
        ? collectRows(partial, withSeed(withParts(base, scan, listed.columns, [m]), partial, seed))
        : pool.run(planId, plan, m.parts, workerOf[i]!, seed && { keys: encodeBatch({ length: 1, columns: seed.keys }), strict: seed.strict }, morselKey(m, cols)).then((bs) => bs.map(decodeBatch));
    if (phases.seedOf) {
      out.then(
        (bs) => {
          const keys = phases.seedOf!(bs);
          if (keys) seeds.push({ at: i, keys });
        },
        () => {},
      );
    }
    return out;
  };
  let out: Batch[] | null = null;
  try {
    const source = inOrder(tasks, run, 2 * pool.size, pool.size, ctx, phases.check);
    out = phases.finish(await collectRows(merge, withScanSource(ctx, mergeScan, () => source)));
  } catch (e) {
    if (ctx.query.signal.aborted) throw e;
  } finally {
    pool.release(planId);
  }
  if (out === null) {
    parallelCounters.fallbacks++;
    yield* phases.serial(serialCtx);
  } else yield* out;
}

function withSeed(ctx: ExecContext, partial: Rel, seed: TopNSeed | null): ExecContext {
  return seed && partial.kind === 'sort' ? { ...ctx, topNSeeds: new Map([[partial, seed]]) } : ctx;
}

function encodePart(p: ScanPart): EncodedPart {
  return p.kind === 'mem' ? { ...p, batch: encodeBatch(p.batch) } : p;
}

/** Parts cut to at most parallelOptions.morselRows rows (tests). */
function cut(parts: readonly ScanPart[]): ScanPart[] {
  const max = parallelOptions.morselRows;
  if (max <= 0) return [...parts];
  const out: ScanPart[] = [];
  for (const p of parts) {
    const n = partRows(p);
    for (let s = 0; s < n; s += max) {
      const e = Math.min(n, s + max);
      // (`deleted` may name positions outside a cut: readers look up the ones in their rows.)
      out.push(p.kind === 'mem' ? { ...p, batch: sliceBatch(p.batch, s, e), first: p.first + s } : { ...p, start: p.start + s, end: p.start + e, first: p.first + s });
    }
  }
  return out;
}

/** A unit of work: consecutive row groups of one file (run by a worker), or a memory batch (run here). */
type Morsel = { readonly kind: 'file'; readonly parts: RowGroupPart[]; rows: number } | (ScanPart & { kind: 'mem' });

/**
 * Rows a morsel holds at most: 8 row groups, half a file of at most 1M rows
 * (so a file's two morsels alternate between workers, see affinities). Each
 * morsel costs its worker an aggregation's setup, finish and result and the
 * garbage they leave, and this thread a merge. In-process (the test
 * harness's V8 flags), 2 workers, load ~12, median of 20 runs in 3 processes
 * each, a 10M-row SUM/AVG by a 1,000-value key took ~110-126 ms of process
 * CPU per query at 256k rows a morsel and ~81-95 at 512k (V8 full
 * collections per worker over 20 runs ~20 -> ~11); the join with the 100k
 * dimension ~610-620 -> ~510-620; LOWER + REGEXP_CONTAINS within the noise.
 * In the engine (its --initial-old-space-size: workers' full collections
 * are rare) the SUM/AVG's CPU was within the noise either way (load 13-14,
 * workers ~73-78 ms per query); the merges halve.
 */
const MORSEL_ROWS = 524_288;

/**
 * Parts grouped into morsels of up to MORSEL_ROWS rows, fewer when that
 * leaves under ~4 per worker. The first morsel of each worker is one part:
 * the first results (the reduction check, a top-N's seed) come in early.
 */
function morsels(parts: readonly ScanPart[], rows: number, workers: number): Morsel[] {
  const most = Math.min(MORSEL_ROWS, Math.ceil(rows / (4 * workers)));
  const out: Morsel[] = [];
  let cur: (Morsel & { kind: 'file' }) | null = null;
  for (const p of parts) {
    if (p.kind === 'mem') {
      out.push(p);
      cur = null;
      continue;
    }
    const n = partRows(p);
    const max = out.length < workers ? 0 : most;
    if (cur === null || cur.parts[0]!.path !== p.path || cur.rows + n > max) out.push((cur = { kind: 'file', parts: [], rows: 0 }));
    cur.parts.push(p);
    cur.rows += n;
  }
  return out;
}

const morselRows = (m: Morsel): number => (m.kind === 'mem' ? m.batch.length : m.rows);

/** A file morsel's chunks as a worker caches them: its file, row groups and the columns read (pool.ts run). */
const morselKey = (m: Morsel & { kind: 'file' }, cols: string): string => `${m.parts[0]!.path}\u0000${m.parts[0]!.rowGroup}\u0000${m.parts.length}\u0000${cols}`;

/**
 * The worker each morsel goes to: its file's hash plus its place among that
 * file's morsels, so that consecutive morsels (merged in order, a few in
 * flight) alternate between workers, and a query run again over the same
 * table sends each morsel where its chunks are cached. (By a hash of the
 * first row group, runs of consecutive morsels landed on one worker, the
 * other took some over and decoded them again: repeated runs of a 10M-row
 * aggregate cost up to 2-3x the CPU of a run with every chunk cached.)
 * Cut parts (tests): round robin.
 */
function affinities(tasks: readonly Morsel[]): number[] {
  let path = '';
  let h = 0;
  let k = 0;
  return tasks.map((m, i) => {
    if (parallelOptions.morselRows > 0 || m.kind === 'mem') return i;
    const p = m.parts[0]!.path;
    if (p !== path) {
      path = p;
      k = 0;
      h = 0;
      for (let c = 0; c < p.length; c++) h = (h * 31 + p.charCodeAt(c)) | 0;
    }
    return (h >>> 0) + k++;
  });
}

/**
 * The partial results of every morsel, in order, as one stream of batches,
 * with at most `ahead` morsels started beyond the one being merged; at first
 * `start` morsels in flight, until the first morsel is in (with a `check`:
 * until the reduction is checked).
 */
async function* inOrder(
  tasks: readonly Morsel[],
  run: (m: Morsel, i: number) => Promise<Batch[]>,
  ahead: number,
  start: number,
  ctx: ExecContext,
  check?: (inputRows: number, partialRows: number) => void,
): AsyncGenerator<Batch> {
  const pending: (Promise<Batch[]> | undefined)[] = new Array(tasks.length);
  let next = 0;
  let inputRows = 0;
  let partialRows = 0;
  // A slow start: a split that does not pay wastes little, and a top-N's first result seeds the rest.
  let started = false;
  for (let i = 0; i < tasks.length; i++) {
    for (; next < tasks.length && next < i + (started ? 1 + ahead : start); next++) {
      const p = run(tasks[next]!, next);
      // A rejection is seen when its morsel's turn comes (or never, once an earlier one failed).
      p.catch(() => {});
      pending[next] = p;
    }
    const batches = await pending[i]!;
    pending[i] = undefined;
    const n = morselRows(tasks[i]!);
    inputRows += n;
    for (const b of batches) {
      partialRows += b.length;
      yield b;
    }
    if (check && inputRows >= REDUCE_CHECK_ROWS && inputRows - n < REDUCE_CHECK_ROWS * 4) check(inputRows, partialRows);
    started ||= !check || inputRows >= REDUCE_CHECK_ROWS;
    await checkpoint(ctx);
  }
}
