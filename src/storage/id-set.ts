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
 * A set of ids: the ids in an array in insertion order, found through an
 * open-addressing table (linear probing, at most half full) of their hashes,
 * each beside its position in the array (one cache line per probe). Looking
 * up a new id, what almost every lookup is, reads one slot; a Set of strings
 * (V8's ordered hash table) touches buckets, chain entries and candidate
 * strings, a cache miss each once the set is large: most of what
 * de-duplication cost.
 */
export class IdSet {
  private readonly ids: string[] = [];
  /** Slot i: [2i] the hash (0: empty), [2i + 1] the id's position in `ids`. */
  private table: Int32Array;

  /** `slots`: the initial table size, a power of two (it doubles when half full). */
  constructor(slots = 1024) {
    this.table = new Int32Array(2 * slots);
  }

  get size(): number {
    return this.ids.length;
  }

  has(id: string, h: number): boolean {
    const t = this.table;
    const mask = (t.length >> 1) - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const x = t[2 * i]!;
      if (x === 0) return false;
      if (x === h && this.ids[t[2 * i + 1]!] === id) return true;
    }
  }

  add(id: string, h: number): void {
    const t = this.table;
    const mask = (t.length >> 1) - 1;
    let i = h & mask;
    for (; t[2 * i] !== 0; i = (i + 1) & mask) if (t[2 * i] === h && this.ids[t[2 * i + 1]!] === id) return;
    t[2 * i] = h;
    t[2 * i + 1] = this.ids.length;
    this.ids.push(id);
    if (this.ids.length * 4 > t.length) this.grow();
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
