// Ingestion-time partitioned tables (timePartitioning without a field) through
// the real Node client: the pseudo-columns _PARTITIONTIME / _PARTITIONDATE are
// no part of the table's schema, rows, tabledata.list or Storage Read reads
// (INFORMATION_SCHEMA.COLUMNS lists them, hidden);
// streamed rows read NULL there while in the streaming buffer (as the service
// documents), then the partition of their arrival, or the one a decorator
// (`t$20240105`) named; a query job into a partition decorator replaces it.
import { BigQuery, type Dataset } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const SCHEMA = [{ name: 'id', type: 'INTEGER' }, { name: 'name', type: 'STRING' }];
const today = (): string => new Date().toISOString().slice(0, 10);
/** Three days before today (UTC): a streamed partition decorator names a day from 31 days back to 16 ahead (write-api-rest.md). */
const recentDay = (): string => new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);

describe('ingestion-time partitioned tables through the Node client', () => {
  let buffered: Emulator;
  let off: Emulator;
  let clients: { bq: BigQuery; ds: Dataset }[];

  beforeAll(async () => {
    [buffered, off] = await Promise.all([
      startEmulator({ args: ['--project-id', 'it-p'] }),
      startEmulator({ args: ['--project-id', 'it-p'], env: { WAREHOUSE_EMULATOR_STREAMING_BUFFER_SECONDS: '0' } }),
    ]);
    clients = await Promise.all(
      [buffered, off].map(async (emu) => {
        const bq = new BigQuery({ projectId: 'it-p', apiEndpoint: emu.url, authClient: fakeAuth() });
        const [ds] = await bq.createDataset('it');
        return { bq, ds };
      }),
    );
  });
  afterAll(async () => Promise.all([buffered?.stop(), off?.stop()]));

  const rowsOf = async (bq: BigQuery, sql: string): Promise<Record<string, unknown>[]> =>
    (await bq.query(sql))[0].map((r: Record<string, unknown>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v && typeof v === 'object' && 'value' in v ? (v as { value: unknown }).value : v])));

  it('streamed rows read NULL _PARTITIONTIME while buffered, their partition once in managed storage; no read shows the pseudo-columns', async () => {
    for (const [i, { bq, ds }] of clients.entries()) {
      const [t] = await ds.createTable('events', { schema: SCHEMA, timePartitioning: { type: 'DAY' } });
      await t.insert([{ id: 1, name: 'a' }]);
      // A decorator names the partition (table$YYYYMMDD), as bq and the clients send it.
      // write-api-rest.md, Ingestion-time partitioning: within 31 days back (it was $20240105, now out of bounds).
      await ds.table(`events$${recentDay().replace(/-/g, '')}`).insert([{ id: 2, name: 'b' }]);
      const rows = await rowsOf(bq, 'SELECT id, CAST(_PARTITIONDATE AS STRING) AS d, _PARTITIONTIME IS NULL AS buffered FROM it.events ORDER BY id');
      if (i === 0) expect(rows).toEqual([{ id: 1, d: null, buffered: true }, { id: 2, d: null, buffered: true }]);
      else expect(rows).toEqual([{ id: 1, d: today(), buffered: false }, { id: 2, d: recentDay(), buffered: false }]);
      const [meta] = await t.getMetadata();
      expect(meta.schema.fields.map((f: { name: string }) => f.name)).toEqual(['id', 'name']);
      expect(meta.timePartitioning).toEqual({ type: 'DAY' });
      const [listed] = await t.getRows();
      expect(listed.map((r) => Object.keys(r))).toEqual([['id', 'name'], ['id', 'name']]);
      const star = await rowsOf(bq, 'SELECT * FROM it.events ORDER BY id');
      expect(star).toEqual([{ id: 1, name: 'a' }, { id: 2, name: 'b' }]);
      // COLUMNS lists the pseudo-columns too, hidden and without a position (information-schema-columns).
      const cols = await rowsOf(bq, "SELECT column_name, is_hidden FROM it.INFORMATION_SCHEMA.COLUMNS WHERE table_name = 'events' ORDER BY ordinal_position NULLS LAST, column_name");
      expect(cols).toEqual([
        { column_name: 'id', is_hidden: 'NO' },
        { column_name: 'name', is_hidden: 'NO' },
        { column_name: '_PARTITIONDATE', is_hidden: 'YES' },
        { column_name: '_PARTITIONTIME', is_hidden: 'YES' },
      ]);
    }
  });

  it('a query job into a partition decorator replaces that partition only (WRITE_TRUNCATE); other decorators fail as the service does', async () => {
    const { bq, ds } = clients[1]!;
    await ds.createTable('daily', { schema: SCHEMA, timePartitioning: { type: 'DAY' } });
    await bq.query("INSERT it.daily (_PARTITIONTIME, id, name) VALUES ('2024-01-01', 1, 'old'), ('2024-01-02', 2, 'kept')");
    const [job] = await bq.createQueryJob({
      query: "SELECT 10 AS id, 'new' AS name",
      destination: ds.table('daily$20240101'),
      writeDisposition: 'WRITE_TRUNCATE',
    });
    await job.getQueryResults();
    expect(await rowsOf(bq, 'SELECT id, name, CAST(_PARTITIONDATE AS STRING) AS d FROM it.daily ORDER BY id')).toEqual([
      { id: 2, name: 'kept', d: '2024-01-02' },
      { id: 10, name: 'new', d: '2024-01-01' },
    ]);
    // The pseudo-columns are not billed: a dry run of them alone processes nothing.
    const dry = async (query: string): Promise<string> => (await bq.createQueryJob({ query, dryRun: true }))[0].metadata.statistics.totalBytesProcessed;
    expect(await dry('SELECT _PARTITIONTIME AS pt, _PARTITIONDATE AS pd FROM it.daily')).toBe('0');
    expect(await dry('SELECT id, _PARTITIONTIME AS pt FROM it.daily')).toBe('16');
    const bad = await rest(`${off.url}/bigquery/v2/projects/it-p/datasets/it/tables/${encodeURIComponent('daily$2024')}/insertAll`, { method: 'POST', json: { rows: [{ json: { id: 3 } }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('Invalid partition decorator');
  });
});
