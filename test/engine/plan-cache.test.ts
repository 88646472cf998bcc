// The plan cache (src/engine/plan-cache.ts): a repeated single SELECT runs
// from its cached plan, and answers exactly as the uncached pipeline does
// after catalog changes, with the clock moving, and for statements that
// must never be cached.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { planCacheHits, runCached } from '../../src/engine/plan-cache.js';
import type { QueryContext, QueryResult } from '../../src/planner/api.js';
import { runQuery } from '../../src/planner/run.js';
import { Storage } from '../../src/storage/store.js';
import { T, type SqlType } from '../../src/types/types.js';
import { getValue } from '../../src/types/vector.js';
import { Decimal, type Value } from '../../src/types/values.js';

let dir: string;
let st: Storage;
let catalog: EngineCatalog;
const NOW = 1_790_000_000_000_000n; // 2026-09-21T13:33:20Z

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plan-cache-'));
  st = await Storage.open(dir, {});
  catalog = new EngineCatalog(st);
  await exec('CREATE SCHEMA d');
  await exec('CREATE TABLE d.t AS SELECT id, MOD(id, 3) AS k FROM UNNEST(GENERATE_ARRAY(1, 9)) AS id');
});
afterAll(async () => {
  await st.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function ctxOf(sql: string, o: Partial<QueryContext> = {}): QueryContext {
  return {
    sql,
    projectId: 'p',
    params: { named: new Map(), positional: [] },
    catalog,
    jobId: `job_${Math.random().toString(36).slice(2)}`,
    signal: new AbortController().signal,
    dryRun: false,
    nowMicros: NOW,
    sessionUser: 'me@example.com',
    ...o,
  };
}

/** The engine's path: the plan cache, else runQuery. */
async function exec(sql: string, o: Partial<QueryContext> = {}): Promise<QueryResult> {
  const ctx = ctxOf(sql, o);
  return (await runCached(ctx, catalog)) ?? (await runQuery(ctx));
}

function rows(r: QueryResult): Value[][] {
  const out: Value[][] = [];
  for (const b of r.batches) for (let i = 0; i < b.length; i++) out.push(b.columns.map((c) => getValue(c, i)));
  return out;
}

async function errorOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  return '(no error)';
}

/** Runs `sql` through the engine's path `times` times, each answer compared with uncached runQuery's; returns the cache hits it made. */
async function repeat(sql: string, times = 4, o: Partial<QueryContext> = {}): Promise<number> {
  const before = planCacheHits(catalog);
  for (let i = 0; i < times; i++) {
    const got = await exec(sql, o);
    const want = await runQuery(ctxOf(sql, o));
    expect(got.columns).toEqual(want.columns);
    expect(rows(got)).toEqual(rows(want));
    expect(got.statementType).toBe(want.statementType);
    expect(got.totalBytesProcessed).toBe(want.totalBytesProcessed);
  }
  return planCacheHits(catalog) - before;
}

describe('plan cache', () => {
  it('plans a repeated SELECT the second time and reuses the plan after, with the same answer', async () => {
    expect(await repeat('SELECT 1 AS one')).toBe(3);
    expect(await repeat('SELECT k, COUNT(*) AS c, SUM(id) AS s FROM d.t GROUP BY k ORDER BY k')).toBe(3);
  });

  it('keys on the default dataset, project and time zone', async () => {
    await exec('CREATE SCHEMA e');
    await exec('CREATE TABLE e.t AS SELECT 100 AS id, 1 AS k');
    const sql = 'SELECT SUM(id) AS s FROM t';
    for (let i = 0; i < 3; i++) {
      expect(rows(await exec(sql, { defaultDataset: { projectId: 'p', datasetId: 'd' } }))).toEqual([[45n]]);
      expect(rows(await exec(sql, { defaultDataset: { projectId: 'p', datasetId: 'e' } }))).toEqual([[100n]]);
    }
    const zoned = "SELECT CAST(TIMESTAMP '2024-01-01 00:00:00' AS STRING) AS s, @@time_zone AS z";
    for (let i = 0; i < 3; i++) {
      expect(rows(await exec(zoned, { timeZone: 'America/New_York' }))).toEqual([['2024-01-01 00:00:00-05', 'America/New_York']]);
      expect(rows(await exec(zoned))).toEqual([['2024-01-01 00:00:00+00', 'UTC']]);
    }
    for (let i = 0; i < 3; i++) expect(rows(await exec('SELECT @@project_id AS p', { projectId: `p${i % 2}` }))).toEqual([[`p${i % 2}`]]);
  });

  it('sees new rows, and bills the new row count', async () => {
    const sql = 'SELECT COUNT(*) AS n FROM d.t';
    expect(await repeat(sql, 3)).toBe(2);
    await exec('INSERT INTO d.t VALUES (10, 1)');
    const r = await exec(sql);
    expect(rows(r)).toEqual([[10n]]);
    expect(r.totalBytesProcessed).toBe((await runQuery(ctxOf(sql))).totalBytesProcessed);
    await exec('DELETE FROM d.t WHERE id = 10');
    expect(rows(await exec(sql))).toEqual([[9n]]);
  });

  it('follows schema changes, dropped and recreated tables', async () => {
    await exec('CREATE TABLE d.s AS SELECT 1 AS a');
    const sql = 'SELECT * FROM d.s';
    expect(await repeat(sql, 3)).toBe(2);
    await exec('ALTER TABLE d.s ADD COLUMN b STRING');
    expect((await exec(sql)).columns!.map((c) => c.name)).toEqual(['a', 'b']);
    await exec('DROP TABLE d.s');
    const dropped = await errorOf(exec(sql));
    expect(dropped).toMatch(/not found/i);
    expect(dropped).toBe(await errorOf(runQuery(ctxOf(sql))));
    await exec("CREATE TABLE d.s AS SELECT 'x' AS c");
    expect(rows(await exec(sql))).toEqual([['x']]);
    expect(await repeat(sql, 3)).toBeGreaterThan(0);
  });

  it('follows a redefined view and a replaced SQL function', async () => {
    await exec('CREATE VIEW d.v AS SELECT 1 AS x');
    await exec('CREATE FUNCTION d.f(x INT64) AS (x + 1)');
    const sql = 'SELECT x, d.f(x) AS y FROM d.v';
    expect(await repeat(sql, 3)).toBe(2);
    expect(rows(await exec(sql))).toEqual([[1n, 2n]]);
    await exec('CREATE OR REPLACE VIEW d.v AS SELECT 5 AS x');
    expect(rows(await exec(sql))).toEqual([[5n, 6n]]);
    await exec('CREATE OR REPLACE FUNCTION d.f(x INT64) AS (x * 10)');
    expect(rows(await exec(sql))).toEqual([[5n, 50n]]);
  });

  it('applies a row-access policy created after the plan was cached', async () => {
    await exec('CREATE TABLE d.r AS SELECT id FROM UNNEST(GENERATE_ARRAY(1, 4)) AS id');
    const sql = 'SELECT COUNT(*) AS n FROM d.r';
    expect(await repeat(sql, 3)).toBe(2);
    await exec("CREATE ROW ACCESS POLICY p1 ON d.r GRANT TO ('user:me@example.com') FILTER USING (id > 2)");
    expect(rows(await exec(sql))).toEqual([[2n]]);
    await exec('DROP ALL ROW ACCESS POLICIES ON d.r');
    expect(rows(await exec(sql))).toEqual([[4n]]);
  });

  it('refuses a query without the partition filter once the table requires one', async () => {
    await exec('CREATE TABLE d.pt (day DATE, n INT64) PARTITION BY day');
    const sql = 'SELECT COUNT(*) AS n FROM d.pt';
    expect(await repeat(sql, 3)).toBe(2);
    await exec('ALTER TABLE d.pt SET OPTIONS (require_partition_filter = true)');
    expect(await errorOf(exec(sql))).toMatch(/without a filter over column\(s\) 'day'/);
  });

  it('never reuses a plan that read the clock or the random source', async () => {
    const before = planCacheHits(catalog);
    const sql = "SELECT CURRENT_TIMESTAMP() > TIMESTAMP '2027-06-01' AS later, CURRENT_DATE() AS today";
    for (let i = 0; i < 3; i++) expect(rows(await exec(sql))).toEqual([[false, 20717]]);
    const yearOn = NOW + 365n * 86_400_000_000n;
    expect(rows(await exec(sql, { nowMicros: yearOn }))).toEqual([[true, 21082]]);
    const r = 'SELECT RAND() AS r';
    const seen = new Set<Value>();
    for (let i = 0; i < 4; i++) seen.add(rows(await exec(r))[0]![0]!);
    expect(seen.size).toBe(4);
    expect(planCacheHits(catalog) - before).toBe(3); // RAND() runs per execution: its plan is reusable
  });

  it('never reuses a time-travel plan: its window check reads the statement clock', async () => {
    const now = BigInt(Date.now()) * 1000n;
    const sql = `SELECT COUNT(*) AS n FROM d.t FOR SYSTEM_TIME AS OF TIMESTAMP_MICROS(${now})`;
    const before = planCacheHits(catalog);
    for (let i = 0; i < 3; i++) expect(rows(await exec(sql, { nowMicros: now }))).toEqual([[9n]]);
    expect(planCacheHits(catalog)).toBe(before);
    expect(await errorOf(exec(sql, { nowMicros: now + 8n * 86_400_000_000n }))).toMatch(/Invalid snapshot time/);
  });

  it('keys on parameter names, types and values', async () => {
    const named = (n: string, t: SqlType, v: Value): Partial<QueryContext> => ({ params: { named: new Map([[n, { type: t, value: v }]]), positional: [] } });
    const sql = 'SELECT @x AS v, @x IS NULL AS isnull, IS_NAN(CAST(@x AS FLOAT64)) AS nan';
    const cases: [SqlType, Value][] = [
      [T.FLOAT64, NaN],
      [T.FLOAT64, null],
      [T.FLOAT64, 0],
      [T.FLOAT64, -0],
      [T.INT64, 0n],
      [T.STRING, '0'],
      [T.NUMERIC, new Decimal('1.5')],
      [T.NUMERIC, new Decimal('-1.5')],
    ];
    const before = planCacheHits(catalog);
    for (let round = 0; round < 3; round++) {
      for (const [t, v] of cases) {
        const got = await exec(sql, named('x', t, v));
        const want = await runQuery(ctxOf(sql, named('x', t, v)));
        expect(got.columns).toEqual(want.columns);
        expect(rows(got)).toEqual(rows(want));
      }
    }
    expect(planCacheHits(catalog) - before).toBe(2 * cases.length);
    // The same value under another name is another statement.
    expect(await errorOf(exec(sql, named('y', T.INT64, 1n)))).toMatch(/Query parameter 'x' not found/);
    const pos = (v: Value): Partial<QueryContext> => ({ params: { named: new Map(), positional: [{ type: T.INT64, value: v }] } });
    for (let i = 0; i < 4; i++) expect(rows(await exec('SELECT ? + 1 AS v', pos(BigInt(i))))).toEqual([[BigInt(i + 1)]]);
  });

  it('never caches dry-run, multi-statement or INFORMATION_SCHEMA queries', async () => {
    const before = planCacheHits(catalog);
    for (let i = 0; i < 3; i++) {
      await exec('SELECT 1 AS one', { dryRun: true });
      await exec('SELECT 1; SELECT 2');
      await exec('SELECT table_name FROM d.INFORMATION_SCHEMA.TABLES ORDER BY 1');
    }
    expect(planCacheHits(catalog)).toBe(before);
    await exec('CREATE TABLE d.zz (a INT64)');
    expect(rows(await exec('SELECT table_name FROM d.INFORMATION_SCHEMA.TABLES WHERE table_name = "zz"'))).toEqual([['zz']]);
  });

  it('reports analysis errors as the pipeline does, every time', async () => {
    const sql = 'SELECT nope FROM d.t';
    const want = await errorOf(runQuery(ctxOf(sql)));
    expect(want).toMatch(/Unrecognized name: nope/);
    for (let i = 0; i < 4; i++) expect(await errorOf(exec(sql))).toBe(want);
  });
});
