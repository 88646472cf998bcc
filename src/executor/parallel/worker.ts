// Worker thread of the execution pool (pool.ts): runs a plan over one morsel
// (row groups read from the fragment file by path through this thread's own
// chunk cache) and posts the output batches back. Plans arrive once per
// worker and query (decoded here: calls are resolved again in this thread's
// registry, join build sides read once) and are dropped when the query is done.
import '../../functions/index.js';
import { parentPort, workerData } from 'node:worker_threads';
import type { Rel, ScanRel } from '../../analyzer/resolved.js';
import type { QueryContext } from '../../planner/api.js';
import type { TableId } from '../../storage/api.js';
import { chunkCache, newScanPass, NO_KEEP_PASS } from '../../storage/chunk-cache.js';
import { memoryBudget, privateGc } from '../../storage/memory-budget.js';
import type { ScanPart } from '../../storage/table-state.js';
import type { Column } from '../../types/schema.js';
import { makeExecContext, type ExecContext } from '../context.js';
import { collectRows } from '../execute.js';
import { decodeBatch, decodeRel, encodeBatch, tableKey } from './codec.js';
import { broadcastSource, withParts, withScanSource } from './parts.js';
import type { EncodedPlan, FromWorker, ToWorker, WorkerInit } from './pool.js';
import { scansOf } from './split.js';

interface Plan {
  readonly rel: Rel;
  readonly scan: ScanRel;
  readonly columns: readonly Column[];
  /** With the build sides' sources. */
  readonly ctx: ExecContext;
  /** The chunk cache's scan pass of this query's morsels on this thread (chunk-cache.ts newScanPass). */
  readonly pass: number;
}

const init = workerData as WorkerInit;
memoryBudget.attach(init.budget);
// This thread's dead chunks are collected once enough piled up, as on the main thread.
const gc = privateGc();
if (gc) memoryBudget.collect = () => gc();
chunkCache.budget = init.cacheBudget;
const port = parentPort!;
const plans = new Map<number, Plan>();
/** Plans kept at most (a query whose drop message never came must not pin its plan forever). */
const MAX_PLANS = 32;

/** What the operators may ask of a catalog here: row counts (a join picks its build side by them); nothing else. */
function catalogOf(rowCounts: EncodedPlan['rowCounts']): QueryContext['catalog'] {
  const getTable = (id: TableId): { rowCount: number } => ({ rowCount: rowCounts[tableKey(id)] ?? Infinity });
  return new Proxy({} as QueryContext['catalog'], {
    get(_t, key): unknown {
      if (key === 'getTable') return getTable;
      if (key === 'scanParts' || key === 'then') return undefined;
      throw new Error(`a worker thread has no catalog (${String(key)})`);
    },
  });
}

function decodePlan(e: EncodedPlan): Plan {
  const rel = decodeRel(e.rel);
  const scans = scansOf(rel);
  const nowMicros = BigInt(e.eval.nowMicros);
  const query = {
    sql: '',
    projectId: '',
    params: { named: new Map(), positional: [] },
    catalog: catalogOf(e.rowCounts),
    jobId: '',
    signal: new AbortController().signal,
    dryRun: false,
    nowMicros,
    sessionUser: e.eval.sessionUser,
  } as QueryContext;
  let ctx = makeExecContext(query, { nowMicros, timeZone: e.eval.timeZone, sessionUser: e.eval.sessionUser });
  for (const b of e.broadcast) {
    const parts: ScanPart[] = b.parts.map((p) => (p.kind === 'mem' ? { ...p, batch: decodeBatch(p.batch) } : p));
    ctx = withScanSource(ctx, scans[b.scan]!, broadcastSource(b.columns, parts));
  }
  return { rel, scan: scans[e.morselScan]!, columns: e.columns, ctx, pass: newScanPass() };
}

function planOf(m: ToWorker & { type: 'task' }): Plan {
  let p = plans.get(m.planId);
  if (p) return p;
  if (!m.plan) throw new Error(`plan ${m.planId} unknown to this worker`);
  p = decodePlan(m.plan);
  plans.set(m.planId, p);
  for (const k of plans.keys()) {
    if (plans.size <= MAX_PLANS) break;
    plans.delete(k);
  }
  return p;
}

async function run(m: ToWorker & { type: 'task' }): Promise<void> {
  try {
    const p = planOf(m);
    let ctx = withParts(p.ctx, p.scan, p.columns, m.parts, m.keep ? p.pass : NO_KEEP_PASS);
    if (m.seed && p.rel.kind === 'sort') ctx = { ...ctx, topNSeeds: new Map([[p.rel, { keys: [...decodeBatch(m.seed.keys).columns], strict: m.seed.strict }]]) };
    const out = await collectRows(p.rel, ctx);
    // Copied, not transferred (codec.ts compact: detaching buffers slows this thread's typed-array loops).
    port.postMessage({ type: 'done', id: m.id, batches: out.map(encodeBatch) } satisfies FromWorker);
  } catch (e) {
    port.postMessage({ type: 'failed', id: m.id, message: e instanceof Error ? e.message : String(e) } satisfies FromWorker);
  }
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'drop') plans.delete(m.planId);
  else if (m.type === 'trim') chunkCache.shrink();
  else void run(m);
});
