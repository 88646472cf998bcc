// The path functions over a JSON text read lazily (JsonText: the target's
// text found by scanning, functions/json-core.ts jsonQueryOf and friends)
// against the same functions over the parsed value walked (jsonAtPath), on
// random documents and paths: duplicate keys, escapes in keys and strings,
// numbers beyond a double's precision, whitespace, keys Object.prototype has,
// digit-string keys on arrays. Both the PARSE_JSON modes and the storage form.
import { describe, expect, it } from 'vitest';
import {
  JsonText,
  checkJsonText,
  jsonQueryArrayOf,
  jsonQueryOf,
  jsonValueArrayOf,
  jsonValueOf,
  parseJsonText,
  type JsonTextMode,
  type PathStep,
} from '../../src/functions/json-core.js';
import { jsonNodeToText, parseJsonText as parseStoredJson } from '../../src/types/json-values.js';
import { JsonValue, type JsonNode } from '../../src/types/values.js';
import { rng } from '../helpers/random-values.js';

const KEYS = ['a', 'b', 'c', 'é', 'a b', '0', '1', 'constructor', '__proto__', 'toString', 'q"'];
// How each key may be written in a document: plain, or with an escape that names the same key.
const keyText = (r: () => number, k: string): string => {
  if (k === 'a' && r() < 0.3) return '"\\u0061"';
  if (k === 'é' && r() < 0.3) return '"\\u00e9"';
  return JSON.stringify(k);
};
const NUMBERS = ['0', '-0', '1', '-17', '0.1', '1.5', '1e5', '1.5E+3', '-2.5e-3', '12345678901234567890', '123456789012345678', '9007199254740993',
  '100000000000000000000', '0.30000000000000004', '1.0', '123456789012345', '-123456789012345', '18446744073709551615', '-9223372036854775808',
  '3.141592653589793238', '1e300', '12345678901234567890123'];
const STRINGS = ['""', '"x"', '"a\\"b"', '"\\n\\t"', '"\\u00e9\\/"', '"é"', '"\\ud83d\\ude00"', '"1"', '"true"', '"null"'];

function ws(r: () => number): string {
  const p = r();
  return p < 0.7 ? '' : p < 0.85 ? ' ' : p < 0.95 ? '\n  ' : '\t\r ';
}

function doc(r: () => number, depth: number): string {
  const p = r();
  if (depth < 4 && p < 0.35) {
    const n = Math.floor(r() * 5);
    const members: string[] = [];
    for (let i = 0; i < n; i++) members.push(ws(r) + keyText(r, KEYS[Math.floor(r() * KEYS.length)]!) + ws(r) + ':' + doc(r, depth + 1));
    return ws(r) + '{' + members.join(',') + ws(r) + '}' + ws(r);
  }
  if (depth < 4 && p < 0.55) {
    const n = Math.floor(r() * 5);
    const els: string[] = [];
    for (let i = 0; i < n; i++) els.push(doc(r, depth + 1));
    return ws(r) + '[' + els.join(',') + ws(r) + ']' + ws(r);
  }
  let t: string;
  if (p < 0.75) t = NUMBERS[Math.floor(r() * NUMBERS.length)]!;
  else if (p < 0.9) t = STRINGS[Math.floor(r() * STRINGS.length)]!;
  else t = ['true', 'false', 'null'][Math.floor(r() * 3)]!;
  return ws(r) + t + ws(r);
}

function path(r: () => number): PathStep[] {
  const n = Math.floor(r() * 4);
  const out: PathStep[] = [];
  for (let i = 0; i < n; i++) out.push(r() < 0.3 ? Math.floor(r() * 4) : KEYS[Math.floor(r() * KEYS.length)]!);
  return out;
}

/** A form toEqual compares exactly: bigint and number apart, key order kept, -0 apart from 0. */
const exact = (n: JsonNode): unknown => {
  if (n === null || typeof n === 'boolean' || typeof n === 'string') return n;
  if (typeof n === 'bigint') return `bigint:${n}`;
  if (typeof n === 'number') return Object.is(n, -0) ? 'number:-0' : `number:${n}`;
  if (Array.isArray(n)) return n.map(exact);
  return Object.entries(n).map(([k, v]) => [k, exact(v)]);
};
const nodeOf = (v: JsonValue | null): unknown => (v === null ? 'SQL NULL' : exact(v.node));

/** Every path function's answer, through `make`'s value. */
function answers(v: JsonValue, steps: PathStep[]): unknown {
  const out: unknown[] = [];
  const call = (f: () => unknown): void => {
    try {
      out.push(f());
    } catch (e) {
      out.push(`error: ${(e as Error).message}`);
    }
  };
  call(() => nodeOf(jsonQueryOf(v, steps)));
  call(() => jsonValueOf(v, steps));
  call(() => jsonQueryArrayOf(v, steps)?.map(nodeOf) ?? 'SQL NULL');
  call(() => jsonValueArrayOf(v, steps));
  // A value found, then read again by path (a JsonText made by a scan is scanned in turn).
  call(() => {
    const first = jsonQueryOf(v, steps.slice(0, 1));
    return first === null ? 'SQL NULL' : nodeOf(jsonQueryOf(first, steps.slice(1)));
  });
  return out;
}

describe('JSON path functions over a scanned text', () => {
  it('answer as over the parsed value, for random documents and paths', () => {
    const r = rng(19);
    const modes: JsonTextMode[] = ['round', 'exact', 'stored'];
    const compared = { round: 0, exact: 0, stored: 0, lazyRead: 0 };
    for (let d = 0; d < 2000; d++) {
      const text = doc(r, 0);
      for (const mode of modes) {
        let lazyText: string;
        let parsed: JsonNode;
        if (mode === 'stored') {
          // The storage form of the value PARSE_JSON (round) makes, read back as storage reads it.
          lazyText = jsonNodeToText(parseJsonText(text, 'round'));
          parsed = parseStoredJson(lazyText);
        } else {
          // Exact mode refuses some numbers: PARSE_JSON fails, no value of either kind is made.
          try {
            checkJsonText(text, mode);
          } catch {
            expect(() => parseJsonText(text, mode)).toThrow();
            continue;
          }
          lazyText = text;
          parsed = parseJsonText(text, mode);
        }
        for (let k = 0; k < 6; k++) {
          const steps = path(r);
          const lazy = new JsonText(lazyText, 0, lazyText.length, mode);
          expect(answers(lazy, steps), `${mode} ${JSON.stringify(lazyText)} ${JSON.stringify(steps)}`).toEqual(answers(new JsonValue(parsed), steps));
          compared[mode]++;
        }
        // The whole value, read lazily, is the parsed one.
        expect(exact(new JsonText(lazyText, 0, lazyText.length, mode).node)).toEqual(exact(parsed));
        compared.lazyRead++;
      }
    }
    // Most documents are compared in every mode (exact mode refuses those with numbers it cannot keep).
    expect(compared.round).toBe(12000);
    expect(compared.stored).toBe(12000);
    expect(compared.exact).toBeGreaterThan(6000);
  });

  it('member and element answer as the subscripts over the parsed value', () => {
    const r = rng(7);
    for (let d = 0; d < 2000; d++) {
      const text = doc(r, 0);
      const parsed = parseJsonText(text, 'round');
      const lazy = new JsonText(text, 0, text.length, 'round');
      for (const k of KEYS) {
        if (k in Object.prototype) continue; // $subscript takes the parsed path for these
        const want = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && Object.prototype.hasOwnProperty.call(parsed, k) ? exact(parsed[k]!) : 'SQL NULL';
        expect(nodeOf(lazy.member(k)), `${text} .${k}`).toEqual(want);
      }
      for (const i of [-1, 0, 1, 2, 5]) {
        const want = Array.isArray(parsed) && i >= 0 && i < parsed.length ? exact(parsed[i]!) : 'SQL NULL';
        expect(nodeOf(lazy.element(i)), `${text} [${i}]`).toEqual(want);
      }
    }
  });
});
