// DDL over a session: CREATE OR REPLACE TABLE ... AS SELECT, the statement a
// dbt run issues per model, repeated on one table; p50 of the first and of the
// last `ddlSample` statements. Every replace keeps the old table restorable
// for 7 days (time travel), which must not make later DDL slower: until
// 2026-11-27 the catalog, rewritten by every DDL, grew by a snapshot per
// replace (p50 11 -> 16 ms over 2,000 replaces), which the SELECT 1 drift
// check cannot see.
import { summarize } from '../lib/stats.js';
import type { MetricContext } from './context.js';
import type { ExtraMetrics } from '../lib/types.js';

export async function measureDdlDrift(ctx: MetricContext): Promise<ExtraMetrics['ddlDrift']> {
  const { ddlTotal, ddlSample } = ctx.sizes;
  const ds = ctx.dataset;
  await ctx.client.query(`CREATE TABLE ${ds}.ddl_src AS SELECT id, MOD(id, 100) AS k, CAST(id AS FLOAT64) AS v FROM UNNEST(GENERATE_ARRAY(1, 1000)) AS id`, 60_000);
  const sql = `CREATE OR REPLACE TABLE ${ds}.ddl_dst AS SELECT k, COUNT(*) AS cnt, SUM(v) AS total FROM ${ds}.ddl_src GROUP BY k`;
  const ms: number[] = [];
  for (let i = 0; i < ddlTotal; i++) {
    const t0 = performance.now();
    await ctx.client.query(sql, 60_000);
    ms.push(performance.now() - t0);
  }
  // The statement really replaced the table: 100 groups.
  const n = await ctx.client.query(`SELECT COUNT(*) FROM ${ds}.ddl_dst`, 60_000);
  if (Number(n.rows[0]?.f[0]?.v) !== 100) throw new Error(`ddl_dst holds ${String(n.rows[0]?.f[0]?.v)} rows, expected 100`);
  return { status: 'ok', statements: ddlTotal, sample: ddlSample, firstP50: summarize(ms.slice(0, ddlSample)).p50, lastP50: summarize(ms.slice(-ddlSample)).p50 };
}
