// REGEXP_* with RE2 semantics through re2js (never JavaScript RegExp).
// BYTES patterns/values are matched as Latin-1 strings (one char per byte).
import { RE2JS } from 're2js';
import { MAX_ROW_BYTES, rowTooLarge } from '../types/errors.js';
import { T, arrayOf } from '../types/types.js';
import type { Value } from '../types/values.js';
import { bytesToLatin1 } from './operators.js';
import { defineScalar, opt, sig } from './signature.js';
import { fail, rowKernel } from './vec.js';
import { codePoints } from './string.js';

const cache = new Map<string, RE2JS>();
let lastPattern: string | null = null;
let lastBytes = false;
let lastRe: RE2JS | null = null;
function compile(pattern: string, bytes: boolean): RE2JS {
  // Patterns repeat row after row: skip the map lookup (and key concatenation) then.
  if (pattern === lastPattern && bytes === lastBytes && lastRe !== null) return lastRe;
  const key = (bytes ? 'b' : 's') + pattern;
  let re = cache.get(key);
  if (re) {
    lastPattern = pattern;
    lastBytes = bytes;
    lastRe = re;
    return re;
  }
  try {
    re = RE2JS.compile(pattern);
  } catch (e) {
    const msg = (e as Error).message ?? String(e);
    fail(`Cannot parse regular expression: ${msg.replace(/^error parsing regexp: /, '')}`);
  }
  if (cache.size > 5000) cache.clear();
  cache.set(key, re);
  lastPattern = pattern;
  lastBytes = bytes;
  lastRe = re;
  return re;
}

const toStr = (v: Value, bytes: boolean): string => (bytes ? bytesToLatin1(v as Uint8Array) : (v as string));
const fromStr = (s: string, bytes: boolean): Value => (bytes ? Uint8Array.from(s, (c) => c.charCodeAt(0)) : s);

function extractGroup(re: RE2JS): number {
  const g = re.groupCount();
  if (g > 1) fail('Regular expressions passed into extraction functions must not have more than 1 capturing group');
  return g;
}

/** UTF-16 index of the (1-based) code point position. */
function cpToIndex(s: string, pos: number): number {
  if (!/[\uD800-\uDFFF]/.test(s)) return pos - 1;
  const cps = codePoints(s);
  return cps.slice(0, pos - 1).join('').length;
}
function indexToCp(s: string, idx: number): number {
  if (!/[\uD800-\uDFFF]/.test(s)) return idx + 1;
  return codePoints(s.slice(0, idx)).length + 1;
}

/**
 * A start position at or past the end of a non-empty input matches nothing, not even an empty
 * pattern (the reference's rule); an empty input is searched from its only position.
 */
function pastEnd(s: string, start: number): boolean {
  return start > s.length || (start === s.length && s.length > 0);
}

function extract(v: Value[], bytes: boolean): Value {
  const s = toStr(v[0]!, bytes);
  const re = compile(toStr(v[1]!, bytes), bytes);
  const g = extractGroup(re);
  const pos = v.length > 2 ? Number(v[2] as bigint) : 1;
  const occ = v.length > 3 ? Number(v[3] as bigint) : 1;
  if (pos <= 0) fail('Position must be positive');
  if (occ <= 0) fail('Occurrence must be positive');
  const start = bytes ? pos - 1 : cpToIndex(s, pos);
  if (pastEnd(s, start)) return null;
  const m = re.matcher(s);
  let found = 0;
  let from = start;
  while (from <= s.length && m.find(from)) {
    found++;
    if (found === occ) {
      const r = m.group(g);
      return r === null ? null : fromStr(r, bytes);
    }
    from = m.end() === m.start() ? m.end() + 1 : m.end();
  }
  return null;
}

function extractAll(v: Value[], bytes: boolean): Value {
  const s = toStr(v[0]!, bytes);
  const re = compile(toStr(v[1]!, bytes), bytes);
  const g = extractGroup(re);
  const m = re.matcher(s);
  const out: Value[] = [];
  let from = 0;
  // Like ZetaSQL, no match is attempted at the very end of a non-empty input.
  while ((from < s.length || (from === 0 && s.length === 0)) && m.find(from)) {
    // A group that took no part in the match is empty here (an array holds no NULL), unlike REGEXP_EXTRACT's NULL.
    out.push(fromStr(m.group(g) ?? '', bytes));
    from = m.end() === m.start() ? m.end() + 1 : m.end();
  }
  return out;
}

function instr(v: Value[], bytes: boolean): Value {
  const s = toStr(v[0]!, bytes);
  const re = compile(toStr(v[1]!, bytes), bytes);
  const g = extractGroup(re);
  const pos = v.length > 2 ? Number(v[2] as bigint) : 1;
  const occ = v.length > 3 ? Number(v[3] as bigint) : 1;
  const occPos = v.length > 4 ? Number(v[4] as bigint) : 0;
  if (pos <= 0) fail('Position must be positive');
  if (occ <= 0) fail('Occurrence must be positive');
  if (occPos !== 0 && occPos !== 1) fail('Invalid return_position_after_match.');
  const start = bytes ? pos - 1 : cpToIndex(s, pos);
  if (pastEnd(s, start) || (v[1] as string | Uint8Array).length === 0) return 0n;
  const m = re.matcher(s);
  let found = 0;
  let from = start;
  while (from <= s.length && m.find(from)) {
    found++;
    if (found === occ) {
      const idx = occPos === 0 ? m.start(g) : m.end(g);
      if (idx < 0) return 0n;
      return BigInt(bytes ? idx + 1 : indexToCp(s, idx));
    }
    from = m.end() === m.start() ? m.end() + 1 : m.end();
  }
  return 0n;
}

/** A REGEXP_REPLACE rewrite string: literal text and capturing-group numbers (\\0..\\9), in order. */
function parseRewrite(rep: string, groups: number): (string | number)[] {
  const parts: (string | number)[] = [];
  let lit = '';
  for (let i = 0; i < rep.length; i++) {
    const c = rep[i]!;
    if (c !== '\\') {
      lit += c;
      continue;
    }
    if (i + 1 >= rep.length) fail("Invalid REGEXP_REPLACE pattern: Rewrite schema error: '\\' not allowed at end.");
    const d = rep[++i]!;
    if (d === '\\') lit += '\\';
    else if (d >= '0' && d <= '9') {
      if (Number(d) > groups) fail(`Invalid REGEXP_REPLACE pattern: Rewrite schema requests ${d} matches, but the regexp only has ${groups} parenthesized subexpressions.`);
      parts.push(lit, Number(d));
      lit = '';
    } else fail("Invalid REGEXP_REPLACE pattern: Rewrite schema error: '\\' must be followed by a digit or '\\'.");
  }
  parts.push(lit);
  return parts;
}

function replace(v: Value[], bytes: boolean): Value {
  const s = toStr(v[0]!, bytes);
  const re = compile(toStr(v[1]!, bytes), bytes);
  const rep = toStr(v[2]!, bytes);
  const m = re.matcher(s);
  // The rewrite is read once (at the first match, so a bad one fails only where it is used).
  let rewrite: (string | number)[] | undefined;
  let out = '';
  let last = 0;
  let from = 0;
  let prevEnd = -1;
  while (from <= s.length && m.find(from)) {
    // As RE2's global replace: no empty match right where the previous match ended ('aaa' ~ a* -> one replacement).
    if (m.start() === m.end() && m.start() === prevEnd) {
      from = m.start() + 1;
      prevEnd = -1;
      continue;
    }
    prevEnd = m.end();
    out += s.slice(last, m.start());
    rewrite ??= parseRewrite(rep, re.groupCount());
    for (const p of rewrite) out += typeof p === 'number' ? (m.group(p) ?? '') : p;
    if (out.length > MAX_ROW_BYTES) throw rowTooLarge();
    last = m.end();
    if (m.end() === m.start()) {
      if (m.end() < s.length) out += s[m.end()];
      last = m.end() + 1;
      from = m.end() + 1;
    } else from = m.end();
  }
  if (last < s.length) out += s.slice(last);
  return fromStr(out, bytes);
}

export function registerRegexp(): void {
  defineScalar('REGEXP_CONTAINS', [
    sig(['STRING', 'STRING'], 'BOOL', rowKernel(T.BOOL, (v) => compile(v[1] as string, false).matcher(v[0] as string).find())),
    sig(['BYTES', 'BYTES'], 'BOOL', rowKernel(T.BOOL, (v) => compile(toStr(v[1]!, true), true).matcher(toStr(v[0]!, true)).find())),
  ], { pure: true });
  defineScalar('REGEXP_MATCH', [
    sig(['STRING', 'STRING'], 'BOOL', rowKernel(T.BOOL, (v) => compile(v[1] as string, false).matcher(v[0] as string).matches())),
    sig(['BYTES', 'BYTES'], 'BOOL', rowKernel(T.BOOL, (v) => compile(toStr(v[1]!, true), true).matcher(toStr(v[0]!, true)).matches())),
  ], { pure: true });
  const ext = [
    sig(['STRING', 'STRING', opt('INT64'), opt('INT64')], 'STRING', rowKernel(T.STRING, (v) => extract(v, false))),
    sig(['BYTES', 'BYTES', opt('INT64'), opt('INT64')], 'BYTES', rowKernel(T.BYTES, (v) => extract(v, true))),
  ];
  defineScalar('REGEXP_EXTRACT', ext, { pure: true });
  defineScalar('REGEXP_SUBSTR', ext, { pure: true });
  defineScalar('REGEXP_EXTRACT_ALL', [
    sig(['STRING', 'STRING'], 'ARRAY<STRING>', rowKernel(arrayOf(T.STRING), (v) => extractAll(v, false))),
    sig(['BYTES', 'BYTES'], 'ARRAY<BYTES>', rowKernel(arrayOf(T.BYTES), (v) => extractAll(v, true))),
  ], { pure: true });
  defineScalar('REGEXP_INSTR', [
    sig(['STRING', 'STRING', opt('INT64'), opt('INT64'), opt('INT64')], 'INT64', rowKernel(T.INT64, (v) => instr(v, false))),
    sig(['BYTES', 'BYTES', opt('INT64'), opt('INT64'), opt('INT64')], 'INT64', rowKernel(T.INT64, (v) => instr(v, true))),
  ], { pure: true });
  defineScalar('REGEXP_REPLACE', [
    sig(['STRING', 'STRING', 'STRING'], 'STRING', rowKernel(T.STRING, (v) => replace(v, false))),
    sig(['BYTES', 'BYTES', 'BYTES'], 'BYTES', rowKernel(T.BYTES, (v) => replace(v, true))),
  ], { pure: true });
}
