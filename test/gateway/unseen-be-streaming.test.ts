// A blind set (issue 16, set be, helper sql65, 2026-12-01): tabledata.insertAll (the Storage Write API (REST))
// and the streaming buffer, over HTTP; what SQL sees after checked by queries.
// Pages (docs/docs.cloud.google.com/bigquery/docs/...): write-api-rest.md (Time-unit column partitioning; Stream
// into time-partitioned tables; Ingestion-time partitioning), data-manipulation-language.md (Limitations),
// transactions.md, reference/rest/v2/tabledata/insertAll.md (skipInvalidRows), reference/rest/v2/tables.md
// (streamingBuffer).
// Rules (section: paraphrase):
//   write-api-rest.md, Time-unit column partitioning: a DATE, DATETIME or TIMESTAMP partitioning value between 10
//     years back and 1 year ahead is taken when streamed, others are rejected (a row error: invalid); a NULL value is
//     no date (the __NULL__ partition). Only streaming is bounded: DML and queries write any date.
//   insertAll.md, skipInvalidRows: false (default) fails the whole request when a row is invalid; true keeps the rest.
//   write-api-rest.md, Stream into time-partitioned tables: the streaming buffer is retained when a load or query
//     job overwrites a partition with WRITE_TRUNCATE (its buffered rows stay; the partition's other rows go).
//   data-manipulation-language.md, Limitations: buffered rows may not be changed by UPDATE/DELETE/MERGE, also inside
//     a multi-statement transaction (transactions.md: DML inside a transaction is DML); rows outside the buffer may.
// The project's own tables and values; answers from the pages.
// First run (sql65 session): 3 of 7 raw against the main branch this set started from (73ab7fe; run with this set's
// engine changes stashed), no test-data mistakes (corrected: 0). Engine failures, by class: the column-partitioning
// streaming bound unchecked (2), a partition WRITE_TRUNCATE deleting that partition's buffered rows (1), a
// transaction's DML over buffered rows run (1, also the Storage Write class below): fixed (src/engine/stream-bounds.ts,
// EngineCatalog.writePartition, SessionCatalog.refuseRecentRows). After the fixes: 7 of 7. Left: none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, queryRows, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

const P = 'ber';

describe.skipIf(!hasRealEngine())('streaming rules over REST (set be)', () => {
  let emu: Emulator;
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/${P}${p}`;
  let n = 0;
  const makeTable = async (body: Record<string, unknown>): Promise<string> => {
    const id = `t${++n}`;
    const r = await rest(url('/datasets/d/tables'), { method: 'POST', json: { ...body, tableReference: { tableId: id } } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return id;
  };
  const insert = (t: string, json: Record<string, unknown>) => rest(url(`/datasets/d/tables/${t}/insertAll`), { method: 'POST', json });
  const query = (sql: string, extra: Record<string, unknown> = {}) => rest(url('/queries'), { method: 'POST', json: { query: sql, useLegacySql: false, ...extra } });
  const ids = async (t: string): Promise<string[]> => (await queryRows(emu, P, `SELECT id FROM d.${t} ORDER BY id`)).map((r) => String(r[0]));
  const day = (offsetDays: number): string => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
  const reasons = (body: any, index: number): string[] => (body.insertErrors ?? []).filter((e: any) => e.index === index).flatMap((e: any) => e.errors.map((x: any) => x.reason));

  beforeAll(async () => {
    emu = await startEmulator();
    expect((await rest(url('/datasets'), { method: 'POST', json: { datasetReference: { datasetId: 'd' } } })).status).toBe(200);
  });
  afterAll(async () => emu?.stop());

  it('a TIMESTAMP-partitioned table skips a row 11 years back with skipInvalidRows and keeps the others', async () => {
    // write-api-rest.md, Time-unit column partitioning; insertAll.md, skipInvalidRows
    const t = await makeTable({ schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'ts', type: 'TIMESTAMP' }] }, timePartitioning: { type: 'DAY', field: 'ts' } });
    const r = await insert(t, {
      skipInvalidRows: true,
      rows: [{ json: { id: 1, ts: `${day(-365 * 11)}T08:00:00Z` } }, { json: { id: 2, ts: `${day(-365 * 5)}T08:00:00Z` } }, { json: { id: 3, ts: `${day(30)}T00:00:00Z` } }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(reasons(r.body, 0)).toContain('invalid');
    expect(reasons(r.body, 1)).toEqual([]);
    expect(reasons(r.body, 2)).toEqual([]);
    expect(await ids(t)).toEqual(['2', '3']);
  });

  it('without skipInvalidRows a DATETIME value 2 years ahead fails the whole request: the good rows are stopped', async () => {
    // write-api-rest.md, Time-unit column partitioning; insertAll.md, skipInvalidRows (default false)
    const t = await makeTable({ schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'dt', type: 'DATETIME' }] }, timePartitioning: { type: 'MONTH', field: 'dt' } });
    const r = await insert(t, { rows: [{ json: { id: 1, dt: `${day(10)}T10:00:00` } }, { json: { id: 2, dt: `${day(730)}T10:00:00` } }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(reasons(r.body, 1)).toContain('invalid');
    expect(reasons(r.body, 0)).toEqual(['stopped']);
    expect(await ids(t)).toEqual([]);
  });

  it('a NULL partitioning value streams (the __NULL__ partition), and DML writes dates outside the streaming bound', async () => {
    // write-api-rest.md, Time-unit column partitioning (only streamed data is bounded); partitioned-tables.md, __NULL__
    const t = await makeTable({ schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'd', type: 'DATE' }] }, timePartitioning: { type: 'DAY', field: 'd' } });
    const r = await insert(t, { rows: [{ json: { id: 1, d: null } }, { json: { id: 2 } }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.insertErrors).toBeUndefined();
    const q = await query(`INSERT d.${t} (id, d) VALUES (3, DATE '1990-06-01'), (4, DATE_ADD(CURRENT_DATE(), INTERVAL 5 YEAR))`);
    expect(q.status, JSON.stringify(q.body)).toBe(200);
    expect(await ids(t)).toEqual(['1', '2', '3', '4']);
  });

  it('a query job overwriting a partition (t$YYYYMMDD, WRITE_TRUNCATE) keeps that partition\'s buffered rows', async () => {
    // write-api-rest.md, Stream into time-partitioned tables ("The streaming buffer is retained ...")
    const t = await makeTable({ schema: { fields: [{ name: 'id', type: 'INTEGER' }] }, timePartitioning: { type: 'DAY' } });
    const today = day(0).replace(/-/g, '');
    // A row in today's partition outside the buffer (a DML insert), then two streamed ones.
    expect((await query(`INSERT d.${t} (id) VALUES (1)`)).status).toBe(200);
    expect((await insert(t, { rows: [{ json: { id: 2 } }, { json: { id: 3 } }] })).status).toBe(200);
    const job = await rest(url('/jobs'), {
      method: 'POST',
      json: { configuration: { query: { query: 'SELECT 9 AS id', useLegacySql: false, destinationTable: { projectId: P, datasetId: 'd', tableId: `${t}$${today}` }, writeDisposition: 'WRITE_TRUNCATE' } } },
    });
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    for (let i = 0; i < 100; i++) {
      const j = await rest(url(`/jobs/${job.body.jobReference.jobId}`));
      if (j.body.status?.state === 'DONE') {
        expect(j.body.status.errorResult, JSON.stringify(j.body.status)).toBeUndefined();
        break;
      }
      await new Promise((res) => setTimeout(res, 100));
    }
    expect(await ids(t)).toEqual(['2', '3', '9']);
    const meta = await rest(url(`/datasets/d/tables/${t}`));
    expect(meta.body.streamingBuffer?.estimatedRows).toBe('2');
  });

  it('an UPDATE inside a multi-statement transaction may not change buffered rows; nothing of the transaction is kept', async () => {
    // data-manipulation-language.md, Limitations; transactions.md (a failed statement rolls the transaction back)
    const t = await makeTable({ schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 's', type: 'STRING' }] } });
    expect((await insert(t, { rows: [{ json: { id: 1, s: 'streamed' } }] })).status).toBe(200);
    const r = await query(`BEGIN TRANSACTION; INSERT d.${t} (id, s) VALUES (2, 'dml'); UPDATE d.${t} SET s = 'changed' WHERE id = 1; COMMIT TRANSACTION;`);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('invalidQuery');
    expect(r.body.error.message).toContain('streaming buffer');
    expect(await queryRows(emu, P, `SELECT id, s FROM d.${t} ORDER BY id`)).toEqual([['1', 'streamed']]);
  });

  it('a transaction\'s DELETE of rows outside the buffer runs while other rows of the table are buffered', async () => {
    // data-manipulation-language.md, Limitations ("All other rows in the table remain modifiable")
    const t = await makeTable({ schema: { fields: [{ name: 'id', type: 'INTEGER' }] } });
    expect((await query(`INSERT d.${t} (id) VALUES (1), (2)`)).status).toBe(200);
    expect((await insert(t, { rows: [{ json: { id: 3 } }] })).status).toBe(200);
    const r = await query(`BEGIN TRANSACTION; DELETE d.${t} WHERE id = 1; COMMIT TRANSACTION;`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await ids(t)).toEqual(['2', '3']);
  });

  it('a DATE-partitioned table takes streamed dates 9 years back and 11 months ahead', async () => {
    // write-api-rest.md, Time-unit column partitioning (within the range)
    const t = await makeTable({ schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'd', type: 'DATE' }] }, timePartitioning: { type: 'YEAR', field: 'd' } });
    const r = await insert(t, { rows: [{ json: { id: 1, d: day(-365 * 9) } }, { json: { id: 2, d: day(330) } }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.insertErrors).toBeUndefined();
    expect(await ids(t)).toEqual(['1', '2']);
  });
});
