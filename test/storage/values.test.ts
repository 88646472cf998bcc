// JSON-form parsing and wire text of single values (src/types/json-values.ts, wire.ts).
import { describe, expect, it } from 'vitest';
import {
  convertJsonValue,
  formatInterval,
  formatTimestampFloatSeconds,
  parseDate,
  parseDatetime,
  parseInterval,
  parseJsonText,
  parseTimestamp,
  ValueConversionError,
} from '../../src/types/json-values.js';
import { arrayOf, rangeOf, structOf, T } from '../../src/types/types.js';
import { Decimal, Interval } from '../../src/types/values.js';
import { encodeCell, encodeRows, encodeRowsPage, javaDouble } from '../../src/types/wire.js';
import { vectorFromValues } from '../../src/types/vector.js';
import { seededRandom } from '../../src/executor/operators/sample.js';
import { formatTimestampPicosRfc3339, parseTimestampPicos, picosToMicros, picosToNanos } from '../../src/types/picos.js';

const neutral = { timestampFormat: 'RFC3339' as const };

describe('TIMESTAMP(12) values (src/types/picos.ts)', () => {
  it('reads text with up to twelve digits and epoch seconds exactly; more digits or the range is an error', () => {
    expect(parseTimestampPicos('2024-01-01 00:00:00.000000000001')).toBe(1704067200000000000001n);
    expect(parseTimestampPicos('2024-01-01T01:00:00.123456789012+01:00')).toBe(1704067200123456789012n);
    expect(parseTimestampPicos('2024-01-01')).toBe(1704067200000000000000n);
    expect(parseTimestampPicos('-0.000000000001')).toBe(-1n);
    expect(parseTimestampPicos('1704067200.1234567890129')).toBe(1704067200123456789012n);
    expect(parseTimestampPicos(1.5)).toBe(1500000000000n);
    expect(() => parseTimestampPicos('2024-01-01 00:00:00.0000000000001')).toThrow(ValueConversionError);
    expect(() => parseTimestampPicos('999999999999')).toThrow(/out of range/);
    expect(parseTimestampPicos('9999-12-31 23:59:59.999999999999')).toBe(253402300799999999999999n);
  });

  it('prints twelve digits when the fraction is not zero; truncation floors before the epoch', () => {
    expect(formatTimestampPicosRfc3339(1704067200000000000001n)).toBe('2024-01-01T00:00:00.000000000001Z');
    expect(formatTimestampPicosRfc3339(1704067200000000000000n)).toBe('2024-01-01T00:00:00Z');
    expect(formatTimestampPicosRfc3339(-1n)).toBe('1969-12-31T23:59:59.999999999999Z');
    expect([picosToMicros(-1n), picosToNanos(-1n), picosToMicros(1_999_999n)]).toEqual([-1n, -1n, 1n]);
    const v = vectorFromValues(T.TIMESTAMP_PICOS, [-1n, null]);
    expect(encodeRows([{ length: 2, columns: [v] }], 0, 2, neutral)).toBe('[{"f":[{"v":"1969-12-31T23:59:59.999999999999Z"}]},{"f":[{"v":null}]}]');
    expect(encodeRows([{ length: 1, columns: [v] }], 0, 1, { timestampFormat: 'INT64_MICROS' })).toBe('[{"f":[{"v":"-1"}]}]');
    expect(encodeRows([{ length: 1, columns: [v] }], 0, 1, { timestampFormat: 'FLOAT_SECONDS' })).toBe('[{"f":[{"v":"-1.0E-6"}]}]');
  });
});

describe('timestamps', () => {
  it('accepts the forms clients send', () => {
    const want = 1704067200000000n;
    for (const s of ['2024-01-01 00:00:00', '2024-01-01T00:00:00Z', '2024-01-01T00:00:00.000Z', '2024-01-01 00:00:00 UTC', '2024-01-01 01:00:00+01:00', '2024-01-01T00:00', '2024-01-01', '2024/01/01 00:00:00', '1704067200']) {
      expect(parseTimestamp(s), s).toBe(want);
    }
    expect(convertJsonValue(T.TIMESTAMP, 1704067200.5)).toBe(1704067200500000n);
    expect(() => parseTimestamp('yesterday')).toThrow(ValueConversionError);
    expect(() => parseTimestamp('2024-13-01')).toThrow(ValueConversionError);
  });

  it('prints float seconds like Java Double.toString', () => {
    expect(formatTimestampFloatSeconds(1704067200000000n)).toBe('1.7040672E9');
    expect(formatTimestampFloatSeconds(1704067200123456n)).toBe('1.704067200123456E9');
    expect(formatTimestampFloatSeconds(0n)).toBe('0.0');
    expect(formatTimestampFloatSeconds(1000000n)).toBe('1.0');
    expect(formatTimestampFloatSeconds(1500000n)).toBe('1.5');
    expect(formatTimestampFloatSeconds(1n)).toBe('1.0E-6');
    expect(formatTimestampFloatSeconds(-62135596800000000n)).toBe('-6.21355968E10');
    // Within a millisecond of the epoch: the fraction's leading zeros set the exponent.
    expect(formatTimestampFloatSeconds(500n)).toBe('5.0E-4');
    expect(formatTimestampFloatSeconds(10n)).toBe('1.0E-5');
    expect(formatTimestampFloatSeconds(-120n)).toBe('-1.2E-4');
    expect(formatTimestampFloatSeconds(999n)).toBe('9.99E-4');
  });

  it('prints float seconds the same from a number and from a bigint, as Java prints the double', () => {
    const rand = seededRandom(5);
    for (let i = 0; i < 20_000; i++) {
      // Magnitudes from 1 µs to ~2^53 µs, either sign, often with trailing zeros.
      const digits = 1 + Math.floor(rand() * 16);
      let m = Math.floor(rand() * 10 ** digits);
      if (rand() < 0.3) m -= m % 10 ** Math.floor(rand() * 6);
      if (rand() < 0.3) m = -m || 0;
      const viaNumber = formatTimestampFloatSeconds(m);
      expect(viaNumber, String(m)).toBe(formatTimestampFloatSeconds(BigInt(m)));
      // With at most 15 significant digits the nearest double prints back as the decimal itself.
      if (String(Math.abs(m)).replace(/0+$/, '').length <= 15) expect(viaNumber, String(m)).toBe(javaDouble(m / 1e6));
    }
  });

  it('encodes the three wire forms', () => {
    expect(encodeCell(T.TIMESTAMP, 1704067200123456n, neutral)).toBe('{"v":"2024-01-01T00:00:00.123456Z"}');
    expect(encodeCell(T.TIMESTAMP, 1704067200000000n, { timestampFormat: 'INT64_MICROS' })).toBe('{"v":"1704067200000000"}');
    expect(encodeCell(T.TIMESTAMP, 1704067200000000n, { timestampFormat: 'FLOAT_SECONDS' })).toBe('{"v":"1.7040672E9"}');
  });
});

describe('other scalar forms', () => {
  it('dates and datetimes', () => {
    expect(parseDate('1970-01-02')).toBe(1);
    expect(() => parseDate('2023-02-29')).toThrow(ValueConversionError);
    expect(parseDatetime('2024-01-01T12:00:00.5')).toBe(1704110400500000n);
    expect(() => parseDatetime('2024-01-01T12:00:00Z')).toThrow(ValueConversionError);
    expect(encodeCell(T.DATETIME, 1704110400500000n, neutral)).toBe('{"v":"2024-01-01T12:00:00.500000"}');
    expect(encodeCell(T.TIME, 3723000000, neutral)).toBe('{"v":"01:02:03"}');
  });

  it('numerics are exact and range-checked', () => {
    expect((convertJsonValue(T.NUMERIC, '1.0000000005') as Decimal).toFixed()).toBe('1.000000001');
    expect((convertJsonValue(T.NUMERIC, 12.5) as Decimal).toFixed()).toBe('12.5');
    expect(() => convertJsonValue(T.NUMERIC, '1e29')).toThrow(ValueConversionError);
    expect((convertJsonValue(T.BIGNUMERIC, '1e38') as Decimal).toFixed()).toBe('1' + '0'.repeat(38));
    expect(encodeCell(T.BIGNUMERIC, new Decimal('-0.00000000000000000000000000000000000001'), neutral)).toBe(
      '{"v":"-0.00000000000000000000000000000000000001"}',
    );
    expect(convertJsonValue(T.INT64, '9223372036854775807')).toBe(9223372036854775807n);
    expect(() => convertJsonValue(T.INT64, '9223372036854775808')).toThrow(ValueConversionError);
    expect(convertJsonValue(T.FLOAT64, 'Infinity')).toBe(Infinity);
    expect(encodeCell(T.FLOAT64, NaN, neutral)).toBe('{"v":"NaN"}');
    expect(encodeCell(T.FLOAT64, 1.5, neutral)).toBe('{"v":1.5}');
    expect(encodeCell(T.FLOAT64, 1.5, { ...neutral, stringScalars: true })).toBe('{"v":"1.5"}');
    const real = (x: number): string => encodeCell(T.FLOAT64, x, { ...neutral, stringScalars: true });
    expect([1, 1e20, 2.5e-5, 1234567.5, 12345678, -0.001, 0].map(real)).toEqual([
      '{"v":"1.0"}', '{"v":"1.0E20"}', '{"v":"2.5E-5"}', '{"v":"1234567.5"}', '{"v":"1.2345678E7"}', '{"v":"-0.001"}', '{"v":"0.0"}',
    ]);
  });

  it('intervals, ranges, JSON, nested', () => {
    expect(parseInterval('P1Y2M3DT4H5M6.5S')).toEqual(new Interval(14, 3, 14706500000n));
    expect(formatInterval(parseInterval('-1-2 -3 -4:5:6.789'))).toBe('-1-2 -3 -4:5:6.789');
    expect(encodeCell(rangeOf(T.DATE), convertJsonValue(rangeOf(T.DATE), '[UNBOUNDED, 2024-02-01)'), neutral)).toBe('{"v":"[UNBOUNDED, 2024-02-01)"}');
    expect(parseJsonText('{"big":12345678901234567890,"s":"1234567890123456789"}')).toEqual({ big: 12345678901234567890n, s: '1234567890123456789' });
    const st = structOf([{ name: 'a', type: arrayOf(T.INT64) }, { name: 'B', type: T.STRING }]);
    const v = convertJsonValue(st, { a: null, b: 'x' });
    expect(v).toEqual([[], 'x']);
    expect(encodeCell(st, v, neutral)).toBe('{"v":{"f":[{"v":[]},{"v":"x"}]}}');
    expect(encodeCell(arrayOf(T.INT64), null, neutral)).toBe('{"v":[]}');
  });
});

describe('row pages', () => {
  it('a page is its rows one by one, joined: large, multi-byte, as text and as bytes', () => {
    const n = 3000;
    const strings = Array.from({ length: n }, (_, i) => (i % 7 === 0 ? null : `ü"\\${'é'.repeat(i % 5)}${i}${i % 11 === 0 ? '\u2028🎉' : ''}`));
    const batches = [0, 1].map((b) => ({
      length: n,
      columns: [vectorFromValues(T.INT64, Array.from({ length: n }, (_, i) => BigInt(b * n + i))), vectorFromValues(T.STRING, strings)],
    }));
    const opts = { timestampFormat: 'RFC3339' as const, stringScalars: true };
    const oneByOne = '[' + Array.from({ length: 2 * n - 10 }, (_, r) => encodeRows(batches, 5 + r, 1, opts).slice(1, -1)).join(',') + ']';
    expect(encodeRows(batches, 5, 2 * n - 10, opts)).toBe(oneByOne);
    const asBytes = encodeRowsPage(batches, 5, 2 * n - 10, { ...opts, rowsAsBytes: true });
    expect(asBytes.rowsUtf8?.toString('utf8')).toBe(oneByOne);
    expect((JSON.parse(oneByOne) as unknown[]).length).toBe(2 * n - 10);
  });
});
