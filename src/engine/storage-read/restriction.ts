// `row_restriction` of a read session (spec §4.14): exactly one equality
// clause `<column> = <literal>`, the literal an INT64, a BOOL (true/false in
// any case) or a STRING in single quotes ('' or \' for a quote) or in double
// quotes as GoogleSQL writes it ("WA", with backslash escapes). The
// column is bare or backtick-quoted and must hold INT64, BOOL or STRING to
// match the literal. Anything else is rejected when the session is created.
import type { Column } from '../../types/schema.js';
import { typeToSql } from '../../types/types.js';
import { getValue, type Batch, type Vector } from '../../types/vector.js';

export class RestrictionError extends Error {}

export interface RowRestriction {
  readonly column: number;
  readonly value: bigint | boolean | string;
}

const CLAUSE = /^\s*(?:`([^`]+)`|([A-Za-z_][A-Za-z0-9_]*))\s*=\s*(-?\d+|true|false|'(?:[^'\\]|''|\\.)*'|"(?:[^"\\]|\\.)*")\s*$/i;

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', '`': '`' };

/** The text of a quoted string literal: backslash escapes, and '' in single quotes. */
function stringLiteral(lit: string): string {
  const body = lit.slice(1, -1);
  const text = body.replace(/\\(.)/g, (all, c: string) => ESCAPES[c] ?? all);
  return lit.startsWith("'") ? text.replace(/''/g, "'") : text;
}

export function parseRestriction(text: string, columns: readonly Column[]): RowRestriction | null {
  if (text.trim() === '') return null;
  const m = CLAUSE.exec(text);
  if (!m) {
    throw new RestrictionError(`Unsupported row restriction "${text}": only a single equality <column> = <INT64, BOOL or STRING literal> is supported`);
  }
  const name = (m[1] ?? m[2])!;
  const column = columns.findIndex((c) => c.name.toLowerCase() === name.toLowerCase());
  if (column < 0) throw new RestrictionError(`Unrecognized name: ${name} in row restriction`);
  const lit = m[3]!;
  let value: bigint | boolean | string;
  let kind: string;
  if (lit.startsWith("'") || lit.startsWith('"')) {
    value = stringLiteral(lit);
    kind = 'STRING';
  } else if (/^(true|false)$/i.test(lit)) {
    value = lit.toLowerCase() === 'true';
    kind = 'BOOL';
  } else {
    value = BigInt(lit);
    if (value > 2n ** 63n - 1n || value < -(2n ** 63n)) throw new RestrictionError(`Invalid INT64 literal ${lit} in row restriction`);
    kind = 'INT64';
  }
  const colKind = columns[column]!.type.kind;
  if (colKind !== kind) {
    throw new RestrictionError(`Unsupported row restriction "${text}": column ${name} has type ${typeToSql(columns[column]!.type)}, the literal is ${kind}`);
  }
  return { column, value };
}

/** Whether row i of the restriction's column `v` equals its literal; NULL never matches. */
export function matches(v: Vector, i: number, r: RowRestriction): boolean {
  return getValue(v, i) === r.value;
}

/** Row numbers (in snapshot order) whose column equals the literal. */
export function selectRows(batches: readonly Batch[], r: RowRestriction): Int32Array {
  const out: number[] = [];
  let base = 0;
  for (const b of batches) {
    const v = b.columns[r.column]!;
    for (let i = 0; i < b.length; i++) if (matches(v, i, r)) out.push(base + i);
    base += b.length;
  }
  return Int32Array.from(out);
}
