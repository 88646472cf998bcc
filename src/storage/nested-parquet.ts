// ARRAY and STRUCT columns in fragment files as parquet nested columns (the
// Dremel encoding): a STRUCT is an optional group of optional fields, an
// ARRAY the standard 3-level LIST (`optional group a (LIST) { repeated group
// list { optional <element> element } }`), nested to any depth. Each leaf is
// a column chunk of its own with repetition and definition levels; this file
// shreds boxed values into the leaves' levels and values (writing) and
// assembles Arrow-layout chunks (list offsets, struct validity, leaf chunks)
// from the leaves' levels (reading). Page encoding stays in fragment-file.ts.
import type { ArrayType, SqlType, StructType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { Decimal, Geography, JsonValue } from '../types/values.js';
import { jsonValueText } from '../types/json-values.js';
import { layoutOf } from '../types/vector.js';
import { toStored } from './codec.js';
import type { ColumnChunk, Validity } from './column-chunk.js';
import { parquetMapping } from './parquet.js';

/**
 * A node of a nested column. An entry k of a leaf under the node (levels
 * rep[k], def[k]) starts one of the node's slots (a row, a list element, or
 * the same slot as the enclosing struct's) when rep[k] <= slotRep and
 * def[k] >= slotDef; the slot is non-NULL when def[k] >= presentDef.
 */
interface NodeBase {
  readonly slotDef: number;
  readonly slotRep: number;
  readonly presentDef: number;
  /** The first leaf under the node (all leaves under it agree on its slots). */
  readonly firstLeaf: number;
}
export interface LeafNode extends NodeBase {
  readonly kind: 'leaf';
  readonly type: SqlType;
  readonly path: readonly string[];
}
export interface StructNode extends NodeBase {
  readonly kind: 'struct';
  readonly type: StructType;
  readonly children: readonly NestedNode[];
}
export interface ListNode extends NodeBase {
  readonly kind: 'list';
  readonly type: ArrayType;
  readonly element: NestedNode;
}
export type NestedNode = LeafNode | StructNode | ListNode;

export interface NestedLayout {
  readonly root: NestedNode;
  readonly leaves: readonly LeafNode[];
  /** The column's parquet schema elements, depth first. */
  readonly schema: readonly Record<string, unknown>[];
}

export const isNested = (t: SqlType): boolean => t.kind === 'ARRAY' || t.kind === 'STRUCT';

const layouts = new WeakMap<SqlType, Map<string, NestedLayout>>();

/** The parquet shape of nested column `name` of type `t` (cached per type object). */
export function nestedLayout(name: string, t: SqlType): NestedLayout {
  let byName = layouts.get(t);
  if (!byName) layouts.set(t, (byName = new Map()));
  let l = byName.get(name);
  if (!l) byName.set(name, (l = buildLayout(name, t)));
  return l;
}

/** A struct's fields' parquet names: their own, but anonymous or repeated names (case-insensitively) get their position's, `_field_<n>`. */
export function parquetFieldNames(t: StructType): string[] {
  const seen = new Set<string>();
  return t.fields.map((f, i) => {
    let n = f.name;
    if (n === '' || seen.has(n.toLowerCase())) n = `_field_${i + 1}`;
    seen.add(n.toLowerCase());
    return n;
  });
}

function buildLayout(name: string, t: SqlType): NestedLayout {
  const leaves: LeafNode[] = [];
  const schema: Record<string, unknown>[] = [];
  // parentDef: the optional and repeated nodes above this one (its definition level when NULL).
  const walk = (t: SqlType, name: string, path: readonly string[], slotDef: number, slotRep: number, parentDef: number): NestedNode => {
    const presentDef = parentDef + 1;
    const firstLeaf = leaves.length;
    path = [...path, name];
    if (t.kind === 'STRUCT') {
      schema.push({ name, repetition_type: 'OPTIONAL', num_children: t.fields.length });
      const names = parquetFieldNames(t);
      // A field's slots are its struct's (aligned, as Arrow's struct children).
      const children = t.fields.map((f, i) => walk(f.type, names[i]!, path, slotDef, slotRep, presentDef));
      return { kind: 'struct', type: t, slotDef, slotRep, presentDef, firstLeaf, children };
    }
    if (t.kind === 'ARRAY') {
      schema.push({ name, repetition_type: 'OPTIONAL', num_children: 1, converted_type: 'LIST' });
      schema.push({ name: 'list', repetition_type: 'REPEATED', num_children: 1 });
      // An element's slot exists once the repeated group is present.
      const element = walk(t.element, 'element', [...path, 'list'], presentDef + 1, slotRep + 1, presentDef + 1);
      return { kind: 'list', type: t, slotDef, slotRep, presentDef, firstLeaf, element };
    }
    const m = parquetMapping(t);
    schema.push({ name, type: m.physical, repetition_type: 'OPTIONAL', ...(m.converted ? { converted_type: m.converted } : {}) });
    const leaf: LeafNode = { kind: 'leaf', type: t, path, slotDef, slotRep, presentDef, firstLeaf };
    leaves.push(leaf);
    return leaf;
  };
  const root = walk(t, name, [], 0, 0, 0);
  return { root, leaves, schema };
}

// ---------------------------------------------------------------- shredding

/** One leaf's levels and non-NULL values, as fragment-file.ts writes them. */
export interface LeafData {
  readonly count: number;
  readonly rep: Int32Array | null;
  readonly def: Int32Array;
  readonly maxRep: number;
  readonly maxDef: number;
  /** Non-NULL values in order, in the leaf's stored form (typed array for fixed widths, else strings / bytes). */
  readonly values: Float64Array | BigInt64Array | Int32Array | Uint8Array | (string | Uint8Array)[];
  readonly min?: number | bigint | string;
  readonly max?: number | bigint | string;
  readonly nulls: number;
}

class Sink {
  rep: Int32Array;
  def: Int32Array;
  n = 0;
  readonly values: Value[] = [];
  constructor(cap: number) {
    this.rep = new Int32Array(cap);
    this.def = new Int32Array(cap);
  }
  push(r: number, d: number): void {
    if (this.n === this.def.length) {
      const rep = new Int32Array(this.n * 2);
      rep.set(this.rep);
      this.rep = rep;
      const def = new Int32Array(this.n * 2);
      def.set(this.def);
      this.def = def;
    }
    this.rep[this.n] = r;
    this.def[this.n++] = d;
  }
}

/** Shreds `rows` (boxed values of the column's type) into the leaves of `layout`. */
export function shred(layout: NestedLayout, rows: readonly Value[]): LeafData[] {
  const sinks = layout.leaves.map(() => new Sink(Math.max(16, rows.length)));
  const nullAll = (n: NestedNode, r: number, d: number): void => {
    const end = n.firstLeaf + leafCount(n);
    for (let i = n.firstLeaf; i < end; i++) sinks[i]!.push(r, d);
  };
  const walk = (n: NestedNode, v: Value, r: number, d: number): void => {
    // d: the definition level when this node is NULL (its slot exists, it does not).
    if (v === null || v === undefined) return nullAll(n, r, d);
    switch (n.kind) {
      case 'leaf': {
        const s = sinks[n.firstLeaf]!;
        s.push(r, d + 1);
        s.values.push(v);
        return;
      }
      case 'struct': {
        const a = v as Value[];
        for (let i = 0; i < n.children.length; i++) walk(n.children[i]!, a[i] ?? null, r, d + 1);
        return;
      }
      case 'list': {
        const a = v as Value[];
        if (a.length === 0) return nullAll(n, r, d + 1);
        for (let i = 0; i < a.length; i++) walk(n.element, a[i] ?? null, i === 0 ? r : n.slotRep + 1, d + 2);
      }
    }
  };
  for (const v of rows) walk(layout.root, v, 0, 0);
  return layout.leaves.map((leaf, i) => leafData(leaf, sinks[i]!));
}

function leafCount(n: NestedNode): number {
  return n.kind === 'leaf' ? 1 : n.kind === 'list' ? leafCount(n.element) : n.children.reduce((s, c) => s + leafCount(c), 0);
}

function leafData(leaf: LeafNode, s: Sink): LeafData {
  const t = leaf.type;
  const vals = s.values;
  const k = vals.length;
  const base = { count: s.n, rep: leaf.slotRep > 0 ? s.rep.subarray(0, s.n) : null, def: s.def.subarray(0, s.n), maxRep: leaf.slotRep, maxDef: leaf.presentDef, nulls: s.n - k };
  let min: number | bigint | string | undefined;
  let max: number | bigint | string | undefined;
  const bound = (x: number | bigint | string): void => {
    if (min === undefined || x < min) min = x;
    if (max === undefined || x > max) max = x;
  };
  switch (layoutOf(t)) {
    case 'f64': {
      const out = new Float64Array(k);
      for (let i = 0; i < k; i++) {
        const x = (out[i] = vals[i] as number);
        if (!Number.isNaN(x)) bound(x);
      }
      return { ...base, values: out, min, max };
    }
    case 'i64': {
      const out = new BigInt64Array(k);
      for (let i = 0; i < k; i++) bound((out[i] = vals[i] as bigint));
      return { ...base, values: out, min, max };
    }
    case 'i32': {
      const out = new Int32Array(k);
      for (let i = 0; i < k; i++) bound((out[i] = vals[i] as number));
      return { ...base, values: out, min, max };
    }
    case 'bool': {
      const out = new Uint8Array(k);
      for (let i = 0; i < k; i++) out[i] = vals[i] ? 1 : 0;
      return { ...base, values: out };
    }
  }
  const out = new Array<string | Uint8Array>(k);
  const form = parquetMapping(t).form;
  for (let i = 0; i < k; i++) {
    const x = vals[i]!;
    if (t.kind === 'STRING') bound((out[i] = x as string));
    else if (t.kind === 'BYTES') out[i] = x as Uint8Array;
    else if (t.kind === 'JSON') out[i] = jsonValueText(x as JsonValue);
    else if (t.kind === 'GEOGRAPHY') out[i] = (x as Geography).wkt;
    else if (t.kind === 'NUMERIC' || t.kind === 'BIGNUMERIC') out[i] = (x as Decimal).toFixed();
    else out[i] = form === 'stored-json' ? JSON.stringify(toStored(t, x)) : String(x);
  }
  return { ...base, values: out, min, max };
}

// ---------------------------------------------------------------- assembling

/** One leaf as read: its levels and its chunk's maker (given the leaf's slot validity and slot count). */
export interface LeafRead {
  readonly rep: Int32Array | null;
  readonly def: Int32Array;
  readonly count: number;
  readonly chunk: (validity: Validity, slots: number, present: number) => ColumnChunk;
}

/** The Arrow-layout chunk of a nested column from its leaves as read. */
export function assemble(layout: NestedLayout, leaves: readonly LeafRead[]): ColumnChunk {
  return build(layout.root, leaves);
}

function build(n: NestedNode, leaves: readonly LeafRead[]): ColumnChunk {
  const l = leaves[n.firstLeaf]!;
  const { rep, def, count } = l;
  const { slotDef, slotRep, presentDef } = n;
  const isSlot = (k: number): boolean => def[k]! >= slotDef && (rep === null || rep[k]! <= slotRep);
  let slots = 0;
  let present = 0;
  for (let k = 0; k < count; k++) {
    if (!isSlot(k)) continue;
    slots++;
    if (def[k]! >= presentDef) present++;
  }
  let validity: Validity = null;
  if (present < slots) {
    validity = new Uint8Array((slots + 7) >> 3);
    for (let k = 0, i = 0; k < count; k++) {
      if (!isSlot(k)) continue;
      if (def[k]! >= presentDef) validity[i >> 3]! |= 1 << (i & 7);
      i++;
    }
  }
  switch (n.kind) {
    case 'leaf':
      return l.chunk(validity, slots, present);
    case 'struct':
      return { kind: 'struct', length: slots, validity, children: n.children.map((c) => build(c, leaves)) };
    case 'list': {
      const offsets = new Int32Array(slots + 1);
      const e = n.element;
      let i = 0;
      let elems = 0;
      for (let k = 0; k < count; k++) {
        if (isSlot(k)) offsets[i++] = elems;
        if (def[k]! >= e.slotDef && (rep === null || rep[k]! <= e.slotRep)) elems++;
      }
      offsets[slots] = elems;
      return { kind: 'list', length: slots, offsets, validity, child: build(e, leaves) };
    }
  }
}
