// InsertRows over rows_utf8 (what the gateway forwards): bodies the scanner
// takes and bodies it leaves to the generic path store the same rows and
// answer the same errors; the request's bytes are what the WAL replays.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RpcError, startInProcess, type InProcessEngine } from './helpers.js';

let eng: InProcessEngine;
const T = { projectId: 'p', datasetId: 'd' };
const fields = [
  { name: 'id', type: 'INTEGER', mode: 'REQUIRED' },
  { name: 'Name', type: 'STRING' },
  { name: 'amount', type: 'NUMERIC' },
  { name: 'at', type: 'TIMESTAMP' },
  { name: 'tags', type: 'STRING', mode: 'REPEATED' },
];

async function table(tableId: string): Promise<void> {
  await eng.client.call('InsertTable', { projectId: 'p', datasetId: 'd', resourceJson: JSON.stringify({ tableReference: { tableId }, schema: { fields } }) });
}
const insert = (tableId: string, body: string, extra: Record<string, unknown> = {}) =>
  eng.client.call<{ insertErrorsJson: string }>('InsertRows', { table: { ...T, tableId }, rowsUtf8: Buffer.from(body), ...extra });
const rows = async (e: InProcessEngine, tableId: string) =>
  JSON.parse((await e.client.call<{ rowsJson: string }>('ListRows', { table: { ...T, tableId }, maxResults: 100 })).rowsJson) as unknown[];

beforeAll(async () => {
  eng = await startInProcess();
  await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
});
afterAll(async () => {
  await eng.close();
});

describe('InsertRows over rows_utf8', () => {
  it('stores the same rows whether the scanner or the generic path reads them', async () => {
    await table('fast');
    await table('generic');
    const rowsOf = (nameKey: string) =>
      `[{"insertId":"a","json":{"id":"1","${nameKey}":"x\\u00e9","amount":"12.50","at":"2024-01-01T00:00:00Z","tags":["t","u"]}},` +
      `{"json":{"id":2,"${nameKey}":"é😀","amount":-0.5,"at":1700000000,"tags":null},"insertId":"b"},` +
      `{"json":{"id":"3","${nameKey}":null}}]`;
    // "Name" is the column's own spelling; "name" matches it only case-insensitively (the generic path's lookup).
    expect((await insert('fast', rowsOf('Name'))).insertErrorsJson).toBe('');
    expect((await insert('generic', rowsOf('name'))).insertErrorsJson).toBe('');
    const stored = await rows(eng, 'fast');
    expect(stored).toHaveLength(3);
    expect(await rows(eng, 'generic')).toEqual(stored);
    // A retry is de-duplicated by insertId, whichever comes first in the item.
    expect((await insert('fast', rowsOf('Name'))).insertErrorsJson).toBe('');
    expect(await rows(eng, 'fast')).toHaveLength(4); // only the row without an id again
  });

  it('keeps accepted rows as their bytes until read: a schema change and a query read them as stored', async () => {
    // An accepted request's rows are converted when first read (DeferredBatch):
    // here by the schema change, which matches the old columns by name.
    await table('held');
    const body = `[{"json":{"id":"7","Name":"日本語 é😀","amount":"1.25","at":"2024-02-03T04:05:06.5Z","tags":["a"]}},{"json":{"id":8}}]`;
    expect((await insert('held', body)).insertErrorsJson).toBe('');
    const schema = { fields: [...fields, { name: 'extra', type: 'INT64' }] };
    await eng.client.call('UpdateTable', { ...T, tableId: 'held', resourceJson: JSON.stringify({ schema }), options: { patch: 'true' } });
    expect(await rows(eng, 'held')).toEqual([
      { f: [{ v: '7' }, { v: '日本語 é😀' }, { v: '1.25' }, { v: '2024-02-03T04:05:06.500000Z' }, { v: [{ v: 'a' }] }, { v: null }] },
      { f: [{ v: '8' }, { v: null }, { v: null }, { v: null }, { v: [] }, { v: null }] },
    ]);
    const q = await eng.client.call<{ rowsJson: string }>('ExecuteQuery', { projectId: 'p', jobId: 'held_sum', query: 'SELECT SUM(amount) AS s, STRING_AGG(Name) AS n FROM d.held', maxResults: 10 });
    expect(JSON.parse(q.rowsJson)).toEqual([{ f: [{ v: '1.25' }, { v: '日本語 é😀' }] }]);
  });

  it('answers the same errors on both paths, with and without skipInvalidRows', async () => {
    await table('errs');
    const bad = (k: string) => `[{"json":{"id":"x","${k}":"a"}},{"json":{"${k}":"b"}},{"json":{"id":5,"${k}":"c"}},7]`;
    const fast = await insert('errs', bad('Name').replace(',7]', ']'));
    const generic = await insert('errs', bad('NAME').replace(',7]', ']'));
    expect(fast.insertErrorsJson).toBe(generic.insertErrorsJson);
    expect(JSON.parse(fast.insertErrorsJson)).toEqual([
      { index: 0, errors: [{ reason: 'invalid', location: 'id', debugInfo: '', message: 'Cannot convert value to integer (bad value): x' }] },
      { index: 1, errors: [{ reason: 'invalid', location: 'id', debugInfo: '', message: 'Missing required field: id.' }] },
      { index: 2, errors: [{ reason: 'stopped', location: '', debugInfo: '', message: '' }] },
    ]);
    // A row that is not an object is the generic path's; skipInvalidRows stores the valid row.
    const skipped = await insert('errs', bad('Name'), { skipInvalidRows: true });
    expect(JSON.parse(skipped.insertErrorsJson).map((e: { index: number }) => e.index)).toEqual([0, 1, 3]);
    expect(JSON.parse(skipped.insertErrorsJson)[2].errors[0].message).toBe('Row must be a JSON object.');
    expect(await rows(eng, 'errs')).toHaveLength(1);
  });

  it('stores the values of the kept rows when only some are kept (rows only checked at first)', async () => {
    // The scanner first only checks a request's rows; when not all of them
    // are kept (a rejected row under skipInvalidRows, a repeated insertId), the
    // kept ones are made from the bytes again.
    await table('some');
    const body =
      `[{"insertId":"k1","json":{"id":"1","Name":"first é","amount":"10.5","at":"2024-01-01T00:00:00Z"}},` +
      `{"json":{"id":"x","Name":"bad","amount":"1"}},` +
      `{"insertId":"k1","json":{"id":"9","Name":"repeat","amount":"9"}},` +
      `{"json":{"id":"2","Name":"second","amount":"-0.25"}}]`;
    const r = await insert('some', body, { skipInvalidRows: true });
    expect(JSON.parse(r.insertErrorsJson).map((e: { index: number }) => e.index)).toEqual([1]);
    expect(await rows(eng, 'some')).toEqual([
      { f: [{ v: '1' }, { v: 'first é' }, { v: '10.5' }, { v: '2024-01-01T00:00:00Z' }, { v: [] }] },
      { f: [{ v: '2' }, { v: 'second' }, { v: '-0.25' }, { v: null }, { v: [] }] },
    ]);
  });

  it('rejects invalid JSON and a non-list as before', async () => {
    await table('bad');
    for (const [body, message] of [
      ['[{"json":{"id":1}', 'Invalid JSON payload received.'],
      ['[{"json":{"id":01}}]', 'Invalid JSON payload received.'],
      ['{"json":{"id":1}}', 'Invalid JSON payload received. rows must be a list.'],
    ] as const) {
      const e = await insert('bad', body).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(RpcError);
      expect((e as RpcError).body?.message).toBe(message);
    }
  });

  it('replays the request bytes from the WAL after a crash image', async () => {
    await table('wal');
    const body = '[{"insertId":"w1","json":{"id":"1","Name":"caf\\u00e9","amount":"1.10","tags":["a"]}},{"json":{"id":2,"NAME":"x"}}]';
    expect((await insert('wal', body)).insertErrorsJson).toBe('');
    const before = await rows(eng, 'wal');
    const copy = fs.mkdtempSync(eng.dataDir + '-copy');
    fs.cpSync(eng.dataDir, copy, { recursive: true, filter: (src) => path.basename(src) !== 'catalog.lock' });
    const again = await startInProcess(copy);
    try {
      expect(await rows(again, 'wal')).toEqual(before);
    } finally {
      await again.close();
    }
  });
});
