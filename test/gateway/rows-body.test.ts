// rows-body.ts: a page of rows sent as the engine's bytes gives the same
// response (bytes and headers) as the same page sent as text.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { rowsOf, rowsText, sendRowsBody, type RowsBody } from '../../src/gateway/rows-body.js';

describe('rows-body', () => {
  it('takes the bytes when present, else the text, and no rows for an empty array', () => {
    expect(rowsOf({ rows_json: '[1]', rows_utf8: Buffer.from('[2]') })).toEqual(Buffer.from('[2]'));
    expect(rowsOf({ rows_json: '[1]', rows_utf8: Buffer.alloc(0) })).toBe('[1]');
    expect(rowsOf({ rows_json: '[1]' })).toBe('[1]');
    expect(rowsOf({ rows_json: '[]' })).toBeUndefined();
    expect(rowsOf({ rows_json: '', rows_utf8: Buffer.from('[]') })).toBeUndefined();
    expect(rowsOf({ rows_json: '' })).toBeUndefined();
    expect(rowsText({ rows_json: '', rows_utf8: Buffer.from('["é"]') })).toBe('["é"]');
    expect(rowsText({ rows_json: '' })).toBe('[]');
  });

  it('sends a bytes page with the same bytes and headers as the text page', async () => {
    const rows = '[{"f":[{"v":"ü \\"ключ\\" 😀"},{"v":null}]},{"f":[{"v":"\\u0001"},{"v":[]}]}]';
    const head = '{"kind":"bigquery#tableDataList","etag":"e","totalRows":"2"';
    const tail = ',"pageToken":"2"}';
    const app = Fastify();
    const bodies: Record<string, RowsBody> = {
      text: { head, rows, tail },
      bytes: { head, rows: Buffer.from(rows), tail },
      none: { head, rows: undefined, tail },
    };
    app.get<{ Params: { k: string } }>('/:k', (req, reply) => sendRowsBody(reply, bodies[req.params.k]!));
    const [text, bytes, none] = await Promise.all(['text', 'bytes', 'none'].map((k) => app.inject({ method: 'GET', url: `/${k}` })));
    expect(bytes!.rawPayload.equals(text!.rawPayload)).toBe(true);
    expect(text!.payload).toBe(`${head},"rows":${rows}${tail}`);
    const { date: _d1, ...h1 } = text!.headers;
    const { date: _d2, ...h2 } = bytes!.headers;
    expect(h2).toEqual(h1);
    expect(h1['content-type']).toBe('application/json; charset=UTF-8');
    expect(h1['content-length']).toBe(String(Buffer.byteLength(text!.payload)));
    expect(none!.payload).toBe(head + tail);
    await app.close();
  });
});
