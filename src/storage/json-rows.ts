// insertAll rows (REST JSON) -> a column batch. Shared by the insert path and
// by WAL replay of raw-row records, so both convert identically.
import type { Column } from '../types/schema.js';
import type { SqlType } from '../types/types.js';
import { convertJsonValue } from '../types/json-values.js';
import type { Value } from '../types/values.js';
import { layoutOf, vectorFromValues, type Batch, type Layout, type Vector } from '../types/vector.js';

/**
 * Builds one column of an insert batch in its vector layout directly (no
 * intermediate value array, no BigInt for safe INT64). Row slots may be
 * rewritten: a rejected row's slot is reused by the next accepted row.
 */
export class ColumnBuilder {
  private readonly layout: Layout;
  private num: Float64Array | Int32Array | Uint8Array | null = null;
  private vals: Value[] | null = null;
  private nulls: Uint8Array | null = null;

  constructor(
    private readonly type: SqlType,
    private readonly capacity: number,
  ) {
    this.layout = layoutOf(type);
    switch (this.layout) {
      case 'f64':
      case 'i64':
        this.num = new Float64Array(capacity);
        break;
      case 'i32':
        this.num = new Int32Array(capacity);
        break;
      case 'bool':
        this.num = new Uint8Array(capacity);
        break;
      default:
        this.vals = new Array<Value>(capacity);
    }
  }

  setNumber(i: number, x: number): void {
    if (this.num) {
      this.num[i] = x;
      if (this.nulls) this.nulls[i] = 0;
    } else this.set(i, this.layout === 'i64' ? BigInt(x) : x);
  }

  setValue(i: number, v: Value): void {
    if (this.vals) {
      this.vals[i] = v;
      if (this.nulls) this.nulls[i] = 0;
    } else this.set(i, v);
  }

  set(i: number, v: Value): void {
    if (v === null) {
      this.nulls ??= new Uint8Array(this.capacity);
      this.nulls[i] = 1;
      if (this.vals) this.vals[i] = null;
      return;
    }
    if (this.nulls) this.nulls[i] = 0;
    if (this.vals) {
      this.vals[i] = v;
      return;
    }
    const num = this.num!;
    switch (this.layout) {
      case 'i64': {
        const b = v as bigint;
        if (b >= -9007199254740992n && b <= 9007199254740992n) num[i] = Number(b);
        else {
          // Beyond 2^53: fall back to exact values for this batch.
          const vals = new Array<Value>(this.capacity);
          for (let j = 0; j < this.capacity; j++) vals[j] = this.nulls?.[j] ? null : BigInt(num[j]!);
          this.vals = vals;
          this.num = null;
          vals[i] = b;
        }
        return;
      }
      case 'bool':
        num[i] = v ? 1 : 0;
        return;
      default:
        num[i] = v as number;
    }
  }

  finish(n: number): Vector {
    const nulls = this.nulls ? this.nulls.subarray(0, n) : null;
    const anyNull = nulls !== null && nulls.includes(1);
    if (this.vals) {
      const vals = this.vals.length === n ? this.vals : this.vals.slice(0, n);
      return vectorFromValues(this.type, vals.map((x, j) => (nulls?.[j] ? null : (x ?? null))));
    }
    const data = this.num!.length === n ? this.num! : this.num!.slice(0, n);
    return { type: this.type, length: n, data, nulls: anyNull ? nulls!.slice() : null };
  }
}

/** Looks a column up in a row object: exact name first, then case-insensitively. */
export function cellOf(o: Record<string, unknown>, name: string, lowerName: string, lower: { map: Map<string, unknown> | null }): unknown {
  const v = o[name];
  if (v !== undefined) return v;
  lower.map ??= new Map(Object.keys(o).map((k) => [k.toLowerCase(), o[k]]));
  return lower.map.get(lowerName);
}

/**
 * Converts already-validated rows (`[{json: {...}}]`) for `columns`; only
 * columns named in `present` (lower-case; the schema when the rows were
 * accepted) take values, the others are NULL.
 */
export function rowsToBatch(columns: readonly Column[], present: ReadonlySet<string>, rows: readonly { json?: unknown }[]): Batch {
  const n = rows.length;
  const builders = columns.map((c) => new ColumnBuilder(c.type, n));
  const lowerNames = columns.map((c) => c.name.toLowerCase());
  for (let r = 0; r < n; r++) {
    const o = (rows[r]!.json ?? {}) as Record<string, unknown>;
    const lower = { map: null as Map<string, unknown> | null };
    for (let c = 0; c < columns.length; c++) {
      const v = present.has(lowerNames[c]!) ? cellOf(o, columns[c]!.name, lowerNames[c]!, lower) : undefined;
      builders[c]!.set(r, convertJsonValue(columns[c]!.type, v));
    }
  }
  return { length: n, columns: builders.map((b) => b.finish(n)) };
}
