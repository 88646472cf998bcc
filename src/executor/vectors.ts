// Vector helpers the operators share: a growable typed column (ColumnBuffer),
// batch take/slice/concat, NULL vectors and scatter (for lazy conditionals).
import type { SqlType } from '../types/types.js';
import { Interval, type Decimal, type Value } from '../types/values.js';
import {
  BATCH_SIZE,
  MAX_SAFE,
  concatVectors,
  decimalVector,
  getValue,
  intervalVector,
  type DecimalView,
  type IntervalView,
  layoutOf,
  sliceVector,
  takeVector,
  vectorFromValues,
  withNullRows,
  type Batch,
  type Vector,
} from '../types/vector.js';
import { valuesEqual } from './values-compare.js';
import { decimalOfWords, wordsEqual, wordsOfDecimalInto, type DecimalWidth } from '../types/decimal-words.js';
import { wordsArg } from '../functions/decimal-kernels.js';

/** Physical storage kinds of a ColumnBuffer (small ints so hot switches stay cheap). */
export const enum Phys {
  F64 = 0, // FLOAT64, TIME
  I64F = 1, // INT64-like held exactly in a Float64Array
  I64B = 2, // INT64-like needing BigInt64Array
  I32 = 3,
  BOOL = 4,
  VALUES = 5,
}

export function physOf(type: SqlType): Phys {
  switch (layoutOf(type)) {
    case 'f64':
      return Phys.F64;
    case 'i64':
      return Phys.I64F;
    case 'i32':
      return Phys.I32;
    case 'bool':
      return Phys.BOOL;
    default:
      return Phys.VALUES;
  }
}

const BIG_SAFE = BigInt(MAX_SAFE);

/** A NUMERIC / BIGNUMERIC key's words when it has them at its type's width (else its values are read). */
export function keyWords(v: Vector): DecimalView | null {
  const dec = v.decimal;
  if (dec === undefined) return null;
  return dec.width === (v.type.kind === 'NUMERIC' ? 4 : 8) ? dec : null;
}

/** Scratch words of a boxed value compared with stored words (equalsRow). */
const EQ_WORDS = new Uint32Array(8);

/**
 * A growable column in the vector layout: group keys, join build sides and
 * materialized inputs are kept as these (no per-row objects).
 */
export class ColumnBuffer {
  phys: Phys;
  length = 0;
  private cap: number;
  f64: Float64Array = new Float64Array(0);
  big: BigInt64Array = new BigInt64Array(0);
  i32: Int32Array = new Int32Array(0);
  u8: Uint8Array = new Uint8Array(0);
  vals: Value[] = [];
  nulls: Uint8Array | null = null;
  /**
   * NUMERIC / BIGNUMERIC rows as decimal words (`width` per row; phys stays
   * VALUES): keys stay unboxed from a scan's words to the result. Null once a
   * value without words arrives (then `vals` holds every row).
   */
  private dec: Uint32Array | null = null;
  private readonly width: DecimalWidth = 4;
  /** INTERVAL rows as their parts (phys stays VALUES): every interval has them, so this never falls back to values. */
  private iv: { months: Int32Array; days: Int32Array; micros: BigInt64Array } | null = null;

  constructor(
    readonly type: SqlType,
    initialCapacity = 1024,
  ) {
    this.phys = physOf(type);
    this.cap = Math.max(16, initialCapacity);
    if (type.kind === 'NUMERIC' || type.kind === 'BIGNUMERIC') {
      this.width = type.kind === 'NUMERIC' ? 4 : 8;
      this.dec = new Uint32Array(0);
    }
    if (type.kind === 'INTERVAL') this.iv = { months: new Int32Array(0), days: new Int32Array(0), micros: new BigInt64Array(0) };
    this.alloc(this.cap);
  }

  /** Whether the rows are held as decimal words. */
  get words(): DecimalView | null {
    return this.dec === null ? null : { words: this.dec, width: this.width };
  }

  /** Leaves the words for values (a value that has no words arrived). */
  private toValues(): void {
    const dec = this.dec!;
    this.dec = null;
    const vals = new Array<Value>(this.length);
    for (let i = 0; i < this.length; i++) vals[i] = this.nulls !== null && this.nulls[i] === 1 ? null : decimalOfWords(dec, i, this.width);
    this.vals = vals;
  }

  private setInterval(i: number, months: number, days: number, micros: bigint): void {
    const iv = this.iv!;
    iv.months[i] = months;
    iv.days[i] = days;
    iv.micros[i] = micros;
  }

  /** Row i's parts as a view of rows [start, end). */
  private intervalRows(start: number, end: number, copy: boolean): IntervalView {
    const { months, days, micros } = this.iv!;
    return copy
      ? { months: months.slice(start, end), days: days.slice(start, end), micros: micros.slice(start, end) }
      : { months: months.subarray(start, end), days: days.subarray(start, end), micros: micros.subarray(start, end) };
  }

  /** Writes row i's value x (a Decimal) as words; false (nothing written) when it has none. */
  private setDecimal(i: number, x: Decimal): boolean {
    if (wordsOfDecimalInto(x, this.width, this.dec!, i)) return true;
    this.toValues();
    return false;
  }

  private alloc(cap: number): void {
    switch (this.phys) {
      case Phys.F64:
      case Phys.I64F:
        this.f64 = growF64(this.f64, cap);
        break;
      case Phys.I64B:
        this.big = growBig(this.big, cap);
        break;
      case Phys.I32:
        this.i32 = growI32(this.i32, cap);
        break;
      case Phys.BOOL:
        this.u8 = growU8(this.u8, cap);
        break;
      default:
        if (this.dec !== null) {
          const d = new Uint32Array(cap * this.width);
          d.set(this.dec.subarray(0, Math.min(this.dec.length, d.length)));
          this.dec = d;
        }
        if (this.iv !== null) {
          const { months, days, micros } = this.iv;
          this.iv = { months: growI32(months, cap), days: growI32(days, cap), micros: growBig(micros, cap) };
        }
        break;
    }
    if (this.nulls) this.nulls = growU8(this.nulls, cap);
  }

  ensure(extra: number): void {
    const need = this.length + extra;
    if (need <= this.cap) return;
    let c = this.cap;
    while (c < need) c *= 2;
    this.cap = c;
    this.alloc(c);
  }

  /** Switches INT64 storage from doubles to bigints (a value beyond ±2^53 arrived). */
  private toBig(): void {
    const b = new BigInt64Array(this.cap);
    for (let i = 0; i < this.length; i++) b[i] = BigInt(this.f64[i]!);
    this.big = b;
    this.f64 = new Float64Array(0);
    this.phys = Phys.I64B;
  }

  /** Marks row i (< length + the room ensured) NULL. */
  setNull(i: number): void {
    this.markNull(i);
  }

  private markNull(i: number): void {
    if (!this.nulls) this.nulls = new Uint8Array(this.cap);
    this.nulls[i] = 1;
  }

  appendNull(): void {
    this.ensure(1);
    const i = this.length++;
    this.markNull(i);
    if (this.phys === Phys.VALUES) this.vals[i] = null;
  }

  /** Appends row `row` of `v`. */
  append(v: Vector, row: number): void {
    this.ensure(1);
    const i = this.length++;
    if (v.nulls !== null && v.nulls[row] === 1) {
      this.markNull(i);
      if (this.phys === Phys.VALUES) this.vals[i] = null;
      return;
    }
    if (this.dec !== null) {
      const vd = keyWords(v);
      if (vd !== null && vd.width === this.width) {
        const w = this.width;
        this.dec.set(vd.words.subarray(row * w, row * w + w), i * w);
        return;
      }
      if (this.setDecimal(i, getValue(v, row) as Decimal)) return;
    }
    if (this.iv !== null) {
      const src = v.interval;
      if (src) this.setInterval(i, src.months[row]!, src.days[row]!, src.micros[row]!);
      else {
        const x = (v.data as Value[])[row] as Interval;
        this.setInterval(i, x.months, x.days, x.micros);
      }
      return;
    }
    const d = v.data;
    switch (this.phys) {
      case Phys.F64:
        this.f64[i] = (d as Float64Array)[row]!;
        return;
      case Phys.I64F:
        if (d instanceof BigInt64Array) {
          const x = d[row]!;
          if (x > BIG_SAFE || x < -BIG_SAFE) {
            this.toBig();
            this.big[i] = x;
          } else this.f64[i] = Number(x);
        } else this.f64[i] = (d as Float64Array)[row]!;
        return;
      case Phys.I64B:
        this.big[i] = d instanceof BigInt64Array ? d[row]! : BigInt((d as Float64Array)[row]!);
        return;
      case Phys.I32:
        this.i32[i] = (d as Int32Array)[row]!;
        return;
      case Phys.BOOL:
        this.u8[i] = (d as Uint8Array)[row]!;
        return;
      default:
        this.vals[i] = (d as Value[])[row]!;
    }
  }

  /** Appends a scalar value (values.ts form). */
  appendValue(x: Value): void {
    if (x === null) {
      this.appendNull();
      return;
    }
    this.ensure(1);
    const i = this.length++;
    switch (this.phys) {
      case Phys.F64:
        this.f64[i] = x as number;
        return;
      case Phys.I64F: {
        const b = x as bigint;
        if (b > BIG_SAFE || b < -BIG_SAFE) {
          this.toBig();
          this.big[i] = b;
        } else this.f64[i] = Number(b);
        return;
      }
      case Phys.I64B:
        this.big[i] = x as bigint;
        return;
      case Phys.I32:
        this.i32[i] = x as number;
        return;
      case Phys.BOOL:
        this.u8[i] = x === true ? 1 : 0;
        return;
      default:
        if (this.dec !== null && this.setDecimal(i, x as Decimal)) return;
        if (this.iv !== null) {
          const y = x as Interval;
          this.setInterval(i, y.months, y.days, y.micros);
          return;
        }
        this.vals[i] = x;
    }
  }

  /** Appends every row of `v` (bulk copy for the typed layouts). */
  appendVector(v: Vector): void {
    const n = v.length;
    if (n === 0) return;
    const vd = this.dec !== null ? keyWords(v) : null;
    if (vd !== null && vd.width === this.width) {
      this.ensure(n);
      this.dec!.set(vd.words.subarray(0, n * this.width), this.length * this.width);
      if (v.nulls) {
        if (!this.nulls) this.nulls = new Uint8Array(this.cap);
        this.nulls.set(v.nulls.subarray(0, n), this.length);
      }
      this.length += n;
      return;
    }
    const d = v.data;
    const fast =
      ((this.phys === Phys.F64 || this.phys === Phys.I64F) && d instanceof Float64Array) ||
      (this.phys === Phys.I32 && d instanceof Int32Array) ||
      (this.phys === Phys.BOOL && d instanceof Uint8Array) ||
      (this.phys === Phys.I64B && d instanceof BigInt64Array);
    if (!fast) {
      for (let r = 0; r < n; r++) this.append(v, r);
      return;
    }
    this.ensure(n);
    const at = this.length;
    switch (this.phys) {
      case Phys.F64:
      case Phys.I64F:
        this.f64.set(d as Float64Array, at);
        break;
      case Phys.I64B:
        this.big.set(d as BigInt64Array, at);
        break;
      case Phys.I32:
        this.i32.set(d as Int32Array, at);
        break;
      default:
        this.u8.set(d as Uint8Array, at);
    }
    if (v.nulls) {
      if (!this.nulls) this.nulls = new Uint8Array(this.cap);
      this.nulls.set(v.nulls, at);
    }
    this.length += n;
  }

  /** Appends rows sel[start..end) of `v` (a typed loop for the typed layouts). */
  appendTake(v: Vector, sel: Int32Array, start: number, end: number): void {
    const n = end - start;
    if (n <= 0) return;
    const d = v.data;
    const at = this.length;
    if ((this.phys === Phys.F64 || this.phys === Phys.I64F) && d instanceof Float64Array) {
      this.ensure(n);
      gatherF64Into(this.f64, at, d, sel, start, end);
    } else if (this.phys === Phys.I32 && d instanceof Int32Array) {
      this.ensure(n);
      gatherI32Into(this.i32, at, d, sel, start, end);
    } else {
      for (let j = start; j < end; j++) this.append(v, sel[j]!);
      return;
    }
    if (v.nulls) {
      const vn = v.nulls;
      for (let j = start; j < end; j++) if (vn[sel[j]!] === 1) this.markNull(at + j - start);
    }
    this.length += n;
  }

  /** The rows as a vector over this buffer's memory (no copy): valid until the next append or clear(). */
  view(): Vector {
    const n = this.length;
    const nulls = this.nulls && anyNull(this.nulls, 0, n) ? this.nulls.subarray(0, n) : null;
    let data: Vector['data'];
    switch (this.phys) {
      case Phys.F64:
      case Phys.I64F:
        data = this.f64.subarray(0, n);
        break;
      case Phys.I64B:
        data = this.big.subarray(0, n);
        break;
      case Phys.I32:
        data = this.i32.subarray(0, n);
        break;
      case Phys.BOOL:
        data = this.u8.subarray(0, n);
        break;
      default:
        if (this.dec !== null) return decimalVector(this.type, n, nulls, { words: this.dec.subarray(0, n * this.width), width: this.width });
        if (this.iv !== null) return intervalVector(this.type, n, nulls, this.intervalRows(0, n, false));
        data = this.vals.length === n ? this.vals : this.vals.slice(0, n);
    }
    return { type: this.type, length: n, data, nulls };
  }

  /** Empties the buffer, keeping its typed memory. */
  clear(): void {
    if (this.nulls) this.nulls.fill(0, 0, this.length);
    this.vals = [];
    this.length = 0;
  }

  /** Bytes held (typed buffers; value-layout cells counted at VALUE_BYTES each). */
  bytes(): number {
    const nulls = this.nulls ? this.nulls.byteLength : 0;
    const dec = this.dec !== null ? this.dec.byteLength : 0;
    const iv = this.iv !== null ? this.iv.months.byteLength * 4 : 0;
    return this.f64.byteLength + this.big.byteLength + this.i32.byteLength + this.u8.byteLength + this.vals.length * VALUE_BYTES + dec + iv + nulls;
  }

  isNull(i: number): boolean {
    return this.nulls !== null && this.nulls[i] === 1;
  }

  get(i: number): Value {
    if (this.nulls !== null && this.nulls[i] === 1) return null;
    switch (this.phys) {
      case Phys.F64:
        return this.f64[i]!;
      case Phys.I64F:
        return BigInt(this.f64[i]!);
      case Phys.I64B:
        return this.big[i]!;
      case Phys.I32:
        return this.i32[i]!;
      case Phys.BOOL:
        return this.u8[i] === 1;
      default:
        if (this.iv !== null) return new Interval(this.iv.months[i]!, this.iv.days[i]!, this.iv.micros[i]!);
        return this.dec !== null ? decimalOfWords(this.dec, i, this.width) : this.vals[i]!;
    }
  }

  /**
   * Grouping equality of stored row i and row `row` of v: NULL equals NULL,
   * NaN equals NaN, -0 equals +0.
   */
  equalsRow(i: number, v: Vector, row: number): boolean {
    const an = this.nulls !== null && this.nulls[i] === 1;
    const bn = v.nulls !== null && v.nulls[row] === 1;
    if (an || bn) return an === bn;
    if (this.dec !== null) {
      const vd = keyWords(v);
      if (vd !== null && vd.width === this.width) return wordsEqual(this.dec, i, vd.words, row, this.width);
      // A boxed value equals a stored one only if it has the same words.
      return wordsOfDecimalInto(getValue(v, row) as Decimal, this.width, EQ_WORDS, 0) && wordsEqual(this.dec, i, EQ_WORDS, 0, this.width);
    }
    if (this.iv !== null) {
      const { months, days, micros } = this.iv;
      const src = v.interval;
      if (src) return intervalPartsEqual(months[i]!, days[i]!, micros[i]!, src.months[row]!, src.days[row]!, src.micros[row]!);
      const x = (v.data as Value[])[row] as Interval;
      return intervalPartsEqual(months[i]!, days[i]!, micros[i]!, x.months, x.days, x.micros);
    }
    const d = v.data;
    switch (this.phys) {
      case Phys.F64: {
        const a = this.f64[i]!;
        const b = (d as Float64Array)[row]!;
        return a === b || (a !== a && b !== b);
      }
      case Phys.I64F:
        return d instanceof BigInt64Array ? BigInt(this.f64[i]!) === d[row] : this.f64[i] === (d as Float64Array)[row];
      case Phys.I64B:
        return d instanceof BigInt64Array ? this.big[i] === d[row] : this.big[i] === BigInt((d as Float64Array)[row]!);
      case Phys.I32:
        return this.i32[i] === (d as Int32Array)[row];
      case Phys.BOOL:
        return this.u8[i] === (d as Uint8Array)[row];
      default:
        return valuesEqual(this.vals[i]!, (d as Value[])[row]!, this.type);
    }
  }

  /**
   * The buffered rows as a vector (copies, so the buffer may keep growing;
   * `view`: numbers as a view of the buffer, for a buffer never written again).
   */
  toVector(start = 0, end = this.length, view = false): Vector {
    const n = end - start;
    const nulls = this.nulls ? anyNull(this.nulls, start, end) ? this.nulls.slice(start, end) : null : null;
    let data: Vector['data'];
    switch (this.phys) {
      case Phys.F64:
      case Phys.I64F:
        data = view ? this.f64.subarray(start, end) : this.f64.slice(start, end);
        break;
      case Phys.I64B:
        data = this.big.slice(start, end);
        break;
      case Phys.I32:
        data = this.i32.slice(start, end);
        break;
      case Phys.BOOL:
        data = this.u8.slice(start, end);
        break;
      default:
        if (this.dec !== null) return decimalVector(this.type, n, nulls, { words: this.dec.slice(start * this.width, end * this.width), width: this.width });
        if (this.iv !== null) return intervalVector(this.type, n, nulls, this.intervalRows(start, end, true));
        data = this.vals.slice(start, end);
    }
    return { type: this.type, length: n, data, nulls };
  }
}

/** Grouping equality of two intervals by their parts: equal after 1 month = 30 days, 1 day = 24 h (as valuesEqual). */
export function intervalPartsEqual(m1: number, d1: number, u1: bigint, m2: number, d2: number, u2: bigint): boolean {
  if (m1 === m2 && d1 === d2) return u1 === u2;
  return BigInt((m1 - m2) * 30 + (d1 - d2)) * 86_400_000_000n === u2 - u1;
}

function anyNull(nulls: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (nulls[i] === 1) return true;
  return false;
}

function gatherF64Into(out: Float64Array, at: number, src: Float64Array, sel: Int32Array, start: number, end: number): void {
  for (let j = start; j < end; j++) out[at++] = src[sel[j]!]!;
}

function gatherI32Into(out: Int32Array, at: number, src: Int32Array, sel: Int32Array, start: number, end: number): void {
  for (let j = start; j < end; j++) out[at++] = src[sel[j]!]!;
}

export function growF64(a: Float64Array, cap: number): Float64Array {
  const b = new Float64Array(cap);
  b.set(a.subarray(0, Math.min(a.length, cap)));
  return b;
}
function growBig(a: BigInt64Array, cap: number): BigInt64Array {
  const b = new BigInt64Array(cap);
  b.set(a.subarray(0, Math.min(a.length, cap)));
  return b;
}
function growI32(a: Int32Array, cap: number): Int32Array {
  const b = new Int32Array(cap);
  b.set(a.subarray(0, Math.min(a.length, cap)));
  return b;
}
export function growU8(a: Uint8Array, cap: number): Uint8Array {
  const b = new Uint8Array(cap);
  b.set(a.subarray(0, Math.min(a.length, cap)));
  return b;
}
export function growInt32(a: Int32Array, cap: number): Int32Array {
  return growI32(a, cap);
}

// ---------------------------------------------------------------- vectors

export function nullVector(type: SqlType, n: number): Vector {
  const nulls = new Uint8Array(n).fill(1);
  switch (physOf(type)) {
    case Phys.F64:
    case Phys.I64F:
      return { type, length: n, data: new Float64Array(n), nulls };
    case Phys.I32:
      return { type, length: n, data: new Int32Array(n), nulls };
    case Phys.BOOL:
      return { type, length: n, data: new Uint8Array(n), nulls };
    default:
      return { type, length: n, data: new Array<Value>(n).fill(null), nulls };
  }
}



/** Builds the vector of `n` rows where rows sel[k] take values[k] (scatter). Unset rows are NULL. */
export function scatterVectors(type: SqlType, n: number, parts: readonly { sel: Int32Array; count: number; vec: Vector }[]): Vector {
  const fast = scatterTyped(type, n, parts) ?? scatterWords(type, n, parts);
  if (fast) return fast;
  const buf = new ColumnBuffer(type, n);
  // Decide the physical kind first so a BigInt part upgrades the whole result.
  const order = new Int32Array(n).fill(-1);
  const at = new Int32Array(n);
  for (let p = 0; p < parts.length; p++) {
    const { sel, count } = parts[p]!;
    for (let k = 0; k < count; k++) {
      order[sel[k]!] = p;
      at[sel[k]!] = k;
    }
  }
  for (let r = 0; r < n; r++) {
    const p = order[r]!;
    if (p < 0) buf.appendNull();
    else buf.append(parts[p]!.vec, at[r]!);
  }
  return buf.toVector();
}

/** scatterVectors of NUMERIC / BIGNUMERIC parts that are all words (or one value each, a literal's): the result is words too. */
function scatterWords(type: SqlType, n: number, parts: readonly { sel: Int32Array; count: number; vec: Vector }[]): Vector | null {
  if (type.kind !== 'NUMERIC' && type.kind !== 'BIGNUMERIC') return null;
  const width = type.kind === 'NUMERIC' ? 4 : 8;
  const src: { words: Uint32Array; step: 0 | 1 }[] = [];
  for (const p of parts) {
    // A part of only NULLs (a NULL literal's branch) has no words to give.
    const allNull = p.vec.nulls !== null && p.vec.nulls.subarray(0, p.count).every((x) => x === 1);
    const w = allNull ? { words: new Uint32Array(width), step: 0 as const } : wordsArg(p.vec, p.count);
    if (!w) return null;
    src.push(w);
  }
  const out = new Uint32Array(n * width);
  // Rows no part covers are NULL.
  const nulls = new Uint8Array(n).fill(1);
  for (let p = 0; p < parts.length; p++) {
    const { sel, count, vec } = parts[p]!;
    const { words, step } = src[p]!;
    const vn = vec.nulls;
    for (let k = 0; k < count; k++) {
      const r = sel[k]!;
      if (vn !== null && vn[k] === 1) continue;
      nulls[r] = 0;
      out.set(words.subarray(step * k * width, step * k * width + width), r * width);
    }
  }
  return decimalVector(type, n, nulls.includes(1) ? nulls : null, { words: out, width });
}

/** scatterVectors when every part shares the result's typed-array class (the common CASE shape). */
function scatterTyped(type: SqlType, n: number, parts: readonly { sel: Int32Array; count: number; vec: Vector }[]): Vector | null {
  const ph = physOf(type);
  let Ctor: (new (n: number) => Float64Array | Int32Array | Uint8Array) | null = null;
  if (ph === Phys.F64 || ph === Phys.I64F) Ctor = Float64Array;
  else if (ph === Phys.I32) Ctor = Int32Array;
  else if (ph === Phys.BOOL) Ctor = Uint8Array;
  if (Ctor === null) return null;
  for (const p of parts) if (!(p.vec.data instanceof Ctor)) return null;
  const out = new Ctor(n);
  // Rows no part covers are NULL.
  const nulls = new Uint8Array(n).fill(1);
  let anyNull = false;
  for (const { sel, count, vec } of parts) {
    const d = vec.data as Float64Array;
    const vn = vec.nulls;
    for (let k = 0; k < count; k++) {
      const r = sel[k]!;
      out[r] = d[k]!;
      nulls[r] = vn === null ? 0 : vn[k]!;
    }
  }
  for (let i = 0; i < n; i++) if (nulls[i] === 1) {
    anyNull = true;
    break;
  }
  return { type, length: n, data: out, nulls: anyNull ? nulls : null };
}

// ---------------------------------------------------------------- batches

export function emptyBatchOf(types: readonly SqlType[]): Batch {
  return { length: 0, columns: types.map((t) => vectorFromValues(t, [])) };
}

export function takeBatch(b: Batch, sel: ArrayLike<number>, count = sel.length): Batch {
  return { length: count, columns: b.columns.map((c) => takeVector(c, sel, count)) };
}

export function sliceBatch(b: Batch, start: number, end: number): Batch {
  if (start === 0 && end === b.length) return b;
  return { length: end - start, columns: b.columns.map((c) => sliceVector(c, start, end)) };
}

/** Concatenates batches into one (materialization for sort, window, join build sides). */
export function concatBatches(types: readonly SqlType[], batches: readonly Batch[]): Batch {
  if (batches.length === 1) return batches[0]!;
  const length = batches.reduce((n, b) => n + b.length, 0);
  if (batches.length === 0) return emptyBatchOf(types);
  return { length, columns: types.map((t, c) => concatColumn(t, batches.map((b) => b.columns[c]!))) };
}

type Typed = Float64Array | Int32Array | Uint8Array;

/**
 * concatVectors without copies where possible: parts that are consecutive
 * views of one buffer (a scan's slices of a stored chunk) become one view;
 * other typed parts of one array type are copied once, with no per-value work.
 */
export function concatColumn(type: SqlType, parts: readonly Vector[]): Vector {
  // Nested views, decimal words, interval parts and range sides concatenate as such (concatVectors), never boxed here.
  const p0 = parts[0];
  if (p0?.nested || p0?.decimal || p0?.interval || p0?.range) return concatVectors(type, parts);
  const d0 = parts[0]?.data;
  if (!(d0 instanceof Float64Array || d0 instanceof Int32Array || d0 instanceof Uint8Array) || layoutOf(type) === 'values') return concatVectors(type, parts);
  const Ctor = d0.constructor as { new (n: number): Typed; new (b: ArrayBufferLike, off: number, n: number): Typed };
  let total = 0;
  let views = true;
  let anyNulls = false;
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    const d = p.data;
    if (d.constructor !== Ctor) return concatVectors(type, parts);
    if (p.nulls !== null) anyNulls = true;
    if (i > 0 && views) {
      const q = parts[i - 1]!;
      const dq = q.data as Typed;
      const td = d as Typed;
      views =
        td.buffer === dq.buffer &&
        td.byteOffset === dq.byteOffset + q.length * td.BYTES_PER_ELEMENT &&
        (p.nulls === null) === (q.nulls === null) &&
        (p.nulls === null || (p.nulls.buffer === q.nulls!.buffer && p.nulls.byteOffset === q.nulls!.byteOffset + q.length));
    }
    total += p.length;
  }
  if (views) {
    const data = new Ctor(d0.buffer, d0.byteOffset, total);
    const n0 = parts[0]!.nulls;
    const nulls = n0 === null ? null : new Uint8Array(n0.buffer, n0.byteOffset, total);
    return { type, length: total, data, nulls };
  }
  const data = new Ctor(total);
  const nulls = anyNulls ? new Uint8Array(total) : null;
  let k = 0;
  for (const p of parts) {
    const d = p.data as Typed;
    data.set(d.length === p.length ? d : d.subarray(0, p.length), k);
    if (p.nulls !== null) nulls!.set(p.nulls.length === p.length ? p.nulls : p.nulls.subarray(0, p.length), k);
    k += p.length;
  }
  return { type, length: total, data, nulls };
}

/** Splits a large batch into BATCH_SIZE slices. */
export function* rebatch(b: Batch, size = BATCH_SIZE): Generator<Batch> {
  if (b.length <= size) {
    if (b.length > 0) yield b;
    return;
  }
  for (let s = 0; s < b.length; s += size) yield sliceBatch(b, s, Math.min(b.length, s + size));
}

/** Row indexes where a BOOL vector is TRUE (NULL and FALSE drop). */
export function selectTrue(v: Vector, n: number, out?: Int32Array): { sel: Int32Array; count: number } {
  const sel = out ?? new Int32Array(n);
  const d = v.data as Uint8Array;
  const nulls = v.nulls;
  let c = 0;
  if (nulls === null) {
    for (let i = 0; i < n; i++) if (d[i] === 1) sel[c++] = i;
  } else {
    for (let i = 0; i < n; i++) if (d[i] === 1 && nulls[i] === 0) sel[c++] = i;
  }
  return { sel, count: c };
}



/** Collects batches and re-emits them as BATCH_SIZE batches (after selective operators). */
export class BatchCoalescer {
  private pending: Batch[] = [];
  private rows = 0;
  constructor(private readonly types: readonly SqlType[]) {}

  /** Whether push() of an n-row batch would hand that batch itself on, keeping no reference. */
  passesThrough(n: number): boolean {
    return this.rows === 0 && n >= BATCH_SIZE / 2 && n <= BATCH_SIZE;
  }

  /** Adds a batch; returns batches ready to emit (never more than BATCH_SIZE rows). */
  push(b: Batch): Batch[] {
    if (b.length === 0) return [];
    if (this.passesThrough(b.length)) return [b];
    this.pending.push(b);
    this.rows += b.length;
    if (this.rows < BATCH_SIZE) return [];
    const all = concatBatches(this.types, this.pending);
    const full = all.length - (all.length % BATCH_SIZE);
    const out: Batch[] = [];
    for (let s = 0; s < full; s += BATCH_SIZE) out.push(sliceBatch(all, s, s + BATCH_SIZE));
    this.pending = full < all.length ? [sliceBatch(all, full, all.length)] : [];
    this.rows = all.length - full;
    return out;
  }

  drain(): Batch[] {
    if (this.rows === 0) return [];
    const all = concatBatches(this.types, this.pending);
    this.pending = [];
    this.rows = 0;
    return [...rebatch(all)];
  }
}

/** Like takeVector, but a negative index yields NULL (window navigation, outer padding). */
export function takeOrNull(v: Vector, sel: Int32Array, count = sel.length): Vector {
  let anyNeg = false;
  for (let i = 0; i < count; i++) if (sel[i]! < 0) {
    anyNeg = true;
    break;
  }
  if (!anyNeg) return takeVector(v, sel, count);
  const safeSel = new Int32Array(count);
  const nulls = new Uint8Array(count);
  for (let i = 0; i < count; i++) {
    const s = sel[i]!;
    if (s < 0) nulls[i] = 1;
    else {
      safeSel[i] = s;
      if (v.nulls !== null && v.nulls[s] === 1) nulls[i] = 1;
    }
  }
  const t = v.length === 0 ? nullVector(v.type, count) : takeVector(v, safeSel, count);
  // A view (nested, decimal words, interval parts, range sides) keeps its layout: reading `data` would box it.
  if (t.nested || t.decimal || t.interval || t.range) return withNullRows(t, nulls);
  if (Array.isArray(t.data)) for (let i = 0; i < count; i++) if (nulls[i] === 1) (t.data as Value[])[i] = null;
  return { type: v.type, length: count, data: t.data, nulls };
}

/** What one value-layout cell (a string, a Decimal, an array...) is counted as in memory reservations: a rough mean, pointer included. */
export const VALUE_BYTES = 48;

/** Bytes a vector holds (typed data, NULL flags; value-layout cells at VALUE_BYTES each): what operators reserve for what they keep. */
export function vectorBytes(v: Vector): number {
  if (v.nested) return nestedBytes(v, v.nested);
  // Decimal words: 16 / 32 bytes a row (reading `data` would box them).
  if (v.decimal) return v.length * v.decimal.width * 4 + (v.nulls ? v.nulls.byteLength : 0);
  // Interval parts (16 bytes a row) and range sides, counted without boxing them.
  if (v.interval) return v.length * 16 + (v.nulls ? v.nulls.byteLength : 0);
  if (v.range) return vectorBytes(v.range.start) + vectorBytes(v.range.end) + (v.nulls ? v.nulls.byteLength : 0);
  const d = v.data as ArrayLike<unknown> & { byteLength?: number };
  return (d.byteLength ?? v.length * VALUE_BYTES) + (v.nulls ? v.nulls.byteLength : 0);
}

/**
 * vectorBytes of a nested view, from its layout (reading `data` would box
 * it): offsets and leaves; rows taken from a shared source count their share
 * of it.
 */
function nestedBytes(v: Vector, view: NonNullable<Vector['nested']>): number {
  let n = v.nulls ? v.nulls.byteLength : 0;
  if (view.offsets && view.child) n += view.offsets.byteLength + vectorBytes(view.child);
  if (view.fields) for (const f of view.fields) n += vectorBytes(f);
  if (view.at && view.source) n += view.at.byteLength + (vectorBytes(view.source) * v.length) / Math.max(1, view.source.length);
  if (view.parts) for (const p of view.parts) n += vectorBytes(p);
  return Math.ceil(n);
}

/** vectorBytes over a batch's columns. */
export function batchBytes(b: Batch): number {
  let n = 0;
  for (const c of b.columns) n += vectorBytes(c);
  return n;
}
