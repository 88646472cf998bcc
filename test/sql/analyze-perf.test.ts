// Analysis must stay cheap: a CI suite runs thousands of small queries. The
// minimum over a few batches is robust against a busy machine.
import { expect, it } from 'vitest';
import { parseScript } from '../../grammar/index.js';
import '../../src/functions/index.js';
import { analyzeQuery } from '../../src/analyzer/index.js';
import type { AnalyzerEnv } from '../../src/analyzer/context.js';
import type { QueryStatement } from '../../grammar/ast.js';
import { optimize } from '../../src/planner/optimize.js';
import { openHarness, run, setupDataset } from './harness.js';

it('analyzes and optimizes a small query in well under a millisecond', async () => {
  const h = await openHarness();
  try {
    await setupDataset(h, 'perf', 'd');
    const dd = { projectId: 'perf', datasetId: 'd' };
    await run(h, 'CREATE TABLE t (a INT64, b STRING, c FLOAT64)', { projectId: 'perf', defaultDataset: dd });
    const env: AnalyzerEnv = {
      catalog: h.catalog,
      projectId: 'perf',
      defaultDataset: dd,
      params: { named: new Map(), positional: [] },
      parse: parseScript,
      tempFunctions: new Map(),
      variables: new Map(),
      tempTables: new Map(),
    };
    const sql = "SELECT b, COUNT(*) AS n, SUM(a + 1) FROM t WHERE c > 1.5 AND b LIKE 'x%' GROUP BY b HAVING n > 1 ORDER BY n DESC LIMIT 10";
    const q = (parseScript(sql).statements[0] as QueryStatement).query;
    const ev = { nowMicros: 0n, timeZone: 'UTC', sessionUser: '', random: Math.random };
    const once = () => optimize(analyzeQuery(env, q).plan, { eval: ev });
    for (let i = 0; i < 500; i++) once();
    let best = Infinity;
    for (let b = 0; b < 5; b++) {
      const t0 = performance.now();
      for (let i = 0; i < 200; i++) once();
      best = Math.min(best, (performance.now() - t0) / 200);
    }
    expect(best).toBeLessThan(1);
  } finally {
    await h.close();
  }
});
