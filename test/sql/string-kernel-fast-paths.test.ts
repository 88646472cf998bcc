// Fast paths of the string kernels of issue 19 (JSON text scanning, CAST of
// STRING to INT64) must give exactly what the general path gives, value by
// value over edge values.
import { describe, expect, it } from 'vitest';
import '../../src/functions/index.js';
import { castValue, decimalInt64s } from '../../src/functions/conversion.js';
import { jsonTextSpan, scalarFromText, scalarTokenEnd } from '../../src/functions/json-core.js';
import type { EvalContext } from '../../src/functions/registry.js';
import { T } from '../../src/types/types.js';
import type { Value } from '../../src/types/values.js';

const ctx = { nowMicros: 0n, timeZone: 'UTC', sessionUser: 'u', random: Math.random } as EvalContext;

/** A deterministic stream of pseudo-random integers. */
function lcg(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2147483648);
}

describe('scalarTokenEnd (number and literal tokens of the JSON text scanner)', () => {
  // What the scanner matched before: this regex over the 400 characters from i.
  const reference = (s: string, i: number): number => {
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(s.slice(i, i + 400));
    return m ? i + m[0].length : -1;
  };
  it('ends where the regex did, for edge tokens and random text', () => {
    const cases = ['0', '-0', '00', '-', '-a', '1', '12', '012', '1.', '1.5', '1.5.5', '.5', '1e', '1e5', '1E+5', '1e-', '1e+x', '1.e5', '-1.25e-10', 'true', 'tru', 'truex', 'false', 'fals', 'null', 'nul', 'NaN', 'Infinity', '-Infinity', '+1', '١', '1٠', ' 1', '"1"', '', 't', '9'.repeat(399), '9'.repeat(400), '9'.repeat(401), '1.' + '5'.repeat(398), '1e' + '5'.repeat(397), '1e' + '5'.repeat(398), 'x'.repeat(397) + 'true', 'x'.repeat(396) + 'false'];
    const bad: string[] = [];
    for (const c of cases)
      for (const suffix of ['', ',', '}', ' ', 'x', '5'])
        for (const i of [0, 1, 397, 398]) {
          const s = c + suffix;
          if (reference(s, i) !== scalarTokenEnd(s, i)) bad.push(`${JSON.stringify(s.slice(0, 20))}@${i}: ${reference(s, i)} vs ${scalarTokenEnd(s, i)}`);
        }
    const next = lcg(7);
    const alphabet = '0123456789-+.eEtrufalsn ,x';
    for (let k = 0; k < 20000; k++) {
      let s = '';
      const len = next() % 12;
      for (let j = 0; j < len; j++) s += alphabet[next() % alphabet.length];
      if (reference(s, 0) !== scalarTokenEnd(s, 0)) bad.push(`${JSON.stringify(s)}: ${reference(s, 0)} vs ${scalarTokenEnd(s, 0)}`);
    }
    expect(bad).toEqual([]);
  });
});

describe('JSON text scanning (JSON_VALUE / JSON_QUERY over STRING)', () => {
  // Keys and string values with escapes, control characters, quotes, non-ASCII and lone surrogates.
  const strings = ['', 'a', 'nest', 'a"b', 'a\\b', 'tab\there', 'nl\n', '\u0001', 'é', '😀', '\ud800', '/', '\\/', 'u\u2028', ' sp ', '{', '[1]'];
  it('finds each key and returns its string value as JSON.parse reads it', () => {
    const bad: string[] = [];
    for (const ws of ['', ' ', '\n\t ']) {
      for (const k of strings) {
        for (const v of strings) {
          // Written as JSON.stringify writes it, and once more with every non-ASCII character \u-escaped.
          for (const esc of [false, true]) {
            const enc = (x: string): string => {
              const j = JSON.stringify(x);
              return esc ? j.replace(/[^\x20-\x7e]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')) : j;
            };
            const doc = `{${ws}${enc(k + 'x')}:0,${enc('x' + k)}:"",${ws}${enc('other')}${ws}:${ws}[1,${ws}{"x":-1.5e3}]${ws},${ws}${enc(k)}${ws}:${ws}${enc(v)}${ws}}`;
            const span = jsonTextSpan(doc, [k]);
            const got = span ? scalarFromText(doc, span) : undefined;
            if (got !== v) bad.push(`${JSON.stringify(doc)}: ${JSON.stringify(got)}`);
          }
        }
      }
    }
    expect(bad).toEqual([]);
  });
  it('returns numbers as written, NULL for containers and null, nothing for a missing key', () => {
    const doc = '{"a": -0.50e+01, "b": [1, 2], "c": {"d": true}, "e": null, "f": 12345678901234567890}';
    const at = (steps: (string | number)[]): string | null | undefined => {
      const span = jsonTextSpan(doc, steps);
      return span ? scalarFromText(doc, span) : undefined;
    };
    expect([at(['a']), at(['b']), at(['b', 1]), at(['c', 'd']), at(['e']), at(['f']), at(['g']), at(['c', 'x'])]).toEqual(['-0.50e+01', null, '2', 'true', null, '12345678901234567890', undefined, undefined]);
  });
  it('treats malformed text as the general scanner did (no match)', () => {
    // A token the grammar does not have, before the key looked for.
    for (const v of ['01', '-', 'tru', '+1', '.5', 'NaN', '"x\u0001"', '"\\q"']) expect(jsonTextSpan(`{"a": ${v}, "b": 2}`, ['b'])).toBeUndefined();
    // A control character inside a key or a string makes the text malformed (JSON.parse refuses it).
    expect(jsonTextSpan('{"a\u0002": 1, "b": 2}', ['b'])).toBeUndefined();
    expect(jsonTextSpan('{"a": "\u0001", "b": 2}', ['b'])).toBeUndefined();
    expect(jsonTextSpan('{"a": "\\q", "b": 2}', ['b'])).toBeUndefined();
  });
});

describe('CAST(STRING AS INT64) fast path (decimalInt64s)', () => {
  it('equals castValue for every edge string, or leaves the batch to it', () => {
    const strs = ['0', '-0', '00', '007', '-007', '1', '-1', '+1', ' 1', '1 ', '0x1F', '-0x1f', '', '-', '1.0', '1e3', 'abc', '١', '٠', '999999999999999', '-999999999999999', '9999999999999999', '9007199254740993', '9223372036854775807', '-9223372036854775808', '9223372036854775808', '0000000000000001', '000000000000001'];
    const next = lcg(11);
    for (let k = 0; k < 2000; k++) {
      const digits = String(next()) + String(next());
      strs.push(digits.slice(0, 1 + (k % 18)), '-' + digits.slice(0, 1 + (k % 17)));
    }
    const bad: string[] = [];
    for (const s of strs) {
      let general: Value | Error;
      try {
        general = castValue(s, T.STRING, T.INT64, { safe: false }, ctx);
      } catch (e) {
        general = e as Error;
      }
      const fast = decimalInt64s([s], null, 1);
      if (fast === null) continue; // the general path takes the batch
      if (general instanceof Error || !Object.is(fast[0], Number(general))) bad.push(`${JSON.stringify(s)}: ${String(general)} vs ${fast[0]}`);
    }
    expect(bad).toEqual([]);
    // Plain decimal of up to 15 digits is always taken.
    expect(decimalInt64s(['-0', '123456789012345', '-5'], null, 3)).toEqual(new Float64Array([0, 123456789012345, -5]));
    expect(Object.is(decimalInt64s(['-0'], null, 1)![0], 0)).toBe(true);
    // NULL rows are skipped; one string it cannot read sends the whole batch to the general path.
    expect(decimalInt64s([null, '5'], new Uint8Array([1, 0]), 2)).toEqual(new Float64Array([0, 5]));
    expect(decimalInt64s(['5', ' 5'], null, 2)).toBeNull();
  });
});
