// FROM items: tables, views, CTE references, subqueries, UNNEST and array paths, table functions, graph and
// MATCH_RECOGNIZE inputs; the range variables of one FROM clause and their names.
import { compileGraphQuery } from './graph-query.js';
import type * as A from '../../grammar/ast.js';
import { T, arrayOf, typeToSql, type SqlType } from '../types/types.js';
import type { Analyzer } from './context.js';
import { sqlError } from './errors.js';
import { resolveExpr } from './expr.js';
import { literal, originOf } from './coercion.js';
import { constantValue, resolveTableRef } from './names.js';
import { isVolatileExpr } from './rewrite.js';
import { matchRecognizeQuery } from './match-recognize.js';
import type { Rel, ResolvedColumn, UnnestRel } from './resolved.js';
import { Correlation, Scope, type RangeVar } from './scope.js';
import { Origin } from './types.js';
import { resolveTvf } from './table-functions.js';
import { checkSample, noteTableRef, sample } from './sample.js';
import { resolvePivot, resolveUnpivot } from './pivot.js';
import { pipeInputs, pipeRangeVars } from './pipe.js';
import { implicitAlias, resolveQuery } from './query.js';
import { resolveJoin } from './joins.js';

/** Range variable over a relation's columns with display names. */
export function rangeOver(name: string, rel: Rel, names: readonly string[]): RangeVar {
  return { name, lname: name.toLowerCase(), columns: rel.columns.map((c, i) => ({ id: c.id, type: c.type, name: names[i] ?? c.name })) };
}

/**
 * Resolves one FROM item into `scope` (adding its range variables) and
 * returns its relation. `outer` is the enclosing query's scope: derived
 * tables see it but not their FROM siblings.
 */
export function resolveFrom(an: Analyzer, item: A.FromItem, scope: Scope, outer: Scope | undefined): Rel {
  if (item.matchRecognize) {
    const { matchRecognize: mr, ...input } = item;
    const inputAlias = 'alias' in input && input.alias ? input.alias : input.kind === 'TableRef' ? input.path[input.path.length - 1] : undefined;
    const q = matchRecognizeQuery(an, input as A.FromItem, inputAlias, mr.spec, mr.loc);
    item = { kind: 'SubqueryRef', loc: mr.loc, query: q, ...(mr.alias ? { alias: mr.alias } : {}) };
  }
  switch (item.kind) {
    case 'JoinRef':
      return resolveJoin(an, item, scope, outer);
    case 'TableRef':
    case 'UnnestRef':
    case 'SubqueryRef':
    case 'TvfRef':
    case 'PivotRef':
    case 'UnpivotRef': {
      const r = resolveLeaf(an, item, scope, outer);
      for (const rv of r.rvs) addFromRangeVar(scope, rv, item.loc, r.arrayScan);
      scope.starList = [...(scope.starList ?? []), ...r.star];
      return r.rel;
    }
    default: {
      const x: { kind: string; loc: A.Loc } = item;
      throw sqlError(`Unsupported FROM item ${x.kind}`, x.loc);
    }
  }
}

/** The range variables holding an UNNEST's aliased WITH OFFSET column: its alias is a name of the FROM clause too. */
const offsetVars = new WeakSet<RangeVar>();

function fromName(rv: RangeVar): string | undefined {
  return rv.lname || (offsetVars.has(rv) ? rv.columns[0]!.name.toLowerCase() : undefined);
}

/**
 * Adds a FROM item's range variable. The names of one FROM clause (explicit or implicit aliases, explicit
 * WITH OFFSET aliases) are unique; the error is worded by the kind of the later item, as the reference words it.
 */
export function addFromRangeVar(scope: Scope, rv: RangeVar, loc: A.Loc, arrayScan = false): void {
  const n = fromName(rv);
  if (n && scope.rangeVars.some((o) => fromName(o) === n)) {
    const shown = rv.lname ? rv.name : rv.columns[0]!.name;
    throw sqlError(arrayScan ? `Duplicate alias ${shown} found` : `Duplicate table alias ${shown} in the same FROM clause`, loc);
  }
  scope.addRangeVar(rv);
}

export interface Leaf {
  rel: Rel;
  rvs: RangeVar[];
  star: ResolvedColumn[];
  /** True when the relation reads columns of earlier FROM items or of an enclosing query (correlated). */
  lateral: boolean;
  /** The columns a correlated UNNEST reads from outside itself (earlier FROM items and enclosing queries). */
  correlatedIds?: ReadonlySet<number>;
  /** An UNNEST (explicit or by path): its name clashes are worded as the reference words them. */
  arrayScan?: boolean;
}

export function resolveLeaf(an: Analyzer, item: A.FromItem, scope: Scope, outer: Scope | undefined): Leaf {
  switch (item.kind) {
    case 'TableRef': {
      // `FROM t, t.arr` / `FROM t.arr`: a path starting at a visible range variable is an implicit UNNEST.
      const first = item.path[0]!;
      if (item.systemTime && item.path.length === 1 && an.findCte(first)) throw sqlError('FOR SYSTEM_TIME AS OF cannot be used with tables defined in WITH clause', item.systemTime.loc);
      if (item.path.length > 1 || !an.findCte(first)) {
        const hit = first.includes('.') ? undefined : scope.peek(first);
        // A one-name path is always a table (query-syntax.md, field_path: "If a path has only one name, it's
        // interpreted as a table").
        if (hit && hit.kind !== 'ambiguous' && item.path.length > 1) {
          if (item.sample) checkSample(an, item.sample, { kind: 'array' }, item.loc);
          const alias = item.alias ?? item.path[item.path.length - 1]!;
          return unnestLeaf(an, [{ kind: 'PathExpr', loc: item.loc, parts: item.path }], alias, item.withOffset, scope, item.loc, undefined, undefined, true);
        }
      }
      const pipe = pipeInputs.get(item);
      if (pipe && (pipe.pipeVars || pipe.hidden)) {
        // The current table of a pipe: its visible columns unqualified, its table aliases by name.
        const hiddenIds = new Set(pipe.rel.columns.slice(pipe.rel.columns.length - (pipe.hidden ?? 0)).map((c) => c.id));
        const name = item.alias ?? '';
        const rv: RangeVar = pipe.isValueTable
          ? { name, lname: name.toLowerCase(), columns: [], value: { ...pipe.rel.columns[0]!, name } }
          : { ...rangeOver(name, pipe.rel, pipe.names), ...(hiddenIds.size ? { hidden: hiddenIds } : {}) };
        const star = rv.value ? [rv.value] : rv.columns.filter((c) => !hiddenIds.has(c.id));
        return { rel: pipe.rel, rvs: [rv, ...pipeRangeVars(pipe)], star, lateral: false };
      }
      const r = resolveTableRef(an, item, outer);
      noteTableRef(item, r.target);
      const rv = r.isValueTable
        ? { name: r.alias, lname: r.alias.toLowerCase(), columns: [], value: { ...r.rel.columns[0]!, name: r.alias } }
        : rangeOver(r.alias, r.rel, r.names);
      let rel = r.rel;
      if (item.sample) rel = sample(an, rel, item.sample, r.target, item.loc);
      const shown = rv.columns.length - (r.hidden ?? 0);
      const star = rv.value ? [rv.value] : rv.columns.slice(0, shown);
      return { rel, rvs: [r.hidden ? { ...rv, hidden: new Set(rv.columns.slice(shown).map((c) => c.id)) } : rv], star, lateral: false };
    }
    case 'UnnestRef': {
      if (item.systemTime) throw sqlError('FOR SYSTEM_TIME AS OF is not allowed with array scans', item.systemTime.loc);
      if (item.sample) checkSample(an, item.sample, { kind: 'array' }, item.loc);
      return unnestLeaf(an, item.exprs, item.alias, item.withOffset, scope, item.loc, item.exprAliases, item.mode);
    }
    case 'SubqueryRef': {
      const out = resolveQuery(an, item.graph ? compileGraphQuery(an, item.graph, item.graph.topLevel === true) : item.query, outer);
      const alias = item.alias ?? '';
      let rel = out.rel;
      if (item.sample) rel = sample(an, rel, item.sample, { kind: 'not a table', what: 'a subquery' }, item.loc);
      if (out.isValueTable) {
        const v = { ...out.rel.columns[0]!, name: alias };
        return { rel, rvs: [{ name: alias, lname: alias.toLowerCase(), columns: [], value: v }], star: [v], lateral: false };
      }
      const rv = rangeOver(alias, out.rel, out.names);
      return { rel, rvs: [rv], star: rv.columns.slice(), lateral: false };
    }
    case 'PivotRef':
    case 'UnpivotRef': {
      const leaf = item.kind === 'PivotRef' ? resolvePivot(an, item, outer) : resolveUnpivot(an, item, outer);
      // `FROM t PIVOT(...) TABLESAMPLE ...` would sample the operator's output, a computed table.
      const what = item.kind === 'PivotRef' ? 'a PIVOT result' : 'an UNPIVOT result';
      return item.sample ? { ...leaf, rel: sample(an, leaf.rel, item.sample, { kind: 'not a table', what }, item.loc) } : leaf;
    }
    case 'TvfRef':
      if (item.sample) checkSample(an, item.sample, { kind: 'tvf' }, item.loc);
      return resolveTvf(an, item, scope);
    default:
      throw sqlError(`Unsupported FROM item ${item.kind}`, item.loc);
  }
}


function unnestLeaf(
  an: Analyzer,
  exprs: readonly A.Expr[],
  alias0: string | undefined,
  withOffset: { alias?: string } | undefined,
  scope: Scope,
  loc: A.Loc,
  exprAliases?: readonly (string | undefined)[],
  modeExpr?: A.Expr,
  fieldPath = false,
): Leaf {
  // Several arrays give several columns, each named by its own alias: the UNNEST as a whole takes none.
  if (alias0 && exprs.length > 1) throw sqlError('Table alias in UNNEST in FROM clause is not allowed when UNNEST contains multiple arguments', loc);
  const alias = alias0 ?? (exprs.length === 1 ? exprAliases?.[0] : undefined);
  if (alias && withOffset?.alias && alias.toLowerCase() === withOffset.alias.toLowerCase()) throw sqlError(`Duplicate alias ${withOffset.alias} found`, loc);
  const corr = new Correlation();
  const lat = new Scope(scope, corr);
  const arrays = exprs.map((e) => {
    // An UNNEST argument may be an array path through arrays (implicitly flattened); a FROM field path may not:
    // query-syntax.md, field_path: it must end in an array field and can't contain arrays before its end.
    const x = resolveExpr(an, e, { scope: lat, clause: 'UNNEST', flatten: !fieldPath });
    if (x.type.kind !== 'ARRAY') {
      if (fieldPath) throw sqlError(`Values referenced in FROM clause must be arrays. ${(e as A.PathExpr).parts.join('.')} has type ${typeToSql(x.type)}`, e.loc);
      if (originOf(x) === Origin.Null) return literal(arrayOf(T.INT64), null);
      throw sqlError(`Values referenced in UNNEST must be arrays. UNNEST contains expression of type ${typeToSql(x.type)}`, e.loc);
    }
    return x;
  });
  const elements = arrays.map((a, i) => an.newColumn(i === 0 ? (alias ?? '') : '', (a.type as { element: SqlType }).element));
  const off = withOffset ? an.newColumn(withOffset.alias ?? 'offset', T.INT64) : undefined;
  let mode: UnnestRel['mode'];
  if (modeExpr) {
    const m = resolveExpr(an, modeExpr, { scope: lat, clause: 'UNNEST' });
    const v = m.kind === 'literal' ? m.value : constantValue(m);
    if (v === null) throw sqlError('UNNEST does not allow NULL mode argument', modeExpr.loc);
    const u = typeof v === 'string' ? v.toUpperCase() : '';
    if (u !== 'PAD' && u !== 'TRUNCATE' && u !== 'STRICT') throw sqlError(`Invalid UNNEST mode: ${String(v)}`, modeExpr.loc);
    mode = u;
  }
  const rel: UnnestRel = { kind: 'unnest', arrays, elements, ...(off ? { offset: off } : {}), ...(mode && mode !== 'PAD' ? { mode } : {}), columns: off ? [...elements, off] : elements };
  const rvs: RangeVar[] = [];
  const star: ResolvedColumn[] = [];
  if (arrays.length === 1) {
    const a = alias ?? '';
    rvs.push({ name: a, lname: a.toLowerCase(), columns: [], value: elements[0]! });
    star.push(elements[0]!);
  } else {
    // Multi-array UNNEST: each element is a plain column named by its alias (or the path's last name).
    const cols = elements.map((c, i) => ({ ...c, name: exprAliases?.[i] ?? implicitAlias(exprs[i]!) }));
    rvs.push({ name: '', lname: '', columns: cols });
    star.push(...cols);
  }
  if (off) {
    const orv: RangeVar = { name: '', lname: '', columns: [off] };
    // Only an explicit alias is a name of the FROM clause: two unaliased WITH OFFSET may be joined USING (offset).
    if (withOffset?.alias) offsetVars.add(orv);
    rvs.push(orv);
    star.push(off);
  }
  // A volatile array (UNNEST([RAND()])) is evaluated once per row of the FROM items before it,
  // as a correlated one is: joined laterally even without a reference to them.
  return { rel, rvs, star, lateral: corr.ids.size > 0 || arrays.some(isVolatileExpr), correlatedIds: corr.ids, arrayScan: true };
}

/** The lower-case names a FROM item's columns (value-table fields included) and merged keys answer to unqualified. */
export function unqualifiedNames(rvs: readonly RangeVar[], extra: ReadonlyMap<string, ResolvedColumn>): Set<string> {
  const out = new Set(extra.keys());
  for (const rv of rvs) {
    if (rv.qualifiedOnly) continue;
    for (const c of rv.columns) out.add(c.name.toLowerCase());
    if (rv.value?.type.kind === 'STRUCT') for (const f of rv.value.type.fields) out.add(f.name.toLowerCase());
  }
  return out;
}

export function isLateralCandidate(item: A.FromItem): boolean {
  return item.kind === 'UnnestRef' || (item.kind === 'TableRef' && !item.path[0]!.includes('.')) || item.kind === 'TvfRef';
}
