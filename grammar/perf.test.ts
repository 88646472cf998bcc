// Start-up and per-query parse cost budgets (see grammar/README.md).
import { describe, expect, it } from 'vitest';

const QUERY = `WITH recent AS (
  SELECT user_id, event_ts, amount
  FROM \`my-project.analytics.events\`
  WHERE event_ts >= TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 7 DAY)
)
SELECT user_id, COUNT(*) AS n, SUM(amount) AS total,
       ARRAY_AGG(amount IGNORE NULLS ORDER BY event_ts DESC LIMIT 3) AS last3
FROM recent
GROUP BY user_id HAVING total > 100
ORDER BY total DESC LIMIT 10`;

describe('grammar performance', () => {
  it('loads and builds the parser (module import + instance + first parse) in < 300 ms', async () => {
    // Includes the test runner's TypeScript transform of grammar/*.ts; the
    // grammar has no runtime dependencies, so there is nothing else to load.
    const t0 = performance.now();
    const { Parser } = await import('./parser.js');
    const t1 = performance.now();
    new Parser().parseScript(QUERY);
    const t2 = performance.now();
    console.log(`module load: ${(t1 - t0).toFixed(1)} ms; parser build + first parse: ${(t2 - t1).toFixed(1)} ms`);
    expect(t2 - t0).toBeLessThan(300);
  });

  it('parses a 10-line query in < 1 ms after warm-up', async () => {
    const { parseScript } = await import('./index.js');
    for (let i = 0; i < 300; i++) parseScript(QUERY);
    const n = 2000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) parseScript(QUERY);
    const per = (performance.now() - t0) / n;
    console.log(`10-line query: ${(per * 1000).toFixed(1)} µs/parse`);
    expect(per).toBeLessThan(1);
  });
});
