// Parallel execution (src/executor/parallel/) gives the serial answers: every
// query runs once with the worker pool off and once with it on, forced onto
// small inputs (no size threshold, morsels of 700 rows), and the REST rows
// must be identical, in order. Counters show which runs went parallel and
// which fell back to the serial path (and still answered the same).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parallelCounters, parallelOptions } from '../../src/executor/parallel/run.js';
import { setPoolSize } from '../../src/executor/parallel/pool.js';
import { errorMessage, openHarness, run, wireRows, type Harness } from './harness.js';

const P = 'par';
let h: Harness;
const q = (sql: string) => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });

/** REST rows of a query, or its error message. */
async function answer(sql: string): Promise<unknown> {
  try {
    return wireRows(await q(sql));
  } catch (e) {
    return { error: errorMessage(e) };
  }
}

const N = 40_000;
const defaultMinRows = parallelOptions.minRows;

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
  // FLOAT64 values are multiples of 1/8 (sums are exact in any order); NULLs, NaN and -0 among them.
  await q(`CREATE TABLE d.t AS
    SELECT x AS id, MOD(x, 17) AS k, IF(MOD(x, 11) = 0, NULL, MOD(x, 5)) AS k2,
      CASE WHEN MOD(x, 97) = 0 THEN NULL WHEN MOD(x, 89) = 0 THEN -0.0 ELSE (x - 7000) / 8 END AS v,
      IF(MOD(x, 13) = 0, NULL, CONCAT(IF(MOD(x, 3) = 0, 'É', 'e'), CAST(MOD(x, 23) AS STRING))) AS s,
      DATE_ADD(DATE '2020-01-01', INTERVAL MOD(x, 400) DAY) AS day,
      MOD(x, 7) = 0 AS b,
      CAST(x AS NUMERIC) / 4 AS n,
      IF(x <= 20000, 4611686018427387904, -4611686018427387904) AS big
    FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS x`);
  // Row-level changes: deleted positions inside the file's row groups, changed rows appended after them.
  await q('DELETE FROM d.t WHERE MOD(id, 1000) = 7');
  await q("UPDATE d.t SET s = 'upd', v = 0.5 WHERE MOD(id, 4000) = 11");
  // Join build sides: one held in memory (a small CTAS stays in the WAL), one in a file.
  await q(`CREATE TABLE d.dim AS SELECT x AS dk, CONCAT('g', CAST(MOD(x, 7) AS STRING)) AS g, x * 2 AS w FROM UNNEST(GENERATE_ARRAY(0, 499)) AS x`);
  await q(`CREATE TABLE d.big_dim AS SELECT x AS dk, MOD(x, 3) AS g3 FROM UNNEST(GENERATE_ARRAY(0, 29999)) AS x`);
  await q(`CREATE TABLE d.nan AS SELECT x AS id, IF(x = 1500, CAST('NaN' AS FLOAT64), x) AS f FROM UNNEST(GENERATE_ARRAY(1, 3000)) AS x`);
  // Rows appended after the table's file: held in memory (WAL), read on the main thread between the file's morsels.
  await q(`INSERT d.t (id, k, k2, v, s, day, b, n, big) SELECT x, MOD(x, 17), NULL, x / 4, 'tail', DATE '2021-06-01', TRUE, NUMERIC '1.5', 1 FROM UNNEST(GENERATE_ARRAY(${N + 1}, ${N + 50})) AS x`);
}, 120_000);

afterAll(async () => {
  setPoolSize(0);
  parallelOptions.minRows = defaultMinRows;
  parallelOptions.morselRows = 0;
  await h?.close();
});

/** Queries that go parallel; each must answer as the serial run does. */
const PARALLEL = [
  'SELECT k, COUNT(*), COUNT(k2), COUNT(v), SUM(id), SUM(v), AVG(id), AVG(v), MIN(s), MAX(s), MIN(day), MAX(day), COUNTIF(b), LOGICAL_AND(b), LOGICAL_OR(id > 39000), BIT_XOR(id), BIT_OR(k2), MIN(v), MAX(v) FROM d.t GROUP BY k',
  'SELECT k2, s IS NULL AS ns, COUNT(*), SUM(k) FROM d.t GROUP BY k2, ns ORDER BY k2, ns',
  'SELECT COUNT(*), SUM(v), AVG(v), MIN(id), MAX(n) FROM d.t',
  "SELECT COUNT(*) FROM d.t WHERE REGEXP_CONTAINS(LOWER(s), r'^é1[0-9]$')",
  'SELECT LOWER(s) AS ls, COUNT(*) AS c, AVG(k) FROM d.t WHERE id BETWEEN 3000 AND 15000 AND b GROUP BY ls HAVING c > 10 ORDER BY c DESC, ls',
  "SELECT DATE_TRUNC(day, MONTH) AS m, COUNT(*) FROM d.t WHERE n > NUMERIC '1000.25' AND day < CURRENT_DATE() GROUP BY m ORDER BY m LIMIT 5",
  // No row passes (and no row group can be skipped by statistics).
  'SELECT COUNT(*), SUM(id), AVG(v) FROM d.t WHERE id * 2 < 0',
  'SELECT k, SUM(id) FROM d.t WHERE id * 2 < 0 GROUP BY k',
  'SELECT MIN(f), MAX(f), SUM(f), COUNT(f) FROM d.nan',
  // Hash joins: the morsel table probes, the other side is read whole by every worker.
  'SELECT dim.g, COUNT(*), SUM(t.v), MAX(dim.w) FROM d.t JOIN d.dim ON dim.dk = MOD(t.id, 500) GROUP BY dim.g',
  'SELECT bd.g3, t.k, COUNT(*), AVG(t.id) FROM d.t JOIN d.big_dim AS bd ON bd.dk = t.id GROUP BY bd.g3, t.k',
  'SELECT COUNT(*), COUNT(dim.g), SUM(dim.w) FROM d.t LEFT JOIN d.dim ON dim.dk = t.k2 * 100 + t.k',
  'SELECT k, COUNT(*) FROM d.t WHERE k2 IN (SELECT dk FROM d.dim WHERE g = "g1") GROUP BY k',
  'SELECT dim.g, COUNT(*) FROM d.dim JOIN d.t ON dim.dk = t.id WHERE t.b GROUP BY dim.g',
  'SELECT t.id, dim.g, t.v FROM d.t JOIN d.dim ON dim.dk = MOD(t.id, 500) WHERE dim.w > 10 ORDER BY t.v DESC, t.id LIMIT 9',
  'SELECT id, v FROM d.t ORDER BY v * 2 DESC, id LIMIT 7',
  // Ties across morsels: the serial (stable) order decides which rows make it.
  'SELECT id, k FROM d.t WHERE id > 0 ORDER BY k LIMIT 50',
  'SELECT id, k2 FROM d.t WHERE b IS NOT NULL ORDER BY k2 DESC LIMIT 30',
  'SELECT s, id FROM d.t ORDER BY LOWER(s) NULLS LAST, id DESC LIMIT 40',
  'SELECT k, v FROM d.t WHERE v IS NULL OR v = 0 ORDER BY k LIMIT 25',
  'SELECT id + 1 AS i, s FROM d.t WHERE k = 3 ORDER BY day DESC, s LIMIT 3',
];

/** Queries that start in parallel and fall back to the serial path, which answers (or fails) as serial execution does. */
const FALLBACK = [
  // A row raises an error: the serial run raises it, with its message.
  'SELECT k, SUM(100 / (id - 32345)) FROM d.t GROUP BY k',
  // Partial sums overflow INT64 where the whole sum does not (2^62 per row, then -2^62 per row).
  'SELECT SUM(big) FROM d.t',
  // Nearly every key distinct: splitting does not reduce the rows to merge.
  'SELECT id, COUNT(*) FROM d.t GROUP BY id ORDER BY id DESC LIMIT 5',
];

/** Plans a worker cannot run: serial, never started in parallel. */
const SERIAL = [
  'SELECT k, COUNT(DISTINCT s) FROM d.t GROUP BY k ORDER BY k',
  'SELECT SUM(n), AVG(n) FROM d.t',
  'SELECT COUNT(*) FROM d.t WHERE RAND() < 2',
  // Nothing per row but the comparison: the serial top-N's threshold beats splitting.
  'SELECT id, v FROM d.t ORDER BY v DESC, id LIMIT 7',
];

describe('parallel execution answers as serial execution', () => {
  const serial = new Map<string, unknown>();

  it('serial answers', async () => {
    setPoolSize(0);
    for (const sql of [...PARALLEL, ...FALLBACK, ...SERIAL]) serial.set(sql, await answer(sql));
    for (const sql of [...PARALLEL, ...SERIAL]) expect(serial.get(sql), sql).not.toHaveProperty('error');
    expect(serial.get(FALLBACK[0]!)).toEqual({ error: expect.stringMatching(/division by zero/) });
    expect(JSON.stringify(serial.get(FALLBACK[1]!))).toContain('"50"');
  });

  it('every morsel-driven pipeline, in parallel', async () => {
    setPoolSize(2);
    parallelOptions.minRows = 0;
    parallelOptions.morselRows = 700;
    for (const sql of PARALLEL) {
      const before = { ...parallelCounters };
      expect(await answer(sql), sql).toEqual(serial.get(sql));
      expect(parallelCounters.runs - before.runs, sql).toBeGreaterThan(0);
      expect(parallelCounters.fallbacks - before.fallbacks, sql).toBe(0);
    }
  });

  it('fallbacks and serial-only plans', async () => {
    for (const sql of FALLBACK) {
      const before = { ...parallelCounters };
      expect(await answer(sql), sql).toEqual(serial.get(sql));
      expect(parallelCounters.fallbacks - before.fallbacks, sql).toBe(1);
    }
    for (const sql of SERIAL) {
      const before = parallelCounters.runs;
      expect(await answer(sql), sql).toEqual(serial.get(sql));
      expect(parallelCounters.runs - before, sql).toBe(0);
    }
  });

  it('inputs under the threshold stay serial', async () => {
    parallelOptions.minRows = 1_000_000;
    const before = parallelCounters.runs;
    expect(await answer(PARALLEL[0]!)).toEqual(serial.get(PARALLEL[0]!));
    expect(parallelCounters.runs).toBe(before);
    parallelOptions.minRows = 0;
  });
});
