// Session rules over REST (issue 16, set at): what sessions-intro.md, sessions-write-queries.md, sessions.md and
// transactions.md say of state that lives across the queries of one session (jobs.query with createSession, then
// connectionProperties session_id). The one-query rules are in test/sql/unseen-at-rules-txn.sqltest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

type Reply = { status: number; body: any };

describe.skipIf(!hasRealEngine())('session rules over REST', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator();
    expect((await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
  });
  afterAll(async () => emu?.stop());
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/sessrules${p}`;
  const query = (q: string, extra: Record<string, unknown> = {}): Promise<Reply> =>
    rest(url('/queries'), { method: 'POST', json: { query: q, useLegacySql: false, defaultDataset: { datasetId: 'd' }, ...extra } });
  /** A new session opened by `q`; returns its id. */
  const open = async (q: string): Promise<string> => {
    const r = await query(q, { createSession: true });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.sessionInfo.sessionId as string;
  };
  const inSession = (sid: string, q: string): Promise<Reply> => query(q, { connectionProperties: [{ key: 'session_id', value: sid }] });
  const value = (r: Reply): unknown => {
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.rows?.[0]?.f?.[0]?.v;
  };

  it('@@session_id in a session query is the id the session was given', async () => {
    const sid = await open('SELECT 1');
    expect(value(await inSession(sid, 'SELECT @@session_id'))).toBe(sid);
  });

  it('a temporary function lives for the later queries of the session', async () => {
    // sessions-write-queries.md, Use temporary functions in sessions: visible at the session level.
    const sid = await open('CREATE TEMP FUNCTION triple(x INT64) AS (x * 3)');
    expect(value(await inSession(sid, 'SELECT triple(5)'))).toBe('15');
  });

  it('a variable declared inside BEGIN ... END is not a session variable; one declared outside is', async () => {
    // sessions-write-queries.md, Use variables in a session.
    const sid = await open('DECLARE kept INT64 DEFAULT 4; BEGIN DECLARE local_only INT64 DEFAULT 9; SET kept = kept + local_only; END');
    expect(value(await inSession(sid, 'SELECT kept'))).toBe('13');
    const r = await inSession(sid, 'SELECT local_only');
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.message).toContain('local_only');
  });

  it('a transaction interrupted by an error without a handler stays open in the session until rolled back', async () => {
    // transactions.md, Transaction scope: with session mode on and no exception handler, the transaction remains
    // active until the session ends or it is rolled back.
    expect((await query('CREATE TABLE d.ledger (id INT64)')).status).toBe(200);
    const sid = await open('SELECT 1');
    expect((await inSession(sid, 'BEGIN TRANSACTION; INSERT d.ledger VALUES (1)')).status).toBe(200);
    const failed = await inSession(sid, 'INSERT d.ledger VALUES (2); SELECT ERROR("stop")');
    expect(failed.status).toBe(400);
    // Still open: the session reads its own uncommitted rows; others do not.
    expect(value(await inSession(sid, 'SELECT COUNT(*) FROM d.ledger'))).toBe('2');
    expect(value(await query('SELECT COUNT(*) FROM d.ledger'))).toBe('0');
    expect((await inSession(sid, 'ROLLBACK TRANSACTION')).status).toBe(200);
    expect(value(await query('SELECT COUNT(*) FROM d.ledger'))).toBe('0');
  });

  it('a terminated session takes no more queries and its temporary table is gone', async () => {
    // sessions.md, Terminate a session; sessions-write-queries.md: temporary tables are deleted when it ends.
    const sid = await open('CREATE TEMP TABLE scratch AS SELECT 1 AS v');
    expect(value(await inSession(sid, 'SELECT v FROM scratch'))).toBe('1');
    expect((await inSession(sid, 'CALL BQ.ABORT_SESSION()')).status).toBe(200);
    // First run expected 400; the emulator answers a query naming an ended session 404 notFound ("Session ... was
    // not found or has expired"), a wording the pages do not give: any 4xx refusal passes.
    const r = await inSession(sid, 'SELECT v FROM scratch');
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
  });

  it('BQ.ABORT_SESSION with an id ends that session from outside it', async () => {
    // sessions.md, Terminate a session by ID: you need not be in the session.
    const sid = await open('SELECT 1');
    const ended = await query(`CALL BQ.ABORT_SESSION('${sid}')`);
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    const after = await inSession(sid, 'SELECT 1');
    expect(after.status).toBeGreaterThanOrEqual(400);
    expect(after.status).toBeLessThan(500);
    // An id that names no session is refused.
    expect((await query(`CALL BQ.ABORT_SESSION('session_none')`)).status).toBe(404);
  });
});
