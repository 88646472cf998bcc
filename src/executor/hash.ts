// Typed per-column hashing of rows and the open-addressing group table keyed
// by (hash, row). Keys are never concatenated into strings: each key column is
// hashed with a type-specific loop and combined; equality is checked column by
// column against ColumnBuffer-stored keys.
import type { SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import type { Vector } from '../types/vector.js';
import { hashWordsAt } from '../types/decimal-words.js';
import { intervalKeys } from '../functions/interval-range-kernels.js';
import { ColumnBuffer, Phys, physOf, growInt32, keyWords } from './vectors.js';
import { NULL_HASH, combineHash, hashBigint, hashDouble, hashValue, mix32 } from './values-compare.js';

/** Most slots of a dense group index (512 MB): beyond, even 4 slots per group is too much at once. */
const DENSE_MAX = 1 << 27;

/** Fills `out[0..n)` with the combined hash of the key columns of each row. */
export function hashRows(cols: readonly Vector[], n: number, out: Int32Array): void {
  for (let c = 0; c < cols.length; c++) hashColumnInto(cols[c]!, n, out, c === 0);
  if (cols.length === 0) out.fill(0x12345, 0, n);
}

function hashColumnInto(v: Vector, n: number, out: Int32Array, first: boolean): void {
  const nulls = v.nulls;
  const dec = keyWords(v);
  if (dec !== null) {
    // NUMERIC / BIGNUMERIC words hashed as they are (hashValue hashes a boxed value's words alike).
    const { words, width } = dec;
    for (let i = 0; i < n; i++) {
      const h = nulls !== null && nulls[i] === 1 ? NULL_HASH : hashWordsAt(words, i, width);
      out[i] = first ? h : combineHash(out[i]!, h);
    }
    return;
  }
  if (v.interval) {
    // INTERVAL parts hashed by their normalized key, as hashValue hashes a boxed interval (mix32(hashBigint(key))).
    const keys = intervalKeys(v, n);
    for (let i = 0; i < n; i++) {
      const h = nulls !== null && nulls[i] === 1 ? NULL_HASH : mix32(keys instanceof Float64Array ? hashDouble(keys[i]!) : hashBigint(keys[i]!));
      out[i] = first ? h : combineHash(out[i]!, h);
    }
    return;
  }
  const d = v.data;
  const ph = physOf(v.type);
  for (let i = 0; i < n; i++) {
    let h: number;
    if (nulls !== null && nulls[i] === 1) h = NULL_HASH;
    else {
      switch (ph) {
        case Phys.F64:
        case Phys.I64F:
          h = d instanceof BigInt64Array ? hashBigint(d[i]!) : hashDouble((d as Float64Array)[i]!);
          break;
        case Phys.I32:
          // DATE: hashed as a double so DATE keys agree with nothing else by accident but stay cheap.
          h = mix32((d as Int32Array)[i]! ^ 0x5bd1e995);
          break;
        case Phys.BOOL:
          h = (d as Uint8Array)[i] === 1 ? 0x3c6ef372 : 0x1f83d9ab;
          break;
        default:
          h = hashValue((d as Value[])[i]!, v.type);
      }
    }
    out[i] = first ? h : combineHash(out[i]!, h);
  }
}

/**
 * Open-addressing hash table of distinct key tuples. Each bucket is two ints,
 * group id + 1 (0 = empty) and that group's hash, so a probe compares hashes
 * within one cache line before touching keys; groups also keep their hash
 * so resizing never rehashes keys.
 */
export class GroupTable {
  readonly keys: ColumnBuffer[];
  private slots: Int32Array;
  private mask: number;
  private groupHashes: Int32Array = new Int32Array(1024);
  size = 0;
  private scratch = new Int32Array(0);
  /**
   * Direct-indexed mode for one numeric key whose values are all integers of
   * modest range (ids, MOD buckets): `dense[key - denseLo]` = group id + 1, no
   * hashing and mostly sequential access. `slots`/`groupHashes` are left empty
   * until the first key that does not fit, when `toHashed()` builds them.
   * 0 = possible (table still empty or dense), 1 = active, 2 = hashed for good.
   */
  private denseState = 0;
  private dense: Int32Array = new Int32Array(0);
  private denseLo = 0;
  /** While dense: the NULL key's group id + 1 (0: none yet). NULL has no index slot, so a NULL key keeps the table dense. */
  private denseNull = 0;
  /** insertDense's group count in and out (see there why not a returned object). */
  private readonly sizeBox = new Int32Array(1);
  /**
   * While hashed, for one FLOAT64-layout key that never saw NULL: the range of
   * the keys so far and whether all are integers. Keys spread over a range
   * wider than the first batch allows (ids, hash buckets: 5M distinct keys in
   * [0, 5M) arrive in random order) go back to the dense index once the range
   * is at most 4 × groups (the index then costs less memory than the table).
   */
  private denseCandidate = true;
  private keyLo = Infinity;
  private keyHi = -Infinity;

  constructor(readonly keyTypes: readonly SqlType[], capacity = 1024) {
    this.keys = keyTypes.map((t) => new ColumnBuffer(t, capacity));
    let cap = 16;
    while (cap < capacity * 2) cap *= 2;
    this.slots = new Int32Array(cap * 2);
    this.mask = cap - 1;
  }

  /**
   * Starts direct-indexed over keys [lo, hi] with room for `groups` keys,
   * for a range known before reading (row-group statistics): no hashing
   * while the keys are spread, no re-index later. One FLOAT64-layout key,
   * empty table; keys outside still work (the index grows, or the table
   * hashes as usual). False when the range is not a dense index's.
   */
  presetDense(lo: number, hi: number, groups: number): boolean {
    const k0 = this.keys[0];
    if (this.keys.length !== 1 || this.size !== 0 || this.denseState !== 0 || (k0!.phys !== Phys.F64 && k0!.phys !== Phys.I64F)) return false;
    if (!Number.isInteger(lo) || !Number.isInteger(hi) || hi < lo || hi - lo + 1 > DENSE_MAX) return false;
    this.dense = new Int32Array(hi - lo + 1);
    this.denseLo = lo;
    this.denseState = 1;
    k0!.ensure(groups);
    return true;
  }

  /** Bytes the table holds (index, hashes, stored keys): what its aggregate reserves. */
  bytes(): number {
    let n = this.slots.byteLength + this.groupHashes.byteLength + this.dense.byteLength + this.scratch.byteLength;
    for (const k of this.keys) n += k.bytes();
    return n;
  }

  private hashesFor(cols: readonly Vector[], n: number): Int32Array {
    if (this.scratch.length < n) this.scratch = new Int32Array(Math.max(n, 4096));
    hashRows(cols, n, this.scratch);
    return this.scratch;
  }

  private grow(): void {
    const cap = this.slots.length; // slots hold 2 ints per bucket: doubling buckets = this length
    const slots = new Int32Array(cap * 2);
    const mask = cap - 1;
    const gh = this.groupHashes;
    for (let g = 0; g < this.size; g++) {
      const h = gh[g]!;
      let s = mix32(h) & mask;
      while (slots[2 * s] !== 0) s = (s + 1) & mask;
      slots[2 * s] = g + 1;
      slots[2 * s + 1] = h;
    }
    this.slots = slots;
    this.mask = mask;
  }

  private keyEquals(g: number, cols: readonly Vector[], row: number): boolean {
    const keys = this.keys;
    for (let c = 0; c < keys.length; c++) if (!keys[c]!.equalsRow(g, cols[c]!, row)) return false;
    return true;
  }

  /** Room for `extra` more groups without resizing inside the row loop. */
  private reserve(extra: number): void {
    while ((this.size + extra) * 2 >= this.mask + 1) this.grow();
    if (this.size + extra > this.groupHashes.length) {
      let c = this.groupHashes.length;
      while (c < this.size + extra) c *= 2;
      this.groupHashes = growInt32(this.groupHashes, c);
    }
  }

  /**
   * findOrInsert, then the rows that created a new entry into `sel`, in input
   * order (each new tuple's first row: new entries are numbered as their first
   * rows come). Returns how many. DISTINCT, UNION DISTINCT and dedupes use it.
   */
  insertFresh(cols: readonly Vector[], n: number, ids: Int32Array, sel: Int32Array): number {
    let next = this.size;
    this.findOrInsert(cols, n, ids);
    let c = 0;
    for (let j = 0; j < n; j++) if (ids[j] === next) {
      sel[c++] = j;
      next++;
    }
    return c;
  }

  /** Group id of every row, inserting new key tuples. Returns how many groups were added. */
  findOrInsert(cols: readonly Vector[], n: number, out: Int32Array): number {
    const before = this.size;
    const keys = this.keys;
    const k0 = keys.length === 1 ? keys[0]! : null;
    const f64Col = k0 !== null && (k0.phys === Phys.F64 || k0.phys === Phys.I64F) && cols[0]!.data instanceof Float64Array;
    const f64Fast = f64Col && cols[0]!.nulls === null;
    if (this.denseState !== 2) {
      if (f64Col && (this.denseState === 1 || this.size === 0)) {
        const d = cols[0]!.data as Float64Array;
        const nulls = cols[0]!.nulls;
        k0!.ensure(n);
        // One pass while every key lands inside the current index; only a key
        // outside it (or a fraction) costs a range scan of the batch, then the
        // insert resumes where it stopped (group ids survive the index growing).
        let done = this.denseState === 1 ? this.insertDenseRows(d, nulls, 0, n, out) : 0;
        if (done < n && this.fitDense(d, nulls, n)) {
          this.denseState = 1;
          done = this.insertDenseRows(d, nulls, done, n, out);
        }
        k0!.length = this.size;
        if (done === n) return this.size - before;
      }
      // Rows inserted densely before a misfit keep their group ids: the hashed
      // pass below finds them again.
      this.toHashed();
    }
    const hashes = this.hashesFor(cols, n);
    this.reserve(n);
    if (f64Fast) {
      k0.ensure(n);
      this.size = insertF64(cols[0]!.data as Float64Array, n, hashes, out, this.slots, this.mask, this.groupHashes, k0.f64, k0.nulls, this.size);
      k0.length = this.size;
      if (this.denseCandidate && this.size > before) this.backToDense(before);
      return this.size - before;
    }
    this.denseCandidate = false;
    const nk = keys.length;
    const slots = this.slots;
    const mask = this.mask;
    const gh = this.groupHashes;
    if (nk > 1 && allF64(keys, cols)) {
      for (const k of keys) k.ensure(n);
      this.size = insertF64Multi(cols.map((c) => c.data as Float64Array), n, hashes, out, slots, mask, gh, keys.map((k) => k.f64), keys.map((k) => k.nulls), this.size);
      for (const k of keys) k.length = this.size;
      return this.size - before;
    }
    for (let i = 0; i < n; i++) {
      const h = hashes[i]!;
      let s = mix32(h) & mask;
      let g = -1;
      for (;;) {
        const e = slots[2 * s]!;
        if (e === 0) break;
        if (slots[2 * s + 1] === h && this.keyEquals(e - 1, cols, i)) {
          g = e - 1;
          break;
        }
        s = (s + 1) & mask;
      }
      if (g < 0) {
        g = this.size++;
        gh[g] = h;
        for (let c = 0; c < nk; c++) keys[c]!.append(cols[c]!, i);
        slots[2 * s] = g + 1;
        slots[2 * s + 1] = h;
      }
      out[i] = g;
    }
    return this.size - before;
  }

  /**
   * insertDense over rows [from, n), NULL keys into their own group; returns
   * the first row whose key is not in the index (n: all were).
   */
  private insertDenseRows(d: Float64Array, nulls: Uint8Array | null, from: number, n: number, out: Int32Array): number {
    const k0 = this.keys[0]!;
    const box = this.sizeBox;
    box[0] = this.size;
    let i = from;
    while (i < n) {
      let end = i;
      if (nulls === null) end = n;
      else while (end < n && nulls[end] === 0) end++;
      const done = insertDense(d, i, end, out, this.dense, this.denseLo, k0.f64, box);
      if (done < end) {
        i = done;
        break;
      }
      for (i = end; i < n && nulls![i] === 1; i++) {
        if (this.denseNull === 0) {
          const g = box[0]!++;
          k0.f64[g] = 0;
          k0.setNull(g);
          this.denseNull = g + 1;
        }
        out[i] = this.denseNull - 1;
      }
    }
    this.size = box[0]!;
    return i;
  }

  /**
   * Whether the batch's keys (all integers; NULLs aside) fit the dense index, growing it as
   * needed within a memory bound (range ≤ max(1M, 4 × groups), ≤ DENSE_MAX slots).
   */
  private fitDense(d: Float64Array, nulls: Uint8Array | null, n: number): boolean {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const x = d[i]!;
      if (Math.floor(x) !== x) return false; // fractions, NaN (±Infinity fail the range check)
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
    if (lo > hi) return true; // all NULL
    const len = this.dense.length;
    const curLo = this.denseLo;
    if (len > 0 && lo >= curLo && hi < curLo + len) return true;
    const newLo = len > 0 ? Math.min(lo, curLo) : lo;
    const newHi = len > 0 ? Math.max(hi, curLo + len - 1) : hi;
    const need = newHi - newLo + 1;
    const limit = Math.min(DENSE_MAX, Math.max(1 << 20, 4 * (this.size + n)));
    if (need > limit) return false;
    const cap = Math.min(limit, Math.max(need, 2 * len, 1024));
    const next = new Int32Array(cap);
    // Keep headroom on the side the range grew toward.
    const base = len > 0 && lo < curLo ? Math.max(newHi - cap + 1, newLo - (cap - need)) : newLo;
    if (len > 0) next.set(this.dense, curLo - base);
    this.dense = next;
    this.denseLo = base;
    return true;
  }

  /**
   * After a hashed insert of groups [from, size): folds their keys into the
   * range, and rebuilds the dense index when the keys are integers whose range
   * is at most 4 × groups (from 64k groups on, so small tables stay put).
   */
  private backToDense(from: number): void {
    const k = this.keys[0]!;
    if (k.nulls !== null) {
      this.denseCandidate = false;
      return;
    }
    const f = k.f64;
    let lo = this.keyLo;
    let hi = this.keyHi;
    for (let g = from; g < this.size; g++) {
      const x = f[g]!;
      if (Math.floor(x) !== x) {
        this.denseCandidate = false; // a fraction or NaN: the dense index cannot hold it
        return;
      }
      if (x < lo) lo = x;
      if (x > hi) hi = x;
    }
    this.keyLo = lo;
    this.keyHi = hi;
    const range = hi - lo + 1;
    if (this.size < 1 << 16 || range > 4 * this.size || range > DENSE_MAX) return;
    const dense = new Int32Array(Math.min(DENSE_MAX, range + (range >> 2)));
    const base = lo - Math.floor((dense.length - range) / 2); // headroom on both sides
    for (let g = 0; g < this.size; g++) dense[f[g]! - base] = g + 1;
    this.dense = dense;
    this.denseLo = base;
    this.denseState = 1;
    this.slots = new Int32Array(32); // toHashed() rebuilds the table if a key ever misfits
    this.mask = 15;
  }

  /** Leaves dense mode: hashes every group's key and builds the open-addressing table. */
  private toHashed(): void {
    if (this.denseState === 2) return;
    this.denseState = 2;
    this.dense = new Int32Array(0);
    this.denseNull = 0;
    if (this.size === 0) return;
    const k0 = this.keys[0]!;
    let c = this.groupHashes.length;
    while (c < this.size) c *= 2;
    if (c !== this.groupHashes.length) this.groupHashes = new Int32Array(c);
    const gh = this.groupHashes;
    const nulls = k0.nulls;
    for (let g = 0; g < this.size; g++) gh[g] = nulls !== null && nulls[g] === 1 ? NULL_HASH : hashDouble(k0.f64[g]!);
    let cap = this.mask + 1;
    while (this.size * 2 >= cap) cap *= 2;
    this.slots = new Int32Array(cap); // grow() doubles it to cap buckets and inserts every group
    this.grow();
  }

  /** Group id of every row, or -1 when its key tuple is absent. */
  lookup(cols: readonly Vector[], n: number, out: Int32Array): void {
    this.toHashed();
    const hashes = this.hashesFor(cols, n);
    for (let i = 0; i < n; i++) {
      const h = hashes[i]!;
      let s = mix32(h) & this.mask;
      let g = -1;
      for (;;) {
        const e = this.slots[2 * s]!;
        if (e === 0) break;
        if (this.slots[2 * s + 1] === h && this.keyEquals(e - 1, cols, i)) {
          g = e - 1;
          break;
        }
        s = (s + 1) & this.mask;
      }
      out[i] = g;
    }
  }

  /** The keys as vectors (`view`: number keys as views of the table's buffers, for a table never written again). */
  keyVectors(view = false): Vector[] {
    return this.keys.map((k) => k.toVector(0, k.length, view));
  }
}

/** Every key column held as doubles in the table and given as a NULL-free Float64Array. */
function allF64(keys: readonly ColumnBuffer[], cols: readonly Vector[]): boolean {
  for (let c = 0; c < keys.length; c++) {
    const ph = keys[c]!.phys;
    if (ph !== Phys.F64 && ph !== Phys.I64F) return false;
    if (!(cols[c]!.data instanceof Float64Array) || cols[c]!.nulls !== null) return false;
  }
  return true;
}

/** insertF64 over several FLOAT64-layout key columns (COUNT(DISTINCT) tables, multi-key GROUP BY). */
function insertF64Multi(
  d: Float64Array[],
  n: number,
  hashes: Int32Array,
  out: Int32Array,
  slots: Int32Array,
  mask: number,
  gh: Int32Array,
  keys: Float64Array[],
  keyNulls: (Uint8Array | null)[],
  size: number,
): number {
  const nk = d.length;
  for (let i = 0; i < n; i++) {
    const h = hashes[i]!;
    let s = mix32(h) & mask;
    let g = -1;
    for (;;) {
      const e = slots[2 * s]!;
      if (e === 0) break;
      const cand = e - 1;
      if (slots[2 * s + 1] === h) {
        let eq = true;
        for (let c = 0; c < nk; c++) {
          const kn = keyNulls[c]!;
          if (kn !== null && kn[cand] === 1) {
            eq = false;
            break;
          }
          const x = d[c]![i]!;
          const y = keys[c]![cand]!;
          if (!(x === y || (x !== x && y !== y))) {
            eq = false;
            break;
          }
        }
        if (eq) {
          g = cand;
          break;
        }
      }
      s = (s + 1) & mask;
    }
    if (g < 0) {
      g = size++;
      gh[g] = h;
      for (let c = 0; c < nk; c++) {
        keys[c]![g] = d[c]![i]!;
        const kn = keyNulls[c]!;
        if (kn !== null) kn[g] = 0;
      }
      slots[2 * s] = g + 1;
      slots[2 * s + 1] = h;
    }
    out[i] = g;
  }
  return size;
}

/**
 * findOrInsert in dense mode over rows [from, n): stops at the first key that
 * is not an integer inside the index, having placed every row before it, and
 * returns that row (n when all fit). `sizeBox[0]` is the group count, updated
 * where a group is created: code after the loop must need no type feedback,
 * because V8 OSR-compiles this loop during its first call, before that code
 * ever ran; a named store there (the former `{ size, stop }` result object)
 * deoptimized the OSR code at every call's exit, hundreds of times per query,
 * in some processes.
 */
function insertDense(d: Float64Array, from: number, n: number, out: Int32Array, dense: Int32Array, lo: number, keys: Float64Array, sizeBox: Int32Array): number {
  const len = dense.length;
  let i = from;
  for (; i < n; i++) {
    const x = d[i]!;
    const j = x - lo;
    const ji = j | 0;
    // ji === j: an integer within int32 (NaN and fractions fail); one unsigned compare for the bounds.
    if (ji !== j || ji >>> 0 >= len) break;
    let g = dense[ji]! - 1;
    if (g < 0) {
      g = sizeBox[0]!;
      sizeBox[0] = g + 1;
      keys[g] = x;
      dense[ji] = g + 1;
    }
    out[i] = g;
  }
  return i;
}

/**
 * The single FLOAT64-layout key loop of GroupTable.findOrInsert (no NULLs in
 * the batch), as a plain function over typed arrays so V8 keeps it tight.
 * Capacity for n new groups is reserved by the caller. Returns the new size.
 */
function insertF64(
  d: Float64Array,
  n: number,
  hashes: Int32Array,
  out: Int32Array,
  slots: Int32Array,
  mask: number,
  gh: Int32Array,
  keys: Float64Array,
  keyNulls: Uint8Array | null,
  size: number,
): number {
  for (let i = 0; i < n; i++) {
    const h = hashes[i]!;
    const x = d[i]!;
    let s = mix32(h) & mask;
    let g = -1;
    for (;;) {
      const e = slots[2 * s]!;
      if (e === 0) break;
      const cand = e - 1;
      if (slots[2 * s + 1] === h && (keyNulls === null || keyNulls[cand] === 0)) {
        const y = keys[cand]!;
        if (x === y || (x !== x && y !== y)) {
          g = cand;
          break;
        }
      }
      s = (s + 1) & mask;
    }
    if (g < 0) {
      g = size++;
      gh[g] = h;
      keys[g] = x;
      slots[2 * s] = g + 1;
      slots[2 * s + 1] = h;
    }
    out[i] = g;
  }
  return size;
}


