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
import { T, arrayOf, isGroupable, structOf, typeToSql } from '../types/types.js';
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

// Rules that need a resolved type (query-syntax.md, MATCH_RECOGNIZE: partition_expr has no floating point or
// non-groupable type; a DEFINE symbol is a boolean expression). The lowering wraps those expressions in
// `$mr_check(expr, 'define|partition line:column')`, which checks the type and passes the value through.
if (!lookupFunction('$mr_check')) {
  defineScalar('$mr_check', [
    sig(['ANY', 'STRING'], (c) => {
      const t = c.argTypes[0]!;
      const [what, line, column] = String(c.args[1]?.constant?.value ?? '').split(/[ :]/);
      const at = { line: Number(line), column: Number(column), offset: 0 };
      if (what === 'define' && t.kind !== 'BOOL') throw sqlError(`MATCH_RECOGNIZE DEFINE predicate should return type BOOL, but returns ${typeToSql(t)}`, at);
      if (what === 'partition' && (t.kind === 'FLOAT64' || !isGroupable(t))) throw sqlError(`Partitioning by expressions of type ${typeToSql(t)} is not allowed in MATCH_RECOGNIZE`, at);
      return t;
    }, (args) => args[0]!),
  ]);
}

/** Largest quantifier bound (query-syntax.md, PATTERN clause: bounds between 0 and 10,000). */
const MAX_BOUND = 10_000;

// ---------------------------------------------------------------- AST templates

const P = (loc: A.Loc, ...parts: string[]): A.Expr => ({ kind: 'PathExpr', loc, parts });
const call = (loc: A.Loc, name: string, args: A.Expr[], extra: Partial<A.FunctionCall> = {}): A.FunctionCall => ({ kind: 'FunctionCall', loc, name: [name], safe: false, distinct: false, args, ...extra });
const str = (loc: A.Loc, value: string): A.Expr => ({ kind: 'StringLiteral', loc, value, raw: false });
const item = (expr: A.Expr, alias?: string): A.SelectExprItem => ({ kind: 'SelectExpr', loc: expr.loc, expr, ...(alias !== undefined ? { alias } : {}) });
const select = (loc: A.Loc, s: Omit<A.Select, 'kind' | 'loc' | 'distinct'>): A.Query => ({ kind: 'Query', loc, body: { kind: 'Select', loc, distinct: false, ...s }, pipes: [] });
const tref = (loc: A.Loc, name: string, alias?: string): A.TableRef => ({ kind: 'TableRef', loc, path: [name], ...(alias ? { alias } : {}) });
const checked = (e: A.Expr, what: 'define' | 'partition'): A.Expr => call(e.loc, '$mr_check', [e, str(e.loc, `${what} ${e.loc.line}:${e.loc.column}`)]);

function constInt(an: Analyzer, e: A.Expr | undefined, what: string): number | null {
  if (!e) return null;
  const r = resolveExpr(an, e, { scope: new Scope(), clause: 'MATCH_RECOGNIZE' });
  if (r.kind !== 'literal' || r.type.kind !== 'INT64') throw sqlError(`${what} must be an INT64 literal or query parameter`, e.loc);
  if (r.value === null) throw sqlError(`${what} must not be NULL`, e.loc);
  const v = Number(r.value as bigint);
  if (v < 0) throw sqlError(`${what} must not be negative`, e.loc);
  if (v > MAX_BOUND) throw sqlError(`${what} must be at most ${MAX_BOUND}`, e.loc);
  return v;
}

function compilePattern(an: Analyzer, p: A.RowPattern, defs: Map<string, number>, written: Map<string, string> = new Map()): PNode {
  switch (p.kind) {
    case 'PatternVar': {
      // CLASSIFIER() reports the name as first written in the pattern.
      const k = p.name.toLowerCase();
      if (!written.has(k)) written.set(k, p.name);
      // query-syntax.md, DEFINE clause: it lists every symbol the pattern uses.
      const i = defs.get(k);
      if (i === undefined) throw sqlError(`Pattern variable \`${p.name}\` is not defined in the DEFINE clause`, p.loc);
      return { t: 'v', i, n: written.get(k)! };
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
          const lo = constInt(an, p.min, 'MATCH_RECOGNIZE quantifier bound');
          const hi = p.exact ? lo : constInt(an, p.max, 'MATCH_RECOGNIZE quantifier bound');
          if (lo !== null && hi !== null && lo > hi) throw sqlError('Quantifier upper bound cannot be smaller than the lower bound', p.loc);
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

/** Calls and column paths of an expression, not looking into subqueries. */
function walkExpr(e: unknown, f: (o: Record<string, unknown>) => void): void {
  if (Array.isArray(e)) return e.forEach((x) => walkExpr(x, f));
  if (e === null || typeof e !== 'object' || e instanceof Uint8Array) return;
  const o = e as Record<string, unknown>;
  if (o.kind === 'Query' || o.kind === 'ScalarSubquery' || o.kind === 'ArraySubquery' || o.kind === 'ExistsSubquery' || o.kind === 'InSubquery') return;
  f(o);
  for (const v of Object.values(o)) if (v && typeof v === 'object') walkExpr(v, f);
}

/** The clause-placement rules of query-syntax.md (MATCH_RECOGNIZE Definitions, MEASURES and DEFINE clauses). */
function checkClauses(spec: A.MatchRecognizeSpec): void {
  for (const e of spec.partitionBy) {
    let column = false;
    walkExpr(e, (o) => {
      if (o.kind === 'PathExpr') column = true;
      if (o.kind === 'FunctionCall' && (o as unknown as A.FunctionCall).over) throw sqlError('Analytic function not allowed in MATCH_RECOGNIZE PARTITION BY clause', o.loc as A.Loc);
    });
    if (!column) throw sqlError('MATCH_RECOGNIZE PARTITION BY expression cannot be a constant', e.loc);
  }
  for (const d of spec.define) {
    walkExpr(d.expr, (o) => {
      if (o.kind !== 'FunctionCall') return;
      const f = o as unknown as A.FunctionCall;
      if (f.over) throw sqlError('Analytic function not allowed in MATCH_RECOGNIZE DEFINE predicate', f.loc);
      if (isAggregateName(f.name)) throw sqlError(`Aggregate function ${f.name[0]!.toUpperCase()} not allowed in MATCH_RECOGNIZE DEFINE predicate`, f.loc);
    });
  }
  for (const m of spec.measures) {
    walkExpr(m.expr, (o) => {
      if (o.kind === 'FunctionCall' && (o as unknown as A.FunctionCall).over) throw sqlError('Analytic function not allowed in MATCH_RECOGNIZE MEASURES clause', o.loc as A.Loc);
    });
  }
}

/**
 * The query equivalent to `input MATCH_RECOGNIZE(spec)`. `inputAlias` names
 * the input rows for qualified references (`t1.x`).
 */
export function matchRecognizeQuery(an: Analyzer, input: A.FromItem, inputAlias: string | undefined, spec: A.MatchRecognizeSpec, loc: A.Loc): A.Query {
  const defs = new Map<string, number>();
  spec.define.forEach((d, i) => {
    const k = d.name.toLowerCase();
    if (defs.has(k)) throw sqlError(`Pattern variable \`${d.name}\` is defined multiple times`, d.expr.loc);
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
  for (const d of spec.define) if (!vars.has(d.name.toLowerCase())) throw sqlError(`Pattern variable \`${d.name}\` is defined but not used in the pattern`, d.expr.loc);
  let longest = false;
  for (const o of spec.options ?? []) {
    if (o.name.toLowerCase() !== 'use_longest_match') throw sqlError(`Unrecognized MATCH_RECOGNIZE option \`${o.name}\``, loc);
    const r = resolveExpr(an, o.value as A.Expr, { scope: new Scope(), clause: 'MATCH_RECOGNIZE OPTIONS' });
    if (r.kind !== 'literal') throw sqlError(`MATCH_RECOGNIZE option \`${o.name}\` requires a boolean literal or parameter`, loc);
    if (r.type.kind !== 'BOOL') throw sqlError(`MATCH_RECOGNIZE option \`${o.name}\` requires a boolean value, but found ${typeToSql(r.type)}`, loc);
    if (r.value === null) throw sqlError(`MATCH_RECOGNIZE option \`${o.name}\` cannot be NULL`, loc);
    longest = r.value === true;
  }
  checkClauses(spec);
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
    ...spec.partitionBy.map((e, i) => item(checked(e, 'partition'), `__mr_p${i}`)),
    ...spec.define.map((d, i) => item(checked(defineExpr(d.expr), 'define'), `__mr_d${i}`)),
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
    const visit = (x: unknown, inAgg: { syms: Set<string>; allRows: boolean } | undefined): unknown =>
      mapAst(x, (o) => {
        if (o.kind === 'PathExpr') {
          const parts = o.parts as string[];
          if (parts.length === 1 && vars.has(parts[0]!.toLowerCase())) throw sqlError(`Pattern variable ${parts[0]} cannot be used as a value table`, o.loc as A.Loc);
          if (parts.length >= 2 && vars.has(parts[0]!.toLowerCase())) {
            if (!inAgg) throw sqlError(`Pattern variable ${parts[0]} can only be referenced inside an aggregate function in MEASURES`, o.loc as A.Loc);
            inAgg.syms.add(parts[0]!.toLowerCase());
            return { ...o, parts: parts.slice(1) };
          }
          if (inAgg) inAgg.allRows = true;
          return undefined;
        }
        if (o.kind !== 'FunctionCall') return undefined;
        const f = o as unknown as A.FunctionCall;
        const nm = f.name.length === 1 ? f.name[0]!.toUpperCase() : '';
        if (nm === 'MATCH_NUMBER' && f.args.length === 0) return P(f.loc, '__mr_m', '__mr_mn');
        // query-syntax.md, MEASURES clause functions: these two differ per row of a match, so must be aggregated.
        if ((nm === 'MATCH_ROW_NUMBER' || nm === 'CLASSIFIER') && f.args.length === 0 && !inAgg) {
          throw sqlError(`MATCH_RECOGNIZE MEASURES clause expression references ${nm}() which is neither grouped nor aggregated`, f.loc);
        }
        if (nm === 'MATCH_ROW_NUMBER' && f.args.length === 0) return P(f.loc, '__mr_m', '__mr_idx');
        if (nm === 'CLASSIFIER' && f.args.length === 0) return P(f.loc, '__mr_m', '__mr_cls');
        const firstLast = nm === 'FIRST' || nm === 'LAST';
        if ((firstLast || isAggregateName(f.name)) && !f.over) {
          if (inAgg) return undefined;
          const ctx = { syms: new Set<string>(), allRows: false };
          const args = f.args.map((a) => visit(a, ctx) as A.Expr);
          const where = f.where ? visit(f.where, ctx) as A.Expr : undefined;
          // query-syntax.md, MEASURES clause: one aggregate ranges over one symbol's rows or over all of them.
          const syms = [...ctx.syms];
          if (syms.length > 1) throw sqlError(`Column access ranges over pattern variable ${syms[1]} in an expression that already ranges over a pattern variable ${syms[0]}`, f.loc);
          if (syms.length === 1 && ctx.allRows) throw sqlError(`Column access ranges over all input rows in an expression that already ranges over a pattern variable ${syms[0]}`, f.loc);
          const extra = {
            ...(f.orderBy ? { orderBy: f.orderBy.map((ob) => ({ ...ob, expr: visit(ob.expr, ctx) as A.Expr })) } : {}),
            ...(where ? { where } : {}),
          };
          if (ctx.syms.size > 1) throw sqlError(`Column access ranges over pattern variable ${[...ctx.syms][1]} in an expression that already ranges over a pattern variable ${[...ctx.syms][0]}`, f.loc);
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
