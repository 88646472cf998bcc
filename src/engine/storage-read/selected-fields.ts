// ReadSession.TableReadOptions.selected_fields (rpc reference,
// google.cloud.bigquery.storage.v1): the fields a session returns. A
// top-level name returns its column whole (a STRUCT with all its children);
// a fully-qualified nested name (`s.a`, `s.t.b`, also through a REPEATED
// RECORD) returns its record holding only the selected children. The order
// is the table schema's, at every depth, whatever the list's order. A name
// the table lacks fails the session with the service's text.
import { invalid } from '../../storage/errors.js';
import type { Column } from '../../types/schema.js';
import type { SqlType } from '../../types/types.js';
import type { Value } from '../../types/values.js';
import { getValue, vectorFromValues, type Vector } from '../../types/vector.js';

/** A selection under a field: true = the whole field, else its selected children by lower-case name. */
type Pick = true | Map<string, Pick>;

export interface SelectedFields {
  /** The top-level columns read, in the table's order. */
  readonly idx: number[];
  /** Their columns as the session returns them (STRUCT types narrowed). */
  readonly columns: Column[];
  /** Per returned column: how its rows are narrowed, or undefined when it is returned whole. */
  readonly narrow: (((v: Vector) => Vector) | undefined)[];
}

/** The record type under `t`: a STRUCT, or an ARRAY of STRUCT; undefined for any other type. */
function recordOf(t: SqlType): Extract<SqlType, { kind: 'STRUCT' }> | undefined {
  if (t.kind === 'STRUCT') return t;
  if (t.kind === 'ARRAY' && t.element.kind === 'STRUCT') return t.element;
  return undefined;
}

/** Adds `path` under `pick` (type `t`); false when a step names no child. */
function add(picks: Map<string, Pick>, fields: readonly { name: string; type: SqlType }[], path: readonly string[]): boolean {
  const [head, ...rest] = path;
  const f = fields.find((x) => x.name.toLowerCase() === head!.toLowerCase());
  if (!f) return false;
  const key = f.name.toLowerCase();
  const had = picks.get(key);
  if (rest.length === 0) {
    picks.set(key, true);
    return true;
  }
  const rec = recordOf(f.type);
  if (!rec) return false;
  if (had === true) return add(new Map(), rec.fields, rest); // already whole: checked only
  const sub = had ?? new Map<string, Pick>();
  picks.set(key, sub);
  return add(sub, rec.fields, rest);
}

/** `t` narrowed to `pick`, with the function that narrows one value of it. */
function narrowType(t: SqlType, pick: Pick): { type: SqlType; value: (v: Value) => Value } {
  if (pick === true) return { type: t, value: (v) => v };
  if (t.kind === 'ARRAY') {
    const el = narrowType(t.element, pick);
    return { type: { ...t, element: el.type }, value: (v) => (Array.isArray(v) ? v.map(el.value) : v) };
  }
  if (t.kind !== 'STRUCT') return { type: t, value: (v) => v };
  const kept = t.fields.flatMap((f, i) => {
    const p = pick.get(f.name.toLowerCase());
    return p === undefined ? [] : [{ i, f, n: narrowType(f.type, p) }];
  });
  return {
    type: { ...t, fields: kept.map((k) => ({ ...k.f, type: k.n.type })) },
    value: (v) => (Array.isArray(v) ? kept.map((k) => k.n.value(v[k.i] ?? null)) : v),
  };
}

export function selectedFields(columns: readonly Column[], fields: readonly string[]): SelectedFields {
  const all = columns.map((_, i) => i);
  if (!fields.length) return { idx: all, columns: [...columns], narrow: all.map(() => undefined) };
  const top = new Map<string, Pick>();
  const tops = columns.map((c) => ({ name: c.name, type: c.type }));
  const missing = fields.filter((f) => !add(top, tops, f.split('.')));
  if (missing.length) throw invalid(`request failed: The following selected fields do not exist in the table schema: ${missing.join(', ')}`);
  const idx = all.filter((i) => top.has(columns[i]!.name.toLowerCase()));
  const out: Column[] = [];
  const narrow: (((v: Vector) => Vector) | undefined)[] = [];
  for (const i of idx) {
    const c = columns[i]!;
    const pick = top.get(c.name.toLowerCase())!;
    if (pick === true) {
      out.push(c);
      narrow.push(undefined);
      continue;
    }
    const n = narrowType(c.type, pick);
    out.push({ ...c, type: n.type });
    narrow.push((v) => {
      const values: Value[] = new Array(v.length);
      for (let r = 0; r < v.length; r++) values[r] = n.value(getValue(v, r));
      return vectorFromValues(n.type, values);
    });
  }
  return { idx, columns: out, narrow };
}
