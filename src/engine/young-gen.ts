// The engine's young generation: large while it is busy, small when idle.
//
// V8 grows new space (up to --max-semi-space-size) while many objects survive
// scavenges, and shrinks it only at a GC that sees a low allocation rate over
// its last ~5 s (Node 20 / V8 11.3: below 1 KB/ms). An idle engine runs no GC
// at all, so a young generation grown by a burst of work stayed resident
// (2 x 16 MB) for good. The trimmer runs a scavenge once the engine has been
// quiet for a while, and another one a little over 5 s later: that one sees
// next to no allocation over its window, so V8 shrinks new space back to its
// initial size and unmaps the pages (VmRSS -30 MB, measured). A scavenge of an
// idle engine's young generation takes ~0.5-4 ms.
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

export { privateGc, type GcFunction } from '../storage/memory-budget.js';
import type { GcFunction } from '../storage/memory-budget.js';

export interface TrimmerOptions {
  /** No call started or running for this long: the engine is idle. */
  quietMs: number;
  /** Between two scavenges: a little over V8's 5 s allocation-rate window. */
  windowMs: number;
  /** Scavenges per idle period at most (V8 keeps the size while its window still saw allocation). */
  maxScavenges: number;
  /** New space at or below this is small already (its initial size is 1-2 MB). */
  smallBytes: number;
}

export const DEFAULT_TRIMMER_OPTIONS: TrimmerOptions = {
  quietMs: 1_000,
  windowMs: 5_100,
  maxScavenges: 3,
  smallBytes: 2 * 1024 * 1024,
};

/** Committed bytes of V8's new space. */
export function newSpaceBytes(): number {
  for (const s of getHeapSpaceStatistics()) if (s.space_name === 'new_space') return s.space_size;
  return 0;
}

/**
 * Lets new space grow again. The supervisor starts the engine with growth
 * off (ENGINE_NODE_OPTIONS): module loading and the warm-up keep most of what
 * they allocate, which would grow it to 2 x 8 MB before the first query. V8
 * resets a factor below 2 given on the command line, not one set at run time.
 */
export function allowYoungGenerationGrowth(): void {
  setFlagsFromString('--semi-space-growth-factor=2');
}

/**
 * Counts calls in flight; scavenges only when none is running and none
 * started since its last look. Its timer is unref'd (it never keeps a
 * stopping engine alive) and is armed only from the first call after an idle
 * period until new space is small again.
 */
export class YoungGenerationTrimmer {
  private inFlight = 0;
  private started = 0;
  private seen = 0;
  private scavenges = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly gc: GcFunction,
    private readonly opts: TrimmerOptions = DEFAULT_TRIMMER_OPTIONS,
    private readonly size: () => number = newSpaceBytes,
  ) {}

  /** A call started; end() when it is over. */
  begin(): void {
    this.inFlight++;
    this.started++;
    if (!this.timer) this.arm(this.opts.quietMs);
  }

  end(): void {
    this.inFlight--;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => this.tick(), ms);
    this.timer.unref();
  }

  private tick(): void {
    this.timer = undefined;
    if (this.inFlight > 0 || this.started !== this.seen) {
      this.seen = this.started;
      this.scavenges = 0;
      this.arm(this.opts.quietMs);
      return;
    }
    // Quiet. Done once new space is small or after a few tries; the next call re-arms.
    if (this.size() <= this.opts.smallBytes || this.scavenges >= this.opts.maxScavenges) {
      this.scavenges = 0;
      return;
    }
    this.gc({ type: 'minor' });
    this.scavenges++;
    this.arm(this.opts.windowMs);
  }
}
