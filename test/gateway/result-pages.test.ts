// Pages of a query result through REST and the Node client, as the real
// service cuts them: without maxResults a page holds rows up to the 10 MB
// response bound (not 10,000 rows), with maxResults at most that many and
// never past 10 MB; every row arrives once, in order. The engine encodes the
// page after each one served ahead of its request: a next request with
// other options (timestamp form, page size) must still get its own page.
import { BigQuery } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';

const PAGE_BYTES = 10 * 1024 * 1024;
/** Rows of ~2 KB: 6,000 of them (~12 MB) need two pages. */
const WIDE_ROWS = 6000;
const WIDE = `SELECT n, REPEAT('x', 2000) AS pad, TIMESTAMP_ADD(TIMESTAMP '2024-01-01', INTERVAL n SECOND) AS ts FROM UNNEST(GENERATE_ARRAY(1, ${WIDE_ROWS})) AS n ORDER BY n`;

describe.skipIf(!hasRealEngine())('query result pages', () => {
  let emu: Emulator;
  let base: string;
  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    emu = await startEmulator();
    base = `${emu.url}/bigquery/v2/projects/p`;
  }, 60_000);
  afterAll(async () => emu?.stop());

  async function queryJob(sql: string): Promise<string> {
    const r = await rest(`${base}/jobs`, { method: 'POST', json: { configuration: { query: { query: sql, useLegacySql: false } } } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = r.body.jobReference.jobId as string;
    expect((await rest(`${base}/queries/${id}?maxResults=0&timeoutMs=60000`)).body.jobComplete).toBe(true);
    return id;
  }

  it('without maxResults a page is bounded by bytes, not by 10,000 rows', async () => {
    const q = await rest(`${base}/queries`, { method: 'POST', json: { query: 'SELECT n FROM UNNEST(GENERATE_ARRAY(1, 25000)) AS n ORDER BY n', useLegacySql: false } });
    expect(q.body.totalRows).toBe('25000');
    expect(q.body.rows).toHaveLength(25000);
    expect(q.body.pageToken).toBeUndefined();
    const id = q.body.jobReference.jobId as string;
    const g = await rest(`${base}/queries/${id}`);
    expect(g.body.rows).toHaveLength(25000);
    expect(g.body.rows[24999]).toEqual({ f: [{ v: '25000' }] });
    // tabledata.list keeps its 10,000-row default.
    const dest = (await rest(`${base}/jobs/${id}`)).body.configuration.query.destinationTable;
    const t = await rest(`${base}/datasets/${dest.datasetId}/tables/${dest.tableId}/data`);
    expect(t.body.rows).toHaveLength(10000);
    expect(t.body.pageToken).toBe('10000');
  });

  it('a result past 10 MB comes in pages that end at the byte bound, every row once', async () => {
    const id = await queryJob(WIDE);
    for (const max of ['', '&maxResults=100000']) {
      const seen: number[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const r = await fetch(`${base}/queries/${id}?formatOptions.useInt64Timestamp=true${max}${token ? `&pageToken=${token}` : ''}`);
        const text = await r.text();
        const body = JSON.parse(text) as { rows: { f: { v: string }[] }[]; pageToken?: string; totalRows: string };
        expect(body.totalRows).toBe(String(WIDE_ROWS));
        // The rows stop with the one that crossed the bound.
        expect(text.length).toBeLessThan(PAGE_BYTES + 4096);
        if (body.pageToken) expect(text.length).toBeGreaterThan(PAGE_BYTES);
        for (const row of body.rows) seen.push(Number(row.f[0]!.v));
        token = body.pageToken;
        pages++;
      } while (token);
      expect(pages).toBe(2);
      expect(seen).toEqual(Array.from({ length: WIDE_ROWS }, (_, i) => i + 1));
    }
  });

  it('a page encoded ahead is not served to a request that asks for another form', async () => {
    const id = await queryJob(WIDE);
    const page = async (q: string): Promise<{ rows: { f: { v: string }[] }[]; pageToken?: string }> => (await rest(`${base}/queries/${id}?${q}`)).body;
    const first = await page('maxResults=1000&formatOptions.useInt64Timestamp=true');
    expect(first.pageToken).toBe('1000');
    // The engine now holds rows 1000..1999 as int64 timestamps; ask for RFC 3339 float seconds and 500 rows instead.
    const second = await page('maxResults=500&pageToken=1000&formatOptions.useInt64Timestamp=false');
    expect(second.rows).toHaveLength(500);
    expect(second.rows[0]!.f[0]!.v).toBe('1001');
    expect(second.rows[0]!.f[2]!.v).toBe('1.704068201E9');
    expect(second.pageToken).toBe('1500');
    // ... and the same form as before gets the page it would get anyway.
    const third = await page('maxResults=500&pageToken=1500&formatOptions.useInt64Timestamp=true');
    expect(third.rows[0]!.f[0]!.v).toBe('1501');
    expect(third.rows[0]!.f[2]!.v).toBe('1704068701000000');
    expect(third.rows).toHaveLength(500);
  });

  it('the Node client pages a result past 10 MB through getQueryResults', async () => {
    const bq = new BigQuery({ projectId: 'p', apiEndpoint: emu.url, authClient: fakeAuth() });
    const [job] = await bq.createQueryJob({ query: WIDE });
    const [rows] = await job.getQueryResults();
    expect(rows).toHaveLength(WIDE_ROWS);
    expect(rows.map((r) => r.n)).toEqual(Array.from({ length: WIDE_ROWS }, (_, i) => i + 1));
    expect((rows[WIDE_ROWS - 1] as { pad: string }).pad).toHaveLength(2000);
  });
});
