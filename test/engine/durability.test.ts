// kill -9 at random points while inserts stream in: every acknowledged row is
// there after restart, none is duplicated, and every file still loads. The
// table's history survives too: `t@<ms>` of an instant recorded after an
// earlier restart still reads exactly the rows there were then.
import { describe, expect, it } from 'vitest';
import { RpcError, spawnEngine, tempDir, type SpawnedEngine } from './helpers.js';

const TABLE = { projectId: 'p', datasetId: 'd', tableId: 't' };

async function readIds(eng: SpawnedEngine, tableId = TABLE.tableId): Promise<number[]> {
  const ids: number[] = [];
  let start = 0;
  for (;;) {
    const r = await eng.client.call<{ rowsJson: string; nextIndex: number }>('ListRows', { table: { ...TABLE, tableId }, startIndex: start, maxResults: 100000 });
    for (const row of JSON.parse(r.rowsJson) as { f: { v: string }[] }[]) ids.push(Number(row.f[0]!.v));
    if (r.nextIndex < 0) break;
    start = r.nextIndex;
  }
  return ids;
}

describe('durability', () => {
  it('keeps every acknowledged row across kill -9', async () => {
    const dir = tempDir('wh-dur-');
    // Small compaction thresholds so kills also land inside compactions.
    const env = { WAREHOUSE_COMPACT_WAL_BYTES: '65536', WAREHOUSE_COMPACT_IDLE_MS: '50' };
    let eng = await spawnEngine(dir, [], env);
    await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
    await eng.client.call('InsertTable', {
      projectId: 'p',
      datasetId: 'd',
      resourceJson: JSON.stringify({
        tableReference: { tableId: 't' },
        schema: { fields: [{ name: 'id', type: 'INT64' }, { name: 's', type: 'STRING' }, { name: 'n', type: 'NUMERIC' }, { name: 'a', type: 'STRING', mode: 'REPEATED' }] },
      }),
    });
    const acked = new Set<number>();
    let next = 0;
    const marks: { ms: number; ids: number[] }[] = [];
    for (let cycle = 0; cycle < 4; cycle++) {
      let stop = false;
      const writers = Array.from({ length: 3 }, async () => {
        while (!stop) {
          const ids = Array.from({ length: 50 }, () => next++);
          const rows = ids.map((id) => ({ json: { id, s: `row ${id}`, n: `${id}.5`, a: ['x', String(id)] } }));
          try {
            const r = await eng.client.call<{ insertErrorsJson: string }>('InsertRows', { table: TABLE, rowsJson: JSON.stringify(rows) });
            if (r.insertErrorsJson === '') for (const id of ids) acked.add(id);
          } catch (e) {
            if (!(e instanceof RpcError)) throw e;
            return; // the engine died mid-call: not acknowledged
          }
        }
      });
      // Kill at a random point, but only once this cycle has had some rows
      // acknowledged (a loaded machine may take a while to start streaming).
      const ackedBefore = acked.size;
      for (let waited = 0; acked.size < ackedBefore + 150 && waited < 20_000; waited += 20) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, Math.random() * 600));
      eng.proc.kill('SIGKILL');
      stop = true;
      await Promise.all(writers);
      await new Promise<void>((r) => (eng.proc.exitCode !== null || eng.proc.signalCode !== null ? r() : eng.proc.once('exit', () => r())));
      eng.client.close();
      eng = await spawnEngine(dir, [], env);
      const ids = await readIds(eng);
      const have = new Set(ids);
      expect(have.size).toBe(ids.length); // no duplicates
      const missing = [...acked].filter((id) => !have.has(id));
      expect(missing).toEqual([]);
      const t = JSON.parse((await eng.client.call<{ resourceJson: string }>('GetTable', TABLE)).resourceJson) as { numRows: string };
      expect(Number(t.numRows)).toBe(ids.length);
      for (const m of marks) expect(await readIds(eng, `t@${m.ms}`)).toEqual(m.ids);
      await new Promise((r) => setTimeout(r, 5));
      marks.push({ ms: Date.now(), ids });
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(acked.size).toBeGreaterThan(500);
    // A second engine on the same data dir fails clearly instead of sharing it.
    await expect(spawnEngine(dir, [], env)).rejects.toThrow(/in use by another emulator/);
    eng.proc.kill('SIGTERM');
    await new Promise<void>((r) => eng.proc.once('exit', () => r()));
    eng.client.close();
  }, 120_000);
});
