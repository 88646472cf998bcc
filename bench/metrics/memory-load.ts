// Memory and responsiveness under a large table: RSS after a 2M-row CTAS, and
// /healthz latency while a GROUP BY over that table runs (the architecture
// requires health checks to keep answering during long queries).
import { Worker } from 'node:worker_threads';
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

/**
 * The /healthz probe loop, run on a worker thread of its own: on this
 * thread, the client's JSON.parse of the GROUP BY's answer (100,000 rows,
 * ~6 MB) held up the probe in flight, by as long as the parse took (a 178 ms
 * max against a 0.85 ms p50; 0.4-0.9 s at load 12), which the metric then
 * charged to the emulator. node:http with a keep-alive agent, as RestClient.
 */
const PROBER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true });
let stop = false;
parentPort.on('message', () => { stop = true; });
const probe = () => new Promise((resolve, reject) => {
  const req = http.get(workerData.url, { agent }, (res) => {
    res.resume();
    res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error('/healthz: HTTP ' + res.statusCode))));
    res.on('error', reject);
  });
  req.setTimeout(workerData.timeoutMs, () => req.destroy(new Error('/healthz: no answer within ' + workerData.timeoutMs + ' ms')));
  req.on('error', reject);
});
(async () => {
  const samples = [];
  try {
    do {
      const s = performance.now();
      await probe();
      samples.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, 5));
    } while (!stop);
    parentPort.postMessage({ samples });
  } catch (e) {
    parentPort.postMessage({ samples, error: String(e && e.message ? e.message : e) });
  }
})();
`;

/** Needs the table from measureRssAfterLoad. Probes /healthz back to back (from a worker thread) until the query returns. */
export async function measureHealthzUnderLoad(ctx: MetricContext): Promise<ExtraMetrics['healthzUnderLoad']> {
  const prober = new Worker(PROBER, { eval: true, workerData: { url: `${ctx.client.baseUrl}/healthz`, timeoutMs: ctx.heavyTimeoutMs } });
  try {
    const probed = new Promise<{ samples: number[]; error?: string }>((resolve, reject) => {
      prober.once('message', resolve);
      prober.once('error', reject);
    });
    await new Promise((resolve) => prober.once('online', resolve));
    const t0 = performance.now();
    const query = ctx.client.query(`SELECT k, COUNT(*) AS c, SUM(v) AS s FROM ${ctx.dataset}.${BIG_TABLE} GROUP BY k`, ctx.heavyTimeoutMs);
    try {
      await query;
    } finally {
      prober.postMessage('stop');
    }
    const queryMs = Math.round(performance.now() - t0);
    const { samples, error } = await probed;
    if (error !== undefined) throw new Error(error);
    return { status: 'ok', groupByRows: ctx.sizes.loadRows, queryMs, probes: samples.length, latency: summarize(samples) };
  } finally {
    await prober.terminate();
  }
}
