// A rules sweep (issue 16, set bb, sql62 session): tabledata.insertAll (the Storage Write API (REST)),
// tabledata.list and DML over streamed rows, over HTTP; what SQL sees after checked by queries.
// Pages (docs/docs.cloud.google.com/bigquery/...): docs/reference/rest/v2/tabledata/insertAll.md,
// docs/reference/rest/v2/tabledata/list.md, docs/write-api-rest.md, docs/data-manipulation-language.md, quotas.md.
// Rules read (section: paraphrase) and what the project's tests held before this set:
//   insertAll.md, templateSuffix: rows go to "{destination}{templateSuffix}", made with the template's schema
//     (not covered over HTTP).
//   write-api-rest.md, Template table details: the suffix takes letters, digits and underscores only; table name
//     and suffix together at most 1024 characters (not covered); the generated table takes the dataset's
//     expiration (not covered); no deduplication between a template insert and a direct one (not covered).
//   insertAll.md, insertId: best-effort dedupe (covered by test/engine/rows.test.ts, agrees); skipInvalidRows and
//     ignoreUnknownValues (covered there, agrees).
//   quotas.md, Streaming inserts: at most 50,000 rows a request, insertId at most 128 characters, each an invalid
//     error (not covered).
//   write-api-rest.md, Ingestion-time partitioning: a partition decorator only on daily partitioned tables, within
//     31 days back and 16 days ahead (not covered); Time-unit column partitioning: values between 10 years back and
//     1 year ahead, others rejected (not covered).
//   quotas.md, tabledata.list: at most 100,000 rows a response (not covered); list.md, selectedFields into
//     subfields "e.d.f" (covered by test/engine/rows.test.ts, agrees).
//   data-manipulation-language.md, Limitations: rows streamed within 30 minutes can't be changed by UPDATE, DELETE,
//     MERGE (covered by test/clients/streaming-buffer.test.ts, agrees) or TRUNCATE (not covered).
//   write-api-rest.md, Missing/Unavailable data: tabledata.list does not read write-optimized storage, recent
//     streamed rows are not in its output. CONTRADICTED by test/clients/streaming-buffer.test.ts and
//     src/engine/streaming-buffer.ts (tabledata.list reads buffered rows); left, see the set's report.
// The project's own tables and values; answers from the pages.
// First run (sql62 session): 4 of 12, no test-data mistakes (a helper threw on an absent insertErrors instead of
// failing its expectation: same outcome, fixed). Engine failures: template suffix characters unchecked, template and
// direct inserts deduplicated together, 50,001 rows and a 129-character insertId taken, decorators on a monthly
// table and outside 31 back / 16 ahead taken, TRUNCATE over buffered rows run: fixed. Left it.fails (1): the
// partitioning column's 10 years back / 1 year ahead bound, fixed by set be (sql65 session, src/engine/stream-bounds.ts;
// test/gateway/unseen-be-streaming.test.ts): the case now passes as it was written.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, queryRows, rest, startEmulator, type Emulator } from '../helpers/emulator.js';

const P = 'bbr';

describe.skipIf(!hasRealEngine())('streaming insert and list rules over REST (set bb)', () => {
  let emu: Emulator;
  const url = (p: string): string => `${emu.url}/bigquery/v2/projects/${P}${p}`;
  let n = 0;
  const makeTable = async (body: Record<string, unknown>, dataset = 'd'): Promise<string> => {
    const id = (body['tableReference'] as { tableId?: string } | undefined)?.tableId ?? `t${++n}`;
    const r = await rest(url(`/datasets/${dataset}/tables`), { method: 'POST', json: { schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 's', type: 'STRING' }] }, ...body, tableReference: { tableId: id } } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return id;
  };
  const insert = (t: string, json: Record<string, unknown>, dataset = 'd') => rest(url(`/datasets/${dataset}/tables/${t}/insertAll`), { method: 'POST', json });
  const count = async (t: string, dataset = 'd'): Promise<number> => Number((await queryRows(emu, P, `SELECT COUNT(*) FROM ${dataset}.${t}`))[0]![0]);
  /** A 400 `invalid` envelope, or a 200 whose insertErrors say invalid. */
  const refusedInvalid = (r: { status: number; body: any }) => {
    if (r.status === 200) {
      expect(r.body.insertErrors?.length ?? 0, JSON.stringify(r.body)).toBeGreaterThan(0);
      expect(r.body.insertErrors.flatMap((e: any) => e.errors.map((x: any) => x.reason))).toContain('invalid');
    } else {
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.errors[0].reason).toBe('invalid');
    }
  };
  const day = (offsetDays: number): string => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

  beforeAll(async () => {
    emu = await startEmulator();
    for (const d of ['d', 'exp']) {
      const body = d === 'exp' ? { datasetReference: { datasetId: d }, defaultTableExpirationMs: '86400000' } : { datasetReference: { datasetId: d } };
      expect((await rest(url('/datasets'), { method: 'POST', json: body })).status).toBe(200);
    }
  });
  afterAll(async () => emu?.stop());

  it('templateSuffix writes to {table}{suffix}, made with the template\'s schema; the template stays empty', async () => {
    // insertAll.md, templateSuffix
    const t = await makeTable({});
    const r = await insert(t, { templateSuffix: '_2024', rows: [{ json: { id: 1, s: 'a' } }, { json: { id: 2, s: 'b' } }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.insertErrors).toBeUndefined();
    const got = await rest(url(`/datasets/d/tables/${t}_2024`));
    expect(got.status).toBe(200);
    expect(got.body.schema.fields.map((f: { name: string; type: string }) => [f.name, f.type])).toEqual([['id', 'INTEGER'], ['s', 'STRING']]);
    expect(await queryRows(emu, P, `SELECT id, s FROM d.${t}_2024 ORDER BY id`)).toEqual([['1', 'a'], ['2', 'b']]);
    expect(await count(t)).toBe(0);
  });

  it('a template suffix with a character other than a letter, digit or underscore is invalid; nothing is made', async () => {
    // write-api-rest.md, Template table details, Template suffix value
    const t = await makeTable({});
    for (const suffix of ['-x', '_a.b', '_é']) {
      const r = await insert(t, { templateSuffix: suffix, rows: [{ json: { id: 1 } }] });
      expect(r.status, suffix).toBe(400);
      expect(r.body.error.errors[0].reason).toBe('invalid');
      expect((await rest(url(`/datasets/d/tables/${encodeURIComponent(t + suffix)}`))).status).not.toBe(200);
    }
    expect(await count(t)).toBe(0);
  });

  it('a table name and template suffix longer than 1024 characters together are invalid', async () => {
    // write-api-rest.md, Template table details ("maximum combined length ... 1024 characters")
    const t = await makeTable({ tableReference: { tableId: `long_${'x'.repeat(1000)}` } });
    const r = await insert(t, { templateSuffix: `_${'y'.repeat(30)}`, rows: [{ json: { id: 1 } }] });
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('invalid');
    const ok = await insert(t, { templateSuffix: `_${'y'.repeat(10)}`, rows: [{ json: { id: 1 } }] });
    expect(ok.status, JSON.stringify(ok.body).slice(0, 300)).toBe(200);
  });

  it('a table made from a template takes its expiration from the dataset', async () => {
    // write-api-rest.md, Template table details, Time to live
    const t = await makeTable({}, 'exp');
    const before = Date.now();
    expect((await insert(t, { templateSuffix: '_made', rows: [{ json: { id: 1 } }] }, 'exp')).status).toBe(200);
    const got = await rest(url(`/datasets/exp/tables/${t}_made`));
    expect(got.status).toBe(200);
    const exp = Number(got.body.expirationTime);
    expect(exp).toBeGreaterThanOrEqual(before + 86_400_000 - 5_000);
    expect(exp).toBeLessThanOrEqual(Date.now() + 86_400_000 + 5_000);
  });

  it('no deduplication between a template insert and a direct insert of the same insertId', async () => {
    // write-api-rest.md, Template table details, Deduplication
    const t = await makeTable({});
    expect((await insert(t, { templateSuffix: '_g', rows: [{ insertId: 'same-id', json: { id: 7 } }] })).status).toBe(200);
    expect((await insert(`${t}_g`, { rows: [{ insertId: 'same-id', json: { id: 7 } }] })).status).toBe(200);
    expect(await count(`${t}_g`)).toBe(2);
  });

  it('more than 50,000 rows in one request is invalid and stores nothing; 50,000 are taken', async () => {
    // quotas.md, Streaming inserts, Maximum rows per request
    const t = await makeTable({});
    const many = (k: number) => Array.from({ length: k }, (_, i) => ({ json: { id: i } }));
    refusedInvalid(await insert(t, { rows: many(50_001) }));
    expect(await count(t)).toBe(0);
    const ok = await insert(t, { rows: many(50_000) });
    expect(ok.status).toBe(200);
    expect(ok.body.insertErrors).toBeUndefined();
    expect(await count(t)).toBe(50_000);
  });

  it('an insertId longer than 128 characters is invalid; 128 are taken', async () => {
    // quotas.md, Streaming inserts, insertId field length
    const t = await makeTable({});
    refusedInvalid(await insert(t, { rows: [{ insertId: 'i'.repeat(129), json: { id: 1 } }] }));
    expect(await count(t)).toBe(0);
    const ok = await insert(t, { rows: [{ insertId: 'i'.repeat(128), json: { id: 2 } }] });
    expect(ok.status).toBe(200);
    expect(ok.body.insertErrors).toBeUndefined();
    expect(await count(t)).toBe(1);
  });

  it('a partition decorator is refused on a monthly ingestion-time partitioned table', async () => {
    // write-api-rest.md, Ingestion-time partitioning ("only supported for daily partitioned tables")
    const t = await makeTable({ timePartitioning: { type: 'MONTH' } });
    const r = await insert(`${t}$${day(0).slice(0, 7).replace('-', '')}`, { rows: [{ json: { id: 1 } }] });
    refusedInvalid(r);
    expect(await count(t)).toBe(0);
  });

  it('a daily partition decorator takes 31 days back to 16 days ahead, not beyond', async () => {
    // write-api-rest.md, Ingestion-time partitioning (bounds relative to the current UTC date)
    const t = await makeTable({ timePartitioning: { type: 'DAY' } });
    const dec = (k: number) => `${t}$${day(k).replace(/-/g, '')}`;
    for (const k of [-30, 0, 15]) {
      const r = await insert(dec(k), { rows: [{ json: { id: k } }] });
      expect(r.status, `${k}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.body.insertErrors, String(k)).toBeUndefined();
    }
    for (const k of [-40, 20]) refusedInvalid(await insert(dec(k), { rows: [{ json: { id: k } }] }));
    expect(await queryRows(emu, P, `SELECT id FROM d.${t} ORDER BY id`)).toEqual([['-30'], ['0'], ['15']]);
  });

  it('a column-partitioned table rejects streamed dates more than 10 years back or 1 year ahead', async () => {
    // write-api-rest.md, Time-unit column partitioning ("Data outside this range is rejected")
    const t = await makeTable({ schema: { fields: [{ name: 'id', type: 'INTEGER' }, { name: 'dt', type: 'DATE' }] }, timePartitioning: { type: 'DAY', field: 'dt' } });
    const ok = await insert(t, { rows: [{ json: { id: 1, dt: day(-365 * 9) } }, { json: { id: 2, dt: day(300) } }] });
    expect(ok.status).toBe(200);
    expect(ok.body.insertErrors).toBeUndefined();
    refusedInvalid(await insert(t, { rows: [{ json: { id: 3, dt: day(-365 * 11) } }] }));
    refusedInvalid(await insert(t, { rows: [{ json: { id: 4, dt: day(400) } }] }));
    expect(await queryRows(emu, P, `SELECT id FROM d.${t} ORDER BY id`)).toEqual([['1'], ['2']]);
  });

  it('tabledata.list returns at most 100,000 rows a page, with a token for the rest', async () => {
    // quotas.md, Maximum rows per tabledata.list response
    const r0 = await rest(url('/queries'), { method: 'POST', json: { query: 'CREATE TABLE d.big AS SELECT x AS id FROM UNNEST(GENERATE_ARRAY(1, 100010)) AS x', useLegacySql: false } });
    expect(r0.status, JSON.stringify(r0.body)).toBe(200);
    const page = await rest(url('/datasets/d/tables/big/data?maxResults=200000'));
    expect(page.status).toBe(200);
    expect(page.body.totalRows).toBe('100010');
    expect(page.body.rows.length).toBeLessThanOrEqual(100_000);
    expect(page.body.pageToken).toBeTruthy();
  });

  it('TRUNCATE TABLE may not remove rows streamed within 30 minutes', async () => {
    // data-manipulation-language.md, Limitations ("can't be modified with ... UPDATE, DELETE, MERGE, or TRUNCATE")
    const t = await makeTable({});
    expect((await insert(t, { rows: [{ json: { id: 1 } }, { json: { id: 2 } }] })).status).toBe(200);
    const r = await rest(url('/queries'), { method: 'POST', json: { query: `TRUNCATE TABLE d.${t}`, useLegacySql: false } });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error.errors[0].reason).toBe('invalidQuery');
    expect(r.body.error.message).toContain('streaming buffer');
    expect(await count(t)).toBe(2);
  });
});
