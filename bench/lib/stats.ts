// Latency summaries. Percentiles use linear interpolation between closest
// ranks, so p50 of an even sample is the mean of the two middle values.

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  max: number;
  min: number;
  mean: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

const round2 = (v: number): number => Math.round(v * 100) / 100;

export function summarize(samples: readonly number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return {
    n: s.length,
    p50: round2(percentile(s, 50)),
    p95: round2(percentile(s, 95)),
    max: round2(s[s.length - 1] ?? Number.NaN),
    min: round2(s[0] ?? Number.NaN),
    mean: round2(mean),
  };
}

/** Milliseconds elapsed while awaiting `fn` (high-resolution clock). */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

export function errorMessage(e: unknown): string {
  if (e instanceof Error) {
    const cause = e.cause instanceof Error ? ` (${e.cause.message})` : '';
    return `${e.message}${cause}`;
  }
  return String(e);
}
