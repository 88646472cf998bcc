// Round-trip latency metrics: SELECT 1 (sequential) and a small query from
// many concurrent clients.
import { summarize } from '../lib/stats.js';
import type { MetricContext } from './context.js';
import { idSource } from './context.js';
import type { ExtraMetrics } from '../lib/types.js';

export async function measureSelect1(ctx: MetricContext): Promise<ExtraMetrics['select1']> {
  const n = ctx.sizes.select1Runs;
  await ctx.client.query('SELECT 1', 10_000); // connection + first-query setup are not the steady state
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await ctx.client.query('SELECT 1', 10_000);
    samples.push(performance.now() - t0);
  }
  return { status: 'ok', runs: n, latency: summarize(samples) };
}

/** p50 of a small aggregate over a 1,000-row table while N clients each issue queries back to back. */
export async function measureConcurrentSmall(ctx: MetricContext): Promise<ExtraMetrics['concurrentSmall']> {
  const { concurrentClients: clients, concurrentPerClient: per } = ctx.sizes;
  const table = `${ctx.dataset}.small`;
  await ctx.client.query(`CREATE TABLE ${table} AS SELECT id, MOD(id, 10) AS k, CAST(id AS FLOAT64) / 3 AS v FROM ${idSource(1000)}`, 60_000);
  const sql = `SELECT k, COUNT(*) AS c, SUM(v) AS s FROM ${table} GROUP BY k`;
  await ctx.client.query(sql, 10_000);
  const samples: number[] = [];
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    for (let i = 0; i < per; i++) {
      const s = performance.now();
      await ctx.client.query(sql, 60_000);
      samples.push(performance.now() - s);
    }
  }));
  const wall = performance.now() - t0;
  return {
    status: 'ok', clients, perClient: per, latency: summarize(samples),
    qps: Math.round((samples.length / wall) * 1000 * 10) / 10,
  };
}
