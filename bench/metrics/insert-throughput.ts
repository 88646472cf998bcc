// insertAll (streaming insert) throughput: 500-row batches of 8 mixed-type
// columns, first one stream (three times, into a table each; the median is
// reported), then several concurrent streams, after a few
// untimed warm-up batches (as cases have warmup runs: on a fresh engine the
// first requests are the insert path's JIT warm-up, 6-24 ms instead of ~2.5;
// their rate is reported too). Bodies are built and serialised before the
// clock starts, so only the service is timed.
import { summarize } from '../lib/stats.js';
import type { MetricContext } from './context.js';
import type { ExtraMetrics } from '../lib/types.js';
import type { RestField } from '../lib/compare.js';

const FIELDS: RestField[] = [
  { name: 'id', type: 'INTEGER', mode: 'NULLABLE' },
  { name: 'name', type: 'STRING', mode: 'NULLABLE' },
  { name: 'score', type: 'FLOAT', mode: 'NULLABLE' },
  { name: 'active', type: 'BOOLEAN', mode: 'NULLABLE' },
  { name: 'created_at', type: 'TIMESTAMP', mode: 'NULLABLE' },
  { name: 'day', type: 'DATE', mode: 'NULLABLE' },
  { name: 'amount', type: 'NUMERIC', mode: 'NULLABLE' },
  { name: 'category', type: 'STRING', mode: 'NULLABLE' },
];

function batchBody(first: number, count: number): Buffer {
  const rows = [];
  for (let i = first; i < first + count; i++) {
    const day = new Date(Date.UTC(2024, 0, 1) + (i % 365) * 86_400_000).toISOString().slice(0, 10);
    rows.push({
      insertId: `r${i}`,
      json: {
        id: String(i),
        name: `user_${i}`,
        score: (i % 1000) / 7,
        active: i % 2 === 0,
        created_at: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
        day,
        amount: `${i % 10000}.${String(i % 100).padStart(2, '0')}`,
        category: `cat_${i % 13}`,
      },
    });
  }
  return Buffer.from(JSON.stringify({ rows }));
}

function batches(total: number, batch: number): Buffer[] {
  const out: Buffer[] = [];
  for (let first = 0; first < total; first += batch) out.push(batchBody(first, Math.min(batch, total - first)));
  return out;
}

async function countRows(ctx: MetricContext, table: string): Promise<number> {
  const a = await ctx.client.query(`SELECT COUNT(*) AS c FROM ${ctx.dataset}.${table}`, 60_000);
  return Number(a.rows[0]?.f[0]?.v ?? -1);
}

export async function measureInsertAll(ctx: MetricContext): Promise<ExtraMetrics['insertAll']> {
  const { insertRows: total, insertBatch: batch, insertStreams: streams, insertWarmupBatches: warm, insertSequentialRuns: runs } = ctx.sizes;
  const seqTables = Array.from({ length: runs }, (_, r) => `ins_seq_${r + 1}`);
  const tables = ['ins_warm', ...seqTables, 'ins_conc'];
  for (const t of tables) await ctx.client.createTable(ctx.dataset, t, FIELDS);
  const bodies = batches(total, batch);

  let t0 = performance.now();
  for (let i = 0; i < warm; i++) await ctx.client.insertAll(ctx.dataset, 'ins_warm', bodies[i % bodies.length]!);
  const warmMs = performance.now() - t0;

  // A few timed streams, the median reported: one 100k-row stream lasts ~0.5 s,
  // short enough for a moment of the shared host's noise to decide it.
  const sequentialRuns: number[] = [];
  for (const t of seqTables) {
    t0 = performance.now();
    for (const b of bodies) await ctx.client.insertAll(ctx.dataset, t, b);
    sequentialRuns.push(Math.round(total / ((performance.now() - t0) / 1000)));
  }

  // Stream s sends batches s, s+streams, ... so every stream has the same share.
  t0 = performance.now();
  await Promise.all(Array.from({ length: streams }, async (_, s) => {
    for (let i = s; i < bodies.length; i += streams) await ctx.client.insertAll(ctx.dataset, 'ins_conc', bodies[i]!);
  }));
  const concMs = performance.now() - t0;

  // A throughput number is only meaningful if the rows actually landed.
  for (const t of [...seqTables, 'ins_conc']) {
    const n = await countRows(ctx, t);
    if (n !== total) throw new Error(`row count after insertAll: ${t} has ${n}, expected ${total}`);
  }
  // Dropped again, so that the metrics after this one find the engine as it was.
  for (const t of tables) await ctx.client.deleteTable(ctx.dataset, t);
  return {
    status: 'ok', rows: total, batchRows: batch, columns: FIELDS.length,
    warmupBatches: warm,
    warmupRowsPerSec: Math.round((warm * batch) / (warmMs / 1000)),
    sequentialRowsPerSec: Math.round(summarize(sequentialRuns).p50),
    sequentialRuns,
    concurrentStreams: streams,
    concurrentRowsPerSec: Math.round(total / (concMs / 1000)),
  };
}
