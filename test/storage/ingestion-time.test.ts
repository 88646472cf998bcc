// An ingestion-time partitioned table's hidden partition time is stored with
// its rows (src/storage/ingestion.ts): rows in the WAL (small writes) and in
// fragment files (bulk writes) keep it when another engine opens the data dir
// without the first one having folded or closed anything (a kill -9's restart).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { EngineCatalog } from '../../src/engine/catalog.js';
import { Storage } from '../../src/storage/store.js';
import { run, rowsOf, type Harness } from '../sql/harness.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ingestion-time-'));
const opened: Storage[] = [];
afterAll(async () => {
  for (const st of opened) await st.close().catch(() => undefined);
  fs.rmSync(dir, { recursive: true, force: true });
});

async function open(): Promise<Harness> {
  const st = await Storage.open(dir, { noLock: true });
  opened.push(st);
  return { catalog: new EngineCatalog(st), storage: st, close: () => st.close() };
}

it('partition times survive a restart from the WAL and from fragments', async () => {
  const a = await open();
  const q = (h: Harness, sql: string) => run(h, sql, { projectId: 'p', defaultDataset: { projectId: 'p', datasetId: 'd' } });
  await a.catalog.createDataset('p', 'd', { location: 'US' }, true);
  await q(a, 'CREATE TABLE d.t (a INT64) PARTITION BY _PARTITIONDATE');
  await q(a, "INSERT INTO d.t (_PARTITIONTIME, a) VALUES ('2024-01-01', 1), ('2024-01-02', 2)");
  await q(a, "INSERT INTO d.t (_PARTITIONTIME, a) SELECT TIMESTAMP '2024-01-03', x FROM UNNEST(GENERATE_ARRAY(10, 100009)) AS x");
  await q(a, "UPDATE d.t SET a = 20 WHERE _PARTITIONDATE = '2024-01-02'");
  const want = [['2024-01-01', '1', '1'], ['2024-01-02', '1', '20'], ['2024-01-03', '100000', '5000950000']];
  const sql = 'SELECT CAST(_PARTITIONDATE AS STRING) AS d, COUNT(*), SUM(a) FROM d.t GROUP BY d ORDER BY d';
  expect(rowsOf(await q(a, sql))).toEqual(want);
  // Another engine on the same files, the first never closed: the WAL is replayed.
  const b = await open();
  expect(rowsOf(await q(b, sql))).toEqual(want);
});
