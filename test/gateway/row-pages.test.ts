// Pages of rows through the gateway, end to end: a large page travels as
// bytes (the engine's rows_utf8, written into the response unparsed), a small
// one as text (rows_json). Both must give the same bytes on the wire, so every
// large page here is compared byte for byte with the same window fetched as
// small pages, across types (unicode and escapes, NUMERIC/BIGNUMERIC, NaN,
// BYTES, nested and repeated RECORDs, NULLs), both families, both
// useInt64Timestamp settings, selectedFields, startIndex and pageToken; and
// the Node client reads multi-page results.
import { BigQuery } from '@google-cloud/bigquery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasRealEngine, rest, startEmulator, type Emulator } from '../helpers/emulator.js';
import { fakeAuth } from '../helpers/auth.js';
import { etagOf } from '../../src/gateway/plugins/common.js';
import { ROW_BYTES_MIN } from '../../src/types/wire.js';

const N = 1500;
const BIG = 600;
const SMALL = 20;

function row(i: number): Record<string, unknown> {
  return {
    id: i,
    s: i % 5 === 0 ? null : `ü "ключ" 😀 \n\t\\ \u0001 </script> ${i}`,
    n: i % 7 === 0 ? null : `${i}.${i % 100}`,
    bn: `-123456789012345678901234567890.${i}`,
    x: i % 50 === 1 ? 'NaN' : i % 50 === 2 ? '-Infinity' : i / 8,
    ts: `2024-02-29 12:34:56.${String(i % 1_000_000).padStart(6, '0')}`,
    d: i % 9 === 0 ? null : '2024-02-29',
    b: i % 3 === 0,
    by: Buffer.from([i & 0xff, 0, 255, i >> 8]).toString('base64'),
    rec: i % 4 === 0 ? null : { a: `a${i} €`, r: [i, -i], inner: i % 8 === 1 ? null : { z: i / 2 } },
    tags: i % 6 === 0 ? [] : ['t', `€${i}`],
  };
}

const schema = {
  fields: [
    { name: 'id', type: 'INTEGER' },
    { name: 's', type: 'STRING' },
    { name: 'n', type: 'NUMERIC' },
    { name: 'bn', type: 'BIGNUMERIC' },
    { name: 'x', type: 'FLOAT' },
    { name: 'ts', type: 'TIMESTAMP' },
    { name: 'd', type: 'DATE' },
    { name: 'b', type: 'BOOLEAN' },
    { name: 'by', type: 'BYTES' },
    {
      name: 'rec',
      type: 'RECORD',
      fields: [
        { name: 'a', type: 'STRING' },
        { name: 'r', type: 'INTEGER', mode: 'REPEATED' },
        { name: 'inner', type: 'RECORD', fields: [{ name: 'z', type: 'FLOAT' }] },
      ],
    },
    { name: 'tags', type: 'STRING', mode: 'REPEATED' },
  ],
};

interface Raw {
  bytes: Buffer;
  text: string;
  headers: Headers;
}

async function raw(url: string): Promise<Raw> {
  const r = await fetch(url);
  const bytes = Buffer.from(await r.arrayBuffer());
  expect(r.status, bytes.toString()).toBe(200);
  return { bytes, text: bytes.toString('utf8'), headers: r.headers };
}

/** A body split around its rows array: [before `,"rows":`, the array's text, after it]. */
function split(text: string, rowsEnd: RegExp): [string, string, string] {
  const i = text.indexOf(',"rows":[');
  expect(i).toBeGreaterThan(0);
  const tail = rowsEnd.exec(text);
  expect(tail).not.toBeNull();
  return [text.slice(0, i), text.slice(i + ',"rows":'.length, tail!.index + 1), text.slice(tail!.index + 1)];
}

/** The rows of consecutive pages as one array's text. */
const joinRows = (arrays: string[]): string => '[' + arrays.map((a) => a.slice(1, -1)).join(',') + ']';

/** Asserts what a large page and the small pages of its window share, and that the large one is sent whole with the same headers. */
function checkLarge(large: Raw, small: Raw[]): void {
  // The large page took the bytes path, the small ones the text path.
  expect(large.bytes.length).toBeGreaterThan(ROW_BYTES_MIN);
  for (const s of small) expect(s.bytes.length).toBeLessThan(ROW_BYTES_MIN);
  expect(large.headers.get('content-length')).toBe(String(large.bytes.length));
  expect(large.headers.get('content-type')).toBe('application/json; charset=UTF-8');
  expect(large.headers.get('content-type')).toBe(small[0]!.headers.get('content-type'));
  expect(large.headers.get('transfer-encoding')).toBe(small[0]!.headers.get('transfer-encoding'));
}

describe.skipIf(!hasRealEngine())('row pages: large (bytes) and small (text) pages give the same bytes', () => {
  let emu: Emulator;
  beforeAll(async () => {
    process.env['METADATA_SERVER_DETECTION'] = 'none';
    emu = await startEmulator();
    const base = `${emu.url}/bigquery/v2/projects/p`;
    expect((await rest(`${base}/datasets`, { method: 'POST', json: { datasetReference: { datasetId: 'ds' } } })).status).toBe(200);
    expect((await rest(`${base}/datasets/ds/tables`, { method: 'POST', json: { tableReference: { tableId: 't' }, schema } })).status).toBe(200);
    for (let k = 0; k < N; k += 500) {
      const rows = Array.from({ length: 500 }, (_, j) => ({ insertId: String(k + j), json: row(k + j) }));
      const ins = await rest(`${base}/datasets/ds/tables/t/insertAll`, { method: 'POST', json: { rows } });
      expect(ins.body).toEqual({ kind: 'bigquery#tableDataInsertAllResponse' });
    }
  }, 120_000);
  afterAll(async () => emu?.stop());

  const prefixes = ['', '/warehouse/v2'];
  const int64Ts = [undefined, 'true', 'false'];

  it('tabledata.list', async () => {
    const windows: { q: (max: number, at: number) => string; start: number }[] = [
      { start: 0, q: (max, at) => (at === 0 ? `maxResults=${max}` : `maxResults=${max}&startIndex=${at}`) },
      { start: 450, q: (max, at) => (at === 450 ? `maxResults=${max}&pageToken=450` : `maxResults=${max}&startIndex=${at}`) },
      { start: 1300, q: (max, at) => `maxResults=${max}&startIndex=${at}` },
    ];
    let checked = 0;
    for (const prefix of prefixes) {
      for (const ts of int64Ts) {
        for (const fields of [undefined, 'rec,id,s']) {
          for (const w of windows) {
            const url = (max: number, at: number): string =>
              `${emu.url}${prefix}/projects/p/datasets/ds/tables/t/data?${w.q(max, at)}` +
              (ts ? `&formatOptions.useInt64Timestamp=${ts}` : '') +
              (fields ? `&selectedFields=${fields}` : '');
            const large = await raw(url(BIG, w.start));
            const count = Math.min(BIG, N - w.start);
            const small: Raw[] = [];
            for (let at = w.start; at < w.start + count; at += SMALL) small.push(await raw(url(Math.min(SMALL, w.start + count - at), at)));
            checkLarge(large, small);
            const end = /\](,"pageToken":"\d+")?\}$/;
            const [head0, , ] = split(small[0]!.text, end);
            const rows = joinRows(small.map((s) => split(s.text, end)[1]));
            const token = w.start + count < N ? `,"pageToken":"${w.start + count}"` : '';
            // The whole body, byte for byte: the same head (etag is the table's), the small pages' rows, the window's token.
            expect(large.bytes.equals(Buffer.from(`${head0},"rows":${rows}${token}}`))).toBe(true);
            checked++;
          }
        }
      }
    }
    expect(checked).toBe(2 * 3 * 2 * 3);
  }, 120_000);

  it('tabledata.list cells decode to what was inserted', async () => {
    const body = (await rest(`${emu.url}/bigquery/v2/projects/p/datasets/ds/tables/t/data?maxResults=${BIG}&startIndex=700`)).body;
    expect(body.rows).toHaveLength(BIG);
    const r = body.rows[701 - 700].f.map((c: { v: unknown }) => c.v);
    expect(r).toEqual([
      '701',
      'ü "ключ" 😀 \n\t\\ \u0001 </script> 701',
      '701.1',
      '-123456789012345678901234567890.701',
      'NaN',
      '1.709210096000701E9',
      '2024-02-29',
      'false',
      Buffer.from([701 & 0xff, 0, 255, 701 >> 8]).toString('base64'),
      { f: [{ v: 'a701 €' }, { v: [{ v: '701' }, { v: '-701' }] }, { v: { f: [{ v: '350.5' }] } }] },
      [{ v: 't' }, { v: '€701' }],
    ]);
    const nulls = body.rows[720 - 700].f.map((c: { v: unknown }) => c.v);
    expect([nulls[1], nulls[2], nulls[6], nulls[9], nulls[10]]).toEqual([null, '720.2', null, null, []]);
  });

  it('jobs.query first page and jobs.getQueryResults pages', async () => {
    let checked = 0;
    for (const prefix of prefixes) {
      for (const ts of int64Ts) {
        const q = await rest(`${emu.url}${prefix}/projects/p/queries`, {
          method: 'POST',
          json: { query: 'SELECT * FROM ds.t ORDER BY id', useLegacySql: false, maxResults: BIG, ...(ts ? { formatOptions: { useInt64Timestamp: ts === 'true' } } : {}) },
        });
        expect(q.status).toBe(200);
        const jobId = q.body.jobReference.jobId as string;
        const url = (max: number, at: number, token = false): string =>
          `${emu.url}${prefix}/projects/p/queries/${jobId}?maxResults=${max}&${token ? 'pageToken' : 'startIndex'}=${at}` + (ts ? `&formatOptions.useInt64Timestamp=${ts}` : '');
        const end = /\],"totalBytesProcessed"/;
        const smallPages = async (start: number, count: number): Promise<Raw[]> => {
          const out: Raw[] = [];
          for (let at = start; at < start + count; at += SMALL) out.push(await raw(url(Math.min(SMALL, start + count - at), at)));
          return out;
        };
        // The first page came with the query (the engine's first page, as bytes).
        const first = await smallPages(0, BIG);
        const qText = JSON.stringify(q.body);
        const firstRows = joinRows(first.map((s) => split(s.text, end)[1]));
        expect(JSON.stringify(q.body.rows)).toBe(JSON.stringify(JSON.parse(firstRows)));
        expect(q.body.pageToken).toBe(String(BIG));
        expect(qText.length).toBeGreaterThan(ROW_BYTES_MIN);
        for (const [start, token] of [[0, false], [450, true], [1300, false]] as const) {
          const large = await raw(url(BIG, start, token));
          const count = Math.min(BIG, N - start);
          const small = start === 0 ? first : await smallPages(start, count);
          checkLarge(large, small);
          const [head0, , tail0] = split(small[0]!.text, end);
          const rows = joinRows(small.map((s) => split(s.text, end)[1]));
          // Head: the small page's but for its window's etag and page token.
          const head = head0
            .replace(/"etag":"[^"]*"/, `"etag":${JSON.stringify(etagOf(`${jobId}/${start}/${BIG}`))}`)
            .replace(/,"pageToken":"\d+"/, start + count < N ? `,"pageToken":"${start + count}"` : '');
          expect(large.bytes.equals(Buffer.from(`${head},"rows":${rows}${tail0}`))).toBe(true);
          checked++;
        }
      }
    }
    expect(checked).toBe(2 * 3 * 3);
  }, 120_000);

  it('jobs.query first page as bytes equals the same page as text', async () => {
    // Same query, same window: the large first page (bytes) and getQueryResults of small pages (text).
    const r = await fetch(`${emu.url}/projects/p/queries`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'SELECT id, s, rec, tags FROM ds.t WHERE id < 1000 ORDER BY id', useLegacySql: false, maxResults: BIG }),
    });
    const bytes = Buffer.from(await r.arrayBuffer());
    expect(r.headers.get('content-length')).toBe(String(bytes.length));
    const text = bytes.toString('utf8');
    const jobId = (JSON.parse(text) as { jobReference: { jobId: string } }).jobReference.jobId;
    const end = /\],"totalBytesProcessed"/;
    const small: Raw[] = [];
    for (let at = 0; at < BIG; at += SMALL) small.push(await raw(`${emu.url}/projects/p/queries/${jobId}?maxResults=${SMALL}&startIndex=${at}`));
    expect(bytes.length).toBeGreaterThan(ROW_BYTES_MIN);
    expect(split(text, end)[1]).toBe(joinRows(small.map((s) => split(s.text, end)[1])));
  });

  it('the Node client reads multi-page results', async () => {
    const bq = new BigQuery({ projectId: 'p', apiEndpoint: emu.url, authClient: fakeAuth() });
    // tabledata.list page by page (pageToken), as an application paging by hand does.
    const listed: Record<string, unknown>[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const [rows, next] = await bq.dataset('ds').table('t').getRows({ autoPaginate: false, maxResults: BIG, ...(pageToken ? { pageToken } : {}) });
      listed.push(...rows);
      pageToken = (next as { pageToken?: string } | null)?.pageToken;
      pages++;
    } while (pageToken);
    expect(pages).toBe(3);
    expect(listed).toHaveLength(N);
    const [queried] = await bq.query({ query: 'SELECT * FROM ds.t ORDER BY id', maxResults: BIG });
    expect(queried).toHaveLength(N);
    const byId = (rows: Record<string, unknown>[]): Record<string, unknown>[] => [...rows].sort((a, b) => Number(a['id']) - Number(b['id']));
    const norm = (r: Record<string, unknown>): unknown => JSON.parse(JSON.stringify(r, (_k, v: unknown) => (typeof v === 'number' && Number.isNaN(v) ? 'NaN' : v)));
    expect(byId(listed).map(norm)).toEqual(queried.map(norm));
    const r = queried[701] as Record<string, any>;
    expect(r['id']).toBe(701);
    expect(r['s']).toBe('ü "ключ" 😀 \n\t\\ \u0001 </script> 701');
    expect(r['n'].toString()).toBe('701.1');
    expect(r['bn'].toFixed()).toBe('-123456789012345678901234567890.701');
    expect(r['x']).toBeNaN();
    expect(r['ts'].value).toBe('2024-02-29T12:34:56.000701000Z');
    expect(r['rec']).toEqual({ a: 'a701 €', r: [701, -701], inner: { z: 350.5 } });
    expect((queried[705] as Record<string, any>)['rec']).toEqual({ a: 'a705 €', r: [705, -705], inner: null });
    expect(r['tags']).toEqual(['t', '€701']);
    expect(queried[1499]!['id']).toBe(1499);
  }, 60_000);
});
