// Scale checks: correctness at benchmark sizes (1M-row GROUP BY, 2M×200k hash
// join, 1M-row window). They assert results only, never timings; the elapsed
// times are printed for the record.
import { describe, expect, it } from 'vitest';
import type { Rel, WindowCall } from '../analyzer/resolved.js';
import { T } from '../types/types.js';
import type { Batch, Vector } from '../types/vector.js';
import type { ScanOptions, TableId } from '../storage/api.js';
import { collect } from './execute.js';
import { MemoryCatalog } from './testing/memory-catalog.js';
import { TABLE, agg, col, ref, rowsOf, scan, testContext } from './testing/plan-builder.js';
import { TYPED_AGG } from './testing/typed-aggs.js';

function f64(n: number, f: (i: number) => number, type = T.FLOAT64): Vector {
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) d[i] = f(i);
  return { type, length: n, data: d, nulls: null };
}

const cat = new MemoryCatalog();
const N = 1_000_000;
cat.addTable(
  TABLE('big'),
  [
    { name: 'k', type: T.INT64 },
    { name: 'v', type: T.FLOAT64 },
  ],
  [f64(N, (i) => (i * 7919) % 100_000, T.INT64), f64(N, (i) => i % 1000)],
);
const FACT = 2_000_000;
const DIM = 200_000;
cat.addTable(TABLE('fact'), [{ name: 'fk', type: T.INT64 }, { name: 'amt', type: T.FLOAT64 }], [f64(FACT, (i) => (i * 31) % DIM, T.INT64), f64(FACT, () => 1)]);
cat.addTable(TABLE('dim'), [{ name: 'id', type: T.INT64 }, { name: 'w', type: T.FLOAT64 }], [f64(DIM, (i) => i, T.INT64), f64(DIM, (i) => i % 10)]);

const time = async <R>(label: string, f: () => Promise<R>): Promise<R> => {
  const t0 = performance.now();
  const r = await f();
  console.log(`${label}: ${(performance.now() - t0).toFixed(0)} ms`);
  return r;
};

describe('scale', () => {
  it('1M-row GROUP BY with 100k groups', async () => {
    const k = col('k', T.INT64);
    const v = col('v', T.FLOAT64);
    const gk = col('gk', T.INT64);
    const s = col('s', T.FLOAT64);
    const c = col('c', T.INT64);
    const rel: Rel = {
      kind: 'aggregate',
      input: scan('big', [k, v]),
      columns: [gk, s, c],
      groupBy: [{ column: gk, expr: ref(k) }],
      aggregates: [agg(s, 'SUM', TYPED_AGG.sumF64(), [ref(v)]), agg(c, 'COUNT', TYPED_AGG.countStar(), [])],
    };
    // The event loop must keep turning while the query runs (cooperative yields).
    let ticks = 0;
    let maxGap = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
      ticks++;
    }, 1);
    const out = await time('1M-row GROUP BY', () => collect(rel, testContext(cat)));
    clearInterval(timer);
    console.log(`event loop during GROUP BY: ${ticks} timer ticks, longest gap ${maxGap.toFixed(0)} ms`);
    expect(ticks).toBeGreaterThan(0);
    const rows = rowsOf(out);
    expect(rows.length).toBe(100_000);
    expect(rows.every((r) => r[2] === 10n)).toBe(true);
    let total = 0;
    for (const r of rows) total += r[1] as number;
    expect(total).toBe(1000 * 999 * 500);
  });

  it('a running query stops at the next checkpoint when cancelled', async () => {
    const k = col('k', T.INT64);
    const v = col('v', T.FLOAT64);
    const s = col('s', T.FLOAT64);
    const gk = col('gk', T.INT64);
    const rel: Rel = {
      kind: 'aggregate',
      input: scan('big', [k, v]),
      columns: [gk, s],
      groupBy: [{ column: gk, expr: ref(k) }],
      aggregates: [agg(s, 'SUM', TYPED_AGG.sumF64(), [ref(v)])],
    };
    const ac = new AbortController();
    // Cancelled while running: when the scan is asked for its second batch (a
    // timer could fire only after the whole query on a fast machine).
    const cancelling = Object.assign(Object.create(cat) as MemoryCatalog, {
      async *scan(id: TableId, opts: ScanOptions): AsyncIterable<Batch> {
        let n = 0;
        for await (const b of cat.scan(id, opts)) {
          if (n++ === 1) ac.abort();
          yield b;
        }
      },
    });
    await expect(collect(rel, testContext(cancelling, ac.signal))).rejects.toMatchObject({
      message: 'Job execution was cancelled: User requested cancellation',
      reason: 'stopped',
    });
  });

  it('2M×200k hash join (then aggregated)', async () => {
    const fk = col('fk', T.INT64);
    const amt = col('amt', T.FLOAT64);
    const id = col('id', T.INT64);
    const w = col('w', T.FLOAT64);
    const s = col('s', T.FLOAT64);
    const c = col('c', T.INT64);
    const join: Rel = {
      kind: 'join',
      joinType: 'inner',
      left: scan('fact', [fk, amt]),
      right: scan('dim', [id, w]),
      columns: [fk, amt, id, w],
      lateral: false,
      equiKeys: [{ left: ref(fk), right: ref(id), nullSafe: false }],
    };
    const rel: Rel = {
      kind: 'aggregate',
      input: join,
      columns: [s, c],
      groupBy: [],
      aggregates: [agg(s, 'SUM', TYPED_AGG.sumF64(), [ref(w)]), agg(c, 'COUNT', TYPED_AGG.countStar(), [])],
    };
    const [row] = rowsOf(await time('2Mx200k hash join', () => collect(rel, testContext(cat))));
    expect(row![1]).toBe(BigInt(FACT));
    expect(row![0]).toBe(FACT * 4.5);
  });

  it('1M-row window (ROW_NUMBER + running SUM per partition)', async () => {
    const k = col('k', T.INT64);
    const v = col('v', T.FLOAT64);
    const mk = (name: string, type = T.INT64, extra: Partial<WindowCall> = {}): WindowCall => ({
      column: col(name.toLowerCase(), type),
      name,
      args: [],
      distinct: false,
      ignoreNulls: undefined,
      partitionBy: [ref(k)],
      orderBy: [{ expr: ref(v), descending: false, nullsFirst: true }],
      ...extra,
    });
    const calls = [mk('ROW_NUMBER'), mk('SUM', T.FLOAT64, { args: [ref(v)], aggregate: TYPED_AGG.sumF64() })];
    const rel: Rel = { kind: 'window', input: scan('big', [k, v]), columns: [k, v, ...calls.map((c) => c.column)], calls };
    const out = await time('1M-row window', () => collect(rel, testContext(cat)));
    let rows = 0;
    let maxRn = 0;
    for (const b of out) {
      rows += b.length;
      const rn = b.columns[2]!.data as Float64Array;
      for (let i = 0; i < b.length; i++) if (rn[i]! > maxRn) maxRn = rn[i]!;
    }
    expect(rows).toBe(N);
    expect(maxRn).toBe(10);
  });
});
