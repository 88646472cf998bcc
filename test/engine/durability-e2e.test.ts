// The whole emulator (gateway + engine, one process group) killed with
// SIGKILL while insertAll requests stream over HTTP: after a restart on the
// same data dir every acknowledged row is there exactly once.
import { describe, expect, it } from 'vitest';
import { hasRealEngine, killGroup, startEmulator, type Emulator } from '../helpers/emulator.js';
import { tempDir } from './helpers.js';

const base = (e: Emulator): string => `${e.url}/bigquery/v2/projects/p`;

async function post(url: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

async function readIds(e: Emulator): Promise<number[]> {
  const ids: number[] = [];
  let token = '';
  for (;;) {
    const r = await fetch(`${base(e)}/datasets/d/tables/t/data?maxResults=100000${token ? `&pageToken=${token}` : ''}`);
    const j = (await r.json()) as { rows?: { f: { v: string }[] }[]; pageToken?: string };
    for (const row of j.rows ?? []) ids.push(Number(row.f[0]!.v));
    if (!j.pageToken) break;
    token = j.pageToken;
  }
  return ids;
}

describe.skipIf(!hasRealEngine())('durability through the whole emulator', () => {
  it('keeps every acknowledged insertAll row across kill -9 of both processes', async () => {
    const dataDir = tempDir('wh-e2e-dur-');
    const env = { WAREHOUSE_COMPACT_WAL_BYTES: '65536', WAREHOUSE_COMPACT_IDLE_MS: '50' };
    let emu = await startEmulator({ dataDir, env });
    expect((await post(`${base(emu)}/datasets`, { datasetReference: { datasetId: 'd' } })).status).toBe(200);
    const t = await post(`${base(emu)}/datasets/d/tables`, {
      tableReference: { tableId: 't' },
      schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'ts', type: 'TIMESTAMP' }, { name: 'tags', type: 'STRING', mode: 'REPEATED' }] },
    });
    expect(t.status).toBe(200);
    const acked = new Set<number>();
    let next = 0;
    for (let cycle = 0; cycle < 3; cycle++) {
      let stop = false;
      const writers = Array.from({ length: 2 }, async () => {
        while (!stop) {
          const ids = Array.from({ length: 100 }, () => next++);
          try {
            const r = await post(`${base(emu)}/datasets/d/tables/t/insertAll`, {
              rows: ids.map((id) => ({ insertId: `r${id}`, json: { id, ts: '2024-01-01 00:00:00', tags: [String(id)] } })),
            });
            if (r.status === 200 && !r.json.insertErrors) for (const id of ids) acked.add(id);
          } catch {
            return; // connection reset by the kill: not acknowledged
          }
        }
      });
      await new Promise((r) => setTimeout(r, 300 + Math.random() * 700));
      await killGroup(emu);
      stop = true;
      await Promise.all(writers);
      emu = await startEmulator({ dataDir, env });
      const ids = await readIds(emu);
      expect(new Set(ids).size).toBe(ids.length);
      const have = new Set(ids);
      expect([...acked].filter((id) => !have.has(id))).toEqual([]);
    }
    expect(acked.size).toBeGreaterThan(200);
    await emu.stop();
  }, 120_000);
});
