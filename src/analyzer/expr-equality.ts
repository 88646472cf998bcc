// Structural equality of resolved expressions and their literal values.
import { typeEquals } from '../types/types.js';
import { Decimal, type Value } from '../types/values.js';
import type { CallExpr, ColumnRefExpr, Expr, LiteralExpr } from './resolved.js';

/** Structural equality of resolved expressions (GROUP BY matching). */
export function exprEquals(a: Expr, b: Expr): boolean {
  if (a === b) return true;
  if (a.kind !== b.kind || !typeEquals(a.type, b.type)) return false;
  switch (a.kind) {
    case 'literal': {
      const bv = (b as LiteralExpr).value;
      return valueEquals(a.value, bv);
    }
    case 'column':
      return a.columnId === (b as ColumnRefExpr).columnId;
    case 'call': {
      const c = b as CallExpr;
      return a.name === c.name && a.safe === c.safe && listEquals(a.args, c.args);
    }
    case 'cast': {
      const c = b as typeof a;
      return a.safe === c.safe && exprEquals(a.arg, c.arg) && !a.format && !c.format;
    }
    case 'field': {
      const c = b as typeof a;
      return a.fieldIndex === c.fieldIndex && exprEquals(a.arg, c.arg);
    }
    case 'logical': {
      const c = b as typeof a;
      return a.op === c.op && listEquals(a.args, c.args);
    }
    case 'conditional': {
      const c = b as typeof a;
      return a.op === c.op && listEquals(a.whens, c.whens) && listEquals(a.thens, c.thens) && (a.else && c.else ? exprEquals(a.else, c.else) : a.else === c.else);
    }
    case 'make_struct':
      return listEquals(a.fields, (b as typeof a).fields);
    case 'make_array':
      return listEquals(a.elements, (b as typeof a).elements);
    default:
      return false;
  }
}

function listEquals(a: readonly Expr[], b: readonly Expr[]): boolean {
  return a.length === b.length && a.every((x, i) => exprEquals(x, b[i]!));
}

function valueEquals(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  if (typeof a === 'bigint' || typeof a === 'number' || typeof a === 'string' || typeof a === 'boolean') return a === b;
  if (a instanceof Decimal && b instanceof Decimal) return a.eq(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => valueEquals(x, b[i]!));
  return false;
}
