// INTERVAL and RANGE columns decoded from their stored text (the JSON of
// codec.ts's storage form: an interval `[months,days,"micros"]`, a range
// `[start,end]` with `null` for an unbounded side, a DATETIME / TIMESTAMP
// side a number while exact, else its digits in quotes) straight into the
// Arrow layout: month-day-nano parts (microseconds) and a struct of two
// fixed-width sides. One pass over the bytes, no JSON.parse and no value
// objects; a text of another shape (never written, but a file is input)
// makes the caller keep values as before (null).
import type { SqlType } from '../types/types.js';
import type { ColumnChunk, Validity } from './column-chunk.js';

const MINUS = 0x2d;
const QUOTE = 0x22;
const COMMA = 0x2c;
const OPEN = 0x5b;
const CLOSE = 0x5d;

/** Where the last integer read ended, its digit count and whether it was quoted. */
let at = 0;
let digits = 0;
let quoted = false;

/**
 * The integer at b[p] (optionally '-', optionally in quotes), exact as a
 * number while it has at most 15 digits (else approximate: callers re-read
 * such text as a BigInt); NaN when there is none.
 */
function readInt(b: Uint8Array, p: number, e: number): number {
  quoted = p < e && b[p] === QUOTE;
  if (quoted) p++;
  const neg = p < e && b[p] === MINUS;
  if (neg) p++;
  const s = p;
  let x = 0;
  for (; p < e; p++) {
    const c = b[p]! - 0x30;
    if (c < 0 || c > 9) break;
    x = x * 10 + c;
  }
  digits = p - s;
  if (digits === 0) return NaN;
  if (quoted) {
    if (p >= e || b[p] !== QUOTE) return NaN;
    p++;
  }
  at = p;
  return neg ? -x : x;
}

/** The integer text read last (between `from` and `at`, quotes dropped) as a BigInt. */
function bigOf(b: Uint8Array, from: number): bigint {
  let s = '';
  for (let p = from; p < at; p++) if (b[p] !== QUOTE) s += String.fromCharCode(b[p]!);
  return BigInt(s);
}

const isValid = (validity: Validity, i: number): boolean => validity === null || (validity[i >> 3]! & (1 << (i & 7))) !== 0;

/** INTERVAL rows' stored text (rows [offsets[i], offsets[i + 1]) of `bytes`) as an interval chunk, or null for text of another shape. */
export function intervalChunkOf(bytes: Uint8Array, offsets: Int32Array, validity: Validity, rows: number): ColumnChunk | null {
  const months = new Int32Array(rows);
  const days = new Int32Array(rows);
  const micros = new BigInt64Array(rows);
  // Exact micros (at most 15 digits) go in as two 32-bit halves, no BigInt per value.
  const halves = new Uint32Array(micros.buffer);
  for (let i = 0; i < rows; i++) {
    if (!isValid(validity, i)) continue;
    const s = offsets[i]!;
    const e = offsets[i + 1]!;
    if (e - s < 7 || bytes[s] !== OPEN || bytes[e - 1] !== CLOSE) return null;
    const m = readInt(bytes, s + 1, e);
    if (Number.isNaN(m) || quoted || m !== (m | 0) || bytes[at] !== COMMA) return null;
    const d = readInt(bytes, at + 1, e);
    if (Number.isNaN(d) || quoted || d !== (d | 0) || bytes[at] !== COMMA) return null;
    const from = at + 1;
    const u = readInt(bytes, from, e);
    if (Number.isNaN(u) || at !== e - 1) return null;
    months[i] = m;
    days[i] = d;
    if (digits <= 15) {
      const hi = Math.floor(u / 4294967296);
      halves[2 * i] = u - hi * 4294967296;
      halves[2 * i + 1] = hi >>> 0;
    } else micros[i] = BigInt.asIntN(64, bigOf(bytes, from));
  }
  return { kind: 'interval', length: rows, months, days, micros, validity };
}

/**
 * RANGE<DATE | DATETIME | TIMESTAMP> rows' stored text as a range chunk:
 * each side a fixed chunk of the element's executor layout (DATE Int32Array;
 * DATETIME / TIMESTAMP doubles while every value is within 2^53, else
 * BigInt64Array), an unbounded side a NULL row of it. Null for another
 * element type or text of another shape.
 */
export function rangeChunkOf(element: SqlType, bytes: Uint8Array, offsets: Int32Array, validity: Validity, rows: number): ColumnChunk | null {
  const date = element.kind === 'DATE';
  if (!date && element.kind !== 'DATETIME' && element.kind !== 'TIMESTAMP') return null;
  const sides = [new Float64Array(rows), new Float64Array(rows)] as const;
  const present = [new Uint8Array((rows + 7) >> 3), new Uint8Array((rows + 7) >> 3)] as const;
  const all = [true, true];
  // Where a side's text starts, per row, kept only if one needs a BigInt (wide values).
  let wide = false;
  for (let i = 0; i < rows; i++) {
    if (!isValid(validity, i)) {
      all[0] = all[1] = false;
      continue;
    }
    const s = offsets[i]!;
    const e = offsets[i + 1]!;
    if (e - s < 5 || bytes[s] !== OPEN || bytes[e - 1] !== CLOSE) return null;
    let p = s + 1;
    for (let k = 0; k < 2; k++) {
      const end = k === 0 ? COMMA : CLOSE;
      if (bytes[p] === 0x6e) {
        // null: unbounded.
        if (bytes[p + 1] !== 0x75 || bytes[p + 2] !== 0x6c || bytes[p + 3] !== 0x6c || bytes[p + 4] !== end) return null;
        all[k] = false;
        p += 5;
        continue;
      }
      const x = readInt(bytes, p, e);
      if (Number.isNaN(x) || bytes[at] !== end) return null;
      if (date && (quoted || x !== (x | 0))) return null;
      if (quoted || digits > 15) wide = true;
      sides[k][i] = x;
      present[k][i >> 3]! |= 1 << (i & 7);
      p = at + 1;
    }
    if (p !== e) return null;
  }
  const side = (k: 0 | 1): ColumnChunk => {
    const v = all[k] ? null : present[k];
    if (date) return { kind: 'fixed', length: rows, values: Int32Array.from(sides[k]), validity: v };
    if (!wide) return { kind: 'fixed', length: rows, values: sides[k], validity: v };
    return { kind: 'fixed', length: rows, values: bigSide(bytes, offsets, present[k], rows, k), validity: v };
  };
  return { kind: 'range', length: rows, validity, start: side(0), end: side(1) };
}

/** Side k of every present row read again as a BigInt (a column holding a value beyond 2^53). */
function bigSide(bytes: Uint8Array, offsets: Int32Array, present: Uint8Array, rows: number, k: 0 | 1): BigInt64Array {
  const out = new BigInt64Array(rows);
  for (let i = 0; i < rows; i++) {
    if ((present[i >> 3]! & (1 << (i & 7))) === 0) continue;
    let p = offsets[i]! + 1;
    if (k === 1) {
      // Past the first side and its comma (shapes were checked by the first pass).
      if (bytes[p] === 0x6e) p += 5;
      else {
        readInt(bytes, p, offsets[i + 1]!);
        p = at + 1;
      }
    }
    readInt(bytes, p, offsets[i + 1]!);
    out[i] = BigInt.asIntN(64, bigOf(bytes, p));
  }
  return out;
}
