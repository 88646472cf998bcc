// A correlated subquery runs once per distinct binding of the outer columns
// it reads (cached for the statement), so `t.k` in its body must bind k
// alone, not every column of t: with unique ids beside 10 values of k, 10
// runs, not one per row (the outer query reads every column of t).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subqueryCounters } from '../../src/executor/expr.js';
import { openHarness, run, wireRows, type Harness } from './harness.js';

let h: Harness;
const q = async (sql: string): Promise<unknown[]> => wireRows(await run(h, sql, { projectId: 'p', defaultDataset: { projectId: 'p', datasetId: 'd' } }));
/** The first row's cells as the REST API's strings. */
const first = (rows: unknown[]): string[] => (rows[0] as { f: { v: string }[] }).f.map((c) => c.v);

beforeAll(async () => {
  h = await openHarness();
  await h.catalog.createDataset('p', 'd', { location: 'US' }, true);
  await q('CREATE TABLE d.t AS SELECT id, MOD(id, 10) AS k, MOD(id, 10) AS g, STRUCT(MOD(id, 5) AS a) AS st FROM UNNEST(GENERATE_ARRAY(1, 1000)) AS id');
  await q('CREATE TABLE d.dim AS SELECT k, k * 2 AS w FROM UNNEST(GENERATE_ARRAY(0, 9)) AS k');
});
afterAll(async () => h?.close());

async function runs(sql: string): Promise<{ rows: unknown[]; runs: number }> {
  const before = subqueryCounters.runs;
  const rows = await q(sql);
  return { rows, runs: subqueryCounters.runs - before };
}

describe('correlated subqueries bind only the outer columns they read', () => {
  it('alias.column binds that column', async () => {
    // (MAX(w) + 0: an expression over the aggregate stays a subquery; see the next test.)
    const r = await runs('SELECT SUM((SELECT MAX(w) + 0 FROM d.dim WHERE dim.k = t.k)) AS s FROM d.t WHERE id > 0 AND st.a >= 0');
    expect(first(r.rows)).toEqual(['9000']);
    expect(r.runs).toBe(10);
  });

  it('a scalar aggregate correlated by equality runs as a join: no subquery runs at all', async () => {
    const r = await runs('SELECT SUM((SELECT MAX(w) FROM d.dim WHERE dim.k = t.k)) AS s, SUM((SELECT COUNT(*) FROM d.dim WHERE dim.k = t.k AND dim.w > 10)) AS n FROM d.t WHERE id > 0');
    // w = 2k > 10 for k 6..9: 4 keys x 100 rows.
    expect(first(r.rows)).toEqual(['9000', '400']);
    expect(r.runs).toBe(0);
  });

  it('an unqualified column binds that column; EXISTS and ARRAY alike', async () => {
    const r = await runs('SELECT COUNTIF(EXISTS (SELECT 1 FROM d.dim WHERE dim.w = g)) AS n, SUM(ARRAY_LENGTH(ARRAY(SELECT w FROM d.dim WHERE dim.k < t.k))) AS a FROM d.t WHERE id > 0');
    // g in 0..9 equals some w = 2k when even: 500 rows; ARRAY lengths k each, 100 rows per k.
    expect(first(r.rows)).toEqual(['500', String(100 * 45)]);
    expect(r.runs).toBe(20);
  });

  it('alias.column.field binds the column', async () => {
    const r = await runs('SELECT SUM((SELECT w FROM d.dim WHERE dim.k = t.st.a)) AS s FROM d.t WHERE id > 0 AND k >= 0');
    expect(first(r.rows)).toEqual([String(200 * (0 + 2 + 4 + 6 + 8))]);
    expect(r.runs).toBe(5);
  });

  it('the range variable as a value binds every column', async () => {
    const r = await runs('SELECT COUNT(*) AS n FROM d.t WHERE (SELECT t.id > 500) ');
    expect(first(r.rows)).toEqual(['500']);
    const whole = await runs('SELECT COUNTIF((SELECT TO_JSON_STRING(t) IS NOT NULL)) AS n FROM d.t');
    expect(first(whole.rows)).toEqual(['1000']);
    expect(whole.runs).toBe(1000);
  });
});
