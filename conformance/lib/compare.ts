// Value and table comparison: INT64/NUMERIC exact, FLOAT64 within a relative
// 1e-9 (nan == nan, inf by sign), TIMESTAMP as instants, ARRAY/STRUCT
// element-wise, arrays of unknown order as multisets.

import { showVal, type Val } from './value.js';

export const FLOAT_REL_TOL = 1e-9;

export function floatEq(a: number, b: number, rel = FLOAT_REL_TOL): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  const scale = Math.max(Math.abs(a), Math.abs(b));
  // Values that are both (nearly) zero compare equal in absolute terms.
  if (scale < 1e-300) return true;
  return Math.abs(a - b) <= rel * scale;
}

function jsonEq(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return floatEq(a, b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEq(x, b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a as object).sort();
    const kb = Object.keys(b as object).sort();
    if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
    return ka.every((k) => jsonEq((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}

/** null when equal, else a short description of the first difference. */
export function compareVal(exp: Val, act: Val, path = ''): string | null {
  const at = path ? ` at ${path}` : '';
  if (exp.k === 'null' || act.k === 'null') {
    if (exp.k === act.k) return null;
    // BigQuery returns a NULL array as an empty array.
    if (exp.k === 'null' && act.k === 'array' && act.elems.length === 0) return null;
    return `value${at}: expected ${showVal(exp)}, got ${showVal(act)}`;
  }
  if (exp.k !== act.k) {
    // NUMERIC written as an integer literal is still NUMERIC
    if (exp.k === 'int' && act.k === 'decimal' && exp.v.toString() === act.v) return null;
    if (exp.k === 'decimal' && act.k === 'int' && act.v.toString() === exp.v) return null;
    return `kind${at}: expected ${exp.k} ${showVal(exp)}, got ${act.k} ${showVal(act)}`;
  }
  const neq = () => `value${at}: expected ${showVal(exp)}, got ${showVal(act)}`;
  switch (exp.k) {
    case 'int': return exp.v === (act as typeof exp).v ? null : neq();
    case 'float': return floatEq(exp.v, (act as typeof exp).v, exp.rel ?? FLOAT_REL_TOL) ? null : neq();
    case 'bool': case 'string': case 'bytes': case 'decimal': case 'geography': case 'raw':
      return exp.v === (act as typeof exp).v ? null : neq();
    case 'civil': return exp.v === (act as typeof exp).v ? null : neq();
    case 'timestamp': return exp.micros === (act as typeof exp).micros ? null : neq();
    case 'json': return jsonEq(exp.v, (act as typeof exp).v) ? null : neq();
    case 'interval': {
      const a = act as typeof exp;
      return exp.months === a.months && exp.days === a.days && exp.nanos === a.nanos ? null : neq();
    }
    case 'range': {
      const a = act as typeof exp;
      return compareVal(exp.start, a.start, `${path}.start`) ?? compareVal(exp.end, a.end, `${path}.end`);
    }
    case 'struct': {
      const a = act as typeof exp;
      if (exp.fields.length !== a.fields.length) return `struct${at}: expected ${exp.fields.length} fields, got ${a.fields.length}`;
      for (let i = 0; i < exp.fields.length; i++) {
        const d = compareVal(exp.fields[i]!, a.fields[i]!, `${path}.${i}`);
        if (d) return d;
      }
      return null;
    }
    case 'array': {
      const a = act as typeof exp;
      if (exp.elems.length !== a.elems.length) return `array length${at}: expected ${exp.elems.length}, got ${a.elems.length} (${showVal(act).slice(0, 120)})`;
      if (exp.ordered) {
        for (let i = 0; i < exp.elems.length; i++) {
          const d = compareVal(exp.elems[i]!, a.elems[i]!, `${path}[${i}]`);
          if (d) return d;
        }
        return null;
      }
      return multisetDiff(exp.elems, a.elems, (x, y) => compareVal(x, y) === null, path);
    }
  }
}

/** Greedy multiset match; elements here are small so O(n²) is fine. */
export function multisetDiff<T>(exp: T[], act: T[], eq: (a: T, b: T) => boolean, path: string, show: (t: T) => string = (t) => showVal(t as unknown as Val)): string | null {
  const used = new Array<boolean>(act.length).fill(false);
  for (let i = 0; i < exp.length; i++) {
    let found = -1;
    for (let j = 0; j < act.length; j++) {
      if (!used[j] && eq(exp[i]!, act[j]!)) { found = j; break; }
    }
    if (found < 0) {
      const extra = act.findIndex((_, j) => !used[j]);
      return `unordered${path ? ' at ' + path : ''}: expected element ${show(exp[i]!).slice(0, 200)} not found` +
        (extra >= 0 ? ` (an unmatched actual one: ${show(act[extra]!).slice(0, 200)})` : '');
    }
    used[found] = true;
  }
  return null;
}

export function showRow(r: Val[]): string {
  return `{${r.map(showVal).join(', ')}}`;
}

/** Compares result tables (rows of cells). */
export function compareRows(exp: Val[][], act: Val[][], ordered: boolean): string | null {
  if (exp.length !== act.length) {
    return `row count: expected ${exp.length}, got ${act.length}` +
      (act.length > 0 ? ` (first actual row ${showRow(act[0]!).slice(0, 160)})` : '');
  }
  const rowEq = (a: Val[], b: Val[]) => a.length === b.length && a.every((v, i) => compareVal(v, b[i]!) === null);
  if (ordered) {
    for (let r = 0; r < exp.length; r++) {
      const e = exp[r]!;
      const a = act[r]!;
      if (e.length !== a.length) return `row ${r}: expected ${e.length} cells, got ${a.length}`;
      for (let c = 0; c < e.length; c++) {
        const d = compareVal(e[c]!, a[c]!, `row ${r} col ${c}`);
        if (d) return d;
      }
    }
    return null;
  }
  // Quick path: per-row exact match in order still passes an unordered compare.
  if (exp.every((e, i) => rowEq(e, act[i]!))) return null;
  const d = multisetDiff(exp, act, rowEq, '', showRow);
  return d ? `rows (any order): ${d.replace(/^unordered: /, '')}` : null;
}
