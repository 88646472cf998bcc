// Runs a case against the emulator over HTTP: own dataset, setup, warmup, then
// `iterations` timed jobs.query round trips (request start → all pages read).
import type { BenchCase } from './cases.js';
import type { RestClient } from './rest-client.js';
import { summarize, errorMessage } from './stats.js';
import { canonRestRows, type CanonRow } from './compare.js';
import type { SideResult } from './types.js';

export interface EmulatorCaseOutput {
  result: SideResult;
  rows: CanonRow[] | null;
}

export function datasetIdFor(runId: string, caseName: string): string {
  return `bench_${runId}_${caseName}`.replace(/[^A-Za-z0-9_]/g, '_');
}

export async function runCaseOnEmulator(client: RestClient, c: BenchCase, runId: string): Promise<EmulatorCaseOutput> {
  const ds = datasetIdFor(runId, c.name);
  const setup = c.setup.map((s) => s.replaceAll('{{ds}}', ds));
  const query = c.query.replaceAll('{{ds}}', ds);
  let stage = 'create dataset';
  try {
    await client.createDataset(ds);
    stage = 'setup';
    const s0 = performance.now();
    for (const stmt of setup) await client.query(stmt, c.timeoutMs);
    const setupMs = Math.round(performance.now() - s0);
    stage = 'warmup';
    for (let i = 0; i < c.warmup; i++) await client.query(query, c.timeoutMs);
    stage = 'timed query';
    const samples: number[] = [];
    let last = null;
    for (let i = 0; i < c.iterations; i++) {
      const t0 = performance.now();
      last = await client.query(query, c.timeoutMs);
      samples.push(performance.now() - t0);
    }
    const rows = last ? canonRestRows(last.fields, last.rows) : [];
    return {
      result: {
        status: 'ok', samples: samples.map((s) => Math.round(s * 100) / 100), latency: summarize(samples),
        setupMs, rowCount: rows.length, pages: last?.pages, sql: { setup, query },
      },
      rows,
    };
  } catch (e) {
    return { result: { status: 'error', error: `${stage}: ${errorMessage(e)}`, sql: { setup, query } }, rows: null };
  } finally {
    // Free the case's tables so later cases and metrics start from a lean process.
    await client.deleteDataset(ds).catch(() => undefined);
  }
}
