// kill -9 of both processes (the gateway's process group: gateway and engine)
// at a random instant while every kind of write runs at once, then a restart
// on the same data dir and the invariants of each kind checked, cycle after
// cycle (every kind is under way in every cycle):
//   insertAll, INSERT        every acknowledged row present once, nothing never sent
//   UPDATE, MERGE            the counter holds every acknowledged increment (and at most the ones sent)
//   DELETE                   every acknowledged delete gone, every row never deleted there
//   TRUNCATE + INSERT (txn), CREATE OR REPLACE TABLE AS SELECT, copy and load jobs with WRITE_TRUNCATE
//                            the table exists with one whole generation, the last acknowledged or a later one sent
//   CREATE TABLE, DROP TABLE each acknowledged create there unless a drop was sent, each acknowledged drop gone
//   ALTER TABLE ADD COLUMN   every acknowledged column in the schema
//   transaction commits      the accounts balance against the ledger written in the same commits
//   Storage Write            each PENDING stream's rows (created, appended at offset 0, finalized, committed
//                            by BatchCommitWriteStreams) present once when its commit was acknowledged, whole
//                            or not at all otherwise, and still once after the commit is retried after the restart
//   CDC (Storage Write)      UPSERTs to the default stream of a table with a primary key: each key's row once (an
//                            append applied at most once), the two keys every append changes of one generation (an
//                            append whole), at least the last acknowledged; each acknowledged append's own key there
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killGroup, ROOT, startEmulator, type Emulator } from '../helpers/emulator.js';
import { Client, PROJECT, type Outcome } from './client.js';

const CYCLES = Number(process.env.INTEGRITY_CRASH_CYCLES) || 20;
/** Cycles beyond CYCLES while some kind has had no write acknowledged yet. */
const EXTRA_CYCLES = 5;

/** Acknowledged and sent (acknowledged or not) writes of one kind. */
class Tally {
  readonly acked = new Set<number>();
  readonly sent = new Set<number>();
  last = 0;
  lastAcked = 0;
  async run(k: number, r: Promise<Outcome<unknown>>, refusedOk?: (e: string) => boolean): Promise<void> {
    this.sent.add(k);
    this.last = Math.max(this.last, k);
    const o = await r;
    if (o.ok) {
      this.acked.add(k);
      this.lastAcked = Math.max(this.lastAcked, k);
    } else if (o.status !== 0 && !refusedOk?.(o.error)) throw new Error(`refused (not by the kill): ${o.error}`);
  }
}

type Unary = (req: unknown, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r: any) => void) => void;

/**
 * The Storage Write API through grpc-js without the client library's retries
 * (a killed engine must fail the call, not have it retried for minutes):
 * one PENDING stream of 10 INT64 rows, appended, finalized and committed.
 */
class StreamWriter {
  private static readonly Write = (() => {
    const dir = join(ROOT, 'proto');
    const def = protoLoader.loadSync(join(dir, 'storage_write.proto'), { keepCase: false, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [dir] });
    return (grpc.loadPackageDefinition(def) as any).google.cloud.bigquery.storage.v1.BigQueryWrite as new (a: string, c: grpc.ChannelCredentials) => grpc.Client & Record<string, Unary>;
  })();
  private readonly client: grpc.Client & Record<string, Unary>;
  static readonly TABLE = `projects/${PROJECT}/datasets/d/tables/sw`;

  constructor(emu: Emulator) {
    this.client = new StreamWriter.Write(`127.0.0.1:${emu.grpcPort}`, grpc.credentials.createInsecure());
  }

  close(): void {
    this.client.close();
  }

  private unary(method: string, req: unknown): Promise<any> {
    return new Promise((resolve, reject) => this.client[method]!(req, { deadline: Date.now() + 30_000 }, (e, r) => (e ? reject(e) : resolve(r))));
  }

  private append(stream: string, ids: number[]): Promise<void> {
    const varint = (n: number): number[] => {
      const out: number[] = [];
      for (; n > 127; n = Math.floor(n / 128)) out.push((n % 128) | 128);
      return [...out, n];
    };
    return new Promise((resolve, reject) => {
      const call = (this.client as unknown as Record<string, (o: grpc.CallOptions) => grpc.ClientDuplexStream<unknown, any>>)['AppendRows']!({ deadline: Date.now() + 30_000 });
      call.on('data', (d) => (d.error ? reject(new Error(d.error.message)) : resolve()));
      call.on('error', reject);
      call.write({
        writeStream: stream,
        offset: { value: 0 },
        protoRows: { writerSchema: { protoDescriptor: { name: 'R', field: [{ name: 'id', number: 1, type: 'TYPE_INT64', label: 'LABEL_OPTIONAL' }] } }, rows: { serializedRows: ids.map((id) => Buffer.from([8, ...varint(id)])) } },
      });
      call.end();
    });
  }

  /**
   * One CDC append to d.cdc's default stream (change-data-capture.md): UPSERTs of keys 0 and 1 and of a key of its own
   * (`k`), each row's gen `k`; its outcome (status 0: the connection died).
   */
  async cdc(k: number): Promise<Outcome<unknown>> {
    const varint = (n: number): number[] => {
      const out: number[] = [];
      for (; n > 127; n = Math.floor(n / 128)) out.push((n % 128) | 128);
      return [...out, n];
    };
    const upsert = Buffer.from('UPSERT');
    const row = (id: number): Buffer => Buffer.from([8, ...varint(id), 16, ...varint(k), 26, upsert.length, ...upsert]);
    const field = (name: string, number: number, type: string) => ({ name, number, type, label: 'LABEL_OPTIONAL' });
    return new Promise((resolve) => {
      const call = (this.client as unknown as Record<string, (o: grpc.CallOptions) => grpc.ClientDuplexStream<unknown, any>>)['AppendRows']!({ deadline: Date.now() + 30_000 });
      call.on('data', (d) => resolve(d.error ? { ok: false, status: 400, error: String(d.error.message) } : { ok: true, value: d }));
      call.on('error', (e) => resolve({ ok: false, status: 0, error: String(e) }));
      call.write({
        writeStream: `projects/${PROJECT}/datasets/d/tables/cdc/streams/_default`,
        protoRows: {
          writerSchema: { protoDescriptor: { name: 'R', field: [field('id', 1, 'TYPE_INT64'), field('gen', 2, 'TYPE_INT64'), field('_CHANGE_TYPE', 3, 'TYPE_STRING')] } },
          rows: { serializedRows: [row(0), row(1), row(k)] },
        },
      });
      call.end();
    });
  }

  /** Stream name once created; the outcome of its commit (status 0: the connection died). */
  async batch(ids: number[], created: (stream: string) => void): Promise<Outcome<unknown>> {
    try {
      const { name } = await this.unary('CreateWriteStream', { parent: StreamWriter.TABLE, writeStream: { type: 'PENDING' } });
      created(name);
      await this.append(name, ids);
      await this.unary('FinalizeWriteStream', { name });
      return await this.commit(name);
    } catch (e) {
      return { ok: false, status: 0, error: String(e) };
    }
  }

  async commit(name: string): Promise<Outcome<unknown>> {
    try {
      const r = await this.unary('BatchCommitWriteStreams', { parent: StreamWriter.TABLE, writeStreams: [name] });
      if (r.streamErrors?.length) return { ok: false, status: 400, error: r.streamErrors.map((x: { code: string }) => x.code).join() };
      return { ok: true, value: r };
    } catch (e) {
      return { ok: false, status: 0, error: String(e) };
    }
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'wh-crash-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const one = async (c: Client, sql: string): Promise<string[]> => {
  const r = await c.query(sql);
  if (!r.ok) throw new Error(`${sql}: ${r.error}`);
  return ((r.value.rows?.[0]?.f ?? []) as { v: string }[]).map((x) => x.v);
};
const ids = async (c: Client, sql: string): Promise<Set<number>> => {
  const r = await c.column(sql);
  if (!r.ok) throw new Error(`${sql}: ${r.error}`);
  return new Set(r.value.map(Number));
};

describe('kill -9 of both processes during every kind of write', () => {
  it(`keeps every acknowledged write and every commit whole, over ${CYCLES} cycles`, async () => {
    let emu = await startEmulator({ dataDir, args: ['--project-id', PROJECT] });
    let c = new Client(emu);
    let writer = new StreamWriter(emu);
    const setup = await c.query(`CREATE SCHEMA d;
      CREATE TABLE d.ins (id INT64); CREATE TABLE d.dml (id INT64);
      CREATE TABLE d.upd (id INT64, v INT64); INSERT INTO d.upd VALUES (1, 0);
      CREATE TABLE d.mrg (id INT64, v INT64);
      CREATE TABLE d.del AS SELECT x AS id FROM UNNEST(GENERATE_ARRAY(1, 100000)) AS x;
      CREATE TABLE d.trn AS SELECT x AS id, 0 AS gen FROM UNNEST(GENERATE_ARRAY(1, 10)) AS x;
      CREATE TABLE d.ctas AS SELECT x AS id, 0 AS gen FROM UNNEST(GENERATE_ARRAY(1, 100)) AS x;
      CREATE TABLE d.src AS SELECT x AS id, 0 AS gen FROM UNNEST(GENERATE_ARRAY(1, 100)) AS x;
      CREATE TABLE d.cpy AS SELECT * FROM d.src;
      CREATE TABLE d.lod AS SELECT x AS id, 0 AS gen FROM UNNEST(GENERATE_ARRAY(1, 50)) AS x;
      CREATE TABLE d.alt (id INT64);
      CREATE TABLE d.acct AS SELECT x AS id, 1000 AS bal FROM UNNEST(GENERATE_ARRAY(1, 6)) AS x;
      CREATE TABLE d.ledger (src INT64, dst INT64, amt INT64);
      CREATE TABLE d.sw (id INT64);
      CREATE TABLE d.cdc (id INT64 PRIMARY KEY NOT ENFORCED, gen INT64);`);
    expect(setup.ok, setup.ok ? '' : setup.error).toBe(true);
    const t = {
      ins: new Tally(), dml: new Tally(), upd: new Tally(), mrg: new Tally(), del: new Tally(),
      trn: new Tally(), ctas: new Tally(), cpy: new Tally(), lod: new Tally(), create: new Tally(), drop: new Tally(), alt: new Tally(), bank: new Tally(), sw: new Tally(), cdc: new Tally(),
    };
    /** Storage Write streams whose commit was not acknowledged: retried after the restart, as a client would. */
    let unsettled: { k: number; stream: string }[] = [];
    let seq = 0;
    /** The last generation of src whose replace was acknowledged. */
    let srcAcked = 0;
    const conflict = (e: string): boolean => /Transaction is aborted due to concurrent update/.test(e);
    // Every kind must be acknowledged at least once (below). A loaded machine can make a slow kind miss the short
    // windows of all CYCLES: then up to EXTRA_CYCLES more, with longer windows, until each kind was; every cycle's
    // checks stay the same.
    const unacked = (): boolean => Object.values(t).some((v) => v.acked.size === 0);
    let cycles = 0;
    for (let cycle = 0; cycle < CYCLES || (cycle < CYCLES + EXTRA_CYCLES && unacked()); cycle++) {
      cycles++;
      let stop = false;
      const loop = (fn: () => Promise<void>): Promise<void> => (async () => {
        while (!stop) await fn();
      })();
      const work = [
        loop(async () => {
          const base = ++seq * 100;
          const rows = Array.from({ length: 20 }, (_, i) => ({ id: base + i }));
          await t.ins.run(base, c.insertAll('ins', rows));
        }),
        loop(async () => {
          const k = ++seq;
          await t.dml.run(k, c.query(`INSERT INTO d.dml VALUES (${k})`));
        }),
        loop(async () => t.upd.run(++seq, c.query('UPDATE d.upd SET v = v + 1 WHERE id = 1'))),
        loop(async () => t.mrg.run(++seq, c.query('MERGE d.mrg AS m USING (SELECT 1 AS id) AS s ON m.id = s.id WHEN MATCHED THEN UPDATE SET v = v + 1 WHEN NOT MATCHED THEN INSERT (id, v) VALUES (1, 1)'))),
        loop(async () => {
          const k = 1 + (++seq % 100000);
          await t.del.run(k, c.query(`DELETE FROM d.del WHERE id = ${k}`));
        }),
        loop(async () => {
          const g = ++seq;
          await t.trn.run(g, c.query(`BEGIN TRANSACTION; TRUNCATE TABLE d.trn; INSERT INTO d.trn SELECT x, ${g} FROM UNNEST(GENERATE_ARRAY(1, 10)) AS x; COMMIT TRANSACTION;`), conflict);
        }),
        loop(async () => {
          const g = ++seq;
          await t.ctas.run(g, c.query(`CREATE OR REPLACE TABLE d.ctas AS SELECT x AS id, ${g} AS gen FROM UNNEST(GENERATE_ARRAY(1, 100)) AS x`));
        }),
        // src is replaced and copied by loops of their own, so that a copy starts at once in every cycle (one after a
        // replace each missed the short window of every cycle of a loaded run: no copy acknowledged at all). A copy
        // takes a whole src of a generation at least the last one acknowledged before it began: that is its key.
        loop(async () => {
          const g = ++seq;
          const made = await c.query(`CREATE OR REPLACE TABLE d.src AS SELECT x AS id, ${g} AS gen FROM UNNEST(GENERATE_ARRAY(1, 100)) AS x`);
          if (made.ok) srcAcked = Math.max(srcAcked, g);
        }),
        loop(async () => {
          const job = { copy: { sourceTable: { projectId: PROJECT, datasetId: 'd', tableId: 'src' }, destinationTable: { projectId: PROJECT, datasetId: 'd', tableId: 'cpy' }, writeDisposition: 'WRITE_TRUNCATE' } };
          await t.cpy.run(srcAcked, c.job(job));
        }),
        loop(async () => {
          const g = ++seq;
          const ndjson = Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: i + 1, gen: g })).join('\n');
          const job = { load: { destinationTable: { projectId: PROJECT, datasetId: 'd', tableId: 'lod' }, sourceFormat: 'NEWLINE_DELIMITED_JSON', writeDisposition: 'WRITE_TRUNCATE' } };
          await t.lod.run(g, c.job(job, ndjson));
        }),
        loop(async () => {
          const k = ++seq;
          await t.create.run(k, c.query(`CREATE TABLE d.ddl_${k} (x INT64)`));
          const old = [...t.create.acked].find((x) => x < k - 2 && !t.drop.sent.has(x));
          if (old !== undefined) await t.drop.run(old, c.query(`DROP TABLE d.ddl_${old}`));
        }),
        loop(async () => {
          const k = ++seq;
          await t.alt.run(k, c.query(`ALTER TABLE d.alt ADD COLUMN c${k} INT64`));
        }),
        loop(async () => {
          const k = ++seq;
          const from = 1 + (k % 6);
          const to = 1 + ((k + 3) % 6);
          await t.bank.run(k, c.query(`BEGIN TRANSACTION; UPDATE d.acct SET bal = bal - 3 WHERE id = ${from}; UPDATE d.acct SET bal = bal + 3 WHERE id = ${to};
            INSERT INTO d.ledger VALUES (${from}, ${to}, 3); COMMIT TRANSACTION;`), conflict);
        }),
        loop(async () => {
          const base = ++seq * 100;
          let stream = '';
          await t.sw.run(base, writer.batch(Array.from({ length: 10 }, (_, i) => base + i), (s) => (stream = s)));
          if (stream && !t.sw.acked.has(base)) unsettled.push({ k: base, stream });
        }),
        loop(async () => {
          const k = 2 + ++seq;
          await t.cdc.run(k, writer.cdc(k));
        }),
      ];
      await new Promise((r) => setTimeout(r, (cycle < CYCLES ? 300 : 3000) + Math.floor(Math.random() * 1200)));
      await killGroup(emu);
      stop = true;
      await Promise.all(work);
      writer.close();

      emu = await startEmulator({ dataDir, args: ['--project-id', PROJECT] });
      c = new Client(emu);
      writer = new StreamWriter(emu);
      const where = `cycle ${cycle}`;
      // Storage Write: commits retried (a stream the crash committed is gone: STREAM_NOT_FOUND); then each batch once or not at all.
      for (const u of unsettled) {
        const o = await writer.commit(u.stream);
        if (o.ok) t.sw.acked.add(u.k);
      }
      unsettled = [];
      const swCounts = await c.column('SELECT COUNT(*) FROM d.sw GROUP BY DIV(id, 100)');
      expect(swCounts.ok && swCounts.value.every((n) => n === '10'), `${where}: Storage Write batches whole and once`).toBe(true);
      const swIds = await ids(c, 'SELECT DISTINCT DIV(id, 100) * 100 FROM d.sw');
      expect([...t.sw.acked].filter((k) => !swIds.has(k)), `${where}: Storage Write rows lost`).toEqual([]);
      expect([...swIds].filter((k) => !t.sw.sent.has(k)), where).toEqual([]);
      // CDC: every key's row once; keys 0 and 1 of one append's generation, at least the last acknowledged; each
      // acknowledged append's own key there, nothing never sent.
      expect(await one(c, 'SELECT COUNT(*) - COUNT(DISTINCT id) FROM d.cdc'), `${where}: CDC keys once`).toEqual(['0']);
      if (t.cdc.sent.size > 0) {
        const [keys, gens, gen] = (await one(c, 'SELECT COUNT(*), COUNT(DISTINCT gen), MAX(gen) FROM d.cdc WHERE id IN (0, 1)')).map(Number);
        if (t.cdc.acked.size > 0 || keys! > 0) expect([keys, gens], `${where}: a CDC append whole`).toEqual([2, 1]);
        expect(gen ?? 0, `${where}: CDC generation`).toBeGreaterThanOrEqual(t.cdc.lastAcked);
      }
      const cdcIds = await ids(c, 'SELECT id FROM d.cdc WHERE id > 1 AND id = gen');
      expect([...t.cdc.acked].filter((k) => !cdcIds.has(k)), `${where}: CDC appends lost`).toEqual([]);
      expect([...cdcIds].filter((k) => !t.cdc.sent.has(k)), where).toEqual([]);
      // insertAll and INSERT: acknowledged rows present exactly once; nothing never sent.
      const insIds = await ids(c, 'SELECT DIV(id, 100) * 100 FROM d.ins GROUP BY 1 HAVING COUNT(*) = 20');
      expect(await one(c, 'SELECT COUNT(*) - COUNT(DISTINCT id) FROM d.ins'), where).toEqual(['0']);
      expect([...t.ins.acked].filter((k) => !insIds.has(k)), `${where}: insertAll rows lost`).toEqual([]);
      expect(await one(c, 'SELECT COUNTIF(MOD(id, 100) >= 20) FROM d.ins'), where).toEqual(['0']);
      const dmlIds = await ids(c, 'SELECT id FROM d.dml');
      expect([...t.dml.acked].filter((k) => !dmlIds.has(k)), `${where}: INSERT rows lost`).toEqual([]);
      expect([...dmlIds].filter((k) => !t.dml.sent.has(k)), where).toEqual([]);
      expect(await one(c, 'SELECT COUNT(*) - COUNT(DISTINCT id) FROM d.dml'), where).toEqual(['0']);
      // UPDATE, MERGE counters.
      const upd = Number((await one(c, 'SELECT v FROM d.upd'))[0]);
      expect(upd, `${where}: UPDATE counter`).toBeGreaterThanOrEqual(t.upd.acked.size);
      expect(upd, where).toBeLessThanOrEqual(t.upd.sent.size);
      const mrg = await one(c, 'SELECT COUNT(*), COALESCE(SUM(v), 0) FROM d.mrg');
      expect(Number(mrg[0]), where).toBeLessThanOrEqual(1);
      expect(Number(mrg[1]), `${where}: MERGE counter`).toBeGreaterThanOrEqual(t.mrg.acked.size);
      expect(Number(mrg[1]), where).toBeLessThanOrEqual(t.mrg.sent.size);
      // DELETE.
      const delIds = await ids(c, 'SELECT id FROM d.del');
      expect([...t.del.acked].filter((k) => delIds.has(k)), `${where}: deleted rows back`).toEqual([]);
      expect(100000 - delIds.size, where).toBeLessThanOrEqual(t.del.sent.size);
      // Whole generations.
      for (const [table, tally, rows] of [['trn', t.trn, 10], ['ctas', t.ctas, 100], ['cpy', t.cpy, 100], ['lod', t.lod, 50]] as const) {
        const [n, gens, gen] = (await one(c, `SELECT COUNT(*), COUNT(DISTINCT gen), MAX(gen) FROM d.${table}`)).map(Number);
        expect([n, gens], `${where}: ${table} holds one whole generation`).toEqual([rows, 1]);
        expect(gen!, `${where}: ${table} generation`).toBeGreaterThanOrEqual(tally.lastAcked);
        expect(gen!, where).toBeLessThanOrEqual(Math.max(seq, tally.last));
      }
      // CREATE / DROP.
      const listed = await c.call('GET', '/datasets/d/tables?maxResults=100000');
      expect(listed.ok, where).toBe(true);
      const names = new Set(((listed.ok ? listed.value.tables : []) ?? []).map((x: { tableReference: { tableId: string } }) => x.tableReference.tableId));
      expect([...t.create.acked].filter((k) => !t.drop.sent.has(k) && !names.has(`ddl_${k}`)), `${where}: created tables lost`).toEqual([]);
      expect([...t.drop.acked].filter((k) => names.has(`ddl_${k}`)), `${where}: dropped tables back`).toEqual([]);
      // ALTER ADD COLUMN.
      const alt = await c.call('GET', '/datasets/d/tables/alt');
      const cols = new Set((alt.ok ? alt.value.schema.fields : []).map((f: { name: string }) => f.name));
      expect([...t.alt.acked].filter((k) => !cols.has(`c${k}`)), `${where}: added columns lost`).toEqual([]);
      // Transactions: balanced, and the ledger holds every acknowledged transfer.
      const bank = await one(c, `SELECT (SELECT SUM(bal) FROM d.acct), (SELECT COUNT(*) FROM d.ledger),
        (SELECT COUNTIF(a.bal != 1000 + COALESCE(l.net, 0)) FROM d.acct AS a LEFT JOIN
          (SELECT id, SUM(delta) AS net FROM (SELECT src AS id, -amt AS delta FROM d.ledger UNION ALL SELECT dst, amt FROM d.ledger) GROUP BY id) AS l USING (id))`);
      expect([bank[0], bank[2]], `${where}: accounts balance`).toEqual(['6000', '0']);
      expect(Number(bank[1]), where).toBeGreaterThanOrEqual(t.bank.acked.size);
      expect(Number(bank[1]), where).toBeLessThanOrEqual(t.bank.sent.size);
    }
    writer.close();
    await emu.stop();
    const kinds = Object.entries(t).map(([k, v]) => `${k} ${v.acked.size}/${v.sent.size}`).join(', ');
    console.log(`crash cycles: ${cycles}; acknowledged/sent per kind: ${kinds}`);
    // Every kind really ran (and was acknowledged) across the cycles.
    for (const [k, v] of Object.entries(t)) expect(v.acked.size, k).toBeGreaterThan(0);
  }, 900_000);
});
