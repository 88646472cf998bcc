// Parallel execution in the built engine (dist/exec-worker.js): a table large
// enough for the worker pool, queried through REST. The engine starts its
// worker threads (seen in its thread count: Linux /proc), keeps serving
// (a worker must not take the process down) and answers exactly.
// test/sql/parallel.test.ts compares parallel and serial answers in depth.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { queryRows, startEmulator, type Emulator } from '../helpers/emulator.js';

let emu: Emulator | undefined;
afterAll(async () => {
  await emu?.stop();
});

const N = 600_000;

const query = async (e: Emulator, sql: string): Promise<string[][]> => (await queryRows(e, 'par', sql)) as string[][];

/** The engine's thread count (the gateway's child process). */
function engineThreads(e: Emulator): number {
  const gw = e.proc.pid!;
  const child = readFileSync(`/proc/${gw}/task/${gw}/children`, 'utf8').trim().split(/\s+/)[0]!;
  return Number(/^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${child}/status`, 'utf8'))![1]);
}

describe('parallel execution in the engine', () => {
  it.runIf(process.platform === 'linux')('runs a large aggregate, join and top-N on worker threads', async () => {
    emu = await startEmulator({ args: ['--project-id', 'par'], env: { WAREHOUSE_EMULATOR_EXEC_THREADS: '2', WAREHOUSE_EMULATOR_PARALLEL_MIN_ROWS: '262144' } });
    await query(emu, 'CREATE SCHEMA d');
    await query(emu, `CREATE TABLE d.t AS SELECT a * 1000 + b AS id, MOD(a * 1000 + b, 10) AS k FROM UNNEST(GENERATE_ARRAY(0, ${N / 1000 - 1})) AS a, UNNEST(GENERATE_ARRAY(0, 999)) AS b`);
    await query(emu, `CREATE TABLE d.dim AS SELECT x AS dk, MOD(x, 2) AS parity FROM UNNEST(GENERATE_ARRAY(0, 9)) AS x`);
    const before = engineThreads(emu);
    // Per key k: ids k, k + 10, ..., N - 10 + k.
    const perKey = N / 10;
    const sum = (k: number): number => perKey * k + 10 * ((perKey * (perKey - 1)) / 2);
    expect(await query(emu, 'SELECT k, COUNT(*), SUM(id), MIN(id), MAX(id) FROM d.t GROUP BY k ORDER BY k')).toEqual(
      Array.from({ length: 10 }, (_, k) => [String(k), String(perKey), String(sum(k)), String(k), String(N - 10 + k)]),
    );
    expect(engineThreads(emu)).toBeGreaterThanOrEqual(before + 2);
    expect(await query(emu, 'SELECT dim.parity, COUNT(*), SUM(t.id) FROM d.t JOIN d.dim ON dim.dk = t.k GROUP BY dim.parity ORDER BY dim.parity')).toEqual([
      ['0', String(N / 2), String([0, 2, 4, 6, 8].reduce((s, k) => s + sum(k), 0))],
      ['1', String(N / 2), String([1, 3, 5, 7, 9].reduce((s, k) => s + sum(k), 0))],
    ]);
    expect(await query(emu, 'SELECT id FROM d.t WHERE k = 3 ORDER BY id DESC LIMIT 3')).toEqual([[String(N - 7)], [String(N - 17)], [String(N - 27)]]);
    expect(emu.output()).not.toMatch(/engine: exited/);
  }, 180_000);
});
