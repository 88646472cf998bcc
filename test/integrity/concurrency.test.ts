// Several clients at once against the real emulator (gateway + engine
// processes), as a parallel CI suite would use it, with invariants checked
// at the end of each workload:
//   - every row acknowledged by insertAll or the Storage Write API is in the
//     table exactly once, whatever DML ran on it meanwhile;
//   - concurrent UPDATEs of one row lose no increment;
//   - a table that always existed is never reported missing while it is
//     replaced, read and written concurrently, and readers never see a mix
//     of two replacements;
//   - transactions move money between accounts: every snapshot any reader
//     takes balances, across tables (a ledger written in the same commits).
// Bounded in time (a few seconds of load per workload).
import * as grpc from '@grpc/grpc-js';
import { adapt, managedwriter } from '@google-cloud/bigquery-storage';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAuth } from '../helpers/auth.js';
import { startEmulator, type Emulator } from '../helpers/emulator.js';
import { Client, PROJECT } from './client.js';

const LOAD_MS = Number(process.env.INTEGRITY_LOAD_MS) || 5000;

let emu: Emulator;
let c: Client;

beforeAll(async () => {
  process.env['METADATA_SERVER_DETECTION'] = 'none';
  emu = await startEmulator({ args: ['--project-id', PROJECT] });
  c = new Client(emu);
  expect((await c.call('POST', '/datasets', { datasetReference: { datasetId: 'd' } })).ok).toBe(true);
}, 120_000);
afterAll(async () => {
  await emu?.stop();
});

/** Runs `n` copies of `fn` until LOAD_MS passed (each gets its index); resolves when all stopped. */
async function during(n: number, fn: (i: number) => Promise<void>, ms = LOAD_MS): Promise<void> {
  const until = Date.now() + ms;
  await Promise.all(Array.from({ length: n }, async (_, i) => {
    while (Date.now() < until) await fn(i);
  }));
}

const ok = <T>(r: { ok: boolean; value?: T; error?: string }): T => {
  if (!r.ok) throw new Error(`refused: ${r.error}`);
  return r.value as T;
};

describe('concurrent clients', () => {
  it('streaming rows (insertAll and the Storage Write API) all survive DML on their table, exactly once', async () => {
    ok(await c.query('CREATE TABLE d.s (id INT64, v INT64, src STRING); INSERT INTO d.s SELECT x, 0, "seed" FROM UNNEST(GENERATE_ARRAY(1, 2000)) AS x'));
    const writer = new managedwriter.WriterClient({
      apiEndpoint: '127.0.0.1', port: emu.grpcPort, sslCreds: grpc.credentials.createInsecure(), authClient: fakeAuth(), projectId: PROJECT,
    } as unknown as ConstructorParameters<typeof managedwriter.WriterClient>[0]);
    const streamId = `projects/${PROJECT}/datasets/d/tables/s/streams/_default`;
    const ws = await writer.getWriteStream({ streamId, view: 'FULL' as never });
    const jw = new managedwriter.JSONWriter({ connection: await writer.createStreamConnection({ streamId }), protoDescriptor: adapt.convertStorageSchemaToProto2Descriptor(ws.tableSchema!, 'root') });
    const acked = new Set<number>();
    const attempted = new Set<number>();
    let next = 100_000;
    let updates = 0;
    let failures: string[] = [];
    await Promise.all([
      during(3, async () => {
        const ids = Array.from({ length: 50 }, () => next++);
        ids.forEach((id) => attempted.add(id));
        const r = await c.insertAll('s', ids.map((id) => ({ id, v: 0, src: 'insertAll' })));
        if (r.ok) ids.forEach((id) => acked.add(id));
        else failures.push(`insertAll: ${r.error}`);
      }),
      during(1, async () => {
        const ids = Array.from({ length: 40 }, () => next++);
        ids.forEach((id) => attempted.add(id));
        const r = await jw.appendRows(ids.map((id) => ({ id, v: 0, src: 'write' }))).getResult();
        if (!r.error && !r.rowErrors?.length) ids.forEach((id) => acked.add(id));
        else failures.push(`appendRows: ${JSON.stringify(r.error ?? r.rowErrors)}`);
      }),
      during(3, async () => {
        // Rows insertAll streamed stay in the streaming buffer, which DML may not change (as on the service);
        // the Storage Write API's rows and the seed rows it may.
        const r = await c.query("UPDATE d.s SET v = v + 1 WHERE MOD(id, 2) = 0 AND src != 'insertAll'");
        if (r.ok) updates++;
        else failures.push(`UPDATE: ${r.error}`);
      }),
    ]);
    jw.close();
    writer.close();
    expect(failures).toEqual([]);
    const dupes = ok(await c.column('SELECT COUNT(*) FROM (SELECT id FROM d.s GROUP BY id HAVING COUNT(*) > 1)'));
    expect(dupes).toEqual(['0']);
    const present = new Set(ok(await c.column('SELECT id FROM d.s WHERE id >= 100000')).map(Number));
    const lost = [...acked].filter((id) => !present.has(id));
    const phantom = [...present].filter((id) => !attempted.has(id));
    console.log(`streams under DML: ${acked.size} rows acknowledged, ${present.size} present, ${lost.length} lost, ${updates} UPDATE statements`);
    expect(lost).toEqual([]);
    expect(phantom).toEqual([]);
    expect(acked.size).toBeGreaterThan(1000);
    expect(updates).toBeGreaterThan(3);
    // Seed rows: odd ids untouched; even ids saw every UPDATE (each read all rows committed before it).
    expect(ok(await c.column(`SELECT COUNTIF(MOD(id, 2) = 1 AND v != 0) + COUNTIF(MOD(id, 2) = 0 AND v != ${updates}) FROM d.s WHERE src = 'seed'`))).toEqual(['0']);
  }, 120_000);

  it('concurrent UPDATEs of one row lose no increment', async () => {
    ok(await c.query('CREATE TABLE d.counter (id INT64, v INT64); INSERT INTO d.counter VALUES (1, 0)'));
    const affected: number[] = [];
    await Promise.all(Array.from({ length: 8 }, async () => {
      for (let k = 0; k < 25; k++) affected.push(Number(ok(await c.query('UPDATE d.counter SET v = v + 1 WHERE id = 1')).numDmlAffectedRows));
    }));
    expect(affected.length).toBe(200);
    expect(affected.every((n) => n === 1)).toBe(true);
    expect(ok(await c.column('SELECT v FROM d.counter'))).toEqual(['200']);
  }, 120_000);

  it('a table replaced, read and written concurrently is never missing, and never half one replacement and half another', async () => {
    ok(await c.query('CREATE TABLE d.r AS SELECT x AS id, 0 AS gen FROM UNNEST(GENERATE_ARRAY(1, 500)) AS x'));
    let gen = 0;
    let missing = 0;
    let mixed = 0;
    let reads = 0;
    let replaces = 0;
    const other: string[] = [];
    const notFound = (e: string): boolean => /Not found: Table/.test(e);
    await Promise.all([
      during(2, async () => {
        const g = ++gen;
        const r = await c.query(`CREATE OR REPLACE TABLE d.r AS SELECT x AS id, ${g} AS gen FROM UNNEST(GENERATE_ARRAY(1, 500)) AS x`);
        if (r.ok) replaces++;
        else if (notFound(r.error)) missing++;
        else other.push(`replace: ${r.error}`);
      }),
      during(3, async () => {
        // Rows streamed in (gen -1) live until the next replace; a replacement's rows are all of one gen.
        const r = await c.query('SELECT COUNT(DISTINCT IF(gen >= 0, gen, NULL)), COUNTIF(gen >= 0) FROM d.r');
        if (!r.ok) return void (notFound(r.error) ? missing++ : other.push(`read: ${r.error}`));
        reads++;
        const [g, n] = (r.value.rows[0].f as { v: string }[]).map((x) => Number(x.v));
        if (g !== 1 || n !== 500) mixed++;
      }),
      during(1, async () => {
        const r = await c.insertAll('r', [{ id: -1, gen: -1 }]);
        if (!r.ok) void (notFound(r.error) ? missing++ : other.push(`insertAll: ${r.error}`));
      }),
      during(1, async () => {
        const r = await c.call('GET', '/datasets/d/tables/r');
        if (!r.ok) void (r.status === 404 ? missing++ : other.push(`tables.get: ${r.error}`));
      }),
    ]);
    console.log(`replaces: ${replaces} replaces, ${reads} reads, ${missing} missing-table observations, ${mixed} mixed reads`);
    expect(other).toEqual([]);
    expect(missing).toBe(0);
    expect(mixed).toBe(0);
    expect(replaces).toBeGreaterThan(5);
  }, 120_000);

  it('transactions move money between accounts: every snapshot balances, across two tables', async () => {
    ok(await c.query(`CREATE TABLE d.acct (id INT64, bal INT64); INSERT INTO d.acct SELECT x, 1000 FROM UNNEST(GENERATE_ARRAY(1, 10)) AS x;
      CREATE TABLE d.ledger (src INT64, dst INT64, amt INT64)`));
    let committed = 0;
    let aborted = 0;
    let unbalanced = 0;
    let reads = 0;
    const other: string[] = [];
    const balanceCheck = `SELECT (SELECT SUM(bal) FROM d.acct),
      (SELECT COUNTIF(a.bal != 1000 + COALESCE(l.net, 0)) FROM d.acct AS a LEFT JOIN
        (SELECT id, SUM(delta) AS net FROM (SELECT src AS id, -amt AS delta FROM d.ledger UNION ALL SELECT dst, amt FROM d.ledger) GROUP BY id) AS l USING (id))`;
    await Promise.all([
      during(4, async (i) => {
        const from = 1 + ((i * 3 + committed) % 10);
        const to = 1 + ((from + 4) % 10);
        const r = await c.query(`BEGIN TRANSACTION;
          UPDATE d.acct SET bal = bal - 7 WHERE id = ${from};
          UPDATE d.acct SET bal = bal + 7 WHERE id = ${to};
          INSERT INTO d.ledger VALUES (${from}, ${to}, 7);
          COMMIT TRANSACTION;`);
        if (r.ok) committed++;
        else if (/Transaction is aborted due to concurrent update/.test(r.error)) aborted++;
        else other.push(`transfer: ${r.error}`);
      }),
      during(3, async () => {
        const r = await c.query(balanceCheck);
        if (!r.ok) return void other.push(`check: ${r.error}`);
        reads++;
        const [sum, bad] = (r.value.rows[0].f as { v: string }[]).map((x) => Number(x.v));
        if (sum !== 10_000 || bad !== 0) unbalanced++;
      }),
      during(1, async () => {
        // Two reads in one transaction see one snapshot.
        const r = await c.query('BEGIN TRANSACTION; CREATE TEMP TABLE seen AS SELECT COUNT(*) AS n FROM d.ledger; SELECT (SELECT n FROM seen) = (SELECT COUNT(*) FROM d.ledger); COMMIT TRANSACTION;');
        if (!r.ok) return void other.push(`repeatable read: ${r.error}`);
        reads++;
        if (r.value.rows?.[0]?.f[0]?.v !== 'true') unbalanced++;
      }),
    ]);
    console.log(`transactions: ${committed} committed, ${aborted} aborted by conflicts, ${reads} reads, ${unbalanced} unbalanced`);
    expect(other).toEqual([]);
    expect(unbalanced).toBe(0);
    expect(committed).toBeGreaterThan(3);
    expect(ok(await c.column('SELECT COUNT(*) FROM d.ledger'))).toEqual([String(committed)]);
    const final = ok(await c.query(balanceCheck)).rows[0].f.map((x: { v: string }) => x.v);
    expect(final).toEqual(['10000', '0']);
  }, 120_000);
});
