// The engine under a small --memory-limit, over a table several times larger
// than it, right after a restart (the chunk cache starts empty): a
// high-cardinality GROUP BY, COUNT(DISTINCT) of that key, a window over every
// row by PARTITION BY and an ORDER BY .. LIMIT answer exactly (values known
// by construction), with the emulator's resident set (gateway + engine and its
// worker threads) sampled throughout and held to the limit plus the overhead
// src/storage/README.md documents ("One memory budget"). The operators'
// state is larger than the limit too, so they spill: the engine makes its
// spill directory on the first spill (the in-process counters are asserted
// in test/sql/memory.test.ts).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { enginePid, queryRows, startEmulator, type Emulator } from '../helpers/emulator.js';

const dataDir = mkdtempSync(join(tmpdir(), 'wh-memlimit-'));
let emu: Emulator | undefined;
afterAll(async () => {
  await emu?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const N = 3_000_000;
const LIMIT_MB = 24;
/** What the emulator holds beyond the budget: its idle resident set (code, V8 heaps: ~140 MB), the execution workers' (~35 MB each) and transient buffers (src/storage/README.md). Measured: ~290 MB at N = 3M; without a limit the window alone took ~535 MB. */
const OVERHEAD_MB = 320;

function rssMB(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The first row of a query's answer. */
const query = async (e: Emulator, sql: string): Promise<string[]> => ((await queryRows(e, 'mem', sql, { timeoutMs: 240_000 }))[0] ?? []) as string[];

describe('the engine within --memory-limit', () => {
  it('answers over a table several times the limit with the resident set at the limit plus a bounded overhead', async () => {
    const args = ['--project-id', 'mem', '--memory-limit', `${LIMIT_MB}MB`];
    emu = await startEmulator({ dataDir, args });
    await query(emu, 'CREATE SCHEMA d');
    // hk: x * 7919 mod 1M visits every residue (7919 is prime to 10): each of the N/2 keys twice. ~96 MB decoded, four times the limit.
    await query(emu, `CREATE TABLE d.t AS SELECT x AS id, MOD(x * 7919, ${N / 2}) AS hk, MOD(x, 100) AS k, MOD(x * 31, 1000) / 8 AS v FROM (SELECT hi * 1000 + lo + 1 AS x FROM UNNEST(GENERATE_ARRAY(0, ${N / 1000 - 1})) AS hi CROSS JOIN UNNEST(GENERATE_ARRAY(0, 999)) AS lo)`);
    await emu.stop();
    emu = await startEmulator({ dataDir, args });
    const pids = [emu.proc.pid!, enginePid(emu)];
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, pids.reduce((s, p) => s + rssMB(p), 0));
    }, 50);
    try {
      // Every key twice: N/2 groups of COUNT 2; SUM(id) over all rows.
      expect(await query(emu, 'SELECT COUNT(*), SUM(n), MIN(n), MAX(n), SUM(sid) FROM (SELECT hk, COUNT(*) AS n, SUM(id) AS sid FROM d.t GROUP BY hk)')).toEqual([
        String(N / 2), String(N), '2', '2', String((N * (N + 1)) / 2),
      ]);
      expect(await query(emu, 'SELECT COUNT(DISTINCT hk), COUNT(DISTINCT k) FROM d.t')).toEqual([String(N / 2), '100']);
      // 100 partitions of N/100 rows: row numbers 1..N/100 in each.
      const per = N / 100;
      expect(await query(emu, 'SELECT COUNT(*), SUM(rn), MAX(rn) FROM (SELECT ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn FROM d.t)')).toEqual([
        String(N), String((100 * per * (per + 1)) / 2), String(per),
      ]);
      expect(await query(emu, 'SELECT id, v FROM d.t ORDER BY v DESC, id LIMIT 1')).toEqual(['129', '124.875']);
    } finally {
      clearInterval(sampler);
    }
    expect(existsSync(join(dataDir, '.spill'))).toBe(true);
    console.log(`memory-limit ${LIMIT_MB} MB: emulator peak RSS ${peak.toFixed(0)} MB (gateway + engine)`);
    expect(peak).toBeLessThan(LIMIT_MB + OVERHEAD_MB);
  }, 300_000);
});
