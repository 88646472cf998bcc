// A new table's commit (CREATE TABLE ... AS SELECT, CREATE OR REPLACE): a
// small result's files ride in the catalog record that publishes the table,
// which then waits for no sync; a power loss that takes the unsynced files
// (simulated here: a copy of the data dir with them removed or cut) loses
// nothing, since start-up writes them again from the record. A larger result
// is synced before its record instead, and its record carries no files.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { readWalSync } from '../../src/storage/wal.js';
import { Storage } from '../../src/storage/store.js';
import { run, type Harness } from '../sql/harness.js';
import { getValue } from '../../src/types/vector.js';

const P = 'ntc';
const dirs: string[] = [];
const harnesses: Harness[] = [];

async function open(dir: string): Promise<(sql: string) => Promise<unknown[]>> {
  const storage = await Storage.open(dir, { noLock: true });
  const h: Harness = { storage, catalog: new EngineCatalog(storage), close: () => storage.close() };
  harnesses.push(h);
  return async (sql) => {
    const r = await run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });
    return r.batches[0]?.columns.map((v) => getValue(v, 0)) ?? [];
  };
}

function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'new-table-commit-'));
  dirs.push(d);
  return d;
}

/** The ops of every record in catalog.log. */
function loggedOps(dir: string): { op: string; file?: string }[] {
  return readWalSync(path.join(dir, 'catalog.log')).records.flatMap((r) => (JSON.parse(r.body.toString('utf8')) as { ops: { op: string; file?: string }[] }).ops);
}

afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close().catch(() => undefined);
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("a new table's commit", () => {
  it('a small result rides in its record: files lost to a power loss are written again from it', async () => {
    const dir = tempDir();
    const q = await open(dir);
    await harnesses[0]!.catalog.createDataset(P, 'd', { location: 'US' }, true);
    await q('CREATE TABLE d.t AS SELECT x AS id, CAST(x AS STRING) AS s FROM UNNEST(GENERATE_ARRAY(1, 100)) AS x');
    await q('CREATE OR REPLACE TABLE d.t AS SELECT x AS id, CONCAT("v", CAST(x AS STRING)) AS s FROM UNNEST(GENERATE_ARRAY(1, 200)) AS x');
    const ops = loggedOps(dir);
    const carried = ops.filter((o) => o.op === 'file').map((o) => o.file!);
    expect(carried.length).toBe(2);
    expect(ops.filter((o) => o.op === 'sidecar').length).toBe(2);
    // The data dir as a power loss could leave it: the record written, the new table's files not.
    const lost = tempDir();
    fs.cpSync(dir, lost, { recursive: true });
    const live = carried[1]!;
    fs.rmSync(path.join(lost, live));
    const sidecar = path.join(lost, ops.filter((o) => o.op === 'sidecar')[1]!.file!);
    fs.writeFileSync(sidecar, fs.readFileSync(sidecar).subarray(0, 20));
    const again = await open(lost);
    expect(await again('SELECT COUNT(*), SUM(id), MAX(s) FROM d.t')).toEqual([200n, 20100n, 'v99']);
    expect(fs.readFileSync(path.join(lost, live))).toEqual(fs.readFileSync(path.join(dir, live)));
  });

  it('a larger result is synced before its record, which carries no files', async () => {
    const dir = tempDir();
    const q = await open(dir);
    await harnesses[0]!.catalog.createDataset(P, 'd', { location: 'US' }, true);
    await q('CREATE TABLE d.big AS SELECT x AS id, CONCAT("row ", CAST(x AS STRING)) AS s FROM UNNEST(GENERATE_ARRAY(1, 20000)) AS x');
    expect(loggedOps(dir).filter((o) => o.op === 'file' || o.op === 'sidecar')).toEqual([]);
    expect(await q('SELECT COUNT(*), SUM(id) FROM d.big')).toEqual([20000n, 200010000n]);
  });

  it('a checkpoint keeps what the records carried (the files are synced, the records gone)', async () => {
    const dir = tempDir();
    const q = await open(dir);
    await harnesses[0]!.catalog.createDataset(P, 'd', { location: 'US' }, true);
    await q('CREATE TABLE d.t AS SELECT x AS id FROM UNNEST(GENERATE_ARRAY(1, 50)) AS x');
    await harnesses.pop()!.close();
    expect(loggedOps(dir)).toEqual([]);
    const again = await open(dir);
    expect(await again('SELECT COUNT(*), SUM(id) FROM d.t')).toEqual([50n, 1275n]);
  });
});
