// The insertAll body split: the `rows` bytes are found by a byte-wise scan and
// forwarded untouched; anything the scan cannot vouch for falls back to a full parse.
import { describe, expect, it } from 'vitest';
import { rowsKind, splitInsertAllBody } from '../../src/gateway/insert-body.js';

const split = (s: string) => splitInsertAllBody(Buffer.from(s, 'utf8'));

describe('splitInsertAllBody', () => {
  it('forwards the rows bytes exactly as sent and parses the rest', () => {
    const rows = '[ {"insertId":"ü-1","json":{"s":"a]}\\"[{","ключ":"значение 😀","n":1.5e3}} ,{"json":{}} ]';
    const body = `\n{ "kind": "bigquery#tableDataInsertAllRequest", "rows" : ${rows}, "skipInvalidRows": true ,"templateSuffix":"_x" }\r\n`;
    const r = split(body)!;
    expect(r).toBeDefined();
    expect(r.rows.toString('utf8')).toBe(rows);
    expect(JSON.parse(r.rows.toString('utf8'))).toEqual(JSON.parse(rows));
    expect(r.rest).toEqual({ kind: 'bigquery#tableDataInsertAllRequest', skipInvalidRows: true, templateSuffix: '_x' });
    expect(r.text).toBe(body);
  });

  it('finds rows after fields with multi-byte text and nested values', () => {
    const r = split('{"a":{"b":["ä{",[1,2]]},"ĉ":"\\\\","rows":[{"json":{"x":null}}]}')!;
    expect(r.rows.toString()).toBe('[{"json":{"x":null}}]');
    expect(r.rest).toEqual({ a: { b: ['ä{', [1, 2]] }, ĉ: '\\' });
  });

  it('leaves bodies it cannot vouch for to the full parser', () => {
    for (const bad of [
      '',
      '   ',
      '[1]',
      '{"rowsx":[]}',
      '{"rows":[{"json":{}}]',
      '{"rows":[{"json":{}}]} trailing',
      '{"rows":[{"json":"unterminated}]}',
      '{"rows" [1]}',
      '{"rows":[1],}',
      '{"skip": tru e, "rows":[1]}',
    ]) expect(split(bad), bad).toBeUndefined();
  });

  it('classifies the rows value', () => {
    const kind = (s: string) => rowsKind(Buffer.from(s));
    expect(kind('[{"json":{}}]')).toBe('items');
    expect(kind('[ \n ]')).toBe('empty');
    expect(kind('null')).toBe('null');
    expect(kind('{"json":{}}')).toBe('other');
    expect(kind('"x"')).toBe('other');
  });
});
