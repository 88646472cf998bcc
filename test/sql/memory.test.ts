// Operators under a small memory budget (src/storage/memory-budget.ts) give
// the answers they give unconstrained: every query runs once without a limit
// and once with the engine's budget set a few times smaller than the table
// and than the operator's state, and the rows must be the same (as
// multisets where the query defines no order). Counters show the
// constrained run really went the other way: spill files written, window
// top-N input let go of, reservations made and given back. (The engine's
// resident set under --memory-limit is measured against the built emulator
// in test/e2e/memory-limit.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinSpillCounters } from '../../src/executor/operators/join-spill.js';
import { windowCounters } from '../../src/executor/operators/window.js';
import { topNOptions } from '../../src/executor/operators/window/topn.js';
import { sortedWindowCounters } from '../../src/executor/operators/window/sorted.js';
import { spillCounters, spillOptions } from '../../src/executor/spill.js';
import { memoryBudget } from '../../src/storage/memory-budget.js';
import { openHarness, run, wireRows, type Harness } from './harness.js';

const P = 'mem';
let h: Harness;
const q = async (sql: string): Promise<unknown[]> => wireRows(await run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } }));
const sorted = (rows: unknown[]): string[] => rows.map((r) => JSON.stringify(r)).sort();

const N = 200_000;
const saved = { ...spillOptions, compactBytes: topNOptions.compactBytes };

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  // hk: ~N/2 values in scattered order; v: FLOAT64 multiples of 1/8 (sums exact in any order); s: strings; some NULL keys.
  await q(`CREATE TABLE d.t AS
    SELECT x AS id, MOD(x * 7919, ${N / 2}) AS hk, MOD(x, 100) AS k,
      MOD(x * 31, 1000) / 8 AS v, IF(MOD(x, 50) = 0, NULL, CONCAT('s', CAST(MOD(x * 13, 5000) AS STRING))) AS s
    FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS x`);
  // hk with NULLs among the keys.
  await q(`CREATE TABLE d.nulled AS SELECT IF(MOD(x, 97) = 0, NULL, MOD(x * 7919, ${N / 2})) AS nk, x AS id FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS x`);
  // Unique keys, 99% of them in the lowest quarter of their range.
  await q(`CREATE TABLE d.skew AS
    SELECT IF(MOD(x, 100) = 0, 3 * ${N} + x, x) AS sk, MOD(x * 31, 1000) / 8 AS v FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS x`);
}, 120_000);

afterAll(async () => {
  memoryBudget.limit = 0;
  Object.assign(spillOptions, { share: saved.share, partitions: saved.partitions });
  topNOptions.compactBytes = saved.compactBytes;
  await h?.close();
});

/** The query's rows unconstrained, then under a 4 MB budget (the table's columns alone are ~8 MB). */
async function both(sql: string): Promise<{ free: unknown[]; tight: unknown[] }> {
  memoryBudget.limit = 0;
  const free = await q(sql);
  memoryBudget.limit = 4 << 20;
  try {
    const tight = await q(sql);
    return { free, tight };
  } finally {
    memoryBudget.limit = 0;
  }
}

describe('operators under a small memory budget', () => {
  it('a high-cardinality GROUP BY spills its groups to files by key and merges them file by file', async () => {
    const before = spillCounters.files;
    const sql = 'SELECT hk, COUNT(*) AS n, SUM(v) AS sv, AVG(v) AS av, MIN(s) AS mn, MAX(id) AS mx FROM d.t GROUP BY hk';
    const { free, tight } = await both(sql);
    expect(free.length).toBe(N / 2);
    expect(sorted(tight)).toEqual(sorted(free));
    expect(spillCounters.files).toBeGreaterThan(before);
    // Everything reserved was given back.
    expect(memoryBudget.reserved).toBe(0);
  });

  it('nearly unique keys go to files as input rows once a spilled table shows grouping does not reduce; several and STRING keys by hash', async () => {
    for (const sql of [
      'SELECT hk, COUNT(*) AS n, SUM(v) AS sv, MIN(s) AS mn FROM d.t GROUP BY hk',
      // STRING and INT64 keys (files by hash), NULL keys among them.
      'SELECT s, hk, COUNT(*) AS n, MAX(v) AS mx FROM d.t GROUP BY s, hk',
    ]) {
      const before = { ...spillCounters };
      const { free, tight } = await both(sql);
      expect(sorted(tight)).toEqual(sorted(free));
      expect(spillCounters.files).toBeGreaterThan(before.files);
      expect(spillCounters.rawRows).toBeGreaterThan(before.rawRows);
    }
    expect(memoryBudget.reserved).toBe(0);
  });

  it('nearly unique integer keys whose range (row-group statistics) does not fit keep the lowest key ranges in memory and write the rest as input rows from the first row', async () => {
    // hk is a column (statistics give its range); hk + 0 is not: that one spills its first table, then goes as input rows.
    for (const [sql, planned] of [
      ['SELECT hk, COUNT(*) AS n, SUM(v) AS sv, MIN(s) AS mn, MAX(id) AS mx FROM d.t GROUP BY hk', true],
      ['SELECT hk + 0 AS h, COUNT(*) AS n, SUM(v) AS sv FROM d.t GROUP BY h', false],
      // Keys crowded into the lowest ranges: the in-memory table outgrows its plan, spills its groups, and the rest go as input rows.
      ['SELECT sk, COUNT(*) AS n, SUM(v) AS sv FROM d.skew GROUP BY sk', true],
    ] as const) {
      const before = { ...spillCounters };
      const { free, tight } = await both(sql);
      expect(sorted(tight), sql).toEqual(sorted(free));
      expect(spillCounters.rangePlans - before.rangePlans, sql).toBe(planned ? 1 : 0);
      expect(spillCounters.rawRows, sql).toBeGreaterThan(before.rawRows);
      expect(memoryBudget.reserved).toBe(0);
    }
    // Under a budget the whole range fits: direct-indexed from the first row, nothing spilled.
    const before = { ...spillCounters };
    memoryBudget.limit = 64 << 20;
    try {
      const rows = await q('SELECT hk, COUNT(*) AS n, SUM(v) AS sv FROM d.t GROUP BY hk');
      expect(rows.length).toBe(N / 2);
    } finally {
      memoryBudget.limit = 0;
    }
    expect(spillCounters.files).toBe(before.files);
    expect(memoryBudget.reserved).toBe(0);
  });

  it('nearly unique integer keys whose whole range fits the share with the output (though not half of it) are grouped in one table from the first row, no file; top-N over it, ties, NULL keys', async () => {
    // COUNT alone: ~2.8 MB of table (100k groups, direct index) and no output beyond it (keys and counts
    // are views): under 8 MB whole (half the share would not hold it); with SUM, MIN and COUNT(s) ~6.8 MB + 3.2 MB of output, under 24 MB.
    for (const [sql, limit] of [
      ['SELECT hk, COUNT(*) AS n FROM d.t GROUP BY hk', 8],
      // Counts tie (1-4 rows per key): the order is by hk within a count.
      ['SELECT hk, COUNT(*) AS n FROM d.t GROUP BY hk ORDER BY n DESC, hk LIMIT 10', 8],
      ['SELECT hk, COUNT(*) AS n FROM d.t GROUP BY hk ORDER BY n, hk DESC LIMIT 7', 8],
      // A LIMIT past the groups: every group, ordered.
      ['SELECT hk, COUNT(*) AS n FROM d.t GROUP BY hk ORDER BY n DESC, hk LIMIT 150000', 8],
      ['SELECT hk, COUNT(*) AS n, SUM(v) AS sv, MIN(s) AS mn, COUNT(s) AS cs FROM d.t GROUP BY hk', 24],
      ['SELECT nk, COUNT(*) AS n, COUNT(nk) AS c, MAX(id) AS mx FROM d.nulled GROUP BY nk', 16],
      ['SELECT nk, COUNT(*) AS n FROM d.nulled GROUP BY nk ORDER BY n DESC, nk LIMIT 10', 8],
    ] as const) {
      memoryBudget.limit = 0;
      const free = await q(sql);
      const before = { ...spillCounters };
      memoryBudget.limit = limit << 20;
      let tight: unknown[];
      try {
        tight = await q(sql);
      } finally {
        memoryBudget.limit = 0;
      }
      if (sql.includes('ORDER BY')) expect(tight, sql).toEqual(free);
      else expect(sorted(tight), sql).toEqual(sorted(free));
      expect(free.length, sql).toBe(sql.includes('LIMIT 150000') || !sql.includes('LIMIT') ? N / 2 + (sql.includes('d.nulled') ? 1 : 0) : Number(/LIMIT (\d+)/.exec(sql)![1]));
      expect(spillCounters.wholePlans - before.wholePlans, sql).toBe(1);
      // NULL keys have their own group beside the direct index (GroupTable.findOrInsert): no file either.
      expect(spillCounters.files, sql).toBe(before.files);
      expect(memoryBudget.reserved).toBe(0);
    }
  });

  it('grouping sets, ROLLUP and CUBE spill their groups with the set index and merge file by file', async () => {
    for (const sql of [
      'SELECT hk, k, COUNT(*) AS n, SUM(v) AS sv, GROUPING(hk) AS gh, GROUPING(k) AS gk FROM d.t WHERE id <= 50000 GROUP BY ROLLUP (hk, k)',
      'SELECT k, s, MIN(id) AS mn, AVG(v) AS av, GROUPING(s) AS gs FROM d.t WHERE id <= 50000 GROUP BY CUBE (k, s)',
      // A set twice gives its groups twice.
      'SELECT hk, s, MAX(v) AS mx FROM d.t WHERE id <= 50000 GROUP BY GROUPING SETS ((hk), (s), (hk), ())',
    ]) {
      const before = spillCounters.files;
      const { free, tight } = await both(sql);
      expect(sorted(tight)).toEqual(sorted(free));
      expect(spillCounters.files, sql).toBeGreaterThan(before);
    }
    expect(memoryBudget.reserved).toBe(0);
  });

  it('hash joins whose build side passes its share join file pair by file pair (grace), every join type, NULL keys', async () => {
    const half = 'SELECT id, hk, s FROM d.t WHERE MOD(id, 3) = 0';
    for (const sql of [
      `SELECT COUNT(*) AS n, SUM(a.id) AS sa, SUM(b.id) AS sb FROM d.t AS a JOIN d.t AS b ON a.hk = b.hk AND a.id < b.id`,
      `SELECT COUNT(*) AS n, COUNT(b.id) AS nb, SUM(a.id) AS sa FROM d.t AS a LEFT JOIN (${half}) AS b ON a.hk = b.hk`,
      `SELECT COUNT(*) AS n, COUNT(a.id) AS na, SUM(b.id) AS sb FROM (${half}) AS a RIGHT JOIN d.t AS b ON a.s = b.s AND a.id = b.id`,
      `SELECT COUNT(*) AS n, COUNT(a.id) AS na, COUNT(b.id) AS nb FROM (SELECT * FROM d.t WHERE MOD(id, 2) = 0) AS a FULL JOIN (${half}) AS b ON a.id = b.id`,
      `SELECT COUNT(*) AS n, SUM(id) AS s FROM d.t WHERE hk IN (SELECT hk FROM d.t WHERE MOD(id, 7) <> 0)`,
      `SELECT COUNT(*) AS n, SUM(id) AS s FROM d.t AS a WHERE NOT EXISTS (SELECT 1 FROM d.t AS b WHERE b.s = a.s AND MOD(b.id, 5) <> 0)`,
    ]) {
      const before = joinSpillCounters.spilled;
      const { free, tight } = await both(sql);
      expect(tight).toEqual(free);
      expect(joinSpillCounters.spilled, sql).toBeGreaterThan(before);
    }
    expect(memoryBudget.reserved).toBe(0);
  });

  it('COUNT(DISTINCT) and SUM(DISTINCT), global and grouped, spill their DISTINCT tables and dedupe file by file', async () => {
    for (const sql of [
      'SELECT COUNT(DISTINCT hk) AS n, COUNT(DISTINCT s) AS ns, SUM(DISTINCT hk) AS sh, COUNT(*) AS c FROM d.t',
      'SELECT k, COUNT(DISTINCT hk) AS n, SUM(DISTINCT v) AS sv FROM d.t GROUP BY k',
    ]) {
      const before = spillCounters.files;
      const { free, tight } = await both(sql);
      expect(sorted(tight)).toEqual(sorted(free));
      expect(spillCounters.files).toBeGreaterThan(before);
    }
    expect(memoryBudget.reserved).toBe(0);
  });

  it('a GROUP BY whose calls do not split (ORDER BY / LIMIT inside, ARRAY_AGG, STRING_AGG, NUMERIC SUM, DISTINCT) routes the rows of new groups to files and aggregates file by file', async () => {
    for (const sql of [
      // The dedup idiom: the latest row per key.
      'SELECT hk, ARRAY_AGG(STRUCT(id, s) ORDER BY id DESC LIMIT 1)[OFFSET(0)] AS last, COUNT(*) AS n FROM d.t GROUP BY hk',
      'SELECT hk, STRING_AGG(s, "," ORDER BY id) AS ss, ARRAY_AGG(k ORDER BY id) AS ks, SUM(CAST(v AS NUMERIC)) AS nv, ANY_VALUE(hk * 2) AS h2 FROM d.t GROUP BY hk',
      // Several keys, a STRING among them with NULLs; DISTINCT inside.
      'SELECT s, MOD(hk, 7) AS m, COUNT(DISTINCT k) AS dk, ARRAY_AGG(id ORDER BY id LIMIT 2) AS ids FROM d.t GROUP BY s, m',
    ]) {
      const before = { ...spillCounters };
      const { free, tight } = await both(sql);
      expect(sorted(tight), sql).toEqual(sorted(free));
      expect(spillCounters.files, sql).toBeGreaterThan(before.files);
      expect(spillCounters.rawRows, sql).toBeGreaterThan(before.rawRows);
    }
    expect(memoryBudget.reserved).toBe(0);
  });

  it('grouping sets whose calls do not split route the rows of each set\'s new groups to files of that set and aggregate them as a GROUP BY of the set', async () => {
    for (const sql of [
      'SELECT hk, k, STRING_AGG(s, "," ORDER BY id) AS ss, ARRAY_AGG(id ORDER BY id LIMIT 2) AS ids, GROUPING(hk) AS gh, GROUPING(k) AS gk FROM d.t WHERE id <= 50000 GROUP BY ROLLUP (hk, k)',
      'SELECT k, hk, COUNT(DISTINCT s) AS ds, ANY_VALUE(k * 2) AS k2, SUM(CAST(v AS NUMERIC)) AS nv, GROUPING(hk) AS gh FROM d.t WHERE id <= 40000 GROUP BY CUBE (k, hk)',
      // A set twice gives its groups twice; the empty set's one group takes every row.
      'SELECT hk, s, ARRAY_AGG(STRUCT(id, v) ORDER BY id DESC LIMIT 1)[OFFSET(0)] AS last FROM d.t WHERE id <= 50000 GROUP BY GROUPING SETS ((hk), (s), (hk), ())',
    ]) {
      const before = { ...spillCounters };
      const { free, tight } = await both(sql);
      expect(sorted(tight), sql).toEqual(sorted(free));
      expect(spillCounters.files, sql).toBeGreaterThan(before.files);
      expect(spillCounters.rawRows, sql).toBeGreaterThan(before.rawRows);
    }
    expect(memoryBudget.reserved).toBe(0);
  });

  it('a routed file that still does not fit splits again by other hash bits', async () => {
    const partitions = spillOptions.partitions;
    spillOptions.partitions = 2;
    try {
      const before = { ...spillCounters };
      const sql = 'SELECT hk, ARRAY_AGG(STRUCT(id, s, v) ORDER BY id DESC LIMIT 1)[OFFSET(0)] AS last FROM d.t GROUP BY hk';
      const { free, tight } = await both(sql);
      expect(sorted(tight)).toEqual(sorted(free));
      // More files than one split into two makes: a file was split again.
      expect(spillCounters.files - before.files).toBeGreaterThan(2);
    } finally {
      spillOptions.partitions = partitions;
    }
    expect(memoryBudget.reserved).toBe(0);
  });

  it('a GROUP BY that fits is finished in place (no spill file)', async () => {
    const before = spillCounters.files;
    const { free, tight } = await both('SELECT k, COUNT(*), SUM(v), AVG(id) FROM d.t GROUP BY k');
    expect(tight).toEqual(free);
    expect(spillCounters.files).toBe(before);
  });

  it('a window with PARTITION BY spills its input by partition key and windows file by file', async () => {
    const before = spillCounters.files;
    const sql = `SELECT id, k, SUM(v) OVER (PARTITION BY k ORDER BY id) AS run, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn,
      LAG(s) OVER (PARTITION BY k ORDER BY id) AS prev, COUNT(*) OVER (PARTITION BY k) AS n FROM d.t`;
    const { free, tight } = await both(sql);
    expect(free.length).toBe(N);
    expect(sorted(tight)).toEqual(sorted(free));
    expect(spillCounters.files).toBeGreaterThan(before);
    expect(memoryBudget.reserved).toBe(0);
  });

  it('a window whose calls partition by different keys spills by the keys they share', async () => {
    const before = spillCounters.files;
    const sql = `SELECT id, SUM(v) OVER (PARTITION BY k) AS total, ROW_NUMBER() OVER (PARTITION BY MOD(id, 3), k ORDER BY v DESC, id) AS rn,
      MAX(s) OVER (PARTITION BY k, hk) AS mx FROM d.t`;
    const { free, tight } = await both(sql);
    expect(sorted(tight)).toEqual(sorted(free));
    expect(spillCounters.files).toBeGreaterThan(before);
    expect(memoryBudget.reserved).toBe(0);
  });

  it('a window whose calls share no key runs group after group, each spilled by its own keys', async () => {
    const before = spillCounters.files;
    const sql = `SELECT id, SUM(v) OVER (PARTITION BY k) AS total, COUNT(*) OVER (PARTITION BY hk) AS n,
      ROW_NUMBER() OVER (PARTITION BY MOD(id, 7) ORDER BY v, id) AS rn, MAX(s) OVER (PARTITION BY k, MOD(id, 2)) AS mx FROM d.t`;
    const { free, tight } = await both(sql);
    expect(free.length).toBe(N);
    expect(sorted(tight)).toEqual(sorted(free));
    // Three groups (k; hk; MOD(id, 7)), each spilled to files of its own.
    expect(spillCounters.files).toBeGreaterThan(before + 2 * spillOptions.partitions);
    expect(memoryBudget.reserved).toBe(0);
  });

  it('calls without PARTITION BY beside partitioned ones run first over the sorted stream, then the partitioned groups; a partition past the share whose calls partition further runs the same way with its keys taken out', async () => {
    // p2: two partitions of N/2 rows, each past the share.
    const from = `(SELECT *, MOD(id, 2) AS p2 FROM d.t)`;
    for (const [sql, streams] of [
      [`SELECT id, hk, s, ROW_NUMBER() OVER (ORDER BY v, id) AS rn, SUM(v) OVER (PARTITION BY k) AS t, LAG(s) OVER (PARTITION BY hk ORDER BY id) AS lg FROM ${from}`, 1],
      [`SELECT id, hk, s, COUNT(*) OVER () AS n, RANK() OVER (ORDER BY k) AS rk, ROW_NUMBER() OVER (PARTITION BY k ORDER BY id) AS rn FROM ${from}`, 1],
      // Superset keys: p2 is shared, each p2 partition past the share runs its [] calls sorted and its [k] calls keyed.
      [`SELECT id, hk, s, SUM(v) OVER (PARTITION BY p2 ORDER BY id) AS run, ROW_NUMBER() OVER (PARTITION BY p2, k ORDER BY v, id) AS rn,
        LAG(s) OVER (PARTITION BY k, p2 ORDER BY id) AS lg FROM ${from}`, 2],
    ] as const) {
      const windows = sortedWindowCounters.windows;
      const past = windowCounters.pastShare;
      const { free, tight } = await both(sql);
      expect(free.length).toBe(N);
      expect(sorted(tight), sql).toEqual(sorted(free));
      expect(sortedWindowCounters.windows - windows, sql).toBe(streams);
      // No input past the share was windowed whole in memory.
      expect(windowCounters.pastShare, sql).toBe(past);
    }
    expect(memoryBudget.reserved).toBe(0);
  }, 300_000);

  it('a window with no PARTITION BY goes through the sort (sorted runs in files, merged) and runs in one pass', async () => {
    // Peer groups of ~2,000 rows (k) span batches; NULL keys (s); ties numbered in input order in both runs.
    for (const sql of [
      `SELECT id, ROW_NUMBER() OVER (ORDER BY k) AS rn, RANK() OVER (ORDER BY k) AS rk, DENSE_RANK() OVER (ORDER BY k) AS dr,
        SUM(v) OVER (ORDER BY k) AS run, AVG(v) OVER (ORDER BY k) AS av, COUNT(s) OVER (ORDER BY k) AS c,
        MIN(hk) OVER (ORDER BY k ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS mn, COUNT(*) OVER (ORDER BY k ROWS UNBOUNDED PRECEDING) AS n FROM d.t`,
      'SELECT id, ROW_NUMBER() OVER (ORDER BY s DESC, id) AS rn, MAX(v) OVER (ORDER BY s DESC, id) AS mx, SUM(hk) OVER (ORDER BY s DESC, id) AS run FROM d.t',
    ]) {
      const files = spillCounters.files;
      const windows = sortedWindowCounters.windows;
      const { free, tight } = await both(sql);
      expect(free.length).toBe(N);
      expect(sorted(tight)).toEqual(sorted(free));
      expect(sortedWindowCounters.windows).toBe(windows + 1);
      expect(spillCounters.files).toBeGreaterThan(files + 1);
    }
    expect(memoryBudget.reserved).toBe(0);
  });

  it('a window with no PARTITION BY over all rows (OVER (), PERCENTILE_CONT / DISC) reads its rows twice: values first, then the rows with them', async () => {
    for (const sql of [
      // No ORDER BY anywhere: no sort, rows in input order in both runs.
      `SELECT id, SUM(v) OVER () AS sv, AVG(v) OVER () AS av, COUNT(*) OVER () AS n, COUNT(DISTINCT s) OVER () AS ds, MAX(s) OVER () AS mx,
        ANY_VALUE(s) OVER () AS anyv, LENGTH(STRING_AGG(s, ',') OVER ()) AS sl, ARRAY_LENGTH(ARRAY_AGG(hk IGNORE NULLS) OVER ()) AS al,
        PERCENTILE_CONT(v, 0.37) OVER () AS pc, PERCENTILE_DISC(s, 0.5) OVER () AS pd, PERCENTILE_CONT(hk, 0.999 RESPECT NULLS) OVER () AS pn,
        PERCENTILE_DISC(CAST(v AS NUMERIC), 0) OVER () AS p0 FROM d.t`,
      // Beside calls in ORDER BY order; an order-free aggregate over an explicit whole frame with ORDER BY.
      `SELECT id, ROW_NUMBER() OVER (ORDER BY k, id) AS rn, SUM(v) OVER (ORDER BY k, id) AS run, SUM(v) OVER () AS total,
        COUNT(s) OVER (ORDER BY hk ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS c, PERCENTILE_CONT(v, 0.5) OVER () AS med FROM d.t`,
    ]) {
      const files = spillCounters.files;
      const windows = sortedWindowCounters.windows;
      const { free, tight } = await both(sql);
      expect(free.length).toBe(N);
      expect(sorted(tight), sql).toEqual(sorted(free));
      expect(sortedWindowCounters.windows, sql).toBe(windows + 1);
      expect(spillCounters.files, sql).toBeGreaterThan(files);
    }
    // Without ORDER BY the rows come back in input order.
    const { free, tight } = await both('SELECT id, SUM(v) OVER () AS t, PERCENTILE_DISC(hk, 0.25) OVER () AS p FROM d.t');
    expect(tight).toEqual(free);
    expect(memoryBudget.reserved).toBe(0);
  }, 300_000);

  it('a window with no PARTITION BY whose aggregates have no running state (STRING_AGG, ARRAY_AGG, ANY_VALUE, NUMERIC) feeds one accumulator over the sorted rows', async () => {
    for (const sql of [
      `SELECT id, MIN(s) OVER (ORDER BY k) AS m, ANY_VALUE(s) OVER (ORDER BY k) AS anyv, LENGTH(STRING_AGG(s, ',') OVER (ORDER BY k)) AS sl,
        ARRAY_LENGTH(ARRAY_AGG(id) OVER (ORDER BY k)) AS al, COUNTIF(v > 50) OVER (ORDER BY k) AS ci, SUM(CAST(v AS NUMERIC)) OVER (ORDER BY k) AS ns,
        RANK() OVER (ORDER BY k) AS rk,
        ANY_VALUE(s) OVER (ORDER BY k ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS anyr FROM d.t`,
    ]) {
      const windows = sortedWindowCounters.windows;
      const { free, tight } = await both(sql);
      expect(free.length).toBe(N);
      expect(sorted(tight), sql).toEqual(sorted(free));
      expect(sortedWindowCounters.windows, sql).toBe(windows + 1);
    }
    expect(memoryBudget.reserved).toBe(0);
  }, 300_000);

  it('a window with no PARTITION BY whose calls read rows around their own (LAG/LEAD, NTILE, PERCENT_RANK, CUME_DIST, value functions, sliding frames) streams the sorted rows, holding only the rows its frames reach', async () => {
    // k: peer groups of ~2,000 rows spanning batches; s is NULL for every row of k = 0 and k = 50 (IGNORE NULLS reaches into rows let go).
    for (const sql of [
      `SELECT id, LAG(s) OVER (ORDER BY k) AS lg, LEAD(id, 3, -1) OVER (ORDER BY k) AS ld, LAG(v, 5000) OVER (ORDER BY k) AS lg5k,
        NTILE(7) OVER (ORDER BY k) AS nt, NTILE(300000) OVER (ORDER BY k) AS nt2, PERCENT_RANK() OVER (ORDER BY k) AS pr,
        CUME_DIST() OVER (ORDER BY k) AS cd, RANK() OVER (ORDER BY k) AS rk, SUM(v) OVER (ORDER BY k) AS run FROM d.t WHERE id <= ${N / 2}`,
      `SELECT id, FIRST_VALUE(s IGNORE NULLS) OVER (ORDER BY k DESC, id) AS fv, NTH_VALUE(s, 30 IGNORE NULLS) OVER (ORDER BY k DESC, id) AS nv,
        LAST_VALUE(s IGNORE NULLS) OVER (ORDER BY k DESC, id ROWS BETWEEN UNBOUNDED PRECEDING AND 3 PRECEDING) AS lv,
        NTH_VALUE(v, 5) OVER (ORDER BY k DESC, id ROWS BETWEEN 10 PRECEDING AND 10 FOLLOWING) AS n5,
        LAST_VALUE(id) OVER (ORDER BY k DESC, id ROWS BETWEEN 2 FOLLOWING AND 5 FOLLOWING) AS lf,
        SUM(v) OVER (ORDER BY k DESC, id ROWS BETWEEN 100 PRECEDING AND 50 FOLLOWING) AS sv, AVG(v) OVER (ORDER BY k DESC, id ROWS BETWEEN 7 PRECEDING AND 1 PRECEDING) AS av,
        MIN(hk) OVER (ORDER BY k DESC, id ROWS BETWEEN 5 PRECEDING AND CURRENT ROW) AS mn, COUNT(s) OVER (ORDER BY k DESC, id ROWS BETWEEN CURRENT ROW AND 20 FOLLOWING) AS c,
        MAX(v) OVER (ORDER BY k DESC, id ROWS BETWEEN UNBOUNDED PRECEDING AND 40 FOLLOWING) AS mx FROM d.t WHERE id <= ${N / 2}`,
      `SELECT id, SUM(v) OVER (ORDER BY k RANGE BETWEEN CURRENT ROW AND CURRENT ROW) AS peers, COUNT(v) OVER (ORDER BY k RANGE BETWEEN CURRENT ROW AND CURRENT ROW) AS np,
        FIRST_VALUE(id) OVER (ORDER BY k RANGE BETWEEN CURRENT ROW AND CURRENT ROW) AS fp, LAST_VALUE(hk) OVER (ORDER BY k) AS lp,
        MAX(v) OVER (ORDER BY k ROWS BETWEEN 50 PRECEDING AND 30 FOLLOWING) AS mx, LEAD(s, 2500) OVER (ORDER BY k) AS far FROM d.t WHERE id <= ${N / 2}`,
    ]) {
      const files = spillCounters.files;
      const windows = sortedWindowCounters.windows;
      const { free, tight } = await both(sql);
      expect(free.length).toBe(N / 2);
      expect(sorted(tight), sql).toEqual(sorted(free));
      expect(sortedWindowCounters.windows, sql).toBe(windows + 1);
      expect(spillCounters.files, sql).toBeGreaterThan(files + 1);
    }
    expect(memoryBudget.reserved).toBe(0);
  });

  it('MIN / MAX over frames whose start moves keep a monotonic queue over the sorted stream (NaN, NULL, -0 and 0, DATE), as the in-memory pass does', async () => {
    // f: FLOAT64 with NaNs and NULLs; z: 0 and -0 (ties: the earliest is kept); dt: DATE (Int32 data); hk: INT64.
    const from = `(SELECT *, IF(MOD(id, 101) = 0, CAST('NaN' AS FLOAT64), IF(MOD(id, 37) = 0, NULL, v)) AS f, IF(MOD(id, 3) = 0, -1.0, 1.0) * 0 AS z,
      DATE_ADD(DATE '2020-01-01', INTERVAL MOD(id * 17, 1000) DAY) AS dt FROM d.t)`;
    const sql = `SELECT id, hk, s, MIN(f) OVER (ORDER BY k, id ROWS 1000 PRECEDING) AS a, MAX(f) OVER (ORDER BY k, id ROWS BETWEEN 100 PRECEDING AND 100 FOLLOWING) AS b,
      MIN(z) OVER (ORDER BY k, id ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING) AS c, MAX(z) OVER (ORDER BY k, id ROWS BETWEEN 3 FOLLOWING AND 9 FOLLOWING) AS d,
      MIN(dt) OVER (ORDER BY k, id ROWS BETWEEN 500 PRECEDING AND 1 PRECEDING) AS e, MAX(hk) OVER (ORDER BY k, id ROWS 2000 PRECEDING) AS g,
      MAX(hk) OVER (ORDER BY k DESC, id RANGE BETWEEN CURRENT ROW AND CURRENT ROW) AS h FROM ${from}`;
    const windows = sortedWindowCounters.windows;
    const { free, tight } = await both(sql);
    expect(free.length).toBe(N);
    expect(sorted(tight)).toEqual(sorted(free));
    // Two ORDER BYs: two sorted passes.
    expect(sortedWindowCounters.windows - windows).toBe(2);
    expect(memoryBudget.reserved).toBe(0);
  }, 300_000);

  it('a window with no PARTITION BY over RANGE frames with offsets streams the sorted rows, holding the rows whose keys its frames reach', async () => {
    // k: ~1,000 rows a key; hk: 1-2 rows a key; nk: hk with NULLs; v: FLOAT64 (DESC); dk: a DATE (by UNIX_DATE, an expression); ties in input order in both runs.
    // NUMERIC keys: nn (eighths, unscaled below 2^53), wn (unscaled past 2^53: BigInts); bk: INT64 keys past 2^53.
    const from = `(SELECT *, IF(MOD(id, 37) = 0, NULL, hk) AS nk, DATE_ADD(DATE '2020-01-01', INTERVAL MOD(id, 3000) DAY) AS dk,
      CAST(IF(MOD(id, 37) = 0, NULL, hk) AS NUMERIC) / 8 AS nn, CAST(hk AS NUMERIC) * 1000000 + NUMERIC '0.5' AS wn,
      IF(MOD(id, 41) = 0, NULL, hk * 1000 + 9007199200000000) AS bk FROM d.t WHERE id <= ${N / 2})`;
    for (const sql of [
      `SELECT id, SUM(v) OVER (ORDER BY k RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) AS s2, MIN(hk) OVER (ORDER BY k RANGE BETWEEN 3 FOLLOWING AND 7 FOLLOWING) AS mf,
        LAST_VALUE(s IGNORE NULLS) OVER (ORDER BY k RANGE BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS lv, ROW_NUMBER() OVER (ORDER BY k) AS rn,
        COUNT(*) OVER (ORDER BY k RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS c FROM ${from}`,
      `SELECT id, COUNT(s) OVER (ORDER BY hk RANGE BETWEEN 10 PRECEDING AND 5 FOLLOWING) AS c, FIRST_VALUE(id) OVER (ORDER BY hk RANGE BETWEEN 100 PRECEDING AND 100 FOLLOWING) AS fv,
        MAX(v) OVER (ORDER BY hk RANGE BETWEEN UNBOUNDED PRECEDING AND 50 PRECEDING) AS mx, LAG(id) OVER (ORDER BY hk) AS lg FROM ${from}`,
      `SELECT id, SUM(v) OVER (ORDER BY nk RANGE BETWEEN 20 PRECEDING AND 20 FOLLOWING) AS sn, COUNT(*) OVER (ORDER BY nk RANGE BETWEEN CURRENT ROW AND 3 FOLLOWING) AS cn,
        NTH_VALUE(s, 2) OVER (ORDER BY nk RANGE BETWEEN 5 PRECEDING AND 2 PRECEDING) AS n2 FROM ${from}`,
      `SELECT id, s, AVG(hk) OVER (ORDER BY v DESC RANGE BETWEEN 1.5 PRECEDING AND 0.25 FOLLOWING) AS av, COUNT(*) OVER (ORDER BY v DESC RANGE 2 PRECEDING) AS c FROM ${from}`,
      `SELECT id, s, SUM(v) OVER (ORDER BY nk DESC NULLS FIRST RANGE BETWEEN 7 PRECEDING AND 7 FOLLOWING) AS sd FROM ${from}`,
      `SELECT id, s, COUNT(*) OVER (ORDER BY UNIX_DATE(dk) RANGE BETWEEN 6 PRECEDING AND CURRENT ROW) AS wk,
        SUM(v) OVER (ORDER BY UNIX_DATE(dk) RANGE BETWEEN 30 PRECEDING AND 1 PRECEDING) AS mo, ROW_NUMBER() OVER (ORDER BY UNIX_DATE(dk)) AS rn FROM ${from}`,
      `SELECT id, SUM(v) OVER (ORDER BY nn RANGE BETWEEN NUMERIC '2.5' PRECEDING AND NUMERIC '0.125' FOLLOWING) AS sn, COUNT(*) OVER (ORDER BY nn RANGE BETWEEN CURRENT ROW AND 1 FOLLOWING) AS cn,
        LAST_VALUE(s) OVER (ORDER BY nn RANGE BETWEEN 4 PRECEDING AND NUMERIC '0.3' PRECEDING) AS lv FROM ${from}`,
      `SELECT id, s, COUNT(*) OVER (ORDER BY nn DESC RANGE BETWEEN NUMERIC '0.25' PRECEDING AND 3 FOLLOWING) AS c, MAX(id) OVER (ORDER BY nn DESC RANGE BETWEEN 1 FOLLOWING AND 2 FOLLOWING) AS mx FROM ${from}`,
      `SELECT id, s, COUNT(*) OVER (ORDER BY wn RANGE BETWEEN NUMERIC '3000000' PRECEDING AND NUMERIC '1000000.5' FOLLOWING) AS c, SUM(v) OVER (ORDER BY wn RANGE 20000000 PRECEDING) AS sv FROM ${from}`,
      `SELECT id, s, COUNT(*) OVER (ORDER BY bk DESC RANGE BETWEEN 5000 PRECEDING AND 2000 FOLLOWING) AS c, FIRST_VALUE(id) OVER (ORDER BY bk DESC RANGE BETWEEN 3000 PRECEDING AND CURRENT ROW) AS fv FROM ${from}`,
    ]) {
      const files = spillCounters.files;
      const windows = sortedWindowCounters.windows;
      const { free, tight } = await both(sql);
      expect(free.length).toBe(N / 2);
      expect(sorted(tight), sql).toEqual(sorted(free));
      expect(sortedWindowCounters.windows, sql).toBe(windows + 1);
      expect(spillCounters.files, sql).toBeGreaterThan(files + 1);
    }
    expect(memoryBudget.reserved).toBe(0);
  }, 300_000);

  it('a PARTITION BY window whose partition alone passes the share streams that partition through the sorted window, smaller ones windowed in groups', async () => {
    // p2: two partitions of N/2 rows; sk: one partition of 3N/4 rows beside 1,000 small ones; np: NULL keys are a partition of their own.
    const from = `(SELECT *, MOD(id, 2) AS p2, IF(id <= ${(3 * N) / 4}, -1, MOD(id, 1000)) AS sk, IF(MOD(id, 3) = 0, NULL, MOD(id, 2)) AS np FROM d.t)`;
    for (const [sql, big] of [
      [`SELECT id, ROW_NUMBER() OVER (PARTITION BY p2 ORDER BY k) AS rn, RANK() OVER (PARTITION BY p2 ORDER BY k) AS rk, DENSE_RANK() OVER (PARTITION BY p2 ORDER BY k) AS dr,
        SUM(v) OVER (PARTITION BY p2 ORDER BY k) AS run, LAG(s) OVER (PARTITION BY p2 ORDER BY k) AS lg, LEAD(id, 3, -1) OVER (PARTITION BY p2 ORDER BY k) AS ld,
        NTILE(7) OVER (PARTITION BY p2 ORDER BY k) AS nt, CUME_DIST() OVER (PARTITION BY p2 ORDER BY k) AS cd,
        SUM(v) OVER (PARTITION BY p2 ORDER BY k ROWS BETWEEN 100 PRECEDING AND 50 FOLLOWING) AS sl,
        COUNT(*) OVER (PARTITION BY p2 ORDER BY k RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS rg,
        LENGTH(STRING_AGG(s, ',') OVER (PARTITION BY p2 ORDER BY k)) AS sa FROM ${from}`, 2],
      [`SELECT id, SUM(v) OVER (PARTITION BY p2) AS sv, COUNT(DISTINCT s) OVER (PARTITION BY p2) AS ds, LENGTH(STRING_AGG(s, ',') OVER (PARTITION BY p2)) AS sl,
        PERCENTILE_CONT(v, 0.37) OVER (PARTITION BY p2) AS pc, PERCENTILE_DISC(s, 0.5) OVER (PARTITION BY p2) AS pd FROM ${from}`, 2],
      [`SELECT id, ROW_NUMBER() OVER (PARTITION BY sk ORDER BY v DESC, id) AS rn, SUM(v) OVER (PARTITION BY sk) AS t,
        FIRST_VALUE(s IGNORE NULLS) OVER (PARTITION BY sk ORDER BY v DESC, id) AS fv, MIN(s) OVER (PARTITION BY sk ORDER BY v DESC, id) AS mn FROM ${from}`, 1],
      [`SELECT id, ROW_NUMBER() OVER (PARTITION BY np ORDER BY hk, id) AS rn, AVG(v) OVER (PARTITION BY np ORDER BY hk, id ROWS 5 PRECEDING) AS av,
        COUNT(s) OVER (PARTITION BY np) AS c FROM ${from}`, 3],
    ] as const) {
      const windows = sortedWindowCounters.windows;
      const { free, tight } = await both(sql);
      expect(free.length).toBe(N);
      expect(sorted(tight), sql).toEqual(sorted(free));
      // Each partition past the share went through the sorted window on its own.
      expect(sortedWindowCounters.windows - windows, sql).toBe(big);
    }
    expect(memoryBudget.reserved).toBe(0);
  }, 300_000);

  it('accumulator calls over sliding frames (STRING_AGG, ARRAY_AGG, STRING MIN/MAX, NUMERIC SUM, LOGICAL_*, BIT_*) stream the sorted rows, one accumulator group per row', async () => {
    // k: peer groups of ~1,000 rows; s NULL every 50th row.
    const from = `(SELECT *, MOD(id, 7) AS dup FROM d.t WHERE id <= ${N / 2})`;
    for (const sql of [
      `SELECT id, STRING_AGG(s, ',') OVER (ORDER BY k, id ROWS BETWEEN 5 PRECEDING AND CURRENT ROW) AS sa,
        ARRAY_AGG(id) OVER (ORDER BY k, id ROWS BETWEEN 2 PRECEDING AND 3 FOLLOWING) AS aa, LOGICAL_AND(dup > 0) OVER (ORDER BY k, id ROWS BETWEEN 3 PRECEDING AND 1 PRECEDING) AS la,
        MIN(s) OVER (ORDER BY k, id ROWS BETWEEN CURRENT ROW AND 10 FOLLOWING) AS mn, MAX(s) OVER (ORDER BY k, id ROWS BETWEEN 4 FOLLOWING AND 6 FOLLOWING) AS mx,
        SUM(CAST(v AS NUMERIC)) OVER (ORDER BY k, id ROWS 20 PRECEDING) AS ns, ANY_VALUE(s) OVER (ORDER BY k, id ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) AS av,
        MIN(s) OVER (ORDER BY k, id ROWS BETWEEN UNBOUNDED PRECEDING AND 2 PRECEDING) AS m2,
        LOGICAL_OR(s IS NULL) OVER (ORDER BY k, id ROWS BETWEEN UNBOUNDED PRECEDING AND 5 FOLLOWING) AS lo,
        BIT_XOR(id) OVER (ORDER BY k, id ROWS BETWEEN 8 PRECEDING AND 8 FOLLOWING) AS bx, COUNTIF(s IS NULL) OVER (ORDER BY k, id ROWS BETWEEN 30 PRECEDING AND 30 FOLLOWING) AS ci FROM ${from}`,
      // NUMERIC / BIGNUMERIC SUM / AVG and INT64 sums, counts over sliding frames: running totals (rows subtracted as frames move on; restarted where they were let go).
      `SELECT id, SUM(nv) OVER (ORDER BY k, id ROWS BETWEEN 300 PRECEDING AND 200 FOLLOWING) AS ns, AVG(nv) OVER (ORDER BY k, id ROWS BETWEEN 50 FOLLOWING AND 90 FOLLOWING) AS na,
        SUM(CAST(nv AS BIGNUMERIC) * 1000000) OVER (ORDER BY hk RANGE BETWEEN 40 PRECEDING AND 3 PRECEDING) AS bs, AVG(CAST(nv AS BIGNUMERIC)) OVER (ORDER BY hk DESC RANGE BETWEEN 5 PRECEDING AND 5 FOLLOWING) AS ba,
        SUM(hk) OVER (ORDER BY k, id ROWS BETWEEN 1000 PRECEDING AND CURRENT ROW) AS hs, COUNT(s) OVER (ORDER BY k, id ROWS BETWEEN 500 PRECEDING AND 500 FOLLOWING) AS c
        FROM (SELECT *, IF(MOD(id, 50) = 0, NULL, CAST(hk AS NUMERIC) / 7) AS nv FROM ${from})`,
      `SELECT id, STRING_AGG(s, '|') OVER (ORDER BY hk RANGE BETWEEN 3 PRECEDING AND CURRENT ROW) AS sa, ARRAY_AGG(id) OVER (ORDER BY hk RANGE BETWEEN 2 PRECEDING AND 1 FOLLOWING) AS aa,
        MIN(s) OVER (ORDER BY hk RANGE BETWEEN CURRENT ROW AND CURRENT ROW) AS mp FROM ${from}`,
      `SELECT id, STRING_AGG(s, ',') OVER (PARTITION BY p2 ORDER BY k, id ROWS BETWEEN 5 PRECEDING AND CURRENT ROW) AS sa,
        MAX(s) OVER (PARTITION BY p2 ORDER BY k, id ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING) AS mx FROM (SELECT *, MOD(id, 2) AS p2 FROM d.t)`,
    ]) {
      const windows = sortedWindowCounters.windows;
      const { free, tight } = await both(sql);
      expect(free.length).toBe(sql.includes('p2') ? N : N / 2);
      expect(sorted(tight), sql).toEqual(sorted(free));
      expect(sortedWindowCounters.windows, sql).toBeGreaterThan(windows);
    }
    expect(memoryBudget.reserved).toBe(0);
  }, 300_000);

  it('frames ending at UNBOUNDED FOLLOWING short of the partition run mirrored over the sorted rows (keys flipped, ties reversed), other calls in a second pass', async () => {
    // k: ties of ~1,000 rows (ROWS frames over ties: the reverse of input order); nk: NULL keys; v multiples of 1/8, hk large (sums exact or not, equal bits either way).
    const from = `(SELECT *, IF(MOD(id, 37) = 0, NULL, hk) AS nk, MOD(id, 2) AS p2 FROM d.t WHERE id <= ${N / 2})`;
    for (const sql of [
      `SELECT id, SUM(v) OVER (ORDER BY k ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS s, COUNT(s) OVER (ORDER BY k ROWS BETWEEN 3 PRECEDING AND UNBOUNDED FOLLOWING) AS c,
        MIN(s) OVER (ORDER BY k ROWS BETWEEN 2 FOLLOWING AND UNBOUNDED FOLLOWING) AS mn, AVG(hk * 1.1) OVER (ORDER BY k ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS av,
        COUNT(*) OVER (ORDER BY k ROWS BETWEEN 5 FOLLOWING AND UNBOUNDED FOLLOWING) AS n, LOGICAL_OR(s IS NULL) OVER (ORDER BY k ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS lo FROM ${from}`,
      `SELECT id, SUM(v) OVER (ORDER BY nk RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS s, MAX(id) OVER (ORDER BY nk RANGE BETWEEN 10 FOLLOWING AND UNBOUNDED FOLLOWING) AS mx,
        ROW_NUMBER() OVER (ORDER BY k, id) AS rn, SUM(v) OVER (ORDER BY k, id) AS run, LAG(s) OVER (ORDER BY k, id) AS lg FROM ${from}`,
      `SELECT id, SUM(hk * 1.1) OVER (PARTITION BY p2 ORDER BY k DESC ROWS BETWEEN 1 PRECEDING AND UNBOUNDED FOLLOWING) AS s,
        COUNTIF(v > 50) OVER (PARTITION BY p2 ORDER BY k DESC RANGE BETWEEN 2 FOLLOWING AND UNBOUNDED FOLLOWING) AS ci FROM (SELECT *, MOD(id, 2) AS p2 FROM d.t)`,
    ]) {
      const windows = sortedWindowCounters.windows;
      const { free, tight } = await both(sql);
      expect(free.length).toBe(sql.includes('d.t)') ? N : N / 2);
      expect(sorted(tight), sql).toEqual(sorted(free));
      expect(sortedWindowCounters.windows, sql).toBeGreaterThan(windows);
    }
    expect(memoryBudget.reserved).toBe(0);
  }, 300_000);

  it('FIRST_VALUE / LAST_VALUE / ANY_VALUE over suffix frames run mirrored; value functions over the whole partition with an ORDER BY keep only their best rows as the input passes', async () => {
    // k: ties of ~2,000 rows (ties in input order, the mirror's reversed); ns: NULL on 2 rows in 3; nk: NULL keys.
    const from = `(SELECT *, IF(MOD(id, 3) = 0, s, NULL) AS ns, IF(MOD(id, 37) = 0, NULL, hk) AS nk, MOD(id, 2) AS p2 FROM d.t)`;
    const whole = 'ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING';
    for (const sql of [
      `SELECT id, FIRST_VALUE(s) OVER (ORDER BY k ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS f, LAST_VALUE(ns IGNORE NULLS) OVER (ORDER BY k ROWS BETWEEN 2 PRECEDING AND UNBOUNDED FOLLOWING) AS l,
        ANY_VALUE(ns) OVER (ORDER BY k ROWS BETWEEN 3 FOLLOWING AND UNBOUNDED FOLLOWING) AS a, FIRST_VALUE(ns IGNORE NULLS) OVER (ORDER BY k ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS fi,
        ROW_NUMBER() OVER (ORDER BY k, id) AS rn FROM ${from}`,
      `SELECT id, FIRST_VALUE(ns IGNORE NULLS) OVER (ORDER BY nk DESC RANGE BETWEEN 5 FOLLOWING AND UNBOUNDED FOLLOWING) AS f, LAST_VALUE(ns) OVER (ORDER BY nk DESC RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS l FROM ${from}`,
      `SELECT id, FIRST_VALUE(s) OVER (ORDER BY k DESC ${whole}) AS f, LAST_VALUE(ns IGNORE NULLS) OVER (ORDER BY s NULLS LAST ${whole}) AS l, NTH_VALUE(ns, 3 IGNORE NULLS) OVER (ORDER BY k ${whole}) AS nt,
        NTH_VALUE(id, 5) OVER (ORDER BY nk ${whole}) AS n5, ANY_VALUE(ns) OVER (ORDER BY hk RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS a, LAST_VALUE(id) OVER (ORDER BY k ${whole}) AS li,
        ROW_NUMBER() OVER (ORDER BY k, id) AS rn FROM ${from}`,
      // Only calls over the whole partition: no sort, the rows read twice.
      `SELECT id, LAST_VALUE(ns) OVER (ORDER BY k ${whole}) AS l, FIRST_VALUE(ns IGNORE NULLS) OVER (ORDER BY nk DESC ${whole}) AS f FROM ${from}`,
      // Two partitions each past the share (partitioned.ts streams each through the sorted window).
      `SELECT id, LAST_VALUE(s) OVER (PARTITION BY p2 ORDER BY k ${whole}) AS l, FIRST_VALUE(ns) OVER (PARTITION BY p2 ORDER BY k ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS f FROM ${from}`,
    ]) {
      const windows = sortedWindowCounters.windows;
      const { free, tight } = await both(sql);
      expect(free.length).toBe(N);
      expect(sorted(tight), sql).toEqual(sorted(free));
      expect(sortedWindowCounters.windows, sql).toBeGreaterThan(windows);
    }
    // Empty input: no rows either way.
    const { free, tight } = await both(`SELECT id, LAST_VALUE(ns) OVER (ORDER BY k ${whole}) AS l, FIRST_VALUE(s) OVER (ORDER BY k ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS f FROM ${from} WHERE id < 0`);
    expect(tight).toEqual(free);
    expect(memoryBudget.reserved).toBe(0);
  }, 300_000);

  it('calls with different ORDER BYs run one sorted pass per ORDER BY, ties in input order in every pass (the rows carry their input ordinal)', async () => {
    // k and s: ties of ~2,000 rows and NULL keys, numbered in input order in both runs whatever order the pass before left them in.
    const from = `(SELECT *, MOD(id, 2) AS p2 FROM d.t)`;
    for (const sql of [
      `SELECT id, ROW_NUMBER() OVER (ORDER BY k) AS a, SUM(v) OVER (ORDER BY hk DESC) AS b, RANK() OVER (ORDER BY s) AS c, LAG(id) OVER (ORDER BY k) AS d,
        SUM(v) OVER (ORDER BY k ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS e, STRING_AGG(s) OVER (ORDER BY s DESC ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS f,
        ANY_VALUE(s) OVER () AS g FROM ${from}`,
      // Two partitions each past the share: each streamed in passes.
      `SELECT id, ROW_NUMBER() OVER (PARTITION BY p2 ORDER BY k) AS a, LEAD(s, 2) OVER (PARTITION BY p2 ORDER BY s NULLS LAST) AS b FROM ${from}`,
    ]) {
      const windows = sortedWindowCounters.windows;
      const { free, tight } = await both(sql);
      expect(free.length).toBe(N);
      expect(sorted(tight), sql).toEqual(sorted(free));
      expect(sortedWindowCounters.windows, sql).toBeGreaterThan(windows + 1);
    }
    expect(memoryBudget.reserved).toBe(0);
  }, 300_000);

  it('ORDER BY without LIMIT sorts runs into spill files and merges them, ties in input order', async () => {
    for (const sql of [
      'SELECT id, v, s FROM d.t ORDER BY v DESC, s',
      'SELECT id, k, s FROM d.t ORDER BY s NULLS LAST, k DESC',
    ]) {
      const before = spillCounters.files;
      const { free, tight } = await both(sql);
      expect(free.length).toBe(N);
      // In order: rows with equal keys keep their input order in both runs.
      expect(tight).toEqual(free);
      expect(spillCounters.files).toBeGreaterThan(before + 1);
    }
    expect(memoryBudget.reserved).toBe(0);
  });

  it('ROW_NUMBER per partition with rn = 1 holds only the rows that can still pass', async () => {
    topNOptions.compactBytes = 256 << 10;
    try {
      const before = topNOptions.compactions;
      // Two ORDER BY keys: the general path (sort of what is held); one key: the streaming selector's.
      for (const sql of [
        'SELECT k, id, v FROM (SELECT k, id, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn FROM d.t) WHERE rn = 1',
        'SELECT k, id FROM (SELECT k, id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY id DESC) AS rn FROM d.t) WHERE rn <= 3',
      ]) {
        const { free, tight } = await both(sql);
        expect(sorted(tight)).toEqual(sorted(free));
      }
      expect(topNOptions.compactions).toBeGreaterThan(before + 4);
    } finally {
      topNOptions.compactBytes = saved.compactBytes;
    }
  });
});
