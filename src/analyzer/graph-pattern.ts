// Graph patterns made flat (graph-patterns.md, subpath pattern and quantified path pattern): subpaths are inlined and
// each quantified edge or subpath is repeated a fixed number of times, one flat pattern per combination of counts
// (the page: a bounded quantifier is the union of the fixed ones). Where two node patterns end up next to each other
// they are one node (the page's SAME of consecutive node patterns); the compiler joins them on identity. The rules
// the page gives (and the reference resolver's wording, zetasql/analyzer/graph_query_resolver.cc) are checked here.
import type * as A from '../../grammar/ast.js';
import { sqlError } from './errors.js';

const lower = (s: string) => s.toLowerCase();

/** A variable declared in a quantified term: an ARRAY of its copies outside it. */
export interface GroupVar {
  kind: 'node' | 'edge';
  copies: string[];
}

export interface FlatPattern {
  /** Paths of node and edge patterns only; adjacent node patterns are one node. */
  pattern: A.GraphPattern;
  /** By the name as declared. */
  groups: Map<string, GroupVar>;
  /** Subpath WHERE clauses, one per repetition (their variables renamed to the repetition's copies). */
  conds: A.Expr[];
  /** Path modes of subpaths (graph-patterns.md: a mode applies to the subpath it restricts): the flat elements each holds. */
  modes: PathModeScope[];
}

export interface PathModeScope {
  mode: 'TRAIL' | 'ACYCLIC';
  els: Set<A.GraphElementPattern>;
}

/** A subpath's restrictive path mode (WALK keeps every path), if any. */
function modeOf(p: A.GraphPathPattern): 'TRAIL' | 'ACYCLIC' | undefined {
  const w = (p.prefix ?? '').split(' ').find((x) => x === 'TRAIL' || x === 'ACYCLIC');
  return w as 'TRAIL' | 'ACYCLIC' | undefined;
}

/** The most fixed-length patterns one MATCH may expand into. */
const MAX_EXPANSIONS = 64;

const isQuantified = (e: A.GraphElementPattern) => e.quantifier !== undefined;

/** Variables an element list declares (subpaths included), lowercased. */
function declared(els: readonly A.GraphElementPattern[], out = new Set<string>()): Set<string> {
  for (const e of els) {
    if (e.variable) out.add(lower(e.variable));
    if (e.path) declared(e.path.elements, out);
  }
  return out;
}

/** Heads of the names an expression reads (`a` of `a.x`), lowercased. */
function namesRead(x: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(x)) x.forEach((y) => namesRead(y, out));
  else if (x !== null && typeof x === 'object') {
    const o = x as Record<string, unknown>;
    if (o.kind === 'PathExpr') out.add(lower((o.parts as string[])[0]!));
    for (const k in o) if (k !== 'loc') namesRead(o[k], out);
  }
  return out;
}

/** `x` with the names `map` has renamed where a path starts with them. */
export function renameVars<T>(x: T, map: ReadonlyMap<string, string>): T {
  if (!map.size) return x;
  if (Array.isArray(x)) return x.map((y) => renameVars(y, map)) as T;
  if (x === null || typeof x !== 'object') return x;
  const o = x as Record<string, unknown>;
  if (o.kind === 'PathExpr') {
    const parts = o.parts as string[];
    const to = map.get(lower(parts[0]!));
    if (to) return { ...o, parts: [to, ...parts.slice(1)] } as T;
  }
  const out: Record<string, unknown> = {};
  for (const k in o) out[k] = k === 'loc' ? o[k] : renameVars(o[k], map);
  return out as T;
}

interface Stats {
  nodes: number;
  length: number;
  quantified: boolean;
}

/** Checks one quantifier's bounds (graph-patterns.md: a positive bound; lower bound at most the upper). */
function checkBounds(q: NonNullable<A.GraphElementPattern['quantifier']>): void {
  if (q.max === undefined) throw sqlError('Unbounded quantifier is not supported: a quantifier needs an upper bound, {n} or {[m], n}', q.loc);
  if (q.max <= 0) throw sqlError('Value of upper bound must be greater than zero', q.loc);
  if (q.min! > q.max) throw sqlError(`Invalid lower bound: lower bound cannot be greater than upper bound: ${q.min} > ${q.max}`, q.loc);
}

/** Minimum node count and path length of a term list, checking the quantifier rules on the way. */
function validate(els: readonly A.GraphElementPattern[], outerScope: Set<string>): Stats {
  const s: Stats = { nodes: 0, length: 0, quantified: false };
  for (const e of els) {
    let t: Stats;
    if (e.kind === 'node') t = { nodes: 1, length: 0, quantified: false };
    else if (e.kind === 'edge') t = { nodes: e.quantifier ? 2 : 0, length: 1, quantified: false };
    else {
      const p = e.path!;
      if (p.variable) throw sqlError('Path variables cannot be assigned on subpaths', p.loc);
      const words = (p.prefix ?? '').split(' ').filter((w) => w && w !== 'PATH' && w !== 'PATHS');
      if (words.some((w) => w === 'ANY' || w === 'ALL' || w === 'SHORTEST' || w === 'CHEAPEST')) throw sqlError('Path search prefix is not supported in a subpath', p.loc);
      if (words.length > 1 || (words.length && !['WALK', 'TRAIL', 'ACYCLIC'].includes(words[0]!))) throw sqlError(`The path mode ${p.prefix} is not supported by this emulator (served: WALK, TRAIL, ACYCLIC)`, p.loc);
      const inside = declared(p.elements);
      // A subpath's WHERE sees only the variables declared within it.
      if (e.where) for (const n of namesRead(e.where)) if (outerScope.has(n) && !inside.has(n)) throw sqlError(`Unrecognized name: ${n}`, e.where.loc);
      t = validate(p.elements, outerScope);
    }
    if (e.quantifier) {
      if (t.quantified) throw sqlError('Nested quantifiers are not allowed', e.quantifier.loc);
      if (t.length === 0) throw sqlError('Minimum path length of a path-primary within a quantified path pattern cannot be 0', e.quantifier.loc);
      checkBounds(e.quantifier);
      t = { nodes: t.nodes * e.quantifier.min!, length: t.length * e.quantifier.min!, quantified: true };
    }
    s.nodes += t.nodes;
    s.length += t.length;
    s.quantified ||= t.quantified;
  }
  return s;
}

/** Quantified terms in pattern order (quantifiers do not nest, so none is inside another). */
function quantifiedTerms(els: readonly A.GraphElementPattern[], out: A.GraphElementPattern[] = []): A.GraphElementPattern[] {
  for (const e of els) {
    if (isQuantified(e)) out.push(e);
    else if (e.path) quantifiedTerms(e.path.elements, out);
  }
  return out;
}

/** Variables declared outside any quantified term, lowercased. */
function singletons(els: readonly A.GraphElementPattern[], out = new Set<string>()): Set<string> {
  for (const e of els) {
    if (isQuantified(e)) continue;
    if (e.variable) out.add(lower(e.variable));
    if (e.path) singletons(e.path.elements, out);
  }
  return out;
}

/** A variable's kind where the term list declares it. */
function kindOf(els: readonly A.GraphElementPattern[], v: string): 'node' | 'edge' | undefined {
  for (const e of els) {
    if (e.variable && lower(e.variable) === v) return e.kind === 'edge' ? 'edge' : 'node';
    const k = e.path ? kindOf(e.path.elements, v) : undefined;
    if (k) return k;
  }
  return undefined;
}

/**
 * The flat patterns of a MATCH, or undefined when it has neither a subpath nor a quantifier (nothing to flatten).
 * `fresh` names the copies of variables in each repetition.
 */
export function flatPatterns(pattern: A.GraphPattern, fresh: (p: string) => string): FlatPattern[] | undefined {
  const all = pattern.paths.flatMap((p) => p.elements);
  if (!all.some((e) => e.kind === 'subpath' || isQuantified(e))) return undefined;
  const scope = declared(all);
  for (const p of pattern.paths) {
    if (validate(p.elements, scope).nodes === 0) throw sqlError('Minimum node count of path pattern cannot be 0', p.loc);
  }
  const terms = pattern.paths.flatMap((p) => quantifiedTerms(p.elements));
  // Group variables: declared in one quantified term only, and never as a singleton (graph-patterns.md).
  const single = new Set(pattern.paths.flatMap((p) => [...singletons(p.elements)]));
  const owner = new Map<string, A.GraphElementPattern>();
  const groupNames = new Map<string, { name: string; kind: 'node' | 'edge' }>();
  for (const t of terms) {
    const inner = t.kind === 'edge' ? [t] : t.path!.elements;
    for (const v of declared(inner)) {
      const name = findName(inner, v)!;
      if (single.has(v)) throw sqlError(`Variable name: ${name} cannot be used in both quantified and unquantified patterns`, t.loc);
      if (owner.has(v) && owner.get(v) !== t) throw sqlError(`Group variable ${name} is multiply declared`, t.loc);
      owner.set(v, t);
      groupNames.set(v, { name, kind: kindOf(inner, v)! });
    }
  }
  let combos: number[][] = [[]];
  for (const t of terms) combos = combos.flatMap((c) => Array.from({ length: t.quantifier!.max! - t.quantifier!.min! + 1 }, (_, i) => [...c, t.quantifier!.min! + i]));
  if (combos.length > MAX_EXPANSIONS) throw sqlError(`This pattern expands into ${combos.length} fixed-length patterns; this emulator takes at most ${MAX_EXPANSIONS} (narrow the quantifiers)`, pattern.loc);
  return combos.map((counts) => {
    const groups = new Map<string, GroupVar>();
    for (const [v, g] of groupNames) groups.set(v, { kind: g.kind, copies: [] });
    const conds: A.Expr[] = [];
    const modes: PathModeScope[] = [];
    let ti = 0;
    // A subpath under a path mode: its elements (with its implicit end nodes) make one scope.
    const scoped = (p: A.GraphPathPattern, out: A.GraphElementPattern[], body: () => void): void => {
      const mode = modeOf(p);
      const start = out.length;
      body();
      if (!mode) return;
      if (out[start]?.kind === 'edge') out.splice(start, 0, { kind: 'node', loc: p.loc });
      if (out[out.length - 1]?.kind === 'edge') out.push({ kind: 'node', loc: p.loc });
      modes.push({ mode, els: new Set(out.slice(start)) });
    };
    const expand = (els: readonly A.GraphElementPattern[], rename: Map<string, string>, out: A.GraphElementPattern[]): void => {
      for (const e of els) {
        if (isQuantified(e)) {
          const k = counts[ti++]!;
          const inner = e.kind === 'edge' ? [{ ...e, quantifier: undefined }] : e.path!.elements;
          const vars = declared(inner);
          for (let i = 0; i < k; i++) {
            const copy = new Map(rename);
            for (const v of vars) {
              const c = fresh('q');
              copy.set(v, c);
              groups.get(v)!.copies.push(c);
            }
            // A quantified edge repeats as edges between anonymous nodes: (x)-[e1]->()-[e2]->(y).
            if (e.kind === 'edge' && i > 0) out.push({ kind: 'node', loc: e.loc });
            if (e.kind === 'subpath') scoped(e.path!, out, () => expand(inner, copy, out));
            else expand(inner, copy, out);
            if (e.kind === 'subpath' && e.where) conds.push(renameVars(e.where, copy));
          }
          continue;
        }
        if (e.kind === 'subpath') {
          scoped(e.path!, out, () => expand(e.path!.elements, rename, out));
          if (e.where) conds.push(renameVars(e.where, rename));
          continue;
        }
        const to = e.variable ? rename.get(lower(e.variable)) : undefined;
        out.push(rename.size ? { ...renameVars(e, rename), ...(to ? { variable: to } : {}) } : e);
      }
    };
    const paths = pattern.paths.map((p) => {
      const out: A.GraphElementPattern[] = [];
      expand(p.elements, new Map(), out);
      return { ...p, elements: dropBareNodes(out, modes) };
    });
    const named = new Map([...groups].map(([v, g]) => [groupNames.get(v)!.name, g]));
    return { pattern: { ...pattern, paths }, groups: named, conds, modes };
  });
}

function findName(els: readonly A.GraphElementPattern[], v: string): string | undefined {
  for (const e of els) {
    if (e.variable && lower(e.variable) === v) return e.variable;
    const n = e.path ? findName(e.path.elements, v) : undefined;
    if (n) return n;
  }
  return undefined;
}

/** A node pattern next to another node pattern is that node: an anonymous one without conditions adds nothing. */
function dropBareNodes(els: A.GraphElementPattern[], modes: PathModeScope[]): A.GraphElementPattern[] {
  const bare = (e: A.GraphElementPattern | undefined) => e?.kind === 'node' && !e.variable && !e.label && !e.where && !e.props && !e.cost;
  // The node kept stands for the one dropped in the path-mode scopes that held it.
  const inherit = (kept: A.GraphElementPattern, dropped: A.GraphElementPattern) => modes.forEach((m) => m.els.has(dropped) && m.els.add(kept));
  const out: A.GraphElementPattern[] = [];
  for (const e of els) {
    const prev = out[out.length - 1];
    if (prev?.kind === 'node' && e.kind === 'node') {
      if (bare(e)) {
        inherit(prev, e);
        continue;
      }
      if (bare(prev)) {
        inherit(e, prev);
        out.pop();
      }
    }
    out.push(e);
  }
  return out;
}

/** A COST expression's static rules (graph-patterns.md, element pattern: only on edges; numeric). */
export function checkCost(e: A.GraphElementPattern): void {
  const c = e.cost!;
  if (e.kind !== 'edge') throw sqlError('Cost definition is only allowed on a graph edge pattern', c.loc);
  if (c.kind === 'NullLiteral') throw sqlError('COST expression cannot be NULL literal', c.loc);
  // Literals are typed here; other expressions get their type where the cost is summed.
  if (c.kind === 'StringLiteral' || c.kind === 'BytesLiteral' || c.kind === 'BoolLiteral' || (c.kind === 'TypedLiteral' && !['NUMERIC', 'BIGNUMERIC', 'BIGDECIMAL', 'DECIMAL'].includes(c.typeName))) throw sqlError('Cost expression must be a numerical type', c.loc);
}

/** ANY CHEAPEST needs a COST in the path, and in every quantified part of it (graph-patterns.md, path cost expression). */
export function checkCheapest(path: A.GraphPathPattern): void {
  const hasCost = (els: readonly A.GraphElementPattern[]): boolean => els.some((e) => (e.kind === 'edge' && e.cost !== undefined) || (e.path !== undefined && hasCost(e.path.elements)));
  const walk = (els: readonly A.GraphElementPattern[]): void => {
    for (const e of els) {
      const inner = e.kind === 'subpath' ? e.path!.elements : [e];
      if (e.quantifier && !hasCost(inner)) throw sqlError('Quantified pattern in CHEAPEST must include at least one edge cost expression', e.loc);
      if (e.path) walk(e.path.elements);
    }
  };
  walk(path.elements);
  if (!hasCost(path.elements)) throw sqlError('CHEAPEST search prefix must include at least one edge cost expression', path.loc);
}
