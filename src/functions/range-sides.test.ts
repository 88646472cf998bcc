// RANGE_CONTAINS / RANGE_OVERLAPS / RANGE_INTERSECT on a stored column's
// sides (interval-range-kernels.ts) against the definitions over values:
// TIMESTAMP sides on both sides of 2^53 microseconds (each side vector its
// own layout: doubles, or BigInts when one of its rows passes 2^53), DATE
// sides, unbounded sides, NULL ranges, equal bounds, nothing boxed.
import { describe, expect, it } from 'vitest';
import { rangeOf, T, type SqlType } from '../types/types.js';
import { RangeValue, type Value } from '../types/values.js';
import { getValue, layoutBoxing, rangeVector, vectorFromValues, type Vector } from '../types/vector.js';
import { rangeIntersect, rangeRelation } from './interval-range-kernels.js';

let seed = 41;
const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const TWO53 = 2n ** 53n;

/** Points near a few pivots (so bounds meet and cross), past 2^53 or not. */
function point(big: boolean, date: boolean): Value {
  if (date) return Math.floor(rand() * 40) - 20 + [0, 10000, -5000][Math.floor(rand() * 3)]!;
  const pivot = big ? [TWO53, TWO53 * 20n, -TWO53 - 5n, TWO53 * 3n + 2147483648n][Math.floor(rand() * 4)]! : [0n, 2147483648n, TWO53 - 100n][Math.floor(rand() * 3)]!;
  return pivot + BigInt(Math.floor(rand() * 200) - 100);
}

const lt = (x: Value, y: Value): boolean => (x as number | bigint) < (y as number | bigint);

function randomRange(big: boolean, date: boolean): RangeValue | null {
  if (rand() < 0.05) return null;
  let s = rand() < 0.15 ? null : point(big, date);
  let e = rand() < 0.15 ? null : point(big, date);
  if (s !== null && e !== null) {
    if (lt(e, s)) [s, e] = [e, s];
    if (s === e) e = null;
  }
  return new RangeValue(s, e);
}

/** A range vector given by its sides, as a stored column's (each side its own layout). */
function stored(type: SqlType, element: SqlType, values: (RangeValue | null)[]): Vector {
  const side = (pick: (r: RangeValue) => Value) => vectorFromValues(element, values.map((r) => (r === null ? null : pick(r))));
  const nulls = values.some((r) => r === null) ? Uint8Array.from(values, (r) => (r === null ? 1 : 0)) : null;
  return rangeVector(type, values.length, nulls, { start: side((r) => r.start), end: side((r) => r.end) });
}

const le = (x: Value, y: Value): boolean => !lt(y, x);
function contains(a: RangeValue, b: RangeValue): boolean {
  return (a.start === null || (b.start !== null && le(a.start, b.start))) && (a.end === null || (b.end !== null && le(b.end, a.end)));
}
function overlaps(a: RangeValue, b: RangeValue): boolean {
  return !((a.end !== null && b.start !== null && le(a.end, b.start)) || (b.end !== null && a.start !== null && le(b.end, a.start)));
}
function intersect(a: RangeValue, b: RangeValue): RangeValue | 'error' {
  const start = a.start === null ? b.start : b.start === null ? a.start : lt(a.start, b.start) ? b.start : a.start;
  const end = a.end === null ? b.end : b.end === null ? a.end : lt(b.end, a.end) ? b.end : a.end;
  return start !== null && end !== null && le(end, start) ? 'error' : new RangeValue(start, end);
}

describe('range relations and RANGE_INTERSECT on the sides', () => {
  const n = 3000;
  for (const [name, element, bigShare] of [
    ['TIMESTAMP past 2^53', T.TIMESTAMP, 0.5],
    ['TIMESTAMP below 2^53', T.TIMESTAMP, 0],
    ['DATETIME past 2^53', T.DATETIME, 0.2],
    ['DATE', T.DATE, 0],
  ] as const) {
    it(`${name}: the definitions' answers for ${n} random pairs, nothing boxed`, () => {
      const date = element.kind === 'DATE';
      const type = rangeOf(element);
      const as = Array.from({ length: n }, () => randomRange(rand() < bigShare, date));
      const bs = Array.from({ length: n }, () => randomRange(rand() < bigShare, date));
      const ps = Array.from({ length: n }, () => (rand() < 0.05 ? null : point(rand() < bigShare, date)));
      const a = stored(type, element, as);
      const b = stored(type, element, bs);
      const bValues = vectorFromValues(type, bs);
      const p = vectorFromValues(element, ps);
      const before = layoutBoxing.range;
      const got = {
        containsPoint: rangeRelation('contains', [a, p], n)!,
        containsRange: rangeRelation('contains', [a, b], n)!,
        containsValues: rangeRelation('contains', [a, bValues], n)!,
        overlaps: rangeRelation('overlaps', [a, b], n)!,
      };
      for (const v of Object.values(got)) expect(v).not.toBeNull();
      expect(layoutBoxing.range).toBe(before);
      for (let i = 0; i < n; i++) {
        const x = as[i]!;
        const y = bs[i]!;
        const q = ps[i]!;
        const pointIn = x === null || q === null ? null : (x.start === null || le(x.start, q)) && (x.end === null || lt(q, x.end));
        expect(getValue(got.containsPoint, i), `point row ${i}`).toBe(pointIn);
        const both = x === null || y === null;
        expect(getValue(got.containsRange, i), `contains row ${i}`).toBe(both ? null : contains(x, y));
        expect(getValue(got.containsValues, i), `contains values row ${i}`).toBe(both ? null : contains(x, y));
        expect(getValue(got.overlaps, i), `overlaps row ${i}`).toBe(both ? null : overlaps(x, y));
      }
      // RANGE_INTERSECT: the batch of the overlapping pairs; a batch with one that does not is left to the row kernel.
      const keep = as.flatMap((x, i) => (x === null || bs[i] === null || intersect(x, bs[i]!) !== 'error' ? [i] : []));
      const disjoint = as.findIndex((x, i) => x !== null && bs[i] !== null && intersect(x, bs[i]!) === 'error');
      expect(keep.length).toBeGreaterThan(n / 3);
      expect(disjoint).toBeGreaterThanOrEqual(0);
      const ka = stored(type, element, keep.map((i) => as[i]!));
      const kb = stored(type, element, keep.map((i) => bs[i]!));
      for (const [left, right] of [
        [ka, kb],
        [ka, vectorFromValues(type, keep.map((i) => bs[i]!))],
        [vectorFromValues(type, keep.map((i) => as[i]!)), kb],
      ] as const) {
        const b0 = layoutBoxing.range;
        const r = rangeIntersect([left, right], keep.length)!;
        expect(r?.range).toBeDefined();
        expect(layoutBoxing.range).toBe(b0);
        for (let k = 0; k < keep.length; k++) {
          const x = as[keep[k]!]!;
          const y = bs[keep[k]!]!;
          const want = x === null || y === null ? null : (intersect(x, y) as RangeValue);
          const g = getValue(r, k) as RangeValue | null;
          expect(g === null ? null : [g.start, g.end], `intersect row ${keep[k]}`).toEqual(want === null ? null : [want.start, want.end]);
        }
      }
      expect(rangeIntersect([stored(type, element, [as[disjoint]!, as[0]!]), stored(type, element, [bs[disjoint]!, as[0]!])], 2)).toBeNull();
    });
  }
});
