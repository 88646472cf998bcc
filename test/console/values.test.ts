// How the console reads REST cells (console/src/values.ts): exact numbers,
// TIMESTAMP in UTC to the microsecond, JSON indented without re-parsing,
// nested values and the CSV/JSON exports.
import { describe, expect, it } from 'vitest';
import type { FieldSchema } from '../../console/src/api.js';
import { decode, formatTimestamp, preview, prettyJson, toCsv, toJsonLines } from '../../console/src/values.js';
import { errorPosition, referencedTables } from '../../console/src/sql-text.js';

describe('console values', () => {
  it('TIMESTAMP int64 microseconds -> UTC text, before 1970 and at the range ends too', () => {
    expect(formatTimestamp('1714566600123456')).toBe('2024-05-01 12:30:00.123456 UTC');
    expect(formatTimestamp('1714566600000000')).toBe('2024-05-01 12:30:00 UTC');
    expect(formatTimestamp('1714566600120000')).toBe('2024-05-01 12:30:00.12 UTC');
    expect(formatTimestamp('-1')).toBe('1969-12-31 23:59:59.999999 UTC');
    expect(formatTimestamp('-62135596800000000')).toBe('0001-01-01 00:00:00 UTC');
    expect(formatTimestamp('253402300799999999')).toBe('9999-12-31 23:59:59.999999 UTC');
    // float seconds (a client that did not ask for int64)
    expect(formatTimestamp('1.7145666E9')).toBe('2024-05-01 12:30:00 UTC');
  });

  it('NUMERIC, BIGNUMERIC and INT64 stay exactly as sent', () => {
    const big: FieldSchema = { name: 'b', type: 'BIGNUMERIC' };
    expect(preview(decode(big, '578960446186580977117854925043439539266.34992332820282019728792003956564819967'))).toBe(
      '578960446186580977117854925043439539266.34992332820282019728792003956564819967',
    );
    expect(preview(decode({ name: 'i', type: 'INTEGER' }, '9223372036854775807'))).toBe('9223372036854775807');
  });

  it('STRUCT and ARRAY decode to trees; their one-line form quotes strings', () => {
    const f: FieldSchema = { name: 'items', type: 'RECORD', mode: 'REPEATED', fields: [{ name: 'sku', type: 'STRING' }, { name: 'qty', type: 'INTEGER' }] };
    const v = decode(f, [{ v: { f: [{ v: 'a, b' }, { v: '2' }] } }, { v: { f: [{ v: null }, { v: '3' }] } }]);
    expect(v.kind).toBe('array');
    expect(preview(v)).toBe('[{sku: "a, b", qty: 2}, {sku: NULL, qty: 3}]');
    expect(preview(decode(f, null))).toBe('[]');
  });

  it('JSON is indented token by token: long numbers and their text are kept', () => {
    expect(prettyJson('{"a":12345678901234567890,"b":[1.10,{}],"c":"x,:{y"}')).toBe(
      '{\n  "a": 12345678901234567890,\n  "b": [\n    1.10,\n    {}\n  ],\n  "c": "x,:{y"\n}',
    );
    expect(prettyJson('{"s":"quote \\" inside"}')).toBe('{\n  "s": "quote \\" inside"\n}');
  });

  it('CSV quotes what needs it, leaves NULL empty and writes nested values as JSON', () => {
    const fields: FieldSchema[] = [
      { name: 's', type: 'STRING' },
      { name: 'ts', type: 'TIMESTAMP' },
      { name: 'arr', type: 'INTEGER', mode: 'REPEATED' },
    ];
    const rows = [
      [decode(fields[0]!, 'a,"b"'), decode(fields[1]!, '0'), decode(fields[2]!, [{ v: '1' }, { v: '2' }])],
      [decode(fields[0]!, null), decode(fields[1]!, null), decode(fields[2]!, [])],
    ];
    expect(toCsv(fields, rows)).toBe('s,ts,arr\r\n"a,""b""",1970-01-01 00:00:00 UTC,"[""1"",""2""]"\r\n,,[]\r\n');
    expect(toJsonLines(fields, rows)).toBe('{"s":"a,\\"b\\"","ts":"1970-01-01 00:00:00 UTC","arr":["1","2"]}\n{"s":null,"ts":null,"arr":[]}\n');
  });
});

describe('console SQL text helpers', () => {
  it('reads the service error position', () => {
    expect(errorPosition('Syntax error: Unexpected end of script at [3:14]')).toEqual({ line: 3, col: 14 });
    expect(errorPosition('Not found: Table p:d.t was not found in location US')).toBeUndefined();
  });

  it('finds the tables a query reads and their aliases', () => {
    expect(referencedTables('SELECT * FROM ds.t AS a JOIN `p-1.ds.u` b ON a.x = b.x LEFT JOIN ds.v WHERE 1')).toEqual([
      { path: ['ds', 't'], alias: 'a' },
      { path: ['p-1', 'ds', 'u'], alias: 'b' },
      { path: ['ds', 'v'] },
    ]);
  });
});
