// Sets of insertIds: the engine's de-duplication memory (src/engine/rows.ts)
// and the insert scanner's duplicates within a request.

/** FNV-1a over the UTF-16 code units, with murmur3's finaliser; never 0 (IdSet's empty slot). */
export function idHash(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16) || 1;
}

/**
 * A set of ids: their UTF-16 code units in an append-only arena (a length,
 * two units, then the units), found through an open-addressing table
 * (linear probing, at most half full) of their hashes, each beside its
 * offset in the arena (one cache line per probe). Looking up a new id, what
 * almost every lookup is, reads one slot; a Set of strings (V8's ordered hash
 * table) touches buckets, chain entries and candidate strings, a cache miss
 * each once the set is large, and keeps every id as a string the garbage
 * collector copies out of the young generation and then traces.
 */
export class IdSet {
  /** Slot i: [2i] the hash (0: empty), [2i + 1] the id's offset in `arena`. */
  private table: Int32Array;
  private arena = new Uint16Array(4096);
  private used = 0;
  size = 0;

  /** `slots`: the initial table size, a power of two (it doubles when half full). */
  constructor(slots = 1024) {
    this.table = new Int32Array(2 * slots);
  }

  has(id: string, h: number): boolean {
    const t = this.table;
    const mask = (t.length >> 1) - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const x = t[2 * i]!;
      if (x === 0) return false;
      if (x === h && this.equals(t[2 * i + 1]!, id)) return true;
    }
  }

  add(id: string, h: number): void {
    const t = this.table;
    const mask = (t.length >> 1) - 1;
    let i = h & mask;
    for (; t[2 * i] !== 0; i = (i + 1) & mask) if (t[2 * i] === h && this.equals(t[2 * i + 1]!, id)) return;
    t[2 * i] = h;
    t[2 * i + 1] = this.store(id);
    if (++this.size * 4 > t.length) this.grow();
  }

  /** Whether the id at arena offset `at` is `id`. */
  private equals(at: number, id: string): boolean {
    const a = this.arena;
    const n = id.length;
    if (a[at]! + a[at + 1]! * 0x10000 !== n) return false;
    for (let i = 0; i < n; i++) if (a[at + 2 + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  /** Appends the id's length and code units to the arena; returns its offset. */
  private store(id: string): number {
    const n = id.length;
    const at = this.used;
    if (at + 2 + n > this.arena.length) {
      const a = new Uint16Array(Math.max(this.arena.length * 2, at + 2 + n));
      a.set(this.arena.subarray(0, at));
      this.arena = a;
    }
    const a = this.arena;
    a[at] = n & 0xffff;
    a[at + 1] = n >>> 16;
    for (let i = 0; i < n; i++) a[at + 2 + i] = id.charCodeAt(i);
    this.used = at + 2 + n;
    return at;
  }

  private grow(): void {
    const old = this.table;
    const t = new Int32Array(old.length * 2);
    const mask = (t.length >> 1) - 1;
    for (let j = 0; j < old.length; j += 2) {
      const h = old[j]!;
      if (h === 0) continue;
      let i = h & mask;
      while (t[2 * i] !== 0) i = (i + 1) & mask;
      t[2 * i] = h;
      t[2 * i + 1] = old[j + 1]!;
    }
    this.table = t;
  }
}
