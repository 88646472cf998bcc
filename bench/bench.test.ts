// Bench smoke test: the SQL translation table, quick-mode scaling, result
// comparison, every shared case on DuckDB at quick size, and the runner end to
// end against a stand-in gateway (and the real one when dist/gateway.js
// exists). Asserts structure and correctness only, never timings.
import { describe, it, expect } from 'vitest';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { translateToDuckdb, splitTopLevel } from './lib/sql-translate.js';
import { scaleGenerateArrays, QUICK_MAX_ROWS } from './lib/quick-scale.js';
import { loadCases, quickCase, loadOverrides, loadPeerTable, repoRoot } from './lib/cases.js';
import { compareRows, hasTopLevelOrderBy, canonRestValue, isoMicros } from './lib/compare.js';
import { runCaseOnDuckdb } from './lib/duckdb-side.js';
import { runLockstep, type CaseSession } from './lib/case-session.js';
import { runBench, type RunOptions } from './lib/runner.js';
import { percentile } from './lib/stats.js';
import type { BenchResult, CaseResult, SideResult } from './lib/types.js';

const tr = (sql: string): string => translateToDuckdb(sql, 's').replace(/\s+/g, ' ').trim();

describe('GoogleSQL → DuckDB translation', () => {
  it('turns UNNEST(GENERATE_ARRAY) into an inclusive generate_series table', () => {
    expect(tr('SELECT id FROM UNNEST(GENERATE_ARRAY(1, 100000)) AS id'))
      .toBe('SELECT id FROM generate_series(1, 100000) AS _g1(id)');
    expect(tr('FROM UNNEST(GENERATE_ARRAY(1, 10)) AS n CROSS JOIN UNNEST(GENERATE_ARRAY(1, 2)) AS m'))
      .toBe('FROM generate_series(1, 10) AS _g1(n) CROSS JOIN generate_series(1, 2) AS _g2(m)');
    expect(tr('WHERE k IN (SELECT k FROM UNNEST(GENERATE_ARRAY(0, 9)) AS k)'))
      .toBe('WHERE k IN (SELECT k FROM generate_series(0, 9) AS _g1(k))');
  });
  it('turns UNNEST(array column) into a lateral unnest', () => {
    expect(tr('SELECT SUM(x) FROM {{ds}}.t, UNNEST(arr) AS x')).toBe('SELECT SUM(x) FROM s.t, unnest(arr) AS _u1(x)');
  });
  it('maps CAST target types', () => {
    expect(tr('CAST(id AS FLOAT64) / 7')).toBe('CAST(id AS DOUBLE) / 7');
    expect(tr("CONCAT('u', CAST(MOD(id, 3) AS STRING))")).toBe("CONCAT('u', CAST(MOD(id, 3) AS VARCHAR))");
    expect(tr('CAST(x AS INT64)')).toBe('CAST(x AS BIGINT)');
    expect(tr("SAFE_CAST('1' AS BOOL)")).toBe("TRY_CAST('1' AS BOOLEAN)");
  });
  it('rewrites IF, COUNTIF and SAFE_DIVIDE, also nested', () => {
    expect(tr("COUNT(DISTINCT IF(a = 'x', u, NULL))")).toBe("COUNT(DISTINCT (CASE WHEN a = 'x' THEN u ELSE NULL END))");
    expect(tr("COUNTIF(t = 'a' AND c = 'b')")).toBe("count_if(t = 'a' AND c = 'b')");
    expect(tr('SUM(IF(c = 1, IF(d, 1, 2), 0))')).toBe('SUM((CASE WHEN c = 1 THEN (CASE WHEN d THEN 1 ELSE 2 END) ELSE 0 END))');
    expect(tr('SAFE_DIVIDE(a, b)')).toBe('(CASE WHEN (b) = 0 THEN NULL ELSE (a) / (b) END)');
  });
  it('rewrites date/time arithmetic and UTC timestamp literals', () => {
    expect(tr("TIMESTAMP_ADD(TIMESTAMP '2024-03-01 10:00:00 UTC', INTERVAL MOD(id, 20) DAY)"))
      .toBe("(TIMESTAMP '2024-03-01 10:00:00' + INTERVAL (MOD(id, 20)) DAY)");
    expect(tr("DATE_ADD(DATE '2020-01-01', INTERVAL id DAY)")).toBe("CAST(DATE '2020-01-01' + INTERVAL (id) DAY AS DATE)");
    expect(tr('TIMESTAMP_SUB(ts, INTERVAL 2 HOUR)')).toBe('(ts - INTERVAL (2) HOUR)');
    expect(tr("FORMAT_DATE('%Y', d)")).toBe("strftime(d, '%Y')");
  });
  it('leaves string literals, USING/IN/OVER lists and unknown functions alone', () => {
    expect(tr("SELECT 'IF(a, b, c)' AS s, STARTS_WITH(name, 'user_1')")).toBe("SELECT 'IF(a, b, c)' AS s, STARTS_WITH(name, 'user_1')");
    expect(tr('JOIN {{ds}}.b USING (k)')).toBe('JOIN s.b USING (k)');
    expect(tr('ROW_NUMBER() OVER (PARTITION BY k ORDER BY id)')).toBe('ROW_NUMBER() OVER (PARTITION BY k ORDER BY id)');
    expect(tr('SELECT `my col` FROM `{{ds}}.t`')).toBe('SELECT "my col" FROM "s.t"');
  });
  it('splits arguments at top-level commas only', () => {
    expect(splitTopLevel("a, f(b, c), [1, 2], 'x,y'")).toEqual(['a', ' f(b, c)', ' [1, 2]', " 'x,y'"]);
    expect(splitTopLevel('')).toEqual([]);
  });
  it('reports a shape it cannot translate', () => {
    expect(() => translateToDuckdb('TIMESTAMP_ADD(ts, 5)', 's')).toThrow(/interval/);
  });
});

describe('--quick scaling', () => {
  it('shrinks one range to the row cap and keeps its start', () => {
    expect(scaleGenerateArrays('UNNEST(GENERATE_ARRAY(1, 100000)) AS id')).toBe(`UNNEST(GENERATE_ARRAY(1, ${QUICK_MAX_ROWS})) AS id`);
    expect(scaleGenerateArrays('UNNEST(GENERATE_ARRAY(0, 9999)) AS id')).toBe('UNNEST(GENERATE_ARRAY(0, 1999)) AS id');
  });
  it('shrinks the largest range of a cross join so the product fits', () => {
    const out = scaleGenerateArrays('UNNEST(GENERATE_ARRAY(1, 1000000)) AS n CROSS JOIN UNNEST(GENERATE_ARRAY(1, 2)) AS m');
    expect(out).toBe('UNNEST(GENERATE_ARRAY(1, 1000)) AS n CROSS JOIN UNNEST(GENERATE_ARRAY(1, 2)) AS m');
  });
  it('leaves small ranges and other SQL untouched', () => {
    expect(scaleGenerateArrays('UNNEST(GENERATE_ARRAY(0, 9)) AS k')).toBe('UNNEST(GENERATE_ARRAY(0, 9)) AS k');
    expect(scaleGenerateArrays('SELECT 1')).toBe('SELECT 1');
  });
  it('keeps every shared case at ≤ 2,000 rows per statement', () => {
    for (const c of loadCases().map(quickCase)) {
      for (const sql of [...c.setup, c.query]) {
        const sizes = [...sql.matchAll(/GENERATE_ARRAY\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)/gi)].map((m) => Number(m[2]) - Number(m[1]) + 1);
        expect(sizes.reduce((a, b) => a * b, 1), `${c.name}: ${sql}`).toBeLessThanOrEqual(QUICK_MAX_ROWS);
      }
      expect(c.iterations).toBe(2);
      expect(c.warmup).toBe(1);
    }
  });
});

describe('shared inputs', () => {
  it('finds all 23 cases and the peer p50 of each', () => {
    const cases = loadCases();
    expect(cases.length).toBe(23);
    const peers = loadPeerTable();
    for (const c of cases) expect(peers[c.name]?.peer, c.name).toBeGreaterThan(0);
    expect(peers['select_literal']).toEqual({ peer: 16.8, goSqlite: 59.6, realServiceExec: 167 });
    expect(peers['join_hash_2m']?.goSqlite).toBeNull();
  });
  it('filters cases by any of comma-separated substrings', () => {
    expect(loadCases('scan_100k, select').map((c) => c.name)).toEqual(['scan_100k', 'select_literal']);
  });
  it('reads the overrides file', () => {
    expect(typeof loadOverrides()).toBe('object');
  });
});

describe('result comparison', () => {
  it('compares numbers within 1e-9 relative and INT64 strings as numbers', () => {
    expect(compareRows([[1, 7149999.999999999]], [[1, 7150000.000000001]], true).equal).toBe(true);
    expect(compareRows([[1, 7149999.99]], [[1, 7150000]], true).equal).toBe(false);
    expect(canonRestValue({ name: 'n', type: 'INTEGER' }, '42')).toBe(42);
  });
  it('is order-insensitive only without a top-level ORDER BY', () => {
    expect(hasTopLevelOrderBy('SELECT k FROM (SELECT ROW_NUMBER() OVER (ORDER BY id) rn FROM t)')).toBe(false);
    expect(hasTopLevelOrderBy('SELECT k FROM t ORDER BY k')).toBe(true);
    expect(compareRows([[1], [2]], [[2], [1]], false).equal).toBe(true);
    expect(compareRows([[1], [2]], [[2], [1]], true).equal).toBe(false);
    expect(compareRows([[1]], [[1], [2]], false).detail).toMatch(/row count/);
  });
  it('reads TIMESTAMP as epoch µs from both sides', () => {
    const micros = isoMicros('2024-03-01 10:00:00');
    expect(canonRestValue({ name: 't', type: 'TIMESTAMP' }, String(micros))).toBe(micros);
    expect(canonRestValue({ name: 't', type: 'TIMESTAMP' }, '1.7092872E9')).toBe(1709287200000000);
    expect(micros).toBe(1709287200000000);
  });
  it('interpolates percentiles', () => {
    expect(percentile([1, 2, 3, 4], 50)).toBe(2.5);
    expect(percentile([5], 95)).toBe(5);
  });
});

describe('lockstep timing of the two sides', () => {
  /** A side whose runs take `ms` (fake clock) and log their order; `failAt` throws on that run. */
  function fakeSide(name: string, ms: number, log: string[], failAt = -1): CaseSession & { closed: number } {
    let runs = 0;
    const side = {
      setupMs: 1,
      sql: { setup: [], query: name },
      closed: 0,
      async run() {
        log.push(`${name}${runs}`);
        if (runs++ === failAt) throw new Error(`${name} broke`);
        return ms;
      },
      lastRows: () => [[name]],
      async close() {
        side.closed++;
      },
    };
    return side;
  }

  it('alternates the sides run by run and times only the iterations', async () => {
    const log: string[] = [];
    const a = fakeSide('emu', 5, log);
    const b = fakeSide('duck', 2, log);
    const [ea, eb] = await runLockstep([{ session: a }, { session: b }], 1, 2);
    expect(log).toEqual(['emu0', 'duck0', 'emu1', 'duck1', 'emu2', 'duck2']);
    expect(ea!.result.samples).toEqual([5, 5]);
    expect(eb!.result.samples).toEqual([2, 2]);
    expect(ea!.rows).toEqual([['emu']]);
    expect([a.closed, b.closed]).toEqual([1, 1]);
  });

  it('gives quick cases more timed rounds, up to a total time or a count', async () => {
    const log: string[] = [];
    // 5 + 2 ms a round: rounds go on while the timed runs add up to under 30 ms (5 rounds: 35 ms).
    const [ea, eb] = await runLockstep([{ session: fakeSide('emu', 5, log) }, { session: fakeSide('duck', 2, log) }], 1, 2, { maxIterations: 10, untilMs: 30 });
    expect(ea!.result.samples).toEqual([5, 5, 5, 5, 5]);
    expect(eb!.result.samples).toEqual([2, 2, 2, 2, 2]);
    // Capped by the count; never fewer than `iterations`.
    const [fast] = await runLockstep([{ session: fakeSide('emu', 1, []) }], 0, 2, { maxIterations: 4, untilMs: 1000 });
    expect(fast!.result.samples).toHaveLength(4);
    const [slow] = await runLockstep([{ session: fakeSide('emu', 100, []) }], 0, 3, { maxIterations: 15, untilMs: 50 });
    expect(slow!.result.samples).toHaveLength(3);
  });

  it('drops a side that fails with its error and finishes the other', async () => {
    const log: string[] = [];
    const a = fakeSide('emu', 5, log, 2);
    const b = fakeSide('duck', 2, log);
    const failedSetup = { failed: { status: 'error' as const, error: 'setup: no' } };
    const [ea, eb, ec] = await runLockstep([{ session: a }, { session: b }, failedSetup], 1, 3);
    expect(log).toEqual(['emu0', 'duck0', 'emu1', 'duck1', 'emu2', 'duck2', 'duck3']);
    expect(ea!.result.status).toBe('error');
    expect(ea!.result.error).toBe('timed query: emu broke');
    expect(eb!.result.samples).toEqual([2, 2, 2]);
    expect(ec!.result).toEqual(failedSetup.failed);
    expect([a.closed, b.closed]).toEqual([1, 1]);
  });
});

describe('every shared case on DuckDB (quick sizes)', () => {
  const overrides = loadOverrides();
  for (const c of loadCases().map(quickCase)) {
    it(c.name, async () => {
      const out = await runCaseOnDuckdb(c, overrides[c.name]);
      expect(out.result.error).toBeUndefined();
      expect(out.result.status).toBe('ok');
      expect(out.result.samples?.length).toBe(c.iterations);
    });
  }
});

function expectWellFormedSide(s: SideResult): void {
  expect(['ok', 'error', 'skipped']).toContain(s.status);
  if (s.status === 'ok') {
    expect(s.latency?.n).toBeGreaterThan(0);
    expect(Number.isFinite(s.latency?.p50)).toBe(true);
  }
  if (s.status === 'error') expect(typeof s.error === 'string' && s.error.length > 0).toBe(true);
}

function expectWellFormed(r: BenchResult, caseCount: number): void {
  expect(r.cases.length).toBe(caseCount);
  expect(r.summary.cases).toBe(caseCount);
  for (const c of r.cases) {
    expect(typeof c.name).toBe('string');
    expectWellFormedSide(c.emulator);
    expectWellFormedSide(c.duckdb);
    expect(['equal', 'different', 'n/a']).toContain(c.match.status);
  }
  expect(JSON.parse(JSON.stringify(r))).toBeTruthy();
}

const quickOptions = (over: Partial<RunOptions>): RunOptions => ({
  quick: true, caseFilter: null, url: null, duckdb: true, extra: false, outDir: null,
  projectId: 'bench-test', requestTimeoutMs: 5_000, budgetMs: 30_000, log: () => {}, ...over,
});

describe('runner end to end (quick)', () => {
  const caseCount = loadCases().length;

  it('against the stand-in gateway: every case runs and matches DuckDB', async () => {
    const r = await runBench(quickOptions({
      extra: true,
      gateway: { script: path.join(repoRoot, 'bench', 'testing', 'fake-gateway.ts'), nodeArgs: ['--import', 'tsx'] },
    }));
    expectWellFormed(r, caseCount);
    expect(r.emulator.status).toBe('ok');
    const bad = r.cases.filter((c: CaseResult) => c.emulator.status !== 'ok' || c.match.status === 'different');
    expect(bad.map((c) => `${c.name}: ${c.emulator.error ?? c.match.detail}`)).toEqual([]);
    // LIMIT 1000 over 2,000 rows spans two of the stand-in's 500-row pages.
    expect(r.cases.find((c) => c.name === 'order_by_100k')?.emulator.pages).toBe(2);
    const x = r.extra!;
    for (const [name, m] of Object.entries(x)) expect(m.status, `${name}: ${JSON.stringify(m)}`).toBe('ok');
    if (x.idleRss.status === 'ok') expect(x.idleRss.engineMB).toBeGreaterThan(0);
    if (x.insertAll.status === 'ok') {
      const runs = x.insertAll.sequentialRuns!;
      expect(runs).toHaveLength(3);
      expect(x.insertAll.sequentialRowsPerSec).toBe([...runs].sort((a, b) => a - b)[1]);
    }
  }, 60_000);

  it('survives a gateway that hangs one query, freezes, and crashes', async () => {
    process.env['FAKE_GATEWAY_HANG_ON'] = '_filter_100k.';
    process.env['FAKE_GATEWAY_FREEZE_ON'] = '_order_by_100k.';
    process.env['FAKE_GATEWAY_CRASH_ON'] = '_scan_100k.';
    try {
      const r = await runBench(quickOptions({
        caseFilter: 'filter_100k,order_by_100k,scan_100k,view_agg_100k', duckdb: false, requestTimeoutMs: 1_500,
        gateway: { script: path.join(repoRoot, 'bench', 'testing', 'fake-gateway.ts'), nodeArgs: ['--import', 'tsx'] },
      }));
      expectWellFormed(r, 4);
      const byName = new Map(r.cases.map((c) => [c.name, c]));
      // One hung request: an error for that case, the emulator stays.
      expect(byName.get('filter_100k')?.emulator.error).toMatch(/no answer within|did not finish/);
      // A frozen process is stopped and replaced; a crashed one is restarted.
      expect(byName.get('order_by_100k')?.emulator.status).toBe('error');
      expect(byName.get('scan_100k')?.emulator.status).toBe('error');
      expect(r.emulator.restarts).toEqual([
        expect.stringMatching(/unresponsive.*after order_by_100k/),
        expect.stringMatching(/exited with code 3 before view_agg_100k/),
      ]);
      expect(byName.get('view_agg_100k')?.emulator.status).toBe('ok');
    } finally {
      delete process.env['FAKE_GATEWAY_HANG_ON'];
      delete process.env['FAKE_GATEWAY_FREEZE_ON'];
      delete process.env['FAKE_GATEWAY_CRASH_ON'];
    }
  }, 60_000);

  it.skipIf(!existsSync(path.join(repoRoot, 'dist', 'gateway.js')))(
    'against dist/gateway.js: completes with a well-formed result per case',
    async () => {
      // The budget keeps this bounded on a busy machine; cases past it are reported as not run, still well-formed.
      const r = await runBench(quickOptions({ duckdb: false, budgetMs: 15_000 }));
      expectWellFormed(r, caseCount);
    },
    60_000,
  );
});
