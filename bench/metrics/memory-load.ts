// Memory and responsiveness under a large table: RSS after a 2M-row CTAS, and
// /healthz latency while a GROUP BY over that table runs (the architecture
// requires health checks to keep answering during long queries).
import { sampleRss } from './rss.js';
import { summarize } from '../lib/stats.js';
import type { MetricContext } from './context.js';
import { idSource } from './context.js';
import type { ExtraMetrics } from '../lib/types.js';

export const BIG_TABLE = 'big';

export async function measureRssAfterLoad(ctx: MetricContext): Promise<ExtraMetrics['rssAfterLoad']> {
  const rows = ctx.sizes.loadRows;
  const before = sampleRss(ctx.gatewayPid);
  const t0 = performance.now();
  await ctx.client.query(
    `CREATE TABLE ${ctx.dataset}.${BIG_TABLE} AS SELECT id, MOD(id, 100000) AS k, CAST(id AS FLOAT64) / 7 AS v FROM ${idSource(rows)}`,
    ctx.heavyTimeoutMs,
  );
  const loadMs = Math.round(performance.now() - t0);
  if (ctx.gatewayPid === null) return { status: 'skipped', reason: 'RSS needs a locally started emulator (not --url)' };
  return { status: 'ok', rows, loadMs, before, ...sampleRss(ctx.gatewayPid) };
}

/** Needs the table from measureRssAfterLoad. Probes /healthz back to back until the query returns. */
export async function measureHealthzUnderLoad(ctx: MetricContext): Promise<ExtraMetrics['healthzUnderLoad']> {
  let done = false;
  const t0 = performance.now();
  const query = ctx.client
    .query(`SELECT k, COUNT(*) AS c, SUM(v) AS s FROM ${ctx.dataset}.${BIG_TABLE} GROUP BY k`, ctx.heavyTimeoutMs)
    .finally(() => { done = true; });
  const samples: number[] = [];
  let probeError: unknown = null;
  while (!done) {
    const s = performance.now();
    try {
      await ctx.client.healthz(ctx.heavyTimeoutMs);
    } catch (e) {
      probeError = e;
      break;
    }
    samples.push(performance.now() - s);
    await new Promise((r) => setTimeout(r, 5));
  }
  await query;
  const queryMs = Math.round(performance.now() - t0);
  if (probeError) throw probeError;
  return { status: 'ok', groupByRows: ctx.sizes.loadRows, queryMs, probes: samples.length, latency: summarize(samples) };
}
