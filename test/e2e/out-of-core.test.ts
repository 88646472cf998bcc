// A table several times larger than the engine's --memory-limit, made, the
// emulator restarted, then read whole (aggregates over every column) and by
// a selective filter, through REST: the answers are exact. (Memory itself is
// measured in bench/, not asserted here.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { queryRows, startEmulator, type Emulator } from '../helpers/emulator.js';

const dataDir = mkdtempSync(join(tmpdir(), 'wh-ooc-'));
let emu: Emulator | undefined;
afterAll(async () => {
  await emu?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const N = 600_000;

/** The first row of a query's answer. */
const query = async (e: Emulator, sql: string): Promise<string[]> => ((await queryRows(e, 'ooc', sql))[0] ?? []) as string[];

describe('tables larger than the memory limit', () => {
  it('are read whole after a restart, and by a selective filter', async () => {
    const args = ['--project-id', 'ooc', '--memory-limit', '4MB'];
    emu = await startEmulator({ dataDir, args });
    await query(emu, 'CREATE SCHEMA d');
    await query(emu, `CREATE TABLE d.t AS SELECT x AS id, MOD(x, 1000) AS k, CONCAT('name-', CAST(MOD(x, 5000) AS STRING)) AS name, x * 0.5 AS f FROM UNNEST(GENERATE_ARRAY(1, ${N})) AS x`);
    await emu.stop();
    emu = await startEmulator({ dataDir, args });
    const sum = (N * (N + 1)) / 2;
    const [count, ids, names, ks, maxF] = await query(emu, 'SELECT COUNT(*), SUM(id), COUNT(DISTINCT name), SUM(k), MAX(f) FROM d.t');
    expect([count, ids, names, ks]).toEqual([String(N), String(sum), '5000', String(Array.from({ length: N }, (_, i) => (i + 1) % 1000).reduce((a, b) => a + b, 0))]);
    expect(Number(maxF)).toBe(N * 0.5);
    expect(await query(emu, `SELECT COUNT(*), MIN(name) FROM d.t WHERE id BETWEEN 400001 AND 400010`)).toEqual(['10', 'name-1']);
  }, 180_000);
});
