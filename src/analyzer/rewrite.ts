// Generic traversal of resolved expressions and relations. Used by the
// analyzer (post-aggregation rewrites, correlated-id remaps) and by the
// planner rules, so each rule states only what it changes.
import type { Expr, Rel, SortKey, WindowCall, AggregateCall, FrameBound } from './resolved.js';
import { lookupFunction } from '../functions/registry.js';

export type ExprFn = (e: Expr) => Expr | undefined;

/**
 * Pre-order rewrite: `f` may replace a node (its result is not revisited);
 * otherwise children are rewritten and the node is rebuilt only if one changed.
 * Subquery plans are not entered (see mapRelExprs for deep rewrites).
 */
export function rewriteExpr(e: Expr, f: ExprFn, deep = false): Expr {
  const r = f(e);
  if (r !== undefined) return r;
  const m = (x: Expr) => rewriteExpr(x, f, deep);
  const ml = (xs: readonly Expr[]): readonly Expr[] => {
    let changed = false;
    const out = xs.map((x) => {
      const y = m(x);
      if (y !== x) changed = true;
      return y;
    });
    return changed ? out : xs;
  };
  switch (e.kind) {
    case 'literal':
    case 'column':
      return e;
    case 'call': {
      const args = ml(e.args);
      return args === e.args ? e : { ...e, args };
    }
    case 'cast': {
      const arg = m(e.arg);
      const format = e.format && m(e.format);
      const timeZone = e.timeZone && m(e.timeZone);
      return arg === e.arg && format === e.format && timeZone === e.timeZone ? e : { ...e, arg, ...(format ? { format } : {}), ...(timeZone ? { timeZone } : {}) };
    }
    case 'conditional': {
      const whens = ml(e.whens);
      const thens = ml(e.thens);
      const els = e.else && m(e.else);
      return whens === e.whens && thens === e.thens && els === e.else ? e : { ...e, whens, thens, ...(els ? { else: els } : {}) };
    }
    case 'logical': {
      const args = ml(e.args);
      return args === e.args ? e : { ...e, args };
    }
    case 'make_struct': {
      const fields = ml(e.fields);
      return fields === e.fields ? e : { ...e, fields };
    }
    case 'make_array': {
      const elements = ml(e.elements);
      return elements === e.elements ? e : { ...e, elements };
    }
    case 'field': {
      const arg = m(e.arg);
      return arg === e.arg ? e : { ...e, arg };
    }
    case 'lambda': {
      const body = m(e.body);
      return body === e.body ? e : { ...e, body };
    }
    case 'subquery': {
      const inExpr = e.inExpr && m(e.inExpr);
      const plan = deep ? mapRelExprs(e.plan, f) : e.plan;
      return inExpr === e.inExpr && plan === e.plan ? e : { ...e, plan, ...(inExpr ? { inExpr } : {}) };
    }
  }
}

/** Visits every node of an expression (pre-order, not entering subquery plans). */
export function visitExpr(e: Expr, f: (e: Expr) => void): void {
  rewriteExpr(e, (x) => {
    f(x);
    return undefined;
  });
}

function keys(ks: readonly SortKey[], f: (e: Expr) => Expr): readonly SortKey[] {
  return ks.map((k) => {
    const expr = f(k.expr);
    return expr === k.expr ? k : { ...k, expr };
  });
}

function bound(b: FrameBound, f: (e: Expr) => Expr): FrameBound {
  return b.type === 'preceding' || b.type === 'following' ? { ...b, offset: f(b.offset) } : b;
}

/** Rewrites every expression in a plan tree (deeply, including subquery plans). */
export function mapRelExprs(rel: Rel, fn: ExprFn): Rel {
  return mapNode(rel, (e) => rewriteExpr(e, fn, true), (r) => mapRelExprs(r, fn));
}

/** Rewrites only this node's own expressions with `f` (children untouched). */
export function mapOwnExprs(rel: Rel, f: (e: Expr) => Expr): Rel {
  return mapNode(rel, f, (r) => r);
}

/** Visits every expression of a plan tree, deeply (subquery plans included), without rebuilding anything. */
export function visitRelExprs(rel: Rel, f: (e: Expr) => void): void {
  const ve = (e: Expr): void => {
    f(e);
    switch (e.kind) {
      case 'call':
      case 'logical':
        for (const a of e.args) ve(a);
        return;
      case 'cast':
        ve(e.arg);
        if (e.format) ve(e.format);
        if (e.timeZone) ve(e.timeZone);
        return;
      case 'conditional':
        for (const a of e.whens) ve(a);
        for (const a of e.thens) ve(a);
        if (e.else) ve(e.else);
        return;
      case 'make_struct':
        for (const a of e.fields) ve(a);
        return;
      case 'make_array':
        for (const a of e.elements) ve(a);
        return;
      case 'field':
        ve(e.arg);
        return;
      case 'lambda':
        ve(e.body);
        return;
      case 'subquery':
        if (e.inExpr) ve(e.inExpr);
        visitRelExprs(e.plan, f);
        return;
      default:
        return;
    }
  };
  mapNode(
    rel,
    (e) => {
      ve(e);
      return e;
    },
    (r) => {
      visitRelExprs(r, f);
      return r;
    },
  );
}

function mapNode(rel: Rel, f: (e: Expr) => Expr, sub: (r: Rel) => Rel): Rel {
  switch (rel.kind) {
    case 'scan':
      return rel.pushedFilters ? { ...rel, pushedFilters: rel.pushedFilters.map(f) } : rel;
    case 'values':
      return { ...rel, rows: rel.rows.map((r) => r.map(f)) };
    case 'filter':
      return { ...rel, input: sub(rel.input), predicate: f(rel.predicate) };
    case 'project':
      return { ...rel, input: sub(rel.input), exprs: rel.exprs.map(f) };
    case 'aggregate':
      return {
        ...rel,
        input: sub(rel.input),
        groupBy: rel.groupBy.map((g) => ({ column: g.column, expr: f(g.expr) })),
        aggregates: rel.aggregates.map(
          (a): AggregateCall => ({
            ...a,
            args: a.args.map(f),
            orderBy: keys(a.orderBy, f),
            ...(a.having ? { having: { max: a.having.max, expr: f(a.having.expr) } } : {}),
            ...(a.filter ? { filter: f(a.filter) } : {}),
          }),
        ),
      };
    case 'join':
      return {
        ...rel,
        left: sub(rel.left),
        right: sub(rel.right),
        ...(rel.condition ? { condition: f(rel.condition) } : {}),
        ...(rel.equiKeys ? { equiKeys: rel.equiKeys.map((k) => ({ left: f(k.left), right: f(k.right), nullSafe: k.nullSafe })) } : {}),
      };
    case 'sort':
      return { ...rel, input: sub(rel.input), keys: keys(rel.keys, f) };
    case 'limit':
      return { ...rel, input: sub(rel.input) };
    case 'window':
      return {
        ...rel,
        input: sub(rel.input),
        calls: rel.calls.map(
          (w): WindowCall => ({
            ...w,
            args: w.args.map(f),
            partitionBy: w.partitionBy.map(f),
            orderBy: keys(w.orderBy, f),
            ...(w.frame ? { frame: { unit: w.frame.unit, start: bound(w.frame.start, f), end: bound(w.frame.end, f) } } : {}),
          }),
        ),
      };
    case 'setop':
      return { ...rel, inputs: rel.inputs.map(sub) };
    case 'unnest':
      return { ...rel, arrays: rel.arrays.map(f) };
    case 'with':
      return { ...rel, ctes: rel.ctes.map((c) => ({ ...c, plan: sub(c.plan) })), body: sub(rel.body) };
    case 'cte_ref':
      return rel;
    case 'recursive_cte':
      return { ...rel, base: sub(rel.base), recursive: sub(rel.recursive) };
    case 'sample':
      return { ...rel, input: sub(rel.input) };
    case 'array_scan':
      return { ...rel, array: f(rel.array) };
  }
}

/** Direct children of a relation. */
export function relInputs(rel: Rel): readonly Rel[] {
  switch (rel.kind) {
    case 'filter':
    case 'project':
    case 'aggregate':
    case 'sort':
    case 'limit':
    case 'window':
    case 'sample':
      return [rel.input];
    case 'join':
      return [rel.left, rel.right];
    case 'setop':
      return rel.inputs;
    case 'with':
      return [...rel.ctes.map((c) => c.plan), rel.body];
    case 'recursive_cte':
      return [rel.base, rel.recursive];
    default:
      return [];
  }
}

/** Whether an expression calls a volatile function (RAND, GENERATE_UUID, ...). */
export function isVolatileExpr(e: Expr): boolean {
  let v = false;
  rewriteExpr(e, (x) => {
    if (x.kind === 'call' && (lookupFunction(x.name) as { volatile?: boolean } | undefined)?.volatile) v = true;
    return undefined;
  });
  return v;
}
