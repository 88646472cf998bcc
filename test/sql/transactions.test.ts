// Transactions, statement snapshots and sessions through the SQL pipeline as
// the engine runs it (a SessionCatalog per lone query, one per session):
// BEGIN/COMMIT/ROLLBACK, snapshot isolation, serialized mutations, conflict
// errors, rows appended under a DML kept, temporary tables scoped to their
// script or session.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { TableData } from '../../src/storage/table-data.js';
import { Sessions } from '../../src/engine/sessions.js';
import { SessionCatalog } from '../../src/engine/session-catalog.js';
import { runQuery } from '../../src/planner/run.js';
import type { QueryResult, SessionState } from '../../src/planner/api.js';
import { getValue, vectorFromValues } from '../../src/types/vector.js';
import { T } from '../../src/types/types.js';
import { openHarness, run, type Harness } from './harness.js';
import { statementClockMicros } from '../../src/storage/commit-clock.js';

const P = 'txn-proj';
let h: Harness;
let sessions: Sessions;

beforeAll(async () => {
  h = await openHarness();
  sessions = new Sessions(h.catalog, h.storage);
  await h.catalog.createDataset(P, 'd', { location: 'US' }, true);
});
afterAll(async () => {
  await h?.close();
});

const q = (sql: string): Promise<QueryResult> => run(h, sql, { projectId: P, defaultDataset: { projectId: P, datasetId: 'd' } });

/** A query of session `id` (made by its first query). */
function inSession(id: string, sql: string): Promise<QueryResult> {
  return sessions.run(id, P, true, (catalog: SessionCatalog, session: SessionState) =>
    runQuery({
      sql,
      projectId: P,
      defaultDataset: { projectId: P, datasetId: 'd' },
      params: { named: new Map(), positional: [] },
      catalog,
      jobId: 'job_session',
      signal: new AbortController().signal,
      dryRun: false,
      nowMicros: statementClockMicros(),
      sessionUser: 'tester@example.com',
      session,
    }),
  );
}

/** The single column of a result, as plain values. */
const col = (r: QueryResult): unknown[] => r.batches.flatMap((b) => Array.from({ length: b.length }, (_, i) => getValue(b.columns[0]!, i)));
const errorOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected an error');
};

describe('multi-statement transactions', () => {
  it('commit together, roll back together, and roll back on an error without a handler', async () => {
    await q('CREATE TABLE d.acct (id INT64, bal INT64); INSERT INTO d.acct VALUES (1, 100), (2, 100)');
    await q(`BEGIN TRANSACTION;
      UPDATE d.acct SET bal = bal - 30 WHERE id = 1;
      UPDATE d.acct SET bal = bal + 30 WHERE id = 2;
      COMMIT TRANSACTION;`);
    expect(col(await q('SELECT bal FROM d.acct ORDER BY id'))).toEqual([70n, 130n]);
    await q(`BEGIN TRANSACTION; DELETE FROM d.acct WHERE TRUE; INSERT INTO d.acct VALUES (9, 9); ROLLBACK TRANSACTION;`);
    expect(col(await q('SELECT id FROM d.acct ORDER BY id'))).toEqual([1n, 2n]);
    // An error inside with no handler: the script fails, nothing it did in the transaction stays.
    expect(await errorOf(q(`BEGIN TRANSACTION; UPDATE d.acct SET bal = 0 WHERE TRUE; SELECT 1/0; COMMIT TRANSACTION;`))).toMatch(/division by zero/);
    expect(col(await q('SELECT bal FROM d.acct ORDER BY id'))).toEqual([70n, 130n]);
    // With a handler, the handler decides (here: roll back) and the script succeeds.
    const r = await q(`BEGIN
        BEGIN TRANSACTION;
        INSERT INTO d.acct VALUES (3, 1);
        SELECT 1/0;
        COMMIT TRANSACTION;
      EXCEPTION WHEN ERROR THEN
        ROLLBACK TRANSACTION;
        SELECT @@error.message AS m;
      END;`);
    expect(String(col(r)[0])).toMatch(/division by zero/);
    expect(col(await q('SELECT COUNT(*) FROM d.acct'))).toEqual([2n]);
    // A script that ends inside a transaction rolls it back.
    await q('BEGIN TRANSACTION; INSERT INTO d.acct VALUES (4, 4);');
    expect(col(await q('SELECT COUNT(*) FROM d.acct'))).toEqual([2n]);
  });

  it('see their own changes, and a snapshot of everything else as of BEGIN', async () => {
    await q('CREATE TABLE d.a (x INT64); CREATE TABLE d.b (x INT64); INSERT INTO d.a VALUES (1); INSERT INTO d.b VALUES (1)');
    await inSession('s-snap', 'BEGIN TRANSACTION; INSERT INTO d.a VALUES (2)');
    // Others commit to both tables meanwhile.
    await q('INSERT INTO d.a VALUES (10); INSERT INTO d.b VALUES (10)');
    // The transaction sees its own insert, not theirs, in both tables (b was not read before the others wrote).
    expect(col(await inSession('s-snap', 'SELECT SUM(x) FROM d.a'))).toEqual([3n]);
    expect(col(await inSession('s-snap', 'SELECT SUM(x) FROM d.b'))).toEqual([1n]);
    // Others do not see the uncommitted insert.
    expect(col(await q('SELECT SUM(x) FROM d.a'))).toEqual([11n]);
    await inSession('s-snap', 'COMMIT TRANSACTION');
    expect(col(await q('SELECT SUM(x) FROM d.a'))).toEqual([13n]);
  });

  it('conflict: a second transaction mutating the same table is aborted; a lone DML statement waits its turn', async () => {
    await q('CREATE TABLE d.c (id INT64, v INT64); INSERT INTO d.c VALUES (1, 0)');
    await inSession('s-c1', 'BEGIN TRANSACTION; UPDATE d.c SET v = v + 1 WHERE id = 1');
    const msg = await errorOf(inSession('s-c2', 'BEGIN TRANSACTION; UPDATE d.c SET v = v + 100 WHERE id = 1; COMMIT TRANSACTION'));
    expect(msg).toMatch(/^Transaction is aborted due to concurrent update against table txn-proj:d\.c\. Transaction ID: /);
    // The aborted transaction rolled back: its session can go on.
    expect(await inSession('s-c2', 'SELECT 1')).toBeDefined();
    // A lone UPDATE waits until the transaction ends, then sees its change.
    let done = false;
    const waiting = q('UPDATE d.c SET v = v * 10 WHERE id = 1').then((r) => ((done = true), r));
    await new Promise((r) => setTimeout(r, 30));
    expect(done).toBe(false);
    await inSession('s-c1', 'COMMIT TRANSACTION');
    expect((await waiting).numDmlAffectedRows).toBe(1);
    expect(col(await q('SELECT v FROM d.c'))).toEqual([10n]);
  });

  it('refuses permanent DDL inside a transaction with the service\'s words, and allows temporary tables', async () => {
    const msg = await errorOf(q('BEGIN TRANSACTION; CREATE TABLE d.nope (x INT64); COMMIT TRANSACTION;'));
    expect(msg).toMatch(/^DDL statements are not supported in a transaction, except for those creating or droping temporary tables or temporary functions\. at \[1:20\]/);
    expect(h.catalog.getTable({ projectId: P, datasetId: 'd', tableId: 'nope' })).toBeUndefined();
    const r = await q('BEGIN TRANSACTION; CREATE TEMP TABLE tt AS SELECT 5 AS x; SELECT x FROM tt; COMMIT TRANSACTION;');
    expect(col(r)).toEqual([5n]);
  });
});

describe('mutations and appends', () => {
  it('keep rows appended while a DML statement ran (it mutates the rows it read; the others stay, once)', async () => {
    await q('CREATE TABLE d.s (id INT64, v INT64); INSERT INTO d.s SELECT x, 0 FROM UNNEST(GENERATE_ARRAY(1, 1000)) AS x');
    const id = { projectId: P, datasetId: 'd', tableId: 's' };
    // An insert commits after the UPDATE read the table and before it commits (the moment it hands storage its change).
    const original = TableData.prototype.change;
    const change = vi.spyOn(TableData.prototype, 'change');
    let appended = false;
    change.mockImplementation(async function (this: TableData, ...args: Parameters<TableData['change']>) {
      if (!appended) {
        appended = true;
        await h.catalog.appendRows(id, [{ length: 2, columns: [vectorFromValues(T.INT64, [2002n, 2004n]), vectorFromValues(T.INT64, [0n, 0n])] }]);
      }
      return original.apply(this, args);
    });
    try {
      expect((await q('UPDATE d.s SET v = v + 1 WHERE MOD(id, 2) = 0')).numDmlAffectedRows).toBe(500);
    } finally {
      change.mockRestore();
    }
    expect(appended).toBe(true);
    const r = await q('SELECT COUNT(*), COUNTIF(v = 1), COUNT(DISTINCT id) FROM d.s');
    const b = r.batches[0]!;
    // The appended even ids are there once, unchanged: the UPDATE did not see them.
    expect([0, 1, 2].map((c) => getValue(b.columns[c]!, 0))).toEqual([1002n, 500n, 1002n]);
  });

  it('serialize concurrent UPDATEs of one row: no lost update', async () => {
    await q('CREATE TABLE d.n (id INT64, v INT64); INSERT INTO d.n VALUES (1, 0)');
    await Promise.all(Array.from({ length: 20 }, () => q('UPDATE d.n SET v = v + 1 WHERE id = 1')));
    expect(col(await q('SELECT v FROM d.n'))).toEqual([20n]);
  });
});

describe('temporary tables and sessions', () => {
  it('a script\'s temporary table ends with it; the same script runs again', async () => {
    const script = 'CREATE TEMP TABLE x AS SELECT 1 AS a; SELECT a FROM x;';
    expect(col(await q(script))).toEqual([1n]);
    expect(col(await q(script))).toEqual([1n]);
    expect(await errorOf(q('SELECT a FROM x'))).toMatch(/not found|Unrecognized|x/i);
  });

  it('a session keeps its temporary tables, variables and open transaction across queries until it is aborted', async () => {
    await inSession('s-keep', 'DECLARE n INT64 DEFAULT 3; CREATE TEMP TABLE kept AS SELECT 7 AS a;');
    expect(col(await inSession('s-keep', 'SELECT a * n FROM kept'))).toEqual([21n]);
    await inSession('s-keep', 'CALL BQ.ABORT_SESSION()');
    expect(await errorOf(sessions.run('s-keep', P, false, async () => 0))).toMatch(/Session s-keep was not found/);
  });

  it('@@session_id is the session\'s id in each of its queries; @@query_label set in one query is read in the next', async () => {
    expect(col(await inSession('s-ids', 'SELECT @@session_id'))).toEqual(['s-ids']);
    await inSession('s-ids', "SET @@query_label = 'k:v'");
    expect(col(await inSession('s-ids', 'SELECT @@query_label'))).toEqual(['k:v']);
    // SET @@location is the first statement of its own query, not of the session.
    expect(col(await inSession('s-ids', "SET @@location = 'US'; SELECT @@location"))).toEqual(['US']);
    expect(col(await q('SELECT @@session_id IS NULL'))).toEqual([true]);
  });

  // Set al (sql48), written before the first run from sessions-write-queries.md (Use variables in a session: a variable
  // declared inside BEGIN...END is not session-scoped; a session variable can be set inside a block; temporary
  // functions are visible at the session level) and transactions.md (Transaction scope: with session mode and no
  // exception handler, the transaction stays active after an error until the session ends or it is rolled back).
  it('a variable declared in a BEGIN...END block is not a session variable; one set in a block keeps the value', async () => {
    await inSession('s-scope', 'DECLARE top_v INT64 DEFAULT 1; BEGIN DECLARE inner_v INT64 DEFAULT 2; SET top_v = top_v + inner_v; END;');
    expect(col(await inSession('s-scope', 'SELECT top_v'))).toEqual([3n]);
    expect(await errorOf(inSession('s-scope', 'SELECT inner_v'))).toMatch(/Unrecognized name: inner_v/);
    await inSession('s-scope', 'BEGIN SET top_v = 10; END;');
    expect(col(await inSession('s-scope', 'SELECT top_v'))).toEqual([10n]);
  });

  it('a temporary function made by one query of a session is called by the next', async () => {
    await inSession('s-fn', 'CREATE TEMP FUNCTION add_ten(x INT64) AS (x + 10);');
    expect(col(await inSession('s-fn', 'SELECT add_ten(5)'))).toEqual([15n]);
  });

  it('in a session, an error without a handler leaves the transaction open until ROLLBACK', async () => {
    await q('CREATE TABLE d.sess_err (n INT64)');
    expect(await errorOf(inSession('s-err', "BEGIN TRANSACTION; INSERT d.sess_err VALUES (1); SELECT ERROR('stop');"))).toMatch(/stop/);
    // Still in the transaction: its own write is visible to the session, not outside it.
    expect(col(await inSession('s-err', 'SELECT COUNT(*) FROM d.sess_err'))).toEqual([1n]);
    expect(col(await q('SELECT COUNT(*) FROM d.sess_err'))).toEqual([0n]);
    await inSession('s-err', 'ROLLBACK TRANSACTION');
    expect(col(await inSession('s-err', 'SELECT COUNT(*) FROM d.sess_err'))).toEqual([0n]);
  });

  it('refuses a second query of a session while one runs', async () => {
    await inSession('s-busy', 'SELECT 1');
    const slow = inSession('s-busy', 'SELECT COUNT(*) FROM UNNEST(GENERATE_ARRAY(1, 300000))');
    expect(await errorOf(inSession('s-busy', 'SELECT 2'))).toBe('Concurrent jobs in the same session are not allowed');
    await slow;
  });
});
