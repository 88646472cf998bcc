// Sessions and transactions through the real Node client: a query job with
// createSession gets a session id (statistics.sessionInfo); later queries
// name it in connectionProperties and share its temporary tables, variables
// and open transaction; BQ.ABORT_SESSION ends it. A script's own temporary
// table is gone after the script; a restart ends every session.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BigQuery } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAuth } from '../helpers/auth.js';
import { startEmulator, type Emulator } from '../helpers/emulator.js';

describe('sessions through the real client', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'wh-sessions-'));
  let emu: Emulator;
  let bq: BigQuery;

  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    emu = await startEmulator({ dataDir, args: ['--project-id', 'sess'] });
    bq = new BigQuery({ projectId: 'sess', apiEndpoint: emu.url, authClient: fakeAuth() });
    await bq.createDataset('d');
    await bq.query('CREATE TABLE d.t (id INT64, v INT64); INSERT INTO d.t VALUES (1, 10)');
  }, 120_000);
  afterAll(async () => {
    await emu?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const inSession = async (query: string, sessionId: string): Promise<Record<string, unknown>[]> => {
    const [rows] = await bq.query({ query, connectionProperties: [{ key: 'session_id', value: sessionId }] });
    return rows as Record<string, unknown>[];
  };

  it('keeps temporary tables, variables and an open transaction between queries, until BQ.ABORT_SESSION', async () => {
    const [job] = await bq.createQueryJob({ query: 'DECLARE k INT64 DEFAULT 3; CREATE TEMP TABLE kept AS SELECT 5 AS x;', createSession: true });
    await job.getQueryResults();
    const [meta] = await job.getMetadata();
    const sessionId = meta.statistics?.sessionInfo?.sessionId as string;
    expect(sessionId).toBeTruthy();
    expect(await inSession('SELECT x * k AS y FROM kept', sessionId)).toEqual([{ y: 15 }]);
    // A transaction across two queries of the session: invisible to others until COMMIT.
    await inSession('BEGIN TRANSACTION; UPDATE d.t SET v = v + 1 WHERE id = 1', sessionId);
    const [outside] = await bq.query('SELECT v FROM d.t');
    expect(outside).toEqual([{ v: 10 }]);
    expect(await inSession('SELECT v FROM d.t', sessionId)).toEqual([{ v: 11 }]);
    await inSession('COMMIT TRANSACTION', sessionId);
    const [after] = await bq.query('SELECT v FROM d.t');
    expect(after).toEqual([{ v: 11 }]);
    await inSession('CALL BQ.ABORT_SESSION()', sessionId);
    await expect(inSession('SELECT 1', sessionId)).rejects.toThrow(/not found|expired/i);
  });

  it('undoes temporary DDL of a transaction rolled back by a later query, and reads its start time in every query', async () => {
    const [job] = await bq.createQueryJob({ query: 'CREATE TEMP TABLE before_txn AS SELECT 7 AS x;', createSession: true });
    await job.getQueryResults();
    const [meta] = await job.getMetadata();
    const sessionId = meta.statistics?.sessionInfo?.sessionId as string;
    // The transactions page: ROLLBACK abandons all changes made inside, temporary tables created or dropped included;
    // inside a transaction the clock functions read the instant it began.
    const [began] = await inSession('BEGIN TRANSACTION; CREATE TEMP TABLE made_inside AS SELECT 1 AS a; DROP TABLE before_txn; SELECT CURRENT_TIMESTAMP() AS ts', sessionId);
    await new Promise((r) => setTimeout(r, 20));
    const [later] = await inSession('SELECT CURRENT_TIMESTAMP() AS ts, (SELECT COUNT(*) FROM made_inside) AS n', sessionId);
    expect(later).toEqual({ ts: began!['ts'], n: 1 });
    await inSession('ROLLBACK TRANSACTION', sessionId);
    await expect(inSession('SELECT a FROM made_inside', sessionId)).rejects.toThrow(/made_inside/);
    expect(await inSession('SELECT x FROM before_txn', sessionId)).toEqual([{ x: 7 }]);
    const [after] = await inSession('SELECT CURRENT_TIMESTAMP() AS ts', sessionId);
    expect((after!['ts'] as { value: string }).value > (began!['ts'] as { value: string }).value).toBe(true);
    await inSession('CALL BQ.ABORT_SESSION()', sessionId);
  });

  it('keeps a SET @@time_zone for the session\'s later queries, and only for them', async () => {
    const [job] = await bq.createQueryJob({ query: "SET @@time_zone = 'America/Los_Angeles'", createSession: true });
    await job.getQueryResults();
    const [meta] = await job.getMetadata();
    const sessionId = meta.statistics?.sessionInfo?.sessionId as string;
    const sql = "SELECT @@time_zone AS z, FORMAT_TIMESTAMP('%F %H', TIMESTAMP '2024-06-01 00:00:00+00') AS f";
    expect(await inSession(sql, sessionId)).toEqual([{ z: 'America/Los_Angeles', f: '2024-05-31 17' }]);
    expect((await bq.query(sql))[0]).toEqual([{ z: 'UTC', f: '2024-06-01 00' }]);
    await inSession('CALL BQ.ABORT_SESSION()', sessionId);
  });

  it('drops a script\'s temporary table with the script (the same script runs twice)', async () => {
    const script = 'CREATE TEMP TABLE x AS SELECT 1 AS a; SELECT a FROM x;';
    expect((await bq.query(script))[0]).toEqual([{ a: 1 }]);
    expect((await bq.query(script))[0]).toEqual([{ a: 1 }]);
    // Nothing of it reached the catalog.
    const [datasets] = await bq.getDatasets({ all: true });
    expect(datasets.map((d) => d.id)).toEqual(['d']);
  });

  it('rolls back a transaction the session left open when the emulator restarts (sessions live in memory)', async () => {
    const [job] = await bq.createQueryJob({ query: 'BEGIN TRANSACTION; DELETE FROM d.t WHERE TRUE;', createSession: true });
    await job.getQueryResults();
    const [meta] = await job.getMetadata();
    const sessionId = meta.statistics?.sessionInfo?.sessionId as string;
    expect(await inSession('SELECT COUNT(*) AS n FROM d.t', sessionId)).toEqual([{ n: 0 }]);
    await emu.stop();
    emu = await startEmulator({ dataDir, args: ['--project-id', 'sess'] });
    bq = new BigQuery({ projectId: 'sess', apiEndpoint: emu.url, authClient: fakeAuth() });
    expect((await bq.query('SELECT COUNT(*) AS n FROM d.t'))[0]).toEqual([{ n: 1 }]);
    await expect(inSession('SELECT 1', sessionId)).rejects.toThrow(/not found|expired/i);
  }, 120_000);
});
