// The bench run: start (or attach to) an emulator, run every case on it and
// on DuckDB in lockstep (never concurrently: 2-core machines), then
// the extra metrics, then write results. Any failure is recorded on the case
// or metric it belongs to and the run goes on.
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { loadCases, quickCase, loadOverrides, loadPeerTable, repoRoot, type BenchCase } from './cases.js';
import { startEmulator, attachEmulator, type EmulatorHandle } from './emulator-process.js';
import { RestClient, RestError } from './rest-client.js';
import { openEmulatorCase } from './emulator-side.js';
import { openDuckdbCase, duckdbVersion } from './duckdb-side.js';
import { runLockstep, type OpenedSide } from './case-session.js';
import { speedProbeMs } from './speed-probe.js';
import { compareRows, hasTopLevelOrderBy, type CanonRow } from './compare.js';
import { errorMessage } from './stats.js';
import { renderTable } from './report.js';
import { renderSvg } from './chart-svg.js';
import type { BenchResult, BenchSummary, CaseResult, ExtraMetrics, MachineInfo, MetricResult } from './types.js';
import { FULL_SIZES, QUICK_SIZES, type MetricContext } from '../metrics/context.js';
import { sampleRss } from '../metrics/rss.js';
import { measureSelect1, measureConcurrentSmall } from '../metrics/latency.js';
import { measureInsertAll } from '../metrics/insert-throughput.js';
import { measureRssAfterLoad, measureHealthzUnderLoad } from '../metrics/memory-load.js';
import { measureDrift } from '../metrics/drift.js';
import { measureDdlDrift } from '../metrics/ddl-drift.js';
import { measureLoadJobs, measureResultPaging } from '../metrics/edges.js';

export interface RunOptions {
  quick: boolean;
  caseFilter: string | null;
  url: string | null;
  /** false: DuckDB side only (no emulator, no extra metrics). */
  emulator?: boolean;
  duckdb: boolean;
  extra: boolean;
  /** Only the extra metrics whose key contains one of these substrings (and no cases unless caseFilter is set). */
  metricFilter?: string[] | null;
  /** Where latest.json / latest.svg go; null writes nothing (tests). */
  outDir: string | null;
  projectId: string;
  /** Caps every emulator request (the case's max_ms otherwise). */
  requestTimeoutMs?: number;
  /** Cases and metrics not started within this many ms of the run start are reported as errors, not run. */
  budgetMs?: number;
  /** Gateway entry point; default dist/gateway.js. Tests pass a stand-in. */
  gateway?: { script: string; nodeArgs?: string[] };
  log: (line: string) => void;
}

export function defaultOutDir(quick: boolean): string {
  return path.join(repoRoot, 'bench', 'results', ...(quick ? ['tmp'] : []));
}

export async function machineInfo(): Promise<MachineInfo> {
  let gitCommit: string | null = null;
  try {
    gitCommit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  } catch {
    // Not a git checkout.
  }
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    totalMemMB: Math.round(os.totalmem() / 1024 / 1024),
    loadAvg1m: Math.round((os.loadavg()[0] ?? 0) * 100) / 100,
    speedProbeMs: { start: speedProbeMs(), end: null },
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    duckdb: await duckdbVersion(),
    date: new Date().toISOString(),
    gitCommit,
  };
}

/** A DDL query answers with no rows on either side; there is nothing to compare. */
function isDdl(sql: string): boolean {
  return /^\s*(CREATE|DROP|ALTER|INSERT|UPDATE|DELETE|MERGE|TRUNCATE)\b/i.test(sql);
}

function matchOf(c: BenchCase, emu: CanonRow[] | null, duck: CanonRow[] | null): CaseResult['match'] {
  if (isDdl(c.query)) return { status: 'n/a', detail: 'DDL statement: no result rows to compare' };
  if (!emu || !duck) return { status: 'n/a', detail: 'needs both sides to succeed' };
  const r = compareRows(emu, duck, hasTopLevelOrderBy(c.query));
  return { status: r.equal ? 'equal' : 'different', detail: r.detail };
}

type Budget = () => boolean;

/**
 * After a failed case: a crash shows up as a closed connection before the
 * exit event, so give the exit a moment to land; an emulator that no longer
 * answers SELECT 1 at all (timeout, refused) is stopped so the next case gets
 * a fresh one instead of another full timeout. An HTTP error answer means it
 * is alive and is left alone.
 */
async function settle(emu: EmulatorHandle, projectId: string, probeMs: number, log: (l: string) => void): Promise<string | null> {
  try {
    await new RestClient(emu.url, projectId).query('SELECT 1', probeMs);
    return null;
  } catch (e) {
    if (e instanceof RestError) return null;
    for (let i = 0; i < 20 && emu.alive(); i++) await new Promise((r) => setTimeout(r, 50));
    if (!emu.alive()) return null;
    log('  emulator does not answer SELECT 1 any more: stopping it for a fresh start');
    await emu.stop(1_000); // it is not answering: no point in a long graceful wait
    return `unresponsive (no answer to SELECT 1 within ${probeMs} ms), stopped`;
  }
}

/**
 * Healthy is not necessarily able to answer queries (the engine may still be
 * warming up): retry SELECT 1 while the answer is 503 or no answer, for up
 * to 15 s, and return spawn → first answer. Any other error is final: the
 * cases will report it.
 */
async function firstQuery(client: RestClient, spawnedAt: number | null): Promise<number | null> {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    try {
      await client.query('SELECT 1', 5_000);
      return spawnedAt === null ? null : Math.round((performance.now() - spawnedAt) * 10) / 10;
    } catch (e) {
      if (e instanceof RestError && e.status !== 503) return null;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return null;
}

async function metric<T>(name: string, log: (l: string) => void, fn: () => Promise<MetricResult<T>>, budgetLeft: Budget, selected = true): Promise<MetricResult<T>> {
  if (!selected) return { status: 'skipped', reason: 'not selected (--metric)' };
  if (!budgetLeft()) return { status: 'error', error: 'not run: run time budget used up' };
  log(`  extra: ${name} ...`);
  try {
    const r = await fn();
    return r;
  } catch (e) {
    log(`  extra: ${name} failed: ${errorMessage(e)}`);
    return { status: 'error', error: errorMessage(e) };
  }
}

export async function runExtraMetrics(ctx: MetricContext, log: (l: string) => void, budgetLeft: Budget = () => true, only: string[] | null = null): Promise<Omit<ExtraMetrics, 'startupMs' | 'idleRss'>> {
  const want = (key: string): boolean => only === null || only.some((o) => key.includes(o));
  const created = await ctx.client.createDataset(ctx.dataset).then(() => null, (e: unknown) => errorMessage(e));
  const fail = { status: 'error' as const, error: `create metrics dataset: ${created ?? ''}` };
  if (created !== null) {
    return { select1: fail, concurrentSmall: fail, insertAll: fail, ddlDrift: fail, resultPaging: fail, loadJobs: fail, rssAfterLoad: fail, healthzUnderLoad: fail, drift: fail };
  }
  try {
    const select1 = await metric('SELECT 1 latency', log, () => measureSelect1(ctx), budgetLeft, want('select1'));
    const concurrentSmall = await metric(`${ctx.sizes.concurrentClients} concurrent clients`, log, () => measureConcurrentSmall(ctx), budgetLeft, want('concurrentSmall'));
    const insertAll = await metric('insertAll throughput', log, () => measureInsertAll(ctx), budgetLeft, want('insertAll'));
    const ddlDrift = await metric('DDL drift', log, () => measureDdlDrift(ctx), budgetLeft, want('ddlDrift'));
    const resultPaging = await metric(`paging a ${ctx.sizes.pagingRows}-row result`, log, () => measureResultPaging(ctx), budgetLeft, want('resultPaging'));
    const loadJobs = await metric(`${ctx.sizes.loadJobRows}-row load jobs`, log, () => measureLoadJobs(ctx), budgetLeft, want('loadJobs'));
    // /healthz under load groups the table the RSS metric loads.
    const rssAfterLoad = await metric(`RSS after ${ctx.sizes.loadRows}-row load`, log, () => measureRssAfterLoad(ctx), budgetLeft, want('rssAfterLoad') || want('healthzUnderLoad'));
    const healthzUnderLoad = rssAfterLoad.status !== 'ok'
      ? (want('healthzUnderLoad') ? { status: 'error' as const, error: `no table to GROUP BY: ${rssAfterLoad.status === 'error' ? rssAfterLoad.error : rssAfterLoad.reason}` } : { status: 'skipped' as const, reason: 'not selected (--metric)' })
      : await metric('/healthz under load', log, () => measureHealthzUnderLoad(ctx), budgetLeft, want('healthzUnderLoad'));
    // Last: it ends with an idle pause, after which the engine's young generation is small again.
    const drift = await metric('drift', log, () => measureDrift(ctx), budgetLeft, want('drift'));
    return { select1, concurrentSmall, insertAll, ddlDrift, resultPaging, loadJobs, rssAfterLoad, healthzUnderLoad, drift };
  } finally {
    await ctx.client.deleteDataset(ctx.dataset).catch(() => undefined);
  }
}

export function summarizeCases(cases: CaseResult[]): BenchSummary {
  const ratios = cases.map((c) => c.ratio).filter((r): r is number => r !== null && r > 0);
  return {
    cases: cases.length,
    emulatorOk: cases.filter((c) => c.emulator.status === 'ok').length,
    duckdbOk: cases.filter((c) => c.duckdb.status === 'ok').length,
    equal: cases.filter((c) => c.match.status === 'equal').length,
    different: cases.filter((c) => c.match.status === 'different').length,
    geomeanRatio: ratios.length
      ? Math.round(Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length) * 100) / 100
      : null,
  };
}

export async function runBench(opts: RunOptions): Promise<BenchResult> {
  const t0 = performance.now();
  const log = opts.log;
  const runId = randomBytes(3).toString('hex');
  const machine = await machineInfo();
  const overrides = loadOverrides();
  const peers = loadPeerTable();
  // --metric alone measures only those metrics, no cases.
  const metricsOnly = (opts.metricFilter ?? null) !== null && opts.caseFilter === null;
  const cases = metricsOnly ? [] : loadCases(opts.caseFilter ?? undefined).map((c) => (opts.quick ? quickCase(c) : c));
  if (cases.length === 0 && !metricsOnly) throw new Error(`no case matches ${opts.caseFilter ?? ''}`);

  const gateway = opts.gateway ?? { script: path.join(repoRoot, 'dist', 'gateway.js') };
  const emulatorInfo: BenchResult['emulator'] = {
    url: opts.url,
    command: opts.url ? null : [...(gateway.nodeArgs ?? []), path.relative(repoRoot, gateway.script)].join(' '),
    status: 'ok',
    restarts: [],
  };
  let emu: EmulatorHandle | null = null;
  const start = async (): Promise<EmulatorHandle> =>
    opts.url ? attachEmulator(opts.url, opts.projectId) : startEmulator(gateway.script, opts.projectId, { nodeArgs: gateway.nodeArgs });
  const useEmulator = opts.emulator ?? true;
  if (!useEmulator) {
    emulatorInfo.status = 'skipped';
    emulatorInfo.command = null;
  } else {
    try {
      log(opts.url ? `attaching to ${opts.url}` : `starting ${path.relative(repoRoot, gateway.script)}`);
      emu = await start();
      emulatorInfo.url = emu.url;
      log(`emulator healthy at ${emu.url}${emu.startupMs !== null ? ` after ${emu.startupMs} ms` : ''}`);
    } catch (e) {
      emulatorInfo.status = 'error';
      emulatorInfo.error = errorMessage(e);
      log(`emulator unavailable: ${emulatorInfo.error}`);
    }
  }

  const firstQueryMs = emu ? await firstQuery(new RestClient(emu.url, opts.projectId, opts.requestTimeoutMs), emu.spawnedAt) : null;
  let extra: ExtraMetrics | null = null;
  if (opts.extra && useEmulator) {
    const skipped = { status: 'skipped' as const, reason: 'emulator not running' };
    extra = {
      startupMs: skipped, idleRss: skipped, rssAfterLoad: skipped, insertAll: skipped, ddlDrift: skipped, resultPaging: skipped, loadJobs: skipped,
      select1: skipped, concurrentSmall: skipped, healthzUnderLoad: skipped, drift: skipped,
    };
    if (emu) {
      extra.startupMs = emu.startupMs !== null
        ? { status: 'ok', ms: emu.startupMs, firstQueryMs }
        : { status: 'skipped', reason: 'attached with --url' };
      // Let start-up allocations settle before calling it idle.
      await new Promise((r) => setTimeout(r, 500));
      extra.idleRss = emu.pid !== null
        ? { status: 'ok', ...sampleRss(emu.pid) }
        : { status: 'skipped', reason: 'attached with --url' };
    }
  }

  // One crash or hang must not void the rest of the run: restart and say so.
  let stopReason: string | null = null;
  const ensureEmulator = async (when: string): Promise<void> => {
    if (!emu || emu.alive() || opts.url) return;
    const note = stopReason ?? `emulator ${emu.exitReason() ?? 'died'} ${when}: ${emu.logTail().split('\n').slice(-3).join(' | ')}`;
    stopReason = null;
    emulatorInfo.restarts.push(note);
    log(`  ${note}; restarting`);
    await emu.stop();
    try {
      emu = await start();
    } catch (e) {
      emu = null;
      emulatorInfo.status = 'error';
      emulatorInfo.error = `restart failed: ${errorMessage(e)}`;
    }
  };

  const results: CaseResult[] = [];
  const budgetLeft: Budget = () => opts.budgetMs === undefined || performance.now() - t0 < opts.budgetMs;
  for (const c0 of cases) {
    const c = opts.requestTimeoutMs ? { ...c0, timeoutMs: Math.min(c0.timeoutMs, opts.requestTimeoutMs) } : c0;
    log(`case ${c.name}`);
    await ensureEmulator(`before ${c.name}`);
    // Both sides are set up, then timed in lockstep (case-session.ts).
    let emuOpen: OpenedSide;
    if (!useEmulator) emuOpen = { failed: { status: 'skipped' } };
    // A hung or very slow emulator must not make a smoke run unbounded (DuckDB is cheap and still runs).
    else if (!budgetLeft()) emuOpen = { failed: { status: 'error', error: `not run: run time budget of ${opts.budgetMs} ms used up` } };
    else if (emu) emuOpen = await openEmulatorCase(new RestClient(emu.url, opts.projectId, opts.requestTimeoutMs), c, runId);
    else emuOpen = { failed: { status: 'error', error: `emulator not running: ${emulatorInfo.error ?? 'unknown'}` } };
    const duckOpen: OpenedSide = opts.duckdb ? await openDuckdbCase(c, overrides[c.name]) : { failed: { status: 'skipped' } };
    const [emuOut, duckOut] = await runLockstep([emuOpen, duckOpen], c.warmup, c.iterations);
    const emuSide = emuOut!.result;
    const duckSide = duckOut!.result;
    if (emu && emuSide.status === 'error') {
      // A crash shows up as a closed connection before the exit event: let it land so the next case restarts.
      const stopped = opts.url ? null : await settle(emu, opts.projectId, Math.min(5_000, opts.requestTimeoutMs ?? 5_000), log);
      if (stopped) stopReason = `emulator ${stopped} after ${c.name}`;
      else if (!emu.alive()) emuSide.error += `\n(emulator ${emu.exitReason() ?? 'died'})\n${emu.logTail()}`;
    }
    log(`  emulator: ${emuSide.status === 'ok' ? `p50 ${emuSide.latency?.p50} ms` : emuSide.error ?? emuSide.status}`);
    log(`  duckdb:   ${duckSide.status === 'ok' ? `p50 ${duckSide.latency?.p50} ms` : duckSide.error ?? duckSide.status}`);
    const emuRows = emuOut!.rows;
    const duckRows = duckOut!.rows;
    const ep = emuSide.latency?.p50;
    const dp = duckSide.latency?.p50;
    results.push({
      name: c.name, tags: c.tags, iterations: c.iterations, warmup: c.warmup,
      emulator: emuSide, duckdb: duckSide,
      ratio: ep !== undefined && dp !== undefined && dp > 0 ? Math.round((ep / dp) * 100) / 100 : null,
      peer: peers[c.name] ?? null,
      match: opts.duckdb ? matchOf(c, emuRows, duckRows) : { status: 'n/a', detail: 'DuckDB side disabled' },
    });
  }

  if (extra) await ensureEmulator('before the extra metrics');
  if (extra && emu && emu.alive()) {
    const ctx: MetricContext = {
      client: new RestClient(emu.url, opts.projectId, opts.requestTimeoutMs),
      gatewayPid: emu.pid,
      sizes: opts.quick ? QUICK_SIZES : FULL_SIZES,
      dataset: `bench_${runId}_metrics`,
      heavyTimeoutMs: opts.requestTimeoutMs ?? 300_000,
      duckdb: opts.duckdb,
    };
    Object.assign(extra, await runExtraMetrics(ctx, log, budgetLeft, opts.metricFilter ?? null));
  } else if (extra && emu) {
    const dead = { status: 'error' as const, error: `emulator died during the cases: ${emu.logTail().split('\n').slice(-3).join(' | ')}` };
    Object.assign(extra, { select1: dead, concurrentSmall: dead, insertAll: dead, ddlDrift: dead, resultPaging: dead, loadJobs: dead, rssAfterLoad: dead, healthzUnderLoad: dead, drift: dead });
  }

  if (emu) {
    emulatorInfo.log = emu.logTail();
    await emu.stop();
  }
  machine.speedProbeMs.end = speedProbeMs();
  const result: BenchResult = {
    summary: summarizeCases(results),
    machine,
    options: { quick: opts.quick, caseFilter: opts.caseFilter, url: opts.url, emulator: useEmulator, duckdb: opts.duckdb, extra: opts.extra && useEmulator },
    emulator: emulatorInfo,
    cases: results,
    extra,
    totalMs: Math.round(performance.now() - t0),
  };
  if (opts.outDir) {
    mkdirSync(opts.outDir, { recursive: true });
    writeFileSync(path.join(opts.outDir, 'latest.json'), JSON.stringify(result, null, 2) + '\n');
    writeFileSync(path.join(opts.outDir, 'latest.svg'), renderSvg(result));
  }
  return result;
}

export { renderTable };
