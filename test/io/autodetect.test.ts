// Schema autodetect of text values (src/io/schema.ts), shared by CSV and
// newline-delimited JSON loads: the column types the service detects.
import { describe, expect, it } from 'vitest';
import { inferJsonField, inferScalar } from '../../src/io/schema.js';

describe('autodetect of text columns', () => {
  it('a column of mixed timestamp spellings is TIMESTAMP, zone-less values included', () => {
    const mixed = ['2024-01-01T00:00:00Z', '2024-01-02 03:04:05 UTC', '2024-01-03 03:04:05.123+02:00', '2024-01-04T03:04:05', '2024-1-5 6:07:08 -0500', '2024-01-06 03:04:05+02'];
    expect(inferScalar(mixed)).toBe('TIMESTAMP');
    expect(inferJsonField('ts', [...mixed, null])).toEqual({ name: 'ts', type: 'TIMESTAMP', mode: 'NULLABLE' });
  });

  it('keeps DATETIME, DATE, TIME and STRING where every value says so', () => {
    expect(inferScalar(['2024-01-04T03:04:05', '2024-01-04 03:04:05.5'])).toBe('DATETIME');
    expect(inferScalar(['2024-01-04', '2024-02-29'])).toBe('DATE');
    expect(inferScalar(['03:04:05', '23:59:59.999'])).toBe('TIME');
    expect(inferScalar(['2024-01-04T03:04:05Z', '2024-01-04'])).toBe('STRING');
    expect(inferScalar(['2024-01-04T03:04:05Z', 'soon'])).toBe('STRING');
  });
});
