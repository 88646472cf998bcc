// The engine's rows_utf8 over gRPC (the gateway's path to an engine whose
// local socket is not up, and any other gRPC client): only when asked for
// with want_rows_utf8, only for pages of ROW_BYTES_MIN bytes or more, and
// then exactly the UTF-8 of the rows_json the same request gives without it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcessEngine } from '../engine/helpers.js';
import { ROW_BYTES_MIN } from '../../src/types/wire.js';

const T = { projectId: 'p', datasetId: 'd', tableId: 't' };
interface Page { rowsJson: string; rowsUtf8: Buffer; totalRows: number; nextIndex: number; etag: string }
interface Query { rowsJson: string; rowsUtf8: Buffer; resultTable: typeof T; totalRows: number }

let eng: InProcessEngine;
beforeAll(async () => {
  eng = await startInProcess();
  await eng.client.call('InsertDataset', { projectId: 'p', resourceJson: JSON.stringify({ datasetReference: { datasetId: 'd' } }) });
  const fields = [{ name: 'id', type: 'INT64' }, { name: 's', type: 'STRING' }, { name: 'ts', type: 'TIMESTAMP' }];
  await eng.client.call('InsertTable', { projectId: 'p', datasetId: 'd', resourceJson: JSON.stringify({ tableReference: { tableId: 't' }, schema: { fields } }) });
  const rows = Array.from({ length: 2000 }, (_, i) => ({ json: { id: i, s: `ü 😀 "${i}"`, ts: 1_700_000_000 + i } }));
  expect((await eng.client.call<{ insertErrorsJson: string }>('InsertRows', { table: T, rowsJson: JSON.stringify(rows) })).insertErrorsJson).toBe('');
});
afterAll(async () => eng?.close());

describe('rows_utf8 over gRPC', () => {
  it('ListRows: bytes only when wanted and large, equal to the text', async () => {
    for (const timestampFormat of ['TIMESTAMP_RFC3339', 'TIMESTAMP_FLOAT_SECONDS', 'TIMESTAMP_INT64_MICROS']) {
      for (const [startIndex, maxResults] of [[0, 2000], [37, 1000], [1990, 100], [5, 10]] as const) {
        const req = { table: T, startIndex, maxResults, timestampFormat, stringScalars: true };
        const text = await eng.client.call<Page>('ListRows', req);
        const bytes = await eng.client.call<Page>('ListRows', { ...req, wantRowsUtf8: true });
        expect(text.rowsUtf8.length).toBe(0);
        const big = Buffer.byteLength(text.rowsJson) >= ROW_BYTES_MIN;
        expect(bytes.rowsUtf8.length > 0).toBe(big);
        if (big) {
          expect(bytes.rowsJson).toBe('');
          expect(bytes.rowsUtf8.equals(Buffer.from(text.rowsJson))).toBe(true);
        } else expect(bytes.rowsJson).toBe(text.rowsJson);
        expect({ ...bytes, rowsJson: '', rowsUtf8: undefined }).toEqual({ ...text, rowsJson: '', rowsUtf8: undefined });
      }
    }
  });

  it('ExecuteQuery: the first page likewise', async () => {
    const q = (jobId: string, want: boolean) =>
      eng.client.call<Query>('ExecuteQuery', { projectId: 'p', jobId, query: 'SELECT * FROM d.t ORDER BY id DESC', maxResults: 1500, timestampFormat: 'TIMESTAMP_FLOAT_SECONDS', stringScalars: true, wantRowsUtf8: want });
    const text = await q('j1', false);
    const bytes = await q('j2', true);
    expect(text.rowsUtf8.length).toBe(0);
    expect(bytes.rowsJson).toBe('');
    expect(Buffer.byteLength(text.rowsJson)).toBeGreaterThan(ROW_BYTES_MIN);
    expect(bytes.rowsUtf8.equals(Buffer.from(text.rowsJson))).toBe(true);
    expect(bytes.totalRows).toBe(2000);
  });
});
