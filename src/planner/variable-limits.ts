// The size limits of script and session variables (multi-statement-queries.md, Variables; sessions-intro.md,
// Limitations): a variable's value may take at most 1 MB, and all the user variables of a script or session
// together at most 10 MB. A value's size is its logical bytes (types/logical-bytes.ts, the service's data size
// calculation); system variables (@@...) are not counted.
import type * as A from '../../grammar/ast.js';
import { sqlError } from '../analyzer/errors.js';
import { valueBytes } from '../types/logical-bytes.js';
import type { TypedValue } from './api.js';

const MB = 1024 * 1024;
export const VARIABLE_MAX_BYTES = MB;
export const VARIABLES_MAX_BYTES = 10 * MB;

/** Sizes of the values variables hold, measured once per value (a value is kept as one object while it is held). */
const sizes = new WeakMap<TypedValue, number>();

function bytesOf(tv: TypedValue): number {
  let n = sizes.get(tv);
  if (n === undefined) {
    n = valueBytes(tv.type, tv.value);
    sizes.set(tv, n);
  }
  return n;
}

const mb = (n: number): string => (n / MB).toFixed(2);

/** Refuses `tv` as the new value of `name` (lower-cased) when it, or all variables with it, would be over the limits. */
export function checkVariableSize(variables: ReadonlyMap<string, TypedValue>, name: string, tv: TypedValue, loc?: A.Loc): void {
  const n = bytesOf(tv);
  if (n > VARIABLE_MAX_BYTES) throw sqlError(`Variable ${name} would hold ${mb(n)} MB; the maximum size of a variable is 1 MB`, loc);
  let total = n;
  for (const [k, v] of variables) if (k !== name && !k.startsWith('@@')) total += bytesOf(v);
  if (total > VARIABLES_MAX_BYTES) throw sqlError(`Variables would hold ${mb(total)} MB with ${name}; the maximum size of all variables is 10 MB`, loc);
}
