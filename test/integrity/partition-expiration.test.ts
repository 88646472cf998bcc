// kill -9 while expired partitions are being deleted (Storage.expirePartitions: a row-level commit before each
// statement and engine read) and rows of live partitions are written: after each restart on the same data dir, every
// acknowledged row of a live partition is there exactly once, nothing never sent is, and no expired row is readable.
// The table's expiration flips between 20 and 30 days; expired rows are 40 days old, live ones today's or 5 days old.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killGroup, startEmulator } from '../helpers/emulator.js';
import { Client, PROJECT } from './client.js';

const CYCLES = Number(process.env.INTEGRITY_CRASH_CYCLES) || 20;
const dataDir = mkdtempSync(join(tmpdir(), 'pexp-crash-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('kill -9 while expired partitions are deleted', () => {
  it(`loses no row of a live partition, over ${Math.min(CYCLES, 8)} cycles`, async () => {
    let emu = await startEmulator({ dataDir, args: ['--project-id', PROJECT] });
    let c = new Client(emu);
    const made = await c.query('CREATE SCHEMA d; CREATE TABLE d.pe (d DATE, id INT64) PARTITION BY d OPTIONS (partition_expiration_days = 20);');
    expect(made.ok, made.ok ? '' : made.error).toBe(true);
    const acked = new Set<number>();
    const sent = new Set<number>();
    let seq = 0;
    let expiredInserts = 0;
    for (let cycle = 0; cycle < Math.min(CYCLES, 8); cycle++) {
      let stop = false;
      const loop = (fn: () => Promise<void>): Promise<void> => (async () => {
        while (!stop) await fn();
      })();
      const live = async (k: number, r: Promise<{ ok: boolean }>): Promise<void> => {
        sent.add(k);
        if ((await r).ok) acked.add(k);
      };
      const work = [
        loop(async () => {
          const base = ++seq * 100;
          const rows = Array.from({ length: 20 }, (_, i) => ({ d: new Date().toISOString().slice(0, 10), id: base + i }));
          rows.forEach((r) => sent.add(r.id));
          const o = await c.insertAll('pe', rows);
          if (o.ok) rows.forEach((r) => acked.add(r.id));
        }),
        loop(async () => {
          const k = ++seq * 100;
          await live(k, c.query(`INSERT d.pe VALUES (DATE_SUB(CURRENT_DATE(), INTERVAL 5 DAY), ${k})`));
        }),
        // Rows already expired: each is deleted by the sweep of the next statement or read.
        loop(async () => {
          await c.query(`INSERT d.pe SELECT DATE_SUB(CURRENT_DATE(), INTERVAL 40 DAY), -x FROM UNNEST(GENERATE_ARRAY(1, 50)) AS x`);
          expiredInserts++;
        }),
        loop(async () => {
          await c.query(`ALTER TABLE d.pe SET OPTIONS (partition_expiration_days = ${20 + 10 * (++seq % 2)})`);
        }),
        loop(async () => {
          await c.call('GET', '/datasets/d/tables/pe/data?maxResults=5');
        }),
      ];
      await new Promise((r) => setTimeout(r, 300 + Math.floor(Math.random() * 1200)));
      await killGroup(emu);
      stop = true;
      await Promise.all(work);

      emu = await startEmulator({ dataDir, args: ['--project-id', PROJECT] });
      c = new Client(emu);
      const where = `cycle ${cycle}`;
      const got = await c.column('SELECT id FROM d.pe WHERE id > 0');
      expect(got.ok, where).toBe(true);
      const ids = (got.ok ? got.value : []).map(Number);
      const seen = new Set(ids);
      expect(ids.length, `${where}: a live row twice`).toBe(seen.size);
      expect([...acked].filter((k) => !seen.has(k)), `${where}: acknowledged live rows lost`).toEqual([]);
      expect(ids.filter((k) => !sent.has(k)), `${where}: rows never sent`).toEqual([]);
      const old = await c.column('SELECT COUNT(*) FROM d.pe WHERE id < 0 OR d < DATE_SUB(CURRENT_DATE(), INTERVAL 35 DAY)');
      expect(old.ok && old.value[0], `${where}: expired rows readable`).toBe('0');
    }
    await emu.stop();
    console.log(`partition expiration crash cycles: acknowledged/sent live rows ${acked.size}/${sent.size}, expired inserts ${expiredInserts}`);
    expect(acked.size).toBeGreaterThan(0);
    expect(expiredInserts).toBeGreaterThan(0);
  }, 600_000);
});
