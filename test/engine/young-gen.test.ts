// The engine's young-generation trimmer: scavenges only when no call is in
// flight and none started since its last look, stops once new space is small,
// and really makes V8 (the Node running the tests) give new space back.
import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { YoungGenerationTrimmer, type TrimmerOptions } from '../../src/engine/young-gen.js';

const MB = 1024 * 1024;
const OPTS: TrimmerOptions = { quietMs: 1_000, windowMs: 5_100, maxScavenges: 3, smallBytes: 2 * MB };

describe('YoungGenerationTrimmer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A trimmer over a fake new space that V8 shrinks at the `shrinkAt`-th scavenge. */
  function setup(shrinkAt = 2): { trimmer: YoungGenerationTrimmer; scavenges: () => number; size: () => number } {
    let size = 32 * MB;
    let n = 0;
    const trimmer = new YoungGenerationTrimmer(
      () => {
        n++;
        if (n >= shrinkAt) size = 1 * MB;
      },
      OPTS,
      () => size,
    );
    return { trimmer, scavenges: () => n, size: () => size };
  }

  it('never scavenges while a call is in flight', () => {
    const { trimmer, scavenges } = setup();
    trimmer.begin();
    vi.advanceTimersByTime(60_000);
    expect(scavenges()).toBe(0);
    trimmer.end();
    vi.advanceTimersByTime(2_000);
    expect(scavenges()).toBe(1);
  });

  it('waits for a quiet period: calls that start and end between looks postpone it', () => {
    const { trimmer, scavenges } = setup();
    for (let i = 0; i < 20; i++) {
      trimmer.begin();
      trimmer.end();
      vi.advanceTimersByTime(500);
    }
    expect(scavenges()).toBe(0);
    // First look after the last call sees it, the next one a quiet second.
    vi.advanceTimersByTime(2_000);
    expect(scavenges()).toBe(1);
  });

  it('scavenges again after the window, then stops once new space is small', () => {
    const { trimmer, scavenges, size } = setup(2);
    trimmer.begin();
    trimmer.end();
    vi.advanceTimersByTime(2_000);
    expect(scavenges()).toBe(1);
    vi.advanceTimersByTime(OPTS.windowMs - 1);
    expect(scavenges()).toBe(1);
    vi.advanceTimersByTime(1);
    expect(scavenges()).toBe(2);
    expect(size()).toBe(1 * MB);
    vi.advanceTimersByTime(10 * OPTS.windowMs);
    expect(scavenges()).toBe(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('gives up after maxScavenges until the next call', () => {
    const { trimmer, scavenges } = setup(Number.POSITIVE_INFINITY);
    trimmer.begin();
    trimmer.end();
    vi.advanceTimersByTime(60_000);
    expect(scavenges()).toBe(OPTS.maxScavenges);
    expect(vi.getTimerCount()).toBe(0);
    trimmer.begin();
    trimmer.end();
    vi.advanceTimersByTime(60_000);
    expect(scavenges()).toBe(2 * OPTS.maxScavenges);
  });

  it('does nothing when new space is small already, and its timer never holds the process', () => {
    let n = 0;
    const trimmer = new YoungGenerationTrimmer(() => n++, OPTS, () => 1 * MB);
    trimmer.begin();
    const timers = vi.getTimerCount();
    trimmer.end();
    vi.advanceTimersByTime(60_000);
    expect(timers).toBe(1);
    expect(n).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    trimmer.stop();
  });
});

describe('young generation in a real V8', () => {
  it('shrinks to its initial size after a burst and an idle window; gc stays private', () => {
    const mod = new URL('../../src/engine/young-gen.ts', import.meta.url).href;
    const script = `
      import { YoungGenerationTrimmer, newSpaceBytes, privateGc } from ${JSON.stringify(mod)};
      import { runInNewContext } from 'node:vm';
      const gc = privateGc();
      const trimmer = new YoungGenerationTrimmer(gc);
      // A burst whose objects survive a few scavenges: V8 grows new space.
      trimmer.begin();
      let keep = [];
      for (let r = 0; r < 200; r++) { const a = []; for (let i = 0; i < 20000; i++) a.push({ i }); keep.push(a); if (keep.length > 4) keep.shift(); }
      keep = [];
      trimmer.end();
      const grown = newSpaceBytes();
      // The trimmer's own timers are unref'd: this one keeps the process up until new space is small (or 30 s).
      const t0 = Date.now();
      const poll = setInterval(() => {
        const after = newSpaceBytes();
        if (after > 2 * 1024 * 1024 && Date.now() - t0 < 30_000) return;
        clearInterval(poll);
        console.log(JSON.stringify({ grown, after, gcType: typeof gc, globalGc: typeof globalThis.gc, contextGc: runInNewContext('typeof gc') }));
      }, 250);
    `;
    const r = spawnSync(process.execPath, ['--max-semi-space-size=16', '--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 55_000 });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout.trim()) as { grown: number; after: number; gcType: string; globalGc: string; contextGc: string };
    expect(out.gcType).toBe('function');
    expect(out.globalGc).toBe('undefined');
    expect(out.contextGc).toBe('undefined');
    expect(out.grown).toBeGreaterThan(4 * MB);
    expect(out.after).toBeLessThanOrEqual(2 * MB);
  });
});
