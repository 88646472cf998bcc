// APPENDS and CHANGES after writes into one partition of an ingestion-time
// partitioned table through REST (time-series-functions.md, CHANGES: jobs
// with writeDisposition WRITE_TRUNCATE add to the change history): a query
// job or a load job into `t$YYYYMMDD` with WRITE_TRUNCATE deletes that
// partition's rows and inserts the new ones; the other partitions' rows
// neither go nor come again. The history answers the same after kill -9 of
// the engine (the WAL and sidecar keep it).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { killEngine, queryRows, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

let emu: Emulator;
const srcDir = mkdtempSync(join(tmpdir(), 'ch-src-'));
const api = (): string => `${emu.url}/bigquery/v2/projects/chp`;

beforeAll(async () => {
  emu = await startEmulator({ args: ['--project-id', 'chp'] });
  expect((await rest(`${api()}/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
}, 120_000);
afterAll(async () => {
  await emu?.stop();
  rmSync(srcDir, { recursive: true, force: true });
});

async function job(configuration: Record<string, unknown>): Promise<void> {
  const r = await rest(`${api()}/jobs`, { method: 'POST', json: { configuration } });
  expect(r.status).toBe(200);
  let body = r.body as { jobReference: { jobId: string }; status: { state: string; errorResult?: unknown } };
  while (body.status.state !== 'DONE') {
    await new Promise((res) => setTimeout(res, 50));
    body = (await rest(`${api()}/jobs/${body.jobReference.jobId}`)).body;
  }
  expect(body.status.errorResult).toBeUndefined();
}

const run = (sql: string): Promise<unknown[][]> => queryRows(emu, 'chp', sql);
const dest = (tableId: string): Record<string, string> => ({ projectId: 'chp', datasetId: 'd', tableId });

it('a WRITE_TRUNCATE into t$YYYYMMDD (query job, then load job) changes only that partition in APPENDS and CHANGES, also after a restart', async () => {
  await run('CREATE TABLE d.t (id INT64, name STRING) PARTITION BY _PARTITIONDATE OPTIONS (enable_change_history = TRUE)');
  await run("INSERT d.t (_PARTITIONTIME, id, name) VALUES ('2024-01-01', 1, 'old'), ('2024-01-02', 2, 'kept'), ('2024-01-03', 3, 'kept too')");
  await job({ query: { query: "SELECT 10 AS id, 'new' AS name", useLegacySql: false, destinationTable: dest('t$20240101'), writeDisposition: 'WRITE_TRUNCATE' } });
  const csv = join(srcDir, 'p3.csv');
  writeFileSync(csv, 'id,name\n30,loaded\n31,loaded\n');
  await job({ load: { destinationTable: dest('t$20240103'), sourceUris: [`file://${csv}`], sourceFormat: 'CSV', skipLeadingRows: 1, writeDisposition: 'WRITE_TRUNCATE' } });

  expect(await run('SELECT id, CAST(_PARTITIONDATE AS STRING) FROM d.t ORDER BY id')).toEqual([
    ['2', '2024-01-02'],
    ['10', '2024-01-01'],
    ['30', '2024-01-03'],
    ['31', '2024-01-03'],
  ]);
  const appends = 'SELECT id, name, _CHANGE_TYPE FROM APPENDS(TABLE d.t, NULL, NULL) ORDER BY id';
  const changes = 'SELECT id, name, _CHANGE_TYPE, _CHANGE_IS_FOR_UPDATE, UNIX_MICROS(_CHANGE_TIMESTAMP) FROM CHANGES(TABLE d.t, NULL, NULL) ORDER BY 5, 3 DESC, 1';
  const a = await run(appends);
  // Every row inserted once: the kept partitions' rows are not inserted again.
  expect(a).toEqual([
    ['1', 'old', 'INSERT'],
    ['2', 'kept', 'INSERT'],
    ['3', 'kept too', 'INSERT'],
    ['10', 'new', 'INSERT'],
    ['30', 'loaded', 'INSERT'],
    ['31', 'loaded', 'INSERT'],
  ]);
  const c = await run(changes);
  // The query job deletes partition 2024-01-01's row and inserts its own, in one commit; then the load job does the same for 2024-01-03.
  expect(c.map((r) => r.slice(0, 4))).toEqual([
    ['1', 'old', 'INSERT', 'false'],
    ['2', 'kept', 'INSERT', 'false'],
    ['3', 'kept too', 'INSERT', 'false'],
    ['10', 'new', 'INSERT', 'false'],
    ['1', 'old', 'DELETE', 'false'],
    ['30', 'loaded', 'INSERT', 'false'],
    ['31', 'loaded', 'INSERT', 'false'],
    ['3', 'kept too', 'DELETE', 'false'],
  ]);
  const times = [...new Set(c.map((r) => r[4]))];
  expect(times).toHaveLength(3);

  await killEngine(emu, 'chp');
  expect(await run(appends)).toEqual(a);
  expect(await run(changes)).toEqual(c);
}, 120_000);
