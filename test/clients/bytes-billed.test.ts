// Bytes processed and billed through the real Node client, as the service
// reports them: every statement that reads a table (SELECT, CTAS, INSERT ...
// SELECT, UPDATE, DELETE, MERGE, EXPORT DATA) reports the columns it reads;
// UPDATE, DELETE and MERGE also the whole target table; billing rounds each
// table's bytes up to a whole MB, at least 10 MB per table read, and a script
// bills what its statements bill. Values bill their logical sizes (STRING 2 +
// its UTF-8 bytes, NULL nothing); a run of a clustered table bills only the
// blocks its clustering filter keeps. maximumBytesBilled fails a job that would
// bill more before it runs (reason bytesBilledLimitExceeded), and changes nothing.
import { BigQuery } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const MB = 1024 * 1024;

describe('bytes processed and billed through the Node client', () => {
  let emu: Emulator;
  let bq: BigQuery;

  beforeAll(async () => {
    emu = await startEmulator({ args: ['--project-id', 'bill-p'] });
    bq = new BigQuery({ projectId: 'bill-p', apiEndpoint: emu.url, authClient: fakeAuth() });
    await bq.createDataset('b');
    // 1,000 rows: id, k (INT64, 8 bytes each), v (FLOAT64, 8 bytes).
    await bq.query('CREATE TABLE b.src AS SELECT id, MOD(id, 10) AS k, id / 7 AS v FROM UNNEST(GENERATE_ARRAY(1, 1000)) AS id');
    await bq.query('CREATE TABLE b.dst (k INT64, n INT64)');
  });
  afterAll(async () => emu?.stop());

  /** Runs a job to the end; its statistics as jobs.get reports them. */
  const stats = async (query: string, opts: Record<string, unknown> = {}): Promise<{ processed: string; billed: string; type: string }> => {
    const [job] = await bq.createQueryJob({ query, ...opts });
    await job.getQueryResults();
    const [meta] = await job.getMetadata();
    return { processed: meta.statistics.totalBytesProcessed, billed: meta.statistics.query.totalBytesBilled, type: meta.statistics.query.statementType };
  };

  it('reports the columns each statement reads, billed at least 10 MB per table', async () => {
    expect(await stats('SELECT 1')).toEqual({ processed: '0', billed: '0', type: 'SELECT' });
    expect(await stats('SELECT k FROM b.src')).toEqual({ processed: '8000', billed: String(10 * MB), type: 'SELECT' });
    expect(await stats('CREATE TABLE b.agg AS SELECT k, SUM(v) AS s FROM b.src GROUP BY k')).toEqual({ processed: '16000', billed: String(10 * MB), type: 'CREATE_TABLE_AS_SELECT' });
    // INSERT ... SELECT reads only the columns its query uses; INSERT VALUES reads nothing.
    expect(await stats('INSERT b.dst SELECT k, 1 FROM b.src WHERE id <= 3')).toEqual({ processed: '16000', billed: String(10 * MB), type: 'INSERT' });
    expect(await stats('INSERT b.dst VALUES (7, 7)')).toEqual({ processed: '0', billed: '0', type: 'INSERT' });
    // UPDATE / DELETE: the whole target table (4 rows x 16 bytes) as it was when the statement began.
    expect(await stats('UPDATE b.dst SET n = n + 1 WHERE k = 1')).toEqual({ processed: '64', billed: String(10 * MB), type: 'UPDATE' });
    expect(await stats('DELETE b.dst WHERE k = 7')).toEqual({ processed: '64', billed: String(10 * MB), type: 'DELETE' });
    // MERGE: the source's columns it uses (id, k: 16,000) and the whole target (3 x 16): two tables, 10 MB each.
    expect(await stats('MERGE b.dst t USING (SELECT k FROM b.src WHERE id < 3) s ON t.k = s.k WHEN MATCHED THEN UPDATE SET n = 0')).toEqual({
      processed: '16048',
      billed: String(20 * MB),
      type: 'MERGE',
    });
    // A script: the sum over its statements (each a child job billed on its own).
    expect(await stats('SELECT k FROM b.src; SELECT v FROM b.src')).toEqual({ processed: '16000', billed: String(20 * MB), type: 'SCRIPT' });
    // A dry run estimates what the statement would read and bills nothing.
    const [dry] = await bq.createQueryJob({ query: 'CREATE TABLE b.never AS SELECT v FROM b.src', dryRun: true });
    expect(dry.metadata.statistics.totalBytesProcessed).toBe('8000');
    expect(dry.metadata.statistics.query.totalBytesBilled).toBe('0');
  });

  it('strings bill 2 bytes and their UTF-8 bytes, NULLs nothing; a clustered run only the blocks it scans', async () => {
    // 'é' x 1..10 (2 bytes each) and NULL every 5th row; 'n' NULL every 2nd row.
    await bq.query("CREATE TABLE b.txt AS SELECT IF(MOD(id, 5) = 0, NULL, REPEAT('é', MOD(id, 10) + 1)) AS s, IF(MOD(id, 2) = 0, NULL, id) AS n FROM UNNEST(GENERATE_ARRAY(1, 1000)) AS id");
    // 800 strings, 2 + 2 x (MOD(id, 10) + 1) bytes each; 500 INT64s.
    let strings = 0;
    for (let id = 1; id <= 1000; id++) if (id % 5 !== 0) strings += 2 + 2 * ((id % 10) + 1);
    expect(await stats('SELECT s, n FROM b.txt')).toMatchObject({ processed: String(strings + 500 * 8) });
    const [dry] = await bq.createQueryJob({ query: 'SELECT s FROM b.txt', dryRun: true });
    expect(dry.metadata.statistics.totalBytesProcessed).toBe(String(strings));
    // Four row groups of 65,536 rows, one value of k each (the table is stored sorted by its clustering column).
    await bq.query('CREATE TABLE b.clu CLUSTER BY k AS SELECT MOD(id, 4) AS k, id AS v FROM UNNEST(GENERATE_ARRAY(1, 262144)) AS id');
    expect(await stats('SELECT SUM(v) AS s FROM b.clu WHERE k = 3')).toMatchObject({ processed: String(65536 * 16) });
    const [est] = await bq.createQueryJob({ query: 'SELECT SUM(v) AS s FROM b.clu WHERE k = 3', dryRun: true });
    expect(est.metadata.statistics.totalBytesProcessed).toBe(String(262144 * 16));
  });

  it('maximumBytesBilled fails a job that would bill more, before it changes anything', async () => {
    const before = (await bq.query('SELECT COUNT(*) AS n FROM b.dst'))[0][0].n;
    const err = await bq.query({ query: 'INSERT b.dst SELECT k, 2 FROM b.src', maximumBytesBilled: String(10 * MB - 1) }).then(
      () => undefined,
      (e: unknown) => e as { message: string; errors?: { reason: string }[] },
    );
    expect(err?.message).toContain(`Query exceeded limit for bytes billed: ${10 * MB - 1}. ${10 * MB} or higher required.`);
    expect(err?.errors?.[0]?.reason).toBe('bytesBilledLimitExceeded');
    expect((await bq.query('SELECT COUNT(*) AS n FROM b.dst'))[0][0].n).toBe(before);
    // At the limit it runs.
    expect((await stats('SELECT k FROM b.src', { maximumBytesBilled: String(10 * MB) })).billed).toBe(String(10 * MB));
    // A dry run reports its estimate whatever the limit.
    const [dry] = await bq.createQueryJob({ query: 'SELECT k FROM b.src', dryRun: true, maximumBytesBilled: '1000' });
    expect(dry.metadata.statistics.totalBytesProcessed).toBe('8000');
  });
});
