// Runs the timed part of a case on both sides in lockstep: each warmup and
// each iteration runs the emulator's query, then DuckDB's. This machine's
// speed drifts by up to 2x within seconds (a fixed compute loop measured
// 12-25 ms a few seconds apart), so timing one side's iterations and then the
// other's let that drift into the ratio; interleaved, both sides see the same
// conditions.
import { errorMessage, summarize } from './stats.js';
import type { CanonRow } from './compare.js';
import type { SideResult } from './types.js';

/** One side of a case, set up and ready to run its query. */
export interface CaseSession {
  readonly setupMs: number;
  readonly sql: { setup: string[]; query: string };
  /** Runs the query once (and reads every row); its duration in ms. */
  run(): Promise<number>;
  /** Rows of the last run, canonical for comparison. */
  lastRows(): CanonRow[];
  /** Extra fields of the side's result (emulator: pages of the last answer). */
  details?(): Partial<SideResult>;
  close(): Promise<void>;
}

/** A side that could not be set up carries its error result instead. */
export type OpenedSide = { session: CaseSession } | { failed: SideResult };

export interface SideOutput {
  result: SideResult;
  rows: CanonRow[] | null;
}

/**
 * Pause between the two sides' runs: lets background work one side left
 * (the emulator's compiler and GC threads) finish before the other is timed.
 */
const SWITCH_GAP_MS = 10;

/**
 * Rounds past `iterations` for quick cases: timed rounds go on while the
 * sides' timed runs add up to under `untilMs`, up to `maxIterations` (the scale set at
 * 100M rows takes 3 iterations, since a slow case runs for many seconds a
 * round; a 10 ms case's p50 of 3 samples on this shared machine moved it by
 * up to 2x between runs).
 */
export interface MoreRounds {
  readonly maxIterations: number;
  readonly untilMs: number;
}

/**
 * Warmups, then timed iterations (more of them for quick cases with `more`), each round running every open side once in
 * order. A side that fails drops out with its error; the others go on.
 * Always closes the sessions.
 */
export async function runLockstep(sides: readonly OpenedSide[], warmup: number, iterations: number, more?: MoreRounds): Promise<SideOutput[]> {
  const out: SideOutput[] = sides.map((s) => ('failed' in s ? { result: s.failed, rows: null } : { result: { status: 'ok' }, rows: null }));
  const live = sides.map((s) => ('session' in s ? s.session : null));
  const samples: number[][] = sides.map(() => []);
  const gap = live.filter((s) => s !== null).length > 1 ? SWITCH_GAP_MS : 0;
  let timedMs = 0;
  const rounds = (): number => {
    if (!more || timedMs >= more.untilMs) return warmup + iterations;
    return warmup + Math.max(iterations, more.maxIterations);
  };
  try {
    for (let round = 0; round < rounds(); round++) {
      for (let k = 0; k < live.length; k++) {
        const s = live[k];
        if (!s) continue;
        try {
          const ms = await s.run();
          if (round >= warmup) {
            samples[k]!.push(ms);
            timedMs += ms;
          }
        } catch (e) {
          out[k] = { result: { status: 'error', error: `${round < warmup ? 'warmup' : 'timed query'}: ${errorMessage(e)}`, sql: s.sql }, rows: null };
          live[k] = null;
          await s.close().catch(() => undefined);
        }
        if (gap > 0) await new Promise((r) => setTimeout(r, gap));
      }
    }
    for (let k = 0; k < live.length; k++) {
      const s = live[k];
      if (!s) continue;
      const rows = s.lastRows();
      out[k] = {
        result: {
          status: 'ok',
          samples: samples[k]!.map((x) => Math.round(x * 100) / 100),
          latency: summarize(samples[k]!),
          setupMs: s.setupMs,
          rowCount: rows.length,
          ...s.details?.(),
          sql: s.sql,
        },
        rows,
      };
    }
  } finally {
    for (const s of live) await s?.close().catch(() => undefined);
  }
  return out;
}
