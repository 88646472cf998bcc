// Nested-data paths of the executor (issue 19) must give exactly what the
// general code they skip gives, value by value: STRUCT field access and
// UNNEST's element column of types held as values.
import { describe, expect, it } from 'vitest';
import '../../src/functions/index.js';
import { fieldOf } from '../../src/executor/expr.js';
import { valuesElementColumn } from '../../src/executor/operators/join-lateral.js';
import { ColumnBuffer } from '../../src/executor/vectors.js';
import { arrayOf, structOf, T, type SqlType } from '../../src/types/types.js';
import type { Value } from '../../src/types/values.js';
import { getValue, vectorFromValues, type Vector } from '../../src/types/vector.js';

function sameVector(a: Vector, b: Vector): string | null {
  if (a.type !== b.type || a.length !== b.length) return 'type/length';
  if (a.data.constructor !== b.data.constructor) return `layout ${a.data.constructor.name} vs ${b.data.constructor.name}`;
  if ((a.nulls === null) !== (b.nulls === null)) return 'nulls presence';
  for (let i = 0; i < a.length; i++) {
    if ((a.nulls?.[i] ?? 0) !== (b.nulls?.[i] ?? 0)) return `null flag ${i}`;
    if (!Object.is((a.data as ArrayLike<unknown>)[i], (b.data as ArrayLike<unknown>)[i])) return `value ${i}`;
  }
  return null;
}

const leaves: [SqlType, Value[]][] = [
  [T.FLOAT64, [0, -0, NaN, Infinity, -1.5, null, 1e300]],
  [T.TIME, [0, 86399999999, null, 12345]],
  [T.INT64, [0n, -1n, 9007199254740993n, null, 5n]],
  [T.STRING, ['', 'a', null, 'é']],
  [T.BOOL, [true, false, null]],
  [T.DATE, [0, -1, null, 20000]],
];

describe('STRUCT field access (fieldOf)', () => {
  it('equals getValue + vectorFromValues for every field type, NULL structs and NULL fields', () => {
    const bad: string[] = [];
    for (const [ta, as] of leaves)
      for (const [tb, bs] of leaves) {
        const st = structOf([
          { name: 'a', type: ta },
          { name: 'b', type: tb },
        ]);
        const rows: Value[] = [];
        for (let i = 0; i < 40; i++) rows.push(i % 9 === 4 ? null : [as[i % as.length]!, bs[(i * 3) % bs.length]!]);
        const s = vectorFromValues(st, rows);
        for (const [f, t] of [[0, ta], [1, tb]] as const) {
          const want = vectorFromValues(t, rows.map((_, i) => ((getValue(s, i) as Value[] | null)?.[f] ?? null)));
          const why = sameVector(fieldOf(t, s, f, rows.length), want);
          if (why) bad.push(`${ta.kind},${tb.kind} field ${f}: ${why}`);
        }
      }
    expect(bad).toEqual([]);
  });
});

describe("UNNEST's element column of value-held types (valuesElementColumn)", () => {
  it('equals the ColumnBuffer path: NULL and empty arrays, NULL elements, zipped lengths past an array end', () => {
    const st = structOf([
      { name: 'id', type: T.INT64 },
      { name: 's', type: T.STRING },
    ]);
    const cases: [SqlType, (Value[] | null)[]][] = [
      [T.STRING, [['a', null, 'b'], null, [], ['c']]],
      [st, [[[1n, 'x'], null, [2n, null]], [], null, [[3n, 'y']]]],
      [arrayOf(T.STRING), [[['a'], []], null]],
      [T.NUMERIC, [[null], null]],
    ];
    for (const [t, arrs] of cases) {
      // Zip lengths: each array's own length, and one longer (NULL past the end, as a multi-array UNNEST pads).
      for (const extra of [0, 2]) {
        const lens = Int32Array.from(arrs, (a) => (a?.length ?? 0) + extra);
        const m = lens.reduce((x, y) => x + y, 0);
        const buf = new ColumnBuffer(t, m);
        for (let i = 0; i < arrs.length; i++) for (let e = 0; e < lens[i]!; e++) buf.appendValue(arrs[i] && e < arrs[i]!.length ? arrs[i]![e]! : null);
        expect(sameVector(valuesElementColumn(t, arrs, lens, m), buf.toVector()), `${t.kind} +${extra}`).toBeNull();
      }
    }
  });
});
