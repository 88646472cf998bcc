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
      '{"rows":[{"json":"unterminated}], "x": 1}',
      '{"rows" [1]}',
      '{"rows":[1],}',
      '{"skip": tru e, "rows":[1]}',
    ]) expect(split(bad), bad).toBeUndefined();
  });

  it('takes rows that end the body to its last ] without scanning them (the engine parse decides)', () => {
    const last = split('{"skipInvalidRows":true, "rows": [{"json":{"s":"]}"}}] \n}\n')!;
    expect(last.rows.toString()).toBe('[{"json":{"s":"]}"}}]');
    expect(last.scanned).toBe(false);
    expect(last.rest).toEqual({ skipInvalidRows: true });
    // Not one JSON value: the caller gets the bytes, the engine's parse rejects them, the full parse takes over.
    for (const [body, rows] of [
      ['{"rows":[{"json":"unterminated}]}', '[{"json":"unterminated}]'],
      ['{"rows":[{"json":{}}],"x":[1]}', '[{"json":{}}],"x":[1]'],
      ['{"rows":[{"json":{"a":1}}],"rows":[{"json":{"a":2}}]}', '[{"json":{"a":1}}],"rows":[{"json":{"a":2}}]'],
    ] as const) {
      const r = split(body)!;
      expect(r.rows.toString(), body).toBe(rows);
      expect(r.scanned).toBe(false);
      expect(() => JSON.parse(r.rows.toString())).toThrow();
    }
    // Keys after rows: the rows value is scanned.
    const scanned = split('{"rows":[{"json":{"s":"]"}}],"skipInvalidRows":true}')!;
    expect(scanned.rows.toString()).toBe('[{"json":{"s":"]"}}]');
    expect(scanned.scanned).toBe(true);
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
