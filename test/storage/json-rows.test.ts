// The insert path's cell fast paths (json-rows.ts setCell) must store exactly
// what the general converter (convertJsonValue) stores, and fail with its
// messages, for every input form, not just the canonical ones they target.
import { describe, expect, it } from 'vitest';
import { ColumnBuilder, DeferredBatch, setCell } from '../../src/storage/json-rows.js';
import { convertJsonValue } from '../../src/types/json-values.js';
import type { SqlType } from '../../src/types/types.js';
import { getValue } from '../../src/types/vector.js';

function viaFastPath(type: SqlType, v: unknown): unknown {
  const b = new ColumnBuilder(type, 1);
  try {
    setCell(b, 0, type, v);
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
  return getValue(b.finish(1), 0);
}

function viaGeneral(type: SqlType, v: unknown): unknown {
  const b = new ColumnBuilder(type, 1);
  try {
    b.set(0, convertJsonValue(type, v));
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
  return getValue(b.finish(1), 0);
}

const show = (x: unknown): string => (typeof x === 'bigint' ? `${x}n` : x !== null && typeof x === 'object' ? `${x.constructor.name}(${String(x)})` : JSON.stringify(x));

const CASES: [SqlType['kind'], unknown[]][] = [
  ['INT64', ['0', '-0', '7', '007', '-12', '123456789012345', '1234567890123456', '9223372036854775807', '9223372036854775808', '+5', ' 5', '5 ', '1.0', '1.5', '', '-', 'x', '12a', 3, -0, 2 ** 53, 1.5, true, null]],
  ['TIMESTAMP', [
    '2024-01-01T00:16:40.000Z', '2024-01-01 00:16:40', '2024-01-01t00:16:40z', '2024-02-29T23:59:59.999999Z', '2023-02-29T00:00:00Z', '2024-13-01T00:00:00Z',
    '2024-01-01T24:00:00Z', '2024-01-01T00:60:00Z', '2024-01-01T00:00:60Z', '2024-01-01T00:00:00.Z', '2024-01-01T00:00:00.1234567Z', '2024-01-01T00:00:00.1',
    '1700-01-01T00:00:00Z', '1699-12-31T23:59:59Z', '2200-12-31T23:59:59Z', '2201-01-01T00:00:00Z', '9999-12-31T23:59:59.999999Z', '0001-01-01T00:00:00Z',
    '2024-01-01T00:00:00+01:00', '2024-01-01T00:00:00 UTC', '2024/01/01 00:00:00', '2024-1-1 0:0:0', ' 2024-01-01T00:00:00Z', '1700000000', '1700000000.5', 1700000000, 'garbage', '',
  ]],
  ['DATE', ['2024-01-01', '2024-02-29', '2023-02-29', '2024-04-31', '2024-00-10', '2024-1-1', '0999-01-01', '1000-01-01', '9999-12-31', ' 2024-01-01', '2024-01-01 ', '2024/01/01', '20240101', 20240101, '']],
  ['NUMERIC', ['12.50', '0', '-0', '0.000', '-0.00', '12345678901234567890123456789', '123456789012345678901234567890', '1.123456789', '1.1234567895', '-7.5', '+7.5', '.5', '5.', '1e3', ' 1', 'abc', '', 12.5, 0]],
  ['STRING', ['x', '', 5, true, null]],
  ['FLOAT64', [1.5, 0, -0, 1e308, '1.5', 'NaN', 'inf', 'x', true]],
  ['BOOL', [true, false, 'true', 'FALSE', '1', 0, 'x']],
];

describe('insert cell fast paths', () => {
  for (const [kind, inputs] of CASES) {
    it(`${kind}: same value or error as the general converter`, () => {
      const type = { kind } as SqlType;
      for (const v of inputs) {
        const fast = viaFastPath(type, v);
        const general = viaGeneral(type, v);
        expect(`${JSON.stringify(v)} -> ${show(fast)}`).toBe(`${JSON.stringify(v)} -> ${show(general)}`);
        if (typeof fast === 'number') expect(Object.is(fast, general)).toBe(true);
      }
    });
  }
});

describe('DeferredBatch', () => {
  it('makes its columns once, on first read, and checks their row count', () => {
    let made = 0;
    const type: SqlType = { kind: 'INT64' } as SqlType;
    const make = (n: number) => () => {
      made++;
      const b = new ColumnBuilder(type, 2);
      b.setNumber(0, 5);
      b.setNumber(1, 6);
      return { length: n, columns: [b.finish(n)] };
    };
    const d = new DeferredBatch(2, make(2));
    expect(made).toBe(0);
    expect(d.length).toBe(2);
    const cols = d.columns;
    expect(getValue(cols[0]!, 1)).toBe(6n);
    expect(d.columns).toBe(cols);
    expect(made).toBe(1);
    expect(() => new DeferredBatch(3, make(2)).columns).toThrow(/2 rows made, 3 expected/);
  });
});
