// A dataset's default expirations on the tables made in it (REST datasets resource: defaultTableExpirationMs,
// defaultPartitionExpirationMs), snapshots included: a snapshot made without an expiration takes the dataset's default
// table expiration (table-snapshots-create.md), and keeps no partition expiration of its base, taking the dataset's
// default partition expiration instead (table-snapshots-intro.md, Limitations).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

const DAY = 86_400_000;

describe.skipIf(!hasRealEngine())('dataset default expirations on new tables and snapshots', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/dx${p}`;
  const query = async (sql: string): Promise<void> => {
    const r = await rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, timeoutMs: 30000 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  const table = async (d: string, t: string): Promise<any> => {
    const r = await rest(url(`/datasets/${d}/tables/${t}`));
    expect(r.status).toBe(200);
    return r.body;
  };
  /** The table's expiration as days after its creation (undefined: none). */
  const lifeDays = (t: any): number | undefined => (t.expirationTime === undefined ? undefined : Math.round((Number(t.expirationTime) - Number(t.creationTime)) / DAY));

  it('a snapshot without an expiration takes the dataset default table expiration', async () => {
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'te' }, defaultTableExpirationMs: String(2 * DAY) } });
    await query('CREATE TABLE te.base (x INT64) OPTIONS (expiration_timestamp = TIMESTAMP_ADD(CURRENT_TIMESTAMP(), INTERVAL 30 DAY))');
    expect(lifeDays(await table('te', 'base'))).toBe(30);

    await query('CREATE SNAPSHOT TABLE te.snap CLONE te.base');
    expect(lifeDays(await table('te', 'snap'))).toBe(2);
    await query('CREATE SNAPSHOT TABLE te.snap5 CLONE te.base OPTIONS (expiration_timestamp = TIMESTAMP_ADD(CURRENT_TIMESTAMP(), INTERVAL 5 DAY))');
    expect(lifeDays(await table('te', 'snap5'))).toBe(5);

    const ins = await rest(url('/jobs'), {
      method: 'POST',
      json: { configuration: { copy: { sourceTable: { projectId: 'dx', datasetId: 'te', tableId: 'base' }, destinationTable: { projectId: 'dx', datasetId: 'te', tableId: 'jobsnap' }, operationType: 'SNAPSHOT' } } },
    });
    expect(ins.status).toBe(200);
    for (let i = 0; i < 200 && (await rest(url(`/jobs/${ins.body.jobReference.jobId}`))).body.status?.state !== 'DONE'; i++) await new Promise((r) => setTimeout(r, 50));
    const jobsnap = await table('te', 'jobsnap');
    expect(jobsnap.type).toBe('SNAPSHOT');
    expect(lifeDays(jobsnap)).toBe(2);
  });

  it('a new time-partitioned table takes the default partition expiration, and then no table expiration; a snapshot takes the dataset default, not its base', async () => {
    await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'pe' }, defaultTableExpirationMs: String(2 * DAY), defaultPartitionExpirationMs: String(3 * DAY) } });
    await query('CREATE TABLE pe.p (ts TIMESTAMP) PARTITION BY DATE(ts) OPTIONS (partition_expiration_days = 10)');
    const p = await table('pe', 'p');
    expect(p.timePartitioning.expirationMs).toBe(String(10 * DAY));
    expect(p.expirationTime).toBeUndefined();

    await query('CREATE TABLE pe.q (ts TIMESTAMP) PARTITION BY DATE(ts)');
    const q = await table('pe', 'q');
    expect(q.timePartitioning.expirationMs).toBe(String(3 * DAY));
    expect(q.expirationTime).toBeUndefined();

    await query('CREATE SNAPSHOT TABLE pe.psnap CLONE pe.p');
    const psnap = await table('pe', 'psnap');
    expect(psnap.timePartitioning.expirationMs).toBe(String(3 * DAY));

    // tables.insert: the same defaults; an unpartitioned table takes the table expiration.
    const made = await rest(url('/datasets/pe/tables'), { method: 'POST', json: { tableReference: { tableId: 'r' }, schema: { fields: [{ name: 'ts', type: 'TIMESTAMP' }] }, timePartitioning: { type: 'DAY', field: 'ts' } } });
    expect(made.body.timePartitioning.expirationMs).toBe(String(3 * DAY));
    expect(made.body.expirationTime).toBeUndefined();
    await query('CREATE TABLE pe.plain (x INT64)');
    expect(lifeDays(await table('pe', 'plain'))).toBe(2);
  });
});
