// HLL_COUNT.* in the service's sketch format: ZetaSketch's HyperLogLog++
// (github.com/google/zetasketch), so that sketches made here and by the
// service merge and extract alike.
//
// A sketch is an AggregatorStateProto: 1 type (112 = HYPERLOGLOG_PLUS_UNIQUE),
// 2 num_values, 3 encoding_version (2), 4 value_type (the input's type:
// INT64 = 4, STRING/BYTES = 11), and extension 112 holding 2 sparse_size, 3
// precision p, 4 sparse precision sp (p + 5 at most 25), 5 data (dense: one rho
// per 2^p bucket) or 6 sparse_data (sorted sparse values, varint deltas).
// Values are hashed with Fingerprint2011 (64 bits): an INT64 as its 8
// little-endian bytes, a STRING as its UTF-8 bytes, BYTES as they are. A hash
// goes to sparse bucket `hash >>> (64 - sp)` with rho = leading zeros of the
// rest + 1; a sparse value is that bucket, or, when the bucket's bits below
// the p-bit prefix are all zero, a flag bit, the p-bit index and the rho. The
// sketch stays sparse while its varint data is under 3/4 of 2^p bytes.
import { T } from '../types/types.js';
import { Decimal, type Value } from '../types/values.js';
import { collect } from './aggregate-collect.js';
import { asig, defineAggregate, defineScalar, sig } from './signature.js';
import { fail, rowKernel } from './vec.js';

// ---------------------------------------------------------------- Fingerprint2011

const M64 = (1n << 64n) - 1n;
const K0 = 0xa5b85c5e198ed849n;
const K1 = 0x8d58ac26afe12e47n;
const K2 = 0xc47b6e9e3a970ed3n;
const K3 = 0xc6a4a7935bd1e995n;
const mul = (a: bigint, b: bigint): bigint => (a * b) & M64;
const add = (a: bigint, b: bigint): bigint => (a + b) & M64;
const rotr = (x: bigint, r: bigint): bigint => ((x >> r) | (x << (64n - r))) & M64;
const shiftMix = (x: bigint): bigint => x ^ (x >> 47n);

/** Little-endian unsigned integer of `n` bytes at `o` (n <= 8). */
function le(b: Uint8Array, o: number, n = 8): bigint {
  let r = 0n;
  for (let i = n - 1; i >= 0; i--) r = (r << 8n) | BigInt(b[o + i]!);
  return r;
}

function hash128to64(hi: bigint, lo: bigint): bigint {
  let a = mul(lo ^ hi, K3);
  a ^= a >> 47n;
  let b = mul(hi ^ a, K3);
  b ^= b >> 47n;
  return mul(b, K3);
}

function murmur64(b: Uint8Array, seed: bigint): bigint {
  const len = b.length;
  const whole = len & ~7;
  let h = seed ^ mul(BigInt(len), K3);
  for (let i = 0; i < whole; i += 8) {
    h ^= mul(shiftMix(mul(le(b, i), K3)), K3);
    h = mul(h, K3);
  }
  if (len & 7) {
    h ^= le(b, whole, len & 7);
    h = mul(h, K3);
  }
  return shiftMix(mul(shiftMix(h), K3));
}

function hash33to64(b: Uint8Array): bigint {
  const len = b.length;
  let z = le(b, 24);
  let a = add(le(b, 0), mul(add(BigInt(len), le(b, len - 16)), K0));
  let bb = rotr(add(a, z), 52n);
  let c = rotr(a, 37n);
  a = add(a, le(b, 8));
  c = add(c, rotr(a, 7n));
  a = add(a, le(b, 16));
  const vf = add(a, z);
  const vs = add(add(bb, rotr(a, 31n)), c);
  a = add(le(b, 16), le(b, len - 32));
  z = le(b, len - 8);
  bb = rotr(add(a, z), 52n);
  c = rotr(a, 37n);
  a = add(a, le(b, len - 24));
  c = add(c, rotr(a, 7n));
  a = add(a, le(b, len - 16));
  const wf = add(a, z);
  const ws = add(add(bb, rotr(a, 31n)), c);
  const r = shiftMix(add(mul(add(vf, ws), K2), mul(add(wf, vs), K0)));
  return mul(shiftMix(add(mul(r, K0), vs)), K2);
}

/** Two 64-bit halves from 32 bytes at `o` and two seeds. */
function weak32(b: Uint8Array, o: number, seedA: bigint, seedB: bigint): [bigint, bigint] {
  const w = le(b, o), x = le(b, o + 8), y = le(b, o + 16), z = le(b, o + 24);
  let a = add(seedA, w);
  let s = rotr(add(add(seedB, a), z), 51n);
  const c = a;
  a = add(add(a, x), y);
  s = add(s, rotr(a, 23n));
  return [add(a, z), add(s, c)];
}

function hashOver64(b: Uint8Array): bigint {
  const len = b.length;
  let x = le(b, 0);
  let y = le(b, len - 16) ^ K1;
  let z = le(b, len - 56) ^ K0;
  let v = weak32(b, len - 64, BigInt(len), y);
  let w = weak32(b, len - 32, mul(BigInt(len), K1), K0);
  z = add(z, mul(shiftMix(v[1]), K1));
  x = mul(rotr(add(z, x), 39n), K1);
  y = mul(rotr(y, 33n), K1);
  for (let o = 0, left = (len - 1) & ~63; left > 0; o += 64, left -= 64) {
    x = mul(rotr(add(add(add(x, y), v[0]), le(b, o + 16)), 37n), K1);
    y = mul(rotr(add(add(y, v[1]), le(b, o + 48)), 42n), K1);
    x ^= w[1];
    y ^= v[0];
    z = rotr(z ^ w[0], 33n);
    v = weak32(b, o, mul(v[1], K1), add(x, w[0]));
    w = weak32(b, o + 32, add(z, w[1]), y);
    [z, x] = [x, z];
  }
  return hash128to64(add(add(hash128to64(v[0], w[0]), mul(shiftMix(y), K1)), z), add(hash128to64(v[1], w[1]), x));
}

/** Fingerprint2011 of `b` as an unsigned 64-bit integer (the hash ZetaSketch gives every value). */
export function fingerprint2011(b: Uint8Array): bigint {
  const len = b.length;
  let r = len <= 32 ? murmur64(b, K0 ^ K1 ^ K2) : len <= 64 ? hash33to64(b) : hashOver64(b);
  const u = len >= 8 ? le(b, 0) : K0;
  const v = len >= 9 ? le(b, len - 8) : K0;
  r = hash128to64(add(r, v), u);
  return r === 0n || r === 1n ? add(r, M64 - 1n) : r;
}

// ---------------------------------------------------------------- INIT

const utf8 = new TextEncoder();
const VALUE_TYPE_INT64 = 4;
const VALUE_TYPE_BYTES_OR_UTF8_STRING = 11;

/** The bytes a value is hashed as, and the sketch's value type for its input type. */
function hashInput(t: string, v: Value): Uint8Array {
  switch (t) {
    case 'INT64': {
      const out = new Uint8Array(8);
      new DataView(out.buffer).setBigInt64(0, v as bigint, true);
      return out;
    }
    case 'STRING':
      return utf8.encode(v as string);
    case 'BYTES':
      return v as Uint8Array;
    default: {
      // NUMERIC / BIGNUMERIC: the scaled integer's shortest little-endian two's complement
      // (how the reference serializes these values; not checked against the service).
      let x = BigInt((v as Decimal).times(t === 'NUMERIC' ? '1e9' : '1e38').toFixed(0));
      const bytes: number[] = [];
      do {
        bytes.push(Number(x & 255n));
        x >>= 8n;
      } while (!((x === 0n && (bytes[bytes.length - 1]! & 128) === 0) || (x === -1n && (bytes[bytes.length - 1]! & 128) !== 0)));
      return Uint8Array.from(bytes);
    }
  }
}

/** The sparse value of a hash at precisions p and sp. */
function sparseValue(hash: bigint, p: number, sp: number): number {
  const index = Number(hash >> BigInt(64 - sp));
  const rest = (hash << BigInt(sp)) & M64;
  const rho = rest === 0n ? 64 - sp + 1 : 64 - rest.toString(2).length + 1;
  const extra = sp - p;
  if (index % 2 ** extra !== 0) return index;
  return rhoFlag(p, sp) + Math.floor(index / 2 ** extra) * 2 ** RHO_BITS + rho;
}

/** Rho of the low `bits` bits of `x` read as a hash suffix (leading zeros + 1), or undefined when they are 0. */
function suffixRho(x: number, bits: number): number | undefined {
  const low = x % 2 ** bits;
  return low === 0 ? undefined : bits - (32 - Math.clz32(low)) + 1;
}

/** A sparse value of precisions (p1, sp1) re-encoded at the smaller (p, sp). */
function downgradeSparse(v: number, p1: number, sp1: number, p: number, sp: number): number {
  const flag = rhoFlag(p1, sp1);
  const index = v >= flag ? Math.floor((v - flag) / 2 ** RHO_BITS) * 2 ** (sp1 - p1) : v;
  const rho = v >= flag ? (v - flag) % 2 ** RHO_BITS : 0;
  const drop = sp1 - sp;
  const newIndex = Math.floor(index / 2 ** drop);
  const newRho = drop === 0 ? rho : suffixRho(index, drop) ?? rho + drop;
  if (newIndex % 2 ** (sp - p) !== 0) return newIndex;
  return rhoFlag(p, sp) + Math.floor(newIndex / 2 ** (sp - p)) * 2 ** RHO_BITS + newRho;
}

function sparseBytes(sparse: readonly number[]): number {
  let bytes = 0;
  let prev = 0;
  for (const v of sparse) {
    bytes += varintLength(v - prev);
    prev = v;
  }
  return bytes;
}

/** A sketch of the non-NULL values (null when there are none), sparse while small. */
function initSketch(t: string, values: Value[], precision: number): HllProto | null {
  const p = precision;
  const sp = Math.min(p + 5, 25);
  const vals: number[] = [];
  for (const v of values) if (v !== null) vals.push(sparseValue(fingerprint2011(hashInput(t, v)), p, sp));
  if (vals.length === 0) return null;
  const valueType = t === 'INT64' ? VALUE_TYPE_INT64 : VALUE_TYPE_BYTES_OR_UTF8_STRING;
  const h: HllProto = { numValues: BigInt(vals.length), valueType, p, sp, sparse: dedupeSparse(vals, p, sp), data: null };
  return sparseBytes(h.sparse!) < 0.75 * 2 ** p ? h : { ...h, sparse: null, data: denseOf(h, p) };
}

// ---------------------------------------------------------------- the sketch

interface HllProto {
  numValues: bigint;
  valueType: number;
  p: number;
  sp: number;
  /** Sorted, deduplicated sparse values, or null in the dense form. */
  sparse: number[] | null;
  /** Dense buckets (rho per bucket), or null in the sparse form. */
  data: Uint8Array | null;
}

const HLL_TYPE = 112;
/** Bits of rho in a rho-encoded sparse value. */
const RHO_BITS = 6;

function readVarint(b: Uint8Array, pos: { i: number }): bigint {
  let r = 0n;
  let shift = 0n;
  for (;;) {
    if (pos.i >= b.length || shift > 63n) throw new Error('truncated varint');
    const x = b[pos.i++]!;
    r |= BigInt(x & 127) << shift;
    if (x < 128) return r;
    shift += 7n;
  }
}

/** Walks protobuf fields: varints as bigint, length-delimited as bytes; false on anything malformed. */
function protoFields(b: Uint8Array, f: (field: number, v: bigint | Uint8Array) => void): boolean {
  const pos = { i: 0 };
  try {
    while (pos.i < b.length) {
      const key = Number(readVarint(b, pos));
      const field = key >>> 3;
      const wire = key & 7;
      if (wire === 0) f(field, readVarint(b, pos));
      else if (wire === 2) {
        const len = Number(readVarint(b, pos));
        if (pos.i + len > b.length) return false;
        f(field, b.subarray(pos.i, pos.i + len));
        pos.i += len;
      } else if (wire === 1) pos.i += 8;
      else if (wire === 5) pos.i += 4;
      else return false;
    }
    return pos.i === b.length;
  } catch {
    return false;
  }
}

/** Whether b starts like an AggregatorStateProto of HLL++ type (field 1 = 112). */
function isHllProto(b: Uint8Array): boolean {
  return b.length >= 2 && b[0] === 0x08 && b[1] === HLL_TYPE;
}

function readHllProto(b: Uint8Array, fn: string, message = `Invalid or incompatible sketch in ${fn}`): HllProto {
  let type = -1;
  let numValues = 0n;
  let valueType = 0;
  let state: Uint8Array | null = null;
  const ok = protoFields(b, (field, v) => {
    if (field === 1 && typeof v === 'bigint') type = Number(v);
    else if (field === 2 && typeof v === 'bigint') numValues = BigInt.asIntN(64, v);
    else if (field === 4 && typeof v === 'bigint') valueType = Number(v);
    else if (field === HLL_TYPE && v instanceof Uint8Array) state = v;
  });
  if (!ok || type !== HLL_TYPE || state === null) fail(message);
  let p = 0;
  let sp = 0;
  let data: Uint8Array | null = null;
  let sparseBytes: Uint8Array | null = null;
  const ok2 = protoFields(state, (field, v) => {
    if (field === 3 && typeof v === 'bigint') p = Number(v);
    else if (field === 4 && typeof v === 'bigint') sp = Number(v);
    else if (field === 5 && v instanceof Uint8Array) data = v;
    else if (field === 6 && v instanceof Uint8Array) sparseBytes = v;
  });
  if (!ok2 || p < 10 || p > 24 || (sparseBytes !== null && (sp < p || sp > 25))) fail(message);
  let sparse: number[] | null = null;
  if (data === null) {
    sparse = [];
    if (sparseBytes !== null) {
      const sb: Uint8Array = sparseBytes;
      const pos = { i: 0 };
      let acc = 0;
      try {
        while (pos.i < sb.length) {
          acc += Number(readVarint(sb, pos));
          sparse.push(acc);
        }
      } catch {
        fail(message);
      }
    }
  } else if ((data as Uint8Array).length !== 1 << p) fail(message);
  return { numValues, valueType, p, sp, sparse, data: data === null ? null : new Uint8Array(data) };
}

const rhoFlag = (p: number, sp: number): number => 2 ** Math.max(sp, p + RHO_BITS);

/** A sparse value's bucket at precision p and its rho there. */
function sparseBucket(v: number, p: number, sp: number): { index: number; rho: number } {
  const flag = rhoFlag(p, sp);
  if (v >= flag) {
    const w = v - flag;
    // The stored rho counts from the sparse bucket bits; from the p-bit prefix the sp - p zero bits add to it.
    return { index: Math.floor(w / 2 ** RHO_BITS), rho: (w % 2 ** RHO_BITS) + sp - p };
  }
  const extra = sp - p;
  const rest = v % 2 ** extra;
  // rest != 0 here (otherwise the value would be rho-encoded): rho = leading zeros of the extra bits + 1.
  return { index: Math.floor(v / 2 ** extra), rho: extra - (32 - Math.clz32(rest)) + 1 };
}

/** Dense buckets at precision p (from either form, downgraded when the sketch's p is larger). */
function denseOf(h: HllProto, p: number): Uint8Array {
  const out = new Uint8Array(1 << p);
  const put = (index: number, rho: number, fromP: number): void => {
    let i = index;
    let r = rho;
    if (fromP > p) {
      const drop = fromP - p;
      const low = i % 2 ** drop;
      i = Math.floor(i / 2 ** drop);
      // The dropped index bits lead the hash suffix now.
      r = low !== 0 ? drop - (32 - Math.clz32(low)) + 1 : drop + r;
    }
    if (r > out[i]!) out[i] = r;
  };
  if (h.data !== null) h.data.forEach((rho, i) => rho > 0 && put(i, rho, h.p));
  else for (const v of h.sparse!) {
    const b = sparseBucket(v, h.p, h.sp);
    put(b.index, b.rho, h.p);
  }
  return out;
}

/** Union of sorted sparse values of one encoding: per sparse index the largest value (rho) stays. */
function dedupeSparse(vals: number[], p: number, sp: number): number[] {
  vals.sort((a, b) => a - b);
  const flag = rhoFlag(p, sp);
  const indexOf = (v: number): number => (v >= flag ? Math.floor((v - flag) / 2 ** RHO_BITS) * 2 ** (sp - p) : v);
  const out: number[] = [];
  for (const v of vals) {
    if (out.length > 0 && indexOf(out[out.length - 1]!) === indexOf(v)) out[out.length - 1] = v;
    else out.push(v);
  }
  return out;
}

function varintLength(x: number): number {
  let n = 1;
  while (x >= 128) {
    x = Math.floor(x / 128);
    n++;
  }
  return n;
}

function mergeHllProtos(rows: Value[][], fn: string): HllProto | null {
  const hs: HllProto[] = [];
  for (const r of rows) {
    if (r[0] === null) continue;
    const b = r[0] as Uint8Array;
    if (!isHllProto(b)) fail(`Invalid or incompatible sketch in ${fn}`);
    hs.push(readHllProto(b, fn));
  }
  if (hs.length === 0) return null;
  let numValues = 0n;
  let valueType = 0;
  for (const h of hs) {
    numValues += h.numValues;
    if (h.valueType !== 0) {
      if (valueType !== 0 && valueType !== h.valueType) fail(`Invalid or incompatible sketch in ${fn}`);
      valueType = h.valueType;
    }
  }
  const p = Math.min(...hs.map((h) => h.p));
  const sp = Math.min(...hs.map((h) => h.sp || h.p));
  if (hs.every((h) => h.sparse !== null)) {
    // Sparse sketches stay sparse at the smallest precisions (values downgraded to them) while small:
    // sparse data of 3/4 of the dense size or more turns into the dense form.
    const sparse = dedupeSparse(hs.flatMap((h) => (h.p === p && h.sp === sp ? h.sparse! : h.sparse!.map((v) => downgradeSparse(v, h.p, h.sp, p, sp)))), p, sp);
    if (sparseBytes(sparse) < 0.75 * (1 << p)) return { numValues, valueType, p, sp, sparse, data: null };
  }
  // Different precisions or a dense input: bucket-wise maximum at the smallest precision.
  const data = new Uint8Array(1 << p);
  for (const h of hs) {
    const d = denseOf(h, p);
    for (let i = 0; i < d.length; i++) if (d[i]! > data[i]!) data[i] = d[i]!;
  }
  return { numValues, valueType, p, sp, sparse: null, data };
}

/** Minimal protobuf writer (varint and length-delimited fields). */
class ProtoWriter {
  readonly bytes: number[] = [];
  varint(x: bigint | number): void {
    let v = BigInt.asUintN(64, BigInt(x));
    while (v >= 128n) {
      this.bytes.push(Number(v & 127n) | 128);
      v >>= 7n;
    }
    this.bytes.push(Number(v));
  }
  intField(field: number, x: bigint | number): void {
    this.varint(field << 3);
    this.varint(x);
  }
  bytesField(field: number, b: ArrayLike<number>): void {
    this.varint((field << 3) | 2);
    this.varint(b.length);
    for (let i = 0; i < b.length; i++) this.bytes.push(b[i]!);
  }
}

function writeHllProto(h: HllProto | null): Uint8Array | null {
  if (h === null) return null;
  const state = new ProtoWriter();
  if (h.sparse !== null && h.sparse.length > 0) state.intField(2, h.sparse.length);
  state.intField(3, h.p);
  state.intField(4, h.sp);
  if (h.data !== null) state.bytesField(5, h.data);
  else {
    const deltas = new ProtoWriter();
    let prev = 0;
    for (const v of h.sparse!) {
      deltas.varint(v - prev);
      prev = v;
    }
    state.bytesField(6, deltas.bytes);
  }
  const w = new ProtoWriter();
  w.intField(1, HLL_TYPE);
  w.intField(2, h.numValues);
  w.intField(3, 2);
  // Sketches without a value type come back as value type 8, as the reference writes them.
  w.intField(4, h.valueType || 8);
  w.bytesField(HLL_TYPE, state.bytes);
  return Uint8Array.from(w.bytes);
}

/**
 * The sketch's cardinality estimate, as ZetaSketch computes it: linear counting
 * over the 2^sp buckets while sparse; dense, linear counting over the 2^p
 * buckets up to the HLL++ paper's threshold for p, else the HLL estimate. (The
 * service subtracts an empirical bias from dense estimates up to 5 * 2^p; that
 * table is not reproduced here, so there estimates can differ from the
 * service's by up to about 1%.)
 */
function hllEstimate(h: HllProto | null): bigint {
  if (h === null) return 0n;
  if (h.sparse !== null) {
    const buckets = 2 ** h.sp;
    return BigInt(Math.round(buckets * Math.log(buckets / (buckets - h.sparse.length))));
  }
  const m = 2 ** h.p;
  let sum = 0;
  let zeros = 0;
  for (let i = 0; i < m; i++) {
    const r = h.data![i]!;
    sum += 2 ** -r;
    if (r === 0) zeros++;
  }
  const alpha = 0.7213 / (1 + 1.079 / m);
  const raw = (alpha * m * m) / sum;
  if (zeros > 0) {
    const linear = m * Math.log(m / zeros);
    // Up to the threshold as the service does; above it, up to 5 * 2^p where the service subtracts its
    // empirical bias table from the raw estimate, linear counting stands in for that correction.
    if (linear <= linearCountingThreshold(h.p) || raw <= 5 * m) return BigInt(Math.round(linear));
  }
  return BigInt(Math.round(raw));
}

// Linear counting thresholds of the HLL++ paper (Heule, Nunkesser, Hall 2013) for p = 4..18; 2.5 * 2^p beyond.
const LINEAR_COUNTING_THRESHOLD = [10, 20, 40, 80, 220, 400, 900, 1800, 3100, 6500, 11500, 20000, 50000, 120000, 350000];
function linearCountingThreshold(p: number): number {
  return LINEAR_COUNTING_THRESHOLD[p - 4] ?? (5 * 2 ** p) / 2;
}

// ---------------------------------------------------------------- registration

function precisionOf(rows: Value[][]): number {
  const given = rows.find((r) => r[1] !== undefined && r[1] !== null)?.[1];
  const p = given === undefined ? 15 : Number(given as bigint);
  if (!(p >= 10 && p <= 24)) fail('Argument 2 to HLL_COUNT.INIT must be between 10 and 24');
  return p;
}

export function registerHll(): void {
  const initSig = (t: string) =>
    asig([t, { type: 'INT64', optional: true }], 'BYTES', collect((rows) => writeHllProto(initSketch(t, rows.map((r) => r[0]!), precisionOf(rows)))));
  defineAggregate('HLL_COUNT.INIT', ['INT64', 'NUMERIC', 'BIGNUMERIC', 'STRING', 'BYTES'].map(initSig));
  defineAggregate('HLL_COUNT.MERGE', [asig(['BYTES'], 'INT64', collect((rows) => hllEstimate(mergeHllProtos(rows, 'HLL_COUNT.MERGE'))))]);
  defineAggregate('HLL_COUNT.MERGE_PARTIAL', [asig(['BYTES'], 'BYTES', collect((rows) => writeHllProto(mergeHllProtos(rows, 'HLL_COUNT.MERGE_PARTIAL'))))]);
  defineScalar('HLL_COUNT.EXTRACT', [
    sig(['BYTES'], 'INT64', rowKernel(T.INT64, (v) => (v[0] === null ? 0n : hllEstimate(readHllProto(v[0] as Uint8Array, 'HLL_COUNT.EXTRACT', 'Invalid sketch in HLL_COUNT.EXTRACT'))), false)),
  ]);
}
