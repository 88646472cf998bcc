// Constant folding: calls of non-volatile functions over literals, casts of
// literals, constructors of literals and NOT/AND/OR over literals. A call
// that throws is left alone so the error surfaces at run time, lazily (a
// CASE branch that never runs must not fail the query).
import type { EvalContext } from '../../functions/registry.js';
import { lookupFunction } from '../../functions/registry.js';
import { castValue } from '../../functions/conversion.js';
import type { Expr, LiteralExpr, Rel } from '../../analyzer/resolved.js';
import { mapRelExprs } from '../../analyzer/rewrite.js';
import { getValue, vectorFromValues } from '../../types/vector.js';
import type { Value } from '../../types/values.js';

function lit(e: Expr): e is LiteralExpr {
  return e.kind === 'literal';
}

/** Folds one node whose children are already folded; undefined = unchanged. */
function foldNode(e: Expr, ctx: EvalContext): Expr | undefined {
  switch (e.kind) {
    case 'call': {
      if (!e.args.every(lit)) return undefined;
      const def = lookupFunction(e.name);
      if (!def || def.kind !== 'scalar' || def.volatile) return undefined;
      try {
        const vecs = e.args.map((a) => vectorFromValues(a.type, [(a as LiteralExpr).value]));
        const out = e.fn.kernel(vecs, 1, ctx);
        return { kind: 'literal', type: e.type, value: getValue(out, 0) };
      } catch {
        if (e.safe) return { kind: 'literal', type: e.type, value: null };
        return undefined;
      }
    }
    case 'cast': {
      if (!lit(e.arg) || e.format || e.timeZone) return undefined;
      try {
        return { kind: 'literal', type: e.type, value: castValue(e.arg.value, e.arg.type, e.type, { safe: e.safe }, ctx) };
      } catch {
        return undefined;
      }
    }
    case 'make_struct':
      return e.fields.every(lit) ? { kind: 'literal', type: e.type, value: e.fields.map((f) => (f as LiteralExpr).value) } : undefined;
    case 'make_array': {
      if (!e.elements.every(lit)) return undefined;
      // Arrays may not hold NULL in results; leave that error to the executor.
      if (e.elements.some((x) => (x as LiteralExpr).value === null)) return undefined;
      return { kind: 'literal', type: e.type, value: e.elements.map((x) => (x as LiteralExpr).value) };
    }
    case 'field':
      if (!lit(e.arg)) return undefined;
      return { kind: 'literal', type: e.type, value: e.arg.value === null ? null : (e.arg.value as Value[])[e.fieldIndex]! };
    case 'logical': {
      if (e.op === 'not') {
        const a = e.args[0]!;
        return lit(a) ? { kind: 'literal', type: e.type, value: a.value === null ? null : !a.value } : undefined;
      }
      // AND/OR: drop neutral literals, short-circuit on absorbing ones.
      const absorbing = e.op === 'or';
      const rest: Expr[] = [];
      let sawNull = false;
      for (const a of e.args) {
        if (lit(a)) {
          if (a.value === absorbing) return { kind: 'literal', type: e.type, value: absorbing };
          if (a.value === null) sawNull = true;
          continue;
        }
        rest.push(a);
      }
      if (rest.length === 0) return { kind: 'literal', type: e.type, value: sawNull ? null : !absorbing };
      if (sawNull) rest.push({ kind: 'literal', type: e.type, value: null });
      if (rest.length === e.args.length) return undefined;
      return rest.length === 1 ? rest[0] : { ...e, args: rest };
    }
    default:
      return undefined;
  }
}

/** Bottom-up fold of one expression. */
export function foldExpr(e: Expr, ctx: EvalContext): Expr {
  const children = (x: Expr): Expr => {
    switch (x.kind) {
      case 'call': {
        const args = x.args.map((a) => foldExpr(a, ctx));
        return args.some((a, i) => a !== x.args[i]) ? { ...x, args } : x;
      }
      case 'cast': {
        const arg = foldExpr(x.arg, ctx);
        return arg !== x.arg ? { ...x, arg } : x;
      }
      case 'make_struct': {
        const fields = x.fields.map((a) => foldExpr(a, ctx));
        return fields.some((a, i) => a !== x.fields[i]) ? { ...x, fields } : x;
      }
      case 'make_array': {
        const elements = x.elements.map((a) => foldExpr(a, ctx));
        return elements.some((a, i) => a !== x.elements[i]) ? { ...x, elements } : x;
      }
      case 'field': {
        const arg = foldExpr(x.arg, ctx);
        return arg !== x.arg ? { ...x, arg } : x;
      }
      case 'logical': {
        const args = x.args.map((a) => foldExpr(a, ctx));
        return args.some((a, i) => a !== x.args[i]) ? { ...x, args } : x;
      }
      default:
        // Conditionals keep their branches unfolded when they could throw; children of
        // other kinds are folded by mapRelExprs' own traversal of subquery plans.
        return x;
    }
  };
  const c = children(e);
  return foldNode(c, ctx) ?? c;
}

/** Folds every expression of the plan. Conditional branches are folded only where safe (no throw possible after folding). */
export function foldConstants(rel: Rel, ctx: EvalContext): Rel {
  return mapRelExprs(rel, (e) => {
    if (e.kind === 'literal' || e.kind === 'column') return e;
    if (e.kind === 'call' || e.kind === 'cast' || e.kind === 'make_struct' || e.kind === 'make_array' || e.kind === 'field' || e.kind === 'logical') {
      const f = foldExpr(e, ctx);
      return f === e ? undefined : f;
    }
    return undefined;
  });
}
