// Overload resolution and coercion rules (src/types/coercion.ts + signature.ts).
import { describe, expect, it } from 'vitest';
import './index.js';
import { commonSupertype, canCoerce } from '../types/coercion.js';
import { T, arrayOf, structOf, typeToSql, type SqlType } from '../types/types.js';
import { lookupFunction, type ArgInfo } from './registry.js';

function resolve(name: string, args: ArgInfo[]): string {
  const def = lookupFunction(name)!;
  if (def.kind !== 'scalar') throw new Error('not scalar');
  const r = def.resolve(args);
  return r.ok ? `${r.resolved.argTypes.map(typeToSql).join(',')} -> ${typeToSql(r.resolved.returnType)}` : r.message;
}
const a = (type: SqlType, extra: Partial<ArgInfo> = {}): ArgInfo => ({ type, ...extra });
const lit = (type: SqlType, value: unknown): ArgInfo => ({ type, isLiteral: true, constant: { value: value as never } });
const NULL: ArgInfo = { type: T.INT64, untypedNull: true, isLiteral: true, constant: { value: null } };

describe('overload choice', () => {
  it('INT64 / INT64 is FLOAT64 division', () => expect(resolve('$divide', [a(T.INT64), a(T.INT64)])).toBe('FLOAT64,FLOAT64 -> FLOAT64'));
  it('ROUND(INT64) is FLOAT64', () => expect(resolve('ROUND', [a(T.INT64)])).toBe('FLOAT64 -> FLOAT64'));
  it('INT64 + NUMERIC is NUMERIC', () => expect(resolve('$add', [a(T.INT64), a(T.NUMERIC)])).toBe('NUMERIC,NUMERIC -> NUMERIC'));
  it('INT64 + BIGNUMERIC is BIGNUMERIC', () => expect(resolve('$add', [a(T.INT64), a(T.BIGNUMERIC)])).toBe('BIGNUMERIC,BIGNUMERIC -> BIGNUMERIC'));
  it('ABS(NULL) picks the first signature', () => expect(resolve('ABS', [NULL])).toBe('INT64 -> INT64'));
  it('DATE literal string', () => expect(resolve('DATE_ADD', [lit(T.STRING, '2020-01-01'), a(T.INTERVAL)])).toBe('DATE,INTERVAL -> DATE'));
  it('a non-date string literal does not become a DATE', () =>
    expect(resolve('$add', [a(T.INT64), lit(T.STRING, 'a')])).toMatch(/^No matching signature for operator \+ for argument types: INT64, STRING\. Supported signatures: INT64 \+ INT64; /));
  it('a function\'s string literal that is no DATE fails its cast', () =>
    expect(resolve('DATE_ADD', [lit(T.STRING, '2020-13-01'), a(T.INTERVAL)])).toBe('Could not cast literal "2020-13-01" to type DATE'));
  it('function mismatch message', () =>
    expect(resolve('ABS', [a(T.STRING)])).toBe('No matching signature for function ABS for argument types: STRING. Supported signatures: ABS(INT64); ABS(FLOAT64); ABS(NUMERIC); ABS(BIGNUMERIC)'));
  it('single signature wording', () => expect(resolve('ARRAY_LENGTH', [a(T.INT64)])).toBe('No matching signature for function ARRAY_LENGTH for argument types: INT64. Supported signature: ARRAY_LENGTH(ARRAY)'));
  it('templated T1 unifies', () => expect(resolve('$in_array', [a(T.INT64), a(arrayOf(T.FLOAT64))])).toBe('FLOAT64,ARRAY<FLOAT64> -> BOOL'));
  it('non-literal arrays keep their element type', () => expect(resolve('$in_array', [a(T.FLOAT64), a(arrayOf(T.INT64))])).toMatch(/No matching signature/));
  it('named arguments bind by name', () => expect(resolve('MAKE_INTERVAL', [a(T.INT64, { name: 'day' })])).toBe('INT64 -> INTERVAL'));
  it('equality on JSON is rejected', () => expect(resolve('$equal', [a(T.JSON), a(T.JSON)])).toMatch(/^Equality is not defined for arguments of type JSON/));
});

describe('supertypes', () => {
  it('numeric chain', () => expect(commonSupertype([a(T.INT64), a(T.NUMERIC)])).toEqual(T.NUMERIC));
  it('float wins', () => expect(commonSupertype([a(T.BIGNUMERIC), a(T.FLOAT64)])).toEqual(T.FLOAT64));
  it('DATE and DATETIME', () => expect(commonSupertype([a(T.DATE), a(T.DATETIME)])).toEqual(T.DATETIME));
  it('string literal adopts the date type', () => expect(commonSupertype([a(T.DATE), { type: T.STRING, isLiteral: true }])).toEqual(T.DATE));
  it('all literals: date literal and string literal', () =>
    expect(commonSupertype([{ type: T.DATETIME, isLiteral: true }, { type: T.STRING, isLiteral: true }])).toEqual(T.DATETIME));
  it('untyped NULL only is INT64', () => expect(commonSupertype([{ type: T.INT64, untypedNull: true }])).toEqual(T.INT64));
  it('arrays need equal element types', () => expect(commonSupertype([a(arrayOf(T.INT64)), a(arrayOf(T.FLOAT64))])).toBeUndefined());
  it('structs field-wise, first names', () =>
    expect(commonSupertype([a(structOf([{ name: 'x', type: T.INT64 }])), a(structOf([{ name: 'y', type: T.FLOAT64 }]))])).toEqual(
      structOf([{ name: 'x', type: T.FLOAT64 }]),
    ));
  it('STRING does not coerce to INT64', () => expect(canCoerce(T.STRING, T.INT64)).toBe(false));
  it('INT64 coerces to FLOAT64', () => expect(canCoerce(T.INT64, T.FLOAT64)).toBe(true));
  it('FLOAT64 does not coerce to INT64', () => expect(canCoerce(T.FLOAT64, T.INT64)).toBe(false));
  it('string parameter coerces to TIMESTAMP', () => expect(canCoerce(T.STRING, T.TIMESTAMP, { isParameter: true })).toBe(true));
});
