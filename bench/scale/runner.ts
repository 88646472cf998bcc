// The scale run: load the scale set's tables once on each side (emulator:
// CTAS over REST; DuckDB: in-process, 2 threads), then time every case in
// lockstep (lib/case-session.ts) with the process RSS of each side sampled
// throughout, and compare the answers. Failures are recorded on the case and
// the run goes on; an emulator that dies takes its tables with it, so the
// cases after that report it instead of reloading.
import path from 'node:path';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { repoRoot } from '../lib/cases.js';
import { startEmulator, attachEmulator, type EmulatorHandle } from '../lib/emulator-process.js';
import { RestClient, type QueryAnswer } from '../lib/rest-client.js';
import { runLockstep, type CaseSession, type MoreRounds, type OpenedSide } from '../lib/case-session.js';
import { canonDuckValue, canonRestRows, compareRows, type CanonRow } from '../lib/compare.js';
import { errorMessage } from '../lib/stats.js';
import { machineInfo } from '../lib/runner.js';
import { speedProbeMs } from '../lib/speed-probe.js';
import { findEnginePid, readRssMB } from '../metrics/rss.js';
import type { MachineInfo, SideResult } from '../lib/types.js';
import { emulatorSetup, duckdbSetup, sizeLabel } from './dataset.js';
import { renderScaleSvg } from './report.js';
import { scaleCases, bindTables } from './cases.js';

/**
 * A case whose timed rounds (both sides) took under 5 s so far takes more, up
 * to 15: at 100M rows (3 iterations) order_by_float_limit100's p50 of three
 * ~10-20 ms samples moved its 10M -> 100M growth ratio between 1.16 and 1.68
 * from run to run, while the engine's CPU per query was the same at 1,526
 * row groups as at 153 (~8.5 ms, both tables in one engine, alternating).
 */
const QUICK_CASE_ROUNDS: MoreRounds = { maxIterations: 15, untilMs: 5_000 };

export interface ScaleOptions {
  rows: number;
  warmup: number;
  iterations: number;
  /** Quick cases take more timed rounds (case-session.ts MoreRounds); default QUICK_CASE_ROUNDS. */
  moreRounds?: MoreRounds;
  /** Only cases whose name contains one of these comma-separated substrings. */
  caseFilter: string | null;
  url: string | null;
  emulator: boolean;
  duckdb: boolean;
  /** DuckDB threads (the team machines have 2 cores). */
  duckdbThreads: number;
  /** Where scale-<size>.json / .svg go; null writes nothing (tests). */
  outDir: string | null;
  projectId: string;
  /** Per query (and per load statement) ceiling. */
  timeoutMs: number;
  gateway?: { script: string; nodeArgs?: string[] };
  /** The engine's --memory-limit (e.g. '4GB'); null: its default. */
  memoryLimit: string | null;
  /** After the cases, restart the emulator on its data directory and answer RESTART_CASES again (needs an emulator started here). */
  restart: boolean;
  log: (line: string) => void;
}

/** Re-run after a restart: the row count, and a case reading every row group of three columns from disk again. */
const RESTART_CASES = ['count_star', 'sum_avg_by_key1000'];

export interface ScaleSide extends SideResult {
  /** Highest RSS seen while the case ran (emulator: gateway + engine with its worker threads; DuckDB: this process, which hosts it). */
  peakRssMB?: number | null;
}

export interface ScaleCaseResult {
  name: string;
  what: string;
  emulator: ScaleSide;
  duckdb: ScaleSide;
  ratio: number | null;
  match: { status: 'equal' | 'different' | 'n/a'; detail: string };
}

export interface LoadResult {
  status: 'ok' | 'error' | 'skipped';
  ms?: number;
  rowsPerSec?: number;
  /** RSS after the load (emulator: gateway + engine). */
  rssMB?: number | null;
  error?: string;
  sql?: string[];
}

/** The emulator stopped and started again on the same data directory; then cases answered again, cold. */
export interface RestartResult {
  status: 'ok' | 'error' | 'skipped';
  error?: string;
  /** Spawn to the first 200 of /healthz. */
  startMs?: number | null;
  idleRssMB?: number | null;
  cases: { name: string; status: 'ok' | 'error'; ms?: number; peakRssMB?: number | null; equal?: boolean; error?: string }[];
}

export interface ScaleResult {
  kind: 'scale';
  rows: number;
  size: string;
  machine: MachineInfo;
  options: { warmup: number; iterations: number; moreRounds?: MoreRounds; caseFilter: string | null; url: string | null; emulator: boolean; duckdb: boolean; duckdbThreads: number; memoryLimit: string | null };
  emulator: { url: string | null; command: string | null; status: 'ok' | 'error' | 'skipped'; error?: string; log?: string; idleRssMB?: number | null };
  load: { emulator: LoadResult; duckdb: LoadResult };
  cases: ScaleCaseResult[];
  restart: RestartResult;
  summary: { cases: number; equal: number; different: number; geomeanRatio: number | null; worstRatio: number | null };
  totalMs: number;
}

/** The summed VmRSS of `pids` in MB (null when none can be read). */
function treeRssMB(pids: readonly number[]): number | null {
  let sum: number | null = null;
  for (const p of pids) {
    const r = readRssMB(p);
    if (r !== null) sum = (sum ?? 0) + r;
  }
  return sum === null ? null : Math.round(sum * 10) / 10;
}

/** Samples both sides' RSS every 100 ms; `take()` returns and resets the peaks. */
class RssSampler {
  private emuPeak: number | null = null;
  private duckPeak: number | null = null;
  private readonly timer: NodeJS.Timeout;
  constructor(private emulatorPids: () => readonly number[]) {
    this.timer = setInterval(() => this.sample(), 100);
    this.timer.unref();
  }
  sample(): void {
    const e = treeRssMB(this.emulatorPids());
    if (e !== null && (this.emuPeak === null || e > this.emuPeak)) this.emuPeak = e;
    const d = Math.round(process.memoryUsage.rss() / 1024 / 1024 * 10) / 10;
    if (this.duckPeak === null || d > this.duckPeak) this.duckPeak = d;
  }
  take(): { emulator: number | null; duckdb: number | null } {
    this.sample();
    const r = { emulator: this.emuPeak, duckdb: this.duckPeak };
    this.emuPeak = null;
    this.duckPeak = null;
    return r;
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

function summarize(cases: ScaleCaseResult[]): ScaleResult['summary'] {
  const ratios = cases.map((c) => c.ratio).filter((r): r is number => r !== null && r > 0);
  return {
    cases: cases.length,
    equal: cases.filter((c) => c.match.status === 'equal').length,
    different: cases.filter((c) => c.match.status === 'different').length,
    geomeanRatio: ratios.length ? Math.round(Math.exp(ratios.reduce((a, r) => a + Math.log(r), 0) / ratios.length) * 100) / 100 : null,
    worstRatio: ratios.length ? Math.max(...ratios) : null,
  };
}

export function scaleOutputName(rows: number): string {
  return `scale-${sizeLabel(rows)}`;
}

export async function runScale(opts: ScaleOptions): Promise<ScaleResult> {
  const t0 = performance.now();
  const log = opts.log;
  const machine = await machineInfo();
  const cases = scaleCases(opts.rows).filter((c) => {
    const parts = (opts.caseFilter ?? '').split(',').map((p) => p.trim()).filter(Boolean);
    return parts.length === 0 || parts.some((p) => c.name.includes(p));
  });
  if (cases.length === 0) throw new Error(`no scale case matches ${opts.caseFilter ?? ''}`);
  const gateway = opts.gateway ?? { script: path.join(repoRoot, 'dist', 'gateway.js') };
  const emuInfo: ScaleResult['emulator'] = {
    url: opts.url,
    command: opts.url || !opts.emulator ? null : [...(gateway.nodeArgs ?? []), path.relative(repoRoot, gateway.script)].join(' '),
    status: opts.emulator ? 'ok' : 'skipped',
  };
  const load: ScaleResult['load'] = { emulator: { status: 'skipped' }, duckdb: { status: 'skipped' } };
  const ds = `scale_${randomBytes(3).toString('hex')}`;
  let emu: EmulatorHandle | null = null;
  let enginePid: number | null = null;
  // The emulator's resident set: gateway + engine (its execution workers are threads of the engine).
  const emulatorPids = (): number[] => (emu?.pid == null ? [] : enginePid === null ? [emu.pid] : [emu.pid, enginePid]);
  const sampler = new RssSampler(emulatorPids);
  let client: RestClient | null = null;
  let instance: DuckDBInstance | null = null;
  let conn: DuckDBConnection | null = null;
  const results: ScaleCaseResult[] = [];
  const emuRows = new Map<string, CanonRow[]>();
  const restart: RestartResult = { status: 'skipped', cases: [] };
  const restartable = opts.restart && opts.emulator && !opts.url;
  const dataDir = restartable ? mkdtempSync(path.join(os.tmpdir(), 'bench-scale-')) : undefined;
  const startOpts = { nodeArgs: gateway.nodeArgs, dataDir, args: opts.memoryLimit ? ['--memory-limit', opts.memoryLimit] : [] };
  try {
    // ---- emulator: start, load
    if (opts.emulator) {
      try {
        log(opts.url ? `attaching to ${opts.url}` : `starting ${path.relative(repoRoot, gateway.script)}`);
        emu = opts.url ? await attachEmulator(opts.url, opts.projectId) : await startEmulator(gateway.script, opts.projectId, startOpts);
        emuInfo.url = emu.url;
        enginePid = emu.pid === null ? null : findEnginePid(emu.pid);
        client = new RestClient(emu.url, opts.projectId);
        await client.query('SELECT 1', 30_000);
        emuInfo.idleRssMB = treeRssMB(emulatorPids());
      } catch (e) {
        emuInfo.status = 'error';
        emuInfo.error = errorMessage(e);
        log(`emulator unavailable: ${emuInfo.error}`);
        client = null;
      }
      if (client) {
        const sql = emulatorSetup(ds, opts.rows);
        load.emulator = { status: 'ok', sql: [sql.fact, sql.dim] };
        try {
          await client.createDataset(ds);
          log(`emulator: loading ${opts.rows.toLocaleString('en')} rows (CTAS) ...`);
          const l0 = performance.now();
          await client.query(sql.fact, opts.timeoutMs);
          const ms = performance.now() - l0;
          await client.query(sql.dim, opts.timeoutMs);
          load.emulator = { ...load.emulator, ms: Math.round(ms), rowsPerSec: Math.round(opts.rows / (ms / 1000)), rssMB: treeRssMB(emulatorPids()) };
          log(`  loaded in ${(ms / 1000).toFixed(1)} s (${load.emulator.rowsPerSec!.toLocaleString('en')} rows/s), emulator RSS ${load.emulator.rssMB ?? '-'} MB`);
        } catch (e) {
          load.emulator = { ...load.emulator, status: 'error', error: errorMessage(e) };
          log(`  emulator load failed: ${load.emulator.error}`);
        }
      }
    }
    // ---- DuckDB: in-process instance, load
    if (opts.duckdb) {
      const sql = duckdbSetup(opts.rows);
      load.duckdb = { status: 'ok', sql: [sql.fact, sql.dim] };
      try {
        instance = await DuckDBInstance.create(':memory:', { threads: String(opts.duckdbThreads) });
        conn = await instance.connect();
        log(`duckdb: loading ${opts.rows.toLocaleString('en')} rows ...`);
        const l0 = performance.now();
        await conn.run(sql.fact);
        const ms = performance.now() - l0;
        await conn.run(sql.dim);
        load.duckdb = { ...load.duckdb, ms: Math.round(ms), rowsPerSec: Math.round(opts.rows / (ms / 1000)), rssMB: Math.round(process.memoryUsage.rss() / 1024 / 1024) };
        log(`  loaded in ${(ms / 1000).toFixed(1)} s`);
      } catch (e) {
        load.duckdb = { ...load.duckdb, status: 'error', error: errorMessage(e) };
        log(`  duckdb load failed: ${load.duckdb.error}`);
      }
    }
    sampler.take();

    // ---- cases, in lockstep
    for (const c of cases) {
      log(`case ${c.name}`);
      const emuSql = bindTables(c.emulator, `${ds}.f`, `${ds}.dim`);
      const duckSql = bindTables(c.duckdb, 'f', 'dim');
      const emuOpen = openEmulator(emu, client, load.emulator, emuSql, opts);
      const duckOpen = openDuckdb(conn, load.duckdb, duckSql, opts.duckdb);
      const [emuOut, duckOut] = await runLockstep([emuOpen, duckOpen], opts.warmup, opts.iterations, opts.moreRounds ?? QUICK_CASE_ROUNDS);
      const peaks = sampler.take();
      const e: ScaleSide = { ...emuOut!.result, ...(emuOut!.result.status === 'ok' ? { peakRssMB: peaks.emulator } : {}) };
      const d: ScaleSide = { ...duckOut!.result, ...(duckOut!.result.status === 'ok' ? { peakRssMB: peaks.duckdb } : {}) };
      if (e.status === 'error' && emu && !emu.alive()) e.error += `\n(emulator ${emu.exitReason() ?? 'died'})\n${emu.logTail()}`;
      const ep = e.latency?.p50;
      const dp = d.latency?.p50;
      if (emuOut!.rows) emuRows.set(c.name, emuOut!.rows);
      const match: ScaleCaseResult['match'] = emuOut!.rows && duckOut!.rows
        ? (() => {
            const r = compareRows(emuOut!.rows!, duckOut!.rows!, c.ordered);
            return { status: r.equal ? 'equal' : 'different', detail: r.detail };
          })()
        : { status: 'n/a', detail: 'needs both sides to succeed' };
      results.push({ name: c.name, what: c.what, emulator: e, duckdb: d, ratio: ep !== undefined && dp !== undefined && dp > 0 ? Math.round((ep / dp) * 100) / 100 : null, match });
      log(`  emulator: ${e.status === 'ok' ? `p50 ${ep} ms, peak RSS ${e.peakRssMB ?? '-'} MB` : (e.error ?? e.status).split('\n')[0]}`);
      log(`  duckdb:   ${d.status === 'ok' ? `p50 ${dp} ms` : (d.error ?? d.status).split('\n')[0]}`);
      log(`  ${match.status}: ${match.detail}`);
    }

    // ---- restart on the same data directory, answer again from disk
    if (restartable && emu && client && load.emulator.status === 'ok') {
      log('restart: stopping the emulator, starting it on the same data directory');
      try {
        await emu.stop();
        emu = await startEmulator(gateway.script, opts.projectId, startOpts);
        enginePid = emu.pid === null ? null : findEnginePid(emu.pid);
        client = new RestClient(emu.url, opts.projectId);
        restart.status = 'ok';
        restart.startMs = emu.startupMs;
        restart.idleRssMB = treeRssMB(emulatorPids());
        sampler.take();
        for (const c of cases.filter((k) => RESTART_CASES.includes(k.name))) {
          const sql = bindTables(c.emulator, `${ds}.f`, `${ds}.dim`);
          try {
            const t0 = performance.now();
            const a = await client.query(sql, opts.timeoutMs);
            const ms = Math.round((performance.now() - t0) * 10) / 10;
            const before = emuRows.get(c.name);
            const equal = before ? compareRows(canonRestRows(a.fields, a.rows), before, c.ordered).equal : undefined;
            restart.cases.push({ name: c.name, status: 'ok', ms, peakRssMB: sampler.take().emulator, ...(equal === undefined ? {} : { equal }) });
            log(`  ${c.name} after restart: ${ms} ms${equal === undefined ? '' : equal ? ', same answer' : ', DIFFERENT answer'}`);
          } catch (e) {
            restart.cases.push({ name: c.name, status: 'error', error: errorMessage(e) });
            log(`  ${c.name} after restart failed: ${errorMessage(e)}`);
          }
        }
      } catch (e) {
        restart.status = 'error';
        restart.error = errorMessage(e);
        log(`  restart failed: ${restart.error}`);
      }
    }
  } finally {
    sampler.stop();
    if (client && load.emulator.status === 'ok') await client.deleteDataset(ds).catch(() => undefined);
    if (emu) {
      emuInfo.log = emu.logTail();
      await emu.stop();
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    conn?.closeSync();
    instance?.closeSync();
  }
  machine.speedProbeMs.end = speedProbeMs();
  const result: ScaleResult = {
    kind: 'scale',
    rows: opts.rows,
    size: sizeLabel(opts.rows),
    machine,
    options: { warmup: opts.warmup, iterations: opts.iterations, moreRounds: opts.moreRounds ?? QUICK_CASE_ROUNDS, caseFilter: opts.caseFilter, url: opts.url, emulator: opts.emulator, duckdb: opts.duckdb, duckdbThreads: opts.duckdbThreads, memoryLimit: opts.memoryLimit },
    emulator: emuInfo,
    load,
    cases: results,
    restart,
    summary: summarize(results),
    totalMs: Math.round(performance.now() - t0),
  };
  if (opts.outDir) {
    mkdirSync(opts.outDir, { recursive: true });
    const base = path.join(opts.outDir, scaleOutputName(opts.rows));
    writeFileSync(`${base}.json`, JSON.stringify(result, null, 2) + '\n');
    writeFileSync(`${base}.svg`, renderScaleSvg(result));
  }
  return result;
}

function openEmulator(emu: EmulatorHandle | null, client: RestClient | null, load: LoadResult, sql: string, opts: ScaleOptions): OpenedSide {
  if (!opts.emulator) return { failed: { status: 'skipped' } };
  if (!client || !emu) return { failed: { status: 'error', error: 'emulator not running' } };
  if (load.status !== 'ok') return { failed: { status: 'error', error: `no table: load failed (${load.error ?? ''})` } };
  if (!emu.alive()) return { failed: { status: 'error', error: `emulator ${emu.exitReason() ?? 'died'} (its tables went with it)` } };
  let last: QueryAnswer | null = null;
  const session: CaseSession = {
    setupMs: 0,
    sql: { setup: [], query: sql },
    async run() {
      const t0 = performance.now();
      last = await client.query(sql, opts.timeoutMs);
      return performance.now() - t0;
    },
    lastRows: () => (last ? canonRestRows(last.fields, last.rows) : []),
    details: () => ({ pages: last?.pages }),
    close: async () => undefined,
  };
  return { session };
}

function openDuckdb(conn: DuckDBConnection | null, load: LoadResult, sql: string, enabled: boolean): OpenedSide {
  if (!enabled) return { failed: { status: 'skipped' } };
  if (!conn || load.status !== 'ok') return { failed: { status: 'error', error: `no table: load failed (${load.error ?? ''})` } };
  let last: { types: string[]; rows: unknown[][] } = { types: [], rows: [] };
  const session: CaseSession = {
    setupMs: 0,
    sql: { setup: [], query: sql },
    async run() {
      const t0 = performance.now();
      const reader = await conn.runAndReadAll(sql);
      last = { types: reader.columnTypes().map((t) => t.toString()), rows: reader.getRowsJson() };
      return performance.now() - t0;
    },
    lastRows: (): CanonRow[] => last.rows.map((r) => r.map((v, i) => canonDuckValue(last.types[i] ?? '', v))),
    close: async () => undefined,
  };
  return { session };
}
