// ORDER BY ... LIMIT 1 inside an aggregate call keeps only each group's best
// row as rows arrive (src/executor/operators/aggregate-top.ts). Every query
// here runs with LIMIT 1 and with LIMIT 2 (which buffers every row and sorts
// them stably: the reference) taking the first element: the answers must be
// equal, over many groups spread across batches, ties (the earlier row wins),
// NULL and NaN sort keys, several keys, collations, values the aggregate
// drops, and under a small memory budget (the routing aggregate).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spillCounters } from '../../src/executor/spill.js';
import { memoryBudget } from '../../src/storage/memory-budget.js';
import { openHarness, run, simplify, wireRows, type Harness } from './harness.js';

const P = 'top1';
let h: Harness;
const q = async (sql: string): Promise<unknown[]> =>
  simplify(wireRows(await run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } }))) as unknown[];

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  // 40,000 rows, 3,001 groups (g) seen again in every batch; sort keys with many ties, NULLs, NaN.
  await q(`CREATE TABLE d.t AS SELECT x AS id, MOD(x * 7919, 3001) AS g,
      MOD(x * 31, 97) AS ts,
      IF(MOD(x, 13) = 0, NULL, MOD(x * 17, 50)) AS tn,
      IF(MOD(x, 11) = 0, CAST('nan' AS FLOAT64), IF(MOD(x, 7) = 0, NULL, MOD(x * 3, 40) / 4)) AS f,
      IF(MOD(x, 5) = 0, NULL, CONCAT(IF(MOD(x, 2) = 0, 'A', 'a'), CAST(MOD(x, 9) AS STRING))) AS s,
      DATE_ADD(DATE '2024-01-01', INTERVAL MOD(x * 13, 60) DAY) AS d,
      TIMESTAMP_ADD(TIMESTAMP '2024-01-01', INTERVAL MOD(x * 19, 500) SECOND) AS tt,
      IF(MOD(x, 3) = 0, NULL, CONCAT('v', CAST(x AS STRING))) AS v
    FROM UNNEST(GENERATE_ARRAY(1, 40000)) AS x`);
}, 120_000);

afterAll(async () => {
  memoryBudget.limit = 0;
  await h?.close();
});

const CALLS = [
  'ARRAY_AGG(STRUCT(id, v) ORDER BY ts DESC LIMIT #)[OFFSET(0)]',
  'ARRAY_AGG(id ORDER BY ts LIMIT #)[OFFSET(0)]',
  'ARRAY_AGG(id ORDER BY tn DESC LIMIT #)[OFFSET(0)]',
  'ARRAY_AGG(id ORDER BY tn NULLS LAST LIMIT #)[OFFSET(0)]',
  'ARRAY_AGG(id ORDER BY tn DESC NULLS FIRST, ts LIMIT #)[OFFSET(0)]',
  'ARRAY_AGG(id ORDER BY f LIMIT #)[OFFSET(0)]',
  'ARRAY_AGG(id ORDER BY f DESC, id DESC LIMIT #)[OFFSET(0)]',
  'ARRAY_AGG(id ORDER BY s LIMIT #)[OFFSET(0)]',
  "ARRAY_AGG(id ORDER BY COLLATE(s, 'und:ci') DESC LIMIT #)[OFFSET(0)]",
  'ARRAY_AGG(id ORDER BY d DESC, tt LIMIT #)[OFFSET(0)]',
  'ARRAY_AGG(v IGNORE NULLS ORDER BY ts DESC LIMIT #)',
  'STRING_AGG(v ORDER BY tt DESC LIMIT #)',
  "STRING_AGG(v, ',' ORDER BY s, ts LIMIT #)",
];

/** The call with LIMIT 1, and with LIMIT 2 cut to its first value (STRING_AGG: its first item). */
function pair(call: string): [string, string] {
  const one = call.replace('#', '1');
  const two = call.replace('#', '2');
  if (call.startsWith('STRING_AGG')) {
    // Both separators are ',' (the default) and no value holds one.
    return [one, `SPLIT(${two}, ',')[SAFE_OFFSET(0)]`];
  }
  if (call.includes('IGNORE NULLS')) return [`${one}[SAFE_OFFSET(0)]`, `${two}[SAFE_OFFSET(0)]`];
  return [one, two];
}

describe('aggregate ORDER BY .. LIMIT 1 keeps one row per group', () => {
  for (const call of CALLS) {
    it(call, async () => {
      const [one, two] = pair(call);
      const a = await q(`SELECT g, ${one} AS x FROM d.t GROUP BY g ORDER BY g`);
      const b = await q(`SELECT g, ${two} AS x FROM d.t GROUP BY g ORDER BY g`);
      expect(a.length).toBe(3001);
      expect(a).toEqual(b);
      // Global (one group) and with a FILTER-like WHERE: same again.
      expect(await q(`SELECT ${one} FROM d.t WHERE id > 123`)).toEqual(await q(`SELECT ${two} FROM d.t WHERE id > 123`));
    });
  }

  it('ties keep the earliest row', async () => {
    // ts ties within each group: the first id (input order) with the best ts wins.
    const rows = await q('SELECT g, ARRAY_AGG(id ORDER BY MOD(ts, 2) LIMIT 1)[OFFSET(0)] AS x FROM d.t GROUP BY g ORDER BY g');
    const want = await q('SELECT g, id AS x FROM d.t WHERE TRUE QUALIFY ROW_NUMBER() OVER (PARTITION BY g ORDER BY MOD(ts, 2), id) = 1 ORDER BY g');
    expect(rows).toEqual(want);
  });

  it('answers the same under a small memory budget (the routing aggregate)', async () => {
    // 20,000 groups of two rows: their best rows alone pass the budget's share, so rows of new groups go to files.
    const sql = 'SELECT MOD(id, 20000) AS k, ARRAY_AGG(STRUCT(id, v, s) ORDER BY tt DESC, id LIMIT 1)[OFFSET(0)] AS x FROM d.t GROUP BY k ORDER BY k';
    const free = await q(sql);
    const before = spillCounters.rawRows;
    memoryBudget.limit = 1 << 20;
    try {
      expect(await q(sql)).toEqual(free);
      expect(spillCounters.rawRows).toBeGreaterThan(before);
    } finally {
      memoryBudget.limit = 0;
    }
  });
});
