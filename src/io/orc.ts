// ORC reading for load jobs, after the Apache ORC v1 file format
// specification (orc.apache.org/specification/ORCv1): the tail (postscript,
// footer), each stripe's footer and streams, generic compression chunks
// (NONE, ZLIB, SNAPPY, LZ4, ZSTD), byte / boolean / integer RLE (v1 and v2)
// and every column kind. Types map as the service documents for ORC loads:
// integers INTEGER, float/double FLOAT, string/char/varchar STRING, binary
// BYTES, decimal NUMERIC or BIGNUMERIC by precision and scale, date DATE,
// timestamp TIMESTAMP (the writer's wall clock, read as UTC; sub-microsecond
// digits dropped), struct RECORD, list REPEATED, map REPEATED RECORD
// {key, value}, a union of one variant that variant, else RECORD
// {field_0, field_1, ...} with the row's variant set. Rows come out in
// insertAll's JSON forms, as the other readers give them.
import { inflateRawSync } from 'node:zlib';
import { civilToUtc, utcToCivil } from '../functions/civil.js';
import { zstdDecompress } from '../functions/compression.js';
import { ioInvalid, ioNotImplemented, IoError, type Json } from './errors.js';
import type { SourceFile } from './objects.js';
import type { Parsed, RestField } from './schema.js';
import { snappyDecompress } from './snappy.js';
import { microsIso } from './parquet.js';
import { formatDate } from '../types/json-values.js';

class OrcError extends Error {}
/**
 * Bounds on counts a file states (a crafted footer must not make the reader
 * allocate without end): rows or list elements of a column in one stripe,
 * and the chunk size a codec may expand to.
 */
const MAX_VALUES = 1 << 24;
const MAX_CHUNK = 64 << 20;
const bad = (what: string): never => {
  throw new OrcError(what);
};

// ---------- protobuf (the tail and stripe footers are protobuf messages) ----------

type PbValue = bigint | Uint8Array;
/** A message's fields by number, each a list of its occurrences (varints as bigint, length-delimited as bytes). */
type Pb = Map<number, PbValue[]>;

function readVarint(b: Uint8Array, at: { p: number }): bigint {
  let r = 0n;
  for (let shift = 0n; ; shift += 7n) {
    if (at.p >= b.length || shift > 63n) bad('truncated varint');
    const x = b[at.p++]!;
    r |= BigInt(x & 0x7f) << shift;
    if (x < 0x80) return r;
  }
}

function pb(b: Uint8Array): Pb {
  const m: Pb = new Map();
  const at = { p: 0 };
  while (at.p < b.length) {
    const key = Number(readVarint(b, at));
    const field = key >>> 3;
    let v: PbValue;
    switch (key & 7) {
      case 0:
        v = readVarint(b, at);
        break;
      case 1:
        v = b.subarray(at.p, (at.p += 8));
        break;
      case 2: {
        const len = Number(readVarint(b, at));
        if (at.p + len > b.length) bad('truncated message');
        v = b.subarray(at.p, (at.p += len));
        break;
      }
      case 5:
        v = b.subarray(at.p, (at.p += 4));
        break;
      default:
        return bad(`unsupported protobuf wire type ${key & 7}`);
    }
    const list = m.get(field);
    if (list) list.push(v);
    else m.set(field, [v]);
  }
  return m;
}

const num = (m: Pb, f: number, dflt = 0): number => {
  const v = m.get(f)?.[0];
  return typeof v === 'bigint' ? Number(v) : dflt;
};
const msgs = (m: Pb, f: number): Pb[] => (m.get(f) ?? []).map((v) => (v instanceof Uint8Array ? pb(v) : bad('expected a message')));
const text = (v: PbValue): string => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : bad('expected a string'));
/** A repeated uint32: packed (one length-delimited run) or one varint per occurrence. */
function uints(m: Pb, f: number): number[] {
  const out: number[] = [];
  for (const v of m.get(f) ?? []) {
    if (typeof v === 'bigint') out.push(Number(v));
    else for (const at = { p: 0 }; at.p < v.length; ) out.push(Number(readVarint(v, at)));
  }
  return out;
}

// ---------- generic compression ----------

const CODECS = ['NONE', 'ZLIB', 'SNAPPY', 'LZO', 'LZ4', 'ZSTD'] as const;
type Codec = (typeof CODECS)[number];

/** One raw LZ4 block (the block format: sequences of literals and matches). */
function lz4Block(src: Uint8Array, maxOut: number): Uint8Array {
  const out = new Uint8Array(maxOut);
  let s = 0;
  let o = 0;
  const length = (n: number): number => {
    if (n !== 15) return n;
    for (;;) {
      if (s >= src.length) bad('truncated LZ4 block');
      const x = src[s++]!;
      n += x;
      if (x !== 255) return n;
    }
  };
  while (s < src.length) {
    const token = src[s++]!;
    const lit = length(token >>> 4);
    if (s + lit > src.length || o + lit > out.length) bad('bad LZ4 literal run');
    out.set(src.subarray(s, s + lit), o);
    s += lit;
    o += lit;
    if (s >= src.length) break; // the last sequence has literals only
    if (s + 2 > src.length) bad('truncated LZ4 block');
    const offset = src[s]! | (src[s + 1]! << 8);
    s += 2;
    const len = length(token & 15) + 4;
    if (offset === 0 || offset > o || o + len > out.length) bad('bad LZ4 match');
    for (let i = 0; i < len; i++, o++) out[o] = out[o - offset]!;
  }
  return out.subarray(0, o);
}

/** A stream's bytes without the chunk framing of its codec (chunks of 3-byte headers: length * 2 + isOriginal). */
function decompress(b: Uint8Array, codec: Codec, blockSize: number): Uint8Array {
  if (codec === 'NONE') return b;
  const parts: Uint8Array[] = [];
  let p = 0;
  while (p < b.length) {
    if (p + 3 > b.length) bad('truncated compression chunk header');
    const h = b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16);
    p += 3;
    const len = h >>> 1;
    if (p + len > b.length) bad('truncated compression chunk');
    const chunk = b.subarray(p, p + len);
    p += len;
    if (h & 1) {
      parts.push(chunk);
      continue;
    }
    switch (codec) {
      case 'ZLIB':
        parts.push(inflateRawSync(chunk, { maxOutputLength: Math.max(blockSize, 1) }));
        break;
      case 'SNAPPY':
        parts.push(snappyDecompress(chunk));
        break;
      case 'LZ4':
        parts.push(lz4Block(chunk, Math.min(blockSize, chunk.length * 255 + 16)));
        break;
      case 'ZSTD':
        parts.push(zstdDecompress(chunk, Math.max(blockSize, 1)));
        break;
      default:
        throw ioNotImplemented(`ORC files compressed with ${codec} are not supported by the emulator (NONE, ZLIB, SNAPPY, LZ4 and ZSTD are)`);
    }
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

// ---------- run-length encodings ----------

/** A stream being read: its bytes and the position. */
class In {
  p = 0;
  constructor(readonly b: Uint8Array) {}
  byte(): number {
    if (this.p >= this.b.length) bad('stream ended early');
    return this.b[this.p++]!;
  }
  uvarint(): bigint {
    return readVarint(this.b, this);
  }
  svarint(): bigint {
    return unzigzag(this.uvarint());
  }
  /** `n` bytes big-endian, unsigned. */
  be(n: number): bigint {
    let r = 0n;
    for (let i = 0; i < n; i++) r = (r << 8n) | BigInt(this.byte());
    return r;
  }
}

const unzigzag = (u: bigint): bigint => (u >> 1n) ^ -(u & 1n);

/** Byte RLE: runs (control 0..127: control + 3 copies) and literals (control -1..-128: that many bytes). */
function byteRle(s: In, n: number): Uint8Array {
  const out = new Uint8Array(n);
  let i = 0;
  while (i < n) {
    const c = s.byte();
    if (c < 0x80) {
      const v = s.byte();
      const end = Math.min(n, i + c + 3);
      out.fill(v, i, end);
      i = end;
    } else {
      for (let k = 0x100 - c; k > 0 && i < n; k--) out[i++] = s.byte();
    }
  }
  return out;
}

/** Boolean RLE: byte RLE of bits, most significant first. */
function booleans(s: In, n: number): Uint8Array {
  const bytes = byteRle(s, Math.ceil(n / 8));
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (bytes[i >> 3]! >> (7 - (i & 7))) & 1;
  return out;
}

/** RLE v1: runs (control 0..127: control + 3 values of a fixed delta from a varint base) and literal varints. */
function intRleV1(s: In, n: number, signed: boolean): bigint[] {
  const out: bigint[] = [];
  while (out.length < n) {
    const c = s.byte();
    if (c < 0x80) {
      const delta = BigInt((s.byte() << 24) >> 24);
      const base = signed ? s.svarint() : s.uvarint();
      for (let k = 0n; k < BigInt(c + 3); k++) out.push(base + k * delta);
    } else {
      for (let k = 0x100 - c; k > 0; k--) out.push(signed ? s.svarint() : s.uvarint());
    }
  }
  return out.slice(0, n);
}

/** RLE v2's 5-bit width code -> bits. */
const WIDTH = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 26, 28, 30, 32, 40, 48, 56, 64];
/** The packed width of a patch (gap + patch bits), as RLE v2 rounds it. */
function closestFixedBits(n: number): number {
  if (n <= 24) return Math.max(n, 1);
  for (const w of [26, 28, 30, 32, 40, 48, 56, 64]) if (n <= w) return w;
  return 64;
}

/** `count` values of `width` bits, big-endian bit-packed from the current byte; ends on a byte boundary. */
function unpack(s: In, count: number, width: number): bigint[] {
  const out = new Array<bigint>(count);
  const w = BigInt(width);
  let acc = 0n;
  let bits = 0n;
  for (let i = 0; i < count; i++) {
    while (bits < w) {
      acc = (acc << 8n) | BigInt(s.byte());
      bits += 8n;
    }
    bits -= w;
    out[i] = acc >> bits;
    acc &= (1n << bits) - 1n;
  }
  return out;
}

function intRleV2(s: In, n: number, signed: boolean): bigint[] {
  const out: bigint[] = [];
  const z = (v: bigint): bigint => (signed ? unzigzag(v) : v);
  while (out.length < n) {
    const h = s.byte();
    switch (h >>> 6) {
      case 0: {
        // SHORT_REPEAT
        const v = z(s.be(((h >>> 3) & 7) + 1));
        for (let k = (h & 7) + 3; k > 0; k--) out.push(v);
        break;
      }
      case 1: {
        // DIRECT
        const width = WIDTH[(h >>> 1) & 31]!;
        const len = (((h & 1) << 8) | s.byte()) + 1;
        for (const v of unpack(s, len, width)) out.push(z(v));
        break;
      }
      case 2: {
        // PATCHED_BASE: values over a base, the widest few patched with high bits
        const width = WIDTH[(h >>> 1) & 31]!;
        const len = (((h & 1) << 8) | s.byte()) + 1;
        const b2 = s.byte();
        const b3 = s.byte();
        const baseBytes = ((b2 >>> 5) & 7) + 1;
        const patchWidth = WIDTH[b2 & 31]!;
        const gapWidth = ((b3 >>> 5) & 7) + 1;
        const patches = b3 & 31;
        let base = s.be(baseBytes);
        const sign = 1n << BigInt(baseBytes * 8 - 1);
        if (base & sign) base = -(base & ~sign);
        const vals = unpack(s, len, width);
        const list = unpack(s, patches, closestFixedBits(gapWidth + patchWidth));
        const pw = BigInt(patchWidth);
        const mask = (1n << pw) - 1n;
        let at = 0;
        for (const e of list) {
          // A gap of 255 with a zero patch only moves on (gaps over 255).
          at += Number(e >> pw);
          const patch = e & mask;
          if (patch === 0n) continue;
          if (at >= len) bad('RLE v2 patch past the run');
          vals[at] = vals[at]! | (patch << BigInt(width));
        }
        for (const v of vals) out.push(base + v);
        break;
      }
      default: {
        // DELTA
        const code = (h >>> 1) & 31;
        const width = code === 0 ? 0 : WIDTH[code]!;
        const len = (((h & 1) << 8) | s.byte()) + 1;
        let v = signed ? s.svarint() : s.uvarint();
        // The delta base is written even for a run of one.
        const step = s.svarint();
        out.push(v);
        if (len === 1) break;
        v += step;
        out.push(v);
        if (width === 0) {
          for (let k = 2; k < len; k++) out.push((v += step));
        } else {
          for (const d of unpack(s, len - 2, width)) out.push((v += step < 0n ? -d : d));
        }
      }
    }
  }
  return out.slice(0, n);
}

// ---------- types ----------

const KINDS = ['BOOLEAN', 'BYTE', 'SHORT', 'INT', 'LONG', 'FLOAT', 'DOUBLE', 'STRING', 'BINARY', 'TIMESTAMP', 'LIST', 'MAP', 'STRUCT', 'UNION', 'DECIMAL', 'DATE', 'VARCHAR', 'CHAR', 'TIMESTAMP_INSTANT'] as const;
type Kind = (typeof KINDS)[number];
interface OrcType {
  kind: Kind;
  children: number[];
  names: string[];
  precision: number;
  scale: number;
}

function orcTypes(footer: Pb): OrcType[] {
  return msgs(footer, 4).map((t) => {
    const kind = KINDS[num(t, 1)] ?? bad(`unknown type kind ${num(t, 1)}`);
    return { kind, children: uints(t, 2), names: (t.get(3) ?? []).map(text), precision: num(t, 5, 38), scale: num(t, 6, 10) };
  });
}

/** The column's field in the service's schema (name given by the parent). */
function fieldOf(types: OrcType[], id: number, name: string): RestField {
  const t = types[id] ?? bad(`missing type ${id}`);
  const scalar = (type: string): RestField => ({ name, type, mode: 'NULLABLE' });
  switch (t.kind) {
    case 'BOOLEAN':
      return scalar('BOOLEAN');
    case 'BYTE':
    case 'SHORT':
    case 'INT':
    case 'LONG':
      return scalar('INTEGER');
    case 'FLOAT':
    case 'DOUBLE':
      return scalar('FLOAT');
    case 'STRING':
    case 'VARCHAR':
    case 'CHAR':
      return scalar('STRING');
    case 'BINARY':
      return scalar('BYTES');
    case 'DECIMAL':
      return scalar(t.scale <= 9 && t.precision - t.scale <= 29 ? 'NUMERIC' : 'BIGNUMERIC');
    case 'DATE':
      return scalar('DATE');
    case 'TIMESTAMP':
    case 'TIMESTAMP_INSTANT':
      return scalar('TIMESTAMP');
    case 'STRUCT':
      return { name, type: 'RECORD', mode: 'NULLABLE', fields: t.children.map((c, i) => fieldOf(types, c, t.names[i] ?? `_col${i}`)) };
    case 'LIST': {
      const el = fieldOf(types, t.children[0] ?? bad('list without an element type'), name);
      if (el.mode === 'REPEATED') throw ioInvalid(`Unsupported ORC type for field ${name}: nested lists and lists of maps are not supported`);
      return { ...el, mode: 'REPEATED' };
    }
    case 'MAP':
      return { name, type: 'RECORD', mode: 'REPEATED', fields: [fieldOf(types, t.children[0]!, 'key'), fieldOf(types, t.children[1]!, 'value')] };
    case 'UNION':
      if (t.children.length === 1) return fieldOf(types, t.children[0]!, name);
      return { name, type: 'RECORD', mode: 'NULLABLE', fields: t.children.map((c, i) => fieldOf(types, c, `field_${i}`)) };
  }
}

// ---------- values ----------

const MICROS_2015 = 1_420_070_400_000_000n;

/** An unscaled decimal at `scale` -> its text. */
function decimalText(unscaled: bigint, scale: number): string {
  const neg = unscaled < 0n;
  let digits = (neg ? -unscaled : unscaled).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  } else if (scale < 0) digits += '0'.repeat(-scale);
  return neg ? `-${digits}` : digits;
}

/** Nanoseconds as the SECONDARY stream stores them: the low 3 bits count removed trailing zeros (minus one). */
function nanosOf(v: bigint): bigint {
  const zeros = Number(v & 7n);
  const n = v >> 3n;
  return zeros === 0 ? n : n * 10n ** BigInt(zeros + 1);
}

/** One stripe: its streams by column and kind, the columns' encodings, the writer's time zone. */
interface Stripe {
  stream(column: number, kind: number): In | undefined;
  /** DIRECT 0, DICTIONARY 1, DIRECT_V2 2, DICTIONARY_V2 3. */
  encoding(column: number): number;
  dictionarySize(column: number): number;
  /** Microseconds between the epoch and 2015-01-01 00:00:00 at the writer's zone. */
  timestampBase: bigint;
  timeZone: string;
}

const PRESENT = 0;
const DATA = 1;
const LENGTH = 2;
const DICTIONARY_DATA = 3;
const SECONDARY = 5;

/** A stream the column's encoding has; writers leave out empty ones (reading past the end fails). */
function need(st: Stripe, column: number, kind: number): In {
  return st.stream(column, kind) ?? new In(new Uint8Array(0));
}

function ints(st: Stripe, column: number, kind: number, n: number, signed: boolean): bigint[] {
  const s = need(st, column, kind);
  const enc = st.encoding(column);
  return enc === 2 || enc === 3 ? intRleV2(s, n, signed) : intRleV1(s, n, signed);
}

const utf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }); // a leading U+FEFF is data

/** The `n` byte strings of a STRING/CHAR/VARCHAR/BINARY column's present values, direct or by dictionary. */
function byteValues(st: Stripe, column: number, n: number): Uint8Array[] {
  const enc = st.encoding(column);
  if (enc === 1 || enc === 3) {
    const dict = need(st, column, DICTIONARY_DATA).b;
    const lengths = ints(st, column, LENGTH, st.dictionarySize(column), false);
    const entries: Uint8Array[] = [];
    let p = 0;
    for (const l of lengths) {
      const e = p + Number(l);
      if (l < 0n || e > dict.length) bad('dictionary entry past its data');
      entries.push(dict.subarray(p, e));
      p = e;
    }
    return ints(st, column, DATA, n, false).map((i) => entries[Number(i)] ?? bad('dictionary index out of range'));
  }
  const data = need(st, column, DATA).b;
  let p = 0;
  return ints(st, column, LENGTH, n, false).map((l) => {
    const e = p + Number(l);
    if (l < 0n || e > data.length) bad('value past its data');
    const v = data.subarray(p, e);
    p = e;
    return v;
  });
}

/** Wall-clock microseconds of a TIMESTAMP (writer's zone) read as UTC; an instant's own microseconds for TIMESTAMP_INSTANT. */
function timestampMicros(st: Stripe, seconds: bigint, nanos: bigint, instant: boolean): bigint {
  const base = instant ? MICROS_2015 : st.timestampBase;
  // Writers divide milliseconds before the epoch by truncation: with a fraction, the second is one too high.
  let secs = seconds;
  if (base / 1_000_000n + secs < 0n && nanos > 999_999n) secs -= 1n;
  const us = base + secs * 1_000_000n + nanos / 1000n;
  if (instant || st.timeZone === 'UTC' || st.timeZone === 'GMT') return us;
  // The writer stored an instant of its zone: the wall clock it showed there is the value.
  return utcToCivil(us, st.timeZone);
}

/**
 * Column `id`'s `n` values in this stripe (n: the parent's present values,
 * or its list/map elements), in insertAll's JSON forms; null where absent.
 */
function readColumn(types: OrcType[], st: Stripe, id: number, n: number): unknown[] {
  const t = types[id] ?? bad(`missing type ${id}`);
  if (n > MAX_VALUES) throw ioInvalid(`ORC columns of more than ${MAX_VALUES} values in one stripe are not supported by the emulator`);
  const p = st.stream(id, PRESENT);
  const present = p ? booleans(p, n) : undefined;
  let m = n;
  if (present) {
    m = 0;
    for (let i = 0; i < n; i++) m += present[i]!;
  }
  const vals = presentValues(types, st, id, t, m);
  if (!present) return vals;
  const out = new Array<unknown>(n);
  for (let i = 0, k = 0; i < n; i++) out[i] = present[i] ? vals[k++] : null;
  return out;
}

function presentValues(types: OrcType[], st: Stripe, id: number, t: OrcType, m: number): unknown[] {
  switch (t.kind) {
    case 'BOOLEAN':
      return Array.from(booleans(need(st, id, DATA), m), (b) => b === 1);
    case 'BYTE':
      return Array.from(byteRle(need(st, id, DATA), m), (b) => String((b << 24) >> 24));
    case 'SHORT':
    case 'INT':
    case 'LONG':
      return ints(st, id, DATA, m, true).map(String);
    case 'DATE':
      return ints(st, id, DATA, m, true).map((d) => formatDate(Number(d)));
    case 'FLOAT':
    case 'DOUBLE': {
      const s = need(st, id, DATA);
      const w = t.kind === 'FLOAT' ? 4 : 8;
      if (s.b.length < m * w) bad('float data ended early');
      const dv = new DataView(s.b.buffer, s.b.byteOffset, s.b.byteLength);
      const out = new Array<unknown>(m);
      for (let i = 0; i < m; i++) {
        const v = w === 4 ? dv.getFloat32(i * 4, true) : dv.getFloat64(i * 8, true);
        out[i] = Number.isFinite(v) ? v : String(v);
      }
      return out;
    }
    case 'STRING':
    case 'VARCHAR':
    case 'CHAR':
      return byteValues(st, id, m).map((b) => utf8.decode(b));
    case 'BINARY':
      return byteValues(st, id, m).map((b) => Buffer.from(b).toString('base64'));
    case 'DECIMAL': {
      // Short decimals of newer writers (decimal64): RLE v2 integers at the type's scale.
      if (!st.stream(id, SECONDARY)) return ints(st, id, DATA, m, true).map((u) => decimalText(u, t.scale));
      const s = need(st, id, DATA);
      const unscaled: bigint[] = [];
      for (let i = 0; i < m; i++) {
        // Unbounded base-128 varint, zigzag: longer than readVarint's 64 bits.
        let r = 0n;
        for (let shift = 0n; ; shift += 7n) {
          const x = s.byte();
          r |= BigInt(x & 0x7f) << shift;
          if (x < 0x80) break;
          if (shift > 1200n) bad('decimal varint too long');
        }
        unscaled.push(unzigzag(r));
      }
      const scales = ints(st, id, SECONDARY, m, true);
      return unscaled.map((u, i) => decimalText(u, Number(scales[i])));
    }
    case 'TIMESTAMP':
    case 'TIMESTAMP_INSTANT': {
      const secs = ints(st, id, DATA, m, true);
      const nanos = ints(st, id, SECONDARY, m, false);
      return secs.map((s, i) => microsIso(timestampMicros(st, s, nanosOf(nanos[i]!), t.kind === 'TIMESTAMP_INSTANT')));
    }
    case 'STRUCT': {
      const cols = t.children.map((c) => readColumn(types, st, c, m));
      const names = t.children.map((_, i) => t.names[i] ?? `_col${i}`);
      return Array.from({ length: m }, (_, r) => {
        const o: Json = {};
        cols.forEach((c, i) => (o[names[i]!] = c[r]));
        return o;
      });
    }
    case 'LIST':
    case 'MAP': {
      const lengths = ints(st, id, LENGTH, m, false).map(Number);
      const total = lengths.reduce((a, b) => a + b, 0);
      const items =
        t.kind === 'LIST'
          ? readColumn(types, st, t.children[0]!, total)
          : ((): unknown[] => {
              const keys = readColumn(types, st, t.children[0]!, total);
              const values = readColumn(types, st, t.children[1]!, total);
              return keys.map((key, i) => ({ key, value: values[i] }));
            })();
      let at = 0;
      return lengths.map((l) => items.slice(at, (at += l)));
    }
    case 'UNION': {
      const tags = byteRle(need(st, id, DATA), m);
      const variants = t.children.map((c, v) => {
        let count = 0;
        for (const tag of tags) if (tag === v) count++;
        return readColumn(types, st, c, count);
      });
      const next = t.children.map(() => 0);
      return Array.from(tags, (tag) => {
        const v = variants[tag] ?? bad(`union tag ${tag} out of range`);
        const value = v[next[tag]!++];
        if (t.children.length === 1) return value;
        const o: Json = {};
        t.children.forEach((_, i) => (o[`field_${i}`] = i === tag ? value : null));
        return o;
      });
    }
  }
}

// ---------- files ----------

function openStripe(data: Uint8Array, info: Pb, codec: Codec, blockSize: number): { st: Stripe; rows: number } {
  const offset = num(info, 1);
  const indexLength = num(info, 2);
  const dataLength = num(info, 3);
  const footerLength = num(info, 4);
  const rows = num(info, 5);
  const footerAt = offset + indexLength + dataLength;
  if (footerAt + footerLength > data.length) bad('stripe past the end of the file');
  const footer = pb(decompress(data.subarray(footerAt, footerAt + footerLength), codec, blockSize));
  const streams = new Map<string, Uint8Array>();
  let p = offset;
  for (const s of msgs(footer, 1)) {
    const kind = num(s, 1);
    const column = num(s, 2);
    const length = num(s, 3);
    if (p + length > footerAt) bad('stream past its stripe');
    // Index and bloom filter streams (kinds 6..8) come first; they are not needed to read rows.
    if (kind < 6) streams.set(`${column}:${kind}`, data.subarray(p, p + length));
    p += length;
  }
  const encodings = msgs(footer, 2);
  const zoneValue = footer.get(3)?.[0];
  const timeZone = zoneValue ? text(zoneValue) : 'UTC';
  let base: bigint;
  try {
    base = civilToUtc(MICROS_2015, timeZone);
  } catch {
    throw new OrcError(`unknown writer time zone ${timeZone}`);
  }
  const decoded = new Map<string, Uint8Array>();
  const st: Stripe = {
    stream(column, kind) {
      const key = `${column}:${kind}`;
      let b = decoded.get(key);
      if (!b) {
        const raw = streams.get(key);
        if (!raw) return undefined;
        b = decompress(raw, codec, blockSize);
        decoded.set(key, b);
      }
      return new In(b);
    },
    encoding: (column) => num(encodings[column] ?? new Map(), 1),
    dictionarySize: (column) => num(encodings[column] ?? new Map(), 2),
    timestampBase: base,
    timeZone,
  };
  return { st, rows };
}

/** A file's schema (the root struct's fields) and rows. */
export function readOrc(data: Uint8Array): { fields: RestField[]; rows: Json[] } {
  if (data.length < 4 || Buffer.from(data.subarray(0, 3)).toString('latin1') !== 'ORC') bad('missing the ORC header');
  const psLength = data[data.length - 1]!;
  const psAt = data.length - 1 - psLength;
  if (psAt < 3) bad('postscript past the start of the file');
  const ps = pb(data.subarray(psAt, data.length - 1));
  const codec = CODECS[num(ps, 2)] ?? bad(`unknown compression kind ${num(ps, 2)}`);
  const blockSize = Math.min(num(ps, 3, 256 * 1024), MAX_CHUNK);
  const footerLength = num(ps, 1);
  const metadataLength = num(ps, 5);
  const footerAt = psAt - footerLength;
  if (footerAt - metadataLength < 3) bad('footer past the start of the file');
  const footer = pb(decompress(data.subarray(footerAt, psAt), codec, blockSize));
  const types = orcTypes(footer);
  if (types.length === 0) return { fields: [], rows: [] };
  const root = types[0]!;
  if (root.kind !== 'STRUCT') throw ioInvalid(`The root type of an ORC file must be a struct, not ${root.kind.toLowerCase()}`);
  const fields = root.children.map((c, i) => fieldOf(types, c, root.names[i] ?? `_col${i}`));
  const rows: Json[] = [];
  for (const info of msgs(footer, 3)) {
    const { st, rows: n } = openStripe(data, info, codec, blockSize);
    const cols = root.children.map((c) => readColumn(types, st, c, n));
    for (let r = 0; r < n; r++) {
      const o: Json = {};
      fields.forEach((f, i) => (o[f.name] = cols[i]![r]));
      rows.push(o);
    }
  }
  return { fields, rows };
}

/** Load-job rows of ORC sources; the schema is the files' own unless the job states one. */
export function orcRows(files: readonly SourceFile[], schema: RestField[] | undefined): Parsed {
  let fields = schema;
  const rows: Json[] = [];
  for (const file of files) {
    let read: { fields: RestField[]; rows: Json[] };
    try {
      read = readOrc(file.data);
    } catch (e) {
      if (e instanceof IoError) throw e;
      const why = e instanceof OrcError || e instanceof Error ? e.message : String(e);
      throw ioInvalid(`Error while reading data, error message: not a readable ORC file (${why}) File: ${file.uri}`);
    }
    fields ??= read.fields;
    for (const r of read.rows) rows.push(r);
  }
  if (!fields) throw ioInvalid('No schema specified on job or table.');
  return { fields, rows };
}
