// Tests of the comparator and of REST result decoding.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compareRows, compareVal, floatEq } from './lib/compare.js';
import { parseTypedLiteral, type Val } from './lib/value.js';
import { decodeCell, decodeRows, decodeTimestamp, type RestField } from './lib/wire.js';
import { bigQueryAdjustment, compareSchema, deterministicColumns, jsonOfVal, needsUint64 } from './sources/googlesql.js';
import { compareOracle, compareWireRows, hasTopLevelOrderBy } from './sources/yamlcases.js';

const here = path.dirname(fileURLToPath(import.meta.url));

const int = (v: bigint | number): Val => ({ k: 'int', v: BigInt(v) });
const flt = (v: number): Val => ({ k: 'float', v });

describe('compareVal', () => {
  it('compares floats with a relative tolerance and NaN/inf by value', () => {
    expect(floatEq(1, 1 + 1e-12)).toBe(true);
    expect(floatEq(1, 1 + 1e-6)).toBe(false);
    expect(floatEq(NaN, NaN)).toBe(true);
    expect(floatEq(Infinity, Infinity)).toBe(true);
    expect(floatEq(Infinity, -Infinity)).toBe(false);
    expect(floatEq(1e308, 1.0000000000001e308)).toBe(true);
    expect(compareVal(flt(0.1 + 0.2), flt(0.3))).toBeNull();
  });

  it('compares integers and decimals exactly', () => {
    expect(compareVal(int(9007199254740993n), int(9007199254740992n))).toMatch(/value/);
    expect(compareVal({ k: 'decimal', v: '1.5' }, { k: 'decimal', v: '1.5' })).toBeNull();
    expect(compareVal(int(1), flt(1))).toMatch(/kind/);
  });

  it('treats a NULL array like the empty array BigQuery returns', () => {
    expect(compareVal({ k: 'null' }, { k: 'array', elems: [], ordered: true })).toBeNull();
    expect(compareVal({ k: 'null' }, int(0))).toMatch(/expected NULL/);
  });

  it('compares unknown-order arrays as multisets', () => {
    const exp: Val = { k: 'array', ordered: false, elems: [int(1), int(2), int(2)] };
    expect(compareVal(exp, { k: 'array', ordered: true, elems: [int(2), int(1), int(2)] })).toBeNull();
    expect(compareVal(exp, { k: 'array', ordered: true, elems: [int(2), int(1), int(1)] })).toMatch(/not found/);
    const ordered: Val = { k: 'array', ordered: true, elems: [int(1), int(2)] };
    expect(compareVal(ordered, { k: 'array', ordered: true, elems: [int(2), int(1)] })).toMatch(/\[0\]/);
  });
});

describe('compareRows', () => {
  it('checks row counts, order, and multisets', () => {
    const a = [[int(1), flt(0.5)], [int(2), { k: 'null' } as Val]];
    const b = [a[1]!, a[0]!];
    expect(compareRows(a, a, true)).toBeNull();
    expect(compareRows(a, b, true)).toMatch(/row 0/);
    expect(compareRows(a, b, false)).toBeNull();
    expect(compareRows(a, [a[0]!], false)).toMatch(/row count: expected 2, got 1/);
  });
});

describe('REST decoding', () => {
  it('reads TIMESTAMP in every wire form as the same instant', () => {
    expect(decodeTimestamp('1704067200000000')).toBe(1704067200000000n);
    expect(decodeTimestamp('1.7040672E9')).toBe(1704067200000000n);
    expect(decodeTimestamp('1.704067200123456E9')).toBe(1704067200123456n);
    expect(decodeTimestamp('2024-01-01T00:00:00Z')).toBe(1704067200000000n);
    expect(decodeTimestamp('2024-01-01 00:00:00 UTC')).toBe(1704067200000000n);
    expect(decodeTimestamp('-1.5E0')).toBe(-1500000n);
  });

  it('decodes scalars, REPEATED, RECORD and RANGE cells', () => {
    const fields: RestField[] = [
      { name: 'i', type: 'INTEGER' },
      { name: 'f', type: 'FLOAT' },
      { name: 'b', type: 'BOOLEAN' },
      { name: 'arr', type: 'INT64', mode: 'REPEATED' },
      { name: 's', type: 'RECORD', fields: [{ name: 'x', type: 'STRING' }, { name: 'y', type: 'BYTES' }] },
      { name: 'r', type: 'RANGE', rangeElementType: { type: 'DATE' } },
      { name: 'iv', type: 'INTERVAL' },
      { name: 'j', type: 'JSON' },
    ];
    const rows = decodeRows(fields, [{
      f: [{ v: '7' }, { v: 'NaN' }, { v: 'true' }, { v: [{ v: '1' }, { v: '2' }] }, { v: { f: [{ v: 'a' }, { v: 'AAE=' }] } },
        { v: '[2020-01-01, UNBOUNDED)' }, { v: '1-2 3 4:5:6.789' }, { v: '{"b":1,"a":[true]}' }],
    }]);
    const exp = parseTypedLiteral('ARRAY<STRUCT<INT64, DOUBLE, BOOL, ARRAY<INT64>, STRUCT<x STRING, y BYTES>, RANGE<DATE>, INTERVAL, JSON>>[{7, nan, true, ARRAY<INT64>[1, 2], {"a", b"\\x00\\x01"}, [2020-01-01, NULL), 1-2 3 4:5:6.789, {"a":[true],"b":1}}]');
    const er = exp.value.k === 'array' && exp.value.elems[0]!.k === 'struct' ? exp.value.elems[0]!.fields : [];
    expect(compareRows([er], rows, true)).toBeNull();
    // REST-JSON booleans and numbers are accepted too
    expect(decodeCell({ name: 'b', type: 'BOOL' }, true)).toEqual({ k: 'bool', v: true });
    expect(decodeCell({ name: 'f', type: 'FLOAT64' }, 'Infinity')).toEqual({ k: 'float', v: Infinity });
    expect(decodeCell({ name: 'a', type: 'STRING', mode: 'REPEATED' }, null)).toEqual({ k: 'array', elems: [], ordered: true });
    expect(decodeCell({ name: 'iv', type: 'INTERVAL' }, 'P1Y2M3DT4H5M6.789S')).toEqual(decodeCell({ name: 'iv', type: 'INTERVAL' }, '1-2 3 4:5:6.789'));
  });
});

describe('shape-only results', () => {
  const fields: RestField[] = [{ name: 'id', type: 'INT64' }, { name: 'r', type: 'FLOAT64' }, { name: 's', type: 'STRING' }];
  const row = (id: string, r: string, s: string) => ({ f: [{ v: id }, { v: r }, { v: s }] });
  const str = (v: string): Val => ({ k: 'string', v });

  it('still compares the columns that do not vary, alone and together', () => {
    const exp = [[int(1), flt(0.25), str('a')], [int(2), flt(0.5), str('b')]];
    // r varies (RAND); id and s agree row by row in another order.
    expect(deterministicColumns(exp, fields, [row('2', '0.9', 'b'), row('1', '0.1', 'a')])).toEqual({ same: [0, 2], differing: ['r'] });
  });

  it('keeps out a column that matches alone but breaks the rows kept whole', () => {
    const exp = [[int(1), flt(0.25), str('a')], [int(2), flt(0.5), str('b')]];
    // s holds the same multiset but paired with the other ids.
    expect(deterministicColumns(exp, fields, [row('1', '0.9', 'b'), row('2', '0.1', 'a')])).toEqual({ same: [0], differing: ['r', 's'] });
  });
});

describe('schema and BigQuery adjustments', () => {
  it('maps GoogleSQL types to REST schema types', () => {
    const t = parseTypedLiteral('ARRAY<STRUCT<a INT32, b DOUBLE, c BOOL, d STRUCT<x INT64>, e ARRAY<STRING>>>[]');
    const cols = t.type.kind === 'array' && t.type.element?.kind === 'struct' ? t.type.element.fields : [];
    const ok: RestField[] = [
      { name: 'a', type: 'INTEGER' }, { name: 'b', type: 'FLOAT' }, { name: 'c', type: 'BOOLEAN' },
      { name: 'd', type: 'RECORD', fields: [{ name: 'x', type: 'INT64' }] }, { name: 'e', type: 'STRING', mode: 'REPEATED' },
    ];
    expect(compareSchema(cols, ok)).toBeNull();
    expect(compareSchema(cols, ok.slice(0, 4))).toMatch(/column count/);
    expect(compareSchema(cols, [...ok.slice(0, 4), { name: 'e', type: 'STRING' }])).toMatch(/REPEATED/);
    expect(compareSchema(cols, [{ name: 'a', type: 'FLOAT' }, ...ok.slice(1)])).toMatch(/expected INTEGER, got FLOAT/);
  });

  it('expects repeated result names renamed as BigQuery renames them (a, a_1, A_2; a_1 taken: a_2)', () => {
    const cols = (lit: string) => { const t = parseTypedLiteral(lit).type; return t.kind === 'array' && t.element?.kind === 'struct' ? t.element.fields : []; };
    const ints = (...names: string[]): RestField[] => names.map((name) => ({ name, type: 'INTEGER' }));
    expect(compareSchema(cols('ARRAY<STRUCT<a INT64, a INT64, A INT64>>[]'), ints('a', 'a_1', 'A_2'))).toBeNull();
    expect(compareSchema(cols('ARRAY<STRUCT<a INT64, a INT64, a_1 INT64>>[]'), ints('a', 'a_2', 'a_1'))).toBeNull();
    expect(compareSchema(cols('ARRAY<STRUCT<a INT64, a INT64>>[]'), ints('a', 'a'))).toMatch(/expected a_1, got a/);
  });

  it('turns results BigQuery cannot return into error expectations', () => {
    expect(bigQueryAdjustment(parseTypedLiteral('ARRAY<STRUCT<ARRAY<>>>[{ARRAY<INT64>[1, NULL]}]'))).toMatch(/NULL element/);
    expect(bigQueryAdjustment(parseTypedLiteral('ARRAY<STRUCT<a INT64, a INT64>>[{1, 2}]'))).toBeNull();
    expect(bigQueryAdjustment(parseTypedLiteral('ARRAY<STRUCT<ARRAY<>>>[{ARRAY<ARRAY<INT64>>[]}]'))).toMatch(/ARRAY of ARRAY/);
    expect(bigQueryAdjustment(parseTypedLiteral('ARRAY<STRUCT<a ARRAY<>>>[{ARRAY<INT64>(NULL)}]'))).toBeNull();
    expect(needsUint64(parseTypedLiteral('ARRAY<STRUCT<UINT64>>[{18446744073709551615}]').value)).toBe(true);
  });

  it('writes insertAll JSON for the REST fallback of prepared tables', () => {
    const t = parseTypedLiteral('ARRAY<STRUCT<s STRUCT<a INT64, b TIMESTAMP>, r RANGE<DATE>, f DOUBLE>>[{{1, 1970-01-01 00:00:01+00}, [2020-01-01, NULL), -inf}]');
    const row = t.value.k === 'array' ? t.value.elems[0]! : t.value;
    const cols = t.type.kind === 'array' && t.type.element?.kind === 'struct' ? t.type.element.fields : [];
    const fields = row.k === 'struct' ? row.fields : [];
    expect(jsonOfVal(fields[0]!, cols[0]!.type)).toEqual({ a: '1', b: '1970-01-01 00:00:01+00:00' });
    expect(jsonOfVal(fields[1]!, cols[1]!.type)).toBe('[2020-01-01, UNBOUNDED)');
    expect(jsonOfVal(fields[2]!, cols[2]!.type)).toBe('-Infinity');
  });
});

describe('YAML expectations', () => {
  it('compares wire-form expected rows by column name', () => {
    const fields: RestField[] = [{ name: 'id', type: 'INTEGER' }, { name: 'tags', type: 'STRING', mode: 'REPEATED' }];
    const rows = [{ f: [{ v: '2' }, { v: [] }] }, { f: [{ v: '1' }, { v: [{ v: 'a' }] }] }];
    expect(compareWireRows([{ id: 1, tags: ['a'] }, { id: '2', tags: [] }], fields, rows, false).status).toBe('pass');
    expect(compareWireRows([{ id: 1, tags: ['a'] }, { id: '2', tags: [] }], fields, rows, true).status).toBe('fail');
    expect(compareWireRows([{ id: 1 }], fields, rows.slice(1), true).cause).toBe('column set mismatch');
  });

  it('compares with a recorded oracle answer (float-seconds TIMESTAMP vs int64 micros)', () => {
    const exp = { fields: [{ name: 't', type: 'TIMESTAMP', mode: 'NULLABLE' }], rows: [{ f: [{ v: '1.7040672E9' }] }], ordered: true };
    const res = { fields: [{ name: 't', type: 'TIMESTAMP', mode: 'NULLABLE' }], rows: [{ f: [{ v: '1704067200000000' }] }], totalRows: '1', numDmlAffectedRows: undefined, jobId: 'j' };
    expect(compareOracle(exp, res).status).toBe('pass');
    expect(compareOracle(exp, { ...res, fields: [{ name: 't', type: 'DATETIME', mode: 'NULLABLE' }] }).cause).toMatch(/schema mismatch/);
  });

  it('finds top-level ORDER BY only', () => {
    expect(hasTopLevelOrderBy('SELECT a FROM t ORDER BY a')).toBe(true);
    expect(hasTopLevelOrderBy('SELECT ROW_NUMBER() OVER (ORDER BY a) FROM t')).toBe(false);
    expect(hasTopLevelOrderBy("SELECT 'ORDER BY' AS s")).toBe(false);
  });

  it('project cases carry recorded answers that the comparator accepts against themselves', () => {
    const raw = readFileSync(path.join(here, 'cases', 'scalar_types.yaml'), 'utf8');
    expect(raw).toMatch(/ts: "1577836801500000"/);
  });
});
