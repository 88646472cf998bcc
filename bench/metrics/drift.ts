// Drift check: SELECT 1 latency and RSS after every `driftStep` queries, to
// catch leaks (RSS climbing) or slowdowns (latency climbing) over a session;
// then RSS once more after an idle pause, which tells memory sized to the
// load (the engine's young generation grows while busy and is trimmed when
// idle) from memory that stays.
import { sampleRss } from './rss.js';
import { summarize } from '../lib/stats.js';
import type { MetricContext } from './context.js';
import type { ExtraMetrics } from '../lib/types.js';

type DriftPoint = Extract<ExtraMetrics['drift'], { status: 'ok' }>['points'][number];

export async function measureDrift(ctx: MetricContext): Promise<ExtraMetrics['drift']> {
  const { driftTotal, driftStep, driftSample, driftIdleMs } = ctx.sizes;
  const points: DriftPoint[] = [];
  const checkpoint = async (queries: number): Promise<void> => {
    const samples: number[] = [];
    for (let i = 0; i < driftSample; i++) {
      const t0 = performance.now();
      await ctx.client.query('SELECT 1', 10_000);
      samples.push(performance.now() - t0);
    }
    points.push({ queries, select1P50: summarize(samples).p50, ...sampleRss(ctx.gatewayPid) });
  };
  await checkpoint(0);
  for (let done = 0; done < driftTotal; ) {
    for (let i = 0; i < driftStep; i++) await ctx.client.query('SELECT 1', 10_000);
    done += driftStep;
    await checkpoint(done);
  }
  if (driftIdleMs <= 0) return { status: 'ok', points };
  await new Promise((r) => setTimeout(r, driftIdleMs));
  return { status: 'ok', points, afterIdle: { idleMs: driftIdleMs, ...sampleRss(ctx.gatewayPid) } };
}
