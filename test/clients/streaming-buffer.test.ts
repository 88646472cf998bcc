// The streaming buffer through the real Node client (src/engine/streaming-buffer.ts):
// rows written by insertAll are queried and listed at once, but tables.get
// reports them under streamingBuffer and leaves them out of numRows, copy
// and extract jobs do not see them and UPDATE/DELETE/MERGE may not change
// them; rows written by DML are not buffered. With
// the buffer turned off (WAREHOUSE_EMULATOR_STREAMING_BUFFER_SECONDS=0) every
// row is in managed storage at once.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BigQuery, type Dataset } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const SCHEMA = [{ name: 'id', type: 'INTEGER' }, { name: 'name', type: 'STRING' }];

describe('streaming buffer through the Node client', () => {
  let emu: Emulator;
  let off: Emulator;
  let bq: BigQuery;
  let ds: Dataset;
  const count = async (table: string): Promise<number> => Number((await bq.query(`SELECT COUNT(*) AS n FROM sb.${table}`))[0][0].n);

  beforeAll(async () => {
    [emu, off] = await Promise.all([
      startEmulator({ args: ['--project-id', 'sb-p'] }),
      startEmulator({ args: ['--project-id', 'sb-p'], env: { WAREHOUSE_EMULATOR_STREAMING_BUFFER_SECONDS: '0' } }),
    ]);
    bq = new BigQuery({ projectId: 'sb-p', apiEndpoint: emu.url, authClient: fakeAuth() });
    [ds] = await bq.createDataset('sb');
  });
  afterAll(async () => Promise.all([emu?.stop(), off?.stop()]));

  it('tables.get reports streamed rows under streamingBuffer and leaves them out of numRows; queries and tabledata.list read them', async () => {
    const [t] = await ds.createTable('events', { schema: SCHEMA });
    const before = Date.now();
    await t.insert([{ id: 1, name: 'a' }, { id: 2, name: 'b' }]);
    await t.insert([{ id: 3, name: 'c' }]);
    const [meta] = await t.getMetadata();
    expect(meta.numRows).toBe('0');
    expect(meta.streamingBuffer).toMatchObject({ estimatedRows: '3' });
    expect(Number(meta.streamingBuffer.estimatedBytes)).toBeGreaterThan(0);
    const oldest = Number(meta.streamingBuffer.oldestEntryTime);
    expect(oldest).toBeGreaterThanOrEqual(before - 1);
    expect(oldest).toBeLessThanOrEqual(Date.now());
    expect(await count('events')).toBe(3);
    expect((await t.getRows())[0]).toHaveLength(3);
    // view=BASIC leaves out the storage statistics, the buffer's with them.
    const [basic] = await t.get({ view: 'BASIC' } as object);
    expect(basic.metadata.streamingBuffer).toBeUndefined();
  });

  it('DML rows are in managed storage: numRows counts them, DML changes them; DML over recently streamed rows fails as on the service', async () => {
    const [t] = await ds.createTable('mixed', { schema: SCHEMA });
    await t.insert([{ id: 1, name: 'streamed' }, { id: 2, name: 'streamed' }]);
    await bq.query(`INSERT sb.mixed (id, name) VALUES (10, 'dml'), (11, 'dml')`);
    const [meta] = await t.getMetadata();
    expect(meta.numRows).toBe('2');
    expect(meta.streamingBuffer.estimatedRows).toBe('2');
    await bq.query(`UPDATE sb.mixed SET name = 'changed' WHERE id = 10`);
    await bq.query(`DELETE sb.mixed WHERE id = 11`);
    const refusal = 'UPDATE or DELETE statement over table sb-p.sb.mixed would affect rows in the streaming buffer, which is not supported';
    await expect(bq.query(`DELETE sb.mixed WHERE id = 1`)).rejects.toThrow(refusal);
    await expect(bq.query(`UPDATE sb.mixed SET name = 'x' WHERE TRUE`)).rejects.toThrow(refusal);
    await expect(bq.query(`MERGE sb.mixed m USING (SELECT 2 AS id) s ON m.id = s.id WHEN MATCHED THEN DELETE`)).rejects.toThrow(refusal);
    expect((await bq.query('SELECT id, name FROM sb.mixed ORDER BY id'))[0]).toEqual([
      { id: 1, name: 'streamed' }, { id: 2, name: 'streamed' }, { id: 10, name: 'changed' },
    ]);
  });

  it('copy jobs copy managed storage only: a table of buffered rows copies as empty (twice, WRITE_EMPTY), DML rows are copied', async () => {
    const [src] = await ds.createTable('copy_src', { schema: SCHEMA });
    const [dst] = await ds.createTable('copy_dst', { schema: SCHEMA });
    await src.insert([{ id: 1, name: 'a' }]);
    const [first] = await src.copy(dst);
    expect(first.status?.state).toBe('DONE');
    expect(first.statistics?.copy?.copiedRows ?? '0').toBe('0');
    // The destination stayed empty, so a second WRITE_EMPTY copy succeeds (the upstream suite's sequence).
    const [again] = await dst.copyFrom(src);
    expect(again.status?.errorResult).toBeUndefined();
    expect(await count('copy_dst')).toBe(0);
    await bq.query(`INSERT sb.copy_src (id, name) VALUES (2, 'dml')`);
    await src.copy(dst, { writeDisposition: 'WRITE_TRUNCATE' });
    expect((await bq.query('SELECT id, name FROM sb.copy_dst'))[0]).toEqual([{ id: 2, name: 'dml' }]);
  });

  it('extract jobs write managed storage only', async () => {
    const [t] = await ds.createTable('extract_src', { schema: SCHEMA });
    await t.insert([{ id: 1, name: 'streamed' }]);
    await bq.query(`INSERT sb.extract_src (id, name) VALUES (2, 'dml')`);
    const out = join(mkdtempSync(join(tmpdir(), 'sb-extract-')), 'rows.json');
    const [job] = await bq.createJob({
      configuration: { extract: { sourceTable: { projectId: 'sb-p', datasetId: 'sb', tableId: 'extract_src' }, destinationUris: [`file://${out}`], destinationFormat: 'NEWLINE_DELIMITED_JSON' } },
    });
    await job.promise();
    expect(readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l))).toEqual([{ id: '2', name: 'dml' }]);
  });

  it('with the buffer turned off, streamed rows are counted and copied at once', async () => {
    const client = new BigQuery({ projectId: 'sb-p', apiEndpoint: off.url, authClient: fakeAuth() });
    const [d] = await client.createDataset('sb');
    const [src] = await d.createTable('src', { schema: SCHEMA });
    await src.insert([{ id: 1, name: 'a' }, { id: 2, name: 'b' }]);
    const [meta] = await src.getMetadata();
    expect(meta.numRows).toBe('2');
    expect(meta.streamingBuffer).toBeUndefined();
    const [dst] = await d.createTable('dst', { schema: SCHEMA });
    await src.copy(dst);
    expect((await client.query('SELECT COUNT(*) AS n FROM sb.dst'))[0][0].n).toBe(2);
  });
});
