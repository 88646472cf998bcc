// The array elements field access operator (`array.field[OFFSET(i)].field ...`),
// valid inside FLATTEN(...) and UNNEST(...): each step applies to every element
// of the array, and arrays met on the way are flattened (concatenated).
//
// The analyzer builds one internal call per path:
//   $array_path(plan, base, index_1, ..., index_k)
// `plan` is a constant STRING (JSON) listing the steps after `base`; a subscript
// step names the argument (2 + k) holding its index. The result is the flat
// array FLATTEN returns.
import { T, arrayOf, type SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { getValue, vectorFromValues, type Vector } from '../types/vector.js';
import type { ScalarKernel } from './registry.js';
import { lookupFunction } from './registry.js';
import { defineScalar, rep, sigf } from './signature.js';
import { fail } from './vec.js';

export type SubscriptMode = 'OFFSET' | 'ORDINAL' | 'SAFE_OFFSET' | 'SAFE_ORDINAL';
export type PathStep =
  /** STRUCT field by position */
  | { readonly f: number }
  /** JSON member by name */
  | { readonly j: string }
  /** subscript of an ARRAY item; `a` is the call argument holding the index */
  | { readonly s: SubscriptMode; readonly a: number };

export const ARRAY_PATH = '$ARRAY_PATH';

/**
 * The type of each item after the steps (before the final flattening), or a
 * message when a step does not apply. Field and JSON steps flatten an ARRAY
 * item first; subscripts apply to each ARRAY item.
 */
export function pathItemType(base: SqlType, plan: readonly PathStep[]): SqlType | string {
  if (base.kind !== 'ARRAY') return 'not an array';
  let t: SqlType = base.element;
  for (const st of plan) {
    if ('s' in st) {
      if (t.kind !== 'ARRAY') return 'subscript of a non-array';
      t = t.element;
      continue;
    }
    if (t.kind === 'ARRAY') t = t.element;
    if ('f' in st) {
      if (t.kind !== 'STRUCT' || !t.fields[st.f]) return 'field of a non-struct';
      t = t.fields[st.f]!.type;
    } else {
      if (t.kind !== 'JSON') return 'JSON member of a non-JSON value';
    }
  }
  return t;
}

/** FLATTEN's result type for the items: arrays are concatenated. */
export function pathResultType(item: SqlType): SqlType {
  return item.kind === 'ARRAY' ? item : arrayOf(item);
}

/** Concatenates the ARRAY items (a NULL array contributes nothing). */
function concat(items: readonly Value[]): Value[] {
  const out: Value[] = [];
  for (const a of items) if (a !== null) for (const e of a as Value[]) out.push(e);
  return out;
}

function subscript(arr: Value, idx: Value, mode: SubscriptMode): Value {
  if (arr === null || idx === null) return null;
  const a = arr as Value[];
  const ordinal = mode === 'ORDINAL' || mode === 'SAFE_ORDINAL';
  const i = Number(idx as bigint) - (ordinal ? 1 : 0);
  if (i < 0 || i >= a.length) {
    if (mode === 'SAFE_OFFSET' || mode === 'SAFE_ORDINAL') return null;
    fail(`Array index ${String(idx)} is out of bounds`);
  }
  return a[i]!;
}

function makeKernel(base: SqlType, plan: readonly PathStep[], returnType: SqlType): ScalarKernel {
  // JSON member access reuses the `json.field` operator, one call per step over all items.
  let jsonMember: ScalarKernel | undefined;
  const member = (items: Value[], name: string, ctxArgs: Parameters<ScalarKernel>[2]): Value[] => {
    if (!jsonMember) {
      const def = lookupFunction('$subscript');
      const r = def?.kind === 'scalar' ? def.resolve([{ type: T.JSON }, { type: T.STRING, constant: { value: name } }]) : undefined;
      if (!r?.ok) throw new Error('$array_path: no JSON member access');
      jsonMember = r.resolved.kernel;
    }
    const n = items.length;
    const v = jsonMember([vectorFromValues(T.JSON, items), vectorFromValues(T.STRING, new Array<Value>(n).fill(name))], n, ctxArgs);
    const out = new Array<Value>(n);
    for (let i = 0; i < n; i++) out[i] = getValue(v, i);
    return out;
  };
  return (args: readonly Vector[], n: number, ctx) => {
    const out = new Array<Value>(n);
    for (let row = 0; row < n; row++) {
      const b = getValue(args[1]!, row);
      if (b === null) {
        out[row] = null;
        continue;
      }
      let items = b as Value[];
      let t: SqlType = (base as { element: SqlType }).element;
      for (const st of plan) {
        if ('s' in st) {
          const idx = getValue(args[st.a]!, row);
          items = items.map((x) => subscript(x, idx, st.s));
          t = (t as { element: SqlType }).element;
          continue;
        }
        if (t.kind === 'ARRAY') {
          items = concat(items);
          t = t.element;
        }
        if ('f' in st) {
          items = items.map((x) => (x === null ? null : (x as Value[])[st.f]!));
          if (t.kind === 'STRUCT') t = t.fields[st.f]!.type;
        } else {
          items = member(items, st.j, ctx);
        }
      }
      out[row] = t.kind === 'ARRAY' ? concat(items) : items;
    }
    return vectorFromValues(returnType, out);
  };
}

export function registerArrayPath(): void {
  defineScalar(
    ARRAY_PATH,
    [
      sigf(
        ['STRING', 'ARRAY', rep('INT64')],
        (c) => {
          const plan = JSON.parse(c.args[0]!.constant!.value as string) as PathStep[];
          const item = pathItemType(c.argTypes[1]!, plan);
          if (typeof item === 'string') throw new Error(`$array_path: ${item}`);
          return pathResultType(item);
        },
        (c) => makeKernel(c.argTypes[1]!, JSON.parse(c.args[0]!.constant!.value as string) as PathStep[], c.returnType),
      ),
    ],
    { safeCallable: false },
  );
}
