// A fixed compute loop timed in the bench process: how fast this machine was
// at that moment. On the shared 2-core machines here the same loop took 12 ms
// or 25 ms a few seconds apart, and absolute numbers (rows/s, ms) move with
// it; the emu/DuckDB ratios are timed in lockstep and move much less.
/** Written by every pass, so the loop is never optimized away. */
let sink = 0;

/** Median ms of five timed passes after two untimed ones (which get the loop optimized). */
export function speedProbeMs(): number {
  const a = new Float64Array(1 << 20);
  for (let i = 0; i < a.length; i++) a[i] = i % 100;
  const times: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    let s = 0;
    for (let k = 0; k < 10; k++) for (let i = 0; i < a.length; i++) s += a[i]! * 1.0000001;
    sink += s;
    if (r >= 2) times.push(performance.now() - t0);
  }
  times.sort((x, y) => x - y);
  return Math.round(times[2]! * 10) / 10;
}
