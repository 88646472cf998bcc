// What every extra metric gets: a client, the gateway pid (null with --url),
// the sizes for this run (full or --quick) and a scratch dataset.
import type { RestClient } from '../lib/rest-client.js';

export interface MetricSizes {
  select1Runs: number;
  concurrentClients: number;
  concurrentPerClient: number;
  insertRows: number;
  insertBatch: number;
  insertStreams: number;
  /** Untimed batches first (as cases have warmup runs): the insert path's first requests are its JIT warm-up. */
  insertWarmupBatches: number;
  /** Timed sequential streams (each into a table of its own); the median is the reported rate. */
  insertSequentialRuns: number;
  loadRows: number;
  driftTotal: number;
  driftStep: number;
  driftSample: number;
  /** Idle pause after the drift queries before RSS is read again (0: not read). */
  driftIdleMs: number;
  /** CREATE OR REPLACE TABLE statements of the DDL drift check, and how many at each end make a p50. */
  ddlTotal: number;
  ddlSample: number;
  /** Rows of the result paged out through REST (edges.ts), and timed passes of the default paging. */
  pagingRows: number;
  pagingRuns: number;
  /** Rows of each load job from a local file (edges.ts). */
  loadJobRows: number;
}

export const FULL_SIZES: MetricSizes = {
  select1Runs: 200,
  concurrentClients: 16,
  concurrentPerClient: 25,
  insertRows: 100_000,
  insertBatch: 500,
  insertStreams: 4,
  insertWarmupBatches: 20,
  insertSequentialRuns: 3,
  loadRows: 2_000_000,
  driftTotal: 5000,
  driftStep: 1000,
  driftSample: 50,
  // The engine trims its young generation ~6 s after the last call (src/engine/young-gen.ts).
  driftIdleMs: 8000,
  ddlTotal: 1000,
  ddlSample: 100,
  pagingRows: 1_000_000,
  pagingRuns: 3,
  loadJobRows: 2_000_000,
};

export const QUICK_SIZES: MetricSizes = {
  select1Runs: 20,
  concurrentClients: 16,
  concurrentPerClient: 2,
  insertRows: 2000,
  insertBatch: 500,
  insertStreams: 4,
  insertWarmupBatches: 1,
  insertSequentialRuns: 3,
  loadRows: 2000,
  driftTotal: 100,
  driftStep: 20,
  driftSample: 5,
  driftIdleMs: 0,
  ddlTotal: 20,
  ddlSample: 5,
  pagingRows: 3000,
  pagingRuns: 1,
  loadJobRows: 2000,
};

export interface MetricContext {
  client: RestClient;
  gatewayPid: number | null;
  sizes: MetricSizes;
  /** A dataset created for the metrics, dropped afterwards. */
  dataset: string;
  /** Ceiling for one heavy statement (2M-row load / GROUP BY). */
  heavyTimeoutMs: number;
  /** Whether metrics with a DuckDB equivalent time it too (false with --no-duckdb). */
  duckdb: boolean;
}

/** `n` rows as one or two cross-joined GENERATE_ARRAYs (one array of 2M is what the peer cases avoid too). */
export function idSource(n: number): string {
  if (n <= 1_000_000) return `UNNEST(GENERATE_ARRAY(1, ${n})) AS id`;
  const blocks = Math.ceil(n / 1_000_000);
  return `(SELECT n + (m - 1) * 1000000 AS id FROM UNNEST(GENERATE_ARRAY(1, 1000000)) AS n ` +
    `CROSS JOIN UNNEST(GENERATE_ARRAY(1, ${blocks})) AS m)`;
}
