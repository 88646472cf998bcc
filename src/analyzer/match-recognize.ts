// MATCH_RECOGNIZE (FROM-item suffix and pipe operator), ONE ROW PER MATCH.
//
// Lowered at AST level into a query the analyzer already handles:
//   __mr_s1: the input numbered in (PARTITION BY, ORDER BY) order, with one
//            BOOL column per DEFINE (PREV/NEXT become LAG/LEAD windows);
//   __mr_m:  per partition, ARRAY_AGG of (row number, define flags) in order,
//            matched by `$match_recognize` (a backtracking row-pattern
//            matcher registered below) into (match number, row, classifier);
//   result:  matches LEFT JOIN the numbered rows, grouped per match; MEASURES
//            aggregates see only the match's rows (symbol-qualified columns
//            `a.col` only the rows classified `a`); FIRST/LAST,
//            MATCH_NUMBER(), MATCH_ROW_NUMBER(), CLASSIFIER() are rewritten.
import type * as A from '../../grammar/ast.js';
import { defineScalar, sig } from '../functions/signature.js';
import { fail } from '../functions/vec.js';
import { lookupFunction } from '../functions/registry.js';
import { T, arrayOf, structOf } from '../types/types.js';
import type { Value } from '../types/values.js';
import { rowKernel } from '../functions/vec.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { resolveExpr } from './expr.js';
import { Scope } from './scope.js';

// ---------------------------------------------------------------- matcher

type PNode =
  | { t: 'v'; i: number; n: string }
  | { t: 'e' }
  | { t: '^' }
  | { t: '$' }
  | { t: 'c'; x: PNode[] }
  | { t: 'a'; x: PNode[] }
  | { t: 'r'; p: PNode; min: number; max: number | null; g: boolean };

interface Spec {
  p: PNode;
  skipNext: boolean;
  longest: boolean;
}

const MATCH_TYPE = arrayOf(structOf([
  { name: 'mn', type: T.INT64 },
  { name: 'rn', type: T.INT64 },
  { name: 'cls', type: T.STRING },
  { name: 'idx', type: T.INT64 },
]));

function matchPartition(rows: readonly Value[], spec: Spec): Value[] {
  const n = rows.length;
  const flag = (row: number, i: number): boolean => i < 0 || (rows[row] as Value[])[i + 1] === true;
  const lab = new Array<string>(n);
  let steps = 0;
  // m(node, pos, k): tries node at pos in preference order; k(end) accepts.
  const m = (node: PNode, pos: number, k: (p: number) => boolean): boolean => {
    if (++steps > 5_000_000) fail('MATCH_RECOGNIZE pattern matching exceeded its step limit');
    switch (node.t) {
      case 'v':
        if (pos < n && flag(pos, node.i)) {
          lab[pos] = node.n;
          return k(pos + 1);
        }
        return false;
      case 'e':
        return k(pos);
      case '^':
        return pos === 0 && k(pos);
      case '$':
        return pos === n && k(pos);
      case 'c': {
        const go = (j: number, p: number): boolean => (j === node.x.length ? k(p) : m(node.x[j]!, p, (q) => go(j + 1, q)));
        return go(0, pos);
      }
      case 'a':
        for (const x of node.x) if (m(x, pos, k)) return true;
        return false;
      case 'r': {
        const max = node.max ?? Infinity;
        const rep = (count: number, p: number): boolean => {
          const more = () => count < max && m(node.p, p, (q) => (q === p && count >= node.min ? false : rep(count + 1, q)));
          const stop = () => count >= node.min && k(p);
          return node.g ? more() || stop() : stop() || more();
        };
        return rep(0, pos);
      }
    }
  };
  const out: Value[] = [];
  let mn = 0;
  let pos = 0;
  while (pos < n) {
    let end = -1;
    let labels: string[] = [];
    if (spec.longest) {
      m(spec.p, pos, (e) => {
        if (e > end) {
          end = e;
          labels = lab.slice(pos, e);
        }
        return false;
      });
    } else {
      m(spec.p, pos, (e) => {
        end = e;
        labels = lab.slice(pos, e);
        return true;
      });
    }
    if (end < 0) {
      pos++;
      continue;
    }
    mn++;
    if (end === pos) out.push([BigInt(mn), null, null, null]);
    for (let r = pos; r < end; r++) out.push([BigInt(mn), (rows[r] as Value[])[0]!, labels[r - pos]!, BigInt(r - pos + 1)]);
    pos = end === pos || spec.skipNext ? pos + 1 : end;
  }
  return out;
}

if (!lookupFunction('$match_recognize')) {
  defineScalar('$match_recognize', [
    sig(['ANY', 'STRING'], () => MATCH_TYPE, rowKernel(MATCH_TYPE, (v) => matchPartition(v[0] as Value[], JSON.parse(v[1] as string) as Spec))),
  ], { volatile: true });
}

// ---------------------------------------------------------------- AST templates

const P = (loc: A.Loc, ...parts: string[]): A.Expr => ({ kind: 'PathExpr', loc, parts });
const call = (loc: A.Loc, name: string, args: A.Expr[], extra: Partial<A.FunctionCall> = {}): A.FunctionCall => ({ kind: 'FunctionCall', loc, name: [name], safe: false, distinct: false, args, ...extra });
const str = (loc: A.Loc, value: string): A.Expr => ({ kind: 'StringLiteral', loc, value, raw: false });
const item = (expr: A.Expr, alias?: string): A.SelectExprItem => ({ kind: 'SelectExpr', loc: expr.loc, expr, ...(alias !== undefined ? { alias } : {}) });
const select = (loc: A.Loc, s: Omit<A.Select, 'kind' | 'loc' | 'distinct'>): A.Query => ({ kind: 'Query', loc, body: { kind: 'Select', loc, distinct: false, ...s }, pipes: [] });
const tref = (loc: A.Loc, name: string, alias?: string): A.TableRef => ({ kind: 'TableRef', loc, path: [name], ...(alias ? { alias } : {}) });

function constInt(an: Analyzer, e: A.Expr | undefined, what: string): number | null {
  if (!e) return null;
  const r = resolveExpr(an, e, { scope: new Scope(), clause: 'MATCH_RECOGNIZE' });
  if (r.kind !== 'literal' || r.type.kind !== 'INT64') throw sqlError(`${what} must be an INT64 literal or query parameter`, e.loc);
  if (r.value === null) throw sqlError(`${what} must not be NULL`, e.loc);
  const v = Number(r.value as bigint);
  if (v < 0) throw sqlError(`${what} must not be negative`, e.loc);
  return v;
}

function compilePattern(an: Analyzer, p: A.RowPattern, defs: Map<string, number>, written: Map<string, string> = new Map()): PNode {
  switch (p.kind) {
    case 'PatternVar': {
      // CLASSIFIER() reports the name as first written in the pattern.
      const k = p.name.toLowerCase();
      if (!written.has(k)) written.set(k, p.name);
      return { t: 'v', i: defs.get(k) ?? -1, n: written.get(k)! };
    }
    case 'PatternEmpty':
      return { t: 'e' };
    case 'PatternAnchor':
      return { t: p.anchor };
    case 'PatternConcat':
      return { t: 'c', x: p.items.map((x) => compilePattern(an, x, defs, written)) };
    case 'PatternAlt':
      return { t: 'a', x: p.alternatives.map((x) => compilePattern(an, x, defs, written)) };
    case 'PatternQuantified': {
      const inner = compilePattern(an, p.pattern, defs, written);
      const g = !p.reluctant;
      switch (p.quantifier) {
        case '*':
          return { t: 'r', p: inner, min: 0, max: null, g };
        case '+':
          return { t: 'r', p: inner, min: 1, max: null, g };
        case '?':
          return { t: 'r', p: inner, min: 0, max: 1, g };
        default: {
          const lo = constInt(an, p.min, 'Quantifier bound');
          const hi = p.exact ? lo : constInt(an, p.max, 'Quantifier bound');
          if (lo !== null && hi !== null && lo > hi) throw sqlError('Quantifier lower bound cannot exceed the upper bound', p.loc);
          return { t: 'r', p: inner, min: lo ?? 0, max: hi, g };
        }
      }
    }
  }
}

function mapAst(node: unknown, f: (x: Record<string, unknown>) => unknown): unknown {
  if (Array.isArray(node)) return node.map((x) => mapAst(x, f));
  if (node === null || typeof node !== 'object' || node instanceof Uint8Array) return node;
  const o = node as Record<string, unknown>;
  const r = f(o);
  if (r !== undefined) return r;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = mapAst(v, f);
  return out;
}

const isAggregateName = (name: string[]): boolean => name.length === 1 && lookupFunction(name[0]!)?.kind === 'aggregate';

/**
 * The query equivalent to `input MATCH_RECOGNIZE(spec)`. `inputAlias` names
 * the input rows for qualified references (`t1.x`).
 */
export function matchRecognizeQuery(an: Analyzer, input: A.FromItem, inputAlias: string | undefined, spec: A.MatchRecognizeSpec, loc: A.Loc): A.Query {
  const defs = new Map<string, number>();
  spec.define.forEach((d, i) => {
    const k = d.name.toLowerCase();
    if (defs.has(k)) throw sqlError(`Pattern variable ${d.name} is defined more than once`, d.expr.loc);
    defs.set(k, i);
  });
  const vars = new Set<string>();
  const collect = (p: A.RowPattern): void => {
    if (p.kind === 'PatternVar') vars.add(p.name.toLowerCase());
    else if (p.kind === 'PatternConcat') p.items.forEach(collect);
    else if (p.kind === 'PatternAlt') p.alternatives.forEach(collect);
    else if (p.kind === 'PatternQuantified') collect(p.pattern);
  };
  collect(spec.pattern);
  for (const d of spec.define) if (!vars.has(d.name.toLowerCase())) throw sqlError(`Pattern variable ${d.name} is defined but not used in the pattern`, d.expr.loc);
  let longest = false;
  for (const o of spec.options ?? []) {
    if (o.name.toLowerCase() !== 'use_longest_match') throw sqlError(`Unknown MATCH_RECOGNIZE option ${o.name}`, loc);
    const r = resolveExpr(an, o.value as A.Expr, { scope: new Scope(), clause: 'MATCH_RECOGNIZE OPTIONS' });
    if (r.kind !== 'literal' || r.type.kind !== 'BOOL') throw sqlError('Option use_longest_match must be a BOOL literal or query parameter', loc);
    longest = r.value === true;
  }
  const m: Spec = { p: compilePattern(an, spec.pattern, defs), skipNext: spec.afterMatchSkip === 'TO NEXT ROW', longest };

  const win = (): A.WindowSpec => ({ kind: 'WindowSpec', loc, partitionBy: spec.partitionBy, orderBy: spec.orderBy });
  // DEFINE: PREV/NEXT navigation → LAG/LEAD over the pattern's window.
  const defineExpr = (e: A.Expr): A.Expr =>
    mapAst(e, (o) => {
      if (o.kind !== 'FunctionCall') return undefined;
      const f = o as unknown as A.FunctionCall;
      const nm = f.name.length === 1 ? f.name[0]!.toUpperCase() : '';
      if (nm !== 'PREV' && nm !== 'NEXT') return undefined;
      return call(f.loc, nm === 'PREV' ? 'LAG' : 'LEAD', f.args.map(defineExpr), { over: win() });
    }) as A.Expr;

  const pcount = spec.partitionBy.length;
  // __mr_s1
  const s1Items: A.SelectItem[] = [
    { kind: 'SelectStar', loc },
    item(call(loc, 'ROW_NUMBER', [], { over: { kind: 'WindowSpec', loc, partitionBy: [], orderBy: [...spec.partitionBy.map((e): A.OrderByItem => ({ kind: 'OrderByItem', loc: e.loc, expr: e })), ...spec.orderBy] } }), '__mr_rn'),
    ...spec.partitionBy.map((e, i) => item(e, `__mr_p${i}`)),
    ...spec.define.map((d, i) => item(defineExpr(d.expr), `__mr_d${i}`)),
  ];
  const s1 = select(loc, { items: s1Items, from: input });
  // __mr_m
  const rowStruct: A.Expr = { kind: 'StructExpr', loc, syntax: 'struct', fields: [{ expr: P(loc, '__mr_rn') }, ...spec.define.map((_, i) => ({ expr: P(loc, `__mr_d${i}`) }))] };
  const pcols = Array.from({ length: pcount }, (_, i) => P(loc, `__mr_p${i}`));
  const s2 = select(loc, {
    items: [...pcols.map((e) => item(e)), item(call(loc, 'ARRAY_AGG', [rowStruct], { orderBy: [{ kind: 'OrderByItem', loc, expr: P(loc, '__mr_rn') }] }), '__mr_rows')],
    from: { kind: 'SubqueryRef', loc, query: s1 },
    ...(pcount ? { groupBy: { kind: 'GroupBy', loc, all: false, items: pcols } } : {}),
  });
  const matches = select(loc, {
    items: [
      ...pcols.map((e) => item(e)),
      item(P(loc, '__mr_x', 'mn'), '__mr_mn'),
      item(P(loc, '__mr_x', 'rn'), '__mr_mrn'),
      item(P(loc, '__mr_x', 'cls'), '__mr_cls'),
      item(P(loc, '__mr_x', 'idx'), '__mr_idx'),
    ],
    from: {
      kind: 'JoinRef', loc, joinType: 'CROSS', natural: false,
      left: { kind: 'SubqueryRef', loc, query: s2 },
      right: { kind: 'UnnestRef', loc, exprs: [call(loc, '$match_recognize', [P(loc, '__mr_rows'), str(loc, JSON.stringify(m))])], alias: '__mr_x' },
    } as unknown as A.FromItem,
  });

  // Measures.
  const rowsPresent: A.Expr = { kind: 'IsExpr', loc, expr: P(loc, '__mr_m', '__mr_mrn'), not: true, what: 'NULL' };
  const measure = (e: A.Expr): A.Expr => {
    const visit = (x: unknown, inAgg: { syms: Set<string> } | undefined): unknown =>
      mapAst(x, (o) => {
        if (o.kind === 'PathExpr') {
          const parts = o.parts as string[];
          if (parts.length >= 2 && vars.has(parts[0]!.toLowerCase())) {
            if (!inAgg) throw sqlError(`Pattern variable ${parts[0]} can only be referenced inside an aggregate function in MEASURES`, o.loc as A.Loc);
            inAgg.syms.add(parts[0]!.toLowerCase());
            return { ...o, parts: parts.slice(1) };
          }
          return undefined;
        }
        if (o.kind !== 'FunctionCall') return undefined;
        const f = o as unknown as A.FunctionCall;
        const nm = f.name.length === 1 ? f.name[0]!.toUpperCase() : '';
        if (nm === 'MATCH_NUMBER' && f.args.length === 0) return P(f.loc, '__mr_m', '__mr_mn');
        if (nm === 'MATCH_ROW_NUMBER' && f.args.length === 0) return P(f.loc, '__mr_m', '__mr_idx');
        if (nm === 'CLASSIFIER' && f.args.length === 0) return P(f.loc, '__mr_m', '__mr_cls');
        const firstLast = nm === 'FIRST' || nm === 'LAST';
        if ((firstLast || isAggregateName(f.name)) && !f.over) {
          if (inAgg) return undefined;
          const ctx = { syms: new Set<string>() };
          const args = f.args.map((a) => visit(a, ctx) as A.Expr);
          const extra = {
            ...(f.orderBy ? { orderBy: f.orderBy.map((ob) => ({ ...ob, expr: visit(ob.expr, ctx) as A.Expr })) } : {}),
            ...(f.where ? { where: visit(f.where, ctx) as A.Expr } : {}),
          };
          if (ctx.syms.size > 1) throw sqlError('An aggregate in MEASURES cannot reference more than one pattern variable', f.loc);
          let filter: A.Expr = rowsPresent;
          const sym = [...ctx.syms][0];
          if (sym !== undefined) filter = { kind: 'BinaryExpr', loc: f.loc, op: 'AND', left: filter, right: { kind: 'BinaryExpr', loc: f.loc, op: '=', left: call(f.loc, 'LOWER', [P(f.loc, '__mr_m', '__mr_cls')]), right: str(f.loc, sym) } };
          if (extra.where) filter = { kind: 'BinaryExpr', loc: f.loc, op: 'AND', left: filter, right: extra.where };
          if (firstLast) {
            return call(f.loc, 'ANY_VALUE', args, { where: filter, having: { kind: nm === 'FIRST' ? 'MIN' : 'MAX', expr: P(f.loc, '__mr_m', '__mr_mrn') } });
          }
          return { ...f, args, ...extra, where: filter };
        }
        return undefined;
      });
    return visit(e, undefined) as A.Expr;
  };
  const outName = (e: A.Expr, i: number): string => (e.kind === 'PathExpr' ? e.parts[e.parts.length - 1]! : `__mr_pcol${i}`);
  const rowsAlias = inputAlias ?? '__mr_rows_in';
  const final = select(loc, {
    items: [...spec.partitionBy.map((e, i) => item(P(loc, '__mr_m', `__mr_p${i}`), outName(e, i))), ...spec.measures.map((x) => item(measure(x.expr), x.alias))],
    from: {
      kind: 'JoinRef', loc, joinType: 'LEFT', natural: false,
      left: tref(loc, '__mr_matches', '__mr_m'),
      right: tref(loc, '__mr_s1', rowsAlias),
      on: { kind: 'BinaryExpr', loc, op: '=', left: P(loc, rowsAlias, '__mr_rn'), right: P(loc, '__mr_m', '__mr_mrn') },
    } as unknown as A.FromItem,
    groupBy: { kind: 'GroupBy', loc, all: false, items: [...Array.from({ length: pcount }, (_, i) => P(loc, '__mr_m', `__mr_p${i}`)), P(loc, '__mr_m', '__mr_mn'),
      // (a bare name would mean the select alias of the partition output column)
      ...spec.partitionBy.map((e) => (e.kind === 'PathExpr' && e.parts.length === 1 ? P(e.loc, rowsAlias, ...e.parts) : e))] },
  });
  return {
    ...final,
    with: {
      kind: 'WithClause', loc, recursive: false,
      ctes: [
        { kind: 'Cte', loc, name: '__mr_s1', query: s1, seesOuter: true },
        { kind: 'Cte', loc, name: '__mr_matches', seesOuter: true, query: { ...matches, body: { ...(matches.body as A.Select), from: { ...((matches.body as A.Select).from as A.JoinRef), left: { kind: 'SubqueryRef', loc, query: { ...s2, body: { ...(s2.body as A.Select), from: tref(loc, '__mr_s1') } } } } as A.FromItem } } },
      ],
    },
  };
}
