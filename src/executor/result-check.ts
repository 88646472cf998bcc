// Final-result rule of the real service: an ARRAY in a query result may not
// hold NULL elements (intermediate arrays may). Called on the rows about to
// be returned or written, with the output column names.
import { QueryError } from '../types/errors.js';
import type { SqlType } from '../types/types.js';
import type { Value } from '../types/values.js';
import { getValue, type Batch } from '../types/vector.js';

function mayHoldArray(t: SqlType): boolean {
  if (t.kind === 'ARRAY') return true;
  if (t.kind === 'STRUCT') return t.fields.some((f) => mayHoldArray(f.type));
  return false;
}

function check(v: Value, t: SqlType, field: string): void {
  if (v === null) return;
  if (t.kind === 'ARRAY') {
    for (const e of v as Value[]) {
      if (e === null) throw new QueryError(`Array cannot have a null element; error in writing field ${field}`);
      if (mayHoldArray(t.element)) check(e, t.element, field);
    }
  } else if (t.kind === 'STRUCT') {
    const s = v as Value[];
    t.fields.forEach((f, i) => {
      if (mayHoldArray(f.type)) check(s[i]!, f.type, f.name || field);
    });
  }
}

/** Throws `Array cannot have a null element; error in writing field <name>` like the service. */
export function checkResultArrays(columns: readonly { readonly name: string; readonly type: SqlType }[], batches: readonly Batch[]): void {
  columns.forEach((col, c) => {
    if (!mayHoldArray(col.type)) return;
    for (const b of batches) {
      const v = b.columns[c]!;
      for (let i = 0; i < b.length; i++) check(getValue(v, i), col.type, col.name);
    }
  });
}
