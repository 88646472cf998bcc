import { openHarness, run } from '../test/sql/harness.js';
const h = await openHarness();
await h.catalog.createDataset('mem', 'x', { location: 'US' }, true);
const q = async (sql: string) => run(h, sql, { projectId: 'mem', defaultDataset: { projectId: 'mem', datasetId: 'x' } });
const N = 1000000;
const base = `SELECT id, MOD(id, 1000) AS k, CAST(id AS FLOAT64) / 7 AS v, CONCAT('s', CAST(MOD(id * 13, 5000) AS STRING)) AS s FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS id`;
const which = process.argv[2] ?? 'delete';
const sql = which === 'delete' ? 'DELETE FROM x.t WHERE MOD(id, 2) = 0' : which === 'update' ? 'UPDATE x.t SET v = v + 1 WHERE MOD(id, 10) = 0' : which === 'sel' ? 'SELECT COUNT(*) FROM x.t WHERE MOD(id, 2) = 0' : 'UPDATE x.t SET v = d.w FROM x.dim d WHERE t.k = d.k AND d.k < 100';
for (let i = 0; i < 4; i++) {
  await q(`CREATE OR REPLACE TABLE x.t AS ${base}`);
  await q(`CREATE OR REPLACE TABLE x.dim AS SELECT k, k * 2 AS w FROM UNNEST(GENERATE_ARRAY(0, 999)) AS k`);
  const t = performance.now();
  await q(sql);
  console.log(which, (performance.now() - t).toFixed(0), 'ms');
}
await h.close();
