// Shapes of bench/results/*.json. One result per case; a side that failed
// carries status 'error' and the message, never a partial timing.
import type { Summary } from './stats.js';
import type { PeerNumbers } from './cases.js';

export type SideStatus = 'ok' | 'error' | 'skipped';

export interface SideResult {
  status: SideStatus;
  /** Timed iterations in ms (request start → full answer incl. all pages). */
  samples?: number[];
  latency?: Summary;
  setupMs?: number;
  rowCount?: number;
  /** Emulator: result pages fetched for the last timed answer. */
  pages?: number;
  error?: string;
  /** The SQL that was run (DuckDB: after translation), for reproducing errors. */
  sql?: { setup: string[]; query: string };
}

export type MatchStatus = 'equal' | 'different' | 'n/a';

export interface CaseResult {
  name: string;
  tags: string[];
  iterations: number;
  warmup: number;
  emulator: SideResult;
  duckdb: SideResult;
  /** emulator p50 / DuckDB p50, when both ran. */
  ratio: number | null;
  peer: PeerNumbers | null;
  match: { status: MatchStatus; detail: string };
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  totalMemMB: number;
  /** 1-minute load average at the start: other work on the machine skews timings. */
  loadAvg1m: number;
  /** speed-probe.ts at the start and the end of the run (ms; lower is faster). */
  speedProbeMs: { start: number; end: number | null };
  node: string;
  platform: string;
  duckdb: string | null;
  date: string;
  gitCommit: string | null;
}

/** Each extra metric is ok with its numbers or error with a message. */
export type MetricResult<T> = ({ status: 'ok' } & T) | { status: 'error'; error: string } | { status: 'skipped'; reason: string };

export interface RssSample {
  gatewayMB: number | null;
  engineMB: number | null;
}

/** One pass of paging a result out (edges.ts): time with requests in flight; the client's JSON.parse apart. */
export interface PagingRun {
  rows: number;
  pages: number;
  mb: number;
  ms: number;
  parseMs: number;
  rowsPerSec: number;
  /** CPU the gateway and the engine used meanwhile (null: not a local emulator); steadier than wall time on a shared machine. */
  serverCpuMs: number | null;
}

/** One load job, insert to DONE. */
export interface LoadRun {
  ms: number;
  mb: number;
  rowsPerSec: number;
  /** CPU the gateway and the engine used meanwhile (null: not a local emulator). */
  serverCpuMs: number | null;
}

export interface ExtraMetrics {
  /** Spawn → first 200 of /healthz, and spawn → first successful SELECT 1. */
  startupMs: MetricResult<{ ms: number; firstQueryMs: number | null }>;
  idleRss: MetricResult<RssSample>;
  rssAfterLoad: MetricResult<RssSample & { rows: number; loadMs: number; before: RssSample }>;
  insertAll: MetricResult<{
    rows: number;
    batchRows: number;
    columns: number;
    /** Untimed batches sent first, and their rate (a fresh insert path's warm-up). */
    warmupBatches?: number;
    warmupRowsPerSec?: number;
    /** The median of sequentialRuns. */
    sequentialRowsPerSec: number;
    /** Each timed sequential stream's rate, in run order (absent in runs before 2026-11-28). */
    sequentialRuns?: number[];
    concurrentStreams: number;
    concurrentRowsPerSec: number;
  }>;
  select1: MetricResult<{ runs: number; latency: Summary }>;
  concurrentSmall: MetricResult<{ clients: number; perClient: number; latency: Summary; qps: number }>;
  healthzUnderLoad: MetricResult<{ groupByRows: number; queryMs: number; probes: number; latency: Summary }>;
  /** CREATE OR REPLACE TABLE ... AS SELECT repeated on one table: p50 of the first and of the last `sample` statements. */
  ddlDrift: MetricResult<{ statements: number; sample: number; firstP50: number; lastP50: number }>;
  /** A query result paged out through REST (the median of the default-page runs), beside DuckDB reading the rows into JS. */
  resultPaging?: MetricResult<{
    rows: number;
    columns: number;
    getQueryResults: PagingRun;
    getQueryResultsRuns: number[];
    largePages: PagingRun;
    tabledata: PagingRun;
    duckdbRowsPerSec: number | null;
    /** DuckDB rows/s over the emulator's getQueryResults rows/s. */
    ratio: number | null;
  }>;
  /** Load jobs from local files (file:// per format, and a multipart upload of the CSV), beside DuckDB's CREATE TABLE AS SELECT from them. */
  loadJobs?: MetricResult<{
    rows: number;
    columns: number;
    formats: Record<string, LoadRun>;
    upload: LoadRun;
    duckdbRowsPerSec: Record<string, number>;
  }>;
  drift: MetricResult<{
    points: { queries: number; select1P50: number; gatewayMB: number | null; engineMB: number | null }[];
    /** RSS after the queries and an idle pause of `idleMs`. */
    afterIdle?: RssSample & { idleMs: number };
  }>;
}

/** One line to track across runs. */
export interface BenchSummary {
  cases: number;
  emulatorOk: number;
  duckdbOk: number;
  equal: number;
  different: number;
  /** Geometric mean of emu/duck over the cases where both ran (null if none). */
  geomeanRatio: number | null;
}

export interface BenchResult {
  summary: BenchSummary;
  machine: MachineInfo;
  options: { quick: boolean; caseFilter: string | null; url: string | null; emulator: boolean; duckdb: boolean; extra: boolean };
  emulator: { url: string | null; command: string | null; status: 'ok' | 'error' | 'skipped'; error?: string; log?: string; restarts: string[] };
  cases: CaseResult[];
  extra: ExtraMetrics | null;
  totalMs: number;
}
