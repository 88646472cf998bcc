// The ORC reader over files Apache ORC's own writers produced (test/fixtures/orc,
// see its README): every column kind, RLE v1 (format 0.11) and v2 (0.12),
// the NONE / ZLIB / SNAPPY / LZ4 / ZSTD codecs, decimal64, timestamps before
// 1970 and unions; the values asserted are the ones Apache ORC's own reader
// prints for these files. Damaged files are refused as load errors, never a crash.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IoError } from '../../src/io/errors.js';
import { orcRows, readOrc } from '../../src/io/orc.js';

const FIX = join(import.meta.dirname, '..', 'fixtures', 'orc');
const file = (name: string): Buffer => readFileSync(join(FIX, name));
const shape = (fields: { name: string; type: string; mode?: string; fields?: unknown[] }[]): unknown =>
  fields.map((f) => [f.name, f.type, f.mode, ...(f.fields ? [shape(f.fields as typeof fields)] : [])]);

describe('ORC reader', () => {
  it('reads every primitive and compound kind with the service type mapping (ZLIB, RLE v2)', () => {
    const { fields, rows } = readOrc(file('TestOrcFile.test1.orc'));
    const inner = [['int1', 'INTEGER', 'NULLABLE'], ['string1', 'STRING', 'NULLABLE']];
    expect(shape(fields)).toEqual([
      ['boolean1', 'BOOLEAN', 'NULLABLE'], ['byte1', 'INTEGER', 'NULLABLE'], ['short1', 'INTEGER', 'NULLABLE'], ['int1', 'INTEGER', 'NULLABLE'],
      ['long1', 'INTEGER', 'NULLABLE'], ['float1', 'FLOAT', 'NULLABLE'], ['double1', 'FLOAT', 'NULLABLE'], ['bytes1', 'BYTES', 'NULLABLE'],
      ['string1', 'STRING', 'NULLABLE'], ['middle', 'RECORD', 'NULLABLE', [['list', 'RECORD', 'REPEATED', inner]]], ['list', 'RECORD', 'REPEATED', inner],
      // A map is a repeated record of key and value.
      ['map', 'RECORD', 'REPEATED', [['key', 'STRING', 'NULLABLE'], ['value', 'RECORD', 'NULLABLE', inner]]],
    ]);
    expect(rows).toHaveLength(2);
    expect(rows[1]).toEqual({
      boolean1: true, byte1: '100', short1: '2048', int1: '65536', long1: '9223372036854775807', float1: 2, double1: -5, bytes1: '', string1: 'bye',
      middle: { list: [{ int1: '1', string1: 'bye' }, { int1: '2', string1: 'sigh' }] },
      list: [{ int1: '100000000', string1: 'cat' }, { int1: '-100000', string1: 'in' }, { int1: '1234', string1: 'hat' }],
      map: [{ key: 'chani', value: { int1: '5', string1: 'chani' } }, { key: 'mauddib', value: { int1: '1', string1: 'mauddib' } }],
    });
    expect(rows[0]!['bytes1']).toBe(Buffer.from([0, 1, 2, 3, 4]).toString('base64'));
  });

  it('reads format 0.11 files (RLE v1, dictionary strings, no compression)', () => {
    const { rows } = readOrc(file('TestOrcFile.testMemoryManagementV11.orc'));
    expect(rows).toHaveLength(2500);
    expect(rows.slice(0, 3)).toEqual([{ int1: '0', string1: '0' }, { int1: '300', string1: 'a' }, { int1: '600', string1: '14' }]);
    expect(rows[2499]).toEqual({ int1: '749700', string1: '619e' });
    // int1 is 300 * row: a run the RLE must reproduce exactly.
    expect(rows.every((r, i) => r['int1'] === String(300 * i))).toBe(true);
  });

  it('reads the SNAPPY, LZ4 and ZSTD codecs', () => {
    const snappy = readOrc(file('TestOrcFile.testSnappy.orc')).rows;
    expect(snappy).toHaveLength(10000);
    expect(snappy[0]).toEqual({ int1: '-1160101563', string1: 'f50dcb8' });
    expect(snappy[9999]).toEqual({ int1: '213079623', string1: 'baf72702' });
    // The LZ4 and ZSTD files hold the same rows: y counts 0..9999.
    const lz4 = readOrc(file('TestVectorOrcFile.testLz4.orc')).rows;
    const zstd = readOrc(file('TestVectorOrcFile.testZstd.0.12.orc')).rows;
    expect(zstd).toEqual(lz4);
    expect(lz4).toHaveLength(10000);
    expect(lz4[1]).toEqual({ x: '-836442134', y: '1', z: '1238145679872042884' });
    expect(lz4.every((r, i) => r['y'] === String(i))).toBe(true);
  });

  it('reads timestamps before 1970 to the microsecond, dates, unions and long decimals', () => {
    const d = readOrc(file('TestOrcFile.testDate1900.orc')).rows;
    expect(d).toHaveLength(70000);
    expect(d[0]).toEqual({ time: '1900-05-05T12:34:56.100000Z', date: '1900-12-25' });
    expect(d[1]).toEqual({ time: '1900-05-05T12:34:56.100100Z', date: '1900-12-25' });
    expect(d[69999]).toEqual({ time: '1969-05-05T12:34:56.199900Z', date: '1969-12-25' });

    const u = readOrc(file('TestOrcFile.testUnionAndTimestamp.orc'));
    // A union of several variants is a record of field_N, the row's variant set; decimal(38,18) is BIGNUMERIC.
    expect(shape(u.fields)).toEqual([
      ['time', 'TIMESTAMP', 'NULLABLE'],
      ['union', 'RECORD', 'NULLABLE', [['field_0', 'INTEGER', 'NULLABLE'], ['field_1', 'STRING', 'NULLABLE']]],
      ['decimal', 'BIGNUMERIC', 'NULLABLE'],
    ]);
    expect(u.rows.slice(0, 3)).toEqual([
      { time: '2000-03-12T15:00:00.000000Z', union: { field_0: '42', field_1: null }, decimal: '12345678.6547456' },
      // 12:00:00.123456789: nanoseconds past the microsecond are dropped.
      { time: '2000-03-20T12:00:00.123456Z', union: { field_0: null, field_1: 'hello' }, decimal: '-5643.234' },
      { time: null, union: null, decimal: null },
    ]);
    expect(u.rows).toHaveLength(5077);
  });

  it('reads short decimals of newer writers (decimal64, RLE v2 at the type scale) as NUMERIC', () => {
    const { fields, rows } = readOrc(file('decimal64_v2.orc'));
    expect(fields.map((f) => f.type)).toEqual(['INTEGER', 'NUMERIC', 'NUMERIC', 'NUMERIC', 'NUMERIC']);
    expect(rows[0]).toEqual({ a: '17292380420', b: '24', c: '36164.16', d: '0.03', e: '0.01' });
    expect(rows[9]).toEqual({ a: '17292380422', b: '105', c: '47240.84', d: '0.84', e: '0.82' });
  });

  it('refuses damaged files as load errors naming the file, whatever the damage', () => {
    const good = file('TestOrcFile.test1.orc');
    const refuse = (bytes: Uint8Array): IoError => {
      try {
        orcRows([{ uri: 'file:///x.orc', data: Buffer.from(bytes) }], undefined);
      } catch (e) {
        expect(e).toBeInstanceOf(IoError);
        return e as IoError;
      }
      throw new Error('accepted a damaged file');
    };
    const e = refuse(Buffer.from('not orc at all'));
    expect([e.code, e.reason]).toEqual([400, 'invalid']);
    expect(e.message).toMatch(/not a readable ORC file .*File: file:\/\/\/x\.orc/);
    // Every cut of the file, and bytes flipped through it: refused or read, never another kind of error.
    let refused = 0;
    for (let cut = 1; cut < good.length; cut += 7) {
      try {
        orcRows([{ uri: 'f', data: good.subarray(0, cut) }], undefined);
      } catch (err) {
        expect(err).toBeInstanceOf(IoError);
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(0);
    for (let at = 3; at < good.length; at += 5) {
      const bad = Buffer.from(good);
      bad[at] = bad[at]! ^ 0x5a;
      try {
        orcRows([{ uri: 'f', data: bad }], undefined);
      } catch (err) {
        expect(err).toBeInstanceOf(IoError);
      }
    }
  });
});
