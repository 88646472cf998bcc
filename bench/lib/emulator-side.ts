// A case on the emulator over HTTP: its own dataset and setup statements, then
// the query as timed jobs.query round trips (request start → all pages read).
import type { BenchCase } from './cases.js';
import type { QueryAnswer, RestClient } from './rest-client.js';
import { errorMessage } from './stats.js';
import { canonRestRows } from './compare.js';
import type { OpenedSide } from './case-session.js';

export function datasetIdFor(runId: string, caseName: string): string {
  return `bench_${runId}_${caseName}`.replace(/[^A-Za-z0-9_]/g, '_');
}

/** Creates the case's dataset and runs its setup; the session drops the dataset when closed. */
export async function openEmulatorCase(client: RestClient, c: BenchCase, runId: string): Promise<OpenedSide> {
  const ds = datasetIdFor(runId, c.name);
  const sql = { setup: c.setup.map((s) => s.replaceAll('{{ds}}', ds)), query: c.query.replaceAll('{{ds}}', ds) };
  // Free the case's tables so later cases and metrics start from a lean process.
  const close = (): Promise<void> => client.deleteDataset(ds).catch(() => undefined);
  let stage = 'create dataset';
  try {
    await client.createDataset(ds);
    stage = 'setup';
    const s0 = performance.now();
    for (const stmt of sql.setup) await client.query(stmt, c.timeoutMs);
    const setupMs = Math.round(performance.now() - s0);
    let last: QueryAnswer | null = null;
    return {
      session: {
        setupMs,
        sql,
        async run() {
          const t0 = performance.now();
          last = await client.query(sql.query, c.timeoutMs);
          return performance.now() - t0;
        },
        lastRows: () => (last ? canonRestRows(last.fields, last.rows) : []),
        details: () => ({ pages: last?.pages }),
        close,
      },
    };
  } catch (e) {
    await close();
    return { failed: { status: 'error', error: `${stage}: ${errorMessage(e)}`, sql } };
  }
}
